/* The time order of a process's events, the one rule every analysis orders by, and an event
 * buffer that can be put in it. */
#ifndef MEMSCOPE_ORDER_H
#define MEMSCOPE_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "event.h"

struct memscope_strtab;

/* An event's place in the time order of its process: (timestamp, ID), compared in that order. */
struct memscope_pos {
	uint64_t ts_ns, id;
};

static inline int memscope_pos_cmp(struct memscope_pos a, struct memscope_pos b)
{
	if (a.ts_ns != b.ts_ns)
		return a.ts_ns < b.ts_ns ? -1 : 1;
	return a.id < b.id ? -1 : a.id > b.id;
}

static inline struct memscope_pos memscope_pos_of(const struct memscope_event *ev)
{
	struct memscope_pos p = { ev->ts_ns, ev->id };

	return p;
}

/* The one order of events across processes: by input, then process, then place in time. Returns
 * <0, 0, >0 like strcmp. */
static inline int memscope_time_cmp(uint32_t src_a, uint64_t pid_a, struct memscope_pos a,
	uint32_t src_b, uint64_t pid_b, struct memscope_pos b)
{
	if (src_a != src_b)
		return src_a < src_b ? -1 : 1;
	if (pid_a != pid_b)
		return pid_a < pid_b ? -1 : 1;
	return memscope_pos_cmp(a, b);
}

/*
 * The reference's reader rule (formats/analyses.md "Time order"): within one (input, pid), order by
 * (timestamp, ID). Returns <0, 0, >0 like strcmp, comparing src, then pid, then ts_ns, then id.
 * Dump files are not written in this order (a MALLOC row is written with its FREE).
 */
int memscope_event_cmp_time(const struct memscope_event *a, const struct memscope_event *b);

/*
 * An owned, growable copy of events (attr values copied too) that can be put in time order. Memory
 * grows with the number of events held: use it for the slices an analysis must reorder, not for
 * whole files when a streaming pass will do.
 */
struct memscope_evbuf;

struct memscope_evbuf *memscope_evbuf_new(void); /* NULL on OOM */
void memscope_evbuf_free(struct memscope_evbuf *b);
/* Copy ev in. 0 or MEMSCOPE_E_NOMEM. */
int memscope_evbuf_add(struct memscope_evbuf *b, const struct memscope_event *ev);
/* Stable sort by memscope_event_cmp_time. 0 or MEMSCOPE_E_NOMEM. */
int memscope_evbuf_sort(struct memscope_evbuf *b);
size_t memscope_evbuf_count(const struct memscope_evbuf *b);
/* Event i (borrowed; valid until the buffer is changed or freed). */
const struct memscope_event *memscope_evbuf_get(const struct memscope_evbuf *b, size_t i);
/* Drop all events, keep the memory for reuse. */
void memscope_evbuf_clear(struct memscope_evbuf *b);

#endif
