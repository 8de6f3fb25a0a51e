"""Reduction family (spec/ops.md section 5): sum/mean/max/min/prod/all/any with axis / keepdims /
exclude (incl. axis=None, axis=[] = all axes, negative axes, rank 0, empty reductions), argmax /
argmin (ties, select_last_index), variance; plus the scans cumsum / cumprod (6.5)."""
import numpy as np

from diffcore import (ALL, FLOATS, TYPE_ERROR, Case, call, rand_array, rand_shape,
                      is_float, is_int)
from fam_elemwise import wrap

FAMILY = "reduce"

REDUCERS = ["sum", "mean", "max", "min", "prod", "all", "any"]


def reduced_axes(ndim, axis, exclude):
    if axis is None or len(axis) == 0:
        r = list(range(ndim))
        return r if not exclude or axis is None else []  # exclude of "all" is handled by the caller
    r = sorted({a % ndim for a in axis})
    if exclude:
        r = [i for i in range(ndim) if i not in r]
    return r


def lowest(dt):
    return np.finfo(dt).min if is_float(dt) else np.iinfo(dt).min


def highest(dt):
    return np.finfo(dt).max if is_float(dt) else np.iinfo(dt).max


def reduce_ref(op, x, axes, keepdims):
    dt = x.dtype
    ax = tuple(axes)
    if x.ndim == 0:
        return x.copy()
    if op in ("all", "any"):
        r = np.all(x, axis=ax, keepdims=keepdims) if op == "all" else np.any(x, axis=ax, keepdims=keepdims)
        return np.asarray(r)
    if op in ("max", "min"):
        init = lowest(dt) if op == "max" else highest(dt)
        f = np.max if op == "max" else np.min
        return np.asarray(f(x, axis=ax, keepdims=keepdims, initial=init)).astype(dt)
    if is_int(dt):
        # exact, wrapped (prod/sum wrap; mean = wrapped sum / n truncating)
        moved = np.moveaxis(x, ax, tuple(range(x.ndim - len(ax), x.ndim))) if ax else x[..., None]
        lead = moved.shape[:x.ndim - len(ax)] if ax else x.shape
        n = int(np.prod([x.shape[a] for a in ax])) if ax else 1
        flat = moved.reshape(lead + (n,))
        out = np.empty(lead, dt)
        for idx in np.ndindex(lead):
            vals = [int(v) for v in flat[idx]]
            if op == "sum" or op == "mean":
                s = wrap(sum(vals), dt)
                if op == "mean":  # n is cast to the data dtype too (spec 5)
                    nw = wrap(n, dt)
                    q = abs(s) // abs(nw)
                    s = wrap(q if (s >= 0) == (nw >= 0) else -q, dt)
                out[idx] = s
            else:
                p = 1
                for v in vals:
                    p = wrap(p * v, dt)
                out[idx] = p
        if keepdims:
            out = out.reshape([1 if i in ax else x.shape[i] for i in range(x.ndim)])
        return out
    x64 = x.astype(np.float64)
    if op == "sum":
        r = np.sum(x64, axis=ax, keepdims=keepdims)
    elif op == "prod":
        r = np.prod(x64, axis=ax, keepdims=keepdims)
    else:
        r = np.mean(x64, axis=ax, keepdims=keepdims) if all(x.shape[a] for a in ax) or not ax else \
            np.sum(x64, axis=ax, keepdims=keepdims) / 0.0
    return np.asarray(r).astype(dt)


def float_tol(op, x, dt):
    eps = {2: 1e-3, 4: 1e-6, 8: 1e-14}[np.dtype(dt).itemsize]
    if op in ("sum", "mean"):
        s = float(np.sum(np.abs(x.astype(np.float64)))) if x.size else 0.0
        return 4 * eps, 8 * eps * s + eps
    if op == "prod":
        return 64 * eps, eps
    return None, None


def reduce_cases(rng, n):
    for k in range(n):
        op = REDUCERS[k % len(REDUCERS)]
        if op in ("all", "any"):
            dt = "bool"
        else:
            dt = ALL[(k // len(REDUCERS)) % (len(ALL) - 1)]
        shape = rand_shape(rng, max_rank=4, allow_zero=k % 11 == 5)
        nd = len(shape)
        form = int(rng.integers(0, 5))
        attrs = {}
        axis = None
        if nd and form >= 1:
            if form == 1:
                axis = []
            else:
                cnt = int(rng.integers(1, nd + 1))
                axis = [int(a) - (nd if rng.random() < 0.4 else 0)
                        for a in rng.choice(nd, size=cnt, replace=False)]
            attrs["axis"] = axis
        keepdims = bool(rng.random() < 0.4)
        exclude = bool(nd and rng.random() < 0.25 and axis)
        if keepdims:
            attrs["keepdims"] = True
        if exclude:
            attrs["exclude"] = True
        axes = reduced_axes(nd, axis, exclude)
        lo = hi = None
        if op == "prod":
            lo, hi = (0.5, 1.5) if is_float(dt) else (-3, 4)
        if op == "mean" and is_int(dt):
            lo, hi = (-2, 3) if np.iinfo(dt).min < 0 else (0, 3)
        x = rand_array(rng, shape, dt, lo=lo, hi=hi, special=op in ("sum",) and is_int(dt))
        if op in ("max", "min") and is_float(dt) and x.size and rng.random() < 0.3:
            x.reshape(-1)[0] = np.inf if op == "min" else -np.inf
        rtol, atol = float_tol(op, x, dt) if is_float(dt) else (None, None)
        if op == "mean" and is_int(dt) and (any(shape[a] == 0 for a in axes) or
                                            wrap(int(np.prod([shape[a] for a in axes])), dt) == 0):
            continue  # integer division by zero (n cast to the dtype is 0)
        yield Case(FAMILY, f"{op} {dt} {shape} {attrs}", [("x", x)], call(op, ["%x"], **attrs),
                   lambda op=op, x=x, axes=axes, kd=keepdims: reduce_ref(op, x, axes, kd), rtol, atol)


def arg_ref(op, x, axis, keepdims, last):
    if axis is None:
        flat = x.reshape(-1)
        r = arg_flat(op, flat, last)
        out = np.array(r, np.int32)
        return out.reshape([1] * x.ndim) if keepdims else out
    a = axis % x.ndim
    moved = np.moveaxis(x, a, -1)
    out = np.empty(moved.shape[:-1], np.int32)
    for idx in np.ndindex(out.shape):
        out[idx] = arg_flat(op, moved[idx], last)
    return np.expand_dims(out, a) if keepdims else out


def arg_flat(op, v, last):
    best = 0
    for i in range(1, len(v)):
        better = v[i] > v[best] if op == "argmax" else v[i] < v[best]
        tie = v[i] == v[best]
        if better or (last and tie):
            best = i
    return best


def arg_cases(rng, n):
    for k in range(n):
        op = ["argmax", "argmin"][k % 2]
        dt = ALL[(k // 2) % (len(ALL) - 1)]
        shape = rand_shape(rng, rank=int(rng.integers(1, 4)))
        x = rand_array(rng, shape, dt, lo=0, hi=4)  # small range: ties
        if is_float(dt):
            x = np.array(np.round(x), dtype=dt)
        attrs = {}
        axis = None
        if rng.random() < 0.7:
            axis = int(rng.integers(-len(shape), len(shape)))
            attrs["axis"] = [axis]
        kd = bool(rng.random() < 0.4)
        last = bool(rng.random() < 0.4)
        if kd:
            attrs["keepdims"] = True
        if last:
            attrs["select_last_index"] = True
        yield Case(FAMILY, f"{op} {dt} {shape} {attrs}", [("x", x)], call(op, ["%x"], **attrs),
                   lambda op=op, x=x, axis=axis, kd=kd, last=last: arg_ref(op, x, axis, kd, last))
    x = np.array(1.0, "float32")
    yield Case(FAMILY, "argmax rank 0", [("x", x)], call("argmax", ["%x"]), TYPE_ERROR)


def variance_cases(rng, n):
    for k in range(n):
        dt = FLOATS[k % 3]
        shape = rand_shape(rng, rank=int(rng.integers(1, 4)))
        nd = len(shape)
        cnt = int(rng.integers(1, nd + 1))
        axis = [int(a) for a in rng.choice(nd, size=cnt, replace=False)]
        unbiased = bool(k % 3 == 1)
        kd = bool(k % 2)
        x = rand_array(rng, shape, dt)
        m = np.mean(x.astype(np.float64), axis=tuple(axis), keepdims=True).astype(dt)
        n_el = int(np.prod([shape[a] for a in axis]))
        if unbiased and n_el == 1:
            continue
        attrs = {"axis": axis}
        if kd:
            attrs["keepdims"] = True
        if unbiased:
            attrs["unbiased"] = True
        def ref(x=x, m=m, axis=axis, kd=kd, unbiased=unbiased, n_el=n_el):
            d = x.astype(np.float64) - m.astype(np.float64)
            return (np.sum(d * d, axis=tuple(axis), keepdims=kd) / (n_el - unbiased)).astype(x.dtype)
        yield Case(FAMILY, f"variance {dt} {shape} {attrs}", [("x", x), ("m", m)],
                   call("variance", ["%x", "%m"], **attrs), ref,
                   *((1e-2, 1e-2) if dt == "float16" else (1e-5, 1e-6)))


def scan_cases(rng, n):
    for k in range(n):
        op = ["cumsum", "cumprod"][k % 2]
        dt = ALL[(k // 2) % (len(ALL) - 1)]
        shape = rand_shape(rng, rank=int(rng.integers(1, 4)))
        lo, hi = ((0.5, 1.5) if is_float(dt) else (-2, 3)) if op == "cumprod" else (None, None)
        x = rand_array(rng, shape, dt, lo=lo, hi=hi)
        attrs = {}
        axis = None
        if rng.random() < 0.7:
            axis = int(rng.integers(-len(shape), len(shape)))
            attrs["axis"] = axis
        excl = bool(rng.random() < 0.3)
        if excl:
            attrs["exclusive"] = True
        out_dt = dt
        if rng.random() < 0.2 and not is_float(dt):
            out_dt = "int64"
            attrs["dtype"] = out_dt
        def ref(x=x, axis=axis, excl=excl, op=op, out_dt=out_dt):
            v = x.reshape(-1) if axis is None else x
            ax = 0 if axis is None else axis
            v = v.astype(out_dt)
            if is_float(out_dt):
                r = (np.cumsum if op == "cumsum" else np.cumprod)(v.astype(np.float64), axis=ax)
            else:
                r = (np.cumsum if op == "cumsum" else np.cumprod)(v, axis=ax, dtype=out_dt)
            if excl:
                r = np.moveaxis(r, ax, 0)
                first = np.zeros_like(r[:1]) if op == "cumsum" else np.ones_like(r[:1])
                r = np.moveaxis(np.concatenate([first, r[:-1]], axis=0), 0, ax)
            return np.asarray(r).astype(out_dt)
        rtol = 1e-2 if dt == "float16" else None
        yield Case(FAMILY, f"{op} {dt} {shape} {attrs}", [("x", x)], call(op, ["%x"], **attrs), ref, rtol, rtol)


def error_cases():
    x = np.zeros((2, 3), "float32")
    yield Case(FAMILY, "sum axis out of range", [("x", x)], call("sum", ["%x"], axis=[2]), TYPE_ERROR)
    yield Case(FAMILY, "max axis -3", [("x", x)], call("max", ["%x"], axis=[-3]), TYPE_ERROR)


def cases(rng, thorough):
    m = 4 if thorough else 1
    yield from reduce_cases(rng, 200 * m)
    yield from arg_cases(rng, 40 * m)
    yield from variance_cases(rng, 15 * m)
    yield from scan_cases(rng, 30 * m)
    yield from error_cases()
