/* ops/relations/rel_util.h — small helpers shared by the relation files (ops/relations/rel_*.c).
 *
 * Dim arithmetic that propagates unknown (`?`/symbolic) extents as `?`, axis
 * normalisation, layout-letter lookup, and the output of the two topk relations. All static inline: each relation
 * file includes what it uses and nothing here has state.
 */
#ifndef RELAYC_OPS_REL_UTIL_H
#define RELAYC_OPS_REL_UTIL_H

#include <string.h>

#include "ops/relations/type_rel.h"

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

#endif
