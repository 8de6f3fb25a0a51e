/* ops/relations/rel_util.h — small helpers shared by the relation files (ops/relations/rel_*.c).
 *
 * The leading tensor inputs fetched in one call, dim arithmetic that
 * propagates unknown (`?`/symbolic) extents as `?`, axis normalisation,
 * layout-letter lookup, and the outputs shared by a static relation and its
 * dyn.* twin (topk, one_hot) and the pad_value/pad_mode check of the two
 * pads. All static inline: each relation
 * file includes what it uses and nothing here has state.
 */
#ifndef RELAYC_OPS_REL_UTIL_H
#define RELAYC_OPS_REL_UTIL_H

#include <stdarg.h>
#include <string.h>

#include "ops/relations/type_rel.h"

/* Inputs 0..n-1 as tensors, stored through the n `const Type **` arguments
 * that follow: false at the first one that is unknown or (reported) not a
 * tensor, and the caller returns rel_pending(c) — the same as n rel_tensor
 * calls in a row, each returning on NULL. */
static inline bool rel_tensors(TypeRelCtx *c, uint32_t n, ...) {
  va_list ap;
  va_start(ap, n);
  uint32_t i = 0;
  for (; i < n; i++) {
    const Type **t = va_arg(ap, const Type **);
    if (!(*t = rel_tensor(c, i))) break;
  }
  va_end(ap);
  return i == n;
}

/* axis in [-ndim, ndim) → [0, ndim); false if out of range. */
static inline bool rel_norm_axis(int64_t *axis, int64_t ndim) {
  if (*axis < -ndim || *axis >= ndim) return false;
  if (*axis < 0) *axis += ndim;
  return true;
}

/* Extent arithmetic. An unknown extent makes the result `?` (a known 0 still
 * makes a product 0). A result that does not fit in int64 is reported once as
 * "<op>: extent ... overflows" and gives `?`; the relation then fails when it
 * assigns its output (rel_assign refuses after an error), so callers need no
 * check of their own. Extents come from annotations and attributes and may be
 * anything an int64 holds, negative included: never multiply or add them
 * with plain C arithmetic in a relation. */
static inline Dim rel_dim_overflow(TypeRelCtx *c, const char *what, int64_t a, int64_t b) {
  if (!rel_failed(c)) rel_fail(c, "extent %lld %s %lld overflows", (long long)a, what, (long long)b);
  return dim_any();
}

static inline Dim dim_mul(TypeRelCtx *c, Dim a, Dim b) {
  if ((dim_known(a) && a.value == 0) || (dim_known(b) && b.value == 0)) return dim_int(0);
  if (!dim_known(a) || !dim_known(b)) return dim_any();
  int64_t r;
  if (__builtin_mul_overflow(a.value, b.value, &r)) return rel_dim_overflow(c, "*", a.value, b.value);
  return dim_int(r);
}

static inline Dim dim_add(TypeRelCtx *c, Dim a, int64_t k) {
  int64_t r;
  if (!dim_known(a)) return dim_any();
  if (__builtin_add_overflow(a.value, k, &r)) return rel_dim_overflow(c, "+", a.value, k);
  return dim_int(r);
}

static inline Dim dim_sum(TypeRelCtx *c, Dim a, Dim b) { return dim_known(b) ? dim_add(c, a, b.value) : dim_any(); }

/* Position of `letter` in a layout string, or -1. */
static inline int rel_layout_pos(const char *layout, char letter) {
  const char *p = strchr(layout, letter);
  return p ? (int)(p - layout) : -1;
}

/* A layout made of distinct upper-case letters only (no split sub-axes). */
static inline bool rel_layout_primal(const char *layout) {
  for (const char *p = layout; *p; p++) {
    if (*p < 'A' || *p > 'Z') return false;
    if (strchr(p + 1, *p)) return false;
  }
  return true;
}

static inline const char *rel_dtype_str(DType t, char *buf) { return dtype_name(t, buf); }

/* topk's output (static and dynamic k) given its values type: by ret_type, the values, the
 * indices (the values' shape, dtype attribute, int32 by default) or "both", the pair. */
static inline int rel_topk_output(TypeRelCtx *c, Type *vals) {
  DType it = DTYPE(DT_INT, 32);
  rel_attr_dtype(c, "dtype", &it);
  Type *idx = rel_retype(c, vals, it), *out = vals;
  const char *rt = rel_attr_str(c, "ret_type", "both");
  if (strcmp(rt, "indices") == 0) {
    out = idx;
  } else if (strcmp(rt, "both") == 0) {
    out = rel_new_tuple(c, 2);
    out->tuple.fields[0] = vals;
    out->tuple.fields[1] = idx;
  } else if (strcmp(rt, "values") != 0) {
    return rel_fail(c, "unknown ret_type \"%s\"", rt);
  }
  return rel_assign(c, rel_ninputs(c), out) ? REL_DONE : REL_FAIL;
}

/* one_hot's output (static and dynamic depth) once the inputs are checked:
 * the indices' shape with `depth` inserted at the axis attribute (-1: last),
 * in the dtype attribute (on_value's dtype by default). */
static inline int rel_one_hot_output(TypeRelCtx *c, const Type *ix, const Type *on, Dim depth) {
  int64_t nd = ix->tensor.ndim, axis = rel_attr_int(c, "axis", -1);
  if (axis == -1) axis = nd;
  if (axis < 0 || axis > nd) return rel_fail(c, "axis %lld is out of range", (long long)axis);
  DType dt = on->tensor.dtype;
  rel_attr_dtype(c, "dtype", &dt);
  Type *o = rel_new_tensor(c, dt, (uint32_t)nd + 1);
  uint32_t k = 0;
  for (int64_t i = 0; i <= nd; i++) {
    if (i == axis) o->tensor.dims[k++] = depth;
    if (i < nd) o->tensor.dims[k++] = ix->tensor.dims[i];
  }
  return rel_assign(c, rel_ninputs(c), o) ? REL_DONE : REL_FAIL;
}

/* nn.pad and dyn.nn.pad: pad_value a scalar, pad_mode constant, edge or
 * reflect. REL_DONE, or REL_FAIL after reporting. */
static inline int rel_pad_value_mode(TypeRelCtx *c, const Type *v) {
  if (v->tensor.ndim != 0) return rel_fail(c, "pad_value must be a scalar, found %s", rel_type_str(c, v));
  const char *mode = rel_attr_str(c, "pad_mode", "constant");
  if (strcmp(mode, "constant") && strcmp(mode, "edge") && strcmp(mode, "reflect"))
    return rel_fail(c, "unknown pad_mode \"%s\"", mode);
  return REL_DONE;
}

#endif
