#!/bin/sh
# `make demo`: type-check and print the samples, run a functional program and an MNIST network.
set -e
relayc=${1:-build/relayc}
for f in samples/*.relay; do
  echo "== $relayc $f"
  "$relayc" "$f" && echo "   (type-checks: no output, exit 0)"
  echo "== $relayc --print $f"
  "$relayc" --print "$f"
done
echo "== $relayc --run samples/list.relay"
"$relayc" --run samples/list.relay
echo "== $relayc --run --profile tests/golden/nets/mnist.relay --input x=tests/golden/nets/mnist_x.npy"
"$relayc" --run --profile tests/golden/nets/mnist.relay --input x=tests/golden/nets/mnist_x.npy
