/* libFuzzer harness of the database writer and reader: a dump read (leniently) and written to a
 * database reads back to the same events (their CSV and typed fields); an input that is itself a
 * database goes through the database reader, strict and lenient. */
#include <unistd.h>

#include "fuzz_common.h"

static const char sqlite_magic[16] = "SQLite format 3";

struct to_db {
	struct memscope_db_writer *db;
	int invalid; /* an Attr the database cannot carry (a NUL byte) */
};

static int on_event(void *ctx, const struct memscope_event *ev)
{
	struct to_db *t = ctx;
	struct memscope_error err;

	if (memscope_db_writer_event(t->db, ev, &err)) {
		if (err.code != MEMSCOPE_E_INVALID)
			abort();
		t->invalid = 1;
		return MEMSCOPE_E_STOPPED;
	}
	return 0;
}

/* The whole file at path, malloc'd into *out. */
static void slurp(const char *path, char **out, size_t *len)
{
	FILE *in = fopen(path, "rb"), *m = open_memstream(out, len);
	char chunk[4096];
	size_t got;

	if (!in || !m)
		abort();
	while ((got = fread(chunk, 1, sizeof(chunk), in)) > 0)
		fwrite(chunk, 1, got, m);
	fclose(in);
	fclose(m);
}

/* Write the events of data (lenient read) to a database at path. 0, or -1 when nothing to check. */
static int write_db(const uint8_t *data, size_t size, const char *path)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_read_opts opts = { .lenient = 1 };
	struct memscope_error err;
	struct to_db t = { 0 };
	int rc = -1;

	if (!st || memscope_db_writer_open(&t.db, path, st, &err))
		abort();
	if (memscope_source_open_mem(&src, data, size, "fuzz", st, &opts, &err) == 0 &&
		memscope_source_format(src) == MEMSCOPE_FORMAT_DUMP_CSV) {
		/* a read that fails part way has delivered the rows before the bad one */
		memscope_source_read(src, on_event, &t, &err);
		if (!t.invalid) {
			if (memscope_db_writer_end_source(t.db, 0, "fuzz", MEMSCOPE_FORMAT_DUMP_CSV,
				    memscope_source_stats(src)->layout, &err) ||
				memscope_db_writer_finish(t.db, &err))
				abort();
			rc = 0;
		}
	}
	memscope_db_writer_free(t.db);
	memscope_source_close(src);
	memscope_strtab_free(st);
	return rc;
}

static int on_trace(void *ctx, const struct memscope_trace_row *r)
{
	if (r->tid == MEMSCOPE_ID_NONE || r->pid == MEMSCOPE_ID_NONE || (!r->func && r->func_len))
		abort();
	++*(uint64_t *)ctx;
	return 0;
}

/* A database's python_trace tables, strict and lenient: every failure names itself. */
static void read_traces(const uint8_t *data, size_t size)
{
	int lenient;

	for (lenient = 0; lenient <= 1; lenient++) {
		struct memscope_strtab *st = memscope_strtab_new();
		struct memscope_read_opts opts = { .lenient = lenient };
		struct memscope_source *src = NULL;
		struct memscope_error err;
		uint64_t n = 0;
		int rc = memscope_source_open_mem(&src, data, size, "fuzz", st, &opts, &err);

		if (!rc)
			rc = memscope_source_read_trace(src, on_trace, &n, &err);
		if (rc && (!err.msg[0] || err.code != rc))
			abort();
		memscope_source_close(src);
		memscope_strtab_free(st);
	}
}

static int count_event(void *ctx, const struct memscope_event *ev)
{
	(void)ev;
	++*(uint64_t *)ctx;
	return 0;
}

/* Events of part (memscope_source_open_mem_part) of a database, strict, into *n: the read's status,
 * every failure naming itself. */
static int read_part(const uint8_t *data, size_t size, uint32_t part, uint64_t *n)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int rc = memscope_source_open_mem_part(&src, data, size, "fuzz", part, st, NULL, &err);

	*n = 0;
	if (!rc)
		rc = memscope_source_read(src, count_event, n, &err);
	if (rc && (!err.msg[0] || err.code != rc))
		abort();
	memscope_source_close(src);
	memscope_strtab_free(st);
	return rc;
}

/* The parts of a database (memscope_sources) hold its rows once each: when the whole and every
 * part read cleanly, their events add up to the whole's. */
static void read_parts(const uint8_t *data, size_t size)
{
	uint64_t whole, n, sum = 0;
	uint32_t part;
	int rc = read_part(data, size, 0, &whole);

	for (part = 1; part <= 8; part++) {
		int r = read_part(data, size, part, &n);

		if (r == MEMSCOPE_E_ARG)
			break;
		rc |= r;
		sum += n;
	}
	if (!rc && part > 1 && part <= 8 && sum != whole)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_db.XXXXXX";
	char *a = NULL, *b = NULL, *db = NULL;
	size_t a_len = 0, b_len = 0, db_len = 0;
	uint64_t na = 0, nb = 0;
	int fd;

	if (size >= sizeof(sqlite_magic) && memcmp(data, sqlite_magic, sizeof(sqlite_magic)) == 0) {
		fuzz_both_modes(data, size);
		read_traces(data, size);
		read_parts(data, size);
		return 0;
	}
	if ((fd = mkstemp(path)) < 0)
		abort();
	close(fd);
	if (write_db(data, size, path) == 0) {
		slurp(path, &db, &db_len);
		fuzz_read(data, size, 1, &a, &a_len, NULL, NULL, &na);
		if (fuzz_read((const uint8_t *)db, db_len, 0, &b, &b_len, NULL, NULL, &nb) ||
			na != nb || a_len != b_len || memcmp(a, b, a_len)) {
			if (getenv("MEMSCOPE_FUZZ_DEBUG"))
				fprintf(stderr, "--- read:\n%.*s--- through the database:\n%.*s",
					(int)a_len, a, (int)b_len, b);
			abort();
		}
	}
	unlink(path);
	free(a);
	free(b);
	free(db);
	return 0;
}
