/* Unit tests of the step tracker's numbers: ProfilerStep#N is step N (gaps, 0, misnumbered
 * ops), lookups by number and by index, and the text that says which steps an input has. */
#include <stdint.h>
#include <string.h>

#include "memscope/memscope.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"
#include "testutil.h"

struct fixture {
	struct memscope_strtab *st;
	struct memscope_event ev[32];
	size_t n;
};

/* An op row of process pid, thread 1, at ts (ID ts), named name. */
static void op(struct fixture *f, uint64_t pid, int start, uint64_t ts, const char *name)
{
	struct memscope_event *e = &f->ev[f->n++];

	ck_assert_uint_lt(f->n, 33);
	memset(e, 0, sizeof(*e));
	e->kind = MEMSCOPE_KIND_OP_LAUNCH;
	e->subtype = start ? MEMSCOPE_SUB_ATEN_START : MEMSCOPE_SUB_ATEN_END;
	e->ts_ns = ts;
	e->id = ts;
	e->line = ts;
	e->pid = pid;
	e->tid = 1;
	ck_assert_int_eq(memscope_strtab_intern(f->st, name, strlen(name), &e->name), 0);
}

/* A SYSTEM STEP row or an mstx "step start" / Range_end of process pid, input src. */
static void row(struct fixture *f, uint32_t src, uint64_t pid, uint16_t kind, uint16_t sub,
	uint64_t ts, const char *name)
{
	struct memscope_event *e = &f->ev[f->n++];

	ck_assert_uint_lt(f->n, 33);
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->subtype = sub;
	e->ts_ns = ts;
	e->id = ts;
	e->line = ts;
	e->src = src;
	e->pid = pid;
	e->tid = 1;
	ck_assert_int_eq(memscope_strtab_intern(f->st, name, strlen(name), &e->name), 0);
}

static struct memscope_pos at(uint64_t ts)
{
	return (struct memscope_pos){ ts, ts };
}

/* #50 [10, 20]; #52 [30, 40] with a #51 inside it (not above 52: no step, and its end at 36
 * does not end #52); #55 [50, 60]; #abc at 70 (no number); #56 from 80, no end */
static void profiler_rows(struct fixture *f)
{
	op(f, 7, 1, 10, "ProfilerStep#50");
	op(f, 7, 0, 20, "ProfilerStep#50");
	op(f, 7, 1, 30, "ProfilerStep#52");
	op(f, 7, 1, 35, "ProfilerStep#51");
	op(f, 7, 0, 36, "ProfilerStep#51");
	op(f, 7, 0, 40, "ProfilerStep#52");
	op(f, 7, 1, 50, "ProfilerStep#55");
	op(f, 7, 0, 60, "ProfilerStep#55");
	op(f, 7, 1, 70, "ProfilerStep#abc");
	op(f, 7, 0, 75, "ProfilerStep#abc");
	op(f, 7, 1, 80, "ProfilerStep#56");
}

static void check_profiler(const struct memscope_steps *s)
{
	const struct memscope_step_proc *p = memscope_steps_proc(s, 0, 7);
	struct memscope_pos pos;
	uint64_t k, lo, hi;
	int open;
	char buf[MEMSCOPE_STEPS_TEXT_MAX];

	ck_assert_int_eq(memscope_steps_source(p), MEMSCOPE_STEPS_PROFILER);
	ck_assert_uint_eq(memscope_steps_count(p), 4);
	ck_assert_uint_eq(memscope_steps_misnumbered(p), 2);
	ck_assert_uint_eq(memscope_steps_ignored(p), 0);
	/* numbers by index, indexes by number */
	ck_assert_uint_eq(memscope_steps_number(p, 1), 50);
	ck_assert_uint_eq(memscope_steps_number(p, 2), 52);
	ck_assert_uint_eq(memscope_steps_number(p, 3), 55);
	ck_assert_uint_eq(memscope_steps_number(p, 4), 56);
	ck_assert_uint_eq(memscope_steps_number(p, 5), MEMSCOPE_STEP_NONE);
	ck_assert_uint_eq(memscope_steps_number(p, 0), MEMSCOPE_STEP_NONE);
	ck_assert_uint_eq(memscope_steps_index(p, 50), 1);
	ck_assert_uint_eq(memscope_steps_index(p, 51), 0);
	ck_assert_uint_eq(memscope_steps_index(p, 52), 2);
	ck_assert_uint_eq(memscope_steps_index(p, 1), 0);
	ck_assert_uint_eq(memscope_steps_index(p, 57), 0);
	/* before the first ProfilerStep: in no step */
	ck_assert_uint_eq(memscope_steps_at(p, at(5)), MEMSCOPE_STEP_NONE);
	ck_assert_uint_eq(memscope_steps_index_at(p, at(5)), 0);
	ck_assert_uint_eq(memscope_steps_at(p, at(10)), 50);
	ck_assert_uint_eq(memscope_steps_at(p, at(25)), 50);
	ck_assert_uint_eq(memscope_steps_at(p, at(36)), 52);
	ck_assert_uint_eq(memscope_steps_index_at(p, at(45)), 2);
	ck_assert_uint_eq(memscope_steps_at(p, at(75)), 55);
	ck_assert_uint_eq(memscope_steps_at(p, at(99)), 56);
	/* numbers between steps' do not exist */
	ck_assert_int_eq(memscope_steps_start(p, 51, &pos), 0);
	ck_assert_int_eq(memscope_steps_end(p, 51, &pos), 0);
	ck_assert_int_eq(memscope_steps_span(p, 51, &lo, &hi, &open), 0);
	ck_assert_int_eq(memscope_steps_start(p, 52, &pos), 1);
	ck_assert_uint_eq(pos.ts_ns, 30);
	ck_assert_int_eq(memscope_steps_end(p, 52, &pos), 1);
	ck_assert_uint_eq(pos.ts_ns, 40);
	/* the first step numbered n or more that has an end */
	ck_assert_int_eq(memscope_steps_end_from(p, 51, &k, &pos), 1);
	ck_assert_uint_eq(k, 52);
	ck_assert_uint_eq(pos.ts_ns, 40);
	ck_assert_int_eq(memscope_steps_end_from(p, 53, &k, &pos), 1);
	ck_assert_uint_eq(k, 55);
	ck_assert_uint_eq(pos.ts_ns, 60);
	ck_assert_int_eq(memscope_steps_end_from(p, 56, &k, &pos), 0);
	ck_assert_int_eq(memscope_steps_end_from(p, 0, &k, &pos), 1);
	ck_assert_uint_eq(k, 50);
	ck_assert_int_eq(memscope_steps_span(p, 55, &lo, &hi, &open), 1);
	ck_assert(lo == 50 && hi == 60 && !open);
	ck_assert_int_eq(memscope_steps_span(p, 56, &lo, &hi, &open), 1);
	ck_assert(lo == 80 && hi == UINT64_MAX && open);
	ck_assert_int_eq(memscope_steps_text(s, 0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "steps 50, 52, 55, 56");
	ck_assert_int_eq(memscope_steps_text(s, 1, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "no steps");
}

START_TEST(profiler_numbers)
{
	struct fixture f = { memscope_strtab_new(), { { 0 } }, 0 };
	struct memscope_steps *s = memscope_steps_new(f.st);
	size_t i;

	ck_assert_ptr_nonnull(s);
	profiler_rows(&f);
	for (i = 0; i < f.n; i++)
		ck_assert_int_ge(memscope_steps_feed(s, &f.ev[i]), 1);
	ck_assert_int_eq(memscope_steps_out_of_order(s, NULL, NULL), 0);
	check_profiler(s);
	memscope_steps_free(s);
	memscope_strtab_free(f.st);
}
END_TEST

/* The same rows in any order give, after resolve, the same steps and numbers. */
START_TEST(profiler_numbers_any_order)
{
	struct fixture f = { memscope_strtab_new(), { { 0 } }, 0 };
	int perm;

	profiler_rows(&f);
	trand_state = 17;
	for (perm = 0; perm < 30; perm++) {
		struct memscope_steps *s = memscope_steps_new(f.st);
		size_t i, order[32];

		for (i = 0; i < f.n; i++)
			order[i] = i;
		for (i = f.n - 1; i > 0 && perm; i--) {
			size_t j = (size_t)trand((uint64_t)i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < f.n; i++)
			ck_assert_int_ge(memscope_steps_feed(s, &f.ev[order[i]]), 1);
		ck_assert_int_eq(memscope_steps_resolve(s), 0);
		check_profiler(s);
		memscope_steps_free(s);
	}
	memscope_strtab_free(f.st);
}
END_TEST

/* ProfilerStep#0 is step 0: a row before it is in no step, one in it in step 0. Numbers at and
 * past 2^63 are no numbers. */
START_TEST(profiler_step_zero_and_big)
{
	struct fixture f = { memscope_strtab_new(), { { 0 } }, 0 };
	struct memscope_steps *s = memscope_steps_new(f.st);
	const struct memscope_step_proc *p;
	char buf[MEMSCOPE_STEPS_TEXT_MAX];
	size_t i;

	op(&f, 8, 1, 10, "ProfilerStep#0");
	op(&f, 8, 0, 20, "ProfilerStep#0");
	op(&f, 8, 1, 30, "ProfilerStep#9223372036854775808");
	op(&f, 8, 1, 31, "ProfilerStep#99999999999999999999");
	op(&f, 8, 1, 32, "ProfilerStep#-1");
	op(&f, 8, 1, 40, "ProfilerStep#9223372036854775807");
	for (i = 0; i < f.n; i++)
		ck_assert_int_ge(memscope_steps_feed(s, &f.ev[i]), 1);
	p = memscope_steps_proc(s, 0, 8);
	ck_assert_uint_eq(memscope_steps_count(p), 2);
	ck_assert_uint_eq(memscope_steps_misnumbered(p), 3);
	ck_assert_uint_eq(memscope_steps_at(p, at(5)), MEMSCOPE_STEP_NONE);
	ck_assert_uint_eq(memscope_steps_at(p, at(15)), 0);
	ck_assert_uint_eq(memscope_steps_index_at(p, at(15)), 1);
	ck_assert_uint_eq(memscope_steps_at(p, at(45)), INT64_MAX);
	ck_assert_int_eq(memscope_steps_text(s, 0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "steps 0, 9223372036854775807");
	memscope_steps_free(s);
	memscope_strtab_free(f.st);
}
END_TEST

/* mstx and SYSTEM steps keep 1, 2, 3; the text per input and over all inputs, runs merged,
 * at most four runs, cut short in a small buffer. */
START_TEST(text_of_inputs)
{
	struct fixture f = { memscope_strtab_new(), { { 0 } }, 0 };
	struct memscope_steps *s = memscope_steps_new(f.st);
	const struct memscope_step_proc *p;
	char buf[MEMSCOPE_STEPS_TEXT_MAX], small[9];
	size_t i;

	/* input 0: mstx steps 1 and 2; input 1: three STEP rows (steps 1 to 3 have spans, 4 is
	 * still running); input 2: ProfilerStep#3 */
	row(&f, 0, 1, MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_START, 10, "step start");
	row(&f, 0, 1, MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_END, 20, "N/A");
	row(&f, 0, 1, MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_START, 30, "step start");
	for (i = 0; i < 3; i++)
		row(&f, 1, 1, MEMSCOPE_KIND_SYSTEM, MEMSCOPE_SUB_STEP, 10 * (i + 1), "N/A");
	op(&f, 1, 1, 10, "ProfilerStep#3");
	f.ev[f.n - 1].src = 2;
	for (i = 0; i < f.n; i++)
		ck_assert_int_ge(memscope_steps_feed(s, &f.ev[i]), 1);
	p = memscope_steps_proc(s, 0, 1);
	ck_assert_uint_eq(memscope_steps_number(p, 2), 2);
	ck_assert_uint_eq(memscope_steps_at(p, at(5)), 0); /* the reference's step 0 */
	p = memscope_steps_proc(s, 1, 1);
	ck_assert_uint_eq(memscope_steps_count(p), 4);
	ck_assert_uint_eq(memscope_steps_number(p, 4), 4);
	ck_assert_int_eq(memscope_steps_text(s, 0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "steps 1, 2");
	ck_assert_int_eq(memscope_steps_text(s, 1, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "steps 1 to 3");
	ck_assert_int_eq(memscope_steps_text(s, 2, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "step 3");
	ck_assert_int_eq(memscope_steps_text(s, MEMSCOPE_STEPS_ALL_INPUTS, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "steps 1 to 3");
	memscope_steps_free(s);

	/* ProfilerStep#1, #3, ..., #99 and #100: five runs, the fourth left out */
	s = memscope_steps_new(f.st);
	f.n = 0;
	for (i = 1; i <= 101 && f.n < 30; i += 2) {
		char name[32];

		snprintf(name, sizeof(name), "ProfilerStep#%zu", i > 99 ? (size_t)100 : i);
		if (i > 7 && i < 95)
			continue;
		op(&f, 1, 1, 10 * i, name);
		ck_assert_int_ge(memscope_steps_feed(s, &f.ev[f.n - 1]), 1);
	}
	ck_assert_int_eq(memscope_steps_text(s, 0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "steps 1, 3, 5, ..., 99, 100");
	ck_assert_int_eq(memscope_steps_text(s, 0, small, sizeof(small)), 0);
	ck_assert_str_eq(small, "steps 1,");
	memscope_steps_free(s);
	memscope_strtab_free(f.st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("steps");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, profiler_numbers);
	tcase_add_test(tc, profiler_numbers_any_order);
	tcase_add_test(tc, profiler_step_zero_and_big);
	tcase_add_test(tc, text_of_inputs);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
