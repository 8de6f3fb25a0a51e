/* ops/relations/rel_util.h — small helpers shared by the relation files (ops/relations/rel_*.c).
 *
 * Dim arithmetic that propagates unknown (`?`/symbolic) extents as `?`, axis
 * normalisation, and layout-letter lookup. All static inline: each relation
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

static inline Dim dim_mul(Dim a, Dim b) {
  if (dim_known(a) && dim_known(b)) return dim_int(a.value * b.value);
  if ((dim_known(a) && a.value == 0) || (dim_known(b) && b.value == 0)) return dim_int(0);
  return dim_any();
}

static inline Dim dim_add(Dim a, int64_t k) { return dim_known(a) ? dim_int(a.value + k) : dim_any(); }

static inline Dim dim_sum(Dim a, Dim b) {
  return dim_known(a) && dim_known(b) ? dim_int(a.value + b.value) : dim_any();
}

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

#endif
