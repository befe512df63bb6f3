/* Unit tests of the private helpers: strict number parsing, varints, zigzag, the u64 hash map. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/u64map.h"
#include "testutil.h"

START_TEST(parse_numbers_strictly)
{
	uint64_t u;
	int64_t v;

	ck_assert_int_eq(parse_u64("12", 2, &u), 0);
	ck_assert_uint_eq(u, 12);
	ck_assert_int_eq(parse_u64("18446744073709551615", 20, &u), 0);
	ck_assert_uint_eq(u, UINT64_MAX);
	ck_assert_int_eq(parse_u64("18446744073709551616", 20, &u), -1);
	ck_assert_int_eq(parse_u64("12abc", 5, &u), -1);
	ck_assert_int_eq(parse_u64("", 0, &u), -1);
	ck_assert_int_eq(parse_u64("+1", 2, &u), -1);
	ck_assert_int_eq(parse_u64(" 1", 2, &u), -1);
	ck_assert_int_eq(parse_i64("-18944", 6, &v), 0);
	ck_assert_int_eq(v, -18944);
	ck_assert_int_eq(parse_i64("-9223372036854775808", 20, &v), 0);
	ck_assert(v == INT64_MIN);
	ck_assert_int_eq(parse_i64("9223372036854775808", 19, &v), -1);
	ck_assert_int_eq(parse_i64("-", 1, &v), -1);
	ck_assert_int_eq(parse_hex64("000012c041400000", 16, &u), 0);
	ck_assert_uint_eq(u, 0x12c041400000ull);
	ck_assert_int_eq(parse_hex64("12g", 3, &u), -1);
	ck_assert_int_eq(parse_hex64("11112222333344445", 17, &u), -1);
	ck_assert(is_canonical_u64("0", 1));
	ck_assert(!is_canonical_u64("01", 2));
	ck_assert(is_canonical_i64("-5", 2));
	ck_assert(!is_canonical_i64("-0", 2));
	ck_assert(!is_canonical_i64("-05", 3));
}
END_TEST

START_TEST(format_numbers)
{
	char b[32];

	ck_assert_uint_eq(fmt_u64(b, 0), 1);
	ck_assert_int_eq(memcmp(b, "0", 1), 0);
	ck_assert_uint_eq(fmt_u64(b, UINT64_MAX), 20);
	ck_assert_int_eq(memcmp(b, "18446744073709551615", 20), 0);
	ck_assert_uint_eq(fmt_i64(b, INT64_MIN), 20);
	ck_assert_int_eq(memcmp(b, "-9223372036854775808", 20), 0);
	fmt_hex16(b, 0x12c041400000ull);
	ck_assert_int_eq(memcmp(b, "0x000012c041400000", 18), 0);
}
END_TEST

START_TEST(varints_round_trip_and_reject_bad_input)
{
	static const uint64_t vals[] = { 0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX };
	unsigned char b[16];
	uint64_t v;
	size_t i, n;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		n = varint_put(b, vals[i]);
		ck_assert_int_eq(varint_get(b, n, &v), (int)n);
		ck_assert(v == vals[i]);
		ck_assert_int_eq(varint_get(b, n - 1, &v), 0); /* cut: incomplete */
	}
	memset(b, 0xff, sizeof(b));
	ck_assert_int_eq(varint_get(b, sizeof(b), &v), -1); /* longer than 10 bytes */
	b[9] = 0x02;					    /* 10th byte overflows 64 bits */
	ck_assert_int_eq(varint_get(b, 10, &v), -1);
	ck_assert(unzigzag(zigzag(INT64_MIN)) == INT64_MIN);
	ck_assert(unzigzag(zigzag(-1)) == -1);
	ck_assert_uint_eq(zigzag(-1), 1);
	ck_assert_uint_eq(zigzag(1), 2);
}
END_TEST

START_TEST(u64map_matches_a_plain_array)
{
	enum { N = 20000 };
	static uint64_t ref[N];
	static unsigned char present[N];
	struct u64map m = { 0 };
	uint64_t a, b;
	unsigned i, step;

	srand(7);
	for (step = 0; step < 200000; step++) {
		unsigned k = (unsigned)rand() % N;
		uint64_t key = (uint64_t)k * 0x10000 + 0x7f0000000000ull; /* pointer-like keys */

		switch (rand() % 3) {
		case 0:
		case 1:
			ck_assert_int_eq(u64map_put(&m, key, step, k), 0);
			ref[k] = step;
			present[k] = 1;
			break;
		default:
			ck_assert_int_eq(u64map_del(&m, key, &a, &b), present[k]);
			if (present[k])
				ck_assert_uint_eq(a, ref[k]);
			present[k] = 0;
		}
	}
	size_t n = 0;

	for (i = 0; i < N; i++) {
		uint64_t key = (uint64_t)i * 0x10000 + 0x7f0000000000ull;

		ck_assert_int_eq(u64map_get(&m, key, &a, &b), present[i]);
		if (present[i]) {
			ck_assert_uint_eq(a, ref[i]);
			ck_assert_uint_eq(b, i);
			n++;
		}
	}
	ck_assert_uint_eq(m.n, n);
	u64map_free(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, parse_numbers_strictly);
	tcase_add_test(tc, format_numbers);
	tcase_add_test(tc, varints_round_trip_and_reject_bad_input);
	tcase_add_test(tc, u64map_matches_a_plain_array);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
