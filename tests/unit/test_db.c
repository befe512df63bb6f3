/* Unit tests of the database writer and reader and of the python_trace reader. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char header[] = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,"
			     "Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n";

/* a fresh temporary path (the file exists, empty) into buf */
static void tmp_path(char buf[32])
{
	int fd;

	strcpy(buf, "/tmp/test_db.XXXXXX");
	fd = mkstemp(buf);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

/* t's events into a new database at path as input 0; the writer's stats into *s */
static void write_db(const struct tread *t, const char *path, struct memscope_db_stats *s)
{
	struct memscope_db_writer *w;
	struct memscope_error err;
	size_t i;

	ck_assert_int_eq(memscope_db_writer_open(&w, path, t->st, &err), 0);
	for (i = 0; i < memscope_evbuf_count(t->evs); i++)
		ck_assert_msg(memscope_db_writer_event(w, memscope_evbuf_get(t->evs, i), &err) == 0,
			"%s", err.msg);
	ck_assert_int_eq(memscope_db_writer_end_source(w, 0, "t", MEMSCOPE_FORMAT_DUMP_CSV,
				 MEMSCOPE_LAYOUT_CURRENT, &err),
		0);
	ck_assert_int_eq(memscope_db_writer_finish(w, &err), 0);
	if (s)
		*s = *memscope_db_writer_stats(w);
	memscope_db_writer_free(w);
}

/* one integer from a query */
static long long query_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long v;

	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* pieces of hostile rows */
static const char *const attr_vals[] = { "1", "0x00000000deadbeef", "a:b", "say \"hi\"", "c:\\dir",
	"tab\there", "torch.Size([2, 3])", "[2,3,]", "early_allocation,late_deallocation", "",
	"\xe4\xbd\xa0\xff", "x,y" };
static const char *const keys[] = { "allocation_id", "size", "addr", "owner", "shape", "note",
	"inefficient_type", "k9" };
static const char *const names[] = { "N/A", "torch._ops.aten.add.Tensor", "\"step start\"",
	"\"a, \"b\" c\"", "\"\"", "k\\tname" };
static const char *const stacks[] = { "", "\"NA\"", "\"a.py(1): f\nb.py(2): g\"", "\"\"",
	"\"x \"q\" y\"" };
static const char *const kinds[][2] = { { "MALLOC", "PTA" }, { "FREE", "PTA" },
	{ "ACCESS", "READ" }, { "MSTX", "Mark" }, { "OP_LAUNCH", "ATEN_START" },
	{ "SYSTEM", "STEP" }, { "NEW_KIND", "WHATEVER" }, { "MALLOC", "HAL" } };

static void random_attr(FILE *f)
{
	unsigned i, n;

	switch (trand(6)) {
	case 0:
		return; /* empty field */
	case 1:
		fputs("\"{}\"", f);
		return;
	case 2:
		fputs("\"\"", f);
		return;
	case 3:
		fputs("\"not k:v text\"", f);
		return;
	}
	n = 1 + (unsigned)trand(5);
	fputs("\"{", f);
	for (i = 0; i < n; i++) {
		unsigned k = (unsigned)trand(N_OF(keys));

		/* numeric keys get numbers so MALLOC/FREE/ACCESS rows stay valid */
		fprintf(f, "%s%s:%s", i ? "," : "", keys[k],
			k < 2 ? "42" : attr_vals[trand(N_OF(attr_vals))]);
	}
	fputs("}\"", f);
}

START_TEST(random_dumps_come_back_through_the_database)
{
	unsigned round;

	trand_state = 77;
	for (round = 0; round < 150; round++) {
		char *text = NULL, *csv1, *csv2, path[32];
		size_t len = 0, l1, l2, n, i;
		FILE *f = open_memstream(&text, &len);
		struct tread a = { 0 }, b = { 0 };
		struct memscope_read_opts lenient = { .lenient = 1 };

		fputs(header, f);
		n = 1 + trand(40);
		for (i = 0; i < n; i++) {
			unsigned k = (unsigned)trand(N_OF(kinds));

			fprintf(f, "%llu,%s,%s,%s,%llu,%s,%s,%s,%s,",
				trand(4) ? (unsigned long long)i : 18446744073709551000ull,
				kinds[k][0], kinds[k][1], names[trand(N_OF(names))],
				1700000000000000000ull + trand(1000), trand(5) ? "7" : "N/A",
				trand(3) ? "18446744073709551614" : "N/A",
				trand(4)   ? "0"
				: trand(2) ? "cpu"
					   : "N/A",
				trand(3) ? "0x0000000000001000" : "N/A");
			random_attr(f);
			fprintf(f, ",%s,%s\n", stacks[trand(N_OF(stacks))],
				stacks[trand(N_OF(stacks))]);
		}
		fclose(f);
		tread_mem(&a, text, len, &lenient);
		tmp_path(path);
		write_db(&a, path, NULL);
		ck_assert_int_eq(query_int(path, "SELECT count(*) - sum(json_valid(\"Attr\")) "
						 "FROM memscope_dump"),
			0);
		ck_assert_int_eq(query_int(path, "SELECT count(*) FROM memscope_dump"),
			(long long)memscope_evbuf_count(a.evs));
		ck_assert_int_eq(tread_file(&b, path, NULL), 0);
		csv1 = tread_csv(&a, &l1);
		csv2 = tread_csv(&b, &l2);
		ck_assert_msg(l1 == l2 && memcmp(csv1, csv2, l1) == 0,
			"round %u:\n%.*s\n--- back:\n%.*s", round, (int)l1, csv1, (int)l2, csv2);
		free(csv1);
		free(csv2);
		tread_free(&a);
		tread_free(&b);
		unlink(path);
		free(text);
	}
}
END_TEST

/* what a database read reported as progress */
struct progress_seen {
	unsigned calls;
	uint64_t last, total;
	int backwards;
};

static void on_progress(void *ctx, uint32_t src, uint64_t done, uint64_t total)
{
	struct progress_seen *p = ctx;

	(void)src;
	p->backwards |= done < p->last || done > total;
	p->calls++;
	p->last = done;
	p->total = total;
}

START_TEST(a_database_read_reports_progress_by_rows)
{
	char *text = NULL, path[32];
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);
	struct tread a = { 0 }, b = { 0 };
	struct progress_seen seen = { 0 };
	struct memscope_read_opts o = { .progress = on_progress, .progress_ctx = &seen };
	struct stat sb;

	fputs(header, f);
	for (i = 1; i <= 10000; i++)
		fprintf(f, "%zu,MALLOC,PTA,N/A,%zu,7,7,0,0x%zx,\"{size:64}\",,\n", i, 1000 + i,
			4096 * i);
	fclose(f);
	tread_mem(&a, text, len, NULL);
	tmp_path(path);
	write_db(&a, path, NULL);
	ck_assert_int_eq(tread_file(&b, path, &o), 0);
	ck_assert_int_eq(stat(path, &sb), 0);
	/* rows 4096 and 8192 of 10000, then the end: three calls, in the file's bytes, never
	 * backwards, the last the whole file (so a progress line reaches its end) */
	ck_assert_uint_eq(seen.calls, 3);
	ck_assert_uint_eq(seen.total, (uint64_t)sb.st_size);
	ck_assert_uint_eq(seen.last, (uint64_t)sb.st_size);
	ck_assert_int_eq(seen.backwards, 0);
	tread_free(&a);
	tread_free(&b);
	unlink(path);
	free(text);
}
END_TEST

START_TEST(blocks_of_the_hostile_sample)
{
	struct tread t = { 0 };
	struct memscope_db_stats s;
	char path[32];

	ck_assert_int_eq(tread_file(&t, testdata("db/hostile.csv"), NULL), 0);
	tmp_path(path);
	write_db(&t, path, &s);
	ck_assert_uint_eq(s.n_rows, 19);
	ck_assert_uint_eq(s.n_blocks, 4);
	ck_assert_uint_eq(s.n_unreleased, 2);
	ck_assert_uint_eq(s.n_unmatched_free, 1);
	ck_assert_int_eq(query_int(path, "SELECT count(*) FROM memscope_blocks WHERE "
					 "leaked_at_exit AND allocation_id IN (3, 4)"),
		2);
	ck_assert_int_eq(
		query_int(path, "SELECT n_access * 10000 + last_access_ts - "
				"first_access_ts FROM memscope_blocks WHERE allocation_id = 1"),
		20100);
	tread_free(&t);
	unlink(path);
}
END_TEST

/* memscope_blocks.op: the op a MALLOC names (a profiler output's rows), NULL when it names none;
 * the last column, in layout 2 */
START_TEST(blocks_name_their_op)
{
	static const char csv[] =
		"1,MALLOC,PTA,aten::mm,10,7,N/A,0,N/A,\"{allocation_id:1,size:512}\",,\n"
		"2,MALLOC,PTA,N/A,20,7,N/A,0,N/A,\"{allocation_id:2,size:64}\",,\n"
		"3,FREE,PTA,N/A,30,7,N/A,0,N/A,\"{allocation_id:1,size:512}\",,\n";
	char text[512], path[32];
	struct tread t = { 0 };

	snprintf(text, sizeof(text), "%s%s", header, csv);
	ck_assert_int_eq(tread_mem(&t, text, strlen(text), NULL), 0);
	tmp_path(path);
	write_db(&t, path, NULL);
	ck_assert_int_eq(query_int(path, "SELECT count(*) FROM memscope_blocks WHERE "
					 "allocation_id = 1 AND op = 'aten::mm'"),
		1);
	ck_assert_int_eq(query_int(path, "SELECT count(*) FROM memscope_blocks WHERE "
					 "allocation_id = 2 AND op IS NULL"),
		1);
	ck_assert_int_eq(
		query_int(path, "SELECT max(cid) FROM pragma_table_info('memscope_blocks')"), 21);
	ck_assert_int_eq(query_int(path, "SELECT cid FROM pragma_table_info('memscope_blocks') "
					 "WHERE name = 'op'"),
		21);
	ck_assert_int_eq(query_int(path, "PRAGMA user_version"), 2);
	tread_free(&t);
	unlink(path);
}
END_TEST

/* the inputs' order is the writer's contract: one input at a time, none reopened */
START_TEST(inputs_come_one_after_the_other)
{
	struct tread t = { 0 };
	struct memscope_db_writer *w;
	struct memscope_error err;
	struct memscope_event ev;
	char path[32];

	ck_assert_int_eq(tread_file(&t, testdata("baseline.csv"), NULL), 0);
	tmp_path(path);
	ck_assert_int_eq(memscope_db_writer_open(&w, path, t.st, &err), 0);
	ev = *memscope_evbuf_get(t.evs, 0);
	ev.src = 1;
	ck_assert_int_eq(memscope_db_writer_event(w, &ev, &err), 0);
	ev.src = 2;
	ck_assert_int_eq(memscope_db_writer_event(w, &ev, &err), MEMSCOPE_E_ARG);
	ck_assert_int_eq(memscope_db_writer_finish(w, &err), MEMSCOPE_E_ARG);
	ck_assert_int_eq(memscope_db_writer_end_source(w, 1, "a", MEMSCOPE_FORMAT_DUMP_CSV,
				 MEMSCOPE_LAYOUT_CURRENT, &err),
		0);
	ev.src = 1;
	ck_assert_int_eq(memscope_db_writer_event(w, &ev, &err), MEMSCOPE_E_ARG);
	ck_assert_int_eq(memscope_db_writer_end_source(w, 1, "a", MEMSCOPE_FORMAT_DUMP_CSV,
				 MEMSCOPE_LAYOUT_CURRENT, &err),
		MEMSCOPE_E_ARG);
	ev.src = 2;
	ck_assert_int_eq(memscope_db_writer_event(w, &ev, &err), 0);
	ck_assert_int_eq(memscope_db_writer_end_source(w, 2, "b", MEMSCOPE_FORMAT_DUMP_CSV,
				 MEMSCOPE_LAYOUT_CURRENT, &err),
		0);
	ck_assert_int_eq(memscope_db_writer_finish(w, &err), 0);
	ck_assert_uint_eq(memscope_db_writer_stats(w)->n_sources, 2);
	memscope_db_writer_free(w);
	ck_assert_int_eq(query_int(path, "SELECT group_concat(first_row || '-' || last_row) = "
					 "'1-1,2-2' FROM memscope_sources"),
		1);
	tread_free(&t);
	unlink(path);
}
END_TEST

struct trace_rows {
	char text[512];
	size_t len;
};

static int on_trace(void *ctx, const struct memscope_trace_row *r)
{
	struct trace_rows *c = ctx;

	c->len += (size_t)snprintf(c->text + c->len, sizeof(c->text) - c->len,
		"%llu[%.*s|%lld|%lld|%llu|%llu]", (unsigned long long)r->line, (int)r->func_len,
		r->func, r->start_ns == MEMSCOPE_ID_NONE ? -1 : (long long)r->start_ns,
		r->end_ns == MEMSCOPE_ID_NONE ? -1 : (long long)r->end_ns,
		(unsigned long long)r->tid, (unsigned long long)r->pid);
	return 0;
}

static int no_event(void *ctx, const struct memscope_event *ev)
{
	(void)ctx;
	(void)ev;
	ck_abort_msg("a python_trace source delivered an event");
	return 0;
}

/* read a python_trace text; the rows as text into c, the status returned */
static int read_trace(const char *text, int lenient, struct trace_rows *c,
	struct memscope_error *err, uint64_t *n_skipped)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_read_opts o = { .lenient = lenient };
	struct memscope_source *src = NULL;
	int rc;

	c->len = 0;
	c->text[0] = '\0';
	rc = memscope_source_open_mem(&src, text, strlen(text), "t.csv", st, &o, err);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(memscope_source_format(src), MEMSCOPE_FORMAT_PYTHON_TRACE);
	ck_assert_int_eq(memscope_source_read(src, no_event, NULL, err), MEMSCOPE_E_UNSUPPORTED);
	memscope_source_close(src);
	ck_assert_int_eq(
		memscope_source_open_mem(&src, text, strlen(text), "t.csv", st, &o, err), 0);
	rc = memscope_source_read_trace(src, on_trace, c, err);
	*n_skipped = memscope_source_stats(src)->n_skipped;
	memscope_source_close(src);
	memscope_strtab_free(st);
	return rc;
}

START_TEST(python_trace_rows)
{
	struct trace_rows c;
	struct memscope_error err;
	uint64_t skipped;

	ck_assert_int_eq(read_trace("\xef\xbb\xbf"
				    "FuncInfo,StartTime(ns),EndTime(ns),Thread Id,Process Id\r\n"
				    "/a,b.py(1): f,10,N/A,3,4\r\n\r\n"
				    "start: g,N/A,20,3,4",
				 0, &c, &err, &skipped),
		0);
	ck_assert_str_eq(c.text, "2[/a,b.py(1): f|10|-1|3|4]4[start: g|-1|20|3|4]");
	ck_assert_int_eq(read_trace("FuncInfo,StartTime(ns),EndTime(ns),Thread Id,Process Id\n"
				    "f,1,2,3,4\ng,1,2,x,4\nh,1,2,3\n",
				 0, &c, &err, &skipped),
		MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(err.line, 3);
	ck_assert_str_eq(err.msg, "invalid Thread Id \"x\"");
	ck_assert_int_eq(read_trace("FuncInfo,StartTime(ns),EndTime(ns),Thread Id,Process Id\n"
				    "f,1,2,3,4\ng,1,2,x,4\nh,1,2,3\ni,-1,2,3,4\nj,1,2,3,4\n",
				 1, &c, &err, &skipped),
		0);
	ck_assert_uint_eq(skipped, 3);
	ck_assert_str_eq(c.text, "2[f|1|2|3|4]6[j|1|2|3|4]");
	ck_assert_int_eq(
		read_trace("FuncInfo,StartTime(ns)\n", 0, &c, &err, &skipped), MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(err.line, 1);
}
END_TEST

/* memscope_part_fn of the test: the names, "|"-separated, into ctx */
static int on_part(void *ctx, uint32_t part, const char *name)
{
	char *got = ctx;

	snprintf(got + strlen(got), 256 - strlen(got), "%s%u=%s", *got ? "|" : "", part, name);
	return 0;
}

/* the sql into the database at path */
static void exec_sql(const char *path, const char *sql)
{
	sqlite3 *db;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* a database of several inputs is read as them: memscope_source_parts names them, and
 * memscope_source_open_part reads one by its rowid range */
START_TEST(a_database_of_several_inputs_is_read_by_parts)
{
	static const size_t split = 5;
	struct memscope_db_writer *w;
	struct memscope_error err;
	struct tread t, one;
	struct memscope_read_opts o = { .src = 1 };
	uint32_t part = 0;
	char path[32], copy[40], got[256] = "";
	size_t i, n;

	ck_assert_int_eq(tread_file(&t, testdata("baseline.csv"), NULL), 0);
	n = memscope_evbuf_count(t.evs);
	tmp_path(path);
	ck_assert_int_eq(memscope_db_writer_open(&w, path, t.st, &err), 0);
	for (i = 0; i < n; i++) {
		struct memscope_event ev = *memscope_evbuf_get(t.evs, i);

		ev.src = i < split ? 0 : 2;
		if (i == split) {
			ck_assert_int_eq(
				memscope_db_writer_end_source(w, 0, "a\n", MEMSCOPE_FORMAT_DUMP_CSV,
					MEMSCOPE_LAYOUT_CURRENT, &err),
				0);
			/* an input without rows (a python_trace file) is not a part */
			ck_assert_int_eq(memscope_db_writer_end_source(w, 1, "trace",
						 MEMSCOPE_FORMAT_PYTHON_TRACE,
						 MEMSCOPE_LAYOUT_UNKNOWN, &err),
				0);
		}
		ck_assert_int_eq(memscope_db_writer_event(w, &ev, &err), 0);
	}
	ck_assert_int_eq(memscope_db_writer_end_source(w, 2, "c", MEMSCOPE_FORMAT_DUMP_CSV,
				 MEMSCOPE_LAYOUT_CURRENT, &err),
		0);
	ck_assert_int_eq(memscope_db_writer_finish(w, &err), 0);
	memscope_db_writer_free(w);

	ck_assert_int_eq(memscope_source_parts(path, on_part, got, &err), 2);
	ck_assert_str_eq(got, "1=a\\x0a|2=c");
	/* each part alone, stamped with the run's src; 0 is the whole table, as without parts */
	for (i = 0; i <= 2; i++) {
		part = (uint32_t)i;
		ck_assert_int_eq(tread_part(&one, path, part, &o), 0);
		ck_assert_uint_eq(memscope_evbuf_count(one.evs), i == 0	  ? n
								 : i == 1 ? split
									  : n - split);
		ck_assert_uint_eq(memscope_evbuf_get(one.evs, 0)->src, 1);
		ck_assert_uint_eq(memscope_evbuf_get(one.evs, 0)->line, i == 2 ? split + 1 : 1);
		tread_free(&one);
	}
	part = 3;
	ck_assert_int_eq(tread_part(&one, path, part, &o), MEMSCOPE_E_ARG);
	ck_assert_str_eq(one.err.msg, "holds 2 inputs, not 3");
	tread_free(&one);
	/* anything else is one input: a CSV (whose part 2 does not exist), stdin, a missing file */
	got[0] = '\0';
	ck_assert_int_eq(memscope_source_parts(testdata("baseline.csv"), on_part, got, &err), 1);
	ck_assert_int_eq(memscope_source_parts("-", on_part, got, &err), 1);
	ck_assert_int_eq(memscope_source_parts("/nonexistent/x.db", on_part, got, &err), 1);
	ck_assert_str_eq(got, "");
	part = 2;
	ck_assert_int_eq(tread_part(&one, testdata("baseline.csv"), part, &o), MEMSCOPE_E_ARG);
	tread_free(&one);
	part = 1;
	ck_assert_int_eq(tread_part(&one, testdata("baseline.csv"), part, &o), 0);
	ck_assert_uint_eq(memscope_evbuf_count(one.evs), n);
	tread_free(&one);

	/* ranges that overlap, or leave rows to no input: refused, by name */
	snprintf(copy, sizeof(copy), "%s.bad", path);
	for (i = 0; i < 3; i++) {
		static const char *const sql[3] = {
			"UPDATE memscope_sources SET first_row = first_row - 1, n_rows = n_rows + "
			"1 "
			"WHERE source = 2",
			"UPDATE memscope_sources SET last_row = last_row - 1, n_rows = n_rows - 1 "
			"WHERE source = 2",
			"UPDATE memscope_sources SET first_row = NULL WHERE source = 0",
		};
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "cp %s %s", path, copy);
		ck_assert_int_eq(system(cmd), 0);
		exec_sql(copy, sql[i]);
		ck_assert_int_eq(memscope_source_parts(copy, NULL, NULL, &err), MEMSCOPE_E_INVALID);
		ck_assert_msg(strstr(err.msg, "memscope_sources: "), "%s", err.msg);
		part = 1;
		ck_assert_int_eq(tread_part(&one, copy, part, &o), MEMSCOPE_E_INVALID);
		tread_free(&one);
		unlink(copy);
	}
	tread_free(&t);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("db");
	TCase *tc = tcase_create("db");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, random_dumps_come_back_through_the_database);
	tcase_add_test(tc, blocks_of_the_hostile_sample);
	tcase_add_test(tc, blocks_name_their_op);
	tcase_add_test(tc, inputs_come_one_after_the_other);
	tcase_add_test(tc, python_trace_rows);
	tcase_add_test(tc, a_database_of_several_inputs_is_read_by_parts);
	tcase_add_test(tc, a_database_read_reports_progress_by_rows);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
