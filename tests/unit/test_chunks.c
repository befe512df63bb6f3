/* Unit tests of reading files chunk by chunk: rows and records cut at every boundary read as a
 * whole file does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers/reader.h"
#include "testutil.h"

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(csv_reads_the_same_in_any_chunks)
{
	static const size_t chunks[] = { 1, 2, 3, 7, 64, 4093 };
	char path_csv[] = "/tmp/memscope-chunks-XXXXXX";
	size_t len, base_len, i, orig_len;
	char *orig = slurp(testdata("stacks_crlf.csv"), &orig_len);
	struct buf big = { 0 };
	struct tread whole;
	char *base;
	int fd = mkstemp(path_csv), rc;

	ck_assert_int_ge(fd, 0);
	close(fd);
	/* about 700 KiB: the header once, then the rows (with CRLF multi-line stacks) again and
	 * again */
	const char *rows = strchr(orig, '\n') + 1;

	ck_assert_int_eq(ms__buf_append(&big, orig, (size_t)(rows - orig)), 0);
	while (big.len < 700 * 1024)
		ck_assert_int_eq(ms__buf_append(&big, rows, orig_len - (size_t)(rows - orig)), 0);
	write_file(path_csv, big.p, big.len);
	ck_assert_int_eq(tread_mem(&whole, big.p, big.len, NULL), 0);
	base = tread_csv(&whole, &base_len);
	ck_assert_uint_gt(memscope_evbuf_count(whole.evs), 4000);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		char *csv = tread_chunked(path_csv, chunks[i], &rc, &len);

		ck_assert_int_eq(rc, 0);
		ck_assert_uint_eq(len, base_len);
		ck_assert_int_eq(memcmp(csv, base, len), 0);
		free(csv);
	}
	unlink(path_csv);
	free(base);
	free(orig);
	ms__buf_free(&big);
	tread_free(&whole);
}
END_TEST

START_TEST(big_capture_file_in_small_chunks)
{
	static const size_t chunks[] = { 1, 5, 255 };
	char path[] = "/tmp/memscope-chunks-XXXXXX";
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_capture_writer *w;
	struct memscope_error err;
	struct memscope_event ev;
	size_t i, n_events = 0;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "wb");

	/* host malloc/free pairs: ~6 bytes each, well past the sniffed 256 KiB */
	w = memscope_capture_writer_new(f, st);
	memset(&ev, 0, sizeof(ev));
	ev.subtype = ev.pool = MEMSCOPE_SUB_HOST;
	ev.name = MEMSCOPE_STR_NA;
	ev.flags = MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE | MEMSCOPE_EV_ALLOC_ID;
	ev.device = MEMSCOPE_DEVICE_HOST;
	for (i = 1; i <= 100000; i++) {
		ev.kind = MEMSCOPE_KIND_MALLOC;
		ev.func = MEMSCOPE_FUNC_MALLOC;
		ev.id = 2 * (i - 1);
		ev.alloc_id = i;
		ev.ptr = 0x10000 + 64 * (i % 1000);
		ev.size = (int64_t)(i % 300);
		ev.ts_ns += 100;
		ck_assert_int_eq(memscope_capture_writer_write(w, &ev, &err), 0);
		ev.kind = MEMSCOPE_KIND_FREE;
		ev.func = MEMSCOPE_FUNC_FREE;
		ev.id++;
		ev.ts_ns += 50;
		ck_assert_int_eq(memscope_capture_writer_write(w, &ev, &err), 0);
		n_events += 2;
	}
	ck_assert_int_eq(memscope_capture_writer_finish(w, &err), 0);
	ck_assert_uint_gt(memscope_capture_writer_bytes(w), 300 * 1024);
	memscope_capture_writer_free(w);
	fclose(f);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct memscope_source *src;
		struct memscope_evbuf *evs = memscope_evbuf_new();

		ck_assert_int_eq(memscope_source_open(&src, path, st, NULL, &err), 0);
		src->chunk = chunks[i];
		ck_assert_int_eq(
			memscope_source_read(src, (memscope_event_fn)memscope_evbuf_add, evs, &err),
			0);
		ck_assert_uint_eq(memscope_evbuf_count(evs), n_events);
		ck_assert_uint_eq(memscope_evbuf_get(evs, n_events - 1)->alloc_id, 100000);
		ck_assert_int_eq(memscope_evbuf_get(evs, n_events - 1)->size, 100000 % 300);
		memscope_source_close(src);
		memscope_evbuf_free(evs);
	}
	unlink(path);
	memscope_strtab_free(st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("chunks");
	TCase *tc = tcase_create("window");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, csv_reads_the_same_in_any_chunks);
	tcase_add_test(tc, big_capture_file_in_small_chunks);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
