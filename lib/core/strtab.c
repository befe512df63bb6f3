/* String and stack interning: append-only arenas plus open-addressing indexes, ids dense from 0. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "memscope/error.h"
#include "memscope/strtab.h"

struct str_entry {
	const char *s;
	uint32_t len;
	uint32_t hash;
};

struct stack_entry {
	const uint32_t *frames;
	uint32_t n;
	uint32_t hash;
};

struct memscope_strtab {
	struct arena arena; /* the strings and frame arrays */
	struct str_entry *strs;
	uint32_t n_strs, cap_strs;
	uint32_t *str_slots; /* id + 1, 0 = empty */
	uint32_t str_mask;
	struct stack_entry *stacks; /* index 0 unused */
	uint32_t n_stacks, cap_stacks;
	uint32_t *stack_slots;
	uint32_t stack_mask;
};

static const char *const well_known[MEMSCOPE_STR_WELL_KNOWN_COUNT] = {
	[MEMSCOPE_STR_EMPTY] = "",
	[MEMSCOPE_STR_NA] = "N/A",
	[MEMSCOPE_STR_ALLOCATION_ID] = "allocation_id",
	[MEMSCOPE_STR_ADDR] = "addr",
	[MEMSCOPE_STR_SIZE] = "size",
	[MEMSCOPE_STR_TOTAL] = "total",
	[MEMSCOPE_STR_USED] = "used",
	[MEMSCOPE_STR_SHADOW] = "shadow",
	[MEMSCOPE_STR_TYPE] = "type",
	[MEMSCOPE_STR_OWNER] = "owner",
	[MEMSCOPE_STR_INEFFICIENT_TYPE] = "inefficient_type",
	[MEMSCOPE_STR_PAGE_TYPE] = "page_type",
	[MEMSCOPE_STR_ALLOC_TYPE] = "alloc_type",
	[MEMSCOPE_STR_PINNED] = "pinned",
	[MEMSCOPE_STR_FUNC] = "func",
	[MEMSCOPE_STR_PTR] = "ptr",
	[MEMSCOPE_STR_MID] = "MID",
	[MEMSCOPE_STR_BEFORE_TRACE] = "before_trace",
};

static int grow_slots(uint32_t **slots, uint32_t *mask, uint32_t n_items, const void *entries,
	size_t entry_size, size_t hash_off, uint32_t first)
{
	uint32_t cap = *mask ? (*mask + 1) * 2 : 1024;
	uint32_t *ns = calloc(cap, sizeof(*ns));
	uint32_t i;

	if (!ns)
		return MEMSCOPE_E_NOMEM;
	for (i = first; i < n_items; i++) {
		uint32_t h;

		memcpy(&h, (const char *)entries + i * entry_size + hash_off, sizeof(h));
		uint32_t at = h & (cap - 1);

		while (ns[at])
			at = (at + 1) & (cap - 1);
		ns[at] = i + 1;
	}
	free(*slots);
	*slots = ns;
	*mask = cap - 1;
	return 0;
}

/* Room in *entries (n used of *cap, entry_size bytes each; the capacity doubles) for one more:
 * 0, or MEMSCOPE_E_NOMEM at UINT32_MAX - 1 entries or when realloc fails (unchanged). */
static inline int room_for_entry(void *entries, uint32_t n, uint32_t *cap, size_t entry_size)
{
	uint32_t nc = *cap * 2;
	void *p, *np;

	if (n == UINT32_MAX - 1)
		return MEMSCOPE_E_NOMEM;
	if (n < *cap)
		return 0;
	memcpy(&p, entries, sizeof(p));
	np = realloc(p, nc * entry_size);
	if (!np)
		return MEMSCOPE_E_NOMEM;
	memcpy(entries, &np, sizeof(np));
	*cap = nc;
	return 0;
}

int memscope_strtab_intern(struct memscope_strtab *st, const char *s, size_t len, uint32_t *id)
{
	uint32_t h, at;
	char *copy;

	if (len > UINT32_MAX - 1)
		return MEMSCOPE_E_ARG;
	h = (uint32_t)ms__hash_bytes(s, len);
	at = h & st->str_mask;
	while (st->str_slots[at]) {
		const struct str_entry *e = &st->strs[st->str_slots[at] - 1];

		if (e->hash == h && e->len == len && (len == 0 || memcmp(e->s, s, len) == 0)) {
			*id = st->str_slots[at] - 1;
			return 0;
		}
		at = (at + 1) & st->str_mask;
	}
	if (room_for_entry(&st->strs, st->n_strs, &st->cap_strs, sizeof(*st->strs)))
		return MEMSCOPE_E_NOMEM;
	copy = ms__arena_alloc(&st->arena, len + 1);
	if (!copy)
		return MEMSCOPE_E_NOMEM;
	if (len)
		memcpy(copy, s, len);
	copy[len] = '\0';
	st->strs[st->n_strs] = (struct str_entry){ copy, (uint32_t)len, h };
	st->str_slots[at] = st->n_strs + 1;
	*id = st->n_strs++;
	if (st->n_strs * 2 > st->str_mask + 1) {
		if (grow_slots(&st->str_slots, &st->str_mask, st->n_strs, st->strs,
			    sizeof(*st->strs), offsetof(struct str_entry, hash), 0))
			return 0; /* the index stays valid at a higher load; try again next time */
	}
	return 0;
}

const char *memscope_strtab_str(const struct memscope_strtab *st, uint32_t id, size_t *len)
{
	if (id >= st->n_strs)
		return NULL;
	if (len)
		*len = st->strs[id].len;
	return st->strs[id].s;
}

uint32_t memscope_strtab_count(const struct memscope_strtab *st)
{
	return st->n_strs;
}

int memscope_strtab_intern_stack(
	struct memscope_strtab *st, const uint32_t *frames, size_t n, uint32_t *id)
{
	uint32_t h, at, i;
	uint32_t *copy;

	if (n > UINT32_MAX / sizeof(uint32_t))
		return MEMSCOPE_E_ARG;
	for (i = 0; i < n; i++)
		if (frames[i] >= st->n_strs)
			return MEMSCOPE_E_ARG;
	h = (uint32_t)ms__hash_bytes(frames, n * sizeof(*frames));
	at = h & st->stack_mask;
	while (st->stack_slots[at]) {
		const struct stack_entry *e = &st->stacks[st->stack_slots[at] - 1];

		if (e->hash == h && e->n == n &&
			(n == 0 || memcmp(e->frames, frames, n * sizeof(*frames)) == 0)) {
			*id = st->stack_slots[at] - 1;
			return 0;
		}
		at = (at + 1) & st->stack_mask;
	}
	if (room_for_entry(&st->stacks, st->n_stacks, &st->cap_stacks, sizeof(*st->stacks)))
		return MEMSCOPE_E_NOMEM;
	copy = ms__arena_alloc(&st->arena, n ? n * sizeof(*frames) : 1);
	if (!copy)
		return MEMSCOPE_E_NOMEM;
	if (n)
		memcpy(copy, frames, n * sizeof(*frames));
	st->stacks[st->n_stacks] = (struct stack_entry){ copy, (uint32_t)n, h };
	st->stack_slots[at] = st->n_stacks + 1;
	*id = st->n_stacks++;
	if (st->n_stacks * 2 > st->stack_mask + 1)
		grow_slots(&st->stack_slots, &st->stack_mask, st->n_stacks, st->stacks,
			sizeof(*st->stacks), offsetof(struct stack_entry, hash), 1);
	return 0;
}

const uint32_t *memscope_strtab_stack(const struct memscope_strtab *st, uint32_t id, size_t *n)
{
	if (id == 0 || id >= st->n_stacks)
		return NULL;
	if (n)
		*n = st->stacks[id].n;
	return st->stacks[id].frames;
}

uint32_t memscope_strtab_stack_count(const struct memscope_strtab *st)
{
	return st->n_stacks;
}

size_t memscope_strtab_footprint(const struct memscope_strtab *st)
{
	return st->arena.footprint + (size_t)st->cap_strs * sizeof(*st->strs) +
	       (size_t)(st->str_mask + 1) * sizeof(uint32_t) +
	       (size_t)st->cap_stacks * sizeof(*st->stacks) +
	       (size_t)(st->stack_mask + 1) * sizeof(uint32_t);
}

void memscope_strtab_free(struct memscope_strtab *st)
{
	if (!st)
		return;
	ms__arena_free(&st->arena);
	free(st->strs);
	free(st->str_slots);
	free(st->stacks);
	free(st->stack_slots);
	free(st);
}

struct memscope_strtab *memscope_strtab_new(void)
{
	struct memscope_strtab *st = calloc(1, sizeof(*st));
	uint32_t id, i;

	if (!st)
		return NULL;
	st->cap_strs = 256;
	st->cap_stacks = 64;
	st->n_stacks = 1; /* id 0 = no stack */
	st->strs = malloc(st->cap_strs * sizeof(*st->strs));
	st->stacks = calloc(st->cap_stacks, sizeof(*st->stacks));
	if (!st->strs || !st->stacks ||
		grow_slots(&st->str_slots, &st->str_mask, 0, st->strs, sizeof(*st->strs), 0, 0) ||
		grow_slots(&st->stack_slots, &st->stack_mask, 0, st->stacks, sizeof(*st->stacks), 0,
			1))
		goto fail;
	for (i = 0; i < MEMSCOPE_STR_WELL_KNOWN_COUNT; i++)
		if (memscope_strtab_intern(st, well_known[i], strlen(well_known[i]), &id) ||
			id != i)
			goto fail;
	return st;
fail:
	memscope_strtab_free(st);
	return NULL;
}
