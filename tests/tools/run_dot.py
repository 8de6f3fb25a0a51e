#!/usr/bin/env python3
"""--emit=dot: the output is read back by Graphviz and checked through Graphviz's own JSON.

Each program's DOT goes through `dot -Tsvg` and `dot -Tjson` (exit 0, nothing on stderr); the
JSON layout names every cluster with its nodes and every edge with its label, and the checks
below read it: which nodes exist (one per shared expression), where they are drawn (branches,
clauses, functions, fused Primitive functions), what edges carry (shape and dtype), and that
constants show their shape but never their data. A ResNet-50-shaped module (netgen.py) must
render with `dot -Tsvg` in seconds.

    python3 tests/tools/run_dot.py --relayc build/relayc
"""
import argparse
import base64
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import netgen  # noqa: E402

TYPE_LABEL = re.compile(r"^(cond |then |else |fn: )?((\(.*\) )?[a-z]+[0-9]*|\(.*(\)|\.\.\.)|[A-Za-z]+(\[.*\])?|ref\(.*\))$")


class Checker:
    def __init__(self):
        self.failures = 0
        self.checks = 0

    def true(self, cond, what):
        self.checks += 1
        if not cond:
            self.failures += 1
            print(f"FAIL {what}")
        return cond

    def eq(self, got, want, what):
        return self.true(got == want, f"{what}: got {got!r}, expected {want!r}")


class Graph:
    """Graphviz's -Tjson output, indexed."""

    def __init__(self, data):
        self.nodes = {}      # gvid -> object
        self.clusters = []   # objects with a "nodes" list
        for o in data.get("objects", []):
            if o.get("name", "").startswith("cluster"):
                self.clusters.append(o)
            else:
                self.nodes[o["_gvid"]] = o
        self.edges = data.get("edges", [])

    def label(self, gvid):
        return self.nodes[gvid].get("label", "").replace("\\n", "\n")

    def find(self, first_line):
        return [g for g in self.nodes if self.label(g).split("\n")[0] == first_line]

    def cluster(self, label):
        return [c for c in self.clusters if c.get("label", "").replace("\\n", "\n") == label]

    def members(self, cluster):
        return set(cluster.get("nodes", []))

    def into(self, gvid):
        return [e for e in self.edges if e["head"] == gvid]

    def out_of(self, gvid):
        return [e for e in self.edges if e["tail"] == gvid]


def render(ck, relayc, path, what):
    p = subprocess.run([relayc, "--emit=dot", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if not ck.true(p.returncode == 0 and not p.stderr, f"{what}: relayc --emit=dot: {p.stderr[:300]!r}"):
        return None, None
    dot_text = p.stdout
    for fmt in ("svg", "canon"):
        q = subprocess.run(["dot", "-T" + fmt], input=dot_text, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        ck.true(q.returncode == 0 and not q.stderr, f"{what}: dot -T{fmt}: {q.stderr[:300]!r}")
    q = subprocess.run(["dot", "-Tjson"], input=dot_text, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if not ck.true(q.returncode == 0, f"{what}: dot -Tjson"):
        return dot_text.decode(), None
    g = Graph(json.loads(q.stdout))
    for e in g.edges:  # every edge says what flows along it
        lab = e.get("label", "")
        ck.true(TYPE_LABEL.match(lab), f"{what}: edge label {lab!r} is not a type")
    return dot_text.decode(), g


def metadata_module(values, scalar):
    """A module whose constants live in the metadata section (spec/text-format.md §6.3-6.4)."""
    def blob(shape, vals):
        data = struct.pack(f"<{len(vals)}f", *vals)
        head = struct.pack("<QQiiiBBH", 0xDD5E40F096B4A13F, 0, 1, 0, len(shape), 2, 32, 1)
        head += b"".join(struct.pack("<q", d) for d in shape) + struct.pack("<q", len(data))
        return base64.b64encode(head + data).decode()
    consts = "".join(
        ', \n    {\n      "type_key": "relay.Constant", \n      "attrs": {\n        "_checked_type_": "0", \n'
        f'        "data": "{i}", \n        "span": "0", \n        "virtual_device_": "0"\n      }}\n    }}'
        for i in range(2))
    return ('#[version = "0.0.5"]\n'
            'def @main(%x: Tensor[(2, 3), float32]) {\n'
            '  %0 = add(%x, meta[relay.Constant][0]);\n'
            '  %1 = multiply(%0, meta[relay.Constant][1]);\n'
            '  %2 = subtract(%1, meta[relay.Constant][0]);\n'
            '  divide(%2, 7.5f)\n'
            '}\n\n#[metadata]\n{\n  "root": 1, \n  "nodes": [\n    {\n      "type_key": ""\n    }, \n'
            '    {\n      "type_key": "Map", \n      "keys": [\n        "relay.Constant"\n      ], \n'
            '      "data": [2]\n    }, \n    {\n      "type_key": "Array", \n      "data": [3, 4]\n    }'
            + consts + '\n  ], \n  "b64ndarrays": [\n'
            f'    "{blob((2, 3), values)}", \n    "{blob((), [scalar])}"\n'
            '  ], \n  "attrs": {"tvm_version": "0.20.dev0"}\n}\n')


def check_mnist(ck, relayc):
    text, g = render(ck, relayc, os.path.join(ROOT, "tests/golden/nets/mnist.relay"), "mnist")
    if not g:
        return
    ops = {"nn.pad": 2, "nn.conv2d": 2, "add": 3, "nn.relu": 2, "nn.max_pool2d": 2, "reshape": 1, "nn.dense": 1}
    for op, n in ops.items():
        ck.eq(len(g.find(op)), n, f"mnist: {op} nodes")
    ck.eq(len(g.nodes), 1 + sum(ops.values()) + 1, "mnist: nodes (parameter, operators, result)")
    ck.eq(len(g.edges), 14, "mnist: edges (constants are drawn inside their operator)")
    conv = [g.label(n) for n in g.find("nn.conv2d")]
    ck.true("#1: meta[0] (8,1,5,5) float32" in conv[0], f"mnist: conv2d's weight summarised: {conv[0]!r}")
    ck.true("kernel_size=[5, 5]" in conv[0] and "channels=8" in conv[0], "mnist: conv2d's attributes")
    ck.true(all("#1: 0f" in g.label(n) for n in g.find("nn.pad")), "mnist: literal pad value shown")
    ck.true(any(e.get("label") == "(1,8,28,28) float32" for e in g.edges), "mnist: typed edges")
    dense = g.label(g.find("nn.dense")[0])
    ck.true('out_dtype=\\"float32\\"' in dense or 'out_dtype="float32"' in dense, f"mnist: dense attrs {dense!r}")


def check_control(ck, relayc):
    text, g = render(ck, relayc, os.path.join(HERE, "dot_control.relay"), "control")
    if not g:
        return
    then, els = g.cluster("then"), g.cluster("else")
    if ck.true(len(then) == 1 and len(els) == 1, "control: then/else clusters"):
        ck.eq([g.label(n) for n in g.members(then[0])], ["add\n#1: 1"], "control: the then branch")
        ck.eq([g.label(n) for n in g.members(els[0])], ["subtract\n#1: 1"], "control: the else branch")
        shared = g.find("multiply")
        shared = [n for n in shared if "#1: 10" in g.label(n)]
        if ck.true(len(shared) == 1, "control: one node for the shared %0"):
            ck.true(not any(shared[0] in g.members(c) for c in g.clusters), "control: %0 drawn outside the if")
            heads = sorted(g.label(e["head"]).split("\n")[0] for e in g.out_of(shared[0]))
            ck.eq(heads, ["add", "subtract", "tuple"], "control: %0's three uses")
    iff = g.find("if")
    if ck.true(len(iff) == 1, "control: one if node"):
        ck.eq(sorted(e.get("label") for e in g.into(iff[0])), ["cond bool", "else int32", "then int32"],
              "control: the if node's inputs")
    sums = g.cluster("@sum")
    clause = g.cluster("Cons(%h, %t)")
    if ck.true(len(sums) == 1 and len(clause) == 1 and len(g.cluster("Nil")) == 1, "control: @sum and its clauses"):
        ck.true(g.members(clause[0]) <= g.members(sums[0]), "control: the clause is inside @sum")
        ck.eq(sorted(g.label(n) for n in g.members(clause[0])), ["%h", "%t", "@sum", "add"],
              "control: the Cons clause's nodes")
        match = g.find("match")
        ck.true(len(match) == 1 and match[0] in g.members(sums[0]), "control: match node in @sum")
    fn = g.cluster("fn")
    if ck.true(len(fn) == 1, "control: the closure's cluster"):
        ck.eq(sorted(g.label(n) for n in g.members(fn[0])), ["%y", "multiply", "ref_read"], "control: closure body")
        y = [n for n in g.members(fn[0]) if g.label(n) == "%y"][0]
        ck.eq(sorted((g.label(e["tail"]), e.get("style")) for e in g.into(y)), [("%n", "dashed"), ("2", "dashed")],
              "control: the calls' arguments flow into %y")
    ck.eq(len(g.find("call")), 2, "control: two calls of the closure")
    for name in ("ref", "ref_read", "ref_write", "Cons", "Nil", "@sum", "tuple", "@main result"):
        ck.true(g.find(name), f"control: a {name} node")


def check_tuples(ck, relayc):
    text, g = render(ck, relayc, os.path.join(HERE, "dot_tuples.relay"), "tuples")
    if not g:
        return
    split = g.find("split")
    if ck.true(len(split) == 1, "tuples: one split node"):
        outs = sorted(g.label(e["head"]) for e in g.out_of(split[0]))
        ck.eq(outs, [".0", ".1", ".2"], "tuples: the split's three projections")
        ck.true(all(e.get("label", "").startswith("((1,2,4,4) float32, ") for e in g.out_of(split[0])),
                "tuples: tuple-typed edges")
    bn = g.find("nn.batch_norm .0")
    ck.eq(len(bn), 1, "tuples: batch_norm(...).0 drawn as one box")
    ck.eq(len(g.find("tuple")), 2, "tuples: two tuple nodes")
    p = g.find("%p")
    if ck.true(len(p) == 1, "tuples: the tuple parameter"):
        ck.eq(len(g.out_of(p[0])), 5, "tuples: five projections of %p (each written occurrence is a node)")
    ck.true(any(e.get("label", "").startswith("((1,2,4,4) float32, (1,6,4,4) float32)") for e in g.edges),
            "tuples: a nested tuple type on an edge")


def check_fused(ck, relayc):
    text, g = render(ck, relayc, os.path.join(HERE, "fused.relay"), "fused")
    if not g:
        return
    prims = g.cluster("fn\nPrimitive=1")
    if not ck.eq(len(prims), 2, "fused: two Primitive clusters"):
        return
    first = [c for c in prims if any(g.label(n).startswith("nn.conv2d") for n in g.members(c))]
    if ck.true(len(first) == 1, "fused: conv2d inside a Primitive function"):
        ck.eq(sorted(g.label(n).split("\n")[0] for n in g.members(first[0])),
              ["%p0", "%p1", "%p2", "add", "nn.conv2d", "nn.relu"], "fused: the first function's nodes")
        ck.true("filled" in first[0].get("style", ""), "fused: Primitive clusters are shaded")
    calls = g.find("call fused")
    ck.eq(len(calls), 2, "fused: two calls of fused functions")
    x = g.find("%x")
    if ck.true(len(x) == 1, "fused: %x"):
        ck.eq([(g.label(e["head"]), e.get("style"), e.get("label")) for e in g.out_of(x[0])],
              [("%p0", "dashed", "(1,3,8,8) float32")], "fused: %x flows into %p0")
    ck.true(g.find("1f"), "fused: the literal argument")


def check_metadata(ck, relayc, tmp):
    path = os.path.join(tmp, "meta.relay")
    with open(path, "w") as f:
        f.write(metadata_module([1234.5, -987.25, 31.75, 4096.125, 77.5, 0.0625], 4321.75))
    text, g = render(ck, relayc, path, "metadata")
    if not g:
        return
    for v in ("1234", "987", "31.75", "4096", "77.5", "0.0625", "4321"):
        ck.true(v not in text, f"metadata: the data {v} does not appear")
    shared = [n for n in g.nodes if g.label(n) == "meta[0] (2,3) float32"]
    if ck.true(len(shared) == 1, "metadata: meta[0], used twice, is one node"):  # one shared constant
        ck.eq(sorted(g.label(e["head"]) for e in g.out_of(shared[0])), ["add", "subtract"],
              "metadata: meta[0] feeds both of its users")
    mul = g.find("multiply")
    ck.true(len(mul) == 1 and "#1: meta[1] float32" in g.label(mul[0]),
            f"metadata: a scalar metadata constant shows no value: {mul and g.label(mul[0])!r}")
    div = g.find("divide")
    ck.true(len(div) == 1 and "#1: 7.5f" in g.label(div[0]), "metadata: a literal shows its value")


def check_resnet(ck, relayc, tmp):
    text, facts = netgen.resnet50()
    path = os.path.join(tmp, "resnet50.relay")
    with open(path, "w") as f:
        f.write(text)
    t0 = time.monotonic()
    p = subprocess.run([relayc, "--emit=dot", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    ck.true(p.returncode == 0 and not p.stderr, "resnet50: --emit=dot")
    t1 = time.monotonic()
    q = subprocess.run(["dot", "-Tsvg"], input=p.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    t2 = time.monotonic()
    ck.true(q.returncode == 0 and not q.stderr and q.stdout.startswith(b"<?xml"), "resnet50: dot -Tsvg")
    ck.true(t2 - t1 < 20, f"resnet50: dot -Tsvg took {t2 - t1:.1f} s")
    text = p.stdout.decode()
    ops = sum(facts["ops"].values())
    nodes = len(re.findall(r"^\s*n\d+ \[", text, re.M))
    ck.eq(nodes, facts["params"] + ops + 1, "resnet50: one node per parameter and operator, plus the result")
    ck.eq(len(re.findall(r"label=\"nn.batch_norm \.0", text)), 53, "resnet50: batch_norm(...).0 in one box")
    print(f"resnet50: --emit=dot {1000 * (t1 - t0):.0f} ms, dot -Tsvg {1000 * (t2 - t1):.0f} ms "
          f"({nodes} nodes)")
    # after FuseOps: every fused group is a shaded cluster, and it still renders in seconds
    p = subprocess.run([relayc, "--pass=FuseOps", "--emit=dot", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if not ck.true(p.returncode == 0 and not p.stderr, f"resnet50 fused: --emit=dot {p.stderr[:200]!r}"):
        return
    t1 = time.monotonic()
    q = subprocess.run(["dot", "-Tjson"], input=p.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    t2 = time.monotonic()
    ck.true(q.returncode == 0 and not q.stderr, "resnet50 fused: dot -Tjson")
    ck.true(t2 - t1 < 30, f"resnet50 fused: dot took {t2 - t1:.1f} s")
    g = Graph(json.loads(q.stdout))
    prims = [c for c in g.clusters if c.get("label", "").startswith("fn\\nPrimitive=1")]
    calls = g.find("call fused")
    ck.true(len(prims) > 50 and len(prims) == len(calls), f"resnet50 fused: {len(prims)} Primitive clusters, "
            f"{len(calls)} calls")
    convs = g.find("nn.conv2d")
    ck.eq(len(convs), 53, "resnet50 fused: conv2d nodes")
    ck.true(all(any(n in g.members(c) for c in prims) for n in convs), "resnet50 fused: every conv2d is fused")
    print(f"resnet50 after FuseOps: dot -Tjson {1000 * (t2 - t1):.0f} ms ({len(prims)} fused functions)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    ck = Checker()
    check_mnist(ck, relayc)
    check_control(ck, relayc)
    check_tuples(ck, relayc)
    check_fused(ck, relayc)
    with tempfile.TemporaryDirectory(prefix="relayc-dot-") as tmp:
        check_metadata(ck, relayc, tmp)
        check_resnet(ck, relayc, tmp)
    print(f"dot: {ck.checks - ck.failures} checks passed, {ck.failures} failed")
    sys.exit(1 if ck.failures else 0)


if __name__ == "__main__":
    main()
