/* ops/kernels/k_math.c — the conversion and identity-like kernels not covered by
 * ops/kernels/k_elemwise.c: cast_like, reinterpret, full_like and the quantisation
 * helper fixed_point_multiply (spec/ops.md §4.2, §4.3, §6.6).
 *
 * cast_like uses the cast rules of §2 (ku_cast_n); reinterpret copies the
 * bytes unchanged (the widths must agree); full_like fills the data's type
 * with the scalar cast to it. fixed_point_multiply is TVM's
 * q_multiply_shift with q = 31: x · multiplier · 2^shift / 2^31 rounded half
 * up, computed in 128-bit so no intermediate overflows, then wrapped to the
 * data dtype.
 */
#include "ops/kernels/k_util.h"
#include "ops/op_ids.h"

int kernel_CAST_LIKE(KernelCtx *c);
int kernel_CAST_LIKE(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  DType to = c->inputs[1]->dtype;
  if (ku_type(to) == KU_OTHER || ku_type(x->dtype) == KU_OTHER) return kernel_fail(c, "cast_like: unsupported dtype");
  if (dtype_eq(to, x->dtype) && tensor_is_unique(x)) {
    kernel_set_output(c, kernel_take_input(c, 0));
    return KERNEL_OK;
  }
  Tensor *o = kernel_output(c, to, x->ndim, x->shape);
  if (!o) return KERNEL_ERROR;
  ku_cast_n(x->dtype, x->data, to, o->data, x->numel);
  return KERNEL_OK;
}

int kernel_REINTERPRET(KernelCtx *c);
int kernel_REINTERPRET(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  DType to;
  if (!kernel_attr_dtype(c, "dtype", &to)) return kernel_fail(c, "reinterpret: needs a dtype attribute");
  if (dtype_size(to) != dtype_size(x->dtype) || to.bits != x->dtype.bits)
    return kernel_fail(c, "reinterpret: the dtypes must have the same bit width");
  Tensor *o = kernel_output(c, to, x->ndim, x->shape);
  if (!o) return KERNEL_ERROR;
  memcpy(o->data, x->data, (size_t)x->nbytes);
  if (dtype_is_bool(to)) { /* bool storage is 0/1 */
    uint8_t *p = o->data;
    for (int64_t i = 0; i < o->numel; i++) p[i] = p[i] != 0;
  }
  return KERNEL_OK;
}

int kernel_FULL_LIKE(KernelCtx *c);
int kernel_FULL_LIKE(KernelCtx *c) {
  const Tensor *x = c->inputs[0], *v = c->inputs[1];
  if (v->numel != 1) return kernel_fail(c, "full_like: fill_value must be a scalar");
  size_t es = dtype_size(x->dtype);
  char fill[16];
  if (es > sizeof fill || ku_type(x->dtype) == KU_OTHER) return kernel_fail(c, "full_like: unsupported dtype");
  ku_cast(v->dtype, v->data, x->dtype, fill);
  Tensor *o = kernel_take_input(c, 0);
  if (o) kernel_set_output(c, o);
  else o = kernel_output_like(c, x);
  if (!o) return KERNEL_ERROR;
  for (int64_t i = 0; i < o->numel; i++) ku_copy1((char *)o->data + (size_t)i * es, fill, es);
  return KERNEL_OK;
}

/* round(x · m · 2^shift / 2^31), ties toward +inf (TVM's q_multiply_shift). */
static int64_t q_mul_shift(int64_t x, int64_t m, int64_t shift) {
  int64_t ls = shift > 0 ? shift : 0, rs = shift > 0 ? 0 : -shift;
  if (ls > 62) ls = 62;
  if (rs > 62) rs = 62;
  __int128 v = (__int128)x * ((__int128)1 << ls) * m;
  int64_t total = rs + 31;
  v += (__int128)1 << (total - 1);
  return (int64_t)(v >> total);
}

int kernel_FIXED_POINT_MULTIPLY(KernelCtx *c);
int kernel_FIXED_POINT_MULTIPLY(KernelCtx *c) {
  const Tensor *x = c->inputs[0];
  if (!dtype_is_int(x->dtype)) return kernel_fail(c, "fixed_point_multiply: needs an integer tensor");
  int64_t m = kernel_attr_int(c, "multiplier", 1 << 30), shift = kernel_attr_int(c, "shift", 0);
  Tensor *o = kernel_output_like(c, x);
  if (!o) return KERNEL_ERROR;
  size_t es = dtype_size(x->dtype);
  for (int64_t i = 0; i < x->numel; i++)
    tensor_store_i64(x->dtype, (char *)o->data + (size_t)i * es, q_mul_shift(ku_index(x, i), m, shift));
  return KERNEL_OK;
}
