#!/usr/bin/env python3
"""Writes the test_dynamic_op_*.relay goldens: TVM's tests/python/relay/dyn/test_dynamic_op_level*.py
(the dyn.* operators: shape-like arguments given as tensors, spec/passes.md 11.6).

Each golden is one TVM test function; each of its cases is a function `@caseN` whose parameters
have the test's types (the data's static shape, the shape-like inputs as tensors of the test's
dtype), so inside `@caseN` the shapes are only known at run time; `@main` calls every case on
make_any_goldens.py's scrambled data and the test's literal shape-like values, and prints each
result's shape and position-weighted checksum against numpy's own reference computed here (see
make_any_goldens.py's docstring; the runner compares checksums within 1e-5). The references are
numpy expressions written from the operators' definitions (spec/ops.md), not TVM's helpers:
np.reshape/squeeze/tile/pad/broadcast_to/full, index arithmetic for the resizes and one_hot, a
stable argsort for topk.

A `_d2s` golden beside a run golden holds the same calls with the shape-like values written as
constants: `--pass=DynamicToStatic --print` must turn every dyn.* call into its static operator
with those values as attributes and a static result type (AFTER: `*_d2s.expected.relay`, printed by
relayc and checked against the table of spec/passes.md 4.2 by hand when written).

Type-inference-only tests (size_var shapes) are in ../op_types/test_dynamic_op_level*.relay
(symbolic n, c, h, w replaced by numbers as in op_types/README.md).
Run: /usr/bin/python3 tests/golden/tvm/run/make_dyn_goldens.py
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_any_goldens import (Case, F, I, Input, L, T, checksum_np, checksum_relay, data,  # noqa: E402
                              float64_out, shape_out)

TVM = "tests/python/relay/dyn"


def golden(stem, test, cases, header=(), d2s=None):
    """Writes test_dynamic_op_<stem>.relay; `d2s` (a list of (params, body) with constant
    shape-like values) also writes <stem>_d2s.relay for DynamicToStatic."""
    defs, lets, results, outs = [], [], [], []
    for i, c in enumerate(cases):
        params = ", ".join(f"%p{j}: {inp.vtype}" for j, inp in enumerate(c.inputs))
        ret = f" -> {c.ret}" if c.ret else ""
        defs.append(f"def @case{i}({params}){ret} {{\n  {c.body}\n}}\n")
        texts, arrays = zip(*(data(inp, j) for j, inp in enumerate(c.inputs)))
        lets.append(f"let %r{i} = @case{i}({', '.join(texts)});")
        want = c.ref(*arrays)
        wants = list(want) if isinstance(want, tuple) else [want]
        parts = [f"%r{i}.{k}" for k in range(len(wants))] if isinstance(want, tuple) else [f"%r{i}"]
        for part, w in zip(parts, wants):
            w = np.asarray(w)
            results.append(f"(shape_of({part}), {checksum_relay(part, w.size)})")
            outs.append(f"({shape_out(w.shape)}, {float64_out(checksum_np(w))})")
    name = f"test_dynamic_op_{stem}"
    with open(os.path.join(HERE, name + ".relay"), "w") as f:
        f.write(f"// Ported from TVM {TVM}/{test}: every case, in order (@case0 ...).\n")
        for line in header:
            f.write(f"// {line}\n")
        f.write("// Expected: each result's shape and numpy's checksum (make_dyn_goldens.py). The second RUN\n")
        f.write("// line: DynamicToStatic leaves @caseN dynamic (its shape-like inputs are parameters).\n")
        out = "(" + ", ".join(outs) + ")" if len(outs) > 1 else outs[0]
        for run in ("--run %s", "--pass=DynamicToStatic --run %s"):
            f.write(f"// RUN: relayc {run}\n")
        f.write(f"// OUT: {out}\n")
        f.write('#[version = "0.0.5"]\n')
        for d in defs:
            f.write(d)
        f.write("def @main() {\n")
        for line in lets:
            f.write(f"  {line}\n")
        res = "(" + ",\n   ".join(results) + ")" if len(results) > 1 else results[0]
        f.write(f"  {res}\n}}\n")
    if d2s:
        with open(os.path.join(HERE, name + "_d2s.relay"), "w") as f:
            f.write(f"// TVM {TVM}/{test}'s cases with the shape-like inputs as constants: DynamicToStatic\n")
            f.write("// makes each dyn.* call static (spec/passes.md 4.2; make_dyn_goldens.py).\n")
            f.write("// RUN: relayc --pass=DynamicToStatic --print %s\n")
            f.write(f"// AFTER: {name}_d2s.expected.relay\n")
            f.write('#[version = "0.0.5"]\n')
            for i, (params, body) in enumerate(d2s):
                f.write(f"def @case{i}({params}) {{\n  {body}\n}}\n")


def lit(values, dtype):
    """A literal vector (or scalar) in the text."""
    return data(L((len(values),) if isinstance(values, (list, tuple)) else (), values, dtype), 0)[0]


def d2s_cases(cases, static_from=1):
    """The d2s form of run cases: inputs from `static_from` on (negative: counted from the end)
    become literal constants."""
    out = []
    for c in cases:
        first = static_from if static_from >= 0 else len(c.inputs) + static_from
        params = ", ".join(f"%p{j}: {inp.vtype}" for j, inp in enumerate(c.inputs[:first]))
        body = c.body
        for j in range(len(c.inputs) - 1, first - 1, -1):
            body = body.replace(f"%p{j}", data(c.inputs[j], j)[0])
        out.append((params, body))
    return out


# ---- resize references (spec/ops.md: coordinate transformation, then nearest or linear) ----------

def src_coord(o, n_in, n_out, mode):
    if mode == "align_corners":
        return o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0 * o
    if mode == "asymmetric":
        return o * n_in / n_out
    return (o + 0.5) * n_in / n_out - 0.5


def axis_weights(n_in, n_out, method, mode):
    """(n_out, n_in) matrix: output position from input positions along one axis."""
    o = np.arange(n_out, dtype=np.float64)
    x = src_coord(o, n_in, n_out, mode)
    w = np.zeros((n_out, n_in))
    if method == "nearest_neighbor":
        idx = np.floor(x + 0.5) if mode == "align_corners" else np.floor(x)
        idx = np.clip(idx.astype(np.int64), 0, n_in - 1)
        w[np.arange(n_out), idx] = 1.0
    else:
        lo = np.floor(x)
        frac = x - lo
        lo = lo.astype(np.int64)
        w[np.arange(n_out), np.clip(lo, 0, n_in - 1)] += 1.0 - frac
        w[np.arange(n_out), np.clip(lo + 1, 0, n_in - 1)] += frac
    return w


def resize_ref(x, axes, out_sizes, method, mode):
    """x resized along `axes` to `out_sizes`, in float64, cast back to x's dtype."""
    y = x.astype(np.float64)
    for ax, n_out in zip(axes, out_sizes):
        w = axis_weights(y.shape[ax], n_out, method, mode)
        y = np.moveaxis(np.tensordot(w, np.moveaxis(y, ax, 0), axes=(1, 0)), 0, ax)
    return y.astype(x.dtype)


# ---- level 2 --------------------------------------------------------------------------------------

def level2():
    cases = []
    for dshape, sh, sw, layout, method, ac in [((1, 16, 32, 32), 3, 2.0, "NCHW", "nearest_neighbor", False),
                                               ((1, 16, 32, 32), 5, 2.0, "NCHW", "bilinear", True),
                                               ((1, 16, 32, 32), 2.0, 6, "NHWC", "nearest_neighbor", False),
                                               ((1, 16, 32, 32), 2.0, 2.0, "NHWC", "bilinear", True)]:
        axes = (2, 3) if layout == "NCHW" else (1, 2)
        outs = (int(dshape[axes[0]] * sh), int(dshape[axes[1]] * sw))
        mode = "align_corners" if ac else "asymmetric"
        meth = "nearest_neighbor" if method == "nearest_neighbor" else "linear"
        body = (f'dyn.nn.upsampling(%p0, %p1, %p2, layout="{layout}", method="{method}", '
                f'align_corners={ac})')
        cases.append(Case([F(dshape, dshape), L((), sh, "float32"), L((), sw, "float32")], body,
                          lambda x, a, b, axes=axes, outs=outs, meth=meth, mode=mode:
                          resize_ref(x, axes, outs, meth, mode)))
    golden("level2_upsampling_run", "test_dynamic_op_level2.py::test_dyn_upsampling_run", cases,
           ["The scales are float32 scalars (TVM's relay.nn.upsampling with Expr scales is dyn.nn.upsampling)."],
           d2s=d2s_cases(cases))

    cases = []
    for dshape, sd, sh, sw, layout, method, mode in [
            ((1, 1, 1, 1, 1), 2, 3, 4, "NCDHW", "nearest_neighbor", "asymmetric"),
            ((1, 8, 16, 16, 16), 2.0, 3.0, 4.0, "NCDHW", "nearest_neighbor", "asymmetric"),
            ((1, 8, 16, 16, 16), 2.0, 5.0, 1.0, "NCDHW", "trilinear", "align_corners"),
            ((1, 20, 3, 4, 16), 2.0, 2.0, 2.0, "NDHWC", "nearest_neighbor", "asymmetric"),
            ((1, 8, 4, 16, 15), 2.0, 2.0, 2.0, "NDHWC", "trilinear", "align_corners")]:
        axes = (2, 3, 4) if layout == "NCDHW" else (1, 2, 3)
        outs = tuple(int(round(dshape[a] * s)) for a, s in zip(axes, (sd, sh, sw)))
        meth = "nearest_neighbor" if method == "nearest_neighbor" else "linear"
        body = (f'dyn.nn.upsampling3d(%p0, %p1, %p2, %p3, layout="{layout}", method="{method}", '
                f'coordinate_transformation_mode="{mode}")')
        cases.append(Case([F(dshape, dshape), L((), sd, "float32"), L((), sh, "float32"),
                           L((), sw, "float32")], body,
                          lambda x, a, b, c, axes=axes, outs=outs, meth=meth, mode=mode:
                          resize_ref(x, axes, outs, meth, mode)))
    golden("level2_upsampling3d_run", "test_dynamic_op_level2.py::test_dyn_upsampling3d_run", cases,
           d2s=d2s_cases(cases))

    cases = []
    for dshape, pw, pv, dtype in [((4, 10, 7, 7), ((1, 1), (2, 2), (3, 3), (4, 4)), 2.0, "int32"),
                                  ((2, 7), ((1, 4), (2, 2)), 4.0, "float64"),
                                  ((4, 10, 7, 7), ((1, 1), (2, 2), (3, 3), (4, 4)), None, "float64"),
                                  ((2, 7), ((1, 4), (2, 2)), None, "int32")]:
        x = I(dshape, dshape, 1000, dtype) if dtype == "int32" else F(dshape, dshape, dtype)
        inputs = [x, L((len(dshape), 2), pw, "int64")]
        fill = 0 if pv is None else pv
        if pv is None:
            # TVM's relay.nn.pad(x, pad_width_var) pads with const(0) (an int32 scalar)
            body = "dyn.nn.pad(%p0, %p1, 0)"
        else:
            inputs.append(L((), pv, dtype))
            body = "dyn.nn.pad(%p0, %p1, %p2)"
        cases.append(Case(inputs, body, lambda x, w, *v, pw=pw, fill=fill:
                          np.pad(x, pw, "constant", constant_values=fill)))
    golden("level2_pad", "test_dynamic_op_level2.py::test_dyn_pad", cases,
           ["TVM asserts the type Tensor[(?, ...), dtype] and compares with np.pad; the default-fill",
            "cases pass TVM's const(0), an int32 scalar, to float64 data."],
           d2s=d2s_cases(cases))


# ---- level 3 --------------------------------------------------------------------------------------

def level3():
    cases = [Case([F(s, s), L((len(n),), n, "int64")], "dyn.reshape(%p0, %p1)",
                  lambda x, _, o=o: np.reshape(x, o))
             for s, n, o in [((2, 3, 4), (8, 3), (8, 3)), ((4, 7), (2, 7, 2), (2, 7, 2)),
                             ((2, 3, 4), (4, 0, 2), (4, 3, 2)), ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
                             ((2, 3, 4), (0, -1), (2, 12)), ((2, 3, 4), (-1, 0), (8, 3)),
                             ((2, 3, 4), (-3, 4), (6, 4)), ((2, 3, 4, 5), (-3, -3), (6, 20)),
                             ((2, 3, 4), (0, -3), (2, 12))]]
    golden("level3_reshape", "test_dynamic_op_level3.py::test_dyn_reshape", cases,
           ["TVM's check_grad of each case is in ../../grad (dyn.reshape's gradient); here the values."],
           d2s=d2s_cases(cases))

    cases = [Case([F(s, s), F(n, n)], "dyn.reshape(%p0, shape_of(%p1))", lambda x, y, o=n: np.reshape(x, o))
             for s, n in [((2, 3, 4), (8, 3)), ((4, 7), (2, 7, 2))]]
    golden("level3_shape_reshape", "test_dynamic_op_level3.py::test_dyn_shape_reshape", cases)

    cases = [Case([F(s, s), L((len(a),), a, "int64")], "dyn.squeeze(%p0, %p1)",
                  lambda x, _, a=a: np.squeeze(x, axis=tuple(a)))
             for s, a in [((1, 3, 1), [0]), ((1, 2, 1, 2, 1), [0, 2])]]
    golden("level3_squeeze", "test_dynamic_op_level3.py::test_squeeze", cases, d2s=d2s_cases(cases))

    cases = []
    for dtype in ["float16", "float32"]:
        for o, axis, k in [((2, 2, 1), 2, 1), ((2, 1, 2), 1, 1), ((1, 2, 2), 0, 1), ((2, 2, 1, 1), 2, 2),
                           ((2, 1, 1, 1, 2), 1, 3), ((1, 1, 1, 1, 2, 2), 0, 4)]:
            cases.append(Case([F((2, 2), (2, 2), dtype), L((), axis, "int64")],
                              f"dyn.expand_dims(%p0, %p1, num_newaxis={k})",
                              lambda x, _, o=o: x.reshape(o)))
    golden("level3_expand_dims", "test_dynamic_op_level3.py::test_dyn_expand_dims", cases)

    cases = [Case([F(s, s), L((len(r),), r, "float32")], "dyn.tile(%p0, %p1)",
                  lambda x, _, r=r: np.tile(x, r))
             for s, r in [((2, 3, 4), (3, 2, 1)), ((2, 3, 4), (1, 2)), ((2, 3), (3, 2, 1))]]
    golden("level3_tile", "test_dynamic_op_level3.py::test_dyn_tile", cases,
           ["The reps are a float32 tensor, as in TVM's test."], d2s=d2s_cases(cases))

    cases = []
    for shape, dtype in [((1, 3), "int64"), ((8, 9, 1, 2), "float32")]:
        rank = len(shape)
        for op, ref in [("zeros", np.zeros), ("ones", np.ones)]:
            cases.append(Case([L((rank,), shape, "int64")], f'dyn.{op}(%p0, dtype="{dtype}")',
                              lambda _, s=shape, d=dtype, ref=ref: ref(s, d),
                              ret=T(("?",) * rank, dtype)))
    golden("level3_zeros_ones", "test_dynamic_op_level3.py::test_dyn_zeros_ones", cases,
           ["TVM's type assertion Tensor[(?, ...), dtype] is each @caseN's return annotation."],
           d2s=d2s_cases(cases, 0))

    cases = [Case([L((), v, d), L((len(s),), s, "int64")], f'dyn.full(%p0, %p1, dtype="{d}")',
                  lambda f, _, s=s, d=d: np.full(s, f, d))
             for v, s, d in [(4, (1, 3, 4, 4), "int32"), (4, (1, 3, 4, 4), "int64"), (4.0, (2, 50), "float32")]]
    golden("level3_full", "test_dynamic_op_level3.py::test_dyn_full", cases, d2s=d2s_cases(cases, 1))

    cases = []
    for idx, vals, dflt, oshape, want in [
            (1, 3, 0, [5], [0, 3, 0, 0, 0]),
            ([0, 1, 4], [3, 3, 3], 0, [5], [3, 3, 0, 0, 3]),
            ([[0, 0], [1, 2]], [1, 2], 0, [3, 4], [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]),
            ([[0, 0, 0], [1, 2, 3]], [1, 2], 4, [2, 3, 4],
             [[[1, 4, 4, 4], [4, 4, 4, 4], [4, 4, 4, 4]], [[4, 4, 4, 4], [4, 4, 4, 4], [4, 4, 4, 2]]]),
            ([0, 1, 4], [3.1, 3.1, 3.1], 3.5, [5], [3.1, 3.1, 3.5, 3.5, 3.1]),
            (1, 3, None, [5], [0, 3, 0, 0, 0])]:
        ia, va = np.array(idx), np.array(vals)
        inputs = [L(ia.shape, ia, str(ia.dtype)), L(va.shape, va, str(va.dtype))]
        if dflt is None:
            body = "dyn.sparse_to_dense(%p0, %p1, 0, %p2)"  # TVM's default const(0): int32
        else:
            da = np.array(dflt)
            inputs.append(L((), da, str(da.dtype)))
            body = "dyn.sparse_to_dense(%p0, %p1, %p2, %p3)"
        inputs.append(L((len(oshape),), oshape, "int64"))
        cases.append(Case(inputs, body, lambda *a, w=np.array(want, va.dtype): w))
    # test_dyn_copy, test_dyn_copy_scalar, test_dyn_cast: TVM's text programs, as @case0 (data: (15, 3)
    # and (7,) inputs in place of the tests' random ones)
    x = Input("Tensor[(?, 3), int64]", (15, 3), "int64", kind="i", high=1000)
    golden("level3_copy", "test_dynamic_op_level3.py::test_dyn_copy",
           [Case([x], "copy(%p0)", lambda a: a, ret="Tensor[(?, 3), int64]")])
    golden("level3_copy_scalar", "test_dynamic_op_level3.py::test_dyn_copy_scalar",
           [Case([L((), 3, "int32"), Input("Tensor[(?), int32]", (7,), "int32", kind="i", high=1000)],
                 "%0 = copy(%p0);\n  %1 = expand_dims(%0, axis=0);\n  %2 = (%p1, %1);\n  concatenate(%2)",
                 lambda a, b: np.concatenate((b, np.expand_dims(a, axis=0))), ret="Tensor[(?), int32]")])
    golden("level3_cast", "test_dynamic_op_level3.py::test_dyn_cast",
           [Case([x], 'cast(%p0, dtype="int32")', lambda a: a.astype("int32"), ret="Tensor[(?, 3), int32]")])

    golden("level3_sparse_to_dense", "test_dynamic_op_level3.py::test_dyn_sparse_to_dense", cases,
           ["Expected: the test's own arrays (xpected). Index/value arrays are int64/float64 (numpy's",
            "defaults); the last case's default value is TVM's const(0), an int32 scalar with int64 values."],
           d2s=d2s_cases(cases, -1))


# ---- level 4 --------------------------------------------------------------------------------------

def strided_ref(x, begin, end, strides, mode):
    """The leading len(begin) axes sliced (spec/ops.md strided_slice: negative values count from
    the end, then begin and end are clamped to the axis; size mode takes end as a length, -1 to
    the end, with stride 1)."""
    for ax, b in enumerate(begin):
        n = x.shape[ax]
        s = 1 if mode == "size" else strides[ax]
        b = b + n if b < 0 else b
        if mode == "size":
            e = n if end[ax] < 0 else b + end[ax]
        else:
            e = end[ax] + n if end[ax] < 0 else end[ax]
        lo, hi = (0, n) if s > 0 else (-1, n - 1)
        b, e = min(max(b, lo), hi), min(max(e, lo), hi)
        x = np.take(x, np.arange(b, e, s, dtype=np.int64), axis=ax)
    return x


def level4():
    cases = []
    for dshape, b, e, s, mode, dtype in [
            ((1, 224, 224, 3), [0, 20, 20, 0], [1, 140, 140, 3], [1, 1, 1, 1], "end", "int64"),
            ((3, 4, 3), [1, 1, 0], [4, 4, 3], [2, 1, 1], "end", "int16"),
            ((3, 4, 3), [0, 0, 0], [4, -5, 4], [1, -1, 2], "end", "int32"),
            ((3, 4, 3), [1, 1, 0], [4, 4, 3], None, "end", "int32"),
            ((3, 4, 3), [1, 1, 0], [4, 1000, 3], None, "end", "int32"),
            ((3, 4, 3), [1, 1, 0], [4, 4, 4], None, "end", "int32"),
            ((3, 4, 3), [1, 1, 0], [4, 4, 3], None, "end", "int32"),
            ((3, 4, 3), [1, -1, 0], [4, -5, 3], [2, -1, 1], "end", "int32"),
            ((3, 4, 3), [1, -1, 0], [2, -3, 3], [1, -1, 1], "end", "int32"),
            ((20, 10, 5), [20, 10, 4], [0, 0, 1], [-1, -3, -2], "end", "int32"),
            ((3, 4, 3), [1, 0, 0], [3, -1, 3], [1, 1, 1], "size", "int32"),
            ((3, 4, 3), [1, 0, 0], [-1, 2, 3], [1, 1, 1], "size", "int32"),
            ((3, 4, 3), [0], [2], None, "end", "int32"),
            ((3, 4, 3), [1], [4], [2], "end", "int32"),
            ((3, 4, 3), [1, 0], [4, 2], [2, 1], "end", "int32")]:
        n = len(b)
        s = (s * n if len(s) == 1 else s) if s else [1] * n
        static = dshape[n:]
        ret = T(("?",) * n + static) if static else None
        mode_attr = ', slice_mode="size"' if mode == "size" else ""
        cases.append(Case([F(dshape, dshape), L((n,), b, dtype), L((n,), e, dtype), L((n,), s, dtype)],
                          f"dyn.strided_slice(%p0, %p1, %p2, %p3{mode_attr})",
                          lambda x, *_, b=b, e=e, s=s, mode=mode: strided_ref(x, b, e, s, mode), ret=ret))
    golden("level4_strided_slice", "test_dynamic_op_level4.py::test_dynamic_strided_slice", cases,
           ["TVM's test_ref=False case (size mode, end [3, -1, 3]) is run here too, against numpy.",
            "Where axes stay static, TVM asserts them: the @caseN return annotation."],
           d2s=d2s_cases(cases))


# ---- level 5 --------------------------------------------------------------------------------------

def level5():
    cases = []
    for method in ["linear", "nearest_neighbor"]:
        for layout in ["NCHW", "NHWC"]:
            for dshape, scale in [((1, 4, 4, 4), 2), ((2, 8, 17, 20), 7)]:
                axes = (1, 2) if layout == "NHWC" else (2, 3)
                size = [dshape[axes[0]] * scale, dshape[axes[1]] * scale]
                mode = "asymmetric" if method == "nearest_neighbor" else "align_corners"
                # TVM's relay.image.resize2d(x, size_var, None, ...): roi None becomes [0., 0., 0., 0.]
                body = (f"dyn.image.resize2d(%p0, %p1, {lit([0.0, 0.0, 0.0, 0.0], 'float32')}, "
                        f'layout="{layout}", method="{method}", coordinate_transformation_mode="{mode}", '
                        f'rounding_method="")')
                cases.append(Case([F(dshape, dshape), L((2,), size, "int64")], body,
                                  lambda x, _, axes=axes, size=size, method=method, mode=mode:
                                  resize_ref(x, axes, size, method, mode)))
    golden("level5_resize2d", "test_dynamic_op_level5.py::test_resize2d", cases,
           ["TVM's Python passes rounding_method=\"\" (nearest: floor unless align_corners), the text",
            "default is \"round\" (spec/ops.md 15.1), so it is written out; roi None is [0f, 0f, 0f, 0f]."],
           d2s=d2s_cases(cases))


# ---- level 6 --------------------------------------------------------------------------------------

def topk_ref(x, k, axis, ret_type, is_ascend, dtype):
    order = np.argsort(x if is_ascend else -x, axis=axis, kind="stable")
    kk = k if k >= 1 else x.shape[axis]
    idx = np.take(order, np.arange(kk), axis=axis)
    vals = np.take_along_axis(x, idx, axis=axis)
    idx = idx.astype(dtype)
    return {"both": (vals, idx), "values": vals, "indices": idx}[ret_type]


def level6():
    cases = []
    for k in [0, 1, 5]:
        for axis in [0, -1, 1]:
            for ret_type in ["both", "values", "indices"]:
                for is_ascend, dtype in [(True, "int64"), (False, "float32")]:
                    body = (f'dyn.topk(%p0, %p1, axis={axis}, ret_type="{ret_type}", is_ascend={is_ascend}, '
                            f'dtype="{dtype}")')
                    cases.append(Case([F((20, 100), (20, 100)), L((1,), [k], "float32")], body,
                                      lambda x, _, k=k, axis=axis, r=ret_type, a=is_ascend, d=dtype:
                                      topk_ref(x, k, axis, r, a, d)))
    golden("level6_topk", "test_dynamic_op_level6.py::test_dynamic_topk", cases,
           ["k is a float32 tensor of shape (1,), as in TVM's test; the data has no ties (make_any_goldens'",
            "scramble), so the order is numpy's argsort's."], d2s=d2s_cases(cases[::6]))


# ---- level 10 -------------------------------------------------------------------------------------

def one_hot_ref(idx, depth, on, off, axis, dtype):
    hot = (idx[..., None] == np.arange(depth)).astype(np.int64)
    out = np.where(hot == 1, on, off).astype(dtype)
    return np.moveaxis(out, -1, axis if axis >= 0 else out.ndim - 1)


def level10():
    cases = [Case([F((12,), (12,)), L((2,), (4, 3), "int64"), L((3,), (3, 4, 3), "int64")],
                  "dyn.broadcast_to(dyn.reshape(%p0, %p1), %p2)",
                  lambda x, *_: np.broadcast_to(np.reshape(x, (4, 3)), (3, 4, 3)))]
    for xs, os_ in [((1,), (1, 1, 1)), ((1, 1), (4, 1, 1)), ((4, 1), (1, 4, 3))]:
        cases.append(Case([F(xs, xs), L((len(os_),), os_, "int64")], "dyn.broadcast_to(%p0, %p1)",
                          lambda x, _, o=os_: np.broadcast_to(x, o), ret=T(("?",) * len(os_))))
    golden("level10_broadcast_to", "test_dynamic_op_level10.py::test_broadcast_to", cases,
           ["Case 0 is verify_more_dynamic_broadcast_to (a dyn.reshape feeding it)."], d2s=d2s_cases(cases))

    cases = [Case([I((1,), (1,), 256, "uint8"), L((3,), (1, 1, 1), "int64")], "dyn.broadcast_to(%p0, %p1)",
                  lambda x, _: np.broadcast_to(x, (1, 1, 1)), ret=T(("?",) * 3, "uint8"))]
    golden("level10_dyn_broadcast_to", "test_dynamic_op_level10.py::test_dyn_broadcast_to", cases)

    cases = []
    for ishape, depth, on, off, axis, dtype in [((3,), 3, 1, 0, -1, "int32"), ((3,), 3, 1.0, 0.0, -1, "float32"),
                                                ((2, 2), 5, 2, -2, 0, "int32"),
                                                ((2, 2), 5, 0.5, -0.5, 1, "float32"),
                                                ((3, 2, 4, 5), 6, 1, 0, 1, "int32"),
                                                ((3, 2, 4, 5), 6, 1.0, 0.0, 0, "float32")]:
        onv, offv = np.array(on), np.array(off)  # relay.const: int64 -> int32, float -> float32
        cdt = "int32" if onv.dtype.kind == "i" else "float32"
        body = (f'dyn.one_hot(%p0, {lit(on, cdt)}, {lit(off, cdt)}, %p1, axis={axis}, dtype="{dtype}")')
        cases.append(Case([I(ishape, ishape, depth), L((), depth, "int32")], body,
                          lambda i, _, depth=depth, on=on, off=off, axis=axis, dtype=dtype:
                          one_hot_ref(i, depth, on, off, axis, dtype)))
    golden("level10_one_hot", "test_dynamic_op_level10.py::test_dyn_one_hot", cases, d2s=d2s_cases(cases))


def shape_dtypes():
    """Not a TVM test: TVM's dyn relations check no dtype of the shape-like inputs (their own tests
    pass float32 reps, k and size), so every dyn operator takes them in any numeric dtype here too,
    float values truncated (as TVM's DynamicToStatic and shape functions cast them)."""
    cases = [
        Case([F((2, 3, 4), (2, 3, 4)), L((2,), (8.0, 3.0), "float32")], "dyn.reshape(%p0, %p1)",
             lambda x, _: x.reshape(8, 3)),
        Case([F((1, 3, 1), (1, 3, 1)), L((1,), (0,), "uint8")], "dyn.squeeze(%p0, %p1)", lambda x, _: x[0]),
        Case([F((1, 3), (1, 3)), L((2,), (2.0, 3.0), "float64")], "dyn.broadcast_to(%p0, %p1)",
             lambda x, _: np.broadcast_to(x, (2, 3))),
        Case([L((2,), (2.7, 2.2), "float32")], 'dyn.zeros(%p0, dtype="float32")', lambda _: np.zeros((2, 2), "float32")),
        Case([L((), 4, "int32"), L((2,), (2, 3), "int8")], 'dyn.full(%p0, %p1, dtype="int32")',
             lambda f, _: np.full((2, 3), 4, "int32")),
        Case([I((3,), (3,), 3), L((), 3.0, "float32")], 'dyn.one_hot(%p0, 1f, 0f, %p1, dtype="float32")',
             lambda i, _: one_hot_ref(i, 3, 1.0, 0.0, -1, "float32")),
        Case([F((2, 2), (2, 2)), L((), 1.0, "float32")], "dyn.expand_dims(%p0, %p1)", lambda x, _: x.reshape(2, 1, 2)),
        Case([F((3, 4, 3), (3, 4, 3)), L((3,), (1, 1, 0), "float32"), L((3,), (3, 4, 3), "float32"),
              L((3,), (1, 1, 1), "float32")], "dyn.strided_slice(%p0, %p1, %p2, %p3)",
             lambda x, *_: x[1:3, 1:4, 0:3]),
        Case([F((2, 3), (2, 3)), L((2, 2), ((1, 0), (0, 2)), "float32")], "dyn.nn.pad(%p0, %p1, 0f)",
             lambda x, _: np.pad(x, ((1, 0), (0, 2)))),
        Case([L((3,), (0, 1, 4), "int64"), L((3,), (3, 3, 3), "int32"), L((1,), (5.0,), "float32")],
             "dyn.sparse_to_dense(%p0, %p1, 0, %p2)", lambda *_: np.array([3, 3, 0, 0, 3], "int32")),
    ]
    golden("extra_shape_dtypes", "(none: TVM's dyn relations, src/relay/op/dyn/)", cases,
           ["Not a TVM test: TVM's dyn relations check no dtype of the shape-like inputs (its own tests",
            "pass float32 reps, k and size), so relayc takes any numeric dtype too, float values",
            "truncated as TVM's DynamicToStatic casts them (relayc required integers until session 15)."],
           d2s=d2s_cases(cases, -1)[:3] + d2s_cases(cases[3:4], 0) + d2s_cases(cases[4:], 1))


ALL = [level2, level3, level4, level5, level6, level10, shape_dtypes]

if __name__ == "__main__":
    names = sys.argv[1:]
    for fn in ALL:
        if not names or fn.__name__ in names:
            fn()
