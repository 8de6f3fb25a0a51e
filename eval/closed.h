/* eval/closed.h — evaluating one closed expression at compile time.
 *
 * FoldConstant (transform/fold_constant.c) replaces constant subexpressions
 * by their values. It computes them here, with the very lowering and VM that
 * `relayc --run` uses, so a folded constant is bit-identical to what the
 * unfolded program computes at run time.
 *
 * The expression must be closed (no free variables, no references to
 * globals) and carry the types the program would run with: operator calls
 * read their inferred result type as at run time (a NULL type is allowed and
 * takes the generic paths). Only values without code are returned: tensors,
 * scalars, tuples and ADT values of them (a closure would outlive the code
 * it points into).
 *
 *     Value v;
 *     if (eval_closed_expr(m, call, &v, NULL) == EVAL_CLOSED_OK) {
 *       ... value_release(v);
 *     }
 */
#ifndef RELAYC_EVAL_CLOSED_H
#define RELAYC_EVAL_CLOSED_H

#include "ir/ast.h"
#include "runtime/value.h"

enum {
  EVAL_CLOSED_OK = 0,      /* *out holds the value (owned by the caller) */
  EVAL_CLOSED_NOT_VALUE = 1, /* not closed, or the value holds a closure: nothing evaluated/kept */
  EVAL_CLOSED_ERROR = 3,   /* a run-time error (reported to d) */
};

/* Evaluates e. Diagnostics go to d, or nowhere when d is NULL. */
int eval_closed_expr(Module *m, Expr *e, Value *out, Diag *d);

#endif
