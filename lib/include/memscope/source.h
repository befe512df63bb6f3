/* Opening any supported input (the formats of enum memscope_format, recognised by content) and
 * streaming its events, or its python_trace rows, to a callback. */
#ifndef MEMSCOPE_SOURCE_H
#define MEMSCOPE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "compress.h"
#include "error.h"
#include "event.h"

struct memscope_strtab;
struct memscope_source;

enum memscope_format {
	MEMSCOPE_FORMAT_UNKNOWN = 0,
	MEMSCOPE_FORMAT_DUMP_CSV,     /* msMemScope memscope_dump CSV, current or legacy layout */
	MEMSCOPE_FORMAT_CAPTURE,      /* our binary capture format (formats/capture.md) */
	MEMSCOPE_FORMAT_PYTHON_TRACE, /* msMemScope python_trace CSV: function calls, no memory
					 events (read with memscope_source_read_trace) */
	MEMSCOPE_FORMAT_DB, /* an SQLite database with a memscope_dump (or leaks_dump) table:
			       msMemScope's --format=db, memscope-db's (formats/sqlite.md) */
	MEMSCOPE_FORMAT_MSPROF_CSV,  /* one memory CSV of the Ascend profiler: operator_memory,
					memory_record, npu_mem, npu_module_mem or static_op_mem
					(formats/msprof.md) */
	MEMSCOPE_FORMAT_MSPROF_JSON, /* the Ascend profiler's timeline (trace_view.json,
					msprof_*.json): its cpu_op slices and NPU MEM counters */
	MEMSCOPE_FORMAT_PROFILER,    /* a profiler output folder (torch_npu *_ascend_pt, MindSpore
					*_ascend_ms, msprof PROF_*, or their output folder): its
					memory files read as one input */
	MEMSCOPE_FORMAT_TORCH_SNAPSHOT, /* a PyTorch CUDA memory snapshot: the pickle that
					   torch.cuda.memory._dump_snapshot writes
					   (formats/torch-snapshot.md) */
	MEMSCOPE_FORMAT_NSYS,	/* an Nsight Systems SQLite export with CUDA memory usage events
				   (formats/nsys.md) */
	MEMSCOPE_FORMAT_KINETO, /* a PyTorch profiler trace (Kineto's Chrome trace JSON with
				   [memory] events, formats/kineto.md) */
};

/* Timestamp unit of a dump CSV: AUTO decides from the first timestamp (see memscope-convert(1)). */
enum memscope_time_unit {
	MEMSCOPE_TIME_AUTO = 0,
	MEMSCOPE_TIME_NS,
	MEMSCOPE_TIME_US,
};

/* dump CSV layouts */
enum memscope_layout {
	MEMSCOPE_LAYOUT_UNKNOWN = 0,
	MEMSCOPE_LAYOUT_CURRENT, /* ns timestamps */
	MEMSCOPE_LAYOUT_LEGACY,	 /* µs timestamps under the (ns) header (2025-04 builds) */
};

/*
 * Progress of a read: done bytes of the file read so far (of a compressed file, its compressed
 * bytes) of total, the file's size when it is a regular file, else 0 (standard input, a pipe).
 * Called from the reading thread as the file is read, at most once per 256 KiB of its bytes
 * however small the reads (a pipe's), and once more at its end (done is then the bytes read in
 * all, total too for a regular file), first once the format is known; for a database every 4096
 * rows, done being the file's size in the share of its rows read; never for a memory input. src
 * is the read options' src. It must be cheap and must not call into the source.
 */
typedef void (*memscope_progress_fn)(void *ctx, uint32_t src, uint64_t done, uint64_t total);

/*
 * A note on how an input is read that its user should see, one printable line (no newline):
 * which files of a profiler output folder are read when it holds several exports, values that
 * were not kept. Called from the reading thread (msg borrowed during the call); src is the
 * read options' src.
 */
typedef void (*memscope_notice_fn)(void *ctx, uint32_t src, const char *msg);

struct memscope_read_opts {
	int lenient;			   /* skip and count bad rows instead of failing */
	enum memscope_time_unit time_unit; /* dump CSV only */
	uint32_t src;			   /* stamped into every event's src */
	memscope_progress_fn progress;	   /* NULL: none */
	void *progress_ctx;		   /* progress's first argument */
	memscope_notice_fn notice;	   /* NULL: notes are dropped */
	void *notice_ctx;
	/* Kinds of events the caller has no use for (bit 1u << enum memscope_kind): a reader may
	 * leave them out, and does where that saves reading (the sample files of a profiler
	 * folder: MEMSCOPE_KIND_COUNTER, MEMSCOPE_KIND_PLAN). 0: every event is delivered. */
	uint32_t skip_kinds;
};

/* What a reader saw; valid after (and during) memscope_source_read. */
struct memscope_read_stats {
	uint64_t n_events;	 /* events delivered */
	uint64_t n_skipped;	 /* bad rows/records skipped (lenient mode) */
	uint64_t n_unknown_kind; /* rows with an Event or Event Type text we do not know (kept) */
	uint64_t n_unknown_records; /* capture records of unknown type (skipped by design) */
	uint64_t n_ignored_columns; /* CSV header columns we do not know (their values are dropped)
				     */
	uint64_t bytes;		    /* input bytes consumed (decompressed ones when compressed) */
	enum memscope_layout layout;
	struct memscope_error first_skip; /* why the first skipped row was bad (lenient mode) */
	struct memscope_error cut;	  /* lenient mode: where a cut capture file stops (code
					     MEMSCOPE_E_TRUNCATED; 0 when whole), every complete record
					     before it delivered; or where a compressed input breaks
					     (MEMSCOPE_E_TRUNCATED, MEMSCOPE_E_INVALID for corrupt data),
					     the bytes before it read as the whole input */
};

/*
 * Called once per event. Return 0 to go on; any other value stops the read, which then returns
 * MEMSCOPE_E_STOPPED (a negative value is returned as is, so callbacks can pass their own status).
 */
typedef int (*memscope_event_fn)(void *ctx, const struct memscope_event *ev);

/*
 * Open path ("-" = standard input) and detect its format from its first bytes. Strings and stacks
 * of its events go into st, which the caller owns and must keep alive while events are used.
 * opts may be NULL (strict, auto time unit, src 0). On success *out is the caller's to close.
 * A gzip (any number of members, then perhaps zero bytes, tar's padding; other bytes after
 * the last member are corrupt) or zstd (any number of frames) compressed input is recognised
 * by its magic and read decompressed as it streams: its format is detected from the decompressed
 * bytes, and memory stays a chunk (and zstd's window, at most 128 MiB) whatever its size.
 * Errors: MEMSCOPE_E_IO (cannot open/read), MEMSCOPE_E_INVALID (empty or unrecognised content;
 * compressed data corrupt before its format could be told), MEMSCOPE_E_TRUNCATED (compressed
 * data cut before that), MEMSCOPE_E_UNSUPPORTED (capture file of a newer major version, a
 * compressed database: SQLite needs it decompressed), MEMSCOPE_E_NOMEM.
 */
int memscope_source_open(struct memscope_source **out, const char *path, struct memscope_strtab *st,
	const struct memscope_read_opts *opts, struct memscope_error *err);

/*
 * As memscope_source_open, reading only part of path: 0 all of it, k >= 1 only the k-th input a
 * database of several holds (memscope_source_parts), by its rowid range (the session hands an
 * input's part to its source this way: memscope_session_open). k beyond the inputs path holds is
 * MEMSCOPE_E_ARG, at open for an input that is not a database, at read for one.
 */
int memscope_source_open_part(struct memscope_source **out, const char *path, uint32_t part,
	struct memscope_strtab *st, const struct memscope_read_opts *opts,
	struct memscope_error *err);

/* As memscope_source_open, over len bytes at buf (borrowed until close); name is used in messages.
 */
int memscope_source_open_mem(struct memscope_source **out, const void *buf, size_t len,
	const char *name, struct memscope_strtab *st, const struct memscope_read_opts *opts,
	struct memscope_error *err);

/* As memscope_source_open_part, over len bytes at buf (memscope_source_open_mem). */
int memscope_source_open_mem_part(struct memscope_source **out, const void *buf, size_t len,
	const char *name, uint32_t part, struct memscope_strtab *st,
	const struct memscope_read_opts *opts, struct memscope_error *err);

/*
 * Stream every event to fn in file order. Returns 0 at a clean end; on error every event before
 * the bad one has been delivered and err says where (strict mode stops at the first bad row;
 * a cut capture file gives MEMSCOPE_E_TRUNCATED, in lenient mode 0 with the cut in the stats).
 * Compressed data that is cut or corrupt ends the input where it breaks, as a file cut there;
 * after the reader has read the bytes before the break, the read returns MEMSCOPE_E_TRUNCATED or
 * MEMSCOPE_E_INVALID naming the break; when the reader complained about a row (err's line set:
 * the row the break cut short, or a bad one before it), its line with both complaints in the
 * message and the break's status when it is a cut (MEMSCOPE_E_TRUNCATED), else the reader's. In
 * lenient mode: the reader's status with the break in the stats' cut. Can be called once per
 * source.
 */
int memscope_source_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err);

/* One row of a python_trace CSV (formats/python-trace.md): a function call and its return. */
struct memscope_trace_row {
	const char *func; /* FuncInfo, func_len bytes; borrowed, valid during the callback */
	size_t func_len;
	uint64_t start_ns, end_ns; /* MEMSCOPE_ID_NONE for N/A (call or return not seen) */
	uint64_t tid, pid;
	uint32_t src;  /* as memscope_read_opts.src */
	uint64_t line; /* line of the row */
};

/* Called once per trace row; returns like memscope_event_fn. */
typedef int (*memscope_trace_fn)(void *ctx, const struct memscope_trace_row *row);

/*
 * Stream every row of a python_trace source to fn in file order, or of a database source's
 * python_trace_{pid} tables, table by table (stats count them as events; a database's row
 * numbers are rowids). Returns like memscope_source_read; MEMSCOPE_E_UNSUPPORTED for a source of
 * another format, as memscope_source_read returns for a python_trace source. A database source
 * is read by one of the two only: open it again for the other.
 */
int memscope_source_read_trace(
	struct memscope_source *src, memscope_trace_fn fn, void *ctx, struct memscope_error *err);

enum memscope_format memscope_source_format(const struct memscope_source *src);
/* How the input is compressed (MEMSCOPE_COMPRESS_NONE: it is not). */
enum memscope_compression memscope_source_compression(const struct memscope_source *src);
const struct memscope_read_stats *memscope_source_stats(const struct memscope_source *src);
/* The name given at open (borrowed, valid until close). */
const char *memscope_source_name(const struct memscope_source *src);

/*
 * Whether path can be opened and read a second time: 1 for a regular file or a folder (a
 * profiler output's files); 0 for "-" (standard input) and anything else (a pipe, a device);
 * MEMSCOPE_E_IO when it cannot be looked up (errno set). Analyses that need two passes
 * (memscope_run) and copies of a read input ask it first.
 */
int memscope_source_rereadable(const char *path);

/* Called by memscope_source_parts once per input a database holds: part from 1, name the one
 * memscope_sources recorded, escaped to one printable line (borrowed, valid during the call).
 * Returns 0 to go on; any other value stops, memscope_source_parts then returning it (negative)
 * or MEMSCOPE_E_STOPPED. */
typedef int (*memscope_part_fn)(void *ctx, uint32_t part, const char *name);

/*
 * How many inputs path holds: a database that memscope-db wrote from several inputs holds one per
 * row of its memscope_sources table with rows (formats/sqlite.md "Reading a database"), whose
 * rowid ranges must cover its memscope_dump table one after the other; anything else is one
 * input (standard input, a pipe, a file that is not a database, one that cannot be opened: its
 * read says why). fn (may be NULL) is called for each part only when there are several. Reads
 * only the file's first bytes, and of a database its memscope_sources table and two rowid
 * lookups. Returns the count (>= 1), or MEMSCOPE_E_INVALID (a memscope_sources table that cannot
 * be read or does not say which rows are whose: err names the source), MEMSCOPE_E_IO (a database
 * another process keeps locked past the busy timeout), MEMSCOPE_E_NOMEM, or
 * fn's stop. A database SQLite cannot open or read, or without a dump table, is one input.
 */
int memscope_source_parts(
	const char *path, memscope_part_fn fn, void *ctx, struct memscope_error *err);

/*
 * Whether name (a file name, without its folder) is one an Ascend profiler output folder is read
 * from: operator_memory*.csv, memory_record*.csv, ..., trace_view.json, msprof_*.json (.gz and
 * .zst too; formats/msprof.md "Folders"). Tools name their outputs otherwise and never write over
 * such a file.
 */
int memscope_profiler_file_name(const char *name);

/* Close and free. NULL is fine. */
void memscope_source_close(struct memscope_source *src);

/* "dump-csv", "capture", "python-trace", "db", "msprof-csv", "msprof-json", "profiler",
 * "torch-snapshot", "nsys", "unknown" */
const char *memscope_format_name(enum memscope_format f);

/* What an input of format f is called when an analysis that judges by memory accesses refuses it
 * ("an Ascend profiler output", "a PyTorch memory snapshot", "an Nsight Systems export": its
 * events never include them), or NULL when its events may (and for MEMSCOPE_FORMAT_UNKNOWN). */
const char *memscope_format_without_accesses(enum memscope_format f);

#endif
