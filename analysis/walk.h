/* analysis/walk.h — visiting a typed function body as the DAG it is.
 *
 * Both analyses (dot.c, stats.c) see every expression node of a function
 * once, however many parents share it, in post-order (children before
 * parents), including the bodies of nested functions, both branches of an
 * `if` and every match clause. The walk keeps its own stack and a visited
 * set keyed by node pointer, so 100,000-long graph chains and 10,000-deep
 * nesting cost no C stack, and it never writes to the AST (Expr.mark is left
 * to passes).
 *
 *     WalkList order = {0};
 *     walk_postorder(fn->body, &order);
 *     for (size_t i = 0; i < order.len; i++) ... order.data[i] ...
 *     vec_free(order);
 */
#ifndef RELAYC_ANALYSIS_WALK_H
#define RELAYC_ANALYSIS_WALK_H

#include <stdint.h>

#include "ir/ast.h"
#include "ir/mem.h"

typedef VEC(Expr *) WalkList;

/* Number of child expressions of e, and the i-th, in evaluation order:
 * call: callee, args; tuple: fields; proj: tuple; fn: body; let: value,
 * body; if: cond, then, else; match: scrutinee, clause bodies; refs: their
 * operands. Leaves have none. */
uint32_t walk_nchildren(const Expr *e);
Expr *walk_child(const Expr *e, uint32_t i);
/* Appends every node reachable from root to *out, each once, children first. */
void walk_postorder(Expr *root, WalkList *out);
/* The type with inference links followed (NULL stays NULL). */
const Type *walk_type(const Type *t);
/* The function @name of m, or NULL. */
const Function *walk_find_def(const Module *m, const char *name);

#endif
