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
#include "ir/mem.h"

/* Calls visit(e, ud) once per distinct node reachable from `root`, children
 * (in source order) before parents; nested function bodies are entered when
 * `enter_fns`. Uses Expr.mark while it runs and puts every mark back before
 * it returns (a walk may run inside a pass's mark-keyed table, and walks may
 * nest); visit must not write marks itself (no dag_scan or printing in it). */
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

/* A tree of scopes (function bodies, branches, clauses...) that answers
 * "innermost scope enclosing both a and b" in O(log depth): nodes are indices,
 * each with its parent, depth and a skew-binary jump pointer, so LCAs stay
 * cheap on 10,000-deep nesting. Placing a shared node in the lowest common
 * ancestor of its users' scopes (the printer) uses it.
 *
 *     ScopeTree t = {0};
 *     uint32_t root = scope_tree_add(&t, SCOPE_TREE_NONE), a = scope_tree_add(&t, root);
 *     scope_tree_lca(&t, a, root) == root;  ...  scope_tree_free(&t); */
#define SCOPE_TREE_NONE UINT32_MAX
typedef struct ScopeTreeNode {
  uint32_t parent, jump, depth;
} ScopeTreeNode;
typedef struct ScopeTree {
  ScopeTreeNode *data;
  size_t len, cap;
} ScopeTree;
/* A new scope under `parent` (SCOPE_TREE_NONE: a root); returns its index. */
uint32_t scope_tree_add(ScopeTree *t, uint32_t parent);
/* The innermost scope enclosing a and b (SCOPE_TREE_NONE: different roots). */
uint32_t scope_tree_lca(const ScopeTree *t, uint32_t a, uint32_t b);
void scope_tree_free(ScopeTree *t);

/* A stack of expressions for iterative walks. */
typedef VEC(Expr *) ExprVec;

/* Appends e's children to *st (nested function bodies only when enter_fns),
 * in the order the post-order walks visit them. */
void walk_push_children(Expr *e, bool enter_fns, ExprVec *st);

#endif
