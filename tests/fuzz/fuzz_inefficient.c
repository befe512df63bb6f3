/* libFuzzer harness of the inefficient-memory analysis over dump CSV or capture input: a small idle
 * threshold so every rule fires, all three reports, and the annotated copy, which must succeed on
 * any dump the analysis read and be the input itself when nothing was flagged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memscope/memscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int feed(void *ctx, const struct memscope_event *ev)
{
	return memscope_inefficient_feed(ctx, ev);
}

static const struct memscope_read_opts read_opts = { .lenient = 1 };

/* The annotated copy of data; checks it against the analysis. */
static void check_annotate(const uint8_t *data, size_t size, struct memscope_strtab *st,
	struct memscope_inefficient *a)
{
	struct memscope_source *src = NULL;
	struct memscope_error err;
	char *copy = NULL;
	size_t copy_len = 0;
	FILE *out = open_memstream(&copy, &copy_len);
	int rc;

	if (!out || memscope_source_open_mem(&src, data, size, "fuzz", st, &read_opts, &err))
		abort();
	rc = memscope_inefficient_annotate(a, 0, src, out, &err);
	if (fclose(out))
		abort();
	if (memscope_source_format(src) == MEMSCOPE_FORMAT_DUMP_CSV) {
		if (rc)
			abort(); /* a flagged row the copy could not find again */
		if (!memscope_inefficient_count(a) &&
			(copy_len != size || memcmp(copy, data, size)))
			abort(); /* nothing flagged: the copy is the input */
	} else if (rc != MEMSCOPE_E_UNSUPPORTED) {
		abort();
	}
	memscope_source_close(src);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[1] = { "fuzz" };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_inefficient_opts o;
	struct memscope_inefficient *a;
	struct memscope_source *src = NULL;
	struct memscope_error err;
	FILE *out = fopen("/dev/null", "w");
	int fmt, rc = -1;

	memscope_inefficient_opts_init(&o);
	o.idle_threshold = 1 + size % 4;
	o.min_size = size % 5 == 0 ? 4096 : 0;
	a = st ? memscope_inefficient_new(&o, st) : NULL;
	if (!a || !out)
		abort();
	if (!memscope_source_open_mem(&src, data, size, "fuzz", st, &read_opts, &err))
		rc = memscope_source_read(src, feed, a, &err);
	memscope_source_close(src);
	if (memscope_inefficient_finish(a))
		abort();
	for (fmt = MEMSCOPE_INEFF_TEXT; fmt <= MEMSCOPE_INEFF_CSV; fmt++)
		memscope_inefficient_write(
			out, (enum memscope_ineff_format)fmt, a, st, names, 1, size % 3);
	if (rc == 0)
		check_annotate(data, size, st, a);
	fclose(out);
	memscope_inefficient_free(a);
	memscope_strtab_free(st);
	return 0;
}
