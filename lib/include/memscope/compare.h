/* Step-to-step comparison: the reference's op/kernel alignment (Myers diff) and its "Allocated
 * Memory" rule. */
#ifndef MEMSCOPE_COMPARE_H
#define MEMSCOPE_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "error.h"
#include "event.h"

struct memscope_strtab;

/* what is compared: bits, both may be set */
enum memscope_compare_level {
	MEMSCOPE_COMPARE_OP = 1u << 0,	   /* ATEN_END and ATB_END rows */
	MEMSCOPE_COMPARE_KERNEL = 1u << 1, /* KERNEL_LAUNCH rows */
};

/*
 * One input of a comparison: the rows that matter (op/kernel rows and pool rows), per device.
 * Memory grows with those rows, about 32 bytes each. Feed it every event of one input with
 * memscope_compare_side_add, or memscope_compare_side_analysis on a run.
 */
struct memscope_compare_side;

/*
 * name is the input's name for messages (copied); st is the table its events' strings are in
 * (borrowed, must outlive the side). NULL on OOM.
 */
struct memscope_compare_side *memscope_compare_side_new(
	const char *name, const struct memscope_strtab *st);
void memscope_compare_side_free(struct memscope_compare_side *s);
/* Keep ev if it matters. 0 or MEMSCOPE_E_NOMEM. */
int memscope_compare_side_add(struct memscope_compare_side *s, const struct memscope_event *ev);
/*
 * 1 when the side was fed rows that only an Ascend profiler output has (formats/msprof.md): a
 * MALLOC or FREE of a pool without an address, a COUNTER or PLAN row; so also a dump or database
 * converted from one. msMemScope writes none of these. Else 0.
 */
int memscope_compare_side_profiler(const struct memscope_compare_side *s);
/*
 * What a side of profiler data (memscope_compare_side_profiler) lacks for a comparison at level
 * (enum memscope_compare_level bits, 0: op), said in the profiler's terms: kernel launches (at
 * the kernel level alone: the profilers record none), a timeline with op slices, a device for its
 * op slices (a timeline read alone). MEMSCOPE_E_INVALID with err naming the side and what it
 * lacks, when it has no element of the level; 0 (err untouched) when it has one, or is no
 * profiler data.
 */
int memscope_compare_side_lacks(
	const struct memscope_compare_side *s, unsigned level, struct memscope_error *err);

/* The value of one element ("Allocated Memory"). */
enum memscope_compare_metric {
	/* the reference's: the size of the first framework-pool row at or after the element */
	MEMSCOPE_METRIC_REFERENCE = 0,
	/* net bytes allocated minus freed in the PTA, ATB and MINDSPORE pools by the element's
	 * process on its device between the op's START and END rows (op level only); a MALLOC
	 * that names its op (memscope_event_op: a profiler output's) counts instead for the
	 * innermost running op of that name in its process and the ops that op ran in on its
	 * thread, not for the other ops running then (formats/analyses.md "Compare: sequences and
	 * values") */
	MEMSCOPE_METRIC_DELTA,
	/* the highest `used` of the framework pool on the device between START and END, starting
	 * from its value at START (op level only) */
	MEMSCOPE_METRIC_PEAK,
};

/* How to compare. */
struct memscope_compare_opts {
	unsigned level; /* enum memscope_compare_level bits; 0 means MEMSCOPE_COMPARE_OP */
	uint64_t step; /* compare only step N of each input (its number: from 1, or ProfilerStep#N's
			  N); 0: the whole inputs */
	enum memscope_compare_metric metric;
	/* memory for the alignment's direction bits before it switches to checkpoints and twice the
	 * time (0: 64 MiB); the result is the same. Past that, memory grows as about D^1.5 / 16
	 * bytes for an edit distance D (checkpoints plus one stretch's bits) */
	size_t diff_bytes;
};

/* One output row: a (base, compare) pair of the alignment; either side may be absent. */
struct memscope_compare_row {
	int32_t device;
	uint16_t event; /* MEMSCOPE_KIND_OP_LAUNCH or MEMSCOPE_KIND_KERNEL_LAUNCH */
	uint32_t name;	/* string id (from the compare side if present, else the base side) */
	int has_base, has_cmp;
	int64_t base, cmp; /* "Allocated Memory" of each side (valid with has_*) */
	int64_t diff;	   /* cmp - base, an absent side counting 0 */
	uint64_t index;	   /* the row's place in output order, from 0 */
	/*
	 * The same pair valued by MEMSCOPE_METRIC_DELTA, for a reader of the reference's values:
	 * set under MEMSCOPE_METRIC_REFERENCE at the op level alone, when every present side's op
	 * END closed a START (an END without one has no delta). Same rules as base, cmp and diff.
	 */
	int has_delta;
	int64_t base_delta, cmp_delta, diff_delta;
};

/* Per-device counts of a comparison. */
struct memscope_compare_stats {
	uint64_t n_rows, n_matched, n_base_only, n_cmp_only;
	uint64_t n_devices; /* devices that produced rows */
	int64_t total_diff; /* saturating */
	/* delta and peak metrics: op END rows with no open START (valued 0, or the pool's usage
	 * for peak), and STARTs never closed */
	uint64_t n_unmatched_end, n_unmatched_start;
	/* delta metric: MALLOCs naming an op that was not running in their process then, counted
	 * by time instead (for every op running then) */
	uint64_t n_named_unopen;
};

/*
 * Align base and cmp as msMemScope does (formats/analyses.md, the "Compare" sections): per
 * device (ascending; the reference uses hash order), the op END and/or KERNEL_LAUNCH rows in
 * timestamp order, aligned by name with the reference's greedy Myers diff and its tie rule
 * (deletion before insertion);
 * each element's value is the size of the first row of the framework pool (PTA or MINDSPORE) at
 * or after it on its device, 0 if none; at the op level each row also carries its delta values
 * (memscope_compare_row.has_delta). fn gets every row in output order and returns 0 to go
 * on. With opts->step, each input is first cut to that step, per process: the N-th mstx
 * "step start" range (Range_start to the next Range_end of its thread), or, when the input has
 * no such range, the span ending at its N-th SYSTEM STEP row (msmemscope.step() ends step n),
 * or its ProfilerStep#N op (memscope_steps_span).
 * st is the table both sides' events came from. Errors (MEMSCOPE_E_INVALID, with the input and
 * line in err): an input mixing PTA and MINDSPORE rows, op level on MINDSPORE (but when a side
 * is a profiler output's, memscope_compare_side_profiler), an input without step N; and, when no
 * device has a row, the first side that lacks what the level compares
 * (memscope_compare_side_lacks, in the profiler's terms; otherwise no rows is no error:
 * stats->n_rows is 0). Sorts the sides' rows in place. stats may be NULL.
 */
int memscope_compare_run(struct memscope_compare_side *base, struct memscope_compare_side *cmp,
	const struct memscope_compare_opts *opts, const struct memscope_strtab *st,
	int (*fn)(void *ctx, const struct memscope_compare_row *row), void *ctx,
	struct memscope_compare_stats *stats, struct memscope_error *err);

/*
 * The metric of a comparison at level (enum memscope_compare_level bits, 0: op) whose user named
 * none, the sides read: MEMSCOPE_METRIC_DELTA at the op level alone when either side is a
 * profiler output's (memscope_compare_side_profiler: there is no msMemScope output to agree
 * with, and the reference's rule charges each allocation to the ops before it), else
 * MEMSCOPE_METRIC_REFERENCE, so dumps keep the reference's values.
 */
enum memscope_compare_metric memscope_compare_default_metric(
	const struct memscope_compare_side *base, const struct memscope_compare_side *cmp,
	unsigned level);

/* What the rows of one device add up to. */
struct memscope_compare_device {
	int32_t device;
	uint64_t n_matched, n_base_only, n_cmp_only;
	int64_t diff; /* saturating */
};

/*
 * A summary of a comparison's rows as memscope_compare_run hands them out: per device (in the
 * order the devices come) and the `top` rows of largest absolute difference (the first of equals
 * first; rows with no difference are never among them). Memory grows with the devices.
 */
struct memscope_compare_summary;
/* NULL on OOM. */
struct memscope_compare_summary *memscope_compare_summary_new(size_t top);
void memscope_compare_summary_free(struct memscope_compare_summary *s);
/* Count one row. 0 or MEMSCOPE_E_NOMEM (the row is not counted). */
int memscope_compare_summary_add(
	struct memscope_compare_summary *s, const struct memscope_compare_row *row);
/* The devices so far, borrowed until the next add or free. */
const struct memscope_compare_device *memscope_compare_summary_devices(
	const struct memscope_compare_summary *s, size_t *n);
/* The top rows so far, largest absolute difference first; borrowed like the devices. */
const struct memscope_compare_row *memscope_compare_summary_top(
	const struct memscope_compare_summary *s, size_t *n);
/*
 * What a value of a comparison made with opts means, one sentence for a person (static text):
 * the reference's rule, which names the op after which the pool next moved rather than the op
 * that allocated, says so and what the "by delta" values beside it are.
 */
const char *memscope_compare_meaning(const struct memscope_compare_opts *opts);
/*
 * The summary of a comparison for a person, as lines of text without a newline: what a value
 * means (memscope_compare_meaning), a line per device, a line per top row (its line in the
 * CSV, its values and, under the reference metric at the op level, its delta values beside
 * them where they differ), and the total of stats, " -> output" added when output is not NULL.
 * Sizes in binary units with the unit written (memscope_bytes_text); exact bytes are in the
 * CSV. line gets each line (borrowed for the call), st names the rows. Returns 0, the first
 * nonzero return of line, or MEMSCOPE_E_NOMEM.
 */
int memscope_compare_summary_text(const struct memscope_compare_summary *s,
	const struct memscope_compare_opts *opts, const struct memscope_compare_stats *stats,
	const struct memscope_strtab *st, const char *output,
	int (*line)(void *ctx, const char *text), void *ctx);

/* The reference's two header lines of memory_compare_*.csv. 0 or MEMSCOPE_E_IO. */
int memscope_compare_csv_header(FILE *out);
/* One row as the reference writes it. 0 or MEMSCOPE_E_IO. */
int memscope_compare_csv_row(
	FILE *out, const struct memscope_strtab *st, const struct memscope_compare_row *row);

/* The analysis interface of a struct memscope_compare_side (memscope/analysis.h): one input per
 * side, so a run of its own per side. */
extern const struct memscope_analysis memscope_compare_side_analysis;

#endif
