#!/usr/bin/python3
"""bench/nets/make_golden.py — (re)write tests/golden/nets/mnist.relay and its input.

    /usr/bin/python3 bench/nets/make_golden.py [--seed 7] [--check-torch]

The golden test is the MNIST network of bench/nets/models.py (exactly as TVM prints it, with
the weights in its #[metadata] section) run on tests/golden/nets/mnist_x.npy. Weights and input
are random small dyadic rationals (multiples of 1/8 and 1/4), so every product and partial sum
of the forward pass is exactly representable in float32: the result has the same bits whatever
the summation order, blocking or FMA use of the kernels, and the expected `// OUT:` line (from
an independent float64 NumPy computation, checked here to be exact) can be compared as text.
--check-torch also checks the PyTorch reference (bench/nets/torch_ref.py) against it.
"""
import argparse
import io
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402

GOLDEN = os.path.join(HERE, "..", "..", "tests", "golden", "nets")


def conv2d(x, w):
    """Valid 2-D convolution, NCHW/OIHW, stride 1 (float64)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for r in range(kh):
        for s in range(kw):
            out += np.einsum("nchw,oc->nohw", x[:, :, r:r + out.shape[2], s:s + out.shape[3]], w[:, :, r, s])
    return out


def max_pool(x, k):
    n, c, h, w = x.shape
    oh, ow = (h - k) // k + 1, (w - k) // k + 1
    return x[:, :, :oh * k, :ow * k].reshape(n, c, oh, k, ow, k).max(axis=(3, 5))


def mnist_ref(c, x):
    """Float64 forward pass; also returns the largest |partial sum| bound per GEMM-like layer
    scaled by its resolution (must stay below 2**24 for float32 exactness)."""
    c = [a.astype(np.float64) for a in c]
    x = x.astype(np.float64)
    bounds = []
    pad = ((0, 0), (0, 0), (2, 2), (2, 2))
    h = np.pad(x, pad)
    bounds.append(conv2d(np.abs(h), np.abs(c[0])).max() * 32)         # 1/4 · 1/8
    h = max_pool(np.maximum(conv2d(h, c[0]) + c[1], 0), 2)
    h = np.pad(h, pad)
    bounds.append(conv2d(np.abs(h), np.abs(c[2])).max() * 256)        # 1/32 · 1/8
    h = max_pool(np.maximum(conv2d(h, c[2]) + c[3], 0), 3)
    h = h.reshape(1, 256)
    bounds.append((np.abs(h) @ np.abs(c[4]).T).max() * 2048)          # 1/256 · 1/8
    return h @ c[4].T + c[5], bounds


def fmt_f32(v):
    """relayc's float32 element text (runtime/format.c): fewest %g digits that read back."""
    f = np.float32(v)
    if f == 0:
        return "-0f" if np.signbit(f) else "0f"
    for p in range(1, 10):
        s = "%.*g" % (p, float(f))
        if np.float32(float(s)) == f:
            break
    x = int(("%.*e" % (p - 1, float(f))).split("e")[1])
    return "%.*g" % (x + 1 if p <= x < 9 else p, float(f)) + "f"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--check-torch", action="store_true")
    a = ap.parse_args()
    g, inputs = models.mnist(seed=a.seed, exact=True)
    consts = g.order_consts()
    ref, bounds = mnist_ref(consts, inputs["x"])
    assert all(b < 2 ** 24 for b in bounds), f"not exact in float32: {bounds}"
    assert np.all(ref.astype(np.float32).astype(np.float64) == ref)
    out = "[[" + ", ".join(fmt_f32(v) for v in ref[0]) + "]]"
    if a.check_torch:
        import torch_ref
        got = torch_ref.run(torch_ref.compile_graph(g), inputs)
        assert np.array_equal(got.astype(np.float64), ref), (got, ref)
    text = io.StringIO()
    g.to_text(text)
    header = (
        "// RUN: relayc --run %s --input x=%d/mnist_x.npy\n"
        f"// OUT: {out}\n"
        "// The MNIST network (ONNX model zoo mnist-8 as TVM imports it: pad, conv2d 5x5, add,\n"
        "// relu, max_pool2d, reshape, dense), printed exactly as TVM prints it, with random\n"
        f"// weights in the #[metadata] section (bench/nets/models.py mnist, exact=True, seed {a.seed};\n"
        "// regenerate with bench/nets/make_golden.py). Weights and input are random multiples of\n"
        "// 1/8 and 1/4 so that every product and partial sum is exact in float32: the logits have\n"
        "// the same bits for any summation order, and the OUT line (a float64 NumPy reference,\n"
        "// checked exact) is compared as text.\n")
    os.makedirs(GOLDEN, exist_ok=True)
    with open(os.path.join(GOLDEN, "mnist.relay"), "w") as f:
        f.write(header + text.getvalue())
    np.save(os.path.join(GOLDEN, "mnist_x.npy"), inputs["x"])
    print(f"wrote {os.path.normpath(GOLDEN)}/mnist.relay; bounds {[int(b) for b in bounds]}; {out}")


if __name__ == "__main__":
    main()
