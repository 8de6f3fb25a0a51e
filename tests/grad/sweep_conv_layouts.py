#!/usr/bin/env python3
"""Sweep of the convolution gradients over layouts and groups (issue 12).

Every combination of data layout (NCHW, NHWC, NCHW2c, NCHW4c), kernel layout (OIHW, HWIO,
OIHW2i, OIHW2o, OIHW2i2o, ...; IOHW-based ones for nn.conv2d_transpose), out_layout (the data
layout or NCHW), channel/group shape (groups 1, 3, depthwise with multiplier 1 and 2) and
geometry (stride 2 or 1 with padding 1; stride 2, dilation 2, padding 2) is
written as a small float64 program: canonical parameters, layout_transform into the layouts,
the convolution, its result squared and summed. A combination whose forward call does not
type-check is not a convolution to differentiate and is counted as such. For the others:

  relayc --grad --print      must exit 0 (a gradient that type-checks);
  relayc --check-grad[=mode] must exit 0 in both modes (against central differences),
  or, for a layout the rules cannot differentiate, exit 1 with a located diagnostic that is
  not an internal error.

    /usr/bin/python3 tests/grad/sweep_conv_layouts.py [--relayc build/relayc] [-j N] [-k SUBSTRING] [-v]

Prints one line per failing combination and `sweep: N ok, N refused, N not well-typed, N failed`;
exits 1 if anything failed. Not part of `make check` (a few hundred relayc runs); the
combinations it found broken are gradcheck cases in run_gradcheck.py.
"""
import argparse
import concurrent.futures
import itertools
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("sweep: numpy not available, skipped")
    sys.exit(0)

DATA_LAYOUTS = ["NCHW", "NHWC", "NCHW2c", "NCHW4c"]
CONV_KERNELS = ["OIHW", "HWIO", "OHWI", "OIHW2i", "OIHW2o", "OIHW2i2o", "OIHW2o2i", "OIHW4o"]
TCONV_KERNELS = ["IOHW", "OIHW", "HWOI", "IOHW2i", "IOHW2o", "IOHW2i2o"]
# (C, O, groups): plain, grouped with O = C and O != C, depthwise, depthwise multiplier 2 with
# the weight (O, 1, k...) and (negative groups) TVM's depthwise form (C, O/C, k...)
SHAPES = [(6, 6, 1), (6, 4, 1), (6, 6, 3), (6, 3, 3), (6, 9, 3), (6, 6, 6), (4, 8, 4), (4, 8, -4), (3, 3, 3)]
GEOMS = {"s2p1": "strides=[2, 2], padding=[1, 1]", "s1p1": "padding=[1, 1]",
         "s2d2p2": "strides=[2, 2], padding=[2, 2], dilation=[2, 2]"}


def combos():
    for op, kernels in (("conv2d", CONV_KERNELS), ("conv2d_transpose", TCONV_KERNELS)):
        for dl, kl, (C, O, G), geom in itertools.product(DATA_LAYOUTS, kernels, SHAPES, GEOMS):
            for ol in ([""] + (["NCHW"] if dl != "NCHW" else [])):
                yield op, dl, kl, ol, C, O, G, geom


def program(op, dl, kl, ol, C, O, G, geom):
    H, W = 5, 4
    if G < 0:  # TVM's depthwise weight (C, multiplier, k...)
        G = -G
        wshape, canon_k = (C, O // C, 3, 3), "OIHW"
    elif op == "conv2d":
        wshape, canon_k = (O, C // G, 3, 3), "OIHW"
    else:  # weight (Ci, Co/G, kh, kw), Ci = C the data's channels
        wshape, canon_k = (C, O // G, 3, 3), "IOHW"
    xshape = (1, C, H, W)

    def lt(v, src, dst):
        return v if src == dst else f'layout_transform({v}, src_layout="{src}", dst_layout="{dst}")'

    attrs = f'{GEOMS[geom]}, groups={G}, channels={O}, kernel_size=[3, 3], data_layout="{dl}", kernel_layout="{kl}"'
    if ol:
        attrs += f', out_layout="{ol}"'
    call = f"nn.{op}({lt('%x', 'NCHW', dl)}, {lt('%w', canon_k, kl)}, {attrs})"
    sig = f"%x: Tensor[({', '.join(map(str, xshape))}), float64], %w: Tensor[({', '.join(map(str, wshape))}), float64]"
    text = f'#[version = "0.0.5"]\ndef @main({sig}) {{\n  %0 = {call};\n  sum(multiply(%0, %0))\n}}\n'
    return text, xshape, wshape


def run(relayc, argv, timeout=300):
    r = subprocess.run([relayc] + argv, capture_output=True, timeout=timeout)
    return r.returncode, (r.stdout + r.stderr).decode(errors="replace")


def check(relayc, tmp, i, combo):
    text, xshape, wshape = program(*combo)
    base = os.path.join(tmp, f"c{i}")
    with open(base + ".relay", "w") as f:
        f.write(text)
    rng = np.random.default_rng(i)
    np.save(base + "_x.npy", rng.uniform(-1, 1, xshape))
    np.save(base + "_w.npy", rng.uniform(-1, 1, wshape))
    inputs = ["--input", f"x={base}_x.npy", "--input", f"w={base}_w.npy"]
    rc, out = run(relayc, [base + ".relay"])
    if rc != 0:
        return "ill-typed", out
    rc, out = run(relayc, ["--grad", "--print", base + ".relay"])
    if rc == 1 and "internal" not in out and "error:" in out:
        return "refused", out
    if rc != 0:
        return "FAIL", f"--grad --print: exit {rc}\n{out}"
    for mode in ("higher_order", "first_order"):
        rc, out = run(relayc, [f"--check-grad={mode}", base + ".relay"] + inputs)
        if rc != 0:
            return "FAIL", f"--check-grad={mode}: exit {rc}\n{out}"
    return "ok", ""


def name(op, dl, kl, ol, C, O, G, geom):
    form = " (C, O/C) weight" if G < 0 else ""
    return f"{op} {dl}/{kl}{'/' + ol if ol else ''} C={C} O={O} groups={abs(G)}{form} {geom}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("-k", default="", help="only combinations whose name contains this")
    ap.add_argument("-v", action="store_true", help="print the output of failing and refused combinations")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    todo = [c for c in combos() if a.k in name(*c)]
    counts = {"ok": 0, "refused": 0, "ill-typed": 0, "FAIL": 0}
    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
            results = list(ex.map(lambda ic: check(relayc, tmp, ic[0], ic[1]), enumerate(todo)))
    for c, (status, out) in zip(todo, results):
        counts[status] += 1
        if status in ("FAIL", "refused"):
            print(f"{status} {name(*c)}")
            if a.v or status == "FAIL":
                print("  " + out.strip().replace("\n", "\n  ")[:1500])
    print(f"sweep: {counts['ok']} ok, {counts['refused']} refused, {counts['ill-typed']} not well-typed, "
          f"{counts['FAIL']} failed")
    sys.exit(1 if counts["FAIL"] else 0)


if __name__ == "__main__":
    main()
