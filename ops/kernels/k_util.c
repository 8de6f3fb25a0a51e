/* ops/kernels/k_util.c — out-of-line helpers of ops/kernels/k_util.h: float16 widening and
 * narrowing for float kernels, zero-copy reshape outputs, per-element casts
 * and attribute arrays with None entries.
 *
 * Casts follow spec/ops.md §2 exactly (the same rules as the cast kernel of
 * ops/kernels/k_elemwise.c): float→int truncates toward zero and saturates (NaN → 0),
 * anything→bool is `x != 0` (ordered: NaN → False), int→int wraps by the
 * source's signedness, int→float rounds to nearest.
 */
#include "ops/kernels/k_util.h"

#include <math.h>

#include "ir/mem.h"

const Tensor *ku_float_in(const Tensor *x, Tensor **tmp) {
  *tmp = NULL;
  KuType k = ku_type(x->dtype);
  if (k == KU_F32 || k == KU_F64) return x;
  Tensor *w = tensor_new(DT_F32, x->ndim, x->shape);
  if (!w) return NULL;
  float *q = w->data;
  if (k == KU_F16) {
    const uint16_t *p = x->data;
    for (int64_t i = 0; i < x->numel; i++) q[i] = half_to_float(p[i]);
  } else {
    size_t es = dtype_size(x->dtype);
    for (int64_t i = 0; i < x->numel; i++) q[i] = (float)tensor_load_f64(x->dtype, (const char *)x->data + (size_t)i * es);
  }
  *tmp = w;
  return w;
}

int ku_float_out(KernelCtx *c, Tensor *r, DType dt) {
  if (dtype_eq(r->dtype, dt)) {
    kernel_set_output(c, r);
    return KERNEL_OK;
  }
  Tensor *o = kernel_output(c, dt, r->ndim, r->shape);
  if (!o) {
    tensor_release(r);
    return KERNEL_ERROR;
  }
  ku_cast_n(r->dtype, r->data, dt, o->data, r->numel);
  tensor_release(r);
  return KERNEL_OK;
}

int ku_view(KernelCtx *c, uint32_t i, int32_t ndim, const int64_t *shape) {
  Tensor *x = c->inputs[i];
  int64_t n = 0;
  if (!tensor_shape_numel(ndim, shape, &n) || n != x->numel)
    return kernel_fail(c, "%s: cannot view %lld elements as a tensor of %lld", c->op->name, (long long)x->numel,
                       (long long)n);
  c->inputs[i] = NULL; /* the context's reference moves into the view */
  Tensor *v = tensor_reshape(x, ndim, shape);
  if (!v) return kernel_fail(c, "%s: out of memory", c->op->name);
  kernel_set_output(c, v);
  return KERNEL_OK;
}

/* ------------------------------------------------------------ casts */

void ku_cast(DType from, const void *p, DType to, void *q) {
  if (dtype_is_bool(to)) {
    bool b;
    if (dtype_is_float(from)) {
      double v = tensor_load_f64(from, p);
      b = v < 0 || v > 0;
    } else {
      b = tensor_load_i64(from, p) != 0;
    }
    *(uint8_t *)q = b;
  } else if (dtype_is_float(to)) {
    if (dtype_is_float(from)) tensor_store_f64(to, q, tensor_load_f64(from, p));
    else if (from.code == DT_UINT && from.bits == 64) tensor_store_f64(to, q, (double)(uint64_t)tensor_load_i64(from, p));
    else tensor_store_f64(to, q, (double)tensor_load_i64(from, p));
  } else if (dtype_is_float(from)) {
    tensor_store_f64(to, q, tensor_load_f64(from, p)); /* saturates: tensor_f64_to_int */
  } else {
    tensor_store_i64(to, q, tensor_load_i64(from, p));
  }
}

void ku_cast_n(DType from, const void *src, DType to, void *dst, int64_t n) {
  KuType a = ku_type(from), b = ku_type(to);
  if (a == b && a != KU_OTHER) {
    memcpy(dst, src, (size_t)n * dtype_size(from));
  } else if (a == KU_F64 && b == KU_F32) {
    const double *p = src;
    float *q = dst;
    for (int64_t i = 0; i < n; i++) q[i] = (float)p[i];
  } else if (a == KU_F32 && b == KU_F64) {
    const float *p = src;
    double *q = dst;
    for (int64_t i = 0; i < n; i++) q[i] = p[i];
  } else if (a == KU_F32 && b == KU_F16) {
    const float *p = src;
    uint16_t *q = dst;
    for (int64_t i = 0; i < n; i++) q[i] = float_to_half(p[i]);
  } else if (a == KU_F16 && b == KU_F32) {
    const uint16_t *p = src;
    float *q = dst;
    for (int64_t i = 0; i < n; i++) q[i] = half_to_float(p[i]);
  } else {
    size_t ef = dtype_size(from), et = dtype_size(to);
    for (int64_t i = 0; i < n; i++) ku_cast(from, (const char *)src + (size_t)i * ef, to, (char *)dst + (size_t)i * et);
  }
}

/* ------------------------------------------------------------ attributes */

int32_t ku_attr_opt_ints(const KernelCtx *c, const char *name, int64_t *out, bool *none, int32_t cap) {
  const AttrValue *v = kernel_attr(c, name);
  if (!v) return -1;
  if (v->kind == AV_INT) {
    if (cap > 0) {
      out[0] = v->i.value;
      none[0] = false;
    }
    return 1;
  }
  if (v->kind != AV_ARRAY) return -1;
  for (uint32_t i = 0; i < v->arr.n && (int32_t)i < cap; i++) {
    const AttrValue *e = v->arr.items[i];
    none[i] = e->kind != AV_INT && e->kind != AV_BOOL;
    out[i] = e->kind == AV_INT ? e->i.value : e->kind == AV_BOOL ? e->b : 0;
  }
  return (int32_t)v->arr.n;
}

int32_t ku_out_shape(const KernelCtx *c, int64_t *shape, int32_t cap) {
  const Type *t = c->out_type;
  if (!t || t->kind != TYPE_TENSOR || (int32_t)t->tensor.ndim > cap) return -1;
  for (uint32_t i = 0; i < t->tensor.ndim; i++) {
    if (t->tensor.dims[i].kind != DIM_INT) return -1;
    shape[i] = t->tensor.dims[i].value;
  }
  return (int32_t)t->tensor.ndim;
}
