#!/usr/bin/env python3
"""Writes tests/golden/grad/ops/*.relay: TVM's test_op_grad_level1..10.py ported as golden programs.

Each TVM test function becomes one .relay file per case with TVM's program (shapes, dtypes,
attributes) and a `relayc --check-grad` RUN line with TVM's check_grad settings (scale, mean,
eps; explicit inputs such as indices as .npy files under tests/golden/grad/data/). TVM's
closed-form tests (unary/binary level 1, pools) are checked against central differences
instead of a hand-written formula: the numeric side is independent of the rules. Run it
from the repository root after changing the list; the outputs are committed.

    python3 tests/grad/gen_tvm_op_goldens.py [build/relayc]

Programs whose rules emit an operator the given build does not register are not written.
"""
import os
import sys

try:
    import numpy as np
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

OUT = "tests/golden/grad/ops"
DATA = "tests/golden/grad/data"
FILES = {}


def T(shape, dtype="float32"):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    return f"Tensor[({dims}), {dtype}]" if shape else dtype


def golden(name, test, params, body, flags="", inputs=None, note=""):
    sig = ", ".join(f"%{n}: {T(s, d)}" for n, s, d in params)
    run = f"// RUN: relayc --check-grad{flags if flags.startswith('=') else (' ' + flags) if flags else ''}"
    for pname, fname in (inputs or {}).items():
        run += f" --input {pname}=%d/../data/{fname}"
    run += " %s"
    text = [f"// TVM {test}{(': ' + note) if note else ''}", run, '#[version = "0.0.5"]',
            f"def @main({sig}) {{", f"  {body}", "}", ""]
    FILES[f"{name}.relay"] = "\n".join(text)


def data(fname, arr):
    np.save(os.path.join(DATA, fname), arr)


# ---- test_op_grad_level1.py --------------------------------------------------------------
UNARY = ["log", "exp", "sigmoid", "tanh", "sqrt", "abs", "nn.relu", "erf", "cos", "sin", "tan", "atan", "log2",
         "log10", "cosh", "sinh", "asin", "acos", "acosh", "asinh", "atanh"]
for op in UNARY:
    for dt in ["float32", "float64"]:
        mean = "1.5" if op == "acosh" else "0.5"
        golden(f"l1_unary_{op.replace('nn.', '')}_{dt}", "test_op_grad_level1.py TestUnaryOp",
               [("x", (10, 4), dt), ("g", (10, 4), dt)], f"multiply({op}(%x), %g)", f"--mean={mean} --scale=0.1",
               note=f"{op}(x) * g, x and g near U(0, 1) as np.random.rand")
for op in ["add", "subtract", "multiply", "divide"]:
    for dt in ["float32", "float64"]:
        golden(f"l1_binary_{op}_{dt}", "test_op_grad_level1.py TestBinaryOp", [("x", (5, 10, 5), dt), ("y", (5, 10, 5), dt)],
               f"{op}(%x, %y)", "--mean=0.5 --scale=0.1")
golden("l1_softmax", "test_op_grad_level1.py test_softmax_grad", [("data", (1, 16), "float64")], "nn.softmax(%data)", "--scale=1")
golden("l1_log_softmax", "test_op_grad_level1.py test_log_softmax_grad", [("data", (2, 16), "float64")],
       "nn.log_softmax(%data)", "--scale=1")
for i, (d, b, ax) in enumerate([((1, 16), (16,), 1), ((1, 8, 2, 2), (8,), 1), ((1, 2, 2, 8), (8,), 3), ((4, 8), (8,), 1)]):
    golden(f"l1_bias_add_{i}", "test_op_grad_level1.py TestBiasAddGrad", [("data", d, "float32"), ("bias", b, "float32")],
           f"nn.bias_add(%data, %bias, axis={ax})")
golden("l1_expand_dims", "test_op_grad_level1.py test_expand_dims_grad", [("data", (2, 3), "float64")],
       "expand_dims(%data, axis=1, num_newaxis=2)")
golden("l1_concatenate", "test_op_grad_level1.py test_concatenate_grad",
       [("x", (2, 2, 5), "float32"), ("y", (2, 1, 5), "float32"), ("z", (2, 4, 5), "float32")],
       "concatenate((%x, %y, %z), axis=1)")

# ---- test_op_grad_level2.py --------------------------------------------------------------
for i, (ps, st, pad) in enumerate([((2, 2), (2, 2), (0, 0)), ((1, 1), (1, 1), (1, 1))]):
    golden(f"l2_max_pool2d_{i}", "test_op_grad_level2.py test_max_pool2d_grad", [("x", (1, 4, 16, 16), "float32")],
           f"nn.max_pool2d(%x, pool_size={list(ps)}, strides={list(st)}, padding={list(pad)})", "--mean=0.5 --scale=0.3")
for i, (ps, st, pad, cip, dt) in enumerate([((2, 2), (2, 2), (0, 0), True, "float32"),
                                            ((1, 1), (1, 1), (1, 1), False, "float32"),
                                            ((1, 1), (1, 1), (1, 1), False, "float16")]):
    # TVM runs each case with the shape's extents as int32 and as int64 IntImms (printed 1i64)
    for sfx, xs in [("", (1, 4, 16, 16)), ("_i64", ("1i64", "4i64", "16i64", "16i64"))]:
        golden(f"l2_avg_pool2d_{i}{sfx}", "test_op_grad_level2.py test_avg_pool2d_grad", [("x", xs, dt)],
               f"nn.avg_pool2d(%x, pool_size={list(ps)}, strides={list(st)}, padding={list(pad)}, count_include_pad={cip})",
               "--mean=0.5 --scale=0.3" + (" --rtol=0.01 --atol=1e-3" if dt == "float16" else ""),
               note="int64 extents" if sfx else "")
for i, shp in enumerate([(1, 4, 16, 16), (1, 8, 8, 24)]):
    golden(f"l2_global_avg_pool2d_{i}", "test_op_grad_level2.py test_global_avg_pool2d_grad", [("x", shp, "float32")],
           "nn.global_avg_pool2d(%x)", "--mean=0.5 --scale=0.3")
for i, (ws, st, pad, mode) in enumerate([((16, 4, 3, 3), (1, 1), (1, 1), ""), ((16, 4, 1, 1), (1, 1), (0, 0), ""),
                                         ((16, 4, 1, 1), (2, 2), (0, 0), ""), ((16, 4, 3, 3), (1, 1), (1, 1), "=first_order")]):
    golden(f"l2_conv2d_{i}", "test_op_grad_level2.py test_conv2d_grad", [("data", (1, 4, 16, 16), "float32"), ("weight", ws, "float32")],
           f"nn.conv2d(%data, %weight, strides={list(st)}, padding={list(pad)}, dilation=[1, 1], out_dtype=\"float32\")",
           note="first-order mode" if mode else "")
    if mode:
        FILES[f"l2_conv2d_{i}.relay"] = FILES[f"l2_conv2d_{i}.relay"].replace("--check-grad", "--check-grad" + mode)
for i, (d, w) in enumerate([((1, 8), (16, 8)), ((1, 4), (3, 4)), ((5, 4), (3, 4))]):
    golden(f"l2_dense_{i}", "test_op_grad_level2.py test_dense_grad", [("data", d, "float32"), ("weight", w, "float32")],
           "nn.dense(%data, %weight)")
for i, (a, b, ta, tb) in enumerate([((1, 8), (8, 16), False, False), ((4, 1), (4, 3), True, False), ((4, 5), (3, 4), True, True)]):
    golden(f"l2_matmul_{i}", "test_op_grad_level2.py test_matmul_grad", [("tensor_a", a, "float32"), ("tensor_b", b, "float32")],
           f"nn.matmul(%tensor_a, %tensor_b, transpose_a={ta}, transpose_b={tb})")
for i, d in enumerate([(1, 2, 3, 4), (1, 8)]):
    golden(f"l2_batch_flatten_{i}", "test_op_grad_level2.py test_batch_flatten_grad", [("data", d, "float32")], "nn.batch_flatten(%data)")

# test_conv2d_backward_weight_infer_type: the first-order gradients of a conv2d + bias_add
# (normal and depthwise, TVM PR 10439) type-check; their values against central differences.
for tag, wshape, groups in [("normal", (3, 3, 3, 3), 1), ("depthwise", (3, 1, 3, 3), 3)]:
    golden(f"l2_conv2d_backward_weight_infer_type_{tag}", "test_op_grad_level2.py test_conv2d_backward_weight_infer_type",
           [("input0", (1, 3, 32, 32), "float32"), ("v0_weight", wshape, "float32"), ("v0_bias", (3,), "float32")],
           f"%0 = nn.conv2d(%input0, %v0_weight, padding=[1, 1, 1, 1], groups={groups}, channels=3, kernel_size=[3, 3]);\n"
           "  nn.bias_add(%0, %v0_bias)", "=first_order", note=f"{tag} conv2d, first-order mode")

# ---- test_op_grad_level3.py --------------------------------------------------------------
for dt in ["float32", "float64"]:
    golden(f"l3_clip_{dt}", "test_op_grad_level3.py test_clip", [("x", (10, 4), dt)], "clip(%x, a_min=1f, a_max=10f)",
           "--mean=5 --scale=4", note="x spread across both bounds")
for i, (d, axes) in enumerate([((1, 2, 3, 4), None), ((1, 2, 3, 4), (0, 2, 3, 1))]):
    golden(f"l3_transpose_{i}", "test_op_grad_level3.py test_transpose_grad", [("data", d, "float32")],
           "transpose(%data)" if axes is None else f"transpose(%data, axes={list(axes)})")
golden("l3_negative", "test_op_grad_level3.py test_negative_grad", [("data", (10, 4), "float32")], "negative(%data)")
golden("l3_cast", "test_op_grad_level3.py test_cast_grad", [("data", (10, 4), "float32")], 'cast(%data, dtype="float64")')
golden("l3_cast_like", "test_op_grad_level3.py test_cast_like_grad", [("data", (10, 4), "float32"), ("like", (1,), "float64")],
       "cast_like(%data, %like)")
golden("l3_copy", "test_op_grad_level3.py test_copy_grad", [("data", (10, 4), "float64")], "copy(%data)")
data("idx_take_12.npy", np.array([1, 2], dtype="int32"))
# TVM types the indices Tensor[(relay.Any(),), int32]: the rule must not need their extent
golden("l3_take_axis", "test_op_grad_level3.py test_take_grad", [("data", (3, 4, 5), "float64"), ("indices", ("?",), "int32")],
       "take(%data, %indices, axis=1)", inputs={"indices": "idx_take_12.npy"}, note="indices of unknown extent")
golden("l3_take_flat", "test_op_grad_level3.py test_take_grad", [("data", (3, 4, 5), "float64"), ("indices", ("?",), "int32")],
       "take(%data, %indices)", inputs={"indices": "idx_take_12.npy"}, note="indices of unknown extent")
for tag, mode in [("axis", ", axis=1"), ("flat", "")]:  # both gradient modes
    golden(f"l3_take_{tag}_first_order", "test_op_grad_level3.py test_take_grad",
           [("data", (3, 4, 5), "float64"), ("indices", ("?",), "int32")], f"take(%data, %indices{mode})", "=first_order",
           inputs={"indices": "idx_take_12.npy"}, note="indices of unknown extent, first-order mode")
golden("l3_stack", "test_op_grad_level3.py test_stack_grad", [(v, (2, 3, 4), "float64") for v in "xyz"], "stack((%x, %y, %z))")
golden("l3_squeeze", "test_op_grad_level3.py test_squeeze_grad", [("data", (2, 1, 1, 3, 4, 1), "float64")], "squeeze(%data)")
golden("l3_squeeze_subset", "test_op_grad_level3.py test_squeeze_grad", [("data", (2, 1, 1, 3, 4, 1), "float64")],
       "squeeze(%data, axis=[1, -1])")
for v, val in [("start", 2.5), ("stop", 9.5), ("step", 1.8)]:
    data(f"arange_{v}.npy", np.array(val, dtype="float64"))
golden("l3_arange", "test_op_grad_level3.py test_arange_grad", [("start", (), "float64"), ("stop", (), "float64"), ("step", (), "float64")],
       'arange(%start, %stop, %step, dtype="float64")', inputs={v: f"arange_{v}.npy" for v in ["start", "stop", "step"]})
data("idx_gather_nd.npy", np.array([[0, 1, 1, 0], [0, 1, 0, 0]], dtype="int64"))
golden("l3_gather_nd", "test_op_grad_level3.py test_gather_nd_grad", [("data", (2, 3), "float64"), ("indices", (2, 4), "int64")],
       "gather_nd(%data, %indices)", "--mean=0.5 --scale=0.3", inputs={"indices": "idx_gather_nd.npy"})
golden("l3_reshape_like", "test_op_grad_level3.py test_reshape_like_grad",
       [("data", (2, 3, 4), "float32"), ("shape_like", (6, 2, 2), "float32")], "reshape_like(%data, %shape_like)")

# test_zeros_ones_grad_const_ints / _const_expr / _dynamic: zeros and ones have no differentiable
# input. The gradient's type is pinned by annotating @main, which applies gradient(@f) (relayc's
# text extension, the same transform as --grad); the values come from running it.
SHAPE_CONST = "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAAgAQADAAAAAAAAAAwAAAAAAAAAAgAAAAMAAAAEAAAA"  # int32 [2, 3, 4]
META_SHAPE = """#[metadata]
{
  "root": 1,
  "nodes": [
    {"type_key": ""},
    {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]},
    {"type_key": "Array", "data": [3]},
    {"type_key": "relay.Constant", "attrs": {"_checked_type_": "0", "data": "0", "span": "0", "virtual_device_": "0"}}
  ],
  "b64ndarrays": ["%s"],
  "attrs": {"tvm_version": "0.20.dev0"}
}
""" % SHAPE_CONST


def out_lines(text):
    return "".join(f"// OUT: {line}".rstrip() + "\n" for line in text.splitlines())


ZEROS_234 = "([[[{v}, {v}, {v}, {v}],\n  [{v}, {v}, {v}, {v}],\n  [{v}, {v}, {v}, {v}]],\n\n [[{v}, {v}, {v}, {v}],\n  [{v}, {v}, {v}, {v}],\n  [{v}, {v}, {v}, {v}]]], ())"
for op, v in [("zeros", "0f"), ("ones", "1f")]:
    FILES[f"l3_{op}_const_ints.relay"] = (
        f"// TVM test_op_grad_level3.py test_zeros_ones_grad_const_ints: {op} with a static shape has no\n"
        "// input, so the gradient's type is (Tensor[(2, 3, 4), float32], ()).\n"
        "// RUN: relayc --run %s\n" + out_lines(ZEROS_234.format(v=v)) +
        '#[version = "0.0.5"]\n'
        f'def @f() {{\n  {op}(shape=[2, 3, 4], dtype="float32")\n}}\n\n'
        "def @main() -> (Tensor[(2, 3, 4), float32], ()) {\n  gradient(@f)()\n}\n")
    for tag, flags, ty, note in [
            ("static", "--pass=DynamicToStatic ", "Tensor[(2, 3, 4), float32]",
             "after DynamicToStatic the shape is concrete: (Tensor[(2, 3, 4), float32], ())"),
            ("dyn", "", "Tensor[(?, ?, ?), float32]", "without it the shape is dynamic: (Tensor[(?, ?, ?), float32], ())")]:
        FILES[f"l3_{op}_const_expr_{tag}.relay"] = (
            f"// TVM test_op_grad_level3.py test_zeros_ones_grad_const_expr: {op} of the shape expression\n"
            f"// const([2, 3, 4]) * 1 (dyn.{op}); {note}.\n"
            f"// RUN: relayc {flags}--run %s\n" + out_lines(ZEROS_234.format(v=v)) +
            '#[version = "0.0.5"]\n'
            f'def @f() {{\n  dyn.{op}(multiply(meta[relay.Constant][0], 1), dtype="float32")\n}}\n\n'
            f"def @main() -> ({ty}, ()) {{\n  gradient(@f)()\n}}\n\n" + META_SHAPE)
    data("shape_dyn_23.npy", np.array([2, 3], dtype="int32"))
    FILES[f"l3_{op}_dynamic.relay"] = (
        f"// TVM test_op_grad_level3.py test_zeros_ones_grad_dynamic: {op} of a shape parameter: value\n"
        "// np.{op}(shape), the (int32) shape's gradient zeros.\n"
        "// RUN: relayc --grad --run %s --input shape_data=%d/../data/shape_dyn_23.npy\n" +
        out_lines(f"([[{v}, {v}, {v}],\n [{v}, {v}, {v}]], ([0, 0],))") +
        '#[version = "0.0.5"]\n'
        f'def @main(%shape_data: Tensor[(2), int32]) {{\n  dyn.{op}(%shape_data, dtype="float32")\n}}\n')

# ---- test_op_grad_level4.py --------------------------------------------------------------
RED = [("sum", ""), ("mean", ""), ("variance", ""), ("variance", "unbiased=True")]
for op, extra in RED:
    for j, (d, attrs) in enumerate([((4, 2), "axis=[-1], keepdims=True"), ((4, 2, 1), "axis=[1, 2], exclude=True"),
                                    ((4, 2, 1), "axis=[1]")]):
        tag = op + ("_unbiased" if extra else "")
        a = attrs + (", " + extra if extra else "")
        if op == "variance":  # Python's variance(): the mean with keepdims=True
            mean_attrs = attrs.replace(", keepdims=True", "") + ", keepdims=True"
            body = f"variance(%data, mean(%data, {mean_attrs}), {a})"
        else:
            body = f"{op}(%data, {a})"
        golden(f"l4_{tag}_{j}", "test_op_grad_level4.py test_reduction_grad", [("data", d, "float32")], body)
    # verify_reduction_grad(op, (4, 2)): axis=None, every axis reduced
    tag = op + ("_unbiased" if extra else "")
    body = f"variance(%data, mean(%data, keepdims=True){', ' + extra if extra else ''})" if op == "variance" else f"{op}(%data)"
    golden(f"l4_{tag}_all", "test_op_grad_level4.py test_reduction_grad", [("data", (4, 2), "float32")], body,
           note="axis=None")
for j, (d, attrs) in enumerate([((10, 10), ""), ((10, 10), "axis=[-1]"), ((6, 3, 2), "axis=[1, 2], keepdims=True"),
                                ((5, 4, 3), "axis=[0, 2], exclude=True")]):
    golden(f"l4_max_{j}", "test_op_grad_level4.py test_max_grad", [("data", d, "float32")],
           f"max(%data{', ' + attrs if attrs else ''})", "--scale=1e-3")
rng = np.random.default_rng(0)
data("where_cond.npy", rng.integers(0, 2, size=(2, 3, 4)).astype("int32"))
golden("l4_where", "test_op_grad_level4.py test_where_grad",
       [("cond", (2, 3, 4), "int32"), ("lhs", (1, 3, 4), "float32"), ("rhs", (2, 1, 4), "float32")], "where(%cond, %lhs, %rhs)",
       inputs={"cond": "where_cond.npy"}, note="an int32 condition")
data("cmp_x.npy", rng.choice([-1, 1], size=(2, 3, 4)).astype("float32"))
data("cmp_y.npy", rng.choice([-2, 2], size=(3, 1)).astype("float32"))
for op in ["less_equal", "not_equal"]:
    golden(f"l4_{op}", f"test_op_grad_level4.py test_{op}_grad", [("x", (2, 3, 4), "float32"), ("y", (3, 1), "float32")],
           f"{op}(%x, %y)", inputs={"x": "cmp_x.npy", "y": "cmp_y.npy"}, note="a bool result: zero gradients")
for j, (b, e, s, mode) in enumerate([((0, 1, 0), (-1, -1, 1), (1, 1, 1), "size"), ((0, 1, 0), (2, 3, 1), (1, 1, 1), "end"),
                                     ((0, 0, 0), (-1, -1, -1), (1, 1, 2), "size"), ((0, 0, 0), (2, 3, 4), (1, 1, 2), "end")]):
    golden(f"l4_strided_slice_{j}", "test_op_grad_level4.py test_strided_slice_grad", [("x", (2, 3, 4), "float32")],
           f'strided_slice(%x, begin={list(b)}, end={list(e)}, strides={list(s)}, slice_mode="{mode}")')

# ---- test_op_grad_level10.py -------------------------------------------------------------
for dt in ["float32", "float64"]:
    golden(f"l10_cross_entropy_{dt}", "test_op_grad_level10.py test_cross_entropy_grad", [("x", (2, 5), dt), ("y", (2, 5), dt)],
           "nn.cross_entropy(%x, %y)", "--eps=0.01 --scale=0.1 --mean=1 --atol=1e-4 --rtol=0.01")
    golden(f"l10_cross_entropy_logits_{dt}", "test_op_grad_level10.py test_cross_entropy_with_logits_grad",
           [("x", (2, 5), dt), ("y", (2, 5), dt)], "nn.cross_entropy_with_logits(%x, %y)", "--eps=0.01 --scale=0.1 --mean=1")
xs = [(f"x{i}", (1,), "float32") for i in range(4)]
golden("l10_checkpoint", "test_op_grad_level10.py test_checkpoint", xs,
       "annotation.checkpoint(multiply(add(%x0, %x1), add(%x2, %x3)))")
golden("l10_checkpoint_tuple", "test_op_grad_level10.py test_checkpoint", xs,
       "let %out_tuple = (add(%x0, %x1), multiply(%x2, %x3));\n  subtract(annotation.checkpoint(%out_tuple.0), %out_tuple.1)")
for i, (a, b, ta, tb) in enumerate([((2, 3, 5), (2, 5, 4), False, False), ((2, 3, 5), (2, 4, 5), False, True),
                                    ((2, 5, 3), (2, 5, 4), True, False), ((2, 5, 3), (2, 4, 5), True, True)]):
    golden(f"l10_batch_matmul_{i}", "test_op_grad_level10.py TestBatchMatmulGrad",
           [("tensor_a", a, "float32"), ("tensor_b", b, "float32")],
           f"nn.batch_matmul(%tensor_a, %tensor_b, transpose_a={ta}, transpose_b={tb})")
golden("l10_reverse_reshape", "test_op_grad_level10.py test_reverse_reshape_grad", [("x", (3, 4, 5), "float64")],
       "contrib_reverse_reshape(%x, newshape=[-1, 0])")
for it in ["int32", "int64"]:
    data(f"one_hot_idx_{it}.npy", rng.integers(0, 5, size=(3, 4)).astype(it))
    for vt in ["float32", "float64"]:
        golden(f"l10_one_hot_{it}_{vt}", "test_op_grad_level10.py test_one_hot_grad",
               [("indices", (3, 4), it), ("on_val", (), vt), ("off_val", (), vt)],
               f'one_hot(%indices, %on_val, %off_val, depth=5, axis=-1, dtype="{vt}")', inputs={"indices": f"one_hot_idx_{it}.npy"})


def registered_ops(relayc):
    import subprocess
    try:
        return set(subprocess.run([relayc, "--list-ops"], capture_output=True, check=True).stdout.decode().split())
    except (OSError, subprocess.CalledProcessError):
        return None


# operators the rules of these programs emit that a build may lack (the file is then not written)
NEEDS = {"l2_max_pool2d": "nn.max_pool2d_grad", "l2_avg_pool2d": "nn.avg_pool2d_grad", "l2_conv2d": "nn.conv2d_backward_weight",
         "l3_zeros": "dyn.zeros", "l3_ones": "dyn.ones"}


def main():
    os.makedirs(OUT, exist_ok=True)
    ops = registered_ops(sys.argv[1] if len(sys.argv) > 1 else "build/relayc")
    written = 0
    for name, text in FILES.items():
        need = [op for prefix, op in NEEDS.items() if name.startswith(prefix)]
        if ops is not None and any(op not in ops for op in need):
            print(f"skipped {name}: {need[0]} is not registered in this build")
            continue
        with open(os.path.join(OUT, name), "w") as f:
            f.write(text)
        written += 1
    print(f"wrote {written} goldens to {OUT}")


if __name__ == "__main__":
    main()
