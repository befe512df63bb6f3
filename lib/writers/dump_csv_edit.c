/* A dump CSV copied byte for byte but for the Attr of chosen rows (memscope_dump_copy_edit). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../readers/csvtok.h"
#include "../readers/input.h"
#include "memscope/dump_csv.h"

struct copy {
	struct memscope_source *src;
	FILE *out;
	struct memscope_error *err;
	struct buf attr; /* the new Attr field */
	int attr_col, id_col, pid_col;
	unsigned n_header; /* fields of the header, which every good row has */
	const struct memscope_attr_edit *edits;
	size_t n_edits, k; /* edits before k have found their rows */
};

static int put(struct copy *c, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, c->out) != n)
		return memscope_error_set(
			c->err, MEMSCOPE_E_IO, NULL, 0, "write failed: %s", strerror(errno));
	return 0;
}

static int field_is(const struct csvtok *t, unsigned i, const char *name)
{
	return i < CSVTOK_MAX_FIELDS && t->f[i].len == strlen(name) &&
	       memcmp(t->f[i].p, name, t->f[i].len) == 0;
}

/* Where an attr key starts in s[0..n): at 0 or after a ',', followed by ':'. n when absent. */
static size_t find_key(const char *s, size_t n, const char *key)
{
	size_t k = strlen(key), i;

	for (i = 0; i + k < n; i++)
		if ((i == 0 || s[i - 1] == ',') && memcmp(s + i, key, k) == 0 && s[i + k] == ':')
			return i;
	return n;
}

/* End of the value starting at s[i]: the next ",word:" (the dump's attr rule) or n. */
static size_t value_end(const char *s, size_t n, size_t i)
{
	for (; i < n; i++) {
		size_t j = i + 1;

		if (s[i] != ',')
			continue;
		while (j < n &&
			(s[j] == '_' || (s[j] >= 'a' && s[j] <= 'z') ||
				(s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= '0' && s[j] <= '9')))
			j++;
		if (j > i + 1 && j < n && s[j] == ':')
			return i;
	}
	return n;
}

/* s[0..n) into b (room reserved) with quotes doubled, as inside a quoted field */
static void put_quoted(struct buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '"')
			b->p[b->len++] = '"';
		b->p[b->len++] = s[i];
	}
}

/* The Attr field f with e's key set, quoted, into c->attr. 0 or NOMEM. */
static int build_attr(
	struct copy *c, const struct csvtok_field *f, const struct memscope_attr_edit *e)
{
	const char *s = f->p;
	size_t n = f->len, klen = strlen(e->key), at, end;
	struct buf *b = &c->attr;

	if (n >= 2 && s[0] == '{' && s[n - 1] == '}') {
		s++;
		n -= 2;
	}
	at = find_key(s, n, e->key);
	end = at < n ? value_end(s, n, at + klen + 1) : n;
	b->len = 0;
	if (ms__buf_reserve(b, 2 * (n + e->val_len) + klen + 8))
		return MEMSCOPE_E_NOMEM;
	b->p[b->len++] = '"';
	b->p[b->len++] = '{';
	put_quoted(b, s, at);
	if (at == n && n)
		b->p[b->len++] = ',';
	memcpy(b->p + b->len, e->key, klen);
	b->len += klen;
	b->p[b->len++] = ':';
	put_quoted(b, e->val, e->val_len);
	put_quoted(b, s + end, n - end);
	b->p[b->len++] = '}';
	b->p[b->len++] = '"';
	return 0;
}

static int missing(struct copy *c, const struct memscope_attr_edit *e)
{
	return memscope_error_set(c->err, MEMSCOPE_E_INVALID, c->src->name, e->line,
		"no row with ID %" PRIu64
		" starts on this line (is this the file that was analysed?)",
		e->event_id);
}

/* Every edit of a line before `line` must have found its row. */
static int passed(struct copy *c, uint64_t line)
{
	if (c->k < c->n_edits && c->edits[c->k].line < line)
		return missing(c, &c->edits[c->k]);
	return 0;
}

static int field_u64(const struct csvtok *t, int col, uint64_t *v)
{
	const struct csvtok_field *f = &t->f[col];

	if (col < 0 || (unsigned)col >= t->n)
		return -1;
	if (f->len == 3 && memcmp(f->p, "N/A", 3) == 0) {
		*v = MEMSCOPE_ID_NONE;
		return 0;
	}
	return ms__parse_u64(f->p, f->len, v);
}

/*
 * The edit of the row in t, which starts on `line`: the next edit, if it is of that line, ID and
 * process. (Lines count line feeds: rows ended by a lone CR can share one.)
 */
static const struct memscope_attr_edit *edit_of(
	struct copy *c, const struct csvtok *t, uint64_t line)
{
	const struct memscope_attr_edit *e = c->k < c->n_edits ? &c->edits[c->k] : NULL;
	uint64_t id, pid;

	/* a bad row the reader skipped can share the line, the ID and the process */
	if (!e || e->line != line || t->n != c->n_header || field_u64(t, c->id_col, &id) ||
		id != e->event_id || field_u64(t, c->pid_col, &pid) || pid != e->pid)
		return NULL;
	c->k++;
	return e;
}

/* One data row at p[0..used) starting on `line`, edited when e is its edit. */
static int copy_row(struct copy *c, const struct csvtok *t, const char *p, size_t used,
	uint64_t line, const struct memscope_attr_edit *e)
{
	const struct csvtok_field *f;
	int rc;

	if (!e)
		return put(c, p, used);
	if (c->attr_col < 0 || (unsigned)c->attr_col >= t->n)
		return memscope_error_set(c->err, MEMSCOPE_E_INVALID, c->src->name, line,
			"the row to annotate has no Attr field");
	f = &t->f[c->attr_col];
	if ((rc = build_attr(c, f, e)))
		return memscope_error_set(c->err, rc, c->src->name, line, "out of memory");
	if ((rc = put(c, p, f->raw_off)) || (rc = put(c, c->attr.p, c->attr.len)))
		return rc;
	return put(c, p + f->raw_off + f->raw_len, used - f->raw_off - f->raw_len);
}

int memscope_dump_copy_edit(struct memscope_source *src, const struct memscope_attr_edit *edits,
	size_t n_edits, FILE *out, struct memscope_error *err)
{
	struct copy c = { src, out, err, { NULL, 0, 0 }, -1, -1, -1, 0, edits, n_edits, 0 };
	struct csvtok tok;
	struct window w;
	uint64_t line = 1;
	int rc, have_header = 0;

	memset(&tok, 0, sizeof(tok));
	memset(&w, 0, sizeof(w));
	if (src->format != MEMSCOPE_FORMAT_DUMP_CSV)
		return memscope_error_set(err, MEMSCOPE_E_UNSUPPORTED, src->name, 0,
			"only dump CSV files can be annotated, this is a %s file",
			memscope_format_name(src->format));
	if (src->read_done)
		return memscope_error_set(
			err, MEMSCOPE_E_ARG, src->name, 0, "the source has been read already");
	src->read_done = 1;
	if ((rc = ms__window_open(&w, src, err)))
		goto out;
	if (w.len >= 3 && memcmp(w.data, "\xef\xbb\xbf", 3) == 0) {
		rc = put(&c, w.data, 3); /* the byte order mark, kept */
		w.start = 3;
	}
	while (!rc) {
		const char *p = w.data + w.start;
		size_t used;
		uint64_t lead;
		int r = ms__csvtok_row(&tok, p, w.len - w.start, w.final, &used, &lead);

		line += lead;
		if (r == CSVTOK_ROW) {
			unsigned i;

			if ((rc = passed(&c, line)))
				break;
			if (have_header) {
				rc = copy_row(&c, &tok, p, used, line, edit_of(&c, &tok, line));
			} else {
				for (i = 0; i < tok.n && i < CSVTOK_MAX_FIELDS; i++) {
					if (field_is(&tok, i, "Attr"))
						c.attr_col = (int)i;
					if (field_is(&tok, i, "ID"))
						c.id_col = (int)i;
					if (field_is(&tok, i, "Process Id"))
						c.pid_col = (int)i;
				}
				c.n_header = tok.n;
				have_header = 1;
				rc = put(&c, p, used);
			}
			line += tok.row_nl;
			w.start += used;
			continue;
		}
		if ((rc = put(&c, p, used)))
			break;
		w.start += used;
		if (r == CSVTOK_MORE)
			rc = ms__window_fill(&w, src, CSVTOK_MAX_ROW_BYTES, err);
		else if (r == CSVTOK_END)
			break;
		else if (r == CSVTOK_OPEN_QUOTE)
			rc = memscope_error_set(err, MEMSCOPE_E_TRUNCATED, src->name, line,
				"file ends inside a quoted field");
		else
			rc = memscope_error_set(
				err, MEMSCOPE_E_NOMEM, src->name, line, "out of memory");
	}
	if (!rc)
		rc = passed(&c, UINT64_MAX);
out:
	ms__window_close(&w);
	ms__buf_free(&tok.unq);
	ms__buf_free(&c.attr);
	return rc;
}
