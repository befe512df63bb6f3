/* Out-of-memory events: their figures, and the blocks alive at each of them with their largest
 * holder, worked out per pass from each block's end. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_impl.h"

/* what an owner of bytes at an out-of-memory event is (oom_owner_key) */
enum { OOM_BY_OWNER = 1, OOM_BY_PY, OOM_BY_C };
/* which blocks an owner's sum at an out-of-memory event counts: all, or those of no outer pool
 * (HAL, CUDA), the one family of a device that has pools carved out of one (the pool totals'
 * rule, memscope_pools_default: never a block and the segment holding it) */
enum { OOM_ALL = 0, OOM_UNNESTED = 1 };

/* The attr keys an out-of-memory event's figures are read from. 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_oom_keys(struct memscope_leaks *l)
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

/* A number an attr of ev holds, or -1. */
static int64_t attr_num(const struct memscope_event *ev, uint32_t key)
{
	const struct memscope_attr *a = key ? memscope_event_attr(ev, key) : NULL;
	int64_t v;

	return a && !ms__parse_i64(a->val, a->val_len, &v) && v >= 0 ? v : -1;
}

/* An out-of-memory event of process p: its figures, and whether rows after it in time came
 * before it (blocks freed after it may have been judged without it). */
int ms__leaks_add_oom(
	struct memscope_leaks *l, const struct lproc *p, const struct memscope_event *ev)
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
int ms__leaks_oom_account(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
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
		/* every block, and the blocks of no outer pool apart: ms__leaks_ooms_finish keeps
		 * one */
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

/* by input, then time */
static int cmp_oom(const void *pa, const void *pb)
{
	const struct memscope_leaks_oom *a = pa, *b = pb;
	int c = MS__CMP(a->src, b->src);

	c = c ? c : MS__CMP(a->ts_ns, b->ts_ns);
	return c ? c : MS__CMP(a->line, b->line);
}

/* Each out-of-memory event's state from what the pass saw: its pools, its largest owner; then
 * the events in report order (the next pass keys its state by that order). */
void ms__leaks_ooms_finish(struct memscope_leaks *l)
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

const struct memscope_leaks_oom *memscope_leaks_ooms(const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_ooms;
	return l->ooms;
}
