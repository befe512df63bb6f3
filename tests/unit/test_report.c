/* Unit tests of memscope-report's findings (memscope/report.h): on the bundled samples the verdict
 * figures equal memscope-leaks' JSON and memscope-batch's summary, a stepped input has its step
 * table and leaks, a profiler folder its samples and end, several inputs keep a failed one as a
 * row, and every list stays within its bound on a large input. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report_impl.h"
#include "testutil.h"

/* The report of the n inputs args (and the baseline base, may be NULL) written in fmt, as a
 * string (the caller frees); *r (may be NULL) keeps the report. */
static char *report_of(const char *const *args, size_t n, const char *base,
	enum memscope_report_format fmt, struct memscope_report **keep)
{
	struct memscope_session *s = NULL, *b = NULL;
	struct memscope_report *r = NULL;
	struct memscope_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(memscope_session_new(&s, NULL, NULL, NULL, &err), 0);
	ck_assert_int_eq(memscope_report_new(&r, &err), 0);
	ck_assert_int_eq(memscope_session_add(s, args, n, 0, &err), 0);
	ck_assert_int_eq(memscope_report_read(r, MEMSCOPE_REPORT_RUN, s, &err), 0);
	if (base) {
		ck_assert_int_eq(memscope_session_new(&b, NULL, NULL, NULL, &err), 0);
		ck_assert_int_eq(memscope_session_add(b, &base, 1, 0, &err), 0);
		ck_assert_int_eq(memscope_report_read(r, MEMSCOPE_REPORT_BASELINE, b, &err), 0);
	}
	ck_assert_int_eq(memscope_report_finish(r, &err), 0);
	ck_assert_ptr_nonnull(f = open_memstream(&text, &len));
	ck_assert_int_eq(memscope_report_write(f, fmt, r, &err), 0);
	fclose(f);
	if (keep)
		*keep = r;
	else
		memscope_report_free(r);
	memscope_session_free(s);
	memscope_session_free(b);
	return text;
}

/* The report's JSON of one input, parsed. */
static cJSON *json_of(const char *path)
{
	char *text = report_of(&path, 1, NULL, MEMSCOPE_REPORT_JSON, NULL);
	cJSON *j = cJSON_Parse(text);

	ck_assert_ptr_nonnull(j);
	free(text);
	return j;
}

/* memscope-leaks' JSON of path (the tool's defaults), parsed. */
static cJSON *leaks_json(const char *path)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_leaks *l = memscope_leaks_new(NULL, st);
	struct memscope_run_item item = { &memscope_leaks_analysis, l };
	struct memscope_leaks_input in = { path, 0 };
	struct memscope_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cJSON *j;

	ck_assert_int_eq(memscope_run(&path, 1, st, NULL, &item, 1, NULL, NULL, &err), 0);
	ck_assert_int_eq(memscope_leaks_write(f, MEMSCOPE_LEAKS_JSON, l, st, &in, 1), 0);
	fclose(f);
	ck_assert_ptr_nonnull(j = cJSON_Parse(text));
	free(text);
	memscope_leaks_free(l);
	memscope_strtab_free(st);
	return j;
}

static const cJSON *get(const cJSON *j, const char *path)
{
	char key[64];
	const char *dot;

	while ((dot = strchr(path, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		ck_assert_msg((j = cJSON_GetObjectItemCaseSensitive(j, key)) != NULL, "no %s", key);
		path = dot + 1;
	}
	ck_assert_msg((j = cJSON_GetObjectItemCaseSensitive(j, path)) != NULL, "no %s", path);
	return j;
}

static double num(const cJSON *j, const char *path)
{
	const cJSON *v = get(j, path);

	ck_assert_msg(cJSON_IsNumber(v), "%s is no number", path);
	return v->valuedouble;
}

static const char *str(const cJSON *j, const char *path)
{
	const cJSON *v = get(j, path);

	ck_assert_msg(cJSON_IsString(v), "%s is no string", path);
	return v->valuestring;
}

/* The verdict id of j. */
static const cJSON *verdict(const cJSON *j, const char *id)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, get(j, "verdicts")) if (!strcmp(str(v, "id"), id)) return v;
	ck_abort_msg("no verdict %s", id);
	return NULL;
}

/* The exit or step leaks of memscope-leaks' JSON in the pools counted once (HAL left out when a
 * pool inside it is there), as memscope-batch counts them. */
static void counted(const cJSON *lj, const char *kind, double *n, double *bytes)
{
	char path[64];
	const cJSON *p, *pools;
	int nested;

	snprintf(path, sizeof(path), "summary.%s.pools", kind);
	pools = get(lj, path);
	snprintf(path, sizeof(path), "summary.%s.pools_nested", kind);
	nested = cJSON_IsTrue(get(lj, path));
	*n = *bytes = 0;
	cJSON_ArrayForEach(p, pools)
	{
		if (nested && !strcmp(str(p, "pool"), "HAL"))
			continue;
		*n += num(p, "leaks");
		*bytes += num(p, "bytes");
	}
}

START_TEST(leaks_sample)
{
	const char *path = testdata("leaks.csv");
	cJSON *j = json_of(path), *lj = leaks_json(path);
	const cJSON *v = verdict(j, "leaks"), *site;
	struct memscope_summary s = { 0 };
	struct memscope_batch_input in = { .path = (char *)path, .rank = -1 };
	struct memscope_error err;
	double n, bytes;
	char *text;
	const char *first;
	int found = 0;

	counted(lj, "exit", &n, &bytes);
	ck_assert_double_eq(n, 6);
	ck_assert_double_eq(num(v, "bytes"), bytes);
	ck_assert_double_eq(num(v, "count"), n);
	ck_assert_double_eq(num(j, "leaks.exit.bytes"), bytes);
	ck_assert_str_eq(str(v, "level"), "bad");
	ck_assert_ptr_nonnull(strstr(str(v, "text"), "aten._to_copy"));
	ck_assert_ptr_nonnull(strstr(str(v, "text"), "7.63 MiB"));
	/* the sites are memscope-leaks' groups: _to_copy's 2 blocks */
	cJSON_ArrayForEach(
		site, get(j, "leaks.sites")) if (!strcmp(str(site, "op"),
							 "torch._ops.aten._to_copy.default"))
	{
		ck_assert_double_eq(num(site, "bytes"), 8000512);
		ck_assert_double_eq(num(site, "count"), 2);
		found = 1;
	}
	ck_assert(found);
	/* the peak is memscope-batch's */
	ck_assert_int_eq(memscope_summary_read(&s, &in, 0, NULL, &err), 0);
	ck_assert_double_eq(num(j, "peak.bytes"), s.num[MEMSCOPE_SUM_PEAK_BYTES]);
	ck_assert_double_eq(num(verdict(j, "peak"), "bytes"), s.num[MEMSCOPE_SUM_PEAK_BYTES]);
	ck_assert_double_eq(num(j, "peak.ts_ns"), s.num[MEMSCOPE_SUM_PEAK_NS]);
	memscope_summary_clear(&s);
	ck_assert_str_eq(str(verdict(j, "growth"), "level"), "unchecked");
	ck_assert_str_eq(str(verdict(j, "inefficient"), "level"), "unchecked");
	ck_assert(cJSON_IsNull(get(j, "ranks")) && cJSON_IsNull(get(j, "baseline")));
	/* the text's first lines name the leak */
	text = report_of(&path, 1, NULL, MEMSCOPE_REPORT_TEXT, NULL);
	first = strchr(text, '\n');
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_nonnull(strstr(first, "aten._to_copy"));
	ck_assert_ptr_nonnull(strstr(first, "7.63 MiB"));
	free(text);
	cJSON_Delete(lj);
	cJSON_Delete(j);
}
END_TEST

START_TEST(stepped)
{
	const char *path = testdata("leaks/steps_mstx.csv");
	cJSON *j = json_of(path), *lj = leaks_json(path);
	const cJSON *row, *b;
	double n, bytes, first_step = num(j, "leaks.step.first_step");
	int rows = 0, leak_first = 0;
	struct memscope_report *r;
	char *text;

	counted(lj, "step", &n, &bytes);
	ck_assert_double_eq(n, 3);
	ck_assert_double_eq(num(j, "leaks.step.count"), n);
	ck_assert_double_eq(num(j, "leaks.step.bytes"), bytes);
	ck_assert_double_eq(num(verdict(j, "leaks"), "bytes"), bytes);
	ck_assert_double_eq(first_step, 2);
	ck_assert(cJSON_IsTrue(get(j, "leaks.steps_checked")));
	counted(lj, "exit", &n, &bytes);
	ck_assert_double_eq(num(j, "leaks.exit.bytes"), bytes);
	cJSON_ArrayForEach(row, get(j, "steps"))
	{
		rows++;
		ck_assert_double_ge(num(row, "peak_bytes"), num(row, "end_bytes"));
		ck_assert_double_ge(num(row, "alloc_bytes"), 0);
		if (cJSON_IsTrue(get(row, "leak_first"))) {
			ck_assert_double_eq(num(row, "number"), first_step);
			leak_first++;
		}
	}
	ck_assert_int_eq(rows, 4);
	ck_assert_int_eq(leak_first, 1);
	ck_assert_int_eq(cJSON_GetArraySize(get(j, "timeline.steps")), 4);
	/* the leaked blocks on the plot name their site */
	n = 0;
	cJSON_ArrayForEach(b, get(j, "timeline.blocks")) n += cJSON_IsNumber(get(b, "site"));
	ck_assert_double_ge(n, 3);
	text = report_of(&path, 1, NULL, MEMSCOPE_REPORT_TEXT, &r);
	ck_assert_int_eq(memscope_report_found(r), 1);
	ck_assert_ptr_nonnull(strstr(text, "leaked from step to step from step 2"));
	memscope_report_free(r);
	free(text);
	cJSON_Delete(lj);
	cJSON_Delete(j);
}
END_TEST

START_TEST(profiler_folder)
{
	const char *path = testdata("msprof/torch_npu_level0_rank0_ascend_pt");
	cJSON *j = json_of(path), *lj = leaks_json(path);
	const cJSON *t;
	double n, bytes;

	ck_assert_str_eq(str(get(j, "inputs")->child, "end"), "profile");
	ck_assert_str_eq(str(j, "leaks.end"), "profile");
	counted(lj, "exit", &n, &bytes);
	ck_assert_double_eq(num(j, "leaks.exit.bytes"), bytes);
	/* alive at the end of a profile is worth a look, not a leak */
	ck_assert_str_eq(str(verdict(j, "leaks"), "level"), "warn");
	ck_assert(cJSON_IsTrue(get(j, "fragmentation.checked")));
	ck_assert_str_eq(str(j, "fragmentation.source"), "memory_record");
	ck_assert_double_ge(
		num(j, "fragmentation.reserved_bytes"), num(j, "fragmentation.allocated_bytes"));
	ck_assert_int_gt(cJSON_GetArraySize(get(j, "timeline.samples")), 0);
	cJSON_ArrayForEach(t, get(j, "timeline.tracks"))
		ck_assert_int_le(cJSON_GetArraySize(get(t, "points")), MS__REPORT_MAX_COLUMNS);
	ck_assert(cJSON_IsNull(get(j, "where.flame"))); /* no call stacks */
	ck_assert_int_gt(cJSON_GetArraySize(get(j, "where.rows")), 0);
	cJSON_Delete(lj);
	cJSON_Delete(j);
}
END_TEST

START_TEST(several_inputs)
{
	char *a0 = strdup(testdata("leaks.csv")), *a1 = strdup(testdata("README.txt"));
	const char *args[2] = { a0, a1 };
	char *text = report_of(args, 2, NULL, MEMSCOPE_REPORT_JSON, NULL);
	cJSON *j = cJSON_Parse(text);
	struct memscope_session *s = NULL;
	struct memscope_report *r = NULL;
	struct memscope_error err;

	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(cJSON_GetArraySize(get(j, "inputs")), 2);
	ck_assert_str_eq(str(cJSON_GetArrayItem(get(j, "inputs"), 1), "status"), "invalid");
	ck_assert_double_eq(num(j, "detail"), 0);
	ck_assert(!cJSON_IsNull(get(j, "ranks")));
	cJSON_Delete(j);
	free(text);
	/* one input that cannot be read is the error */
	ck_assert_int_eq(memscope_session_new(&s, NULL, NULL, NULL, &err), 0);
	ck_assert_int_eq(memscope_report_new(&r, &err), 0);
	ck_assert_int_eq(memscope_session_add(s, &args[1], 1, 0, &err), 0);
	ck_assert_int_eq(memscope_report_read(r, MEMSCOPE_REPORT_RUN, s, &err), MEMSCOPE_E_INVALID);
	ck_assert_int_eq(memscope_report_finish(r, &err), 0);
	memscope_report_free(r);
	memscope_session_free(s);
	free(a0);
	free(a1);
}
END_TEST

START_TEST(with_baseline)
{
	const char *path = testdata("leaks.csv");
	char *text = report_of(&path, 1, testdata("baseline.csv"), MEMSCOPE_REPORT_JSON, NULL);
	cJSON *j = cJSON_Parse(text);

	ck_assert_ptr_nonnull(j);
	ck_assert(!cJSON_IsNull(get(j, "baseline")));
	ck_assert_str_eq(str(verdict(j, "baseline"), "id"), "baseline");
	cJSON_Delete(j);
	free(text);
}
END_TEST

/* A HAL segment holding two PTA blocks: reserved against allocated at the PTA peak, and the
 * largest free range of the segment at the end. */
START_TEST(segment_gap)
{
	static const char csv[] =
		"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
		"Call Stack(Python),Call Stack(C)\n"
		"1,MALLOC,HAL,N/"
		"A,1000,7,7,0,0x1000,\"{allocation_id:1,addr:0x1000,size:65536}\",,\n"
		"2,MALLOC,PTA,N/A,2000,7,7,0,0x1000,\"{allocation_id:2,addr:0x1000,size:4096}\",,\n"
		"3,MALLOC,PTA,N/"
		"A,3000,7,7,0,0x8000,\"{allocation_id:3,addr:0x8000,size:4096}\",,\n";
	char path[] = "/tmp/test_report.XXXXXX";
	int fd = mkstemp(path);
	cJSON *j;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, csv, sizeof(csv) - 1), (ssize_t)(sizeof(csv) - 1));
	close(fd);
	j = json_of(path);
	ck_assert_str_eq(str(j, "fragmentation.source"), "HAL");
	ck_assert_double_eq(num(j, "fragmentation.reserved_bytes"), 65536);
	ck_assert_double_eq(num(j, "fragmentation.allocated_bytes"), 8192);
	/* free: [0x2000, 0x8000) and [0x9000, 0x11000) */
	ck_assert_double_eq(num(j, "fragmentation.gap_bytes"), 0x8000);
	/* 56 KiB unused: under the 1 MiB worth a look */
	ck_assert_str_eq(str(verdict(j, "fragmentation"), "level"), "ok");
	cJSON_Delete(j);
	unlink(path);
}
END_TEST

/* A dump of many steps, blocks, processes and leak sites: every list within its bound. */
static void write_big(const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned long long id = 1, ts = 1764753080000000000ull, k, p;

	ck_assert_ptr_nonnull(f);
	fputs("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
	      "Call Stack(Python),Call Stack(C)\n",
		f);
	for (k = 0; k < 2500; k++) {
		unsigned long long start = id, size = (k % 700 + 1) * 4096, ptr = 0x1000000ull + k;

		fprintf(f, "%llu,MSTX,Range_start,\"step start\",%llu,100,100,0,N/A,,,\n", id++,
			ts += 1000);
		fprintf(f,
			"%llu,MALLOC,PTA,N/"
			"A,%llu,100,100,0,0x%llx,\"{allocation_id:%llu,addr:0x%llx,"
			"size:%llu}\",\"f%llu.py(1): g",
			id++, ts += 1000, ptr, k + 1, ptr, size, k);
		for (p = 0; k == 2490 && p < 60; p++) /* a leak with a deep stack */
			fprintf(f, "\nd%llu.py(2): h", p);
		fputs("\",\n", f);
		if (k % 10) /* every tenth block leaks, each from a site of its own */
			fprintf(f,
				"%llu,FREE,PTA,N/A,%llu,100,100,0,0x%llx,\"{allocation_id:%llu,"
				"addr:0x%llx,size:%llu}\",,\n",
				id++, ts += 1000, ptr, k + 1, ptr, size);
		fprintf(f, "%llu,MSTX,Range_end,Range end from id %llu,%llu,100,100,0,N/A,,,\n",
			id++, start, ts += 1000);
	}
	for (p = 0; p < 12; p++) /* more processes than tracks drawn */
		fprintf(f,
			"%llu,MALLOC,PTA,N/A,%llu,%llu,1,0,0x10,\"{allocation_id:1,addr:0x10,"
			"size:%llu}\",,\n",
			id++, ts += 1000, 200 + p, 1000 + p);
	fclose(f);
}

START_TEST(bounds)
{
	char path[] = "/tmp/test_report.XXXXXX";
	int fd = mkstemp(path);
	cJSON *j;
	const cJSON *t;

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_big(path);
	j = json_of(path);
	/* every k-th step, the last kept */
	ck_assert_int_le(cJSON_GetArraySize(get(j, "steps")), MS__REPORT_MAX_STEPS);
	ck_assert_int_gt(cJSON_GetArraySize(get(j, "steps")), MS__REPORT_MAX_STEPS / 2);
	ck_assert_double_eq(num(cJSON_GetArrayItem(get(j, "steps"), 0), "number"), 1);
	ck_assert_double_eq(
		num(cJSON_GetArrayItem(get(j, "steps"), cJSON_GetArraySize(get(j, "steps")) - 1),
			"number"),
		2500);
	ck_assert_int_le(cJSON_GetArraySize(get(j, "timeline.steps")), MS__REPORT_MAX_STEPS);
	ck_assert_int_eq(cJSON_GetArraySize(get(j, "timeline.blocks")), MS__REPORT_MAX_BLOCKS);
	ck_assert_int_eq(cJSON_GetArraySize(get(j, "timeline.tracks")), MS__REPORT_MAX_TRACKS);
	ck_assert_double_eq(num(j, "timeline.more_tracks"), 13 - MS__REPORT_MAX_TRACKS);
	cJSON_ArrayForEach(t, get(j, "timeline.tracks"))
		ck_assert_int_le(cJSON_GetArraySize(get(t, "points")), MS__REPORT_MAX_COLUMNS);
	ck_assert_int_eq(cJSON_GetArraySize(get(j, "leaks.sites")), MS__REPORT_MAX_SITES);
	/* the deep stack's 61 frames cut to the bound and a line saying how many more */
	cJSON_ArrayForEach(
		t, get(j, "leaks.sites")) if (cJSON_GetArraySize(get(t, "stack.python")) > 1) break;
	ck_assert_ptr_nonnull(t);
	t = get(t, "stack.python");
	ck_assert_int_eq(cJSON_GetArraySize(t), MS__REPORT_MAX_FRAMES + 1);
	ck_assert_str_eq(
		cJSON_GetArrayItem(t, MS__REPORT_MAX_FRAMES)->valuestring, "[13 more frames]");
	ck_assert_int_le(cJSON_GetArraySize(get(j, "where.rows")), MS__REPORT_MAX_WHERE);
	ck_assert(!cJSON_IsNull(get(j, "where.flame"))); /* Python stacks */
	ck_assert_str_eq(str(verdict(j, "growth"), "level"), "bad");
	cJSON_Delete(j);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_test(tc, leaks_sample);
	tcase_add_test(tc, stepped);
	tcase_add_test(tc, profiler_folder);
	tcase_add_test(tc, several_inputs);
	tcase_add_test(tc, with_baseline);
	tcase_add_test(tc, segment_gap);
	tcase_add_test(tc, bounds);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
