#!/usr/bin/env python3
"""Writes the test_any_*.relay goldens: TVM's tests/python/relay/test_any.py (operators on tensors
whose types have `?` dimensions, run on concrete data).

Every case is a function `@caseN` whose parameters carry the test's types (`?` where TVM has
relay.Any()); `@main` calls it on data of the test's static shape. Data: a fixed scramble both
sides compute exactly, v[i] = (i * 7919 + 1000 k) mod 10007 for the k-th input, as float32 times
2^-14 (in [0, 0.62)), or mod `high` for integer inputs, or v >= 5000 for bools; shape-only cases
of large convolutions take zeros. Each case's result is printed as its shape (`shape_of`) and,
where TVM compares values, a position-weighted checksum in float64,
sum(result.flat[i] * (i + 1)), that numpy computes here on its own reference (the test's numpy
expression): the runner compares it within 1e-5. Shape-only TVM checks (assert_shape) print the
shape alone. Run: /usr/bin/python3 tests/golden/tvm/run/make_any_goldens.py
"""
import os

import numpy as np

HERE = os.environ.get("GOLDEN_DIR") or os.path.dirname(os.path.abspath(__file__))
TVM = "tests/python/relay/test_any.py"
A = "?"


# ---- inputs -------------------------------------------------------------------------------------

class Input:
    """One argument of a case: its declared type (with ?), its static shape and how it is made."""

    def __init__(self, vtype, shape, dtype="float32", kind="f", high=None, value=None):
        self.vtype, self.shape, self.dtype, self.kind = vtype, tuple(shape), dtype, kind
        self.high, self.value = high, value


def T(dims, dtype="float32"):
    body = ", ".join(str(d) for d in dims)
    if len(dims) == 1:
        body += ","
    return f"Tensor[({body}), {dtype}]" if dims else dtype


def F(dims, shape, dtype="float32"):
    return Input(T(dims, dtype), shape, dtype)


def I(dims, shape, high, dtype="int32"):
    return Input(T(dims, dtype), shape, dtype, kind="i", high=high)


def Z(dims, shape, dtype="float32"):
    return Input(T(dims, dtype), shape, dtype, kind="z")


def L(dims, value, dtype="int32"):
    """A literal array (the test's own values)."""
    value = np.asarray(value, dtype=dtype)
    return Input(T(dims, dtype), value.shape, dtype, kind="lit", value=value)


def scramble_np(n, k):
    return (np.arange(n, dtype=np.int64) * 7919 + 1000 * k) % 10007


def scramble_relay(n, k):
    return (f'floor_mod(add(multiply(arange(0i64, {n}i64, 1i64, dtype="int64"), 7919i64), '
            f'{1000 * k}i64), 10007i64)')


def dims_text(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


def scalar_text(v, dtype):
    if dtype == "bool":
        return "True" if v else "False"
    if dtype.startswith("float"):
        suffix = {"float32": "f", "float64": "f64", "float16": "f16"}[dtype]
        return f"{float(v)!r}{suffix}".replace(".0f", "f").replace(".0f64", "f64")
    suffix = {"int32": "", "int64": "i64", "int16": "i16"}.get(dtype)
    if suffix is None:
        return f'cast({int(v)}, dtype="{dtype}")'
    return f"{int(v)}{suffix}"


def data(inp, k):
    """(relay text, numpy array) of one input."""
    n = int(np.prod(inp.shape))
    if inp.kind == "lit":
        flat = inp.value.reshape(-1)
        if inp.value.ndim == 0:
            return scalar_text(inp.value.item(), inp.dtype), inp.value
        items = ", ".join(scalar_text(v, inp.dtype) for v in flat)
        text = f"stack(({items}{',' if len(flat) == 1 else ''}), axis=0)"
        if len(flat) == 0:
            text = f'zeros(shape=[0], dtype="{inp.dtype}")'
        if inp.value.ndim != 1:
            text = f"reshape({text}, newshape={dims_text(inp.shape)})"
        return text, inp.value
    if inp.kind == "z":
        return f'zeros(shape={dims_text(inp.shape)}, dtype="{inp.dtype}")', np.zeros(inp.shape, inp.dtype)
    v_np, v_relay = scramble_np(n, k), scramble_relay(n, k)
    if inp.kind == "f":
        arr = (v_np.astype(np.float32) * np.float32(2.0 ** -14)).astype(inp.dtype)
        text = f'multiply(cast({v_relay}, dtype="float32"), 6.103515625e-05f)'
        if inp.dtype != "float32":
            text = f'cast({text}, dtype="{inp.dtype}")'
    elif inp.kind == "i":
        arr = (v_np % inp.high).astype(inp.dtype)
        text = f'cast(floor_mod({v_relay}, {inp.high}i64), dtype="{inp.dtype}")'
    else:  # bool
        arr = v_np >= 5000
        text = f"greater_equal({v_relay}, 5000i64)"
    if len(inp.shape) == 0:
        return f"reshape({text}, newshape=[])", arr.reshape(())
    return f"reshape({text}, newshape={dims_text(inp.shape)})", arr.reshape(inp.shape)


# ---- results ------------------------------------------------------------------------------------

def checksum_np(a):
    flat = np.asarray(a).reshape(-1).astype(np.float64)
    return float(np.sum(flat * np.arange(1, flat.size + 1, dtype=np.float64)))


def checksum_relay(expr, n):
    return (f'sum(multiply(cast(reshape({expr}, newshape=[-1]), dtype="float64"), '
            f'arange(1f64, {n + 1}f64, 1f64, dtype="float64")))')


def shape_out(shape):
    """shape_of's value; of a scalar it is the scalar 0 (TVM's quirk, spec/ops.md 6.6 and 15.18)."""
    return "[" + ", ".join(str(d) for d in shape) + "]" if len(shape) else "0"


def float64_out(v):
    text = repr(v)
    return (text[:-2] if text.endswith(".0") else text) + "f64"


class Case:
    """fn: the body over %p0, %p1 ...; ref: numpy function of the arrays giving the expected array
    (or a tuple of arrays), or None with shapes: TVM only asserts the shape(s)."""

    def __init__(self, inputs, body, ref=None, shapes=None, ret=None, note=""):
        self.inputs, self.body, self.ref, self.shapes, self.ret = inputs, body, ref, shapes, ret
        self.note = note


def golden(name, test, cases, header=(), extra_defs=""):
    defs, lets, results, outs = [], [], [], []
    for i, c in enumerate(cases):
        params = ", ".join(f"%p{j}: {inp.vtype}" for j, inp in enumerate(c.inputs))
        ret = f" -> {c.ret}" if c.ret else ""
        defs.append(f"def @case{i}({params}){ret} {{\n  {c.body}\n}}\n")
        texts, arrays = zip(*(data(inp, j) for j, inp in enumerate(c.inputs))) if c.inputs else ((), ())
        lets.append(f"let %r{i} = @case{i}({', '.join(texts)});")
        if c.ref is not None:
            want = c.ref(*arrays)
            wants = list(want) if isinstance(want, tuple) else [want]
            parts = [f"%r{i}.{k}" for k in range(len(wants))] if isinstance(want, tuple) else [f"%r{i}"]
            for part, w in zip(parts, wants):
                w = np.asarray(w)
                results.append(f"(shape_of({part}), {checksum_relay(part, w.size)})")
                outs.append(f"({shape_out(w.shape)}, {float64_out(checksum_np(w))})")
        else:
            shapes = c.shapes if isinstance(c.shapes, list) else [c.shapes]
            parts = [f"%r{i}.{k}" for k in range(len(shapes))] if isinstance(c.shapes, list) else [f"%r{i}"]
            for part, s in zip(parts, shapes):
                results.append(f"shape_of({part})")
                outs.append(shape_out(s))
    path = os.path.join(HERE, f"test_any_{name}.relay")
    with open(path, "w") as f:
        f.write(f"// Ported from TVM {TVM}::{test}: every case, in order (@case0 ...).\n")
        for line in header:
            f.write(f"// {line}\n")
        f.write("// Expected: each result's shape (TVM's ref_out_shape or numpy's) and, where TVM compares\n")
        f.write("// values, numpy's checksum; from make_any_goldens.py (data and checksum: its docstring).\n")
        f.write("// RUN: relayc --run %s\n")
        out = "(" + ", ".join(outs) + ")" if len(outs) > 1 else outs[0]
        f.write(f"// OUT: {out}\n")
        f.write('#[version = "0.0.5"]\n')
        f.write(extra_defs)
        for d in defs:
            f.write(d)
        f.write("def @main() {\n")
        for line in lets:
            f.write(f"  {line}\n")
        res = "(" + ",\n   ".join(results) + ")" if len(results) > 1 else results[0]
        f.write(f"  {res}\n}}\n")


# ---- the tests ----------------------------------------------------------------------------------

def broadcast():
    cases = []
    for xs, ys, xn, yn in [((A,), (3, 2), (1,), (3, 2)), ((A, 2), (1, 2), (1, 2), (1, 2)),
                           ((A, 2), (1, 2), (3, 2), (1, 2)), ((A, 2), (3, 2), (1, 2), (3, 2)),
                           ((A, 2), (3, A), (1, 2), (3, 1)), ((A,), (3, 2), (2,), (3, 2)),
                           ((A, 2), (3, 2), (3, 2), (3, 2))]:
        cases.append(Case([F(xs, xn), F(ys, yn)], "add(%p0, %p1)", np.add))
    golden("broadcast", "test_any_broadcast", cases)


def error_golden(name, lines, defs, main, exit_code, errs, npz=None):
    """A rejected case: exit status and relayc's message (ERR lines, filled in from its output)."""
    run = "// RUN: relayc --run %s"
    if npz is not None:
        np.savez(os.path.join(HERE, f"test_any_{name}.npz"), **npz)
        run += f" --inputs %d/test_any_{name}.npz"
    with open(os.path.join(HERE, f"test_any_{name}.relay"), "w") as f:
        for line in lines:
            f.write(f"// {line}\n")
        f.write(f"{run}\n// EXIT: {exit_code}\n")
        for e in errs:
            f.write(f"// ERR: {e}\n")
        f.write('#[version = "0.0.5"]\n' + defs + main)


BROADCAST_FAIL_ERRS = {
    n: (2, [f"test_any_broadcast_fail_{n}.npz: 'y' holds {held} but the parameter %y "
            f"has type {declared}"])
    for n, held, declared in [(1, "Tensor[(4, 2), float32]", "Tensor[(3, 2), float32]"),
                              (2, "Tensor[(4, 2), float32]", "Tensor[(3, 2), float32]"),
                              (3, "Tensor[(4, 1), float32]", "Tensor[(3, ?), float32]"),
                              (5, "Tensor[(4, 2), float32]", "Tensor[(3, 2), float32]")]}
BROADCAST_FAIL_ERRS[4] = (1, ["error: add: incompatible broadcast: "
                              "Tensor[(?, 2), float32] and Tensor[(3, 3), float32] (dimension 2 vs 3)",
                              "|   add(%x, %y)"])


def broadcast_fail():
    """Each failing case is its own golden: the inputs come from an .npz, as TVM passes them at run
    time to @main's parameters of the declared types; a run-time error (exit 3)."""
    for i, (xs, ys, xn, yn) in enumerate([((A,), (3, 2), (1,), (4, 2)), ((A, 2), (3, 2), (4, 2), (4, 2)),
                                          ((A, 2), (3, A), (1, 2), (4, 1)), ((A, 2), (3, 3), (1, 3), (3, 3)),
                                          ((A,), (3, 2), (2,), (4, 2))]):
        _, x = data(F(xs, xn), 0)
        _, y = data(F(ys, yn), 1)
        error_golden(f"broadcast_fail_{i + 1}",
                     [f"Ported from TVM {TVM}::test_any_broadcast_fail, case {i + 1}: add of {T(xs)} and",
                      f"{T(ys)} given data of shapes {xn} and {yn} (from the .npz), which do not broadcast.",
                      "TVM: a TVMError when run; relayc: an error when the inputs are bound or when add runs."],
                     "", f"def @main(%x: {T(xs)}, %y: {T(ys)}) {{\n  add(%x, %y)\n}}\n",
                     *BROADCAST_FAIL_ERRS.get(i + 1, (3, [])), npz={"x": x, "y": y})


def elemwise():
    golden("elemwise", "test_any_elemwise", [
        Case([F((A,), (3,))], "sqrt(%p0)", np.sqrt),
        Case([F((A, 2), (5, 2))], "negative(%p0)", np.negative),
        Case([F((A, A), (5, 4))], "exp(%p0)", np.exp),
        Case([F((A,), (3,))], "round(%p0)", np.round)])


def full_like():
    cases = []
    for op, npop in (("zeros_like", np.zeros_like), ("ones_like", np.ones_like)):
        cases += [Case([F((A, A, A), (2, 3, 5))], f"{op}(%p0)", npop),
                  Case([F((A, A, A), (225, 115, 15))], f"{op}(%p0)", npop),
                  Case([I((A,) * 5, (10, 11, 12, 13, 14), 100)], f"{op}(%p0)", npop)]
    golden("full_like", "test_any_full_like", cases)


def full():
    cases = []
    for shape, op, dtype, value in [((2, 3, 5), "zeros", "float32", None), ((225, 115, 15), "zeros", "float32", None),
                                    ((10, 11, 12, 13, 14), "zeros", "int32", None),
                                    ((2, 3, 5), "ones", "float32", None), ((225, 115, 15), "ones", "float32", None),
                                    ((10, 11, 12, 13, 14), "ones", "int32", None),
                                    ((10, 11, 12, 13, 14), "full", "float32", 2.0), ((1, 2, 3, 4), "full", "int32", -2)]:
        shp = L((len(shape),), shape)
        if value is None:
            body = f'dyn.{op}(%p0, dtype="{dtype}")'
            ref = (lambda s, op=op, dtype=dtype: getattr(np, op)(tuple(s), dtype))
        else:
            body = f'dyn.full({scalar_text(value, dtype)}, %p0, dtype="{dtype}")'
            ref = (lambda s, value=value, dtype=dtype: np.full(tuple(s), value, dtype))
        cases.append(Case([shp], body, ref))
    golden("full", "test_any_full", cases,
           ["relay.zeros/ones/full with a shape tensor x are dyn.zeros/dyn.ones/dyn.full."])


def concat():
    x4 = [F((A, 3), (1, 3)) for _ in range(3)] + [F((A, A), (1, 3))]
    cases = [
        Case([F((A, 2), (3, 2)), F((1, 2), (1, 2))],
             "concatenate((subtract(%p0, 3f), multiply(%p1, 5f)), axis=0)",
             lambda x, y: np.concatenate([x - np.float32(3), y * np.float32(5)], axis=0)),
        Case([F((A,), (1,)) for _ in range(25)],
             "concatenate((" + ", ".join(f"%p{j}" for j in range(25)) + "), axis=0)",
             lambda *xs: np.concatenate(xs, axis=0)),
        Case(x4, "concatenate((%p0, %p1, %p2, %p3), axis=0)", lambda *xs: np.concatenate(xs, 0),
             ret=T((A, 3))),
        Case(x4, "concatenate((%p0, %p1, %p2, %p3), axis=1)", lambda *xs: np.concatenate(xs, 1),
             ret=T((A, A))),
        Case([F((1, 3), (1, 3)), F((1, A), (1, 3))], "concatenate((%p0, %p1), axis=0)",
             lambda *xs: np.concatenate(xs, 0), ret=T((2, A))),
        Case([F((1, 3), (1, 3)), F((1, A), (1, 3))], "concatenate((%p0, %p1), axis=1)",
             lambda *xs: np.concatenate(xs, 1), ret=T((1, A))),
    ]
    golden("concat", "test_any_concat", cases,
           ["The four test_oshape type assertions are @case2..5's annotated result types (the",
            "relation's type must equal them: (?, 3), (?, ?), (2, ?), (1, ?)), run as well."])


def reshape():
    cases = []
    for newshape, xn, out in [((1, -1), (2, 3, 4), (1, 24)), ((0, -1), (2, 3, 4), (2, 12))]:
        for variable in (False, True):
            if variable:
                cases.append(Case([F((A, A, A), xn), L((len(newshape),), newshape, "int64")],
                                  "dyn.reshape(nn.relu(%p0), %p1)",
                                  lambda x, s, out=out: np.maximum(x, 0).reshape(out)))
            else:
                cases.append(Case([F((A, A, A), xn)], f"reshape(nn.relu(%p0), newshape={dims_text(newshape)})",
                                  lambda x, out=out: np.maximum(x, 0).reshape(out)))
    for newshape, xn, out in [((0, -2), (2, 3, 4), (2, 3, 4)), ((-4, -1, 2, -3), (6, 3, 4), (3, 2, 12)),
                              ((-4, 2, -1, -2), (6, 3, 4), (2, 3, 3, 4)), ((1, -1, 0), (2, 3, 4), (1, 6, 4)),
                              ((-1, 1, 0), (2, 3, 4), (6, 1, 4))]:
        cases.append(Case([F((A, A, A), xn)], f"reshape(nn.relu(%p0), newshape={dims_text(newshape)})",
                          lambda x, out=out: np.maximum(x, 0).reshape(out)))
    golden("reshape", "test_any_reshape", cases,
           ["Order: (1, -1) const then variable, (0, -1) const then variable (variable newshape:",
            "dyn.reshape on an int64 shape tensor), then the five constant ones."])


def one_hot_np(idx, on, off, depth, axis, dtype):
    out = np.eye(depth, dtype=dtype)[idx]
    out = np.where(out == 1, np.asarray(on, dtype), np.asarray(off, dtype)).astype(dtype)
    return np.moveaxis(out, -1, axis) if axis != -1 else out


def one_hot():
    cases = []
    for dims, shape, depth, on, off, axis, dtype in [((A,), (3,), 3, 1, 0, -1, "int32"),
                                                     ((A, A), (2, 2), 5, 0.5, -0.5, 1, "float32"),
                                                     ((A,) * 4, (3, 2, 4, 5), 6, 1.0, 0.0, 0, "float32")]:
        cases.append(Case([I(dims, shape, depth)],
                          f"one_hot(%p0, {scalar_text(on, dtype)}, {scalar_text(off, dtype)}, depth={depth}, "
                          f'axis={axis}, dtype="{dtype}")',
                          lambda i, depth=depth, on=on, off=off, axis=axis, dtype=dtype:
                              one_hot_np(i, on, off, depth, axis, dtype)))
    golden("one_hot", "test_any_one_hot", cases)


def take():
    cases = []
    for ds, isz, axis, dn, inn in [((A, A), (1,), 0, (4, 5), (1,)), ((A, A), (), 0, (4, 5), ()),
                                   ((A, A), (), None, (4, 5), ()), ((A, A, A), (A, A), 1, (3, 4, 5), (2, 3)),
                                   ((A, A), (A, A, A), None, (4, 5), (2, 3, 4)),
                                   ((A, A), (A, A, A, A), -1, (4, 5), (2, 3, 4, 5))]:
        high = int(np.prod(dn)) if axis is None else dn[axis]
        attr = "" if axis is None else f", axis={axis}"
        cases.append(Case([F(ds, dn), I(isz, inn, high)], f"take(%p0, %p1{attr})",
                          lambda d, i, axis=axis: np.take(d, i, axis=axis)))
    golden("take", "test_any_take", cases)


def tile():
    cases = []
    for dims, reps, dn in [((A, A, A), (3, 2, 1), (2, 3, 4)), ((A, A, A), (1, 2), (2, 3, 4)),
                           ((A, A), (3, 2, 1), (2, 3)), ((A, A, A), (1,), (2, 3, 4))]:
        cases.append(Case([F(dims, dn)], f"tile(%p0, reps={dims_text(reps)})",
                          lambda x, reps=reps: np.tile(x, reps)))
    golden("tile", "test_any_tile", cases)


def shape_of_cases():
    golden("shape_of", "test_any_shape_of", [
        Case([F((A, A), (3, 4))], 'shape_of(%p0, dtype="int64")', lambda x: np.array([3, 4], "int64")),
        Case([F((A, A, A), (2, 3, 4))], 'take(shape_of(%p0, dtype="int64"), 1)', lambda x: np.array(3, "int64"))],
        ["relay.shape_of's Python default dtype is int32; the test expects int64 values, so the",
         "text spells dtype=\"int64\" (the values are what is checked)."])


def reduce_cases():
    cases = []
    for op, dims, axis, exclude, keepdims, sn, out in [
            ("argmax", (A,) * 3, None, False, False, (3, 4, 5), ()),
            ("argmin", (A,) * 4, 1, False, True, (3, 4, 5, 6), (3, 1, 5, 6)),
            ("all", (A,) * 3, (1, 2), True, False, (3, 4, 5), (4, 5)),
            ("max", (A,) * 4, -1, True, True, (3, 4, 5, 6), (1, 1, 1, 6)),
            ("min", (A,) * 3, (0, 1), False, False, (4, 5, 6), (6,)),
            ("prod", (A,) * 4, 2, True, True, (3, 4, 5, 6), (1, 1, 5, 1)),
            ("mean", (A,) * 2, 0, False, False, (1, 2), (2,)),
            ("variance", (A,) * 5, (2, 4), False, False, (3, 4, 5, 6, 7), (3, 4, 6))]:
        inp = Input(T(dims, "bool"), sn, "bool", kind="b") if op == "all" else F(dims, sn)
        ax = "" if axis is None else (f"axis={dims_text(axis)}, " if isinstance(axis, tuple) else f"axis=[{axis}], ")
        body = f"{op}(%p0, {ax}keepdims={keepdims}, exclude={exclude})"
        if op == "variance":
            body = f"variance(%p0, mean(%p0, {ax}keepdims=True, exclude={exclude}), {ax}keepdims={keepdims}, exclude={exclude})"
        cases.append(Case([inp], body, shapes=out))
    golden("reduce", "TestAnyReduce::test_any_reduce", cases,
           ["variance is written as the Python helper builds it: variance(data, mean(data, keepdims=True))."])


def layout_transform():
    cases = []
    for dims, src, dst, sn, out in [((A,) * 4, "NCHW", "NHWC", (3, 4, 5, 6), (3, 5, 6, 4)),
                                    ((A,) * 5, "NCHW16c", "NCHW2c", (1, 2, 8, 8, 16), (1, 16, 8, 8, 2)),
                                    ((A,) * 5, "NCHW6n", "NHWC", (3, 4, 5, 6, 6), (18, 5, 6, 4)),
                                    ((A,) * 4, "NCHW", "NCHW4c", (3, 4, 5, 6), (3, 1, 5, 6, 4)),
                                    ((16, 1), "CH", "C4cH", (16, 1), (4, 4, 1))]:
        cases.append(Case([F(dims, sn)], f'layout_transform(%p0, src_layout="{src}", dst_layout="{dst}")',
                          shapes=out))
    golden("layout_transform", "test_any_layout_transform", cases)


def expand_dims():
    golden("expand_dims", "test_any_expand_dims", [
        Case([F((A,) * 3, (1, 2, 3))], "expand_dims(%p0, axis=1, num_newaxis=2)", shapes=(1, 1, 1, 2, 3)),
        Case([F((A,) * 3, (1, 2, 3))], "expand_dims(%p0, axis=-1, num_newaxis=2)", shapes=(1, 2, 3, 1, 1))])


def transpose():
    cases = []
    for dims, axes, sn in [((A,) * 3, (1, 0, 2), (10, 3, 2)), ((A,) * 3, None, (2, 3, 4)),
                           ((A,) * 6, (0, 1, 3, 2, 5, 4), (11, 12, 2, 1, 9, 17)), ((A,) * 2, (-1, 0), (3, 2))]:
        attr = "" if axes is None else f", axes={dims_text(axes)}"
        cases.append(Case([F(dims, sn)], f"transpose(%p0{attr})", lambda x, axes=axes: np.transpose(x, axes)))
    golden("transpose", "test_any_transpose", cases)


def squeeze():
    cases = []
    for dims, axis, sn, sq in [((A, A, A), (0,), (1, 9, 8), False), ((1, A, A), (0,), (1, 9, 8), False),
                               ((1, A, A, 1, A, A), (0, 3), (1, 12, 2, 1, 9, 17), False),
                               ((1, A, 12, 32, 1), (-1,), (1, 100, 12, 32, 1), True),
                               ((A, A, A, 1), (-1,), (1, 9, 8, 1), True)]:
        body = f"squeeze(%p0, axis={dims_text(axis)})"
        if sq:
            body = f"sqrt({body})"
        cases.append(Case([F(dims, sn)], body,
                          lambda x, axis=axis, sq=sq: np.sqrt(np.squeeze(x, axis)) if sq else np.squeeze(x, axis)))
    golden("squeeze", "test_any_squeeze", cases)


def reshape_like():
    golden("reshape_like", "test_any_reshape_like", [
        Case([F((A, 3, 10), (3, 3, 10)), F((A, 5, 6), (3, 5, 6))], "reshape_like(%p0, %p1)", shapes=(3, 5, 6))])


def conv2d():
    cases = []
    for dims, ks, pad, dil, sn, out, layout in [
            ((A, 64, 224, 224), (64, 64, 3, 3), 1, 1, (1, 64, 224, 224), (1, 64, 224, 224), "NCHW"),
            ((A, 64, 224, 224), (64, 64, 3, 3), 1, 2, (2, 64, 224, 224), (2, 64, 222, 222), "NCHW"),
            ((A, 64, 224, 224), (64, 64, 3, 3), 1, 1, (1, 64, 224, 224), (1, 64, 224, 224), "NCHW"),
            ((A, 224, 224, 64), (3, 3, 64, 64), 1, 1, (1, 224, 224, 64), (1, 224, 224, 64), "NHWC"),
            ((A, 224, 224, 64), (3, 3, 64, 64), 1, 2, (2, 224, 224, 64), (2, 222, 222, 64), "NHWC"),
            ((A, 64, A, A), (64, 64, 3, 3), 1, 1, (1, 64, 224, 224), (1, 64, 224, 224), "NCHW"),
            ((A, 64, A, A), (64, 64, 1, 1), 0, 1, (1, 64, 224, 224), (1, 64, 224, 224), "NCHW")]:
        kl = "OIHW" if layout == "NCHW" else "HWIO"
        kshape = ks[2:4] if layout == "NCHW" else ks[0:2]
        lay = "" if layout == "NCHW" else f', data_layout="{layout}", kernel_layout="{kl}"'
        cases.append(Case([Z(dims, sn), Z(ks, ks)],
                          f"nn.conv2d(%p0, %p1, padding=[{pad}, {pad}], dilation=[{dil}, {dil}], "
                          f"kernel_size={dims_text(kshape)}{lay})", shapes=out))
    golden("conv2d", "test_any_conv2d", cases,
           ["The third case is the cudnn variant (plain conv2d on a CPU). Zeros as data: TVM checks shapes."])


def conv2d_transpose():
    golden("conv2d_transpose_nchw", "test_any_conv2d_transpose_nchw", [
        Case([Z((A, 64, 224, 224), (2, 64, 224, 224)), Z((64, 192, 3, 3), (64, 192, 3, 3))],
             "nn.conv2d_transpose(%p0, %p1, channels=192, kernel_size=[3, 3], padding=[1, 1])",
             shapes=(2, 192, 224, 224)),
        Case([Z((A, 32, 224, 224), (1, 32, 224, 224)), Z((32, 64, 3, 3), (32, 64, 3, 3))],
             "nn.conv2d_transpose(%p0, %p1, channels=64, kernel_size=[3, 3], strides=[2, 2], padding=[1, 1], "
             "output_padding=[1, 1])", shapes=(1, 64, 448, 448))],
        ["TVM's Python call passes no channels (inferred from the weight); the text spells them."])


def conv1d_transpose():
    golden("conv1d_transpose_ncw", "test_any_conv1d_transpose_ncw", [
        Case([Z((A, 64, 224), (2, 64, 224)), Z((64, 192, 3), (64, 192, 3))],
             "nn.conv1d_transpose(%p0, %p1, kernel_size=[3], strides=[1], output_padding=[0, 0], padding=[1], "
             "dilation=[1])", shapes=(2, 192, 224)),
        Case([Z((A, 32, 224), (1, 32, 224)), Z((32, 64, 3), (32, 64, 3))],
             "nn.conv1d_transpose(%p0, %p1, kernel_size=[3], strides=[2], output_padding=[1, 1], padding=[1], "
             "dilation=[1])", shapes=(1, 64, 448))],
        ["TVM passes a two-value output_padding to the 1-D operator; its relation reads the first."])


def crop_and_resize():
    golden("crop_and_resize", "test_any_crop_and_resize", [
        Case([Z((1, 234, 234, 256), (1, 234, 234, 256)), Z((A, 4), (128, 4)), I((A,), (128,), 1)],
             'image.crop_and_resize(%p0, %p1, %p2, crop_size=[14, 14], layout="NHWC")', shapes=(128, 14, 14, 256)),
        Case([Z((1, 256, 234, 234), (1, 256, 234, 234)), Z((A, 4), (128, 4)), I((A,), (128,), 1)],
             "image.crop_and_resize(%p0, %p1, %p2, crop_size=[14, 14])", shapes=(128, 256, 14, 14))],
        ["Zero boxes; box indices 0 (TVM casts uniform [0, 1) values to int32). TVM checks shapes."])


def grid_sample():
    golden("grid_sample", "test_any_grid_sample", [
        Case([F((A, 4, 16, 32), (4, 4, 16, 32)), F((4, 2, 8, 8), (4, 2, 8, 8))], "image.grid_sample(%p0, %p1)",
             shapes=(4, 4, 8, 8)),
        Case([F((A, 4, 16, 32), (4, 4, 16, 32)), F((4, 2, 32, 32), (4, 2, 32, 32))], "image.grid_sample(%p0, %p1)",
             shapes=(4, 4, 32, 32))],
        ["TVM checks shapes."])


def affine_grid():
    golden("affine_grid", "test_any_affine_grid", [
        Case([F((A, 2, 3), (1, 2, 3))], "image.affine_grid(%p0, target_shape=[16, 32])", shapes=(1, 2, 16, 32)),
        Case([F((A, 2, 3), (8, 2, 3))], "image.affine_grid(%p0, target_shape=[32, 32])", shapes=(8, 2, 32, 32))],
        ["TVM checks shapes."])


def pool2d():
    golden("pool2d", "test_any_pool2d", [
        Case([F((A, 3, A, A), (2, 3, 220, 220))],
             "nn.max_pool2d(%p0, pool_size=[3, 3], padding=[1, 1, 1, 1])", shapes=(2, 3, 220, 220)),
        Case([F((A, A, A, 4), (3, 220, 220, 4))],
             'nn.avg_pool2d(%p0, pool_size=[1, 1], strides=[2, 2], layout="NHWC")', shapes=(3, 110, 110, 4)),
        Case([F((A, 3, A, A, 4), (2, 3, 220, 220, 4))],
             'nn.max_pool2d(%p0, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], layout="NCHW4c")',
             shapes=(2, 3, 110, 110, 4))])


def global_pool2d():
    golden("global_pool2d", "test_any_global_pool2d", [
        Case([F((A, 3, A, A), (2, 3, 220, 220))], "nn.global_max_pool2d(%p0)", shapes=(2, 3, 1, 1)),
        Case([F((A, A, A, 4), (3, 220, 220, 4))], 'nn.global_avg_pool2d(%p0, layout="NHWC")', shapes=(3, 1, 1, 4)),
        Case([F((A, 3, A, A, 4), (2, 3, 220, 220, 4))], 'nn.global_max_pool2d(%p0, layout="NCHW4c")',
             shapes=(2, 3, 1, 1, 4))])


def split():
    cases = []
    for dims, ios, axis, sn, outs in [((A, 4), 2, -1, (9, 4), [(9, 2), (9, 2)]), ((A, 4), 2, 1, (9, 4), [(9, 2), (9, 2)]),
                                      ((A, A), 2, 1, (9, 4), [(9, 2), (9, 2)]),
                                      ((A, 12), (1, 4, 8), 1, (7, 12), [(7, 1), (7, 3), (7, 4)]),
                                      ((A, A), (1, 4, 8), 1, (7, 12), [(7, 1), (7, 3), (7, 4)]),
                                      ((A, 12), (8,), 1, (7, 12), [(7, 8), (7, 4)]),
                                      ((A, A), (8,), 1, (7, 12), [(7, 8), (7, 4)])]:
        ios_text = str(ios) if isinstance(ios, int) else dims_text(ios)
        cases.append(Case([F(dims, sn)], f"split(%p0, indices_or_sections={ios_text}, axis={axis})", shapes=outs))
    golden("split", "test_any_split", cases)


def batch_flatten():
    golden("batch_flatten", "test_any_batch_flatten",
           [Case([F((A, A, A), (3, 3, 10))], "nn.batch_flatten(%p0)", shapes=(3, 30))])


def dense():
    golden("dense", "TestAnyDense::test_any_dense", [
        Case([F((A, A), (4, 16)), F((A, A), (8, 16))], "nn.dense(%p0, %p1)", shapes=(4, 8)),
        Case([F((A, A), (4, 40)), F((50, A), (50, 40))], "nn.dense(%p0, %p1, units=50)", shapes=(4, 50))],
        ["test_any_dense_cublas is the same cases on cuBLAS: not applicable (CPU only)."])


def batch_matmul():
    cases = []
    for xs, ys in [((1, 16, 32), (1, 32, 16)), ((5, 16, 32), (5, 32, 16)), ((5, 16, 32), (5, 32, 20)),
                   ((30, 16, 32), (30, 32, 20))]:
        for any_x, any_y in [("none", "batch"), ("none", "all"), ("batch", "none"), ("batch", "batch"),
                             ("batch", "all")]:
            for tx in (True, False):
                for ty in (True, False):
                    def var(shape, kind):
                        if kind == "none":
                            return shape
                        if kind == "batch":
                            return (A,) + shape[1:]
                        return (A,) * len(shape)
                    x_shape = (xs[0], xs[2], xs[1]) if tx else xs
                    y_shape = (ys[0], ys[2], ys[1]) if ty else ys
                    xv, yv = var(x_shape, any_x), var(y_shape, any_y)

                    def ref(x, y, tx=tx, ty=ty):
                        a = np.transpose(x, (0, 2, 1)) if tx else x
                        b = np.transpose(y, (0, 2, 1)) if ty else y
                        return np.matmul(a.astype(np.float64), b.astype(np.float64))
                    cases.append(Case([F(xv, x_shape), F(yv, y_shape)],
                                      f"nn.batch_matmul(%p0, %p1, transpose_a={tx}, transpose_b={ty})", ref))
    golden("batch_matmul", "TestAnyBatchMatmul::test_any_batch_matmul", cases,
           ["Shapes x any-combination x transpose_x x transpose_y, in that nesting (80 cases; TVM runs",
            "each on the vm and debug executors). numpy's product in float64."])


def pad():
    golden("pad", "test_any_pad", [
        Case([F((A,) * 3, (1, 2, 3))], "nn.pad(%p0, 0f, pad_width=[[0, 0], [1, 1], [2, 2]])",
             lambda x: np.pad(x, ((0, 0), (1, 1), (2, 2)))),
        Case([F((A,) * 4, (13, 11, 3, 1))], "nn.pad(%p0, 0f, pad_width=[[1, 0], [1, 3], [0, 2], [9, 0]])",
             lambda x: np.pad(x, ((1, 0), (1, 3), (0, 2), (9, 0))))])


def shape_only(name, test, op_cases):
    golden(name, test, [Case([F(d, s)], body, shapes=s) for d, s, body in op_cases])


def activations():
    shape_only("softmax", "test_any_softmax", [((A,) * 3, (1, 2, 3), "nn.softmax(%p0, axis=-1)"),
                                               ((A,) * 4, (13, 11, 3, 1), "nn.softmax(%p0, axis=2)")])
    shape_only("relu", "test_any_relu", [((A,) * 3, (1, 2, 3), "nn.relu(%p0)"),
                                         ((A,) * 4, (13, 11, 3, 1), "nn.relu(%p0)")])
    shape_only("leaky_relu", "test_any_leaky_relu", [((A,) * 3, (1, 2, 3), "nn.leaky_relu(%p0, alpha=0.1f)"),
                                                     ((A,) * 4, (13, 11, 3, 1), "nn.leaky_relu(%p0, alpha=0.2f)")])
    # TVM's prelu alpha has one value for 2 (and 11) channels: the ? channel axis hides the
    # mismatch its own relation rejects for static shapes. relayc checks the length when the call
    # runs (prelu is no broadcasting add, unlike bias_add).
    error_golden("prelu", [
        f"Ported from TVM {TVM}::test_any_prelu, first case: nn.prelu of Tensor[(?, ?, ?), float32] data",
        "(1, 2, 3) with a (1,) alpha [1f] (channel axis 1 has 2 entries; the second case, (13, 11, 3, 1),",
        "is the same mismatch). TVM's test expects it to run (it asserts the shape (1, 2, 3)) although its",
        "relation rejects the same call with static shapes (Tensor[(1, 2, 3)]): the ? hides the length.",
        "relayc: an error when the call runs, naming both lengths. Differs from TVM on purpose",
        "(TVM_TESTS.md)."],
        "def @case(%p0: Tensor[(?, ?, ?), float32]) {\n  nn.prelu(%p0, stack((1f,), axis=0))\n}\n",
        "def @main() {\n  @case(zeros(shape=[1, 2, 3], dtype=\"float32\"))\n}\n", 3,
        ["error: nn.prelu: expected 2 values along axis 1, got 1", "  nn.prelu(%p0, stack((1f,), axis=0))"])
    golden("bias_add", "test_any_bias_add", [
        Case([F((A,) * 3, (1, 2, 3))], "nn.bias_add(%p0, stack((-0.5f,), axis=0))", lambda x: x + np.float32(-0.5)),
        Case([F((A,) * 4, (13, 11, 3, 1))], "nn.bias_add(%p0, stack((-0.5f,), axis=0))", lambda x: x + np.float32(-0.5))],
        ["TVM's bias has one value (np.random.randn(1); -0.5 here) for 2 and 11 channels: its relation",
         "cannot compare the lengths behind the ? channel axis, and bias_add lowers to a broadcasting add,",
         "so the value is added everywhere; TVM asserts the shapes, numpy's x + b gives the values.",
         "relayc refused it at run time before (\"expected 2 values along axis 1, got 1\") while its own",
         "CanonicalizeOps (-O3) broadcast it."])
    golden("bias_add_static", "test_any_bias_add", [
        Case([F((A,) * 3, (1, 2, 3))], "nn.bias_add(%p0, stack((-0.5f, 0.25f), axis=0))",
             lambda x: x + np.array([-0.5, 0.25], "float32").reshape(1, 2, 1))],
        ["Not TVM's data: the same ?-typed call with a bias of the channel count, against numpy."])


def topk():
    def ref(x, k=None, kval=0):
        s = np.argsort(-x, kind="stable")
        return s[:, 0:kval] if x.ndim == 2 else s[0:kval]
    golden("topk", "test_any_topk", [
        Case([F((A,), (10,)), L((), 5)], 'dyn.topk(%p0, %p1, ret_type="indices")',
             lambda x, k: ref(x, kval=5).astype("int32")),
        Case([I((A, A), (6, 3), 1000), L((), 2)], 'dyn.topk(%p0, %p1, ret_type="indices")',
             lambda x, k: ref(x, kval=2).astype("int32")),
        Case([F((A, A), (6, 3))], 'topk(%p0, k=3, ret_type="indices")', lambda x: ref(x, kval=3).astype("int32")),
        Case([F((A,), (0,)), L((), 0)], '(dyn.topk(%p0, %p1, ret_type="both")).0',
             lambda x, k: np.zeros((0,), "float32"), note="k = 0 on an empty tensor")],
        ["A variable k is dyn.topk (k a scalar int32 tensor); the constant k=3 is topk. The last case",
         "takes an empty (0,) tensor and k = 0: the values, shape (0,)."])


def fused_ops():
    golden("fused_ops", "test_fused_ops", [
        Case([F((A, A), (5, 4))], "multiply(add(%p0, 1f), 2f)", lambda x: (x + np.float32(1)) * np.float32(2))])


def arange_dynamic():
    golden("arange_with_dynamic_shape", "test_arange_with_dynamic_shape", [
        Case([F((A, A, A), (10, 5, 3))],
             'add(arange(0, take(shape_of(%p0), 0), 1, dtype="int32"), 1)',
             lambda x: np.arange(10, dtype="int32") + 1)],
        ["relay.arange(stop) is arange(0, stop, 1); stop is computed, so the length is only known at run time."])


def strided_slice_ref(data, begin, end, strides, slice_mode="end", axes=None):
    slices = [slice(None)] * data.ndim
    idx = range(len(begin)) if axes is None else axes
    for j, ax in enumerate(idx):
        b, e, s = int(begin[j]), int(end[j]), int(strides[j]) if strides is not None else 1
        if slice_mode == "size":
            e = data.shape[ax] if e < 0 else b + e
            s = 1
        slices[ax] = slice(b, e, s)
    return data[tuple(slices)]


def strided_slice():
    rng = np.random.default_rng(0)
    cases = []
    for bs, ds, mode, const in [((2,), (15, 21), "end", False), ((3,), (15, 17, 21), "end", False),
                                ((3,), (23, 29, 41), "end", False), ((4,), (40, 50, 60, 70), "end", False),
                                ((3,), (15, 17, 21), "size", False), ((2,), (15, 21), "end", True)]:
        b = rng.integers(0, 2, size=bs).astype("int32")
        e = rng.integers(5, 10, size=bs).astype("int32")
        s = rng.integers(1, 2 if mode == "size" else 3, size=bs).astype("int32")
        cases.append(strided_case(b, e, s, ds, mode, const))
    b, e, s = np.array([0, 1000000], "int32"), np.array([1000000, -1000000], "int32"), np.array([1, -1], "int32")
    cases.append(strided_case(b, e, s, (15, 21), "end", False))
    cases.append(strided_case(b, e, s, (15, 21), "end", True))
    cases.append(strided_case(b, e, s, (15, 17, 21), "end", True, axes=[0, 2]))
    golden("strided_slice", "test_any_strided_slice", cases,
           ["TVM's random begin/end/strides are replaced by seeded ones (numpy default_rng(0), the same",
            "ranges). Variable begin/end/strides are dyn.strided_slice; constant ones are attributes."])


def strided_case(b, e, s, ds, mode, const, axes=None):
    ref = (lambda x, *rest, b=b, e=e, s=s, mode=mode, axes=axes: strided_slice_ref(x, b, e, s, mode, axes))
    dims = (A,) * len(ds)
    if const:
        ax = "" if axes is None else f", axes={dims_text(axes)}"
        body = (f"strided_slice(%p0, begin={dims_text(b)}, end={dims_text(e)}, strides={dims_text(s)}"
                f'{ax}, slice_mode="{mode}")' if mode != "end" else
                f"strided_slice(%p0, begin={dims_text(b)}, end={dims_text(e)}, strides={dims_text(s)}{ax})")
        return Case([F(dims, ds)], body, ref)
    mode_attr = f', slice_mode="{mode}"' if mode != "end" else ""
    return Case([F(dims, ds), L((len(b),), b), L((len(e),), e), L((len(s),), s)],
                f"dyn.strided_slice(%p0, %p1, %p2, %p3{mode_attr})", ref)


def simple_shape_tests():
    golden("tuple_get_item", "test_tuple_get_item", [
        Case([F((A, 4), (9, 4))], "(split(%p0, indices_or_sections=2, axis=1)).0", shapes=(9, 2))])
    golden("ndarray_size", "test_any_ndarray_size", [
        Case([Z((A,) * len(s), s)], 'ndarray_size(%p0, dtype="int32")', lambda x: np.array(x.size, "int32"))
        for s in [(2,), (2, 2), (1, 2, 3, 4)]])
    golden("mirror_pad", "test_any_mirror_pad", [
        Case([Z((1, 256, 232, 232), (1, 256, 232, 232))],
             "nn.mirror_pad(%p0, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]])", shapes=(1, 256, 234, 234))],
        ["nn.mirror_pad's mode defaults to SYMMETRIC, as in TVM; zeros as data: TVM checks the shape."])
    golden("resize", "test_any_resize", [
        Case([F((A, 4, 4, 4), (1, 4, 4, 4))], 'image.resize2d(%p0, size=[8, 8], layout="NHWC")', shapes=(1, 8, 8, 4)),
        Case([F((A, 8, 17, 20), (2, 8, 17, 20))], "image.resize2d(%p0, size=[51, 60])", shapes=(2, 8, 51, 60))])
    golden("consecutive_broadcast", "test_any_consecutive_broadcast", [
        Case([F((A, A), (1, 4)), F((A, A), (2, 4)), F((A, A), (1, 4)), F((A, A), (2, 4))],
             "multiply(subtract(add(%p0, %p1), multiply(%p0, %p1)), subtract(add(%p2, %p3), multiply(%p2, %p3)))",
             lambda a, b, c, d: ((a + b) - (a * b)) * ((c + d) - (c * d)))])
    golden("reshape_concat", "test_reshape_concat", [
        Case([F((A, A), (4, 5)), F((A, A, A), (2, 5, 2))],
             "concatenate((reshape(%p0, newshape=[-1]), reshape(%p1, newshape=[-1])), axis=0)",
             lambda a, b: np.concatenate([a.reshape(-1), b.reshape(-1)])),
        Case([F((A, A), (4, 5)), F((A, A), (8, 5)), F((A, A, A), (2, 2, 5)), F((A, A, A), (4, 2, 5))],
             "concatenate((reshape_like(%p0, %p2), reshape_like(%p1, %p3)), axis=0)",
             lambda a, b, c, d: np.concatenate([a.reshape(c.shape), b.reshape(d.shape)], axis=0))])
    golden("repeat", "test_any_repeat", [
        Case([F(d, s)], f"repeat(%p0, repeats={r}, axis={ax})", lambda x, r=r, ax=ax: np.repeat(x, r, ax))
        for d, s, r, ax in [((A, A), (1, 2), 2, 0), ((A,), (3,), 3, -1), ((A,) * 4, (2, 1, 1, 4), 4, 2)]])
    golden("stack", "test_any_stack", [
        Case([F(d, s) for _ in range(n)], "stack((" + ", ".join(f"%p{j}" for j in range(n)) + f"), axis={ax})",
             lambda *xs, ax=ax: np.stack(xs, ax))
        for d, s, n, ax in [((A, A), (1, 2), 3, 0), ((A,), (3,), 4, -1), ((A,) * 4, (2, 1, 1, 4), 2, 2)]])


def where():
    cases = []
    for cs, xs, ys, cn, xn, yn in [((A,), (5,), (5,), (5,), (5,), (5,)), ((A,), (A,), (5,), (5,), (5,), (5,)),
                                   ((A,), (A,), (A,), (5,), (5,), (5,)), ((5,), (A,), (A,), (5,), (5,), (5,)),
                                   ((A,), (A,), (A,), (5,), (1,), (5,)), ((A,), (A, A), (A, A), (5,), (5, 5), (5, 5)),
                                   ((A,), (A,), (A, A), (5,), (5,), (5, 5)),
                                   ((A, A), (A, A), (A, A), (3, 4), (3, 1), (1, 4))]:
        cases.append(Case([Input(T(cs, "bool"), cn, "bool", kind="b"), F(xs, xn), F(ys, yn)],
                          "where(%p0, %p1, %p2)", np.where))
    cases.append(Case([I((A,), (2,), 100, "int64"), F((A, A), (2, 6))],
                      "take(%p1, where(False, add(take(%p0, 1), 4i64), 4i64), axis=1)", lambda x, y: y[:, 4]))
    golden("where", "test_any_where", cases,
           ["The last case is the scalar where in a dynamic graph. The invalid-broadcast check is",
            "test_any_where_bad_broadcast.relay."])


def mixed_input_type():
    tt = "Tensor[(?, 4), float32]"
    mixed = (f"def @mixed(%d0: (({tt}, {tt}), {tt}), %d1: {tt}) {{\n"
             "  add(multiply((%d0.0).1, %d0.1), %d1)\n}\n")
    golden("mixed_input_type", "test_mixed_input_type", [
        Case([F((A, 4), (9, 4)), F((A, 4), (9, 4))], "@mixed(((%p0, %p0), %p0), %p1)", shapes=(9, 4))],
        ["@mixed is TVM's function: a nested tuple parameter of ?-shaped tensors; TVM passes [[d0, d0], d0]."],
        extra_defs=mixed)


def where_bad_broadcast():
    error_golden("where_bad_broadcast", [
        f"Ported from TVM {TVM}::test_any_where, its invalid-broadcast check: where on three",
        "Tensor[(?, ?)] of data (3, 4), (3, 1) and (2, 4). TVM: a TVMError \"Invalid broadcast shapes\";",
        "relayc: a run-time error naming the shapes."],
        "def @case(%p0: Tensor[(?, ?), bool], %p1: Tensor[(?, ?), float32], %p2: Tensor[(?, ?), float32]) {\n"
        "  where(%p0, %p1, %p2)\n}\n",
        "def @main() {\n  @case(ones(shape=[3, 4], dtype=\"bool\"), zeros(shape=[3, 1], dtype=\"float32\"), "
        "zeros(shape=[2, 4], dtype=\"float32\"))\n}\n", 3,
        ["error: where: x and y: shapes (3, 1) and (2, 4) cannot be broadcast together"])


def recursive_concat_wrong_annotation():
    with open(os.path.join(HERE, "test_any_recursive_concat_with_wrong_annotation.relay"), "w") as f:
        f.write(f"""// Ported from TVM {TVM}::test_recursive_concat_with_wrong_annotation: TVM's while_loop helper
// (a let-bound recursive function) whose state %st is annotated Tensor[(1, 1), int32] while the
// body passes back the concatenation, Tensor[(2, 1), int32]. TVM: rejected ("unable to show the
// following types match: Tensor[(2, 1), int32] Tensor[(1, 1), int32] ... dimension 0 conflicts: 2
// does not match 1"); relayc: rejected at that argument.
// EXIT: 1
// ERR: error: argument 2 of %while_loop: expected Tensor[(1, 1), int32], found Tensor[(2, 1), int32]
#[version = "0.0.5"]
def @main(%start: int32) {{
  let %while_loop = fn (%i: int32, %st: Tensor[(1, 1), int32]) {{
    if (min(less(%i, 10))) {{
      %while_loop(add(%i, 1), concatenate((%st, reshape(%i, newshape=[1, 1])), axis=0))
    }} else {{
      (%i, %st)
    }}
  }};
  (%while_loop(%start, reshape(0, newshape=[1, 1]))).1
}}
""")


def gather_nd_ref(data, indices, batch_dims=0):
    out = []
    lead = indices.shape[1:]
    m = indices.shape[0]
    if batch_dims == 0:
        flat = indices.reshape(m, -1)
        res = np.stack([data[tuple(flat[:, j])] for j in range(flat.shape[1])])
        return res.reshape(lead + data.shape[m:])
    # batch_dims = b: the first b dims of indices' trailing shape index data's batch dims
    b = batch_dims
    res = np.empty(lead + data.shape[b + m:], data.dtype)
    for pos in np.ndindex(*lead):
        batch = pos[:b]
        idx = tuple(indices[(slice(None),) + pos])
        res[pos] = data[batch + idx]
    return res


def gather_nd():
    cases = []
    for ds, isz, dn, inn, bd in [((2, 2), (2, A), (2, 2), (2, 3), 0), ((A, 2), (2, A), (2, 2), (2, 3), 0),
                                 ((A, 2), (1, A), (10, 2), (1, 10), 1),
                                 ((A, 2, 2, 3, 4), (3, A, A), (3, 2, 2, 3, 4), (3, 3, 2), 2)]:
        cases.append(Case([F(ds, dn), I(isz, inn, 2)], f"gather_nd(%p0, %p1, batch_dims={bd}, index_rank={isz[0]})",
                          lambda d, i, bd=bd: gather_nd_ref(d, i, bd)))
    golden("gather_nd", "test_gather_nd", cases)


def scatter_gather():
    golden("scatter_nd", "test_scatter_nd", [
        Case([L((2, 2), np.zeros((2, 2)), "int64"), L((2, A), [[1, 1, 0], [0, 1, 0]], "int64"),
              L((A,), [2, 3, 0], "int64")], 'scatter_nd(%p0, %p1, %p2, mode="add")',
             lambda *a: np.array([[0, 0], [2, 3]]))],
        ["The test's own data and expected output."])
    error_golden("scatter_nd_any_updates", [
        f"Ported from TVM {TVM}::test_scatter_nd_any_updates: data (3, 3), indices (2, ?) = [[1, 1], [0, 1]],",
        "updates (2, ?) = [[2, 2], [1, 1]]. With M = 2 index rows, updates must have shape",
        "indices.shape[1:] + data.shape[2:] = (?), rank 1; TVM's relation compares only the leading",
        "extents, accepts the rank-2 updates and returns [[0, 0, 0], [0, 0, 0], [2, 2, 1]] (writes",
        "outside the indexed cells (1, 0), (1, 1)). relayc rejects the call's types. Differs from TVM on",
        "purpose (TVM_TESTS.md)."],
        "def @case(%p0: Tensor[(3, 3), int64], %p1: Tensor[(2, ?), int64], %p2: Tensor[(2, ?), int64]) {\n"
        "  scatter_nd(%p0, %p1, %p2, mode=\"add\")\n}\n",
        "def @main() {\n  @case(zeros(shape=[3, 3], dtype=\"int64\"), reshape(stack((1i64, 1i64, 0i64, 1i64), axis=0), "
        "newshape=[2, 2]), reshape(stack((2i64, 2i64, 1i64, 1i64), axis=0), newshape=[2, 2]))\n}\n", 1,
        ["error: scatter_nd: updates Tensor[(2, ?), int64] do not fit indices Tensor[(2, ?), int64] and data "
         "Tensor[(3, 3), int64]"])
    cases = []
    for ds, isz, dn, inn, axis in [((A,), (A,), (10,), (10,), 0), ((2, 2), (2, A), (2, 2), (2, 3), 1),
                                   ((A, 2), (2, A), (2, 2), (2, 3), 1), ((A, A), (A, A), (2, 3), (1, 3), 0)]:
        cases.append(Case([F(ds, dn), I(isz, inn, 2)], f"gather(%p0, %p1, axis={axis})",
                          lambda d, i, axis=axis: np.take_along_axis(d, i, axis)))
    golden("gather", "test_gather", cases)


def recursive_concat():
    loop = ("def @concat_loop(%i: int32, %st: Tensor[(?, 1), int32]) -> (int32, Tensor[(?, 1), int32]) {\n"
            "  if (min(less(%i, 10))) {\n"
            "    @concat_loop(add(%i, 1), concatenate((%st, reshape(%i, newshape=[1, 1])), axis=0))\n"
            "  } else {\n"
            "    (%i, %st)\n"
            "  }\n"
            "}\n")
    golden("recursive_concat", "test_recursive_concat", [
        Case([L((), 0)], "(@concat_loop(%p0, reshape(0, newshape=[1, 1]))).1",
             lambda s: np.array([0] + list(range(10))).reshape((11, 1)))],
        ["TVM's while_loop helper is a recursive function; here a global one."], extra_defs=loop)


ALL = [broadcast, broadcast_fail, elemwise, full_like, full, concat, reshape, one_hot, take, tile, shape_of_cases,
       reduce_cases, layout_transform, expand_dims, transpose, squeeze, reshape_like, conv2d, conv2d_transpose, conv1d_transpose, crop_and_resize, affine_grid, grid_sample,
       pool2d, global_pool2d, split, batch_flatten, dense, batch_matmul, pad, activations, topk, fused_ops,
       arange_dynamic, strided_slice, simple_shape_tests, where, gather_nd, scatter_gather, recursive_concat,
       where_bad_broadcast, recursive_concat_wrong_annotation, mixed_input_type]

if __name__ == "__main__":
    import sys
    names = sys.argv[1:]
    for fn in ALL:
        if not names or fn.__name__ in names:
            fn()
