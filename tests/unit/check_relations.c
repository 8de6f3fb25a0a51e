/* tests/unit/check_relations.c — every operator's type relation, through
 * text: at least one accepting and one rejecting case per operator, plus the
 * solver's behaviour (deferral, input refinement, Any dims, "cannot infer").
 *
 * A case is `def @main(PARAMS) { BODY }`; an accepting case states the
 * printed type of @main's result, a rejecting case a substring of the
 * diagnostics.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mem.h"
#include "ir/print.h"
#include "ops/registry.h"
#include "parser/parser.h"
#include "sema/infer.h"
#include "sema/resolve.h"

typedef struct Case {
  const char *params;
  const char *body;
  const char *expect; /* result type (ok) or message substring (bad) */
  bool ok;
} Case;

#define OK(p, b, t) {p, b, t, true}
#define BAD(p, b, m) {p, b, m, false}

static const Case cases[] = {
    /* ---- broadcast family */
    OK("%a: Tensor[(1, 8, 28, 28), float32], %b: Tensor[(8, 1, 1), float32]", "add(%a, %b)",
       "Tensor[(1, 8, 28, 28), float32]"),
    BAD("%a: float32", "add(%a, 1)", "add: operands have different dtypes: float32 and int32"),
    BAD("%a: Tensor[(2, 3), float32], %b: Tensor[(4), float32]", "add(%a, %b)", "incompatible broadcast"),
    OK("%a: Tensor[(?, 3), float32], %b: Tensor[(5, 1), float32]", "subtract(%a, %b)", "Tensor[(5, 3), float32]"),
    BAD("%a: Tensor[(3), float32], %b: Tensor[(2), float32]", "subtract(%a, %b)", "incompatible broadcast"),
    OK("%a: int32, %b: int32", "multiply(%a, %b)", "int32"),
    BAD("%a: int32, %b: (int32,)", "multiply(%a, %b)", "multiply: argument 2 must be a tensor, found (int32,)"),
    OK("%a: int32, %b: int32", "divide(%a, %b)", "int32"),
    BAD("%a: int32, %b: int64", "divide(%a, %b)", "different dtypes"),
    OK("%a: int32, %b: int32", "floor_divide(%a, %b)", "int32"),
    BAD("%a: int32, %b: int16", "floor_divide(%a, %b)", "different dtypes"),
    OK("%a: int32, %b: int32", "trunc_divide(%a, %b)", "int32"),
    BAD("%a: int32, %b: int16", "trunc_divide(%a, %b)", "different dtypes"),
    OK("%a: float32, %b: float32", "mod(%a, %b)", "float32"),
    BAD("%a: float32, %b: float16", "mod(%a, %b)", "different dtypes"),
    OK("%a: float32, %b: float32", "floor_mod(%a, %b)", "float32"),
    BAD("%a: float32, %b: float16", "floor_mod(%a, %b)", "different dtypes"),
    OK("%a: float32, %b: float32", "trunc_mod(%a, %b)", "float32"),
    BAD("%a: float32, %b: float16", "trunc_mod(%a, %b)", "different dtypes"),
    OK("%a: Tensor[(3), float32]", "power(%a, 2f)", "Tensor[(3), float32]"),
    BAD("%a: int32", "power(%a, 2)", "power: argument 1 has dtype int32 but a floating-point dtype is required"),
    OK("%a: float32", "maximum(%a, 1f)", "float32"),
    BAD("%a: float32", "maximum(%a, 1)", "different dtypes"),
    OK("%a: float32", "minimum(%a, 1f)", "float32"),
    BAD("%a: float32", "minimum(%a, 1)", "different dtypes"),
    OK("%a: int32", "left_shift(%a, 1)", "int32"),
    BAD("%a: float32", "left_shift(%a, 1f)", "integer or bool dtype is required"),
    OK("%a: int32", "right_shift(%a, 1)", "int32"),
    BAD("%a: float32", "right_shift(%a, 1f)", "integer or bool dtype is required"),
    OK("%a: bool", "bitwise_and(%a, True)", "bool"),
    BAD("%a: float32", "bitwise_and(%a, 1f)", "integer or bool"),
    OK("%a: int32", "bitwise_or(%a, 1)", "int32"),
    BAD("%a: float32", "bitwise_or(%a, 1f)", "integer or bool"),
    OK("%a: int32", "bitwise_xor(%a, 1)", "int32"),
    BAD("%a: float32", "bitwise_xor(%a, 1f)", "integer or bool"),
    OK("%a: bool", "logical_and(%a, True)", "bool"),
    BAD("%a: int32", "logical_and(%a, 1)", "a bool dtype is required"),
    OK("%a: bool", "logical_or(%a, True)", "bool"),
    BAD("%a: int32", "logical_or(%a, 1)", "a bool dtype is required"),
    OK("%a: bool", "logical_xor(%a, True)", "bool"),
    BAD("%a: int32", "logical_xor(%a, 1)", "a bool dtype is required"),
    OK("%a: Tensor[(2, 1), int64]", "equal(%a, 0i64)", "Tensor[(2, 1), bool]"),
    BAD("%a: int64", "equal(%a, 0)", "equal: operands have different dtypes: int64 and int32"),
    OK("%a: float32", "not_equal(%a, 0f)", "bool"),
    BAD("%a: float32", "not_equal(%a, 0)", "different dtypes"),
    OK("%a: Tensor[(4), int64]", "less(%a, 0i64)", "Tensor[(4), bool]"),
    BAD("%a: Tensor[(4), int64]", "less(%a, 0)", "different dtypes"),
    OK("%a: float32", "less_equal(%a, 0f)", "bool"),
    BAD("%a: float32", "less_equal(%a, 0)", "different dtypes"),
    OK("%a: float32", "greater(%a, 0f)", "bool"),
    BAD("%a: float32", "greater(%a, 0)", "different dtypes"),
    OK("%a: float32", "greater_equal(%a, 0f)", "bool"),
    BAD("%a: float32", "greater_equal(%a, 0)", "different dtypes"),
    /* ---- unary */
    OK("%a: Tensor[(2), int32]", "negative(%a)", "Tensor[(2), int32]"),
    BAD("%a: (int32,)", "negative(%a)", "negative: argument 1 must be a tensor"),
    OK("%a: int8", "abs(%a)", "int8"),
    BAD("%a: (int32,)", "abs(%a)", "must be a tensor"),
    OK("%a: float32", "sign(%a)", "float32"),
    BAD("%a: (int32,)", "sign(%a)", "must be a tensor"),
    OK("%a: float32", "sqrt(%a)", "float32"),
    OK("%a: int32", "sqrt(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "sqrt(%a)", "must be a tensor"),
    OK("%a: float16", "rsqrt(%a)", "float16"),
    OK("%a: int32", "rsqrt(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "rsqrt(%a)", "must be a tensor"),
    OK("%a: float32", "exp(%a)", "float32"),
    OK("%a: int32", "exp(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "exp(%a)", "must be a tensor"),
    OK("%a: float32", "log(%a)", "float32"),
    OK("%a: int32", "log(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "log(%a)", "must be a tensor"),
    OK("%a: float32", "log2(%a)", "float32"),
    OK("%a: int32", "log2(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "log2(%a)", "must be a tensor"),
    OK("%a: float32", "log10(%a)", "float32"),
    OK("%a: int32", "log10(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "log10(%a)", "must be a tensor"),
    OK("%a: float32", "sin(%a)", "float32"),
    OK("%a: int32", "sin(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "sin(%a)", "must be a tensor"),
    OK("%a: float32", "cos(%a)", "float32"),
    OK("%a: int32", "cos(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "cos(%a)", "must be a tensor"),
    OK("%a: float32", "tan(%a)", "float32"),
    OK("%a: int32", "tan(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "tan(%a)", "must be a tensor"),
    OK("%a: float32", "asin(%a)", "float32"),
    OK("%a: int32", "asin(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "asin(%a)", "must be a tensor"),
    OK("%a: float32", "acos(%a)", "float32"),
    OK("%a: int32", "acos(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "acos(%a)", "must be a tensor"),
    OK("%a: float32", "atan(%a)", "float32"),
    OK("%a: int32", "atan(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "atan(%a)", "must be a tensor"),
    OK("%a: float32", "sinh(%a)", "float32"),
    OK("%a: int32", "sinh(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "sinh(%a)", "must be a tensor"),
    OK("%a: float32", "cosh(%a)", "float32"),
    OK("%a: int32", "cosh(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "cosh(%a)", "must be a tensor"),
    OK("%a: float32", "tanh(%a)", "float32"),
    OK("%a: int32", "tanh(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "tanh(%a)", "must be a tensor"),
    OK("%a: float32", "asinh(%a)", "float32"),
    OK("%a: int32", "asinh(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "asinh(%a)", "must be a tensor"),
    OK("%a: float32", "acosh(%a)", "float32"),
    OK("%a: int32", "acosh(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "acosh(%a)", "must be a tensor"),
    OK("%a: float32", "atanh(%a)", "float32"),
    OK("%a: int32", "atanh(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "atanh(%a)", "must be a tensor"),
    OK("%a: float32", "erf(%a)", "float32"),
    OK("%a: int32", "erf(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "erf(%a)", "must be a tensor"),
    OK("%a: float32", "sigmoid(%a)", "float32"),
    OK("%a: int32", "sigmoid(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "sigmoid(%a)", "must be a tensor"),
    OK("%a: int32", "floor(%a)", "int32"),
    BAD("%a: (int32,)", "floor(%a)", "must be a tensor"),
    OK("%a: float32", "ceil(%a)", "float32"),
    BAD("%a: (int32,)", "ceil(%a)", "must be a tensor"),
    OK("%a: float32", "trunc(%a)", "float32"),
    BAD("%a: (int32,)", "trunc(%a)", "must be a tensor"),
    OK("%a: float32", "round(%a)", "float32"),
    BAD("%a: (int32,)", "round(%a)", "must be a tensor"),
    OK("%a: bool", "logical_not(%a)", "bool"),
    BAD("%a: int32", "logical_not(%a)", "a bool dtype is required"),
    OK("%a: int32", "bitwise_not(%a)", "int32"),
    BAD("%a: float32", "bitwise_not(%a)", "integer or bool"),
    OK("%a: Tensor[(3), float32]", "copy(%a)", "Tensor[(3), float32]"),
    BAD("%a: (int32,)", "copy(%a)", "must be a tensor"),
    OK("%a: Tensor[(3), float32]", "zeros_like(%a)", "Tensor[(3), float32]"),
    BAD("%a: (int32,)", "zeros_like(%a)", "must be a tensor"),
    OK("%a: Tensor[(3), float32]", "ones_like(%a)", "Tensor[(3), float32]"),
    BAD("%a: (int32,)", "ones_like(%a)", "must be a tensor"),
    OK("%a: float32", "fast_exp(%a)", "float32"),
    OK("%a: int32", "fast_exp(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "fast_exp(%a)", "must be a tensor"),
    OK("%a: float32", "fast_tanh(%a)", "float32"),
    OK("%a: int32", "fast_tanh(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "fast_tanh(%a)", "must be a tensor"),
    OK("%a: float32", "fast_erf(%a)", "float32"),
    OK("%a: int32", "fast_erf(%a)", "int32"), /* relation Identity: ints type-check, the kernel rejects them */
    BAD("%a: (int32,)", "fast_erf(%a)", "must be a tensor"),
    OK("%a: Tensor[(3), float32]", "isnan(%a)", "Tensor[(3), bool]"),
    BAD("%a: (int32,)", "isnan(%a)", "must be a tensor"),
    OK("%a: Tensor[(3), float32]", "isinf(%a)", "Tensor[(3), bool]"),
    BAD("%a: (int32,)", "isinf(%a)", "must be a tensor"),
    OK("%a: Tensor[(3), int32]", "isfinite(%a)", "Tensor[(3), bool]"),
    BAD("%a: (int32,)", "isfinite(%a)", "must be a tensor"),
    /* ---- activations, clamps, casts */
    OK("%a: Tensor[(1, 2), float32]", "nn.relu(%a)", "Tensor[(1, 2), float32]"),
    BAD("%a: (float32,)", "nn.relu(%a)", "nn.relu: argument 1 must be a tensor"),
    OK("%a: Tensor[(1, 2), float32]", "nn.leaky_relu(%a, alpha=0.1f)", "Tensor[(1, 2), float32]"),
    BAD("%a: (float32,)", "nn.leaky_relu(%a)", "must be a tensor"),
    OK("%a: Tensor[(1, 3, 4), float32], %w", "nn.prelu(%a, %w)", "Tensor[(1, 3, 4), float32]"),
    BAD("%a: Tensor[(1, 3, 4), float32], %w: Tensor[(4), float32]", "nn.prelu(%a, %w)",
        "nn.prelu: argument 2 has type Tensor[(4), float32] but Tensor[(3), float32] is required"),
    OK("%a: float32", "clip(%a, a_min=-inff, a_max=inff)", "float32"),
    BAD("%a: (float32,)", "clip(%a, a_min=2f, a_max=1f)", "clip: argument 1 must be a tensor"),
    OK("%a: Tensor[(2), float32]", "nn.dropout(%a)", "(Tensor[(2), float32], Tensor[(2), float32])"),
    BAD("%a: (float32,)", "nn.dropout(%a)", "nn.dropout: argument 1 must be a tensor"),
    OK("%a: int32", "fixed_point_multiply(%a, multiplier=1, shift=1)", "int32"),
    BAD("%a: (int32,)", "fixed_point_multiply(%a, multiplier=1, shift=1)", "must be a tensor"),
    OK("%a: Tensor[(2), float32]", "cast(%a, dtype=\"int8\")", "Tensor[(2), int8]"),
    BAD("%a: Tensor[(2), float32]", "cast(%a, dtype=\"\")", "cast: the target dtype is not set"),
    OK("%a: Tensor[(2), float32], %b: int64", "cast_like(%a, %b)", "Tensor[(2), int64]"),
    BAD("%a: Tensor[(2), float32], %b: (int64,)", "cast_like(%a, %b)", "must be a tensor"),
    OK("%a: Tensor[(2), float32]", "reinterpret(%a, dtype=\"int32\")", "Tensor[(2), int32]"),
    BAD("%a: Tensor[(2), float32]", "reinterpret(%a, dtype=\"int8\")", "the bit widths differ"),
    /* ---- reductions */
    OK("%a: Tensor[(2, 3, 4), float32]", "sum(%a, axis=[1])", "Tensor[(2, 4), float32]"),
    BAD("%a: Tensor[(2, 3, 4), float32]", "sum(%a, axis=[3])", "sum: axis 3 is out of range for a tensor of rank 3"),
    OK("%a: Tensor[(1, 50, 768), float32]", "mean(%a, axis=[-1], keepdims=True)", "Tensor[(1, 50, 1), float32]"),
    BAD("%a: Tensor[(2, 3), float32]", "mean(%a, axis=[0, 0])", "axis 0 is listed twice"),
    OK("%a: Tensor[(2, 3, 4), float32]", "max(%a, axis=[1], exclude=True)", "Tensor[(3), float32]"),
    BAD("%a: Tensor[(2, 3), float32]", "max(%a, axis=[-3])", "out of range"),
    OK("%a: Tensor[(2, 3), float32]", "min(%a)", "float32"),
    BAD("%a: Tensor[(2, 3), float32]", "min(%a, axis=[5])", "out of range"),
    OK("%a: Tensor[(2, 3), float32]", "prod(%a, axis=[], keepdims=True)", "Tensor[(1, 1), float32]"),
    BAD("%a: Tensor[(2, 3), float32]", "prod(%a, axis=[2])", "out of range"),
    OK("%a: Tensor[(2, 3), bool]", "all(%a, axis=[0])", "Tensor[(3), bool]"),
    BAD("%a: Tensor[(2, 3), bool]", "all(%a, axis=[2])", "out of range"),
    OK("%a: Tensor[(2, 3), bool]", "any(%a, axis=[1])", "Tensor[(2), bool]"),
    BAD("%a: Tensor[(2, 3), bool]", "any(%a, axis=[2])", "out of range"),
    OK("%a: Tensor[(2, 3), float32]", "argmax(%a, axis=[1])", "Tensor[(2), int32]"),
    BAD("%a: float32", "argmax(%a)", "argmax: cannot reduce a rank-0 tensor"),
    OK("%a: Tensor[(2, 3), float32]", "argmin(%a, axis=[0], keepdims=True)", "Tensor[(1, 3), int32]"),
    BAD("%a: float32", "argmin(%a)", "cannot reduce a rank-0 tensor"),
    OK("%a: Tensor[(2, 3), float32], %m: Tensor[(2, 1), float32]", "variance(%a, %m, axis=[1])",
       "Tensor[(2), float32]"),
    BAD("%a: Tensor[(2, 3), float32], %m: Tensor[(2), float32]", "variance(%a, %m, axis=[1])",
        "mean has rank 1 but data has rank 2"),
    /* ---- reshape family */
    OK("%a: Tensor[(1, 2048, 1, 1), float32]", "reshape(%a, newshape=[0, -1])", "Tensor[(1, 2048), float32]"),
    OK("%a: Tensor[(1, 50, 32), float32]", "reshape(%a, newshape=[-1, 32])", "Tensor[(50, 32), float32]"),
    OK("%a: Tensor[(2, 3, 4), float32]", "reshape(%a, newshape=[-4, 1, 2, -2])", "Tensor[(1, 2, 3, 4), float32]"),
    OK("%a: Tensor[(2, 3, 4), float32]", "reshape(%a, newshape=[-3, 4])", "Tensor[(6, 4), float32]"),
    OK("%a: Tensor[(2, 3, 4), float32]", "reshape(%a, newshape=[-4, -1, 2, 3, 4])", "Tensor[(1, 2, 3, 4), float32]"),
    OK("%a: Tensor[(?, 4), float32]", "reshape(%a, newshape=[-1, 2])", "Tensor[(?, 2), float32]"),
    BAD("%a: Tensor[(2, 3), float32]", "reshape(%a, newshape=[4, 2])", "reshape: cannot reshape Tensor[(2, 3), float32] (6 elements)"),
    BAD("%a: Tensor[(2, 3), float32]", "reshape(%a, newshape=[-1, -1])", "only one -1"),
    BAD("%a: Tensor[(2, 3), float32]", "reshape(%a, newshape=[-5])", "invalid value -5 in newshape"),
    OK("%a: Tensor[(2, 3), float32], %b: Tensor[(3, 2), int8]", "reshape_like(%a, %b)", "Tensor[(3, 2), float32]"),
    BAD("%a: Tensor[(2, 3), float32], %b: Tensor[(5), int8]", "reshape_like(%a, %b)", "element counts differ"),
    OK("%a: Tensor[(2, 3), float32]", "expand_dims(%a, axis=0)", "Tensor[(1, 2, 3), float32]"),
    OK("%a: Tensor[(2, 3), float32]", "expand_dims(%a, axis=-1, num_newaxis=2)", "Tensor[(2, 3, 1, 1), float32]"),
    BAD("%a: Tensor[(2, 3), float32]", "expand_dims(%a, axis=4)", "expand_dims: axis 4 is out of range [-3, 2]"),
    OK("%a: Tensor[(1, 3, 1), float32]", "squeeze(%a)", "Tensor[(3), float32]"),
    OK("%a: Tensor[(1, 3, 1), float32]", "squeeze(%a, axis=[2])", "Tensor[(1, 3), float32]"),
    BAD("%a: Tensor[(1, 3, 1), float32]", "squeeze(%a, axis=[1])", "cannot squeeze axis 1 of extent 3"),
    OK("%a: Tensor[(1, 50, 12, 64), float32]", "transpose(%a, axes=[0, 2, 1, 3])", "Tensor[(1, 12, 50, 64), float32]"),
    OK("%a: Tensor[(2, 3, 4), float32]", "transpose(%a, axes=None)", "Tensor[(4, 3, 2), float32]"),
    BAD("%a: Tensor[(2, 3, 4), float32]", "transpose(%a, axes=[0, 0, 1])", "not a permutation"),
    BAD("%a: Tensor[(2, 3, 4), float32]", "transpose(%a, axes=[0, 1])", "axes has 2 entries but the tensor has rank 3"),
    OK("%a: Tensor[(2, 3, 4), float32]", "nn.batch_flatten(%a)", "Tensor[(2, 12), float32]"),
    BAD("%a: float32", "nn.batch_flatten(%a)", "rank at least 1"),
    OK("%a: Tensor[(1, 32, 8, 8), float32]", "layout_transform(%a, src_layout=\"NCHW\", dst_layout=\"NHWC\")",
       "Tensor[(1, 8, 8, 32), float32]"),
    OK("%a: Tensor[(1, 32, 8, 8), float32]", "layout_transform(%a, src_layout=\"NCHW\", dst_layout=\"NCHW16c\")",
       "Tensor[(1, 2, 8, 8, 16), float32]"),
    BAD("%a: Tensor[(1, 32, 8, 8), float32]", "layout_transform(%a, src_layout=\"NCHW\", dst_layout=\"NCDW\")",
        "different primal axes"),
    /* ---- joining, splitting */
    OK("%a: Tensor[(1, 50, 64), float32], %b: Tensor[(2, 50, 64), float32]", "concatenate((%a, %b))",
       "Tensor[(3, 50, 64), float32]"),
    BAD("%a: Tensor[(1, 50), float32], %b: Tensor[(1, 49), float32]", "concatenate((%a, %b))",
        "field 1 has extent 49 at axis 1 but field 0 has 50"),
    BAD("%a: Tensor[(1, 50), float32], %b: Tensor[(1, 50), int32]", "concatenate((%a, %b), axis=1)", "field 1 is"),
    OK("%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32]", "stack((%a, %b), axis=1)", "Tensor[(2, 2, 3), float32]"),
    BAD("%a: Tensor[(2, 3), float32], %b: Tensor[(3, 3), float32]", "stack((%a, %b))", "all fields must have the same type"),
    OK("%a: Tensor[(1, 50, 2304), float32]", "split(%a, indices_or_sections=[768, 1536], axis=2)",
       "(Tensor[(1, 50, 768), float32], Tensor[(1, 50, 768), float32], Tensor[(1, 50, 768), float32])"),
    OK("%a: Tensor[(4, 6), float32]", "(split(%a, indices_or_sections=2, axis=1)).1", "Tensor[(4, 3), float32]"),
    BAD("%a: Tensor[(4, 6), float32]", "split(%a, indices_or_sections=4, axis=1)",
        "axis 1 of extent 6 cannot be split into 4 equal sections"),
    BAD("%a: Tensor[(4, 6), float32]", "split(%a, indices_or_sections=[2, 6], axis=1)", "split index 6 is not below"),
    /* ---- slicing, gathering */
    OK("%a: Tensor[(4, 6), float32]", "strided_slice(%a, begin=[1, 0], end=[3, 6], strides=[1, 2])",
       "Tensor[(2, 3), float32]"),
    OK("%a: Tensor[(4, 6), float32]", "strided_slice(%a, begin=[3], end=[-5], strides=[-1])", "Tensor[(4, 6), float32]"),
    OK("%a: Tensor[(4, 6), float32]", "strided_slice(%a, begin=[1], end=[2], strides=[1], axes=[1])",
       "Tensor[(4, 1), float32]"),
    OK("%a: Tensor[(4, 6), float32]", "strided_slice(%a, begin=[1, 1], end=[-1, 2], strides=[1], slice_mode=\"size\")",
       "Tensor[(3, 2), float32]"),
    BAD("%a: Tensor[(4, 6), float32]", "strided_slice(%a, begin=[3], end=[1], strides=[1])", "begin 3 is after end 1"),
    BAD("%a: Tensor[(4, 6), float32]", "strided_slice(%a, begin=[0], end=[1], strides=[0])", "stride 0"),
    OK("%e: Tensor[(50257, 768), float32], %i: Tensor[(1, 50), int64]", "take(%e, %i, axis=0)",
       "Tensor[(1, 50, 768), float32]"),
    OK("%e: Tensor[(4, 5), float32], %i: Tensor[(3), int32]", "take(%e, %i)", "Tensor[(3), float32]"),
    BAD("%e: Tensor[(4, 5), float32], %i: Tensor[(3), float32]", "take(%e, %i, axis=0)",
        "take: indices must have an integer dtype, found float32"),
    BAD("%e: Tensor[(4, 5), float32], %i: Tensor[(3), int32]", "take(%e, %i, axis=2)", "axis 2 is out of range"),
    OK("%d: Tensor[(4, 5), float32], %i: Tensor[(4, 2), int32]", "gather(%d, %i, axis=1)", "Tensor[(4, 2), float32]"),
    BAD("%d: Tensor[(4, 5), float32], %i: Tensor[(4), int32]", "gather(%d, %i, axis=1)", "indices have rank 1 but data has rank 2"),
    OK("%d: Tensor[(4, 5, 6), float32], %i: Tensor[(2, 3), int32]", "gather_nd(%d, %i)", "Tensor[(3, 6), float32]"),
    BAD("%d: Tensor[(4, 5), float32], %i: Tensor[(3, 7), int32]", "gather_nd(%d, %i)", "indices address 0 + 3 dimensions"),
    OK("%c: Tensor[(1, 1, 50, 50), bool], %x: Tensor[(1, 12, 50, 50), float32]", "where(%c, %x, -10000f)",
       "Tensor[(1, 12, 50, 50), float32]"),
    BAD("%c: bool, %x: Tensor[(3), float32]", "where(%c, %x, 1)", "where: operands have different dtypes: Tensor[(3), float32] and int32"),
    OK("%i: Tensor[(3), int32]", "one_hot(%i, 1f, 0f, depth=5)", "Tensor[(3, 5), float32]"),
    BAD("%i: Tensor[(3), int32]", "one_hot(%i, 1f, 0f, depth=0)", "depth must be positive"),
    OK("%a: Tensor[(4, 6), float32], %b: Tensor[(2, 3), int8]", "slice_like(%a, %b, axes=[1])", "Tensor[(4, 3), float32]"),
    BAD("%a: Tensor[(4, 6), float32], %b: Tensor[(2, 3), int8]", "slice_like(%a, %b, axes=[2])", "axis 2 is out of range"),
    /* ---- broadcasting, tiling */
    OK("%a: Tensor[(3, 1), float32]", "broadcast_to(%a, shape=[2, 3, 4])", "Tensor[(2, 3, 4), float32]"),
    BAD("%a: Tensor[(3, 2), float32]", "broadcast_to(%a, shape=[3, 4])", "incompatible broadcast"),
    OK("%a: Tensor[(3, 1), float32], %b: Tensor[(3, 4), float32]", "broadcast_to_like(%a, %b)", "Tensor[(3, 4), float32]"),
    BAD("%a: Tensor[(3, 2), float32], %b: Tensor[(3, 4), float32]", "broadcast_to_like(%a, %b)", "incompatible broadcast"),
    BAD("%a: Tensor[(3, 1), float32], %b: Tensor[(3, 4), int8]", "broadcast_to_like(%a, %b)",
        "broadcast_to_like: operands have different dtypes"),
    BAD("%a: Tensor[(3, 1), float32], %b: Tensor[(1, 4), float32]", "broadcast_to_like(%a, %b)",
        "broadcast_to_like: cannot broadcast Tensor[(3, 1), float32] to Tensor[(1, 4), float32]"),
    OK("%a: Tensor[(3, 1), float32], %b", "let %r: Tensor[(3, 4), float32] = broadcast_to_like(%a, %b); %b",
       "Tensor[(3, 4), float32]"),
    OK("%a: Tensor[(2, 3), float32]", "tile(%a, reps=[2, 1, 2])", "Tensor[(2, 2, 6), float32]"),
    BAD("%a: Tensor[(2, 3), float32]", "tile(%a, reps=[-1])", "reps must be non-negative"),
    OK("%a: Tensor[(2, 3), float32]", "repeat(%a, repeats=3, axis=1)", "Tensor[(2, 9), float32]"),
    BAD("%a: Tensor[(2, 3), float32]", "repeat(%a, repeats=3, axis=2)", "axis 2 is out of range"),
    OK("%a: Tensor[(2, 3), float32]", "reverse(%a, axis=1)", "Tensor[(2, 3), float32]"),
    BAD("%a: Tensor[(2, 3), float32]", "reverse(%a, axis=2)", "out of range"),
    OK("%a: Tensor[(2, 3), int32]", "cumsum(%a)", "Tensor[(6), int32]"),
    BAD("%a: Tensor[(2, 3), int32]", "cumsum(%a, axis=2)", "out of range"),
    OK("%a: Tensor[(2, 3), int32]", "cumprod(%a, axis=0, dtype=\"int64\")", "Tensor[(2, 3), int64]"),
    BAD("%a: Tensor[(2, 3), int32]", "cumprod(%a, axis=-3)", "out of range"),
    /* ---- creation */
    OK("", "zeros(shape=[2, 3], dtype=\"float32\")", "Tensor[(2, 3), float32]"),
    BAD("", "zeros(shape=[2, 3])", "zeros: dtype is not set"),
    OK("", "ones(shape=[4], dtype=\"int8\")", "Tensor[(4), int8]"),
    BAD("", "ones(shape=[-2], dtype=\"int8\")", "invalid extent -2"),
    OK("", "full(1f, shape=[10, 10])", "Tensor[(10, 10), float32]"),
    BAD("%v: Tensor[(2), float32]", "full(%v, shape=[10, 10])", "full: fill_value must be a scalar"),
    OK("%a: Tensor[(2, 3), int32]", "full_like(%a, 7)", "Tensor[(2, 3), int32]"),
    BAD("%a: Tensor[(2, 3), int32], %v: Tensor[(2), int32]", "full_like(%a, %v)", "fill_value must be a scalar"),
    OK("", "arange(0f, 10f, 2f, start=0f, stop=10f, step=2f, dtype=\"float32\")", "Tensor[(5), float32]"),
    OK("%n: int32", "arange(0, %n, 1, dtype=\"int32\")", "Tensor[(?), int32]"),
    BAD("", "arange(0, 10, 1, dtype=\"float32\")", "arange: argument 1 has type int32 but float32 is required"),
    OK("%a: Tensor[(2, 3), float32]", "shape_of(%a)", "Tensor[(2), int32]"),
    OK("%a: float32", "shape_of(%a, dtype=\"int64\")", "int64"),
    BAD("%a: (float32,)", "shape_of(%a)", "must be a tensor"),
    OK("%a: Tensor[(2, 3), float32]", "ndarray_size(%a)", "int32"),
    BAD("%a: (float32,)", "ndarray_size(%a)", "must be a tensor"),
    /* ---- dense algebra */
    OK("%x: Tensor[(1, 50, 768), float32], %w: Tensor[(2304, 768), float32]", "nn.dense(%x, %w, units=None)",
       "Tensor[(1, 50, 2304), float32]"),
    OK("%x: Tensor[(1, 784), float32], %w", "(nn.dense(%x, %w, units=128), %w)",
       "(Tensor[(1, 128), float32], Tensor[(128, 784), float32])"),
    BAD("%x: Tensor[(1, 784), float32], %w: Tensor[(10, 700), float32]", "nn.dense(%x, %w, units=None)",
        "nn.dense: data has 784 input features but weight expects 700"),
    BAD("%x: Tensor[(1, 784), float32], %w: Tensor[(10, 784), float32]", "nn.dense(%x, %w, units=128)",
        "nn.dense: argument 2 has type Tensor[(10, 784), float32] but Tensor[(128, 784), float32] is required"),
    OK("%a: Tensor[(5, 3), float32], %b: Tensor[(3, 7), float32]", "nn.matmul(%a, %b, units=None)", "Tensor[(5, 7), float32]"),
    BAD("%a: Tensor[(5, 3), float32], %b: Tensor[(4, 7), float32]", "nn.matmul(%a, %b, units=None)", "input features"),
    OK("%q: Tensor[(600, 32, 64), float32], %k: Tensor[(600, 32, 64), float32]",
       "nn.batch_matmul(%q, %k, out_dtype=\"float32\", transpose_b=True)", "Tensor[(600, 32, 32), float32]"),
    OK("%q: Tensor[(1, 4, 5), float32], %k: Tensor[(6, 5, 2), float32]", "nn.batch_matmul(%q, %k)",
       "Tensor[(6, 4, 2), float32]"),
    BAD("%q: Tensor[(2, 4, 5), float32], %k: Tensor[(2, 4, 5), float32]", "nn.batch_matmul(%q, %k)",
        "the reduction dimensions differ"),
    BAD("%q: Tensor[(2, 4, 5), float32], %k: Tensor[(3, 5, 5), float32]", "nn.batch_matmul(%q, %k)",
        "batch dimensions 2 and 3 differ"),
    OK("%x: Tensor[(1, 10), float32], %b", "(nn.bias_add(%x, %b, axis=-1), %b)",
       "(Tensor[(1, 10), float32], Tensor[(10), float32])"),
    BAD("%x: Tensor[(1, 10), float32], %b: Tensor[(1), float32]", "nn.bias_add(%x, %b, axis=-1)", "nn.bias_add: argument 2"),
    BAD("%x: Tensor[(1, 10), float32], %b", "nn.bias_add(%x, %b, axis=2)", "axis 2 is out of range"),
    /* ---- convolution */
    OK("%x: Tensor[(1, 3, 224, 224), float32], %w: Tensor[(64, 3, 7, 7), float32]",
       "nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3], channels=64, kernel_size=[7, 7])",
       "Tensor[(1, 64, 112, 112), float32]"),
    OK("%x: Tensor[(1, 32, 112, 112), float32], %w: Tensor[(32, 1, 3, 3), float32]",
       "nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=32, channels=32, kernel_size=[3, 3])",
       "Tensor[(1, 32, 112, 112), float32]"),
    OK("%x: Tensor[(1, 256, 56, 56), float32], %w: Tensor[(256, 8, 3, 3), float32]",
       "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=32)", "Tensor[(1, 256, 28, 28), float32]"),
    OK("%x: Tensor[(1, 8, 8, 3), float32], %w: Tensor[(3, 3, 3, 16), float32]",
       "nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\")", "Tensor[(1, 8, 8, 16), float32]"),
    OK("%x: Tensor[(1, 3, 32, 32), float32], %w", "(nn.conv2d(%x, %w, channels=8, kernel_size=[3, 3]), %w)",
       "(Tensor[(1, 8, 30, 30), float32], Tensor[(8, 3, 3, 3), float32])"),
    OK("%x: Tensor[(1, 4, 10, 10), float32], %w: Tensor[(4, 2, 3, 3), float32]", "nn.conv2d(%x, %w, groups=4)",
       "Tensor[(1, 8, 8, 8), float32]"),
    BAD("%x: Tensor[(1, 3, 32, 32), float32], %w: Tensor[(8, 4, 3, 3), float32]", "nn.conv2d(%x, %w)",
        "nn.conv2d: data has 3 channels but weight expects 4 (groups=1)"),
    BAD("%x: Tensor[(1, 3, 32, 32), float32], %w: Tensor[(8, 3, 3, 3), float32]", "nn.conv2d(%x, %w, kernel_size=[5, 5])",
        "kernel_size (5, 5) does not match the weight's kernel (3, 3)"),
    BAD("%x: Tensor[(1, 3, 32, 32), float32], %w: Tensor[(8, 3, 3, 3), float32]", "nn.conv2d(%x, %w, padding=[1, 1, 1])",
        "padding must have 1, 2 or 4 values, got 3"),
    BAD("%x: Tensor[(1, 3, 2, 2), float32], %w: Tensor[(8, 3, 3, 3), float32]", "nn.conv2d(%x, %w)",
        "larger than the padded input"),
    BAD("%x: Tensor[(1, 3, 32, 32), float32], %w: Tensor[(8, 3, 3, 3), float32]", "nn.conv2d(%x, %w, data_layout=\"NCHW4c\")",
        "data must have rank 5 (layout NCHW4c)"),
    /* relayc's fused convolutions (transform/conv_epilogue.c): float32 NCHW/OIHW, (O) bias, residual */
    OK("%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b",
       "(relayc.conv2d_bias(%x, %w, %b, padding=[1, 1], relu=True), %b)",
       "(Tensor[(1, 4, 8, 8), float32], Tensor[(4), float32])"),
    BAD("%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(3), float32]",
        "relayc.conv2d_bias(%x, %w, %b)", "relayc.conv2d_bias"),
    BAD("%x: Tensor[(1, 3, 8, 8), float64], %w: Tensor[(4, 3, 3, 3), float64], %b: Tensor[(4), float64]",
        "relayc.conv2d_bias(%x, %w, %b)", "computes float32 only"),
    OK("%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %r",
       "(relayc.conv2d_add(%x, %w, %r), %r)", "(Tensor[(1, 4, 6, 6), float32], Tensor[(1, 4, 6, 6), float32])"),
    BAD("%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %r: Tensor[(1, 4, 8, 8), float32]",
        "relayc.conv2d_add(%x, %w, %r)", "relayc.conv2d_add"),
    OK("%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 1, 1), float32], %b: Tensor[(4), float32], %r",
       "relayc.conv2d_bias_add(%x, %w, %b, %r)", "Tensor[(1, 4, 8, 8), float32]"),
    BAD("%x: Tensor[(1, 8, 8, 3), float32], %w: Tensor[(1, 1, 3, 4), float32], %b: Tensor[(4), float32], %r",
        "relayc.conv2d_bias_add(%x, %w, %b, %r, data_layout=\"NHWC\", kernel_layout=\"HWIO\")", "needs data_layout \"NCHW\""),
    OK("%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]", "relayc.conv2d_relu(%x, %w, strides=[2, 2])",
       "Tensor[(1, 4, 3, 3), float32]"),
    BAD("%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 2, 3, 3), float32]", "relayc.conv2d_relu(%x, %w)",
        "data has 3 channels but weight expects 2"),
    BAD("%x: Tensor[(1, 3, 32, 32), float32], %w: Tensor[(8, 3, 3, 3), float32]", "nn.conv2d(%x, %w, data_layout=\"NCDW\")",
        "unsupported data_layout"),
    OK("%x: Tensor[(1, 2, 8, 8, 4), float32], %w: Tensor[(16, 8, 3, 3), float32]", "nn.conv2d(%x, %w, data_layout=\"NCHW4c\")",
       "Tensor[(1, 4, 6, 6, 4), float32]"),
    OK("%x: Tensor[(1, 3, 32), float32], %w: Tensor[(8, 3, 5), float32]", "nn.conv1d(%x, %w, padding=[2, 2])",
       "Tensor[(1, 8, 32), float32]"),
    BAD("%x: Tensor[(1, 3, 32), float32], %w: Tensor[(8, 2, 5), float32]", "nn.conv1d(%x, %w)",
        "data has 3 channels but weight expects 2 (groups=1)"),
    OK("%x: Tensor[(1, 3, 8, 8, 8), float32], %w: Tensor[(4, 3, 3, 3, 3), float32]", "nn.conv3d(%x, %w, padding=[1])",
       "Tensor[(1, 4, 8, 8, 8), float32]"),
    BAD("%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3, 3), float32]", "nn.conv3d(%x, %w)",
        "data must have rank 5"),
    OK("%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(8, 3, 2, 2), float32]", "nn.conv2d_transpose(%x, %w, strides=[2, 2])",
       "Tensor[(1, 3, 8, 8), float32]"),
    BAD("%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(6, 3, 2, 2), float32]", "nn.conv2d_transpose(%x, %w)",
        "data has 8 channels but weight expects 6"),
    /* channels must be what the weight gives (TVM assigns the weight's type from it): TVM's
     * depthwise weight (C, M, k...) makes C·M outputs, a transposed weight (C, O/G, k...) G·O/G
     * (issue 12: both were accepted with any channels, and the gradient was ill-typed) */
    OK("%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(3, 2, 3, 3), float32]",
       "nn.conv2d(%x, %w, groups=3, channels=6, kernel_size=[3, 3])", "Tensor[(1, 6, 3, 3), float32]"),
    BAD("%x: Tensor[(1, 6, 5, 4), float32], %w: Tensor[(6, 2, 3, 3), float32]",
        "nn.conv2d(%x, %w, padding=[1, 1], groups=6, channels=6, kernel_size=[3, 3])",
        "channels=6 but the weight gives 12 output channels"),
    OK("%x: Tensor[(1, 6, 4, 4), float32], %w: Tensor[(6, 2, 3, 3), float32]",
       "nn.conv2d_transpose(%x, %w, groups=3, channels=6, kernel_size=[3, 3])", "Tensor[(1, 6, 6, 6), float32]"),
    BAD("%x: Tensor[(1, 6, 5, 4), float32], %w: Tensor[(6, 2, 3, 3), float32]",
        "nn.conv2d_transpose(%x, %w, padding=[1, 1], groups=6, channels=6, kernel_size=[3, 3])",
        "channels=6 but the weight gives 2 output channels per group (groups=6)"),
    /* ---- pooling */
    OK("%x: Tensor[(1, 64, 112, 112), float32]", "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])",
       "Tensor[(1, 64, 56, 56), float32]"),
    OK("%x: Tensor[(1, 1, 7, 7), float32]", "nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2], ceil_mode=True)",
       "Tensor[(1, 1, 4, 4), float32]"),
    BAD("%x: Tensor[(1, 1, 2, 2), float32]", "nn.max_pool2d(%x, pool_size=[3, 3])", "pooling window (3) is larger"),
    OK("%x: Tensor[(1, 8, 8, 3), float32]", "nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], layout=\"NHWC\")",
       "Tensor[(1, 4, 4, 3), float32]"),
    BAD("%x: Tensor[(1, 8, 8), float32]", "nn.avg_pool2d(%x, pool_size=[2, 2])", "layout \"NCHW\" has 4 axes but the input has rank 3"),
    OK("%x: Tensor[(1, 2048, 7, 7), float32]", "nn.global_avg_pool2d(%x)", "Tensor[(1, 2048, 1, 1), float32]"),
    BAD("%x: Tensor[(1, 2048, 7), float32]", "nn.global_avg_pool2d(%x)", "has 4 axes but the input has rank 3"),
    OK("%x: Tensor[(1, 16, 7, 7), float32]", "nn.global_max_pool2d(%x)", "Tensor[(1, 16, 1, 1), float32]"),
    BAD("%x: (float32,)", "nn.global_max_pool2d(%x)", "must be a tensor"),
    OK("%x: Tensor[(1, 16, 9, 9), float32]", "nn.adaptive_avg_pool2d(%x, output_size=[3])", "Tensor[(1, 16, 3, 3), float32]"),
    BAD("%x: Tensor[(1, 16, 9, 9), float32]", "nn.adaptive_avg_pool2d(%x, output_size=[1, 2, 3])", "output_size must have 1 or 2 values"),
    OK("%x: Tensor[(1, 16, 9, 9), float32]", "nn.adaptive_max_pool2d(%x)", "Tensor[(1, 16, 9, 9), float32]"),
    BAD("%x: Tensor[(1, 16, 9, 9), float32]", "nn.adaptive_max_pool2d(%x, output_size=[0])", "must be positive"),
    OK("%x: Tensor[(1, 4, 10), float32]", "nn.max_pool1d(%x, pool_size=[2], strides=[2])", "Tensor[(1, 4, 5), float32]"),
    BAD("%x: Tensor[(1, 4, 1), float32]", "nn.max_pool1d(%x, pool_size=[2])", "larger than the padded input"),
    OK("%x: Tensor[(1, 4, 10), float32]", "nn.avg_pool1d(%x, pool_size=[3], padding=[1])", "Tensor[(1, 4, 10), float32]"),
    BAD("%x: Tensor[(1, 4, 10), float32]", "nn.avg_pool1d(%x, pool_size=[3], strides=[0])", "must be positive"),
    OK("%x: Tensor[(1, 4, 4, 4, 4), float32]", "nn.max_pool3d(%x, pool_size=[2, 2, 2], strides=[2, 2, 2])",
       "Tensor[(1, 4, 2, 2, 2), float32]"),
    BAD("%x: Tensor[(1, 4, 4, 4), float32]", "nn.max_pool3d(%x, pool_size=[2, 2, 2])", "rank 4"),
    OK("%x: Tensor[(1, 4, 4, 4, 4), float32]", "nn.avg_pool3d(%x, pool_size=[3, 3, 3], padding=[1, 1, 1])",
       "Tensor[(1, 4, 4, 4, 4), float32]"),
    BAD("%x: Tensor[(1, 4, 4, 4, 4), float32]", "nn.avg_pool3d(%x, pool_size=[3, 3])", "pool_size must have 1 or 3 values"),
    /* split channel layouts pool in place; split spatial axes are rejected */
    OK("%x: Tensor[(1, 4, 56, 56, 16), float32]",
       "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout=\"NCHW16c\")",
       "Tensor[(1, 4, 28, 28, 16), float32]"),
    OK("%x: Tensor[(1, 128, 7, 7, 16), float32]", "nn.global_avg_pool2d(%x, layout=\"NCHW16c\")",
       "Tensor[(1, 128, 1, 1, 16), float32]"),
    OK("%x: Tensor[(1, 2, 9, 9, 4), float32]", "nn.adaptive_avg_pool2d(%x, output_size=[3], layout=\"NCHW4c\")",
       "Tensor[(1, 2, 3, 3, 4), float32]"),
    BAD("%x: Tensor[(1, 4, 56, 56), float32]", "nn.max_pool2d(%x, pool_size=[3, 3], layout=\"NCHW16c\")",
        "has 5 axes but the input has rank 4"),
    BAD("%x: Tensor[(1, 4, 8, 2, 4), float32]", "nn.max_pool2d(%x, pool_size=[2, 2], layout=\"NCHW4w\")",
        "splits the spatial axis W"),
    BAD("%x: Tensor[(1, 4, 8, 2, 4), float32]", "nn.global_max_pool2d(%x, layout=\"NCHW4w\")", "splits the spatial axis W"),
    OK("%x: Tensor[(1, 4, 10), float32]", "nn.global_avg_pool1d(%x)", "Tensor[(1, 4, 1), float32]"),
    BAD("%x: Tensor[(1, 4), float32]", "nn.global_avg_pool1d(%x)", "rank 2"),
    OK("%x: Tensor[(1, 4, 10), float32]", "nn.global_max_pool1d(%x)", "Tensor[(1, 4, 1), float32]"),
    BAD("%x: Tensor[(1, 4), float32]", "nn.global_max_pool1d(%x)", "rank 2"),
    OK("%x: Tensor[(1, 4, 3, 3, 3), float32]", "nn.global_avg_pool3d(%x)", "Tensor[(1, 4, 1, 1, 1), float32]"),
    BAD("%x: Tensor[(1, 4), float32]", "nn.global_avg_pool3d(%x)", "rank 2"),
    OK("%x: Tensor[(1, 4, 3, 3, 3), float32]", "nn.global_max_pool3d(%x)", "Tensor[(1, 4, 1, 1, 1), float32]"),
    BAD("%x: Tensor[(1, 4), float32]", "nn.global_max_pool3d(%x)", "rank 2"),
    OK("%x: Tensor[(1, 4, 10), float32]", "nn.adaptive_avg_pool1d(%x, output_size=[5])", "Tensor[(1, 4, 5), float32]"),
    BAD("%x: Tensor[(1, 4), float32]", "nn.adaptive_avg_pool1d(%x, output_size=[5])", "rank 2"),
    OK("%x: Tensor[(1, 4, 10), float32]", "nn.adaptive_max_pool1d(%x, output_size=[2])", "Tensor[(1, 4, 2), float32]"),
    BAD("%x: Tensor[(1, 4), float32]", "nn.adaptive_max_pool1d(%x)", "rank 2"),
    OK("%x: Tensor[(1, 4, 6, 6, 6), float32]", "nn.adaptive_avg_pool3d(%x, output_size=[2])", "Tensor[(1, 4, 2, 2, 2), float32]"),
    BAD("%x: Tensor[(1, 4), float32]", "nn.adaptive_avg_pool3d(%x)", "rank 2"),
    OK("%x: Tensor[(1, 4, 6, 6, 6), float32]", "nn.adaptive_max_pool3d(%x, output_size=[1, 2, 3])", "Tensor[(1, 4, 1, 2, 3), float32]"),
    BAD("%x: Tensor[(1, 4), float32]", "nn.adaptive_max_pool3d(%x)", "rank 2"),
    /* ---- normalisation, softmax */
    OK("%x: Tensor[(1, 64, 56, 56), float32], %g, %b, %m, %v", "((nn.batch_norm(%x, %g, %b, %m, %v)).0, %v)",
       "(Tensor[(1, 64, 56, 56), float32], Tensor[(64), float32])"),
    OK("%x: Tensor[(1, 64, 56, 56), float32], %g, %b, %m, %v", "nn.batch_norm(%x, %g, %b, %m, %v)",
       "(Tensor[(1, 64, 56, 56), float32], Tensor[(64), float32], Tensor[(64), float32])"),
    OK("%a: Tensor[(4, 3), float64], %b: Tensor[(4, 3), float64], %s: float64", "relayc.add_scaled(%a, %b, %s)",
       "Tensor[(4, 3), float64]"),
    BAD("%a: Tensor[(4, 3), float32], %b: Tensor[(4, 3), float32], %s: float64", "relayc.add_scaled(%a, %b, %s)",
        "relayc.add_scaled: operands have different dtypes"),
    BAD("%a: Tensor[(4, 3), int32], %b: Tensor[(4, 3), int32], %s: int32", "relayc.add_scaled(%a, %b, %s)",
        "relayc.add_scaled: float32 or float64 operands are required"),
    OK("%x: Tensor[(1, 64, 56, 56), float32], %g, %b, %m, %v", "(relayc.batch_norm_relu(%x, %g, %b, %m, %v)).0",
       "Tensor[(1, 64, 56, 56), float32]"),
    BAD("%x: Tensor[(1, 64, 56, 56), float32], %g: Tensor[(32), float32], %b, %m, %v", "relayc.batch_norm_relu(%x, %g, %b, %m, %v)",
        "relayc.batch_norm_relu"),
    BAD("%x: Tensor[(1, 64, 56, 56), float32], %g: Tensor[(32), float32], %b, %m, %v", "nn.batch_norm(%x, %g, %b, %m, %v)",
        "nn.batch_norm: argument 2 has type Tensor[(32), float32] but Tensor[(64), float32] is required"),
    OK("%x: Tensor[(2, 5), float32], %g, %b", "nn.layer_norm(%x, %g, %b)", "Tensor[(2, 5), float32]"),
    BAD("%x: Tensor[(2, 5), float32], %g: Tensor[(2), float32], %b", "nn.layer_norm(%x, %g, %b)", "argument 2"),
    OK("%x: Tensor[(2, 5, 3), float32], %g, %b", "nn.instance_norm(%x, %g, %b)", "Tensor[(2, 5, 3), float32]"),
    BAD("%x: Tensor[(2, 5, 3), float32], %g, %b", "nn.instance_norm(%x, %g, %b, axis=3)", "axis 3 is out of range"),
    OK("%x: Tensor[(2, 6, 3), float32], %g, %b", "nn.group_norm(%x, %g, %b, num_groups=3)", "Tensor[(2, 6, 3), float32]"),
    BAD("%x: Tensor[(2, 6, 3), float32], %g, %b", "nn.group_norm(%x, %g, %b, num_groups=4)",
        "6 channels cannot be split into num_groups=4 groups"),
    OK("%x: Tensor[(2, 6), float32]", "nn.l2_normalize(%x, eps=1e-05f, axis=[1])", "Tensor[(2, 6), float32]"),
    BAD("%x: Tensor[(2, 6), float32]", "nn.l2_normalize(%x, eps=1e-05f, axis=[2])", "out of range"),
    OK("%x: Tensor[(1, 6, 4, 4), float32]", "nn.lrn(%x)", "Tensor[(1, 6, 4, 4), float32]"),
    BAD("%x: Tensor[(1, 6), float32]", "nn.lrn(%x, axis=3)", "out of range"),
    OK("%x: Tensor[(1, 12, 50, 50), float32]", "nn.softmax(%x, axis=3)", "Tensor[(1, 12, 50, 50), float32]"),
    BAD("%x: Tensor[(1, 12), float32]", "nn.softmax(%x, axis=2)", "nn.softmax: axis 2 is out of range"),
    OK("%x: Tensor[(1, 12), float32]", "nn.log_softmax(%x)", "Tensor[(1, 12), float32]"),
    BAD("%x: Tensor[(1, 12), float32]", "nn.log_softmax(%x, axis=-3)", "out of range"),
    OK("%x: Tensor[(1, 12), float32]", "nn.fast_softmax(%x)", "Tensor[(1, 12), float32]"),
    BAD("%x: float32", "nn.fast_softmax(%x)", "out of range"),
    /* ---- padding, resizing, sorting */
    OK("%x: Tensor[(1, 1, 28, 28), float32]", "nn.pad(%x, 0f, pad_width=[[0, 0], [0, 0], [2, 2], [2, 2]])",
       "Tensor[(1, 1, 32, 32), float32]"),
    BAD("%x: Tensor[(1, 1, 28, 28), float32]", "nn.pad(%x, 0f, pad_width=[[0, 0], [2, 2]])",
        "nn.pad: pad_width has 2 entries but the input has rank 4"),
    BAD("%x: Tensor[(4), float32], %v: Tensor[(1), float32]", "nn.pad(%x, %v, pad_width=[[1, 1]])", "pad_value must be a scalar"),
    OK("%x: Tensor[(3, 3), float32]", "nn.mirror_pad(%x, pad_width=[[1, 1], [0, 2]])", "Tensor[(5, 5), float32]"),
    BAD("%x: Tensor[(3, 3), float32]", "nn.mirror_pad(%x, pad_width=[[1, 1], [0, -2]])", "negative padding"),
    OK("%x: Tensor[(1, 3, 8, 8), float32]", "image.resize2d(%x, size=[16, 12])", "Tensor[(1, 3, 16, 12), float32]"),
    BAD("%x: Tensor[(1, 3, 8, 8), float32]", "image.resize2d(%x, size=[16])", "size must have 2 values"),
    OK("%x: Tensor[(1, 3, 5, 8), float32]", "nn.upsampling(%x, scale_h=2f, scale_w=0.5f)", "Tensor[(1, 3, 10, 4), float32]"),
    BAD("%x: Tensor[(1, 3, 5), float32]", "nn.upsampling(%x, scale_h=2f, scale_w=2f)", "does not fit the input"),
    OK("%x: Tensor[(2, 5), float32]", "argsort(%x)", "Tensor[(2, 5), int32]"),
    BAD("%x: Tensor[(2, 5), float32]", "argsort(%x, axis=2)", "out of range"),
    OK("%x: Tensor[(2, 5), float32]", "sort(%x)", "Tensor[(2, 5), float32]"),
    BAD("%x: (float32,)", "sort(%x)", "must be a tensor"),
    OK("%x: Tensor[(2, 5), float32]", "topk(%x, k=3)", "(Tensor[(2, 3), float32], Tensor[(2, 3), int32])"),
    OK("%x: Tensor[(2, 5), float32]", "topk(%x, k=2, axis=0, ret_type=\"values\")", "Tensor[(2, 5), float32]"),
    BAD("%x: Tensor[(2, 5), float32]", "topk(%x, k=2, ret_type=\"all\")", "unknown ret_type \"all\""),
    /* ---- operators the passes and gradient rules emit (spec/passes.md 11, spec/gradient.md 5) */
    OK("%x: Tensor[(2, 3, 4), float32], %y: Tensor[(3, 1), float32]", "collapse_sum_like(%x, %y)",
       "Tensor[(3, 1), float32]"),
    OK("%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]", "collapse_sum_like(%x, %y)", "Tensor[(2, 3), float32]"),
    OK("%x: Tensor[(?, 3), float32], %y: Tensor[(3), float32]", "collapse_sum_like(%x, %y)", "Tensor[(3), float32]"),
    BAD("%x: Tensor[(2, 3), float32], %y: Tensor[(4), float32]", "collapse_sum_like(%x, %y)",
        "collapse_sum_like: cannot collapse Tensor[(2, 3), float32] to Tensor[(4), float32]: extent 4 does not broadcast to 3"),
    BAD("%x: Tensor[(3), float32], %y: Tensor[(2, 3), float32]", "collapse_sum_like(%x, %y)", "the target has a higher rank"),
    BAD("%x: Tensor[(2, 3), float32], %y: Tensor[(3), float16]", "collapse_sum_like(%x, %y)", "the dtypes must agree"),
    OK("%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), int32]", "collapse_sum_to(%x, %s, shape=[3, 1])",
       "Tensor[(3, 1), float32]"),
    BAD("%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), int32]", "collapse_sum_to(%x, %s, shape=[2, 1])",
        "extent 2 does not broadcast to 3"),
    BAD("%x: Tensor[(2, 3, 4), float32], %s: Tensor[(3), int32]", "collapse_sum_to(%x, %s, shape=[3, 1])",
        "the shape attribute has 2 entries but the shape input has 3"),
    BAD("%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), float32]", "collapse_sum_to(%x, %s, shape=[3, 1])",
        "the shape input must be an integer tensor"),
    BAD("%x: Tensor[(2, 3, 4), float32], %s: Tensor[(?), int32]", "collapse_sum_to(%x, %s, shape=[3, 1])",
        "rank-1 tensor of static extent"),
    OK("%x: Tensor[(10, 5, 4), float32]", "contrib_reverse_reshape(%x, newshape=[-1, 0])", "Tensor[(50, 4), float32]"),
    OK("%x: Tensor[(10, 5, 4), float32]", "reshape(%x, newshape=[-1, 0])", "Tensor[(40, 5), float32]"),
    OK("%x: Tensor[(2, 3, 4), float32]", "contrib_reverse_reshape(%x, newshape=[4, 0, 2])", "Tensor[(4, 3, 2), float32]"),
    OK("%x: Tensor[(2, 3, 4), float32]", "contrib_reverse_reshape(%x, newshape=[-3, 4])", "Tensor[(6, 4), float32]"),
    BAD("%x: Tensor[(2, 3, 4), float32]", "contrib_reverse_reshape(%x, newshape=[-4, 1, 2, -2])",
        "contrib_reverse_reshape: newshape entry -4 is not supported in reverse"),
    BAD("%x: Tensor[(2, 3, 4), float32]", "contrib_reverse_reshape(%x, newshape=[5, -1])", "cannot reshape"),
    OK("%x: Tensor[(4, 5), float32], %y: Tensor[(4, 5), float32]", "nn.cross_entropy(%x, %y)", "float32"),
    BAD("%x: Tensor[(20), float32], %y: Tensor[(20), float32]", "nn.cross_entropy(%x, %y)",
        "nn.cross_entropy: both inputs must have rank 2"),
    BAD("%x: Tensor[(4, 5), float32], %y: Tensor[(4, 6), float32]", "nn.cross_entropy(%x, %y)", "the same shape"),
    OK("%x: Tensor[(4, 5), float64], %y: Tensor[(4, 5), float64]", "nn.cross_entropy_with_logits(%x, %y)", "float64"),
    BAD("%x: Tensor[(4, 5), float32], %y: Tensor[(4, 5), float64]", "nn.cross_entropy_with_logits(%x, %y)",
        "the same dtype"),
    OK("%x: Tensor[(2), float32]", "on_device(%x, constrain_result=True)", "Tensor[(2), float32]"),
    OK("%x: Tensor[(2), float32]", "on_device((%x, 1))", "(Tensor[(2), float32], int32)"),
    BAD("%x", "on_device(%x)", "cannot infer type: the input types of on_device are not known here"),
    OK("%x: Tensor[(2), int8]", "device_copy(%x)", "Tensor[(2), int8]"),
    BAD("%x", "device_copy(%x)", "cannot infer type"),
    OK("%x: Tensor[(2), float32]", "annotation.stop_fusion(%x)", "Tensor[(2), float32]"),
    BAD("%x", "annotation.stop_fusion(%x)", "cannot infer type"),
    OK("%x: Tensor[(2), float32]", "annotation.checkpoint((%x, %x))", "(Tensor[(2), float32], Tensor[(2), float32])"),
    BAD("%x", "annotation.checkpoint(%x)", "cannot infer type"),
    OK("%g: Tensor[(2, 8, 32, 32), float32], %x: Tensor[(2, 4, 32, 32), float32]",
       "nn.conv2d_backward_weight(%g, %x, padding=[1, 1, 1, 1], kernel_size=[3, 3], kernel_layout=\"NCHW\", out_layout=\"OIHW\")",
       "Tensor[(8, 4, 3, 3), float32]"),
    OK("%g: Tensor[(1, 16, 32, 32), float32], %x: Tensor[(1, 16, 32, 32), float32]",
       "nn.conv2d_backward_weight(%g, %x, padding=[1, 1, 1, 1], groups=16, channels=16, kernel_size=[3, 3])",
       "Tensor[(16, 1, 3, 3), float32]"),
    OK("%g: Tensor[(2, 15, 15, 16), float32], %x: Tensor[(2, 32, 32, 3), float32]",
       "nn.conv2d_backward_weight(%g, %x, strides=[2, 2], kernel_size=[3, 3], data_layout=\"NHWC\", kernel_layout=\"NHWC\", out_layout=\"HWIO\", out_dtype=\"float64\")",
       "Tensor[(3, 3, 3, 16), float64]"),
    BAD("%g: Tensor[(2, 8, 32, 32), float32], %x: Tensor[(2, 4, 32, 32), float32]",
        "nn.conv2d_backward_weight(%g, %x, padding=[1, 1, 1, 1])", "nn.conv2d_backward_weight: kernel_size must be set"),
    BAD("%g: Tensor[(2, 8, 30, 30), float32], %x: Tensor[(2, 4, 32, 32), float32]",
        "nn.conv2d_backward_weight(%g, %x, padding=[1, 1, 1, 1], kernel_size=[3, 3])",
        "grad has extent 30 on spatial axis 0 but the convolution of data gives 32"),
    BAD("%g: Tensor[(1, 16, 32, 32), float32], %x: Tensor[(1, 16, 32, 32), float32]",
        "nn.conv2d_backward_weight(%g, %x, padding=[1, 1, 1, 1], groups=16, kernel_size=[3, 3])",
        "channels must be set for a depthwise convolution"),
    BAD("%g: Tensor[(3, 8, 32, 32), float32], %x: Tensor[(2, 4, 32, 32), float32]",
        "nn.conv2d_backward_weight(%g, %x, padding=[1, 1, 1, 1], kernel_size=[3, 3])", "grad has batch 3 but data has 2"),
    OK("%g: Tensor[(1, 2, 4, 4), float32], %x: Tensor[(1, 2, 8, 8), float32]",
       "nn.max_pool2d_grad(%g, %x, pool_size=[3, 3], strides=[2, 2], dilation=[], padding=[1, 1, 1, 1])",
       "Tensor[(1, 2, 8, 8), float32]"),
    BAD("%g: Tensor[(1, 2, 3, 3), float32], %x: Tensor[(1, 2, 8, 8), float32]",
        "nn.max_pool2d_grad(%g, %x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])",
        "nn.max_pool2d_grad: out_grad is Tensor[(1, 2, 3, 3), float32] but pooling Tensor[(1, 2, 8, 8), float32] gives Tensor[(1, 2, 4, 4), float32]"),
    OK("%g: Tensor[(1, 3, 3, 2), float16], %x: Tensor[(1, 7, 7, 2), float16]",
       "nn.avg_pool2d_grad(%g, %x, pool_size=[3, 3], strides=[2, 2], layout=\"NHWC\", ceil_mode=True)",
       "Tensor[(1, 7, 7, 2), float16]"),
    BAD("%g: Tensor[(1, 2, 4, 4), float32], %x: Tensor[(1, 2, 8, 8), float32]",
        "nn.avg_pool2d_grad(%g, %x, pool_size=[2, 2], strides=[2, 2], dilation=[1, 1, 1])", "dilation must have 1 or 2 values"),
    BAD("%g: Tensor[(1, 2, 4, 4), float16], %x: Tensor[(1, 2, 8, 8), float32]",
        "nn.avg_pool2d_grad(%g, %x, pool_size=[2, 2], strides=[2, 2])", "out_grad is Tensor[(1, 2, 4, 4), float16]"),
    /* ---- relayc's gradient(F) (spec/gradient.md 1.10): typed here, expanded by the driver */
    OK("%x: float32", "gradient(fn (%a: float32, %b: Tensor[(2), float32]) -> float32 { %a })",
       "fn (float32, Tensor[(2), float32]) -> (float32, (float32, Tensor[(2), float32]))"),
    BAD("%x: float32", "gradient(%x)", "gradient: the argument must be a function, found float32"),
    OK("%x: Tensor[(3, 4, 16), float32], %v: Tensor[(3, 1, 2), float32], %b: Tensor[(3), int32], %e: Tensor[(3), int32], %s: Tensor[(3), int32]",
       "strided_set(%x, %v, %b, %e, %s)", "Tensor[(3, 4, 16), float32]"),
    BAD("%x: Tensor[(3, 4), float32], %v: Tensor[(3, 1), float64], %b: Tensor[(2), int32], %e: Tensor[(2), int32], %s: Tensor[(2), int32]",
        "strided_set(%x, %v, %b, %e, %s)", "strided_set: v is Tensor[(3, 1), float64] but data is Tensor[(3, 4), float32]"),
    BAD("%x: Tensor[(3, 4), float32], %v: Tensor[(3, 1), float32], %b: Tensor[(2), float32], %e: Tensor[(2), int32], %s: Tensor[(2), int32]",
        "strided_set(%x, %v, %b, %e, %s)", "begin must be an integer vector"),
    OK("%x: Tensor[(2, 7, 3), float64], %i: Tensor[(2, 5), int64], %u: Tensor[(5, 3), float64]",
       "scatter_nd(%x, %i, %u, mode=\"add\")", "Tensor[(2, 7, 3), float64]"),
    OK("%x: Tensor[(1, 1, 10), float32], %i: Tensor[(2, 1, 1, 1), int64], %u: Tensor[(1, 1, 1, 10), float32]",
       "scatter_nd(%x, %i, %u)", "Tensor[(1, 1, 10), float32]"),
    BAD("%x: Tensor[(2, 7, 3), float64], %i: Tensor[(2, 5), int64], %u: Tensor[(5, 4), float64]", "scatter_nd(%x, %i, %u)",
        "scatter_nd: updates Tensor[(5, 4), float64] do not fit indices Tensor[(2, 5), int64] and data Tensor[(2, 7, 3), float64]"),
    BAD("%x: Tensor[(2, 7), float32], %i: Tensor[(3, 5), int64], %u: Tensor[(5), float32]", "scatter_nd(%x, %i, %u)",
        "indices address 3 axes but data has rank 2"),
    BAD("%x: Tensor[(2, 7), float32], %i: Tensor[(2, 5), float32], %u: Tensor[(5), float32]", "scatter_nd(%x, %i, %u)",
        "indices must have an integer dtype"),
    BAD("%x: Tensor[(2, 7), float32], %i: Tensor[(2, 5), int32], %u: Tensor[(5), float32]",
        "scatter_nd(%x, %i, %u, mode=\"mean\")", "unknown mode \"mean\""),
    OK("%x: Tensor[(4, 5), float32], %i: Tensor[(2, 5), int64], %u: Tensor[(2, 5), float32]",
       "scatter_elements(%x, %i, %u, reduction=\"add\")", "Tensor[(4, 5), float32]"),
    BAD("%x: Tensor[(4, 5), float32], %i: Tensor[(2, 5), int64], %u: Tensor[(2, 4), float32]",
        "scatter_elements(%x, %i, %u, axis=1)", "scatter_elements: indices Tensor[(2, 5), int64] and updates Tensor[(2, 4), float32]"),
    BAD("%x: Tensor[(4, 5), float32], %i: Tensor[(2, 5), int64], %u: Tensor[(2, 5), float32]",
        "scatter_elements(%x, %i, %u, axis=2)", "axis 2 is out of range for rank 2"),
    BAD("%x: Tensor[(4, 5), float32], %i: Tensor[(2, 5), int64], %u: Tensor[(2, 5), float32]",
        "scatter_elements(%x, %i, %u, reduction=\"sum\")", "unknown reduction \"sum\""),
    OK("%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), int64]", "dyn.reshape(%x, %s)", "Tensor[(?, ?), float32]"),
    BAD("%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), float32]", "dyn.reshape(%x, %s)",
        "dyn.reshape: newshape must be an integer vector of static length, found Tensor[(2), float32]"),
    OK("%x: Tensor[(1, 3, 1), float32], %a: Tensor[(2), int32]", "dyn.squeeze(%x, %a)", "Tensor[(?), float32]"),
    BAD("%x: Tensor[(1, 3), float32], %a: Tensor[(4), int32]", "dyn.squeeze(%x, %a)", "4 axes to squeeze but the input has rank 2"),
    OK("%x: Tensor[(2, 3), float32], %a: int32", "dyn.expand_dims(%x, %a, num_newaxis=2)", "Tensor[(?, ?, ?, ?), float32]"),
    BAD("%x: Tensor[(2, 3), float32], %a: Tensor[(1), int32]", "dyn.expand_dims(%x, %a)", "axis must be an integer scalar"),
    OK("%x: Tensor[(2, 3), float32], %r: Tensor[(3), int32]", "dyn.tile(%x, %r)", "Tensor[(?, ?, ?), float32]"),
    BAD("%x: Tensor[(2, 3), float32], %r: Tensor[(?), int32]", "dyn.tile(%x, %r)", "reps must be an integer vector of static length"),
    OK("%x: Tensor[(3), float32], %s: Tensor[(2), int64]", "dyn.broadcast_to(%x, %s)", "Tensor[(?, ?), float32]"),
    BAD("%x: Tensor[(2, 3), float32], %s: Tensor[(1), int64]", "dyn.broadcast_to(%x, %s)", "cannot broadcast Tensor[(2, 3), float32] to rank 1"),
    OK("%s: Tensor[(3), int64]", "dyn.zeros(%s, dtype=\"float16\")", "Tensor[(?, ?, ?), float16]"),
    BAD("%s: Tensor[(3), int64]", "dyn.zeros(%s)", "dyn.zeros: dtype is not set"),
    OK("%s: Tensor[(1), int32]", "dyn.ones(%s, dtype=\"int8\")", "Tensor[(?), int8]"),
    BAD("%s: Tensor[(2, 2), int32]", "dyn.ones(%s, dtype=\"int8\")", "shape must be an integer vector"),
    OK("%f: float32, %s: Tensor[(2), int32]", "dyn.full(%f, %s)", "Tensor[(?, ?), float32]"),
    BAD("%f: Tensor[(2), float32], %s: Tensor[(2), int32]", "dyn.full(%f, %s)", "fill_value must be a scalar"),
    OK("%i: Tensor[(3), int32], %on: float32, %off: float32, %d: int32", "dyn.one_hot(%i, %on, %off, %d)",
       "Tensor[(3, ?), float32]"),
    BAD("%i: Tensor[(3), int32], %on: float32, %off: float32, %d: float32", "dyn.one_hot(%i, %on, %off, %d)",
        "depth must be an integer scalar"),
    OK("%x: Tensor[(2, 5), float32], %k: int32", "dyn.topk(%x, %k)", "(Tensor[(2, ?), float32], Tensor[(2, ?), int32])"),
    BAD("%x: Tensor[(2, 5), float32], %k: int32", "dyn.topk(%x, %k, ret_type=\"all\")", "unknown ret_type \"all\""),
    OK("%x: Tensor[(4, 5, 6), float32], %b: Tensor[(2), int32], %e: Tensor[(2), int32], %s: Tensor[(2), int32]",
       "dyn.strided_slice(%x, %b, %e, %s)", "Tensor[(?, ?, 6), float32]"),
    BAD("%x: Tensor[(4, 5, 6), float32], %b: Tensor[(2), int32], %e: Tensor[(3), int32], %s: Tensor[(2), int32]",
        "dyn.strided_slice(%x, %b, %e, %s)", "begin, end and strides must have the same length"),
    OK("%x: Tensor[(2, 3), float32], %p: Tensor[(2, 2), int64], %v: float32", "dyn.nn.pad(%x, %p, %v)", "Tensor[(?, ?), float32]"),
    BAD("%x: Tensor[(2, 3), float32], %p: Tensor[(3, 2), int64], %v: float32", "dyn.nn.pad(%x, %p, %v)",
        "pad_width must be an integer matrix of shape (2, 2)"),
    OK("%x: Tensor[(1, 3, 4, 4), float32], %a: float64, %b: float64", "dyn.nn.upsampling(%x, %a, %b)",
       "Tensor[(1, 3, ?, ?), float32]"),
    BAD("%x: Tensor[(1, 3, 4, 4), float32], %a: Tensor[(1), float64], %b: float64", "dyn.nn.upsampling(%x, %a, %b)",
        "a scale must be a numeric scalar"),
    OK("%x: Tensor[(1, 2, 3, 4, 4), float32], %a: float32, %b: float32, %c: float32", "dyn.nn.upsampling3d(%x, %a, %b, %c)",
       "Tensor[(1, 2, ?, ?, ?), float32]"),
    BAD("%x: Tensor[(1, 2, 3, 4, 4), float32], %a: float32, %b: float32, %c: float32",
        "dyn.nn.upsampling3d(%x, %a, %b, %c, layout=\"NCHW\")", "layout \"NCHW\" does not fit"),
    OK("%x: Tensor[(1, 3, 8, 8), float32], %s: Tensor[(2), int32], %r: Tensor[(4), float32]", "dyn.image.resize2d(%x, %s, %r)",
       "Tensor[(1, 3, ?, ?), float32]"),
    BAD("%x: Tensor[(1, 3, 8, 8), float32], %s: Tensor[(3), int32], %r: Tensor[(4), float32]", "dyn.image.resize2d(%x, %s, %r)",
        "size must have 2 values"),
    OK("%i: Tensor[(3, 2), int32], %v: Tensor[(3), float32], %d: float32, %s: Tensor[(2), int64]",
       "dyn.sparse_to_dense(%i, %v, %d, %s)", "Tensor[(?, ?), float32]"),
    BAD("%i: Tensor[(3, 2), int32], %v: Tensor[(3), float32], %d: Tensor[(1), float32], %s: Tensor[(2), int64]",
        "dyn.sparse_to_dense(%i, %v, %d, %s)", "default_value must be a scalar"),
    OK("%x: Tensor[(2, 3), int8], %s: Tensor[(3), float32], %z: Tensor[(3), int32]",
       "qnn.dequantize(%x, %s, %z, axis=1)", "Tensor[(2, 3), float32]"),
    OK("%x: Tensor[(2, 3), uint8]", "qnn.dequantize(%x, 0.5f, 3, out_dtype=\"float16\")", "Tensor[(2, 3), float16]"),
    BAD("%x: Tensor[(2, 3), float32]", "qnn.dequantize(%x, 0.5f, 0)", "must be an int8, uint8 or int32 tensor"),
    BAD("%x: Tensor[(2, 3), int8], %s: Tensor[(2), float32]", "qnn.dequantize(%x, %s, 0, axis=1)",
        "the scale must be a float32 scalar or a vector along axis 1"),
    OK("%x: Tensor[(1, 2, 3, 4, 4), float32]", "nn.upsampling3d(%x, scale_d=2f, scale_h=1.5f, scale_w=0.5f)",
       "Tensor[(1, 2, 6, 6, 2), float32]"),
    BAD("%x: Tensor[(1, 2, 3, 4, 4), float32]", "nn.upsampling3d(%x, scale_d=2f, scale_h=2f, scale_w=2f, method=\"bilinear\")",
        "unknown method \"bilinear\""),
    OK("%i: Tensor[(3, 2), int32], %v: Tensor[(3), float32], %d: float32", "sparse_to_dense(%i, %v, %d, output_shape=[3, 4])",
       "Tensor[(3, 4), float32]"),
    BAD("%i: Tensor[(3, 2), int32], %v: Tensor[(4), float32], %d: float32", "sparse_to_dense(%i, %v, %d, output_shape=[3, 4])",
        "values for Tensor[(3, 2), int32] indices"),
    /* ---- solver behaviour */
    OK("%x", "let %y = add(%x, %x); let %z: Tensor[(3), float32] = %x; %y", "Tensor[(3), float32]"),
    BAD("%x", "add(%x, %x)", "cannot infer type: the input types of add are not known here"),
    /* Identity-style relations run backwards too (TVM's Identity unifies input and output) */
    OK("%t0: Tensor[(10, 20), float32], %t1",
       "let %t2: Tensor[(10, 1, 1), float32] = negative(%t1); %t0 + %t1", "Tensor[(10, 10, 20), float32]"),
    OK("%x", "let %y: Tensor[(2, 3), float32] = clip(nn.relu(%x), a_min=0f, a_max=1f); %x", "Tensor[(2, 3), float32]"),
    OK("%x", "let %y: Tensor[(2), int8] = bitwise_not(%x); %x", "Tensor[(2), int8]"),
    BAD("%x", "let %y: Tensor[(2), float32] = bitwise_not(%x); %x",
        "bitwise_not: argument 1 has dtype float32 but an integer or bool dtype is required"),
    BAD("%x", "let %y: (float32, float32) = negative(%x); %x", "negative: the result must be a tensor, found (float32, float32)"),
    /* ... but not the relations TVM solves forwards only */
    BAD("%x", "let %y: Tensor[(2), float32] = nn.softmax(%x); %x", "cannot infer type: the input types of nn.softmax"),
    BAD("%x", "let %y: Tensor[(2), bool] = isnan(%x); %x", "cannot infer type: the input types of isnan"),
    BAD("%x", "let %y: Tensor[(2), float32] = sort(%x); %x", "cannot infer type: the input types of sort"),
    BAD("%a: Tensor[(2), float32], %b", "let %y: Tensor[(2), float32] = add(%a, %b); %b",
        "cannot infer type: the input types of add"),
    OK("", "let %f = fn (%a) { nn.relu(%a) }; %f(1f)", "float32"),
    OK("%x: Tensor[(?, 3), float32], %y: Tensor[(7, 3), float32]", "add(%x, %y)", "Tensor[(7, 3), float32]"),
    OK("%x: Tensor[(?, 3), float32]", "let %y: Tensor[(5, 3), float32] = %x; nn.relu(%y)", "Tensor[(5, 3), float32]"),
    BAD("%x: Tensor[(2), float32]", "%x + 1f + 2", "different dtypes: Tensor[(2), float32] and int32"),
};

static char *run_case(const Case *k, char **result, bool *front_ok) {
  char text[4096];
  snprintf(text, sizeof text, "#[version = \"0.0.5\"]\ndef @main(%s) {\n  %s\n}\n", k->params, k->body);
  size_t n = strlen(text);
  char *copy = mem_malloc(n + 1);
  memcpy(copy, text, n + 1);
  Source *src = source_new("t.relay", copy, n);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  Diag d;
  diag_init(&d, f, src);
  Module *m = parse_module(src, &d);
  if (d.nerrors == 0) resolve_module(m, &d);
  bool parsed = d.nerrors == 0;
  if (parsed) infer_module(m, &d);
  fclose(f);
  *result = NULL;
  if (parsed && d.nerrors == 0) {
    char *t = NULL;
    size_t tl = 0;
    FILE *g = open_memstream(&t, &tl);
    print_type(g, m->defs[0]->fn->type->func.ret);
    fclose(g);
    *result = t;
  }
  *front_ok = parsed;
  module_free(m);
  source_free(src);
  return out;
}

START_TEST(relation_case) {
  const Case *k = &cases[_i];
  char *res;
  bool front_ok;
  char *out = run_case(k, &res, &front_ok);
  ck_assert_msg(front_ok, "case %d `%s`: parse/resolve failed:\n%s", _i, k->body, out);
  if (k->ok) {
    ck_assert_msg(res != NULL, "case %d `%s`: expected %s, got errors:\n%s", _i, k->body, k->expect, out);
    ck_assert_msg(strcmp(res, k->expect) == 0, "case %d `%s`: expected %s, got %s", _i, k->body, k->expect, res);
  } else {
    ck_assert_msg(res == NULL, "case %d `%s`: expected an error, got %s", _i, k->body, res ? res : "");
    ck_assert_msg(strstr(out, k->expect) != NULL,
                  "case %d `%s`: missing '%s' in:\n%s", _i, k->body, k->expect, out);
  }
  free(res);
  free(out);
}
END_TEST

/* Every built-in operator has a relation and appears in an accepting and a
 * rejecting case above. */
START_TEST(every_op_covered) {
  for (uint32_t id = 0; id < op_builtin_count(); id++) {
    const OpDef *op = op_get((int32_t)id);
    ck_assert_msg(op->relation != NULL, "%s has no relation", op->name);
    char pat[64];
    snprintf(pat, sizeof pat, "%s(", op->name);
    bool ok = false, bad = false;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      const char *p = strstr(cases[i].body, pat);
      if (!p || (p > cases[i].body && (p[-1] == '_' || p[-1] == '.' || (p[-1] >= 'a' && p[-1] <= 'z')))) continue;
      if (cases[i].ok) ok = true;
      else bad = true;
    }
    ck_assert_msg(ok && bad, "%s lacks an %s case", op->name, ok ? "rejecting" : "accepting");
  }
}
END_TEST

int main(void) {
  stack_guard_init(8u << 20);
  Suite *s = suite_create("relations");
  TCase *tc = tcase_create("ops");
  tcase_add_loop_test(tc, relation_case, 0, (int)(sizeof cases / sizeof cases[0]));
  tcase_add_test(tc, every_op_covered);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
