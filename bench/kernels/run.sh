#!/bin/sh
# bench/kernels: square-sgemm rate (OpenBLAS vs our pool) and conv2d GFLOP/s on the
# ResNet-50 / MobileNet-V2 layer shapes. Called by `make bench` (bench/run.sh).
#   sh bench/kernels/run.sh [sgemm|resnet|mobilenet|all] [reps]
set -e
cd "$(dirname "$0")/../.."
make -s all build/obj/tests/unit/kt_util.o
out=build/bench/conv_bench
mkdir -p build/bench
# every library object directly (kernels are found through weak references)
objs="build/obj/gen/lexer.o build/obj/gen/relay.tab.o"
for f in ir/*.c lexer/*.c parser/*.c sema/*.c eval/*.c runtime/*.c ops/*.c ops/*/*.c; do
  [ -f "$f" ] && objs="$objs build/obj/${f%.c}.o"
done
gcc -std=c17 -D_GNU_SOURCE -O2 -g -I. -Ibuild/gen $(pkg-config --cflags openblas) \
  -o "$out" bench/kernels/conv_bench.c build/obj/tests/unit/kt_util.o $objs \
  $(pkg-config --libs jansson libffi openblas) -lm -lpthread -ldl
"$out" "${1:-all}" "${2:-9}"
