#!/usr/bin/env python3
"""--params / --inputs / --save-params: TVM .params files and numpy .npz bundles (issue 13 item 2).

The .params files are made by this script's OWN writer (`params_bytes` below), written from the
format's facts (TVM src/runtime/file_utils.cc SaveParams, include/tvm/runtime/ndarray.h
SaveDLTensor, dmlc's string and vector serialisation), not by relayc:

    u64 0xF7E58D4F05049CB7, u64 0, u64 N, N x (u64 len, name bytes), u64 N,
    N x (u64 0xDD5E40F096B4A13F, u64 0, i32 device_type=1, i32 device_id=0, i32 ndim,
         u8 code, u8 bits, u16 lanes, i64 shape[ndim], i64 nbytes, data)

Checks, each with relayc exit statuses and messages:
  * read back bit-exactly: own .params -> relayc --save-params .params gives the same bytes;
    --save-params .npz and --run --output .npz give numpy the same bits; every dtype relayc
    holds (bool, int/uint 8-64, float16/32/64, bfloat16, float8 e4m3/e5m2), ranks 0-4, empty
    tensors, NaN payloads;
  * .npz (numpy.savez and savez_compressed) <-> .params round trips, also without --run;
  * names: misspelled ("did you mean %x?"), extra, missing, bound twice, mistyped dtype and shape;
  * files: a small .params, a stored and a deflated .npz cut at EVERY byte (exit 2, a message,
    no crash) and with EVERY byte corrupted (exit 0 or 2, never a crash; a message on 2);
    hand-made corruptions of each header field (clear message, exit 2, no huge allocation).

Usage: run_params.py [--quick] RELAYC   (--quick: every 3rd byte only; for slow builds)
Prints `params: N passed, N failed`; exit 1 on failure.
"""
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

try:
    import numpy as np
except ImportError:  # the pyenv python on PATH may lack numpy; Debian's has it
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("params: numpy not available, skipped")
    sys.exit(0)

PARAMS_MAGIC = 0xF7E58D4F05049CB7
NDARRAY_MAGIC = 0xDD5E40F096B4A13F

# relay dtype -> (DLPack code, bits, numpy dtype holding the same bytes, numpy-native?)
DTYPES = {
    "bool": (1, 1, "uint8", True),
    "int8": (0, 8, "int8", True),
    "int16": (0, 16, "int16", True),
    "int32": (0, 32, "int32", True),
    "int64": (0, 64, "int64", True),
    "uint8": (1, 8, "uint8", True),
    "uint16": (1, 16, "uint16", True),
    "uint32": (1, 32, "uint32", True),
    "uint64": (1, 64, "uint64", True),
    "float16": (2, 16, "float16", True),
    "float32": (2, 32, "float32", True),
    "float64": (2, 64, "float64", True),
    "bfloat16": (4, 16, "uint16", False),
    "e4m3_float8": (6, 8, "uint8", False),
    "e5m2_float8": (7, 8, "uint8", False),
}


def record_bytes(code, bits, shape, data, lanes=1, device=1, nbytes=None):
    """One NDArray record (SaveDLTensor), fields overridable to make corrupt ones."""
    if nbytes is None:
        nbytes = len(data)
    return (struct.pack("<QQiiiBBH", NDARRAY_MAGIC, 0, device, 0, len(shape), code, bits, lanes)
            + struct.pack(f"<{len(shape)}q", *shape) + struct.pack("<q", nbytes) + data)


def params_bytes(entries):
    """entries: [(name, relay dtype, shape, raw data bytes)] -> a .params image."""
    out = [struct.pack("<QQQ", PARAMS_MAGIC, 0, len(entries))]
    for name, _, _, _ in entries:
        b = name.encode()
        out.append(struct.pack("<Q", len(b)) + b)
    out.append(struct.pack("<Q", len(entries)))
    for _, dt, shape, data in entries:
        code, bits, _, _ = DTYPES[dt]
        out.append(record_bytes(code, bits, shape, data))
    return b"".join(out)


def sample(dt, shape, seed):
    """Raw bytes of a tensor of relay dtype dt: awkward values included (NaN payloads, -0,
    extremes), bools as 0/1 bytes."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    _, _, npdt, _ = DTYPES[dt]
    if dt == "bool":
        a = rng.integers(0, 2, size=n).astype(np.uint8)
    elif dt.startswith("float"):
        a = (rng.standard_normal(size=n) * 100).astype(npdt)
        special = np.array([np.nan, -0.0, np.inf, -np.inf], dtype=npdt)
        a[: min(n, 4)] = special[: min(n, 4)]
        if n > 4:  # a NaN with a payload survives only a bit-exact path
            bits = a.view(f"uint{np.dtype(npdt).itemsize * 8}")
            bits[4] = {2: 0x7C01, 4: 0x7F800123, 8: 0x7FF0000000000ABC}[np.dtype(npdt).itemsize]
    else:
        info = np.iinfo(npdt)
        a = rng.integers(info.min, info.max, size=n, dtype=npdt, endpoint=True)
    return a.tobytes()


def relay_type(dt, shape):
    if not shape:
        return dt
    return "Tensor[(%s), %s]" % (", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""), dt)


def program(params, body=None):
    """@main with the given (name, dtype, shape) parameters, returning them as a tuple."""
    ps = ", ".join(f"%{n}: {relay_type(dt, sh)}" for n, dt, sh in params)
    if body is None:
        body = "(" + ", ".join(f"%{n}" for n, _, _ in params) + ("," if len(params) == 1 else "") + ")"
    return f'#[version = "0.0.5"]\ndef @main({ps}) {{\n  {body}\n}}\n'


def as_numpy(dt, shape, data):
    _, _, npdt, _ = DTYPES[dt]
    a = np.frombuffer(data, dtype=npdt).reshape(shape)
    return a.astype(bool) if dt == "bool" else a


class Runner:
    def __init__(self, relayc, tmp):
        self.relayc, self.tmp = relayc, tmp
        self.passed = self.failed = 0
        self.nfile = 0

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write(self, name, data):
        p = self.path(name)
        with open(p, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return p

    def run(self, *args, timeout=60):
        try:
            p = subprocess.run([self.relayc, *args], capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return -999, b"", b"timeout"
        return p.returncode, p.stdout, p.stderr

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL params: {what}" + (f"\n    {detail}" if detail else ""))
        return ok

    def expect(self, what, args, rc, *needles):
        got_rc, out, err = self.run(*args)
        text = err.decode(errors="replace")
        ok = got_rc == rc and all(n in text for n in needles)
        return self.check(ok, what, f"exit {got_rc} (want {rc}), stderr: {text[:600]!r}")


def test_bit_exact(r):
    """Every dtype, several ranks: own .params -> relayc -> .params (identical bytes), -> .npz."""
    shapes = [(), (3,), (2, 3), (2, 0, 3), (1, 2, 3, 2)]
    entries, params = [], []
    for i, dt in enumerate(DTYPES):
        for j, shape in enumerate(shapes):
            name = f"p_{dt}_{j}"
            entries.append((name, dt, shape, sample(dt, shape, 100 * i + j)))
            params.append((name, dt, shape))
    src = r.write("all.relay", program(params, body="0"))
    image = params_bytes(entries)
    inp = r.write("all.params", image)
    out = r.path("all_out.params")
    for mode in (["--run"], []):
        rc, _, err = r.run(*mode, src, "--params", inp, "--save-params", out)
        if r.check(rc == 0, f"{' '.join(mode) or 'check'}: --params all.params --save-params", err.decode()[:400]):
            with open(out, "rb") as f:
                got = f.read()
            r.check(got == image, f"{' '.join(mode) or 'check'}: .params written back differs from the one read",
                    f"{len(got)} vs {len(image)} bytes, first difference at "
                    f"{next((k for k in range(min(len(got), len(image))) if got[k] != image[k]), -1)}")
    # the numpy dtypes through .npz, and through --run --output
    npy_entries = [e for e in entries if DTYPES[e[1]][3]]
    npy_params = [(n, dt, sh) for n, dt, sh, _ in npy_entries]
    src2 = r.write("npy.relay", program(npy_params))
    inp2 = r.write("npy.params", params_bytes(npy_entries))
    npz = r.path("npy_out.npz")
    rc, _, err = r.run(src2, "--params", inp2, "--save-params", npz)
    if r.check(rc == 0, "--params npy.params --save-params .npz", err.decode()[:400]):
        z = np.load(npz)
        r.check(list(z.files) == [e[0] for e in npy_entries], ".npz member names and order", str(z.files))
        for name, dt, shape, data in npy_entries:
            a = z[name]
            want = as_numpy(dt, shape, data)
            r.check(a.dtype == want.dtype and a.shape == want.shape and a.tobytes() == want.tobytes(),
                    f".npz member {name} is not bit-exact", f"{a.dtype}{a.shape} vs {want.dtype}{want.shape}")
    outz = r.path("run_out.npz")
    rc, _, err = r.run("--run", src2, "--params", inp2, "--output", outz)
    if r.check(rc == 0, "--run --params npy.params --output", err.decode()[:400]):
        z = np.load(outz)
        for k, (name, dt, shape, data) in enumerate(npy_entries):
            a = z[f"arr_{k}"]
            want = as_numpy(dt, shape, data)
            r.check(a.dtype == want.dtype and a.shape == want.shape and a.tobytes() == want.tobytes(),
                    f"--output field {k} ({name}) is not bit-exact")
    # each non-numpy dtype alone, through --run and the value printer (no crash, exit 0)
    for dt in ("bfloat16", "e4m3_float8", "e5m2_float8"):
        one = [e for e in entries if e[1] == dt and e[2] == (2, 3)]
        s = r.write(f"one_{dt}.relay", program([(one[0][0], dt, (2, 3))]))
        p = r.write(f"one_{dt}.params", params_bytes(one))
        rc, _, err = r.run("--run", s, "--params", p)
        r.check(rc == 0, f"--run with a {dt} parameter", err.decode()[:300])
        r.expect(f"--save-params .npz refuses {dt}", [s, "--params", p, "--save-params", r.path("x.npz")], 2,
                 "error:", "--save-params", "no .npy equivalent")


def test_round_trips(r):
    """numpy .npz (stored, deflated) -> .params -> .npz, and --inputs vs --params."""
    rng = np.random.default_rng(7)
    arrays = {
        "conv1_weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "conv1_bias": rng.standard_normal(4).astype(np.float32),
        "fc_w": rng.standard_normal((10, 36)).astype(np.float64),
        "steps": np.array(7, dtype=np.int64),
        "mask": rng.integers(0, 2, (2, 5)).astype(bool),
        "lut": rng.integers(0, 255, 256).astype(np.uint8),
        "half": rng.standard_normal((3, 3)).astype(np.float16),
    }
    params = [(n, "bool" if a.dtype == bool else str(a.dtype), a.shape) for n, a in arrays.items()]
    src = r.write("rt.relay", program(params))
    own = params_bytes([(n, dt, sh, (arrays[n].astype(np.uint8) if dt == "bool" else arrays[n]).tobytes())
                        for n, dt, sh in params])
    for saver in ("savez", "savez_compressed"):
        npz = r.path(f"rt_{saver}.npz")
        # a different order in the archive than in @main: binding is by name
        getattr(np, saver)(npz, **dict(reversed(list(arrays.items()))))
        out = r.path(f"rt_{saver}.params")
        rc, _, err = r.run(src, "--params", npz, "--save-params", out)
        if r.check(rc == 0, f"{saver} .npz -> .params", err.decode()[:400]):
            with open(out, "rb") as f:
                r.check(f.read() == own, f"{saver} .npz -> .params differs from this script's writer")
            back = r.path(f"rt_{saver}_back.npz")
            rc, _, err = r.run(src, "--params", out, "--save-params", back)
            if r.check(rc == 0, f"{saver}: .params -> .npz", err.decode()[:400]):
                z = np.load(back)
                for n, a in arrays.items():
                    r.check(z[n].dtype == a.dtype and z[n].shape == a.shape and z[n].tobytes() == a.tobytes(),
                            f"{saver}: {n} after .npz -> .params -> .npz")
    # --inputs and --params together, and --input: all bind by name
    np.savez(r.path("in.npz"), conv1_weight=arrays["conv1_weight"], fc_w=arrays["fc_w"])
    np.save(r.path("steps.npy"), arrays["steps"])
    rest = {n: a for n, a in arrays.items() if n not in ("conv1_weight", "fc_w", "steps")}
    np.savez(r.path("rest.npz"), **rest)
    outz = r.path("mixed_out.npz")
    rc, out, err = r.run("--run", src, "--inputs", r.path("in.npz"), "--params", r.path("rest.npz"),
                         "--input", "steps=" + r.path("steps.npy"), "--output", outz)
    if r.check(rc == 0, "--inputs + --params + --input", err.decode()[:400]):
        z = np.load(outz)
        for k, (n, a) in enumerate(arrays.items()):
            r.check(z[f"arr_{k}"].tobytes() == a.tobytes(), f"mixed binding: {n}")
    # a .params file given to --inputs, an .npz with no members, standard input
    rc, _, err = r.run("--run", src, "--inputs", r.path("rt_savez.params"))
    r.check(rc == 0, "--inputs takes a .params file too", err.decode()[:300])
    np.savez(r.path("empty.npz"))
    r.expect("an empty .npz binds nothing", [src, "--params", r.path("empty.npz")], 0)
    with open(r.path("rt_savez.params"), "rb") as f:
        p = subprocess.run([r.relayc, "--run", src, "--params", "-"], stdin=f, capture_output=True)
    r.check(p.returncode == 0, "--params - reads standard input", p.stderr.decode()[:300])


def test_names(r):
    src = r.write("names.relay", program([("data", "float32", (2, 2)), ("conv1_weight", "float32", (3,)),
                                          ("conv1_bias", "float32", (3,))]))
    f32 = lambda *s: np.zeros(s, dtype=np.float32)
    np.save(r.path("d.npy"), f32(2, 2))
    np.save(r.path("w3.npy"), f32(3))
    np.savez(r.path("misspelled.npz"), conv1_wieght=f32(3), conv1_bias=f32(3))
    r.expect("misspelled name: did you mean", ["--run", src, "--params", r.path("misspelled.npz"),
                                               "--input", "data=" + r.path("d.npy")], 2,
             "'conv1_wieght' is not a parameter of @main (did you mean %conv1_weight?)",
             "missing --input for parameter %conv1_weight", "note: @main takes %data")
    np.save(r.path("d.npy"), f32(2, 2))
    r.expect("misspelled name, checked without --run", [src, "--params", r.path("misspelled.npz")], 2,
             "did you mean %conv1_weight?")
    np.savez(r.path("extra.npz"), conv1_weight=f32(3), conv1_bias=f32(3), totally_unrelated=f32(1))
    r.expect("extra name", ["--run", src, "--params", r.path("extra.npz"), "--input", "data=" + r.path("d.npy")],
             2, "'totally_unrelated' is not a parameter of @main\n")
    np.savez(r.path("partial.npz"), conv1_weight=f32(3))
    r.expect("missing name with --run", ["--run", src, "--params", r.path("partial.npz"),
                                          "--input", "data=" + r.path("d.npy")],
             2, "missing --input for parameter %conv1_bias of @main (no --params or --inputs file holds 'conv1_bias')")
    r.expect("missing names are fine without --run", [src, "--params", r.path("partial.npz")], 0)
    r.expect("--input typo gets did you mean", ["--run", src, "--params", r.path("extra.npz"),
                                                "--input", "dta=" + r.path("d.npy")], 2,
             "--input dta=", "@main has no parameter %dta (did you mean %data?)")
    np.savez(r.path("dtype.npz"), conv1_weight=np.zeros(3, np.float64), conv1_bias=f32(3))
    r.expect("mistyped dtype", [src, "--params", r.path("dtype.npz")], 2,
             "'conv1_weight' holds Tensor[(3,), float64] but the parameter %conv1_weight has type Tensor[(3), float32]")
    np.savez(r.path("shape.npz"), conv1_weight=f32(4), conv1_bias=f32(3, 1))
    r.expect("mistyped shapes (both reported)", [src, "--params", r.path("shape.npz")], 2,
             "'conv1_weight' holds Tensor[(4,), float32]", "'conv1_bias' holds Tensor[(3, 1), float32]")
    np.savez(r.path("one.npz"), conv1_bias=f32(3))
    r.expect("bound twice", [src, "--params", r.path("partial.npz"), "--params", r.path("one.npz"),
                             "--input", "conv1_weight=" + r.path("w3.npy")], 2,
             "parameter %conv1_weight of @main is bound twice: by --input conv1_weight=")
    r.expect("--save-params needs .params or .npz", [src, "--params", r.path("one.npz"), "--save-params", "w.bin"],
             2, "--save-params needs a file named .params or .npz")
    r.expect("--save-params into a missing directory", [src, "--params", r.path("one.npz"),
                                                          "--save-params", r.path("no/such/dir/w.params")],
             2, "--save-params", "cannot write")
    r.expect("--params with --print is a usage error", ["--print", src, "--params", r.path("one.npz")], 2,
             "go with --run")
    r.expect("missing --params file", [src, "--params", r.path("nonexistent.params")], 2,
             "--params", "cannot open")
    r.expect("--params on a directory", [src, "--params", r.tmp], 2, "is a directory")
    r.expect("--params on a .npy", [src, "--params", r.path("d.npy")], 2, "a single .npy array")
    r.write("empty.params", b"")
    r.expect("--params on an empty file", [src, "--params", r.path("empty.params")], 2, "empty file")
    r.expect("--params on text", [src, "--params", src], 2, "neither a TVM .params file nor an .npz")
    dup = params_bytes([("conv1_bias", "float32", (3,), bytes(12)), ("conv1_bias", "float32", (3,), bytes(12))])
    r.expect("duplicate names in a .params", [src, "--params", r.write("dup.params", dup)], 2,
             "the name 'conv1_bias' occurs twice")


def small_params():
    return params_bytes([("w", "float32", (2, 3), np.arange(6, dtype=np.float32).tobytes()),
                         ("s", "int8", (), b"\x07"), ("b", "bool", (2,), b"\x01\x00")])


def test_corrupt_fields(r):
    """Each header field broken on purpose: exit 2 and the message naming it."""
    src = r.write("small.relay", program([("w", "float32", (2, 3)), ("s", "int8", ()), ("b", "bool", (2,))]))
    good = small_params()
    r.expect("the small file reads", [src, "--params", r.write("good.params", good)], 0)
    head = struct.pack("<QQQ", PARAMS_MAGIC, 0, 1) + struct.pack("<Q", 1) + b"w" + struct.pack("<Q", 1)
    one_src = r.write("one.relay", program([("w", "float32", (2, 3))]))
    data = bytes(24)
    cases = [
        ("bad file magic", struct.pack("<Q", 0x1234) + good[8:], "neither a TVM .params file nor an .npz"),
        ("name count larger than the file", struct.pack("<QQQ", PARAMS_MAGIC, 0, 1 << 60) + good[24:],
         "1152921504606846976 names need at least"),
        ("name longer than the file", struct.pack("<QQQQ", PARAMS_MAGIC, 0, 1, 1 << 40) + b"w",
         "name #1 is 1099511627776 bytes long"),
        ("name with a NUL", struct.pack("<QQQQ", PARAMS_MAGIC, 0, 1, 2) + b"w\0" + struct.pack("<Q", 1)
         + record_bytes(2, 32, (2, 3), data), "contains a NUL byte"),
        ("counts disagree", struct.pack("<QQQ", PARAMS_MAGIC, 0, 1) + struct.pack("<Q", 1) + b"w"
         + struct.pack("<Q", 2) + record_bytes(2, 32, (2, 3), data), "1 names but 2 tensors"),
        ("bad record magic", head + struct.pack("<Q", 5) + record_bytes(2, 32, (2, 3), data)[8:],
         "does not start with the NDArray magic"),
        ("GPU device", head + record_bytes(2, 32, (2, 3), data, device=2), "device type 2"),
        ("rank 65", head + record_bytes(2, 32, (1,) * 65, b"\0\0\0\0"), "rank 65"),
        ("negative rank", head + struct.pack("<QQiiiBBH", NDARRAY_MAGIC, 0, 1, 0, -1, 2, 32, 1),
         "rank -1"),
        ("lanes 4", head + record_bytes(2, 32, (2, 3), data, lanes=4), "4 lanes"),
        ("unknown dtype code", head + record_bytes(9, 32, (2, 3), data), "unsupported dtype (code 9"),
        ("float8 with 16 bits", head + record_bytes(6, 16, (2, 3), data), "unsupported dtype"),
        ("zero bits", head + record_bytes(0, 0, (2, 3), data), "unsupported dtype (code 0, 0 bits)"),
        ("negative extent", head + record_bytes(2, 32, (2, -3), data), "negative extent -3"),
        ("byte count disagrees", head + record_bytes(2, 32, (2, 3), data, nbytes=20),
         "says it holds 20 data bytes, its shape needs 24"),
        ("huge shape, tiny file", head + record_bytes(2, 32, (1 << 20, 1 << 20), b"", nbytes=1 << 42),
         "needs 4398046511104 bytes"),
        ("overflowing shape", head + record_bytes(2, 32, (1 << 62, 1 << 62), b"", nbytes=0), "too many elements"),
        ("trailing bytes", head + record_bytes(2, 32, (2, 3), data) + b"junk", "4 unexpected bytes after"),
    ]
    for what, image, needle in cases:
        r.expect(f"corrupt .params: {what}", [one_src, "--params", r.write("bad.params", image)], 2,
                 "error: --params", needle)


def every_byte(r, src, image, flag, label, step, corrupt):
    """Cut `image` at every byte (exit 2 + message) and, when `corrupt`, flip every byte
    (exit 0 or 2, a message on 2); never a crash or a hang."""
    path = r.path("cut_" + label)
    bad = []
    for k in range(0, len(image), step):
        with open(path, "wb") as f:
            f.write(image[:k])
        rc, _, err = r.run(src, flag, path, timeout=30)
        if rc != 2 or b"error:" not in err or len(err.splitlines()) > 4:
            bad.append((k, rc, err[:200]))
    r.check(not bad, f"{label} truncated at every byte: exit 2 with a message",
            f"{len(bad)} bad cuts, first: {bad[:2]}")
    if not corrupt:
        return
    bad = []
    for k in range(0, len(image), step):
        mutated = bytearray(image)
        mutated[k] ^= 0xFF
        with open(path, "wb") as f:
            f.write(bytes(mutated))
        rc, _, err = r.run(src, flag, path, timeout=30)
        if rc not in (0, 2) or (rc == 2 and b"error:" not in err):
            bad.append((k, rc, err[:200]))
    r.check(not bad, f"{label} with every byte corrupted: exit 0 or 2, never a crash",
            f"{len(bad)} bad, first: {bad[:2]}")


def test_every_byte(r, step):
    src = r.write("small.relay", program([("w", "float32", (2, 3)), ("s", "int8", ()), ("b", "bool", (2,))]))
    every_byte(r, src, small_params(), "--params", "small.params", step, True)
    arrays = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "s": np.array(7, np.int8),
              "b": np.array([True, False])}
    for saver in ("savez", "savez_compressed"):
        p = r.path(f"small_{saver}.npz")
        getattr(np, saver)(p, **arrays)
        with open(p, "rb") as f:
            image = f.read()
        every_byte(r, src, image, "--inputs", f"small_{saver}.npz", step, True)
    # a deflated member whose stream is broken, and a member that is not .npy
    with zipfile.ZipFile(r.path("odd.npz"), "w") as z:
        z.writestr("w.txt", "hello")
    r.expect(".npz member that is not .npy", [src, "--inputs", r.path("odd.npz")], 2, "member 'w.txt' is not a .npy")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    step = 3 if "--quick" in sys.argv else 1
    relayc = os.path.abspath(args[0] if args else "build/relayc")
    with tempfile.TemporaryDirectory() as tmp:
        r = Runner(relayc, tmp)
        for test in (test_bit_exact, test_round_trips, test_names, test_corrupt_fields):
            test(r)
        test_every_byte(r, step)
    print(f"params: {r.passed} passed, {r.failed} failed")
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
