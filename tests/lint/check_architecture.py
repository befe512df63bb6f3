#!/usr/bin/env python3
"""formats/architecture.md stays true to the tree: check_architecture.py SRC_DIR.

Every path it names (a word starting lib/, tools/, tests/, formats/, man/ or testdata/, with `*`
and the placeholder NAME standing for any name) exists, and every folder of lib/ and tools/ that holds C files is named, so
a new folder is placed in the picture before it lands."""
import glob
import os
import re
import sys

PATH = re.compile(r"(?<![\w/.-])((?:lib|tools|tests|formats|man|testdata)/[\w./*+-]*[\w/*])")


def main():
    if len(sys.argv) != 2:
        print("usage: check_architecture.py SRC_DIR", file=sys.stderr)
        return 2
    top = sys.argv[1]
    doc = os.path.join(top, "formats", "architecture.md")
    try:
        with open(doc, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        print(f"check_architecture: FAIL: {doc}: {e.strerror}")
        return 1
    named, bad = set(), 0
    for no, line in enumerate(lines, 1):
        for p in PATH.findall(line):
            p = p.rstrip(".")
            hits = glob.glob(os.path.join(top, p.replace("NAME", "*")))
            if not hits:
                bad += 1
                print(f"check_architecture: FAIL: formats/architecture.md:{no}: {p} does not exist")
            named.add(p.rstrip("/"))
    folders = set()
    for part in ("lib", "tools"):
        for d, _, names in os.walk(os.path.join(top, part)):
            rel = os.path.relpath(d, top)
            if any(n.endswith(".c") for n in names) and not rel.split("/")[-1].startswith("build"):
                folders.add(rel)
    for d in sorted(folders):
        if not any(n == d or n.startswith(d + "/") for n in named):
            bad += 1
            print(f"check_architecture: FAIL: {d}/ holds C files but formats/architecture.md "
                  "does not name it")
    if bad:
        return 1
    print(f"check_architecture: {len(named)} paths named, all present; {len(folders)} folders "
          "of lib/ and tools/, all placed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
