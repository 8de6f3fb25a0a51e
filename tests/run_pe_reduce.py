#!/usr/bin/env python3
"""PartialEvaluate + DeadCodeElimination reduce prelude and gradient programs (issue 11).

Two sets of programs, each measured with `relayc --time-passes` (node counts of the module
before and after every pass; RemoveUnusedFunctions first and last, so both counts are of the
code @main reaches, not of the whole library):

  prelude   every golden program whose RUN line runs it with --prelude:
              RemoveUnusedFunctions,PartialEvaluate,DeadCodeElimination(inline_once=True),
              RemoveUnusedFunctions
            before = after the first RemoveUnusedFunctions, after = the end.
  gradient  every program under tests/golden/grad/pass:
              RemoveUnusedFunctions,Gradient,PartialEvaluate,
              DeadCodeElimination(inline_once=True),RemoveUnusedFunctions
            before = after Gradient, after = the end. (TVM's tests add ignore_impurity=True to
            drop the tape's writes, which also drops writes the residual code still reads when
            a call stays residual: relayc's PartialEvaluate drops exactly the cells nothing can
            read instead, so DeadCodeElimination runs with its exact purity.)

Checks, per program: the reduced program runs to exactly the value of the unreduced one
(`--pass=Gradient --run` for the gradient set; inputs from the RUN line, or drawn from the
parameter types of @main when the test has none), and it has fewer nodes than before (a program
of at most 12 nodes may stay as it is), except the programs in GROWS (with the reason); a gradient
program has at most its figure in GRADIENT_AT_MOST. Prints the table with --table, then
`pe reduce: N passed, N failed (prelude: B -> A nodes, gradient: B -> A nodes)`; exit 1 on failure.
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_golden  # noqa: E402

TIMEOUT = 120
PE = "PartialEvaluate,DeadCodeElimination(inline_once=True)"
PE_GRAD = "PartialEvaluate,DeadCodeElimination(inline_once=True)"
# programs the pipeline may leave larger (TVM's rules make the same residual code)
GROWS = {
    # @flatten's recursive call takes a list it has just built (Cons(%t, %w)): a value newer
    # than its argument is no decrease of fuel, so the call stays residual, while the first
    # unfolding of @map/@count inlines one step of each
    "test_adt_nested_matches.relay": "fuel: recursion on a freshly built list is not unfolded",
    # the 20 steps of the loop unfold (121 unfoldings below the call, and 5,000 more for the
    # residual forms of the tape's closures, which do not count towards PE_ATTEMPT_UNFOLDS):
    # straight-line code, larger than the loop it replaces (497 nodes when the loop was kept)
    "loop.relay": "unrolled: 20 steps of straight-line code are larger than the loop",
    # @nat_iterate's closure calls a closure the same literal made LATER (inside its own
    # unfolding): no fuel component decreases (TVM's rule), so those calls stay with their tape
    "pow.relay": "fuel: a closure calling a newer closure of the same literal is not unfolded",
    # Gradient's output has one use node per variable (session 11), PartialEvaluate's residual
    # code a node per use: the residual program is the 126 nodes it was, the input 123 nodes
    # now (131 with a node per use)
    "if_true.relay": "the residual code has a use node per use, Gradient's output one per variable",
    "if_false.relay": "the residual code has a use node per use, Gradient's output one per variable",
}

# The gradient set's node counts after the pipeline (session 12): a program left larger fails, so
# a lost reduction shows. tvm_types.relay's second-order gradient is all static: 5 nodes (2260 while
# the residual literals' unfoldings counted towards PE_ATTEMPT_UNFOLDS, transform/partial_eval.c).
# Lower a figure when a change reduces more; add a new program's figure here.
GRADIENT_AT_MOST = {
    "add.relay": 18, "adt_tree.relay": 88, "broadcast_add.relay": 24, "broadcast_check.relay": 91,
    "broadcast_subtract.relay": 26, "check_grad.relay": 20, "checkpoint.relay": 128,
    "checkpoint_closure.relay": 76, "closure.relay": 33, "concat.relay": 21,
    "global_function.relay": 28, "grad_tuple.relay": 29, "grad_tuple_first_order.relay": 29,
    "id.relay": 5, "if_false.relay": 130, "if_true.relay": 130, "inline_fo.relay": 67,
    "let_rec.relay": 121, "loop.relay": 1161, "mixed_higher_order.relay": 96,
    "on_device_closure.relay": 21, "op_as_value.relay": 77,
    "polymorphic_literal_let_alias.relay": 19, "polymorphic_literal_returned.relay": 7,
    "polymorphic_literal_shared.relay": 70, "pow.relay": 208, "prelude_fold.relay": 158,
    "prelude_list.relay": 74, "print_square.relay": 21, "print_square_fo.relay": 21,
    "ref.relay": 18, "second_order.relay": 69, "shared.relay": 38,
    "shared_closure_effect.relay": 50, "sub.relay": 21, "temp_add.relay": 28, "tuple.relay": 35,
    "tuple_first_order.relay": 35, "tvm_types.relay": 5,
}


def run(argv):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, b"", f"timed out after {TIMEOUT}s"


def time_passes(err):
    """[(pass, nodes before, nodes after)] from --time-passes output."""
    rows = []
    for line in err.splitlines():
        w = line.split()
        if len(w) >= 6 and w[-1].isdigit() and w[-2].isdigit():
            rows.append((w[0], int(w[-2]), int(w[-1])))
    return rows


def inputs_of(path, header_runs):
    """The --input/--prelude words of the first RUN line that runs the program."""
    for r in header_runs:
        words = shlex.split(r.replace("%d", os.path.dirname(path)).replace("%s", path))
        if "--run" not in words and "--check-grad" not in words:
            continue
        out, i = [], 1
        while i < len(words):
            w = words[i]
            if w in ("--input", "-i") and i + 1 < len(words):
                out += [w, words[i + 1]]
                i += 1
            elif w.startswith("--input="):
                out.append(w)
            elif w == "--prelude":
                out.append(w)
            i += 1
        return out
    return None


def npy(path, shape, dtype, values):
    descr, fmt = {"float32": ("<f4", "f"), "int32": ("<i4", "i"), "float64": ("<f8", "d")}[dtype]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def drawn_inputs(path, tmp):
    """--input words for @main's tensor parameters (deterministic values), or None."""
    text = open(path, errors="replace").read()
    m = re.search(r"def @main\((.*?)\)\s*(->|\{)", text, re.S)
    if not m:
        return None
    words = []
    for name, dims, dtype in re.findall(r"%(\w+): Tensor\[\(([\d, ]*)\), (\w+)\]", m.group(1)):
        if dtype not in ("float32", "int32", "float64"):
            return None
        shape = [int(d) for d in dims.replace(" ", "").split(",") if d]
        n = 1
        for d in shape:
            n *= d
        vals = [((i * 7) % 11 - 5) / 4.0 for i in range(n)] if dtype != "int32" else [i % 5 for i in range(n)]
        f = os.path.join(tmp, f"{os.path.basename(path)}.{name}.npy")
        npy(f, shape, dtype, vals)
        words += ["--input", f"{name}={f}"]
    if len(words) // 2 != m.group(1).count("%"):
        return None
    return words


def check(relayc, path, kind, tmp):
    runs = run_golden.parse_header(path)[0]
    words = inputs_of(path, runs)
    if words is None:
        return None
    prelude = ["--prelude"] if "--prelude" in words else []
    if kind == "prelude":
        spec = f"RemoveUnusedFunctions,{PE},RemoveUnusedFunctions"
        base_spec = None
    else:
        spec = f"RemoveUnusedFunctions,Gradient,{PE_GRAD},RemoveUnusedFunctions"
        base_spec = "Gradient"
        if not any(w.startswith("--input") or w == "-i" for w in words):
            drawn = drawn_inputs(path, tmp)
            if drawn is None:
                return None
            words = words + drawn
    rc, _, err = run([relayc] + prelude + [f"--pass={spec}", "--time-passes", path])
    name = os.path.basename(path)
    if rc != 0:
        return name, kind, 0, 0, f"--time-passes exit {rc}: {err[:800]}"
    rows = time_passes(err)
    if kind == "prelude":
        before = rows[0][2]
    else:
        before = next(r[2] for r in rows if r[0] == "Gradient")
    after = rows[-1][2]
    base = [relayc] + ([f"--pass={base_spec}"] if base_spec else []) + ["--run"] + words + [path]
    rc0, out0, err0 = run(base)
    rc1, out1, err1 = run([relayc, f"--pass={spec}", "--run"] + words + [path])
    if rc0 != rc1 or out0 != out1:
        return name, kind, before, after, (f"value differs: exit {rc1} (expected {rc0})\n"
                                           f"  expected: {out0[:300]!r}\n  got: {out1[:300]!r}\n  {err1[:600]}")
    # a program of a dozen nodes may already be as small as it gets: it must not grow
    if name not in GROWS and (after > before or (after == before and before > 12)):
        return name, kind, before, after, f"not reduced: {before} -> {after} nodes"
    if kind == "gradient" and after > GRADIENT_AT_MOST.get(name, after):
        return name, kind, before, after, f"reduced less than before: {after} nodes, at most {GRADIENT_AT_MOST[name]}"
    return name, kind, before, after, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("--table", action="store_true", help="print every program's node counts")
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    jobs = []
    for path in run_golden.collect(["tests/golden", "samples"]):
        if path.endswith(".expected.relay"):
            continue
        runs, exit_code = run_golden.parse_header(path)[:2]
        if exit_code != 0:
            continue
        if path.startswith("tests/golden/grad/pass/"):
            jobs.append((path, "gradient"))
        elif any("--prelude" in r.split() and "--run" in r.split() and "--pass" not in r for r in runs):
            jobs.append((path, "prelude"))
    passed = failed = 0
    totals = {"prelude": [0, 0], "gradient": [0, 0]}
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
        for res in ex.map(lambda j: check(relayc, j[0], j[1], tmp), jobs):
            if res is None:
                continue
            name, kind, before, after, msg = res
            totals[kind][0] += before
            totals[kind][1] += after
            if a.table:
                note = "  (" + GROWS[name] + ")" if name in GROWS else ""
                print(f"{kind:9} {name:58} {before:6} -> {after:6}{note}")
            if msg:
                failed += 1
                print(f"FAIL {kind} {name}: {msg}")
            else:
                passed += 1
    p, g = totals["prelude"], totals["gradient"]
    print(f"pe reduce: {passed} passed, {failed} failed (prelude: {p[0]} -> {p[1]} nodes, "
          f"gradient: {g[0]} -> {g[1]} nodes)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
