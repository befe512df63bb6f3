/* Streaming decompression of gzip and zstd inputs (decompress.h): a raw chunk in, as many plain
 * bytes out as the reader asks for; memory stays a chunk and the decoder's window whatever the
 * file's size. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "decompress.h"

/* zstd windows up to 128 MiB, as zstd -d takes without --long or --memory: the decoder's memory
 * is at most that whatever a frame asks for */
#define ZSTD_WINDOW_LOG_MAX 27

/* Raw bytes read at a time: as many as the source reads of a plain file (READ_CHUNK) */
#define ZSRC_RAW_CHUNK (256 * 1024)

struct zsrc {
	enum zkind kind;
	const char *name;      /* the input's, for messages */
	ms__zsrc_read_fn read; /* more raw bytes of a file (NULL: in[0..len) is all of them) */
	void *read_ctx;
	z_stream gz;
	int gz_ready; /* inflateInit2 done */
	ZSTD_DStream *zs;
	const unsigned char *in; /* raw bytes in[pos..len) not yet decoded */
	size_t pos, len;
	unsigned char *own; /* the raw buffer of a file (NULL for memory input) */
	int raw_eof;	    /* no raw bytes after in[len) */
	int in_unit;	    /* inside a gzip member or zstd frame */
	int padding;	    /* zero bytes after the last gzip member seen */
	int done;	    /* the end (or the break) was handed out */
	uint64_t n_units;   /* members or frames completed */
	uint64_t raw_off;   /* offset in the file of in[0] */
	uint64_t out_bytes; /* decompressed bytes so far */
	int failed;	    /* pending holds the failure to return next */
	struct memscope_error pending;
	struct memscope_error cut; /* where the stream broke (code 0: it did not) */
};

enum zkind ms__zkind_of(const unsigned char *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return ZKIND_GZIP;
	if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return ZKIND_ZSTD;
	return ZKIND_NONE;
}

const char *ms__zkind_name(enum zkind k)
{
	return k == ZKIND_GZIP ? "gzip" : k == ZKIND_ZSTD ? "zstd" : "none";
}

int ms__zsrc_failing(const struct zsrc *z)
{
	return z && z->failed;
}

enum zkind ms__zsrc_kind(const struct zsrc *z)
{
	return z ? z->kind : ZKIND_NONE;
}

void ms__zsrc_free(struct zsrc *z)
{
	if (!z)
		return;
	if (z->gz_ready)
		inflateEnd(&z->gz);
	ZSTD_freeDStream(z->zs);
	free(z->own);
	free(z);
}

int ms__zsrc_open(struct zsrc **out, enum zkind k, const unsigned char *first, size_t len, int eof,
	ms__zsrc_read_fn read, void *read_ctx, const char *name, struct memscope_error *err)
{
	struct zsrc *z = calloc(1, sizeof(*z));

	*out = NULL;
	if (!z)
		goto nomem;
	z->kind = k;
	z->name = name;
	z->read = read;
	z->read_ctx = read_ctx;
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
	if (!read) {
		z->in = first;
		z->len = len;
		z->raw_eof = 1;
	} else {
		/* the bytes already read are the first input, in the raw buffer refill reuses */
		if (!(z->own = malloc(len > ZSRC_RAW_CHUNK ? len : ZSRC_RAW_CHUNK)))
			goto nomem;
		memcpy(z->own, first, len);
		z->in = z->own;
		z->len = len;
		z->raw_eof = eof;
	}
	*out = z;
	return 0;
nomem:
	ms__zsrc_free(z);
	return memscope_error_set(err, MEMSCOPE_E_NOMEM, name, 0, "out of memory");
}

const struct memscope_error *ms__zsrc_cut(const struct zsrc *z)
{
	return z && z->cut.code ? &z->cut : NULL;
}

/* The next ZSRC_RAW_CHUNK raw bytes of a file into its buffer, once all before them are decoded. */
static int refill(struct zsrc *z, struct memscope_error *err)
{
	ssize_t r;

	z->raw_off += z->len;
	z->pos = z->len = 0;
	r = z->read(z->read_ctx, z->own, ZSRC_RAW_CHUNK, err);
	if (r < 0)
		return (int)r;
	if (r == 0)
		z->raw_eof = 1;
	z->len = (size_t)r;
	return 0;
}

/*
 * Between gzip members, after the first: zero bytes are padding (tar, tape blocks) that end the
 * stream, as gzip takes them; after the padding nothing else may come. Skips the zeros of
 * in[pos..len) (z->padding set once one is seen). 0, or MEMSCOPE_E_INVALID (err set) for a
 * byte that neither is padding nor can begin a member (gzip's "trailing garbage").
 */
static int skip_padding(struct zsrc *z, struct memscope_error *err)
{
	size_t from = z->pos;

	while (z->pos < z->len && z->in[z->pos] == 0)
		z->pos++;
	z->padding |= z->pos > from;
	if (z->pos == z->len || (!z->padding && z->in[z->pos] == 0x1f))
		return 0;
	return memscope_error_set(err, MEMSCOPE_E_INVALID, z->name, 0,
		"trailing garbage after gzip member %llu (compressed byte %llu): neither another "
		"member nor zero padding",
		(unsigned long long)z->n_units, (unsigned long long)(z->raw_off + z->pos));
}

/* decode of gzip: members one after another (pigz, bgzip), then perhaps zero padding. */
static int decode_gzip(
	struct zsrc *z, unsigned char *out, size_t cap, size_t *made, struct memscope_error *err)
{
	size_t avail;
	int ret, rc = 0;

	if (!z->in_unit && z->n_units) {
		/* a member ended: another one begins, or the padding (perhaps cut by a refill) */
		if ((rc = skip_padding(z, err)) || z->pos == z->len)
			goto out;
		if (inflateReset(&z->gz) != Z_OK) {
			rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, z->name, 0, "out of memory");
			goto out;
		}
	}
	z->in_unit = 1;
	avail = z->len - z->pos;
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
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, z->name, 0, "out of memory");
	} else if (ret == Z_NEED_DICT || ret == Z_DATA_ERROR || ret == Z_STREAM_ERROR) {
		rc = memscope_error_set(err, MEMSCOPE_E_INVALID, z->name, 0,
			"corrupt gzip data in member %llu: %s (compressed byte %llu)",
			(unsigned long long)z->n_units + 1,
			ret == Z_NEED_DICT ? "a preset dictionary is needed"
			: z->gz.msg	   ? z->gz.msg
					   : "invalid data",
			(unsigned long long)(z->raw_off + z->pos));
	}
out:
	return rc;
}

/* decode of zstd: frames one after another. */
static int decode_zstd(
	struct zsrc *z, unsigned char *out, size_t cap, size_t *made, struct memscope_error *err)
{
	ZSTD_inBuffer ib = { z->in, z->len, z->pos };
	ZSTD_outBuffer ob = { out, cap, 0 };
	size_t r = ZSTD_decompressStream(z->zs, &ob, &ib);
	ZSTD_ErrorCode c = ZSTD_getErrorCode(r);
	int rc = 0;

	z->pos = ib.pos;
	*made = ob.pos;
	if (c == ZSTD_error_no_error) {
		/* 0: a frame is complete and all of it handed out, whether it took one call or
		 * many; the next bytes begin another */
		if (r == 0)
			z->n_units++;
		z->in_unit = r != 0;
	} else if (c == ZSTD_error_memory_allocation) {
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, z->name, 0, "out of memory");
	} else if (c == ZSTD_error_frameParameter_windowTooLarge) {
		rc = memscope_error_set(err, MEMSCOPE_E_UNSUPPORTED, z->name, 0,
			"zstd data with a window over %u MiB (zstd --long?): decompress it first",
			1u << (ZSTD_WINDOW_LOG_MAX - 20));
	} else {
		/* zstd decodes a block whole: the frame says where better than an offset */
		rc = memscope_error_set(err, MEMSCOPE_E_INVALID, z->name, 0,
			"corrupt zstd data in frame %llu: %s", (unsigned long long)z->n_units + 1,
			ZSTD_getErrorName(r));
	}
	return rc;
}

/*
 * Decode in[pos..len) into out[0..cap): *made bytes out, pos advanced. 0, or the failure of
 * corrupt data (err set).
 */
static int decode(
	struct zsrc *z, unsigned char *out, size_t cap, size_t *made, struct memscope_error *err)
{
	*made = 0;
	return z->kind == ZKIND_GZIP ? decode_gzip(z, out, cap, made, err)
				     : decode_zstd(z, out, cap, made, err);
}

/*
 * Decompressed bytes into dst[0..cap) until it is full, the stream ends (z->done) or breaks:
 * *made bytes out, including those before a break. 0 or the failure (err set).
 */
static int fill(
	struct zsrc *z, unsigned char *dst, size_t cap, size_t *made, struct memscope_error *err)
{
	size_t got, pos;
	int rc = 0;

	*made = 0;
	while (!rc && *made < cap && !z->done) {
		if (z->pos == z->len && !z->raw_eof) {
			rc = refill(z, err);
			continue;
		}
		if (z->pos == z->len && !z->in_unit) {
			z->done = 1; /* every member or frame whole, and nothing after them */
			continue;
		}
		pos = z->pos;
		rc = decode(z, dst + *made, cap - *made, &got, err);
		*made += got; /* what came out before a failure too */
		if (rc || got)
			continue;
		if (z->pos == pos && pos < z->len) {
			/* a decoder that neither reads nor writes would loop for ever */
			rc = memscope_error_set(err, MEMSCOPE_E_INVALID, z->name, 0,
				"corrupt %s data (compressed byte %llu)", ms__zkind_name(z->kind),
				(unsigned long long)(z->raw_off + pos));
		} else if (z->pos == z->len && z->raw_eof && z->in_unit) {
			/* nothing more comes out, and the member or frame is not complete */
			rc = memscope_error_set(err, MEMSCOPE_E_TRUNCATED, z->name, 0,
				"truncated %s data: the file ends inside %s %llu (%llu compressed "
				"bytes, %llu decompressed)",
				ms__zkind_name(z->kind), z->kind == ZKIND_GZIP ? "member" : "frame",
				(unsigned long long)z->n_units + 1,
				(unsigned long long)(z->raw_off + z->len),
				(unsigned long long)(z->out_bytes + *made));
		}
	}
	return rc;
}

ssize_t ms__zsrc_pull(struct zsrc *z, unsigned char *dst, size_t cap, struct memscope_error *err)
{
	struct memscope_error local;
	size_t made = 0;
	int rc = 0;

	if (!err)
		err = &local;
	if (z->failed) {
		/* the failure held back by the last call, after the bytes before it */
		z->failed = 0;
		*err = z->pending;
		rc = z->pending.code;
	} else if (!z->done) {
		rc = fill(z, dst, cap, &made, err);
		z->out_bytes += made;
	}
	if (rc == MEMSCOPE_E_TRUNCATED || rc == MEMSCOPE_E_INVALID) {
		/* as a cut file: what came out before the break is the input, and the break is
		 * reported after its reader read it (ms__zsrc_cut) */
		z->cut = *err;
		memscope_error_clear(err);
		z->done = 1;
		rc = 0;
	} else if (rc && made) {
		/* the bytes before the failure first; the failure on the next call */
		z->pending = *err;
		z->failed = 1;
		memscope_error_clear(err);
		rc = 0;
	} else if (rc) {
		z->done = 1;
	}
	return rc ? rc : (ssize_t)made;
}
