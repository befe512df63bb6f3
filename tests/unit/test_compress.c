/* Unit tests of compressed inputs and outputs: gzip and zstd streams written by the compress
 * writer read as their plain bytes are, in any chunks and members; cut and corrupt streams, gzip's
 * zero padding; the progress callback, of files and pipes; the writer's contract. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "readers/reader.h"
#include "testutil.h"

static const enum memscope_compression kinds[] = { MEMSCOPE_COMPRESS_GZIP, MEMSCOPE_COMPRESS_ZSTD };

/* p[0..n) compressed by the compress writer as `pieces` members or frames (malloc'd). */
static char *squeeze(enum memscope_compression c, const char *p, size_t n, int pieces, size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	struct memscope_error err;
	int i;

	ck_assert_ptr_nonnull(f);
	for (i = 0; i < pieces; i++) {
		struct memscope_compress_writer *w = memscope_compress_writer_new(f, c);
		size_t from = n * (size_t)i / (size_t)pieces,
		       to = n * (size_t)(i + 1) / (size_t)pieces;

		ck_assert_ptr_nonnull(w);
		ck_assert_uint_eq(fwrite(p + from, 1, to - from, memscope_compress_writer_file(w)),
			to - from);
		ck_assert_int_eq(memscope_compress_writer_finish(w, &err), 0);
		memscope_compress_writer_free(w);
	}
	ck_assert_int_eq(fclose(f), 0);
	return out;
}

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(compressed_reads_as_plain_in_any_chunks_and_members)
{
	static const size_t chunks[] = { 1, 7, 4093, 256 * 1024 };
	static const int pieces[] = { 1, 3 };
	char path[] = "/tmp/memscope-compress-XXXXXX";
	size_t orig_len, base_len, z_len, len, k, i, j;
	char *orig = slurp(testdata("stacks_crlf.csv"), &orig_len);
	struct buf big = { 0 };
	struct tread whole;
	char *base;
	int fd = mkstemp(path), rc;

	ck_assert_int_ge(fd, 0);
	close(fd);
	/* past the sniffed 256 KiB: the header once, then the rows again and again */
	const char *rows = strchr(orig, '\n') + 1;

	ck_assert_int_eq(ms__buf_append(&big, orig, (size_t)(rows - orig)), 0);
	while (big.len < 600 * 1024)
		ck_assert_int_eq(ms__buf_append(&big, rows, orig_len - (size_t)(rows - orig)), 0);
	ck_assert_int_eq(tread_mem(&whole, big.p, big.len, NULL), 0);
	base = tread_csv(&whole, &base_len);
	for (k = 0; k < 2; k++)
		for (j = 0; j < 2; j++) {
			char *z = squeeze(kinds[k], big.p, big.len, pieces[j], &z_len);
			struct tread t;
			char *csv;

			/* from memory (the fuzz harnesses' way) */
			ck_assert_int_eq(tread_mem(&t, z, z_len, NULL), 0);
			csv = tread_csv(&t, &len);
			ck_assert_uint_eq(len, base_len);
			ck_assert_int_eq(memcmp(csv, base, len), 0);
			ck_assert_uint_eq(t.stats.bytes, big.len); /* decompressed bytes */
			free(csv);
			tread_free(&t);
			/* from a file, in chunks of every size */
			write_file(path, z, z_len);
			for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
				csv = tread_chunked(path, chunks[i], &rc, &len);
				ck_assert_int_eq(rc, 0);
				ck_assert_uint_eq(len, base_len);
				ck_assert_int_eq(memcmp(csv, base, len), 0);
				free(csv);
			}
			free(z);
		}
	unlink(path);
	free(base);
	free(orig);
	ms__buf_free(&big);
	tread_free(&whole);
}
END_TEST

START_TEST(every_cut_of_a_compressed_capture)
{
	size_t cap_len, z_len, n, k, plain_events;
	char *csv = slurp(testdata("baseline.csv"), &n);
	struct tread t;
	char *cap;

	/* a capture file of the sample, and its events */
	ck_assert_int_eq(tread_mem(&t, csv, n, NULL), 0);
	plain_events = memscope_evbuf_count(t.evs);
	cap = tread_capture(&t, &cap_len);
	tread_free(&t);
	for (k = 0; k < 2; k++) {
		/* two members or frames: a cut in the second keeps the first's records */
		char *z = squeeze(kinds[k], cap, cap_len, 2, &z_len);

		for (n = 1; n < z_len; n++) {
			struct memscope_read_opts lo = { .lenient = 1 };

			/* strict: an error, every event before it delivered, never a crash */
			tread_mem(&t, z, n, NULL);
			ck_assert_msg(t.rc == MEMSCOPE_E_TRUNCATED || t.rc == MEMSCOPE_E_INVALID,
				"%s cut at %zu: rc %d", memscope_compression_name(kinds[k]), n,
				t.rc);
			ck_assert_str_eq(t.err.file, "mem.csv");
			ck_assert_uint_le(memscope_evbuf_count(t.evs), plain_events);
			tread_free(&t);
			/* lenient: the cut is kept in the stats; a prefix of the events */
			tread_mem(&t, z, n, &lo);
			if (t.rc == 0) {
				ck_assert_int_ne(t.stats.cut.code, 0);
				ck_assert_uint_le(memscope_evbuf_count(t.evs), plain_events);
			} else {
				/* nothing of the header came out before the cut */
				ck_assert_uint_eq(memscope_evbuf_count(t.evs), 0);
			}
			tread_free(&t);
		}
		/* the whole: every event, no cut */
		ck_assert_int_eq(tread_mem(&t, z, z_len, NULL), 0);
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), plain_events);
		ck_assert_int_eq(t.stats.cut.code, 0);
		tread_free(&t);
		free(z);
	}
	free(cap);
	free(csv);
}
END_TEST

START_TEST(corrupt_and_odd_streams)
{
	size_t n, z_len;
	char *csv = slurp(testdata("baseline.csv"), &n);
	char *z = squeeze(MEMSCOPE_COMPRESS_GZIP, csv, n, 1, &z_len);
	struct memscope_read_opts lo = { .lenient = 1 };
	struct buf b = { 0 };
	struct tread t;
	char want[MEMSCOPE_ERROR_MSG_MAX];

	/* a flipped byte: invalid, strict; lenient, the input ends there */
	z[z_len / 2] ^= 0x55;
	ck_assert_int_eq(tread_mem(&t, z, z_len, NULL), MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(t.err.msg, "corrupt gzip data in member 1"));
	tread_free(&t);
	tread_mem(&t, z, z_len, &lo);
	ck_assert_int_eq(t.stats.cut.code, MEMSCOPE_E_INVALID);
	tread_free(&t);
	z[z_len / 2] ^= 0x55;
	/* bytes after the last member that are not another one */
	ck_assert_int_eq(ms__buf_append(&b, z, z_len), 0);
	ck_assert_int_eq(ms__buf_append(&b, "trailing", 8), 0);
	ck_assert_int_eq(tread_mem(&t, b.p, b.len, NULL), MEMSCOPE_E_INVALID);
	snprintf(want, sizeof(want),
		"trailing garbage after gzip member 1 (compressed byte %zu): neither another "
		"member "
		"nor zero padding",
		z_len);
	ck_assert_str_eq(t.err.msg, want);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 121); /* the whole first member */
	tread_free(&t);
	/* the magic alone; an empty member; an empty zstd frame */
	ck_assert_int_eq(tread_mem(&t, "\x1f\x8b", 2, NULL), MEMSCOPE_E_TRUNCATED);
	tread_free(&t);
	free(z);
	z = squeeze(MEMSCOPE_COMPRESS_GZIP, "", 0, 1, &z_len);
	ck_assert_int_eq(tread_mem(&t, z, z_len, NULL), MEMSCOPE_E_INVALID);
	ck_assert_str_eq(t.err.msg, "empty file (once decompressed)");
	tread_free(&t);
	free(z);
	z = squeeze(MEMSCOPE_COMPRESS_ZSTD, "", 0, 1, &z_len);
	ck_assert_int_eq(tread_mem(&t, z, z_len, NULL), MEMSCOPE_E_INVALID);
	tread_free(&t);
	free(z);
	ms__buf_free(&b);
	free(csv);
}
END_TEST

/* p[0..n) in three members or frames, compressed each on its own, into *b; *third where the third
 * begins. */
static void three_pieces(
	enum memscope_compression c, const char *p, size_t n, struct buf *b, size_t *third)
{
	size_t i, len;

	for (i = 0; i < 3; i++) {
		char *z = squeeze(c, p + n * i / 3, n * (i + 1) / 3 - n * i / 3, 1, &len);

		if (i == 2)
			*third = b->len;
		ck_assert_int_eq(ms__buf_append(b, z, len), 0);
		free(z);
	}
}

START_TEST(corrupt_data_names_its_member_or_frame)
{
	size_t n, third, k;
	char *csv = slurp(testdata("baseline.csv"), &n);

	for (k = 0; k < 2; k++) {
		struct buf b = { 0 };
		struct tread t;

		/* small pieces, each decoded by one call: the third is counted third all the same
		 */
		three_pieces(kinds[k], csv, n, &b, &third);
		ck_assert_int_eq(tread_mem(&t, b.p, b.len, NULL), 0);
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), 121);
		tread_free(&t);
		b.p[third + (b.len - third) / 2] ^= 0x55;
		ck_assert_int_eq(tread_mem(&t, b.p, b.len, NULL), MEMSCOPE_E_INVALID);
		ck_assert_msg(strstr(t.err.msg, k ? "corrupt zstd data in frame 3: "
						  : "corrupt gzip data in member 3: "),
			"%s", t.err.msg);
		ck_assert_uint_gt(memscope_evbuf_count(t.evs), 0); /* the first two pieces' rows */
		tread_free(&t);
		ms__buf_free(&b);
	}
	free(csv);
}
END_TEST

START_TEST(gzip_zero_padding_ends_the_stream)
{
	static const char zeros[4096];
	char path[] = "/tmp/memscope-padding-XXXXXX";
	size_t n, z_len, third, len, i;
	char *csv = slurp(testdata("baseline.csv"), &n);
	char *z = squeeze(MEMSCOPE_COMPRESS_GZIP, csv, n, 1, &z_len);
	char want[MEMSCOPE_ERROR_MSG_MAX];
	struct buf b = { 0 };
	struct tread t;
	char *out;
	int fd = mkstemp(path), rc;

	ck_assert_int_ge(fd, 0);
	close(fd);
	/* a tar block's padding after the member: the end, nothing cut */
	ck_assert_int_eq(ms__buf_append(&b, z, z_len), 0);
	ck_assert_int_eq(ms__buf_append(&b, zeros, 512), 0);
	ck_assert_int_eq(tread_mem(&t, b.p, b.len, NULL), 0);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 121);
	ck_assert_int_eq(t.stats.cut.code, 0);
	tread_free(&t);
	/* padding over several raw chunks of a file, after three members, read in any chunks */
	b.len = 0;
	three_pieces(MEMSCOPE_COMPRESS_GZIP, csv, n, &b, &third);
	while (b.len < 700 * 1024)
		ck_assert_int_eq(ms__buf_append(&b, zeros, sizeof(zeros)), 0);
	write_file(path, b.p, b.len);
	for (i = 1; i < 100000; i *= 317) {
		out = tread_chunked(path, i, &rc, &len);
		ck_assert_int_eq(rc, 0);
		free(out);
	}
	/* anything after the padding, even another member, is garbage: the input ends before it */
	ck_assert_int_eq(ms__buf_append(&b, z, z_len), 0);
	write_file(path, b.p, b.len);
	ck_assert_int_eq(tread_file(&t, path, NULL), MEMSCOPE_E_INVALID);
	snprintf(want, sizeof(want),
		"trailing garbage after gzip member 3 (compressed byte %zu): neither another "
		"member "
		"nor zero padding",
		b.len - z_len);
	ck_assert_str_eq(t.err.msg, want);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 121);
	tread_free(&t);
	b.len -= z_len;
	ck_assert_int_eq(ms__buf_append(&b, "\001", 1), 0);
	ck_assert_int_eq(tread_mem(&t, b.p, b.len, NULL), MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(t.err.msg, "trailing garbage after gzip member 3"));
	tread_free(&t);
	/* zstd takes no padding (as zstd -t): zeros are not a frame */
	free(z);
	z = squeeze(MEMSCOPE_COMPRESS_ZSTD, csv, n, 1, &z_len);
	b.len = 0;
	ck_assert_int_eq(ms__buf_append(&b, z, z_len), 0);
	ck_assert_int_eq(ms__buf_append(&b, zeros, 512), 0);
	ck_assert_int_eq(tread_mem(&t, b.p, b.len, NULL), MEMSCOPE_E_INVALID);
	ck_assert_ptr_nonnull(strstr(t.err.msg, "corrupt zstd data in frame 2: "));
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 121);
	tread_free(&t);
	unlink(path);
	ms__buf_free(&b);
	free(z);
	free(csv);
}
END_TEST

struct progress {
	unsigned calls;
	uint64_t last, total;
	int backwards;
};

static void on_progress(void *ctx, uint32_t src, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;

	ck_assert_uint_eq(src, 7);
	p->backwards |= done < p->last;
	p->calls++;
	p->last = done;
	p->total = total;
}

START_TEST(progress_counts_file_bytes)
{
	char path[] = "/tmp/memscope-progress-XXXXXX";
	struct memscope_strtab *st = memscope_strtab_new();
	size_t n, z_len, k;
	char *csv = slurp(testdata("stacks_crlf.csv"), &n);
	struct buf big = { 0 };
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	while (big.len < 1024 * 1024)
		ck_assert_int_eq(ms__buf_append(&big, csv, n), 0); /* repeated headers: bad rows */
	for (k = 0; k < 3; k++) {
		struct memscope_read_opts o = { .lenient = 1, .src = 7 };
		struct progress p = { 0 };
		struct memscope_source *src = NULL;
		struct memscope_error err;
		struct memscope_evbuf *evs = memscope_evbuf_new();
		char *z = k ? squeeze(kinds[k - 1], big.p, big.len, 1, &z_len) : NULL;

		if (k)
			write_file(path, z, z_len);
		else
			write_file(path, big.p, z_len = big.len);
		o.progress = on_progress;
		o.progress_ctx = &p;
		ck_assert_int_eq(memscope_source_open(&src, path, st, &o, &err), 0);
		ck_assert_uint_eq(p.calls, 1); /* once the format is known */
		ck_assert_int_eq(
			memscope_source_read(src, (memscope_event_fn)memscope_evbuf_add, evs, &err),
			0);
		/* the file's bytes, compressed ones when compressed, at most once per chunk */
		ck_assert_uint_eq(p.total, z_len);
		ck_assert_uint_eq(p.last, z_len);
		ck_assert_int_eq(p.backwards, 0);
		ck_assert_uint_le(p.calls, 2 + z_len / (256 * 1024));
		ck_assert_int_eq(
			memscope_source_compression(src), k == 0   ? MEMSCOPE_COMPRESS_NONE
							  : k == 1 ? MEMSCOPE_COMPRESS_GZIP
								   : MEMSCOPE_COMPRESS_ZSTD);
		memscope_source_close(src);
		memscope_evbuf_free(evs);
		/* a memory input reports nothing */
		memset(&p, 0, sizeof(p));
		ck_assert_int_eq(
			memscope_source_open_mem(&src, k ? z : big.p, z_len, "m", st, &o, &err), 0);
		ck_assert_int_eq(memscope_source_read(src, (memscope_event_fn)memscope_evbuf_add,
					 (evs = memscope_evbuf_new()), &err),
			0);
		ck_assert_uint_eq(p.calls, 0);
		memscope_source_close(src);
		memscope_evbuf_free(evs);
		free(z);
	}
	unlink(path);
	ms__buf_free(&big);
	free(csv);
	memscope_strtab_free(st);
}
END_TEST

/* Read path's events with progress reported to p (src 7). Returns the read status. */
static int read_with_progress(const char *path, struct progress *p)
{
	struct memscope_read_opts o = { .lenient = 1, .src = 7 };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_evbuf *evs = memscope_evbuf_new();
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int rc;

	o.progress = on_progress;
	o.progress_ctx = p;
	rc = memscope_source_open(&src, path, st, &o, &err);
	if (!rc)
		rc = memscope_source_read(src, (memscope_event_fn)memscope_evbuf_add, evs, &err);
	memscope_source_close(src);
	memscope_evbuf_free(evs);
	memscope_strtab_free(st);
	return rc;
}

START_TEST(progress_of_a_pipe_at_most_once_per_256_kib)
{
	size_t n, z_len, k;
	char *csv = slurp(testdata("stacks_crlf.csv"), &n);
	struct buf big = { 0 };

	while (big.len < 2 * 1024 * 1024)
		ck_assert_int_eq(ms__buf_append(&big, csv, n), 0);
	for (k = 0; k < 2; k++) {
		char *z = k ? squeeze(MEMSCOPE_COMPRESS_GZIP, big.p, big.len, 1, &z_len) : big.p;
		struct progress p = { 0 };
		char path[32];
		int fds[2], status;
		pid_t pid;

		if (!k)
			z_len = big.len;
		ck_assert_int_eq(pipe(fds), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			/* small writes: the reader gets a pipe's worth, 64 KiB at most, per read */
			size_t at;

			close(fds[0]);
			for (at = 0; at < z_len; at += 4096)
				if (write(fds[1], z + at, z_len - at < 4096 ? z_len - at : 4096) <
					0)
					_exit(1);
			_exit(0);
		}
		close(fds[1]);
		snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
		ck_assert_int_eq(read_with_progress(path, &p), 0);
		close(fds[0]);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_int_eq(status, 0);
		/* every byte, reported last; size unknown; once per 256 KiB and once at the end
		 * (not once per read: that would be 32 times for 2 MiB) */
		ck_assert_uint_eq(p.last, z_len);
		ck_assert_uint_eq(p.total, 0);
		ck_assert_int_eq(p.backwards, 0);
		ck_assert_uint_ge(p.calls, z_len / (256 * 1024));
		ck_assert_uint_le(p.calls, 2 + z_len / (256 * 1024));
		if (k)
			free(z);
	}
	ms__buf_free(&big);
	free(csv);
}
END_TEST

START_TEST(compressed_database_refused)
{
	static const char header[] = "SQLite format 3";
	char page[512] = { 0 };
	size_t z_len;
	char *z;
	struct tread t;

	memcpy(page, header, sizeof(header));
	z = squeeze(MEMSCOPE_COMPRESS_ZSTD, page, sizeof(page), 1, &z_len);
	ck_assert_int_eq(tread_mem(&t, z, z_len, NULL), MEMSCOPE_E_UNSUPPORTED);
	ck_assert_str_eq(
		t.err.msg, "a compressed database cannot be read directly: decompress it first");
	tread_free(&t);
	free(z);
}
END_TEST

START_TEST(writer_reports_a_failed_write)
{
	FILE *full = fopen("/dev/full", "wb");
	struct memscope_compress_writer *w;
	struct memscope_error err;
	char block[4096];
	size_t i;

	if (!full)
		return; /* no /dev/full here */
	memset(block, 'x', sizeof(block));
	for (i = 0; i < 2; i++) {
		w = memscope_compress_writer_new(full, kinds[i]);
		ck_assert_ptr_nonnull(w);
		fwrite(block, 1, sizeof(block), memscope_compress_writer_file(w));
		ck_assert_int_eq(memscope_compress_writer_finish(w, &err), MEMSCOPE_E_IO);
		ck_assert_ptr_nonnull(strstr(err.msg, "write failed"));
		memscope_compress_writer_free(w);
	}
	ck_assert_ptr_null(memscope_compress_writer_new(full, MEMSCOPE_COMPRESS_NONE));
	fclose(full);
}
END_TEST

START_TEST(writer_finishes_once)
{
	size_t i;

	for (i = 0; i < 2; i++) {
		char *out = NULL;
		size_t len = 0, before;
		FILE *f = open_memstream(&out, &len);
		struct memscope_compress_writer *w = memscope_compress_writer_new(f, kinds[i]);
		struct memscope_error err;

		ck_assert_ptr_nonnull(w);
		fputs("x\n", memscope_compress_writer_file(w));
		ck_assert_int_eq(memscope_compress_writer_finish(w, &err), 0);
		ck_assert_ptr_null(memscope_compress_writer_file(w));
		before = (size_t)memscope_compress_writer_bytes(w);
		/* a second finish: the contract's MEMSCOPE_E_ARG, nothing more written */
		ck_assert_int_eq(memscope_compress_writer_finish(w, &err), MEMSCOPE_E_ARG);
		ck_assert_str_eq(err.msg, "already finished");
		ck_assert_uint_eq(memscope_compress_writer_bytes(w), before);
		memscope_compress_writer_free(w);
		ck_assert_int_eq(fclose(f), 0);
		ck_assert_uint_eq(len, before);
		free(out);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compress");
	TCase *tc = tcase_create("compress");

	tcase_add_test(tc, compressed_reads_as_plain_in_any_chunks_and_members);
	tcase_add_test(tc, every_cut_of_a_compressed_capture);
	tcase_add_test(tc, corrupt_and_odd_streams);
	tcase_add_test(tc, progress_counts_file_bytes);
	tcase_add_test(tc, compressed_database_refused);
	tcase_add_test(tc, writer_reports_a_failed_write);
	tcase_add_test(tc, corrupt_data_names_its_member_or_frame);
	tcase_add_test(tc, gzip_zero_padding_ends_the_stream);
	tcase_add_test(tc, progress_of_a_pipe_at_most_once_per_256_kib);
	tcase_add_test(tc, writer_finishes_once);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
