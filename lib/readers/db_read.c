/* Reader of the memscope_dump table of an SQLite database (msMemScope's --format=db, memscope-db's
 * output): rows become events exactly as the same rows of a dump CSV would. */
#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/internal.h"
#include "csvtok.h"
#include "reader.h"

struct db_state {
	struct memscope_source *src;
	struct memscope_error *err;
	sqlite3 *db;
	sqlite3_stmt *rows;
	struct dump_rows *dr;
	struct csvtok_field f[DUMP_COLS];
	char num[4][24];   /* ID, Timestamp, Process Id, Thread Id as text */
	struct buf attr;   /* the Attr as the CSV writes it */
	int64_t max_rowid; /* of the dump table, for progress (0: none) */
};

static int db_fail(struct db_state *d, int code, uint64_t line, const char *what)
{
	return memscope_error_set(d->err, code, d->src->name, line, "%s: %s", what,
		d->db ? sqlite3_errmsg(d->db) : "cannot open");
}

/* A column as the text a CSV field would hold: integers in decimal, NULL as a null field. */
static void col_text(struct db_state *d, int col, unsigned slot, int na_if_negative)
{
	struct csvtok_field *f = &d->f[col - 1];
	int type = sqlite3_column_type(d->rows, col);

	memset(f, 0, sizeof(*f));
	if (type == SQLITE_NULL) {
		f->p = na_if_negative ? "N/A" : "";
		f->len = na_if_negative ? 3 : 0;
		f->null = !na_if_negative;
	} else if (type == SQLITE_INTEGER && slot < ARRAY_SIZE(d->num)) {
		sqlite3_int64 v = sqlite3_column_int64(d->rows, col);

		if (v == -1 && na_if_negative) {
			/* the reference binds N/A (UINT64_MAX) as a 32-bit -1; ours are NULL */
			f->p = "N/A";
			f->len = 3;
		} else {
			f->p = d->num[slot];
			f->len = fmt_u64(d->num[slot], (uint64_t)v);
		}
	} else {
		f->p = (const char *)sqlite3_column_text(d->rows, col);
		f->len = (size_t)sqlite3_column_bytes(d->rows, col);
		if (!f->p)
			f->p = "";
	}
}

/* Take one pair of double quotes off a field that the writers stored with them. */
static void unquote(struct csvtok_field *f)
{
	if (f->len >= 2 && f->p[0] == '"' && f->p[f->len - 1] == '"') {
		f->p++;
		f->len -= 2;
		f->quoted = 1;
	}
	f->null = f->len == 0 && !f->quoted;
}

static int put_json_value(struct buf *b, const cJSON *v)
{
	char *s;
	int rc;

	if (cJSON_IsString(v))
		return buf_append(b, v->valuestring, strlen(v->valuestring));
	if (!(s = cJSON_PrintUnformatted(v)))
		return MEMSCOPE_E_NOMEM;
	rc = buf_append(b, s, strlen(s));
	cJSON_free(s);
	return rc;
}

/*
 * The reference's FixJson wraps keys and values in quotes without escaping, so a value holding a
 * quote gives text that is not JSON; undoing the wrapping gives the CSV Attr back.
 */
static int unfix_json(struct buf *b, const char *s, size_t n)
{
	const char *in = s + 2;
	size_t len = n - 4, i = 0;
	int rc = buf_append(b, "{", 1);

	while (i < len && !rc) {
		if (i + 3 <= len && in[i] == '"' && (in[i + 1] == ':' || in[i + 1] == ',') &&
			in[i + 2] == '"') {
			rc = buf_append(b, in + i + 1, 1);
			i += 3;
		} else {
			rc = buf_append(b, in + i++, 1);
		}
	}
	return rc ? rc : buf_append(b, "}", 1);
}

/*
 * Attr JSON back to the dump's text: an object {"k":"v",...} is {k:v,...}; {} or nothing is an
 * empty field; a JSON string is an Attr that was not {k:v,...} text, kept whole. 0, 1 when the
 * row is skipped (lenient), or the error.
 */
static int attr_field(struct db_state *d, uint64_t line)
{
	struct csvtok_field *f = &d->f[9];
	const char *s = f->p;
	size_t n = f->len;
	cJSON *j, *c;
	int rc = 0;

	d->attr.len = 0;
	if (n == 0 || (n == 2 && memcmp(s, "{}", 2) == 0)) {
		f->p = "";
		f->len = 0;
		f->null = 1;
		return 0;
	}
	j = cJSON_ParseWithLength(s, n);
	if (cJSON_IsObject(j)) {
		rc = buf_append(&d->attr, "{", 1);
		for (c = j->child; c && !rc; c = c->next) {
			if (c != j->child)
				rc = buf_append(&d->attr, ",", 1);
			if (!rc)
				rc = buf_append(&d->attr, c->string, strlen(c->string));
			if (!rc)
				rc = buf_append(&d->attr, ":", 1);
			if (!rc)
				rc = put_json_value(&d->attr, c);
		}
		if (!rc)
			rc = buf_append(&d->attr, "}", 1);
	} else if (cJSON_IsString(j)) {
		rc = buf_append(&d->attr, j->valuestring, strlen(j->valuestring));
	} else if (!j && n >= 4 && memcmp(s, "{\"", 2) == 0 && memcmp(s + n - 2, "\"}", 2) == 0) {
		rc = unfix_json(&d->attr, s, n);
	} else {
		cJSON_Delete(j);
		rc = source_bad_row(d->src, d->err, line, "Attr is not JSON: \"%.*s\"",
			(int)(n > 40 ? 40 : n), s);
		return rc ? rc : 1; /* 1: skipped (lenient) */
	}
	cJSON_Delete(j);
	if (rc)
		return memscope_error_set(
			d->err, MEMSCOPE_E_NOMEM, d->src->name, line, "out of memory");
	f->p = d->attr.p ? d->attr.p : "";
	f->len = d->attr.len;
	f->quoted = 1;
	f->null = 0;
	return 0;
}

static int read_row(struct db_state *d)
{
	uint64_t line = (uint64_t)sqlite3_column_int64(d->rows, 0);
	int c, rc;

	col_text(d, 1, 0, 0);
	for (c = 2; c <= 4; c++)
		col_text(d, c, 99, 0);
	col_text(d, 5, 1, 0);
	col_text(d, 6, 2, 1);
	col_text(d, 7, 3, 1);
	for (c = 8; c <= 12; c++)
		col_text(d, c, 99, 0);
	/* quoted names (the reference's MSTX names) and the stacks are stored with their quotes */
	unquote(&d->f[3]);
	unquote(&d->f[10]);
	unquote(&d->f[11]);
	if ((rc = attr_field(d, line)))
		return rc < 0 ? rc : 0;
	return dump_rows_row(d->dr, d->f, DUMP_COLS, line);
}

static const char select_rows[] =
	"SELECT rowid, \"ID\", \"Event\", \"Event Type\", \"Name\", \"Timestamp(ns)\", "
	"\"Process Id\", \"Thread Id\", \"Device Id\", \"Ptr\", \"Attr\", \"Call Stack(Python)\", "
	"\"Call Stack(C)\" FROM \"%s\" ORDER BY rowid";

/*
 * Open the file read-only. A database in WAL mode (the reference's) would get -wal and -shm files
 * beside it just for being read; when it has no -wal file (all its data is in the file) it is
 * opened as immutable instead, which creates nothing.
 */
static int open_file(struct db_state *d)
{
	const struct memscope_source *src = d->src;
	struct buf uri = { 0 };
	char *wal = NULL;
	const char *p;
	int rc, wal_mode = src->peek_len > 18 && src->buf[18] == 2;

	if (wal_mode && asprintf(&wal, "%s-wal", src->name) < 0)
		return SQLITE_NOMEM;
	if (!wal_mode || access(wal, F_OK) == 0) {
		char *path = db_file_path(src->name);

		free(wal);
		rc = path ? sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READONLY, NULL)
			  : SQLITE_NOMEM;
		free(path);
		return rc;
	}
	free(wal);
	rc = buf_append(&uri, "file:", 5);
	for (p = src->name; *p && !rc; p++) {
		char esc[4];

		if (*p == '%' || *p == '?' || *p == '#') {
			snprintf(esc, sizeof(esc), "%%%02X", (unsigned char)*p);
			rc = buf_append(&uri, esc, 3);
		} else {
			rc = buf_append(&uri, p, 1);
		}
	}
	if (!rc)
		rc = buf_append(&uri, "?immutable=1", 13); /* with the NUL */
	rc = rc ? SQLITE_NOMEM
		: sqlite3_open_v2(uri.p, &d->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	buf_free(&uri);
	return rc;
}

/* Open the source's database (memory or file); SQLite's quirk of taking a double-quoted name
 * that names no column for a string is turned off, so a missing column is an error. */
static int open_conn(struct db_state *d)
{
	struct memscope_source *src = d->src;
	int rc;

	if (src->fd < 0) {
		if (sqlite3_open_v2(":memory:", &d->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
			sqlite3_deserialize(d->db, "main", (unsigned char *)src->mem, src->mem_len,
				src->mem_len, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
			return db_fail(d, MEMSCOPE_E_NOMEM, 0, "cannot open the database");
	} else if (src->fd == 0 && strcmp(src->name, "-") == 0) {
		return memscope_error_set(d->err, MEMSCOPE_E_UNSUPPORTED, src->name, 0,
			"a database cannot be read from standard input");
	} else if ((rc = open_file(d)) != SQLITE_OK) {
		return db_fail(d, rc == SQLITE_NOMEM ? MEMSCOPE_E_NOMEM : MEMSCOPE_E_IO, 0,
			"cannot open the database");
	}
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)NULL);
	sqlite3_db_config(d->db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)NULL);
	return 0;
}

/*
 * Check that table has the n columns named; the others are counted as ignored. 0 or the error
 * naming the first missing column.
 */
static int check_columns(
	struct db_state *d, const char *table, const char *const *names, unsigned n)
{
	sqlite3_stmt *st = NULL;
	unsigned found = 0, i;
	int rc;

	if (sqlite3_prepare_v2(d->db, "SELECT name FROM pragma_table_info(?)", -1, &st, NULL) !=
		SQLITE_OK)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "not a readable database");
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(st, 0);
		int known = 0;

		for (i = 0; col && i < n; i++)
			if (strcmp(col, names[i]) == 0) {
				found |= 1u << i;
				known = 1;
			}
		d->src->stats.n_ignored_columns += !known;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "not a readable database");
	for (i = 0; i < n; i++)
		if (!(found & (1u << i)))
			return memscope_error_set(d->err, MEMSCOPE_E_INVALID, d->src->name, 0,
				"table %s has no column \"%s\"", table, names[i]);
	return 0;
}

static const char *const dump_cols[DUMP_COLS] = { "ID", "Event", "Event Type", "Name",
	"Timestamp(ns)", "Process Id", "Thread Id", "Device Id", "Ptr", "Attr",
	"Call Stack(Python)", "Call Stack(C)" };

static int open_dump_table(struct db_state *d)
{
	sqlite3_stmt *st = NULL;
	char sql[512], table[16];
	int rc;

	rc = sqlite3_prepare_v2(d->db,
		"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
		"('memscope_dump', 'leaks_dump') ORDER BY name = 'leaks_dump'",
		-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "not a readable database");
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return db_fail(d, MEMSCOPE_E_INVALID, 0, "not a readable database");
		return memscope_error_set(d->err, MEMSCOPE_E_INVALID, d->src->name, 0,
			"database has no memscope_dump table");
	}
	snprintf(table, sizeof(table), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if ((rc = check_columns(d, table, dump_cols, DUMP_COLS)))
		return rc;
	/* progress: rows are read in rowid order, max(rowid) is a b-tree lookup */
	st = NULL;
	snprintf(sql, sizeof(sql), "SELECT max(rowid) FROM \"%s\"", table);
	if (d->src->opts.progress && sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) == SQLITE_OK &&
		sqlite3_step(st) == SQLITE_ROW)
		d->max_rowid = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	snprintf(sql, sizeof(sql), select_rows, table);
	if (sqlite3_prepare_v2(d->db, sql, -1, &d->rows, NULL) != SQLITE_OK)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "cannot read the memscope_dump table");
	return 0;
}

/* Progress every 4096 rows: the file's bytes in the share of rowids read (rows are read in rowid
 * order), so a database reports in bytes as every other input does. */
static void db_progress(struct db_state *d, int64_t rowid)
{
	const struct memscope_read_opts *o = &d->src->opts;
	uint64_t total = d->src->stats.bytes;

	if (d->max_rowid <= 0 || rowid % 4096 || rowid < 0 || rowid > d->max_rowid)
		return;
	o->progress(o->progress_ctx, o->src,
		(uint64_t)((double)total * (double)rowid / (double)d->max_rowid), total);
}

static void db_close(struct db_state *d)
{
	sqlite3_finalize(d->rows);
	sqlite3_close(d->db);
	buf_free(&d->attr);
}

static void db_begin(struct db_state *d, struct memscope_source *src, struct memscope_error *err)
{
	struct stat sb;

	d->src = src;
	d->err = err;
	src->stats.bytes = src->fd < 0		      ? src->mem_len
			   : fstat(src->fd, &sb) == 0 ? (uint64_t)sb.st_size
						      : 0;
	src->stats.layout = MEMSCOPE_LAYOUT_CURRENT;
}

static int db_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct db_state d = { 0 };
	int rc;

	db_begin(&d, src, err);
	rc = open_conn(&d);
	if (!rc)
		rc = open_dump_table(&d);
	if (!rc)
		rc = dump_rows_new(&d.dr, src, fn, ctx, err);
	if (!rc)
		dump_rows_fixed(d.dr);
	while (!rc) {
		int r = sqlite3_step(d.rows);

		if (r == SQLITE_DONE)
			break;
		if (r != SQLITE_ROW) {
			rc = db_fail(&d, r == SQLITE_NOMEM ? MEMSCOPE_E_NOMEM : MEMSCOPE_E_INVALID,
				0, "cannot read the memscope_dump table");
			break;
		}
		db_progress(&d, sqlite3_column_int64(d.rows, 0));
		rc = read_row(&d);
	}
	dump_rows_free(d.dr);
	db_close(&d);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* python_trace_{pid} tables */

static const char *const trace_cols[5] = { "FuncInfo", "StartTime(ns)", "EndTime(ns)", "Thread Id",
	"Process Id" };

/* Column col as a number: an integer >= 0, or decimal text; with na, also NULL or "N/A". */
static int trace_num(struct db_state *d, int col, int na, uint64_t *v)
{
	const char *s;

	switch (sqlite3_column_type(d->rows, col)) {
	case SQLITE_INTEGER:
		*v = (uint64_t)sqlite3_column_int64(d->rows, col);
		return sqlite3_column_int64(d->rows, col) < 0 && !na ? -1 : 0;
	case SQLITE_NULL:
		*v = MEMSCOPE_ID_NONE;
		return na ? 0 : -1;
	default:
		s = (const char *)sqlite3_column_text(d->rows, col);
		if (na && s && strcmp(s, "N/A") == 0) {
			*v = MEMSCOPE_ID_NONE;
			return 0;
		}
		return !s || parse_u64(s, strlen(s), v) || *v == MEMSCOPE_ID_NONE ? -1 : 0;
	}
}

/* Deliver the rows of one python_trace table; 0 or the status to stop with. */
static int trace_table_rows(struct db_state *d, const char *table, memscope_trace_fn fn, void *ctx)
{
	char sql[320];
	int rc;

	if ((rc = check_columns(d, table, trace_cols, 5)))
		return rc;
	snprintf(sql, sizeof(sql),
		"SELECT rowid, \"FuncInfo\", \"StartTime(ns)\", \"EndTime(ns)\", \"Thread Id\", "
		"\"Process Id\" FROM \"%s\" ORDER BY rowid",
		table);
	if (sqlite3_prepare_v2(d->db, sql, -1, &d->rows, NULL) != SQLITE_OK)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "cannot read a python_trace table");
	while (!rc) {
		struct memscope_trace_row r = { 0 };
		static const char *const what[4] = { "StartTime", "EndTime", "Thread Id",
			"Process Id" };
		uint64_t *vals[4] = { &r.start_ns, &r.end_ns, &r.tid, &r.pid };
		int step = sqlite3_step(d->rows), c, bad = -1;

		if (step == SQLITE_DONE)
			break;
		if (step != SQLITE_ROW)
			return db_fail(d,
				step == SQLITE_NOMEM ? MEMSCOPE_E_NOMEM : MEMSCOPE_E_INVALID, 0,
				"cannot read a python_trace table");
		r.line = (uint64_t)sqlite3_column_int64(d->rows, 0);
		r.src = d->src->opts.src;
		r.func = (const char *)sqlite3_column_text(d->rows, 1);
		r.func_len = (size_t)sqlite3_column_bytes(d->rows, 1);
		if (!r.func)
			r.func = "";
		for (c = 0; c < 4 && bad < 0; c++)
			if (trace_num(d, c + 2, c < 2, vals[c]))
				bad = c;
		if (bad >= 0) {
			rc = source_bad_row(
				d->src, d->err, r.line, "%s: invalid %s", table, what[bad]);
			continue;
		}
		d->src->stats.n_events++;
		rc = fn(ctx, &r);
		if (rc) {
			rc = rc < 0 ? rc : MEMSCOPE_E_STOPPED;
			if (rc != MEMSCOPE_E_NOMEM)
				memscope_error_set(d->err, rc, d->src->name, r.line, "%s",
					memscope_strerror(rc));
		}
	}
	sqlite3_finalize(d->rows);
	d->rows = NULL;
	return rc;
}

static int db_read_trace(
	struct memscope_source *src, memscope_trace_fn fn, void *ctx, struct memscope_error *err)
{
	struct db_state d = { 0 };
	sqlite3_stmt *tables = NULL;
	int rc;

	db_begin(&d, src, err);
	rc = open_conn(&d);
	if (!rc && sqlite3_prepare_v2(d.db,
			   "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB "
			   "'python_trace_[0-9]*' ORDER BY length(name), name",
			   -1, &tables, NULL) != SQLITE_OK)
		rc = db_fail(&d, MEMSCOPE_E_INVALID, 0, "not a readable database");
	while (!rc) {
		int step = sqlite3_step(tables);
		char table[128];

		if (step == SQLITE_DONE)
			break;
		if (step != SQLITE_ROW) {
			rc = db_fail(&d, MEMSCOPE_E_INVALID, 0, "not a readable database");
			break;
		}
		snprintf(table, sizeof(table), "%s", (const char *)sqlite3_column_text(tables, 0));
		rc = trace_table_rows(&d, table, fn, ctx);
	}
	sqlite3_finalize(tables);
	db_close(&d);
	return rc;
}

/* The first 16 bytes of every SQLite 3 database file. */
static const unsigned char sqlite_magic[16] = "SQLite format 3";

static int db_sniff(
	const unsigned char *p, size_t n, int eof, const char *name, struct memscope_error *err)
{
	(void)eof, (void)name, (void)err;
	return n >= sizeof(sqlite_magic) && memcmp(p, sqlite_magic, sizeof(sqlite_magic)) == 0;
}

const struct reader db_reader = {
	.format = MEMSCOPE_FORMAT_DB,
	.name = "db",
	.what = "a database",
	.sniff = db_sniff,
	.read = db_read,
	.read_trace = db_read_trace,
};
