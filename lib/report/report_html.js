// memscope-report's page: draws the findings JSON of <script id="report"> (report-schema) into
// verdicts, charts and tables, findings first; no library, nothing fetched. The DOM it builds is
// the one tests read (report-dom.md). Embedded at build time by lib/CMakeLists.txt.
(function () {
	"use strict";

	var SVGNS = "http://www.w3.org/2000/svg";
	var COLOURS = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
		"#9c755f"];
	var SAMPLE_COLOURS = ["#616e7c", "#a47148", "#3f7f7a", "#8e6c9e", "#9aa5b1", "#b5838d",
		"#6b8e23", "#7a5c3e"];
	var SECTION_TITLES = { timeline: "Memory over time", blocks: "Largest blocks over time",
		leaks: "Leaks", steps: "Per step", where: "Where the memory goes",
		inefficient: "Memory held longer than needed", ranks: "Ranks",
		baseline: "Against the baseline", unchecked: "Not checked",
		notes: "Notes on reading the inputs" };
	var LEVEL_WORD = { bad: "problem", warn: "look", ok: "fine", info: "peak",
		unchecked: "not checked" };
	var R = null; // the findings
	var chartCount = 0; // charts drawn: their clip paths' ids
	var redraws = []; // each chart of memory over time drawn again (a curve shown or hidden)
	var rowsHaveDevices = false; // some rank has rows of several devices: name them
	var tip = null; // the one tooltip
	var errors = [];

	// ---- small helpers ----

	function el(tag, attrs, text) {
		var e = document.createElement(tag);
		setAttrs(e, attrs);
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function sv(tag, attrs, text) {
		var e = document.createElementNS(SVGNS, tag);
		setAttrs(e, attrs);
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function setAttrs(e, attrs) {
		var k;
		for (k in attrs || {})
			if (attrs[k] !== undefined && attrs[k] !== null)
				e.setAttribute(k, attrs[k]);
	}

	function add(parent, child) {
		parent.appendChild(child);
		return child;
	}

	function arr(v) {
		return Array.isArray(v) ? v : [];
	}

	function num(v) {
		return typeof v === "number" && isFinite(v);
	}

	// Bytes as memscope_bytes_text writes them: binary units, three significant digits.
	function bytesText(v) {
		var unit = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"], u = 0;
		if (!num(v))
			return "\u2014";
		if (v < 0)
			return "-" + bytesText(-v);
		if (v < 1023.5)
			return String(Math.round(v)) + " B";
		while (v >= 1023.5 && u < 6) {
			v /= 1024;
			u++;
		}
		return v.toFixed(v < 9.995 ? 2 : v < 99.95 ? 1 : 0) + " " + unit[u];
	}

	function signedBytes(v) {
		if (!num(v))
			return "\u2014";
		return (v > 0 ? "+" : v < 0 ? "\u2212" : "\u00b1") + bytesText(Math.abs(v));
	}

	// Seconds for people: "0.523 s", "12.5 s", "1 h 02 min"; ns is an integer of ns.
	function secText(ns) {
		var s = ns / 1e9, a = Math.abs(s);
		if (!num(ns))
			return "\u2014";
		if (a >= 3600)
			return Math.floor(s / 3600) + " h " + String(Math.floor(s % 3600 / 60)).padStart(2,
				"0") + " min";
		if (a >= 100)
			return s.toFixed(0) + " s";
		if (a >= 10)
			return s.toFixed(1) + " s";
		if (a >= 0.01 || a === 0)
			return s.toFixed(3) + " s";
		if (a >= 1e-5)
			return (ns / 1e6).toPrecision(3) + " ms";
		return (ns / 1e3).toPrecision(3) + " \u00b5s";
	}

	function countText(n, one, many) {
		return n + " " + (n === 1 ? one : many || one + "s");
	}

	function niceStep(span, n) {
		var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
		return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
	}

	// Round byte ticks in the binary unit of top: {top, ticks: [[bytes, label]]}.
	function byteTicks(max) {
		var names = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"], want = Math.max(1, max * 1.05),
			k = Math.min(6, Math.floor(Math.log(want) / Math.log(1024))), unit, step, top,
			ticks = [], i, d;
		if (k < 6 && want >= Math.pow(1024, k + 1))
			k++; // log's rounding
		unit = Math.pow(1024, k);
		step = k ? niceStep(want / unit, 5) : Math.max(1, niceStep(want, 5));
		top = Math.ceil(want / unit / step) * step;
		d = step < 1 ? Math.ceil(-Math.log10(step)) : 0;
		for (i = 0; i * step <= top + step / 2; i++)
			ticks.push([i * step * unit, (i * step).toFixed(d) + " " + names[k]]);
		return { top: top * unit, ticks: ticks };
	}

	// The unit of a time axis [from, to] ns wide: seconds, or ms or us for short spans.
	function timeUnit(span) {
		return span >= 2e9 ? { div: 1e9, word: "seconds" } : span >= 2e6 ? { div: 1e6,
			word: "milliseconds" } : { div: 1e3, word: "microseconds" };
	}

	// Time ticks over [from, to] ns, labelled in unit after base.
	function timeTicks(from, to, base, unit) {
		var span = Math.max(1, to - from), step = niceStep(span / unit.div, 8) * unit.div,
			ticks = [], t, d = step >= unit.div ? 0 : Math.ceil(-Math.log10(step / unit.div) -
				1e-9);
		for (t = Math.ceil((from - base) / step) * step + base; t <= to + step * 1e-9; t += step)
			ticks.push([t, ((t - base) / unit.div).toFixed(d)]);
		return ticks;
	}

	// An op's name as people say it: "aten.mm" for "torch._ops.aten.mm.default", a frame's
	// file without its folders: "churn (victim.h:22)" for "churn (/src/x/victim.h:22)".
	function shortName(n) {
		return String(n || "").replace(/^torch\._ops\./, "").replace(/\.default$/, "")
			.replace(/\((?:[^()]*\/)([^\/()]+)\)/g, "($1)");
	}

	function innermost(stack) {
		return stack ? arr(stack.python)[0] || arr(stack.c)[0] || "" : "";
	}

	// The innermost frame, its file without its folders ("optimizers.py(82): step").
	function firstFrame(stack) {
		return innermost(stack).replace(/^[^\s(]*\/(?=[^\s\/(]+[(:])/, "");
	}

	// Whether a block of a leak site is drawn as a leak: a step leak's, or any when the leaks
	// verdict calls them one (not when they are only alive where a profile or snapshot ends).
	function redLeak(b) {
		var site = siteById(b.site);
		return (site && site.kind === "step") || arr(R.verdicts).some(function (v) {
			return v.id === "leaks" && v.level === "bad";
		});
	}

	function hasStack(stack) {
		return !!stack && (arr(stack.python).length > 0 || arr(stack.c).length > 0);
	}

	function inputName(i) {
		var inp = arr(R.inputs)[i];
		return inp ? inp.name : "input " + i;
	}

	// ---- tooltip and stack panel ----

	function showTip(ev, lines) {
		var x = ev.clientX + 14, y = ev.clientY + 14;
		tip.textContent = "";
		lines.forEach(function (l, i) {
			add(tip, el(i ? "div" : "strong", null, l));
		});
		tip.hidden = false;
		if (x + tip.offsetWidth > window.innerWidth - 8)
			x = ev.clientX - tip.offsetWidth - 14;
		if (y + tip.offsetHeight > window.innerHeight - 8)
			y = ev.clientY - tip.offsetHeight - 14;
		tip.style.left = Math.max(4, x) + "px";
		tip.style.top = Math.max(4, y) + "px";
	}

	function hideTip() {
		tip.hidden = true;
	}

	// Opens the stack panel: what (a heading), op (op or owner), facts (lines), stack.
	function openStack(what, op, facts, stack) {
		var aside = document.getElementById("stack"), body = aside.querySelector(".body"),
			py = arr(stack && stack.python), c = arr(stack && stack.c), list;
		body.textContent = "";
		add(body, el("div", { "class": "what" }, what));
		add(body, el("div", { "class": "op" }, op || "(no op or owner recorded)"));
		facts.forEach(function (f) {
			if (f)
				add(body, el("div", { "class": "fact" }, f));
		});
		if (!py.length && !c.length)
			add(body, el("p", { "class": "none" }, "no call stack recorded"));
		if (py.length) {
			add(body, el("h4", null, "Python (innermost first)"));
			list = add(body, el("ol", { "class": "frames" }));
			py.forEach(function (f) {
				add(list, el("li", { "class": "frame py" }, f));
			});
		}
		if (c.length) {
			add(body, el("h4", null, "C / C++ (innermost first)"));
			list = add(body, el("ol", { "class": "frames" }));
			c.forEach(function (f) {
				add(list, el("li", { "class": "frame c" }, f));
			});
		}
		aside.hidden = false;
		document.querySelectorAll(".selected").forEach(function (e) {
			e.classList.remove("selected");
		});
	}

	// Marks element e (a row, a band) as the one whose stack the panel shows.
	function select(e) {
		if (e && e.classList)
			e.classList.add("selected");
	}

	function siteById(id) {
		var sites = arr(R.leaks && R.leaks.sites), i;
		for (i = 0; i < sites.length; i++)
			if (sites[i].id === id)
				return sites[i];
		return null;
	}

	function openSite(s) {
		openStack(s.kind === "step" ? "Leak from step " + s.first_step + " on" :
			s.kind === "exit" ? "Unreleased at the end" : "Leak (" + s.kind + ")",
		s.op || s.owner, [bytesText(s.bytes) + " in " + countText(s.count, "block"),
			"pool " + (s.pool || "?") + (arr(R.inputs).length > 1 ? ", " + inputName(s.input) :
				""),
			s.ranks > 1 ? "on " + s.ranks + " inputs" : "",
			num(s.ts_ns) ? "first allocated at " + secText(s.ts_ns) : ""], s.stack);
	}

	function openBlock(b) {
		var s = b.site !== null && b.site !== undefined ? siteById(b.site) : null;
		openStack(s ? "Leaked block" : "Block", b.op || b.owner, [bytesText(b.bytes),
			"allocated at " + secText(b.from_ns) + ", " + (num(b.to_ns) ? "freed at " +
				secText(b.to_ns) + " (held " + secText(b.to_ns - b.from_ns) + ")" :
				"never freed"),
			s ? "part of the leak of " + (s.op || s.owner) + ": " + bytesText(s.bytes) : ""],
		b.stack);
	}

	// ---- page frame ----

	function section(main, id, title, intro) {
		var s = add(main, el("section", { id: id }));
		add(s, el("h2", null, title));
		if (intro)
			add(s, el("p", { "class": "intro" }, intro));
		return s;
	}

	function header(main) {
		var inputs = arr(R.inputs), h = add(main, el("header")), p, det, ul, bad;
		add(h, el("h1", null, inputs.length === 1 ? inputs[0].name : inputs.length + " inputs"));
		p = add(h, el("p", { "class": "sub" }));
		bad = inputs.filter(function (x) {
			return x.status && x.status !== "ok";
		});
		p.textContent = "What " + (R.producer || "memscope-report").replace(/@.*/, "") +
			" found in " + (arr(R.inputs).length > 1 ? "these memory profiles" : "this memory " +
				"profile") + ": the findings first, each linking to its details " +
			"below. " +
			(inputs.length === 1 ? "Format " + inputs[0].format + (inputs[0].end ?
				", ended at " + inputs[0].end : "") + "." :
				"Details below are for " + inputName(R.detail || 0) + " (the highest peak).") +
			(bad.length ? " " + countText(bad.length, "input") + " could not be read." : "");
		if (inputs.length > 1) {
			det = add(h, el("details", { "class": "inputs" }));
			add(det, el("summary", null, "The " + inputs.length + " inputs"));
			ul = add(det, el("ul"));
			inputs.forEach(function (x) {
				add(ul, el("li", { "class": x.status === "ok" ? "" : "bad" }, x.name +
					(x.rank !== null && x.rank !== undefined ? " (rank " + x.rank +
						(x.node ? ", " + x.node : "") + ")" : "") +
					(x.status && x.status !== "ok" ? ": " + x.status + (x.error ? ", " +
						x.error : "") : "")));
			});
		}
	}

	function verdicts(main) {
		var ol = add(main, el("ol", { id: "verdicts" }));
		arr(R.verdicts).forEach(function (v) {
			var li = add(ol, el("li", { "class": "verdict", "data-id": v.id,
				"data-level": v.level }));
			if (num(v.bytes))
				li.setAttribute("data-bytes", String(v.bytes));
			if (num(v.count))
				li.setAttribute("data-count", String(v.count));
			add(li, el("span", { "class": "badge " + v.level }, LEVEL_WORD[v.level] || v.level));
			add(li, el("a", { href: "#" + (v.section || "unchecked") }, v.text));
		});
	}

	function nav(main, ids) {
		var names = { timeline: "Over time", blocks: "Blocks", leaks: "Leaks", steps: "Per step",
			where: "Where", inefficient: "Held too long", ranks: "Ranks",
			baseline: "Baseline", unchecked: "Not checked", notes: "Notes" }, n;
		n = add(main, el("nav"));
		ids.forEach(function (id) {
			add(n, el("a", { href: "#" + id }, names[id]));
		});
	}

	// ---- memory over time ----

	function trackColour(i) {
		return COLOURS[i % COLOURS.length];
	}

	// The hi value of track tr at time t (the column at or before t).
	function valueAt(tr, t) {
		var p = arr(tr.points), lo = 0, hi = p.length - 1, m;
		if (!p.length || t < p[0][0])
			return null;
		while (lo < hi) {
			m = (lo + hi + 1) >> 1;
			if (p[m][0] <= t)
				lo = m;
			else
				hi = m - 1;
		}
		return p[lo][2];
	}

	// One plot: frame, axes and scales; opts {from, to, base, ymax, height, width}.
	function plot(opts) {
		var W = opts.width, H = opts.height, L = 78, Rm = 16, T = 26, B = 34,
			g = { svg: sv("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H,
				"class": "chart" }), L: L, T: T, PW: W - L - Rm, PH: H - T - B },
			yt = byteTicks(opts.ymax), span = Math.max(1, opts.to - opts.from),
			unit = opts.unit || timeUnit(span);
		g.ytop = yt.top;
		g.x = opts.xfrac ? function (t) {
			return g.L + opts.xfrac(t) * g.PW;
		} : function (t) {
			return g.L + (t - opts.from) / span * g.PW;
		};
		g.t = function (x) {
			return opts.from + (x - g.L) / g.PW * span;
		};
		g.y = function (b) {
			return g.T + g.PH - b / g.ytop * g.PH;
		};
		g.bands = add(g.svg, sv("g", { "class": "bands" }));
		g.axes = add(g.svg, sv("g", { "class": "axes" }));
		yt.ticks.forEach(function (tk) {
			var y = g.y(tk[0]).toFixed(1);
			add(g.axes, sv("line", { "class": "grid", x1: L, x2: L + g.PW, y1: y, y2: y }));
			add(g.axes, sv("text", { "class": "ytick", x: L - 6, y: +y + 4 }, tk[1]));
		});
		(opts.ticks || timeTicks(opts.from, opts.to, opts.base, unit)).forEach(function (tk) {
			var x = g.x(tk[0]).toFixed(1);
			add(g.axes, sv("line", { "class": "xtickline", x1: x, x2: x, y1: T + g.PH,
				y2: T + g.PH + 4 }));
			add(g.axes, sv("text", { "class": "xtick", x: x, y: T + g.PH + 17 }, tk[1]));
		});
		add(g.axes, sv("text", { "class": "axislabel", x: L + g.PW, y: H - 3 },
			(opts.xlabel || "seconds").replace("seconds", unit.word)));
		add(g.axes, sv("rect", { "class": "frame", x: L, y: T, width: g.PW, height: g.PH }));
		g.plot = add(g.svg, sv("g", { "class": "plot" }));
		g.marks = add(g.svg, sv("g", { "class": "marks" }));
		return g;
	}

	// A track's curve through each column's highest live bytes (with a column's last value, a
	// 4th member where the library gives it, the curve steps: it holds that value until the next
	// column), and its range: each column's lowest to highest as a vertical stroke.
	function trackPaths(g, tr, colour) {
		var p = arr(tr.points), line = [], range = [], i, x, prevLast = null;
		for (i = 0; i < p.length; i++) {
			x = g.x(p[i][0]).toFixed(1);
			if (prevLast !== null)
				line.push("H" + x + "V" + g.y(p[i][2]).toFixed(1));
			else
				line.push((i ? "L" : "M") + x + " " + g.y(p[i][2]).toFixed(1));
			if (num(p[i][3])) {
				line.push("V" + g.y(p[i][3]).toFixed(1));
				prevLast = p[i][3];
			}
			if (p[i][1] !== p[i][2])
				range.push("M" + x + " " + g.y(p[i][1]).toFixed(1) + "V" + g.y(p[i][2]).toFixed(
					1));
		}
		if (!p.length)
			return;
		if (range.length)
			add(g.plot, sv("path", { "class": "track-range", "data-track": tr.id,
				d: range.join(""), stroke: colour, style: tr.off ? "display:none" : null }));
		add(g.plot, sv("path", { "class": "track", "data-track": tr.id, d: line.join(""),
			stroke: colour, style: tr.off ? "display:none" : null }));
	}

	function stepBands(g, steps, from, to) {
		var prev = -1e9, first = {};
		arr(R.steps).forEach(function (r) {
			if (r.leak_first)
				first[r.number] = 1;
		});
		steps.forEach(function (s, i) {
			var a = Math.max(from, s.from_ns), b = Math.min(to, s.to_ns), x0, x1;
			if (!(b >= a)) // outside the axis: there, without width
				b = a = Math.min(to, Math.max(from, s.from_ns));
			x0 = g.x(a);
			x1 = g.x(b);
			add(g.bands, sv("rect", { "class": "step-band" + (i % 2 ? " odd" : "") +
				(first[s.number] ? " leak-first" : ""),
				"data-step": s.number, x: x0.toFixed(1), y: g.T,
				width: (x1 > x0 ? Math.max(0.5, x1 - x0) : 0).toFixed(1), height: g.PH }));
			if (first[s.number] && x1 - x0 >= 2)
				add(g.bands, sv("text", { "class": "steplabel leak", x: x0.toFixed(1),
					y: g.T + g.PH - 6 }, "\u25b8 leak starts"));
			if (x1 - x0 >= 16 && x0 - prev >= 22) {
				add(g.bands, sv("text", { "class": "steplabel", x: ((x0 + x1) / 2).toFixed(1),
					y: g.T - 6 }, s.number));
				prev = x0;
			}
		});
		if (steps.length)
			add(g.bands, sv("text", { "class": "steplabel key", x: g.L - 6, y: g.T - 6 },
				"step"));
	}

	function peakMarker(g, pk) {
		var x = g.x(pk.ts_ns), y = g.y(pk.bytes), m = add(g.marks, sv("g", {
			"class": "peak-marker", "data-bytes": pk.bytes })), right = x < g.L + g.PW * 0.6;
		add(m, sv("line", { x1: x.toFixed(1), x2: x.toFixed(1), y1: y.toFixed(1),
			y2: g.T + g.PH }));
		add(m, sv("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 5 }));
		add(m, sv("text", { x: (x + (right ? 9 : -9)).toFixed(1), y: Math.max(g.T + 12, y -
			8).toFixed(1), "text-anchor": right ? "start" : "end" }, "peak " +
			bytesText(pk.bytes) + " at " + secText(pk.ts_ns) + (num(pk.step) ? " (step " +
				pk.step + ")" : "")));
	}

	// A leak site's marker: a triangle above the plot at its first block's allocation, and a
	// dot on the curve at each of its blocks.
	function leakMarker(g, site, blocks, tr) {
		var m = add(g.marks, sv("g", { "class": "leak-marker", "data-site": site.id,
			tabindex: 0 })), x0 = g.x(blocks[0].from_ns);
		add(m, sv("title", null, "leak: " + (site.op || site.owner || "?") + ", " +
			bytesText(site.bytes) + " in " + countText(site.count, "block") +
			": click for its stack"));
		add(m, sv("line", { "class": "leakline", x1: x0.toFixed(1), x2: x0.toFixed(1),
			y1: g.T, y2: g.T + g.PH }));
		add(m, sv("path", { "class": "leaktri", d: "M" + (x0 - 6).toFixed(1) + " " + (g.T -
			1) + "l12 0l-6 9z" }));
		blocks.forEach(function (b) {
			var v = tr ? valueAt(tr, b.from_ns) : null;
			add(m, sv("circle", { "class": "leakdot", cx: g.x(b.from_ns).toFixed(1),
				cy: g.y(v === null ? 0 : v).toFixed(1), r: 3.5 }));
		});
		m.addEventListener("click", function () {
			openSite(site);
		});
		m.addEventListener("keydown", function (ev) {
			if (ev.key === "Enter" || ev.key === " ")
				openSite(site);
		});
	}

	function hover(g, tracks, steps) {
		var cursor = add(g.marks, sv("line", { "class": "cursor", y1: g.T, y2: g.T + g.PH,
			visibility: "hidden" }));
		g.svg.addEventListener("mousemove", function (ev) {
			var r = g.svg.getBoundingClientRect(), x = ev.clientX - r.left, t, lines, st;
			if (x < g.L || x > g.L + g.PW || ev.target.closest(".leak-marker")) {
				cursor.setAttribute("visibility", "hidden");
				hideTip();
				return;
			}
			t = g.t(x);
			cursor.setAttribute("x1", x.toFixed(1));
			cursor.setAttribute("x2", x.toFixed(1));
			cursor.setAttribute("visibility", "visible");
			st = steps.filter(function (s) {
				return s.from_ns <= t && t <= s.to_ns;
			})[0];
			lines = [secText(t) + (st ? ", step " + st.number : "")];
			tracks.forEach(function (tr) {
				var v = valueAt(tr, t);
				if (v !== null && !tr.off)
					lines.push(tr.label + ": " + bytesText(v));
			});
			showTip(ev, lines);
		});
		g.svg.addEventListener("mouseleave", function () {
			cursor.setAttribute("visibility", "hidden");
			hideTip();
		});
	}

	function samplePaths(g, samples) {
		samples.forEach(function (smp, i) {
			var d = arr(smp.points).map(function (p, k) {
				return (k ? "L" : "M") + g.x(p[0]).toFixed(1) + " " + g.y(p[1]).toFixed(1);
			}).join("");
			if (d)
				add(g.plot, sv("path", { "class": "sample " + (smp.series || ""), d: d,
					"data-sample": i, stroke: SAMPLE_COLOURS[i % SAMPLE_COLOURS.length],
					style: smp.off ? "display:none" : null }));
		});
	}

	// One chart of tracks on one time axis: [from, to], the steps, peak and leaks on it.
	// One chart of tracks on one time axis: [from, to], the steps, peak and leaks on it; a drag
	// across the plot zooms in to that time, a double click (or the button) back out.
	function chart(parent, tracks, from, to, base, width, withSteps, pk, xlabel) {
		var tl = R.timeline, box = add(parent, el("div", { "class": "chartbox zoomable" })),
			view = { from: from, to: to }, n = chartCount++;
		function render() {
			var g, drawn = {}, ymax = 1, clip, zoomed = view.from !== from || view.to !== to;
			function see(t, v) {
				if (t >= view.from && t <= view.to)
					ymax = Math.max(ymax, v);
			}
			tracks.forEach(function (tr) {
				if (!tr.off)
					arr(tr.points).forEach(function (p) {
						see(p[0], p[2]);
					});
			});
			if (withSteps)
				arr(tl.samples).forEach(function (smp) {
					if (!smp.off)
						arr(smp.points).forEach(function (p) {
							see(p[0], p[1]);
						});
				});
			if (pk)
				see(pk.ts_ns, pk.bytes);
			g = plot({ from: view.from, to: view.to, base: base, ymax: ymax, width: width,
				height: 340, xlabel: xlabel });
			clip = add(add(g.svg, sv("defs")), sv("clipPath", { id: "clip" + n }));
			add(clip, sv("rect", { x: g.L, y: 0, width: g.PW, height: g.T + g.PH }));
			[g.bands, g.plot, g.marks].forEach(function (x) {
				x.setAttribute("clip-path", "url(#clip" + n + ")");
			});
			if (withSteps) {
				stepBands(g, arr(tl.steps), view.from, view.to);
				samplePaths(g, arr(tl.samples));
			}
			tracks.forEach(function (tr) {
				trackPaths(g, tr, tr.colour);
				drawn[tr.id] = tr;
			});
			leakMarkers(g, drawn);
			if (pk)
				peakMarker(g, pk);
			hover(g, tracks, withSteps ? arr(tl.steps) : []);
			box.textContent = "";
			box.appendChild(g.svg);
			if (zoomed)
				add(box, el("button", { type: "button", "class": "unzoom" }, "show all " +
					"(double click)")).addEventListener("click", reset);
			zoomDrag(g, function (a, b) {
				if (b - a < 1000)
					return;
				view.from = a;
				view.to = b;
				render();
			});
		}
		function reset() {
			view.from = from;
			view.to = to;
			render();
		}
		box.addEventListener("dblclick", reset);
		redraws.push(render);
		render();
	}

	// A drag across g's plot: a shaded selection, then done(from, to) in ns.
	function zoomDrag(g, done) {
		var x0 = null, sel = add(g.marks, sv("rect", { "class": "zoomsel", y: g.T, height: g.PH,
			width: 0, visibility: "hidden" }));
		function px(ev) {
			var r = g.svg.getBoundingClientRect();
			return Math.min(g.L + g.PW, Math.max(g.L, ev.clientX - r.left));
		}
		function move(ev) {
			var x = px(ev);
			sel.setAttribute("x", Math.min(x, x0).toFixed(1));
			sel.setAttribute("width", Math.abs(x - x0).toFixed(1));
			sel.setAttribute("visibility", "visible");
		}
		function up(ev) {
			var x = px(ev), a = Math.min(x, x0), b = Math.max(x, x0);
			window.removeEventListener("mousemove", move);
			window.removeEventListener("mouseup", up);
			sel.setAttribute("visibility", "hidden");
			x0 = null;
			if (b - a >= 5)
				done(g.t(a), g.t(b));
		}
		g.svg.addEventListener("mousedown", function (ev) {
			var r = g.svg.getBoundingClientRect(), x = ev.clientX - r.left;
			if (ev.button !== 0 || x < g.L || x > g.L + g.PW || ev.target.closest(
				".leak-marker"))
				return;
			ev.preventDefault();
			x0 = x;
			window.addEventListener("mousemove", move);
			window.addEventListener("mouseup", up);
		});
	}

	// A site the leaks list does not hold (cut at its limit): what its blocks say.
	function blocksSite(id, bl) {
		return { id: id, kind: "leak", op: bl[0].op, owner: bl[0].owner, count: bl.length,
			bytes: bl.reduce(function (t, b) {
				return t + b.bytes;
			}, 0), ts_ns: bl[0].from_ns, stack: bl[0].stack };
	}

	function leakMarkers(g, drawn) {
		var by = {};
		arr(R.timeline.blocks).forEach(function (b) {
			if (b.site === null || b.site === undefined || !drawn[b.track])
				return;
			(by[b.site] = by[b.site] || []).push(b);
		});
		Object.keys(by).forEach(function (k) {
			var site = siteById(+k), bl = by[k].sort(function (a, b) {
				return a.from_ns - b.from_ns;
			});
			leakMarker(g, site || blocksSite(+k, bl), bl, drawn[bl[0].track]);
		});
	}

	function redrawCharts() {
		redraws.forEach(function (f) {
			f();
		});
	}

	// The profiler's own samples (reserved, allocated, active), dashed, each shown or hidden;
	// those far above the live bytes hidden at first, so they do not flatten the curves.
	function hideHighSamples(samples, tracks) {
		var live = 0;
		tracks.forEach(function (tr) {
			live = Math.max(live, tr.peak || 0);
		});
		samples.forEach(function (smp) {
			var top = 0;
			arr(smp.points).forEach(function (p) {
				top = Math.max(top, p[1]);
			});
			smp.off = live > 0 && top > 4 * live;
		});
	}

	function sampleLegend(parent, samples) {
		var ul, hidden = samples.filter(function (smp) {
			return smp.off;
		}).length;
		if (!samples.length)
			return;
		add(parent, el("div", { "class": "small muted" }, "The profiler's own samples " +
			"(dashed" + (hidden ? "; those far above the live bytes hidden, click to show" :
				"") + "):"));
		ul = add(parent, el("ul", { "class": "samples" }));
		samples.forEach(function (smp, i) {
			var li = add(ul, el("li", { title: "click to hide or show" }));
			add(li, el("span", { "class": "swatch dashed " + (smp.series || ""),
				style: "border-color:" + SAMPLE_COLOURS[i % SAMPLE_COLOURS.length] }));
			add(li, el("span", { "class": "name", title: smp.clock ? smp.clock.note : null },
				(smp.label || smp.series) + (smp.clock ? " (own clock \u26a0)" : "")));
			if (smp.off)
				li.classList.add("off");
			li.addEventListener("click", function () {
				smp.off = !smp.off;
				li.classList.toggle("off", smp.off);
				redrawCharts();
			});
		});
	}

	function legend(parent, tracks, more) {
		var ul = add(parent, el("ul", { "class": "legend" }));
		tracks.slice(0, 8).forEach(function (tr) {
			var li = add(ul, el("li", { "data-track": tr.id, title: "click to hide or show" }));
			add(li, el("span", { "class": "swatch", style: "background:" + tr.colour }));
			add(li, el("span", { "class": "name" }, tr.label));
			add(li, el("span", { "class": "val" }, "peak " + bytesText(tr.peak) +
				(tr.ownAxis ? " \u2014 own axis" : "")));
			li.addEventListener("click", function () {
				tr.off = !tr.off;
				li.classList.toggle("off", tr.off);
				redrawCharts();
			});
		});
		if (more > 0 || tracks.length > 8)
			add(ul, el("li", { "class": "more" }, (more + Math.max(0, tracks.length - 8)) +
				" more with lower peaks, not drawn"));
		return ul;
	}

	// What held the peak: the top owners and the rest grouped, as bars.
	function holders(parent) {
		var pk = R.peak, box, ul, owners = arr(pk.owners), top = owners.slice(0, 6),
			restBytes = 0, restN = 0, max = 1, rows = {};
		box = add(parent, el("div", { "class": "holders" }));
		add(box, el("h3", null, "What held the peak"));
		add(box, el("p", { "class": "small" }, bytesText(pk.bytes) + " in " + (pk.pool || "?") +
			(pk.device !== null && pk.device !== undefined ? ", device " + pk.device : "") +
			" at " + secText(pk.ts_ns) + (num(pk.step) ? ", step " + pk.step : "")));
		owners.slice(6).forEach(function (o) {
			restBytes += o.bytes;
			restN++;
		});
		if (pk.rest) {
			restBytes += pk.rest.bytes || 0;
			restN += pk.rest.owners || 0;
		}
		arr(R.where && R.where.rows).forEach(function (r) {
			rows[r.name] = r;
		});
		top.forEach(function (o) {
			max = Math.max(max, o.bytes);
		});
		max = Math.max(max, restBytes);
		ul = add(box, el("ul", { "class": "holders bars" }));
		top.forEach(function (o) {
			var li = barRow(ul, o.name, o.bytes, max, pk.bytes), r = rows[o.name];
			li.setAttribute("data-name", o.name);
			if (r && hasStack(r.stack)) {
				li.classList.add("click");
				li.title = "click for its stack";
				li.addEventListener("click", function () {
					openStack("Held at the peak", o.name, [bytesText(o.bytes) + " in " +
						countText(o.blocks, "block")], r.stack);
				});
			}
		});
		if (restN)
			barRow(ul, countText(restN, "other") + " together", restBytes, max, pk.bytes)
				.classList.add("rest");
	}

	function barRow(ul, name, bytes, max, total) {
		var li = add(ul, el("li")), bar;
		add(li, el("span", { "class": "name", title: name }, shortName(name)));
		bar = add(li, el("span", { "class": "bar" }));
		add(bar, el("span", { style: "width:" + (100 * bytes / max).toFixed(1) + "%" }));
		add(li, el("span", { "class": "val" }, bytesText(bytes) + (total ? " \u00b7 " +
			(bytes > 0 && bytes < total / 100 ? "<1" : Math.round(100 * bytes / total)) + "%" :
			"")));
		return li;
	}

	// The tracks in groups drawn on one axis each: those without a clock note, then those of
	// each note (a note is an input's: its files' clocks disagree). A group whose points lie in
	// the timeline's axis (the library drew them from the input's start) keeps that axis.
	function axisGroups(tracks, tl) {
		var groups = [], byNote = {};
		tracks.forEach(function (tr) {
			var key = tr.clock ? "c:" + (tr.clock.note || "") : "";
			if (!byNote[key]) {
				byNote[key] = { note: tr.clock ? tr.clock.note || "its clock differs" : null,
					tracks: [] };
				groups.push(byNote[key]);
			}
			byNote[key].tracks.push(tr);
		});
		groups.sort(function (x, y) {
			return (x.note === null ? 0 : 1) - (y.note === null ? 0 : 1);
		});
		groups.forEach(function (g) {
			var lo = Infinity, hi = -Infinity;
			g.tracks.forEach(function (tr) {
				arr(tr.points).forEach(function (p) {
					lo = Math.min(lo, p[0]);
					hi = Math.max(hi, p[0]);
				});
			});
			g.own = g.note !== null && lo <= hi && (lo < tl.from_ns || hi > tl.to_ns);
			g.tracks.forEach(function (tr) {
				tr.ownAxis = g.own;
			});
			g.from = g.own ? lo : tl.from_ns;
			g.to = g.own ? Math.max(hi, lo + 1) : tl.to_ns;
		});
		if (!groups.length)
			groups.push({ note: null, tracks: [], own: false, from: tl.from_ns, to: tl.to_ns });
		return groups;
	}

	function timeline(main, width) {
		var tl = R.timeline, s, tracks = arr(tl.tracks), pk = R.peak, row, left, side, groups,
			w = width - (pk ? 330 : 0), peakDrawn = false;
		s = section(main, "timeline", "Memory over time", (arr(R.inputs).length > 1 ? "Of " +
			inputName(R.detail || 0) + ", the input with the highest peak. " : "") +
			"Live bytes of each device and pool. Shaded bands are training steps; the dot is the peak; red marks are " +
			"blocks that were never freed (click one for its call stack). Drag across the " +
			"plot to zoom in.");
		tracks.forEach(function (tr, i) {
			tr.colour = trackColour(i);
			tr.isPeak = !!pk && tr.input === pk.input && tr.pool === pk.pool &&
				String(tr.device) === String(pk.device) && (pk.pid === undefined ||
					pk.pid === null || tr.pid === pk.pid);
		});
		if (pk && tracks.length && !tracks.some(function (tr) {
			return tr.isPeak;
		}))
			tracks[0].isPeak = true;
		groups = axisGroups(tracks, tl);
		hideHighSamples(arr(tl.samples), tracks);
		groups.forEach(function (g) {
			if (g.note !== null)
				add(s, el("div", { "class": "clock-warning" }, "\u26a0 Clocks disagree: " +
					g.note + ". " + (g.own ? "These curves are drawn below on their own " +
						"time axis." : "The times below are counted from the input's " +
						"start; times of different files cannot be compared.")));
		});
		row = add(s, el("div", { "class": "row" }));
		left = add(row, el("div", { "class": "grow" }));
		groups.forEach(function (g, i) {
			var withPeak = !peakDrawn && (g.tracks.some(function (tr) {
				return tr.isPeak;
			}) || i === groups.length - 1);
			if (g.own)
				add(left, el("h3", { "class": "ownaxis" }, g.tracks.map(function (tr) {
					return tr.label;
				}).join(", ") + " on " + (g.tracks.length > 1 ? "their" : "its") +
					" own time axis"));
			chart(left, g.tracks, g.from, g.to, g.from, w, i === 0, withPeak && pk,
				g.own ? "seconds from its first point" : "seconds from the start");
			peakDrawn = peakDrawn || withPeak;
		});
		side = add(row, el("div", { "class": "side" }));
		legend(side, tracks, tl.more_tracks || 0);
		sampleLegend(side, arr(tl.samples));
		if (pk)
			holders(side);
		fragmentation(s);
	}

	function fragmentation(s) {
		var f = R.fragmentation, p;
		if (!f || !f.checked)
			return;
		p = add(s, el("p", { "class": "frag" }));
		p.textContent = "Fragmentation: at " + secText(f.ts_ns) + " the pool reserved " +
			bytesText(f.reserved_bytes) + " and allocated " + bytesText(f.allocated_bytes) +
			" (" + bytesText(f.reserved_bytes - f.allocated_bytes) + " reserved but unused" +
			(num(f.gap_bytes) ? "; largest free gap " + bytesText(f.gap_bytes) : "") + ").";
	}

	// ---- active blocks (memory_viz's style) ----

	// Places each block at the lowest offset where it overlaps no block alive at the same
	// time (first fit, in allocation order); returns the highest offset reached.
	function packBlocks(blocks, end) {
		var placed = [], top = 0;
		blocks.slice().sort(function (a, b) {
			return a.from_ns - b.from_ns || b.bytes - a.bytes;
		}).forEach(function (b) {
			var to = num(b.to_ns) ? b.to_ns : end, busy = [], y = 0, i;
			placed.forEach(function (p) {
				if (p.from < to && b.from_ns < p.to)
					busy.push(p);
			});
			busy.sort(function (p, q) {
				return p.y - q.y;
			});
			for (i = 0; i < busy.length; i++) {
				if (y + b.bytes <= busy[i].y)
					break;
				y = Math.max(y, busy[i].y + busy[i].b.bytes);
			}
			b.y = y;
			placed.push({ from: b.from_ns, to: to, y: y, b: b });
			top = Math.max(top, y + b.bytes);
		});
		return top;
	}

	function opColour(name) {
		var h = 0, i;
		if (!name)
			return "#b8c2cc";
		for (i = 0; i < name.length; i++)
			h = (h * 31 + name.charCodeAt(i)) >>> 0;
		return "hsl(" + (h % 360) + ",45%," + (62 + h % 3 * 6) + "%)";
	}

	// The blocks' x axis in event order (memory_viz's): each allocation and free one step, so
	// short-lived blocks stay visible; ticks name the time of a few events.
	function orderAxis(blocks, end) {
		var ts = [], i, n, ticks = [], k, unit;
		blocks.forEach(function (b) {
			ts.push(b.from_ns, num(b.to_ns) ? b.to_ns : end);
		});
		ts.sort(function (x, y) {
			return x - y;
		});
		ts = ts.filter(function (t, j) {
			return !j || t !== ts[j - 1];
		});
		n = Math.max(1, ts.length - 1);
		k = Math.max(1, Math.ceil(ts.length / 8));
		unit = timeUnit(ts[ts.length - 1] - ts[0]);
		for (i = 0; i < ts.length; i += k)
			ticks.push([ts[i], (ts[i] / unit.div).toPrecision(3)]);
		return { ticks: ticks, unit: unit, xfrac: function (t) {
			var lo = 0, hi = ts.length - 1, m;
			while (lo < hi) {
				m = (lo + hi) >> 1;
				if (ts[m] < t)
					lo = m + 1;
				else
					hi = m;
			}
			return lo / n;
		} };
	}

	function blocksView(main, width) {
		var tl = R.timeline, blocks = arr(tl.blocks), tracks = arr(tl.tracks), tr, from, to, s,
			top, box, byId = {}, order, bar, inOrder = true;
		if (!blocks.length)
			return;
		tr = tracks.filter(function (t) {
			return t.id === blocks[0].track;
		})[0];
		from = tl.from_ns;
		to = tl.to_ns;
		if (tr && tr.ownAxis && arr(tr.points).length) {
			from = tr.points[0][0];
			to = tr.points[tr.points.length - 1][0];
		}
		s = section(main, "blocks", "Largest blocks over time", "Each band is one of the " +
			blocks.length + " largest blocks" + (tr ? " of " + tr.label : "") + ", from its " +
			"allocation to its free, stacked where it fits (as in PyTorch's memory_viz). " +
			"Red bands are leaked blocks, outlined ones were still alive at the end. Click a " +
			"band for its call stack.");
		bar = add(s, el("div", { "class": "toggle" }));
		top = packBlocks(blocks, to);
		order = orderAxis(blocks, to);
		blocks.forEach(function (b) {
			byId[b.id] = b;
		});
		box = add(s, el("div", { "class": "chartbox" }));
		function draw() {
			var g = plot({ from: from, to: to, base: from, ymax: top, width: width, height: 300,
				xlabel: inOrder ? "allocations and frees in order (seconds at the ticks)" :
					"seconds", xfrac: inOrder ? order.xfrac : null, ticks: inOrder ?
					order.ticks : null, unit: inOrder ? order.unit : null });
			blocks.forEach(function (b) {
				var x0 = g.x(b.from_ns), x1 = g.x(num(b.to_ns) ? b.to_ns : to),
					y0 = g.y(b.y + b.bytes), y1 = g.y(b.y), site = b.site !== null &&
						b.site !== undefined, red = site && redLeak(b);
				add(g.plot, sv("rect", { "class": "block" + (red ? " leaked" : site ? " atend" :
					num(b.to_ns) ? "" : " live") + (y1 - y0 < 4 ? " thin" : ""), "data-block": b.id, "data-site": site ? b.site :
					"", x: x0.toFixed(1), y: y0.toFixed(1), width: Math.max(1, x1 - x0).toFixed(1),
				height: Math.max(1, y1 - y0).toFixed(1), fill: red ? null :
					opColour(b.op || b.owner) }));
			});
			box.textContent = "";
			box.appendChild(g.svg);
		}
		["in order", "in time"].forEach(function (label, i) {
			var b = add(bar, el("button", { type: "button", "class": i ? "" : "on" }, "x axis " +
				label));
			b.addEventListener("click", function () {
				inOrder = !i;
				bar.querySelectorAll("button").forEach(function (x, j) {
					x.classList.toggle("on", j === i);
				});
				draw();
			});
		});
		box.addEventListener("click", function (ev) {
			var b = ev.target.closest(".block");
			if (b) {
				openBlock(byId[b.getAttribute("data-block")]);
				select(b);
			}
		});
		box.addEventListener("mousemove", function (ev) {
			var r = ev.target.closest(".block"), b = r && byId[r.getAttribute("data-block")];
			if (!b)
				return hideTip();
			showTip(ev, [shortName(b.op || b.owner || "block") + ": " + bytesText(b.bytes),
				secText(b.from_ns) + " \u2192 " + (num(b.to_ns) ? secText(b.to_ns) :
					"never freed"), firstFrame(b.stack)]);
		});
		box.addEventListener("mouseleave", hideTip);
		draw();
		blockKey(s, blocks);
	}

	// The blocks' colours: the ops (or owners) with the most bytes, and the leaked ones' red.
	function blockKey(s, blocks) {
		var by = {}, ul = add(s, el("ul", { "class": "blockkey" })), li;
		blocks.forEach(function (b) {
			var k = b.op || b.owner || "";
			if (b.site === null || b.site === undefined || !redLeak(b))
				by[k] = (by[k] || 0) + b.bytes;
		});
		Object.keys(by).sort(function (a, b) {
			return by[b] - by[a];
		}).slice(0, 8).forEach(function (k) {
			li = add(ul, el("li"));
			add(li, el("span", { "class": "chip", style: "background:" + opColour(k) }));
			add(li, document.createTextNode(shortName(k) || "(no op)"));
		});
		[["leaked", "never freed (leak)"], ["atend", "alive at the end"]]
			.forEach(function (k) {
				if (!blocks.some(function (b) {
					return b.site !== null && b.site !== undefined && redLeak(b) ===
						(k[0] === "leaked");
				}))
					return;
				li = add(ul, el("li"));
				add(li, el("span", { "class": "chip " + k[0] }));
				add(li, document.createTextNode(k[1]));
			});
	}

	// ---- leaks ----

	function leaksView(main) {
		var L = R.leaks, sites = arr(L.sites), s, p, t, tb, multi = arr(R.inputs).length > 1,
			stacks;
		s = section(main, "leaks", "Leaks");
		p = add(s, el("p", { "class": "intro" }));
		p.textContent = "Unreleased at the end (" + (L.end || "?") + "): " +
			countText((L.exit && L.exit.count) || 0, "block") + ", " +
			bytesText((L.exit && L.exit.bytes) || 0) + ". " + (L.steps_checked ?
				"Held from one step to the next (step leaks): " + countText((L.step &&
					L.step.count) || 0, "block") + ", " + bytesText((L.step && L.step.bytes) ||
					0) + (L.step && num(L.step.first_step) ? ", starting in step " +
					L.step.first_step : "") + "." : "Step leaks not checked: " + (L.why ||
					"no steps") + ".");
		if (!sites.length) {
			add(s, el("p", { "class": "ok" }, "No leaked block."));
			return;
		}
		stacks = sites.some(function (x) {
			return hasStack(x.stack);
		});
		add(s, el("p", { "class": "small" }, "Where they were allocated, most bytes first. " +
			(stacks ? "Click a row for its call stack." : "No call stacks were recorded: " +
				"the op or owner tells where.")));
		t = add(add(s, el("div", { "class": "tablebox" })), el("table"));
		tb = headRow(t, ["Bytes", "Blocks", "Kind", "Pool", "Op or owner", "First step"]
			.concat(multi ? ["Inputs"] : []).concat(stacks ? ["Allocated at"] : []), multi ?
			[0, 1, 5, 6] : [0, 1, 5]);
		sites.forEach(function (x) {
			var tr = add(tb, el("tr", { "class": "site click", "data-site": x.id,
				"data-bytes": x.bytes }));
			bcell(tr, x.bytes);
			add(tr, el("td", { "class": "num" }, x.count));
			add(tr, el("td")).appendChild(el("span", { "class": "kind " + x.kind }, x.kind ===
				"step" ? "step leak" : x.kind === "exit" ? "at end" : x.kind));
			add(tr, el("td", null, x.pool || ""));
			add(tr, el("td", { "class": "name" + (x.op || x.owner ? "" : " muted") }, x.op ||
				x.owner || "(no op or owner)"));
			add(tr, el("td", { "class": "num" }, num(x.first_step) ? x.first_step : ""));
			if (multi)
				add(tr, el("td", { "class": "num" }, x.ranks || 1));
			if (stacks)
				add(tr, el("td", { "class": "frame1", title: innermost(x.stack) }, firstFrame(
					x.stack) ||
					"(no call stack)"));
			tr.addEventListener("click", function () {
				openSite(x);
				select(tr);
			});
		});
	}

	// The table's head; a click on a column's name sorts the rows by it (numbers by their
	// data-v, else by the text), again the other way. Returns the body.
	function headRow(t, names, numeric) {
		var tr = add(add(t, el("thead")), el("tr")), tb;
		names.forEach(function (n, i) {
			var th = add(tr, el("th", { "class": numeric.indexOf(i) >= 0 ? "num" : null }, n));
			if (n)
				th.addEventListener("click", function () {
					sortBy(tb, i, numeric.indexOf(i) >= 0, th);
				});
		});
		tb = add(t, el("tbody"));
		return tb;
	}

	function sortBy(tb, i, numeric, th) {
		var down = th.getAttribute("data-sort") !== "down", rows = Array.prototype.slice.call(
			tb.rows), key = function (r) {
			var c = r.cells[i], v = c ? c.getAttribute("data-v") : null;
			if (numeric)
				return v !== null ? +v : parseFloat(c ? c.textContent : "") || 0;
			return c ? c.textContent : "";
		};
		th.parentNode.querySelectorAll("th").forEach(function (h) {
			h.removeAttribute("data-sort");
		});
		th.setAttribute("data-sort", down ? "down" : "up");
		rows.sort(function (a, b) {
			var x = key(a), y = key(b), c = numeric ? x - y : x.localeCompare(y);
			return down ? -c : c;
		});
		rows.forEach(function (r) {
			tb.appendChild(r);
		});
	}

	// A cell of a difference in bytes, signed.
	function sbcell(tr, v, cls) {
		return add(tr, el("td", { "class": "num" + (cls ? " " + cls : ""), "data-v": num(v) ? v :
			"" }, signedBytes(v)));
	}

	// A cell of bytes: the text, and the raw integer in data-v for sorting.
	function bcell(tr, v, cls) {
		return add(tr, el("td", { "class": "num" + (cls ? " " + cls : ""), "data-v": num(v) ? v :
			"" }, bytesText(v)));
	}

	// ---- steps ----

	function stepsView(main) {
		var rows = arr(R.steps), gr = R.growth, s, t, tb, prev = null, max = 1;
		s = section(main, "steps", "Per step");
		add(s, el("p", { "class": "intro" }, (gr && num(gr.per_step_bytes) && gr.per_step_bytes ?
			"Live memory " + (gr.per_step_bytes > 0 ? "grows by " : "shrinks by ") +
				bytesText(Math.abs(gr.per_step_bytes)) + " per step over " + countText(gr.steps ||
				rows.length, "step") + "." : countText(rows.length, "step") + (gr && num(
				gr.per_step_bytes) ? "; live memory does not grow from step to step." : ".")) +
			" Live bytes at the end of each step, what the step allocated and freed, and its " +
			"peak."));
		rows.forEach(function (r) {
			max = Math.max(max, r.end_bytes || 0);
		});
		t = add(add(s, el("div", { "class": "tablebox tall" })), el("table"));
		tb = headRow(t, ["Step", "Live at end", "", "Change", "Allocated", "Freed",
			"Peak in step"], [0, 1, 3, 4, 5, 6]);
		// up to 2000 rows of numbers only: written as one string, parsed once
		tb.innerHTML = rows.map(function (r) {
			var d = prev === null ? null : r.end_bytes - prev, h;
			prev = r.end_bytes;
			h = "<tr data-step=\"" + int(r.number) + "\"" + (r.leak_first ?
				" class=\"leak-first\"" : "") + "><td class=\"num\">" + int(r.number) +
				(r.leak_first ? "<span class=\"tag\">leak starts</span>" : "") + "</td>" +
				numCell(r.end_bytes, bytesText, "", " data-bytes=\"" + int(r.end_bytes) + "\"") +
				"<td class=\"spark\"><span class=\"bar\"><span style=\"width:" + (100 *
					(r.end_bytes || 0) / max).toFixed(1) + "%\"></span></span></td>" +
				numCell(d, signedBytes, d > 0 ? " up" : "", "") +
				numCell(r.alloc_bytes, bytesText, "", "") +
				numCell(r.freed_bytes, bytesText, "", "") +
				numCell(r.peak_bytes, bytesText, "", "");
			return h + "</tr>";
		}).join("");
	}

	// A number as markup can hold it (an integer; "" for anything else).
	function int(v) {
		return num(v) ? String(Math.round(v)) : "";
	}

	// bcell's markup: the text of v (only digits, units, signs: nothing to escape) and data-v.
	function numCell(v, text, cls, more) {
		return "<td class=\"num" + cls + "\" data-v=\"" + int(v) + "\"" + more + ">" +
			text(v) + "</td>";
	}

	// ---- where the memory goes ----

	function whereView(main, width) {
		var W = R.where, rows = arr(W.rows), s, t, tb, input, total = 0, max = 1, flameBox,
			by = { owner: "owner", op: "op", python: "Python frame", c: "C frame" },
			stacks = rows.some(function (r) {
				return hasStack(r.stack);
			});
		s = section(main, "where", "Where the memory goes", "What held memory at the peak" +
			(by[W.by] ? ", by " + by[W.by] : "") + ", most bytes first" + (rows.length >= 200 ?
				" (the 200 largest)" : "") + "." + (stacks ? " Click a row for its call stack." :
				""));
		input = add(s, el("input", { type: "search", placeholder: "filter by name\u2026",
			"aria-label": "filter" }));
		rows.forEach(function (r) {
			total += r.bytes;
			max = Math.max(max, r.bytes);
		});
		t = add(add(s, el("div", { "class": "tablebox" })), el("table"));
		tb = headRow(t, ["Bytes", "", "Blocks", "Name"].concat(stacks ? ["Allocated at"] : []),
			[0, 2]);
		rows.forEach(function (r) {
			var tr = add(tb, el("tr", { "data-name": r.name, "data-bytes": r.bytes })), c;
			bcell(tr, r.bytes);
			c = add(add(tr, el("td", { "class": "spark" })), el("span", { "class": "bar" }));
			add(c, el("span", { style: "width:" + (100 * r.bytes / max).toFixed(1) + "%" }));
			add(tr, el("td", { "class": "num" }, r.blocks));
			add(tr, el("td", { "class": "name", title: r.name }, W.by === "python" ||
				W.by === "c" ? firstFrame({ python: [r.name] }) : r.name));
			if (stacks)
				add(tr, el("td", { "class": "frame1", title: innermost(r.stack) },
					firstFrame(r.stack)));
			if (hasStack(r.stack)) {
				tr.classList.add("click");
				tr.addEventListener("click", function () {
					openStack("Held at the peak", r.name, [bytesText(r.bytes) + " in " +
						countText(r.blocks, "block")], r.stack);
				});
			}
		});
		if (W.flame) {
			add(s, el("h3", null, W.flame_metric === "allocated" ? "Flame graph of the bytes " +
				"allocated per call stack over the whole run" : "Flame graph of the call " +
				"stacks at the peak"));
			add(s, el("p", { "class": "small" }, "Width is bytes; callers above their " +
				"callees. Click a frame to zoom in, the top bar to zoom out."));
			flameBox = add(s, el("div", { id: "flame" }));
			flame(flameBox, W.flame, width);
		}
		input.addEventListener("input", function () {
			var q = input.value.toLowerCase();
			tb.querySelectorAll("tr").forEach(function (tr) {
				tr.hidden = !!q && tr.getAttribute("data-name").toLowerCase().indexOf(q) < 0;
			});
			document.querySelectorAll("#flame .fnode").forEach(function (n) {
				n.classList.toggle("dim", !!q && n.getAttribute("data-name").toLowerCase()
					.indexOf(q) < 0);
			});
		});
	}

	function flame(box, root, width) {
		var ROW = 18, depth = 0, svg, W = width, focus = root, parentOf = new Map(),
			nodeOf = new WeakMap();
		(function walk(n, d, parent) {
			depth = Math.max(depth, d);
			parentOf.set(n, parent);
			arr(n.children).forEach(function (c) {
				walk(c, d + 1, n);
			});
		})(root, 0, null);
		svg = add(box, sv("svg", { width: W, height: (depth + 1) * ROW + 2, "class": "flame" }));
		svg.addEventListener("mousemove", function (ev) {
			var g = ev.target.closest(".fnode"), n = g && nodeOf.get(g);
			if (!n)
				return hideTip();
			showTip(ev, [n.name, bytesText(n.value) + " (" + (100 * n.value / Math.max(1,
				root.value)).toFixed(1) + "% of all)"]);
		});
		svg.addEventListener("mouseleave", hideTip);
		function draw() {
			var total = Math.max(1, focus.value), path = [], a;
			svg.textContent = "";
			for (a = focus; a; a = parentOf.get(a))
				path.unshift(a);
			// the focus' ancestors as full-width bars, then the focus' subtree
			path.forEach(function (n, d) {
				node(n, d, 0, W, d < path.length - 1);
			});
			(function sub(n, d, x) {
				arr(n.children).forEach(function (c) {
					var w = c.value / total * W;
					if (w >= 0.5) {
						node(c, d, x, w, false);
						sub(c, d + 1, x);
					}
					x += w;
				});
			})(focus, path.length, 0);
		}
		function node(n, d, x, w, above) {
			var g = add(svg, sv("g", { "class": "fnode" + (above ? " above" : ""),
				"data-name": n.name, transform: "translate(" + x.toFixed(1) + "," +
					(d * ROW) + ")" })), chars = Math.floor((w - 6) / 6.6),
				name = n === root ? "all: " + bytesText(root.value) : n.name;
			add(g, sv("rect", { width: Math.max(0.5, w - 0.5).toFixed(1), height: ROW - 1,
				fill: n === root ? "#c9d3df" : opColour(n.name) }));
			nodeOf.set(g, n);
			if (chars >= 3)
				add(g, sv("text", { x: 4, y: ROW - 6 }, name.length > chars ? name.slice(0,
					chars - 1) + "\u2026" : name));
		}
		// a click zooms to the frame; on the frame zoomed to, or one above it, out to it
		svg.addEventListener("click", function (ev) {
			var g = ev.target.closest(".fnode"), n = g && nodeOf.get(g);
			if (!n)
				return;
			focus = g.classList.contains("above") ? n : n === focus ? parentOf.get(n) ||
				root : n;
			draw();
		});
		draw();
	}

	// ---- inefficient ----

	function inefficientView(main) {
		var I = R.inefficient, s, t, tb, stacks;
		s = section(main, "inefficient", "Memory held longer than needed");
		if (!I.checked) {
			add(s, el("p", { "class": "muted" }, "Not checked: " + (I.why || "no accesses") +
				"."));
			return;
		}
		add(s, el("p", { "class": "intro" }, countText(I.blocks || 0, "block") + ", " +
			bytesText(I.bytes || 0) + " held before their first use or after their last."));
		if (!arr(I.top).length)
			return;
		stacks = arr(I.top).some(function (x) {
			return hasStack(x.stack);
		});
		add(s, el("p", { "class": "small" }, "Early allocation: allocated well before its " +
			"first use; late deallocation: freed well after its last use. The largest:"));
		t = add(add(s, el("div", { "class": "tablebox" })), el("table"));
		tb = headRow(t, ["Bytes", "Kind", "Op"].concat(stacks ? ["Allocated at"] : []), [0]);
		arr(I.top).forEach(function (x) {
			var tr = add(tb, el("tr", { "class": "click", "data-name": x.op || "" })),
				kind = String(x.type || "").replace(/_/g, " ").replace(/,/g, ", ");
			bcell(tr, x.bytes);
			add(tr, el("td", null, kind));
			add(tr, el("td", { "class": "name" + (x.op ? "" : " muted") }, x.op || "(no op)"));
			if (stacks)
				add(tr, el("td", { "class": "frame1", title: innermost(x.stack) },
					firstFrame(x.stack)));
			tr.addEventListener("click", function () {
				openStack("Held longer than needed (" + kind + ")", x.op, [bytesText(x.bytes)],
					x.stack);
				select(tr);
			});
		});
	}

	// ---- ranks ----

	// Colour of v in [0, 1] on a sequential scale (pale yellow to dark purple).
	var SEQ = [[255, 247, 188], [254, 196, 79], [236, 112, 20], [204, 76, 2], [153, 52, 4],
		[82, 22, 70]];
	var DIV = [[33, 102, 172], [146, 197, 222], [247, 247, 247], [244, 165, 130], [178, 24, 43]];

	function ramp(stops, v) {
		var f = Math.min(1, Math.max(0, v)) * (stops.length - 1), i = Math.min(stops.length - 2,
			Math.floor(f)), a = stops[i], b = stops[i + 1], k = f - i;
		return "rgb(" + [0, 1, 2].map(function (j) {
			return Math.round(a[j] + (b[j] - a[j]) * k);
		}).join(",") + ")";
	}

	// A heatmap of rows x steps: rect cells up to 64 x 200 (tests read them), a canvas above.
	function heatmap(parent, title, grid, steps, rows, diverging, width) {
		var min = Infinity, max = -Infinity, nR = grid.length, nC = steps.length, L = 92,
			T = 4, W = width - L - 20, cw = W / Math.max(1, nC), ch = Math.max(2, Math.min(16,
				Math.floor(480 / Math.max(1, nR)))), H = ch * nR, box, colour, svg, cells,
			canvas, lo, hi, buckets, bucket, k, NB = 48;
		grid.forEach(function (r) {
			arr(r).forEach(function (v) {
				if (num(v)) {
					min = Math.min(min, v);
					max = Math.max(max, v);
				}
			});
		});
		if (min === Infinity)
			min = max = 0;
		lo = diverging ? -Math.max(Math.abs(min), Math.abs(max), 1) : min;
		hi = diverging ? -lo : Math.max(max, min + 1);
		buckets = [];
		for (k = 0; k < NB; k++)
			buckets.push(ramp(diverging ? DIV : SEQ, k / (NB - 1)));
		bucket = function (v) {
			return num(v) ? Math.round((v - lo) / (hi - lo) * (NB - 1)) : NB;
		};
		buckets.push("rgb(230,230,230)");
		colour = function (v) {
			return buckets[bucket(v)];
		};
		add(parent, el("h3", null, title));
		box = add(parent, el("div", { "class": "heatbox" }));
		svg = add(box, sv("svg", { "class": "heatmap" + (nR <= 64 && nC <= 200 ? "" :
			" labels"), width: width, height: H + T + 30 }));
		rowLabels(svg, rows, L, T, ch);
		stepLabels(svg, steps, L, T + H, cw);
		if (nR <= 64 && nC <= 200) {
			cells = add(svg, sv("g", { transform: "translate(" + L + "," + T + ")" }));
			grid.forEach(function (r, i) {
				arr(r).forEach(function (v, j) {
					add(cells, sv("rect", { x: (j * cw).toFixed(2), y: i * ch,
						width: (cw + 0.3).toFixed(2), height: ch, fill: colour(v),
						"data-row": i, "data-step": steps[j], "data-bytes": num(v) ? v : "" }));
				});
			});
		} else {
			canvas = add(box, el("canvas", { "class": "heatmap", width: Math.max(1, nC),
				height: Math.max(1, nR), "data-rows": nR, "data-steps": nC, style: "left:" + L +
					"px;top:" + T + "px;width:" + W + "px;height:" + H + "px" }));
			paint(canvas, grid, nC, buckets.map(rgbOf), lo, hi);
		}
		box.addEventListener("mousemove", function (ev) {
			var rc = box.getBoundingClientRect(), i = Math.floor((ev.clientY - rc.top - T) / ch),
				j = Math.floor((ev.clientX - rc.left - L) / cw), v;
			if (i < 0 || i >= nR || j < 0 || j >= nC)
				return hideTip();
			v = arr(grid[i])[j];
			showTip(ev, [rankName(rows[i]) + ", step " + steps[j], num(v) ? (diverging ?
				signedBytes(v) : bytesText(v)) : "no value"]);
		});
		box.addEventListener("mouseleave", hideTip);
		box.addEventListener("click", function (ev) {
			var rc = box.getBoundingClientRect(), i = Math.floor((ev.clientY - rc.top - T) / ch),
				tr = rows[i] && document.querySelector("#ranks tr[data-input=\"" +
					rows[i].input + "\"]");
			if (!tr)
				return;
			tr.scrollIntoView({ block: "center" });
			tr.classList.add("flash");
			setTimeout(function () {
				tr.classList.remove("flash");
			}, 1500);
		});
		scale(parent, diverging, lo, hi);
	}

	// One pixel per cell into the canvas (nC x nR pixels; the style sheet scales it up
	// unsmoothed): cell v takes colour k = round((v - lo) * (n - 1) / (hi - lo)) of rgb, rgb[n]
	// where v is null.
	function paint(canvas, grid, nC, rgb, lo, hi) {
		var nR = grid.length, w = Math.max(1, nC), h = Math.max(1, nR), ctx = canvas.getContext(
			"2d"), img = ctx.createImageData(w, h), px = new Uint32Array(img.data.buffer),
			n = rgb.length - 1, f = (n - 1) / (hi - lo), cols = rgb.map(function (c) {
			return ((255 << 24) | (c[2] << 16) | (c[1] << 8) | c[0]) >>> 0; // little endian
		}), i, j, r, v, k, o = 0;
		for (i = 0; i < nR; i++) {
			r = Array.isArray(grid[i]) ? grid[i] : [];
			for (j = 0; j < nC; j++) {
				v = r[j];
				k = typeof v === "number" ? Math.round((v - lo) * f) : n;
				px[o++] = cols[k < 0 ? 0 : k > n ? n : k];
			}
		}
		ctx.putImageData(img, 0, 0);
	}

	function rgbOf(css) {
		var m = /(\d+)\D+(\d+)\D+(\d+)/.exec(css);
		return m ? [+m[1], +m[2], +m[3]] : [230, 230, 230];
	}

	function rankName(r) {
		return r ? rowName(r) + (r.node ? " (" + r.node + ")" : "") : "";
	}

	// A row's short name: "rank 5 dev 2", "rank 5", or the input's number.
	function rowName(r) {
		var rank = r.rank !== null && r.rank !== undefined, dev = r.device !== null &&
			r.device !== undefined && rowsHaveDevices;
		return (rank ? "rank " + r.rank : "#" + r.input) + (dev ? " dev " + r.device : "");
	}

	// Row labels at least 12 px apart: the standing-out rows' first, then every few rows'; each
	// standing-out row also gets a red mark, labelled or not.
	function rowLabels(svg, rows, L, T, ch) {
		var g = add(svg, sv("g", { "class": "rowlabels" })), placed = [], every = Math.ceil(12 /
			ch);
		function free(y) {
			return placed.every(function (p) {
				return Math.abs(p - y) >= 12;
			});
		}
		function label(r, i) {
			var y = T + i * ch + ch / 2;
			if (!free(y))
				return;
			placed.push(y);
			add(g, sv("text", { x: L - 12, y: y + 4, "class": r.stands_out ? "out" : null },
				rowName(r)));
		}
		rows.forEach(function (r, i) {
			if (r.stands_out) {
				add(g, sv("path", { "class": "outmark", d: "M" + (L - 9) + " " + (T + i * ch +
					ch / 2 - 3.5) + "l6 3.5l-6 3.5z" }));
				label(r, i);
			}
		});
		rows.forEach(function (r, i) {
			if (i % every === 0)
				label(r, i);
		});
	}

	function stepLabels(svg, steps, L, y, cw) {
		var every = Math.max(1, Math.ceil(40 / cw)), g = add(svg, sv("g", { "class": "steplabels" }));
		steps.forEach(function (st, j) {
			if (j % every === 0)
				add(g, sv("text", { x: (L + j * cw + cw / 2).toFixed(1), y: y + 16 }, st));
		});
		add(g, sv("text", { x: L - 6, y: y + 16, "class": "key" }, "step"));
	}

	function scale(parent, diverging, lo, hi) {
		var d = add(parent, el("div", { "class": "scale" })), b;
		add(d, el("span", null, diverging ? signedBytes(lo) : bytesText(lo)));
		b = add(d, el("span", { "class": "ramp" }));
		b.style.background = "linear-gradient(to right," + [0, 0.2, 0.4, 0.6, 0.8, 1].map(
			function (v) {
				return ramp(diverging ? DIV : SEQ, v);
			}).join(",") + ")";
		add(d, el("span", null, diverging ? signedBytes(hi) : bytesText(hi)));
		add(d, el("span", { "class": "nodata" }, "no data"));
	}

	// memscope-batch's name of a figure in words.
	function figureName(f) {
		return { peak_bytes: "peak", growth_per_step: "growth per step",
			step_leak_bytes: "step leaks", exit_leak_bytes: "alive at end" }[f] ||
			String(f).replace(/_/g, " ");
	}

	function ranksView(main, width) {
		var K = R.ranks, rows = arr(K.rows), s, t, tb, nodes = {}, out, ul, seen = {}, word;
		rows.forEach(function (r) {
			if (r.node)
				nodes[r.node] = 1;
			if (r.rank !== null && r.rank !== undefined)
				rowsHaveDevices = rowsHaveDevices || !!seen[r.rank];
			seen[r.rank] = 1;
		});
		out = rows.filter(function (r) {
			return r.stands_out;
		});
		word = rowsHaveDevices || rows.some(function (r) {
			return r.rank === null || r.rank === undefined;
		}) ? "inputs" : "ranks";
		s = section(main, "ranks", "Ranks", rows.length + " " + word + (rowsHaveDevices ? " (" +
			countText(Object.keys(seen).length, "rank") + ")" : "") + (Object.keys(nodes)
			.length ? " on " + countText(Object.keys(nodes).length, "node") : "") + "; " +
			(out.length ? out.length + " stand" + (out.length === 1 ? "s" : "") + " out " +
				"(\u25b6): figures far from the others' median." : "none stands out."));
		if (arr(K.steps).length) {
			heatmap(s, "Live bytes at the end of each step", arr(K.live), K.steps, rows, false,
				width);
			heatmap(s, "Growth in each step (bytes added)", arr(K.growth), K.steps, rows, true,
				width);
		} else {
			add(s, el("p", { "class": "muted no-heatmap" }, "No heatmap of ranks by steps: " +
				"none of the inputs has steps."));
		}
		add(s, el("h3", null, "Leak sites common to several " + word));
		ul = add(s, el("ul", { id: "common-sites" }));
		arr(K.common_sites).forEach(function (c) {
			var li = add(ul, el("li", { "class": "click", "data-bytes": c.bytes }));
			add(li, el("span", { "class": "kind " + c.kind }, c.kind === "step" ? "step leak" :
				"at end"));
			add(li, document.createTextNode(" " + shortName(c.op || c.owner || "?") + (firstFrame(
				c.stack) ? " at " + firstFrame(c.stack) : "") + " leaks on " + c.ranks +
				" of " + c.of + " " + word + " (" + bytesText(c.bytes) + " in all)"));
			li.addEventListener("click", function () {
				openStack("Leak on " + c.ranks + " of " + c.of + " " + word, c.op || c.owner,
					[bytesText(c.bytes) + " in all, pool " + (c.pool || "?")], c.stack);
			});
		});
		if (!arr(K.common_sites).length)
			s.insertBefore(el("p", { "class": "muted" }, "None: no leak site is shared by two " +
				word + "."), ul);
		add(s, el("h3", null, word === "inputs" ? "Per input" : "Per rank"));
		t = add(add(s, el("div", { "class": "tablebox tall" })), el("table"));
		tb = headRow(t, ["Rank", "Device", "Node", "Peak", "Unreleased at end", "Step leaks",
			"Growth per step", "Stands out", "Input"], [0, 3, 4, 5, 6]);
		rows.forEach(function (r) {
			var inp = arr(R.inputs)[r.input] || {}, tr = add(tb, el("tr", { "data-input": r.input,
				"class": r.stands_out ? "stands-out" : null }));
			add(tr, el("td", { "class": "num" }, r.rank === null || r.rank === undefined ? "" :
				r.rank));
			add(tr, el("td", null, r.device === null || r.device === undefined ? "" :
				r.device));
			add(tr, el("td", null, r.node || ""));
			bcell(tr, r.peak_bytes, r.stands_out === "peak" ? "hot" : "");
			bcell(tr, r.exit_leak_bytes, r.stands_out === "leaks" ? "hot" : "");
			bcell(tr, r.step_leak_bytes);
			sbcell(tr, r.growth_per_step, r.stands_out === "growth" ? "hot" : "");
			add(tr, el("td", null, r.stands_out ? "\u25b6 " + (arr(r.stands_out_by).length ?
				r.stands_out_by : [r.stands_out]).map(figureName).join(", ") : ""));
			add(tr, el("td", { "class": "frame1" + (inp.status && inp.status !== "ok" ?
				" bad" : "") }, (inp.name || "") + (inp.status && inp.status !== "ok" ? " (" +
				inp.status + (inp.error ? ": " + inp.error : "") + ")" : "")));
		});
	}

	// ---- baseline ----

	function baselineView(main) {
		var B = R.baseline, s, t, tb;
		s = section(main, "baseline", "Against the baseline", "This run beside " + arr(B.inputs)
			.map(function (x) {
				return x.name;
			}).join(", ") + ". Differences are this run's figure less the baseline's.");
		t = add(s, el("table", { "class": "summary" }));
		tb = headRow(t, ["", "This run", "Baseline", "Difference"], [1, 2, 3]);
		[["Peak", B.peak], ["Leaked bytes", B.leaks], ["Growth per step", B.growth]].forEach(
			function (x) {
				var v = x[1] || {}, tr = add(tb, el("tr", { "data-name": x[0] })),
					d = num(v.run) && num(v.base) ? v.run - v.base : null;
				add(tr, el("th", null, x[0]));
				bcell(tr, v.run);
				bcell(tr, v.base);
				sbcell(tr, d, d > 0 ? "up" : d < 0 ? "down" : "");
			});
		diffTable(s, arr(B.by), "Bytes allocated per " + (arr(B.by).length ? B.by[0].by :
			"op") + ", largest difference first", B.by_why);
		if (arr(B.leaks_by).length)
			diffTable(s, B.leaks_by, "Leaked bytes per " + B.leaks_by[0].by + ", largest " +
				"difference first", "");
		if (arr(B.ranks).length)
			baselineRanks(s, B.ranks);
	}

	// Rows of name, run, base, diff: both values, the difference and a bar of it.
	function diffTable(s, rows, title, why) {
		var t, tb, max = 1;
		add(s, el("h3", null, title));
		if (!rows.length) {
			add(s, el("p", { "class": "muted" }, why ? "Not compared: " + why + "." :
				"No difference."));
			return;
		}
		rows = rows.slice().sort(function (a, b) {
			return Math.abs(b.diff) - Math.abs(a.diff);
		});
		rows.forEach(function (x) {
			max = Math.max(max, Math.abs(x.diff));
		});
		t = add(add(s, el("div", { "class": "tablebox" })), el("table"));
		tb = headRow(t, ["Name", "This run", "Baseline", "Difference", ""], [1, 2, 3]);
		rows.forEach(function (x) {
			var tr = add(tb, el("tr", { "data-name": x.name, "data-diff": x.diff })), c, bar;
			add(tr, el("td", { "class": "name", title: x.name }, x.name + (x.device !==
				undefined && x.device !== null ? " (device " + x.device + ")" : "")));
			bcell(tr, x.run).setAttribute("data-bytes", x.run);
			bcell(tr, x.base).setAttribute("data-bytes", x.base);
			sbcell(tr, x.diff, x.diff > 0 ? "up" : x.diff < 0 ? "down" : "");
			c = add(tr, el("td", { "class": "diverge" }));
			bar = add(c, el("span", { "class": x.diff >= 0 ? "pos" : "neg" }));
			bar.style.width = (50 * Math.abs(x.diff) / max).toFixed(1) + "%";
		});
	}

	function baselineRanks(s, ranks) {
		var t, tb;
		add(s, el("h3", null, "Per rank, largest peak difference first"));
		t = add(add(s, el("div", { "class": "tablebox" })), el("table"));
		tb = headRow(t, ["Rank", "Peak", "Baseline", "Difference", "Leaked", "Baseline",
			"Growth per step", "Baseline"], [0, 1, 2, 3, 4, 5, 6, 7]);
		ranks.forEach(function (x) {
			var tr = add(tb, el("tr", { "data-rank": x.rank === null ? "" : x.rank })),
				d = num(x.run_peak) && num(x.base_peak) ? x.run_peak - x.base_peak : null;
			add(tr, el("td", { "class": "num" }, x.rank === null || x.rank === undefined ?
				"#" + (num(x.run_input) ? x.run_input : "?") : x.rank));
			bcell(tr, x.run_peak);
			bcell(tr, x.base_peak);
			sbcell(tr, d, d > 0 ? "up" : d < 0 ? "down" : "");
			bcell(tr, x.run_leaks);
			bcell(tr, x.base_leaks);
			sbcell(tr, x.run_growth, "");
			sbcell(tr, x.base_growth, "");
		});
	}

	// ---- unchecked, notes ----

	function linked(id) {
		return arr(R.verdicts).some(function (v) {
			return v.section === id;
		});
	}

	// A section the JSON has nothing for but a verdict links to: what the verdict says.
	function stubView(main, id) {
		var s = section(main, id, SECTION_TITLES[id] || id);
		arr(R.verdicts).forEach(function (v) {
			if (v.section === id)
				add(s, el("p", { "class": "muted" }, v.text));
		});
	}

	function listView(main, id, title, items, empty) {
		var s = section(main, id, title), ul = add(s, el("ul"));
		items.forEach(function (x) {
			add(ul, el("li", null, x));
		});
		if (!items.length)
			add(ul, el("li", { "class": "muted" }, empty));
	}

	// ---- main ----

	function guarded(name, f) {
		try {
			f();
		} catch (e) {
			errors.push(name + ": " + (e && e.message ? e.message : e));
			console.error("memscope report: drawing " + name + " failed:", e);
		}
	}

	function stackPanel() {
		var aside = add(document.body, el("aside", { id: "stack", hidden: "hidden" })), b;
		b = add(aside, el("button", { "class": "close", title: "close (Esc)" }, "\u00d7"));
		add(aside, el("h3", null, "Call stack"));
		add(aside, el("div", { "class": "body" }));
		b.addEventListener("click", function () {
			aside.hidden = true;
		});
		document.addEventListener("keydown", function (ev) {
			if (ev.key === "Escape")
				aside.hidden = true;
		});
	}

	function draw() {
		var main = add(document.body, el("main")), width, ids = [], stubs = {};
		tip = add(document.body, el("div", { id: "tip", hidden: "hidden" }));
		stackPanel();
		guarded("title", function () {
			header(main);
		});
		guarded("verdicts", function () {
			verdicts(main);
		});
		["timeline", "blocks", "leaks", "steps", "where", "inefficient", "ranks", "baseline",
			"unchecked", "notes"].forEach(function (id) {
			var v = id === "blocks" ? R.timeline && arr(R.timeline.blocks).length :
				id === "steps" ? arr(R.steps).length : id === "notes" ? arr(R.notes).length :
					id === "unchecked" ? 1 : R[id];
			if (v)
				ids.push(id);
			else if (linked(id))
				ids.push(id), stubs[id] = 1;
		});
		nav(main, ids);
		width = Math.max(640, Math.min(1240, main.clientWidth || 1200));
		ids.forEach(function (id) {
			guarded(id, function () {
				if (stubs[id])
					return stubView(main, id);
				({
					timeline: function () {
						timeline(main, width);
					},
					blocks: function () {
						blocksView(main, width);
					},
					leaks: function () {
						leaksView(main);
					},
					steps: function () {
						stepsView(main);
					},
					where: function () {
						whereView(main, width);
					},
					inefficient: function () {
						inefficientView(main);
					},
					ranks: function () {
						ranksView(main, width);
					},
					baseline: function () {
						baselineView(main);
					},
					unchecked: function () {
						listView(main, "unchecked", "Not checked", arr(R.unchecked),
							"Everything above was checked.");
					},
					notes: function () {
						listView(main, "notes", "Notes on reading the inputs", arr(R.notes),
							"");
					}
				})[id]();
			});
		});
	}

	function start() {
		var box;
		try {
			R = JSON.parse(document.getElementById("report").textContent);
			draw();
		} catch (e) {
			errors.push(e && e.message ? e.message : String(e));
			console.error("memscope report:", e);
		}
		if (errors.length) {
			box = el("div", { id: "error" }, "This page could not draw everything: " +
				errors.join("; "));
			document.body.insertBefore(box, document.body.firstChild);
		}
		document.body.dataset.ready = "1";
	}

	if (document.readyState === "loading")
		document.addEventListener("DOMContentLoaded", start);
	else
		start();
})();
