#!/usr/bin/env python3
"""--input/--output round trips checked with numpy (Debian's python3-numpy).

For several dtypes and ranks: numpy writes an input .npy, relayc computes a known function
of it with --run --input --output, numpy reads the result and compares it with its own
computation; a tuple result is written as .npz and read back with numpy.load.
Skips (exit 0, with a note) when numpy is not importable. Prints `N passed, N failed`.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:  # the pyenv python on PATH may lack numpy; Debian's has it
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("npy-io: numpy not available, skipped")
    sys.exit(0)

CASES = [
    # (dtype, shape, relay element type, body, numpy function)
    ("float32", (2, 3), "float32", "add(%x, %x)", lambda x: x + x),
    ("float64", (4,), "float64", "multiply(%x, 3f64)", lambda x: x * 3),
    ("int32", (2, 2, 2), "int32", "subtract(%x, 7)", lambda x: x - 7),
    ("int64", (5,), "int64", "negative(%x)", lambda x: -x),
    ("bool", (3,), "bool", "logical_not(%x)", lambda x: ~x),
    ("float16", (2, 2), "float16", "add(%x, 1f16)", lambda x: x + np.float16(1)),
    ("uint8", (4,), "uint8", "add(%x, %x)", lambda x: x + x),
    ("float32", (), "float32", "multiply(%x, 2f)", lambda x: x * 2),
]


def run(relayc, tmp, i, dtype, shape, elem, body, fn):
    rng = np.random.default_rng(i)
    if dtype == "bool":
        x = rng.integers(0, 2, size=shape).astype(bool)
    elif dtype.startswith("float"):
        x = rng.standard_normal(size=shape).astype(dtype)
    else:
        x = rng.integers(0, 100, size=shape).astype(dtype)
    dims = ", ".join(str(d) for d in shape)
    ty = f"Tensor[({dims}), {elem}]" if shape else elem
    src = os.path.join(tmp, f"case{i}.relay")
    with open(src, "w") as f:
        f.write(f'#[version = "0.0.5"]\ndef @main(%x: {ty}) -> ({ty}, {ty}) {{\n'
                f"  %0 = {body};\n  (%0, %x)\n}}\n")
    single = os.path.join(tmp, f"case{i}.relay.single")
    with open(single, "w") as f:
        f.write(f'#[version = "0.0.5"]\ndef @main(%x: {ty}) -> {ty} {{\n  {body}\n}}\n')
    inp, out, outz = (os.path.join(tmp, n) for n in (f"x{i}.npy", f"y{i}.npy", f"y{i}.npz"))
    np.save(inp, x)
    want = np.asarray(fn(x), dtype=dtype)
    p = subprocess.run([relayc, "--run", single, "--input", f"x={inp}", "--output", out],
                       capture_output=True)
    if p.returncode != 0:
        return f"exit {p.returncode}: {p.stderr.decode()[:300]}"
    got = np.load(out)
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        return f".npy result differs: got {got!r}, want {want!r}"
    p = subprocess.run([relayc, "--run", src, "--input", f"x={inp}", "--output", outz],
                       capture_output=True)
    if p.returncode != 0:
        return f"tuple: exit {p.returncode}: {p.stderr.decode()[:300]}"
    z = np.load(outz)
    if sorted(z.files) != ["arr_0", "arr_1"] or not np.array_equal(z["arr_0"], want) \
            or not np.array_equal(z["arr_1"], x):
        return f".npz result differs: {z.files}"
    return None


def run_nested(relayc, tmp):
    """A nested tuple result (a gradient (R, (g1, g2))) flattens depth-first into arr_0..2;
    --json prints it as nested arrays."""
    src = os.path.join(tmp, "nested.relay")
    with open(src, "w") as f:
        f.write('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3,), float32]) '
                '-> Tensor[(2, 3), float32] {\n  multiply(%x, %y)\n}\n')
    rng = np.random.default_rng(42)
    x = rng.standard_normal((2, 3)).astype("float32")
    y = rng.standard_normal((3,)).astype("float32")
    xi, yi, out = (os.path.join(tmp, n) for n in ("nx.npy", "ny.npy", "nested.npz"))
    np.save(xi, x)
    np.save(yi, y)
    p = subprocess.run([relayc, "--grad", "--run", src, "--input", f"x={xi}", "--input", f"y={yi}",
                        "--output", out], capture_output=True)
    if p.returncode != 0:
        return f"exit {p.returncode}: {p.stderr.decode()[:300]}"
    z = np.load(out)
    want = [x * y, np.broadcast_to(y, (2, 3)), x.sum(axis=0)]
    if sorted(z.files) != ["arr_0", "arr_1", "arr_2"]:
        return f"members {z.files}"
    for k, w in enumerate(want):
        if not np.allclose(z[f"arr_{k}"], w, rtol=1e-6, atol=1e-6):
            return f"arr_{k} = {z[f'arr_{k}']!r}, want {w!r}"
    p = subprocess.run([relayc, "--grad", "--run", "--json", src, "--input", f"x={xi}", "--input", f"y={yi}"],
                       capture_output=True)
    import json
    v = json.loads(p.stdout.decode())
    if not (isinstance(v, list) and len(v) == 2 and isinstance(v[1], list) and len(v[1]) == 2
            and v[1][1]["shape"] == [3]):
        return f"--json nesting: {p.stdout.decode()[:300]}"
    return None


def main():
    relayc = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/relayc")
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(CASES):
            err = run(relayc, tmp, i, *case)
            if err:
                failed += 1
                print(f"FAIL npy-io case {i} ({case[0]} {case[1]}): {err}")
            else:
                passed += 1
        err = run_nested(relayc, tmp)
        if err:
            failed += 1
            print(f"FAIL npy-io nested tuple: {err}")
        else:
            passed += 1
    print(f"npy-io: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
