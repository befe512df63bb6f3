/* The profiler's samples (COUNTER events) kept per track, compactly, for the timeline and the
 * memory page; library-internal (implemented in counters.c, the public side in
 * memscope/timeline.h). */
#ifndef MEMSCOPE_COUNTERS_H
#define MEMSCOPE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/u64map.h"
#include "memscope/event.h"
#include "memscope/timeline.h"

struct memscope_strtab;
struct ctr;

/*
 * The counter tracks of every input: zero-initialise, ms__counters_init, feed every event (only
 * COUNTER events are kept), ms__counters_finish, then read c->pub[0, c->n) (public fields only).
 * Samples are stored per track as varints of their changes (time, then each value present) in
 * chunks, so memory follows the samples kept, with at most one chunk (64 KiB) unused per
 * track.
 */
struct counters {
	struct memscope_counter_track *pub; /* [0, n) */
	struct ctr *priv;		    /* [0, n): each track's store */
	size_t n, cap;
	struct u64map index; /* hash of (src, pid, device, subtype, name) + k -> 1 + track */
	size_t last;	     /* the track of the last sample, a guess for the next */
	uint32_t active_key; /* string id of "active" */
	uint64_t empty;	     /* COUNTER events with none of the values */
	int finished;
};

/* Intern what the samples need in st. 0 or MEMSCOPE_E_NOMEM. */
int ms__counters_init(struct counters *c, struct memscope_strtab *st);
void ms__counters_free(struct counters *c);
/* One event: a COUNTER's sample kept, any other ignored; shift_ns is what was taken off its time
 * (ms__clocks_event: a file recorded apart), kept as its track's. 0 or MEMSCOPE_E_NOMEM. */
int ms__counters_feed(struct counters *c, const struct memscope_event *ev, int64_t shift_ns);
/* Every track's samples in time order, the tracks by input, process, device, subtype, name.
 * 0 or MEMSCOPE_E_NOMEM (then the store is as before, but possibly some tracks sorted). */
int ms__counters_finish(struct counters *c, const struct memscope_strtab *st);

/* The window of a track's process: 1 and [*lo, *hi] (ns, inclusive), or 0 when the process is
 * left out. ctx is ms__counters_cut's. The tracks are asked in their order. */
typedef int (*counters_window_fn)(
	void *ctx, const struct memscope_counter_track *t, uint64_t *lo, uint64_t *hi);

/*
 * The tracks cut to their process's window into *out (zero-initialised by the caller): each
 * starts at lo with the last value of each series before it (when it had one), then the samples
 * in [lo, hi]; end_ts_ns clipped to hi; a track with nothing left is dropped. c is unchanged;
 * give *out to ms__counters_replace, or free it. 0 or MEMSCOPE_E_NOMEM (*out freed).
 */
int ms__counters_cut(
	const struct counters *c, counters_window_fn fn, void *ctx, struct counters *out);
/* c becomes the cut (freed what it held; cut is emptied). */
void ms__counters_replace(struct counters *c, struct counters *cut);

#endif
