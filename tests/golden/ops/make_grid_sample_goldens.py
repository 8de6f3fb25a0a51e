#!/usr/bin/env python3
"""Writes grid_sample.relay and its .npz (image.grid_sample), and the port of TVM's
test_op_level5.py::test_grid_sample (tests/golden/tvm/run/test_op_level5_grid_sample.relay).

The reference is this script's numpy, from the definition topi.testing.grid_sample_python
computes: grid[:, 0] is x (W), grid[:, 1] y (H), grid[:, 2] z (D); v maps to (v + 1)(n - 1)/2
with align_corners, else (v + 1) n / 2 - 1/2; border clips the coordinate into [0, n - 1],
reflection folds it into [0, n - 1] (align_corners) or [-1/2, n - 1/2] and clips; nearest rounds
half away from zero, bilinear / trilinear weights the 2^d neighbours, bicubic (2-D) the 4 x 4
around the unpadded coordinate with Keys' weights at A = -0.75, each tap index clipped (border)
or folded and clipped (reflection); positions outside the image read 0. Each case compares within
|y - want| <= atol + rtol |want|; the program returns one bool per case.
Run: /usr/bin/python3 tests/golden/ops/make_grid_sample_goldens.py
"""
import itertools
import math
import os

import numpy as np

import npz_golden

HERE = os.path.dirname(os.path.abspath(__file__))


def unnormalize(v, n, align):
    return (v + 1) * (n - 1) / 2 if align else -0.5 + (v + 1) * n / 2


def fold(x, n, align):
    lo, span = (0.0, n - 1) if align else (-0.5, n)
    if lo <= x <= lo + span:
        return x
    if span <= 0:
        return lo
    d = abs(x - lo)
    k = math.floor(d / span)
    e = d - k * span
    return e + lo if k % 2 == 0 else span - e + lo


def clip(x, n):
    return min(max(x, 0), n - 1)


def sample(img, coords, method, pad, align):
    """img (spatial...) one plane; coords: the normalised coordinate per spatial axis (D, H, W order)."""
    dims = img.shape

    def pix(idx):
        return img[tuple(idx)] if all(0 <= i < n for i, n in zip(idx, dims)) else 0.0

    raw = [unnormalize(v, n, align) for v, n in zip(coords, dims)]
    if method == "bicubic":
        def tap(i, n):
            if pad == "border":
                return int(clip(i, n))
            if pad == "reflection":
                return int(clip(fold(i, n, align), n))
            return i

        def w(t):
            a = -0.75
            out = []
            for k, s in enumerate((t + 1, t, 1 - t, 2 - t)):
                out.append(((a + 2) * s - (a + 3)) * s * s + 1 if k in (1, 2) else ((a * s - 5 * a) * s + 8 * a) * s - 4 * a)
            return out
        fy, fx = math.floor(raw[0]), math.floor(raw[1])
        wy, wx = w(raw[0] - fy), w(raw[1] - fx)
        return sum(wy[i] * wx[j] * pix([tap(fy - 1 + i, dims[0]), tap(fx - 1 + j, dims[1])])
                   for i in range(4) for j in range(4))
    src = []
    for r, n in zip(raw, dims):
        if pad == "reflection":
            r = clip(fold(r, n, align), n)
        elif pad == "border":
            r = clip(r, n)
        src.append(r)
    if method == "nearest":
        return pix([int(s + 0.5) if s > 0 else int(s - 0.5) for s in src])
    total = 0.0
    for bits in itertools.product((0, 1), repeat=len(src)):
        wgt, idx = 1.0, []
        for b, s in zip(bits, src):
            f = math.floor(s)
            idx.append(f + b)
            wgt *= (s - f) if b else 1 - (s - f)
        total += wgt * pix(idx)
    return total


def grid_sample_ref(data, grid, method, pad, align):
    nsp = data.ndim - 2
    out = np.zeros(data.shape[:2] + grid.shape[2:])
    for n in range(data.shape[0]):
        for pos in np.ndindex(grid.shape[2:]):
            coords = [float(grid[(n, nsp - 1 - k) + pos]) for k in range(nsp)]
            for c in range(data.shape[1]):
                out[(n, c) + pos] = sample(data[n, c].astype(np.float64), coords, method, pad, align)
    return out


def dims(shape):
    return ", ".join(str(d) for d in shape)


def write(path, header, cases, seed, rtol, atol, shared):
    """cases: (data shape, grid shape, method, padding_mode, align_corners, dtype, grid range);
    shared: one data and one grid per rank for every case (the TVM test's shapes repeat)."""
    rng = np.random.default_rng(seed)
    arrays, params, body, results, inputs = {}, [], [], [], {}
    for i, (dshape, gshape, method, pad, align, dtype, lim) in enumerate(cases):
        key = (dshape, gshape, dtype) if shared else i
        if key not in inputs:
            k = len(inputs)
            data = rng.uniform(size=dshape).astype(dtype)
            grid = rng.uniform(-lim, lim, size=gshape).astype(dtype)
            arrays[f"x{k}"], arrays[f"g{k}"] = data, grid
            params += [f"%x{k}: Tensor[({dims(dshape)}), {dtype}]", f"%g{k}: Tensor[({dims(gshape)}), {dtype}]"]
            inputs[key] = (k, data, grid)
        k, data, grid = inputs[key]
        want = grid_sample_ref(data, grid, method, pad, align).astype(dtype)
        arrays[f"want{i}"] = want
        params.append(f"%want{i}: Tensor[({dims(want.shape)}), {dtype}]")
        attrs = []
        if method != "bilinear":
            attrs.append(f'method="{method}"')
        if len(dshape) == 5:
            attrs.append('layout="NCDHW"')
        if pad != "zeros":
            attrs.append(f'padding_mode="{pad}"')
        if not align:
            attrs.append("align_corners=False")
        call = f"image.grid_sample(%x{k}, %g{k}{''.join(', ' + a for a in attrs)})"
        s = "f64" if dtype == "float64" else "f"
        body.append(f"let %y{i} = {call};")
        results.append(npz_golden.close_to(f"%y{i}", f"%want{i}", rtol, atol, s))
    npz_golden.write(path, header, arrays, params, body, results, compressed=True)


METHODS, PADS = ["nearest", "bilinear", "bicubic"], ["zeros", "border", "reflection"]
TVM_CASES = []
for _m in METHODS:
    for _p in PADS:
        for _a in (True, False):
            TVM_CASES.append(((4, 4, 8, 8), (4, 2, 16, 16), _m, _p, _a, "float32", 1.5))
            if _m != "bicubic":
                TVM_CASES.append(((4, 4, 4, 4, 4), (4, 3, 8, 8, 8), _m, _p, _a, "float32", 1.5))
OPS_CASES = [((1, 2, 3, 5), (1, 2, 4, 3), m, p, a, "float32", 3.5) for m in METHODS for p in PADS for a in (True, False)]
OPS_CASES += [((1, 1, 2, 3, 2), (1, 3, 2, 3, 2), m, p, a, "float64", 3.5) for m in ("nearest", "bilinear")
              for p in PADS for a in (True, False)]
OPS_CASES += [((2, 1, 1, 4), (2, 2, 3, 2), "bilinear", "reflection", True, "float32", 2.0),
              ((1, 1, 1, 1), (1, 2, 2, 2), "bicubic", "reflection", False, "float32", 2.0)]

if __name__ == "__main__":
    write(os.path.join(HERE, "grid_sample"),
          ["image.grid_sample against numpy (make_grid_sample_goldens.py): every method x padding_mode x",
           "align_corners, 2-D float32 and 3-D float64, grids reaching far outside the image (several",
           "reflections), extents of 1."], OPS_CASES, 20261127, 1e-5, 1e-5, False)
    write(os.path.join(HERE, "..", "tvm", "run", "test_op_level5_grid_sample"),
          ["Ported from TVM tests/python/relay/test_op_level5.py::test_grid_sample: its 30 cases (2-D data",
           "(4, 4, 8, 8) with a (4, 2, 16, 16) grid, every method x padding_mode x align_corners; 3-D data",
           "(4, 4, 4, 4, 4) with a (4, 3, 8, 8, 8) grid, without bicubic), one uniform data and grid per",
           "rank for all cases, numpy's reference in the .npz (tests/golden/ops/make_grid_sample_goldens.py);",
           "the test's assert_allclose(rtol=1e-5, atol=1e-5)."], TVM_CASES, 7, 1e-5, 1e-5, True)
