/* ops/macs/mac_rules.c — one MAC rule per operator that multiplies and adds.
 *
 * TVM's rules (src/relay/analysis/mac_count.cc), restated:
 *   conv2d, conv2d_transpose: elements of the output × kernel extent
 *     (kernel_size) × input channels / groups, where the input channel count
 *     is the data's C axis times its split `c` sub-axis (NCHW16c);
 *   dense: batch × in features × units;
 *   batch_matmul: batch × M × K × N.
 * relayc applies the same formulas more generally, on purpose:
 *   - the kernel extent comes from the weight's spatial axes (by kernel_layout)
 *     when kernel_size is not written (TVM requires it);
 *   - conv1d, conv3d, conv1d_transpose and conv3d_transpose use the conv2d
 *     rule; matmul the dense rule (TVM counts 0 for them);
 *   - dense/matmul: output elements × K, so N-D data counts every row;
 *   - batch_matmul: output elements × K, K read from x according to
 *     transpose_a. For the usual transpose_b=True this is TVM's count; TVM
 *     reads N as y's axis 1, which for transpose_b=False is K (a TVM slip
 *     that relayc does not copy).
 */
#include "ops/layout.h"
#include "ops/macs/mac.h"

/* Shared by every convolution: out elements × spatial kernel × Cin / groups. */
static int64_t conv_macs(const MacCtx *c, const char *data_layout, const char *kernel_layout) {
  if (c->nin < 2) return MAC_UNKNOWN;
  int64_t d[TENSOR_MAX_NDIM], w[TENSOR_MAX_NDIM], ks[8];
  int32_t nd = mac_shape(c->in[0], d, TENSOR_MAX_NDIM), nw = mac_shape(c->in[1], w, TENSOR_MAX_NDIM);
  char dbuf[64], kbuf[64];
  Layout dl, kl;
  if (nd < 0 || !layout_parse(mac_attr_str(c, "data_layout", data_layout, dbuf, sizeof dbuf), &dl) ||
      dl.n != nd)
    return MAC_UNKNOWN;
  int32_t ci = layout_find(&dl, 'C'), cs = layout_find(&dl, 'c');
  if (ci < 0) return MAC_UNKNOWN;
  int64_t cin = mac_mul(d[ci], cs >= 0 ? d[cs] : 1);
  int64_t groups = mac_attr_int(c, "groups", 1);
  if (groups < 1 || cin < 0 || cin % groups) return MAC_UNKNOWN;
  int64_t kernel = 1;
  int32_t nk = mac_attr_ints(c, "kernel_size", ks, 8);
  if (nk > 0) {
    for (int32_t i = 0; i < nk; i++) kernel = mac_mul(kernel, ks[i]);
  } else {
    if (nw < 0 || !layout_parse(mac_attr_str(c, "kernel_layout", kernel_layout, kbuf, sizeof kbuf), &kl) ||
        kl.n != nw)
      return MAC_UNKNOWN;
    for (int32_t i = 0; i < nw; i++)
      if (kl.ax[i] >= 'A' && kl.ax[i] <= 'Z' && kl.ax[i] != 'O' && kl.ax[i] != 'I') kernel = mac_mul(kernel, w[i]);
  }
  return mac_mul(mac_mul(mac_elements(c->out), kernel), cin / groups);
}

int64_t macs_NN_CONV1D(const MacCtx *c) { return conv_macs(c, "NCW", "OIW"); }
int64_t macs_NN_CONV2D(const MacCtx *c) { return conv_macs(c, "NCHW", "OIHW"); }
int64_t macs_NN_CONV3D(const MacCtx *c) { return conv_macs(c, "NCDHW", "OIDHW"); }
int64_t macs_NN_CONV2D_TRANSPOSE(const MacCtx *c) { return conv_macs(c, "NCHW", "IOHW"); }
int64_t macs_NN_CONV1D_TRANSPOSE(const MacCtx *c) { return conv_macs(c, "NCW", "IOW"); }
int64_t macs_NN_CONV3D_TRANSPOSE(const MacCtx *c) { return conv_macs(c, "NCDHW", "IODHW"); }

/* Output elements × the contracted extent K of the first input. */
static int64_t contract_macs(const MacCtx *c, bool k_second_last) {
  int64_t x[TENSOR_MAX_NDIM];
  int32_t nx = mac_shape(c->nin ? c->in[0] : NULL, x, TENSOR_MAX_NDIM);
  if (nx < 1 || (k_second_last && nx < 2)) return MAC_UNKNOWN;
  return mac_mul(mac_elements(c->out), x[k_second_last ? nx - 2 : nx - 1]);
}

int64_t macs_NN_DENSE(const MacCtx *c) { return contract_macs(c, false); }
int64_t macs_NN_MATMUL(const MacCtx *c) { return contract_macs(c, mac_attr_bool(c, "transpose_a", false)); }
int64_t macs_NN_BATCH_MATMUL(const MacCtx *c) { return contract_macs(c, mac_attr_bool(c, "transpose_a", false)); }
