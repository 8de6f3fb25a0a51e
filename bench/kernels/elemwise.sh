#!/bin/sh
# bench/kernels: float32 elementwise kernels on GPT-2 shapes — generic path
# vs the fast path (ops/kernels/k_elemwise_fast.c), ns per element.
#   sh bench/kernels/elemwise.sh [reps]
set -e
cd "$(dirname "$0")/../.."
make -s all
out=build/bench/elemwise_bench
mkdir -p build/bench
# every library object directly (kernels are found through weak references)
objs="build/obj/gen/lexer.o build/obj/gen/relay.tab.o"
for f in ir/*.c lexer/*.c parser/*.c sema/*.c eval/*.c runtime/*.c ops/*.c ops/*/*.c; do
  [ -f "$f" ] && objs="$objs build/obj/${f%.c}.o"
done
gcc -std=c17 -D_GNU_SOURCE -O2 -g -I. -Ibuild/gen -o "$out" bench/kernels/elemwise_bench.c $objs \
  $(pkg-config --libs jansson libffi openblas) -lm -lpthread -ldl
"$out" "${1:-31}"
