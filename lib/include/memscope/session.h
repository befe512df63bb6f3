/* The session: the inputs a tool was given (files, folders, a database's parts, profiler
 * folders), their opening, the read that feeds them to the analyses, and every note about them. */
#ifndef MEMSCOPE_SESSION_H
#define MEMSCOPE_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "error.h"
#include "source.h"

struct memscope_strtab;

/*
 * One input of a session. Its strings are the session's, valid until it is freed or the input
 * removed (memscope_session_remove); the struct itself until the next memscope_session_add,
 * memscope_session_add_one or memscope_session_remove.
 */
struct memscope_input {
	/* as a user names it: the argument, a file found under a folder, or "DB:NAME" for one
	 * input of a database of several (DB its path, NAME the one memscope_sources recorded) */
	const char *name;
	const char *path; /* the file or folder read ("-": standard input) */
	uint32_t part;	  /* 0: all of path; k >= 1: only the k-th input of the database path */
	/* 1: only the python_trace_{pid} tables of the database path, which holds several inputs
	 * (they go with the whole file: MEMSCOPE_SESSION_TRACES) */
	int traces_only;
	/* added by memscope_session_add_one: a database of several is refused by the run */
	int as_one;
	unsigned n_reads;		  /* reads of it finished (memscope_session_run) */
	enum memscope_layout layout;	  /* of its first read (MEMSCOPE_LAYOUT_UNKNOWN before) */
	struct memscope_read_stats stats; /* of its first read (zeros before) */
};

/* What a note is about (struct memscope_note). */
enum memscope_note_kind {
	MEMSCOPE_NOTE_WALK,	 /* a folder walk's note: a link not followed, ... */
	MEMSCOPE_NOTE_SAME_FILE, /* a file named twice (a link, a folder holding it) listed once */
	MEMSCOPE_NOTE_TRACES_LEFT,  /* python_trace files under a folder left out (count) */
	MEMSCOPE_NOTE_HOW_READ,	    /* a reader's note on how it read the input (which export) */
	MEMSCOPE_NOTE_SKIPPED,	    /* bad rows skipped (count; lenient read) */
	MEMSCOPE_NOTE_CUT,	    /* where a cut or broken input stops (lenient read) */
	MEMSCOPE_NOTE_UNKNOWN_KIND, /* rows with an Event or Event Type not known, kept (count) */
	MEMSCOPE_NOTE_IGNORED_COLUMNS, /* CSV columns not known, dropped (count) */
	MEMSCOPE_NOTE_UNKNOWN_RECORDS, /* capture records of unknown type skipped (count) */
	MEMSCOPE_NOTE_AGAIN,	       /* a second pass starts, because of the row named */
};

/* memscope_note.input of a note about no one input (a folder, two names of one file) */
#define MEMSCOPE_NOTE_NO_INPUT SIZE_MAX

/* A diagnostic about an input, as data; text is the line a tool shows after its name. */
struct memscope_note {
	enum memscope_note_kind kind;
	/* 1: how the session went (HOW_READ, AGAIN): a quiet tool leaves it out; 0: what was
	 * left out or kept unusual, which a user must see */
	int info;
	/* the input it is about (its index when the note was given: a later
	 * memscope_session_remove does not renumber kept notes), or MEMSCOPE_NOTE_NO_INPUT */
	size_t input;
	uint64_t count;	  /* the count it reports (rows, files, the row of AGAIN), else 0 */
	const char *text; /* one printable line, no newline: "rank0.csv: skipped 3 bad rows ..." */
};

/* Called for each note as it arises (note and its text borrowed during the call). */
typedef void (*memscope_note_fn)(void *ctx, const struct memscope_note *note);

/* memscope_session_add's flags */
#define MEMSCOPE_SESSION_TRACES                                                                    \
	1u /* keep python_trace files (each after its input's), and after                          \
	      a database's parts its python_trace tables (traces_only) */

/*
 * The notes a read's stats give (skipped rows, a cut, unknown kinds, columns and records), in
 * that order, to fn as input number input named name (borrowed). For a tool that opens sources
 * itself; memscope_session_run gives them for its inputs. Never fails.
 */
void memscope_read_notes(const char *name, size_t input, const struct memscope_read_stats *s,
	memscope_note_fn fn, void *ctx);

/* A session, one thread's. */
struct memscope_session;

/*
 * A new session without inputs whose reads use the options ro (copied; NULL: defaults; its src
 * is set per input and its notice is the session's: a reader's notes become notes of the
 * session). fn (may be NULL) gets every note as it arises, with ctx. 0 and *out the caller's to
 * free, or MEMSCOPE_E_NOMEM (*out NULL, err set).
 */
int memscope_session_new(struct memscope_session **out, const struct memscope_read_opts *ro,
	memscope_note_fn fn, void *ctx, struct memscope_error *err);

/* Free s, its inputs and its notes. NULL is fine. */
void memscope_session_free(struct memscope_session *s);

/*
 * The read options of s's reads, the caller's to change between reads (a progress callback);
 * borrowed, valid until s is freed. Its notice and src are set by s at each opening.
 */
struct memscope_read_opts *memscope_session_read_opts(struct memscope_session *s);

/*
 * The inputs the n arguments args name (borrowed; copied), added in their order: a folder that
 * is not a profiler output stands for the inputs under it (memscope_walk: event files by name
 * or content, profiler output folders, at any depth), in natural order of their paths; its
 * python_trace files follow each input with traces with MEMSCOPE_SESSION_TRACES, else are said
 * to be left out (MEMSCOPE_NOTE_TRACES_LEFT); the walk's notes are given once the folder is
 * known to hold inputs. Any other argument as given. Then a second name of one file (same
 * device and inode) is dropped (MEMSCOPE_NOTE_SAME_FILE). Then a database of several inputs
 * (memscope_source_parts) stands for them, one input each ("DB:NAME", part k), followed with
 * MEMSCOPE_SESSION_TRACES by its python_trace tables (traces_only). Returns 0, or on failure
 * (err set; the inputs added so far stay): MEMSCOPE_E_IO (a folder or a file in it cannot be
 * read; a database another process keeps locked past the busy timeout), MEMSCOPE_E_INVALID (a
 * folder with nothing to read; a database whose memscope_sources is not right),
 * MEMSCOPE_E_NOMEM.
 */
int memscope_session_add(struct memscope_session *s, const char *const *args, size_t n,
	unsigned flags, struct memscope_error *err);

/*
 * Add arg as one input (memscope-convert, a side of memscope-compare): arg itself, a profiler
 * output folder too, or the one input in a folder of one (its walk's notes given then). A
 * database of several inputs is refused by memscope_session_run (MEMSCOPE_E_ARG), not here.
 * Returns 0, or as memscope_session_add, and MEMSCOPE_E_ARG for a folder of several inputs
 * (err names them; nothing added).
 */
int memscope_session_add_one(
	struct memscope_session *s, const char *arg, struct memscope_error *err);

/* Remove input i (those after it move down one; i < memscope_session_count(s)). */
void memscope_session_remove(struct memscope_session *s, size_t i);

/* The number of inputs of s. */
size_t memscope_session_count(const struct memscope_session *s);

/* Input i of s (i < memscope_session_count(s)); borrowed, see struct memscope_input. */
const struct memscope_input *memscope_session_input(const struct memscope_session *s, size_t i);

/* The inputs' names in order (memscope_session_count of them), for writers and messages;
 * borrowed until the next add or remove. */
const char *const *memscope_session_names(const struct memscope_session *s);

/* The files the inputs are read from in order (their path: a database's once per part); borrowed
 * as memscope_session_names. */
const char *const *memscope_session_paths(const struct memscope_session *s);

/* The notes given so far, in order (*n of them); borrowed until the next call into s. */
const struct memscope_note *memscope_session_notes(const struct memscope_session *s, size_t *n);

/*
 * The whole line of the error the last failed call into s set about an input (a folder with
 * nothing to read, a file under a folder walked that cannot be opened, a folder or database of
 * several read as one), "NAME: MESSAGE" unescaped: err holds it cut to memscope_error's sizes
 * when a path is long. NULL when that call did not fail or its error came from below (a reader,
 * the walk, no memory): err says it then. Borrowed until the next call into s.
 */
const char *memscope_session_error_line(const struct memscope_session *s);

/*
 * Open input i as memscope_source_open does (strings into st, borrowed, which must outlive the
 * events' use), with s's read options (src i) and the input's part: the session hands the
 * source the part of a database the input names. 0 and *out the caller's to
 * close, or memscope_source_open's errors (*out NULL, err set); MEMSCOPE_E_ARG when a part is
 * beyond those the file holds (at open for a file that is not a database, at read for one).
 */
int memscope_session_open(struct memscope_session *s, size_t i, struct memscope_strtab *st,
	struct memscope_source **out, struct memscope_error *err);

/*
 * memscope_run over every input of s (each opened by memscope_session_open, strings into st)
 * for the n_items
 * analyses of items: each input's layout and stats kept after its first read, with their notes
 * (memscope_read_notes); a second pass given as a MEMSCOPE_NOTE_AGAIN note. An input added as
 * one that is a database of several is refused first, nothing read: MEMSCOPE_E_ARG naming how
 * many it holds. Returns 0 or the first error, as memscope_run, err set.
 */
int memscope_session_run(struct memscope_session *s, struct memscope_strtab *st,
	const struct memscope_run_item *items, size_t n_items, struct memscope_error *err);

#endif
