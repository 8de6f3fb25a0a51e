/* transform/fold_constant.h — constant folding as a service for other passes.
 *
 * FoldConstant (spec/passes.md §4.1) is also a building block: DynamicToStatic
 * folds the shape arguments of dyn.* calls, SimplifyExpr folds `c1 * c2`.
 * A Folder keeps its memo across calls, so folding many overlapping
 * subexpressions of one function costs each node once.
 *
 *     Folder *f = folder_new(m, d);
 *     Expr *k = folder_fold(f, arg);        // typed input; result may be untyped
 *     if (k->kind == EXPR_CONST) ...
 *     folder_free(f);
 *
 * The input must be typed (shape_of folding reads its argument's type);
 * nodes the folder builds are untyped (the pass runner re-types).
 *
 * The FoldConstant pass itself (not a Folder) may fold a float elementwise
 * call into the buffer of a constant argument that only that call reaches in
 * the module (transform/fold_constant.c, "Ownership"): expressions a caller
 * kept from before the pass, no longer part of the module, may then see the
 * new contents. A Folder never writes a constant.
 */
#ifndef RELAYC_TRANSFORM_FOLD_CONSTANT_H
#define RELAYC_TRANSFORM_FOLD_CONSTANT_H

#include "ir/ast.h"

typedef struct Folder Folder;

Folder *folder_new(Module *m, Diag *d);
void folder_free(Folder *f);
/* The folded form of e (memoised by node pointer). */
Expr *folder_fold(Folder *f, Expr *e);
/* FoldConstant on one typed function (its body replaced; untouched when
 * nothing can fold). False when nesting is too deep (reported). */
bool fold_constant_function(Module *m, Diag *d, Function *fn);
/* Forgets the memo (after the caller rewrote nodes the memo may refer to). */
void folder_reset(Folder *f);
/* Whether e is a constant, or an on_device-wrapped constant (spec §11.4). */
bool fold_is_simple_constant(const Expr *e);
/* Whether e is a simple constant or an explicit tuple (possibly on_device-
 * wrapped) of such, recursively. */
bool fold_is_complex_constant(const Expr *e);

/* Evaluates the operator call `call` whose arguments are all complex
 * constants: a constant, a tuple of constants, or NULL when it cannot be
 * evaluated (no kernel, a run-time error, a value that is no tensor). The
 * call's type, if set, is the result type the kernel sees. */
Expr *fold_eval_call(Module *m, Expr *call);

/* A rank-0 constant of dtype dt holding v the way TVM's MakeConstantScalar
 * stores it: floats rounded to the dtype (float16 and bfloat16 from float32),
 * integers truncated toward zero, bool = v != 0. */
Expr *fold_const_scalar(Module *m, DType dt, double v, Span sp);

/* Element 0 of a constant as TVM's TryToScalar reads it (ints, uints, bool,
 * float16/32/64, bfloat16); false for other dtypes or an empty constant. */
bool fold_const_element0(const ConstTensor *c, long double *out);

#endif
