#!/usr/bin/env python3
"""Checks memscope-export's memory-over-time page against an independent reading of its inputs.

Usage: check_memory_html.py [--pool LIST] [--step N | --from T --to T] [--browser]
       [--screenshot PNG] PAGE.html INPUT.csv...

Static: the page is well-formed XML (and so parses as HTML the same way), loads nothing (no
element that loads, no src, href or on* attribute, no url() but to itself, no http: or @import
in its style and script), and against the dump CSV inputs read here with the rules of
formats/analyses.md (blocks paired in file order by allocation id, else pool and address; live
bytes per (input, process, device, pool) in (timestamp, ID) order; the pools counted: LIST, or
per input the pools it has blocks in, HAL left out beside a pool carved out of it; steps from
mstx "step start" ranges, SYSTEM STEP rows or ProfilerStep#N ops, the first kind a process has):
one legend row and one curve per track with its peak and the time of its peak, each curve's
hover values reaching exactly that peak and its path's highest point at the peak's height, the
peak marker's bytes, time and place, the step bands' number and positions (the peak's process's
steps, else the first process with steps), and the owners at the peak: by owner tag, else the op
the MALLOC names (its Name, not N/A), else the innermost op open on the MALLOC's thread, else the
innermost Python frame, else the innermost C frame, their bytes adding up to no more than the
live bytes at the peak and equal to the ones computed here. The profiler's samples (COUNTER
rows): one thinner curve and legend row per series of each track (memory_record's allocated,
reserved and active of a component, npu_mem's series, the modules of npu_module_mem ever above
0; at most 24, those shown at first first, then memory_record's, then the highest) named after
the file they come from, with its highest value and when, its last value, hover values reaching
that highest value; sums (PTA+GE), the DDR and HBM parts and the modules hidden at first, and
the whole process's and device's memory (APP, npu_mem) unless no other curve is drawn. The y
axis fits the curves shown at first; a curve drawing the same path as one drawn over it says
which; live bytes beside memory_record's allocated bytes of their pool get a note with both
peaks; a process not known is not named. PLAN rows have no time and count for nothing.
Times count from each input's first row of any kind and are written as memscope_seconds_text
(the x axis' ticks, the peak's label, the hover's time); inputs are named by the shortest ending
of their paths that tells them apart; the y axis leaves 5% above the peak.

--step N, --from T, --to T: the window the page was made with (memscope-export's): each process
cut to its own step N, or [T, T) seconds after its input's first row (Tns: a timestamp); the
curves start at their live bytes at the window's start, the peak, owners and bands are those
within it and the x axis runs over the window.

--browser: headless Chromium opens the page, moves the pointer over the peak's pixel and the
check reads the box it shows: the peak's time, and its curve's name and bytes
(MEMSCOPE_SKIP_BROWSER=1 skips this when Chromium is not installed). --screenshot PNG saves
what Chromium draws at 1400x900. Exit 0 when all holds, 1 with the first difference."""
import csv, html, json, os, re, shutil, subprocess, sys, tempfile
import xml.etree.ElementTree as ET
from check_svg import bytes_text  # memscope_bytes_text, one copy for both checkers

# the layout of lib/writers/memory_html.c
SVG_W, PLOT_X, PLOT_Y, PLOT_W, PLOT_H = 1200, 84, 44, 1092, 400
FRAMEWORK = {"PTA", "ATB", "MINDSPORE"}
IN_HAL = FRAMEWORK | {"PTA_WORKSPACE"}
POOLS = ["PTA", "PTA_WORKSPACE", "ATB", "MINDSPORE", "HAL", "HOST_PINNED", "HOST", "GE"]
UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def fail(msg):
    print(f"check_memory_html: {msg}")
    sys.exit(1)


def seconds_text(ns):
    """memscope_seconds_text of a time since the origin"""
    return f"{ns // 1000000000}.{ns % 1000000000 // 1000:06d} s"


def attrs(text):
    text = (text or "").strip()
    if not (text.startswith("{") and text.endswith("}")):
        return {}
    out = {}
    for part in text[1:-1].split(","):
        if ":" in part:
            k, v = part.split(":", 1)
            out.setdefault(k, v)
    return out


def top_frame(field):
    for f in (field or "").split("\n"):
        f = f[:-1] if f.endswith("\r") else f
        if f:
            return f
    return None


def c_frame_text(frame):
    """memscope_frame_text: module(symbol+0xoff) [0xaddr] -> "symbol (module)" """
    m = re.fullmatch(r"(.+?)\((.*)\)([ \[\]0-9a-fA-Fx]*)", frame)
    if not m or "(" not in frame:
        return frame
    mod, sym = m.group(1), m.group(2)
    mod = mod.rsplit("/", 1)[-1]
    off = re.search(r"\+0x[0-9a-fA-F]+$", sym)
    if off:
        name = sym[: off.start()]
    elif "+" in sym or not sym:
        return frame
    else:
        name = sym
    if not name:
        return mod + off.group()
    if name.startswith("_Z") and shutil.which("c++filt"):
        dem = subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip()
        if dem and dem != name:
            name = dem
    return f"{name} ({mod})"


SUBTYPES = ["POOL", "NPU_MEM", "MODULE"]  # the order of the page's sample tracks
SERIES = ["used", "total", "active"]
COMPONENT = {"PTA": "PTA", "GE": "GE", "MindSpore": "MINDSPORE", "WORKSPACE": "PTA_WORKSPACE"}
SOURCE = {"POOL": "memory_record", "NPU_MEM": "npu_mem", "MODULE": "npu_module_mem"}
WORD = {"used": "allocated", "total": "reserved", "active": "active"}


def read_inputs(paths, pools_arg, samples=None, span=None):
    """The live changes, op rows and step rows of every input, as this check reads them; the
    COUNTER rows' values into samples {(src, pid, dev, subtype, name): [(pos, {series: v})]}, and
    each process's first and last row into span {(src, pid): [first, last]}."""
    changes, ops, bounds, seen, row0 = [], [], [], {}, {}
    samples = {} if samples is None else samples
    span = {} if span is None else span
    for src, path in enumerate(paths):
        live, scale = {}, None
        with open(path, newline="", encoding="utf-8-sig", errors="surrogateescape") as f:
            for r in csv.DictReader(f):
                kind, sub = r["Event"], r["Event Type"]
                if kind == "PLAN":  # no time
                    continue
                pid = int(r["Process Id"]) if r["Process Id"] != "N/A" else 2**64 - 1
                tid = r["Thread Id"]
                ts = int(r.get("Timestamp(ns)") or r["Timestamp(us)"])
                if scale is None:  # the legacy layout's microseconds (formats/dump-csv.md)
                    scale = 1000 if "Timestamp(us)" in r or 10**14 <= ts < 10**17 else 1
                pos = (ts * scale, int(r["ID"]))
                row0[src] = min(row0.get(src, pos[0]), pos[0])
                sp = span.setdefault((src, pid), [pos[0], pos[0]])
                sp[0], sp[1] = min(sp[0], pos[0]), max(sp[1], pos[0])
                if kind == "COUNTER" and sub in SUBTYPES:
                    a = attrs(r["Attr"])
                    vals = {k: int(a[k]) for k in SERIES if re.fullmatch(r"-?\d+", a.get(k, ""))}
                    if vals:
                        samples.setdefault((src, pid, r["Device Id"], sub, r["Name"]), []).append(
                            (pos, vals))
                    continue
                if kind == "OP_LAUNCH" and sub in ("ATEN_START", "ATB_START", "ATEN_END", "ATB_END"):
                    ops.append((src, pid, pos, "B" if sub.endswith("START") else "E", tid,
                                r["Name"] or "[unnamed op]"))
                    continue
                if kind in ("MSTX", "SYSTEM"):
                    bounds.append((src, pid, pos, kind, sub, tid, r["Name"]))
                    continue
                if kind not in ("MALLOC", "FREE") or sub not in POOLS:
                    continue
                if pools_arg and sub not in pools_arg:
                    continue
                a = attrs(r["Attr"])
                key = (pid, a["allocation_id"]) if "allocation_id" in a else (pid, sub, r["Ptr"])
                dev = r["Device Id"]
                old = live.pop(key, None)
                if old:  # a FREE, or a MALLOC on a live key: the old block goes
                    changes.append([src, pid, pos, -old["size"], old["dev"], old["pool"],
                                    old, tid])
                if kind == "MALLOC" and int(a.get("size", "0") or 0) > 0:
                    size = int(a["size"])
                    b = {"size": size, "dev": dev, "pool": sub, "owner": a.get("owner") or None,
                         "named": r["Name"] if r["Name"] not in ("", "N/A") else None,
                         "py": top_frame(r["Call Stack(Python)"]),
                         "c": top_frame(r["Call Stack(C)"]), "tid": tid, "pos": pos,
                         "src": src, "pid": pid}
                    live[key] = b
                    seen.setdefault(src, set()).add(sub)
                    changes.append([src, pid, pos, size, dev, sub, b, tid])
    # per input: those asked for, else the pools it has blocks in, HAL left out beside its own
    counted = {src: set(pools_arg) if pools_arg else (s - {"HAL"} if s & IN_HAL else s)
               for src, s in seen.items()}
    return changes, ops, bounds, counted, row0


def innermost_ops(changes, ops):
    """The innermost op open on each MALLOC's thread when it ran (an end closes the innermost
    open op of its name and those inside it; ops past 64 deep are not owners)."""
    rows = [(c[0], c[1], c[7], c[2], 0, c) for c in changes if c[3] > 0]
    rows += [(o[0], o[1], o[4], o[2], 1, o) for o in ops]
    rows.sort(key=lambda r: (r[0], r[1], r[2], r[3], -r[4]))
    stacks = {}
    for src, pid, tid, pos, is_op, x in rows:
        st = stacks.setdefault((src, pid, tid), [])
        if is_op and x[3] == "B":
            st.append(x[5])
        elif is_op:
            vis = st[:64]
            for k in range(len(vis) - 1, -1, -1):
                if vis[k] == x[5]:
                    del st[k:]
                    break
        elif st:
            x[6].setdefault("op", st[:64][-1])


def shown(text):
    """A name as the page writes it: bytes not UTF-8 and U+FFFE/U+FFFF as '?', control
    characters as blanks."""
    return "".join("?" if "\udc80" <= ch <= "\udcff" or ch in "\ufffe\uffff" else
                   " " if ch < " " else ch for ch in text)


def owner_of(b):
    if b["owner"]:
        return b["owner"], "owner tag"
    if b["named"]:  # the op the MALLOC names (the Ascend profiler's operator_memory Name)
        return b["named"], "op"
    if b.get("op"):
        return b["op"], "op"
    if b["py"]:
        return b["py"], "Python frame"
    if b["c"]:
        return c_frame_text(b["c"]), "C frame"
    return f"[{b['pool']}, no owner, op or stack]", "-"


U64 = 2**64 - 1


def proc_window(win, steps, system, row0, src, pid):
    """[lo, hi] of process (src, pid) by memscope_timeline_window's rules; None: no step N."""
    if "step" in win:
        spans = steps.get((src, pid), [])
        # the step numbered N (ProfilerStep numbers are the profiler's)
        n = next((i for i, sp in enumerate(spans, 1) if sp[2] == win["step"]), None)
        if n is None:
            return None
        start, stop, _ = spans[n - 1]
        if stop is None:
            if (src, pid) in system:
                return None  # the step still running has no span
            stop = spans[n][0] - 1 if n < len(spans) else U64
        return start, stop
    lo, hi = 0, U64
    if "from" in win:
        lo = win["from"][0] if win["from"][1] else row0[src] + win["from"][0]
    if "to" in win:
        hi = (win["to"][0] if win["to"][1] else row0[src] + win["to"][0]) - 1
    return lo, hi


def track_order(k):
    return (k[0], k[1], int(k[2]) if k[2].lstrip("-").isdigit() else -1, POOLS.index(k[3]))


def oracle(paths, pools_arg, win):
    changes, ops, bounds, counted, row0 = read_inputs(paths, pools_arg)
    innermost_ops(changes, ops)
    steps, system = steps_oracle(bounds, ops)
    # memscope_timeline's order: (input, process, time, ID), a FREE before a MALLOC of one row
    changes.sort(key=lambda c: (c[0], c[1], c[2], c[3]))
    tracks, best, peak, proc_end, proc_first = {}, 0, None, {}, {}
    for c in changes + ops:
        p = (c[0], c[1])
        proc_end[p] = max(proc_end.get(p, 0), c[2][0])
        proc_first[p] = min(proc_first.get(p, U64), c[2][0])
    procs = {}
    for p in sorted(proc_end):
        w = proc_window(win, steps, system, row0, *p) if win else (0, U64)
        if w and proc_first[p] <= w[1] and proc_end[p] >= w[0]:
            procs[p] = w
    by_proc = {}
    for i, c in enumerate(changes):
        if c[5] in counted.get(c[0], ()):
            by_proc.setdefault((c[0], c[1]), []).append(i)
    for p, w in procs.items():
        lo, hi = w
        frm = max(lo, row0[p[0]])
        cur, last, mine = {}, {}, by_proc.get(p, [])
        for i in mine:
            k = (p[0], p[1], changes[i][4], changes[i][5])
            cur.setdefault(k, 0)
            if changes[i][2][0] < lo:
                cur[k] += changes[i][3]
                last[k] = i
        # every track of the process enters at the window's start with its live bytes then
        for k in sorted(cur, key=track_order):
            tracks[k] = {"peak": max(cur[k], 0), "peak_ts": frm if cur[k] > 0 else None,
                         "points": [], "first": frm if win else None, "start": cur[k],
                         "end": min(hi, proc_end[p]), "proc_end": proc_end[p]}
            if cur[k] > best:
                best, peak = cur[k], (k, last[k])
        for i in mine:
            src, pid, pos, d, dev, pool, b, tid = changes[i]
            if not lo <= pos[0] <= hi:
                continue
            k = (src, pid, dev, pool)
            t = tracks[k]
            cur[k] += d
            t["points"].append((pos[0], cur[k]))
            if t["first"] is None:
                t["first"] = pos[0]
            if cur[k] > t["peak"]:
                t["peak"], t["peak_ts"] = cur[k], pos[0]
            if cur[k] > best:
                best, peak = cur[k], (k, i)
    tracks = {k: t for k, t in tracks.items() if t["points"] or t["start"] > 0}
    owners = {}
    if peak:
        k, i = peak
        for src, pid, pos, d, dev, pool, b, tid in changes[: i + 1]:
            if (src, pid, dev, pool) == k:
                name, by = owner_of(b)
                owners[(shown(name), by)] = owners.get((shown(name), by), 0) + d
    owners = {n: v for n, v in owners.items() if v > 0}
    return tracks, peak, best, owners, steps, procs, row0


HIDE_TOTAL, HIDE_ALWAYS = 1, 2


def hide_level(sub, name):
    """Hidden at first: sums (PTA+GE), the modules, npu_mem's DDR and HBM parts always; the
    memory of the whole process or device (memory_record's APP, npu_mem's other series) when
    another curve is shown."""
    if (sub == "POOL" and "+" in name) or sub == "MODULE" or \
            (sub == "NPU_MEM" and name[-4:] in ("/DDR", "/HBM")):
        return HIDE_ALWAYS
    if (sub == "POOL" and name == "APP") or sub == "NPU_MEM":
        return HIDE_TOTAL
    return 0


def sample_oracle(paths, win, steps, system, row0, n_live):
    """The page's curves of samples: {(track, series): {max, max_ts, first, last_v, end,
    proc_end, points, hidden}} of the series drawn (in the page's order) and how many are not;
    n_live curves of live bytes are drawn beside them."""
    samples, span = {}, {}
    read_inputs(paths, None, samples, span)
    curves, ranked = {}, []
    order = sorted(samples, key=lambda k: (k[0], k[1], int(k[2]) if k[2].lstrip("-").isdigit()
                                           else -1, SUBTYPES.index(k[3]),
                                           k[4].encode("utf-8", "surrogateescape")))
    for k in order:
        src, pid = k[0], k[1]
        w = proc_window(win, steps, system, row0, src, pid) if win else (0, U64)
        first, last = span[(src, pid)]
        if w is None or first > w[1] or last < w[0]:
            continue
        lo, hi = w
        rows = sorted(samples[k], key=lambda x: x[0][0])  # stable: the file's order at a time
        for ser in SERIES:
            pts = [(p[0], v[ser]) for p, v in rows if ser in v]
            if not pts:
                continue
            before = [v for t, v in pts if t < lo]
            pts = ([(lo, before[-1])] if before else []) + [(t, v) for t, v in pts if lo <= t <= hi]
            if not pts:
                continue
            top = max(v for _, v in pts)
            c = {"max": top, "max_ts": next(t for t, v in pts if v == top), "first": pts[0][0],
                 "one": k[3] == "NPU_MEM" and all(set(v) == {"used"} for _, v in rows),
                 "last_v": pts[-1][1], "points": pts, "end": min(hi, last), "proc_end": last,
                 "hide": hide_level(k[3], k[4])}
            curves[(k, ser)] = c
            if k[3] != "MODULE" or top > 0:
                # those shown at first first, then memory_record's, npu_mem's, the modules'
                ranked.append((c["hide"], SUBTYPES.index(k[3]), -top, order.index(k),
                               SERIES.index(ser), (k, ser)))
    ranked.sort()
    drawn = sorted((x[-1] for x in ranked[:24]), key=lambda c: (order.index(c[0]),
                                                                SERIES.index(c[1])))
    # nothing else shown: the whole process's and device's memory is
    alone = not n_live and all(curves[c]["hide"] for c in drawn)
    for c in drawn:
        curves[c]["hidden"] = curves[c]["hide"] == HIDE_ALWAYS or \
            (curves[c]["hide"] == HIDE_TOTAL and not alone)
    return [(c, curves[c]) for c in drawn], len(curves) - len(drawn), curves


def steps_oracle(bounds, ops):
    """(src, pid) -> [(start_ts, end_ts or None, number)], formats/analyses.md "Steps"."""
    procs = {}
    rows = bounds + [(src, pid, pos, "OP", be, tid, name) for src, pid, pos, be, tid, name in ops]
    for src, pid, pos, kind, sub, tid, name in sorted(rows, key=lambda b: (b[0], b[1], b[2])):
        p = procs.setdefault((src, pid), {"source": None, "steps": [], "open": None})
        if kind == "OP":  # ProfilerStep#N ops: steps numbered N, going up
            m = re.fullmatch(r"ProfilerStep#(\d+)", name)
            if not m or p["source"] not in (None, "PROF"):
                continue
            if sub == "B":
                if int(m[1]) >= 2**63 or (p["steps"] and int(m[1]) <= p["steps"][-1][2]):
                    continue
                p["source"] = "PROF"
                p["steps"].append([pos, None, int(m[1])])
                p["open"] = [tid, name]
            elif p["open"] and p["open"] == [tid, name]:
                p["steps"][-1][1] = pos
                p["open"] = None
            continue
        if kind == "MSTX" and sub == "Range_start" and name.strip('"') == "step start":
            if p["source"] == "SYSTEM":
                continue
            p["source"] = "MSTX"
            p["steps"].append([pos, None, len(p["steps"]) + 1])
            p["open"] = [tid, 0]
        elif kind == "MSTX" and sub == "Range_start":
            if p["open"] and p["open"][0] == tid:
                p["open"][1] += 1
        elif kind == "MSTX" and sub == "Range_end":
            if p["open"] and p["open"][0] == tid:
                if p["open"][1]:
                    p["open"][1] -= 1
                else:
                    p["steps"][-1][1] = pos
                    p["open"] = None
        elif kind == "SYSTEM" and sub == "STEP":
            if p["source"] == "MSTX":
                continue
            p["source"] = "SYSTEM"
            if not p["steps"]:
                p["steps"].append([(0, 0), None, 1])
            p["steps"][-1][1] = pos
            # the next step starts just after the STEP row that ended this one
            p["steps"].append([(pos[0] + 1,) + tuple(pos[1:]), None, len(p["steps"]) + 1])
    return ({k: [(s[0][0], s[1][0] if s[1] else None, s[2]) for s in v["steps"]]
             for k, v in procs.items() if v["steps"]},
            {k for k, v in procs.items() if v["source"] == "SYSTEM"})


def text_of(e):
    return "".join(e.itertext())


def names_of(inputs):
    """The shortest endings of the paths' '/'-separated parts that tell the inputs apart."""
    parts = [("standard input" if p == "-" else p).split("/") for p in inputs]
    n = [1] * len(inputs)
    while True:
        ends = ["/".join(q[-k:]) for q, k in zip(parts, n)]
        dup = [i for i, e in enumerate(ends) if ends.count(e) > 1 and n[i] < len(parts[i])]
        if not dup:
            break
        for i in dup:
            n[i] += 1
    return [e if ends.count(e) == 1 else f"{e} (input {i})" for i, e in enumerate(ends)]


def check_static(page, inputs, pools_arg, win):
    raw = open(page, encoding="utf-8").read()
    try:
        root = ET.fromstring(raw.replace("<!DOCTYPE html>", "", 1))
    except ET.ParseError as e:
        fail(f"{page}: not well-formed: {e}")
    # nothing loaded: no element that loads, no attribute naming another file or address, no
    # style or script reaching out (names in the text may say anything: they are text)
    for e in root.iter():
        tag = e.tag.split("}")[-1]
        if tag in ("link", "iframe", "img", "object", "embed", "image", "use", "frame"):
            fail(f"{page}: a <{tag}> element")
        for k, v in e.attrib.items():
            if k.split("}")[-1] in ("src", "href", "action", "srcset", "background") or \
                    k.startswith("on") or \
                    re.search(r"url\((?!#)|https?:|javascript:", v, re.I):
                fail(f"{page}: <{tag} {k}={v!r}>")
        if tag in ("style", "script") and re.search(
                r"@import|url\((?!#)|https?:|fetch\(|XMLHttpRequest|import\(", e.text or "", re.I):
            fail(f"{page}: its {tag} reaches out")
    scripts = [e for e in root.iter("script")]
    if root.tag != "html" or len(scripts) != 2 or scripts[0].get("type") != "application/json":
        fail(f"{page}: root {root.tag}, {len(scripts)} scripts")
    data = json.loads(root.find(".//script[@id='memscope-data']").text)
    tracks, peak, best, owners, steps, procs, row0 = oracle(inputs, pools_arg, win)
    sc, sc_more, every = sample_oracle(inputs, win,
                                       *steps_oracle(*read_inputs(inputs, pools_arg)[2:0:-1]), row0,
                                       min(len(tracks), 32))
    n_inputs, names = len(inputs), names_of(inputs)
    # a process not known (a profiler's output without a timeline) is not named
    proc_text = lambda pid: "" if pid == U64 else f", process {pid}"

    def sample_label(k, ser, one):
        src, pid, dev, sub, name = k
        s = f"{name}{'' if one else ' ' + WORD[ser]} ({SOURCE[sub]}), device {dev}{proc_text(pid)}"
        return s + (f", {names[src]}" if n_inputs > 1 else "")

    def label(k):
        src, pid, dev, pool = k
        s = f"{pool}, device {dev}{proc_text(pid)}"
        return s + (f", {names[src]}" if n_inputs > 1 else "")

    # every input's times count from its first row; the axis runs over the tracks' times (the
    # window's), from its start to its end
    t0 = lambda src: row0[src]
    ends = [(k[0], t["first"], t["end"], t["proc_end"]) for k, t in tracks.items()] + \
        [(k[0], c["first"], c["end"], c["proc_end"]) for (k, _), c in sc]
    if ends:
        frm = min(first - t0(src) for src, first, _, _ in ends) if win else 0
        to = max((end + 1 if win and end < pend else end) - t0(src) for src, _, end, pend in ends)
        span = (to - frm) or 1
    else:
        frm, span = 0, 1
    if data["span_ns"] != span or data["from_ns"] != frm:
        fail(f"axis from {data['from_ns']} over {data['span_ns']} ns, expected {frm} over {span}")
    label_x = [t.text for t in root.iter("text") if t.get("class") == "label" and
               t.text.startswith("seconds")][-1]
    if f"seconds after {'each' if n_inputs > 1 else 'the'} input's first row" not in label_x:
        fail(f"x axis {label_x!r}")
    # the x axis' ticks: times as memscope_seconds_text, at their place
    for t in root.iter("text"):
        if t.get("class") in ("xtick", "xtick last"):
            v = int(t.get("data-ns"))
            if t.text != seconds_text(v) or not frm <= v <= frm + span or \
                    abs(float(t.get("x")) - (PLOT_X + (v - frm) / span * PLOT_W)) > 0.06:
                fail(f"x tick {t.text!r} at {t.get('x')} for {v} ns")
    title = root.find(".//title").text
    if not all(f" {n}" in title for n in names[:3]):
        fail(f"title {title!r} does not name the inputs {names[:3]}")
    order = sorted(tracks, key=lambda k: (k[0], k[1], int(k[2]) if k[2].isdigit() else -1,
                                          POOLS.index(k[3])))
    drawn = sorted(order, key=lambda k: (k != (peak[0] if peak else None),
                                         -tracks[k]["peak"], order.index(k)))[:32]
    drawn = [k for k in order if k in drawn]
    all_rows = root.findall(".//table[@id='legend']/tbody/tr")
    rows = [r for r in all_rows if "sample" not in r.get("class").split()]
    paths = root.findall(".//g[@id='curves']/path")
    if len(rows) != len(drawn) or len(paths) != len(drawn) or \
            len(data["curves"]) != len(drawn) + len(sc):
        fail(f"{len(rows)} legend rows, {len(paths)} curves, {len(drawn)} tracks expected")
    more = root.find(".//p[@id='more-tracks']")
    if (more is not None) != (len(tracks) > len(drawn)) or (
            more is not None and int(more.get("data-n")) != len(tracks) - len(drawn)):
        fail("the note of the tracks not drawn is wrong")
    # the y axis: its ticks' values and heights
    ticks = [(t, float(t.get("y")) - 4) for t in root.iter("text") if t.get("class") == "ytick"]
    top_text, top_y = ticks[-1]
    val, unit = top_text.text.split()
    top = float(val) * 1024 ** UNITS.index(unit)
    if abs(top_y - PLOT_Y) > 0.06 or abs(ticks[0][1] - (PLOT_Y + PLOT_H)) > 0.06:
        fail(f"the y axis runs from {ticks[0][1]} to {top_y}")
    # the axis of the curves shown at first (of every curve when those have no byte); a higher
    # curve hidden at first is drawn above it, for the script to scale when it is shown
    highest = max([tracks[k]["peak"] for k in drawn] + [c["max"] for _, c in sc if not c["hidden"]]
                  + [0])
    if highest <= 0:
        highest = max([c["max"] for _, c in sc] + [0])
    if highest * 1.05 > top * (1 + 1e-9):
        fail(f"the y axis ends at {top_text.text}, without 5% above the peak {highest}")
    if data["ymax"] != round(top):
        fail(f"the script's axis {data['ymax']}, the page's {top_text.text}")
    y_of = lambda v: PLOT_Y + PLOT_H - max(v, 0) / top * PLOT_H
    col_of = lambda src, ts: min(PLOT_W - 1, int((ts - t0(src) - frm) / span * PLOT_W)) \
        if ts > t0(src) + frm else 0
    # curves drawing the same path: the one drawn under another (samples first, then the live
    # bytes, each in the legend's order) says which hides it
    curves = [("live", k, tracks[k]["start"], tracks[k]["first"], tracks[k]["end"],
               tracks[k]["points"]) for k in drawn] + \
        [("sample", (k, ser, c["one"]), c["points"][0][1], c["first"], c["end"], c["points"])
         for (k, ser), c in sc]

    def path_of(c):
        kind, k, start, first, end, pts = c
        src = k[0] if kind == "live" else k[0][0]
        cols = {}
        for ts, v in pts:
            x = cols.setdefault(col_of(src, ts), [v, v, v])
            x[0], x[1], x[2] = min(x[0], v), max(x[1], v), v
        return start, col_of(src, first), col_of(src, end), sorted(cols.items())

    def place(c):
        k = c[1] if c[0] == "live" else c[1][0]
        return k[0], k[1], k[2]

    rank = lambda i: i + len(sc) if i < len(drawn) else i - len(drawn)
    sigs = [path_of(c) for c in curves]
    notes = []
    for a, c in enumerate(curves):
        over = [b for b in range(len(curves)) if rank(b) > rank(a) and sigs[b] == sigs[a]]
        if not over:
            notes.append("")
            continue
        o = curves[max(over, key=rank)]
        (s1, p1, d1), (s2, p2, d2) = place(c), place(o)
        same = c[0] == o[0] and (c[1][3] == o[1][3] if c[0] == "live" else
                                 (c[1][0][3:], c[1][1]) == (o[1][0][3:], o[1][1]))
        note = " (drawn under the same curve of "
        if same and d1 == d2 and (s1 != s2 or p2 != U64):
            notes.append(note + (names[s2] if s1 != s2 else f"process {p2}") + ")")
            continue
        if o[0] == "live":
            note += o[1][3]
        else:
            (k2, ser2, one2) = o[1]
            note += f"{k2[4]}{'' if one2 else ' ' + WORD[ser2]} ({SOURCE[k2[3]]})"
        note += f", device {d2}" if d1 != d2 else ""
        note += f", process {p2}" if p1 != p2 and p2 != U64 else ""
        notes.append(note + (f" of {names[s2]}" if s1 != s2 else "") + ")")
    for k, row, path, curve in zip(drawn, rows, paths, data["curves"]):
        t = tracks[k]
        name = text_of(row.find("td[@class='name']"))
        if name != label(k) + notes[drawn.index(k)]:
            fail(f"legend row {name!r}, expected {label(k) + notes[drawn.index(k)]!r}")
        if int(row.get("data-peak")) != t["peak"] or (
                t["peak"] and int(row.get("data-peak-ts-ns")) != t["peak_ts"]):
            fail(f"{name}: peak {row.get('data-peak')} at {row.get('data-peak-ts-ns')}, "
                 f"expected {t['peak']} at {t['peak_ts']}")
        cells = [text_of(c) for c in row.findall("td[@class='num']")]
        end_v = t["points"][-1][1] if t["points"] else t["start"]
        if cells[0] != bytes_text(t["peak"]) or cells[2] != bytes_text(max(end_v, 0)) or \
                (t["peak"] and cells[1] != seconds_text(t["peak_ts"] - t0(k[0]))):
            fail(f"{name}: legend says {cells}")
        vals = [v for v in curve["values"] if v is not None]
        if win and curve["values"][col_of(k[0], t["first"])] < t["start"]:
            fail(f"{name}: starts below its live bytes {t['start']} at the window's start")
        if max(vals) != t["peak"]:
            fail(f"{name}: the hover values reach {max(vals)}, its peak is {t['peak']}")
        # every point's value is in its column's hover value or below it
        for ts, v in t["points"]:
            c = col_of(k[0], ts)
            if curve["values"][c] is None or curve["values"][c] < v:
                fail(f"{name}: the point {v} at {ts} is above its column's value")
        if row.get("data-track") != path.get("data-track"):
            fail(f"{name}: legend and curve of different tracks")
        ys = [float(y) for y in re.findall(r"[MV](?:[-\d.]+ )?([-\d.]+)", path.get("d"))]
        if abs(min(ys) - round(y_of(t["peak"]), 1)) > 0.06:
            fail(f"{name}: the curve's highest point is at y {min(ys)}, its peak at "
                 f"{y_of(t['peak']):.1f}")
    # the curves of samples: after the live bytes' in the legend and the data, behind them
    s_rows = [r for r in all_rows if "sample" in r.get("class").split()]
    s_paths = root.findall(".//g[@id='samples']/path")
    if all_rows != rows + s_rows or len(s_rows) != len(sc) or len(s_paths) != len(sc):
        fail(f"{len(s_rows)} legend rows and {len(s_paths)} curves of samples, {len(sc)} expected")
    more = root.find(".//p[@id='more-samples']")
    if (more is not None) != (sc_more > 0) or (more is not None and int(more.get("data-n")) != sc_more):
        fail(f"the note of the samples not drawn is wrong ({sc_more} not drawn)")
    for i, (((k, ser), c), row, path, curve) in enumerate(
            zip(sc, s_rows, s_paths, data["curves"][len(drawn):])):
        name = text_of(row.find("td[@class='name']"))
        want = sample_label(k, ser, c["one"]) + notes[len(drawn) + i]
        if name != want:
            fail(f"legend row {name!r}, expected {want!r}")
        if int(row.get("data-peak")) != c["max"] or int(row.get("data-peak-ts-ns")) != c["max_ts"]:
            fail(f"{name}: highest {row.get('data-peak')} at {row.get('data-peak-ts-ns')}, "
                 f"expected {c['max']} at {c['max_ts']}")
        cells = [text_of(x) for x in row.findall("td[@class='num']")]
        if cells != [bytes_text(max(c["max"], 0)), seconds_text(c["max_ts"] - t0(k[0])),
                     bytes_text(max(c["last_v"], 0))]:
            fail(f"{name}: legend says {cells}")
        if ("off" in row.get("class").split()) != c["hidden"] or \
                ("off" in path.get("class").split()) != c["hidden"]:
            fail(f"{name}: {'shown' if c['hidden'] else 'hidden'} at first, expected "
                 f"{'hidden' if c['hidden'] else 'shown'}")
        vals = [v for v in curve["values"] if v is not None]
        if max(vals) != c["max"]:
            fail(f"{name}: the hover values reach {max(vals)}, its highest sample is {c['max']}")
        for ts, v in c["points"]:
            x = col_of(k[0], ts)
            if curve["values"][x] is None or curve["values"][x] < v:
                fail(f"{name}: the sample {v} at {ts} is above its column's value")
        ys = [float(y) for y in re.findall(r"[MV](?:[-\d.]+ )?([-\d.]+)", path.get("d"))]
        if abs(min(ys) - round(y_of(c["max"]), 1)) > 0.06:
            fail(f"{name}: the curve's highest point is at y {min(ys)}, its highest sample at "
                 f"{y_of(c['max']):.1f}")
    # live bytes beside memory_record's allocated bytes of their pool: a note says the live
    # bytes count only the blocks allocated in the input, with both peaks (the first three)
    beside = []
    for k in drawn:
        for (sk, ser), c in every.items():
            if sk[:3] == k[:3] and sk[3] == "POOL" and ser == "used" and \
                    COMPONENT.get(sk[4]) == k[3]:
                beside.append((k, c))
                break
    note = root.find(".//p[@id='live-start']")
    if (note is not None) != bool(beside):
        fail(f"the note on live bytes and memory_record's is {'there' if note is not None else 'missing'}")
    devices = len({k[2] for k in drawn}) > 1
    for k, c in beside[:3]:
        want = f"{k[3]}{' on device ' + k[2] if devices else ''}" + \
            (f" of {names[k[0]]}" if n_inputs > 1 else "") + \
            f": live peak {bytes_text(tracks[k]['peak'])}, allocated peak {bytes_text(max(c['max'], 0))}"
        if not text_of(note).startswith("Live bytes count only the blocks allocated in the input") \
                or want not in text_of(note):
            fail(f"the note on live bytes {text_of(note)!r} does not say {want!r}")
    # the peak marker
    mark = root.find(".//g[@id='peak']")
    if not peak:
        if mark is not None:
            fail("a peak marker without a peak")
    else:
        k = peak[0]
        ts = tracks[k]["peak_ts"]
        if int(mark.get("data-bytes")) != best or int(mark.get("data-ts-ns")) != ts:
            fail(f"peak marker {mark.get('data-bytes')} at {mark.get('data-ts-ns')}, "
                 f"expected {best} at {ts}")
        want = f"{'live ' if sc else ''}peak {bytes_text(best)} at {seconds_text(ts - t0(k[0]))}"
        if text_of(mark.find("text")) != want:
            fail(f"peak label {text_of(mark.find('text'))!r}, expected {want!r}")
        dot = mark.find("circle")
        if abs(float(dot.get("cx")) - (PLOT_X + col_of(k[0], ts) + 0.5)) > 0.06 or \
                abs(float(dot.get("cy")) - round(y_of(best), 1)) > 0.06:
            fail(f"peak dot at {dot.get('cx')}, {dot.get('cy')}")
    # the steps: those of the peak's process, else the first process with steps
    g = root.find(".//g[@id='steps']")
    proc = (peak[0][0], peak[0][1]) if peak and (peak[0][0], peak[0][1]) in steps else \
        (min(steps) if steps else None)
    want = steps.get(proc, [])
    if proc and proc not in procs:
        want = []
    # each step to its end, else to just before the next, else to the axis' end; clipped to
    # the window of its process (a step that only touches it is not drawn)
    ends = []
    for n, (start, stop, number) in enumerate(want, 1):
        if stop is None:
            stop = want[n][0] if n < len(want) else t0(proc[0]) + frm + span
        ends.append((number, start, stop))
    if proc and proc in procs:
        tk = [t for k, t in tracks.items() if k[:2] == proc]
        lo, hi = (tk[0]["first"], tk[0]["end"]) if tk else \
            (t0(proc[0]) + frm, t0(proc[0]) + frm + span)
        ends = [(n, max(a, lo), min(b, hi)) for n, a, b in ends
                if not (a > hi or b < lo or ((a < lo or b > hi) and (b == lo or a == hi)))]
    want = ends
    bands = g.findall("rect")
    if int(g.get("data-count")) != len(want) or (len(want) <= 1000 and len(bands) != len(want)):
        fail(f"{len(bands)} step bands (count {g.get('data-count')}), {len(want)} expected")
    if proc and (int(g.get("data-src")), int(g.get("data-pid"))) != proc:
        fail(f"steps of {g.get('data-src')}/{g.get('data-pid')}, expected {proc}")
    x_of = lambda ts: PLOT_X + min(max(ts - t0(proc[0]) - frm, 0) / span * PLOT_W, PLOT_W)
    for band, (n, start, stop) in zip(bands, want):
        if int(band.get("data-step")) != n or int(band.get("data-start-ns")) != start or \
                int(band.get("data-end-ns")) != stop:
            fail(f"band {band.attrib}, expected step {n} from {start} to {stop}")
        if abs(float(band.get("x")) - x_of(start)) > 0.006 or \
                abs(float(band.get("width")) - (x_of(stop) - x_of(start))) > 0.011:
            fail(f"step {n}: band at {band.get('x')}+{band.get('width')}, expected "
                 f"{x_of(start):.2f}+{x_of(stop) - x_of(start):.2f}")
    # the owners at the peak
    table = root.find(".//table[@id='owners']")
    if not peak:
        if table is not None:
            fail("owners without a peak")
        return data, None
    got = [(text_of(r.find("td[@class='name']")), text_of(r.findall("td")[2]),
            int(r.get("data-bytes"))) for r in table.findall("tbody/tr[@class='owner']")]
    rest = table.find("tbody/tr[@class='rest']")
    total = sum(b for *_, b in got) + (int(rest.get("data-bytes")) if rest is not None else 0)
    if total > best or (sum(owners.values()) == best and total != best):
        fail(f"the owners hold {total} bytes, {best} live at the peak")
    want = sorted(((n, by, b) for (n, by), b in owners.items()), key=lambda o: -o[2])
    if sorted(got, key=lambda o: (-o[2], o[0])) != sorted(want, key=lambda o: (-o[2], o[0]))[:20] \
            or int(table.get("data-n")) != len(owners):
        fail(f"owners {got[:5]}..., expected {want[:5]}...")
    return data, (label(peak[0]), best, drawn.index(peak[0]),
                  col_of(peak[0][0], tracks[peak[0]]["peak_ts"]))


HARNESS = """<!DOCTYPE html>
<html><body><pre id="result">not run</pre>
<iframe id="f" width="1300" height="900" src="page.html"></iframe>
<script>
"use strict";
var col = %d, out = document.getElementById("result"), f = document.getElementById("f");
f.onload = function () {
	try {
		var doc = f.contentDocument, win = f.contentWindow, svg = doc.getElementById("plot");
		var r = svg.getBoundingClientRect(), tip = doc.getElementById("tip"), res = {};
		var x = r.left + (%d + col + 0.5) * r.width / %d, y = r.top + r.height / 2;
		svg.dispatchEvent(new win.MouseEvent("mousemove", { clientX: x, clientY: y, bubbles: true }));
		res.hidden = tip.hidden;
		res.rows = Array.prototype.map.call(tip.querySelectorAll(".row"), function (e) {
			return [e.querySelector(".n").textContent, e.querySelector(".v").textContent];
		});
		res.head = tip.querySelector(".t").textContent;
		res.cursor = doc.getElementById("cursor").getAttribute("x1");
		svg.dispatchEvent(new win.MouseEvent("mouseleave", { bubbles: false }));
		res.hidden_after = tip.hidden;
		doc.querySelector("#legend tr.entry").dispatchEvent(new win.MouseEvent("click", { bubbles: true }));
		res.off = doc.querySelector("#curves path").getAttribute("class");
		out.textContent = JSON.stringify(res);
	} catch (e) {
		out.textContent = "error: " + e;
	}
};
</script></body></html>
"""


def chromium():
    browser = shutil.which("chromium")
    if not browser and os.environ.get("MEMSCOPE_SKIP_BROWSER") != "1":
        fail("chromium not found (tests/install-deps.sh installs it; MEMSCOPE_SKIP_BROWSER=1 skips)")
    return browser


def check_hover(page, data, at):
    browser = chromium()
    if not browser:
        print("check_memory_html: chromium not found, hover not checked (MEMSCOPE_SKIP_BROWSER=1)")
        return
    name, best, idx, col = at
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(page, os.path.join(tmp, "page.html"))
        open(os.path.join(tmp, "h.html"), "w").write(HARNESS % (col, PLOT_X, SVG_W))
        p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                            "--allow-file-access-from-files", f"--user-data-dir={tmp}/profile",
                            "--virtual-time-budget=5000", "--dump-dom", f"file://{tmp}/h.html"],
                           capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="result">(.*?)</pre>', p.stdout, re.S)
    text = html.unescape(m.group(1)) if m else p.stdout[-500:] + p.stderr[-500:]
    if not text.startswith("{"):
        fail(f"the harness did not run: {text}")
    res = json.loads(text)
    head = seconds_text(data["from_ns"] + col * data["span_ns"] // data["cols"])
    if res["hidden"] or not res["head"].startswith(head):
        fail(f"hover box {'hidden' if res['hidden'] else res['head']!r}, expected {head!r}")
    # the highest of the live bytes' rows (the profiler's samples may be higher)
    live = [r for r in res["rows"] if not re.search(r" \((memory_record|npu_mem|npu_module_mem)\), ",
                                                     r[0])]
    if [name, bytes_text(best)] not in res["rows"] or live[0][1] != bytes_text(best):
        fail(f"hover rows {res['rows']}, expected {name!r} with {bytes_text(best)} first")
    if abs(float(res["cursor"]) - (PLOT_X + col + 0.5)) > 0.01:
        fail(f"cursor at {res['cursor']}")
    if not res["hidden_after"] or res["off"] != "curve off":
        fail(f"the box stays after the pointer leaves, or a legend click did not hide: {res}")


def screenshot(page, png):
    browser = chromium()
    if not browser:
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        f"--user-data-dir={tmp}/profile", "--hide-scrollbars",
                        f"--screenshot={png}", "--window-size=1400,900",
                        "file://" + os.path.abspath(page)], capture_output=True, timeout=120)
    if not os.path.exists(png):
        fail(f"no screenshot {png}")


def main():
    args, pools, browser, png, win = sys.argv[1:], None, False, None, {}
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--pool":
            pools = {p.upper() for p in args.pop(0).split(",")}
        elif opt == "--browser":
            browser = True
        elif opt == "--screenshot":
            png = args.pop(0)
        elif opt == "--step":
            win["step"] = int(args.pop(0))
        elif opt in ("--from", "--to"):
            t = args.pop(0)
            if t.endswith("ns"):
                win[opt[2:]] = (int(t[:-2]), True)
            else:
                w, _, f = t.partition(".")
                win[opt[2:]] = (int(w) * 10**9 + int((f + "0" * 9)[:9]), False)
        else:
            print(__doc__)
            sys.exit(2)
    if len(args) < 2:
        print(__doc__)
        sys.exit(2)
    data, at = check_static(args[0], args[1:], pools, win)
    if browser and at:
        check_hover(args[0], data, at)
    if png:
        screenshot(args[0], png)


if __name__ == "__main__":
    main()
