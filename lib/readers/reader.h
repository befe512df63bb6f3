/* What the format readers share: the opened source, its chunked input, and delivery of events. */
#ifndef MEMSCOPE_READER_H
#define MEMSCOPE_READER_H

#include "memscope/source.h"
#include "memscope/strtab.h"

#define READ_CHUNK (256 * 1024)

struct memscope_source {
	int fd;                    /* -1 for memory input */
	int own_fd;
	const unsigned char *mem;  /* memory input */
	size_t mem_len;
	unsigned char *buf;        /* READ_CHUNK bytes for fd input */
	size_t peek_len;           /* bytes of buf (or mem) read by the sniffer */
	int peek_pending;          /* the sniffed chunk has not been handed out yet */
	int eof;
	int read_done;
	enum memscope_format format;
	struct memscope_strtab *st;
	struct memscope_read_opts opts;
	struct memscope_read_stats stats;
	char *name;
};

/*
 * Next chunk of input: 1 with *p and *n set (borrowed until the next call), 0 at end of input, or
 * MEMSCOPE_E_IO.
 */
int source_chunk(struct memscope_source *src, const unsigned char **p, size_t *n,
	struct memscope_error *err);

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
int source_bad(struct memscope_source *src, const struct memscope_error *e,
	struct memscope_error *err);

int dump_csv_read(struct memscope_source *src, memscope_event_fn fn, void *ctx,
	struct memscope_error *err);
int capture_read(struct memscope_source *src, memscope_event_fn fn, void *ctx,
	struct memscope_error *err);

/* The capture file's magic (formats/capture.md). */
extern const unsigned char capture_magic[8];

#endif
