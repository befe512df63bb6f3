/* Implementation of the ordered map of u64tree.h: a treap whose priorities hash the keys, split
 * and merged in loops so no input can make it recurse. */
#include <stdlib.h>

#include "internal.h"
#include "memscope/error.h"
#include "u64tree.h"

static uint32_t prio_of(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ull;
	key ^= key >> 33;
	return (uint32_t)key;
}

/* The link that points at key's node, or at the empty place where it would go. */
static uint32_t *link_of(struct u64tree *t, uint64_t key)
{
	uint32_t *at = &t->root;

	while (*at && t->n[*at].key != key)
		at = key < t->n[*at].key ? &t->n[*at].left : &t->n[*at].right;
	return at;
}

int ms__u64tree_put(struct u64tree *t, uint64_t key, uint64_t a, uint64_t b)
{
	uint32_t *at = link_of(t, key), x, sub, *l, *r;

	if (*at) { /* an existing key: overwritten in place */
		t->n[*at].a = a;
		t->n[*at].b = b;
		return 0;
	}
	if (t->free) {
		x = t->free;
		t->free = t->n[x].left;
	} else {
		if (t->used >= UINT32_MAX ||
			ms__grow_array(&t->n, &t->cap, (t->used ? t->used : 1) + 1, sizeof(*t->n)))
			return MEMSCOPE_E_NOMEM;
		if (!t->used)
			t->used = 1; /* node 0 is "none" */
		x = (uint32_t)t->used++;
	}
	t->n[x] = (struct u64tree_node){ key, a, b, 0, 0, prio_of(key) };
	/* down to the first node of lower priority (the array did not move since: links hold) */
	at = &t->root;
	while (*at && t->n[*at].prio >= t->n[x].prio)
		at = key < t->n[*at].key ? &t->n[*at].left : &t->n[*at].right;
	/* the subtree there split by key under the new node */
	sub = *at;
	l = &t->n[x].left;
	r = &t->n[x].right;
	while (sub) {
		if (t->n[sub].key < key) {
			*l = sub;
			l = &t->n[sub].right;
			sub = t->n[sub].right;
		} else {
			*r = sub;
			r = &t->n[sub].left;
			sub = t->n[sub].left;
		}
	}
	*l = *r = 0;
	*at = x;
	t->count++;
	return 0;
}

int ms__u64tree_get(const struct u64tree *t, uint64_t key, uint64_t *a, uint64_t *b)
{
	uint32_t x = t->root;

	while (x && t->n[x].key != key)
		x = key < t->n[x].key ? t->n[x].left : t->n[x].right;
	if (!x)
		return 0;
	if (a)
		*a = t->n[x].a;
	if (b)
		*b = t->n[x].b;
	return 1;
}

int ms__u64tree_del(struct u64tree *t, uint64_t key, uint64_t *a, uint64_t *b)
{
	uint32_t *at, x, l, r;

	if (!t->root)
		return 0;
	at = link_of(t, key);
	if (!(x = *at))
		return 0;
	if (a)
		*a = t->n[x].a;
	if (b)
		*b = t->n[x].b;
	/* its two subtrees merged in its place */
	l = t->n[x].left;
	r = t->n[x].right;
	while (l && r) {
		if (t->n[l].prio > t->n[r].prio) {
			*at = l;
			at = &t->n[l].right;
			l = t->n[l].right;
		} else {
			*at = r;
			at = &t->n[r].left;
			r = t->n[r].left;
		}
	}
	*at = l ? l : r;
	t->n[x].left = t->free;
	t->free = x;
	t->count--;
	return 1;
}

static int found(const struct u64tree *t, uint32_t x, uint64_t *k, uint64_t *a, uint64_t *b)
{
	if (!x)
		return 0;
	if (k)
		*k = t->n[x].key;
	if (a)
		*a = t->n[x].a;
	if (b)
		*b = t->n[x].b;
	return 1;
}

int ms__u64tree_floor(const struct u64tree *t, uint64_t key, uint64_t *k, uint64_t *a, uint64_t *b)
{
	uint32_t x = t->root, best = 0;

	while (x) {
		if (t->n[x].key == key)
			return found(t, x, k, a, b);
		if (t->n[x].key < key) {
			best = x;
			x = t->n[x].right;
		} else {
			x = t->n[x].left;
		}
	}
	return found(t, best, k, a, b);
}

int ms__u64tree_after(const struct u64tree *t, uint64_t key, uint64_t *k, uint64_t *a, uint64_t *b)
{
	uint32_t x = t->root, best = 0;

	while (x) {
		if (t->n[x].key > key) {
			best = x;
			x = t->n[x].left;
		} else {
			x = t->n[x].right;
		}
	}
	return found(t, best, k, a, b);
}

void ms__u64tree_free(struct u64tree *t)
{
	free(t->n);
	*t = (struct u64tree){ 0 };
}
