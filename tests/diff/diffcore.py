"""Shared machinery of the differential tester (tests/diff/run_diff.py).

A `Case` is one single-operator Relay program: named numpy inputs, the body expression (written
with `%name` for each input), and the numpy reference result computed from spec/ops.md (an array,
a tuple of arrays, or ERROR when relayc must reject the program / fail at run time). The runner
writes the program, runs `relayc --run --input ... --output ...` once per case, and `compare`
checks the result: dtype and shape always exactly, integers and bools exactly, floats with the
case's tolerance (NaN positions and infinities must match).

Helpers here build inputs of every dtype and spell Relay types and attribute values.
"""
import numpy as np

FLOATS = ["float16", "float32", "float64"]
SINTS = ["int8", "int16", "int32", "int64"]
UINTS = ["uint8", "uint16", "uint32", "uint64"]
INTS = SINTS + UINTS
ALL = FLOATS + INTS + ["bool"]


class Error:
    """Expected outcome: relayc rejects the program (exit 1) or fails at run time (exit 3)."""

    def __init__(self, codes=(1, 3)):
        self.codes = codes

    def __repr__(self):
        return f"Error(exit in {self.codes})"


ERROR = Error()
TYPE_ERROR = Error((1,))
RUN_ERROR = Error((3,))


class Case:
    def __init__(self, family, name, inputs, expr, ref, rtol=None, atol=None, note=""):
        self.family = family
        self.name = name
        self.inputs = inputs          # list of (name, np.ndarray)
        self.expr = expr
        self.ref = ref                # np.ndarray | tuple | Error | callable() -> those
        self.rtol = rtol
        self.atol = atol
        self.note = note

    def program(self):
        params = ", ".join(f"%{n}: {tensor_type(a)}" for n, a in self.inputs)
        return f'#[version = "0.0.5"]\ndef @main({params}) {{\n  {self.expr}\n}}\n'

    def expected(self):
        if callable(self.ref):
            with np.errstate(all="ignore"):
                self.ref = self.ref()
        return self.ref


def tensor_type(a):
    dims = ", ".join(str(d) for d in a.shape)
    return f"Tensor[({dims}), {dtype_name(a.dtype)}]"


def dtype_name(dt):
    return "bool" if np.dtype(dt) == np.bool_ else np.dtype(dt).name


def attr(v):
    """Relay attribute text of a Python value."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if np.isinf(v):
            return "inff" if v > 0 else "-inff"
        return repr(float(v)) + "f"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(attr(x) for x in v) + "]"
    raise TypeError(v)


def call(op, args, **attrs):
    parts = list(args) + [f"{k}={attr(v)}" for k, v in attrs.items()]
    return f"{op}({', '.join(parts)})"


def is_float(dt):
    return np.dtype(dt).kind == "f"


def is_int(dt):
    return np.dtype(dt).kind in "iu"


BIG_P = 0.12  # share of shapes drawn large enough to reach vectorised / threaded kernel paths


def rand_shape(rng, rank=None, max_rank=4, max_dim=5, allow_zero=False):
    if rank is None:
        rank = int(rng.integers(0, max_rank + 1))
    lo = 0 if allow_zero else 1
    if rank and rng.random() < BIG_P:
        # mostly odd extents so that vector loops have remainders; ~2-40k elements
        hi = {1: 4099, 2: 97, 3: 23, 4: 13}.get(rank, 7)
        return tuple(int(rng.integers(max(lo, 2), hi + 1)) if rng.random() < 0.8 else 1 for _ in range(rank))
    return tuple(int(rng.choice([1, int(rng.integers(lo, max_dim + 1))])) for _ in range(rank))


def rand_array(rng, shape, dtype, lo=None, hi=None, special=False):
    """Random values of `dtype`: floats ~ N(0, 2) (or uniform [lo, hi)), ints across a range that
    exercises sign and (with special) the extremes; bools 50/50."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.array(rng.integers(0, 2, size=shape), dtype=bool)
    if dt.kind == "f":
        if lo is not None:
            a = rng.uniform(lo, hi, size=shape)
        else:
            a = rng.standard_normal(size=shape) * 2
        a = np.array(a, dtype=dt)
        if special and a.size:
            flat = a.reshape(-1)
            for v in (np.nan, np.inf, -np.inf, 0.0, -0.0):
                if rng.random() < 0.5:
                    flat[int(rng.integers(0, flat.size))] = v
        return a
    info = np.iinfo(dt)
    if lo is None:
        lo, hi = -20, 21
    lo, hi = max(int(lo), int(info.min)), min(int(hi), int(info.max))
    a = rng.integers(lo, hi, size=shape, dtype=np.int64 if dt.kind == "i" or dt.itemsize < 8 else np.uint64)
    a = np.array(a, dtype=dt)
    if special and a.size:
        flat = a.reshape(-1)
        for v in (info.min, info.max, 0):
            if rng.random() < 0.5:
                flat[int(rng.integers(0, flat.size))] = v
    return a


def broadcast_pair(rng, max_rank=4):
    """Two shapes that broadcast (right-aligned, with size-1 dims and rank differences)."""
    out = rand_shape(rng, max_rank=max_rank)
    def sub(s):
        k = int(rng.integers(0, len(s) + 1))
        t = s[len(s) - k:]
        return tuple(1 if rng.random() < 0.3 else d for d in t)
    a, b = sub(out), sub(out)
    if rng.random() < 0.4:
        a = out
    return a, b


def compare(got, want, rtol, atol):
    """None when equal enough, else a message."""
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"expected a {len(want)}-tuple, got {type(got).__name__}"
        for i, (g, w) in enumerate(zip(got, want)):
            m = compare(g, w, rtol, atol)
            if m:
                return f"field {i}: {m}"
        return None
    if isinstance(got, tuple):
        return f"expected a tensor, got a {len(got)}-tuple"
    want = np.asarray(want)
    if got.dtype != want.dtype:
        return f"dtype {dtype_name(got.dtype)}, expected {dtype_name(want.dtype)}"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if want.dtype.kind != "f":
        bad = got != want
    else:
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        if rtol is None:
            rtol = {2: 2e-3, 4: 2e-5, 8: 1e-10}[want.dtype.itemsize]
        if atol is None:
            atol = {2: 1e-3, 4: 1e-6, 8: 1e-12}[want.dtype.itemsize]
        gn, wn = np.isnan(g), np.isnan(w)
        with np.errstate(all="ignore"):
            fin = np.isfinite(w) & np.isfinite(g)
            close = np.abs(g - w) <= atol + rtol * np.abs(w)
            same_inf = (g == w) & ~fin
            bad = (gn != wn) | (~gn & ~wn & ~(fin & close) & ~same_inf)
    if not bad.any():
        return None
    idx = np.argwhere(bad)
    n = len(idx)
    first = tuple(int(i) for i in idx[0]) if want.ndim else ()
    return (f"{n}/{want.size} elements differ; first at {first}: got {got[first]!r}, "
            f"expected {want[first]!r}")
