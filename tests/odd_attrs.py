#!/usr/bin/env python3
"""Every operator of the registry called with odd attribute values.

The cases come from ops/op_table.def and ops/op_schemas.def (nothing here names an operator):
each operator is called on inputs of several ranks and dtypes, once per attribute with that
attribute set to each value of an odd list for its type (empty and malformed layouts, negative
and out-of-range axes, zero, None, `?`, int32/int64 extremes, huge and non-finite floats,
empty and long arrays), plus a fixed pseudo-random sample of calls with several odd attributes
at once. One `def @fN` per case; `module_for(op)` puts every case of one operator in one module.

Used two ways:
  - run_robustness.py type-checks each operator's module (relayc must give exit 0 or 1, never a
    crash; under `make asan-check`, also no sanitizer report);
  - `python3 tests/odd_attrs.py --seeds DIR` writes small seed programs (a few cases each) for
    the libFuzzer target (tests/fuzz/run.sh).
"""
import argparse
import os
import random
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

HEADER = '#[version = "0.0.5"]\n'

# Input types tried for every operator (each input gets the same type, or, in the mixed
# variants, int32 for the inputs after the first: indices, on/off values, ...).
SHAPES = ["()", "(3)", "(2, 3)", "(1, 4, 5, 6)", "(2, 3, 4, 5, 6)", "(0, 3)", "(2, 1, 3, 1)",
          "(?, 3, ?, 4)", "(4611686018427387904, 3, 5)", "(9223372036854775807, 1, 2, 2)"]

INT = ["0", "1", "-1", "2", "7", "-7", "None", "2147483647", "-2147483648", "9223372036854775807",
       "-9223372036854775807", "3i64", "[]", "[2]", "1f", '""']
INT_ARRAY = ["[]", "[0]", "[1]", "[-1]", "[7]", "[-7]", "[1, 1]", "[0, 0, 0]", "[-1, -1]", "[2, -1]",
             "[1, 2, 3, 4]", "[1, 1, 1, 1, 1, 1, 1, 1, 1]", "[9223372036854775807]",
             "[-9223372036854775807]", "[2147483647, 2147483647]", "[None]", "[1, None]", "[?]",
             "[-4, -1, -1]", "[-4, 2, 0]", "[-3]", "[-2]", "[-2, -3, -4]", "[0, -1, 0]", "None", "5",
             "[4611686018427387904, 4611686018427387904]", "[1i64, 2i64]", "[[1]]", '""']
DOUBLE = ["0f", "-1f", "1e30f", "-1e30f", "1e-30f", "inff", "-inff", "nanf", "0.5f", "3", "None"]
STRING = ['""', '"NCHW"', '"NCW"', '"NCDHW"', '"NHWC"', '"NCHW16c"', '"NCHW4c4c"', '"16c"', '"W"', '"HW"',
          '"c"', '"NC"', '"NCHW0c"', '"NCHW99999999999c"', '"DHW"', '"x"', '"NCWH"', '"OIHW"',
          '"ABCDEFGHIJKLMNOPQRSTUVWXYZ"', '"NCHW2147483648c"', '"end"', '"size"', '"both"', '"values"',
          '"indices"', '"clip"', '"wrap"', '"fast"', '"constant"', '"edge"', '"reflect"', '"SYMMETRIC"',
          '"REFLECT"', '"nearest_neighbor"', '"linear"', '"cubic"', '"bilinear"', "None", "1"]
DTYPE = ['""', '"int8"', '"uint8"', '"int64"', '"float16"', '"float64"', '"bool"', '"int1"', '"uint1"',
         '"float32x4"', '"bfloat16"', '"int7"', '"handle"', '"custom[x]64"', "None"]
BOOL = ["True", "False", "0", "1", "2", "None"]
ANY = ["0", "1", "-1", "1f", "-1f", "0f", "1e30f", "-1e30f", "nanf", "inff", "2147483647",
       "9223372036854775807", "None", "1i64", "0.5f"]
NESTED = ["[]", "[[0, 0]]", "[[-1, -1]]", "[[1, 2], [3, 4]]", "[[0, 0], [0, 0], [0, 0], [0, 0]]",
          "[[9223372036854775807, 9223372036854775807]]", "[[-9223372036854775807, 0]]",
          "[[1]]", "[[1, 2, 3]]", "[[None, 1]]", "[1, 2]", "None", "[[1f, 2f]]", "[[], []]"]
DOUBLE_ARRAY = ["[]", "[0f]", "[nanf, inff, -inff, 1e30f]", "[1, 2, 3, 4]", "None", "[0f, 0f, 0f, 0f, 0f]"]
INT_OR_ARRAY = ["0", "-1", "1", "3", "65537", "9223372036854775807", "[]", "[0]", "[-1]", "[2, 1]",
                "[1, 1]", "[9223372036854775807]", "[None]", "[1, 2, 3, 4, 5, 6, 7]", "None"]

VDEVICE = ["None", '"cuda"', "1", "meta[VirtualDevice][0]", "meta[relay.Constant][0]"]

ODD = {"AT_INT": INT, "AT_INT_ARRAY": INT_ARRAY, "AT_DOUBLE": DOUBLE, "AT_STRING": STRING,
       "AT_DTYPE": DTYPE, "AT_BOOL": BOOL, "AT_ANY": ANY, "AT_NESTED_ARRAY": NESTED,
       "AT_DOUBLE_ARRAY": DOUBLE_ARRAY, "AT_INT_OR_ARRAY": INT_OR_ARRAY, "AT_VDEVICE": VDEVICE}

# A value for a required attribute that has no Python default, so the call parses.
REQUIRED = {"AT_INT": "1", "AT_INT_ARRAY": "[1]", "AT_DOUBLE": "1f", "AT_STRING": '"NCHW"',
            "AT_DTYPE": '"float32"', "AT_BOOL": "False", "AT_ANY": "1f", "AT_NESTED_ARRAY": "[[0, 0]]",
            "AT_DOUBLE_ARRAY": "[0f]", "AT_INT_OR_ARRAY": "1", "AT_VDEVICE": "None"}


def read_registry(root=ROOT):
    """[(name, ninputs, [(attr, type, required_without_default)], relation)] in table order."""
    schemas = {}
    text = open(os.path.join(root, "ops", "op_schemas.def")).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for m in re.finditer(r"SCHEMA\((\w+)((?:[^()\"]|\"(?:[^\"\\]|\\.)*\"|\((?:[^()\"]|\"(?:[^\"\\]|\\.)*\")*\))*)\)",
                         text):
        fields = []
        for f in re.finditer(r"([FR])\((\w+),\s*(AT_\w+),\s*(\"(?:[^\"\\]|\\.)*\"|NULL)\)", m.group(2)):
            fields.append((f.group(2), f.group(3), f.group(1) == "R" and f.group(4) == "NULL"))
        schemas[m.group(1)] = fields
    ops = []
    table = re.sub(r"/\*.*?\*/", "", open(os.path.join(root, "ops", "op_table.def")).read(), flags=re.S)
    for m in re.finditer(r"OP\((\w+),\s*\"([^\"]+)\",\s*(\d+),\s*(\w+),\s*(\w+)\)", table):
        ops.append((m.group(2), int(m.group(3)), schemas.get(m.group(4), []), m.group(5)))
    return ops


def _input_sets(n, relation):
    """Lists of input type texts (one per input) for an operator with n inputs."""
    sets = []
    for shape in SHAPES:
        f32 = f"Tensor[{shape}, float32]"
        i32 = f"Tensor[{shape}, int32]"
        sets.append([f32] * n)
        if n > 1:
            sets.append([f32] + [i32] * (n - 1))
        if shape == "(2, 3)":
            sets.append([i32] * n)
            sets.append([f"Tensor[{shape}, bool]"] * n)
    if relation in ("rel_concatenate", "rel_stack"):
        sets = [[f"({t[0]}, {t[0]})"] for t in sets] + [["()"], ["(Tensor[(2), float32], Tensor[(2, 3), float32])"]]
    sets.append([None] * n)  # un-annotated: the relation waits, then "cannot infer type"
    return sets


def _call(name, n, attrs):
    args = [f"%a{i}" for i in range(n)]
    args += [f"{k}={v}" for k, v in attrs]
    return f"{name}({', '.join(args)})"


def _def(k, n, types, body):
    params = ", ".join(f"%a{i}" + (f": {t}" if t else "") for i, t in enumerate(types))
    return f"def @f{k}({params}) {{\n  {body}\n}}\n"


def cases(op, rng=None):
    """The calls for one operator: [(input types, attrs)]."""
    name, n, fields, relation = op
    base = [(a, REQUIRED[t]) for a, t, req in fields if req]
    out = []
    for types in _input_sets(n, relation):
        out.append((types, base))
        for attr, ty, _ in fields:
            for v in ODD.get(ty, []):
                out.append((types, [(k, x) for k, x in base if k != attr] + [(attr, v)]))
    rng = rng or random.Random(name)
    sets = _input_sets(n, relation)
    for _ in range(40 if fields else 0):
        pick = rng.sample(fields, min(len(fields), rng.randint(2, 4)))
        attrs = dict(base)
        for attr, ty, _ in pick:
            attrs[attr] = rng.choice(ODD.get(ty, ["None"]))
        out.append((rng.choice(sets), list(attrs.items())))
    return out


def module_for(op, case_list=None):
    """One module with a function per case; returns (text, [first line of each function])."""
    name, n, _, _ = op
    parts, lines, line = [HEADER], [], 2
    for k, (types, attrs) in enumerate(case_list if case_list is not None else cases(op)):
        d = _def(k, n, types, _call(name, n, attrs))
        lines.append(line)
        parts.append(d)
        line += d.count("\n")
    return "".join(parts), lines


def write_seeds(outdir, per_op=24):
    """One call per file (a call the resolver rejects would keep a whole file from type
    checking), a fixed pseudo-random choice of per_op calls of each operator."""
    os.makedirs(outdir, exist_ok=True)
    count = 0
    for op in read_registry():
        cs = cases(op)
        random.Random("seed:" + op[0]).shuffle(cs)
        for i, c in enumerate(cs[:per_op]):
            with open(os.path.join(outdir, f"{op[0]}-{i}.relay"), "w") as f:
                f.write(module_for(op, [c])[0])
            count += 1
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", metavar="DIR", help="write fuzzer seed programs to DIR")
    ap.add_argument("--op", help="print the module of one operator")
    a = ap.parse_args()
    if a.seeds:
        print(f"{write_seeds(a.seeds)} seed programs in {a.seeds}")
    elif a.op:
        for op in read_registry():
            if op[0] == a.op:
                print(module_for(op)[0], end="")
    else:
        ops = read_registry()
        print(f"{len(ops)} operators, {sum(len(cases(op)) for op in ops)} cases")


if __name__ == "__main__":
    main()
