/* The library's one JSON scanner (RFC 8259 text over a byte window that may end mid-value), shared
 * by the profiler's timeline reader and the reader of memscope-batch's parts. */
#ifndef MEMSCOPE_JSON_SCAN_H
#define MEMSCOPE_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/*
 * What the scanning functions return: MS__JSON_OK (the value read, p past it), MS__JSON_END (the
 * window ends inside it: p may have moved, so the caller starts again from where the value began,
 * with more input), MS__JSON_BAD (not JSON: bad says what, p is where). Never a MEMSCOPE_E_* code.
 */
enum { MS__JSON_OK = 0, MS__JSON_END, MS__JSON_BAD };

/* A scanner over data[..end), at p. Zero-initialise, then set p, end, data and line. */
struct ms__json {
	const char *p, *end;
	const char *data; /* the window's first byte */
	int cr_before;	  /* the byte before data was a CR (a LF after it ends no line) */
	uint64_t line;	  /* of p: line ends (CR, LF, CRLF) are only in whitespace */
	const char *elem; /* the caller's: where the element being read starts, at elem_line */
	uint64_t elem_line;
	const char *bad; /* MS__JSON_BAD: what was wrong at p (a static string) */
};

enum ms__json_type { MS__JSON_NONE, MS__JSON_STR, MS__JSON_NUM, MS__JSON_OTHER };

/*
 * A scalar value, pointing into the window: a string's bytes between its quotes (escapes still
 * in them when esc), a number's text; MS__JSON_OTHER for true, false, null and a container
 * skipped (s unset). Zero-initialised it is MS__JSON_NONE (not written).
 */
struct ms__json_val {
	const char *s;
	size_t len;
	int type, esc;
};

/*
 * The keys of an object to read: the values of names[0..n) are kept, every other skipped. When
 * sub >= 0, the value of names[sub] is not kept: when it is an object, it is read with sub_keys
 * (whose own sub is -1); anything else is skipped.
 */
struct ms__json_keys {
	const char *const *names;
	int n;
	int sub;
	const struct ms__json_keys *sub_keys;
};

/* MS__JSON_BAD with j->bad = what (a static string). */
int ms__json_bad(struct ms__json *j, const char *what);

/*
 * After a value in an array or object, at p (whitespace skipped, not at end): a ',' (*closed 0)
 * or the container's closing byte close (*closed 1), p past it: MS__JSON_OK; anything else
 * MS__JSON_BAD with what.
 */
static inline int ms__json_comma_or(struct ms__json *j, char close, const char *what, int *closed)
{
	*closed = *j->p == close;
	if (!*closed && *j->p != ',')
		return ms__json_bad(j, what);
	j->p++;
	return MS__JSON_OK;
}

/* Whitespace from p skipped, counting lines. */
void ms__json_skip_ws(struct ms__json *j);

/* Whether c is next after whitespace (then consumed). */
static inline int ms__json_eat(struct ms__json *j, char c)
{
	ms__json_skip_ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return 1;
	}
	return 0;
}

/* The string at p (p at its opening quote) into v, checked (escapes, no control byte). */
int ms__json_string(struct ms__json *j, struct ms__json_val *v);

/* A scalar at p: a string, a number (JSON's grammar) or true/false/null (type MS__JSON_OTHER). */
int ms__json_scalar(struct ms__json *j, struct ms__json_val *v);

/* Any value at p checked and skipped (nesting at most 1024 deep). */
int ms__json_skip_value(struct ms__json *j);

/* A key at p (its opening quote) into k, its ':' and the whitespace after it. */
int ms__json_key(struct ms__json *j, struct ms__json_val *k);

/*
 * The object at p (its '{'): the values of k's names into vals[0..k->n) (and those of its sub
 * object into sub_vals), as ms__json_keys says, each checked; a key written twice keeps its last
 * value. vals are not cleared first.
 */
int ms__json_object(struct ms__json *j, const struct ms__json_keys *k, struct ms__json_val *vals,
	struct ms__json_val *sub_vals);

/*
 * The string v (checked by ms__json_string) decoded to UTF-8 and appended to b (nothing else
 * appended; not NUL-terminated). A \u surrogate pair is one code point and a lone surrogate
 * U+FFFD; with strict, any \u of a surrogate is refused instead. 0, MEMSCOPE_E_NOMEM (b holds
 * part of it), or MS__JSON_BAD (strict only: a surrogate; b holds part of it).
 */
int ms__json_decode(struct buf *b, const struct ms__json_val *v, int strict);

/* Whether v is a string and, decoded, the NUL-terminated lit (at most 64 bytes long). */
int ms__json_str_eq(const struct ms__json_val *v, const char *lit);

#endif
