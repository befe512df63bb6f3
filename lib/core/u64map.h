/* A small open-addressing hash map from u64 keys to two u64 values (linear probing, backward-shift
 * delete). */
#ifndef MEMSCOPE_U64MAP_H
#define MEMSCOPE_U64MAP_H

#include <stddef.h>
#include <stdint.h>

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

#endif
