/* transform/pattern.h — dataflow patterns and TVM's pattern-rewrite loop
 * (spec/passes.md §1.3), shared by SimplifyExpr, SimplifyExprPostAlterOp and
 * FoldExplicitPadding.
 *
 * A pattern is a small graph of DfPat nodes: a wildcard, a constant, an
 * operator call (operator in a set, or of an op_traits class; arguments
 * matched in order, add/multiply also swapped), or an alternative (left
 * first, else right; greedy, like TVM: an alternative that matched is not
 * revisited when a later argument fails). Patterns may be recursive (a call
 * whose argument pattern is an alternative containing the call itself).
 * A node may carry a capture slot: the expression it matched is recorded
 * there; a slot met twice must see the very same node (a variable's uses and
 * a metadata constant's references count as the same node), so `add(x, x)`
 * needs one x.
 *
 * dfp_rewrite_function applies a list of rewrites to a function in rounds:
 * each rewrite in order over the whole function, then again, until a round
 * changes nothing. One application: every node is tried as a match root from
 * the output backwards (let values, if branches and nested function bodies
 * included); a node inside an accepted match is not a root again; a match is
 * dropped when one of its inner nodes is already in an accepted match or
 * feeds a node outside the match that does not flow back into the root. Then
 * the function is rebuilt bottom-up and at each accepted root the callback
 * gets the node before and after its children were rewritten, with each
 * slot's node before (pre) and after (post). A replacement structurally equal
 * to `post` counts as no change. Nodes the callbacks build are typed
 * (sema infer_untyped) before the next rewrite runs; types a callback reads
 * are those of the pre nodes. Like TVM, the loop stops with an error once
 * 100 rewrite applications were counted without reaching a fixed point.
 *
 *     DfPool *P = dfp_pool_new();
 *     DfPat *x = dfp_wild(P, 0);
 *     DfPat *p = dfp_call(P, -1, "reshape|contrib_reverse_reshape", 1,
 *                         dfp_call(P, -1, "reshape|contrib_reverse_reshape", 1, x));
 *     DfRewrite r = {"SimplifyReshape", p, simplify_reshape};
 *     dfp_rewrite_function(m, d, fn, &r, 1, NULL, "SimplifyExpr");
 *     dfp_pool_free(P);
 */
#ifndef RELAYC_TRANSFORM_PATTERN_H
#define RELAYC_TRANSFORM_PATTERN_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ast.h"
#include "ops/op_traits.h"

#define DFP_MAX_SLOTS 24
#define DFP_MAX_REWRITES 32 /* per dfp_rewrite_function call */
/* Rounds of all rewrites before giving up on a fixed point. TVM counts 100
 * applications (about four rounds of SimplifyExpr's rewrites) and aborts;
 * relayc goes on to 100 rounds and then keeps what it has, with a warning. */
#define DFP_MAX_ROUNDS 100

typedef enum {
  DFP_WILD,  /* any expression */
  DFP_CONST, /* an EXPR_CONST node */
  DFP_CALL,  /* an operator call */
  DFP_ALT,   /* left, else right */
} DfPatKind;

typedef struct DfPat DfPat;
struct DfPat {
  DfPatKind kind;
  int slot;           /* capture slot, or -1 */
  /* DFP_CALL */
  int32_t ops[8];     /* accepted operator ids (nops of them) */
  int nops;
  int cls;            /* >= 0: any operator of this OpPattern class (ops unused) */
  bool commutative;   /* add / multiply: the two arguments are also tried swapped */
  DfPat **args;
  int nargs;          /* -1: arguments are not matched */
  /* DFP_ALT */
  DfPat *l, *r;
  /* filled on first use: the operators a match can start with */
  struct DfPool *pool;
  uint8_t *filter;
  uint32_t filter_nbits;
  bool filter_any, filter_const;
};

typedef struct DfPool DfPool;
DfPool *dfp_pool_new(void);
void dfp_pool_free(DfPool *p);

DfPat *dfp_wild(DfPool *p, int slot);
DfPat *dfp_const(DfPool *p, int slot);
/* A call of one of the operators named in `ops` ("reshape|contrib_reverse_reshape";
 * names not registered are ignored, so a pattern on an absent operator never
 * matches) with nargs argument patterns (-1: any arguments). */
DfPat *dfp_call(DfPool *p, int slot, const char *ops, int nargs, ...);
/* A call of any operator of class cls with nargs argument patterns. */
DfPat *dfp_call_class(DfPool *p, int slot, OpPattern cls, int nargs, ...);
DfPat *dfp_alt(DfPool *p, int slot, DfPat *l, DfPat *r);
/* An alternative of n patterns (left to right). */
DfPat *dfp_any(DfPool *p, int slot, int n, ...);

typedef struct DfMatch {
  Expr *pre[DFP_MAX_SLOTS];  /* per slot: the matched node as the round saw it (NULL: no match there) */
  Expr *post[DFP_MAX_SLOTS]; /* the same node after its children were rewritten */
} DfMatch;

typedef struct DfCtx {
  Module *m;
  Diag *d;
  void *ud; /* the pass's state */
} DfCtx;

/* Returns the replacement of `post` (post itself to decline). pre is the
 * root as matched (typed), post the root with rewritten children. */
typedef Expr *(*DfCallback)(DfCtx *cx, Expr *pre, Expr *post, const DfMatch *mt);

typedef struct DfRewrite {
  const char *name;
  DfPat *pattern;
  DfCallback fn;
} DfRewrite;

/* Runs the rewrites on f until a fixed point (see above), at most
 * DFP_MAX_ROUNDS rounds (then a warning naming `what`, and the program as far
 * as it got: every round's output is a correct program). False after an
 * error was reported: new nodes that do not type-check, or nesting too deep.
 * f->body is replaced; f stays typed. */
bool dfp_rewrite_function(Module *m, Diag *d, Function *f, const DfRewrite *rewrites, int n, void *ud,
                          const char *what);

/* Structural equality of two typed-or-not expressions of the same function:
 * identical pointers are equal, variables by binder, constants by bytes,
 * calls by callee, attributes and arguments. Binders are compared by
 * identity (the rewriter never renames them). */
bool dfp_equal(const Expr *a, const Expr *b);

#endif
