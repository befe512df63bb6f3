/* The inside of memscope-report (lib/report/): the report object, the input whose details it
 * keeps, the block lifetimes and stacks of its own small analysis, the verdicts, and the bounds
 * that keep a page small whatever the input. */
#ifndef MEMSCOPE_REPORT_IMPL_H
#define MEMSCOPE_REPORT_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/clocks.h"
#include "../core/u64map.h"
#include "memscope/memscope.h"
#include "ranks.h"

/* Bounds of the findings (formats/report.md "Bounds"). */
#define MS__REPORT_MAX_BLOCKS 300   /* blocks of the peak's track in the active-blocks view */
#define MS__REPORT_MAX_COLUMNS 1000 /* columns a track's points are cut to */
#define MS__REPORT_MAX_TRACKS 8	    /* tracks drawn, the highest peaks */
#define MS__REPORT_MAX_SAMPLES 8    /* sample series drawn */
#define MS__REPORT_MAX_SITES 200    /* leak sites */
#define MS__REPORT_MAX_STEPS 2000   /* rows of the per step table */
#define MS__REPORT_MAX_OWNERS 20    /* owners at the peak in "peak" */
#define MS__REPORT_MAX_WHERE 200    /* rows of "where" */
#define MS__REPORT_MAX_INEFF 20	    /* inefficient blocks listed */
#define MS__REPORT_MAX_FLAME 5000   /* flame nodes written */
#define MS__REPORT_MAX_KEYS 4096    /* (process, device, pool) kept by the block analysis */
#define MS__REPORT_MAX_FRAMES 48    /* frames of a stack's kind written (then "[N more frames]") */

/* ------------------------------------------------------------------------------------------ */
/* report_blocks.c: block lifetimes, pool totals and allocation stacks of one input */

/* One block of the active-blocks view: its life on the input's first clock (absolute ns). */
struct ms__rblock {
	uint64_t from_ns, to_ns; /* to_ns 0: live at the end */
	int64_t bytes;
	uint64_t ptr, alloc_id, pid;
	int32_t device;
	uint16_t pool;
	uint32_t op, owner, stack_py, stack_c;
};

/* The ATen and ATB ops open on one thread (analyses/opnames.h's rule), a block's op when its
 * MALLOC names none. */
struct ms__rthread;

/* The largest blocks of one (process, device, pool), and its pool totals' highest sample. */
struct ms__rblocks_key {
	uint64_t pid;
	int32_t device;
	uint16_t pool;
	struct ms__rblock *heap; /* a min-heap by bytes, at most MS__REPORT_MAX_BLOCKS */
	size_t n;
	int has_total;	      /* a MALLOC or FREE carried total (reserved) and used */
	int64_t total, used;  /* at the highest total */
	uint64_t total_ts_ns; /* then */
	int64_t live;	      /* its blocks' bytes alive now (in file order) */
	/* a pool carved out of an outer one (memscope/blocks.h: PTA of HAL, CUDA_CACHING of
	 * CUDA's segments): its highest live bytes, the outer pool's then, and when */
	int has_outer;
	int64_t inner_max, outer_at;
	uint64_t inner_max_ts_ns;
	/* at the end: the largest range of an outer pool's live block (a segment) that none of
	 * this inner pool's live blocks covers; -1 unknown (no segment holds its blocks) */
	int64_t gap_at_end;
};

/*
 * The analysis (memscope/analysis.h's interface: ms__rblocks_analysis): every block's life
 * (memscope/blocks.h's identity), the MALLOC's stacks, and per (process, device, pool) its
 * MS__REPORT_MAX_BLOCKS largest blocks, each with the op its MALLOC names or else the innermost
 * op open on its thread (in file order). Memory: the live blocks, the open ops,
 * MS__REPORT_MAX_BLOCKS blocks per (process, device, pool) (at most MS__REPORT_MAX_KEYS of them),
 * and 24 bytes per distinct pair of Python and C stacks.
 */
struct ms__rblocks {
	struct memscope_strtab *st;
	struct memscope_blocks *live;
	struct clocks clocks;
	struct ms__rblocks_key *keys;
	size_t n_keys, cap_keys, last_key;
	struct u64map threads;	 /* (process, thread) -> its index in thr */
	struct ms__rthread *thr; /* the ops open on each thread, in file order */
	size_t n_thr, cap_thr;
	struct u64map stacks; /* (stack_py << 32 | stack_c) -> bytes allocated, blocks */
	int has_stacks;	      /* a MALLOC had a call stack */
};

struct ms__rblocks *ms__rblocks_new(struct memscope_strtab *st);
void ms__rblocks_free(struct ms__rblocks *b);
extern const struct memscope_analysis ms__rblocks_analysis;
/* After finish: the key of (pid, device, pool), NULL when none; its blocks sorted most bytes
 * first. */
const struct ms__rblocks_key *ms__rblocks_key(
	const struct ms__rblocks *b, uint64_t pid, int32_t device, uint16_t pool);

/* ------------------------------------------------------------------------------------------ */
/* report_read.c: the report */

/* What the report keeps of the input it shows in detail: its analyses and their strings. */
struct ms__report_detail {
	struct memscope_strtab *st;
	struct memscope_leaks *leaks;
	struct memscope_peak *peak;
	struct memscope_inefficient *ineff;
	struct ms__rblocks *blocks;
	size_t input; /* its index among the run's inputs */
	int64_t peak_bytes;
};

/* Fresh analyses for one input's read (those of struct ms__report_detail). NULL on OOM. */
struct ms__report_detail *ms__report_detail_new(void);

/* The batch input a session input stands for: its name as path (rank, device, node from it);
 * in borrows name. */
void ms__report_batch_input(struct memscope_batch_input *in, const char *name);

/* Keep d (taken) as r's detail, input i whose summary is sum, when its peak is the run's highest
 * so far (the first input given keeps it on a tie); else free it. */
void ms__report_keep_detail(struct memscope_report *r, struct ms__report_detail *d, size_t i,
	const struct memscope_summary *sum);

/* Every note s has given so far kept as r's texts (once per side, after its read). 0 or
 * MEMSCOPE_E_NOMEM. */
int ms__report_keep_notes(struct memscope_report *r, const struct memscope_session *s);

/* A verdict line (formats/report.md "verdicts"). */
struct ms__report_verdict {
	const char *id, *level, *section; /* static */
	int has_bytes, has_count;
	int64_t bytes;
	uint64_t count;
	char text[640];
};

#define MS__REPORT_MAX_VERDICTS 12

/* Reserved against allocated bytes of the detail's peak track at its highest reserved sample. */
struct ms__report_frag {
	int checked;
	const char *source; /* "memory_record" (the profiler's samples) or "pool totals" (rows) */
	int64_t reserved, allocated;
	uint64_t ts_ns; /* after the input's origin */
	int64_t gap;	/* the largest free range of a segment at the end, -1 unknown */
};

struct memscope_report {
	struct memscope_summary *rows[2]; /* per side, per input: its batch summary */
	size_t n_rows[2];
	int read[2];
	struct ms__report_detail *detail; /* NULL: no input of the run could be read */
	struct ms__ranks *ranks;
	char **notes; /* the sessions' note texts */
	size_t n_notes;
	char **unchecked; /* "what: why" of the detail input */
	size_t n_unchecked;
	struct ms__report_frag frag;
	struct ms__report_verdict verdicts[MS__REPORT_MAX_VERDICTS];
	size_t n_verdicts;
	int finished;
	int no_baseline; /* memscope_report_expect_baseline(r, 0) */
	void (*on_input)(
		void *ctx, enum memscope_report_side side, size_t i, size_t n, const char *name);
	void *on_input_ctx;
	/* memscope_report_read_begin's side: the next input its lines are added for, and the
	 * side's inputs (its session's count) */
	size_t next[2], n_in[2];
	int in_parts[2];
};

/* Free a detail's analyses and itself. NULL is fine. */
void ms__report_detail_free(struct ms__report_detail *d);

/* ------------------------------------------------------------------------------------------ */
/* report_verdicts.c */

/* The verdicts and the unchecked list of a report whose reads are done (r->ranks finished). 0 or
 * MEMSCOPE_E_NOMEM. */
int ms__report_verdicts(struct memscope_report *r);

/* An op's name as people read it: "torch._ops.aten.mm.default" -> "aten.mm"; other names as
 * they are. Into buf (size bytes). Returns buf. */
const char *ms__report_op_text(const char *name, char *buf, size_t size);

/* The summary field f of row s as a number: 1 and *v when set, else 0. */
int ms__report_num(const struct memscope_summary *s, enum memscope_sum_field f, int64_t *v);

/* A call stack as {"python":[frames],"c":[frames]}, innermost first, each kind cut to
 * MS__REPORT_MAX_FRAMES frames and "[N more frames]"; C frames as memscope_frame_text writes them.
 */
void ms__report_json_stack(FILE *out, const struct memscope_strtab *st, uint32_t py, uint32_t c);

/* The inefficient blocks and bytes summed over the run's inputs checked (with ACCESS rows), as
 * memscope-batch's figures; returns how many inputs were checked. */
size_t ms__report_ineff_sum(const struct memscope_report *r, int64_t *blocks, int64_t *bytes);

/* The detail's peak track: its index, -1 without one. */
long ms__report_peak_track(const struct ms__report_detail *d);

/* The step process of the detail's peak track (NULL: none). */
const struct memscope_step_proc *ms__report_peak_steps(const struct ms__report_detail *d);

/* ------------------------------------------------------------------------------------------ */
/* report_json.c, report_detail.c, report_text.c */

/* The JSON object (formats/report.md) and a newline. 0 or MEMSCOPE_E_IO (out's error flag). */
int ms__report_json(FILE *out, const struct memscope_report *r);
/* The detail members: "peak", "leaks", "growth", "inefficient", "fragmentation", "timeline",
 * "steps", "where", each with its leading comma. */
void ms__report_json_detail(FILE *out, const struct memscope_report *r);
/* What an owner at the peak is named by (enum memscope_peak_by): "owner", "op", "python", "c",
 * "none". Static. */
const char *ms__report_by_name(uint32_t by);
/* The owners at the peak, at most max: ,"KEY":[{"name","by","bytes","blocks"}...], and for KEY
 * "owners" the rest as one: ,"rest":{"owners","bytes","blocks"}. */
void ms__report_json_owners(
	FILE *out, const struct ms__report_detail *d, size_t max, const char *key);
/* report_timeline.c: ,"timeline":{...} (tracks cut to columns, samples, steps, the largest blocks
 * of the peak's track), ,"steps":[...] (the per step table), ,"where":{...} (owners at the peak and
 * the flame graph of allocations by call stack). */
void ms__report_json_timeline(FILE *out, const struct ms__report_detail *d);
void ms__report_json_steps(FILE *out, const struct ms__report_detail *d);

/* One row of the per step table: the peak's track in step `number`'s span [lo, hi]. */
struct ms__report_step_row {
	uint64_t number, lo, hi;
	int64_t end, alloc, freed, peak;
	int seen;	/* a point in the span */
	int leak_first; /* a step leak site's first block was allocated in it */
};

/* The per step table of the detail input (formats/report.md "steps"), *n rows, malloc'd; NULL
 * (and *n 0) without steps or on OOM. */
struct ms__report_step_row *ms__report_step_rows(const struct ms__report_detail *d, size_t *n);
void ms__report_json_where(FILE *out, const struct ms__report_detail *d);
/* The text report: verdict lines, then short tables. 0 or MEMSCOPE_E_IO. */
int ms__report_text(FILE *out, const struct memscope_report *r);

/* The leak sites of the detail input as the JSON and the text list them: memscope_leaks_groups
 * indexes, most bytes first, at most MS__REPORT_MAX_SITES; *n their number. malloc'd (NULL with
 * *n 0 when none, or on OOM). */
size_t *ms__report_sites(const struct ms__report_detail *d, size_t *n);

#endif
