/* libFuzzer harness of the flame analysis and its writers on any dump read leniently: the folded
 * lines are well formed and their weights add up to each metric's total, the SVG flame graph is
 * well-formed text, the speedscope file is JSON whose profiles carry the same totals, and
 * grouping by op gives every metric the total grouping by stack gives (read as two inputs, each
 * path is under its input's root frame and the totals add up); and of the memory-over-time
 * page, well-formed text whose peak is the timeline's. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memscope/memscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The flame analysis and the leaks analysis its leaked metric weighs. */
struct pair {
	struct memscope_leaks *l;
	struct memscope_flame *f;
};

static int feed(void *ctx, const struct memscope_event *ev)
{
	struct pair *p = ctx;

	if (memscope_leaks_feed(p->l, ev) || memscope_flame_feed(p->f, ev))
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

/* XML text: UTF-8 (checked here, not by the library's own check), no control character but tabs
 * and line breaks, no U+FFFE/U+FFFF, no surrogate or overlong form. */
static void check_xml_chars(const unsigned char *p, const unsigned char *end)
{
	while (p < end) {
		unsigned c = *p++, n;
		uint32_t cp;

		if (c < 0x20 && c != '\n' && c != '\t')
			abort();
		if (c < 0x80)
			continue;
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			abort();
		for (; n; n--, p++) {
			if (p >= end || (*p & 0xc0) != 0x80)
				abort();
			cp = cp << 6 | (*p & 0x3f);
		}
		if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp == 0xfffe ||
			cp == 0xffff || ((c & 0xf0) == 0xe0 && cp < 0x800) ||
			(c >= 0xf0 && cp < 0x10000))
			abort();
	}
}

/* The flame graph: XML characters, one closing tag per frame group, and tooltips and labels
 * without markup (a name's '<' and '&' are escaped). */
static void check_svg(const char *s, size_t n)
{
	const char *p, *end = s + n, *close;
	size_t open_g = 0, close_g = 0;

	check_xml_chars((const unsigned char *)s, (const unsigned char *)end);
	if (n < 7 || memcmp(end - 7, "</svg>\n", 7))
		abort();
	for (p = s; (p = memmem(p, (size_t)(end - p), "<g data-n=\"", 11)); p += 11)
		open_g++;
	for (p = s; (p = memmem(p, (size_t)(end - p), "</g>", 4)); p += 4)
		close_g++;
	if (close_g != open_g + 1)
		abort();
	for (p = s; (p = memmem(p, (size_t)(end - p), "<title>", 7)); p = close) {
		p += 7;
		if (!(close = memmem(p, (size_t)(end - p), "</title>", 8)) ||
			memchr(p, '<', (size_t)(close - p)))
			abort();
		for (; (p = memchr(p, '&', (size_t)(close - p))); p++)
			if (strncmp(p, "&lt;", 4) && strncmp(p, "&gt;", 4) &&
				strncmp(p, "&amp;", 5) && strncmp(p, "&quot;", 6))
				abort();
	}
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
	struct memscope_read_opts ro = { .lenient = 1 };
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
		memscope_timeline_write_chrome(out, t, &name, 1, NULL, &err))
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

static int feed_peak(void *ctx, const struct memscope_event *ev)
{
	if (memscope_peak_feed(ctx, ev))
		abort();
	return 0;
}

/* Each track's points: in time order, the highest its peak. */
struct page_walk {
	const struct memscope_peak_track *t;
	int64_t *max;
	uint64_t *last;
};

static int on_page_point(void *ctx, const struct memscope_peak_point *pt)
{
	struct page_walk *w = ctx;

	if (pt->ts_ns < w->last[pt->track])
		abort();
	w->last[pt->track] = pt->ts_ns;
	if (pt->bytes > w->max[pt->track])
		w->max[pt->track] = pt->bytes;
	return 0;
}

/* The memory-over-time page of the same input: XML characters, the page's two scripts only (names
 * are text), its end; each track's highest point its peak, the owners at the peak with bytes,
 * most first; and the peak over the pools counted, asked for, the timeline's over them. */
static void check_page(const uint8_t *data, size_t size)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_read_opts ro = { .lenient = 1 };
	struct memscope_source *src = NULL;
	struct memscope_peak *p, *p2;
	struct memscope_peak_opts po;
	struct memscope_timeline *t;
	const struct memscope_timeline_point *tp;
	const struct memscope_peak_track *tr;
	const struct memscope_peak_owner *o;
	struct memscope_error err;
	const char *name = "fuzz<&>", *q;
	char *text = NULL;
	size_t len = 0, n, i, scripts = 0;
	struct page_walk w;
	long k;
	FILE *out;

	if (!st || !(p = memscope_peak_new(NULL, st)))
		abort();
	if (memscope_source_open_mem(&src, data, size, "fuzz", st, &ro, &err) == 0)
		memscope_source_read(src, feed_peak, p, &err);
	memscope_source_close(src);
	src = NULL;
	out = open_memstream(&text, &len);
	if (!out || memscope_peak_finish(p) || memscope_peak_write_html(out, p, &name, 1, &err))
		abort();
	fclose(out);
	check_xml_chars((const unsigned char *)text, (const unsigned char *)text + len);
	for (q = text; (q = memmem(q, len - (size_t)(q - text), "<script", 7)); q += 7)
		scripts++;
	if (scripts != 2 || len < 8 || memcmp(text + len - 8, "</html>\n", 8))
		abort();
	free(text);
	memscope_peak_opts_init(&po);
	po.pools = memscope_peak_pools(p, NULL);
	if (!(t = memscope_timeline_new(po.pools, 1, st)) || !(p2 = memscope_peak_new(&po, st)))
		abort();
	if (memscope_source_open_mem(&src, data, size, "fuzz", st, &ro, &err) == 0)
		memscope_source_read(src, feed_timeline, t, &err);
	memscope_source_close(src);
	if (memscope_source_open_mem(&src, data, size, "fuzz", st, &ro, &err) == 0)
		memscope_source_read(src, feed_peak, p2, &err);
	if (memscope_timeline_finish(t) || memscope_peak_finish(p2))
		abort();
	tp = memscope_timeline_peak(t);
	k = memscope_peak_track_of_peak(p2);
	tr = memscope_peak_tracks(p2, &n);
	if ((tp != NULL) != (k >= 0) ||
		(tp && (tr[k].peak != tp->value || memscope_pos_cmp(tr[k].peak_at, tp->at) ||
			       tr[k].pid != tp->pid || tr[k].pool != tp->pool)))
		abort();
	memscope_peak_free(p2);
	k = memscope_peak_track_of_peak(p);
	tr = memscope_peak_tracks(p, &n);
	w.t = tr;
	w.max = calloc(n + 1, sizeof(*w.max));
	w.last = calloc(n + 1, sizeof(*w.last));
	if (!w.max || !w.last || memscope_peak_foreach_point(p, on_page_point, &w))
		abort();
	for (i = 0; i < n; i++)
		if (w.max[i] != tr[i].peak || (k >= 0 && tr[i].peak > tr[k].peak))
			abort();
	o = memscope_peak_owners(p, &n);
	for (i = 0; i < n; i++)
		if (!o[i].bytes || (i && o[i].bytes > o[i - 1].bytes))
			abort();
	free(w.max);
	free(w.last);
	memscope_timeline_free(t);
	memscope_source_close(src);
	memscope_peak_free(p);
	memscope_strtab_free(st);
}

/* The flame analysis of every metric of the input read as n_in inputs named names (merged or
 * not), grouped by group, finished; *st and src[0..n_in) are to free after it. */
static struct memscope_flame *analyse_n(const uint8_t *data, size_t size, unsigned group,
	const char *const *names, uint32_t n_in, int merge, struct memscope_strtab **st,
	struct memscope_source **src)
{
	struct memscope_read_opts ro = { .lenient = 1 };
	struct memscope_flame_opts fo;
	struct memscope_leaks_opts lo;
	struct pair p;
	struct memscope_error err;

	memscope_flame_opts_init(&fo);
	fo.metrics = (1u << MEMSCOPE_FLAME_N_METRICS) - 1;
	fo.group = group;
	fo.inputs = names;
	fo.n_inputs = n_in;
	fo.merge = merge;
	memscope_flame_leaks_opts(&fo, &lo);
	if (!(*st = memscope_strtab_new()) || !(p.f = memscope_flame_new(&fo, *st)) ||
		!(p.l = memscope_leaks_new(&lo, *st)))
		abort();
	memscope_flame_use_leaks(p.f, p.l);
	for (ro.src = 0; ro.src < n_in; ro.src++) {
		src[ro.src] = NULL;
		if (memscope_source_open_mem(&src[ro.src], data, size, "fuzz", *st, &ro, &err) == 0)
			memscope_source_read(src[ro.src], feed, &p, &err);
	}
	/* the leaks first: the flame's finish takes their exit findings */
	if (memscope_leaks_finish(p.l) || memscope_flame_finish(p.f))
		abort();
	memscope_leaks_free(p.l);
	return p.f;
}

/* analyse_n of one input. */
static struct memscope_flame *analyse(const uint8_t *data, size_t size, unsigned group,
	struct memscope_strtab **st, struct memscope_source **src)
{
	return analyse_n(data, size, group, NULL, 1, 0, st, src);
}

/* The input read as two: each path under its input's root frame (or none, merged); the totals
 * of allocated, leaked and count twice one input's (one), the peak one input's. */
static void check_inputs(const uint8_t *data, size_t size, const uint64_t *one)
{
	static const char *const names[] = { "a/x", "b/x" };
	struct memscope_strtab *st;
	struct memscope_source *src[2];
	struct memscope_flame *f;
	struct memscope_error err;
	char *text = NULL, *line;
	size_t len = 0, n;
	uint64_t total, want;
	unsigned m;
	int merge;
	FILE *out;

	for (merge = 0; merge < 2; merge++) {
		f = analyse_n(data, size, MEMSCOPE_FLAME_BY_STACK, names, 2, merge, &st, src);
		for (m = 0; m < MEMSCOPE_FLAME_N_METRICS; m++) {
			memscope_flame_entries(f, m, &n, &total);
			want = m == MEMSCOPE_FLAME_PEAK ? one[m] : 2 * one[m];
			if (one[m] < UINT64_MAX / 2 && total != want)
				abort();
			out = open_memstream(&text, &len);
			if (!out || memscope_flame_write_folded(out, f, m, &err))
				abort();
			fclose(out);
			for (line = text; !merge && line < text + len;
				line = strchr(line, '\n') + 1)
				if (strncmp(line, "a/x;", 4) && strncmp(line, "b/x;", 4))
					abort();
			free(text);
			text = NULL;
		}
		memscope_flame_free(f);
		memscope_source_close(src[0]);
		memscope_source_close(src[1]);
		memscope_strtab_free(st);
	}
}

/* Each metric's total grouped by group. */
static void totals(const uint8_t *data, size_t size, unsigned group, uint64_t *total)
{
	struct memscope_strtab *st;
	struct memscope_source *src;
	struct memscope_flame *f = analyse(data, size, group, &st, &src);
	size_t n;
	unsigned m;

	for (m = 0; m < MEMSCOPE_FLAME_N_METRICS; m++)
		memscope_flame_entries(f, m, &n, &total[m]);
	memscope_flame_free(f);
	memscope_source_close(src);
	memscope_strtab_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memscope_strtab *st;
	struct memscope_source *src;
	struct memscope_flame *f =
		analyse(data, size, size ? data[size - 1] % 3 : MEMSCOPE_FLAME_BY_STACK, &st, &src);
	struct memscope_error err;
	char *text = NULL;
	size_t len = 0, n;
	uint64_t total;
	unsigned m;
	FILE *out;
	cJSON *doc, *p;

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
		out = open_memstream(&text, &len);
		if (!out || memscope_flame_write_svg(out, f, m, "fuzz", &err))
			abort();
		fclose(out);
		check_svg(text, len);
		free(text);
		text = NULL;
	}
	out = open_memstream(&text, &len);
	if (!out || memscope_flame_write_speedscope(out, f, "fuzz", NULL, &err))
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
	check_page(data, size);
	/* a block weighs the same whatever its path is made of */
	{
		uint64_t a[MEMSCOPE_FLAME_N_METRICS], b[MEMSCOPE_FLAME_N_METRICS];

		totals(data, size, MEMSCOPE_FLAME_BY_STACK, a);
		totals(data, size, MEMSCOPE_FLAME_BY_OP, b);
		if (memcmp(a, b, sizeof(a)))
			abort();
		check_inputs(data, size, a);
	}
	memscope_flame_free(f);
	memscope_source_close(src);
	memscope_strtab_free(st);
	return 0;
}
