"""Indexing family (spec/ops.md 6.4, 13): strided_slice (negative strides, clamping, axes,
slice_mode="size", the begin-past-end error), take (clip/wrap/fast, axis None, batch_dims,
negative indices), gather, gather_nd (batch_dims), where (3-way broadcast, any condition dtype),
one_hot, sort / argsort (stable) / topk."""
import numpy as np

from diffcore import (ALL, ERROR, RUN_ERROR, TYPE_ERROR, Case, call, rand_array,
                      rand_shape, broadcast_pair, is_float)

FAMILY = "index"

IDX_DT = ["int32", "int64", "int8", "uint8", "int16", "uint32", "uint16", "uint64"]


# ------------------------------------------------------------------ strided_slice

def canon(i, n, s):
    if i < 0:
        i += n
    return min(max(i, 0), n) if s > 0 else min(max(i, -1), n - 1)


def slice_ref(x, begin, end, strides, mode, axes):
    nd = x.ndim
    dims = list(axes) if axes is not None else list(range(len(begin)))
    sl = [slice(None)] * nd
    for j, d in enumerate(dims):
        d %= nd
        n = x.shape[d]
        s = 1 if mode == "size" else (strides[j] if j < len(strides) else 1)
        if s == 0:
            return TYPE_ERROR
        b = begin[j]
        if mode == "size":
            size = end[j] if j < len(end) else -1
            e = n if size < 0 else b + size
        else:
            e = end[j] if j < len(end) else (n if s > 0 else -(n + 1))
        b, e = canon(b, n, s), canon(e, n, s)
        if (s > 0 and b > e) or (s < 0 and b < e):
            return ERROR
        idx = list(range(b, e, s))
        sl[d] = idx
    y = x
    for d in range(nd):
        if isinstance(sl[d], list):
            y = np.take(y, np.array(sl[d], dtype=np.int64), axis=d)
    return y.copy()


def slice_cases(rng, n):
    for k in range(n):
        dt = ALL[k % len(ALL)]
        shape = rand_shape(rng, rank=int(rng.integers(1, 5)), max_dim=7)
        nd = len(shape)
        x = rand_array(rng, shape, dt)
        use_axes = k % 4 == 3
        m = int(rng.integers(1, nd + 1))
        dims = sorted(int(d) for d in rng.choice(nd, size=m, replace=False)) if use_axes else list(range(m))
        begin, end, strides = [], [], []
        mode = "size" if k % 6 == 5 else "end"
        for d in dims:
            ext = shape[d]
            s = int(rng.choice([1, 1, 2, 3, -1, -2]))
            if mode == "size":
                b = int(rng.integers(0, ext))
                e = int(rng.choice([-1, int(rng.integers(0, ext - b + 1))]))
            elif s > 0:
                b = int(rng.integers(-ext - 2, ext + 1))
                e = int(rng.integers(-ext, ext + 3))
                if rng.random() < 0.7:
                    b, e = sorted((canon(b, ext, 1), canon(e, ext, 1)))
            else:
                b = int(rng.integers(-ext, ext + 2))
                e = int(rng.integers(-ext - 3, ext))
                if rng.random() < 0.7:
                    e, b = sorted((canon(b, ext, -1), canon(e, ext, -1)))
                    if e == -1:
                        e = -(ext + 1)
            begin.append(b); end.append(e); strides.append(s)
        attrs = {"begin": begin, "end": end}
        if mode == "size":
            if rng.random() < 0.5:
                attrs["strides"] = strides
            attrs["slice_mode"] = "size"
        elif any(s != 1 for s in strides) or rng.random() < 0.5:
            if len(set(strides)) == 1 and rng.random() < 0.5 and not use_axes:
                strides = strides[:1]
            attrs["strides"] = strides
        if use_axes:
            attrs["axes"] = dims
        if mode == "end" and len(strides) < len(begin):
            strides = strides + [1] * (len(begin) - len(strides))
        yield Case(FAMILY, f"strided_slice {dt} {shape} {attrs}", [("x", x)], call("strided_slice", ["%x"], **attrs),
                   lambda x=x, b=begin, e=end, s=strides, mode=mode, ax=dims if use_axes else None:
                   slice_ref(x, b, e, s, mode, ax))
    x = rand_array(rng, (5, 4), "float32")
    yield Case(FAMILY, "strided_slice stride 0", [("x", x)],
               call("strided_slice", ["%x"], begin=[0], end=[3], strides=[0]), ERROR)
    yield Case(FAMILY, "strided_slice begin past end", [("x", x)],
               call("strided_slice", ["%x"], begin=[4], end=[1]), ERROR)
    yield Case(FAMILY, "strided_slice reverse all", [("x", x)],
               call("strided_slice", ["%x"], begin=[-1], end=[-6], strides=[-1]), x[::-1].copy())


# ------------------------------------------------------------------ take

def take_ref(data, idx, axis, mode, bd):
    if axis is None:
        flat = data.reshape(-1)
        return take_ref(flat, idx, 0, mode, 0)
    a = axis % data.ndim
    n = data.shape[a]
    iv = idx.astype(np.int64) if idx.dtype != np.uint64 else idx.astype(np.int64)
    if mode == "wrap":
        iv = ((iv % n) + n) % n
    else:
        iv = np.clip(iv, 0, n - 1)
    oshape = data.shape[:a] + idx.shape[bd:] + data.shape[a + 1:]
    out = np.empty(oshape, data.dtype)
    ni = idx.ndim - bd
    for o in np.ndindex(oshape):
        pre = o[:a]
        ii = o[a:a + ni]
        post = o[a + ni:]
        out[o] = data[pre + (iv[pre[:bd] + ii],) + post]
    return out


def take_cases(rng, n):
    for k in range(n):
        dt = ALL[k % len(ALL)]
        shape = rand_shape(rng, rank=int(rng.integers(1, 4)))
        nd = len(shape)
        data = rand_array(rng, shape, dt)
        mode = ["clip", "wrap", "fast"][k % 3]
        idt = IDX_DT[k % len(IDX_DT)]
        attrs = {}
        axis = None if k % 5 == 0 else int(rng.integers(-nd, nd))
        bd = 0
        if axis is not None:
            attrs["axis"] = axis
            a = axis % nd
            if k % 7 == 3 and a >= 1:
                bd = int(rng.integers(1, a + 1))
                attrs["batch_dims"] = bd
            n_ax = shape[a]
        else:
            n_ax = int(np.prod(shape))
        ishape = tuple(shape[:bd]) + rand_shape(rng, max_rank=2)
        lo, hi = (0, n_ax) if mode == "fast" else (-2 * n_ax - 1, 2 * n_ax + 2)
        if np.dtype(idt).kind == "u":
            lo = 0
        hi = min(hi, np.iinfo(idt).max)
        idx = rand_array(rng, ishape, idt, lo=lo, hi=hi)
        if mode != "clip":
            attrs["mode"] = mode
        yield Case(FAMILY, f"take {dt} {shape} idx {idt}{ishape} {attrs}", [("x", data), ("i", idx)],
                   call("take", ["%x", "%i"], **attrs),
                   lambda d=data, i=idx, ax=axis, m=mode, bd=bd: take_ref(d, i, ax, m, bd))
    x = rand_array(rng, (3,), "float32")
    yield Case(FAMILY, "take float indices", [("x", x), ("i", x)], call("take", ["%x", "%i"]), TYPE_ERROR)


# ------------------------------------------------------------------ gather, gather_nd

def gather_cases(rng, n):
    for k in range(n):
        dt = ALL[k % len(ALL)]
        shape = rand_shape(rng, rank=int(rng.integers(1, 4)))
        nd = len(shape)
        data = rand_array(rng, shape, dt)
        axis = int(rng.integers(-nd, nd))
        a = axis % nd
        ishape = list(shape)
        ishape[a] = int(rng.integers(1, 5))
        idt = IDX_DT[k % len(IDX_DT)]
        idx = rand_array(rng, tuple(ishape), idt, lo=0, hi=shape[a])
        yield Case(FAMILY, f"gather {dt} {shape} axis={axis} idx {idt}{tuple(ishape)}", [("x", data), ("i", idx)],
                   call("gather", ["%x", "%i"], axis=axis),
                   lambda d=data, i=idx, a=a: np.take_along_axis(d, i.astype(np.int64), axis=a))
    for k in range(n):
        dt = ALL[k % len(ALL)]
        bd = 1 if k % 4 == 3 else 0
        shape = rand_shape(rng, rank=int(rng.integers(1 + bd, 5)))
        data = rand_array(rng, shape, dt)
        m = int(rng.integers(1, len(shape) - bd + 1))
        y = rand_shape(rng, max_rank=2)
        idt = IDX_DT[k % len(IDX_DT)]
        ishape = (m,) + tuple(shape[:bd]) + y
        idx = np.zeros(ishape, idt)
        for j in range(m):
            idx[j] = rand_array(rng, ishape[1:], idt, lo=0, hi=shape[bd + j])
        attrs = {"batch_dims": bd} if bd else {}
        if k % 5 == 1:
            attrs["index_rank"] = m
        def ref(d=data, i=idx, bd=bd, m=m):
            ii = i.astype(np.int64)
            oshape = ii.shape[1:] + d.shape[bd + m:]
            out = np.empty(oshape, d.dtype)
            for o in np.ndindex(ii.shape[1:]):
                key = tuple(o[:bd]) + tuple(int(ii[(j,) + o]) for j in range(m))
                out[o] = d[key]
            return out
        yield Case(FAMILY, f"gather_nd {dt} {shape} idx {idt}{ishape} {attrs}", [("x", data), ("i", idx)],
                   call("gather_nd", ["%x", "%i"], **attrs), ref)
    x = rand_array(rng, (2, 3), "float32")
    i = np.array([[0, 3]], "int32")
    yield Case(FAMILY, "gather out of range", [("x", x), ("i", i)], call("gather", ["%x", "%i"], axis=1), RUN_ERROR)


# ------------------------------------------------------------------ where, one_hot

def where_cases(rng, n):
    for k in range(n):
        dt = ALL[k % len(ALL)]
        cdt = ["bool", "bool", "int32", "float32", "uint8"][k % 5]
        sx, sy = broadcast_pair(rng, 3)
        sc = sx if k % 3 == 0 else sy if k % 3 == 1 else tuple(1 for _ in sx[-1:])
        c = rand_array(rng, sc, cdt, lo=-1 if cdt != "uint8" else 0, hi=2)
        x = rand_array(rng, sx, dt)
        y = rand_array(rng, sy, dt)
        yield Case(FAMILY, f"where cond {cdt}{sc} {dt} {sx}x{sy}", [("c", c), ("x", x), ("y", y)],
                   call("where", ["%c", "%x", "%y"]), lambda c=c, x=x, y=y: np.where(c != 0, x, y))
    x = rand_array(rng, (2,), "float32")
    yield Case(FAMILY, "where dtype mismatch", [("c", x > 0), ("x", x), ("y", x.astype("float64"))],
               call("where", ["%c", "%x", "%y"]), TYPE_ERROR)


def one_hot_cases(rng, n):
    for k in range(n):
        shape = rand_shape(rng, max_rank=3)
        depth = int(rng.integers(1, 6))
        idt = IDX_DT[k % 4]
        idx = rand_array(rng, shape, idt, lo=-1 if np.dtype(idt).kind == "i" else 0, hi=depth + 1)
        odt = ALL[k % len(ALL)]
        if odt == "bool":
            on, off = np.array(True), np.array(False)
        else:
            on, off = np.array(3, odt) if not is_float(odt) else np.array(1.5, odt), np.array(0, odt)
            if rng.random() < 0.5 and not is_float(odt):
                off = np.array(1, odt)
        nd = len(shape)
        axis = int(rng.integers(-1, nd + 1))
        attrs = {"depth": depth}
        if axis != -1:
            attrs["axis"] = axis
        attrs["dtype"] = odt
        def ref(idx=idx, on=on, off=off, depth=depth, axis=axis, odt=odt):
            pos = np.arange(depth).reshape((-1,) + (1,) * idx.ndim)
            hit = pos == idx.astype(np.int64)[None]
            r = np.where(hit, on, off).astype(odt)
            return np.moveaxis(r, 0, axis if axis >= 0 else idx.ndim)
        yield Case(FAMILY, f"one_hot {idt}{shape} depth={depth} {odt} axis={axis}",
                   [("i", idx), ("on", on), ("off", off)], call("one_hot", ["%i", "%on", "%off"], **attrs), ref)


# ------------------------------------------------------------------ sorting

def sort_cases(rng, n):
    for k in range(n):
        dt = [d for d in ALL if d != "bool"][k % (len(ALL) - 1)]
        shape = rand_shape(rng, rank=int(rng.integers(1, 4)), max_dim=6)
        nd = len(shape)
        ties = k % 2 == 0
        x = rand_array(rng, shape, dt, lo=0 if ties else None, hi=4 if ties else None)
        if ties and is_float(dt):
            x = np.array(np.round(x), dtype=dt)
        if not ties and not is_float(dt):
            info = np.iinfo(dt)
            vals = rng.permutation(np.arange(min(int(info.max), 200)))[:x.size]
            if len(vals) == x.size:
                x = vals.reshape(shape).astype(dt)
        axis = int(rng.integers(-nd, nd))
        asc = bool(k % 3 != 1)
        kind = k % 3
        attrs = {"axis": axis} if axis != -1 else {}
        if not asc:
            attrs["is_ascend"] = False

        def order(x=x, axis=axis, asc=asc):
            key = x.astype(np.float64)
            return np.argsort(key if asc else -key, axis=axis, kind="stable")
        if kind == 0:
            odt = ["int32", "int64", "float32"][k % 3]
            a2 = dict(attrs, dtype=odt)
            yield Case(FAMILY, f"argsort {dt} {shape} {a2}", [("x", x)], call("argsort", ["%x"], **a2),
                       lambda o=order, odt=odt: o().astype(odt))
        elif kind == 1:
            yield Case(FAMILY, f"sort {dt} {shape} {attrs}", [("x", x)], call("sort", ["%x"], **attrs),
                       lambda o=order, x=x, axis=axis: np.take_along_axis(x, o(), axis=axis))
        else:
            if ties:
                continue  # topk tie order is not specified
            ext = shape[axis]
            kk = int(rng.integers(0, ext + 1))
            ret = ["both", "values", "indices"][k % 3 if k % 9 else 0]
            a2 = dict(attrs, k=kk)
            if not asc:
                del a2["is_ascend"]
            else:
                a2["is_ascend"] = True
            if ret != "both":
                a2["ret_type"] = ret
            def ref(o=order, x=x, axis=axis, kk=kk, ret=ret, ext=ext):
                ix = o()
                take = ext if kk < 1 else kk
                ix = np.take(ix, np.arange(take), axis=axis)
                v = np.take_along_axis(x, ix, axis=axis)
                ix = ix.astype("int32")
                return (v, ix) if ret == "both" else v if ret == "values" else ix
            # topk default is descending: order() must match
            desc = not a2.get("is_ascend", False)
            yield Case(FAMILY, f"topk {dt} {shape} {a2}", [("x", x)], call("topk", ["%x"], **a2),
                       lambda x=x, axis=axis, desc=desc, r=ref: r(o=lambda: np.argsort(
                           -x.astype(np.float64) if desc else x.astype(np.float64), axis=axis, kind="stable")))


def cases(rng, thorough):
    m = 4 if thorough else 1
    yield from slice_cases(rng, 80 * m)
    yield from take_cases(rng, 60 * m)
    yield from gather_cases(rng, 40 * m)
    yield from where_cases(rng, 30 * m)
    yield from one_hot_cases(rng, 24 * m)
    yield from sort_cases(rng, 40 * m)
