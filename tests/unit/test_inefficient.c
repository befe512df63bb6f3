/* Unit tests of the inefficient-memory analysis: its answer does not depend on the order rows are
 * fed in, processes do not mix, and the annotated copy edits only what it must. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MAX_EVENTS 400
#define MAX_LIVE 32

/* A random run of one or two processes, in time order; ids, lines and timestamps follow. */
struct run {
	struct memscope_event *ev;
	size_t n;
};

static struct memscope_event *add(struct run *r, uint64_t pid, uint16_t kind, uint16_t sub)
{
	struct memscope_event *e = &r->ev[r->n];

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->subtype = sub;
	e->pid = pid;
	e->tid = pid;
	e->ts_ns = 1000 + 10 * r->n;
	e->id = r->n;
	e->line = r->n + 2;
	e->name = MEMSCOPE_STR_NA;
	r->n++;
	return e;
}

/* target events (0: a random number up to MAX_EVENTS) into r->ev, which has room for them */
static void make_run(struct run *r, int n_procs, size_t target)
{
	uint64_t live[2][MAX_LIVE], next_id[2] = { 1, 1 };
	uint16_t live_pool[2][MAX_LIVE];
	size_t n_live[2] = { 0, 0 };

	if (!target)
		target = 50 + trand(MAX_EVENTS - 60);
	r->n = 0;
	while (r->n < target) {
		int p = (int)trand((uint64_t)n_procs);
		uint64_t pid = 100 + (uint64_t)p;
		unsigned what = (unsigned)trand(10);
		uint16_t pool = trand(3) ? MEMSCOPE_SUB_PTA : MEMSCOPE_SUB_ATB;
		struct memscope_event *e;
		size_t k;

		if (what < 2) {
			int start = (int)trand(2);

			add(r, pid, MEMSCOPE_KIND_OP_LAUNCH,
				pool == MEMSCOPE_SUB_PTA
					? (start ? MEMSCOPE_SUB_ATEN_START : MEMSCOPE_SUB_ATEN_END)
					: (start ? MEMSCOPE_SUB_ATB_START : MEMSCOPE_SUB_ATB_END));
		} else if (what < 4 && n_live[p] < MAX_LIVE) {
			e = add(r, pid, MEMSCOPE_KIND_MALLOC, pool);
			e->pool = pool;
			e->alloc_id = next_id[p]++;
			e->size = (int64_t)(512 << trand(8));
			e->ptr = 0x10000 * e->alloc_id;
			e->flags = MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_SIZE | MEMSCOPE_EV_PTR;
			live[p][n_live[p]] = e->alloc_id;
			live_pool[p][n_live[p]++] = pool;
		} else if (n_live[p]) {
			k = trand(n_live[p]);
			e = add(r, pid, what < 9 ? MEMSCOPE_KIND_ACCESS : MEMSCOPE_KIND_FREE,
				what < 9 ? MEMSCOPE_SUB_READ : live_pool[p][k]);
			e->pool = live_pool[p][k];
			e->alloc_id = live[p][k];
			e->ptr = 0x10000 * e->alloc_id;
			e->flags = MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_PTR;
			if (what == 9) {
				live[p][k] = live[p][--n_live[p]];
				live_pool[p][k] = live_pool[p][n_live[p]];
			}
		}
	}
}

static struct memscope_inefficient *analyse(const struct memscope_event *const *evs, size_t n)
{
	struct memscope_inefficient_opts o;
	struct memscope_inefficient *a;
	size_t i;

	memscope_inefficient_opts_init(&o);
	o.idle_threshold = 2;
	a = memscope_inefficient_new(&o, NULL);
	ck_assert_ptr_nonnull(a);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(memscope_inefficient_feed(a, evs[i]), 0);
	ck_assert_int_eq(memscope_inefficient_finish(a), 0);
	return a;
}

/* the same findings, field by field, in the same rank order */
static void assert_same(const struct memscope_inefficient *x, const struct memscope_inefficient *y)
{
	size_t i, n = memscope_inefficient_count(x);

	ck_assert_uint_eq(n, memscope_inefficient_count(y));
	for (i = 0; i < n; i++) {
		const struct memscope_ineff_block *a = memscope_inefficient_get(x, i);
		const struct memscope_ineff_block *b = memscope_inefficient_get(y, i);

		ck_assert_uint_eq(a->pid, b->pid);
		ck_assert_uint_eq(a->alloc_id, b->alloc_id);
		ck_assert_uint_eq(a->types, b->types);
		ck_assert_int_eq(memcmp(a->order, b->order, a->n_types), 0);
		ck_assert_uint_eq(a->alloc.api, b->alloc.api);
		ck_assert_uint_eq(a->first_access.api, b->first_access.api);
		ck_assert_uint_eq(a->last_access.api, b->last_access.api);
		ck_assert_uint_eq(a->free.api, b->free.api);
		ck_assert_uint_eq(a->unused_apis, b->unused_apis);
		ck_assert_uint_eq(a->wasted, b->wasted);
		ck_assert_uint_eq(a->alloc_line, b->alloc_line);
	}
}

/* The reference's file order: a block's MALLOC and ACCESS rows come with its FREE, unfreed
 * blocks at the end. */
static size_t writer_order(const struct run *r, const struct memscope_event **out)
{
	unsigned char *done = calloc(r->n, 1);
	size_t i, j, n = 0;

	ck_assert_ptr_nonnull(done);
	for (i = 0; i < r->n; i++) {
		const struct memscope_event *e = &r->ev[i];

		if (e->kind == MEMSCOPE_KIND_MALLOC || e->kind == MEMSCOPE_KIND_ACCESS)
			continue;
		if (e->kind == MEMSCOPE_KIND_FREE)
			for (j = 0; j < i; j++)
				if (!done[j] && r->ev[j].pid == e->pid &&
					r->ev[j].alloc_id == e->alloc_id &&
					r->ev[j].kind != MEMSCOPE_KIND_OP_LAUNCH) {
					done[j] = 1;
					out[n++] = &r->ev[j];
				}
		done[i] = 1;
		out[n++] = e;
	}
	for (i = 0; i < r->n; i++)
		if (!done[i])
			out[n++] = &r->ev[i];
	free(done);
	return n;
}

static void shuffle(const struct memscope_event **v, size_t n)
{
	size_t i;

	for (i = n; i > 1; i--) {
		size_t k = trand(i);
		const struct memscope_event *t = v[i - 1];

		v[i - 1] = v[k];
		v[k] = t;
	}
}

START_TEST(any_feed_order)
{
	static struct memscope_event evs[MAX_EVENTS];
	struct run r = { evs, 0 };
	const struct memscope_event *in_time[MAX_EVENTS], *shuffled[MAX_EVENTS],
		*written[MAX_EVENTS];
	uint64_t flagged = 0, types = 0;
	int run;

	trand_state = 0x1e4f5a;
	for (run = 0; run < 500; run++) {
		struct memscope_inefficient *a, *b, *c;
		size_t i;

		make_run(&r, 1 + run % 2, 0);
		for (i = 0; i < r.n; i++)
			in_time[i] = shuffled[i] = &r.ev[i];
		shuffle(shuffled, r.n);
		ck_assert_uint_eq(writer_order(&r, written), r.n);
		a = analyse(in_time, r.n);
		b = analyse(shuffled, r.n);
		c = analyse(written, r.n);
		assert_same(a, b);
		assert_same(a, c);
		flagged += memscope_inefficient_count(a);
		for (i = 0; i < memscope_inefficient_count(a); i++)
			types |= memscope_inefficient_get(a, i)->types;
		memscope_inefficient_free(a);
		memscope_inefficient_free(b);
		memscope_inefficient_free(c);
	}
	/* the runs exercise every rule */
	ck_assert_uint_gt(flagged, 500);
	ck_assert_uint_eq(types, MEMSCOPE_INEFF_ALL);
}
END_TEST

/* A process of several chunks of rows (merged while replaying) in any order. */
START_TEST(many_chunks)
{
	size_t n = 300000, i;
	struct run r = { calloc(n, sizeof(struct memscope_event)), 0 };
	const struct memscope_event **in_time = calloc(n, sizeof(*in_time));
	const struct memscope_event **shuffled = calloc(n, sizeof(*shuffled));
	struct memscope_inefficient *a, *b;

	ck_assert(r.ev && in_time && shuffled);
	trand_state = 0x5eed;
	make_run(&r, 1, n);
	for (i = 0; i < r.n; i++)
		in_time[i] = shuffled[i] = &r.ev[i];
	shuffle(shuffled, r.n);
	a = analyse(in_time, r.n);
	b = analyse(shuffled, r.n);
	ck_assert_uint_gt(memscope_inefficient_count(a), 1000);
	ck_assert_uint_gt(memscope_inefficient_stats(a)->rows_held, 4 * 65536);
	assert_same(a, b);
	memscope_inefficient_free(a);
	memscope_inefficient_free(b);
	free(r.ev);
	free(in_time);
	free(shuffled);
}
END_TEST

/* Two processes in one input give what each gives alone. */
START_TEST(processes_apart)
{
	static struct memscope_event evs[MAX_EVENTS];
	struct run r = { evs, 0 };
	const struct memscope_event *all[MAX_EVENTS], *one[MAX_EVENTS];
	int run;

	trand_state = 0x77aa01;
	for (run = 0; run < 300; run++) {
		struct memscope_inefficient *both, *alone;
		uint64_t pid;
		size_t i, n_all = 0;

		make_run(&r, 2, 0);
		for (i = 0; i < r.n; i++)
			all[n_all++] = &r.ev[i];
		both = analyse(all, n_all);
		for (pid = 100; pid <= 101; pid++) {
			size_t n = 0, k = 0;

			for (i = 0; i < r.n; i++)
				if (r.ev[i].pid == pid)
					one[n++] = &r.ev[i];
			alone = analyse(one, n);
			for (i = 0; i < memscope_inefficient_count(both); i++) {
				const struct memscope_ineff_block *x =
					memscope_inefficient_get(both, i);
				const struct memscope_ineff_block *y;

				if (x->pid != pid)
					continue;
				y = memscope_inefficient_get(alone, k++);
				ck_assert_ptr_nonnull(y);
				ck_assert_uint_eq(x->alloc_id, y->alloc_id);
				ck_assert_uint_eq(x->types, y->types);
				ck_assert_uint_eq(x->wasted, y->wasted);
			}
			ck_assert_uint_eq(k, memscope_inefficient_count(alone));
			memscope_inefficient_free(alone);
		}
		memscope_inefficient_free(both);
	}
}
END_TEST

/* memscope_dump_copy_edit over text; returns its status, the copy in *out (malloc'd). */
static int copy_edit(const char *csv, const struct memscope_attr_edit *ed, size_t n, char **out,
	struct memscope_error *err)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	int rc;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(
		memscope_source_open_mem(&src, csv, strlen(csv), "t.csv", st, NULL, err), 0);
	rc = memscope_dump_copy_edit(src, ed, n, f, err);
	fclose(f);
	memscope_source_close(src);
	memscope_strtab_free(st);
	return rc;
}

#define HDR                                                                                        \
	"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call "     \
	"Stack(Python)\n"

START_TEST(copy_edit_attrs)
{
	static const char in[] =
		HDR "1,MALLOC,PTA,N/A,5,1,1,0,0x1,\"{allocation_id:1,size:8}\",\n"
		    "2,MALLOC,HAL,N/A,6,1,1,0,0x2,\"{allocation_id:2,inefficient_type:a,b,"
		    "page_type:normal}\",\r\n"
		    "3,MALLOC,PTA,N/A,7,1,1,0,0x3,,\n"
		    "4,MALLOC,PTA,N/A,8,1,1,0,0x4,\"{owner:x \"\"q\"\",size:1}\",\"a\nb\"\n"
		    "5,MALLOC,PTA,N/A,9,1,1,0,0x5,\"{size:1}\",";
	static const char want[] =
		HDR "1,MALLOC,PTA,N/A,5,1,1,0,0x1,\"{allocation_id:1,size:8,k:v,w}\",\n"
		    "2,MALLOC,HAL,N/A,6,1,1,0,0x2,\"{allocation_id:2,inefficient_type:v,w,"
		    "page_type:normal}\",\r\n"
		    "3,MALLOC,PTA,N/A,7,1,1,0,0x3,\"{k:v,w}\",\n"
		    "4,MALLOC,PTA,N/A,8,1,1,0,0x4,\"{owner:x \"\"q\"\",size:1,k:v,w}\",\"a\nb\"\n"
		    "5,MALLOC,PTA,N/A,9,1,1,0,0x5,\"{size:1,k:v,w}\",";
	struct memscope_attr_edit ed[5] = {
		{ 2, 1, 1, "k", "v,w", 3 },
		{ 3, 2, 1, "inefficient_type", "v,w", 3 },
		{ 4, 3, 1, "k", "v,w", 3 },
		{ 5, 4, 1, "k", "v,w", 3 },
		{ 7, 5, 1, "k", "v,w", 3 },
	};
	struct memscope_error err;
	char *out = NULL;

	ck_assert_int_eq(copy_edit(in, ed, 5, &out, &err), 0);
	ck_assert_str_eq(out, want);
	free(out);
	/* no edits: the same bytes */
	ck_assert_int_eq(copy_edit(in, NULL, 0, &out, &err), 0);
	ck_assert_str_eq(out, in);
	free(out);
}
END_TEST

/* Rows ended by a lone CR: each CR ends a line, so rows 2 and 4 are told apart by line too. */
START_TEST(copy_edit_cr_rows)
{
	static const char in[] = HDR "1,MALLOC,PTA,N/A,5,7,1,0,0x1,\"{size:1}\",\r"
				     "x\r"
				     "1,MALLOC,PTA,N/A,6,8,1,0,0x2,\"{size:2}\",\r";
	static const char want[] = HDR "1,MALLOC,PTA,N/A,5,7,1,0,0x1,\"{size:1,k:a}\",\r"
				       "x\r"
				       "1,MALLOC,PTA,N/A,6,8,1,0,0x2,\"{size:2,k:b}\",\r";
	struct memscope_attr_edit ed[2] = { { 2, 1, 7, "k", "a", 1 }, { 4, 1, 8, "k", "b", 1 } };
	struct memscope_error err;
	char *out = NULL;

	ck_assert_int_eq(copy_edit(in, ed, 2, &out, &err), 0);
	ck_assert_str_eq(out, want);
	free(out);
	/* the other process first: not found */
	ed[0].pid = 8;
	ed[1].pid = 7;
	ck_assert_int_eq(copy_edit(in, ed, 2, &out, &err), MEMSCOPE_E_INVALID);
	free(out);
}
END_TEST

START_TEST(copy_edit_refuses)
{
	static const char in[] = HDR "1,MALLOC,PTA,N/A,5,1,1,0,0x1,\"{size:8}\",\"x\ny\"\n"
				     "2,FREE,PTA,N/A,6,1,1,0,0x1,\"{size:8}\",\n";
	struct memscope_attr_edit ed = { 2, 9, 1, "k", "v", 1 };
	struct memscope_error err;
	char *out = NULL;

	/* another ID on that line: not the file that was analysed */
	ck_assert_int_eq(copy_edit(in, &ed, 1, &out, &err), MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(err.line, 2);
	free(out);
	/* line 3 is inside row 2's quoted field; line 9 is past the end; line 1 is the header */
	ed = (struct memscope_attr_edit){ 3, 2, 1, "k", "v", 1 };
	ck_assert_int_eq(copy_edit(in, &ed, 1, &out, &err), MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(err.line, 3);
	free(out);
	ed.line = 9;
	ck_assert_int_eq(copy_edit(in, &ed, 1, &out, &err), MEMSCOPE_E_INVALID);
	free(out);
	ed.line = 1;
	ck_assert_int_eq(copy_edit(in, &ed, 1, &out, &err), MEMSCOPE_E_INVALID);
	free(out);
	/* line 4 is row 3 (row 2 spans two lines) */
	ed = (struct memscope_attr_edit){ 4, 2, 1, "k", "v", 1 };
	ck_assert_int_eq(copy_edit(in, &ed, 1, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "0x1,\"{size:8,k:v}\",\n"));
	free(out);
}
END_TEST

/* The formats the tool refuses for holding no memory accesses, and what it calls them. */
START_TEST(formats_without_accesses)
{
	ck_assert_ptr_null(memscope_format_without_accesses(MEMSCOPE_FORMAT_UNKNOWN));
	ck_assert_ptr_null(memscope_format_without_accesses(MEMSCOPE_FORMAT_DUMP_CSV));
	ck_assert_ptr_null(memscope_format_without_accesses(MEMSCOPE_FORMAT_CAPTURE));
	ck_assert_ptr_null(memscope_format_without_accesses(MEMSCOPE_FORMAT_DB));
	ck_assert_ptr_null(memscope_format_without_accesses(MEMSCOPE_FORMAT_PYTHON_TRACE));
	ck_assert_str_eq(memscope_format_without_accesses(MEMSCOPE_FORMAT_PROFILER),
		"an Ascend profiler output");
	ck_assert_str_eq(memscope_format_without_accesses(MEMSCOPE_FORMAT_MSPROF_CSV),
		"an Ascend profiler output");
	ck_assert_str_eq(memscope_format_without_accesses(MEMSCOPE_FORMAT_MSPROF_JSON),
		"an Ascend profiler output");
	ck_assert_str_eq(memscope_format_without_accesses(MEMSCOPE_FORMAT_TORCH_SNAPSHOT),
		"a PyTorch memory snapshot");
	ck_assert_str_eq(
		memscope_format_without_accesses(MEMSCOPE_FORMAT_NSYS), "an Nsight Systems export");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("inefficient");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, any_feed_order);
	tcase_add_test(tc, many_chunks);
	tcase_add_test(tc, processes_apart);
	tcase_add_test(tc, copy_edit_attrs);
	tcase_add_test(tc, copy_edit_cr_rows);
	tcase_add_test(tc, copy_edit_refuses);
	tcase_add_test(tc, formats_without_accesses);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
