/* memscope-report's page: the findings JSON (memscope_report_write's) wrapped into one
 * self-contained HTML file whose embedded script (report_html.js) draws it. */
#ifndef MEMSCOPE_REPORT_HTML_H
#define MEMSCOPE_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

struct memscope_error;

/*
 * Writes the page to out: <!doctype html>, a <title> holding title (HTML-escaped; NULL: "memscope
 * report"), the inline style sheet, a <noscript> line, json[0..len) in <script
 * type="application/json" id="report">
 * and the inline script that draws it, nothing fetched from anywhere. json is the findings object
 * as the library writes it (valid UTF-8, borrowed for the call only); in the page "</" is written
 * "<\/", "<!--" "<\u0021--" and U+2028/U+2029 "\u2028"/"\u2029" (all only inside JSON strings,
 * where these escapes mean the same), so the HTML parser never ends or bends the script element.
 * The JSON is not checked: invalid JSON gives a page that shows a parse error.
 * Returns 0, or MEMSCOPE_E_IO (err says why) when writing to out failed; out is left open and
 * may hold part of the page.
 */
int ms__report_write_html(
	FILE *out, const char *json, size_t len, const char *title, struct memscope_error *err);

#endif
