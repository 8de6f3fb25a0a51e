#!/bin/sh
# `make demo`: type-check and print the samples, run a functional program, train an MLP in
# Relay, differentiate through control flow, and run an MNIST network.
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
echo "== $relayc --run samples/train_mlp.relay   (SGD in Relay: loss every 20 steps, final accuracy)"
"$relayc" --run samples/train_mlp.relay
echo "== $relayc --run samples/grad_control_flow.relay   (gradient through recursion and if)"
"$relayc" --run samples/grad_control_flow.relay
echo "== $relayc --run --profile tests/golden/nets/mnist.relay --input x=tests/golden/nets/mnist_x.npy"
"$relayc" --run --profile tests/golden/nets/mnist.relay --input x=tests/golden/nets/mnist_x.npy
