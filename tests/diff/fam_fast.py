"""Fast-math family (spec/passes.md 11.3): fast_exp, fast_tanh, fast_erf and nn.fast_softmax.

The reference evaluates TVM's expressions in numpy float32 arithmetic, one rounding per operation
(no fused multiply-add), with TVM's min/max as the selects `a < b ? a : b` / `a > b ? a : b` in
TVM's operand order, so float32 results must agree bit for bit (rtol = atol = 0) — NaN, infinities,
the fast_exp underflow to 0 below about -88.03 and fast_erf(NaN) = 1 included. float16 fast_erf is
the same expression in float16 arithmetic; the other dtypes (float64; float16 for fast_exp and
fast_tanh) use the exact functions. nn.fast_softmax is the max-shifted softmax with fast_exp (its
sum is compared with the float32 tolerance)."""
import math

import numpy as np

from diffcore import RUN_ERROR, Case, call, rand_array, rand_shape

FAMILY = "fast"

f32 = np.float32


def sel_min(a, b):
    return np.where(a < b, a, b)


def sel_max(a, b):
    return np.where(a > b, a, b)


EXP_P = [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
         5.0000001201e-1]
TANH_A = [4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05, 5.12229709037114e-08,
          -8.60467152213735e-11, 2.00018790482477e-13, -2.76076847742355e-16]
TANH_B = [4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06]
ERF_A = [-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04, -5.69250639462346e-05,
         -2.10102402082508e-06, 2.77068142495902e-08, -2.72614225801306e-10]
ERF_B = [-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03, -2.13374055278905e-04,
         -1.45660718464996e-05]


def fast_exp32(x0):
    x0 = np.asarray(x0, f32)
    x = sel_max(sel_min(x0, f32(88.3762626647950)), f32(-88.3762626647949))
    n = np.floor(x * f32(1.44269504088896341) + f32(0.5)).astype(f32)
    fr = (x - n * f32(0.6931471805599453)).astype(f32)
    p = [f32(c) for c in EXP_P]
    y = p[0] * fr + p[1]
    for c in p[2:]:
        y = y * fr + c
    y = y * fr * fr + fr + f32(1)
    ef = np.left_shift(np.atleast_1d(n + f32(127)).astype(np.int32), np.int32(23)).view(f32).reshape(n.shape)
    return sel_max(ef * y, x0).astype(f32)


def rational(x, a, b, t):
    """x·(a1 + x²(a3 + ...)) / (b0 + x²(b2 + ...)) in dtype t, TVM's Horner order."""
    a = [t(c) for c in a]
    b = [t(c) for c in b]
    x2 = (x * x).astype(t)
    p = (x2 * a[-1] + a[-2]).astype(t)
    for c in reversed(a[:-2]):
        p = (x2 * p + c).astype(t)
    p = (x * p).astype(t)
    q = (x2 * b[-1] + b[-2]).astype(t)
    for c in reversed(b[:-2]):
        q = (x2 * q + c).astype(t)
    return (p / q).astype(t)


def fast_tanh32(x):
    x = sel_max(f32(-9), sel_min(f32(9), np.asarray(x, f32)))
    return rational(x, TANH_A, TANH_B, f32)


def fast_erf_t(x, t):
    x = sel_max(sel_min(np.asarray(x, t), t(4)), t(-4)).astype(t)
    return rational(x, ERF_A, ERF_B, t)


def erf64(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


def reference(op, x):
    dt = x.dtype
    if op == "fast_exp":
        return fast_exp32(x) if dt == np.float32 else np.exp(x.astype(np.float64)).astype(dt)
    if op == "fast_tanh":
        return fast_tanh32(x) if dt == np.float32 else np.tanh(x.astype(np.float64)).astype(dt)
    if dt in (np.float32, np.float16):
        return fast_erf_t(x, dt.type)
    return erf64(x).astype(dt)


EDGES = np.array([0.0, -0.0, 0.5, -1.25, 3.0, 4.0, -4.0, 9.0, -9.0, 9.5, 20.0, -20.0, 88.0, 88.3, 88.4,
                  89.0, 100.0, -87.5, -88.0, -88.1, -88.3, -88.5, -100.0, np.inf, -np.inf, np.nan,
                  1e-8, -1e-8, 1e-3, 1e-40, -1e-40, 3.4e38], np.float32)


def fast_softmax_ref(x, axis):
    m = x.max(axis=axis, keepdims=True)
    e = fast_exp32((x - m).astype(f32)).astype(np.float64)
    return (e / e.sum(axis=axis, keepdims=True)).astype(f32)


def cases(rng, thorough):
    n = 40 if thorough else 10
    with np.errstate(all="ignore"):
        for op in ("fast_exp", "fast_tanh", "fast_erf"):
            x = EDGES.copy()
            yield Case(FAMILY, f"{op} float32 edges", [("x", x)], call(op, ["%x"]), reference(op, x), 0, 0)
            lo, hi = {"fast_exp": (-95, 95), "fast_tanh": (-12, 12), "fast_erf": (-5, 5)}[op]
            for k in range(n):
                shape = rand_shape(rng, max_rank=3)
                x = rand_array(rng, shape, "float32", lo=lo, hi=hi, special=k % 3 == 0)
                yield Case(FAMILY, f"{op} float32 {shape}", [("x", x)], call(op, ["%x"]),
                           reference(op, x), 0, 0)
            for dt in ("float16", "float64"):
                x = rand_array(rng, rand_shape(rng, max_rank=3), dt, lo=-6, hi=6)
                exact = dt == "float16" and op == "fast_erf"
                yield Case(FAMILY, f"{op} {dt} {x.shape}", [("x", x)], call(op, ["%x"]), reference(op, x),
                           0 if exact else None, 0 if exact else None)
        x = rand_array(rng, (3,), "int32")
        yield Case(FAMILY, "fast_exp int32 rejected", [("x", x)], call("fast_exp", ["%x"]), RUN_ERROR)
        for k in range(n):
            shape = rand_shape(rng, rank=int(rng.integers(1, 4)), max_dim=7)
            axis = int(rng.integers(-len(shape), len(shape)))
            x = rand_array(rng, shape, "float32") * f32(1 if k % 3 else 40)
            yield Case(FAMILY, f"nn.fast_softmax float32 {shape} axis={axis}", [("x", x)],
                       call("nn.fast_softmax", ["%x"], axis=axis), fast_softmax_ref(x, axis), 1e-6, 1e-7)
        x = np.array([[0, -88.2, -1]], np.float32)
        yield Case(FAMILY, "nn.fast_softmax underflows like fast_exp", [("x", x)], call("nn.fast_softmax", ["%x"]),
                   fast_softmax_ref(x, -1), 1e-6, 0)
