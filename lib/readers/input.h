/* An opened input and its bytes: the source, the window readers (and the dump CSV copy) read it
 * through, and the accounting of bad rows. */
#ifndef MEMSCOPE_INPUT_H
#define MEMSCOPE_INPUT_H

#include "../core/internal.h"
#include <sys/types.h>

#include "memscope/source.h"

struct reader;

#define READ_CHUNK (256 * 1024)

struct memscope_source {
	int fd; /* -1 for memory input */
	int own_fd;
	const unsigned char *mem; /* memory input (compressed or not) */
	size_t mem_len;
	unsigned char *buf; /* READ_CHUNK bytes for fd or compressed input */
	size_t peek_len;    /* bytes of buf (or mem) read by the sniffer */
	int eof;
	size_t chunk;	    /* bytes per read after the sniffed ones (READ_CHUNK) */
	struct zsrc *z;	    /* decompressor of a compressed input (decompress.h), or NULL */
	uint64_t raw_done;  /* bytes read from the file: compressed ones for a compressed file */
	uint64_t raw_total; /* the file's size (a regular file), 0 when unknown */
	int progress_on;    /* raw reads are reported to opts.progress (after the detection) */
	struct memscope_error zcut; /* where the compressed stream broke (code 0: it is whole) */
	int read_done;
	enum memscope_format format;
	const struct reader *reader; /* set by the detection at open */
	void *state; /* the reader's own (a folder's files: its open_path hook), or NULL */
	struct memscope_strtab *st;
	struct memscope_read_opts opts;
	uint32_t part; /* memscope_source_open_part's: 0 all, k the k-th input of a database */
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

/* Whether src is one memory window over all of its bytes (a memory input, not compressed). */
static inline int source_whole(const struct memscope_source *src)
{
	return src->fd < 0 && !src->z;
}

/*
 * The one way bytes come out of a file or a compressed input (the sniffer's peek, ms__window_fill):
 * up to cap bytes into dst, at least one unless at the end (0), decompressed when the input is
 * compressed. Reports the file bytes read to opts.progress. Returns the count or a negative
 * status, err set: MEMSCOPE_E_IO, and ms__zsrc_pull's for a compressed input.
 */
ssize_t ms__source_pull(
	struct memscope_source *src, unsigned char *dst, size_t cap, struct memscope_error *err);

/*
 * read(2) of up to cap bytes of src's file (plain or compressed) into dst, the one place a file is
 * read (ms__source_pull, the decompressor); counted in raw_done and reported. Bytes or
 * MEMSCOPE_E_IO.
 */
ssize_t ms__source_read_file(
	struct memscope_source *src, unsigned char *dst, size_t cap, struct memscope_error *err);

/* The file bytes read so far to opts.progress, once the format allows it (progress_on). */
void ms__source_report(struct memscope_source *src);

/* Set up w over src. 0 or MEMSCOPE_E_NOMEM. */
int ms__window_open(struct window *w, struct memscope_source *src, struct memscope_error *err);

/*
 * Read more input behind the unconsumed bytes (moving them to the front first). Sets final at
 * the end of input. MEMSCOPE_E_INVALID if more than max_pending bytes are unconsumed (a row or
 * record that never ends), MEMSCOPE_E_IO, MEMSCOPE_E_NOMEM.
 */
int ms__window_fill(struct window *w, struct memscope_source *src, size_t max_pending,
	struct memscope_error *err);

void ms__window_close(struct window *w);

/* A note on how src is read to opts.notice (when set): printf-style, one line. */
void ms__source_notice(struct memscope_source *src, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record a bad row/record: in lenient mode count it and return 0, else copy it to err and return
 * its code. e holds the complaint. */
int ms__source_bad(
	struct memscope_source *src, const struct memscope_error *e, struct memscope_error *err);
/* ms__source_bad of an invalid row at line whose complaint is the printf-style message. */
int ms__source_bad_row(struct memscope_source *src, struct memscope_error *err, uint64_t line,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
