/* Unit tests of the flame analysis (memscope/flame.h): one root frame per input and its name, the
 * pools counted by default (each input's, or the inputs' together with merge) and asked for,
 * C frames merging by function, and grouping by stack falling back to op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define HEADER                                                                                     \
	"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call "     \
	"Stack(Python),Call Stack(C)\n"

/* A PTA MALLOC of size at ID/time id with a Python and a C stack (either may be ""). */
#define PTA(id, size, py, c)                                                                       \
#id ",MALLOC,PTA,N/A,1" #id ",7,7,0,0x" #id "00,\"{allocation_id:" #id ",addr:0x" #id      \
	    "00,size:" #size "}\",\"" py "\",\"" c "\"\n"
#define HAL(id, size, py)                                                                          \
#id ",MALLOC,HAL,N/A,1" #id ",7,7,0,0x" #id "00,\"{allocation_id:" #id ",addr:0x" #id      \
	    "00,size:" #size "}\",\"" py "\",\n"

struct feed_ctx {
	struct memscope_flame *f;
	uint32_t src;
};

/* An event of input c->src. */
static int feed_one(void *ctx, const struct memscope_event *ev)
{
	const struct feed_ctx *c = ctx;
	struct memscope_event e = *ev;

	e.src = c->src;
	return memscope_flame_feed(c->f, &e);
}

/* The events of csv fed as input src of a run, strings in st. */
static void feed_input(
	struct memscope_flame *f, struct memscope_strtab *st, const char *csv, uint32_t src)
{
	struct memscope_source *in = NULL;
	struct memscope_error err;
	struct feed_ctx c = { f, src };

	ck_assert_int_eq(
		memscope_source_open_mem(&in, csv, strlen(csv), "mem.csv", st, NULL, &err), 0);
	ck_assert_int_eq(memscope_source_read(in, feed_one, &c, &err), 0);
	memscope_source_close(in);
}

/* The folded lines of metric (malloc'd). */
static char *folded(const struct memscope_flame *f, unsigned metric)
{
	struct memscope_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(memscope_flame_write_folded(out, f, metric, &err), 0);
	ck_assert_int_eq(fclose(out), 0);
	return text;
}

/* The inputs' csvs fed as inputs 0..n-1 named names, with o's options, finished; the strings in
 * *st (to free after the analysis). */
static struct memscope_flame *analyse(struct memscope_flame_opts *o, const char *const *csv,
	const char *const *names, size_t n, struct memscope_strtab **st)
{
	struct memscope_flame *f;
	size_t i;

	ck_assert_ptr_nonnull(*st = memscope_strtab_new());
	o->inputs = names;
	o->n_inputs = names ? n : 0;
	ck_assert_ptr_nonnull(f = memscope_flame_new(o, *st));
	for (i = 0; i < n; i++)
		feed_input(f, *st, csv[i], (uint32_t)i);
	ck_assert_int_eq(memscope_flame_finish(f), 0);
	return f;
}

static const char one[] = HEADER PTA(1, 100, "a.py(1): f", "") HAL(2, 1000, "h.py(1): h");
static const char hal_only[] = HEADER HAL(3, 50, "h.py(2): g");

/* Each input under a root frame: the shortest ending of its name's parts no other input has,
 * "(input N)" after a name given twice, "standard input" for "-", "input N" for no name. */
START_TEST(root_frame_names)
{
	const char *const csv[] = { one, one, one, one, one, one, one };
	const char *const names[] = { "/data/run1/rank0/dump.csv", "/data/run2/rank0/dump.csv",
		"rank1/dump.csv", "rank1/dump.csv", "-", "", "other.csv" };
	struct memscope_flame_opts o;
	struct memscope_strtab *st;
	struct memscope_flame *f;
	char *text;

	memscope_flame_opts_init(&o);
	f = analyse(&o, csv, names, 7, &st);
	text = folded(f, MEMSCOPE_FLAME_ALLOCATED);
	ck_assert_ptr_nonnull(strstr(text, "run1/rank0/dump.csv;a.py(1): f 100\n"));
	ck_assert_ptr_nonnull(strstr(text, "run2/rank0/dump.csv;a.py(1): f 100\n"));
	ck_assert_ptr_nonnull(strstr(text, "rank1/dump.csv (input 2);a.py(1): f 100\n"));
	ck_assert_ptr_nonnull(strstr(text, "rank1/dump.csv (input 3);a.py(1): f 100\n"));
	ck_assert_ptr_nonnull(strstr(text, "standard input;a.py(1): f 100\n"));
	ck_assert_ptr_nonnull(strstr(text, "input 5;a.py(1): f 100\n"));
	ck_assert_ptr_nonnull(strstr(text, "other.csv;a.py(1): f 100\n"));
	free(text);
	memscope_flame_free(f);
	memscope_strtab_free(st);
}
END_TEST

/* The pools by default: each input's framework pools, HAL without them; with merge those of
 * the inputs together; asked for, HAL beside PTA is counted and said to be nested. */
START_TEST(pools_per_input)
{
	const char *const csv[] = { one, hal_only };
	const char *const names[] = { "a.csv", "b.csv" };
	struct memscope_flame_opts o;
	struct memscope_strtab *st;
	struct memscope_flame *f;
	char *text;
	uint64_t seen = 0;
	int nested = -1;

	memscope_flame_opts_init(&o);
	f = analyse(&o, csv, names, 2, &st);
	text = folded(f, MEMSCOPE_FLAME_ALLOCATED);
	ck_assert_str_eq(text, "a.csv;a.py(1): f 100\nb.csv;h.py(2): g 50\n");
	ck_assert_uint_eq(memscope_flame_pools(f, &seen, &nested),
		MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_PTA) | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL));
	ck_assert_uint_eq(seen, MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL)); /* a.csv's, beside its PTA */
	ck_assert_int_eq(nested, 0);
	free(text);
	memscope_flame_free(f);
	memscope_strtab_free(st);

	memscope_flame_opts_init(&o);
	o.merge = 1;
	f = analyse(&o, csv, names, 2, &st);
	text = folded(f, MEMSCOPE_FLAME_ALLOCATED);
	ck_assert_str_eq(text, "a.py(1): f 100\n");
	ck_assert_uint_eq(
		memscope_flame_pools(f, &seen, NULL), MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_PTA));
	ck_assert_uint_eq(seen, MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL)); /* merged: HAL left out */
	free(text);
	memscope_flame_free(f);
	memscope_strtab_free(st);

	memscope_flame_opts_init(&o);
	o.pools = MEMSCOPE_POOLS_ALL;
	f = analyse(&o, csv, NULL, 1, &st);
	text = folded(f, MEMSCOPE_FLAME_ALLOCATED);
	ck_assert_str_eq(text, "h.py(1): h 1000\na.py(1): f 100\n");
	memscope_flame_pools(f, NULL, &nested);
	ck_assert_int_eq(nested, 1);
	free(text);
	memscope_flame_free(f);
	memscope_strtab_free(st);
}
END_TEST

/* The peak of the default pools is PTA's, not that of the HAL memory holding it. */
START_TEST(peak_of_the_pools_counted)
{
	const char *const csv[] = { one };
	struct memscope_flame_opts o;
	struct memscope_strtab *st;
	struct memscope_flame *f;
	const struct memscope_flame_peak *pk;

	memscope_flame_opts_init(&o);
	o.metrics = 1u << MEMSCOPE_FLAME_PEAK;
	f = analyse(&o, csv, NULL, 1, &st);
	pk = memscope_flame_peak(f);
	ck_assert_int_eq(pk->found, 1);
	ck_assert_uint_eq(pk->pool, MEMSCOPE_SUB_PTA);
	ck_assert_uint_eq(pk->bytes, 100);
	memscope_flame_free(f);
	memscope_strtab_free(st);
}
END_TEST

/* C frames of one function at other offsets and addresses, and from other paths, are one frame:
 * their weights add; the module stays. */
START_TEST(c_frames_merge)
{
	static const char csv[] = HEADER PTA(1, 10, "",
		"/usr/lib/libt.so(_ZN2ns1fEv+0x10) [0x7f01]\n/usr/lib/libt.so(main+0x1) [0x7f02]")
		PTA(2, 20, "", "/opt/libt.so(_ZN2ns1fEv+0x2a) [0x7f99]\nlibt.so(main+0x7) [0x7f98]")
			PTA(3, 5, "", "libt.so(_ZN2ns1gEi+0x1) [0x1]");
	const char *const in[] = { csv };
	struct memscope_flame_opts o;
	struct memscope_strtab *st;
	struct memscope_flame *f;
	char *text;

	memscope_flame_opts_init(&o);
	f = analyse(&o, in, NULL, 1, &st);
	text = folded(f, MEMSCOPE_FLAME_ALLOCATED);
	ck_assert_str_eq(text, "main (libt.so);ns::f() (libt.so) 30\nns::g(int) (libt.so) 5\n");
	free(text);
	memscope_flame_free(f);
	memscope_strtab_free(st);
}
END_TEST

/* Grouped by stack, no MALLOC with a stack or owner tag: by op when there are op rows; a stack
 * anywhere keeps the grouping; no op rows keep the placeholder. */
START_TEST(no_stacks_fall_back_to_op)
{
	static const char ops[] = HEADER "1,OP_LAUNCH,ATEN_START,aten.mm,11,7,7,0,N/A,,,\n" PTA(
		2, 64, "", "") "3,OP_LAUNCH,ATEN_END,aten.mm,13,7,7,0,N/A,,,\n" PTA(4, 16, "", "");
	static const char late[] = HEADER "1,OP_LAUNCH,ATEN_START,aten.mm,11,7,7,0,N/A,,,\n" PTA(2,
		64, "",
		"") "3,OP_LAUNCH,ATEN_END,aten.mm,13,7,7,0,N/A,,,\n" PTA(4, 16, "x.py(1): x", "");
	static const char none[] = HEADER PTA(2, 64, "", "");
	const char *const in[] = { ops, late, none };
	const char *const want[] = { "aten.mm 64\n[PTA, no op] 16\n",
		"[PTA, no stack] 64\nx.py(1): x 16\n", "[PTA, no stack] 64\n" };
	const unsigned group[] = { MEMSCOPE_FLAME_BY_OP, MEMSCOPE_FLAME_BY_STACK,
		MEMSCOPE_FLAME_BY_STACK };
	struct memscope_flame_opts o;
	struct memscope_strtab *st;
	struct memscope_flame *f;
	char *text;
	size_t i;

	for (i = 0; i < 3; i++) {
		memscope_flame_opts_init(&o);
		o.metrics = (1u << MEMSCOPE_FLAME_ALLOCATED) | (1u << MEMSCOPE_FLAME_COUNT) |
			    (1u << MEMSCOPE_FLAME_PEAK);
		f = analyse(&o, &in[i], NULL, 1, &st);
		ck_assert_uint_eq(memscope_flame_grouped_by(f), group[i]);
		text = folded(f, MEMSCOPE_FLAME_ALLOCATED);
		ck_assert_str_eq(text, want[i]);
		free(text);
		memscope_flame_free(f);
		memscope_strtab_free(st);
		/* the peak alone makes no path at its MALLOCs: the same grouping */
		memscope_flame_opts_init(&o);
		o.metrics = 1u << MEMSCOPE_FLAME_PEAK;
		f = analyse(&o, &in[i], NULL, 1, &st);
		ck_assert_uint_eq(memscope_flame_grouped_by(f), group[i]);
		memscope_flame_free(f);
		memscope_strtab_free(st);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("flame");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, root_frame_names);
	tcase_add_test(tc, pools_per_input);
	tcase_add_test(tc, peak_of_the_pools_counted);
	tcase_add_test(tc, c_frames_merge);
	tcase_add_test(tc, no_stacks_fall_back_to_op);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
