#!/usr/bin/python3
"""Writes tests/golden/grad/ops/gpt2_block_reduced.relay: the gradient of a reduced GPT-2 block,
checked against PyTorch autograd in float64.

bench/nets/models.py's gpt2 (one layer, 2 sequences of 3 tokens, hidden 4, 2 heads, a 7-token
table; ids drawn in [-7, 7), so the negative-id wrap is exercised) in float64, with every float
constant a @main parameter as bench/grad/grad_gen.py makes it: take on the token table, the
hand-written layer norm (mean, subtract, power, sqrt, divide), dense, split, reshape/transpose
into heads, batch_matmul, the causal mask, softmax, tanh-gelu (power 3), residual adds, and a
tuple result whose first field relayc seeds (spec/gradient.md 1.3). The script runs
`relayc --grad --run`, compares every array of its --output with PyTorch float64 autograd on the
same graph (bench/nets/torch_ref.py's operators; the first field seeded with ones, the int64
ids' gradient zeros) and writes relayc's printed value as the golden's OUT lines only when
they agree to 1e-10 relative. Run from the repository root after building build/relayc:

    /usr/bin/python3 tests/grad/gpt2_grad_golden.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "nets"))
sys.path.insert(0, os.path.join(ROOT, "bench", "grad"))
import grad_gen  # noqa: E402
import models  # noqa: E402
import torch_ref  # noqa: E402

NAME = "gpt2_block_reduced"
OUT = os.path.join(ROOT, "tests/golden/grad/ops", NAME + ".relay")
DATA = os.path.join(ROOT, "tests/golden/grad/data", NAME + ".inputs.npz")
SIZES = {"layers": 1, "batch": 2, "seq": 3, "hidden": 4, "heads": 2, "vocab": 7}


def float64_params_graph():
    """The reduced GPT-2 in float64 with each tensor constant a parameter `wI`."""
    g, inputs = models.gpt2(seed=0, **SIZES)
    for n in g.postorder():
        if n.kind == "const" and n.value.dtype == np.float32:  # scalars: the 6 digits printed
            n.value = np.array(float(f"{n.value[()]:.6g}")) if n.value.ndim == 0 else n.value.astype(np.float64)
        if n.kind == "call" and n.attrs.get("out_dtype") == "float32":
            n.attrs["out_dtype"] = n.shown["out_dtype"] = "float64"
    return grad_gen.consts_to_params(g, inputs)


def leaves(v):
    return [x for o in v for x in leaves(o)] if isinstance(v, tuple) else [v]


def torch_reference(g, inputs):
    """[every result leaf, then each parameter's gradient] with the first leaf seeded."""
    prog = torch_ref.compile_graph(g)
    tens = {k: torch.from_numpy(v.copy()) for k, v in inputs.items()}
    for t in tens.values():
        if t.is_floating_point():
            t.requires_grad_(True)
    out = torch_ref.forward(prog, tens)
    first = leaves(out)[0]
    first.backward(torch.ones_like(first))
    grads = [np.zeros(tens[p.name].shape) if tens[p.name].grad is None else tens[p.name].grad.numpy()
             for p in g.params]
    return [o.detach().numpy() for o in leaves(out)] + grads


def main():
    relayc = os.path.join(ROOT, "build", "relayc")
    g, inputs = float64_params_graph()
    with tempfile.TemporaryDirectory() as d:
        prog = os.path.join(d, NAME + ".relay")
        with open(prog, "w") as f:
            g.to_text(f)
        body = open(prog).read()
        np.savez(DATA, **inputs)
        res = os.path.join(d, "out.npz")
        p = subprocess.run([relayc, "--grad", "--run", prog, "--inputs", DATA, "--output", res],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
        with np.load(res) as z:
            got = [z[f"arr_{i}"] for i in range(len(z.files))]
    ref = torch_reference(g, inputs)
    assert len(got) == len(ref), (len(got), len(ref))
    for i, (a, b) in enumerate(zip(got, ref)):
        err = np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300) if b.size else 0.0
        assert a.shape == b.shape and err <= 1e-10, f"array {i}: relative error {err}"
    head = [
        "// The gradient of a reduced GPT-2 block (bench/nets/models.py gpt2: 1 layer, 2 x 3 tokens,",
        "// hidden 4, 2 heads, 7-token table, negative ids) in float64, every float constant a parameter;",
        "// values checked against PyTorch float64 autograd by tests/grad/gpt2_grad_golden.py (which",
        "// writes this file). The int64 ids get zeros; only the hidden state (the tuple's first field)",
        "// is seeded.",
        "// RUN: relayc --grad --run %s --inputs %d/../data/" + NAME + ".inputs.npz",
    ]
    outs = ["// OUT: " + line if line else "// OUT:" for line in p.stdout.decode().rstrip("\n").split("\n")]
    with open(OUT, "w") as f:
        f.write("\n".join(head + outs) + "\n" + body)
    print(f"{OUT}: {len(got)} arrays agree with PyTorch float64 (<= 1e-10 relative)")


if __name__ == "__main__":
    main()
