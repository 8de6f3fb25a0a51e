#!/usr/bin/env python3
"""Differential pass sweep: every pass must keep what a program computes.

For every golden program (and sample) with a `// RUN:` line that runs it (`--run`, exit 0,
no passes of its own), and for every pass named with --passes:

    relayc --pass=P <the RUN line's arguments>     must exit like the RUN line and print the
                                                   same stdout as the RUN line without --pass
    relayc --pass=P --check-roundtrip FILE         the pass's output prints, re-parses and is
                                                   structurally equal to itself (typed)

    run_pass_sweep.py [--relayc build/relayc] [--passes 'P1;P2;...'] [--with-flag W] [-j N] [paths...]

Pass names are anything `--pass=` accepts (options included, e.g. 'DeadCodeElimination(
inline_once=True)'); the default list is the passes `make check` sweeps. --with-flag W keeps
only the RUN lines holding the word W (`make check` sweeps the functional passes over every
program run with --prelude this way). A program may opt
out of one pass with a header line `// SWEEP-SKIP: PassName reason`.
Prints `N passed, N failed`; exit 1 if anything failed.
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys

# every incremental re-typing after a pass is checked against a full one (transform/pass.c):
# a stale type a pass left is an internal error naming the pass
os.environ["RELAYC_VERIFY_RETYPE"] = "1"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_golden  # noqa: E402  (header parsing and command building)

DEFAULT_PASSES = [
    "ToANormalForm",
    "ToBasicBlockNormalForm",
    "ToGraphNormalForm",
    "ToANormalForm,ToGraphNormalForm,ToANormalForm",
    "DeadCodeElimination",
    "DeadCodeElimination(inline_once=True)",
    "EliminateCommonSubexpr",
    "RemoveUnusedFunctions",
    # FoldScaleAxis' folding members (the sequence itself runs only FoldConstant at level 2);
    # where they fire (passes/fold_scale_axis/run_*.relay) the scales are powers of two: exact
    "BackwardFoldScaleAxis,ForwardFoldScaleAxis",
    # its residual program must compute what the original computes (graph-shared effects
    # under closures and branches: run/shared_closure_effect.relay)
    "PartialEvaluate",
    # relayc's run-pipeline rewrite of static references into dataflow (transform/static_refs.c):
    # on its own, with the types it builds checked (RELAYC_VERIFY_RETYPE)
    "ResolveStaticRefs",
]
TIMEOUT = 120
OWN_PIPELINE = ("--pass", "-O0", "-O1", "-O2", "-O3", "--grad", "--check-grad", "--expr", "--emit")


def skips(path):
    out = set()
    with open(path, "rb") as f:
        for line in f.read().decode("utf-8", "replace").splitlines():
            m = re.match(r"\s*//\s?SWEEP-SKIP:\s*(\S+)", line)
            if m:
                out.add(m.group(1))
    return out


def spec_names(spec):
    """The pass names of a spec: 'A(x=1),B' -> {'A', 'B'}."""
    names, depth, cur = set(), 0, ""
    for ch in spec + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            names.add(cur.split("(")[0].strip())
            cur = ""
        else:
            cur += ch
    return names


def runnable_lines(path, with_flag=None):
    """The RUN lines that run the program successfully without passes of their own
    (only those holding the word `with_flag`, when given; none when the test sets an ENV)."""
    runs, exit_code, _, _, _, _, env = run_golden.parse_header(path)
    if exit_code != 0 or env:
        return []
    good = []
    for run in runs:
        words = run.split()
        if "--run" not in words or any(w.startswith(OWN_PIPELINE) for w in words):
            continue
        if with_flag and with_flag not in words:
            continue
        good.append(run)
    return good


def execute(argv):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT,
                           env=dict(os.environ, NO_COLOR="1"))
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, b"", f"timed out after {TIMEOUT}s"


RUN_ONLY_WITH_ARG = ("--input", "--output", "--inputs", "--params")
RUN_ONLY = ("--run", "--profile", "--json")


def roundtrip_argv(argv):
    """A RUN line's command with its run-only options replaced by --check-roundtrip
    (options such as --prelude, --ffi, --plugin are kept)."""
    out, skip = [argv[0], "--check-roundtrip"], False
    for w in argv[1:]:
        if skip:
            skip = False
        elif w in RUN_ONLY_WITH_ARG:
            skip = True
        elif w in RUN_ONLY or w.startswith(tuple(o + "=" for o in RUN_ONLY_WITH_ARG)) or w.startswith("--repeat"):
            pass
        else:
            out.append(w)
    return out


def with_pass(argv, spec):
    return [argv[0], f"--pass={spec}"] + argv[1:]


def sweep_file(path, relayc, passes, with_flag=None):
    """Returns (checks, failure messages)."""
    lines = runnable_lines(path, with_flag)
    if not lines:
        return 0, []
    skip = skips(path)
    failures, checks = [], 0
    for run in lines:
        base = run_golden.command(run, relayc, path, False)
        rc0, out0, err0 = execute(base)
        if rc0 != 0:
            continue  # the golden suite reports this one
        for spec in passes:
            if spec_names(spec) & skip:
                continue
            checks += 1
            rc, out, err = execute(with_pass(base, spec))
            if rc != rc0 or out != out0:
                failures.append(f"--pass={spec}: {run}\n  exit {rc} (expected {rc0})\n"
                                f"  --- expected ---\n  {out0.decode(errors='replace')[:600]}"
                                f"\n  --- got ---\n  {out.decode(errors='replace')[:600]}\n  {err[:1200]}")
    check = roundtrip_argv(run_golden.command(lines[0], relayc, path, False))
    for spec in passes:
        if spec_names(spec) & skip:
            continue
        checks += 1
        rc, _, err = execute(with_pass(check, spec))
        if rc != 0:
            failures.append(f"--pass={spec} --check-roundtrip: exit {rc}\n  {err[:1200]}")
    return checks, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("--passes", help="comma-free list separated by ';' (a spec may hold commas)")
    ap.add_argument("--with-flag", help="only RUN lines holding this word (e.g. --prelude)")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("paths", nargs="*", default=["tests/golden", "samples"])
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    passes = [p.strip() for p in a.passes.split(";")] if a.passes else DEFAULT_PASSES
    files = run_golden.collect(a.paths)
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
        results = list(ex.map(lambda f: (f, sweep_file(f, relayc, passes, a.with_flag)), files))
    for f, (checks, fails) in results:
        failed += len(fails)
        passed += checks - len(fails)
        for msg in fails:
            print(f"FAIL {f}\n  " + msg.replace("\n", "\n  "))
    print(f"pass sweep: {passed} passed, {failed} failed ({len(passes)} pass specs)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
