/* Implementation of the CSV row tokenizer (csvtok.h). */
#include <string.h>

#include "csvtok.h"
#include "input.h"
#include "memscope/error.h"

/* bytes that end an unquoted field */
static const unsigned char stop[256] = { [','] = 1, ['\r'] = 1, ['\n'] = 1 };

static const char *scan_unquoted(const char *s, const char *end)
{
	while (end - s >= 4) {
		if (stop[(unsigned char)s[0]])
			return s;
		if (stop[(unsigned char)s[1]])
			return s + 1;
		if (stop[(unsigned char)s[2]])
			return s + 2;
		if (stop[(unsigned char)s[3]])
			return s + 3;
		s += 4;
	}
	while (s < end && !stop[(unsigned char)*s])
		s++;
	return s;
}

/* Line ends in s[0..n): LF, CR LF and a lone CR each end one line. */
static uint64_t count_nl(const char *s, size_t n)
{
	const char *end = s + n;
	uint64_t k = 0;

	for (; s < end; s++)
		k += *s == '\n' || (*s == '\r' && (s + 1 == end || s[1] != '\n'));
	return k;
}

/* Copy s[0..n) with each '""' as one '"' into t->unq; the field's p is fixed up by the caller. */
static int unescape(struct csvtok *t, const char *s, size_t n, size_t *off, size_t *len)
{
	size_t i, o;

	if (ms__buf_reserve(&t->unq, n))
		return -1;
	*off = t->unq.len;
	for (i = 0, o = t->unq.len; i < n; i++) {
		t->unq.p[o++] = s[i];
		if (s[i] == '"' && i + 1 < n && s[i + 1] == '"')
			i++;
	}
	*len = o - t->unq.len;
	t->unq.len = o;
	return 0;
}

int ms__csvtok_row(
	struct csvtok *t, const char *p, size_t n, int final, size_t *used, uint64_t *lead_nl)
{
	const char *s = p, *end = p + n;
	size_t unq_off[CSVTOK_MAX_FIELDS];
	unsigned i, n_unq = 0;
	uint64_t nl = 0;

	/* a CR ends a line unless a LF follows: one at the end waits for the next byte */
	while (s < end && (*s == '\r' || *s == '\n') && (*s == '\n' || s + 1 < end || final)) {
		nl += *s == '\n' || s + 1 == end || s[1] != '\n';
		s++;
	}
	*used = (size_t)(s - p);
	*lead_nl = nl;
	if (s == end)
		return final ? CSVTOK_END : CSVTOK_MORE;
	if (*s == '\r')
		return CSVTOK_MORE;
	t->n = 0;
	t->row_nl = 0;
	t->unq.len = 0;
	for (;;) {
		struct csvtok_field fld = { s, 0, 0, 0, (size_t)(s - p), 0 };
		int escaped = 0;

		if (s < end && *s == '"') {
			const char *c = s + 1, *q;

			for (;;) {
				q = memchr(c, '"', (size_t)(end - c));
				if (!q)
					return final ? CSVTOK_OPEN_QUOTE : CSVTOK_MORE;
				if (q + 1 == end) {
					if (!final)
						return CSVTOK_MORE;
					break;
				}
				if (q[1] == ',' || q[1] == '\r' || q[1] == '\n')
					break;
				if (q[1] == '"') {
					escaped = 1;
					c = q + 2;
				} else {
					c = q + 1;
				}
			}
			fld.p = s + 1;
			fld.len = (size_t)(q - s - 1);
			fld.quoted = 1;
			t->row_nl += count_nl(fld.p, fld.len);
			s = q + 1;
		} else {
			const char *c = scan_unquoted(s, end);

			if (c == end && !final)
				return CSVTOK_MORE;
			fld.len = (size_t)(c - s);
			fld.null = fld.len == 0;
			s = c;
		}
		fld.raw_len = (size_t)(s - p) - fld.raw_off;
		if (t->n < CSVTOK_MAX_FIELDS) {
			if (escaped) {
				if (unescape(t, fld.p, fld.len, &unq_off[t->n], &fld.len))
					return CSVTOK_NOMEM;
				n_unq++;
				fld.p = NULL; /* fixed up below, the buffer may still move */
			}
			t->f[t->n] = fld;
		}
		t->n++;
		if (s == end)
			break; /* final input: the row ends with the input */
		if (*s == ',') {
			s++;
			if (s == end) {
				if (!final)
					return CSVTOK_MORE;
				if (t->n < CSVTOK_MAX_FIELDS)
					t->f[t->n] = (struct csvtok_field){ s, 0, 1, 0,
						(size_t)(s - p), 0 };
				t->n++;
				break;
			}
			continue;
		}
		if (*s == '\r' && s + 1 == end && !final)
			return CSVTOK_MORE; /* a lone CR or the start of CR LF */
		t->row_nl += *s == '\n' || s + 1 == end || s[1] != '\n';
		s++;
		break;
	}
	for (i = 0; n_unq && i < t->n && i < CSVTOK_MAX_FIELDS; i++)
		if (!t->f[i].p)
			t->f[i].p = t->unq.p + unq_off[i];
	*used = (size_t)(s - p);
	return CSVTOK_ROW;
}

int ms__csv_sniff_text(const unsigned char *p, size_t n)
{
	const unsigned char *nl;

	n = n < 4096 ? n : 4096;
	nl = memchr(p, '\n', n);
	return !memchr(p, '\0', nl ? (size_t)(nl - p) : n);
}

/*
 * Whether the row that ms__csvtok_row took from p[0..used) (blank lines before it included; line is
 * where they start) holds a NUL byte: 1 and e saying where (line, column, field), else 0. A
 * field of text never holds one; copied on, it would cut the outputs' text short.
 */
static int has_nul(const struct memscope_source *src, const struct csvtok *t, const char *p,
	size_t used, uint64_t line, struct memscope_error *e)
{
	const char *q = memchr(p, '\0', used), *s, *bol = p;
	size_t off;
	unsigned i, field = 1;

	if (!q)
		return 0;
	off = (size_t)(q - p);
	for (s = p; s < q; s++)
		if (*s == '\n' || (*s == '\r' && s[1] != '\n'))
			line++, bol = s + 1;
	for (i = 1; i < t->n && i < CSVTOK_MAX_FIELDS && t->f[i].raw_off <= off; i++)
		field = i + 1;
	memscope_error_set(e, MEMSCOPE_E_INVALID, src->name, line,
		"NUL byte at column %zu, in field %u%s (binary data in a text file: a damaged "
		"file?)",
		(size_t)(q - bol) + 1, field, field == CSVTOK_MAX_FIELDS ? " or after it" : "");
	return 1;
}

int ms__csv_read_rows(
	struct memscope_source *src, csv_row_fn row, void *ctx, struct memscope_error *err)
{
	struct csvtok tok;
	struct memscope_error bad;
	struct window w;
	uint64_t line = 1; /* where the next row starts */
	int rc;

	memset(&tok, 0, sizeof(tok));
	rc = ms__window_open(&w, src, err);
	if (!rc && w.len >= 3 && memcmp(w.data, "\xef\xbb\xbf", 3) == 0)
		w.start = 3; /* UTF-8 byte order mark */
	while (!rc) {
		const char *p = w.data + w.start;
		uint64_t lead, from = line;
		size_t used;
		int r;

		r = ms__csvtok_row(&tok, p, w.len - w.start, w.final, &used, &lead);
		w.start += used;
		line += lead;
		if (r == CSVTOK_ROW) {
			uint64_t at = line;

			line += tok.row_nl;
			/* a row with a NUL byte is bad (skipped when lenient), never handed on */
			rc = has_nul(src, &tok, p, used, from, &bad)
				     ? ms__source_bad(src, &bad, err)
				     : row(ctx, tok.f, tok.n, at);
		} else if (r == CSVTOK_MORE) {
			rc = ms__window_fill(&w, src, CSVTOK_MAX_ROW_BYTES, err);
			if (rc == MEMSCOPE_E_INVALID)
				rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, line,
					"row longer than %zu MiB (unterminated quote?)",
					CSVTOK_MAX_ROW_BYTES >> 20);
		} else if (r == CSVTOK_END) {
			break;
		} else if (r == CSVTOK_OPEN_QUOTE) {
			rc = memscope_error_set(err, MEMSCOPE_E_TRUNCATED, src->name, line,
				"file ends inside a quoted field");
		} else {
			rc = memscope_error_set(
				err, MEMSCOPE_E_NOMEM, src->name, line, "out of memory");
		}
	}
	ms__window_close(&w);
	ms__buf_free(&tok.unq);
	return rc;
}
