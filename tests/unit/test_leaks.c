/* Unit tests of the step tracker and the step-leak rule: against a brute-force reading of the
 * rule on random runs, fed in the reference's row order, with boundaries out of order, and
 * through the second pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MAX_STEPS 12
#define MAX_BLOCKS 60
#define NO_TS UINT64_MAX

/* One random run of one process: step starts/ends and blocks, all timestamps distinct. */
struct run {
	int n_steps;
	uint64_t start[MAX_STEPS], end[MAX_STEPS]; /* end NO_TS: the step has none */
	int n_blocks;
	uint64_t alloc[MAX_BLOCKS], free_at[MAX_BLOCKS]; /* free_at NO_TS: never freed */
	uint32_t step_name;
};

static void make_run(struct run *r)
{
	uint64_t t = 100;
	int i;

	memset(r, 0, sizeof(*r));
	r->n_steps = 1 + (int)trand(MAX_STEPS);
	for (i = 0; i < r->n_steps; i++) {
		r->start[i] = t += 10 + trand(20) * 10;
		/* some steps end only when the next one starts */
		r->end[i] = trand(5) ? (t += 10 + trand(20) * 10) : NO_TS;
	}
	r->n_blocks = (int)trand(MAX_BLOCKS);
	for (i = 0; i < r->n_blocks; i++) {
		/* odd timestamps for blocks, multiples of 10 for boundaries: never equal */
		r->alloc[i] = trand(t + 50) | 1;
		r->free_at[i] = trand(3) ? r->alloc[i] + 2 * (1 + trand(200)) : NO_TS;
	}
}

/* The rule read literally: allocated in step s > skip, alive at the end of the first ended step
 * k >= s + alive. Returns k, or 0 when the block is not a step leak. */
static uint64_t brute_leak(const struct run *r, int b, uint64_t skip, uint64_t alive)
{
	uint64_t s = 0, k;

	for (k = 0; k < (uint64_t)r->n_steps; k++)
		if (r->start[k] <= r->alloc[b])
			s = k + 1;
	if (s <= skip)
		return 0;
	for (k = s + alive; k <= (uint64_t)r->n_steps; k++)
		if (r->end[k - 1] != NO_TS)
			return r->free_at[b] == NO_TS || r->free_at[b] > r->end[k - 1] ? k : 0;
	return 0;
}

struct row {
	struct memscope_event ev;
};

static void mk(struct row *x, uint16_t kind, uint16_t sub, uint64_t ts, uint32_t name)
{
	memset(x, 0, sizeof(*x));
	x->ev.kind = kind;
	x->ev.subtype = sub;
	x->ev.ts_ns = ts;
	x->ev.id = ts; /* IDs follow time */
	x->ev.pid = 7;
	x->ev.tid = 7;
	x->ev.name = name;
	x->ev.device = 0;
	x->ev.line = ts;
}

static void mk_block(struct row *x, uint16_t kind, uint64_t ts, int b, uint64_t used)
{
	mk(x, kind, MEMSCOPE_SUB_PTA, ts, MEMSCOPE_STR_NA);
	x->ev.pool = MEMSCOPE_SUB_PTA;
	x->ev.flags = MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_SIZE | MEMSCOPE_EV_PTR | MEMSCOPE_EV_USED;
	x->ev.alloc_id = (uint64_t)b + 1;
	x->ev.size = 4096 * (b + 1);
	x->ev.ptr = 0x1000 * ((uint64_t)b + 1);
	x->ev.used = (int64_t)used;
}

/* a row and when the reference writes it */
struct item {
	uint64_t at;
	struct row r[2];
	int n;
};

static int cmp_item(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;

	return a->at < b->at ? -1 : a->at > b->at;
}

/* The run's rows: boundaries as they happen, each block's MALLOC with its FREE, unfreed blocks
 * at the end (the reference's order); with late, every boundary after all the blocks. */
static size_t rows_of(const struct run *r, struct row *out, int late)
{
	static struct item items[MAX_BLOCKS + 2 * MAX_STEPS];
	size_t n = 0, i, k = 0;
	uint64_t last = late ? 1u << 30 : 0;
	int b, s;

	for (s = 0; s < r->n_steps; s++) {
		items[n].at = r->start[s] + last;
		items[n].n = 1;
		mk(&items[n++].r[0], MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_START, r->start[s],
			r->step_name);
		if (r->end[s] == NO_TS)
			continue;
		items[n].at = r->end[s] + last;
		items[n].n = 1;
		mk(&items[n++].r[0], MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_END, r->end[s],
			MEMSCOPE_STR_NA);
	}
	for (b = 0; b < r->n_blocks; b++) {
		items[n].at = r->free_at[b] == NO_TS ? (1u << 29) + (uint64_t)b : r->free_at[b];
		mk_block(&items[n].r[0], MEMSCOPE_KIND_MALLOC, r->alloc[b], b, r->alloc[b] % 1000);
		items[n].n = 1;
		if (r->free_at[b] != NO_TS)
			mk_block(&items[n].r[items[n].n++], MEMSCOPE_KIND_FREE, r->free_at[b], b,
				r->free_at[b] % 1000);
		n++;
	}
	qsort(items, n, sizeof(*items), cmp_item);
	for (i = 0; i < n; i++)
		for (s = 0; s < items[i].n; s++)
			out[k++] = items[i].r[s];
	return k;
}

/* Whether a boundary comes later than a block row with a later time (the rows of rows_of). */
static int has_late(const struct row *rows, size_t n)
{
	uint64_t max_mem = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct memscope_event *ev = &rows[i].ev;

		if (ev->kind == MEMSCOPE_KIND_MSTX && ev->ts_ns < max_mem)
			return 1;
		if (ev->kind != MEMSCOPE_KIND_MSTX && ev->ts_ns > max_mem)
			max_mem = ev->ts_ns;
	}
	return 0;
}

static void feed_rows(struct memscope_leaks *l, const struct row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ck_assert_int_eq(memscope_leaks_feed(l, &rows[i].ev), 0);
	ck_assert_int_eq(memscope_leaks_finish(l), 0);
}

/* The STEP findings against the brute force: every leak found is one, every one is found. */
static void check_step_leaks(
	const struct memscope_leaks *l, const struct run *r, uint64_t skip, uint64_t alive)
{
	int found[MAX_BLOCKS] = { 0 }, b;
	size_t i;

	for (i = 0; i < memscope_leaks_count(l); i++) {
		const struct memscope_leak *x = memscope_leaks_get(l, i);

		if (x->kind != MEMSCOPE_LEAK_STEP)
			continue;
		b = (int)x->blk.alloc_id - 1;
		ck_assert_int_lt(b, r->n_blocks);
		ck_assert_uint_eq(x->detected_step, brute_leak(r, b, skip, alive));
		ck_assert_int_eq(found[b]++, 0);
	}
	for (b = 0; b < r->n_blocks; b++)
		ck_assert_int_eq(found[b], brute_leak(r, b, skip, alive) != 0);
}

START_TEST(step_rule_matches_brute_force)
{
	static struct row rows[4 * MAX_BLOCKS + 2 * MAX_STEPS];
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_leaks_opts o;
	uint64_t leaks = 0;
	int iter, late_runs = 0;

	trand_state = 0x9e3779b97f4a7c15ull;
	ck_assert_ptr_nonnull(st);
	for (iter = 0; iter < 3000; iter++) {
		struct run r;
		struct memscope_leaks *l;
		size_t n;
		int late = iter % 3 == 0;

		make_run(&r);
		ck_assert_int_eq(memscope_strtab_intern(st, "step start", 10, &r.step_name), 0);
		memscope_leaks_opts_init(&o);
		o.skip_steps = trand(3);
		o.min_steps_alive = 1 + trand(3);
		l = memscope_leaks_new(&o, st);
		ck_assert_ptr_nonnull(l);
		n = rows_of(&r, rows, late);
		feed_rows(l, rows, n);
		/* boundaries after later block rows: the first pass says a second one is needed */
		ck_assert_int_eq(memscope_leaks_needs_rewind(l, NULL, NULL), has_late(rows, n));
		if (has_late(rows, n)) {
			late_runs++;
			ck_assert_int_eq(memscope_leaks_rewind(l), 0);
			feed_rows(l, rows, n);
		}
		ck_assert_int_eq(memscope_leaks_needs_rewind(l, NULL, NULL), 0);
		check_step_leaks(l, &r, o.skip_steps, o.min_steps_alive);
		leaks += memscope_leaks_stats(l)->n_step_leaks;
		memscope_leaks_free(l);
	}
	ck_assert_uint_gt(leaks, 1000);
	ck_assert_int_gt(late_runs, 500);
	memscope_strtab_free(st);
}
END_TEST

/* Boundaries fed in any order give, after resolve, the steps of the ordered feed. */
START_TEST(steps_resolve_any_order)
{
	struct memscope_strtab *st = memscope_strtab_new();
	uint32_t step_name, user;
	struct row r[8];
	int perm, i;

	ck_assert_int_eq(memscope_strtab_intern(st, "\"step start\"", 12, &step_name), 0);
	ck_assert_int_eq(memscope_strtab_intern(st, "user", 4, &user), 0);
	/* step 1 [10, 40] with a user range [20, 30] inside on its thread, and a range end of
	 * another thread at 25; step 2 from 50 without an end */
	mk(&r[0], MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_START, 10, step_name);
	mk(&r[1], MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_START, 20, user);
	mk(&r[2], MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_END, 25, MEMSCOPE_STR_NA);
	r[2].ev.tid = 8;
	mk(&r[3], MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_END, 30, MEMSCOPE_STR_NA);
	mk(&r[4], MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_END, 40, MEMSCOPE_STR_NA);
	mk(&r[5], MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_RANGE_START, 50, step_name);
	/* a SYSTEM STEP row: the other source, ignored */
	mk(&r[6], MEMSCOPE_KIND_SYSTEM, MEMSCOPE_SUB_STEP, 45, MEMSCOPE_STR_NA);
	for (perm = 0; perm < 40; perm++) {
		struct memscope_steps *s = memscope_steps_new(st);
		const struct memscope_step_proc *p;
		struct memscope_pos at, pos;
		uint64_t k;
		int order[7] = { 0, 1, 2, 3, 4, 5, 6 };

		for (i = 6; i > 0 && perm; i--) {
			int j = (int)trand((uint64_t)i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < 7; i++)
			ck_assert_int_ge(memscope_steps_feed(s, &r[order[i]].ev), 1);
		ck_assert_int_eq(memscope_steps_resolve(s), 0);
		ck_assert_int_eq(memscope_steps_out_of_order(s, NULL, NULL), 0);
		p = memscope_steps_proc(s, 0, 7);
		ck_assert_int_eq(memscope_steps_source(p), MEMSCOPE_STEPS_MSTX);
		ck_assert_uint_eq(memscope_steps_count(p), 2);
		ck_assert_uint_eq(memscope_steps_ignored(p), 1);
		ck_assert_int_eq(memscope_steps_end(p, 1, &pos), 1);
		ck_assert_uint_eq(pos.ts_ns, 40);
		ck_assert_int_eq(memscope_steps_end(p, 2, &pos), 0);
		ck_assert_int_eq(memscope_steps_end_from(p, 2, &k, &pos), 0);
		ck_assert_int_eq(memscope_steps_end_from(p, 1, &k, &pos), 1);
		ck_assert_uint_eq(k, 1);
		at = (struct memscope_pos){ 9, 9 };
		ck_assert_uint_eq(memscope_steps_at(p, at), 0);
		at = (struct memscope_pos){ 10, 10 };
		ck_assert_uint_eq(memscope_steps_at(p, at), 1);
		at = (struct memscope_pos){ 49, 0 };
		ck_assert_uint_eq(memscope_steps_at(p, at), 1);
		at = (struct memscope_pos){ 60, 0 };
		ck_assert_uint_eq(memscope_steps_at(p, at), 2);
		memscope_steps_free(s);
	}
	memscope_strtab_free(st);
}
END_TEST

/* SYSTEM STEP row n ends step n and starts n + 1; step 1 starts with the process. */
START_TEST(system_steps)
{
	struct memscope_steps *s = memscope_steps_new(NULL);
	const struct memscope_step_proc *p;
	struct memscope_pos pos, at = { 15, 0 };
	struct row r[2];

	mk(&r[0], MEMSCOPE_KIND_SYSTEM, MEMSCOPE_SUB_STEP, 10, MEMSCOPE_STR_NA);
	mk(&r[1], MEMSCOPE_KIND_SYSTEM, MEMSCOPE_SUB_STEP, 20, MEMSCOPE_STR_NA);
	ck_assert_int_eq(memscope_steps_feed(s, &r[0].ev), 2);
	ck_assert_int_eq(memscope_steps_feed(s, &r[1].ev), 2);
	p = memscope_steps_proc(s, 0, 7);
	ck_assert_uint_eq(memscope_steps_count(p), 3);
	ck_assert_uint_eq(memscope_steps_at(p, (struct memscope_pos){ 1, 1 }), 1);
	ck_assert_uint_eq(memscope_steps_at(p, at), 2);
	ck_assert_int_eq(memscope_steps_end(p, 2, &pos), 1);
	ck_assert_uint_eq(pos.ts_ns, 20);
	ck_assert_int_eq(memscope_steps_start(p, 3, &pos), 1);
	ck_assert_uint_eq(pos.ts_ns, 20);
	ck_assert_int_eq(memscope_steps_end(p, 3, &pos), 0);
	ck_assert_ptr_null(memscope_steps_proc(s, 0, 8));
	memscope_steps_free(s);
}
END_TEST

/* ---- the op of a finding, and the report groups ---- */

#define OP_ROWS 80
#define OP_BLOCKS 40
#define OP_NAMES 5

/* the op of a block at ts read literally: apply every op row before it in time order, an end
 * popping up to the innermost open op of its name (none open: ignored); the top is the op */
static uint32_t brute_op(const struct row *ops, size_t n, uint64_t ts)
{
	uint32_t stack[OP_ROWS];
	size_t depth = 0, i, k;

	for (i = 0; i < n && ops[i].ev.ts_ns < ts; i++) {
		if (ops[i].ev.subtype == MEMSCOPE_SUB_ATEN_START) {
			stack[depth++] = ops[i].ev.name;
			continue;
		}
		for (k = depth; k > 0 && stack[k - 1] != ops[i].ev.name; k--)
			;
		if (k)
			depth = k - 1;
	}
	return depth ? stack[depth - 1] : 0;
}

START_TEST(op_of_finding_matches_brute_force)
{
	static struct row ops[OP_ROWS], blocks[OP_BLOCKS], all[OP_ROWS + OP_BLOCKS];
	struct memscope_strtab *st = memscope_strtab_new();
	uint32_t names[OP_NAMES];
	uint64_t with_op = 0;
	int iter, i;

	trand_state = 0x2545f4914f6cdd1dull;
	ck_assert_ptr_nonnull(st);
	for (i = 0; i < OP_NAMES; i++) {
		char name[16];

		snprintf(name, sizeof(name), "aten.op%d", i);
		ck_assert_int_eq(memscope_strtab_intern(st, name, strlen(name), &names[i]), 0);
	}
	for (iter = 0; iter < 500; iter++) {
		struct memscope_leaks_opts o;
		struct memscope_leaks *l;
		size_t n_ops = 1 + trand(OP_ROWS), n_blocks = 1 + trand(OP_BLOCKS), n = 0, k, j;
		const struct memscope_leak_group *g;
		const size_t *m;
		size_t n_g, n_m;
		uint64_t seen = 0;

		/* op rows at even times, mostly nested starts and ends, some stray ends */
		for (k = 0; k < n_ops; k++) {
			mk(&ops[k], MEMSCOPE_KIND_OP_LAUNCH,
				trand(2) ? MEMSCOPE_SUB_ATEN_START : MEMSCOPE_SUB_ATEN_END,
				10 * (k + 1), names[trand(OP_NAMES)]);
		}
		for (k = 0; k < n_blocks; k++) {
			mk_block(&blocks[k], MEMSCOPE_KIND_MALLOC, 10 * trand(n_ops + 2) + 5,
				(int)k, 1);
			blocks[k].ev.stack_py = (uint32_t)trand(3); /* 0: none */
		}
		for (k = 0; k < n_ops; k++)
			all[n++] = ops[k];
		for (k = 0; k < n_blocks; k++)
			all[n++] = blocks[k];
		/* half the runs in a random order: the op rows then come out of order */
		for (k = n; iter % 2 && k > 1; k--) {
			struct row t;

			j = trand(k);
			t = all[k - 1];
			all[k - 1] = all[j];
			all[j] = t;
		}
		memscope_leaks_opts_init(&o);
		o.kinds = MEMSCOPE_LEAK_EXIT;
		o.group_by = (enum memscope_leaks_group_by)trand(3);
		ck_assert_ptr_nonnull(l = memscope_leaks_new(&o, st));
		feed_rows(l, all, n);
		ck_assert_uint_eq(memscope_leaks_count(l), n_blocks);
		for (k = 0; k < memscope_leaks_count(l); k++) {
			const struct memscope_leak *x = memscope_leaks_get(l, k);

			ck_assert_uint_eq(x->op, brute_op(ops, n_ops, x->blk.alloc_ts_ns));
			with_op += x->op != 0;
		}
		/* every finding in one group; a group's findings share its kind, pool and key */
		g = memscope_leaks_groups(l, &n_g);
		m = memscope_leaks_members(l, &n_m);
		ck_assert_uint_eq(n_m, n_blocks);
		for (k = 0; k < n_g; k++) {
			uint64_t bytes = 0;

			ck_assert_uint_eq(g[k].rank, k); /* one input, one kind */
			ck_assert(!k || g[k - 1].bytes >= g[k].bytes);
			for (j = g[k].members_at; j < g[k].members_at + g[k].n; j++) {
				const struct memscope_leak *x = memscope_leaks_get(l, m[j]);

				ck_assert_uint_eq(x->report_group, k);
				ck_assert_uint_eq(x->blk.pool, g[k].pool);
				bytes += (uint64_t)x->blk.size;
				seen++;
				if (o.group_by == MEMSCOPE_LEAKS_BY_OP)
					ck_assert_uint_eq(x->op, g[k].op);
				if (o.group_by == MEMSCOPE_LEAKS_BY_STACK)
					ck_assert_uint_eq(x->blk.stack_py, g[k].stack_py);
			}
			ck_assert_uint_eq(bytes, g[k].bytes);
			ck_assert_uint_eq(memscope_leaks_get(l, g[k].first)->report_group, k);
		}
		ck_assert_uint_eq(seen, n_blocks);
		ck_assert_uint_eq(memscope_leaks_input(l, 0)->n_leaks[2], n_blocks);
		ck_assert_uint_eq(memscope_leaks_input(l, 0)->n_op_rows, n_ops);
		memscope_leaks_free(l);
	}
	ck_assert_uint_gt(with_op, 2000);
	memscope_strtab_free(st);
}
END_TEST

/* Groups across inputs against a brute force on random exit leaks of several inputs: each key
 * (pool, stack) once, its inputs, total, least and most, the ranking, and nested pools claimed
 * only for an input holding both HAL and PTA. */
#define X_INPUTS 5
#define X_BLOCKS 40
#define X_STACKS 4

START_TEST(across_matches_brute_force)
{
	static struct row rows[X_BLOCKS];
	struct memscope_strtab *st = memscope_strtab_new();
	int iter;

	trand_state = 0x9e3779b97f4a7c15ull;
	ck_assert_ptr_nonnull(st);
	for (iter = 0; iter < 300; iter++) {
		/* bytes[pool is HAL][stack][src] */
		uint64_t bytes[2][X_STACKS][X_INPUTS] = { { { 0 } } }, prev_bytes = UINT64_MAX;
		int has[2][X_INPUTS] = { { 0 } }, any_nested = 0;
		size_t n = 1 + trand(X_BLOCKS), k, n_a, n_ag, n_g, i, seen = 0;
		struct memscope_leaks_opts o;
		struct memscope_leaks *l;
		const struct memscope_leak_across *a;
		const struct memscope_leak_group *g;
		const size_t *ag;
		unsigned src;

		for (k = 0; k < n; k++) {
			int hal = (int)trand(4) == 0, stack = (int)trand(X_STACKS);

			mk_block(&rows[k], MEMSCOPE_KIND_MALLOC, 10 * (k + 1), (int)k, 1);
			rows[k].ev.src = (uint32_t)trand(X_INPUTS);
			rows[k].ev.size = 4096 * (int64_t)(1 + trand(3));
			rows[k].ev.stack_py = (uint32_t)stack; /* 0: none, then by owner and op */
			if (hal)
				rows[k].ev.subtype = rows[k].ev.pool = MEMSCOPE_SUB_HAL;
			bytes[hal][stack][rows[k].ev.src] += (uint64_t)rows[k].ev.size;
			has[hal][rows[k].ev.src] = 1;
		}
		memscope_leaks_opts_init(&o);
		o.kinds = MEMSCOPE_LEAK_EXIT;
		ck_assert_ptr_nonnull(l = memscope_leaks_new(&o, st));
		feed_rows(l, rows, n);
		a = memscope_leaks_across(l, &n_a);
		ag = memscope_leaks_across_groups(l, &n_ag);
		g = memscope_leaks_groups(l, &n_g);
		ck_assert_uint_eq(n_ag, n_g);
		for (i = 0; i < n_a; i++) {
			int hal = a[i].pool == MEMSCOPE_SUB_HAL;
			uint32_t k_in = 0, lo = 0, hi = 0;
			uint64_t total = 0;

			ck_assert_uint_eq(a[i].kind, MEMSCOPE_LEAK_EXIT);
			ck_assert_uint_eq(a[i].rank, i);
			ck_assert_uint_le(a[i].bytes, prev_bytes); /* largest first */
			prev_bytes = a[i].bytes;
			for (src = 0; src < X_INPUTS; src++) {
				uint64_t b = bytes[hal][a[i].stack_py][src];

				if (!b)
					continue;
				if (!k_in || b < bytes[hal][a[i].stack_py][lo])
					lo = src;
				if (!k_in || b > bytes[hal][a[i].stack_py][hi])
					hi = src;
				k_in++;
				total += b;
			}
			ck_assert_uint_eq(a[i].n_inputs, k_in);
			ck_assert_uint_eq(a[i].bytes, total);
			ck_assert_uint_eq(a[i].min_src, lo);
			ck_assert_uint_eq(a[i].max_src, hi);
			ck_assert_uint_eq(a[i].min_bytes, bytes[hal][a[i].stack_py][lo]);
			ck_assert_uint_eq(a[i].max_bytes, bytes[hal][a[i].stack_py][hi]);
			/* its groups, by input, each pointing back */
			ck_assert_uint_eq(a[i].groups_at, seen);
			for (k = a[i].groups_at; k < a[i].groups_at + a[i].n_inputs; k++) {
				ck_assert_uint_eq(g[ag[k]].across, i);
				ck_assert_uint_eq(
					g[ag[k]].bytes, bytes[hal][a[i].stack_py][g[ag[k]].src]);
				if (k > a[i].groups_at)
					ck_assert_uint_lt(g[ag[k - 1]].src, g[ag[k]].src);
			}
			seen += a[i].n_inputs;
			/* each key once */
			for (k = 0; k < i; k++)
				ck_assert(a[k].pool != a[i].pool || a[k].stack_py != a[i].stack_py);
		}
		ck_assert_uint_eq(seen, n_g);
		for (src = 0; src < X_INPUTS; src++) {
			int nested = has[0][src] && has[1][src];

			any_nested |= nested;
			ck_assert_int_eq(memscope_leaks_nested(l, MEMSCOPE_LEAK_EXIT, src), nested);
		}
		ck_assert_int_eq(
			memscope_leaks_nested(l, MEMSCOPE_LEAK_EXIT, MEMSCOPE_LEAKS_ALL_INPUTS),
			any_nested);
		ck_assert_int_eq(
			memscope_leaks_nested(l, MEMSCOPE_LEAK_STEP, MEMSCOPE_LEAKS_ALL_INPUTS), 0);
		memscope_leaks_free(l);
	}
	memscope_strtab_free(st);
}
END_TEST

/* Totals per pool: one pool, several, and HAL with a pool carved out of it (never summed). */
START_TEST(totals_text)
{
	char buf[MEMSCOPE_LEAKS_TOTALS_TEXT_MAX], tiny[12];
	const struct memscope_leaks_total one[1] = { { MEMSCOPE_SUB_PTA, 3, 3678208 } };
	const struct memscope_leaks_total two[2] = { { MEMSCOPE_SUB_PTA, 2, 3145728 },
		{ MEMSCOPE_SUB_ATB, 1, 2097152 } };
	const struct memscope_leaks_total nested[3] = { { MEMSCOPE_SUB_PTA, 10, 8010000 },
		{ MEMSCOPE_SUB_ATB, 1, 1024 }, { MEMSCOPE_SUB_HAL, 7, 32894436 } };

	ck_assert_str_eq(memscope_leaks_totals_text(buf, sizeof(buf), NULL, 0, 1), "0 B");
	ck_assert_str_eq(memscope_leaks_totals_text(buf, sizeof(buf), one, 1, 1), "PTA 3.51 MiB");
	ck_assert_str_eq(memscope_leaks_totals_text(buf, sizeof(buf), two, 2, 1),
		"5.00 MiB: PTA 3.00 MiB in 2 blocks, ATB 2.00 MiB in 1 block");
	ck_assert_str_eq(memscope_leaks_totals_text(buf, sizeof(buf), nested, 3, 1),
		"PTA 7.64 MiB in 10 blocks, ATB 1.00 KiB in 1 block, HAL 31.4 MiB in 7 blocks, not "
		"summed: PTA, ATB lie inside HAL");
	/* HAL of one input, PTA and ATB of others: two memories, summed */
	ck_assert_str_eq(memscope_leaks_totals_text(buf, sizeof(buf), nested, 3, 0),
		"39.0 MiB: PTA 7.64 MiB in 10 blocks, ATB 1.00 KiB in 1 block, HAL 31.4 MiB in 7 "
		"blocks");
	/* cut, never overrun */
	ck_assert_str_eq(
		memscope_leaks_totals_text(tiny, sizeof(tiny), nested, 3, 1), "PTA 7.64 Mi");
}
END_TEST

/* ---- out-of-memory events, how inputs ended, what was not checked ---- */

#define OOM_BLOCKS 40
#define OOM_EVENTS 3

/*
 * The blocks alive at each out-of-memory event against a brute force: random blocks on two
 * devices, some never freed, events at random times, every row fed in time order (one input,
 * one process), so the state is exact (not partial); then the same rows with the events last
 * (rows out of time order): partial, and never more bytes than the exact state.
 */
START_TEST(oom_state_matches_brute_force)
{
	struct memscope_strtab *st = memscope_strtab_new();
	uint32_t owner;
	int round, late;

	ck_assert_int_eq(memscope_strtab_intern(st, "PTA@model@weight", 16, &owner), 0);
	trand_state = 0x0014u;
	for (round = 0; round < 200; round++) {
		static struct row rows[2 * OOM_BLOCKS + OOM_EVENTS];
		uint64_t alloc[OOM_BLOCKS], free_at[OOM_BLOCKS], at[OOM_EVENTS];
		uint64_t exact[OOM_EVENTS];
		int dev[OOM_BLOCKS], b, k;

		for (b = 0; b < OOM_BLOCKS; b++) {
			alloc[b] = 10 + 10 * (uint64_t)b;
			free_at[b] = trand(3) ? alloc[b] + 5 + 10 * trand(OOM_BLOCKS) : NO_TS;
			dev[b] = (int)trand(2);
		}
		for (k = 0; k < OOM_EVENTS; k++)
			at[k] = 3 + 10 * trand(OOM_BLOCKS + 2) +
				(uint64_t)k; /* never a row's time */
		for (late = 0; late < 2; late++) {
			struct memscope_leaks *l = memscope_leaks_new(NULL, st);
			const struct memscope_leaks_oom *o;
			size_t n = 0, i, j, n_oom;

			/* every row in time order; with late, the events after them all */
			for (b = 0; b < OOM_BLOCKS; b++) {
				mk_block(&rows[n], MEMSCOPE_KIND_MALLOC, alloc[b], b, 0);
				rows[n].ev.device = dev[b];
				rows[n].ev.flags &= ~MEMSCOPE_EV_USED;
				n++;
				if (free_at[b] == NO_TS)
					continue;
				mk_block(&rows[n], MEMSCOPE_KIND_FREE, free_at[b], b, 0);
				rows[n].ev.device = dev[b];
				rows[n].ev.flags &= ~MEMSCOPE_EV_USED;
				n++;
			}
			for (k = 0; k < OOM_EVENTS; k++) {
				mk(&rows[n], MEMSCOPE_KIND_OOM_DETAIL, MEMSCOPE_SUB_OOM_TRIGGER,
					at[k], MEMSCOPE_STR_NA);
				rows[n].ev.device = k % 2;
				rows[n].ev.size = 1000 + k;
				rows[n].ev.flags = MEMSCOPE_EV_SIZE;
				n++;
			}
			for (i = 1; !late && i < n; i++) /* insertion sort by time */
				for (j = i; j > 0 && rows[j - 1].ev.ts_ns > rows[j].ev.ts_ns; j--) {
					struct row t = rows[j];

					rows[j] = rows[j - 1];
					rows[j - 1] = t;
				}
			for (i = 0; i < n; i++)
				rows[i].ev.line = i + 1;
			feed_rows(l, rows, n);
			o = memscope_leaks_ooms(l, &n_oom);
			ck_assert_uint_eq(n_oom, OOM_EVENTS);
			ck_assert_uint_eq(memscope_leaks_input(l, 0)->n_ooms, OOM_EVENTS);
			for (i = 0; i < n_oom; i++) {
				uint64_t want = 0, got = 0, want_n = 0, got_n = 0;

				/* by time: the k-th event is the one at that time */
				for (k = 0; k < OOM_EVENTS && at[k] != o[i].ts_ns; k++)
					;
				ck_assert_int_lt(k, OOM_EVENTS);
				ck_assert_int_eq(o[i].device, k % 2);
				ck_assert_int_eq(o[i].requested, 1000 + k);
				ck_assert_int_eq(o[i].device_free, -1);
				for (b = 0; b < OOM_BLOCKS; b++)
					if (dev[b] == k % 2 && alloc[b] < at[k] &&
						free_at[b] > at[k]) {
						want += 4096 * ((uint64_t)b + 1);
						want_n++;
					}
				for (j = 0; j < o[i].n_pools; j++) {
					ck_assert_uint_eq(o[i].pools[j].pool, MEMSCOPE_SUB_PTA);
					got += o[i].pools[j].bytes;
					got_n += o[i].pools[j].n;
				}
				if (!late) {
					ck_assert_int_eq(o[i].partial, 0);
					ck_assert_uint_eq(got, want);
					ck_assert_uint_eq(got_n, want_n);
					exact[k] = want;
				} else {
					ck_assert_uint_le(got, exact[k]);
					/* the rows before it in the file came after it in time */
					ck_assert_int_eq(o[i].partial, 1);
				}
			}
			memscope_leaks_free(l);
		}
	}
	memscope_strtab_free(st);
}
END_TEST

/* How inputs ended, from their formats, and why a kind was not checked in one. */
START_TEST(ends_and_unchecked)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_leaks *l = memscope_leaks_new(NULL, st);
	struct memscope_read_stats cut = { 0 };
	struct row r[2];

	/* input 0: one block, no steps; input 1: no event; input 2: a sample only */
	mk_block(&r[0], MEMSCOPE_KIND_MALLOC, 10, 0, 0);
	ck_assert_int_eq(memscope_leaks_feed(l, &r[0].ev), 0);
	ck_assert_int_eq(memscope_leaks_input_end(l, 0, MEMSCOPE_FORMAT_TORCH_SNAPSHOT, NULL), 0);
	ck_assert_int_eq(memscope_leaks_input_end(l, 1, MEMSCOPE_FORMAT_PROFILER, NULL), 0);
	mk(&r[1], MEMSCOPE_KIND_SNAPSHOT, MEMSCOPE_SUB_SNAPSHOT, 20, MEMSCOPE_STR_NA);
	r[1].ev.src = 2;
	ck_assert_int_eq(memscope_leaks_feed(l, &r[1].ev), 0);
	cut.cut.code = MEMSCOPE_E_TRUNCATED;
	ck_assert_int_eq(memscope_leaks_input_end(l, 2, MEMSCOPE_FORMAT_CAPTURE, &cut), 0);
	ck_assert_int_eq(memscope_leaks_finish(l), 0);

	ck_assert_int_eq(memscope_leaks_end_of(l, 0), MEMSCOPE_LEAKS_END_SNAPSHOT);
	ck_assert_int_eq(memscope_leaks_end_of(l, 1), MEMSCOPE_LEAKS_END_PROFILE);
	ck_assert_int_eq(memscope_leaks_end_of(l, 2), MEMSCOPE_LEAKS_END_STOPPED);
	ck_assert_int_eq(memscope_leaks_end_of(l, 3), MEMSCOPE_LEAKS_END_EXIT);
	/* input 1 fed nothing: the others differ */
	ck_assert_int_eq(
		memscope_leaks_end_of(l, MEMSCOPE_LEAKS_ALL_INPUTS), MEMSCOPE_LEAKS_END_MIXED);
	ck_assert_str_eq(memscope_leaks_end_text(MEMSCOPE_LEAKS_END_SNAPSHOT),
		"alive at the end of the snapshot");
	ck_assert_str_eq(memscope_leaks_end_text(MEMSCOPE_LEAKS_END_EXIT), "unreleased at exit");
	ck_assert_str_eq(memscope_leaks_end_text(MEMSCOPE_LEAKS_END_STOPPED),
		"alive when the recording stopped");

	ck_assert_int_eq(memscope_leaks_checked(l, MEMSCOPE_LEAK_STEP, 0), MEMSCOPE_LEAKS_NO_STEPS);
	ck_assert_int_eq(memscope_leaks_checked(l, MEMSCOPE_LEAK_EXIT, 0), MEMSCOPE_LEAKS_CHECKED);
	ck_assert_int_eq(
		memscope_leaks_checked(l, MEMSCOPE_LEAK_MARK, 0), MEMSCOPE_LEAKS_NOT_ASKED);
	ck_assert_int_eq(
		memscope_leaks_checked(l, MEMSCOPE_LEAK_EXIT, 2), MEMSCOPE_LEAKS_NO_BLOCKS);
	ck_assert_int_eq(
		memscope_leaks_checked(l, MEMSCOPE_LEAK_STEP, 2), MEMSCOPE_LEAKS_NO_BLOCKS);
	ck_assert_uint_eq(memscope_leaks_unchecked_inputs(l, MEMSCOPE_LEAK_STEP, 3, NULL), 3);
	ck_assert_uint_eq(memscope_leaks_unchecked_inputs(l, MEMSCOPE_LEAK_MARK, 3, NULL), 0);
	ck_assert_str_eq(memscope_leaks_unchecked_text(MEMSCOPE_LEAKS_CHECKED), "");
	ck_assert_ptr_nonnull(
		strstr(memscope_leaks_unchecked_text(MEMSCOPE_LEAKS_NO_STEPS), "ProfilerStep#N"));
	memscope_leaks_free(l);
	memscope_strtab_free(st);
}
END_TEST

/* Steps too few for a step leak are "not checked", not a check that found 0: with --skip-steps
 * 1 and --min-steps-alive 1, two SYSTEM STEP rows (steps 1, 2 ended, 3 running) leave step 2 no
 * ended step 3; a third row gives it one. */
START_TEST(too_few_steps_unchecked)
{
	struct memscope_strtab *st = memscope_strtab_new();
	int n_steps;

	for (n_steps = 1; n_steps <= 3; n_steps++) {
		struct memscope_leaks *l = memscope_leaks_new(NULL, st);
		struct row r[4];
		char say[200];
		int i;

		mk_block(&r[0], MEMSCOPE_KIND_MALLOC, 5, 0, 0);
		ck_assert_int_eq(memscope_leaks_feed(l, &r[0].ev), 0);
		for (i = 1; i <= n_steps; i++) {
			mk(&r[i], MEMSCOPE_KIND_SYSTEM, MEMSCOPE_SUB_STEP, 10 * (uint64_t)i,
				MEMSCOPE_STR_NA);
			ck_assert_int_eq(memscope_leaks_feed(l, &r[i].ev), 0);
		}
		ck_assert_int_eq(memscope_leaks_finish(l), 0);
		ck_assert_int_eq(memscope_leaks_checked(l, MEMSCOPE_LEAK_STEP, 0),
			n_steps < 3 ? MEMSCOPE_LEAKS_FEW_STEPS : MEMSCOPE_LEAKS_CHECKED);
		ck_assert_uint_eq(memscope_leaks_unchecked_inputs(l, MEMSCOPE_LEAK_STEP, 1, NULL),
			n_steps < 3);
		memscope_leaks_unchecked_say(l, MEMSCOPE_LEAK_STEP, 0, say, sizeof(say));
		if (n_steps < 3)
			ck_assert_ptr_nonnull(strstr(say, "a step leak needs 3 (--skip-steps 1, "));
		else
			ck_assert_str_eq(say, "");
		memscope_leaks_free(l);
	}
	ck_assert_ptr_nonnull(
		strstr(memscope_leaks_unchecked_text(MEMSCOPE_LEAKS_FEW_STEPS), "too few steps"));
	memscope_strtab_free(st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("leaks");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, step_rule_matches_brute_force);
	tcase_add_test(tc, steps_resolve_any_order);
	tcase_add_test(tc, system_steps);
	tcase_add_test(tc, op_of_finding_matches_brute_force);
	tcase_add_test(tc, totals_text);
	tcase_add_test(tc, across_matches_brute_force);
	tcase_add_test(tc, oom_state_matches_brute_force);
	tcase_add_test(tc, ends_and_unchecked);
	tcase_add_test(tc, too_few_steps_unchecked);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
