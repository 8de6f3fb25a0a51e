#!/usr/bin/env python3
"""bench/passes/gen_nested_calls.py — @main calling N distinct globals in sequence: after
ToCPS,UnCPS each call's continuation is a literal nesting the rest of @main, N deep.

    python3 bench/passes/gen_nested_calls.py N [--size S] [--tuple] > nested.relay
    relayc --pass=ToCPS,UnCPS,PartialEvaluate --time-passes nested.relay

Each global @rankI sorts a float32 vector of S elements (argsort) and, by default, reduces the
indices to one int32 (sum of index * (value mod 100)), so a folded @main is a tuple of N scalars;
--tuple returns the index vectors instead (the programs session 16 ran LambdaLift,
Defunctionalization and ToANormalForm on). Deterministic: the data is arange * (7919 + I) mod 10007.
"""
import argparse

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("n", type=int)
ap.add_argument("--size", type=int, default=1000)
ap.add_argument("--tuple", action="store_true", help="return the argsort vectors, not scalars")
a = ap.parse_args()
n, size = a.n, a.size
out = ['#[version = "0.0.5"]']
for i in range(n):
    if a.tuple:
        out.append(f'def @rank{i}(%x{i}: Tensor[({size}), float32]) {{\n'
                   f'  argsort(%x{i}, is_ascend=False, dtype="int32")\n}}\n')
    else:
        out.append(f'def @rank{i}(%x{i}: Tensor[({size}), float32]) -> int32 {{\n'
                   f'  let %s{i} = argsort(%x{i}, dtype="int32");\n'
                   f'  sum(multiply(%s{i}, floor_mod(cast(%x{i}, dtype="int32"), 100)))\n}}\n')
out.append("def @main() {")
for i in range(n):
    out.append(f'  let %v{i} = floor_mod(multiply(arange(0, {size}, 1, dtype="int32"), {7919 + i}), 10007);')
    out.append(f'  let %r{i} = @rank{i}(cast(%v{i}, dtype="float32"));')
out.append("  (" + ", ".join(f"%r{i}" for i in range(n)) + ")")
out.append("}")
print("\n".join(out))
