/* The fluctuation of pool usage per step (formats/analyses.md "Fluctuation"): the lowest and
 * highest used memory of each step of each (input, process, device, pool), and the steps with the
 * lowest and highest ratio of the two. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_impl.h"
#include "live_series.h"

/* fmap key of a group's step: 24 bits of group, 40 of step (more than any file holds) */
#define FKEY_STEP_BITS 40
#define FKEY_MAX_GROUPS (UINT64_C(1) << (64 - FKEY_STEP_BITS))

static uint64_t fkey(uint64_t seq, uint64_t step)
{
	return seq << FKEY_STEP_BITS | step;
}

/* used after a pool row, into the min/max of the step window it falls in (formats/analyses.md
 * "Fluctuation") */
int ms__leaks_fluct_sample(struct memscope_leaks *l, const struct memscope_event *ev)
{
	const struct memscope_step_proc *sp = memscope_steps_proc(l->steps, ev->src, ev->pid);
	struct memscope_pos at = memscope_pos_of(ev), end;
	struct key k = { ev->pid, ev->src, ev->device, ev->pool, 0 };
	uint64_t w = memscope_steps_index_at(sp, at); /* keyed by index, reported by number */
	struct fgroup *f = l->last_fg;
	uint64_t lo, hi;

	/* the reference tracks from step 2 on; after a step's end its samples go to the next */
	if (w <= l->o.skip_steps)
		return 0;
	if (memscope_steps_end(sp, memscope_steps_number(sp, w), &end) &&
		memscope_pos_cmp(at, end) > 0)
		w++;
	if (!f || !same_key(&f->key, &k)) {
		unsigned n = HASH_COUNT(l->fgroups);

		if (n < FKEY_MAX_GROUPS)
			GET_ENTRY(l, l->fgroups, k, struct fgroup, f);
		else
			HASH_FIND(hh, l->fgroups, &k, sizeof(k), f);
		if (!f)
			return n < FKEY_MAX_GROUPS ? MEMSCOPE_E_NOMEM : 0;
		if (HASH_COUNT(l->fgroups) > n)
			f->seq = n;
		l->last_fg = f;
	}
	if (w >> FKEY_STEP_BITS)
		return 0;
	if (ms__u64map_get(&l->fmap, fkey(f->seq, w), &lo, &hi)) {
		lo = ev->used < (int64_t)lo ? (uint64_t)ev->used : lo;
		hi = ev->used > (int64_t)hi ? (uint64_t)ev->used : hi;
	} else {
		lo = hi = (uint64_t)ev->used;
	}
	return ms__u64map_put(&l->fmap, fkey(f->seq, w), lo, hi);
}

/* by input, process, device (the order of a series' tracks, live_series.h), then pool */
static int cmp_key(const struct key *a, const struct key *b)
{
	int c = ms__track_cmp(a->src, a->pid, a->device, b->src, b->pid, b->device);

	return c ? c : MS__CMP(a->pool, b->pool);
}

static int cmp_fgroup(const void *pa, const void *pb)
{
	return cmp_key(&(*(const struct fgroup *const *)pa)->key,
		&(*(const struct fgroup *const *)pb)->key);
}

static int cmp_entry_key(const void *pa, const void *pb)
{
	const struct u64map_entry *a = pa, *b = pb;

	return MS__CMP(a->key, b->key);
}

/* One group's fluctuation from its samples (ascending steps): the ended steps, the extremes. */
static void fluct_of(struct memscope_leaks *l, const struct fgroup *g, const struct u64map_entry *e,
	size_t n, struct memscope_fluct *x)
{
	const struct memscope_step_proc *sp = memscope_steps_proc(l->steps, g->key.src, g->key.pid);
	double lo = 0, hi = 0;
	size_t i;

	memset(x, 0, sizeof(*x));
	x->src = g->key.src;
	x->pid = g->key.pid;
	x->device = g->key.device;
	x->pool = (uint16_t)g->key.pool;
	x->steps = &l->fl_steps[l->n_fl_steps];
	for (i = 0; i < n; i++) {
		uint64_t w =
			memscope_steps_number(sp, e[i].key & ((UINT64_C(1) << FKEY_STEP_BITS) - 1));
		struct memscope_fluct_step *o;
		struct memscope_pos end;
		double r;

		/* a step is judged at its end, as the reference does (none: past the last step) */
		if (w == MEMSCOPE_STEP_NONE || !memscope_steps_end(sp, w, &end))
			continue;
		o = &l->fl_steps[l->n_fl_steps++];
		*o = (struct memscope_fluct_step){ w, (int64_t)e[i].a, (int64_t)e[i].b };
		if (o->max <= 0) {
			x->n_zero_max++;
			continue;
		}
		r = (double)o->min / (double)o->max;
		if (!x->has_gaps || r < lo) {
			lo = r;
			x->min_gap = (size_t)(o - x->steps);
		}
		if (!x->has_gaps || r > hi) {
			hi = r;
			x->max_gap = (size_t)(o - x->steps);
		}
		x->has_gaps = 1;
	}
	x->n_steps = (size_t)(&l->fl_steps[l->n_fl_steps] - x->steps);
}

/* The fluctuation of every group, by (input, process, device, pool). */
int ms__leaks_fluct_finish(struct memscope_leaks *l)
{
	size_t n = HASH_COUNT(l->fgroups), n_e = 0, i;
	struct fgroup **all = NULL, *f, *tmp;
	struct u64map_entry *e = NULL;
	int rc = MEMSCOPE_E_NOMEM;

	if (!n)
		return 0;
	all = malloc(n * sizeof(*all));
	e = malloc((l->fmap.n ? l->fmap.n : 1) * sizeof(*e));
	l->fl_out = calloc(n, sizeof(*l->fl_out));
	l->fl_steps = calloc(l->fmap.n ? l->fmap.n : 1, sizeof(*l->fl_steps));
	if (!all || !e || !l->fl_out || !l->fl_steps)
		goto out;
	for (i = 0; l->fmap.n && i <= l->fmap.mask; i++)
		if (l->fmap.e[i].used)
			e[n_e++] = l->fmap.e[i];
	if (n_e > 1)
		qsort(e, n_e, sizeof(*e), cmp_entry_key);
	i = 0;
	HASH_ITER(hh, l->fgroups, f, tmp)
	all[i++] = f;
	qsort(all, n, sizeof(*all), cmp_fgroup);
	for (i = 0; i < n; i++) {
		size_t at = 0, end = n_e;

		/* the group's samples: from the first key of its seq */
		while (at < end) {
			size_t mid = at + (end - at) / 2;

			if (e[mid].key < fkey(all[i]->seq, 0))
				at = mid + 1;
			else
				end = mid;
		}
		while (end < n_e && e[end].key >> FKEY_STEP_BITS == all[i]->seq)
			end++;
		fluct_of(l, all[i], &e[at], end - at, &l->fl_out[l->n_fl_out]);
		l->n_fl_out += l->fl_out[l->n_fl_out].n_steps != 0;
	}
	rc = 0;
out:
	free(all);
	free(e);
	return rc;
}

const struct memscope_fluct *memscope_leaks_fluct(const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_fl_out;
	return l->fl_out;
}
