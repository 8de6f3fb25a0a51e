#!/bin/sh
# `make fuzz FUZZ_SECONDS=N`: builds the front end with clang's libFuzzer +
# ASan/UBSan (any undefined behaviour aborts: -fno-sanitize-recover) and
# fuzzes it for N seconds (default 60), seeded with every golden program and
# sample and with tests/odd_attrs.py's calls of every operator with odd
# attribute values (empty layouts, negative axes, huge extents...). Crashes
# are written to tests/fuzz/crash-*.
set -e
secs=${1:-60}
cd "$(dirname "$0")/../.."
make --no-print-directory build/gen/lexer.c build/gen/relay.tab.c >/dev/null
out=build/fuzz
mkdir -p $out tests/fuzz/corpus-out
rm -rf $out/seeds
python3 tests/odd_attrs.py --seeds $out/seeds
# the front end only: kernels (ops/kernels/*.c) and the interpreter are not reached from here
srcs="$(find ir lexer parser sema ops runtime -name '*.c' ! -name 'k_*.c' | sort) build/gen/lexer.c build/gen/relay.tab.c"
clang -std=c17 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I. -Ibuild/gen \
  $(pkg-config --cflags jansson libffi openblas zlib) -o $out/fuzz_frontend tests/fuzz/fuzz_frontend.c $srcs \
  $(pkg-config --libs jansson libffi openblas zlib) -lm -lpthread -ldl
$out/fuzz_frontend -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix=tests/fuzz/ tests/fuzz/corpus-out $out/seeds $(find tests/golden -type d) samples
