/* ops/kernels/k_qnn.c — kernels of the QNN operators relayc has:
 * qnn.dequantize, out = (x - zero_point) * scale, computed as TVM's topi does
 * (the difference in int32, converted to float32, times the float32 scale;
 * then rounded to out_dtype). scale and zero_point are scalars or vectors
 * along `axis` (a vector of one element applies to every channel). */
#include "ops/kernels/k_util.h"
#include "ops/kernels/kernel.h"

int kernel_QNN_DEQUANTIZE(KernelCtx *c);
int kernel_QNN_DEQUANTIZE(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *scale = c->inputs[1], *zp = c->inputs[2];
  DType out;
  if (!kernel_attr_dtype(c, "out_dtype", &out)) out = DTYPE(DT_FLOAT, 32);
  int64_t axis = kernel_attr_int(c, "axis", -1);
  if (axis < 0) axis += x->ndim;
  int64_t extent = x->ndim && axis >= 0 && axis < x->ndim ? x->shape[axis] : 1, inner = 1;
  for (int32_t d = (int32_t)axis + 1; d < x->ndim; d++) inner *= x->shape[d];
  if ((scale->numel != 1 && scale->numel != extent) || (zp->numel != 1 && zp->numel != extent))
    return kernel_fail(c, "qnn.dequantize: the scale and zero point must have 1 or %lld elements", (long long)extent);
  Tensor *o = kernel_output(c, out, x->ndim, x->shape);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(out);
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t ch = extent > 1 ? (i / inner) % extent : 0;
    int32_t z = (int32_t)ku_index(zp, zp->numel == 1 ? 0 : ch);
    float s = (float)tensor_get_f64(scale, scale->numel == 1 ? 0 : ch);
    int32_t q = (int32_t)((int64_t)ku_index(x, i) - z);
    tensor_store_f64(out, (char *)o->data + (size_t)i * es, (double)((float)q * s));
  }
  return KERNEL_OK;
}
