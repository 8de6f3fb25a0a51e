#!/usr/bin/env python3
"""Writes conv_transpose_1d_3d.relay and its .npz (nn.conv1d_transpose, nn.conv3d_transpose), and
the ports of TVM's test_op_level2.py run tests test_conv1d_transpose_ncw_run and
test_conv3d_transpose_ncdhw_run (tests/golden/tvm/run/, the same reference on the test's shapes).

Every case runs the operator on fixed pseudo-random data from the .npz (or, for the integer cases,
on data the program builds from `arange`, so FoldConstant folds the call) and compares with this
script's own numpy reference: the transposed convolution written as a scatter (each input pixel
adds its value times the kernel into the output at i*stride + k*dilation - pad_before, cropped to
the output extent stride*(in-1) + dilated kernel - pads + output_padding). Floats within
|y - want| <= atol + rtol |want|, integers exactly; the program returns one bool per case.
Run: /usr/bin/python3 tests/golden/ops/make_conv_transpose_goldens.py
"""
import itertools
import os

import numpy as np

import npz_golden

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "conv_transpose_1d_3d"
SPATIAL = {1: "W", 3: "DHW"}


def tconv_ref(x, w, strides, padding, dilation, opad, groups):
    """x (N, C, S...), w (C, O/G, K...) -> (N, O, OS...), canonical layouts, float64 or int64."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    og = w.shape[1]
    cg = c // groups
    ins, ks = x.shape[2:], w.shape[2:]
    pb, pa = padding[:nd], padding[nd:]
    dk = [(k - 1) * d + 1 for k, d in zip(ks, dilation)]
    full = [s * (i - 1) + d + op for s, i, d, op in zip(strides, ins, dk, opad)]
    out = [f - b - a for f, b, a in zip(full, pb, pa)]
    acc = np.zeros((n, og * groups) + tuple(max(f, b + o) for f, b, o in zip(full, pb, out)),
                   dtype=np.float64 if x.dtype.kind == "f" else np.int64)
    for tap in itertools.product(*[range(k) for k in ks]):
        for g in range(groups):
            xg = x[:, g * cg:(g + 1) * cg].astype(acc.dtype)
            wg = w[g * cg:(g + 1) * cg, :, *tap].astype(acc.dtype)
            contrib = np.einsum("nc...,co->no...", xg, wg)
            idx = tuple(slice(t * d, t * d + s * (i - 1) + 1, s) for t, d, s, i in zip(tap, dilation, strides, ins))
            acc[(slice(None), slice(g * og, (g + 1) * og)) + idx] += contrib
    crop = tuple(slice(b, b + o) for b, o in zip(pb, out))
    return acc[(slice(None), slice(None)) + crop]


def perm(layout, canon):
    return [canon.index(ch) for ch in layout]


# (nd, x shape canonical, w shape canonical (C, O/G, K...), attrs, dtype, data layout, kernel layout)
CASES = [
    dict(nd=1, x=(1, 3, 18), w=(3, 10, 3), strides=[2], padding=[1, 1], dilation=[1], opad=[1], groups=1,
         dtype="float32", attrs="channels=10, kernel_size=[3], strides=[2], output_padding=[1], padding=[1]"),
    dict(nd=1, x=(2, 4, 7), w=(4, 3, 3), strides=[3], padding=[1, 2], dilation=[2], opad=[2], groups=2,
         dtype="float64", attrs="channels=6, strides=[3], output_padding=[2], padding=[1, 2], dilation=[2], groups=2"),
    dict(nd=1, x=(1, 5, 6), w=(5, 2, 4), strides=[1], padding=[0, 0], dilation=[1], opad=[0], groups=1,
         dtype="float32", dl="NWC", kl="WIO", attrs='data_layout="NWC", kernel_layout="WIO"'),
    dict(nd=1, x=(1, 6, 5), w=(6, 1, 3), strides=[2], padding=[1, 1], dilation=[1], opad=[0], groups=6,
         dtype="float32", attrs="channels=6, kernel_size=[3], strides=[2], padding=[1], groups=6"),
    dict(nd=1, x=(1, 2, 5), w=(2, 3, 2), strides=[2], padding=[0, 0], dilation=[1], opad=[1], groups=1,
         dtype="int32", const=True, attrs="strides=[2], output_padding=[1]"),
    dict(nd=1, x=(1, 2, 9), w=(2, 3, 3), strides=[2], padding=[1, 1], dilation=[1], opad=[0], groups=1,
         dtype="float16", attrs="strides=[2], padding=[1]"),
    dict(nd=3, x=(1, 3, 6, 5, 4), w=(3, 4, 2, 2, 2), strides=[1, 1, 1], padding=[1, 1, 1, 1, 1, 1],
         dilation=[1, 1, 1], opad=[0, 0, 0], groups=1, dtype="float32",
         attrs="channels=4, kernel_size=[2, 2, 2], padding=[1, 1, 1]"),
    dict(nd=3, x=(2, 4, 3, 4, 3), w=(4, 3, 2, 3, 2), strides=[2, 1, 2], padding=[0, 1, 1, 1, 0, 0],
         dilation=[1, 2, 1], opad=[1, 0, 1], groups=2, dtype="float64",
         attrs="channels=6, strides=[2, 1, 2], output_padding=[1, 0, 1], padding=[0, 1, 1, 1, 0, 0], dilation=[1, 2, 1], groups=2"),
    dict(nd=3, x=(1, 2, 3, 4, 5), w=(2, 3, 3, 2, 3), strides=[1, 2, 1], padding=[1, 0, 1, 1, 0, 1],
         dilation=[1, 1, 1], opad=[0, 1, 0], groups=1, dtype="float32", dl="NDHWC", kl="DHWIO",
         attrs='strides=[1, 2, 1], output_padding=[0, 1, 0], padding=[1, 0, 1], data_layout="NDHWC", kernel_layout="DHWIO"'),
    dict(nd=3, x=(1, 2, 2, 3, 2), w=(2, 2, 2, 2, 2), strides=[2, 2, 2], padding=[0, 0, 0, 0, 0, 0],
         dilation=[1, 1, 1], opad=[0, 0, 0], groups=1, dtype="int32", const=True, attrs="strides=[2, 2, 2]"),
]

TOL = {"float16": (2e-3, 2e-3), "float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}


def dims(shape):
    return ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")


def int_data_relay(shape, mult, mod, off):
    n = int(np.prod(shape))
    return (f'reshape(cast(subtract(floor_mod(multiply(arange(0, {n}, 1, dtype="int32"), {mult}), {mod}), {off}), '
            f'dtype="int32"), newshape=[{", ".join(str(d) for d in shape)}])')


def int_data_np(shape, mult, mod, off):
    n = int(np.prod(shape))
    return ((np.arange(n, dtype=np.int64) * mult) % mod - off).astype(np.int32).reshape(shape)


def main():
    rng = np.random.default_rng(20261127)
    arrays, params, body, results = {}, [], [], []
    for i, cs in enumerate(CASES):
        nd, dt = cs["nd"], cs["dtype"]
        canon_d, canon_k = "NC" + SPATIAL[nd], "IO" + SPATIAL[nd]
        dl, kl = cs.get("dl", canon_d), cs.get("kl", canon_k)
        if cs.get("const"):
            x = int_data_np(cs["x"], 7, 11, 5)
            w = int_data_np(cs["w"], 5, 7, 3)
        else:
            x = rng.uniform(-1, 1, size=cs["x"]).astype(dt)
            w = rng.uniform(-1, 1, size=cs["w"]).astype(dt)
        ref = tconv_ref(x, w, cs["strides"], cs["padding"], cs["dilation"], cs["opad"], cs["groups"])
        want = ref.astype(np.float32).astype(dt) if dt == "float16" else ref.astype(dt)
        xl = np.transpose(x, perm(dl, canon_d))
        wl = np.transpose(w, perm(kl, canon_k))
        wantl = np.transpose(want, perm(dl, canon_d))
        op = f"nn.conv{nd}d_transpose"
        if cs.get("const"):
            xe = int_data_relay(cs["x"], 7, 11, 5)
            we = int_data_relay(cs["w"], 5, 7, 3)
            arrays[f"want{i}"] = wantl
            params.append(f"%want{i}: Tensor[({dims(wantl.shape)}), {dt}]")
            body.append(f"let %y{i} = {op}({xe}, {we}, {cs['attrs']});")
            results.append(f"all(equal(%y{i}, %want{i}))")
            continue
        arrays[f"x{i}"], arrays[f"w{i}"], arrays[f"want{i}"] = xl, wl, wantl
        params += [f"%x{i}: Tensor[({dims(xl.shape)}), {dt}]", f"%w{i}: Tensor[({dims(wl.shape)}), {dt}]",
                   f"%want{i}: Tensor[({dims(wantl.shape)}), {dt}]"]
        body.append(f"let %y{i} = {op}(%x{i}, %w{i}, {cs['attrs']});")
        rtol, atol = TOL[dt]
        sfx = {"float16": "f16", "float32": "f", "float64": "f64"}[dt]
        results.append(npz_golden.close_to(f"%y{i}", f"%want{i}", rtol, atol, sfx))
    header = ["nn.conv1d_transpose and nn.conv3d_transpose against numpy (make_conv_transpose_goldens.py):",
              "strides, asymmetric padding, output_padding, dilation, groups, depthwise, channel-last layouts,",
              "float16/32/64 within tolerance, int32 exactly (built from arange: FoldConstant folds those)."]
    npz_golden.write(os.path.join(HERE, NAME), header, arrays, params, body, results,
                     run_flags=["", "--pass=FoldConstant "])


TVM_RUN = [("test_op_level2_conv1d_transpose_ncw_run", 0, "test_conv1d_transpose_ncw_run", None),
           ("test_op_level2_conv3d_transpose_ncdhw_run", 6, "test_conv3d_transpose_ncdhw_run", (1, 3, 24, 24, 24))]


def write_tvm_run(name, case, test, xshape):
    """TVM's test on uniform [0, 1) data (the test's distribution), allclose rtol = atol = 1e-5;
    xshape: the test's data shape where the case here is smaller."""
    cs = dict(CASES[case])
    if xshape:
        cs["x"] = xshape
    rng = np.random.default_rng(case)
    x = rng.uniform(size=cs["x"]).astype("float32")
    w = rng.uniform(size=cs["w"]).astype("float32")
    want = tconv_ref(x, w, cs["strides"], cs["padding"], cs["dilation"], cs["opad"], cs["groups"]).astype("float32")
    run_dir = os.path.join(HERE, "..", "tvm", "run")
    np.savez(os.path.join(run_dir, name + ".npz"), x=x, w=w, want=want)
    op = f"nn.conv{cs['nd']}d_transpose"
    with open(os.path.join(run_dir, name + ".relay"), "w") as f:
        f.write(f"// Ported from TVM tests/python/relay/test_op_level2.py::{test}: {op}(x, w, {cs['attrs']})\n")
        f.write(f"// on uniform data, compared with topi's reference within rtol = atol = 1e-5; here x, w and numpy's\n")
        f.write("// reference `want` come from the .npz (tests/golden/ops/make_conv_transpose_goldens.py).\n")
        f.write(f"// RUN: relayc --run %s --inputs %d/{name}.npz\n")
        f.write("// OUT: True\n")
        f.write('#[version = "0.0.5"]\n')
        f.write(f"def @main(%x: Tensor[({dims(x.shape)}), float32], %w, %want: Tensor[({dims(want.shape)}), float32]) {{\n")
        f.write(f"  let %y = {op}(%x, %w, {cs['attrs']});\n")
        f.write("  all(less_equal(abs(subtract(%y, %want)), add(1e-05f, multiply(1e-05f, abs(%want)))))\n}\n")


if __name__ == "__main__":
    main()
    for args in TVM_RUN:
        write_tvm_run(*args)
