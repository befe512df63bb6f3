/*
 * libFuzzer harness of the Nsight Systems export reader (lib/readers/nsys.c). An input that is an
 * SQLite database is read as it is; any other is SQL run on a small export (the tables of
 * formats/nsys.md, a few rows), whose database is then read: so the fuzzer reaches hostile values
 * (text, reals, blobs, NULLs, odd enum tables) without having to mend b-tree pages. Each read goes
 * strict and lenient through the capture round trip (fuzz_common.h), and one more read checks what
 * holds of every read: IDs 1, 2, 3, ..., time never going back, MALLOC/FREE with a pointer and a
 * size, every failure naming itself.
 *
 * The corpus (tests/fuzz/corpus/nsys): the databases of tests/gpu/make_nsys.py OUT --tiny (512-byte
 * pages, a few rows each) and a few SQL texts; regenerate the databases with
 *   python3 tests/gpu/make_nsys.py /tmp/n --tiny && cp /tmp/n/[a-z]*.sqlite tests/fuzz/corpus/nsys
 */
#include <sqlite3.h>
#include <strings.h>

#include "fuzz_common.h"

static const char sqlite_magic[16] = "SQLite format 3";

/* The export the SQL inputs start from: nsys' numbering, the older column set, a few rows. */
static const char base_schema[] =
	"CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
	"INSERT INTO StringIds VALUES (1, 'step 1'), (2, 'ProfilerStep#4');"
	"CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),"
	" (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'), (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE',"
	" 'Device'), (4, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed');"
	"CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES (0, 'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION',"
	" 'Allocation'), (1, 'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION', 'Deallocation');"
	"CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT);"
	"INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (34, 'NvtxMark'), (59, 'NvtxPushPopRange'),"
	" (60, 'NvtxStartEndRange');"
	"CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER);"
	"INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1750000000000000000);"
	"CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid INTEGER, deviceId"
	" INTEGER, contextId INTEGER, address INTEGER, pc INTEGER, bytes INTEGER, memKind INTEGER,"
	" memoryOperationType INTEGER, name TEXT, correlationId INTEGER);"
	"INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (30, 16777216, 0, 1, 4096, 0, 512, 2, 0,"
	" NULL, 1), (10, 16777216, 0, 1, 8192, 0, 64, 4, 0, 'x', 2), (50, 16777216, 0, 1, 4096, 0,"
	" 512, 2, 1, NULL, 3);"
	"CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,"
	" globalTid INTEGER, textId INTEGER, domainId INTEGER);"
	"INSERT INTO NVTX_EVENTS VALUES (5, 40, 59, NULL, 16777227, 1, 0), (20, 20, 60, 'z',"
	" 16777227, NULL, 0), (25, NULL, 34, 'mark', 16777228, NULL, 0), (6, 45, 59, NULL,"
	" 16777228, 2, 0);";

/* Statements the SQL may run: no PRAGMA, ATTACH or virtual table (no file is touched). */
static int authorize(
	void *ctx, int action, const char *a, const char *b, const char *c, const char *d)
{
	(void)ctx, (void)a, (void)b, (void)c, (void)d;
	switch (action) {
	case SQLITE_CREATE_TABLE:
	case SQLITE_CREATE_INDEX:
	case SQLITE_CREATE_VIEW:
	case SQLITE_CREATE_TRIGGER:
	case SQLITE_DELETE:
	case SQLITE_DROP_TABLE:
	case SQLITE_DROP_INDEX:
	case SQLITE_DROP_VIEW:
	case SQLITE_DROP_TRIGGER:
	case SQLITE_INSERT:
	case SQLITE_READ:
	case SQLITE_SELECT:
	case SQLITE_UPDATE:
	case SQLITE_ALTER_TABLE:
	case SQLITE_FUNCTION:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	default:
		return SQLITE_DENY;
	}
}

/* A run of the SQL that takes too long is stopped. */
static int progress(void *ctx)
{
	return ++*(int *)ctx > 2000;
}

/* The base export changed by the SQL in data (NUL-terminated copy), serialized into *out
 * (sqlite3_free) and *len; 0, or -1 when there is nothing to read (the SQL may have failed part
 * way: what it did is read). */
static int build(const uint8_t *data, size_t size, unsigned char **out, sqlite3_int64 *len)
{
	char *sql = malloc(size + 1);
	sqlite3 *db = NULL;
	int steps = 0;

	if (!sql)
		abort();
	memcpy(sql, data, size);
	sql[size] = '\0';
	*out = NULL;
	/* VACUUM INTO writes a file and asks no authorizer */
	if (!strcasestr(sql, "vacuum") &&
		sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
		sqlite3_exec(db, "PRAGMA page_size = 512; PRAGMA max_page_count = 512;", NULL, NULL,
			NULL) == SQLITE_OK &&
		sqlite3_exec(db, base_schema, NULL, NULL, NULL) == SQLITE_OK) {
		sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 16);
		sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
		sqlite3_set_authorizer(db, authorize, NULL);
		sqlite3_progress_handler(db, 1000, progress, &steps);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_progress_handler(db, 0, NULL, NULL);
		sqlite3_set_authorizer(db, NULL, NULL);
		*out = sqlite3_serialize(db, "main", len, 0);
	}
	sqlite3_close(db);
	free(sql);
	return *out ? 0 : -1;
}

struct facts {
	uint64_t n;
	uint64_t last_ts;
};

static int check_event(void *ctx, const struct memscope_event *ev)
{
	struct facts *f = ctx;

	if (ev->id != ++f->n || ev->ts_ns < f->last_ts)
		abort();
	if ((ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE) &&
		(ev->flags & (MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE)) !=
			(MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE))
		abort();
	f->last_ts = ev->ts_ns;
	return 0;
}

/* A lenient read with the invariants checked. */
static void read_checked(const uint8_t *data, size_t size)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_read_opts opts = { .lenient = 1 };
	struct memscope_source *src = NULL;
	struct memscope_error err;
	struct facts f = { 0 };
	int rc = memscope_source_open_mem(&src, data, size, "fuzz", st, &opts, &err);

	if (!st)
		abort();
	if (!rc)
		rc = memscope_source_read(src, check_event, &f, &err);
	if (rc && (!err.msg[0] || err.code != rc))
		abort();
	memscope_source_close(src);
	memscope_strtab_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *db = NULL;
	sqlite3_int64 len = 0;

	if (size >= sizeof(sqlite_magic) && memcmp(data, sqlite_magic, sizeof(sqlite_magic)) == 0) {
		fuzz_both_modes(data, size);
		read_checked(data, size);
		return 0;
	}
	if (size > 4096 || build(data, size, &db, &len))
		return 0;
	fuzz_both_modes(db, (size_t)len);
	read_checked(db, (size_t)len);
	sqlite3_free(db);
	return 0;
}
