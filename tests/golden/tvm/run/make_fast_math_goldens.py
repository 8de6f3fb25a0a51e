#!/usr/bin/env python3
"""Writes the test_op_fast_math_*.relay goldens and their .npz inputs (TVM's
test_op_fast_math.py::test_fastmath).

TVM builds exp, erf, tanh with the FastMath pass required (they become fast_exp, fast_erf,
fast_tanh) and nn.fast_softmax as it is, on np.arange(low, high, step) as float32, and compares with
numpy (erf: scipy) within rtol=1e-5, atol=1e-5. Each golden takes the same points and numpy's
reference from its .npz (`x`, `want`; erf from Python's math.erf in float64, rounded to float32) and
returns that comparison: True. The FastMath RUN line also pins the rewrite (AFTER: the fast_ op).
Run: /usr/bin/python3 tests/golden/tvm/run/make_fast_math_goldens.py
"""
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TVM = "tests/python/relay/test_op_fast_math.py::test_fastmath"


def softmax_ref(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def erf_ref(x):
    return np.vectorize(math.erf)(x.astype(np.float64)).astype(np.float32)


CASES = [
    ("exp", "exp", "fast_exp", np.exp, -88, 88),
    ("erf", "erf", "fast_erf", erf_ref, -10, 10),
    ("tanh", "tanh", "fast_tanh", np.tanh, -10, 10),
    ("fast_softmax", "nn.fast_softmax", "nn.fast_softmax", softmax_ref, -10, 10),
]

CHECK = ("all(less_equal(abs(subtract(%y, %want)), add(1e-05f, multiply(1e-05f, abs(%want)))))")


def main_text(op, n):
    ty = f"Tensor[(1, {n}), float32]"
    return (f'#[version = "0.0.5"]\n'
            f"def @main(%x: {ty}, %want: {ty}) {{\n"
            f"  let %y = {op}(%x);\n"
            f"  {CHECK}\n"
            f"}}\n")


def write_case(stem, op, fast_op, ref, low, high):
    x = np.arange(low, high, 0.01).astype("float32").reshape((1, -1))
    n = x.shape[1]
    name = f"test_op_fast_math_{stem}"
    np.savez(os.path.join(HERE, name + ".npz"), x=x, want=ref(x).astype("float32"))
    pass_opt = "--pass=FastMath " if op != fast_op else ""
    with open(os.path.join(HERE, name + ".relay"), "w") as f:
        f.write(f"// Ported from TVM {TVM} ({op} on np.arange({low}, {high}, 0.01), {n} points).\n")
        f.write(f"// Expected: |{fast_op}(x) - want| <= 1e-5 + 1e-5 |want| everywhere, want from numpy in\n")
        f.write("// the .npz (make_fast_math_goldens.py).\n")
        f.write(f"// RUN: relayc {pass_opt}--run %s --inputs %d/{name}.npz\n")
        if pass_opt:
            f.write(f"// RUN: relayc {pass_opt}--print %s\n")
            f.write(f"// AFTER: {name}.expected.relay\n")
        f.write("// OUT: True\n")
        f.write(main_text(op, n))
    if pass_opt:
        with open(os.path.join(HERE, name + ".expected.relay"), "w") as f:
            f.write(f"// {name}.relay after FastMath: {op} became {fast_op}.\n")
            f.write(main_text(fast_op, n))


if __name__ == "__main__":
    for case in CASES:
        write_case(*case)
