/* Unit tests of the run (memscope/analysis.h): several analyses fed by one read give what each
 * gives on a read of its own; the second pass; errors of analyses and of inputs read twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* The analyses a batch would attach to one read, and their reports as text. */
struct set {
	struct memscope_strtab *st;
	struct memscope_leaks *leaks;
	struct memscope_inefficient *ineff;
	struct memscope_leaks *exit_leaks; /* the flame's leaked metric */
	struct memscope_flame *flame;
	struct memscope_timeline *tl;
};

static void set_new(struct set *s)
{
	struct memscope_flame_opts fo;
	struct memscope_leaks_opts lo;

	memscope_flame_opts_init(&fo);
	fo.metrics = (1u << MEMSCOPE_FLAME_N_METRICS) - 1;
	memscope_flame_leaks_opts(&fo, &lo);
	ck_assert_ptr_nonnull(s->st = memscope_strtab_new());
	ck_assert_ptr_nonnull(s->leaks = memscope_leaks_new(NULL, s->st));
	ck_assert_ptr_nonnull(s->ineff = memscope_inefficient_new(NULL, s->st));
	ck_assert_ptr_nonnull(s->exit_leaks = memscope_leaks_new(&lo, s->st));
	ck_assert_ptr_nonnull(s->flame = memscope_flame_new(&fo, s->st));
	ck_assert_ptr_nonnull(s->tl = memscope_timeline_new(0, 0, s->st));
	memscope_flame_use_leaks(s->flame, s->exit_leaks);
}

static void set_free(struct set *s)
{
	memscope_leaks_free(s->leaks);
	memscope_inefficient_free(s->ineff);
	memscope_flame_free(s->flame);
	memscope_leaks_free(s->exit_leaks);
	memscope_timeline_free(s->tl);
	memscope_strtab_free(s->st);
}

/* The reports of every analysis of s, one after the other (malloc'd). */
static char *reports(const struct set *s, const char *const *names, size_t n)
{
	struct memscope_leaks_input in[4];
	struct memscope_error err;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	for (i = 0; i < n; i++)
		in[i] = (struct memscope_leaks_input){ names[i], 0 };
	ck_assert_int_eq(memscope_leaks_write(f, MEMSCOPE_LEAKS_JSON, s->leaks, s->st, in, n), 0);
	ck_assert_int_eq(
		memscope_inefficient_write(f, MEMSCOPE_INEFF_JSON, s->ineff, s->st, names, n, 0),
		0);
	ck_assert_int_eq(memscope_flame_write_speedscope(f, s->flame, "t", NULL, &err), 0);
	ck_assert_int_eq(memscope_timeline_write_chrome(f, s->tl, names, n, NULL, &err), 0);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

/* Every analysis of s on one run of the inputs (the exit leaks before the flame). */
static int run_all(struct set *s, const char *const *paths, size_t n, struct memscope_error *err)
{
	const struct memscope_run_item items[] = {
		{ &memscope_leaks_analysis, s->leaks },
		{ &memscope_inefficient_analysis, s->ineff },
		{ &memscope_leaks_analysis, s->exit_leaks },
		{ &memscope_flame_analysis, s->flame },
		{ &memscope_timeline_analysis, s->tl },
	};

	return memscope_run(paths, n, s->st, NULL, items, 5, NULL, NULL, err);
}

START_TEST(one_read_many_analyses)
{
	static const char *const inputs[][2] = {
		{ "leaks/steps_mstx.csv", "inefficient/rules.csv" },
		{ "leaks.csv", "baseline.csv" },
		{ "export/ops.csv", "leaks/late.csv" },
	};
	char p0[512], p1[512];
	const char *paths[2] = { p0, p1 };
	struct set one, each;
	struct memscope_error err;
	char *a, *b;
	size_t k;

	snprintf(p0, sizeof(p0), "%s", testdata(inputs[_i][0]));
	snprintf(p1, sizeof(p1), "%s", testdata(inputs[_i][1]));
	set_new(&one);
	set_new(&each);
	ck_assert_int_eq(run_all(&one, paths, 2, &err), 0);
	/* each analysis on a read of its own (the exit leaks with the flame they feed) */
	{
		const struct memscope_run_item items[][2] = {
			{ { &memscope_leaks_analysis, each.leaks } },
			{ { &memscope_inefficient_analysis, each.ineff } },
			{ { &memscope_leaks_analysis, each.exit_leaks },
				{ &memscope_flame_analysis, each.flame } },
			{ { &memscope_timeline_analysis, each.tl } },
		};
		const size_t n[] = { 1, 1, 2, 1 };

		for (k = 0; k < 4; k++)
			ck_assert_msg(memscope_run(paths, 2, each.st, NULL, items[k], n[k], NULL,
					      NULL, &err) == 0,
				"%s", err.msg);
	}
	a = reports(&one, paths, 2);
	b = reports(&each, paths, 2);
	ck_assert_uint_gt(strlen(a), 1000);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	set_free(&one);
	set_free(&each);
}
END_TEST

struct seen {
	unsigned reads[3]; /* input_read calls per pass */
	uint64_t again_line;
	unsigned n_again;
};

static void on_read(
	void *ctx, uint32_t src, const char *name, const struct memscope_source *s, unsigned pass)
{
	struct seen *x = ctx;

	(void)src;
	(void)name;
	ck_assert_uint_gt(memscope_source_stats(s)->n_events, 0);
	x->reads[pass]++;
}

static void on_again(void *ctx, uint32_t src, uint64_t line, const char *why)
{
	struct seen *x = ctx;

	ck_assert_uint_eq(src, 0);
	ck_assert_ptr_nonnull(strstr(why, "out of time order"));
	x->again_line = line;
	x->n_again++;
}

/* late.csv has a step boundary after a later MALLOC/FREE row: the leaks analysis reads it again,
 * alone, and then judges as a time-ordered copy of the file is judged. */
START_TEST(second_pass)
{
	static const struct memscope_run_hooks hooks = { on_read, on_again };
	const char *late = testdata("leaks/late.csv");
	struct set s;
	struct seen x = { { 0 }, 0, 0 };
	struct memscope_error err;

	set_new(&s);
	{
		const struct memscope_run_item items[] = {
			{ &memscope_inefficient_analysis, s.ineff },
			{ &memscope_leaks_analysis, s.leaks },
		};

		ck_assert_int_eq(memscope_run(&late, 1, s.st, NULL, items, 2, &hooks, &x, &err), 0);
	}
	ck_assert_uint_eq(x.reads[1], 1);
	ck_assert_uint_eq(x.reads[2], 1);
	ck_assert_uint_eq(x.n_again, 1);
	ck_assert_uint_gt(x.again_line, 1);
	/* the second pass judged with every boundary known: no late row left */
	ck_assert_int_eq(memscope_leaks_needs_rewind(s.leaks, NULL, NULL), 0);
	/* the inefficient analysis was fed once: its event count is the file's */
	ck_assert_uint_eq(memscope_inefficient_stats(s.ineff)->n_events,
		memscope_leaks_stats(s.leaks)->n_events);
	set_free(&s);
}
END_TEST

/* Standard input cannot be read twice: the run says so at the late row. */
START_TEST(second_pass_stdin)
{
	const char *dash = "-";
	struct set s;
	struct memscope_error err;
	struct memscope_run_item it;

	ck_assert_ptr_nonnull(freopen(testdata("leaks/late.csv"), "r", stdin));
	set_new(&s);
	it = (struct memscope_run_item){ &memscope_leaks_analysis, s.leaks };
	ck_assert_int_eq(
		memscope_run(&dash, 1, s.st, NULL, &it, 1, NULL, NULL, &err), MEMSCOPE_E_INVALID);
	ck_assert_str_eq(err.file, "-");
	ck_assert_uint_gt(err.line, 1);
	ck_assert_ptr_nonnull(strstr(err.msg, "standard input cannot be read twice"));
	set_free(&s);
}
END_TEST

static unsigned fed;

static int fail_feed(void *self, const struct memscope_event *ev)
{
	(void)self;
	(void)ev;
	return ++fed == 3 ? MEMSCOPE_E_NOMEM : 0;
}

static int no_finish(void *self)
{
	(void)self;
	ck_abort_msg("finish after a failed read");
	return 0;
}

/* An analysis's error stops the read, names the input, and no analysis finishes. */
START_TEST(analysis_error)
{
	static const struct memscope_analysis failing = {
		.name = "failing",
		.feed = fail_feed,
		.finish = no_finish,
	};
	const char *path = testdata("leaks.csv");
	struct memscope_strtab *st = memscope_strtab_new();
	const struct memscope_run_item items[] = { { &failing, NULL } };
	struct memscope_error err;

	fed = 0;
	ck_assert_int_eq(
		memscope_run(&path, 1, st, NULL, items, 1, NULL, NULL, &err), MEMSCOPE_E_NOMEM);
	ck_assert_uint_eq(fed, 3);
	ck_assert_int_eq(err.code, MEMSCOPE_E_NOMEM);
	ck_assert_str_eq(err.file, path);
	ck_assert_int_eq(
		memscope_run(&path, 1, st, NULL, items, 0, NULL, NULL, &err), MEMSCOPE_E_ARG);
	memscope_strtab_free(st);
}
END_TEST

/* Every analysis of the registry made from its table alone, run on one read, and found by name. */
START_TEST(registry)
{
	size_t n, i;
	const struct memscope_analysis *const *all = memscope_analyses(&n);
	const char *path = testdata("leaks.csv");
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_run_item items[16];
	struct memscope_error err;

	ck_assert_uint_ge(n, 4);
	ck_assert_uint_le(n, 16);
	for (i = 0; i < n; i++) {
		ck_assert_ptr_eq(memscope_analysis_find(all[i]->name), all[i]);
		ck_assert_ptr_nonnull(all[i]->create);
		ck_assert_ptr_nonnull(items[i].self = all[i]->create(st));
		items[i].analysis = all[i];
	}
	ck_assert_ptr_null(memscope_analysis_find("no such analysis"));
	ck_assert_int_eq(memscope_run(&path, 1, st, NULL, items, n, NULL, NULL, &err), 0);
	/* the leaks analysis (first) made with its defaults finds the blocks alive at exit */
	ck_assert_str_eq(all[0]->name, "leaks");
	ck_assert_uint_gt(memscope_leaks_stats(items[0].self)->n_exit_leaks, 0);
	for (i = 0; i < n; i++)
		all[i]->destroy(items[i].self);
	memscope_strtab_free(st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("run");
	TCase *tc = tcase_create("run");

	tcase_add_loop_test(tc, one_read_many_analyses, 0, 3);
	tcase_add_test(tc, second_pass);
	tcase_add_test(tc, second_pass_stdin);
	tcase_add_test(tc, analysis_error);
	tcase_add_test(tc, registry);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
