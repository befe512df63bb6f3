/* Unit tests of memscope-batch's library side (memscope/batch.h): one read's summary against the
 * analyses run alone, summaries through their JSON lines and back, parts merged, the figures
 * across inputs and what stands out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* An input of path alone. */
static struct memscope_batch_input input_of(const char *path)
{
	struct memscope_batch_input in = { 0 };

	in.path = (char *)path;
	in.rank = -1;
	return in;
}

/* The report of b in fmt as a string (the caller frees). */
static char *report(const struct memscope_batch *b, enum memscope_batch_format fmt,
	const struct memscope_batch_opts *o, struct memscope_batch_result *res)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(memscope_batch_write(f, fmt, b, o, res), 0);
	fclose(f);
	return text;
}

START_TEST(summary_equals_analyses)
{
	const char *path = testdata("leaks.csv");
	struct memscope_batch_input in = input_of(path);
	struct memscope_summary s = { 0 };
	struct memscope_error err;
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_leaks *l = memscope_leaks_new(NULL, st);
	struct memscope_peak *p = memscope_peak_new(NULL, st);
	const struct memscope_run_item items[] = { { &memscope_leaks_analysis, l },
		{ &memscope_peak_analysis, p } };
	const struct memscope_peak_track *t;
	struct memscope_leaks_total tot[MEMSCOPE_LEAKS_MAX_POOLS];
	size_t n;
	long k;

	ck_assert_int_eq(memscope_summary_read(&s, &in, 7, NULL, &err), 0);
	ck_assert_int_eq(memscope_run(&path, 1, st, NULL, items, 2, NULL, NULL, &err), 0);
	ck_assert_str_eq(s.str[MEMSCOPE_SUM_STATUS], "ok");
	ck_assert_int_eq(s.num[MEMSCOPE_SUM_INDEX], 7);
	/* exit leaks in PTA and HAL, PTA lying inside HAL: HAL's are not counted (twice) */
	ck_assert(memscope_leaks_nested(l, MEMSCOPE_LEAK_EXIT, 0));
	ck_assert_uint_eq(memscope_leaks_totals(l, MEMSCOPE_LEAK_EXIT, 0, tot), 2);
	ck_assert_uint_eq(tot[0].pool, MEMSCOPE_SUB_PTA);
	ck_assert_uint_eq(tot[1].pool, MEMSCOPE_SUB_HAL);
	ck_assert_int_eq(s.num[MEMSCOPE_SUM_EXIT_LEAKS], tot[0].n);
	ck_assert_int_eq(s.num[MEMSCOPE_SUM_EXIT_LEAK_BYTES], tot[0].bytes);
	ck_assert_int_eq(memscope_leaks_stats(l)->n_exit_leaks, tot[0].n + tot[1].n);
	ck_assert_int_eq(s.num[MEMSCOPE_SUM_EVENTS], memscope_leaks_stats(l)->n_events);
	ck_assert_int_gt(s.num[MEMSCOPE_SUM_EXIT_LEAKS], 0);
	t = memscope_peak_tracks(p, &n);
	ck_assert_int_ge(k = memscope_peak_track_of_peak(p), 0);
	ck_assert_int_eq(s.num[MEMSCOPE_SUM_PEAK_BYTES], t[k].peak);
	ck_assert_str_eq(s.str[MEMSCOPE_SUM_PEAK_POOL], "PTA");
	/* no ACCESS rows: no inefficient figures; one device, from the blocks */
	ck_assert_int_eq(s.num[MEMSCOPE_SUM_ACCESSES], 0);
	ck_assert(!(s.has & UINT64_C(1) << MEMSCOPE_SUM_INEFFICIENT_BYTES));
	ck_assert_str_eq(s.str[MEMSCOPE_SUM_DEVICE], "0");
	/* no steps: step leaks unknown, not 0, and why; its one process */
	ck_assert(!(s.has & UINT64_C(1) << MEMSCOPE_SUM_STEP_LEAKS));
	ck_assert(!(s.has & UINT64_C(1) << MEMSCOPE_SUM_STEP_LEAK_BYTES));
	ck_assert_str_eq(s.str[MEMSCOPE_SUM_NOT_CHECKED],
		"step leaks: no steps: neither mstx \"step start\" ranges, SYSTEM STEP rows nor "
		"ProfilerStep#N ops");
	ck_assert(s.has & UINT64_C(1) << MEMSCOPE_SUM_PID);
	memscope_summary_clear(&s);
	memscope_leaks_free(l);
	memscope_peak_free(p);
	memscope_strtab_free(st);
}
END_TEST

START_TEST(summary_of_bad_input)
{
	char path[] = "/tmp/test_batch_XXXXXX";
	int fd = mkstemp(path);
	struct memscope_batch_input in = input_of(path);
	struct memscope_summary s = { 0 };
	struct memscope_error err;

	ck_assert_int_ge(fd, 0);
	close(fd);
	/* empty: invalid, every figure unknown, the message names it */
	ck_assert_int_eq(memscope_summary_read(&s, &in, 0, NULL, &err), MEMSCOPE_E_INVALID);
	ck_assert_str_eq(s.str[MEMSCOPE_SUM_STATUS], "invalid");
	ck_assert_ptr_nonnull(strstr(s.str[MEMSCOPE_SUM_ERROR], path));
	ck_assert(!(s.has & UINT64_C(1) << MEMSCOPE_SUM_EVENTS));
	unlink(path);
	/* gone: an I/O error */
	ck_assert_int_eq(memscope_summary_read(&s, &in, 0, NULL, &err), MEMSCOPE_E_IO);
	ck_assert_str_eq(s.str[MEMSCOPE_SUM_STATUS], "error");
	memscope_summary_clear(&s);
}
END_TEST

/* A summary line of input i with peak bytes peak, step leaks leaks. */
static char *line_of(uint64_t i, int64_t peak, int64_t leaks)
{
	char *s = NULL;

	ck_assert_int_gt(
		asprintf(&s,
			"{\"index\":%llu,\"input\":\"rank%llu/d\\u0001\\\"q.csv\",\"rank\":%llu,"
			"\"device\":\"0\",\"status\":\"ok\",\"error\":\"\",\"events\":%llu,"
			"\"peak_bytes\":%lld,\"pool_peaks\":{\"PTA\":%lld,\"HAL\":5},"
			"\"step_leaks\":%lld,\"step_leak_bytes\":%lld,\"exit_leaks\":0,"
			"\"growth_per_step\":-3}",
			(unsigned long long)i, (unsigned long long)i, (unsigned long long)i,
			(unsigned long long)(1000 + i), (long long)peak, (long long)peak,
			(long long)leaks, (long long)leaks * 4096),
		0);
	return s;
}

/* Ten inputs: peaks about 100 MiB but input 6's 400 MiB; step leaks on inputs 2 and 8. */
static struct memscope_batch *ten(void)
{
	struct memscope_batch *b = memscope_batch_new(10, 42, 0);
	struct memscope_error err;
	uint64_t i;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < 10; i++) {
		char *l = line_of(i, (i == 6 ? 400 : 100 + (int64_t)i) << 20, i == 2 || i == 8);

		ck_assert_int_eq(memscope_batch_add_line(b, l, strlen(l), "t", i, &err), 0);
		free(l);
	}
	return b;
}

START_TEST(lines_round_trip)
{
	struct memscope_batch *b = ten(), *c = memscope_batch_new(10, 42, 0);
	struct memscope_batch_opts o = { 0 };
	struct memscope_error err;
	char *again = NULL, *r1, *r2;
	size_t len = 0;
	uint64_t i;
	FILE *f;

	/* written and read back, a summary is the same summary */
	for (i = 0; i < 10; i++) {
		FILE *m = open_memstream(&again, &len);

		ck_assert_int_eq(memscope_summary_write(m, memscope_batch_get(b, i)), 0);
		fclose(m);
		ck_assert_int_eq(memscope_batch_add_line(c, again, len - 1, "t", i, &err), 0);
		free(again);
		again = NULL;
	}
	ck_assert_int_eq(memscope_batch_complete(c, &err), 0);
	r1 = report(b, MEMSCOPE_BATCH_JSON, &o, NULL);
	r2 = report(c, MEMSCOPE_BATCH_JSON, &o, NULL);
	ck_assert_str_eq(r1, r2);
	ck_assert_ptr_nonnull(strstr(r1, "\"pool_peaks\":{\"PTA\":104857600,\"HAL\":5}"));
	ck_assert_ptr_nonnull(strstr(r1, "rank0/d\\u0001\\\"q.csv"));
	free(r1);
	free(r2);
	/* text: the control byte escaped */
	r1 = report(b, MEMSCOPE_BATCH_TEXT, &o, NULL);
	ck_assert_ptr_null(strchr(r1, '\001'));
	free(r1);
	/* an input of no known rank or device: its row says "-" for both */
	{
		struct memscope_batch *one = memscope_batch_new(1, 1, 0);
		const char *l = "{\"index\":0,\"input\":\"x.csv\",\"status\":\"ok\",\"events\":3}";

		ck_assert_int_eq(memscope_batch_add_line(one, l, strlen(l), "t", 1, &err), 0);
		r1 = report(one, MEMSCOPE_BATCH_TEXT, &o, NULL);
		ck_assert_ptr_nonnull(
			strstr(r1, "\n   0    -    -        - -                   3 "));
		free(r1);
		memscope_batch_free(one);
	}
	/* a part of shard 1/2 holds the odd inputs */
	f = open_memstream(&again, &len);
	ck_assert_int_eq(memscope_batch_part_header(f, 10, 42, 0, 1, 2), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(again, "\"shard\":1,\"shards\":2"));
	free(again);
	memscope_batch_free(b);
	memscope_batch_free(c);
}
END_TEST

START_TEST(lines_refused)
{
	static const char *const bad[] = {
		"", "[]", "{\"index\":0,\"input\":\"a\",\"status\":\"ok\"} x",
		"{\"index\":0,\"index\":0,\"input\":\"a\",\"status\":\"ok\"}",
		"{\"index\":0,\"input\":\"a\",\"status\":\"ok\",\"nosuch\":1}",
		"{\"index\":\"0\",\"input\":\"a\",\"status\":\"ok\"}",
		"{\"index\":0,\"input\":5,\"status\":\"ok\"}",
		"{\"index\":0,\"input\":\"a\\q\",\"status\":\"ok\"}",
		"{\"index\":0,\"input\":\"a\\ud800\",\"status\":\"ok\"}",
		"{\"index\":0,\"input\":\"a\",\"status\":\"ok\",\"events\":99999999999999999999}",
		"{\"index\":0,\"input\":\"a\",\"status\":\"ok\",\"events\":1.5}",
		"{\"index\":0,\"input\":\"a\",\"status\":\"ok\",\"pool_peaks\":{\"PTA\":}}",
		"{\"index\":0,\"input\":\"a\",\"status\":\"ok\"",
		"{\"index\":3,\"input\":\"a\",\"status\":\"ok\"}",  /* beyond the inputs */
		"{\"index\":-1,\"input\":\"a\",\"status\":\"ok\"}", /* beyond the inputs */
		"{\"index\":0,\"status\":\"ok\"}",		    /* no input */
	};
	struct memscope_batch *b = memscope_batch_new(2, 1, 0);
	struct memscope_error err;
	const char *good = "{\"index\":0,\"input\":\"a\",\"status\":\"ok\"}";
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(memscope_batch_add_line(b, bad[i], strlen(bad[i]), "p", 2, &err) ==
				      MEMSCOPE_E_INVALID,
			"%s", bad[i]);
		ck_assert_uint_eq(err.line, 2);
	}
	ck_assert_int_eq(memscope_batch_add_line(b, good, strlen(good), "p", 1, &err), 0);
	/* the same input twice */
	ck_assert_int_eq(
		memscope_batch_add_line(b, good, strlen(good), "p", 3, &err), MEMSCOPE_E_INVALID);
	ck_assert_int_eq(memscope_batch_complete(b, &err), MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "input 1"));
	memscope_batch_free(b);
}
END_TEST

/* The part of shard k of n of the ten inputs of ten(), as text. */
static char *part_of(const struct memscope_batch *b, uint64_t k, uint64_t n, uint64_t hash)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	uint64_t i;

	ck_assert_int_eq(memscope_batch_part_header(f, 10, hash, 0, k, n), 0);
	for (i = k; i < 10; i += n)
		ck_assert_int_eq(memscope_summary_write(f, memscope_batch_get(b, i)), 0);
	fclose(f);
	return text;
}

/* Read part text into *m. */
static int read_part(struct memscope_batch **m, const char *text, struct memscope_error *err)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	uint64_t k, n;
	int rc;

	ck_assert_ptr_nonnull(f);
	rc = memscope_batch_read_part(m, f, "part", &k, &n, err);
	fclose(f);
	return rc;
}

START_TEST(parts_merge)
{
	struct memscope_batch *b = ten(), *m = NULL;
	struct memscope_batch_opts o = { 0 };
	struct memscope_error err;
	char *p[3], *whole, *merged, *other;
	int fmt;
	size_t k;

	for (k = 0; k < 3; k++)
		p[k] = part_of(b, k, 3, 42);
	/* shards 2 and 0 only: the part of shard 1 is missing */
	ck_assert_int_eq(read_part(&m, p[2], &err), 0);
	ck_assert_int_eq(read_part(&m, p[0], &err), 0);
	ck_assert_int_eq(memscope_batch_complete(m, &err), MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "shard 1/3 is missing"));
	/* a part given twice, a part of a run in other shards */
	ck_assert_int_eq(read_part(&m, p[0], &err), MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "shard 0/3 given twice"));
	other = part_of(b, 1, 2, 42);
	ck_assert_int_eq(read_part(&m, other, &err), MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "in 2 shards"));
	free(other);
	ck_assert_int_eq(read_part(&m, p[1], &err), 0);
	ck_assert_int_eq(memscope_batch_complete(m, &err), 0);
	for (fmt = 0; fmt < 3; fmt++) {
		whole = report(b, (enum memscope_batch_format)fmt, &o, NULL);
		merged = report(m, (enum memscope_batch_format)fmt, &o, NULL);
		ck_assert_str_eq(whole, merged);
		free(whole);
		free(merged);
	}
	/* another run's part (another list of inputs), and what is no part */
	other = part_of(b, 0, 3, 43);
	ck_assert_int_eq(read_part(&m, other, &err), MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "another run"));
	ck_assert_int_eq(read_part(&m, "index,input\n", &err), MEMSCOPE_E_INVALID);
	ck_assert_int_eq(read_part(&m, "", &err), MEMSCOPE_E_INVALID);
	free(other);
	for (k = 0; k < 3; k++)
		free(p[k]);
	memscope_batch_free(m);
	memscope_batch_free(b);
}
END_TEST

START_TEST(across_and_outliers)
{
	struct memscope_batch *b = ten();
	struct memscope_batch_opts o = { 1, MEMSCOPE_LEAK_STEP, 1, 200 << 20 };
	struct memscope_batch_result res;
	char *csv = report(b, MEMSCOPE_BATCH_CSV, &o, &res), *json, *text, *line;

	/* the outsized peak and the two leaking inputs stand out, nothing else does */
	ck_assert_ptr_nonnull(strstr(csv, ",peak_bytes,\n"));
	ck_assert_ptr_nonnull(strstr(csv, ",step_leak_bytes,\n"));
	line = strstr(csv, "input,6,");
	ck_assert_ptr_nonnull(line);
	ck_assert_ptr_nonnull(strstr(line, ",peak_bytes,\n"));
	ck_assert_int_eq((int)(strstr(csv, ",peak_bytes,\n") - line) < 400, 1);
	ck_assert_uint_eq(res.n_leaking, 2);
	ck_assert_uint_eq(res.n_over_peak, 1);
	ck_assert_uint_eq(res.n_ok, 10);
	/* median: the lower middle of 100..105, 107..109 and 400 MiB is 104 MiB */
	json = report(b, MEMSCOPE_BATCH_JSON, &o, NULL);
	ck_assert_ptr_nonnull(strstr(json,
		"\"figure\":\"peak_bytes\",\"inputs\":10,\"min\":104857600,\"min_input\":0,"
		"\"median\":109051904,\"max\":419430400,\"max_input\":6,\"imbalance\":3.85,"
		"\"stand_out\":[6]"));
	ck_assert_ptr_nonnull(strstr(json, "\"figure\":\"step_leak_bytes\""));
	ck_assert_ptr_nonnull(strstr(json, "\"stand_out\":[2,8]"));
	text = report(b, MEMSCOPE_BATCH_TEXT, &o, NULL);
	ck_assert_ptr_nonnull(strstr(text, "step leaks: above 0 on 2 of 10 inputs (median 0 B)"));
	/* stand out by the memory figures only, named in the user's words */
	ck_assert_ptr_null(strstr(text, "step_leak_bytes"));
	ck_assert_ptr_null(strstr(text, "span_ns"));
	ck_assert_ptr_nonnull(strstr(text, "\n  step leaks "));
	ck_assert_ptr_nonnull(strstr(text, "#6 rank 6 device 0"));
	/* the inputs failing the run are named */
	ck_assert_ptr_nonnull(strstr(text, "1 input above --max-peak 200 MiB:\n  #6 rank 6"));
	ck_assert_ptr_nonnull(strstr(text, "2 inputs with step leaks:\n  #2 rank 2"));
	ck_assert_ptr_nonnull(strstr(json, "\"leaking_inputs\":[2,8]"));
	ck_assert_ptr_nonnull(strstr(json, "\"over_peak_inputs\":[6]"));
	free(csv);
	free(json);
	free(text);
	memscope_batch_free(b);
}
END_TEST

/* A byte figure past what a figure holds: held at its highest and said to have overflowed in
 * every format, as memscope-leaks says its totals did; the flag reads back from a part, only
 * where it is true. */
START_TEST(overflowed_figures)
{
	struct memscope_batch *b = memscope_batch_new(3, 1, 0);
	struct memscope_batch_opts o = { 1, MEMSCOPE_LEAK_STEP | MEMSCOPE_LEAK_EXIT, 0, 0 };
	struct memscope_batch_result res;
	struct memscope_error err;
	char *text, *json, *csv, *line = NULL, *again = NULL;
	size_t len = 0;
	FILE *f;
	const char *l[3] = {
		"{\"index\":0,\"input\":\"a.db\",\"status\":\"ok\",\"bytes\":100,"
		"\"exit_leaks\":3,\"exit_leak_bytes\":9223372036854775807,"
		"\"exit_leak_bytes_overflowed\":true,\"step_leaks\":0,\"step_leak_bytes\":0}",
		"{\"index\":1,\"input\":\"b.csv\",\"status\":\"ok\",\"bytes\":100,"
		"\"exit_leaks\":1,\"exit_leak_bytes\":5,\"step_leaks\":0,\"step_leak_bytes\":0}",
		"{\"index\":2,\"input\":\"c.csv\",\"status\":\"ok\",\"bytes\":100,"
		"\"exit_leaks\":0,\"exit_leak_bytes\":0,\"not_checked\":\"step leaks: no steps: "
		"x\"}",
	};
	const char *bad[3] = {
		/* not a byte figure, a figure not at its highest, a flag that is not true */
		"{\"index\":0,\"input\":\"a\",\"status\":\"ok\",\"events\":9223372036854775807,"
		"\"events_overflowed\":true}",
		"{\"index\":0,\"input\":\"a\",\"status\":\"ok\",\"bytes\":5,"
		"\"bytes_overflowed\":true}",
		"{\"index\":0,\"input\":\"a\",\"status\":\"ok\",\"bytes\":9223372036854775807,"
		"\"bytes_overflowed\":null}",
	};
	int i;

	for (i = 0; i < 3; i++)
		ck_assert_int_eq(memscope_batch_add_line(b, l[i], strlen(l[i]), "t", 1, &err), 0);
	for (i = 0; i < 3; i++) {
		struct memscope_batch *x = memscope_batch_new(1, 1, 0);

		ck_assert_int_eq(memscope_batch_add_line(x, bad[i], strlen(bad[i]), "t", 1, &err),
			MEMSCOPE_E_INVALID);
		memscope_batch_free(x);
	}
	text = report(b, MEMSCOPE_BATCH_TEXT, &o, &res);
	ck_assert_ptr_nonnull(strstr(text, "3 (more than 8.00 EiB (the total overflowed))"));
	ck_assert_ptr_nonnull(strstr(text, "more than 8.00 EiB (the total overflowed) (#0)"));
	/* the unchecked input is named, with why */
	ck_assert_uint_eq(res.n_unchecked, 1);
	ck_assert_uint_eq(res.n_unchecked_all, 0);
	ck_assert_uint_eq(res.n_leaking, 2);
	ck_assert_ptr_nonnull(strstr(text, "1 input where step leaks could not be checked:\n  #2 "
					   "(c.csv): step leaks: no steps: x\n"));
	json = report(b, MEMSCOPE_BATCH_JSON, &o, NULL);
	ck_assert_ptr_nonnull(strstr(json, "\"exit_leak_bytes\":9223372036854775807,"
					   "\"exit_leak_bytes_overflowed\":true,"));
	ck_assert_ptr_nonnull(strstr(json, "\"max\":9223372036854775807,\"max_overflowed\":true"));
	ck_assert_ptr_nonnull(strstr(json, "\"unchecked\":1,\"unchecked_inputs\":[2]"));
	ck_assert_ptr_null(strstr(json, "\"exit_leak_bytes\":5,\"exit_leak_bytes_overflowed"));
	csv = report(b, MEMSCOPE_BATCH_CSV, &o, NULL);
	ck_assert_ptr_nonnull(strstr(csv, ",stands_out,overflowed\n"));
	ck_assert_ptr_nonnull(strstr(csv, ",exit_leak_bytes\ninput,1,"));
	ck_assert_ptr_nonnull(strstr(csv, "\nmax,"));
	ck_assert_ptr_nonnull(strstr(strstr(csv, "\nmax,"), ",,exit_leak_bytes\n"));
	/* the part line reads back the same */
	f = open_memstream(&line, &len);
	ck_assert_int_eq(memscope_summary_write(f, memscope_batch_get(b, 0)), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(line, "\"exit_leak_bytes_overflowed\":true"));
	{
		struct memscope_batch *c = memscope_batch_new(1, 1, 0);

		ck_assert_int_eq(
			memscope_batch_add_line(c, line, strlen(line) - 1, "t", 1, &err), 0);
		f = open_memstream(&again, &len);
		ck_assert_int_eq(memscope_summary_write(f, memscope_batch_get(c, 0)), 0);
		fclose(f);
		ck_assert_str_eq(again, line);
		memscope_batch_free(c);
	}
	free(line);
	free(again);
	free(text);
	free(json);
	free(csv);
	memscope_batch_free(b);
}
END_TEST

/* The node a profiler folder's name gives. */
START_TEST(node_of_path)
{
	char buf[64];

	ck_assert_uint_eq(memscope_node_of_path("/x/worker-3.lab_12345_20250101120000123_ascend_pt/"
						"ASCEND_PROFILER_OUTPUT/operator_memory.csv",
				  buf, sizeof(buf)),
		12);
	ck_assert_str_eq(buf, "worker-3.lab");
	ck_assert_uint_eq(memscope_node_of_path("n1_7_8_ascend_ms", buf, sizeof(buf)), 2);
	ck_assert_str_eq(buf, "n1");
	ck_assert_uint_eq(
		memscope_node_of_path("rank0/msmemscope_4000_2025_ascend/x.csv", buf, sizeof(buf)),
		0);
	ck_assert_str_eq(buf, "");
	ck_assert_uint_eq(memscope_node_of_path("_7_8_ascend_pt", buf, sizeof(buf)), 0);
	ck_assert_uint_eq(memscope_node_of_path("a b_7_8_ascend_pt", buf, sizeof(buf)), 0);
	ck_assert_uint_eq(memscope_node_of_path("host_x_8_ascend_pt", buf, sizeof(buf)), 0);
	ck_assert_uint_eq(memscope_node_of_path("h_7_8_ascend_pt", buf, 1), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("batch");
	TCase *tc = tcase_create("batch");

	tcase_add_test(tc, summary_equals_analyses);
	tcase_add_test(tc, summary_of_bad_input);
	tcase_add_test(tc, lines_round_trip);
	tcase_add_test(tc, lines_refused);
	tcase_add_test(tc, parts_merge);
	tcase_add_test(tc, across_and_outliers);
	tcase_add_test(tc, overflowed_figures);
	tcase_add_test(tc, node_of_path);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
