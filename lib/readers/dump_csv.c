/* Streaming reader of msMemScope memscope_dump CSV files (current and legacy layouts) on libcsv. */
#include <csv.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "reader.h"

#define MAX_FIELDS 64
#define MAX_FIELD_BYTES (64u << 20) /* one field longer than this is an unterminated quote */
#define LIBCSV_FIELD_BEGUN 2        /* libcsv's parser state "inside a field" (libcsv.c) */

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

static const char *const col_names[N_COLS] = {
	"ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id", "Thread Id",
	"Device Id", "Ptr", "Attr", "Call Stack(Python)", "Call Stack(C)",
};

struct field {
	size_t off;
	size_t len;
	int null; /* empty and unquoted */
};

struct csv_state {
	struct memscope_source *src;
	struct memscope_strtab *st;
	memscope_event_fn fn;
	void *ctx;
	struct memscope_error *err;
	struct csv_parser parser;
	int rc;           /* first error / stop status; once set, callbacks do nothing */
	struct buf row;   /* bytes of the current row's fields */
	struct field fields[MAX_FIELDS];
	unsigned n_fields; /* may exceed MAX_FIELDS (counted, not stored) */
	uint64_t row_nl;  /* newlines inside the current row's quoted fields */
	uint64_t line;    /* line where the next row starts */
	int have_header;
	unsigned n_header;
	unsigned char col_at[MAX_FIELDS]; /* header position -> enum col */
	int pos_of[N_COLS];               /* enum col -> header position, -1 if absent */
	int scale_us;     /* timestamps are microseconds */
	int unit_decided;
	struct memscope_attr *attrs;
	size_t attrs_cap;
	uint32_t *frames;
	size_t frames_cap;
};

static int row_error(struct csv_state *cs, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int row_error(struct csv_state *cs, uint64_t line, const char *fmt, ...)
{
	struct memscope_error e;
	va_list ap;

	memscope_error_clear(&e);
	e.code = MEMSCOPE_E_INVALID;
	e.line = line;
	snprintf(e.file, sizeof(e.file), "%s", cs->src->name);
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	return source_bad(cs->src, &e, cs->err);
}

static void on_field(void *data, size_t len, void *vcs)
{
	struct csv_state *cs = vcs;
	struct field *f;

	if (cs->rc)
		return;
	if (cs->n_fields >= MAX_FIELDS) {
		cs->n_fields++;
		return;
	}
	f = &cs->fields[cs->n_fields++];
	f->off = cs->row.len;
	f->len = len;
	f->null = data == NULL;
	if (len) {
		const char *p = data, *end = p + len;

		while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			cs->row_nl++;
			p++;
		}
		if (buf_append(&cs->row, data, len))
			cs->rc = memscope_error_set(cs->err, MEMSCOPE_E_NOMEM, cs->src->name,
				cs->line, "out of memory");
	}
}

static inline const char *fstr(const struct csv_state *cs, int col, size_t *len)
{
	int pos = cs->pos_of[col];

	if (pos < 0) {
		*len = 0;
		return "";
	}
	*len = cs->fields[pos].len;
	return cs->row.p + cs->fields[pos].off;
}

static int is_key_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_';
}

/* Length of a `key:` starting at s (key chars then a colon), 0 if there is none. */
static size_t key_len(const char *s, const char *end)
{
	const char *p = s;

	while (p < end && is_key_char((unsigned char)*p))
		p++;
	if (p == s || p == end || *p != ':')
		return 0;
	return (size_t)(p - s);
}

static int push_attr(struct csv_state *cs, struct memscope_event *ev, uint32_t key,
	const char *val, size_t len)
{
	if (grow_array(&cs->attrs, &cs->attrs_cap, ev->n_attrs + 1, sizeof(*cs->attrs)))
		return MEMSCOPE_E_NOMEM;
	cs->attrs[ev->n_attrs++] = (struct memscope_attr){ key, (uint32_t)len, val };
	ev->attrs = cs->attrs;
	return 0;
}

/*
 * Attr "{k:v,k:v}" (quotes already removed by the CSV layer): a value runs up to the next
 * ",key:" (msmemscope.md §2.3), so "shape:torch.Size([2, 3])" and "a,b" values survive.
 * Text that is not in that shape is kept whole as one raw attr.
 */
static int parse_attrs(struct csv_state *cs, struct memscope_event *ev, const char *s,
	size_t n)
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
		if (memscope_strtab_intern(cs->st, p, kl, &key) ||
			push_attr(cs, ev, key, v, (size_t)(q - v)))
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
static int parse_stack(struct csv_state *cs, const char *s, size_t n, uint32_t *id)
{
	const char *p = s, *end = s + n;
	size_t nf = 0;

	for (;;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *fe = nl ? nl : end;
		uint32_t fid;

		if (nl && fe > p && fe[-1] == '\r')
			fe--;
		if (grow_array(&cs->frames, &cs->frames_cap, nf + 1, sizeof(*cs->frames)))
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
	return parse_u64(s, n, v) || *v == MEMSCOPE_ID_NONE ? -1 : 0;
}

#define CLIP(n) ((int)((n) > 40 ? 40 : (n)))

static int header_row(struct csv_state *cs, uint64_t line)
{
	unsigned i, c;

	if (cs->n_fields > MAX_FIELDS)
		return memscope_error_set(cs->err, MEMSCOPE_E_INVALID, cs->src->name, line,
			"not a memscope_dump CSV: header has %u columns", cs->n_fields);
	for (c = 0; c < N_COLS; c++)
		cs->pos_of[c] = -1;
	for (i = 0; i < cs->n_fields; i++) {
		const char *s = cs->row.p + cs->fields[i].off;
		size_t n = cs->fields[i].len;
		unsigned col = COL_IGNORED;

		for (c = 0; c < N_COLS; c++)
			if (strlen(col_names[c]) == n && memcmp(col_names[c], s, n) == 0)
				col = c;
		if (n == 13 && memcmp(s, "Timestamp(us)", 13) == 0) {
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
			const char *s = cs->n_fields ? cs->row.p + cs->fields[0].off : "";
			size_t n = cs->n_fields ? cs->fields[0].len : 0;

			return memscope_error_set(cs->err, MEMSCOPE_E_INVALID, cs->src->name,
				line,
				"not a memscope_dump CSV: header has no '%s' column (starts '%.*s')",
				col_names[c], CLIP(n), s);
		}
	cs->n_header = cs->n_fields;
	cs->have_header = 1;
	return 0;
}

static int data_row(struct csv_state *cs, uint64_t line)
{
	struct memscope_event ev;
	const struct memscope_attr *bad_attr = NULL;
	const char *s, *msg;
	size_t n;
	uint64_t u;
	int rc;

	if (cs->n_fields != cs->n_header)
		return row_error(cs, line, "expected %u fields, found %u%s", cs->n_header,
			cs->n_fields, cs->n_fields > MAX_FIELDS ? " or more" : "");
	memset(&ev, 0, sizeof(ev));
	ev.src = cs->src->opts.src;
	ev.line = line;
	ev.attrs = cs->attrs;

	s = fstr(cs, COL_ID, &n);
	if (parse_u64(s, n, &ev.id))
		return row_error(cs, line, "invalid ID \"%.*s\"", CLIP(n), s);

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
	if ((ev.kind == MEMSCOPE_KIND_MALLOC || ev.kind == MEMSCOPE_KIND_FREE) &&
		memscope_subtype_is_pool(ev.subtype))
		ev.pool = ev.subtype;

	s = fstr(cs, COL_NAME, &n);
	if (n == 3 && memcmp(s, "N/A", 3) == 0)
		ev.name = MEMSCOPE_STR_NA;
	else if (memscope_strtab_intern(cs->st, s, n, &ev.name))
		goto nomem;
	if (ev.kind == MEMSCOPE_KIND_MSTX)
		ev.flags |= MEMSCOPE_EV_NAME_QUOTED;

	s = fstr(cs, COL_TS, &n);
	if (parse_u64(s, n, &u))
		return row_error(cs, line, "invalid Timestamp \"%.*s\"", CLIP(n), s);
	if (!cs->unit_decided) {
		/* µs since the epoch has 15-17 digits in our era, ns 18-19 (formats/dump-csv.md) */
		if (cs->src->opts.time_unit == MEMSCOPE_TIME_US ||
			(cs->src->opts.time_unit == MEMSCOPE_TIME_AUTO && u >= 100000000000000ull &&
				u < 100000000000000000ull))
			cs->scale_us = 1;
		cs->unit_decided = 1;
		cs->src->stats.layout = cs->scale_us ? MEMSCOPE_LAYOUT_LEGACY : MEMSCOPE_LAYOUT_CURRENT;
	}
	if (cs->scale_us) {
		if (u > UINT64_MAX / 1000)
			return row_error(cs, line, "Timestamp \"%.*s\" out of range for microseconds",
				CLIP(n), s);
		u *= 1000;
	}
	ev.ts_ns = u;

	s = fstr(cs, COL_PID, &n);
	if (parse_na_u64(s, n, &ev.pid))
		return row_error(cs, line, "invalid Process Id \"%.*s\"", CLIP(n), s);
	s = fstr(cs, COL_TID, &n);
	if (parse_na_u64(s, n, &ev.tid))
		return row_error(cs, line, "invalid Thread Id \"%.*s\"", CLIP(n), s);

	s = fstr(cs, COL_DEVICE, &n);
	if (n == 3 && memcmp(s, "N/A", 3) == 0)
		ev.device = MEMSCOPE_DEVICE_NONE;
	else if ((n == 3 && memcmp(s, "cpu", 3) == 0) || (n == 4 && memcmp(s, "host", 4) == 0))
		ev.device = MEMSCOPE_DEVICE_HOST;
	else if (parse_u64(s, n, &u) == 0 && u <= INT32_MAX)
		ev.device = (int32_t)u;
	else
		return row_error(cs, line, "invalid Device Id \"%.*s\"", CLIP(n), s);

	s = fstr(cs, COL_PTR, &n);
	if (n == 3 && memcmp(s, "N/A", 3) == 0) {
		/* no pointer */
	} else if ((n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
			   parse_hex64(s + 2, n - 2, &ev.ptr) == 0) ||
		parse_u64(s, n, &ev.ptr) == 0) {
		ev.flags |= MEMSCOPE_EV_PTR;
	} else {
		return row_error(cs, line, "invalid Ptr \"%.*s\"", CLIP(n), s);
	}

	s = fstr(cs, COL_ATTR, &n);
	if (n) {
		if (parse_attrs(cs, &ev, s, n))
			goto nomem;
		ev.attrs = cs->attrs;
		if (!(ev.flags & MEMSCOPE_EV_ATTR_RAW) && (msg = event_type_attrs(&ev, &bad_attr)))
			return row_error(cs, line, "%s \"%.*s\"", msg, CLIP(bad_attr->val_len),
				bad_attr->val);
	} else if (cs->pos_of[COL_ATTR] >= 0 && !cs->fields[cs->pos_of[COL_ATTR]].null) {
		/* a quoted empty Attr: keep it as a raw empty attr */
		ev.flags |= MEMSCOPE_EV_ATTR | MEMSCOPE_EV_ATTR_RAW;
		if (push_attr(cs, &ev, MEMSCOPE_STR_EMPTY, s, 0))
			goto nomem;
	}

	s = fstr(cs, COL_STACK_PY, &n);
	if ((n || (cs->pos_of[COL_STACK_PY] >= 0 && !cs->fields[cs->pos_of[COL_STACK_PY]].null)) &&
		parse_stack(cs, s, n, &ev.stack_py))
		goto nomem;
	s = fstr(cs, COL_STACK_C, &n);
	if ((n || (cs->pos_of[COL_STACK_C] >= 0 && !cs->fields[cs->pos_of[COL_STACK_C]].null)) &&
		parse_stack(cs, s, n, &ev.stack_c))
		goto nomem;

	rc = source_deliver(cs->src, cs->fn, cs->ctx, &ev);
	if (rc && rc != MEMSCOPE_E_NOMEM)
		memscope_error_set(cs->err, rc, cs->src->name, line, "%s", memscope_strerror(rc));
	return rc;
nomem:
	return memscope_error_set(cs->err, MEMSCOPE_E_NOMEM, cs->src->name, line, "out of memory");
}

static void on_row(int c, void *vcs)
{
	struct csv_state *cs = vcs;
	uint64_t line = cs->line;

	if (cs->rc)
		return;
	if (cs->n_fields == 0) {
		/* a blank line (libcsv reports every line end with CSV_REPALL_NL) */
		if (c == '\n')
			cs->line++;
		return;
	}
	cs->line += cs->row_nl + (c == '\n');
	if (!cs->have_header)
		cs->rc = header_row(cs, line);
	else
		cs->rc = data_row(cs, line);
	cs->n_fields = 0;
	cs->row.len = 0;
	cs->row_nl = 0;
}

static int no_space(unsigned char c)
{
	(void)c;
	return 0;
}

int dump_csv_read(struct memscope_source *src, memscope_event_fn fn, void *ctx,
	struct memscope_error *err)
{
	struct csv_state cs;
	const unsigned char *p;
	size_t n;
	int r, first = 1;

	memset(&cs, 0, sizeof(cs));
	cs.src = src;
	cs.st = src->st;
	cs.fn = fn;
	cs.ctx = ctx;
	cs.err = err;
	cs.line = 1;
	if (src->opts.time_unit != MEMSCOPE_TIME_AUTO) {
		cs.scale_us = src->opts.time_unit == MEMSCOPE_TIME_US;
		cs.unit_decided = 1;
		src->stats.layout = cs.scale_us ? MEMSCOPE_LAYOUT_LEGACY : MEMSCOPE_LAYOUT_CURRENT;
	}
	/* the row buffer always exists, so field offsets never apply to a NULL pointer */
	if (csv_init(&cs.parser, CSV_REPALL_NL | CSV_EMPTY_IS_NULL))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	if (buf_reserve(&cs.row, 4096))
		cs.rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	/* keep leading and trailing blanks of unquoted fields: no trimming */
	csv_set_space_func(&cs.parser, no_space);
	csv_set_blk_size(&cs.parser, 64 * 1024);
	while (!cs.rc && (r = source_chunk(src, &p, &n, err)) != 0) {
		if (r < 0) {
			cs.rc = r;
			break;
		}
		if (first && n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
			p += 3;
			n -= 3;
		}
		first = 0;
		if (csv_parse(&cs.parser, p, n, on_field, on_row, &cs) != n && !cs.rc)
			cs.rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, cs.line,
				"%s", csv_strerror(csv_error(&cs.parser)));
		if (!cs.rc && csv_get_buffer_size(&cs.parser) > MAX_FIELD_BYTES)
			cs.rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, cs.line,
				"field longer than %u MiB (unterminated quote?)",
				MAX_FIELD_BYTES >> 20);
	}
	if (!cs.rc && cs.parser.quoted && cs.parser.pstate == LIBCSV_FIELD_BEGUN)
		cs.rc = memscope_error_set(err, MEMSCOPE_E_TRUNCATED, src->name, cs.line,
			"file ends inside a quoted field");
	if (!cs.rc)
		csv_fini(&cs.parser, on_field, on_row, &cs);
	if (!cs.rc && !cs.have_header)
		cs.rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, 0,
			"empty file (no header line)");
	csv_free(&cs.parser);
	buf_free(&cs.row);
	free(cs.attrs);
	free(cs.frames);
	return cs.rc;
}
