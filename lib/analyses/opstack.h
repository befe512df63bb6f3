/* The ops open on each thread of one process, for the timeline and its trace writer;
 * library-internal. */
#ifndef MEMSCOPE_OPSTACK_H
#define MEMSCOPE_OPSTACK_H

#include <stdint.h>
#include <stdlib.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/error.h"

/* The ops open on each thread of one process: a stack per thread, in a shared array. Start it
 * with OPSTACK_INIT; free it with opstack_free. An end closes ops by the rule of opnames.h: the
 * innermost open op of its name and those inside it (opstack_closes). */
struct opstack {
	struct opstack_entry {
		size_t point;  /* the BEGIN's index in the timeline's points */
		size_t below;  /* the entry under it on its thread, SIZE_MAX: none */
		uint32_t name; /* the op's name (string id) */
	} * e;
	size_t n, cap, free_list; /* free_list: a chain of unused entries through below */
	struct u64map top;	  /* tid -> a: 1 + its top entry (0: none), b: its place in tids */
	uint64_t *tids;		  /* the threads in the order they first opened an op */
	size_t n_tids, cap_tids;
};

#define OPSTACK_INIT                                                                               \
	{                                                                                          \
		.free_list = SIZE_MAX                                                              \
	}

/* Forget every thread (for the next process). */
static inline void opstack_reset(struct opstack *s)
{
	ms__u64map_free(&s->top);
	s->n = 0;
	s->n_tids = 0;
	s->free_list = SIZE_MAX;
}

static inline void opstack_free(struct opstack *s)
{
	ms__u64map_free(&s->top);
	free(s->e);
	free(s->tids);
}

/* Op `point` named name opens on tid, inside the ones open there. 0 or MEMSCOPE_E_NOMEM
 * (unchanged). */
static inline int opstack_push(struct opstack *s, uint64_t tid, size_t point, uint32_t name)
{
	uint64_t top = 0, place = 0;
	size_t at;

	if (!ms__u64map_get(&s->top, tid, &top, &place)) {
		if (ms__grow_array(&s->tids, &s->cap_tids, s->n_tids + 1, sizeof(*s->tids)))
			return MEMSCOPE_E_NOMEM;
		place = s->n_tids;
		s->tids[s->n_tids++] = tid;
	}
	if (s->free_list != SIZE_MAX) {
		at = s->free_list;
		s->free_list = s->e[at].below;
	} else {
		if (ms__grow_array(&s->e, &s->cap, s->n + 1, sizeof(*s->e)))
			return MEMSCOPE_E_NOMEM;
		at = s->n++;
	}
	s->e[at] = (struct opstack_entry){ point, top ? (size_t)top - 1 : SIZE_MAX, name };
	if (ms__u64map_put(&s->top, tid, at + 1, place)) {
		s->e[at].below = s->free_list;
		s->free_list = at;
		return MEMSCOPE_E_NOMEM;
	}
	return 0;
}

/* The innermost open op of tid, taken off: its BEGIN's index, SIZE_MAX when none is open. */
static inline size_t opstack_pop(struct opstack *s, uint64_t tid)
{
	uint64_t top = 0, place = 0;
	size_t at, point;

	if (!ms__u64map_get(&s->top, tid, &top, &place) || !top)
		return SIZE_MAX;
	at = (size_t)top - 1;
	point = s->e[at].point;
	/* an existing key: overwriting cannot fail */
	ms__u64map_put(&s->top, tid, s->e[at].below == SIZE_MAX ? 0 : s->e[at].below + 1, place);
	s->e[at].below = s->free_list;
	s->free_list = at;
	return point;
}

/* ends look this deep for their op at most (a hostile input's starts without ends would make
 * every end's search as long as the file); one past it closes nothing */
#define OPSTACK_SEARCH 64

/* How many ops an end named name closes on tid (opstack_pop them): the innermost open op of
 * that name and those opened inside it; 0 when none of that name is open. */
static inline size_t opstack_closes(const struct opstack *s, uint64_t tid, uint32_t name)
{
	uint64_t top = 0, place = 0;
	size_t at, n;

	if (!ms__u64map_get(&s->top, tid, &top, &place) || !top)
		return 0;
	for (at = (size_t)top - 1, n = 1; n <= OPSTACK_SEARCH; at = s->e[at].below, n++) {
		if (s->e[at].name == name)
			return n;
		if (s->e[at].below == SIZE_MAX)
			break;
	}
	return 0;
}

#endif
