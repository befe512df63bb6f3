/* Compressed inputs (gzip, zstd) read as a stream: recognised by their magic, decompressed chunk
 * by chunk behind the source (input.h), so the readers and the format sniffer see plain bytes. */
#ifndef MEMSCOPE_DECOMPRESS_H
#define MEMSCOPE_DECOMPRESS_H

#include <stddef.h>
#include <sys/types.h>

#include "memscope/error.h"

struct memscope_source;
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
 * Put a decompressor of kind k in front of src's bytes. The raw bytes already read (src->buf,
 * src->peek_len of them, src->eof) become its first input and src->buf a fresh buffer for the
 * decompressed ones (peek_len 0, eof 0); a memory source's bytes (src->mem) are its whole input,
 * read in place. 0 or MEMSCOPE_E_NOMEM (src unchanged).
 */
int ms__zsrc_open(struct memscope_source *src, enum zkind k, struct memscope_error *err);

/*
 * Up to cap decompressed bytes into dst: as many as there are, fewer only at the end; 0 at the
 * end. Zero bytes after a whole gzip member are padding and end the stream. Corrupt data
 * (MEMSCOPE_E_INVALID; bytes after a whole member or frame that neither begin another nor, for
 * gzip, are zero padding, too) or a stream that ends inside a member or frame
 * (MEMSCOPE_E_TRUNCATED) ends the input where it breaks, as a cut file ends, the break kept in
 * src->zcut for the source to report after the read. Other failures are returned, after the
 * bytes decompressed before them (on the next call): a window larger than the decoder's limit
 * MEMSCOPE_E_UNSUPPORTED, MEMSCOPE_E_IO, MEMSCOPE_E_NOMEM.
 */
ssize_t ms__zsrc_pull(
	struct memscope_source *src, unsigned char *dst, size_t cap, struct memscope_error *err);

/* Whether z has a failure to return on the next ms__zsrc_pull (bytes before it were returned). */
int ms__zsrc_failing(const struct zsrc *z);

/* The kind of z; ZKIND_NONE for NULL. */
enum zkind ms__zsrc_kind(const struct zsrc *z);

/* Release src's decompressor (NULL fine). */
void ms__zsrc_free(struct zsrc *z);

#endif
