"""Shape family (spec/ops.md 6.1-6.3, 6.5-6.7): reshape with its special values, expand_dims,
squeeze, transpose, reshape_like, batch_flatten, layout_transform, concatenate, stack, split,
broadcast_to(_like), tile, repeat, reverse, creation ops (zeros, ones, full, full_like, arange),
shape_of, ndarray_size, slice_like."""
import numpy as np

from diffcore import (ALL, ERROR, TYPE_ERROR, Case, call, rand_array, rand_shape,
                      is_float)

FAMILY = "shape"


def pick_dtype(rng, k):
    return ALL[k % len(ALL)] if k % 3 else str(rng.choice(ALL))


# ------------------------------------------------------------------ reshape

def reshape_shape(ish, ns):
    """The output shape of spec 6.1, or None for an error."""
    out, src, i, infer = [], 0, 0, None
    n = len(ish)
    while i < len(ns):
        v = ns[i]
        if v > 0:
            out.append(v)
            src += 1
        elif v == 0:
            if src >= n:
                return None
            out.append(ish[src])
            src += 1
        elif v == -1:
            if infer is not None:
                return None
            infer = len(out)
            out.append(1)
            src += 1
        elif v == -2:
            out += list(ish[src:])
            src = n
        elif v == -3:
            if src + 1 >= n:
                return None
            out.append(ish[src] * ish[src + 1])
            src += 2
        elif v == -4:
            if i + 2 >= len(ns) or src >= n:
                return None
            a, b = ns[i + 1], ns[i + 2]
            d = ish[src]
            if a == -1 and b == -1:
                return None
            if a == -1:
                a = d // b
            if b == -1:
                b = d // a
            if a * b != d:
                return None
            out += [a, b]
            src += 1
            i += 2
        else:
            return None
        i += 1
    total = int(np.prod(ish))
    if infer is not None:
        rest = int(np.prod(out))
        if rest == 0:
            return None
        out[infer] = total // rest
    return tuple(out) if int(np.prod(out)) == total else None


FIXED_RESHAPES = [  # (input, newshape, expected) — spec 6.1 examples and TVM's own test list
    ((2, 3, 4), (8, 3), (8, 3)), ((4, 7), (2, 7, 2), (2, 7, 2)), ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), (2, 3, 4)), ((2, 3, 4), (0, -1), (2, 12)), ((2, 3, 4), (-1, 0), (8, 3)),
    ((2, 3, 4), (2, -2), (2, 3, 4)), ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), (6, 4)), ((2, 3, 4, 5), (-3, -3), (6, 20)), ((2, 3, 4), (0, -3), (2, 12)),
    ((2, 3, 4), (-3, -2), (6, 4)), ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)), ((1,), (), ()), ((1, 2048, 1, 1), (0, -1), (1, 2048)),
    ((1, 50, 32), (-1, 32), (50, 32)), ((), (1, 1), (1, 1)), ((6,), (-4, -1, 2), (3, 2)),
]


def random_newshape(rng, ish):
    ns, src = [], 0
    while src < len(ish):
        r = rng.random()
        d = ish[src]
        if r < 0.25:
            ns.append(0); src += 1
        elif r < 0.5:
            ns.append(d); src += 1
        elif r < 0.6 and src + 1 < len(ish):
            ns.append(-3); src += 2
        elif r < 0.75:
            divs = [a for a in range(1, d + 1) if d % a == 0]
            a = int(rng.choice(divs))
            b = d // a
            if rng.random() < 0.5:
                a = -1 if rng.random() < 0.5 else a
                b = b if a == -1 else -1
            ns += [-4, a, b]; src += 1
        elif r < 0.85:
            ns.append(-2); src = len(ish)
        else:
            ns.append(d); src += 1
    pos = [i for i, v in enumerate(ns) if v > 0 and (i < 1 or ns[i - 1] != -4) and (i < 2 or ns[i - 2] != -4)]
    if pos and rng.random() < 0.5:
        ns[int(rng.choice(pos))] = -1
    return ns


def reshape_cases(rng, n):
    for ish, ns, want in FIXED_RESHAPES:
        assert reshape_shape(ish, ns) == want, (ish, ns)
        x = rand_array(rng, ish, "float32")
        yield Case(FAMILY, f"reshape {ish} {list(ns)}", [("x", x)], call("reshape", ["%x"], newshape=list(ns)),
                   x.reshape(want))
    for k in range(n):
        dt = pick_dtype(rng, k)
        ish = rand_shape(rng, rank=int(rng.integers(1, 5)))
        ns = random_newshape(rng, ish)
        want = reshape_shape(ish, ns)
        x = rand_array(rng, ish, dt)
        yield Case(FAMILY, f"reshape {dt} {ish} {ns}", [("x", x)], call("reshape", ["%x"], newshape=ns),
                   TYPE_ERROR if want is None else x.reshape(want))
    x = rand_array(rng, (2, 3), "float32")
    for ns in ([-1, -1], [5], [-5, 6], [0, 0, 0]):
        yield Case(FAMILY, f"reshape error {ns}", [("x", x)], call("reshape", ["%x"], newshape=ns), TYPE_ERROR)


# ------------------------------------------------------------------ other reshape-like

def layout_ref(x, src, dst):
    """Primal-letter permutation plus split/merge of one axis (spec 6.7)."""
    def parse(s):
        dims, i = [], 0
        while i < len(s):
            j = i
            while s[j].isdigit():
                j += 1
            dims.append((s[j], int(s[i:j]) if j > i else None))
            i = j + 1
        return dims
    sd, dd = parse(src), parse(dst)
    y = x
    # move each split sub-axis next to its primal and merge
    cur = [c if f is None else c.lower() for c, f in sd]
    for c, f in sd:
        if f is None:
            continue
        p, q = cur.index(c.upper()), cur.index(c)
        y = np.moveaxis(y, q, p + 1)
        cur.insert(p + 1 if q > p else p, cur.pop(q))
        p = cur.index(c.upper())
        shp = list(y.shape)
        shp[p:p + 2] = [shp[p] * shp[p + 1]]
        y = y.reshape(shp)
        cur.pop(p + 1)
    # permute primal letters to dst's primal order
    dprim = [c for c, f in dd if f is None]
    y = np.transpose(y, [cur.index(c) for c in dprim])
    cur = dprim
    # split for dst sub-axes
    for c, f in dd:
        if f is None:
            continue
        p = cur.index(c.upper())
        ext = y.shape[p]
        outer = -(-ext // f)
        pad = [(0, 0)] * y.ndim
        pad[p] = (0, outer * f - ext)
        y = np.pad(y, pad)
        shp = list(y.shape)
        shp[p:p + 1] = [outer, f]
        y = y.reshape(shp)
        cur = cur[:p + 1] + [c] + cur[p + 1:]
    order = [cur.index(c) for c, f in dd]
    return np.ascontiguousarray(np.transpose(y, order))


def reshape_like_cases(rng, n):
    for k in range(n):
        dt = pick_dtype(rng, k)
        shape = rand_shape(rng, max_rank=4)
        nd = len(shape)
        x = rand_array(rng, shape, dt)
        op = k % 7
        if op == 0:
            axis = int(rng.integers(-nd - 1, nd + 1))
            num = int(rng.integers(0, 3))
            pivot = axis + nd + 1 if axis < 0 else axis
            want = x.reshape(shape[:pivot] + (1,) * num + shape[pivot:])
            attrs = {"axis": axis} if num == 1 else {"axis": axis, "num_newaxis": num}
            yield Case(FAMILY, f"expand_dims {dt} {shape} {attrs}", [("x", x)], call("expand_dims", ["%x"], **attrs), want)
        elif op == 1:
            ones = [i for i, d in enumerate(shape) if d == 1]
            if ones and rng.random() < 0.6:
                ax = [int(a) - (nd if rng.random() < 0.5 else 0)
                      for a in rng.choice(ones, size=int(rng.integers(1, len(ones) + 1)), replace=False)]
                yield Case(FAMILY, f"squeeze {dt} {shape} axis={ax}", [("x", x)], call("squeeze", ["%x"], axis=ax),
                           np.squeeze(x, axis=tuple(ax)))
            else:
                yield Case(FAMILY, f"squeeze {dt} {shape}", [("x", x)], call("squeeze", ["%x"]), np.squeeze(x))
        elif op == 2:
            if rng.random() < 0.3:
                yield Case(FAMILY, f"transpose {dt} {shape} None", [("x", x)], call("transpose", ["%x"]),
                           np.transpose(x))
            else:
                perm = [int(p) - (nd if rng.random() < 0.3 else 0) for p in rng.permutation(nd)]
                yield Case(FAMILY, f"transpose {dt} {shape} {perm}", [("x", x)], call("transpose", ["%x"], axes=perm),
                           np.transpose(x, [p % nd for p in perm]) if nd else x.copy())
        elif op == 3 and nd >= 1:
            want = x.reshape((shape[0], -1)) if nd else x
            yield Case(FAMILY, f"batch_flatten {dt} {shape}", [("x", x)], call("nn.batch_flatten", ["%x"]), want)
        elif op == 4:
            like_shape = (int(np.prod(shape)),) if rng.random() < 0.5 else tuple(reversed(shape))
            like = np.zeros(like_shape, "float32")
            yield Case(FAMILY, f"reshape_like {dt} {shape}->{like_shape}", [("x", x), ("l", like)],
                       call("reshape_like", ["%x", "%l"]), x.reshape(like_shape))
        elif op == 5 and nd >= 2:
            # replace data dims [1, nd) by like dims [0, 1) of a (prod, 7) like tensor
            p = int(np.prod(shape[1:]))
            like = np.zeros((p, 7), "int8")
            yield Case(FAMILY, f"reshape_like ranges {dt} {shape}", [("x", x), ("l", like)],
                       call("reshape_like", ["%x", "%l"], lhs_begin=1, rhs_end=1), x.reshape((shape[0], p)))
        elif op == 6:
            x = rand_array(rng, (int(rng.integers(1, 3)), 8, 3, 2), dt)
            for src, dst in [("NCHW", "NHWC"), ("NCHW", "NCHW4c"), ("NCHW", "NCHW3c"), ("NCHW", "HWCN")]:
                yield Case(FAMILY, f"layout_transform {dt} {x.shape} {src}->{dst}", [("x", x)],
                           call("layout_transform", ["%x"], src_layout=src, dst_layout=dst),
                           lambda x=x, s=src, d=dst: layout_ref(x, s, d))
            y = layout_ref(x, "NCHW", "NCHW4c")
            yield Case(FAMILY, f"layout_transform {dt} NCHW4c->NCHW", [("x", y)],
                       call("layout_transform", ["%x"], src_layout="NCHW4c", dst_layout="NCHW"), x.copy())
            yield Case(FAMILY, f"layout_transform {dt} NCHW4c->NHWC", [("x", y)],
                       call("layout_transform", ["%x"], src_layout="NCHW4c", dst_layout="NHWC"),
                       np.transpose(x, (0, 2, 3, 1)))
    x = rand_array(rng, (2, 1), "float32")
    yield Case(FAMILY, "squeeze non-1 axis", [("x", x)], call("squeeze", ["%x"], axis=[0]), TYPE_ERROR)
    yield Case(FAMILY, "transpose duplicate", [("x", x)], call("transpose", ["%x"], axes=[0, 0]), TYPE_ERROR)
    yield Case(FAMILY, "expand_dims out of range", [("x", x)], call("expand_dims", ["%x"], axis=4), TYPE_ERROR)


# ------------------------------------------------------------------ join / split

def join_cases(rng, n):
    for k in range(n):
        dt = pick_dtype(rng, k)
        shape = rand_shape(rng, rank=int(rng.integers(1, 5)))
        nd = len(shape)
        cnt = int(rng.integers(1, 4))
        kind = k % 3
        if kind == 0:
            axis = int(rng.integers(-nd, nd))
            xs = []
            for i in range(cnt):
                s = list(shape)
                s[axis] = int(rng.integers(1, 4))
                xs.append(rand_array(rng, tuple(s), dt))
            names = [f"x{i}" for i in range(cnt)]
            tup = "(" + ", ".join("%" + nm for nm in names) + ("," if cnt == 1 else "") + ")"
            attrs = {} if axis == 0 and rng.random() < 0.5 else {"axis": axis}
            yield Case(FAMILY, f"concatenate {dt} {[x.shape for x in xs]} {attrs}", list(zip(names, xs)),
                       call("concatenate", [tup], **attrs), np.concatenate(xs, axis=axis))
        elif kind == 1:
            axis = int(rng.integers(-nd - 1, nd + 1))
            xs = [rand_array(rng, shape, dt) for _ in range(cnt)]
            names = [f"x{i}" for i in range(cnt)]
            tup = "(" + ", ".join("%" + nm for nm in names) + ("," if cnt == 1 else "") + ")"
            yield Case(FAMILY, f"stack {dt} {shape}x{cnt} axis={axis}", list(zip(names, xs)),
                       call("stack", [tup], axis=axis), np.stack(xs, axis=axis))
        else:
            axis = int(rng.integers(-nd, nd))
            s = list(shape)
            s[axis] = int(rng.choice([1, 2, 4, 6, 7]))
            x = rand_array(rng, tuple(s), dt)
            dim = s[axis]
            if rng.random() < 0.5:
                divs = [d for d in range(1, dim + 1) if dim % d == 0]
                ios = int(rng.choice(divs))
                want = tuple(np.split(x, ios, axis=axis))
            else:
                cuts = sorted({int(c) for c in rng.integers(1, dim, size=int(rng.integers(1, 3)))}) if dim > 1 else []
                ios = cuts
                want = tuple(np.split(x, cuts, axis=axis))
            attrs = {"indices_or_sections": ios}
            if axis != 0:
                attrs["axis"] = axis
            yield Case(FAMILY, f"split {dt} {tuple(s)} {attrs}", [("x", x)], call("split", ["%x"], **attrs), want)
    x = rand_array(rng, (4, 6), "float32")
    yield Case(FAMILY, "split not divisible", [("x", x)], call("split", ["%x"], indices_or_sections=3), TYPE_ERROR)
    yield Case(FAMILY, "split indices past end", [("x", x)], call("split", ["%x"], indices_or_sections=[2, 4]),
               TYPE_ERROR)
    yield Case(FAMILY, "concatenate mismatch", [("a", x), ("b", rand_array(rng, (3, 5), "float32"))],
               call("concatenate", ["(%a, %b)"], axis=1), TYPE_ERROR)


# ------------------------------------------------------------------ broadcast, tile, repeat, reverse

def tile_cases(rng, n):
    for k in range(n):
        dt = pick_dtype(rng, k)
        shape = rand_shape(rng, max_rank=3)
        nd = len(shape)
        x = rand_array(rng, shape, dt)
        kind = k % 5
        if kind == 0:
            out = list(shape)
            out = [d if d != 1 or rng.random() < 0.5 else int(rng.integers(1, 4)) for d in out]
            out = [int(d) for d in rng.integers(1, 3, size=int(rng.integers(0, 2)))] + out
            for_like = np.zeros(out, x.dtype)  # TVM's relation: like and data share the dtype
            yield Case(FAMILY, f"broadcast_to {dt} {shape}->{out}", [("x", x)],
                       call("broadcast_to", ["%x"], shape=out), np.broadcast_to(x, out).copy())
            yield Case(FAMILY, f"broadcast_to_like {dt} {shape}->{out}", [("x", x), ("l", for_like)],
                       call("broadcast_to_like", ["%x", "%l"]), np.broadcast_to(x, out).copy())
        elif kind == 1:
            reps = [int(r) for r in rng.integers(1, 4, size=int(rng.integers(1, 5)))]
            yield Case(FAMILY, f"tile {dt} {shape} {reps}", [("x", x)], call("tile", ["%x"], reps=reps),
                       np.tile(x, reps))
        elif kind == 2 and nd:
            axis = int(rng.integers(-nd, nd))
            r = int(rng.integers(1, 4))
            yield Case(FAMILY, f"repeat {dt} {shape} {r} axis={axis}", [("x", x)],
                       call("repeat", ["%x"], repeats=r, axis=axis), np.repeat(x, r, axis=axis))
        elif kind == 3 and nd:
            axis = int(rng.integers(-nd, nd))
            yield Case(FAMILY, f"reverse {dt} {shape} axis={axis}", [("x", x)], call("reverse", ["%x"], axis=axis),
                       np.flip(x, axis=axis).copy())
        elif kind == 4 and nd:
            like_shape = tuple(int(rng.integers(1, d + 1)) for d in shape)
            like = np.zeros(like_shape, "float32")
            if rng.random() < 0.5:
                axes = sorted(int(a) for a in rng.choice(nd, size=int(rng.integers(1, nd + 1)), replace=False))
                sl = tuple(slice(0, like_shape[i]) if i in axes else slice(None) for i in range(nd))
                yield Case(FAMILY, f"slice_like {dt} {shape} {like_shape} axes={axes}", [("x", x), ("l", like)],
                           call("slice_like", ["%x", "%l"], axes=axes), x[sl].copy())
            else:
                sl = tuple(slice(0, d) for d in like_shape)
                yield Case(FAMILY, f"slice_like {dt} {shape} {like_shape}", [("x", x), ("l", like)],
                           call("slice_like", ["%x", "%l"]), x[sl].copy())
    x = rand_array(rng, (2, 3), "float32")
    yield Case(FAMILY, "broadcast_to incompatible", [("x", x)], call("broadcast_to", ["%x"], shape=[3, 3]), TYPE_ERROR)


# ------------------------------------------------------------------ creation

LIT = {"float32": "f", "float64": "f64", "float16": "f16", "int32": "", "int64": "i64", "int16": "i16"}


def lit(v, dt):
    if dt == "bool":
        return "True" if v else "False"
    if is_float(dt):
        return f"{float(v)!r}{LIT[dt]}"
    return f"{int(v)}{LIT[dt]}"


def creation_cases(rng, n):
    for k in range(n):
        dt = pick_dtype(rng, k)
        shape = list(rand_shape(rng, max_rank=3))
        kind = k % 4
        if kind == 0:
            op = ["zeros", "ones"][k % 8 // 4]
            f = np.zeros if op == "zeros" else np.ones
            yield Case(FAMILY, f"{op} {dt} {shape}", [], call(op, [], shape=shape, dtype=dt), f(shape, dt))
        elif kind == 1:
            v = rand_array(rng, (), dt, special=False)
            fill_dt = dt
            attrs = {"shape": shape}
            if rng.random() < 0.4:
                fill_dt = str(rng.choice(["float32", "int32", "float64"]))
                v = np.array(v).astype(fill_dt) if dt != "bool" else np.array(1.7, fill_dt)
                attrs["dtype"] = dt
            def ref(v=v, dt=dt, shape=shape):
                from fam_elemwise import cast_ref
                return np.broadcast_to(cast_ref(np.asarray(v), dt), shape).copy()
            yield Case(FAMILY, f"full {fill_dt}->{dt} {shape}", [("v", np.asarray(v))],
                       call("full", ["%v"], **attrs), ref)
        elif kind == 2:
            x = rand_array(rng, tuple(shape), dt)
            v = np.array(rng.standard_normal() * 5, "float32")
            from fam_elemwise import cast_ref
            yield Case(FAMILY, f"full_like {dt} {shape}", [("x", x), ("v", v)], call("full_like", ["%x", "%v"]),
                       lambda x=x, v=v, dt=dt: np.broadcast_to(cast_ref(v, dt), x.shape).copy())
        else:
            adt = ["float32", "int32", "int64", "float64", "float16", "int16"][k % 6]
            if is_float(adt):
                start, stop, step = [(0.0, 5.0, 1.0), (1.0, 10.0, 2.5), (5.0, -3.0, -0.75), (-2.5, 2.5, 0.5)][k % 4]
            else:
                start, stop, step = [(0, 10, 3), (10, 0, -2), (-5, 5, 1), (3, 4, 7)][k % 4]
            nn = int(np.ceil((stop - start) / step))
            cdt = np.float32 if adt == "float16" else adt
            want = (np.array(start, cdt) + np.arange(nn).astype(cdt) * np.array(step, cdt)).astype(adt)
            yield Case(FAMILY, f"arange {adt} {start} {stop} {step}", [],
                       call("arange", [lit(start, adt), lit(stop, adt), lit(step, adt)], dtype=adt), want)
    for k in range(max(4, n // 4)):
        shape = rand_shape(rng, rank=int(rng.integers(1, 4)))
        x = rand_array(rng, shape, "float32")
        odt = ["int32", "int64"][k % 2]
        attrs = {"dtype": odt} if k % 3 else {}
        yield Case(FAMILY, f"shape_of {shape} {attrs}", [("x", x)], call("shape_of", ["%x"], **attrs),
                   np.array(shape, odt if attrs else "int32"))
        yield Case(FAMILY, f"ndarray_size {shape} {attrs}", [("x", x)], call("ndarray_size", ["%x"], **attrs),
                   np.array(int(np.prod(shape)), odt if attrs else "int32"))
    yield Case(FAMILY, "arange empty", [], call("arange", ["5f", "1f", "1f"], dtype="float32"), ERROR)
    yield Case(FAMILY, "full non-scalar fill", [("v", np.zeros((2,), "float32"))],
               call("full", ["%v"], shape=[2]), TYPE_ERROR)


def cases(rng, thorough):
    m = 4 if thorough else 1
    yield from reshape_cases(rng, 60 * m)
    yield from reshape_like_cases(rng, 80 * m)
    yield from join_cases(rng, 60 * m)
    yield from tile_cases(rng, 60 * m)
    yield from creation_cases(rng, 40 * m)
