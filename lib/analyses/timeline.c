/* Memory over time for trace viewers: live bytes and the pools' used/reserved per process,
 * device and pool, op slices, marks and training steps, in time order, and a window cut out of
 * them. */
#include <stdlib.h>

#include "../core/clocks.h"
#include "../core/internal.h"
#include "../core/u64map.h"
#include "analysis_impl.h"
#include "counters.h"
#include "live_series.h"
#include "opstack.h"
#include "window.h"
#include "memscope/blocks.h"
#include "memscope/memscope.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"
#include "memscope/timeline.h"

/* one input: what the public struct says, and its processes' first and last rows */
struct input {
	struct memscope_timeline_input pub;
	int has;
	struct u64map procs; /* pid -> a: first ts, b: last ts */
};

struct memscope_timeline {
	uint64_t pools;
	int live_only;
	struct memscope_strtab *st;
	struct memscope_blocks *blocks;
	struct memscope_timeline_point *recs;
	size_t n, cap;
	size_t peak; /* index of the highest live point, n when none */
	struct input *in;
	size_t n_in;
	struct memscope_steps *steps; /* NULL with live_only */
	struct memscope_timeline_step *spans;
	size_t n_spans, cap_spans;
	struct counters ctr;  /* the profiler's samples (not with live_only) */
	struct clocks clocks; /* the clocks of the inputs' files */
	int finished, cut;
};

struct memscope_timeline *memscope_timeline_new(
	uint64_t pools, int live_only, struct memscope_strtab *st)
{
	struct memscope_timeline *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->pools = pools;
	t->live_only = live_only;
	t->st = st;
	if (!(t->blocks = memscope_blocks_new(NULL)) ||
		(!live_only &&
			(!(t->steps = memscope_steps_new(st)) || ms__counters_init(&t->ctr, st)))) {
		memscope_timeline_free(t);
		return NULL;
	}
	return t;
}

void memscope_timeline_free(struct memscope_timeline *t)
{
	size_t i;

	if (!t)
		return;
	memscope_blocks_free(t->blocks);
	memscope_steps_free(t->steps);
	for (i = 0; i < t->n_in; i++)
		ms__u64map_free(&t->in[i].procs);
	free(t->in);
	free(t->spans);
	free(t->recs);
	ms__counters_free(&t->ctr);
	ms__clocks_free(&t->clocks);
	free(t);
}

static struct memscope_timeline_point *add(
	struct memscope_timeline *t, const struct memscope_event *ev, unsigned kind)
{
	struct memscope_timeline_point *r;

	if (ms__grow_array(&t->recs, &t->cap, t->n + 1, sizeof(*t->recs)))
		return NULL;
	r = &t->recs[t->n++];
	r->at = memscope_pos_of(ev);
	r->pid = ev->pid;
	if (kind == MEMSCOPE_TL_LIVE || kind == MEMSCOPE_TL_USED)
		r->used = INT64_MIN;
	else
		r->tid = ev->tid;
	r->value = 0;
	r->total = INT64_MIN;
	r->src = ev->src;
	r->name = ev->name;
	r->device = ev->device;
	r->pool = ev->pool;
	r->kind = (uint16_t)kind;
	return r;
}

/* The live-bytes changes of a MALLOC/FREE row (ms__live_changes); *last gets the index of the
 * row's last point (SIZE_MAX: none). */
static int add_live(struct memscope_timeline *t, const struct memscope_event *ev, size_t *last)
{
	struct ms__live_change ch[2];
	struct memscope_timeline_point *r;
	size_t n, k;
	int res = ms__live_changes(t->blocks, ev, ch, &n);

	*last = SIZE_MAX;
	if (res < 0)
		return res;
	for (k = 0; k < n; k++) {
		if (!(r = add(t, ev, MEMSCOPE_TL_LIVE)))
			return MEMSCOPE_E_NOMEM;
		r->value = ch[k].bytes;
		r->device = ch[k].device;
		r->pool = ch[k].pool;
		*last = t->n - 1;
	}
	return 0;
}

/* The input and process of ev have a row at its time. 0 or MEMSCOPE_E_NOMEM. */
static int note_row(struct memscope_timeline *t, const struct memscope_event *ev)
{
	struct input *in;
	uint64_t first, last;

	if (ev->src >= t->n_in) {
		size_t cap = t->n_in;

		if (ms__grow_array(&t->in, &cap, (size_t)ev->src + 1, sizeof(*t->in)))
			return MEMSCOPE_E_NOMEM;
		t->n_in = cap;
	}
	in = &t->in[ev->src];
	if (!in->has || ev->ts_ns < in->pub.first_ts_ns)
		in->pub.first_ts_ns = ev->ts_ns;
	if (!in->has || ev->ts_ns > in->pub.last_ts_ns)
		in->pub.last_ts_ns = ev->ts_ns;
	in->has = 1;
	if ((ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE) && ev->pool &&
		ev->pool < 64)
		in->pub.seen |= MEMSCOPE_POOL_BIT(ev->pool);
	in->pub.samples += ev->kind == MEMSCOPE_KIND_COUNTER;
	if (!ms__u64map_get(&in->procs, ev->pid, &first, &last))
		return ms__u64map_put(&in->procs, ev->pid, ev->ts_ns, ev->ts_ns);
	if (ev->ts_ns >= first && ev->ts_ns <= last)
		return 0;
	return ms__u64map_put(&in->procs, ev->pid, ev->ts_ns < first ? ev->ts_ns : first,
		ev->ts_ns > last ? ev->ts_ns : last);
}

int memscope_timeline_feed(struct memscope_timeline *t, const struct memscope_event *ev)
{
	struct memscope_timeline_point *r;
	struct memscope_event tmp;
	unsigned sub = ev->subtype;
	int64_t shift;
	size_t last;

	/* a memory plan's block has no time: not a row of the input's span */
	if (ev->kind == MEMSCOPE_KIND_PLAN)
		return 0;
	/* a file recorded far apart: drawn on its input's first clock */
	if (!(ev = ms__clocks_event(&t->clocks, ev, &tmp, &shift)))
		return MEMSCOPE_E_NOMEM;
	if (note_row(t, ev) || (t->steps && memscope_steps_feed(t->steps, ev) < 0))
		return MEMSCOPE_E_NOMEM;
	switch (ev->kind) {
	case MEMSCOPE_KIND_MALLOC:
	case MEMSCOPE_KIND_FREE:
		if (!ev->pool || ev->pool >= 64 ||
			(t->pools && !(t->pools & MEMSCOPE_POOL_BIT(ev->pool))))
			return 0;
		if (add_live(t, ev, &last))
			return MEMSCOPE_E_NOMEM;
		if ((ev->flags & MEMSCOPE_EV_USED) && !t->live_only) {
			/* on the row's live change (the last, a MALLOC's after a replaced block's
			 * FREE, as they sort), else a point of its own */
			if (last != SIZE_MAX)
				r = &t->recs[last];
			else if (!(r = add(t, ev, MEMSCOPE_TL_USED)))
				return MEMSCOPE_E_NOMEM;
			else
				r->value = ev->used;
			r->used = ev->used;
			if (ev->flags & MEMSCOPE_EV_TOTAL)
				r->total = ev->total;
		}
		return 0;
	case MEMSCOPE_KIND_OP_LAUNCH:
		if (t->live_only)
			return 0;
		if (sub == MEMSCOPE_SUB_ATEN_START || sub == MEMSCOPE_SUB_ATB_START)
			return add(t, ev, MEMSCOPE_TL_BEGIN) ? 0 : MEMSCOPE_E_NOMEM;
		if (sub == MEMSCOPE_SUB_ATEN_END || sub == MEMSCOPE_SUB_ATB_END)
			return add(t, ev, MEMSCOPE_TL_END) ? 0 : MEMSCOPE_E_NOMEM;
		return 0;
	case MEMSCOPE_KIND_MSTX:
		if (sub == MEMSCOPE_SUB_MARK && !t->live_only)
			return add(t, ev, MEMSCOPE_TL_MARK) ? 0 : MEMSCOPE_E_NOMEM;
		return 0;
	case MEMSCOPE_KIND_COUNTER:
		return t->live_only ? 0 : ms__counters_feed(&t->ctr, ev, shift);
	default:
		return 0;
	}
}

/* ms__live_cmp: one row can give a live change and a used sample, kept in the row's order */
MS__LIVE_CMP_FN(cmp_rec, struct memscope_timeline_point)

/* The first and last rows of process pid of input src: 1, or 0 when it had none. */
static int proc_span(const struct memscope_timeline *t, uint32_t src, uint64_t pid, uint64_t *first,
	uint64_t *last)
{
	return src < t->n_in && ms__u64map_get(&t->in[src].procs, pid, first, last);
}

/* The pools of each input whose points are kept; with the default, the others' points go. */
static void choose_pools(struct memscope_timeline *t)
{
	size_t i, k = 0;

	for (i = 0; i < t->n_in; i++) {
		struct memscope_timeline_input *in = &t->in[i].pub;

		in->counted = t->pools ? t->pools & in->seen : memscope_pools_default(in->seen);
	}
	if (t->pools)
		return;
	for (i = 0; i < t->n; i++) {
		const struct memscope_timeline_point *r = &t->recs[i];

		if ((r->kind == MEMSCOPE_TL_LIVE || r->kind == MEMSCOPE_TL_USED) &&
			!(t->in[r->src].pub.counted & MEMSCOPE_POOL_BIT(r->pool)))
			continue;
		t->recs[k++] = *r;
	}
	t->n = k;
}

/* The highest live point, the first of equals; n when none is above 0. */
static size_t find_peak(const struct memscope_timeline *t)
{
	size_t i, peak = t->n;
	int64_t best = 0;

	for (i = 0; i < t->n; i++)
		if (t->recs[i].kind == MEMSCOPE_TL_LIVE && t->recs[i].value > best) {
			best = t->recs[i].value;
			peak = i;
		}
	return peak;
}

/* memscope_steps_foreach: the spans of one process's steps (memscope_timeline_steps). */
static int add_spans(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	struct memscope_timeline *t = ctx;
	enum memscope_step_source source = memscope_steps_source(p);
	uint64_t n = memscope_steps_count(p), k, first = 0, last = 0;

	proc_span(t, src, pid, &first, &last);
	for (k = 1; k <= n; k++) {
		struct memscope_timeline_step s = { src, pid, memscope_steps_number(p, k), 0, 0,
			(uint16_t)source, 0 };
		int open;

		if (!memscope_steps_span(p, s.n, &s.start_ns, &s.end_ns, &open))
			continue;
		s.open = (uint16_t)open;
		/* within the process's rows: step 1 of SYSTEM steps, an open mstx step */
		if (s.start_ns < first)
			s.start_ns = first;
		if (s.end_ns > last)
			s.end_ns = last;
		if (s.end_ns < s.start_ns)
			s.end_ns = s.start_ns;
		if (ms__grow_array(&t->spans, &t->cap_spans, t->n_spans + 1, sizeof(*t->spans)))
			return MEMSCOPE_E_NOMEM;
		t->spans[t->n_spans++] = s;
	}
	return 0;
}

int memscope_timeline_finish(struct memscope_timeline *t)
{
	struct ms__live_sums sums = { 0 };
	size_t i, slot;
	int rc = 0;

	choose_pools(t);
	if (t->n)
		ms__sort_rows(t->recs, t->n, sizeof(*t->recs), cmp_rec);
	/* each live change becomes the live bytes after it */
	for (i = 0; i < t->n; i++) {
		struct memscope_timeline_point *r = &t->recs[i];

		if (!i || r->src != r[-1].src || r->pid != r[-1].pid)
			ms__live_sums_process(&sums);
		if (r->kind == MEMSCOPE_TL_LIVE && ms__live_sums_add(&sums, r->device, r->pool,
							   r->value, &r->value, &slot) < 0) {
			rc = MEMSCOPE_E_NOMEM;
			break;
		}
	}
	ms__live_sums_free(&sums);
	t->peak = find_peak(t);
	t->n_spans = 0;
	if (!rc && t->steps &&
		(memscope_steps_resolve(t->steps) ||
			memscope_steps_foreach(t->steps, add_spans, t)))
		rc = MEMSCOPE_E_NOMEM;
	if (!rc && !t->live_only && !(rc = ms__counters_finish(&t->ctr, t->st)))
		for (i = 0; i < t->ctr.n; i++) {
			struct memscope_counter_track *k = &t->ctr.pub[i];
			uint64_t first = 0, last = k->last_ts_ns;

			proc_span(t, k->src, k->pid, &first, &last);
			k->end_ts_ns = last;
		}
	t->finished = !rc;
	return rc;
}

const struct memscope_timeline_point *memscope_timeline_peak(const struct memscope_timeline *t)
{
	return t->peak < t->n ? &t->recs[t->peak] : NULL;
}

const struct memscope_timeline_point *memscope_timeline_points(
	const struct memscope_timeline *t, size_t *n)
{
	*n = t->n;
	return t->recs;
}

const struct memscope_strtab *memscope_timeline_strtab(const struct memscope_timeline *t)
{
	return t->st;
}

const struct memscope_timeline_input *memscope_timeline_input(
	const struct memscope_timeline *t, uint32_t src)
{
	return src < t->n_in && t->in[src].has ? &t->in[src].pub : NULL;
}

int memscope_timeline_clock_note(
	const struct memscope_timeline *t, uint32_t src, char *buf, size_t n)
{
	return ms__clocks_note(&t->clocks, src, t->st, buf, n);
}

const struct memscope_timeline_step *memscope_timeline_steps(
	const struct memscope_timeline *t, size_t *n)
{
	*n = t->n_spans;
	return t->spans;
}

const struct memscope_counter_track *memscope_timeline_counters(
	const struct memscope_timeline *t, size_t *n)
{
	*n = t->finished ? t->ctr.n : 0;
	return t->finished ? t->ctr.pub : NULL;
}

/* ---- the window ---- */

/* The cut being made: the new points and steps, and one process's state before its window. */
struct cut {
	const struct memscope_timeline *t;
	struct memscope_timeline_point *out;
	size_t n, cap;
	struct memscope_timeline_step *spans;
	size_t n_spans, cap_spans;
	struct u64map last; /* (kind << 48 | device, pool) -> a: its last point before the window */
	uint64_t *tracks;   /* those keys in the order they first came */
	size_t n_tracks, cap_tracks;
	struct opstack ops;
	size_t *chain; /* scratch: one thread's open ops */
	size_t cap_chain;
};

static int put(struct cut *c, const struct memscope_timeline_point *p)
{
	if (ms__grow_array(&c->out, &c->cap, c->n + 1, sizeof(*c->out)))
		return MEMSCOPE_E_NOMEM;
	c->out[c->n++] = *p;
	return 0;
}

/* A copy of point i of the timeline at `at`, as kind. */
static int put_at(struct cut *c, size_t i, struct memscope_pos at, unsigned kind)
{
	struct memscope_timeline_point p = c->t->recs[i];

	p.at = at;
	p.kind = (uint16_t)kind;
	return put(c, &p);
}

/* Point i is the latest before the window of counter `kind` (LIVE: live bytes; USED: used and
 * reserved) of its device and pool. */
static int latest(struct cut *c, size_t i, unsigned kind)
{
	const struct memscope_timeline_point *r = &c->t->recs[i];
	uint64_t key = (uint64_t)kind << 48 | ms__live_pool_key(r->device, r->pool);

	if (!ms__u64map_get(&c->last, key, NULL, NULL)) {
		if (ms__grow_array(&c->tracks, &c->cap_tracks, c->n_tracks + 1, sizeof(*c->tracks)))
			return MEMSCOPE_E_NOMEM;
		c->tracks[c->n_tracks++] = key;
	}
	return ms__u64map_put(&c->last, key, i, 0);
}

/* Point i before the window: remember the latest counter values and the ops open. */
static int before(struct cut *c, size_t i)
{
	const struct memscope_timeline_point *r = &c->t->recs[i];
	size_t n;

	switch (r->kind) {
	case MEMSCOPE_TL_LIVE:
		if (r->used != INT64_MIN && latest(c, i, MEMSCOPE_TL_USED))
			return MEMSCOPE_E_NOMEM;
		return latest(c, i, MEMSCOPE_TL_LIVE);
	case MEMSCOPE_TL_USED:
		return latest(c, i, MEMSCOPE_TL_USED);
	case MEMSCOPE_TL_BEGIN:
		return opstack_push(&c->ops, r->tid, i, r->name);
	case MEMSCOPE_TL_END:
		for (n = opstack_closes(&c->ops, r->tid, r->name); n; n--)
			opstack_pop(&c->ops, r->tid);
		return 0;
	default:
		return 0;
	}
}

/* At the window's start lo: each counter's value then, and the ops open then, outermost first. */
static int starts(struct cut *c, uint64_t lo)
{
	struct memscope_pos at = { lo, 0 };
	struct opstack *s = &c->ops;
	uint64_t i, top, place;
	size_t k, e, n;

	/* each counter its own point: the live bytes without the used, the used alone */
	for (k = 0; k < c->n_tracks; k++) {
		struct memscope_timeline_point p;

		if (!ms__u64map_get(&c->last, c->tracks[k], &i, NULL))
			return MEMSCOPE_E_NOMEM;
		p = c->t->recs[i];
		p.at = at;
		if (c->tracks[k] >> 48 == MEMSCOPE_TL_LIVE) {
			p.used = p.total = INT64_MIN;
		} else if (p.kind == MEMSCOPE_TL_LIVE) {
			p.kind = MEMSCOPE_TL_USED;
			p.value = p.used;
		}
		if (put(c, &p))
			return MEMSCOPE_E_NOMEM;
	}
	for (k = 0; k < s->n_tids; k++) {
		if (!ms__u64map_get(&s->top, s->tids[k], &top, &place) || !top)
			continue;
		/* the thread's chain runs innermost first: collect it, then put it from its end */
		for (n = 0, e = (size_t)top - 1; e != SIZE_MAX; e = s->e[e].below) {
			if (ms__grow_array(&c->chain, &c->cap_chain, n + 1, sizeof(*c->chain)))
				return MEMSCOPE_E_NOMEM;
			c->chain[n++] = s->e[e].point;
		}
		while (n)
			if (put_at(c, c->chain[--n], at, MEMSCOPE_TL_BEGIN))
				return MEMSCOPE_E_NOMEM;
	}
	return 0;
}

/* The time window of input src: memscope_timeline_window_ns from its first row. */
static int time_window(const struct memscope_timeline *t, const struct memscope_timeline_window *w,
	uint32_t src, uint64_t *lo, uint64_t *hi)
{
	return memscope_timeline_window_ns(
		w, src < t->n_in ? t->in[src].pub.first_ts_ns : 0, lo, hi);
}

/* The window of one process: [*lo, *hi] (ns). 1, or 0 when the process has nothing in it
 * (no step w->step: *no_step set). spans: its steps. */
static int proc_window(const struct memscope_timeline *t, const struct memscope_timeline_window *w,
	uint32_t src, uint64_t pid, const struct memscope_timeline_step *spans, size_t n_spans,
	uint64_t *lo, uint64_t *hi, int *no_step)
{
	uint64_t first = 0, last = 0;
	size_t k;

	*no_step = 0;
	if (!proc_span(t, src, pid, &first, &last))
		return 0;
	if (w->step) {
		for (k = 0; k < n_spans && spans[k].n != w->step; k++)
			;
		if (k == n_spans) {
			*no_step = 1;
			return 0;
		}
		*lo = spans[k].start_ns; /* memscope_steps_span's, as memscope-compare --step */
		*hi = spans[k].end_ns;
	} else if (!time_window(t, w, src, lo, hi)) {
		return 0;
	}
	return first <= *hi && last >= *lo;
}

/* One process src, pid with points [i, j) and steps spans[0, n_spans) into the cut. */
static int cut_proc(struct cut *c, const struct memscope_timeline_window *w, uint32_t src,
	uint64_t pid, size_t i, size_t j, const struct memscope_timeline_step *spans,
	size_t n_spans, uint64_t *n_left_out)
{
	const struct memscope_timeline *t = c->t;
	uint64_t lo, hi, first = 0, last = 0, end_ts;
	size_t k, b;
	int no_step;

	if (!proc_window(t, w, src, pid, spans, n_spans, &lo, &hi, &no_step)) {
		*n_left_out += no_step;
		return 0;
	}
	proc_span(t, src, pid, &first, &last);
	ms__u64map_free(&c->last);
	c->n_tracks = 0;
	opstack_reset(&c->ops);
	for (k = i; k < j && t->recs[k].at.ts_ns < lo; k++)
		if (before(c, k))
			return MEMSCOPE_E_NOMEM;
	if (starts(c, lo))
		return MEMSCOPE_E_NOMEM;
	for (; k < j && t->recs[k].at.ts_ns <= hi; k++) {
		const struct memscope_timeline_point *r = &t->recs[k];

		if (put(c, r) ||
			(r->kind == MEMSCOPE_TL_BEGIN && opstack_push(&c->ops, r->tid, k, r->name)))
			return MEMSCOPE_E_NOMEM;
		if (r->kind == MEMSCOPE_TL_END)
			for (b = opstack_closes(&c->ops, r->tid, r->name); b; b--)
				opstack_pop(&c->ops, r->tid);
	}
	/* the ops still open end with the window, or with the process if it ends first */
	end_ts = hi < last ? hi : last;
	for (k = 0; k < c->ops.n_tids; k++)
		while ((b = opstack_pop(&c->ops, c->ops.tids[k])) != SIZE_MAX)
			if (put_at(c, b, (struct memscope_pos){ end_ts, UINT64_MAX },
				    MEMSCOPE_TL_END))
				return MEMSCOPE_E_NOMEM;
	for (k = 0; k < n_spans; k++) {
		struct memscope_timeline_step s = spans[k];

		if (s.start_ns > hi || s.end_ns < lo)
			continue;
		/* a neighbour that only touches the window is not drawn */
		if ((s.start_ns < lo || s.end_ns > hi) && (s.end_ns == lo || s.start_ns == hi))
			continue;
		s.start_ns = s.start_ns < lo ? lo : s.start_ns;
		s.end_ns = s.end_ns > hi ? hi : s.end_ns;
		if (ms__grow_array(&c->spans, &c->cap_spans, c->n_spans + 1, sizeof(*c->spans)))
			return MEMSCOPE_E_NOMEM;
		c->spans[c->n_spans++] = s;
	}
	return 0;
}

/* 1 when process (sa, pa) comes before (sb, pb). */
static int proc_before(uint32_t sa, uint64_t pa, uint32_t sb, uint64_t pb)
{
	return sa != sb ? sa < sb : pa < pb;
}

/* The window's cut of the counter tracks, process by process in their order. */
struct ctr_cut {
	const struct memscope_timeline *t;
	const struct memscope_timeline_window *w;
	size_t k; /* the first step of the track's process, or of a later one */
	uint64_t left_out;
	uint32_t src; /* the process asked last (asked: 1) */
	uint64_t pid;
	int asked, in;
	uint64_t lo, hi;
};

/* Whether process (src, pid) has points: they are by input and process. */
static int has_points(const struct memscope_timeline *t, uint32_t src, uint64_t pid)
{
	size_t a = 0, b = t->n, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (proc_before(t->recs[m].src, t->recs[m].pid, src, pid))
			a = m + 1;
		else
			b = m;
	}
	return a < t->n && t->recs[a].src == src && t->recs[a].pid == pid;
}

/* counters_window_fn: the window of the track's process, as its points have (proc_window). */
static int ctr_window(void *ctx, const struct memscope_counter_track *k, uint64_t *lo, uint64_t *hi)
{
	struct ctr_cut *c = ctx;
	const struct memscope_timeline *t = c->t;
	size_t e;
	int no_step;

	if (!c->asked || c->src != k->src || c->pid != k->pid) {
		while (c->k < t->n_spans &&
			proc_before(t->spans[c->k].src, t->spans[c->k].pid, k->src, k->pid))
			c->k++;
		for (e = c->k;
			e < t->n_spans && t->spans[e].src == k->src && t->spans[e].pid == k->pid;
			e++)
			;
		c->asked = 1;
		c->src = k->src;
		c->pid = k->pid;
		c->in = proc_window(t, c->w, k->src, k->pid, t->spans + c->k, e - c->k, &c->lo,
			&c->hi, &no_step);
		/* a process with points or steps was counted with them */
		if (no_step && e == c->k && !has_points(t, k->src, k->pid))
			c->left_out++;
	}
	*lo = c->lo;
	*hi = c->hi;
	return c->in;
}

/* Every input of a step window has that step in some process; else MEMSCOPE_E_INVALID. */
static int check_steps(const struct memscope_timeline *t, uint64_t step, const char *const *inputs,
	size_t n_inputs, struct memscope_error *err)
{
	size_t src, k = 0;

	for (src = 0; src < n_inputs; src++) {
		int found = 0, any = 0;

		/* spans are by input: k goes on from the last input's (one pass over them all) */
		for (; k < t->n_spans && t->spans[k].src < src; k++)
			;
		for (; k < t->n_spans && t->spans[k].src == src; k++) {
			any = 1;
			found |= t->spans[k].n == step;
		}
		if (!any || !found)
			return ms__window_no_step(
				t->steps, (uint32_t)src, inputs[src], step, any, err);
	}
	return 0;
}

int memscope_timeline_window(struct memscope_timeline *t, const struct memscope_timeline_window *w,
	const char *const *inputs, size_t n_inputs, uint64_t *n_left_out,
	struct memscope_error *err)
{
	struct cut c = { .t = t, .ops = OPSTACK_INIT };
	struct ctr_cut cc = { .t = t, .w = w };
	struct counters ctr = { 0 };
	size_t i = 0, k = 0, j, e;
	uint64_t left_out = 0, lo, hi;
	uint32_t src;
	int rc = 0;

	if (n_left_out)
		*n_left_out = 0;
	if ((rc = ms__window_can_cut(w, t->finished, t->cut, err)))
		return rc;
	if (w->step && t->live_only)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0,
			"a step window needs the steps, which a live-only timeline has not");
	if (w->step && (rc = check_steps(t, w->step, inputs, n_inputs, err)))
		return rc;
	for (src = 0; !w->step && src < t->n_in && src < n_inputs; src++)
		if (t->in[src].has && !time_window(t, w, src, &lo, &hi))
			return memscope_error_set(err, MEMSCOPE_E_ARG, inputs[src], 0,
				"the window ends before it starts (%llu ns to %llu ns)",
				(unsigned long long)lo, (unsigned long long)hi);
	/* every process, of the points and of the steps, in (input, pid) order */
	while (!rc && (i < t->n || k < t->n_spans)) {
		const struct memscope_timeline_point *p = i < t->n ? &t->recs[i] : NULL;
		const struct memscope_timeline_step *s = k < t->n_spans ? &t->spans[k] : NULL;
		uint64_t pid;

		if (p && (!s || !proc_before(s->src, s->pid, p->src, p->pid)))
			src = p->src, pid = p->pid;
		else
			src = s->src, pid = s->pid;
		for (j = i; j < t->n && t->recs[j].src == src && t->recs[j].pid == pid; j++)
			;
		for (e = k; e < t->n_spans && t->spans[e].src == src && t->spans[e].pid == pid; e++)
			;
		rc = cut_proc(&c, w, src, pid, i, j, t->spans + k, e - k, &left_out);
		i = j;
		k = e;
	}
	ms__u64map_free(&c.last);
	free(c.tracks);
	free(c.chain);
	opstack_free(&c.ops);
	if (!rc)
		rc = ms__counters_cut(&t->ctr, ctr_window, &cc, &ctr);
	left_out += cc.left_out;
	if (!rc && !c.n && !c.n_spans && !ctr.n) {
		const struct memscope_timeline_input *in = memscope_timeline_input(t, 0);

		rc = ms__window_empty(inputs, n_inputs, in != NULL,
			in ? in->last_ts_ns - in->first_ts_ns : 0, err);
	}
	if (rc) {
		free(c.out);
		free(c.spans);
		ms__counters_free(&ctr);
		return rc == MEMSCOPE_E_NOMEM
			       ? memscope_error_set(err, rc, NULL, 0, "out of memory")
			       : rc;
	}
	free(t->recs);
	free(t->spans);
	t->recs = c.out;
	t->n = c.n;
	t->cap = c.cap;
	t->spans = c.spans;
	t->n_spans = c.n_spans;
	t->cap_spans = c.cap_spans;
	ms__counters_replace(&t->ctr, &ctr);
	t->peak = find_peak(t);
	t->cut = 1;
	if (n_left_out)
		*n_left_out = left_out;
	return 0;
}

/* ---- the analysis interface (memscope/analysis.h) ---- */

ANALYSIS_CALLS(memscope_timeline)

/* each input's default pools, with the used samples, ops, marks and steps */
static void *memscope_timeline_create(struct memscope_strtab *st)
{
	return memscope_timeline_new(0, 0, st);
}

ANALYSIS_TABLE(memscope_timeline, "timeline", .again = NULL);
