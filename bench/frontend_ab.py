#!/usr/bin/env python3
"""bench/frontend_ab.py — two relayc binaries on the front end, runs interleaved.

    python3 bench/frontend_ab.py before=OLD/relayc,after=build/relayc [--runs 9] [--inputs chain,letchain,big]

Each round runs, for each input and each binary in turn, `relayc --stop-after=parse IN` and
`relayc IN` (parse, resolve, type check) on the inputs bench/passes/run.py caches in
$TMPDIR/relayc-bench, and prints the medians of the process's CPU time (user+sys, ms): parse,
parse+check, and their difference.
"""
import argparse
import os
import statistics
import subprocess
import tempfile

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("bins", help="name=path,name=path")
ap.add_argument("--runs", type=int, default=9)
ap.add_argument("--inputs", default="chain,letchain,big")
a = ap.parse_args()
bins = dict(b.split("=", 1) for b in a.bins.split(","))
root = os.path.join(os.environ.get("TMPDIR", tempfile.gettempdir()), "relayc-bench")


def cpu_ms(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}")
    return (usage.ru_utime + usage.ru_stime) * 1000


res = {}
for _ in range(a.runs):
    for inp in a.inputs.split(","):
        path = os.path.join(root, inp + ".relay")
        for name, b in bins.items():
            res.setdefault((inp, name, "parse"), []).append(cpu_ms([b, "--stop-after=parse", path]))
            res.setdefault((inp, name, "check"), []).append(cpu_ms([b, path]))
for inp in a.inputs.split(","):
    for name in bins:
        p = statistics.median(res[(inp, name, "parse")])
        c = statistics.median(res[(inp, name, "check")])
        print(f"{inp:9s} {name:8s} parse {p:6.0f}  parse+check {c:6.0f}  check {c - p:6.0f}  ({c / p:.2f}x parse)")
