"""tests/golden/ops/npz_golden.py — the shared tail of the make_*_goldens.py generators whose
inputs and expected values live in a .npz beside the golden: the tolerance check of one case and
the .relay file (`// RUN: relayc --run %s --inputs %d/NAME.npz`, a @main over the arrays that
returns one bool per case, `// OUT:` all True)."""
import os

import numpy as np


def close_to(y, want, rtol, atol, sfx):
    """Relay text: every element of y within atol + rtol * |want| of want (sfx: the literal suffix)."""
    return f"all(less_equal(abs(subtract({y}, {want})), add({atol}{sfx}, multiply({rtol}{sfx}, abs({want})))))"


def write(path, header, arrays, params, body, results, run_flags="", compressed=False):
    """Writes PATH.npz (the arrays) and PATH.relay (header comment lines, then @main(params) with
    `body` lines and the tuple of `results`); run_flags go before --run (e.g. "--pass=X "): one
    string, or a list of them for one RUN line each."""
    (np.savez_compressed if compressed else np.savez)(path + ".npz", **arrays)
    name = os.path.basename(path)
    with open(path + ".relay", "w") as f:
        for line in header:
            f.write(f"// {line}\n")
        for flags in [run_flags] if isinstance(run_flags, str) else run_flags:
            f.write(f"// RUN: relayc {flags}--run %s --inputs %d/{name}.npz\n")
        f.write(f"// OUT: ({', '.join(['True'] * len(results))})\n")
        f.write('#[version = "0.0.5"]\n')
        f.write("def @main(" + ",\n          ".join(params) + ") {\n")
        for line in body:
            f.write(f"  {line}\n")
        f.write("  (" + ",\n   ".join(results) + ")\n}\n")
