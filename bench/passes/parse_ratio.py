#!/usr/bin/env python3
"""bench/passes/parse_ratio.py — one pass against parsing the same text, run in interleaved pairs.

    python3 bench/passes/parse_ratio.py RELAYC INPUT.relay [--pass Gradient] [--runs 15]

Each pair is `relayc --stop-after=parse IN` (process CPU, user+sys from wait4) then
`relayc --pass=P --time-passes IN` (the pass's row: wall ms and CPU ms). The machine's state
(fresh-page costs, load) changes between runs; pairing the two runs lets the median of the
per-pair ratios say how the pass compares with the parse under the same conditions.
"""
import argparse
import os
import re
import statistics
import subprocess


def process_cpu_ms(argv):
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execv(argv[0], argv)
    _, _, usage = os.wait4(pid, 0)
    return (usage.ru_utime + usage.ru_stime) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("relayc")
    ap.add_argument("input")
    ap.add_argument("--pass", dest="pass_name", default="Gradient")
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    row = re.compile(r"^" + re.escape(a.pass_name) + r"\s+([\d.]+)\s+([\d.]+)", re.M)
    parse, cpu, wall = [], [], []
    for _ in range(a.runs):
        parse.append(process_cpu_ms([a.relayc, "--stop-after=parse", a.input]))
        err = subprocess.run([a.relayc, f"--pass={a.pass_name}", "--time-passes", a.input],
                             capture_output=True, text=True).stderr
        m = row.search(err)
        if not m:
            raise SystemExit(f"no --time-passes row for {a.pass_name}: {err.strip()[-200:]}")
        wall.append(float(m.group(1)))
        cpu.append(float(m.group(2)))
    med = statistics.median
    print(f"{a.input}: parse {med(parse):.0f} ms CPU | {a.pass_name} {med(cpu):.0f} ms CPU, {med(wall):.0f} wall | "
          f"median per-pair ratio: CPU {med([c / p for c, p in zip(cpu, parse)]):.2f}x, "
          f"wall {med([w / p for w, p in zip(wall, parse)]):.2f}x the parse")


if __name__ == "__main__":
    main()
