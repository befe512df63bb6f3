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
 * MSTX marks as instants; the training steps of every process (memscope/steps.h). Feed every
 * event, finish, optionally cut to a window (memscope_timeline_window), write. Memory grows with
 * the MALLOC/FREE rows of the pools, the op and mark rows (64 bytes each), the step boundary rows
 * (memscope_steps) and about 48 bytes per (input, process): the output is a timeline, as long as
 * the input's history. One object, one thread.
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
	uint64_t first_ts_ns, last_ts_ns; /* its earliest and latest row of any kind */
	uint64_t seen;			  /* pools it had MALLOC or FREE rows in (POOL_BIT bits) */
	uint64_t counted;		  /* after finish: the pools whose points were kept */
};

/* Input src (the events' src), NULL when it had no event. Borrowed until the timeline is freed. */
const struct memscope_timeline_input *memscope_timeline_input(
	const struct memscope_timeline *t, uint32_t src);

/* One training step of one process, as drawn. */
struct memscope_timeline_step {
	uint32_t src;
	uint64_t pid;
	uint64_t n;		   /* the step's number, from 1 */
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
 * and reserved), the ops open then start there, and the ops still open at its end (or at the
 * process's last row, if earlier) end there; marks and points outside are dropped; the steps are
 * clipped to it and the peak is found again within it. A process with nothing in the window is
 * left out. inputs[src] names input src in messages (n_inputs of them, every input of the run).
 * *n_left_out (may be NULL) gets the processes left out of a step window because they have no
 * step w->step although another process of their input has.
 * Returns 0; MEMSCOPE_E_ARG (nothing changed) when called before finish or twice, for a step
 * window with a time bound or with live_only, or a time window that ends before it starts;
 * MEMSCOPE_E_INVALID (nothing changed; err names the input) when an input has no steps, or no
 * process of it has step w->step, or nothing of any input is in the window; MEMSCOPE_E_NOMEM
 * (nothing changed).
 */
int memscope_timeline_window(struct memscope_timeline *t, const struct memscope_timeline_window *w,
	const char *const *inputs, size_t n_inputs, uint64_t *n_left_out,
	struct memscope_error *err);

/* How a Chrome trace is written. */
struct memscope_timeline_chrome_opts {
	/*
	 * Counter samples that cannot change the curve at this resolution are left out: a sample
	 * with the values of the one before it on its track, and within one tick of tick_ns (ticks
	 * from the Unix epoch) all but the first, the lowest and highest of each series and the
	 * last, each at its own time and in order. 0 keeps every sample. Default 1000 (1 us, the
	 * trace format's unit).
	 */
	uint64_t tick_ns;
};

void memscope_timeline_chrome_opts_init(struct memscope_timeline_chrome_opts *o);

/* What memscope_timeline_write_chrome_opts wrote. */
struct memscope_timeline_chrome_stats {
	uint64_t samples, samples_left_out; /* counter samples written, and those left out */
	uint64_t processes, slices, steps;  /* process groups, op slices, step slices */
};

/*
 * Chrome trace event JSON: one process group per (input, process), whose trace pid is 1 + its
 * place in (input, pid) order (process names "pid P (FILE)", FILE the input's last '/'-separated
 * part; labels with the input's name as given; sorted by input, then pid); in each, "C" counter
 * events with one series, bytes, on three tracks per device and pool: "PTA device 0 live",
 * "... used" and "... reserved" (the USED points' value and total), the samples o leaves out
 * left out; a HAL track of a process with points of a pool carved out of HAL memory names them
 * ("HAL device 0 live (holds PTA)"); "X" op slices per thread (an op still open at its
 * process's last point ends there); "i" marks; and the steps as "X" slices "step N" on a thread
 * named "steps" (tid: the smallest from 1 that no op or mark of the process has). Timestamps
 * are microseconds, exact to the ns (up to three decimals), since otherData.origin_s: the
 * earliest input's first row rounded down to a second. inputs[src] names input src (n_inputs of
 * them); producer as memscope_flame_write_speedscope's; o NULL: defaults; stats may be NULL.
 * 0, MEMSCOPE_E_NOMEM or MEMSCOPE_E_IO (stats filled either way).
 */
int memscope_timeline_write_chrome_opts(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	const struct memscope_timeline_chrome_opts *o, struct memscope_timeline_chrome_stats *stats,
	struct memscope_error *err);
/* memscope_timeline_write_chrome_opts with the defaults. */
int memscope_timeline_write_chrome(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	struct memscope_error *err);

/* The analysis interface of a struct memscope_timeline (memscope/analysis.h). */
extern const struct memscope_analysis memscope_timeline_analysis;

#endif
