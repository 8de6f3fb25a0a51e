#!/bin/sh
# bench/interp/run.sh — interpreter benchmarks (issue 4, "Speed"): each program in
# Relay, Python 3 and Lua 5.4; median wall time of 5 runs and peak RSS of each.
# Usage: sh bench/interp/run.sh [path/to/relayc]
cd "$(dirname "$0")"
relayc=${1:-../../build/relayc}
py=${PYTHON:-/usr/bin/python3}
lua=${LUA:-lua5.4}
exec "$py" - "$relayc" "$py" "$lua" <<'PYEOF'
import statistics, subprocess, sys, time
relayc, py, lua = sys.argv[1:4]
def measure(cmd):
    """Median wall time of 5 runs and peak RSS (MB, from /usr/bin/time: rusage
    of a forked child would include the forking Python's own pages)."""
    times, peak = [], 0
    for _ in range(5):
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t0)
        if p.returncode != 0:
            return None, None
        peak = max(peak, int(p.stderr.decode().strip().splitlines()[-1]))
    return statistics.median(times), peak / 1024
print(f"{'benchmark':12s} {'relayc':>14s} {'python3':>14s} {'lua5.4':>14s}   relayc/py relayc/lua")
for b in ["fib", "tak", "list", "binarytrees", "closures", "mandel"]:
    r = [measure([relayc, "--run", f"{b}.relay"]), measure([py, f"{b}.py"]), measure([lua, f"{b}.lua"])]
    cells = [f"{t*1000:7.0f}ms {m:4.0f}MB" if t else "   FAILED     " for t, m in r]
    ratio = lambda a, b: f"{a[0]/b[0]:9.2f}" if a[0] and b[0] else "        -"
    print(f"{b:12s} {cells[0]:>14s} {cells[1]:>14s} {cells[2]:>14s}   {ratio(r[0], r[1])} {ratio(r[0], r[2])}")
PYEOF
