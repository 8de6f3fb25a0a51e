#!/bin/sh
# bench/grad/run.sh — relayc's gradients (ResNet-50, MobileNet-V2, ResNeXt-50 32x4d, GPT-2 with
# every float weight a @main parameter; the MLP training step) vs PyTorch eager autograd: times, CPU times, peak RSS and
# the gradients' agreement. Called by `make bench` (bench/run.sh); needs numpy and python3-torch
# for /usr/bin/python3. Extra arguments go to bench/grad/bench.py (see --help).
cd "$(dirname "$0")/../.."
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c "import numpy, torch" 2>/dev/null; then
  echo "bench/grad: skipped ($py lacks numpy or torch: apt-get install python3-torch)"
  exit 0
fi
exec "$py" bench/grad/bench.py --relayc build/relayc "$@"
