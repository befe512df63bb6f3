/* Writer of the SQLite database MindStudio Insight opens: msMemScope's tables exactly, filled in
 * one transaction with prepared statements, plus the blocks table, its view and indexes. */
#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "dump_text.h"
#include "memscope/db.h"
#include "memscope/blocks.h"
#include "memscope/strtab.h"

/* The reference's DDL, as sqlite_master keeps it (formats/sqlite.md "The reference's tables"). */
static const char dump_ddl[] =
	"CREATE TABLE memscope_dump (\"ID\" INTEGER, \"Event\" TEXT, \"Event Type\" TEXT, "
	"\"Name\" TEXT, \"Timestamp(ns)\" INTEGER, \"Process Id\" INTEGER, \"Thread Id\" INTEGER, "
	"\"Device Id\" TEXT, \"Ptr\" TEXT, \"Attr\" TEXT, \"Call Stack(Python)\" TEXT, "
	"\"Call Stack(C)\" TEXT)";
static const char trace_ddl[] =
	"CREATE TABLE python_trace_%llu (\"FuncInfo\" TEXT, \"StartTime(ns)\" TEXT, "
	"\"EndTime(ns)\" TEXT, \"Thread Id\" INTEGER, \"Process Id\" INTEGER)";

/* Ours (formats/sqlite.md). */
static const char our_ddl[] =
	"CREATE TABLE memscope_blocks (block_id INTEGER PRIMARY KEY, source INTEGER NOT NULL, "
	"process_id INTEGER, device_id TEXT, pool TEXT, allocation_id INTEGER, ptr TEXT, "
	"size INTEGER, owner TEXT, malloc_ts INTEGER, free_ts INTEGER, lifetime_ns INTEGER, "
	"end_by TEXT NOT NULL, leaked_at_exit INTEGER NOT NULL, n_access INTEGER NOT NULL, "
	"first_access_ts INTEGER, last_access_ts INTEGER, malloc_row INTEGER, free_row INTEGER, "
	"malloc_id INTEGER, free_id INTEGER, op TEXT);"
	"CREATE TABLE memscope_sources (source INTEGER PRIMARY KEY, path TEXT, format TEXT, "
	"layout TEXT, first_row INTEGER, last_row INTEGER, n_rows INTEGER NOT NULL, "
	"n_trace_rows INTEGER NOT NULL);";
static const char finish_sql[] =
	"CREATE INDEX memscope_dump_event ON memscope_dump (\"Event\", \"Event Type\");"
	"CREATE INDEX memscope_dump_process_time ON memscope_dump (\"Process Id\", \"Device Id\", "
	"\"Timestamp(ns)\");"
	"CREATE INDEX memscope_dump_time ON memscope_dump (\"Timestamp(ns)\");"
	"CREATE INDEX memscope_blocks_process_time ON memscope_blocks (process_id, device_id, "
	"malloc_ts);"
	"CREATE VIEW memscope_block_stacks AS SELECT b.*, m.\"Call Stack(Python)\" AS "
	"call_stack_python, m.\"Call Stack(C)\" AS call_stack_c FROM memscope_blocks AS b "
	"LEFT JOIN memscope_dump AS m ON m.rowid = b.malloc_row;"
	"PRAGMA user_version = 2;"
	"COMMIT;";

enum { BLOCK_COLS = 21 };

#define BATCH_ROWS 64 /* memscope_dump rows per INSERT statement */

/* the texts of a queued row that are kept in the batch's text buffer */
enum { SPAN_NAME, SPAN_DEVICE, SPAN_PTR, SPAN_ATTR, SPAN_STACK_PY, SPAN_STACK_C, N_SPANS };

/* a memscope_dump row queued for the next batch */
struct pending {
	uint64_t id, ts_ns, pid, tid;
	const char *kind, *type; /* constants or strings of the string table */
	size_t kind_len, type_len;
	size_t off[N_SPANS], len[N_SPANS]; /* in the batch's text buffer */
};

/* A cJSON object whose nodes are reused row after row: cJSON prints, nothing is allocated. */
struct json_enc {
	cJSON root;
	cJSON *items;
	size_t cap;
	struct buf text; /* NUL-terminated values */
	char *out;
	size_t out_cap;
};

struct trace_table {
	sqlite3_stmt *ins;
};

/* a block closed by the reference's shadow FREE, and that FREE's row */
struct shadowed {
	struct memscope_block b;
	int64_t free_row;
};

struct src_info {
	int64_t first_row, last_row; /* 0 when no row */
	uint64_t n_rows, n_trace_rows;
	int ended;
};

struct memscope_db_writer {
	sqlite3 *db;
	struct memscope_strtab *st;
	sqlite3_stmt *ins_dump, *ins_batch, *ins_block, *ins_source;
	struct json_enc js;
	struct pending batch[BATCH_ROWS];
	unsigned n_batch;
	struct buf batch_text;
	struct memscope_blocks *blocks; /* of the input being written */
	uint32_t blocks_src;
	struct u64map last_ts;	   /* pid -> latest time of a real row (not SYSTEM, not shadow) */
	struct shadowed *shadowed; /* blocks closed by a shadow FREE, judged at the input's end */
	size_t n_shadowed, cap_shadowed;
	struct u64map trace_of; /* pid -> index in traces */
	struct trace_table *traces;
	size_t cap_traces;
	struct src_info *srcs;
	size_t cap_srcs;
	int finished;
	struct memscope_db_stats stats;
};

static int ms__db_error(struct memscope_db_writer *w, struct memscope_error *err, const char *what)
{
	int code = sqlite3_errcode(w->db);

	return memscope_error_set(err, code == SQLITE_NOMEM ? MEMSCOPE_E_NOMEM : MEMSCOPE_E_IO,
		NULL, 0, "%s: %s", what, sqlite3_errmsg(w->db));
}

static int nomem(struct memscope_error *err)
{
	return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
}

/* INSERT INTO memscope_dump VALUES (?, ...), ... for BATCH_ROWS rows */
static int prepare_batch(struct memscope_db_writer *w)
{
	struct buf sql = { 0 };
	unsigned i;
	int rc = ms__buf_append(&sql, "INSERT INTO memscope_dump VALUES ", 33);

	for (i = 0; i < BATCH_ROWS && !rc; i++)
		rc = ms__buf_append(&sql,
			i ? ",(?,?,?,?,?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?,?,?,?,?,?)",
			i ? 26 : 25);
	rc = rc ? SQLITE_NOMEM
		: sqlite3_prepare_v2(w->db, sql.p, (int)sql.len, &w->ins_batch, NULL);
	ms__buf_free(&sql);
	return rc;
}

int memscope_db_writer_open(struct memscope_db_writer **out, const char *path,
	struct memscope_strtab *st, struct memscope_error *err)
{
	/* 64 KiB pages: a third less time than 4 KiB ones on dumps with call stacks; no journal,
	 * no syncs: a failed file is deleted, never used */
	static const char setup[] = "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF;"
				    "PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;"
				    "PRAGMA cache_size = -8192; BEGIN;";
	static const char ins_dump[] =
		"INSERT INTO memscope_dump (\"ID\", \"Event\", \"Event Type\", \"Name\", "
		"\"Timestamp(ns)\", \"Process Id\", \"Thread Id\", \"Device Id\", \"Ptr\", "
		"\"Attr\", \"Call Stack(Python)\", \"Call Stack(C)\") "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	static const char ins_block[] = "INSERT INTO memscope_blocks VALUES (NULL, ?, ?, ?, ?, ?, "
					"?, ?, ?, ?, ?, ?, ?, ?, ?, "
					"?, ?, ?, ?, ?, ?, ?)";
	static const char ins_source[] =
		"INSERT INTO memscope_sources VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
	struct memscope_db_writer *w = calloc(1, sizeof(*w));
	char *file = NULL;
	int rc = 0;

	*out = NULL;
	if (!w)
		return nomem(err);
	w->st = st;
	if (!(file = ms__db_file_path(path))) {
		rc = nomem(err);
		goto out;
	}
	if (sqlite3_open_v2(file, &w->db,
		    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
		    NULL) != SQLITE_OK) {
		rc = w->db ? ms__db_error(w, err, path)
			   : memscope_error_set(err, MEMSCOPE_E_NOMEM, path, 0, "out of memory");
		goto out;
	}
	sqlite3_extended_result_codes(w->db, 0);
	if (sqlite3_exec(w->db, setup, NULL, NULL, NULL) != SQLITE_OK ||
		sqlite3_exec(w->db, dump_ddl, NULL, NULL, NULL) != SQLITE_OK ||
		sqlite3_exec(w->db, our_ddl, NULL, NULL, NULL) != SQLITE_OK ||
		sqlite3_prepare_v2(w->db, ins_dump, -1, &w->ins_dump, NULL) != SQLITE_OK ||
		prepare_batch(w) != SQLITE_OK ||
		sqlite3_prepare_v2(w->db, ins_block, -1, &w->ins_block, NULL) != SQLITE_OK ||
		sqlite3_prepare_v2(w->db, ins_source, -1, &w->ins_source, NULL) != SQLITE_OK) {
		rc = ms__db_error(w, err, path);
		goto out;
	}
	w->blocks_src = UINT32_MAX;
out:
	free(file);
	if (rc)
		memscope_db_writer_free(w);
	else
		*out = w;
	return rc;
}

/* The entries of an Attr (or the synthetic ones of a capture event) as a JSON object. */
static int json_object(struct json_enc *js, const struct memscope_strtab *st,
	const struct memscope_attr *a, uint32_t n, const char **text)
{
	size_t need = 0, bound = 8, i;

	for (i = 0; i < n; i++)
		need += a[i].val_len + 1;
	if (ms__grow_array(&js->items, &js->cap, n, sizeof(*js->items)))
		return MEMSCOPE_E_NOMEM;
	js->text.len = 0;
	if (ms__buf_reserve(&js->text, need))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < n; i++) {
		cJSON *it = &js->items[i];
		size_t klen;
		const char *key = memscope_strtab_str(st, a[i].key, &klen);

		memset(it, 0, sizeof(*it));
		it->type = cJSON_String;
		it->string = (char *)(key ? key : "");
		it->valuestring = js->text.p + js->text.len;
		memcpy(js->text.p + js->text.len, a[i].val, a[i].val_len);
		js->text.len += a[i].val_len;
		js->text.p[js->text.len++] = '\0';
		it->prev = i ? &js->items[i - 1] : NULL;
		it->next = i + 1 < n ? &js->items[i + 1] : NULL;
		bound += 6 * (klen + a[i].val_len) + 6; /* every byte escaped as \u00XX at worst */
	}
	memset(&js->root, 0, sizeof(js->root));
	js->root.type = cJSON_Object;
	js->root.child = n ? js->items : NULL;
	if (ms__grow_array(&js->out, &js->out_cap, bound, 1))
		return MEMSCOPE_E_NOMEM;
	if (!cJSON_PrintPreallocated(&js->root, js->out, (int)js->out_cap, 0))
		return MEMSCOPE_E_IO;
	*text = js->out;
	return 0;
}

/* A whole Attr text that is not {k:v,...} as a JSON string. */
static int json_string(struct json_enc *js, const char *s, size_t n, const char **text)
{
	js->text.len = 0;
	if (ms__buf_append(&js->text, s, n) || ms__buf_append(&js->text, "", 1) ||
		ms__grow_array(&js->out, &js->out_cap, 6 * n + 8, 1))
		return MEMSCOPE_E_NOMEM;
	memset(&js->root, 0, sizeof(js->root));
	js->root.type = cJSON_String;
	js->root.valuestring = js->text.p;
	if (!cJSON_PrintPreallocated(&js->root, js->out, (int)js->out_cap, 0))
		return MEMSCOPE_E_IO;
	*text = js->out;
	return 0;
}

/*
 * The Attr column: {} for none (as the reference), an object for {k:v,...} text or a capture
 * event's typed fields, a JSON string for any other text ("{}" included, so it comes back).
 */
static int attr_json(struct memscope_db_writer *w, const struct memscope_event *ev,
	const char **text, struct memscope_error *err)
{
	struct memscope_attr synth[4];
	char synth_buf[MEMSCOPE_SYNTH_BUF];
	const struct memscope_attr *a = ev->attrs;
	uint32_t n = ev->n_attrs, i;
	int rc;

	for (i = 0; i < n; i++)
		if (memchr(a[i].val, '\0', a[i].val_len))
			return memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, ev->line,
				"Attr holds a NUL byte, which the database's JSON cannot carry");
	if (ev->flags & MEMSCOPE_EV_ATTR_RAW)
		rc = n ? json_string(&w->js, a[0].val, a[0].val_len, text)
		       : json_string(&w->js, "", 0, text);
	else if ((ev->flags & MEMSCOPE_EV_ATTR) && n)
		rc = json_object(&w->js, w->st, a, n, text);
	else if (ev->flags & MEMSCOPE_EV_ATTR)
		rc = json_string(&w->js, "{}", 2, text);
	else if (ev->flags & (MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_SIZE))
		rc = json_object(
			&w->js, w->st, synth, ms__event_synth_attrs(ev, synth, synth_buf), text);
	else
		return *text = "{}", 0;
	if (rc == MEMSCOPE_E_NOMEM)
		return nomem(err);
	if (rc)
		return memscope_error_set(err, rc, NULL, ev->line, "JSON encoding failed");
	return 0;
}

static int bind_text(sqlite3_stmt *s, int col, const char *p, size_t n)
{
	return sqlite3_bind_text64(s, col, p ? p : "", p ? n : 0, SQLITE_STATIC, SQLITE_UTF8);
}

static int bind_id(sqlite3_stmt *s, int col, uint64_t v)
{
	return v == MEMSCOPE_ID_NONE ? sqlite3_bind_null(s, col)
				     : sqlite3_bind_int64(s, col, (sqlite3_int64)v);
}

static struct src_info *src_of(struct memscope_db_writer *w, uint32_t src)
{
	if (ms__grow_array(&w->srcs, &w->cap_srcs, (size_t)src + 1, sizeof(*w->srcs)))
		return NULL;
	return &w->srcs[src];
}

/* One row of memscope_blocks: b, its MALLOC's row in b->tag, the row that ended it (0: none). */
static int insert_block(struct memscope_db_writer *w, const struct memscope_block *b,
	int64_t free_row, int leaked, const char *end_by)
{
	sqlite3_stmt *s = w->ins_block;
	char dev[MEMSCOPE_DEVICE_TEXT_MAX], ptr[19];
	const char *pool = memscope_subtype_name(b->pool), *owner, *op;
	int freed = (b->flags & MEMSCOPE_BLOCK_FREED) != 0;
	size_t n;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, b->src);
	bind_id(s, 2, b->pid);
	sqlite3_bind_text(s, 3, memscope_device_text(b->device, dev), -1, SQLITE_TRANSIENT);
	if (pool)
		sqlite3_bind_text(s, 4, pool, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 4);
	if (b->alloc_id)
		sqlite3_bind_int64(s, 5, (sqlite3_int64)b->alloc_id);
	else
		sqlite3_bind_null(s, 5);
	ms__fmt_hex16(ptr, b->ptr);
	if (b->flags & MEMSCOPE_BLOCK_NO_PTR)
		sqlite3_bind_null(s, 6);
	else
		bind_text(s, 6, ptr, 18);
	sqlite3_bind_int64(s, 7, b->size);
	if (b->owner && (owner = memscope_strtab_str(w->st, b->owner, &n)) != NULL)
		bind_text(s, 8, owner, n);
	else
		sqlite3_bind_null(s, 8);
	sqlite3_bind_int64(s, 9, (sqlite3_int64)b->alloc_ts_ns);
	for (int c = 10; c <= 11; c++)
		sqlite3_bind_null(s, c);
	if (freed) {
		sqlite3_bind_int64(s, 10, (sqlite3_int64)b->free_ts_ns);
		sqlite3_bind_int64(s, 11, (sqlite3_int64)(b->free_ts_ns - b->alloc_ts_ns));
	}
	sqlite3_bind_text(s, 12, end_by, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 13, leaked);
	sqlite3_bind_int64(s, 14, (sqlite3_int64)b->n_access);
	for (int c = 15; c <= BLOCK_COLS; c++)
		sqlite3_bind_null(s, c);
	if (b->n_access) {
		sqlite3_bind_int64(s, 15, (sqlite3_int64)b->first_access_ts_ns);
		sqlite3_bind_int64(s, 16, (sqlite3_int64)b->last_access_ts_ns);
	}
	sqlite3_bind_int64(s, 17, (sqlite3_int64)b->tag);
	sqlite3_bind_int64(s, 19, (sqlite3_int64)b->alloc_event_id);
	if (free_row)
		sqlite3_bind_int64(s, 18, free_row);
	if (freed)
		sqlite3_bind_int64(s, 20, (sqlite3_int64)b->free_event_id);
	if (b->op && (op = memscope_strtab_str(w->st, b->op, &n)) != NULL)
		bind_text(s, 21, op, n);
	if (sqlite3_step(s) != SQLITE_DONE)
		return -1;
	w->stats.n_blocks++;
	w->stats.n_unreleased += (uint64_t)leaked;
	return 0;
}

/*
 * Pair the row just written into blocks; rowid is its row. A FREE's block is written at once; a
 * block closed by the reference's shadow FREE waits for the end of its input, where it counts as
 * alive at exit unless a real row of its process came after that FREE (as memscope-leaks).
 */
static int pair_row(struct memscope_db_writer *w, const struct memscope_event *ev, int64_t rowid)
{
	struct memscope_block b;
	int r;

	if (memscope_event_is_real(ev)) {
		uint64_t ts = 0, unused;

		ms__u64map_get(&w->last_ts, ev->pid, &ts, &unused);
		if (ev->ts_ns >= ts && ms__u64map_put(&w->last_ts, ev->pid, ev->ts_ns, 0))
			return MEMSCOPE_E_NOMEM;
	}
	r = memscope_blocks_feed(w->blocks, ev, &b);
	if (r < 0)
		return r;
	switch (r) {
	case MEMSCOPE_PAIR_ALLOC:
		memscope_blocks_tag(w->blocks, (uint64_t)rowid);
		return 0;
	case MEMSCOPE_PAIR_REPLACED:
		memscope_blocks_tag(w->blocks, (uint64_t)rowid);
		return insert_block(w, &b, 0, 0, "replaced") ? MEMSCOPE_E_IO : 0;
	case MEMSCOPE_PAIR_FREE:
		return insert_block(w, &b, rowid, 0, "free") ? MEMSCOPE_E_IO : 0;
	case MEMSCOPE_PAIR_SHADOW_FREE:
		if (ms__grow_array(&w->shadowed, &w->cap_shadowed, w->n_shadowed + 1,
			    sizeof(*w->shadowed)))
			return MEMSCOPE_E_NOMEM;
		w->shadowed[w->n_shadowed++] = (struct shadowed){ b, rowid };
		return 0;
	case MEMSCOPE_PAIR_UNMATCHED_FREE:
		w->stats.n_unmatched_free++;
		return 0;
	default:
		return 0;
	}
}

/* Start the blocks of input src. */
static int begin_source(struct memscope_db_writer *w, uint32_t src, struct memscope_error *err)
{
	struct src_info *si = src_of(w, src);

	if (!si)
		return nomem(err);
	if (si->ended)
		return memscope_error_set(
			err, MEMSCOPE_E_ARG, NULL, 0, "input %u already ended", (unsigned)src);
	if (w->blocks_src == src)
		return 0;
	if (w->blocks)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0,
			"input %u started before input %u ended", (unsigned)src,
			(unsigned)w->blocks_src);
	if (!(w->blocks = memscope_blocks_new(w->st)))
		return nomem(err);
	w->blocks_src = src;
	return 0;
}

/* The row's texts that are not stable strings go into the batch's text buffer. */
static int add_span(struct memscope_db_writer *w, struct pending *p, int i, const char *s, size_t n)
{
	p->off[i] = w->batch_text.len;
	p->len[i] = n;
	return ms__buf_append(&w->batch_text, s, n);
}

static int add_stack(struct memscope_db_writer *w, struct pending *p, int i, uint32_t id)
{
	int rc;

	p->off[i] = w->batch_text.len;
	rc = ms__dump_stack_text(&w->batch_text, w->st, id);
	p->len[i] = w->batch_text.len - p->off[i];
	return rc;
}

/* Columns base+1 .. base+12 of s from row p, whose texts are in text. */
static void bind_row(sqlite3_stmt *s, int base, const struct pending *p, const char *text)
{
	int i;

	sqlite3_bind_int64(s, base + 1, (sqlite3_int64)p->id);
	bind_text(s, base + 2, p->kind, p->kind_len);
	bind_text(s, base + 3, p->type, p->type_len);
	bind_text(s, base + 4, text + p->off[SPAN_NAME], p->len[SPAN_NAME]);
	sqlite3_bind_int64(s, base + 5, (sqlite3_int64)p->ts_ns);
	bind_id(s, base + 6, p->pid);
	bind_id(s, base + 7, p->tid);
	for (i = SPAN_DEVICE; i < N_SPANS; i++)
		bind_text(s, base + 8 + i - SPAN_DEVICE, text + p->off[i], p->len[i]);
}

/*
 * Insert the rows waiting: a full batch with one multi-row INSERT (about half the time of one
 * statement per row), a partial one row by row. Their rowids were counted when they were queued.
 */
static int flush_rows(struct memscope_db_writer *w, struct memscope_error *err)
{
	const char *text = w->batch_text.p;
	unsigned i, n = w->n_batch;
	int rc = 0;

	if (n == BATCH_ROWS) {
		sqlite3_reset(w->ins_batch);
		for (i = 0; i < n; i++)
			bind_row(w->ins_batch, 12 * (int)i, &w->batch[i], text);
		rc = sqlite3_step(w->ins_batch) != SQLITE_DONE;
	}
	for (i = 0; i < n && n < BATCH_ROWS && !rc; i++) {
		sqlite3_reset(w->ins_dump);
		bind_row(w->ins_dump, 0, &w->batch[i], text);
		rc = sqlite3_step(w->ins_dump) != SQLITE_DONE;
	}
	if (rc)
		return ms__db_error(w, err, "insert");
	w->n_batch = 0;
	w->batch_text.len = 0;
	if (n && sqlite3_last_insert_rowid(w->db) != (sqlite3_int64)w->stats.n_rows)
		return memscope_error_set(err, MEMSCOPE_E_IO, NULL, 0,
			"insert: rowid %lld where %llu was counted",
			(long long)sqlite3_last_insert_rowid(w->db),
			(unsigned long long)w->stats.n_rows);
	return 0;
}

int memscope_db_writer_event(
	struct memscope_db_writer *w, const struct memscope_event *ev, struct memscope_error *err)
{
	struct pending *p = &w->batch[w->n_batch];
	char dev[MEMSCOPE_DEVICE_TEXT_MAX], ptr[19];
	const char *text, *attr;
	struct src_info *si;
	size_t n;
	int64_t rowid;
	int rc, quoted;

	if ((rc = begin_source(w, ev->src, err)) || (rc = attr_json(w, ev, &attr, err)))
		return rc;
	p->id = ev->id;
	p->ts_ns = ev->ts_ns;
	p->pid = ev->pid;
	p->tid = ev->tid;
	p->kind = ms__dump_kind_text(w->st, ev, 0, &p->kind_len);
	p->type = ms__dump_kind_text(w->st, ev, 1, &p->type_len);
	text = memscope_strtab_str(w->st, ev->name, &n);
	if (!text)
		text = "", n = 0;
	quoted = (ev->flags & MEMSCOPE_EV_NAME_QUOTED) != 0;
	p->off[SPAN_NAME] = w->batch_text.len;
	rc = (quoted && ms__buf_append(&w->batch_text, "\"", 1)) ||
	     ms__buf_append(&w->batch_text, text, n) ||
	     (quoted && ms__buf_append(&w->batch_text, "\"", 1));
	p->len[SPAN_NAME] = w->batch_text.len - p->off[SPAN_NAME];
	text = memscope_device_text(ev->device, dev);
	if (ev->flags & MEMSCOPE_EV_PTR)
		ms__fmt_hex16(ptr, ev->ptr);
	if (rc || add_span(w, p, SPAN_DEVICE, text, strlen(text)) ||
		add_span(w, p, SPAN_PTR, (ev->flags & MEMSCOPE_EV_PTR) ? ptr : "N/A",
			(ev->flags & MEMSCOPE_EV_PTR) ? 18 : 3) ||
		add_span(w, p, SPAN_ATTR, attr, strlen(attr)) ||
		add_stack(w, p, SPAN_STACK_PY, ev->stack_py) ||
		add_stack(w, p, SPAN_STACK_C, ev->stack_c))
		return nomem(err);
	rowid = (int64_t)++w->stats.n_rows;
	if (++w->n_batch == BATCH_ROWS && (rc = flush_rows(w, err)))
		return rc;
	si = &w->srcs[ev->src];
	if (!si->first_row)
		si->first_row = rowid;
	si->last_row = rowid;
	si->n_rows++;
	rc = pair_row(w, ev, rowid);
	if (rc == MEMSCOPE_E_NOMEM)
		return nomem(err);
	if (rc)
		return ms__db_error(w, err, "insert block");
	return 0;
}

/* The insert statement of table python_trace_{pid}, created on first use, into *ins. */
static int trace_table(
	struct memscope_db_writer *w, uint64_t pid, sqlite3_stmt **ins, struct memscope_error *err)
{
	static const char ins_sql[] = "INSERT INTO python_trace_%llu VALUES (?, ?, ?, ?, ?)";
	char sql[sizeof(trace_ddl) + 24];
	uint64_t i, unused;
	sqlite3_stmt *st = NULL;

	if (ms__u64map_get(&w->trace_of, pid, &i, &unused)) {
		*ins = w->traces[i].ins;
		return 0;
	}
	i = w->stats.n_trace_tables;
	if (ms__grow_array(&w->traces, &w->cap_traces, i + 1, sizeof(*w->traces)))
		return nomem(err);
	snprintf(sql, sizeof(sql), trace_ddl, (unsigned long long)pid);
	if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return ms__db_error(w, err, "create python_trace table");
	snprintf(sql, sizeof(sql), ins_sql, (unsigned long long)pid);
	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
		return ms__db_error(w, err, "create python_trace table");
	if (ms__u64map_put(&w->trace_of, pid, i, 0)) {
		sqlite3_finalize(st);
		return nomem(err);
	}
	w->traces[i].ins = *ins = st;
	w->stats.n_trace_tables++;
	return 0;
}

static int bind_time_text(sqlite3_stmt *s, int col, uint64_t v)
{
	char tmp[24];

	if (v == MEMSCOPE_ID_NONE)
		return sqlite3_bind_text(s, col, "N/A", 3, SQLITE_STATIC);
	return sqlite3_bind_text(s, col, tmp, (int)ms__fmt_u64(tmp, v), SQLITE_TRANSIENT);
}

int memscope_db_writer_trace(struct memscope_db_writer *w, const struct memscope_trace_row *row,
	struct memscope_error *err)
{
	sqlite3_stmt *ins = NULL;
	struct src_info *si = src_of(w, row->src);
	int rc;

	if (!si)
		return nomem(err);
	if (si->ended)
		return memscope_error_set(
			err, MEMSCOPE_E_ARG, NULL, 0, "input %u already ended", (unsigned)row->src);
	if ((rc = trace_table(w, row->pid, &ins, err)))
		return rc;
	sqlite3_reset(ins);
	bind_text(ins, 1, row->func, row->func_len);
	bind_time_text(ins, 2, row->start_ns);
	bind_time_text(ins, 3, row->end_ns);
	sqlite3_bind_int64(ins, 4, (sqlite3_int64)row->tid);
	sqlite3_bind_int64(ins, 5, (sqlite3_int64)row->pid);
	if (sqlite3_step(ins) != SQLITE_DONE)
		return ms__db_error(w, err, "insert");
	si->n_trace_rows++;
	w->stats.n_trace_rows++;
	return 0;
}

static int on_live(void *ctx, const struct memscope_block *b)
{
	return insert_block(ctx, b, 0, 1, "none") ? MEMSCOPE_E_IO : 0;
}

/* The blocks of the input being written that are still open: shadow-freed, then never freed. */
static int end_blocks(struct memscope_db_writer *w)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < w->n_shadowed && !rc; i++) {
		const struct shadowed *x = &w->shadowed[i];
		uint64_t last = 0, unused;

		ms__u64map_get(&w->last_ts, x->b.pid, &last, &unused);
		rc = insert_block(w, &x->b, x->free_row, memscope_shadow_free_at_exit(&x->b, last),
			     "shadow_free")
			     ? MEMSCOPE_E_IO
			     : 0;
	}
	if (!rc && w->blocks)
		rc = memscope_blocks_foreach_live(w->blocks, on_live, w);
	w->n_shadowed = 0;
	ms__u64map_clear(&w->last_ts);
	memscope_blocks_free(w->blocks);
	w->blocks = NULL;
	w->blocks_src = UINT32_MAX;
	return rc;
}

int memscope_db_writer_end_source(struct memscope_db_writer *w, uint32_t src, const char *name,
	enum memscope_format format, enum memscope_layout layout, struct memscope_error *err)
{
	sqlite3_stmt *s = w->ins_source;
	struct src_info *si = src_of(w, src);
	int rc;

	if (!si)
		return nomem(err);
	if (si->ended)
		return memscope_error_set(
			err, MEMSCOPE_E_ARG, NULL, 0, "input %u already ended", (unsigned)src);
	if (w->blocks && w->blocks_src != src)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0,
			"input %u ended while input %u is open", (unsigned)src,
			(unsigned)w->blocks_src);
	if ((rc = flush_rows(w, err)))
		return rc;
	rc = end_blocks(w);
	if (rc == MEMSCOPE_E_NOMEM)
		return nomem(err);
	if (rc)
		return ms__db_error(w, err, "insert block");
	si->ended = 1;
	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, src);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, memscope_format_name(format), -1, SQLITE_STATIC);
	if (layout == MEMSCOPE_LAYOUT_UNKNOWN)
		sqlite3_bind_null(s, 4);
	else
		sqlite3_bind_text(s, 4, layout == MEMSCOPE_LAYOUT_LEGACY ? "legacy" : "current", -1,
			SQLITE_STATIC);
	for (int c = 5; c <= 6; c++)
		sqlite3_bind_null(s, c);
	if (si->n_rows) {
		sqlite3_bind_int64(s, 5, si->first_row);
		sqlite3_bind_int64(s, 6, si->last_row);
	}
	sqlite3_bind_int64(s, 7, (sqlite3_int64)si->n_rows);
	sqlite3_bind_int64(s, 8, (sqlite3_int64)si->n_trace_rows);
	if (sqlite3_step(s) != SQLITE_DONE)
		return ms__db_error(w, err, "insert source");
	w->stats.n_sources++;
	return 0;
}

static void finalize_all(struct memscope_db_writer *w)
{
	size_t i;

	sqlite3_finalize(w->ins_dump);
	sqlite3_finalize(w->ins_batch);
	sqlite3_finalize(w->ins_block);
	sqlite3_finalize(w->ins_source);
	w->ins_dump = w->ins_batch = w->ins_block = w->ins_source = NULL;
	for (i = 0; i < w->stats.n_trace_tables; i++) {
		sqlite3_finalize(w->traces[i].ins);
		w->traces[i].ins = NULL;
	}
}

int memscope_db_writer_finish(struct memscope_db_writer *w, struct memscope_error *err)
{
	int rc;

	if (w->finished)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "already finished");
	if (w->blocks)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "input %u not ended",
			(unsigned)w->blocks_src);
	finalize_all(w);
	if (sqlite3_exec(w->db, finish_sql, NULL, NULL, NULL) != SQLITE_OK)
		return ms__db_error(w, err, "finish");
	w->finished = 1;
	rc = sqlite3_close(w->db);
	w->db = NULL;
	if (rc != SQLITE_OK)
		return memscope_error_set(
			err, MEMSCOPE_E_IO, NULL, 0, "close: %s", sqlite3_errstr(rc));
	return 0;
}

const struct memscope_db_stats *memscope_db_writer_stats(const struct memscope_db_writer *w)
{
	return &w->stats;
}

void memscope_db_writer_free(struct memscope_db_writer *w)
{
	if (!w)
		return;
	finalize_all(w);
	sqlite3_close(w->db);
	memscope_blocks_free(w->blocks);
	ms__u64map_free(&w->last_ts);
	ms__u64map_free(&w->trace_of);
	free(w->shadowed);
	free(w->traces);
	free(w->srcs);
	free(w->js.items);
	free(w->js.out);
	ms__buf_free(&w->js.text);
	ms__buf_free(&w->batch_text);
	free(w);
}
