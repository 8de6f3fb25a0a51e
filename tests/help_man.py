#!/usr/bin/env python3
"""`relayc --help` and the man page document the same flags (run by tests/run_install.sh on
the installed binary and man page): every flag in --help's option column has an `.It Fl`
entry in man/relayc.1, and every entry is in --help.

    python3 tests/help_man.py build/relayc man/relayc.1
"""
import re
import subprocess
import sys


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


def main():
    relayc, man = sys.argv[1], sys.argv[2]
    h = help_flags(subprocess.run([relayc, "--help"], stdout=subprocess.PIPE, text=True).stdout)
    with open(man) as f:
        m = man_flags(f.read())
    if h - m:
        print("in --help, without an entry in the man page:", " ".join(sorted(h - m)))
    if m - h:
        print("in the man page, not in --help:", " ".join(sorted(m - h)))
    print(f"help_man: {len(h)} flags in --help, {len(m)} in the man page")
    sys.exit(0 if h == m and len(h) > 30 else 1)


if __name__ == "__main__":
    main()
