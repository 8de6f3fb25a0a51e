#!/usr/bin/python3
"""bench/nets/verify.py — run the networks with relayc and compare with PyTorch.

    /usr/bin/python3 bench/nets/verify.py [NET...] [--relayc build/relayc] [--dir DIR]
                                          [--layers L] [--tol 1e-4]

For each NET (default: mnist resnet50 mobilenet_v2 resnext50_32x4d gpt2) generates the module, weights and
input (bench/nets/gen.py, cached in DIR), runs `relayc --run --input ... --output ...`,
evaluates the same graph from the same weights with PyTorch eager (bench/nets/torch_ref.py,
2 threads) and reports, for each output tensor, the relative error
    max|relayc - torch| / max(max|torch|, 1e-30)
which must be <= --tol (default 1e-4, float32). Exit status 1 if any network fails.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402

ALL = ["mnist", "resnet50", "mobilenet_v2", "resnext50_32x4d", "gpt2"]


def rel_err(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return float("inf")
    if ref.size == 0:
        return 0.0
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


def prepare(net, out_dir, layers=None, seed=0):
    """Generates (or reuses) NET's files; returns (base path, graph with file weights, inputs)."""
    base = os.path.join(out_dir, gen.stem(net, layers))
    g, inputs = gen.build(net, seed, layers)
    if not (os.path.exists(base + ".relay") and os.path.exists(base + ".weights.npz")):
        base, g, inputs = gen.write(net, out_dir, seed, layers)
    else:
        g.load_weights(base + ".weights.npz")
        inputs = {k: np.load(f"{base}.{k}.npy") for k in inputs}
    return base, g, inputs


def run_relayc(relayc, base, inputs, tuple_result):
    out = base + (".out.npz" if tuple_result else ".out.npy")
    cmd = [relayc, "--run", base + ".relay", "--output", out]
    for k in inputs:
        cmd += ["--input", f"{k}={base}.{k}.npy"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        return None, dt, p.stderr.decode(errors="replace")[-2000:]
    if tuple_result:
        with np.load(out) as z:
            return [z[f"arr_{i}"] for i in range(len(z.files))], dt, ""
    return np.load(out), dt, ""


def verify(net, a, torch_ref):
    base, g, inputs = prepare(net, a.dir, a.layers if net == "gpt2" else None)
    tuple_result = g.result.kind == "tuple"
    got, dt, err = run_relayc(a.relayc, base, inputs, tuple_result)
    if got is None:
        print(f"{net:16s} FAIL: relayc failed ({dt:.1f} s):\n{err}")
        return False
    ref = torch_ref.run(torch_ref.compile_graph(g), inputs)
    refs = ref if isinstance(ref, list) else [ref]
    gots = got if isinstance(got, list) else [got]
    if len(refs) != len(gots):
        print(f"{net:16s} FAIL: {len(gots)} outputs, expected {len(refs)}")
        return False
    errs = [rel_err(x, y) for x, y in zip(gots, refs)]
    worst = max(errs)
    ok = worst <= a.tol
    print(f"{net:16s} {'ok  ' if ok else 'FAIL'} max rel err {worst:.2e} over {len(errs)} output(s)"
          f" (tol {a.tol:g}; relayc run {dt:.2f} s)")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nets", nargs="*", default=ALL)
    ap.add_argument("--relayc", default=os.path.join(HERE, "..", "..", "build", "relayc"))
    ap.add_argument("--dir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "relayc-nets"))
    ap.add_argument("--layers", type=int, help="gpt2 blocks (default 2)")
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    import torch
    torch.set_num_threads(2)
    import torch_ref
    ok = all([verify(n, a, torch_ref) for n in a.nets])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
