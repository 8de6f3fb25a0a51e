"""Gradient-helper family (spec/gradient.md 5, spec/passes.md 11.4-11.5): the operators the passes and
the gradient rules emit — collapse_sum_like / collapse_sum_to, contrib_reverse_reshape,
nn.cross_entropy(_with_logits), the annotations (on_device, device_copy, annotation.stop_fusion,
annotation.checkpoint), nn.conv2d_backward_weight, nn.max_pool2d_grad, nn.avg_pool2d_grad, strided_set,
scatter_nd, scatter_elements.
References are written from the spec: collapse_sum is numpy's sum over the axes along which the
target broadcasts, reshaped to the target; reverse reshape applies reshape's special values to the
reversed shapes; the losses are the flat sums over N = x.shape[0]; conv2d_backward_weight is the
direct sum over (n, y, x) of grad times the strided, dilated, zero-padded data window, per group;
max_pool2d_grad scatters each cell's gradient to its window's first strict maximum above the lowest
finite value (TVM's argmax reducer; padding reads that lowest value, a winner there is dropped);
avg_pool2d_grad spreads gradient / the forward divisor over the in-range taps; strided_set is numpy's
slice assignment (TVM's strided_set_python); the scatters apply their updates one by one, in order."""
import numpy as np

from diffcore import (FLOATS, INTS, RUN_ERROR, TYPE_ERROR, Case, call, rand_array, rand_shape, is_float)
from fam_elemwise import wrap

FAMILY = "grad"


# ------------------------------------------------------------------ collapse_sum

def collapse_target(rng, shape):
    """A shape that broadcasts to `shape`: a suffix of it with some extents set to 1."""
    k = int(rng.integers(0, len(shape) + 1))
    t = shape[len(shape) - k:]
    return tuple(1 if rng.random() < 0.4 else d for d in t)


def collapse_ref(x, target):
    nd, tn = x.ndim, len(target)
    axes = tuple(i for i in range(nd) if i < nd - tn or (target[i - (nd - tn)] == 1 and x.shape[i] != 1))
    if is_float(x.dtype):
        s = x.astype(np.float64).sum(axis=axes, keepdims=True) if axes else x.astype(np.float64)
        return s.reshape(target).astype(x.dtype)
    s = x.astype(np.int64).sum(axis=axes, keepdims=True) if axes else x.astype(np.int64)
    return np.vectorize(lambda v: wrap(int(v), x.dtype), otypes=[x.dtype])(s.reshape(target)).astype(x.dtype) \
        if s.size else s.reshape(target).astype(x.dtype)


def collapse_cases(rng, n):
    for k in range(n):
        dt = (FLOATS + ["int32", "int8", "int64"])[k % 6]
        shape = rand_shape(rng, rank=int(rng.integers(0, 5)))
        target = collapse_target(rng, shape)
        x = rand_array(rng, shape, dt)
        tol = {"float16": (1e-2, 1e-2)}.get(dt, (None, None))
        if k % 2 == 0:
            like = np.zeros(target, dt)
            yield Case(FAMILY, f"collapse_sum_like {dt} {shape} -> {target}", [("x", x), ("like", like)],
                       call("collapse_sum_like", ["%x", "%like"]), lambda x=x, t=target: collapse_ref(x, t), *tol)
        else:
            s = np.array(target, np.int32)
            yield Case(FAMILY, f"collapse_sum_to {dt} {shape} -> {target}", [("x", x), ("s", s)],
                       call("collapse_sum_to", ["%x", "%s"], shape=list(target)),
                       lambda x=x, t=target: collapse_ref(x, t), *tol)
    # the gradient shapes of bias adds: conv (N, C, H, W) -> (C, 1, 1), dense (B, T, C) -> (C,)
    for shape, target in [((4, 32, 14, 14), (32, 1, 1)), ((3, 50, 96), (96,)), ((2, 3), (2, 3))]:
        x = rand_array(rng, shape, "float32")
        yield Case(FAMILY, f"collapse_sum_like float32 {shape} -> {target}", [("x", x), ("like", np.zeros(target, "float32"))],
                   call("collapse_sum_like", ["%x", "%like"]), lambda x=x, t=target: collapse_ref(x, t))
    x = rand_array(rng, (2, 3), "float32")
    yield Case(FAMILY, "collapse_sum_like not broadcastable", [("x", x), ("like", np.zeros((2,), "float32"))],
               call("collapse_sum_like", ["%x", "%like"]), TYPE_ERROR)
    yield Case(FAMILY, "collapse_sum_like dtype mismatch", [("x", x), ("like", np.zeros((3,), "float64"))],
               call("collapse_sum_like", ["%x", "%like"]), TYPE_ERROR)


# ------------------------------------------------------------------ contrib_reverse_reshape

def reshape_dims(shape, ns):
    """spec/ops.md 6.1 (no -4), left to right."""
    out, used_in, used_out, src, infer = [], set(), set(), 0, -1
    for v in ns:
        if v > 0:
            out.append(v)
            src += 1
        elif v == 0:
            used_in.add(src)
            used_out.add(len(out))
            out.append(shape[src])
            src += 1
        elif v == -1:
            infer = len(out)
            out.append(1)
            src += 1
        elif v == -2:
            while src < len(shape):
                used_in.add(src)
                used_out.add(len(out))
                out.append(shape[src])
                src += 1
        elif v == -3:
            used_in.update({src, src + 1})
            used_out.add(len(out))
            out.append(shape[src] * shape[src + 1])
            src += 2
    if infer >= 0:
        num = int(np.prod([d for i, d in enumerate(shape) if i not in used_in]))
        den = int(np.prod([d for i, d in enumerate(out) if i not in used_out and i != infer]))
        out[infer] = num // den
    return out


def reverse_reshape_cases(rng):
    table = [((2, 3, 4), [4, 0, 2]), ((2, 3, 4), [2, 0, 0]), ((2, 3, 4), [0, -1]), ((2, 3, 4), [-1, 0]),
             ((2, 3, 4), [0, -3]), ((10, 5, 4), [-1, 0]), ((4, 5, 6), [-1, -2]), ((6, 1, 7), [0, -1])]
    for shape, ns in table:
        dt = ["float32", "int8", "float16", "int64"][len(ns) % 4]
        x = rand_array(rng, shape, dt)
        out = tuple(reversed(reshape_dims(list(reversed(shape)), list(reversed(ns)))))
        yield Case(FAMILY, f"contrib_reverse_reshape {shape} {ns}", [("x", x)],
                   call("contrib_reverse_reshape", ["%x"], newshape=ns), x.reshape(out))
    x = rand_array(rng, (2, 3, 4), "float32")
    yield Case(FAMILY, "contrib_reverse_reshape -4 rejected", [("x", x)],
               call("contrib_reverse_reshape", ["%x"], newshape=[-4, 1, 2, -2]), TYPE_ERROR)


# ------------------------------------------------------------------ losses

def xent_cases(rng, n):
    for k in range(n):
        dt = FLOATS[k % 3]
        shape = (int(rng.integers(1, 9)), int(rng.choice([1, 3, 10, 1001])))
        x = rand_array(rng, shape, dt, lo=0.01, hi=1)
        y = rand_array(rng, shape, dt, lo=0, hi=1)
        tol = {"float16": (2e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}[dt]
        for logits in (False, True):
            op = "nn.cross_entropy_with_logits" if logits else "nn.cross_entropy"
            def ref(x=x, y=y, logits=logits):
                a, b = x.astype(np.float64), y.astype(np.float64)
                return np.array(-((a if logits else np.log(a)) * b).sum() / x.shape[0], x.dtype)
            yield Case(FAMILY, f"{op} {dt} {shape}", [("x", x), ("y", y)], call(op, ["%x", "%y"]), ref, *tol)
    x = rand_array(rng, (3, 4), "float32", lo=0.1, hi=1)
    yield Case(FAMILY, "cross_entropy rank 1", [("x", x.reshape(-1)), ("y", x.reshape(-1))],
               call("nn.cross_entropy", ["%x", "%y"]), TYPE_ERROR)
    yield Case(FAMILY, "cross_entropy shapes differ", [("x", x), ("y", x.T.copy())],
               call("nn.cross_entropy", ["%x", "%y"]), TYPE_ERROR)


# ------------------------------------------------------------------ annotations

def annotation_cases(rng):
    for k, op in enumerate(["on_device", "device_copy", "annotation.stop_fusion", "annotation.checkpoint"]):
        dt = (FLOATS + INTS + ["bool"])[k * 3 % 12]
        x = rand_array(rng, rand_shape(rng), dt)
        yield Case(FAMILY, f"{op} {dt} {x.shape}", [("x", x)], call(op, ["%x"]), x.copy())
        y = rand_array(rng, (2,), "float32")
        yield Case(FAMILY, f"{op} tuple", [("x", x), ("y", y)], f"{op}((%x, %y))", (x.copy(), y.copy()))
    x = rand_array(rng, (3,), "float32")
    yield Case(FAMILY, "on_device constrain_result", [("x", x)],
               call("on_device", ["%x"], constrain_result=True, constrain_body=False), x.copy())


# ------------------------------------------------------------------ conv2d_backward_weight

def conv_out(n, k, s, d, lo, hi):
    dk = (k - 1) * d + 1
    return (n + lo + hi - dk) // s + 1


def conv_bw_ref(grad, data, ks, st, pad, dil, groups, odt):
    """grad (N, O, OH, OW), data (N, C, H, W) -> (O, C/groups, kh, kw)."""
    n_, c_, h_, w_ = data.shape
    o_, oh, ow = grad.shape[1], grad.shape[2], grad.shape[3]
    cg, og = c_ // groups, o_ // groups
    pt, pl, pb, pr = pad
    xp = np.pad(data.astype(np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    g64 = grad.astype(np.float64)
    dw = np.zeros((o_, cg, ks[0], ks[1]))
    for r in range(ks[0]):
        for s in range(ks[1]):
            patch = xp[:, :, r * dil[0]: r * dil[0] + st[0] * (oh - 1) + 1: st[0],
                       s * dil[1]: s * dil[1] + st[1] * (ow - 1) + 1: st[1]]
            for gi in range(groups):
                dw[gi * og:(gi + 1) * og, :, r, s] = np.einsum(
                    "noyx,ncyx->oc", g64[:, gi * og:(gi + 1) * og], patch[:, gi * cg:(gi + 1) * cg])
    return dw.astype(odt)


def conv_bw_cases(rng, n):
    table = [  # (N, C, H, W, O, k, stride, pad (4), dilation, groups)
        # TVM's test_op_grad_level2.py test_conv2d_backward_weight, its three cases
        (2, 4, 32, 32, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
        (2, 3, 32, 32, 16, (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), 1),
        (1, 16, 32, 32, 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 16),  # depthwise
        (1, 3, 8, 8, 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
        (2, 4, 9, 7, 6, (3, 2), (2, 1), (1, 0, 2, 1), (1, 1), 1),
        (2, 8, 10, 10, 8, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 2),
        (1, 6, 7, 7, 6, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 6),     # depthwise
        (2, 4, 6, 6, 8, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 4),     # depthwise, multiplier 2
        (3, 16, 5, 5, 32, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),   # 1x1: the data is cols
        (2, 16, 9, 9, 24, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),   # 1x1 stride 2
        (1, 32, 6, 6, 64, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 8),   # grouped (ResNeXt-like)
        (4, 3, 20, 20, 16, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1),  # a stem
        (1, 70, 14, 14, 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1), # several column blocks
        (2, 2, 1, 1, 3, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),     # 1x1 image, all padding but the centre
    ]
    for k in range(n):
        N, C, H, W, O, ks, st, pad, dil, groups = table[k % len(table)]
        dt = ["float32", "float64", "float16"][(k // len(table)) % 3]
        oh = conv_out(H, ks[0], st[0], dil[0], pad[0], pad[2])
        ow = conv_out(W, ks[1], st[1], dil[1], pad[1], pad[3])
        grad = rand_array(rng, (N, O, oh, ow), dt)
        data = rand_array(rng, (N, C, H, W), dt)
        attrs = dict(strides=list(st), padding=list(pad), dilation=list(dil), groups=groups, channels=O,
                     kernel_size=list(ks), kernel_layout="NCHW", out_layout="OIHW")
        if C == O == groups:
            attrs["channels"] = O
        tol = {"float16": (2e-2, 2e-2), "float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)}[dt]
        yield Case(FAMILY, f"conv2d_backward_weight {dt} data {(N, C, H, W)} grad {grad.shape} k{ks} s{st} p{pad} "
                   f"d{dil} g{groups}", [("g", grad), ("x", data)],
                   call("nn.conv2d_backward_weight", ["%g", "%x"], **attrs),
                   lambda g=grad, x=data, a=(ks, st, pad, dil, groups): conv_bw_ref(g, x, *a, g.dtype), *tol)
    # layouts: NHWC grad and data, HWIO result (converted by the kernel)
    grad = rand_array(rng, (2, 5, 5, 6), "float32")
    data = rand_array(rng, (2, 5, 5, 3), "float32")
    yield Case(FAMILY, "conv2d_backward_weight NHWC/NHWC -> HWIO", [("g", grad), ("x", data)],
               call("nn.conv2d_backward_weight", ["%g", "%x"], padding=[1, 1, 1, 1], channels=6, kernel_size=[3, 3],
                    data_layout="NHWC", kernel_layout="NHWC", out_layout="HWIO"),
               lambda: conv_bw_ref(grad.transpose(0, 3, 1, 2), data.transpose(0, 3, 1, 2), (3, 3), (1, 1),
                                   (1, 1, 1, 1), (1, 1), 1, np.float32).transpose(2, 3, 1, 0), 1e-4, 1e-4)
    g1, x1 = rand_array(rng, (1, 4, 5, 5), "float32"), rand_array(rng, (1, 3, 8, 8), "float32")
    yield Case(FAMILY, "conv2d_backward_weight grad of the wrong size", [("g", g1), ("x", x1)],
               call("nn.conv2d_backward_weight", ["%g", "%x"], kernel_size=[3, 3], kernel_layout="NCHW"), TYPE_ERROR)
    yield Case(FAMILY, "conv2d_backward_weight without kernel_size", [("g", g1), ("x", x1)],
               call("nn.conv2d_backward_weight", ["%g", "%x"]), TYPE_ERROR)


# ------------------------------------------------------------------ pooling gradients

LOWEST = {"float16": -65504.0, "float32": float(np.finfo(np.float32).min), "float64": float(np.finfo(np.float64).min)}


def pool_geom(h, k, s, d, lo, hi, ceil):
    dk = (k - 1) * d + 1
    return (h + lo + hi - dk + (s - 1 if ceil else 0)) // s + 1


def pool_grad_ref(dy, x, max_, ks, st, pad, dil, ceil, include_pad):
    """NCHW. Loops over taps with numpy over (n, c, y, x)."""
    n_, c_, h_, w_ = x.shape
    oh, ow = dy.shape[2], dy.shape[3]
    pt, pl, pb, pr = pad
    x64, g64 = x.astype(np.float64), dy.astype(np.float64)
    out = np.zeros(x.shape)
    ys, xs = np.arange(oh)[:, None], np.arange(ow)[None, :]
    taps = [(r, s) for r in range(ks[0]) for s in range(ks[1])]
    pos = [(ys * st[0] - pt + r * dil[0] + 0 * xs, xs * st[1] - pl + s * dil[1] + 0 * ys) for r, s in taps]
    inr = [(ih >= 0) & (ih < h_) & (iw >= 0) & (iw < w_) for ih, iw in pos]
    nn_, cc = np.arange(n_)[:, None, None, None], np.arange(c_)[None, :, None, None]
    if max_:
        low = LOWEST[x.dtype.name]
        best = np.full(dy.shape, low)
        win = np.full(dy.shape, -1)
        for t, ((ih, iw), m) in enumerate(zip(pos, inr)):
            v = np.where(m, x64[:, :, np.clip(ih, 0, h_ - 1), np.clip(iw, 0, w_ - 1)], low)
            upd = v > best
            best = np.where(upd, v, best)
            win = np.where(upd, t, win)
        for t, ((ih, iw), m) in enumerate(zip(pos, inr)):
            sel = (win == t) & m
            np.add.at(out, (np.broadcast_to(nn_, sel.shape)[sel], np.broadcast_to(cc, sel.shape)[sel],
                            np.broadcast_to(ih, sel.shape)[sel], np.broadcast_to(iw, sel.shape)[sel]), g64[sel])
    else:
        def count(o, k, s, d, lo, hi, n):
            p = o * s - lo + np.arange(k)[None, :] * d
            m = (p >= -lo) & (p < n + hi) if include_pad else (p >= 0) & (p < n)
            return m.sum(axis=1)
        div = np.maximum(count(np.arange(oh)[:, None], ks[0], st[0], dil[0], pt, pb, h_)[:, None] *
                         count(np.arange(ow)[:, None], ks[1], st[1], dil[1], pl, pr, w_)[None, :], 1)
        share = g64 / div
        for (ih, iw), m in zip(pos, inr):
            sel = np.broadcast_to(m, dy.shape)
            np.add.at(out, (np.broadcast_to(nn_, sel.shape)[sel], np.broadcast_to(cc, sel.shape)[sel],
                            np.broadcast_to(ih, sel.shape)[sel], np.broadcast_to(iw, sel.shape)[sel]), share[sel])
    return out.astype(x.dtype)


def pool_grad_cases(rng, n):
    table = [  # (N, C, H, W, pool, strides, pad (4), dilation, ceil)
        (2, 3, 8, 8, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False),
        (1, 2, 9, 7, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False),   # ResNet's max pool, overlapping
        (2, 2, 7, 9, (3, 2), (1, 2), (1, 0, 2, 1), (1, 1), True),
        (1, 3, 10, 10, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), False), # dilated
        (2, 4, 7, 7, (7, 7), (1, 1), (0, 0, 0, 0), (1, 1), False),   # global
        (1, 2, 6, 6, (2, 2), (3, 3), (0, 0, 0, 0), (1, 1), True),    # stride > window, ceil overhang
        (3, 5, 33, 17, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False), # several vector blocks per plane
    ]
    for k in range(n):
        N, C, H, W, ks, st, pad, dil, ceil = table[k % len(table)]
        dt = ["float32", "float64", "float16"][(k // len(table)) % 3]
        max_ = k % 2 == 0
        include_pad = not max_ and k % 4 == 1
        oh = pool_geom(H, ks[0], st[0], dil[0], pad[0], pad[2], ceil)
        ow = pool_geom(W, ks[1], st[1], dil[1], pad[1], pad[3], ceil)
        x = rand_array(rng, (N, C, H, W), dt)
        if k % 3 == 0:  # ties: a few values only
            x = (np.round(x) / 2).astype(dt)
        dy = rand_array(rng, (N, C, oh, ow), dt)
        op = "nn.max_pool2d_grad" if max_ else "nn.avg_pool2d_grad"
        attrs = dict(pool_size=list(ks), strides=list(st), padding=list(pad))
        if dil != (1, 1) or k % 5 == 0:
            attrs["dilation"] = list(dil) if dil != (1, 1) else []  # TVM-built calls hold dilation=[]
        if ceil:
            attrs["ceil_mode"] = True
        if include_pad:
            attrs["count_include_pad"] = True
        tol = {"float16": (1e-2, 1e-2)}.get(dt, (None, None))
        yield Case(FAMILY, f"{op} {dt} {(N, C, H, W)} {attrs}", [("dy", dy), ("x", x)], call(op, ["%dy", "%x"], **attrs),
                   lambda dy=dy, x=x, a=(max_, ks, st, pad, dil, ceil, include_pad): pool_grad_ref(dy, x, *a), *tol)
    # NHWC and split channels (NCHW4c): the same gradient in another layout
    x = rand_array(rng, (2, 6, 6, 8), "float32")
    dy = rand_array(rng, (2, 3, 3, 8), "float32")
    for op, mx in (("nn.max_pool2d_grad", True), ("nn.avg_pool2d_grad", False)):
        yield Case(FAMILY, f"{op} NHWC", [("dy", dy), ("x", x)],
                   call(op, ["%dy", "%x"], pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 0, 0], layout="NHWC"),
                   lambda dy=dy, x=x, mx=mx: pool_grad_ref(dy.transpose(0, 3, 1, 2), x.transpose(0, 3, 1, 2), mx,
                                                           (3, 3), (2, 2), (1, 1, 0, 0), (1, 1), False,
                                                           False).transpose(0, 2, 3, 1))
        x5 = x.transpose(0, 3, 1, 2).reshape(2, 2, 4, 6, 6).transpose(0, 1, 3, 4, 2).copy()
        dy5 = dy.transpose(0, 3, 1, 2).reshape(2, 2, 4, 3, 3).transpose(0, 1, 3, 4, 2).copy()
        yield Case(FAMILY, f"{op} NCHW4c", [("dy", dy5), ("x", x5)],
                   call(op, ["%dy", "%x"], pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 0, 0], layout="NCHW4c"),
                   lambda dy=dy, x=x, mx=mx: pool_grad_ref(dy.transpose(0, 3, 1, 2), x.transpose(0, 3, 1, 2), mx,
                                                           (3, 3), (2, 2), (1, 1, 0, 0), (1, 1), False,
                                                           False).reshape(2, 2, 4, 6, 6).transpose(0, 1, 3, 4, 2))
    x = rand_array(rng, (1, 1, 4, 4), "float32")
    yield Case(FAMILY, "max_pool2d_grad out_grad of the wrong shape", [("dy", rand_array(rng, (1, 1, 3, 3), "float32")),
                                                                      ("x", x)],
               call("nn.max_pool2d_grad", ["%dy", "%x"], pool_size=[2, 2], strides=[2, 2]), TYPE_ERROR)


# ------------------------------------------------------------------ scatters

def strided_set_ref(x, v, b, e, s):
    res = x.copy()
    sl = tuple(slice(b[i] if i < len(b) else None, e[i] if i < len(e) else None, s[i] if i < len(s) else None)
               for i in range(x.ndim))
    res[sl] = v
    return res


def combine(op, a, b):
    return {"update": b, "add": a + b, "mul": a * b, "mean": (a + b) / 2, "min": min(a, b), "max": max(a, b)}[op]


def scatter_nd_ref(x, ix, u, mode):
    out = x.astype(np.float64) if is_float(x.dtype) else x.astype(np.int64)
    m = ix.shape[0]
    ys = list(np.ndindex(ix.shape[1:]))
    for y in ys:
        tgt = tuple(int(ix[(k,) + y]) for k in range(m))
        sub = out[tgt]
        upd = u[y].astype(out.dtype)
        if mode == "update":
            out[tgt] = upd
        elif mode == "add":
            out[tgt] = sub + upd
        elif mode == "mul":
            out[tgt] = sub * upd
        elif mode == "min":
            out[tgt] = np.where(sub < upd, sub, upd)
        else:
            out[tgt] = np.where(sub > upd, sub, upd)
    if is_float(x.dtype):
        return out.astype(x.dtype)
    return np.vectorize(lambda v: wrap(int(v), x.dtype), otypes=[x.dtype])(out) if out.size else out.astype(x.dtype)


def scatter_el_ref(x, ix, u, axis, red):
    out = x.astype(np.float64).copy()
    n = x.shape[axis]
    for p in np.ndindex(ix.shape):
        t = int(ix[p])
        if t < 0:
            t += n
        q = list(p)
        q[axis] = t
        q = tuple(q)
        out[q] = combine(red, out[q], float(u[p]))
    return out.astype(x.dtype)


def scatter_cases(rng, n):
    table = [((3, 4, 16), [0, 0, 0], [4, -5, 4], [1, -1, 2], (3, 1, 2)),
             ((3, 4, 3), [1, 1, 0], [4, 4, 3], [2, 1, 1], (1, 3, 3)),
             ((3, 4, 3), [1, -1, 0], [4, -5, 3], [2, -1, 1], (1, 4, 3)),
             ((3, 4, 3), [1, 0, 0], [2, 2, 3], [1, 1, 2], (1, 2, 2)),
             ((3, 4, 3), [1, -1, 0], [2, -3, 3], [1, -1, 1], (1, 2, 3)),
             ((3, 4, 3), [1, 1, 0], [4, 4, 3], [1], (2, 3, 3)),
             ((3, 4, 3), [1, 1, 0], [4, 1000, 3], [1], (2, 3, 3)),
             ((3, 4, 3), [1, 1, 0], [4, 4], [1], (2, 3, 3)),
             ((3, 4, 3), [1, 1], [4, 4, 3], [1], (2, 3, 3)),
             ((6, 50), [1, 3], [6, 49], [2, 7], (7,)),          # v broadcast
             ((5,), [-1], [-6], [-2], (3,))]
    for k, (shape, b, e, s, vs) in enumerate(table):
        dt = ["float32", "int8", "float16", "float64"][k % 4]
        x, v = rand_array(rng, shape, dt), rand_array(rng, vs, dt)
        ins = [("x", x), ("v", v), ("b", np.array(b, np.int32)), ("e", np.array(e, np.int32)), ("s", np.array(s, np.int32))]
        yield Case(FAMILY, f"strided_set {dt} {shape} {b} {e} {s}", ins, "strided_set(%x, %v, %b, %e, %s)",
                   lambda x=x, v=v, b=b, e=e, s=s: strided_set_ref(x, v, b, e, s))
    for k in range(n):
        mode = ["update", "add", "mul", "min", "max"][k % 5]
        dt = ["float64", "float32", "int64", "int32"][(k // 5) % 4]
        shape = [(2, 7, 3), (2, 1560), (2, 2, 2, 2), (4, 5)][k % 4]
        m = [2, 1, 2, 2][k % 4]
        ny = int(rng.integers(1, 9))
        ix = np.stack([rng.integers(0, shape[j], size=ny) for j in range(m)]).astype(["int64", "uint8", "int32"][k % 3])
        u = rand_array(rng, (ny,) + shape[m:], dt)
        x = rand_array(rng, shape, dt)
        if mode == "update":  # duplicates: the last write wins, as in order
            pass
        yield Case(FAMILY, f"scatter_nd {mode} {dt} {shape} idx {ix.shape}", [("x", x), ("i", ix), ("u", u)],
                   call("scatter_nd", ["%x", "%i", "%u"], mode=mode),
                   lambda x=x, ix=ix, u=u, mode=mode: scatter_nd_ref(x, ix, u, mode))
    for k in range(n):
        red = ["update", "add", "mul", "mean", "min", "max"][k % 6]
        dt = ["float64", "float32"][(k // 6) % 2]
        shape = [(4, 5, 6), (7, 3), (30,)][k % 3]
        axis = int(rng.integers(-len(shape), len(shape)))
        ishape = tuple(int(rng.integers(1, d + 1)) if i != axis % len(shape) else int(rng.integers(1, 9))
                       for i, d in enumerate(shape))
        ix = rng.integers(-shape[axis], shape[axis], size=ishape).astype("int64")
        x, u = rand_array(rng, shape, dt), rand_array(rng, ishape, dt)
        yield Case(FAMILY, f"scatter_elements {red} {dt} {shape} axis={axis} idx {ishape}",
                   [("x", x), ("i", ix), ("u", u)],
                   call("scatter_elements", ["%x", "%i", "%u"], axis=axis, reduction=red),
                   lambda x=x, ix=ix, u=u, axis=axis, red=red: scatter_el_ref(x, ix, u, axis % x.ndim, red))
    x = rand_array(rng, (2, 3), "float32")
    yield Case(FAMILY, "scatter_nd index out of range", [("x", x), ("i", np.array([[2]], np.int32)),
                                                         ("u", rand_array(rng, (1, 3), "float32"))],
               call("scatter_nd", ["%x", "%i", "%u"]), RUN_ERROR)
    yield Case(FAMILY, "scatter_elements index out of range", [("x", x), ("i", np.array([[5]], np.int64)),
                                                               ("u", rand_array(rng, (1, 1), "float32"))],
               call("scatter_elements", ["%x", "%i", "%u"], axis=1), RUN_ERROR)


def cases(rng, thorough):
    m = 4 if thorough else 1
    yield from collapse_cases(rng, 40 * m)
    yield from reverse_reshape_cases(rng)
    yield from xent_cases(rng, 9 * m)
    yield from annotation_cases(rng)
    yield from conv_bw_cases(rng, 33 * m)
    yield from pool_grad_cases(rng, 28 * m)
    yield from scatter_cases(rng, 30 * m)
