/* A write-behind buffer over a caller's FILE, shared by the writers. */
#ifndef MEMSCOPE_OUTBUF_H
#define MEMSCOPE_OUTBUF_H

#include <stdio.h>
#include <string.h>

#include "memscope/error.h"

#define OUTBUF_SIZE (256 * 1024)

struct outbuf {
	FILE *out;
	size_t len;
	uint64_t total; /* bytes handed to out so far */
	int failed;
	unsigned char data[OUTBUF_SIZE];
};

/* Write the buffered bytes to out. 0 or MEMSCOPE_E_IO (sticky). */
static inline int outbuf_flush(struct outbuf *o)
{
	if (o->failed)
		return MEMSCOPE_E_IO;
	if (o->len && fwrite(o->data, 1, o->len, o->out) != o->len) {
		o->failed = 1;
		return MEMSCOPE_E_IO;
	}
	o->total += o->len;
	o->len = 0;
	return 0;
}

/* Room for n more bytes (n <= OUTBUF_SIZE), flushing if needed. */
static inline int outbuf_room(struct outbuf *o, size_t n)
{
	if (OUTBUF_SIZE - o->len < n)
		return outbuf_flush(o);
	return 0;
}

static inline int outbuf_put(struct outbuf *o, const void *p, size_t n)
{
	while (n) {
		size_t k;

		if (o->len == OUTBUF_SIZE && outbuf_flush(o))
			return MEMSCOPE_E_IO;
		k = OUTBUF_SIZE - o->len < n ? OUTBUF_SIZE - o->len : n;
		memcpy(o->data + o->len, p, k);
		o->len += k;
		p = (const char *)p + k;
		n -= k;
	}
	return 0;
}

#endif
