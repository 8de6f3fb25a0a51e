/* transform/gradient.h — automatic differentiation of Relay functions (spec/gradient.md §1).
 *
 * gradient_of_function turns a typed function `fn (%p1: T1, ..., %pn: Tn) -> R`
 * into the function literal `fn (%p1, ..., %pn) -> (R, (T1, ..., Tn))` that
 * returns the forward value and the gradient of (the first leaf of) the
 * result with respect to every parameter, in TVM's two forms:
 *
 *   GRAD_HIGHER_ORDER  reverse mode with references and closures (§1.4): works
 *                      through let, if, match/ADTs, closures, refs, recursion
 *                      and calls of other globals (each called @g gets a
 *                      translated copy @g_grad added to the module);
 *   GRAD_FIRST_ORDER   a staged reverse pass over pure dataflow code (§1.5): no
 *                      refs or closures in the output; rejects let, if, match,
 *                      refs, globals and unapplied function literals.
 *
 * The parameters of the result are the very Var objects of `f`; its body is
 * new (f itself is not modified). Operators are differentiated by the
 * registry's gradient column (ops/gradients/grad.h): the transform knows
 * nothing about any particular operator. Before building anything every
 * operator call reachable from f (through called globals too) that needs a
 * rule and has none is reported, all in one diagnostic (error + one note per
 * use). New nodes are typed where their type follows from their children's
 * (sema/typeof.h); the rest (polymorphic code, constructors, match) is left to
 * the re-typing the pass runner does afterwards. Returns NULL after reporting
 * errors.
 *
 *     Expr *g = gradient_of_function(m, main->fn, GRAD_HIGHER_ORDER, d);
 *     if (g) main->fn = g->fn;            // then infer_clear + infer_module
 */
#ifndef RELAYC_TRANSFORM_GRADIENT_H
#define RELAYC_TRANSFORM_GRADIENT_H

#include <stdbool.h>

#include "ir/ast.h"
#include "ir/walk.h"
#include "sema/typeof.h"

typedef enum {
  GRAD_HIGHER_ORDER, /* TVM's gradient(expr, mod, "higher_order") */
  GRAD_FIRST_ORDER,  /* TVM's FirstOrderGradient */
} GradMode;

Expr *gradient_of_function(Module *m, Function *f, GradMode mode, Diag *d);

/* ---- shared by the two modes (transform/gradient*.c) ---- */
/* Does t hold a float tensor (a tensor, or a tuple with one)? */
bool grad_type_has_float(const Type *t);
/* Does the operator call need a gradient rule: a float result and a float input? */
bool grad_call_needs_rule(const Expr *call);
/* Reports, in one diagnostic, every operator call in f's body that needs a
 * rule and has none; false when there was any. The one walk over f's body
 * also calls visit(e, ud) on each of its nodes; first(ud, d) then reports
 * what visit found, before the missing rules are: false from it stops there. */
bool grad_check_rules_after(Function *f, ExprVisitFn visit, void *ud, bool (*first)(void *ud, Diag *d), Diag *d);
/* Checks the parameter and result types the transform accepts (§1.2). */
bool grad_check_signature(Module *m, Function *f, bool first_order, Diag *d);
/* The return annotation (R, (T1..Tn)) when f's result and every parameter
 * were annotated, else NULL (§1.3). */
Type *grad_result_annotation(Module *m, const Function *f);
Expr *gradient_first_order(Module *m, Function *f, Diag *d);

/* Calls of one operator with its default attributes, the name looked up and
 * the attributes normalised once (op_call parses and normalises at every
 * call; the transforms build millions of zeros_like / add calls). The
 * calls share the one normalised Attrs. Typed like typeof_set. */
typedef struct GradOp {
  const char *name;
  int32_t id;   /* -1 until the first call */
  Attrs *attrs;
} GradOp;
Expr *grad_op_call(TypeofCx *tc, GradOp *op, Expr **args, uint32_t nargs, Span sp);
/* The callee types and nodes of the forward calls made last, by operator,
 * argument type objects and result type object (each mode keeps one per
 * run, zeroed): a chain's calls of one operator at one type take them
 * without building the function type from its parts again. */
enum { GRAD_FORWARD_SEEN = 16, GRAD_FORWARD_SEEN_ARGS = 4 };
typedef struct GradForwardSeen {
  int32_t op;
  uint32_t n;
  Type *args[GRAD_FORWARD_SEEN_ARGS];
  Type *ret;
  Type *fn;     /* NULL: empty */
  Expr *callee; /* typeof_op_node(op, fn) */
} GradForwardSeen;
typedef struct GradForwardMemo {
  GradForwardSeen seen[GRAD_FORWARD_SEEN];
} GradForwardMemo;
/* The forward copy of the source operator call e with arguments vals (atoms):
 * when every vals[i] has the type of e's argument i, typed with e's type
 * (the shared object) and its callee the node shared by the calls of that
 * operator at that type (typeof_op_node); else untyped, with a copy of e's
 * callee. `memo` may be NULL. */
Expr *grad_forward_call(TypeofCx *tc, GradForwardMemo *memo, const Expr *e, Expr **vals);

#endif
