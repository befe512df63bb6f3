/* memscope-report's self-contained HTML page (ms__report_write_html): the findings JSON and the
 * style sheet and script (report_html.css, report_html.js, embedded at build time) that draw it. */
#include <string.h>

#include "../writers/report.h"
#include "html.h"

extern const char memscope_report_html_js[];
extern const char memscope_report_html_css[];

/* json[0..len) as the text of a script element: "</" as "<\/", "<!--" as "<\u0021--", U+2028 and
 * U+2029 as escapes; each can only be inside a JSON string, where the escape means the same. */
static void json_text(FILE *out, const char *json, size_t len)
{
	const char *p = json, *end = json + len, *from = json;

	for (; p < end; p++) {
		const char *esc = NULL;
		size_t skip = 0;

		if (*p == '<' && end - p >= 2 && p[1] == '/') {
			esc = "<\\/";
			skip = 2;
		} else if (*p == '<' && end - p >= 4 && !memcmp(p, "<!--", 4)) {
			esc = "<\\u0021--";
			skip = 4;
		} else if (end - p >= 3 && !memcmp(p, "\xe2\x80\xa8", 3)) {
			esc = "\\u2028";
			skip = 3;
		} else if (end - p >= 3 && !memcmp(p, "\xe2\x80\xa9", 3)) {
			esc = "\\u2029";
			skip = 3;
		}
		if (!esc)
			continue;
		fwrite(from, 1, (size_t)(p - from), out);
		fputs(esc, out);
		p += skip - 1;
		from = p + 1;
	}
	fwrite(from, 1, (size_t)(end - from), out);
}

int ms__report_write_html(
	FILE *out, const char *json, size_t len, const char *title, struct memscope_error *err)
{
	if (!title)
		title = "memscope report";
	fputs("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>",
		out);
	ms__xml_str(out, title, strlen(title));
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", memscope_report_html_css);
	fputs("<noscript><p>This report is drawn by its script: allow scripts for this file to "
	      "see it (memscope-report --format text gives the same findings).</p></noscript>\n",
		out);
	fputs("<script type=\"application/json\" id=\"report\">", out);
	json_text(out, json, len);
	fprintf(out, "</script>\n<script>\n%s</script>\n</body>\n</html>\n",
		memscope_report_html_js);
	return ms__write_end(out, 0, err);
}
