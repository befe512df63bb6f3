/* What the Ascend profiler readers share: the output's state, delivery, and its numbers. */
#include <string.h>

#include "../core/clocks.h"
#include "msprof.h"

void ms__prof_ctx_init(struct prof_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->pid = MEMSCOPE_ID_NONE;
	c->device = MEMSCOPE_DEVICE_NONE;
}

int ms__prof_deliver(struct memscope_source *src, struct prof_ctx *c, memscope_event_fn fn,
	void *ctx, struct memscope_event *ev, struct memscope_error *err)
{
	int64_t shift;
	int rc;

	if (c->before && (rc = c->before(c, src, fn, ctx, ev, err)))
		return rc;
	ev->id = ++c->next_id;
	ev->src = src->opts.src;
	if (ev->pid == MEMSCOPE_ID_NONE)
		ev->pid = c->pid;
	if (c->clocks && ms__clocks_feed(c->clocks, ev, &shift))
		return memscope_error_set(
			err, MEMSCOPE_E_NOMEM, src->name, ev->line, "out of memory");
	return source_deliver(src, fn, ctx, ev);
}

static int blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

const char *ms__prof_trim(const char *p, size_t *len)
{
	size_t n = *len;

	while (n && blank(*p))
		p++, n--;
	while (n && blank(p[n - 1]))
		n--;
	*len = n;
	return p;
}

int ms__prof_missing(const char *p, size_t len)
{
	return len == 0 || (len == 3 && memcmp(p, "N/A", 3) == 0);
}

const char *ms__prof_num_error(int rc)
{
	switch (rc) {
	case PROF_NUM_EXP:
		return READER_EXP_NOTATION;
	case PROF_NUM_RANGE:
		return "is out of range";
	default:
		return "is not a number";
	}
}

/*
 * A decimal number as written: digits with an optional point. Up to 19 digits on each side are
 * kept in 64 bits (every figure the profiler writes); longer ones (at most 36 digits in all) in
 * *wide, 128 bits, as the one integer of all the digits.
 */
struct fixed {
	uint64_t ip, fp;   /* the digits before and after the point */
	unsigned decimals; /* digits after the point */
	int is_wide;	   /* a side had more than 19 digits: only wide holds the number */
	unsigned __int128 wide;
};

static unsigned __int128 pow10_128(unsigned n)
{
	unsigned __int128 p = 1;

	while (n--)
		p *= 10;
	return p;
}

static const uint64_t pow10_64[20] = { 1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull,
	1000000ull, 10000000ull, 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
	1000000000000ull, 10000000000000ull, 100000000000000ull, 1000000000000000ull,
	10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
	10000000000000000000ull };

/* Whether [p, end) is an exponent's rest: an optional sign and digits. */
static int is_exponent(const char *p, const char *end)
{
	if (p < end && (*p == '+' || *p == '-'))
		p++;
	if (p == end)
		return 0;
	while (p < end && (unsigned)(*p - '0') < 10)
		p++;
	return p == end;
}

/* s[0..len) into *x. 0 or an enum prof_num. */
static int parse_fixed(const char *s, size_t len, struct fixed *x)
{
	const char *end = s + len, *p = s;
	uint64_t v = 0;
	unsigned n = 0;

	while (p < end && (unsigned)(*p - '0') < 10 && n < 19)
		v = v * 10 + (uint64_t)(*p++ - '0'), n++;
	while (p < end && (unsigned)(*p - '0') < 10) /* past 19 digits */
		p++, n++;
	x->ip = v;
	x->fp = 0;
	x->decimals = 0;
	x->is_wide = n > 19;
	if (p < end && *p == '.') {
		const char *f = ++p;

		v = 0;
		while (p < end && (unsigned)(*p - '0') < 10 && p - f < 19)
			v = v * 10 + (uint64_t)(*p++ - '0');
		while (p < end && (unsigned)(*p - '0') < 10)
			p++;
		x->fp = v;
		x->decimals = (unsigned)(p - f);
		x->is_wide |= x->decimals > 19;
		n += x->decimals;
	}
	if (p != end || !n)
		return n && p < end && (*p == 'E' || *p == 'e') && is_exponent(p + 1, end)
			       ? PROF_NUM_EXP
			       : PROF_NUM_BAD;
	if (n > 36)
		return PROF_NUM_RANGE;
	if (x->is_wide) { /* the rare long figure: all its digits in 128 bits */
		x->wide = 0;
		for (p = s; p < end; p++)
			if (*p != '.')
				x->wide = x->wide * 10 + (unsigned)(*p - '0');
	}
	return 0;
}

/* (num / den) rounded to the nearest, halves up, in 128 bits. */
static unsigned __int128 div_round(unsigned __int128 num, unsigned __int128 den)
{
	unsigned __int128 q = num / den, r = num % den;

	return q + (r * 2 >= den);
}

int ms__prof_parse_us(const char *s, size_t len, uint64_t *ns)
{
	struct fixed x;
	uint64_t frac;
	int rc;

	if (len && s[0] == '-') { /* a number, but no time */
		rc = parse_fixed(s + 1, len - 1, &x);
		return rc ? rc : PROF_NUM_RANGE;
	}
	if ((rc = parse_fixed(s, len, &x)))
		return rc;
	if (x.is_wide) {
		unsigned __int128 q = x.decimals > 3 ? div_round(x.wide, pow10_128(x.decimals - 3))
				      : x.wide > UINT64_MAX ? (unsigned __int128)UINT64_MAX + 1
							    : x.wide * pow10_128(3 - x.decimals);

		if (q > UINT64_MAX)
			return PROF_NUM_RANGE;
		*ns = (uint64_t)q;
		return 0;
	}
	/* decimals past the third rounded to the nearest ns */
	frac = x.decimals <= 3
		       ? x.fp * pow10_64[3 - x.decimals]
		       : x.fp / pow10_64[x.decimals - 3] +
				 (x.fp % pow10_64[x.decimals - 3] * 2 >= pow10_64[x.decimals - 3]);
	if (__builtin_mul_overflow(x.ip, 1000, ns) || __builtin_add_overflow(*ns, frac, ns))
		return PROF_NUM_RANGE;
	return 0;
}

int ms__prof_parse_bytes(const char *s, size_t len, uint64_t unit, int64_t *bytes, int *exact)
{
	unsigned __int128 q, num, den;
	struct fixed x;
	int neg = len && s[0] == '-', rc;

	if ((rc = parse_fixed(s + neg, len - (size_t)neg, &x)))
		return rc;
	if (!x.is_wide && x.decimals <= 12 && unit <= (1u << 21)) {
		/* the usual figure: the fraction's bytes fit 64 bits (< 10^12 * 2^21) */
		uint64_t den64 = pow10_64[x.decimals], fnum = x.fp * unit, whole;

		*exact = fnum % den64 == 0;
		if (__builtin_mul_overflow(x.ip, unit, &whole))
			return PROF_NUM_RANGE;
		q = (unsigned __int128)whole + fnum / den64 + (fnum % den64 * 2 >= den64);
	} else {
		if (x.decimals > 30)
			return PROF_NUM_RANGE;
		den = pow10_128(x.decimals);
		num = x.is_wide ? x.wide : (unsigned __int128)x.ip * den + x.fp;
		if (num > ((unsigned __int128)1 << 100))
			return PROF_NUM_RANGE;
		num *= unit;
		*exact = num % den == 0;
		q = div_round(num, den);
	}
	if (q > INT64_MAX)
		return PROF_NUM_RANGE;
	*bytes = neg ? -(int64_t)q : (int64_t)q;
	return 0;
}
