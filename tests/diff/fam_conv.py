"""Convolution / dense family (spec/ops.md 7, 8): nn.conv1d/2d/3d (groups, depthwise, dilation,
strides, 1/2/4 (1-D: 1/2, 3-D: 1/3/6) padding forms, channels-last data and kernel layouts,
out_dtype incl. int8 -> int32), nn.conv2d_transpose (output_padding, groups, dilation),
nn.dense, nn.matmul (transposes), nn.batch_matmul (batch broadcast, transposes).
The kernels of this family belong to other helpers: failures here are reported, not fixed."""
import numpy as np

from diffcore import TYPE_ERROR, Case, call, rand_array, is_float

FAMILY = "conv"

EPS = {"float16": 1e-3, "float32": 2e-6, "float64": 1e-14}


def acc_dtype(dt):
    return np.float64 if is_float(dt) else np.int64


def finish(r, odt):
    """Float accumulations are rounded to odt; integer ones wrap to odt."""
    return r.astype(odt)


def tol(absref, odt):
    if not is_float(odt):
        return None, None
    e = EPS[np.dtype(odt).name]
    return 4 * e, 8 * e * float(np.max(absref, initial=0.0)) + e


def conv_ref(x, w, strides, pb, pa, dil, groups, odt):
    """x (N, C, *S), w (O, C/G, *K), canonical layouts."""
    nd = x.ndim - 2
    ad = acc_dtype(odt)
    xp = np.pad(x.astype(odt).astype(ad), [(0, 0), (0, 0)] + [(pb[i], pa[i]) for i in range(nd)])
    wv = w.astype(odt).astype(ad)
    O, Cg = w.shape[0], w.shape[1]
    K = w.shape[2:]
    osz = [(xp.shape[2 + i] - ((K[i] - 1) * dil[i] + 1)) // strides[i] + 1 for i in range(nd)]
    out = np.zeros((x.shape[0], O) + tuple(osz), ad)
    Og = O // groups
    for r in np.ndindex(*K):
        sl = tuple(slice(r[i] * dil[i], r[i] * dil[i] + strides[i] * (osz[i] - 1) + 1, strides[i]) for i in range(nd))
        xs = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            part = np.einsum("nc...,oc->no...", xs[:, g * Cg:(g + 1) * Cg], wv[g * Og:(g + 1) * Og, :][(Ellipsis,) + r])
            out[:, g * Og:(g + 1) * Og] += part
    return out


def perm_of(src, dst):
    return [src.index(c) for c in dst]


CONV_LAYOUTS = {
    1: [("NCW", "OIW"), ("NWC", "WIO")],
    2: [("NCHW", "OIHW"), ("NHWC", "HWIO"), ("NHWC", "OHWI"), ("NCHW", "HWIO")],
    3: [("NCDHW", "OIDHW"), ("NDHWC", "DHWIO")],
}
CANON_D = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
CANON_K = {1: "OIW", 2: "OIHW", 3: "OIDHW"}


def conv_cases(rng, n):
    for k in range(n):
        nd = [2, 2, 1, 3, 2][k % 5]
        dt, odt = [("float32", "float32"), ("float64", "float64"), ("float16", "float16"),
                   ("int8", "int32"), ("int32", "int32"), ("float32", "float64")][k % 6]
        groups = int(rng.choice([1, 1, 2, 3]))
        depthwise = k % 7 == 3
        cg = int(rng.integers(1, 4))
        C = groups * cg
        og = int(rng.integers(1, 4))
        if depthwise:
            groups, cg = C, 1
            og = int(rng.choice([1, 2]))
        O = groups * og
        K = [int(rng.integers(1, 4)) for _ in range(nd)]
        dil = [int(rng.choice([1, 1, 2])) for _ in range(nd)]
        st = [int(rng.choice([1, 1, 2, 3])) for _ in range(nd)]
        pb = [int(rng.integers(0, 3)) for _ in range(nd)]
        pa = [int(rng.integers(0, 3)) for _ in range(nd)]
        form = k % 3
        if form == 0:
            pa = pb = [pb[0]] * nd
            padding = [pb[0]]
        elif form == 1 and nd > 1:
            pa = list(pb)
            padding = list(pb)
        else:
            padding = pb + pa
        S = [int(rng.integers(max(1, (K[i] - 1) * dil[i] + 1 - pb[i] - pa[i]), 8)) for i in range(nd)]
        N = int(rng.integers(1, 3))
        lo, hi = (-5, 6) if not is_float(dt) else (None, None)
        x = rand_array(rng, (N, C) + tuple(S), dt, lo=lo, hi=hi)
        w = rand_array(rng, (O, cg) + tuple(K), dt, lo=lo, hi=hi)
        dl, kl = CONV_LAYOUTS[nd][(k // 5) % len(CONV_LAYOUTS[nd])]
        xin = np.ascontiguousarray(np.transpose(x, perm_of(CANON_D[nd], dl)))
        win = np.ascontiguousarray(np.transpose(w, perm_of(CANON_K[nd], kl)))
        attrs = {}
        if any(s != 1 for s in st):
            attrs["strides"] = st
        if any(padding):
            attrs["padding"] = padding
        if any(d != 1 for d in dil):
            attrs["dilation"] = dil
        if groups != 1:
            attrs["groups"] = groups
        if k % 4 == 1:
            attrs["channels"] = O
            attrs["kernel_size"] = K
        if dl != CANON_D[nd]:
            attrs["data_layout"] = dl
        if kl != CANON_K[nd]:
            attrs["kernel_layout"] = kl
        if odt != dt:
            attrs["out_dtype"] = odt
        op = f"nn.conv{nd}d"
        r = conv_ref(x, w, st, pb, pa, dil, groups, odt)
        ra = conv_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), st, pb, pa, dil, groups, "float64")
        want = np.ascontiguousarray(np.transpose(finish(r, odt), perm_of(CANON_D[nd], dl)))
        rt, at = tol(ra, odt)
        yield Case(FAMILY, f"{op} {dt}->{odt} x{xin.shape} w{win.shape} {attrs}", [("x", xin), ("w", win)],
                   call(op, ["%x", "%w"], **attrs), want, rt, at)


def conv_t_ref(x, w, st, pb, pa, dil, groups, opad, odt):
    """x (N, Cin, H, W), w (Cin, Cout/G, kh, kw)."""
    ad = acc_dtype(odt)
    xv, wv = x.astype(odt).astype(ad), w.astype(odt).astype(ad)
    N, Cin, H, W = x.shape
    Og = w.shape[1]
    Cg = Cin // groups
    kh, kw = w.shape[2:]
    fh = st[0] * (H - 1) + dil[0] * (kh - 1) + 1 + opad[0]
    fw = st[1] * (W - 1) + dil[1] * (kw - 1) + 1 + opad[1]
    full = np.zeros((N, Og * groups, fh, fw), ad)
    for g in range(groups):
        for r in range(kh):
            for c in range(kw):
                part = np.einsum("nihw,io->nohw", xv[:, g * Cg:(g + 1) * Cg], wv[g * Cg:(g + 1) * Cg, :, r, c])
                full[:, g * Og:(g + 1) * Og, r * dil[0]:r * dil[0] + st[0] * (H - 1) + 1:st[0],
                     c * dil[1]:c * dil[1] + st[1] * (W - 1) + 1:st[1]] += part
    return full[:, :, pb[0]:fh - pa[0], pb[1]:fw - pa[1]]


def conv_t_cases(rng, n):
    for k in range(n):
        dt = ["float32", "float64", "float16"][k % 3]
        groups = int(rng.choice([1, 1, 2]))
        cg, og = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        Cin = groups * cg
        kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        st = [int(rng.choice([1, 2, 3])), int(rng.choice([1, 2]))]
        dil = [int(rng.choice([1, 1, 2])), 1]
        opad = [int(rng.integers(0, st[0])), int(rng.integers(0, st[1]))]
        pb = [int(rng.integers(0, kh)), int(rng.integers(0, kw))]
        pa = [int(rng.integers(0, kh)), int(rng.integers(0, kw))]
        form = k % 3
        if form == 0:
            pa = pb = [pb[0], pb[0]]
            padding = [pb[0]]
        elif form == 1:
            pa = list(pb)
            padding = list(pb)
        else:
            padding = [pb[0], pb[1], pa[0], pa[1]]
        H, W = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        x = rand_array(rng, (int(rng.integers(1, 3)), Cin, H, W), dt)
        w = rand_array(rng, (Cin, og, kh, kw), dt)
        attrs = {}
        if k % 4 == 1:
            attrs["channels"] = og * groups
            attrs["kernel_size"] = [kh, kw]
        if st != [1, 1]:
            attrs["strides"] = st
        if opad != [0, 0]:
            attrs["output_padding"] = opad
        if any(padding):
            attrs["padding"] = padding
        if dil != [1, 1]:
            attrs["dilation"] = dil
        if groups != 1:
            attrs["groups"] = groups
            attrs["channels"] = og * groups
        r = conv_t_ref(x, w, st, pb, pa, dil, groups, opad, dt)
        if 0 in r.shape:
            yield Case(FAMILY, f"conv2d_transpose empty output x{x.shape} w{w.shape} {attrs}", [("x", x), ("w", w)],
                       call("nn.conv2d_transpose", ["%x", "%w"], **attrs), TYPE_ERROR)
            continue
        ra = conv_t_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), st, pb, pa, dil, groups, opad,
                        "float64")
        rt, at = tol(ra, dt)
        yield Case(FAMILY, f"conv2d_transpose {dt} x{x.shape} w{w.shape} {attrs}", [("x", x), ("w", w)],
                   call("nn.conv2d_transpose", ["%x", "%w"], **attrs), finish(r, dt), rt, at)


def dense_cases(rng, n):
    for k in range(n):
        dt, odt = [("float32", "float32"), ("float64", "float64"), ("float16", "float16"), ("int8", "int32"),
                   ("int32", "int32"), ("float32", "float32")][k % 6]
        kind = k % 3
        lo, hi = (-5, 6) if not is_float(dt) else (None, None)
        K = int(rng.integers(1, 40 if k % 5 == 0 else 9))
        N = int(rng.integers(1, 40 if k % 5 == 0 else 9))
        attrs = {}
        if odt != dt:
            attrs["out_dtype"] = odt
        if kind == 0:
            lead = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4))))
            x = rand_array(rng, lead + (K,), dt, lo=lo, hi=hi)
            w = rand_array(rng, (N, K), dt, lo=lo, hi=hi)
            if k % 2:
                attrs = dict(units=N, **attrs)
            f = lambda a, b: np.matmul(a, np.swapaxes(b, -1, -2))
            r = f(x.astype(odt).astype(acc_dtype(odt)), w.astype(odt).astype(acc_dtype(odt)))
            ra = f(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)))
            rt, at = tol(ra, odt)
            yield Case(FAMILY, f"dense {dt}->{odt} {x.shape} {w.shape} {attrs}", [("x", x), ("w", w)],
                       call("nn.dense", ["%x", "%w"], **attrs), finish(r, odt), rt, at)
        elif kind == 1:
            ta, tb = bool(k % 4 >= 2), bool(k % 2)
            lead = tuple(int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 2))))
            M = int(rng.integers(1, 6))
            a = rand_array(rng, lead + ((K, M) if ta else (M, K)), dt, lo=lo, hi=hi)
            b = rand_array(rng, (N, K) if tb else (K, N), dt, lo=lo, hi=hi)
            attrs = dict(attrs)
            if ta:
                attrs["transpose_a"] = True
            if tb:
                attrs["transpose_b"] = True
            def f(a, b, ta=ta, tb=tb):
                return np.matmul(np.swapaxes(a, -1, -2) if ta else a, b.T if tb else b)
            r = f(a.astype(odt).astype(acc_dtype(odt)), b.astype(odt).astype(acc_dtype(odt)))
            ra = f(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
            rt, at = tol(ra, odt)
            yield Case(FAMILY, f"matmul {dt}->{odt} {a.shape} {b.shape} {attrs}", [("a", a), ("b", b)],
                       call("nn.matmul", ["%a", "%b"], **attrs), finish(r, odt), rt, at)
        else:
            ta, tb = bool(k % 4 >= 2), bool(k % 2)
            B = int(rng.integers(1, 4))
            B1, B2 = [(B, B), (1, B), (B, 1)][k % 3]
            M = int(rng.integers(1, 6))
            a = rand_array(rng, (B1,) + ((K, M) if ta else (M, K)), dt, lo=lo, hi=hi)
            b = rand_array(rng, (B2,) + ((N, K) if tb else (K, N)), dt, lo=lo, hi=hi)
            attrs = dict(attrs)
            if ta:
                attrs["transpose_a"] = True
            if tb:
                attrs["transpose_b"] = True
            def f(a, b, ta=ta, tb=tb):
                return np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)
            r = f(a.astype(odt).astype(acc_dtype(odt)), b.astype(odt).astype(acc_dtype(odt)))
            ra = f(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
            rt, at = tol(ra, odt)
            yield Case(FAMILY, f"batch_matmul {dt}->{odt} {a.shape} {b.shape} {attrs}", [("a", a), ("b", b)],
                       call("nn.batch_matmul", ["%a", "%b"], **attrs), finish(r, odt), rt, at)


def cases(rng, thorough):
    m = 4 if thorough else 1
    yield from conv_cases(rng, 100 * m)
    yield from conv_t_cases(rng, 30 * m)
    yield from dense_cases(rng, 60 * m)
