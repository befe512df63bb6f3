/* The live-block map: pairing MALLOC with FREE into blocks (memscope/blocks.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "memscope/blocks.h"
#include "memscope/strtab.h"

/* uthash must not exit on OOM: the failing insert sets b->oom and is undone by uthash. */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (b->oom = 1)
#include <uthash.h>

struct id_key {
	uint64_t pid;
	uint64_t alloc_id;
	uint32_t src;
	uint32_t pad;
};

struct ptr_key {
	uint64_t pid;
	uint64_t ptr;
	uint32_t src;
	uint32_t subtype;
};

struct blk {
	struct memscope_block b;
	union {
		struct id_key id;
		struct ptr_key ptr;
	} key;
	int by_id;
	uint64_t seq;
	struct blk *next_free;
	UT_hash_handle hh;
};

struct memscope_blocks {
	struct memscope_strtab *st;
	struct blk *by_id, *by_ptr, *free_list;
	struct blk *last; /* allocated by the last feed, for memscope_blocks_tag */
	/* keyed by id, the block added last and the largest id added: a FREE written right after
	 * its MALLOC (the profiler's rows, the reference's order) and a MALLOC of a new serial need
	 * no hash lookup */
	struct blk *recent;
	uint64_t max_id;
	struct arena arena;
	uint64_t seq;
	int oom;
	struct memscope_blocks_stats stats;
};

struct memscope_blocks *memscope_blocks_new(struct memscope_strtab *st)
{
	struct memscope_blocks *b = calloc(1, sizeof(struct memscope_blocks));

	if (b)
		b->st = st;
	return b;
}

void memscope_blocks_free(struct memscope_blocks *b)
{
	if (!b)
		return;
	HASH_CLEAR(hh, b->by_id);
	HASH_CLEAR(hh, b->by_ptr);
	ms__arena_free(&b->arena);
	free(b);
}

static struct blk *find(struct memscope_blocks *b, const struct memscope_event *ev, int *by_id)
{
	struct blk *x = NULL;

	*by_id = (ev->flags & MEMSCOPE_EV_ALLOC_ID) != 0;
	if (*by_id) {
		struct id_key k = { ev->pid, ev->alloc_id, ev->src, 0 };

		if (b->recent && !memcmp(&b->recent->key.id, &k, sizeof(k)))
			return b->recent;
		if (ev->alloc_id > b->max_id)
			return NULL;
		HASH_FIND(hh, b->by_id, &k, sizeof(k), x);
	} else {
		uint32_t pool = ev->kind == MEMSCOPE_KIND_ACCESS ? ev->pool : ev->subtype;
		struct ptr_key k = { ev->pid, ev->ptr, ev->src, pool };

		HASH_FIND(hh, b->by_ptr, &k, sizeof(k), x);
		/* the device is compared only when both rows name one (legacy HAL FREE says N/A) */
		if (x && ev->device != MEMSCOPE_DEVICE_NONE &&
			x->b.device != MEMSCOPE_DEVICE_NONE && x->b.device != ev->device)
			x = NULL;
	}
	return x;
}

static void unlink_blk(struct memscope_blocks *b, struct blk *x)
{
	if (x == b->recent)
		b->recent = NULL;
	if (x->by_id)
		HASH_DELETE(hh, b->by_id, x);
	else
		HASH_DELETE(hh, b->by_ptr, x);
	x->next_free = b->free_list;
	b->free_list = x;
}

int memscope_blocks_feed(
	struct memscope_blocks *b, const struct memscope_event *ev, struct memscope_block *out)
{
	const struct memscope_attr *owner;
	uint32_t owner_id = 0;
	struct blk *x;
	int by_id, res = MEMSCOPE_PAIR_ALLOC;

	b->last = NULL;
	if (ev->kind != MEMSCOPE_KIND_MALLOC && ev->kind != MEMSCOPE_KIND_FREE &&
		ev->kind != MEMSCOPE_KIND_ACCESS)
		return MEMSCOPE_PAIR_NONE;
	if (!(ev->flags & (MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_PTR)))
		return MEMSCOPE_PAIR_NONE;
	x = find(b, ev, &by_id);
	if (ev->kind == MEMSCOPE_KIND_ACCESS) {
		if (!x)
			return MEMSCOPE_PAIR_NONE;
		if (!x->b.n_access++ || ev->ts_ns < x->b.first_access_ts_ns)
			x->b.first_access_ts_ns = ev->ts_ns;
		if (ev->ts_ns > x->b.last_access_ts_ns)
			x->b.last_access_ts_ns = ev->ts_ns;
		return MEMSCOPE_PAIR_ACCESS;
	}
	if (ev->kind == MEMSCOPE_KIND_FREE) {
		if (!x) {
			b->stats.n_unmatched_free++;
			return MEMSCOPE_PAIR_UNMATCHED_FREE;
		}
		x->b.flags |= MEMSCOPE_BLOCK_FREED;
		x->b.free_ts_ns = ev->ts_ns;
		x->b.free_event_id = ev->id;
		x->b.free_line = ev->line;
		if (ev->flags & MEMSCOPE_EV_SHADOW) {
			x->b.flags |= MEMSCOPE_BLOCK_SHADOW_FREE;
			b->stats.n_shadow_free++;
			res = MEMSCOPE_PAIR_SHADOW_FREE;
		} else {
			b->stats.n_free++;
			res = MEMSCOPE_PAIR_FREE;
		}
		if (out)
			*out = x->b;
		unlink_blk(b, x);
		return res;
	}
	/* the owner first, so a failure leaves the map as it was */
	if (b->st && (owner = memscope_event_attr(ev, MEMSCOPE_STR_OWNER)) && owner->val_len &&
		memscope_strtab_intern(b->st, owner->val, owner->val_len, &owner_id))
		return MEMSCOPE_E_NOMEM;
	if (x) {
		x->b.flags |= MEMSCOPE_BLOCK_REPLACED;
		if (out)
			*out = x->b;
		unlink_blk(b, x);
		b->stats.n_replaced++;
		res = MEMSCOPE_PAIR_REPLACED;
	}
	x = b->free_list;
	if (x)
		b->free_list = x->next_free;
	else if (!(x = ms__arena_alloc(&b->arena, sizeof(*x))))
		return MEMSCOPE_E_NOMEM;
	memset(x, 0, sizeof(*x));
	x->b.src = ev->src;
	x->b.device = ev->device;
	x->b.pid = ev->pid;
	x->b.tid = ev->tid;
	x->b.alloc_id = (ev->flags & MEMSCOPE_EV_ALLOC_ID) ? ev->alloc_id : 0;
	x->b.ptr = ev->ptr;
	x->b.size = (ev->flags & MEMSCOPE_EV_SIZE) ? ev->size : 0;
	x->b.alloc_ts_ns = ev->ts_ns;
	x->b.alloc_event_id = ev->id;
	x->b.alloc_line = ev->line;
	x->b.file = ev->file;
	x->b.pool = ev->pool;
	x->b.stack_py = ev->stack_py;
	x->b.stack_c = ev->stack_c;
	x->b.owner = owner_id;
	x->b.op = memscope_event_op(ev);
	if (!(ev->flags & MEMSCOPE_EV_PTR))
		x->b.flags |= MEMSCOPE_BLOCK_NO_PTR;
	if (ev->flags & MEMSCOPE_EV_SHADOW)
		x->b.flags |= MEMSCOPE_BLOCK_SHADOW_ALLOC;
	if (ev->func)
		x->b.flags |= MEMSCOPE_BLOCK_RECORDED;
	if (memscope_event_attr(ev, MEMSCOPE_STR_BEFORE_TRACE))
		x->b.flags |= MEMSCOPE_BLOCK_BEFORE_TRACE;
	x->by_id = by_id;
	x->seq = b->seq++;
	b->oom = 0;
	if (by_id) {
		x->key.id = (struct id_key){ ev->pid, ev->alloc_id, ev->src, 0 };
		HASH_ADD(hh, b->by_id, key.id, sizeof(struct id_key), x);
	} else {
		x->key.ptr = (struct ptr_key){ ev->pid, ev->ptr, ev->src, ev->subtype };
		HASH_ADD(hh, b->by_ptr, key.ptr, sizeof(struct ptr_key), x);
	}
	if (b->oom) {
		x->next_free = b->free_list;
		b->free_list = x;
		return MEMSCOPE_E_NOMEM;
	}
	if (by_id) {
		b->recent = x;
		b->max_id = ev->alloc_id > b->max_id ? ev->alloc_id : b->max_id;
	}
	b->stats.n_alloc++;
	b->last = x;
	return res;
}

void memscope_blocks_tag(struct memscope_blocks *b, uint64_t tag)
{
	if (b->last)
		b->last->b.tag = tag;
}

size_t memscope_blocks_live(const struct memscope_blocks *b)
{
	return HASH_CNT(hh, b->by_id) + HASH_CNT(hh, b->by_ptr);
}

const struct memscope_blocks_stats *memscope_blocks_stats(const struct memscope_blocks *b)
{
	return &b->stats;
}

static int cmp_seq(const void *pa, const void *pb)
{
	const struct blk *a = *(const struct blk *const *)pa, *b = *(const struct blk *const *)pb;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int memscope_blocks_foreach_live(const struct memscope_blocks *b,
	int (*fn)(void *ctx, const struct memscope_block *blk), void *ctx)
{
	size_t n = memscope_blocks_live(b), i = 0;
	struct blk **all, *x, *tmp;
	int rc = 0;

	if (!n)
		return 0;
	all = malloc(n * sizeof(*all));
	if (!all)
		return MEMSCOPE_E_NOMEM;
	HASH_ITER(hh, b->by_id, x, tmp)
	all[i++] = x;
	HASH_ITER(hh, b->by_ptr, x, tmp)
	all[i++] = x;
	qsort(all, n, sizeof(*all), cmp_seq);
	for (i = 0; i < n && !rc; i++)
		rc = fn(ctx, &all[i]->b);
	free(all);
	return rc;
}
