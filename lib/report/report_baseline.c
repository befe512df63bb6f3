/* The report's "baseline" member: the run beside its baseline, per op (memscope-compare's figures
 * for one input a side), per op/owner of the leaks and per rank, ranked by the difference. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../writers/report.h"
#include "memscope/memscope.h"
#include "ranks.h"

/* the most rows of the baseline's "ranks" */
#define MAX_RANK_ROWS 1000

/* ------------------------------------------------------------------------------------------ */
/* the comparison's sides, fed in the reads of gather */

/* String id of s->from as one of s->to, through s->ids (the well-known ones are the same). 0 or
 * NOMEM. */
static int translate(struct ms__ranks_part *s, uint32_t *id)
{
	uint64_t to;
	const char *text;
	size_t len;
	uint32_t mine;

	if (*id < MEMSCOPE_STR_WELL_KNOWN_COUNT)
		return 0;
	if (ms__u64map_get(&s->ids, *id, &to, NULL)) {
		*id = (uint32_t)to;
		return 0;
	}
	if (!(text = memscope_strtab_str(s->from, *id, &len))) {
		*id = 0;
		return 0;
	}
	if (memscope_strtab_intern(s->to, text, len, &mine) ||
		ms__u64map_put(&s->ids, *id, mine, 0))
		return MEMSCOPE_E_NOMEM;
	*id = mine;
	return 0;
}

/* One event of the side's input, its names put in r's table: what the comparison reads of it
 * (memscope_compare_side_add: the kind, pool, device, thread, sizes and name). */
static int side_feed(void *self, const struct memscope_event *ev)
{
	struct ms__ranks_part *s = self;
	struct memscope_event e = *ev;

	e.stack_py = e.stack_c = 0;
	e.n_attrs = 0;
	e.attrs = NULL;
	if (translate(s, &e.name) || translate(s, &e.file) || translate(s, &e.kind_text) ||
		translate(s, &e.subtype_text))
		return MEMSCOPE_E_NOMEM;
	return memscope_compare_side_add(s->cmp, &e);
}

static int side_finish(void *self)
{
	(void)self;
	return 0;
}

static const struct memscope_analysis side_analysis = {
	.name = "report_compare_side",
	.feed = side_feed,
	.finish = side_finish,
	.skip_kinds = 0,
};

int ms__ranks_item(struct ms__ranks *r, enum ms__ranks_side side, const char *name,
	const struct memscope_strtab *st, struct memscope_run_item *item)
{
	struct ms__ranks_part *s;

	if ((unsigned)side > MS__RANKS_BASE || r->side[side].cmp || r->finished)
		return MEMSCOPE_E_ARG;
	s = &r->side[side];
	if (!(s->cmp = memscope_compare_side_new(name, r->st)))
		return MEMSCOPE_E_NOMEM;
	s->from = st;
	s->to = r->st;
	item->analysis = &side_analysis;
	item->self = s;
	return 0;
}

static int count_row(void *ctx, const struct memscope_compare_row *row)
{
	return memscope_compare_summary_add(ctx, row);
}

int ms__baseline_finish(struct ms__ranks *r)
{
	struct memscope_compare_side *run = r->side[MS__RANKS_RUN].cmp;
	struct memscope_compare_side *base = r->side[MS__RANKS_BASE].cmp;
	struct memscope_compare_opts o = { .level = MEMSCOPE_COMPARE_OP };
	struct memscope_error err;
	int rc;

	ms__u64map_free(&r->side[MS__RANKS_RUN].ids);
	ms__u64map_free(&r->side[MS__RANKS_BASE].ids);
	if (!run || !base) {
		snprintf(r->cmp_why, sizeof(r->cmp_why), "%s",
			r->side[MS__RANKS_BASE].n_rows
				? "per op figures compare one input with one (memscope-compare)"
				: "");
		goto out;
	}
	memscope_error_clear(&err);
	o.metric = memscope_compare_default_metric(base, run, o.level);
	if (!(r->sum = memscope_compare_summary_new(MS__RANKS_MAX_BY, &o)))
		return MEMSCOPE_E_NOMEM;
	rc = memscope_compare_run(base, run, &o, r->st, count_row, r->sum, NULL, &err);
	if (rc) {
		memscope_compare_summary_free(r->sum);
		r->sum = NULL;
		if (rc == MEMSCOPE_E_NOMEM)
			return rc;
		memscope_error_format(&err, r->cmp_why, sizeof(r->cmp_why));
	}
out:
	/* the rows are counted (or there is nothing to compare): the sides' rows go */
	memscope_compare_side_free(run);
	memscope_compare_side_free(base);
	r->side[MS__RANKS_RUN].cmp = r->side[MS__RANKS_BASE].cmp = NULL;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* each side in three figures */

/* What a side adds up to: its highest peak and growth, its leaked bytes (exit + step). */
struct side_sum {
	int has_peak, has_growth, has_leaks;
	int64_t peak, growth;
	uint64_t leaks;
};

static void add_up(const struct ms__ranks_part *s, struct side_sum *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < s->n_rows; i++) {
		const struct ms__ranks_row *w = &s->rows[i];
		enum ms__ranks_fig f;

		if (!w->ok)
			continue;
		if ((w->has >> MS__FIG_PEAK & 1) &&
			(!t->has_peak || w->fig[MS__FIG_PEAK] > t->peak))
			t->peak = w->fig[MS__FIG_PEAK], t->has_peak = 1;
		if ((w->has >> MS__FIG_GROWTH & 1) &&
			(!t->has_growth || w->fig[MS__FIG_GROWTH] > t->growth))
			t->growth = w->fig[MS__FIG_GROWTH], t->has_growth = 1;
		for (f = MS__FIG_STEP_LEAK; f <= MS__FIG_EXIT_LEAK; f++)
			if (w->has >> f & 1) {
				uint64_t b = w->fig[f] < 0 ? 0 : (uint64_t)w->fig[f];

				t->leaks = t->leaks + b < b ? UINT64_MAX : t->leaks + b;
				t->has_leaks = 1;
			}
	}
}

/* the baseline's inputs as the report's "inputs" */
static void put_inputs(FILE *out, const struct ms__ranks_part *s)
{
	size_t i;
	const char *sep = "";

	fputs("\"inputs\":[", out);
	for (i = 0; i < s->n_rows; i++) {
		const struct ms__ranks_row *w = &s->rows[i];

		if (!w->added)
			continue;
		fprintf(out, "%s{\"index\":%zu,\"name\":", sep, i);
		ms__ranks_put_str(out, w->input);
		fputs(",\"rank\":", out);
		ms__ranks_put_i64(out, w->has >> MS__FIG_RANK & 1, w->fig[MS__FIG_RANK]);
		fputs(",\"node\":", out);
		ms__ranks_put_str(out, w->node);
		fputs(",\"format\":", out);
		ms__ranks_put_str(out, w->format);
		fputs(",\"status\":", out);
		ms__ranks_put_str(out, w->status);
		fputs(",\"error\":", out);
		ms__ranks_put_str(out, w->error ? w->error : "");
		fputs(",\"end\":", out);
		ms__ranks_put_str(out, w->end);
		fputc('}', out);
		sep = ",";
	}
	fputc(']', out);
}

/* ------------------------------------------------------------------------------------------ */
/* the differences per op/owner: the comparison's, and the leaks' */

/* the signed difference run - base, saturating */
static int64_t minus(int64_t run, int64_t base)
{
	int64_t d;

	if (__builtin_sub_overflow(run, base, &d))
		d = run > base ? INT64_MAX : INT64_MIN;
	return d;
}

static uint64_t size_of(int64_t v)
{
	return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

/* bytes as a figure, held at INT64_MAX (memscope-batch's overflow) */
static int64_t as_figure(uint64_t bytes)
{
	return bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes;
}

/* "by": what each op allocated itself, as memscope-compare's summary ranks them */
static void put_by(FILE *out, const struct ms__ranks *r)
{
	const struct memscope_compare_group *const *top = NULL;
	size_t n = 0, i;

	if (r->sum)
		top = memscope_compare_summary_top(r->sum, &n);
	fputs(",\"by\":[", out);
	for (i = 0; i < n; i++) {
		fprintf(out, "%s{\"name\":", i ? "," : "");
		ms__json_id(out, r->st, top[i]->name);
		fprintf(out,
			",\"by\":\"op\",\"device\":%" PRId32 ",\"run\":%" PRId64
			",\"base\":%" PRId64 ",\"diff\":%" PRId64 "}",
			top[i]->device, top[i]->cmp, top[i]->base, top[i]->diff);
	}
	fputs("],\"by_why\":", out);
	ms__json_cstr(out, r->sum ? "" : r->cmp_why);
}

/* The leaked bytes of one op/owner on both sides. */
struct leak_by {
	uint32_t name; /* string id of r->st */
	unsigned by;   /* enum memscope_peak_by */
	uint16_t pool; /* by NONE: named by its pool */
	uint64_t bytes[2];
};

/* What a site is named by: its op, else its owner, else its innermost Python frame, else C
 * frame; its pool's name else (by NONE, name 0). */
static unsigned site_by(const struct ms__ranks *r, const struct ms__ranks_site *e, uint32_t *name)
{
	size_t n = 0;
	const uint32_t *fr;

	*name = 0;
	if (e->op)
		return *name = e->op, MEMSCOPE_PEAK_BY_OP;
	if (e->owner)
		return *name = e->owner, MEMSCOPE_PEAK_BY_OWNER;
	if ((fr = memscope_strtab_stack(r->st, e->stack_py, &n)) && n)
		return *name = fr[0], MEMSCOPE_PEAK_BY_PYTHON;
	if ((fr = memscope_strtab_stack(r->st, e->stack_c, &n)) && n)
		return *name = fr[0], MEMSCOPE_PEAK_BY_C;
	return MEMSCOPE_PEAK_BY_NONE;
}

static int by_leak_diff(const void *a, const void *b)
{
	const struct leak_by *x = a, *y = b;
	uint64_t dx = size_of(minus(as_figure(x->bytes[0]), as_figure(x->bytes[1])));
	uint64_t dy = size_of(minus(as_figure(y->bytes[0]), as_figure(y->bytes[1])));
	int c = MS__CMP(dy, dx);

	c = c ? c : MS__CMP(x->by, y->by);
	return c ? c : MS__CMP(x->name, y->name);
}

/* Both sides' sites summed per op/owner into *out (malloc'd, *n), largest |difference| first.
 * 0 or NOMEM. */
static int leaks_by(const struct ms__ranks *r, struct leak_by **out, size_t *n)
{
	struct u64map at = { 0 };
	size_t k, i, cap = 0, slot;
	int rc = 0;

	*out = NULL;
	*n = 0;
	for (k = 0; k < 2 && !rc; k++)
		for (i = 0; i < r->side[k].n_sites && !rc; i++) {
			const struct ms__ranks_site *e = &r->side[k].sites[i];
			uint32_t name;
			unsigned by = site_by(r, e, &name);
			uint64_t key =
				(uint64_t)by << 32 | (by == MEMSCOPE_PEAK_BY_NONE ? e->pool : name);
			struct leak_by *g;

			rc = ms__u64map_slot(&at, key, out, n, &cap, sizeof(**out), &slot);
			if (rc < 0)
				break;
			g = &(*out)[slot];
			g->name = name, g->by = by, g->pool = e->pool;
			g->bytes[k] = g->bytes[k] + e->bytes < e->bytes ? UINT64_MAX
									: g->bytes[k] + e->bytes;
			rc = 0;
		}
	ms__u64map_free(&at);
	if (rc)
		return rc;
	/* those that differ only */
	for (i = k = 0; i < *n; i++)
		if ((*out)[i].bytes[0] != (*out)[i].bytes[1])
			(*out)[k++] = (*out)[i];
	*n = k;
	ms__qsort(*out, *n, sizeof(**out), by_leak_diff);
	return 0;
}

static void put_leaks_by(FILE *out, const struct ms__ranks *r, const struct leak_by *g, size_t n)
{
	static const char *const bys[] = { "owner", "op", "python", "c", "none" };
	size_t i;

	fputs(",\"leaks_by\":[", out);
	for (i = 0; i < n && i < MS__RANKS_MAX_BY; i++) {
		fprintf(out, "%s{\"name\":", i ? "," : "");
		if (g[i].by == MEMSCOPE_PEAK_BY_NONE)
			ms__ranks_put_str(out, memscope_subtype_name(g[i].pool));
		else
			ms__json_id(out, r->st, g[i].name);
		fprintf(out,
			",\"by\":\"%s\",\"run\":%" PRIu64 ",\"base\":%" PRIu64 ",\"diff\":%" PRId64
			"}",
			bys[g[i].by < 5 ? g[i].by : 4], g[i].bytes[0], g[i].bytes[1],
			minus(as_figure(g[i].bytes[0]), as_figure(g[i].bytes[1])));
	}
	fputc(']', out);
}

/* ------------------------------------------------------------------------------------------ */
/* the differences per rank */

/* An input's place in the pairing: by rank and device, else its order among those without. */
struct pair_key {
	int has_rank;
	int64_t rank; /* without: its order among the inputs of its side without a rank */
	const char *device;
	uint32_t i; /* its input */
	int side;
};

static int by_pair_key(const void *a, const void *b)
{
	const struct pair_key *x = a, *y = b;
	int c = MS__CMP(x->has_rank, y->has_rank);

	c = c ? c : MS__CMP(x->rank, y->rank);
	if (!c && x->has_rank)
		c = !x->device || !y->device ? MS__CMP(!!x->device, !!y->device)
					     : strcmp(x->device, y->device);
	c = c ? c : MS__CMP(x->side, y->side);
	return c ? c : MS__CMP(x->i, y->i);
}

/* One row of "ranks": a run input and a baseline input paired (-1: none on that side). */
struct rank_pair {
	long in[2];
	uint64_t diff; /* |peak difference|, an absent side or figure counting 0 */
};

static const struct ms__ranks_row *pair_row(
	const struct ms__ranks *r, const struct rank_pair *p, int side)
{
	return p->in[side] < 0 ? NULL : &r->side[side].rows[p->in[side]];
}

static int64_t peak_of(const struct ms__ranks_row *w)
{
	return w && (w->has >> MS__FIG_PEAK & 1) ? w->fig[MS__FIG_PEAK] : 0;
}

/* The keys of every input of both sides into k (room for all), sorted. Returns how many. */
static size_t pair_keys(const struct ms__ranks *r, struct pair_key *k)
{
	size_t n = 0, i;
	int side;

	for (side = 0; side < 2; side++) {
		int64_t order = 0;

		for (i = 0; i < r->side[side].n_rows; i++) {
			const struct ms__ranks_row *w = &r->side[side].rows[i];

			if (!w->added)
				continue;
			k[n].has_rank = w->has >> MS__FIG_RANK & 1;
			k[n].rank = k[n].has_rank ? w->fig[MS__FIG_RANK] : order++;
			k[n].device = k[n].has_rank ? w->device : NULL;
			k[n].i = (uint32_t)i;
			k[n++].side = side;
		}
	}
	ms__qsort(k, n, sizeof(*k), by_pair_key);
	return n;
}

static int by_pair_diff(const void *a, const void *b)
{
	const struct rank_pair *x = a, *y = b;
	int c = MS__CMP(y->diff, x->diff);

	c = c ? c : MS__CMP(x->in[0], y->in[0]);
	return c ? c : MS__CMP(x->in[1], y->in[1]);
}

/* The pairs of inputs into *out (malloc'd, *n), largest |peak difference| first: a run input
 * and the baseline's of the same rank and device. 0 or NOMEM. */
static int rank_pairs(const struct ms__ranks *r, struct rank_pair **out, size_t *n)
{
	size_t all = r->side[0].n_rows + r->side[1].n_rows + 1, m, i;
	struct pair_key *k = malloc(all * sizeof(*k));

	*n = 0;
	if (!k || !(*out = malloc(all * sizeof(**out)))) {
		free(k);
		return MEMSCOPE_E_NOMEM;
	}
	m = pair_keys(r, k);
	for (i = 0; i < m; i++) {
		struct rank_pair *p = &(*out)[(*n)++];
		int same = i + 1 < m && k[i].side == 0 && k[i + 1].side == 1 &&
			   k[i].has_rank == k[i + 1].has_rank && k[i].rank == k[i + 1].rank &&
			   (!k[i].device == !k[i + 1].device) &&
			   (!k[i].device || !strcmp(k[i].device, k[i + 1].device));

		p->in[0] = p->in[1] = -1;
		p->in[k[i].side] = (long)k[i].i;
		if (same)
			p->in[1] = (long)k[++i].i;
		p->diff = size_of(minus(peak_of(pair_row(r, p, 0)), peak_of(pair_row(r, p, 1))));
	}
	free(k);
	ms__qsort(*out, *n, sizeof(**out), by_pair_diff);
	return 0;
}

static void put_pair_fig(
	FILE *out, const char *key, const struct ms__ranks_row *w, enum ms__ranks_fig f)
{
	fprintf(out, ",\"%s\":", key);
	ms__ranks_put_i64(out, w && (w->has >> f & 1), w ? w->fig[f] : 0);
}

/* a row's leaked bytes (exit + step), null when neither was checked */
static void put_pair_leaks(FILE *out, const char *key, const struct ms__ranks_row *w)
{
	int has = w && (w->has & (1u << MS__FIG_STEP_LEAK | 1u << MS__FIG_EXIT_LEAK));
	int64_t sum = 0;

	if (has && (w->has >> MS__FIG_STEP_LEAK & 1))
		sum = w->fig[MS__FIG_STEP_LEAK];
	if (has && (w->has >> MS__FIG_EXIT_LEAK & 1) &&
		__builtin_add_overflow(sum, w->fig[MS__FIG_EXIT_LEAK], &sum))
		sum = INT64_MAX;
	fprintf(out, ",\"%s\":", key);
	ms__ranks_put_i64(out, has, sum);
}

static void put_pairs(FILE *out, const struct ms__ranks *r, const struct rank_pair *p, size_t n)
{
	size_t i;

	fputs(",\"ranks\":[", out);
	for (i = 0; i < n && i < MAX_RANK_ROWS; i++) {
		const struct ms__ranks_row *a = pair_row(r, &p[i], 0), *b = pair_row(r, &p[i], 1);
		const struct ms__ranks_row *w = a ? a : b;

		fprintf(out, "%s{\"rank\":", i ? "," : "");
		ms__ranks_put_i64(out, w->has >> MS__FIG_RANK & 1, w->fig[MS__FIG_RANK]);
		fputs(",\"device\":", out);
		ms__ranks_put_str(out, w->device);
		fputs(",\"run_input\":", out);
		ms__ranks_put_i64(out, a != NULL, p[i].in[0]);
		fputs(",\"base_input\":", out);
		ms__ranks_put_i64(out, b != NULL, p[i].in[1]);
		put_pair_fig(out, "run_peak", a, MS__FIG_PEAK);
		put_pair_fig(out, "base_peak", b, MS__FIG_PEAK);
		put_pair_leaks(out, "run_leaks", a);
		put_pair_leaks(out, "base_leaks", b);
		put_pair_fig(out, "run_growth", a, MS__FIG_GROWTH);
		put_pair_fig(out, "base_growth", b, MS__FIG_GROWTH);
		fputc('}', out);
	}
	fputc(']', out);
}

/* ------------------------------------------------------------------------------------------ */
/* the member and its verdict */

/* ,"key":{"run":..,"base":..} */
static void put_two(
	FILE *out, const char *key, int has_run, int64_t run, int has_base, int64_t base)
{
	fprintf(out, ",\"%s\":{\"run\":", key);
	ms__ranks_put_i64(out, has_run, run);
	fputs(",\"base\":", out);
	ms__ranks_put_i64(out, has_base, base);
	fputc('}', out);
}

int ms__baseline_json(FILE *out, const struct ms__ranks *r)
{
	struct side_sum t[2];
	struct leak_by *g = NULL;
	struct rank_pair *p = NULL;
	size_t n_g = 0, n_p = 0;
	int rc = MEMSCOPE_E_NOMEM;

	if (!r->side[MS__RANKS_BASE].n_rows) {
		fputs("null", out);
		return ferror(out) ? MEMSCOPE_E_IO : 0;
	}
	if (leaks_by(r, &g, &n_g) || rank_pairs(r, &p, &n_p))
		goto out;
	add_up(&r->side[0], &t[0]);
	add_up(&r->side[1], &t[1]);
	fputc('{', out);
	put_inputs(out, &r->side[MS__RANKS_BASE]);
	put_two(out, "peak", t[0].has_peak, t[0].peak, t[1].has_peak, t[1].peak);
	put_two(out, "leaks", t[0].has_leaks, as_figure(t[0].leaks), t[1].has_leaks,
		as_figure(t[1].leaks));
	put_two(out, "growth", t[0].has_growth, t[0].growth, t[1].has_growth, t[1].growth);
	put_by(out, r);
	put_leaks_by(out, r, g, n_g);
	put_pairs(out, r, p, n_p);
	fputc('}', out);
	rc = ferror(out) ? MEMSCOPE_E_IO : 0;
out:
	free(g);
	free(p);
	return rc;
}

/* "; WHAT 7.63 MiB vs 0 B" (+ or - the difference) into buf at *len. */
static void say_two(
	char *buf, size_t size, size_t *len, const char *what, int64_t run, int64_t base)
{
	char a[MEMSCOPE_BYTES_TEXT_MAX], b[MEMSCOPE_BYTES_TEXT_MAX], d[MEMSCOPE_BYTES_TEXT_MAX];
	int64_t diff = minus(run, base);

	if (*len >= size)
		return;
	*len += (size_t)snprintf(buf + *len, size - *len,
		"%s%s %s%s vs %s%s in the baseline (%s%s)", *len ? "; " : "", what,
		run < 0 ? "-" : "", memscope_bytes_text(a, sizeof(a), size_of(run)),
		base < 0 ? "-" : "", memscope_bytes_text(b, sizeof(b), size_of(base)),
		diff < 0 ? "-" : "+", memscope_bytes_text(d, sizeof(d), size_of(diff)));
}

int ms__baseline_verdict(const struct ms__ranks *r, struct ms__ranks_verdict *v)
{
	struct side_sum t[2];
	size_t len = 0, n = 0;
	int worse = 0;

	if (!r->side[MS__RANKS_BASE].n_rows)
		return 0;
	memset(v, 0, sizeof(*v));
	add_up(&r->side[0], &t[0]);
	add_up(&r->side[1], &t[1]);
	if (t[0].has_peak && t[1].has_peak) {
		say_two(v->text, sizeof(v->text), &len, "peak", t[0].peak, t[1].peak);
		v->has_bytes = 1;
		v->bytes = minus(t[0].peak, t[1].peak);
		worse |= t[0].peak > t[1].peak;
	}
	if (t[0].has_leaks && t[1].has_leaks && t[0].leaks != t[1].leaks) {
		say_two(v->text, sizeof(v->text), &len, "leaks", as_figure(t[0].leaks),
			as_figure(t[1].leaks));
		worse |= t[0].leaks > t[1].leaks;
	}
	if (t[0].has_growth && t[1].has_growth && t[0].growth != t[1].growth) {
		say_two(v->text, sizeof(v->text), &len, "growth per step", t[0].growth,
			t[1].growth);
		worse |= t[0].growth > t[1].growth;
	}
	if (r->sum) {
		const struct memscope_compare_group *const *top =
			memscope_compare_summary_top(r->sum, &n);
		char b[MEMSCOPE_BYTES_TEXT_MAX];

		if (n && len < sizeof(v->text))
			snprintf(v->text + len, sizeof(v->text) - len,
				"%s%s allocated %s %s than in the baseline", len ? "; " : "",
				memscope_strtab_str(r->st, top[0]->name, NULL),
				memscope_bytes_text(b, sizeof(b), size_of(top[0]->diff)),
				top[0]->diff < 0 ? "less" : "more");
	}
	if (!v->text[0])
		snprintf(v->text, sizeof(v->text), "nothing to compare with the baseline");
	v->level = worse ? "warn" : "ok";
	return 1;
}
