/* Inefficient memory: blocks allocated too early, freed too late, or left idle between uses, by
 * the reference's API-counter model (formats/analyses.md, the "Inefficient memory" sections). */
#ifndef MEMSCOPE_INEFFICIENT_H
#define MEMSCOPE_INEFFICIENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "error.h"
#include "event.h"

struct memscope_strtab;
struct memscope_source;

/* what a block was flagged for; also bits of memscope_inefficient_opts.types */
enum memscope_ineff_type {
	MEMSCOPE_INEFF_EARLY = 1u << 0, /* early_allocation: another API freed memory between its
					   MALLOC and its first use */
	MEMSCOPE_INEFF_LATE = 1u << 1,	/* late_deallocation: another API allocated memory between
					   its last use and its FREE */
	MEMSCOPE_INEFF_IDLE = 1u << 2,	/* temporary_idleness: more than the threshold of APIs
					   between two uses */
	MEMSCOPE_INEFF_ALL = 7u,
};

/* The reference's name of one type bit ("early_allocation"); NULL for anything else. */
const char *memscope_ineff_type_name(unsigned type);

/* API families: each (process, family) has its own API counter. */
enum memscope_ineff_family {
	MEMSCOPE_INEFF_PTA = 0, /* ATEN ops; PTA (and PTA workspace) blocks */
	MEMSCOPE_INEFF_ATB = 1, /* ATB ops; ATB blocks */
	MEMSCOPE_INEFF_FAMILIES = 2,
};

/* What to look for. Start from memscope_inefficient_opts_init. */
struct memscope_inefficient_opts {
	unsigned types;		 /* MEMSCOPE_INEFF_* bits (all) */
	uint64_t idle_threshold; /* idle when two uses are more than this many APIs apart (3000) */
	uint64_t min_size;	 /* blocks smaller than this many bytes are not flagged (0) */
};

/* The reference's defaults: every type, threshold 3000, no size limit. */
void memscope_inefficient_opts_init(struct memscope_inefficient_opts *o);

/* One API of a block's life: its number in the family's counter (from 1; 0 = none). */
struct memscope_ineff_api {
	uint64_t api;
	uint64_t ts_ns; /* the block's row in that API */
	uint32_t op;	/* string id of the op that made the API; 0 when the row was an API of
			   its own (a memory event outside any op) */
};

/* A flagged block. */
struct memscope_ineff_block {
	uint32_t src;
	uint64_t pid;
	int32_t device;
	uint16_t pool;	  /* enum memscope_subtype of the MALLOC */
	uint8_t family;	  /* enum memscope_ineff_family */
	uint8_t n_types;  /* entries of order[] */
	uint8_t order[3]; /* the types, one bit each, in the order they were found (the order
			     the reference joins them in) */
	unsigned types;	  /* the same as bits */
	int has_alloc_id; /* alloc_id is set (legacy files have none) */
	uint64_t alloc_id;
	uint64_t ptr;
	int64_t size;
	uint64_t alloc_event_id; /* ID column of the MALLOC row */
	uint64_t alloc_line;	 /* its line (capture files: record number) */
	uint64_t alloc_seq;	 /* its place among the events fed (file order) */
	uint32_t owner;		 /* string id of its owner tag, 0: none */
	uint32_t stack_py, stack_c;
	int freed; /* a FREE was seen (else free.api is 0) */
	struct memscope_ineff_api alloc, first_access, last_access, free;
	uint64_t early_free_api;  /* early: the other API that freed memory in between */
	uint64_t early_use_api;	  /* early: the first use in another API than the MALLOC's */
	uint64_t late_malloc_api; /* late: the other API that allocated memory in between */
	uint64_t idle_from_api, idle_to_api; /* idle: the first distance above the threshold */
	uint64_t n_access;		     /* ACCESS rows */
	uint64_t max_idle_apis;		     /* longest distance between two consecutive uses */
	uint64_t unused_apis; /* APIs it sat unused for its types: first use - MALLOC (early),
				 FREE - last use (late), and every idle distance above the
				 threshold (idle) */
	uint64_t wasted;      /* size x unused_apis, byte-APIs (saturating) */
};

struct memscope_inefficient_stats {
	uint64_t n_events;
	uint64_t n_apis[MEMSCOPE_INEFF_FAMILIES]; /* APIs counted, over all processes */
	uint64_t n_ops;				  /* op starts */
	uint64_t n_mallocs, n_frees, n_accesses;  /* rows of the PTA and ATB families */
	uint64_t n_untracked;	/* ACCESS or FREE rows of no live block (no MALLOC seen, or
				   freed already): counted as APIs, not judged */
	uint32_t untracked_src; /* the first one: its input, process and ID */
	uint64_t untracked_pid, untracked_id;
	uint64_t n_replaced;	  /* MALLOC on a block still live: the old one ends there */
	uint64_t n_shadow;	  /* shadow:true rows: not APIs (the reference's online rule) */
	uint64_t n_other_access;  /* ACCESS rows of other pools (HAL, MindSpore, none): ignored */
	uint64_t n_alive_at_end;  /* judged blocks never freed */
	uint64_t n_blocks, bytes; /* flagged blocks and their bytes */
	uint64_t n_type[3], type_bytes[3]; /* per type, indexed by bit number */
	uint64_t rows_held;		   /* peak rows held to be put in time order */
};

/*
 * The analysis. Feed it every event of every input (src numbers them), then finish. The
 * reference's files are not in time order (a block's rows are written when it is freed), and an
 * API count depends on every row before it, so the rows of the PTA and ATB families (ops,
 * MALLOC, FREE, ACCESS) are kept, 32 bytes each plus 64 per MALLOC, until finish puts each
 * process in time order and replays it. Other rows cost nothing.
 */
struct memscope_inefficient;

/* o may be NULL (defaults). st is the events' table (borrowed, must outlive). NULL on OOM. */
struct memscope_inefficient *memscope_inefficient_new(
	const struct memscope_inefficient_opts *o, struct memscope_strtab *st);
void memscope_inefficient_free(struct memscope_inefficient *a);

/* One event. 0 or MEMSCOPE_E_NOMEM. */
int memscope_inefficient_feed(struct memscope_inefficient *a, const struct memscope_event *ev);

/* After the last event: order, replay, rank. Call once. 0 or MEMSCOPE_E_NOMEM. */
int memscope_inefficient_finish(struct memscope_inefficient *a);

/*
 * Flagged blocks after finish, borrowed until the analysis is freed: ranked by wasted byte-APIs,
 * most first (then by input, process and MALLOC line).
 */
size_t memscope_inefficient_count(const struct memscope_inefficient *a);
const struct memscope_ineff_block *memscope_inefficient_get(
	const struct memscope_inefficient *a, size_t i);
const struct memscope_inefficient_stats *memscope_inefficient_stats(
	const struct memscope_inefficient *a);
const struct memscope_inefficient_opts *memscope_inefficient_opts(
	const struct memscope_inefficient *a);

/*
 * Whether input src was checked: 1 when it had an ACCESS row of the PTA or ATB pools (not a
 * shadow row), 0 otherwise (nothing of it can be flagged: a pass would be no pass).
 */
int memscope_inefficient_input_checked(const struct memscope_inefficient *a, uint32_t src);

/* Why input src was not checked ("no memory access events (ACCESS rows): not checked", static),
 * or NULL when it was. */
const char *memscope_inefficient_input_note(const struct memscope_inefficient *a, uint32_t src);

enum memscope_ineff_format {
	MEMSCOPE_INEFF_TEXT, /* ranked blocks with their evidence, then the summary per type */
	MEMSCOPE_INEFF_JSON, /* {"blocks":[...],"summary":{...}} */
	MEMSCOPE_INEFF_CSV,  /* one row per block */
};

/*
 * Write the report of a finished analysis: the first `top` blocks of the ranking (0: all), and
 * the summary of all. names[src] names each input (n_names of them). 0 or MEMSCOPE_E_IO (errno
 * set by the failing write).
 */
int memscope_inefficient_write(FILE *out, enum memscope_ineff_format fmt,
	const struct memscope_inefficient *a, const struct memscope_strtab *st,
	const char *const *names, size_t n_names, size_t top);

/*
 * The reference's annotation: copy the dump CSV src (opened, not read yet) to out, byte for byte
 * but for the MALLOC rows of input number `input`'s flagged blocks, whose Attr gets
 * `inefficient_type:<types, comma-joined in the order found>` (set if the Attr has the key,
 * appended otherwise). 0, MEMSCOPE_E_UNSUPPORTED (not a dump CSV), MEMSCOPE_E_INVALID (a
 * flagged row is not where the analysis saw it: the file changed), MEMSCOPE_E_IO,
 * MEMSCOPE_E_NOMEM; err says where.
 */
int memscope_inefficient_annotate(const struct memscope_inefficient *a, uint32_t input,
	struct memscope_source *src, FILE *out, struct memscope_error *err);

/* The analysis interface of a struct memscope_inefficient (memscope/analysis.h). */
extern const struct memscope_analysis memscope_inefficient_analysis;

#endif
