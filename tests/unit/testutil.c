/* Implementation of the unit-test helpers (testutil.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers/reader.h"
#include "testutil.h"

static int add_event(void *ctx, const struct memscope_event *ev)
{
	return memscope_evbuf_add(ctx, ev);
}

static int tread_src(struct tread *t, struct memscope_source *src)
{
	t->rc = memscope_source_read(src, add_event, t->evs, &t->err);
	t->stats = *memscope_source_stats(src);
	memscope_source_close(src);
	return t->rc;
}

static void tread_init(struct tread *t)
{
	memset(t, 0, sizeof(*t));
	t->st = memscope_strtab_new();
	t->evs = memscope_evbuf_new();
	ck_assert_ptr_nonnull(t->st);
	ck_assert_ptr_nonnull(t->evs);
}

int tread_mem(struct tread *t, const void *data, size_t len, const struct memscope_read_opts *o)
{
	struct memscope_source *src = NULL;

	tread_init(t);
	t->rc = memscope_source_open_mem(&src, data, len, "mem.csv", t->st, o, &t->err);
	if (t->rc)
		return t->rc;
	return tread_src(t, src);
}

int tread_file(struct tread *t, const char *path, const struct memscope_read_opts *o)
{
	return tread_part(t, path, 0, o);
}

int tread_part(struct tread *t, const char *path, uint32_t part, const struct memscope_read_opts *o)
{
	struct memscope_source *src = NULL;

	tread_init(t);
	t->rc = memscope_source_open_part(&src, path, part, t->st, o, &t->err);
	if (t->rc)
		return t->rc;
	return tread_src(t, src);
}

void tread_free(struct tread *t)
{
	memscope_evbuf_free(t->evs);
	memscope_strtab_free(t->st);
	memset(t, 0, sizeof(*t));
}

char *tread_csv(const struct tread *t, size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	struct memscope_csv_writer *w = memscope_csv_writer_new(f, t->st);
	struct memscope_error err;
	size_t i;

	for (i = 0; i < memscope_evbuf_count(t->evs); i++)
		ck_assert_int_eq(
			memscope_csv_writer_write(w, memscope_evbuf_get(t->evs, i), &err), 0);
	ck_assert_int_eq(memscope_csv_writer_finish(w, &err), 0);
	memscope_csv_writer_free(w);
	fclose(f);
	return out;
}

char *tread_capture(const struct tread *t, size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	struct memscope_capture_writer *w = memscope_capture_writer_new(f, t->st);
	struct memscope_error err;
	size_t i;

	for (i = 0; i < memscope_evbuf_count(t->evs); i++)
		ck_assert_int_eq(
			memscope_capture_writer_write(w, memscope_evbuf_get(t->evs, i), &err), 0);
	ck_assert_int_eq(memscope_capture_writer_finish(w, &err), 0);
	memscope_capture_writer_free(w);
	fclose(f);
	return out;
}

const char *testdata(const char *name)
{
	static char path[4096];
	const char *dir = getenv("MEMSCOPE_TESTDATA");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "testdata", name);
	return path;
}

char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

const char *tstr(const struct tread *t, uint32_t id)
{
	const char *s = memscope_strtab_str(t->st, id, NULL);

	return s ? s : "<bad id>";
}

int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

uint64_t trand_state = 1;

uint64_t trand(uint64_t n)
{
	trand_state ^= trand_state << 13;
	trand_state ^= trand_state >> 7;
	trand_state ^= trand_state << 17;
	return n ? trand_state % n : 0;
}

char *tread_chunked(const char *path, size_t chunk, int *rc, size_t *len)
{
	struct tread t;
	struct memscope_source *src = NULL;
	char *csv;

	memset(&t, 0, sizeof(t));
	t.st = memscope_strtab_new();
	t.evs = memscope_evbuf_new();
	ck_assert_int_eq(memscope_source_open(&src, path, t.st, NULL, &t.err), 0);
	src->chunk = chunk;
	*rc = memscope_source_read(src, (memscope_event_fn)memscope_evbuf_add, t.evs, &t.err);
	memscope_source_close(src);
	csv = tread_csv(&t, len);
	tread_free(&t);
	return csv;
}
