"""bench/nets/relaygraph.py — a dataflow graph of Relay operator calls, printed as TVM prints it.

A Graph holds the nodes of one `@main`: parameters (Var), tensor constants (Const: rank-0
literals print inline, everything else becomes `meta[relay.Constant][i]`), operator calls
(Call), tuples (Tuple) and projections (Proj). `Graph.to_text(out)` writes the module
exactly as TVM's text printer lays it out (spec/text-format.md §7): every non-atomic argument
hoisted into a `%N = ...;` binding, numbers allocated when a parent's text is generated
(arguments left to right, after the whole argument subtrees were visited), constants numbered
in visit order, call attributes in schema order with defaults omitted (SCHEMAS below), and a
`#[metadata]` section in TVM's JSON layout (§6.3, minimal form) with base64 blobs (§6.4).

The same graph is what bench/nets/torch_ref.py evaluates with PyTorch, so the text and the
reference cannot drift apart. Walks are iterative: a GPT-2 stack is ~1000 nodes deep.
"""
import base64
import struct

import numpy as np

# Attribute schemas of the operators the networks use: (name, default) in declaration (print)
# order; REQ marks a required field, always printed. From spec/ops.md.
REQ = object()
SCHEMAS = {
    "nn.conv2d": [("strides", [1, 1]), ("padding", [0, 0]), ("dilation", [1, 1]), ("groups", 1),
                  ("channels", None), ("kernel_size", None), ("data_layout", "NCHW"),
                  ("kernel_layout", "OIHW"), ("out_layout", ""), ("out_dtype", "")],
    "nn.batch_norm": [("axis", 1), ("epsilon", 1e-5), ("center", True), ("scale", True)],
    "nn.max_pool2d": [("pool_size", REQ), ("strides", [1, 1]), ("dilation", [1, 1]),
                      ("padding", [0, 0]), ("layout", "NCHW"), ("out_layout", ""),
                      ("ceil_mode", False)],
    "nn.global_avg_pool2d": [("layout", "NCHW"), ("out_layout", "")],
    "nn.dense": [("units", REQ), ("out_dtype", "")],
    "nn.batch_matmul": [("out_dtype", ""), ("transpose_a", False), ("transpose_b", False)],
    "nn.pad": [("pad_width", REQ), ("pad_mode", "constant")],
    "nn.softmax": [("axis", -1)],
    "nn.relu": [],
    "reshape": [("newshape", REQ), ("allowzero", 0)],
    "transpose": [("axes", REQ)],
    "expand_dims": [("axis", REQ), ("num_newaxis", 1)],
    "split": [("indices_or_sections", REQ), ("axis", 0)],
    "concatenate": [("axis", 0)],
    "take": [("batch_dims", 0), ("axis", None), ("mode", "clip")],
    "mean": [("axis", None), ("keepdims", False), ("exclude", False)],
    "argmax": [("axis", None), ("keepdims", False), ("select_last_index", False),
               ("exclude", False)],
    "round": [],
}
for _op in ("add", "subtract", "multiply", "divide", "power", "less", "where", "sqrt", "tanh"):
    SCHEMAS[_op] = []

# Attributes that are C doubles (printed with an `f` suffix).
DOUBLE_ATTRS = {("nn.batch_norm", "epsilon")}

DTYPE_CODES = {  # numpy dtype -> (TVM type code, bits)
    "float32": (2, 32), "float64": (2, 64), "float16": (2, 16),
    "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
    "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64), "bool": (1, 1),
}
LITERAL_SUFFIX = {"float32": "f", "float64": "f64", "float16": "f16", "int32": "",
                  "int64": "i64", "int16": "i16"}


class Node:
    __slots__ = ("kind", "op", "args", "attrs", "shown", "name", "shape", "dtype", "value", "index")

    def __init__(self, kind, **kw):
        self.kind = kind
        self.op = kw.get("op")
        self.args = kw.get("args", ())
        self.attrs = kw.get("attrs", {})
        self.name = kw.get("name")
        self.shape = kw.get("shape")
        self.dtype = kw.get("dtype")
        self.value = kw.get("value")
        self.index = kw.get("index")
        self.shown = {}

    def atomic(self):
        return self.kind in ("var", "const")

    def __getitem__(self, i):
        """`bn[0]` is the projection `%bn.0`."""
        return Node("proj", args=(self,), index=i)


def fmt_double(x):
    if x != x:
        return "nanf"
    if x in (float("inf"), float("-inf")):
        return "inff" if x > 0 else "-inff"
    return "%g" % x + "f"


def fmt_attr(op, key, v):
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float) or (op, key) in DOUBLE_ATTRS:
        return fmt_double(float(v))
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_attr(op, key, e) for e in v) + "]"
    raise TypeError(f"attribute {key}={v!r}")


def fmt_literal(arr):
    dt = str(arr.dtype)
    v = arr.item()
    if dt == "bool":
        return "True" if v else "False"
    if dt.startswith("float"):
        if v != v:
            return "nan" + LITERAL_SUFFIX[dt]
        if v in (float("inf"), float("-inf")):
            return ("inf" if v > 0 else "-inf") + LITERAL_SUFFIX[dt]
        return "%g" % v + LITERAL_SUFFIX[dt]
    return str(int(v)) + LITERAL_SUFFIX[dt]


def fmt_type(shape, dtype):
    dims = ", ".join(str(d) for d in shape)
    return f"Tensor[({dims}), {dtype}]"


def tensor_blob(arr):
    """The base64 `b64ndarrays` entry of a numpy array (spec/text-format.md §6.4)."""
    arr = np.ascontiguousarray(arr)
    code, bits = DTYPE_CODES[str(arr.dtype)]
    head = struct.pack("<QQiiiBBH", 0xDD5E40F096B4A13F, 0, 1, 0, arr.ndim, code, bits, 1)
    head += b"".join(struct.pack("<q", d) for d in arr.shape)
    data = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    head += struct.pack("<q", len(data))
    return base64.b64encode(head + data).decode("ascii")


def write_metadata(out, arrays):
    """The `#[metadata]` JSON body (no trailing newline), TVM's minimal layout (§6.3, §6.5)."""
    n = len(arrays)
    out.write('{\n  "root": 1, \n  "nodes": [\n    {\n      "type_key": ""\n    }, \n'
              '    {\n      "type_key": "Map", \n      "keys": [\n        "relay.Constant"\n'
              '      ], \n      "data": [2]\n    }, \n'
              '    {\n      "type_key": "Array", \n      "data": ')
    idx = [str(3 + i) for i in range(n)]
    if n > 10:
        out.write("[\n" + ", \n".join("        " + i for i in idx) + "\n      ]")
    else:
        out.write("[" + ", ".join(idx) + "]")
    out.write("\n    }")
    for i in range(n):
        out.write(', \n    {\n      "type_key": "relay.Constant", \n      "attrs": {\n'
                  '        "_checked_type_": "0", \n        "data": "%d", \n'
                  '        "span": "0", \n        "virtual_device_": "0"\n      }\n    }' % i)
    out.write('\n  ], \n  "b64ndarrays": [\n')
    for i, a in enumerate(arrays):
        out.write('    "' + tensor_blob(a) + '"' + (", \n" if i + 1 < n else "\n"))
    out.write('  ], \n  "attrs": {"tvm_version": "0.20.dev0"}\n}')


class Graph:
    def __init__(self):
        self.params = []
        self.result = None
        self.consts = []   # meta constants in meta index order (filled by order_consts)

    # ---- construction ---------------------------------------------------------------
    def var(self, name, shape, dtype="float32"):
        v = Node("var", name=name, shape=tuple(shape), dtype=dtype)
        self.params.append(v)
        return v

    @staticmethod
    def const(arr):
        return Node("const", value=np.asarray(arr))

    @staticmethod
    def scalar(v, dtype="float32"):
        return Node("const", value=np.array(v, dtype=dtype))

    @staticmethod
    def call(op, *args, **attrs):
        schema = SCHEMAS[op]
        names = [k for k, _ in schema]
        for k in attrs:
            if k not in names:
                raise KeyError(f"{op} has no attribute {k}")
        shown = {}
        for k, d in schema:
            if k in attrs:
                v = attrs[k]
                if d is REQ or not _same(v, d):
                    shown[k] = v
            elif d is REQ:
                raise KeyError(f"{op}: attribute {k} is required")
        full = {k: attrs.get(k, None if d is REQ else d) for k, d in schema}
        n = Node("call", op=op, args=tuple(args), attrs=full)
        n.shown = shown  # printed attributes, schema order
        return n

    @staticmethod
    def tuple(*fields):
        return Node("tuple", args=tuple(fields))

    # ---- walking ----------------------------------------------------------------------
    def postorder(self):
        """Nodes in printer visit order (children before parents, each once)."""
        seen, order = set(), []
        stack = [(self.result, False)]
        while stack:
            n, done = stack.pop()
            if done:
                order.append(n)
                continue
            if id(n) in seen:
                continue
            seen.add(id(n))
            stack.append((n, True))
            for c in reversed(n.args):
                if id(c) not in seen:
                    stack.append((c, False))
        return order

    def order_consts(self):
        """Numbers the meta constants in visit order; returns them."""
        self.consts = []
        for n in self.postorder():
            if n.kind == "const" and not _inline_literal(n.value):
                n.index = len(self.consts)
                self.consts.append(n.value)
        return self.consts

    # ---- printing ---------------------------------------------------------------------
    def to_text(self, out, ret_type=None):
        order = self.postorder()
        self.order_consts()
        text, number, lines = {}, {}, []

        def ref(c):
            if c.atomic():
                return text[id(c)]
            if id(c) not in number:
                number[id(c)] = len(number)
                lines.append(f"  %{number[id(c)]} = {text[id(c)]};\n")
            return f"%{number[id(c)]}"

        for n in order:
            if n.kind == "var":
                text[id(n)] = "%" + n.name
            elif n.kind == "const":
                text[id(n)] = fmt_literal(n.value) if _inline_literal(n.value) \
                    else f"meta[relay.Constant][{n.index}]"
            elif n.kind == "call":
                parts = [ref(a) for a in n.args]
                parts += [f"{k}={fmt_attr(n.op, k, v)}" for k, v in n.shown.items()]
                text[id(n)] = f"{n.op}({', '.join(parts)})"
            elif n.kind == "tuple":
                fields = [ref(a) for a in n.args]
                text[id(n)] = "(" + ", ".join(fields) + ("," if len(fields) == 1 else "") + ")"
            elif n.kind == "proj":
                text[id(n)] = f"{ref(n.args[0])}.{n.index}"
        params = ", ".join(f"%{p.name}: {fmt_type(p.shape, p.dtype)}" for p in self.params)
        out.write('#[version = "0.0.5"]\n')
        out.write(f"def @main({params}) " + (f"-> {ret_type} " if ret_type else "") + "{\n")
        out.writelines(lines)
        out.write(f"  {text[id(self.result)]}\n}}\n")
        if self.consts:
            out.write("\n#[metadata]\n")
            write_metadata(out, self.consts)

    def save_weights(self, path):
        """The meta constants as an .npz (c0, c1, ... = meta[relay.Constant][0], [1], ...)."""
        self.order_consts()
        np.savez(path, **{f"c{i}": a for i, a in enumerate(self.consts)})

    def load_weights(self, path):
        """Replaces the meta constants' values by those of an .npz written by save_weights."""
        self.order_consts()
        with np.load(path) as z:
            for n in self.postorder():
                if n.kind == "const" and n.index is not None:
                    a = z[f"c{n.index}"]
                    if a.shape != n.value.shape or a.dtype != n.value.dtype:
                        raise ValueError(f"c{n.index}: {a.shape} {a.dtype} vs {n.value.shape}")
                    n.value = a


def _inline_literal(a):
    return a.ndim == 0 and str(a.dtype) in ("int16", "int32", "int64", "float16", "float32",
                                            "float64", "bool")


def _same(v, d):
    if isinstance(v, (list, tuple)) and isinstance(d, (list, tuple)):
        return len(v) == len(d) and all(_same(a, b) for a, b in zip(v, d))
    return type(v) is type(d) and v == d
