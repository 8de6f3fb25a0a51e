#!/usr/bin/env python3
"""bench/passes/run.py — speed of every pass (issues 10 and 11, "Speed"); `make bench-passes`.

    python3 bench/passes/run.py [--relayc build/relayc] [--runs 5] [--only SECTION,...]
                                [--passes A,B,...] [--inputs big,chain,letchain]

Sections (all by default; medians of --runs runs; CPU = user+sys of the process, or the
thread CPU --time-passes reports, steady on a loaded machine where wall times are not):

  passes   every implemented pass (`relayc --list-passes`) and -O1..-O3 on three inputs made
           by bench/gen_module.py: the 20 MB module (`--mb 20`), a 100,000-binding graph chain
           (`--single-chain`) and the same chain written with `let` (`--let-chain`). Per pass:
           its own wall and CPU ms and the re-typing after it (from --time-passes), against
           parsing the same text (`relayc --stop-after=parse`, process CPU) and parse+check.
           Verdict `ok` when the pass's CPU is < 500 ms and <= 2x the parse CPU (issue 10; the
           wall/parse column is the pass's wall time over the parse's, printed beside it),
           `SLOW` otherwise; the "+retype" ratio counts the runner's re-typing too.
  nets     -O3 on the --nets networks (bench/nets/gen.py: ResNet-50, MobileNet-V2, GPT-2,
           MNIST) against their start-up (`relayc FILE`: parse, resolve, type-check,
           metadata): the passes plus their re-typing (the pass thread's CPU), and the extra
           process CPU of `relayc -O3 FILE` over `relayc FILE` (every thread: kernels that
           FoldConstant calls use the pool); target < 20% of start-up for both.
  fused    a FuseOps'd network (`--pass=FuseOps --print` written to a file, then run) against
           the original: forward time in process (`--run --repeat`, median and min of the
           repeats' wall times, and the median of their CPU times, every thread).
  interp   PartialEvaluate on the bench/interp programs: the pass's CPU, then the run time of
           the original and of the partially evaluated program (printed, then run; median of
           `--repeat` runs in process and process CPU).
  pe       PartialEvaluate on every golden program that type-checks and on stdlib/prelude.relay
           (with --prelude where its RUN line has it): process CPU of `relayc --pass=PE FILE`
           once each, medians of --runs for the ones above 0.25 s; target < 1 s each.

Inputs are cached in $TMPDIR/relayc-bench and $TMPDIR/relayc-nets (delete them after changing a
generator). Run it on a quiet machine if you can; quote the load (printed first) with figures.
"""
import argparse
import glob
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TMP = os.environ.get("TMPDIR", "/tmp")
BENCH = os.path.join(TMP, "relayc-bench")
NETS = os.path.join(TMP, "relayc-nets")
NUMPY_PY = "/usr/bin/python3"  # Debian's python3 has numpy (bench/nets/README.md)

# options some passes need to do anything (or to run at all) on the generated inputs
SPECIAL = {
    "EtaExpand": "EtaExpand(expand_constructor=True, expand_global_var=True)",
    "UnCPS": "ToCPS,UnCPS",  # timed: the UnCPS row
}
INPUTS = {
    "big": ("20 MB module", ["--mb", "20"]),
    "chain": ("100k graph chain", ["--single-chain", "100000"]),
    "letchain": ("100k let chain", ["--let-chain", "100000"]),
}
ROW = re.compile(r"^(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s*$", re.M)
REPEAT = re.compile(r"Runs: \d+, first ([\d.]+) ms, then median ([\d.]+) ms, min ([\d.]+) ms(?:, cpu median ([\d.]+) ms)?")
med = statistics.median
# -O3 (transform/pass.c pass_pipeline_add_opt_level) spelled out without the FoldScaleAxis
# members, used while those are not implemented (-O3 then stops with "not implemented")
O3_WITHOUT_FOLD_SCALE = ("--pass=RemoveUnusedFunctions,ToBasicBlockNormalForm,SimplifyInference,"
                         "EliminateCommonSubexpr,FoldConstant,FoldConstant,SimplifyExpr,CanonicalizeCast,"
                         "CanonicalizeOps,SimplifyExprPostAlterOp,FoldConstant,FuseOps(fuse_opt_level=3)")


def timed(argv, env=None, timeout=600):
    """(returncode, wall s, CPU s of the child, stdout, stderr)"""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, timeout, timeout, b"", b"timed out"
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return p.returncode, wall, cpu, p.stdout, p.stderr


def last_line(err):
    """the first error line of stderr, else its last line"""
    lines = [l for l in err.decode(errors="replace").splitlines() if l.strip()]
    lines = [l for l in lines if "error:" in l][:1] or lines
    return lines[-1][:100] if lines else "?"


def list_passes(relayc):
    out = subprocess.run([relayc, "--list-passes"], capture_output=True, text=True).stdout
    return [l.split()[0] for l in out.splitlines() if l and not l[0].isspace() and "not implemented" not in l]


def ensure_input(key):
    path = os.path.join(BENCH, key + ".relay")
    if not os.path.exists(path):
        os.makedirs(BENCH, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_module.py"), path] + INPUTS[key][1], check=True)
    return path


def process_cpu(argv, runs, env=None):
    """medians (wall ms, CPU ms) of `runs` runs of argv, or None if it fails"""
    w, c = [], []
    for _ in range(runs):
        rc, wall, cpu, _, err = timed(argv, env=env)
        if rc != 0:
            print(f"    FAILED: {' '.join(argv)}: {last_line(err)}")
            return None
        w.append(wall * 1e3)
        c.append(cpu * 1e3)
    return med(w), med(c)


def pass_rows(relayc, flags, path, runs, only_row=None):
    """pass_rows_once with -O3 replaced by O3_WITHOUT_FOLD_SCALE when that is not implemented"""
    r = pass_rows_once(relayc, flags, path, runs, only_row)
    if flags == ["-O3"] and isinstance(r, str) and "not implemented" in r:
        r = pass_rows_once(relayc, [O3_WITHOUT_FOLD_SCALE], path, runs, only_row)
        if not isinstance(r, str):
            r["note"] = " (-O3 without FoldScaleAxis, not implemented)"
    return r


def pass_rows_once(relayc, flags, path, runs, only_row=None):
    """medians over runs of the --time-passes rows (summed, or the row named only_row):
    dict(ms, cpu, retype, retype_cpu, nodes_before, nodes_after) or an error string"""
    cols = {k: [] for k in ("ms", "cpu", "retype", "retype_cpu", "proc_cpu")}
    before = after = 0
    for _ in range(runs):
        rc, _, cpu, _, err = timed([relayc] + flags + ["--time-passes", path])
        if rc != 0:
            return last_line(err)
        rows = ROW.findall(err.decode(errors="replace"))
        if only_row:
            rows = [r for r in rows if r[0] == only_row]
        if not rows:
            return "no --time-passes rows"
        for k, i in (("ms", 1), ("cpu", 2), ("retype", 3), ("retype_cpu", 4)):
            cols[k].append(sum(float(r[i]) for r in rows))
        cols.setdefault("max_cpu", []).append(max(float(r[2]) for r in rows))
        cols["proc_cpu"].append(cpu * 1e3)
        before, after = int(rows[0][5]), int(rows[-1][6])
    out = {k: med(v) for k, v in cols.items()}
    out["nodes_before"], out["nodes_after"] = before, after
    return out


def section_passes(a, relayc, summary):
    specs = a.passes.split(",") if a.passes else list_passes(relayc) + ["-O1", "-O2", "-O3"]
    for key in a.inputs.split(","):
        path = ensure_input(key)
        parse = process_cpu([relayc, "--stop-after=parse", path], a.runs)
        check = process_cpu([relayc, path], a.runs)
        if not parse or not check:
            continue
        pc = parse[1]
        mb = os.path.getsize(path) / 1e6
        print(f"\n## {INPUTS[key][0]} ({os.path.basename(path)}, {mb:.1f} MB): parse {pc:.0f} ms CPU "
              f"({parse[0]:.0f} wall), parse+check {check[1]:.0f} ms CPU ({check[0]:.0f} wall)")
        print(f"{'pass':<28} {'CPU ms':>8} {'wall ms':>8} {'retype CPU':>10} {'/parse':>7} {'+retype':>8} "
              f"{'wall/parse':>10}  verdict (CPU)")
        for spec in specs:
            name = spec.split("(")[0]
            flags = [spec] if spec.startswith("-O") else ["--pass=" + SPECIAL.get(name, spec)]
            r = pass_rows(relayc, flags, path, a.runs, only_row="UnCPS" if name == "UnCPS" else None)
            if isinstance(r, str):
                print(f"{name:<28} {'-':>8} {'-':>8} {'-':>10} {'-':>7} {'-':>8} {'-':>10}  n/a: {r}")
                continue
            # a pipeline (-ON) is judged by its slowest member: the target is per pass
            cpu = r["max_cpu"] if spec.startswith("-O") else r["cpu"]
            ok = cpu < 500 and cpu <= 2 * pc
            verdict = ("ok" if ok else "SLOW") + (f" (slowest pass {cpu:.0f})" if spec.startswith("-O") else "")
            print(f"{name:<28} {r['cpu']:8.1f} {r['ms']:8.1f} {r['retype_cpu']:10.1f} {r['cpu'] / pc:7.2f} "
                  f"{(r['cpu'] + r['retype_cpu']) / pc:8.2f} {r['ms'] / parse[0]:10.2f}  {verdict}{r.get('note', '')}")
            summary.append((key, name, r["cpu"], r["retype_cpu"], pc, verdict))
            sys.stdout.flush()


def net_files(name):
    base = os.path.join(NETS, name)
    if not os.path.exists(base + ".relay"):
        subprocess.run([NUMPY_PY, os.path.join(ROOT, "bench", "nets", "gen.py"), name], check=True,
                       stdout=subprocess.DEVNULL)
    inputs = []
    for f in sorted(glob.glob(base + ".*.npy")):
        inputs += ["--input", f"{f[len(base) + 1:-4]}={f}"]
    return base + ".relay", inputs


def section_nets(a, relayc, summary):
    print(f"\n## -O3 on the networks against start-up (`relayc FILE`)")
    print(f"{'net':<12} {'start-up CPU':>12} {'-O3 passes CPU':>15} {'+retype CPU':>12} {'share':>7} "
          f"{'process extra':>14} {'share':>7}")
    for net in a.nets.split(","):
        path, _ = net_files(net)
        start = process_cpu([relayc, path], a.runs)
        r = pass_rows(relayc, ["-O3"], path, a.runs)
        o3 = process_cpu([relayc, O3_WITHOUT_FOLD_SCALE if "note" in r else "-O3", path], a.runs)
        if not start or not o3 or isinstance(r, str):
            print(f"{net:<10} failed: {r if isinstance(r, str) else ''}")
            continue
        extra = o3[1] - start[1]
        share = (r["cpu"] + r["retype_cpu"]) / start[1]
        print(f"{net:<12} {start[1]:12.1f} {r['cpu']:15.1f} {r['retype_cpu']:12.1f} {share:7.1%} "
              f"{extra:14.1f} {extra / start[1]:7.1%}{r.get('note', '')}")
        summary.append((net, "-O3", r["cpu"], r["retype_cpu"], start[1], "ok" if share < 0.2 else "SLOW"))
        # process CPU is noisy on a loaded machine (a few ms either way): judged with 5 ms slack
        summary.append((net, "-O3 process extra", extra, 0, start[1],
                        "ok" if extra < 0.2 * start[1] + 5 else "SLOW"))


def repeat_ms(relayc, argv, runs, env=None):
    """(median, min of the in-process repeats ms, nodes after --run's own pipeline, CPU median ms
    of the repeats) of `relayc --run --repeat=runs+1 --time-passes ...`; (None, error, None, None)
    on failure"""
    rc, _, cpu, _, err = timed([relayc, "--run", f"--repeat={runs + 1}", "--time-passes"] + argv, env=env)
    if rc != 0:
        return None, last_line(err), None, None
    text = err.decode(errors="replace")
    m = REPEAT.search(text)
    rows = ROW.findall(text)
    return (float(m.group(2)) if m else None), (float(m.group(3)) if m else None), \
        (int(rows[-1][6]) if rows else None), (float(m.group(4)) if m and m.group(4) else float("nan"))


def section_fused(a, relayc, summary):
    print(f"\n## a FuseOps'd network against the original (forward ms in process: median and min of {a.runs} runs;"
          f" nodes: what --run's own pipeline leaves, which starts with DefuseOps)")
    env = dict(os.environ)
    env.setdefault("RELAYC_NUM_THREADS", "2")
    print(f"{'net':<12} {'original':>10} {'(min)':>8} {'FuseOps':>10} {'(min)':>8} {'ratio':>7} {'nodes orig/fused':>17}"
          f" {'CPU orig':>9} {'CPU fused':>9}")
    print("(CPU: median of the in-process repeats' process CPU, every thread)")
    for net in a.nets.split(","):
        path, inputs = net_files(net)
        fused = os.path.join(NETS, net + ".fused.relay")
        with open(fused, "wb") as f:
            p = subprocess.run([relayc, "--pass=FuseOps", "--print", path], stdout=f, stderr=subprocess.PIPE)
        if p.returncode != 0:
            print(f"{net:<10} FuseOps failed: {last_line(p.stderr)}")
            continue
        o, omin, on, oc = repeat_ms(relayc, [path] + inputs, a.runs, env)
        fz, fmin, fn, fc = repeat_ms(relayc, [fused] + inputs, a.runs, env)
        if o is None or fz is None:
            print(f"{net:<12} run failed")
            continue
        print(f"{net:<12} {o:10.1f} {omin:8.1f} {fz:10.1f} {fmin:8.1f} {fz / o:7.2f} {on:>8}/{fn:<8} "
              f"{oc:9.1f} {fc:9.1f}")
        # same program after --run's pipeline, or a CPU median / wall min within 5%: not slower
        ok = on == fn or fc <= oc * 1.05 or fmin <= omin * 1.05
        summary.append((net, "run FuseOps'd", fz, 0, o, "ok" if ok else "SLOW"))


def section_interp(a, relayc, summary):
    print(f"\n## PartialEvaluate on bench/interp (run: wall ms, median of {a.runs} in-process repeats; process CPU ms of `--run`, median of {a.runs}; ratio of the CPU)")
    print(f"{'program':<12} {'PE CPU ms':>9} {'+retype':>8} {'run orig':>9} {'run PE':>8}"
          f" {'proc CPU orig':>13} {'proc CPU PE':>11} {'ratio':>6}")
    d = os.path.join(ROOT, "bench", "interp")
    for prog in sorted(glob.glob(os.path.join(d, "*.relay"))):
        name = os.path.basename(prog)[:-6]
        r = pass_rows(relayc, ["--pass=PartialEvaluate"], prog, a.runs)
        if isinstance(r, str):
            print(f"{name:<12} PartialEvaluate failed: {r}")
            continue
        with tempfile.NamedTemporaryFile("wb", suffix=".relay", delete=False) as f:
            p = subprocess.run([relayc, "--pass=PartialEvaluate", "--print", prog], stdout=f, stderr=subprocess.PIPE)
            pe = f.name
        try:
            o = repeat_ms(relayc, [prog], a.runs)[0]
            e = repeat_ms(relayc, [pe], a.runs)[0]
            oc = process_cpu([relayc, "--run", prog], a.runs)
            ec = process_cpu([relayc, "--run", pe], a.runs)
        finally:
            os.unlink(pe)
        if o is None or e is None or not oc or not ec:
            print(f"{name:<12} run failed")
            continue
        oc, ec = oc[1], ec[1]
        print(f"{name:<12} {r['cpu']:9.1f} {r['retype_cpu']:8.1f} {o:9.1f} {e:8.1f} {oc:13.0f} {ec:11.0f} {ec / oc:6.2f}")
        summary.append(("interp/" + name, "PE run (process CPU)", ec, 0, oc, "ok" if ec <= oc * 1.05 + 2 else "SLOW"))


def golden_programs():
    """(path, extra flags) of every golden .relay that type-checks, samples and the prelude"""
    progs = []
    for root in ("tests/golden", "samples"):
        for p in sorted(glob.glob(os.path.join(ROOT, root, "**", "*.relay"), recursive=True)):
            if p.endswith(".expected.relay"):
                continue
            text = open(p, errors="replace").read(4000)
            if re.search(r"//\s?EXIT: [^0]", text) or re.search(r"//\s?RUN: relayc --(?:expr|equal)", text):
                continue
            runs = re.findall(r"//\s?RUN: relayc (.*)", text)
            flags = ["--prelude"] if any("--prelude" in shlex.split(r.replace("%s", "X")) for r in runs) else []
            progs.append((p, flags))
    progs.append((os.path.join(ROOT, "stdlib", "prelude.relay"), []))
    return progs


def section_pe(a, relayc, summary):
    print("\n## PartialEvaluate on every golden, sample and prelude program (process CPU, target < 1 s each)")
    n = failed = skipped = 0
    times = []
    progs = golden_programs()
    flags_of = dict(progs)
    for p, flags in progs:
        rc, wall, cpu, _, err = timed([relayc] + flags + ["--pass=PartialEvaluate", p], timeout=60)
        if rc == -1:
            times.append((60.0, 60.0, p))
            continue
        if rc != 0:
            # not a program PE sees (does not type-check by itself), or a refusal
            rc2 = subprocess.run([relayc] + flags + [p], capture_output=True).returncode
            if rc2 != 0:
                skipped += 1
                continue
            failed += 1
            print(f"  PE fails on {os.path.relpath(p, ROOT)}: {last_line(err)}")
        n += 1
        times.append((cpu, wall, p))
    slow = sorted(times, reverse=True)[:8]
    remeasured = []
    for cpu, wall, p in slow:
        if cpu > 0.25:
            r = process_cpu([relayc] + flags_of[p] + ["--pass=PartialEvaluate", p], a.runs)
            if r:
                cpu, wall = r[1] / 1e3, r[0] / 1e3
        remeasured.append((cpu, wall, p))
    remeasured.sort(reverse=True)
    over = [t for t in remeasured if t[0] >= 1.0]
    print(f"{n} programs ({skipped} that do not type-check alone skipped), {failed} rejected by the pass, "
          f"{len(over)} at >= 1 s CPU; slowest (CPU s, wall s):")
    for cpu, wall, p in remeasured[:8]:
        print(f"  {cpu:6.3f} {wall:6.3f}  {os.path.relpath(p, ROOT)}")
    worst = remeasured[0][0] * 1e3 if remeasured else 0
    summary.append(("golden+prelude", "PE max", worst, 0, 1000, "ok" if not over else "SLOW"))


SECTIONS = {"passes": section_passes, "nets": section_nets, "fused": section_fused,
            "interp": section_interp, "pe": section_pe}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--relayc", default=os.path.join(ROOT, "build", "relayc"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default=",".join(SECTIONS), help="sections: " + ",".join(SECTIONS))
    ap.add_argument("--passes", help="comma-separated pass specs or -ON (default: every pass, -O1..-O3)")
    ap.add_argument("--inputs", default=",".join(INPUTS), help="of " + ",".join(INPUTS))
    ap.add_argument("--nets", default="resnet50,mobilenet_v2,gpt2,mnist",
                    help="networks of the nets and fused sections (bench/nets/gen.py names)")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    print(f"relayc bench/passes: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs, medians of {a.runs}")
    summary = []
    for s in a.only.split(","):
        SECTIONS[s](a, relayc, summary)
    slow = [s for s in summary if not s[-1].startswith("ok")]  # "ok (slowest pass N)" for -ON
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}; {len(summary)} measured, {len(slow)} over target"
          + "".join(f"\n  SLOW {k}: {n} {c:.0f} ms (reference {ref:.0f} ms)" for k, n, c, _, ref, _ in slow))


if __name__ == "__main__":
    main()
