/* Memory over time: live bytes, pool usage, ops, marks and training steps per process, for trace
 * viewers. */
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
 * MSTX marks as instants; the training steps of every process (memscope/steps.h); the
 * profiler's samples (COUNTER events, memscope_timeline_counters). PLAN events have no time: they
 * are ignored. The rows of a file recorded far apart in time from its input's first files (a
 * profiler folder's: memscope_timeline_clock_note) are drawn from the input's first row, their
 * times shifted by the same amount; every time below is on that axis. Feed every event, finish,
 * optionally cut to a window (memscope_timeline_window), write. Memory grows with the MALLOC/FREE
 * rows of the pools, the op and mark rows (64 bytes each), the step boundary rows (memscope_steps),
 * the samples (5 to 15 bytes each) and about 48 bytes per (input, process): the output is a
 * timeline, as long as the input's history. One object, one thread.
 */
struct memscope_timeline;

/*
 * pools: MEMSCOPE_POOL_BIT bits (memscope/blocks.h); 0: each input's memscope_pools_default of
 * the pools it had MALLOC or FREE rows in, chosen at finish (the framework pools when present,
 * not HAL, whose blocks hold theirs). live_only: keep the live bytes only (no used samples, ops,
 * marks or steps). st as memscope_flame_new's. NULL on OOM.
 */
struct memscope_timeline *memscope_timeline_new(
	uint64_t pools, int live_only, struct memscope_strtab *st);
void memscope_timeline_free(struct memscope_timeline *t);
/* One event. 0 or MEMSCOPE_E_NOMEM. */
int memscope_timeline_feed(struct memscope_timeline *t, const struct memscope_event *ev);
/* Choose the pools, put everything in time order, turn the live changes into live bytes, find
 * the peak and the steps. 0 or MEMSCOPE_E_NOMEM. */
int memscope_timeline_finish(struct memscope_timeline *t);

enum memscope_timeline_kind {
	MEMSCOPE_TL_LIVE,  /* live bytes change by value; with the pool's used (used) and reserved
			      (total) attrs when its row has them */
	MEMSCOPE_TL_USED,  /* the pool's used (value) and reserved (total) attrs of a row that
			      changed no live bytes */
	MEMSCOPE_TL_BEGIN, /* an op starts (name) */
	MEMSCOPE_TL_END,   /* an op ends */
	MEMSCOPE_TL_MARK,  /* an MSTX mark (name) */
};

/* One point of the timeline (64 bytes: a row of a pool is one point, its used bytes in the place
 * of the thread, which only ops and marks need). */
struct memscope_timeline_point {
	struct memscope_pos at;
	uint64_t pid;
	union {
		uint64_t tid; /* BEGIN, END, MARK: the thread */
		int64_t used; /* LIVE, USED: the pool's used bytes, INT64_MIN when the row has none
			       */
	};
	int64_t value;	    /* LIVE: live bytes after it (before finish: the change); USED: used */
	int64_t total;	    /* LIVE, USED: reserved, INT64_MIN when the row has none */
	uint32_t src, name; /* name: string id (ops, marks) */
	int32_t device;
	uint16_t pool, kind; /* kind: enum memscope_timeline_kind */
};

/* After finish: the points by input, process, then time; borrowed until the timeline is freed
 * or cut (memscope_timeline_window). */
const struct memscope_timeline_point *memscope_timeline_points(
	const struct memscope_timeline *t, size_t *n);
const struct memscope_strtab *memscope_timeline_strtab(const struct memscope_timeline *t);
/* After finish: the first point where any (input, process, device, pool) had the most live
 * bytes of all (in the window, after a cut), NULL when no block had a size. Borrowed like the
 * points. */
const struct memscope_timeline_point *memscope_timeline_peak(const struct memscope_timeline *t);

/* What the timeline knows of one input. */
struct memscope_timeline_input {
	uint64_t first_ts_ns, last_ts_ns; /* its earliest and latest row of any kind but PLAN rows,
					     which have no time */
	uint64_t seen;			  /* pools it had MALLOC or FREE rows in (POOL_BIT bits) */
	uint64_t counted;		  /* after finish: the pools whose points were kept */
	uint64_t samples;		  /* its COUNTER rows (the profiler's samples), of the whole
					     input (a window does not change it) */
};

/* Input src (the events' src), NULL when it had no event. Borrowed until the timeline is freed. */
const struct memscope_timeline_input *memscope_timeline_input(
	const struct memscope_timeline *t, uint32_t src);

/* ---- the profiler's samples (COUNTER events) ---- */

/* The series of a counter track: bits of memscope_counter_track.series, places in v[]. */
enum memscope_counter_series {
	MEMSCOPE_CTR_USED, /* the event's used: a pool's allocated bytes (POOL), the value (NPU_MEM)
			    */
	MEMSCOPE_CTR_TOTAL,  /* its total: reserved bytes (POOL, MODULE) */
	MEMSCOPE_CTR_ACTIVE, /* its `active` attr: active bytes (POOL) */
	MEMSCOPE_CTR_N
};

/*
 * The samples of one (input, process, device, COUNTER subtype, name): a pool of the profiler's
 * memory_record (POOL, name the component: PTA, GE, PTA+GE, APP, ...), one series of its npu_mem
 * or the timeline's NPU MEM counters (NPU_MEM, name APP/Memory, Device/HBM, ...), one module of
 * npu_module_mem (MODULE, name HCCL, ...). A COUNTER event with none of the values is not a
 * sample.
 */
struct memscope_counter_track {
	uint32_t src;
	int32_t device;
	uint64_t pid;
	uint16_t subtype;   /* MEMSCOPE_SUB_POOL_SAMPLE, _NPU_MEM or _MODULE_SAMPLE */
	uint16_t series;    /* 1 << MEMSCOPE_CTR_* of the series some sample has */
	uint16_t pool;	    /* POOL: the pool of its component when that is exactly one (PTA, GE,
			       MindSpore's MINDSPORE: memscope_event.pool), else 0 */
	uint32_t name;	    /* string id of the events' name */
	int64_t shift_ns;   /* its file was recorded far apart from its input's first ones: ns
			       taken off its samples' times, which start with the input's (formats/
			       msprof.md "Files far apart in time"); 0 for nearly every track */
	uint64_t n_samples; /* (in the window, after a cut) */
	uint64_t first_ts_ns, last_ts_ns; /* its first and last sample */
	/* the time its last value holds to: its process's last row of any kind (after a cut, the
	 * window's end if earlier) */
	uint64_t end_ts_ns;
	int64_t max[MEMSCOPE_CTR_N];	    /* each series' highest value (INT64_MIN: no sample) */
	uint64_t max_ts_ns[MEMSCOPE_CTR_N]; /* the first sample with it */
	const void *data;		    /* the samples, for memscope_counter_next */
};

/* One sample: its time and the values it has (bytes). */
struct memscope_counter_sample {
	uint64_t ts_ns;
	unsigned has; /* 1 << MEMSCOPE_CTR_* of the values set in v */
	int64_t v[MEMSCOPE_CTR_N];
};

/* A walk through a track's samples (the fields are the walk's own). */
struct memscope_counter_iter {
	const void *chunk;
	size_t off;
	uint64_t left;
	struct memscope_counter_sample prev;
};

/* Start a walk through t's samples in time order (the order of the events for samples at one
 * time). Valid while t is. */
void memscope_counter_iter_init(
	struct memscope_counter_iter *it, const struct memscope_counter_track *t);
/* The next sample into *s: 1, or 0 at the end. */
int memscope_counter_next(struct memscope_counter_iter *it, struct memscope_counter_sample *s);

/* The profiler's file a COUNTER subtype comes from, as its users know it: "memory_record",
 * "npu_mem", "npu_module_mem"; NULL for another subtype. */
const char *memscope_counter_source(unsigned subtype);

/*
 * After finish: the counter tracks by input, process, device, subtype, then name (strcmp of the
 * text), *n their number; none with live_only. Borrowed until the timeline is freed or cut.
 * Memory: the samples are kept compactly per track, their changes as varints (about 5 to 15
 * bytes a sample); a track whose events came out of time order is sorted at finish, which
 * takes 48 bytes a sample of that track for the while.
 */
const struct memscope_counter_track *memscope_timeline_counters(
	const struct memscope_timeline *t, size_t *n);

/* One training step of one process, as drawn. */
struct memscope_timeline_step {
	uint32_t src;
	uint64_t pid;
	uint64_t n; /* the step's number: from 1, a ProfilerStep#N's N (memscope_steps_number) */
	uint64_t start_ns, end_ns; /* its span (end_ns >= start_ns); clipped to the window */
	uint16_t source;	   /* enum memscope_step_source (memscope/steps.h) */
	uint16_t open;		   /* 1: no row ends it: it runs to the next step or the end */
};

/*
 * After finish: the steps of every process by input, process, then number, from mstx "step
 * start" ranges or SYSTEM STEP rows (memscope/steps.h): an mstx step from its Range_start to the
 * Range_end that closes it, else to the next step start (1 ns before it), else to the process's
 * last row; SYSTEM STEP row n ends step n, which starts with the row before it (step 1 with the
 * process's first row); the step still running after the last STEP row is not one (as
 * memscope-compare --step). Borrowed like the points; none with live_only.
 */
const struct memscope_timeline_step *memscope_timeline_steps(
	const struct memscope_timeline *t, size_t *n);

/* What part of each process a window keeps (memscope_timeline_window). */
struct memscope_timeline_window {
	/* step N (from 1) of each process: its span (memscope_timeline_steps), the boundary rows
	 * included (a SYSTEM step n > 1 starts 1 ns after STEP row n - 1); 0: a time window */
	uint64_t step;
	/* [from, to) in ns after the input's first row (memscope_timeline_input), or since the
	 * Unix epoch with MEMSCOPE_TL_FROM_ABS / MEMSCOPE_TL_TO_ABS; each with its flag */
	uint64_t from_ns, to_ns;
	unsigned flags; /* enum memscope_timeline_window_flag bits */
};

enum memscope_timeline_window_flag {
	MEMSCOPE_TL_FROM = 1u << 0,	/* from_ns is set */
	MEMSCOPE_TL_TO = 1u << 1,	/* to_ns is set */
	MEMSCOPE_TL_FROM_ABS = 1u << 2, /* from_ns is a timestamp, not an offset */
	MEMSCOPE_TL_TO_ABS = 1u << 3,	/* to_ns is a timestamp, not an offset */
};

/* The times [*lo_ns, *hi_ns] the --from/--to bounds of w cover in an input whose first row is
 * at first_ns (relative bounds count from it, a bound absent is the start or the end); 1, or 0
 * when the window ends before it starts. The one rule of the timeline's and the page's windows. */
int memscope_timeline_window_ns(const struct memscope_timeline_window *w, uint64_t first_ns,
	uint64_t *lo_ns, uint64_t *hi_ns);

/*
 * After finish, once: keep what each process did in the window w and nothing else. Each
 * process's counters start at the window's start with the values they had then (live bytes, used
 * and reserved, each series of the profiler's samples), the ops open then start there, and the ops
 * still open at its end (or at the process's last row, if earlier) end there; marks and points
 * outside are dropped; the steps are clipped to it and the peak is found again within it. A process
 * with nothing in the window is left out. inputs[src] names input src in messages (n_inputs of
 * them, every input of the run). *n_left_out (may be NULL) gets the processes left out of a step
 * window because they have no step w->step although another process of their input has. Returns 0;
 * MEMSCOPE_E_ARG (nothing changed) when called before finish or twice, for a step window with a
 * time bound or with live_only, or a time window that ends before it starts; MEMSCOPE_E_INVALID
 * (nothing changed; err names the input) when an input has no steps, or no process of it has step
 * w->step, or nothing of any input is in the window; MEMSCOPE_E_NOMEM (nothing changed).
 */
int memscope_timeline_window(struct memscope_timeline *t, const struct memscope_timeline_window *w,
	const char *const *inputs, size_t n_inputs, uint64_t *n_left_out,
	struct memscope_error *err);

/* How a Chrome trace is written. */
struct memscope_timeline_chrome_opts {
	/*
	 * Counter samples that cannot change the curve at this resolution are left out: a sample
	 * with the value of the one before it on its track, and within one tick of tick_ns (ticks
	 * from the Unix epoch) all but the lowest, the highest and the last, each at its own time
	 * and in order (so each tick draws the same lowest, highest and last value, counting the
	 * one held from before it). 0 keeps every sample. MEMSCOPE_TL_TICK_AUTO (the default): the
	 * finest of 1 us (the trace format's unit), 2 us, 5 us, 10 us, ... 1 s at which the trace
	 * holds at most MEMSCOPE_TL_AUTO_SAMPLES counter samples (each track at most its samples,
	 * or three per tick of its span): every sample of most traces, about 50 MB of counters at
	 * most for the largest.
	 */
	uint64_t tick_ns;
};

#define MEMSCOPE_TL_TICK_AUTO UINT64_MAX
#define MEMSCOPE_TL_AUTO_SAMPLES 500000

void memscope_timeline_chrome_opts_init(struct memscope_timeline_chrome_opts *o);

/* What memscope_timeline_write_chrome_opts wrote. */
struct memscope_timeline_chrome_stats {
	uint64_t samples, samples_left_out; /* counter samples written, and those left out */
	uint64_t tick_ns;		    /* the resolution they were left out at (0: none) */
	uint64_t modules_left_out;	    /* npu_module_mem tracks never above 0, left out */
	uint64_t processes, slices, steps;  /* process groups, op slices, step slices */
	int mb;				    /* the counters are in MB (else in bytes) */
};

/*
 * Chrome trace event JSON: one process group per (input, process), whose trace pid is 1 + its
 * place in (input, pid) order (process names "pid P (FILE)", FILE the input's last '/'-separated
 * part, or FILE alone when the process is not known (MEMSCOPE_ID_NONE); labels with the input's
 * name as given; sorted by input, then pid); in each, "C" counter events with one series named
 * after its unit, the same for every counter of the trace: "MB" (1048576 bytes, six decimals at
 * most; the profiler's unit) when an input has the profiler's samples
 * (memscope_timeline_input.samples), else "bytes": three tracks per device and pool, "PTA device 0
 * live", "... used" and "... reserved" (the USED points' value and total); a HAL track of a process
 * with points of a pool carved out of HAL memory names them ("HAL device 0 live (holds PTA)"); the
 * profiler's samples (memscope_timeline_counters), each series a counter of its own: "NPU0 PTA
 * (memory_record) allocated", "... reserved", "... active", "NPU0 APP/Memory", "NPU0 module HCCL"
 * ("host " for the host, nothing for no device), but the modules never above 0 (they carry nothing:
 * counted in stats); each track in time order, the samples o leaves out left out; every counter
 * event on tid 0; "X" op slices per thread (an op still open at its process's last point ends
 * there); "i" marks; and the steps as "X" slices "step N" on a thread named "steps" (tid: the
 * smallest from 1 that no op or mark of the process has). Timestamps are microseconds, exact to the
 * ns (up to three decimals), since otherData.origin_s: the earliest input's first row rounded down
 * to a second; otherData.resolution_ns is the tick the samples were left out at (0: none). An
 * input whose files were recorded far apart (memscope_timeline_clock_note) has the note in its
 * process labels and in otherData.clocks ("input N: NOTE"), and the counters of a shifted file
 * end in " (own clock, 342.1 days later)".
 * inputs[src] names input src (n_inputs of them); producer as memscope_flame_write_speedscope's; o
 * NULL: defaults; stats may be NULL. 0, MEMSCOPE_E_NOMEM or MEMSCOPE_E_IO (stats filled either
 * way).
 */
int memscope_timeline_write_chrome_opts(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	const struct memscope_timeline_chrome_opts *o, struct memscope_timeline_chrome_stats *stats,
	struct memscope_error *err);
/* memscope_timeline_write_chrome_opts with the defaults. */
int memscope_timeline_write_chrome(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	struct memscope_error *err);

/*
 * When the files of input src were recorded far apart in time (a profiler folder's, formats/
 * msprof.md "Files far apart in time"): 1 and one line into buf (n bytes, NUL-terminated) naming
 * them and the gap, the text of the reader's notice; else 0. Their rows are drawn from the input's
 * first one: each counter track says so (memscope_counter_track.shift_ns).
 */
int memscope_timeline_clock_note(
	const struct memscope_timeline *t, uint32_t src, char *buf, size_t n);

/* The analysis interface of a struct memscope_timeline (memscope/analysis.h). */
extern const struct memscope_analysis memscope_timeline_analysis;

#endif
