#!/usr/bin/env python3
"""bench/gen_metadata.py — a Relay module with a ResNet-50-sized metadata section.

Writes a module whose `#[metadata]` section holds float32 constants shaped like
ResNet-50's weights (cycled until the base64 text reaches --mb megabytes,
default 100: about 100 constants), laid out exactly as TVM writes the minimal
form (spec/text-format.md §6.3, §6.5). The tensors hold random bytes. The
program text uses every constant so the module is also a parser benchmark.

    python3 bench/gen_metadata.py -o /tmp/big.relay [--mb 100] [--seed 1]
    build/bench/bench_metadata /tmp/big.relay      # load time, median of 3
"""
import argparse
import base64
import random
import struct

# (out, in, kh, kw) of ResNet-50's convolutions plus the classifier, in order.
RESNET50 = [(64, 3, 7, 7)]
for width, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
    for b in range(blocks):
        cin = width * 4 if b else (64 if width == 64 else width * 2)
        RESNET50 += [(width, cin, 1, 1), (width, width, 3, 3), (width * 4, width, 1, 1)]
        if b == 0:
            RESNET50.append((width * 4, cin, 1, 1))
RESNET50.append((1000, 2048))
# Each weight is followed by its (folded batch-norm) bias, as in a compiled model.
RESNET50 = [s for w in RESNET50 for s in (w, (w[0],))]

MAGIC = 0xDD5E40F096B4A13F


def blob(shape, rng):
    count = 1
    for d in shape:
        count *= d
    head = struct.pack("<QQiiiBBH", MAGIC, 0, 1, 0, len(shape), 2, 32, 1)
    head += b"".join(struct.pack("<q", d) for d in shape)
    head += struct.pack("<q", 4 * count)
    return base64.b64encode(head + rng.randbytes(4 * count)).decode("ascii")


def metadata(blobs):
    n = len(blobs)
    out = ['{\n  "root": 1, \n  "nodes": [\n    {\n      "type_key": ""\n    }, \n',
           '    {\n      "type_key": "Map", \n      "keys": [\n        "relay.Constant"\n'
           '      ], \n      "data": [2]\n    }, \n',
           '    {\n      "type_key": "Array", \n      "data": ']
    idx = [str(3 + i) for i in range(n)]
    if n > 10:
        out.append("[\n" + ", \n".join("        " + i for i in idx) + "\n      ]")
    else:
        out.append("[" + ", ".join(idx) + "]")
    out.append("\n    }")
    for i in range(n):
        out.append(', \n    {\n      "type_key": "relay.Constant", \n      "attrs": {\n'
                   '        "_checked_type_": "0", \n        "data": "%d", \n'
                   '        "span": "0", \n        "virtual_device_": "0"\n      }\n    }' % i)
    out.append('\n  ], \n  "b64ndarrays": [\n')
    out.append(", \n".join('    "%s"' % b for b in blobs))
    out.append('\n  ], \n  "attrs": {"tvm_version": "0.20.dev0"}\n}')
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--mb", type=float, default=100.0, help="base64 megabytes to generate")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    blobs, total, i = [], 0, 0
    while total < args.mb * 1e6:
        shape = RESNET50[i % len(RESNET50)]
        blobs.append(blob(shape, rng))
        total += len(blobs[-1])
        i += 1
    uses = ",\n    ".join("meta[relay.Constant][%d]" % k for k in range(len(blobs)))
    with open(args.output, "w") as f:
        f.write('#[version = "0.0.5"]\ndef @main() {\n  (\n    %s\n  )\n}\n\n#[metadata]\n' % uses)
        f.write(metadata(blobs))
    print("%s: %d constants, %.1f MB of base64" % (args.output, len(blobs), total / 1e6))


if __name__ == "__main__":
    main()
