/* The live-bytes series that memscope_peak and memscope_timeline draw: each MALLOC/FREE row's
 * changes of its pool's live bytes, the one order of a series' points, and the running sums that
 * turn the changes into the live bytes of each (process, device, pool); library-internal. */
#ifndef MEMSCOPE_LIVE_SERIES_H
#define MEMSCOPE_LIVE_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "../core/u64map.h"
#include "memscope/event.h"
#include "memscope/order.h"

struct memscope_blocks;

/* One change of live bytes made by a row. */
struct ms__live_change {
	int64_t bytes;	/* > 0: a new block's size, added; < 0: a freed (or replaced) block's */
	int32_t device; /* the block's */
	uint16_t pool;
	uint64_t tag; /* bytes < 0: the block's tag (memscope_blocks_tag), 0 when it has none */
};

/*
 * Feed ev (a MALLOC or FREE row) to blocks and write the row's changes of live bytes into
 * out[0, *n), in the order the row makes them: a freed, shadow-freed or replaced block of some
 * size taken away, then a new block of some size added (it is then the last block fed, for
 * memscope_blocks_tag). Blocks without a size change nothing. Returns 0, or
 * memscope_blocks_feed's error (then *n is 0).
 */
int ms__live_changes(struct memscope_blocks *blocks, const struct memscope_event *ev,
	struct ms__live_change out[2], size_t *n);

/* The key of a (device, pool) among one process's sums. */
static inline uint64_t ms__live_pool_key(int32_t device, uint16_t pool)
{
	return (uint64_t)(uint32_t)device << 16 | pool;
}

/*
 * The one order of a series' points: memscope_time_cmp's (input, process, place in time), then
 * the kind, smaller first (the caller numbers its kinds: a row's live change before what else the
 * row gives), then the value, smaller first (a replaced block's removal before the new block of
 * the same row). Returns <0, 0, >0 like strcmp.
 */
static inline int ms__live_cmp(uint32_t src_a, uint64_t pid_a, struct memscope_pos at_a,
	unsigned kind_a, int64_t value_a, uint32_t src_b, uint64_t pid_b, struct memscope_pos at_b,
	unsigned kind_b, int64_t value_b)
{
	int c = memscope_time_cmp(src_a, pid_a, at_a, src_b, pid_b, at_b);

	if (c)
		return c;
	if (kind_a != kind_b)
		return (kind_a > kind_b) - (kind_a < kind_b);
	return (value_a > value_b) - (value_a < value_b);
}

/* Defines `static int name(const void *, const void *)`: ms__live_cmp of two `type`s (each with
 * src, pid, at, kind and value), for ms__sort_rows. */
#define MS__LIVE_CMP_FN(name, type)                                                                \
	static int name(const void *pa, const void *pb)                                            \
	{                                                                                          \
		const type *a = pa, *b = pb;                                                       \
                                                                                                   \
		return ms__live_cmp(a->src, a->pid, a->at, a->kind, a->value, b->src, b->pid,      \
			b->at, b->kind, b->value);                                                 \
	}

/* The order of a series' tracks, the live bytes' and the profiler samples' alike (the memory page
 * draws them side by side): by input, process, device; 0 for the caller to go on. */
static inline int ms__track_cmp(uint32_t src_a, uint64_t pid_a, int32_t device_a, uint32_t src_b,
	uint64_t pid_b, int32_t device_b)
{
	if (src_a != src_b)
		return src_a < src_b ? -1 : 1;
	if (pid_a != pid_b)
		return pid_a < pid_b ? -1 : 1;
	if (device_a != device_b)
		return device_a < device_b ? -1 : 1;
	return 0;
}

/*
 * The running live bytes of one process's (device, pool)s, each given a slot in the order it
 * first changes. Zero-initialise, call ms__live_sums_process at the first point of each process
 * (of the points in ms__live_cmp's order), ms__live_sums_add for each live change, and
 * ms__live_sums_free at the end. One sweep, one thread.
 */
struct ms__live_sums {
	struct u64map slot_of; /* ms__live_pool_key -> a: slot, b: the process (gen) */
	int64_t *bytes;	       /* [0, n): each slot's live bytes */
	size_t n, cap;
	uint64_t gen; /* 1 + the process changes so far */
};

/* A new process: its (device, pool)s start from 0 bytes, its slots from 0. */
void ms__live_sums_process(struct ms__live_sums *s);
/*
 * change applied to (device, pool) of the current process: *after gets its live bytes after it
 * (saturating at INT64_MIN and INT64_MAX: sizes near 2^63 are hostile, not real), *slot its slot.
 * Returns 1 when the slot is new (then *slot is the number of slots before it), 0 when not, or
 * MEMSCOPE_E_NOMEM (nothing changed).
 */
int ms__live_sums_add(struct ms__live_sums *s, int32_t device, uint16_t pool, int64_t change,
	int64_t *after, size_t *slot);
void ms__live_sums_free(struct ms__live_sums *s);

#endif
