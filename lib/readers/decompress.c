/* Streaming decompression of gzip and zstd inputs (decompress.h): a raw chunk in, as many plain
 * bytes out as the reader asks for; memory stays a chunk and the decoder's window whatever the
 * file's size. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "decompress.h"
#include "input.h"

/* zstd windows up to 128 MiB, as zstd -d takes without --long or --memory: the decoder's memory
 * is at most that whatever a frame asks for */
#define ZSTD_WINDOW_LOG_MAX 27

struct zsrc {
	enum zkind kind;
	z_stream gz;
	int gz_ready; /* inflateInit2 done */
	ZSTD_DStream *zs;
	const unsigned char *in; /* raw bytes in[pos..len) not yet decoded */
	size_t pos, len;
	unsigned char *own; /* the raw buffer of a file (NULL for memory input) */
	int raw_eof;	    /* no raw bytes after in[len) */
	int in_unit;	    /* inside a gzip member or zstd frame */
	int done;	    /* the end (or the break) was handed out */
	uint64_t n_units;   /* members or frames completed */
	uint64_t raw_off;   /* offset in the file of in[0] */
	uint64_t out_bytes; /* decompressed bytes so far */
	int failed;	    /* pending holds the failure to return next */
	struct memscope_error pending;
};

enum zkind zkind_of(const unsigned char *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return ZKIND_GZIP;
	if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return ZKIND_ZSTD;
	return ZKIND_NONE;
}

const char *zkind_name(enum zkind k)
{
	return k == ZKIND_GZIP ? "gzip" : k == ZKIND_ZSTD ? "zstd" : "none";
}

int zsrc_failing(const struct zsrc *z)
{
	return z && z->failed;
}

enum zkind zsrc_kind(const struct zsrc *z)
{
	return z ? z->kind : ZKIND_NONE;
}

void zsrc_free(struct zsrc *z)
{
	if (!z)
		return;
	if (z->gz_ready)
		inflateEnd(&z->gz);
	ZSTD_freeDStream(z->zs);
	free(z->own);
	free(z);
}

int zsrc_open(struct memscope_source *src, enum zkind k, struct memscope_error *err)
{
	struct zsrc *z = calloc(1, sizeof(*z));
	unsigned char *plain = malloc(READ_CHUNK);

	if (!z || !plain)
		goto nomem;
	z->kind = k;
	if (k == ZKIND_GZIP) {
		/* 15 + 16: a gzip wrapper only, the largest window */
		if (inflateInit2(&z->gz, 15 + 16) != Z_OK)
			goto nomem;
		z->gz_ready = 1;
	} else if (!(z->zs = ZSTD_createDStream()) || ZSTD_isError(ZSTD_initDStream(z->zs)) ||
		   ZSTD_isError(ZSTD_DCtx_setParameter(
			   z->zs, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX))) {
		goto nomem;
	}
	if (src->fd < 0) {
		z->in = src->mem;
		z->len = src->mem_len;
		z->raw_eof = 1;
	} else {
		/* the peeked raw bytes are the first input (their buffer, READ_CHUNK bytes, is
		 * the raw buffer from now on) */
		z->own = src->buf;
		z->in = z->own;
		z->len = src->peek_len;
		z->raw_eof = src->eof;
	}
	src->buf = plain; /* the plain bytes, peeked again through z */
	src->peek_len = 0;
	src->eof = 0;
	src->z = z;
	return 0;
nomem:
	free(plain);
	zsrc_free(z);
	return memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
}

/* The next READ_CHUNK raw bytes of a file into its buffer, once all before them are decoded. */
static int refill(struct memscope_source *src, struct zsrc *z, struct memscope_error *err)
{
	ssize_t r;

	z->raw_off += z->len;
	z->pos = z->len = 0;
	r = source_read_file(src, z->own, READ_CHUNK, err);
	if (r < 0)
		return (int)r;
	if (r == 0)
		z->raw_eof = 1;
	z->len = (size_t)r;
	return 0;
}

/*
 * Decode in[pos..len) into out[0..cap): *made bytes out, pos advanced. 0, or the failure of
 * corrupt data (err set).
 */
static int decode(struct memscope_source *src, struct zsrc *z, unsigned char *out, size_t cap,
	size_t *made, struct memscope_error *err)
{
	size_t avail = z->len - z->pos;

	*made = 0;
	if (z->kind == ZKIND_GZIP) {
		int ret;

		if (!z->in_unit && avail) {
			/* a member begins: the first, or one after another (pigz, bgzip) */
			if (z->n_units && inflateReset(&z->gz) != Z_OK)
				return memscope_error_set(
					err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
			z->in_unit = 1;
		}
		z->gz.next_in = (unsigned char *)z->in + z->pos;
		z->gz.avail_in = avail > UINT32_MAX ? UINT32_MAX : (uInt)avail;
		z->gz.next_out = out;
		z->gz.avail_out = cap > UINT32_MAX ? UINT32_MAX : (uInt)cap;
		ret = inflate(&z->gz, Z_NO_FLUSH);
		z->pos += (size_t)(z->gz.next_in - (z->in + z->pos));
		*made = (size_t)(z->gz.next_out - out);
		if (ret == Z_STREAM_END) {
			z->in_unit = 0;
			z->n_units++;
		} else if (ret == Z_MEM_ERROR) {
			return memscope_error_set(
				err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
		} else if (ret == Z_NEED_DICT || ret == Z_DATA_ERROR || ret == Z_STREAM_ERROR) {
			return memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, 0,
				"corrupt gzip data in member %llu: %s (compressed byte %llu)",
				(unsigned long long)z->n_units + 1,
				ret == Z_NEED_DICT ? "a preset dictionary is needed"
				: z->gz.msg	   ? z->gz.msg
						   : "invalid data",
				(unsigned long long)(z->raw_off + z->pos));
		}
		return 0;
	}
	ZSTD_inBuffer ib = { z->in, z->len, z->pos };
	ZSTD_outBuffer ob = { out, cap, 0 };
	size_t r = ZSTD_decompressStream(z->zs, &ob, &ib);

	z->pos = ib.pos;
	*made = ob.pos;
	if (ZSTD_isError(r)) {
		ZSTD_ErrorCode c = ZSTD_getErrorCode(r);

		if (c == ZSTD_error_memory_allocation)
			return memscope_error_set(
				err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
		if (c == ZSTD_error_frameParameter_windowTooLarge)
			return memscope_error_set(err, MEMSCOPE_E_UNSUPPORTED, src->name, 0,
				"zstd data with a window over %u MiB (zstd --long?): decompress it "
				"first",
				1u << (ZSTD_WINDOW_LOG_MAX - 20));
		/* zstd decodes a block whole: the frame says where better than an offset */
		return memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, 0,
			"corrupt zstd data in frame %llu: %s", (unsigned long long)z->n_units + 1,
			ZSTD_getErrorName(r));
	}
	/* 0: a frame is complete and all of it handed out; the next bytes begin another */
	if (r == 0 && z->in_unit)
		z->n_units++;
	z->in_unit = r != 0;
	return 0;
}

ssize_t zsrc_pull(
	struct memscope_source *src, unsigned char *dst, size_t cap, struct memscope_error *err)
{
	struct zsrc *z = src->z;
	struct memscope_error local;
	size_t made = 0, got;
	int rc = 0;

	if (z->failed) {
		z->failed = 0;
		z->done = 1;
		if (err)
			*err = z->pending;
		return z->pending.code;
	}
	if (z->done)
		return 0;
	if (!err)
		err = &local;
	while (made < cap) {
		if (z->pos == z->len && !z->raw_eof) {
			if ((rc = refill(src, z, err)))
				break;
			continue;
		}
		if (z->pos == z->len && !z->in_unit) {
			z->done = 1; /* every member or frame whole, and nothing after them */
			break;
		}
		size_t pos = z->pos;

		rc = decode(src, z, dst + made, cap - made, &got, err);
		made += got; /* what came out before a failure too */
		if (rc)
			break;
		if (!got && z->pos == pos && pos < z->len) {
			/* a decoder that neither reads nor writes would loop for ever */
			rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, 0,
				"corrupt %s data (compressed byte %llu)", zkind_name(z->kind),
				(unsigned long long)(z->raw_off + pos));
			break;
		}
		if (!got && z->pos == z->len && z->raw_eof && z->in_unit) {
			/* nothing more comes out, and the member or frame is not complete */
			rc = memscope_error_set(err, MEMSCOPE_E_TRUNCATED, src->name, 0,
				"truncated %s data: the file ends inside %s %llu (%llu compressed "
				"bytes, %llu decompressed)",
				zkind_name(z->kind), z->kind == ZKIND_GZIP ? "member" : "frame",
				(unsigned long long)z->n_units + 1,
				(unsigned long long)(z->raw_off + z->len),
				(unsigned long long)(z->out_bytes + made));
			break;
		}
	}
	z->out_bytes += made;
	if (!rc)
		return (ssize_t)made;
	if (rc == MEMSCOPE_E_TRUNCATED || rc == MEMSCOPE_E_INVALID) {
		/* as a cut file: what came out before the break is the input, and the break is
		 * reported after its reader read it (source.c) */
		src->zcut = *err;
		memscope_error_clear(err);
		z->done = 1;
		return (ssize_t)made;
	}
	if (made) {
		/* the bytes before the failure first; the failure on the next call */
		z->pending = *err;
		z->failed = 1;
		memscope_error_clear(err);
		return (ssize_t)made;
	}
	z->done = 1;
	return rc;
}
