/*
 * libFuzzer harness of compressed inputs. An input that starts with a gzip or zstd magic is read
 * as it is (hostile streams); any other is a mode byte and plain bytes, which the harness
 * compresses itself, in one to four members or frames and cut or not. Whatever is read survives
 * the capture round trip, and a whole stream reads exactly as its plain bytes do.
 */
#include <zlib.h>
#include <zstd.h>

#include "fuzz_common.h"

struct fuzz_bytes {
	uint8_t *p;
	size_t len;
};

static void append(struct fuzz_bytes *b, const void *p, size_t n)
{
	b->p = realloc(b->p, b->len + n + 1);
	if (!b->p)
		abort();
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* p[0..n) as one gzip member (gz) or zstd frame appended to *out. */
static void compress_piece(struct fuzz_bytes *out, const uint8_t *p, size_t n, int gz)
{
	uint8_t *dst;
	size_t cap, len;

	if (gz) {
		z_stream s;

		memset(&s, 0, sizeof(s));
		if (deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			abort();
		cap = deflateBound(&s, (uLong)n);
		dst = malloc(cap);
		s.next_in = (uint8_t *)p;
		s.avail_in = (uInt)n;
		s.next_out = dst;
		s.avail_out = (uInt)cap;
		if (!dst || deflate(&s, Z_FINISH) != Z_STREAM_END)
			abort();
		len = cap - s.avail_out;
		deflateEnd(&s);
	} else {
		cap = ZSTD_compressBound(n);
		dst = malloc(cap);
		len = dst ? ZSTD_compress(dst, cap, p, n, 1) : 0;
		if (!dst || ZSTD_isError(len))
			abort();
	}
	append(out, dst, len);
	free(dst);
}

/* Events of data[0..n) read strictly, as CSV and typed fields; the read status in *rc. */
static char *read_events(const uint8_t *data, size_t n, int *rc, size_t *len)
{
	char *csv = NULL;
	uint64_t n_ev = 0;

	*rc = fuzz_read(data, n, 0, &csv, len, NULL, NULL, &n_ev);
	return csv;
}

/* Whether p[0..n) starts with a gzip or zstd magic. */
static int compressed(const uint8_t *p, size_t n)
{
	return (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) ||
	       (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_bytes z = { NULL, 0 };
	const uint8_t *plain;
	size_t n_plain, pieces, cut, i, at;
	int gz;

	if (compressed(data, size)) {
		fuzz_both_modes(data, size);
		return 0;
	}
	if (size < 1)
		return 0;
	/* mode: bit 0 gzip or zstd, bits 1-2 pieces - 1, bits 3-7 bytes cut off the end */
	gz = !(data[0] & 1);
	pieces = 1 + ((data[0] >> 1) & 3);
	cut = data[0] >> 3;
	plain = data + 1;
	n_plain = size - 1;
	for (i = 0, at = 0; i < pieces; i++) {
		size_t end = i + 1 == pieces ? n_plain : n_plain * (i + 1) / pieces;

		compress_piece(&z, plain + at, end - at, gz);
		at = end;
	}
	if (cut >= z.len)
		cut = z.len ? z.len - 1 : 0;
	z.len -= cut;
	fuzz_both_modes(z.p, z.len);
	if (!cut && !compressed(plain, n_plain)) {
		/* the whole stream: the same status and events as its plain bytes (plain bytes
		 * that are compressed themselves are decompressed once only) */
		int rc_plain, rc_z;
		size_t len_plain = 0, len_z = 0;
		char *a = read_events(plain, n_plain, &rc_plain, &len_plain);
		char *b = read_events(z.p, z.len, &rc_z, &len_z);

		/* but a database, which is refused compressed */
		if (!(rc_z == MEMSCOPE_E_UNSUPPORTED && n_plain >= 16 &&
			    memcmp(plain, "SQLite format 3", 16) == 0) &&
			(rc_plain != rc_z || len_plain != len_z || memcmp(a, b, len_z)))
			abort();
		free(a);
		free(b);
	}
	free(z.p);
	return 0;
}
