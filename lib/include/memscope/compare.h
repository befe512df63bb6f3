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
	/* the reference's: the size of the first framework-pool row (PTA, MINDSPORE, or
	 * CUDA_CACHING for a CUDA input) at or after the element */
	MEMSCOPE_METRIC_REFERENCE = 0,
	/* what the op allocated minus freed with the ops nested in it (op level only): its own
	 * bytes (memscope_compare_row.base_own) plus those of the ops that ran in it on its thread
	 * (formats/analyses.md "Compare: what an op allocated") */
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
	 * What the op itself allocated minus freed, each side (formats/analyses.md "Compare: what
	 * an op allocated"): every framework-pool MALLOC and FREE counts for one op at most, the
	 * innermost one running on its thread, so these add up without counting a byte twice. Set
	 * at the op level alone, under every metric, when every present side's op END closed a
	 * START (an END without one has none). Same rules as base, cmp and diff.
	 */
	int has_own;
	int64_t base_own, cmp_own, diff_own;
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
	 * by time instead (for the op running then) */
	uint64_t n_named_unopen;
	/* op level: the net framework-pool bytes of each side that no op allocated (rows made
	 * while no op ran on their thread), all devices; saturating */
	int64_t base_outside, cmp_outside;
	/* devices whose sequences were too different for the exact diff within its bound (2^27
	 * steps): aligned by anchors instead, so their rows may differ from the reference's
	 * (formats/analyses.md "Compare: alignment") */
	uint64_t n_anchored;
};

/*
 * Align base and cmp as msMemScope does (formats/analyses.md, the "Compare" sections): per
 * device (ascending; the reference uses hash order), the op END and/or KERNEL_LAUNCH rows in
 * timestamp order, aligned by name with the reference's greedy Myers diff and its tie rule
 * (deletion before insertion);
 * each element's value is the size of the first row of the framework pool (PTA, MINDSPORE or
 * CUDA_CACHING) at or after it on its device, 0 if none; at the op level each row also carries its
 * delta values (memscope_compare_row.has_delta). fn gets every row in output order and returns 0 to
 * go on. With opts->step, each input is first cut to that step, per process: the N-th mstx "step
 * start" range (Range_start to the next Range_end of its thread), or, when the input has no such
 * range, the span ending at its N-th SYSTEM STEP row (msmemscope.step() ends step n), or its
 * ProfilerStep#N op (memscope_steps_span). st is the table both sides' events came from. Errors
 * (MEMSCOPE_E_INVALID, with the input and line in err): an input mixing framework pools (PTA,
 * MINDSPORE, CUDA_CACHING), inputs of which neither has a framework-pool row (PTA, ATB, MINDSPORE,
 * CUDA_CACHING) of a numbered device, the peak metric on a pool without `used` (a CUDA_CACHING row
 * without one takes the device's live CUDA_CACHING bytes so far), op level on MINDSPORE (but when a
 * side is a profiler output's, memscope_compare_side_profiler), an input without step N; and, when
 * no device has a row, the first side that lacks what the level compares
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

/*
 * What the rows of one device add up to. At the op level (memscope_compare_summary_new) the sums
 * are of what each op allocated itself (memscope_compare_row.base_own ...), so no byte counts
 * twice; else of the rows' values.
 */
struct memscope_compare_device {
	int32_t device;
	uint64_t n_matched, n_base_only, n_cmp_only;
	uint64_t n_unknown;	 /* op level: rows without has_own, not in the sums */
	int64_t base, cmp, diff; /* saturating */
};

/* The rows of one name on one device, summed as a device's are. */
struct memscope_compare_group {
	int32_t device;
	uint16_t event; /* its first row's */
	uint32_t name;
	uint64_t n_rows, n_unknown;
	int64_t base, cmp, diff; /* saturating */
	uint64_t n_differ;	 /* rows whose difference is not 0 */
	uint64_t n_differ_matched, n_differ_base_only, n_differ_cmp_only;
	int64_t diff_min, diff_max; /* of the rows that differ */
	uint64_t index[3];	    /* the first rows that differ (memscope_compare_row.index) */
};

/*
 * A summary of a comparison's rows as memscope_compare_run hands them out: per device (in the
 * order the devices come) and per name and device. At the op level alone the rows are ranked by
 * what each op allocated itself (memscope_compare_row.has_own), else by their values. Memory
 * grows with the devices and the names.
 */
struct memscope_compare_summary;
/* The `top` names to rank for a comparison made with opts (read now). NULL on OOM. */
struct memscope_compare_summary *memscope_compare_summary_new(
	size_t top, const struct memscope_compare_opts *opts);
void memscope_compare_summary_free(struct memscope_compare_summary *s);
/* Count one row. 0 or MEMSCOPE_E_NOMEM (the row is not counted). */
int memscope_compare_summary_add(
	struct memscope_compare_summary *s, const struct memscope_compare_row *row);
/* The devices so far, borrowed until the next add or free. */
const struct memscope_compare_device *memscope_compare_summary_devices(
	const struct memscope_compare_summary *s, size_t *n);
/*
 * The (at most `top`) names of largest absolute difference, the one whose first differing row
 * comes first among equals; names whose difference adds up to 0 are never among them. Borrowed
 * until the next call, add or free. NULL (and *n 0) on OOM.
 */
const struct memscope_compare_group *const *memscope_compare_summary_top(
	struct memscope_compare_summary *s, size_t *n);
/*
 * The summary of a comparison for a person, as lines of text without a newline
 * (formats/analyses.md "Compare: the summary"): first the names that differ most (at the op
 * level: "X allocated 7.63 MiB more in compare than in base, on device 0 (...)"), or that none
 * does; a line per device (how many elements matched, and at the op level what the ops
 * allocated, each byte once); at the op level, what the ops' own pool rows outside every op
 * add up to when the sides differ there (stats); what the CSV's values mean; the number of
 * rows, " -> output" added when output is not NULL. Sizes in binary units with the unit written
 * (memscope_bytes_text); exact bytes are in the CSV. line gets each line (borrowed for the
 * call), st names the rows. Returns 0, the first nonzero return of line, or MEMSCOPE_E_NOMEM.
 */
int memscope_compare_summary_text(struct memscope_compare_summary *s,
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
