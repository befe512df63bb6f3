#!/usr/bin/env python3
"""Checks memscope-report's page in headless Chromium against its findings JSON and the JSON of
the tools that compute each figure.

Usage: check_report.py PAGE.html [--json REPORT.json] [--leaks LEAKS.json] [--batch BATCH.json]
       [--inefficient INEFF.json] [--screenshot PNG] [--click-leak] [--clocks]
       [--has ID TEXT]... [--timeout S]

Static (the file as written): it loads nothing (no element that loads, no src, no href but to
"#...", no url() but to "#..." or data:, no network call in its script or style; the SVG and
XHTML namespace names are names, not loads), two scripts: the findings JSON
(<script type="application/json" id="report">) and the one that draws, no "</" inside the JSON.

In Chromium (`chromium --headless=new --no-sandbox --disable-gpu`, driven through the DevTools
protocol over --remote-debugging-pipe: no port, nothing but this process talks to it): no
request but the page itself, no console error and no uncaught exception, body[data-ready=1]
within --timeout seconds (60), no #error. The page's DOM as /work/notes/report-dom.md describes
it, read after its script ran: the verdict list is the first thing after the title (the <h1>
or the <header> holding it), one li.verdict per JSON verdict in order (id, level, data-bytes
and data-count as the raw integers of the JSON, the link's text the verdict's text exactly, its
target a section that exists), a section per JSON member that is not null (unchecked always; a
section a verdict links to may be there for an empty or null member), one curve per track, the
peak marker's bytes, a step band per step, a short legend (8 rows + "k more" at most), a clock
warning exactly when a track has a clock note, one block band per block, one leak marker per
site with a block on the plot, one table row per leak site, step, owner and rank, baseline.by's
rows in order, a flame graph exactly when the JSON has one, the heatmaps' cells and their bytes
(or a canvas of as many rows and steps; none without steps), #stack hidden. Typing part of an
owner's name into #where's search field leaves the rows holding it. The JSON itself: the
verdicts of level bad first, then the others, each group in the schema's order, the
always-present ones there, each verdict's figure its member's, the lists within their bounds.

The figures (formats/report.md): the leaks verdict counts the step leaks when there are some,
else the exit leaks, summed over the inputs, every pool but HAL/CUDA when a pool carved out of
them is among them (pools_nested: memscope-leaks' "not summed", memscope-batch's sums); the
leaks section (leaks.exit, leaks.step) is the detail input's. --json REPORT.json:
memscope-report --format json of the same inputs; the page embeds that very object. --leaks
LEAKS.json: memscope-leaks --format json of the same inputs (its summary's inputs). --batch
BATCH.json: memscope-batch --format json of the same inputs: the peak is the highest input's
peak_bytes (that input the detail), with its pool, time, step and top owner, the owners holding
all its bytes; the leaks verdict from exit_leaks/_bytes and step_leaks/_bytes; growth the
detail input's growth_per_step; inefficient the sum of inefficient_bytes and _blocks; with
several inputs one ranks row per batch row with the same figures, standing out exactly when
memscope-batch says so. --inefficient INEFF.json: memscope-inefficient --format json of the one
input: the inefficient verdict's bytes and count are its summary's.

--click-leak: a real mouse click on the row of the first leak site with a call stack (else the
first) opens #stack with its op (or owner) and its frames, Python then C, equal to the JSON
site's stack ("no call stack recorded" when it has none); a click on the first leak marker and
on the first block band of a site the same. --clocks: the input has files recorded far apart: a
clocks verdict, a .clock-warning, a track with a clock note, and an axis shorter than a day.
--has ID TEXT: verdict ID's text holds TEXT. --screenshot PNG: what Chromium draws at 1400x900
(and PNG's name with -stack before .png after the click).

Prints every difference found, one line each, then one line of figures (verdicts, page size,
time from the navigation's start until body[data-ready=1] by the page's own clock,
performance.now()); exit 0 when all holds, 1 with differences, 2 usage, 77 when chromium is
not installed."""
import argparse, base64, fcntl, json, os, re, select, shutil, subprocess, sys, tempfile, time
from html.parser import HTMLParser

ORDER = ["peak", "leaks", "growth", "inefficient", "fragmentation", "clocks", "ranks", "baseline",
         "unchecked"]
ALWAYS = ["peak", "leaks", "growth", "inefficient", "fragmentation", "unchecked"]
LEVELS = {"bad", "warn", "ok", "info", "unchecked"}
OUTER = {"HAL", "CUDA"}  # the pools others are carved out of (lib/include/memscope/blocks.h)
NAMESPACES = ("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xhtml",
              "http://www.w3.org/1999/xlink", "http://www.w3.org/XML/1998/namespace")
LOADING = {"link", "iframe", "img", "object", "embed", "image", "frame", "audio", "video", "source",
           "track", "base", "meta", "use"}
SECTIONS = [("timeline", "timeline"), ("leaks", "leaks"), ("steps", "steps"), ("where", "where"),
            ("inefficient", "inefficient"), ("ranks", "ranks"), ("baseline", "baseline")]
PROBLEMS = []


def bad(msg):
    PROBLEMS.append(msg)


def fail_now(msg):
    print(f"check_report: {msg}")
    sys.exit(1)


def strip_ns(text):
    for ns in NAMESPACES:
        text = text.replace(ns, "")
    return text


class Static(HTMLParser):
    """The page as written: its tags' loads and its scripts' texts."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.scripts, self.styles, self.cur = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "meta" and all(k in ("charset", "name", "content") for k, _ in attrs) and \
                not any(k == "content" and "url" in (v or "").lower() for k, v in attrs):
            pass  # <meta charset> and <meta name=viewport> load nothing
        elif tag in LOADING:
            bad(f"static: a <{tag}> element")
        for k, v in attrs:
            v = strip_ns(v or "")
            if k in ("src", "action", "srcset", "background", "poster", "data", "formaction",
                     "ping", "manifest") or (k in ("href", "xlink:href") and not v.startswith("#")):
                bad(f"static: <{tag} {k}={v!r}>")
            elif re.search(r"url\((?!\s*['\"]?(#|data:))|https?:|javascript:", v, re.I):
                bad(f"static: <{tag} {k}={v[:80]!r}> reaches out")
        if tag in ("script", "style"):
            self.cur = [tag, dict(attrs), ""]

    def handle_data(self, data):
        if self.cur:
            self.cur[2] += data

    def handle_endtag(self, tag):
        if self.cur and tag == self.cur[0]:
            (self.scripts if tag == "script" else self.styles).append(self.cur[1:])
            self.cur = None


REACH = r"@import|url\((?!\s*['\"]?(#|data:))|https?:|fetch\s*\(|XMLHttpRequest|import\s*\(|" \
    r"WebSocket|EventSource|sendBeacon|new\s+Worker|serviceWorker|\.src\s*="


def check_static(page):
    raw = open(page, encoding="utf-8").read()
    p = Static()
    p.feed(raw)
    p.close()
    data = [s for s in p.scripts if s[0].get("type") == "application/json"]
    code = [s for s in p.scripts if s[0].get("type") != "application/json"]
    if len(data) != 1 or data[0][0].get("id") != "report" or len(code) != 1:
        fail_now(f"static: {len(p.scripts)} scripts, expected the JSON (id report) and one other")
    if any("src" in s[0] for s in p.scripts):
        bad("static: a script with src")
    for kind, text in [("script", code[0][1])] + [("style", s[1]) for s in p.styles]:
        m = re.search(REACH, strip_ns(text), re.I)
        if m:
            bad(f"static: its {kind} reaches out ({m.group(0)!r})")
    if "</" in data[0][1]:
        bad("static: '</' inside the JSON")
    try:
        obj = json.loads(data[0][1])
    except ValueError as e:
        fail_now(f"static: the embedded JSON does not parse: {e}")
    return obj, len(raw.encode("utf-8"))


# -- the DevTools protocol over a pipe: Chromium reads commands from fd 3, writes to fd 4, each
# message JSON ended by a NUL byte

class Browser:
    def __init__(self, tmp, timeout):
        exe = shutil.which("chromium")
        if not exe:
            print("check_report: chromium not found (tests/install-deps.sh installs it)")
            sys.exit(77)
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        # above 4, so that the child's dup2 to 3 and 4 cannot clobber one of them
        hr1 = fcntl.fcntl(r1, fcntl.F_DUPFD_CLOEXEC, 10)
        hw2 = fcntl.fcntl(w2, fcntl.F_DUPFD_CLOEXEC, 10)

        def child():
            os.dup2(hr1, 3)
            os.dup2(hw2, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             # no attempt to reach the network at start (this machine's is closed)
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-quic",
             "--hide-scrollbars", f"--user-data-dir={tmp}/profile", "--window-size=1400,900",
             "about:blank"], preexec_fn=child, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "chromium.err"), "w"))
        for fd in (r1, w2, hr1, hw2):
            os.close(fd)
        self.wr, self.rd, self.buf, self.id, self.events = w1, r2, b"", 0, []
        self.timeout, self.sid = timeout, None

    def send(self, method, params=None):
        self.id += 1
        m = {"id": self.id, "method": method, "params": params or {}}
        if self.sid and not method.startswith(("Target.", "Browser.")):
            m["sessionId"] = self.sid
        os.write(self.wr, json.dumps(m).encode() + b"\0")
        return self.id

    def recv(self, until):
        while b"\0" not in self.buf:
            left = until - time.monotonic()
            r, _, _ = select.select([self.rd], [], [], max(left, 0))
            if not r:
                return None
            d = os.read(self.rd, 1 << 20)
            if not d:
                fail_now("chromium went away")
            self.buf += d
        m, self.buf = self.buf.split(b"\0", 1)
        return json.loads(m)

    def call(self, method, params=None):
        i = self.send(method, params)
        until = time.monotonic() + self.timeout
        while True:
            m = self.recv(until)
            if m is None:
                fail_now(f"chromium did not answer {method} in {self.timeout} s")
            if m.get("id") == i:
                if "error" in m:
                    fail_now(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def pump(self, seconds):
        until = time.monotonic() + seconds
        while True:
            m = self.recv(until)
            if m is None:
                return
            if "method" in m:
                self.events.append(m)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            fail_now(f"evaluating the check's own script: {r['exceptionDetails']}")
        return r["result"].get("value")

    def close(self):
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        os.close(self.wr)
        os.close(self.rd)


# set before the page's first script: the time (performance.now(), ms since the navigation
# started) the page sets body[data-ready=1]
READY_WATCH = """
window.__msReady = null;
new MutationObserver(function (list, obs) {
	if (document.body && document.body.dataset.ready === "1" && window.__msReady === null) {
		window.__msReady = performance.now();
		obs.disconnect();
	}
}).observe(document, { attributes: true, subtree: true, attributeFilter: ["data-ready"] });
"""

# what the check reads of the DOM once the page's script ran
READ_DOM = r"""
(function () {
	function q(s, root) { return Array.prototype.slice.call((root || document).querySelectorAll(s)); }
	function a(e, k) { return e.getAttribute(k); }
	var r = {}, h1 = document.querySelector("h1"), err = document.getElementById("error");
	r.ready = document.body.dataset.ready || null;
	r.error = err ? err.textContent : null;
	r.h1 = h1 ? h1.textContent : null;
	// the title: the <h1>, or the <header> holding it
	var title = h1 && h1.parentElement.tagName === "HEADER" ? h1.parentElement : h1;
	r.after_h1 = title && title.nextElementSibling ? title.nextElementSibling.id : null;
	r.verdicts = q("#verdicts > li").map(function (li) {
		var l = li.querySelector("a");
		return { cls: li.className, id: a(li, "data-id"), level: a(li, "data-level"),
			bytes: a(li, "data-bytes"), count: a(li, "data-count"),
			href: l ? a(l, "href") : null, text: l ? l.textContent : null };
	});
	r.sections = q("section[id]").map(function (s) { return [s.id, !!s.querySelector("h2")]; });
	r.tracks = q("#timeline svg path.track").map(function (e) { return a(e, "data-track"); });
	r.peak = q("#timeline svg g.peak-marker").map(function (e) { return a(e, "data-bytes"); });
	r.leak_markers = q("#timeline svg g.leak-marker").map(function (e) { return a(e, "data-site"); });
	r.bands = q("#timeline svg rect.step-band").map(function (e) { return a(e, "data-step"); });
	r.legend = q("#timeline ul.legend > li").length;
	r.clock = q(".clock-warning").map(function (e) { return e.textContent; });
	r.blocks = q("#blocks svg rect.block").map(function (e) {
		return [a(e, "data-block"), a(e, "data-site")]; });
	r.sites = q("#leaks table tr.site").map(function (e) { return a(e, "data-site"); });
	r.steps = q("#steps table tr[data-step]").map(function (e) {
		return [a(e, "data-step"), e.classList.contains("leak-first")]; });
	r.where = q("#where table tr[data-name]").map(function (e) { return a(e, "data-name"); });
	r.search = q("#where input[type=search]").length;
	r.flame = q("#flame svg").length;
	// heatmaps: SVG cells, or a canvas (data-rows x data-steps) when too many for cells
	r.heat = q("#ranks svg.heatmap").map(function (s) {
		return q("rect[data-row][data-step]", s).map(function (e) {
			return [a(e, "data-row"), a(e, "data-step"), a(e, "data-bytes")]; });
	});
	r.canvas = q("#ranks canvas.heatmap").map(function (e) {
		return [a(e, "data-rows"), a(e, "data-steps")]; });
	r.rank_rows = q("#ranks table tr[data-input]").map(function (e) {
		return [a(e, "data-input"), e.classList.contains("stands-out")]; });
	r.common = q("#common-sites li").length;
	r.base_rows = q("#baseline table tr[data-name]").map(function (e) { return a(e, "data-name"); });
	r.loads = q("link,iframe,img,object,embed,image,frame,audio,video,source,track,base,script[src]")
		.map(function (e) { return e.tagName; });
	r.refs = q("[href],[src],[srcset]").map(function (e) {
		return a(e, "href") || a(e, "src") || a(e, "srcset"); })
		.filter(function (h) { return h && h.charAt(0) !== "#"; });
	var st = document.getElementById("stack");
	r.stack = st ? { hidden: st.hidden } : null;
	r.height = document.documentElement.scrollHeight;
	return r;
})()
"""

READ_STACK = r"""
(function () {
	function q(s, root) { return Array.prototype.slice.call((root || document).querySelectorAll(s)); }
	var s = document.getElementById("stack"), op;
	if (!s) return null;
	op = s.querySelector(".op");
	return { hidden: s.hidden || getComputedStyle(s).display === "none",
		op: op ? op.textContent : null,
		py: q(".frame.py", s).map(function (e) { return e.textContent; }),
		c: q(".frame.c", s).map(function (e) { return e.textContent; }),
		frames: q(".frame", s).length, text: s.textContent };
})()
"""


def close_stack(b):
    b.eval("(function(){var s=document.getElementById('stack'); if (s) s.hidden = true;})()")


def stack_matches(b, what, want, op_or_owner):
    got = b.eval(READ_STACK)
    if got is None:
        bad(f"{what}: no #stack")
        return
    if got["hidden"]:
        bad(f"{what}: #stack still hidden")
        return
    py, c = (want or {}).get("python") or [], (want or {}).get("c") or []
    if got["py"] != py or got["c"] != c or got["frames"] != len(py) + len(c):
        bad(f"{what}: #stack frames python {got['py'][:3]}... c {got['c'][:3]}..., expected "
            f"python {py[:3]}... c {c[:3]}...")
    if not py and not c and "no call stack recorded" not in got["text"]:
        bad(f"{what}: a site without a stack, #stack does not say 'no call stack recorded'")
    if op_or_owner and (got["op"] is None or op_or_owner not in got["op"]):
        bad(f"{what}: #stack .op {got['op']!r}, expected {op_or_owner!r}")


def click_leaks(b, rep, png):
    sites = {s["id"]: s for s in (rep.get("leaks") or {}).get("sites") or []}
    if not sites:
        bad("--click-leak: the JSON has no leak site")
        return
    # the first site with a call stack, else the first
    first = ([s for s in rep["leaks"]["sites"] if (s.get("stack") or {}).get("python") or
              (s.get("stack") or {}).get("c")] or rep["leaks"]["sites"])[0]
    # a real click through the protocol, at the row's centre once scrolled into view
    box = b.eval("""(function () {
		var e = document.querySelector("#leaks table tr.site[data-site='%d']");
		if (!e) return null;
		e.scrollIntoView({ block: "center" });
		var r = e.getBoundingClientRect();
		return [r.left + Math.min(r.width / 2, 200), r.top + r.height / 2];
	})()""" % first["id"])
    if box is None:
        bad(f"--click-leak: no tr.site of site {first['id']} to click")
        return
    for kind in ("mousePressed", "mouseReleased"):
        b.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                            "button": "left", "clickCount": 1})
    b.pump(0.2)
    site = first
    stack_matches(b, f"click on leak site {site['id']}", site.get("stack"),
                  site.get("op") or site.get("owner"))
    if png:
        shot(b, png[:-4] + "-stack.png" if png.endswith(".png") else png + "-stack")
    # a leak marker and a block band of a site (dispatched: SVG shapes may overlap)
    for sel, attr in (("#timeline svg g.leak-marker", "data-site"),
                      ("#blocks svg rect.block", "data-block")):
        close_stack(b)
        key = b.eval("""(function (sel, attr) {
			var e = Array.prototype.slice.call(document.querySelectorAll(sel)).filter(function (x) {
				return x.getAttribute("data-site") !== null && x.getAttribute("data-site") !== "";
			})[0];
			if (!e) return null;
			e.dispatchEvent(new MouseEvent("click", { bubbles: true, view: window }));
			return e.getAttribute(attr);
		})(%s, %s)""" % (json.dumps(sel), json.dumps(attr)))
        if key is None:
            continue
        b.pump(0.1)
        if attr == "data-site":
            s = sites.get(int(key)) if key.isdigit() else None
            if s is None:
                bad(f"a leak marker of site {key!r}, not a site of the JSON")
                continue
            stack_matches(b, f"click on the leak marker of site {key}", s.get("stack"),
                          s.get("op") or s.get("owner"))
        else:
            blk = [x for x in (rep.get("timeline") or {}).get("blocks") or [] if str(x["id"]) == key]
            if not blk:
                bad(f"a block band {key!r} not in the JSON")
                continue
            stack_matches(b, f"click on block {key}", blk[0].get("stack"),
                          blk[0].get("op") or blk[0].get("owner"))


def search_where(b, rep):
    """Typing part of the second owner's name into #where's search leaves the rows whose name
    holds it, case aside"""
    rows = [r["name"] for r in (rep.get("where") or {}).get("rows") or []]
    if len(rows) < 2:
        return
    q = rows[1][len(rows[1]) // 3:][:6]
    got = b.eval("""(function (q) {
		var i = document.querySelector("#where input[type=search]"), r;
		if (!i) return null;
		i.value = q;
		i.dispatchEvent(new Event("input", { bubbles: true }));
		r = Array.prototype.slice.call(document.querySelectorAll("#where table tr[data-name]"))
			.filter(function (e) { return !e.hidden && e.offsetParent !== null; })
			.map(function (e) { return e.getAttribute("data-name"); });
		i.value = "";
		i.dispatchEvent(new Event("input", { bubbles: true }));
		return r;
	})(%s)""" % json.dumps(q))
    want = [n for n in rows if q.lower() in n.lower()]
    if got is not None and got != want:
        bad(f"#where searched for {q!r}: rows {got[:5]}, expected {want[:5]}")


def shot(b, png, top=False):
    if top:
        b.eval("window.scrollTo(0, 0)")
    d = b.call("Page.captureScreenshot", {"format": "png"})
    with open(png, "wb") as f:
        f.write(base64.b64decode(d["data"]))


def run_browser(page, timeout, png, click, rep):
    url = "file://" + os.path.abspath(page)
    with tempfile.TemporaryDirectory() as tmp:
        b = Browser(tmp, timeout)
        try:
            targets = b.call("Target.getTargets")["targetInfos"]
            pages = [t for t in targets if t["type"] == "page"]
            tid = pages[0]["targetId"] if pages else \
                b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            b.sid = b.call("Target.attachToTarget", {"targetId": tid, "flatten": True})["sessionId"]
            for m in ("Runtime.enable", "Log.enable", "Network.enable", "Page.enable"):
                b.call(m)
            b.call("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 900,
                                                          "deviceScaleFactor": 1, "mobile": False})
            b.call("Page.addScriptToEvaluateOnNewDocument", {"source": READY_WATCH})
            b.call("Page.navigate", {"url": url})
            until = time.monotonic() + timeout
            ready = None
            while time.monotonic() < until:
                b.pump(0.05)
                ready = b.eval("window.__msReady === undefined ? null : window.__msReady")
                err = b.eval("!!document.getElementById('error')")
                if ready is not None or err:
                    break
            b.pump(0.3)  # errors of timers the page set off while drawing
            dom = b.eval(READ_DOM)
            if ready is None and dom.get("ready") != "1":
                bad(f"body[data-ready=1] not set within {timeout} s")
            if png:
                shot(b, png, top=True)
            search_where(b, rep)
            if click:
                click_leaks(b, rep, png)
            b.pump(0.2)
        finally:
            b.close()
    for e in b.events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            bad("console error: " + " ".join(str(x.get("value", x.get("description", "")))
                                             for x in p.get("args", []))[:300])
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            bad(f"uncaught exception: {(d.get('exception') or {}).get('description', d.get('text'))}"
                [:300])
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            bad(f"console error ({p['entry'].get('source')}): {p['entry'].get('text')}"[:300])
        elif m == "Network.requestWillBeSent" and p.get("request", {}).get("url") != url:
            bad(f"the page loads {p['request']['url'][:200]}")
    return dom, ready


# -- the page's DOM against its JSON

def num(v):
    return None if v is None else str(v)


def check_json(rep):
    """The findings JSON against the schema's order and bounds."""
    if rep.get("memscope_report") != 1:
        bad(f"memscope_report {rep.get('memscope_report')!r}, expected 1")
    # the findings first (level bad), then the others, each group in the schema's order
    vs = rep.get("verdicts", [])
    ids = [v.get("id") for v in vs]
    want = [v.get("id") for v in sorted(vs, key=lambda v: (v.get("level") != "bad",
                                                          ORDER.index(v["id"]) if v.get("id") in
                                                          ORDER else len(ORDER)))]
    if ids != want or len(set(ids)) != len(ids):
        bad(f"verdicts in the order {ids}, expected {want} (bad first, then {ORDER})")
    for i in ALWAYS:
        if i not in ids:
            bad(f"no {i} verdict")
    for v in rep.get("verdicts", []):
        if v.get("level") not in LEVELS or not v.get("text"):
            bad(f"verdict {v.get('id')}: level {v.get('level')!r}, text {v.get('text')!r}")
    several = len(rep.get("inputs", [])) > 1
    if ("ranks" in ids) != several:
        bad(f"a ranks verdict {'missing' if several else 'with one input'}")
    if ("baseline" in ids) != (rep.get("baseline") is not None):
        bad("a baseline verdict without --baseline's figures, or none with them")
    # each verdict's figure is its member's
    fr, ie = rep.get("fragmentation") or {}, rep.get("inefficient") or {}
    for vid, got, want in (
            ("peak", verdict(rep, "peak").get("bytes"), (rep.get("peak") or {}).get("bytes")),
            ("growth", verdict(rep, "growth").get("bytes"),
             (rep.get("growth") or {}).get("per_step_bytes")),
            ("inefficient", (verdict(rep, "inefficient").get("bytes"),
                             verdict(rep, "inefficient").get("count")),
             (ie.get("bytes"), ie.get("blocks")) if ie.get("checked") else (None, None)),
            ("fragmentation", verdict(rep, "fragmentation").get("bytes"),
             fr["reserved_bytes"] - fr["allocated_bytes"] if fr.get("checked") else None)):
        if got != want:
            bad(f"the {vid} verdict's figure {got!r}, its member's {want!r}")
    t = rep.get("timeline") or {}
    lim = [("leaks.sites", ((rep.get("leaks") or {}).get("sites") or []), 200),
           ("timeline.tracks", t.get("tracks") or [], 8),
           ("timeline.samples", t.get("samples") or [], 8),
           ("timeline.blocks", t.get("blocks") or [], 300),
           ("steps", rep.get("steps") or [], 2000),
           ("where.rows", (rep.get("where") or {}).get("rows") or [], 200),
           ("inefficient.top", (rep.get("inefficient") or {}).get("top") or [], 20),
           ("peak.owners", (rep.get("peak") or {}).get("owners") or [], 20),
           ("ranks.steps", (rep.get("ranks") or {}).get("steps") or [], 500),
           ("ranks.common_sites", (rep.get("ranks") or {}).get("common_sites") or [], 100),
           ("baseline.by", (rep.get("baseline") or {}).get("by") or [], 100)]
    lim += [(f"track {k['id']}'s points", k.get("points") or [], 1001) for k in t.get("tracks") or []]
    for name, lst, most in lim:
        if len(lst) > most:
            bad(f"{name}: {len(lst)}, at most {most}")


def check_heatmaps(rk, dom):
    """Two heatmaps (live, growth) of rows x steps: a cell per figure with its bytes ("" where
    unknown), or a canvas of that many rows and steps"""
    steps = [str(x) for x in rk.get("steps") or []]
    grids = [rk.get("live") or [], rk.get("growth") or []]
    n_rows = len(rk.get("rows") or [])
    if not steps and not any(c for c in dom["heat"]):
        return  # no step: nothing to draw
    if len(dom["heat"]) != 2:
        bad(f"{len(dom['heat'])} heatmaps, expected 2 (live and growth)")
        return
    canvases = list(dom["canvas"])
    for name, grid, cells in zip(("live", "growth"), grids, dom["heat"]):
        if len(grid) != n_rows:
            bad(f"ranks.{name}: {len(grid)} rows, ranks.rows has {n_rows}")
        want = [[str(i), steps[j], "" if v is None else str(v)]
                for i, row in enumerate(grid) for j, v in enumerate(row)]
        if cells:
            if cells != want:
                diff = [(c, w) for c, w in zip(cells, want) if c != w][:3]
                bad(f"the {name} heatmap: {len(cells)} cells, the JSON {len(want)} figures "
                    f"(first differences {diff})")
        elif not canvases or canvases.pop(0) != [str(len(grid)), str(len(steps))]:
            bad(f"the {name} heatmap: neither cells nor a canvas of {len(grid)} x {len(steps)}")


def check_dom(rep, dom):
    if dom["error"] is not None:
        bad(f"#error: {dom['error'][:300]}")
    if dom["loads"] or dom["refs"]:
        bad(f"after the script: elements that load {dom['loads']}, references {dom['refs'][:5]}")
    if not dom["h1"]:
        bad("no <h1>")
    if dom["after_h1"] != "verdicts":
        bad(f"the element after the title is #{dom['after_h1']}, not #verdicts")
    want = rep.get("verdicts", [])
    sections = {s for s, _ in dom["sections"]}
    if len(dom["verdicts"]) != len(want):
        bad(f"{len(dom['verdicts'])} verdict lines, the JSON has {len(want)}")
    for li, v in zip(dom["verdicts"], want):
        exp = {"cls": "verdict", "id": v["id"], "level": v["level"],
               "bytes": num(v.get("bytes")), "count": num(v.get("count")),
               "href": "#" + str(v.get("section")), "text": v["text"]}
        got = dict(li, cls="verdict" if "verdict" in li["cls"].split() else li["cls"])
        if got != exp:
            bad(f"verdict {v['id']}: page {got}, JSON {exp}")
        if v.get("section") not in sections:
            bad(f"verdict {v['id']} links to #{v.get('section')}, no such section")
    for sid, has_h2 in dom["sections"]:
        if not has_h2:
            bad(f"section #{sid} without <h2>")
    linked = {v.get("section") for v in want}
    for sid, key in SECTIONS:
        val = rep.get(key)
        if key == "inefficient" and val is not None and not val.get("checked"):
            continue  # said under unchecked; either way is right
        if val in ([], {}) or (val is None and sid in linked):
            continue  # nothing to show: a section saying so (a verdict links to it), or none
        if (sid in sections) != (val is not None):
            bad(f"section #{sid} {'there' if sid in sections else 'missing'}, JSON {key} "
                f"{'null' if val is None else 'given'}")
    if "unchecked" not in sections:
        bad("no #unchecked section")
    t = rep.get("timeline")
    if t:
        tracks = [str(k["id"]) for k in t.get("tracks") or []]
        # the tracks with a clock note may come last (report-dom.md)
        if sorted(dom["tracks"]) != sorted(tracks) or len(set(dom["tracks"])) != len(tracks):
            bad(f"curves of tracks {dom['tracks']}, the JSON's {tracks}")
        pk = rep.get("peak")
        if pk and dom["peak"] != [str(pk["bytes"])]:
            bad(f"peak markers {dom['peak']}, expected one of {pk['bytes']} bytes")
        steps = [str(s["number"]) for s in t.get("steps") or []]
        if dom["bands"] != steps:
            bad(f"step bands {dom['bands'][:10]}..., the JSON's steps {steps[:10]}...")
        if dom["legend"] > 9:
            bad(f"a legend of {dom['legend']} rows, at most 8 + 'k more'")
        clocked = [k for k in t.get("tracks") or [] if k.get("clock")]
        if bool(dom["clock"]) != bool(clocked):
            bad(f"{len(dom['clock'])} clock warnings, {len(clocked)} tracks with a clock note")
        blocks = [[str(x["id"]), "" if x.get("site") is None else str(x["site"])]
                  for x in t.get("blocks") or []]
        if sorted(dom["blocks"]) != sorted(blocks):
            bad(f"{len(dom['blocks'])} block bands, the JSON has {len(blocks)} blocks "
                f"(or their sites differ)")
        with_blocks = {b[1] for b in blocks if b[1]}
        if set(dom["leak_markers"]) != with_blocks or \
                len(dom["leak_markers"]) != len(set(dom["leak_markers"])):
            bad(f"leak markers of sites {sorted(dom['leak_markers'])}, sites with blocks on the "
                f"plot {sorted(with_blocks)}")
    sites = [str(s["id"]) for s in (rep.get("leaks") or {}).get("sites") or []]
    if dom["sites"] != sites:
        bad(f"leak site rows {dom['sites'][:10]}, the JSON's sites {sites[:10]}")
    steps = [[str(s["number"]), bool(s.get("leak_first"))] for s in rep.get("steps") or []]
    if dom["steps"] != steps:
        bad(f"step rows {dom['steps'][:6]}..., the JSON's {steps[:6]}...")
    w = rep.get("where")
    if w:
        names = [r["name"] for r in w.get("rows") or []]
        if dom["where"] != names:
            bad(f"where rows {dom['where'][:5]}, the JSON's {names[:5]}")
        if dom["search"] != 1:
            bad(f"{dom['search']} search fields in #where")
        if bool(dom["flame"]) != (w.get("flame") is not None):
            bad(f"a flame graph {'drawn' if dom['flame'] else 'missing'}, JSON flame "
                f"{'null' if w.get('flame') is None else 'given'}")
    rk = rep.get("ranks")
    if rk:
        rows = [[str(r["input"]), bool(r.get("stands_out"))] for r in rk.get("rows") or []]
        if dom["rank_rows"] != rows:
            bad(f"rank rows {dom['rank_rows'][:6]}..., the JSON's {rows[:6]}...")
        check_heatmaps(rk, dom)
        if dom["common"] != len(rk.get("common_sites") or []):
            bad(f"{dom['common']} common sites, the JSON has {len(rk.get('common_sites') or [])}")
    bl = rep.get("baseline")
    if bl:
        # the rows of the differences, in order, among the table's (a summary's rows beside them)
        names, rows = [r["name"] for r in bl.get("by") or []], dom["base_rows"]
        if not any(rows[i:i + len(names)] == names for i in range(len(rows) - len(names) + 1)):
            bad(f"baseline rows {dom['base_rows'][:5]}, the JSON's {names[:5]}")
    if dom["stack"] is None:
        bad("no <aside id=stack>")
    elif not dom["stack"]["hidden"]:
        bad("#stack shown before any click")


# -- the JSON's figures against the tools that compute them

def verdict(rep, vid):
    for v in rep.get("verdicts", []):
        if v.get("id") == vid:
            return v
    return {}


def same(what, got, want):
    if got != want:
        bad(f"{what}: report {got!r}, expected {want!r}")


def leaks_of_summary(summary, only=None):
    """{kind: (count, bytes)} over every input (or input only), HAL/CUDA left out where a pool
    carved out of them is there (pools_nested); None where no input was checked"""
    out = {}
    for kind in ("exit", "step"):
        n = b = 0
        checked = False
        for i, inp in enumerate(summary["inputs"]):
            k = inp.get(kind)
            if not k or not k.get("checked") or (only is not None and i != only):
                continue
            checked = True
            for p in k["pools"]:
                if k.get("pools_nested") and p["pool"] in OUTER:
                    continue
                n += p["leaks"]
                b += p["bytes"]
        out[kind] = (n, b) if checked else None
    return out


def leaks_figures(t):
    """the leaks verdict's (count, bytes): the step leaks' when there are some, else the exit
    leaks' (formats/report.md, verdicts)"""
    if t["step"] and t["step"][0]:
        return t["step"]
    return t["exit"] or (None, None)


def check_leaks(rep, path):
    summary = json.load(open(path))["summary"]
    n, b = leaks_figures(leaks_of_summary(summary))
    v = verdict(rep, "leaks")
    same("leaks verdict bytes vs memscope-leaks", v.get("bytes"), b)
    same("leaks verdict count vs memscope-leaks", v.get("count"), n)
    # the leaks section is the detail input's
    t = leaks_of_summary(summary, rep.get("detail", 0))
    lk = rep.get("leaks") or {}
    for kind in ("exit", "step"):
        got = lk.get(kind)
        same(f"leaks.{kind} of the detail input vs memscope-leaks",
             None if got is None else (got.get("count"), got.get("bytes")), t[kind])


def check_batch(rep, path):
    rows = [r for r in map(json.loads, open(path)) if r.get("type") == "input"]
    ok = [r for r in rows if r["status"] == "ok"]
    top = max(ok, key=lambda r: (r["peak_bytes"] or 0, -r["index"]), default=None)
    pk, v = rep.get("peak"), verdict(rep, "peak")
    if top and top["peak_bytes"]:
        same("peak verdict bytes vs memscope-batch", v.get("bytes"), top["peak_bytes"])
        same("detail input vs memscope-batch's highest peak", rep.get("detail"), top["index"])
        if pk:
            same("peak.bytes", pk.get("bytes"), top["peak_bytes"])
            same("peak.input", pk.get("input"), top["index"])
            same("peak.pool", pk.get("pool"), top["peak_pool"])
            same("peak.ts_ns", pk.get("ts_ns"), top["peak_ns"])
            same("peak.step", pk.get("step"), top["peak_step"])
            owners = pk.get("owners") or []
            if top["peak_owner"] is not None:
                same("peak's top owner", (owners[0]["name"], owners[0]["bytes"]) if owners else None,
                     (top["peak_owner"], top["peak_owner_bytes"]))
            held = sum(o["bytes"] for o in owners) + (pk.get("rest") or {}).get("bytes", 0)
            if held != pk["bytes"]:
                bad(f"the owners at the peak hold {held} bytes, the peak is {pk['bytes']}")
        g = verdict(rep, "growth")
        same("growth verdict bytes vs memscope-batch", g.get("bytes"), top["growth_per_step"])
        same("growth.per_step_bytes", (rep.get("growth") or {}).get("per_step_bytes"),
             top["growth_per_step"])
    else:
        same("peak verdict bytes without a peak", v.get("bytes"), None)
    lv = verdict(rep, "leaks")
    t = {}
    for kind in ("exit", "step"):
        known = [r for r in ok if r[f"{kind}_leak_bytes"] is not None]
        t[kind] = (sum(r[f"{kind}_leaks"] for r in known),
                   sum(r[f"{kind}_leak_bytes"] for r in known)) if known else None
    n, b = leaks_figures(t)
    same("leaks verdict bytes vs memscope-batch", lv.get("bytes"), b)
    same("leaks verdict count vs memscope-batch", lv.get("count"), n)
    det = [r for r in ok if r["index"] == rep.get("detail")]
    lk = rep.get("leaks") or {}
    for kind in ("exit", "step"):
        if det and lk:
            r, got = det[0], lk.get(kind)
            want = None if r[f"{kind}_leak_bytes"] is None else \
                (r[f"{kind}_leaks"], r[f"{kind}_leak_bytes"])
            same(f"leaks.{kind} of the detail input vs memscope-batch",
                 None if got is None else (got.get("count"), got.get("bytes")), want)
    iv = verdict(rep, "inefficient")
    ib = [r for r in ok if r["inefficient_bytes"] is not None]
    same("inefficient verdict bytes vs memscope-batch", iv.get("bytes"),
         sum(r["inefficient_bytes"] for r in ib) if ib else None)
    same("inefficient verdict count vs memscope-batch", iv.get("count"),
         sum(r["inefficient_blocks"] for r in ib) if ib else None)
    if len(rows) > 1:
        rk = rep.get("ranks") or {}
        got = {r["input"]: r for r in rk.get("rows") or []}
        if sorted(got) != [r["index"] for r in rows]:
            bad(f"ranks rows of inputs {sorted(got)[:10]}..., memscope-batch has {len(rows)} rows")
        for r in rows:
            g = got.get(r["index"])
            if not g:
                continue
            for k in ("rank", "node", "peak_bytes", "exit_leak_bytes", "step_leak_bytes",
                      "growth_per_step"):
                want = r[k]
                if k in ("rank",) and want is not None:
                    want = int(want)
                if g.get(k) != want:
                    bad(f"ranks row of input {r['index']} ({r['input']}): {k} {g.get(k)!r}, "
                        f"memscope-batch {want!r}")
            if bool(g.get("stands_out")) != bool(r["stands_out"]):
                bad(f"input {r['index']} ({r['input']}) stands out: report {g.get('stands_out')!r}, "
                    f"memscope-batch {r['stands_out']!r}")
    return rows


def check_inefficient(rep, path):
    s = json.load(open(path))["summary"]
    v = verdict(rep, "inefficient")
    same("inefficient verdict bytes vs memscope-inefficient", v.get("bytes"), s["bytes"])
    same("inefficient verdict count vs memscope-inefficient", v.get("count"), s["blocks"])


def check_clocks(rep, dom):
    v = verdict(rep, "clocks")
    if not v:
        bad("no clocks verdict on an input with files recorded far apart")
    t = rep.get("timeline") or {}
    if not any(k.get("clock") for k in t.get("tracks") or []):
        bad("no track with a clock note")
    if not dom["clock"]:
        bad("no .clock-warning on the page")
    if t and t["to_ns"] - t["from_ns"] >= 86400 * 10**9:
        bad(f"an axis of {(t['to_ns'] - t['from_ns']) / 1e9:.0f} s: the clocks squeezed into one")


def first_difference(x, y, at):
    """The path of the first place where x and y differ, None when equal"""
    if isinstance(x, dict) and isinstance(y, dict):
        for k in list(x) + [k for k in y if k not in x]:
            if k not in x or k not in y:
                return f"{at}.{k}"
            d = first_difference(x[k], y[k], f"{at}.{k}")
            if d is not None:
                return d
        return None
    if isinstance(x, list) and isinstance(y, list):
        for i, (u, v) in enumerate(zip(x, y)):
            d = first_difference(u, v, f"{at}[{i}]")
            if d is not None:
                return d
        return None if len(x) == len(y) else f"{at} ({len(x)} vs {len(y)} items)"
    return None if x == y and type(x) is type(y) else f"{at} ({json.dumps(x)[:80]} vs {json.dumps(y)[:80]})"


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1][len("Usage: "):],
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("page")
    ap.add_argument("--json")
    ap.add_argument("--leaks")
    ap.add_argument("--batch")
    ap.add_argument("--inefficient")
    ap.add_argument("--screenshot")
    ap.add_argument("--click-leak", action="store_true")
    ap.add_argument("--clocks", action="store_true")
    ap.add_argument("--has", nargs=2, action="append", default=[], metavar=("ID", "TEXT"))
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    if not shutil.which("chromium"):
        print("check_report: chromium not found (tests/install-deps.sh installs it)")
        sys.exit(77)
    rep, size = check_static(a.page)
    if a.json:
        where = first_difference(rep, json.load(open(a.json)), "")
        if where is not None:
            bad(f"the page's JSON is not --json's: first at {where}")
    check_json(rep)
    dom, ready = run_browser(a.page, a.timeout, a.screenshot, a.click_leak, rep)
    check_dom(rep, dom)
    if a.leaks:
        check_leaks(rep, a.leaks)
    if a.batch:
        check_batch(rep, a.batch)
    if a.inefficient:
        check_inefficient(rep, a.inefficient)
    if a.clocks:
        check_clocks(rep, dom)
    for vid, text in a.has:
        if text not in verdict(rep, vid).get("text", ""):
            bad(f"verdict {vid}: {verdict(rep, vid).get('text')!r} does not say {text!r}")
    for p in PROBLEMS:
        print(f"check_report: {p}")
    # the figures last, also after differences (bench_report.sh reads them)
    print(f"check_report: {'FAILED' if PROBLEMS else 'ok'}: {len(rep.get('verdicts', []))} "
          f"verdicts, page {size / 1e6:.2f} MB, ready in "
          f"{'-' if ready is None else round(ready)} ms")
    sys.exit(1 if PROBLEMS else 0)


if __name__ == "__main__":
    main()
