// The script of memscope-export's memory-over-time page (embedded by lib/CMakeLists.txt, written
// by memory_html.c): under the pointer, a line and a box with the time, the step, and each
// curve's value (live bytes or a profiler's sample; the highest in the pixel's time, so a peak
// is never hidden); a click on a legend row hides or shows its curve, and the y axis grows to
// the highest curve shown (never below the one the page opens with). The numbers come from the
// page's memscope-data JSON, the names and peaks from its legend. No other script is loaded.
"use strict";
(function () {
	var data = JSON.parse(document.getElementById("memscope-data").textContent);
	var svg = document.getElementById("plot"), tip = document.getElementById("tip");
	var cursor = document.getElementById("cursor"), chart = document.getElementById("chart");
	var curves = [];
	var base = data.plot_y + data.plot_h;
	var zoom = document.getElementById("zoom"), yaxis = document.getElementById("yaxis");
	var yunit = document.getElementById("yunit"), peak = document.getElementById("peak");
	var first = { axis: yaxis.innerHTML, unit: yunit.textContent }, ymax = data.ymax;

	// The step of a round axis of about n ticks over [0, max]: memory_html.c's nice_step.
	function niceStep(max, n) {
		var raw = max > 0 ? max / n : 1, mag = 1, f;
		while (mag * 10 <= raw)
			mag *= 10;
		while (mag > raw && mag > 1e-12)
			mag /= 10;
		f = raw / mag;
		return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
	}

	function decimals(step) {
		var d = 0;
		for (; step < 0.999999 && d < 9; d++)
			step *= 10;
		return d;
	}

	function svgEl(tag, attrs, text) {
		var e = document.createElementNS(svg.namespaceURI, tag), k;
		for (k in attrs)
			e.setAttribute(k, attrs[k]);
		if (text !== undefined)
			e.textContent = text;
		return e;
	}

	// The y axis for bytes as memory_html.c's y_axis draws it (5% headroom, round values in
	// the binary unit of its top); sets ymax to its top.
	function drawAxis(bytes) {
		var unit = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"], u = 1, k = 0;
		var want = bytes + Math.floor(bytes / 20) + 1, step, top, d, i, v, y;
		while (want / u >= 1024 && k < 6) {
			u *= 1024;
			k++;
		}
		step = niceStep(want / u, 5);
		if (k === 0 && step < 1)
			step = 1;
		top = Math.floor(want / u / step) * step;
		if (top * u < want)
			top += step;
		ymax = Math.round(top * u);
		d = decimals(step);
		yaxis.textContent = "";
		for (i = 0; (v = i * step) <= top + step / 2; i++) {
			y = (data.plot_y + data.plot_h - v / top * data.plot_h).toFixed(1);
			yaxis.appendChild(svgEl("line", { "class": "grid", x1: data.plot_x,
				x2: data.plot_x + data.cols, y1: y, y2: y }));
			yaxis.appendChild(svgEl("text", { "class": "ytick", x: data.plot_x - 6,
				y: (+y + 4).toFixed(1) }, v.toFixed(d) + " " + unit[k]));
		}
		yunit.textContent = unit[k];
	}

	// The axis of the curves shown: the page's own, or a higher one for a higher curve; the
	// curves (drawn for the page's axis) scaled to it, the peak's mark moved.
	function fit() {
		var top = 0, s, y, text;
		curves.forEach(function (c) {
			if (!c.off && c.peak > top)
				top = c.peak;
		});
		if (top + Math.floor(top / 20) + 1 <= data.ymax) {
			yaxis.innerHTML = first.axis;
			yunit.textContent = first.unit;
			ymax = data.ymax;
		} else {
			drawAxis(top);
		}
		s = data.ymax / ymax;
		zoom.setAttribute("transform", s === 1 ? "" :
			"matrix(1 0 0 " + s + " 0 " + base * (1 - s) + ")");
		if (peak) {
			y = base - peak.getAttribute("data-bytes") / ymax * data.plot_h;
			peak.querySelector(".peakline").setAttribute("y1", y.toFixed(1));
			peak.querySelector(".peakdot").setAttribute("cy", y.toFixed(1));
			text = peak.querySelector(".peaktext");
			text.setAttribute("y", (y < data.plot_y + 14 ? y + 16 : y - 8).toFixed(1));
		}
	}

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
		// the legend's rows: the live bytes' curves, then the samples' (drawn behind them)
		var paths = Array.prototype.slice.call(document.querySelectorAll("#curves path"))
			.concat(Array.prototype.slice.call(document.querySelectorAll("#samples path")));
		data.curves.forEach(function (c, i) {
			var row = rows[i], path = paths[i], cell = row.querySelector(".name");
			var same = cell.querySelector(".same"), name = cell.textContent;
			var curve = {
				values: c.values,
				// the name without the note of an identical curve
				name: same ? name.slice(0, name.length - same.textContent.length) : name,
				colour: path.getAttribute("stroke"),
				peak: +row.getAttribute("data-peak"),
				path: path,
				row: row,
				off: row.classList.contains("off") // some samples start hidden
			};
			curves.push(curve);
			row.addEventListener("click", function () {
				curve.off = !curve.off;
				path.classList.toggle("off", curve.off);
				row.classList.toggle("off", curve.off);
				fit();
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
