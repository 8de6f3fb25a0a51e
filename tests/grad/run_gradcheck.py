#!/usr/bin/env python3
"""Every operator's gradient rule against central differences in float64 (relayc --check-grad).

Each case is a small @main around one operator call with the attributes under test
(broadcasting, axes, keepdims, exclude, strides, padding, dilation, groups, ceil_mode, ...).
The result is squared elementwise before the check sums it, so the operator sees a
non-uniform adjoint (2y) rather than the all-ones seed a rule could ignore. Inputs are drawn
by numpy from a per-case domain (away from kinks, poles and ties), saved as .npy and passed
with --input; index inputs are given explicitly. relayc must exit 0 (every element within
atol 1e-5 + rtol 1e-3 of the float64 numeric gradient); float32 cases check the analytic side
in float32 against the float64 numeric side.

    python3 tests/grad/run_gradcheck.py [--relayc build/relayc] [-k SUBSTRING] [-j N] [-v] [--mode M]

Every case runs in both modes (higher_order and first_order: the bodies are graph-form
dataflow, which first-order mode accepts) unless --mode picks one.

Prints `gradcheck: N passed, N failed` and exits 1 if anything failed. A case whose rule emits
an operator this build does not register is reported as skipped, not failed.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:  # the pyenv python on PATH may lack numpy; Debian's has it
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("gradcheck: numpy not available, skipped")
    sys.exit(0)


def T(shape, dtype="float64"):
    dims = ", ".join(str(d) for d in shape)
    if len(shape) == 1:
        dims += ","
    return f"Tensor[({dims}), {dtype}]" if shape else dtype


class P:
    """A parameter: name, shape, dtype, and how to draw it."""

    def __init__(self, name, shape, dtype="float64", lo=-1.0, hi=1.0, away=0.0, value=None, dyn=()):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype
        self.lo, self.hi, self.away, self.value = lo, hi, away, value
        self.dyn = tuple(dyn)  # axes typed `?` in the signature (the value keeps its extents)

    def type_text(self):
        return T(tuple("?" if k in self.dyn else d for k, d in enumerate(self.shape)), self.dtype)

    def draw(self, rng):
        if self.value is not None:
            return np.asarray(self.value, dtype=self.dtype).reshape(self.shape)
        x = rng.uniform(self.lo, self.hi, size=self.shape)
        if self.away:  # keep |x| >= away (kinks at 0)
            x = np.sign(x) * (self.away + np.abs(x) * (1 - self.away / max(abs(self.lo), abs(self.hi))))
            x[x == 0] = self.away
        return x.astype(self.dtype)


CASES = []


def case(name, params, body, ret=None, square=True, opts=()):
    """body: a Relay expression over the parameters; the result is squared (unless
    square=False, for a body that is already a scalar or tuple-consuming expression)."""
    CASES.append((name, params, body, ret, square, tuple(opts), False))


def case2(name, params, body, opts=()):
    """A second-order case: @f is the case's program (body, squared and summed), @main is
    sum over the float parameters p of gradient(@f)(...)'s d/dp times p, so --check-grad
    differentiates the expanded first gradient (rules applied to what rules emitted) against
    central differences of the first derivative. Higher-order mode only (the expanded
    gradient holds refs and closures, which first-order mode refuses)."""
    CASES.append((name, params, body, None, True, tuple(opts), True))


def x(shape=(3, 4), **kw):
    return P("x", shape, **kw)


def y(shape=(3, 4), **kw):
    return P("y", shape, **kw)


# ---- unary math --------------------------------------------------------------------------
for op, dom in [("negative", {}), ("copy", {}), ("exp", {}), ("log", dict(lo=0.2, hi=2)),
                ("log2", dict(lo=0.2, hi=2)), ("log10", dict(lo=0.2, hi=2)), ("sqrt", dict(lo=0.2, hi=2)),
                ("rsqrt", dict(lo=0.2, hi=2)), ("sigmoid", {}), ("tanh", {}), ("sin", {}), ("cos", {}),
                ("tan", {}), ("sinh", {}), ("cosh", {}), ("asin", dict(lo=-0.8, hi=0.8)),
                ("acos", dict(lo=-0.8, hi=0.8)), ("atan", {}), ("asinh", {}), ("acosh", dict(lo=1.2, hi=3)),
                ("atanh", dict(lo=-0.8, hi=0.8)), ("erf", {}), ("abs", dict(away=0.1)),
                ("nn.relu", dict(away=0.1))]:
    case(f"unary_{op}", [x(**dom)], f"{op}(%x)")
    case(f"unary_{op}_f32", [x(dtype="float32", **dom)], f"{op}(%x)")
for op in ["fast_exp", "fast_tanh", "fast_erf"]:  # the exact derivative of the exact function
    case(f"unary_{op}", [x(lo=-0.5, hi=0.5, dtype="float32")], f"{op}(%x)", opts=["--rtol=0.01", "--atol=1e-4"])
case("clip", [x(lo=-1, hi=1)], "clip(%x, a_min=-0.55f, a_max=0.45f)")
case("leaky_relu", [x(away=0.1)], "nn.leaky_relu(%x, alpha=0.1f)")
case("prelu", [x((2, 3, 4), away=0.1), P("a", (3,))], "nn.prelu(%x, %a)")
case("prelu_axis3", [x((2, 3, 4, 5), away=0.1), P("a", (5,))], "nn.prelu(%x, %a, axis=3)")
case("dropout", [x()], "%0 = nn.dropout(%x, rate=0.25f); %0.0")
case("cast_f32", [x()], 'cast(%x, dtype="float32")')
case("cast_like", [x(), P("z", (2,), dtype="float32")], "cast_like(%x, %z)")
case("zeros_ones_like", [x()], "add(multiply(%x, ones_like(%x)), zeros_like(%x))")
case("rounding_zero", [x(lo=0.1, hi=0.9)], "multiply(%x, add(add(floor(%x), ceil(%x)), add(round(%x), add(trunc(%x), sign(%x)))))")
case("annotations", [x()], "annotation.checkpoint(annotation.stop_fusion(%x))")

# ---- binary, broadcasting ----------------------------------------------------------------
B1, B2 = (3, 1, 4), (2, 4)
case("add_bcast", [x(B1), y(B2)], "add(%x, %y)")
case("subtract_bcast", [x(B1), y(B2)], "subtract(%x, %y)")
case("multiply_bcast", [x(B1), y(B2)], "multiply(%x, %y)")
case("divide_bcast", [x(B1), y(B2, lo=0.5, hi=2)], "divide(%x, %y)")
case("add_scalar", [x(), P("s", ())], "add(%x, %s)")
case("power", [x(B1, lo=0.3, hi=2), y(B2)], "power(%x, %y)")
case("power_zero_exp", [x(lo=0.3, hi=2)], "power(%x, 0f64)")
case("maximum", [x(B1), y(B2)], "maximum(%x, %y)")
case("minimum", [x(B1), y(B2)], "minimum(%x, %y)")
case("mod", [x(lo=2.1, hi=2.9), y(lo=1.1, hi=1.4)], "mod(%x, %y)")
case("trunc_mod", [x(lo=2.1, hi=2.9), y(lo=1.1, hi=1.4)], "trunc_mod(%x, %y)")
case("floor_mod", [x(lo=-2.9, hi=-2.1), y(lo=1.1, hi=1.4)], "floor_mod(%x, %y)")
case("floor_divide_zero", [x(lo=2.1, hi=2.9), y(lo=1.1, hi=1.4)], "multiply(%x, floor_divide(%x, %y))")
case("where", [P("c", (3, 1), dtype="bool", value=[True, False, True]), x((3, 4)), y((4,))], "where(%c, %x, %y)")
case("comparisons_zero", [x(), y()],
     'multiply(%x, cast(logical_and(less(%x, %y), not_equal(%x, %y)), dtype="float64"))')

# ---- reductions --------------------------------------------------------------------------
R = (2, 3, 4)
for op in ["sum", "mean", "max", "min", "prod"]:
    for attrs in ["", "axis=[1]", "axis=[-1], keepdims=True", "axis=[0, 2]", "axis=[1], exclude=True",
                  "axis=[0, 2], keepdims=True, exclude=True"]:
        tag = attrs.replace("axis=", "a").replace(", ", "_").replace("keepdims=True", "k").replace(
            "exclude=True", "e").replace("[", "").replace("]", "").replace("-", "m") or "all"
        dom = dict(lo=0.5, hi=1.5) if op == "prod" else {}
        case(f"{op}_{tag}", [x(R, **dom)], f"{op}(%x{', ' + attrs if attrs else ''})")
case("prod_with_zero", [x((2, 3), value=[[0.5, 0.0, 2.0], [1.5, -0.7, 0.0]])], "prod(%x, axis=[1])")
case("variance", [x(R)], "variance(%x, mean(%x, axis=[1], keepdims=True), axis=[1])")
case("variance_unbiased_keep", [x(R)], "variance(%x, mean(%x, axis=[0, 2], keepdims=True), axis=[0, 2], keepdims=True, unbiased=True)")
case("variance_free_mean", [x(R), P("m", (2, 1, 4))], "variance(%x, %m, axis=[1])")

# ---- shape -------------------------------------------------------------------------------
case("reshape", [x((2, 6))], "reshape(%x, newshape=[3, -1])")
case("reshape_like", [x((2, 6)), P("l", (4, 3))], "reshape_like(%x, %l)")
case("expand_dims", [x((2, 3))], "expand_dims(%x, axis=1, num_newaxis=2)")
case("squeeze", [x((2, 1, 3, 1))], "squeeze(%x, axis=[1])")
case("transpose", [x((2, 3, 4))], "transpose(%x, axes=[1, -1, 0])")
case("transpose_none", [x((2, 3, 4))], "transpose(%x)")
case("batch_flatten", [x((2, 3, 4))], "nn.batch_flatten(%x)")
case("layout_nhwc", [x((1, 4, 2, 3))], 'layout_transform(%x, src_layout="NCHW", dst_layout="NHWC")')
case("layout_split", [x((1, 8, 2, 3))], 'layout_transform(%x, src_layout="NCHW", dst_layout="NCHW4c")')
case("reverse_reshape", [x((10, 5, 4))], "contrib_reverse_reshape(%x, newshape=[-1, 0])")
case("concatenate", [P("a", (2, 2, 5)), P("b", (2, 1, 5)), P("d", (2, 4, 5))], "concatenate((%a, %b, %d), axis=1)")
case("concatenate_neg_axis", [P("a", (2, 3)), P("b", (2, 2))], "concatenate((%a, %b), axis=-1)")
case("stack", [P("a", (2, 3)), P("b", (2, 3))], "stack((%a, %b), axis=1)")
case("split_sections", [x((6, 2))],
     "%0 = split(%x, indices_or_sections=3); add(sum(multiply(%0.0, %0.0)), sum(multiply(%0.2, %0.1)))", square=False)
case("split_indices", [x((2, 7))],
     "%0 = split(%x, indices_or_sections=[2, 5], axis=1); add(sum(multiply(%0.0, %0.0)), sum(exp(%0.2)))", square=False)
for tag, attrs, shp in [("basic", "begin=[1, 0], end=[3, 3]", (4, 5)),
                        ("strides", "begin=[0, 1], end=[4, 5], strides=[2, 2]", (4, 5)),
                        ("negative_stride", "begin=[3, 4], end=[0, 0], strides=[-1, -2]", (4, 5)),
                        ("axes", "begin=[1], end=[4], strides=[2], axes=[1]", (4, 5)),
                        ("size_mode", 'begin=[1, 2], end=[2, -1], slice_mode="size"', (4, 5)),
                        ("tvm_level4", "begin=[1, 0, 1], end=[3, 2, 3], strides=[1, 1, 1]", (3, 4, 4)),
                        ("partial_rank", "begin=[1], end=[3]", (4, 5))]:
    case(f"strided_slice_{tag}", [x(shp)], f"strided_slice(%x, {attrs})")
case("slice_like", [x((4, 5)), P("l", (2, 3))], "slice_like(%x, %l)")
case("slice_like_axes", [x((4, 5)), P("l", (2, 3))], "slice_like(%x, %l, axes=[1])")
case("broadcast_to", [x((3, 1))], "broadcast_to(%x, shape=[2, 3, 4])")
case("broadcast_to_like", [x((1, 4)), P("l", (3, 4))], "broadcast_to_like(%x, %l)")
case("collapse_sum_like", [x((2, 3, 4)), P("l", (3, 1))], "collapse_sum_like(%x, %l)")
case("collapse_sum_to", [x((2, 3, 4)), P("s", (2,), dtype="int32", value=[3, 1])], "collapse_sum_to(%x, %s, shape=[3, 1])")
case("tile", [x((2, 3))], "tile(%x, reps=[2, 1, 3])")
case("tile_short_reps", [x((2, 3, 2))], "tile(%x, reps=[2])")
case("repeat", [x((2, 3))], "repeat(%x, repeats=3, axis=1)")
case("repeat_axis0", [x((2, 3))], "repeat(%x, repeats=2, axis=0)")
case("reverse", [x((3, 4))], "reverse(%x, axis=1)")
case("cumsum", [x((3, 4))], "cumsum(%x, axis=1)")
case("cumsum_exclusive", [x((3, 4))], "cumsum(%x, axis=0, exclusive=True)")
case("cumsum_flat", [x((3, 4))], "cumsum(%x)")
case("cumprod", [x((3, 4), lo=0.5, hi=1.5)], "cumprod(%x, axis=1)")
case("cumprod_zeros", [x((2, 4), value=[0.5, 0.0, 2.0, 1.5, 0.0, -1.2, 0.0, 0.7])], "cumprod(%x, axis=1)")
case("cumprod_exclusive_axis0", [x((4, 3), lo=0.5, hi=1.5)], "cumprod(%x, axis=0, exclusive=True)")
case("cumprod_flat", [x((2, 3), lo=0.5, hi=1.5)], "cumprod(%x)")
case("full", [P("v", ())], 'full(%v, shape=[2, 3], dtype="float64")')
case("full_like", [x((2, 3)), P("v", ())], "full_like(%x, %v)")
case("one_hot", [P("i", (3,), dtype="int32", value=[0, 2, 1]), P("on", ()), P("off", ())],
     "one_hot(%i, %on, %off, depth=4, axis=-1, dtype=\"float64\")")
case("arange", [P("a", (), lo=0.1, hi=0.2), P("b", (), value=3.55), P("s", (), lo=0.5, hi=0.6)],
     'arange(%a, %b, %s, dtype="float64")')

# ---- gathering ---------------------------------------------------------------------------
case("take_axis1", [x((3, 4)), P("i", (2, 3), dtype="int32", value=[0, 3, 3, 1, 0, 2])], "take(%x, %i, axis=1)")
case("take_flat", [x((3, 4)), P("i", (5,), dtype="int32", value=[0, 11, 5, 5, 7])], "take(%x, %i)")
case("take_wrap", [x((3, 4)), P("i", (4,), dtype="int32", value=[-1, 5, 2, -4])], 'take(%x, %i, axis=0, mode="wrap")')
case("take_clip", [x((3, 4)), P("i", (4,), dtype="int32", value=[-1, 5, 2, 7])], 'take(%x, %i, axis=1, mode="clip")')
case("take_fast_oob", [x((3, 4)), P("i", (4,), dtype="int32", value=[-2, 5, 1, 1])], 'take(%x, %i, axis=1, mode="fast")')
# batch_dims: the first batch_dims axes of data and indices pair up (duplicates accumulate)
case("take_batch1_axis1", [x((2, 4, 3)), P("i", (2, 5), dtype="int32", value=[0, 3, 3, 1, 0, 2, 2, 1, 3, 0])],
     "take(%x, %i, axis=1, batch_dims=1)")
case("take_batch1_axis2", [x((2, 3, 4, 2)), P("i", (2, 3), dtype="int64", value=[3, 0, 3, 1, 1, 2])],
     "take(%x, %i, axis=2, batch_dims=1)")
case("take_batch2_wrap", [x((2, 3, 4)), P("i", (2, 3, 2), dtype="int32", value=[-1, 4, 0, 0, 2, 7, 1, 1, -3, 2, 5, 3])],
     'take(%x, %i, axis=2, batch_dims=2, mode="wrap")')
case("take_batch_neg_clip", [x((2, 3, 4)), P("i", (2, 2, 2), dtype="int32", value=[-1, 9, 0, 0, 2, 3, 1, 1])],
     'take(%x, %i, axis=-1, batch_dims=-2, mode="clip")')
# indices of unknown extent (TVM's test_take_grad types them Tensor[(?), int32]): the rule must
# not need their shape; duplicates, pre/post axes, batch_dims, wrap
case("take_dyn_axis1", [x((3, 4, 2)), P("i", (2, 3), dtype="int32", value=[0, 3, 3, 1, 0, 2], dyn=(0, 1))],
     "take(%x, %i, axis=1)")
case("take_dyn_flat_wrap", [x((3, 4)), P("i", (5,), dtype="int64", value=[-1, 11, 5, 5, 13], dyn=(0,))],
     'take(%x, %i, mode="wrap")')
case("take_dyn_batch1", [x((2, 4, 3)), P("i", (2, 5), dtype="int32", value=[0, 3, 3, 1, 0, 2, 2, 1, 3, 0], dyn=(1,))],
     "take(%x, %i, axis=1, batch_dims=1)")
case("take_batch1_axis_eq", [x((3, 4)), P("i", (3,), dtype="int32", value=[3, 0, 2])], "take(%x, %i, axis=1, batch_dims=1)")
case("gather_nd_batch1", [x((2, 3, 4)), P("i", (1, 2, 3), dtype="int64", value=[0, 2, 0, 1, 1, 2])],
     "gather_nd(%x, %i, batch_dims=1)")
case("gather_nd_batch1_k2", [x((2, 3, 4, 2)), P("i", (2, 2, 3), dtype="int32", value=[0, 2, 2, 1, 0, 1, 3, 0, 3, 2, 2, 1])],
     "gather_nd(%x, %i, batch_dims=1)")
case("gather_nd_batch2", [x((2, 3, 4)), P("i", (1, 2, 3, 2), dtype="int32", value=[0, 3, 1, 1, 2, 2, 3, 3, 0, 1, 2, 0])],
     "gather_nd(%x, %i, batch_dims=2)")
case("gather_nd_k0", [x((2, 3)), P("i", (0, 4), dtype="int32", value=[])], "gather_nd(%x, %i)")
case("gather", [x((3, 4)), P("i", (3, 2), dtype="int64", value=[0, 3, 3, 3, 1, 0])], "gather(%x, %i, axis=1)")
case("gather_axis0_small", [x((3, 4)), P("i", (2, 3), dtype="int32", value=[2, 0, 0, 1, 2, 2])], "gather(%x, %i, axis=0)")
case("gather_nd", [x((2, 3)), P("i", (2, 4), dtype="int64", value=[0, 1, 1, 0, 0, 1, 2, 1])], "gather_nd(%x, %i)")
case("gather_nd_partial", [x((3, 2, 4)), P("i", (1, 3), dtype="int32", value=[2, 0, 2])], "gather_nd(%x, %i)")
# ---- scattering (ops/gradients/grad_scatter.c): distinct indices under "update" -------------
case("strided_set", [x((4, 5)), P("v", (2, 2)), P("b", (2,), dtype="int32", value=[1, 0]),
                     P("e", (2,), dtype="int32", value=[4, 5]), P("s", (2,), dtype="int32", value=[2, 3])],
     "strided_set(%x, %v, %b, %e, %s)")
case("strided_set_neg_stride", [x((4, 5)), P("v", (2, 5)), P("b", (1,), dtype="int32", value=[-1]),
                                P("e", (1,), dtype="int32", value=[0]), P("s", (1,), dtype="int32", value=[-2])],
     "strided_set(%x, %v, %b, %e, %s)")
case("dyn_strided_slice", [x((4, 5)), P("b", (2,), dtype="int32", value=[1, 4]),
                           P("e", (2,), dtype="int32", value=[4, 0]), P("s", (2,), dtype="int32", value=[2, -2])],
     "dyn.strided_slice(%x, %b, %e, %s)")
case("dyn_reshape", [x((4, 6)), P("n", (3,), dtype="int64", value=[2, 3, 4])], "dyn.reshape(%x, %n)")
case("scatter_nd_update", [x((3, 4)), P("i", (2, 3), dtype="int64", value=[0, 2, 1, 3, 0, 1]), P("u", (3,))],
     "scatter_nd(%x, %i, %u)")
case("scatter_nd_update_rows", [x((3, 2, 4)), P("i", (1, 2), dtype="int32", value=[2, 0]), P("u", (2, 2, 4))],
     "scatter_nd(%x, %i, %u)")
case("scatter_nd_add_dup", [x((3, 4)), P("i", (2, 4), dtype="int64", value=[0, 2, 0, 0, 3, 1, 3, 3]), P("u", (4,))],
     'scatter_nd(%x, %i, %u, mode="add")')
case("scatter_elements_update", [x((3, 4)), P("i", (2, 4), dtype="int32", value=[0, 2, 1, -1, 1, 0, 2, 0]), P("u", (2, 4))],
     "scatter_elements(%x, %i, %u)")
case("scatter_elements_update_axis1", [x((3, 4)), P("i", (3, 2), dtype="int64", value=[3, 0, 1, -4, 2, 1]), P("u", (3, 2))],
     "scatter_elements(%x, %i, %u, axis=1)")
case("scatter_elements_add_dup", [x((3, 4)), P("i", (3, 3), dtype="int32", value=[0, 0, 3, 1, 1, -1, 2, 2, 2]),
                                  P("u", (3, 3))], 'scatter_elements(%x, %i, %u, axis=-1, reduction="add")')

# every combining mode, duplicates included (applied in order: the last update of a tie wins)
case("scatter_nd_update_dup", [x((3, 4)), P("i", (2, 4), dtype="int64", value=[0, 2, 0, 0, 3, 1, 3, 3]), P("u", (4,))],
     "scatter_nd(%x, %i, %u)")
case("scatter_elements_update_dup", [x((3, 4)), P("i", (3, 3), dtype="int32", value=[0, 0, 3, 1, 1, -1, 2, 2, 2]),
                                     P("u", (3, 3))], "scatter_elements(%x, %i, %u, axis=1)")
for mode in ["mul", "min", "max"]:
    case(f"scatter_nd_{mode}_dup", [x((3, 4), lo=0.5, hi=1.5), P("i", (2, 4), dtype="int64", value=[0, 2, 0, 0, 3, 1, 3, 3]),
                                    P("u", (4,), lo=0.3, hi=1.7)], f'scatter_nd(%x, %i, %u, mode="{mode}")')
    case(f"scatter_nd_{mode}_rows", [x((3, 2, 4), lo=0.5, hi=1.5), P("i", (1, 3), dtype="int32", value=[2, 0, 2]),
                                     P("u", (3, 2, 4), lo=0.3, hi=1.7)], f'scatter_nd(%x, %i, %u, mode="{mode}")')
for red in ["mul", "mean", "min", "max"]:
    case(f"scatter_elements_{red}_dup", [x((3, 4), lo=0.5, hi=1.5), P("i", (3, 3), dtype="int32", value=[0, 0, 3, 1, 1, -1, 2, 2, 2]),
                                         P("u", (3, 3), lo=0.3, hi=1.7)], f'scatter_elements(%x, %i, %u, axis=1, reduction="{red}")')
    case(f"scatter_elements_{red}_axis0", [x((3, 4), lo=0.5, hi=1.5), P("i", (4, 2), dtype="int64", value=[0, 2, 2, 2, 0, 1, 2, 1]),
                                           P("u", (4, 2), lo=0.3, hi=1.7)], f'scatter_elements(%x, %i, %u, reduction="{red}")')
case("scatter_nd_mul_zero", [x((3,)), P("i", (1, 4), dtype="int32", value=[1, 1, 2, 2]), P("u", (4,), value=[0.0, 1.5, 0.0, 0.0])],
     'scatter_nd(%x, %i, %u, mode="mul")')
case("scatter_elements_mul_zero", [x((2, 3)), P("i", (2, 2), dtype="int32", value=[1, 1, 0, 2]), P("u", (2, 2), value=[0.0, -1.5, 0.0, 2.0])],
     'scatter_elements(%x, %i, %u, axis=1, reduction="mul")')
# sparse_to_dense: the last row naming a position wins; rows outside the output match nothing
case("sparse_to_dense", [P("i", (4, 2), dtype="int32", value=[0, 1, 2, 3, 0, 1, 5, 0]), P("v", (4,)), P("d", ())],
     "sparse_to_dense(%i, %v, %d, output_shape=[3, 4])")
case("sparse_to_dense_rows_scalar", [P("i", (2,), dtype="int64", value=[2, 0]), P("v", ()), P("d", ())],
     "sparse_to_dense(%i, %v, %d, output_shape=[3, 2])")
case("dyn_sparse_to_dense", [P("i", (3, 1), dtype="int32", value=[1, 3, 1]), P("v", (3,)), P("d", ()),
                             P("s", (1,), dtype="int64", value=[5])], "dyn.sparse_to_dense(%i, %v, %d, %s)")
# the dyn.* forms with run-time shape inputs (result extents `?`)
case("dyn_full", [P("v", ()), P("s", (2,), dtype="int64", value=[2, 3])], 'dyn.full(%v, %s, dtype="float64")')
case("dyn_broadcast_to", [x((3, 1)), P("s", (3,), dtype="int32", value=[2, 3, 4])], "dyn.broadcast_to(%x, %s)")
case("dyn_one_hot", [P("i", (3,), dtype="int32", value=[0, 2, 1]), P("on", ()), P("off", ()), P("n", (), dtype="int32", value=4)],
     'dyn.one_hot(%i, %on, %off, %n, axis=-1, dtype="float64")')
case("dyn_tile", [x((2, 3)), P("r", (3,), dtype="int32", value=[2, 1, 3])], "dyn.tile(%x, %r)")
case("dyn_tile_short", [x((2, 3, 2)), P("r", (1,), dtype="int64", value=[2])], "dyn.tile(%x, %r)")
case("dyn_topk", [x((3, 5)), P("k", (), dtype="int32", value=2)], "%0 = dyn.topk(%x, %k); %0.0")
case("dyn_topk_values_axis0", [x((5, 3)), P("k", (), dtype="int64", value=3)], 'dyn.topk(%x, %k, axis=0, ret_type="values", is_ascend=True)')
case("dyn_pad", [x((3, 4)), P("p", (2, 2), dtype="int32", value=[1, 2, 0, 3]), P("v", ())], "dyn.nn.pad(%x, %p, %v)")
case("dyn_pad_crop", [x((3, 4)), P("p", (2, 2), dtype="int64", value=[-1, 2, 1, -2]), P("v", ())], "dyn.nn.pad(%x, %p, %v)")

# ---- dense algebra, softmax, losses ------------------------------------------------------
case("dense", [x((3, 4)), P("w", (5, 4))], "nn.dense(%x, %w)")
case("dense_3d", [x((2, 3, 4)), P("w", (5, 4))], "nn.dense(%x, %w, units=5)")
for ta in [False, True]:
    for tb in [False, True]:
        sa = (4, 3) if ta else (3, 4)
        sb = (5, 4) if tb else (4, 5)
        case(f"matmul_{int(ta)}{int(tb)}", [P("a", sa), P("b", sb)],
             f"nn.matmul(%a, %b, transpose_a={ta}, transpose_b={tb})")
        sa = (2, 4, 3) if ta else (2, 3, 4)
        sb = (1, 5, 4) if tb else (1, 4, 5)
        case(f"batch_matmul_{int(ta)}{int(tb)}", [P("a", sa), P("b", sb)],
             f"nn.batch_matmul(%a, %b, transpose_a={ta}, transpose_b={tb})")
# nn.matmul with data of rank 1, 3 and 4 (leading axes are rows; transpose_a swaps the last two)
for lead in [(), (2,), (2, 3)]:
    for ta in ([False] if not lead else [False, True]):
        for tb in [False, True]:
            sa = lead + ((4, 3) if ta else (3, 4)) if lead else (4,)
            sb = (5, 4) if tb else (4, 5)
            case(f"matmul_nd{len(sa)}_{int(ta)}{int(tb)}", [P("a", sa), P("b", sb)],
                 f"nn.matmul(%a, %b, transpose_a={ta}, transpose_b={tb})")
case("matmul_nd3_units", [P("a", (2, 3, 4)), P("b", (5, 4))], "nn.matmul(%a, %b, units=5, transpose_b=True)")
case("matmul_nd3_f32", [P("a", (2, 4, 3), dtype="float32"), P("b", (4, 5), dtype="float32")],
     "nn.matmul(%a, %b, transpose_a=True)")
for d, b, ax in [((1, 16), (16,), 1), ((1, 8, 2, 2), (8,), 1), ((1, 2, 2, 8), (8,), 3), ((4, 8), (8,), 1)]:
    case(f"bias_add_{len(d)}d_axis{ax}", [x(d), P("b", b)], f"nn.bias_add(%x, %b, axis={ax})")
case("softmax", [x((2, 5), lo=-2, hi=2)], "nn.softmax(%x)")
case("softmax_axis0", [x((3, 4), lo=-2, hi=2)], "nn.softmax(%x, axis=0)")
case("log_softmax", [x((2, 5), lo=-2, hi=2)], "nn.log_softmax(%x)")
case("fast_softmax", [x((2, 5), lo=-1, hi=1, dtype="float32")], "nn.fast_softmax(%x)", opts=["--rtol=0.01", "--atol=1e-4"])
case("cross_entropy", [x((2, 3), lo=0.5, hi=1.5), y((2, 3), lo=0.5, hi=1.5)], "nn.cross_entropy(%x, %y)", square=False)
case("cross_entropy_logits", [x((2, 3)), y((2, 3))], "nn.cross_entropy_with_logits(%x, %y)")

# ---- normalisation -----------------------------------------------------------------------
C4 = (2, 3, 2, 2)
bn = [x(C4), P("g", (3,)), P("b", (3,)), P("m", (3,)), P("v", (3,), lo=0.5, hi=1.5)]
case("batch_norm", bn, "%0 = nn.batch_norm(%x, %g, %b, %m, %v); add(sum(multiply(%0.0, %0.0)), add(sum(multiply(%0.1, %0.1)), sum(exp(%0.2))))", square=False)
case("batch_norm_noscale_axis3", [x((2, 2, 2, 3)), P("g", (3,)), P("b", (3,)), P("m", (3,)), P("v", (3,), lo=0.5, hi=1.5)],
     "%0 = nn.batch_norm(%x, %g, %b, %m, %v, axis=3, center=False, scale=False); %0.0")
case("layer_norm", [x((2, 3, 4)), P("g", (4,)), P("b", (4,))], "nn.layer_norm(%x, %g, %b)")
case("layer_norm_axis1", [x((2, 3, 4)), P("g", (3,)), P("b", (3,))], "nn.layer_norm(%x, %g, %b, axis=1, epsilon=0.01f)")
case("instance_norm", [x(C4), P("g", (3,)), P("b", (3,))], "nn.instance_norm(%x, %g, %b)")
case("group_norm", [x((2, 4, 3)), P("g", (4,)), P("b", (4,))], "nn.group_norm(%x, %g, %b, num_groups=2)")
case("l2_normalize", [x((2, 3, 4))], "nn.l2_normalize(%x, eps=1e-10f, axis=[1])")
case("l2_normalize_clamped", [x((2, 3), lo=-0.1, hi=0.1)], "nn.l2_normalize(%x, eps=10f, axis=[1])")
case("lrn", [x((1, 5, 2, 2))], "nn.lrn(%x, size=3, axis=1, bias=1f, alpha=0.5f, beta=0.75f)")
case("lrn_even", [x((2, 6))], "nn.lrn(%x, size=4, axis=1, bias=2f, alpha=0.3f, beta=0.5f)")

# ---- padding -----------------------------------------------------------------------------
case("pad_constant", [x((3, 4)), P("v", ())], "nn.pad(%x, %v, pad_width=[[1, 2], [0, 3]])")
case("pad_crop", [x((3, 4)), P("v", ())], "nn.pad(%x, %v, pad_width=[[-1, 2], [1, -2]])")
case("pad_edge", [x((3, 4))], 'nn.pad(%x, 0f64, pad_width=[[2, 1], [1, 3]], pad_mode="edge")')
case("pad_reflect", [x((3, 4))], 'nn.pad(%x, 0f64, pad_width=[[2, 1], [1, 3]], pad_mode="reflect")')
case("mirror_pad_reflect", [x((3, 4))], 'nn.mirror_pad(%x, mode="REFLECT", pad_width=[[2, 1], [1, 3]])')
case("mirror_pad_symmetric", [x((3, 4))], 'nn.mirror_pad(%x, mode="SYMMETRIC", pad_width=[[3, 1], [0, 4]])')

# widths beyond one reflection (periodic) and negative widths (cropping) in the copying modes
case("pad_reflect_wide", [x((3, 4))], 'nn.pad(%x, 0f64, pad_width=[[3, 5], [0, 4]], pad_mode="reflect")')
case("pad_reflect_crop", [x((3, 4))], 'nn.pad(%x, 0f64, pad_width=[[-1, 2], [2, -1]], pad_mode="reflect")')
case("pad_edge_crop", [x((3, 4))], 'nn.pad(%x, 0f64, pad_width=[[-1, 2], [1, -2]], pad_mode="edge")')
case("pad_reflect_extent1", [x((1, 4))], 'nn.pad(%x, 0f64, pad_width=[[2, 1], [0, 0]], pad_mode="reflect")')
case("mirror_pad_symmetric_wide", [x((3, 2))], 'nn.mirror_pad(%x, mode="SYMMETRIC", pad_width=[[4, 7], [3, 0]])')
case("mirror_pad_reflect_wide", [x((3, 4))], 'nn.mirror_pad(%x, mode="REFLECT", pad_width=[[5, 2], [1, 4]])')

# ---- sorting -----------------------------------------------------------------------------
case("sort", [x((3, 5))], "sort(%x, axis=1)")
case("sort_desc_axis0", [x((4, 3))], "sort(%x, axis=0, is_ascend=False)")
case("topk_both", [x((3, 5))], "%0 = topk(%x, k=2); %0.0")
case("topk_values_axis0", [x((5, 3))], 'topk(%x, k=3, axis=0, ret_type="values", is_ascend=True)')

# ---- pooling and resizing ----------------------------------------------------------------
X4 = (1, 2, 5, 6)
for tag, attrs in [("basic", "pool_size=[2, 2]"), ("stride_pad", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]"),
                   ("ceil", "pool_size=[2, 3], strides=[2, 2], ceil_mode=True"),
                   ("dilation", "pool_size=[2, 2], dilation=[2, 2], padding=[1, 0, 0, 1]"),
                   ("nhwc", 'pool_size=[2, 2], strides=[1, 2], layout="NHWC"')]:
    shp = (1, 5, 6, 2) if "NHWC" in attrs else X4
    case(f"max_pool2d_{tag}", [x(shp)], f"nn.max_pool2d(%x, {attrs})")
    case(f"avg_pool2d_{tag}", [x(shp)], f"nn.avg_pool2d(%x, {attrs})")
case("avg_pool2d_include_pad", [x(X4)], "nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=True, count_include_pad=True)")
case("max_pool1d", [x((2, 3, 7))], "nn.max_pool1d(%x, pool_size=[3], strides=[2], padding=[1], dilation=[1])")
case("max_pool1d_nwc", [x((2, 7, 3))], 'nn.max_pool1d(%x, pool_size=[2], strides=[1], layout="NWC", ceil_mode=True)')
case("avg_pool1d", [x((2, 3, 7))], "nn.avg_pool1d(%x, pool_size=[3], strides=[2], padding=[1, 0], dilation=[2], ceil_mode=True)")
case("avg_pool1d_include_pad", [x((2, 3, 7))], "nn.avg_pool1d(%x, pool_size=[3], strides=[2], padding=[1], count_include_pad=True)")
case("max_pool3d", [x((1, 2, 4, 5, 4))], "nn.max_pool3d(%x, pool_size=[2, 2, 2], strides=[2, 2, 2])")
case("max_pool3d_ndhwc", [x((1, 4, 4, 6, 2))], 'nn.max_pool3d(%x, pool_size=[1, 2, 3], strides=[1, 2, 3], layout="NDHWC")')
case("max_pool3d_overlap_pad", [x((1, 2, 4, 5, 4))],
     "nn.max_pool3d(%x, pool_size=[2, 3, 2], strides=[1, 2, 2], padding=[1, 1, 0, 0, 1, 1])")
case("max_pool3d_dilation_ceil", [x((1, 2, 5, 6, 4))],
     "nn.max_pool3d(%x, pool_size=[2, 2, 2], strides=[2, 2, 1], dilation=[2, 1, 2], ceil_mode=True)")
case("max_pool3d_ndhwc_overlap", [x((1, 4, 5, 4, 2))],
     'nn.max_pool3d(%x, pool_size=[3, 2, 2], strides=[1, 1, 2], padding=[1, 0, 1], layout="NDHWC")')
case("adaptive_max_pool3d", [x((1, 2, 4, 6, 2))], "nn.adaptive_max_pool3d(%x, output_size=[2, 3, 1])")
case("avg_pool3d", [x((1, 2, 4, 3, 5))], "nn.avg_pool3d(%x, pool_size=[2, 2, 3], strides=[2, 1, 2], padding=[1, 0, 1])")
for d, lay, shp in [("1d", "NCW", (2, 3, 5)), ("2d", "NCHW", (2, 3, 4, 5)), ("2d", "NHWC", (2, 4, 5, 3)),
                    ("3d", "NCDHW", (1, 2, 3, 2, 4))]:
    case(f"global_avg_pool{d}_{lay}", [x(shp)], f'nn.global_avg_pool{d}(%x, layout="{lay}")')
    case(f"global_max_pool{d}_{lay}", [x(shp)], f'nn.global_max_pool{d}(%x, layout="{lay}")')
case("adaptive_avg_pool1d", [x((2, 3, 7))], "nn.adaptive_avg_pool1d(%x, output_size=[3])")
case("adaptive_avg_pool2d", [x((1, 2, 7, 5))], "nn.adaptive_avg_pool2d(%x, output_size=[3, 2])")
case("adaptive_avg_pool2d_nhwc", [x((1, 7, 5, 2))], 'nn.adaptive_avg_pool2d(%x, output_size=[3, 4], layout="NHWC")')
case("adaptive_avg_pool3d", [x((1, 2, 5, 3, 4))], "nn.adaptive_avg_pool3d(%x, output_size=[2, 2, 3])")
case("adaptive_max_pool1d", [x((2, 3, 6))], "nn.adaptive_max_pool1d(%x, output_size=[3])")
# adaptive max pooling with unequal (overlapping) cells: extents not multiples of the output's
case("adaptive_max_pool1d_unequal", [x((2, 3, 7))], "nn.adaptive_max_pool1d(%x, output_size=[3])")
case("adaptive_max_pool1d_nwc_grow", [x((2, 4, 3))], 'nn.adaptive_max_pool1d(%x, output_size=[5], layout="NWC")')
case("adaptive_max_pool2d_unequal", [x((1, 2, 7, 5))], "nn.adaptive_max_pool2d(%x, output_size=[3, 2])")
case("adaptive_max_pool2d_mixed", [x((2, 2, 6, 5))], "nn.adaptive_max_pool2d(%x, output_size=[3, 3])")
case("adaptive_max_pool2d_nhwc", [x((1, 5, 7, 3))], 'nn.adaptive_max_pool2d(%x, output_size=[4, 3], layout="NHWC")')
case("adaptive_max_pool2d_grow", [x((1, 1, 3, 4))], "nn.adaptive_max_pool2d(%x, output_size=[5, 6])")
case("adaptive_max_pool2d_f32", [x((1, 2, 7, 5), dtype="float32")], "nn.adaptive_max_pool2d(%x, output_size=[3, 2])")
case("adaptive_max_pool3d_unequal", [x((1, 2, 5, 4, 7))], "nn.adaptive_max_pool3d(%x, output_size=[2, 3, 3])")
case("adaptive_max_pool3d_ndhwc", [x((1, 3, 5, 4, 2))], 'nn.adaptive_max_pool3d(%x, output_size=[2, 2, 3], layout="NDHWC")')
# nn.max_pool2d_grad (second derivatives of max pooling): linear in dy, whose adjoint reads the
# adjoint back at each window's winner; x gets none (the winners are piecewise constant)
for tag, xs, dys, attrs in [("basic", (1, 2, 5, 6), (1, 2, 2, 3), "pool_size=[2, 2], strides=[2, 2]"),
                            ("overlap_pad", (1, 2, 5, 6), (1, 2, 3, 3), "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]"),
                            ("ceil", (1, 2, 5, 6), (1, 2, 3, 3), "pool_size=[2, 3], strides=[2, 2], ceil_mode=True"),
                            ("dilation", (1, 2, 5, 6), (1, 2, 4, 5), "pool_size=[2, 2], dilation=[2, 2], padding=[1, 0, 0, 1]"),
                            ("nhwc", (1, 5, 6, 2), (1, 4, 3, 2), 'pool_size=[2, 2], strides=[1, 2], layout="NHWC"')]:
    case(f"max_pool2d_grad_{tag}", [P("dy", dys), x(xs)], f"nn.max_pool2d_grad(%dy, %x, {attrs})")
case("adaptive_max_pool2d", [x((1, 2, 6, 4))], "nn.adaptive_max_pool2d(%x, output_size=[3, 2])")
for tag, attrs in [("linear", "size=[5, 7]"), ("linear_down", "size=[3, 2]"),
                   ("align_corners", 'size=[5, 7], coordinate_transformation_mode="align_corners"'),
                   ("nearest", 'size=[6, 5], method="nearest_neighbor", coordinate_transformation_mode="asymmetric", rounding_method="floor"'),
                   ("cubic", 'size=[5, 7], method="cubic"'),
                   ("cubic_exclude", 'size=[5, 7], method="cubic", cubic_exclude=1, cubic_alpha=-0.75f'),
                   ("crop", 'size=[4, 4], roi=[0.1f, -0.2f, 0.9f, 1.1f], coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=0.5f'),
                   ("nhwc", 'size=[5, 7], layout="NHWC"')]:
    shp = (1, 3, 4, 2) if "NHWC" in attrs else (1, 2, 3, 4)
    case(f"resize2d_{tag}", [x(shp)], f"image.resize2d(%x, {attrs})")
# output_padding of a stride or more (TVM's relation allows it): the adjoint's unreached rows are cut
# (these were internal errors: the rules' convolutions gave the wrong extent)
case("conv1d_transpose_opad_ge_stride", [x((1, 2, 5)), P("w", (2, 3, 3))], "nn.conv1d_transpose(%x, %w, output_padding=[1])")
case("conv1d_transpose_opad_2strides", [x((1, 2, 4)), P("w", (2, 3, 3))],
     "nn.conv1d_transpose(%x, %w, strides=[2], output_padding=[3], padding=[1])")
case("conv2d_transpose_opad_ge_stride", [x((1, 2, 3, 4)), P("w", (2, 3, 2, 3))],
     "nn.conv2d_transpose(%x, %w, strides=[1, 2], output_padding=[2, 1])")
case("conv3d_transpose_opad_ge_stride", [x((1, 2, 2, 3, 2)), P("w", (2, 2, 2, 2, 2))],
     "nn.conv3d_transpose(%x, %w, strides=[1, 2, 1], output_padding=[1, 3, 0])")
for tag, ps, ts, attrs in [("mean", (4, 3), (4,), "ignore_index=-100"), ("sum_ignore", (5, 4), (5,), 'reduction="sum", ignore_index=2'),
                           ("none_spatial", (2, 3, 2, 2), (2, 2, 2), 'reduction="none", ignore_index=0'),
                           ("mean_ignore_spatial", (3, 4, 3), (3, 3), "ignore_index=1")]:
    C = ps[1]
    tv = [(k * 7 + 3) % C for k in range(int(np.prod(ts)))]
    case(f"nll_loss_{tag}", [x(ps), P("t", ts, dtype="int32", value=tv), P("w", (C,), lo=0.2, hi=1.0)],
         f"nn.nll_loss(%x, %t, %w, {attrs})")
case("affine_grid", [x((2, 2, 3))], "image.affine_grid(%x, target_shape=[3, 4])")
for tag, attrs in [("linear", "size=[7]"), ("linear_down", "size=[3]"),
                   ("align_corners", 'size=[7], coordinate_transformation_mode="align_corners"'),
                   ("nearest", 'size=[9], method="nearest_neighbor", coordinate_transformation_mode="asymmetric", rounding_method="floor"'),
                   ("cubic_exclude", 'size=[7], method="cubic", cubic_exclude=1, cubic_alpha=-0.75f'),
                   ("crop", 'size=[6], roi=[-0.2f, 0.9f], coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=0.5f'),
                   ("nwc", 'size=[7], layout="NWC"')]:
    case(f"resize1d_{tag}", [x((1, 3, 2) if "NWC" in attrs else (1, 2, 4))], f"image.resize1d(%x, {attrs})")
for tag, attrs in [("linear", "size=[3, 4, 5]"), ("cubic", 'size=[2, 3, 2], method="cubic"'),
                   ("nearest_ndhwc", 'size=[4, 2, 5], layout="NDHWC", method="nearest_neighbor", rounding_method="ceil"'),
                   ("crop", 'size=[3, 3, 3], roi=[0.1f, -0.2f, 0.3f, 0.9f, 1.1f, 0.8f], coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=0.5f')]:
    case(f"resize3d_{tag}", [x((1, 2, 3, 2, 2) if "NDHWC" in attrs else (1, 2, 2, 3, 3))], f"image.resize3d(%x, {attrs})")
for tag, attrs, shp in [("nearest", "scale_d=2f, scale_h=1.5f, scale_w=2f", (1, 2, 2, 2, 3)),
                        ("trilinear", 'scale_d=1.5f, scale_h=2f, scale_w=0.5f, method="trilinear"', (1, 1, 2, 3, 4)),
                        ("trilinear_align", 'scale_d=2f, scale_h=2f, scale_w=1f, method="trilinear", coordinate_transformation_mode="align_corners"', (1, 2, 2, 2, 3)),
                        ("nearest_asym_ndhwc", 'scale_d=2f, scale_h=1f, scale_w=2f, layout="NDHWC", coordinate_transformation_mode="asymmetric"', (1, 2, 3, 2, 2)),
                        ("nearest_align", 'scale_d=1.5f, scale_h=2f, scale_w=2f, coordinate_transformation_mode="align_corners"', (1, 1, 2, 2, 3))]:
    case(f"upsampling3d_{tag}", [x(shp)], f"nn.upsampling3d(%x, {attrs})")
case("upsampling_nearest", [x((1, 2, 3, 2))], "nn.upsampling(%x, scale_h=2f, scale_w=3f)")
case("upsampling_bilinear", [x((1, 2, 3, 2))], 'nn.upsampling(%x, scale_h=2f, scale_w=1.5f, method="bilinear", align_corners=True)')

# ---- convolution -------------------------------------------------------------------------
for tag, xs, ws, attrs in [
        ("3x3_pad1", (1, 4, 5, 5), (6, 4, 3, 3), "padding=[1, 1]"),
        ("1x1", (1, 4, 5, 5), (6, 4, 1, 1), ""),
        ("1x1_stride2", (1, 4, 5, 5), (6, 4, 1, 1), "strides=[2, 2]"),
        ("stride2_pad_asym", (2, 3, 6, 5), (4, 3, 3, 2), "strides=[2, 2], padding=[1, 0, 0, 1]"),
        ("dilation2", (1, 2, 7, 6), (3, 2, 3, 2), "dilation=[2, 2], padding=[2, 1]"),
        ("groups2", (1, 4, 5, 5), (6, 2, 3, 3), "groups=2, padding=[1, 1]"),
        ("depthwise", (1, 3, 5, 5), (3, 1, 3, 3), "groups=3, channels=3, padding=[1, 1]"),
        ("stride3_dil2_groups", (1, 4, 9, 8), (4, 2, 2, 3), "strides=[3, 2], dilation=[2, 1], groups=2, padding=[1, 2]")]:
    case(f"conv2d_{tag}", [x(xs), P("w", ws)], f"nn.conv2d(%x, %w{', ' + attrs if attrs else ''})")
case("conv2d_nhwc", [x((1, 5, 5, 3)), P("w", (3, 3, 3, 4))], 'nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO")')
# split-channel layouts (converted to NCHW/OIHW with layout_transform and back)
case("conv2d_nchw4c", [x((1, 2, 5, 5, 4)), P("w", (2, 2, 3, 3, 4, 4))],
     'nn.conv2d(%x, %w, padding=[1, 1], strides=[2, 1], data_layout="NCHW4c", kernel_layout="OIHW4i4o")')
case("conv2d_nchw2c_groups", [x((1, 2, 6, 5, 2)), P("w", (4, 2, 3, 2))],
     'nn.conv2d(%x, %w, strides=[2, 2], groups=2, data_layout="NCHW2c", kernel_layout="OIHW")')
# issue 12 (tests/grad/sweep_conv_layouts.py): groups=3 with a split out_layout whose last channel
# block is padded (3 or 9 channels in NCHW2c), TVM's depthwise weight (C, M, k...), a split
# transposed convolution with padded output channels, conv1d in NCW2c
case("conv2d_nchw2c_oihw2i_groups3_pad_out", [x((1, 3, 5, 4, 2)), P("w", (3, 1, 3, 3, 2))],
     'nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=3, channels=3, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW2i")')
case("conv2d_nchw2c_hwio_groups3_out9", [x((1, 3, 5, 4, 2)), P("w", (3, 3, 2, 9))],
     'nn.conv2d(%x, %w, padding=[1, 1], groups=3, channels=9, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="HWIO")')
case("conv2d_nhwc_groups3_out_nchw2c", [x((1, 5, 4, 6)), P("w", (3, 3, 2, 3))],
     'nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=3, channels=3, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO", out_layout="NCHW2c")')
case("conv2d_depthwise_multiplier_weight", [x((1, 3, 5, 4)), P("w", (3, 2, 3, 3))],
     "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=3, channels=6, kernel_size=[3, 3])")
case("conv2d_nchw2c_depthwise_multiplier_weight", [x((1, 2, 5, 4, 2)), P("w", (4, 1, 3, 3, 2))],
     'nn.conv2d(%x, %w, padding=[1, 1], groups=4, channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW2i")')
case("conv2d_transpose_nchw2c_groups3_pad_out", [x((1, 3, 5, 4, 2)), P("w", (6, 1, 3, 3))],
     'nn.conv2d_transpose(%x, %w, channels=3, kernel_size=[3, 3], strides=[2, 2], padding=[1, 1], groups=3, data_layout="NCHW2c")')
case("conv1d_ncw2c_groups3_pad_out", [x((1, 3, 7, 2)), P("w", (3, 1, 3, 2))],
     'nn.conv1d(%x, %w, strides=[2], padding=[1, 1], groups=3, channels=3, kernel_size=[3], data_layout="NCW2c", kernel_layout="OIW2i")')
case("conv2d_f32", [x((1, 3, 5, 5), dtype="float32"), P("w", (2, 3, 3, 3), dtype="float32")], "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1])")
case("conv1d", [x((2, 3, 9)), P("w", (4, 3, 3))], "nn.conv1d(%x, %w, strides=[2], padding=[1, 2], dilation=[2])")
case("conv1d_groups", [x((1, 4, 7)), P("w", (4, 2, 3))], "nn.conv1d(%x, %w, groups=2, padding=[1])")
for tag, xs, ws, attrs in [("basic", (1, 2, 4, 3, 4), (3, 2, 2, 2, 3), "padding=[1, 0, 1]"),
                           ("stride_dil", (2, 2, 5, 4, 5), (2, 2, 2, 2, 2), "strides=[2, 1, 2], dilation=[1, 2, 1], padding=[0, 1, 1, 1, 0, 0]"),
                           ("groups", (1, 4, 3, 3, 3), (4, 2, 2, 1, 2), "groups=2, strides=[1, 2, 1]")]:
    case(f"conv3d_{tag}", [x(xs), P("w", ws)], f"nn.conv3d(%x, %w, {attrs})")
for tag, xs, ws, attrs in [("basic", (1, 4, 4, 4), (4, 3, 3, 3), ""),
                           ("stride2", (1, 2, 3, 4), (2, 3, 3, 3), "strides=[2, 2], padding=[1, 1], output_padding=[1, 0]"),
                           ("groups", (1, 4, 3, 3), (4, 2, 2, 2), "channels=4, groups=2, strides=[2, 1]"),
                           ("dilation", (1, 2, 3, 3), (2, 2, 2, 3), "dilation=[2, 1], padding=[1, 1]")]:
    case(f"conv2d_transpose_{tag}", [x(xs), P("w", ws)], f"nn.conv2d_transpose(%x, %w{', ' + attrs if attrs else ''})")
for tag, xs, ws, attrs in [("basic", (1, 3, 5), (3, 2, 3), ""),
                           ("stride_opad", (2, 2, 4), (2, 3, 3), "strides=[2], padding=[1, 2], output_padding=[1], dilation=[2]"),
                           ("groups", (1, 4, 5), (4, 2, 2), "channels=4, groups=2, strides=[2]"),
                           ("nwc_wio", (1, 5, 3), (2, 3, 2), 'strides=[2], padding=[1], data_layout="NWC", kernel_layout="WIO"')]:
    case(f"conv1d_transpose_{tag}", [x(xs), P("w", ws)], f"nn.conv1d_transpose(%x, %w{', ' + attrs if attrs else ''})")
for tag, xs, ws, attrs in [("basic", (1, 2, 3, 2, 3), (2, 3, 2, 2, 2), "padding=[1, 0, 1]"),
                           ("stride_dil_opad", (1, 2, 3, 2, 2), (2, 2, 2, 2, 3),
                            "strides=[2, 1, 2], output_padding=[1, 0, 1], padding=[0, 1, 1, 1, 0, 0], dilation=[1, 2, 1]"),
                           ("groups", (1, 4, 2, 3, 2), (4, 1, 2, 2, 1), "channels=2, groups=2, strides=[1, 2, 1]"),
                           ("ndhwc", (1, 2, 3, 2, 2), (2, 2, 1, 2, 3), 'strides=[2, 1, 1], data_layout="NDHWC", kernel_layout="DHWIO"')]:
    case(f"conv3d_transpose_{tag}", [x(xs), P("w", ws)], f"nn.conv3d_transpose(%x, %w{', ' + attrs if attrs else ''})")

# ---- second order: the rules of what rules emit (§4.9) -------------------------------------
case("emitted_ops", [x((3, 4)), P("l", (1, 4))],
     "%0 = broadcast_to_like(%l, %x); %1 = collapse_sum_like(multiply(%x, %0), %l); "
     "%2 = where(less(%x, 0f64), zeros_like(%x), %x); add(sum(%1), sum(multiply(%2, ones_like(%2))))", square=False)


# ---- second order through the rules added for issue 12 ------------------------------------
# @main = Σ_p <d(sum f²)/dp, p>: its gradient needs the rule of every operator the first
# gradient emitted (scatter/gather adjoints, pads, transposed products, conv2d_backward_weight)
for lead, ta, tb in [((2,), False, False), ((2,), True, True), ((2, 3), False, True), ((), False, False)]:
    sa = lead + ((4, 3) if ta else (3, 4)) if lead else (4,)
    sb = (5, 4) if tb else (4, 5)
    case2(f"second_matmul_nd{len(sa)}_{int(ta)}{int(tb)}", [P("a", sa), P("b", sb)],
          f"nn.matmul(%a, %b, transpose_a={ta}, transpose_b={tb})")
case2("second_matmul_nd3_units", [P("a", (2, 3, 4)), P("b", (5, 4))], "nn.matmul(%a, %b, units=5, transpose_b=True)")
case2("second_adaptive_max_pool2d_unequal", [x((1, 2, 7, 5))], "nn.adaptive_max_pool2d(%x, output_size=[3, 2])")
case2("second_adaptive_max_pool2d_nhwc_grow", [x((1, 3, 4, 2))], 'nn.adaptive_max_pool2d(%x, output_size=[4, 5], layout="NHWC")')
case2("second_adaptive_max_pool1d_unequal", [x((2, 3, 7))], "nn.adaptive_max_pool1d(%x, output_size=[3])")
case2("second_adaptive_max_pool3d_unequal", [x((1, 2, 5, 4, 3))], "nn.adaptive_max_pool3d(%x, output_size=[2, 3, 2])")
case2("second_take_batch1_axis1", [x((2, 4, 3)), P("i", (2, 5), dtype="int32", value=[0, 3, 3, 1, 0, 2, 2, 1, 3, 0])],
      "take(%x, %i, axis=1, batch_dims=1)")
case2("second_take_batch2_wrap", [x((2, 3, 4)), P("i", (2, 3, 2), dtype="int32", value=[-1, 4, 0, 0, 2, 7, 1, 1, -3, 2, 5, 3])],
      'take(%x, %i, axis=2, batch_dims=2, mode="wrap")')
case2("second_take_dyn_clip", [x((3, 4)), P("i", (4,), dtype="int32", value=[-1, 5, 2, 2], dyn=(0,))], 'take(%x, %i, axis=1, mode="clip")')
case2("second_gather_nd_batch1_k2", [x((2, 3, 4, 2)), P("i", (2, 2, 3), dtype="int32", value=[0, 2, 2, 1, 0, 1, 3, 0, 3, 2, 2, 1])],
      "gather_nd(%x, %i, batch_dims=1)")
case2("second_gather_nd_dup", [x((2, 3)), P("i", (2, 4), dtype="int64", value=[0, 1, 1, 0, 0, 1, 2, 1])], "gather_nd(%x, %i)")
case2("second_gather", [x((3, 4)), P("i", (3, 2), dtype="int32", value=[0, 3, 3, 1, 2, 2])], "gather(%x, %i, axis=1)")
for mode in ["update", "add", "mul", "min", "max"]:
    case2(f"second_scatter_nd_{mode}", [x((3, 4), lo=0.5, hi=1.5), P("i", (2, 4), dtype="int64", value=[0, 2, 0, 1, 3, 1, 0, 0]),
                                        P("u", (4,), lo=0.3, hi=1.7)], f'scatter_nd(%x, %i, %u, mode="{mode}")')
for red in ["update", "add", "mul", "mean", "min", "max"]:
    case2(f"second_scatter_elements_{red}", [x((3, 4), lo=0.5, hi=1.5), P("i", (3, 3), dtype="int32", value=[0, 0, 3, 1, 2, -1, 2, 1, 0]),
                                             P("u", (3, 3), lo=0.3, hi=1.7)], f'scatter_elements(%x, %i, %u, axis=1, reduction="{red}")')
case2("second_pad_constant", [x((3, 4)), P("v", ())], "nn.pad(%x, %v, pad_width=[[1, 2], [0, 3]])")
case2("second_pad_crop", [x((3, 4)), P("v", ())], "nn.pad(%x, %v, pad_width=[[-1, 2], [1, -2]])")
case2("second_pad_edge", [x((3, 4))], 'nn.pad(%x, 0f64, pad_width=[[2, 1], [1, 3]], pad_mode="edge")')
case2("second_pad_reflect_wide", [x((3, 4))], 'nn.pad(%x, 0f64, pad_width=[[3, 5], [0, 4]], pad_mode="reflect")')
case2("second_mirror_pad_reflect", [x((3, 4))], 'nn.mirror_pad(%x, mode="REFLECT", pad_width=[[2, 1], [1, 3]])')
case2("second_mirror_pad_symmetric", [x((3, 2))], 'nn.mirror_pad(%x, mode="SYMMETRIC", pad_width=[[4, 7], [3, 0]])')
case2("second_dyn_pad", [x((3, 4)), P("p", (2, 2), dtype="int32", value=[1, 2, 0, 3]), P("v", ())], "dyn.nn.pad(%x, %p, %v)")
case2("second_topk_both", [x((3, 5))], "%0 = topk(%x, k=2); %0.0")
case2("second_topk_values_axis0", [x((5, 3))], 'topk(%x, k=3, axis=0, ret_type="values", is_ascend=True)')
case2("second_dyn_topk", [x((3, 5)), P("k", (), dtype="int32", value=2)], "%0 = dyn.topk(%x, %k); %0.0")
case2("second_conv2d_depthwise", [x((1, 3, 5, 5)), P("w", (3, 1, 3, 3))], "nn.conv2d(%x, %w, groups=3, channels=3, padding=[1, 1])")
case2("second_conv2d_depthwise_mult2_stride", [x((1, 2, 6, 5)), P("w", (4, 1, 3, 2))],
      "nn.conv2d(%x, %w, groups=2, channels=4, strides=[2, 1], padding=[1, 0])")
case2("second_conv2d_groups_dilation", [x((1, 4, 7, 6)), P("w", (4, 2, 2, 3))], "nn.conv2d(%x, %w, groups=2, dilation=[2, 1], padding=[1, 1])")
case2("second_conv2d_backward_weight_infer_type_depthwise", [P("input0", (1, 3, 6, 6)), P("w", (3, 1, 3, 3)), P("b", (3,))],
      "%0 = nn.conv2d(%input0, %w, padding=[1, 1, 1, 1], groups=3, channels=3, kernel_size=[3, 3]); nn.bias_add(%0, %b)")

# ---- TVM's data-movement operators beyond spec/ops.md (session 17, h-ops1) -----------------
case("depth_to_space_dcr", [x((2, 8, 2, 3))], "nn.depth_to_space(%x, block_size=2)")
case("depth_to_space_crd", [x((1, 18, 2, 2))], 'nn.depth_to_space(%x, block_size=3, mode="CRD")')
case("depth_to_space_nhwc_crd", [x((1, 2, 3, 8))], 'nn.depth_to_space(%x, block_size=2, layout="NHWC", mode="CRD")')
case("depth_to_space_channels_dropped", [x((1, 10, 2, 2))], 'nn.depth_to_space(%x, block_size=2, mode="CRD")')
case("space_to_depth", [x((2, 2, 4, 6))], "nn.space_to_depth(%x, block_size=2)")
case("space_to_depth_nhwc_rows_dropped", [x((1, 5, 7, 2))], 'nn.space_to_depth(%x, block_size=3, layout="NHWC")')
case("space_to_batch_nd", [x((2, 3, 5, 2))], "nn.space_to_batch_nd(%x, block_shape=[2, 3], paddings=[[1, 0], [0, 1]], pad_value=2f)")
case("space_to_batch_nd_1d", [x((3, 4, 2))], "nn.space_to_batch_nd(%x, block_shape=[4], paddings=[[2, 2]])")
case("batch_to_space_nd", [x((12, 2, 2, 2))], "nn.batch_to_space_nd(%x, block_shape=[2, 3], crops=[[1, 0], [0, 1]])")
case("batch_to_space_nd_3d", [x((12, 3, 4, 1, 2))], "nn.batch_to_space_nd(%x, block_shape=[1, 2, 3], crops=[[0, 1], [1, 1], [0, 0]])")
case2("second_depth_to_space_crd", [x((1, 8, 2, 2))], 'nn.depth_to_space(%x, block_size=2, mode="CRD")')
case2("second_batch_to_space_nd", [x((4, 2, 3))], "nn.batch_to_space_nd(%x, block_shape=[2, 2], crops=[[1, 0], [0, 2]])")
case("trilu_upper", [x((2, 3, 4)), P("k", (), dtype="int32", value=1)], "trilu(%x, %k)")
case("trilu_lower", [x((4, 3))], "trilu(%x, -1i64, upper=False)")
case("reverse_sequence", [x((4, 3, 2)), P("l", (3,), dtype="int64", value=[3, 0, 9])], "reverse_sequence(%x, %l, seq_axis=0, batch_axis=1)")
case("sequence_mask", [x((2, 5)), P("l", (2,), dtype="float32", value=[2.5, 0.5])], "sequence_mask(%x, %l, mask_value=3f, axis=1)")
case("matrix_set_diag_band", [x((2, 3, 4)), P("d", (2, 4, 3))], "matrix_set_diag(%x, %d, k1=-1, k2=2, super_diag_right_align=False, sub_diag_right_align=True)")
case("matrix_set_diag_one", [x((4, 3)), P("d", (3,))], "matrix_set_diag(%x, %d, k1=-2, k2=-2)")
case("matrix_set_diag_main", [x((2, 3, 3)), P("d", (2, 3))], "matrix_set_diag(%x, %d)")
case("meshgrid_xy", [P("a", (3,)), P("b", ()), P("c", (2,))], "%0 = meshgrid((%a, %b, %c), indexing=\"xy\"); %0.0 * %0.1 + %0.2")
case("meshgrid_one", [P("a", (3,))], "%0 = meshgrid((%a,)); %0.0")
case("dilate", [x((2, 3))], "nn.dilate(%x, strides=[2, 3], dilation_value=1f)")
case("sliding_window", [x((2, 5, 6))], "sliding_window(%x, axis=1, window_shape=[2, 3], strides=[1, 2])")
case("sliding_window_axis0", [x((7,))], "sliding_window(%x, axis=0, window_shape=[3], strides=[2])")
case2("second_matrix_set_diag", [x((3, 4)), P("d", (4, 3))], "matrix_set_diag(%x, %d, k1=-1, k2=2)")
case2("second_sliding_window", [x((2, 5))], "sliding_window(%x, axis=1, window_shape=[2], strides=[1])")


def write_case(tmp, i, name, params, body, ret, square, opts, second=False):
    flags = list(opts)
    sig = ", ".join(f"%{p.name}: {p.type_text()}" for p in params)
    if square:
        last = body.rsplit(";", 1)
        prefix = last[0] + ";" if len(last) == 2 else ""
        expr = last[-1].strip()
        text = f"{prefix}\n  %99 = {expr};\n  multiply(%99, %99)"
    else:
        text = body
    src = ['#[version = "0.0.5"]', f"def @main({sig}) {{", "  " + text, "}"]
    if second:  # @f = sum(body²); @main = Σ_p sum(d@f/dp · p) over the float parameters
        args = ", ".join(f"%{p.name}" for p in params)
        terms = [f"sum(multiply(%gs.{k}, %{p.name}))" for k, p in enumerate(params) if p.dtype.startswith("float")]
        total = terms[0]
        for t in terms[1:]:
            total = f"add({total}, {t})"
        src = ['#[version = "0.0.5"]', f"def @f({sig}) {{", f"  {prefix if square else ''}",
               f"  %99 = {expr if square else body};", "  sum(multiply(%99, %99))", "}",
               f"def @main({sig}) {{", f"  let %r = gradient(@f)({args});", "  let %gs = %r.1;", f"  {total}", "}"]
    path = os.path.join(tmp, f"{i}_{name}.relay")
    with open(path, "w") as f:
        f.write("\n".join(src) + "\n")
    return path, flags


def run_case(relayc, tmp, i, c, verbose, mode):
    name, params, body, ret, square, opts, second = c
    rng = np.random.default_rng(1000 + i)
    path, flags = write_case(tmp, f"{i}{mode[0]}", name, params, body, ret, square, opts, second)
    argv = [relayc, f"--check-grad={mode}", path] + flags
    for p in params:
        f = os.path.join(tmp, f"{i}{mode[0]}_{p.name}.npy")
        np.save(f, p.draw(rng))
        argv += ["--input", f"{p.name}={f}"]
    r = subprocess.run(argv, capture_output=True, timeout=300)
    out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
    if r.returncode == 1 and "which is not registered" in out:
        return "SKIP"  # the rule emits an operator this build lacks
    if r.returncode != 0:
        return f"exit {r.returncode}\n{out}\n--- program ---\n{open(path).read()}"
    if verbose:
        print(f"--- {name}\n{out}")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--mode", default="both", choices=["both", "higher_order", "first_order"],
                    help="gradient mode(s) to check (default: both)")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    modes = ["higher_order", "first_order"] if a.mode == "both" else [a.mode]
    cases = [(i, c, m) for i, c in enumerate(CASES) if a.k in c[0] for m in modes if not (c[6] and m == "first_order")]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
            results = list(ex.map(lambda icm: (f"{icm[1][0]} [{icm[2]}]", run_case(relayc, tmp, icm[0], icm[1], a.v, icm[2])),
                                  cases))
    skipped = []
    for name, err in results:
        if err == "SKIP":
            skipped.append(name)
        elif err:
            failed += 1
            print(f"FAIL {name}: {err}")
        else:
            passed += 1
    if skipped:
        print(f"gradcheck: skipped {len(skipped)} (an operator the rule emits is not registered): "
              + ", ".join(skipped[:6]) + (" ..." if len(skipped) > 6 else ""))
    print(f"gradcheck: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
