/* ops/kernels/k_batchnorm.c — nn.batch_norm (inference): a 3-tuple (normalised, mean, var).
 *
 * .0 = x · s[c] + t[c] along `axis` with s = gamma / sqrt(var + eps) (1 /
 * sqrt(var + eps) when scale=False) and t = beta − mean · s (−mean · s when
 * center=False): the form TVM's simplifier produces, equal to spec/ops.md
 * §10.1's (x − mean) / sqrt(var + eps) · gamma + beta within rounding. The
 * per-channel s, t are computed in double, then applied in the compute type
 * (float32 for float16/float32, double for float64; integer data is computed
 * in double and truncated on store). .1 and .2 are the moving_mean and
 * moving_var inputs themselves (immutable values: sharing is a copy).
 * The data is viewed as [outer][C][inner]; tasks are ranges of (outer, c)
 * rows; a dying float32 input is normalised in place. The attribute
 * operator relayc.batch_norm_relu (made by transform/conv_epilogue.c for
 * relu(batch_norm(...).0)) applies a ReLU to .0 in the same pass.
 */
#include <math.h>
#include <string.h>

#include "ir/mem.h"
#include "ops/kernels/k_cvt.h"
#include "ops/kernels/k_simd.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "runtime/threadpool.h"


typedef struct BnJob {
  int64_t C, inner;
  const double *s, *t;
  const void *x;
  void *y;
  bool f64, relu;
} BnJob;

static KHOT void bn_row_f32(float *restrict y, const float *restrict x, float s, float t, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] * s + t;
}

static KHOT void bn_row_f32_relu(float *restrict y, const float *restrict x, float s, float t,
                                int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i] * s + t;
    y[i] = v > 0 ? v : 0;
  }
}

static void bn_task(void *raw, int64_t lo, int64_t hi) {
  const BnJob *j = raw;
  for (int64_t r = lo; r < hi; r++) {
    int64_t c = r % j->C, off = r * j->inner;
    if (j->f64) {
      const double *x = (const double *)j->x + off;
      double *y = (double *)j->y + off;
      for (int64_t i = 0; i < j->inner; i++) {
        double v = x[i] * j->s[c] + j->t[c];
        y[i] = j->relu && !(v > 0) ? 0 : v;
      }
    } else {
      (j->relu ? bn_row_f32_relu : bn_row_f32)((float *)j->y + off, (const float *)j->x + off,
                                               (float)j->s[c], (float)j->t[c], j->inner);
    }
  }
}

int kernel_NN_BATCH_NORM(KernelCtx *c);
int kernel_RELAYC_BATCH_NORM_RELU(KernelCtx *c);

int kernel_RELAYC_BATCH_NORM_RELU(KernelCtx *c) { return kernel_NN_BATCH_NORM(c); }

int kernel_NN_BATCH_NORM(KernelCtx *c) {
  if (kernel_ninputs(c) != 5) return kernel_fail(c, "nn.batch_norm: expected 5 inputs");
  const Tensor *x = kernel_input(c, 0);
  int64_t axis = kernel_attr_int(c, "axis", 1);
  if (axis < 0) axis += x->ndim;
  if (axis < 0 || axis >= x->ndim)
    return kernel_fail(c, "nn.batch_norm: axis %lld is out of range for rank %d",
                       (long long)kernel_attr_int(c, "axis", 1), x->ndim);
  int64_t C = x->shape[axis];
  for (uint32_t i = 1; i < 5; i++)
    if (kernel_input(c, i)->numel != C)
      return kernel_fail(c, "nn.batch_norm: input %u must have %lld elements", i, (long long)C);
  double eps = kernel_attr_double(c, "epsilon", 1e-5);
  bool center = kernel_attr_bool(c, "center", true), scale = kernel_attr_bool(c, "scale", true);
  double *st = mem_malloc((size_t)(2 * C + 1) * sizeof *st);
  double *s = st, *t = st + C;
  const Tensor *gamma = kernel_input(c, 1), *beta = kernel_input(c, 2);
  const Tensor *mean = kernel_input(c, 3), *var = kernel_input(c, 4);
  for (int64_t i = 0; i < C; i++) {
    double v = tensor_get_f64(var, i), sc = 1.0 / sqrt(v + eps);
    if (scale) sc *= tensor_get_f64(gamma, i);
    s[i] = sc;
    t[i] = (center ? tensor_get_f64(beta, i) : 0.0) - tensor_get_f64(mean, i) * sc;
  }
  int64_t inner = 1, outer = 1;
  for (int32_t i = 0; i < axis; i++) outer *= x->shape[i];
  for (int32_t i = (int32_t)axis + 1; i < x->ndim; i++) inner *= x->shape[i];

  KCompute k = kcvt_kind(x->dtype);
  if (k == KC_I64) k = KC_F64; /* integer data: compute in double, truncate on store */
  bool native = kcvt_is_native(x->dtype, k);
  Tensor *y = native ? kernel_take_input(c, 0) : NULL; /* in place when dying */
  if (!y) y = tensor_new_like(x);
  bool xo = false;
  void *xb = y ? kcvt_load(x, x->dtype, k, &xo) : NULL;
  void *yb = !y ? NULL : native ? y->data : kcvt_alloc(k, y->numel);
  int rc = KERNEL_OK;
  if (!y || !xb || !yb) {
    rc = kernel_fail(c, "nn.batch_norm: out of memory");
  } else {
    BnJob j = {.C = C, .inner = inner, .s = s, .t = t, .x = xb, .y = yb, .f64 = k == KC_F64,
               .relu = c->op_id == OP_RELAYC_BATCH_NORM_RELU};
    int64_t grain = inner >= 4096 ? 1 : 4096 / (inner + 1) + 1;
    threadpool_for(outer * C, grain, bn_task, &j);
    if (!native) kcvt_store(y, yb, k);
  }
  if (xo) mem_free(xb);
  if (y && !native) mem_free(yb);
  mem_free(st);
  if (rc != KERNEL_OK) {
    tensor_release(y);
    return rc;
  }
  Tensor *outs[3] = {y, tensor_retain((Tensor *)mean), tensor_retain((Tensor *)var)};
  kernel_set_tuple(c, outs, 3);
  return KERNEL_OK;
}
