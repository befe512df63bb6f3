/* Our capture format as an output: a writer of events (formats/capture.md). */
#ifndef MEMSCOPE_CAPTURE_H
#define MEMSCOPE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "event.h"

struct memscope_strtab;
struct memscope_capture_writer;

/*
 * A writer of our capture format (formats/capture.md). out is borrowed. st is the table the events'
 * ids refer to (the writer may intern attr values into it). NULL on OOM.
 */
struct memscope_capture_writer *memscope_capture_writer_new(FILE *out, struct memscope_strtab *st);

/* Write one event. 0, MEMSCOPE_E_IO or MEMSCOPE_E_NOMEM. */
int memscope_capture_writer_write(struct memscope_capture_writer *w,
	const struct memscope_event *ev, struct memscope_error *err);

/*
 * Write a META record: key and value (NUL-terminated, borrowed for the call) are interned into the
 * writer's strtab and written as STRING records the first time, then the record naming both.
 * Informational: no event, not counted by the end record. May come before or between events, not
 * after finish (memscope-record writes the process's facts this way). 0, MEMSCOPE_E_NOMEM or
 * MEMSCOPE_E_IO with err set; after MEMSCOPE_E_IO the output is unusable (as after a failed write).
 */
int memscope_capture_writer_meta(struct memscope_capture_writer *w, const char *key,
	const char *value, struct memscope_error *err);

/* What stopped a recording early (the cause of a STOPPED record, formats/capture.md §3.1). */
enum memscope_capture_stop {
	MEMSCOPE_CAPTURE_STOP_WRITE = 1, /* a write error of the recorder (a full disk) */
	MEMSCOPE_CAPTURE_STOP_INPUT = 2, /* written from an input read leniently that was incomplete
					  * (cut, or itself stopped early) */
};

/*
 * Mark what is written as a recording that stopped early: finish then ends the file with a
 * STOPPED record in place of END (formats/capture.md §3.1), which readers refuse unless lenient.
 * cause: enum memscope_capture_stop; why (copied, cut at 127 bytes): the cause in words, e.g.
 * "No space left on device"; lost: the calls the recorder saw and did not record after the stop,
 * UINT64_MAX when not known. Any time before finish.
 */
void memscope_capture_writer_stop(struct memscope_capture_writer *w,
	enum memscope_capture_stop cause, const char *why, uint64_t lost);

/* Write the end record (END, or STOPPED after memscope_capture_writer_stop) and flush. Without it
 * the file reads as truncated. */
int memscope_capture_writer_finish(struct memscope_capture_writer *w, struct memscope_error *err);

/* Bytes written so far (header and end record included). */
uint64_t memscope_capture_writer_bytes(const struct memscope_capture_writer *w);

void memscope_capture_writer_free(struct memscope_capture_writer *w);

#endif
