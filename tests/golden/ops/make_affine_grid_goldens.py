#!/usr/bin/env python3
"""Writes affine_grid.relay and its .npz (image.affine_grid), and the port of TVM's
test_op_level5.py::test_affine_grid (tests/golden/tvm/run/test_op_level5_affine_grid.relay).

The reference is this script's numpy: out[n, d, i, j] = theta[n, d] . (x_j, y_i, 1) with
y_i = -1 + 2 i / (H - 1) and x_j = -1 + 2 j / (W - 1), the definition topi.testing.affine_grid_python
computes (topi's kernel steps by (2 - 1e-7) / (H - 1): within the tolerance). Each case compares
within |y - want| <= atol + rtol |want|; the program returns one bool per case.
Run: /usr/bin/python3 tests/golden/ops/make_affine_grid_goldens.py
"""
import os

import numpy as np

import npz_golden

HERE = os.path.dirname(os.path.abspath(__file__))
TOL = {"float16": (2e-3, 2e-3), "float32": (1e-5, 1e-5), "float64": (1e-6, 1e-6)}
SFX = {"float16": "f16", "float32": "f", "float64": "f64"}


def affine_ref(theta, target):
    h, w = target
    y = -1 + 2 * np.arange(h) / (h - 1)
    x = -1 + 2 * np.arange(w) / (w - 1)
    base = np.stack([np.tile(x, h), np.repeat(y, w), np.ones(h * w)])  # (3, H*W)
    return (theta.astype(np.float64) @ base).reshape(theta.shape[0], 2, h, w)


def write(path, header, cases, seed):
    rng = np.random.default_rng(seed)
    arrays, params, body, results = {}, [], [], []
    for i, (n, target, dtype) in enumerate(cases):
        theta = rng.uniform(size=(n, 2, 3)).astype(dtype)
        want = affine_ref(theta, target).astype(dtype)
        arrays[f"t{i}"], arrays[f"want{i}"] = theta, want
        params += [f"%t{i}: Tensor[({n}, 2, 3), {dtype}]", f"%want{i}: Tensor[({n}, 2, {target[0]}, {target[1]}), {dtype}]"]
        body.append(f"let %y{i} = image.affine_grid(%t{i}, target_shape=[{target[0]}, {target[1]}]);")
        rtol, atol = TOL[dtype]
        s = SFX[dtype]
        results.append(npz_golden.close_to(f"%y{i}", f"%want{i}", rtol, atol, s))
    npz_golden.write(path, header, arrays, params, body, results)


if __name__ == "__main__":
    write(os.path.join(HERE, "affine_grid"),
          ["image.affine_grid against numpy (make_affine_grid_goldens.py): square and oblong targets, the",
           "smallest (2 x 2), float16/32/64."],
          [(3, (5, 7), "float32"), (2, (2, 2), "float64"), (1, (9, 4), "float64"), (2, (3, 6), "float16")], 20261127)
    write(os.path.join(HERE, "..", "tvm", "run", "test_op_level5_affine_grid"),
          ["Ported from TVM tests/python/relay/test_op_level5.py::test_affine_grid: verify_affine_grid(1, (16, 32))",
           "and (4, (16, 32)), uniform data and numpy's reference in the .npz",
           "(tests/golden/ops/make_affine_grid_goldens.py); the test's assert_allclose(rtol=1e-5, atol=1e-5)."],
          [(1, (16, 32), "float32"), (4, (16, 32), "float32")], 5)
