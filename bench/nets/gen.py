#!/usr/bin/python3
"""bench/nets/gen.py — write a benchmark network as Relay text, plus its weights and an input.

    /usr/bin/python3 bench/nets/gen.py NET [-o DIR] [--seed N] [--layers L] [--vocab V]

NET is mnist, resnet50, mobilenet_v2 or gpt2. Writes, in DIR (default /tmp/relayc-nets):
  NET.relay          the module exactly as TVM prints it (graph bindings, attributes in schema
                     order without defaults, meta[relay.Constant][i] and a #[metadata] section)
  NET.weights.npz    the constants (c0, c1, ... = meta[relay.Constant][0], [1], ...)
  NET.<param>.npy    a sample input for each parameter of @main
Needs numpy only (use /usr/bin/python3).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def build(name, seed=0, layers=None, vocab=None, exact=False):
    kw = {"seed": seed}
    if name == "gpt2":
        if layers is not None:
            kw["layers"] = layers
        if vocab is not None:
            kw["vocab"] = vocab
    if name == "mnist":
        kw["exact"] = exact
    return models.NETS[name](**kw)


def stem(name, layers=None, vocab=None):
    if name == "gpt2" and (layers is not None or vocab is not None):
        return f"gpt2_l{layers if layers is not None else 2}" + (f"_v{vocab}" if vocab else "")
    return name


def write(name, out_dir, seed=0, layers=None, vocab=None, exact=False):
    g, inputs = build(name, seed, layers, vocab, exact)
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, stem(name, layers, vocab))
    with open(base + ".relay", "w") as f:
        g.to_text(f)
    g.save_weights(base + ".weights.npz")
    for k, v in inputs.items():
        np.save(f"{base}.{k}.npy", v)
    return base, g, inputs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net", choices=sorted(models.NETS))
    ap.add_argument("-o", "--out-dir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "relayc-nets"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int, help="gpt2: number of blocks (default 2)")
    ap.add_argument("--vocab", type=int, help="gpt2: vocabulary size (default 50257)")
    ap.add_argument("--exact", action="store_true", help="mnist: dyadic weights, exact arithmetic")
    a = ap.parse_args()
    base, g, _ = write(a.net, a.out_dir, a.seed, a.layers, a.vocab, a.exact)
    nbytes = sum(c.nbytes for c in g.consts)
    print(f"{base}.relay: {len(g.consts)} constants, {nbytes / 1e6:.1f} MB of weights, "
          f"{os.path.getsize(base + '.relay') / 1e6:.1f} MB of text")


if __name__ == "__main__":
    main()
