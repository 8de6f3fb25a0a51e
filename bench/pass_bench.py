#!/usr/bin/env python3
"""bench/pass_bench.py — how long passes take next to parsing (issue 10, "Speed").

    python3 bench/pass_bench.py [--relayc build/relayc] [--runs 5] [--passes 'A;B(x=1)'] FILE...

For each FILE, medians over --runs runs of:
  parse      `relayc --stop-after=parse FILE`: wall and CPU time of the whole process
  check      `relayc FILE`: parse + resolve + type check (CPU)
  per pass   `relayc --pass=P --time-passes FILE`: the pass's own wall and CPU time and the
             re-typing after it (as --time-passes reports them)
The ratio is the pass's CPU time over the CPU time of parsing (both steady on a loaded machine). Generate inputs with bench/gen_module.py (`--mb 20`, `--single-chain
100000`) or bench/nets/gen.py (ResNet-50, GPT-2).
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import time

DEFAULT_PASSES = ["ToANormalForm", "ToBasicBlockNormalForm", "ToGraphNormalForm",
                  "DeadCodeElimination", "EliminateCommonSubexpr", "RemoveUnusedFunctions"]


def timed(argv):
    """(wall s, child CPU s, stderr)"""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        return None, None, p.stderr.decode()
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, p.stderr.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--passes")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    passes = [p.strip() for p in a.passes.split(";")] if a.passes else DEFAULT_PASSES
    med = statistics.median
    for f in a.files:
        size = os.path.getsize(f) / 1e6
        parse = [timed([a.relayc, "--stop-after=parse", f]) for _ in range(a.runs)]
        check = [timed([a.relayc, f]) for _ in range(a.runs)]
        pw, pc = med(x[0] for x in parse) * 1e3, med(x[1] for x in parse) * 1e3
        cc = med(x[1] for x in check) * 1e3
        print(f"{f} ({size:.1f} MB): parse {pw:.0f} ms wall, {pc:.0f} ms CPU; parse+check {cc:.0f} ms CPU")
        print(f"  {'pass':<26} {'pass ms':>8} {'CPU ms':>8} {'retype ms':>10} {'CPU/parse CPU':>10}")
        for p in passes:
            runs = [timed([a.relayc, f"--pass={p}", "--time-passes", f]) for _ in range(a.runs)]
            if runs[0][0] is None:
                print(f"  {p:<26} (fails: {runs[0][2].strip().splitlines()[-1][:80]})")
                continue
            own, owncpu, retype = [], [], []
            for _, _, err in runs:
                m = re.search(r"^\S+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+\d+\s+\d+\s*$", err, re.M)
                own.append(float(m.group(1)))
                owncpu.append(float(m.group(2)))
                retype.append(float(m.group(3)))
            print(f"  {p:<26} {med(own):8.1f} {med(owncpu):8.1f} {med(retype):10.1f} {med(owncpu) / pc:10.2f}")


if __name__ == "__main__":
    main()
