#!/bin/sh
# bench/passes/run.sh — `make bench-passes` (and part of `make bench`): the speed of every pass,
# -O1..-O3, -O3 on the networks, FuseOps'd networks, PartialEvaluate (bench/passes/run.py).
#   sh bench/passes/run.sh [run.py options, e.g. --runs 5 --only passes --inputs chain]
cd "$(dirname "$0")/../.." || exit 2
exec python3 bench/passes/run.py "$@"
