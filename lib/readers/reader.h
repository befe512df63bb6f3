/* What the format readers share: the opened source, its chunked input, and delivery of events. */
#ifndef MEMSCOPE_READER_H
#define MEMSCOPE_READER_H

#include "../core/internal.h"
#include "memscope/source.h"
#include "memscope/strtab.h"

#define READ_CHUNK (256 * 1024)

struct reader;

struct memscope_source {
	int fd; /* -1 for memory input */
	int own_fd;
	const unsigned char *mem; /* memory input */
	size_t mem_len;
	unsigned char *buf; /* READ_CHUNK bytes for fd input */
	size_t peek_len;    /* bytes of buf (or mem) read by the sniffer */
	int eof;
	size_t chunk; /* bytes per read after the sniffed ones (READ_CHUNK) */
	int read_done;
	enum memscope_format format;
	const struct reader *reader; /* set by the detection at open */
	struct memscope_strtab *st;
	struct memscope_read_opts opts;
	struct memscope_read_stats stats;
	char *name;
};

/*
 * The unconsumed input of a reader: data[start..len). A memory source is one window over all of
 * it (final from the start, nothing copied); a file is read chunk by chunk behind what is left.
 */
struct window {
	const char *data;
	size_t start, len;
	int final;	/* no more input after len */
	struct buf own; /* storage for file input */
};

/* Set up w over src. 0 or MEMSCOPE_E_NOMEM. */
int window_open(struct window *w, struct memscope_source *src, struct memscope_error *err);

/*
 * Read more input behind the unconsumed bytes (moving them to the front first). Sets final at
 * the end of input. MEMSCOPE_E_INVALID if more than max_pending bytes are unconsumed (a row or
 * record that never ends), MEMSCOPE_E_IO, MEMSCOPE_E_NOMEM.
 */
int window_fill(struct window *w, struct memscope_source *src, size_t max_pending,
	struct memscope_error *err);

void window_close(struct window *w);

/* Hand ev to fn; returns 0 to go on or the status to stop with. */
static inline int source_deliver(struct memscope_source *src, memscope_event_fn fn, void *ctx,
	const struct memscope_event *ev)
{
	int rc = fn(ctx, ev);

	src->stats.n_events++;
	if (rc == 0)
		return 0;
	return rc < 0 ? rc : MEMSCOPE_E_STOPPED;
}

/* Record a bad row/record: in lenient mode count it and return 0, else copy it to err and return
 * its code. e holds the complaint. */
int source_bad(
	struct memscope_source *src, const struct memscope_error *e, struct memscope_error *err);
/* source_bad of an invalid row at line whose complaint is the printf-style message. */
int source_bad_row(struct memscope_source *src, struct memscope_error *err, uint64_t line,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * One input format: how it is recognised from its first bytes and how it is read. Each reader file
 * defines one entry; registry.c asks them in turn. A new format is one file and one row there.
 */
struct reader {
	enum memscope_format format;
	const char *name; /* memscope_format_name's text: "dump-csv" */
	const char *what; /* for messages: "a memscope_dump CSV" */
	/*
	 * Whether p[0..n), the input's first bytes (all of it when eof), starts this format: 1 yes,
	 * 0 no, or a negative status with err set for an input of this format that cannot be read
	 * at all (a capture file cut inside its magic). name is the input's, for messages.
	 */
	int (*sniff)(const unsigned char *p, size_t n, int eof, const char *name,
		struct memscope_error *err);
	/* Its memory events (memscope_source_read), or NULL when it holds none. */
	int (*read)(struct memscope_source *src, memscope_event_fn fn, void *ctx,
		struct memscope_error *err);
	/* Its python_trace rows (memscope_source_read_trace), or NULL when it holds none. */
	int (*read_trace)(struct memscope_source *src, memscope_trace_fn fn, void *ctx,
		struct memscope_error *err);
};

extern const struct reader capture_reader, db_reader, python_trace_reader, dump_csv_reader;

/*
 * The reader whose sniff says yes to p[0..n) first into *out: 0, or an error naming what was
 * expected when none does (MEMSCOPE_E_INVALID), or a sniffer's own error.
 */
int reader_detect(const struct reader **out, const unsigned char *p, size_t n, int eof,
	const char *name, struct memscope_error *err);
/* The reader of format f; NULL for MEMSCOPE_FORMAT_UNKNOWN. */
const struct reader *reader_of(enum memscope_format f);

/* Whether p[0..n) looks like text: no NUL byte in its first 4 KiB (the text formats' sniffers). */
int sniff_text(const unsigned char *p, size_t n);

/*
 * The dump CSV reader's row checks and event building, for inputs whose rows come as the twelve
 * dump columns (the database reader): fields in the header's column order (ID ... Call Stack(C)),
 * with the values a CSV field would hold (quotes removed, `quoted` and `null` set). Rows are
 * checked and delivered like CSV rows (lenient mode too); timestamps are nanoseconds unless the
 * source's options say otherwise.
 */
struct dump_rows;
struct csvtok_field;
#define DUMP_COLS 12
/* 0 or MEMSCOPE_E_NOMEM; *out is dump_rows_free's either way. */
int dump_rows_new(struct dump_rows **out, struct memscope_source *src, memscope_event_fn fn,
	void *ctx, struct memscope_error *err);
/* One row: 0, or the status to stop with (err set), as a CSV row. */
int dump_rows_row(struct dump_rows *d, const struct csvtok_field *f, uint64_t line);
void dump_rows_free(struct dump_rows *d);

#endif
