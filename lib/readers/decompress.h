/* Compressed inputs (gzip, zstd) read as a stream: recognised by their magic, decompressed chunk
 * by chunk behind the source (input.h), so the readers and the format sniffer see plain bytes. */
#ifndef MEMSCOPE_DECOMPRESS_H
#define MEMSCOPE_DECOMPRESS_H

#include <stddef.h>
#include <sys/types.h>

#include "memscope/error.h"

struct zsrc;

enum zkind {
	ZKIND_NONE = 0,
	ZKIND_GZIP, /* RFC 1952: 1f 8b; any number of members (pigz, bgzip), then perhaps zero
		       bytes (tar or tape padding), as gzip reads them */
	ZKIND_ZSTD, /* RFC 8878: frame magic 28 b5 2f fd; any number of frames */
};

/* The compression p[0..n) starts with, by its magic: ZKIND_NONE for anything else. */
enum zkind ms__zkind_of(const unsigned char *p, size_t n);
/* "gzip", "zstd" */
const char *ms__zkind_name(enum zkind k);

/*
 * How a decompressor gets more compressed bytes (it knows nothing of the source whose file they
 * are, source.c hands it the file's read): up to cap of them into dst. Returns the count, 0
 * at the end of the input, or a negative status with err set (MEMSCOPE_E_IO).
 */
typedef ssize_t (*ms__zsrc_read_fn)(
	void *ctx, unsigned char *dst, size_t cap, struct memscope_error *err);

/*
 * A decompressor of kind k into *out (NULL on failure; the caller frees it with ms__zsrc_free).
 * first[0..len) are the compressed bytes already read, eof set when no more follow. With read
 * NULL they are all of the input (a memory input), borrowed and read in place for the life of
 * *out; else they are copied, and read(read_ctx, ...) brings the rest when they are used up.
 * name (borrowed for the life of *out) names the input in messages. 0 or MEMSCOPE_E_NOMEM.
 */
int ms__zsrc_open(struct zsrc **out, enum zkind k, const unsigned char *first, size_t len, int eof,
	ms__zsrc_read_fn read, void *read_ctx, const char *name, struct memscope_error *err);

/*
 * Up to cap decompressed bytes into dst: as many as there are, fewer only at the end; 0 at the
 * end. Zero bytes after a whole gzip member are padding and end the stream. Corrupt data
 * (MEMSCOPE_E_INVALID; bytes after a whole member or frame that neither begin another nor, for
 * gzip, are zero padding, too) or a stream that ends inside a member or frame
 * (MEMSCOPE_E_TRUNCATED) ends the input where it breaks, as a cut file ends, the break kept for
 * ms__zsrc_cut (the source reports it after the read). Other failures are returned, after the
 * bytes decompressed before them (on the next call): a window larger than the decoder's limit
 * MEMSCOPE_E_UNSUPPORTED, read's failure (MEMSCOPE_E_IO), MEMSCOPE_E_NOMEM.
 */
ssize_t ms__zsrc_pull(struct zsrc *z, unsigned char *dst, size_t cap, struct memscope_error *err);

/* Where z's stream broke (ms__zsrc_pull), borrowed for z's life; NULL while it has not (NULL z
 * too). */
const struct memscope_error *ms__zsrc_cut(const struct zsrc *z);

/* Whether z has a failure to return on the next ms__zsrc_pull (bytes before it were returned). */
int ms__zsrc_failing(const struct zsrc *z);

/* The kind of z; ZKIND_NONE for NULL. */
enum zkind ms__zsrc_kind(const struct zsrc *z);

/* Release src's decompressor (NULL fine). */
void ms__zsrc_free(struct zsrc *z);

#endif
