#!/usr/bin/env python3
"""timeit.py LABEL INPUT -- CMD...: median wall time of 5 runs, MB/s of INPUT, peak RSS."""
import os
import resource
import statistics
import subprocess
import sys
import time


def main():
    label, path = sys.argv[1], sys.argv[2]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    times, rss = [], 0
    for _ in range(5):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t0)
        if p.returncode != 0:
            print(f"{label}: FAILED (exit {p.returncode}): {p.stderr.decode()[:300]}")
            return
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    size = os.path.getsize(path)
    med = statistics.median(times)
    print(f"{label:28s} median {med * 1000:8.1f} ms  {size / med / 1e6:7.1f} MB/s  "
          f"peak RSS {rss / 1e6:7.1f} MB ({rss / size:4.1f}x input)")


if __name__ == "__main__":
    main()
