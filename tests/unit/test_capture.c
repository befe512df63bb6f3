/* Unit tests of the capture format: lossless CSV round trips, cut files, compact host records,
 * corrupt input. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

START_TEST(csv_capture_csv_is_byte_identical)
{
	static const char *const files[] = { "baseline.csv", "leaks.csv", "stacks_crlf_twin.csv" };
	size_t i;

	for (i = 0; i < 3; i++) {
		struct tread a, b;
		size_t orig_len, cap_len, csv_len;
		char *orig = slurp(testdata(files[i]), &orig_len);
		char *cap, *csv;

		ck_assert_int_eq(tread_file(&a, testdata(files[i]), NULL), 0);
		cap = tread_capture(&a, &cap_len);
		ck_assert_uint_lt(cap_len, orig_len / 3); /* and much smaller */
		ck_assert_int_eq(tread_mem(&b, cap, cap_len, NULL), 0);
		csv = tread_csv(&b, &csv_len);
		ck_assert_uint_eq(csv_len, orig_len);
		ck_assert_int_eq(memcmp(csv, orig, orig_len), 0);
		free(orig);
		free(cap);
		free(csv);
		tread_free(&a);
		tread_free(&b);
	}
}
END_TEST

START_TEST(stacks_survive_the_capture_format)
{
	struct tread a, b;
	size_t cap_len, l1, l2;
	char *cap, *c1, *c2;

	ck_assert_int_eq(tread_file(&a, testdata("stacks_crlf.csv"), NULL), 0);
	cap = tread_capture(&a, &cap_len);
	ck_assert_int_eq(tread_mem(&b, cap, cap_len, NULL), 0);
	c1 = tread_csv(&a, &l1);
	c2 = tread_csv(&b, &l2);
	ck_assert_uint_eq(l1, l2);
	ck_assert_int_eq(memcmp(c1, c2, l1), 0);
	ck_assert_ptr_nonnull(strstr(c2, "\"/usr/lib/python3/train.py(42): step\n"));
	free(cap);
	free(c1);
	free(c2);
	tread_free(&a);
	tread_free(&b);
}
END_TEST

static int count_event(void *ctx, const struct memscope_event *ev)
{
	(void)ev;
	++*(size_t *)ctx;
	return 0;
}

START_TEST(every_prefix_reads_complete_records_then_truncation)
{
	struct tread full, part;
	size_t cap_len, n_full, cut, i;
	char *cap;

	ck_assert_int_eq(tread_file(&full, testdata("baseline.csv"), NULL), 0);
	cap = tread_capture(&full, &cap_len);
	n_full = memscope_evbuf_count(full.evs);
	for (cut = 0; cut < cap_len; cut++) {
		int rc = tread_mem(&part, cap, cut, NULL);
		size_t n = memscope_evbuf_count(part.evs);

		if (cut == 0)
			ck_assert_int_eq(rc, MEMSCOPE_E_INVALID); /* empty file */
		else
			ck_assert_msg(rc == MEMSCOPE_E_TRUNCATED, "cut at %zu: rc %d", cut, rc);
		ck_assert_uint_le(n, n_full);
		/* lenient: the same events, the cut in the stats instead of an error */
		if (cut >= 16) { /* past the header */
			struct tread len;
			struct memscope_read_opts lo = { .lenient = 1 };

			ck_assert_int_eq(tread_mem(&len, cap, cut, &lo), 0);
			ck_assert_int_eq(len.stats.cut.code, MEMSCOPE_E_TRUNCATED);
			ck_assert_uint_eq(memscope_evbuf_count(len.evs), n);
			ck_assert_str_eq(len.stats.cut.msg, part.err.msg);
			tread_free(&len);
		}
		for (i = 0; i < n; i++) {
			const struct memscope_event *x = memscope_evbuf_get(part.evs, i);
			const struct memscope_event *y = memscope_evbuf_get(full.evs, i);

			ck_assert_uint_eq(x->id, y->id);
			ck_assert(x->ts_ns == y->ts_ns);
			ck_assert_uint_eq(x->n_attrs, y->n_attrs);
		}
		tread_free(&part);
	}
	/* lenient with no error record: the cut still lands in the stats */
	{
		struct memscope_strtab *st = memscope_strtab_new();
		struct memscope_source *src = NULL;
		struct memscope_read_opts lo = { .lenient = 1 };
		size_t n = 0;

		ck_assert_int_eq(
			memscope_source_open_mem(&src, cap, cap_len - 5, "cut", st, &lo, NULL), 0);
		ck_assert_int_eq(memscope_source_read(src, count_event, &n, NULL), 0);
		ck_assert_int_eq(memscope_source_stats(src)->cut.code, MEMSCOPE_E_TRUNCATED);
		ck_assert_uint_gt(n, 0);
		memscope_source_close(src);
		memscope_strtab_free(st);
	}
	/* the last cut loses only the end record: every event is there */
	ck_assert_int_eq(tread_mem(&part, cap, cap_len - 1, NULL), MEMSCOPE_E_TRUNCATED);
	ck_assert_uint_eq(memscope_evbuf_count(part.evs), n_full);
	tread_free(&part);
	free(cap);
	tread_free(&full);
}
END_TEST

/* A host malloc/free stream as the capture shim records it. */
static void host_event(struct memscope_event *ev, uint64_t id, unsigned kind, uint64_t alloc_id,
	uint64_t ptr, int64_t size, uint64_t ts, unsigned func)
{
	memset(ev, 0, sizeof(*ev));
	ev->id = id;
	ev->kind = (uint16_t)kind;
	ev->subtype = ev->pool = MEMSCOPE_SUB_HOST;
	ev->name = MEMSCOPE_STR_NA;
	ev->flags = MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE | MEMSCOPE_EV_ALLOC_ID;
	if (func == MEMSCOPE_FUNC_REALLOC)
		ev->flags |= MEMSCOPE_EV_REALLOC;
	ev->alloc_id = alloc_id;
	ev->ptr = ptr;
	ev->size = size;
	ev->ts_ns = ts;
	ev->pid = 4242;
	ev->tid = 4243;
	ev->device = MEMSCOPE_DEVICE_HOST;
	ev->func = (uint16_t)func;
}

START_TEST(host_stream_is_compact_and_exact)
{
	enum { N = 20000 };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_evbuf *in = memscope_evbuf_new();
	struct memscope_capture_writer *w;
	struct memscope_error err;
	struct memscope_event ev;
	struct tread back;
	uint64_t id = 0, serial = 0, ts = 1000000, ptrs[N], sizes[N];
	size_t i, k, len;
	char *cap = NULL;
	FILE *f = open_memstream(&cap, &len);

	w = memscope_capture_writer_new(f, st);
	srand(3);
	for (i = 0; i < N; i++) {
		/* malloc, then a LIFO-ish free of a recent block every other event */
		serial++;
		ptrs[serial - 1] = 0x55550000ull + serial * 48;
		sizes[serial - 1] = 16 + (uint64_t)(rand() % 200);
		ts += 50 + (uint64_t)(rand() % 900);
		host_event(&ev, id++, MEMSCOPE_KIND_MALLOC, serial, ptrs[serial - 1],
			(int64_t)sizes[serial - 1], ts,
			i % 97 == 0 ? MEMSCOPE_FUNC_CALLOC : MEMSCOPE_FUNC_MALLOC);
		ck_assert_int_eq(memscope_evbuf_add(in, &ev), 0);
		ck_assert_int_eq(memscope_capture_writer_write(w, &ev, &err), 0);
		if (i % 2 == 1) {
			k = serial - 1 - (size_t)(rand() % 2);
			if (!sizes[k])
				continue;
			ts += 50 + (uint64_t)(rand() % 900);
			host_event(&ev, id++, MEMSCOPE_KIND_FREE, k + 1, ptrs[k], (int64_t)sizes[k],
				ts, i % 101 == 1 ? MEMSCOPE_FUNC_REALLOC : MEMSCOPE_FUNC_FREE);
			sizes[k] = 0;
			ck_assert_int_eq(memscope_evbuf_add(in, &ev), 0);
			ck_assert_int_eq(memscope_capture_writer_write(w, &ev, &err), 0);
		}
	}
	/* a free of a block the stream never allocated falls back to a full record */
	host_event(&ev, id++, MEMSCOPE_KIND_FREE, 999999, 0x1234, 8, ts + 5, MEMSCOPE_FUNC_FREE);
	ck_assert_int_eq(memscope_evbuf_add(in, &ev), 0);
	ck_assert_int_eq(memscope_capture_writer_write(w, &ev, &err), 0);
	ck_assert_int_eq(memscope_capture_writer_finish(w, &err), 0);
	memscope_capture_writer_free(w);
	fclose(f);
	ck_assert_msg(len <= 8 * memscope_evbuf_count(in), "%zu bytes for %zu events", len,
		memscope_evbuf_count(in));

	ck_assert_int_eq(tread_mem(&back, cap, len, NULL), 0);
	ck_assert_uint_eq(memscope_evbuf_count(back.evs), memscope_evbuf_count(in));
	for (i = 0; i < memscope_evbuf_count(in); i++) {
		const struct memscope_event *x = memscope_evbuf_get(in, i);
		const struct memscope_event *y = memscope_evbuf_get(back.evs, i);

		ck_assert_uint_eq(x->id, y->id);
		ck_assert_uint_eq(x->kind, y->kind);
		ck_assert_uint_eq(x->alloc_id, y->alloc_id);
		ck_assert_uint_eq(x->ptr, y->ptr);
		ck_assert_int_eq(x->size, y->size);
		ck_assert(x->ts_ns == y->ts_ns);
		ck_assert_uint_eq(x->pid, y->pid);
		ck_assert_uint_eq(x->tid, y->tid);
		ck_assert_int_eq(x->device, y->device);
		ck_assert_uint_eq(x->func, y->func);
		ck_assert_uint_eq(x->flags, y->flags);
	}
	/* the CSV of such events carries the reference's attr keys */
	char *csv = tread_csv(&back, &len);

	ck_assert_ptr_nonnull(strstr(csv, ",cpu,0x0000000055550030,\"{allocation_id:1,addr:"
					  "0x0000000055550030,size:"));
	ck_assert_ptr_nonnull(strstr(csv, ",func:calloc}\""));
	free(csv);
	free(cap);
	tread_free(&back);
	memscope_evbuf_free(in);
	memscope_strtab_free(st);
}
END_TEST

static const unsigned char header[16] = { 0x89, 'M', 'S', 'C', 'A', 'P', '\r', '\n', 1, 0, 0, 0, 16,
	0, 0, 0 };

static int read_bytes(struct tread *t, const unsigned char *body, size_t n)
{
	unsigned char buf[256];

	memcpy(buf, header, 16);
	memcpy(buf + 16, body, n);
	return tread_mem(t, buf, 16 + n, NULL);
}

START_TEST(corrupt_capture_files_are_refused)
{
	struct tread t;
	unsigned char v2[16];

	/* an unknown record type is skipped, the end record counts events */
	ck_assert_int_eq(read_bytes(&t, (const unsigned char *)"\x7f\x02xy\x01\x01\x00", 7), 0);
	ck_assert_uint_eq(t.stats.n_unknown_records, 1);
	tread_free(&t);
	/* an event naming string 5 that was never defined */
	ck_assert_int_eq(read_bytes(&t, (const unsigned char *)"\x10\x05\x01\x01\x20\x00\x05", 7),
		MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(t.err.msg, "undefined string"));
	ck_assert(t.err.has_offset);
	ck_assert_uint_eq(t.err.offset, 16);
	tread_free(&t);
	/* data after the end record */
	ck_assert_int_eq(read_bytes(&t, (const unsigned char *)"\x01\x01\x00\x02\x00", 5),
		MEMSCOPE_E_INVALID);
	tread_free(&t);
	/* a record length past the limit */
	ck_assert_int_eq(read_bytes(&t, (const unsigned char *)"\x02\xff\xff\xff\xff\x0f", 6),
		MEMSCOPE_E_INVALID);
	tread_free(&t);
	/* a host free of a block that was never allocated */
	ck_assert_int_eq(read_bytes(&t, (const unsigned char *)"\x13\x03\x02\x00\x00", 5),
		MEMSCOPE_E_INVALID);
	tread_free(&t);
	/* a newer major version */
	memcpy(v2, header, 16);
	v2[8] = 2;
	ck_assert_int_eq(tread_mem(&t, v2, 16, NULL), MEMSCOPE_E_UNSUPPORTED);
	tread_free(&t);
	/* the magic alone */
	ck_assert_int_eq(tread_mem(&t, header, 5, NULL), MEMSCOPE_E_TRUNCATED);
	tread_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("capture");
	TCase *tc = tcase_create("format");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, csv_capture_csv_is_byte_identical);
	tcase_add_test(tc, stacks_survive_the_capture_format);
	tcase_add_test(tc, every_prefix_reads_complete_records_then_truncation);
	tcase_add_test(tc, host_stream_is_compact_and_exact);
	tcase_add_test(tc, corrupt_capture_files_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
