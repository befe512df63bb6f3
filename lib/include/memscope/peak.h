/* Memory over time for a picture without a trace viewer: live bytes per (input, process, device,
 * pool), the peak, the training steps, who held the memory at the peak, and the profiler's
 * samples. */
#ifndef MEMSCOPE_PEAK_H
#define MEMSCOPE_PEAK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "error.h"
#include "order.h"
#include "steps.h"
#include "timeline.h"

struct memscope_strtab;

/*
 * The analysis: feed every event of every input (src numbers them), finish, then read the tracks,
 * their points, the peak and its owners. A track is one (input, process, device, pool) of the
 * pools counted; its live bytes are the sizes of its MALLOCs minus those of the blocks freed, in
 * time order, the rule and the order of memscope_timeline (memscope/timeline.h), so both find the
 * same peak over the same pools. Times count from each input's first row of any kind (PLAN rows,
 * which have no time, are none), as memscope-leaks and the window of memscope_timeline do. The
 * COUNTER events are kept as the timeline keeps them (memscope_peak_counters). Memory grows with
 * the MALLOC and FREE rows of the pools and the ATen/ATB op rows (64 bytes each, the points a
 * timeline keeps), 4 bytes per block, the live blocks, the step boundary rows, the samples
 * (memscope_timeline_counters), and about 48 bytes per (input, process); finish adds 8 bytes per
 * distinct owner.
 */
struct memscope_peak;

struct memscope_peak_opts {
	uint64_t pools; /* MEMSCOPE_POOL_BIT bits; 0: per input, memscope_pools_default of the pools
			   it has blocks in */
};

void memscope_peak_opts_init(struct memscope_peak_opts *o);

/* o may be NULL (defaults); st is where the events' strings are and where the owners' names are
 * interned (borrowed, must outlive the analysis). NULL on OOM. */
struct memscope_peak *memscope_peak_new(
	const struct memscope_peak_opts *o, struct memscope_strtab *st);
void memscope_peak_free(struct memscope_peak *p);
/* One event. 0 or MEMSCOPE_E_NOMEM. */
int memscope_peak_feed(struct memscope_peak *p, const struct memscope_event *ev);
/* After the last event: every process's points in time order, the tracks, the peak and its
 * owners. 0 or MEMSCOPE_E_NOMEM. */
int memscope_peak_finish(struct memscope_peak *p);

/* One track: an (input, process, device, pool) of the pools counted. */
struct memscope_peak_track {
	uint32_t src;
	int32_t device;
	uint64_t pid;
	uint16_t pool;			  /* enum memscope_subtype */
	int64_t peak;			  /* its most live bytes (0: never above 0) */
	int64_t start_bytes;		  /* live bytes at from_ts_ns (0 without a window) */
	int64_t end_bytes;		  /* live bytes after its last point */
	struct memscope_pos peak_at;	  /* the first point where it had them ({from_ts_ns, 0}:
					     at the window's start) */
	uint64_t first_ts_ns, last_ts_ns; /* its first and last point (from_ts_ns: none) */
	uint64_t end_ts_ns;		  /* the last row of its process (ops included) */
	/* the time it is drawn over: from its first point (from the window's start) to end_ts_ns;
	 * to_ts_ns == end_ts_ns (kept apart for the window's end) */
	uint64_t from_ts_ns, to_ts_ns;
	size_t n_points; /* points (in the window) */
};

/* After finish: the tracks in order of (input, process, device, pool), borrowed until the
 * analysis is freed; *n gets their number. */
const struct memscope_peak_track *memscope_peak_tracks(const struct memscope_peak *p, size_t *n);

/* One point: a track's live bytes after a MALLOC or a FREE. */
struct memscope_peak_point {
	uint64_t ts_ns;
	int64_t bytes;
	uint32_t track; /* index into memscope_peak_tracks */
};

/*
 * After finish: call fn for every point of every track, each process's in time order (then by
 * input and process), until it returns non-zero, which is then returned; 0 at the end.
 */
int memscope_peak_foreach_point(const struct memscope_peak *p,
	int (*fn)(void *ctx, const struct memscope_peak_point *pt), void *ctx);

/*
 * The time input src's times count from: its first row of any kind (the timestamp, ns), the
 * origin of memscope-leaks' times and of the --from/--to of memscope_timeline_window, so a time
 * read on the page can be given to --from. 0 when src had no row.
 */
uint64_t memscope_peak_origin(const struct memscope_peak *p, uint32_t src);
/* After finish: the time axis, ns after each input's origin: [0, the longest time from an origin
 * to the last row of a process of its input with live bytes or samples], or after
 * memscope_peak_window the window's [start, end] over the processes kept. Both 0 without tracks
 * or samples. */
void memscope_peak_axis(const struct memscope_peak *p, uint64_t *from_ns, uint64_t *to_ns);

/*
 * After finish, once: keep what each process did in window w (memscope_timeline_window's struct
 * and rules: [from, to) in ns after the input's first row, or absolute with the _ABS flags; or
 * step w->step of EACH process, its memscope_steps_span, boundary rows included). Each track
 * starts at the window's start with the live bytes it had then (start_bytes); its points outside
 * are no longer visited; its peak, and the peak of all with its owners, are found again within
 * the window (the live bytes at the start count, at the start). A track with neither a point nor
 * live bytes in the window, and a process with no row in it, are left out. The sample tracks are
 * cut as memscope_timeline_window cuts them, by the window of their process's rows of any kind
 * (memscope_peak_counters). inputs[src] names
 * input src in messages (n_inputs of them). *n_left_out (may be NULL) gets the processes left
 * out of a step window for having no step w->step.
 * Returns 0; MEMSCOPE_E_ARG (nothing changed) before finish or twice, for a step window with a
 * time bound, or a time window that ends before it starts; MEMSCOPE_E_INVALID (nothing changed;
 * err names the input) when an input has no steps or no process of it step w->step, or nothing
 * of any input is in the window; MEMSCOPE_E_NOMEM (nothing changed).
 */
int memscope_peak_window(struct memscope_peak *p, const struct memscope_timeline_window *w,
	const char *const *inputs, size_t n_inputs, uint64_t *n_left_out,
	struct memscope_error *err);

/* After finish: the pools counted in any input (MEMSCOPE_POOL_BIT bits) and, in *seen (may be
 * NULL), the pools any input had blocks in. */
uint64_t memscope_peak_pools(const struct memscope_peak *p, uint64_t *seen);

/* After finish: the track of the peak, the first point where any track had the most live bytes
 * of all (the peak of memscope_timeline over the same pools); -1 when no block had a size. */
long memscope_peak_track_of_peak(const struct memscope_peak *p);

/* What an owner is named by, the first a block has of: */
enum memscope_peak_by {
	MEMSCOPE_PEAK_BY_OWNER,	 /* the MALLOC's `owner` attr (PTA@model@weight) */
	MEMSCOPE_PEAK_BY_OP,	 /* the op its MALLOC names (memscope_event_op: the profiler's
				    operator_memory Name), else the innermost ATen or ATB op open on
				    its thread at the MALLOC */
	MEMSCOPE_PEAK_BY_PYTHON, /* the innermost frame of its Python call stack */
	MEMSCOPE_PEAK_BY_C,	 /* the innermost frame of its C stack (memscope_frame_text) */
	MEMSCOPE_PEAK_BY_NONE,	 /* none of these: "[POOL, no owner, op or stack]" */
};

/* Who held bytes at the peak: the blocks of the peak's track live at its moment, by owner. */
struct memscope_peak_owner {
	uint32_t name;	 /* string id of its name (st of memscope_peak_new) */
	uint32_t by;	 /* enum memscope_peak_by */
	uint64_t bytes;	 /* > 0 */
	uint64_t blocks; /* live blocks */
};

/*
 * After finish: the owners of the bytes live at the peak, most bytes first (then by name id),
 * borrowed until the analysis is freed; every owner with bytes is there, so their bytes add up to
 * the peak's live bytes (on an input whose FREEs come after their MALLOCs). NULL and 0 without a
 * peak.
 */
const struct memscope_peak_owner *memscope_peak_owners(const struct memscope_peak *p, size_t *n);

/* After finish: the profiler's samples, tracks and order as memscope_timeline_counters' (their
 * end_ts_ns the last row of their process, the window's end if earlier); borrowed until the
 * analysis is freed or cut. */
const struct memscope_counter_track *memscope_peak_counters(
	const struct memscope_peak *p, size_t *n);

/* After finish (or a cut): the profiler's memory_record samples of live track k's pool (a POOL
 * counter track of its input, process and device whose component is that pool) with an
 * allocated series: its index in memscope_peak_counters, -1 when there is none. Their allocated
 * bytes count every block of the pool; the live bytes only the blocks whose MALLOC is in the
 * input (an Ascend profiler's operator_memory has none from before its window). */
long memscope_peak_samples_of(const struct memscope_peak *p, size_t k);

/* The steps of every process (fed every event, resolved at finish); borrowed until the analysis
 * is freed. */
const struct memscope_steps *memscope_peak_steps(const struct memscope_peak *p);
/* As memscope_timeline_clock_note: whether input src's files were recorded far apart in time,
 * and the line that says so. */
int memscope_peak_clock_note(const struct memscope_peak *p, uint32_t src, char *buf, size_t n);
/* The string table of memscope_peak_new. */
const struct memscope_strtab *memscope_peak_strtab(const struct memscope_peak *p);

/*
 * Memory over time as one HTML file that any web browser opens with nothing else (inline SVG, a
 * small inline script, no file or address loaded): a curve of live bytes per track against
 * seconds after its input's first row (memscope_peak_origin; the axis of memscope_peak_axis, the
 * window's after memscope_peak_window), written by memscope_seconds_text (at most 32 tracks, those
 * with the highest peaks; the legend says how many more), each cut to one column per pixel by its
 * lowest and highest value there so no peak is lost; the peak marked with its bytes and time; the
 * steps of the peak's process (or the first process with steps) as bands numbered; the values under
 * the pointer (the highest of each curve in the pixel's time); and the owners at the peak with
 * bytes and share. Bytes are written in binary units (memscope_bytes_text). inputs[src] names input
 * src (n_inputs of them), shown by the shortest ending of '/'-separated parts that tells the inputs
 * apart. The rows of a file recorded far apart in time from its input's first ones are drawn from
 * the input's start (memscope_peak_clock_note: a note under the plot, and their curves' labels
 * end in " (own clock, 342.1 days later)"). The file's size follows the tracks and steps drawn,
 * not the points. 0, MEMSCOPE_E_NOMEM or MEMSCOPE_E_IO.
 */
int memscope_peak_write_html(FILE *out, const struct memscope_peak *p, const char *const *inputs,
	size_t n_inputs, struct memscope_error *err);

/* The analysis interface of a struct memscope_peak (memscope/analysis.h). */
extern const struct memscope_analysis memscope_peak_analysis;

#endif
