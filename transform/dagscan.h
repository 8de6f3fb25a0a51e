/* transform/dagscan.h — the distinct nodes of an expression DAG, fast.
 *
 * Like ir/walk.h's walk_post_order (every node once, children before
 * parents, nested function bodies entered, no C recursion), but without a
 * hash map: while scanning, Expr.mark holds each node's discovery index + 1,
 * validated against the scan's own array (ir/print.c's trick), so stale marks
 * left by anyone else are harmless. The marks stay valid for dag_index until
 * something else writes marks (the printer, ToCPS) — do not interleave.
 *
 *     DagScan s;
 *     dag_scan(&s, fn->body);
 *     for (uint32_t i = 0; i < s.n; i++) visit(dag_node(&s, i));  // post order
 *     dag_free(&s);
 */
#ifndef RELAYC_TRANSFORM_DAGSCAN_H
#define RELAYC_TRANSFORM_DAGSCAN_H

#include <stdint.h>

#include "ir/ast.h"
#include "ir/ptrmap.h"
#include "ops/registry.h"

typedef struct DagScan {
  Expr **pre;     /* nodes in discovery order */
  uint32_t *post; /* discovery indices in post order (children first; the root last) */
  uint32_t *pos;  /* discovery index -> post-order position */
  uint8_t *uses;  /* discovery index -> edges into the node (saturated at 255), or NULL */
  uint32_t n, cap;
  bool counting;  /* uses wanted */
} DagScan;

void dag_scan(DagScan *s, Expr *root);
/* Several roots in one numbering (a node under two of them is listed once,
 * under the first); the post order lists each root's new nodes in turn.
 * With count_uses, s->uses counts the edges into each node (its parents,
 * a parent using it twice counting twice) on the way. */
void dag_scan_roots(DagScan *s, Expr *const *roots, uint32_t nroots, bool count_uses);
/* Whether e was scanned (its mark is still the scan's), and its discovery
 * index k (s->pre[k] == e). */
bool dag_scanned(const DagScan *s, const Expr *e, uint32_t *k);
void dag_free(DagScan *s);
/* The i-th node in post order. */
static inline Expr *dag_node(const DagScan *s, uint32_t i) { return s->pre[s->post[i]]; }
/* The post-order position of e, or UINT32_MAX when e was not scanned. */
uint32_t dag_index(const DagScan *s, const Expr *e);
/* Whether pred holds for some node under root (each node tested once). */
bool dag_any(Expr *root, bool (*pred)(const Expr *e, void *ud), void *ud);
/* Whether some node under root is a call of an operator with id[ids[i]] set
 * (ids: a table indexed by operator id, n entries). */
bool dag_calls_any(Expr *root, const bool *ids, uint32_t n);
/* The i-th child of e (call: the callee then the arguments), or NULL past the last. */
Expr *dag_child(const Expr *e, uint32_t i);
/* What TVM's memo tables identify an atom by (every use of a name is one
 * node there, relayc has one node per use): a variable use its Var, a
 * global reference its GlobalDef, an operator its OpDef, a constructor its
 * Ctor; NULL for any other node (and an unresolved atom), which a table
 * keys by the node itself. For DeadCodeElimination and the normal forms. */
static inline const void *dag_atom_key(const Expr *e) { /* inline: asked once per node and edge */
  switch (e->kind) {
  case EXPR_VAR: return e->var.var;
  case EXPR_GLOBAL: return e->global.def;
  case EXPR_OP: return e->op.id >= 0 ? op_get(e->op.id) : NULL;
  case EXPR_CTOR: return e->ctor.ctor;
  default: return NULL;
  }
}

/* Does evaluating e itself (not its children, not the bodies of literals it
 * makes) have an effect or depend on when it runs: a reference operation, a
 * call of anything but an operator or constructor, a stateful operator? */
bool dag_own_effect(const Expr *e);
/* Whether evaluating root has an effect anywhere below it (function literal
 * bodies not entered), memoised per node in *memo (1 none, 2 effect) for as
 * long as the nodes live; iterative. */
bool dag_has_effects(PtrMap *memo, Expr *root);
/* What one scan of root (function literal bodies entered) finds: a function
 * literal; a node with an effect of its own (dag_own_effect); a direct
 * effect (a reference operation or a stateful operator call: what
 * dag_literal_captures_effect looks for). Passes use it to skip work a
 * function without effects cannot need. */
typedef struct DagEffects {
  bool literal, own, direct;
} DagEffects;
DagEffects dag_effects(Expr *root);
/* Whether a function literal in root uses a node of an enclosing function
 * (ir/walk.h FnHomes: a cross node) with a direct effect below it: relayc
 * evaluates it once, where A-normal form binds it, and the literal captures
 * its value; a pass that moves the literal's body elsewhere (a lifted
 * global, an apply clause, a per-call unfolding) would run it per call. */
bool dag_literal_captures_effect(Function *root);

#endif
