#!/bin/sh
# Foreign-operator benchmark (issue 6): ns/element of an elementwise foreign
# call and a buffer foreign call on a 10^7-element float32 tensor, next to
# built-in operators. Builds the test library and bench/ffi/bench_ffi.c
# (linked against the library's objects directly: kernels are weak symbols).
set -e
cd "$(dirname "$0")/../.."
make -s build/relayc >/dev/null
sh tests/ffi/build.sh build >/dev/null
objs=""
for f in ir/*.c lexer/*.c parser/*.c sema/*.c eval/*.c runtime/*.c ops/*.c ops/*/*.c; do
  [ -f "$f" ] && objs="$objs build/obj/${f%.c}.o"
done
objs="$objs build/obj/gen/lexer.o build/obj/gen/relay.tab.o"
mkdir -p build/bench
${CC:-gcc} -std=c17 -D_GNU_SOURCE -O2 -I. -Ibuild/gen -o build/bench/bench_ffi bench/ffi/bench_ffi.c $objs \
  $(pkg-config --libs jansson libffi openblas) -lm -lpthread -ldl
build/bench/bench_ffi build/ffi
