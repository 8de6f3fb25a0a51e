"""Elementwise family: binary arithmetic (spec/ops.md 3.1, incl. the integer division rules),
comparisons (3.2, ordered NaN), unary math (4.1), activations and clamps (4.2), casts (4.3 and
section 2)."""
import math

import numpy as np

from diffcore import (ALL, ERROR, FLOATS, INTS, SINTS, TYPE_ERROR, RUN_ERROR, Case, call,
                      rand_array, broadcast_pair, rand_shape, is_float, is_int)

FAMILY = "elemwise"


# ------------------------------------------------------------------ exact integer helpers

def wrap(v, dt):
    """Python int -> the dtype's two's-complement value."""
    info = np.iinfo(dt)
    bits = 8 * np.dtype(dt).itemsize
    v &= (1 << bits) - 1
    if info.min < 0 and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def int_binop(a, b, f):
    """f on Python ints with broadcasting, wrapped back to a's dtype."""
    dt = a.dtype
    a2, b2 = np.broadcast_arrays(a, b)
    out = np.empty(a2.shape, dtype=dt)
    for idx in np.ndindex(a2.shape):
        out[idx] = wrap(f(int(a2[idx]), int(b2[idx])), dt)
    return out


def tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def tmod(x, y):
    return x - tdiv(x, y) * y


INT_BIN = {
    "add": lambda x, y: x + y,
    "subtract": lambda x, y: x - y,
    "multiply": lambda x, y: x * y,
    "divide": tdiv,
    "trunc_divide": tdiv,
    "floor_divide": lambda x, y: x // y,
    "mod": tmod,
    "trunc_mod": tmod,
    "floor_mod": lambda x, y: x - (x // y) * y,
    "maximum": lambda x, y: x if x > y else y,
    "minimum": lambda x, y: x if x < y else y,
    "bitwise_and": lambda x, y: x & y,
    "bitwise_or": lambda x, y: x | y,
    "bitwise_xor": lambda x, y: x ^ y,
    "left_shift": lambda x, y: x << y,
    "right_shift": lambda x, y: x >> y,
}


def compute_dtype(dt):
    """Floats compute in their own type, float16 in float32 (spec section 2)."""
    return np.float32 if np.dtype(dt) == np.float16 else dt


def float_bin(op, a, b):
    dt = a.dtype
    c = compute_dtype(dt)
    x, y = a.astype(c), b.astype(c)
    if op == "add": r = x + y
    elif op == "subtract": r = x - y
    elif op == "multiply": r = x * y
    elif op in ("divide",): r = x / y
    elif op == "floor_divide": r = np.floor(x / y)
    elif op == "trunc_divide": r = np.trunc(x / y)
    elif op == "mod": r = np.fmod(x, y)
    elif op == "floor_mod": r = x - np.floor(x / y) * y
    elif op == "trunc_mod": r = x - np.trunc(x / y) * y
    elif op == "power": r = np.power(x.astype(np.float64), y.astype(np.float64))
    elif op == "maximum": r = np.where(x > y, x, y)
    elif op == "minimum": r = np.where(x < y, x, y)
    else: raise KeyError(op)
    return np.asarray(r).astype(dt)


def compare_ref(op, a, b):
    with np.errstate(all="ignore"):
        r = {"equal": np.equal, "less": np.less, "less_equal": np.less_equal,
             "greater": np.greater, "greater_equal": np.greater_equal}.get(op)
        if r is not None:
            return np.asarray(r(a, b))
        return np.asarray((a != b) & ~np.isnan(a.astype(np.float64) if is_float(a.dtype) else a * 0 == 1)
                          & ~np.isnan(b.astype(np.float64) if is_float(b.dtype) else b * 0 == 1))


# ------------------------------------------------------------------ binary

ARITH = ["add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide", "mod", "floor_mod",
         "trunc_mod", "maximum", "minimum"]
DIVS = {"divide", "floor_divide", "trunc_divide", "mod", "floor_mod", "trunc_mod"}
CMPS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


def binary_cases(rng, n):
    for k in range(n):
        op = ARITH[k % len(ARITH)] if k % 3 else str(rng.choice(ARITH))
        dt = ALL[k % (len(ALL) - 1)] if k % 5 else str(rng.choice(ALL[:-1]))
        sa, sb = broadcast_pair(rng)
        special = rng.random() < 0.5
        a = rand_array(rng, sa, dt, special=special)
        b = rand_array(rng, sb, dt, special=special)
        if is_int(dt):
            if op in DIVS:
                b[b == 0] = 1 if np.iinfo(dt).min == 0 else -1
            ref = (lambda op=op, a=a, b=b: int_binop(a, b, INT_BIN[op]))
            rtol = atol = None
        else:
            if op in DIVS and rng.random() < 0.7:
                b[b == 0] = 0.5
            ref = (lambda op=op, a=a, b=b: float_bin(op, a, b))
            rtol = atol = None
            if op in ("floor_mod", "trunc_mod"):
                # a - q*b has an absolute error of ~eps*|a| (spec formula, not fmod)
                scale = float(np.nanmax(np.abs(np.where(np.isfinite(a), a, 0)), initial=1))
                atol = scale * (4e-3 if dt == "float16" else 1e-6 if dt == "float32" else 1e-14)
            if op in ("floor_divide", "trunc_divide", "floor_mod", "trunc_mod") and special:
                # inf/nan through the formula: keep finite values only
                a[~np.isfinite(a)] = 1.5
                b[~np.isfinite(b)] = -2.5
        yield Case(FAMILY, f"{op} {dt} {sa}x{sb}", [("a", a), ("b", b)], call(op, ["%a", "%b"]), ref, rtol, atol)


def int_edge_cases(rng):
    """INT_MIN / -1, mixed signs, division by zero, wrap-around."""
    for dt in SINTS:
        info = np.iinfo(dt)
        a = np.array([info.min, -7, 7, -7, 7, info.max, info.min, 0], dtype=dt)
        b = np.array([-1, 2, -2, -2, 2, -1, 1, -3], dtype=dt)
        for op in sorted(DIVS) + ["add", "subtract", "multiply"]:
            yield Case(FAMILY, f"{op} {dt} edges", [("a", a), ("b", b)], call(op, ["%a", "%b"]),
                       lambda op=op, a=a, b=b: int_binop(a, b, INT_BIN[op]))
    for dt in ["int32", "uint8", "int64"]:
        a = np.array([5, 3], dtype=dt)
        b = np.array([1, 0], dtype=dt)
        for op in ["divide", "floor_mod"]:
            yield Case(FAMILY, f"{op} {dt} by zero", [("a", a), ("b", b)], call(op, ["%a", "%b"]), RUN_ERROR)
    a = np.array([-7.5, 7.5, -7.0, 5.0, -0.0], dtype="float32")
    b = np.array([2.0, -2.0, 2.0, 0.0, 3.0], dtype="float32")
    for op in sorted(DIVS):
        yield Case(FAMILY, f"{op} float32 edges", [("a", a), ("b", b)], call(op, ["%a", "%b"]),
                   lambda op=op: float_bin(op, a, b))


def bitwise_cases(rng, n):
    ops = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
    for k in range(n):
        op = ops[k % len(ops)]
        dt = INTS[k % len(INTS)]
        sa, sb = broadcast_pair(rng, 3)
        info = np.iinfo(dt)
        a = rand_array(rng, sa, dt, lo=max(info.min, -1000), hi=min(info.max, 1000), special=True)
        if "shift" in op:
            b = rand_array(rng, sb, dt, lo=0, hi=8 * np.dtype(dt).itemsize)
        else:
            b = rand_array(rng, sb, dt, special=True)
        yield Case(FAMILY, f"{op} {dt} {sa}x{sb}", [("a", a), ("b", b)], call(op, ["%a", "%b"]),
                   lambda op=op, a=a, b=b: int_binop(a, b, INT_BIN[op]))
    for op in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
        a = np.array([True, True, False, False])
        b = np.array([True, False, True, False])
        f = {"bitwise_and": np.logical_and, "bitwise_or": np.logical_or, "bitwise_xor": np.logical_xor}[op]
        yield Case(FAMILY, f"{op} bool", [("a", a), ("b", b)], call(op, ["%a", "%b"]), f(a, b))
    for op, f in [("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)]:
        sa, sb = broadcast_pair(rng)
        a, b = rand_array(rng, sa, "bool"), rand_array(rng, sb, "bool")
        yield Case(FAMILY, f"{op} bool {sa}x{sb}", [("a", a), ("b", b)], call(op, ["%a", "%b"]), np.asarray(f(a, b)))
    for op in ["power", "left_shift", "logical_and"]:
        a = np.array([1, 2], dtype="float32" if op != "power" else "int32")
        yield Case(FAMILY, f"{op} wrong dtype", [("a", a), ("b", a)], call(op, ["%a", "%b"]), TYPE_ERROR)
    a = np.array([1, 2], dtype="float32")
    b = np.array([1, 2], dtype="float64")
    yield Case(FAMILY, "add mixed dtypes", [("a", a), ("b", b)], call("add", ["%a", "%b"]), TYPE_ERROR)
    a, b = np.zeros((2, 3), "float32"), np.zeros((3, 2), "float32")
    yield Case(FAMILY, "add bad broadcast", [("a", a), ("b", b)], call("add", ["%a", "%b"]), TYPE_ERROR)


def power_cases(rng, n):
    for k in range(n):
        dt = FLOATS[k % 3]
        sa, sb = broadcast_pair(rng, 3)
        a = rand_array(rng, sa, dt, special=k % 4 == 0)
        b = rng.choice([0.0, 1.0, 2.0, 3.0, -1.0, 0.5, -2.5, 1.7], size=sb).astype(dt)
        yield Case(FAMILY, f"power {dt} {sa}x{sb}", [("a", a), ("b", b)], call("power", ["%a", "%b"]),
                   lambda a=a, b=b: float_bin("power", a, b))


def comparison_cases(rng, n):
    for k in range(n):
        op = CMPS[k % len(CMPS)]
        dt = ALL[k % len(ALL)]
        sa, sb = broadcast_pair(rng)
        a = rand_array(rng, sa, dt, lo=-3 if is_int(dt) else None, hi=3 if is_int(dt) else None, special=True)
        b = rand_array(rng, sb, dt, lo=-3 if is_int(dt) else None, hi=3 if is_int(dt) else None, special=True)
        if is_int(dt) and np.iinfo(dt).min == 0:
            a, b = np.array(a % 4, dtype=dt), np.array(b % 4, dtype=dt)
        if is_float(dt) and a.size and b.size:
            b.reshape(-1)[0] = a.reshape(-1)[0]  # some ties
        yield Case(FAMILY, f"{op} {dt} {sa}x{sb}", [("a", a), ("b", b)], call(op, ["%a", "%b"]),
                   lambda op=op, a=a, b=b: compare_ref(op, a, b))


# ------------------------------------------------------------------ unary

def round_half_away(x):
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0)


def erf64(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


UNARY_F = {  # computed in float64 then rounded to the dtype; (function, domain)
    "sqrt": (np.sqrt, (0, 10)), "rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 10)),
    "exp": (np.exp, (-10, 10)), "log": (np.log, (0.001, 100)), "log2": (np.log2, (0.001, 100)),
    "log10": (np.log10, (0.001, 100)), "sin": (np.sin, (-6, 6)), "cos": (np.cos, (-6, 6)),
    "tan": (np.tan, (-1.5, 1.5)), "asin": (np.arcsin, (-1, 1)), "acos": (np.arccos, (-1, 1)),
    "atan": (np.arctan, (-10, 10)), "sinh": (np.sinh, (-5, 5)), "cosh": (np.cosh, (-5, 5)),
    "tanh": (np.tanh, (-5, 5)), "asinh": (np.arcsinh, (-10, 10)), "acosh": (np.arccosh, (1, 10)),
    "atanh": (np.arctanh, (-0.99, 0.99)), "erf": (erf64, (-3, 3)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-10, 10)),
}  # fast_exp / fast_tanh / fast_erf: fam_fast.py (TVM's polynomials, exactly)


def sign_ref(x):
    one = np.ones((), x.dtype)
    if x.dtype == np.bool_:
        return x.copy()
    z = np.zeros((), x.dtype)
    neg = (z - one) if x.dtype.kind != "u" else z
    return np.where(x > 0, one, np.where(x < 0, neg, z)).astype(x.dtype)


UNARY_ANY = {  # exact ops on every numeric dtype
    "negative": lambda x: (np.zeros((), x.dtype) - x).astype(x.dtype),
    "abs": lambda x: np.abs(x) if x.dtype.kind != "u" else x.copy(),
    "sign": sign_ref,
    "floor": lambda x: np.floor(x) if is_float(x.dtype) else x.copy(),
    "ceil": lambda x: np.ceil(x) if is_float(x.dtype) else x.copy(),
    "trunc": lambda x: np.trunc(x) if is_float(x.dtype) else x.copy(),
    "round": lambda x: round_half_away(x).astype(x.dtype) if is_float(x.dtype) else x.copy(),
    "copy": lambda x: x.copy(),
    "zeros_like": lambda x: np.zeros_like(x),
    "ones_like": lambda x: np.ones_like(x),
    "isnan": lambda x: np.isnan(x) if is_float(x.dtype) else np.zeros(x.shape, bool),
    "isinf": lambda x: np.isinf(x) if is_float(x.dtype) else np.zeros(x.shape, bool),
    "isfinite": lambda x: np.isfinite(x) if is_float(x.dtype) else np.ones(x.shape, bool),
    "nn.relu": lambda x: np.where(x > 0, x, np.zeros((), x.dtype)).astype(x.dtype),
}


def unary_cases(rng, n):
    names = sorted(UNARY_F)
    for k in range(n):
        op = names[k % len(names)]
        f, (lo, hi) = UNARY_F[op]
        dt = FLOATS[(k // len(names)) % 3] if k >= len(names) else "float32"
        x = rand_array(rng, rand_shape(rng), dt, lo=lo, hi=hi, special=k % 7 == 3)
        yield Case(FAMILY, f"{op} {dt} {x.shape}", [("x", x)], call(op, ["%x"]),
                   lambda f=f, x=x: np.asarray(f(x.astype(np.float64))).astype(x.dtype))
    names = sorted(UNARY_ANY)
    for k in range(n):
        op = names[k % len(names)]
        dt = ALL[(k * 7 + k // len(names)) % (len(ALL) - 1)]
        x = rand_array(rng, rand_shape(rng), dt, special=True)
        if op == "round" and is_float(dt):
            x = (np.round(x * 2) / 2).astype(dt)  # ties
        yield Case(FAMILY, f"{op} {dt} {x.shape}", [("x", x)], call(op, ["%x"]),
                   lambda op=op, x=x: UNARY_ANY[op](x))
    for op in ["copy", "zeros_like", "ones_like", "isnan", "isfinite"]:
        x = rand_array(rng, (3,), "bool")
        yield Case(FAMILY, f"{op} bool", [("x", x)], call(op, ["%x"]), lambda op=op, x=x: UNARY_ANY[op](x))
    for dt in INTS:
        x = rand_array(rng, (2, 3), dt, special=True)
        yield Case(FAMILY, f"bitwise_not {dt}", [("x", x)], call("bitwise_not", ["%x"]), np.invert(x))
    x = rand_array(rng, (5,), "bool")
    yield Case(FAMILY, "logical_not bool", [("x", x)], call("logical_not", ["%x"]), np.logical_not(x))
    yield Case(FAMILY, "bitwise_not bool", [("x", x)], call("bitwise_not", ["%x"]), np.logical_not(x))
    for op in ["sqrt", "exp", "erf"]:
        x = np.array([1, 2], dtype="int32")
        # relation Identity (spec §4.1): type-checks, the float-only kernel refuses at run time
        yield Case(FAMILY, f"{op} int32 rejected", [("x", x)], call(op, ["%x"]), RUN_ERROR)


# ------------------------------------------------------------------ activations, clip

def clip_ref(x, lo, hi):
    dt = x.dtype
    if is_int(dt):
        info = np.iinfo(dt)
        lo_c = min(max(int(np.trunc(lo)) if np.isfinite(lo) else (info.min if lo < 0 else info.max), info.min), info.max)
        hi_c = min(max(int(np.trunc(hi)) if np.isfinite(hi) else (info.min if hi < 0 else info.max), info.min), info.max)
        lo_v, hi_v = np.array(lo_c, dt), np.array(hi_c, dt)
    else:
        lo_v, hi_v = np.array(lo).astype(dt), np.array(hi).astype(dt)
    m = np.where(x < hi_v, x, hi_v)
    return np.where(m > lo_v, m, lo_v).astype(dt)


def activation_cases(rng, n):
    for k in range(n):
        dt = ALL[k % (len(ALL) - 1)]
        x = rand_array(rng, rand_shape(rng), dt, special=True)
        lo, hi = [(-1.5, 2.5), (0.0, 6.0), (-np.inf, np.inf), (-3.0, -1.0), (2.7, 2.7), (-1e30, 1e30)][k % 6]
        if is_int(dt) and not (np.isfinite(lo) and abs(lo) < 1e9):
            lo, hi = -1.5, 2.5
        if is_int(dt) and np.iinfo(dt).min == 0 and lo < 0:
            lo = 0.0
        yield Case(FAMILY, f"clip {dt} [{lo}, {hi}] {x.shape}", [("x", x)],
                   call("clip", ["%x"], a_min=float(lo), a_max=float(hi)),
                   lambda x=x, lo=lo, hi=hi: clip_ref(x, lo, hi))
    for k in range(max(3, n // 3)):
        dt = FLOATS[k % 3]
        x = rand_array(rng, rand_shape(rng), dt, special=k == 0)
        if k % 3 == 0:
            expr, alpha = call("nn.leaky_relu", ["%x"]), 0.25
        else:
            alpha = float(rng.choice([0.01, 0.2, -0.5, 1.5]))
            expr = call("nn.leaky_relu", ["%x"], alpha=alpha)
        yield Case(FAMILY, f"leaky_relu {dt} alpha={alpha} {x.shape}", [("x", x)], expr,
                   lambda x=x, alpha=alpha: np.where(x > 0, x, (x.astype(np.float64) * alpha).astype(x.dtype)))
    for k in range(max(3, n // 3)):
        dt = FLOATS[k % 3]
        shape = rand_shape(rng, rank=int(rng.integers(1, 5)))
        axis = int(rng.integers(-len(shape), len(shape)))
        if k % 4 == 0 and len(shape) > 1:
            axis = 1
        x = rand_array(rng, shape, dt)
        al = rand_array(rng, (shape[axis],), dt)
        expr = call("nn.prelu", ["%x", "%alpha"], axis=axis) if axis != 1 else call("nn.prelu", ["%x", "%alpha"])
        def pre(x=x, al=al, axis=axis):
            bshape = [1] * x.ndim
            bshape[axis] = -1
            return np.where(x > 0, x, (x * al.reshape(bshape)).astype(x.dtype))
        yield Case(FAMILY, f"prelu {dt} axis={axis} {shape}", [("x", x), ("alpha", al)], expr, pre)
    x = rand_array(rng, (2, 3), "float32")
    yield Case(FAMILY, "dropout .0", [("x", x)], "%0 = nn.dropout(%x, rate=0.3f);\n  %0.0", x.copy())
    yield Case(FAMILY, "dropout tuple", [("x", x)], "nn.dropout(%x)", (x.copy(), np.ones_like(x)))


# ------------------------------------------------------------------ casts

def cast_ref(x, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        if is_float(x.dtype):
            return (x != 0) & ~np.isnan(x)
        return x != 0
    if is_int(dt) and is_float(x.dtype):
        info = np.iinfo(dt)
        out = np.empty(x.shape, dt)
        for idx in np.ndindex(x.shape):
            v = float(x[idx])
            if math.isnan(v):
                out[idx] = 0
                continue
            i = info.max if v >= 2.0 ** 70 else info.min if v <= -2.0 ** 70 else int(math.trunc(v))
            out[idx] = min(max(i, info.min), info.max)
        return out
    if x.dtype == np.bool_:
        return x.astype(dt)
    return x.astype(dt)


def cast_cases(rng, n):
    for k in range(n):
        src = ALL[k % len(ALL)]
        dst = ALL[(k * 5 + k // len(ALL)) % len(ALL)]
        shape = rand_shape(rng, max_rank=3)
        if is_float(src):
            big = is_int(dst) and k % 3 == 0
            x = rand_array(rng, shape, src, lo=-300 if big else -40, hi=300 if big else 40)
            if big and x.size:
                info = np.iinfo(dst)
                f = x.reshape(-1)
                f[0] = min(float(info.max) * 4, float(np.finfo(src).max))
                if f.size > 1:
                    f[1] = max(float(info.min) * 4 - 8, -float(np.finfo(src).max))
            if not is_int(dst):
                x = rand_array(rng, shape, src, special=True)
        else:
            x = rand_array(rng, shape, src, special=True)
        yield Case(FAMILY, f"cast {src}->{dst} {shape}", [("x", x)], call("cast", ["%x"], dtype=dst),
                   lambda x=x, dst=dst: cast_ref(x, dst))
        if k % 4 == 0:
            like = np.zeros((1,), dst)
            yield Case(FAMILY, f"cast_like {src}->{dst}", [("x", x), ("l", like)], call("cast_like", ["%x", "%l"]),
                       lambda x=x, dst=dst: cast_ref(x, dst))
    pairs = [("float32", "int32"), ("int32", "uint32"), ("float64", "int64"), ("float16", "int16"),
             ("uint8", "int8"), ("int64", "float64")]
    for src, dst in pairs:
        x = rand_array(rng, (2, 3), src, special=True)
        yield Case(FAMILY, f"reinterpret {src}->{dst}", [("x", x)], call("reinterpret", ["%x"], dtype=dst),
                   lambda x=x, dst=dst: x.view(dst))
    x = np.zeros((2,), "float32")
    yield Case(FAMILY, "reinterpret width mismatch", [("x", x)], call("reinterpret", ["%x"], dtype="int8"), ERROR)


def cases(rng, thorough):
    m = 4 if thorough else 1
    yield from binary_cases(rng, 150 * m)
    yield from int_edge_cases(rng)
    yield from bitwise_cases(rng, 25 * m)
    yield from power_cases(rng, 12 * m)
    yield from comparison_cases(rng, 50 * m)
    yield from unary_cases(rng, 60 * m)
    yield from activation_cases(rng, 24 * m)
    yield from cast_cases(rng, 80 * m)
