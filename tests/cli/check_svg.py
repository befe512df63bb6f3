#!/usr/bin/env python3
"""Checks an SVG flame graph of memscope-export against the folded stacks of the same metric.

Usage: check_svg.py GRAPH.svg GRAPH.folded UNIT [HARNESS.html FRAME SEARCH]

Static: the file is XML with an <svg> root; the root frame's tooltip is "all (AMOUNT, 100.00%)"
(bytes "32.0 MiB, 33,571,840 bytes", under 1 KiB "512 bytes"; "12 allocations") and the title
holds the total in binary units ("(total: 32.0 MiB)"; a peak title says when in seconds since the
input's first row and how much in binary units); every frame of the tree the folded lines make (siblings in name
order, a frame's own weight before its children) is there with its x, width and depth, its
tooltip's weight and percent, and its label cut as the script cuts it; frames narrower than 0.1
pixel are left out and none is there that the folded lines do not make.

With HARNESS (tests/cli/svg_harness.html), headless Chromium runs the graph's script: hovering
over FRAME shows its tooltip, clicking it zooms (it fills the width, its callers are dimmed
across the width, the frames above it scale, the rest hide), searching for SEARCH highlights the
matching frames and gives the share of the total their spans cover, and Escape brings back the
first view exactly. MEMSCOPE_SKIP_BROWSER=1 skips this part when Chromium is not installed.
Exit 0 when all holds, 1 with the first difference."""
import html, json, os, re, shutil, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
WIDTH, PAD, FRAME_H, TOP, CHAR_W, MAX_DEPTH, MAX_FRAMES = 1200, 10, 16, 60, 7.2, 256, 100000
EPS = 0.011


def fail(msg):
    print(f"check_svg: {msg}")
    sys.exit(1)


def bytes_text(b):
    """memscope_bytes_text: binary units, three significant digits ("1.50 KiB", "324 GiB")."""
    v, u = float(b), 0
    while v >= 1023.5 and u < 6:
        v /= 1024
        u += 1
    unit = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"][u]
    return f"{b} B" if not u else f"{v:.{2 if v < 9.995 else 1 if v < 99.95 else 0}f} {unit}"


def amount(w, unit):
    """A weight as the tooltips and title say it: bytes in binary units and exact (under 1 KiB
    exact alone), allocations exact; a byte total that overflowed says so."""
    if unit == "bytes" and w == 2**64 - 1:
        return "more than 16.0 EiB: the total overflowed"
    if unit != "bytes" or w < 1024:
        return f"{w:,} {unit}"
    return f"{bytes_text(w)}, {w:,} bytes"


def open_paren(s, k):
    """The index of the '(' that the ')' at s[k - 1] closes, -1 when none does."""
    depth = 0
    for i in range(k - 1, -1, -1):
        depth += s[i] == ")"
        if s[i] == "(":
            depth -= 1
            if not depth:
                return i
    return -1


def short_len(s):
    """A C frame 'ns::f(int) (libx.so)' without ' (libx.so)', then without '(int)'."""
    n = len(s)
    if n and s[n - 1] == ")" and open_paren(s, n) > 1 and s[open_paren(s, n) - 1] == " ":
        n = open_paren(s, n) - 1
    if n and s[n - 1] == ")" and open_paren(s, n) > 0:
        n = open_paren(s, n)
    return n


def shared_start(name, siblings):
    """The characters of name's start a sibling next to it (in name order) has too, back to the
    end of a part (after '.', '/', ':' or a blank)."""
    best = 0
    for t in siblings:
        for k, (a, b) in enumerate(zip(name, t)):
            if a != b:
                break
            if a in ".:/ " and k + 1 > best:
                best = k + 1
    return best


TAIL_MIN, HEAD_MIN = 4, 3


def ends_part(c):
    return c in ".:/ "


def label(name, w, p=0):
    """The name; when it does not fit, its short part, and when that does not fit either, its
    start and its end with an ellipsis for the middle, the start filling the room the end leaves:
    with p (a start siblings have too), the end from there, or the last n - 1 characters when
    that is longer; else the longest end that starts a part (a character that is not '.', '/',
    ':' or a blank after one of them) with room for the ellipsis; else a third of the room for
    the start (none when under HEAD_MIN). The end has at least TAIL_MIN characters, a start under HEAD_MIN is none, and a
    label with room for fewer than TAIL_MIN + 1 characters is the whole name or nothing."""
    n = int((w - 6) // CHAR_W)
    if n < 3:
        return ""
    if len(name) <= n:
        return name
    name = name[: short_len(name)]
    c = len(name)
    if c <= n:
        return name
    if n < TAIL_MIN + 1:
        return ""
    m = None
    if p and p < c:
        k = min(p if c - p <= n - 1 else c - (n - 1), c - TAIL_MIN)
        m = (n - 1 - (c - k), k)
    for k in range(max(1, c - (n - 1)), c - TAIL_MIN + 1):
        if m:
            break
        if ends_part(name[k - 1]) and not ends_part(name[k]):
            m = (n - 1 - (c - k), k)
    if not m:
        head = (n - 1) // 3 if (n - 1) // 3 >= HEAD_MIN else 0
        m = (head, c - (n - 1 - head))
    head = m[0] if m[0] >= HEAD_MIN else 0
    out = name[:head] + "\u2026" + name[m[1]:]
    # the rule's promise, whatever the branch: at least TAIL_MIN characters after the ellipsis,
    # none or at least HEAD_MIN before it, and within the room
    if len(out) > n or len(name) - m[1] < TAIL_MIN or 0 < head < HEAD_MIN:
        fail(f"the label rule broke its promise: {name!r} in {n} is {out!r}")
    return out


def expected_frames(folded):
    """(path, depth, start, weight) of every frame, the root's path (); the total; the deepest
    depth. A path deeper than MAX_DEPTH is cut to MAX_DEPTH - 1 frames and "[deeper frames]"."""
    weight, own, children = {(): 0}, {}, {}
    for line in open(folded, encoding="utf-8"):
        stack, w = line.rstrip("\n").rsplit(" ", 1)
        path = tuple(stack.split(";"))
        if len(path) > MAX_DEPTH:
            path = path[: MAX_DEPTH - 1] + ("[deeper frames]",)
        for k in range(len(path) + 1):
            if path[:k] not in weight:
                weight[path[:k]] = 0
                children.setdefault(path[: k - 1], []).append(path[:k])
            weight[path[:k]] += int(w)
        own[path] = own.get(path, 0) + int(w)
    frames, depth, todo, shared = [], 0, [((), 0)], {}
    for kids in children.values():
        kids.sort(key=lambda c: c[-1].encode())
        for i, c in enumerate(kids):
            shared[c] = shared_start(c[-1], [k[-1] for k in kids[max(0, i - 1): i] + kids[i + 1: i + 2]])
    while todo:
        p, start = todo.pop()
        frames.append((p, len(p), start, weight[p]))
        depth = max(depth, len(p))
        at, kids = start + own.get(p, 0), []
        for c in sorted(children.get(p, []), key=lambda c: c[-1].encode()):
            kids.append((c, at))
            at += weight[c]
        todo.extend(reversed(kids))
    return frames, weight[()], depth, shared


def read_svg(path):
    root = ET.parse(path).getroot()
    if root.tag != NS + "svg" or root.get("width") != str(WIDTH):
        fail(f"{path}: root is {root.tag} of width {root.get('width')}")
    texts = {t.get("id"): (t.text or "") for t in root.iter(NS + "text") if t.get("id")}
    group = root.find(f"{NS}g[@id='frames']")
    frames = []
    for i, g in enumerate(group.findall(NS + "g")):
        r, t = g.find(NS + "rect"), g.find(NS + "text")
        frames.append({"i": i, "title": g.find(NS + "title").text, "x": float(r.get("x")),
                       "y": float(r.get("y")), "width": float(r.get("width")),
                       "label": t.text or "", "n": int(g.get("data-n")),
                       "p": int(g.get("data-p", "0"))})
    return texts, frames, (int(group.get("data-cut-weight")), int(group.get("data-cut-depth")))


def check_static(svg, folded, unit):
    want, total, depth, shared = expected_frames(folded)
    texts, got, (cut_w, cut_d) = read_svg(svg)
    # the title is for people: bytes in binary units alone, allocations exact
    want_total = (f"{total:,} allocations" if unit != "bytes" else
                  "more than 16.0 EiB (the total overflowed)" if total == 2**64 - 1 else
                  bytes_text(total))
    if f"(total: {want_total})" not in texts.get("title", "") and "peak" not in texts.get("title", ""):
        fail(f"title {texts.get('title')!r} does not say (total: {want_total})")
    if "peak" in texts.get("title", "") and not re.search(
            r" at -?\d+\.\d{6} s, \d[\d.]* [KMGTPE]?i?B live$", texts["title"]):
        fail(f"peak title {texts['title']!r}: not seconds and binary units")
    scale = (WIDTH - 2 * PAD) / total if total else 0
    # frames under 0.1 px are left out; past MAX_FRAMES, those after the cut in (widest,
    # shallowest) order too
    wide = [f for f in want if f[1] == 0 or f[3] * scale >= 0.1]
    shown = [f for f in wide if f[1] == 0 or not cut_d or (-f[3], f[1]) < (-cut_w, cut_d)]
    if cut_d and (len(shown) > MAX_FRAMES or
                  f"{len(wide) - len(shown)} frames left out" not in texts["subtitle"]):
        fail(f"{len(shown)} of {len(wide)} frames drawn; subtitle {texts['subtitle']!r}")
    if not cut_d and len(wide) > MAX_FRAMES:
        fail(f"{len(wide)} frames drawn, more than {MAX_FRAMES}")
    if len(shown) != len(got):
        fail(f"{len(got)} frames, {len(shown)} expected")
    by_pos = {(f["title"].rsplit(" (", 1)[0], round(f["x"], 2), f["y"]): f for f in got}
    descendants = {}
    for p, *_ in shown:
        for k in range(len(p)):
            descendants[p[:k]] = descendants.get(p[:k], 0) + 1
    for path, d, start, w in shown:
        name = path[-1] if path else "all"
        x = PAD + start * scale
        width = w * scale if d else WIDTH - 2 * PAD
        y = TOP + (depth - d) * FRAME_H
        f = by_pos.get((name, round(x, 2), y))
        pct = 100.0 * w / total if total else 100.0
        if not f:
            fail(f"no frame {name!r} at x {x:.2f}, y {y}")
        if abs(f["width"] - width) > EPS:
            fail(f"{name!r}: width {f['width']}, expected {width:.2f}")
        if f["title"] != f"{name} ({amount(w, unit)}, {pct:.2f}%)":
            fail(f"tooltip {f['title']!r}, expected {name} ({amount(w, unit)}, {pct:.2f}%)")
        p = shared.get(path, 0)
        if f["label"] != label(name, f["width"], p) or f["p"] != p:
            fail(f"label {f['label']!r} of {name!r} (data-p {f['p']}), expected "
                 f"{label(name, f['width'], p)!r} (data-p {p})")
        # the script finds a frame's descendants by their number: the frames just before it
        n = descendants.get(path, 0)
        if f["n"] != n or f["i"] < n:
            fail(f"{name!r}: data-n {f['n']}, {n} descendants drawn")
        f["path"] = path
    return got


def run_browser(svg, harness, frame, search):
    browser = shutil.which("chromium")
    if not browser:
        if os.environ.get("MEMSCOPE_SKIP_BROWSER") == "1":
            print("check_svg: chromium not found, script not checked (MEMSCOPE_SKIP_BROWSER=1)")
            return None
        fail("chromium not found (tests/install-deps.sh installs it; MEMSCOPE_SKIP_BROWSER=1 skips)")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(harness, os.path.join(tmp, "h.html"))
        shutil.copy(svg, os.path.join(tmp, "g.svg"))
        q = "svg=g.svg&frame=%s&search=%s" % tuple(
            re.sub(r"[^A-Za-z0-9_.-]", lambda m: "%%%02X" % ord(m.group()), s)
            for s in (frame, search))
        p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                            "--allow-file-access-from-files", f"--user-data-dir={tmp}/profile",
                            "--virtual-time-budget=5000", "--dump-dom",
                            f"file://{tmp}/h.html?{q}"],
                           capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="result">(.*?)</pre>', p.stdout, re.S)
    text = html.unescape(m.group(1)) if m else p.stdout[-500:] + p.stderr[-500:]
    if not text.startswith("{"):
        fail(f"the harness did not run: {text}")
    return json.loads(text)


def span_union(spans):
    total, end = 0.0, -1.0
    for a, b in sorted(spans):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def check_script(static, res, frame, search):
    first = res["initial"]
    name = lambda f: f["title"].rsplit(" (", 1)[0]
    if [(round(f["x"], 2), f["width"]) for f in first["frames"]] != \
            [(round(f["x"], 2), f["width"]) for f in static]:
        fail("the script moved frames before anything was done")
    zi = next(i for i, f in enumerate(first["frames"]) if name(f) == frame)
    z, zpath = first["frames"][zi], static[zi]["path"]
    if res["hover"]["details"] != z["title"]:
        fail(f"hover shows {res['hover']['details']!r}, not {z['title']!r}")
    scale = (WIDTH - 2 * PAD) / z["width"]
    for s, before, after in zip(static, first["frames"], res["zoom"]["frames"]):
        p = s["path"]
        if p[: len(zpath)] == zpath:
            left = max(PAD, PAD + (before["x"] - z["x"]) * scale)
            right = min(WIDTH - PAD, PAD + (before["x"] + before["width"] - z["x"]) * scale)
            want = (True, False, left, max(0, right - left))
        elif zpath[: len(p)] == p:
            want = (True, True, PAD, WIDTH - 2 * PAD)
        else:
            want = (False, False, None, None)
        got = (after["shown"], after["parent"], after["x"] if after["shown"] else None,
               after["width"] if after["shown"] else None)
        if got[:2] != want[:2] or (want[0] and (abs(got[2] - want[2]) > 0.02 or abs(got[3] - want[3]) > 0.02)):
            fail(f"after the click on {frame!r}, {name(before)!r} is {got}, expected {want}")
        if after["shown"] and after["label"] != label(name(after), after["width"], s["p"]):
            fail(f"zoomed label {after['label']!r} of {name(after)!r}")
    if not res["zoom"]["unzoom_shown"]:
        fail("no Reset Zoom after the click")
    hits = [f for f in first["frames"] if f["y"] != max(g["y"] for g in first["frames"])
            and re.search(search, name(f))]
    share = 100 * span_union([(f["x"], f["x"] + f["width"]) for f in hits]) / (WIDTH - 2 * PAD)
    want = f"Matched: {share:.1f}% ({len(hits)} frames)"
    if res["search"]["matched"] != want:
        fail(f"search shows {res['search']['matched']!r}, expected {want!r}")
    lit = sum(f["fill"] == "rgb(230,0,230)" for f in res["search"]["frames"])
    if lit != len(hits) or res["search"]["search_button"] != "Reset Search":
        fail(f"{lit} frames highlighted, {len(hits)} expected")
    if res["escape"]["frames"] != first["frames"] or res["escape"]["matched"].strip() or \
            res["escape"]["unzoom_shown"]:
        fail("Escape did not bring back the first view")
    if res["bad"]["matched"] != "bad pattern: (":
        fail(f"an invalid pattern shows {res['bad']['matched']!r}")
    # the address the graph gave itself opens the same view
    address = res["address"]
    if f"x={z['x']:.2f}" not in address or "s=" not in address:
        fail(f"the address {address!r} does not hold the view")
    for k in ("frames", "matched", "unzoom_shown", "search_button"):
        if res["reopened"][k] != res["search"][k]:
            fail(f"reopened at {address!r}, the graph's {k} differs")


def main():
    if len(sys.argv) not in (4, 7):
        print(__doc__)
        sys.exit(2)
    static = check_static(sys.argv[1], sys.argv[2], sys.argv[3])
    if len(sys.argv) == 7:
        res = run_browser(sys.argv[1], *sys.argv[4:7])
        if res is not None:
            check_script(static, res, sys.argv[5], sys.argv[6])


if __name__ == "__main__":
    main()
