/* Leak detection: step leaks by the timestamp rule, the marked range, blocks unreleased at exit,
 * and the memory fluctuation of each step (formats/analyses.md, "Exit rule" to "Marked-range
 * leaks"). */
#ifndef MEMSCOPE_LEAKS_H
#define MEMSCOPE_LEAKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "event.h"
#include "blocks.h"
#include "steps.h"

struct memscope_strtab;

/* what a finding is; also bits of memscope_leaks_opts.kinds */
enum memscope_leak_kind {
	MEMSCOPE_LEAK_STEP = 1u << 0, /* allocated in step s after the first skip steps, alive at
					 the end of s + N (or of the first later step with one) */
	MEMSCOPE_LEAK_MARK = 1u << 1, /* allocated between marks A and B, not freed by mark C */
	MEMSCOPE_LEAK_EXIT = 1u << 2, /* never freed, or freed only by the shadow free at exit */
	MEMSCOPE_LEAK_ALL = 7u,
};

/* How the reports group findings (memscope_leaks_opts.group_by). */
enum memscope_leaks_group_by {
	/* the Python and C call stacks of the MALLOC, C frames as memscope_frame_text writes them
	 * (strtab.h); a block with neither stack by its owner tag and op instead */
	MEMSCOPE_LEAKS_BY_STACK,
	MEMSCOPE_LEAKS_BY_OP,	 /* the op of the MALLOC (memscope_leak.op) */
	MEMSCOPE_LEAKS_BY_OWNER, /* the owner tag of the MALLOC */
};

/* What to look for, and how to report it. Start from memscope_leaks_opts_init. */
struct memscope_leaks_opts {
	unsigned kinds; /* MEMSCOPE_LEAK_* bits (all) */
	uint64_t pools; /* pool bits; 0: per kind, for step the frameworks' and a recording's host
			  pools (MEMSCOPE_BLOCK_RECORDED), all otherwise */
	uint64_t skip_steps;	  /* blocks allocated in a process's first this many steps (or
				     before them) are not step leaks (1) */
	uint64_t min_steps_alive; /* step ends a block must outlive after its own step (1) */
	const char *mark;	  /* text of the MSTX Mark rows (copied); NULL: no marked range */
	uint64_t mark_index;	  /* which of them is mark A, from 0 (0) */
	enum memscope_leaks_group_by group_by; /* how findings are grouped (by stack) */
	uint64_t top; /* reports list this many groups per input and kind, 0: all (0) */
};

/* The reference's defaults: every kind, skip 1, alive 1, no mark; grouped by stack, all groups. */
void memscope_leaks_opts_init(struct memscope_leaks_opts *o);

/* memscope_leak.alloc_step of a block whose process has no steps, or allocated before the
 * first ProfilerStep of its process */
#define MEMSCOPE_LEAK_NO_STEP UINT64_MAX

/* One finding. */
struct memscope_leak {
	unsigned kind;		   /* one enum memscope_leak_kind */
	struct memscope_block blk; /* the block, as its MALLOC row gave it */
	uint64_t alloc_step;	   /* the number of the step it was allocated in
				      (formats/analyses.md "Steps"), MEMSCOPE_LEAK_NO_STEP when its
				      process has no steps or it came before the first ProfilerStep */
	uint64_t detected_step;	   /* STEP: the step whose end it outlived first */
	uint64_t kernel_index;	   /* STEP: KERNEL_LAUNCH rows of its process before its MALLOC */
	uint32_t group;		   /* MARK: its mark group (memscope_leaks_mark_groups index) */
	uint32_t report_group;	   /* its group in the reports (memscope_leaks_groups index) */
	uint32_t op;		   /* string id of the op of its MALLOC: the innermost ATen or ATB
				      op open on its thread then, in the thread's time order (an
				      end closes the innermost op of its name and those inside
				      it); 0 when none */
	uint32_t stack_c_text;	   /* its C stack with frames as memscope_frame_text writes them
				      (a stack id of the analysis's table; 0: none) */
	int shadow;		   /* EXIT: freed by the reference's shadow free at exit */
};

/* memscope_leak_group.differ: what its findings do not all share with the group's fields */
enum memscope_leak_group_differ {
	MEMSCOPE_LEAK_GROUP_OPS = 1u << 0,    /* op: the first finding's */
	MEMSCOPE_LEAK_GROUP_STACKS = 1u << 1, /* stack_py, stack_c: the first finding's */
	MEMSCOPE_LEAK_GROUP_OWNERS = 1u << 2, /* owner: the first finding's */
};

/*
 * Findings of one input, kind and pool with the same key of memscope_leaks_opts.group_by (the
 * cleaned stacks, the op or the owner tag). Fields not in the key are those of its first finding,
 * differ saying which of them others do not share.
 */
struct memscope_leak_group {
	unsigned kind; /* one enum memscope_leak_kind */
	uint32_t src;  /* the input */
	uint16_t pool;
	unsigned differ;	    /* enum memscope_leak_group_differ bits */
	uint32_t stack_py, stack_c; /* stack ids (0: none); stack_c as memscope_leak.stack_c_text */
	uint32_t owner;		    /* string id (0: none) */
	uint32_t op;		    /* string id (0: none) */
	uint64_t n;		    /* findings */
	uint64_t bytes;
	uint64_t rank;	   /* its place among the groups of its input and kind, from 0 */
	size_t first;	   /* memscope_leaks_get index of its first finding: the earliest
			      allocation of its lowest process id */
	size_t members_at; /* its findings are memscope_leaks_members()[members_at, + n) */
	uint32_t across;   /* its memscope_leaks_across index */
};

/*
 * The report groups of every input merged: those of one kind and pool with the same key of
 * memscope_leaks_opts.group_by, whatever their input. Fields not in the key are those of its
 * first group (that of the lowest input), differ saying which of them others do not share.
 */
struct memscope_leak_across {
	unsigned kind; /* one enum memscope_leak_kind */
	uint16_t pool;
	unsigned differ; /* enum memscope_leak_group_differ bits, over all its findings */
	uint32_t stack_py, stack_c; /* as in memscope_leak_group */
	uint32_t owner, op;
	uint32_t n_inputs;	   /* inputs with such findings: one group of each */
	uint64_t n;		   /* findings over every input */
	uint64_t bytes;		   /* their bytes (MEMSCOPE_BYTES_OVERFLOW when saturated) */
	uint32_t min_src, max_src; /* the input with the fewest bytes in it, and with the most
				      (the lowest input on a tie); inputs without it not counted */
	uint64_t min_bytes, max_bytes;
	uint64_t rank;	  /* its place among those of its kind, from 0: largest bytes first,
			     then most inputs, then most findings, then order of first sight */
	size_t groups_at; /* its groups, by input: memscope_leaks_across_groups()[groups_at,
			     + n_inputs) */
};

/* The marked range of one (input, process, device). */
struct memscope_mark_group {
	uint32_t src;
	uint64_t pid;
	int32_t device;
	uint64_t n_marks; /* Mark rows with the text */
	int checked;	  /* it has marks A, B and C */
	struct memscope_pos mark[3];
	uint64_t mark_line[3];
	uint64_t n_leaks, bytes;
};

/* used bytes of a pool within one step: the lowest and highest after any MALLOC/FREE row */
struct memscope_fluct_step {
	uint64_t step;
	int64_t min, max;
};

/* Memory fluctuation of one (input, process, device, pool) (formats/analyses.md "Fluctuation"). */
struct memscope_fluct {
	uint32_t src;
	uint64_t pid;
	int32_t device;
	uint16_t pool;
	const struct memscope_fluct_step *steps; /* ended steps with samples, ascending */
	size_t n_steps;
	int has_gaps;		 /* a step had max > 0, so min_gap / max_gap are set */
	size_t min_gap, max_gap; /* steps[] indexes: lowest and highest min/max ratio (first) */
	uint64_t n_zero_max;	 /* ended steps whose max was 0 (no ratio) */
};

struct memscope_leaks_stats {
	uint64_t n_events;
	uint64_t n_alloc, n_free, n_shadow_free;
	uint64_t n_unmatched_free; /* FREE rows with no live block: double free or no MALLOC */
	uint32_t unmatched_src;	   /* where the first one was */
	uint32_t unmatched_file;   /* (its memscope_event.file) */
	uint64_t unmatched_line;
	uint64_t n_replaced; /* MALLOC on a live address: the old block counts as freed there */
	uint64_t n_shadow_not_exit; /* shadow frees before the end of their process (the block was
				       freed while not tracing, or its address was reused) */
	uint64_t n_step_leaks, n_mark_leaks, n_exit_leaks;
	uint64_t step_bytes, mark_bytes, exit_bytes;
	uint64_t n_unchecked_mark_blocks; /* blocks in groups without marks A, B and C */
};

/*
 * The analysis. Feed it every event of every input (src numbers them), then finish. Memory grows
 * with the blocks alive at a time, the boundary rows (steps, marks), the findings, about 8 bytes
 * per KERNEL_LAUNCH row and about 6 per op start or end row (the op of a finding is found at
 * finish); not with the other rows.
 *
 * Verdicts are given when a block's FREE arrives, against the boundaries seen so far. That is
 * right when no boundary row comes after a MALLOC/FREE row with a later time of its process (true
 * of the reference's files, which write boundaries as they happen and blocks when freed). When
 * one does, memscope_leaks_needs_rewind says so after finish: rewind and feed the same events
 * again, and the second pass judges with every boundary known. An out-of-memory row that comes
 * after rows later than it (a PyTorch snapshot's oom entries follow its trace) asks for the
 * second pass too, so that what was alive at it is exact.
 */
struct memscope_leaks;

/*
 * o may be NULL (defaults). st is the table the events' strings are in; owner tags are interned
 * there too (borrowed, must outlive the analysis). NULL on OOM or a mark_index above 2^32.
 */
struct memscope_leaks *memscope_leaks_new(
	const struct memscope_leaks_opts *o, struct memscope_strtab *st);
void memscope_leaks_free(struct memscope_leaks *l);

/* One event. 0 or MEMSCOPE_E_NOMEM. */
int memscope_leaks_feed(struct memscope_leaks *l, const struct memscope_event *ev);

/* After the last event: the exit check, kernel indexes, fluctuation, result order. 0 or NOMEM. */
int memscope_leaks_finish(struct memscope_leaks *l);

/* 1 when a boundary or an out-of-memory row came late (first one at *src, *line), so a second
 * pass is needed. */
int memscope_leaks_needs_rewind(const struct memscope_leaks *l, uint32_t *src, uint64_t *line);

/* Keep every boundary (in time order), drop everything else. 0 or MEMSCOPE_E_NOMEM. */
int memscope_leaks_rewind(struct memscope_leaks *l);

/*
 * Results after finish, borrowed until the next call that changes the analysis. Findings come
 * STEP (by input, process, device, allocation step, allocation time), then MARK (by mark group,
 * then allocation time), then EXIT (by report group, then allocation time).
 */
size_t memscope_leaks_count(const struct memscope_leaks *l);
const struct memscope_leak *memscope_leaks_get(const struct memscope_leaks *l, size_t i);
/*
 * The report groups of every kind: by input, then kind (STEP, MARK, EXIT), then largest bytes
 * first (then most findings, then order of first sight); each (input, kind) is one run of them.
 */
const struct memscope_leak_group *memscope_leaks_groups(const struct memscope_leaks *l, size_t *n);
/*
 * memscope_leaks_get indexes of every finding (*n of them), group after group as
 * memscope_leaks_groups orders them; within a group by allocation step, process, device and
 * allocation time.
 */
const size_t *memscope_leaks_members(const struct memscope_leaks *l, size_t *n);
/*
 * The groups merged across inputs (*n of them): by kind (STEP, MARK, EXIT), then by rank. Costs
 * one hash insert per report group at finish, whatever the number of inputs.
 */
const struct memscope_leak_across *memscope_leaks_across(const struct memscope_leaks *l, size_t *n);
/* memscope_leaks_groups indexes of every report group (*n of them), across group after across
 * group as memscope_leaks_across orders them; within one by input. */
const size_t *memscope_leaks_across_groups(const struct memscope_leaks *l, size_t *n);

/*
 * How an input ended: what its blocks never freed are alive at (memscope_leaks_input_info.end),
 * from its format (memscope_leaks_input_end).
 */
enum memscope_leaks_end {
	MEMSCOPE_LEAKS_END_EXIT = 0, /* its program's exit: msMemScope's dumps and databases, a
					recording of a program that ended; any input not known to
					end otherwise */
	MEMSCOPE_LEAKS_END_PROFILE,  /* the end of a profile: the Ascend profiler's outputs, an
					Nsight Systems export */
	MEMSCOPE_LEAKS_END_SNAPSHOT, /* the moment of a snapshot: a PyTorch memory snapshot */
	MEMSCOPE_LEAKS_END_STOPPED,  /* a recording that stopped before its program ended: a
					capture file cut short, read with --lenient */
	MEMSCOPE_LEAKS_END_MIXED,    /* memscope_leaks_end_of every input: they ended in several
					ways */
};

/*
 * Why a kind of leak was not looked for in an input (memscope_leaks_checked); each but CHECKED
 * means a report of no such leaks is no pass.
 */
enum memscope_leaks_unchecked {
	MEMSCOPE_LEAKS_CHECKED = 0,
	MEMSCOPE_LEAKS_NOT_ASKED, /* the kind is not in memscope_leaks_opts.kinds */
	MEMSCOPE_LEAKS_NO_BLOCKS, /* the input has no MALLOC or FREE rows: nothing to check */
	MEMSCOPE_LEAKS_NO_STEPS,  /* step leaks: no process of the input has steps */
	MEMSCOPE_LEAKS_NO_MARKS,  /* marked range: no process and device of the input has marks
				     A, B and C */
	MEMSCOPE_LEAKS_FEW_STEPS, /* step leaks: steps, but no process has one after the
				     --skip-steps ones and an ended step --min-steps-alive after it
				     (one step alone checks nothing) */
};

/* What the analysis saw of one input. */
struct memscope_leaks_input_info {
	uint64_t n_events;
	uint64_t first_ts_ns;  /* the earliest timestamp of its events: time 0 of the text report */
	uint64_t n_leaks[3];   /* findings: STEP, MARK, EXIT */
	uint64_t n_stacked;    /* findings whose block has a call stack */
	uint64_t n_op_rows;    /* ATen and ATB op start and end rows */
	uint64_t n_block_rows; /* MALLOC and FREE rows: none, nothing to check (samples only) */
	int has_steps;	       /* one of its processes has steps */
	int step_room;	       /* one of its processes has steps enough for a step leak */
	uint64_t n_steps;      /* the most steps a process of it has */
	uint64_t n_unmatched_free;   /* its FREE rows with no live block (stats.n_unmatched_free) */
	enum memscope_leaks_end end; /* how it ended (memscope_leaks_input_end; EXIT unless told) */
	uint64_t n_ooms;	     /* its out-of-memory events (memscope_leaks_ooms) */
};
/* The input numbered src (all zero for one that fed no event; borrowed, as the results). */
const struct memscope_leaks_input_info *memscope_leaks_input(
	const struct memscope_leaks *l, uint32_t src);
/* Time 0 of the text report for a row of input src read from file (memscope_event.file): the
 * input's first_ts_ns, on the file's own clock when it was recorded far apart from the input's
 * first files (formats/msprof.md "Files far apart in time"). */
uint64_t memscope_leaks_origin(const struct memscope_leaks *l, uint32_t src, uint32_t file);

/*
 * Say how input src ended, from its format and its read's statistics (a capture cut short is a
 * recording stopped before its program ended): memscope_run calls it through the analysis
 * interface once the input is read; a caller that feeds events itself calls it after an
 * input's events (before finish), or inputs count as ended at exit. stats may be NULL.
 * 0 or MEMSCOPE_E_NOMEM.
 */
int memscope_leaks_input_end(struct memscope_leaks *l, uint32_t src, enum memscope_format format,
	const struct memscope_read_stats *stats);

/*
 * How input src ended; for MEMSCOPE_LEAKS_ALL_INPUTS the way every input that fed events ended,
 * MEMSCOPE_LEAKS_END_MIXED when they differ (EXIT when none fed any).
 */
enum memscope_leaks_end memscope_leaks_end_of(const struct memscope_leaks *l, uint32_t src);

/*
 * What the reports call the blocks alive when an input ended: "unreleased at exit", "alive at
 * the end of the profile", "alive at the end of the snapshot", "alive when the recording
 * stopped", "alive at the end of each input" (MIXED). Static.
 */
const char *memscope_leaks_end_text(enum memscope_leaks_end end);

/* The one-word name of an end in JSON and CSV: "exit", "profile", "snapshot",
 * "recording_stopped", "mixed". Static. */
const char *memscope_leaks_end_name(enum memscope_leaks_end end);

/* memscope_leaks_checked, memscope_leaks_unchecked_inputs: every input */
#define MEMSCOPE_LEAKS_ALL_INPUTS UINT32_MAX

/*
 * Whether leaks of kind (one enum memscope_leak_kind) were looked for in input src, and why not:
 * NOT_ASKED before NO_BLOCKS before NO_STEPS, FEW_STEPS or NO_MARKS. After finish.
 */
enum memscope_leaks_unchecked memscope_leaks_checked(
	const struct memscope_leaks *l, unsigned kind, uint32_t src);

/*
 * Why as the reports say it, one line without the kind: "no allocations or frees", "no steps:
 * neither mstx "step start" ranges, SYSTEM STEP rows nor ProfilerStep#N ops", "no device has
 * the three Mark rows", "too few steps: ...", "not asked for"; "" for CHECKED. Static.
 */
const char *memscope_leaks_unchecked_text(enum memscope_leaks_unchecked why);

/*
 * Why kind was not checked in input src, with its figures where the reason has some ("1 step:
 * a step leak needs 3 (--skip-steps 1, then a step and one --min-steps-alive 1 later)"), else
 * memscope_leaks_unchecked_text's; into buf (size bytes, NUL-terminated, cut short when full).
 * Returns buf. After finish.
 */
const char *memscope_leaks_unchecked_say(
	const struct memscope_leaks *l, unsigned kind, uint32_t src, char *buf, size_t size);

/*
 * How many of the first n_inputs inputs kind was asked for in and not checked (NOT_ASKED counts
 * none); *why (may be NULL) gets the reason of the first of them (CHECKED when none).
 */
size_t memscope_leaks_unchecked_inputs(const struct memscope_leaks *l, unsigned kind,
	size_t n_inputs, enum memscope_leaks_unchecked *why);

/* room for every pool in memscope_leaks_totals */
#define MEMSCOPE_LEAKS_MAX_POOLS 64
/* The findings of one kind in one pool. */
struct memscope_leaks_total {
	uint16_t pool;
	uint64_t n, bytes;
};
/*
 * The findings of kind (one enum memscope_leak_kind) of input src (or MEMSCOPE_LEAKS_ALL_INPUTS)
 * per pool, pools ascending, into out (room for MEMSCOPE_LEAKS_MAX_POOLS). Returns how many.
 * Blocks of a pool carved out of HAL lie inside HAL blocks: memscope_pools_nested says when a sum
 * over these pools counts memory twice.
 */
size_t memscope_leaks_totals(const struct memscope_leaks *l, unsigned kind, uint32_t src,
	struct memscope_leaks_total *out);
/*
 * Whether the findings of kind of input src hold HAL and a pool carved out of it
 * (memscope_pools_nested), so that a sum over their pools counts memory twice; for
 * MEMSCOPE_LEAKS_ALL_INPUTS whether those of some one input do (PTA in one input and HAL in
 * another are two memories, and sum).
 */
int memscope_leaks_nested(const struct memscope_leaks *l, unsigned kind, uint32_t src);

/* Room for any text of memscope_leaks_totals_text. */
#define MEMSCOPE_LEAKS_TOTALS_TEXT_MAX 640
/*
 * The n totals t as a text report writes them, bytes by memscope_bytes_text: "0 B" for none,
 * "PTA 3.51 MiB" for one pool, "5.00 MiB: PTA 3.00 MiB in 2 blocks, ATB 2.00 MiB in 1 block"
 * for several, and when nested (memscope_leaks_nested of the findings they count) and t holds
 * HAL and a pool carved out of it, no sum: "HAL 31.4 MiB in 7 blocks, PTA 7.64 MiB in 10 blocks,
 * not summed: PTA lies inside HAL". Into buf (size bytes; MEMSCOPE_LEAKS_TOTALS_TEXT_MAX is
 * enough). Returns buf.
 */
const char *memscope_leaks_totals_text(
	char *buf, size_t size, const struct memscope_leaks_total *t, size_t n, int nested);
/* An out-of-memory event (OOM_DETAIL OOM_TRIGGER: a PyTorch snapshot's oom entry, msMemScope's
 * failed halMemAlloc) and the allocator's state then. */
struct memscope_leaks_oom {
	uint32_t src;
	uint64_t pid; /* MEMSCOPE_ID_NONE for none (a snapshot's) */
	int32_t device;
	uint64_t ts_ns, line;
	int64_t requested;   /* bytes asked for: its size, or msMemScope's req_size; -1 unknown */
	int64_t device_free; /* free bytes the device reported (device_free attr); -1 unknown */
	int64_t reserved, allocated; /* the allocator's, from attrs of those names; -1 unknown */
	/*
	 * The blocks of its device (and process) alive at that moment, per pool ascending, as
	 * memscope_leaks_totals gives them (nested: memscope_pools_nested of their pools); known
	 * for the first MEMSCOPE_LEAKS_OOM_STATES events only (n_pools 0 after them)
	 */
	struct memscope_leaks_total pools[16];
	size_t n_pools;
	int partial; /* blocks freed after it were read before it (rows out of time order): the
			bytes above are a lower bound */
	/* who held the most of those bytes: an owner tag (string id) or, for blocks without one,
	 * the Python stack, else the C stack of their MALLOC (stack ids); 0 when unknown */
	uint32_t top_owner, top_stack_py, top_stack_c;
	uint64_t top_bytes, top_blocks;
};
/* the out-of-memory events whose allocator state is worked out */
#define MEMSCOPE_LEAKS_OOM_STATES 16

/* The out-of-memory events of every input (*n of them), by input then time. Borrowed, as the
 * results. */
const struct memscope_leaks_oom *memscope_leaks_ooms(const struct memscope_leaks *l, size_t *n);

/* mark groups by input, then in order of the first row of their (input, process, device) */
const struct memscope_mark_group *memscope_leaks_mark_groups(
	const struct memscope_leaks *l, size_t *n);
/* by input, process, device, pool */
const struct memscope_fluct *memscope_leaks_fluct(const struct memscope_leaks *l, size_t *n);
const struct memscope_leaks_stats *memscope_leaks_stats(const struct memscope_leaks *l);
const struct memscope_leaks_opts *memscope_leaks_opts(const struct memscope_leaks *l);
/* the steps of every process */
const struct memscope_steps *memscope_leaks_steps(const struct memscope_leaks *l);

/* How an input is shown in reports. */
struct memscope_leaks_input {
	const char *name;
	int ptr_decimal; /* the input writes Ptr in decimal (legacy layout) */
};

enum memscope_leaks_format {
	MEMSCOPE_LEAKS_TEXT, /* per input, the groups of each kind, largest first; with several
				inputs with leaks, the groups merged across them; a summary */
	MEMSCOPE_LEAKS_JSON, /* {"leaks":[...],"groups":[...],"across":[...],"fluctuation":[...],
				"summary":{..., "inputs":[...]}} */
	MEMSCOPE_LEAKS_CSV,  /* one row per finding */
	MEMSCOPE_LEAKS_REFERENCE, /* only the lines msMemScope writes (step leaks, fluctuation,
				     marked range), byte for byte */
};

/*
 * Write the results of a finished analysis. inputs[src] names each input (n_inputs of them).
 * Text lists the first memscope_leaks_opts.top groups of each input and kind, and of each kind
 * across inputs, JSON and CSV the findings of those groups and the groups (all of them when top
 * is 0); the reference's lines have every finding. 0, MEMSCOPE_E_IO (errno set by the failing
 * write) or MEMSCOPE_E_NOMEM (text: the names of the inputs across them; nothing written).
 */
int memscope_leaks_write(FILE *out, enum memscope_leaks_format fmt, const struct memscope_leaks *l,
	const struct memscope_strtab *st, const struct memscope_leaks_input *inputs,
	size_t n_inputs);

/* The analysis interface of a struct memscope_leaks (memscope/analysis.h); its again hook asks for
 * the second pass of memscope_leaks_needs_rewind. */
extern const struct memscope_analysis memscope_leaks_analysis;

#endif
