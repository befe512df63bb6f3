#!/usr/bin/env python3
"""Checks memscope-export's memory-over-time page against an independent reading of its inputs.

Usage: check_memory_html.py [--pool LIST] [--browser] [--screenshot PNG] PAGE.html INPUT.csv...

Static: the page is well-formed XML (and so parses as HTML the same way), loads nothing (no
element that loads, no src, href or on* attribute, no url() but to itself, no http: or @import
in its style and script), and against the dump CSV inputs read here with the rules of
formats/analyses.md (blocks paired in file order by allocation id, else pool and address; live
bytes per (input, process, device, pool) in (timestamp, ID) order; the pools counted: LIST, or
per input the pools it has blocks in, HAL left out beside a pool carved out of it; steps from
mstx "step start" ranges or SYSTEM STEP rows, the first kind a process has): one legend row and one
curve per track with its peak and the time of its peak, each curve's hover values reaching
exactly that peak and its path's highest point at the peak's height, the peak marker's bytes,
time and place, the step bands' number and positions (the peak's process's steps, else the
first process with steps), and the owners at the peak: by owner tag, else the innermost op open
on the MALLOC's thread, else the innermost Python frame, else the innermost C frame, their bytes
adding up to no more than the live bytes at the peak and equal to the ones computed here.

--browser: headless Chromium opens the page, moves the pointer over the peak's pixel and the
check reads the box it shows: the peak's time, and its curve's name and bytes
(MEMSCOPE_SKIP_BROWSER=1 skips this when Chromium is not installed). --screenshot PNG saves
what Chromium draws at 1400x900. Exit 0 when all holds, 1 with the first difference."""
import csv, html, json, os, re, shutil, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

# the layout of lib/writers/memory_html.c
SVG_W, PLOT_X, PLOT_Y, PLOT_W, PLOT_H = 1200, 84, 44, 1092, 400
FRAMEWORK = {"PTA", "ATB", "MINDSPORE"}
IN_HAL = FRAMEWORK | {"PTA_WORKSPACE"}
POOLS = ["PTA", "PTA_WORKSPACE", "ATB", "MINDSPORE", "HAL", "HOST_PINNED", "HOST", "GE"]
UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def fail(msg):
    print(f"check_memory_html: {msg}")
    sys.exit(1)


def bytes_text(v):
    """memscope_bytes_text"""
    x, u = float(v), 0
    while x >= 1023.95 and u < 6:
        x /= 1024
        u += 1
    if u == 0:
        return f"{v} B"
    return f"{x:.{2 if x < 9.995 else 1 if x < 99.95 else 0}f} {UNITS[u]}"


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


def read_inputs(paths, pools_arg):
    """The live changes, op rows and step rows of every input, as this check reads them."""
    changes, ops, bounds, seen = [], [], [], {}
    for src, path in enumerate(paths):
        live, scale = {}, None
        with open(path, newline="", encoding="utf-8-sig", errors="surrogateescape") as f:
            for r in csv.DictReader(f):
                kind, sub = r["Event"], r["Event Type"]
                pid = int(r["Process Id"]) if r["Process Id"] != "N/A" else 2**64 - 1
                tid = r["Thread Id"]
                ts = int(r.get("Timestamp(ns)") or r["Timestamp(us)"])
                if scale is None:  # the legacy layout's microseconds (formats/dump-csv.md)
                    scale = 1000 if "Timestamp(us)" in r or 10**14 <= ts < 10**17 else 1
                pos = (ts * scale, int(r["ID"]))
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
                         "py": top_frame(r["Call Stack(Python)"]),
                         "c": top_frame(r["Call Stack(C)"]), "tid": tid, "pos": pos,
                         "src": src, "pid": pid}
                    live[key] = b
                    seen.setdefault(src, set()).add(sub)
                    changes.append([src, pid, pos, size, dev, sub, b, tid])
    # per input: those asked for, else the pools it has blocks in, HAL left out beside its own
    counted = {src: set(pools_arg) if pools_arg else (s - {"HAL"} if s & IN_HAL else s)
               for src, s in seen.items()}
    return changes, ops, bounds, counted


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
    if b.get("op"):
        return b["op"], "op"
    if b["py"]:
        return b["py"], "Python frame"
    if b["c"]:
        return c_frame_text(b["c"]), "C frame"
    return f"[{b['pool']}, no owner, op or stack]", "-"


def oracle(paths, pools_arg):
    changes, ops, bounds, counted = read_inputs(paths, pools_arg)
    innermost_ops(changes, ops)
    # memscope_timeline's order: (input, process, time, ID), a FREE before a MALLOC of one row
    changes.sort(key=lambda c: (c[0], c[1], c[2], c[3]))
    tracks, best, peak, cur, proc_end = {}, 0, None, {}, {}
    for c in changes:
        proc_end[(c[0], c[1])] = max(proc_end.get((c[0], c[1]), 0), c[2][0])
    for o in ops:
        proc_end[(o[0], o[1])] = max(proc_end.get((o[0], o[1]), 0), o[2][0])
    for i, (src, pid, pos, d, dev, pool, b, tid) in enumerate(changes):
        if pool not in counted.get(src, ()):
            continue
        k = (src, pid, dev, pool)
        t = tracks.setdefault(k, {"peak": 0, "peak_ts": None, "points": [], "first": pos[0]})
        cur[k] = cur.get(k, 0) + d
        t["points"].append((pos[0], cur[k]))
        if cur[k] > t["peak"]:
            t["peak"], t["peak_ts"] = cur[k], pos[0]
        if cur[k] > best:
            best, peak = cur[k], (k, i)
    owners = {}
    if peak:
        k, i = peak
        for src, pid, pos, d, dev, pool, b, tid in changes[: i + 1]:
            if (src, pid, dev, pool) == k:
                name, by = owner_of(b)
                owners[(shown(name), by)] = owners.get((shown(name), by), 0) + d
    owners = {n: v for n, v in owners.items() if v > 0}
    return tracks, peak, best, owners, steps_oracle(bounds), proc_end


def steps_oracle(bounds):
    """(src, pid) -> [(start_ts, end_ts or None)], formats/analyses.md "Steps"."""
    procs = {}
    for src, pid, pos, kind, sub, tid, name in sorted(bounds, key=lambda b: (b[0], b[1], b[2])):
        p = procs.setdefault((src, pid), {"source": None, "steps": [], "open": None})
        if kind == "MSTX" and sub == "Range_start" and name.strip('"') == "step start":
            if p["source"] == "SYSTEM":
                continue
            p["source"] = "MSTX"
            p["steps"].append([pos, None])
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
                p["steps"].append([(0, 0), None])
            p["steps"][-1][1] = pos
            p["steps"].append([pos, None])
    return {k: [(s[0][0], s[1][0] if s[1] else None) for s in v["steps"]]
            for k, v in procs.items() if v["steps"]}


def text_of(e):
    return "".join(e.itertext())


def check_static(page, inputs, pools_arg):
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
    tracks, peak, best, owners, steps, proc_end = oracle(inputs, pools_arg)
    n_inputs = len(inputs)

    def label(k):
        src, pid, dev, pool = k
        s = f"{pool}, device {dev}, process {pid}"
        return s + (f", {os.path.basename(inputs[src])}" if n_inputs > 1 else "")

    # one clock, unless no two inputs overlap in time: then each input's own
    clock = {}
    for k, t in tracks.items():
        first, end = clock.get(k[0], (t["first"], 0))
        clock[k[0]] = (min(first, t["first"]), max(end, proc_end[(k[0], k[1])]))
    runs, own = sorted(clock.values()), len(clock) > 1
    for i in range(1, len(runs)):
        own = own and runs[i][0] > max(e for _, e in runs[:i])
    first = min((c[0] for c in clock.values()), default=0)
    origin = {s: (clock[s][0] if own else first) for s in clock}
    span = max((e - origin[s] for s, (_, e) in clock.items()), default=0) or 1
    if data["span_ns"] != span:
        fail(f"span {data['span_ns']} ns, expected {span}")
    label_x = [t.text for t in root.iter("text") if t.get("class") == "label"][-1]
    if ("each input's" in label_x) != own:
        fail(f"x axis {label_x!r}, the inputs {'do not ' if own else ''}overlap")
    t0 = lambda src: origin.get(src, first)
    order = sorted(tracks, key=lambda k: (k[0], k[1], int(k[2]) if k[2].isdigit() else -1,
                                          POOLS.index(k[3])))
    drawn = sorted(order, key=lambda k: (k != (peak[0] if peak else None),
                                         -tracks[k]["peak"], order.index(k)))[:32]
    drawn = [k for k in order if k in drawn]
    rows = root.findall(".//table[@id='legend']/tbody/tr")
    paths = root.findall(".//g[@id='curves']/path")
    if len(rows) != len(drawn) or len(paths) != len(drawn) or len(data["curves"]) != len(drawn):
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
    if best > top:
        fail(f"the y axis ends at {top_text.text}, below the peak {best}")
    y_of = lambda v: PLOT_Y + PLOT_H - min(max(v, 0) / top, 1) * PLOT_H
    col_of = lambda src, ts: min(PLOT_W - 1, int((ts - t0(src)) / span * PLOT_W)) \
        if ts > t0(src) else 0
    for k, row, path, curve in zip(drawn, rows, paths, data["curves"]):
        t = tracks[k]
        name = text_of(row.find("td[@class='name']"))
        if name != label(k):
            fail(f"legend row {name!r}, expected {label(k)!r}")
        if int(row.get("data-peak")) != t["peak"] or (
                t["peak"] and int(row.get("data-peak-ts-ns")) != t["peak_ts"]):
            fail(f"{name}: peak {row.get('data-peak')} at {row.get('data-peak-ts-ns')}, "
                 f"expected {t['peak']} at {t['peak_ts']}")
        cells = [text_of(c) for c in row.findall("td[@class='num']")]
        if cells[0] != bytes_text(t["peak"]) or cells[2] != bytes_text(max(t["points"][-1][1], 0)):
            fail(f"{name}: legend says {cells}")
        vals = [v for v in curve["values"] if v is not None]
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
        want = f"peak {bytes_text(best)} at {seconds_text(ts - t0(k[0]))}"
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
    bands = g.findall("rect")
    if int(g.get("data-count")) != len(want) or (len(want) <= 1000 and len(bands) != len(want)):
        fail(f"{len(bands)} step bands (count {g.get('data-count')}), {len(want)} expected")
    if proc and (int(g.get("data-src")), int(g.get("data-pid"))) != proc:
        fail(f"steps of {g.get('data-src')}/{g.get('data-pid')}, expected {proc}")
    x_of = lambda ts: PLOT_X + min(max(ts - t0(proc[0]), 0) / span * PLOT_W, PLOT_W)
    for n, (band, (start, stop)) in enumerate(zip(bands, want), 1):
        if stop is None:
            stop = want[n][0] if n < len(want) else t0(proc[0]) + span
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
    head = seconds_text(col * data["span_ns"] // data["cols"])
    if res["hidden"] or not res["head"].startswith(head):
        fail(f"hover box {'hidden' if res['hidden'] else res['head']!r}, expected {head!r}")
    if [name, bytes_text(best)] not in res["rows"] or res["rows"][0][1] != bytes_text(best):
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
    args, pools, browser, png = sys.argv[1:], None, False, None
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--pool":
            pools = {p.upper() for p in args.pop(0).split(",")}
        elif opt == "--browser":
            browser = True
        elif opt == "--screenshot":
            png = args.pop(0)
        else:
            print(__doc__)
            sys.exit(2)
    if len(args) < 2:
        print(__doc__)
        sys.exit(2)
    data, at = check_static(args[0], args[1:], pools)
    if browser and at:
        check_hover(args[0], data, at)
    if png:
        screenshot(args[0], png)


if __name__ == "__main__":
    main()
