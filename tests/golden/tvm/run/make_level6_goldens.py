#!/usr/bin/env python3
"""Writes the test_op_level6_*.relay goldens (TVM's test_op_level6.py: sort, argsort, topk).

TVM's cases take random uniform data of up to 122,640 elements; here every input is a fixed
scramble of integers that both sides compute exactly: x[i] = (i * 7919) mod 10007, reshaped and
cast to the case's dtype. Above 10,007 elements the values repeat (ties), and float16 rounds the
larger ones together (more ties), so stability is checked too. Each result is compared through a
position-weighted checksum, sum(result.flat[i] * (i + 1)) in int64, which numpy computes here on
its own reference (np.sort / np.argsort(kind="stable") as the TVM test does) and the golden program
computes on relayc's result: a wrong value or a wrong order changes it. Run from anywhere:
/usr/bin/python3 tests/golden/tvm/run/make_level6_goldens.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TVM = "tests/python/relay/test_op_level6.py"


def data_np(shape, dtype):
    n = int(np.prod(shape))
    return ((np.arange(n, dtype=np.int64) * 7919) % 10007).astype(dtype).reshape(shape)


def data_relay(shape, dtype):
    n = int(np.prod(shape))
    dims = ", ".join(str(d) for d in shape)
    return (f'reshape(cast(floor_mod(multiply(arange(0, {n}, 1, dtype="int32"), 7919), 10007), '
            f'dtype="{dtype}"), newshape=[{dims}])')


def checksum_np(a):
    flat = a.reshape(-1).astype(np.int64)
    return int(np.sum(flat * np.arange(1, flat.size + 1, dtype=np.int64)))


def checksum_relay(expr, n):
    return (f'sum(multiply(cast(reshape({expr}, newshape=[-1]), dtype="int64"), '
            f'arange(1i64, {n + 1}i64, 1i64, dtype="int64")))')


def tensor_type(shape, dtype, dyn):
    dims = ", ".join("?" if dyn else str(d) for d in shape)
    if len(shape) == 1:
        dims += ","
    return f"Tensor[({dims}), {dtype}]"


def i64(v):
    return f"{v}i64"


def write(name, header, funcs, main_body, outs):
    path = os.path.join(HERE, name + ".relay")
    with open(path, "w") as f:
        for line in header:
            f.write(f"// {line}\n")
        f.write("// RUN: relayc --run %s\n")
        f.write(f"// OUT: ({', '.join(outs)})\n" if len(outs) > 1 else f"// OUT: {outs[0]}\n")
        f.write('#[version = "0.0.5"]\n')
        for fn in funcs:
            f.write(fn)
        f.write("def @main() {\n")
        for line in main_body:
            f.write(f"  {line}\n")
        f.write("}\n")


def unary_golden(name, header, cases, op_text, reference):
    """cases: (shape, in_dtype, attrs dict for op_text, dyn). One function per case."""
    funcs, body, outs, results = [], [], [], []
    for i, (shape, in_dtype, attrs, dyn) in enumerate(cases):
        n = int(np.prod(shape))
        funcs.append(f"def @case{i}(%x: {tensor_type(shape, in_dtype, dyn)}) {{\n"
                     f"  {op_text(attrs)}\n}}\n")
        body.append(f"let %r{i} = @case{i}({data_relay(shape, in_dtype)});")
        results.append(checksum_relay(f"%r{i}", n))
        outs.append(i64(checksum_np(reference(data_np(shape, in_dtype), attrs))))
    body.append("(" + ",\n   ".join(results) + ")" if len(results) > 1 else results[0])
    write(name, header, funcs, body, outs)


def sort_ref(x, a):
    return np.sort(x, axis=a["axis"]) if a["is_ascend"] else -np.sort(-x, axis=a["axis"])


def argsort_ref(x, a):
    src = x if a["is_ascend"] else -x
    return np.argsort(src, axis=a["axis"], kind="stable").astype(a["dtype"])


def py_bool(b):
    return "True" if b else "False"


def sort_goldens():
    for dyn in (False, True):
        cases = [((2, 3, 4), 0, False, "float32"), ((1, 4, 6), 1, True, "float32"),
                 ((3, 5, 6), -1, False, "float32"), ((3, 2000, 6), 1, False, "float32"),
                 ((1, 122640), 1, False, "float32"), ((1, 122640), 1, False, "float16")]
        cases = [(s, dt, {"axis": ax, "is_ascend": asc}, dyn) for s, ax, asc, dt in cases]
        kind = "dyn" if dyn else "static"
        unary_golden(
            f"test_op_level6_sort_{kind}",
            [f"Ported from TVM {TVM}::test_sort (is_dyn={dyn}: the six verify_sort cases, in order;",
             "the dynamic ones take Tensor[(?, ...)] parameters). Expected: the checksums of numpy's",
             "np.sort (descending: -np.sort(-x)), from make_level6_goldens.py (data and checksum: its",
             "docstring)."],
            cases,
            lambda a: f"sort(%x, axis={a['axis']}, is_ascend={py_bool(a['is_ascend'])})",
            sort_ref)


def argsort_goldens():
    for dyn in (False, True):
        cases = []
        for dt in ("int32", "int64", "float32", "float64"):
            cases.append(((2, 3, 4), 0, False, dt, "float32"))
            cases.append(((1, 4, 6), 1, True, dt, "float32"))
        cases += [((3, 5, 6), -1, False, "int32", "float32"), ((3, 6000, 6), 1, False, "int32", "float32"),
                  ((1000, 1, 1), 0, False, "int32", "float32"), ((1, 122640), 1, False, "int32", "float32"),
                  ((1, 122640), 1, False, "int32", "float16")]
        cases = [(s, idt, {"axis": ax, "is_ascend": asc, "dtype": dt}, dyn) for s, ax, asc, dt, idt in cases]
        kind = "dyn" if dyn else "static"
        unary_golden(
            f"test_op_level6_argsort_{kind}",
            [f"Ported from TVM {TVM}::test_argsort (is_dyn={dyn}: the 13 verify_argsort cases, in order;",
             "index dtypes int32/int64/float32/float64). Expected: the checksums of numpy's",
             "np.argsort(x or -x, kind=\"stable\") (ties keep their order, descending too), from",
             "make_level6_goldens.py."],
            cases,
            lambda a: (f"argsort(%x, axis={a['axis']}, is_ascend={py_bool(a['is_ascend'])}, "
                       f"dtype=\"{a['dtype']}\")"),
            argsort_ref)


def topk_ref(x, k, axis, is_ascend, dtype):
    idx = np.argsort(x if is_ascend else -x, axis=axis, kind="stable")
    kk = k if k >= 1 else x.shape[axis]
    idx = np.take(idx, np.arange(kk), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(dtype)


def topk_goldens():
    shape = (20, 100)
    n = 2000
    for k in (0, 1, 5):
        funcs, body, outs, results = [], [], [], []
        i = 0
        for axis in (0, -1, 1):
            for ret in ("both", "values", "indices"):
                for asc, dt, idt in ((True, "int64", "float32"), (False, "float32", "float32"),
                                     (False, "int64", "float16")):
                    call = (f'topk(%x, k={k}, axis={axis}, ret_type="{ret}", '
                            f'is_ascend={py_bool(asc)}, dtype="{dt}")')
                    funcs.append(f"def @case{i}(%x: {tensor_type(shape, idt, False)}) {{\n  {call}\n}}\n")
                    body.append(f"let %r{i} = @case{i}({data_relay(shape, idt)});")
                    vals, idx = topk_ref(data_np(shape, idt), k, axis, asc, dt)
                    kk = vals.size
                    if ret == "both":
                        results.append(checksum_relay(f"%r{i}.0", kk))
                        results.append(checksum_relay(f"%r{i}.1", kk))
                        outs += [i64(checksum_np(vals)), i64(checksum_np(idx))]
                    else:
                        results.append(checksum_relay(f"%r{i}", kk))
                        outs.append(i64(checksum_np(vals if ret == "values" else idx)))
                    i += 1
        body.append("(" + ",\n   ".join(results) + ")")
        write(f"test_op_level6_topk_k{k}",
              [f"Ported from TVM {TVM}::test_topk, k={k}: axis 0, -1, 1 x ret_type both, values, indices x",
               "(ascending, int64 indices), (descending, float32 indices), (descending, int64, float16",
               "data), on a (20, 100) tensor, in that order (\"both\" gives two checksums). Expected: the",
               "checksums of the TVM test's own reference (stable argsort, first k along the axis, values",
               "gathered), from make_level6_goldens.py."],
              funcs, body, outs)


if __name__ == "__main__":
    sort_goldens()
    argsort_goldens()
    topk_goldens()
