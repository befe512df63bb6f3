/* Streaming reader of msMemScope memscope_dump CSV files (current and legacy layouts): the CSV
 * tokenizer's rows into the dump row builder (dump_rows.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "csvtok.h"
#include "reader.h"

static int dump_csv_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct csvtok tok;
	struct dump_rows *rows = NULL;
	struct window w;
	uint64_t line = 1; /* where the next row starts */
	int rc;

	memset(&tok, 0, sizeof(tok));
	memset(&w, 0, sizeof(w));
	rc = dump_rows_new(&rows, src, fn, ctx, err);
	if (!rc)
		rc = window_open(&w, src, err);
	if (!rc && w.len >= 3 && memcmp(w.data, "\xef\xbb\xbf", 3) == 0)
		w.start = 3; /* UTF-8 byte order mark */
	while (!rc) {
		size_t used;
		uint64_t lead;
		int r;

		r = csvtok_row(&tok, w.data + w.start, w.len - w.start, w.final, &used, &lead);
		w.start += used;
		line += lead;
		if (r == CSVTOK_ROW) {
			uint64_t at = line;

			line += tok.row_nl;
			rc = dump_rows_have_header(rows) ? dump_rows_row(rows, tok.f, tok.n, at)
							 : dump_rows_header(rows, tok.f, tok.n, at);
		} else if (r == CSVTOK_MORE) {
			rc = window_fill(&w, src, CSVTOK_MAX_ROW_BYTES, err);
			if (rc == MEMSCOPE_E_INVALID)
				rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, line,
					"row longer than %zu MiB (unterminated quote?)",
					CSVTOK_MAX_ROW_BYTES >> 20);
		} else if (r == CSVTOK_END) {
			break;
		} else if (r == CSVTOK_OPEN_QUOTE) {
			rc = memscope_error_set(err, MEMSCOPE_E_TRUNCATED, src->name, line,
				"file ends inside a quoted field");
		} else {
			rc = memscope_error_set(
				err, MEMSCOPE_E_NOMEM, src->name, line, "out of memory");
		}
	}
	if (!rc && !dump_rows_have_header(rows))
		rc = memscope_error_set(
			err, MEMSCOPE_E_INVALID, src->name, 0, "empty file (no header line)");
	window_close(&w);
	buf_free(&tok.unq);
	dump_rows_free(rows);
	return rc;
}

/* Text whose first line names at least three of the dump's columns: a dump CSV, perhaps with a
 * column missing (which its reader then names), and not another tool's CSV. */
static int dump_csv_sniff(
	const unsigned char *p, size_t n, int eof, const char *name, struct memscope_error *err)
{
	(void)name, (void)err;
	return sniff_text(p, n) && dump_rows_header_like(p, n, eof);
}

const struct reader dump_csv_reader = {
	.format = MEMSCOPE_FORMAT_DUMP_CSV,
	.name = "dump-csv",
	.what = "a memscope_dump CSV",
	.sniff = dump_csv_sniff,
	.read = dump_csv_read,
};
