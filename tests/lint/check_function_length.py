#!/usr/bin/env python3
"""No function of lib/ or tools/ runs over 150 lines: check_function_length.py SRC_DIR [LIMIT].

A function is counted from its first line (a line that starts in column 0 with a name and an
opening parenthesis) to the `}` in column 0 that closes it, as the .clang-format layout writes
them; the longest five are printed either way."""
import os
import re
import sys

HEAD = re.compile(r"^[A-Za-z_][^;]*\(")


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    start = name = None
    for i, line in enumerate(lines):
        if start is None:
            if HEAD.match(line) and not line.rstrip().endswith(";"):
                j = i
                while j < len(lines) and not lines[j].startswith("{") and \
                        not lines[j].rstrip().endswith(";") and j - i < 20:
                    j += 1
                if j < len(lines) and lines[j].startswith("{"):
                    start = i
                    found = re.findall(r"([A-Za-z_]\w*)\s*\(", line)
                    name = found[0] if found else line.strip()
        elif line.startswith("}"):
            yield i - start + 1, name, start + 1
            start = None


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: check_function_length.py SRC_DIR [LIMIT]", file=sys.stderr)
        return 2
    top, limit = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 150
    found = []
    for part in ("lib", "tools"):
        for d, dirs, names in os.walk(os.path.join(top, part)):
            dirs[:] = [x for x in dirs if not x.startswith("build")]
            for n in names:
                if n.endswith(".c"):
                    p = os.path.join(d, n)
                    for length, name, line in functions(p):
                        found.append((length, os.path.relpath(p, top), line, name))
    if not found:
        print("check_function_length: FAIL: no functions found")
        return 1
    found.sort(reverse=True)
    over = [f for f in found if f[0] > limit]
    for length, path, line, name in over:
        print(f"check_function_length: FAIL: {path}:{line}: {name} is {length} lines (at most {limit})")
    print(f"check_function_length: {len(found)} functions, the longest: " +
          ", ".join(f"{name} {length}" for length, _, _, name in found[:5]))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
