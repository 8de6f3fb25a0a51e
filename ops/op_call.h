/* ops/op_call.h — building operator calls (for passes and gradient rules).
 *
 * An operator call made by a pass must look exactly like one the resolver
 * made from text: callee an EXPR_OP with its registry id, attributes
 * normalised against the operator's schema (every field present, in schema
 * order, defaults marked). These builders guarantee that. Attributes are
 * given as canonical attribute text, which keeps rules readable:
 *
 *     Expr *s = op_call(m, "sum", (Expr *[]){g}, 1, "axis=[1], keepdims=True", sp);
 *     Expr *y = op_call(m, "multiply", (Expr *[]){a, b}, 2, NULL, sp);
 *
 * A malformed attribute text or an unknown operator name is a bug in the
 * caller (not in the user's program): it aborts with a message naming it.
 */
#ifndef RELAYC_OPS_OP_CALL_H
#define RELAYC_OPS_OP_CALL_H

#include "ir/ast.h"

/* The operator `name` as a callee/value. Aborts if it is not registered. */
Expr *op_ref(Module *m, const char *name, Span sp);
/* `name(args..., attrs)` with attributes parsed from `attrs_text` (NULL or "" = defaults). */
Expr *op_call(Module *m, const char *name, Expr **args, uint32_t nargs, const char *attrs_text, Span sp);
/* The same with an Attrs value (e.g. a rewritten copy of another call's
 * attributes, ir/attrs.h attrs_with); it is normalised against the schema. */
Expr *op_call_attrs(Module *m, const char *name, Expr **args, uint32_t nargs, const Attrs *attrs, Span sp);
/* Registry id of a call's callee when it is an operator, else -1. */
int32_t op_call_id(const Expr *e);
/* true when `e` is a call of the operator `name`. */
bool op_call_is(const Expr *e, const char *name);

#endif
