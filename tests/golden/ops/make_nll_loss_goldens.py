#!/usr/bin/env python3
"""Writes nll_loss.relay and its .npz (nn.nll_loss), and the port of TVM's
test_op_level10.py::test_nll_loss (tests/golden/tvm/run/test_op_level10_nll_loss.relay).

The reference is this script's numpy: per target position the loss is -p[n, t, ...] * w[t]
(0 where t == ignore_index); "none" returns it, "sum" its sum, "mean" the sum divided by the
sum of the kept positions' weights (the definition TVM's topi.testing.nll_loss computes).
Each case compares within |y - want| <= atol + rtol |want| and the program returns one bool
per case. Run: /usr/bin/python3 tests/golden/ops/make_nll_loss_goldens.py
"""
import os

import numpy as np

import npz_golden

HERE = os.path.dirname(os.path.abspath(__file__))
TOL = {"float16": (2e-3, 2e-3), "float32": (1e-6, 1e-6), "float64": (1e-12, 1e-12)}
SFX = {"float16": "f16", "float32": "f", "float64": "f64"}


def nll_ref(p, t, w, reduction, ignore):
    keep = t != ignore
    tc = np.where(keep, t, 0).astype(np.int64)
    pt = np.take_along_axis(p.astype(np.float64), np.expand_dims(tc, 1), axis=1)[:, 0]
    wt = w.astype(np.float64)[tc] * keep
    loss = -pt * wt
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.array(loss.sum())
    return np.array(loss.sum() / wt.sum())


def dims(shape):
    return ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")


def ttype(a, dtype=None):
    return f"Tensor[({dims(a.shape)}), {dtype or a.dtype}]" if a.ndim else (dtype or str(a.dtype))


def write(path, header, cases, seed):
    rng = np.random.default_rng(seed)
    arrays, params, body, results = {}, [], [], []
    for i, (pshape, reduction, ignore, dtype, tdtype, ignore_some) in enumerate(cases):
        C = pshape[1]
        tshape = pshape[:1] + pshape[2:]
        p = rng.uniform(size=pshape).astype(dtype)
        t = rng.integers(0, C, size=tshape).astype(tdtype)
        if ignore_some:
            t.flat[::3] = ignore
        w = rng.uniform(size=(C,)).astype(dtype)
        want = nll_ref(p, t, w, reduction, ignore)
        want = (want.astype(np.float32) if dtype == "float16" else want).astype(dtype)
        for k, a in (("p", p), ("t", t), ("w", w), ("want", want)):
            arrays[f"{k}{i}"] = a
            params.append(f"%{k}{i}: {ttype(a)}")
        attrs = [] if reduction == "mean" else [f'reduction="{reduction}"']
        attrs.append(f"ignore_index={ignore}")
        body.append(f"let %y{i} = nn.nll_loss(%p{i}, %t{i}, %w{i}, {', '.join(attrs)});")
        rtol, atol = TOL[dtype]
        s = SFX[dtype]
        results.append(npz_golden.close_to(f"%y{i}", f"%want{i}", rtol, atol, s))
    npz_golden.write(path, header, arrays, params, body, results)


# (predictions shape, reduction, ignore_index, dtype, targets dtype, set some targets to ignore_index)
TVM_CASES = [((10, 5), "mean", -100, "float32", "int32", False), ((10, 5, 2, 2), "mean", -100, "float32", "int32", False),
             ((10, 5), "sum", -100, "float32", "int32", False), ((10, 5), "none", -100, "float32", "int32", False),
             ((10, 5), "mean", 3, "float32", "int32", False), ((10, 5), "mean", -100, "float64", "int32", False)]
OPS_CASES = [((6, 4), "mean", -100, "float32", "int64", True), ((6, 4), "sum", 2, "float32", "int32", True),
             ((3, 4, 5), "none", 0, "float32", "int32", True), ((2, 3, 2, 2, 2), "mean", 1, "float64", "int8", True),
             ((4, 3), "none", -1, "float16", "int32", True), ((5, 7, 3), "sum", -100, "float64", "int64", False),
             ((1, 1), "mean", -100, "float32", "int32", False)]

if __name__ == "__main__":
    write(os.path.join(HERE, "nll_loss"),
          ["nn.nll_loss against numpy (make_nll_loss_goldens.py): every reduction, ignore_index inside and",
           "outside the classes with ignored positions (a third of the targets), spatial axes, int8/32/64",
           "targets, float16/32/64 predictions and weights."], OPS_CASES, 20261127)
    write(os.path.join(HERE, "..", "tvm", "run", "test_op_level10_nll_loss"),
          ["Ported from TVM tests/python/relay/test_op_level10.py::test_nll_loss: its six _verify calls in order,",
           "uniform predictions and weights, targets in [0, C), numpy's reference in the .npz",
           "(tests/golden/ops/make_nll_loss_goldens.py); the test's assert_allclose(rtol=1e-6, atol=1e-6)."],
          TVM_CASES, 10)
