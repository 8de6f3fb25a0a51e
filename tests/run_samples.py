#!/usr/bin/env python3
"""The sample gallery (samples/, issue 13 item 6) as a user meets it.

Checks, for every samples/**/*.relay:
  * it starts with a comment of prose (at least two lines before any test directive);
  * it has `// RUN:` lines and its output is pinned: `// OUT:`/`// ERR:` lines or a .out file
    for the RUN lines that do not print a module, `// AFTER:` for those that do
    (tests/run_golden.py, which `make golden` runs on samples/, checks the pins);
  * samples/README.md names it and samples/demo.sh lists it in SAMPLES.
Every sample also goes through the toolbox (issue 13) with the operator-loading options of its
RUN lines (--ffi, --plugin, --prelude): `--emit=dot` parsed by `dot -Tjson`, `--stats --json`
and `--diagnostics-format=sarif` parsed as JSON (its warnings, if any, as SARIF results).
Then runs `sh samples/demo.sh RELAYC` (what `make demo` runs): exit 0, every sample's section
and every one of its RUN commands present in the transcript, in the README's order, and quick
(under --limit seconds of wall time; the demo takes well under a second on an idle machine).
"""
import argparse
import json
import os
import shlex
import shutil
import re
import subprocess
import sys
import time

DIRECTIVE = re.compile(r"\s*//\s?(RUN|EXIT|ERR|OUT|NO-ROUNDTRIP|AFTER)\b")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    ap.add_argument("--limit", type=float, default=60.0)
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    fails = []
    samples = sorted(os.path.relpath(os.path.join(d, f), "samples")
                     for d, _, fs in os.walk("samples") for f in fs if f.endswith(".relay"))
    readme = open("samples/README.md").read()
    demo = open("samples/demo.sh").read()
    m = re.search(r'^SAMPLES="([^"]*)"', demo, re.M)
    listed = m.group(1).split() if m else []
    if not m:
        fails.append("samples/demo.sh: no SAMPLES=\"...\" list")
    runs_of = {}
    for s in samples:
        path = os.path.join("samples", s)
        lines = open(path, encoding="utf-8").read().splitlines()
        prose = 0
        for line in lines:
            if DIRECTIVE.match(line) or not line.startswith("//"):
                break
            prose += 1
        if prose < 2:
            fails.append(f"{path}: does not start with a comment saying what it shows")
        runs = [re.sub(r"^\s*//\s?RUN:\s*", "", l) for l in lines if re.match(r"\s*//\s?RUN:", l)]
        runs_of[s] = runs
        if not runs:
            fails.append(f"{path}: no // RUN: line (the demo runs a sample's RUN lines)")
        pinned_text = any(re.match(r"\s*//\s?(OUT|ERR):", l) for l in lines) or \
            os.path.exists(os.path.splitext(path)[0] + ".out")
        has_after = any(re.match(r"\s*//\s?AFTER:", l) for l in lines)
        for r in runs:
            prints = "--print" in r.split()
            if not (pinned_text or (prints and has_after)):
                fails.append(f"{path}: the output of `{r}` is not pinned (OUT/ERR lines, .out or AFTER)")
        if f"`{s}`" not in readme:
            fails.append(f"samples/README.md: no row for `{s}`")
        if s[:-len(".relay")] not in listed:
            fails.append(f"samples/demo.sh: {s} is not in SAMPLES")
    for name in listed:
        if name + ".relay" not in samples:
            fails.append(f"samples/demo.sh: SAMPLES names {name}, which is not a sample")
    order = [s for s in re.findall(r"^\| `([^`]+\.relay)`", readme, re.M)]
    if [s[:-len(".relay")] for s in order] != listed:
        fails.append(f"samples/README.md's table and demo.sh's SAMPLES differ in order or content:\n"
                     f"  README: {order}\n  demo:   {listed}")

    have_dot = shutil.which("dot") is not None
    for s in samples:
        path = os.path.join("samples", s)
        opts = []
        for r in runs_of.get(s, []):
            argv = shlex.split(r.replace("%s", path).replace("%d", os.path.dirname(path)))
            for i, arg in enumerate(argv):
                if arg in ("--ffi", "--plugin") and i + 1 < len(argv):
                    opts += [arg, argv[i + 1]]
                elif arg == "--prelude" or arg.startswith(("--ffi=", "--plugin=")):
                    opts.append(arg)
        base = [a.relayc] + opts
        p = subprocess.run(base + ["--emit=dot", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if p.returncode != 0:
            fails.append(f"{path}: --emit=dot exit {p.returncode}: {p.stderr.decode(errors='replace')[:300]}")
        elif have_dot:
            q = subprocess.run(["dot", "-Tjson"], input=p.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=120)
            if q.returncode != 0 or q.stderr or not json.loads(q.stdout).get("objects"):
                fails.append(f"{path}: dot -Tjson rejects --emit=dot's output: {q.stderr.decode(errors='replace')[:300]}")
        p = subprocess.run(base + ["--stats", "--json", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        try:
            st = json.loads(p.stdout) if p.returncode == 0 else None
        except ValueError:
            st = None
        if not st or "macs" not in st:
            fails.append(f"{path}: --stats --json exit {p.returncode}: {p.stdout[:200]!r} {p.stderr[:200]!r}")
        p = subprocess.run(base + ["--diagnostics-format=sarif", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        try:
            results = json.loads(p.stderr)["runs"][0]["results"] if p.returncode == 0 else None
        except (ValueError, KeyError, IndexError):
            results = None
        warned = sum(1 for l in open(path, encoding="utf-8") if re.match(r"\s*//\s?ERR:.*warning:", l))
        if results is None or len(results) != warned or any(r.get("level") != "warning" for r in results):
            fails.append(f"{path}: --diagnostics-format=sarif: exit {p.returncode}, expected {warned} warnings: "
                         f"{p.stderr[:300]!r}")

    t0 = time.monotonic()
    p = subprocess.run(["sh", "samples/demo.sh", a.relayc], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=600, env=dict(os.environ, NO_COLOR="1"))
    wall = time.monotonic() - t0
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        fails.append(f"samples/demo.sh exited {p.returncode}:\n{out[-3000:]}")
    if wall > a.limit:
        fails.append(f"samples/demo.sh took {wall:.1f} s (limit {a.limit:.0f} s): keep `make demo` quick")
    pos = 0
    for name in listed:
        f = f"samples/{name}.relay"
        i = out.find(f"=== {f}\n", pos)
        if i < 0:
            fails.append(f"demo transcript: no section for {f} (or out of order)")
            continue
        pos = i
        for r in runs_of.get(name + ".relay", []):
            cmd = r.replace("%s", f).replace("%d", os.path.dirname(f))
            if f"$ {cmd}\n" not in out:
                fails.append(f"demo transcript: {f}: `{cmd}` was not run")
    for f in fails:
        print("FAIL " + f.replace("\n", "\n  "))
    print(f"samples: {len(samples)} samples, demo {wall:.2f} s wall, {len(fails)} failures")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
