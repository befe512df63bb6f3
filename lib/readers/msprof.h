/* What the readers of the Ascend profiler's outputs share (formats/msprof.md): the state of one
 * profiler output, its numbers as the profiler writes them, and the readers' entry points. */
#ifndef MEMSCOPE_MSPROF_H
#define MEMSCOPE_MSPROF_H

#include "reader.h"

struct prof_trace;
struct clocks;

/*
 * One profiler output, shared by the readers of its files: a folder's, or one file's alone. Its
 * events are numbered in delivery order (ID from 1) and all belong to one process, so steps,
 * blocks and ops meet (formats/msprof.md "Into the event model").
 */
struct prof_ctx {
	uint64_t pid;	     /* every event's process: MEMSCOPE_ID_NONE until known */
	int32_t device;	     /* the timeline's ops': the first memory row's device (NONE before) */
	uint64_t next_id;    /* the last ID given */
	uint64_t next_block; /* the last allocation_id given */
	int mindspore;	     /* a MindSpore output: memory_record's MB are 1000 KB */
	uint32_t file;	     /* a folder's file being read: its path's string id (the events'
				memscope_event.file); 0 for a file read alone */
	struct clocks *clocks; /* a folder's: whether its files were recorded far apart */
	/*
	 * Called by ms__prof_deliver with each event it is handed, before it numbers it (NULL:
	 * none): a folder's, which delivers its timeline before the first memory row
	 * (msprof_dir.c), with before_arg its own. 0 to go on, or the status to stop with (err
	 * set).
	 */
	int (*before)(struct prof_ctx *c, struct memscope_source *src, memscope_event_fn fn,
		void *ctx, const struct memscope_event *ev, struct memscope_error *err);
	void *before_arg;
};

void ms__prof_ctx_init(struct prof_ctx *c);

/*
 * Hand ev to fn as the output's next event (after c->before's): ID, src and (when ev has none)
 * pid set. 0 to go on, or the status to stop with (err set).
 */
int ms__prof_deliver(struct memscope_source *src, struct prof_ctx *c, memscope_event_fn fn,
	void *ctx, struct memscope_event *ev, struct memscope_error *err);

/* p[0..*len) without the spaces, TABs and CRs around it (the profiler puts a TAB after times). */
const char *ms__prof_trim(const char *p, size_t *len);
/* Whether a trimmed field says "no value": empty or N/A. */
int ms__prof_missing(const char *p, size_t len);

/* Number parsing results: 0 or one of these. */
enum prof_num {
	PROF_NUM_BAD = 1, /* not a decimal number */
	PROF_NUM_EXP,	  /* exponent notation (1.69512E+15): a spreadsheet re-saved the file */
	PROF_NUM_RANGE,	  /* out of range (negative time, too many digits) */
};
/* What a number parsing result means, for messages ("not a number"). */
const char *ms__prof_num_error(int rc);

/* µs since the epoch as written (digits, an optional point and decimals) to exact ns: decimals
 * past the third are rounded to the nearest ns. 0 or an enum prof_num. */
int ms__prof_parse_us(const char *s, size_t len, uint64_t *ns);

/*
 * A decimal amount of units (Size(KB), Total Reserved(MB); a sign allowed) in bytes: the value
 * times unit (1024 for KB, 1048576 for MB), rounded to the nearest byte, *exact 0 when that
 * needed rounding (the exporter rounded the figure). 0 or an enum prof_num.
 */
int ms__prof_parse_bytes(const char *s, size_t len, uint64_t unit, int64_t *bytes, int *exact);

/* The timeline JSON (msprof_json.c). */

/*
 * Parse the whole timeline of src (*out NULL) or of one more slice of it (*out the slices before:
 * src's are added to them) and keep what memory analysis uses: the cpu_op slices (ops
 * and ProfilerStep#N steps) and the counters of the "NPU MEM" process. Sets c->pid when it is
 * not known yet (the ProfilerStep slices' process, else the first cpu_op slice's). Memory grows
 * with the slices and counters kept, not with the file. 0 or the status (err set).
 */
int ms__prof_trace_load(struct prof_trace **out, struct memscope_source *src, struct prof_ctx *c,
	struct memscope_error *err);
/* Its events in time order (through ms__prof_deliver), then frees it. */
int ms__prof_trace_emit(struct prof_trace *t, struct memscope_source *src, struct prof_ctx *c,
	memscope_event_fn fn, void *ctx, struct memscope_error *err);
void ms__prof_trace_free(struct prof_trace *t);
/* Whether p[0..n) (the first bytes, all when eof) starts a profiler timeline: a JSON array whose
 * first element is an object with a "ph" key, or the start of one. */
int ms__prof_trace_sniff(const unsigned char *p, size_t n, int eof);

/* The memory CSVs (msprof_csv.c): every row of src's table as events through ms__prof_deliver. */
int ms__prof_csv_read(struct memscope_source *src, struct prof_ctx *c, memscope_event_fn fn,
	void *ctx, struct memscope_error *err);

/* Whether src (opened, not read) is MindSpore's memory_record, by its header: Total Active and no
 * Stream Ptr. A folder asks before reading its operator_memory, whose pool it decides. */
int ms__prof_csv_mindspore(const struct memscope_source *src);

#endif
