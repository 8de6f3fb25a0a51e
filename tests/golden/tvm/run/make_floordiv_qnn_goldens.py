#!/usr/bin/env python3
"""Writes the test_op_floordiv_*.relay and test_op_qnn_dequantize_*.relay goldens and their .npz
inputs. Each program compares relayc's result with the expected array of the .npz exactly
(`all(equal(...))`, so a wrong dtype is a type error and a wrong value prints False):

- test_op_floordiv.py::test_floor_div_op checks TIR's floordiv/floormod by 5 against numpy's //
  and % for int8..int64, on (c - max) for c = 0..99 and on random values; here the same as Relay's
  floor_divide / floor_mod, the random values replaced by fixed ones that include the dtype's
  minimum, max - 1 and the signs around multiples of 5. Expected: numpy // and %.
- test_op_qnn_dequantize.py: every test's data, scale, zero point, axis and out_dtype, with the
  test's own expected array (its literals, not recomputed).
- test_op_qnn_simulated_dequantize.py: its reference half, qnn.dequantize on the tests' data,
  scales, zero points and axes (qnn.simulated_dequantize itself is not a relayc operator); the
  random data replaced by fixed values over the same ranges (cast as the tests cast: uint8 wraps
  negative values, int8 wraps values above 127). Expected: numpy's (q - zero_point) * scale in
  float32 (exact for these scales).
Run: /usr/bin/python3 tests/golden/tvm/run/make_floordiv_qnn_goldens.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, header, params, body, npz):
    np.savez(os.path.join(HERE, name + ".npz"), **npz)
    sig = ", ".join(f"%{p}: {ty}" for p, ty in params)
    with open(os.path.join(HERE, name + ".relay"), "w") as f:
        for line in header:
            f.write(f"// {line}\n")
        f.write(f"// RUN: relayc --run %s --inputs %d/{name}.npz\n")
        f.write("// OUT: True\n")
        f.write(f'#[version = "0.0.5"]\ndef @main({sig}) {{\n  {body}\n}}\n')


def tensor_type(a):
    dims = ", ".join(str(d) for d in a.shape)
    if a.ndim == 1:
        dims += ","
    return f"Tensor[({dims}), {a.dtype}]"


SUFFIX = {"int16": "i16", "int32": "", "int64": "i64"}


def literal(value, dtype):
    """An integer constant of dtype: the text has no int8 literal (`5i8` is an error, in TVM too)."""
    if dtype in SUFFIX:
        return f"{value}{SUFFIX[dtype]}"
    return f'cast({value}, dtype="{dtype}")'


def floordiv_golden(dtype):
    info = np.iinfo(dtype)
    n, divisor = 100, 5
    c = np.arange(n, dtype=dtype)
    fixed = [info.min, info.min + 1, -11, -10, -6, -5, -4, -1, 0, 1, 4, 5, 6, 10, 11, info.max - 1]
    rng = np.random.default_rng(0)
    b = rng.integers(info.min, info.max, size=n, dtype=dtype)
    b[: len(fixed)] = np.array(fixed, dtype=dtype)
    shifted = (c.astype(np.int64) - int(info.max)).astype(dtype)
    want = np.stack([shifted // divisor, shifted % divisor, b // divisor, b % divisor]).astype(dtype)
    five, top = literal(divisor, dtype), literal(int(info.max), dtype)
    body = (f"let %s = subtract(%c, {top});\n"
            f"  let %got = stack((floor_divide(%s, {five}), floor_mod(%s, {five}), "
            f"floor_divide(%b, {five}), floor_mod(%b, {five})), axis=0);\n"
            f"  all(equal(%got, %want))")
    write(f"test_op_floordiv_{dtype}",
          [f"Ported from TVM tests/python/relay/test_op_floordiv.py::test_floor_div_op ({dtype}).",
           "TVM's program is TIR; the same floor division and modulo by 5 as Relay's floor_divide and",
           "floor_mod, on c - max (c = 0..99) and on b (fixed values, then seeded random ones).",
           "Expected (the .npz's want): numpy's // and %, rows c-max // 5, c-max % 5, b // 5, b % 5."],
          [("c", tensor_type(c)), ("b", tensor_type(b)), ("want", tensor_type(want))],
          body, {"c": c, "b": b, "want": want})


def qnn_golden(case, in_dtype, data, want, zero_point, scale, axis, out_dtype="float32", note="",
               test="test_op_qnn_dequantize"):
    data = np.asarray(data).astype(in_dtype)
    want = np.asarray(want).astype(out_dtype)
    npz = {"input_data": data, "want": want}
    params = [("input_data", tensor_type(data))]
    if np.ndim(scale) == 0:
        scale_text = f"{np.float32(scale)!r}".replace("np.float32(", "").rstrip(")") + "f"
        zp_text = f"{int(zero_point)}"
    else:
        npz["scale"] = np.asarray(scale, dtype="float32")
        npz["zero_point"] = np.asarray(zero_point, dtype="int32")
        params += [("scale", tensor_type(npz["scale"])), ("zero_point", tensor_type(npz["zero_point"]))]
        scale_text, zp_text = "%scale", "%zero_point"
    params.append(("want", tensor_type(want)))
    attrs = f", axis={axis}"
    if out_dtype != "float32":
        attrs += f', out_dtype="{out_dtype}"'
    body = f"all(equal(qnn.dequantize(%input_data, {scale_text}, {zp_text}{attrs}), %want))"
    expected = ("the test's own output array" if test == "test_op_qnn_dequantize"
                else "numpy's (q - zero_point) * scale")
    write(f"{test}_{case}",
          [f"Ported from TVM tests/python/relay/{test}.py::test_{case}{note}.",
           f"Expected: {expected} (the .npz's want), compared exactly."],
          params, body, npz)


def qnn_goldens():
    u8 = np.array([0, 1, 2, 3, 4, 251, 252, 253, 254, 255])
    i8 = np.array([-128, -127, -126, -125, -124, 123, 124, 125, 126, 127])
    out = np.array([-63.5, -63, -62.5, -62, -61.5, 62, 62.5, 63, 63.5, 64])
    qnn_golden("uint8_to_float32", "uint8", u8.reshape(2, 5), out.reshape(2, 5), 127, 0.5, -1)
    qnn_golden("int8_to_float32", "int8", i8.reshape(2, 5), out.reshape(2, 5), -1, 0.5, -1)
    qnn_golden("int8_to_float16", "int8", i8.reshape(2, 5), out.reshape(2, 5), -1, 0.5, -1, "float16")
    qnn_golden("scalar_int8_to_float32", "int8", np.array(-128), np.array(-63.5), -1, 0.5, -1)
    qnn_golden("int32_to_float32", "int32", np.array([113, 29, -1052]),
               np.array([0.6550452, 0.16810896, -6.098297]), 0, 0.0057968604, -1)
    chan = np.array([0, 1, 2, 3, 4, 243, 247, 249, 250, 251]).reshape(2, 5)
    chan_out = np.array([-63.5, -63, -62.5, -62, -61.5, 30, 31, 31.5, 31.75, 32]).reshape(2, 5)
    qnn_golden("channelwise_axis_1", "uint8", chan.T, chan_out.T, [127, 123], [0.5, 0.25], -1,
               note=" (a (5, 2) tensor, per-channel along axis -1)")
    qnn_golden("channelwise_axis_0", "uint8", chan, chan_out, [127, 123], [0.5, 0.25], 0)
    qnn_golden("per_tensor_vector_args", "uint8", u8, out, [127], [0.5], -1,
               note=" (one-element scale and zero-point vectors)")


def sim_dequantize_want(data, zero_point, scale, axis):
    """numpy's dequantization: (q - zp) * scale, per channel along `axis` for vector parameters."""
    q = np.asarray(data).astype(np.int32)
    zp, sc = np.asarray(zero_point, np.int32), np.asarray(scale, np.float32)
    if zp.ndim:
        shape = [1] * q.ndim
        shape[axis] = -1
        zp, sc = zp.reshape(shape), sc.reshape(shape)
    return ((q - zp).astype(np.float32) * sc).astype(np.float32)


def sim_dequantize_goldens():
    test = "test_op_qnn_simulated_dequantize"
    wide = np.array([-128, -90, -33, -1, 0, 1, 40, 99, 126, 127], dtype=np.float64).reshape(2, 5)
    for dt in ("uint8", "int8", "int32"):
        q = wide.astype(dt)  # numpy's cast, as the test's .astype(dtype)
        qnn_golden(f"simulated_dequantize_{dt}", dt, q, sim_dequantize_want(q, 127, 0.5, -1), 127, 0.5, -1,
                   note=f" (its dequantize_test_driver reference, {dt})", test=test)
    q = np.array([-64, -63, -20, -1, 0, 1, 17, 50, 62, 63], dtype=np.float64).reshape(2, 5).astype("int8")
    qnn_golden("dynamic_channels_scalar", "int8", q, sim_dequantize_want(q, 0, 0.5, 0), 0, 0.5, 0,
               note=" (the reference for the one-element scale and zero point, axis 0)", test=test)
    qnn_golden("dynamic_channels_per_channel", "int8", q, sim_dequantize_want(q, [127, 123], [0.5, 0.25], 0),
               [127, 123], [0.5, 0.25], 0, note=" (the per-channel reference, axis 0)", test=test)
    u = np.array([0, 3, 64, 126, 127, 128, 200, 250, 254, 255], dtype=np.float64).reshape(2, 5)
    qnn_golden("dynamic_dtype_uint8", "uint8", u.astype("uint8"), sim_dequantize_want(u.astype("uint8"), 127, 0.5, -1),
               127, 0.5, -1, note=" (the uint8 reference)", test=test)
    qnn_golden("dynamic_dtype_int8", "int8", u.astype("int8"), sim_dequantize_want(u.astype("int8"), 127, 0.5, -1),
               127, 0.5, -1, note=" (the int8 reference: data drawn from [0, 255) cast to int8, wrapping)",
               test=test)


if __name__ == "__main__":
    for dt in ("int8", "int16", "int32", "int64"):
        floordiv_golden(dt)
    qnn_goldens()
    sim_dequantize_goldens()
