/* Unit tests of the clocks of a folder's files (lib/core/clocks.c, formats/msprof.md "Files far
 * apart in time"): a file more than 24 hours from every clock of its input starts one of its own,
 * shifted onto the input's first row; nearer files join; rows without a time decide nothing; an
 * input that is one file, and every other input, keep their times; the note and labels say so. */
#include <stdio.h>
#include <string.h>

#include "core/clocks.h"
#include "testutil.h"

#define S_NS UINT64_C(1000000000)
#define H_NS (3600 * S_NS)
#define T0 (UINT64_C(1695115378) * S_NS) /* an epoch time, as the profiler writes */

static struct memscope_strtab *st;
static uint32_t file_a, file_b, file_c, file_d;

static uint32_t intern(const char *s)
{
	uint32_t id;

	ck_assert_int_eq(memscope_strtab_intern(st, s, strlen(s), &id), 0);
	return id;
}

/* The shift of an event of src, file at ts (kind MALLOC, or PLAN when plan). */
static int64_t feed(struct clocks *c, uint32_t src, uint32_t file, uint64_t ts, int plan)
{
	struct memscope_event ev = { 0 }, tmp;
	const struct memscope_event *e;
	int64_t shift;

	ev.kind = plan ? MEMSCOPE_KIND_PLAN : MEMSCOPE_KIND_MALLOC;
	ev.src = src;
	ev.file = file;
	ev.ts_ns = ts;
	e = ms__clocks_event(c, &ev, &tmp, &shift);
	ck_assert_ptr_nonnull(e);
	/* the event itself unless shifted; a shifted copy's time on the first clock */
	ck_assert(shift ? e == &tmp && e->ts_ns == clocks_time(ts, shift) : e == &ev);
	return shift;
}

static void setup(void)
{
	ck_assert_ptr_nonnull(st = memscope_strtab_new());
	file_a = intern("run_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv");
	file_b = intern("run_ascend_pt/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv");
	file_c = intern("run_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv");
	file_d = intern("run_ascend_pt/ASCEND_PROFILER_OUTPUT/npu_mem.csv");
}

static void teardown(void)
{
	memscope_strtab_free(st);
}

START_TEST(far_file_gets_its_own_clock)
{
	struct clocks c = { 0 };
	char note[600], lab[64];

	ck_assert_int_eq(feed(&c, 0, file_a, T0 + 10 * S_NS, 0), 0);
	ck_assert_int_eq(feed(&c, 0, file_a, T0, 0), 0); /* rows out of order: the range grows */
	/* 25 hours after the first clock's last row: a clock of its own, onto the first row */
	ck_assert_int_eq(feed(&c, 0, file_b, T0 + 10 * S_NS + 25 * H_NS, 0), (int64_t)(25 * H_NS));
	ck_assert_int_eq(feed(&c, 0, file_b, T0 + 11 * S_NS + 25 * H_NS, 0), (int64_t)(25 * H_NS));
	ck_assert_uint_eq(
		clocks_time(T0 + 11 * S_NS + 25 * H_NS, (int64_t)(25 * H_NS)), T0 + 11 * S_NS);
	/* a row without a time and a plan row take their file's shift, decide nothing */
	ck_assert_int_eq(feed(&c, 0, file_b, 0, 0), (int64_t)(25 * H_NS));
	ck_assert_int_eq(feed(&c, 0, file_b, T0, 1), (int64_t)(25 * H_NS));
	ck_assert_int_eq(feed(&c, 0, file_d, 0, 0), 0);
	/* a file first timed now, near the second clock only, joins it */
	ck_assert_int_eq(feed(&c, 0, file_d, T0 + 12 * S_NS + 25 * H_NS, 0), (int64_t)(25 * H_NS));
	/* 23 hours after the first clock: near it (the first clock near wins), no shift */
	ck_assert_int_eq(feed(&c, 0, file_c, T0 + 10 * S_NS + 23 * H_NS, 0), 0);
	ck_assert_uint_eq(ms__clocks_count(&c, 0), 2);
	ck_assert_int_eq(ms__clocks_shift(&c, 0, file_b), (int64_t)(25 * H_NS));
	ck_assert_int_eq(ms__clocks_shift(&c, 0, file_c), 0);
	ck_assert_int_eq(ms__clocks_shift(&c, 0, 0), 0);
	ck_assert_int_eq(ms__clocks_note(&c, 0, st, note, sizeof(note)), 1);
	ck_assert_str_eq(note,
		"npu_module_mem.csv, npu_mem.csv recorded 1.0 days (90000 s) after "
		"operator_memory.csv, memory_record.csv: not one run's clock, so each keeps its "
		"own "
		"time axis (pictures draw it from the input's start, spans measure each apart)");
	ck_assert_str_eq(ms__clocks_label(ms__clocks_shift(&c, 0, file_b), lab, sizeof(lab)),
		" (own clock, 1.0 days later)");
	ck_assert_str_eq(ms__clocks_label(0, lab, sizeof(lab)), "");
	/* a short buffer: cut, still a string */
	ck_assert_int_eq(ms__clocks_note(&c, 0, st, note, 20), 1);
	ck_assert_uint_eq(strlen(note), 19);
	ms__clocks_free(&c);
}
END_TEST

START_TEST(inputs_apart_and_files_alone)
{
	struct clocks c = { 0 };
	char note[600], lab[64];

	/* an input that is one file (file 0): one clock, nothing kept */
	ck_assert_int_eq(feed(&c, 0, 0, T0, 0), 0);
	ck_assert_int_eq(feed(&c, 0, 0, T0 + 400 * H_NS, 0), 0);
	ck_assert_uint_eq(ms__clocks_count(&c, 0), 0);
	ck_assert_int_eq(ms__clocks_note(&c, 0, st, note, sizeof(note)), 0);
	/* each input its own first clock, however far from another input's */
	ck_assert_int_eq(feed(&c, 1, file_a, T0, 0), 0);
	ck_assert_int_eq(feed(&c, 2, file_a, T0 + 1000 * H_NS, 0), 0);
	/* a file of input 2 recorded before its first: shifted forward */
	ck_assert_int_eq(feed(&c, 2, file_b, T0 + 900 * H_NS, 0), -(int64_t)(100 * H_NS));
	ck_assert_uint_eq(clocks_time(T0 + 900 * H_NS, -(int64_t)(100 * H_NS)), T0 + 1000 * H_NS);
	ck_assert_uint_eq(ms__clocks_count(&c, 1), 1);
	ck_assert_uint_eq(ms__clocks_count(&c, 2), 2);
	ck_assert_int_eq(ms__clocks_note(&c, 1, st, note, sizeof(note)), 0);
	ck_assert_int_eq(ms__clocks_note(&c, 2, st, note, sizeof(note)), 1);
	ck_assert_ptr_nonnull(strstr(note, "npu_module_mem.csv recorded 4.2 days (360000 s) before "
					   "operator_memory.csv:"));
	ck_assert_str_eq(ms__clocks_label(-(int64_t)(100 * H_NS), lab, sizeof(lab)),
		" (own clock, 4.2 days earlier)");
	ms__clocks_free(&c);
}
END_TEST

/* Times that are hostile input: gaps past 2^63 ns keep their sign (saturated), times on the
 * first clock never wrap. */
START_TEST(gaps_past_int64)
{
	struct clocks c = { 0 };
	char lab[64];

	ck_assert_int_eq(feed(&c, 0, file_a, 1000, 0), 0);
	ck_assert_int_eq(feed(&c, 0, file_b, UINT64_MAX - 1000, 0), INT64_MAX);
	ck_assert_uint_eq(
		clocks_time(UINT64_MAX - 1000, INT64_MAX), UINT64_MAX - 1000 - (uint64_t)INT64_MAX);
	ck_assert_ptr_nonnull(strstr(ms__clocks_label(INT64_MAX, lab, sizeof(lab)), "later"));
	ck_assert_int_eq(feed(&c, 1, file_a, UINT64_MAX - 1000, 0), 0);
	ck_assert_int_eq(feed(&c, 1, file_b, 1000, 0), -INT64_MAX);
	ck_assert_uint_eq(clocks_time(1000, -INT64_MAX), 1000 + (uint64_t)INT64_MAX);
	ck_assert_uint_eq(clocks_time(UINT64_MAX - 5, -INT64_MAX), UINT64_MAX);
	ck_assert_uint_eq(clocks_time(5, INT64_MAX), 1);
	/* near the end of the range: within 24 hours is the same clock */
	ck_assert_int_eq(feed(&c, 2, file_a, UINT64_MAX - 1000, 0), 0);
	ck_assert_int_eq(feed(&c, 2, file_b, UINT64_MAX - 500, 0), 0);
	ck_assert_uint_eq(ms__clocks_count(&c, 2), 1);
	ms__clocks_free(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clocks");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, far_file_gets_its_own_clock);
	tcase_add_test(tc, inputs_apart_and_files_alone);
	tcase_add_test(tc, gaps_past_int64);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
