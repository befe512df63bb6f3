/* The leak analyses: step leaks by the timestamp rule, the marked range, blocks unreleased at exit,
 * and the per-step fluctuation of pool usage (formats/analyses.md, "Exit rule" to "Marked-range
 * leaks"). */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "analysis_impl.h"
#include "memscope/error.h"
#include "memscope/leaks.h"
#include "memscope/strtab.h"

/* uthash must not exit on OOM: the failing insert sets l->oom and is undone by uthash. */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (l->oom = 1)
#include <uthash.h>

/* key of processes (device, pool 0), mark groups (pool 0) and fluctuation groups */
struct key {
	uint64_t pid;
	uint32_t src;
	int32_t device;
	uint32_t pool;
	uint32_t pad;
};

struct lproc {
	struct key key;
	struct memscope_pos max_mem; /* latest MALLOC/FREE row fed (not shadow) */
	uint64_t last_real_ts;	     /* latest non-SYSTEM, non-shadow row */
	struct buf kernels;	     /* KERNEL_LAUNCH positions: zigzag varint deltas of ts, id */
	struct memscope_pos last_kernel;
	uint64_t n_kernels;
	int kernels_unordered;
	UT_hash_handle hh;
};

struct mark_at {
	struct memscope_pos pos;
	uint64_t line;
};

struct mgroup {
	struct key key;
	struct memscope_mark_group g;
	struct mark_at *marks; /* the Mark rows with the text, in time order unless dirty */
	size_t n, cap;
	int dirty;	   /* one came out of order: sorted by the rewind */
	uint64_t n_blocks; /* blocks of the checked pools judged in this group */
	uint32_t seq;	   /* order of first sight */
	UT_hash_handle hh;
};

/* a fluctuation group; its samples are in the analysis's fmap under fkey(seq, step) */
struct fgroup {
	struct key key;
	uint64_t seq;
	UT_hash_handle hh;
};

/* fmap key of a group's step: 24 bits of group, 40 of step (more than any file holds) */
#define FKEY_STEP_BITS 40
#define FKEY_MAX_GROUPS (UINT64_C(1) << (64 - FKEY_STEP_BITS))

static uint64_t fkey(uint64_t seq, uint64_t step)
{
	return seq << FKEY_STEP_BITS | step;
}

struct memscope_leaks {
	struct memscope_leaks_opts o;
	char *mark;
	uint32_t mark_id;
	uint64_t pools_step, pools_mark, pools_exit;
	struct memscope_strtab *st;
	struct memscope_steps *steps;
	struct memscope_blocks *blocks;
	struct lproc *procs, *last_proc;
	struct mgroup *mgroups, *last_mg;
	struct fgroup *fgroups, *last_fg;
	struct u64map fmap; /* (group, step) -> lowest, highest used */
	struct memscope_block *shadowed;
	size_t n_shadowed, cap_shadowed;
	struct memscope_leak *leaks;
	size_t n_leaks, cap_leaks;
	struct memscope_leak_group *groups;
	size_t n_groups;
	struct memscope_mark_group *mg_out;
	size_t n_mg_out;
	struct memscope_fluct *fl_out;
	size_t n_fl_out;
	struct memscope_fluct_step *fl_steps;
	size_t n_fl_steps;
	struct memscope_leaks_stats stats;
	int complete; /* second pass: every boundary is known, boundary rows are not fed again */
	int late;
	uint32_t late_src;
	uint64_t late_line;
	int oom;
};

void memscope_leaks_opts_init(struct memscope_leaks_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->kinds = MEMSCOPE_LEAK_ALL;
	o->skip_steps = 1;
	o->min_steps_alive = 1;
}

static int alloc_state(struct memscope_leaks *l)
{
	l->steps = l->steps ? l->steps : memscope_steps_new(l->st);
	l->blocks = memscope_blocks_new(l->st);
	return l->steps && l->blocks ? 0 : MEMSCOPE_E_NOMEM;
}

struct memscope_leaks *memscope_leaks_new(
	const struct memscope_leaks_opts *o, struct memscope_strtab *st)
{
	struct memscope_leaks *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->st = st;
	if (o && o->mark && o->mark_index > UINT32_MAX) {
		free(l);
		return NULL;
	}
	if (o)
		l->o = *o;
	else
		memscope_leaks_opts_init(&l->o);
	if (!l->o.kinds)
		l->o.kinds = MEMSCOPE_LEAK_ALL;
	if (!l->o.mark)
		l->o.kinds &= ~MEMSCOPE_LEAK_MARK;
	l->pools_step = l->o.pools ? l->o.pools : MEMSCOPE_POOLS_FRAMEWORK;
	l->pools_mark = l->pools_exit = l->o.pools ? l->o.pools : MEMSCOPE_POOLS_ALL;
	if ((l->o.mark &&
		    (!(l->mark = strdup(l->o.mark)) ||
			    memscope_strtab_intern(st, l->mark, strlen(l->mark), &l->mark_id))) ||
		alloc_state(l)) {
		memscope_leaks_free(l);
		return NULL;
	}
	l->o.mark = l->mark;
	return l;
}

/* Drop what one pass built; the boundaries (steps, marks) stay. */
static void clear_pass(struct memscope_leaks *l)
{
	struct lproc *p, *ptmp;
	struct fgroup *f, *ftmp;
	struct mgroup *m, *mtmp;

	HASH_ITER(hh, l->procs, p, ptmp)
	{
		HASH_DELETE(hh, l->procs, p);
		buf_free(&p->kernels);
		free(p);
	}
	HASH_ITER(hh, l->fgroups, f, ftmp)
	{
		HASH_DELETE(hh, l->fgroups, f);
		free(f);
	}
	u64map_free(&l->fmap);
	HASH_ITER(hh, l->mgroups, m, mtmp)
	{
		m->g.n_leaks = m->g.bytes = 0;
		m->n_blocks = 0;
	}
	l->last_proc = NULL;
	l->last_fg = NULL;
	memscope_blocks_free(l->blocks);
	l->blocks = NULL;
	l->n_shadowed = l->n_leaks = 0;
	free(l->groups);
	free(l->mg_out);
	free(l->fl_out);
	free(l->fl_steps);
	l->groups = NULL;
	l->mg_out = NULL;
	l->fl_out = NULL;
	l->fl_steps = NULL;
	l->n_groups = l->n_mg_out = l->n_fl_out = l->n_fl_steps = 0;
	memset(&l->stats, 0, sizeof(l->stats));
}

void memscope_leaks_free(struct memscope_leaks *l)
{
	struct mgroup *m, *tmp;

	if (!l)
		return;
	clear_pass(l);
	HASH_ITER(hh, l->mgroups, m, tmp)
	{
		HASH_DELETE(hh, l->mgroups, m);
		free(m->marks);
		free(m);
	}
	memscope_steps_free(l->steps);
	free(l->shadowed);
	free(l->leaks);
	free(l->mark);
	free(l);
}

/* Find or add the entry of key k in a table of size-byte entries; NULL on OOM. */
#define GET_ENTRY(l, table, k, type, out)                                                          \
	do {                                                                                       \
		HASH_FIND(hh, (table), &(k), sizeof(k), (out));                                    \
		if (!(out) && ((out) = calloc(1, sizeof(type)))) {                                 \
			(out)->key = (k);                                                          \
			(l)->oom = 0;                                                              \
			HASH_ADD(hh, (table), key, sizeof(k), (out));                              \
			if ((l)->oom) {                                                            \
				free(out);                                                         \
				(out) = NULL;                                                      \
			}                                                                          \
		}                                                                                  \
	} while (0)

static int same_key(const struct key *a, const struct key *b)
{
	return a->pid == b->pid && a->src == b->src && a->device == b->device && a->pool == b->pool;
}

static struct lproc *proc_of(struct memscope_leaks *l, uint32_t src, uint64_t pid)
{
	struct key k = { pid, src, 0, 0, 0 };
	struct lproc *p = l->last_proc;

	if (p && same_key(&p->key, &k))
		return p;
	GET_ENTRY(l, l->procs, k, struct lproc, p);
	return l->last_proc = p;
}

/* The mark group of (src, pid, device), made on first sight; numbered in that order. */
static struct mgroup *mgroup_of(struct memscope_leaks *l, uint32_t src, uint64_t pid, int32_t dev)
{
	struct key k = { pid, src, dev, 0, 0 };
	struct mgroup *m = l->last_mg;
	unsigned n;

	if (m && same_key(&m->key, &k))
		return m;
	n = HASH_COUNT(l->mgroups);
	GET_ENTRY(l, l->mgroups, k, struct mgroup, m);
	if (m && HASH_COUNT(l->mgroups) > n) {
		m->g.src = src;
		m->g.pid = pid;
		m->g.device = dev;
		m->seq = n;
	}
	return l->last_mg = m;
}

static int add_leak(struct memscope_leaks *l, unsigned kind, const struct memscope_block *b,
	struct memscope_leak **out)
{
	struct memscope_leak *x;

	if (grow_array(&l->leaks, &l->cap_leaks, l->n_leaks + 1, sizeof(*l->leaks)))
		return MEMSCOPE_E_NOMEM;
	x = &l->leaks[l->n_leaks++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->blk = *b;
	if (out)
		*out = x;
	return 0;
}

static struct memscope_pos alloc_pos(const struct memscope_block *b)
{
	struct memscope_pos p = { b->alloc_ts_ns, b->alloc_event_id };

	return p;
}

/* Step rule: allocated in step s > skip, alive at the end of the first ended step >= s + N. */
static int judge_step(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos)
{
	const struct memscope_step_proc *p;
	struct memscope_leak *x;
	struct memscope_pos end;
	uint64_t s, k;

	if (!(l->o.kinds & MEMSCOPE_LEAK_STEP) || !(l->pools_step & MEMSCOPE_POOL_BIT(b->pool)))
		return 0;
	p = memscope_steps_proc(l->steps, b->src, b->pid);
	s = memscope_steps_at(p, alloc_pos(b));
	if (s <= l->o.skip_steps || s + l->o.min_steps_alive < s ||
		!memscope_steps_end_from(p, s + l->o.min_steps_alive, &k, &end))
		return 0;
	if (freed && memscope_pos_cmp(free_pos, end) < 0)
		return 0;
	if (add_leak(l, MEMSCOPE_LEAK_STEP, b, &x))
		return MEMSCOPE_E_NOMEM;
	x->alloc_step = s;
	x->detected_step = k;
	l->stats.n_step_leaks++;
	add_bytes(&l->stats.step_bytes, b->size);
	return 0;
}

/* Marked range: allocated between marks A and B (inclusive), not freed by mark C. */
static int judge_mark(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos)
{
	struct memscope_pos at = alloc_pos(b);
	struct memscope_leak *x;
	struct mgroup *m;
	size_t i = l->o.mark_index;

	if (!(l->o.kinds & MEMSCOPE_LEAK_MARK) || !(l->pools_mark & MEMSCOPE_POOL_BIT(b->pool)) ||
		b->device == MEMSCOPE_DEVICE_NONE)
		return 0;
	if (!(m = mgroup_of(l, b->src, b->pid, b->device)))
		return MEMSCOPE_E_NOMEM;
	m->n_blocks++;
	/* without mark C yet, a freed block was freed before it */
	if (m->dirty || m->n < i + 3 || memscope_pos_cmp(at, m->marks[i].pos) < 0 ||
		memscope_pos_cmp(at, m->marks[i + 1].pos) > 0 ||
		(freed && memscope_pos_cmp(free_pos, m->marks[i + 2].pos) <= 0))
		return 0;
	if (add_leak(l, MEMSCOPE_LEAK_MARK, b, &x))
		return MEMSCOPE_E_NOMEM;
	x->group = m->seq;
	m->g.n_leaks++;
	add_bytes(&m->g.bytes, b->size);
	l->stats.n_mark_leaks++;
	add_bytes(&l->stats.mark_bytes, b->size);
	return 0;
}

/* The step and mark verdicts of a block; a promoted historical block (its allocation time is
 * not its own) has neither. */
static int judge(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos)
{
	int rc;

	if (b->flags & MEMSCOPE_BLOCK_SHADOW_ALLOC)
		return 0;
	rc = judge_step(l, b, freed, free_pos);
	return rc ? rc : judge_mark(l, b, freed, free_pos);
}

static void set_late(struct memscope_leaks *l, const struct memscope_event *ev)
{
	if (!l->late) {
		l->late = 1;
		l->late_src = ev->src;
		l->late_line = ev->line;
	}
}

/* A boundary row of process p: late if a MALLOC/FREE row after it in time came first. */
static void check_late(struct memscope_leaks *l, struct lproc *p, const struct memscope_event *ev)
{
	if (memscope_pos_cmp(memscope_pos_of(ev), p->max_mem) < 0)
		set_late(l, ev);
}

/* A Mark row with the text; one out of time order needs the second pass, sorted. */
static int add_mark(struct memscope_leaks *l, const struct memscope_event *ev)
{
	struct memscope_pos at = memscope_pos_of(ev);
	struct mgroup *m;

	if (ev->device == MEMSCOPE_DEVICE_NONE)
		return 0;
	if (!(m = mgroup_of(l, ev->src, ev->pid, ev->device)) ||
		grow_array(&m->marks, &m->cap, m->n + 1, sizeof(*m->marks)))
		return MEMSCOPE_E_NOMEM;
	m->g.n_marks++;
	if (m->n && memscope_pos_cmp(at, m->marks[m->n - 1].pos) < 0) {
		m->dirty = 1;
		set_late(l, ev);
	}
	m->marks[m->n++] = (struct mark_at){ at, ev->line };
	return 0;
}

static int cmp_mark_at(const void *pa, const void *pb)
{
	const struct mark_at *a = pa, *b = pb;
	int c = memscope_pos_cmp(a->pos, b->pos);

	return c ? c : a->line < b->line ? -1 : a->line > b->line;
}

static int add_kernel(struct lproc *p, const struct memscope_event *ev)
{
	unsigned char tmp[20];
	size_t n;

	n = varint_put(tmp, zigzag((int64_t)(ev->ts_ns - p->last_kernel.ts_ns)));
	n += varint_put(tmp + n, zigzag((int64_t)(ev->id - p->last_kernel.id)));
	if (buf_append(&p->kernels, tmp, n))
		return MEMSCOPE_E_NOMEM;
	if (memscope_pos_cmp(memscope_pos_of(ev), p->last_kernel) < 0)
		p->kernels_unordered = 1;
	p->last_kernel = memscope_pos_of(ev);
	p->n_kernels++;
	return 0;
}

/* used after a pool row, into the min/max of the step window it falls in (formats/analyses.md
 * "Fluctuation") */
static int add_sample(struct memscope_leaks *l, const struct memscope_event *ev)
{
	const struct memscope_step_proc *sp = memscope_steps_proc(l->steps, ev->src, ev->pid);
	struct memscope_pos at = memscope_pos_of(ev), end;
	struct key k = { ev->pid, ev->src, ev->device, ev->pool, 0 };
	uint64_t w = memscope_steps_at(sp, at);
	struct fgroup *f = l->last_fg;
	uint64_t lo, hi;

	/* the reference tracks from step 2 on; after a step's end its samples go to the next */
	if (w <= l->o.skip_steps)
		return 0;
	if (memscope_steps_end(sp, w, &end) && memscope_pos_cmp(at, end) > 0)
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
	if (u64map_get(&l->fmap, fkey(f->seq, w), &lo, &hi)) {
		lo = ev->used < (int64_t)lo ? (uint64_t)ev->used : lo;
		hi = ev->used > (int64_t)hi ? (uint64_t)ev->used : hi;
	} else {
		lo = hi = (uint64_t)ev->used;
	}
	return u64map_put(&l->fmap, fkey(f->seq, w), lo, hi);
}

static int on_live(void *ctx, const struct memscope_block *b);

/* A block the reference freed with a shadow FREE: alive at exit unless that free comes before
 * a later row of its process (freed while not tracing, or its address reused). */
static int judge_shadowed(
	struct memscope_leaks *l, const struct lproc *p, const struct memscope_block *b)
{
	struct memscope_pos at = { b->free_ts_ns, b->free_event_id };

	if (memscope_shadow_free_at_exit(b, p->last_real_ts))
		return on_live(l, b);
	l->stats.n_shadow_not_exit++;
	return judge(l, b, 1, at);
}

static int feed_block(struct memscope_leaks *l, struct lproc *p, const struct memscope_event *ev)
{
	struct memscope_block out;
	int r;

	if (!(ev->flags & MEMSCOPE_EV_SHADOW)) {
		if (memscope_pos_cmp(memscope_pos_of(ev), p->max_mem) > 0)
			p->max_mem = memscope_pos_of(ev);
		if ((l->o.kinds & MEMSCOPE_LEAK_STEP) && (ev->flags & MEMSCOPE_EV_USED) &&
			(l->pools_step & MEMSCOPE_POOL_BIT(ev->pool)) && (r = add_sample(l, ev)))
			return r;
	}
	r = memscope_blocks_feed(l->blocks, ev, &out);
	switch (r) {
	case MEMSCOPE_PAIR_ALLOC:
		l->stats.n_alloc++;
		return 0;
	case MEMSCOPE_PAIR_FREE:
		l->stats.n_free++;
		return judge(l, &out, 1, memscope_pos_of(ev));
	case MEMSCOPE_PAIR_REPLACED:
		l->stats.n_alloc++;
		l->stats.n_replaced++;
		return judge(l, &out, 1, memscope_pos_of(ev));
	case MEMSCOPE_PAIR_SHADOW_FREE:
		l->stats.n_shadow_free++;
		if (!memscope_shadow_free_at_exit(&out, p->last_real_ts))
			return judge_shadowed(l, p, &out);
		if (grow_array(&l->shadowed, &l->cap_shadowed, l->n_shadowed + 1,
			    sizeof(*l->shadowed)))
			return MEMSCOPE_E_NOMEM;
		l->shadowed[l->n_shadowed++] = out;
		return 0;
	case MEMSCOPE_PAIR_UNMATCHED_FREE:
		if (!l->stats.n_unmatched_free++) {
			l->stats.unmatched_src = ev->src;
			l->stats.unmatched_line = ev->line;
		}
		return 0;
	default:
		return r < 0 ? r : 0;
	}
}

int memscope_leaks_feed(struct memscope_leaks *l, const struct memscope_event *ev)
{
	int is_mark = ev->kind == MEMSCOPE_KIND_MSTX && ev->subtype == MEMSCOPE_SUB_MARK &&
		      (l->o.kinds & MEMSCOPE_LEAK_MARK) && ev->name == l->mark_id;
	struct lproc *p;
	int r;

	l->stats.n_events++;
	if (!(p = proc_of(l, ev->src, ev->pid)))
		return MEMSCOPE_E_NOMEM;
	if (memscope_event_is_real(ev) && ev->ts_ns > p->last_real_ts)
		p->last_real_ts = ev->ts_ns;
	if ((l->o.kinds & MEMSCOPE_LEAK_MARK) && ev->device != MEMSCOPE_DEVICE_NONE &&
		!mgroup_of(l, ev->src, ev->pid, ev->device))
		return MEMSCOPE_E_NOMEM;
	/* boundaries are taken in the first pass only; the second one knows them all */
	if (is_mark && !l->complete) {
		check_late(l, p, ev);
		return add_mark(l, ev);
	}
	if (!l->complete && (l->o.kinds & MEMSCOPE_LEAK_STEP)) {
		if ((r = memscope_steps_feed(l->steps, ev)) < 0)
			return r;
		/* only a step's start or end moves a verdict */
		if (r == 2)
			check_late(l, p, ev);
		if (r)
			return 0;
	}
	if (ev->kind == MEMSCOPE_KIND_KERNEL_LAUNCH && ev->subtype == MEMSCOPE_SUB_KERNEL_LAUNCH &&
		(l->o.kinds & MEMSCOPE_LEAK_STEP))
		return add_kernel(p, ev);
	if (ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE)
		return feed_block(l, p, ev);
	return 0;
}

static int on_live(void *ctx, const struct memscope_block *b)
{
	struct memscope_leaks *l = ctx;
	struct memscope_pos none = { 0, 0 };
	struct memscope_leak *x;
	int rc = judge(l, b, 0, none);

	if (rc || !(l->o.kinds & MEMSCOPE_LEAK_EXIT) ||
		!(l->pools_exit & MEMSCOPE_POOL_BIT(b->pool)))
		return rc;
	if (add_leak(l, MEMSCOPE_LEAK_EXIT, b, &x))
		return MEMSCOPE_E_NOMEM;
	x->shadow = (b->flags & MEMSCOPE_BLOCK_SHADOW_FREE) != 0;
	l->stats.n_exit_leaks++;
	add_bytes(&l->stats.exit_bytes, b->size);
	return 0;
}

/* Shadow-freed blocks: alive at exit when the shadow free is not before the process's last row
 * (known when a later row came, else at finish). */
static int finish_shadowed(struct memscope_leaks *l)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < l->n_shadowed && !rc; i++) {
		struct lproc *p = proc_of(l, l->shadowed[i].src, l->shadowed[i].pid);

		rc = p ? judge_shadowed(l, p, &l->shadowed[i]) : MEMSCOPE_E_NOMEM;
	}
	return rc;
}

static int cmp_pos(const void *pa, const void *pb)
{
	return memscope_pos_cmp(*(const struct memscope_pos *)pa, *(const struct memscope_pos *)pb);
}

static int cmp_leak_proc_alloc(const void *pa, const void *pb)
{
	const struct memscope_leak *a = pa, *b = pb;

	return memscope_time_cmp(a->blk.src, a->blk.pid, alloc_pos(&a->blk), b->blk.src, b->blk.pid,
		alloc_pos(&b->blk));
}

/* A walk over a process's KERNEL_LAUNCH positions in time order: decoded as it goes when they
 * came in order, else decoded whole and sorted (the rare case). */
struct kwalk {
	const struct lproc *p;
	size_t at;		 /* byte offset into p->kernels */
	uint64_t i;		 /* positions passed */
	struct memscope_pos cur; /* position i (valid while i < n_kernels) */
	struct memscope_pos *sorted;
};

static void kwalk_decode(struct kwalk *w)
{
	const unsigned char *c = (const unsigned char *)w->p->kernels.p;
	uint64_t dt = 0, di = 0;
	int n;

	n = varint_get(c + w->at, w->p->kernels.len - w->at, &dt);
	w->at += n > 0 ? (size_t)n : 0;
	n = varint_get(c + w->at, w->p->kernels.len - w->at, &di);
	w->at += n > 0 ? (size_t)n : 0;
	w->cur.ts_ns += (uint64_t)unzigzag(dt);
	w->cur.id += (uint64_t)unzigzag(di);
}

static int kwalk_init(struct kwalk *w, const struct lproc *p)
{
	uint64_t i;

	memset(w, 0, sizeof(*w));
	w->p = p;
	if (p->n_kernels && !p->kernels_unordered) {
		kwalk_decode(w);
		return 0;
	}
	if (!p->n_kernels)
		return 0;
	if (p->n_kernels > SIZE_MAX / sizeof(*w->sorted) ||
		!(w->sorted = malloc(p->n_kernels * sizeof(*w->sorted))))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < p->n_kernels; i++) {
		kwalk_decode(w);
		w->sorted[i] = w->cur;
	}
	qsort(w->sorted, p->n_kernels, sizeof(*w->sorted), cmp_pos);
	w->cur = w->sorted[0];
	return 0;
}

/* Step past every kernel before pos; returns how many are before it. */
static uint64_t kwalk_before(struct kwalk *w, struct memscope_pos pos)
{
	while (w->i < w->p->n_kernels && memscope_pos_cmp(w->cur, pos) < 0) {
		if (++w->i == w->p->n_kernels)
			break;
		if (w->sorted)
			w->cur = w->sorted[w->i];
		else
			kwalk_decode(w);
	}
	return w->i;
}

/* kernel_index of every STEP leak: its process's KERNEL_LAUNCH rows before its MALLOC. */
static int kernel_indexes(struct memscope_leaks *l)
{
	size_t i = 0, j;

	if (l->n_leaks > 1)
		qsort(l->leaks, l->n_leaks, sizeof(*l->leaks), cmp_leak_proc_alloc);
	while (i < l->n_leaks) {
		struct lproc *p = proc_of(l, l->leaks[i].blk.src, l->leaks[i].blk.pid);
		struct kwalk w;

		if (!p || kwalk_init(&w, p))
			return MEMSCOPE_E_NOMEM;
		for (j = i; j < l->n_leaks && l->leaks[j].blk.src == l->leaks[i].blk.src &&
			    l->leaks[j].blk.pid == l->leaks[i].blk.pid;
			j++)
			l->leaks[j].kernel_index = kwalk_before(&w, alloc_pos(&l->leaks[j].blk));
		free(w.sorted);
		i = j;
	}
	return 0;
}

static int cmp_key(const struct key *a, const struct key *b)
{
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return a->pool < b->pool ? -1 : a->pool > b->pool;
}

static int cmp_fgroup(const void *pa, const void *pb)
{
	return cmp_key(&(*(const struct fgroup *const *)pa)->key,
		&(*(const struct fgroup *const *)pb)->key);
}

static int cmp_entry_key(const void *pa, const void *pb)
{
	const struct u64map_entry *a = pa, *b = pb;

	return a->key < b->key ? -1 : a->key > b->key;
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
		uint64_t w = e[i].key & ((UINT64_C(1) << FKEY_STEP_BITS) - 1);
		struct memscope_fluct_step *o;
		struct memscope_pos end;
		double r;

		/* a step is judged at its end, as the reference does */
		if (!memscope_steps_end(sp, w, &end))
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
static int finish_fluct(struct memscope_leaks *l)
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

static int cmp_mgroup_seq(const void *pa, const void *pb)
{
	const struct mgroup *a = *(const struct mgroup *const *)pa;
	const struct mgroup *b = *(const struct mgroup *const *)pb;

	if (a->g.src != b->g.src)
		return a->g.src < b->g.src ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Mark groups by input, then in order of first sight (the order they were seen in when the
 * inputs come one after the other); a MARK leak's group, its seq until now, becomes the index
 * there. Marks A, B, C. */
static int finish_marks(struct memscope_leaks *l)
{
	size_t n = HASH_COUNT(l->mgroups), i = 0, j, k = l->o.mark_index;
	struct mgroup **all, *m, *tmp;
	uint32_t *index = NULL;

	if (!n)
		return 0;
	all = malloc(n * sizeof(*all));
	index = malloc(n * sizeof(*index));
	if (!all || !index || !(l->mg_out = calloc(n, sizeof(*l->mg_out)))) {
		free(all);
		free(index);
		return MEMSCOPE_E_NOMEM;
	}
	HASH_ITER(hh, l->mgroups, m, tmp)
	all[i++] = m;
	qsort(all, n, sizeof(*all), cmp_mgroup_seq);
	for (i = 0; i < n; i++)
		index[all[i]->seq] = (uint32_t)i;
	for (i = 0; i < l->n_leaks; i++)
		if (l->leaks[i].kind == MEMSCOPE_LEAK_MARK)
			l->leaks[i].group = index[l->leaks[i].group];
	free(index);
	for (i = 0; i < n; i++) {
		struct memscope_mark_group *g = &l->mg_out[i];

		m = all[i];
		*g = m->g;
		g->checked = m->n >= k + 3;
		for (j = 0; j < 3 && g->checked; j++) {
			g->mark[j] = m->marks[k + j].pos;
			g->mark_line[j] = m->marks[k + j].line;
		}
		if (!g->checked)
			l->stats.n_unchecked_mark_blocks += m->n_blocks;
	}
	l->n_mg_out = n;
	free(all);
	return 0;
}

/* exit groups while they are built: key = what groups them */
struct egroup {
	struct {
		uint32_t pool, stack_py, stack_c, owner;
	} key;
	size_t idx;
	UT_hash_handle hh;
};

struct ranked {
	struct memscope_leak_group g;
	size_t old;
};

static int cmp_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (a->g.bytes != b->g.bytes)
		return a->g.bytes > b->g.bytes ? -1 : 1;
	if (a->g.n != b->g.n)
		return a->g.n > b->g.n ? -1 : 1;
	return a->old < b->old ? -1 : a->old > b->old;
}

/* Group the EXIT findings by stack (or owner tag), largest first; sets each one's group. */
static int finish_groups(struct memscope_leaks *l)
{
	struct egroup *table = NULL, *e, *tmp;
	struct ranked *sorted = NULL;
	size_t i, cap = 0, *rank = NULL;
	int rc = MEMSCOPE_E_NOMEM;

	for (i = 0; i < l->n_leaks; i++) {
		struct memscope_leak *x = &l->leaks[i];
		struct egroup k;

		if (x->kind != MEMSCOPE_LEAK_EXIT)
			continue;
		memset(&k, 0, sizeof(k));
		k.key.pool = x->blk.pool;
		k.key.stack_py = x->blk.stack_py;
		k.key.stack_c = x->blk.stack_c;
		k.key.owner = x->blk.stack_py || x->blk.stack_c ? 0 : x->blk.owner;
		HASH_FIND(hh, table, &k.key, sizeof(k.key), e);
		if (!e) {
			if (grow_array(&l->groups, &cap, l->n_groups + 1, sizeof(*l->groups)) ||
				!(e = malloc(sizeof(*e))))
				goto out;
			*e = k;
			e->idx = l->n_groups++;
			l->groups[e->idx] = (struct memscope_leak_group){ (uint16_t)k.key.pool,
				k.key.stack_py, k.key.stack_c, k.key.owner, 0, 0 };
			l->oom = 0;
			HASH_ADD(hh, table, key, sizeof(e->key), e);
			if (l->oom) {
				free(e);
				goto out;
			}
		}
		x->group = (uint32_t)e->idx;
		l->groups[e->idx].n++;
		add_bytes(&l->groups[e->idx].bytes, x->blk.size);
	}
	if (!l->n_groups) {
		rc = 0;
		goto out;
	}
	/* largest first; equal groups keep the order of their first block */
	sorted = malloc(l->n_groups * sizeof(*sorted));
	rank = malloc(l->n_groups * sizeof(*rank));
	if (!sorted || !rank)
		goto out;
	for (i = 0; i < l->n_groups; i++)
		sorted[i] = (struct ranked){ l->groups[i], i };
	qsort(sorted, l->n_groups, sizeof(*sorted), cmp_ranked);
	for (i = 0; i < l->n_groups; i++) {
		l->groups[i] = sorted[i].g;
		rank[sorted[i].old] = i;
	}
	for (i = 0; i < l->n_leaks; i++)
		if (l->leaks[i].kind == MEMSCOPE_LEAK_EXIT)
			l->leaks[i].group = (uint32_t)rank[l->leaks[i].group];
	rc = 0;
out:
	HASH_ITER(hh, table, e, tmp)
	{
		HASH_DELETE(hh, table, e);
		free(e);
	}
	free(sorted);
	free(rank);
	return rc;
}

static int kind_rank(unsigned kind)
{
	return kind == MEMSCOPE_LEAK_STEP ? 0 : kind == MEMSCOPE_LEAK_MARK ? 1 : 2;
}

/* the report order of memscope_leaks_get */
static int cmp_report(const void *pa, const void *pb)
{
	const struct memscope_leak *a = pa, *b = pb;
	const struct memscope_block *x = &a->blk, *y = &b->blk;

	if (a->kind != b->kind)
		return kind_rank(a->kind) - kind_rank(b->kind);
	if (a->kind != MEMSCOPE_LEAK_STEP && a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (a->kind == MEMSCOPE_LEAK_STEP && x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (a->kind == MEMSCOPE_LEAK_STEP && a->alloc_step != b->alloc_step)
		return a->alloc_step < b->alloc_step ? -1 : 1;
	return memscope_pos_cmp(alloc_pos(x), alloc_pos(y));
}

int memscope_leaks_finish(struct memscope_leaks *l)
{
	uint32_t src;
	uint64_t line;
	int rc;

	if (!l->complete && !l->late && memscope_steps_out_of_order(l->steps, &src, &line)) {
		l->late = 1;
		l->late_src = src;
		l->late_line = line;
	}
	if ((rc = memscope_blocks_foreach_live(l->blocks, on_live, l)) ||
		(rc = finish_shadowed(l)) || (rc = kernel_indexes(l)) || (rc = finish_fluct(l)) ||
		(rc = finish_marks(l)) || (rc = finish_groups(l)))
		return rc;
	if (l->n_leaks > 1)
		qsort(l->leaks, l->n_leaks, sizeof(*l->leaks), cmp_report);
	return 0;
}

int memscope_leaks_needs_rewind(const struct memscope_leaks *l, uint32_t *src, uint64_t *line)
{
	if (l->late) {
		if (src)
			*src = l->late_src;
		if (line)
			*line = l->late_line;
	}
	return l->late;
}

int memscope_leaks_rewind(struct memscope_leaks *l)
{
	struct mgroup *m, *tmp;

	clear_pass(l);
	HASH_ITER(hh, l->mgroups, m, tmp)
	{
		if (m->dirty)
			qsort(m->marks, m->n, sizeof(*m->marks), cmp_mark_at);
		m->dirty = 0;
	}
	l->late = 0;
	l->complete = 1;
	if (memscope_steps_resolve(l->steps))
		return MEMSCOPE_E_NOMEM;
	return alloc_state(l);
}

size_t memscope_leaks_count(const struct memscope_leaks *l)
{
	return l->n_leaks;
}

const struct memscope_leak *memscope_leaks_get(const struct memscope_leaks *l, size_t i)
{
	return i < l->n_leaks ? &l->leaks[i] : NULL;
}

const struct memscope_leak_group *memscope_leaks_groups(const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_groups;
	return l->groups;
}

const struct memscope_mark_group *memscope_leaks_mark_groups(
	const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_mg_out;
	return l->mg_out;
}

const struct memscope_fluct *memscope_leaks_fluct(const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_fl_out;
	return l->fl_out;
}

const struct memscope_leaks_stats *memscope_leaks_stats(const struct memscope_leaks *l)
{
	return &l->stats;
}

const struct memscope_leaks_opts *memscope_leaks_opts(const struct memscope_leaks *l)
{
	return &l->o;
}

const struct memscope_steps *memscope_leaks_steps(const struct memscope_leaks *l)
{
	return l->steps;
}

/* ---- the analysis interface (memscope/analysis.h) ---- */

ANALYSIS_CALLS(memscope_leaks)
ANALYSIS_CREATE(memscope_leaks)

static int leaks_again(const void *self, uint32_t *src, uint64_t *line, const char **why)
{
	*why = "step or mark row out of time order";
	return memscope_leaks_needs_rewind(self, src, line);
}

static int leaks_rewind(void *self)
{
	return memscope_leaks_rewind(self);
}

ANALYSIS_TABLE(memscope_leaks, "leaks", .again = leaks_again, .rewind = leaks_rewind);
