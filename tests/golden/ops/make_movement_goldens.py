#!/usr/bin/env python3
"""Writes the goldens of TVM's data-movement operators beyond spec/ops.md (ops/kernels/k_movement.c):
tests/golden/ops/movement_*.relay (relayc's own cases: several shapes, dtypes and attribute
combinations per operator) and tests/golden/tvm/run/test_op_level*_*.relay (TVM's own test cases
of those operators, one file per verify_* call).

Every program builds its inputs in Relay from a fixed scramble both sides compute exactly,
v[i] = (37 i + 11 k) mod 97 − 48 for the k-th input (exact in every dtype used), and returns a
tuple of calls; @main's declared result type is the type TVM's relation gives (so a wrong type is
a type error), and the OUT lines are the values numpy computes here with its own reference of
each operator (written from the operator's definition, not from relayc). Run:

    /usr/bin/python3 tests/golden/ops/make_movement_goldens.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TVM_RUN = os.path.join(HERE, "..", "tvm", "run")

# ---- numpy references ---------------------------------------------------------------------------


def depth_to_space(x, b, layout="NCHW", mode="DCR"):
    if layout == "NHWC":
        return depth_to_space(x.transpose(0, 3, 1, 2), b, "NCHW", mode).transpose(0, 2, 3, 1)
    n, c, h, w = x.shape
    cf = c // (b * b)
    x = x[:, : cf * b * b]
    if mode == "DCR":  # channel = (row offset · b + column offset) · C' + c
        y = x.reshape(n, b, b, cf, h, w).transpose(0, 3, 4, 1, 5, 2)
    else:  # CRD: channel = c · b² + row offset · b + column offset
        y = x.reshape(n, cf, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(n, cf, h * b, w * b)


def space_to_depth(x, b, layout="NCHW"):
    if layout == "NHWC":
        return space_to_depth(x.transpose(0, 3, 1, 2), b, "NCHW").transpose(0, 2, 3, 1)
    n, c, h, w = x.shape
    h2, w2 = h // b, w // b
    x = x[:, :, : h2 * b, : w2 * b]
    return x.reshape(n, c, h2, b, w2, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h2, w2)


def space_to_batch_nd(x, block, pads, value=0):
    m, n = len(block), x.shape[0]
    x = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - 1 - m), constant_values=value)
    out = []
    for offs in np.ndindex(*block):  # block offsets in row-major order, each a batch of n
        out.append(x[(slice(None),) + tuple(slice(o, None, b) for o, b in zip(offs, block))])
    return np.concatenate(out, axis=0)


def batch_to_space_nd(x, block, crops):
    m = len(block)
    n = x.shape[0] // int(np.prod(block))
    full = np.empty((n,) + tuple(x.shape[i + 1] * block[i] for i in range(m)) + x.shape[m + 1:], x.dtype)
    for j, offs in enumerate(np.ndindex(*block)):
        full[(slice(None),) + tuple(slice(o, None, b) for o, b in zip(offs, block))] = x[j * n:(j + 1) * n]
    return full[(slice(None),) + tuple(slice(c0, full.shape[i + 1] - c1) for i, (c0, c1) in enumerate(crops))]


def trilu(x, k, upper):
    return np.triu(x, k) if upper else np.tril(x, k)


def reverse_sequence(x, lengths, seq_axis, batch_axis):
    out = x.copy()
    seq_axis %= x.ndim
    batch_axis %= x.ndim
    n = x.shape[seq_axis]
    for b, ln in enumerate(lengths):
        if ln <= 1:
            continue
        ln = min(ln, n)
        src = [slice(None)] * x.ndim
        src[batch_axis] = b
        dst = list(src)
        src[seq_axis] = slice(ln - 1, None, -1) if ln < n else slice(None, None, -1)
        dst[seq_axis] = slice(0, ln)
        out[tuple(dst)] = x[tuple(src)]
    return out


def sequence_mask(x, lengths, value, axis):
    out = x.copy()
    for b, ln in enumerate(lengths):
        for t in range(x.shape[axis]):
            if t >= ln:
                out[(t, b) if axis == 0 else (b, t)] = value
    return out


def matrix_set_diag(x, d, k1, k2, super_right=True, sub_right=False):
    out = x.copy()
    m, n = x.shape[-2:]
    for k in range(k1, k2 + 1):
        length = min(n - max(k, 0), m + min(k, 0))
        right = super_right if k >= 0 else sub_right
        for i in range(length):
            r, c = (i, i + k) if k >= 0 else (i - k, i)
            if k1 == k2:
                out[..., r, c] = d[..., i]
            else:
                out[..., r, c] = d[..., k2 - k, i + (d.shape[-1] - length if right else 0)]
    return out


def dilate(x, strides, value):
    shape = tuple((d - 1) * s + 1 if d else 0 for d, s in zip(x.shape, strides))
    out = np.full(shape, value, dtype=x.dtype)
    out[tuple(slice(None, None, s) for s in strides)] = x
    return out


def sliding_window(x, axis, window, strides):
    counts = [(x.shape[axis + i] - w) // s + 1 for i, (w, s) in enumerate(zip(window, strides))]
    out = np.empty(x.shape[:axis] + tuple(counts) + tuple(window), x.dtype)
    for j in np.ndindex(*counts):
        sl = tuple(slice(jj * s, jj * s + w) for jj, s, w in zip(j, strides, window))
        out[tuple([slice(None)] * axis) + j] = x[tuple([slice(None)] * axis) + sl]
    return out


# ---- inputs and printing --------------------------------------------------------------------------

SUFFIX = {"float32": "f", "float16": "f16", "float64": "f64", "int32": "", "int64": "i64", "int16": "i16",
          "int8": "i8", "uint8": "u8"}


def T(shape, dtype):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    return f"Tensor[({dims}), {dtype}]" if len(shape) else dtype


def data(shape, dtype, k=0):
    """(Relay text, numpy array) of the k-th scrambled input."""
    n = int(np.prod(shape))
    v = ((np.arange(n) * 37 + 11 * k) % 97 - 48).reshape(shape)
    text = (f'cast(reshape(subtract(floor_mod(add(multiply(arange(0, {n}, 1, start=0, stop={n}, step=1, dtype="int32"), 37), '
            f'{11 * k}), 97), 48), newshape=[{", ".join(map(str, shape))}]), dtype="{dtype}")')
    return text, v.astype(dtype)


def lit(values, dtype):
    """Relay text of a literal vector (or scalar) and its numpy array."""
    a = np.asarray(values, dtype=dtype)
    if a.ndim == 0:
        return scalar(a.item(), dtype), a
    return f'cast(stack(({", ".join(str(int(v)) if dtype != "float32" else scalar(v, "float32") for v in a.tolist())},), axis=0), dtype="{dtype}")', a


def scalar(v, dtype):
    if dtype == "bool":
        return "True" if v else "False"
    if dtype.startswith("float"):
        f = float(v)
        s = str(int(f)) if f == int(f) else repr(f)
        return s + SUFFIX[dtype]
    return str(int(v)) + SUFFIX[dtype]


def value(a):
    """a as relayc prints a tensor value."""
    dt = str(a.dtype)
    if a.ndim == 0:
        return scalar(a.item(), dt)

    def rec(x, depth):
        if x.ndim == 1:
            return "[" + ", ".join(scalar(e, dt) for e in x.tolist()) + "]"
        sep = "," + "\n" * (x.ndim - 1) + " " * (depth + 1)
        return "[" + sep.join(rec(s, depth + 1) for s in x) + "]"

    return rec(a, 0)


def value_of(r):
    """A result: an array, or a tuple (list) of arrays."""
    if isinstance(r, list):
        return "(" + ", ".join(value(a) for a in r) + ("," if len(r) == 1 else "") + ")"
    return value(r)


def type_of(r):
    if isinstance(r, list):
        return "(" + ", ".join(T(a.shape, str(a.dtype)) for a in r) + ("," if len(r) == 1 else "") + ")"
    return T(r.shape, str(r.dtype))


def write(path, header, inputs, calls, dyn=False):
    """inputs: [(name, shape, dtype)] (the k-th scramble) or [(name, relay text, array)];
    calls: [(relay call text, numpy result: an array or a list of arrays for a tuple)].
    dyn: the calls are the body of @f, whose parameters have `?` for every extent; @main calls it."""
    lets, params, args = [], [], []
    for k, (name, a, b) in enumerate(inputs):
        text, arr = data(a, b, k) if isinstance(a, tuple) else (a, b)
        lets.append(f"  let %{name} = {text};")
        params.append(f"%{name}: {T(tuple('?' for _ in arr.shape), str(arr.dtype))}")
        args.append(f"%{name}")
    results = [r for _, r in calls]
    rtype = "(" + ", ".join(type_of(r) for r in results) + ")" if len(results) > 1 else type_of(results[0])
    out = "(" + ", ".join(value_of(r) for r in results) + ")" if len(results) > 1 else value_of(results[0])
    body = "(" + ",\n   ".join(c for c, _ in calls) + ")" if len(calls) > 1 else calls[0][0]
    lines = [f"// {h}" for h in header] + ["// RUN: relayc --run %s"]
    lines += [f"// OUT: {l}".rstrip() for l in out.split("\n")]
    lines += ['#[version = "0.0.5"]']
    if dyn:
        # no result annotation on @main: @f's result type has `?` extents (TVM's any_dims), and a
        # static annotation would assert more than the type checker knows
        lines += [f"def @f({', '.join(params)}) {{", "  " + body, "}", "def @main() {"]
        lines += lets + [f"  @f({', '.join(args)})", "}"]
    else:
        lines += [f"def @main() -> {rtype} {{"] + lets + ["  " + body, "}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def inp(k, shape, dtype):
    return data(shape, dtype, k)[1]


# ---- relayc's own cases ---------------------------------------------------------------------------


def subpixel():
    cases, inputs = [], []
    specs = [((1, 8, 2, 3), "float32", "NCHW"), ((2, 2, 3, 9), "int8", "NHWC"), ((1, 10, 2, 2), "float16", "NCHW"),
             ((1, 2, 2, 4), "int64", "NHWC")]
    for k, (shape, dt, layout) in enumerate(specs):
        inputs.append((f"x{k}", shape, dt))
        x = inp(k, shape, dt)
        b = 3 if shape == (2, 2, 3, 9) else 2
        for mode in ["DCR", "CRD"]:
            cases.append((f'nn.depth_to_space(%x{k}, block_size={b}, layout="{layout}", mode="{mode}")',
                          depth_to_space(x, b, layout, mode)))
    specs2 = [((1, 2, 4, 6), "float32", "NCHW", 2), ((1, 5, 7, 2), "int32", "NHWC", 3), ((2, 1, 3, 3), "uint8", "NCHW", 1)]
    for k, (shape, dt, layout, b) in enumerate(specs2, start=len(specs)):
        inputs.append((f"x{k}", shape, dt))
        cases.append((f'nn.space_to_depth(%x{k}, block_size={b}, layout="{layout}")',
                      space_to_depth(inp(k, shape, dt), b, layout)))
    write(os.path.join(HERE, "movement_subpixel.relay"),
          ["nn.depth_to_space (DCR and CRD, NCHW and NHWC, channels not divisible by b² rounded down as TVM)",
           "and nn.space_to_depth (H and W rounded down, block_size 1) over float32/int8/float16/int64/int32/uint8.",
           "Written by make_movement_goldens.py; values from its numpy references."], inputs, cases)


def batch_space():
    cases, inputs = [], []
    specs = [((2, 3, 5, 2), "float32", [2, 3], [[1, 0], [0, 1]], 1.5), ((3, 4, 2), "int16", [4], [[2, 2]], -7),
             ((2, 2, 6, 3, 2), "float64", [1, 2, 3], [[0, 1], [1, 1], [0, 0]], 0), ((1, 4, 4), "uint8", [2, 2], [[0, 0], [0, 0]], 0)]
    for k, (shape, dt, block, pads, v) in enumerate(specs):
        inputs.append((f"x{k}", shape, dt))
        y = space_to_batch_nd(inp(k, shape, dt), block, pads, v)
        cases.append((f"nn.space_to_batch_nd(%x{k}, block_shape={block}, paddings={pads}, pad_value={v}f)", y))
    specs2 = [((12, 2, 2, 2), "float32", [2, 3], [[1, 0], [0, 1]]), ((8, 1, 3, 1), "int8", [2, 2], [[0, 0], [2, 0]]),
              ((6, 2, 2), "float16", [3], [[1, 2]])]
    for k, (shape, dt, block, crops) in enumerate(specs2, start=len(specs)):
        inputs.append((f"x{k}", shape, dt))
        cases.append((f"nn.batch_to_space_nd(%x{k}, block_shape={block}, crops={crops})",
                      batch_to_space_nd(inp(k, shape, dt), block, crops)))
    write(os.path.join(HERE, "movement_batch_space.relay"),
          ["nn.space_to_batch_nd (pad values, one to three spatial axes, trailing axes) and nn.batch_to_space_nd",
           "(crops) over float32/int16/float64/uint8/int8/float16.",
           "Written by make_movement_goldens.py; values from its numpy references."], inputs, cases)


def masks():
    inputs = [("x0", (2, 3, 4), "float32"), ("x1", (5, 5), "int8"), ("x2", (3, 4), "float16"), ("x3", (4, 3, 2), "int32"),
              ("x4", (2, 5), "float64")]
    x = [inp(k, shape, dt) for k, (_, shape, dt) in enumerate(inputs)]
    lens, lens5, vl = lit([3, 0, 9], "int64"), lit([5, 2, 11, 0, -3], "int32"), lit([2.5, 0], "float32")
    inputs += [("k", "-1i64", np.array(-1)), ("lens", *lens), ("lens5", *lens5), ("vl", *vl)]
    cases = [("trilu(%x0, 1)", trilu(x[0], 1, True)), ("trilu(%x0, %k, upper=False)", trilu(x[0], -1, False)),
             ("trilu(%x1, 0, upper=False)", trilu(x[1], 0, False)), ("trilu(%x2, 2)", trilu(x[2], 2, True)),
             ("trilu(%x2, -5, upper=False)", trilu(x[2], -5, False)),
             ("reverse_sequence(%x3, %lens, seq_axis=0, batch_axis=1)", reverse_sequence(x[3], [3, 0, 9], 0, 1)),
             ("reverse_sequence(%x1, %lens5, seq_axis=-1, batch_axis=0)", reverse_sequence(x[1], [5, 2, 11, 0, -3], -1, 0)),
             ("sequence_mask(%x3, %lens, mask_value=-1.5f)", sequence_mask(x[3], [3, 0, 9], -1, 0)),
             ("sequence_mask(%x4, %vl, mask_value=7.25f, axis=1)", sequence_mask(x[4], [2.5, 0], 7.25, 1)),
             ("sequence_mask(%x2, %lens, axis=1)", sequence_mask(x[2], [3, 0, 9], 0, 1))]
    write(os.path.join(HERE, "movement_masks.relay"),
          ["trilu (k a literal or a variable, upper and lower, k beyond the matrix), reverse_sequence (lengths <= 1",
           "kept, longer than the axis reversed whole, negative axes) and sequence_mask (axis 0 and 1, float lengths,",
           "the mask value converted to the dtype: -1.5 truncates to -1 in int32) over float32/int8/float16/int32/float64.",
           "Written by make_movement_goldens.py; values from its numpy references."], inputs, cases)


def diag_grid_index():
    inputs = [("x0", (2, 3, 4), "float32"), ("d0", (2, 4, 3), "float32"), ("x1", (4, 3), "int8"), ("d1", (2,), "int8"),
              ("x2", (3, 3), "float16"), ("d2", (3,), "float16"), ("d3", (2, 3), "float32")]
    x = [inp(k, shape, dt) for k, (_, shape, dt) in enumerate(inputs)]
    cases = []
    for sup, sub in [(True, False), (False, True), (False, False), (True, True)]:
        cases.append((f"matrix_set_diag(%x0, %d0, k1=-1, k2=2, super_diag_right_align={sup}, sub_diag_right_align={sub})",
                      matrix_set_diag(x[0], x[1], -1, 2, sup, sub)))
    cases += [("matrix_set_diag(%x1, %d1, k1=-2, k2=-2)", matrix_set_diag(x[2], x[3], -2, -2)),
              ("matrix_set_diag(%x2, %d2)", matrix_set_diag(x[4], x[5], 0, 0)),
              ("matrix_set_diag(%x0, %d3, k1=1, k2=1)", matrix_set_diag(x[0], x[6], 1, 1))]
    a, b, sc = lit([1, 2, 3], "int32"), lit([4, 5], "int32"), lit(7, "int32")
    inputs += [("a", *a), ("b", *b), ("s", *sc)]
    cases += [("meshgrid((%a, %b, %s))", [np.asarray(v) for v in np.meshgrid(a[1], b[1], sc[1], indexing="ij")]),
              ("meshgrid((%a, %b, %s), indexing=\"xy\")", [np.asarray(v) for v in np.meshgrid(a[1], b[1], sc[1], indexing="xy")]),
              ("meshgrid((%b,))", [b[1]])]
    ix, shp, perm = lit([0, 7, 23, 11], "int64"), lit([2, 3, 4], "int64"), lit([3, 0, 4, 1, 2], "int32")
    inputs += [("ix", *ix), ("shp", *shp), ("perm", *perm)]
    cases += [("unravel_index(%ix, %shp)", np.array(np.unravel_index(ix[1], shp[1]), dtype="int64")),
              ("unravel_index(17, cast(%shp, dtype=\"int32\"))", np.array(np.unravel_index(17, shp[1]), dtype="int32")),
              ("invert_permutation(%perm)", np.argsort(perm[1]).astype("int32")),
              ("invert_permutation(cast(%perm, dtype=\"int64\"))", np.argsort(perm[1]).astype("int64"))]
    write(os.path.join(HERE, "movement_diag_grid_index.relay"),
          ["matrix_set_diag (a band with each alignment of short diagonals, one sub- or super-diagonal, the main",
           "diagonal; float32/int8/float16), meshgrid (ij and xy, a scalar field, one field), unravel_index (a",
           "vector and a scalar index) and invert_permutation (int32 and int64).",
           "Written by make_movement_goldens.py; values from its numpy references."], inputs, cases)


def dilate_window():
    inputs = [("x0", (2, 3), "float32"), ("x1", (3, 1, 2), "int16"), ("x2", (2, 5, 6), "float32"), ("x3", (4,), "uint8")]
    x = [inp(k, shape, dt) for k, (_, shape, dt) in enumerate(inputs)]
    cases = [("nn.dilate(%x0, strides=[2, 3])", dilate(x[0], [2, 3], 0)),
             ("nn.dilate(%x1, strides=[1, 4, 2], dilation_value=-2f)", dilate(x[1], [1, 4, 2], -2)),
             ("nn.dilate(%x3, strides=[3], dilation_value=9f)", dilate(x[3], [3], 9)),
             ("sliding_window(%x2, axis=1, window_shape=[2, 3], strides=[2, 2])", sliding_window(x[2], 1, [2, 3], [2, 2])),
             ("sliding_window(%x1, axis=0, window_shape=[2, 1, 2], strides=[1, 1, 1])", sliding_window(x[1], 0, [2, 1, 2], [1, 1, 1])),
             ("sliding_window(%x3, axis=0, window_shape=[4], strides=[5])", sliding_window(x[3], 0, [4], [5]))]
    write(os.path.join(HERE, "movement_dilate_window.relay"),
          ["nn.dilate (strides per axis, dilation values converted to int16/uint8) and sliding_window (axis 0 and 1,",
           "strides larger than the window, a window as long as the axis).",
           "Written by make_movement_goldens.py; values from its numpy references."], inputs, cases)


# ---- TVM's tests ------------------------------------------------------------------------------------


def tvm_case(name, test, note, shape, call, ref):
    """One verify_* call of a TVM test: x of the test's shape (the scramble instead of random data)."""
    x = inp(0, shape, "float32")
    write(os.path.join(TVM_RUN, f"{name}.relay"),
          [f"Ported from TVM {test} ({note}).",
           "Expected: the result type TVM asserts (@main's annotation) and the value of the test's numpy",
           "reference on the scramble data (make_movement_goldens.py)."],
          [("x", shape, "float32")], [(call, ref(x))])


def tvm_level5():
    t = "tests/python/relay/test_op_level5.py"
    for layout in ["NHWC", "NCHW"]:
        for mode in ["DCR", "CDR"]:
            tvm_case(f"test_op_level5_depth_to_space_{layout.lower()}_{mode.lower()}", f"{t}::test_depth_to_space",
                     f"verify_depth_to_space((1, 4, 4, 4), 2, \"{layout}\", \"{mode}\")", (1, 4, 4, 4),
                     f'nn.depth_to_space(%x, block_size=2, layout="{layout}", mode="{mode}")',
                     lambda x, l=layout, m=mode: depth_to_space(x, 2, l, m))
        tvm_case(f"test_op_level5_space_to_depth_{layout.lower()}", f"{t}::test_space_to_depth",
                 f"verify_space_to_depth((1, 4, 4, 4), 2, \"{layout}\")", (1, 4, 4, 4),
                 f'nn.space_to_depth(%x, block_size=2, layout="{layout}")', lambda x, l=layout: space_to_depth(x, 2, l))
    for k, (shape, block, pads) in enumerate([((3, 3, 2, 1), [3], [[0, 0]]), ((2, 2, 4, 1), [2, 2], [[0, 0], [2, 0]])]):
        tvm_case(f"test_op_level5_space_to_batch_nd_{k + 1}", f"{t}::test_space_to_batch_nd",
                 f"verify_space_to_batch_nd({list(shape)}, {block}, {pads})", shape,
                 f"nn.space_to_batch_nd(%x, block_shape={block}, paddings={pads})",
                 lambda x, b=block, p=pads: space_to_batch_nd(x, b, p))
    for k, (shape, block, crops) in enumerate([((4, 1, 1, 3), [2, 2], [[0, 0], [0, 0]]), ((8, 1, 3, 1), [2, 2], [[0, 0], [2, 0]])]):
        tvm_case(f"test_op_level5_batch_to_space_nd_{k + 1}", f"{t}::test_batch_to_space_nd",
                 f"verify_batch_to_space_nd({list(shape)}, {block}, {crops})", shape,
                 f"nn.batch_to_space_nd(%x, block_shape={block}, crops={crops})",
                 lambda x, b=block, c=crops: batch_to_space_nd(x, b, c))


def arange_data(shape, dtype):
    """Relay text and array of arange(prod(shape)) reshaped, as the TVM tests' np.arange inputs."""
    n = int(np.prod(shape))
    return (f'cast(reshape(arange(0, {n}, 1, start=0, stop={n}, step=1, dtype="int32"), newshape=[{", ".join(map(str, shape))}]), '
            f'dtype="{dtype}")', np.arange(n).reshape(shape).astype(dtype))


def tvm_port(name, test, note, inputs, calls, dyn=False, expected="the value of the test's numpy reference"):
    write(os.path.join(TVM_RUN, f"{name}.relay"),
          [f"Ported from TVM {test} ({note}).",
           f"Expected: {expected} (check_result; @f keeps TVM's `?` extents)" if dyn else
           f"Expected: the result type TVM asserts (@main's annotation) and {expected}",
           "(make_movement_goldens.py; scrambled or arange data instead of random data)."], inputs, calls, dyn)


def tvm_level3():
    t = "tests/python/relay/test_op_level3.py"
    for i, (shape, upper, k) in enumerate([((3, 3), True, 0), ((3, 3), False, 0), ((6, 6), True, 1), ((6, 6), False, 2),
                                           ((6, 6), False, -2), ((8, 6, 6), False, -2)]):
        x = inp(0, shape, "float32")
        tvm_port(f"test_op_level3_trilu_{i + 1}", f"{t}::test_trilu", f"verify_trilu({shape}, {upper}, {k})",
                 [("data", shape, "float32")], [(f"trilu(%data, {k}, upper={upper})", trilu(x, k, upper))])
    ones = ("ones(shape=[2, 1], dtype=\"float32\")", np.ones((2, 1), "float32"))
    tvm_port("test_op_level3_trilu_shape_i64", f"{t}::test_trilu_shape_i64", "broadcast_to an int64 shape, then trilu",
             [("x", *ones)], [("broadcast_to(%x, shape=[2i64, 1i64]) + 1f", np.full((2, 1), 2, "float32")),
                              ("trilu(broadcast_to(%x, shape=[2i64, 1i64]), 0)", np.triu(np.ones((2, 1), "float32")))])
    tvm_port("test_op_level3_trilu_reduce", f"{t}::test_trilu_reduce", "trilu with an int64 k, then argmin",
             [("i0", "ones(shape=[2, 2], dtype=\"int32\")", np.ones((2, 2), "int32")), ("i1", "0i64", np.array(0, "int64"))],
             [("argmin(trilu(%i0, %i1), axis=[0])", np.triu(np.ones((2, 2), "int32")).argmin(axis=0).astype("int32"))])
    rs = [((4, 4), "int32", [1, 2, 3, 4], 1, 0), ((4, 4), "int32", [1, 2, 3, 4], -1, 0), ((4, 4), "float32", [1, 2, 3, 4], 1, 0),
          ((4, 4), "int32", [1, 2, 3, 4], 0, 1), ((4, 4), "int32", [1, 2, 3, 4], 0, -1), ((4, 4), "float32", [1, 2, 3, 4], 0, 1),
          ((4, 4), "int32", [-1, 0, 1, 5], 0, 1), ((2, 3, 3, 3), "int32", [3, 3], 0, 1), ((2, 3, 3, 3), "int32", [2, 3, 2], 2, 1)]
    for i, (shape, dt, lens, batch, seq) in enumerate(rs):
        x = arange_data(shape, dt)
        ln = lit(lens, "int32")
        tvm_port(f"test_op_level3_reverse_sequence_{i + 1}", f"{t}::test_reverse_sequence",
                 f"verify_reverse_sequence(arange {list(shape)} {dt}, {lens}, batch_axis={batch}, seq_axis={seq})",
                 [("x", *x), ("seq_lengths", *ln)],
                 [(f"reverse_sequence(%x, %seq_lengths, seq_axis={seq}, batch_axis={batch})", reverse_sequence(x[1], lens, seq, batch))],
                 expected="the test's expected array")
    for i, (lengths, ix) in enumerate([([3, 5], "ij"), ([4, 2], "xy"), ([3, 5, 2], "ij"), ([3, 1, 5], "xy"), ([3, 5, 0], "ij")]):
        ins = []
        for j, n in enumerate(lengths):
            ins.append((f"x_{j}", "1f", np.array(1, "float32")) if n == 0 else (f"x_{j}", *arange_data((n,), "float32")))
        ref = [np.asarray(v) for v in np.meshgrid(*[a for _, _, a in ins], indexing=ix)]
        tvm_port(f"test_op_level3_meshgrid_{i + 1}", f"{t}::TestMeshgrid::test_meshgrid", f"lengths={lengths}, indexing=\"{ix}\"",
                 ins, [(f"meshgrid(({', '.join('%' + n for n, _, _ in ins)}), indexing=\"{ix}\")", ref)])
    k = 0
    for dt in ["int64", "int32"]:
        for idx, shape in [([0, 1, 2, 3], [2, 2]), ([144], [5, 5, 5, 2]), (144, [5, 5, 5, 2]), ([100, 13, 5], [5, 5, 5, 2])]:
            k += 1
            xi, ys = lit(idx, dt), lit(shape, dt)
            tvm_port(f"test_op_level3_unravel_index_{k}", f"{t}::test_unravel_index", f"verify_unravel_index({idx}, {shape}, \"{dt}\")",
                     [("x", *xi), ("y", *ys)], [("unravel_index(%x, %y)", np.array(np.unravel_index(xi[1], ys[1]), dtype=dt))])
    x = inp(0, (2, 3, 32, 32), "float32")
    y = sliding_window(x, 1, [3, 4, 5], [1, 2, 3])
    checks = [((0, 0, 0, 0), (0, slice(None), slice(0, 4), slice(0, 5))), ((1, 0, 7, 3), (1, slice(None), slice(14, 18), slice(9, 14))),
              ((1, 0, 14, 9), (1, slice(None), slice(28, 32), slice(27, 32)))]
    calls = []
    for at, sl in checks:
        assert np.array_equal(y[at], x[sl])
        b = ", ".join(str(v) for v in at)
        e = ", ".join(str(v + 1) for v in at)
        ds = ", ".join(f"{q.start or 0}" if isinstance(q, slice) else str(q) for q in sl)
        de = ", ".join(f"{q.stop or 3}" if isinstance(q, slice) else str(q + 1) for q in sl)
        calls.append((f"all(equal(squeeze(strided_slice(%w, begin=[{b}], end=[{e}], axes=[0, 1, 2, 3]), axis=[0, 1, 2, 3]), "
                      f"squeeze(strided_slice(%x, begin=[{ds}], end=[{de}]), axis=[0])))", np.array(True)))
    path = os.path.join(TVM_RUN, "test_op_level3_sliding_window.relay")
    write(path, [f"Ported from TVM {t}::test_sliding_window (the window (3, 4, 5) with strides (1, 2, 3) from axis 1).",
                 "Expected: the type TVM asserts (the let's annotation) and its three slice equalities, each True",
                 "(make_movement_goldens.py; scrambled data instead of random data)."],
          [("x", (2, 3, 32, 32), "float32"),
           ("w: Tensor[(2, 1, 15, 10, 3, 4, 5), float32]", "sliding_window(%x, axis=1, window_shape=[3, 4, 5], strides=[1, 2, 3])",
            np.zeros(0))], calls)


def tvm_level10():
    t = "tests/python/relay/test_op_level10.py"
    for i, (shape, mv, axis, dt, it, lens) in enumerate([((5, 10), 0.0, 1, "float32", "int32", [3, 9, 0, 1, 5]),
                                                          ((2, 3, 5, 3), 0.0, 0, "float32", "int64", [1, 0, 2, 1, 0]),
                                                          ((5, 8, 3), 0.1, 1, "float64", "float32", [7, 2, 0, 4, 1])]):
        x = inp(0, shape, dt)
        vl = lit(lens[:shape[1 - axis]], it)
        ref = sequence_mask(x, vl[1].tolist(), mv, axis)
        tvm_port(f"test_op_level10_sequence_mask_{i + 1}", f"{t}::test_sequence_mask", f"_verify({shape}, {mv}, {axis}, \"{dt}\", \"{it}\")",
                 [("data", shape, dt), ("valid_length", *vl)],
                 [(f"sequence_mask(%data, %valid_length, mask_value={scalar(mv, 'float32')}, axis={axis})", ref)])
    for i, (ishape, dshape, dt, k, align) in enumerate([((2, 2), (2,), "float32", 0, "RIGHT_LEFT"), ((4, 3, 3), (4, 3), "int32", 0, "RIGHT_LEFT"),
                                                       ((2, 3, 4), (2, 3), "float32", 1, "RIGHT_LEFT"),
                                                       ((2, 3, 4), (2, 4, 3), "int32", (-1, 2), "LEFT_RIGHT"),
                                                       ((2, 3, 4), (2, 4, 3), "int32", (-1, 2), "LEFT_LEFT"),
                                                       ((2, 3, 4), (2, 4, 3), "int32", (-1, 2), "RIGHT_RIGHT")]):
        k1, k2 = k if isinstance(k, tuple) else (k, k)
        sup, sub = align[:5] == "RIGHT", align[-5:] == "RIGHT"
        x, d = inp(0, ishape, dt), inp(1, dshape, dt)
        tvm_port(f"test_op_level10_matrix_set_diag_{i + 1}", f"{t}::test_matrix_set_diag", f"_verify({ishape}, {dshape}, \"{dt}\", {k}, \"{align}\")",
                 [("input", ishape, dt), ("diagonal", dshape, dt)],
                 [(f"matrix_set_diag(%input, %diagonal, k1={k1}, k2={k2}, super_diag_right_align={sup}, sub_diag_right_align={sub})",
                   matrix_set_diag(x, d, k1, k2, sup, sub))])


def tvm_any():
    t = "tests/python/relay/test_any.py"
    for i, (shape, strides, v) in enumerate([((1,), (1,), None), ((1,), (5,), None), ((5,), (5,), None), ((1, 1, 1), (1, 2, 3), None),
                                             ((1, 1, 2), (1, 2, 3), None), ((1, 1, 5), (1, 2, 3), None), ((3, 7, 5), (1, 2, 3), None),
                                             ((3, 7, 1, 5), (1, 2, 3, 4), None), ((3, 7, 1, 5), (1, 2, 3, 4), 1.0)]):
        x = inp(0, shape, "float32")
        attrs = f"strides={list(strides)}" + (f", dilation_value={scalar(v, 'float32')}" if v is not None else "")
        tvm_port(f"test_any_dilate_{i + 1}", f"{t}::test_any_dilate",
                 f"verify_any_dilate(any_dims({len(shape)}), {shape}, {strides}{', ' + str(v) if v is not None else ''})",
                 [("data", shape, "float32")], [(f"nn.dilate(%data, {attrs})", dilate(x, strides, v or 0))], dyn=True)


if __name__ == "__main__":
    subpixel()
    batch_space()
    masks()
    diag_grid_index()
    dilate_window()
    tvm_level5()
    tvm_level3()
    tvm_level10()
    tvm_any()
