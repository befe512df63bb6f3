/* The ops open on one thread by name, for the analyses that weigh memory by op (leaks, flame);
 * library-internal. The rule (formats/analyses.md "Leak groups"): a start opens an op inside the
 * open ones; an end closes the innermost open op of its name and every op opened inside it, and
 * is ignored when none of its name is open. Each op is closed once, so ends cost what starts do. */
#ifndef MEMSCOPE_OPNAMES_H
#define MEMSCOPE_OPNAMES_H

#include <stdint.h>
#include <stdlib.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/error.h"

/* Start it zeroed; opnames_clear between threads, opnames_free at the end. */
struct opnames {
	uint32_t *name; /* the open ops, outermost first */
	size_t depth, cap;
	struct u64map open; /* name -> ops of that name open (names with none are not there) */
};

/* An op named name starts. 0 or MEMSCOPE_E_NOMEM (nothing changed). */
static inline int opnames_begin(struct opnames *s, uint32_t name)
{
	uint64_t n = 0, unused;

	if (ms__grow_array(&s->name, &s->cap, s->depth + 1, sizeof(*s->name)))
		return MEMSCOPE_E_NOMEM;
	ms__u64map_get(&s->open, name, &n, &unused);
	if (ms__u64map_put(&s->open, name, n + 1, 0))
		return MEMSCOPE_E_NOMEM;
	s->name[s->depth++] = name;
	return 0;
}

/* An op named name ends: the ops it closes (itself and those inside it), 0 when none of its name
 * is open. */
static inline size_t opnames_end(struct opnames *s, uint32_t name)
{
	uint64_t n = 0, unused;
	size_t closed = 0;

	if (!ms__u64map_get(&s->open, name, &n, &unused) || !n)
		return 0;
	do {
		uint32_t top = s->name[--s->depth];

		ms__u64map_get(&s->open, top, &n, &unused);
		if (n > 1)
			ms__u64map_put(
				&s->open, top, n - 1, 0); /* the key is there: no allocation */
		else
			ms__u64map_del(&s->open, top, NULL, NULL);
		closed++;
		if (top == name)
			break;
	} while (s->depth);
	return closed;
}

/* Close every open op (the next thread starts with none); keeps the storage. */
static inline void opnames_clear(struct opnames *s)
{
	while (s->depth)
		ms__u64map_del(&s->open, s->name[--s->depth], NULL, NULL);
}

static inline void opnames_free(struct opnames *s)
{
	free(s->name);
	ms__u64map_free(&s->open);
}

#endif
