/* The leak analyses: step leaks by the timestamp rule, the marked range, blocks unreleased at exit,
 * and the per-step fluctuation of pool usage (formats/analyses.md, "Exit rule" to "Marked-range
 * leaks"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clocks.h"
#include "../core/internal.h"
#include "../core/u64map.h"
#include "analysis_impl.h"
#include "opnames.h"
#include "memscope/error.h"
#include "memscope/leaks.h"
#include "memscope/memscope.h"
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
	uint64_t pools_seen; /* the pools of its MALLOC rows so far (MEMSCOPE_POOL_BIT) */
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

/* the op start and end rows of one thread, for the op of a finding (memscope_leak.op) */
struct tkey {
	uint64_t pid, tid;
	uint32_t src, pad;
};

struct othread {
	struct tkey key;
	struct buf log; /* per row: zigzag varint deltas of ts and id, varint name << 1 | is_end */
	struct memscope_pos last;
	uint64_t n;
	int unordered;
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

/* the bytes and blocks of each pool alive at an out-of-memory event */
struct oom_state {
	uint64_t bytes[64], n[64];
};

/* what an owner of bytes at an out-of-memory event is (oom_owner_key) */
enum { OOM_BY_OWNER = 1, OOM_BY_PY, OOM_BY_C };
/* which blocks an owner's sum at an out-of-memory event counts: all, or those of no outer pool
 * (HAL, CUDA), the one family of a device that has pools carved out of one (the pool totals'
 * rule, memscope_pools_default: never a block and the segment holding it) */
enum { OOM_ALL = 0, OOM_UNNESTED = 1 };

struct memscope_leaks {
	struct memscope_leaks_opts o;
	char *mark;
	uint32_t mark_id;
	uint64_t pools_step, pools_mark, pools_exit;
	struct memscope_strtab *st;
	struct memscope_steps *steps;
	struct memscope_blocks *blocks;
	struct clocks clocks; /* a folder's files recorded far apart: each its own time 0 */
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
	size_t *members;
	struct memscope_leak_across *across;
	size_t n_across;
	size_t *across_groups; /* n_groups of them */
	struct othread *othreads, *last_ot;
	struct memscope_leaks_input_info *info; /* per src */
	size_t n_info;
	struct u64map clean_stacks; /* raw stack id -> the stack with memscope_frame_text frames */
	uint32_t *frames;
	size_t cap_frames;
	struct memscope_mark_group *mg_out;
	size_t n_mg_out;
	struct memscope_fluct *fl_out;
	size_t n_fl_out;
	struct memscope_fluct_step *fl_steps;
	size_t n_fl_steps;
	struct memscope_leaks_stats stats;
	/* out-of-memory events: kept across passes like the boundaries; what was alive then is
	 * worked out per pass for the first MEMSCOPE_LEAKS_OOM_STATES of them */
	struct memscope_leaks_oom *ooms;
	size_t n_ooms, cap_ooms;
	struct oom_state *oom_state; /* [MEMSCOPE_LEAKS_OOM_STATES] */
	struct u64map oom_owners;    /* oom_owner_key -> bytes, blocks */
	uint32_t key_device_free, key_req_size, key_reserved, key_allocated;
	int complete; /* second pass: every boundary is known, boundary rows are not fed again */
	int late;
	uint32_t late_src;
	uint64_t late_line;
	const char *late_why; /* static text: what was out of time order */
	int oom;
};

void memscope_leaks_opts_init(struct memscope_leaks_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->kinds = MEMSCOPE_LEAK_ALL;
	o->skip_steps = 1;
	o->min_steps_alive = 1;
	o->group_by = MEMSCOPE_LEAKS_BY_STACK;
	o->top = 0;
}

static int alloc_state(struct memscope_leaks *l)
{
	l->steps = l->steps ? l->steps : memscope_steps_new(l->st);
	l->blocks = memscope_blocks_new(l->st);
	return l->steps && l->blocks ? 0 : MEMSCOPE_E_NOMEM;
}

/* The attr keys an out-of-memory event's figures are read from. 0 or MEMSCOPE_E_NOMEM. */
static int intern_keys(struct memscope_leaks *l)
{
	static const char *const names[4] = { "device_free", "req_size", "reserved", "allocated" };
	uint32_t *ids[4] = { &l->key_device_free, &l->key_req_size, &l->key_reserved,
		&l->key_allocated };
	size_t i;

	for (i = 0; i < 4; i++)
		if (memscope_strtab_intern(l->st, names[i], strlen(names[i]), ids[i]))
			return MEMSCOPE_E_NOMEM;
	return 0;
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
	if (intern_keys(l) ||
		!(l->oom_state = calloc(MEMSCOPE_LEAKS_OOM_STATES, sizeof(*l->oom_state)))) {
		memscope_leaks_free(l);
		return NULL;
	}
	return l;
}

/* Drop what one pass built; the boundaries (steps, marks) stay. */
static void clear_pass(struct memscope_leaks *l)
{
	struct lproc *p, *ptmp;
	struct fgroup *f, *ftmp;
	struct mgroup *m, *mtmp;
	struct othread *t, *ttmp;

	HASH_ITER(hh, l->procs, p, ptmp)
	{
		HASH_DELETE(hh, l->procs, p);
		ms__buf_free(&p->kernels);
		free(p);
	}
	HASH_ITER(hh, l->othreads, t, ttmp)
	{
		HASH_DELETE(hh, l->othreads, t);
		ms__buf_free(&t->log);
		free(t);
	}
	l->last_ot = NULL;
	free(l->members);
	l->members = NULL;
	if (l->n_info)
		memset(l->info, 0, l->n_info * sizeof(*l->info));
	HASH_ITER(hh, l->fgroups, f, ftmp)
	{
		HASH_DELETE(hh, l->fgroups, f);
		free(f);
	}
	ms__u64map_free(&l->fmap);
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
	free(l->across);
	free(l->across_groups);
	l->across = NULL;
	l->across_groups = NULL;
	l->n_across = 0;
	free(l->mg_out);
	free(l->fl_out);
	free(l->fl_steps);
	l->groups = NULL;
	l->mg_out = NULL;
	l->fl_out = NULL;
	l->fl_steps = NULL;
	l->n_groups = l->n_mg_out = l->n_fl_out = l->n_fl_steps = 0;
	memset(&l->stats, 0, sizeof(l->stats));
	if (l->oom_state)
		memset(l->oom_state, 0, MEMSCOPE_LEAKS_OOM_STATES * sizeof(*l->oom_state));
	ms__u64map_free(&l->oom_owners);
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
	free(l->ooms);
	free(l->oom_state);
	free(l->shadowed);
	free(l->leaks);
	free(l->mark);
	free(l->info);
	free(l->frames);
	ms__u64map_free(&l->clean_stacks);
	ms__clocks_free(&l->clocks);
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

	if (ms__grow_array(&l->leaks, &l->cap_leaks, l->n_leaks + 1, sizeof(*l->leaks)))
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

/* The pools step-checked for block b: --pool's, else the frameworks' and, for a program's own
 * blocks recorded by memscope-record, its host pools; for a process whose CUDA memory has no
 * caching allocator's blocks in it (an Nsight export), its CUDA pools (formats/analyses.md
 * "Step leaks"). */
static uint64_t step_pools(struct memscope_leaks *l, const struct memscope_block *b)
{
	uint64_t pools = l->pools_step;
	const struct lproc *p;

	if (l->o.pools)
		return pools;
	if (b->flags & MEMSCOPE_BLOCK_RECORDED)
		pools |=
			MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HOST) | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_MMAP);
	if ((b->pool == MEMSCOPE_SUB_CUDA || b->pool == MEMSCOPE_SUB_CUDA_MANAGED) &&
		(p = proc_of(l, b->src, b->pid)) &&
		!(p->pools_seen & MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA_CACHING)))
		pools |= MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA) |
			 MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA_MANAGED);
	return pools;
}

/* Step rule: allocated in step s after the first skip steps of its process, alive at the end of
 * the first ended step >= s + N (step numbers, formats/analyses.md "Step leaks"). */
static int judge_step(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos)
{
	const struct memscope_step_proc *p;
	struct memscope_leak *x;
	struct memscope_pos end;
	uint64_t s, k, i;

	if (!(l->o.kinds & MEMSCOPE_LEAK_STEP) || !(step_pools(l, b) & MEMSCOPE_POOL_BIT(b->pool)))
		return 0;
	p = memscope_steps_proc(l->steps, b->src, b->pid);
	i = memscope_steps_index_at(p, alloc_pos(b));
	if (i <= l->o.skip_steps)
		return 0;
	s = memscope_steps_number(p, i);
	if (s + l->o.min_steps_alive < s ||
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

/* The key of oom_owners: the event's index, which blocks (OOM_ALL or OOM_UNNESTED), what names
 * the owner, its id. */
static uint64_t oom_owner_key(size_t oom, unsigned family, unsigned by, uint32_t id)
{
	return (uint64_t)oom << 40 | (uint64_t)family << 36 | (uint64_t)by << 32 | id;
}

/* Whether block b was alive at out-of-memory event o: of its input, device and process (a
 * snapshot has none), allocated by then and not freed by then. */
static int alive_at(const struct memscope_leaks_oom *o, const struct memscope_block *b,
	const int freed, struct memscope_pos free_pos)
{
	struct memscope_pos at = { o->ts_ns, 0 };

	if (b->src != o->src || b->device != o->device ||
		(b->pid != o->pid && b->pid != MEMSCOPE_ID_NONE && o->pid != MEMSCOPE_ID_NONE))
		return 0;
	if (b->alloc_ts_ns > o->ts_ns)
		return 0;
	return !freed || memscope_pos_cmp(free_pos, at) > 0;
}

/* Block b, at its end (freed at free_pos, or alive when its input ended), into the state of
 * the out-of-memory events it was alive at. 0 or MEMSCOPE_E_NOMEM. */
static int oom_account(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < l->n_ooms && i < MEMSCOPE_LEAKS_OOM_STATES && !rc; i++) {
		struct oom_state *st = &l->oom_state[i];
		uint64_t bytes = 0, n = 0, k;
		unsigned f;

		if (!alive_at(&l->ooms[i], b, freed, free_pos))
			continue;
		if (b->pool < 64 && b->size > 0) {
			add_bytes(&st->bytes[b->pool], b->size);
			st->n[b->pool]++;
		}
		k = b->owner	  ? oom_owner_key(i, 0, OOM_BY_OWNER, b->owner)
		    : b->stack_py ? oom_owner_key(i, 0, OOM_BY_PY, b->stack_py)
		    : b->stack_c  ? oom_owner_key(i, 0, OOM_BY_C, b->stack_c)
				  : 0;
		if (!k)
			continue;
		/* every block, and the blocks of no outer pool apart: finish_ooms keeps one */
		for (f = OOM_ALL; f <= OOM_UNNESTED && !rc; f++) {
			if (f == OOM_UNNESTED && b->pool < 64 &&
				(MEMSCOPE_POOL_BIT(b->pool) & MEMSCOPE_POOLS_OUTER))
				break;
			bytes = n = 0;
			ms__u64map_get(&l->oom_owners, k | (uint64_t)f << 36, &bytes, &n);
			add_bytes(&bytes, b->size);
			rc = ms__u64map_put(&l->oom_owners, k | (uint64_t)f << 36, bytes, n + 1);
		}
	}
	return rc;
}

/* The step and mark verdicts of a block; a promoted historical block (its allocation time is
 * not its own) has neither. Every block comes here once, at its end. */
static int judge(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos)
{
	int rc;

	if (l->n_ooms && (rc = oom_account(l, b, freed, free_pos)))
		return rc;
	if (b->flags & MEMSCOPE_BLOCK_SHADOW_ALLOC)
		return 0;
	rc = judge_step(l, b, freed, free_pos);
	return rc ? rc : judge_mark(l, b, freed, free_pos);
}

#define LATE_BOUNDARY "step or mark row out of time order"

/* The first row out of time order (src, line: why, a static text): a second pass is needed. */
static void set_late(struct memscope_leaks *l, uint32_t src, uint64_t line, const char *why)
{
	if (!l->late) {
		l->late = 1;
		l->late_src = src;
		l->late_line = line;
		l->late_why = why;
	}
}

/* A boundary row of process p: late if a MALLOC/FREE row after it in time came first. */
static void check_late(struct memscope_leaks *l, struct lproc *p, const struct memscope_event *ev)
{
	if (memscope_pos_cmp(memscope_pos_of(ev), p->max_mem) < 0)
		set_late(l, ev->src, ev->line, LATE_BOUNDARY);
}

/* A Mark row with the text; one out of time order needs the second pass, sorted. */
static int add_mark(struct memscope_leaks *l, const struct memscope_event *ev)
{
	struct memscope_pos at = memscope_pos_of(ev);
	struct mgroup *m;

	if (ev->device == MEMSCOPE_DEVICE_NONE)
		return 0;
	if (!(m = mgroup_of(l, ev->src, ev->pid, ev->device)) ||
		ms__grow_array(&m->marks, &m->cap, m->n + 1, sizeof(*m->marks)))
		return MEMSCOPE_E_NOMEM;
	m->g.n_marks++;
	if (m->n && memscope_pos_cmp(at, m->marks[m->n - 1].pos) < 0) {
		m->dirty = 1;
		set_late(l, ev->src, ev->line, LATE_BOUNDARY);
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

	n = ms__varint_put(tmp, zigzag((int64_t)(ev->ts_ns - p->last_kernel.ts_ns)));
	n += ms__varint_put(tmp + n, zigzag((int64_t)(ev->id - p->last_kernel.id)));
	if (ms__buf_append(&p->kernels, tmp, n))
		return MEMSCOPE_E_NOMEM;
	if (memscope_pos_cmp(memscope_pos_of(ev), p->last_kernel) < 0)
		p->kernels_unordered = 1;
	p->last_kernel = memscope_pos_of(ev);
	p->n_kernels++;
	return 0;
}

/* An ATen or ATB op's start or end row, into its thread's log. */
static int add_op(struct memscope_leaks *l, const struct memscope_event *ev, int end)
{
	struct tkey k;
	struct othread *t = l->last_ot;
	unsigned char tmp[30];
	uint32_t name = ev->name;
	size_t n;

	memset(&k, 0, sizeof(k));
	k.pid = ev->pid;
	k.tid = ev->tid;
	k.src = ev->src;
	if (!t || memcmp(&t->key, &k, sizeof(k)) != 0) {
		GET_ENTRY(l, l->othreads, k, struct othread, t);
		if (!(l->last_ot = t))
			return MEMSCOPE_E_NOMEM;
	}
	/* an op without a name is one still, "[unnamed op]" as flame graphs and the page call it */
	if ((!memscope_strtab_str(l->st, name, &n) || !n) &&
		memscope_strtab_intern(l->st, "[unnamed op]", 12, &name))
		return MEMSCOPE_E_NOMEM;
	n = ms__varint_put(tmp, zigzag((int64_t)(ev->ts_ns - t->last.ts_ns)));
	n += ms__varint_put(tmp + n, zigzag((int64_t)(ev->id - t->last.id)));
	n += ms__varint_put(tmp + n, (uint64_t)name << 1 | (unsigned)end);
	if (ms__buf_append(&t->log, tmp, n))
		return MEMSCOPE_E_NOMEM;
	if (ev->src < l->n_info)
		l->info[ev->src].n_op_rows++;
	if (memscope_pos_cmp(memscope_pos_of(ev), t->last) < 0)
		t->unordered = 1;
	t->last = memscope_pos_of(ev);
	t->n++;
	return 0;
}

/* the inputs an analysis keeps what it saw of: src numbers those of one run, a few; a larger
 * one is not an input of ours */
#define MAX_INFO (1u << 20)

/* What the analysis saw of input src (below MAX_INFO), made on first sight. 0 or NOMEM. */
static int grow_info(struct memscope_leaks *l, uint32_t src)
{
	size_t cap = l->n_info, n = (size_t)src + 1;

	if (src < l->n_info)
		return 0;
	if (ms__grow_array(&l->info, &cap, n, sizeof(*l->info)))
		return MEMSCOPE_E_NOMEM;
	memset(l->info + l->n_info, 0, (cap - l->n_info) * sizeof(*l->info));
	l->n_info = cap;
	return 0;
}

/* What the analysis saw of input src: n_events, n_block_rows and the earliest timestamp. */
static int note_input(struct memscope_leaks *l, const struct memscope_event *ev)
{
	struct memscope_leaks_input_info *in;
	int64_t shift;
	uint64_t ts;

	if (ev->src >= MAX_INFO)
		return 0;
	if (grow_info(l, ev->src))
		return MEMSCOPE_E_NOMEM;
	in = &l->info[ev->src];
	/* time 0 of a file recorded far apart is its own (memscope_leaks_origin) */
	if (ms__clocks_feed(&l->clocks, ev, &shift))
		return MEMSCOPE_E_NOMEM;
	ts = clocks_time(ev->ts_ns, shift);
	if (!in->n_events++ || ts < in->first_ts_ns)
		in->first_ts_ns = ts;
	in->n_block_rows += ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE;
	return 0;
}

/* used after a pool row, into the min/max of the step window it falls in (formats/analyses.md
 * "Fluctuation") */
static int add_sample(struct memscope_leaks *l, const struct memscope_event *ev)
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

/* A number an attr of ev holds, or -1. */
static int64_t attr_num(const struct memscope_event *ev, uint32_t key)
{
	const struct memscope_attr *a = key ? memscope_event_attr(ev, key) : NULL;
	int64_t v;

	return a && !ms__parse_i64(a->val, a->val_len, &v) && v >= 0 ? v : -1;
}

/* An out-of-memory event of process p: its figures, and whether rows after it in time came
 * before it (blocks freed after it may have been judged without it). */
static int add_oom(struct memscope_leaks *l, const struct lproc *p, const struct memscope_event *ev)
{
	struct memscope_leaks_oom *o;

	if (ms__grow_array(&l->ooms, &l->cap_ooms, l->n_ooms + 1, sizeof(*l->ooms)))
		return MEMSCOPE_E_NOMEM;
	o = &l->ooms[l->n_ooms++];
	memset(o, 0, sizeof(*o));
	o->src = ev->src;
	o->pid = ev->pid;
	o->device = ev->device;
	o->ts_ns = ev->ts_ns;
	o->line = ev->line;
	o->requested = ev->flags & MEMSCOPE_EV_SIZE && ev->size >= 0
			       ? ev->size
			       : attr_num(ev, l->key_req_size);
	o->device_free = attr_num(ev, l->key_device_free);
	o->reserved = attr_num(ev, l->key_reserved);
	o->allocated = attr_num(ev, l->key_allocated);
	o->partial = memscope_pos_cmp(memscope_pos_of(ev), p->max_mem) < 0;
	return 0;
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

	if (ev->kind == MEMSCOPE_KIND_MALLOC && ev->pool < 64)
		p->pools_seen |= MEMSCOPE_POOL_BIT(ev->pool);
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
		if (ms__grow_array(&l->shadowed, &l->cap_shadowed, l->n_shadowed + 1,
			    sizeof(*l->shadowed)))
			return MEMSCOPE_E_NOMEM;
		l->shadowed[l->n_shadowed++] = out;
		return 0;
	case MEMSCOPE_PAIR_UNMATCHED_FREE:
		if (!l->stats.n_unmatched_free++) {
			l->stats.unmatched_src = ev->src;
			l->stats.unmatched_file = ev->file;
			l->stats.unmatched_line = ev->line;
		}
		if (ev->src < l->n_info)
			l->info[ev->src].n_unmatched_free++;
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
	if (note_input(l, ev) || !(p = proc_of(l, ev->src, ev->pid)))
		return MEMSCOPE_E_NOMEM;
	if (memscope_event_is_real(ev) && ev->ts_ns > p->last_real_ts)
		p->last_real_ts = ev->ts_ns;
	if ((l->o.kinds & MEMSCOPE_LEAK_MARK) && ev->device != MEMSCOPE_DEVICE_NONE &&
		!mgroup_of(l, ev->src, ev->pid, ev->device))
		return MEMSCOPE_E_NOMEM;
	if (ev->kind == MEMSCOPE_KIND_OOM_DETAIL && ev->subtype == MEMSCOPE_SUB_OOM_TRIGGER)
		return l->complete ? 0 : add_oom(l, p, ev);
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
	if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH &&
		(ev->subtype == MEMSCOPE_SUB_ATEN_START || ev->subtype == MEMSCOPE_SUB_ATB_START))
		return add_op(l, ev, 0);
	if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH &&
		(ev->subtype == MEMSCOPE_SUB_ATEN_END || ev->subtype == MEMSCOPE_SUB_ATB_END))
		return add_op(l, ev, 1);
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

	n = ms__varint_get(c + w->at, w->p->kernels.len - w->at, &dt);
	w->at += n > 0 ? (size_t)n : 0;
	n = ms__varint_get(c + w->at, w->p->kernels.len - w->at, &di);
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

static int kind_rank(unsigned kind)
{
	return kind == MEMSCOPE_LEAK_STEP ? 0 : kind == MEMSCOPE_LEAK_MARK ? 1 : 2;
}

/* ---- the op of each finding: the innermost ATen or ATB op open on the thread of its MALLOC, in
 * the thread's time order; an end closes the innermost open op of its name and the ops opened
 * inside it, an end with none of its name open is ignored ---- */

/* one row of a thread's op log */
struct oprow {
	struct memscope_pos at;
	uint64_t seq; /* its place in the log: rows of one position keep it */
	uint32_t name;
	int end;
};

/* A walk over a thread's op rows in time order: decoded as it goes when they came in order, else
 * decoded whole and sorted. */
struct owalk {
	const struct othread *t;
	size_t at;	  /* byte offset into t->log */
	uint64_t i;	  /* rows passed */
	struct oprow cur; /* row i (valid while i < t->n) */
	struct oprow *sorted;
};

static void owalk_decode(struct owalk *w, uint64_t seq)
{
	const unsigned char *c = (const unsigned char *)w->t->log.p;
	uint64_t v[3] = { 0, 0, 0 };
	int k, n;

	for (k = 0; k < 3; k++) {
		n = ms__varint_get(c + w->at, w->t->log.len - w->at, &v[k]);
		w->at += n > 0 ? (size_t)n : 0;
	}
	w->cur.at.ts_ns += (uint64_t)unzigzag(v[0]);
	w->cur.at.id += (uint64_t)unzigzag(v[1]);
	w->cur.name = (uint32_t)(v[2] >> 1);
	w->cur.end = (int)(v[2] & 1);
	w->cur.seq = seq;
}

static int cmp_oprow(const void *pa, const void *pb)
{
	const struct oprow *a = pa, *b = pb;
	int c = memscope_pos_cmp(a->at, b->at);

	return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

static int owalk_init(struct owalk *w, const struct othread *t)
{
	uint64_t i;

	memset(w, 0, sizeof(*w));
	w->t = t;
	if (!t->n)
		return 0;
	if (!t->unordered) {
		owalk_decode(w, 0);
		return 0;
	}
	if (t->n > SIZE_MAX / sizeof(*w->sorted) ||
		!(w->sorted = malloc(t->n * sizeof(*w->sorted))))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < t->n; i++) {
		owalk_decode(w, i);
		w->sorted[i] = w->cur;
	}
	qsort(w->sorted, t->n, sizeof(*w->sorted), cmp_oprow);
	w->cur = w->sorted[0];
	return 0;
}

static void owalk_next(struct owalk *w)
{
	if (++w->i >= w->t->n)
		return;
	if (w->sorted)
		w->cur = w->sorted[w->i];
	else
		owalk_decode(w, w->i);
}

static int cmp_leak_thread_alloc(const void *pa, const void *pb)
{
	const struct memscope_leak *a = pa, *b = pb;

	if (a->blk.src != b->blk.src)
		return a->blk.src < b->blk.src ? -1 : 1;
	if (a->blk.pid != b->blk.pid)
		return a->blk.pid < b->blk.pid ? -1 : 1;
	if (a->blk.tid != b->blk.tid)
		return a->blk.tid < b->blk.tid ? -1 : 1;
	return memscope_pos_cmp(alloc_pos(&a->blk), alloc_pos(&b->blk));
}

/* The op of every finding: the one its MALLOC names, else from its thread's op rows walked once in
 * time order with its findings. */
static int finish_ops(struct memscope_leaks *l)
{
	struct opnames s = { 0 };
	size_t i = 0, j;
	int rc = 0;

	for (i = 0; i < l->n_leaks; i++)
		l->leaks[i].op = l->leaks[i].blk.op;
	i = 0;
	if (!l->othreads)
		return 0;
	if (l->n_leaks > 1)
		qsort(l->leaks, l->n_leaks, sizeof(*l->leaks), cmp_leak_thread_alloc);
	while (i < l->n_leaks && !rc) {
		const struct memscope_block *b = &l->leaks[i].blk;
		struct othread *t;
		struct owalk w;
		struct tkey k;

		memset(&k, 0, sizeof(k));
		k.pid = b->pid;
		k.tid = b->tid;
		k.src = b->src;
		HASH_FIND(hh, l->othreads, &k, sizeof(k), t);
		for (j = i; j < l->n_leaks && l->leaks[j].blk.src == b->src &&
			    l->leaks[j].blk.pid == b->pid && l->leaks[j].blk.tid == b->tid;
			j++)
			;
		if (!t) {
			i = j;
			continue;
		}
		if ((rc = owalk_init(&w, t)))
			break;
		for (; i < j && !rc; i++) {
			struct memscope_pos at = alloc_pos(&l->leaks[i].blk);

			while (!rc && w.i < t->n && memscope_pos_cmp(w.cur.at, at) < 0) {
				if (!w.cur.end)
					rc = opnames_begin(&s, w.cur.name);
				else
					opnames_end(&s, w.cur.name);
				owalk_next(&w);
			}
			if (!l->leaks[i].blk.op)
				l->leaks[i].op = s.depth ? s.name[s.depth - 1] : 0;
		}
		free(w.sorted);
		opnames_clear(&s); /* the next thread starts with none open */
		i = j;
	}
	opnames_free(&s);
	return rc;
}

/* ---- what the reports show of each finding ---- */

/* A C stack with every frame cleaned (memscope_strtab_frame_text: not cached, raw frames of one
 * function differ by offset and address, and each distinct raw stack is cleaned once), interned
 * (cached by raw id). */
static int clean_stack(struct memscope_leaks *l, uint32_t raw, uint32_t *out)
{
	const uint32_t *fr;
	uint64_t a, unused;
	size_t n = 0, i;
	int rc = 0;

	*out = 0;
	if (!raw)
		return 0;
	if (ms__u64map_get(&l->clean_stacks, raw, &a, &unused)) {
		*out = (uint32_t)a;
		return 0;
	}
	if (!(fr = memscope_strtab_stack(l->st, raw, &n)) || !n)
		return ms__u64map_put(&l->clean_stacks, raw, 0, 0);
	if (ms__grow_array(&l->frames, &l->cap_frames, n, sizeof(*l->frames)))
		return MEMSCOPE_E_NOMEM;
	memcpy(l->frames, fr, n * sizeof(*fr));
	for (i = 0; i < n && !rc; i++)
		rc = memscope_strtab_frame_text(l->st, l->frames[i], &l->frames[i]);
	if (!rc)
		rc = memscope_strtab_intern_stack(l->st, l->frames, n, out);
	return rc ? rc : ms__u64map_put(&l->clean_stacks, raw, *out, 0);
}

/* Every finding's allocation step (all kinds) and cleaned C stack. */
static int finish_fields(struct memscope_leaks *l)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < l->n_leaks && !rc; i++) {
		struct memscope_leak *x = &l->leaks[i];
		const struct memscope_step_proc *p;

		if (x->kind != MEMSCOPE_LEAK_STEP) {
			uint64_t s = MEMSCOPE_STEP_NONE;

			/* before a process's first ProfilerStep: in no step */
			p = memscope_steps_proc(l->steps, x->blk.src, x->blk.pid);
			if (p && memscope_steps_source(p) != MEMSCOPE_STEPS_NONE)
				s = memscope_steps_at(p, alloc_pos(&x->blk));
			x->alloc_step = s == MEMSCOPE_STEP_NONE ? MEMSCOPE_LEAK_NO_STEP : s;
		}
		rc = clean_stack(l, x->blk.stack_c, &x->stack_c_text);
	}
	return rc;
}

/* ---- the report groups ---- */

/* what groups findings, by memscope_leaks_opts.group_by */
struct gkey {
	uint32_t src, kind, pool, py, c, owner, op, pad;
};

struct gentry {
	struct gkey key;
	size_t idx;
	UT_hash_handle hh;
};

/* The key of memscope_leaks_opts.group_by from the fields of a finding or a group (whose
 * fields in the key are every finding's); src 0 for the key across inputs. */
static void key_fields(const struct memscope_leaks *l, uint32_t src, unsigned kind, uint32_t pool,
	uint32_t py, uint32_t c, uint32_t owner, uint32_t op, struct gkey *k)
{
	memset(k, 0, sizeof(*k));
	k->src = src;
	k->kind = kind;
	k->pool = pool;
	switch (l->o.group_by) {
	case MEMSCOPE_LEAKS_BY_OP:
		k->op = op;
		break;
	case MEMSCOPE_LEAKS_BY_OWNER:
		k->owner = owner;
		break;
	default:
		k->py = py;
		k->c = c;
		/* a block without stacks is known by its owner tag and op */
		if (!k->py && !k->c) {
			k->owner = owner;
			k->op = op;
		}
		break;
	}
}

static void key_of(const struct memscope_leaks *l, const struct memscope_leak *x, struct gkey *k)
{
	key_fields(l, x->blk.src, x->kind, x->blk.pool, x->blk.stack_py, x->stack_c_text,
		x->blk.owner, x->op, k);
}

/* earlier in the reports' sense: lower process id, then earlier allocation */
static int leak_earlier(const struct memscope_leak *a, const struct memscope_leak *b)
{
	if (a->blk.pid != b->blk.pid)
		return a->blk.pid < b->blk.pid;
	return memscope_pos_cmp(alloc_pos(&a->blk), alloc_pos(&b->blk)) < 0;
}

struct granked {
	struct memscope_leak_group g;
	const struct memscope_leak *first; /* while ranking */
	size_t old;
};

static int cmp_granked(const void *pa, const void *pb)
{
	const struct granked *a = pa, *b = pb;

	if (a->g.src != b->g.src)
		return a->g.src < b->g.src ? -1 : 1;
	if (a->g.kind != b->g.kind)
		return kind_rank(a->g.kind) - kind_rank(b->g.kind);
	if (a->g.bytes != b->g.bytes)
		return a->g.bytes > b->g.bytes ? -1 : 1;
	if (a->g.n != b->g.n)
		return a->g.n > b->g.n ? -1 : 1;
	if (leak_earlier(a->first, b->first))
		return -1;
	if (leak_earlier(b->first, a->first))
		return 1;
	return a->old < b->old ? -1 : a->old > b->old;
}

/* Group every finding (key_of), rank the groups, set each finding's report_group. */
static int finish_groups(struct memscope_leaks *l)
{
	struct gentry *table = NULL, *e, *tmp;
	struct granked *g = NULL;
	size_t i, n = 0, cap = 0, *rank = NULL;
	int rc = MEMSCOPE_E_NOMEM;

	for (i = 0; i < l->n_leaks; i++) {
		struct memscope_leak *x = &l->leaks[i];
		struct gkey k;

		key_of(l, x, &k);
		HASH_FIND(hh, table, &k, sizeof(k), e);
		if (!e) {
			if (ms__grow_array(&g, &cap, n + 1, sizeof(*g)) ||
				!(e = malloc(sizeof(*e))))
				goto out;
			e->key = k;
			e->idx = n;
			memset(&g[n], 0, sizeof(g[n]));
			g[n].g.kind = x->kind;
			g[n].g.src = x->blk.src;
			g[n].g.pool = x->blk.pool;
			g[n].first = x;
			g[n].old = n;
			l->oom = 0;
			HASH_ADD(hh, table, key, sizeof(e->key), e);
			if (l->oom) {
				free(e);
				goto out;
			}
			n++;
		}
		x->report_group = (uint32_t)e->idx;
		g[e->idx].g.n++;
		add_bytes(&g[e->idx].g.bytes, x->blk.size);
		if (leak_earlier(x, g[e->idx].first))
			g[e->idx].first = x;
	}
	if (n) {
		if (!(rank = malloc(n * sizeof(*rank))) ||
			!(l->groups = malloc(n * sizeof(*l->groups))))
			goto out;
		qsort(g, n, sizeof(*g), cmp_granked);
		for (i = 0; i < n; i++) {
			rank[g[i].old] = i;
			l->groups[i] = g[i].g;
			l->groups[i].rank =
				i && g[i - 1].g.src == g[i].g.src && g[i - 1].g.kind == g[i].g.kind
					? l->groups[i - 1].rank + 1
					: 0;
		}
		for (i = 0; i < l->n_leaks; i++)
			l->leaks[i].report_group = (uint32_t)rank[l->leaks[i].report_group];
	}
	l->n_groups = n;
	rc = 0;
out:
	HASH_ITER(hh, table, e, tmp)
	{
		HASH_DELETE(hh, table, e);
		free(e);
	}
	free(g);
	free(rank);
	return rc;
}

/* a finding's place in memscope_leaks_members, while sorting */
struct member {
	uint32_t group;
	int32_t device;
	uint64_t step, pid;
	struct memscope_pos at;
	size_t idx;
};

static int cmp_member(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (memscope_pos_cmp(a->at, b->at))
		return memscope_pos_cmp(a->at, b->at);
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* After the report order is set: each group's findings, its first one and the fields of the
 * first; each input's counts. */
static int finish_members(struct memscope_leaks *l)
{
	struct member *m;
	size_t i, j;

	if (!l->n_leaks)
		return 0;
	if (!(m = malloc(l->n_leaks * sizeof(*m))) ||
		!(l->members = malloc(l->n_leaks * sizeof(*l->members)))) {
		free(m);
		return MEMSCOPE_E_NOMEM;
	}
	for (i = 0; i < l->n_leaks; i++) {
		const struct memscope_leak *x = &l->leaks[i];

		m[i] = (struct member){ x->report_group, x->blk.device, x->alloc_step, x->blk.pid,
			alloc_pos(&x->blk), i };
	}
	qsort(m, l->n_leaks, sizeof(*m), cmp_member);
	for (i = 0; i < l->n_leaks; i++)
		l->members[i] = m[i].idx;
	free(m);
	for (i = 0; i < l->n_leaks; i = j) {
		struct memscope_leak_group *g = &l->groups[l->leaks[l->members[i]].report_group];
		const struct memscope_leak *f = &l->leaks[l->members[i]];

		g->members_at = i;
		for (j = i; j < l->n_leaks && l->leaks[l->members[j]].report_group ==
						      l->leaks[l->members[i]].report_group;
			j++)
			if (leak_earlier(&l->leaks[l->members[j]], f))
				f = &l->leaks[l->members[j]];
		g->first = (size_t)(f - l->leaks);
		g->stack_py = f->blk.stack_py;
		g->stack_c = f->stack_c_text;
		g->owner = f->blk.owner;
		g->op = f->op;
		for (; i < j; i++) {
			const struct memscope_leak *x = &l->leaks[l->members[i]];
			struct memscope_leaks_input_info *in =
				x->blk.src < l->n_info ? &l->info[x->blk.src] : NULL;

			if (x->op != g->op)
				g->differ |= MEMSCOPE_LEAK_GROUP_OPS;
			if (x->blk.stack_py != g->stack_py || x->stack_c_text != g->stack_c)
				g->differ |= MEMSCOPE_LEAK_GROUP_STACKS;
			if (x->blk.owner != g->owner)
				g->differ |= MEMSCOPE_LEAK_GROUP_OWNERS;
			if (!in)
				continue;
			in->n_leaks[kind_rank(x->kind)]++;
			in->n_stacked += x->blk.stack_py || x->blk.stack_c;
		}
	}
	return 0;
}

struct aranked {
	struct memscope_leak_across a;
	size_t old;
};

static int cmp_aranked(const void *pa, const void *pb)
{
	const struct aranked *a = pa, *b = pb;

	if (a->a.kind != b->a.kind)
		return kind_rank(a->a.kind) - kind_rank(b->a.kind);
	if (a->a.bytes != b->a.bytes)
		return a->a.bytes > b->a.bytes ? -1 : 1;
	if (a->a.n_inputs != b->a.n_inputs)
		return a->a.n_inputs > b->a.n_inputs ? -1 : 1;
	if (a->a.n != b->a.n)
		return a->a.n > b->a.n ? -1 : 1;
	return a->old < b->old ? -1 : a->old > b->old;
}

/* After finish_members: the groups of every input merged by their key without the input (one hash
 * insert per group), ranked per kind; each group's across index. */
static int finish_across(struct memscope_leaks *l)
{
	struct gentry *table = NULL, *e, *tmp;
	struct aranked *a = NULL;
	size_t i, n = 0, *rank = NULL, *at = NULL;
	int rc = MEMSCOPE_E_NOMEM;

	if (!l->n_groups)
		return 0;
	/* at most one across group per group */
	if (!(a = malloc(l->n_groups * sizeof(*a))) ||
		!(l->across_groups = malloc(l->n_groups * sizeof(*l->across_groups))))
		goto out;
	for (i = 0; i < l->n_groups; i++) {
		struct memscope_leak_group *g = &l->groups[i];
		struct memscope_leak_across *x;
		struct gkey k;

		key_fields(l, 0, g->kind, g->pool, g->stack_py, g->stack_c, g->owner, g->op, &k);
		HASH_FIND(hh, table, &k, sizeof(k), e);
		if (!e) {
			if (!(e = malloc(sizeof(*e))))
				goto out;
			e->key = k;
			e->idx = n;
			l->oom = 0;
			HASH_ADD(hh, table, key, sizeof(e->key), e);
			if (l->oom) {
				free(e);
				goto out;
			}
			/* groups come by input: the first one seen is the lowest input's */
			a[n].old = n;
			a[n].a = (struct memscope_leak_across){ .kind = g->kind,
				.pool = g->pool,
				.stack_py = g->stack_py,
				.stack_c = g->stack_c,
				.owner = g->owner,
				.op = g->op,
				.min_src = g->src,
				.max_src = g->src,
				.min_bytes = g->bytes,
				.max_bytes = g->bytes };
			n++;
		}
		x = &a[e->idx].a;
		g->across = (uint32_t)e->idx;
		x->n_inputs++;
		x->n += g->n;
		if (__builtin_add_overflow(x->bytes, g->bytes, &x->bytes))
			x->bytes = MEMSCOPE_BYTES_OVERFLOW;
		x->differ |= g->differ;
		if (g->op != x->op)
			x->differ |= MEMSCOPE_LEAK_GROUP_OPS;
		if (g->stack_py != x->stack_py || g->stack_c != x->stack_c)
			x->differ |= MEMSCOPE_LEAK_GROUP_STACKS;
		if (g->owner != x->owner)
			x->differ |= MEMSCOPE_LEAK_GROUP_OWNERS;
		if (g->bytes < x->min_bytes) {
			x->min_bytes = g->bytes;
			x->min_src = g->src;
		}
		if (g->bytes > x->max_bytes) {
			x->max_bytes = g->bytes;
			x->max_src = g->src;
		}
	}
	if (!(rank = malloc(n * sizeof(*rank))) || !(at = malloc(n * sizeof(*at))) ||
		!(l->across = malloc(n * sizeof(*l->across))))
		goto out;
	qsort(a, n, sizeof(*a), cmp_aranked);
	for (i = 0; i < n; i++) {
		rank[a[i].old] = i;
		l->across[i] = a[i].a;
		l->across[i].rank =
			i && a[i - 1].a.kind == a[i].a.kind ? l->across[i - 1].rank + 1 : 0;
		l->across[i].groups_at = i ? l->across[i - 1].groups_at + a[i - 1].a.n_inputs : 0;
		at[i] = l->across[i].groups_at;
	}
	/* in group order, so by input within each */
	for (i = 0; i < l->n_groups; i++) {
		l->groups[i].across = (uint32_t)rank[l->groups[i].across];
		l->across_groups[at[l->groups[i].across]++] = i;
	}
	l->n_across = n;
	rc = 0;
out:
	HASH_ITER(hh, table, e, tmp)
	{
		HASH_DELETE(hh, table, e);
		free(e);
	}
	if (rc) {
		free(l->across);
		free(l->across_groups);
		l->across = NULL;
		l->across_groups = NULL;
	}
	free(a);
	free(rank);
	free(at);
	return rc;
}

static int note_steps(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	struct memscope_leaks *l = ctx;

	struct memscope_leaks_input_info *in;
	uint64_t n, s, k;
	struct memscope_pos end;

	(void)pid;
	if (src >= l->n_info || memscope_steps_source(p) == MEMSCOPE_STEPS_NONE)
		return 0;
	in = &l->info[src];
	in->has_steps = 1;
	n = memscope_steps_count(p);
	in->n_steps = n > in->n_steps ? n : in->n_steps;
	/* judge_step's rule for the first step it may judge: later ones reach no further */
	if (l->o.skip_steps < n &&
		(s = memscope_steps_number(p, l->o.skip_steps + 1)) != MEMSCOPE_STEP_NONE &&
		s + l->o.min_steps_alive >= s &&
		memscope_steps_end_from(p, s + l->o.min_steps_alive, &k, &end))
		in->step_room = 1;
	return 0;
}

/* by input, then time */
static int cmp_oom(const void *pa, const void *pb)
{
	const struct memscope_leaks_oom *a = pa, *b = pb;

	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* Each out-of-memory event's state from what the pass saw: its pools, its largest owner; then
 * the events in report order (the next pass keys its state by that order). */
static void finish_ooms(struct memscope_leaks *l)
{
	size_t i, k;

	for (i = 0; i < l->n_ooms; i++) {
		struct memscope_leaks_oom *o = &l->ooms[i];

		o->n_pools = 0;
		o->top_owner = o->top_stack_py = o->top_stack_c = 0;
		o->top_bytes = o->top_blocks = 0;
		if (l->complete)
			o->partial = 0;
		if (o->src < l->n_info)
			l->info[o->src].n_ooms++;
		if (i >= MEMSCOPE_LEAKS_OOM_STATES)
			continue;
		for (k = 0; k < 64 && o->n_pools < sizeof(o->pools) / sizeof(o->pools[0]); k++)
			if (l->oom_state[i].n[k])
				o->pools[o->n_pools++] = (struct memscope_leaks_total){ (uint16_t)k,
					l->oom_state[i].n[k], l->oom_state[i].bytes[k] };
	}
	for (k = 0; k <= l->oom_owners.mask && l->oom_owners.e; k++) {
		const struct u64map_entry *e = &l->oom_owners.e[k];
		struct memscope_leaks_oom *o;
		uint32_t id = (uint32_t)e->key;
		uint64_t seen = 0;

		if (!e->used || (e->key >> 40) >= l->n_ooms)
			continue;
		o = &l->ooms[e->key >> 40];
		for (i = 0; i < o->n_pools; i++)
			seen |= o->pools[i].pool < 64 ? MEMSCOPE_POOL_BIT(o->pools[i].pool) : 0;
		if ((unsigned)(e->key >> 36 & 0xf) !=
			(seen & MEMSCOPE_POOLS_INNER ? OOM_UNNESTED : OOM_ALL))
			continue;
		if (e->a < o->top_bytes || (e->a == o->top_bytes && o->top_blocks))
			continue;
		o->top_bytes = e->a;
		o->top_blocks = e->b;
		o->top_owner = (e->key >> 32 & 0xf) == OOM_BY_OWNER ? id : 0;
		o->top_stack_py = (e->key >> 32 & 0xf) == OOM_BY_PY ? id : 0;
		o->top_stack_c = (e->key >> 32 & 0xf) == OOM_BY_C ? id : 0;
	}
	if (!l->complete && l->n_ooms > 1)
		qsort(l->ooms, l->n_ooms, sizeof(*l->ooms), cmp_oom);
}

/* the report order of memscope_leaks_get */
static int cmp_report(const void *pa, const void *pb)
{
	const struct memscope_leak *a = pa, *b = pb;
	const struct memscope_block *x = &a->blk, *y = &b->blk;

	if (a->kind != b->kind)
		return kind_rank(a->kind) - kind_rank(b->kind);
	if (a->kind == MEMSCOPE_LEAK_MARK && a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->kind == MEMSCOPE_LEAK_EXIT && a->report_group != b->report_group)
		return a->report_group < b->report_group ? -1 : 1;
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
	size_t i;
	int rc;

	if (!l->complete && !l->late && memscope_steps_out_of_order(l->steps, &src, &line))
		set_late(l, src, line, LATE_BOUNDARY);
	/* blocks freed before an out-of-memory row that came after them (a snapshot's oom
	 * entries follow its trace) were judged without it: the second pass knows every one */
	for (i = 0; !l->complete && i < l->n_ooms && i < MEMSCOPE_LEAKS_OOM_STATES; i++)
		if (l->ooms[i].partial)
			set_late(l, l->ooms[i].src, l->ooms[i].line,
				"out-of-memory row after rows later than it");
	if ((rc = memscope_blocks_foreach_live(l->blocks, on_live, l)) ||
		(rc = finish_shadowed(l)) || (rc = kernel_indexes(l)) || (rc = finish_fluct(l)) ||
		(rc = finish_marks(l)) || (rc = finish_ops(l)) || (rc = finish_fields(l)) ||
		(rc = finish_groups(l)))
		return rc;
	if (l->n_leaks > 1)
		qsort(l->leaks, l->n_leaks, sizeof(*l->leaks), cmp_report);
	if ((rc = finish_members(l)) || (rc = finish_across(l)))
		return rc;
	finish_ooms(l);
	return memscope_steps_foreach(l->steps, note_steps, l);
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

const size_t *memscope_leaks_members(const struct memscope_leaks *l, size_t *n)
{
	*n = l->members ? l->n_leaks : 0;
	return l->members;
}

const struct memscope_leak_across *memscope_leaks_across(const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_across;
	return l->across;
}

const size_t *memscope_leaks_across_groups(const struct memscope_leaks *l, size_t *n)
{
	*n = l->across ? l->n_groups : 0;
	return l->across_groups;
}

const struct memscope_leaks_input_info *memscope_leaks_input(
	const struct memscope_leaks *l, uint32_t src)
{
	static const struct memscope_leaks_input_info none;

	return src < l->n_info ? &l->info[src] : &none;
}

uint64_t memscope_leaks_origin(const struct memscope_leaks *l, uint32_t src, uint32_t file)
{
	return memscope_leaks_input(l, src)->first_ts_ns +
	       (uint64_t)ms__clocks_shift(&l->clocks, src, file);
}

int memscope_leaks_input_end(struct memscope_leaks *l, uint32_t src, enum memscope_format format,
	const struct memscope_read_stats *stats)
{
	enum memscope_leaks_end end = MEMSCOPE_LEAKS_END_EXIT;

	if (src >= MAX_INFO)
		return 0;
	if (grow_info(l, src))
		return MEMSCOPE_E_NOMEM;
	switch (format) {
	case MEMSCOPE_FORMAT_MSPROF_CSV:
	case MEMSCOPE_FORMAT_MSPROF_JSON:
	case MEMSCOPE_FORMAT_PROFILER:
	case MEMSCOPE_FORMAT_NSYS:
		end = MEMSCOPE_LEAKS_END_PROFILE;
		break;
	case MEMSCOPE_FORMAT_TORCH_SNAPSHOT:
		end = MEMSCOPE_LEAKS_END_SNAPSHOT;
		break;
	case MEMSCOPE_FORMAT_CAPTURE: /* read to its cut (--lenient): its program went on */
		if (stats && stats->cut.code)
			end = MEMSCOPE_LEAKS_END_STOPPED;
		break;
	default:
		break;
	}
	l->info[src].end = end;
	return 0;
}

enum memscope_leaks_end memscope_leaks_end_of(const struct memscope_leaks *l, uint32_t src)
{
	enum memscope_leaks_end end = MEMSCOPE_LEAKS_END_EXIT;
	size_t i;
	int any = 0;

	if (src != MEMSCOPE_LEAKS_ALL_INPUTS)
		return memscope_leaks_input(l, src)->end;
	for (i = 0; i < l->n_info; i++) {
		if (!l->info[i].n_events)
			continue;
		if (any && l->info[i].end != end)
			return MEMSCOPE_LEAKS_END_MIXED;
		end = l->info[i].end;
		any = 1;
	}
	return end;
}

const char *memscope_leaks_end_text(enum memscope_leaks_end end)
{
	switch (end) {
	case MEMSCOPE_LEAKS_END_PROFILE:
		return "alive at the end of the profile";
	case MEMSCOPE_LEAKS_END_SNAPSHOT:
		return "alive at the end of the snapshot";
	case MEMSCOPE_LEAKS_END_STOPPED:
		return "alive when the recording stopped";
	case MEMSCOPE_LEAKS_END_MIXED:
		return "alive at the end of each input";
	default:
		return "unreleased at exit";
	}
}

const char *memscope_leaks_end_name(enum memscope_leaks_end end)
{
	switch (end) {
	case MEMSCOPE_LEAKS_END_PROFILE:
		return "profile";
	case MEMSCOPE_LEAKS_END_SNAPSHOT:
		return "snapshot";
	case MEMSCOPE_LEAKS_END_STOPPED:
		return "recording_stopped";
	case MEMSCOPE_LEAKS_END_MIXED:
		return "mixed";
	default:
		return "exit";
	}
}

enum memscope_leaks_unchecked memscope_leaks_checked(
	const struct memscope_leaks *l, unsigned kind, uint32_t src)
{
	const struct memscope_leaks_input_info *in = memscope_leaks_input(l, src);
	size_t i;

	if (!(l->o.kinds & kind))
		return MEMSCOPE_LEAKS_NOT_ASKED;
	if (!in->n_block_rows)
		return MEMSCOPE_LEAKS_NO_BLOCKS;
	if (kind == MEMSCOPE_LEAK_STEP && !in->has_steps)
		return MEMSCOPE_LEAKS_NO_STEPS;
	if (kind == MEMSCOPE_LEAK_STEP && !in->step_room)
		return MEMSCOPE_LEAKS_FEW_STEPS;
	if (kind != MEMSCOPE_LEAK_MARK)
		return MEMSCOPE_LEAKS_CHECKED;
	for (i = 0; i < l->n_mg_out; i++)
		if (l->mg_out[i].src == src && l->mg_out[i].checked)
			return MEMSCOPE_LEAKS_CHECKED;
	return MEMSCOPE_LEAKS_NO_MARKS;
}

const char *memscope_leaks_unchecked_text(enum memscope_leaks_unchecked why)
{
	switch (why) {
	case MEMSCOPE_LEAKS_NOT_ASKED:
		return "not asked for";
	case MEMSCOPE_LEAKS_NO_BLOCKS:
		return "no allocations or frees";
	case MEMSCOPE_LEAKS_NO_STEPS:
		return "no steps: neither mstx \"step start\" ranges, SYSTEM STEP rows nor "
		       "ProfilerStep#N ops";
	case MEMSCOPE_LEAKS_NO_MARKS:
		return "no device has the three Mark rows";
	case MEMSCOPE_LEAKS_FEW_STEPS:
		return "too few steps: a step leak needs a step after the --skip-steps ones and "
		       "an ended step --min-steps-alive after it";
	default:
		return "";
	}
}

const char *memscope_leaks_unchecked_say(
	const struct memscope_leaks *l, unsigned kind, uint32_t src, char *buf, size_t size)
{
	enum memscope_leaks_unchecked why = memscope_leaks_checked(l, kind, src);
	const struct memscope_leaks_input_info *in = memscope_leaks_input(l, src);
	uint64_t need = l->o.skip_steps + 1 + l->o.min_steps_alive;

	if (!size)
		return buf;
	if (why != MEMSCOPE_LEAKS_FEW_STEPS)
		snprintf(buf, size, "%s", memscope_leaks_unchecked_text(why));
	else if (need > l->o.skip_steps && need > l->o.min_steps_alive)
		snprintf(buf, size,
			"%" PRIu64 " step%s: a step leak needs %" PRIu64 " (--skip-steps %" PRIu64
			", then a step and one ended --min-steps-alive %" PRIu64 " later)",
			in->n_steps, in->n_steps == 1 ? "" : "s", need, l->o.skip_steps,
			l->o.min_steps_alive);
	else
		snprintf(buf, size, "%s", memscope_leaks_unchecked_text(why));
	return buf;
}

size_t memscope_leaks_unchecked_inputs(const struct memscope_leaks *l, unsigned kind,
	size_t n_inputs, enum memscope_leaks_unchecked *why)
{
	size_t i, n = 0;

	if (why)
		*why = MEMSCOPE_LEAKS_CHECKED;
	for (i = 0; i < n_inputs && i < UINT32_MAX; i++) {
		enum memscope_leaks_unchecked w = memscope_leaks_checked(l, kind, (uint32_t)i);

		if (w == MEMSCOPE_LEAKS_CHECKED || w == MEMSCOPE_LEAKS_NOT_ASKED)
			continue;
		if (!n++ && why)
			*why = w;
	}
	return n;
}

const struct memscope_leaks_oom *memscope_leaks_ooms(const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_ooms;
	return l->ooms;
}

/* The first group of input src or a later one (they come by input). */
static size_t groups_from(const struct memscope_leaks *l, uint32_t src)
{
	size_t lo = 0, hi = l->n_groups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->groups[mid].src < src)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t memscope_leaks_totals(const struct memscope_leaks *l, unsigned kind, uint32_t src,
	struct memscope_leaks_total *out)
{
	uint64_t n[MEMSCOPE_LEAKS_MAX_POOLS] = { 0 }, bytes[MEMSCOPE_LEAKS_MAX_POOLS] = { 0 };
	size_t i, k = 0, lo = 0, hi = l->n_groups;

	/* the groups of src are one run (by input first) */
	if (src != MEMSCOPE_LEAKS_ALL_INPUTS)
		lo = groups_from(l, src);
	for (i = lo; i < hi; i++) {
		const struct memscope_leak_group *g = &l->groups[i];

		if (src != MEMSCOPE_LEAKS_ALL_INPUTS && g->src != src)
			break;
		if (g->kind != kind || g->pool >= MEMSCOPE_LEAKS_MAX_POOLS)
			continue;
		n[g->pool] += g->n;
		if (__builtin_add_overflow(bytes[g->pool], g->bytes, &bytes[g->pool]))
			bytes[g->pool] = MEMSCOPE_BYTES_OVERFLOW;
	}
	for (i = 0; i < MEMSCOPE_LEAKS_MAX_POOLS; i++)
		if (n[i])
			out[k++] = (struct memscope_leaks_total){ (uint16_t)i, n[i], bytes[i] };
	return k;
}

int memscope_leaks_nested(const struct memscope_leaks *l, unsigned kind, uint32_t src)
{
	uint64_t pools = 0;
	size_t i = 0;

	/* the groups come by input: one input's pools at a time, src's run found by bisection */
	if (src != MEMSCOPE_LEAKS_ALL_INPUTS)
		i = groups_from(l, src);
	for (; i < l->n_groups; i++) {
		const struct memscope_leak_group *g = &l->groups[i];

		if (src != MEMSCOPE_LEAKS_ALL_INPUTS && g->src != src)
			break;
		if (i && g->src != l->groups[i - 1].src) {
			if (memscope_pools_nested(pools))
				break;
			pools = 0;
		}
		if (g->kind == kind && g->pool < 64)
			pools |= MEMSCOPE_POOL_BIT(g->pool);
	}
	return memscope_pools_nested(pools);
}

const char *memscope_leaks_totals_text(
	char *buf, size_t size, const struct memscope_leaks_total *t, size_t n, int nested)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];
	uint64_t pools = 0, sum = 0;
	size_t i, at = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		pools |= t[i].pool < 64 ? MEMSCOPE_POOL_BIT(t[i].pool) : 0;
		if (__builtin_add_overflow(sum, t[i].bytes, &sum))
			sum = MEMSCOPE_BYTES_OVERFLOW;
	}
	if (!n) {
		ms__text_put(buf, size, &at, "%s", memscope_bytes_text(b, sizeof(b), 0));
		return buf;
	}
	if (n == 1) {
		ms__text_put(buf, size, &at, "%s %s", memscope_subtype_name(t[0].pool),
			memscope_bytes_text(b, sizeof(b), t[0].bytes));
		return buf;
	}
	nested = nested && memscope_pools_nested(pools);
	if (!nested)
		ms__text_put(buf, size, &at, "%s: ", memscope_bytes_text(b, sizeof(b), sum));
	for (i = 0; i < n; i++)
		ms__text_put(buf, size, &at, "%s%s %s in %" PRIu64 " block%s", i ? ", " : "",
			memscope_subtype_name(t[i].pool),
			memscope_bytes_text(b, sizeof(b), t[i].bytes), t[i].n,
			t[i].n == 1 ? "" : "s");
	if (nested) {
		int k = 0;

		ms__text_put(buf, size, &at, ", not summed: ");
		for (i = 0; i < n; i++)
			if (t[i].pool < 64 && (MEMSCOPE_POOL_BIT(t[i].pool) & MEMSCOPE_POOLS_INNER))
				ms__text_put(buf, size, &at, "%s%s", k++ ? ", " : "",
					memscope_subtype_name(t[i].pool));
		ms__text_put(buf, size, &at, " %s inside %s", k > 1 ? "lie" : "lies",
			memscope_pools_outer_name(pools));
	}
	return buf;
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
	const struct memscope_leaks *l = self;

	*why = l->late_why;
	return memscope_leaks_needs_rewind(self, src, line);
}

static int leaks_rewind(void *self)
{
	return memscope_leaks_rewind(self);
}

static int leaks_input_end(void *self, uint32_t src, const struct memscope_source *s)
{
	return memscope_leaks_input_end(
		self, src, memscope_source_format(s), memscope_source_stats(s));
}

/* the profiler's samples and static plans say nothing of blocks, steps or marks */
ANALYSIS_TABLE(memscope_leaks, "leaks", .again = leaks_again, .rewind = leaks_rewind,
	.input_end = leaks_input_end,
	.skip_kinds = 1u << MEMSCOPE_KIND_COUNTER | 1u << MEMSCOPE_KIND_PLAN);
