/* Unit tests of the Ascend profiler memory CSV reader and the folder reader: every layout and quirk
 * of formats/msprof.md read into exact events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#define NO INT64_MIN /* the value's flag is clear */

/* One expected event: its kind, subtype, pool, time, size/total/used (NO: flag clear), name (NULL:
 * N/A), device and allocation_id (0: flag clear). */
struct want {
	unsigned kind, subtype, pool;
	uint64_t ts;
	int64_t size, total, used;
	const char *name;
	int32_t device;
	uint64_t alloc_id;
};

static void check_one(const struct tread *t, size_t i, const struct want *w)
{
	const struct memscope_event *ev = memscope_evbuf_get(t->evs, i);

	ck_assert_msg(ev->kind == w->kind, "event %zu: kind %u, want %u", i, ev->kind, w->kind);
	ck_assert_msg(ev->subtype == w->subtype, "event %zu: subtype %u, want %u", i, ev->subtype,
		w->subtype);
	ck_assert_msg(ev->pool == w->pool, "event %zu: pool %u, want %u", i, ev->pool, w->pool);
	ck_assert_msg(ev->ts_ns == w->ts, "event %zu: ts %llu, want %llu", i,
		(unsigned long long)ev->ts_ns, (unsigned long long)w->ts);
	ck_assert_msg(!(ev->flags & MEMSCOPE_EV_PTR), "event %zu has a pointer", i);
	ck_assert_msg(ev->id == i + 1, "event %zu: ID %llu", i, (unsigned long long)ev->id);
	if (w->size == NO)
		ck_assert_msg(!(ev->flags & MEMSCOPE_EV_SIZE), "event %zu: size set", i);
	else
		ck_assert_msg((ev->flags & MEMSCOPE_EV_SIZE) && ev->size == w->size,
			"event %zu: size %lld, want %lld", i, (long long)ev->size,
			(long long)w->size);
	if (w->total == NO)
		ck_assert_msg(!(ev->flags & MEMSCOPE_EV_TOTAL), "event %zu: total set", i);
	else
		ck_assert_msg((ev->flags & MEMSCOPE_EV_TOTAL) && ev->total == w->total,
			"event %zu: total %lld, want %lld", i, (long long)ev->total,
			(long long)w->total);
	if (w->used == NO)
		ck_assert_msg(!(ev->flags & MEMSCOPE_EV_USED), "event %zu: used set", i);
	else
		ck_assert_msg((ev->flags & MEMSCOPE_EV_USED) && ev->used == w->used,
			"event %zu: used %lld, want %lld", i, (long long)ev->used,
			(long long)w->used);
	if (w->name)
		ck_assert_msg(strcmp(tstr(t, ev->name), w->name) == 0,
			"event %zu: name '%s', want '%s'", i, tstr(t, ev->name), w->name);
	else
		ck_assert_msg(ev->name == MEMSCOPE_STR_NA, "event %zu: name '%s', want N/A", i,
			tstr(t, ev->name));
	ck_assert_msg(
		ev->device == w->device, "event %zu: device %d, want %d", i, ev->device, w->device);
	if (w->alloc_id)
		ck_assert_msg((ev->flags & MEMSCOPE_EV_ALLOC_ID) && ev->alloc_id == w->alloc_id,
			"event %zu: allocation_id %llu, want %llu", i,
			(unsigned long long)ev->alloc_id, (unsigned long long)w->alloc_id);
	else
		ck_assert_msg(
			!(ev->flags & MEMSCOPE_EV_ALLOC_ID), "event %zu: allocation_id set", i);
}

static void check_events(const struct tread *t, const struct want *w, size_t n)
{
	size_t i;

	ck_assert_msg(t->rc == 0, "read failed: %s:%llu: %s", t->err.file,
		(unsigned long long)t->err.line, t->err.msg);
	ck_assert_uint_eq(memscope_evbuf_count(t->evs), n);
	for (i = 0; i < n; i++)
		check_one(t, i, &w[i]);
}

/* The text of event i's attr key, NULL when absent (static buffer). */
static const char *attr(const struct tread *t, size_t i, const char *key)
{
	static char buf[128];
	const struct memscope_event *ev = memscope_evbuf_get(t->evs, i);
	const struct memscope_attr *a;
	uint32_t id;

	ck_assert_int_eq(memscope_strtab_intern(t->st, key, strlen(key), &id), 0);
	a = memscope_event_attr(ev, id);
	if (!a)
		return NULL;
	snprintf(buf, sizeof(buf), "%.*s", (int)a->val_len, a->val);
	return buf;
}

/* Notes of a read, one per line. */
struct notes {
	char text[2048];
	unsigned n;
};

static void on_notice(void *ctx, uint32_t src, const char *msg)
{
	struct notes *n = ctx;
	size_t len = strlen(n->text);

	(void)src;
	n->n++;
	snprintf(n->text + len, sizeof(n->text) - len, "%s\n", msg);
}

static int read_csv(struct tread *t, const char *text, int lenient, struct notes *n)
{
	struct memscope_read_opts o = { 0 };

	o.lenient = lenient;
	if (n) {
		memset(n, 0, sizeof(*n));
		o.notice = on_notice;
		o.notice_ctx = n;
	}
	return tread_mem(t, text, strlen(text), &o);
}

/* A temporary folder of files (removed by rm_tree). */
static char *mk_tree(void)
{
	char tmpl[] = "/tmp/test_msprof.XXXXXX";
	char *d = mkdtemp(tmpl);

	ck_assert_ptr_nonnull(d);
	return strdup(d);
}

static void put(const char *dir, const char *rel, const char *text)
{
	char path[4096], *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (s = path + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0700);
		*s = '/';
	}
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	fclose(f);
}

static void rm_tree(char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(dir);
}

static int read_path(struct tread *t, const char *path, int lenient, struct notes *n)
{
	struct memscope_read_opts o = { 0 };

	o.lenient = lenient;
	if (n) {
		memset(n, 0, sizeof(*n));
		o.notice = on_notice;
		o.notice_ctx = n;
	}
	return tread_file(t, path, &o);
}

#define K_MALLOC MEMSCOPE_KIND_MALLOC
#define K_FREE MEMSCOPE_KIND_FREE
#define K_COUNTER MEMSCOPE_KIND_COUNTER
#define PTA MEMSCOPE_SUB_PTA
#define GE MEMSCOPE_SUB_GE
#define POOL MEMSCOPE_SUB_POOL_SAMPLE
#define HOST MEMSCOPE_DEVICE_HOST

#define OPMEM_TORCH                                                                                \
	"Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),"              \
	"Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total "        \
	"Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total "      \
	"Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type"
#define OPMEM_MSPROF                                                                               \
	"Device_id,Name,Size(KB),Allocation Time(us),Duration(us),Allocation Total "               \
	"Allocated(KB),Allocation Total Reserved(KB),Release Total Allocated(KB),Release Total "   \
	"Reserved(KB),Device"

/* torch_npu operator_memory: blocks, pools by name, totals, quoted names, N/A, release-only. */
START_TEST(opmem_torch_layout)
{
	static const char csv[] = OPMEM_TORCH
		"\r\n"
		"aten::empty_strided,18816.5,1736405443871259.720\t,1736405443881259.720\t,"
		"1736405443881259.000\t,10000.000\t,9999.280\t,954.3701171875,1452.0,"
		"954.3701171875,936.0,1452.0,936.0,1431569360,NPU:0\r\n"
		"\"cann::Add,\"\"fused\"\" 1\",512.0,1736405443872000.100\t,1736405443872100.100\t,"
		",100.000\t,,0.5,74.75,,0.0,74.75,,,NPU:0\r\n"
		"aten::mul,2031.5,1736405443873000,,,,,956.3544921875,1452.0,956.3544921875,,,,"
		"1431569360,NPU:1\r\n"
		",-2.5,,1736405443875000.123\t,,,,,,,954.0,1452.0,954.0,1431569360,NPU:0\r\n"
		"N/A,1.5,1736405443877000.000\t,N/A,N/A,N/A,N/A,N/A,1452.0,N/A,N/A,N/A,N/A,N/A,"
		"NPU:0\r\n";
	static const struct want w[] = {
		{ K_MALLOC, PTA, PTA, 1736405443871259720, 19268096, 1522532352, 1000729600,
			"aten::empty_strided", 0, 1 },
		{ K_FREE, PTA, PTA, 1736405443881259720, 19268096, 1522532352, 981467136, NULL, 0,
			1 },
		{ K_MALLOC, GE, GE, 1736405443872000100, 524288, 78381056, 524288,
			"cann::Add,\"fused\" 1", 0, 2 },
		{ K_FREE, GE, GE, 1736405443872100100, 524288, 78381056, 0, NULL, 0, 2 },
		{ K_MALLOC, PTA, PTA, 1736405443873000000, 2080256, 1522532352, 1002810368,
			"aten::mul", 1, 3 },
		{ K_FREE, PTA, PTA, 1736405443875000123, 2560, 1522532352, 1000341504, NULL, 0, 4 },
		{ K_MALLOC, PTA, PTA, 1736405443877000000, 1536, 1522532352, NO, NULL, 0, 5 },
	};
	struct tread t;

	read_csv(&t, csv, 0, NULL);
	check_events(&t, w, sizeof(w) / sizeof(w[0]));
	/* attrs: active and stream when written, not when empty or N/A */
	ck_assert_str_eq(attr(&t, 0, "active"), "1000729600");
	ck_assert_str_eq(attr(&t, 0, "stream"), "1431569360");
	ck_assert_str_eq(attr(&t, 1, "active"), "981467136");
	ck_assert_ptr_null(attr(&t, 2, "active"));
	ck_assert_ptr_null(attr(&t, 2, "stream"));
	ck_assert_ptr_null(attr(&t, 6, "stream"));
	ck_assert_str_eq(attr(&t, 0, "allocation_id"), "1");
	ck_assert_str_eq(attr(&t, 0, "size"), "19268096");
	ck_assert_uint_eq(t.stats.n_events, 7);
	ck_assert_uint_eq(t.stats.n_skipped, 0);
	tread_free(&t);
}
END_TEST

/* Times with 0 to 5 decimals are exact ns, past the third rounded half up; blanks around them
 * (TAB, space, CR) are not part of the number. */
START_TEST(times_are_exact_ns)
{
	static const char csv[] =
		"Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Device Type\n"
		"PTA,1736405443871259,1,2,NPU:0\n"
		"PTA,1736405443871259.7,1,2,NPU:0\n"
		"PTA,1736405443871259.72\t,1,2,NPU:0\n"
		"PTA, 1736405443871259.720 \t,1,2,NPU:0\n"
		"PTA,1736405443871259.7204,1,2,NPU:0\n"
		"PTA,\"1736405443871259.7205\r\",1,2,NPU:0\n"
		"PTA,1736405443871259.99995,1,2,NPU:0\n"
		"PTA,0.0004,1,2,NPU:0\n"
		"PTA,.5,1,2,NPU:0\n"
		"PTA,18446744073709551.615,1,2,NPU:0\n";
	static const uint64_t ts[] = { 1736405443871259000, 1736405443871259700,
		1736405443871259720, 1736405443871259720, 1736405443871259720, 1736405443871259721,
		1736405443871260000, 0, 500, UINT64_MAX };
	struct tread t;
	size_t i;

	read_csv(&t, csv, 0, NULL);
	ck_assert_msg(t.rc == 0, "%s", t.err.msg);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 10);
	for (i = 0; i < 10; i++)
		ck_assert_msg(memscope_evbuf_get(t.evs, i)->ts_ns == ts[i], "row %zu: %llu", i + 2,
			(unsigned long long)memscope_evbuf_get(t.evs, i)->ts_ns);
	tread_free(&t);
}
END_TEST

/* Values that are not times: each an error naming line and column, exponent notation said so. */
START_TEST(bad_times_name_line_and_column)
{
	static const struct {
		const char *ts, *why;
	} bad[] = {
		{ "1.69512E+15", "exponent notation" },
		{ "1.69512e15", "exponent notation" },
		{ "-5.0", "out of range" },
		{ "18446744073709551.616", "out of range" },
		{ "12x", "not a number" },
		{ "+12", "not a number" },
		{ "1.2.3", "not a number" },
		{ ".", "not a number" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char csv[512];
		struct tread t;

		snprintf(csv, sizeof(csv),
			"Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Device "
			"Type\nPTA,1,1,2,NPU:0\nPTA,%s,1,2,NPU:0\n",
			bad[i].ts);
		read_csv(&t, csv, 0, NULL);
		ck_assert_msg(t.rc == MEMSCOPE_E_INVALID, "%s: rc %d", bad[i].ts, t.rc);
		ck_assert_uint_eq(t.err.line, 3);
		ck_assert_str_eq(t.err.file, "mem.csv");
		ck_assert_msg(
			strstr(t.err.msg, "\"Timestamp(us)\"") && strstr(t.err.msg, bad[i].why),
			"%s: %s", bad[i].ts, t.err.msg);
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), 1);
		tread_free(&t);
		/* lenient: skipped and counted */
		read_csv(&t, csv, 1, NULL);
		ck_assert_int_eq(t.rc, 0);
		ck_assert_uint_eq(t.stats.n_skipped, 1);
		ck_assert_uint_eq(t.stats.first_skip.line, 3);
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), 1);
		tread_free(&t);
	}
}
END_TEST

/* Sizes that are not whole bytes are rounded (half away from zero) and said so once. */
START_TEST(sizes_rounded_with_a_note)
{
	static const char csv[] = OPMEM_TORCH "\n"
					      "a,0.0005,1,2,,1,,,,,,,,,NPU:0\n"
					      "b,0.0004,3,,,,,,,,,,,,NPU:0\n"
					      "c,1.0001,4,,,,,,,,,,,,NPU:0\n"
					      "d,954.3701171875,5,,,,,,,,,,,,NPU:0\n"
					      ",-0.0005,,6,,,,,,,,,,,NPU:0\n";
	struct tread t;
	struct notes n;

	read_csv(&t, csv, 0, &n);
	ck_assert_msg(t.rc == 0, "%s", t.err.msg);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 6);
	ck_assert_int_eq(memscope_evbuf_get(t.evs, 0)->size, 1);    /* 0.512 B */
	ck_assert_int_eq(memscope_evbuf_get(t.evs, 1)->size, 1);    /* its FREE */
	ck_assert_int_eq(memscope_evbuf_get(t.evs, 2)->size, 0);    /* 0.4096 B */
	ck_assert_int_eq(memscope_evbuf_get(t.evs, 3)->size, 1024); /* 1024.1024 B */
	ck_assert_int_eq(memscope_evbuf_get(t.evs, 4)->size, 977275);
	ck_assert_int_eq(memscope_evbuf_get(t.evs, 5)->kind, K_FREE);
	ck_assert_int_eq(memscope_evbuf_get(t.evs, 5)->size, 1);
	ck_assert_uint_eq(n.n, 1);
	ck_assert_msg(strstr(n.text, "4 values rounded to whole bytes") &&
			      strstr(n.text, "first at mem.csv:2, Size(KB)"),
		"%s", n.text);
	tread_free(&t);
	/* exact binary fractions (torch_npu's) need no note */
	read_csv(&t, OPMEM_TORCH "\nd,954.3701171875,5,,,,,954.3701171875,1452.0,,,,,,NPU:0\n", 0,
		&n);
	ck_assert_int_eq(t.rc, 0);
	ck_assert_uint_eq(n.n, 0);
	tread_free(&t);
}
END_TEST

/* memory_record in its layouts: torch_npu (7 and 5 columns), msprof (KB, Device_id), MindSpore
 * (KB / 1000); the component's pool only when it is one pool. */
START_TEST(memory_record_layouts)
{
	static const char torch[] =
		"Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),"
		"Stream Ptr,Device Type\r\n"
		"APP,1736405443756384.100\t,,2109.6015625,,,NPU:0\r\n"
		"PTA,1736405443871259.720\t,954.3701171875,1452.0,954.3701171875,1431569360,NPU:"
		"0\r\n"
		"PTA+GE,1736405443871259.720\t,954.8701171875,1526.75,954.8701171875,,NPU:0\r\n"
		"GE,1736405443872000.100\t,0.5,74.75,,,NPU:0\r\n"
		"WORKSPACE,1736405443872500.000\t,2.0,4.0,2.0,7,NPU:0\r\n";
	static const struct want wt[] = {
		{ K_COUNTER, POOL, 0, 1736405443756384100, NO, 2212077568, NO, "APP", 0, 0 },
		{ K_COUNTER, POOL, PTA, 1736405443871259720, NO, 1522532352, 1000729600, "PTA", 0,
			0 },
		{ K_COUNTER, POOL, 0, 1736405443871259720, NO, 1600913408, 1001253888, "PTA+GE", 0,
			0 },
		{ K_COUNTER, POOL, GE, 1736405443872000100, NO, 78381056, 524288, "GE", 0, 0 },
		{ K_COUNTER, POOL, MEMSCOPE_SUB_PTA_WORKSPACE, 1736405443872500000, NO, 4194304,
			2097152, "WORKSPACE", 0, 0 },
	};
	static const char old[] = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),"
				  "Device Type\n"
				  "PTA,1695115378714622.8,4599.74072265625,8664.0,NPU:3\n";
	static const struct want wo[] = {
		{ K_COUNTER, POOL, PTA, 1695115378714622800, NO, 9084862464, 4823177728, "PTA", 3,
			0 },
	};
	static const char msprof[] = "Device_id,Component,Timestamp(us),Total Allocated(KB),Total "
				     "Reserved(KB),Device\n"
				     "0,GE,1780647428000000.000\t,64,2048,NPU:0\n"
				     "host,GE,1780647428000300.000\t,16,512,host\n";
	static const struct want wm[] = {
		{ K_COUNTER, POOL, GE, 1780647428000000000, NO, 2097152, 65536, "GE", 0, 0 },
		{ K_COUNTER, POOL, GE, 1780647428000300000, NO, 524288, 16384, "GE", HOST, 0 },
	};
	static const char ms[] = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),"
				 "Total Active(MB),Device Type\n"
				 "MindSpore,1700000000000100.000\t,1.024,2.5,1.024,NPU:0\n"
				 "MindSpore+GE,1700000000000200.000\t,1.524,3.5,,NPU:0\n";
	static const struct want wms[] = {
		{ K_COUNTER, POOL, MEMSCOPE_SUB_MINDSPORE, 1700000000000100000, NO, 2560000,
			1048576, "MindSpore", 0, 0 },
		{ K_COUNTER, POOL, 0, 1700000000000200000, NO, 3584000, 1560576, "MindSpore+GE", 0,
			0 },
	};
	struct tread t;

	read_csv(&t, torch, 0, NULL);
	check_events(&t, wt, 5);
	ck_assert_str_eq(attr(&t, 1, "active"), "1000729600");
	ck_assert_str_eq(attr(&t, 1, "stream"), "1431569360");
	ck_assert_ptr_null(attr(&t, 0, "active"));
	ck_assert_ptr_null(attr(&t, 2, "stream"));
	tread_free(&t);
	read_csv(&t, old, 0, NULL);
	check_events(&t, wo, 1);
	tread_free(&t);
	read_csv(&t, msprof, 0, NULL);
	check_events(&t, wm, 2);
	tread_free(&t);
	read_csv(&t, ms, 0, NULL);
	check_events(&t, wms, 2);
	ck_assert_str_eq(attr(&t, 0, "active"), "1048576");
	tread_free(&t);
}
END_TEST

/* npu_mem: three NPU_MEM samples per row, named like the timeline's counters; the raw event enum
 * (0 APP, 1 Device) too. */
START_TEST(npu_mem_app_and_device)
{
	static const char csv[] = "Device_id,event,ddr(KB),hbm(KB),memory(KB),timestamp(us)\n"
				  "0,APP,0,1264567,1264567,1780647428000000.000\t\n"
				  "1,Device,24576,67336,91912,1780647428000000.000\t\n"
				  "0,0,1,2,3,1780647428020000.000\t\n"
				  "0,1,N/A,2,,1780647428020000.000\t\n";
	static const struct want w[] = {
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428000000000, NO, NO, 0, "APP/DDR", 0,
			0 },
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428000000000, NO, NO, 1264567 * 1024LL,
			"APP/HBM", 0, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428000000000, NO, NO, 1264567 * 1024LL,
			"APP/Memory", 0, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428000000000, NO, NO, 24576 * 1024LL,
			"Device/DDR", 1, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428000000000, NO, NO, 67336 * 1024LL,
			"Device/HBM", 1, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428000000000, NO, NO, 91912 * 1024LL,
			"Device/Memory", 1, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428020000000, NO, NO, 1024, "APP/DDR",
			0, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428020000000, NO, NO, 2048, "APP/HBM",
			0, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428020000000, NO, NO, 3072,
			"APP/Memory", 0, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_NPU_MEM, 0, 1780647428020000000, NO, NO, 2048,
			"Device/HBM", 0, 0 },
	};
	struct tread t;

	read_csv(&t, csv, 0, NULL);
	check_events(&t, w, sizeof(w) / sizeof(w[0]));
	tread_free(&t);
}
END_TEST

/* npu_module_mem: MODULE samples; negative values and huge ones (a -1 through an unsigned
 * exporter) left out with a note saying how many. */
START_TEST(module_samples_leave_out_negative_and_huge)
{
	static const char mb[] = "Component,Timestamp(us),Total Reserved(MB),Device\r\n"
				 "SLOG,1736405443839379.660\t,0.0,NPU:0\r\n"
				 "HCCL,1736405443839379.660\t,-0.0009765625,NPU:0\r\n"
				 "RUNTIME,1736405443839379.660\t,8589934592.0,NPU:0\r\n"
				 "76,1736405443839379.660\t,1.5,NPU:0\r\n"
				 "APP,1736405443839379.660\t,8589934591.9990234375,NPU:0\r\n";
	static const struct want wmb[] = {
		{ K_COUNTER, MEMSCOPE_SUB_MODULE_SAMPLE, 0, 1736405443839379660, NO, 0, NO, "SLOG",
			0, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_MODULE_SAMPLE, 0, 1736405443839379660, NO, 1572864, NO,
			"76", 0, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_MODULE_SAMPLE, 0, 1736405443839379660, NO,
			((int64_t)1 << 53) - 1024, NO, "APP", 0, 0 },
	};
	static const char kb[] = "Device_id,Component,Timestamp(us),Total Reserved(KB),Device\n"
				 "0,APP,1780647428000000.000\t,1264567,NPU:0\n"
				 "0,HCCL,1780647428000000.000\t,-1,NPU:0\n"
				 "0,RUNTIME,1780647428000000.000\t,18446744073709551615,NPU:0\n"
				 "0,GE,1780647428020000.000\t,77824,NPU:0\n";
	static const struct want wkb[] = {
		{ K_COUNTER, MEMSCOPE_SUB_MODULE_SAMPLE, 0, 1780647428000000000, NO,
			1264567 * 1024LL, NO, "APP", 0, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_MODULE_SAMPLE, 0, 1780647428020000000, NO, 77824 * 1024LL,
			NO, "GE", 0, 0 },
	};
	struct tread t;
	struct notes n;

	read_csv(&t, mb, 0, &n);
	check_events(&t, wmb, 3);
	ck_assert_msg(strstr(n.text, "2 module samples left out"), "%s", n.text);
	tread_free(&t);
	/* msprof's C++ exporter writes the -1 as the unsigned 18446744073709551615 KB */
	read_csv(&t, kb, 0, &n);
	check_events(&t, wkb, 2);
	ck_assert_msg(strstr(n.text, "2 module samples left out"), "%s", n.text);
	tread_free(&t);
}
END_TEST

/* static_op_mem: PLAN blocks without time, TOTAL rows kept, node indices and graph as attrs. */
START_TEST(static_op_mem_plan)
{
	static const char csv[] =
		"Device_id,Op Name,Model Name,Graph ID,Node Index Start,Node Index End,Size(KB)\n"
		"host,trans_TransData_0,0,0,1,6,1250.03125\n"
		"host,sqrt_01,model_a,3,31,32,2343.78125\n"
		"host,TOTAL,0,0,1,4294967295,3125.0\n";
	static const struct want w[] = {
		{ MEMSCOPE_KIND_PLAN, GE, GE, 0, 1280032, NO, NO, "trans_TransData_0", HOST, 0 },
		{ MEMSCOPE_KIND_PLAN, GE, GE, 0, 2400032, NO, NO, "sqrt_01", HOST, 0 },
		{ MEMSCOPE_KIND_PLAN, GE, GE, 0, 3200000, NO, NO, "TOTAL", HOST, 0 },
	};
	struct tread t;

	read_csv(&t, csv, 0, NULL);
	check_events(&t, w, 3);
	ck_assert_str_eq(attr(&t, 1, "graph"), "3");
	ck_assert_str_eq(attr(&t, 1, "start"), "31");
	ck_assert_str_eq(attr(&t, 1, "end"), "32");
	ck_assert_str_eq(attr(&t, 1, "model"), "model_a");
	ck_assert_str_eq(attr(&t, 2, "end"), "4294967295");
	tread_free(&t);
}
END_TEST

/* msprof's own operator_memory (no Release Time): all GE; released at allocation + duration; a
 * duration of 0 with release totals 0 or missing is "not released". */
START_TEST(opmem_msprof_layout)
{
	static const char csv[] =
		OPMEM_MSPROF "\n"
			     "0,Graph_88,64,1780647428000000.000\t,115.97,64,2048,0,"
			     "2048,NPU:0\n"
			     "0,trans_TransData_0,1024,1780647428000200.000\t,0,1088,"
			     "2048,0,0,NPU:0\n"
			     "host,aten_like,16,1780647428000300.000\t,20.5,16,512,0,"
			     "512,host\n"
			     "0,zero_dur_freed,8,1780647428000400.000\t,0,8,512,0,512,"
			     "NPU:0\n";
	static const struct want w[] = {
		{ K_MALLOC, GE, GE, 1780647428000000000, 65536, 2097152, 65536, "Graph_88", 0, 1 },
		{ K_FREE, GE, GE, 1780647428000115970, 65536, 2097152, 0, NULL, 0, 1 },
		{ K_MALLOC, GE, GE, 1780647428000200000, 1048576, 2097152, 1114112,
			"trans_TransData_0", 0, 2 },
		{ K_MALLOC, GE, GE, 1780647428000300000, 16384, 524288, 16384, "aten_like", HOST,
			3 },
		{ K_FREE, GE, GE, 1780647428000320500, 16384, 524288, 0, NULL, HOST, 3 },
		{ K_MALLOC, GE, GE, 1780647428000400000, 8192, 524288, 8192, "zero_dur_freed", 0,
			4 },
		{ K_FREE, GE, GE, 1780647428000400000, 8192, 524288, 0, NULL, 0, 4 },
	};
	struct tread t;

	read_csv(&t, csv, 0, NULL);
	check_events(&t, w, sizeof(w) / sizeof(w[0]));
	tread_free(&t);
}
END_TEST

/* A duration of 0 with empty or N/A release totals is not a release either. */
START_TEST(opmem_msprof_zero_duration_missing_totals)
{
	static const char csv[] = OPMEM_MSPROF "\n"
					       "0,Graph_1,4,1000.000,0,4,8,,,NPU:0\n"
					       "0,Graph_2,4,2000.000,0,4,8,N/A,N/A,NPU:0\n";
	static const struct want w[] = {
		{ K_MALLOC, GE, GE, 1000000, 4096, 8192, 4096, "Graph_1", 0, 1 },
		{ K_MALLOC, GE, GE, 2000000, 4096, 8192, 4096, "Graph_2", 0, 2 },
	};
	struct tread t;

	read_csv(&t, csv, 0, NULL);
	check_events(&t, w, 2);
	tread_free(&t);
}
END_TEST

/* A release-only row (negative size, no allocation) is a FREE alone; one that still has an
 * allocation time is never a FREE at time 0. */
START_TEST(release_only_rows)
{
	static const char csv[] =
		OPMEM_TORCH "\n"
			    ",-2.5,,1736405443875000.123\t,,,,,,,954.0,1452.0,954.0,,"
			    "NPU:0\n"
			    "aten::x,4,,1736405443876000.000\t,,,,,,,954.0,1452.0,,,"
			    "NPU:0\n";
	static const struct want w[] = {
		{ K_FREE, PTA, PTA, 1736405443875000123, 2560, 1522532352, 1000341504, NULL, 0, 1 },
		{ K_FREE, PTA, PTA, 1736405443876000000, 4096, 1522532352, 1000341504, NULL, 0, 2 },
	};
	static const char odd[] = OPMEM_TORCH "\nx,-1,1000.5,,,,,,,,,,,,NPU:0\n";
	struct tread t;

	read_csv(&t, csv, 0, NULL);
	check_events(&t, w, 2);
	tread_free(&t);
	/* a negative size with only an allocation time: the time written, or a bad row */
	read_csv(&t, odd, 0, NULL);
	if (t.rc == 0) {
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), 1);
		ck_assert_uint_eq(memscope_evbuf_get(t.evs, 0)->kind, K_FREE);
		ck_assert_uint_eq(memscope_evbuf_get(t.evs, 0)->ts_ns, 1000500);
	} else {
		ck_assert_int_eq(t.rc, MEMSCOPE_E_INVALID);
		ck_assert_uint_eq(t.err.line, 2);
	}
	tread_free(&t);
}
END_TEST

/* Rows that are not blocks: an error naming the line (skipped and counted with lenient). */
START_TEST(opmem_bad_rows)
{
	static const struct {
		const char *row, *why;
	} bad[] = {
		{ "a,,1,2,,,,,,,,,,,NPU:0", "Size" },
		{ "a,4,,,,,,,,,,,,,NPU:0", "Allocation" },
		{ "a,4,5,4,,,,,,,,,,,NPU:0", "before" },
		{ "a,4,5,6,,,,,,,,,,9.4509E+13,NPU:0", "exponent" },
		{ "a,4,5,6,,,,,,,,,,,NPU:x", "device" },
		{ "a,1.5E+3,5,6,,,,,,,,,,,NPU:0", "exponent" },
		{ "a,4,5,6,,,,,,,,,,,NPU:0,x", "fields" },
		{ "a,4,5,6,,,,,,,,,,NPU:0", "fields" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char csv[1024];
		struct tread t;

		snprintf(csv, sizeof(csv), OPMEM_TORCH "\nok,1,1,2,,,,,,,,,,,NPU:0\n%s\n",
			bad[i].row);
		read_csv(&t, csv, 0, NULL);
		ck_assert_msg(t.rc == MEMSCOPE_E_INVALID, "%s: rc %d", bad[i].row, t.rc);
		ck_assert_uint_eq(t.err.line, 3);
		ck_assert_msg(strstr(t.err.msg, bad[i].why), "%s: %s", bad[i].row, t.err.msg);
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), 2);
		tread_free(&t);
		read_csv(&t, csv, 1, NULL);
		ck_assert_int_eq(t.rc, 0);
		ck_assert_uint_eq(t.stats.n_skipped, 1);
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), 2);
		tread_free(&t);
	}
}
END_TEST

/* Field counts: an extra empty last field is msprof's trailing comma; any other count is an
 * error naming the line; quoted fields may hold commas, quotes and line breaks. */
START_TEST(field_counts_and_quotes)
{
	static const char csv[] = "Component,Timestamp(us),Total Reserved(MB),Device\n"
				  "\"A,\"\"B\"\"\nC\",1,1,NPU:0\n"
				  "D,2,1,NPU:0,\n"
				  "E,3,1\n"
				  "F,4,1,NPU:0,,\n"
				  "G,5,1,NPU:0\n";
	struct tread t;

	read_csv(&t, csv, 0, NULL);
	ck_assert_int_eq(t.rc, MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(t.err.line, 5);
	ck_assert_msg(strstr(t.err.msg, "3 fields, the header has 4"), "%s", t.err.msg);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 2);
	ck_assert_str_eq(tstr(&t, memscope_evbuf_get(t.evs, 0)->name), "A,\"B\"\nC");
	ck_assert_uint_eq(memscope_evbuf_get(t.evs, 0)->line, 2);
	ck_assert_uint_eq(memscope_evbuf_get(t.evs, 1)->line, 4);
	tread_free(&t);
	read_csv(&t, csv, 1, NULL);
	ck_assert_int_eq(t.rc, 0);
	ck_assert_uint_eq(t.stats.n_skipped, 2);
	ck_assert_uint_eq(t.stats.first_skip.line, 5);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 3);
	ck_assert_str_eq(tstr(&t, memscope_evbuf_get(t.evs, 2)->name), "G");
	ck_assert_uint_eq(memscope_evbuf_get(t.evs, 2)->line, 7);
	tread_free(&t);
}
END_TEST

/* Recognised by the header: a byte order mark, CRLF, columns in any order, unknown columns
 * counted; a header that names no table is not ours. */
START_TEST(header_recognition)
{
	static const char csv[] = "\xef\xbb\xbfTotal Reserved(KB),Extra,Device,Timestamp(us),"
				  "Component\r\n"
				  "8,x,NPU:2,1.5,HCCL\r\n";
	static const struct want w[] = {
		{ K_COUNTER, MEMSCOPE_SUB_MODULE_SAMPLE, 0, 1500, NO, 8192, NO, "HCCL", 2, 0 },
	};
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_error err;
	struct tread t;

	read_csv(&t, csv, 0, NULL);
	check_events(&t, w, 1);
	ck_assert_uint_eq(t.stats.n_ignored_columns, 1);
	tread_free(&t);
	ck_assert_int_eq(memscope_source_open_mem(&src, csv, strlen(csv), "m", st, NULL, &err), 0);
	ck_assert_int_eq(memscope_source_format(src), MEMSCOPE_FORMAT_MSPROF_CSV);
	memscope_source_close(src);
	/* only a header: no events, no error */
	read_csv(&t, OPMEM_TORCH "\n", 0, NULL);
	ck_assert_int_eq(t.rc, 0);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 0);
	tread_free(&t);
	/* op_summary is not a memory file */
	read_csv(&t, "Step Id,Model ID,Op Name,Task Start Time(us)\n1,2,a,3\n", 0, NULL);
	ck_assert_int_eq(t.rc, MEMSCOPE_E_INVALID);
	tread_free(&t);
	memscope_strtab_free(st);
}
END_TEST

/* A torch_npu folder: CRLF and LF files read as one output, blocks numbered across files, one
 * pid; its ASCEND_PROFILER_OUTPUT and one of its files read alone give the same events. */
START_TEST(folder_torch_npu)
{
	char *dir = mk_tree(), path[4200];
	struct tread t, u;
	size_t i;
	static const struct want w[] = {
		{ K_MALLOC, PTA, PTA, 1000000, 1024, NO, NO, "aten::a", 0, 1 },
		{ K_FREE, PTA, PTA, 2000000, 1024, NO, NO, NULL, 0, 1 },
		{ K_MALLOC, GE, GE, 1500000, 2048, NO, NO, "cann::b", 0, 2 },
		{ K_COUNTER, POOL, PTA, 1000000, NO, 2097152, 1048576, "PTA", 0, 0 },
		{ K_COUNTER, MEMSCOPE_SUB_MODULE_SAMPLE, 0, 3000000, NO, 1048576, NO, "APP", 0, 0 },
	};

	put(dir, "r_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
		OPMEM_TORCH "\r\naten::a,1,1000,2000,,,,,,,,,,,NPU:0\r\n"
			    "cann::b,2,1500,,,,,,,,,,,,NPU:0\r\n");
	put(dir, "r_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv",
		"Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),"
		"Stream Ptr,Device Type\nPTA,1000,1,2,,,NPU:0\n");
	put(dir, "r_ascend_pt/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv",
		"Component,Timestamp(us),Total Reserved(MB),Device\r\nAPP,3000,1,NPU:0\r\n");
	put(dir, "r_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
		"Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait "
		"Time(us),Block "
		"Dim\n1,a,b,c,1,2,3,4\n");
	put(dir, "r_ascend_pt/profiler_info_0.json", "{}");
	snprintf(path, sizeof(path), "%s/r_ascend_pt", dir);
	read_path(&t, path, 0, NULL);
	check_events(&t, w, 5);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(memscope_evbuf_get(t.evs, i)->pid, MEMSCOPE_ID_NONE);
	snprintf(path, sizeof(path), "%s/r_ascend_pt/ASCEND_PROFILER_OUTPUT", dir);
	read_path(&u, path, 0, NULL);
	check_events(&u, w, 5);
	tread_free(&u);
	snprintf(path, sizeof(path), "%s/r_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
		dir);
	read_path(&u, path, 0, NULL);
	check_events(&u, w, 3);
	tread_free(&u);
	tread_free(&t);
	rm_tree(dir);
}
END_TEST

/* An msprof output: PROF_*'s mindstudio_profiler_output, slices merged in number order (slice_10
 * after slice_9), the newest of several exports read with a note saying which. */
START_TEST(folder_msprof_slices_and_exports)
{
	char *dir = mk_tree(), path[4200], name[256], row[256];
	struct tread t;
	struct notes n;
	int k;

	for (k = 0; k <= 10; k++) {
		snprintf(name, sizeof(name),
			"PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
			"operator_memory_slice_%d_20260605162010.csv",
			k);
		snprintf(row, sizeof(row), OPMEM_MSPROF "\n0,s%d,1,%d.000,0,0,0,0,0,NPU:0\n", k,
			100 + k);
		put(dir, name, row);
	}
	put(dir,
		"PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
		"operator_memory_20260605161900.csv",
		OPMEM_MSPROF "\n0,old,1,1.000,0,0,0,0,0,NPU:0\n");
	put(dir,
		"PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
		"operator_memory_slice_0_20260605161900.csv",
		OPMEM_MSPROF "\n0,old0,1,1.000,0,0,0,0,0,NPU:0\n");
	put(dir,
		"PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/mindstudio_profiler_output/"
		"static_op_mem_20260605162010.csv",
		"Device_id,Op Name,Model Name,Graph ID,Node Index Start,Node Index End,Size(KB)\n"
		"host,TOTAL,0,0,1,4294967295,1\n");
	put(dir, "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/host/data/x.slice_0", "raw");
	snprintf(path, sizeof(path), "%s/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA", dir);
	read_path(&t, path, 0, &n);
	ck_assert_msg(t.rc == 0, "%s", t.err.msg);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 12);
	for (k = 0; k <= 10; k++) {
		const struct memscope_event *ev = memscope_evbuf_get(t.evs, (size_t)k);

		snprintf(name, sizeof(name), "s%d", k);
		ck_assert_str_eq(tstr(&t, ev->name), name);
		ck_assert_uint_eq(ev->alloc_id, (uint64_t)k + 1);
		ck_assert_uint_eq(ev->ts_ns, (uint64_t)(100 + k) * 1000);
	}
	ck_assert_uint_eq(memscope_evbuf_get(t.evs, 11)->kind, MEMSCOPE_KIND_PLAN);
	ck_assert_uint_eq(n.n, 1);
	ck_assert_msg(strstr(n.text, "2 operator_memory files of other exports left out") &&
			      strstr(n.text, "operator_memory_slice_0_20260605162010.csv"),
		"%s", n.text);
	tread_free(&t);
	rm_tree(dir);
}
END_TEST

/* A MindSpore output (*_ascend_ms): blocks in the MINDSPORE pool, memory_record's MB = 1000 KB. */
START_TEST(folder_mindspore)
{
	char *dir = mk_tree(), path[4200];
	struct tread t;
	static const struct want w[] = {
		{ K_MALLOC, MEMSCOPE_SUB_MINDSPORE, MEMSCOPE_SUB_MINDSPORE, 100500, 1024000,
			2621440, 1048576, "Default/Conv2D-op1", 0, 1 },
		{ K_FREE, MEMSCOPE_SUB_MINDSPORE, MEMSCOPE_SUB_MINDSPORE, 300250, 1024000, 2621440,
			0, NULL, 0, 1 },
		{ K_MALLOC, MEMSCOPE_SUB_MINDSPORE, MEMSCOPE_SUB_MINDSPORE, 400000, 24576, NO, NO,
			NULL, 0, 2 },
		{ K_COUNTER, POOL, MEMSCOPE_SUB_MINDSPORE, 100000, NO, 2560000, 1048576,
			"MindSpore", 0, 0 },
		{ K_COUNTER, POOL, GE, 200000, NO, 1024000, 512000, "GE", 0, 0 },
	};

	put(dir, "rank0_ascend_ms/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
		OPMEM_TORCH "\r\nDefault/Conv2D-op1,1000.0,100.5,300.25,N/A,199.75,N/A,1.0,2.5,N/"
			    "A,0.0,2.5,N/A,N/A,NPU:0\r\n"
			    "N/A,24.0,400.0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,NPU:0\r\n");
	put(dir, "rank0_ascend_ms/ASCEND_PROFILER_OUTPUT/memory_record.csv",
		"Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),"
		"Device Type\r\nMindSpore,100,1.024,2.5,,NPU:0\r\nGE,200,0.5,1.0,,NPU:0\r\n");
	snprintf(path, sizeof(path), "%s/rank0_ascend_ms", dir);
	read_path(&t, path, 0, NULL);
	check_events(&t, w, 5);
	tread_free(&t);
	rm_tree(dir);
}
END_TEST

/* Folders that are not one output: a clear error. */
START_TEST(folder_errors)
{
	char *dir = mk_tree(), path[4200];
	struct tread t;

	put(dir, "k/op_summary_1.csv", "Step Id,Op Name\n1,a\n");
	snprintf(path, sizeof(path), "%s/k", dir);
	read_path(&t, path, 0, NULL);
	ck_assert_int_eq(t.rc, MEMSCOPE_E_INVALID);
	ck_assert_msg(strstr(t.err.msg, "no profiler memory files"), "%s", t.err.msg);
	tread_free(&t);
	put(dir, "two/a_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv", "x\n");
	put(dir, "two/b_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv", "x\n");
	snprintf(path, sizeof(path), "%s/two", dir);
	read_path(&t, path, 0, NULL);
	ck_assert_int_eq(t.rc, MEMSCOPE_E_INVALID);
	ck_assert_msg(strstr(t.err.msg, "holds 2 profiler outputs"), "%s", t.err.msg);
	tread_free(&t);
	/* a file named like a memory file that is something else */
	put(dir, "bad/operator_memory.csv", "Step Id,Op Name\n1,a\n");
	snprintf(path, sizeof(path), "%s/bad", dir);
	read_path(&t, path, 0, NULL);
	ck_assert_int_eq(t.rc, MEMSCOPE_E_INVALID);
	ck_assert_msg(strstr(t.err.file, "operator_memory.csv"), "%s: %s", t.err.file, t.err.msg);
	tread_free(&t);
	rm_tree(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("msprof_csv");
	TCase *tc = tcase_create("read");

	tcase_add_test(tc, opmem_torch_layout);
	tcase_add_test(tc, times_are_exact_ns);
	tcase_add_test(tc, bad_times_name_line_and_column);
	tcase_add_test(tc, sizes_rounded_with_a_note);
	tcase_add_test(tc, memory_record_layouts);
	tcase_add_test(tc, npu_mem_app_and_device);
	tcase_add_test(tc, module_samples_leave_out_negative_and_huge);
	tcase_add_test(tc, static_op_mem_plan);
	tcase_add_test(tc, opmem_msprof_layout);
	tcase_add_test(tc, opmem_msprof_zero_duration_missing_totals);
	tcase_add_test(tc, release_only_rows);
	tcase_add_test(tc, opmem_bad_rows);
	tcase_add_test(tc, field_counts_and_quotes);
	tcase_add_test(tc, header_recognition);
	tcase_add_test(tc, folder_torch_npu);
	tcase_add_test(tc, folder_msprof_slices_and_exports);
	tcase_add_test(tc, folder_mindspore);
	tcase_add_test(tc, folder_errors);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
