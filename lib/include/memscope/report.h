/* memscope-report's findings: every input of a session read once, the verdicts a user reads first
 * (peak, leaks, growth, inefficient memory, fragmentation, what could not be checked), the
 * details of one input, ranks side by side and a baseline beside the run, written as text, as
 * JSON (formats/report.md) or as one self-contained HTML page. */
#ifndef MEMSCOPE_REPORT_PUBLIC_H
#define MEMSCOPE_REPORT_PUBLIC_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "session.h"

/* A report, one thread's: made empty, then read (the run, then a baseline), finished, written. */
struct memscope_report;

/* A new empty report: 0 and *out the caller's to free (memscope_report_free), or
 * MEMSCOPE_E_NOMEM (*out NULL, err set). */
int memscope_report_new(struct memscope_report **out, struct memscope_error *err);

/* Free r and everything it kept. NULL is fine. */
void memscope_report_free(struct memscope_report *r);

/* Which run an input belongs to. */
enum memscope_report_side {
	MEMSCOPE_REPORT_RUN,	 /* the run the report is about */
	MEMSCOPE_REPORT_BASELINE /* the run it is compared with (--baseline) */
};

/*
 * Read every input of s (borrowed during the call; its inputs added, nothing read yet) as side,
 * once each and alone, with fresh analyses (leaks with memscope-leaks' defaults, the peak with
 * memscope-export's, inefficient memory with memscope-inefficient's, a flame profile by stack,
 * and what a memscope-batch summary counts), so memory follows one input at a time plus the
 * detail input kept: of the run's inputs, the one with the highest peak (the only one when one).
 * The session's notes arise as in memscope_session_run (its note callback); the report keeps
 * their texts too (the JSON's "notes"). Each side is read once.
 * An input that cannot be read: with one input in s, the error (returned, err set, nothing kept);
 * with several, a row whose status is "invalid" or "error" with its message, as memscope-batch
 * has it, and the read goes on (memscope_report_failed counts them).
 * Returns 0, or as memscope_session_run: the read's error for a single input (MEMSCOPE_E_INVALID,
 * _TRUNCATED, _UNSUPPORTED, _IO, _ARG for a database of several added as one), MEMSCOPE_E_NOMEM
 * (err set), MEMSCOPE_E_ARG for a side read twice, a session without inputs, or a call after
 * memscope_report_finish.
 */
int memscope_report_read(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, struct memscope_error *err);

/*
 * memscope_report_read in parts, for a caller that reads the inputs of s in other processes
 * (memscope-report's workers, forked after memscope_report_read_begin): begin; then for each
 * input i of s in order, from 0, either the line memscope_report_input_line wrote for it given
 * to memscope_report_add_line, or memscope_report_add_failed when no line came (its worker
 * died); then memscope_report_read_end. The report is then the one memscope_report_read of s
 * gives with several inputs, its notes given (s's callback) and kept in the same order, with one
 * read more: memscope_report_read_end reads the run's input with the highest peak again, in
 * this process, for its details (its notes not given twice). Meant for s of two inputs or more
 * (a single input's read error is a row here, and its baseline's per op rows are not kept).
 * Between begin and end, only these calls on side.
 */

/* As memscope_report_read's start: 0, MEMSCOPE_E_ARG (a side read twice, a session without
 * inputs, after finish), MEMSCOPE_E_NOMEM; err set. */
int memscope_report_read_begin(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, struct memscope_error *err);

/*
 * In a worker: input i of s read alone, as memscope_report_read reads it, and written to out as
 * one line with its newline (a JSON object: its summary as memscope_summary_write writes it, the
 * live bytes per step and the leak sites the report keeps per input, the notes its read gave; a
 * private format that only memscope_report_add_line of the same build reads). An input that
 * cannot be read is a line too (its summary says why). The notes of s are no longer given to its
 * callback (they go into the line): s is the worker's. 0, MEMSCOPE_E_NOMEM, MEMSCOPE_E_IO
 * (writing out); err set.
 */
int memscope_report_input_line(
	FILE *out, struct memscope_session *s, size_t i, struct memscope_error *err);

/*
 * In the caller: line[0, len) (memscope_report_input_line's, without its newline, borrowed)
 * added as input i of side, the next one: its notes given and kept by s, its row and sites
 * kept, then the on_input callback. 0, MEMSCOPE_E_ARG (not the next input), MEMSCOPE_E_INVALID
 * (not such a line), MEMSCOPE_E_NOMEM; err set, nothing of the input kept.
 */
int memscope_report_add_line(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, size_t i, const char *line, size_t len,
	struct memscope_error *err);

/*
 * Input i of side, the next one, could not be read by its worker: a row whose status is "error"
 * with msg (borrowed; one line naming the input, as memscope-batch's "its worker was killed"),
 * then the on_input callback. 0, MEMSCOPE_E_ARG (not the next input), MEMSCOPE_E_NOMEM; err set.
 */
int memscope_report_add_failed(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, size_t i, const char *msg, struct memscope_error *err);

/*
 * After every input of side was added: for the run, its input with the highest peak (the first
 * of them) read again for the details; the notes of s kept as memscope_report_read keeps them.
 * 0, MEMSCOPE_E_ARG (inputs not added, no begin), MEMSCOPE_E_NOMEM, or the error of that read
 * (the input changed since its worker read it); err set.
 */
int memscope_report_read_end(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, struct memscope_error *err);

/*
 * Called after each input of memscope_report_read has been read (for a progress line): side,
 * the input's index in its session, how many the session has, its name (borrowed during the
 * call). fn NULL: none. Set before memscope_report_read.
 */
void memscope_report_on_input(struct memscope_report *r,
	void (*fn)(void *ctx, enum memscope_report_side side, size_t i, size_t n, const char *name),
	void *ctx);

/*
 * Say before the run's read whether a baseline will be read (will 1) or not (0). With one input
 * a side, the run's read keeps for the baseline's per op comparison about 32 bytes per op and
 * pool row of its input: told there is no baseline, it keeps none. Not told: it keeps them.
 */
void memscope_report_expect_baseline(struct memscope_report *r, int will);

/* After the reads: the verdicts, the ranks compared, the baseline's differences. 0,
 * MEMSCOPE_E_NOMEM (err set), MEMSCOPE_E_ARG (no run read, or finished already). */
int memscope_report_finish(struct memscope_report *r, struct memscope_error *err);

enum memscope_report_format {
	MEMSCOPE_REPORT_TEXT, /* the verdict lines, one a line, then short tables */
	MEMSCOPE_REPORT_JSON, /* one JSON object (formats/report.md) and a newline */
	MEMSCOPE_REPORT_HTML, /* one self-contained page embedding that JSON (no network) */
};

/* Write a finished report in fmt to out (borrowed; written and flushed, not closed). 0,
 * MEMSCOPE_E_IO (errno set), MEMSCOPE_E_NOMEM, MEMSCOPE_E_ARG (not finished); err set. */
int memscope_report_write(FILE *out, enum memscope_report_format fmt,
	const struct memscope_report *r, struct memscope_error *err);

/* 1 when a verdict of a finished report is a finding (level "bad": leaks, growth), for the exit
 * status 1; else 0. */
int memscope_report_found(const struct memscope_report *r);

/* How many inputs side had (read or not); after memscope_report_read of that side. */
size_t memscope_report_inputs(const struct memscope_report *r, enum memscope_report_side side);

/* How many inputs of side could not be read (rows with status "invalid" or "error"). */
size_t memscope_report_failed(const struct memscope_report *r, enum memscope_report_side side);

/*
 * Why input i of side could not be read: its message as memscope-batch's row has it, one line
 * that starts with the input's name ("tree/rank30/...csv:12: invalid size ..."), or NULL when it
 * was read (or i is beyond the inputs). Borrowed until r is freed. A tool names each failed input
 * with it (memscope_report_failed of them).
 */
const char *memscope_report_error(
	const struct memscope_report *r, enum memscope_report_side side, size_t i);

#endif
