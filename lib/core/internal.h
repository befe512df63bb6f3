/* Private helpers shared by the library's layers: growable buffers, strict number parsing, varints,
 * hashing. */
#ifndef MEMSCOPE_INTERNAL_H
#define MEMSCOPE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A growable byte buffer. Zero-initialise; free with ms__buf_free. */
struct buf {
	char *p;
	size_t len, cap;
};

/* Make room for n more bytes. 0 or MEMSCOPE_E_NOMEM. */
int ms__buf_reserve(struct buf *b, size_t n);
int ms__buf_append(struct buf *b, const void *p, size_t n);

/* printf at *at into buf (size bytes): the text is cut at the end of buf, which stays
 * NUL-terminated when size > 0, and *at moves past what was written (to size at most). */
void ms__text_put(char *buf, size_t size, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * An append-only arena: memory handed out never moves and is freed all at once. Zero-initialise;
 * footprint counts the bytes it holds.
 */
struct arena_chunk;
struct arena {
	struct arena_chunk *head;
	size_t footprint;
};

/* n bytes aligned for any type, valid until ms__arena_free. NULL on OOM. */
void *ms__arena_alloc(struct arena *a, size_t n);
void ms__arena_free(struct arena *a);

/*
 * Grow the array *pp (elements of elem bytes, *cap of them) to hold at least need elements,
 * doubling; new elements are zeroed. pp is the address of the array pointer. 0 or
 * MEMSCOPE_E_NOMEM (the array is unchanged).
 */
int ms__grow_array(void *pp, size_t *cap, size_t need, size_t elem);
/* -1, 0 or 1 as a is below, equal to or above b (any arithmetic type, no overflow): the step of a
 * comparator, chained as c = c ? c : MS__CMP(..). */
#define MS__CMP(a, b) (((a) > (b)) - ((a) < (b)))
/* |a - b|, which a uint64_t always holds. */
static inline uint64_t ms__apart(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}
/* The smallest distance from the median of a figure at or below which no input stands out
 * (memscope-batch's rule, which memscope-report's ranks share): peak, growth per step. */
#define MS__STAND_FLOOR_PEAK ((int64_t)1 << 20)
#define MS__STAND_FLOOR_GROWTH ((int64_t)64 << 10)
/*
 * The spread of one figure across n > 0 inputs, values v (sorted in place), d room for n
 * distances: *median the lower middle value, *mad the median distance from it; returns the
 * distance from the median above which an input stands out: the largest of five times *mad, a
 * quarter of |*median| and floor.
 */
uint64_t ms__stand_limit(
	int64_t *v, uint64_t *d, size_t n, int64_t floor, int64_t *median, uint64_t *mad);
/* qsort of n elements, none when n < 2 (so base may be NULL when n is 0, which qsort itself
 * must not be given). */
static inline void ms__qsort(
	void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}
/* qsort, after one pass that finds base already in order (rows read in time order, the common
 * case of captures and of most dumps) and then leaves it as it is. */
void ms__sort_rows(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
void ms__buf_free(struct buf *b);

/* Length of the valid UTF-8 sequence at p (before end), 0 when it is not one. */
size_t ms__utf8_seq(const unsigned char *p, const unsigned char *end);

/* Strict decimal parsing of exactly len bytes: no sign (u64) or one '-' (i64), no spaces, no
 * overflow. 0 on success, -1 otherwise. */
int ms__parse_u64(const char *s, size_t len, uint64_t *v);
int ms__parse_i64(const char *s, size_t len, int64_t *v);
/* Hex digits only (no 0x), 1..16 of them. */
int ms__parse_hex64(const char *s, size_t len, uint64_t *v);
/* True if s[0..len) is exactly what ms__fmt_u64 / ms__fmt_i64 would write for some value. */
int ms__is_canonical_u64(const char *s, size_t len);
int ms__is_canonical_i64(const char *s, size_t len);

/* Decimal text of v into dst (room for 20 / 21 bytes); returns the length (no NUL). */
size_t ms__fmt_u64(char *dst, uint64_t v);
size_t ms__fmt_i64(char *dst, int64_t v);
/* "0x" + 16 lower-case hex digits (18 bytes, no NUL). */
void ms__fmt_hex16(char *dst, uint64_t v);

/* LEB128 varints. put returns bytes written (at most 10). get returns bytes read, 0 when the
 * input ends inside the varint, -1 when it is longer than 10 bytes or overflows. */
size_t ms__varint_put(unsigned char *dst, uint64_t v);
int ms__varint_get(const unsigned char *p, size_t n, uint64_t *v);
static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

uint64_t ms__hash_bytes(const void *p, size_t n);

/* Add a block's size to a byte total: negative sizes (legacy FREE rows) count 0, the total
 * saturates at UINT64_MAX. */
static inline void add_bytes(uint64_t *total, int64_t size)
{
	if (size > 0 && __builtin_add_overflow(*total, (uint64_t)size, total))
		*total = UINT64_MAX;
}

struct memscope_event;
struct memscope_attr;
/*
 * Set the typed fields (size, alloc_id, total, used, shadow, pool of ACCESS, func) from ev's
 * attrs. For MALLOC/FREE/ACCESS a non-numeric value of a numeric key is an error: the message is
 * returned and *bad names the attr; otherwise NULL.
 */
const char *ms__event_type_attrs(struct memscope_event *ev, const struct memscope_attr **bad);

/*
 * ev's pool from its kind, subtype and name: the subtype for MALLOC, FREE and PLAN rows of a pool,
 * the one pool a COUNTER POOL sample's component is (PTA, GE, WORKSPACE: PTA_WORKSPACE,
 * MindSpore; 0 for sums such as PTA+GE and APP), else left as it is (ACCESS: from its attrs).
 * st holds ev's name.
 */
struct memscope_strtab;
void ms__event_set_pool(struct memscope_event *ev, const struct memscope_strtab *st);
/* The one pool a memory_record component (s[0..len)) is, or 0. */
unsigned ms__component_pool(const char *s, size_t len);

/*
 * The Attr entries the reference would write for an event that has typed fields and no Attr text
 * (events of our capture format): allocation_id, addr, size, func, each when set. Values are
 * written into buf (MEMSCOPE_SYNTH_BUF bytes), out (room for 4) gets the entries. Returns their
 * count.
 */
#define MEMSCOPE_SYNTH_BUF 96
uint32_t ms__event_synth_attrs(
	const struct memscope_event *ev, struct memscope_attr *out, char *buf);

/*
 * path as sqlite3_open_v2 must be given it: SQLite may take a name starting "file:" for a URI,
 * so such a relative path gets "./" in front. malloc'd (the caller frees); NULL on OOM.
 */
char *ms__db_file_path(const char *path);

/*
 * Names that tell n inputs apart, as the flame graph's roots and the memory page show them: each
 * the shortest ending of its path's '/'-separated parts that no other input's ending of as many
 * parts or more has ("rank0/dump.csv" beside "rank1/dump.csv"), "standard input" for "-", "input
 * I" for an empty name, "NAME (input I)" for a name given twice. names[i] gets input i's (NULL
 * inputs: every name empty). Returns the block that holds them all (the caller frees it; the
 * names are borrowed from it), NULL on OOM (names untouched). O(total length + rounds * n).
 */
char *ms__input_names(const char *const *inputs, size_t n, const char **names);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
