/* Unit tests of the step comparison: the alignment equals a literal port of the reference's
 * algorithm on random sequences. */
#include <stdlib.h>
#include <string.h>

#include "analyses/diff.h"
#include "testutil.h"

/*
 * formats/analyses.md "Compare: alignment", the reference's way: a node per (d, k) with its
 * predecessor, the tie rule, the backtrack from the end node. pairs gets (i, j) of the alignment
 * in forward order (-1: absent).
 */
struct node {
	long x, y, prev;
	int match;
};

static size_t reference_diff(const int *a, long n, const int *b, long m, long (*pairs)[2])
{
	long max = n + m + 1, d, k, cap = 2 * (max + 1) * (max + 2) + 16, nn = 0, end = -1;
	struct node *nodes = malloc((size_t)cap * sizeof(*nodes));
	long *v = malloc((size_t)(2 * max + 3) * sizeof(*v));
	size_t np = 0, i;

	ck_assert_ptr_nonnull(nodes);
	ck_assert_ptr_nonnull(v);
	for (k = 0; k < 2 * max + 3; k++)
		v[k] = -1;
	nodes[nn] = (struct node){ 0, -1, -1, 0 };
	v[1 + max] = nn++;
	for (d = 0; d <= max && end < 0; d++) {
		for (k = -d; k <= d; k += 2) {
			long prev, x, y, node;

			if (k == -d ||
				(k != d && nodes[v[k - 1 + max]].x < nodes[v[k + 1 + max]].x)) {
				x = nodes[v[k + 1 + max]].x;
				prev = v[k + 1 + max];
			} else {
				x = nodes[v[k - 1 + max]].x + 1;
				prev = v[k - 1 + max];
			}
			y = x - k;
			nodes[nn] = (struct node){ x, y, prev, 0 };
			node = nn++;
			while (x < n && y < m && a[x] == b[y])
				x++, y++;
			if (x > nodes[node].x) {
				nodes[nn] = (struct node){ x, y, node, 1 };
				node = nn++;
			}
			v[k + max] = node;
			if (x >= n && y >= m) {
				end = node;
				break;
			}
		}
	}
	/* backtrack: pairs come out backwards */
	for (k = end; nodes[k].prev >= 0 && nodes[nodes[k].prev].y >= 0; k = nodes[k].prev) {
		const struct node *nd = &nodes[k], *pv = &nodes[nd->prev];

		if (nd->match) {
			long x = nd->x, y = nd->y;

			while (y > pv->y) {
				pairs[np][0] = --x;
				pairs[np++][1] = --y;
			}
		} else if (pv->x < nd->x) {
			pairs[np][0] = nd->x - 1;
			pairs[np++][1] = -1;
		} else {
			pairs[np][0] = -1;
			pairs[np++][1] = nd->y - 1;
		}
	}
	for (i = 0; i < np / 2; i++) {
		long t0 = pairs[i][0], t1 = pairs[i][1];

		pairs[i][0] = pairs[np - 1 - i][0];
		pairs[i][1] = pairs[np - 1 - i][1];
		pairs[np - 1 - i][0] = t0;
		pairs[np - 1 - i][1] = t1;
	}
	free(nodes);
	free(v);
	return np;
}

struct got {
	long (*rows)[2]; /* base index or -1, compare index or -1 */
	size_t n;
	const uint32_t *name_a, *name_b;
	long na, nb;
};

/* Map a row back to indices: the rows of each side come in order, so count them. */
static int collect(void *ctx, const struct memscope_compare_row *r)
{
	struct got *g = ctx;

	g->rows[g->n][0] = r->has_base ? g->na++ : -1;
	g->rows[g->n][1] = r->has_cmp ? g->nb++ : -1;
	/* the name shown is the compare side's when present */
	ck_assert_uint_eq(
		r->name, r->has_cmp ? g->name_b[g->rows[g->n][1]] : g->name_a[g->rows[g->n][0]]);
	g->n++;
	return 0;
}

static void add_ops(struct memscope_compare_side *s, const int *seq, long n, uint32_t *names,
	const uint32_t *ids)
{
	struct memscope_event ev;
	long i;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MEMSCOPE_KIND_OP_LAUNCH;
	ev.subtype = MEMSCOPE_SUB_ATEN_END;
	ev.pid = ev.tid = 7;
	for (i = 0; i < n; i++) {
		ev.id = (uint64_t)i;
		ev.ts_ns = 1000 + 10 * (uint64_t)i;
		ev.name = names[i] = ids[seq[i]];
		ck_assert_int_eq(memscope_compare_side_add(s, &ev), 0);
	}
	/* a framework-pool row after them (without one the comparison is refused) */
	ev.kind = MEMSCOPE_KIND_MALLOC;
	ev.subtype = MEMSCOPE_SUB_PTA;
	ev.ts_ns = 1000 + 10 * (uint64_t)n;
	ev.name = 0;
	ck_assert_int_eq(memscope_compare_side_add(s, &ev), 0);
}

START_TEST(alignment_equals_the_reference_algorithm)
{
	enum { MAXLEN = 300, RUNS = 3200 };
	struct memscope_strtab *st = memscope_strtab_new();
	uint32_t ids[5], names_a[MAXLEN], names_b[MAXLEN];
	static long want[2 * MAXLEN + 2][2], got_rows[2 * MAXLEN + 2][2];
	int a[MAXLEN], b[MAXLEN], run, i, pass;
	char nm[8];

	for (i = 0; i < 5; i++) {
		int len = snprintf(nm, sizeof(nm), "op%d", i);

		memscope_strtab_intern(st, nm, (size_t)len, &ids[i]);
	}
	srand(11);
	for (run = 0; run < RUNS; run++) {
		/* mostly short pairs; every 32nd long, so that checkpoints fall inside the path */
		long len = run % 32 ? 40 : MAXLEN;
		long n = rand() % (len + 1), m = rand() % (len + 1);
		int alphabet = 1 + rand() % 5;
		struct memscope_compare_opts opts = { MEMSCOPE_COMPARE_OP, 0,
			MEMSCOPE_METRIC_REFERENCE, 0 };
		struct memscope_compare_side *sa = memscope_compare_side_new("a", st);
		struct memscope_compare_side *sb = memscope_compare_side_new("b", st);
		struct memscope_compare_stats stats;
		struct memscope_error err;
		struct got g = { got_rows, 0, names_a, names_b, 0, 0 };
		size_t nw, k, matched;

		for (i = 0; i < n; i++)
			a[i] = rand() % alphabet;
		for (i = 0; i < m; i++)
			b[i] = rand() % 3 ? a[rand() % (n ? n : 1)] % alphabet : rand() % alphabet;
		add_ops(sa, a, n, names_a, ids);
		add_ops(sb, b, m, names_b, ids);
		nw = (n || m) ? reference_diff(a, n, b, m, want) : 0;
		/* sequences without a match are refused, after their rows */
		for (k = 0, matched = 0; k < nw; k++)
			matched += want[k][0] >= 0 && want[k][1] >= 0;
		/* with the direction bits, then with checkpoints (a budget of a few bytes) */
		for (pass = 0; pass < 2; pass++) {
			g.n = 0;
			g.na = g.nb = 0;
			opts.diff_bytes = pass ? (size_t)(len == MAXLEN ? 2048 : 64) : 0;
			ck_assert_int_eq(
				memscope_compare_run(sa, sb, &opts, st, collect, &g, &stats, &err),
				matched ? 0 : MEMSCOPE_E_INVALID);
			ck_assert_msg(g.n == nw,
				"run %d pass %d (n %ld, m %ld): %zu rows, reference %zu", run, pass,
				n, m, g.n, nw);
			for (k = 0; k < nw; k++)
				ck_assert_msg(got_rows[k][0] == want[k][0] &&
						      got_rows[k][1] == want[k][1],
					"run %d pass %d row %zu: (%ld, %ld), reference (%ld, %ld)",
					run, pass, k, got_rows[k][0], got_rows[k][1], want[k][0],
					want[k][1]);
		}
		memscope_compare_side_free(sa);
		memscope_compare_side_free(sb);
	}
	memscope_strtab_free(st);
}
END_TEST

/* The summary at the kernel level: counts per device in the order devices come, the names of
 * largest |diff| (summed per name and device) first. */
START_TEST(summary_devices_and_top)
{
	/* device, has_base, has_cmp, diff, name */
	static const int64_t rows[][5] = {
		{ 0, 1, 1, 5, 0 }, { 0, 1, 0, -7, 1 }, { 0, 0, 1, 0, 2 },
		{ 3, 1, 1, 7, 3 }, /* ties with -7: the first stays first */
		{ 3, 0, 1, INT64_MAX, 4 }, { 3, 1, 0, 1, 5 }, { 1, 1, 1, -2, 6 },
		{ 0, 1, 1, 3, 0 }, /* name 0 again: 8 in all */
	};
	struct memscope_compare_opts opts = { .level = MEMSCOPE_COMPARE_KERNEL };
	struct memscope_compare_summary *s = memscope_compare_summary_new(3, &opts);
	struct memscope_compare_summary *none = memscope_compare_summary_new(0, &opts);
	const struct memscope_compare_device *d;
	const struct memscope_compare_group *const *top;
	size_t i, n;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(none);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct memscope_compare_row r = { .device = (int32_t)rows[i][0],
			.has_base = (int)rows[i][1],
			.has_cmp = (int)rows[i][2],
			.diff = rows[i][3],
			.cmp = rows[i][3],
			.name = (uint32_t)rows[i][4],
			.index = i };

		ck_assert_int_eq(memscope_compare_summary_add(s, &r), 0);
		ck_assert_int_eq(memscope_compare_summary_add(none, &r), 0);
	}
	d = memscope_compare_summary_devices(s, &n);
	ck_assert_uint_eq(n, 4); /* device 0 comes twice: the order they come */
	ck_assert_int_eq(d[0].device, 0);
	ck_assert_uint_eq(d[0].n_matched, 1);
	ck_assert_uint_eq(d[0].n_base_only, 1);
	ck_assert_uint_eq(d[0].n_cmp_only, 1);
	ck_assert_int_eq(d[0].diff, -2);
	ck_assert_int_eq(d[1].device, 3);
	ck_assert_int_eq(d[1].diff, INT64_MAX); /* saturated */
	ck_assert_int_eq(d[2].device, 1);
	ck_assert_int_eq(d[3].device, 0);
	top = memscope_compare_summary_top(s, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(top[0]->name, 4);
	ck_assert_uint_eq(top[1]->name, 0); /* 5 + 3 */
	ck_assert_int_eq(top[1]->diff, 8);
	ck_assert_uint_eq(top[1]->n_differ, 2);
	ck_assert_int_eq(top[1]->diff_min, 3);
	ck_assert_int_eq(top[1]->diff_max, 5);
	ck_assert_uint_eq(top[1]->index[1], 7);
	ck_assert_uint_eq(top[2]->name, 1);
	memscope_compare_summary_top(none, &n);
	ck_assert_uint_eq(n, 0);
	memscope_compare_summary_free(s);
	memscope_compare_summary_free(none);
}
END_TEST

#define HDR                                                                                        \
	"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"          \
	"Call Stack(Python),Call Stack(C)\n"
#define POOL(id, kind, ts, addr, size, used)                                                       \
#id "," kind ",PTA,N/A," #ts ",1,1,0," addr ",\"{allocation_id:" #id ",addr:" addr         \
	    ",size:" #size ",total:8388608,used:" #used "}\",,\n"

/* own allocates 2 KiB itself (freed after its END: both rules agree); before is charged next's
 * 3 MiB by the reference's rule; next is charged lone's 512 B; lone's END has no START */
static const char sum_base[] = HDR "1,OP_LAUNCH,ATEN_START,own,10,1,1,0,N/A,,,\n"
				   "2,OP_LAUNCH,ATEN_END,own,20,1,1,0,N/A,,,\n"
				   "3,OP_LAUNCH,ATEN_START,before,30,1,1,0,N/A,,,\n"
				   "4,OP_LAUNCH,ATEN_END,before,40,1,1,0,N/A,,,\n"
				   "5,OP_LAUNCH,ATEN_START,next,50,1,1,0,N/A,,,\n"
				   "6,OP_LAUNCH,ATEN_END,next,60,1,1,0,N/A,,,\n"
				   "7,OP_LAUNCH,ATEN_END,lone,70,1,1,0,N/A,,,\n";
static const char sum_cmp[] =
	HDR "1,OP_LAUNCH,ATEN_START,own,10,1,1,0,N/A,,,\n" POOL(2, "MALLOC", 15, "0x10", 2048,
		2048) "3,OP_LAUNCH,ATEN_END,own,20,1,1,0,N/A,,,\n" POOL(4, "FREE", 25, "0x10", 2048,
		0) "5,OP_LAUNCH,ATEN_START,before,30,1,1,0,N/A,,,\n"
		   "6,OP_LAUNCH,ATEN_END,before,40,1,1,0,N/A,,,\n"
		   "7,OP_LAUNCH,ATEN_START,next,50,1,1,0,N/A,,,\n" POOL(8, "MALLOC", 55, "0x20",
			   3145728, 3145728) "9,OP_LAUNCH,ATEN_END,next,60,1,1,0,N/A,,,\n"
					     "10,OP_LAUNCH,ATEN_END,lone,70,1,1,0,N/A,,,\n" POOL(
						     11, "MALLOC", 80, "0x30", 512, 3146240);

static int side_feed(void *ctx, const struct memscope_event *ev)
{
	return memscope_compare_side_add(ctx, ev);
}

static struct memscope_compare_side *side_of(const char *csv, struct memscope_strtab *st)
{
	struct memscope_compare_side *s = memscope_compare_side_new("mem.csv", st);
	struct memscope_source *src = NULL;
	struct memscope_error err;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(
		memscope_source_open_mem(&src, csv, strlen(csv), "mem.csv", st, NULL, &err), 0);
	ck_assert_int_eq(memscope_source_read(src, side_feed, s, &err), 0);
	memscope_source_close(src);
	return s;
}

struct rows {
	struct memscope_compare_row r[8];
	size_t n;
	struct memscope_compare_summary *sum;
};

static int keep_row(void *ctx, const struct memscope_compare_row *r)
{
	struct rows *g = ctx;

	ck_assert_uint_lt(g->n, 8);
	g->r[g->n++] = *r;
	return memscope_compare_summary_add(g->sum, r);
}

struct lines {
	char text[8][2600];
	size_t n, stop_at; /* stop_at: return 1 at that line (from 1), 0: never */
};

static int keep_line(void *ctx, const char *text)
{
	struct lines *l = ctx;

	ck_assert_uint_lt(l->n, 8);
	snprintf(l->text[l->n], sizeof(l->text[0]), "%s", text);
	return ++l->n == l->stop_at;
}

/* Run sum_base against sum_cmp under metric into g (g->sum made here; the caller frees it). */
static void run_sum(struct memscope_strtab *st, enum memscope_compare_metric metric, unsigned level,
	struct rows *g)
{
	struct memscope_compare_side *a = side_of(sum_base, st), *b = side_of(sum_cmp, st);
	struct memscope_compare_opts opts = { .level = level, .metric = metric };
	struct memscope_compare_stats stats;
	struct memscope_error err;

	memset(g, 0, sizeof(*g));
	g->sum = memscope_compare_summary_new(5, &opts);
	ck_assert_ptr_nonnull(g->sum);
	ck_assert_int_eq(memscope_compare_run(a, b, &opts, st, keep_row, g, &stats, &err), 0);
	ck_assert_uint_eq(stats.n_rows, 4);
	memscope_compare_side_free(a);
	memscope_compare_side_free(b);
}

/* At the op level every row carries what its op allocated itself, under every metric; an END
 * without its START has none; rows are numbered in output order. */
START_TEST(rows_carry_own_values)
{
	/* base, cmp, diff; has_own, base_own, cmp_own, diff_own */
	static const int64_t want[4][7] = {
		{ 0, 2048, 2048, 1, 0, 2048, 2048 },	 /* own: agree */
		{ 0, 3145728, 3145728, 1, 0, 0, 0 },	 /* before: next's allocation */
		{ 0, 512, 512, 1, 0, 3145728, 3145728 }, /* next: lone's allocation */
		{ 0, 512, 512, 0, 0, 0, 0 },		 /* lone: no START */
	};
	static const enum memscope_compare_metric metrics[] = { MEMSCOPE_METRIC_REFERENCE,
		MEMSCOPE_METRIC_DELTA, MEMSCOPE_METRIC_PEAK };
	struct memscope_strtab *st = memscope_strtab_new();
	struct rows g;
	size_t i, m;

	ck_assert_ptr_nonnull(st);
	for (m = 0; m < 3; m++) {
		run_sum(st, metrics[m], 0, &g);
		ck_assert_uint_eq(g.n, 4);
		for (i = 0; i < 4; i++) {
			const struct memscope_compare_row *r = &g.r[i];

			ck_assert_uint_eq(r->index, i);
			if (metrics[m] == MEMSCOPE_METRIC_REFERENCE) {
				ck_assert_int_eq(r->base, want[i][0]);
				ck_assert_int_eq(r->cmp, want[i][1]);
				ck_assert_int_eq(r->diff, want[i][2]);
			}
			ck_assert_int_eq(r->has_own, want[i][3]);
			ck_assert_int_eq(r->base_own, want[i][4]);
			ck_assert_int_eq(r->cmp_own, want[i][5]);
			ck_assert_int_eq(r->diff_own, want[i][6]);
		}
		memscope_compare_summary_free(g.sum);
	}
	/* the op,kernel level carries none */
	run_sum(st, MEMSCOPE_METRIC_REFERENCE, MEMSCOPE_COMPARE_OP | MEMSCOPE_COMPARE_KERNEL, &g);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(g.r[i].has_own, 0);
	memscope_compare_summary_free(g.sum);
	memscope_strtab_free(st);
}
END_TEST

/*
 * What an op allocated itself: a pool row counts for the innermost op running on its thread
 * (not for the op it ran in, nor for an op of another thread running meanwhile); a row without
 * a thread for the newest op of its process. So the sides' sums count no byte twice, while the
 * delta values (the CSV's) count an inner op's bytes in its outer op too.
 */
static const char nest_base[] =
	HDR "1,OP_LAUNCH,ATEN_START,outer,10,1,1,0,N/A,,,\n" POOL(2, "MALLOC", 12, "0x10", 100,
		100) "3,OP_LAUNCH,ATEN_START,inner,14,1,1,0,N/A,,,\n"
		     "4,OP_LAUNCH,ATEN_START,other,15,1,2,0,N/A,,,\n" POOL(5, "MALLOC", 16, "0x20",
			     1000, 1100) "6,OP_LAUNCH,ATEN_END,inner,18,1,1,0,N/A,,,\n"
					 "7,OP_LAUNCH,ATEN_END,other,19,1,2,0,N/A,,,\n"
					 "8,OP_LAUNCH,ATEN_END,outer,20,1,1,0,N/A,,,\n";
/* the same, and thread 2 allocates 7 while "other" runs, a row without a thread 30 while both
 * run (other started last), and thread 1 allocates 5 with no op running on it */
static const char nest_cmp[] = HDR "1,OP_LAUNCH,ATEN_START,outer,10,1,1,0,N/A,,,\n" POOL(2,
	"MALLOC", 12, "0x10", 100,
	100) "3,OP_LAUNCH,ATEN_START,inner,14,1,1,0,N/A,,,\n"
	     "4,OP_LAUNCH,ATEN_START,other,15,1,2,0,N/A,,,\n" POOL(5, "MALLOC", 16, "0x20", 1000,
		     1100) "9,MALLOC,PTA,N/A,16,1,2,0,0x30,\"{allocation_id:9,addr:0x30,"
			   "size:7,total:8388608,used:1107}\",,\n"
			   "10,MALLOC,PTA,N/A,17,1,N/A,0,0x40,\"{allocation_id:10,"
			   "addr:0x40,size:30,total:8388608,used:1137}\",,\n"
			   "6,OP_LAUNCH,ATEN_END,inner,18,1,1,0,N/A,,,\n"
			   "7,OP_LAUNCH,ATEN_END,other,19,1,2,0,N/A,,,\n"
			   "8,OP_LAUNCH,ATEN_END,outer,20,1,1,0,N/A,,,\n" POOL(
				   11, "MALLOC", 25, "0x50", 5, 1142);

START_TEST(own_values_count_each_byte_once)
{
	/* inner, other, outer: base_own, cmp_own, delta base, delta cmp */
	static const int64_t want[3][4] = {
		{ 1000, 1000, 1000, 1000 },
		{ 0, 37, 0, 37 },
		{ 100, 100, 1100, 1100 },
	};
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_compare_side *a, *b;
	struct memscope_compare_opts opts = { .metric = MEMSCOPE_METRIC_DELTA };
	struct memscope_compare_stats stats;
	const struct memscope_compare_device *d;
	struct memscope_error err;
	struct rows g;
	size_t i, n;

	ck_assert_ptr_nonnull(st);
	a = side_of(nest_base, st);
	b = side_of(nest_cmp, st);
	memset(&g, 0, sizeof(g));
	g.sum = memscope_compare_summary_new(5, &opts);
	ck_assert_ptr_nonnull(g.sum);
	ck_assert_int_eq(memscope_compare_run(a, b, &opts, st, keep_row, &g, &stats, &err), 0);
	ck_assert_uint_eq(g.n, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(g.r[i].has_own, 1);
		ck_assert_int_eq(g.r[i].base_own, want[i][0]);
		ck_assert_int_eq(g.r[i].cmp_own, want[i][1]);
		ck_assert_int_eq(g.r[i].base, want[i][2]);
		ck_assert_int_eq(g.r[i].cmp, want[i][3]);
	}
	/* the rows' delta values add up to 2137 more in compare; what was allocated, 37 */
	ck_assert_int_eq(stats.total_diff, 37 + 0 + 0);
	d = memscope_compare_summary_devices(g.sum, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(d[0].base, 1100);
	ck_assert_int_eq(d[0].cmp, 1137);
	ck_assert_int_eq(d[0].diff, 37);
	ck_assert_int_eq(stats.base_outside, 0);
	ck_assert_int_eq(stats.cmp_outside, 5);
	memscope_compare_summary_free(g.sum);
	memscope_compare_side_free(a);
	memscope_compare_side_free(b);
	memscope_strtab_free(st);
}
END_TEST

/* The summary's text: the finding first, the device, the outside bytes, what the values mean;
 * a callback's nonzero return stops it. */
START_TEST(summary_text_lines)
{
	static const char *const want[] = {
		"next allocated 3.00 MiB more in compare than in base, on device 0 (1 op in both; "
		"line 5 of out.csv holds msMemScope's figures)",
		"own allocated 2.00 KiB more in compare than in base, on device 0 (1 op in both; "
		"line 3 of out.csv holds msMemScope's figures)",
		"device 0: 4 ops in both inputs, 0 only in base, 0 only in compare; ops allocated "
		"3.00 MiB more in compare than in base, each allocation counted once; 1 unknown "
		"(an "
		"op END without its START)",
		"outside every op: 512 B more in compare than in base (pool rows made while no op "
		"ran on their thread)",
		"what an op allocated: the bytes of the framework pools (PTA, ATB, MindSpore, "
		"CUDA_CACHING) it "
		"allocated minus freed between its START and END, on its thread, outside the ops "
		"nested in it",
		"the CSV's values are msMemScope's: the size of the first framework-pool row at or "
		"after each op, often a later op's allocation (line 4 of out.csv: +3.00 MiB at "
		"before, "
		"which itself allocated 0 B more)",
		"4 rows -> out.csv",
	};
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_compare_opts opts = { .metric = MEMSCOPE_METRIC_REFERENCE };
	struct memscope_compare_stats stats = { .n_rows = 4, .cmp_outside = 512 };
	struct lines l = { .stop_at = 0 };
	struct rows g;
	size_t i;

	ck_assert_ptr_nonnull(st);
	run_sum(st, MEMSCOPE_METRIC_REFERENCE, 0, &g);
	ck_assert_int_eq(
		memscope_compare_summary_text(g.sum, &opts, &stats, st, "out.csv", keep_line, &l),
		0);
	ck_assert_uint_eq(l.n, 7);
	for (i = 0; i < 7; i++)
		ck_assert_str_eq(l.text[i], want[i]);
	memset(&l, 0, sizeof(l));
	l.stop_at = 2;
	ck_assert_int_eq(
		memscope_compare_summary_text(g.sum, &opts, &stats, st, NULL, keep_line, &l), 1);
	ck_assert_uint_eq(l.n, 2);
	memscope_compare_summary_free(g.sum);
	memscope_strtab_free(st);
}
END_TEST

/* Hostile figures: saturated totals say so, negative values keep their sign, a name longer than
 * any fixed buffer comes whole. */
START_TEST(summary_text_extremes)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_compare_opts opts = { .level = MEMSCOPE_COMPARE_KERNEL };
	struct memscope_compare_summary *s = memscope_compare_summary_new(2, &opts);
	struct memscope_compare_stats stats = { .n_rows = 2 };
	struct memscope_compare_row r = { .device = 1, .event = MEMSCOPE_KIND_KERNEL_LAUNCH };
	struct lines l = { .stop_at = 0 };
	char name[2000];
	uint32_t id;

	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(s);
	memset(name, 'k', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ck_assert_int_eq(memscope_strtab_intern(st, name, strlen(name), &id), 0);
	r.name = id;
	r.has_base = 1;
	r.base = INT64_MAX;
	r.diff = INT64_MIN + 1;
	ck_assert_int_eq(memscope_compare_summary_add(s, &r), 0);
	r.has_cmp = 1;
	r.cmp = -1536;
	r.diff = INT64_MIN;
	r.index = 1;
	ck_assert_int_eq(memscope_compare_summary_add(s, &r), 0);
	ck_assert_int_eq(
		memscope_compare_summary_text(s, &opts, &stats, st, NULL, keep_line, &l), 0);
	ck_assert_uint_eq(l.n, 4);
	ck_assert_msg(
		strstr(l.text[0], name) &&
			strstr(l.text[0], " differs by less than -8.00 EiB (the total "
					  "overflowed) between base and compare, on device 1 "
					  "(2 kernel launches: 1 in both, 1 only in base, "
					  "from -8.00 EiB to -8.00 EiB; lines 3, 4 of the output)"),
		"%s", l.text[0]);
	ck_assert_str_eq(l.text[1], "device 1: 1 kernel launch in both inputs, 1 only in base, 0 "
				    "only in compare");
	ck_assert_ptr_nonnull(strstr(l.text[2], "msMemScope's"));
	ck_assert_str_eq(l.text[3], "2 rows");
	memscope_compare_summary_free(s);
	memscope_strtab_free(st);
}
END_TEST

/*
 * Inputs that share nothing fail with what is missing: a side without elements of the level
 * (and the level both have), sides on different devices, sides whose names all differ.
 */
static const char ops_dev0[] = HDR "1,OP_LAUNCH,ATEN_START,a,10,1,1,0,N/A,,,\n"
				   "2,OP_LAUNCH,ATEN_END,a,20,1,1,0,N/A,,,\n";
static const char ops_dev1[] = HDR "1,OP_LAUNCH,ATEN_START,a,10,1,1,1,N/A,,,\n"
				   "2,OP_LAUNCH,ATEN_END,a,20,1,1,1,N/A,,,\n";
static const char ops_other[] = HDR "1,OP_LAUNCH,ATEN_START,b,10,1,1,0,N/A,,,\n"
				    "2,OP_LAUNCH,ATEN_END,b,20,1,1,0,N/A,,,\n";
static const char kernels[] = HDR "1,KERNEL_LAUNCH,KERNEL_LAUNCH,k,10,1,1,0,N/A,,,\n";
static const char both[] = HDR "1,OP_LAUNCH,ATEN_START,a,10,1,1,0,N/A,,,\n"
			       "2,OP_LAUNCH,ATEN_END,a,20,1,1,0,N/A,,,\n"
			       "3,KERNEL_LAUNCH,KERNEL_LAUNCH,k,30,1,1,0,N/A,,,\n";

START_TEST(nothing_in_common)
{
	static const struct {
		const char *a, *b;
		unsigned level;
		const char *msg;
	} cases[] = {
		{ ops_dev0, kernels, MEMSCOPE_COMPARE_OP,
			"no op END rows (ATEN_END, ATB_END) of a numbered device, which the op "
			"level compares: nothing to compare mem.csv's 1 op with; it has "
			"KERNEL_LAUNCH rows, but mem.csv has none: no level has elements in both "
			"inputs" },
		{ kernels, kernels, MEMSCOPE_COMPARE_OP,
			"mem.csv, mem.csv: neither input has op END rows (ATEN_END, ATB_END) of a "
			"numbered device, which the op level compares; both have KERNEL_LAUNCH "
			"rows: compare those with --level kernel" },
		{ both, ops_dev0, MEMSCOPE_COMPARE_KERNEL,
			"no KERNEL_LAUNCH rows of a numbered device, which the kernel level "
			"compares: nothing to compare mem.csv's 1 kernel launch with; both have "
			"op END rows (ATEN_END, ATB_END): compare those with --level op" },
		{ ops_dev0, ops_dev1, 0,
			"mem.csv, mem.csv: the inputs share no device: the ops of the first are on "
			"device 0, those of the second on device 1" },
		{ ops_dev0, ops_other, 0,
			"mem.csv, mem.csv: no name is in both inputs (1 ops such as 'a', 1 such as "
			"'b'): different programs, or recorders that name them differently" },
	};
	struct memscope_strtab *st = memscope_strtab_new();
	size_t i;

	ck_assert_ptr_nonnull(st);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct memscope_compare_side *a = side_of(cases[i].a, st),
					     *b = side_of(cases[i].b, st);
		struct memscope_compare_opts opts = { .level = cases[i].level };
		struct memscope_compare_stats stats;
		struct memscope_error err;
		struct rows g;

		memset(&g, 0, sizeof(g));
		g.sum = memscope_compare_summary_new(5, &opts);
		ck_assert_ptr_nonnull(g.sum);
		memscope_error_clear(&err);
		ck_assert_int_eq(memscope_compare_run(a, b, &opts, st, keep_row, &g, &stats, &err),
			MEMSCOPE_E_INVALID);
		ck_assert_msg(!strcmp(err.msg, cases[i].msg), "case %zu: %s", i, err.msg);
		memscope_compare_summary_free(g.sum);
		memscope_compare_side_free(a);
		memscope_compare_side_free(b);
	}
	memscope_strtab_free(st);
}
END_TEST

/* An Ascend profiler output's rows (as memscope-convert writes them): no Ptr, a MALLOC naming its
 * op, no thread. X runs on threads 1 and 2 at once: a block naming X goes to the one that opened
 * last (thread 2's), also after thread 1's X ended first; one naming X when none runs counts by
 * time (no op runs then). */
static const char prof_csv[] =
	HDR "1,OP_LAUNCH,ATEN_START,X,10,1,1,0,N/A,,,\n"
	    "2,OP_LAUNCH,ATEN_START,X,20,1,2,0,N/A,,,\n"
	    "3,MALLOC,PTA,X,25,1,N/A,0,N/A,\"{allocation_id:1,size:100,total:4096,used:100}\",,\n"
	    "4,OP_LAUNCH,ATEN_END,X,30,1,1,0,N/A,,,\n"
	    "5,MALLOC,PTA,X,35,1,N/A,0,N/A,\"{allocation_id:2,size:10,total:4096,used:110}\",,\n"
	    "6,OP_LAUNCH,ATEN_END,X,40,1,2,0,N/A,,,\n"
	    "7,MALLOC,PTA,X,45,1,N/A,0,N/A,\"{allocation_id:3,size:1,total:4096,used:111}\",,\n";
/* Nested ops on one thread: a block goes to its op, and at that op's end to the op it ran in
 * (S's to R); an op that ended before its inner op (P before Q) is no longer run in. */
static const char prof_nest[] = HDR "1,OP_LAUNCH,ATEN_START,P,10,1,3,0,N/A,,,\n"
				    "2,OP_LAUNCH,ATEN_START,Q,20,1,3,0,N/A,,,\n"
				    "3,MALLOC,PTA,Q,25,1,N/A,0,N/A,\"{allocation_id:1,size:5}\",,\n"
				    "4,OP_LAUNCH,ATEN_END,P,30,1,3,0,N/A,,,\n"
				    "5,OP_LAUNCH,ATEN_END,Q,40,1,3,0,N/A,,,\n"
				    "6,OP_LAUNCH,ATEN_START,R,50,1,3,0,N/A,,,\n"
				    "7,OP_LAUNCH,ATEN_START,S,60,1,3,0,N/A,,,\n"
				    "8,MALLOC,PTA,S,65,1,N/A,0,N/A,\"{allocation_id:2,size:7}\",,\n"
				    "9,OP_LAUNCH,ATEN_END,S,70,1,3,0,N/A,,,\n"
				    "10,OP_LAUNCH,ATEN_END,R,80,1,3,0,N/A,,,\n";
/* a profiler output without a timeline: samples alone */
static const char prof_samples[] = HDR "1,COUNTER,POOL,PTA,10,1,N/A,0,N/A,\"{used:5,total:9}\",,\n";

START_TEST(profiler_data)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_compare_side *dump, *prof, *samples;
	struct memscope_compare_opts opts = { .level = MEMSCOPE_COMPARE_OP,
		.metric = MEMSCOPE_METRIC_DELTA };
	struct memscope_compare_stats stats;
	struct memscope_error err;
	struct rows g;

	ck_assert_ptr_nonnull(st);
	dump = side_of(sum_cmp, st);
	prof = side_of(prof_csv, st);
	samples = side_of(prof_samples, st);
	ck_assert_int_eq(memscope_compare_side_profiler(dump), 0);
	ck_assert_int_eq(memscope_compare_side_profiler(prof), 1);
	ck_assert_int_eq(memscope_compare_side_profiler(samples), 1);
	/* the default: delta at the op level once a side is profiler data */
	ck_assert_int_eq(memscope_compare_default_metric(dump, dump, 0), MEMSCOPE_METRIC_REFERENCE);
	ck_assert_int_eq(memscope_compare_default_metric(dump, prof, MEMSCOPE_COMPARE_OP),
		MEMSCOPE_METRIC_DELTA);
	ck_assert_int_eq(memscope_compare_default_metric(prof, dump, 0), MEMSCOPE_METRIC_DELTA);
	ck_assert_int_eq(memscope_compare_default_metric(prof, prof, MEMSCOPE_COMPARE_KERNEL),
		MEMSCOPE_METRIC_REFERENCE);
	ck_assert_int_eq(memscope_compare_default_metric(
				 prof, prof, MEMSCOPE_COMPARE_OP | MEMSCOPE_COMPARE_KERNEL),
		MEMSCOPE_METRIC_REFERENCE);
	/* what each lacks */
	memscope_error_clear(&err);
	ck_assert_int_eq(memscope_compare_side_lacks(dump, MEMSCOPE_COMPARE_KERNEL, &err), 0);
	ck_assert_int_eq(memscope_compare_side_lacks(prof, 0, &err), 0);
	ck_assert_int_eq(err.code, 0);
	ck_assert_int_eq(memscope_compare_side_lacks(prof, MEMSCOPE_COMPARE_KERNEL, &err),
		MEMSCOPE_E_INVALID);
	ck_assert_str_eq(err.file, "mem.csv");
	ck_assert_ptr_nonnull(strstr(err.msg, "no kernel launches"));
	ck_assert_ptr_nonnull(strstr(err.msg, "--level op"));
	ck_assert_int_eq(memscope_compare_side_lacks(samples, MEMSCOPE_COMPARE_OP, &err),
		MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "no timeline"));
	/* named blocks go to their op */
	memset(&g, 0, sizeof(g));
	g.sum = memscope_compare_summary_new(5, &opts);
	ck_assert_ptr_nonnull(g.sum);
	ck_assert_int_eq(
		memscope_compare_run(prof, prof, &opts, st, keep_row, &g, &stats, &err), 0);
	ck_assert_uint_eq(g.n, 2);
	ck_assert_int_eq(g.r[0].base, 0);   /* thread 1's X */
	ck_assert_int_eq(g.r[1].base, 110); /* thread 2's X */
	ck_assert_int_eq(g.r[1].cmp, 110);
	ck_assert_uint_eq(stats.n_named_unopen, 2); /* one a side */
	ck_assert_uint_eq(stats.n_unmatched_end + stats.n_unmatched_start, 0);
	memscope_compare_summary_free(g.sum);
	memscope_compare_side_free(prof);
	prof = side_of(prof_nest, st);
	memset(&g, 0, sizeof(g));
	g.sum = memscope_compare_summary_new(5, &opts);
	ck_assert_ptr_nonnull(g.sum);
	ck_assert_int_eq(
		memscope_compare_run(prof, prof, &opts, st, keep_row, &g, &stats, &err), 0);
	ck_assert_uint_eq(g.n, 4);
	ck_assert_int_eq(g.r[0].base, 0); /* P */
	ck_assert_int_eq(g.r[1].base, 5); /* Q */
	ck_assert_int_eq(g.r[2].base, 7); /* S */
	ck_assert_int_eq(g.r[3].base, 7); /* R */
	ck_assert_uint_eq(stats.n_named_unopen, 0);
	memscope_compare_summary_free(g.sum);
	/* no row at all: the lack is the error */
	ck_assert_int_eq(
		memscope_compare_run(samples, samples, &opts, st, keep_row, &g, &stats, &err),
		MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "no timeline"));
	memscope_compare_side_free(dump);
	memscope_compare_side_free(prof);
	memscope_compare_side_free(samples);
	memscope_strtab_free(st);
}
END_TEST

/*
 * ms__diff_anchored (the alignment past the exact diff's bound): on sequences of a small
 * alphabet (no anchors: blocks) and a large one (anchors), equal ids matched in increasing
 * order on both sides, and sides that are equal but for an insertion all matched.
 */
START_TEST(anchored_alignment_is_monotone)
{
	static const unsigned alphabets[3] = { 4, 300, 100000 };
	const int64_t n = 3000, m = 2500;
	uint32_t *a = malloc((size_t)n * sizeof(*a)), *b = malloc((size_t)n * sizeof(*b));
	uint32_t *ia, *ib;
	uint64_t r = 12345;
	size_t count, i, k;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < (size_t)n; i++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			a[i] = (uint32_t)(r >> 33) % alphabets[k];
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			b[i] = (uint32_t)(r >> 33) % alphabets[k];
		}
		ck_assert_int_eq(ms__diff_anchored(a, n, b, m, &ia, &ib, &count), 0);
		ck_assert_uint_gt(count, 0);
		for (i = 0; i < count; i++) {
			ck_assert_uint_eq(a[ia[i]], b[ib[i]]);
			ck_assert(i == 0 || (ia[i] > ia[i - 1] && ib[i] > ib[i - 1]));
			ck_assert(ia[i] < (uint32_t)n && ib[i] < (uint32_t)m);
		}
		free(ia);
		free(ib);
	}
	/* b is a with 10 ids inserted: every element of a matched */
	for (i = 0; i < (size_t)m; i++)
		b[i] = i % 250 == 7 ? 999999 : a[i - (i + 243) / 250];
	ck_assert_int_eq(ms__diff_anchored(a, m - 10, b, m, &ia, &ib, &count), 0);
	ck_assert_uint_eq(count, (size_t)m - 10);
	free(ia);
	free(ib);
	free(a);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("myers");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, alignment_equals_the_reference_algorithm);
	tcase_add_test(tc, summary_devices_and_top);
	tcase_add_test(tc, rows_carry_own_values);
	tcase_add_test(tc, own_values_count_each_byte_once);
	tcase_add_test(tc, summary_text_lines);
	tcase_add_test(tc, summary_text_extremes);
	tcase_add_test(tc, profiler_data);
	tcase_add_test(tc, nothing_in_common);
	tcase_add_test(tc, anchored_alignment_is_monotone);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
