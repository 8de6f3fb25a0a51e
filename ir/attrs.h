/* ir/attrs.h — attribute values: canonical text, parsing defaults, equality,
 * typed reads (attr_as_*).
 *
 * The canonical text of a value is exactly what the printer writes after
 * `key=` (spec/text-format.md §7.8): integers plain (`16`, `16i64` for an
 * int64 immediate), doubles as the shortest %g form that reads back to the
 * same double followed by `f` (`1e-05f`, `0.5f`), `True`/`False`, strings
 * quoted with escapes, arrays `[1, 1]`, `None`, `?`, `meta[K][i]`.
 * Operator schemas (ops/registry.h) give defaults in this same text, so a
 * value is "the default" when it is equal (attr_value_equal) to the parsed default.
 */
#ifndef RELAYC_IR_ATTRS_H
#define RELAYC_IR_ATTRS_H

#include <stdio.h>

#include "ir/ast.h"

/* Writes the canonical text of `v` to `out`. */
void attr_value_print(FILE *out, const AttrValue *v);
/* Parses canonical attribute text (as in schema defaults). NULL if malformed. */
AttrValue *attr_value_parse(Module *m, const char *text);
/* Structural equality (ints compare by value, floats by value, arrays elementwise). */
bool attr_value_equal(const AttrValue *a, const AttrValue *b);
/* Call attributes equal exactly, key by key (default flags, floats bit for bit,
 * literal dtypes): the key of memos of call types (sema/typeof.c, ToMixedPrecision). */
bool attrs_equal_exact(const Attrs *a, const Attrs *b);

/* %g-style text for a double that reads back as the same double (as float
 * when `as_float` is true): TVM's 6 significant digits when they suffice
 * (`1000`, `1e-05`, `0.5`), else the fewest more that round-trip
 * (`3.1415927`). buf must hold 32 bytes. */
char *format_shortest_double(double v, bool as_float, char *buf);

/* Parses `key=value, key=value, ...` (values in canonical attribute text; a
 * bare identifier value is taken as a string when `bare_strings`) into a new
 * Attrs in written order. Empty text gives an empty list. On malformed text
 * returns NULL and, when `err` is non-NULL, points *err at a static message. */
Attrs *attrs_parse_list(Module *m, const char *text, bool bare_strings, const char **err);
/* Value builders (module arena). */
AttrValue *attr_int(Module *m, int64_t v);
AttrValue *attr_float(Module *m, double v);
AttrValue *attr_bool(Module *m, bool v);
AttrValue *attr_string(Module *m, const char *s);
AttrValue *attr_int_array(Module *m, const int64_t *v, uint32_t n);
/* A copy of `a` (may be NULL) with `key` set to `v` (replacing the old value
 * and clearing its is_default mark, or appended). `a` is not modified. */
Attrs *attrs_with(Module *m, const Attrs *a, const char *key, AttrValue *v);

/* Lookup helpers for relations and kernels: the attribute named `key`, or NULL. */
const AttrValue *attrs_get(const Attrs *a, const char *key);

/* A value read as a C type, the one rule of the attribute readers of
 * relations, kernels, gradient rules and passes (rel_attr_*, kernel_attr_*,
 * gr_attr_*, cattr_*): v (NULL when absent) as a double (a float, or an int
 * converted), a flag (a bool, or an int != 0), an integer (an int, or a bool
 * as 0/1) or a string's characters; dflt when absent or of another kind. */
static inline double attr_as_double(const AttrValue *v, double dflt) {
  if (v && v->kind == AV_FLOAT) return v->f.value;
  if (v && v->kind == AV_INT) return (double)v->i.value;
  return dflt;
}
static inline bool attr_as_bool(const AttrValue *v, bool dflt) {
  if (v && v->kind == AV_BOOL) return v->b;
  if (v && v->kind == AV_INT) return v->i.value != 0;
  return dflt;
}
static inline int64_t attr_as_int(const AttrValue *v, int64_t dflt) {
  if (v && v->kind == AV_INT) return v->i.value;
  if (v && v->kind == AV_BOOL) return v->b;
  return dflt;
}
static inline const char *attr_as_str(const AttrValue *v, const char *dflt) {
  return v && v->kind == AV_STRING ? v->s.chars : dflt;
}

#endif
