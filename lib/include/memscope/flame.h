/* Memory by allocation site, for flame graphs: bytes (or allocations) per call stack, owner tag
 * or op, for the exporters of memscope-export. */
#ifndef MEMSCOPE_FLAME_H
#define MEMSCOPE_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "error.h"
#include "event.h"
#include "steps.h"

struct memscope_strtab;
struct memscope_leaks;
struct memscope_leaks_opts;

/* What a profile weighs; also bits (1 << metric) of memscope_flame_opts.metrics. */
enum memscope_flame_metric {
	MEMSCOPE_FLAME_ALLOCATED, /* bytes allocated (every MALLOC, freed or not) */
	MEMSCOPE_FLAME_PEAK,	  /* bytes of the blocks live when the highest pool peaked */
	MEMSCOPE_FLAME_LEAKED,	  /* bytes of the blocks unreleased at exit (memscope-leaks exit) */
	MEMSCOPE_FLAME_COUNT,	  /* number of allocations */
	MEMSCOPE_FLAME_N_METRICS
};

/* What a path is made of. */
enum memscope_flame_group {
	MEMSCOPE_FLAME_BY_STACK, /* the MALLOC's call stack; its owner tag when it has none; by op
				    when no MALLOC has either (memscope_flame_grouped_by) */
	MEMSCOPE_FLAME_BY_OWNER, /* the owner tag's levels (PTA@model@weight) */
	MEMSCOPE_FLAME_BY_OP,	 /* the ops (ATen, ATB) open on the MALLOC's thread when it ran,
				    outermost first */
};

/* Which stacks, as bits. */
enum memscope_flame_stacks {
	MEMSCOPE_FLAME_PYTHON = 1u << 0,
	MEMSCOPE_FLAME_C = 1u << 1,
};

struct memscope_flame_opts {
	unsigned metrics; /* bits of enum memscope_flame_metric (allocated) */
	unsigned group;	  /* enum memscope_flame_group (stack) */
	unsigned stacks;  /* MEMSCOPE_FLAME_PYTHON and/or _C (both): Python frames then C frames;
			     C frames as memscope_frame_text writes them */
	/* MEMSCOPE_POOL_BIT bits (memscope/blocks.h); 0 (default): memscope_pools_default of the
	 * pools that had MALLOC or FREE rows, each input's own (the run's with merge), chosen at
	 * finish */
	uint64_t pools;
	/* With n_inputs > 1 and merge 0 (default), the paths of input src start with a root frame
	 * naming inputs[src]: the shortest ending of its '/'-separated parts that no other input
	 * has ("-": "standard input"; "(input N)" added to a name given twice). merge 1: the
	 * inputs' paths add up. inputs is borrowed and must outlive the analysis (NULL, 0). */
	int merge;
	const char *const *inputs;
	size_t n_inputs;
};

void memscope_flame_opts_init(struct memscope_flame_opts *o);

/* One path and its weight. The path is a stack id of the analysis' string table whose frames
 * run from the root to the leaf (the reverse of the dump's innermost-first stacks). */
struct memscope_flame_entry {
	uint32_t path;
	uint64_t weight;
};

/* Where the peak profile's moment is: the (input, process, device, pool) whose live bytes went
 * highest, the time of the MALLOC that took them there, and how many bytes. */
struct memscope_flame_peak {
	int found; /* 0: no block of the chosen pools */
	uint32_t src;
	uint64_t pid;
	int32_t device;
	uint16_t pool;
	uint64_t ts_ns;
	uint64_t bytes;
	uint64_t origin_ns; /* the time of input src's first row: time 0 of a text saying when */
};

/*
 * The analysis: feed every event of every input (src numbers them), then finish. Memory grows with
 * the live blocks and the distinct (input, pool, path) triples ((pool, path) pairs with
 * merge); with the peak metric also 72 bytes per block and 64 per MALLOC/FREE
 * row (the timeline that finds the peak); grouped by op also 56 bytes per op row and per MALLOC
 * and metric (rows need not come in time order: an op is known to be open at a MALLOC only once
 * the thread's rows are sorted), and so grouped by stack until the first MALLOC with a stack or
 * owner tag (the op rows are kept for the fallback to op until then).
 */
struct memscope_flame;

/* o may be NULL (defaults); st is where the events' strings are and paths are interned (borrowed,
 * must outlive the analysis). NULL on OOM. */
struct memscope_flame *memscope_flame_new(
	const struct memscope_flame_opts *o, struct memscope_strtab *st);
void memscope_flame_free(struct memscope_flame *f);

/*
 * The leaked metric weighs the exit findings of l (borrowed, must outlive f), an analysis made
 * with memscope_flame_leaks_opts's options, fed the same events and finished before f is: on one
 * run, l's item before f's. Without it, finishing with the leaked metric fails (MEMSCOPE_E_ARG).
 */
void memscope_flame_use_leaks(struct memscope_flame *f, const struct memscope_leaks *l);
/* The options of the leaks analysis the leaked metric needs: exit leaks of o's pools (o may be
 * NULL). */
void memscope_flame_leaks_opts(const struct memscope_flame_opts *o, struct memscope_leaks_opts *lo);
/* One event. 0 or MEMSCOPE_E_NOMEM. */
int memscope_flame_feed(struct memscope_flame *f, const struct memscope_event *ev);

/* After the last event. 0, MEMSCOPE_E_NOMEM, or MEMSCOPE_E_ARG (leaked metric without
 * memscope_flame_use_leaks). */
int memscope_flame_finish(struct memscope_flame *f);

/*
 * After finish: the paths of metric with a weight, heaviest first (then by path id), borrowed
 * until the analysis is freed; *total gets their sum (saturating). NULL and 0 for a metric not
 * asked for.
 */
const struct memscope_flame_entry *memscope_flame_entries(
	const struct memscope_flame *f, unsigned metric, size_t *n, uint64_t *total);
const struct memscope_flame_peak *memscope_flame_peak(const struct memscope_flame *f);

/*
 * After finish: how the paths were made, the group asked for but MEMSCOPE_FLAME_BY_OP when
 * grouped by stack, no MALLOC had a stack (of the kinds asked for) or an owner tag and the input
 * had op rows or MALLOCs that name their op (memscope_event_op: the Ascend profiler's).
 */
unsigned memscope_flame_grouped_by(const struct memscope_flame *f);

/*
 * After finish: the pools whose blocks were counted (of every input); into *left_out (may be
 * NULL) the pools an input had blocks in that were not counted for it (its own, so a pool one
 * input counts and another leaves out is in both); into *nested (may be NULL) whether one
 * input's counted pools are nested (memscope_pools_nested: HAL beside a pool carved out of it,
 * whose bytes the totals count twice; only when asked for, the default never is).
 */
uint64_t memscope_flame_pools(const struct memscope_flame *f, uint64_t *left_out, int *nested);

/* Grouped by op, the op rows that made no frame. */
struct memscope_flame_ops {
	uint64_t unmatched_ends; /* ends with no open op of their name: ignored */
	uint64_t unclosed;	 /* starts never ended, or closed by an outer op's end */
	uint64_t deep;		 /* starts past 64 open ops of their thread: not frames */
};
/* After finish; all 0 unless grouped by op. */
const struct memscope_flame_ops *memscope_flame_op_stats(const struct memscope_flame *f);
const struct memscope_flame_opts *memscope_flame_opts(const struct memscope_flame *f);
/* The string table the paths are in (the one given to _new). */
const struct memscope_strtab *memscope_flame_strtab(const struct memscope_flame *f);

/* "allocated", "peak", "leaked", "count"; NULL out of range. */
const char *memscope_flame_metric_name(unsigned metric);

/* The profile's name into buf: the metric's ("allocated bytes"), and for the peak which pool
 * peaked, where, when (seconds since the input's first row, memscope_seconds_text) and how much
 * (memscope_bytes_text). */
void memscope_flame_profile_name(
	const struct memscope_flame *f, unsigned metric, char *buf, size_t size);

/*
 * speedscope JSON (formats/flame.md "speedscope JSON"): one sampled profile per metric asked for
 * (unit bytes, none for count), frames shared (the inputs' root frames too: one profile per metric
 * shows every input side by side), the first profile active. name names the file's
 * profile group; producer (NULL: "libmemscope") is the exporter the file names, the calling
 * tool and its version ("memscope-export@0.1.0"). 0 or MEMSCOPE_E_IO.
 */
int memscope_flame_write_speedscope(FILE *out, const struct memscope_flame *f, const char *name,
	const char *producer, struct memscope_error *err);

/* Folded stacks of one metric: "root;...;leaf weight" per path. 0 or MEMSCOPE_E_IO. */
int memscope_flame_write_folded(
	FILE *out, const struct memscope_flame *f, unsigned metric, struct memscope_error *err);

/*
 * An interactive SVG flame graph of one metric, 1200 pixels wide, the root at the bottom: the
 * title is the profile's name, subtitle (may be NULL) the line under it, and the root frame "all"
 * holds the total; a frame's width is its share of the total and its tooltip says its bytes (or
 * allocations) and percent. Siblings are in name order; frames narrower than 0.1 pixel are left
 * out, and their weight stays in their parent; at most 256 levels (deeper frames are one
 * "[deeper frames]" frame) and 100,000 frames (the widest, then the shallowest; the subtitle
 * says how many were left out). A label too long for its frame is a C frame's function alone,
 * then the start and the end of the name with an ellipsis for the middle, the start its
 * siblings share left out first (data-p). The embedded script (flame_svg.js) zooms on click,
 * labelling the frames the same way, and searches.
 * 0, MEMSCOPE_E_NOMEM or MEMSCOPE_E_IO.
 */
int memscope_flame_write_svg(FILE *out, const struct memscope_flame *f, unsigned metric,
	const char *subtitle, struct memscope_error *err);

/* The analysis interface of a struct memscope_flame (memscope/analysis.h). */
extern const struct memscope_analysis memscope_flame_analysis;

#endif
