#!/usr/bin/env python3
"""The functional passes (issue 11) on 10,000-deep programs of every construct they treat.

Each generated program nests one construct 10,000 deep (or recurses 10,000 deep at run time):
closures capturing the enclosing parameter, matches binding pattern variables, one nested
constructor pattern, references, a polymorphic global applied to itself, mutually recursive
globals, a let-bound recursive closure, an ADT value walked by a recursive global. For every
pass spec of SPECS:

    relayc --pass=SPEC --run FILE     must exit 0 and print exactly what `relayc --run FILE` prints

(no C stack overflow, no "nested too deeply": the driver's stack takes 10,000 levels), and
`relayc --pass=SPEC --check-roundtrip FILE` must succeed. `--depth N` changes the depth.
Prints `functional deep: N passed, N failed`; exit 1 on any failure.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

TIMEOUT = 300
SPECS = [
    "LambdaLift",
    "Inline",
    "EtaExpand(expand_constructor=True, expand_global_var=True)",
    "Defunctionalization",
    "PartialEvaluate",
    "PartialEvaluate,DeadCodeElimination(inline_once=True)",
    "ToANormalForm,ToCPS,UnCPS",
]
HEAD = '#[version = "0.0.5"]\n'


def programs(n):
    # closures: each literal captures the enclosing one's parameter
    s = [HEAD, "def @main() -> int32 {\n  let %a0 = 0;\n  "]
    for i in range(1, n + 1):
        s.append(f"(fn (%a{i}: int32) -> int32 {{ add(%a{i - 1}, ")
    s.append(f"%a{n}")
    s.append(" ) })(1)" * n)
    s.append("\n}\n")
    yield "closures", "".join(s)
    # matches: each binds a pattern variable the next one scrutinises
    s = [HEAD, "type Opt { S(int32), N, }\n", "def @main() -> int32 {\n  let %v0 = 1;\n  "]
    for i in range(1, n + 1):
        s.append(f"match (S(%v{i - 1})) {{ S(%v{i}) => ")
    s.append(f"%v{n}")
    s.append(", N => 0, }" * n)
    s.append("\n}\n")
    yield "matches", "".join(s)
    # one nested pattern against a list built by a recursive global
    pat = "C(%h, " + "C(_, " * (n - 1) + "E" + ")" * n
    yield "nested pattern", (HEAD + "type L { C(int32, L), E, }\n"
                             "def @build(%k: int32, %acc: L) -> L {\n"
                             "  if (equal(%k, 0)) { %acc } else { @build(subtract(%k, 1), C(%k, %acc)) }\n}\n"
                             f"def @main() -> int32 {{\n  match (@build({n}, E)) {{ {pat} => %h, _ => 0, }}\n}}\n")
    # references: a read of a new cell holding a read of a new cell ...
    yield "refs", HEAD + "def @main() -> int32 {\n  " + "ref_read(ref(" * n + "7" + "))" * n + "\n}\n"
    # a polymorphic global applied to its own result (type arguments at every call)
    yield "polymorphic calls", (HEAD + "def @id[A](%x: A) -> A { %x }\n"
                                "def @main() -> (int32, float32) {\n  (" + "@id(" * n + "3" + ")" * n +
                                ", " + "@id(" * 100 + "2f" + ")" * 100 + ")\n}\n")
    # mutually recursive globals, n deep at run time
    yield "mutual recursion", (HEAD + "def @even(%k: int32) -> bool { if (equal(%k, 0)) { True } else { @odd(subtract(%k, 1)) } }\n"
                               "def @odd(%k: int32) -> bool { if (equal(%k, 0)) { False } else { @even(subtract(%k, 1)) } }\n"
                               f"def @main() -> bool {{ @even({n}) }}\n")
    # a let-bound recursive closure capturing a variable, n deep at run time
    yield "recursive closure", (HEAD + "def @main() -> int32 {\n  let %step = 2;\n"
                                "  let %down = fn (%k: int32, %acc: int32) -> int32 {\n"
                                "    if (less(%k, 1)) { %acc } else { %down(subtract(%k, 1), add(%acc, %step)) }\n  };\n"
                                f"  %down({n}, 0)\n}}\n")
    # an ADT value n deep, walked by a recursive global
    yield "adt value", (HEAD + "type L { C(int32, L), E, }\n"
                        "def @len(%l: L) -> int32 { match (%l) { C(_, %t) => add(1, @len(%t)), E => 0, } }\n"
                        "def @main() -> int32 {\n  @len(" + "C(1, " * n + "E" + ")" * n + ")\n}\n")


def run(argv):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, b"", f"timed out after {TIMEOUT}s"


def check(relayc, label, path, spec, base):
    rc0, out0, err0 = base
    if rc0 != 0:
        return f"{label}: the program itself: exit {rc0}: {err0[:400]}"
    rc, out, err = run([relayc, f"--pass={spec}", "--run", path])
    if rc != 0 or out != out0:
        return (f"{label} through {spec}: exit {rc}, expected 0\n  expected {out0[:200]!r}\n"
                f"  got {out[:200]!r}\n  {err[:600]}")
    rc, _, err = run([relayc, f"--pass={spec}", "--check-roundtrip", path])
    if rc != 0:
        return f"{label} through {spec} --check-roundtrip: exit {rc}: {err[:600]}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("--depth", type=int, default=10000)
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for label, text in programs(a.depth):
            path = os.path.join(tmp, label.replace(" ", "_") + ".relay")
            with open(path, "w") as f:
                f.write(text)
            jobs.append((label, path))
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
            bases = list(ex.map(lambda j: run([relayc, "--run", j[1]]), jobs))
            jobs = [(label, path, spec, base) for (label, path), base in zip(jobs, bases) for spec in SPECS]
            for msg in ex.map(lambda j: check(relayc, *j), jobs):
                if msg:
                    failed += 1
                    print("FAIL " + msg)
                else:
                    passed += 1
    print(f"functional deep: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
