/* Reader of the memscope_dump table of an SQLite database (msMemScope's --format=db, memscope-db's
 * output): rows become events exactly as the same rows of a dump CSV would. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
	/* the part read (memscope_source_open_part): its rowids first..last, n_rows of them */
	int64_t first_row, last_row;
	uint64_t n_rows, n_read;
	int ranged;	  /* only that range is read */
	void *image;	  /* a WAL-mode database as its WAL makes it (wal_image), or NULL */
	size_t image_len; /* its bytes */
};

/* One input of a database of several (memscope_sources), as db_scan_parts checks it. */
struct db_range {
	int64_t first, last;
	uint64_t n_rows;
};

static int db_fail(struct db_state *d, int code, uint64_t line, const char *what)
{
	return ms__db_error(d->db, code, d->src->name, line, what, d->err);
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
			f->len = ms__fmt_u64(d->num[slot], (uint64_t)v);
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
		return ms__buf_append(b, v->valuestring, strlen(v->valuestring));
	if (!(s = cJSON_PrintUnformatted(v)))
		return MEMSCOPE_E_NOMEM;
	rc = ms__buf_append(b, s, strlen(s));
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
	int rc = ms__buf_append(b, "{", 1);

	while (i < len && !rc) {
		if (i + 3 <= len && in[i] == '"' && (in[i + 1] == ':' || in[i + 1] == ',') &&
			in[i + 2] == '"') {
			rc = ms__buf_append(b, in + i + 1, 1);
			i += 3;
		} else {
			rc = ms__buf_append(b, in + i++, 1);
		}
	}
	return rc ? rc : ms__buf_append(b, "}", 1);
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
		rc = ms__buf_append(&d->attr, "{", 1);
		for (c = j->child; c && !rc; c = c->next) {
			if (c != j->child)
				rc = ms__buf_append(&d->attr, ",", 1);
			if (!rc)
				rc = ms__buf_append(&d->attr, c->string, strlen(c->string));
			if (!rc)
				rc = ms__buf_append(&d->attr, ":", 1);
			if (!rc)
				rc = put_json_value(&d->attr, c);
		}
		if (!rc)
			rc = ms__buf_append(&d->attr, "}", 1);
	} else if (cJSON_IsString(j)) {
		rc = ms__buf_append(&d->attr, j->valuestring, strlen(j->valuestring));
	} else if (!j && n >= 4 && memcmp(s, "{\"", 2) == 0 && memcmp(s + n - 2, "\"}", 2) == 0) {
		rc = unfix_json(&d->attr, s, n);
	} else {
		cJSON_Delete(j);
		rc = ms__source_bad_row(d->src, d->err, line, "Attr is not JSON: \"%.*s\"",
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
	return ms__dump_rows_row(d->dr, d->f, DUMP_COLS, line);
}

static const char select_rows[] =
	"SELECT rowid, \"ID\", \"Event\", \"Event Type\", \"Name\", \"Timestamp(ns)\", "
	"\"Process Id\", \"Thread Id\", \"Device Id\", \"Ptr\", \"Attr\", \"Call Stack(Python)\", "
	"\"Call Stack(C)\" FROM \"%s\"%s ORDER BY rowid";
/* one input's rows: a range of the rowid b-tree, no scan */
static const char where_range[] = " WHERE rowid BETWEEN ?1 AND ?2";

/* How long a read waits for another process's lock on a database (a writer at work) before it
 * gives up: the man pages say it (memscope(7)). */
#define DB_BUSY_MS 10000

/* SQLite's POSIX locks: the bytes from 1 GiB, PENDING, RESERVED and the 510 SHARED ones
 * (formats/sqlite.md "Databases being written"). */
#define DB_LOCK_FIRST 0x40000000
#define DB_LOCK_BYTES 512

int ms__db_error(struct sqlite3 *db, int code, const char *name, uint64_t line, const char *what,
	struct memscope_error *err)
{
	if (db && (sqlite3_errcode(db) & 0xff) == SQLITE_BUSY)
		return memscope_error_set(err, MEMSCOPE_E_IO, name, line,
			"the database is locked by another process (a writer at work, such as an "
			"export being written): still locked after %d s; try again when it is done",
			DB_BUSY_MS / 1000);
	return memscope_error_set(
		err, code, name, line, "%s: %s", what, db ? sqlite3_errmsg(db) : "cannot open");
}

/* Whether another process has the database open: a connection in WAL mode holds a SHARED lock
 * for as long as it is open, one in rollback mode a lock while it reads or writes. 1 when it
 * cannot be told. */
static int db_held(int fd)
{
	struct flock fl = { 0 };

	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = DB_LOCK_FIRST;
	fl.l_len = DB_LOCK_BYTES;
	if (fcntl(fd, F_GETLK, &fl) < 0)
		return 1;
	return fl.l_type != F_UNLCK;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* SQLite's WAL checksum of n bytes (a multiple of 8) on s: 32-bit words, big-endian or not. */
static void wal_sum(int big, const unsigned char *p, size_t n, uint32_t s[2])
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		uint32_t a = big ? be32(p + i)
				 : (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 |
					     (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24;
		uint32_t b = big ? be32(p + i + 4)
				 : (uint32_t)p[i + 4] | (uint32_t)p[i + 5] << 8 |
					     (uint32_t)p[i + 6] << 16 | (uint32_t)p[i + 7] << 24;

		s[0] += a + s[1];
		s[1] += b + s[0];
	}
}

/* What a WAL file commits (formats/sqlite.md "WAL"): its first n_frames frames of pgsz-byte
 * pages, after which the database is n_pages pages long; n_frames 0: nothing. */
struct wal_scan {
	uint32_t pgsz;
	uint64_t n_frames, n_pages;
};

/* The frames of the WAL open on fd (size bytes) that SQLite's recovery would keep: those with
 * the header's salts and a running checksum that holds, up to the last commit frame. */
static int wal_scan(int fd, uint64_t size, struct wal_scan *w)
{
	unsigned char h[32], *f = NULL;
	uint32_t s[2] = { 0, 0 }, salt[2];
	uint64_t i, n;
	int big;

	memset(w, 0, sizeof(*w));
	if (size < sizeof(h) || pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return 0;
	big = h[3] & 1;
	w->pgsz = be32(h + 8);
	if ((be32(h) & ~1u) != 0x377f0682 || be32(h + 4) != 3007000 || w->pgsz < 512 ||
		w->pgsz > 65536 || (w->pgsz & (w->pgsz - 1)))
		return 0; /* not a WAL SQLite would replay: it ignores it */
	wal_sum(big, h, 24, s);
	if (s[0] != be32(h + 24) || s[1] != be32(h + 28))
		return 0;
	salt[0] = be32(h + 16);
	salt[1] = be32(h + 20);
	n = (size - sizeof(h)) / (24 + (uint64_t)w->pgsz);
	if (!(f = malloc(24 + (size_t)w->pgsz)))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < n; i++) {
		if (pread(fd, f, 24 + (size_t)w->pgsz, (off_t)(32 + i * (24 + w->pgsz))) !=
				(ssize_t)(24 + w->pgsz) ||
			be32(f) == 0 || be32(f + 8) != salt[0] || be32(f + 12) != salt[1])
			break;
		wal_sum(big, f, 8, s);
		wal_sum(big, f + 24, w->pgsz, s);
		if (s[0] != be32(f + 16) || s[1] != be32(f + 20))
			break;
		if (be32(f + 4)) { /* a commit: the database's size in pages after it */
			w->n_frames = i + 1;
			w->n_pages = be32(f + 4);
		}
	}
	free(f);
	return 0;
}

/*
 * The database as its WAL makes it, for a file in WAL mode that no process has open and whose
 * WAL commits something: the file mapped copy-on-write, the committed frames' pages written over
 * it, read through SQLite's in-memory database; nothing made beside the file, nothing locked. 1
 * when the WAL commits nothing (the file is the whole database), 0 with d->image set, or the
 * error (d->err set).
 */
static int wal_image(struct db_state *d)
{
	const struct memscope_source *src = d->src;
	struct wal_scan w;
	struct stat sb, wb;
	char *wal = NULL;
	unsigned char *m = MAP_FAILED;
	uint64_t len = 0, i;
	int fd = -1, rc = 1;

	if (asprintf(&wal, "%s-wal", src->name) < 0)
		return memscope_error_set(d->err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	if ((fd = open(wal, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = errno == ENOENT ? 1
				     : memscope_error_set(d->err, MEMSCOPE_E_IO, src->name, 0,
					       "cannot read its WAL %s: %s", wal, strerror(errno));
		goto out;
	}
	if (fstat(fd, &wb) || fstat(src->fd, &sb)) {
		rc = memscope_error_set(
			d->err, MEMSCOPE_E_IO, src->name, 0, "%s: %s", wal, strerror(errno));
		goto out;
	}
	if ((rc = wal_scan(fd, (uint64_t)wb.st_size, &w)) || !w.n_frames) {
		rc = rc ? memscope_error_set(d->err, rc, src->name, 0, "out of memory") : 1;
		goto out;
	}
	len = w.n_pages * w.pgsz;
	/* a commit names the size it leaves: no larger than the file and the WAL's pages make */
	if (len > (uint64_t)sb.st_size + (uint64_t)wb.st_size || len > SIZE_MAX / 2) {
		rc = memscope_error_set(d->err, MEMSCOPE_E_INVALID, src->name, 0,
			"its WAL %s commits a database of %llu pages, more than it and the file "
			"hold",
			wal, (unsigned long long)w.n_pages);
		goto out;
	}
	m = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m != MAP_FAILED && sb.st_size &&
		mmap(m, (size_t)((uint64_t)sb.st_size < len ? (uint64_t)sb.st_size : len),
			PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, src->fd,
			0) == MAP_FAILED) {
		munmap(m, (size_t)len);
		m = MAP_FAILED;
	}
	if (m == MAP_FAILED) {
		rc = memscope_error_set(d->err, MEMSCOPE_E_NOMEM, src->name, 0,
			"cannot map the database with its WAL: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < w.n_frames; i++) {
		unsigned char pg[4];
		uint64_t at = 32 + i * (24 + (uint64_t)w.pgsz);

		if (pread(fd, pg, 4, (off_t)at) != 4) {
			rc = memscope_error_set(
				d->err, MEMSCOPE_E_IO, src->name, 0, "%s: cut while read", wal);
			goto out;
		}
		/* a page the commit truncated away; 0 only if the file changed since the scan */
		if (!be32(pg) || be32(pg) > w.n_pages)
			continue;
		if (pread(fd, m + (be32(pg) - 1) * (uint64_t)w.pgsz, w.pgsz, (off_t)(at + 24)) !=
			(ssize_t)w.pgsz) {
			rc = memscope_error_set(
				d->err, MEMSCOPE_E_IO, src->name, 0, "%s: cut while read", wal);
			goto out;
		}
	}
	m[18] = m[19] = 1; /* read as a rollback-mode database: the in-memory one has no WAL */
	d->image = m;
	d->image_len = (size_t)len;
	m = MAP_FAILED;
	rc = 0;
out:
	if (m != MAP_FAILED)
		munmap(m, (size_t)len);
	if (fd >= 0)
		close(fd);
	free(wal);
	return rc;
}

/* file:NAME?immutable=1 opened: a database read without locks, which creates nothing. */
static int open_immutable(struct db_state *d)
{
	struct buf uri = { 0 };
	const char *p;
	int rc = ms__buf_append(&uri, "file:", 5);

	for (p = d->src->name; *p && !rc; p++) {
		char esc[4];

		if (*p == '%' || *p == '?' || *p == '#') {
			snprintf(esc, sizeof(esc), "%%%02X", (unsigned char)*p);
			rc = ms__buf_append(&uri, esc, 3);
		} else {
			rc = ms__buf_append(&uri, p, 1);
		}
	}
	if (!rc)
		rc = ms__buf_append(&uri, "?immutable=1", 13); /* with the NUL */
	rc = rc ? SQLITE_NOMEM
		: sqlite3_open_v2(uri.p, &d->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	ms__buf_free(&uri);
	return rc;
}

/*
 * Open the file read-only, creating nothing beside it and never reading a database half written
 * (formats/sqlite.md "Databases being written"). A database another process has open (a writer
 * at work) is opened as SQLite opens it, waiting up to DB_BUSY_MS for its locks. One in WAL mode
 * that no process has open would get -shm (and -wal) files beside it just for being read, or
 * could not be read at all from a read-only folder: it is read as its WAL makes it (wal_image),
 * or, when the WAL commits nothing, as immutable. 0 or the error (d->err set).
 */
static int open_file(struct db_state *d)
{
	const struct memscope_source *src = d->src;
	int rc, wal_mode = src->peek_len > 18 && src->buf[18] == 2, how = 1;
	int held = !wal_mode || db_held(src->fd);

	if (!held && (how = wal_image(d)) < 0)
		return how;
	if (how == 0) { /* the image: SQLite's in-memory database over it, read-only */
		rc = sqlite3_open_v2(":memory:", &d->db, SQLITE_OPEN_READWRITE, NULL);
		if (rc == SQLITE_OK &&
			sqlite3_deserialize(d->db, "main", d->image, (sqlite3_int64)d->image_len,
				(sqlite3_int64)d->image_len,
				SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
			rc = SQLITE_NOMEM;
	} else if (!held) {
		rc = open_immutable(d);
	} else {
		char *path = ms__db_file_path(src->name);

		rc = path ? sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READONLY, NULL)
			  : SQLITE_NOMEM;
		free(path);
		if (rc == SQLITE_OK)
			sqlite3_busy_timeout(d->db, DB_BUSY_MS);
	}
	if (rc != SQLITE_OK)
		return ms__db_error(d->db, rc == SQLITE_NOMEM ? MEMSCOPE_E_NOMEM : MEMSCOPE_E_IO,
			src->name, 0, "cannot open the database", d->err);
	return 0;
}

/* Open the source's database (memory or file); SQLite's quirk of taking a double-quoted name
 * that names no column for a string is turned off, so a missing column is an error. */
static int open_conn(struct db_state *d)
{
	struct memscope_source *src = d->src;
	struct stat sb;
	int rc;

	if (src->fd < 0) {
		if (sqlite3_open_v2(":memory:", &d->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
			sqlite3_deserialize(d->db, "main", (unsigned char *)src->mem, src->mem_len,
				src->mem_len, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
			return db_fail(d, MEMSCOPE_E_NOMEM, 0, "cannot open the database");
	} else if (src->fd == 0 && strcmp(src->name, "-") == 0) {
		return memscope_error_set(d->err, MEMSCOPE_E_UNSUPPORTED, src->name, 0,
			"a database cannot be read from standard input");
	} else if (fstat(src->fd, &sb) || !S_ISREG(sb.st_mode)) {
		/* SQLite reads a file by its name, at any offset: a pipe would hang or fail */
		return memscope_error_set(d->err, MEMSCOPE_E_UNSUPPORTED, src->name, 0,
			"a database cannot be read from a pipe or device: SQLite needs it as a "
			"regular file");
	} else if ((rc = open_file(d))) {
		return rc;
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

/* The first (desc 0) or last rowid of table into *v: 0, 1 when it has no row, or the error. */
static int end_rowid(struct db_state *d, const char *table, int desc, int64_t *v)
{
	sqlite3_stmt *st = NULL;
	char sql[96];
	int rc;

	snprintf(sql, sizeof(sql), "SELECT rowid FROM \"%s\" ORDER BY rowid%s LIMIT 1", table,
		desc ? " DESC" : "");
	if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "cannot read the memscope_dump table");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "cannot read the memscope_dump table");
	return rc == SQLITE_DONE;
}

/* A single-valued query's integer into *v: 0 or the error. */
static int query_int(struct db_state *d, const char *sql, int64_t *v)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "cannot read memscope_sources");
	rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0
				: db_fail(d, MEMSCOPE_E_INVALID, 0, "cannot read memscope_sources");
}

/*
 * The inputs the database holds (formats/sqlite.md "Reading a database"): the rows of
 * memscope_sources whose n_rows is not 0, when there are two or more, each a rowid range of the
 * dump table; in source order they must start at its first rowid, each right after the one
 * before, and end at its last, so every row is one input's. fn (may be NULL) gets each one's
 * number from 1 and name; part want (>= 1) goes into *r. Returns the count (1: the table is one
 * input, read whole as when there is no memscope_sources), or the error (err set). table NULL:
 * the count only, unchecked.
 */
static int db_scan_parts(struct db_state *d, const char *table, uint32_t want, struct db_range *r,
	memscope_part_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int64_t n, lo = 0, hi = 0, prev = 0;
	uint32_t k = 0;
	int rc;

	if ((rc = query_int(d,
		     "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = "
		     "'memscope_sources'",
		     &n)) ||
		!n)
		return rc ? rc : 1;
	if ((rc = query_int(d,
		     "SELECT count(*) FROM memscope_sources WHERE NOT (typeof(n_rows) = "
		     "'integer' AND n_rows = 0)",
		     &n)))
		return rc;
	if (n < 2 || !table)
		return n < 2 ? 1 : n > INT32_MAX ? INT32_MAX : (int)n;
	if (n > INT32_MAX)
		return memscope_error_set(d->err, MEMSCOPE_E_INVALID, d->src->name, 0,
			"memscope_sources: %lld inputs", (long long)n);
	if ((rc = end_rowid(d, table, 0, &lo)) < 0 ||
		(!rc && (rc = end_rowid(d, table, 1, &hi)) < 0))
		return rc;
	if (rc)
		return memscope_error_set(d->err, MEMSCOPE_E_INVALID, d->src->name, 0,
			"memscope_sources lists %lld inputs with rows, and %s has none",
			(long long)n, table);
	if (sqlite3_prepare_v2(d->db,
		    "SELECT source, path, first_row, last_row, n_rows FROM memscope_sources "
		    "ORDER BY source",
		    -1, &st, NULL) != SQLITE_OK)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "cannot read memscope_sources");
	while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long source = sqlite3_column_int64(st, 0);
		int64_t first = sqlite3_column_int64(st, 2), last = sqlite3_column_int64(st, 3);
		int64_t rows = sqlite3_column_int64(st, 4);
		int ints = sqlite3_column_type(st, 2) == SQLITE_INTEGER &&
			   sqlite3_column_type(st, 3) == SQLITE_INTEGER &&
			   sqlite3_column_type(st, 4) == SQLITE_INTEGER;
		const char *path = (const char *)sqlite3_column_text(st, 1);
		char name[1024];

		rc = 0;
		if (sqlite3_column_type(st, 4) == SQLITE_INTEGER && rows == 0)
			continue; /* an input without rows (python_trace): not one to read */
		if (!ints || rows < 1 || last < first ||
			(uint64_t)last - (uint64_t)first != (uint64_t)rows - 1)
			rc = memscope_error_set(d->err, MEMSCOPE_E_INVALID, d->src->name, 0,
				"memscope_sources: source %lld: its rows (first_row, last_row, "
				"n_rows) are not a rowid range",
				source);
		else if (k ? prev == INT64_MAX || first != prev + 1 : first != lo)
			rc = memscope_error_set(d->err, MEMSCOPE_E_INVALID, d->src->name, 0,
				"memscope_sources: source %lld starts at row %lld, not at %s",
				source, (long long)first,
				k ? "the row after the input before"
				  : "the first row of the table");
		if (rc)
			break;
		prev = last;
		if (++k == want) {
			r->first = first;
			r->last = last;
			r->n_rows = (uint64_t)rows;
		}
		if (fn) {
			if (path)
				memscope_text_escape(name, sizeof(name), path,
					(size_t)sqlite3_column_bytes(st, 1));
			else
				snprintf(name, sizeof(name), "source %lld", source);
			if ((rc = fn(ctx, k, name)))
				rc = rc < 0 ? rc : MEMSCOPE_E_STOPPED;
		}
	}
	sqlite3_finalize(st);
	if (rc < 0)
		return rc;
	if (rc != SQLITE_DONE)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "cannot read memscope_sources");
	if (k != (uint64_t)n || prev != hi)
		return memscope_error_set(d->err, MEMSCOPE_E_INVALID, d->src->name, 0,
			"memscope_sources: its inputs end at row %lld, %s at row %lld",
			(long long)prev, table, (long long)hi);
	return (int)k;
}

/*
 * Read only part want of the database (memscope_source_open_part): its rowid range when it holds
 * several inputs; all of it when it is one and want is 1. 0 or the error.
 */
static int select_part(struct db_state *d, const char *table, uint32_t want)
{
	struct db_range r = { 0 };
	int n = db_scan_parts(d, table, want, &r, NULL, NULL);

	if (n < 0)
		return n;
	if (want > (uint32_t)n)
		return memscope_error_set(d->err, MEMSCOPE_E_ARG, d->src->name, 0,
			"holds %d input%s, not %u", n, n == 1 ? "" : "s", want);
	if (n == 1)
		return 0;
	d->ranged = 1;
	d->first_row = r.first;
	d->last_row = r.last;
	d->n_rows = r.n_rows;
	return 0;
}

static int open_dump_table(struct db_state *d)
{
	uint32_t want = d->src->part;
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
	if (want && (rc = select_part(d, table, want)))
		return rc;
	/* progress: rows are read in rowid order, max(rowid) is a b-tree lookup */
	st = NULL;
	snprintf(sql, sizeof(sql), "SELECT max(rowid) FROM \"%s\"", table);
	if (d->src->opts.progress && !d->ranged &&
		sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) == SQLITE_OK &&
		sqlite3_step(st) == SQLITE_ROW)
		d->max_rowid = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	snprintf(sql, sizeof(sql), select_rows, table, d->ranged ? where_range : "");
	if (sqlite3_prepare_v2(d->db, sql, -1, &d->rows, NULL) != SQLITE_OK)
		return db_fail(d, MEMSCOPE_E_INVALID, 0, "cannot read the memscope_dump table");
	if (d->ranged) {
		sqlite3_bind_int64(d->rows, 1, d->first_row);
		sqlite3_bind_int64(d->rows, 2, d->last_row);
	}
	return 0;
}

/* Progress every 4096 rows: the file's bytes in the share of rowids read (rows are read in rowid
 * order), so a database reports in bytes as every other input does; rowid -1: the end. */
static void db_progress(struct db_state *d, int64_t rowid)
{
	const struct memscope_read_opts *o = &d->src->opts;
	uint64_t total = d->src->stats.bytes;

	if (!o->progress || d->src->fd < 0) /* a memory input reports none */
		return;
	if (rowid < 0) { /* the end: the whole file (or part) read */
		o->progress(o->progress_ctx, o->src, total, total);
		return;
	}
	if (d->ranged) {
		/* one input of several: the share of its rows */
		if (d->n_read % 4096 == 0)
			o->progress(o->progress_ctx, o->src,
				(uint64_t)((double)total * (double)d->n_read / (double)d->n_rows),
				total);
		return;
	}
	if (d->max_rowid <= 0 || rowid % 4096 || rowid < 0 || rowid > d->max_rowid)
		return;
	o->progress(o->progress_ctx, o->src,
		(uint64_t)((double)total * (double)rowid / (double)d->max_rowid), total);
}

static void db_close(struct db_state *d)
{
	sqlite3_finalize(d->rows);
	sqlite3_close(d->db);
	if (d->image)
		munmap(d->image, d->image_len);
	ms__buf_free(&d->attr);
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
		rc = ms__dump_rows_new(&d.dr, src, fn, ctx, err);
	if (!rc)
		ms__dump_rows_fixed(d.dr);
	while (!rc) {
		int r = sqlite3_step(d.rows);

		if (r == SQLITE_DONE)
			break;
		if (r != SQLITE_ROW) {
			rc = db_fail(&d, r == SQLITE_NOMEM ? MEMSCOPE_E_NOMEM : MEMSCOPE_E_INVALID,
				0, "cannot read the memscope_dump table");
			break;
		}
		d.n_read++;
		db_progress(&d, sqlite3_column_int64(d.rows, 0));
		rc = read_row(&d);
	}
	if (!rc)
		db_progress(&d, -1);
	if (!rc && d.ranged && d.n_read != d.n_rows)
		rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, 0,
			"memscope_sources: input %u has %llu rows (rowids %lld to %lld), the table "
			"%llu",
			src->part, (unsigned long long)d.n_rows, (long long)d.first_row,
			(long long)d.last_row, (unsigned long long)d.n_read);
	ms__dump_rows_free(d.dr);
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
		return !s || ms__parse_u64(s, strlen(s), v) || *v == MEMSCOPE_ID_NONE ? -1 : 0;
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
			rc = ms__source_bad_row(
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
	/* python_trace_{pid} tables are per process, not per input: they go with the whole file */
	if (!rc && src->part && (rc = db_scan_parts(&d, NULL, 0, NULL, NULL, NULL)) > 0)
		rc = rc == 1 && src->part == 1
			     ? 0
			     : memscope_error_set(err, MEMSCOPE_E_UNSUPPORTED, src->name, 0,
				       "the python_trace tables of a database of several inputs "
				       "are read with the whole database");
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

int ms__db_open(struct memscope_source *src, struct db_conn *c, struct memscope_error *err)
{
	struct db_state d = { 0 };
	int rc;

	d.src = src;
	d.err = err;
	rc = open_conn(&d);
	if (rc) {
		db_close(&d);
		memset(&d, 0, sizeof(d));
	}
	c->db = d.db;
	c->image = d.image;
	c->image_len = d.image_len;
	return rc;
}

void ms__db_conn_close(struct db_conn *c)
{
	sqlite3_close(c->db);
	if (c->image)
		munmap(c->image, c->image_len);
	memset(c, 0, sizeof(*c));
}

/*
 * The database reader's refine hook (struct reader): an Nsight Systems export (a table
 * CUDA_GPU_MEMORY_USAGE_EVENTS or another of nsys' own, no memscope_dump or leaks_dump:
 * formats/nsys.md) is MEMSCOPE_FORMAT_NSYS, read by the nsys reader. One query of the schema; a
 * database that cannot be opened or read stays a database, whose read says what is wrong with it,
 * but one another process kept locked for the busy timeout: MEMSCOPE_E_IO (err says so). A
 * compressed database is refused (MEMSCOPE_E_UNSUPPORTED): SQLite reads a database by its name or
 * from memory, never as a stream.
 */
static int db_refine(
	struct memscope_source *src, enum memscope_format *format, struct memscope_error *err)
{
	struct db_conn c = { 0 };
	sqlite3_stmt *st = NULL;
	int rc = 0, step = SQLITE_ERROR;

	if (src->z)
		return memscope_error_set(err, MEMSCOPE_E_UNSUPPORTED, src->name, 0,
			"a compressed database cannot be read directly: decompress it first");
	/* one query of the schema; a database it fails on stays a database, whose read says why */
	if (ms__db_open(src, &c, NULL) == 0 &&
		sqlite3_prepare_v2(c.db,
			"SELECT count(*) FILTER (WHERE name IN ('CUDA_GPU_MEMORY_USAGE_EVENTS', "
			"'TARGET_INFO_SESSION_START_TIME', 'ANALYSIS_DETAILS', 'TARGET_INFO_GPU', "
			"'ENUM_NSYS_EVENT_TYPE', 'NVTX_EVENTS') OR name GLOB "
			"'CUPTI_ACTIVITY_KIND_*'), "
			"count(*) FILTER (WHERE name IN ('memscope_dump', 'leaks_dump')) FROM "
			"sqlite_master WHERE type = 'table'",
			-1, &st, NULL) == SQLITE_OK)
		step = sqlite3_step(st);
	if (step == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0 &&
		sqlite3_column_int64(st, 1) == 0) {
		*format = MEMSCOPE_FORMAT_NSYS;
	} else if (c.db && (sqlite3_errcode(c.db) & 0xff) == SQLITE_BUSY) {
		/* still locked after the wait: said now, not after another wait by the read */
		rc = ms__db_error(c.db, MEMSCOPE_E_IO, src->name, 0, "locked", err);
	}
	sqlite3_finalize(st);
	ms__db_conn_close(&c);
	return rc;
}

/* Whether the SQLite database at path holds events (the folder walk's second look at a file whose
 * head says database): a dump table, as the read looks for it, or an Nsight Systems export's
 * CUDA_GPU_MEMORY_USAGE_EVENTS (formats/nsys.md). 1 yes, 0 no (or SQLite cannot read it),
 * MEMSCOPE_E_NOMEM. */
static int db_holds_events(const char *path)
{
	char *name = ms__db_file_path(path);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int yes = 0;

	if (!name)
		return MEMSCOPE_E_NOMEM;
	if (sqlite3_open_v2(name, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
		sqlite3_prepare_v2(db,
			"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name IN "
			"('memscope_dump', 'leaks_dump', 'CUDA_GPU_MEMORY_USAGE_EVENTS')",
			-1, &st, NULL) == SQLITE_OK)
		yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(name);
	return yes;
}

const struct reader ms__db_reader = {
	.format = MEMSCOPE_FORMAT_DB,
	.name = "db",
	.what = "a database",
	.sniff = db_sniff,
	.read = db_read,
	.read_trace = db_read_trace,
	.refine = db_refine,
	.by_name = 1,
	.parts = 1,
	.walk = READER_WALK_INPUT,
	.prefix = "memscope_dump_",
	.endings = (const char *const[]){ ".db", NULL },
	.holds_events = db_holds_events,
	.inputs = "databases",
};

int memscope_source_parts(
	const char *path, memscope_part_fn fn, void *ctx, struct memscope_error *err)
{
	struct memscope_source src = { 0 };
	struct db_state d = { 0 };
	unsigned char head[100];
	sqlite3_stmt *st = NULL;
	char table[16];
	ssize_t got;
	int rc = 1, fd = -1, step;

	memscope_error_clear(err);
	if (!path || strcmp(path, "-") == 0 || memscope_source_rereadable(path) != 1)
		return 1; /* stdin, a pipe: no database; a missing file: its read says so */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 1;
	got = read(fd, head, sizeof(head));
	if (got < (ssize_t)sizeof(sqlite_magic) || !db_sniff(head, (size_t)got, 0, path, NULL))
		goto out;
	src.name = (char *)path;
	src.fd = fd;
	src.buf = head;
	src.peek_len = (size_t)got;
	d.src = &src;
	d.err = err;
	/* a file SQLite cannot open or read, or without a dump table, is one input: its read says
	 * what is wrong with it */
	if (open_conn(&d) ||
		sqlite3_prepare_v2(d.db,
			"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
			"('memscope_dump', 'leaks_dump') ORDER BY name = 'leaks_dump'",
			-1, &st, NULL) != SQLITE_OK) {
		/* but one another process kept locked: said now, not after a wait per read */
		if (d.db && (sqlite3_errcode(d.db) & 0xff) == SQLITE_BUSY)
			rc = db_fail(&d, MEMSCOPE_E_IO, 0, "locked");
		else
			memscope_error_clear(err);
		goto out;
	}
	step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		snprintf(table, sizeof(table), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	rc = step == SQLITE_ROW ? db_scan_parts(&d, table, 0, NULL, fn, ctx) : 1;
out:
	db_close(&d);
	if (fd >= 0)
		close(fd);
	return rc;
}
