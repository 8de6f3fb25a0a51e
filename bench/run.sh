#!/bin/sh
# `make bench`: front-end benchmarks, then every bench/*/run.sh. Prints medians of 5 runs; dated
# figures go in bench/README.md (front end) and bench/*/README.md.
set -e
cd "$(dirname "$0")/.."
relayc=build/relayc
tmp=${TMPDIR:-/tmp}/relayc-bench
mkdir -p "$tmp"
[ -f "$tmp/big.relay" ] || python3 bench/gen_module.py "$tmp/big.relay" --mb 20
[ -f "$tmp/meta.relay" ] || python3 bench/gen_metadata.py -o "$tmp/meta.relay" --mb 100
[ -f "$tmp/chain.relay" ] || python3 bench/gen_module.py "$tmp/chain.relay" --single-chain 100000
[ -f "$tmp/poly.relay" ] || python3 bench/gen_module.py "$tmp/poly.relay" --poly 5000
python3 bench/timeit.py "parse 20MB" "$tmp/big.relay" -- $relayc --stop-after=parse "$tmp/big.relay"
python3 bench/timeit.py "parse+resolve 20MB" "$tmp/big.relay" -- $relayc --stop-after=resolve "$tmp/big.relay"
python3 bench/timeit.py "print 20MB" "$tmp/big.relay" -- $relayc --print "$tmp/big.relay"
python3 bench/timeit.py "load 100MB metadata" "$tmp/meta.relay" -- $relayc --stop-after=parse "$tmp/meta.relay"
python3 bench/timeit.py "type-check 100k chain" "$tmp/chain.relay" -- $relayc "$tmp/chain.relay"
python3 bench/timeit.py "type-check 5000 poly defs" "$tmp/poly.relay" -- $relayc "$tmp/poly.relay"
sh bench/passes/fold.sh
for s in bench/*/run.sh; do
  sh "$s"
done
