#!/usr/bin/env python3
"""The file graph of libmemscope.a has no circles, and a reader is named only by its own file and
the reader table: check_layers.py [--graph] [--src LIBDIR] OBJECT...

The objects are the library's (CMake's $<TARGET_OBJECTS:memscope>), each named by its path below
`memscope.dir/` (readers/source.c.o): file A depends on file B when A uses a symbol B defines
(nm: U in A, T/D/B/R in B). A circle is a strongly connected set of two files or more. A reader is
a `ms__*_reader` table entry; only readers/registry.c may name one. The folders depend one way,
by LAYERS below (formats/architecture.md draws it): a file uses only files of its own folder or of
a folder of a lower layer, so two folders of one layer never use each other. --graph prints every edge
("a -> b: sym, ...") as well. With --src, the #include graph of LIBDIR's .c and .h files (quoted
includes, found beside the file or in LIBDIR/include, as gcc -MM finds them) has no circle either."""
import os
import re
import subprocess
import sys
from collections import defaultdict


def include_edges(libdir):
    edges = defaultdict(lambda: defaultdict(list))
    for d, _, names in os.walk(libdir):
        for name in sorted(n for n in names if n.endswith((".c", ".h"))):
            path = os.path.join(d, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for inc in re.findall(r'^#\s*include\s+"([^"]+)"', text, re.M):
                for base in (d, os.path.join(libdir, "include")):
                    p = os.path.normpath(os.path.join(base, inc))
                    if os.path.exists(p):
                        edges[os.path.relpath(path, libdir)][os.path.relpath(p, libdir)].append(inc)
                        break
    return edges


# the layer of each folder of lib/, lowest first; objects outside a folder (generated data, such as
# the pages' scripts) are below them all
LAYERS = {"core": 0, "readers": 1, "analyses": 2, "writers": 3, "session": 3, "record": 4,
          "batch": 4, "report": 4}


def layer_errors(edges):
    errs = []
    for a in sorted(edges):
        fa = a.split("/")[0] if "/" in a else None
        for b in sorted(edges[a]):
            fb = b.split("/")[0] if "/" in b else None
            if fb is None or fa == fb:
                continue
            for f in (fa, fb):
                if f not in LAYERS:
                    errs.append(f"lib/{f}/ has no layer in check_layers.py's LAYERS")
            if fa in LAYERS and fb in LAYERS and LAYERS[fa] <= LAYERS[fb]:
                errs.append(f"{a} uses {b} ({', '.join(edges[a][b][:3])}): {fa}/ may not use "
                            f"{fb}/ (layer {LAYERS[fa]} over {LAYERS[fb]})")
    return sorted(set(errs))


def short(path):
    return path.split("memscope.dir/", 1)[-1]


def read_objects(objs):
    out = subprocess.run(["nm", "-A", "-g"] + objs, capture_output=True, text=True, check=True).stdout
    defs, uses = {}, defaultdict(set)
    for line in out.splitlines():
        where, _, rest = line.rpartition(":")
        member = short(where)
        f = rest.split()
        if len(f) == 3 and f[1] in "TDBRVWC":
            defs[f[2]] = member
        elif len(f) == 2 and f[0] == "U":
            uses[member].add(f[1])
    return defs, uses


def edges_of(defs, uses):
    edges = defaultdict(lambda: defaultdict(list))
    for a, syms in uses.items():
        for s in sorted(syms):
            b = defs.get(s)
            if b and b != a:
                edges[a][b].append(s)
    return edges


def circles(edges):
    """Tarjan's strongly connected components of two nodes or more."""
    index, low, stack, on, found = {}, {}, [], set(), []
    nodes = sorted(set(edges) | {b for a in edges for b in edges[a]})

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return found


def main():
    args, src = sys.argv[1:], None
    if "--src" in args:
        i = args.index("--src")
        src = args[i + 1] if i + 1 < len(args) else None
        del args[i:i + 2]
    objs = [a for a in args if a != "--graph"]
    if not objs or (src is None and "--src" in sys.argv):
        print("usage: check_layers.py [--graph] [--src LIBDIR] OBJECT...", file=sys.stderr)
        return 2
    defs, uses = read_objects(objs)
    if not defs:
        print(f"check_layers: FAIL: no symbols read from {len(objs)} objects")
        return 1
    edges = edges_of(defs, uses)
    if "--graph" in sys.argv:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f"{a} -> {b}: {', '.join(edges[a][b])}")
    bad = 0
    for comp in circles(edges):
        bad += 1
        members = set(comp)
        print(f"check_layers: FAIL: circle of {len(comp)} files: {' '.join(comp)}")
        for a in comp:
            for b in sorted(edges[a]):
                if b in members:
                    print(f"  {a} -> {b}: {', '.join(edges[a][b][:4])}")
    for e in layer_errors(edges):
        bad += 1
        print(f"check_layers: FAIL: {e}")
    for sym, member in sorted(defs.items()):
        if not (sym.startswith("ms__") and sym.endswith("_reader")):
            continue
        for a in sorted(uses):
            if sym in uses[a] and a != "readers/registry.c.o":
                bad += 1
                print(f"check_layers: FAIL: {a} names the reader {sym} ({member}); only the table may")
    n_edges = sum(len(v) for v in edges.values())
    inc_note = ""
    if src:
        inc = include_edges(src)
        for comp in circles(inc):
            bad += 1
            print(f"check_layers: FAIL: #include circle of {len(comp)} files: {' '.join(comp)}")
        inc_note = f"; {sum(len(v) for v in inc.values())} #includes in {src}, no circle"
    if bad:
        return 1
    print(f"check_layers: {len(set(defs.values()))} files, {n_edges} dependencies, no circle; "
          f"folders one way; readers named only by the table{inc_note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
