#!/usr/bin/env python3
"""bench/passes/pass_ab.py — two relayc binaries on the same passes and inputs, runs interleaved.

    python3 bench/passes/pass_ab.py before=OLD/relayc,after=build/relayc [--runs 5]
                                    [--cases Gradient:chain,Gradient:letchain,FirstOrderGradient:chain]
                                    [--passes ToANormalForm,ToCPS --inputs big,chain]

--passes with --inputs times every pass on every input (instead of --cases); UnCPS runs
after ToCPS (its row is timed), as in run.py.

Each run is `relayc --pass=P --time-passes $TMPDIR/relayc-bench/IN.relay` (the inputs
bench/passes/run.py caches); the binaries alternate run by run so load changes hit both.
Prints the medians of the pass's CPU ms and of the re-typing after it, wall next to them,
and of the process's peak resident set (MB, from wait4).
"""
import argparse
import os
import statistics
import subprocess
import tempfile

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("bins", help="name=path,name=path")
ap.add_argument("--runs", type=int, default=5)
ap.add_argument("--cases", default="Gradient:chain,Gradient:letchain,FirstOrderGradient:chain",
                help="PASS:INPUT,... (inputs: big, chain, letchain)")
ap.add_argument("--passes", help="PASS,... timed on each of --inputs (replaces --cases)")
ap.add_argument("--inputs", default="big,chain,letchain", help="with --passes: big, chain, letchain")
a = ap.parse_args()
bins = dict(b.split("=", 1) for b in a.bins.split(","))
if a.passes:
    cases = [[p, i] for i in a.inputs.split(",") for p in a.passes.split(",")]
else:
    cases = [c.split(":", 1) for c in a.cases.split(",")]
SPEC = {"UnCPS": "ToCPS,UnCPS"}  # the pass a timed pass needs before it
root = os.path.join(os.environ.get("TMPDIR", tempfile.gettempdir()), "relayc-bench")
res = {}
for _ in range(a.runs):
    for p, inp in cases:
        for name, b in bins.items():
            proc = subprocess.Popen([b, f"--pass={SPEC.get(p, p)}", "--time-passes", os.path.join(root, inp + ".relay")],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            err = proc.stderr.read()
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                raise SystemExit(f"{b} --pass={p} {inp}: exit {proc.returncode}\n{err}")
            row = [l for l in err.splitlines() if l.startswith(p)][0].split()
            ms, cpu, rms, rcpu = map(float, row[1:5])
            res.setdefault((p, inp, name), []).append((cpu, rcpu, ms, rms, usage.ru_maxrss / 1024))
for (p, inp, name), v in res.items():
    med = lambda k: statistics.median(x[k] for x in v)
    print(f"{p:20s} {inp:9s} {name:8s} pass cpu {med(0):7.0f}  retype cpu {med(1):7.0f}  | wall {med(2):7.0f} + {med(3):7.0f}"
          f"  | peak RSS {med(4):6.0f} MB")
