#!/usr/bin/env python3
"""Differential tester: every operator family against a numpy reference (spec/ops.md).

    python3 tests/diff/run_diff.py --relayc build/relayc [--thorough] [--family NAME ...]
                                   [--seed N] [-j N] [--keep DIR] [-k SUBSTRING]

Each family module (tests/diff/fam_*.py) exposes `cases(rng, thorough)` yielding diffcore.Case
objects. A case is one single-op Relay program run by `relayc --run --input ... --output ...`
(one process per case); its result is compared with the reference (see diffcore.compare).
The default run uses a fixed seed and moderate counts (< ~60 s on 2 cores); --thorough
multiplies the counts. With --keep DIR, each failing case's program and inputs are written to
DIR/<family>-<n>/ with a `run.sh` reproducer. Prints per-family counts, then
`diff: N passed, N failed`; exit 1 if anything failed.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import zlib

try:
    import numpy as np
except ImportError:  # the pyenv python on PATH may lack numpy; Debian's has it
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("diff: numpy not available, skipped")
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diffcore  # noqa: E402
import fam_elemwise, fam_reduce, fam_shape, fam_index, fam_nn, fam_conv, fam_fast, fam_grad, fam_dyn  # noqa: E402,E401

FAMILIES = {m.FAMILY: m for m in (fam_elemwise, fam_reduce, fam_shape, fam_index, fam_nn, fam_conv, fam_fast,
                                  fam_grad, fam_dyn)}
TIMEOUT = 60


def run_case(relayc, tmp, i, case):
    """Returns (case, message or None)."""
    d = os.path.join(tmp, str(i))
    os.mkdir(d)
    prog = os.path.join(d, "prog.relay")
    with open(prog, "w") as f:
        f.write(case.program())
    argv = [relayc, "--run", prog]
    for name, arr in case.inputs:
        p = os.path.join(d, name + ".npy")
        np.save(p, arr)
        argv += ["--input", f"{name}={p}"]
    try:
        want = case.expected()
    except Exception as e:  # a bug in the reference itself
        return case, f"reference raised {type(e).__name__}: {e}"
    out = os.path.join(d, "out.npz" if isinstance(want, tuple) else "out.npy")
    argv += ["--output", out]
    try:
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return case, f"timed out after {TIMEOUT}s"
    err = p.stderr.decode("utf-8", "replace").strip()
    if isinstance(want, diffcore.Error):
        if p.returncode in want.codes:
            return case, None
        return case, f"expected {want}, got exit {p.returncode}"
    if p.returncode != 0:
        return case, f"exit {p.returncode}: {err[:600]}"
    try:
        if isinstance(want, tuple):
            z = np.load(out)
            got = tuple(z[f"arr_{k}"] for k in range(len(z.files)))
        else:
            got = np.load(out)
    except Exception as e:
        return case, f"cannot read the output: {e}"
    return case, diffcore.compare(got, want, case.rtol, case.atol)


def keep(case, keep_dir, n):
    d = os.path.join(keep_dir, f"{case.family}-{n}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "prog.relay"), "w") as f:
        f.write(case.program())
    args = ""
    for name, arr in case.inputs:
        np.save(os.path.join(d, name + ".npy"), arr)
        args += f" --input {name}={name}.npy"
    with open(os.path.join(d, "run.sh"), "w") as f:
        f.write(f"#!/bin/sh\n# {case.name}\ncd \"$(dirname \"$0\")\" && relayc --run prog.relay{args}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("--thorough", action="store_true")
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES))
    ap.add_argument("-k", dest="substr", help="only cases whose name contains this")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", help="write failing cases here")
    ap.add_argument("-v", action="store_true", help="list every case")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    cases = []
    for fam in a.family or sorted(FAMILIES):
        rng = np.random.default_rng([a.seed, zlib.crc32(fam.encode())])
        with np.errstate(all="ignore"):
            cases += [c for c in FAMILIES[fam].cases(rng, a.thorough)
                      if not a.substr or a.substr in c.name]
    stats = {}
    failed = []
    with tempfile.TemporaryDirectory(prefix="relayc-diff-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
            for case, msg in ex.map(lambda ic: run_case(relayc, tmp, *ic), enumerate(cases)):
                s = stats.setdefault(case.family, [0, 0])
                s[0 if msg is None else 1] += 1
                if msg is not None:
                    failed.append((case, msg))
                if a.v:
                    print(f"{'ok  ' if msg is None else 'FAIL'} {case.family}: {case.name}")
    for n, (case, msg) in enumerate(failed):
        print(f"FAIL {case.family}: {case.name}\n  {case.expr}\n  {msg}")
        if a.keep:
            keep(case, a.keep, n)
    for fam, (p, f) in sorted(stats.items()):
        print(f"  {fam:10s} {p + f:5d} cases, {f} failed")
    print(f"diff: {len(cases) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
