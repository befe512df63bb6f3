/* Interning of strings and call stacks: each distinct string or stack is stored once and named by a
 * dense id. */
#ifndef MEMSCOPE_STRTAB_H
#define MEMSCOPE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

/*
 * Well-known strings, interned at creation so their ids are constants. Id 0 is the empty string.
 * Attr keys the library understands are here, so readers and analyses compare ids, not text.
 */
enum memscope_str {
	MEMSCOPE_STR_EMPTY = 0,
	MEMSCOPE_STR_NA,	    /* "N/A" */
	MEMSCOPE_STR_ALLOCATION_ID, /* attr keys from here on */
	MEMSCOPE_STR_ADDR,
	MEMSCOPE_STR_SIZE,
	MEMSCOPE_STR_TOTAL,
	MEMSCOPE_STR_USED,
	MEMSCOPE_STR_SHADOW,
	MEMSCOPE_STR_TYPE,
	MEMSCOPE_STR_OWNER,
	MEMSCOPE_STR_INEFFICIENT_TYPE,
	MEMSCOPE_STR_PAGE_TYPE,
	MEMSCOPE_STR_ALLOC_TYPE,
	MEMSCOPE_STR_PINNED,
	MEMSCOPE_STR_FUNC,
	MEMSCOPE_STR_PTR,
	MEMSCOPE_STR_MID,
	MEMSCOPE_STR_BEFORE_TRACE, /* a PyTorch snapshot's block alive before its trace starts */
	MEMSCOPE_STR_WELL_KNOWN_COUNT
};

struct memscope_strtab;

/* New table holding the well-known strings. Caller frees with memscope_strtab_free. NULL on OOM. */
struct memscope_strtab *memscope_strtab_new(void);

/* Free the table and every string and stack in it. NULL is fine. */
void memscope_strtab_free(struct memscope_strtab *st);

/*
 * Intern len bytes at s (need not be NUL-terminated; may hold NULs). On success *id names the
 * string and 0 is returned; MEMSCOPE_E_NOMEM leaves the table unchanged.
 */
int memscope_strtab_intern(struct memscope_strtab *st, const char *s, size_t len, uint32_t *id);

/*
 * Text of string id (NUL-terminated; *len, if given, gets its length). Borrowed: valid until the
 * table is freed. NULL for an id the table does not hold.
 */
const char *memscope_strtab_str(const struct memscope_strtab *st, uint32_t id, size_t *len);

/* Number of strings held (ids are 0 .. count-1). */
uint32_t memscope_strtab_count(const struct memscope_strtab *st);

/*
 * Intern a call stack given as n frame string ids (innermost first). Stack ids start at 1; 0 means
 * "no stack". A stack of zero frames is a valid stack (an empty quoted field). Returns 0 or
 * MEMSCOPE_E_NOMEM / MEMSCOPE_E_ARG (a frame id the table does not hold).
 */
int memscope_strtab_intern_stack(
	struct memscope_strtab *st, const uint32_t *frames, size_t n, uint32_t *id);

/* Frames of stack id (borrowed, valid until the table is freed); NULL for an unknown id or 0. */
const uint32_t *memscope_strtab_stack(const struct memscope_strtab *st, uint32_t id, size_t *n);

/*
 * A C frame as people read it, so one function merges across call sites, runs and machines: a
 * backtrace_symbols line "path/module(symbol+0xoff) [0xaddr]" becomes "symbol (module)", the
 * symbol demangled when it is a mangled C++ name and the path, offset and address dropped; one
 * without a symbol, "module(+0xoff) [0xaddr]", keeps its offset: "module+0xoff". Any other text
 * (a Python frame) is copied. frame[0..len) need not end in NUL. Writes at most size - 1 bytes
 * and a NUL into out (size 0: nothing) and returns the length of the whole text, as snprintf.
 */
size_t memscope_frame_text(const char *frame, size_t len, char *out, size_t size);

/* Frame string id of st as memscope_frame_text writes it, interned in st, into *text (id itself
 * when st holds no such string). 0 or MEMSCOPE_E_NOMEM. Not cached: callers that meet one frame
 * often keep their own map. */
int memscope_strtab_frame_text(struct memscope_strtab *st, uint32_t id, uint32_t *text);

/* Number of stacks held plus one (valid ids are 1 .. count-1). */
uint32_t memscope_strtab_stack_count(const struct memscope_strtab *st);

/* Bytes of memory the table holds (for the benchmarks' accounting). */
size_t memscope_strtab_footprint(const struct memscope_strtab *st);

#endif
