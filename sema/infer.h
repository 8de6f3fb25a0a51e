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

/* A bare expression module (m->expr, after resolve_expression). */
bool infer_expression(Module *m, Diag *d);

#endif
