/* Many inputs at once (memscope-batch): one summary per input from one read feeding every analysis
 * it needs, the summary as one JSON line that partial runs exchange, and the report over all
 * inputs with the figures across them. */
#ifndef MEMSCOPE_BATCH_H
#define MEMSCOPE_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "source.h"
#include "walk.h"

/*
 * The fields of a summary, in the order every output writes them (the JSON keys and CSV columns
 * of memscope_batch_field_name). Each is a number or a text, or unknown (JSON null, an empty CSV
 * field): not applicable to the input (inefficient figures of one without ACCESS rows), or not
 * known (a rank its path does not give, every figure of an input that could not be read).
 */
enum memscope_sum_field {
	MEMSCOPE_SUM_INDEX,	  /* its place among every input found, from 0 */
	MEMSCOPE_SUM_INPUT,	  /* text: its path */
	MEMSCOPE_SUM_RANK,	  /* from its path (memscope_rank_of_path) */
	MEMSCOPE_SUM_DEVICE,	  /* text: from its path, else the one device of its blocks */
	MEMSCOPE_SUM_FORMAT,	  /* text: memscope_format_name */
	MEMSCOPE_SUM_STATUS,	  /* text: "ok", "invalid" (exit 3) or "error" (exit 4) */
	MEMSCOPE_SUM_ERROR,	  /* text: why it could not be read ("" when ok) */
	MEMSCOPE_SUM_BYTES,	  /* bytes read (decompressed ones when compressed), its
				     python_trace files' too: the files' size */
	MEMSCOPE_SUM_EVENTS,	  /* events delivered */
	MEMSCOPE_SUM_SKIPPED,	  /* bad rows skipped (--lenient) */
	MEMSCOPE_SUM_PROCESSES,	  /* distinct process ids */
	MEMSCOPE_SUM_SPAN_NS,	  /* last timestamp - first (unknown: no row has a time) */
	MEMSCOPE_SUM_STEPS,	  /* most steps of any process */
	MEMSCOPE_SUM_ALLOCATIONS, /* MALLOC rows (memscope-leaks' count) */
	MEMSCOPE_SUM_FREES,	  /* FREE rows but the reference's shadow ones */
	MEMSCOPE_SUM_ACCESSES,	  /* ACCESS rows */
	MEMSCOPE_SUM_EXIT_LEAKS,  /* blocks alive at its end (unknown: no blocks to check), those of
				     memscope-leaks' first line but HAL's where a framework pool lies
				     inside HAL (counted once) */
	MEMSCOPE_SUM_EXIT_LEAK_BYTES,
	MEMSCOPE_SUM_STEP_LEAKS, /* unknown when not checked (no steps, no blocks) */
	MEMSCOPE_SUM_STEP_LEAK_BYTES,
	MEMSCOPE_SUM_PEAK_BYTES,       /* live bytes of the peak's track at the peak */
	MEMSCOPE_SUM_PEAK_POOL,	       /* text: its pool */
	MEMSCOPE_SUM_PEAK_NS,	       /* when: ns after the input's first row */
	MEMSCOPE_SUM_PEAK_STEP,	       /* the step then */
	MEMSCOPE_SUM_PEAK_OWNER,       /* text: who held the most bytes then */
	MEMSCOPE_SUM_PEAK_OWNER_BYTES, /* and how many */
	MEMSCOPE_SUM_POOL_PEAKS,       /* text "PTA=123;ATB=45": the peak of each pool counted */
	MEMSCOPE_SUM_GROWTH_PER_STEP,  /* live bytes added per step on the peak's track */
	MEMSCOPE_SUM_INEFFICIENT_BLOCKS,
	MEMSCOPE_SUM_INEFFICIENT_BYTES,
	MEMSCOPE_SUM_TRACE_ROWS, /* rows of its python_trace files */
	/* after the first ones, so that their columns stay where they were */
	MEMSCOPE_SUM_PID,	  /* the process of its events when they have one */
	MEMSCOPE_SUM_NODE,	  /* text: the host its path names (memscope_node_of_path) */
	MEMSCOPE_SUM_NOT_CHECKED, /* text: what leaks were not checked and why ("" none):
				     "step leaks: no steps: neither ..." */
	MEMSCOPE_SUM_END,	  /* text: how it ended, so what its exit leaks are: "exit" (leaks),
				     "snapshot", "profile", "recording_stopped" (memory alive then, not a
				     leak	 by itself; memscope_leaks_end_of) */
	MEMSCOPE_SUM_COUNT_
};

/* "index", "input", ..., "trace_rows": the JSON key and CSV column of field f. */
const char *memscope_batch_field_name(enum memscope_sum_field f);

/*
 * Byte figures (bytes, peak_bytes, the leak, owner and inefficient bytes) are held at INT64_MAX
 * when their true value is that or more: such a figure overflowed, and every report says so as
 * memscope-leaks does (text "more than 8.00 EiB (the total overflowed)", JSON
 * "KEY_overflowed":true after it, CSV the column overflowed naming it).
 */
#define MEMSCOPE_SUM_OVERFLOW INT64_MAX

/*
 * The node (host) a path names: a torch_npu or MindSpore profiler folder
 * HOST_PID_TIMESTAMP_ascend_pt (or _ascend_ms), its deepest such component, gives HOST. Written
 * into buf (size bytes); returns its length, 0 (buf "") when the path names none.
 */
size_t memscope_node_of_path(const char *path, char *buf, size_t size);

/* One input's summary: num[f] for a number field, str[f] (owned) for a text one, each set only
 * when bit f of has is. */
struct memscope_summary {
	int64_t num[MEMSCOPE_SUM_COUNT_];
	char *str[MEMSCOPE_SUM_COUNT_];
	uint64_t has;
};

/* Free the texts and clear s (a cleared summary has nothing set). */
void memscope_summary_clear(struct memscope_summary *s);

/*
 * What memscope_summary_read reads with: ro as memscope_source_open's (NULL: strict; its src is
 * ignored). Leaks are looked for with memscope-leaks' defaults, the peak with memscope-export's
 * (the default pools), inefficient memory with memscope-inefficient's.
 */

/*
 * Read input in (found by memscope_walk) once, feeding every analysis a summary needs, then its
 * python_trace files, into *s (cleared first), numbered index. An input that cannot be read is a
 * summary too: status "invalid" or "error" and the message (err says the same). Returns 0, or the
 * read's error (every figure unknown then), or MEMSCOPE_E_NOMEM with nothing in *s but the
 * index, input and error. Memory: that of the analyses (memscope/leaks.h, peak.h,
 * inefficient.h), freed before it returns.
 */
int memscope_summary_read(struct memscope_summary *s, const struct memscope_batch_input *in,
	uint64_t index, const struct memscope_read_opts *ro, struct memscope_error *err);

/*
 * A summary that says input in could not be summarised: status from code (MEMSCOPE_E_INVALID,
 * _TRUNCATED, _UNSUPPORTED: "invalid"; any other: "error") and msg, one line. 0 or
 * MEMSCOPE_E_NOMEM.
 */
int memscope_summary_fail(struct memscope_summary *s, const struct memscope_batch_input *in,
	uint64_t index, int code, const char *msg);

/* s as one JSON line with its newline (the line of a part, and of the JSON report without its
 * "type"). 0 or MEMSCOPE_E_IO. */
int memscope_summary_write(FILE *out, const struct memscope_summary *s);

/*
 * The summaries of every input of one run, in order of index, and the report over them. A run
 * knows how many inputs it has and the hash of their list (memscope_walk_hash); a partial run
 * (a shard) reads only some, and partial runs merge into one with every input.
 */
struct memscope_batch;

/* the most inputs a run may have */
#define MEMSCOPE_BATCH_MAX_INPUTS (UINT64_C(1) << 20)

/* n inputs (at most MEMSCOPE_BATCH_MAX_INPUTS) whose list hashes to list_hash, read leniently
 * or not. NULL on OOM or too many inputs. */
struct memscope_batch *memscope_batch_new(uint64_t n_inputs, uint64_t list_hash, int lenient);
void memscope_batch_free(struct memscope_batch *b);

/* Take the summary of one input (moved: *s is cleared). MEMSCOPE_E_INVALID (err names where:
 * name and line) for an index beyond the inputs, or one taken already. */
int memscope_batch_add(struct memscope_batch *b, struct memscope_summary *s, const char *name,
	uint64_t line, struct memscope_error *err);

/*
 * One JSON line of memscope_summary_write (len bytes, without its newline), from name at line
 * (for messages), into b: memscope_batch_add of what it says. MEMSCOPE_E_INVALID for a line that
 * is not a summary, MEMSCOPE_E_NOMEM.
 */
int memscope_batch_add_line(struct memscope_batch *b, const char *line, size_t len,
	const char *name, uint64_t line_no, struct memscope_error *err);

/*
 * A partial result: the header line (memscope_batch_write_part's), then the summaries of shard
 * i of n: inputs i, i + n, ... Write the header with memscope_batch_part_header, then one
 * memscope_summary_write per input. 0 or MEMSCOPE_E_IO.
 */
int memscope_batch_part_header(FILE *out, uint64_t n_inputs, uint64_t list_hash, int lenient,
	uint64_t shard, uint64_t n_shards);

/*
 * Read the part f (named name) into *b: created from the first part's header when *b is NULL,
 * else checked against it (the same inputs, hash, leniency and number of shards: another run's
 * part is refused, and a shard's part read twice). 0, MEMSCOPE_E_INVALID (not a part, another
 * run's, a shard again, a bad or repeated line; err says where), MEMSCOPE_E_IO,
 * MEMSCOPE_E_NOMEM. *shard and *n_shards get its shard.
 */
int memscope_batch_read_part(struct memscope_batch **b, FILE *f, const char *name, uint64_t *shard,
	uint64_t *n_shards, struct memscope_error *err);

/* How many inputs the run has. */
uint64_t memscope_batch_inputs(const struct memscope_batch *b);
/* The summary of input i, NULL when it has none (yet); borrowed until b is freed. */
const struct memscope_summary *memscope_batch_get(const struct memscope_batch *b, uint64_t i);

/* Whether every input has its summary (and, of parts, every shard its part): 0, or
 * MEMSCOPE_E_INVALID naming the first missing shard, else the first missing input and how many
 * are missing. */
int memscope_batch_complete(const struct memscope_batch *b, struct memscope_error *err);

enum memscope_batch_format {
	MEMSCOPE_BATCH_TEXT, /* a table of inputs, the failed ones, the figures across inputs, the
				inputs that stand out, a summary line */
	MEMSCOPE_BATCH_JSON, /* JSON lines: {"type":"input",...} per input, {"type":"across",...}
				per figure, {"type":"summary",...} */
	MEMSCOPE_BATCH_CSV,  /* a row per input, then the rows min, median, max and imbalance */
};

/* What fails a run for a pipeline (exit status 1). */
struct memscope_batch_opts {
	int fail_on_leak;    /* an input has leaks of fail_kinds */
	unsigned fail_kinds; /* MEMSCOPE_LEAK_STEP | MEMSCOPE_LEAK_EXIT bits (memscope/leaks.h):
				what --fail-on-leak counts, and says when it could not check */
	int has_max_peak;    /* an input's peak_bytes is above max_peak */
	uint64_t max_peak;
};

/* What a report found. */
struct memscope_batch_result {
	uint64_t n_inputs, n_ok, n_invalid, n_error;
	uint64_t n_leaking;   /* inputs with leaks of opts.fail_kinds (counted with fail_on_leak) */
	uint64_t n_unchecked; /* inputs read where a kind of opts.fail_kinds could not be checked
				 (counted with fail_on_leak): memscope_batch_unchecked_text */
	uint64_t n_unchecked_all; /* of those, the inputs where none of them could be */
	uint64_t n_over_peak;	  /* inputs above max_peak */
	uint64_t bytes;		  /* bytes read over every input (MEMSCOPE_BYTES_OVERFLOW: more) */
};

/*
 * What a gate of o could not check in b, one line for its user, into buf (size bytes): "step
 * leaks not checked in 3 of 5 inputs (no steps): #0 rank 0 (a.csv), #1 ..." (at most 8 named,
 * "..." after them); "" when o gates no leaks or every input read was checked. Returns buf.
 */
const char *memscope_batch_unchecked_text(char *buf, size_t size, const struct memscope_batch *b,
	const struct memscope_batch_opts *o);

/*
 * Write the report of a complete b in format fmt: every input in order, then across the inputs
 * read, per figure, the lowest, the median (the lower middle one), the highest and max/median,
 * and the inputs that stand out by their peak, leaks or growth per step (formats of man
 * memscope-batch(1)); with o's gates, the inputs that fail them and those a gate could not
 * check. res (may be NULL) gets the counts. 0 or MEMSCOPE_E_IO (errno set), MEMSCOPE_E_NOMEM.
 */
int memscope_batch_write(FILE *out, enum memscope_batch_format fmt, const struct memscope_batch *b,
	const struct memscope_batch_opts *o, struct memscope_batch_result *res);

#endif
