// The script of memscope-export's SVG flame graph (embedded by lib/CMakeLists.txt, written by
// flame_svg.c): hover shows a frame's bytes and share, a click zooms to it, Search (or Ctrl-F)
// highlights the frames whose name matches a regular expression and says what share of the total
// they hold, Escape resets both. The state is kept in the address (?x=..&y=.. zoom, ?s=.. search)
// so a view can be shared and reopened. No other script is loaded.
"use strict";
var CHAR_W = 7.2; // the width of a character of the 12 px monospace font, as flame_svg.c has it
var frames = [], total = null, zoomed = null, pattern = null;
var details, matched, unzoomBtn, searchBtn;

function el(id) {
	return document.getElementById(id);
}

// The index of the "(" that the ")" at chars[k - 1] closes, -1 when none does.
function openParen(chars, k) {
	var depth = 0;
	while (k--) {
		if (chars[k] === ")")
			depth++;
		if (chars[k] === "(" && !--depth)
			return k;
	}
	return -1;
}

// The part of a name a label too narrow for all of it shows, as flame_svg.c's short_len: a C
// frame "ns::f(int) (libx.so)" without " (libx.so)" and then without "(int)".
function shortLen(chars) {
	var n = chars.length, p;
	if (n && chars[n - 1] === ")" && (p = openParen(chars, n)) > 1 && chars[p - 1] === " ")
		n = p - 1;
	if (n && chars[n - 1] === ")" && (p = openParen(chars, n)) > 0)
		n = p;
	return n;
}

// The fewest characters of a name an elided label shows after its ellipsis, and before it, as
// flame_svg.c's TAIL_MIN and HEAD_MIN: a shorter start is left out, and a label too narrow for
// TAIL_MIN characters and the ellipsis is empty (the frame keeps its tooltip).
var TAIL_MIN = 4, HEAD_MIN = 3;

function endsPart(c) {
	return ".:/ ".indexOf(c) >= 0;
}

// Where the middle of chars goes in a label of n, as flame_svg.c's middle: [head, tail), the
// start filling the room the end leaves. With p (data-p: a start siblings have too), the end from
// there, or the last n - 1 characters when that is longer; else the longest end that starts a
// part (a character that is not ".", "/", ":" or a blank after one of them) with room for the
// ellipsis; else a third of the room for the start (none when under HEAD_MIN). The end has at
// least TAIL_MIN characters; a start under HEAD_MIN characters is none.
function middle(chars, n, p) {
	var k, c = chars.length, m = null;
	if (p && p < c) {
		k = Math.min(c - p <= n - 1 ? p : c - (n - 1), c - TAIL_MIN);
		m = [n - 1 - (c - k), k];
	}
	for (k = Math.max(1, c - (n - 1)); !m && k <= c - TAIL_MIN; k++)
		if (endsPart(chars[k - 1]) && !endsPart(chars[k]))
			m = [n - 1 - (c - k), k];
	if (!m) {
		k = Math.floor((n - 1) / 3);
		if (k < HEAD_MIN)
			k = 0;
		m = [k, c - (n - 1 - k)];
	}
	if (m[0] < HEAD_MIN)
		m[0] = 0;
	return m;
}

// The label of a frame w pixels wide: the name; when it does not fit, its short part (shortLen),
// and when that does not fit either, its start and its end with an ellipsis for the middle
// (middle; "torch._ops.aten.addmm.default" alone in 14 characters: "…addmm.default"); nothing
// under 3 characters, and nothing elided under TAIL_MIN + 1 (characters as flame_svg.c counts
// them, not UTF-16 units).
function label(name, w, p) {
	var n = Math.floor((w - 6) / CHAR_W), chars = Array.from(name), m;
	if (n < 3)
		return "";
	if (chars.length <= n)
		return name;
	chars = chars.slice(0, shortLen(chars));
	if (chars.length <= n)
		return chars.join("");
	if (n < TAIL_MIN + 1)
		return "";
	m = middle(chars, n, p);
	return chars.slice(0, m[0]).join("") + "\u2026" + chars.slice(m[1]).join("");
}

function place(f, x, w) {
	var width = w.toFixed(2);
	f.r.setAttribute("x", x.toFixed(2));
	f.r.setAttribute("width", width);
	f.t.setAttribute("x", (x + 3).toFixed(2));
	f.t.textContent = label(f.name, +width, f.p);
}

function show(f, on) {
	if (on)
		f.g.removeAttribute("display");
	else
		f.g.setAttribute("display", "none");
}

// The view into the address (x, y and s; the address's other parameters stay).
function remember() {
	var q = new URLSearchParams(location.search), s;
	q.delete("x");
	q.delete("y");
	q.delete("s");
	if (zoomed) {
		q.set("x", zoomed.x.toFixed(2));
		q.set("y", String(zoomed.y));
	}
	if (pattern !== null)
		q.set("s", pattern);
	s = q.toString();
	try {
		history.replaceState(null, "", location.pathname + (s ? "?" + s : "") + location.hash);
	} catch (e) {
		// a file opened where the address cannot change: the view just is not remembered
	}
}

// Zoom to z: it and the frames above it fill the width, the frames below it (its callers) are
// dimmed across the width, everything else is hidden. The frames come in post-order: a frame's
// data-n descendants are the frames just before it.
function zoom(z) {
	var scale = total.w / z.w, first = z.i - z.n;
	frames.forEach(function (f) {
		if (f.i >= first && f.i <= z.i) {
			// (the coordinates are rounded: an edge scaled up may pass the zoomed frame's)
			var left = Math.max(total.x, total.x + (f.x - z.x) * scale);
			var right = Math.min(total.x + total.w, total.x + (f.x + f.w - z.x) * scale);
			show(f, true);
			f.g.removeAttribute("class");
			place(f, left, Math.max(0, right - left));
		} else if (f.i > z.i && f.i - f.n <= first) {
			show(f, true);
			f.g.setAttribute("class", "parent");
			place(f, total.x, total.w);
		} else {
			show(f, false);
		}
	});
	zoomed = z === total ? null : z;
	if (zoomed)
		unzoomBtn.removeAttribute("class");
	else
		unzoomBtn.setAttribute("class", "hide");
	remember();
}

function unzoom() {
	zoom(total);
}

// Highlight the frames whose name matches re; the share is of the union of their spans, so a
// match inside another match is not counted twice.
function search(re) {
	var rx, spans = [], sum = 0, end = -1;
	try {
		rx = new RegExp(re);
	} catch (e) {
		matched.textContent = "bad pattern: " + re;
		return;
	}
	frames.forEach(function (f) {
		var hit = f !== total && rx.test(f.name);
		f.r.setAttribute("fill", hit ? "rgb(230,0,230)" : f.fill);
		if (hit)
			spans.push([f.x, f.x + f.w]);
	});
	spans.sort(function (a, b) {
		return a[0] - b[0];
	});
	spans.forEach(function (s) {
		if (s[1] <= end)
			return;
		sum += s[1] - Math.max(s[0], end);
		end = s[1];
	});
	pattern = re;
	matched.textContent = "Matched: " + (100 * sum / total.w).toFixed(1) + "% (" + spans.length +
			      " frames)";
	searchBtn.textContent = "Reset Search";
	remember();
}

function resetSearch() {
	frames.forEach(function (f) {
		f.r.setAttribute("fill", f.fill);
	});
	pattern = null;
	matched.textContent = " ";
	searchBtn.textContent = "Search";
	remember();
}

function askSearch() {
	var re = prompt("Frames matching (regular expression):", pattern || "");
	if (re)
		search(re);
}

function init() {
	var gs = el("frames").getElementsByTagName("g"), i, q;
	details = el("details");
	matched = el("matched");
	unzoomBtn = el("unzoom");
	searchBtn = el("search");
	for (i = 0; i < gs.length; i++) {
		var g = gs[i], r = g.getElementsByTagName("rect")[0];
		var title = g.getElementsByTagName("title")[0].textContent;
		var f = {
			i: i,
			n: +g.getAttribute("data-n"),
			p: +(g.getAttribute("data-p") || 0),
			g: g,
			r: r,
			t: g.getElementsByTagName("text")[0],
			title: title,
			name: title.replace(/ \([^(]*\)$/, ""),
			x: +r.getAttribute("x"),
			w: +r.getAttribute("width"),
			y: +r.getAttribute("y"),
			fill: r.getAttribute("fill")
		};
		frames.push(f);
		if (!total || f.y > total.y)
			total = f;
		g.addEventListener("mouseover", function () {
			details.textContent = this.title;
		}.bind(f));
		g.addEventListener("mouseout", function () {
			details.textContent = " ";
		});
		g.addEventListener("click", function () {
			zoom(this);
		}.bind(f));
	}
	unzoomBtn.addEventListener("click", unzoom);
	searchBtn.addEventListener("click", function () {
		if (pattern === null)
			askSearch();
		else
			resetSearch();
	});
	window.addEventListener("keydown", function (e) {
		if (e.key === "f" && (e.ctrlKey || e.metaKey)) {
			e.preventDefault();
			askSearch();
		} else if (e.key === "Escape") {
			resetSearch();
			unzoom();
		}
	});
	if (!total)
		return;
	q = new URLSearchParams(location.search);
	if (q.has("x") && q.has("y"))
		frames.forEach(function (f) {
			if (Math.abs(f.x - +q.get("x")) < 0.01 && f.y === +q.get("y"))
				zoom(f);
		});
	if (q.get("s"))
		search(q.get("s"));
}

window.addEventListener("load", init);
