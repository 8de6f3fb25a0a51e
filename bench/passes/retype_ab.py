#!/usr/bin/env python3
"""bench/passes/retype_ab.py — the runner's re-typing after each pass, incremental against full
(RELAYC_FULL_RETYPE=1), on the same binary with the runs interleaved (so the machine's load hits
both alike).

    python3 bench/passes/retype_ab.py [--relayc build/relayc] [--runs 5] [--inputs chain,letchain]
                                      [--passes ToANormalForm,FuseOps,-O3]

Prints, per input and pass spec, the medians of the re-typing CPU ms (summed over the pipeline's
passes, from --time-passes) in both modes and the pass's own CPU ms. Inputs as in run.py
(bench/gen_module.py, cached in $TMPDIR/relayc-bench).
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (ROW, ensure_input, the -O3 spelling)

DEFAULT_PASSES = ("ToANormalForm,ToGraphNormalForm,DeadCodeElimination,EliminateCommonSubexpr,FoldConstant,"
                  "SimplifyExpr,FuseOps,ToMixedPrecision,LambdaLift,-O3")


def once(relayc, spec, path, full):
    flags = [spec] if spec.startswith("-O") else ["--pass=" + spec]
    env = dict(os.environ, RELAYC_FULL_RETYPE="1" if full else "0")
    env.pop("RELAYC_VERIFY_RETYPE", None)
    p = subprocess.run([relayc] + flags + ["--time-passes", path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, env=env, timeout=600)
    rows = run.ROW.findall(p.stderr.decode(errors="replace"))
    if p.returncode != 0 or not rows:
        return None
    return sum(float(r[2]) for r in rows), sum(float(r[4]) for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default=os.path.join(run.ROOT, "build", "relayc"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--inputs", default="chain,letchain")
    ap.add_argument("--passes", default=DEFAULT_PASSES)
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {a.runs}, CPU ms")
    for key in a.inputs.split(","):
        path = run.ensure_input(key)
        print(f"\n## {key} ({os.path.basename(path)})")
        print(f"{'pass':<28} {'pass CPU':>9} {'full retype':>12} {'incremental':>12} {'ratio':>6}")
        for spec in a.passes.split(","):
            cols = {True: [], False: []}
            pcpu = []
            for _ in range(a.runs):
                for full in (True, False):
                    r = once(a.relayc, spec, path, full)
                    if r:
                        cols[full].append(r[1])
                        pcpu.append(r[0])
            if not cols[True] or not cols[False]:
                print(f"{spec:<28} failed")
                continue
            f, i = statistics.median(cols[True]), statistics.median(cols[False])
            print(f"{spec:<28} {statistics.median(pcpu):9.1f} {f:12.1f} {i:12.1f} {i / f if f else 0:6.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
