/* analysis/common.h — what both analyses need to read a typed function body.
 *
 * dot.c and stats.c see every expression node of a function once, however
 * many parents share it, in post-order (children before parents), including
 * the bodies of nested functions, both branches of an `if` and every match
 * clause: an_postorder lists them with ir/walk.h's walk (explicit stack, so
 * 100,000-long graph chains and 10,000-deep nesting cost no C stack; the AST
 * is never written to). an_nchildren/an_child name a node's children by
 * position, which dot.c needs to tell a branch from a condition.
 *
 *     AnList order = {0};
 *     an_postorder(fn->body, &order);
 *     for (size_t i = 0; i < order.len; i++) ... order.data[i] ...
 *     vec_free(order);
 */
#ifndef RELAYC_ANALYSIS_COMMON_H
#define RELAYC_ANALYSIS_COMMON_H

#include <stdint.h>

#include "ir/ast.h"
#include "ir/mem.h"

typedef VEC(Expr *) AnList;

/* Number of child expressions of e, and the i-th, in evaluation order:
 * call: callee, args; tuple: fields; proj: tuple; fn: body; let: value,
 * body; if: cond, then, else; match: scrutinee, clause bodies; refs: their
 * operands. Leaves have none. */
uint32_t an_nchildren(const Expr *e);
Expr *an_child(const Expr *e, uint32_t i);
/* Appends every node reachable from root to *out, each once, children first. */
void an_postorder(Expr *root, AnList *out);
/* The function @name of m, or NULL. */
const Function *an_find_def(const Module *m, const char *name);

#endif
