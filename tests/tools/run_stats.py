#!/usr/bin/env python3
"""--stats and --stats --json: figures against values computed by hand.

  - stats_rules.relay: one call of every operator with a MAC rule (conv1d, conv3d,
    conv2d_transpose with groups, depthwise and NCHW4c conv2d, dense on 3-D data, matmul with
    transpose_a, batch_matmul with and without transpose_b), each count written out below;
  - tests/golden/nets/mnist.relay: a CNN with its weights in the metadata section (constants);
  - netgen.py's ResNet-50 (4,089,184,256 MACs, the published 4.1 GMAC) and GPT-2 (12 blocks,
    64 tokens) with every weight a parameter: MACs, operator counts, parameters and bytes,
    the largest intermediate, all from netgen's own bookkeeping; and MACs and weights against
    closed forms and published sizes (ResNet-50: 25,557,032 trainable weights; GPT-2:
    12 (12 T C^2 + 2 T^2 C) + T C V MACs, 124,439,808 weights at its 1024-token context);
  - a dynamic batch (a MAC count that cannot be known), FuseOps-shaped Primitive functions,
    the globals @main reaches (each counted once), a bare expression, a module without @main (exit 2), --json without a mode (exit 2);
  - the text form says the same as the JSON.

    python3 tests/tools/run_stats.py --relayc build/relayc
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import netgen  # noqa: E402

# stats_rules.relay, by hand: output elements x kernel extent x input channels per group, or
# output elements x contracted extent.
RULES = {
    "nn.conv1d": (1 * 8 * 16) * 3 * 4,                                   # NCW, k=3, Cin=4
    "nn.conv3d": (1 * 8 * 4 * 3 * 3) * 27 * 4,                           # 3x3x3, Cin=4
    "nn.conv2d_transpose": (1 * 4 * 21 * 21) * 9 * (8 // 2),             # TVM: Cin / groups
    "nn.conv1d_transpose": (1 * 3 * 10) * 2 * 4,                          # W = 2*(5-1)+2, k=2, Cin=4
    "nn.conv3d_transpose": (1 * 4 * 6 * 6 * 6) * 8 * 2,                   # 2*(3-1)+2 each, 2x2x2, Cin=2
    "nn.conv2d": (1 * 32 * 12 * 12) * 9 * 1 + (1 * 4 * 7 * 7 * 4) * 1 * (2 * 4),  # depthwise + NCHW4c
    "nn.dense": (2 * 5 * 3) * 6,                                          # 3-D data, K=6
    "nn.matmul": (5 * 7) * 6,                                             # transpose_a: K = rows of a
    "nn.batch_matmul": 2 * (3 * 5 * 7) * 6,                               # with and without transpose_b
}

# ResNet-50's weights by hand: the published 25,557,032 trainable parameters (convolutions
# without bias, batch_norm gamma and beta, the 1000-way dense layer with bias) plus batch_norm's
# running mean and variance, two per channel: the stem's 64 channels, and per bottleneck
# mid + mid + 4*mid (+ 4*mid on each stage's projection) for (blocks, mid) = (3, 64), (4, 128),
# (6, 256), (3, 512): 26,560 channels. The input image is a parameter too.
RESNET50_BN_CHANNELS = 64 + sum(b * 6 * mid + 4 * mid for b, mid in [(3, 64), (4, 128), (6, 256), (3, 512)])
RESNET50_PARAM_ELEMENTS = 25557032 + 2 * RESNET50_BN_CHANNELS + 3 * 224 * 224


def gpt2_by_hand(layers, tokens, width=768, vocab=50257):
    """GPT-2's figures in closed form. Per block: the QKV, projection and two MLP dense layers
    are T x C x (3C + C + 4C + 4C) = 12 T C^2 multiply-accumulates, attention scores and the
    weighted sum 2 T^2 C; the tied LM head T C V. Weights: token and position embeddings
    V C + T C, per block two layer norms (4C) and the four dense layers with bias
    (12 C^2 + 9C), the final layer norm 2C; the token ids (T int64) are a parameter too."""
    L, T, C, V = layers, tokens, width, vocab
    weights = V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C
    return {"macs": L * (12 * T * C * C + 2 * T * T * C) + T * C * V, "weights": weights,
            "elements": weights + T, "bytes": 4 * weights + 8 * T}


MNIST_MACS = (1 * 8 * 28 * 28) * 25 * 1 + (1 * 16 * 14 * 14) * 25 * 8 + 1 * 256 * 10
# six weight tensors in the metadata section plus the two `0f` pad values
MNIST_CONST_ELEMENTS = 8 * 1 * 5 * 5 + 8 + 16 * 8 * 5 * 5 + 16 + 10 * 256 + 10 + 2


class Checker:
    def __init__(self):
        self.failures = 0
        self.checks = 0

    def eq(self, got, want, what):
        self.checks += 1
        if got != want:
            self.failures += 1
            print(f"FAIL {what}: got {got!r}, expected {want!r}")

    def true(self, cond, what):
        self.checks += 1
        if not cond:
            self.failures += 1
            print(f"FAIL {what}")


def run(relayc, args, cwd=HERE):
    p = subprocess.run([relayc, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def stats(ck, relayc, path, what):
    rc, out, err = run(relayc, ["--stats", "--json", path])
    ck.eq((rc, err), (0, ""), f"{what}: --stats --json exit and stderr")
    try:
        data = json.loads(out)
    except ValueError:
        ck.true(False, f"{what}: output is not JSON: {out[:200]!r}")
        return None
    rc, text, err = run(relayc, ["--stats", path])
    ck.eq((rc, err), (0, ""), f"{what}: --stats exit and stderr")
    check_text_agrees(ck, text, data, what)
    return data


def num(s):
    return int(s.replace(",", ""))


def check_text_agrees(ck, text, data, what):
    """The text form states the JSON's figures."""
    m = re.search(r"^operator calls: ([\d,]+) \((\d+) operators?\)$", text, re.M)
    ck.true(m and num(m.group(1)) == data["operator_calls"] and int(m.group(2)) == len(data["operators"]),
            f"{what}: text operator calls")
    for name, n in data["operators"].items():
        ck.true(re.search(rf"^  {re.escape(name)} +{n:,}$", text, re.M), f"{what}: text row for {name}")
    for key in ("parameters", "constants"):
        z = data[key]
        m = re.search(rf"^{key}: (\d+)(?: \(([\d,]+) elements?, ([\d,]+) bytes?\))?", text, re.M)
        ck.true(m and int(m.group(1)) == z["count"] and
                (z["count"] == 0 or (num(m.group(2)) == z["elements"] and num(m.group(3)) == z["bytes"])),
                f"{what}: text {key}")
    m = re.search(r"^multiply-accumulates: ([\d,]+)", text, re.M)
    ck.true(m and num(m.group(1)) == data["macs"]["total"], f"{what}: text MAC total")
    for name, n in data["macs"]["by_operator"].items():
        ck.true(re.search(rf"^  {re.escape(name)} +{n:,}$", text, re.M), f"{what}: text MAC row for {name}")
    big = data["largest_intermediate"]
    if big:
        m = re.search(r"^largest intermediate: (.*), ([\d,]+) bytes, from (\S+)", text, re.M)
        ck.true(m and m.group(1) == big["type"] and num(m.group(2)) == big["bytes"] and
                m.group(3) == big["operator"], f"{what}: text largest intermediate")


def check_net(ck, relayc, tmp, name, text, facts):
    path = os.path.join(tmp, name + ".relay")
    with open(path, "w") as f:
        f.write(text)
    data = stats(ck, relayc, path, name)
    if not data:
        return None
    ck.eq(data["macs"]["total"], facts["macs"], f"{name}: MACs")
    ck.eq(data["macs"]["unknown_calls"], 0, f"{name}: MAC calls of unknown size")
    ck.eq(data["operators"], facts["ops"], f"{name}: operator counts")
    ck.eq(data["operator_calls"], sum(facts["ops"].values()), f"{name}: operator calls")
    ck.eq(data["parameters"]["count"], facts["params"], f"{name}: parameters")
    ck.eq(data["parameters"]["bytes"], facts["param_bytes"], f"{name}: parameter bytes")
    ck.eq(data["constants"]["count"], 0, f"{name}: constants")
    big = data["largest_intermediate"] or {}
    ck.eq({k: big.get(k) for k in facts["largest"]}, facts["largest"], f"{name}: largest intermediate")
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    ck = Checker()

    d = stats(ck, relayc, "stats_rules.relay", "rules")
    if d:
        ck.eq(d["macs"]["by_operator"], RULES, "rules: MACs by operator")
        ck.eq(d["macs"]["total"], sum(RULES.values()), "rules: MAC total")
        ck.eq(d["parameters"]["count"], 21, "rules: parameters")

    d = stats(ck, relayc, os.path.join(ROOT, "tests/golden/nets/mnist.relay"), "mnist")
    if d:
        ck.eq(d["macs"]["total"], MNIST_MACS, "mnist: MACs")
        ck.eq(d["constants"], {"count": 8, "elements": MNIST_CONST_ELEMENTS, "bytes": 4 * MNIST_CONST_ELEMENTS,
                               "unknown": 0}, "mnist: constants")
        ck.eq(d["parameters"], {"count": 1, "elements": 784, "bytes": 3136, "unknown": 0}, "mnist: parameters")
        ck.eq(d["operators"], {"add": 3, "nn.conv2d": 2, "nn.max_pool2d": 2, "nn.pad": 2, "nn.relu": 2,
                               "nn.dense": 1, "reshape": 1}, "mnist: operators")
        big = dict(d["largest_intermediate"])
        ck.true(isinstance(big.pop("line"), int) and isinstance(big.pop("column"), int), "mnist: position")
        ck.eq(big, {"type": "Tensor[(1, 8, 28, 28), float32]", "shape": [1, 8, 28, 28], "dtype": "float32",
                    "elements": 6272, "bytes": 25088, "operator": "nn.conv2d"}, "mnist: largest intermediate")

    with tempfile.TemporaryDirectory(prefix="relayc-stats-") as tmp:
        text, facts = netgen.resnet50()
        ck.eq(facts["macs"], 4089184256, "netgen resnet50: hand count")
        d = check_net(ck, relayc, tmp, "resnet50", text, facts)
        if d:
            ck.true(4.05e9 <= d["macs"]["total"] <= 4.15e9, "resnet50: the published 4.1 GMAC")
        # passes run first: after FuseOps the operators sit in Primitive functions, same figures
        rc, out, err = run(relayc, ["--pass=FuseOps", "--stats", "--json", os.path.join(tmp, "resnet50.relay")])
        ck.eq((rc, err), (0, ""), "resnet50 fused: exit and stderr")
        if rc == 0:
            f = json.loads(out)
            ck.eq((f["macs"]["total"], f["operators"], f["largest_intermediate"]["bytes"]),
                  (facts["macs"], facts["ops"], facts["largest"]["bytes"]), "resnet50 fused: same figures")
            ck.true(f["function_calls"] > 50, f"resnet50 fused: {f['function_calls']} calls of fused functions")
        if d:
            ck.eq(RESNET50_BN_CHANNELS, 26560, "resnet50: batch_norm channels by hand")
            ck.eq(d["parameters"]["elements"], RESNET50_PARAM_ELEMENTS,
                  "resnet50: parameter elements = published 25,557,032 + running statistics + image")
        text, facts = netgen.gpt2(layers=12, tokens=64)
        d = check_net(ck, relayc, tmp, "gpt2", text, facts)
        hand = gpt2_by_hand(12, 64)
        ck.eq(facts["macs"], hand["macs"], "gpt2: netgen's MAC bookkeeping = the closed form")
        if d:
            ck.eq(d["macs"]["total"], hand["macs"], "gpt2: MACs = 12 (12 T C^2 + 2 T^2 C) + T C V")
            ck.eq((d["parameters"]["elements"], d["parameters"]["bytes"]), (hand["elements"], hand["bytes"]),
                  "gpt2: parameter elements and bytes by hand")
        # with GPT-2's full 1024-token context the weights are the published 124,439,808 (124M)
        text, facts = netgen.gpt2(layers=12, tokens=1024)
        path = os.path.join(tmp, "gpt2_1024.relay")
        with open(path, "w") as f:
            f.write(text)
        d = stats(ck, relayc, path, "gpt2 (1024 tokens)")
        hand = gpt2_by_hand(12, 1024)
        ck.eq(hand["weights"], 124439808, "gpt2: the closed form gives GPT-2 small's 124,439,808 weights")
        if d:
            ck.eq((d["parameters"]["elements"] - 1024, d["macs"]["total"]), (hand["weights"], hand["macs"]),
                  "gpt2 (1024 tokens): weights and MACs")

    d = stats(ck, relayc, "stats_dynamic.relay", "dynamic")
    if d:
        ck.eq(d["macs"], {"total": 4 * 16 * 8, "unknown_calls": 1, "by_operator": {"nn.dense": 512}},
              "dynamic: MACs")
        ck.eq(d["parameters"]["unknown"], 1, "dynamic: parameter of unknown size")

    d = stats(ck, relayc, "fused.relay", "fused")
    if d:
        ck.eq(d["operators"], {"nn.conv2d": 1, "add": 1, "nn.relu": 1, "exp": 1}, "fused: operators")
        ck.eq(d["function_calls"], 2, "fused: calls of the Primitive functions")
        ck.eq(d["macs"]["total"], (1 * 4 * 8 * 8) * 9 * 3, "fused: MACs inside a Primitive function")
        big = d["largest_intermediate"]
        ck.eq((big["operator"], big["line"], big["column"]), ("nn.conv2d", 5, 10),
              "fused: ties go to the first in the text")

    d = stats(ck, relayc, "stats_globals.relay", "globals")
    if d:
        ck.eq(d["globals_reached"], 2, "globals: @twice and @layer reached, @unused not")
        ck.eq(d["operators"], {"add": 1, "nn.dense": 1, "nn.relu": 1}, "globals: each global counted once")
        ck.eq((d["function_calls"], d["macs"]["total"]), (4, 4 * 4), "globals: call sites and MACs")
        rc, text, _ = run(relayc, ["--stats", "stats_globals.relay"])
        ck.true("with the 2 globals it calls" in text.splitlines()[0], "globals: text header names them")

    p = subprocess.run([relayc, "--stats", "--json", "--expr", "-"], input=b"nn.dense(ones(shape=[2, 3], dtype=\"float32\"), "
                       b"ones(shape=[5, 3], dtype=\"float32\"))", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ck.eq(p.returncode, 0, "expression: exit")
    if p.returncode == 0:
        d = json.loads(p.stdout)
        ck.eq((d["function"], d["macs"]["total"]), (None, 2 * 3 * 5), "expression: MACs")

    with tempfile.TemporaryDirectory(prefix="relayc-stats-") as tmp:
        path = os.path.join(tmp, "nomain.relay")
        with open(path, "w") as f:
            f.write('#[version = "0.0.5"]\ndef @f() { 1 }\n')
        rc, out, err = run(relayc, ["--stats", path])
        ck.eq((rc, out, err.strip()), (2, "", "relayc: error: --stats: the module has no @main function"),
              "no @main")
        rc, out, err = run(relayc, ["--json", path])
        ck.true(rc == 2 and "--json needs --run or --stats" in err, "--json without a mode")
    print(f"stats: {ck.checks - ck.failures} checks passed, {ck.failures} failed")
    sys.exit(1 if ck.failures else 0)


if __name__ == "__main__":
    main()
