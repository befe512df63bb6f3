/* Compressed outputs: a FILE any writer writes to, whose bytes reach the caller's FILE gzip or zstd
 * compressed (the readers take such a file back as it is, source.h). */
#ifndef MEMSCOPE_COMPRESS_H
#define MEMSCOPE_COMPRESS_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

enum memscope_compression {
	MEMSCOPE_COMPRESS_NONE = 0,
	MEMSCOPE_COMPRESS_GZIP, /* one gzip member (RFC 1952), zlib level 6 */
	MEMSCOPE_COMPRESS_ZSTD, /* one zstd frame (RFC 8878) with its checksum, level 3 */
};

struct memscope_compress_writer;

/*
 * A compressor of kind c (not NONE) writing to out, which stays borrowed and open until
 * memscope_compress_writer_free; the caller frees it. NULL (nothing to free) when out of memory
 * or for a c that is not GZIP or ZSTD. One writer, one thread.
 */
struct memscope_compress_writer *memscope_compress_writer_new(
	FILE *out, enum memscope_compression c);

/*
 * The FILE to write the plain bytes to (a writer's out): borrowed, valid until finish or free
 * (never fclose it); NULL after finish. A failed write to out shows as a failed write to it
 * (ferror, and writers' MEMSCOPE_E_IO). Fails in no other way.
 */
FILE *memscope_compress_writer_file(struct memscope_compress_writer *w);

/*
 * End the stream: everything written to the FILE compressed, the stream's end written to out and
 * out flushed; the FILE is closed (memscope_compress_writer_file no longer valid), on failure
 * too. Without it out holds a cut stream. Once per writer. Returns 0, or (err says why; w is
 * still the caller's to free):
 *   MEMSCOPE_E_IO     a write to out failed (out may hold part of the stream);
 *   MEMSCOPE_E_NOMEM  the compressor ran out of memory (out holds a cut stream);
 *   MEMSCOPE_E_ARG    w was finished already (nothing written).
 */
int memscope_compress_writer_finish(struct memscope_compress_writer *w, struct memscope_error *err);

/* Compressed bytes written to out so far (all of them after finish). */
uint64_t memscope_compress_writer_bytes(const struct memscope_compress_writer *w);

/* Free (NULL fine). Without finish, the stream written so far is left cut; out stays open. */
void memscope_compress_writer_free(struct memscope_compress_writer *w);

/* "gzip", "zstd" or "none". */
const char *memscope_compression_name(enum memscope_compression c);

#endif
