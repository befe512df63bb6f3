/* What the reader of memscope-batch's parts (batch_part.c) needs of the run
 * (batch_write.c): the kinds of a summary's fields, and a part's header admitted into a run. */
#ifndef MEMSCOPE_BATCH_RUN_H
#define MEMSCOPE_BATCH_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "memscope/batch.h"

/* A part's header line (memscope_batch_part_header) as read. */
struct ms__batch_part_head {
	int seen; /* bits: 1 kind, 2 version, 4 inputs, 8 list, 16 lenient, 32 shard, 64 shards */
	int64_t inputs, lenient, shard, shards;
	uint64_t hash;
};

/* Whether field f of a summary is a text (else a number). */
int ms__batch_field_text(enum memscope_sum_field f);

/* Whether v of field f is a byte figure that overflowed (held at MEMSCOPE_SUM_OVERFLOW). */
int ms__batch_overflowed(size_t f, int64_t v);

/*
 * The part of file name whose header is h (every field seen, 0 <= shard < shards, inputs at
 * most MEMSCOPE_BATCH_MAX_INPUTS) joined to the run *b: a new run in *b when it is NULL (the
 * caller frees it, on failure too), else h checked against it (the same inputs and list, read
 * as leniently, in as many shards, its shard's part not given before). 0, MEMSCOPE_E_NOMEM or
 * MEMSCOPE_E_INVALID (err says why, at line 1 of name).
 */
int ms__batch_join_part(struct memscope_batch **b, const struct ms__batch_part_head *h,
	const char *name, struct memscope_error *err);

#endif
