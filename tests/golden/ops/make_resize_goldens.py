#!/usr/bin/env python3
"""Writes resize_1d_3d.relay and its .npz (image.resize1d, image.resize3d), and the ports of TVM's
test_op_level5.py TestResize1D::test_resize / TestResize3D::test_resize (tests/golden/tvm/run/).

The reference is this script's own numpy code, written from the definitions of TVM's topi resize
(python/tvm/topi/image/resize.py): a resize is separable; along each spatial axis output position i
reads the input at a source coordinate that coordinate_transformation_mode gives (half_pixel,
align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn, tf_crop_and_resize with the
roi's start and end on that axis); nearest_neighbor rounds it (rounding_method "" = round with
align_corners, else floor; floor and ceil with topi's 1e-5 guard), linear interpolates its two
neighbours, cubic its four with Keys' weights (cubic_alpha; cubic_exclude zeroes the taps outside
the image and renormalises); taps are clamped into the image, and tf_crop_and_resize writes
extrapolation_value where the coordinate leaves the image. topi's resize3d reads the roi as
(start_w, start_h, start_d, end_w, end_h, end_d): z from roi[2], roi[5], x from roi[0], roi[3].
Each case compares relayc's result with the reference within |y - want| <= atol + rtol |want|
(integers exactly) and the program returns one bool per case.
Run: /usr/bin/python3 tests/golden/ops/make_resize_goldens.py
"""
import math
import os

import numpy as np

import npz_golden

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
         "tf_crop_and_resize"]
ROUNDINGS = ["", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def source(i, n_in, n_out, mode, start, end):
    scale = n_in / n_out
    if mode == "half_pixel":
        return (i + 0.5) * scale - 0.5
    if mode == "align_corners":
        return (n_in - 1) / (n_out - 1) * i if n_out > 1 else 0.0
    if mode == "asymmetric":
        return scale * i
    if mode == "pytorch_half_pixel":
        return (i + 0.5) * scale - 0.5 if n_out > 1 else 0.0
    if mode == "tf_half_pixel_for_nn":
        return (i + 0.5) * scale
    if n_out > 1:  # tf_crop_and_resize
        return start * (n_in - 1) + i * (end - start) * (n_in - 1) / (n_out - 1)
    return 0.5 * (start + end) * (n_in - 1)


def nearest_index(x, rounding, mode):
    if rounding == "":
        rounding = "round" if mode == "align_corners" else "floor"
    if rounding == "round":
        return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)  # half away from zero
    if rounding == "round_prefer_floor":
        return math.ceil(x - 0.5)
    if rounding == "round_prefer_ceil":
        return math.floor(x + 0.5)
    if rounding == "floor":
        return math.floor(x + 1e-5)
    return math.ceil(x - 1e-5)


def cubic_weights(t, alpha):
    t2, t3 = t * t, t * t * t
    return [alpha * (t3 - 2 * t2 + t), (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
            -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t, -alpha * t3 + alpha * t2]


def axis_matrix(n_in, n_out, a, start, end):
    """(n_out, n_in) interpolation matrix and the rows tf_crop_and_resize extrapolates."""
    m = np.zeros((n_out, n_in))
    outside = np.zeros(n_out, dtype=bool)
    for i in range(n_out):
        x = source(i, n_in, n_out, a["mode"], start, end)
        if a["mode"] == "tf_crop_and_resize" and (x < 0 or x > n_in - 1):
            outside[i] = True
            continue
        if a["method"] == "nearest_neighbor":
            taps = [(nearest_index(x, a["rounding"], a["mode"]), 1.0)]
        elif a["method"] == "linear":
            f = math.floor(x)
            taps = [(f, 1 - (x - f)), (f + 1, x - f)]
        else:
            f = math.floor(x)
            w = cubic_weights(x - f, a["alpha"])
            taps = [(f - 1 + k, w[k]) for k in range(4)]
            if a["exclude"]:
                taps = [(j, wk if 0 <= j < n_in else 0.0) for j, wk in taps]
                s = sum(wk for _, wk in taps)
                taps = [(j, wk / s) for j, wk in taps]
        for j, wk in taps:
            m[i, min(max(j, 0), n_in - 1)] += wk
    return m, outside


def roi_bounds(nsp, roi):
    if nsp == 1:
        return [(roi[0], roi[1])]
    return [(roi[2], roi[5]), (roi[1], roi[4]), (roi[0], roi[3])]  # topi's resize3d: D, H, W


def resize_ref(x, layout, size, a):
    """x in `layout`; size per spatial letter in the order W / D, H, W."""
    letters = "W" if len(size) == 1 else "DHW"
    y = x.astype(np.float64)
    outs = []
    for k, ch in enumerate(letters):
        ax = layout.index(ch)
        m, outside = axis_matrix(y.shape[ax], size[k], a, *roi_bounds(len(size), a["roi"])[k])
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, ax, 0), axes=1), 0, ax)
        outs.append((ax, outside))
    mask = np.zeros(y.shape, dtype=bool)
    for ax, outside in outs:
        shape = [1] * y.ndim
        shape[ax] = -1
        mask = mask | outside.reshape(shape)
    y[mask] = a["extrap"]
    return y


def attrs_text(nd, size, a):
    parts = [f"size=[{', '.join(str(s) for s in size)}]"]
    if a["roi"] != [0.0] * (2 if nd == 1 else 6):
        parts.append("roi=[" + ", ".join(f"{v}f" for v in a["roi"]) + "]")
    if a["layout"] != ("NCW" if nd == 1 else "NCDHW"):
        parts.append(f'layout="{a["layout"]}"')
    parts.append(f'method="{a["method"]}"')
    parts.append(f'coordinate_transformation_mode="{a["mode"]}"')
    parts.append(f'rounding_method="{a["rounding"]}"')
    if a["alpha"] != -0.5:
        parts.append(f"cubic_alpha={a['alpha']}f")
    if a["exclude"]:
        parts.append("cubic_exclude=1")
    if a["extrap"] != 0:
        parts.append(f"extrapolation_value={a['extrap']}f")
    if a.get("out_dtype"):
        parts.append(f'out_dtype="{a["out_dtype"]}"')
    return ", ".join(parts)


def attrs(nd, method, mode, rounding="", layout=None, alpha=-0.5, exclude=0, extrap=0.0, roi=None, out_dtype=None):
    if roi is None:
        roi = [0.0] * (2 if nd == 1 else 6)
        if mode == "tf_crop_and_resize":
            roi = [-0.3, 1.2] if nd == 1 else [0.1, -0.2, 0.25, 0.8, 1.3, 0.9]
    if mode == "tf_crop_and_resize" and extrap == 0.0:
        extrap = -3.5
    return dict(method=method, mode=mode, rounding=rounding, layout=layout or ("NCW" if nd == 1 else "NCDHW"),
                alpha=alpha, exclude=exclude, extrap=extrap, roi=roi, out_dtype=out_dtype)


def cases_1d():
    out = []
    for mode in MODES:
        for r in ROUNDINGS:
            out.append(((2, 3, 7), [12] if len(out) % 2 else [4], "float32", attrs(1, "nearest_neighbor", mode, r)))
        out.append(((2, 3, 7), [12], "float32", attrs(1, "linear", mode)))
        out.append(((2, 3, 7), [5], "float32", attrs(1, "linear", mode, layout="NWC")))
        out.append(((1, 2, 6), [11], "float32", attrs(1, "cubic", mode)))
        out.append(((1, 2, 6), [4], "float32", attrs(1, "cubic", mode, alpha=-0.75, exclude=1)))
    out.append(((1, 2, 5), [9], "float64", attrs(1, "cubic", "half_pixel", alpha=-0.6)))
    out.append(((1, 4, 3), [8], "float64", attrs(1, "linear", "align_corners", layout="NWC")))
    out.append(((1, 2, 5), [9], "int32", attrs(1, "nearest_neighbor", "asymmetric")))
    out.append(((1, 2, 5), [9], "int8", attrs(1, "linear", "half_pixel", out_dtype="float32")))
    out.append(((1, 2, 5), [3], "float16", attrs(1, "nearest_neighbor", "half_pixel", "round")))
    out.append(((1, 1, 1), [4], "float32", attrs(1, "linear", "half_pixel")))
    out.append(((1, 2, 5), [1], "float32", attrs(1, "linear", "align_corners")))
    out.append(((1, 2, 5), [1], "float32", attrs(1, "linear", "tf_crop_and_resize", roi=[0.25, 0.75])))
    return out


def cases_3d():
    out = []
    for mode in MODES:
        out.append(((1, 2, 3, 4, 3), [5, 3, 6], "float32", attrs(3, "nearest_neighbor", mode, ROUNDINGS[len(out) % 6])))
        out.append(((1, 2, 3, 4, 3), [5, 3, 6], "float32", attrs(3, "linear", mode)))
        out.append(((1, 3, 4, 3, 2), [2, 5, 4], "float32", attrs(3, "cubic", mode, layout="NDHWC")))
    out.append(((1, 1, 3, 2, 4), [4, 3, 2], "float32", attrs(3, "cubic", "half_pixel", alpha=-0.75, exclude=1)))
    out.append(((1, 1, 3, 2, 4), [4, 3, 2], "float64", attrs(3, "linear", "asymmetric")))
    out.append(((1, 1, 3, 2, 4), [4, 3, 2], "int32", attrs(3, "nearest_neighbor", "align_corners")))
    return out


TOL = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-6)}  # weights in float32, as topi
SFX = {"float16": "f16", "float32": "f", "float64": "f64"}


def dims(shape):
    return ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")


def draw(rng, shape, dtype):
    if dtype.startswith("int"):
        return rng.integers(-100, 100, size=shape).astype(dtype)
    return rng.uniform(-1, 1, size=shape).astype(dtype)


def compare(y, want, dtype):
    if not dtype.startswith("float"):
        return f"all(equal({y}, {want}))"
    rtol, atol = TOL[dtype]
    return npz_golden.close_to(y, want, rtol, atol, SFX[dtype])


def write_program(path, header, run_line, calls):
    """calls: (op, x array, attrs text, want array, result dtype)"""
    arrays, params, body, results = {}, [], [], []
    for i, (op, x, text, want, odt) in enumerate(calls):
        arrays[f"x{i}"], arrays[f"want{i}"] = x, want
        params += [f"%x{i}: Tensor[({dims(x.shape)}), {x.dtype}]", f"%want{i}: Tensor[({dims(want.shape)}), {odt}]"]
        body.append(f"let %y{i} = {op}(%x{i}, {text});")
        results.append(compare(f"%y{i}", f"%want{i}", odt))
    npz_golden.write(path, header, arrays, params, body, results, run_flags=run_line)


def ops_golden():
    rng = np.random.default_rng(20261127)
    calls = []
    for nd, cases in ((1, cases_1d()), (3, cases_3d())):
        for shape, size, dtype, a in cases:
            x = draw(rng, shape, dtype)
            odt = a["out_dtype"] or dtype
            want = resize_ref(x, a["layout"], size, a)
            if odt == "float16":
                want = want.astype(np.float32)
            want = want.astype(odt)
            calls.append((f"image.resize{nd}d", x, attrs_text(nd, size, a), want, odt))
    write_program(os.path.join(HERE, "resize_1d_3d"),
                  ["image.resize1d and image.resize3d against numpy (make_resize_goldens.py): every method,",
                   "coordinate_transformation_mode and rounding_method, cubic_alpha / cubic_exclude, tf_crop_and_resize",
                   "with an roi reaching outside the image (extrapolation_value), channel-last layouts, growing and",
                   "shrinking, extents of 1, float16/32/64 within tolerance, int32/int8 exactly or through out_dtype."],
                  "", calls)


def tvm_golden(nd):
    """TestResize1D / TestResize3D: uniform [0, 1) float32 data, rounding_method "" (the Python
    default), every (shape, scale) x method x coordinate_transformation_mode x layout."""
    rng = np.random.default_rng(nd)
    calls = []
    if nd == 1:
        shapes = [((1, 4, 4), 2), ((2, 8, 17), 3), ((2, 8, 17), 3), ((3, 4, 5), 5)]
        layouts, rtol, atol = ["NWC", "NCW"], 1e-3, 1e-4
    else:
        shapes = [((1, 4, 4, 4, 4), 2)]
        layouts, rtol, atol = ["NDHWC", "NCDHW"], 1e-4, 1e-6
    for dshape, scale in shapes:
        for method in ["nearest_neighbor", "linear", "cubic"]:
            for layout in layouts:
                for mode in ["asymmetric", "align_corners", "half_pixel"]:
                    x = rng.uniform(size=dshape).astype("float32")
                    letters = "W" if nd == 1 else "DHW"
                    size = [dshape[layout.index(ch)] * scale for ch in letters]
                    a = attrs(nd, method, mode, layout=layout)
                    want = resize_ref(x, layout, size, a).astype("float32")
                    calls.append((f"image.resize{nd}d", x, attrs_text(nd, size, a), want, "float32"))
    test = "TestResize1D::test_resize" if nd == 1 else "TestResize3D::test_resize"
    stem = f"test_op_level5_resize{nd}d"
    global TOL
    saved = TOL["float32"]
    TOL["float32"] = (rtol, atol)
    write_program(os.path.join(HERE, "..", "tvm", "run", stem),
                  [f"Ported from TVM tests/python/relay/test_op_level5.py::{test}: every parameter combination",
                   "(dshape and scale x method x layout x coordinate_transformation_mode, in that nesting), uniform",
                   f"data and numpy's reference in the .npz (tests/golden/ops/make_resize_goldens.py); the test's",
                   f"assert_allclose(rtol={rtol}, atol={atol}) per case."],
                  "", calls)
    TOL["float32"] = saved


FOLD_CASES = [  # data arange-shaped, results dyadic (exact in float32): a checksum pins them
    (1, (1, 2, 3), [5], attrs(1, "linear", "align_corners")),
    (1, (1, 2, 4), [8], attrs(1, "nearest_neighbor", "asymmetric")),
    (3, (1, 1, 2, 2, 3), [3, 3, 5], attrs(3, "linear", "align_corners")),
    (3, (1, 2, 2, 1, 2), [4, 2, 2], attrs(3, "nearest_neighbor", "half_pixel", "round_prefer_ceil", layout="NDHWC")),
]


def fold_golden():
    """Constant inputs: FoldConstant folds the resizes, and must give --run's values."""
    body, outs = [], []
    for i, (nd, shape, size, a) in enumerate(FOLD_CASES):
        n = int(np.prod(shape))
        x = np.arange(n, dtype=np.float32).reshape(shape)
        y = resize_ref(x, a["layout"], size, a)
        w = np.arange(1, y.size + 1, dtype=np.float64).reshape(y.shape)
        outs.append(f"{float(np.sum(y * w)):g}f")
        xe = f"reshape(arange(0f, {n}f, 1f), newshape=[{', '.join(map(str, shape))}])"
        we = f"reshape(arange(1f, {y.size + 1}f, 1f), newshape=[{', '.join(map(str, y.shape))}])"
        body.append(f"sum(multiply(image.resize{nd}d({xe}, {attrs_text(nd, size, a)}), {we}))")
    with open(os.path.join(HERE, "resize_1d_3d_fold.relay"), "w") as f:
        f.write("// image.resize1d / resize3d on constants: --run and FoldConstant give numpy's values\n")
        f.write("// (make_resize_goldens.py; checksums sum(y * (1..n)) of dyadic results, exact in float32).\n")
        f.write("// RUN: relayc --run %s\n// RUN: relayc --pass=FoldConstant --run %s\n")
        f.write(f"// OUT: ({', '.join(outs)})\n")
        f.write('#[version = "0.0.5"]\ndef @main() {\n  (' + ",\n   ".join(body) + ")\n}\n")


if __name__ == "__main__":
    ops_golden()
    fold_golden()
    tvm_golden(1)
    tvm_golden(3)
