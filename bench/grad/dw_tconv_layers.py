#!/usr/bin/python3
"""bench/grad/dw_tconv_layers.py — MobileNet-V2's stride-2 depthwise data gradients, per layer.

    /usr/bin/python3 bench/grad/dw_tconv_layers.py --new build/relayc [--old OTHER_RELAYC] [--runs 5] [--threads 2]
        [--dilation D]

Each layer is the depthwise nn.conv2d_transpose that is the data gradient of a 3x3 stride-2
depthwise convolution (dilation D, default 1, padding D, output_padding 1, groups = channels)
at batch 1, float32, as a one-operator program. Per binary (--old, e.g. a build of the previous kernel, and --new) and
per round: `relayc --run --repeat=11` in a fresh process, the in-process median wall and CPU
(user + system, all threads) of the 10 warm evaluations. PyTorch: aten.convolution_backward
for the input only (what autograd calls for the depthwise convolution's data gradient) on the
same operands, the median of 20 calls after 10 warm-ups (wall, time.process_time;
OMP_WAIT_POLICY from the environment). Rounds interleave the contenders so they see the same
load; the figures are medians over --runs rounds. The outputs of --old and --new are compared
once (max abs difference).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

LAYERS = [(96, 56), (144, 28), (192, 14), (576, 7)]  # channels, extent of the adjoint (output / 2)


def program(C, E, D):
    return (f'#[version = "0.0.5"]\ndef @main(%g: Tensor[(1, {C}, {E}, {E}), float32], %w: Tensor[({C}, 1, 3, 3), float32]) {{\n'
            f'  nn.conv2d_transpose(%g, %w, channels={C}, kernel_size=[3, 3], strides=[2, 2], padding=[{D}, {D}], '
            f'dilation=[{D}, {D}], output_padding=[1, 1], groups={C})\n}}\n')


def run_relayc(binary, path, g, w, threads, out=None):
    argv = [binary, "--run", "--repeat=11", path, "--input", f"g={g}", "--input", f"w={w}"]
    if out:
        argv += ["--output", out]
    env = dict(os.environ, RELAYC_NUM_THREADS=str(threads))
    r = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    m = re.search(r"then median ([\d.]+) ms, min [\d.]+ ms, cpu median ([\d.]+) ms", r.stderr)
    return float(m.group(1)), float(m.group(2))


def run_torch(torch, g, w, C, D):
    gt, wt = torch.from_numpy(g), torch.from_numpy(w)
    E = g.shape[2]
    x = torch.zeros((1, C, 2 * E, 2 * E))
    walls, cpus = [], []
    with torch.no_grad():
        for i in range(30):
            t0, c0 = time.perf_counter(), time.process_time()
            # what autograd calls for the depthwise convolution's input gradient
            torch.ops.aten.convolution_backward(gt, x, wt, None, [2, 2], [D, D], [D, D], False, [0, 0], C,
                                                [True, False, False])
            t1, c1 = time.perf_counter(), time.process_time()
            if i >= 10:
                walls.append((t1 - t0) * 1e3)
                cpus.append((c1 - c0) * 1e3)
    return statistics.median(walls), statistics.median(cpus)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--new", default="build/relayc")
    ap.add_argument("--old")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dilation", type=int, default=1)
    a = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(a.threads)
    except ImportError:
        torch = None
    names = ["new"] + (["old"] if a.old else []) + (["torch"] if torch else [])
    rng = np.random.default_rng(0)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.1f}, "
          f"{a.threads} threads, dilation {a.dilation}, medians of {a.runs} rounds (wall / CPU ms)")
    print("| layer | " + " | ".join(f"{n} wall | {n} CPU" for n in names) + " |")
    print("|---" * (1 + 2 * len(names)) + "|")
    totals = {n: [0.0, 0.0] for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        for C, E in LAYERS:
            path, gp, wp = (os.path.join(tmp, f) for f in ("l.relay", "g.npy", "w.npy"))
            with open(path, "w") as f:
                f.write(program(C, E, a.dilation))
            g = rng.standard_normal((1, C, E, E)).astype(np.float32)
            w = rng.standard_normal((C, 1, 3, 3)).astype(np.float32)
            np.save(gp, g)
            np.save(wp, w)
            if a.old:
                on, oo = os.path.join(tmp, "n.npy"), os.path.join(tmp, "o.npy")
                run_relayc(a.new, path, gp, wp, a.threads, on)
                run_relayc(a.old, path, gp, wp, a.threads, oo)
                diff = float(np.abs(np.load(on) - np.load(oo)).max())
            res = {n: [] for n in names}
            for _ in range(a.runs):
                res["new"].append(run_relayc(a.new, path, gp, wp, a.threads))
                if a.old:
                    res["old"].append(run_relayc(a.old, path, gp, wp, a.threads))
                if torch:
                    res["torch"].append(run_torch(torch, g, w, C, a.dilation))
            cells = []
            for n in names:
                wall = statistics.median(r[0] for r in res[n])
                cpu = statistics.median(r[1] for r in res[n])
                totals[n][0] += wall
                totals[n][1] += cpu
                cells.append(f"{wall:.2f} | {cpu:.2f}")
            extra = f" (max |new - old| = {diff:g})" if a.old else ""
            print(f"| {C}x{2 * E}x{2 * E}{extra} | " + " | ".join(cells) + " |")
    print("| sum | " + " | ".join(f"{totals[n][0]:.2f} | {totals[n][1]:.2f}" for n in names) + " |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
