#!/usr/bin/env python3
"""`relayc --help` and the man page document the same flags (run by tests/run_install.sh on
the installed binary and man page): every flag in --help's option column has an `.It Fl`
entry in man/relayc.1, and every entry is in --help. Both also match the source: the flags
cli/main.c parses (its is_opt calls, -O by hand) and its did-you-mean list of long options,
and the RELAYC_* environment variables the C sources read (getenv) against the man page's
`.It Ev` entries.

    python3 tests/help_man.py build/relayc man/relayc.1
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def help_flags(text):
    """The option column of each line: flags and their METAVARS, up to the description."""
    flags = set()
    for line in text.splitlines():
        for tok in line.split():
            if tok.startswith("-") and tok != "--":
                flags.add(re.sub(r"[\[=,].*$", "", tok))
            elif not re.fullmatch(r"[A-Z][A-Z0-9_=.,\[\]]*", tok):
                break
    return flags


def man_flags(src):
    """`.It Fl p , Fl \\-print` -> -p, --print (mdoc's Fl adds one dash)."""
    flags = set()
    for line in src.splitlines():
        if line.startswith(".It Fl"):
            for m in re.finditer(r"\bFl ((?:\\-|[A-Za-z0-9-])+)", line):
                name = "-" + m.group(1).replace("\\-", "-")
                if name != "--":
                    flags.add(name)
    return flags


def parsed_flags(src):
    """The flags cli/main.c's option loop accepts: is_opt(a, "--long", "-s" or NULL, ...), and -O0..-O3."""
    flags = {"-O0", "-O1", "-O2", "-O3"} if re.search(r"a\[1\] == 'O'", src) else set()
    for m in re.finditer(r'is_opt\(a, "(--[a-z-]+)", (?:"(-[A-Za-z])"|NULL)', src):
        flags.add(m.group(1))
        if m.group(2):
            flags.add(m.group(2))
    return flags


def suggested_flags(src):
    """cli/main.c's long_options[] (the did-you-mean list for a misspelled option)."""
    body = re.search(r"long_options\[\] = \{(.*?)\};", src, re.S).group(1)
    return set(re.findall(r'"(--[a-z-]+)"', body))


def source_env_vars():
    """RELAYC_* variables read by getenv in the C sources (tests excluded)."""
    names = set()
    for path in glob.glob(os.path.join(ROOT, "*", "**", "*.c"), recursive=True):
        if os.sep + "tests" + os.sep in path or os.sep + "build" + os.sep in path:
            continue
        with open(path, errors="replace") as f:
            names |= set(re.findall(r'getenv\("(RELAYC_[A-Z0-9_]+)"\)', f.read()))
    return names


def man_env_vars(src):
    return set(re.findall(r"^\.It Ev (RELAYC_[A-Z0-9_]+)", src, re.M))


def compare(what, a, a_name, b, b_name):
    """Prints what one side lacks; True when the sets are equal."""
    if a - b:
        print(f"{what}: in {a_name}, not in {b_name}:", " ".join(sorted(a - b)))
    if b - a:
        print(f"{what}: in {b_name}, not in {a_name}:", " ".join(sorted(b - a)))
    return a == b


def main():
    relayc, man = sys.argv[1], sys.argv[2]
    h = help_flags(subprocess.run([relayc, "--help"], stdout=subprocess.PIPE, text=True).stdout)
    with open(man) as f:
        man_src = f.read()
    m = man_flags(man_src)
    with open(os.path.join(ROOT, "cli", "main.c")) as f:
        cli_src = f.read()
    p, sug = parsed_flags(cli_src), suggested_flags(cli_src)
    env_src, env_man = source_env_vars(), man_env_vars(man_src)
    ok = compare("flags", h, "--help", m, "the man page")
    ok &= compare("flags", p, "cli/main.c's option loop", h, "--help")
    ok &= compare("long flags", sug, "cli/main.c's long_options[]", {f for f in p if f.startswith("--")},
                  "its option loop")
    ok &= compare("environment", env_src, "the sources' getenv calls", env_man, "the man page's ENVIRONMENT")
    print(f"help_man: {len(h)} flags in --help, {len(m)} in the man page, {len(p)} parsed; "
          f"{len(env_src)} RELAYC_* variables read, {len(env_man)} documented")
    sys.exit(0 if ok and len(h) > 30 and len(p) > 30 and len(env_src) > 5 else 1)


if __name__ == "__main__":
    main()
