/* Unit tests of string and stack interning. */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

START_TEST(well_known_ids_are_constants)
{
	struct memscope_strtab *st = memscope_strtab_new();
	uint32_t id;

	ck_assert_str_eq(memscope_strtab_str(st, MEMSCOPE_STR_NA, NULL), "N/A");
	ck_assert_str_eq(memscope_strtab_str(st, MEMSCOPE_STR_EMPTY, NULL), "");
	ck_assert_int_eq(memscope_strtab_intern(st, "allocation_id", 13, &id), 0);
	ck_assert_uint_eq(id, MEMSCOPE_STR_ALLOCATION_ID);
	ck_assert_int_eq(memscope_strtab_intern(st, "", 0, &id), 0);
	ck_assert_uint_eq(id, MEMSCOPE_STR_EMPTY);
	ck_assert_uint_eq(memscope_strtab_count(st), MEMSCOPE_STR_WELL_KNOWN_COUNT);
	memscope_strtab_free(st);
}
END_TEST

START_TEST(interning_dedupes_and_survives_growth)
{
	enum { N = 100000 };
	struct memscope_strtab *st = memscope_strtab_new();
	static uint32_t ids[N];
	char buf[64];
	uint32_t id, i;
	size_t len;

	for (i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof(buf), "torch._ops.aten.op%u.default", i);

		ck_assert_int_eq(memscope_strtab_intern(st, buf, (size_t)n, &ids[i]), 0);
	}
	for (i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof(buf), "torch._ops.aten.op%u.default", i);

		ck_assert_int_eq(memscope_strtab_intern(st, buf, (size_t)n, &id), 0);
		ck_assert_uint_eq(id, ids[i]);
		ck_assert_str_eq(memscope_strtab_str(st, id, &len), buf);
		ck_assert_uint_eq(len, (size_t)n);
	}
	ck_assert_uint_eq(memscope_strtab_count(st), MEMSCOPE_STR_WELL_KNOWN_COUNT + N);
	/* embedded NUL: a different string from its prefix */
	ck_assert_int_eq(memscope_strtab_intern(st, "a\0b", 3, &id), 0);
	ck_assert_int_eq(memscope_strtab_intern(st, "a", 1, &i), 0);
	ck_assert_uint_ne(id, i);
	ck_assert_ptr_null(memscope_strtab_str(st, memscope_strtab_count(st), NULL));
	/* a large string gets its own chunk and the small ones keep working */
	static char big[200000];
	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(memscope_strtab_intern(st, big, sizeof(big), &id), 0);
	ck_assert_int_eq(memscope_strtab_intern(st, "after-big", 9, &i), 0);
	ck_assert_str_eq(memscope_strtab_str(st, i, NULL), "after-big");
	ck_assert_int_eq(memcmp(memscope_strtab_str(st, id, &len), big, sizeof(big)), 0);
	memscope_strtab_free(st);
}
END_TEST

START_TEST(stacks_are_interned_by_frames)
{
	struct memscope_strtab *st = memscope_strtab_new();
	uint32_t f[3], s1, s2, s3, s0, s0b;
	const uint32_t *frames;
	size_t n;

	memscope_strtab_intern(st, "a.py(1): f", 10, &f[0]);
	memscope_strtab_intern(st, "a.py(2): g", 10, &f[1]);
	memscope_strtab_intern(st, "a.py(3): h", 10, &f[2]);
	ck_assert_int_eq(memscope_strtab_intern_stack(st, f, 3, &s1), 0);
	ck_assert_int_eq(memscope_strtab_intern_stack(st, f, 3, &s2), 0);
	ck_assert_int_eq(memscope_strtab_intern_stack(st, f, 2, &s3), 0);
	ck_assert_uint_eq(s1, s2);
	ck_assert_uint_ne(s1, s3);
	ck_assert_uint_ge(s1, 1);
	frames = memscope_strtab_stack(st, s1, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(frames[2], f[2]);
	ck_assert_int_eq(memscope_strtab_intern_stack(st, NULL, 0, &s0), 0);
	ck_assert_int_eq(memscope_strtab_intern_stack(st, NULL, 0, &s0b), 0);
	ck_assert_uint_eq(s0, s0b);
	ck_assert_ptr_nonnull(memscope_strtab_stack(st, s0, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(memscope_strtab_stack(st, 0, &n));
	f[0] = 999999; /* not a string of the table */
	ck_assert_int_eq(memscope_strtab_intern_stack(st, f, 1, &s0), MEMSCOPE_E_ARG);
	memscope_strtab_free(st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("strtab");
	TCase *tc = tcase_create("intern");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, well_known_ids_are_constants);
	tcase_add_test(tc, interning_dedupes_and_survives_growth);
	tcase_add_test(tc, stacks_are_interned_by_frames);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
