/* What the format readers share: the reader table, delivery of events, and the dump row builder
 * (the source and its input are input.h's). */
#ifndef MEMSCOPE_READER_H
#define MEMSCOPE_READER_H

#include "../core/internal.h"
#include "input.h"
#include "memscope/source.h"
#include "registry.h"
#include "memscope/strtab.h"

/* A value quoted in a message is cut to this many bytes: printf("%.*s", CLIP(len), s). */
#define CLIP(n) ((int)((n) > 40 ? 40 : (n)))

/* What every reader says of a number it quotes that is written in exponent notation
 * ("1.76475E+18"), the way a spreadsheet re-saves long numbers: "VALUE " READER_EXP_NOTATION. */
#define READER_EXP_NOTATION                                                                        \
	"is in exponent notation, so its digits are lost (a spreadsheet re-saved the file?)"

/* Whether s[0..n) is a number in exponent notation: digits with an optional point and decimals,
 * E or e, an optional sign, digits ("1.76475E+18"). */
static inline int reader_exp_notation(const char *s, size_t n)
{
	size_t i = 0, digits = 0;

	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (!digits || i == n || (s[i] != 'E' && s[i] != 'e'))
		return 0;
	if (++i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (digits = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	return digits && i == n;
}

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

/*
 * How a reader of several files (a folder's) opens each of them as an input of its own: the
 * source's memscope_source_open and memscope_source_close, handed to its open_path hook so that
 * no reader calls back into source.c, which finds the readers through the table.
 */
struct source_files {
	int (*open)(struct memscope_source **out, const char *path, struct memscope_strtab *st,
		const struct memscope_read_opts *opts, struct memscope_error *err);
	void (*close)(struct memscope_source *src);
};

/*
 * One input format: how it is recognised from its first bytes (or, a folder's, by its path) and
 * how it is read. Each reader file defines one entry; registry.c asks them in turn, and source.c
 * goes through the entry's hooks only, naming no format; the folder walk, the session's messages
 * and the analyses ask the table through registry.h. A new format is its file, its entry's
 * extern and row in registry.c, its enum memscope_format value (source.h), a line in
 * lib/CMakeLists.txt, and a fuzz harness (tests/fuzz, one line in tests/CMakeLists.txt).
 */
struct reader {
	enum memscope_format format;
	const char *name; /* memscope_format_name's text: "dump-csv" */
	const char *what; /* for messages: "a memscope_dump CSV" */
	/*
	 * Whether p[0..n), the input's first bytes (all of it when eof), starts this format: 1 yes,
	 * 0 no, or a negative status with err set for an input of this format that cannot be read
	 * at all (a capture file cut inside its magic). name is the input's, for messages. NULL
	 * for a folder's reader, chosen by its path at open.
	 */
	int (*sniff)(const unsigned char *p, size_t n, int eof, const char *name,
		struct memscope_error *err);
	/* Its memory events (memscope_source_read), or NULL when it holds none. */
	int (*read)(struct memscope_source *src, memscope_event_fn fn, void *ctx,
		struct memscope_error *err);
	/* Its python_trace rows (memscope_source_read_trace), or NULL when it holds none. */
	int (*read_trace)(struct memscope_source *src, memscope_trace_fn fn, void *ctx,
		struct memscope_error *err);
	/*
	 * A folder's reader (sniff NULL; the table's one reader with this hook): open the folder
	 * at path as src's input, src->format and src->reader already this reader's. What it
	 * finds is kept in src->state, set also on failure (close frees it); files (borrowed, for
	 * the life of the library) opens the folder's files when it is read. 0, or the error with
	 * err naming path. NULL for a reader of files.
	 */
	int (*open_path)(struct memscope_source *src, const char *path,
		const struct source_files *files, struct memscope_error *err);
	/*
	 * After the detection chose this reader for src (opened and peeked, not read): a second
	 * look, which may find that src is another reader's (a database that is an Nsight Systems
	 * export: *format set to that reader's, which the source then reads it with; left alone
	 * otherwise) or that it cannot be read (a compressed database). 0, or the error (err set).
	 * NULL: the detection's choice stands.
	 */
	int (*refine)(struct memscope_source *src, enum memscope_format *format,
		struct memscope_error *err);
	/* Release what open_path kept in src->state (memscope_source_close). NULL: none kept. */
	void (*close)(struct memscope_source *src);
	/* 1: SQLite reads it, by its name or from memory, not in chunks, so its reading reports no
	 * progress (it would stop at the peek). */
	int by_name;
	/* 1: an input of this format may hold several, read one at a time (a database's parts:
	 * memscope_source_open_part); 0: a part beyond the first is MEMSCOPE_E_ARG at open. */
	int parts;
	/*
	 * How the folder walk takes a file of this format (ms__reader_walk_by_name, _by_content):
	 * walk is what it makes of one (READER_WALK_SKIP, 0: left out). A file whose name, without
	 * .gz or .zst, ends in one of endings (NULL-ended; NULL: none) is this format by its name
	 * alone when it starts with prefix (NULL: never; "": any name), else opened to see what it
	 * is. holds_events (NULL: none) is a second look at a file whose first bytes say this
	 * format: 1 an input, 0 left out, or MEMSCOPE_E_NOMEM. inputs names its files in messages
	 * ("memscope_dump CSVs"; NULL for one left out).
	 */
	enum reader_walk walk;
	const char *prefix;
	const char *const *endings;
	int (*holds_events)(const char *path);
	const char *inputs;
	/* What an input of this format is called when it is refused for holding no memory access
	 * events, which it never does ("an Ascend profiler output"); NULL when it may hold them
	 * (memscope_format_without_accesses). */
	const char *without_accesses;
	/* What the end of an input of this format means (ms__reader_end; 0: the program's exit). */
	enum reader_end end;
};

/*
 * The reader whose sniff says yes to p[0..n) first into *out: 0, or an error naming what was
 * expected when none does (MEMSCOPE_E_INVALID), or a sniffer's own error.
 */
int ms__reader_detect(const struct reader **out, const unsigned char *p, size_t n, int eof,
	const char *name, struct memscope_error *err);
/* The reader of format f; NULL for MEMSCOPE_FORMAT_UNKNOWN. */
const struct reader *ms__reader_of(enum memscope_format f);
/* The reader of a folder given as an input: the table's one reader with an open_path hook. */
const struct reader *ms__reader_of_folder(void);

/* An open database: the connection, and the memory it reads when it is a WAL-mode file read as
 * its WAL makes it (db_read.c's wal_image; NULL otherwise). */
struct sqlite3;
struct db_conn {
	struct sqlite3 *db;
	void *image;
	size_t image_len;
};

/*
 * src's SQLite database opened as the database reader opens it (formats/sqlite.md "Databases
 * being written": a file read-only, waiting for another process's locks for a bounded time; in
 * WAL mode and open by no other process, as its WAL makes it or as immutable; memory deserialized
 * read-only), double-quoted strings off: 0 and *c the connection (the caller closes it with
 * ms__db_conn_close), or the error (err set, *c zeroed): MEMSCOPE_E_UNSUPPORTED (standard input),
 * MEMSCOPE_E_IO, MEMSCOPE_E_INVALID (a WAL that commits more than there is), MEMSCOPE_E_NOMEM.
 */
int ms__db_open(struct memscope_source *src, struct db_conn *c, struct memscope_error *err);
/* Close what ms__db_open opened (a zeroed c is fine); c is zeroed. */
void ms__db_conn_close(struct db_conn *c);
/*
 * SQLite's error on db (NULL: none opened) as ours, into err: a database still locked by another
 * process after the busy timeout is MEMSCOPE_E_IO, said so; anything else code with "what:
 * SQLite's message". Returns the code set.
 */
int ms__db_error(struct sqlite3 *db, int code, const char *name, uint64_t line, const char *what,
	struct memscope_error *err);
/*
 * The attrs of the event a reader builds (its attrs point at a): text borrowed from the input or
 * the string table, numbers written into their slot's own buffer. Reused for every event; at most
 * EV_ATTRS_MAX attrs an event, which each reader's events stay under.
 */
#define EV_ATTRS_MAX 8
struct ev_attrs {
	struct memscope_attr a[EV_ATTRS_MAX];
	char num[EV_ATTRS_MAX][24];
};

/* ev's next attr: key = v[0..len) (borrowed). */
static inline void ev_attr_text(
	struct ev_attrs *x, struct memscope_event *ev, uint32_t key, const char *v, size_t len)
{
	struct memscope_attr *a = &x->a[ev->n_attrs++];

	a->key = key;
	a->val = v;
	a->val_len = (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len);
}

/* ev's next attr: key = v in decimal. */
static inline void ev_attr_num(
	struct ev_attrs *x, struct memscope_event *ev, uint32_t key, int64_t v)
{
	char *t = x->num[ev->n_attrs];

	ev_attr_text(x, ev, key, t, ms__fmt_i64(t, v));
}

static inline void ev_attr_unum(
	struct ev_attrs *x, struct memscope_event *ev, uint32_t key, uint64_t v)
{
	char *t = x->num[ev->n_attrs];

	ev_attr_text(x, ev, key, t, ms__fmt_u64(t, v));
}

/* Whether p[0..n) looks like text: no NUL byte in its first 4 KiB (the text formats' sniffers). */
static inline int ms__sniff_text(const unsigned char *p, size_t n)
{
	return !memchr(p, '\0', n < 4096 ? n : 4096);
}

/*
 * The row builder of the twelve dump columns (dump_rows.c), fed by the dump CSV reader (a header
 * bound by column names, then rows) and the database reader (the columns in their order): fields
 * with the values a CSV field would hold (quotes removed, `quoted` and `null` set). Rows are
 * checked and delivered as events to fn (bad ones counted in lenient mode); timestamps are
 * nanoseconds unless the header or the source's options say microseconds.
 */
struct dump_rows;
struct csvtok_field;
#define DUMP_COLS 12
/* 0 or MEMSCOPE_E_NOMEM; *out is ms__dump_rows_free's either way. */
int ms__dump_rows_new(struct dump_rows **out, struct memscope_source *src, memscope_event_fn fn,
	void *ctx, struct memscope_error *err);
/* The columns in the dump's order, nanoseconds (a database's rows): no header row. */
void ms__dump_rows_fixed(struct dump_rows *d);
/* 1 once a header is bound (by ms__dump_rows_header or ms__dump_rows_fixed). */
int ms__dump_rows_have_header(const struct dump_rows *d);
/* The header row (n fields at line): 0 or MEMSCOPE_E_INVALID (err set: not a dump's header). */
int ms__dump_rows_header(
	struct dump_rows *d, const struct csvtok_field *f, unsigned n, uint64_t line);
/* One row of n fields at line: 0, or the status to stop with (err set). */
int ms__dump_rows_row(struct dump_rows *d, const struct csvtok_field *f, unsigned n, uint64_t line);
void ms__dump_rows_free(struct dump_rows *d);
/* Whether the first line of p[0..n) (after a byte order mark and blank lines) names at least
 * three of the dump's columns, or goes on past p + n when more input follows (!eof): the dump
 * CSV sniffer's test, so another tool's CSV is not taken for a dump with columns missing. */
int ms__dump_rows_header_like(const unsigned char *p, size_t n, int eof);

#endif
