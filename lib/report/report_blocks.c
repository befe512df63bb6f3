/* memscope-report's own small analysis of one input: the lives of the largest blocks of each
 * (process, device, pool), the highest pool total the rows carried, and the bytes allocated per
 * call stack (the "where" flame graph). */
#include <stdlib.h>
#include <string.h>

#include "../analyses/opnames.h"
#include "report_impl.h"

struct ms__rthread {
	uint64_t pid, tid;
	struct opnames ops;
};

struct ms__rblocks *ms__rblocks_new(struct memscope_strtab *st)
{
	struct ms__rblocks *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->st = st;
	if (!(b->live = memscope_blocks_new(st))) {
		free(b);
		return NULL;
	}
	return b;
}

void ms__rblocks_free(struct ms__rblocks *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n_keys; i++)
		free(b->keys[i].heap);
	free(b->keys);
	for (i = 0; i < b->n_thr; i++)
		opnames_free(&b->thr[i].ops);
	free(b->thr);
	ms__u64map_free(&b->threads);
	memscope_blocks_free(b->live);
	ms__clocks_free(&b->clocks);
	ms__u64map_free(&b->stacks);
	free(b);
}

/* The key of (pid, device, pool), made when new; NULL past MS__REPORT_MAX_KEYS or on OOM. */
static struct ms__rblocks_key *key_of(
	struct ms__rblocks *b, uint64_t pid, int32_t device, uint16_t pool)
{
	struct ms__rblocks_key *k;
	size_t i;

	if (b->last_key < b->n_keys) {
		k = &b->keys[b->last_key];
		if (k->pid == pid && k->device == device && k->pool == pool)
			return k;
	}
	for (i = 0; i < b->n_keys; i++)
		if (b->keys[i].pid == pid && b->keys[i].device == device && b->keys[i].pool == pool)
			return &b->keys[b->last_key = i];
	if (b->n_keys >= MS__REPORT_MAX_KEYS ||
		ms__grow_array(&b->keys, &b->cap_keys, b->n_keys + 1, sizeof(*b->keys)))
		return NULL;
	k = &b->keys[b->last_key = b->n_keys++];
	k->pid = pid, k->device = device, k->pool = pool;
	return k;
}

/* Restore the min-heap of k from place i down. */
static void sift_down(struct ms__rblocks_key *k, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct ms__rblock t;

		if (l < k->n && k->heap[l].bytes < k->heap[m].bytes)
			m = l;
		if (l + 1 < k->n && k->heap[l + 1].bytes < k->heap[m].bytes)
			m = l + 1;
		if (m == i)
			return;
		t = k->heap[i], k->heap[i] = k->heap[m], k->heap[m] = t;
		i = m;
	}
}

/* Offer a block that ended (live: still alive at the end) to its key's largest. 0 or NOMEM. */
static int offer(struct ms__rblocks *b, const struct memscope_block *blk, int live)
{
	struct ms__rblocks_key *k = key_of(b, blk->pid, blk->device, blk->pool);
	struct ms__rblock rb = { blk->alloc_ts_ns, live ? 0 : blk->free_ts_ns, blk->size, blk->ptr,
		blk->alloc_id, blk->pid, blk->device, blk->pool,
		blk->op ? blk->op : (uint32_t)blk->tag, blk->owner, blk->stack_py, blk->stack_c };
	size_t i;

	if (!k)
		return b->n_keys >= MS__REPORT_MAX_KEYS ? 0 : MEMSCOPE_E_NOMEM;
	if (!k->heap && !(k->heap = malloc(MS__REPORT_MAX_BLOCKS * sizeof(*k->heap))))
		return MEMSCOPE_E_NOMEM;
	if (k->n == MS__REPORT_MAX_BLOCKS) {
		if (rb.bytes <= k->heap[0].bytes)
			return 0;
		k->heap[0] = rb;
		sift_down(k, 0);
		return 0;
	}
	for (i = k->n++; i && k->heap[(i - 1) / 2].bytes > rb.bytes; i = (i - 1) / 2)
		k->heap[i] = k->heap[(i - 1) / 2];
	k->heap[i] = rb;
	return 0;
}

/* A row's pool totals (reserved, allocated after it): the highest reserved kept. */
static int totals(struct ms__rblocks *b, const struct memscope_event *ev)
{
	struct ms__rblocks_key *k;

	if ((ev->flags & (MEMSCOPE_EV_TOTAL | MEMSCOPE_EV_USED)) !=
		(MEMSCOPE_EV_TOTAL | MEMSCOPE_EV_USED))
		return 0;
	if (!(k = key_of(b, ev->pid, ev->device, ev->pool)))
		return b->n_keys >= MS__REPORT_MAX_KEYS ? 0 : MEMSCOPE_E_NOMEM;
	if (!k->has_total || ev->total > k->total) {
		k->has_total = 1;
		k->total = ev->total, k->used = ev->used;
		k->total_ts_ns = ev->ts_ns;
	}
	return 0;
}

/* Bytes allocated by a MALLOC with a call stack, by its pair of stacks. 0 or NOMEM. */
static int stacked(struct ms__rblocks *b, const struct memscope_event *ev)
{
	uint64_t key = (uint64_t)ev->stack_py << 32 | ev->stack_c, bytes = 0, n = 0;

	if (!ev->stack_py && !ev->stack_c)
		return 0;
	b->has_stacks = 1;
	ms__u64map_get(&b->stacks, key, &bytes, &n);
	bytes += ev->size > 0 ? (uint64_t)ev->size : 0;
	return ms__u64map_put(&b->stacks, key, bytes, n + 1);
}

/* The ops open on ev's thread; NULL when it has none yet (create 0) or on OOM. */
static struct opnames *thread_ops(
	struct ms__rblocks *b, const struct memscope_event *ev, int create)
{
	uint64_t key = ev->pid * UINT64_C(0x9E3779B97F4A7C15) ^ ev->tid, at;
	size_t i;

	if (!create)
		return ms__u64map_get(&b->threads, key, &at, NULL) ? &b->thr[at].ops : NULL;
	if (ms__u64map_slot(
		    &b->threads, key, &b->thr, &b->n_thr, &b->cap_thr, sizeof(*b->thr), &i) < 0)
		return NULL;
	b->thr[i].pid = ev->pid, b->thr[i].tid = ev->tid;
	return &b->thr[i].ops;
}

/* An ATen or ATB op row: opened or closed on its thread. 0 or NOMEM. */
static int op_row(struct ms__rblocks *b, const struct memscope_event *ev)
{
	int start = ev->subtype == MEMSCOPE_SUB_ATEN_START || ev->subtype == MEMSCOPE_SUB_ATB_START;
	struct opnames *ops;

	if (!start && ev->subtype != MEMSCOPE_SUB_ATEN_END && ev->subtype != MEMSCOPE_SUB_ATB_END)
		return 0;
	if (!(ops = thread_ops(b, ev, start)))
		return start ? MEMSCOPE_E_NOMEM : 0;
	if (start)
		return opnames_begin(ops, ev->name);
	opnames_end(ops, ev->name);
	return 0;
}

/* The op of a MALLOC just paired: the innermost op open on its thread, as its block's tag. */
static void tag_op(struct ms__rblocks *b, const struct memscope_event *ev)
{
	struct opnames *ops = memscope_event_op(ev) ? NULL : thread_ops(b, ev, 0);

	if (ops && ops->depth)
		memscope_blocks_tag(b->live, ops->name[ops->depth - 1]);
}

/* The outer pool a pool is carved out of: CUDA's segments for the caching allocator's blocks,
 * HAL for the others. */
static uint16_t outer_of(uint16_t pool)
{
	return pool == MEMSCOPE_SUB_CUDA_CACHING ? MEMSCOPE_SUB_CUDA : MEMSCOPE_SUB_HAL;
}

/* The live bytes of the pools a pairing (rc) changed, and an inner pool's highest with its outer
 * pool's then. 0 or NOMEM. */
static int live_bytes(struct ms__rblocks *b, const struct memscope_event *ev, int rc,
	const struct memscope_block *blk)
{
	struct ms__rblocks_key *k;
	const struct ms__rblocks_key *outer;

	if (rc == MEMSCOPE_PAIR_FREE || rc == MEMSCOPE_PAIR_SHADOW_FREE ||
		rc == MEMSCOPE_PAIR_REPLACED) {
		if (!(k = key_of(b, blk->pid, blk->device, blk->pool)))
			return b->n_keys >= MS__REPORT_MAX_KEYS ? 0 : MEMSCOPE_E_NOMEM;
		k->live -= blk->size > 0 ? blk->size : 0;
	}
	if (rc != MEMSCOPE_PAIR_ALLOC && rc != MEMSCOPE_PAIR_REPLACED)
		return 0;
	if (!(k = key_of(b, ev->pid, ev->device, ev->pool)))
		return b->n_keys >= MS__REPORT_MAX_KEYS ? 0 : MEMSCOPE_E_NOMEM;
	if (ev->size > 0 && __builtin_add_overflow(k->live, ev->size, &k->live))
		k->live = INT64_MAX; /* held at its highest, as the other byte figures */
	if (ev->pool >= 64 || !(MEMSCOPE_POOL_BIT(ev->pool) & MEMSCOPE_POOLS_INNER) ||
		(k->has_outer && k->live <= k->inner_max) ||
		!(outer = ms__rblocks_key(b, ev->pid, ev->device, outer_of(ev->pool))))
		return 0;
	k->has_outer = 1;
	k->inner_max = k->live, k->outer_at = outer->live;
	k->inner_max_ts_ns = ev->ts_ns;
	return 0;
}

static int rblocks_feed(void *self, const struct memscope_event *ev)
{
	struct ms__rblocks *b = self;
	struct memscope_event tmp;
	struct memscope_block blk;
	int rc;

	if (!(ev = ms__clocks_event(&b->clocks, ev, &tmp, NULL)))
		return MEMSCOPE_E_NOMEM;
	if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH)
		return op_row(b, ev);
	if (ev->kind != MEMSCOPE_KIND_MALLOC && ev->kind != MEMSCOPE_KIND_FREE)
		return 0;
	if ((rc = totals(b, ev)))
		return rc;
	if (ev->kind == MEMSCOPE_KIND_MALLOC && (rc = stacked(b, ev)))
		return rc;
	rc = memscope_blocks_feed(b->live, ev, &blk);
	if (rc == MEMSCOPE_PAIR_ALLOC || rc == MEMSCOPE_PAIR_REPLACED)
		tag_op(b, ev);
	if (rc > 0 && live_bytes(b, ev, rc, &blk))
		return MEMSCOPE_E_NOMEM;
	if (rc == MEMSCOPE_PAIR_FREE || rc == MEMSCOPE_PAIR_REPLACED)
		return offer(b, &blk, 0);
	if (rc == MEMSCOPE_PAIR_SHADOW_FREE)
		return offer(b, &blk, 1);
	return rc < 0 ? rc : 0;
}

static int offer_live(void *ctx, const struct memscope_block *blk)
{
	return offer(ctx, blk, 1);
}

static int cmp_bytes_desc(const void *pa, const void *pb)
{
	const struct ms__rblock *a = pa, *b = pb;
	int c = MS__CMP(b->bytes, a->bytes);

	return c ? c : MS__CMP(a->from_ns, b->from_ns);
}

/* A live block's address range, for the free gaps of segments at the end. */
struct span {
	uint64_t lo, hi; /* [lo, hi) */
	uint64_t pid;
	int32_t device;
	uint16_t pool;
};

struct spans {
	struct span *s;
	size_t n, cap;
};

static int span_live(void *ctx, const struct memscope_block *blk)
{
	struct spans *sp = ctx;
	uint64_t bit = blk->pool < 64 ? MEMSCOPE_POOL_BIT(blk->pool) : 0;

	if ((blk->flags & MEMSCOPE_BLOCK_NO_PTR) || blk->size <= 0 ||
		!(bit & (MEMSCOPE_POOLS_OUTER | MEMSCOPE_POOLS_INNER)))
		return 0;
	if (ms__grow_array(&sp->s, &sp->cap, sp->n + 1, sizeof(*sp->s)))
		return MEMSCOPE_E_NOMEM;
	sp->s[sp->n++] = (struct span){ blk->ptr, blk->ptr + (uint64_t)blk->size, blk->pid,
		blk->device, blk->pool };
	return 0;
}

/* outer blocks before the inner ones that start where they start */
static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;
	int c = MS__CMP(a->pid, b->pid);

	c = c ? c : MS__CMP(a->device, b->device);
	c = c ? c : MS__CMP(a->lo, b->lo);
	return c ? c : MS__CMP(b->hi, a->hi);
}

/* Each inner pool's largest free range of a segment (an outer block) at the end. */
static int free_gaps(struct ms__rblocks *b)
{
	struct spans sp = { 0 };
	size_t i, seg = SIZE_MAX;
	uint64_t at = 0;
	int rc = memscope_blocks_foreach_live(b->live, span_live, &sp);

	for (i = 0; i < b->n_keys; i++)
		b->keys[i].gap_at_end = -1;
	ms__qsort(sp.s, sp.n, sizeof(*sp.s), cmp_span);
	for (i = 0; !rc && i <= sp.n; i++) {
		const struct span *s = i < sp.n ? &sp.s[i] : NULL;
		int outer =
			s && s->pool < 64 && (MEMSCOPE_POOL_BIT(s->pool) & MEMSCOPE_POOLS_OUTER);
		int inside = s && seg < sp.n && s->pid == sp.s[seg].pid &&
			     s->device == sp.s[seg].device && s->lo < sp.s[seg].hi;
		struct ms__rblocks_key *k;

		if (seg < sp.n && (!inside || outer)) { /* the segment's last free range */
			for (k = b->keys; k < b->keys + b->n_keys; k++)
				if (k->pid == sp.s[seg].pid && k->device == sp.s[seg].device &&
					k->pool < 64 &&
					(MEMSCOPE_POOL_BIT(k->pool) & MEMSCOPE_POOLS_INNER) &&
					outer_of(k->pool) == sp.s[seg].pool &&
					(int64_t)(sp.s[seg].hi - at) > k->gap_at_end)
					k->gap_at_end = (int64_t)(sp.s[seg].hi - at);
			seg = SIZE_MAX;
		}
		if (outer)
			seg = i, at = s->lo;
		else if (inside) {
			if (s->lo > at && (k = key_of(b, s->pid, s->device, s->pool)) &&
				(int64_t)(s->lo - at) > k->gap_at_end)
				k->gap_at_end = (int64_t)(s->lo - at);
			at = s->hi > at ? s->hi : at;
		}
	}
	free(sp.s);
	return rc;
}

static int rblocks_finish(void *self)
{
	struct ms__rblocks *b = self;
	size_t i;
	int rc = memscope_blocks_foreach_live(b->live, offer_live, b);

	if (!rc)
		rc = free_gaps(b);

	for (i = 0; i < b->n_keys; i++)
		ms__qsort(b->keys[i].heap, b->keys[i].n, sizeof(*b->keys[i].heap), cmp_bytes_desc);
	memscope_blocks_free(
		b->live); /* its blocks are offered: the live ones are no longer needed */
	b->live = NULL;
	return rc;
}

static void *rblocks_create(struct memscope_strtab *st)
{
	return ms__rblocks_new(st);
}

static void rblocks_destroy(void *self)
{
	ms__rblocks_free(self);
}

const struct memscope_analysis ms__rblocks_analysis = {
	.name = "report_blocks",
	.create = rblocks_create,
	.destroy = rblocks_destroy,
	.feed = rblocks_feed,
	.finish = rblocks_finish,
};

const struct ms__rblocks_key *ms__rblocks_key(
	const struct ms__rblocks *b, uint64_t pid, int32_t device, uint16_t pool)
{
	size_t i;

	for (i = 0; i < b->n_keys; i++)
		if (b->keys[i].pid == pid && b->keys[i].device == device && b->keys[i].pool == pool)
			return &b->keys[i];
	return NULL;
}
