/* ir/attrs.h — attribute values: canonical text, parsing defaults, equality.
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

#endif
