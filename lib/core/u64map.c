/* Implementation of the u64 hash map of u64map.h. */
#include <stdlib.h>
#include <string.h>

#include "memscope/error.h"
#include "u64map.h"

static inline size_t slot_of(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & mask;
}

static int grow(struct u64map *m)
{
	size_t cap = m->mask ? (m->mask + 1) * 2 : 64, i;
	struct u64map_entry *ne = calloc(cap, sizeof(*ne));

	if (!ne)
		return MEMSCOPE_E_NOMEM;
	for (i = 0; m->mask && i <= m->mask; i++) {
		if (!m->e[i].used)
			continue;
		size_t at = slot_of(m->e[i].key, cap - 1);

		while (ne[at].used)
			at = (at + 1) & (cap - 1);
		ne[at] = m->e[i];
	}
	free(m->e);
	m->e = ne;
	m->mask = cap - 1;
	return 0;
}

int ms__u64map_put(struct u64map *m, uint64_t key, uint64_t a, uint64_t b)
{
	size_t at;

	/* an existing key is overwritten in place: no allocation, so no failure */
	if (m->mask) {
		at = slot_of(key, m->mask);
		while (m->e[at].used && m->e[at].key != key)
			at = (at + 1) & m->mask;
		if (m->e[at].used) {
			m->e[at].a = a;
			m->e[at].b = b;
			return 0;
		}
	}
	if ((m->n + 1) * 4 > (m->mask + 1) * 3 || !m->mask) {
		if (grow(m))
			return MEMSCOPE_E_NOMEM;
	}
	at = slot_of(key, m->mask);
	while (m->e[at].used)
		at = (at + 1) & m->mask;
	m->e[at] = (struct u64map_entry){ key, a, b, 1 };
	m->n++;
	return 0;
}

int ms__u64map_get(const struct u64map *m, uint64_t key, uint64_t *a, uint64_t *b)
{
	size_t at;

	if (!m->mask)
		return 0;
	at = slot_of(key, m->mask);
	while (m->e[at].used) {
		if (m->e[at].key == key) {
			if (a)
				*a = m->e[at].a;
			if (b)
				*b = m->e[at].b;
			return 1;
		}
		at = (at + 1) & m->mask;
	}
	return 0;
}

int ms__u64map_del(struct u64map *m, uint64_t key, uint64_t *a, uint64_t *b)
{
	size_t at, next;

	if (!m->mask)
		return 0;
	at = slot_of(key, m->mask);
	while (m->e[at].used && m->e[at].key != key)
		at = (at + 1) & m->mask;
	if (!m->e[at].used)
		return 0;
	if (a)
		*a = m->e[at].a;
	if (b)
		*b = m->e[at].b;
	/* backward shift: pull later members of the probe run into the hole */
	for (next = (at + 1) & m->mask; m->e[next].used; next = (next + 1) & m->mask) {
		size_t home = slot_of(m->e[next].key, m->mask);

		if (((next - home) & m->mask) >= ((next - at) & m->mask)) {
			m->e[at] = m->e[next];
			at = next;
		}
	}
	m->e[at].used = 0;
	m->n--;
	return 1;
}

void ms__u64map_clear(struct u64map *m)
{
	if (m->e)
		memset(m->e, 0, (m->mask + 1) * sizeof(*m->e));
	m->n = 0;
}

void ms__u64map_free(struct u64map *m)
{
	free(m->e);
	m->e = NULL;
	m->mask = m->n = 0;
}
