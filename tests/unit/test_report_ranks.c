/* Unit tests of the report's "ranks" and "baseline" members (lib/report/ranks.h): on gen_ranks's
 * tree of 64 ranks the figures and who stands out equal memscope-batch's JSON, the planted leak is
 * one site common to its ranks, and the baseline's per op figures equal memscope-compare's. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/ranks.h"
#include "testutil.h"

/* What f writes as a string (the caller frees). */
#define CAPTURE(text, call)                                                                        \
	do {                                                                                       \
		size_t len_ = 0;                                                                   \
		FILE *f = open_memstream(&(text), &len_);                                          \
		ck_assert_ptr_nonnull(f);                                                          \
		ck_assert_int_eq(call, 0);                                                         \
		fclose(f);                                                                         \
	} while (0)

/* One input read as gather reads it: its summary, and its leaks and peak from one run. */
static void add_input(struct ms__ranks *r, enum ms__ranks_side side, uint32_t i,
	const struct memscope_batch_input *in, struct memscope_batch *b, int item)
{
	struct memscope_summary s = { 0 };
	struct memscope_error err;
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_leaks *l = memscope_leaks_new(NULL, st);
	struct memscope_peak *p = memscope_peak_new(NULL, st);
	struct memscope_run_item items[3] = { { &memscope_leaks_analysis, l },
		{ &memscope_peak_analysis, p } };
	const char *path = in->path;
	int ok;

	ck_assert_ptr_nonnull(p);
	memscope_summary_read(&s, in, i, NULL, &err);
	if (item)
		ck_assert_int_eq(ms__ranks_item(r, side, path, st, &items[2]), 0);
	ok = !in->err_code &&
	     !memscope_run(&path, 1, st, NULL, items, item ? 3 : 2, NULL, NULL, &err);
	ck_assert_int_eq(ms__ranks_add(r, side, i, &s, ok ? p : NULL, ok ? l : NULL, st), 0);
	if (b)
		ck_assert_int_eq(memscope_batch_add(b, &s, "test", 0, &err), 0);
	memscope_summary_clear(&s);
	memscope_peak_free(p);
	memscope_leaks_free(l);
	memscope_strtab_free(st);
}

/* gen_ranks's tree (64 ranks of 2 devices) in a new folder *top (static); the tree's path. */
static const char *make_tree(const char **top)
{
	static char dir[256], tree[300];
	char cmd[1024];

	snprintf(dir, sizeof(dir), "/tmp/test_report_ranks.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' tree tree >/dev/null", dir, GEN_RANKS);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	*top = dir;
	return tree;
}

static void remove_tree(const char *top)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	ck_assert_int_eq(system(cmd), 0);
}

/* memscope-batch's JSON line of input i (a "type":"input" object), from its report. */
static cJSON *batch_input(cJSON **lines, size_t n, uint64_t i)
{
	size_t k;

	for (k = 0; k < n; k++) {
		cJSON *t = cJSON_GetObjectItem(lines[k], "type");
		cJSON *x = cJSON_GetObjectItem(lines[k], "index");

		if (cJSON_IsString(t) && !strcmp(t->valuestring, "input") && x &&
			(uint64_t)x->valuedouble == i)
			return lines[k];
	}
	return NULL;
}

/* Whether a and b are the same number, or both null/absent. */
static int same_figure(const cJSON *a, const cJSON *b)
{
	int na = !a || cJSON_IsNull(a), nb = !b || cJSON_IsNull(b);

	if (na || nb)
		return na == nb;
	return cJSON_IsNumber(a) && cJSON_IsNumber(b) && a->valuedouble == b->valuedouble;
}

/* The lines of a JSON-lines text, each parsed (*n of them; the caller frees each). */
static cJSON **parse_lines(char *text, size_t *n)
{
	cJSON **v = NULL;
	char *line, *save = NULL;

	*n = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		v = realloc(v, (*n + 1) * sizeof(*v));
		ck_assert_ptr_nonnull(v[*n] = cJSON_Parse(line));
		(*n)++;
	}
	return v;
}

START_TEST(tree_equals_batch)
{
	const char *top, *dir = make_tree(&top);
	struct memscope_walk w = { 0 };
	struct memscope_error err;
	struct ms__ranks *r = ms__ranks_new();
	struct memscope_batch *b;
	struct memscope_batch_opts bo = { 0 };
	struct ms__ranks_verdict v;
	char *bj = NULL, *rj = NULL;
	cJSON **lines, *j, *rows, *row, *sites, *live, *site;
	size_t n_lines, i, n_out = 0, n_step_leaking = 0;

	ck_assert_int_eq(memscope_walk(&dir, 1, &w, NULL, NULL, &err), 0);
	ck_assert_uint_eq(w.n, 128);
	ck_assert_ptr_nonnull(b = memscope_batch_new(w.n, memscope_walk_hash(&w), 0));
	for (i = 0; i < w.n; i++)
		add_input(r, MS__RANKS_RUN, (uint32_t)i, &w.inputs[i], b, 0);
	ck_assert_int_eq(ms__ranks_finish(r), 0);
	CAPTURE(bj, memscope_batch_write(f, MEMSCOPE_BATCH_JSON, b, &bo, NULL));
	CAPTURE(rj, ms__ranks_json(f, r));
	lines = parse_lines(bj, &n_lines);
	ck_assert_ptr_nonnull(j = cJSON_Parse(rj));
	rows = cJSON_GetObjectItem(j, "rows");
	live = cJSON_GetObjectItem(j, "live");
	ck_assert_int_eq(cJSON_GetArraySize(rows), 128);
	ck_assert_int_eq(cJSON_GetArraySize(live), 128);
	/* the heatmap's columns: the 8 steps every input has, all ended */
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "steps")), 8);
	for (i = 0; i < 128; i++) {
		static const char *const figs[] = { "rank", "peak_bytes", "exit_leak_bytes",
			"step_leak_bytes", "growth_per_step", "node" };
		cJSON *bi = batch_input(lines, n_lines, i), *so, *mine, *cells;
		size_t k;
		int n;

		row = cJSON_GetArrayItem(rows, (int)i);
		ck_assert_ptr_nonnull(bi);
		for (k = 0; k < sizeof(figs) / sizeof(figs[0]); k++) {
			cJSON *a = cJSON_GetObjectItem(row, figs[k]),
			      *c = cJSON_GetObjectItem(bi, figs[k]);

			if (cJSON_IsString(a) || cJSON_IsString(c))
				ck_assert(cJSON_IsString(a) && cJSON_IsString(c) &&
					  !strcmp(a->valuestring, c->valuestring));
			else
				ck_assert_msg(same_figure(a, c), "input %zu: %s", i, figs[k]);
		}
		/* who stands out, and by what: memscope-batch's list */
		so = cJSON_GetObjectItem(bi, "stands_out");
		mine = cJSON_GetObjectItem(row, "stands_out_by");
		ck_assert_int_eq(cJSON_GetArraySize(so), cJSON_GetArraySize(mine));
		for (k = 0; k < (size_t)cJSON_GetArraySize(so); k++)
			ck_assert_str_eq(cJSON_GetArrayItem(so, (int)k)->valuestring,
				cJSON_GetArrayItem(mine, (int)k)->valuestring);
		n_out += cJSON_GetArraySize(so) > 0;
		n_step_leaking += cJSON_IsNumber(cJSON_GetObjectItem(bi, "step_leak_bytes")) &&
				  cJSON_GetObjectItem(bi, "step_leak_bytes")->valuedouble > 0;
		/* memscope-batch's growth per step from the heatmap's live bytes: from the end of
		 * the second step to the last */
		cells = cJSON_GetArrayItem(live, (int)i);
		n = cJSON_GetArraySize(cells);
		if (cJSON_IsNumber(cJSON_GetObjectItem(bi, "growth_per_step")) && n >= 3) {
			double last = cJSON_GetArrayItem(cells, n - 1)->valuedouble,
			       second = cJSON_GetArrayItem(cells, 1)->valuedouble;

			ck_assert_int_eq((long long)(last - second) / (n - 2),
				(long long)cJSON_GetObjectItem(bi, "growth_per_step")->valuedouble);
		}
	}
	/* the planted outliers: ranks 5, 23, 42 leak (both devices), rank 17 peaks */
	ck_assert_uint_eq(n_step_leaking, 6);
	ck_assert_uint_ge(n_out, 7);
	/* the step leak planted on 3 ranks is one site common to their 6 inputs */
	sites = cJSON_GetObjectItem(j, "common_sites");
	ck_assert_int_ge(cJSON_GetArraySize(sites), 1);
	site = cJSON_GetArrayItem(sites, 0);
	ck_assert_int_eq(cJSON_GetObjectItem(site, "ranks")->valueint, 6);
	ck_assert_int_eq(cJSON_GetObjectItem(site, "of")->valueint, 126);
	ck_assert(ms__ranks_verdict(r, &v));
	ck_assert_str_eq(v.level, "bad");
	ck_assert_uint_eq(v.count, n_out);
	ck_assert_msg(
		strstr(v.text, " of 128 inputs stand out: ") && strstr(v.text, "leaks on 6 of"),
		"%s", v.text);
	for (i = 0; i < n_lines; i++)
		cJSON_Delete(lines[i]);
	free(lines);
	cJSON_Delete(j);
	free(bj);
	free(rj);
	memscope_batch_free(b);
	ms__ranks_free(r);
	memscope_walk_free(&w);
	remove_tree(top);
}
END_TEST

/* A summary of an input read, with a peak and leaks. */
static void fake(struct memscope_summary *s, uint64_t i, int64_t peak, int64_t leak)
{
	memset(s, 0, sizeof(*s));
	s->num[MEMSCOPE_SUM_INDEX] = (int64_t)i;
	s->num[MEMSCOPE_SUM_RANK] = (int64_t)i;
	s->num[MEMSCOPE_SUM_PEAK_BYTES] = peak;
	s->num[MEMSCOPE_SUM_STEP_LEAK_BYTES] = leak;
	s->num[MEMSCOPE_SUM_EXIT_LEAK_BYTES] = 0;
	s->has = 1u << MEMSCOPE_SUM_INDEX | 1u << MEMSCOPE_SUM_RANK |
		 1u << MEMSCOPE_SUM_PEAK_BYTES | 1u << MEMSCOPE_SUM_STEP_LEAK_BYTES |
		 1u << MEMSCOPE_SUM_EXIT_LEAK_BYTES | 1u << MEMSCOPE_SUM_STATUS;
	s->str[MEMSCOPE_SUM_STATUS] = strdup("ok");
}

START_TEST(stand_out_rule)
{
	struct ms__ranks *r = ms__ranks_new();
	struct memscope_summary s;
	struct ms__ranks_verdict v;
	char *text = NULL;
	cJSON *j, *rows;
	uint32_t i;

	/* one input: no "ranks" member, no verdict */
	fake(&s, 0, 100 << 20, 0);
	ck_assert_int_eq(ms__ranks_add(r, MS__RANKS_RUN, 0, &s, NULL, NULL, NULL), 0);
	ck_assert_int_eq(ms__ranks_add(r, MS__RANKS_RUN, 0, &s, NULL, NULL, NULL), MEMSCOPE_E_ARG);
	memscope_summary_clear(&s);
	CAPTURE(text, ms__ranks_json(f, r));
	ck_assert_str_eq(text, "null");
	free(text);
	ck_assert(!ms__ranks_verdict(r, &v));
	/* ten of 100 MiB and 101 MiB, one of 130 MiB (above the median + a quarter: 125 MiB),
	 * one of 124 MiB (not), one that leaks when the others do not */
	for (i = 1; i < 13; i++) {
		int64_t peak = i == 11 ? 130 << 20 : i == 12 ? 124 << 20 : (100 + i % 2) << 20;

		fake(&s, i, peak, i == 7 ? 4096 : 0);
		ck_assert_int_eq(ms__ranks_add(r, MS__RANKS_RUN, i, &s, NULL, NULL, NULL), 0);
		memscope_summary_clear(&s);
	}
	ck_assert_int_eq(ms__ranks_finish(r), 0);
	CAPTURE(text, ms__ranks_json(f, r));
	ck_assert_ptr_nonnull(j = cJSON_Parse(text));
	rows = cJSON_GetObjectItem(j, "rows");
	ck_assert_int_eq(cJSON_GetArraySize(rows), 13);
	for (i = 0; i < 13; i++) {
		cJSON *so = cJSON_GetObjectItem(cJSON_GetArrayItem(rows, (int)i), "stands_out");

		if (i == 11)
			ck_assert_str_eq(so->valuestring, "peak");
		else if (i == 7)
			ck_assert_str_eq(so->valuestring, "leaks");
		else
			ck_assert(cJSON_IsNull(so));
	}
	ck_assert(ms__ranks_verdict(r, &v));
	ck_assert_str_eq(v.level, "bad");
	ck_assert_str_eq(v.text,
		"2 of 13 ranks stand out: rank 7 step leaks 4.00 KiB (median 0 B), "
		"rank 11 peak 130 MiB (median 101 MiB)");
	cJSON_Delete(j);
	free(text);
	ms__ranks_free(r);
}
END_TEST

static int count_row(void *ctx, const struct memscope_compare_row *row)
{
	return memscope_compare_summary_add(ctx, row);
}

START_TEST(heatmap_bounded)
{
	struct ms__ranks *r = ms__ranks_new();
	struct memscope_summary s;
	char *text = NULL;
	cJSON *j, *steps;
	uint32_t i, k;

	/* 1000 inputs of 500 steps each: at most 150 columns (MS__RANKS_MAX_CELLS / 1000), so
	 * every 4th step: 125 of them, the last among them */
	for (i = 0; i < 1000; i++) {
		struct ms__ranks_row *w;

		fake(&s, i, 100 << 20, 0);
		ck_assert_int_eq(ms__ranks_add(r, MS__RANKS_RUN, i, &s, NULL, NULL, NULL), 0);
		memscope_summary_clear(&s);
		w = &r->side[MS__RANKS_RUN].rows[i];
		ck_assert_ptr_nonnull(w->cols = calloc(MS__RANKS_MAX_STEPS, sizeof(*w->cols)));
		for (k = 0; k < MS__RANKS_MAX_STEPS; k++)
			w->cols[k] = (struct ms__ranks_col){ k + 1, (int64_t)k << 20 };
		w->n_cols = MS__RANKS_MAX_STEPS;
	}
	ck_assert_int_eq(ms__ranks_finish(r), 0);
	CAPTURE(text, ms__ranks_json(f, r));
	ck_assert_ptr_nonnull(j = cJSON_Parse(text));
	steps = cJSON_GetObjectItem(j, "steps");
	ck_assert_int_eq(cJSON_GetArraySize(steps), 125);
	ck_assert_int_eq(cJSON_GetArrayItem(steps, 0)->valueint, 4);
	ck_assert_int_eq(cJSON_GetArrayItem(steps, cJSON_GetArraySize(steps) - 1)->valueint, 500);
	ck_assert_int_eq(
		cJSON_GetArraySize(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "live"), 999)),
		cJSON_GetArraySize(steps));
	/* growth: what each column added since the one before it, 4 steps of 1 MiB */
	ck_assert_int_eq(
		cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "growth"), 0), 1)
			->valueint,
		4 << 20);
	cJSON_Delete(j);
	free(text);
	ms__ranks_free(r);
}
END_TEST

/* The top names of memscope-compare's summary for base and cmp, read as memscope-compare does. */
static struct memscope_compare_summary *compare_of(
	const char *base, const char *cmp, struct memscope_strtab *st)
{
	const char *paths[2] = { base, cmp };
	struct memscope_compare_side *side[2];
	struct memscope_compare_opts o = { .level = MEMSCOPE_COMPARE_OP };
	struct memscope_compare_summary *sum;
	struct memscope_error err;
	int k;

	for (k = 0; k < 2; k++) {
		struct memscope_run_item item = { &memscope_compare_side_analysis, NULL };

		ck_assert_ptr_nonnull(side[k] = memscope_compare_side_new(paths[k], st));
		item.self = side[k];
		ck_assert_int_eq(
			memscope_run(&paths[k], 1, st, NULL, &item, 1, NULL, NULL, &err), 0);
	}
	o.metric = memscope_compare_default_metric(side[0], side[1], o.level);
	ck_assert_ptr_nonnull(sum = memscope_compare_summary_new(MS__RANKS_MAX_BY, &o));
	ck_assert_int_eq(
		memscope_compare_run(side[0], side[1], &o, st, count_row, sum, NULL, &err), 0);
	memscope_compare_side_free(side[0]);
	memscope_compare_side_free(side[1]);
	return sum;
}

START_TEST(baseline_equals_compare)
{
	struct memscope_batch_input run = { 0 }, base = { 0 };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_compare_summary *sum;
	const struct memscope_compare_group *const *top;
	struct ms__ranks *r = ms__ranks_new();
	struct ms__ranks_verdict v;
	char *text = NULL, *bl = NULL;
	cJSON *j, *by, *first;
	size_t n, i;

	run.path = strdup(testdata("leaks.csv"));
	base.path = strdup(testdata("baseline.csv"));
	run.rank = base.rank = -1;
	add_input(r, MS__RANKS_RUN, 0, &run, NULL, 1);
	add_input(r, MS__RANKS_BASE, 0, &base, NULL, 1);
	ck_assert_int_eq(ms__ranks_finish(r), 0);
	CAPTURE(text, ms__ranks_json(f, r));
	ck_assert_str_eq(text, "null");
	CAPTURE(bl, ms__baseline_json(f, r));
	ck_assert_ptr_nonnull(j = cJSON_Parse(bl));
	by = cJSON_GetObjectItem(j, "by");
	sum = compare_of(base.path, run.path, st);
	top = memscope_compare_summary_top(sum, &n);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(cJSON_GetArraySize(by), (int)n);
	for (i = 0; i < n; i++) {
		cJSON *row = cJSON_GetArrayItem(by, (int)i);

		ck_assert_str_eq(cJSON_GetObjectItem(row, "name")->valuestring,
			memscope_strtab_str(st, top[i]->name, NULL));
		ck_assert_int_eq(
			(long long)cJSON_GetObjectItem(row, "base")->valuedouble, top[i]->base);
		ck_assert_int_eq(
			(long long)cJSON_GetObjectItem(row, "run")->valuedouble, top[i]->cmp);
		ck_assert_int_eq(
			(long long)cJSON_GetObjectItem(row, "diff")->valuedouble, top[i]->diff);
	}
	/* memscope-compare's first line: "torch._ops.aten._to_copy.default allocated 7.63 MiB
	 * more in compare than in base" */
	first = cJSON_GetArrayItem(by, 0);
	ck_assert_str_eq(cJSON_GetObjectItem(first, "name")->valuestring,
		"torch._ops.aten._to_copy.default");
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "ranks")), 1);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "inputs")), 1);
	ck_assert(ms__baseline_verdict(r, &v));
	ck_assert_msg(strstr(v.text, "torch._ops.aten._to_copy.default allocated 7.63 MiB more "
				     "than in the baseline"),
		"%s", v.text);
	cJSON_Delete(j);
	free(text);
	free(bl);
	free(run.path);
	free(base.path);
	memscope_compare_summary_free(sum);
	memscope_strtab_free(st);
	ms__ranks_free(r);
}
END_TEST

START_TEST(baseline_by_rank)
{
	static const int64_t run_peak[3] = { 100 << 20, 120 << 20, 90 << 20 }; /* ranks 0, 1, 2 */
	static const int64_t base_peak[3] = { 100 << 20, 80 << 20, 90 << 20 }; /* ranks 1, 2, 3 */
	struct ms__ranks *r = ms__ranks_new();
	struct memscope_summary s;
	struct memscope_run_item item;
	struct ms__ranks_verdict v;
	char *text = NULL;
	cJSON *j, *ranks, *row;
	uint32_t i;

	for (i = 0; i < 3; i++) {
		fake(&s, i, run_peak[i], 0);
		ck_assert_int_eq(ms__ranks_add(r, MS__RANKS_RUN, i, &s, NULL, NULL, NULL), 0);
		memscope_summary_clear(&s);
		fake(&s, i, base_peak[i], i == 0 ? 1024 : 0);
		s.num[MEMSCOPE_SUM_RANK] = i + 1;
		ck_assert_int_eq(ms__ranks_add(r, MS__RANKS_BASE, i, &s, NULL, NULL, NULL), 0);
		memscope_summary_clear(&s);
	}
	ck_assert_int_eq(ms__ranks_finish(r), 0);
	/* the comparison's item once a side, and before finish only */
	ck_assert_int_eq(ms__ranks_item(r, MS__RANKS_RUN, "x", NULL, &item), MEMSCOPE_E_ARG);
	CAPTURE(text, ms__baseline_json(f, r));
	ck_assert_ptr_nonnull(j = cJSON_Parse(text));
	ck_assert_int_eq(
		cJSON_GetObjectItem(cJSON_GetObjectItem(j, "peak"), "run")->valuedouble, 120 << 20);
	ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "peak"), "base")->valuedouble,
		100 << 20);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "by")), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(j, "by_why")->valuestring,
		"per op figures compare one input with one (memscope-compare)");
	/* paired by rank, largest |peak difference| first: rank 0 (100 MiB vs none), rank 3 (none
	 * vs 90 MiB), rank 1 (120 vs 100 MiB), rank 2 (90 vs 80 MiB) */
	ranks = cJSON_GetObjectItem(j, "ranks");
	ck_assert_int_eq(cJSON_GetArraySize(ranks), 4);
	row = cJSON_GetArrayItem(ranks, 0);
	ck_assert_int_eq(cJSON_GetObjectItem(row, "rank")->valueint, 0);
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(row, "base_peak")));
	row = cJSON_GetArrayItem(ranks, 1);
	ck_assert_int_eq(cJSON_GetObjectItem(row, "rank")->valueint, 3);
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(row, "run_peak")));
	ck_assert_int_eq(cJSON_GetObjectItem(row, "base_leaks")->valueint, 0);
	row = cJSON_GetArrayItem(ranks, 2);
	ck_assert_int_eq(cJSON_GetObjectItem(row, "rank")->valueint, 1);
	ck_assert_int_eq(cJSON_GetObjectItem(row, "run_peak")->valuedouble, 120 << 20);
	ck_assert_int_eq(cJSON_GetObjectItem(row, "base_peak")->valuedouble, 100 << 20);
	ck_assert_int_eq(cJSON_GetObjectItem(row, "base_leaks")->valueint, 1024);
	row = cJSON_GetArrayItem(ranks, 3);
	ck_assert_int_eq(cJSON_GetObjectItem(row, "rank")->valueint, 2);
	ck_assert(ms__baseline_verdict(r, &v));
	ck_assert_str_eq(v.level, "warn");
	ck_assert_str_eq(v.text,
		"peak 120 MiB vs 100 MiB in the baseline (+20.0 MiB); leaks 0 B vs "
		"1.00 KiB in the baseline (-1.00 KiB)");
	cJSON_Delete(j);
	free(text);
	ms__ranks_free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report_ranks");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, tree_equals_batch);
	tcase_add_test(tc, stand_out_rule);
	tcase_add_test(tc, baseline_equals_compare);
	tcase_add_test(tc, baseline_by_rank);
	tcase_add_test(tc, heatmap_bounded);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
