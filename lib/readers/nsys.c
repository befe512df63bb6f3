/*
 * Reader of Nsight Systems SQLite exports (formats/nsys.md): the CUDA memory usage events and the
 * NVTX ranges and marks of a run, merged in time order into MALLOC/FREE of the CUDA pools, MSTX
 * events, and OP_LAUNCH pairs for the torch profiler's ProfilerStep#N ranges. Enums are resolved
 * by name through the export's ENUM_* tables, columns found by PRAGMA table_info.
 */
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../core/u64map.h"
#include "reader.h"

#define T_MEM "CUDA_GPU_MEMORY_USAGE_EVENTS"
#define T_NVTX "NVTX_EVENTS"
#define T_KIND "ENUM_CUDA_MEM_KIND"
#define T_OPER "ENUM_CUDA_DEV_MEM_EVENT_OPER"
#define T_EVTYPE "ENUM_NSYS_EVENT_TYPE"
#define T_SESSION "TARGET_INFO_SESSION_START_TIME"

/* The enum tables read. */
enum etab { E_KIND, E_OPER, E_EVTYPE };
static const char *const etab_names[3] = { T_KIND, T_OPER, T_EVTYPE };

/* Global ids: the process is bits 24..47 of a globalPid or globalTid, the thread bits 0..23. */
#define GID_PID(g) (((uint64_t)(g) >> 24) & 0xffffff)
#define GID_TID(g) ((uint64_t)(g)&0xffffff)

/* The memory kinds in nsys' numbering (ids 0 to 7): their enum names' suffixes, labels, pools. */
static const struct {
	const char *name, *label;
	unsigned pool;
} kinds[] = {
	{ "PAGEABLE", "Pageable", MEMSCOPE_SUB_HOST },
	{ "PINNED", "Pinned", MEMSCOPE_SUB_HOST_PINNED },
	{ "DEVICE", "Device", MEMSCOPE_SUB_CUDA },
	{ "ARRAY", "Array", MEMSCOPE_SUB_CUDA },
	{ "MANAGED", "Managed", MEMSCOPE_SUB_CUDA_MANAGED },
	{ "DEVICE_STATIC", "Device Static", MEMSCOPE_SUB_CUDA },
	{ "MANAGED_STATIC", "Managed Static", MEMSCOPE_SUB_CUDA_MANAGED },
	{ "UNKNOWN", "Unknown", MEMSCOPE_SUB_CUDA },
};

/* The operations in nsys' numbering (allocation 0, deallocation 1); CUPTI says RELEASE. */
enum { OP_ALLOC, OP_FREE };
static const struct {
	const char *name, *label;
	int op;
} opers[] = {
	{ "ALLOCATION", "Allocation", OP_ALLOC },
	{ "DEALLOCATION", "Deallocation", OP_FREE },
	{ "RELEASE", "Release", OP_FREE },
};

/* The NVTX event types that are events, by name, with nsys' ids for exports without the enum. */
enum { NV_MARK, NV_RANGE };
static const struct {
	const char *name;
	int64_t id;
	int what;
} nv_types[] = {
	{ "NvtxMark", 34, NV_MARK },
	{ "NvtxPushPopRange", 59, NV_RANGE },
	{ "NvtxStartEndRange", 60, NV_RANGE },
	{ "NvtxtPushPopRange", 70, NV_RANGE },
	{ "NvtxtStartEndRange", 71, NV_RANGE },
};

/* An enum table resolved: id[i] means val[i] (an index into kinds, an OP_, an NV_; -1 none). */
#define ENUM_MAX 256
struct enum_map {
	int64_t id[ENUM_MAX];
	int val[ENUM_MAX];
	unsigned n;
};

/* The columns read of the memory table, in the order of its SELECT (after the rowid). */
enum {
	M_START,
	M_ADDRESS,
	M_BYTES,
	M_KIND,
	M_OPER,
	M_PID,
	M_DEVICE,
	M_CONTEXT,
	M_NAME,
	M_CORR,
	M_STREAM,
	N_MCOLS
};
#define M_REQUIRED 5 /* the first five */
static const char *const mcols[N_MCOLS] = { "start", "address", "bytes", "memKind",
	"memoryOperationType", "globalPid", "deviceId", "contextId", "name", "correlationId",
	"streamId" };
/* columns of the memory table known and not read: not counted as unknown */
static const char *const mcols_unread[] = { "pc", "localMemoryPool", "importedMemoryPool" };

/* The columns of NVTX_EVENTS read, in the order of its SELECT (after the rowid): in the place of
 * textId (N_STRING), its StringIds value. */
enum { N_START, N_TYPE, N_END, N_TEXT, N_STRING, N_TID, N_NCOLS };
#define N_REQUIRED 2 /* start, eventType */
static const char *const ncols[N_NCOLS] = { "start", "eventType", "end", "text", "textId",
	"globalTid" };

/* One ordered query: its current row, and that row's time for the merge. */
struct cursor {
	sqlite3_stmt *st;
	const char *table;
	int live; /* a row is current */
	int64_t key;
	int64_t rowid;
};

struct nsys {
	struct memscope_source *src;
	memscope_event_fn fn;
	void *ctx;
	struct memscope_error *err;
	struct db_conn conn; /* the database; db is its connection */
	sqlite3 *db;
	/* merged in this order on equal times: memory rows, range ends, NVTX starts and marks */
	struct cursor mem, end, start;
	sqlite3_stmt *string_id; /* StringIds value of an id (a memory name given as one) */
	struct enum_map kind, oper, nv;
	uint64_t epoch; /* the session start (ns since the Unix epoch), 0 when unknown */
	uint64_t next_id;
	struct u64map open; /* NVTX rowid of a range whose end is to come -> its start's ID, and
			       the name of its op (ProfilerStep#N) or 0 (an MSTX range) */
	uint32_t key_kind, key_name, key_corr, key_stream, key_context, key_nvtx, name_step;
	int bad; /* the row has a bad value: skipped (lenient), or the read stops with bad_rc */
	int bad_rc;
	uint64_t n_rows, n_read; /* rows to read (an estimate from the rowids) and read, progress */
	struct ev_attrs ax;
};

static int sql_fail(struct nsys *r, int rc, const char *what)
{
	char text[96];

	snprintf(text, sizeof(text), "cannot read %s", what);
	return ms__db_error(r->db, rc == SQLITE_NOMEM ? MEMSCOPE_E_NOMEM : MEMSCOPE_E_INVALID,
		r->src->name, 0, text, r->err);
}

static int nomem(struct nsys *r, uint64_t line)
{
	return memscope_error_set(r->err, MEMSCOPE_E_NOMEM, r->src->name, line, "out of memory");
}

/* A bad row of cursor c: printf-style complaint after the table's name. */
static int bad_row(struct nsys *r, const struct cursor *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad_row(struct nsys *r, const struct cursor *c, const char *fmt, ...)
{
	char msg[MEMSCOPE_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ms__source_bad_row(r->src, r->err, (uint64_t)c->rowid, "%s: %s", c->table, msg);
}

/* ------------------------------------------------------------------------------------------ */
/* the schema */

/* 1 when table exists (a table, not a view), 0 when not, or the error. */
static int has_table(struct nsys *r, const char *table)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(r->db,
		"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st, NULL);

	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_fail(r, rc, "the schema");
	return rc == SQLITE_ROW;
}

/* Whether col is one of the memory table's columns known and not read (a name or a prefix). */
static int unread_col(const char *col)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mcols_unread); i++)
		if (strncasecmp(col, mcols_unread[i], strlen(mcols_unread[i])) == 0)
			return 1;
	return 0;
}

/*
 * Which of the n names (n <= 32) table has as columns, bit i for names[i], into *found; with
 * count, its other columns (but those unread_col knows) are counted as ignored. 0 or the error.
 */
static int table_columns(struct nsys *r, const char *table, const char *const *names, unsigned n,
	int count, uint32_t *found)
{
	sqlite3_stmt *st = NULL;
	unsigned i;
	int rc = sqlite3_prepare_v2(r->db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL);

	*found = 0;
	if (rc == SQLITE_OK)
		sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(st, 0);
		int known = 0;

		for (i = 0; col && i < n; i++)
			if (strcasecmp(col, names[i]) == 0) {
				*found |= 1u << i;
				known = 1;
			}
		if (count && !known && col && !unread_col(col))
			r->src->stats.n_ignored_columns++;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE || rc == SQLITE_OK ? 0 : sql_fail(r, rc, table);
}

/* 0, or the error naming the first of the n required columns that found lacks. */
static int need_columns(
	struct nsys *r, const char *table, const char *const *names, unsigned n, uint32_t found)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (!(found & (1u << i)))
			return memscope_error_set(r->err, MEMSCOPE_E_INVALID, r->src->name, 0,
				"table %s has no column \"%s\"", table, names[i]);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the enums */

/* The value id has in m, -1 when it has none. */
static int enum_find(const struct enum_map *m, int64_t id)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (m->id[i] == id)
			return m->val[i];
	return -1;
}

/* Add id -> val to m unless m has id already (its first row counts) or is full. */
static void enum_add(struct enum_map *m, int64_t id, int val)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (m->id[i] == id)
			return;
	if (m->n < ENUM_MAX) {
		m->id[m->n] = id;
		m->val[m->n++] = val;
	}
}

/* s without what comes up to the last marker in it ("CUDA_MEMOPR_MEMORY_KIND_DEVICE" after
 * "_KIND_" is "DEVICE"); s whole when the marker is not in it. */
static const char *after_marker(const char *s, const char *marker)
{
	const char *p, *last = NULL;

	for (p = s; (p = strstr(p, marker)); p++)
		last = p;
	return last ? last + strlen(marker) : s;
}

/* The value of an enum row of table t by its name, else its label (either may be NULL); -1 when
 * neither is one memscope knows. */
static int resolve(enum etab t, const char *name, const char *label)
{
	size_t i;

	if (t == E_EVTYPE) {
		for (i = 0; name && i < ARRAY_SIZE(nv_types); i++)
			if (strcasecmp(name, nv_types[i].name) == 0)
				return nv_types[i].what;
		return -1;
	}
	if (t == E_KIND) {
		const char *s = name ? after_marker(name, "_KIND_") : NULL;

		for (i = 0; i < ARRAY_SIZE(kinds); i++)
			if ((s && strcasecmp(s, kinds[i].name) == 0) ||
				(label && strcasecmp(label, kinds[i].label) == 0))
				return (int)i;
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(opers); i++) {
		const char *s = name ? after_marker(name, "_OPR_") : NULL;

		if ((s && strcasecmp(s, opers[i].name) == 0) ||
			(label && strcasecmp(label, opers[i].label) == 0))
			return opers[i].op;
	}
	return -1;
}

/* nsys' own numbering of table t, for an export without it. */
static void enum_default(struct enum_map *m, enum etab t)
{
	size_t i;

	if (t == E_KIND)
		for (i = 0; i < ARRAY_SIZE(kinds); i++)
			enum_add(m, (int64_t)i, (int)i);
	else if (t == E_OPER)
		for (i = 0; i < 2; i++)
			enum_add(m, (int64_t)i, opers[i].op);
	else
		for (i = 0; i < ARRAY_SIZE(nv_types); i++)
			enum_add(m, nv_types[i].id, nv_types[i].what);
}

/*
 * Read enum table t into m: each row's id and value by its name or label; nsys' numbering when the
 * export has no such table, *present then 0. Rows beyond ENUM_MAX and rows whose id is not an
 * integer are left out (their ids are then unknown). 0 or the error.
 */
static int load_enum(struct nsys *r, enum etab t, struct enum_map *m, int *present)
{
	static const char *const cols[3] = { "id", "name", "label" };
	const char *table = etab_names[t];
	sqlite3_stmt *st = NULL;
	uint32_t found;
	char sql[160];
	int rc;

	m->n = 0;
	if ((rc = has_table(r, table)) <= 0) {
		*present = 0;
		if (!rc)
			enum_default(m, t);
		return rc;
	}
	*present = 1;
	if ((rc = table_columns(r, table, cols, 3, 0, &found)) ||
		(rc = need_columns(r, table, cols, 1, found)))
		return rc;
	snprintf(sql, sizeof(sql), "SELECT id, %s, %s FROM \"%s\" ORDER BY rowid",
		found & 2 ? "name" : "NULL", found & 4 ? "label" : "NULL", table);
	rc = sqlite3_prepare_v2(r->db, sql, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = SQLITE_OK;
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
			continue;
		enum_add(m, sqlite3_column_int64(st, 0),
			resolve(t, (const char *)sqlite3_column_text(st, 1),
				(const char *)sqlite3_column_text(st, 2)));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE || rc == SQLITE_OK ? 0 : sql_fail(r, rc, table);
}

/* Whether some id of m resolves to a value. */
static int enum_any(const struct enum_map *m)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (m->val[i] >= 0)
			return 1;
	return 0;
}

/* The memory enums, with a note for each the export lacks. 0 or the error. */
static int load_mem_enums(struct nsys *r)
{
	int rc, kind_table = 1, oper_table = 1;

	if ((rc = load_enum(r, E_KIND, &r->kind, &kind_table)) ||
		(rc = load_enum(r, E_OPER, &r->oper, &oper_table)))
		return rc;
	if (!kind_table)
		ms__source_notice(r->src,
			"no %s table: memKind read in nsys' numbering (0 Pageable, 1 Pinned, 2 "
			"Device, 3 Array, 4 Managed, 5 Device Static, 6 Managed Static, 7 Unknown)",
			T_KIND);
	if (!oper_table)
		ms__source_notice(r->src,
			"no %s table: memoryOperationType read in nsys' numbering (0 allocation, 1 "
			"deallocation)",
			T_OPER);
	return 0;
}

/* The session start into r->epoch, when the export says it; a note when not. 0 or the error. */
static int load_epoch(struct nsys *r)
{
	static const char *const cols[1] = { "utcEpochNs" };
	sqlite3_stmt *st = NULL;
	uint32_t found = 0;
	int rc = has_table(r, T_SESSION), ok = 0;

	if (rc > 0)
		rc = table_columns(r, T_SESSION, cols, 1, 0, &found);
	if (rc < 0)
		return rc;
	if (found &&
		(rc = sqlite3_prepare_v2(r->db,
			 "SELECT utcEpochNs FROM " T_SESSION " ORDER BY rowid LIMIT 1", -1, &st,
			 NULL)) == SQLITE_OK &&
		(rc = sqlite3_step(st)) == SQLITE_ROW &&
		sqlite3_column_type(st, 0) == SQLITE_INTEGER && sqlite3_column_int64(st, 0) >= 0) {
		r->epoch = (uint64_t)sqlite3_column_int64(st, 0);
		ok = 1;
	}
	sqlite3_finalize(st);
	if (found && rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_fail(r, rc, T_SESSION);
	if (!ok)
		ms__source_notice(r->src,
			"no session start time (%s.utcEpochNs): timestamps are nanoseconds since "
			"the session start",
			T_SESSION);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the queries */

/* The merge key of column col of c's row: its integer; NULLs first and text last, as SQLite
 * orders them. */
static int64_t merge_key(sqlite3_stmt *st, int col)
{
	double d;

	switch (sqlite3_column_type(st, col)) {
	case SQLITE_INTEGER:
		return sqlite3_column_int64(st, col);
	case SQLITE_FLOAT:
		d = sqlite3_column_double(st, col);
		return d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
	case SQLITE_NULL:
		return INT64_MIN;
	default:
		return INT64_MAX;
	}
}

/* Step c to its next row (rowid in column 0, time in column 1). 0 or the error. */
static int cursor_next(struct nsys *r, struct cursor *c)
{
	int rc;

	if (!c->st)
		return 0;
	rc = sqlite3_step(c->st);
	c->live = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_fail(r, rc, c->table);
	if (c->live) {
		c->rowid = sqlite3_column_int64(c->st, 0);
		c->key = merge_key(c->st, 1);
	}
	return 0;
}

static int prepare(struct nsys *r, struct cursor *c, const char *table, const char *sql)
{
	int rc = sqlite3_prepare_v2(r->db, sql, -1, &c->st, NULL);

	c->table = table;
	return rc == SQLITE_OK ? 0 : sql_fail(r, rc, table);
}

/* Append the strings (up to a NULL) to b, each unless an append before failed: 0 or
 * MEMSCOPE_E_NOMEM. */
static int put(struct buf *b, ...)
{
	const char *s;
	va_list ap;
	int rc = 0;

	va_start(ap, b);
	while ((s = va_arg(ap, const char *)) && !rc)
		rc = ms__buf_append(b, s, strlen(s));
	va_end(ap);
	return rc;
}

/* Append ", col" (as prefix"col"), or ", NULL" when the table lacks it, to the SELECT in b. */
static int select_col(struct buf *b, const char *prefix, const char *col, int present)
{
	return present ? put(b, ", ", prefix, "\"", col, "\"", (char *)NULL)
		       : put(b, ", NULL", (char *)NULL);
}

/* The memory rows in time order. 0 or the error. */
static int open_mem(struct nsys *r)
{
	struct buf sql = { 0 };
	uint32_t found;
	unsigned i;
	int rc;

	if ((rc = table_columns(r, T_MEM, mcols, N_MCOLS, 1, &found)) ||
		(rc = need_columns(r, T_MEM, mcols, M_REQUIRED, found)))
		return rc;
	rc = put(&sql, "SELECT rowid", (char *)NULL);
	for (i = 0; i < N_MCOLS && !rc; i++)
		rc = select_col(&sql, "", mcols[i], (found >> i) & 1);
	if (!rc)
		rc = ms__buf_append(&sql, " FROM " T_MEM " ORDER BY \"start\", rowid",
			sizeof(" FROM " T_MEM " ORDER BY \"start\", rowid")); /* with the NUL */
	rc = rc ? nomem(r, 0) : prepare(r, &r->mem, T_MEM, sql.p);
	ms__buf_free(&sql);
	return rc;
}

/* The eventType ids of m with value what (any event type: what < 0) as an SQL list into b. */
static int id_list(struct buf *b, const struct enum_map *m, int what)
{
	unsigned i;
	int rc = 0, k = 0;

	for (i = 0; i < m->n && !rc; i++) {
		char num[24];

		if (m->val[i] < 0 || (what >= 0 && m->val[i] != what))
			continue;
		snprintf(num, sizeof(num), "%lld", (long long)m->id[i]);
		rc = put(b, k++ ? ", " : "", num, (char *)NULL);
	}
	return rc;
}

/* the range ends' query after its event types: only ranges that end after they start */
static const char nvtx_ends_tail[] =
	") AND typeof(\"start\") = 'integer' AND typeof(\"end\") = 'integer' AND \"end\" > "
	"\"start\" ORDER BY \"end\", rowid";

/*
 * The NVTX starts and marks in time order, and the ends of ranges that end after they start in
 * the order of their ends (start and end integers: a start row with other values is bad, and its
 * end is not read). 0 or the error; no cursor when the export has no NVTX event type.
 */
static int open_nvtx(struct nsys *r, uint32_t found, int strings)
{
	struct buf sql = { 0 };
	unsigned i;
	int rc;

	rc = put(&sql, "SELECT n.rowid", (char *)NULL);
	for (i = 0; i < N_NCOLS && !rc; i++)
		if (i == N_STRING && ((found >> i) & 1) && strings)
			rc = put(&sql,
				", (SELECT value FROM StringIds WHERE id = n.\"textId\" LIMIT 1)",
				(char *)NULL);
		else
			rc = select_col(&sql, "n.", ncols[i], i != N_STRING && ((found >> i) & 1));
	if (!rc)
		rc = put(&sql, " FROM " T_NVTX " AS n WHERE n.\"eventType\" IN (", (char *)NULL);
	if (!rc)
		rc = id_list(&sql, &r->nv, -1);
	if (!rc)
		rc = ms__buf_append(&sql, ") ORDER BY n.\"start\", n.rowid",
			sizeof(") ORDER BY n.\"start\", n.rowid")); /* with the NUL */
	if (!rc && (rc = prepare(r, &r->start, T_NVTX, sql.p)) == 0 && ((found >> N_END) & 1)) {
		sql.len = 0;
		rc = put(&sql, "SELECT rowid, \"end\", ",
			(found >> N_TID) & 1 ? "\"globalTid\"" : "NULL",
			" FROM " T_NVTX " WHERE \"eventType\" IN (", (char *)NULL);
		if (!rc)
			rc = id_list(&sql, &r->nv, NV_RANGE);
		if (!rc)
			rc = ms__buf_append(&sql, nvtx_ends_tail, sizeof(nvtx_ends_tail));
		if (!rc)
			rc = prepare(r, &r->end, T_NVTX, sql.p);
	}
	ms__buf_free(&sql);
	return rc == MEMSCOPE_E_NOMEM ? nomem(r, 0) : rc;
}

/* 1 when the export has a table StringIds(id, value), 0 when not, or the error. */
static int has_strings(struct nsys *r)
{
	static const char *const cols[2] = { "id", "value" };
	uint32_t found = 0;
	int rc = has_table(r, "StringIds");

	if (rc > 0)
		rc = table_columns(r, "StringIds", cols, 2, 0, &found);
	return rc < 0 ? rc : found == 3;
}

/* NVTX_EVENTS when the export has it and the caller wants its events: its event types and
 * columns, then its queries. 0 or the error. */
static int setup_nvtx(struct nsys *r)
{
	uint32_t skip = r->src->opts.skip_kinds, found;
	int rc, present = 1;

	if ((skip & (1u << MEMSCOPE_KIND_MSTX)) && (skip & (1u << MEMSCOPE_KIND_OP_LAUNCH)))
		return 0;
	if ((rc = has_table(r, T_NVTX)) <= 0)
		return rc;
	if ((rc = load_enum(r, E_EVTYPE, &r->nv, &present)) ||
		(rc = table_columns(r, T_NVTX, ncols, N_NCOLS, 0, &found)) ||
		(rc = need_columns(r, T_NVTX, ncols, N_REQUIRED, found)))
		return rc;
	if (!present)
		ms__source_notice(r->src,
			"no %s table: NVTX eventType read in nsys' numbering (34 mark, 59, 60, 70, "
			"71 ranges)",
			T_EVTYPE);
	if (!enum_any(&r->nv) || (rc = has_strings(r)) < 0)
		return rc;
	return open_nvtx(r, found, rc);
}

/* The StringIds lookup of a memory row's name given as an id, when the export has StringIds. */
static int setup_strings(struct nsys *r)
{
	int rc = has_strings(r);

	if (rc <= 0)
		return rc;
	rc = sqlite3_prepare_v2(r->db, "SELECT value FROM StringIds WHERE id = ?1 LIMIT 1", -1,
		&r->string_id, NULL);
	return rc == SQLITE_OK ? 0 : sql_fail(r, rc, "StringIds");
}

/* ------------------------------------------------------------------------------------------ */
/* rows to events */

/* Column col of c's row as an integer: 1 and *v; 0 when NULL and not required; otherwise the
 * row is bad (r->bad), 0. */
static int get_int(
	struct nsys *r, struct cursor *c, int col, const char *name, int required, int64_t *v)
{
	sqlite3_stmt *st = c->st;
	int type = sqlite3_column_type(st, col);
	const char *s;

	if (type == SQLITE_INTEGER) {
		*v = sqlite3_column_int64(st, col);
		return 1;
	}
	if (r->bad || (type == SQLITE_NULL && !required))
		return 0;
	r->bad = 1;
	if (type == SQLITE_NULL)
		r->bad_rc = bad_row(r, c, "no %s", name);
	else if (type == SQLITE_FLOAT)
		r->bad_rc = bad_row(
			r, c, "%s %g is not an integer", name, sqlite3_column_double(st, col));
	else if (type == SQLITE_BLOB)
		r->bad_rc = bad_row(r, c, "%s is a blob, not an integer", name);
	else if ((s = (const char *)sqlite3_column_text(st, col)))
		r->bad_rc = bad_row(r, c, "%s \"%.*s\" is not an integer", name,
			CLIP(sqlite3_column_bytes(st, col)), s);
	else
		r->bad_rc = nomem(r, (uint64_t)c->rowid);
	return 0;
}

/* Column col of c's row as text into *s, *len: 1 when not NULL (nor empty), else 0. */
static int get_text(struct cursor *c, int col, const char **s, size_t *len)
{
	*s = (const char *)sqlite3_column_text(c->st, col);
	*len = *s ? (size_t)sqlite3_column_bytes(c->st, col) : 0;
	return *len > 0;
}

static void event_init(struct nsys *r, struct memscope_event *ev, unsigned kind, unsigned subtype,
	const struct cursor *c)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint16_t)kind;
	ev->subtype = (uint16_t)subtype;
	ms__event_set_pool(ev, r->src->st);
	ev->pid = MEMSCOPE_ID_NONE;
	ev->tid = MEMSCOPE_ID_NONE;
	ev->device = MEMSCOPE_DEVICE_NONE;
	ev->name = MEMSCOPE_STR_NA;
	ev->line = (uint64_t)c->rowid;
	ev->attrs = r->ax.a;
	ev->src = r->src->opts.src;
}

static int deliver(struct nsys *r, struct memscope_event *ev)
{
	if (ev->n_attrs)
		ev->flags |= MEMSCOPE_EV_ATTR;
	ev->id = ++r->next_id;
	return source_deliver(r->src, r->fn, r->ctx, ev);
}

/* The variable name of a memory row as an attr: its text, or the StringIds value of an id. */
static int mem_name(struct nsys *r, struct memscope_event *ev)
{
	struct cursor *c = &r->mem;
	const char *s;
	size_t len;
	int rc;

	if (sqlite3_column_type(c->st, 1 + M_NAME) == SQLITE_INTEGER && r->string_id) {
		sqlite3_reset(r->string_id);
		sqlite3_bind_int64(r->string_id, 1, sqlite3_column_int64(c->st, 1 + M_NAME));
		rc = sqlite3_step(r->string_id);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return sql_fail(r, rc, "StringIds");
		s = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(r->string_id, 0) : NULL;
		len = s ? (size_t)sqlite3_column_bytes(r->string_id, 0) : 0;
		if (len)
			ev_attr_text(&r->ax, ev, r->key_name, s, len);
		return 0;
	}
	if (get_text(c, 1 + M_NAME, &s, &len))
		ev_attr_text(&r->ax, ev, r->key_name, s, len);
	return 0;
}

/* One memory row: a MALLOC or FREE of its kind's pool. 0 or the status to stop with. */
static int mem_row(struct nsys *r)
{
	struct cursor *c = &r->mem;
	struct memscope_event ev;
	int64_t v[N_MCOLS] = { 0 };
	int has[N_MCOLS], i, k, op, rc;

	r->bad = 0;
	for (i = 0; i < N_MCOLS; i++)
		has[i] = i == M_NAME ? 0 : get_int(r, c, 1 + i, mcols[i], i < M_REQUIRED, &v[i]);
	if (r->bad)
		return r->bad_rc;
	if (v[M_START] < 0)
		return bad_row(r, c, "start %lld is negative", (long long)v[M_START]);
	if (v[M_BYTES] < 0)
		return bad_row(r, c, "bytes %lld is negative", (long long)v[M_BYTES]);
	if (has[M_DEVICE] && (v[M_DEVICE] < 0 || v[M_DEVICE] > INT32_MAX))
		return bad_row(r, c, "deviceId %lld is not a device", (long long)v[M_DEVICE]);
	if ((k = enum_find(&r->kind, v[M_KIND])) < 0)
		return bad_row(r, c, "memKind %lld is not a memory kind of %s",
			(long long)v[M_KIND], T_KIND);
	if ((op = enum_find(&r->oper, v[M_OPER])) < 0)
		return bad_row(r, c,
			"memoryOperationType %lld is neither an allocation nor a deallocation of "
			"%s",
			(long long)v[M_OPER], T_OPER);
	event_init(r, &ev, op == OP_ALLOC ? MEMSCOPE_KIND_MALLOC : MEMSCOPE_KIND_FREE,
		kinds[k].pool, c);
	ev.ts_ns = (uint64_t)v[M_START] + r->epoch;
	if (has[M_PID])
		ev.pid = GID_PID(v[M_PID]);
	if (has[M_DEVICE])
		ev.device = (int32_t)v[M_DEVICE];
	ev.ptr = (uint64_t)v[M_ADDRESS];
	ev.size = v[M_BYTES];
	ev.flags = MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE;
	ev_attr_num(&r->ax, &ev, MEMSCOPE_STR_SIZE, v[M_BYTES]);
	ev_attr_text(&r->ax, &ev, r->key_kind, kinds[k].label, strlen(kinds[k].label));
	if ((rc = mem_name(r, &ev)))
		return rc;
	if (has[M_CORR])
		ev_attr_num(&r->ax, &ev, r->key_corr, v[M_CORR]);
	if (has[M_STREAM])
		ev_attr_num(&r->ax, &ev, r->key_stream, v[M_STREAM]);
	if (has[M_CONTEXT])
		ev_attr_num(&r->ax, &ev, r->key_context, v[M_CONTEXT]);
	return deliver(r, &ev);
}

/* Whether s[0..n) names a step by the common convention: "step", or "step" and a decimal number,
 * perhaps after one of " _#-:" ("step 3", "Step_12", "step#4"), any case. */
static int step_name(const char *s, size_t n)
{
	size_t i = 4;

	if (n < 4 || strncasecmp(s, "step", 4) != 0)
		return 0;
	if (n == 4)
		return 1;
	if (memchr(" _#-:", s[4], 5))
		i = 5;
	if (i == n)
		return 0;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* The end of the range whose start was event start_id: an ATEN_END named op for a
 * ProfilerStep#N, else an MSTX Range_end named "Range end from id {start_id}". */
static int range_end(struct nsys *r, const struct cursor *c, uint64_t start_id, uint32_t op,
	uint64_t ts, int has_tid, int64_t gtid)
{
	struct memscope_event ev;
	char name[40];

	event_init(r, &ev, op ? MEMSCOPE_KIND_OP_LAUNCH : MEMSCOPE_KIND_MSTX,
		op ? MEMSCOPE_SUB_ATEN_END : MEMSCOPE_SUB_RANGE_END, c);
	ev.ts_ns = ts;
	if (has_tid) {
		ev.pid = GID_PID(gtid);
		ev.tid = GID_TID(gtid);
	}
	if (op) {
		ev.name = op;
	} else {
		memcpy(name, "Range end from id ", 18);
		ev.flags = MEMSCOPE_EV_NAME_QUOTED;
		if (memscope_strtab_intern(
			    r->src->st, name, 18 + ms__fmt_u64(name + 18, start_id), &ev.name))
			return nomem(r, ev.line);
	}
	return deliver(r, &ev);
}

/* The name of an NVTX row: its text, else the StringIds value of its textId, else empty. */
static void nvtx_name(struct nsys *r, const char **s, size_t *len)
{
	if (!get_text(&r->start, 1 + N_TEXT, s, len) &&
		!get_text(&r->start, 1 + N_STRING, s, len)) {
		*s = "";
		*len = 0;
	}
}

/* One NVTX start or mark: a Mark, a Range_start (of "step start" for a step range), or an
 * ATEN_START for a ProfilerStep#N; a range's end is remembered for when its time comes, or
 * delivered now when it ends as it starts. 0 or the status to stop with. */
static int nvtx_row(struct nsys *r)
{
	struct cursor *c = &r->start;
	struct memscope_event ev;
	int64_t start = 0, end = 0, type = 0, gtid = 0;
	int has_end, has_tid, what, step, rc;
	uint32_t op = 0;
	const char *s;
	size_t len;

	r->bad = 0;
	get_int(r, c, 1 + N_START, "start", 1, &start);
	get_int(r, c, 1 + N_TYPE, "eventType", 1, &type);
	has_end = get_int(r, c, 1 + N_END, "end", 0, &end);
	has_tid = get_int(r, c, 1 + N_TID, "globalTid", 0, &gtid);
	if (r->bad)
		return r->bad_rc;
	if (start < 0)
		return bad_row(r, c, "start %lld is negative", (long long)start);
	what = enum_find(&r->nv, type);
	if (what == NV_RANGE && has_end && end < start)
		return bad_row(
			r, c, "end %lld is before start %lld", (long long)end, (long long)start);
	nvtx_name(r, &s, &len);
	step = what == NV_RANGE && step_name(s, len);
	if (what == NV_RANGE && len > 13 && memcmp(s, "ProfilerStep#", 13) == 0)
		event_init(r, &ev, MEMSCOPE_KIND_OP_LAUNCH, MEMSCOPE_SUB_ATEN_START, c);
	else
		event_init(r, &ev, MEMSCOPE_KIND_MSTX,
			what == NV_RANGE ? MEMSCOPE_SUB_RANGE_START : MEMSCOPE_SUB_MARK, c);
	if (ev.kind == MEMSCOPE_KIND_MSTX)
		ev.flags = MEMSCOPE_EV_NAME_QUOTED;
	ev.ts_ns = (uint64_t)start + r->epoch;
	if (has_tid) {
		ev.pid = GID_PID(gtid);
		ev.tid = GID_TID(gtid);
	}
	if (step) {
		ev.name = r->name_step;
		ev_attr_text(&r->ax, &ev, r->key_nvtx, s, len);
	} else if (memscope_strtab_intern(r->src->st, s, len, &ev.name)) {
		return nomem(r, ev.line);
	}
	if (ev.kind == MEMSCOPE_KIND_OP_LAUNCH)
		op = ev.name;
	if ((rc = deliver(r, &ev)) || what != NV_RANGE || !has_end)
		return rc;
	if (end == start)
		return range_end(r, c, ev.id, op, ev.ts_ns, has_tid, gtid);
	return ms__u64map_put(&r->open, (uint64_t)c->rowid, ev.id, op) ? nomem(r, ev.line) : 0;
}

/* One range end at its time: delivered when its start was. 0 or the status to stop with. */
static int end_row(struct nsys *r)
{
	struct cursor *c = &r->end;
	uint64_t id, op;
	int64_t gtid = 0;
	int has_tid;

	if (!ms__u64map_del(&r->open, (uint64_t)c->rowid, &id, &op))
		return 0; /* its start was a bad row, skipped */
	has_tid = sqlite3_column_type(c->st, 2) == SQLITE_INTEGER;
	if (has_tid)
		gtid = sqlite3_column_int64(c->st, 2);
	return range_end(r, c, id, (uint32_t)op, (uint64_t)c->key + r->epoch, has_tid, gtid);
}

/* ------------------------------------------------------------------------------------------ */
/* the read */

/* The cursor whose row comes next: the least time, then memory rows, range ends, NVTX starts. */
static struct cursor *next_cursor(struct nsys *r)
{
	struct cursor *c[3] = { &r->mem, &r->end, &r->start }, *best = NULL;
	int i;

	for (i = 0; i < 3; i++)
		if (c[i]->live && (!best || c[i]->key < best->key))
			best = c[i];
	return best;
}

/* The last rowid of table (an estimate of its rows, for progress): 0 when none. */
static uint64_t last_rowid(struct nsys *r, const char *table)
{
	sqlite3_stmt *st = NULL;
	char sql[96];
	int64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT max(rowid) FROM \"%s\"", table);
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) == SQLITE_OK &&
		sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v > 0 ? (uint64_t)v : 0;
}

/* Progress every 4096 rows: the file's bytes in the share of the rows read; done: the end. */
static void progress(struct nsys *r, int done)
{
	const struct memscope_read_opts *o = &r->src->opts;
	uint64_t total = r->src->stats.bytes;

	if (!o->progress || r->src->fd < 0) /* a memory input reports none */
		return;
	if (done)
		o->progress(o->progress_ctx, o->src, total, total);
	else if (r->n_read % 4096 == 0 && r->n_read <= r->n_rows)
		o->progress(o->progress_ctx, o->src,
			(uint64_t)((double)total * (double)r->n_read / (double)r->n_rows), total);
}

/* Open the database, resolve its enums, find its columns, prepare its queries and step each to
 * its first row. 0 or the error. */
static int setup(struct nsys *r)
{
	uint32_t skip = r->src->opts.skip_kinds;
	struct memscope_strtab *st = r->src->st;
	int rc;

	if ((rc = ms__db_open(r->src, &r->conn, r->err)))
		return rc;
	r->db = r->conn.db;
	if ((rc = has_table(r, T_MEM)) <= 0)
		return rc ? rc
			  : memscope_error_set(r->err, MEMSCOPE_E_INVALID, r->src->name, 0,
				    "an Nsight Systems export without the %s table: it was "
				    "recorded without --cuda-memory-usage=true (nsys profile "
				    "--cuda-memory-usage=true records CUDA allocations and frees)",
				    T_MEM);
	if (memscope_strtab_intern(st, "kind", 4, &r->key_kind) ||
		memscope_strtab_intern(st, "name", 4, &r->key_name) ||
		memscope_strtab_intern(st, "correlation", 11, &r->key_corr) ||
		memscope_strtab_intern(st, "stream", 6, &r->key_stream) ||
		memscope_strtab_intern(st, "context", 7, &r->key_context) ||
		memscope_strtab_intern(st, "nvtx", 4, &r->key_nvtx) ||
		memscope_strtab_intern(st, "step start", 10, &r->name_step))
		return nomem(r, 0);
	if ((rc = load_epoch(r)))
		return rc;
	if (!((skip & (1u << MEMSCOPE_KIND_MALLOC)) && (skip & (1u << MEMSCOPE_KIND_FREE))) &&
		((rc = load_mem_enums(r)) || (rc = setup_strings(r)) || (rc = open_mem(r))))
		return rc;
	if ((rc = setup_nvtx(r)))
		return rc;
	if (r->src->opts.progress && r->src->fd >= 0)
		r->n_rows = (r->mem.st ? last_rowid(r, T_MEM) : 0) +
			    (r->start.st ? last_rowid(r, T_NVTX) : 0);
	if ((rc = cursor_next(r, &r->mem)) || (rc = cursor_next(r, &r->start)))
		return rc;
	return cursor_next(r, &r->end);
}

static int nsys_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct nsys *r = calloc(1, sizeof(*r));
	struct cursor *c;
	struct stat sb;
	int rc;

	if (!r)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	r->src = src;
	r->fn = fn;
	r->ctx = ctx;
	r->err = err;
	src->stats.bytes = src->fd < 0		      ? src->mem_len
			   : fstat(src->fd, &sb) == 0 ? (uint64_t)sb.st_size
						      : 0;
	rc = setup(r);
	while (!rc && (c = next_cursor(r))) {
		if (c == &r->mem)
			rc = mem_row(r);
		else if (c == &r->start)
			rc = nvtx_row(r);
		else
			rc = end_row(r);
		if (c != &r->end) {
			r->n_read++;
			progress(r, 0);
		}
		if (!rc)
			rc = cursor_next(r, c);
	}
	if (!rc)
		progress(r, 1);
	sqlite3_finalize(r->mem.st);
	sqlite3_finalize(r->start.st);
	sqlite3_finalize(r->end.st);
	sqlite3_finalize(r->string_id);
	ms__db_conn_close(&r->conn);
	ms__u64map_free(&r->open);
	free(r);
	return rc;
}

const struct reader ms__nsys_reader = {
	.format = MEMSCOPE_FORMAT_NSYS,
	.name = "nsys",
	.what = "an Nsight Systems export",
	.sniff = NULL, /* a database with its tables: the database reader's refine */
	.read = nsys_read,
	.by_name = 1,
	/* x.sqlite as nsys export names them */
	.walk = READER_WALK_INPUT,
	.endings = (const char *const[]){ ".sqlite", NULL },
	.inputs = "Nsight Systems exports",
	.without_accesses = "an Nsight Systems export",
	.end = READER_END_PROFILE,
};
