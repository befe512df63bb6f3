/* An ordered map from u64 keys to two u64 values, for lookups by range (the greatest key at or
 * below a key, the next key after one): a treap in one array, walked without recursion. */
#ifndef MEMSCOPE_U64TREE_H
#define MEMSCOPE_U64TREE_H

#include <stddef.h>
#include <stdint.h>

struct u64tree_node {
	uint64_t key, a, b;
	uint32_t left, right; /* node indexes, 0: none (node 0 is never used) */
	uint32_t prio;	      /* a hash of the key: the tree is a heap of these */
};

struct u64tree {
	struct u64tree_node *n;
	size_t cap, used; /* nodes allocated, nodes handed out (node 0 included) */
	uint32_t root;
	uint32_t free; /* freed nodes, linked through left */
	size_t count;  /* keys held */
};

/* Insert or overwrite. 0 or MEMSCOPE_E_NOMEM (only for a new key; the tree is unchanged on
 * failure). A zeroed struct is an empty tree. */
int ms__u64tree_put(struct u64tree *t, uint64_t key, uint64_t a, uint64_t b);
/* 1 and the values (a, b may be NULL) when key is there, else 0. */
int ms__u64tree_get(const struct u64tree *t, uint64_t key, uint64_t *a, uint64_t *b);
/* Remove key: 1 (and its values) when it was there, else 0. */
int ms__u64tree_del(struct u64tree *t, uint64_t key, uint64_t *a, uint64_t *b);
/* The entry of the greatest key <= key: 1 and *k, *a, *b (any may be NULL), or 0 when none. */
int ms__u64tree_floor(const struct u64tree *t, uint64_t key, uint64_t *k, uint64_t *a, uint64_t *b);
/* The entry of the least key > key: 1 and *k, *a, *b (any may be NULL), or 0 when none. */
int ms__u64tree_after(const struct u64tree *t, uint64_t key, uint64_t *k, uint64_t *a, uint64_t *b);
void ms__u64tree_free(struct u64tree *t);

#endif
