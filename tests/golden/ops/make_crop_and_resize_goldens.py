#!/usr/bin/env python3
"""Writes crop_and_resize.relay and its .npz (image.crop_and_resize), and the port of TVM's
test_op_level5.py::TestCropAndResize (tests/golden/tvm/run/test_op_level5_crop_and_resize.relay).

The reference is this script's numpy, from the definition TVM's topi.testing.crop_and_resize_python
computes: box b = (y1, x1, y2, x2) samples image box_indices[b] at in_y = y1 (H - 1) + y (H - 1)
(y2 - y1) / (crop_h - 1) (likewise x); a coordinate outside [0, H - 1] gives extrapolation_value;
bilinear interpolates between floor and ceil, nearest_neighbor rounds half away from zero. A crop
extent of 1 (TVM divides by zero) samples the box's centre, (y1 + y2) / 2 (H - 1), as TensorFlow.
The images are built in the program from an int64 arange (x[i] = (i * 7919 mod 10007) / 10007 in float32,
the same bits numpy computes), so only boxes, indices and the reference are in the .npz.
Run: /usr/bin/python3 tests/golden/ops/make_crop_and_resize_goldens.py
"""
import math
import os

import numpy as np

import npz_golden

HERE = os.path.dirname(os.path.abspath(__file__))


def image_np(shape, dtype):
    n = int(np.prod(shape))
    v = ((np.arange(n, dtype=np.int64) * 7919) % 10007).astype(np.float32) / np.float32(10007)
    return v.reshape(shape).astype(dtype)


def image_relay(shape, dtype):
    n = int(np.prod(shape))
    e = (f'divide(cast(floor_mod(multiply(arange(0i64, {n}i64, 1i64, dtype="int64"), 7919i64), 10007i64), '
         f'dtype="float32"), 10007f)')
    if dtype != "float32":
        e = f'cast({e}, dtype="{dtype}")'
    return f"reshape({e}, newshape=[{', '.join(map(str, shape))}])"


def coord(lo, hi, extent, crop, i):
    if crop == 1:
        return 0.5 * (lo + hi) * (extent - 1)
    return lo * (extent - 1) + i * (extent - 1) * (hi - lo) / (crop - 1)


def crop_ref(img, boxes, idx, crop, layout, method, extrap):
    x = img if layout == "NCHW" else img.transpose(0, 3, 1, 2)
    x = x.astype(np.float64)
    _, C, H, W = x.shape
    out = np.zeros((len(boxes), C, crop[0], crop[1]))
    for b, (y1, x1, y2, x2) in enumerate(boxes.astype(np.float64)):
        im = x[idx[b]]
        for i in range(crop[0]):
            yy = coord(y1, y2, H, crop[0], i)
            for j in range(crop[1]):
                xx = coord(x1, x2, W, crop[1], j)
                if yy < 0 or yy > H - 1 or xx < 0 or xx > W - 1:
                    out[b, :, i, j] = extrap
                elif method == "nearest_neighbor":
                    out[b, :, i, j] = im[:, int(math.floor(yy + 0.5)), int(math.floor(xx + 0.5))]
                else:
                    t, bt = math.floor(yy), math.ceil(yy)
                    l, r = math.floor(xx), math.ceil(xx)
                    u, v = yy - t, xx - l
                    top = im[:, t, l] + (im[:, t, r] - im[:, t, l]) * v
                    bot = im[:, bt, l] + (im[:, bt, r] - im[:, bt, l]) * v
                    out[b, :, i, j] = top + (bot - top) * u
    return out if layout == "NCHW" else out.transpose(0, 2, 3, 1)


def dims(shape):
    return ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")


def write(path, header, cases, seed, rtol, atol):
    rng = np.random.default_rng(seed)
    arrays, params, body, results = {}, [], [], []
    for i, (ishape, nbox, idx, crop, layout, method, extrap, dtype, lo, hi) in enumerate(cases):
        boxes = rng.uniform(lo, hi, size=(nbox, 4)).astype("float32")
        idx = np.array(idx, dtype="int32")
        want = crop_ref(image_np(ishape, dtype), boxes, idx, crop, layout, method, extrap).astype(dtype)
        arrays[f"b{i}"], arrays[f"i{i}"], arrays[f"want{i}"] = boxes, idx, want
        params += [f"%b{i}: Tensor[({dims(boxes.shape)}), float32]", f"%i{i}: Tensor[({dims(idx.shape)}), int32]",
                   f"%want{i}: Tensor[({dims(want.shape)}), {dtype}]"]
        attrs = [f"crop_size=[{crop[0]}, {crop[1]}]"]
        if layout != "NCHW":
            attrs.append(f'layout="{layout}"')
        if method != "bilinear":
            attrs.append(f'method="{method}"')
        if extrap:
            attrs.append(f"extrapolation_value={extrap}f")
        body.append(f"let %y{i} = image.crop_and_resize({image_relay(ishape, dtype)}, %b{i}, %i{i}, {', '.join(attrs)});")
        s = "f64" if dtype == "float64" else "f"
        results.append(npz_golden.close_to(f"%y{i}", f"%want{i}", rtol, atol, s))
    npz_golden.write(path, header, arrays, params, body, results)


# (image shape, boxes, box indices, crop size, layout, method, extrapolation_value, dtype, box lo, box hi)
TVM_CASES = [((10, 224, 224, 3), 2, [1, 0], (20, 30), "NHWC", "bilinear", 0.0, "float32", 0, 1),
             ((10, 224, 224, 3), 2, [1, 0], (20, 30), "NHWC", "nearest_neighbor", 0.0, "float32", 0, 1),
             ((5, 3, 255, 255), 2, [0, 1], (30, 30), "NCHW", "bilinear", 0.0, "float32", 0, 1),
             ((5, 3, 255, 255), 2, [0, 1], (30, 30), "NCHW", "nearest_neighbor", 0.0, "float32", 0, 1)]
OPS_CASES = [((2, 3, 7, 9), 4, [1, 0, 1, 1], (5, 6), "NCHW", "bilinear", -2.5, "float32", -0.3, 1.3),
             ((2, 3, 7, 9), 4, [0, 1, 0, 0], (4, 7), "NCHW", "nearest_neighbor", 9.0, "float32", -0.3, 1.3),
             ((3, 6, 5, 2), 3, [2, 2, 0], (3, 4), "NHWC", "bilinear", 0.0, "float64", 0, 1),
             ((1, 2, 6, 6), 2, [0, 0], (1, 1), "NCHW", "bilinear", 0.0, "float32", 0, 1),
             ((1, 2, 6, 6), 1, [0], (1, 3), "NCHW", "nearest_neighbor", 0.0, "float32", 0, 1)]

if __name__ == "__main__":
    write(os.path.join(HERE, "crop_and_resize"),
          ["image.crop_and_resize against numpy (make_crop_and_resize_goldens.py): boxes reaching outside the",
           "image (extrapolation_value), both methods, NCHW / NHWC, float32 / float64, crop extents of 1."],
          OPS_CASES, 20261127, 1e-5, 1e-5)
    write(os.path.join(HERE, "..", "tvm", "run", "test_op_level5_crop_and_resize"),
          ["Ported from TVM tests/python/relay/test_op_level5.py::TestCropAndResize: its four cases (NHWC",
           "(10, 224, 224, 3) crop 20 x 30, NCHW (5, 3, 255, 255) crop 30 x 30; bilinear and nearest_neighbor),",
           "uniform boxes; the images are a fixed scramble in [0, 1) built in the program (the test draws them",
           "at random), numpy's reference in the .npz (tests/golden/ops/make_crop_and_resize_goldens.py); the",
           "test's assert_allclose(rtol=1e-3, atol=1e-4)."],
          TVM_CASES, 0, 1e-3, 1e-4)
