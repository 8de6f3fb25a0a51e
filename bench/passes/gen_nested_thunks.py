#!/usr/bin/env python3
"""bench/passes/gen_nested_thunks.py — N immediately-applied thunks nested around one function
value: `let %tI = fn () { ... }; %tI()`, N deep, the innermost returning a literal %f.

    python3 bench/passes/gen_nested_thunks.py N > thunks.relay
    relayc --pass=ToANormalForm,Defunctionalization --time-passes thunks.relay

Every thunk has the type fn () -> fn (T) -> T, so Defunctionalization makes one ADT with N
constructors and one apply function with N clauses; each thunk's free variables (%f) are asked
for once per literal. The shape of session 16's seed 160 input 103 (a --deep mutant of a gradient
golden: 10,000 such thunks inside 1,000 nested lets, 6.9 MB), where the pass was quadratic
(session 17, bench/passes/README.md). Deterministic.
"""
import argparse

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("n", type=int)
a = ap.parse_args()
body = "%f"
for i in range(a.n):
    body = f"{{ let %t{i} = fn () {{ {body} }}; %t{i}() }}"
print('#[version = "0.0.5"]\n'
      'def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {\n'
      '  let %f = fn (%a: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] { multiply(%a, %a) };\n'
      f'  let %g = {body};\n'
      '  %g(%x)\n'
      '}')
