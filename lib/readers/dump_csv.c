/* Streaming reader of msMemScope memscope_dump CSV files (current and legacy layouts): the CSV
 * tokenizer's rows into the dump row builder (dump_rows.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "csvtok.h"
#include "reader.h"

static int dump_row(void *ctx, const struct csvtok_field *f, unsigned n, uint64_t line)
{
	struct dump_rows *rows = ctx;

	return ms__dump_rows_have_header(rows) ? ms__dump_rows_row(rows, f, n, line)
					       : ms__dump_rows_header(rows, f, n, line);
}

static int dump_csv_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct dump_rows *rows = NULL;
	int rc;

	rc = ms__dump_rows_new(&rows, src, fn, ctx, err);
	if (!rc)
		rc = ms__csv_read_rows(src, dump_row, rows, err);
	if (!rc && !ms__dump_rows_have_header(rows))
		rc = memscope_error_set(
			err, MEMSCOPE_E_INVALID, src->name, 0, "empty file (no header line)");
	ms__dump_rows_free(rows);
	return rc;
}

/* Text whose first line names at least three of the dump's columns: a dump CSV, perhaps with a
 * column missing (which its reader then names), and not another tool's CSV. */
static int dump_csv_sniff(
	const unsigned char *p, size_t n, int eof, const char *name, struct memscope_error *err)
{
	(void)name, (void)err;
	return ms__csv_sniff_text(p, n) && ms__dump_rows_header_like(p, n, eof);
}

const struct reader ms__dump_csv_reader = {
	.format = MEMSCOPE_FORMAT_DUMP_CSV,
	.name = "dump-csv",
	.what = "a memscope_dump CSV",
	.sniff = dump_csv_sniff,
	.read = dump_csv_read,
	.walk = READER_WALK_INPUT,
	.prefix = "memscope_dump_",
	.endings = (const char *const[]){ ".csv", NULL },
	.inputs = "memscope_dump CSVs",
};
