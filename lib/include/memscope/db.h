/* Writing the SQLite database MindStudio Insight opens (formats/sqlite.md): msMemScope's
 * memscope_dump and python_trace_{pid} tables, and our blocks table, view and indexes. */
#ifndef MEMSCOPE_DB_H
#define MEMSCOPE_DB_H

#include <stdint.h>

#include "error.h"
#include "event.h"
#include "source.h"

struct memscope_strtab;
struct memscope_db_writer;

/* What a writer has written so far. */
struct memscope_db_stats {
	uint64_t n_rows;	   /* memscope_dump rows */
	uint64_t n_trace_rows;	   /* python_trace_{pid} rows */
	uint64_t n_trace_tables;   /* python_trace_{pid} tables */
	uint64_t n_blocks;	   /* memscope_blocks rows */
	uint64_t n_unreleased;	   /* of them, alive at exit */
	uint64_t n_unmatched_free; /* FREE rows that closed no block */
	uint64_t n_sources;
};

/*
 * Create a database at path, which must be an empty or missing file (memscope-db gives a fresh
 * temporary file and renames it once finished). Everything is written in one transaction, with
 * no rollback journal: a database whose writer failed or was not finished is to be deleted, not
 * used. st is the table the events' ids refer to (borrowed, must outlive the writer; MALLOC
 * owner tags are interned into it). On success *out is the caller's to free. Errors:
 * MEMSCOPE_E_IO (cannot create), MEMSCOPE_E_NOMEM; err says why.
 */
int memscope_db_writer_open(struct memscope_db_writer **out, const char *path,
	struct memscope_strtab *st, struct memscope_error *err);

/*
 * One memscope_dump row for ev (its spelling is the dump CSV writer's; Attr as JSON). Events come
 * input by input: ev->src numbers the input and must not be one already ended. Errors:
 * MEMSCOPE_E_INVALID (an Attr value holds a NUL byte, which JSON text here cannot carry: err names
 * the row), MEMSCOPE_E_ARG (an ended input), MEMSCOPE_E_IO, MEMSCOPE_E_NOMEM.
 */
int memscope_db_writer_event(
	struct memscope_db_writer *w, const struct memscope_event *ev, struct memscope_error *err);

/* One row of table python_trace_{row->pid} (created on first use). Errors as above. */
int memscope_db_writer_trace(struct memscope_db_writer *w, const struct memscope_trace_row *row,
	struct memscope_error *err);

/*
 * End input src: its blocks still open are written (unreleased at exit), and its row of
 * memscope_sources (name, format, layout, row range) is added. name is borrowed for the call.
 * An input number given no row and never ended is not recorded: the next input may take it.
 * 0, MEMSCOPE_E_ARG (src already ended), MEMSCOPE_E_IO or MEMSCOPE_E_NOMEM.
 */
int memscope_db_writer_end_source(struct memscope_db_writer *w, uint32_t src, const char *name,
	enum memscope_format format, enum memscope_layout layout, struct memscope_error *err);

/*
 * Build the indexes and the view, commit and close the database. After it only _stats and _free
 * may be called. 0, MEMSCOPE_E_IO or MEMSCOPE_E_NOMEM.
 */
int memscope_db_writer_finish(struct memscope_db_writer *w, struct memscope_error *err);

/* What w has written (borrowed, valid until w is freed; also after _finish). */
const struct memscope_db_stats *memscope_db_writer_stats(const struct memscope_db_writer *w);

/* Close (without committing when not finished) and free. NULL is fine. */
void memscope_db_writer_free(struct memscope_db_writer *w);

#endif
