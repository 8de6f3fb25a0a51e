"""bench/nets/models.py — the benchmark networks as relaygraph Graphs, with seeded random weights.

Each builder returns (graph, inputs) where inputs maps @main's parameter names to numpy arrays
(a deterministic sample input). The structures follow what TVM prints for the corresponding
ONNX exports (spec/ops.md §14.1; operator usage, attribute spellings and the order of
arguments — which fixes the `%N` numbering — are those of TVM's own text for these models):

* mnist        — pad, conv 5×5, add (C,1,1) bias, relu, max_pool, reshape [1, 256], dense.
* resnet50     — ResNet-50 v2 (pre-activation): batch_norm on the input, conv 7×7 s2 p3, bn,
                 relu, max_pool 3×3 s2 p1, 16 bottleneck blocks (stride in the 3×3 conv,
                 projection shortcuts from the pre-activated input), bn, relu,
                 global_avg_pool2d, reshape [0, -1], dense units=1000, add bias.
* mobilenet_v2 — conv 3×3 s2, 17 inverted residual blocks (1×1 expand, 3×3 depthwise
                 groups=C, 1×1 project, batch_norm after each conv, relu after the first two,
                 residual add when shapes allow), 1×1 conv to 1280, global pool, 1×1 conv
                 classifier, reshape [0, -1].
* resnext50_32x4d — the ResNeXt-50 body after batch-norm folding, (1,64,56,56) → (1,2048,7,7):
                 1×1, 3×3 groups=32, 1×1 bottlenecks, projection shortcuts, relu after add.
* gpt2         — GPT-2 blocks on (1, batch, seq) int64 ids: negative ids wrapped with
                 less/add/where, take on the token table, position add, hand-written layer
                 norm (mean/subtract/power/sqrt/divide), dense, split, reshape/transpose into
                 heads, batch_matmul transpose_b=True, causal mask (multiply/subtract),
                 softmax axis=3, tanh-gelu, residual adds; the result is a tuple of the final
                 hidden state and each layer's stacked (key, value) via expand_dims/concatenate.
"""
import numpy as np

from relaygraph import Graph

F32 = "float32"


class Init:
    """Seeded weight factory."""

    def __init__(self, seed, exact=False):
        self.rng = np.random.default_rng(seed)
        self.exact = exact

    def normal(self, shape, std):
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    def uniform(self, shape, lo, hi):
        return self.rng.uniform(lo, hi, shape).astype(np.float32)

    def dyadic(self, shape, lo, hi, denom):
        """Random multiples of 1/denom in [lo, hi] (exactly representable, exact arithmetic)."""
        return (self.rng.integers(lo, hi + 1, shape) / denom).astype(np.float32)

    def conv(self, cout, cin, k):
        return self.normal((cout, cin, k, k), np.sqrt(2.0 / (cin * k * k)))

    def bn(self, c):
        return [self.uniform((c,), 0.5, 1.5), self.normal((c,), 0.1),
                self.normal((c,), 0.1), self.uniform((c,), 0.5, 1.5)]


# ---------------------------------------------------------------------------------- mnist
def mnist(seed=0, exact=False):
    """`exact`: weights and input are small dyadic rationals so that every product and sum of
    the forward pass is exact in float32 — any summation order gives the same bits."""
    g, w = Graph(), Init(seed)
    x = g.var("x", (1, 1, 28, 28))
    if exact:
        consts = [w.dyadic((8, 1, 5, 5), -2, 2, 8), w.dyadic((8, 1, 1), -4, 4, 8),
                  w.dyadic((16, 8, 5, 5), -2, 2, 8), w.dyadic((16, 1, 1), -4, 4, 8),
                  w.dyadic((10, 256), -2, 2, 8), w.dyadic((1, 10), -4, 4, 8)]
        sample = w.dyadic((1, 1, 28, 28), 0, 3, 4)
    else:
        consts = [w.conv(8, 1, 5), w.normal((8, 1, 1), 0.1), w.conv(16, 8, 5),
                  w.normal((16, 1, 1), 0.1), w.normal((10, 256), np.sqrt(1 / 256)),
                  w.normal((1, 10), 0.1)]
        sample = w.uniform((1, 1, 28, 28), 0, 1)
    c = [g.const(a) for a in consts]
    pad = [[0, 0], [0, 0], [2, 2], [2, 2]]
    h = g.call("nn.pad", x, g.scalar(0.0), pad_width=pad)
    h = g.call("nn.conv2d", h, c[0], padding=[0, 0, 0, 0], channels=8, kernel_size=[5, 5])
    h = g.call("nn.relu", g.call("add", h, c[1]))
    h = g.call("nn.max_pool2d", h, pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0])
    h = g.call("nn.pad", h, g.scalar(0.0), pad_width=pad)
    h = g.call("nn.conv2d", h, c[2], padding=[0, 0, 0, 0], channels=16, kernel_size=[5, 5])
    h = g.call("nn.relu", g.call("add", h, c[3]))
    h = g.call("nn.max_pool2d", h, pool_size=[3, 3], strides=[3, 3], padding=[0, 0, 0, 0])
    h = g.call("reshape", h, newshape=[1, 256])
    h = g.call("nn.dense", h, c[4], units=None, out_dtype="float32")
    g.result = g.call("add", h, c[5])
    return g, {"x": sample}


# ------------------------------------------------------------------------------- resnet50
def _conv(g, x, wt, stride, pad, groups=1):
    k = wt.shape[2]
    attrs = {"padding": [pad] * 4, "channels": wt.shape[0], "kernel_size": [k, k]}
    if stride != 1:
        attrs["strides"] = [stride, stride]
    if groups != 1:
        attrs["groups"] = groups
    return g.call("nn.conv2d", x, g.const(wt), **attrs)


def _bn(g, x, w, c):
    return g.call("nn.batch_norm", x, *[g.const(a) for a in w.bn(c)])[0]


def resnet50(seed=0, classes=1000, size=224):
    g, w = Graph(), Init(seed)
    data = g.var("data", (1, 3, size, size))
    x = _bn(g, data, w, 3)
    x = _conv(g, x, w.conv(64, 3, 7), 2, 3)
    x = g.call("nn.relu", _bn(g, x, w, 64))
    x = g.call("nn.max_pool2d", x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
    cin = 64
    for stage, (width, blocks) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3))):
        for b in range(blocks):
            stride = 2 if (b == 0 and stage > 0) else 1
            pre = g.call("nn.relu", _bn(g, x, w, cin))
            y = _conv(g, pre, w.conv(width, cin, 1), 1, 0)
            y = g.call("nn.relu", _bn(g, y, w, width))
            y = _conv(g, y, w.conv(width, width, 3), stride, 1)
            y = g.call("nn.relu", _bn(g, y, w, width))
            y = _conv(g, y, w.conv(width * 4, width, 1), 1, 0)
            short = _conv(g, pre, w.conv(width * 4, cin, 1), stride, 0) if b == 0 else x
            x = g.call("add", y, short)
            cin = width * 4
    x = g.call("nn.relu", _bn(g, x, w, cin))
    x = g.call("nn.global_avg_pool2d", x)
    x = g.call("reshape", x, newshape=[0, -1])
    x = g.call("nn.dense", x, g.const(w.normal((classes, cin), np.sqrt(1 / cin))), units=classes)
    g.result = g.call("add", x, g.const(w.normal((classes,), 0.1)))
    return g, {"data": w.normal((1, 3, size, size), 1.0)}


# --------------------------------------------------------------------------- mobilenet_v2
MOBILENET_V2_BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def mobilenet_v2(seed=0, classes=1000, size=224):
    g, w = Graph(), Init(seed)
    data = g.var("data", (1, 3, size, size))
    x = _conv(g, data, w.conv(32, 3, 3), 2, 1)
    x = g.call("nn.relu", _bn(g, x, w, 32))
    cin = 32
    for t, c, n, s in MOBILENET_V2_BLOCKS:
        for i in range(n):
            stride = s if i == 0 else 1
            hid = cin * t
            y = _conv(g, x, w.conv(hid, cin, 1), 1, 0)
            y = g.call("nn.relu", _bn(g, y, w, hid))
            y = _conv(g, y, w.conv(hid, 1, 3), stride, 1, groups=hid)
            y = g.call("nn.relu", _bn(g, y, w, hid))
            y = _conv(g, y, w.conv(c, hid, 1), 1, 0)
            y = _bn(g, y, w, c)
            x = g.call("add", y, x) if (stride == 1 and cin == c) else y
            cin = c
    x = _conv(g, x, w.conv(1280, cin, 1), 1, 0)
    x = g.call("nn.relu", _bn(g, x, w, 1280))
    x = g.call("nn.global_avg_pool2d", x)
    x = _conv(g, x, w.normal((classes, 1280, 1, 1), np.sqrt(1 / 1280)), 1, 0)
    g.result = g.call("reshape", x, newshape=[0, -1])
    return g, {"data": w.normal((1, 3, size, size), 1.0)}


# ------------------------------------------------------------------------- resnext50_32x4d
def resnext50_32x4d(seed=0, size=56):
    """ResNeXt-50 32x4d body as TVM's text has it after batch-norm folding: from the stem output
    (1, 64, 56, 56) to (1, 2048, 7, 7); 1×1, 3×3 groups=32 (stride in the 3×3), 1×1,
    projection shortcut on each stage's first block, relu after the residual add."""
    g, w = Graph(), Init(seed)
    x = g.var("x", (1, 64, size, size))
    cin = 64
    for stage, (width, blocks) in enumerate(((128, 3), (256, 4), (512, 6), (1024, 3))):
        for b in range(blocks):
            stride = 2 if (b == 0 and stage > 0) else 1
            y = g.call("nn.relu", _conv(g, x, w.conv(width, cin, 1), 1, 0))
            y = g.call("nn.relu", _conv(g, y, w.conv(width, width // 32, 3), stride, 1, groups=32))
            y = _conv(g, y, w.conv(width * 2, width, 1), 1, 0)
            short = _conv(g, x, w.conv(width * 2, cin, 1), stride, 0) if b == 0 else x
            x = g.call("nn.relu", g.call("add", y, short))
            cin = width * 2
    g.result = x
    return g, {"x": w.normal((1, 64, size, size), 1.0)}


# ----------------------------------------------------------------------------------- gpt2
def _layer_norm(g, h, w, d):
    m = g.call("mean", h, axis=[-1], keepdims=True)
    dev = g.call("subtract", h, m)
    var = g.call("mean", g.call("power", dev, g.scalar(2.0)), axis=[-1], keepdims=True)
    std = g.call("sqrt", g.call("add", var, g.scalar(1e-5)))
    y = g.call("multiply", g.call("divide", dev, std), g.const(w.uniform((d,), 0.8, 1.2)))
    return g.call("add", y, g.const(w.normal((d,), 0.05)))


def _linear(g, x, w, din, dout, out_shape):
    x = g.call("reshape", x, newshape=[-1, din])
    x = g.call("nn.dense", x, g.const(w.normal((dout, din), 0.02)), units=dout)
    x = g.call("add", x, g.const(w.normal((dout,), 0.02)))
    return g.call("reshape", x, newshape=out_shape)


def gpt2(seed=0, layers=2, batch=50, seq=32, hidden=768, heads=12, vocab=50257):
    g, w = Graph(), Init(seed)
    hd = hidden // heads
    ids = g.var("x", (1, batch, seq), "int64")
    x = g.call("reshape", ids, newshape=[-1, seq])
    neg = g.call("less", x, g.scalar(0, "int64"))
    x = g.call("where", neg, g.call("add", x, g.scalar(vocab, "int64")), x)
    h = g.call("take", g.const(w.normal((vocab, hidden), 0.02)), x, axis=0)
    h = g.call("add", h, g.const(w.normal((1, seq, hidden), 0.01)))
    tril = np.tril(np.ones((seq, seq), np.float32)).reshape(1, 1, seq, seq)
    presents = []
    for _ in range(layers):
        a = _linear(g, _layer_norm(g, h, w, hidden), w, hidden, 3 * hidden, [batch, seq, 3 * hidden])
        qkv = g.call("split", a, indices_or_sections=[hidden, 2 * hidden], axis=2)
        heads4 = [batch, seq, heads, hd]
        q = g.call("transpose", g.call("reshape", qkv[0], newshape=heads4), axes=[0, 2, 1, 3])
        k = g.call("reshape", qkv[1], newshape=heads4)
        kt = g.call("reshape", g.call("transpose", k, axes=[0, 2, 3, 1]), newshape=[-1, hd, seq])
        s = g.call("nn.batch_matmul", g.call("reshape", q, newshape=[-1, seq, hd]),
                   g.call("transpose", kt, axes=[0, 2, 1]), out_dtype="float32", transpose_b=True)
        s = g.call("reshape", s, newshape=[batch, heads, seq, seq])
        s = g.call("divide", s, g.scalar(float(np.sqrt(hd))))
        s = g.call("multiply", s, g.const(tril))
        s = g.call("subtract", s, g.const((1 - tril) * 10000))
        p = g.call("nn.softmax", s, axis=3)
        v = g.call("transpose", g.call("reshape", qkv[2], newshape=heads4), axes=[0, 2, 1, 3])
        vt = g.call("transpose", g.call("reshape", v, newshape=[-1, seq, hd]), axes=[0, 2, 1])
        o = g.call("nn.batch_matmul", g.call("reshape", p, newshape=[-1, seq, seq]), vt,
                   out_dtype="float32", transpose_b=True)
        o = g.call("reshape", o, newshape=[batch, heads, seq, hd])
        o = g.call("reshape", g.call("transpose", o, axes=[0, 2, 1, 3]), newshape=[batch, seq, hidden])
        h = g.call("add", h, _linear(g, o, w, hidden, hidden, [batch, seq, hidden]))
        m = _linear(g, _layer_norm(g, h, w, hidden), w, hidden, 4 * hidden, [batch, seq, 4 * hidden])
        cube = g.call("multiply", g.call("power", m, g.scalar(3.0)), g.scalar(0.044715))
        t = g.call("tanh", g.call("multiply", g.call("add", m, cube), g.scalar(0.797885)))
        gelu = g.call("multiply", g.call("multiply", m, g.scalar(0.5)),
                      g.call("add", t, g.scalar(1.0)))
        h = g.call("add", h, _linear(g, gelu, w, 4 * hidden, hidden, [batch, seq, hidden]))
        kk = g.call("expand_dims", g.call("transpose", k, axes=[0, 2, 1, 3]), axis=0)
        presents.append(g.call("concatenate", g.tuple(kk, g.call("expand_dims", v, axis=0))))
    h = _layer_norm(g, h, w, hidden)
    out = g.call("reshape", h, newshape=[1, batch, seq, hidden])
    g.result = g.tuple(out, *presents)
    sample = w.rng.integers(-vocab, vocab, (1, batch, seq)).astype(np.int64)
    return g, {"x": sample}


NETS = {"mnist": mnist, "resnet50": resnet50, "mobilenet_v2": mobilenet_v2,
        "resnext50_32x4d": resnext50_32x4d, "gpt2": gpt2}
