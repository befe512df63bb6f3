/* Finding the inputs of a batch under files and folders (memscope-batch): event files, profiler
 * folders and the python_trace files that go with them, their rank and device from their paths. */
#ifndef MEMSCOPE_WALK_H
#define MEMSCOPE_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "source.h"

/* Room for a device text of memscope_device_of_path with its NUL ("3", "cpu"). */
#define MEMSCOPE_PATH_DEVICE_MAX 16

/* One input of a batch: an event file or a profiler folder, and its python_trace files. */
struct memscope_batch_input {
	/* the event file or profiler folder: a PATH given, or PATH + "/" + names under it (no
	 * second "/" when PATH ends in one) */
	char *path;
	char **traces; /* the python_trace files of its folder, in name order (natural) */
	size_t n_traces;
	int64_t rank;			       /* memscope_rank_of_path, else -1 unknown */
	char device[MEMSCOPE_PATH_DEVICE_MAX]; /* memscope_device_of_path, "" unknown */
	int err_code;  /* 0; or MEMSCOPE_E_IO for a PATH that cannot be looked up, a folder that
			  cannot be read, a file whose content could not be looked at */
	char *err_msg; /* with err_code: why, one printable line without the path ("cannot open
			  folder: Permission denied"); else NULL */
};

/* The inputs found under some PATHs, and what was left out. */
struct memscope_walk {
	/* in natural order of path (strverscmp: rank2 before rank10); a file or folder reached
	 * by several paths (the same device and inode) is listed once, by the first */
	struct memscope_batch_input *inputs;
	size_t n;
	/* entries under folders that are neither inputs, nor their python_trace files, nor
	 * walked: files whose name and content say no event format, hidden entries (".x"),
	 * symbolic links to folders */
	uint64_t n_skipped;
	/* python_trace files in a folder with no input beside them (not in n_skipped) */
	uint64_t n_orphan_traces;
};

/*
 * Find the inputs under the n paths (memscope-batch(1) says the same to its users):
 * - a path that is a file (or a symbolic link to one) is one input whatever its name or
 *   content; one that cannot be looked up is an input carrying the error;
 * - a path that is a folder is walked, names in natural order: hidden entries skipped,
 *   symbolic links to files followed, to folders not (loops); a folder named *_ascend_pt,
 *   *_ascend_ms or PROF_*, or ASCEND_PROFILER_OUTPUT or mindstudio_profiler_output (an
 *   export's output folder met on its own), is one input (a profiler folder), not walked, and
 *   so is a path that is a folder the profiler reader reads as one output whatever its name
 *   (memory files in it or in its ASCEND_PROFILER_OUTPUT, ...: a renamed copy); a folder that
 *   cannot be read is an input carrying the error;
 * - in a walked folder, a file is taken as each format's reader says (memscope-batch(1) lists
 *   them): as an input or a python_trace file by its name alone (without a .gz or .zst ending:
 *   memscope_dump_*.csv, *.mscap, python_trace_*.csv); when its name ends as some reader's files
 *   end (*.csv, *.pickle, ...) and it is a regular file, as an input when its first bytes say an
 *   event format the walk takes (also one that cannot be read as it is: a newer capture version,
 *   a compressed database; its read says why; a database only when it holds events), as a
 *   python_trace file when they say so, as an input carrying the error when it cannot be opened;
 *   a python_trace file goes with the first input file of its folder; everything else is skipped
 *   and counted. Only the first 64 KiB of a file whose name does not say are read (of a
 *   compressed one, what gives the library's format detection its bytes), of a database its
 *   table list.
 * notice (may be NULL) gets one printable line per thing worth telling (src 0): python_trace
 * files with no input beside them, a link to a folder not followed, a file listed once for several
 * paths, profiler files outside a profiler folder; ctx is its first argument. *out is set first,
 * and is the caller's to free with memscope_walk_free whatever the return. Returns 0;
 * MEMSCOPE_E_ARG (paths NULL with n > 0 or one of them NULL, out NULL), MEMSCOPE_E_NOMEM (err
 * set; *out empty then).
 */
int memscope_walk(const char *const *paths, size_t n, struct memscope_walk *out,
	memscope_notice_fn notice, void *ctx, struct memscope_error *err);

/* Free everything w holds and clear it. NULL is fine. */
void memscope_walk_free(struct memscope_walk *w);

/*
 * FNV-1a 64 over every input's path, python_trace files, rank, device and error, in order:
 * partial runs (shards) and their merge check that they saw the same list. Independent of the
 * host's byte order.
 */
uint64_t memscope_walk_hash(const struct memscope_walk *w);

/*
 * The rank a path gives: from its deepest component (the file name first) that holds "rank",
 * in any case and not preceded by a letter, then an optional "_" or "-", then decimal digits
 * (rank3, rank_3, RANK-03, test_rank_1, rank3_memory_snapshot.pickle; not frank3 nor ranking);
 * the first such in the component. -1 when none does (a number of more than 18 digits is
 * none).
 */
int64_t memscope_rank_of_path(const char *path);

/*
 * The device a path gives: its deepest component that is device_N or deviceN (N decimal
 * digits, below 2^31) gives "N" without leading zeros, one that is device_cpu gives "cpu"
 * (msMemScope's folders). Written into buf (size bytes, MEMSCOPE_PATH_DEVICE_MAX is enough;
 * "" when unknown). Returns its length, 0 when unknown.
 */
size_t memscope_device_of_path(const char *path, char *buf, size_t size);

#endif
