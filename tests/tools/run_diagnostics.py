#!/usr/bin/env python3
"""--diagnostics-format=text|json|sarif: the machine forms, checked structurally.

For each case, relayc runs three times (text, json, sarif) and must give the same exit status.
The text run with an explicit --diagnostics-format=text must equal the default output byte for
byte. The JSON run must print one JSON array on stderr whose objects carry severity, rule, file,
line, column, end_line, end_column, message and notes (each note with its own location); the
positions must be the ones the text form shows, and the pinned ones below. The SARIF run must be
a SARIF 2.1.0 log as CI systems read it ($schema, version, runs[0].tool.driver with name,
version, informationUri and rules, results with ruleId/ruleIndex/level/message.text and
physicalLocation regions; columns in Unicode code points).

    python3 tests/tools/run_diagnostics.py --relayc build/relayc
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, argv after relayc, exit status, expected top-level diagnostics in order:
#  (severity, rule, line, column, end_line, end_column, message fragment, notes)),
# notes: list of (line or None, column or None, message fragment).
WARN = "unreachable match clause"
CASES = [
    ("type errors and a warning", ["diag_errors.relay"], 1, [
        ("warning", "type", 6, 43, 6, 45, WARN, []),
        ("error", "type", 9, 21, 9, 31, "add: incompatible broadcast", []),
        ("error", "type", 10, 12, 10, 27, "nn.dense: data has 3 input features", []),
        ("error", "type", 11, 21, 11, 28, "tuple index .5 out of range", []),
    ]),
    ("scope errors with located notes", ["diag_scope.relay"], 1, [
        ("error", "scope", 4, 5, 4, 6, "duplicate definition of @g", [(3, 5, "@g is first defined here")]),
        ("error", "scope", 6, 20, 6, 22, "unbound local variable %yy", []),
        ("error", "scope", 7, 3, 7, 10, 'unknown operator "nn.reluu"', [(7, 3, 'did you mean "nn.relu"?')]),
    ]),
    ("warning only", ["diag_warning.relay"], 0, [
        ("warning", "type", 5, 43, 5, 45, WARN, []),
    ]),
    ("run-time error with a backtrace", ["--run", "diag_runtime.relay"], 3, [
        ("error", "runtime", 5, 3, 5, 35, "no clause of the match matches",
         [(None, None, "in @head called from @main at diag_runtime.relay:8:7"), (None, None, "in @main")]),
    ]),
    ("input binding error", ["--run", "diag_warning.relay"], 2, [
        ("warning", "type", 5, 43, 5, 45, WARN, []),
        ("error", "input", None, None, None, None, "missing --input for parameter %l",
         [(None, None, "@main takes %l: List[int32]")]),
    ]),
    ("several files, one missing", ["diag_warning.relay", "no-such-file.relay", "diag_scope.relay"], 2, [
        ("warning", "type", 5, 43, 5, 45, WARN, []),
        ("error", "input", None, None, None, None, "cannot read 'no-such-file.relay'", []),
        ("error", "scope", 4, 5, 4, 6, "duplicate definition of @g", [(3, 5, "first defined here")]),
        ("error", "scope", 6, 20, 6, 22, "unbound local variable", []),
        ("error", "scope", 7, 3, 7, 10, "unknown operator", [(7, 3, "did you mean")]),
    ]),
    ("error cap", ["--max-errors=2", "diag_errors.relay"], 1, [
        ("warning", "type", 6, 43, 6, 45, WARN, []),
        ("error", "type", 9, 21, 9, 31, "add:", []),
        ("error", "type", 10, 12, 10, 27, "nn.dense:", [(None, None, "too many errors (2), stopping here")]),
    ]),
    ("unknown option", ["--prnt", "diag_warning.relay"], 2, [
        ("error", "input", None, None, None, None, "unknown option '--prnt' (did you mean '--print'?)", []),
    ]),
    ("clean file", ["diag_runtime.relay"], 0, []),
]

TEXT_LOC = re.compile(r"^([^\s:][^:]*):(\d+):(\d+): (error|warning|note): ", re.M)


class Checker:
    def __init__(self):
        self.failures = 0
        self.checks = 0

    def expect(self, cond, what):
        self.checks += 1
        if not cond:
            self.failures += 1
            print(f"FAIL {what}")
        return cond


def run(relayc, args):
    p = subprocess.run([relayc, *args], cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stderr


def check_json_object(ck, where, d, top):
    keys = {"severity", "file", "line", "column", "end_line", "end_column", "message"}
    if top:
        keys |= {"rule", "notes"}
    ck.expect(set(d) == keys, f"{where}: keys {sorted(d)}")
    ck.expect(d.get("severity") in (("error", "warning", "note") if top else ("note",)), f"{where}: severity")
    ck.expect(isinstance(d.get("message"), str) and d["message"], f"{where}: message")
    pos = [d.get(k) for k in ("line", "column", "end_line", "end_column")]
    if d.get("file") is None:
        ck.expect(pos == [None] * 4, f"{where}: positions without a file")
    elif d.get("line") is not None:
        ck.expect(all(isinstance(v, int) and v >= 1 for v in pos), f"{where}: positions {pos}")
        ck.expect((pos[2], pos[3]) >= (pos[0], pos[1]), f"{where}: end before start")


def check_json(ck, name, text_err, data, expected):
    if not ck.expect(isinstance(data, list), f"{name}: JSON is not an array"):
        return
    for i, d in enumerate(data):
        check_json_object(ck, f"{name}: [{i}]", d, True)
        for k, n in enumerate(d.get("notes", [])):
            check_json_object(ck, f"{name}: [{i}].notes[{k}]", n, False)
    got = [(d["severity"], d["rule"], d["line"], d["column"], d["end_line"], d["end_column"]) for d in data]
    want = [e[:6] for e in expected]
    ck.expect(got == want, f"{name}: diagnostics {got} != {want}")
    for d, e in zip(data, expected):
        ck.expect(e[6] in d["message"], f"{name}: message {d['message']!r} lacks {e[6]!r}")
        notes = [(n["line"], n["column"], n["message"]) for n in d["notes"]]
        ck.expect(len(notes) == len(e[7]), f"{name}: notes {notes} != {e[7]}")
        for n, en in zip(notes, e[7]):
            ck.expect(n[0] == en[0] and n[1] == en[1] and en[2] in n[2], f"{name}: note {n} != {en}")
    # every located diagnostic and note is where the text form puts it
    text_locs = [(m.group(1), int(m.group(2)), int(m.group(3)), m.group(4))
                 for m in TEXT_LOC.finditer(text_err.decode("utf-8", "replace"))]
    json_locs = []
    for d in data:
        if d["line"] is not None:
            json_locs.append((d["file"], d["line"], d["column"], d["severity"]))
        json_locs += [(n["file"], n["line"], n["column"], "note") for n in d["notes"] if n["line"] is not None]
    ck.expect(json_locs == text_locs, f"{name}: JSON positions {json_locs} != text {text_locs}")


def check_sarif(ck, name, log, expected, status, source_lines):
    ck.expect(log.get("version") == "2.1.0", f"{name}: version")
    ck.expect("sarif-schema-2.1.0" in log.get("$schema", ""), f"{name}: $schema")
    runs = log.get("runs")
    if not ck.expect(isinstance(runs, list) and len(runs) == 1, f"{name}: runs"):
        return
    run0 = runs[0]
    drv = run0.get("tool", {}).get("driver", {})
    ck.expect(drv.get("name") == "relayc", f"{name}: driver.name")
    ck.expect(re.fullmatch(r"\d+\.\d+\.\d+", drv.get("version", "")), f"{name}: driver.version")
    ck.expect(re.match(r"^[a-z][a-z0-9+.-]*:", drv.get("informationUri", "")), f"{name}: informationUri")
    rules = drv.get("rules", [])
    ids = [r.get("id") for r in rules]
    ck.expect(len(ids) == len(set(ids)) and {"syntax", "scope", "type", "runtime", "input"} <= set(ids),
              f"{name}: rule ids {ids}")
    for r in rules:
        ck.expect(r.get("shortDescription", {}).get("text"), f"{name}: rule {r.get('id')} description")
    ck.expect(run0.get("columnKind") == "unicodeCodePoints", f"{name}: columnKind")
    inv = run0.get("invocations", [{}])[0]
    ck.expect(inv.get("exitCode") == status and inv.get("executionSuccessful") == (status != 2),
              f"{name}: invocation {inv}")
    results = run0.get("results")
    if not ck.expect(isinstance(results, list) and len(results) == len(expected),
                     f"{name}: {len(results or [])} results, expected {len(expected)}"):
        return
    for i, (r, e) in enumerate(zip(results, expected)):
        where = f"{name}: results[{i}]"
        ck.expect(r.get("ruleId") == e[1], f"{where}: ruleId {r.get('ruleId')}")
        ck.expect(0 <= r.get("ruleIndex", -1) < len(rules) and rules[r["ruleIndex"]]["id"] == r.get("ruleId"),
                  f"{where}: ruleIndex")
        ck.expect(r.get("level") == e[0], f"{where}: level")
        text = r.get("message", {}).get("text", "")
        ck.expect(e[6] in text, f"{where}: message.text {text!r}")
        for n in e[7]:  # location-less notes are appended to the message
            if n[0] is None:
                ck.expect(n[2] in text, f"{where}: message.text lacks note {n[2]!r}")
        locs = r.get("locations")
        if e[2] is None:
            ck.expect(not locs or "region" not in locs[0].get("physicalLocation", {}), f"{where}: locations")
        elif ck.expect(isinstance(locs, list) and len(locs) == 1, f"{where}: locations"):
            phys = locs[0].get("physicalLocation", {})
            uri = phys.get("artifactLocation", {}).get("uri", "")
            ck.expect(uri.endswith(".relay"), f"{where}: uri {uri}")
            reg = phys.get("region", {})
            # code-point columns: the byte column minus the UTF-8 continuation bytes before it
            line = source_lines[uri][e[2] - 1]
            cp = len(line[:e[3] - 1].decode("utf-8")) + 1
            cp_end = len(line[:e[5]].decode("utf-8")) + 1
            want = {"startLine": e[2], "startColumn": cp, "endLine": e[4], "endColumn": cp_end}
            ck.expect(reg == want, f"{where}: region {reg} != {want}")
        related = [x for x in r.get("relatedLocations", [])]
        located = [n for n in e[7] if n[0] is not None]
        ck.expect(len(related) == len(located), f"{where}: relatedLocations {related}")
        for x, n in zip(related, located):
            reg = x.get("physicalLocation", {}).get("region", {})
            ck.expect(reg.get("startLine") == n[0] and reg.get("startColumn") == n[1] and
                      n[2] in x.get("message", {}).get("text", ""), f"{where}: related {x}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relayc", default="build/relayc")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    ck = Checker()
    sources = {}
    for f in os.listdir(HERE):
        if f.endswith(".relay"):
            with open(os.path.join(HERE, f), "rb") as fh:
                sources[f] = fh.read().split(b"\n")
    for name, args, status, expected in CASES:
        rc_text, err_text = run(relayc, args)
        rc_t2, err_t2 = run(relayc, ["--diagnostics-format=text", *args])
        ck.expect(rc_text == status, f"{name}: text exit {rc_text} != {status}")
        ck.expect(rc_t2 == rc_text and err_t2 == err_text, f"{name}: --diagnostics-format=text differs from default")
        rc_json, err_json = run(relayc, ["--diagnostics-format", "json", *args])
        ck.expect(rc_json == status, f"{name}: json exit {rc_json} != {status}")
        try:
            data = json.loads(err_json)
        except ValueError as ex:
            ck.expect(False, f"{name}: stderr is not JSON ({ex}): {err_json[:300]!r}")
        else:
            check_json(ck, name, err_text, data, expected)
        rc_sarif, err_sarif = run(relayc, ["--diagnostics-format=sarif", *args])
        ck.expect(rc_sarif == status, f"{name}: sarif exit {rc_sarif} != {status}")
        try:
            log = json.loads(err_sarif)
        except ValueError as ex:
            ck.expect(False, f"{name}: stderr is not SARIF JSON ({ex}): {err_sarif[:300]!r}")
        else:
            check_sarif(ck, name, log, expected, status, sources)
    rc, err = run(relayc, ["--diagnostics-format=xml", "diag_warning.relay"])
    ck.expect(rc == 2 and b"expects text, json or sarif" in err, "bad --diagnostics-format value")
    print(f"diagnostics formats: {ck.checks - ck.failures} checks passed, {ck.failures} failed")
    sys.exit(1 if ck.failures else 0)


if __name__ == "__main__":
    main()
