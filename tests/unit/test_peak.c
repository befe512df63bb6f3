/* Unit tests of the memory-over-time analysis (memscope/peak.h): who held the memory at the peak
 * when the owners change after it, the owner of a block (tag, the op its MALLOC names, the op
 * open, Python frame, C frame), the pools counted by default, the same peak as the timeline's, the
 * inputs' clocks, and the owners at the peak against a brute-force replay that copies the owners
 * at every new maximum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define HEADER                                                                                     \
	"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call "     \
	"Stack(Python),Call Stack(C)\n"

/* The events of t fed to a new analysis over pools, finished. */
static struct memscope_peak *analyse(const struct tread *t, uint64_t pools)
{
	struct memscope_peak_opts o;
	struct memscope_peak *p;
	size_t i;

	memscope_peak_opts_init(&o);
	o.pools = pools;
	ck_assert_ptr_nonnull(p = memscope_peak_new(&o, t->st));
	for (i = 0; i < memscope_evbuf_count(t->evs); i++)
		ck_assert_int_eq(memscope_peak_feed(p, memscope_evbuf_get(t->evs, i)), 0);
	ck_assert_int_eq(memscope_peak_finish(p), 0);
	return p;
}

static void read_csv(struct tread *t, const char *csv)
{
	ck_assert_int_eq(tread_mem(t, csv, strlen(csv), NULL), 0);
}

/* The owner named name at the peak: its bytes and blocks (bytes 0 when not there). */
static const struct memscope_peak_owner *owner(
	const struct tread *t, const struct memscope_peak *p, const char *name)
{
	size_t n, i;
	const struct memscope_peak_owner *o = memscope_peak_owners(p, &n);

	for (i = 0; i < n; i++)
		if (strcmp(tstr(t, o[i].name), name) == 0)
			return &o[i];
	return NULL;
}

/* Owners change after the peak: A and B hold it (100 + 200 at 1002), then B goes, C comes and A
 * takes more, never as high again. Rows in the reference's order (a MALLOC with its FREE, rows
 * out of time order): the listed owners are those at the peak, not at the end. */
START_TEST(owners_at_the_peak_not_after)
{
	static const char csv[] = HEADER
		"2,MALLOC,PTA,N/A,1002,7,7,0,0x2000,\"{allocation_id:2,addr:0x2000,size:200,"
		"owner:B}\",,\n"
		"3,FREE,PTA,N/A,1003,7,7,0,0x2000,\"{allocation_id:2,addr:0x2000,size:200}\",,\n"
		"1,MALLOC,PTA,N/A,1001,7,7,0,0x1000,\"{allocation_id:1,addr:0x1000,size:100,"
		"owner:A}\",,\n"
		"4,MALLOC,PTA,N/A,1004,7,7,0,0x3000,\"{allocation_id:3,addr:0x3000,size:150,"
		"owner:C}\",,\n"
		"5,MALLOC,PTA,N/A,1005,7,7,0,0x4000,\"{allocation_id:4,addr:0x4000,size:40,"
		"owner:A}\",,\n";
	struct tread t;
	struct memscope_peak *p;
	const struct memscope_peak_track *tr;
	const struct memscope_peak_owner *o;
	size_t n;

	read_csv(&t, csv);
	p = analyse(&t, 0);
	tr = memscope_peak_tracks(p, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(memscope_peak_track_of_peak(p), 0);
	ck_assert_int_eq(tr[0].peak, 300);
	ck_assert_uint_eq(tr[0].peak_at.ts_ns, 1002);
	ck_assert_int_eq(tr[0].end_bytes, 290);
	ck_assert_uint_eq(tr[0].n_points, 5);
	o = memscope_peak_owners(p, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(tstr(&t, o[0].name), "B");
	ck_assert_uint_eq(o[0].bytes, 200);
	ck_assert_uint_eq(o[0].by, MEMSCOPE_PEAK_BY_OWNER);
	ck_assert_str_eq(tstr(&t, o[1].name), "A");
	ck_assert_uint_eq(o[1].bytes, 100);
	ck_assert_uint_eq(o[1].blocks, 1);
	ck_assert_ptr_null(owner(&t, p, "C"));
	memscope_peak_free(p);
	/* a later, higher peak takes over: A 140, C 150, D 100 */
	{
		char more[sizeof(csv) + 200];
		snprintf(more, sizeof(more), "%s%s", csv,
			"6,MALLOC,PTA,N/"
			"A,1006,7,7,0,0x5000,\"{allocation_id:5,addr:0x5000,size:100,"
			"owner:D}\",,\n");
		tread_free(&t);
		read_csv(&t, more);
		p = analyse(&t, 0);
		ck_assert_uint_eq(memscope_peak_tracks(p, &n)[0].peak_at.ts_ns, 1006);
		ck_assert_uint_eq(owner(&t, p, "A")->bytes, 140);
		ck_assert_uint_eq(owner(&t, p, "A")->blocks, 2);
		ck_assert_uint_eq(owner(&t, p, "C")->bytes, 150);
		ck_assert_uint_eq(owner(&t, p, "D")->bytes, 100);
		ck_assert_ptr_null(owner(&t, p, "B"));
		memscope_peak_free(p);
	}
	tread_free(&t);
}
END_TEST

/* A block's owner: its tag; else the innermost op open on its own thread at its MALLOC (an end
 * closes the innermost op of its name and those inside it); else its innermost Python frame;
 * else its innermost C frame as people read it; else nothing. A FREE on another thread keeps
 * the MALLOC's owner. */
START_TEST(owner_of_a_block)
{
	static const char csv[] = HEADER
		"1,OP_LAUNCH,ATEN_START,outer,100,7,7,0,N/A,,,\n"
		"2,OP_LAUNCH,ATEN_START,inner,101,7,7,0,N/A,,,\n"
		"3,MALLOC,PTA,N/A,102,7,7,0,0x1000,\"{allocation_id:1,addr:0x1000,size:1}\","
		"\"py_inner\npy_outer\",\n"
		"4,OP_LAUNCH,ATEN_START,other_thread,103,7,8,0,N/A,,,\n"
		"5,OP_LAUNCH,ATEN_END,outer,104,7,7,0,N/A,,,\n"
		"6,MALLOC,PTA,N/A,105,7,7,0,0x2000,\"{allocation_id:2,addr:0x2000,size:2}\","
		"\"\nb.py(2): g\na.py(1): f\",\"libx.so(+0x1) [0x7f]\"\n"
		"7,MALLOC,PTA,N/A,106,7,7,0,0x3000,\"{allocation_id:3,addr:0x3000,size:4}\",,"
		"\"/usr/lib/libc10.so(_ZN3c104impl3fooEv+0x1c) [0x7f01]\nlibz.so(main+0x2) "
		"[0x7f02]\"\n"
		"8,MALLOC,PTA,N/A,107,7,7,0,0x4000,\"{allocation_id:4,addr:0x4000,size:8}\",,\n"
		"9,MALLOC,PTA,N/A,108,7,8,0,0x5000,\"{allocation_id:5,addr:0x5000,size:16,"
		"owner:PTA@model@weight}\",,\n"
		"10,MALLOC,PTA,N/A,109,7,8,0,0x6000,\"{allocation_id:6,addr:0x6000,size:32}\",,\n"
		"11,FREE,PTA,N/A,110,7,9,0,0x6000,\"{allocation_id:6,addr:0x6000,size:32}\",,\n"
		"12,MALLOC,PTA,N/A,111,7,7,0,0x7000,\"{allocation_id:7,addr:0x7000,size:64}\",,\n";
	struct tread t;
	struct memscope_peak *p;
	const struct memscope_peak_owner *o;
	size_t n;

	read_csv(&t, csv);
	p = analyse(&t, 0);
	o = memscope_peak_owners(p, &n);
	/* the peak is the last MALLOC: 1 + 2 + 4 + 8 + 16 + 64, the 32 freed before */
	ck_assert_uint_eq(memscope_peak_tracks(p, &n)[0].peak, 95);
	o = memscope_peak_owners(p, &n);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(owner(&t, p, "inner")->by, MEMSCOPE_PEAK_BY_OP);
	ck_assert_uint_eq(owner(&t, p, "inner")->bytes, 1);
	ck_assert_uint_eq(owner(&t, p, "b.py(2): g")->by, MEMSCOPE_PEAK_BY_PYTHON);
	ck_assert_uint_eq(owner(&t, p, "b.py(2): g")->bytes, 2);
	ck_assert_uint_eq(owner(&t, p, "c10::impl::foo() (libc10.so)")->by, MEMSCOPE_PEAK_BY_C);
	ck_assert_uint_eq(owner(&t, p, "[PTA, no owner, op or stack]")->by, MEMSCOPE_PEAK_BY_NONE);
	ck_assert_uint_eq(owner(&t, p, "[PTA, no owner, op or stack]")->bytes, 8 + 64);
	ck_assert_uint_eq(owner(&t, p, "[PTA, no owner, op or stack]")->blocks, 2);
	ck_assert_uint_eq(owner(&t, p, "PTA@model@weight")->by, MEMSCOPE_PEAK_BY_OWNER);
	/* the op of another thread is not the owner of thread 8's block: it was freed anyway */
	ck_assert_ptr_null(owner(&t, p, "other_thread"));
	ck_assert_str_eq(tstr(&t, o[0].name), "[PTA, no owner, op or stack]");
	memscope_peak_free(p);
	tread_free(&t);
}
END_TEST

/* A MALLOC that names its op (the Ascend profiler's operator_memory Name) is owned by that op,
 * before the op open on its thread and before its frames; one naming none (N/A) by the open op;
 * an owner tag comes first. */
START_TEST(owner_is_the_op_the_malloc_names)
{
	static const char csv[] = HEADER
		"1,OP_LAUNCH,ATEN_START,open_op,100,7,7,0,N/A,,,\n"
		"2,MALLOC,PTA,aten::empty,101,7,7,0,N/A,\"{allocation_id:1,size:1}\",\"py\",\n"
		"3,MALLOC,PTA,aten::empty,102,7,7,0,N/A,\"{allocation_id:2,size:2}\",,\n"
		"4,MALLOC,PTA,N/A,103,7,7,0,N/A,\"{allocation_id:3,size:4}\",,\n"
		"5,MALLOC,PTA,aten::add,104,7,9,0,N/A,\"{allocation_id:4,size:8}\",,\n"
		"6,MALLOC,PTA,aten::add,105,7,9,0,N/A,"
		"\"{allocation_id:5,size:16,owner:PTA@w}\",,\n";
	struct tread t;
	struct memscope_peak *p;
	size_t n;

	read_csv(&t, csv);
	p = analyse(&t, 0);
	ck_assert_int_eq(memscope_peak_tracks(p, &n)[0].peak, 31);
	memscope_peak_owners(p, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(owner(&t, p, "aten::empty")->by, MEMSCOPE_PEAK_BY_OP);
	ck_assert_uint_eq(owner(&t, p, "aten::empty")->bytes, 1 + 2);
	ck_assert_uint_eq(owner(&t, p, "aten::empty")->blocks, 2);
	ck_assert_uint_eq(owner(&t, p, "open_op")->bytes, 4);
	ck_assert_uint_eq(owner(&t, p, "aten::add")->by, MEMSCOPE_PEAK_BY_OP);
	ck_assert_uint_eq(owner(&t, p, "aten::add")->bytes, 8);
	ck_assert_uint_eq(owner(&t, p, "PTA@w")->bytes, 16);
	ck_assert_ptr_null(owner(&t, p, "py"));
	memscope_peak_free(p);
	tread_free(&t);
}
END_TEST

/* The pools counted: the framework pools when present (HAL left out), HAL alone otherwise, and
 * what the caller names. */
START_TEST(default_pools)
{
	static const char both[] = HEADER
		"1,MALLOC,HAL,N/A,100,7,7,0,0x1000,\"{allocation_id:1,addr:0x1000,size:1000}\","
		",\n"
		"2,MALLOC,PTA,N/A,101,7,7,0,0x2000,\"{allocation_id:2,addr:0x2000,size:10}\",,\n";
	static const char hal[] = HEADER "1,MALLOC,HAL,N/A,100,7,7,0,0x1000,\"{allocation_id:1,"
					 "addr:0x1000,size:1000}\",,\n";
	struct tread t;
	struct memscope_peak *p;
	const struct memscope_peak_track *tr;
	uint64_t seen;
	size_t n;

	read_csv(&t, both);
	p = analyse(&t, 0);
	ck_assert_uint_eq(memscope_peak_pools(p, &seen), MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_PTA));
	ck_assert_uint_eq(
		seen, MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_PTA) | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL));
	tr = memscope_peak_tracks(p, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(tr[0].pool, MEMSCOPE_SUB_PTA);
	ck_assert_int_eq(tr[0].peak, 10);
	memscope_peak_free(p);
	p = analyse(&t, MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL) | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_PTA));
	tr = memscope_peak_tracks(p, &n);
	/* in order of pool: PTA before HAL; the peak is HAL's */
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(tr[0].pool, MEMSCOPE_SUB_PTA);
	ck_assert_uint_eq(tr[1].pool, MEMSCOPE_SUB_HAL);
	ck_assert_int_eq(memscope_peak_track_of_peak(p), 1);
	memscope_peak_free(p);
	tread_free(&t);
	read_csv(&t, hal);
	p = analyse(&t, 0);
	ck_assert_uint_eq(memscope_peak_pools(p, NULL), MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL));
	ck_assert_int_eq(memscope_peak_track_of_peak(p), 0);
	memscope_peak_free(p);
	tread_free(&t);
}
END_TEST

/* The same peak as the timeline's over the same pools, on every sample; every track's points
 * in time order, the highest its peak. */
START_TEST(same_peak_as_the_timeline)
{
	static const char *const files[] = { "baseline.csv", "leaks.csv", "leaks/steps_mstx.csv",
		"leaks/steps_system.csv", "leaks/mark_legacy.csv", "db/hostile.csv",
		"memscope_dump_20250428113810.csv", "export/peak.csv" };
	size_t f, i, n;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct tread t;
		struct memscope_peak *p;
		struct memscope_timeline *tl;
		const struct memscope_timeline_point *tp;
		const struct memscope_peak_track *tr;
		long k;

		ck_assert_int_eq(tread_file(&t, testdata(files[f]), NULL), 0);
		p = analyse(&t, 0);
		ck_assert_ptr_nonnull(
			tl = memscope_timeline_new(memscope_peak_pools(p, NULL), 1, t.st));
		for (i = 0; i < memscope_evbuf_count(t.evs); i++)
			ck_assert_int_eq(
				memscope_timeline_feed(tl, memscope_evbuf_get(t.evs, i)), 0);
		ck_assert_int_eq(memscope_timeline_finish(tl), 0);
		tp = memscope_timeline_peak(tl);
		k = memscope_peak_track_of_peak(p);
		tr = memscope_peak_tracks(p, &n);
		ck_assert_msg((tp != NULL) == (k >= 0), "%s: peak found differently", files[f]);
		if (tp) {
			ck_assert_int_eq(tr[k].peak, tp->value);
			ck_assert_uint_eq(tr[k].peak_at.ts_ns, tp->at.ts_ns);
			ck_assert_uint_eq(tr[k].peak_at.id, tp->at.id);
			ck_assert_uint_eq(tr[k].pid, tp->pid);
			ck_assert_uint_eq(tr[k].pool, tp->pool);
			ck_assert_int_eq(tr[k].device, tp->device);
		}
		for (i = 1; i < n; i++)
			ck_assert_int_le(memscope_time_cmp(tr[i - 1].src, tr[i - 1].pid,
						 (struct memscope_pos){ 0, 0 }, tr[i].src,
						 tr[i].pid, (struct memscope_pos){ 0, 0 }),
				0);
		memscope_timeline_free(tl);
		memscope_peak_free(p);
		tread_free(&t);
	}
}
END_TEST

/* The points of one track and what they must add up to. */
struct walk {
	const struct memscope_peak_track *tr;
	uint64_t *last_ts;
	int64_t *max;
	size_t *n;
};

static int on_point(void *ctx, const struct memscope_peak_point *pt)
{
	struct walk *w = ctx;

	ck_assert_uint_ge(pt->ts_ns, w->last_ts[pt->track]);
	w->last_ts[pt->track] = pt->ts_ns;
	if (pt->bytes > w->max[pt->track])
		w->max[pt->track] = pt->bytes;
	w->n[pt->track]++;
	return 0;
}

/* Random runs of two processes on two devices, rows in shuffled order with allocation ids:
 * each track's highest point is its peak, and the owners at the peak are those a replay that
 * copies every owner's bytes at each new maximum finds. */
START_TEST(owners_match_brute_force)
{
	enum { N_BLOCKS = 40, N_OWNERS = 5 };
	int round;

	trand_state = 0x9e3779b97f4a7c15ull;
	for (round = 0; round < 200; round++) {
		struct blk {
			uint64_t pid, alloc, free_at; /* free_at 0: never */
			int64_t size;
			int dev, owner;
		} b[N_BLOCKS];
		char *csv = malloc(64 + N_BLOCKS * 2 * 160), *w = csv;
		int order[2 * N_BLOCKS], i, j, n_rows = 0;
		struct tread t;
		struct memscope_peak *p;
		const struct memscope_peak_track *tr;
		size_t n, k;
		int64_t best = 0, cur[2][2] = { { 0 } }, own[2][2][N_OWNERS] = { { { 0 } } };
		int64_t at_peak[N_OWNERS] = { 0 };
		uint64_t ts, last_ts[8] = { 0 };
		int64_t max[8] = { 0 };
		size_t npts[8] = { 0 };
		struct walk wk = { NULL, last_ts, max, npts };

		w += sprintf(w, HEADER);
		for (i = 0; i < N_BLOCKS; i++) {
			b[i].pid = 7 + trand(2);
			b[i].alloc = 2 * (1 + trand(1000));
			b[i].free_at = trand(4) ? b[i].alloc + 2 * (1 + trand(300)) : 0;
			b[i].size = 1 + (int64_t)trand(1000);
			b[i].dev = (int)trand(2);
			b[i].owner = (int)trand(N_OWNERS);
			order[n_rows++] = i;
			if (b[i].free_at)
				order[n_rows++] = -1 - i;
		}
		for (i = n_rows - 1; i > 0; i--) {
			j = (int)trand((uint64_t)i + 1);
			k = (size_t)order[i];
			order[i] = order[j];
			order[j] = (int)k;
		}
		/* a block's MALLOC row before its FREE row (the blocks are paired in file order) */
		for (i = 0; i < n_rows; i++)
			for (j = i + 1; order[i] < 0 && j < n_rows; j++)
				if (order[j] == -1 - order[i]) {
					order[j] = order[i];
					order[i] = -1 - order[i];
				}
		for (i = 0; i < n_rows; i++) {
			int x = order[i] < 0 ? -1 - order[i] : order[i], fr = order[i] < 0;

			/* IDs: the timestamp, and the block to break ties */
			ts = fr ? b[x].free_at : b[x].alloc;
			w += sprintf(w,
				"%llu,%s,PTA,N/A,%llu,%llu,1,%d,0x%x,\"{allocation_id:%d,size:%lld,"
				"owner:o%d}\",,\n",
				(unsigned long long)(ts * 100 + (uint64_t)x * 2 + (uint64_t)fr),
				fr ? "FREE" : "MALLOC", (unsigned long long)ts,
				(unsigned long long)b[x].pid, b[x].dev, 0x1000 + x, x + 1,
				(long long)b[x].size, b[x].owner);
		}
		read_csv(&t, csv);
		p = analyse(&t, 0);
		/* the replay: process by process, in time then ID order, the owners copied at
		 * each new maximum */
		for (k = 0; k < 2; k++)
			for (ts = 0; ts <= 2 * 1300 + 2; ts++)
				for (i = 0; i < 2 * N_BLOCKS; i++) {
					int x = i / 2, fr = i % 2, d = b[x].dev, o = b[x].owner;
					int64_t ch = fr ? -b[x].size : b[x].size;

					if (b[x].pid != 7 + k ||
						(fr ? b[x].free_at : b[x].alloc) != ts ||
						(fr && !b[x].free_at))
						continue;
					cur[k][d] += ch;
					own[k][d][o] += ch;
					if (cur[k][d] > best) {
						best = cur[k][d];
						memcpy(at_peak, own[k][d], sizeof(at_peak));
					}
				}
		tr = memscope_peak_tracks(p, &n);
		ck_assert_int_eq(tr[memscope_peak_track_of_peak(p)].peak, best);
		ck_assert_int_eq(memscope_peak_foreach_point(p, on_point, &wk), 0);
		for (k = 0; k < n; k++) {
			ck_assert_int_eq(max[k], tr[k].peak);
			ck_assert_uint_eq(npts[k], tr[k].n_points);
		}
		for (i = 0; i < N_OWNERS; i++) {
			char name[8];
			const struct memscope_peak_owner *o;

			snprintf(name, sizeof(name), "o%d", i);
			o = owner(&t, p, name);
			ck_assert_int_eq(
				o ? (int64_t)o->bytes : 0, at_peak[i] > 0 ? at_peak[i] : 0);
		}
		memscope_peak_free(p);
		tread_free(&t);
		free(csv);
	}
}
END_TEST

/* Feed the inputs csv[0..n) (NULL ends early) as src 0, 1, ... and finish. */
static struct memscope_peak *feed_inputs(struct memscope_strtab *st, const char *const *csv, int n)
{
	struct memscope_peak *p = memscope_peak_new(NULL, st);
	struct memscope_read_opts ro = { .time_unit = MEMSCOPE_TIME_AUTO };
	size_t i;

	for (ro.src = 0; (int)ro.src < n && csv[ro.src]; ro.src++) {
		struct tread t;

		ck_assert_int_eq(tread_mem(&t, csv[ro.src], strlen(csv[ro.src]), &ro), 0);
		for (i = 0; i < memscope_evbuf_count(t.evs); i++) {
			struct memscope_event ev = *memscope_evbuf_get(t.evs, i);

			/* the table of the analysis: the names are not looked at here */
			ev.name = MEMSCOPE_STR_NA;
			ck_assert_int_eq(memscope_peak_feed(p, &ev), 0);
		}
		tread_free(&t);
	}
	ck_assert_int_eq(memscope_peak_finish(p), 0);
	return p;
}

/* Each input counts from its own first row of any kind (as memscope-leaks and --from do), not
 * from its first allocation; the axis runs to the longest input's last row. */
START_TEST(clocks_of_inputs)
{
	static const char a[] = HEADER "1,MARK,N/A,x,900,7,7,0,N/A,,,\n"
				       "2,MALLOC,PTA,N/A,1000,7,7,0,0x1000,\"{allocation_id:1,"
				       "addr:0x1000,size:10}\",,\n"
				       "3,OP_LAUNCH,ATEN_START,x,1100,7,7,0,N/A,,,\n";
	static const char b[] = HEADER "1,MALLOC,PTA,N/A,5000,7,7,0,0x1000,\"{allocation_id:1,"
				       "addr:0x1000,size:20}\",,\n"
				       "2,OP_LAUNCH,ATEN_START,x,5350,7,7,0,N/A,,,\n";
	const char *const set[2] = { a, b };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_peak *p = feed_inputs(st, set, 2);
	uint64_t from, to;

	ck_assert_uint_eq(memscope_peak_origin(p, 0), 900);
	ck_assert_uint_eq(memscope_peak_origin(p, 1), 5000);
	ck_assert_uint_eq(memscope_peak_origin(p, 2), 0);
	memscope_peak_axis(p, &from, &to);
	ck_assert_uint_eq(from, 0);
	ck_assert_uint_eq(to, 350);
	memscope_peak_free(p);
	memscope_strtab_free(st);
}
END_TEST

/* A window: the tracks start with their live bytes at its start, the peak and its owners are
 * those within it, points outside are not visited; bad windows change nothing. */
static int count_points(void *ctx, const struct memscope_peak_point *pt)
{
	(void)pt;
	++*(size_t *)ctx;
	return 0;
}

START_TEST(window)
{
	static const char a[] = HEADER
		"1,MARK,N/A,x,1000,7,7,0,N/A,,,\n"
		"2,MALLOC,PTA,N/A,2000,7,7,0,0x1000,\"{allocation_id:1,size:300,owner:A}\",,\n"
		"3,MALLOC,PTA,N/A,3000,7,7,0,0x2000,\"{allocation_id:2,size:50,owner:B}\",,\n"
		"4,FREE,PTA,N/A,5000,7,7,0,0x1000,\"{allocation_id:1}\",,\n"
		"5,MALLOC,PTA,N/A,6000,7,7,0,0x3000,\"{allocation_id:3,size:100,owner:C}\",,\n"
		"6,MALLOC,PTA,N/A,9000,7,7,0,0x4000,\"{allocation_id:4,size:900,owner:D}\",,\n";
	const char *const set[1] = { a };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_peak *p = feed_inputs(st, set, 1);
	struct memscope_timeline_window w = { 0 };
	struct memscope_error err;
	const struct memscope_peak_track *t;
	const struct memscope_peak_owner *o;
	uint64_t from, to, left;
	size_t n, pts = 0;
	const char *name = "a.csv";

	/* 9000 is past the window's end [1000, 8000) after the first row (1000) */
	w.from_ns = 3500;
	w.to_ns = 8000;
	w.flags = MEMSCOPE_TL_FROM | MEMSCOPE_TL_TO;
	ck_assert_int_eq(memscope_peak_window(p, &w, &name, 1, &left, &err), 0);
	t = memscope_peak_tracks(p, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(t[0].start_bytes, 350);
	ck_assert_int_eq(t[0].peak, 350); /* at the window's start, not the 1250 after it */
	ck_assert_uint_eq(t[0].peak_at.ts_ns, 4500);
	ck_assert_int_eq(t[0].end_bytes, 150);
	ck_assert_uint_eq(t[0].n_points, 2);
	ck_assert_uint_eq(t[0].to_ts_ns, 8999);
	memscope_peak_axis(p, &from, &to);
	ck_assert_uint_eq(from, 3500);
	ck_assert_uint_eq(to, 8000);
	memscope_peak_foreach_point(p, count_points, &pts);
	ck_assert_uint_eq(pts, 2);
	o = memscope_peak_owners(p, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(o[0].bytes, 300);
	ck_assert_uint_eq(o[1].bytes, 50);
	ck_assert_int_eq(memscope_peak_track_of_peak(p), 0);
	/* once */
	ck_assert_int_eq(memscope_peak_window(p, &w, &name, 1, &left, &err), MEMSCOPE_E_ARG);
	memscope_peak_free(p);

	p = feed_inputs(st, set, 1);
	w.from_ns = 5000;
	w.to_ns = 4000;
	ck_assert_int_eq(memscope_peak_window(p, &w, &name, 1, &left, &err), MEMSCOPE_E_ARG);
	w.from_ns = 50000;
	w.flags = MEMSCOPE_TL_FROM;
	ck_assert_int_eq(memscope_peak_window(p, &w, &name, 1, &left, &err), MEMSCOPE_E_INVALID);
	w = (struct memscope_timeline_window){ .step = 1 };
	ck_assert_int_eq(memscope_peak_window(p, &w, &name, 1, &left, &err), MEMSCOPE_E_INVALID);
	/* nothing changed: the whole input's peak */
	t = memscope_peak_tracks(p, &n);
	ck_assert_int_eq(t[0].peak, 1050);
	memscope_peak_free(p);
	memscope_strtab_free(st);
}
END_TEST

/* Nothing to draw: no peak, no owners, no tracks. */
START_TEST(empty)
{
	struct tread t;
	struct memscope_peak *p;
	size_t n;

	read_csv(&t,
		HEADER "1,OP_LAUNCH,ATEN_START,x,100,7,7,0,N/A,,,\n"
		       "2,MALLOC,PTA,N/A,101,7,7,0,0x1000,\"{allocation_id:1,addr:0x1000}\",,\n");
	p = analyse(&t, 0);
	ck_assert_int_eq(memscope_peak_track_of_peak(p), -1);
	ck_assert_ptr_null(memscope_peak_owners(p, &n));
	ck_assert_uint_eq(n, 0);
	memscope_peak_tracks(p, &n);
	ck_assert_uint_eq(n, 0);
	{
		uint64_t from, to;

		memscope_peak_axis(p, &from, &to);
		ck_assert_uint_eq(to, 0);
	}
	memscope_peak_free(p);
	memscope_peak_free(NULL);
	tread_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("peak");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, owners_at_the_peak_not_after);
	tcase_add_test(tc, owner_of_a_block);
	tcase_add_test(tc, owner_is_the_op_the_malloc_names);
	tcase_add_test(tc, default_pools);
	tcase_add_test(tc, same_peak_as_the_timeline);
	tcase_add_test(tc, owners_match_brute_force);
	tcase_add_test(tc, clocks_of_inputs);
	tcase_add_test(tc, window);
	tcase_add_test(tc, empty);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
