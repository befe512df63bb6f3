/* Memory over time for memscope-report's page (formats/report.md "timeline", "steps"): the
 * tracks with the highest peaks cut to columns by their lowest and highest live bytes, the
 * profiler's samples, the steps as bands, the largest blocks of the peak's track from allocation
 * to free, and the per step table of the peak's track. */
#include <stdlib.h>
#include <string.h>

#include "../writers/report.h"
#include "report_impl.h"

/* One column of a cut series: the first time in it, the lowest and highest value there. */
struct col {
	uint64_t t;
	int64_t lo, hi;
	int has;
};

/* The column of time rel (ns after the origin) on the axis [from, to]. */
static size_t column(uint64_t from, uint64_t to, uint64_t rel)
{
	double f;

	if (rel <= from || to <= from)
		return 0;
	f = (double)(rel - from) / (double)(to - from) * MS__REPORT_MAX_COLUMNS;
	return f >= MS__REPORT_MAX_COLUMNS - 1 ? MS__REPORT_MAX_COLUMNS - 1 : (size_t)f;
}

/* A value v that follows prev at time t into column c. */
static void col_add(struct col *c, uint64_t t, int64_t prev, int64_t v)
{
	if (!c->has) {
		c->has = 1, c->t = t;
		c->lo = c->hi = prev;
	}
	c->lo = v < c->lo ? v : c->lo;
	c->hi = v > c->hi ? v : c->hi;
}

/* The points of the tracks drawn, cut to columns. */
struct cut {
	const struct memscope_peak *p;
	const struct memscope_peak_track *t;
	uint64_t from, to;
	long *slot; /* per track: its place among those drawn, -1 not drawn */
	struct col *cols;
	int64_t *prev;
};

static int cut_point(void *ctx, const struct memscope_peak_point *pt)
{
	struct cut *c = ctx;
	long s = c->slot[pt->track];
	uint64_t rel;

	if (s < 0)
		return 0;
	rel = pt->ts_ns - memscope_peak_origin(c->p, c->t[pt->track].src);
	col_add(&c->cols[(size_t)s * MS__REPORT_MAX_COLUMNS + column(c->from, c->to, rel)], rel,
		c->prev[s], pt->bytes);
	c->prev[s] = pt->bytes;
	return 0;
}

/* ,"points":[[t,lo,hi],...] of a cut series (lo only when with_hi is 0). */
static void points(FILE *out, const struct col *cols, int with_hi)
{
	size_t i;
	int first = 1;

	fputs(",\"points\":[", out);
	for (i = 0; i < MS__REPORT_MAX_COLUMNS; i++) {
		if (!cols[i].has)
			continue;
		fprintf(out, "%s[%llu,%lld", first ? "" : ",", (unsigned long long)cols[i].t,
			(long long)(with_hi ? cols[i].lo : cols[i].hi));
		if (with_hi)
			fprintf(out, ",%lld", (long long)cols[i].hi);
		fputc(']', out);
		first = 0;
	}
	fputc(']', out);
}

struct by_peak {
	int64_t peak;
	size_t i;
};

static int cmp_peak(const void *pa, const void *pb)
{
	const struct by_peak *a = pa, *b = pb;
	int c = MS__CMP(b->peak, a->peak);

	return c ? c : MS__CMP(a->i, b->i);
}

/* The tracks to draw into pick: highest peaks first, at most MS__REPORT_MAX_TRACKS; their
 * number, or -1 on OOM. */
static long drawn(const struct memscope_peak_track *t, size_t n, size_t *pick)
{
	struct by_peak *b = malloc((n ? n : 1) * sizeof(*b));
	size_t i;

	if (!b)
		return -1;
	for (i = 0; i < n; i++)
		b[i].peak = t[i].peak, b[i].i = i;
	ms__qsort(b, n, sizeof(*b), cmp_peak);
	for (i = 0; i < n && i < MS__REPORT_MAX_TRACKS; i++)
		pick[i] = b[i].i;
	free(b);
	return (long)i;
}

/* ,"clock":{"shift_ns":S|null,"note":...} when input src has files recorded far apart (shift:
 * the series' own, NULL unknown), else ,"clock":null. */
static void clock_member(
	FILE *out, const struct ms__report_detail *d, uint32_t src, const int64_t *shift)
{
	char note[600];

	if (!memscope_peak_clock_note(d->peak, src, note, sizeof(note))) {
		fputs(",\"clock\":null", out);
		return;
	}
	fputs(",\"clock\":{\"shift_ns\":", out);
	if (shift)
		fprintf(out, "%lld", (long long)*shift);
	else
		fputs("null", out);
	fputs(",\"note\":", out);
	ms__json_cstr(out, note);
	fputc('}', out);
}

/* One track's members and its points. */
static void track(
	FILE *out, const struct ms__report_detail *d, size_t k, const struct col *cols, int pids)
{
	size_t n;
	const struct memscope_peak_track *t = memscope_peak_tracks(d->peak, &n) + k;
	uint64_t origin = memscope_peak_origin(d->peak, t->src);
	char buf[MEMSCOPE_DEVICE_TEXT_MAX], label[96];
	const char *dev = memscope_device_text(t->device, buf);

	if (pids && t->pid != MEMSCOPE_ID_NONE)
		snprintf(label, sizeof(label), "%s dev %s pid %llu", memscope_subtype_name(t->pool),
			dev, (unsigned long long)t->pid);
	else
		snprintf(label, sizeof(label), "%s dev %s", memscope_subtype_name(t->pool), dev);
	fprintf(out, "{\"id\":%zu,\"input\":%zu,\"pid\":", k, d->input);
	if (t->pid == MEMSCOPE_ID_NONE)
		fputs("null", out);
	else
		fprintf(out, "%llu", (unsigned long long)t->pid);
	fprintf(out,
		",\"device\":\"%s\",\"pool\":\"%s\",\"label\":\"%s\",\"peak\":%lld,\"peak_ns\":%"
		"llu,"
		"\"end_bytes\":%lld",
		dev, memscope_subtype_name(t->pool), label, (long long)t->peak,
		(unsigned long long)(t->peak_at.ts_ns - origin), (long long)t->end_bytes);
	clock_member(out, d, t->src, NULL);
	points(out, cols, 1);
	fputc('}', out);
}

/* ,"tracks":[...],"more_tracks":k. 0 or NOMEM (nothing written). */
static int tracks(FILE *out, const struct ms__report_detail *d, uint64_t from, uint64_t to)
{
	size_t n, i, k;
	const struct memscope_peak_track *t = memscope_peak_tracks(d->peak, &n);
	size_t pick[MS__REPORT_MAX_TRACKS];
	struct cut c = { d->peak, t, from, to, NULL, NULL, NULL };
	int pids = 0, rc = MEMSCOPE_E_NOMEM;
	long got = drawn(t, n, pick);

	k = got < 0 ? 0 : (size_t)got;
	if (got < 0 || !(c.slot = malloc((n ? n : 1) * sizeof(*c.slot))) ||
		!(c.cols = calloc(k * MS__REPORT_MAX_COLUMNS + 1, sizeof(*c.cols))) ||
		!(c.prev = calloc(k + 1, sizeof(*c.prev))))
		goto out;
	for (i = 0; i < n; i++) {
		c.slot[i] = -1;
		pids |= t[i].pid != t[0].pid;
	}
	for (i = 0; i < k; i++)
		c.slot[pick[i]] = (long)i, c.prev[i] = t[pick[i]].start_bytes;
	memscope_peak_foreach_point(d->peak, cut_point, &c);
	fputs(",\"tracks\":[", out);
	for (i = 0; i < k; i++) {
		if (i)
			fputc(',', out);
		track(out, d, pick[i], c.cols + i * MS__REPORT_MAX_COLUMNS, pids);
	}
	fprintf(out, "],\"more_tracks\":%zu", n - k);
	rc = 0;
out:
	free(c.slot);
	free(c.cols);
	free(c.prev);
	return rc;
}

/* The name of series s of a counter track in the page's words. */
static const char *series_name(unsigned s)
{
	return s == MEMSCOPE_CTR_TOTAL	? "reserved"
	       : s == MEMSCOPE_CTR_USED ? "allocated"
					: "active";
}

/* One sample series (track ct, series s) cut to columns by its highest value there. */
static void sample_series(FILE *out, const struct ms__report_detail *d,
	const struct memscope_counter_track *ct, unsigned s, uint64_t from, uint64_t to,
	struct col *cols, int first)
{
	struct memscope_counter_iter it;
	struct memscope_counter_sample smp;
	uint64_t origin = memscope_peak_origin(d->peak, ct->src);
	const char *src = memscope_counter_source(ct->subtype);
	char label[300];

	memset(cols, 0, MS__REPORT_MAX_COLUMNS * sizeof(*cols));
	memscope_counter_iter_init(&it, ct);
	while (memscope_counter_next(&it, &smp)) {
		uint64_t rel = smp.ts_ns - origin;

		if (smp.has & 1u << s)
			col_add(&cols[column(from, to, rel)], rel, smp.v[s], smp.v[s]);
	}
	snprintf(label, sizeof(label), "%s %s %s", src ? src : "samples",
		memscope_strtab_str(d->st, ct->name, NULL), series_name(s));
	fprintf(out, "%s{\"label\":", first ? "" : ",");
	ms__json_cstr(out, label);
	fprintf(out, ",\"series\":\"%s\",\"pool\":", series_name(s));
	if (ct->pool)
		fprintf(out, "\"%s\"", memscope_subtype_name(ct->pool));
	else
		fputs("null", out);
	/* a file recorded far apart: drawn from the input's start, shift_ns taken off its times */
	if (ct->shift_ns)
		clock_member(out, d, ct->src, &ct->shift_ns);
	else
		fputs(",\"clock\":null", out);
	points(out, cols, 0);
	fputc('}', out);
}

/* ,"samples":[...]: the peak process's and device's series first, at most
 * MS__REPORT_MAX_SAMPLES. */
static void samples(FILE *out, const struct ms__report_detail *d, uint64_t from, uint64_t to)
{
	size_t n, nt, i, written = 0;
	const struct memscope_counter_track *ct = memscope_peak_counters(d->peak, &n);
	long k = ms__report_peak_track(d);
	const struct memscope_peak_track *t = k < 0 ? NULL : memscope_peak_tracks(d->peak, &nt) + k;
	struct col *cols = malloc(MS__REPORT_MAX_COLUMNS * sizeof(*cols));
	unsigned s, pass;

	fputs(",\"samples\":[", out);
	for (pass = 0; cols && pass < 2; pass++)
		for (i = 0; i < n; i++) {
			int mine = t && ct[i].pid == t->pid && ct[i].device == t->device;

			if (mine != !pass)
				continue;
			for (s = 0; s < MEMSCOPE_CTR_N && written < MS__REPORT_MAX_SAMPLES; s++)
				if (ct[i].series & 1u << s)
					sample_series(
						out, d, &ct[i], s, from, to, cols, !written++);
		}
	fputc(']', out);
	free(cols);
}

/* The k-th step index drawn of n (k from 0): every stride-th so that at most
 * MS__REPORT_MAX_STEPS are, the last always; 0 past them. */
static uint64_t step_index(uint64_t n, uint64_t k)
{
	uint64_t stride, below;

	if (n <= MS__REPORT_MAX_STEPS)
		return k < n ? k + 1 : 0;
	stride = (n - 1 + MS__REPORT_MAX_STEPS - 2) / (MS__REPORT_MAX_STEPS - 1);
	below = (n - 1 + stride - 1) / stride; /* indexes 1, 1 + stride, ... below n */
	if (k < below)
		return 1 + k * stride;
	return k == below ? n : 0;
}

/* ,"steps":[{"number","from_ns","to_ns"}] of the peak's process. */
static void step_bands(FILE *out, const struct ms__report_detail *d, uint64_t to)
{
	const struct memscope_step_proc *sp = ms__report_peak_steps(d);
	uint64_t n = sp ? memscope_steps_count(sp) : 0, i, c, lo, hi, origin;
	int open, first = 1;
	size_t nt;
	long k = ms__report_peak_track(d);

	fputs(",\"steps\":[", out);
	origin = k < 0 ? 0
		       : memscope_peak_origin(d->peak, memscope_peak_tracks(d->peak, &nt)[k].src);
	for (c = 0; (i = step_index(n, c)); c++) {
		uint64_t num = memscope_steps_number(sp, i);

		if (!memscope_steps_span(sp, num, &lo, &hi, &open))
			continue;
		fprintf(out, "%s{\"number\":%llu,\"from_ns\":%llu,\"to_ns\":%llu}",
			first ? "" : ",", (unsigned long long)num,
			(unsigned long long)(lo > origin ? lo - origin : 0),
			(unsigned long long)(hi == UINT64_MAX ? to : hi - origin));
		first = 0;
	}
	fputc(']', out);
}

struct bkey {
	uint64_t from, ptr;
	size_t j;
};

static int cmp_bkey(const void *pa, const void *pb)
{
	const struct bkey *a = pa, *b = pb;
	int c = MS__CMP(a->from, b->from);

	return c ? c : MS__CMP(a->ptr, b->ptr);
}

/* The leak site (-1: none) and op of each of key's blocks, from the findings of its block. 0 or
 * NOMEM. */
static int block_sites(const struct ms__report_detail *d, const struct ms__rblocks_key *key,
	long *site, uint32_t *op)
{
	size_t ns, ng, i, nl = memscope_leaks_count(d->leaks);
	size_t *sites = ms__report_sites(d, &ns);
	long *gsite = NULL;
	struct bkey *b = malloc((key->n + 1) * sizeof(*b));
	int rc = 0;

	memscope_leaks_groups(d->leaks, &ng);
	if (!b || !(gsite = malloc((ng + 1) * sizeof(*gsite)))) {
		rc = MEMSCOPE_E_NOMEM;
		goto out;
	}
	for (i = 0; i < ng; i++)
		gsite[i] = -1;
	for (i = 0; sites && i < ns; i++)
		gsite[sites[i]] = (long)i;
	for (i = 0; i < key->n; i++) {
		b[i] = (struct bkey){ key->heap[i].from_ns, key->heap[i].ptr, i };
		site[i] = -1, op[i] = key->heap[i].op;
	}
	ms__qsort(b, key->n, sizeof(*b), cmp_bkey);
	for (i = 0; i < nl; i++) {
		const struct memscope_leak *x = memscope_leaks_get(d->leaks, i);
		struct bkey want = { x->blk.alloc_ts_ns, x->blk.ptr, 0 }, *hit;

		if (x->blk.pid != key->pid || x->blk.device != key->device ||
			x->blk.pool != key->pool ||
			!(hit = bsearch(&want, b, key->n, sizeof(*b), cmp_bkey)))
			continue;
		site[hit->j] = x->report_group < ng ? gsite[x->report_group] : -1;
		if (!op[hit->j])
			op[hit->j] = x->op;
	}
out:
	free(sites);
	free(gsite);
	free(b);
	return rc;
}

/* ,"blocks":[...]: the largest blocks of track k. */
static void blocks(FILE *out, const struct ms__report_detail *d, long k)
{
	size_t n, i;
	const struct memscope_peak_track *t = memscope_peak_tracks(d->peak, &n) + k;
	const struct ms__rblocks_key *key = ms__rblocks_key(d->blocks, t->pid, t->device, t->pool);
	uint64_t origin = memscope_peak_origin(d->peak, t->src);
	long *site = key ? malloc((key->n + 1) * sizeof(*site)) : NULL;
	uint32_t *op = key ? malloc((key->n + 1) * sizeof(*op)) : NULL;

	fputs(",\"blocks\":[", out);
	if (!site || !op || block_sites(d, key, site, op))
		goto out;
	for (i = 0; i < key->n; i++) {
		const struct ms__rblock *b = &key->heap[i];

		fprintf(out,
			"%s{\"id\":%zu,\"track\":%ld,\"from_ns\":%llu,\"to_ns\":", i ? "," : "", i,
			k, (unsigned long long)(b->from_ns - origin));
		if (b->to_ns)
			fprintf(out, "%llu", (unsigned long long)(b->to_ns - origin));
		else
			fputs("null", out);
		fprintf(out, ",\"bytes\":%lld,\"op\":", (long long)b->bytes);
		ms__json_id_or_null(out, d->st, op[i]);
		fputs(",\"owner\":", out);
		ms__json_id_or_null(out, d->st, b->owner);
		if (site[i] < 0)
			fputs(",\"site\":null", out);
		else
			fprintf(out, ",\"site\":%ld", site[i]);
		fputs(",\"stack\":", out);
		ms__report_json_stack(out, d->st, b->stack_py, b->stack_c);
		fputc('}', out);
	}
out:
	fputc(']', out);
	free(site);
	free(op);
}

void ms__report_json_timeline(FILE *out, const struct ms__report_detail *d)
{
	uint64_t from, to;
	long k = ms__report_peak_track(d);

	memscope_peak_axis(d->peak, &from, &to);
	if (k < 0 && !to) {
		fputs(",\"timeline\":null", out);
		return;
	}
	fprintf(out, ",\"timeline\":{\"from_ns\":%llu,\"to_ns\":%llu", (unsigned long long)from,
		(unsigned long long)to);
	if (tracks(out, d, from, to))
		fputs(",\"tracks\":[],\"more_tracks\":0", out);
	samples(out, d, from, to);
	step_bands(out, d, to);
	if (k >= 0)
		blocks(out, d, k);
	else
		fputs(",\"blocks\":[]", out);
	fputc('}', out);
}

/* ------------------------------------------------------------------------------------------ */
/* the per step table */

struct step_walk {
	uint32_t track;
	struct ms__report_step_row *rows;
	size_t n, next;
	int64_t prev;
};

/* The rows whose span ended before ts: live bytes then. */
static void steps_close(struct step_walk *w, uint64_t ts)
{
	while (w->next < w->n && ts > w->rows[w->next].hi) {
		struct ms__report_step_row *r = &w->rows[w->next++];

		r->end = w->prev;
		if (!r->seen)
			r->peak = w->prev;
	}
}

static int step_point(void *ctx, const struct memscope_peak_point *pt)
{
	struct step_walk *w = ctx;
	struct ms__report_step_row *r;
	int64_t delta;

	if (pt->track != w->track)
		return 0;
	steps_close(w, pt->ts_ns);
	delta = pt->bytes - w->prev;
	if (w->next < w->n && pt->ts_ns >= (r = &w->rows[w->next])->lo) {
		if (!r->seen)
			r->seen = 1, r->peak = w->prev;
		r->peak = pt->bytes > r->peak ? pt->bytes : r->peak;
		if (delta > 0)
			r->alloc += delta;
		else
			r->freed -= delta;
	}
	w->prev = pt->bytes;
	return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
	return MS__CMP(*(const uint64_t *)pa, *(const uint64_t *)pb);
}

/* Mark the rows of the steps a step leak site's first block was allocated in. 0 or NOMEM. */
static int leak_firsts(
	const struct ms__report_detail *d, struct ms__report_step_row *rows, size_t n)
{
	size_t ng, i, k = 0;
	const struct memscope_leak_group *g = memscope_leaks_groups(d->leaks, &ng);
	uint64_t *first = malloc((ng + 1) * sizeof(*first));

	if (!first)
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < ng; i++)
		if (g[i].kind == MEMSCOPE_LEAK_STEP)
			first[k++] = memscope_leaks_get(d->leaks, g[i].first)->alloc_step;
	ms__qsort(first, k, sizeof(*first), cmp_u64);
	for (i = 0; i < n; i++)
		rows[i].leak_first =
			bsearch(&rows[i].number, first, k, sizeof(*first), cmp_u64) != NULL;
	free(first);
	return 0;
}

struct ms__report_step_row *ms__report_step_rows(const struct ms__report_detail *d, size_t *n_rows)
{
	const struct memscope_step_proc *sp = ms__report_peak_steps(d);
	uint64_t n = sp ? memscope_steps_count(sp) : 0, i, c;
	size_t nt, j;
	long k = ms__report_peak_track(d);
	struct step_walk w = { (uint32_t)k, NULL, 0, 0, 0 };
	int open;

	*n_rows = 0;
	if (!n || !(w.rows = calloc(
			    n < MS__REPORT_MAX_STEPS ? n : MS__REPORT_MAX_STEPS, sizeof(*w.rows))))
		return NULL;
	for (c = 0; (i = step_index(n, c)) && w.n < MS__REPORT_MAX_STEPS; c++) {
		struct ms__report_step_row *r = &w.rows[w.n];

		r->number = memscope_steps_number(sp, i);
		w.n += memscope_steps_span(sp, r->number, &r->lo, &r->hi, &open);
	}
	w.prev = memscope_peak_tracks(d->peak, &nt)[k].start_bytes;
	memscope_peak_foreach_point(d->peak, step_point, &w);
	steps_close(&w, UINT64_MAX);
	for (j = w.next; j < w.n; j++) { /* open to the end: what it had at the end */
		w.rows[j].end = w.prev;
		w.rows[j].peak = w.rows[j].seen ? w.rows[j].peak : w.prev;
	}
	if (leak_firsts(d, w.rows, w.n)) {
		free(w.rows);
		return NULL;
	}
	*n_rows = w.n;
	return w.rows;
}

void ms__report_json_steps(FILE *out, const struct ms__report_detail *d)
{
	size_t n, j;
	struct ms__report_step_row *rows = ms__report_step_rows(d, &n);

	fputs(",\"steps\":[", out);
	for (j = 0; j < n; j++) {
		const struct ms__report_step_row *r = &rows[j];

		fprintf(out, "%s{\"number\":%llu,\"end_bytes\":%lld,\"alloc_bytes\":%lld,",
			j ? "," : "", (unsigned long long)r->number, (long long)r->end,
			(long long)r->alloc);
		fprintf(out, "\"freed_bytes\":%lld,\"peak_bytes\":%lld,\"leak_first\":%s}",
			(long long)r->freed, (long long)r->peak, r->leak_first ? "true" : "false");
	}
	fputc(']', out);
	free(rows);
}
