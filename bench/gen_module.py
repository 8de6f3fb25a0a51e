#!/usr/bin/env python3
"""Generates a large, well-typed Relay module for front-end benchmarks.

    gen_module.py OUT.relay [--mb 20] [--chain 200]

Many `def`s, each a long chain of graph bindings over float32 tensors with a mix of
operators and attributes, in exactly the text TVM prints. With --single-chain N, one
function @main holding an N-binding chain (the type-inference linearity benchmark); with
--let-chain N, the same chain written with `let` bindings instead of graph bindings.
"""
import argparse


def function(out, idx, chain, base, name=None):
    """One def whose graph bindings are numbered from `base` (numbers are module-wide)."""
    out.append(f"def @{name or f'f{idx}'}(%x: Tensor[(1, 16), float32], %y: Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32] {{\n")
    out.append(f"  %{base} = add(%x, %y);\n")
    for i in range(1, chain):
        n = base + i
        op = ("multiply", "add", "subtract", "maximum")[i % 4]
        if i % 7 == 3:
            out.append(f"  %{n} = nn.relu(%{n - 1});\n")
        elif i % 11 == 5:
            out.append(f"  %{n} = nn.softmax(%{n - 1}, axis=1);\n")
        else:
            out.append(f"  %{n} = {op}(%{n - 1}, %x);\n")
    out.append(f"  add(%{base + chain - 1}, %y)\n}}\n\n")
    return base + chain


def let_function(out, chain):
    """The --single-chain function with `let %vI = ...;` bindings (A-normal form)."""
    out.append("def @main(%x: Tensor[(1, 16), float32], %y: Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32] {\n")
    out.append("  let %v0 = add(%x, %y);\n")
    for i in range(1, chain):
        op = ("multiply", "add", "subtract", "maximum")[i % 4]
        if i % 7 == 3:
            out.append(f"  let %v{i} = nn.relu(%v{i - 1});\n")
        elif i % 11 == 5:
            out.append(f"  let %v{i} = nn.softmax(%v{i - 1}, axis=1);\n")
        else:
            out.append(f"  let %v{i} = {op}(%v{i - 1}, %x);\n")
    out.append(f"  add(%v{chain - 1}, %y)\n}}\n\n")


def polymorphic(out, n):
    """N generic functions over List[A], each instantiated at a new type by the next."""
    out.append("type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n\n")
    out.append("type Pair[A, B] {\n  MkPair(A, B),\n}\n\n")
    out.append("def @g0[A](%x: A, %xs: List[A]) -> List[A] {\n  Cons(%x, %xs)\n}\n\n")
    for i in range(1, n):
        out.append(f"def @g{i}[A, B](%f: fn (A) -> B, %x: A, %xs: List[B]) -> List[B] {{\n"
                   f"  let %y = %f(%x);\n"
                   f"  match (%xs) {{\n"
                   + (f"    Cons(_, %rest) => @g0(%y, %rest),\n" if i == 1 else
                      f"    Cons(_, %rest) => @g{i - 1}(%f, %x, %rest),\n") +
                   f"    Nil => @g0(%y, Nil),\n"
                   f"  }}\n}}\n\n")
    out.append(f"def @main() -> List[int32] {{\n"
               f"  @g{n - 1}(fn (%v: int32) -> int32 {{ %v }}, 1, Cons(2, Nil))\n}}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=20)
    ap.add_argument("--chain", type=int, default=200)
    ap.add_argument("--single-chain", type=int, default=0)
    ap.add_argument("--let-chain", type=int, default=0,
                    help="one function holding an N-binding chain of `let`s")
    ap.add_argument("--poly", type=int, default=0,
                    help="N small polymorphic functions over a List ADT, each calling the previous")
    a = ap.parse_args()
    parts = ['#[version = "0.0.5"]\n']
    size = len(parts[0])
    if a.poly:
        polymorphic(parts, a.poly)
    elif a.let_chain:
        let_function(parts, a.let_chain)
    elif a.single_chain:
        function(parts, 0, a.single_chain, 0, name="main")
    else:
        idx = base = 0
        while size < a.mb * 1e6:
            chunk = []
            base = function(chunk, idx, a.chain, base)
            idx += 1
            size += sum(len(c) for c in chunk)
            parts += chunk
    with open(a.out, "w") as f:
        f.write("".join(parts))


if __name__ == "__main__":
    main()
