"""dyn.* family (spec/passes.md 11.6): the dynamic operators against numpy references of their static
twins' semantics, with the shape-like attributes passed as tensors — dyn.reshape, dyn.squeeze,
dyn.expand_dims, dyn.tile, dyn.broadcast_to, dyn.zeros / dyn.ones / dyn.full, dyn.one_hot,
dyn.topk, dyn.strided_slice, dyn.nn.pad, dyn.nn.upsampling and dyn.nn.upsampling3d (nearest
neighbour, integer scales: numpy repeat), dyn.sparse_to_dense — plus the static nn.upsampling3d and
sparse_to_dense they become. Shape-like inputs may have any numeric dtype (floats truncate); bad
ones must be rejected (type error or run-time error)."""
import numpy as np

from diffcore import (ERROR, FLOATS, TYPE_ERROR, Case, call, rand_array, rand_shape)
from fam_grad import reshape_dims

FAMILY = "dyn"


def iv(v, dt="int64"):
    return np.array(v, dt)


def sparse_ref(ix, vals, dflt, shape):
    out = np.full(shape, dflt, vals.dtype)
    rows = ix.reshape(-1, 1) if ix.ndim <= 1 else ix
    for j, row in enumerate(rows):
        if all(0 <= int(q) < shape[a] for a, q in enumerate(row)):
            out[tuple(int(q) for q in row)] = vals if vals.ndim == 0 else vals[j]
    return out


def cases(rng, thorough):
    m = 3 if thorough else 1
    for k in range(8 * m):
        dt = (FLOATS + ["int32", "int8"])[k % 5]
        shape = rand_shape(rng, rank=int(rng.integers(1, 4)), max_dim=4)
        x = rand_array(rng, shape, dt)
        # reshape by a permuted flat shape, with 0 / -1 specials
        ns = [0] * min(1, len(shape)) + [-1]
        out = tuple(reshape_dims(list(shape), ns))
        yield Case(FAMILY, f"dyn.reshape {dt} {shape} {ns}", [("x", x), ("s", iv(ns))], "dyn.reshape(%x, %s)",
                   x.reshape(out))
        reps = [int(r) for r in rng.integers(1, 3, size=int(rng.integers(1, 4)))]
        yield Case(FAMILY, f"dyn.tile {dt} {shape} {reps}", [("x", x), ("r", iv(reps, "int32"))], "dyn.tile(%x, %r)",
                   np.tile(x, reps))
        tgt = (2,) + tuple(shape)
        yield Case(FAMILY, f"dyn.broadcast_to {dt} {shape} -> {tgt}", [("x", x), ("s", iv(tgt))],
                   "dyn.broadcast_to(%x, %s)", np.broadcast_to(x, tgt).copy())
        ax = int(rng.integers(-len(shape) - 1, len(shape) + 1))
        piv = ax if ax >= 0 else ax + len(shape) + 1
        yield Case(FAMILY, f"dyn.expand_dims {dt} {shape} axis={ax}", [("x", x), ("a", np.array(ax, "int32"))],
                   call("dyn.expand_dims", ["%x", "%a"], num_newaxis=2),
                   x.reshape(shape[:piv] + (1, 1) + shape[piv:]))
    x = rand_array(rng, (1, 3, 1, 2), "float32")
    yield Case(FAMILY, "dyn.squeeze", [("x", x), ("a", iv([0, -2], "int32"))], "dyn.squeeze(%x, %a)", x.reshape(3, 2))
    yield Case(FAMILY, "dyn.squeeze of a non-1 axis", [("x", x), ("a", iv([1], "int32"))], "dyn.squeeze(%x, %a)", ERROR)
    for dt in ["float16", "int8", "bool"]:
        yield Case(FAMILY, f"dyn.zeros {dt}", [("s", iv([2, 3]))], call("dyn.zeros", ["%s"], dtype=dt), np.zeros((2, 3), dt))
        yield Case(FAMILY, f"dyn.ones {dt}", [("s", iv([4]))], call("dyn.ones", ["%s"], dtype=dt), np.ones((4,), dt))
    f = np.array(2.5, "float32")
    yield Case(FAMILY, "dyn.full", [("f", f), ("s", iv([3, 1]))], "dyn.full(%f, %s)", np.full((3, 1), 2.5, "float32"))
    yield Case(FAMILY, "dyn.full float64", [("f", f), ("s", iv([2]))], call("dyn.full", ["%f", "%s"], dtype="float64"),
               np.full((2,), 2.5))
    ix = np.array([[0, 2], [1, 3]], "int32")
    on, off = np.array(1.0, "float32"), np.array(-1.0, "float32")
    ref = np.where(np.arange(4)[None, None, :] == ix[..., None], 1.0, -1.0).astype("float32")
    yield Case(FAMILY, "dyn.one_hot", [("i", ix), ("on", on), ("off", off), ("d", np.array(4, "int64"))],
               "dyn.one_hot(%i, %on, %off, %d)", ref)
    x = rand_array(rng, (3, 9), "float32")
    kk = 4
    order = np.argsort(-x, axis=-1, kind="stable")[:, :kk]
    yield Case(FAMILY, "dyn.topk values", [("x", x), ("k", np.array(kk, "int32"))],
               call("dyn.topk", ["%x", "%k"], ret_type="values"), np.take_along_axis(x, order, -1))
    x = rand_array(rng, (5, 6, 7), "float64")
    for b, e, s in [([1, 0], [4, 6], [2, 3]), ([-1, 5], [0, 0], [-1, -2]), ([0, 0, 0], [5, 6, 7], [1, 1, 1])]:
        sl = tuple(slice(bb, ee, ss) for bb, ee, ss in zip(b, e, s))
        yield Case(FAMILY, f"dyn.strided_slice {b} {e} {s}", [("x", x), ("b", iv(b, "int32")), ("e", iv(e, "int32")),
                                                              ("s", iv(s, "int32"))],
                   "dyn.strided_slice(%x, %b, %e, %s)", x[sl])
    x = rand_array(rng, (2, 3), "float32")
    pw = np.array([[1, 0], [2, 1]], "int64")
    for mode in ["constant", "edge", "reflect"]:
        npm = {"constant": "constant", "edge": "edge", "reflect": "reflect"}[mode]
        kw = {"constant_values": 9.0} if mode == "constant" else {}
        yield Case(FAMILY, f"dyn.nn.pad {mode}", [("x", x), ("p", pw), ("v", np.array(9, "float32"))],
                   call("dyn.nn.pad", ["%x", "%p", "%v"], pad_mode=mode), np.pad(x, pw, mode=npm, **kw))
    yield Case(FAMILY, "dyn.nn.pad width of the wrong shape", [("x", x), ("p", np.zeros((3, 2), "int64")),
                                                             ("v", np.array(0, "float32"))], "dyn.nn.pad(%x, %p, %v)", TYPE_ERROR)
    x = rand_array(rng, (1, 2, 3, 4), "float32")
    yield Case(FAMILY, "dyn.nn.upsampling nearest x2 x3", [("x", x), ("a", np.array(2.0)), ("b", np.array(3.0))],
               "dyn.nn.upsampling(%x, %a, %b)", x.repeat(2, axis=2).repeat(3, axis=3))
    x5 = rand_array(rng, (1, 2, 2, 3, 2), "float32")
    ref5 = x5.repeat(2, axis=2).repeat(1, axis=3).repeat(3, axis=4)
    yield Case(FAMILY, "nn.upsampling3d nearest", [("x", x5)],
               call("nn.upsampling3d", ["%x"], scale_d=2.0, scale_h=1.0, scale_w=3.0, coordinate_transformation_mode="asymmetric"),
               ref5)
    yield Case(FAMILY, "dyn.nn.upsampling3d nearest", [("x", x5), ("a", np.array(2.0, "float32")),
                                                      ("b", np.array(1.0, "float32")), ("c", np.array(3.0, "float32"))],
               call("dyn.nn.upsampling3d", ["%x", "%a", "%b", "%c"], coordinate_transformation_mode="asymmetric"), ref5)
    for ix, vals, shape in [(np.array([[0, 0], [1, 2]], "int32"), np.array([1, 2], "float32"), (3, 4)),
                            (np.array([3, 1, 3, 9], "int64"), np.array([1, 2, 3, 4], "float32"), (5,)),
                            (np.array([[1]], "int32"), np.array(5, "float32"), (2, 3))]:
        d = np.array(-1, "float32")
        ref = sparse_ref(ix, vals, -1, shape)
        yield Case(FAMILY, f"sparse_to_dense {ix.shape} -> {shape}", [("i", ix), ("v", vals), ("d", d)],
                   call("sparse_to_dense", ["%i", "%v", "%d"], output_shape=list(shape)), ref)
        yield Case(FAMILY, f"dyn.sparse_to_dense {ix.shape} -> {shape}", [("i", ix), ("v", vals), ("d", d),
                                                                         ("s", iv(shape))],
                   "dyn.sparse_to_dense(%i, %v, %d, %s)", ref)
    x = rand_array(rng, (2, 3), "float32")
    # any numeric dtype, as TVM's relations (none checks a dtype); floats truncate
    yield Case(FAMILY, "dyn.reshape by a float vector", [("x", x), ("s", np.array([6.7]))], "dyn.reshape(%x, %s)",
               x.reshape(6))
    yield Case(FAMILY, "dyn.reshape by a bool vector", [("x", x), ("s", np.array([True]))], "dyn.reshape(%x, %s)",
               TYPE_ERROR)
    yield Case(FAMILY, "dyn.reshape to a wrong count", [("x", x), ("s", iv([4, 2]))], "dyn.reshape(%x, %s)", ERROR)
