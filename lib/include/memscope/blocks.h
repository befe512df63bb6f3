/* The live-block map: MALLOC/FREE pairing into blocks, the identity and exit rules it applies,
 * and the pools as bits. */
#ifndef MEMSCOPE_BLOCKS_H
#define MEMSCOPE_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "event.h"

struct memscope_strtab;

/* A pool's bit in a set of pools (pool is an enum memscope_subtype; memscope_leaks_opts.pools). */
#define MEMSCOPE_POOL_BIT(pool) (UINT64_C(1) << (pool))
/* the step-check pools: the reference's PTA caching, ATB, MindSpore (not PTA workspace, not
 * HAL), and PyTorch's CUDA caching allocator */
#define MEMSCOPE_POOLS_FRAMEWORK                                                                   \
	(MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_PTA) | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_ATB) |               \
		MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_MINDSPORE) |                                        \
		MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA_CACHING))
#define MEMSCOPE_POOLS_ALL                                                                         \
	(MEMSCOPE_POOLS_FRAMEWORK | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_PTA_WORKSPACE) |                \
		MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL) |                                              \
		MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HOST_PINNED) |                                      \
		MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HOST) | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_GE) |        \
		MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_MMAP) | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA) |      \
		MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA_MANAGED))

/* the device pools that other pools are carved out of: Ascend's HAL and CUDA's device memory
 * (the caching allocator's segments) */
#define MEMSCOPE_POOLS_OUTER                                                                       \
	(MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL) | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA))
/* the pools carved out of an outer pool's memory (the framework pools, PTA workspace): their
 * blocks are HAL or CUDA blocks too */
#define MEMSCOPE_POOLS_INNER                                                                       \
	(MEMSCOPE_POOLS_FRAMEWORK | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_PTA_WORKSPACE))

/*
 * The pools an analysis counts when the user names none, from the pools its input had blocks
 * in (seen): the framework pools and every pool not nested in another when a framework pool is
 * present, the outer pools (HAL, CUDA) dropped (their bytes hold theirs); every pool seen
 * otherwise. Counting HAL beside a pool carved out of it would count the same memory twice.
 */
static inline uint64_t memscope_pools_default(uint64_t seen)
{
	return seen & MEMSCOPE_POOLS_INNER ? seen & ~MEMSCOPE_POOLS_OUTER : seen;
}

/* Whether pools holds an outer pool and a pool carved out of one, whose bytes a sum counts
 * twice. */
static inline int memscope_pools_nested(uint64_t pools)
{
	return (pools & MEMSCOPE_POOLS_OUTER) && (pools & MEMSCOPE_POOLS_INNER);
}

/* The name of the outer pool of pools for messages ("HAL holds ..."): HAL unless pools hold CUDA
 * and not HAL. */
static inline const char *memscope_pools_outer_name(uint64_t pools)
{
	return (pools & MEMSCOPE_POOLS_OUTER) == MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA) ? "CUDA"
										      : "HAL";
}

/* One allocation block: a MALLOC and, once seen, its FREE. */
struct memscope_block {
	uint32_t src;
	int32_t device;
	uint64_t pid;
	uint64_t tid;	   /* the MALLOC's thread (MEMSCOPE_ID_NONE for N/A) */
	uint64_t alloc_id; /* 0 when the input has no allocation_id (legacy) */
	uint64_t ptr;
	int64_t size; /* the MALLOC's size */
	uint64_t alloc_ts_ns, free_ts_ns;
	uint64_t alloc_event_id, free_event_id; /* ID column of the MALLOC / FREE rows */
	uint64_t alloc_line, free_line;
	uint16_t pool;		    /* enum memscope_subtype */
	uint16_t flags;		    /* enum memscope_block_flag */
	uint32_t stack_py, stack_c; /* stacks of the MALLOC */
	uint32_t owner;	   /* string id of the MALLOC's `owner` attr; 0 when none or the map has no
			      string table */
	uint32_t op;	   /* the op the MALLOC names (memscope_event_op), 0 when none */
	uint32_t file;	   /* the MALLOC's memscope_event.file: 0 when in the input itself */
	uint64_t n_access; /* ACCESS rows fed while the block was live */
	uint64_t first_access_ts_ns, last_access_ts_ns; /* their earliest and latest times */
	uint64_t tag; /* the caller's value, set by memscope_blocks_tag (0 until then) */
};

enum memscope_block_flag {
	MEMSCOPE_BLOCK_FREED = 1u << 0,	       /* a FREE was seen (free_* fields are set) */
	MEMSCOPE_BLOCK_SHADOW_FREE = 1u << 1,  /* that FREE is the reference's synthetic shadow:true
						* free:  the block was in fact alive at exit */
	MEMSCOPE_BLOCK_SHADOW_ALLOC = 1u << 2, /* the MALLOC is a promoted historical block */
	MEMSCOPE_BLOCK_REPLACED = 1u << 3,     /* its key was allocated again before any FREE */
	MEMSCOPE_BLOCK_NO_PTR = 1u << 4,       /* its MALLOC has no address (Ptr N/A: the Ascend
						  profiler's blocks); ptr is 0 */
	MEMSCOPE_BLOCK_RECORDED = 1u << 5,     /* its MALLOC names the host call that made it
						  (func: memscope-record's events) */
	MEMSCOPE_BLOCK_BEFORE_TRACE = 1u << 6, /* allocated before the recorded history: its
						  MALLOC has the before_trace attr (a PyTorch
						  snapshot's block from its segments), its time
						  is not its own */
};

/*
 * The "Exit rule" of formats/analyses.md, shared by the leak check and the database's blocks: a row
 * is "real" unless it is SYSTEM or one of the reference's synthetic shadow:true rows; a block its
 * shadow FREE closed was alive at exit when that FREE is not before the last real row of its
 * process (else it was freed while not tracing, or its address was reused).
 */
static inline int memscope_event_is_real(const struct memscope_event *ev)
{
	return ev->kind != MEMSCOPE_KIND_SYSTEM && !(ev->flags & MEMSCOPE_EV_SHADOW);
}

static inline int memscope_shadow_free_at_exit(
	const struct memscope_block *b, uint64_t last_real_ts)
{
	return b->free_ts_ns >= last_real_ts;
}

/* What one event did to the live-block map. */
enum memscope_pair {
	MEMSCOPE_PAIR_NONE = 0,	      /* not a MALLOC or FREE */
	MEMSCOPE_PAIR_ALLOC,	      /* a new live block */
	MEMSCOPE_PAIR_FREE,	      /* closed a live block (*out holds it) */
	MEMSCOPE_PAIR_SHADOW_FREE,    /* closed a live block with a synthetic free (*out; alive at
					 exit) */
	MEMSCOPE_PAIR_UNMATCHED_FREE, /* FREE with no live block (counted) */
	MEMSCOPE_PAIR_REPLACED, /* MALLOC on a live key: the old block is in *out, flagged REPLACED
				 */
	MEMSCOPE_PAIR_ACCESS,	/* an ACCESS of a live block (counted in the block) */
};

/*
 * The live-block map (formats/analyses.md "Block identity"): blocks are keyed by
 * (src, pid, allocation_id) when the MALLOC/FREE carries one, else by (src, pid, Event Type, Ptr)
 * with the device compared only when both rows name one (legacy HAL FREE rows say N/A).
 * Memory is proportional to the live blocks. Feed events in time order per (src, pid) when the
 * input has no allocation ids (address reuse); with allocation ids file order is enough.
 */
struct memscope_blocks;

/*
 * st (may be NULL) is where the MALLOC rows' owner tags are interned; borrowed, it must outlive the
 * map. NULL on OOM.
 */
struct memscope_blocks *memscope_blocks_new(struct memscope_strtab *st);
void memscope_blocks_free(struct memscope_blocks *b);

/*
 * Apply one event. Returns a enum memscope_pair value (>= 0) or MEMSCOPE_E_NOMEM. For FREE,
 * SHADOW_FREE and REPLACED, *out (may be NULL) receives the closed block. An ACCESS finds its
 * block like a FREE (its pool from the `type` attr when it has no allocation_id).
 */
int memscope_blocks_feed(
	struct memscope_blocks *b, const struct memscope_event *ev, struct memscope_block *out);

/* Set the tag of the block the last feed allocated (ALLOC or REPLACED); no effect otherwise. */
void memscope_blocks_tag(struct memscope_blocks *b, uint64_t tag);

/* Blocks still live (never freed). */
size_t memscope_blocks_live(const struct memscope_blocks *b);
/* Counters of what feeding saw. */
struct memscope_blocks_stats {
	uint64_t n_alloc, n_free, n_shadow_free, n_unmatched_free, n_replaced;
};
const struct memscope_blocks_stats *memscope_blocks_stats(const struct memscope_blocks *b);

/* Call fn for every live block, in allocation order. fn returns 0 to go on. */
int memscope_blocks_foreach_live(const struct memscope_blocks *b,
	int (*fn)(void *ctx, const struct memscope_block *blk), void *ctx);

#endif
