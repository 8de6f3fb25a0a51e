#!/usr/bin/env python3
"""Writes the FoldScaleAxis goldens of this folder (TVM's tests/python/relay/
test_pass_fold_scale_axis.py, ported: `before` -> CASE.relay, `expected` -> CASE.expected.relay).

Tensor constants live in the metadata section (0.0.5 text has no tensor literals), so the
files are generated: `python3 make_goldens.py [relayc]` rewrites them (from the repository root:
`python3 tests/golden/passes/fold_scale_axis/make_goldens.py build/relayc`). With a relayc path it
also fills the `// OUT:` lines of the run cases from the UNOPTIMISED run (`relayc --run`),
so the RUN lines with the pass must reproduce the original program's value bit for bit (every
scale is a power of two, which makes folding exact).

Shapes are smaller than TVM's (the structure is the same); TVM's random scales become fixed
powers of two; weights/biases stay parameters in the structural cases, as in TVM's tests.
"""
import base64
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def blob(shape, vals):
    data = struct.pack(f"<{len(vals)}f", *vals)
    head = struct.pack("<QQiiiBBH", 0xDD5E40F096B4A13F, 0, 1, 0, len(shape), 2, 32, 1)
    head += b"".join(struct.pack("<q", d) for d in shape) + struct.pack("<q", len(data))
    return base64.b64encode(head + data).decode()


def metadata(consts):
    nodes = ['    {\n      "type_key": ""\n    }',
             '    {\n      "type_key": "Map", \n      "keys": [\n        "relay.Constant"\n      ], \n'
             '      "data": [2]\n    }',
             '    {\n      "type_key": "Array", \n      "data": [%s]\n    }'
             % ", ".join(str(3 + i) for i in range(len(consts)))]
    for i in range(len(consts)):
        nodes.append('    {\n      "type_key": "relay.Constant", \n      "attrs": {\n'
                     '        "_checked_type_": "0", \n        "data": "%d", \n        "span": "0", \n'
                     '        "virtual_device_": "0"\n      }\n    }' % i)
    arrays = ",\n".join('    "%s"' % blob(s, v) for s, v in consts)
    return ('#[metadata]\n{\n  "root": 1, \n  "nodes": [\n' + ", \n".join(nodes) + '\n  ], \n'
            '  "b64ndarrays": [\n' + arrays + '\n  ], \n  "attrs": {"tvm_version": "0.20.dev0"}\n}\n')


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


POW2 = [0.5, 2.0, 0.25, 1.0, 4.0, 0.125, 2.0, 0.5]


def pow2(shape, sign=1.0, start=0):
    return (shape, [sign * POW2[(start + i) % len(POW2)] for i in range(prod(shape))])


class Lcg:
    def __init__(self, seed):
        self.s = seed

    def vals(self, shape):
        out = []
        for _ in range(prod(shape)):
            self.s = (self.s * 1103515245 + 12345) & 0x7FFFFFFF
            out.append(((self.s >> 8) % 33 - 16) / 8.0)  # multiples of 1/8 in [-2, 2]
        return (shape, out)


def module(body, consts=()):
    text = '#[version = "0.0.5"]\n' + body.strip() + "\n"
    if consts:
        text += "\n" + metadata(list(consts))
    return text


CASES = []


def case(name, header, before, expected=None, consts=(), exp_consts=None):
    """expected None: the pass must leave the program unchanged (TVM's *_fail tests); "RUN": a run
    case (OUT lines from the unoptimised run). exp_consts: the expected module's constants when
    they differ from the input's."""
    CASES.append((name, header, before, expected, consts, consts if exp_consts is None else exp_consts))


# ---------------------------------------------------------------------------- forward
FWD = "// RUN: relayc --pass=ForwardFoldScaleAxis --print %s\n// AFTER: {name}.expected.relay\n"
BWD = "// RUN: relayc --pass=BackwardFoldScaleAxis --print %s\n// AFTER: {name}.expected.relay\n"

case("fwd_simple", FWD + "// test_fold_fwd_simple (NCHW): multiply -> relu -> add -> conv2d; the add's other operand is divided by the scale, the weight multiplied on its I axis.\n", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(2, 4, 3, 3), float32], %in_bias: Tensor[(4, 1, 1), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  %1 = nn.relu(%0);
  %2 = add(%1, %in_bias);
  nn.conv2d(%2, %weight, padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3])
}""", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(2, 4, 3, 3), float32], %in_bias: Tensor[(4, 1, 1), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %1 = nn.relu(%x);
  %2 = expand_dims(%0, axis=1, num_newaxis=2);
  %3 = divide(%in_bias, %2);
  %4 = add(%1, %3);
  %5 = expand_dims(%0, axis=1, num_newaxis=2);
  %6 = multiply(%weight, %5);
  nn.conv2d(%4, %6, padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3])
}""", [pow2((4, 1, 1))])

case("fwd_simple_blocked", FWD + "// test_fold_fwd_simple, blocked: NCHW2c data, OIHW2i4o kernel; the scale is reshaped onto C and c (data) and I and i (kernel).\n", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(2, 2, 3, 3, 2, 4), float32], %in_bias: Tensor[(1, 2, 1, 1, 2), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  %1 = nn.relu(%0);
  %2 = add(%1, %in_bias);
  nn.conv2d(%2, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW2i4o")
}""", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(2, 2, 3, 3, 2, 4), float32], %in_bias: Tensor[(1, 2, 1, 1, 2), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[0, 2, 3]);
  %1 = nn.relu(%x);
  %2 = reshape(%0, newshape=[1, 2, 1, 1, 2]);
  %3 = divide(%in_bias, %2);
  %4 = add(%1, %3);
  %5 = reshape(%0, newshape=[1, 2, 1, 1, 2, 1]);
  %6 = multiply(%weight, %5);
  nn.conv2d(%4, %6, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW2i4o")
}""", [pow2((1, 2, 1, 1, 2))])

case("fwd_dual_path", FWD + "// test_fold_fwd_dual_path (NHWC, depthwise): the scaled value feeds two depthwise convs; each weight is multiplied on its O axis (no expand_dims: O is the last axis).\n", """
def @main(%x: Tensor[(2, 4, 5, 3), float32], %weight: Tensor[(3, 3, 1, 3), float32], %in_bias: Tensor[(3), float32]) {
  %0 = multiply(meta[relay.Constant][0], %x);
  %1 = nn.relu(%0);
  %2 = subtract(%1, %in_bias);
  %3 = nn.conv2d(%2, %weight, padding=[1, 1, 1, 1], groups=3, channels=3, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO");
  %4 = nn.conv2d(%2, %weight, padding=[1, 1, 1, 1], groups=3, channels=3, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO");
  add(%3, %4)
}""", """
def @main(%x: Tensor[(2, 4, 5, 3), float32], %weight: Tensor[(3, 3, 1, 3), float32], %in_bias: Tensor[(3), float32]) {
  %0 = nn.relu(%x);
  %1 = divide(%in_bias, meta[relay.Constant][0]);
  %2 = subtract(%0, %1);
  %3 = multiply(%weight, meta[relay.Constant][0]);
  %4 = nn.conv2d(%2, %3, padding=[1, 1, 1, 1], groups=3, channels=3, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO");
  %5 = multiply(%weight, meta[relay.Constant][0]);
  %6 = nn.conv2d(%2, %5, padding=[1, 1, 1, 1], groups=3, channels=3, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO");
  add(%4, %6)
}""", [pow2((3,))])

case("fwd_dual_path_blocked", FWD + "// test_fold_fwd_dual_path, blocked: NHWC2c depthwise with HWIO1i2o kernels (O and o carry the scale).\n", """
def @main(%x: Tensor[(2, 4, 5, 2, 2), float32], %weight: Tensor[(3, 3, 1, 2, 1, 2), float32], %in_bias: Tensor[(2, 2), float32]) {
  %0 = multiply(meta[relay.Constant][0], %x);
  %1 = nn.relu(%0);
  %2 = subtract(%1, %in_bias);
  %3 = nn.conv2d(%2, %weight, padding=[1, 1, 1, 1], groups=4, channels=4, kernel_size=[3, 3], data_layout="NHWC2c", kernel_layout="HWIO1i2o");
  %4 = nn.conv2d(%2, %weight, padding=[1, 1, 1, 1], groups=4, channels=4, kernel_size=[3, 3], data_layout="NHWC2c", kernel_layout="HWIO1i2o");
  add(%3, %4)
}""", """
def @main(%x: Tensor[(2, 4, 5, 2, 2), float32], %weight: Tensor[(3, 3, 1, 2, 1, 2), float32], %in_bias: Tensor[(2, 2), float32]) {
  %0 = nn.relu(%x);
  %1 = reshape(meta[relay.Constant][0], newshape=[1, 1, 1, 2, 2]);
  %2 = divide(%in_bias, %1);
  %3 = subtract(%0, %2);
  %4 = reshape(meta[relay.Constant][0], newshape=[1, 1, 1, 2, 1, 2]);
  %5 = multiply(%weight, %4);
  %6 = nn.conv2d(%3, %5, padding=[1, 1, 1, 1], groups=4, channels=4, kernel_size=[3, 3], data_layout="NHWC2c", kernel_layout="HWIO1i2o");
  %7 = reshape(meta[relay.Constant][0], newshape=[1, 1, 1, 2, 1, 2]);
  %8 = multiply(%weight, %7);
  %9 = nn.conv2d(%3, %8, padding=[1, 1, 1, 1], groups=4, channels=4, kernel_size=[3, 3], data_layout="NHWC2c", kernel_layout="HWIO1i2o");
  add(%6, %9)
}""", [pow2((2, 2))])

case("fwd_fail", FWD + "// test_fold_fwd_fail: the scaled value is also an operand of the final add (no demand there), so nothing folds.\n", """
def @main(%x: Tensor[(2, 11, 10, 4), float32], %weight: Tensor[(3, 3, 4, 4), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  %1 = nn.leaky_relu(%0, alpha=0.1f);
  %2 = nn.conv2d(%1, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO");
  add(%2, %0)
}""", None, [pow2((4,))])

case("fwd_fail_blocked", FWD + "// test_fold_fwd_fail, blocked (NHWC2c, HWIO1i2o).\n", """
def @main(%x: Tensor[(2, 11, 10, 2, 2), float32], %weight: Tensor[(3, 3, 4, 2, 1, 2), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  %1 = nn.leaky_relu(%0, alpha=0.1f);
  %2 = nn.conv2d(%1, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NHWC2c", kernel_layout="HWIO1i2o");
  add(%2, %0)
}""", None, [pow2((2, 2))])

case("fwd_relu_fail_var", FWD + "// test_fold_fwd_relu_fail: a scale that is not a constant cannot pass a relu.\n", """
def @main(%x: Tensor[(2, 11, 10, 4), float32], %in_scale: Tensor[(4), float32], %weight: Tensor[(3, 3, 4, 4), float32]) {
  %0 = multiply(%x, %in_scale);
  %1 = nn.relu(%0);
  nn.conv2d(%1, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO")
}""", None)

case("fwd_relu_fail_negative", FWD + "// test_fold_fwd_relu_fail: a negative constant scale cannot pass a relu (one negative element is enough).\n", """
def @main(%x: Tensor[(2, 11, 10, 2, 2), float32], %weight: Tensor[(3, 3, 4, 2, 1, 2), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  %1 = nn.relu(%0);
  nn.conv2d(%1, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NHWC2c", kernel_layout="HWIO1i2o")
}""", None, [((1, 1, 1, 2, 2), [0.5, 2.0, -0.25, 1.0])])

case("fwd_let_fail", FWD + "// test_fold_fwd_let_fail: a let between the scale and the conv stops the demand.\n", """
def @main(%x: Tensor[(2, 11, 10, 4), float32], %weight: Tensor[(3, 3, 4, 4), float32], %in_bias: Tensor[(4), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  %1 = nn.relu(%0);
  let %x_var = add(%1, %in_bias);
  %2 = nn.conv2d(%x_var, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO");
  add(%2, %x_var)
}""", None, [pow2((4,))])

case("fwd_negative_scale", FWD + "// test_fold_fwd_negative_scale: without a relu in between, a negative scale folds.\n", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(4, 4, 3, 3), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  nn.conv2d(%0, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3])
}""", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(4, 4, 3, 3), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %1 = expand_dims(%0, axis=1, num_newaxis=2);
  %2 = multiply(%weight, %1);
  nn.conv2d(%x, %2, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3])
}""", [pow2((4, 1, 1), -1.0)])

case("fwd_negative_scale_blocked", FWD + "// test_fold_fwd_negative_scale, blocked: NCHW2c data, OIHW4i2o kernel (the scale's 2x2 becomes I=1, i=4).\n", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(4, 1, 3, 3, 4, 2), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  nn.conv2d(%0, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW4i2o")
}""", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(4, 1, 3, 3, 4, 2), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[0, 2, 3]);
  %1 = reshape(%0, newshape=[1, 1, 1, 1, 4, 1]);
  %2 = multiply(%weight, %1);
  nn.conv2d(%x, %2, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW4i2o")
}""", [pow2((1, 2, 1, 1, 2), -1.0)])

case("fwd_dense", FWD + "// test_fold_fwd_dense: the scale on the dense's input columns goes into the weight's columns.\n", """
def @main(%x: Tensor[(2, 4), float32], %weight: Tensor[(3, 4), float32], %in_bias: Tensor[(4), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  %1 = nn.relu(%0);
  %2 = add(%1, %in_bias);
  nn.dense(%2, %weight)
}""", """
def @main(%x: Tensor[(2, 4), float32], %weight: Tensor[(3, 4), float32], %in_bias: Tensor[(4), float32]) {
  %0 = nn.relu(%x);
  %1 = divide(%in_bias, meta[relay.Constant][0]);
  %2 = add(%0, %1);
  %3 = multiply(%weight, meta[relay.Constant][0]);
  nn.dense(%2, %3)
}""", [pow2((4,))])

case("fwd_conv3d", FWD + "// test_fold_fwd_conv3d (NCDHW).\n", """
def @main(%x: Tensor[(2, 4, 3, 3, 3), float32], %weight: Tensor[(2, 4, 3, 3, 3), float32], %in_bias: Tensor[(4, 1, 1, 1), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  %1 = nn.relu(%0);
  %2 = add(%1, %in_bias);
  nn.conv3d(%2, %weight, padding=[1, 1, 1, 1, 1, 1], channels=2, kernel_size=[3, 3, 3])
}""", """
def @main(%x: Tensor[(2, 4, 3, 3, 3), float32], %weight: Tensor[(2, 4, 3, 3, 3), float32], %in_bias: Tensor[(4, 1, 1, 1), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[1, 2, 3]);
  %1 = nn.relu(%x);
  %2 = expand_dims(%0, axis=1, num_newaxis=3);
  %3 = divide(%in_bias, %2);
  %4 = add(%1, %3);
  %5 = expand_dims(%0, axis=1, num_newaxis=3);
  %6 = multiply(%weight, %5);
  nn.conv3d(%4, %6, padding=[1, 1, 1, 1, 1, 1], channels=2, kernel_size=[3, 3, 3])
}""", [pow2((4, 1, 1, 1))])

case("fwd_conv3d_blocked", FWD + "// test_fold_fwd_conv3d, blocked: NCDHW2c data, OIDHW2i4o kernel.\n", """
def @main(%x: Tensor[(2, 2, 3, 3, 3, 2), float32], %weight: Tensor[(2, 2, 3, 3, 3, 2, 4), float32], %in_bias: Tensor[(1, 2, 1, 1, 1, 2), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  %1 = nn.relu(%0);
  %2 = add(%1, %in_bias);
  nn.conv3d(%2, %weight, padding=[1, 1, 1, 1, 1, 1], channels=8, kernel_size=[3, 3, 3], data_layout="NCDHW2c", kernel_layout="OIDHW2i4o")
}""", """
def @main(%x: Tensor[(2, 2, 3, 3, 3, 2), float32], %weight: Tensor[(2, 2, 3, 3, 3, 2, 4), float32], %in_bias: Tensor[(1, 2, 1, 1, 1, 2), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[0, 2, 3, 4]);
  %1 = nn.relu(%x);
  %2 = reshape(%0, newshape=[1, 2, 1, 1, 1, 2]);
  %3 = divide(%in_bias, %2);
  %4 = add(%1, %3);
  %5 = reshape(%0, newshape=[1, 2, 1, 1, 1, 2, 1]);
  %6 = multiply(%weight, %5);
  nn.conv3d(%4, %6, padding=[1, 1, 1, 1, 1, 1], channels=8, kernel_size=[3, 3, 3], data_layout="NCDHW2c", kernel_layout="OIDHW2i4o")
}""", [pow2((1, 2, 1, 1, 1, 2))])

case("fwd_scalar", FWD + "// spec/passes.md 4.10: a rank-0 scale becomes repeat(expand_dims(s, axis=0), repeats=C, axis=0).\n", """
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 1, 1), float32]) {
  %0 = nn.relu(multiply(%x, 2f));
  nn.conv2d(%0, %w, padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1])
}""", """
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 1, 1), float32]) {
  %0 = repeat(expand_dims(2f, axis=0), repeats=2, axis=0);
  %1 = multiply(%w, expand_dims(%0, axis=1, num_newaxis=2));
  nn.conv2d(nn.relu(%x), %1, padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1])
}""")

case("fwd_grouped_fail", FWD + "// groups=2 that is not depthwise: TVM handles only groups=1 and depthwise convs, nothing folds.\n", """
def @main(%x: Tensor[(1, 4, 5, 5), float32], %w: Tensor[(4, 2, 3, 3), float32]) {
  %0 = multiply(%x, meta[relay.Constant][0]);
  nn.conv2d(%0, %w, padding=[1, 1, 1, 1], groups=2, channels=4, kernel_size=[3, 3])
}""", None, [pow2((4, 1, 1))])

case("fwd_nested_fn", FWD + "// a function literal is folded inside (its body is a dataflow graph too); the scale is also a variable here: without a relu any scale folds.\n", """
def @main(%x: Tensor[(2, 4), float32], %s: Tensor[(4), float32], %weight: Tensor[(3, 4), float32]) {
  %0 = fn (%y: Tensor[(2, 4), float32]) {
    nn.dense(multiply(%y, %s), %weight)
  };
  %0(%x)
}""", """
def @main(%x: Tensor[(2, 4), float32], %s: Tensor[(4), float32], %weight: Tensor[(3, 4), float32]) {
  %0 = fn (%y: Tensor[(2, 4), float32]) {
    nn.dense(%y, multiply(%weight, %s))
  };
  %0(%x)
}""")

case("fwd_tuple_proj", FWD + "// TVM's forward rewriter (run whenever a conv or dense demands a scale) folds a projection of a tuple literal to its field; relayc keeps it when a dropped field has an effect (TVM would drop the ref_write).\n", """
def @main(%x: Tensor[(2, 4), float32], %weight: Tensor[(3, 4), float32], %r: ref(int32)) {
  %0 = (%x, add(%x, 1f));
  %1 = (%x, ref_write(%r, 1));
  %2 = add(%0.0, %1.0);
  nn.dense(%2, %weight)
}""", """
def @main(%x: Tensor[(2, 4), float32], %weight: Tensor[(3, 4), float32], %r: ref(int32)) {
  %0 = (%x, ref_write(%r, 1));
  %1 = add(%x, %0.0);
  nn.dense(%1, %weight)
}""")

# ---------------------------------------------------------------------------- backward
case("bwd_simple", BWD + "// test_fold_bwd_simple (NCHW): conv2d -> add -> relu -> multiply; the weight is scaled on its O axis, the added bias by the expanded scale.\n", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(8, 4, 3, 3), float32], %out_bias: Tensor[(8), float32]) {
  %0 = expand_dims(%out_bias, axis=1, num_newaxis=2);
  %1 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %2 = add(%1, %0);
  %3 = nn.relu(%2);
  multiply(%3, meta[relay.Constant][0])
}""", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(8, 4, 3, 3), float32], %out_bias: Tensor[(8), float32]) {
  %0 = expand_dims(%out_bias, axis=1, num_newaxis=2);
  %1 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %2 = expand_dims(%1, axis=1, num_newaxis=3);
  %3 = multiply(%weight, %2);
  %4 = nn.conv2d(%x, %3, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %5 = expand_dims(%1, axis=1, num_newaxis=2);
  %6 = multiply(%0, %5);
  %7 = add(%4, %6);
  nn.relu(%7)
}""", [pow2((8, 1, 1))])

case("bwd_simple_blocked", BWD + "// test_fold_bwd_simple, blocked: NCHW2c data, OIHW1i2o kernel; the scale is a reshaped (8) constant.\n", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(4, 4, 3, 3, 1, 2), float32], %out_bias: Tensor[(8), float32]) {
  %0 = reshape(%out_bias, newshape=[1, 4, 1, 1, 2]);
  %1 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  %2 = add(%1, %0);
  %3 = nn.relu(%2);
  %4 = reshape(meta[relay.Constant][0], newshape=[1, 4, 1, 1, 2]);
  multiply(%3, %4)
}""", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(4, 4, 3, 3, 1, 2), float32], %out_bias: Tensor[(8), float32]) {
  %0 = reshape(%out_bias, newshape=[1, 4, 1, 1, 2]);
  %1 = reshape(meta[relay.Constant][0], newshape=[1, 4, 1, 1, 2]);
  %2 = squeeze(%1, axis=[0, 2, 3]);
  %3 = reshape(%2, newshape=[4, 1, 1, 1, 1, 2]);
  %4 = multiply(%weight, %3);
  %5 = nn.conv2d(%x, %4, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  %6 = reshape(%2, newshape=[1, 4, 1, 1, 2]);
  %7 = multiply(%0, %6);
  %8 = add(%5, %7);
  nn.relu(%8)
}""", [pow2((8,))])

case("bwd_dual_path", BWD + "// test_fold_bwd_dual_path: add(relu(conv), relu(conv)) * scale: both convs take the scale (one squeeze, two expand_dims).\n", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(8, 4, 3, 3), float32], %out_bias: Tensor[(8), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %3 = nn.relu(%2);
  %4 = add(%1, %3);
  multiply(%4, meta[relay.Constant][0])
}""", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(8, 4, 3, 3), float32], %out_bias: Tensor[(8), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %1 = expand_dims(%0, axis=1, num_newaxis=3);
  %2 = multiply(%weight, %1);
  %3 = nn.conv2d(%x, %2, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %4 = nn.relu(%3);
  %5 = expand_dims(%0, axis=1, num_newaxis=3);
  %6 = multiply(%weight, %5);
  %7 = nn.conv2d(%x, %6, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %8 = nn.relu(%7);
  add(%4, %8)
}""", [pow2((8, 1, 1))])

case("bwd_dual_path_blocked", BWD + "// test_fold_bwd_dual_path, blocked: NCHW2c, OIHW1i2o; the (4, 1, 1, 2) scale is squeezed to (4, 2).\n", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(4, 4, 3, 3, 1, 2), float32], %out_bias: Tensor[(4, 1, 1, 2), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  %3 = nn.relu(%2);
  %4 = add(%1, %3);
  multiply(%4, meta[relay.Constant][0])
}""", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(4, 4, 3, 3, 1, 2), float32], %out_bias: Tensor[(4, 1, 1, 2), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %1 = reshape(%0, newshape=[4, 1, 1, 1, 1, 2]);
  %2 = multiply(%weight, %1);
  %3 = nn.conv2d(%x, %2, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  %4 = nn.relu(%3);
  %5 = reshape(%0, newshape=[4, 1, 1, 1, 1, 2]);
  %6 = multiply(%weight, %5);
  %7 = nn.conv2d(%x, %6, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  %8 = nn.relu(%7);
  add(%4, %8)
}""", [pow2((4, 1, 1, 2))])

case("bwd_dual_consumer", BWD + "// test_fold_bwd_dual_consumer: relu(conv * s) feeds two convs; every multiply folds into its own conv (each with its own squeeze).\n", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(4, 4, 3, 3), float32], %out_bias: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = multiply(%0, meta[relay.Constant][0]);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %4 = multiply(%3, meta[relay.Constant][0]);
  %5 = nn.relu(%4);
  %6 = nn.conv2d(%2, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %7 = multiply(%6, meta[relay.Constant][0]);
  %8 = nn.relu(%7);
  add(%5, %8)
}""", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(4, 4, 3, 3), float32], %out_bias: Tensor[(4), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %1 = expand_dims(%0, axis=1, num_newaxis=3);
  %2 = multiply(%weight, %1);
  %3 = nn.conv2d(%x, %2, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %4 = nn.relu(%3);
  %5 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %6 = expand_dims(%5, axis=1, num_newaxis=3);
  %7 = multiply(%weight, %6);
  %8 = nn.conv2d(%4, %7, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %9 = nn.relu(%8);
  %10 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %11 = expand_dims(%10, axis=1, num_newaxis=3);
  %12 = multiply(%weight, %11);
  %13 = nn.conv2d(%4, %12, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %14 = nn.relu(%13);
  add(%9, %14)
}""", [pow2((4, 1, 1))])

case("bwd_fail_layouts", BWD + "// test_fold_bwd_fail (fail1): the two convs' outputs have their channels on different axes (NCHW vs out_layout CNHW), so the add offers nothing.\n", """
def @main(%x: Tensor[(4, 4, 10, 10), float32], %weight: Tensor[(4, 4, 3, 3), float32], %out_bias: Tensor[(4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], out_layout="CNHW");
  %3 = nn.relu(%2);
  %4 = add(%1, %3);
  multiply(%4, meta[relay.Constant][0])
}""", None, [pow2((4, 1, 1))])

case("bwd_fail_shared", BWD + "// test_fold_bwd_fail (fail2): the conv's output is also used by a relu, so the scale cannot be pushed into it.\n", """
def @main(%x: Tensor[(4, 2, 10, 10, 2), float32], %weight: Tensor[(2, 4, 3, 3, 1, 2), float32], %out_bias: Tensor[(2, 1, 1, 2), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  %1 = nn.relu(%0);
  %2 = multiply(%0, meta[relay.Constant][0]);
  add(%2, %1)
}""", None, [pow2((2, 1, 1, 2))])

case("bwd_fail_layouts_blocked", BWD + "// test_fold_bwd_fail (fail1), blocked: NCHW2c data, OIHW1i2o kernel, the second conv's out_layout CNHW2c; the add offers nothing.\n", """
def @main(%x: Tensor[(2, 2, 10, 10, 2), float32], %weight: Tensor[(2, 4, 3, 3, 1, 2), float32], %out_bias: Tensor[(2, 1, 1, 2), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o", out_layout="CNHW2c");
  %3 = nn.relu(%2);
  %4 = add(%1, %3);
  multiply(%4, meta[relay.Constant][0])
}""", None, [pow2((2, 1, 1, 2))])

case("bwd_fail_shared_plain", BWD + "// test_fold_bwd_fail (fail2), NCHW: the conv's output is also used by a relu, so the scale cannot be pushed into it.\n", """
def @main(%x: Tensor[(4, 4, 10, 10), float32], %weight: Tensor[(4, 4, 3, 3), float32], %out_bias: Tensor[(4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = multiply(%0, meta[relay.Constant][0]);
  add(%2, %1)
}""", None, [pow2((4, 1, 1))])

case("bwd_relu_fail_var", BWD + "// test_fold_bwd_relu_fail: a variable scale cannot cross the relu.\n", """
def @main(%x: Tensor[(4, 4, 10, 10), float32], %weight: Tensor[(4, 4, 3, 3), float32], %in_scale: Tensor[(4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  multiply(%1, %in_scale)
}""", None)

case("bwd_relu_fail_negative", BWD + "// test_fold_bwd_relu_fail: a negative constant scale cannot cross the relu.\n", """
def @main(%x: Tensor[(4, 2, 10, 10, 2), float32], %weight: Tensor[(2, 4, 3, 3, 1, 2), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  %1 = nn.relu(%0);
  multiply(%1, meta[relay.Constant][0])
}""", None, [pow2((1, 2, 1, 1, 2), -1.0)])

case("bwd_negative_scale", BWD + "// test_fold_bwd_negative_scale: no relu, a negative scale folds.\n", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(8, 4, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  multiply(%0, meta[relay.Constant][0])
}""", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(8, 4, 3, 3), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %1 = expand_dims(%0, axis=1, num_newaxis=3);
  %2 = multiply(%weight, %1);
  nn.conv2d(%x, %2, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3])
}""", [pow2((8, 1, 1), -1.0)])

case("bwd_negative_scale_blocked", BWD + "// test_fold_bwd_negative_scale, blocked (NCHW2c, OIHW1i2o).\n", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(4, 4, 3, 3, 1, 2), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o");
  multiply(%0, meta[relay.Constant][0])
}""", """
def @main(%x: Tensor[(2, 2, 5, 5, 2), float32], %weight: Tensor[(4, 4, 3, 3, 1, 2), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[0, 2, 3]);
  %1 = reshape(%0, newshape=[4, 1, 1, 1, 1, 2]);
  %2 = multiply(%weight, %1);
  nn.conv2d(%x, %2, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW2c", kernel_layout="OIHW1i2o")
}""", [pow2((1, 4, 1, 1, 2), -1.0)])

case("bwd_dense", BWD + "// test_fold_bwd_dense: dense -> add -> relu -> multiply; the weight's rows take expand_dims(s, axis=1), the bias takes s.\n", """
def @main(%x: Tensor[(2, 4), float32], %weight: Tensor[(3, 4), float32], %in_bias: Tensor[(3), float32]) {
  %0 = nn.dense(%x, %weight);
  %1 = add(%0, %in_bias);
  %2 = nn.relu(%1);
  multiply(%2, meta[relay.Constant][0])
}""", """
def @main(%x: Tensor[(2, 4), float32], %weight: Tensor[(3, 4), float32], %in_bias: Tensor[(3), float32]) {
  %0 = expand_dims(meta[relay.Constant][0], axis=1);
  %1 = multiply(%weight, %0);
  %2 = nn.dense(%x, %1);
  %3 = multiply(%in_bias, meta[relay.Constant][0]);
  %4 = add(%2, %3);
  nn.relu(%4)
}""", [pow2((3,))])

case("bwd_bias_add", BWD + "// test_fold_bwd_bias_add: conv2d -> nn.bias_add -> relu -> multiply; the bias is multiplied by the squeezed scale.\n", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(4, 4, 3, 3), float32], %out_bias: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %out_bias);
  %2 = nn.relu(%1);
  multiply(%2, meta[relay.Constant][0])
}""", """
def @main(%x: Tensor[(2, 4, 5, 5), float32], %weight: Tensor[(4, 4, 3, 3), float32], %out_bias: Tensor[(4), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %1 = expand_dims(%0, axis=1, num_newaxis=3);
  %2 = multiply(%weight, %1);
  %3 = nn.conv2d(%x, %2, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %4 = multiply(%out_bias, %0);
  %5 = nn.bias_add(%3, %4);
  nn.relu(%5)
}""", [pow2((4, 1, 1))])

case("bwd_conv3d", BWD + "// test_fold_bwd_conv3d (NCDHW).\n", """
def @main(%x: Tensor[(2, 4, 3, 3, 3), float32], %weight: Tensor[(8, 4, 3, 3, 3), float32], %out_bias: Tensor[(8), float32]) {
  %0 = expand_dims(%out_bias, axis=1, num_newaxis=3);
  %1 = nn.conv3d(%x, %weight, padding=[1, 1, 1, 1, 1, 1], channels=8, kernel_size=[3, 3, 3]);
  %2 = add(%1, %0);
  %3 = nn.relu(%2);
  multiply(%3, meta[relay.Constant][0])
}""", """
def @main(%x: Tensor[(2, 4, 3, 3, 3), float32], %weight: Tensor[(8, 4, 3, 3, 3), float32], %out_bias: Tensor[(8), float32]) {
  %0 = expand_dims(%out_bias, axis=1, num_newaxis=3);
  %1 = squeeze(meta[relay.Constant][0], axis=[1, 2, 3]);
  %2 = expand_dims(%1, axis=1, num_newaxis=4);
  %3 = multiply(%weight, %2);
  %4 = nn.conv3d(%x, %3, padding=[1, 1, 1, 1, 1, 1], channels=8, kernel_size=[3, 3, 3]);
  %5 = expand_dims(%1, axis=1, num_newaxis=3);
  %6 = multiply(%0, %5);
  %7 = add(%4, %6);
  nn.relu(%7)
}""", [pow2((8, 1, 1, 1))])

case("bwd_conv3d_blocked", BWD + "// test_fold_bwd_conv3d, blocked: NCDHW2c data, OIDHW1i2o kernel.\n", """
def @main(%x: Tensor[(2, 2, 3, 3, 3, 2), float32], %weight: Tensor[(4, 4, 3, 3, 3, 1, 2), float32], %out_bias: Tensor[(8), float32]) {
  %0 = reshape(%out_bias, newshape=[1, 4, 1, 1, 1, 2]);
  %1 = nn.conv3d(%x, %weight, padding=[1, 1, 1, 1, 1, 1], channels=8, kernel_size=[3, 3, 3], data_layout="NCDHW2c", kernel_layout="OIDHW1i2o");
  %2 = add(%1, %0);
  %3 = nn.relu(%2);
  %4 = reshape(meta[relay.Constant][0], newshape=[1, 4, 1, 1, 1, 2]);
  multiply(%3, %4)
}""", """
def @main(%x: Tensor[(2, 2, 3, 3, 3, 2), float32], %weight: Tensor[(4, 4, 3, 3, 3, 1, 2), float32], %out_bias: Tensor[(8), float32]) {
  %0 = reshape(%out_bias, newshape=[1, 4, 1, 1, 1, 2]);
  %1 = reshape(meta[relay.Constant][0], newshape=[1, 4, 1, 1, 1, 2]);
  %2 = squeeze(%1, axis=[0, 2, 3, 4]);
  %3 = reshape(%2, newshape=[4, 1, 1, 1, 1, 1, 2]);
  %4 = multiply(%weight, %3);
  %5 = nn.conv3d(%x, %4, padding=[1, 1, 1, 1, 1, 1], channels=8, kernel_size=[3, 3, 3], data_layout="NCDHW2c", kernel_layout="OIDHW1i2o");
  %6 = reshape(%2, newshape=[1, 4, 1, 1, 1, 2]);
  %7 = multiply(%0, %6);
  %8 = add(%5, %7);
  nn.relu(%8)
}""", [pow2((8,))])

case("bwd_scalar", BWD + "// spec/passes.md 4.10: a rank-0 scale through relu and nn.bias_add.\n", """
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 1, 1), float32], %b: Tensor[(3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1]);
  multiply(nn.relu(nn.bias_add(%0, %b)), 0.5f)
}""", """
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 1, 1), float32], %b: Tensor[(3), float32]) {
  %0 = repeat(expand_dims(0.5f, axis=0), repeats=3, axis=0);
  %1 = nn.conv2d(%x, multiply(%w, expand_dims(%0, axis=1, num_newaxis=3)), padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1]);
  nn.relu(nn.bias_add(%1, multiply(%b, %0)))
}""")

case("bwd_add_two_offers", BWD + "// add of two offers of equal shape: both convs take the scale; the right-hand side crossed a relu, so a negative scale would not fold.\n", """
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w1: Tensor[(3, 2, 1, 1), float32], %w2: Tensor[(3, 2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1]);
  %1 = nn.conv2d(%x, %w2, padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1]);
  %2 = add(%0, nn.relu(%1));
  multiply(%2, meta[relay.Constant][0])
}""", """
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w1: Tensor[(3, 2, 1, 1), float32], %w2: Tensor[(3, 2, 1, 1), float32]) {
  %0 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
  %1 = nn.conv2d(%x, multiply(%w1, expand_dims(%0, axis=1, num_newaxis=3)), padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1]);
  %2 = nn.conv2d(%x, multiply(%w2, expand_dims(%0, axis=1, num_newaxis=3)), padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1]);
  add(%1, nn.relu(%2))
}""", [pow2((3, 1, 1))])

case("bwd_add_two_offers_negative", BWD + "// as bwd_add_two_offers with a negative scale: the relu on the right-hand side forbids it (TVM looks at the left side only and would fold it, changing the value).\n", """
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w1: Tensor[(3, 2, 1, 1), float32], %w2: Tensor[(3, 2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1]);
  %1 = nn.conv2d(%x, %w2, padding=[0, 0, 0, 0], channels=3, kernel_size=[1, 1]);
  %2 = add(%0, nn.relu(%1));
  multiply(%2, meta[relay.Constant][0])
}""", None, [pow2((3, 1, 1), -1.0)])

case("bwd_add_axes_differ", BWD + "// add(conv NCHW, conv with out_layout CNHW broadcast onto it): the add offers the left side's axis but the right side offers another one; TVM stops with an internal check here, relayc leaves the function unchanged.\n", """
def @main(%x: Tensor[(1, 2, 3, 3), float32], %w: Tensor[(4, 2, 1, 1), float32], %x2: Tensor[(4, 2, 1, 1), float32], %w2: Tensor[(1, 2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[0, 0, 0, 0], channels=4, kernel_size=[1, 1]);
  %1 = nn.conv2d(%x2, %w2, padding=[0, 0, 0, 0], channels=1, kernel_size=[1, 1], out_layout="CNHW");
  %2 = add(%0, %1);
  multiply(%2, meta[relay.Constant][0])
}""", None, [pow2((4, 1, 1))])

case("bwd_dense_rank3_fail", BWD + "// nn.dense with rank-3 data: TVM would scale axis 1 (not the units axis) and compute a wrong value; relayc leaves it.\n", """
def @main(%x: Tensor[(2, 3, 4), float32], %weight: Tensor[(3, 4), float32]) {
  %0 = nn.dense(%x, %weight);
  multiply(%0, meta[relay.Constant][0])
}""", None, [pow2((3, 1))])


# ---------------------------------------------------------------------------- sequence
def seq_case():
    rng = Lcg(7)
    w = rng.vals((4, 3, 3, 3))
    b = rng.vals((4, 1, 1))
    body = """
def @main(%data: Tensor[(1, 3, 6, 6), float32]) {
  %0 = nn.conv2d(%data, meta[relay.Constant][0], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = add(%0, meta[relay.Constant][1]);
  %2 = nn.relu(%1);
  multiply(%2, 2f)
}"""
    expected = """
def @main(%data: Tensor[(1, 3, 6, 6), float32]) {
  %0 = nn.conv2d(%data, meta[relay.Constant][0], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = add(%0, meta[relay.Constant][1]);
  nn.relu(%1)
}"""
    hdr = ("// RUN: relayc --pass=BackwardFoldScaleAxis,ForwardFoldScaleAxis,FoldConstant --print %s\n"
           "// AFTER: {name}.expected.relay\n"
           "// test_fold_bwd_simple_constant: FoldScaleAxis at opt level 3 (Backward, Forward, FoldConstant): the\n"
           "// scalar multiply disappears into the constant weight and bias.\n")
    case("seq_simple_constant", hdr, body, expected, [w, b],
         [(w[0], [v * 2 for v in w[1]]), (b[0], [v * 2 for v in b[1]])])
    hdr2 = ("// RUN: relayc --pass=FoldScaleAxis --print %s\n// AFTER: {name}.expected.relay\n"
            "// --pass=FoldScaleAxis runs at TVM's default opt level 2, where the sequence filters its level-3\n"
            "// members: only FoldConstant runs (spec/passes.md 1.1, 4.10), and here it changes nothing.\n")
    case("seq_level2", hdr2, body, None, [w, b])


seq_case()


# ---------------------------------------------------------------------------- runs
def run_cases():
    rng = Lcg(11)
    consts = [rng.vals((1, 4, 3, 3)), pow2((4, 1, 1)), rng.vals((2, 4, 3, 3)), rng.vals((4, 1, 1)),
              rng.vals((2, 4)), pow2((4,), 1.0, 3), rng.vals((3, 4)), rng.vals((4,)),
              rng.vals((1, 3, 3, 3)), rng.vals((3, 3, 1, 3)), pow2((3,), 1.0, 1)]
    fwd = """
def @main() {
  %0 = multiply(meta[relay.Constant][0], meta[relay.Constant][1]);
  %1 = nn.relu(%0);
  %2 = add(%1, meta[relay.Constant][3]);
  %3 = nn.conv2d(%2, meta[relay.Constant][2], padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3]);
  %4 = multiply(meta[relay.Constant][4], meta[relay.Constant][5]);
  %5 = subtract(nn.relu(%4), meta[relay.Constant][7]);
  %6 = nn.dense(%5, meta[relay.Constant][6]);
  %7 = multiply(meta[relay.Constant][10], meta[relay.Constant][8]);
  %8 = nn.conv2d(%7, meta[relay.Constant][9], padding=[1, 1, 1, 1], groups=3, channels=3, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO");
  (%3, %6, %8)
}"""
    hdr = ("// RUN: relayc --run %s\n"
           "// RUN: relayc --pass=ForwardFoldScaleAxis --run %s\n"
           "// RUN: relayc --pass=BackwardFoldScaleAxis,ForwardFoldScaleAxis,FoldConstant --run %s\n"
           "// RUN: relayc -O0 --pass=ForwardFoldScaleAxis --run %s\n"
           "// ForwardFoldScaleAxis on an NCHW conv, a dense and an NHWC depthwise conv: the same value as the\n"
           "// original program (power-of-two scales make the fold exact).\n")
    case("run_forward", hdr, fwd, "RUN", consts)
    rng = Lcg(13)
    consts = [rng.vals((1, 4, 3, 3)), rng.vals((4, 4, 3, 3)), rng.vals((4,)), pow2((4, 1, 1)),
              rng.vals((2, 4)), rng.vals((3, 4)), rng.vals((3,)), pow2((3,), 1.0, 2)]
    bwd = """
def @main() {
  %0 = nn.conv2d(meta[relay.Constant][0], meta[relay.Constant][1], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, meta[relay.Constant][2]);
  %2 = nn.relu(%1);
  %3 = multiply(%2, meta[relay.Constant][3]);
  %4 = nn.dense(meta[relay.Constant][4], meta[relay.Constant][5]);
  %5 = add(%4, meta[relay.Constant][6]);
  %6 = multiply(meta[relay.Constant][7], nn.leaky_relu(%5, alpha=0.5f));
  (%3, %6)
}"""
    hdr = ("// RUN: relayc --run %s\n"
           "// RUN: relayc --pass=BackwardFoldScaleAxis --run %s\n"
           "// RUN: relayc --pass=BackwardFoldScaleAxis,ForwardFoldScaleAxis,FoldConstant --run %s\n"
           "// RUN: relayc -O0 --pass=BackwardFoldScaleAxis --run %s\n"
           "// BackwardFoldScaleAxis through bias_add + relu into a conv and through add + leaky_relu into a dense:\n"
           "// the same value as the original program.\n")
    case("run_backward", hdr, bwd, "RUN", consts)


run_cases()


def main():
    relayc = sys.argv[1] if len(sys.argv) > 1 else None
    for name, header, before, expected, consts, exp_consts in CASES:
        hdr = header.replace("{name}", name)
        path = os.path.join(HERE, name + ".relay")
        text = module(before, consts)
        if expected == "RUN":
            if relayc:
                open(path, "w").write(text)
                out = subprocess.run([relayc, "--run", path], capture_output=True)
                if out.returncode != 0:
                    sys.exit(f"{name}: {out.stderr.decode()}")
                hdr += "".join("// OUT: " + l + "\n" if l else "// OUT:\n" for l in out.stdout.decode().splitlines())
            else:
                old = open(path).read() if os.path.exists(path) else ""
                hdr += "".join(l + "\n" for l in old.splitlines() if l.startswith("// OUT:"))
            open(path, "w").write(hdr + text)
            continue
        if expected is None:
            hdr = hdr.replace("AFTER: " + name + ".expected.relay", "AFTER: " + name + ".relay")
            open(path, "w").write(hdr + text)
            continue
        open(path, "w").write(hdr + text)
        open(os.path.join(HERE, name + ".expected.relay"), "w").write(module(expected, exp_consts))
    print(f"{len(CASES)} cases written")


if __name__ == "__main__":
    main()
