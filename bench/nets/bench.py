#!/usr/bin/python3
"""bench/nets/bench.py — relayc vs PyTorch eager on real networks (issue 5, "Speed").

    /usr/bin/python3 bench/nets/bench.py [NET...] [--relayc build/relayc] [--runs 5]
                                         [--threads 2] [--layers 4] [--dir DIR] [--no-verify]

For each NET (default resnet50 mobilenet_v2 resnext50_32x4d gpt2), all in the same run, medians of --runs:
  start-up   `relayc FILE` alone: parse + resolve + type-check + metadata load (wall time)
  forward    warm forward pass: `relayc --run --repeat=runs+1` evaluates @main again and again
             in one process; the median of the passes after the first (like PyTorch's,
             timed after a warm-up pass), without start-up or printing
  cold       the first pass of each process (fresh memory, first calls), median
  torch      PyTorch eager forward (bench/nets/torch_ref.py on the same graph and weights,
             torch.set_num_threads(--threads), inference mode, after one warm-up pass), in a
             fresh process with OpenMP spin-waiting (torch's default) and with
             OMP_WAIT_POLICY=PASSIVE; the faster median counts (spinning collapses when other
             processes share the cores; the "omp" note says which won)
  ratio      forward / torch (<= 1.0: relayc is at least as fast)
  (min ...)  the same from the fastest run of each (less sensitive to other load)
  --run wall the whole `relayc --run --profile --repeat` process (start-up, lowering, all
             passes, printing)
  RSS        peak resident memory of `relayc --run` against the size of the weights
and the max relative error of relayc's output against PyTorch's (unless --no-verify).
For ResNet-50 also: achieved GFLOP/s (conv/dense multiply-adds ÷ forward time) against the
OpenBLAS square-sgemm rate (bench/nets/sgemm_rate.c, N=1024, --threads threads) measured now.
relayc gets RELAYC_NUM_THREADS=--threads unless the variable is already set.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import verify  # noqa: E402

BLAS_INC = "/usr/include/x86_64-linux-gnu/openblas-pthread"
BLAS_LIB = "/usr/lib/x86_64-linux-gnu/openblas-pthread"


def timed(cmd, env):
    """(wall seconds, stderr text, peak RSS in bytes, exit status) of one run."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "@@RSS %M"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, env=env)
    dt = time.perf_counter() - t0
    err = p.stderr.decode(errors="replace")
    m = re.search(r"@@RSS (\d+)\s*$", err)
    return dt, err, (int(m.group(1)) * 1024 if m else 0), p.returncode


def relayc_figures(relayc, base, inputs, runs, env):
    """start-up, warm forward (median, min), cold forward, --run wall, peak RSS, profile table.
    Each of `runs` processes evaluates @main runs+1 times (--repeat): its first pass is the
    cold one (fresh memory, first calls), the others are warm like PyTorch's timed passes."""
    startup = []
    for _ in range(runs):
        dt, err, _, rc = timed([relayc, base + ".relay"], env)
        if rc != 0:
            raise RuntimeError(f"relayc {base}.relay failed:\n{err[-1500:]}")
        startup.append(dt)
    cmd = [relayc, "--run", "--profile", f"--repeat={runs + 1}", base + ".relay"]
    for k in inputs:
        cmd += ["--input", f"{k}={base}.{k}.npy"]
    warm, warm_min, cold, wall, rss, table = [], [], [], [], 0, ""
    for _ in range(runs):
        dt, err, peak, rc = timed(cmd, env)
        m = re.search(r"Runs: \d+, first ([0-9.]+) ms, then median ([0-9.]+) ms, min ([0-9.]+) ms", err)
        if rc != 0 or not m:
            raise RuntimeError(f"relayc --run {base}.relay failed:\n{err[-1500:]}")
        cold.append(float(m.group(1)) / 1e3)
        warm.append(float(m.group(2)) / 1e3)
        warm_min.append(float(m.group(3)) / 1e3)
        wall.append(dt)
        rss = max(rss, peak)
        table = err
    return (statistics.median(startup), statistics.median(warm), min(warm_min),
            statistics.median(cold), statistics.median(wall), rss, table)


def torch_worker(a):
    """--torch-worker NET: prints "median min" seconds of PyTorch forward passes."""
    import torch
    torch.set_num_threads(a.threads)
    import torch_ref
    _, g, inputs = verify.prepare(a.torch_worker, a.dir, a.layers if a.torch_worker == "gpt2" else None)
    prog = torch_ref.compile_graph(g)
    tens = {k: torch.from_numpy(v) for k, v in inputs.items()}
    times = []
    with torch.inference_mode():
        torch_ref.forward(prog, tens)  # warm-up
        for _ in range(a.runs):
            t0 = time.perf_counter()
            torch_ref.forward(prog, tens)
            times.append(time.perf_counter() - t0)
    print(statistics.median(times), min(times))


def torch_forward(net, a):
    """Median PyTorch forward time, in a fresh process for each OpenMP wait policy (torch's
    default spinning and OMP_WAIT_POLICY=PASSIVE, which is much faster when other processes
    compete for the cores); the faster median is PyTorch's figure. Returns (median, min, policy)."""
    best = None
    for policy in (None, "PASSIVE"):
        env = dict(os.environ)
        env.pop("OMP_WAIT_POLICY", None)
        if policy:
            env["OMP_WAIT_POLICY"] = policy
        cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", net, "--dir", a.dir,
               "--runs", str(a.runs), "--threads", str(a.threads)]
        if a.layers:
            cmd += ["--layers", str(a.layers)]
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.decode(errors="replace")[-1500:])
        med, low = (float(x) for x in p.stdout.split()[:2])
        if best is None or med < best[0]:
            best = (med, low, policy or "spin")
    return best


def sgemm_rate(threads, tmp):
    exe = os.path.join(tmp, "sgemm_rate")
    src = os.path.join(HERE, "sgemm_rate.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        subprocess.run(["gcc", "-O2", f"-I{BLAS_INC}", src, f"-L{BLAS_LIB}", "-lopenblas", "-o", exe],
                       check=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    return float(subprocess.run([exe, "1024", "9"], env=env, check=True, stdout=subprocess.PIPE)
                 .stdout.decode())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nets", nargs="*", default=["resnet50", "mobilenet_v2", "resnext50_32x4d", "gpt2"])
    ap.add_argument("--relayc", default=os.path.join(HERE, "..", "..", "build", "relayc"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--layers", type=int, help="gpt2 blocks (default 2)")
    ap.add_argument("--dir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "relayc-nets"))
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--profile", action="store_true", help="also print relayc's operator table")
    ap.add_argument("--torch-worker", metavar="NET", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        return torch_worker(a)
    import torch
    torch.set_num_threads(a.threads)
    import torch_ref
    env = dict(os.environ)
    env.setdefault("RELAYC_NUM_THREADS", str(a.threads))
    relayc = os.path.abspath(a.relayc)
    print(f"relayc vs PyTorch {torch.__version__} eager, batch 1, float32, {a.threads} threads, "
          f"medians of {a.runs} runs")
    print(f"{'network':16s} {'start-up':>10s} {'forward':>10s} {'torch':>10s} {'ratio':>7s} "
          f"{'(min fwd':>9s} {'torch':>8s} {'ratio)':>7s} {'cold':>8s} {'--run wall':>10s} {'peak RSS':>10s} {'weights':>9s} {'RSS/w':>6s} {'max rel err':>12s}")
    resnet = None
    failed = False
    for net in a.nets:
        base, g, inputs = verify.prepare(net, a.dir, a.layers if net == "gpt2" else None)
        wbytes = sum(c.nbytes for c in g.consts)
        try:
            st, fw, fw_min, cold, wall, rss, table = relayc_figures(relayc, base, inputs, a.runs, env)
        except RuntimeError as e:
            print(f"{net:16s} FAILED: {e}")
            failed = True
            continue
        try:
            tt, tt_min, policy = torch_forward(net, a)
        except RuntimeError as e:
            print(f"{net:16s} FAILED (PyTorch): {e}")
            failed = True
            continue
        err = "-"
        if not a.no_verify:
            got, _, msg = verify.run_relayc(relayc, base, inputs, g.result.kind == "tuple")
            ref = torch_ref.run(torch_ref.compile_graph(g), inputs)
            refs, gots = (ref, got) if isinstance(ref, list) else ([ref], [got])
            e = max(verify.rel_err(x, y) for x, y in zip(gots, refs)) if got is not None else float("inf")
            err = f"{e:.2e}" + ("" if e <= 1e-4 else " FAIL")
            failed |= e > 1e-4
        print(f"{net:16s} {st * 1e3:8.0f}ms {fw * 1e3:8.1f}ms {tt * 1e3:8.1f}ms {fw / tt:6.2f}x "
              f"{fw_min * 1e3:7.1f}ms {tt_min * 1e3:6.1f}ms {fw_min / tt_min:6.2f}x {cold * 1e3:6.1f}ms {wall * 1e3:8.0f}ms {rss / 1e6:8.0f}MB {wbytes / 1e6:7.1f}MB {rss / wbytes:5.2f}x {err:>12s}  (omp {policy})")
        if a.profile:
            print(table.split("@@RSS")[0].rstrip())
        if net == "resnet50":
            resnet = (torch_ref.count_flops(g, inputs), fw)
    if resnet:
        flops, fw = resnet
        blas = sgemm_rate(a.threads, a.dir)
        rate = flops / fw / 1e9
        print(f"ResNet-50: {flops / 1e9:.2f} GFLOP per forward pass -> {rate:.1f} GFLOP/s; "
              f"OpenBLAS sgemm 1024^3 ({a.threads} threads): {blas:.1f} GFLOP/s -> "
              f"{100 * rate / blas:.0f}% of sgemm")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
