#!/usr/bin/env python3
"""Differential sweep of the passes (issue 10): every implemented pass and -O1..-O3 over
golden programs with a runnable @main.

For each (program, pass):
  1. `relayc --pass=P --print` must succeed (or reject the program with one of the pass's
     documented refusals, e.g. ToCPS on shared nodes), and its output must survive
     `relayc --check-roundtrip` (print -> parse -> print identical, structurally equal);
  2. `relayc --pass=P --run` must print exactly what `relayc --run` prints (FastMath and
     ToMixedPrecision: every number within a relative 1e-2; SimplifyInference and -O1..-O3,
     which decompose the normalisations into float32 steps: within a relative 1e-5; passes that change what @main
     returns — Gradient, ToCPS — are only checked by step 1).

A program opts out of one pass with a header line `// SWEEP-SKIP: PassName reason` (the same
header tests/run_pass_sweep.py reads), for programs whose point is a value the pass changes.

By default a deterministic sample of the programs is swept (make check stays fast);
--all sweeps every program. Prints `sweep: N passed, N failed`; exit 1 on any failure.
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import resource
import signal
import subprocess
import sys
import tempfile

# every incremental re-typing after a pass is checked against a full one (transform/pass.c):
# a stale type a pass left is an internal error naming the pass
os.environ["RELAYC_VERIFY_RETYPE"] = "1"

# A program is stopped after CPU_LIMIT seconds of its own CPU time (a hang or a blow-up) and,
# as a last resort, after WALL_LIMIT seconds of wall time: on a shared 2-core machine at load 20
# a run that needs 9 s of CPU takes minutes of wall time, which is not a failure of relayc.
CPU_LIMIT = 60
WALL_LIMIT = 900


def _limit_cpu():
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT + 5))


def run_limited(argv):
    """subprocess.run with the CPU and wall limits; a CPU overrun exits -SIGXCPU (or -SIGKILL)."""
    return subprocess.run(argv, capture_output=True, timeout=WALL_LIMIT, preexec_fn=_limit_cpu)


def overran(p):
    return p.returncode in (-signal.SIGXCPU, -signal.SIGKILL)

# pass spec -> what is checked: "value" (same output), "approx", "print" (print only)
SPECIAL = {
    "EtaExpand": "EtaExpand(expand_constructor=True, expand_global_var=True)",
    "UnCPS": "ToCPS,UnCPS",
}
PRINT_ONLY = {"Gradient", "FirstOrderGradient", "ToCPS"}
APPROX = {"FastMath", "ToMixedPrecision"}
# SimplifyInference (and the -O pipelines that run it) replaces layer_norm, l2_normalize, batch_norm,
# ... by float32 elementwise steps that each round, where relayc's fused kernels compute in double
# and round once: values agree to a few ulps, checked at a relative 1e-5
CLOSE = {"SimplifyInference", "-O1", "-O2", "-O3"}
# refusals a pass may legitimately give on some programs (exit 1 with this text)
REFUSALS = ("needs every non-atomic expression to be used once", "Defunctionalization:", "LambdaLift:",
            "first-order", "cannot differentiate", "has no gradient", "must not", "not implemented",
            "expects @main", "Gradient", "gradient")


def list_passes(relayc):
    out = subprocess.run([relayc, "--list-passes"], capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        if line and not line[0].isspace() and "not implemented" not in line:
            names.append(line.split()[0])
    return names


def runnable(root_dirs):
    progs = []
    for root in root_dirs:
        walk = [(os.path.dirname(root), [], [os.path.basename(root)])] if os.path.isfile(root) else os.walk(root)
        for dp, _, fs in walk:
            for f in sorted(fs):
                if not f.endswith(".relay"):
                    continue
                p = os.path.join(dp, f)
                text = open(p, errors="replace").read()
                runs = re.findall(r"//\s?RUN: (relayc .*--run.*)", text)
                if not runs or re.search(r"//\s?EXIT: [^0]", text):
                    continue
                run = runs[0]
                if any(k in run for k in ("%d", "--input", "--ffi", "--plugin", "--pass", "-O", "--grad",
                                          "--params", "--inputs", "--repeat", "--profile")):
                    continue
                skip = frozenset(re.findall(r"//\s?SWEEP-SKIP:\s*(\S+)", text))
                progs.append((p, run, skip))
    return sorted(progs)


def argv_of(run, relayc, path, extra):
    argv = shlex.split(run.replace("%s", path))
    argv[0] = relayc
    return argv[:1] + extra + argv[1:]


# a printed number with its dtype suffix (1.5f, 0f16, inff64, nanf, 3i8): the suffix is not a
# second number, and the dtype may change (ToMixedPrecision turns float32 results into float16)
NUMBER = re.compile(rb"(-?(?:inf|nan|\d+\.?\d*(?:e[-+]?\d+)?))(?:[fiu]\d*)?")


def numbers_close(a, b, rtol=1e-2):
    na, nb = NUMBER.findall(a), NUMBER.findall(b)
    if len(na) != len(nb):
        return False
    for x, y in zip(na, nb):
        x, y = float(x), float(y)
        if abs(x) == float("inf") and abs(y) > 65504 and (x > 0) == (y > 0):
            continue  # beyond float16's range: float16 arithmetic overflows, as it should
        if x != x or y != y:
            if (x != x) != (y != y):
                return False
        elif x != y and abs(x - y) > rtol * max(1.0, abs(y)):
            return False
    return True


def check(relayc, prog, run, name, spec, baseline):
    flags = ["--pass=" + spec] if not spec.startswith("-O") else [spec]
    prelude = ["--prelude"] if "--prelude" in run.split() else []
    p = run_limited([relayc] + prelude + flags + ["--print", prog])
    if overran(p):
        return f"{name}: --print used more than {CPU_LIMIT} s of CPU"
    if p.returncode == 1 and any(r.encode() in p.stderr for r in REFUSALS):
        return None  # a documented refusal
    if p.returncode != 0:
        return f"{name}: --print exit {p.returncode}: {p.stderr.decode(errors='replace')[:600]}"
    with tempfile.NamedTemporaryFile("wb", suffix=".relay", delete=False) as f:
        f.write(p.stdout)
        tmp = f.name
    try:
        rt = run_limited([relayc, "--check-roundtrip", tmp])
        if rt.returncode != 0:
            return f"{name}: printed output does not round-trip: {rt.stderr.decode(errors='replace')[:600]}"
    finally:
        os.unlink(tmp)
    if name in PRINT_ONLY:
        return None
    r = run_limited(argv_of(run, relayc, prog, flags))
    if overran(r):
        return f"{name}: --run used more than {CPU_LIMIT} s of CPU"
    if r.returncode != baseline.returncode:
        return f"{name}: --run exit {r.returncode}, unoptimised {baseline.returncode}: {r.stderr.decode(errors='replace')[:600]}"
    if name in APPROX:
        if not numbers_close(r.stdout, baseline.stdout):
            return f"{name}: value differs beyond 1e-2:\n{r.stdout[:300]!r}\n{baseline.stdout[:300]!r}"
    elif name in CLOSE and r.stdout != baseline.stdout:
        if not numbers_close(r.stdout, baseline.stdout, 1e-5):
            return f"{name}: value differs beyond 1e-5:\n{r.stdout[:300]!r}\n{baseline.stdout[:300]!r}"
    elif r.stdout != baseline.stdout:
        return f"{name}: value differs:\n{r.stdout[:300]!r}\nunoptimised:\n{baseline.stdout[:300]!r}"
    return None


def sweep_program(relayc, prog, run, skip, passes):
    try:
        base = run_limited(argv_of(run, relayc, prog, []))
    except subprocess.TimeoutExpired:
        return prog, 0, []
    if base.returncode != 0:
        return prog, 0, []
    fails, n = [], 0
    for name in passes:
        if name in skip:
            continue
        spec = SPECIAL.get(name, name)
        n += 1
        try:
            msg = check(relayc, prog, run, name, spec, base)
        except subprocess.TimeoutExpired:
            msg = f"{name}: no answer after {WALL_LIMIT} s of wall time"
        if msg:
            fails.append(msg)
    return prog, n, fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("--all", action="store_true", help="every program, not a sample")
    ap.add_argument("--every", type=int, default=6, help="sample: every Nth program (default 6)")
    ap.add_argument("--pass", dest="only", action="append", help="only these passes")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("paths", nargs="*", default=["tests/golden", "samples"], help="folders or .relay files")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    passes = a.only or (list_passes(relayc) + ["-O1", "-O2", "-O3"])
    progs = runnable(a.paths)
    if not a.all:
        progs = progs[:: max(1, a.every)]
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
        for prog, n, fails in ex.map(lambda pr: sweep_program(relayc, pr[0], pr[1], pr[2], passes), progs):
            passed += n - len(fails)
            failed += len(fails)
            for f in fails:
                print(f"FAIL {prog}: {f}")
    print(f"sweep: {passed} passed, {failed} failed ({len(progs)} programs x {len(passes)} passes)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
