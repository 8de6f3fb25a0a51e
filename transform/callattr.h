/* transform/callattr.h — reading a call's normalised attributes in passes.
 *
 * After resolve (and in calls built by ops/op_call.h) every schema field is
 * present, so a lookup fails only for a field the operator does not have or
 * a value of another kind (None for an optional array): then the given
 * default is returned / false.
 *
 *     int64_t axis = cattr_int(call, "axis", 1);
 *     int64_t pads[8]; int n = cattr_ints(call, "padding", pads, 8);   // -1: absent/None
 */
#ifndef RELAYC_TRANSFORM_CALLATTR_H
#define RELAYC_TRANSFORM_CALLATTR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ast.h"

int64_t cattr_int(const Expr *call, const char *key, int64_t dflt);
double cattr_double(const Expr *call, const char *key, double dflt);
bool cattr_bool(const Expr *call, const char *key, bool dflt);
/* The string value (e.g. a layout), or dflt. */
const char *cattr_str(const Expr *call, const char *key, const char *dflt);
/* An integer array (a single integer counts as a one-element array) into
 * out[0..cap); returns its length, or -1 when absent, None or not integers
 * (a length above cap is returned but only cap elements are written). */
int cattr_ints(const Expr *call, const char *key, int64_t *out, int cap);
/* Canonical text of the attribute's value into buf ("None" when absent). */
const char *cattr_text(const Expr *call, const char *key, char *buf, size_t cap);
/* "[a, b, c]" for n integers into buf. */
const char *cattr_format_ints(const int64_t *v, int n, char *buf, size_t cap);

#endif
