/* A small open-addressing hash map from u64 keys to two u64 values (linear probing, backward-shift
 * delete). */
#ifndef MEMSCOPE_U64MAP_H
#define MEMSCOPE_U64MAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "memscope/error.h"

struct u64map_entry {
	uint64_t key;
	uint64_t a, b;
	uint64_t used;
};

struct u64map {
	struct u64map_entry *e;
	size_t mask; /* capacity - 1, 0 when empty */
	size_t n;
};

/* Insert or overwrite. 0 or MEMSCOPE_E_NOMEM (only for a new key: overwriting never fails; the
 * map is unchanged on failure). */
int ms__u64map_put(struct u64map *m, uint64_t key, uint64_t a, uint64_t b);
/* 1 and the values if present, else 0. */
int ms__u64map_get(const struct u64map *m, uint64_t key, uint64_t *a, uint64_t *b);
/* Remove; 1 (and the values) if it was present. */
int ms__u64map_del(struct u64map *m, uint64_t key, uint64_t *a, uint64_t *b);
/* Remove every entry, keep the memory. Costs the capacity, not the entries: a loop that clears a
 * map per item (per process, per thread) is quadratic once one item made the map big. */
void ms__u64map_clear(struct u64map *m);
void ms__u64map_free(struct u64map *m);

/*
 * An array keyed through m (the array *pp of *n elements of elem bytes, room for *cap; m maps a
 * key to its index): *at is key's index, and when key is new a zeroed element is appended
 * (ms__grow_array) and mapped. 1 new, 0 found, or MEMSCOPE_E_NOMEM (key not added).
 */
static inline int ms__u64map_slot(
	struct u64map *m, uint64_t key, void *pp, size_t *n, size_t *cap, size_t elem, size_t *at)
{
	uint64_t a;
	char *p;

	if (ms__u64map_get(m, key, &a, NULL)) {
		*at = (size_t)a;
		return 0;
	}
	if (ms__grow_array(pp, cap, *n + 1, elem) || ms__u64map_put(m, key, *n, 0))
		return MEMSCOPE_E_NOMEM;
	*at = (*n)++;
	memcpy(&p, pp, sizeof(p)); /* the array, whatever its element type */
	memset(p + *at * elem, 0, elem);
	return 1;
}

#endif
