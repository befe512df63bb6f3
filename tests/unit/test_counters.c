/* Unit tests of the profiler's samples (COUNTER events) in the timeline and the memory page
 * (memscope_timeline_counters, memscope_peak_counters): dump rows become tracks, samples come out
 * in time order whatever order they came in, a window starts each track with the values it held,
 * PLAN rows move no time, the Chrome trace draws one series per event in MB, leaves out the
 * modules never above 0 and keeps each tick's lowest, highest and last value, at a default
 * resolution that bounds the samples, and the samples are stored compactly. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testutil.h"

#define HEADER                                                                                     \
	"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call "     \
	"Stack(Python),Call Stack(C)\n"

/* The events of t fed to a new timeline (and a new page analysis when p is not NULL), finished. */
static struct memscope_timeline *analyse(const struct tread *t, struct memscope_peak **p)
{
	struct memscope_timeline *tl = memscope_timeline_new(0, 0, t->st);
	size_t i;

	ck_assert_ptr_nonnull(tl);
	if (p)
		ck_assert_ptr_nonnull(*p = memscope_peak_new(NULL, t->st));
	for (i = 0; i < memscope_evbuf_count(t->evs); i++) {
		ck_assert_int_eq(memscope_timeline_feed(tl, memscope_evbuf_get(t->evs, i)), 0);
		if (p)
			ck_assert_int_eq(memscope_peak_feed(*p, memscope_evbuf_get(t->evs, i)), 0);
	}
	ck_assert_int_eq(memscope_timeline_finish(tl), 0);
	if (p)
		ck_assert_int_eq(memscope_peak_finish(*p), 0);
	return tl;
}

/* The samples of a track, in the order it gives them (malloc'd, *n of them). */
static struct memscope_counter_sample *samples(const struct memscope_counter_track *t, size_t *n)
{
	struct memscope_counter_sample *s = calloc(t->n_samples + 1, sizeof(*s));
	struct memscope_counter_iter it;

	ck_assert_ptr_nonnull(s);
	memscope_counter_iter_init(&it, t);
	for (*n = 0; memscope_counter_next(&it, &s[*n]); ++*n)
		ck_assert_uint_lt(*n, t->n_samples);
	ck_assert_uint_eq(*n, t->n_samples);
	return s;
}

#define USED (1u << MEMSCOPE_CTR_USED)
#define TOTAL (1u << MEMSCOPE_CTR_TOTAL)
#define ACTIVE (1u << MEMSCOPE_CTR_ACTIVE)

/* memory_record, npu_mem and npu_module_mem rows of a dump: one track per (process, device,
 * subtype, name), ordered so, their series and values; a row without a value is no sample; a
 * PLAN row (time 0) is no row of the input's span. */
START_TEST(dump_rows_become_tracks)
{
	static const char csv[] =
		HEADER "1,MALLOC,PTA,N/A,1000,7,7,0,0x1000,\"{allocation_id:1,size:64}\",,\n"
		       "2,COUNTER,POOL,PTA,1100,7,N/A,0,N/"
		       "A,\"{used:1000000,total:2000000,active:1500000}\",,"
		       "\n"
		       "3,COUNTER,NPU_MEM,APP/Memory,1200,7,N/A,0,N/A,\"{used:3000000}\",,\n"
		       "4,COUNTER,POOL,APP,1300,7,N/A,0,N/A,\"{total:5000000}\",,\n"
		       "5,COUNTER,MODULE,HCCL,1300,7,N/A,0,N/A,\"{total:400}\",,\n"
		       "6,COUNTER,POOL,PTA,1400,7,N/A,0,N/A,\"{used:999,total:2000000}\",,\n"
		       "7,COUNTER,POOL,PTA,1450,7,N/A,1,N/A,\"{used:5}\",,\n"
		       "8,COUNTER,POOL,GE,1500,7,N/A,0,N/A,\"{note:nothing}\",,\n"
		       "9,PLAN,GE,op,0,N/A,N/A,cpu,N/A,\"{size:100,graph:1}\",,\n"
		       "10,FREE,PTA,N/A,2000,7,7,0,0x1000,\"{allocation_id:1}\",,\n";
	static const struct {
		const char *name;
		int32_t device;
		unsigned subtype, series;
		uint64_t n, first, last;
	} want[] = {
		{ "APP", 0, MEMSCOPE_SUB_POOL_SAMPLE, TOTAL, 1, 1300, 1300 },
		{ "PTA", 0, MEMSCOPE_SUB_POOL_SAMPLE, USED | TOTAL | ACTIVE, 2, 1100, 1400 },
		{ "APP/Memory", 0, MEMSCOPE_SUB_NPU_MEM, USED, 1, 1200, 1200 },
		{ "HCCL", 0, MEMSCOPE_SUB_MODULE_SAMPLE, TOTAL, 1, 1300, 1300 },
		{ "PTA", 1, MEMSCOPE_SUB_POOL_SAMPLE, USED, 1, 1450, 1450 },
	};
	struct tread t;
	struct memscope_peak *p;
	struct memscope_timeline *tl;
	const struct memscope_counter_track *k, *pk;
	const struct memscope_timeline_input *in;
	struct memscope_counter_sample *s;
	size_t n, np, i, ns;

	ck_assert_int_eq(tread_mem(&t, csv, sizeof(csv) - 1, NULL), 0);
	tl = analyse(&t, &p);
	k = memscope_timeline_counters(tl, &n);
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++) {
		ck_assert_str_eq(tstr(&t, k[i].name), want[i].name);
		ck_assert_int_eq(k[i].device, want[i].device);
		ck_assert_uint_eq(k[i].subtype, want[i].subtype);
		ck_assert_uint_eq(k[i].series, want[i].series);
		ck_assert_uint_eq(k[i].n_samples, want[i].n);
		ck_assert_uint_eq(k[i].first_ts_ns, want[i].first);
		ck_assert_uint_eq(k[i].last_ts_ns, want[i].last);
		ck_assert_uint_eq(k[i].pid, 7);
		ck_assert_uint_eq(k[i].end_ts_ns, 2000); /* the process's last row */
	}
	/* the PTA track: both samples, each with its values */
	s = samples(&k[1], &ns);
	ck_assert_uint_eq(s[0].has, USED | TOTAL | ACTIVE);
	ck_assert_int_eq(s[0].v[MEMSCOPE_CTR_USED], 1000000);
	ck_assert_int_eq(s[0].v[MEMSCOPE_CTR_TOTAL], 2000000);
	ck_assert_int_eq(s[0].v[MEMSCOPE_CTR_ACTIVE], 1500000);
	ck_assert_uint_eq(s[1].has, USED | TOTAL);
	ck_assert_int_eq(s[1].v[MEMSCOPE_CTR_USED], 999);
	ck_assert_int_eq(k[1].max[MEMSCOPE_CTR_USED], 1000000);
	ck_assert_uint_eq(k[1].max_ts_ns[MEMSCOPE_CTR_USED], 1100);
	ck_assert_int_eq(k[1].max[MEMSCOPE_CTR_ACTIVE], 1500000);
	ck_assert_str_eq(memscope_counter_source(k[2].subtype), "npu_mem");
	free(s);
	/* the page has the same tracks */
	pk = memscope_peak_counters(p, &np);
	ck_assert_uint_eq(np, n);
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(pk[i].name, k[i].name);
		ck_assert_uint_eq(pk[i].n_samples, k[i].n_samples);
		ck_assert_uint_eq(pk[i].end_ts_ns, 2000);
	}
	/* PLAN's time 0 is no row: the input spans 1000 to 2000, and counts from 1000 */
	ck_assert_ptr_nonnull(in = memscope_timeline_input(tl, 0));
	ck_assert_uint_eq(in->first_ts_ns, 1000);
	ck_assert_uint_eq(in->last_ts_ns, 2000);
	ck_assert_uint_eq(memscope_peak_origin(p, 0), 1000);
	memscope_timeline_free(tl);
	memscope_peak_free(p);
	tread_free(&t);
}
END_TEST

/* One event of a track, made here. */
static struct memscope_event event(uint32_t name, uint64_t ts, unsigned has, const int64_t *v,
	const struct memscope_attr *active)
{
	struct memscope_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = MEMSCOPE_KIND_COUNTER;
	ev.subtype = MEMSCOPE_SUB_POOL_SAMPLE;
	ev.name = name;
	ev.ts_ns = ts;
	ev.pid = 7;
	ev.tid = MEMSCOPE_ID_NONE;
	if (has & USED) {
		ev.flags |= MEMSCOPE_EV_USED;
		ev.used = v[MEMSCOPE_CTR_USED];
	}
	if (has & TOTAL) {
		ev.flags |= MEMSCOPE_EV_TOTAL;
		ev.total = v[MEMSCOPE_CTR_TOTAL];
	}
	if (has & ACTIVE) {
		ev.attrs = active;
		ev.n_attrs = 1;
	}
	return ev;
}

/* Samples in random order, at few distinct times, with values at the ends of the range: they come
 * out in time order, those of one time in the order they came, every value as it was. */
START_TEST(any_order_any_value)
{
	enum { N = 5000 };
	static const int64_t odd[] = { INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1 };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_timeline *tl = memscope_timeline_new(0, 0, st);
	struct memscope_counter_sample *in = calloc(N, sizeof(*in)), *out;
	const struct memscope_counter_track *k;
	uint32_t name, key;
	size_t n, i, j;
	int sorted = 1;

	ck_assert_ptr_nonnull(in);
	ck_assert_int_eq(memscope_strtab_intern(st, "PTA", 3, &name), 0);
	ck_assert_int_eq(memscope_strtab_intern(st, "active", 6, &key), 0);
	trand_state = 12345;
	for (i = 0; i < N; i++) {
		char text[24];
		struct memscope_attr a = { key, 0, text };
		struct memscope_event ev;

		/* times: 0, the largest, and a few between, often equal */
		in[i].ts_ns = i % 97 == 0 ? UINT64_MAX : i % 89 == 0 ? 0 : 1000 + trand(40) * 7;
		in[i].has = (unsigned)(1 + trand(7));
		for (j = 0; j < MEMSCOPE_CTR_N; j++)
			in[i].v[j] = trand(5) ? (int64_t)trand(1u << 30) - (1 << 29)
					      : odd[trand(sizeof(odd) / sizeof(odd[0]))];
		a.val_len = (uint32_t)snprintf(
			text, sizeof(text), "%lld", (long long)in[i].v[MEMSCOPE_CTR_ACTIVE]);
		ev = event(name, in[i].ts_ns, in[i].has, in[i].v, &a);
		ev.id = i;
		ck_assert_int_eq(memscope_timeline_feed(tl, &ev), 0);
	}
	ck_assert_int_eq(memscope_timeline_finish(tl), 0);
	k = memscope_timeline_counters(tl, &n);
	ck_assert_uint_eq(n, 1);
	out = samples(&k[0], &n);
	ck_assert_uint_eq(n, N);
	ck_assert_uint_eq(k[0].first_ts_ns, 0);
	ck_assert_uint_eq(k[0].last_ts_ns, UINT64_MAX);
	/* the oracle: a stable insertion of each sample after those of its time or before */
	for (i = 1; i < N; i++) {
		struct memscope_counter_sample x = in[i];

		for (j = i; j && in[j - 1].ts_ns > x.ts_ns; j--)
			in[j] = in[j - 1];
		in[j] = x;
	}
	for (i = 0; i < N; i++) {
		ck_assert_uint_eq(out[i].ts_ns, in[i].ts_ns);
		ck_assert_uint_eq(out[i].has, in[i].has);
		for (j = 0; j < MEMSCOPE_CTR_N; j++)
			if (in[i].has & 1u << j)
				ck_assert_int_eq(out[i].v[j], in[i].v[j]);
		sorted &= !i || out[i - 1].ts_ns <= out[i].ts_ns;
	}
	ck_assert(sorted);
	free(in);
	free(out);
	memscope_timeline_free(tl);
	memscope_strtab_free(st);
}
END_TEST

/* A window: each track starts at its start with the last value of each series before it (a
 * series seen earlier than the others included), then the samples in it; a process with no row
 * in it is left out; the page's cut is the timeline's. */
START_TEST(window_starts_with_the_values_held)
{
	static const char csv[] =
		HEADER "1,COUNTER,POOL,PTA,1000,7,N/A,0,N/A,\"{used:10,total:100,active:11}\",,\n"
		       "2,COUNTER,POOL,PTA,2000,7,N/A,0,N/A,\"{used:20}\",,\n"
		       "3,COUNTER,POOL,PTA,3000,7,N/A,0,N/A,\"{used:30,total:300}\",,\n"
		       "4,COUNTER,POOL,PTA,4000,7,N/A,0,N/A,\"{used:40}\",,\n"
		       "5,COUNTER,NPU_MEM,APP/Memory,1500,7,N/A,0,N/A,\"{used:7}\",,\n"
		       "6,COUNTER,POOL,PTA,900,8,N/A,0,N/A,\"{used:1}\",,\n"
		       "7,COUNTER,POOL,PTA,1200,8,N/A,0,N/A,\"{used:2}\",,\n"
		       "8,PLAN,GE,op,0,N/A,N/A,cpu,N/A,\"{size:100}\",,\n"
		       "9,OP_LAUNCH,ATEN_START,x,5000,7,7,0,N/A,,,\n";
	struct memscope_timeline_window w = { .from_ns = 2500,
		.to_ns = 3500,
		.flags = MEMSCOPE_TL_FROM | MEMSCOPE_TL_TO | MEMSCOPE_TL_FROM_ABS |
			 MEMSCOPE_TL_TO_ABS };
	const char *name = "c.csv";
	struct memscope_error err;
	struct tread t;
	struct memscope_peak *p;
	struct memscope_timeline *tl;
	const struct memscope_counter_track *k[2];
	struct memscope_counter_sample *s;
	uint64_t left;
	size_t n[2], ns, i, pass;

	ck_assert_int_eq(tread_mem(&t, csv, sizeof(csv) - 1, NULL), 0);
	tl = analyse(&t, &p);
	memscope_error_clear(&err);
	ck_assert_int_eq(memscope_timeline_window(tl, &w, &name, 1, &left, &err), 0);
	ck_assert_int_eq(memscope_peak_window(p, &w, &name, 1, &left, &err), 0);
	k[0] = memscope_timeline_counters(tl, &n[0]);
	k[1] = memscope_peak_counters(p, &n[1]);
	for (pass = 0; pass < 2; pass++) {
		/* process 8 ended at 1200: left out; process 7: PTA, APP/Memory */
		ck_assert_uint_eq(n[pass], 2);
		ck_assert_str_eq(tstr(&t, k[pass][0].name), "PTA");
		ck_assert_uint_eq(k[pass][0].pid, 7);
		ck_assert_uint_eq(k[pass][0].end_ts_ns, 3499);
		s = samples(&k[pass][0], &ns);
		ck_assert_uint_eq(ns, 2);
		ck_assert_uint_eq(s[0].ts_ns, 2500);
		ck_assert_uint_eq(s[0].has, USED | TOTAL | ACTIVE);
		ck_assert_int_eq(s[0].v[MEMSCOPE_CTR_USED], 20);
		ck_assert_int_eq(s[0].v[MEMSCOPE_CTR_TOTAL], 100);
		ck_assert_int_eq(s[0].v[MEMSCOPE_CTR_ACTIVE], 11);
		ck_assert_uint_eq(s[1].ts_ns, 3000);
		ck_assert_int_eq(s[1].v[MEMSCOPE_CTR_USED], 30);
		ck_assert_int_eq(k[pass][0].max[MEMSCOPE_CTR_USED], 30);
		ck_assert_int_eq(k[pass][0].max[MEMSCOPE_CTR_ACTIVE], 11);
		ck_assert_uint_eq(k[pass][0].max_ts_ns[MEMSCOPE_CTR_ACTIVE], 2500);
		free(s);
		/* APP/Memory: its one sample, before the window, held at its start */
		s = samples(&k[pass][1], &ns);
		ck_assert_uint_eq(ns, 1);
		ck_assert_uint_eq(s[0].ts_ns, 2500);
		ck_assert_int_eq(s[0].v[MEMSCOPE_CTR_USED], 7);
		free(s);
	}
	for (i = 0; i < 2; i++)
		ck_assert_uint_eq(k[0][i].name, k[1][i].name);
	memscope_timeline_free(tl);
	memscope_peak_free(p);

	/* PLAN's time 0 does not move a window counted from the first row: 1000 after it is 1900
	 * (process 8's first row, 900) */
	tl = analyse(&t, &p);
	w = (struct memscope_timeline_window){ .from_ns = 1000, .flags = MEMSCOPE_TL_FROM };
	ck_assert_int_eq(memscope_timeline_window(tl, &w, &name, 1, &left, &err), 0);
	ck_assert_int_eq(memscope_peak_window(p, &w, &name, 1, &left, &err), 0);
	k[0] = memscope_timeline_counters(tl, &n[0]);
	ck_assert_uint_eq(n[0], 2);
	s = samples(&k[0][0], &ns);
	ck_assert_uint_eq(s[0].ts_ns, 1900);
	ck_assert_int_eq(s[0].v[MEMSCOPE_CTR_USED], 10);
	free(s);
	{
		uint64_t from, to;

		memscope_peak_axis(p, &from, &to);
		ck_assert_uint_eq(from, 1000);
		ck_assert_uint_eq(to, 4100); /* process 7's last row, 5000, after the origin 900 */
	}
	memscope_timeline_free(tl);
	memscope_peak_free(p);
	tread_free(&t);
}
END_TEST

/* The Chrome trace of tl at tick_ns (MEMSCOPE_TL_TICK_AUTO: the default), parsed; what it holds
 * into *stats (may be NULL). */
static cJSON *chrome_stats(const struct memscope_timeline *tl, uint64_t tick_ns,
	struct memscope_timeline_chrome_stats *stats)
{
	struct memscope_timeline_chrome_opts o;
	struct memscope_error err;
	const char *name = "c.csv";
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cJSON *j;

	memscope_timeline_chrome_opts_init(&o);
	ck_assert_uint_eq(o.tick_ns, MEMSCOPE_TL_TICK_AUTO);
	o.tick_ns = tick_ns;
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(
		memscope_timeline_write_chrome_opts(f, tl, &name, 1, "test", &o, stats, &err), 0);
	fclose(f);
	ck_assert_ptr_nonnull(j = cJSON_Parse(text));
	free(text);
	return j;
}

static cJSON *chrome(const struct memscope_timeline *tl, uint64_t tick_ns)
{
	return chrome_stats(tl, tick_ns, NULL);
}

/* The counter events of trace j named name: their times (us since the origin) and values. */
static size_t series_of(const cJSON *j, const char *name, double *ts, double *v, size_t max)
{
	const cJSON *e;
	size_t n = 0;

	cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents"))
	{
		const cJSON *args = cJSON_GetObjectItem(e, "args");

		if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "C") ||
			strcmp(cJSON_GetObjectItem(e, "name")->valuestring, name))
			continue;
		/* one series, in MB, on thread 0 */
		ck_assert_int_eq(cJSON_GetArraySize(args), 1);
		ck_assert_ptr_nonnull(cJSON_GetObjectItem(args, "MB"));
		ck_assert_int_eq(cJSON_GetObjectItem(e, "tid")->valueint, 0);
		ck_assert_uint_lt(n, max);
		ts[n] = cJSON_GetObjectItem(e, "ts")->valuedouble;
		v[n++] = cJSON_GetObjectItem(args, "MB")->valuedouble;
	}
	return n;
}

/* The trace's tracks: names and series, MB to six decimals, in time order; at a coarser
 * resolution, fewer samples and each tick's highest value kept. */
START_TEST(chrome_tracks)
{
	enum { N = 3000, MAXN = 2 * N + 8 };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_timeline *tl = memscope_timeline_new(0, 0, st);
	double *ts = calloc(MAXN, sizeof(double)), *v = calloc(MAXN, sizeof(double));
	double *ts2 = calloc(MAXN, sizeof(double)), *v2 = calloc(MAXN, sizeof(double));
	static const char *const names[] = { "NPU0 PTA (memory_record) allocated",
		"NPU0 PTA (memory_record) reserved", "NPU0 PTA (memory_record) active",
		"NPU0 APP/Memory", "NPU0 module HCCL", "host PTA (memory_record) allocated" };
	uint32_t pta, app, hccl, idle, key;
	int64_t val[MEMSCOPE_CTR_N];
	cJSON *full, *coarse, *dflt;
	struct memscope_timeline_chrome_stats cs;
	size_t i, n, n2, k, b;

	ck_assert_ptr_nonnull(v2);
	ck_assert_int_eq(memscope_strtab_intern(st, "PTA", 3, &pta), 0);
	ck_assert_int_eq(memscope_strtab_intern(st, "APP/Memory", 10, &app), 0);
	ck_assert_int_eq(memscope_strtab_intern(st, "HCCL", 4, &hccl), 0);
	ck_assert_int_eq(memscope_strtab_intern(st, "IDLE", 4, &idle), 0);
	ck_assert_int_eq(memscope_strtab_intern(st, "active", 6, &key), 0);
	trand_state = 99;
	/* in reverse time order, 1 to 3000 us after 2 s */
	for (i = N; i; i--) {
		struct memscope_attr a = { key, 1, "5" };
		struct memscope_event ev;

		val[MEMSCOPE_CTR_USED] = (int64_t)trand(1u << 31);
		val[MEMSCOPE_CTR_TOTAL] = 3 << 20;
		ev = event(
			pta, 2000000000 + i * 1000 + trand(1000), USED | TOTAL | ACTIVE, val, &a);
		ck_assert_int_eq(memscope_timeline_feed(tl, &ev), 0);
	}
	/* the ends of MB's six decimals; a module; a host's pool */
	{
		static const int64_t mb[] = { 1, (1 << 20) - 1, -1024, 1 << 20, 1536 };
		struct memscope_event ev;

		for (k = 0; k < sizeof(mb) / sizeof(mb[0]); k++) {
			val[MEMSCOPE_CTR_USED] = mb[k];
			ev = event(app, 2000000000 + k, USED, val, NULL);
			ev.subtype = MEMSCOPE_SUB_NPU_MEM;
			ck_assert_int_eq(memscope_timeline_feed(tl, &ev), 0);
		}
		val[MEMSCOPE_CTR_TOTAL] = 404 << 20;
		ev = event(hccl, 2000000000, TOTAL, val, NULL);
		ev.subtype = MEMSCOPE_SUB_MODULE_SAMPLE;
		ck_assert_int_eq(memscope_timeline_feed(tl, &ev), 0);
		/* a module never above 0 carries nothing: left out, counted */
		val[MEMSCOPE_CTR_TOTAL] = 0;
		ev = event(idle, 2000000000, TOTAL, val, NULL);
		ev.subtype = MEMSCOPE_SUB_MODULE_SAMPLE;
		ck_assert_int_eq(memscope_timeline_feed(tl, &ev), 0);
		ev.ts_ns += 5000;
		ck_assert_int_eq(memscope_timeline_feed(tl, &ev), 0);
		ev = event(pta, 2000000000, USED, val, NULL);
		ev.device = MEMSCOPE_DEVICE_HOST;
		ck_assert_int_eq(memscope_timeline_feed(tl, &ev), 0);
	}
	ck_assert_int_eq(memscope_timeline_finish(tl), 0);
	full = chrome(tl, 0);
	coarse = chrome(tl, 100000); /* 100 us */
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		ck_assert_uint_gt(series_of(full, names[k], ts, v, MAXN), 0);
	/* every sample at resolution 0, in time order, in MB */
	n = series_of(full, names[0], ts, v, MAXN);
	ck_assert_uint_eq(n, N);
	for (i = 1; i < n; i++)
		ck_assert(ts[i - 1] <= ts[i]);
	ck_assert_uint_eq(series_of(full, names[1], ts2, v2, MAXN), N);
	ck_assert(v2[0] == 3.0);
	ck_assert_uint_eq(series_of(full, names[2], ts2, v2, MAXN), N);
	ck_assert(v2[0] == 0.000005);
	ck_assert_uint_eq(series_of(full, names[3], ts2, v2, MAXN), 5);
	ck_assert(v2[0] == 0.000001 && v2[1] == 0.999999 && v2[2] == -0.000977 && v2[3] == 1.0 &&
		  v2[4] == 0.001465);
	ck_assert_uint_eq(series_of(full, names[4], ts2, v2, MAXN), 1);
	ck_assert(v2[0] == 404.0);
	ck_assert_uint_eq(series_of(full, "NPU0 module IDLE", ts2, v2, MAXN), 0);
	/* the default of a trace this small: 1 us, every sample of a distinct microsecond; the
	 * module never above 0 counted */
	dflt = chrome_stats(tl, MEMSCOPE_TL_TICK_AUTO, &cs);
	ck_assert_uint_eq(cs.tick_ns, 1000);
	ck_assert_uint_eq(cs.modules_left_out, 1);
	ck_assert_int_eq(cs.mb, 1);
	ck_assert_uint_eq(series_of(dflt, names[4], ts2, v2, MAXN), 1);
	ck_assert_uint_eq(series_of(dflt, "NPU0 module IDLE", ts2, v2, MAXN), 0);
	cJSON_Delete(dflt);
	/* 100 us ticks: fewer samples, the same highest value in each tick, the same last */
	n2 = series_of(coarse, names[0], ts2, v2, MAXN);
	ck_assert_uint_lt(n2, n / 4);
	for (i = 1; i < n2; i++)
		ck_assert(ts2[i - 1] <= ts2[i]);
	ck_assert(v2[n2 - 1] == v[n - 1]);
	for (b = 0; b < 40; b++) {
		double hi = -1, hi2 = -1;

		for (i = 0; i < n; i++)
			if ((size_t)(ts[i] / 100) == b && v[i] > hi)
				hi = v[i];
		for (i = 0; i < n2; i++)
			if ((size_t)(ts2[i] / 100) == b && v2[i] > hi2)
				hi2 = v2[i];
		ck_assert(hi == hi2);
	}
	/* the reserved bytes never change: one sample */
	ck_assert_uint_eq(series_of(coarse, names[1], ts2, v2, MAXN), 1);
	cJSON_Delete(full);
	cJSON_Delete(coarse);
	free(ts);
	free(v);
	free(ts2);
	free(v2);
	memscope_timeline_free(tl);
	memscope_strtab_free(st);
}
END_TEST

/* The default resolution of a trace with more samples than MEMSCOPE_TL_AUTO_SAMPLES: the
 * finest of 1, 2, 5 times a power of ten at which every series keeps at most its lowest, highest
 * and last sample of a tick, MEMSCOPE_TL_AUTO_SAMPLES at most in all; each tick's lowest, highest
 * and last value are those of every sample. */
START_TEST(auto_resolution)
{
	enum { N = 300000 };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_timeline *tl = memscope_timeline_new(0, 0, st);
	struct memscope_timeline_chrome_stats cs, all;
	int64_t val[MEMSCOPE_CTR_N] = { 1 << 30, 4LL << 30, 0 };
	uint64_t ts = 1736405443000000000ULL, first = 0, last = 0, tick, ticks, bound, lo, hi;
	double *t0 = calloc(N + 1, sizeof(double)), *v0 = calloc(N + 1, sizeof(double));
	double *t1 = calloc(N + 1, sizeof(double)), *v1 = calloc(N + 1, sizeof(double));
	cJSON *full, *dflt;
	uint32_t pta;
	size_t i, n0, n1, a, b;

	ck_assert_ptr_nonnull(v1);
	ck_assert_int_eq(memscope_strtab_intern(st, "PTA", 3, &pta), 0);
	trand_state = 11;
	for (i = 0; i < N; i++) {
		struct memscope_event ev;

		ts += 1000 + trand(40000);
		val[MEMSCOPE_CTR_USED] += (trand(2) ? 1 : -1) * (int64_t)(512 * (1 + trand(4096)));
		val[MEMSCOPE_CTR_TOTAL] = (int64_t)(4ULL << 30) + (int64_t)(trand(3) << 21);
		ev = event(pta, ts, USED | TOTAL, val, NULL);
		ck_assert_int_eq(memscope_timeline_feed(tl, &ev), 0);
		first = i ? first : ts;
		last = ts;
	}
	ck_assert_int_eq(memscope_timeline_finish(tl), 0);
	full = chrome_stats(tl, 0, &all);
	dflt = chrome_stats(tl, MEMSCOPE_TL_TICK_AUTO, &cs);
	ck_assert_uint_eq(all.samples, 2 * N);
	ck_assert_uint_le(cs.samples, MEMSCOPE_TL_AUTO_SAMPLES);
	ck_assert_uint_eq(cs.samples + cs.samples_left_out, 2 * N);
	/* the finest tick whose bound (two series of N samples over [first, last]) fits */
	for (a = 0, tick = 0; a < 30 && !tick; a++) {
		uint64_t t = 1000;

		for (b = 0; b < a / 3; b++)
			t *= 10;
		t *= (uint64_t[]){ 1, 2, 5 }[a % 3];
		ticks = last / t - first / t + 1;
		bound = 2 * (3 * ticks < N ? 3 * ticks : N);
		if (bound <= MEMSCOPE_TL_AUTO_SAMPLES)
			tick = t;
	}
	ck_assert_uint_eq(cs.tick_ns, tick);
	ck_assert_uint_gt(tick, 1000);
	/* each tick's lowest, highest and last value of the allocated bytes (which change at every
	 * sample) are every sample's */
	n0 = series_of(full, "NPU0 PTA (memory_record) allocated", t0, v0, N + 1);
	n1 = series_of(dflt, "NPU0 PTA (memory_record) allocated", t1, v1, N + 1);
	ck_assert_uint_eq(n0, N);
	ck_assert_uint_lt(n1, n0);
	ck_assert(v0[n0 - 1] == v1[n1 - 1]);
	for (a = 0, b = 0; a < n0;) {
		uint64_t k = (uint64_t)(t0[a] * 1000 + 0.5) / tick;
		double mn = v0[a], mx = v0[a], mn1 = 1e300, mx1 = -1e300, end;

		for (; a < n0 && (uint64_t)(t0[a] * 1000 + 0.5) / tick == k; a++) {
			mn = v0[a] < mn ? v0[a] : mn;
			mx = v0[a] > mx ? v0[a] : mx;
		}
		end = v0[a - 1];
		lo = b;
		for (; b < n1 && (uint64_t)(t1[b] * 1000 + 0.5) / tick == k; b++) {
			mn1 = v1[b] < mn1 ? v1[b] : mn1;
			mx1 = v1[b] > mx1 ? v1[b] : mx1;
		}
		hi = b;
		ck_assert_uint_gt(hi, lo);
		ck_assert(mn == mn1 && mx == mx1 && end == v1[b - 1]);
	}
	ck_assert_uint_eq(b, n1);
	cJSON_Delete(full);
	cJSON_Delete(dflt);
	free(t0);
	free(v0);
	free(t1);
	free(v1);
	memscope_timeline_free(tl);
	memscope_strtab_free(st);
}
END_TEST

/* A memory_record of a million rows takes about 10 to 15 bytes a sample, not the 64 of a point:
 * a pool's allocated bytes changing by a block, its reserved bytes seldom, microseconds apart. */
START_TEST(compact)
{
	enum { N = 1000000 };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_timeline *tl = memscope_timeline_new(0, 0, st);
	struct mallinfo2 before, after;
	uint32_t pta, key;
	int64_t val[MEMSCOPE_CTR_N] = { 1 << 30, 4LL << 30, 0 };
	size_t i, n, grew;
	uint64_t ts = 1736405443000000000ULL;

	ck_assert_int_eq(memscope_strtab_intern(st, "PTA", 3, &pta), 0);
	ck_assert_int_eq(memscope_strtab_intern(st, "active", 6, &key), 0);
	trand_state = 7;
	before = mallinfo2();
	for (i = 0; i < N; i++) {
		char text[24];
		struct memscope_attr a = { key, 0, text };
		struct memscope_event ev;
		static const int64_t sizes[] = { 512, 1 << 20, 2 << 20, 123456 * 512 };

		ts += 1000 + trand(40000);
		val[MEMSCOPE_CTR_USED] += (trand(2) ? 1 : -1) * sizes[trand(4)];
		a.val_len = (uint32_t)snprintf(
			text, sizeof(text), "%lld", (long long)val[MEMSCOPE_CTR_USED] + 4096);
		ev = event(pta, ts, USED | TOTAL | ACTIVE, val, &a);
		ck_assert_int_eq(memscope_timeline_feed(tl, &ev), 0);
	}
	after = mallinfo2();
	ck_assert_int_eq(memscope_timeline_finish(tl), 0);
	memscope_timeline_counters(tl, &n);
	ck_assert_uint_eq(n, 1);
	grew = after.uordblks + after.hblkhd - before.uordblks - before.hblkhd;
	printf("compact: %zu samples in %zu bytes (%.1f a sample)\n", (size_t)N, grew,
		(double)grew / N);
	/* a sanitizer's allocator is not malloc's: nothing to measure there */
	if (grew)
		ck_assert_uint_lt(grew, (size_t)N * 16);
	memscope_timeline_free(tl);
	memscope_strtab_free(st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("counters");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, dump_rows_become_tracks);
	tcase_add_test(tc, any_order_any_value);
	tcase_add_test(tc, window_starts_with_the_values_held);
	tcase_add_test(tc, chrome_tracks);
	tcase_add_test(tc, auto_resolution);
	tcase_add_test(tc, compact);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
