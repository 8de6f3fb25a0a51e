#!/usr/bin/env python3
"""Bad-input tests for the front end: relayc must answer every input with exit 0 or 1
(a diagnostic), never a crash (signal), a hang, or another status.

  - an empty file, binary garbage, random bytes;
  - a sample program cut at every byte (prefixes), and a fixed sample of the other golden programs
    cut every --stride bytes;
  - 10,000 nested parentheses, lets, blocks, tuples, ifs and calls; a 100,000-binding chain;
    the same inputs through every implemented pass (`--pass=P`), --emit=dot, --stats and
    --diagnostics-format=json; 10,000 nested called literals run after the passes that make
    them nested closures, and with a shared ref cell, under a CPU limit (linear time: the
    lowering's captures, ToGraphNormalForm's recursion test, DefuseOps' shared-node walk and its
    copy of each once-called literal were quadratic there);
  - every operator called with odd attribute values (tests/odd_attrs.py: empty layouts, negative
    axes, int64 extremes, None, non-finite floats ...) on inputs of several ranks: the calls the
    front end accepts are type-checked, and the type relations must report, never crash.

Prints `N passed, N failed`.
"""
import argparse
import bisect
import concurrent.futures
import os
import random
import re
import resource
import subprocess
import shutil
import sys
import tempfile

import odd_attrs

TIMEOUT = 60
# CPU seconds for an input that takes linear time: ~0.1-0.3 s in the plain build, ~10x that
# under ASan (build/asan/relayc); the quadratic steps they guard against took 3.5-26 s plain
def cpu_linear(relayc):
    return 30 if "asan" in relayc else 2


class Runner:
    def __init__(self, relayc):
        self.relayc = relayc
        self.passed = 0
        self.failed = 0
        self.tmp = tempfile.mkdtemp(prefix="relayc-robust-")

    def run(self, data, args, cpu=None):
        """(exit status or None on a time-out, stderr); `cpu`: a CPU-time limit in seconds
        (exceeding it kills relayc with SIGXCPU, a failure)"""
        fd, path = tempfile.mkstemp(suffix=".relay", dir=self.tmp)
        os.close(fd)
        with open(path, "wb") as f:
            f.write(data)
        try:
            limit = (lambda: resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))) if cpu else None
            p = subprocess.run([self.relayc, *args, path], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=TIMEOUT, preexec_fn=limit)
            return p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            return None, b""
        finally:
            os.unlink(path)

    def probe(self, data, args=(), allowed=(0, 1)):
        """True when relayc answers `data` acceptably (no failure recorded)."""
        rc, err = self.run(data, args)
        return rc in allowed and (rc != 1 or b"error" in err)

    def check(self, label, data, allowed=(0, 1), args=(), cpu=None):
        """Records a pass or a failure; returns True on a pass."""
        rc, err = self.run(data, args, cpu)
        if rc is None:
            self.fail(label, "timed out", data)
        elif rc not in allowed:
            text = err.decode(errors="replace")
            san = re.search(r"^.*(?:runtime error|ERROR: \w+Sanitizer).*$", text, re.M)
            self.fail(label, f"exit {rc}: {san.group(0) + ' ... ' if san else ''}{text[-600:]}", data)
        elif rc == 1 and b"error" not in err:
            self.fail(label, "exit 1 without a diagnostic", data)
        else:
            self.passed += 1
            return True
        return False

    def check_says(self, label, data, status, needle, args=(), cpu=None):
        """check with exactly exit `status` and `needle` in the diagnostics."""
        rc, err = self.run(data, args, cpu)
        if rc != status or needle not in err:
            text = err.decode(errors="replace")
            self.fail(label, f"exit {rc}, wanted {status} and {needle.decode()!r}: {text[-600:]}", data)
            return False
        self.passed += 1
        return True

    def fail(self, label, why, data):
        self.failed += 1
        keep = os.path.join(self.tmp, f"fail-{self.failed}.relay")
        with open(keep, "wb") as f:
            f.write(data)
        print(f"FAIL {label}: {why} (input kept in {keep})")


def wide_match(n, clauses=None, repeat=None):
    """`match` over a type of n constructors C0..C(n-1): a clause for each of the first
    `clauses` (all by default), then a second clause for C`repeat` if given."""
    rows = [b"    C%d => %d,\n" % (i, i) for i in range(n if clauses is None else clauses)]
    if repeat is not None:
        rows.append(b"    C%d => 0,\n" % repeat)
    return (b'#[version = "0.0.5"]\ntype T {\n' + b",\n".join(b"  C%d" % i for i in range(n)) +
            b'\n}\ndef @main(%x: T) -> int32 {\n  match (%x) {\n' + b"".join(rows) + b"  }\n}\n")


def nested(n):
    head = b'#[version = "0.0.5"]\ndef @main() -> int32 {\n'
    yield "parens", head + b"(" * n + b"1" + b")" * n + b"\n}\n"
    yield "lets", head + b"".join(b"let %%x%d = %d;\n" % (i, i) for i in range(n)) + b"%x0\n}\n"
    # lets nested in let values (ToGraphNormalForm was quadratic on them: minutes at 10,000)
    yield "let values", head + b"".join(b"let %%v%d = (\n" % i for i in range(n)) + b"1" + \
        b"".join(b");\n%%v%d\n" % i for i in reversed(range(n))) + b"}\n"
    yield "blocks", head + b"{" * n + b"1" + b"}" * n + b"\n}\n"
    yield "tuples", head + b"(" * n + b"1," + b")." * 0 + b")" * n + b".0\n}\n"
    yield "ifs", head + b"if (True) { " * n + b"1" + b" } else { 0 }" * n + b"\n}\n"
    yield "calls", head + b"add(" * n + b"1" + b", 1)" * n + b"\n}\n"
    yield "fns", head + b"fn () { " * n + b"1" + b" }" * n + b"\n}\n"
    yield "called fns", head + b"fn () { " * n + b"1" + b" }()" * n + b"\n}\n"
    yield "unclosed parens", head + b"(" * n + b"\n}\n"
    chain = [b'#[version = "0.0.5"]\ndef @main(%x: float32) -> float32 {\n  %0 = add(%x, %x);\n']
    chain += [b"  %%%d = add(%%%d, %%x);\n" % (i, i - 1) for i in range(1, 100000)]
    chain.append(b"  %99999\n}\n")
    yield "100k graph chain", b"".join(chain)


def shared_deep(n):
    """A node used at every level of n nested ifs / function literals and after them."""
    head = b'#[version = "0.0.5"]\ndef @main(%c: bool, %x: float32) {\n  %0 = exp(%x);\n  %1 = '
    yield "ifs", head + b"if (%c) { add(%0, " * n + b"%0" + b") } else { %x }" * n + b";\n  add(%1, %0)\n}\n"
    yield "fns", head + b"fn () { (%0, " * n + b"%0" + b") }" * n + b";\n  (%1, %0)\n}\n"


def implemented_passes(relayc):
    """Pass names from `relayc --list-passes` (unindented lines), without the unimplemented ones."""
    out = subprocess.run([relayc, "--list-passes"], stdout=subprocess.PIPE, check=True).stdout.decode()
    return [line.split()[0] for line in out.splitlines()
            if line and not line[0].isspace() and "not implemented" not in line]


ERROR_LINE = re.compile(rb"^[^:\n]*:(\d+):\d+: error:", re.M)


def odd_attribute_sweep(r, op):
    """One operator's odd-attribute calls: first drops the calls the parser or the resolver
    rejects (--stop-after=resolve), then type-checks the rest in one process."""
    cs = odd_attrs.cases(op)
    for _ in range(6):
        text, starts = odd_attrs.module_for(op, cs)
        fd, path = tempfile.mkstemp(suffix=".relay", dir=r.tmp)
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode())
        try:
            p = subprocess.run([r.relayc, "--stop-after=resolve", "--max-errors=0", path],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT)
        finally:
            os.unlink(path)
        if p.returncode not in (0, 1):
            break  # reported by r.check below
        bad = set()
        for m in ERROR_LINE.finditer(p.stderr):
            bad.add(max(0, bisect.bisect_right(starts, int(m.group(1))) - 1))
        if not bad:
            break
        cs = [c for i, c in enumerate(cs) if i not in bad]
    text, _ = odd_attrs.module_for(op, cs)
    if r.check(f"odd attributes of {op[0]} ({len(cs)} calls type-checked)", text.encode(), args=("--max-errors=0",)):
        return
    while len(cs) > 1:  # narrow the failure down to one call, for the report
        half = cs[:len(cs) // 2]
        cs = half if not r.probe(odd_attrs.module_for(op, half)[0].encode(), ("--max-errors=0",)) else cs[len(cs) // 2:]
    r.check(f"odd attributes of {op[0]}: the failing call", odd_attrs.module_for(op, cs)[0].encode(),
            args=("--max-errors=0",))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("--every-byte", nargs="*", default=["samples/list.relay"],
                    help="files cut at every byte; other files are cut every --stride bytes")
    ap.add_argument("--stride", type=int, default=23)
    ap.add_argument("--sample", type=int, default=40,
                    help="how many of the other files to cut (a fixed pseudo-random choice)")
    ap.add_argument("paths", nargs="*", default=["tests/golden", "samples"])
    a = ap.parse_args()
    r = Runner(os.path.abspath(a.relayc))
    r.check("empty file", b"")
    r.check("only a comment", b"// nothing\n")
    rnd = random.Random(1234)
    for i in range(20):
        r.check(f"random bytes #{i}", bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400))))
    r.check("NUL bytes", b'#[version = "0.0.5"]\ndef @main() { \0\0 }\n')
    r.check("lone CR", b'#[version = "0.0.5"]\rdef @main() { 1 }\n')
    deep = list(nested(10000))
    for label, data in deep:
        r.check(f"deep nesting: {label}", data)
        for mode in ("--emit=dot", "--stats", "--diagnostics-format=json"):  # the analyses walk it too
            r.check(f"deep nesting: {label} {mode}", data, args=(mode,))
    # a match over a type of N constructors, one clause each: the exhaustiveness check
    # allocated a matrix the size of the match at each of its N specialisations (10,000: 1.2 GB,
    # 2 s), then scanned every row at each (quadratic: 0.7 s at 10,000, 33 s at 50,000); also with
    # the last clause left out (the error names it) and with a clause repeated (a warning)
    for n in (10000, 50000):
        cpu = cpu_linear(r.relayc)
        r.check(f"a match of {n:,} constructors", wide_match(n), allowed=(0,), cpu=cpu)
        r.check_says(f"a match of {n:,} constructors, the last one missing", wide_match(n, clauses=n - 1), 1,
                     b"pattern C%d is not covered" % (n - 1), cpu=cpu)
        r.check_says(f"a match of {n:,} constructors, one repeated", wide_match(n, repeat=5), 0,
                     b"unreachable match clause", cpu=cpu)
    called = dict(deep)["called fns"]  # nested closures, each capturing nothing: linear time
    for spec in ("ToANormalForm", "ToANormalForm,ToGraphNormalForm", "LambdaLift", "PartialEvaluate"):
        r.check(f"deep nesting: called fns through {spec}, run", called, allowed=(0,),
                args=(f"--pass={spec}", "--run"), cpu=cpu_linear(r.relayc))
    # the same with a ref cell of @main read at the innermost level: relayc --run's DefuseOps
    # inlines each call keeping the cell shared (it walked every body below each literal)
    cell = (b'#[version = "0.0.5"]\ndef @main() {\n  %0 = ref(1f);\n  %1 = ' + b"fn () { " * 10000 +
            b"ref_read(%0)" + b" }()" * 10000 + b";\n  (%1, ref_read(%0))\n}\n")
    r.check("deep nesting: called fns reading a shared ref cell, run", cell, allowed=(0,), args=("--run",),
            cpu=cpu_linear(r.relayc))
    # the same in a global other than @main, in basic-block normal form (each level's body a let
    # chain): DefuseOps copied each level's inlined inner levels again (pass fuzzer session 9
    # seed 9 input 8159: 63 s); a literal called once is now inlined in place
    cell_global = (b'#[version = "0.0.5"]\ndef @main() {\n  @cell(1f)\n}\ndef @cell(%d: float32) {\n'
                   b'  %0 = ref(%d);\n  %1 = ' + b"fn () { " * 10000 + b"ref_read(%0)" + b" }()" * 10000 +
                   b";\n  (%1, ref_read(%0))\n}\n")
    for spec in ("--pass=ToBasicBlockNormalForm", "-O1"):
        r.check(f"deep nesting: called fns reading a shared ref cell in a global, {spec}, run", cell_global,
                allowed=(0,), args=(spec, "--run"), cpu=cpu_linear(r.relayc))
    # nested called literals in a global whose nodes are shared with a literal: Gradient walked the
    # body of each level, inner levels included, for the nodes it captures (pass fuzzer session 10
    # seed 10 input 3412: 9.8 s); each literal's list now stands for its body
    grad_nested = (b'#[version = "0.0.5"]\ndef @f(%c: bool) -> (float32, float32) {\n  %0 = ' + b"fn () { " * 10000 +
                   b"fn () { 2f }" + b" }()" * 10000 + b";\n  %1 = add(2f, 1f);\n  %2 = %0();\n"
                   b"  %3 = multiply(%1, %2);\n  %4 = fn () { %3 };\n  %5 = %4();\n"
                   b"  %6 = if (%c) { add(%3, 0f) } else { %1 };\n  (%6, add(%3, %5))\n}\n"
                   b"def @main() -> (float32, float32) {\n  @f(True)\n}\n")
    r.check("deep nesting: called fns in a global through Gradient", grad_nested, allowed=(0,),
            args=("--pass=Gradient",), cpu=cpu_linear(r.relayc))
    for label, data in shared_deep(10000):  # the printer's placement scopes: LCAs 10,000 deep
        r.check(f"shared across deep scopes: {label}", data, allowed=(0,), args=("--check-roundtrip",))
    passes = implemented_passes(r.relayc)
    jobs = [(p, label, data) for p in passes for label, data in deep]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        list(ex.map(lambda j: r.check(f"deep nesting through {j[0]}: {j[1]}", j[2], args=(f"--pass={j[0]}",)), jobs))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        list(ex.map(lambda op: odd_attribute_sweep(r, op), odd_attrs.read_registry()))
    files = []
    for p in a.paths:
        for root, _, names in os.walk(p):
            files += [os.path.join(root, n) for n in names if n.endswith(".relay")]
    others = sorted(f for f in files if f not in a.every_byte)
    random.Random(99).shuffle(others)
    for path in sorted([f for f in files if f in a.every_byte] + others[:a.sample]):
        with open(path, "rb") as f:
            data = f.read()
        step = 1 if path in a.every_byte else a.stride
        # prefixes, parsed and resolved (type checking adds little for syntax robustness but time)
        cuts = [(f"{path} cut at byte {c}", data[:c]) for c in range(0, len(data), step)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
            list(ex.map(lambda lc: r.check(lc[0], lc[1], args=("--stop-after=resolve",)), cuts))
    print(f"robustness: {r.passed} passed, {r.failed} failed")
    if not r.failed:  # failing inputs stay for the reader; an empty scratch directory does not
        shutil.rmtree(r.tmp, ignore_errors=True)
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
