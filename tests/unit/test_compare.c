/* Unit tests of the step comparison: the alignment equals a literal port of the reference's
 * algorithm on random sequences. */
#include <stdlib.h>
#include <string.h>

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
		size_t nw, k;

		for (i = 0; i < n; i++)
			a[i] = rand() % alphabet;
		for (i = 0; i < m; i++)
			b[i] = rand() % 3 ? a[rand() % (n ? n : 1)] % alphabet : rand() % alphabet;
		add_ops(sa, a, n, names_a, ids);
		add_ops(sb, b, m, names_b, ids);
		nw = (n || m) ? reference_diff(a, n, b, m, want) : 0;
		/* with the direction bits, then with checkpoints (a budget of a few bytes) */
		for (pass = 0; pass < 2; pass++) {
			g.n = 0;
			g.na = g.nb = 0;
			opts.diff_bytes = pass ? (size_t)(len == MAXLEN ? 2048 : 64) : 0;
			ck_assert_int_eq(
				memscope_compare_run(sa, sb, &opts, st, collect, &g, &stats, &err),
				0);
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

/* The summary: counts per device in the order devices come, and the top rows by |diff|. */
START_TEST(summary_devices_and_top)
{
	/* device, has_base, has_cmp, diff */
	static const int64_t rows[][4] = {
		{ 0, 1, 1, 5 },
		{ 0, 1, 0, -7 },
		{ 0, 0, 1, 0 },
		{ 3, 1, 1, 7 }, /* ties with -7: the first stays first */
		{ 3, 0, 1, INT64_MAX },
		{ 3, 1, 0, 1 },
		{ 1, 1, 1, -2 },
	};
	struct memscope_compare_summary *s = memscope_compare_summary_new(3);
	struct memscope_compare_summary *none = memscope_compare_summary_new(0);
	const struct memscope_compare_device *d;
	const struct memscope_compare_row *top;
	size_t i, n;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(none);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct memscope_compare_row r = { .device = (int32_t)rows[i][0],
			.has_base = (int)rows[i][1],
			.has_cmp = (int)rows[i][2],
			.diff = rows[i][3],
			.name = (uint32_t)i };

		ck_assert_int_eq(memscope_compare_summary_add(s, &r), 0);
		ck_assert_int_eq(memscope_compare_summary_add(none, &r), 0);
	}
	d = memscope_compare_summary_devices(s, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(d[0].device, 0);
	ck_assert_uint_eq(d[0].n_matched, 1);
	ck_assert_uint_eq(d[0].n_base_only, 1);
	ck_assert_uint_eq(d[0].n_cmp_only, 1);
	ck_assert_int_eq(d[0].diff, -2);
	ck_assert_int_eq(d[1].device, 3);
	ck_assert_int_eq(d[1].diff, INT64_MAX); /* saturated */
	ck_assert_int_eq(d[2].device, 1);
	top = memscope_compare_summary_top(s, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(top[0].name, 4);
	ck_assert_uint_eq(top[1].name, 1);
	ck_assert_uint_eq(top[2].name, 3);
	memscope_compare_summary_top(none, &n);
	ck_assert_uint_eq(n, 0);
	memscope_compare_summary_free(s);
	memscope_compare_summary_free(none);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("myers");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, alignment_equals_the_reference_algorithm);
	tcase_add_test(tc, summary_devices_and_top);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
