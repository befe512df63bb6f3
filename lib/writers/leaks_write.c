/* The leak reports: memscope_leaks_write, by a table of the writers of each format (leaks_text.c,
 * leaks_json.c, leaks_csv.c, leaks_reference.c, on the pieces of leaks_report.c). */
#include <stdio.h>

#include "leaks_report.h"

/* the writer of each format (enum memscope_leaks_format) */
static int (*const writers[])(struct leaks_report *r) = {
	[MEMSCOPE_LEAKS_TEXT] = ms__lrep_text,
	[MEMSCOPE_LEAKS_JSON] = ms__lrep_json,
	[MEMSCOPE_LEAKS_CSV] = ms__lrep_csv,
	[MEMSCOPE_LEAKS_REFERENCE] = ms__lrep_reference,
};

int memscope_leaks_write(FILE *out, enum memscope_leaks_format fmt, const struct memscope_leaks *l,
	const struct memscope_strtab *st, const struct memscope_leaks_input *inputs,
	size_t n_inputs)
{
	struct leaks_report r = { out, l, st, inputs, n_inputs, 0, NULL, NULL, NULL };
	size_t n = sizeof(writers) / sizeof(writers[0]);
	/* a value that is none of the formats: text */
	int rc = ((size_t)fmt < n ? writers[fmt] : ms__lrep_text)(&r);

	return rc ? rc : ferror(out) ? MEMSCOPE_E_IO : 0;
}
