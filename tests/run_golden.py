#!/usr/bin/env python3
"""Golden test runner for relayc.

Each test is a `.relay` file whose header comments state the expected outcome:

    // RUN: relayc --print %s        command line (default: `relayc %s`); several RUN lines allowed
    // EXIT: 1                       expected exit status (default 0)
    // ERR: prog.relay:3:5: error: unbound local variable %y
    // ERR:     3 |   add(%x, %y)   stderr must contain these lines, in this order
    // OUT: 42                       stdout must be exactly these lines (when any OUT line is given)
    // NO-ROUNDTRIP                  skip the print/re-parse/re-print check
    // AFTER: name.expected.relay    (pass tests) the stdout of every RUN line with --print must be
                                     a module structurally equal (`relayc --equal`) to this file
                                     (path relative to the test's directory); OUT does not apply
                                     to those lines
    // ENV: RELAYC_MAX_DEPTH=50      an environment variable for every RUN line (repeatable; the
                                     round-trip check and the other sweeps run without it)

`%s` is the test file, `%d` its directory. If `NAME.out` exists beside the test, stdout must equal
its contents exactly (a RUN line whose mode is `--check-roundtrip` must print nothing instead, so
a printer test can pin the `--print` text and check the re-parse explicitly). With EXIT 0 and no ERR lines, stderr must be empty (relayc is silent on
success). Every test that exits 0 is also run with `--check-roundtrip` unless NO-ROUNDTRIP is given
or the command used --expr/--emit=tokens. The stdout of a `--run` line may differ from the expected
text only in floating-point literals, each within a relative 1e-5 (absolute 1e-9) of the expected
one and of the same sign (0f is not -0f): the float32 kernels sum in an order that depends on the CPU (relayc's own AVX-512 GEMM on one
machine, OpenBLAS's Haswell kernels on another), so the last bits of a value are not portable;
everything else (structure, integers, booleans, the count of values) must match exactly. Files
under samples/ are checked the same way
(default: type-check, exit 0). Prints `N passed, N failed` at the end; exit 1 if anything failed.
"""
import argparse
import concurrent.futures
import math
import os
import re
import shlex
import subprocess
import sys

TIMEOUT = 120


def parse_header(path):
    runs, errs, outs, after, env = [], [], [], None, {}
    exit_code, roundtrip = 0, True
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    for line in text.splitlines():
        m = re.match(r"\s*//\s?(RUN|EXIT|ERR|OUT|NO-ROUNDTRIP|AFTER|ENV)(:?)(.*)$", line)
        if not m:
            continue
        key, rest = m.group(1), m.group(3)
        if rest.startswith(" "):
            rest = rest[1:]
        if key == "RUN":
            runs.append(rest.strip())
        elif key == "EXIT":
            exit_code = int(rest.strip())
        elif key == "ERR":
            errs.append(rest)
        elif key == "OUT":
            outs.append(rest)
        elif key == "NO-ROUNDTRIP":
            roundtrip = False
        elif key == "AFTER":
            after = rest.strip()
        elif key == "ENV":
            name, _, value = rest.strip().partition("=")
            env[name] = value
    if not runs:
        runs = ["relayc %s"]
    return runs, exit_code, errs, outs, roundtrip, after, env


VALGRIND_SUPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "valgrind.supp")

def command(run, relayc, path, valgrind):
    argv = shlex.split(run.replace("%s", shlex.quote(path)).replace("%d", shlex.quote(os.path.dirname(path) or ".")))
    if argv and argv[0] == "relayc":
        argv[0] = relayc
        if valgrind:
            # possibly-lost blocks count too: relayc's long-lived stores are held by a pointer to
            # their start (ops/registry.c); tests/valgrind.supp lists what is not relayc's
            argv = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
                    "--errors-for-leak-kinds=definite,possible", f"--suppressions={VALGRIND_SUPP}"] + argv
    return argv


def run_test(path, relayc, valgrind):
    """Returns a list of failure messages (empty on success)."""
    runs, exit_code, errs, outs, roundtrip, after, test_env = parse_header(path)
    failures = []
    expected_out = None
    out_file = os.path.splitext(path)[0] + ".out"
    if os.path.exists(out_file):
        with open(out_file, "rb") as f:
            expected_out = f.read()
    elif outs:
        expected_out = ("\n".join(outs) + "\n").encode()
    for run in runs:
        argv = command(run, relayc, path, valgrind)
        try:
            # under valgrind, tensors come from malloc (not runtime/bufpool.c's reused
            # mappings) so memcheck sees every buffer's bounds and definedness
            env = dict(os.environ, NO_COLOR="1", **({"RELAYC_MALLOC_DEFAULT": "1"} if valgrind else {}), **test_env)
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT,
                               env=env)
        except subprocess.TimeoutExpired:
            failures.append(f"{run}: timed out after {TIMEOUT}s")
            continue
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != exit_code:
            failures.append(f"{run}: exit {p.returncode}, expected {exit_code}\n{err[:2000]}")
            continue
        if exit_code == 0 and not errs and err.strip():
            failures.append(f"{run}: unexpected stderr:\n{err[:2000]}")
        pos = 0
        for e in errs:
            i = err.find(e, pos)
            if i < 0:
                failures.append(f"{run}: stderr lacks (in order): {e!r}\n--- stderr ---\n{err[:2000]}")
                break
            pos = i + len(e)
        if after and "--print" in run.split() and exit_code == 0:
            failures += compare_after(p.stdout, run, path, after, relayc, valgrind)
        elif roundtrip_run(run) and p.stdout:
            failures.append(f"{run}: --check-roundtrip printed\n{p.stdout.decode(errors='replace')[:2000]}")
        elif (expected_out is not None and not roundtrip_run(run) and p.stdout != expected_out
              and not (run_mode(run) and floats_close(expected_out, p.stdout))):
            failures.append(f"{run}: stdout differs\n--- expected ---\n{expected_out.decode(errors='replace')[:2000]}"
                            f"\n--- got ---\n{p.stdout.decode(errors='replace')[:2000]}")
        if exit_code == 0 and roundtrip and "--expr" not in run and "--emit" not in run:
            prelude = " --prelude" if "--prelude" in run.split() else ""
            rt = subprocess.run(command(f"relayc --check-roundtrip{prelude} %s", relayc, path, valgrind),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
            if rt.returncode != 0:
                failures.append(f"round trip failed (exit {rt.returncode}):\n{rt.stderr.decode(errors='replace')[:2000]}")
            roundtrip = False
    return failures


# A number as `--run` prints it: float32 `1.5f`, `1e+10f`, `7f`; float64/float16 with a suffix;
# integers bare or with a suffix. Not inside an identifier (`%x1`, `Cons`).
NUMBER = re.compile(rb"(?<![\w.%@])-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?(?:[fiu](?:8|16|32|64)?)?(?![\w.])")
FLOAT_RTOL, FLOAT_ATOL = 1e-5, 1e-9


def is_float_literal(tok):
    return b"." in tok or b"e" in tok.lower() or tok.rstrip(b"0123456789").endswith(b"f")


def float_value(tok):
    return float(re.sub(rb"f(?:16|32|64)?$", b"", tok))


def floats_close(expected, got):
    """True when got is expected up to the last bits of its floating-point literals."""
    exp_parts, got_parts = NUMBER.split(expected), NUMBER.split(got)
    exp_nums, got_nums = NUMBER.findall(expected), NUMBER.findall(got)
    if exp_parts != got_parts or len(exp_nums) != len(got_nums):
        return False
    for e, g in zip(exp_nums, got_nums):
        if e == g:
            continue
        if not (is_float_literal(e) and is_float_literal(g)):
            return False
        a, b = float_value(e), float_value(g)
        if math.copysign(1.0, a) != math.copysign(1.0, b):  # 0f against -0f too
            return False
        if abs(a - b) > FLOAT_RTOL * max(abs(a), abs(b)) + FLOAT_ATOL:
            return False
    return True


def run_mode(run):
    modes = [a for a in shlex.split(run) if a in ("--run", "-r", "--print", "-p", "--check-roundtrip", "--stats", "--equal")]
    return bool(modes) and modes[-1] in ("--run", "-r")


def roundtrip_run(run):
    """True when the RUN line's mode (the last mode flag) is --check-roundtrip."""
    modes = [a for a in shlex.split(run) if a in ("--check-roundtrip", "--print", "-p", "--run", "-r", "--stats", "--equal", "--emit")
             or a.startswith("--emit=")]
    return bool(modes) and modes[-1] == "--check-roundtrip"


def compare_after(printed, run, path, after, relayc, valgrind):
    """The printed module must re-parse and equal the expected module (AFTER:)."""
    import tempfile
    expected = os.path.join(os.path.dirname(path), after)
    with tempfile.NamedTemporaryFile("wb", suffix=".relay", delete=False) as f:
        f.write(printed)
        tmp = f.name
    try:
        argv = command(f"relayc --equal {shlex.quote(tmp)} {shlex.quote(expected)}", relayc, path, valgrind)
        q = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        if q.returncode != 0:
            return [f"{run}: output is not equal to {after} (exit {q.returncode}):\n"
                    f"{q.stderr.decode(errors='replace')[:2000]}\n--- got ---\n{printed.decode(errors='replace')[:2000]}"]
        return []
    finally:
        os.unlink(tmp)


def collect(paths):
    tests = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                tests += [os.path.join(root, f) for f in files if f.endswith(".relay")]
        elif p.endswith(".relay"):
            tests.append(p)
    return sorted(tests)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("--valgrind", action="store_true")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    tests = collect(a.paths)
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
        results = list(ex.map(lambda t: (t, run_test(t, relayc, a.valgrind)), tests))
    for t, fails in results:
        if fails:
            failed += 1
            print(f"FAIL {t}")
            for f in fails:
                print("  " + f.replace("\n", "\n  "))
        else:
            passed += 1
    print(f"golden: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
