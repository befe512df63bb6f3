/* Unit tests of the Ascend profiler timeline reader (msprof_json.c): sniffing, exact times, the
 * order of op STARTs and ENDs, the NPU MEM counters, JSON escapes and numbers, cut and malformed
 * files, reads in any chunks, and the torch_npu sample. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers/input.h"
#include "readers/msprof.h"
#include "testutil.h"

static int read_json(struct tread *t, const char *json, int lenient)
{
	struct memscope_read_opts o = { 0 };

	o.lenient = lenient;
	return tread_mem(t, json, strlen(json), &o);
}

static const struct memscope_event *ev_at(const struct tread *t, size_t i)
{
	ck_assert_uint_lt(i, memscope_evbuf_count(t->evs));
	return memscope_evbuf_get(t->evs, i);
}

/* The events as "S name ts" (op START), "E name ts" (op END), "C name used ts" (counter), one
 * per line, in delivery order (malloc'd). */
static char *summary(const struct tread *t)
{
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);

	ck_assert_ptr_nonnull(f);
	for (i = 0; i < memscope_evbuf_count(t->evs); i++) {
		const struct memscope_event *ev = ev_at(t, i);

		if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH)
			fprintf(f, "%c %s %llu\n",
				ev->subtype == MEMSCOPE_SUB_ATEN_START ? 'S' : 'E',
				tstr(t, ev->name), (unsigned long long)ev->ts_ns);
		else if (ev->kind == MEMSCOPE_KIND_COUNTER)
			fprintf(f, "C %s %lld %llu\n", tstr(t, ev->name), (long long)ev->used,
				(unsigned long long)ev->ts_ns);
		else
			fprintf(f, "? kind %u\n", ev->kind);
	}
	ck_assert_int_eq(fclose(f), 0);
	return out;
}

static void expect_summary(const char *json, const char *want)
{
	struct tread t;
	char *got;

	ck_assert_int_eq(read_json(&t, json, 0), 0);
	got = summary(&t);
	ck_assert_str_eq(got, want);
	free(got);
	tread_free(&t);
}

static enum memscope_format format_of(const char *text)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_error err;
	enum memscope_format f = MEMSCOPE_FORMAT_UNKNOWN;

	if (memscope_source_open_mem(&src, text, strlen(text), "x.json", st, NULL, &err) == 0)
		f = memscope_source_format(src);
	memscope_source_close(src);
	memscope_strtab_free(st);
	return f;
}

static int sniff(const char *s, int eof)
{
	return ms__prof_trace_sniff((const unsigned char *)s, strlen(s), eof);
}

START_TEST(sniffs_timelines_only)
{
	ck_assert_int_eq(
		format_of("[{\"ph\": \"X\", \"name\": \"a\"}]"), MEMSCOPE_FORMAT_MSPROF_JSON);
	ck_assert_int_eq(format_of("\n  [ \r\n {\"name\": \"a\", \"args\": {}, \"ph\": \"M\"}"),
		MEMSCOPE_FORMAT_MSPROF_JSON);
	/* our own Chrome trace export, other JSON */
	ck_assert_int_ne(format_of("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[{\"ph\":\"C\"}]}"),
		MEMSCOPE_FORMAT_MSPROF_JSON);
	ck_assert_int_ne(format_of("[1, 2, 3]"), MEMSCOPE_FORMAT_MSPROF_JSON);
	ck_assert_int_ne(
		format_of("[{\"name\": \"a\", \"cat\": \"ph\"}]"), MEMSCOPE_FORMAT_MSPROF_JSON);
	ck_assert_int_ne(format_of("[]"), MEMSCOPE_FORMAT_MSPROF_JSON);
	/* "ph" must be a key of the first element, not deeper */
	ck_assert_int_eq(sniff("[{\"args\": {\"ph\": \"X\"}, \"name\": \"a\"}]", 1), 0);
	ck_assert_int_eq(sniff("[{\"ph\": \"X\"}]", 1), 1);
	/* a peek that ends inside the first element: "ph" in what is there */
	ck_assert_int_eq(sniff("[{\"args\": {\"Call stack\": \"a.py(1): f;\\r\\n", 0), 0);
	ck_assert_int_eq(sniff("[{\"args\": {\"x\": 1}, \"ph\": \"X\", \"name\": \"aaa", 0), 1);
	ck_assert_int_eq(sniff("[{\"name\": \"x\", \"ts\": \"1\", \"args\": {\"ph\"", 0), 1);
}
END_TEST

START_TEST(ts_as_string_or_number_is_exact)
{
	static const char *const docs[] = {
		"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":2,"
		"\"ts\":\"1736405443756384.100\",\"dur\":0.9}]",
		"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":2,"
		"\"ts\":1736405443756384.1,\"dur\":0.900}]",
		"[{\"dur\":\"0.9\",\"ts\":\"\\t1736405443756384.1\\t\",\"tid\":\"2\",\"pid\":\"1\","
		"\"name\":\"a\",\"cat\":\"cpu_op\",\"ph\":\"X\"}]",
	};
	size_t i;

	for (i = 0; i < 3; i++) {
		struct tread t;

		ck_assert_int_eq(read_json(&t, docs[i], 0), 0);
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), 2);
		ck_assert_uint_eq(ev_at(&t, 0)->ts_ns, 1736405443756384100ull);
		ck_assert_uint_eq(ev_at(&t, 1)->ts_ns, 1736405443756385000ull);
		ck_assert_uint_eq(ev_at(&t, 0)->pid, 1);
		ck_assert_uint_eq(ev_at(&t, 0)->tid, 2);
		ck_assert_int_eq(ev_at(&t, 0)->device, MEMSCOPE_DEVICE_NONE);
		ck_assert_uint_eq(ev_at(&t, 0)->id, 1);
		ck_assert_uint_eq(ev_at(&t, 1)->id, 2);
		tread_free(&t);
	}
	/* a time in exponent notation lost its digits */
	{
		struct tread t;

		ck_assert_int_eq(read_json(&t,
					 "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\","
					 "\"ts\":1.7364054437563841e15,\"dur\":1}]",
					 0),
			MEMSCOPE_E_INVALID);
		ck_assert_uint_eq(t.err.line, 1);
		ck_assert_ptr_nonnull(strstr(t.err.msg, "exponent"));
		tread_free(&t);
	}
}
END_TEST

START_TEST(ops_in_time_order_nested_and_adjacent)
{
	/* A [1000,1010] holds B [1000,1005] then C [1005,1010]; Z at 1010 has no duration; D on
	 * another thread [1003,1004]; slices listed out of order; a counter at 1005 */
	expect_summary(
		"[\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"C\",\"ts\":\"1.005\",\"dur\":0.005,"
		"\"pid\":9,\"tid\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"Z\",\"ts\":\"1.010\",\"dur\":0,"
		"\"pid\":9,\"tid\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"B\",\"ts\":\"1.000\",\"dur\":0.005,"
		"\"pid\":9,\"tid\":1},\n"
		"{\"ph\":\"C\",\"name\":\"APP/"
		"HBM\",\"ts\":\"1.005\",\"pid\":32,\"args\":{\"KB\":1}},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"A\",\"ts\":\"1.000\",\"dur\":0.010,"
		"\"pid\":9,\"tid\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"py\",\"ts\":\"1.000\","
		"\"dur\":1,\"pid\":9,\"tid\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"D\",\"ts\":\"1.003\",\"dur\":0.001,"
		"\"pid\":9,\"tid\":2}\n"
		"]\n",
		"S A 1000\n"
		"S B 1000\n"
		"S D 1003\n"
		"E D 1004\n"
		"E B 1005\n"
		"C APP/HBM 1024 1005\n"
		"S C 1005\n"
		"E C 1010\n"
		"E A 1010\n"
		"S Z 1010\n"
		"E Z 1010\n");
	/* identical slices: the first listed opens first and closes last */
	expect_summary(
		"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"outer\",\"ts\":\"5\",\"dur\":1},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"inner\",\"ts\":\"5\",\"dur\":1}]",
		"S outer 5000\n"
		"S inner 5000\n"
		"E inner 6000\n"
		"E outer 6000\n");
}
END_TEST

START_TEST(op_fields_and_call_stack)
{
	struct tread t;
	const struct memscope_event *ev;
	const uint32_t *frames;
	size_t n;

	ck_assert_int_eq(
		read_json(&t,
			"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::empty\",\"pid\":"
			"3016828,\"tid\":3026591,\"ts\":\"10.5\",\"dur\":2,\"args\":{"
			"\"Sequence number\":-1,\"Input Dims\":[[1,2],[]],\"Call stack\":"
			"\"/t/_utils.py(180): _rebuild_tensor;\\r\\nmain.py(345): train;\\n"
			"<string>(1): <module>\"}}]",
			0),
		0);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 2);
	ev = ev_at(&t, 0);
	ck_assert_uint_eq(ev->subtype, MEMSCOPE_SUB_ATEN_START);
	ck_assert_str_eq(tstr(&t, ev->name), "aten::empty");
	ck_assert_uint_eq(ev->pid, 3016828);
	ck_assert_uint_eq(ev->tid, 3026591);
	ck_assert_uint_eq(ev->line, 1);
	frames = memscope_strtab_stack(t.st, ev->stack_py, &n);
	ck_assert_ptr_nonnull(frames);
	ck_assert_uint_eq(n, 3);
	/* innermost first, as torch lists them */
	ck_assert_str_eq(tstr(&t, frames[0]), "/t/_utils.py(180): _rebuild_tensor");
	ck_assert_str_eq(tstr(&t, frames[1]), "main.py(345): train");
	ck_assert_str_eq(tstr(&t, frames[2]), "<string>(1): <module>");
	ev = ev_at(&t, 1);
	ck_assert_uint_eq(ev->subtype, MEMSCOPE_SUB_ATEN_END);
	ck_assert_uint_eq(ev->ts_ns, 12500);
	ck_assert_uint_eq(ev->stack_py, 0);
	ck_assert_uint_eq(ev->tid, 3026591);
	tread_free(&t);
}
END_TEST

static void count_notice(void *ctx, uint32_t src, const char *msg)
{
	(void)src;
	if (strstr(msg, "NPU MEM"))
		++*(int *)ctx;
}

START_TEST(counters_only_under_npu_mem)
{
	/* 3089232480 = (3016828 << 10) | (19 << 5) | 0: device 0; 63 = host (31) */
	static const char json[] =
		"[{\"name\":\"process_name\",\"pid\":3089232480,\"tid\":0,\"args\":{\"name\":\"NPU "
		"MEM\"},\"ph\":\"M\"},\n"
		"{\"name\":\"process_name\",\"pid\":3089232416,\"tid\":0,\"args\":{\"name\":"
		"\"HBM\"},"
		"\"ph\":\"M\"},\n"
		"{\"name\":\"process_name\",\"pid\":63,\"tid\":0,\"args\":{\"name\":\"NPU MEM\"},"
		"\"ph\":\"M\"},\n"
		"{\"name\":\"APP/"
		"HBM\",\"ts\":\"1.000\",\"pid\":3089232480,\"tid\":0,\"args\":{\"KB\":"
		"2160232.0},\"ph\":\"C\"},\n"
		"{\"name\":\"APP/"
		"HBM\",\"ts\":\"2.000\",\"pid\":3089232416,\"tid\":0,\"args\":{\"KB\":"
		"5},\"ph\":\"C\"},\n"
		"{\"name\":\"Device/DDR\",\"ts\":\"3.000\",\"pid\":63,\"tid\":0,\"args\":{\"KB\":"
		"\"0.5\"},\"ph\":\"C\"},\n"
		"{\"name\":\"Device/Memory\",\"ts\":\"4.000\",\"pid\":1025,\"args\":{\"KB\":1}, "
		"\"ph\":\"C\"},\n"
		"{\"name\":\"HBM "
		"0/Read\",\"ts\":\"5.000\",\"pid\":3089232480,\"args\":{\"Read(MB/s)\":"
		"1},\"ph\":\"C\"},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":5,\"tid\":5,"
		"\"ts\":"
		"\"0.5\",\"dur\":0},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#7\",\"pid\":7,\"tid\":7,"
		"\"ts\":\"0.1\",\"dur\":10}]";
	struct memscope_read_opts o = { 0 };
	struct tread t;
	const struct memscope_event *ev;
	int notices = 0;
	char *got;

	o.notice = count_notice;
	o.notice_ctx = &notices;
	ck_assert_int_eq(tread_mem(&t, json, sizeof(json) - 1, &o), 0);
	got = summary(&t);
	ck_assert_str_eq(got, "S ProfilerStep#7 100\n"
			      "S aten::add 500\n"
			      "E aten::add 500\n"
			      "C APP/HBM 2212077568 1000\n"
			      "C Device/DDR 512 3000\n"
			      "C Device/Memory 1024 4000\n"
			      "E ProfilerStep#7 10100\n");
	free(got);
	ck_assert_int_eq(notices, 1);
	ev = ev_at(&t, 3);
	ck_assert_uint_eq(ev->subtype, MEMSCOPE_SUB_NPU_MEM);
	ck_assert_int_eq(ev->device, 0);
	ck_assert(ev->flags & MEMSCOPE_EV_USED);
	/* the output's process: the ProfilerStep slices', though an op came first */
	ck_assert_uint_eq(ev->pid, 7);
	ck_assert_uint_eq(ev->tid, MEMSCOPE_ID_NONE);
	ck_assert_uint_eq(ev->n_attrs, 1);
	ck_assert_uint_eq(ev->attrs[0].key, MEMSCOPE_STR_USED);
	ck_assert_uint_eq(ev->attrs[0].val_len, 10);
	ck_assert(memcmp(ev->attrs[0].val, "2212077568", 10) == 0);
	ck_assert_uint_eq(ev->line, 4);
	ck_assert_int_eq(ev_at(&t, 4)->device, MEMSCOPE_DEVICE_HOST);
	ck_assert_int_eq(ev_at(&t, 5)->device, 1); /* no process name: kept */
	tread_free(&t);
	/* without a ProfilerStep slice: the first cpu_op's process */
	ck_assert_int_eq(
		read_json(&t,
			"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":5,\"ts\":\"2\","
			"\"dur\":1},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":6,"
			"\"ts\":\"1\",\"dur\":1},{\"ph\":\"C\",\"name\":\"APP/DDR\",\"ts\":"
			"\"1\",\"pid\":0,\"args\":{\"KB\":0}}]",
			0),
		0);
	ck_assert_uint_eq(ev_at(&t, 0)->kind, MEMSCOPE_KIND_COUNTER);
	ck_assert_uint_eq(ev_at(&t, 0)->pid, 5);
	tread_free(&t);
}
END_TEST

START_TEST(escapes_and_numbers)
{
	struct tread t;

	/* every escape, a surrogate pair, an escaped key; whitespace everywhere */
	ck_assert_int_eq(
		read_json(&t,
			" [ { \"ph\" : \"X\" , \"c\\u0061t\" : \"cpu_op\" , \"name\" : "
			"\"a\\\"b\\\\c\\/d\\u00e9\\ud83d\\ude00\\b\\f\\n\\r\\t\\u20ac\" , "
			"\"ts\" : \"1\" , \"dur\" : 1 , \"extra\" : [ true , false , null , "
			"{ \"k\" : -0.5E-3 } ] } ] ",
			0),
		0);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 2);
	ck_assert_str_eq(tstr(&t, ev_at(&t, 0)->name),
		"a\"b\\c/d\xc3\xa9\xf0\x9f\x98\x80\b\f\n\r\t\xe2\x82\xac");
	ck_assert_uint_eq(ev_at(&t, 1)->ts_ns, 2000);
	tread_free(&t);
	/* a lone surrogate becomes U+FFFD */
	ck_assert_int_eq(
		read_json(&t,
			"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"\\udc00x\",\"ts\":\"1\","
			"\"dur\":1}]",
			0),
		0);
	ck_assert_str_eq(tstr(&t, ev_at(&t, 0)->name), "\xef\xbf\xbdx");
	tread_free(&t);
	/* counter values: exponents, a string, decimals below a byte */
	expect_summary("[{\"ph\":\"C\",\"name\":\"APP/HBM\",\"ts\":\"1\",\"args\":{\"KB\":2.5e3}},"
		       "{\"ph\":\"C\",\"name\":\"APP/HBM\",\"ts\":\"2\",\"args\":{\"KB\":1E+15}},"
		       "{\"ph\":\"C\",\"name\":\"APP/HBM\",\"ts\":\"3\",\"args\":{\"KB\":25e-3}},"
		       "{\"ph\":\"C\",\"name\":\"APP/HBM\",\"ts\":\"4\",\"args\":{\"KB\":\"7\"}},"
		       "{\"ph\":\"C\",\"name\":\"APP/HBM\",\"ts\":\"5\",\"args\":{\"KB\":1e-40}},"
		       "{\"ph\":\"C\",\"name\":\"APP/HBM\",\"ts\":\"6\",\"args\":{\"KB\":"
		       "0.00048828125}}]",
		"C APP/HBM 2560000 1000\n"
		"C APP/HBM 1024000000000000000 2000\n"
		"C APP/HBM 26 3000\n"
		"C APP/HBM 7168 4000\n"
		"C APP/HBM 0 5000\n"
		"C APP/HBM 1 6000\n");
}
END_TEST

/* 1e17 KB is more bytes than int64 holds: the value must be refused, not wrapped. */
START_TEST(counter_out_of_range)
{
	struct tread t;

	ck_assert_int_eq(
		read_json(&t,
			"[{\"ph\":\"C\",\"name\":\"APP/HBM\",\"ts\":\"1\",\"args\":{\"KB\":"
			"1e17}}]",
			0),
		MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(t.err.msg, "out of range"));
	tread_free(&t);
	ck_assert_int_eq(
		read_json(&t,
			"[{\"ph\":\"C\",\"name\":\"APP/HBM\",\"ts\":\"1\",\"args\":{\"KB\":"
			"1e17}},\n{\"ph\":\"C\",\"name\":\"APP/DDR\",\"ts\":\"1\",\"args\":{}}"
			",\n{\"ph\":\"C\",\"name\":\"APP/DDR\",\"ts\":\"1\",\"args\":{\"KB\":3}}"
			"]",
			1),
		0);
	ck_assert_uint_eq(t.stats.n_skipped, 2);
	ck_assert_uint_eq(t.stats.first_skip.line, 1);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 1);
	ck_assert_int_eq(ev_at(&t, 0)->used, 3072);
	tread_free(&t);
}
END_TEST

START_TEST(missing_closing_bracket)
{
	static const char *const docs[] = {
		"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":\"1\",\"dur\":1}",
		"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":\"1\",\"dur\":1},\n",
		"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":\"1\",\"dur\":1}\n  ",
	};
	size_t i;

	for (i = 0; i < 3; i++) {
		struct tread t;

		ck_assert_int_eq(read_json(&t, docs[i], 0), 0);
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), 2);
		ck_assert_int_eq(t.stats.cut.code, 0);
		tread_free(&t);
	}
}
END_TEST

START_TEST(cut_inside_an_element)
{
	static const char json[] =
		"[\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":\"1\",\"dur\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"ts\":\"3\",\"dur\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\n\"name\":\"c\",\"ts\":\"5\",\"d";
	struct tread t;

	ck_assert_int_eq(read_json(&t, json, 0), MEMSCOPE_E_TRUNCATED);
	ck_assert_int_eq(t.err.code, MEMSCOPE_E_TRUNCATED);
	ck_assert_uint_eq(t.err.line, 4);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 0);
	tread_free(&t);
	ck_assert_int_eq(read_json(&t, json, 1), 0);
	ck_assert_int_eq(t.stats.cut.code, MEMSCOPE_E_TRUNCATED);
	ck_assert_uint_eq(t.stats.cut.line, 4);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 4);
	ck_assert_str_eq(tstr(&t, ev_at(&t, 2)->name), "b");
	tread_free(&t);
	/* every cut of a small timeline: whole elements kept, never an error but the cut */
	{
		size_t n = sizeof(json) - 1, k;

		/* from the first "ph", the sniffer's sign */
		for (k = (size_t)(strstr(json, "\"ph\"") - json) + 4; k < n; k++) {
			char *part = strndup(json, k);
			int rc = read_json(&t, part, 1);

			ck_assert_int_eq(rc, 0);
			ck_assert_uint_le(memscope_evbuf_count(t.evs), 4);
			tread_free(&t);
			free(part);
		}
	}
}
END_TEST

static void expect_invalid(const char *json, uint64_t line, const char *what)
{
	struct tread t;

	ck_assert_int_eq(read_json(&t, json, 1), MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(t.err.line, line);
	ck_assert_msg(strstr(t.err.msg, what), "message \"%s\" lacks \"%s\"", t.err.msg, what);
	tread_free(&t);
}

START_TEST(malformed_json_names_its_line)
{
	expect_invalid("[\n{\"ph\":\"X\"},\n{\"ph\" \"X\"}\n]", 3, "':' expected");
	expect_invalid("[\r\n{\"ph\":\"X\"},\r\n\r\n{\"ph\":\"X\"} x]", 4, "',' or ']'");
	/* a lone CR ends a line too */
	expect_invalid("[\r{\"ph\":\"X\"},\r{\"ph\":\"X\",}]", 3, "a key");
	expect_invalid("[{\"ph\":\"X\"}]\n\n garbage", 3, "after the closing");
	expect_invalid("[{\"ph\":\"X\", \"name\":\"a\nb\"}]", 1, "control byte");
	expect_invalid("[{\"ph\":\"X\", \"name\":\"a\\qb\"}]", 1, "invalid escape");
	expect_invalid("[{\"ph\":\"X\", \"name\":\"\\u12G4\"}]", 1, "hex digits");
	expect_invalid("[{\"ph\":\"X\", \"dur\":01}]", 1, "',' or '}'");
	expect_invalid("[{\"ph\":\"X\", \"dur\":1.}]", 1, "decimal point");
	expect_invalid("[{\"ph\":\"X\", \"x\":[1,]}]", 1, "a value");
	expect_invalid("[{\"ph\":\"X\", \"x\":[1}]", 1, "',' or ']'");
	expect_invalid("[{\"ph\":\"X\", \"x\":tru}]", 1, "unknown word");
	expect_invalid("[{\"ph\":\"X\"},]", 1, "after a ','");
	expect_invalid("[{\"ph\":\"X\"}\n\n\n{\"ph\":\"X\"}]", 4, "',' or ']'");
}
END_TEST

START_TEST(bad_elements_counted_in_lenient_mode)
{
	static const char json[] =
		"[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":\"1\",\"dur\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"ts\":\"12x\",\"dur\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\",\"ts\":\"1\"},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"d\",\"ts\":\"1\",\"dur\":-1},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"e\",\"ts\":\"1\",\"dur\":1,\"pid\":1."
		"5},\n"
		"42,\n"
		"{\"ph\":\"X\",\"cat\":\"other\",\"name\":\"f\",\"ts\":\"junk\",\"dur\":1},\n"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"g\",\"ts\":\"2\",\"dur\":1,\"pid\":"
		"\"1e2\"}]";
	struct tread t;

	ck_assert_int_eq(read_json(&t, json, 0), MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(t.err.line, 2);
	ck_assert_ptr_nonnull(strstr(t.err.msg, "ts \"12x\" is not a number"));
	tread_free(&t);
	ck_assert_int_eq(read_json(&t, json, 1), 0);
	ck_assert_uint_eq(t.stats.n_skipped, 5);
	ck_assert_uint_eq(t.stats.first_skip.line, 2);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 4);
	ck_assert_str_eq(tstr(&t, ev_at(&t, 0)->name), "a");
	ck_assert_str_eq(tstr(&t, ev_at(&t, 2)->name), "g");
	ck_assert_uint_eq(ev_at(&t, 2)->pid, 100);
	tread_free(&t);
}
END_TEST

/* A timeline of n_ops slices and counters, pretty-printed with CRLF, larger than the sniffer's
 * peek (256 KiB) so that it is read in chunks; a bad byte at the end when bad. */
static char *big_timeline(int n_ops, int bad, size_t *len, unsigned *bad_line)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	unsigned line = 1;
	int i;

	ck_assert_ptr_nonnull(f);
	fputs("[\r\n", f);
	line++;
	for (i = 0; i < n_ops; i++) {
		fprintf(f,
			"    {\r\n        \"name\": \"op\\u00e9%d\",\r\n        \"pid\": 12,\r\n"
			"        \"tid\": %d,\r\n        \"ts\": \"%d.%03d\",\r\n        \"dur\": "
			"%d.5,\r\n        \"ph\": \"X\",\r\n        \"cat\": \"cpu_op\",\r\n       "
			" "
			"\"args\": {\r\n            \"Call stack\": \"f%d.py(1): "
			"g;\\r\\nmain.py(2): "
			"main\",\r\n            \"Input Dims\": [[%d, 3], []]\r\n        }\r\n    "
			"},"
			"\r\n",
			i, i % 3, 1000 + i, i % 1000, i % 7, i % 50, i);
		line += 13;
		fprintf(f,
			"    {\"name\": \"APP/HBM\", \"ts\": \"%d.250\", \"pid\": 608, \"tid\": 0, "
			"\"args\": {\"KB\": %d.5}, \"ph\": \"C\"}%s\r\n",
			1000 + i, i, i + 1 < n_ops || bad ? "," : "");
		line++;
	}
	if (bad)
		fputs("    {\"ph\": \"X\", \"name\": \"x\" \"cat\"}\r\n", f);
	fputs("]\r\n", f);
	ck_assert_int_eq(fclose(f), 0);
	*bad_line = line;
	return out;
}

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* The file at path read with reads of chunk bytes after the sniffed first 256 KiB. */
static int read_chunked(struct tread *t, const char *path, size_t chunk)
{
	struct memscope_source *src = NULL;

	memset(t, 0, sizeof(*t));
	t->st = memscope_strtab_new();
	t->evs = memscope_evbuf_new();
	ck_assert_int_eq(memscope_source_open(&src, path, t->st, NULL, &t->err), 0);
	src->chunk = chunk;
	t->rc = memscope_source_read(src, (memscope_event_fn)memscope_evbuf_add, t->evs, &t->err);
	memscope_source_close(src);
	return t->rc;
}

START_TEST(any_chunks_read_the_same)
{
	static const size_t chunks[] = { 1, 7, 4093, 256 * 1024 };
	char path[] = "/tmp/memscope-msprof-json-XXXXXX";
	int fd = mkstemp(path), bad, rc;
	size_t len, k, csv_len, n_csv;
	unsigned bad_line;

	ck_assert_int_ge(fd, 0);
	close(fd);
	for (bad = 0; bad <= 1; bad++) {
		char *json = big_timeline(2000, bad, &len, &bad_line);
		struct tread whole;
		char *base = NULL;

		ck_assert_uint_gt(len, 300 * 1024);
		rc = tread_mem(&whole, json, len, NULL);
		if (bad) {
			ck_assert_int_eq(rc, MEMSCOPE_E_INVALID);
			ck_assert_uint_eq(whole.err.line, bad_line);
		} else {
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(memscope_evbuf_count(whole.evs), 3 * 2000);
			ck_assert_uint_eq(ev_at(&whole, 0)->line, 2);
			base = tread_csv(&whole, &csv_len);
		}
		write_file(path, json, len);
		for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
			struct tread t;

			rc = read_chunked(&t, path, chunks[k]);
			if (bad) {
				/* the same line whatever the chunks */
				ck_assert_int_eq(rc, MEMSCOPE_E_INVALID);
				ck_assert_uint_eq(t.err.line, bad_line);
			} else {
				char *csv = tread_csv(&t, &n_csv);

				ck_assert_int_eq(rc, 0);
				ck_assert_uint_eq(n_csv, csv_len);
				ck_assert(memcmp(csv, base, csv_len) == 0);
				free(csv);
			}
			tread_free(&t);
		}
		free(base);
		free(json);
		tread_free(&whole);
	}
	unlink(path);
}
END_TEST

START_TEST(torch_npu_sample)
{
	const char *path = testdata(
		"msprof/torch_npu_level0_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
	static const char *const names[6] = { "APP/DDR", "APP/HBM", "APP/Memory", "Device/DDR",
		"Device/HBM", "Device/Memory" };
	size_t i, j, n_op = 0, n_counter = 0, per[6] = { 0 }, depth[2] = { 0 };
	uint64_t last = 0;
	int step = 0;
	struct tread t;

	if (access(path, R_OK) != 0) {
		fprintf(stderr, "test_msprof_json: %s missing: sample test skipped\n", path);
		return;
	}
	ck_assert_int_eq(tread_file(&t, path, NULL), 0);
	for (i = 0; i < memscope_evbuf_count(t.evs); i++) {
		const struct memscope_event *ev = ev_at(&t, i);

		ck_assert_uint_ge(ev->ts_ns, last);
		last = ev->ts_ns;
		ck_assert_uint_eq(ev->id, i + 1);
		if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH) {
			/* the sample's two threads: ops nest on each */
			size_t th = ev->tid == 3016828 ? 0 : 1;

			n_op++;
			ck_assert_uint_eq(ev->pid, 3016828);
			if (ev->subtype == MEMSCOPE_SUB_ATEN_START)
				depth[th]++;
			else
				ck_assert_uint_gt(depth[th]--, 0);
			step |= strcmp(tstr(&t, ev->name), "ProfilerStep#50") == 0;
		} else {
			ck_assert_uint_eq(ev->kind, MEMSCOPE_KIND_COUNTER);
			ck_assert_uint_eq(ev->subtype, MEMSCOPE_SUB_NPU_MEM);
			ck_assert_int_eq(ev->device, 0);
			ck_assert_uint_eq(ev->pid, 3016828);
			n_counter++;
			for (j = 0; j < 6; j++)
				per[j] += strcmp(tstr(&t, ev->name), names[j]) == 0;
		}
	}
	ck_assert_uint_eq(depth[0], 0);
	ck_assert_uint_eq(depth[1], 0);
	ck_assert_uint_eq(n_op, 1720);
	ck_assert_uint_eq(n_counter, 78);
	for (j = 0; j < 6; j++)
		ck_assert_uint_eq(per[j], 13);
	ck_assert(step);
	/* the example of formats/msprof.md: APP/HBM 2160232 KB at 1736405443756384.100 */
	for (i = 0; i < memscope_evbuf_count(t.evs); i++) {
		const struct memscope_event *ev = ev_at(&t, i);

		if (ev->kind == MEMSCOPE_KIND_COUNTER && ev->ts_ns == 1736405443756384100ull &&
			strcmp(tstr(&t, ev->name), "APP/HBM") == 0)
			break;
	}
	ck_assert_uint_lt(i, memscope_evbuf_count(t.evs));
	ck_assert_int_eq(ev_at(&t, i)->used, 2160232ll * 1024);
	tread_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("msprof_json");
	TCase *tc = tcase_create("msprof_json");

	tcase_add_test(tc, sniffs_timelines_only);
	tcase_add_test(tc, ts_as_string_or_number_is_exact);
	tcase_add_test(tc, ops_in_time_order_nested_and_adjacent);
	tcase_add_test(tc, op_fields_and_call_stack);
	tcase_add_test(tc, counters_only_under_npu_mem);
	tcase_add_test(tc, escapes_and_numbers);
	tcase_add_test(tc, counter_out_of_range);
	tcase_add_test(tc, missing_closing_bracket);
	tcase_add_test(tc, cut_inside_an_element);
	tcase_add_test(tc, malformed_json_names_its_line);
	tcase_add_test(tc, bad_elements_counted_in_lenient_mode);
	tcase_add_test(tc, any_chunks_read_the_same);
	tcase_add_test(tc, torch_npu_sample);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
