/* Time order per (input, pid) and an owned sortable event buffer. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "memscope/order.h"
#include "memscope/strtab.h"

int memscope_event_cmp_time(const struct memscope_event *a, const struct memscope_event *b)
{
	return memscope_time_cmp(
		a->src, a->pid, memscope_pos_of(a), b->src, b->pid, memscope_pos_of(b));
}

/* ---- evbuf ---- */

struct evbuf_item {
	struct memscope_event ev;
	size_t seq;
};

struct memscope_evbuf {
	struct evbuf_item *items;
	size_t n, cap;
	struct arena arena;
};

struct memscope_evbuf *memscope_evbuf_new(void)
{
	return calloc(1, sizeof(struct memscope_evbuf));
}

void memscope_evbuf_free(struct memscope_evbuf *b)
{
	if (!b)
		return;
	ms__arena_free(&b->arena);
	free(b->items);
	free(b);
}

void memscope_evbuf_clear(struct memscope_evbuf *b)
{
	ms__arena_free(&b->arena);
	b->n = 0;
}

int memscope_evbuf_add(struct memscope_evbuf *b, const struct memscope_event *ev)
{
	struct memscope_attr *attrs = NULL;
	size_t bytes = 0;
	uint32_t i;

	if (ms__grow_array(&b->items, &b->cap, b->n + 1, sizeof(*b->items)))
		return MEMSCOPE_E_NOMEM;
	if (ev->n_attrs) {
		for (i = 0; i < ev->n_attrs; i++)
			bytes += ev->attrs[i].val_len;
		attrs = ms__arena_alloc(&b->arena, ev->n_attrs * sizeof(*attrs) + bytes + 1);
		if (!attrs)
			return MEMSCOPE_E_NOMEM;
		char *vals = (char *)(attrs + ev->n_attrs);

		for (i = 0; i < ev->n_attrs; i++) {
			attrs[i] = ev->attrs[i];
			if (ev->attrs[i].val_len)
				memcpy(vals, ev->attrs[i].val, ev->attrs[i].val_len);
			attrs[i].val = vals;
			vals += ev->attrs[i].val_len;
		}
	}
	b->items[b->n].ev = *ev;
	b->items[b->n].ev.attrs = attrs;
	b->items[b->n].seq = b->n;
	b->n++;
	return 0;
}

static int cmp_item(const void *pa, const void *pb)
{
	const struct evbuf_item *a = pa, *b = pb;
	int c = memscope_event_cmp_time(&a->ev, &b->ev);

	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int memscope_evbuf_sort(struct memscope_evbuf *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		b->items[i].seq = i;
	if (b->n > 1)
		qsort(b->items, b->n, sizeof(*b->items), cmp_item);
	return 0;
}

size_t memscope_evbuf_count(const struct memscope_evbuf *b)
{
	return b->n;
}

const struct memscope_event *memscope_evbuf_get(const struct memscope_evbuf *b, size_t i)
{
	return i < b->n ? &b->items[i].ev : NULL;
}
