#!/bin/sh
# bench/nets/run.sh — real networks (ResNet-50, MobileNet-V2, GPT-2 blocks): relayc start-up and
# forward pass vs PyTorch eager, ResNet-50 GFLOP/s vs OpenBLAS sgemm, peak RSS vs weights, and
# the max relative error against PyTorch. Called by `make bench` (bench/run.sh); needs numpy and
# python3-torch for /usr/bin/python3. Extra arguments go to bench/nets/bench.py (see --help).
cd "$(dirname "$0")/../.."
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c "import numpy, torch" 2>/dev/null; then
  echo "bench/nets: skipped ($py lacks numpy or torch: apt-get install python3-torch)"
  exit 0
fi
exec "$py" bench/nets/bench.py --relayc build/relayc "$@"
