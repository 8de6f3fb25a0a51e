/* ir/walk.h — visiting every distinct node of an expression DAG once.
 *
 * After resolve the AST is a DAG (spec/text-format.md graph bindings are
 * shared pointers): a walk that follows every edge would visit a shared node
 * once per path. These walks visit each node once, children before parents,
 * with an explicit stack (no C recursion, any depth).
 *
 *     static void count(Expr *e, void *ud) { (*(uint64_t *)ud)++; }
 *     uint64_t n = 0;
 *     walk_post_order(fn->body, true, count, &n);
 */
#ifndef RELAYC_IR_WALK_H
#define RELAYC_IR_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ast.h"

/* Calls visit(e, ud) once per distinct node reachable from `root`, children
 * (in source order) before parents; nested function bodies are entered when
 * `enter_fns`. */
typedef void (*ExprVisitFn)(Expr *e, void *ud);
void walk_post_order(Expr *root, bool enter_fns, ExprVisitFn visit, void *ud);
/* Number of distinct expression nodes in the module's functions (and m->expr). */
uint64_t module_node_count(Module *m);

/* Free variables of a function literal: variables used in its body that
 * neither its parameters nor any binder inside it (let, nested parameters,
 * pattern variables) bind, `exclude` left out (NULL: none), in order of first
 * occurrence (left to right). Appended to *out (a VEC(Var *)). */
typedef struct ExprVarList {
  Var **data;
  size_t len, cap;
} ExprVarList;
void fn_free_vars(const Function *f, const Var *exclude, ExprVarList *out);

/* The same for many literals of one program in linear total time: the sets of
 * every node below the first literal asked about are computed bottom-up once
 * and cached (fn_free_vars on each of 10,000 nested literals would be
 * quadratic). Arrays live in the module's arena. */
typedef struct FvCache FvCache;
FvCache *fv_cache_new(Module *m);
void fv_cache_free(FvCache *c);
void fv_cache_get(FvCache *c, const Function *f, const Var *exclude, ExprVarList *out);

#endif
