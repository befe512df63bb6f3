/* Memory over time for trace viewers: live bytes and the pools' used/reserved per process,
 * device and pool, op slices and marks, in time order. */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "analysis_impl.h"
#include "memscope/blocks.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"
#include "memscope/timeline.h"

struct memscope_timeline {
	uint64_t pools;
	int live_only;
	struct memscope_strtab *st;
	struct memscope_blocks *blocks;
	struct memscope_timeline_point *recs;
	size_t n, cap;
	size_t peak; /* index of the highest live point, n when none */
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
	if (!(t->blocks = memscope_blocks_new(NULL))) {
		free(t);
		return NULL;
	}
	return t;
}

void memscope_timeline_free(struct memscope_timeline *t)
{
	if (!t)
		return;
	memscope_blocks_free(t->blocks);
	free(t->recs);
	free(t);
}

static struct memscope_timeline_point *add(
	struct memscope_timeline *t, const struct memscope_event *ev, unsigned kind)
{
	struct memscope_timeline_point *r;

	if (grow_array(&t->recs, &t->cap, t->n + 1, sizeof(*t->recs)))
		return NULL;
	r = &t->recs[t->n++];
	r->at = memscope_pos_of(ev);
	r->pid = ev->pid;
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

/* The live-bytes change of a MALLOC/FREE row: its block's size, added or taken away. */
static int add_live(struct memscope_timeline *t, const struct memscope_event *ev)
{
	struct memscope_block b;
	struct memscope_timeline_point *r;
	int res = memscope_blocks_feed(t->blocks, ev, &b);

	if (res < 0)
		return res;
	if (res == MEMSCOPE_PAIR_REPLACED || res == MEMSCOPE_PAIR_FREE ||
		res == MEMSCOPE_PAIR_SHADOW_FREE) {
		if (b.size > 0) {
			if (!(r = add(t, ev, MEMSCOPE_TL_LIVE)))
				return MEMSCOPE_E_NOMEM;
			r->value = -b.size;
			r->device = b.device;
			r->pool = b.pool;
		}
	}
	if ((res == MEMSCOPE_PAIR_ALLOC || res == MEMSCOPE_PAIR_REPLACED) &&
		(ev->flags & MEMSCOPE_EV_SIZE) && ev->size > 0) {
		if (!(r = add(t, ev, MEMSCOPE_TL_LIVE)))
			return MEMSCOPE_E_NOMEM;
		r->value = ev->size;
	}
	return 0;
}

int memscope_timeline_feed(struct memscope_timeline *t, const struct memscope_event *ev)
{
	struct memscope_timeline_point *r;
	unsigned sub = ev->subtype;

	switch (ev->kind) {
	case MEMSCOPE_KIND_MALLOC:
	case MEMSCOPE_KIND_FREE:
		if (!ev->pool || (t->pools && !(t->pools & MEMSCOPE_POOL_BIT(ev->pool))))
			return 0;
		if (add_live(t, ev))
			return MEMSCOPE_E_NOMEM;
		if ((ev->flags & MEMSCOPE_EV_USED) && !t->live_only) {
			if (!(r = add(t, ev, MEMSCOPE_TL_USED)))
				return MEMSCOPE_E_NOMEM;
			r->value = ev->used;
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
	default:
		return 0;
	}
}

static int cmp_rec(const void *pa, const void *pb)
{
	const struct memscope_timeline_point *a = pa, *b = pb;
	int c = memscope_time_cmp(a->src, a->pid, a->at, b->src, b->pid, b->at);

	if (c)
		return c;
	/* one row can give a live change and a used sample: keep the row's order */
	if (a->kind != b->kind)
		return (a->kind > b->kind) - (a->kind < b->kind);
	/* a MALLOC replacing a live block: the old one goes first */
	return (a->value > b->value) - (a->value < b->value);
}

/* The key of a (device, pool) in the running sums. */
static uint64_t sum_key(int32_t device, uint16_t pool)
{
	return (uint64_t)(uint32_t)device << 16 | pool;
}

int memscope_timeline_finish(struct memscope_timeline *t)
{
	/* running live bytes per (device, pool): a = bytes, b = the process they are of (1 + the
	 * number of process changes before it), so a new process starts from 0 without clearing */
	struct u64map sums = { 0 };
	uint64_t gen = 1, bytes, of;
	size_t i;
	int64_t best = 0, cur;
	int rc = 0;

	t->peak = t->n;
	if (t->n)
		qsort(t->recs, t->n, sizeof(*t->recs), cmp_rec);
	/* each live change becomes the live bytes after it, and the highest is the peak */
	for (i = 0; i < t->n; i++) {
		struct memscope_timeline_point *r = &t->recs[i];
		uint64_t key = sum_key(r->device, r->pool);

		if (i && (r->src != r[-1].src || r->pid != r[-1].pid))
			gen++;
		if (r->kind != MEMSCOPE_TL_LIVE)
			continue;
		cur = u64map_get(&sums, key, &bytes, &of) && of == gen ? (int64_t)bytes : 0;
		/* saturating: sizes near 2^63 are hostile, not real */
		if (__builtin_add_overflow(cur, r->value, &cur))
			cur = r->value > 0 ? INT64_MAX : INT64_MIN;
		if (u64map_put(&sums, key, (uint64_t)cur, gen)) {
			rc = MEMSCOPE_E_NOMEM;
			break;
		}
		r->value = cur;
		if (r->value > best) {
			best = r->value;
			t->peak = i;
		}
	}
	u64map_free(&sums);
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

/* ---- the analysis interface (memscope/analysis.h) ---- */

ANALYSIS_CALLS(memscope_timeline)

/* every pool, with the used samples, ops and marks */
static void *memscope_timeline_create(struct memscope_strtab *st)
{
	return memscope_timeline_new(0, 0, st);
}

ANALYSIS_TABLE(memscope_timeline, "timeline", .again = NULL);
