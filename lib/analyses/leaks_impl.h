/* What the files of the leak analysis share (leaks.c and the leaks_*.c it calls); library-internal.
 *
 * leaks.c owns the object and drives it: it feeds each row to the rules (leaks_rules.c), the op and
 * kernel logs (leaks_ops.c), the fluctuation samples (leaks_fluct.c), the out-of-memory events
 * (leaks_oom.c) and what each input had (leaks_inputs.c), and at the end has the findings grouped
 * (leaks_group.c) and merged across inputs (leaks_across.c). Calls go down from leaks.c; below
 * it, the rules call the fluctuation and out-of-memory files, the ops file the rules' processes,
 * the across file the group key; none come back. One object, one thread.
 */
#ifndef MEMSCOPE_LEAKS_IMPL_H
#define MEMSCOPE_LEAKS_IMPL_H

#include <stdint.h>
#include <stdlib.h>

#include "../core/clocks.h"
#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/error.h"
#include "memscope/leaks.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"

/* uthash must not exit on OOM: the failing insert sets l->oom and is undone by uthash (every
 * HASH_ADD of these files has the analysis in l). */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (l->oom = 1)
#include <uthash.h>

/* key of processes (device, pool 0), mark groups (pool 0) and fluctuation groups */
struct key {
	uint64_t pid;
	uint32_t src;
	int32_t device;
	uint32_t pool;
	uint32_t pad;
};

struct lproc {
	struct key key;
	struct memscope_pos max_mem; /* latest MALLOC/FREE row fed (not shadow) */
	uint64_t last_real_ts;	     /* latest non-SYSTEM, non-shadow row */
	struct buf kernels;	     /* KERNEL_LAUNCH positions: zigzag varint deltas of ts, id */
	struct memscope_pos last_kernel;
	uint64_t n_kernels;
	int kernels_unordered;
	uint64_t pools_seen; /* the pools of its MALLOC rows so far (MEMSCOPE_POOL_BIT) */
	UT_hash_handle hh;
};

struct mark_at {
	struct memscope_pos pos;
	uint64_t line;
};

struct mgroup {
	struct key key;
	struct memscope_mark_group g;
	struct mark_at *marks; /* the Mark rows with the text, in time order unless dirty */
	size_t n, cap;
	int dirty;	   /* one came out of order: sorted by the rewind */
	uint64_t n_blocks; /* blocks of the checked pools judged in this group */
	uint32_t seq;	   /* order of first sight */
	UT_hash_handle hh;
};

/* the op start and end rows of one thread, for the op of a finding (memscope_leak.op) */
struct tkey {
	uint64_t pid, tid;
	uint32_t src, pad;
};

struct othread {
	struct tkey key;
	struct buf log; /* per row: zigzag varint deltas of ts and id, varint name << 1 | is_end */
	struct memscope_pos last;
	uint64_t n;
	int unordered;
	UT_hash_handle hh;
};

/* a fluctuation group; its samples are in the analysis's fmap under fkey(seq, step)
 * (leaks_fluct.c) */
struct fgroup {
	struct key key;
	uint64_t seq;
	UT_hash_handle hh;
};

/* the bytes and blocks of each pool alive at an out-of-memory event */
struct oom_state {
	uint64_t bytes[64], n[64];
};

/* the report groups' key (ms__leaks_group_key) and its entry in a table of them */
struct gkey {
	uint32_t src, kind, pool, py, c, owner, op, pad;
};

struct gentry {
	struct gkey key;
	size_t idx;
	UT_hash_handle hh;
};

/* the analysis of memscope/leaks.h: its options, the state each leaks_*.c keeps, its results */
struct memscope_leaks {
	struct memscope_leaks_opts o;
	char *mark;
	uint32_t mark_id;
	uint64_t pools_step, pools_mark, pools_exit;
	struct memscope_strtab *st;
	struct memscope_steps *steps;
	struct memscope_blocks *blocks;
	struct clocks clocks; /* a folder's files recorded far apart: each its own time 0 */
	struct lproc *procs, *last_proc;
	struct mgroup *mgroups, *last_mg;
	struct fgroup *fgroups, *last_fg;
	struct u64map fmap; /* (group, step) -> lowest, highest used */
	struct memscope_block *shadowed;
	size_t n_shadowed, cap_shadowed;
	struct memscope_leak *leaks;
	size_t n_leaks, cap_leaks;
	struct memscope_leak_group *groups;
	size_t n_groups;
	size_t *members;
	struct memscope_leak_across *across;
	size_t n_across;
	size_t *across_groups; /* n_groups of them */
	struct othread *othreads, *last_ot;
	struct memscope_leaks_input_info *info; /* per src */
	size_t n_info;
	struct u64map clean_stacks; /* raw stack id -> the stack with memscope_frame_text frames */
	uint32_t *frames;
	size_t cap_frames;
	struct memscope_mark_group *mg_out;
	size_t n_mg_out;
	struct memscope_fluct *fl_out;
	size_t n_fl_out;
	struct memscope_fluct_step *fl_steps;
	size_t n_fl_steps;
	struct memscope_leaks_stats stats;
	/* out-of-memory events: kept across passes like the boundaries; what was alive then is
	 * worked out per pass for the first MEMSCOPE_LEAKS_OOM_STATES of them */
	struct memscope_leaks_oom *ooms;
	size_t n_ooms, cap_ooms;
	struct oom_state *oom_state; /* [MEMSCOPE_LEAKS_OOM_STATES] */
	struct u64map oom_owners;    /* oom_owner_key -> bytes, blocks */
	uint32_t key_device_free, key_req_size, key_reserved, key_allocated;
	int complete; /* second pass: every boundary is known, boundary rows are not fed again */
	int late;
	uint32_t late_src;
	uint64_t late_line;
	const char *late_why; /* static text: what was out of time order */
	int oom;
};

/* Find or add the entry of key k in a table of size-byte entries; NULL on OOM. */
#define GET_ENTRY(l, table, k, type, out)                                                          \
	do {                                                                                       \
		HASH_FIND(hh, (table), &(k), sizeof(k), (out));                                    \
		if (!(out) && ((out) = calloc(1, sizeof(type)))) {                                 \
			(out)->key = (k);                                                          \
			(l)->oom = 0;                                                              \
			HASH_ADD(hh, (table), key, sizeof(k), (out));                              \
			if ((l)->oom) {                                                            \
				free(out);                                                         \
				(out) = NULL;                                                      \
			}                                                                          \
		}                                                                                  \
	} while (0)

static inline int same_key(const struct key *a, const struct key *b)
{
	return a->pid == b->pid && a->src == b->src && a->device == b->device && a->pool == b->pool;
}

static inline struct memscope_pos alloc_pos(const struct memscope_block *b)
{
	struct memscope_pos p = { b->alloc_ts_ns, b->alloc_event_id };

	return p;
}

/* the order of the kinds in reports: step, mark, exit */
static inline int kind_rank(unsigned kind)
{
	return kind == MEMSCOPE_LEAK_STEP ? 0 : kind == MEMSCOPE_LEAK_MARK ? 1 : 2;
}

/* why a boundary row needs the second pass */
#define LATE_BOUNDARY "step or mark row out of time order"

/* ---- leaks_rules.c: the rules, with the processes and mark groups they keep ---- */

/* The process (src, pid) of the analysis, made on first sight; NULL on OOM. */
struct lproc *ms__leaks_proc(struct memscope_leaks *l, uint32_t src, uint64_t pid);
/* The mark group of (src, pid, device), made on first sight, numbered in that order; NULL on
 * OOM. */
struct mgroup *ms__leaks_mgroup(struct memscope_leaks *l, uint32_t src, uint64_t pid, int32_t dev);
/* The first row out of time order (src, line: why, a static text): a second pass is needed. */
void ms__leaks_set_late(struct memscope_leaks *l, uint32_t src, uint64_t line, const char *why);
/* A boundary row of process p: late if a MALLOC/FREE row after it in time came first. */
void ms__leaks_check_late(
	struct memscope_leaks *l, struct lproc *p, const struct memscope_event *ev);
/* A Mark row with the --mark text; one out of time order needs the second pass. 0 or NOMEM. */
int ms__leaks_add_mark(struct memscope_leaks *l, const struct memscope_event *ev);
/* The second pass: each mark group's marks in time order. */
void ms__leaks_marks_sort(struct memscope_leaks *l);
/* A MALLOC or FREE row of process p: paired, and a block that ends judged. 0 or a negative
 * code. */
int ms__leaks_feed_block(
	struct memscope_leaks *l, struct lproc *p, const struct memscope_event *ev);
/* At the end of a pass: the blocks alive when their input ended, and those a shadow FREE freed,
 * judged (the exit rule). 0 or a negative code. */
int ms__leaks_judge_live(struct memscope_leaks *l);
/* At the end of a pass: the mark groups by input in order of first sight (l->mg_out), each MARK
 * finding's group its index there. 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_marks_finish(struct memscope_leaks *l);

/* ---- leaks_ops.c: the op and kernel of each finding ---- */

/* A KERNEL_LAUNCH row of process p, into its log. 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_add_kernel(struct lproc *p, const struct memscope_event *ev);
/* An ATen or ATB op's start (end 0) or end row, into its thread's log. 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_add_op(struct memscope_leaks *l, const struct memscope_event *ev, int end);
/* kernel_index of every finding: its process's KERNEL_LAUNCH rows before its MALLOC (reorders
 * l->leaks). 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_kernel_indexes(struct memscope_leaks *l);
/* The op of every finding (reorders l->leaks). 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_ops_finish(struct memscope_leaks *l);

/* ---- leaks_fluct.c: the fluctuation ---- */

/* The used memory of a pool row, into the lowest and highest of its step. 0 or NOMEM. */
int ms__leaks_fluct_sample(struct memscope_leaks *l, const struct memscope_event *ev);
/* At the end of a pass: the fluctuation of every group (l->fl_out). 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_fluct_finish(struct memscope_leaks *l);

/* ---- leaks_oom.c: out-of-memory events ---- */

/* The attr keys an out-of-memory event's figures are read from. 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_oom_keys(struct memscope_leaks *l);
/* An out-of-memory row of process p (first pass only). 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_add_oom(
	struct memscope_leaks *l, const struct lproc *p, const struct memscope_event *ev);
/* Block b, at its end (freed at free_pos, or alive when its input ended), into the state of the
 * out-of-memory events it was alive at. 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_oom_account(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos);
/* At the end of a pass: each event's pools and largest holder, the events in report order. */
void ms__leaks_ooms_finish(struct memscope_leaks *l);

/* ---- leaks_group.c: the report groups ---- */

/* The key of memscope_leaks_opts.group_by from the fields of a finding or a group; src 0 for the
 * key across inputs. */
void ms__leaks_group_key(const struct memscope_leaks *l, uint32_t src, unsigned kind, uint32_t pool,
	uint32_t py, uint32_t c, uint32_t owner, uint32_t op, struct gkey *k);
/* After the ops: every finding's shown fields and group, the groups ranked, the findings in report
 * order (memscope_leaks_get) and by group (members), each input's counts. 0 or NOMEM. */
int ms__leaks_group(struct memscope_leaks *l);

/* ---- leaks_across.c: the groups merged across inputs ---- */

/* After ms__leaks_group: the groups of every input merged by their key without the input, ranked
 * per kind; each group's across index. 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_across(struct memscope_leaks *l);

/* ---- leaks_inputs.c: what each input had ---- */

/* A row of input src: its counts and earliest time. 0 or MEMSCOPE_E_NOMEM. */
int ms__leaks_note_input(struct memscope_leaks *l, const struct memscope_event *ev);
/* At the end of a pass: whether each input has steps, and enough for a step leak. 0 or a negative
 * code. */
int ms__leaks_note_steps(struct memscope_leaks *l);

#endif
