#!/bin/sh
# `make demo`: the sample gallery (samples/README.md), in order. For each sample
# it prints what the sample shows (its leading comment) and runs the sample's
# `// RUN:` lines: the commands `make check` runs on it and whose output it pins
# (tests/run_golden.py; tests/run_samples.py checks that this script runs every
# sample). Then it runs an MNIST network with the per-operator profile.
#   sh samples/demo.sh [path/to/relayc]      (make demo builds relayc and the plugin first)
set -e
relayc=${1:-build/relayc}
SAMPLES="shadowing closures recursion nat list polymorphism refs graph_form anf_form
         small_cnn mlp grad_control_flow train_mlp foreign_libm plugin/softplus"
for s in $SAMPLES; do
  f=samples/$s.relay
  d=$(dirname "$f")
  echo "=== $f"
  # the leading comment, up to the first test directive
  awk '/^\/\/ (RUN|OUT|ERR|EXIT|AFTER|NO-ROUNDTRIP)/ { exit } /^\/\// { print; next } { exit }' "$f"
  sed -n 's|^// RUN: *||p' "$f" | while IFS= read -r run; do
    cmd=$(printf '%s\n' "$run" | sed -e "s|%s|$f|g" -e "s|%d|$d|g")
    echo "\$ $cmd"
    eval "\"\$relayc\" ${cmd#relayc }"
  done
  echo
done
echo "=== tests/golden/nets/mnist.relay (per-operator profile)"
echo "\$ relayc --run --profile tests/golden/nets/mnist.relay --input x=tests/golden/nets/mnist_x.npy"
"$relayc" --run --profile tests/golden/nets/mnist.relay --input x=tests/golden/nets/mnist_x.npy
