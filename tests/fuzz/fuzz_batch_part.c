/* libFuzzer harness of memscope-batch's parts (memscope/batch.h): a part read, each summary written
 * back and read again to the same line, and the report of what was read in every format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memscope/memscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Summary s written as its line (the caller frees). */
static char *line_of(const struct memscope_summary *s, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f || memscope_summary_write(f, s))
		abort();
	fclose(f);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct memscope_batch *b = NULL, *again;
	struct memscope_batch_opts o = { 1, MEMSCOPE_LEAK_STEP | MEMSCOPE_LEAK_EXIT, 1, 1 << 20 };
	struct memscope_error err;
	uint64_t shard, n_shards, i;
	int fmt;

	if (!size || !f) {
		if (f)
			fclose(f);
		return 0;
	}
	memscope_batch_read_part(&b, f, "part", &shard, &n_shards, &err);
	fclose(f);
	if (!b)
		return 0;
	/* a summary read back from its own line is the same summary: the same line again */
	if (!(again = memscope_batch_new(memscope_batch_inputs(b), 1, 0)))
		abort();
	for (i = 0; i < memscope_batch_inputs(b); i++) {
		const struct memscope_summary *s = memscope_batch_get(b, i);
		char *l1, *l2;
		size_t n1, n2;

		if (!s)
			continue;
		l1 = line_of(s, &n1);
		if (memscope_batch_add_line(again, l1, n1 - 1, "again", 1, &err))
			abort();
		l2 = line_of(memscope_batch_get(again, i), &n2);
		if (n1 != n2 || memcmp(l1, l2, n1))
			abort();
		free(l1);
		free(l2);
	}
	/* the report of a part that is not whole must not crash (the tool refuses to write one) */
	for (fmt = 0; fmt < 3; fmt++) {
		char *text = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);

		if (!out)
			abort();
		memscope_batch_write(out, (enum memscope_batch_format)fmt, b, &o, NULL);
		fclose(out);
		free(text);
	}
	memscope_batch_free(again);
	memscope_batch_free(b);
	return 0;
}
