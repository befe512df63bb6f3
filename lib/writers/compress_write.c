/* Compressed outputs (memscope/compress.h): a glibc cookie FILE whose writes go through zlib or
 * libzstd to the caller's FILE. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "memscope/compress.h"

#define ZOUT_SIZE (128 * 1024) /* compressed bytes gathered before a write to out */

struct memscope_compress_writer {
	enum memscope_compression kind;
	FILE *out;  /* borrowed */
	FILE *file; /* the cookie FILE writers write to; NULL once closed */
	z_stream gz;
	int gz_ready;
	ZSTD_CCtx *zs;
	unsigned char *buf; /* ZOUT_SIZE compressed bytes */
	uint64_t bytes;
	int failed; /* sticky: a write to out failed (errno in err_no), or the compressor did */
	int err_no;
	int abandoned; /* freed without finish: writes are dropped */
};

const char *memscope_compression_name(enum memscope_compression c)
{
	return c == MEMSCOPE_COMPRESS_GZIP ? "gzip" : c == MEMSCOPE_COMPRESS_ZSTD ? "zstd" : "none";
}

/* n compressed bytes of buf to out. 0 or -1 (sticky, errno kept). */
static int emit(struct memscope_compress_writer *w, size_t n)
{
	if (n && fwrite(w->buf, 1, n, w->out) != n) {
		w->failed = 1;
		w->err_no = errno ? errno : EIO;
		return -1;
	}
	w->bytes += n;
	return 0;
}

/* p[0..n) through the compressor; end: finish the stream. 0 or -1 (w->failed set). */
static int squeeze(struct memscope_compress_writer *w, const char *p, size_t n, int end)
{
	if (w->kind == MEMSCOPE_COMPRESS_GZIP) {
		int ret;

		w->gz.next_in = (unsigned char *)p;
		w->gz.avail_in = (uInt)n;
		do {
			w->gz.next_out = w->buf;
			w->gz.avail_out = ZOUT_SIZE;
			ret = deflate(&w->gz, end ? Z_FINISH : Z_NO_FLUSH);
			if (ret == Z_STREAM_ERROR)
				goto failed;
			if (emit(w, ZOUT_SIZE - w->gz.avail_out))
				return -1;
		} while (w->gz.avail_out == 0 || w->gz.avail_in || (end && ret != Z_STREAM_END));
		return 0;
	}
	ZSTD_inBuffer ib = { p, n, 0 };
	size_t left;

	do {
		ZSTD_outBuffer ob = { w->buf, ZOUT_SIZE, 0 };

		left = ZSTD_compressStream2(w->zs, &ob, &ib, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			goto failed;
		if (emit(w, ob.pos))
			return -1;
	} while (ib.pos < ib.size || (end && left));
	return 0;
failed:
	w->failed = 1;
	w->err_no = ENOMEM; /* the compressors fail only for memory with valid arguments */
	return -1;
}

/* The cookie's write: every byte taken, or 0 for an error (fopencookie's rule). */
static ssize_t cookie_write(void *cookie, const char *p, size_t n)
{
	struct memscope_compress_writer *w = cookie;
	size_t done = 0;

	if (w->abandoned)
		return (ssize_t)n;
	while (done < n && !w->failed) {
		/* deflate takes at most 4 GiB at a time */
		size_t k = n - done > (1u << 30) ? (1u << 30) : n - done;

		if (squeeze(w, p + done, k, 0))
			break;
		done += k;
	}
	if (w->failed) {
		errno = w->err_no;
		return 0;
	}
	return (ssize_t)n;
}

/* Closing the FILE ends nothing: finish writes the stream's end, free drops it. */
static int cookie_close(void *cookie)
{
	(void)cookie;
	return 0;
}

struct memscope_compress_writer *memscope_compress_writer_new(
	FILE *out, enum memscope_compression c)
{
	static const cookie_io_functions_t io = { NULL, cookie_write, NULL, cookie_close };
	struct memscope_compress_writer *w;

	if (c != MEMSCOPE_COMPRESS_GZIP && c != MEMSCOPE_COMPRESS_ZSTD)
		return NULL;
	if (!(w = calloc(1, sizeof(*w))) || !(w->buf = malloc(ZOUT_SIZE)))
		goto failed;
	w->kind = c;
	w->out = out;
	if (c == MEMSCOPE_COMPRESS_GZIP) {
		/* 15 + 16: a gzip wrapper, the largest window; 8: zlib's default memory level */
		if (deflateInit2(&w->gz, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			goto failed;
		w->gz_ready = 1;
	} else if (!(w->zs = ZSTD_createCCtx()) ||
		   ZSTD_isError(ZSTD_CCtx_setParameter(w->zs, ZSTD_c_compressionLevel, 3)) ||
		   ZSTD_isError(ZSTD_CCtx_setParameter(w->zs, ZSTD_c_checksumFlag, 1))) {
		goto failed;
	}
	if (!(w->file = fopencookie(w, "wb", io)))
		goto failed;
	setvbuf(w->file, NULL, _IOFBF, ZOUT_SIZE);
	return w;
failed:
	memscope_compress_writer_free(w);
	return NULL;
}

FILE *memscope_compress_writer_file(struct memscope_compress_writer *w)
{
	return w->file;
}

int memscope_compress_writer_finish(struct memscope_compress_writer *w, struct memscope_error *err)
{
	int rc = 0;

	if (!w->file)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "already finished");
	if (fflush(w->file) || ferror(w->file) || w->failed || squeeze(w, NULL, 0, 1) ||
		fflush(w->out) || ferror(w->out)) {
		if (!w->failed) {
			w->failed = 1;
			w->err_no = errno ? errno : EIO;
		}
		rc = memscope_error_set(err, w->err_no == ENOMEM ? MEMSCOPE_E_NOMEM : MEMSCOPE_E_IO,
			NULL, 0, "write failed: %s", strerror(w->err_no));
	}
	w->abandoned = 1; /* nothing more is compressed */
	fclose(w->file);
	w->file = NULL;
	return rc;
}

uint64_t memscope_compress_writer_bytes(const struct memscope_compress_writer *w)
{
	return w->bytes;
}

void memscope_compress_writer_free(struct memscope_compress_writer *w)
{
	if (!w)
		return;
	w->abandoned = 1;
	if (w->file)
		fclose(w->file);
	if (w->gz_ready)
		deflateEnd(&w->gz);
	ZSTD_freeCCtx(w->zs);
	free(w->buf);
	free(w);
}
