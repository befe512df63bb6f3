/* What the reader table answers the layers above it without their naming a format: what the
 * folder walk makes of a file, the kinds of input files for messages, what an input's end means. */
#ifndef MEMSCOPE_READERS_REGISTRY_H
#define MEMSCOPE_READERS_REGISTRY_H

#include <stddef.h>

#include "memscope/source.h"

/* What the folder walk (memscope_walk) makes of a file of a format: it is left out, an input, or
 * a python_trace file that goes with the first input of its folder. */
enum reader_walk { READER_WALK_SKIP, READER_WALK_INPUT, READER_WALK_TRACE };

/* What the end of an input of a format means for what is still allocated then: the program's
 * exit; the end of a profiler's window; the moment of a snapshot; the exit, or where the
 * recording stopped when it was read to its cut (--lenient; its stats' cut set). */
enum reader_end {
	READER_END_EXIT,
	READER_END_PROFILE,
	READER_END_SNAPSHOT,
	READER_END_EXIT_OR_CUT
};

/*
 * What the walk makes of a file named name, len bytes of it without a .gz or .zst ending:
 * READER_WALK_INPUT or READER_WALK_TRACE when a reader takes it by its name alone (its prefix and
 * one of its endings), -1 when its content decides (a name ending as some reader's files end),
 * READER_WALK_SKIP for any other name.
 */
int ms__reader_walk_by_name(const char *name, size_t len);

/*
 * What the walk makes of the file at path, which its first bytes say is of format f: that
 * reader's enum reader_walk, after its second look at the whole file when it has one (a
 * database holding no events is left out); MEMSCOPE_E_NOMEM.
 */
int ms__reader_walk_by_content(enum memscope_format f, const char *path);

/*
 * The kinds of input files the walk takes, for messages ("memscope_dump CSVs, capture files,
 * ..."), in the order of enum memscope_format, into buf (size bytes, cut to fit, NUL-ended).
 * Returns buf.
 */
char *ms__reader_walk_inputs(char *buf, size_t size);

/* What the end of an input of format f means (READER_END_EXIT for MEMSCOPE_FORMAT_UNKNOWN). */
enum reader_end ms__reader_end(enum memscope_format f);

#endif
