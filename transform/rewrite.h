/* transform/rewrite.h — the expression rewriter every pass is built on.
 *
 * A Rewriter maps each node of a function body to its replacement exactly
 * once (a memo keyed by node pointer), so a node shared by several parents
 * (a `%N = ...` graph binding) stays ONE node in the output, and unchanged
 * subtrees are returned as the very same pointers (no copying). Two hooks,
 * both optional:
 *
 *   pre(rw, e)   called before e's children are visited; returning non-NULL
 *                replaces e by that expression, which is NOT visited further.
 *   post(rw, old, e)  called after the children: `e` is old with its
 *                rewritten children (== old when nothing below changed);
 *                return the replacement (usually e, or something built from it).
 *
 * Variable substitution: rw_subst(rw, v, e) makes every later use of `v`
 * become `e` (the use node is replaced; binders are not renamed). Binders are
 * kept as the same Var objects unless `rebind` returns a new one: then the
 * rebuilt let / function / clause binds the new Var and every use of the old
 * one inside its scope becomes a use of the new one. rw_copy_fresh uses this
 * to copy code with fresh binders (inlining, specialisation).
 *
 * Depth: let chains (`let`, and `e1; e2`) are walked with a loop and
 * dataflow nodes (calls, tuples, projections) with an explicit stack, in the
 * same order as recursion would (pre, children in order, post), so
 * 100,000-long let and graph chains use constant C stack. Other nesting
 * (branches, function literals, matches, refs) recurses, guarded
 * by stack_exhausted(): on exhaustion the rewriter reports "expression
 * nested too deeply" once, sets rw->failed and returns nodes unchanged.
 *
 *     static Expr *post(Rewriter *rw, Expr *old, Expr *e) {
 *       if (op_call_is(e, "negative") && op_call_is(e->call.args[0], "negative"))
 *         return e->call.args[0]->call.args[0];             // --x -> x
 *       return e;
 *     }
 *     Rewriter rw;
 *     rw_init(&rw, m, d);
 *     rw.post = post;
 *     fn->body = rw_expr(&rw, fn->body);
 *     rw_fini(&rw);
 */
#ifndef RELAYC_TRANSFORM_REWRITE_H
#define RELAYC_TRANSFORM_REWRITE_H

#include <stdbool.h>

#include "ir/ast.h"
#include "ir/ptrmap.h"
#include "ir/walk.h"

typedef struct Rewriter Rewriter;
typedef Expr *(*RwPre)(Rewriter *rw, Expr *e);
typedef Expr *(*RwPost)(Rewriter *rw, Expr *old, Expr *e);
typedef Var *(*RwRebind)(Rewriter *rw, Var *v);

struct Rewriter {
  Module *m;
  Diag *d;         /* for "nested too deeply"; may be NULL */
  RwPre pre;
  RwPost post;
  RwRebind rebind; /* optional: a new binder for v (let, fn params, pattern vars); uses follow */
  void *ud;        /* the pass's own state */
  PtrMap memo;     /* Expr* -> Expr* */
  PtrMap subst;    /* Var* -> Expr* (uses of the var become the expr) */
  bool enter_fns;  /* visit nested function literals (default true) */
  /* Opt-in, for passes that keep the type of every expression they rewrite
   * (each replacement has its original's type): a node the rewriter rebuilds
   * around new children (and a function literal rebuilt around a new body)
   * takes the type of the node it replaces, a rebound binder its
   * original's Var.type, so the runner's incremental re-typing keeps them
   * (sema/infer.c) instead of inferring them again. Hooks see the typed copy. */
  bool keep_types; /* (rw_rebuilt_type decides; a node it cannot type stays untyped) */
  bool failed;     /* nesting too deep: the result is partial */
  /* Opt-in, set before the first rw_expr: memoise through Expr.mark (an
   * index into `marked`, validated by a back pointer) instead of `memo`,
   * 3-5x faster on 100,000-node functions (no hash table to grow and miss
   * in). The rewriter borrows the marks: each node's previous mark is kept
   * and given back by rw_fini / rw_reset_memo (rw_prior_mark reads it
   * meanwhile), so mark users that nest inside one another (a walk or an
   * inner mark_memo rewriter in a hook, a pass's own mark table built before
   * the rewrite) are fine. Not allowed: something in a hook that writes the
   * mark of a node this rewriter memoised and does not give it back (dagscan,
   * a FusePartition, the printer): the memo entry would be lost and a shared
   * node duplicated. */
  bool mark_memo;
  struct { struct RwMark { const Expr *key; Expr *val; uint32_t prior; } *data; size_t len, cap; } marked;
  /* the dataflow walk's stack, one for every (nested) walk: each works above
   * the height it found (no allocation per let-bound value) */
  struct { struct RwItem { Expr *e; bool entered; } *data; size_t len, cap; } work;
};

void rw_init(Rewriter *rw, Module *m, Diag *d);
void rw_fini(Rewriter *rw);
/* The rewritten form of e (memoised). */
Expr *rw_expr(Rewriter *rw, Expr *e);
/* e with each child rewritten by rw_expr and no hooks applied to e itself:
 * e when no child changed, else a fresh copy. For hooks that want the
 * default behaviour after looking at a node in `pre`. */
Expr *rw_children(Rewriter *rw, Expr *e);
/* Every later use of v becomes e. */
void rw_subst(Rewriter *rw, Var *v, Expr *e);
/* With mark_memo: the Expr.mark e had before this rewriter memoised it (its
 * current mark when it is not memoised). */
uint32_t rw_prior_mark(const Rewriter *rw, const Expr *e);
/* Forget memoised results (e.g. between functions when a substitution changes). */
void rw_reset_memo(Rewriter *rw);
/* Rewrites a function's body in place (params kept); false if nesting was too deep. */
bool rw_function(Rewriter *rw, Function *f);

/* A copy of `e` with every binder inside it fresh (alpha-renamed) and the free
 * variables from[i] replaced by to[i] (each to[i] shared by all its uses).
 * Subtrees with no binders and no substituted variables are shared with the
 * original. Sharing inside e is kept. */
Expr *rw_copy_fresh(Module *m, Diag *d, Expr *e, Var *const *from, Expr *const *to, uint32_t n);
/* The same, but the nodes in `keep` (if not NULL) stay shared, with all
 * below them, even when they have an effect or bind variables: nodes of the
 * enclosing code that the copied body uses (its home is outside, ir/walk.h
 * FnHomes), evaluated there once. Without `keep`
 * every node with an effect of its own is copied (each copy runs it). */
Expr *rw_copy_fresh_keep(Module *m, Diag *d, Expr *e, Var *const *from, Expr *const *to, uint32_t n,
                         const PtrMap *keep);

/* The type a rebuilt node `now` may take over from the node `old` it
 * replaces (same kind, some children new): old->type when every new child
 * has the type of the child it replaces, so inference would give `now`
 * old's type again; NULL (inference types it) otherwise, and for a call
 * whose type relation reads the value of a constant argument
 * (ops/op_traits.h OPF_TYPE_READS_CONSTS: arange) with an argument changed,
 * or a match whose patterns changed. For passes that type what they build
 * (Rewriter.keep_types, ir/build.h build_typed). */
Type *rw_rebuilt_type(const Expr *old, const Expr *now);

/* Does a function (or global) have attribute `key` set to a nonzero int / any string? */
bool fn_has_attr(const Function *f, const char *key);
/* Function passes skip functions marked Compiler=..., Extern=1 or SkipOptimization=1
 * (spec/passes.md §1.1). */
bool fn_skipped_by_function_passes(const Function *f);

#endif
