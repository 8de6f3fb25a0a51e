#!/usr/bin/env python3
"""Network-shaped Relay modules for the --stats and --emit=dot tests, with their figures by hand.

Every weight is a parameter of @main (no data: --stats and --emit=dot only type-check), so the
text is small however large the network. Each generator returns (text, facts), where facts holds
what the tests expect, computed here from the layer shapes with the textbook formulas, not by
asking relayc:

  macs        multiply-accumulates (convolution: output elements x kernel area x input channels
              per group; dense: rows x in x out; batch_matmul: batch x M x K x N)
  ops         operator name -> number of calls
  params      number of @main parameters, and param_bytes (float32 = 4 bytes, int64 = 8)
  largest     (shape, dtype, bytes, operator) of the largest tensor a call produces

    python3 tests/tools/netgen.py resnet50 > /tmp/r50.relay
    python3 tests/tools/netgen.py gpt2 --layers 12 --tokens 64 > /tmp/gpt2.relay
"""
import argparse
import collections
import sys

DTYPE_BYTES = {"float32": 4, "int64": 8, "int32": 4}


class Net:
    def __init__(self):
        self.params = []       # (name, shape, dtype)
        self.lines = []
        self.n = 0
        self.ops = collections.Counter()
        self.macs = 0
        self.largest = None    # (bytes, shape, dtype, op)

    def param(self, name, shape, dtype="float32"):
        self.params.append((name, tuple(shape), dtype))
        return "%" + name

    def call(self, op, args, attrs="", out_shape=None, dtype="float32", macs=0, tuple_out=False):
        """Binds `%N = op(args, attrs)`; out_shape is the (first) result's shape, for the facts."""
        text = f"{op}({', '.join(args)}{', ' + attrs if attrs else ''})"
        self.lines.append(f"  %{self.n} = {text};")
        self.ops[op] += 1
        self.macs += macs
        if out_shape is not None:
            size = DTYPE_BYTES[dtype]
            for d in out_shape:
                size *= d
            if self.largest is None or size > self.largest[0]:
                self.largest = (size, tuple(out_shape), dtype, op)
        ref = f"%{self.n}"
        self.n += 1
        if tuple_out:
            self.lines.append(f"  %{self.n} = {ref}.0;")
            ref = f"%{self.n}"
            self.n += 1
        return ref

    def text(self, result):
        sig = ", ".join(f"%{n}: Tensor[({', '.join(map(str, s))}{',' if len(s) == 1 else ''}), {dt}]"
                        for n, s, dt in self.params)
        body = "\n".join(self.lines)
        return f'#[version = "0.0.5"]\ndef @main({sig}) {{\n{body}\n  {result}\n}}\n'

    def facts(self):
        pbytes = 0
        for _, s, dt in self.params:
            b = DTYPE_BYTES[dt]
            for d in s:
                b *= d
            pbytes += b
        size, shape, dtype, op = self.largest
        return {"macs": self.macs, "ops": dict(self.ops), "params": len(self.params), "param_bytes": pbytes,
                "largest": {"shape": list(shape), "dtype": dtype, "bytes": size, "operator": op}}


def resnet50(batch=1, image=224, classes=1000):
    """ResNet-50 v1 as TVM's relay.testing.resnet builds it (stride on the 3x3 convolution of a
    bottleneck, projection shortcut on each stage's first block, batch_norm after every
    convolution): 4,089,184,256 multiply-accumulates for 224x224, the published 4.1 GMAC."""
    g = Net()
    x = g.param("data", (batch, 3, image, image))
    counter = [0]

    def conv(x, cin, cout, k, stride, pad, hw):
        i = counter[0]
        counter[0] += 1
        w = g.param(f"conv{i}_weight", (cout, cin, k, k))
        out = (hw + 2 * pad - k) // stride + 1
        y = g.call("nn.conv2d", [x, w],
                   f"strides=[{stride}, {stride}], padding=[{pad}, {pad}, {pad}, {pad}], "
                   f"channels={cout}, kernel_size=[{k}, {k}]",
                   (batch, cout, out, out), macs=batch * cout * out * out * k * k * cin)
        return y, out

    def bn(x, c, hw):
        i = counter[0]
        counter[0] += 1
        ps = [g.param(f"bn{i}_{n}", (c,)) for n in ("gamma", "beta", "mean", "var")]
        return g.call("nn.batch_norm", [x, *ps], "", (batch, c, hw, hw), tuple_out=True)

    def relu(x, c, hw):
        return g.call("nn.relu", [x], "", (batch, c, hw, hw))

    y, hw = conv(x, 3, 64, 7, 2, 3, image)
    y = relu(bn(y, 64, hw), 64, hw)
    hw2 = (hw + 2 - 3) // 2 + 1
    y = g.call("nn.max_pool2d", [y], "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]",
               (batch, 64, hw2, hw2))
    hw = hw2
    cin = 64
    for stage, (blocks, mid) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)]):
        cout = mid * 4
        for b in range(blocks):
            stride = 2 if stage > 0 and b == 0 else 1
            r, _ = conv(y, cin, mid, 1, 1, 0, hw)
            r = relu(bn(r, mid, hw), mid, hw)
            r, hwo = conv(r, mid, mid, 3, stride, 1, hw)
            r = relu(bn(r, mid, hwo), mid, hwo)
            r, _ = conv(r, mid, cout, 1, 1, 0, hwo)
            r = bn(r, cout, hwo)
            if b == 0:
                s, _ = conv(y, cin, cout, 1, stride, 0, hw)
                s = bn(s, cout, hwo)
            else:
                s = y
            y = g.call("add", [r, s], "", (batch, cout, hwo, hwo))
            y = relu(y, cout, hwo)
            hw, cin = hwo, cout
    y = g.call("nn.global_avg_pool2d", [y], "", (batch, cin, 1, 1))
    y = g.call("nn.batch_flatten", [y], "", (batch, cin))
    w = g.param("fc_weight", (classes, cin))
    bias = g.param("fc_bias", (classes,))
    y = g.call("nn.dense", [y, w], f"units={classes}", (batch, classes), macs=batch * cin * classes)
    y = g.call("nn.bias_add", [y, bias], "", (batch, classes))
    y = g.call("nn.softmax", [y], "", (batch, classes))
    return g.text(y), g.facts()


def gpt2(layers=12, tokens=64, vocab=50257, width=768, heads=12):
    """A GPT-2 shaped decoder (ids -> logits): token and position embeddings, per block layer
    norm, fused QKV dense, split, heads via reshape/transpose, scores by batch_matmul with
    transpose_b=True, softmax, attention by batch_matmul with transpose_b=False, output
    projection, residuals, a 4x MLP with tanh-free GELU stand-in (sigmoid), then the tied LM
    head as a dense over the vocabulary."""
    g = Net()
    T, C, H, D = tokens, width, heads, width // heads
    ids = g.param("ids", (T,), "int64")
    wte = g.param("wte", (vocab, C))
    wpe = g.param("wpe", (T, C))
    x = g.call("take", [wte, ids], "axis=0", (T, C))
    x = g.call("add", [x, wpe], "", (T, C))

    def ln(x, i, name):
        gamma = g.param(f"h{i}_{name}_g", (C,))
        beta = g.param(f"h{i}_{name}_b", (C,))
        return g.call("nn.layer_norm", [x, gamma, beta], "", (T, C))

    def dense(x, i, name, k, n):
        w = g.param(f"h{i}_{name}_w", (n, k))
        b = g.param(f"h{i}_{name}_b", (n,))
        y = g.call("nn.dense", [x, w], f"units={n}", (T, n), macs=T * k * n)
        return g.call("add", [y, b], "", (T, n))

    for i in range(layers):
        h = ln(x, i, "ln1")
        qkv = dense(h, i, "qkv", C, 3 * C)
        parts = g.call("split", [qkv], "indices_or_sections=3, axis=1")
        heads_of = []
        for j in range(3):
            p = f"%{g.n}"
            g.lines.append(f"  {p} = {parts}.{j};")
            g.n += 1
            r = g.call("reshape", [p], f"newshape=[{T}, {H}, {D}]", (T, H, D))
            heads_of.append(g.call("transpose", [r], "axes=[1, 0, 2]", (H, T, D)))
        q, k, v = heads_of
        s = g.call("nn.batch_matmul", [q, k], "transpose_b=True", (H, T, T), macs=H * T * D * T)
        s = g.call("nn.softmax", [s], "", (H, T, T))
        a = g.call("nn.batch_matmul", [s, v], "", (H, T, D), macs=H * T * T * D)
        a = g.call("transpose", [a], "axes=[1, 0, 2]", (T, H, D))
        a = g.call("reshape", [a], f"newshape=[{T}, {C}]", (T, C))
        a = dense(a, i, "proj", C, C)
        x = g.call("add", [x, a], "", (T, C))
        h = ln(x, i, "ln2")
        h = dense(h, i, "fc", C, 4 * C)
        h = g.call("multiply", [h, g.call("sigmoid", [h], "", (T, 4 * C))], "", (T, 4 * C))
        h = dense(h, i, "fc2", 4 * C, C)
        x = g.call("add", [x, h], "", (T, C))
    gamma = g.param("lnf_g", (C,))
    beta = g.param("lnf_b", (C,))
    x = g.call("nn.layer_norm", [x, gamma, beta], "", (T, C))
    logits = g.call("nn.dense", [x, wte], f"units={vocab}", (T, vocab), macs=T * C * vocab)
    return g.text(logits), g.facts()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net", choices=["resnet50", "gpt2"])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--facts", action="store_true", help="print the facts instead of the text")
    a = ap.parse_args()
    text, facts = resnet50() if a.net == "resnet50" else gpt2(a.layers, a.tokens)
    sys.stdout.write(repr(facts) + "\n" if a.facts else text)


if __name__ == "__main__":
    main()
