/* The reference's dump CSV as an output: a writer of events, and a copy of a dump with Attr
 * edits. */
#ifndef MEMSCOPE_DUMP_CSV_H
#define MEMSCOPE_DUMP_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "event.h"

struct memscope_strtab;
struct memscope_csv_writer;
struct memscope_source;

/*
 * A writer of the reference's memscope_dump CSV (formats/dump-csv.md): the 12-column header, then
 * one row per event in the reference's exact spelling. out is borrowed (caller opens and closes
 * it); st is the table the events' ids refer to. NULL on OOM.
 */
struct memscope_csv_writer *memscope_csv_writer_new(FILE *out, const struct memscope_strtab *st);

/* Write one event (the header first, on the first call). 0 or MEMSCOPE_E_IO. */
int memscope_csv_writer_write(
	struct memscope_csv_writer *w, const struct memscope_event *ev, struct memscope_error *err);

/* Write the header if no event came, flush. 0 or MEMSCOPE_E_IO. Does not close out. */
int memscope_csv_writer_finish(struct memscope_csv_writer *w, struct memscope_error *err);

/* Bytes written so far (header included). */
uint64_t memscope_csv_writer_bytes(const struct memscope_csv_writer *w);

void memscope_csv_writer_free(struct memscope_csv_writer *w);

/* One Attr change for memscope_dump_copy_edit. */
struct memscope_attr_edit {
	uint64_t line;	   /* the row's first line */
	uint64_t event_id; /* its ID and Process Id columns, checked (pid MEMSCOPE_ID_NONE: */
	uint64_t pid;	   /* N/A) */
	const char *key;   /* attr key to set (borrowed) */
	const char *val;   /* its new value, val_len bytes (borrowed) */
	size_t val_len;
};

/*
 * Copy the dump CSV src (opened by memscope_source_open, not read) to out byte for byte, but for
 * the row of each edit (the row starting on edits[].line with its ID and pid; edits in file
 * order, one per row), whose Attr gets key:val: the value is replaced when the Attr has the
 * key, appended as the last entry otherwise. Such an Attr is written quoted, as "{k:v,...}".
 * 0, MEMSCOPE_E_UNSUPPORTED (not a dump CSV), MEMSCOPE_E_INVALID (an edit's row is not there or
 * has no Attr: the file is not the one analysed), MEMSCOPE_E_TRUNCATED, MEMSCOPE_E_IO,
 * MEMSCOPE_E_NOMEM; err says where.
 */
int memscope_dump_copy_edit(struct memscope_source *src, const struct memscope_attr_edit *edits,
	size_t n_edits, FILE *out, struct memscope_error *err);

#endif
