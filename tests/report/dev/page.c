/* Wraps a findings JSON file into the report page through the library's own
 * ms__report_write_html, for checking the C side before memscope-report calls it:
 *   cc -std=c11 -Wall -Wextra -Werror -Ilib -Ilib/include tests/report/dev/page.c \
 *      build-X/lib/libmemscope.a -lsqlite3 -lcjson -lz -lzstd -lstdc++ -o /tmp/page
 *   /tmp/page tests/report/sample_one.json out.html [TITLE] */
#include <stdio.h>
#include <stdlib.h>

#include "memscope/memscope.h"
#include "report/html.h"

int main(int argc, char **argv)
{
	struct memscope_error err = { 0 };
	FILE *in, *out;
	char *json = NULL;
	size_t len = 0, cap = 0, n;
	int rc = 1;

	if (argc < 3 || !(in = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: page REPORT.json PAGE.html [TITLE]\n");
		return 2;
	}
	do {
		if (len == cap) {
			char *p = realloc(json, cap = cap ? 2 * cap : 1 << 16);
			if (!p)
				goto out;
			json = p;
		}
		n = fread(json + len, 1, cap - len, in);
		len += n;
	} while (n);
	if (!(out = fopen(argv[2], "wb")))
		goto out;
	rc = ms__report_write_html(out, json, len, argc > 3 ? argv[3] : NULL, &err) ? 1 : 0;
	if (fclose(out) && !rc)
		rc = 1;
	if (rc)
		fprintf(stderr, "page: %s\n", err.msg);
out:
	fclose(in);
	free(json);
	return rc;
}
