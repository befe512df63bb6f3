/* Memory over time: live bytes, pool usage, ops and marks per process, for trace viewers. */
#ifndef MEMSCOPE_TIMELINE_H
#define MEMSCOPE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "error.h"
#include "event.h"
#include "order.h"

struct memscope_strtab;

/*
 * Memory over time, for trace viewers (Perfetto, chrome://tracing): per (input, process, device,
 * pool) the live bytes (MALLOC sizes minus FREE sizes, in time order) and the pool's `used` and
 * `total` (reserved) attrs where the rows carry them; op rows (ATen, ATB) as slices per thread;
 * MSTX marks as instants. Feed every event, finish, write. Memory grows with the MALLOC/FREE
 * rows of the chosen pools and the op and mark rows (about 40 bytes each): the output is a
 * timeline, as long as the input's history.
 */
struct memscope_timeline;

/* pools: MEMSCOPE_POOL_BIT bits, 0 for every pool; live_only: keep the live bytes only (no used
 * samples, ops or marks). st as memscope_flame_new's. NULL on OOM. */
struct memscope_timeline *memscope_timeline_new(
	uint64_t pools, int live_only, struct memscope_strtab *st);
void memscope_timeline_free(struct memscope_timeline *t);
int memscope_timeline_feed(struct memscope_timeline *t, const struct memscope_event *ev);
/* Put everything in time order and turn the live changes into live bytes. 0 or
 * MEMSCOPE_E_NOMEM. */
int memscope_timeline_finish(struct memscope_timeline *t);

enum memscope_timeline_kind {
	MEMSCOPE_TL_LIVE,  /* live bytes change by value */
	MEMSCOPE_TL_USED,  /* the pool's used (value) and reserved (total) attrs */
	MEMSCOPE_TL_BEGIN, /* an op starts (name) */
	MEMSCOPE_TL_END,   /* an op ends */
	MEMSCOPE_TL_MARK,  /* an MSTX mark (name) */
};

/* One point of the timeline. */
struct memscope_timeline_point {
	struct memscope_pos at;
	uint64_t pid, tid;
	int64_t value;	    /* LIVE: live bytes after it (before finish: the change); USED: used */
	int64_t total;	    /* USED: reserved, INT64_MIN when the row has none */
	uint32_t src, name; /* name: string id (ops, marks) */
	int32_t device;
	uint16_t pool, kind; /* kind: enum memscope_timeline_kind */
};

/* After finish: the points by input, process, then time; borrowed until the timeline is freed. */
const struct memscope_timeline_point *memscope_timeline_points(
	const struct memscope_timeline *t, size_t *n);
const struct memscope_strtab *memscope_timeline_strtab(const struct memscope_timeline *t);
/* After finish: the first point where any (input, process, device, pool) had the most live
 * bytes of all, NULL when no block had a size. Borrowed like the points. */
const struct memscope_timeline_point *memscope_timeline_peak(const struct memscope_timeline *t);

/*
 * Chrome trace event JSON: "C" counter events (one track per process, device and pool, with
 * series live, used and reserved), "B"/"E" op slices and "i" marks; timestamps in microseconds.
 * inputs[src] names input src in the process names (n_inputs of them).
 * producer as memscope_flame_write_speedscope's. 0 or MEMSCOPE_E_IO.
 */
int memscope_timeline_write_chrome(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	struct memscope_error *err);

/* The analysis interface of a struct memscope_timeline (memscope/analysis.h). */
extern const struct memscope_analysis memscope_timeline_analysis;

#endif
