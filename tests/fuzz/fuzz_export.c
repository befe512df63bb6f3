/* libFuzzer harness of the flame analysis and its writers on any dump read leniently: the folded
 * lines are well formed and their weights add up to each metric's total, and the speedscope file
 * is JSON whose profiles carry the same totals. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memscope/memscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int feed(void *ctx, const struct memscope_event *ev)
{
	if (memscope_flame_feed(ctx, ev))
		abort();
	return 0;
}

/* Every line "frame;...;frame N" with no empty or padded frame; returns the sum of N. */
static uint64_t check_folded(const char *s, size_t n)
{
	const char *end = s + n;
	uint64_t sum = 0;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *sp, *f;
		char *num_end;

		if (!nl)
			abort();
		for (sp = nl; sp > s && sp[-1] != ' '; sp--)
			;
		if (sp == s || sp == nl)
			abort();
		sum += strtoull(sp, &num_end, 10);
		if (num_end != nl)
			abort();
		for (f = s; f < sp - 1;) {
			const char *semi = memchr(f, ';', (size_t)(sp - 1 - f));
			const char *fe = semi ? semi : sp - 1;

			if (fe == f || *f == ' ' || fe[-1] == ' ')
				abort();
			f = fe + 1;
		}
		s = nl + 1;
	}
	return sum;
}

static int feed_timeline(void *ctx, const struct memscope_event *ev)
{
	if (memscope_timeline_feed(ctx, ev))
		abort();
	return 0;
}

/* The timeline of the same input written as a Chrome trace is JSON. */
static void check_timeline(const uint8_t *data, size_t size)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_read_opts ro = { 1, MEMSCOPE_TIME_AUTO, 0 };
	struct memscope_source *src = NULL;
	struct memscope_timeline *t;
	struct memscope_error err;
	const char *name = "fuzz";
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	cJSON *doc;

	if (!st || !(t = memscope_timeline_new(0, 0, st)))
		abort();
	if (memscope_source_open_mem(&src, data, size, "fuzz", st, &ro, &err) == 0)
		memscope_source_read(src, feed_timeline, t, &err);
	out = open_memstream(&text, &len);
	if (!out || memscope_timeline_finish(t) ||
		memscope_timeline_write_chrome(out, t, &name, 1, &err))
		abort();
	fclose(out);
	if (!(doc = cJSON_ParseWithLength(text, len)) ||
		!cJSON_IsArray(cJSON_GetObjectItem(doc, "traceEvents")))
		abort();
	cJSON_Delete(doc);
	free(text);
	memscope_timeline_free(t);
	memscope_source_close(src);
	memscope_strtab_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_read_opts ro = { 1, MEMSCOPE_TIME_AUTO, 0 };
	struct memscope_flame_opts fo;
	struct memscope_source *src = NULL;
	struct memscope_flame *f;
	struct memscope_error err;
	char *text = NULL;
	size_t len = 0, n;
	uint64_t total;
	unsigned m;
	FILE *out;
	cJSON *doc, *p;

	memscope_flame_opts_init(&fo);
	fo.metrics = (1u << MEMSCOPE_FLAME_N_METRICS) - 1;
	fo.group = size && (data[size - 1] & 1) ? MEMSCOPE_FLAME_BY_OWNER : MEMSCOPE_FLAME_BY_STACK;
	if (!st || !(f = memscope_flame_new(&fo, st)))
		abort();
	if (memscope_source_open_mem(&src, data, size, "fuzz", st, &ro, &err) == 0)
		memscope_source_read(src, feed, f, &err);
	if (memscope_flame_finish(f))
		abort();
	for (m = 0; m < MEMSCOPE_FLAME_N_METRICS; m++) {
		memscope_flame_entries(f, m, &n, &total);
		out = open_memstream(&text, &len);
		if (!out || memscope_flame_write_folded(out, f, m, &err))
			abort();
		fclose(out);
		/* (a saturated total is not the sum of its weights) */
		if (check_folded(text, len) != total && total != UINT64_MAX)
			abort();
		free(text);
		text = NULL;
	}
	out = open_memstream(&text, &len);
	if (!out || memscope_flame_write_speedscope(out, f, "fuzz", &err))
		abort();
	fclose(out);
	if (!(doc = cJSON_ParseWithLength(text, len)))
		abort();
	m = 0;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(doc, "profiles"))
	{
		double sum = 0;
		cJSON *w;

		cJSON_ArrayForEach(w, cJSON_GetObjectItem(p, "weights")) sum += w->valuedouble;
		memscope_flame_entries(f, m++, &n, &total);
		if ((total < (UINT64_C(1) << 53) && sum != (double)total) ||
			cJSON_GetArraySize(cJSON_GetObjectItem(p, "samples")) != (int)n)
			abort();
	}
	if (m != MEMSCOPE_FLAME_N_METRICS)
		abort();
	cJSON_Delete(doc);
	free(text);
	check_timeline(data, size);
	memscope_flame_free(f);
	memscope_source_close(src);
	memscope_strtab_free(st);
	return 0;
}
