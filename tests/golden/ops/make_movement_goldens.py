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


def write(path, header, inputs, calls):
    """inputs: [(name, shape, dtype)]; calls: [(relay call text, numpy result)]."""
    lets = []
    for k, (name, shape, dtype) in enumerate(inputs):
        lets.append(f"  let %{name} = {data(shape, dtype, k)[0]};")
    results = [r for _, r in calls]
    rtype = ", ".join(T(r.shape, str(r.dtype)) for r in results)
    out = "(" + ", ".join(value(r) for r in results) + ")" if len(results) > 1 else value(results[0])
    body = "(" + ",\n   ".join(c for c, _ in calls) + ")" if len(calls) > 1 else calls[0][0]
    lines = [f"// {h}" for h in header] + ["// RUN: relayc --run %s"]
    lines += [f"// OUT: {l}".rstrip() for l in out.split("\n")]
    lines += ['#[version = "0.0.5"]', f"def @main() -> {'(' + rtype + ')' if len(calls) > 1 else rtype} {{"]
    lines += lets + ["  " + body, "}"]
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


if __name__ == "__main__":
    subpixel()
    batch_space()
    tvm_level5()
