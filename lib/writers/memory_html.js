// The script of memscope-export's memory-over-time page (embedded by lib/CMakeLists.txt, written
// by memory_html.c): under the pointer, a line and a box with the time, the step, and each
// curve's live bytes (the highest in the pixel's time, so a peak is never hidden); a click on a
// legend row hides or shows its curve. The numbers come from the page's memscope-data JSON, the
// names from its legend. No other script is loaded.
"use strict";
(function () {
	var data = JSON.parse(document.getElementById("memscope-data").textContent);
	var svg = document.getElementById("plot"), tip = document.getElementById("tip");
	var cursor = document.getElementById("cursor"), chart = document.getElementById("chart");
	var curves = [];

	// Bytes as memscope_bytes_text writes them: binary units, three significant digits.
	function bytesText(v) {
		var unit = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"], u = 0;
		if (v < 0)
			return "-" + bytesText(-v);
		if (v < 1023.5)
			return String(v) + " B";
		while (v >= 1023.5 && u < 6) {
			v /= 1024;
			u++;
		}
		return v.toFixed(v < 9.995 ? 2 : v < 99.95 ? 1 : 0) + " " + unit[u];
	}

	// Nanoseconds (an integer) as memscope_seconds_text writes them: seconds with microsecond
	// digits, truncated (not rounded) to the microsecond, so the page's C and script agree.
	function secondsText(ns) {
		var us = Math.floor(ns / 1000), s = Math.floor(us / 1e6), frac = String(us % 1e6);
		while (frac.length < 6)
			frac = "0" + frac;
		return s + "." + frac + " s";
	}

	// A short time: "640 ns", "12.5 us", "3.20 ms", or seconds as secondsText.
	function durationText(ns) {
		if (ns < 1000)
			return Math.round(ns) + " ns";
		if (ns < 1e6)
			return (ns / 1e3).toPrecision(3) + " \u00b5s";
		if (ns < 1e9)
			return (ns / 1e6).toPrecision(3) + " ms";
		return secondsText(ns);
	}

	function stepAt(ns) {
		var k;
		for (k = data.steps.length - 1; k >= 0; k--)
			if (data.steps[k][1] <= ns && ns < data.steps[k][2])
				return data.steps[k][0];
		return 0;
	}

	function add(parent, tag, cls, text) {
		var e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined)
			e.textContent = text;
		parent.appendChild(e);
		return e;
	}

	function hide() {
		tip.hidden = true;
		cursor.setAttribute("visibility", "hidden");
	}

	// The box for pixel column col, beside the pointer at (x, y) of the chart.
	function show(col, x, y) {
		// ns after the input's first row, an integer as in the C side's memscope_seconds_text
		var ns = data.from_ns + Math.floor(col * data.span_ns / data.cols);
		var step = stepAt(ns), rows = [], head, k;
		var px = data.plot_x + col + 0.5;
		cursor.setAttribute("x1", px);
		cursor.setAttribute("x2", px);
		cursor.removeAttribute("visibility");
		curves.forEach(function (c) {
			var v = c.values[col];
			if (!c.off && v !== null && v !== undefined)
				rows.push({ c: c, v: v });
		});
		rows.sort(function (a, b) {
			return b.v - a.v;
		});
		tip.textContent = "";
		head = add(tip, "div", "t", secondsText(ns));
		if (step)
			head.textContent += ", step " + step;
		for (k = 0; k < rows.length && k < 12; k++) {
			var line = add(tip, "div", "row");
			add(line, "span", "sw").style.background = rows[k].c.colour;
			add(line, "span", "n", rows[k].c.name);
			add(line, "span", "v", bytesText(rows[k].v));
		}
		if (rows.length > 12)
			add(tip, "div", "foot", (rows.length - 12) + " more curves");
		if (!rows.length)
			add(tip, "div", "foot", "no curve here");
		add(tip, "div", "foot", "each the highest in this pixel's " +
			durationText(data.span_ns / data.cols));
		tip.hidden = false;
		tip.style.left = (x + 14 + tip.offsetWidth > chart.clientWidth ?
			Math.max(0, x - 14 - tip.offsetWidth) : x + 14) + "px";
		tip.style.top = Math.max(0, y - tip.offsetHeight / 2) + "px";
	}

	function init() {
		var rows = document.querySelectorAll("#legend tr.entry");
		var paths = document.querySelectorAll("#curves path");
		data.curves.forEach(function (c, i) {
			var row = rows[i], path = paths[i];
			var curve = {
				values: c.values,
				name: row.querySelector(".name").textContent,
				colour: path.getAttribute("stroke"),
				path: path,
				row: row,
				off: false
			};
			curves.push(curve);
			row.addEventListener("click", function () {
				curve.off = !curve.off;
				path.setAttribute("class", curve.off ? "curve off" : "curve");
				row.setAttribute("class", curve.off ? "entry off" : "entry");
			});
		});
		svg.addEventListener("mousemove", function (e) {
			var r = svg.getBoundingClientRect(), c = chart.getBoundingClientRect();
			var col = Math.floor((e.clientX - r.left) * data.svg_w / r.width - data.plot_x);
			if (col < 0 || col >= data.cols) {
				hide();
				return;
			}
			show(col, e.clientX - c.left, e.clientY - c.top);
		});
		svg.addEventListener("mouseleave", hide);
	}

	init();
})();
