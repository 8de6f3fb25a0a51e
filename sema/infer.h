/* sema/infer.h — type inference and checking of a resolved module.
 *
 * Fills Expr.type, Var.type and Function.type of every node with fully
 * resolved types (no TYPE_UVAR left; a type nothing constrained stays `_`),
 * following spec/ops.md §1 and spec/text-format.md §4-5: unification with
 * union-find, operator relations solved by a work-list fixpoint, polymorphic
 * globals/constructors/ops instantiated at each use, exhaustive `match`.
 * Reports every independent error it finds (no cascades); returns false if
 * any error was reported. Run only on a module resolve_module accepted.
 *
 *     if (resolve_module(m, &d) && infer_module(m, &d)) print_module(stdout, m, opts);
 */
#ifndef RELAYC_SEMA_INFER_H
#define RELAYC_SEMA_INFER_H

#include "ir/ast.h"

bool infer_module(Module *m, Diag *d);

/* Forgets every inferred type (Expr.type, Var.type, Function.type) so
 * infer_module can run again on a module a pass has rewritten. Linear in the
 * number of distinct nodes; no recursion. */
void infer_clear(Module *m);

/* Types the nodes under e that have no type yet (Expr.type == NULL), taking
 * the types already recorded on the others (and on variables) as given: for
 * a pass that built a few nodes over a typed tree and needs their types
 * before the runner re-types the whole module. Cost: the untyped nodes
 * only. False (after reporting) if a new node does not type-check. */
bool infer_untyped(Module *m, Expr *e, Diag *d);

/* Whether t has an extent not known at compile time (`?` or a symbolic
 * size) anywhere, function, reference and ADT types included. */
bool type_has_unknown_extent(const Type *t);

/* Forgets every recorded type under root (expressions, function literals,
 * let, parameter and pattern variables, the variables it uses included), as
 * infer_clear does for a module: infer_untyped(root) then types all of it
 * again, e.g. after a pass made part of root more static (FoldConstant's
 * arange of constant bounds), which stales the dynamic types of nodes it
 * kept and of the variables they use. */
void infer_clear_tree(Expr *root);

/* ---- incremental re-typing (the pass runner, transform/pass.c) ---------- */
typedef struct InferIncStats {
  uint32_t globals_skipped; /* untouched, signature fixed by annotations: not visited */
  uint32_t globals_checked; /* visited */
  uint64_t nodes_kept;      /* visited nodes whose type was taken as it was */
  uint64_t nodes_retyped;   /* visited nodes inferred again */
  uint32_t unbound_suspect; /* 1 + index in m->defs of the first global visited
                             * that uses a variable none of its binders declared
                             * (a free variable, or a Var.id shared by two
                             * variables: the caller checks exactly); 0 none */
  uint32_t counted_global;  /* when exactly one global was visited: 1 + its index
                             * in m->defs, and nodes_counted is its number of
                             * distinct nodes as ir/walk.h module_node_count
                             * counts them (its judgement met each once: the
                             * runner's --time-passes needs no walk of it); 0 */
  uint64_t nodes_counted;
} InferIncStats;

typedef enum {
  INFER_INC_OK,
  INFER_INC_ERROR,     /* errors reported */
  INFER_INC_NEED_FULL, /* a global's signature changed and kept code uses it:
                        * run infer_clear + infer_module */
} InferIncResult;

/* Re-types a module a pass has rewritten, reusing what it kept (see the
 * comment in infer.c for the exact rule). changed[i] (by index in m->defs):
 * the pass may have changed global i (false only when its Function, body,
 * parameters and annotations are those it had when it was last typed and
 * nothing below was mutated in place); old_sigs[i]: the signature global i
 * had before the pass, or NULL (a new global). Globals not changed whose
 * signature their annotations fix are not visited; inside the others, nodes
 * with a ground type fixed by their kept subtree are leaves. st may be NULL.
 * Leaves its own tags in the visited nodes' Expr.mark (stale for every other
 * mark user, not put back): call it where no mark-keyed table is alive. */
InferIncResult infer_module_incremental(Module *m, const bool *changed, Type *const *old_sigs, Diag *d,
                                        InferIncStats *st);

/* The check of the incremental re-typing (RELAYC_VERIFY_RETYPE=1): records
 * every node's type, re-infers the module from scratch and reports each
 * node whose type differs (at most 5) as an internal error of `who`. False
 * if one did or the full inference failed. Leaves the full types. */
bool infer_verify_module(Module *m, Diag *d, const char *who);

/* A bare expression module (m->expr, after resolve_expression). */
bool infer_expression(Module *m, Diag *d);

#endif
