"""Gradient-helper family (spec/gradient.md 5, spec/passes.md 11.4-11.5): the operators the passes and
the gradient rules emit — collapse_sum_like / collapse_sum_to, contrib_reverse_reshape,
nn.cross_entropy(_with_logits), the annotations (on_device, device_copy, annotation.stop_fusion,
annotation.checkpoint). References are written from the spec: collapse_sum is numpy's sum over the
axes along which the target broadcasts, reshaped to the target; reverse reshape applies reshape's
special values to the reversed shapes; the losses are the flat sums over N = x.shape[0]."""
import numpy as np

from diffcore import (FLOATS, INTS, TYPE_ERROR, Case, call, rand_array, rand_shape, is_float)
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


def cases(rng, thorough):
    m = 4 if thorough else 1
    yield from collapse_cases(rng, 40 * m)
    yield from reverse_reshape_cases(rng)
    yield from xent_cases(rng, 9 * m)
    yield from annotation_cases(rng)
