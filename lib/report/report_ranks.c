/* The report's "ranks" member: what each input leaves once read (memscope-batch's figures, live
 * bytes per step, leak sites), who stands out, the leak sites common to several inputs. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../writers/report.h"
#include "memscope/memscope.h"
#include "ranks.h"
#include "report_impl.h"

struct ms__ranks *ms__ranks_new(void)
{
	struct ms__ranks *r = calloc(1, sizeof(*r));

	if (r && !(r->st = memscope_strtab_new())) {
		free(r);
		r = NULL;
	}
	return r;
}

static void row_clear(struct ms__ranks_row *w)
{
	free(w->input);
	free(w->node);
	free(w->device);
	free(w->format);
	free(w->status);
	free(w->error);
	free(w->end);
	free(w->cols);
}

void ms__ranks_free(struct ms__ranks *r)
{
	size_t k, i;

	if (!r)
		return;
	for (k = 0; k < 2; k++) {
		struct ms__ranks_part *s = &r->side[k];

		for (i = 0; i < s->n_rows; i++)
			row_clear(&s->rows[i]);
		free(s->rows);
		free(s->sites);
		ms__u64map_free(&s->site_at);
		ms__u64map_free(&s->ids);
		memscope_compare_side_free(s->cmp);
	}
	free(r->common);
	memscope_compare_summary_free(r->sum);
	memscope_strtab_free(r->st);
	free(r);
}

/* ------------------------------------------------------------------------------------------ */
/* one input: its figures */

static int has_field(const struct memscope_summary *s, enum memscope_sum_field f)
{
	return (s->has >> f) & 1;
}

/* A copy of text field f of s into *to (NULL when s has none). 0 or NOMEM. */
static int copy_text(char **to, const struct memscope_summary *s, enum memscope_sum_field f)
{
	*to = NULL;
	if (!has_field(s, f) || !s->str[f])
		return 0;
	return (*to = strdup(s->str[f])) ? 0 : MEMSCOPE_E_NOMEM;
}

/* The figures and texts of summary s into w. 0 or NOMEM. */
static int row_figures(struct ms__ranks_row *w, const struct memscope_summary *s)
{
	static const enum memscope_sum_field of[MS__FIG_COUNT_] = { MEMSCOPE_SUM_PEAK_BYTES,
		MEMSCOPE_SUM_GROWTH_PER_STEP, MEMSCOPE_SUM_STEP_LEAK_BYTES,
		MEMSCOPE_SUM_EXIT_LEAK_BYTES, MEMSCOPE_SUM_RANK };
	size_t f;

	w->index = has_field(s, MEMSCOPE_SUM_INDEX) ? (uint64_t)s->num[MEMSCOPE_SUM_INDEX] : 0;
	for (f = 0; f < MS__FIG_COUNT_; f++)
		if (has_field(s, of[f])) {
			w->fig[f] = s->num[of[f]];
			w->has |= 1u << f;
		}
	if (copy_text(&w->input, s, MEMSCOPE_SUM_INPUT) ||
		copy_text(&w->node, s, MEMSCOPE_SUM_NODE) ||
		copy_text(&w->device, s, MEMSCOPE_SUM_DEVICE) ||
		copy_text(&w->format, s, MEMSCOPE_SUM_FORMAT) ||
		copy_text(&w->status, s, MEMSCOPE_SUM_STATUS) ||
		copy_text(&w->error, s, MEMSCOPE_SUM_ERROR) ||
		copy_text(&w->end, s, MEMSCOPE_SUM_END))
		return MEMSCOPE_E_NOMEM;
	w->ok = w->status && !strcmp(w->status, "ok");
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* one input: live bytes at its steps' ends */

/* The walk over the peak track's points: the live bytes when each kept step ended. */
struct col_walk {
	uint32_t track;
	const uint64_t *end_ns; /* the kept steps' ends, ascending */
	struct ms__ranks_col *cols;
	size_t n, done;
	int64_t live; /* after the points so far */
};

static int col_point(void *ctx, const struct memscope_peak_point *pt)
{
	struct col_walk *c = ctx;

	if (pt->track == c->track) {
		for (; c->done < c->n && c->end_ns[c->done] < pt->ts_ns; c->done++)
			c->cols[c->done].bytes = c->live;
		c->live = pt->bytes;
	}
	return 0;
}

/*
 * The ended steps of the peak's track's process, at most MS__RANKS_MAX_STEPS of them (every
 * k-th, the last kept, when there are more), and the live bytes of the track when each ended:
 * those after its last point at or before the end (memscope-batch's growth rule). 0 or NOMEM.
 */
static int row_steps(struct ms__ranks_row *w, const struct memscope_peak *p)
{
	long k = memscope_peak_track_of_peak(p);
	const struct memscope_peak_track *t;
	const struct memscope_step_proc *sp;
	struct col_walk c = { 0 };
	uint64_t n, i, stride, *ends = NULL;
	struct memscope_pos end;
	int rc = MEMSCOPE_E_NOMEM;

	if (k < 0)
		return 0;
	t = memscope_peak_tracks(p, &(size_t){ 0 }) + k;
	sp = memscope_steps_proc(memscope_peak_steps(p), t->src, t->pid);
	if (!sp || !(n = memscope_steps_count(sp)))
		return 0;
	stride = (n + MS__RANKS_MAX_STEPS - 1) / MS__RANKS_MAX_STEPS;
	if (!(ends = malloc(MS__RANKS_MAX_STEPS * sizeof(*ends))) ||
		!(w->cols = calloc(MS__RANKS_MAX_STEPS, sizeof(*w->cols))))
		goto out;
	for (i = 1; i <= n && c.n < MS__RANKS_MAX_STEPS; i++) {
		uint64_t num = memscope_steps_number(sp, i);

		if ((i % stride && i != n) || !memscope_steps_end(sp, num, &end))
			continue;
		w->cols[c.n].step = num;
		ends[c.n++] = end.ts_ns;
	}
	c.track = (uint32_t)k;
	c.end_ns = ends;
	c.cols = w->cols;
	memscope_peak_foreach_point(p, col_point, &c);
	for (; c.done < c.n; c.done++)
		c.cols[c.done].bytes = c.live;
	w->n_cols = c.n;
	rc = 0;
out:
	free(ends);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* one input: its leak sites */

/* String id from of st as one of r->st (0 stays 0) into *to. 0 or NOMEM. */
static int copy_str(
	struct ms__ranks *r, const struct memscope_strtab *st, uint32_t id, uint32_t *to)
{
	size_t len;
	const char *s = id ? memscope_strtab_str(st, id, &len) : NULL;

	*to = 0;
	return s ? memscope_strtab_intern(r->st, s, len, to) : 0;
}

/* Stack id of st as one of r->st (0 stays 0) into *to. 0 or NOMEM. */
static int copy_stack(
	struct ms__ranks *r, const struct memscope_strtab *st, uint32_t id, uint32_t *to)
{
	size_t n = 0, i;
	const uint32_t *fr = id ? memscope_strtab_stack(st, id, &n) : NULL;
	uint32_t *ids;
	int rc = 0;

	*to = 0;
	if (!fr)
		return 0;
	if (!(ids = malloc((n ? n : 1) * sizeof(*ids))))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < n && !rc; i++)
		rc = copy_str(r, st, fr[i], &ids[i]);
	if (!rc)
		rc = memscope_strtab_intern_stack(r->st, ids, n, to);
	free(ids);
	return rc < 0 ? MEMSCOPE_E_NOMEM : 0;
}

/* Group g of st counted for input i in side s as a site. 0 or NOMEM. */
static int add_site(struct ms__ranks *r, struct ms__ranks_part *s, uint32_t i,
	const struct memscope_leak_group *g, const struct memscope_strtab *st)
{
	struct ms__ranks_site key = { .kind = g->kind, .pool = g->pool };
	uint32_t words[6], id;
	struct ms__ranks_site *e;
	size_t at;
	int rc;

	if (copy_str(r, st, g->op, &key.op) || copy_str(r, st, g->owner, &key.owner) ||
		copy_stack(r, st, g->stack_py, &key.stack_py) ||
		copy_stack(r, st, g->stack_c, &key.stack_c))
		return MEMSCOPE_E_NOMEM;
	/* the key as one interned string of its six words: one id per site */
	words[0] = key.kind, words[1] = key.pool, words[2] = key.op, words[3] = key.owner;
	words[4] = key.stack_py, words[5] = key.stack_c;
	if (memscope_strtab_intern(r->st, (const char *)words, sizeof(words), &id))
		return MEMSCOPE_E_NOMEM;
	rc = ms__u64map_slot(
		&s->site_at, id, &s->sites, &s->n_sites, &s->cap_sites, sizeof(*s->sites), &at);
	if (rc < 0)
		return rc;
	e = &s->sites[at];
	if (rc)
		*e = key;
	if (e->last != i + 1)
		e->n_inputs++, e->last = i + 1;
	e->n += g->n;
	e->bytes = e->bytes + g->bytes < e->bytes ? UINT64_MAX : e->bytes + g->bytes;
	return 0;
}

/* The step and exit leak groups of l (one input) as sites of input i. 0 or NOMEM. */
static int add_sites(struct ms__ranks *r, struct ms__ranks_part *s, uint32_t i,
	const struct memscope_leaks *l, const struct memscope_strtab *st)
{
	size_t n, k;
	const struct memscope_leak_group *g = memscope_leaks_groups(l, &n);
	int rc = 0;

	for (k = 0; k < n && !rc; k++) {
		if (g[k].kind != MEMSCOPE_LEAK_STEP && g[k].kind != MEMSCOPE_LEAK_EXIT)
			continue;
		/* HAL's blocks hold those of a pool carved out of it: counted once, as
		 * memscope-batch's figures count them */
		if (memscope_leaks_nested(l, g[k].kind, g[k].src) && g[k].pool < 64 &&
			(MEMSCOPE_POOL_BIT(g[k].pool) & MEMSCOPE_POOLS_OUTER))
			continue;
		rc = add_site(r, s, i, &g[k], st);
	}
	return rc;
}

/* The row of input i of side, marked added; NULL when it was added already or side is out of
 * range (*rc MEMSCOPE_E_ARG) or on OOM (*rc MEMSCOPE_E_NOMEM). */
static struct ms__ranks_row *row_of(
	struct ms__ranks *r, enum ms__ranks_side side, uint32_t i, int *rc)
{
	struct ms__ranks_part *s;

	*rc = MEMSCOPE_E_ARG;
	if ((unsigned)side > MS__RANKS_BASE || r->finished)
		return NULL;
	s = &r->side[side];
	if (i >= s->n_rows) {
		if (ms__grow_array(&s->rows, &s->cap_rows, (size_t)i + 1, sizeof(*s->rows))) {
			*rc = MEMSCOPE_E_NOMEM;
			return NULL;
		}
		s->n_rows = (size_t)i + 1;
	}
	if (s->rows[i].added)
		return NULL;
	s->rows[i].added = 1;
	*rc = 0;
	return &s->rows[i];
}

int ms__ranks_add_kept(struct ms__ranks *r, enum ms__ranks_side side, uint32_t i,
	const struct memscope_summary *sum, const struct ms__ranks_col *cols, size_t n_cols,
	const struct ms__ranks_site *sites, size_t n_sites, const struct memscope_strtab *st)
{
	struct ms__ranks_row *w;
	size_t k;
	int rc;

	if (!(w = row_of(r, side, i, &rc)))
		return rc;
	if (row_figures(w, sum))
		return MEMSCOPE_E_NOMEM;
	if (n_cols) {
		if (!(w->cols = malloc(n_cols * sizeof(*cols))))
			return MEMSCOPE_E_NOMEM;
		memcpy(w->cols, cols, n_cols * sizeof(*cols));
		w->n_cols = n_cols;
	}
	for (k = 0; k < n_sites; k++) {
		struct memscope_leak_group g = { .kind = sites[k].kind,
			.pool = sites[k].pool,
			.op = sites[k].op,
			.owner = sites[k].owner,
			.stack_py = sites[k].stack_py,
			.stack_c = sites[k].stack_c,
			.n = sites[k].n,
			.bytes = sites[k].bytes };

		if (add_site(r, &r->side[side], i, &g, st))
			return MEMSCOPE_E_NOMEM;
	}
	return 0;
}

int ms__ranks_add(struct ms__ranks *r, enum ms__ranks_side side, uint32_t i,
	const struct memscope_summary *sum, const struct memscope_peak *p,
	const struct memscope_leaks *l, const struct memscope_strtab *st)
{
	struct ms__ranks_row *w;
	int rc;

	if (!(w = row_of(r, side, i, &rc)))
		return rc;
	if (row_figures(w, sum) || (p && row_steps(w, p)) ||
		(l && add_sites(r, &r->side[side], i, l, st)))
		return MEMSCOPE_E_NOMEM;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* across the inputs: who stands out, the common sites */

/*
 * The figures inputs stand out by, memscope-batch's rule (formats/report.md "Several ranks"):
 * a distance from the median at or below the floor never counts.
 */
static const struct {
	enum ms__ranks_fig f;
	int64_t floor;
	int leak; /* above 0 on at most half the inputs: those above 0 stand out */
} stand_rules[] = {
	{ MS__FIG_PEAK, MS__STAND_FLOOR_PEAK, 0 },
	{ MS__FIG_GROWTH, MS__STAND_FLOOR_GROWTH, 0 },
	{ MS__FIG_STEP_LEAK, 0, 1 },
	{ MS__FIG_EXIT_LEAK, 0, 1 },
};

static int by_i64(const void *a, const void *b)
{
	return MS__CMP(*(const int64_t *)a, *(const int64_t *)b);
}

static int by_u64(const void *a, const void *b)
{
	return MS__CMP(*(const uint64_t *)a, *(const uint64_t *)b);
}

/* Mark the rows of s that stand out by rule k; v and d have room for every row. */
static void stand_out_by(struct ms__ranks_part *s, size_t k, int64_t *v, uint64_t *d)
{
	enum ms__ranks_fig f = stand_rules[k].f;
	size_t n = 0, above = 0, i;
	uint64_t limit, mad;
	int64_t median;

	for (i = 0; i < s->n_rows; i++)
		if (s->rows[i].ok && (s->rows[i].has >> f & 1)) {
			above += s->rows[i].fig[f] > 0;
			v[n++] = s->rows[i].fig[f];
		}
	if (n < 3)
		return;
	limit = ms__stand_limit(v, d, n, stand_rules[k].floor, &median, &mad);
	s->median[f] = median;
	s->has_median |= 1u << f;
	for (i = 0; i < s->n_rows; i++) {
		struct ms__ranks_row *w = &s->rows[i];
		int out;

		if (!w->ok || !(w->has >> f & 1))
			continue;
		if (stand_rules[k].leak && above && above * 2 <= n)
			out = w->fig[f] > 0;
		else
			out = ms__apart(w->fig[f], median) > limit;
		w->stands |= (unsigned)out << f;
	}
}

/* Who stands out among the inputs of s. 0 or NOMEM. */
static int stand_out(struct ms__ranks_part *s)
{
	int64_t *v = malloc((s->n_rows ? s->n_rows : 1) * sizeof(*v));
	uint64_t *d = malloc((s->n_rows ? s->n_rows : 1) * sizeof(*d));
	size_t k;
	int rc = MEMSCOPE_E_NOMEM;

	if (v && d) {
		for (k = 0; k < sizeof(stand_rules) / sizeof(stand_rules[0]); k++)
			stand_out_by(s, k, v, d);
		rc = 0;
	}
	free(v);
	free(d);
	return rc;
}

/* a common site's place: step leaks first (exit ones are often the weights every rank holds to
 * the end), then most inputs, then most bytes, then first seen */
struct spread {
	int exit;
	uint32_t n_inputs;
	uint64_t bytes;
	size_t at;
};

static int by_spread(const void *a, const void *b)
{
	const struct spread *x = a, *y = b;
	int c = MS__CMP(x->exit, y->exit);

	c = c ? c : MS__CMP(y->n_inputs, x->n_inputs);
	c = c ? c : MS__CMP(y->bytes, x->bytes);
	return c ? c : MS__CMP(x->at, y->at);
}

/* The run's sites of two inputs or more, in order, the first MS__RANKS_MAX_COMMON. 0 or NOMEM. */
static int common_sites(struct ms__ranks *r)
{
	const struct ms__ranks_part *s = &r->side[MS__RANKS_RUN];
	struct spread *o = malloc((s->n_sites ? s->n_sites : 1) * sizeof(*o));
	size_t i, n = 0;

	if (!o || !(r->common = malloc((s->n_sites ? s->n_sites : 1) * sizeof(*r->common)))) {
		free(o);
		return MEMSCOPE_E_NOMEM;
	}
	for (i = 0; i < s->n_sites; i++)
		if (s->sites[i].n_inputs >= 2)
			o[n++] = (struct spread){ s->sites[i].kind == MEMSCOPE_LEAK_EXIT,
				s->sites[i].n_inputs, s->sites[i].bytes, i };
	ms__qsort(o, n, sizeof(*o), by_spread);
	for (i = 0; i < n && i < MS__RANKS_MAX_COMMON; i++)
		r->common[r->n_common++] = o[i].at;
	free(o);
	return 0;
}

int ms__ranks_finish(struct ms__ranks *r)
{
	if (r->finished)
		return 0;
	r->finished = 1;
	if (stand_out(&r->side[MS__RANKS_RUN]) || stand_out(&r->side[MS__RANKS_BASE]) ||
		common_sites(r))
		return MEMSCOPE_E_NOMEM;
	return ms__baseline_finish(r);
}

/* ------------------------------------------------------------------------------------------ */
/* the "ranks" member */

static const char *const fig_names[MS__FIG_COUNT_] = { "peak", "growth", "leaks", "leaks", "rank" };

/* ,"key":figure f of w, or null */
static void put_fig(FILE *out, const char *key, const struct ms__ranks_row *w, enum ms__ranks_fig f)
{
	fprintf(out, ",\"%s\":", key);
	ms__ranks_put_i64(out, w->has >> f & 1, w->fig[f]);
}

static void put_row(FILE *out, const struct ms__ranks_row *w, uint32_t i)
{
	enum ms__ranks_fig f;
	const char *sep = "";

	fprintf(out, "{\"input\":%" PRIu32, i);
	put_fig(out, "rank", w, MS__FIG_RANK);
	fputs(",\"node\":", out);
	ms__ranks_put_str(out, w->node);
	fputs(",\"device\":", out);
	ms__ranks_put_str(out, w->device);
	put_fig(out, "peak_bytes", w, MS__FIG_PEAK);
	put_fig(out, "exit_leak_bytes", w, MS__FIG_EXIT_LEAK);
	put_fig(out, "step_leak_bytes", w, MS__FIG_STEP_LEAK);
	put_fig(out, "growth_per_step", w, MS__FIG_GROWTH);
	fputs(",\"stands_out\":", out);
	for (f = 0; f < MS__FIG_RANK && !(w->stands >> f & 1); f++)
		;
	ms__ranks_put_str(out, f < MS__FIG_RANK ? fig_names[f] : NULL);
	/* every figure it stands out by, memscope-batch's JSON names */
	fputs(",\"stands_out_by\":[", out);
	for (f = 0; f < MS__FIG_RANK; f++)
		if (w->stands >> f & 1) {
			static const char *const batch[] = { "peak_bytes", "growth_per_step",
				"step_leak_bytes", "exit_leak_bytes" };

			fprintf(out, "%s\"%s\"", sep, batch[f]);
			sep = ",";
		}
	fputs("]}", out);
}

/*
 * The step numbers of every row's columns, ascending, each once, at most MS__RANKS_MAX_STEPS and
 * MS__RANKS_MAX_CELLS over the rows (every k-th, the last kept, when more), into *cols (malloc'd)
 * and *n. 0 or NOMEM.
 */
static int union_steps(const struct ms__ranks_part *s, uint64_t **cols, size_t *n)
{
	size_t i, k, all = 0, m = 0, stride, most, n_rows = 0;
	uint64_t *v;

	for (i = 0; i < s->n_rows; i++) {
		all += s->rows[i].n_cols;
		n_rows += s->rows[i].added;
	}
	*n = 0;
	if (!(*cols = v = malloc((all ? all : 1) * sizeof(*v))))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < s->n_rows; i++)
		for (k = 0; k < s->rows[i].n_cols; k++)
			v[m++] = s->rows[i].cols[k].step;
	ms__qsort(v, m, sizeof(*v), by_u64);
	for (i = k = 0; i < m; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	most = MS__RANKS_MAX_CELLS / (n_rows ? n_rows : 1);
	most = most < 1 ? 1 : most > MS__RANKS_MAX_STEPS ? MS__RANKS_MAX_STEPS : most;
	stride = (k + most - 1) / most;
	for (i = 0; i < k; i++)
		if (stride <= 1 || (i + 1) % stride == 0 || i == k - 1)
			v[(*n)++] = v[i];
	return 0;
}

/*
 * Row w over the columns cols[0, n) as a JSON array: its live bytes at each (growth 0), or what
 * they added since its previous column with a value (growth 1; null for its first); null where
 * it has no such step.
 */
static void put_cells(
	FILE *out, const struct ms__ranks_row *w, const uint64_t *cols, size_t n, int growth)
{
	size_t c, k = 0;
	int has_prev = 0;
	int64_t prev = 0;

	fputc('[', out);
	for (c = 0; c < n; c++) {
		if (c)
			fputc(',', out);
		while (k < w->n_cols && w->cols[k].step < cols[c])
			k++;
		if (k == w->n_cols || w->cols[k].step != cols[c]) {
			fputs("null", out);
			continue;
		}
		if (!growth)
			fprintf(out, "%" PRId64, w->cols[k].bytes);
		else if (has_prev)
			fprintf(out, "%" PRId64, w->cols[k].bytes - prev);
		else
			fputs("null", out);
		has_prev = 1;
		prev = w->cols[k].bytes;
	}
	fputc(']', out);
}

/* "live" or "growth": every row over cols. */
static void put_grid(
	FILE *out, const struct ms__ranks_part *s, const uint64_t *cols, size_t n, int growth)
{
	size_t i;
	const char *sep = "";

	fprintf(out, ",\"%s\":[", growth ? "growth" : "live");
	for (i = 0; i < s->n_rows; i++)
		if (s->rows[i].added) {
			fputs(sep, out);
			put_cells(out, &s->rows[i], cols, n, growth);
			sep = ",";
		}
	fputc(']', out);
}

/* how many inputs of s were read */
static size_t n_read(const struct ms__ranks_part *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->n_rows; i++)
		n += s->rows[i].ok;
	return n;
}

static void put_site(
	FILE *out, const struct ms__ranks *r, const struct ms__ranks_site *e, size_t of)
{
	fputs("{\"op\":", out);
	ms__json_id_or_null(out, r->st, e->op);
	fputs(",\"owner\":", out);
	ms__json_id_or_null(out, r->st, e->owner);
	fputs(",\"pool\":", out);
	ms__ranks_put_str(out, memscope_subtype_name(e->pool));
	fputs(",\"stack\":", out);
	ms__json_stack(out, r->st, e->stack_py, e->stack_c);
	fprintf(out,
		",\"ranks\":%" PRIu32 ",\"of\":%zu,\"bytes\":%" PRIu64 ",\"count\":%" PRIu64
		",\"kind\":\"%s\"}",
		e->n_inputs, of, e->bytes, e->n, e->kind == MEMSCOPE_LEAK_STEP ? "step" : "exit");
}

int ms__ranks_json(FILE *out, const struct ms__ranks *r)
{
	const struct ms__ranks_part *s = &r->side[MS__RANKS_RUN];
	uint64_t *cols = NULL;
	size_t n_cols = 0, i, n = 0;
	const char *sep = "";

	for (i = 0; i < s->n_rows; i++)
		n += s->rows[i].added;
	if (n < 2) {
		fputs("null", out);
		return ferror(out) ? MEMSCOPE_E_IO : 0;
	}
	if (union_steps(s, &cols, &n_cols))
		return MEMSCOPE_E_NOMEM;
	fputs("{\"rows\":[", out);
	for (i = 0; i < s->n_rows; i++)
		if (s->rows[i].added) {
			fputs(sep, out);
			put_row(out, &s->rows[i], (uint32_t)i);
			sep = ",";
		}
	fputs("],\"steps\":[", out);
	for (i = 0; i < n_cols; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", cols[i]);
	fputc(']', out);
	put_grid(out, s, cols, n_cols, 0);
	put_grid(out, s, cols, n_cols, 1);
	fputs(",\"common_sites\":[", out);
	for (i = 0, n = n_read(s); i < r->n_common; i++) {
		fputs(i ? "," : "", out);
		put_site(out, r, &s->sites[r->common[i]], n);
	}
	fputs("]}", out);
	free(cols);
	return ferror(out) ? MEMSCOPE_E_IO : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the "ranks" verdict */

/* Whether every input has a rank of its own, so that the text says "ranks". */
static int ranks_apart(const struct ms__ranks_part *s)
{
	int64_t *v = malloc((s->n_rows ? s->n_rows : 1) * sizeof(*v));
	size_t i;
	int apart_ = v != NULL;

	for (i = 0; i < s->n_rows && apart_; i++) {
		apart_ = s->rows[i].added && (s->rows[i].has >> MS__FIG_RANK & 1);
		v[i] = s->rows[i].fig[MS__FIG_RANK];
	}
	if (apart_)
		ms__qsort(v, s->n_rows, sizeof(*v), by_i64);
	for (i = 1; i < s->n_rows && apart_; i++)
		apart_ = v[i - 1] != v[i];
	free(v);
	return apart_;
}

/* How a row is named: "rank 3", "rank 3 device 6", "#7" (its input). */
static void row_name(char *buf, size_t n, const struct ms__ranks_row *w, size_t i, int apart_)
{
	if (!(w->has >> MS__FIG_RANK & 1))
		snprintf(buf, n, "#%zu", i);
	else if (apart_ || !w->device)
		snprintf(buf, n, "rank %" PRId64, w->fig[MS__FIG_RANK]);
	else
		snprintf(buf, n, "rank %" PRId64 " device %s", w->fig[MS__FIG_RANK], w->device);
}

/* How a site is named: "OP at FRAME" (the innermost Python frame, else C), the op, the owner,
 * the frame, or the pool. */
static void site_name(
	char *buf, size_t n, const struct ms__ranks *r, const struct ms__ranks_site *e)
{
	const char *what = e->op      ? memscope_strtab_str(r->st, e->op, NULL)
			   : e->owner ? memscope_strtab_str(r->st, e->owner, NULL)
				      : NULL;
	uint32_t stack = e->stack_py ? e->stack_py : e->stack_c;
	size_t n_fr = 0;
	const uint32_t *fr = stack ? memscope_strtab_stack(r->st, stack, &n_fr) : NULL;
	const char *where = n_fr ? memscope_strtab_str(r->st, fr[0], NULL) : NULL;

	char op[256];

	if (e->op)
		what = ms__report_op_text(what, op, sizeof(op)); /* "aten.mm", as the other lines */
	if (what && where)
		snprintf(buf, n, "%s at %s", what, where);
	else
		snprintf(buf, n, "%s",
			what	? what
			: where ? where
				: memscope_subtype_name(e->pool));
}

/* "; rank 17 peak 2.50 GiB (median 640 MiB)" for the first figure row w stands out by. */
static size_t say_row(char *buf, size_t n, const struct ms__ranks_part *s, size_t i, int apart_)
{
	static const char *const words[] = { "peak", "growth per step", "step leaks",
		"alive at end" };
	const struct ms__ranks_row *w = &s->rows[i];
	char name[64], a[MEMSCOPE_BYTES_TEXT_MAX], b[MEMSCOPE_BYTES_TEXT_MAX];
	enum ms__ranks_fig f;

	for (f = 0; f < MS__FIG_RANK && !(w->stands >> f & 1); f++)
		;
	row_name(name, sizeof(name), w, i, apart_);
	return (size_t)snprintf(buf, n, "%s %s %s%s (median %s%s)", name, words[f],
		w->fig[f] < 0 ? "-" : "",
		memscope_bytes_text(a, sizeof(a), ms__apart(w->fig[f], 0)),
		s->median[f] < 0 ? "-" : "",
		memscope_bytes_text(b, sizeof(b), ms__apart(s->median[f], 0)));
}

int ms__ranks_verdict(const struct ms__ranks *r, struct ms__ranks_verdict *v)
{
	const struct ms__ranks_part *s = &r->side[MS__RANKS_RUN];
	size_t i, n = 0, n_out = 0, said = 0, len;
	int apart_ = ranks_apart(s);
	int bad = r->n_common && s->sites[r->common[0]].kind == MEMSCOPE_LEAK_STEP;
	const char *noun = apart_ ? "ranks" : "inputs";

	for (i = 0; i < s->n_rows; i++) {
		n += s->rows[i].added;
		n_out += s->rows[i].stands != 0;
		bad |= (s->rows[i].stands & ~(1u << MS__FIG_PEAK)) != 0;
	}
	if (n < 2)
		return 0;
	memset(v, 0, sizeof(*v));
	v->has_count = 1;
	v->count = n_out;
	if (!n_out)
		len = (size_t)snprintf(v->text, sizeof(v->text),
			"none of %zu %s stands out (peak, growth per step, leaks)", n, noun);
	else
		len = (size_t)snprintf(v->text, sizeof(v->text),
			"%zu of %zu %s stand%s out: ", n_out, n, noun, n_out == 1 ? "s" : "");
	for (i = 0; i < s->n_rows && said < 3 && len < sizeof(v->text); i++)
		if (s->rows[i].stands) {
			if (said++)
				len += (size_t)snprintf(v->text + len, sizeof(v->text) - len, ", ");
			if (len < sizeof(v->text))
				len += say_row(v->text + len, sizeof(v->text) - len, s, i, apart_);
		}
	if (said < n_out && len < sizeof(v->text))
		len += (size_t)snprintf(v->text + len, sizeof(v->text) - len, ", ...");
	if (r->n_common && len < sizeof(v->text)) {
		const struct ms__ranks_site *e = &s->sites[r->common[0]];
		char name[256];

		site_name(name, sizeof(name), r, e);
		snprintf(v->text + len, sizeof(v->text) - len, "; %s %s on %" PRIu32 " of %zu %s",
			name, e->kind == MEMSCOPE_LEAK_STEP ? "leaks" : "is alive at the end",
			e->n_inputs, n_read(s), noun);
	}
	v->level = bad ? "bad" : n_out ? "warn" : "ok";
	return 1;
}
