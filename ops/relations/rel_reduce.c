/* ops/relations/rel_reduce.c — the Reduce relation (spec/ops.md §5) and its variants.
 *
 * Reduced axes R: `axis` None or [] → all axes; otherwise the listed axes
 * (normalised, each in [-ndim, ndim), no duplicates), complemented when
 * `exclude`. Output: the input shape without the axes in R, or with 1 there
 * when `keepdims`. A rank-0 input is returned unchanged (argmax/argmin reject it).
 * argmax/argmin results take the dtype of the input's first dimension, as in
 * TVM's ArgReduce relation: int32 for ordinary shapes, int64 for `1i64` dims.
 *
 * collapse_sum_like / collapse_sum_to (spec/gradient.md 5.1-5.2) reduce
 * `data` to a target type: the output is the target (collapse_sum_like: the
 * second input's type, dtype included; collapse_sum_to: the `shape`
 * attribute with data's dtype) and Broadcast(data, target) must give data
 * back, i.e. the target aligns with data from the right, each extent equal
 * or 1, and its rank is not larger.
 */
#include "ops/relations/rel_util.h"

/* Fills red[0..ndim) with the reduced-axis flags; REL_DONE or REL_FAIL. */
static int reduced_axes(TypeRelCtx *c, const Type *a, bool *red) {
  uint32_t nd = a->tensor.ndim;
  int64_t axes[64];
  int32_t n = rel_attr_ints(c, "axis", axes, 64);
  bool exclude = rel_attr_bool(c, "exclude", false);
  for (uint32_t i = 0; i < nd; i++) red[i] = n <= 0;
  if (n <= 0) return REL_DONE;
  for (uint32_t i = 0; i < nd; i++) red[i] = false;
  for (int32_t i = 0; i < n; i++) {
    int64_t ax = axes[i];
    if (ax == REL_INT_NONE || ax == REL_INT_ANY || !rel_norm_axis(&ax, nd))
      return rel_fail(c, "axis %lld is out of range for a tensor of rank %u", (long long)axes[i], nd);
    if (red[ax]) return rel_fail(c, "axis %lld is listed twice", (long long)axes[i]);
    red[ax] = true;
  }
  if (exclude)
    for (uint32_t i = 0; i < nd; i++) red[i] = !red[i];
  return REL_DONE;
}

static Type *reduced_type(TypeRelCtx *c, const Type *a, const bool *red, DType dt) {
  bool keep = rel_attr_bool(c, "keepdims", false);
  uint32_t nd = a->tensor.ndim, n = 0;
  for (uint32_t i = 0; i < nd; i++) n += keep || !red[i];
  Type *o = rel_new_tensor(c, dt, n);
  n = 0;
  for (uint32_t i = 0; i < nd; i++) {
    if (!red[i]) o->tensor.dims[n++] = a->tensor.dims[i];
    else if (keep) o->tensor.dims[n++] = dim_int(1);
  }
  return o;
}

static int reduce(TypeRelCtx *c, bool arg) {
  const Type *a = rel_tensor(c, 0);
  if (!a) return rel_pending(c);
  uint32_t nd = a->tensor.ndim;
  if (nd == 0) {
    if (arg) return rel_fail(c, "cannot reduce a rank-0 tensor");
    return rel_assign(c, rel_ninputs(c), (Type *)a) ? REL_DONE : REL_FAIL;
  }
  if (nd > 64) return rel_fail(c, "rank %u is too large", nd);
  bool red[64];
  if (reduced_axes(c, a, red)) return REL_FAIL;
  DType idx = a->tensor.dims[0].kind == DIM_INT ? a->tensor.dims[0].dtype : DT_I32;
  Type *o = reduced_type(c, a, red, arg ? idx : a->tensor.dtype);
  return rel_assign(c, rel_ninputs(c), o) ? REL_DONE : REL_FAIL;
}

int rel_reduce(TypeRelCtx *c) { return reduce(c, false); }
int rel_arg_reduce(TypeRelCtx *c) { return reduce(c, true); }

int rel_variance(TypeRelCtx *c) {
  const Type *a, *m;
  if (!rel_tensors(c, 2, &a, &m)) return rel_pending(c);
  if (m->tensor.ndim != a->tensor.ndim && m->tensor.ndim != 0)
    return rel_fail(c, "mean has rank %u but data has rank %u (compute mean with keepdims=True)",
                    m->tensor.ndim, a->tensor.ndim);
  if (!dtype_eq(a->tensor.dtype, m->tensor.dtype))
    return rel_fail(c, "data is %s but mean is %s", rel_type_str(c, a), rel_type_str(c, m));
  uint32_t nd = a->tensor.ndim;
  /* out = sum((data - mean)^2): the mean broadcasts to the data (Gradient's
   * data - mean was ill-typed where the kernel only failed at run time) */
  for (uint32_t i = 0; i < m->tensor.ndim; i++) {
    Dim md = m->tensor.dims[i], ad = a->tensor.dims[i];
    if (!(dim_known(md) && md.value == 1) && !dim_compat(md, ad))
      return rel_fail(c, "mean %s does not broadcast to data %s (axis %u)", rel_type_str(c, m), rel_type_str(c, a), i);
  }
  if (nd == 0) return rel_assign(c, 2, (Type *)a) ? REL_DONE : REL_FAIL;
  if (nd > 64) return rel_fail(c, "rank %u is too large", nd);
  bool red[64];
  if (reduced_axes(c, a, red)) return REL_FAIL;
  return rel_assign(c, 2, reduced_type(c, a, red, a->tensor.dtype)) ? REL_DONE : REL_FAIL;
}

/* ------------------------------------------------------------ collapse_sum */

/* Error unless `to` broadcasts to `data` (Broadcast(data, to) == data). */
static int collapse_check(TypeRelCtx *c, const Type *data, const Type *to) {
  uint32_t nd = data->tensor.ndim, nt = to->tensor.ndim;
  if (nt > nd)
    return rel_fail(c, "cannot collapse %s to %s: the target has a higher rank", rel_type_str(c, data),
                    rel_type_str(c, to));
  for (uint32_t i = 1; i <= nt; i++) {
    Dim t = to->tensor.dims[nt - i], d = data->tensor.dims[nd - i];
    if ((dim_known(t) && t.value == 1) || dim_compat(t, d)) continue;
    return rel_fail(c, "cannot collapse %s to %s: extent %lld does not broadcast to %lld", rel_type_str(c, data),
                    rel_type_str(c, to), (long long)t.value, (long long)d.value);
  }
  return REL_DONE;
}

int rel_collapse_sum_like(TypeRelCtx *c) {
  const Type *a, *like;
  if (!rel_tensors(c, 2, &a, &like)) return rel_pending(c);
  if (!dtype_eq(a->tensor.dtype, like->tensor.dtype))
    return rel_fail(c, "data is %s but collapse_type is %s (the dtypes must agree)", rel_type_str(c, a),
                    rel_type_str(c, like));
  if (collapse_check(c, a, like)) return REL_FAIL;
  return rel_assign(c, 2, (Type *)like) ? REL_DONE : REL_FAIL;
}

int rel_collapse_sum_to(TypeRelCtx *c) {
  const Type *a, *s;
  if (!rel_tensors(c, 2, &a, &s)) return rel_pending(c);
  char b[32];
  if ((s->tensor.dtype.code != DT_INT && s->tensor.dtype.code != DT_UINT) || s->tensor.dtype.bits == 1)
    return rel_fail(c, "the shape input must be an integer tensor, found %s", dtype_name(s->tensor.dtype, b));
  if (s->tensor.ndim != 1 || !dim_known(s->tensor.dims[0]))
    return rel_fail(c, "the shape input must be a rank-1 tensor of static extent, found %s", rel_type_str(c, s));
  Type *o = rel_attr_shape(c, "shape", a->tensor.dtype);
  if (!o) return REL_FAIL;
  if (o->tensor.ndim != (uint32_t)s->tensor.dims[0].value)
    return rel_fail(c, "the shape attribute has %u entries but the shape input has %lld", o->tensor.ndim,
                    (long long)s->tensor.dims[0].value);
  if (collapse_check(c, a, o)) return REL_FAIL;
  return rel_assign(c, 2, o) ? REL_DONE : REL_FAIL;
}
