/* libFuzzer harness of the leak analysis over dump CSV or capture input: every kind on, a mark
 * text the dictionary knows, the second pass when asked for, every grouping, and all four
 * reports (with and without --top). */
#include <stdio.h>
#include <stdlib.h>

#include "memscope/memscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int feed(void *ctx, const struct memscope_event *ev)
{
	return memscope_leaks_feed(ctx, ev);
}

/* One lenient pass over the input into l. */
static void read_into(
	const uint8_t *data, size_t size, struct memscope_strtab *st, struct memscope_leaks *l)
{
	struct memscope_read_opts ro = { .lenient = 1 };
	struct memscope_source *src = NULL;
	struct memscope_error err;

	if (!memscope_source_open_mem(&src, data, size, "fuzz", st, &ro, &err))
		memscope_source_read(src, feed, l, &err);
	memscope_source_close(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct memscope_leaks_input in = { "fuzz", 0 };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_leaks_opts o;
	struct memscope_leaks *l;
	FILE *out = fopen("/dev/null", "w");
	int fmt;

	memscope_leaks_opts_init(&o);
	o.mark = "iter";
	o.skip_steps = size % 3;
	o.min_steps_alive = 1 + size % 2;
	o.group_by = (enum memscope_leaks_group_by)(size / 2 % 3);
	o.top = size / 6 % 3; /* 0: every group */
	l = st ? memscope_leaks_new(&o, st) : NULL;
	if (!l || !out)
		abort();
	read_into(data, size, st, l);
	if (memscope_leaks_finish(l))
		abort();
	if (memscope_leaks_needs_rewind(l, NULL, NULL)) {
		if (memscope_leaks_rewind(l))
			abort();
		read_into(data, size, st, l);
		if (memscope_leaks_finish(l) || memscope_leaks_needs_rewind(l, NULL, NULL))
			abort();
	}
	for (fmt = MEMSCOPE_LEAKS_TEXT; fmt <= MEMSCOPE_LEAKS_REFERENCE; fmt++)
		memscope_leaks_write(out, (enum memscope_leaks_format)fmt, l, st, &in, 1);
	fclose(out);
	memscope_leaks_free(l);
	memscope_strtab_free(st);
	return 0;
}
