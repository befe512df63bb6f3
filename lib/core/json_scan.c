/* The library's one JSON scanner (json_scan.h): values checked and skipped or pointed at in a
 * window of input, strings decoded, objects read for a table of keys. */
#include <string.h>

#include "json_scan.h"
#include "memscope/error.h"

#define DEPTH_MAX 1024 /* the deepest nesting of a skipped value */

int ms__json_bad(struct ms__json *j, const char *what)
{
	j->bad = what;
	return MS__JSON_BAD;
}

void ms__json_skip_ws(struct ms__json *j)
{
	const char *p = j->p, *end = j->end;

	for (; p < end; p++) {
		switch (*p) {
		case ' ':
		case '\t':
			break;
		case '\r':
			j->line++;
			break;
		case '\n':
			if (!(p > j->data ? p[-1] == '\r' : j->cr_before))
				j->line++;
			break;
		default:
			j->p = p;
			return;
		}
	}
	j->p = p;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Bytes that end the fast part of a string: the quote, a backslash, control bytes. */
static const unsigned char str_stop[256] = {
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1, /* 0x00 .. 0x1f */
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	['"'] = 1,
	['\\'] = 1,
};

/* The string at p (its opening quote) into v. */
int ms__json_string(struct ms__json *j, struct ms__json_val *v)
{
	const char *q = j->p + 1, *end = j->end;
	int esc = 0, i;

	for (;;) {
		while (q < end && !str_stop[(unsigned char)*q])
			q++;
		if (q == end)
			return MS__JSON_END;
		if (*q == '"')
			break;
		if (*q != '\\') {
			j->p = q;
			return ms__json_bad(
				j, "a control byte in a string (a line end must be written \\n)");
		}
		esc = 1;
		if (q + 1 == end)
			return MS__JSON_END;
		switch (q[1]) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			q += 2;
			break;
		case 'u':
			for (i = 2; i < 6; i++) {
				if (q + i == end)
					return MS__JSON_END;
				if (hexval(q[i]) < 0) {
					j->p = q;
					return ms__json_bad(j, "\\u not followed by 4 hex digits");
				}
			}
			q += 6;
			break;
		default:
			j->p = q;
			return ms__json_bad(j, "an invalid escape in a string");
		}
	}
	v->s = j->p + 1;
	v->len = (size_t)(q - v->s);
	v->type = MS__JSON_STR;
	v->esc = esc;
	j->p = q + 1;
	return MS__JSON_OK;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The number at p into v: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(struct ms__json *j, struct ms__json_val *v)
{
	const char *q = j->p, *end = j->end;

#define NEED(cond, what)                                                                           \
	do {                                                                                       \
		if (q == end)                                                                      \
			return MS__JSON_END;                                                       \
		if (!(cond)) {                                                                     \
			j->p = q;                                                                  \
			return ms__json_bad(j, what);                                              \
		}                                                                                  \
	} while (0)

	if (*q == '-')
		q++;
	NEED(is_digit(*q), "a digit expected after '-'");
	if (*q++ != '0')
		while (q < end && is_digit(*q))
			q++;
	if (q < end && *q == '.') {
		q++;
		NEED(is_digit(*q), "a digit expected after the decimal point");
		while (q < end && is_digit(*q))
			q++;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		NEED(is_digit(*q), "a digit expected in the exponent");
		while (q < end && is_digit(*q))
			q++;
	}
#undef NEED
	/* the number may go on in the input still to come */
	if (q == end)
		return MS__JSON_END;
	v->s = j->p;
	v->len = (size_t)(q - j->p);
	v->type = MS__JSON_NUM;
	v->esc = 0;
	j->p = q;
	return MS__JSON_OK;
}

static int scan_literal(struct ms__json *j)
{
	static const char *const lits[3] = { "true", "false", "null" };
	const char *lit = lits[*j->p == 't' ? 0 : *j->p == 'f' ? 1 : 2];
	size_t n = strlen(lit), have = (size_t)(j->end - j->p);

	if (memcmp(j->p, lit, have < n ? have : n) != 0)
		return ms__json_bad(j, "an unknown word (not true, false or null)");
	if (have < n)
		return MS__JSON_END;
	j->p += n;
	return MS__JSON_OK;
}

/* A scalar at p: a string, a number or a literal. */
int ms__json_scalar(struct ms__json *j, struct ms__json_val *v)
{
	char c = *j->p;

	if (c == '"')
		return ms__json_string(j, v);
	if (c == '-' || is_digit(c))
		return scan_number(j, v);
	if (c == 't' || c == 'f' || c == 'n') {
		v->type = MS__JSON_OTHER;
		return scan_literal(j);
	}
	return ms__json_bad(j, "a value expected");
}

#define WS_OR_END(j)                                                                               \
	do {                                                                                       \
		ms__json_skip_ws(j);                                                               \
		if ((j)->p == (j)->end)                                                            \
			return MS__JSON_END;                                                       \
	} while (0)

/* A key and its colon, from the key's opening quote. */
int ms__json_key(struct ms__json *j, struct ms__json_val *k)
{
	int rc;

	if (*j->p != '"')
		return ms__json_bad(j, "a key (a string) expected");
	if ((rc = ms__json_string(j, k)))
		return rc;
	WS_OR_END(j);
	if (*j->p != ':')
		return ms__json_bad(j, "':' expected after a key");
	j->p++;
	WS_OR_END(j);
	return MS__JSON_OK;
}

/* Any value at p, checked and skipped, nesting kept on a stack of bits (1: an object). */
int ms__json_skip_value(struct ms__json *j)
{
	uint64_t objs[DEPTH_MAX / 64];
	struct ms__json_val v;
	unsigned depth = 0;
	int rc, obj, closed;

	for (;;) {
		/* a value */
		char c = *j->p;

		if (c == '{' || c == '[') {
			if (depth == DEPTH_MAX)
				return ms__json_bad(j, "values nested more than 1024 deep");
			obj = c == '{';
			if (obj)
				objs[depth / 64] |= (uint64_t)1 << (depth % 64);
			else
				objs[depth / 64] &= ~((uint64_t)1 << (depth % 64));
			depth++;
			j->p++;
			WS_OR_END(j);
			if (*j->p == (obj ? '}' : ']')) {
				j->p++;
				depth--;
			} else {
				if (obj && (rc = ms__json_key(j, &v)))
					return rc;
				continue;
			}
		} else if ((rc = ms__json_scalar(j, &v))) {
			return rc;
		}
		/* after a value: a comma and the next, or the end of containers */
		for (;;) {
			if (depth == 0)
				return MS__JSON_OK;
			obj = (int)(objs[(depth - 1) / 64] >> ((depth - 1) % 64) & 1);
			WS_OR_END(j);
			if ((rc = ms__json_comma_or(j, obj ? '}' : ']',
				     obj ? "',' or '}' expected after a value"
					 : "',' or ']' expected after a value",
				     &closed)))
				return rc;
			if (!closed) {
				WS_OR_END(j);
				if (obj && (rc = ms__json_key(j, &v)))
					return rc;
				break;
			}
			depth--;
		}
	}
}

/* A value whose text is wanted when it is a scalar: containers are skipped (type MS__JSON_OTHER).
 */
static int scan_value(struct ms__json *j, struct ms__json_val *v)
{
	if (*j->p == '{' || *j->p == '[') {
		v->type = MS__JSON_OTHER;
		return ms__json_skip_value(j);
	}
	return ms__json_scalar(j, v);
}

/* The code point of the 4 hex digits at p. */
static unsigned hex4(const char *p)
{
	return (unsigned)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 |
			  hexval(p[3]));
}

int ms__json_decode(struct buf *b, const struct ms__json_val *v, int strict)
{
	const char *p = v->s, *end = v->s + v->len;

	if (ms__buf_reserve(b, v->len))
		return MEMSCOPE_E_NOMEM;
	while (p < end) {
		const char *bs = memchr(p, '\\', (size_t)(end - p));
		char *o;
		unsigned cp;

		if (!bs) {
			memcpy(b->p + b->len, p, (size_t)(end - p));
			b->len += (size_t)(end - p);
			break;
		}
		memcpy(b->p + b->len, p, (size_t)(bs - p));
		b->len += (size_t)(bs - p);
		o = b->p + b->len;
		p = bs + 2;
		switch (bs[1]) {
		case 'b':
			*o = '\b';
			break;
		case 'f':
			*o = '\f';
			break;
		case 'n':
			*o = '\n';
			break;
		case 'r':
			*o = '\r';
			break;
		case 't':
			*o = '\t';
			break;
		case 'u':
			cp = hex4(p);
			p += 4;
			if (strict && cp >= 0xd800 && cp < 0xe000)
				return MS__JSON_BAD;
			if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' &&
				p[1] == 'u' && hex4(p + 2) >= 0xdc00 && hex4(p + 2) < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4(p + 2) - 0xdc00);
				p += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd; /* a lone surrogate */
			}
			/* at most 4 bytes for the 6 or 12 read */
			if (cp < 0x80) {
				*o = (char)cp;
			} else if (cp < 0x800) {
				*o++ = (char)(0xc0 | cp >> 6);
				*o = (char)(0x80 | (cp & 0x3f));
			} else if (cp < 0x10000) {
				*o++ = (char)(0xe0 | cp >> 12);
				*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
				*o = (char)(0x80 | (cp & 0x3f));
			} else {
				*o++ = (char)(0xf0 | cp >> 18);
				*o++ = (char)(0x80 | (cp >> 12 & 0x3f));
				*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
				*o = (char)(0x80 | (cp & 0x3f));
			}
			break;
		default: /* " \ / */
			*o = bs[1];
			break;
		}
		b->len = (size_t)(o + 1 - b->p);
	}
	return 0;
}

int ms__json_str_eq(const struct ms__json_val *v, const char *lit)
{
	size_t n = strlen(lit);
	struct buf b = { 0 };
	char tmp[64];
	int eq;

	if (v->type != MS__JSON_STR)
		return 0;
	if (!v->esc)
		return v->len == n && memcmp(v->s, lit, n) == 0;
	if (v->len > sizeof(tmp))
		return 0; /* an escape is at least 2 bytes: longer than any key of ours */
	b.p = tmp;
	b.cap = sizeof(tmp);
	ms__json_decode(&b, v, 0); /* fits: decoded is never longer */
	eq = b.len == n && memcmp(tmp, lit, n) == 0;
	return eq;
}

static int key_of(const struct ms__json_val *k, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (ms__json_str_eq(k, names[i]))
			return i;
	return -1;
}

int ms__json_object(struct ms__json *j, const struct ms__json_keys *keys, struct ms__json_val *vals,
	struct ms__json_val *sub_vals)
{
	struct ms__json_val k;
	int rc, i, closed;

	j->p++;
	WS_OR_END(j);
	if (*j->p == '}') {
		j->p++;
		return MS__JSON_OK;
	}
	for (;;) {
		if ((rc = ms__json_key(j, &k)))
			return rc;
		i = key_of(&k, keys->names, keys->n);
		if (i >= 0 && i == keys->sub && *j->p == '{')
			rc = ms__json_object(j, keys->sub_keys, sub_vals, NULL);
		else if (i < 0 || i == keys->sub)
			rc = ms__json_skip_value(j);
		else
			rc = scan_value(j, &vals[i]);
		if (rc)
			return rc;
		WS_OR_END(j);
		if ((rc = ms__json_comma_or(
			     j, '}', "',' or '}' expected after a value", &closed)) ||
			closed)
			return rc;
		WS_OR_END(j);
	}
}
