#!/usr/bin/env python3
"""Writes the transform_* goldens: the Relay texts of TVM's
tests/python/relay/transform/test_compiler_function_utils.py (five modules) and
test_capture_postdfsindex_in_spans.py (its input, whose printed form the test pins).

The tests bind meta[relay.Constant][0..2] from a Python metatable of random float16 arrays of
shapes (2304, 768), (2304,), (600, 32, 64); a 4.7 MB metadata section would be too big for a golden,
so every extent is scaled down (1600 -> 16, 768 -> 8, 2304 -> 24, 600 -> 6, 32 -> 3, 64 -> 4) and
the constants are written here as a #[metadata] section (TVM's NDArray format, values i / 64). The
program text is otherwise verbatim. The capture test's .out is relayc's print, written only when its
program part is exactly the test's expected text (spans dropped, extents scaled).
Run: /usr/bin/python3 tests/golden/tvm/snippets/make_compiler_fn_goldens.py build/relayc
"""
import base64
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TVM = "tests/python/relay/transform"
SCALE = {"1600": "16", "768": "8", "2304": "24", "600": "6", "32": "3", "64": "4"}


def scaled(text):
    """The test's text with every extent (and dense's units) scaled down."""
    return re.sub(r"\b(1600|768|2304|600|32|64)\b", lambda m: SCALE[m.group(1)], text)


def blob(shape):
    n = 1
    for d in shape:
        n *= d
    data = struct.pack(f"<{n}e", *[i / 64.0 for i in range(n)])
    head = struct.pack("<QQiiiBBH", 0xDD5E40F096B4A13F, 0, 1, 0, len(shape), 2, 16, 1)
    head += b"".join(struct.pack("<q", d) for d in shape) + struct.pack("<q", len(data))
    return base64.b64encode(head + data).decode()


def metadata(shapes):
    nodes = ['{"type_key": ""}', '{"type_key": "Map", "keys": ["relay.Constant"], "data": [2]}',
             '{"type_key": "Array", "data": [%s]}' % ", ".join(str(3 + i) for i in range(len(shapes)))]
    nodes += ['{"type_key": "relay.Constant", "attrs": {"_checked_type_": "0", "data": "%d", "span": "0", '
              '"virtual_device_": "0"}}' % i for i in range(len(shapes))]
    return ("#[metadata]\n{\n  \"root\": 1,\n  \"nodes\": [\n    " + ",\n    ".join(nodes) + "\n  ],\n"
            "  \"b64ndarrays\": [\n    " + ",\n    ".join('"%s"' % blob(s) for s in shapes) + "\n  ],\n"
            "  \"attrs\": {\"tvm_version\": \"0.8.dev0\"}\n}\n")


CONSTS = [(24, 8), (24,), (6, 3, 4)]

CUBLAS = """  %2 = fn(%y_3_i0: Tensor[(600, 32, 64), float16], %y_3_i1: Tensor[(600, 32, 64), float16],
          Inline=1, Compiler="cublas", global_symbol="tvmgen_default_cublas_main_3", Primitive=1) -> Tensor[(600, 32, 32), float16] {
    %6 = fn (%FunctionVar_0_01: Tensor[(600, 32, 64), float16], %FunctionVar_0_11: Tensor[(600, 32, 64), float16],
             PartitionedFromPattern="nn.batch_matmul_", Composite="cublas.batch_matmul") -> Tensor[(600, 32, 32), float16] {
      nn.batch_matmul(%FunctionVar_0_01, %FunctionVar_0_11, out_dtype="float16", transpose_b=True)
    };
    %6(%y_3_i0, %y_3_i1)
  };
  %3 = %2(%x3, meta[relay.Constant][2]);
  (%1, %3)
}
"""
MAIN = ("def @main(%x0 : Tensor[(1600, 768), float16], %x3 : Tensor[(600, 32, 64), float16]) -> "
        "(Tensor[(1600, 2304), float16], Tensor[(600, 32, 32), float16]) {\n")
CUTLASS_FN = """fn(%y_0_i0: Tensor[(1600, 768), float16], %y_0_i1: Tensor[(2304, 768), float16], %y_0_i2: Tensor[(2304), float16],
      Inline=1, Compiler="cutlass", global_symbol="tvmgen_default_cutlass_main_0", Primitive=1) -> Tensor[(1600, 2304), float16] {
    %4 = fn (%FunctionVar_0_0: Tensor[(1600, 768), float16], %FunctionVar_0_1: Tensor[(2304, 768), float16], %FunctionVar_0_2: Tensor[(2304), float16],
             PartitionedFromPattern="nn.dense_add_", Composite="cutlass.dense_bias") -> Tensor[(1600, 2304), float16] {
      %5 = nn.dense(%FunctionVar_0_0, %FunctionVar_0_1, units=2304);
      add(%5, %FunctionVar_0_2)
    };
    %4(%y_0_i0, %y_0_i1, %y_0_i2)
  }"""
OUTLINED_DEF = """def @tvmgen_default_cutlass_main_0(%y_0_i0: Tensor[(1600, 768), float16], %y_0_i1: Tensor[(2304, 768), float16], %y_0_i2: Tensor[(2304), float16],
          {attrs}) -> Tensor[(1600, 2304), float16] {{
  %4 = fn (%FunctionVar_0_0: Tensor[(1600, 768), float16], %FunctionVar_0_1: Tensor[(2304, 768), float16], %FunctionVar_0_2: Tensor[(2304), float16],
           PartitionedFromPattern="nn.dense_add_", Composite="cutlass.dense_bias") -> Tensor[(1600, 2304), float16] {{
    %5 = nn.dense(%FunctionVar_0_0, %FunctionVar_0_1, units=2304);
    add(%5, %FunctionVar_0_2)
  }};
  %4(%y_0_i0, %y_0_i1, %y_0_i2)
}}
"""
CALL_OUTLINED = "  %1 = @tvmgen_default_cutlass_main_0(%x0, meta[relay.Constant][0], meta[relay.Constant][1]);\n"

MODULES = {
    "original_mod": MAIN + "  %0 = " + CUTLASS_FN + ";\n  %1 = %0(%x0, meta[relay.Constant][0], meta[relay.Constant][1]);\n"
    + CUBLAS,
    "original_mod_let_bound": MAIN + "  let %f = " + CUTLASS_FN
    + ";\n  %1 = %f(%x0, meta[relay.Constant][0], meta[relay.Constant][1]);\n" + CUBLAS,
    "expected_outlined_mod": MAIN + CALL_OUTLINED + CUBLAS + OUTLINED_DEF.format(
        attrs='Inline=1, Compiler="cutlass", global_symbol="tvmgen_default_cutlass_main_0", Primitive=1'),
    "expected_extern_mod": MAIN + CALL_OUTLINED + CUBLAS + OUTLINED_DEF.format(attrs="Extern=1"),
    "expected_inlined_mod": MAIN + "  %0 = nn.dense(%x0, meta[relay.Constant][0], units=2304);\n"
    "  %1 = add(%0, meta[relay.Constant][1]);\n" + CUBLAS,
}

CAPTURE_INPUT = MAIN + """  %0 = nn.dense(%x0, meta[relay.Constant][0], units=2304);
  %1 = add(%0, meta[relay.Constant][1]);
  %2 = fn(%y_3_i0: Tensor[(600, 32, 64), float16], %y_3_i1: Tensor[(600, 32, 64), float16],
          Inline=1, Compiler="cublas", global_symbol="tvmgen_default_cublas_main_3", Primitive=1) -> Tensor[(600, 32, 32), float16] {
    %6 = fn (%FunctionVar_0_01: Tensor[(600, 32, 64), float16], %FunctionVar_0_11: Tensor[(600, 32, 64), float16],
             PartitionedFromPattern="nn.batch_matmul_", Composite="cublas.batch_matmul") -> Tensor[(600, 32, 32), float16] {
      nn.batch_matmul(%FunctionVar_0_01, %FunctionVar_0_11, out_dtype="float16", transpose_b=True)
    };
    %6(%y_3_i0, %y_3_i1)
  };
  %3 = %2(%x3, meta[relay.Constant][2]);
  (%1, %3)
}
"""

# TVM's expected_pretty_printed_output_mod without its `span=index:i:j` parts (relayc has no
# CapturePostDfsIndexInSpans pass) and with the scaled extents: the order TVM prints in.
CAPTURE_EXPECTED = r"""def @main(%x0: Tensor[(1600, 768), float16] /* ty=Tensor[(1600, 768), float16] */, %x3: Tensor[(600, 32, 64), float16] /* ty=Tensor[(600, 32, 64), float16] */) -> (Tensor[(1600, 2304), float16], Tensor[(600, 32, 32), float16]) {
  %0 = nn.dense(%x0, meta[relay.Constant][0] /* ty=Tensor[(2304, 768), float16] */, units=2304) /* ty=Tensor[(1600, 2304), float16] */;
  %2 = fn (%y_3_i0: Tensor[(600, 32, 64), float16] /* ty=Tensor[(600, 32, 64), float16] */, %y_3_i1: Tensor[(600, 32, 64), float16] /* ty=Tensor[(600, 32, 64), float16] */, Inline=1, Compiler="cublas", global_symbol="tvmgen_default_cublas_main_3", Primitive=1) -> Tensor[(600, 32, 32), float16] {
    %1 = fn (%FunctionVar_0_01: Tensor[(600, 32, 64), float16] /* ty=Tensor[(600, 32, 64), float16] */, %FunctionVar_0_11: Tensor[(600, 32, 64), float16] /* ty=Tensor[(600, 32, 64), float16] */, PartitionedFromPattern="nn.batch_matmul_", Composite="cublas.batch_matmul") -> Tensor[(600, 32, 32), float16] {
      nn.batch_matmul(%FunctionVar_0_01, %FunctionVar_0_11, out_dtype="float16", transpose_b=True) /* ty=Tensor[(600, 32, 32), float16] */
    } /* ty=fn (Tensor[(600, 32, 64), float16], Tensor[(600, 32, 64), float16]) -> Tensor[(600, 32, 32), float16] */;
    %1(%y_3_i0, %y_3_i1) /* ty=Tensor[(600, 32, 32), float16] */
  } /* ty=fn (Tensor[(600, 32, 64), float16], Tensor[(600, 32, 64), float16]) -> Tensor[(600, 32, 32), float16] */;
  %3 = add(%0, meta[relay.Constant][1] /* ty=Tensor[(2304), float16] */) /* ty=Tensor[(1600, 2304), float16] */;
  %4 = %2(%x3, meta[relay.Constant][2] /* ty=Tensor[(600, 32, 64), float16] */) /* ty=Tensor[(600, 32, 32), float16] */;
  (%3, %4) /* ty=(Tensor[(1600, 2304), float16], Tensor[(600, 32, 32), float16]) */
}
"""


def write(name, header, text, run="relayc %s", outfile=None):
    with open(os.path.join(HERE, name + ".relay"), "w") as f:
        for line in header:
            f.write(f"// {line}\n")
        f.write(f"// RUN: {run}\n")
        f.write('#[version = "0.0.5"]\n' + scaled(text) + "\n" + metadata(CONSTS))
    if outfile:
        with open(os.path.join(HERE, name + ".out"), "w") as f:
            f.write(outfile)


if __name__ == "__main__":
    for which, text in MODULES.items():
        write(f"transform_test_compiler_function_utils_{which}",
              [f"TVM {TVM}/test_compiler_function_utils.py: `{which}()` (extents scaled down,",
               "constants in the metadata section: make_compiler_fn_goldens.py)."], text)
    # the printed text is compared up to the metadata section, which the .out file holds as relayc
    # writes it; the program part is TVM's expected text (CAPTURE_EXPECTED)
    name = "transform_test_capture_postdfsindex_in_spans_input"
    write(name,
          [f"TVM {TVM}/test_capture_postdfsindex_in_spans.py: `input_mod()`; the .out is the test's",
           "expected_pretty_printed_output_mod without the span=index:i:j parts (extents scaled down):",
           "the order TVM's printer visits nodes in (make_compiler_fn_goldens.py)."],
          CAPTURE_INPUT, run="relayc --print --types %s")
    printed = subprocess.run([sys.argv[1], "--print", "--types", os.path.join(HERE, name + ".relay")],
                             capture_output=True, text=True, check=True).stdout
    want = '#[version = "0.0.5"]\n' + scaled(CAPTURE_EXPECTED)
    if not printed.startswith(want + "\n#[metadata]"):
        sys.exit("relayc's print differs from TVM's expected text:\n" + printed[:len(want) + 200])
    with open(os.path.join(HERE, name + ".out"), "w") as f:
        f.write(printed)
