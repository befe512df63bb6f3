/* Unit tests of the private helpers: strict number parsing, varints, zigzag, the u64 hash map and
 * ordered map. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/u64map.h"
#include "core/u64tree.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"
#include "testutil.h"

START_TEST(parse_numbers_strictly)
{
	uint64_t u;
	int64_t v;

	ck_assert_int_eq(ms__parse_u64("12", 2, &u), 0);
	ck_assert_uint_eq(u, 12);
	ck_assert_int_eq(ms__parse_u64("18446744073709551615", 20, &u), 0);
	ck_assert_uint_eq(u, UINT64_MAX);
	ck_assert_int_eq(ms__parse_u64("18446744073709551616", 20, &u), -1);
	ck_assert_int_eq(ms__parse_u64("12abc", 5, &u), -1);
	ck_assert_int_eq(ms__parse_u64("", 0, &u), -1);
	ck_assert_int_eq(ms__parse_u64("+1", 2, &u), -1);
	ck_assert_int_eq(ms__parse_u64(" 1", 2, &u), -1);
	ck_assert_int_eq(ms__parse_i64("-18944", 6, &v), 0);
	ck_assert_int_eq(v, -18944);
	ck_assert_int_eq(ms__parse_i64("-9223372036854775808", 20, &v), 0);
	ck_assert(v == INT64_MIN);
	ck_assert_int_eq(ms__parse_i64("9223372036854775808", 19, &v), -1);
	ck_assert_int_eq(ms__parse_i64("-", 1, &v), -1);
	ck_assert_int_eq(ms__parse_hex64("000012c041400000", 16, &u), 0);
	ck_assert_uint_eq(u, 0x12c041400000ull);
	ck_assert_int_eq(ms__parse_hex64("12g", 3, &u), -1);
	ck_assert_int_eq(ms__parse_hex64("11112222333344445", 17, &u), -1);
	ck_assert(ms__is_canonical_u64("0", 1));
	ck_assert(!ms__is_canonical_u64("01", 2));
	ck_assert(ms__is_canonical_i64("-5", 2));
	ck_assert(!ms__is_canonical_i64("-0", 2));
	ck_assert(!ms__is_canonical_i64("-05", 3));
}
END_TEST

START_TEST(format_numbers)
{
	char b[32];

	ck_assert_uint_eq(ms__fmt_u64(b, 0), 1);
	ck_assert_int_eq(memcmp(b, "0", 1), 0);
	ck_assert_uint_eq(ms__fmt_u64(b, UINT64_MAX), 20);
	ck_assert_int_eq(memcmp(b, "18446744073709551615", 20), 0);
	ck_assert_uint_eq(ms__fmt_i64(b, INT64_MIN), 20);
	ck_assert_int_eq(memcmp(b, "-9223372036854775808", 20), 0);
	ms__fmt_hex16(b, 0x12c041400000ull);
	ck_assert_int_eq(memcmp(b, "0x000012c041400000", 18), 0);
}
END_TEST

START_TEST(text_units_follow_one_rule)
{
	static const struct {
		uint64_t bytes;
		const char *text;
	} b[] = {
		{ 0, "0 B" },
		{ 1023, "1023 B" },
		{ 1024, "1.00 KiB" },
		{ 1536, "1.50 KiB" },
		{ 40900968, "39.0 MiB" },
		{ 7015424, "6.69 MiB" },
		{ 335007449088ULL, "312 GiB" },
		{ 1048575, "1.00 MiB" },
		{ 1048166, "1.00 MiB" }, /* 1023.6 KiB: "%.0f" would print "1024 KiB" */
		{ 1073217536, "1.00 GiB" },
		{ 1047552, "1023 KiB" },
		{ MEMSCOPE_BYTES_OVERFLOW, "more than 16.0 EiB (the total overflowed)" },
	};
	char buf[MEMSCOPE_BYTES_TEXT_MAX], t[MEMSCOPE_SECONDS_TEXT_MAX];
	size_t i;

	for (i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		ck_assert_str_eq(memscope_bytes_text(buf, sizeof(buf), b[i].bytes), b[i].text);
	ck_assert_str_eq(memscope_seconds_text(t, sizeof(t), 12345678901ULL, 1000), "12.345677 s");
	ck_assert_str_eq(memscope_seconds_text(t, sizeof(t), 500, 500000), "-0.000499 s");
	ck_assert_str_eq(memscope_seconds_text(t, sizeof(t), 7, 7), "0.000000 s");
}
END_TEST

START_TEST(c_frames_read_as_functions)
{
	static const struct {
		const char *in, *out;
	} f[] = {
		{ "/usr/lib/libtorch_npu.so(_ZN7c10_npu5utils5emptyEv+0x10b) [0x7f3a9f4445dc]",
			"c10_npu::utils::empty() (libtorch_npu.so)" },
		{ "libtorch_npu.so(at::native::empty+0x1c) [0x7f00]",
			"at::native::empty (libtorch_npu.so)" },
		{ "libc.so.6(__libc_start_main+0xf3) [0x7f01]", "__libc_start_main (libc.so.6)" },
		{ "./a.out(+0x1189) [0x55d0a1c2b189]", "a.out+0x1189" },
		{ "libx.so(_Znot_valid+0x1) [0x1]", "_Znot_valid (libx.so)" },
		{ "/usr/lib/python3/train.py(42): step", "/usr/lib/python3/train.py(42): step" },
		{ "[0x7f01]", "[0x7f01]" },
		{ "libx.so() [0x1]", "libx.so() [0x1]" },
		{ "libx.so(f+0xzz) [0x1]", "libx.so(f+0xzz) [0x1]" },
		{ "Foo::malloc(signed char, int) (/src/x.cpp:99)",
			"Foo::malloc(signed char, int) (/src/x.cpp:99)" },
		{ "", "" },
	};
	char out[256], small[8];
	size_t i, n;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		n = memscope_frame_text(f[i].in, strlen(f[i].in), out, sizeof(out));
		ck_assert_str_eq(out, f[i].out);
		ck_assert_uint_eq(n, strlen(f[i].out));
	}
	/* cut like snprintf, the whole length returned */
	n = memscope_frame_text(f[0].in, strlen(f[0].in), small, sizeof(small));
	ck_assert_str_eq(small, "c10_npu");
	ck_assert_uint_eq(n, strlen(f[0].out));
}
END_TEST

/* The interned form: short and long frames (past the stack buffer), an id the table lacks. */
START_TEST(c_frames_interned_as_functions)
{
	struct memscope_strtab *st = memscope_strtab_new();
	char lng[2100];
	uint32_t raw, text;
	size_t len;
	const char *s;

	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(
		memscope_strtab_intern(st, "libc.so.6(__libc_start_main+0xf3) [0x7f01]", 43, &raw),
		0);
	ck_assert_int_eq(memscope_strtab_frame_text(st, raw, &text), 0);
	s = memscope_strtab_str(st, text, &len);
	ck_assert_str_eq(s, "__libc_start_main (libc.so.6)");
	memset(lng, 'f', sizeof(lng));
	memcpy(lng, "/x/liba.so(", 11);
	memcpy(lng + 2000, "+0x1) [0x2]", 11);
	ck_assert_int_eq(memscope_strtab_intern(st, lng, 2011, &raw), 0);
	ck_assert_int_eq(memscope_strtab_frame_text(st, raw, &text), 0);
	s = memscope_strtab_str(st, text, &len);
	ck_assert_uint_eq(len, 1989 + strlen(" (liba.so)"));
	ck_assert_int_eq(memcmp(s + 1989, " (liba.so)", 10), 0);
	ck_assert_int_eq(memscope_strtab_frame_text(st, 999999, &text), 0);
	ck_assert_uint_eq(text, 999999);
	memscope_strtab_free(st);
}
END_TEST

START_TEST(varints_round_trip_and_reject_bad_input)
{
	static const uint64_t vals[] = { 0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX };
	unsigned char b[16];
	uint64_t v;
	size_t i, n;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		n = ms__varint_put(b, vals[i]);
		ck_assert_int_eq(ms__varint_get(b, n, &v), (int)n);
		ck_assert(v == vals[i]);
		ck_assert_int_eq(ms__varint_get(b, n - 1, &v), 0); /* cut: incomplete */
	}
	memset(b, 0xff, sizeof(b));
	ck_assert_int_eq(ms__varint_get(b, sizeof(b), &v), -1); /* longer than 10 bytes */
	b[9] = 0x02;						/* 10th byte overflows 64 bits */
	ck_assert_int_eq(ms__varint_get(b, 10, &v), -1);
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
			ck_assert_int_eq(ms__u64map_put(&m, key, step, k), 0);
			ref[k] = step;
			present[k] = 1;
			break;
		default:
			ck_assert_int_eq(ms__u64map_del(&m, key, &a, &b), present[k]);
			if (present[k])
				ck_assert_uint_eq(a, ref[k]);
			present[k] = 0;
		}
	}
	size_t n = 0;

	for (i = 0; i < N; i++) {
		uint64_t key = (uint64_t)i * 0x10000 + 0x7f0000000000ull;

		ck_assert_int_eq(ms__u64map_get(&m, key, &a, &b), present[i]);
		if (present[i]) {
			ck_assert_uint_eq(a, ref[i]);
			ck_assert_uint_eq(b, i);
			n++;
		}
	}
	ck_assert_uint_eq(m.n, n);
	ms__u64map_free(&m);
}
END_TEST

/* The ordered map against a plain array of keys 0..N-1 (scaled): puts, overwrites and deletes
 * in a random order, then every key's get, floor and after; then keys put in falling order and
 * deleted in rising order (a treap walked in loops: no depth to fear). */
START_TEST(u64tree_matches_a_plain_array)
{
	enum { N = 3000 };
	static int present[N];
	static uint64_t ref[N];
	struct u64tree t = { 0 };
	uint64_t a, b, k, x = 88172645463325252ull, n = 0;
	int i, j, step;

	for (step = 0; step < 20 * N; step++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		i = (int)(x % N);
		if (x >> 62) {
			ck_assert_int_eq(ms__u64tree_put(&t, (uint64_t)i * 16 + 5, step, i), 0);
			present[i] = 1;
			ref[i] = (uint64_t)step;
		} else {
			ck_assert_int_eq(
				ms__u64tree_del(&t, (uint64_t)i * 16 + 5, &a, &b), present[i]);
			if (present[i])
				ck_assert_uint_eq(a, ref[i]);
			present[i] = 0;
		}
	}
	for (i = 0; i < N; i++)
		n += (uint64_t)present[i];
	ck_assert_uint_eq(t.count, n);
	for (i = 0; i < N; i++) {
		uint64_t key = (uint64_t)i * 16 + 5;

		ck_assert_int_eq(ms__u64tree_get(&t, key, &a, &b), present[i]);
		if (present[i])
			ck_assert(a == ref[i] && b == (uint64_t)i);
		/* floor of key + 3: key itself when present, else the nearest present below */
		for (j = i; j >= 0 && !present[j]; j--)
			;
		ck_assert_int_eq(ms__u64tree_floor(&t, key + 3, &k, &a, &b), j >= 0);
		if (j >= 0)
			ck_assert_uint_eq(k, (uint64_t)j * 16 + 5);
		for (j = i + 1; j < N && !present[j]; j++)
			;
		ck_assert_int_eq(ms__u64tree_after(&t, key, &k, NULL, NULL), j < N);
		if (j < N)
			ck_assert_uint_eq(k, (uint64_t)j * 16 + 5);
	}
	ck_assert_int_eq(ms__u64tree_floor(&t, 4, NULL, NULL, NULL), 0);
	ms__u64tree_free(&t);
	for (i = 200000; i > 0; i--)
		ck_assert_int_eq(ms__u64tree_put(&t, (uint64_t)i << 20, (uint64_t)i, 0), 0);
	ck_assert(ms__u64tree_floor(&t, (77ull << 20) + 1, &k, &a, NULL) && k == 77ull << 20 &&
		  a == 77);
	for (i = 1; i <= 200000; i++)
		ck_assert_int_eq(ms__u64tree_del(&t, (uint64_t)i << 20, NULL, NULL), 1);
	ck_assert_uint_eq(t.count, 0);
	ck_assert_int_eq(ms__u64tree_after(&t, 0, NULL, NULL, NULL), 0);
	ms__u64tree_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, parse_numbers_strictly);
	tcase_add_test(tc, format_numbers);
	tcase_add_test(tc, text_units_follow_one_rule);
	tcase_add_test(tc, c_frames_read_as_functions);
	tcase_add_test(tc, c_frames_interned_as_functions);
	tcase_add_test(tc, varints_round_trip_and_reject_bad_input);
	tcase_add_test(tc, u64map_matches_a_plain_array);
	tcase_add_test(tc, u64tree_matches_a_plain_array);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
