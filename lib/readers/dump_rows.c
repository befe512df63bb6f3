/* The row builder of the twelve dump columns: a header bound by column names (or the columns in
 * their order), each row checked and made an event. The dump CSV and database readers feed it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "csvtok.h"
#include "reader.h"

#define MAX_FIELDS CSVTOK_MAX_FIELDS

enum col {
	COL_ID,
	COL_EVENT,
	COL_TYPE,
	COL_NAME,
	COL_TS,
	COL_PID,
	COL_TID,
	COL_DEVICE,
	COL_PTR,
	COL_ATTR,
	COL_STACK_PY,
	COL_STACK_C,
	N_COLS,
	COL_IGNORED = N_COLS,
	COL_TS_US, /* "Timestamp(us)": bound to COL_TS, sets the unit */
};

_Static_assert(N_COLS == DUMP_COLS, "reader.h's column count");

/* clang-format off */
static const char *const col_names[N_COLS] = {
	"ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id", "Thread Id",
	"Device Id", "Ptr", "Attr", "Call Stack(Python)", "Call Stack(C)",
};
/* clang-format on */

struct dump_rows {
	struct memscope_source *src;
	struct memscope_strtab *st;
	memscope_event_fn fn;
	void *ctx;
	struct memscope_error *err;
	const struct csvtok_field *f; /* the row being built: n_f fields */
	unsigned n_f;
	int have_header;
	unsigned n_header;
	unsigned char col_at[MAX_FIELDS]; /* header position -> enum col */
	int pos_of[N_COLS];		  /* enum col -> header position, -1 if absent */
	int scale_us;			  /* timestamps are microseconds */
	char last_name[128]; /* the previous Name and its id: START and END rows repeat it */
	size_t last_name_len;
	uint32_t last_name_id;
	int unit_decided;
	struct memscope_attr *attrs;
	size_t attrs_cap;
	uint32_t *frames;
	size_t frames_cap;
};

#define row_error(cs, line, ...) ms__source_bad_row((cs)->src, (cs)->err, line, __VA_ARGS__)

/* The row at line is bad for its number column what, s[0..n): invalid, or in exponent notation
 * (a spreadsheet re-saved the file: said as every reader says it). */
static int bad_number(
	struct dump_rows *cs, uint64_t line, const char *what, const char *s, size_t n)
{
	if (reader_exp_notation(s, n))
		return row_error(cs, line, "%s \"%.*s\" " READER_EXP_NOTATION, what, CLIP(n), s);
	return row_error(cs, line, "invalid %s \"%.*s\"", what, CLIP(n), s);
}

static inline const char *fstr(const struct dump_rows *cs, int col, size_t *len)
{
	int pos = cs->pos_of[col];

	if (pos < 0) {
		*len = 0;
		return "";
	}
	*len = cs->f[pos].len;
	return cs->f[pos].p;
}

/* [A-Za-z0-9_] */
/* clang-format off */
static const unsigned char key_char[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['_'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
	['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
	['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
	['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
	['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
};
/* clang-format on */

/* The keys every MALLOC/FREE row has, matched without hashing; else intern. */
static int key_id(struct memscope_strtab *st, const char *p, size_t n, uint32_t *id)
{
	switch (n) {
	case 4:
		if (memcmp(p, "addr", 4) == 0)
			return *id = MEMSCOPE_STR_ADDR, 0;
		if (memcmp(p, "size", 4) == 0)
			return *id = MEMSCOPE_STR_SIZE, 0;
		if (memcmp(p, "used", 4) == 0)
			return *id = MEMSCOPE_STR_USED, 0;
		if (memcmp(p, "type", 4) == 0)
			return *id = MEMSCOPE_STR_TYPE, 0;
		break;
	case 5:
		if (memcmp(p, "total", 5) == 0)
			return *id = MEMSCOPE_STR_TOTAL, 0;
		break;
	case 13:
		if (memcmp(p, "allocation_id", 13) == 0)
			return *id = MEMSCOPE_STR_ALLOCATION_ID, 0;
		break;
	}
	return memscope_strtab_intern(st, p, n, id);
}

/* Length of a `key:` starting at s (key chars then a colon), 0 if there is none. */
static size_t key_len(const char *s, const char *end)
{
	const char *p = s;

	while (p < end && key_char[(unsigned char)*p])
		p++;
	if (p == s || p == end || *p != ':')
		return 0;
	return (size_t)(p - s);
}

static int push_attr(
	struct dump_rows *cs, struct memscope_event *ev, uint32_t key, const char *val, size_t len)
{
	if (ms__grow_array(&cs->attrs, &cs->attrs_cap, ev->n_attrs + 1, sizeof(*cs->attrs)))
		return MEMSCOPE_E_NOMEM;
	cs->attrs[ev->n_attrs++] = (struct memscope_attr){ key, (uint32_t)len, val };
	ev->attrs = cs->attrs;
	return 0;
}

/*
 * Attr "{k:v,k:v}" (quotes already removed by the CSV layer): a value runs up to the next
 * ",key:" (formats/dump-csv.md "Reading"), so "shape:torch.Size([2, 3])" and "a,b" values survive.
 * Text that is not in that shape is kept whole as one raw attr.
 */
static int parse_attrs(struct dump_rows *cs, struct memscope_event *ev, const char *s, size_t n)
{
	const char *p, *end;

	ev->flags |= MEMSCOPE_EV_ATTR;
	if (n < 2 || s[0] != '{' || s[n - 1] != '}' || (n > 2 && !key_len(s + 1, s + n - 1)))
		goto raw;
	p = s + 1;
	end = s + n - 1;
	while (p < end) {
		size_t kl = key_len(p, end);
		const char *v = p + kl + 1, *q = v;
		uint32_t key;

		if (!kl)
			goto raw;
		for (;;) {
			q = memchr(q, ',', (size_t)(end - q));
			if (!q || key_len(q + 1, end))
				break;
			q++;
		}
		if (!q)
			q = end;
		if (key_id(cs->st, p, kl, &key) || push_attr(cs, ev, key, v, (size_t)(q - v)))
			return MEMSCOPE_E_NOMEM;
		p = q < end ? q + 1 : end;
	}
	return 0;
raw:
	ev->n_attrs = 0;
	ev->flags |= MEMSCOPE_EV_ATTR_RAW;
	return push_attr(cs, ev, MEMSCOPE_STR_EMPTY, s, n);
}

/* Intern a call stack field: frames split on '\n' (a '\r' before it is dropped: CRLF files). */
static int parse_stack(struct dump_rows *cs, const char *s, size_t n, uint32_t *id)
{
	const char *p = s, *end = s + n;
	size_t nf = 0;

	for (;;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *fe = nl ? nl : end;
		uint32_t fid;

		if (nl && fe > p && fe[-1] == '\r')
			fe--;
		if (ms__grow_array(&cs->frames, &cs->frames_cap, nf + 1, sizeof(*cs->frames)))
			return MEMSCOPE_E_NOMEM;
		if (memscope_strtab_intern(cs->st, p, (size_t)(fe - p), &fid))
			return MEMSCOPE_E_NOMEM;
		cs->frames[nf++] = fid;
		if (!nl)
			break;
		p = nl + 1;
	}
	return memscope_strtab_intern_stack(cs->st, cs->frames, nf, id);
}

static int parse_na_u64(const char *s, size_t n, uint64_t *v)
{
	if (n == 3 && memcmp(s, "N/A", 3) == 0) {
		*v = MEMSCOPE_ID_NONE;
		return 0;
	}
	return ms__parse_u64(s, n, v) || *v == MEMSCOPE_ID_NONE ? -1 : 0;
}

/* The column a header name s[0..n) names: an enum col, COL_TS_US or COL_IGNORED. */
static unsigned col_of(const char *s, size_t n)
{
	unsigned c;

	for (c = 0; c < N_COLS; c++)
		if (strlen(col_names[c]) == n && memcmp(col_names[c], s, n) == 0)
			return c;
	return n == 13 && memcmp(s, "Timestamp(us)", 13) == 0 ? COL_TS_US : COL_IGNORED;
}

static int header_row(struct dump_rows *cs, uint64_t line)
{
	unsigned i, c;

	if (cs->n_f > MAX_FIELDS)
		return memscope_error_set(cs->err, MEMSCOPE_E_INVALID, cs->src->name, line,
			"not a memscope_dump CSV: header has %u columns", cs->n_f);
	for (c = 0; c < N_COLS; c++)
		cs->pos_of[c] = -1;
	for (i = 0; i < cs->n_f; i++) {
		const char *s = cs->f[i].p;
		size_t n = cs->f[i].len;
		unsigned col = col_of(s, n);

		if (col == COL_TS_US) {
			col = COL_TS;
			if (cs->src->opts.time_unit == MEMSCOPE_TIME_AUTO) {
				cs->scale_us = 1;
				cs->unit_decided = 1;
			}
		}
		if (col < N_COLS) {
			if (cs->pos_of[col] >= 0)
				return memscope_error_set(cs->err, MEMSCOPE_E_INVALID,
					cs->src->name, line, "duplicate column '%.*s' in header",
					CLIP(n), s);
			cs->pos_of[col] = (int)i;
		} else {
			cs->src->stats.n_ignored_columns++;
		}
		cs->col_at[i] = (unsigned char)col;
	}
	for (c = 0; c <= COL_ATTR; c++)
		if (cs->pos_of[c] < 0) {
			const char *s = cs->n_f ? cs->f[0].p : "";
			size_t n = cs->n_f ? cs->f[0].len : 0;

			return memscope_error_set(cs->err, MEMSCOPE_E_INVALID, cs->src->name, line,
				"not a memscope_dump CSV: header has no '%s' column (starts "
				"'%.*s')",
				col_names[c], CLIP(n), s);
		}
	cs->n_header = cs->n_f;
	cs->have_header = 1;
	return 0;
}

static int data_row(struct dump_rows *cs, uint64_t line)
{
	struct memscope_event ev;
	const struct memscope_attr *bad_attr = NULL;
	const char *s, *msg;
	size_t n;
	uint64_t u;
	int rc;

	if (cs->n_f != cs->n_header)
		return row_error(cs, line, "expected %u fields, found %u%s", cs->n_header, cs->n_f,
			cs->n_f > MAX_FIELDS ? " or more" : "");
	memset(&ev, 0, sizeof(ev));
	ev.src = cs->src->opts.src;
	ev.line = line;
	ev.attrs = cs->attrs;

	s = fstr(cs, COL_ID, &n);
	if (ms__parse_u64(s, n, &ev.id))
		return bad_number(cs, line, "ID", s, n);

	s = fstr(cs, COL_EVENT, &n);
	ev.kind = (uint16_t)memscope_kind_parse(s, n);
	if (!ev.kind) {
		if (n == 0)
			return row_error(cs, line, "empty Event");
		if (memscope_strtab_intern(cs->st, s, n, &ev.kind_text))
			goto nomem;
		cs->src->stats.n_unknown_kind++;
	}
	s = fstr(cs, COL_TYPE, &n);
	ev.subtype = (uint16_t)memscope_subtype_parse(s, n);
	if (!ev.subtype) {
		if (memscope_strtab_intern(cs->st, s, n, &ev.subtype_text))
			goto nomem;
		cs->src->stats.n_unknown_kind++;
	}

	s = fstr(cs, COL_NAME, &n);
	if (n == 3 && memcmp(s, "N/A", 3) == 0)
		ev.name = MEMSCOPE_STR_NA;
	else if (n && n == cs->last_name_len && memcmp(s, cs->last_name, n) == 0)
		ev.name = cs->last_name_id;
	else if (memscope_strtab_intern(cs->st, s, n, &ev.name))
		goto nomem;
	else if (n <= sizeof(cs->last_name)) {
		memcpy(cs->last_name, s, n);
		cs->last_name_len = n;
		cs->last_name_id = ev.name;
	}
	if (cs->f[cs->pos_of[COL_NAME]].quoted)
		ev.flags |= MEMSCOPE_EV_NAME_QUOTED; /* the reference quotes MSTX names */

	s = fstr(cs, COL_TS, &n);
	if (ms__parse_u64(s, n, &u))
		return bad_number(cs, line, "Timestamp", s, n);
	if (!cs->unit_decided) {
		/* µs since the epoch has 15-17 digits in our era, ns 18-19 (formats/dump-csv.md) */
		if (cs->src->opts.time_unit == MEMSCOPE_TIME_US ||
			(cs->src->opts.time_unit == MEMSCOPE_TIME_AUTO && u >= 100000000000000ull &&
				u < 100000000000000000ull))
			cs->scale_us = 1;
		cs->unit_decided = 1;
		cs->src->stats.layout =
			cs->scale_us ? MEMSCOPE_LAYOUT_LEGACY : MEMSCOPE_LAYOUT_CURRENT;
	}
	if (cs->scale_us) {
		if (u > UINT64_MAX / 1000)
			return row_error(cs, line,
				"Timestamp \"%.*s\" out of range for microseconds", CLIP(n), s);
		u *= 1000;
	}
	ev.ts_ns = u;

	s = fstr(cs, COL_PID, &n);
	if (parse_na_u64(s, n, &ev.pid))
		return bad_number(cs, line, "Process Id", s, n);
	s = fstr(cs, COL_TID, &n);
	if (parse_na_u64(s, n, &ev.tid))
		return bad_number(cs, line, "Thread Id", s, n);

	s = fstr(cs, COL_DEVICE, &n);
	if (n == 3 && memcmp(s, "N/A", 3) == 0)
		ev.device = MEMSCOPE_DEVICE_NONE;
	else if ((n == 3 && memcmp(s, "cpu", 3) == 0) || (n == 4 && memcmp(s, "host", 4) == 0))
		ev.device = MEMSCOPE_DEVICE_HOST;
	else if (ms__parse_u64(s, n, &u) == 0 && u <= INT32_MAX)
		ev.device = (int32_t)u;
	else
		return bad_number(cs, line, "Device Id", s, n);

	s = fstr(cs, COL_PTR, &n);
	if (n == 3 && memcmp(s, "N/A", 3) == 0) {
		/* no pointer */
	} else if ((n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
			   ms__parse_hex64(s + 2, n - 2, &ev.ptr) == 0) ||
		   ms__parse_u64(s, n, &ev.ptr) == 0) {
		ev.flags |= MEMSCOPE_EV_PTR;
	} else {
		return bad_number(cs, line, "Ptr", s, n);
	}

	ms__event_set_pool(&ev, cs->st);
	s = fstr(cs, COL_ATTR, &n);
	if (n) {
		if (parse_attrs(cs, &ev, s, n))
			goto nomem;
		ev.attrs = cs->attrs;
		if (!(ev.flags & MEMSCOPE_EV_ATTR_RAW) &&
			(msg = ms__event_type_attrs(&ev, &bad_attr)))
			return row_error(cs, line, "%s \"%.*s\"", msg, CLIP(bad_attr->val_len),
				bad_attr->val);
	} else if (cs->pos_of[COL_ATTR] >= 0 && !cs->f[cs->pos_of[COL_ATTR]].null) {
		/* a quoted empty Attr: keep it as a raw empty attr */
		ev.flags |= MEMSCOPE_EV_ATTR | MEMSCOPE_EV_ATTR_RAW;
		if (push_attr(cs, &ev, MEMSCOPE_STR_EMPTY, s, 0))
			goto nomem;
	}

	s = fstr(cs, COL_STACK_PY, &n);
	if ((n || (cs->pos_of[COL_STACK_PY] >= 0 && !cs->f[cs->pos_of[COL_STACK_PY]].null)) &&
		parse_stack(cs, s, n, &ev.stack_py))
		goto nomem;
	s = fstr(cs, COL_STACK_C, &n);
	if ((n || (cs->pos_of[COL_STACK_C] >= 0 && !cs->f[cs->pos_of[COL_STACK_C]].null)) &&
		parse_stack(cs, s, n, &ev.stack_c))
		goto nomem;

	rc = source_deliver(cs->src, cs->fn, cs->ctx, &ev);
	if (rc && rc != MEMSCOPE_E_NOMEM)
		memscope_error_set(cs->err, rc, cs->src->name, line, "%s", memscope_strerror(rc));
	return rc;
nomem:
	return memscope_error_set(cs->err, MEMSCOPE_E_NOMEM, cs->src->name, line, "out of memory");
}

int ms__dump_rows_header_like(const unsigned char *p, size_t n, int eof)
{
	const char *s = (const char *)p, *end;
	unsigned found = 0;

	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3, n -= 3;
	end = s + n;
	while (s < end && (*s == '\n' || *s == '\r')) /* blank lines, as the tokenizer skips */
		s++;
	while (s < end && *s != '\n' && *s != '\r') {
		const char *e = s;
		size_t len;

		while (e < end && *e != ',' && *e != '\n' && *e != '\r')
			e++;
		len = (size_t)(e - s);
		if (len >= 2 && s[0] == '"' && s[len - 1] == '"')
			s++, len -= 2;
		found += col_of(s, len) != COL_IGNORED;
		s = e < end && *e == ',' ? e + 1 : e;
	}
	/* a first line longer than what was peeked: the header's reader decides */
	return found >= 3 || (s == end && !eof);
}

int ms__dump_rows_new(struct dump_rows **out, struct memscope_source *src, memscope_event_fn fn,
	void *ctx, struct memscope_error *err)
{
	struct dump_rows *cs = calloc(1, sizeof(*cs));

	*out = cs;
	if (!cs)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	cs->src = src;
	cs->st = src->st;
	cs->fn = fn;
	cs->ctx = ctx;
	cs->err = err;
	if (src->opts.time_unit != MEMSCOPE_TIME_AUTO) {
		cs->scale_us = src->opts.time_unit == MEMSCOPE_TIME_US;
		cs->unit_decided = 1;
		src->stats.layout = cs->scale_us ? MEMSCOPE_LAYOUT_LEGACY : MEMSCOPE_LAYOUT_CURRENT;
	}
	return 0;
}

void ms__dump_rows_fixed(struct dump_rows *cs)
{
	unsigned c;

	cs->unit_decided = 1;
	cs->scale_us = 0;
	cs->src->stats.layout = MEMSCOPE_LAYOUT_CURRENT;
	for (c = 0; c < N_COLS; c++) {
		cs->pos_of[c] = (int)c;
		cs->col_at[c] = (unsigned char)c;
	}
	cs->n_header = N_COLS;
	cs->have_header = 1;
}

int ms__dump_rows_have_header(const struct dump_rows *cs)
{
	return cs->have_header;
}

int ms__dump_rows_header(
	struct dump_rows *cs, const struct csvtok_field *f, unsigned n, uint64_t line)
{
	cs->f = f;
	cs->n_f = n;
	return header_row(cs, line);
}

int ms__dump_rows_row(struct dump_rows *cs, const struct csvtok_field *f, unsigned n, uint64_t line)
{
	cs->f = f;
	cs->n_f = n;
	return data_row(cs, line);
}

void ms__dump_rows_free(struct dump_rows *cs)
{
	if (!cs)
		return;
	free(cs->attrs);
	free(cs->frames);
	free(cs);
}
