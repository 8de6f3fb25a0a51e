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
#include "ir/ptrmap.h"

/* Calls visit(e, ud) once per distinct node reachable from `root`, children
 * (in source order) before parents; nested function bodies are entered when
 * `enter_fns`. Uses Expr.mark while it runs and puts every mark back before
 * it returns (a walk may run inside a pass's mark-keyed table, and walks may
 * nest); visit must not write marks itself (no dag_scan or printing in it). */
typedef void (*ExprVisitFn)(Expr *e, void *ud);
void walk_post_order(Expr *root, bool enter_fns, ExprVisitFn visit, void *ud);
/* Number of distinct expression nodes in the module's functions (and m->expr):
 * the sum over each global's body (a node shared by two globals counts in
 * both). Leaves run tags in Expr.mark (below), as the incremental re-typing
 * does: call it only where no mark-keyed table is alive (the pass runner,
 * between passes). */
uint64_t module_node_count(Module *m);
/* The same for the nodes reachable from one root (a global's body). */
uint64_t expr_node_count(Expr *root);

/* Run tags: a walk that marks the nodes it entered and does not put the marks
 * back sets Expr.mark to a tag from walk_new_tag(). Tags have the top bit set,
 * above the length of any mark-keyed table (a table validates mark - 1 as an
 * index, transform/dagscan.c), so they are stale marks for every other user;
 * each call returns a tag no earlier call returned (for 2^30 calls), with the
 * low bit clear (a walk may keep a verdict there), so no reset is needed. */
#define WALK_TAG_BIT 0x80000000u
uint32_t walk_new_tag(void);

/* Visits each distinct node reachable from root once, in no particular order
 * (function bodies entered when enter_fns): for scans that only collect (no
 * order, no result per node). Like walk_post_order it puts every mark back,
 * and visit must not read or write marks; it costs half as much. */
void walk_each_once(Expr *root, bool enter_fns, ExprVisitFn visit, void *ud);

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
/* The ancestor of s at `depth` (at most s's own depth; the root's is 0). */
uint32_t scope_tree_up(const ScopeTree *t, uint32_t s, uint32_t depth);
void scope_tree_free(ScopeTree *t);

/* Nodes shared across function literals. A node's home is the innermost
 * function (a root function or a literal) enclosing every function it is used
 * from; a node used from more than one function is "cross". TVM normalises
 * to A-normal form before interpreting or differentiating, which binds such a
 * node in the scope enclosing its uses: it is evaluated once there, and a
 * literal using it captures its value (it is not re-evaluated per call of the
 * closure). The interpreter (eval/lower.c) and Gradient follow that. Nodes
 * shared between two roots (globals) are left out (home FN_HOMES_NONE).
 * Linear, plus an O(log depth) LCA per extra use of a node (ScopeTree).
 *
 *     FnHomes h = {0};
 *     fn_homes_add(&h, g->fn);   // each root: a global's function, ...
 *     if (fn_homes_captured(&h, x, lit)) ...  // x evaluated outside literal `lit`
 *     fn_homes_free(&h); */
#define FN_HOMES_NONE (UINT32_MAX - 1)
typedef struct FnHomes {
  ScopeTree tree; /* the functions */
  PtrMap fn_of;   /* a root's Function* or a literal's EXPR_FN node -> tree index + 1 */
  PtrMap home;    /* non-trivial Expr* -> tree index + 1 of its home (FN_HOMES_NONE + 1: none) */
  PtrMap cross;   /* Expr* -> 1: used from more than one function */
} FnHomes;
void fn_homes_add(FnHomes *h, Function *root);
/* The tree index of a root Function* or literal EXPR_FN node (SCOPE_TREE_NONE: unknown). */
uint32_t fn_homes_fn(const FnHomes *h, const void *key);
/* The tree index of e's home (SCOPE_TREE_NONE: not tracked; FN_HOMES_NONE: across roots). */
uint32_t fn_homes_home(const FnHomes *h, const Expr *e);
/* Is e a cross node evaluated outside literal `lit` (its home encloses lit strictly)? */
bool fn_homes_captured(const FnHomes *h, const Expr *e, const Expr *lit);
void fn_homes_free(FnHomes *h);

/* A stack of expressions for iterative walks. */
typedef VEC(Expr *) ExprVec;

/* Appends e's children to *st (nested function bodies only when enter_fns),
 * in the order the post-order walks visit them. */
void walk_push_children(Expr *e, bool enter_fns, ExprVec *st);

/* The nodes a literal captures (fn_homes_captured: evaluated outside it), in
 * the order a depth-first walk of its body meets them (first child first),
 * each once, memoised per literal. A nested literal's own list stands for its
 * body in the walk of the literal around it, so literals nested 10,000 deep
 * cost linear time. The arrays stay valid until fn_captures_free.
 *
 *     FnCaptures c = {0};
 *     uint32_t n;
 *     Expr **xs = fn_captures_of(&c, &homes, lit, &n);
 *     fn_captures_free(&c); */
typedef struct FnCaptures {
  PtrMap memo; /* literal EXPR_FN node -> 1 + index in lists */
  VEC(struct FnCaptured { Expr **xs; uint32_t n; }) lists;
} FnCaptures;
Expr **fn_captures_of(FnCaptures *c, const FnHomes *h, Expr *lit, uint32_t *n);
void fn_captures_free(FnCaptures *c);

/* Calls visit(v, ud) for each variable pattern p binds, left to right.
 * Patterns nest as deep as written: where the stack runs out
 * (stack_exhausted) the rest of the pattern is skipped quietly. */
typedef void (*PatternVarFn)(Var *v, void *ud);
void pattern_each_var(const Pattern *p, PatternVarFn visit, void *ud);

#endif
