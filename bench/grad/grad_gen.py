#!/usr/bin/python3
"""bench/grad/grad_gen.py — the gradient benchmark's programs: networks with their weights as @main
parameters, and the MNIST-sized MLP training step.

    /usr/bin/python3 bench/grad/grad_gen.py NET [-o DIR] [--seed N]

NET is resnet50, mobilenet_v2, resnext50_32x4d, gpt2 or mnist (bench/nets/models.py: same
structures and seeded weights; GPT-2 with 2 layers on 8 sequences of 32 tokens, SIZES) or mlp
(below). Writes, in DIR (default $TMPDIR/relayc-grad):
  NET.relay        @main(%data, %w0, %w1, ...) -> R: every tensor constant of the bench/nets
                   graph becomes a parameter `%wI` (I = its meta[relay.Constant] index there),
                   so `relayc --grad` differentiates with respect to all of them (GPT-2: the
                   token table, the causal mask and its complement included; the int64 ids
                   %x are data, their gradient is zeros)
  NET.inputs.npz   the data input and every weight by parameter name (`relayc --inputs`)
For mlp, NET.relay is one SGD step of a 784-128-10 perceptron (dense, bias_add, relu, dense,
bias_add, log_softmax, mean cross-entropy against one-hot labels) written with gradient(F), F a
literal over the four parameters that captures the batch:
  @main(%w1, %b1, %w2, %b2, %x, %y) -> (loss, w1', b1', w2', b2')   with p' = p - 0.1 * dp.
Needs numpy only.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "nets"))
import models  # noqa: E402
from relaygraph import _inline_literal  # noqa: E402

NETS = ("resnet50", "mobilenet_v2", "resnext50_32x4d", "gpt2", "mnist", "mlp")
# Sizes other than bench/nets' defaults, chosen so that one gradient runs in about a second:
# GPT-2 with 2 layers on 8 sequences of 32 tokens (bench/nets: 50 sequences).
SIZES = {"gpt2": {"layers": 2, "batch": 8, "seq": 32}}
MLP = {"batch": 64, "in": 784, "hidden": 128, "classes": 10, "lr": 0.1}


def default_dir():
    return os.path.join(os.environ.get("TMPDIR", "/tmp"), "relayc-grad")


def params_graph(net, seed=0):
    """The bench/nets graph of NET with each tensor constant turned into a parameter `wI`.
    Returns (graph, inputs) with inputs holding the data and every weight by name."""
    g, inputs = models.NETS[net](seed=seed, **SIZES.get(net, {}))
    return consts_to_params(g, inputs)


def consts_to_params(g, inputs):
    """g with each tensor constant (not an inline literal) turned into a parameter `wI`, its
    value added to inputs by that name; returns (g, inputs)."""
    g.order_consts()
    for n in g.postorder():
        if n.kind == "const" and not _inline_literal(n.value):
            name = f"w{n.index}"
            inputs[name] = np.ascontiguousarray(n.value)
            n.kind, n.name = "var", name
            n.shape, n.dtype = tuple(n.value.shape), str(n.value.dtype)
            g.params.append(n)
    g.consts = []
    return g, inputs


def mlp_text(p=MLP):
    b, i, h, k, lr = p["batch"], p["in"], p["hidden"], p["classes"], p["lr"]
    t = lambda *s: f"Tensor[({', '.join(map(str, s))}), float32]"  # noqa: E731
    ps = f"%w1: {t(h, i)}, %b1: {t(h)}, %w2: {t(k, h)}, %b2: {t(k)}"
    qs = f"%v1: {t(h, i)}, %c1: {t(h)}, %v2: {t(k, h)}, %c2: {t(k)}"
    return f"""#[version = "0.0.5"]
// One SGD step of a {i}-{h}-{k} perceptron on a batch of {b} (bench/grad/grad_gen.py): the loss
// is a literal over the parameters that captures the batch (%x, %y are constants of it: no
// gradient is computed for them, as in PyTorch where they do not require one).
def @main({ps}, %x: {t(b, i)}, %y: {t(b, k)}) {{
  %2 = gradient(fn ({qs}) -> float32 {{
    %0 = nn.relu(nn.bias_add(nn.dense(%x, %v1, units={h}), %c1));
    %1 = nn.log_softmax(nn.bias_add(nn.dense(%0, %v2, units={k}), %c2));
    negative(mean(sum(multiply(%y, %1), axis=[1])))
  }})(%w1, %b1, %w2, %b2);
  %3 = %2.1;
  (%2.0, subtract(%w1, multiply({lr}f, %3.0)), subtract(%b1, multiply({lr}f, %3.1)),
   subtract(%w2, multiply({lr}f, %3.2)), subtract(%b2, multiply({lr}f, %3.3)))
}}
"""


def mlp_inputs(seed=0, p=MLP):
    rng = np.random.default_rng(seed)
    b, i, h, k = p["batch"], p["in"], p["hidden"], p["classes"]
    f = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    return {"w1": f(rng.standard_normal((h, i)) * np.sqrt(2 / i)), "b1": f(rng.standard_normal(h) * 0.01),
            "w2": f(rng.standard_normal((k, h)) * np.sqrt(1 / h)), "b2": f(rng.standard_normal(k) * 0.01),
            "x": f(rng.uniform(0, 1, (b, i))), "y": f(np.eye(k)[rng.integers(0, k, b)])}


def build(net, seed=0):
    """(graph or None, inputs) of NET; the graph for the networks, None for mlp."""
    if net == "mlp":
        return None, mlp_inputs(seed)
    return params_graph(net, seed)


def write(net, out_dir, seed=0):
    """Writes NET.relay and NET.inputs.npz; returns (base path, graph or None, inputs)."""
    g, inputs = build(net, seed)
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, net)
    with open(base + ".relay", "w") as f:
        if g is None:
            f.write(mlp_text())
        else:
            g.to_text(f)
    np.savez(base + ".inputs.npz", **inputs)
    return base, g, inputs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net", choices=NETS)
    ap.add_argument("-o", "--out-dir", default=default_dir())
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    base, _, inputs = write(a.net, a.out_dir, a.seed)
    nbytes = sum(v.nbytes for v in inputs.values())
    print(f"{base}.relay: {len(inputs)} parameters, {nbytes / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
