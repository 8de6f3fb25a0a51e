"""bench/nets/torch_ref.py — PyTorch eager evaluation of a relaygraph Graph (the reference).

`compile_graph(g)` turns the graph into a flat list of steps, each a PyTorch call with the
operator's spec/ops.md semantics written independently of relayc (torch.nn.functional
convolution, pooling, batch norm, matmul...). Intermediate tensors are dropped after their
last use, as an eager model would. `run(steps, inputs)` returns the result as numpy arrays
(a list for a tuple result). Needs python3-torch (Debian) and numpy.
"""
import numpy as np
import torch
import torch.nn.functional as F


def _pads4(p):
    """conv/pool padding attribute (1, 2 or 4 values) -> (top, left, bottom, right)."""
    if len(p) == 1:
        return (p[0],) * 4
    if len(p) == 2:
        return (p[0], p[1], p[0], p[1])
    return tuple(p)


def _conv2d(x, w, a):
    assert a["data_layout"] == "NCHW" and a["kernel_layout"] == "OIHW"
    t, l, b, r = _pads4(a["padding"])
    if t == b and l == r:
        pad = (t, l)
    else:
        x, pad = F.pad(x, (l, r, t, b)), (0, 0)
    return F.conv2d(x, w, None, tuple(a["strides"]), pad, tuple(a["dilation"]), a["groups"])


def _max_pool2d(x, a):
    assert a["layout"] == "NCHW" and not a["ceil_mode"]
    t, l, b, r = _pads4(a["padding"])
    k, s, d = tuple(a["pool_size"]), tuple(a["strides"]), tuple(a["dilation"])
    if t == b and l == r and 2 * t <= k[0] and 2 * l <= k[1]:
        return F.max_pool2d(x, k, s, (t, l), d)
    lowest = torch.finfo(x.dtype).min
    return F.max_pool2d(F.pad(x, (l, r, t, b), value=lowest), k, s, 0, d)


def _batch_norm(x, gamma, beta, mean, var, a):
    assert a["axis"] == 1 and a["center"] and a["scale"]
    y = F.batch_norm(x, mean, var, gamma, beta, False, 0.0, a["epsilon"])
    return (y, mean, var)


def _reshape(x, a):
    shape, src = [], 0
    for d in a["newshape"]:
        if d == 0:
            shape.append(x.shape[src])
        elif d in (-2, -3, -4):
            raise NotImplementedError("reshape special value %d" % d)
        else:
            shape.append(d)
        src += 1
    return x.reshape(shape)


def _take(data, idx, a):
    assert a["mode"] == "clip" and a["batch_dims"] == 0
    if a["axis"] is None:
        flat = data.reshape(-1)
        return flat[idx.clamp(0, flat.shape[0] - 1)]
    ax = a["axis"] % data.dim()
    n = data.shape[ax]
    sel = torch.index_select(data, ax, idx.clamp(0, n - 1).reshape(-1))
    return sel.reshape(data.shape[:ax] + idx.shape + data.shape[ax + 1:])


def _split(x, a):
    ind, ax = a["indices_or_sections"], a["axis"] % x.dim()
    if isinstance(ind, int):
        return tuple(torch.chunk(x, ind, ax))
    cuts = [0] + list(ind) + [x.shape[ax]]
    return tuple(x.narrow(ax, cuts[i], cuts[i + 1] - cuts[i]) for i in range(len(cuts) - 1))


def _batch_matmul(x, y, a):
    if a["transpose_a"]:
        x = x.transpose(1, 2)
    if a["transpose_b"]:
        y = y.transpose(1, 2)
    return torch.matmul(x, y)


def _dense(x, w, a):
    return F.linear(x, w)


def _mean(x, a):
    axis = a["axis"]
    if axis is None or a["exclude"]:
        raise NotImplementedError("mean without axis / exclude")
    return torch.mean(x, dim=tuple(axis), keepdim=a["keepdims"])


def _argmax(x, a):
    assert a["axis"] is not None and len(a["axis"]) == 1
    return torch.argmax(x, dim=a["axis"][0], keepdim=a["keepdims"]).to(torch.int32)


def _round(x, a):
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)  # half away from zero


OPS = {
    "nn.conv2d": lambda x, w, a: _conv2d(x, w, a),
    "nn.batch_norm": lambda x, g, b, m, v, a: _batch_norm(x, g, b, m, v, a),
    "nn.relu": lambda x, a: torch.relu(x),
    "nn.max_pool2d": lambda x, a: _max_pool2d(x, a),
    "nn.global_avg_pool2d": lambda x, a: torch.mean(x, dim=(2, 3), keepdim=True),
    "nn.dense": _dense,
    "nn.batch_matmul": _batch_matmul,
    "nn.pad": lambda x, v, a: F.pad(x, [p for pair in reversed(a["pad_width"]) for p in pair],
                                    value=float(v)),
    "nn.softmax": lambda x, a: torch.softmax(x, dim=a["axis"]),
    "reshape": _reshape,
    "transpose": lambda x, a: x.permute(*a["axes"]),
    "expand_dims": lambda x, a: x.reshape(
        x.shape[:a["axis"] % (x.dim() + 1)] + (1,) * a["num_newaxis"] + x.shape[a["axis"] % (x.dim() + 1):]),
    "split": _split,
    "concatenate": lambda t, a: torch.cat(t, dim=a["axis"]),
    "take": _take,
    "mean": _mean,
    "argmax": _argmax,
    "round": _round,
    "add": lambda x, y, a: torch.add(x, y),
    "subtract": lambda x, y, a: torch.sub(x, y),
    "multiply": lambda x, y, a: torch.mul(x, y),
    "divide": lambda x, y, a: torch.div(x, y),
    "power": lambda x, y, a: torch.pow(x, y),
    "less": lambda x, y, a: torch.lt(x, y),
    "where": lambda c, x, y, a: torch.where(c, x, y),
    "sqrt": lambda x, a: torch.sqrt(x),
    "tanh": lambda x, a: torch.tanh(x),
}


def compile_graph(g):
    """Steps (fn, arg slots, attrs, dst slot, slots to free) in evaluation order."""
    order = g.postorder()
    slot = {id(n): i for i, n in enumerate(order)}
    last_use = {}
    for i, n in enumerate(order):
        for c in n.args:
            last_use[id(c)] = i
    consts, params, steps = {}, {}, []
    for i, n in enumerate(order):
        dead = [slot[id(c)] for c in set(n.args) if last_use[id(c)] == i and c.kind != "const"]
        if n.kind == "const":
            a = n.value
            consts[i] = torch.from_numpy(np.ascontiguousarray(a)) if a.ndim else a.item()
        elif n.kind == "var":
            params[n.name] = i
        elif n.kind == "call":
            fn = OPS[n.op]
            if n.op == "concatenate":
                tup = n.args[0]
                steps.append((lambda t, a, f=fn: f(t, a), [slot[id(tup)]], n.attrs, i, dead))
            else:
                steps.append((fn, [slot[id(c)] for c in n.args], n.attrs, i, dead))
        elif n.kind == "tuple":
            steps.append((lambda *xs, a=None: tuple(xs[:-1]), [slot[id(c)] for c in n.args], None, i, dead))
        elif n.kind == "proj":
            steps.append((lambda t, a, k=n.index: t[k], [slot[id(n.args[0])]], None, i, dead))
    return {"steps": steps, "consts": consts, "params": params, "result": slot[id(g.result)],
            "size": len(order)}


def forward(prog, tensors):
    """One forward pass on torch tensors (dict name -> tensor); returns torch values."""
    env = [None] * prog["size"]
    for i, v in prog["consts"].items():
        env[i] = v
    for name, i in prog["params"].items():
        env[i] = tensors[name]
    for fn, ins, attrs, dst, dead in prog["steps"]:
        env[dst] = fn(*[env[j] for j in ins], attrs)
        for j in dead:
            env[j] = None
    return env[prog["result"]]


def run(prog, inputs):
    """Forward pass on numpy inputs; returns a numpy array or a list of them."""
    with torch.inference_mode():
        out = forward(prog, {k: torch.from_numpy(v) for k, v in inputs.items()})
    if isinstance(out, tuple):
        return [o.numpy() for o in out]
    return out.numpy()


def count_flops(g, inputs):
    """Multiply-add FLOPs (2 per MAC) of the conv2d, dense and batch_matmul calls of one pass."""
    total = [0]

    def conv(x, w, a):
        y = _conv2d(x, w, a)
        total[0] += 2 * y.numel() * w.shape[1] * w.shape[2] * w.shape[3]
        return y

    def dense(x, w, a):
        y = _dense(x, w, a)
        total[0] += 2 * y.numel() * w.shape[1]
        return y

    def bmm(x, y, a):
        z = _batch_matmul(x, y, a)
        total[0] += 2 * z.numel() * (x.shape[1] if a["transpose_a"] else x.shape[2])
        return z

    saved = {k: OPS[k] for k in ("nn.conv2d", "nn.dense", "nn.batch_matmul")}
    OPS.update({"nn.conv2d": conv, "nn.dense": dense, "nn.batch_matmul": bmm})
    try:
        run(compile_graph(g), inputs)
    finally:
        OPS.update(saved)
    return total[0]
