"""NN family (spec/ops.md 7.4, 9-12): softmax / log_softmax / fast_softmax, bias_add, batch_norm,
layer_norm, instance_norm, group_norm, l2_normalize, lrn, pad (constant / edge / reflect),
mirror_pad, max / avg pooling in 1-3 D (padding forms, ceil_mode, count_include_pad, dilation,
channels-last layouts), global and adaptive pooling, nn.upsampling and image.resize2d."""
import math

import numpy as np

from diffcore import (FLOATS, INTS, TYPE_ERROR, Case, call, rand_array, rand_shape, is_float)

FAMILY = "nn"

NORM_TOL = {"float16": (1e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-9, 1e-10)}


def fdt(k):
    return FLOATS[k % 3]


# ------------------------------------------------------------------ softmax, bias_add, norms

def softmax_cases(rng, n):
    for k in range(n):
        dt = fdt(k)
        shape = rand_shape(rng, rank=int(rng.integers(1, 5)), max_dim=6)
        nd = len(shape)
        axis = int(rng.integers(-nd, nd))
        op = ["nn.softmax", "nn.log_softmax", "nn.fast_softmax"][k % 3]
        x = rand_array(rng, shape, dt)
        if k % 7 == 0:
            x = (x * 30).astype(dt)  # large magnitudes: needs the max shift
        attrs = {"axis": axis} if axis != -1 or k % 2 else {}
        def ref(x=x, axis=axis, op=op):
            v = x.astype(np.float64)
            m = v.max(axis=axis, keepdims=True)
            e = np.exp(v - m)
            s = e.sum(axis=axis, keepdims=True)
            r = (v - m - np.log(s)) if op == "nn.log_softmax" else e / s
            return r.astype(x.dtype)
        rt, at = NORM_TOL[dt]
        yield Case(FAMILY, f"{op} {dt} {shape} {attrs}", [("x", x)], call(op, ["%x"], **attrs), ref, rt, at)
    x = rand_array(rng, (2, 3), "float32")
    yield Case(FAMILY, "softmax axis out of range", [("x", x)], call("nn.softmax", ["%x"], axis=2), TYPE_ERROR)


def chan_shape(nd, axis, c):
    s = [1] * nd
    s[axis] = c
    return s


def bias_add_cases(rng, n):
    for k in range(n):
        dt = [d for d in FLOATS + INTS][k % 11]
        shape = rand_shape(rng, rank=int(rng.integers(1, 5)))
        nd = len(shape)
        axis = int(rng.integers(-nd, nd))
        if nd > 1 and k % 3 == 0:
            axis = 1
        x = rand_array(rng, shape, dt)
        b = rand_array(rng, (shape[axis],), dt)
        attrs = {} if axis == 1 else {"axis": axis}
        yield Case(FAMILY, f"bias_add {dt} {shape} {attrs}", [("x", x), ("b", b)], call("nn.bias_add", ["%x", "%b"], **attrs),
                   lambda x=x, b=b, axis=axis: (x + b.reshape(chan_shape(x.ndim, axis, -1))).astype(x.dtype))


def norm_cases(rng, n):
    for k in range(n):
        dt = fdt(k)
        kind = k % 5
        rt, at = NORM_TOL[dt]
        eps = [1e-5, 1e-3, 0.1][k % 3]
        center = k % 4 != 1
        scale = k % 4 != 2
        flags = {}
        if eps != 1e-5:
            flags["epsilon"] = eps
        if not center:
            flags["center"] = False
        if not scale:
            flags["scale"] = False
        if kind == 0:
            shape = rand_shape(rng, rank=int(rng.integers(1, 5)))
            nd = len(shape)
            axis = int(rng.integers(-nd, nd)) if k % 2 else min(1, nd - 1)
            c = shape[axis]
            x = rand_array(rng, shape, dt)
            g, b, mu = (rand_array(rng, (c,), dt) for _ in range(3))
            var = rand_array(rng, (c,), dt, lo=0.1, hi=3)
            attrs = dict({} if axis == 1 else {"axis": axis}, **flags)
            def ref(x=x, g=g, b=b, mu=mu, var=var, axis=axis, eps=eps, center=center, scale=scale):
                cs = chan_shape(x.ndim, axis, -1)
                f = lambda v: v.astype(np.float64).reshape(cs)
                y = (x.astype(np.float64) - f(mu)) / np.sqrt(f(var) + eps)
                if scale:
                    y = y * f(g)
                if center:
                    y = y + f(b)
                return (y.astype(x.dtype), mu.copy(), var.copy())
            yield Case(FAMILY, f"batch_norm {dt} {shape} {attrs}",
                       [("x", x), ("g", g), ("b", b), ("m", mu), ("v", var)],
                       call("nn.batch_norm", ["%x", "%g", "%b", "%m", "%v"], **attrs), ref, rt, at)
            continue
        if kind == 1:
            op = "nn.layer_norm"
            shape = rand_shape(rng, rank=int(rng.integers(1, 5)), max_dim=6)
            nd = len(shape)
            axis = int(rng.integers(-nd, nd))
            stat_axes = (axis % nd,)
            attrs = dict({} if axis == -1 else {"axis": axis}, **flags)
        elif kind == 2:
            op = "nn.instance_norm"
            shape = rand_shape(rng, rank=int(rng.integers(3, 5)), max_dim=5)
            shape = (shape[0], max(shape[1], 2)) + shape[2:]
            nd = len(shape)
            axis = 1 if k % 3 else nd - 1
            stat_axes = tuple(i for i in range(1, nd) if i != axis)
            attrs = dict({} if axis == 1 else {"axis": axis}, **flags)
        else:
            op = "nn.group_norm"
            groups = int(rng.choice([1, 2, 3]))
            shape = rand_shape(rng, rank=int(rng.integers(2, 5)), max_dim=4)
            shape = (shape[0], groups * int(rng.integers(1, 3))) + shape[2:]
            nd = len(shape)
            axis = 1
            attrs = dict({"num_groups": groups}, **flags)
        x = rand_array(rng, shape, dt)
        c = shape[axis]
        g, b = rand_array(rng, (c,), dt), rand_array(rng, (c,), dt)
        def ref(x=x, g=g, b=b, op=op, axis=axis, eps=eps, center=center, scale=scale,
                stat=stat_axes if op != "nn.group_norm" else None, groups=attrs.get("num_groups")):
            v = x.astype(np.float64)
            if op == "nn.group_norm":
                gs = (v.shape[0], groups, -1)
                vv = v.reshape(gs)
                m = vv.mean(axis=2, keepdims=True)
                var = vv.var(axis=2, keepdims=True)
                y = ((vv - m) / np.sqrt(var + eps)).reshape(v.shape)
            else:
                m = v.mean(axis=stat, keepdims=True)
                var = v.var(axis=stat, keepdims=True)
                y = (v - m) / np.sqrt(var + eps)
            cs = chan_shape(x.ndim, axis, -1)
            if scale:
                y = y * g.astype(np.float64).reshape(cs)
            if center:
                y = y + b.astype(np.float64).reshape(cs)
            return y.astype(x.dtype)
        yield Case(FAMILY, f"{op} {dt} {shape} {attrs}", [("x", x), ("g", g), ("b", b)],
                   call(op, ["%x", "%g", "%b"], **attrs), ref, rt, at)
    for k in range(max(4, n // 4)):
        dt = fdt(k)
        shape = rand_shape(rng, rank=int(rng.integers(1, 5)))
        nd = len(shape)
        axes = sorted(int(a) for a in rng.choice(nd, size=int(rng.integers(1, nd + 1)), replace=False))
        eps = [1e-12, 0.5, 10.0][k % 3]
        x = rand_array(rng, shape, dt)
        rt, at = NORM_TOL[dt]
        yield Case(FAMILY, f"l2_normalize {dt} {shape} axis={axes} eps={eps}", [("x", x)],
                   call("nn.l2_normalize", ["%x"], eps=eps, axis=axes),
                   lambda x=x, axes=axes, eps=eps: (x.astype(np.float64) / np.sqrt(np.maximum(
                       np.sum(x.astype(np.float64) ** 2, axis=tuple(axes), keepdims=True), eps))).astype(x.dtype),
                   rt, at)
    for k in range(max(4, n // 4)):
        dt = fdt(k)
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 8)), int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        size = [5, 3, 1, 4][k % 4]
        axis = 1 if k % 3 else 3
        bias, alpha, beta = [(2.0, 1e-4, 0.75), (1.0, 0.5, 0.5), (0.5, 2.0, 1.2)][k % 3]
        attrs = {"size": size, "axis": axis, "bias": bias, "alpha": alpha, "beta": beta}
        x = rand_array(rng, shape, dt)
        def ref(x=x, size=size, axis=axis, bias=bias, alpha=alpha, beta=beta):
            v = x.astype(np.float64)
            sq = np.moveaxis(v * v, axis, 0)
            c = sq.shape[0]
            acc = np.zeros_like(sq)
            for i in range(c):
                for r in range(size):
                    j = i - size // 2 + r
                    if 0 <= j < c:
                        acc[i] += sq[j]
            acc = np.moveaxis(acc, 0, axis)
            return (v / (bias + alpha / size * acc) ** beta).astype(x.dtype)
        rt, at = NORM_TOL[dt]
        yield Case(FAMILY, f"lrn {dt} {shape} {attrs}", [("x", x)], call("nn.lrn", ["%x"], **attrs), ref, rt, at)


# ------------------------------------------------------------------ padding

def pad_cases(rng, n):
    for k in range(n):
        dt = (FLOATS + INTS)[k % 11]
        shape = rand_shape(rng, rank=int(rng.integers(1, 5)), max_dim=4)
        mode = ["constant", "edge", "reflect"][k % 3]
        widths = []
        for d in shape:
            hi = 3 if mode != "reflect" else d  # numpy reflect needs width < extent... spec: mirrors
            widths.append([int(rng.integers(0, hi)), int(rng.integers(0, hi))])
        if mode == "reflect":
            widths = [[min(a, d - 1), min(b, d - 1)] for (a, b), d in zip(widths, shape)]
        x = rand_array(rng, shape, dt)
        v = np.array(rand_array(rng, (), dt, lo=-5, hi=5) if not is_float(dt) else 1.5, dt)
        attrs = {"pad_width": widths}
        if mode != "constant":
            attrs["pad_mode"] = mode
        def ref(x=x, v=v, w=widths, mode=mode):
            if mode == "constant":
                return np.pad(x, w, mode="constant", constant_values=v)
            return np.pad(x, w, mode=mode)
        yield Case(FAMILY, f"pad {mode} {dt} {shape} {widths}", [("x", x), ("v", v)],
                   call("nn.pad", ["%x", "%v"], **attrs), ref)
    for k in range(max(4, n // 3)):
        dt = FLOATS[k % 3]
        shape = rand_shape(rng, rank=int(rng.integers(1, 5)), max_dim=4)
        mode = ["SYMMETRIC", "REFLECT"][k % 2]
        widths = [[int(rng.integers(0, d + (1 if mode == "SYMMETRIC" else 0))),
                   int(rng.integers(0, d + (1 if mode == "SYMMETRIC" else 0)))] for d in shape]
        x = rand_array(rng, shape, dt)
        attrs = {"pad_width": widths} if mode == "SYMMETRIC" else {"mode": mode, "pad_width": widths}
        yield Case(FAMILY, f"mirror_pad {mode} {dt} {shape} {widths}", [("x", x)],
                   call("nn.mirror_pad", ["%x"], **attrs),
                   lambda x=x, w=widths, m=mode: np.pad(x, w, mode=m.lower()))
    x = rand_array(rng, (2, 2), "float32")
    yield Case(FAMILY, "pad wrong width count", [("x", x), ("v", np.array(0, "float32"))],
               call("nn.pad", ["%x", "%v"], pad_width=[[1, 1]]), TYPE_ERROR)


# ------------------------------------------------------------------ pooling

def pool_ref(x, kind, k, s, d, pb, pa, ceil, cip):
    """x is (N, C, *S) channels-first."""
    sp = x.shape[2:]
    nd = len(sp)
    out = []
    for i in range(nd):
        num = sp[i] + pb[i] + pa[i] - ((k[i] - 1) * d[i] + 1) + (s[i] - 1 if ceil else 0)
        out.append(num // s[i] + 1)
    dt = x.dtype
    res = np.empty(x.shape[:2] + tuple(out), dt)
    lowest = np.finfo(dt).min if is_float(dt) else np.iinfo(dt).min
    for o in np.ndindex(*out):
        taps = [[o[i] * s[i] - pb[i] + r * d[i] for r in range(k[i])] for i in range(nd)]
        inr = [[t for t in taps[i] if 0 <= t < sp[i]] for i in range(nd)]
        sl = (slice(None), slice(None)) + tuple(np.array(v, dtype=np.int64) for v in inr)
        if any(len(v) == 0 for v in inr):
            vals = np.zeros(x.shape[:2] + (0,), dt)
        else:
            vals = x[(slice(None), slice(None)) + np.ix_(*inr)].reshape(x.shape[:2] + (-1,))
        if kind == "max":
            full = all(len(inr[i]) == k[i] for i in range(nd))
            m = vals.max(axis=2, initial=lowest) if vals.shape[2] else np.full(x.shape[:2], lowest, dt)
            if not full:
                m = np.maximum(m, lowest)
            res[(slice(None), slice(None)) + o] = m
        else:
            if cip:
                cnt = 1
                for i in range(nd):
                    cnt *= sum(1 for t in taps[i] if -pb[i] <= t < sp[i] + pa[i])
            else:
                cnt = 1
                for i in range(nd):
                    cnt *= len(inr[i])
            cnt = max(cnt, 1)
            if is_float(dt):
                v = vals.astype(np.float64).sum(axis=2) / cnt
                res[(slice(None), slice(None)) + o] = v.astype(dt)
            else:
                # TVM sums in the data dtype (topi pool: te.sum over dt), so the sum wraps
                ssum = vals.astype(np.int64).sum(axis=2).astype(dt).astype(np.int64)
                q = np.abs(ssum) // cnt
                res[(slice(None), slice(None)) + o] = np.where(ssum < 0, -q, q).astype(dt)
        del sl
    return res


LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def to_last(x):
    return np.ascontiguousarray(np.moveaxis(x, 1, -1))


def pool_cases(rng, n):
    for k in range(n):
        nd = [2, 2, 1, 3][k % 4]
        dt = (FLOATS + ["int32", "int8", "uint8"])[k % 6]
        kind = "max" if (k // 4 + k) % 2 == 0 else "avg"
        ks = [int(rng.integers(1, 4)) for _ in range(nd)]
        st = [int(rng.integers(1, 3)) for _ in range(nd)]
        dl = [int(rng.choice([1, 1, 2])) for _ in range(nd)]
        sp = [int(rng.integers(max(1, (ks[i] - 1) * dl[i] + 1), 7)) for i in range(nd)]
        pb = [int(rng.integers(0, ks[i])) for i in range(nd)]
        pa = [int(rng.integers(0, ks[i])) for i in range(nd)]
        form = k % 3
        if form == 0:
            pb = pa = [pb[0]] * nd
            padding = [pb[0]]
        elif form == 1:
            pa = list(pb)
            padding = list(pb)
        else:
            padding = pb + pa
        ceil = bool(rng.random() < 0.4)
        cip = bool(kind == "avg" and rng.random() < 0.5)
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) + tuple(sp)
        lo, hi = (-20, 20) if not is_float(dt) else (None, None)
        x = rand_array(rng, shape, dt, lo=lo if dt != "uint8" else 0, hi=hi)
        op = f"nn.{kind}_pool{nd}d"
        attrs = {"pool_size": ks}
        if any(v != 1 for v in st):
            attrs["strides"] = st
        if any(v != 1 for v in dl):
            attrs["dilation"] = dl
        if any(padding):
            attrs["padding"] = padding
        last = k % 5 == 4
        if last:
            attrs["layout"] = LAYOUTS[nd][1]
        if ceil:
            attrs["ceil_mode"] = True
        if cip:
            attrs["count_include_pad"] = True
        def ref(x=x, kind=kind, ks=ks, st=st, dl=dl, pb=pb, pa=pa, ceil=ceil, cip=cip, last=last):
            r = pool_ref(x, kind, ks, st, dl, pb, pa, ceil, cip)
            return to_last(r) if last else r
        xin = to_last(x) if last else x
        yield Case(FAMILY, f"{op} {dt} {xin.shape} {attrs}", [("x", xin)], call(op, ["%x"], **attrs), ref,
                   *NORM_TOL.get(dt, (None, None)))
    for k in range(max(6, n // 3)):
        nd = [2, 1, 3][k % 3]
        dt = (FLOATS + ["int32"])[k % 4]
        kind = ["avg", "max"][k % 2]
        sp = tuple(int(rng.integers(1, 7)) for _ in range(nd))
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) + sp
        x = rand_array(rng, shape, dt)
        last = k % 4 == 3
        xin = to_last(x) if last else x
        lattr = {"layout": LAYOUTS[nd][1]} if last else {}
        axes = tuple(range(2, 2 + nd))
        def gref(x=x, kind=kind, last=last, axes=axes):
            if kind == "max":
                r = x.max(axis=axes, keepdims=True)
            elif is_float(x.dtype):
                r = x.astype(np.float64).mean(axis=axes, keepdims=True).astype(x.dtype)
            else:
                s = x.astype(np.int64).sum(axis=axes, keepdims=True)
                cnt = int(np.prod(x.shape[2:]))
                r = (np.sign(s) * (np.abs(s) // cnt)).astype(x.dtype)
            return to_last(r) if last else r
        yield Case(FAMILY, f"global_{kind}_pool{nd}d {dt} {xin.shape} {lattr}", [("x", xin)],
                   call(f"nn.global_{kind}_pool{nd}d", ["%x"], **lattr), gref, *NORM_TOL.get(dt, (None, None)))
        osz = [int(rng.integers(1, 5)) for _ in range(nd)]
        form = k % 3
        attrs = dict(lattr)
        if form == 0:
            attrs["output_size"] = osz
        elif form == 1:
            osz = [osz[0]] * nd
            attrs["output_size"] = [osz[0]]
        else:
            osz = list(sp)
        def aref(x=x, kind=kind, last=last, osz=osz):
            sp = x.shape[2:]
            out = np.empty(x.shape[:2] + tuple(osz), x.dtype)
            for o in np.ndindex(*osz):
                sl = tuple(slice(o[i] * sp[i] // osz[i], -(-((o[i] + 1) * sp[i]) // osz[i])) for i in range(len(sp)))
                v = x[(slice(None), slice(None)) + sl].reshape(x.shape[:2] + (-1,))
                if kind == "max":
                    r = v.max(axis=2)
                elif is_float(x.dtype):
                    r = v.astype(np.float64).mean(axis=2).astype(x.dtype)
                else:
                    s = v.astype(np.int64).sum(axis=2)
                    r = (np.sign(s) * (np.abs(s) // v.shape[2])).astype(x.dtype)
                out[(slice(None), slice(None)) + o] = r
            return to_last(out) if last else out
        yield Case(FAMILY, f"adaptive_{kind}_pool{nd}d {dt} {xin.shape} {attrs}", [("x", xin)],
                   call(f"nn.adaptive_{kind}_pool{nd}d", ["%x"], **attrs), aref, *NORM_TOL.get(dt, (None, None)))


# ------------------------------------------------------------------ resize, upsampling

def resize_coord(o, insz, outsz, mode, roi=None):
    scale = np.float32(insz) / np.float32(outsz)
    o = np.float32(o)
    if mode == "half_pixel":
        return (o + np.float32(0.5)) * scale - np.float32(0.5)
    if mode == "align_corners":
        return o * np.float32(insz - 1) / np.float32(outsz - 1) if outsz > 1 else np.float32(0)
    if mode == "asymmetric":
        return o * scale
    if mode == "pytorch_half_pixel":
        return (o + np.float32(0.5)) * scale - np.float32(0.5) if outsz > 1 else np.float32(0)
    if mode == "tf_half_pixel_for_nn":
        return (o + np.float32(0.5)) * scale
    raise KeyError(mode)


def nearest_index(v, rounding, mode):
    if rounding == "":
        rounding = "round" if mode == "align_corners" else "floor"
    v = float(v)
    if rounding == "round":
        r = math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)
    elif rounding == "round_prefer_floor":
        r = math.ceil(v - 0.5)
    elif rounding == "round_prefer_ceil":
        r = math.floor(v + 0.5)
    elif rounding == "floor":
        r = math.floor(v + 1e-5)
    else:
        r = math.ceil(v - 1e-5)
    return int(r)


def cubic_w(t, a):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    if t < 2:
        return ((t - 5) * t + 8) * t * a - 4 * a
    return 0.0


def resize_ref(x, size, method, mode, rounding, alpha=-0.5, exclude=0):
    """x NCHW; per spec 12.1 with clamped taps."""
    n, c, h, w = x.shape
    oh, ow = size
    out = np.empty((n, c, oh, ow), np.float64)
    v = x.astype(np.float64)
    def axis_taps(o, insz, outsz):
        cf = resize_coord(o, insz, outsz, mode)
        if method == "nearest_neighbor":
            i = min(max(nearest_index(cf, rounding, mode), 0), insz - 1)
            return [(i, 1.0)]
        f = math.floor(float(cf))
        t = float(cf) - f
        if method == "linear":
            return [(min(max(f, 0), insz - 1), 1 - t), (min(max(f + 1, 0), insz - 1), t)]
        taps = [(f + j, cubic_w(t - j, alpha)) for j in (-1, 0, 1, 2)]
        if exclude:
            taps = [(i, wt) for i, wt in taps if 0 <= i < insz]
            s = sum(wt for _, wt in taps)
            taps = [(i, wt / s) for i, wt in taps]
        return [(min(max(i, 0), insz - 1), wt) for i, wt in taps]
    ty = [axis_taps(y, h, oh) for y in range(oh)]
    tx = [axis_taps(xx, w, ow) for xx in range(ow)]
    for y in range(oh):
        for xx in range(ow):
            acc = 0
            for iy, wy in ty[y]:
                for ix, wx in tx[xx]:
                    acc = acc + wy * wx * v[:, :, iy, ix]
            out[:, :, y, xx] = acc
    return out


def resize_cases(rng, n):
    modes = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"]
    for k in range(n):
        dt = ["float32", "float32", "float64", "float16"][k % 4]
        method = ["nearest_neighbor", "linear", "cubic"][k % 3]
        mode = modes[(k // 3) % len(modes)]
        if method != "nearest_neighbor" and mode == "tf_half_pixel_for_nn":
            mode = "half_pixel"
        rounding = ["round", "", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"][k % 6] \
            if method == "nearest_neighbor" else "round"
        h, w = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        oh, ow = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        x = rand_array(rng, (1, int(rng.integers(1, 3)), h, w), dt)
        last = k % 5 == 4
        excl = int(method == "cubic" and k % 2)
        attrs = {"size": [oh, ow]}
        if last:
            attrs["layout"] = "NHWC"
        if method != "linear":
            attrs["method"] = method
        if mode != "half_pixel":
            attrs["coordinate_transformation_mode"] = mode
        if rounding != "round":
            attrs["rounding_method"] = rounding
        if excl:
            attrs["cubic_exclude"] = 1
        def ref(x=x, size=(oh, ow), method=method, mode=mode, rounding=rounding, last=last, excl=excl):
            r = resize_ref(x, size, method, mode, rounding, exclude=excl).astype(x.dtype)
            return to_last(r) if last else r
        xin = to_last(x) if last else x
        rt, at = {"float16": (1e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-6)}[dt]
        yield Case(FAMILY, f"resize2d {dt} {xin.shape} {attrs}", [("x", xin)], call("image.resize2d", ["%x"], **attrs),
                   ref, rt, at)
    for k in range(max(4, n // 2)):
        dt = ["float32", "float64"][k % 2]
        sh, sw = [(2.0, 2.0), (3.0, 1.0), (1.5, 2.5), (0.5, 2.0)][k % 4]
        method = ["nearest_neighbor", "bilinear", "bicubic"][k % 3]
        ac = bool(k % 2) and method != "nearest_neighbor"
        h, w = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        x = rand_array(rng, (1, 2, h, w), dt)
        oh, ow = int(np.round(h * sh)), int(np.round(w * sw))  # numpy round = half to even
        attrs = {"scale_h": sh, "scale_w": sw}
        if method != "nearest_neighbor":
            attrs["method"] = method
        if ac:
            attrs["align_corners"] = True
        m = method.replace("bi", "")
        mode = "align_corners" if ac else "asymmetric"
        yield Case(FAMILY, f"upsampling {dt} {x.shape} {attrs}", [("x", x)], call("nn.upsampling", ["%x"], **attrs),
                   lambda x=x, s=(oh, ow), m=m, mode=mode: resize_ref(x, s, m, mode, "").astype(x.dtype), 1e-4, 1e-5)


def cases(rng, thorough):
    m = 4 if thorough else 1
    yield from softmax_cases(rng, 30 * m)
    yield from bias_add_cases(rng, 20 * m)
    yield from norm_cases(rng, 40 * m)
    yield from pad_cases(rng, 30 * m)
    yield from pool_cases(rng, 80 * m)
    yield from resize_cases(rng, 40 * m)
