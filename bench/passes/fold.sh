#!/bin/sh
# bench/passes/fold.sh: the folding/simplification passes (FoldConstant, SimplifyInference,
# SimplifyExpr, ...) on the generated 20 MB module and a 100,000-binding chain, each pass
# timed alone (medians of 5, CPU and wall) next to parsing the same text.
#   sh bench/passes/fold.sh [reps] [Pass ...]
set -e
cd "$(dirname "$0")/../.."
make -s all
out=build/bench/fold_bench
mkdir -p build/bench
objs="build/obj/gen/lexer.o build/obj/gen/relay.tab.o"
for f in ir/*.c lexer/*.c parser/*.c sema/*.c transform/*.c eval/*.c runtime/*.c ops/*.c ops/*/*.c; do
  [ -f "$f" ] && objs="$objs build/obj/${f%.c}.o"
done
gcc -std=c17 -D_GNU_SOURCE -O2 -g -I. -Ibuild/gen -o "$out" bench/passes/fold_bench.c $objs \
  $(pkg-config --libs jansson libffi) -lm -lpthread -ldl
tmp=${TMPDIR:-/tmp}/relayc-bench
mkdir -p "$tmp"
[ -f "$tmp/big.relay" ] || python3 bench/gen_module.py "$tmp/big.relay" --mb 20
[ -f "$tmp/chain.relay" ] || python3 bench/gen_module.py "$tmp/chain.relay" --single-chain 100000
reps=${1:-5}
[ $# -gt 0 ] && shift
"$out" "$tmp/big.relay" "$reps" "$@"
"$out" "$tmp/chain.relay" "$reps" "$@"
