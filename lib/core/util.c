/* Implementation of the private helpers in internal.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "u64map.h"
#include "memscope/error.h"

int ms__buf_reserve(struct buf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->cap - b->len >= n)
		return 0;
	if (n > SIZE_MAX / 2 - b->len)
		return MEMSCOPE_E_NOMEM;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return MEMSCOPE_E_NOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int ms__buf_append(struct buf *b, const void *p, size_t n)
{
	int rc = ms__buf_reserve(b, n);

	if (rc)
		return rc;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

void ms__text_put(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(buf + *at, *at < size ? size - *at : 0, fmt, ap);
	va_end(ap);
	*at += w > 0 ? (size_t)w : 0;
	*at = *at < size ? *at : size;
}

int ms__grow_array(void *pp, size_t *cap, size_t need, size_t elem)
{
	size_t nc = *cap ? *cap : 4; /* small first: many arrays stay small */
	void *p, *np;

	if (need <= *cap)
		return 0;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem)
			return MEMSCOPE_E_NOMEM;
		nc *= 2;
	}
	memcpy(&p, pp, sizeof(p));
	np = realloc(p, nc * elem);
	if (!np)
		return MEMSCOPE_E_NOMEM;
	memset((char *)np + *cap * elem, 0, (nc - *cap) * elem);
	memcpy(pp, &np, sizeof(np));
	*cap = nc;
	return 0;
}

#define ARENA_CHUNK (64 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

void *ms__arena_alloc(struct arena *a, size_t n)
{
	struct arena_chunk *c = a->head, *nc;
	size_t cap;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (c && c->cap - c->used >= n) {
		void *p = (char *)c->data + c->used;

		c->used += n;
		return p;
	}
	cap = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;
	nc = malloc(sizeof(*nc) + cap);
	if (!nc)
		return NULL;
	a->footprint += sizeof(*nc) + cap;
	nc->cap = cap;
	nc->used = n;
	if (cap == n && c) {
		/* a dedicated chunk for one large item: the head chunk keeps filling */
		nc->next = c->next;
		c->next = nc;
	} else {
		nc->next = c;
		a->head = nc;
	}
	return nc->data;
}

void ms__arena_free(struct arena *a)
{
	struct arena_chunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
	a->footprint = 0;
}

void ms__buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int ms__parse_u64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (len == 0 || len > 20)
		return -1;
	if (len < 20) { /* 19 digits cannot overflow */
		for (i = 0; i < len; i++) {
			unsigned d = (unsigned)(unsigned char)s[i] - '0';

			if (d > 9)
				return -1;
			x = x * 10 + d;
		}
		*v = x;
		return 0;
	}
	for (i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9)
			return -1;
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

int ms__parse_i64(const char *s, size_t len, int64_t *v)
{
	uint64_t x;

	if (len > 0 && s[0] == '-') {
		if (ms__parse_u64(s + 1, len - 1, &x) || x > (uint64_t)INT64_MAX + 1)
			return -1;
		*v = (int64_t)(0 - x);
		return 0;
	}
	if (ms__parse_u64(s, len, &x) || x > (uint64_t)INT64_MAX)
		return -1;
	*v = (int64_t)x;
	return 0;
}

int ms__parse_hex64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (len == 0 || len > 16)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned c = (unsigned char)s[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		x = x << 4 | d;
	}
	*v = x;
	return 0;
}

int ms__is_canonical_u64(const char *s, size_t len)
{
	uint64_t v;

	return ms__parse_u64(s, len, &v) == 0 && (len == 1 || s[0] != '0');
}

int ms__is_canonical_i64(const char *s, size_t len)
{
	int64_t v;

	if (ms__parse_i64(s, len, &v))
		return 0;
	if (s[0] == '-')
		return len > 1 && s[1] != '0';
	return len == 1 || s[0] != '0';
}

/* "00".."99", two digits per division */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930"
	"31323334353637383940414243444546474849505152535455565758596061"
	"62636465666768697071727374757677787980818283848586878889909192"
	"93949596979899";

size_t ms__fmt_u64(char *dst, uint64_t v)
{
	size_t n = 1, i;
	uint64_t t;

	for (t = v; t >= 10; t /= 10)
		n++;
	i = n;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		dst[--i] = digit_pairs[d + 1];
		dst[--i] = digit_pairs[d];
	}
	if (v >= 10) {
		dst[--i] = digit_pairs[v * 2 + 1];
		dst[--i] = digit_pairs[v * 2];
	} else {
		dst[--i] = (char)('0' + v);
	}
	return n;
}

size_t ms__fmt_i64(char *dst, int64_t v)
{
	if (v < 0) {
		dst[0] = '-';
		return 1 + ms__fmt_u64(dst + 1, 0 - (uint64_t)v);
	}
	return ms__fmt_u64(dst, (uint64_t)v);
}

void ms__fmt_hex16(char *dst, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	dst[0] = '0';
	dst[1] = 'x';
	for (i = 0; i < 16; i++)
		dst[2 + i] = hex[(v >> (60 - 4 * i)) & 15];
}

size_t ms__varint_put(unsigned char *dst, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		dst[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	dst[n++] = (unsigned char)v;
	return n;
}

int ms__varint_get(const unsigned char *p, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < 10; i++) {
		if (i == n)
			return 0;
		if (i == 9 && p[i] > 1)
			return -1;
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			return (int)i + 1;
		}
	}
	return -1;
}

static inline uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

uint64_t ms__hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
	uint64_t k;

	while (n >= 8) {
		memcpy(&k, s, 8);
		h ^= k * 0xbf58476d1ce4e5b9ull;
		h = rotl64(h, 27) * 0x94d049bb133111ebull;
		s += 8;
		n -= 8;
	}
	k = 0;
	if (n)
		memcpy(&k, s, n);
	h ^= k * 0xbf58476d1ce4e5b9ull;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 29;
	return h;
}

char *ms__db_file_path(const char *path)
{
	size_t n = strlen(path);
	size_t dot = strncmp(path, "file:", 5) == 0 ? 2 : 0;
	char *out = malloc(n + 3);

	if (out) {
		memcpy(out, "./", dot);
		memcpy(out + dot, path, n + 1);
	}
	return out;
}

void ms__sort_rows(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *p = base;
	size_t i;

	for (i = 1; i < n && cmp(p + (i - 1) * size, p + i * size) <= 0; i++)
		;
	if (i < n)
		qsort(base, n, size, cmp);
}

/* ---- input names ---- */

/* an input's name while it is made: the ending s[start..len) of its name, and a hash of that
 * ending */
struct name_end {
	const char *s;
	size_t len, start;
	uint64_t h;
};

/* One more '/'-separated part of the name in the ending; 0 when it has it all. */
static int longer(struct name_end *r)
{
	size_t was = r->start;

	if (r->start && r->start < r->len)
		r->h = (r->h ^ (unsigned char)r->s[--r->start]) * 1099511628211u;
	while (r->start && r->s[r->start - 1] != '/')
		r->h = (r->h ^ (unsigned char)r->s[--r->start]) * 1099511628211u;
	return r->start != was;
}

/* rounds of one more part for the names whose ending is not alone (equal hashes count as equal:
 * a name only gets longer) */
char *ms__input_names(const char *const *inputs, size_t n, const char **names)
{
	struct name_end *r = calloc(n ? n : 1, sizeof(*r));
	struct u64map count = { 0 };
	uint64_t c, unused;
	char *buf = NULL, *at;
	size_t i, total = 0;
	int more = 1, rc = 0;

	if (!r)
		goto out;
	for (i = 0; i < n; i++) {
		const char *s = inputs && inputs[i] ? inputs[i] : "";

		r[i] = (struct name_end){ strcmp(s, "-") ? s : "standard input", 0, 0,
			14695981039346656037u };
		r[i].start = r[i].len = strlen(r[i].s);
		longer(&r[i]);
	}
	while (more && !rc) {
		more = 0;
		ms__u64map_clear(&count);
		for (i = 0; i < n && !rc; i++) {
			c = 0;
			ms__u64map_get(&count, r[i].h, &c, &unused);
			rc = ms__u64map_put(&count, r[i].h, c + 1, 0);
		}
		for (i = 0; i < n && !rc; i++)
			if (ms__u64map_get(&count, r[i].h, &c, &unused) && c > 1)
				more |= longer(&r[i]);
	}
	for (i = 0; i < n; i++)
		total += r[i].len - r[i].start + 40;
	if (rc || !(buf = malloc(total ? total : 1)))
		goto out;
	for (at = buf, i = 0; i < n; i++) {
		size_t len = r[i].len - r[i].start;
		int dup = ms__u64map_get(&count, r[i].h, &c, &unused) && c > 1;

		names[i] = at;
		if (!len)
			at += snprintf(at, 40, "input %zu", i) + 1;
		else
			at += snprintf(at, len + 40, dup ? "%.*s (input %zu)" : "%.*s", (int)len,
				      r[i].s + r[i].start, i) +
			      1;
	}
out:
	free(r);
	ms__u64map_free(&count);
	return buf;
}

static int by_i64(const void *a, const void *b)
{
	return MS__CMP(*(const int64_t *)a, *(const int64_t *)b);
}

static int by_u64(const void *a, const void *b)
{
	return MS__CMP(*(const uint64_t *)a, *(const uint64_t *)b);
}

uint64_t ms__stand_limit(
	int64_t *v, uint64_t *d, size_t n, int64_t floor, int64_t *median, uint64_t *mad)
{
	uint64_t limit;
	size_t i;

	qsort(v, n, sizeof(*v), by_i64);
	*median = v[(n - 1) / 2];
	for (i = 0; i < n; i++)
		d[i] = ms__apart(v[i], *median);
	qsort(d, n, sizeof(*d), by_u64);
	*mad = d[(n - 1) / 2];
	/* five median distances, a quarter of the median, the floor: the largest */
	limit = *mad > UINT64_MAX / 5 ? UINT64_MAX : 5 * *mad;
	if (ms__apart(*median, 0) / 4 > limit)
		limit = ms__apart(*median, 0) / 4;
	if (floor > 0 && (uint64_t)floor > limit)
		limit = (uint64_t)floor;
	return limit;
}
