#!/bin/sh
# `make demo`: type-check, print and (when the interpreter is built) run the samples.
set -e
relayc=${1:-build/relayc}
for f in samples/*.relay; do
  echo "== $relayc $f"
  "$relayc" "$f" && echo "   (type-checks: no output, exit 0)"
  echo "== $relayc --print $f"
  "$relayc" --print "$f"
done
if "$relayc" --run samples/list.relay >/dev/null 2>&1; then
  echo "== $relayc --run samples/list.relay"
  "$relayc" --run samples/list.relay
fi
