#!/usr/bin/env python3
"""Checks of test_record.sh: a recording's leaks (memscope-leaks --format json) against the leaks
planted in a victim's source, against valgrind's XML report of the same victim, and against the
shape of memscope-leaks' report on an msMemScope dump.

Planted leaks are marker comments on the allocating line (victims/victim.h):
LEAK[:TAG] SIZE... where SIZE is a number or the name of a size_t array of the same file.
A leak reported by memscope-leaks is the victim's when the innermost frame of its C stack (the
function that called the allocator) is in the victim's source file; the others are libc's or
libstdc++'s own blocks (thread DTVs, the C++ emergency pool) and are only counted. The victims
avoid stdio so that its buffers are not among them.

  check_record.py leaks SRC TAG KIND REPORT.json    planted (TAG) == reported leaks of KIND
  check_record.py valgrind SRC REPORT.json VG.xml   per planted line: valgrind == ours == planted
  check_record.py shape OURS.json REF.json          the step leaks have the same fields
  check_record.py line SRC MARKER                   "FUNC LINE" of the marker line
  check_record.py threads CSV SRC                   the victim's MALLOCs come from N_THREADS threads
Exit 0 when the check holds, 1 (with the differences on stderr) when not.
"""
import collections
import csv
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

MARKER = re.compile(r"(?:/\*|//)\s*LEAK(?::(\w+))?\s+([^*]*?)\s*(?:\*/|$)")
FRAME = re.compile(r"^(.*) \((.+):(\d+)\)$")
FUNC_DEF = re.compile(r"([A-Za-z_]\w*)\s*\(")


def enclosing_function(lines, i):
    """The function defined at column 0 above line index i (the victims' style)."""
    for j in range(i, -1, -1):
        s = lines[j]
        if not s or not (s[0].isalpha() or s[0] == "_") or s.rstrip().endswith(";"):
            continue
        if s.startswith(("struct", "typedef", "#")):
            continue
        s = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", s)
        m = FUNC_DEF.search(s)
        if m:
            return m.group(1)
    raise SystemExit("no function above line %d" % (i + 1))


def planted(src, tag):
    """[(line, function, size)] of the markers of TAG in src."""
    text = open(src).read()
    lines = text.split("\n")
    out = []
    for i, s in enumerate(lines):
        m = MARKER.search(s)
        if not m or (m.group(1) or "main") != tag:
            continue
        func = enclosing_function(lines, i)
        for tok in m.group(2).split():
            if tok.isdigit():
                out.append((i + 1, func, int(tok)))
                continue
            arr = re.search(r"\b%s\s*\[[^\]]*\]\s*=\s*\{([^}]*)\}" % re.escape(tok), text)
            if not arr:
                raise SystemExit("%s:%d: no array %s" % (src, i + 1, tok))
            out += [(i + 1, func, int(v)) for v in arr.group(1).replace(",", " ").split()]
    if not out:
        raise SystemExit("%s: no LEAK markers tagged %s" % (src, tag))
    return out


def split_frame(frame):
    m = FRAME.match(frame)
    return (m.group(1), os.path.basename(m.group(2)), int(m.group(3))) if m else None


def reported(src, report, kind):
    """([(line, frame function, size, leak)] of the victim's leaks of kind, others' count)."""
    base = os.path.basename(src)
    mine, others = [], 0
    for x in json.load(open(report))["leaks"]:
        if x["kind"] != kind:
            continue
        c = x["stack"]["c"]
        f = split_frame(c[0]) if c else None
        if f and f[1] == base:
            mine.append((f[2], f[0], x["size"], x))
        else:
            others += 1
    return mine, others


def fail(msg):
    print("check_record: " + msg, file=sys.stderr)
    return 1


def cmd_leaks(src, tag, kind, report):
    want = planted(src, tag)
    got, others = reported(src, report, kind)
    w = sorted((line, size) for line, _, size in want)
    g = sorted((line, size) for line, _, size, _ in got)
    if w != g:
        return fail("%s %s %s leaks (line, bytes): planted %s, reported %s" % (src, tag, kind, w, g))
    funcs = {line: func for line, func, _ in want}
    for line, frame_func, _, _ in got:
        # a C++ frame may be demangled (make_node()) or not (_Z9make_nodev)
        if funcs[line] not in frame_func:
            return fail("%s:%d: innermost frame is %s, not %s" % (src, line, frame_func, funcs[line]))
    if kind == "step":
        m = re.search(r"^#define LEAK_STEP (\d+)$", open(src).read(), re.M)
        step = int(m.group(1))
        for _, _, _, x in got:
            if (x["alloc_step"], x["detected_step"]) != (step, step + 1):
                return fail("%s: step leak allocated in step %s, detected in %s; planted in %d" % (
                    src, x["alloc_step"], x["detected_step"], step))
    # every FREE of a recording from a process's start has its MALLOC in it
    unmatched = json.load(open(report))["summary"]["unmatched_frees"]
    if unmatched:
        return fail("%s: %d FREE events without their MALLOC in the recording" % (report, unmatched))
    print("%s %s %s: %d planted leaks, %d bytes, as planted; %d other leaks (not the victim's)" % (
        os.path.basename(src), tag, kind, len(want), sum(s for _, _, s in want), others))
    return 0


def cmd_valgrind(src, report, xml):
    """valgrind's loss records summed per planted line (all kinds: definitely, indirectly and
    possibly lost, still reachable), against ours and the markers."""
    base = os.path.basename(src)
    vg = collections.Counter()
    vg_blocks = collections.Counter()
    for err in ET.parse(xml).getroot().iter("error"):
        if not err.findtext("kind", "").startswith("Leak_"):
            continue
        for fr in err.find("stack").iter("frame"):
            if fr.findtext("file") == base:
                line = int(fr.findtext("line"))
                vg[line] += int(err.find("xwhat").findtext("leakedbytes"))
                vg_blocks[line] += int(err.find("xwhat").findtext("leakedblocks"))
                break
    ours = collections.Counter()
    ours_blocks = collections.Counter()
    for line, _, size, _ in reported(src, report, "exit")[0]:
        ours[line] += size
        ours_blocks[line] += 1
    rc = 0
    for line in sorted({line for line, _, _ in planted(src, "main")}):
        want = [s for ln, _, s in planted(src, "main") if ln == line]
        w = (sum(want), len(want))
        if (vg[line], vg_blocks[line]) != w or (ours[line], ours_blocks[line]) != w:
            rc = fail("%s:%d: (bytes, blocks) planted %s, valgrind %s, memscope %s" % (
                src, line, w, (vg[line], vg_blocks[line]), (ours[line], ours_blocks[line])))
    if not rc:
        print("%s: valgrind agrees on %d planted lines, %d bytes" % (
            base, len(set(ln for ln, _, _ in planted(src, "main"))),
            sum(s for _, _, s in planted(src, "main"))))
    return rc


def cmd_shape(ours, ref):
    a, b = json.load(open(ours)), json.load(open(ref))
    sa = [x for x in a["leaks"] if x["kind"] == "step"]
    sb = [x for x in b["leaks"] if x["kind"] == "step"]
    if not sa or not sb:
        return fail("no step leaks: ours %d, reference dump %d" % (len(sa), len(sb)))
    checks = [("leak", set(sa[0]), set(sb[0])),
              ("group", set(a["groups"][0]), set(b["groups"][0])),
              ("summary.step", set(a["summary"]["step"]), set(b["summary"]["step"])),
              ("top level", set(a), set(b))]
    for what, x, y in checks:
        if x != y:
            return fail("%s fields differ: ours only %s, dump only %s" % (what, x - y, y - x))
    if [x["steps"] for x in a["groups"] if x["kind"] == "step"] != [[x["alloc_step"]] for x in sa]:
        return fail("step groups do not list their leaks' steps")
    print("step leaks: same fields as on the msMemScope dump (%d leak fields)" % len(sa[0]))
    return 0


def cmd_line(src, marker):
    lines = open(src).read().split("\n")
    for i, s in enumerate(lines):
        if marker in s:
            print(enclosing_function(lines, i), i + 1)
            return 0
    return fail("%s: no line with %s" % (src, marker))


def cmd_threads(path, src):
    """The victim's MALLOC rows come from N_THREADS threads, none of them the main thread."""
    base = os.path.basename(src)
    want = int(re.search(r"^#define N_THREADS (\d+)$", open(src).read(), re.M).group(1))
    tids, pids = collections.Counter(), set()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            c = r["Call Stack(C)"].split("\n")
            fr = split_frame(c[0]) if c and c[0] else None
            if r["Event"] == "MALLOC" and fr and fr[1] in (base, "victim.h"):
                tids[r["Thread Id"]] += 1
                pids.add(r["Process Id"])
    if len(tids) != want or pids & set(tids):
        return fail("%s: the victim's MALLOC rows by thread %s, want %d threads other than %s" % (
            path, dict(tids), want, pids))
    print("%s: %d threads, %d MALLOC rows each" % (base, want, min(tids.values())))
    return 0


def main(argv):
    cmds = {"leaks": (cmd_leaks, 4), "valgrind": (cmd_valgrind, 3), "shape": (cmd_shape, 2),
            "line": (cmd_line, 2), "threads": (cmd_threads, 2)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[argv[1]][0](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
