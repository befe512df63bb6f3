#!/usr/bin/env python3
"""Checks what memscope made of a snapshot against the JSON make_snapshot.py wrote beside it.

usage: check_snapshot.py csv OUT.csv EXPECT.json     the dump CSV of memscope-convert
       check_snapshot.py leaks LEAKS.json EXPECT.json  memscope-leaks --format json: the planted
                                                       tensor is the one step leak, in its step
       check_snapshot.py svg OUT.svg EXPECT.json     memscope-export --format svg: the planted
                                                       tensor's Python frames are drawn

csv: the columns of formats/dump-csv.md; IDs 1, 2, 3, ...; no process or thread; then the
figures (make_snapshot.Figures over the CSV's rows against the JSON's, the first that differs
named), then when the JSON lists its events, every event (kind, type, name for MSTX and
OP_LAUNCH, ts, device, ptr, attrs with size, both stacks) as a multiset, and the trace events
of each device in the order of its trace. Exit 0 when all holds, 1 with the first difference.
"""
import csv
import html
import json
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_snapshot import Figures  # noqa: E402  (the same figures for both sides)

COLUMNS = ["ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id", "Thread Id",
           "Device Id", "Ptr", "Attr", "Call Stack(Python)", "Call Stack(C)"]
KNOWN_KINDS = {"SYSTEM", "MALLOC", "FREE", "ACCESS", "OP_LAUNCH", "KERNEL_LAUNCH", "MSTX",
               "SNAPSHOT", "OOM_DETAIL", "COUNTER", "PLAN"}
NAMED_KINDS = {"MSTX", "OP_LAUNCH"}


def fail(msg):
    print(f"check_snapshot: {msg}")
    sys.exit(1)


def parse_attrs(text, where):
    """'{k:v,k:v}' (formats/dump-csv.md "Attr": a value runs up to the next ',key:')."""
    if text == "":
        return {}
    if not (text.startswith("{") and text.endswith("}")):
        fail(f"{where}: Attr not {{k:v,...}}: {text!r}")
    out = {}
    for part in re.split(r",(?=[A-Za-z0-9_]+:)", text[1:-1]) if text != "{}" else []:
        k, sep, v = part.partition(":")
        if not sep or not re.fullmatch(r"[A-Za-z0-9_]+", k):
            fail(f"{where}: Attr entry {part!r} is not key:value")
        if k in out:
            fail(f"{where}: Attr key {k} twice")
        out[k] = v
    return out


def read_csv(path):
    """The dump CSV's rows as events shaped like the oracle's."""
    events = []
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows, None)
        if header != COLUMNS:
            fail(f"{path}: header {header}, wanted {COLUMNS}")
        for n, r in enumerate(rows, 1):
            where = f"{path}: row {n}"
            if len(r) != len(COLUMNS):
                fail(f"{where}: {len(r)} fields")
            if r[0] != str(n):
                fail(f"{where}: ID {r[0]}, wanted {n} (IDs 1, 2, 3, ... in delivery order)")
            if r[5] != "N/A" or r[6] != "N/A":
                fail(f"{where}: process/thread {r[5]}/{r[6]}, wanted N/A")
            kind = r[1]
            events.append({
                "kind": kind,
                "type": r[2] if kind in KNOWN_KINDS else None,
                "name": r[3] if kind in NAMED_KINDS else None,
                "ts": int(r[4]),
                "device": None if r[7] == "N/A" else int(r[7]),
                "ptr": None if r[8] == "N/A" else int(r[8], 16),
                "attrs": parse_attrs(r[9], where),
                "py": r[10].split("\n") if r[10] else [],
                "c": r[11].split("\n") if r[11] else [],
                "row": n,
            })
    return events


def signature(ev):
    """One event as one comparable line (the fields the spec fixes)."""
    attrs = ",".join(f"{k}:{v}" for k, v in sorted(ev["attrs"].items()))
    ptr = "N/A" if ev["ptr"] is None else f"0x{ev['ptr']:016x}"
    return (f"{ev['kind']} {ev['type'] or ''} name={ev['name'] if ev['kind'] in NAMED_KINDS else ''}"
            f" ts={ev['ts']} dev={ev['device']} ptr={ptr} {{{attrs}}}"
            f" py=[{' <- '.join(ev['py'])}] c=[{' <- '.join(ev['c'])}]")


def from_trace(ev):
    """Whether the event comes from a trace entry: not an annotation, and not a block or
    segment of `segments` delivered after the file (those carry state or segment_type)."""
    if ev["kind"] == "OP_LAUNCH":
        return False
    a = ev["attrs"]
    return not (ev["kind"] == "MALLOC" and a.get("before_trace") == "1" and
                ("state" in a or "segment_type" in a))


def compare_figures(got, want):
    for k in want:
        if k not in got:
            return f"figure {k} missing"
        if got[k] != want[k]:
            g, w = got[k], want[k]
            if isinstance(w, dict):
                diff = [f"{kk}: got {g.get(kk)} wanted {w.get(kk)}"
                        for kk in sorted(set(g) | set(w)) if g.get(kk) != w.get(kk)]
                return f"figure {k}: " + "; ".join(diff[:6])
            if isinstance(w, list):
                miss = sorted(set(w) - set(g))[:3]
                extra = sorted(set(g) - set(w))[:3]
                return f"figure {k}: missing {miss}, not expected {extra}"
            return f"figure {k}: got {g}, wanted {w}"
    return None


def check_csv(csv_path, want):
    got_events = read_csv(csv_path)
    fig = Figures()
    for ev in got_events:
        fig.add(ev)
    problems = []
    d = compare_figures(fig.result(), want["figures"])
    if d:
        problems.append(d)
    if "events" in want:
        exp = want["events"]
        for ev in exp:
            assert from_trace(ev) == ev["trace"], ev  # the predicate reads the CSV right
        g = Counter(signature(e) for e in got_events)
        w = Counter(signature(e) for e in exp)
        missing = [s for s in (signature(e) for e in exp) if (w - g)[s]]
        extra = [f"row {e['row']}: {signature(e)}" for e in got_events if (g - w)[signature(e)]]
        if missing:
            problems.append(f"{len(missing)} expected event(s) missing, first: {missing[0]}")
        if extra:
            problems.append(f"{len(extra)} event(s) not expected, first: {extra[0]}")
        if not missing and not extra:
            for dev in sorted({e["device"] for e in exp if e["trace"]}):
                gs = [signature(e) for e in got_events if e["device"] == dev and from_trace(e)]
                ws = [signature(e) for e in exp if e["device"] == dev and e["trace"]]
                i = next((i for i, (a, b) in enumerate(zip(gs, ws)) if a != b), None)
                if i is not None:
                    problems.append(f"device {dev}: trace event {i + 1} out of the trace's "
                                    f"order: got {gs[i]}, wanted {ws[i]}")
                    break
    if problems:
        fail(f"{csv_path}: " + "\n  ".join(problems))
    print(f"check_snapshot: {csv_path}: {len(got_events)} events as expected")


def check_leaks(leaks_path, want):
    p = want["planted"]
    with open(leaks_path) as f:
        report = json.load(f)
    leaks = report.get("leaks", [])
    step = [x for x in leaks if x.get("kind") == "step"]
    if len(step) != 1:
        fail(f"{leaks_path}: {len(step)} step leaks, wanted 1 (the planted tensor): "
             f"{[(x.get('ptr'), x.get('size'), x.get('alloc_step')) for x in step][:5]}")
    x = step[0]
    got = (x.get("ptr"), x.get("size"), x.get("alloc_step"), str(x.get("device")))
    exp = (f"0x{p['addr']:016x}", p["size"], p["step"], str(p["device"]))
    if got != exp:
        fail(f"{leaks_path}: step leak (ptr, size, step, device) {got}, wanted {exp}")
    if not any(y.get("kind") == "exit" and y.get("ptr") == exp[0] for y in leaks):
        fail(f"{leaks_path}: the planted tensor is not among the exit leaks")
    print(f"check_snapshot: {leaks_path}: the planted {p['size']} bytes found in step "
          f"{p['step']}")


def check_svg(svg_path, want):
    p = want["planted"]
    ev = next(e for e in want["events"] if e["kind"] == "MALLOC" and e["ptr"] == p["addr"])
    with open(svg_path, encoding="utf-8") as f:
        text = html.unescape(f.read())
    missing = [fr for fr in ev["py"] if fr not in text]
    if missing:
        fail(f"{svg_path}: Python frames of the planted tensor not drawn: {missing}")
    print(f"check_snapshot: {svg_path}: the planted tensor's {len(ev['py'])} Python frames drawn")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("csv", "leaks", "svg"):
        sys.exit(__doc__.split("\n\n")[1])
    with open(sys.argv[3]) as f:
        want = json.load(f)
    {"csv": check_csv, "leaks": check_leaks, "svg": check_svg}[sys.argv[1]](sys.argv[2], want)


if __name__ == "__main__":
    main()
