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

/* A capture of baseline.csv's events written as a recording stopped early (lost: the calls
 * after the stop, UINT64_MAX not known), into *len bytes; its events into *full. */
static char *stopped_capture(struct tread *full, uint64_t lost, size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	struct memscope_capture_writer *w;
	struct memscope_error err;
	size_t i;

	ck_assert_int_eq(tread_file(full, testdata("baseline.csv"), NULL), 0);
	w = memscope_capture_writer_new(f, full->st);
	for (i = 0; i < memscope_evbuf_count(full->evs); i++)
		ck_assert_int_eq(
			memscope_capture_writer_write(w, memscope_evbuf_get(full->evs, i), &err),
			0);
	memscope_capture_writer_stop(
		w, MEMSCOPE_CAPTURE_STOP_WRITE, "No space left on device", lost);
	ck_assert_int_eq(memscope_capture_writer_finish(w, &err), 0);
	memscope_capture_writer_free(w);
	fclose(f);
	return out;
}

START_TEST(a_recording_stopped_early_is_refused_but_leniently)
{
	static const uint64_t lost[] = { 42, 1, UINT64_MAX };
	static const char *const said[] = {
		"42 later calls (allocations, frees, markers) not recorded",
		"1 later call (allocations, frees, markers) not recorded",
		"how many later calls were not recorded is not known"
	};
	size_t k;

	for (k = 0; k < 3; k++) {
		struct tread full, strict, len;
		struct memscope_read_opts lo = { .lenient = 1 };
		size_t cap_len, n;
		char *cap = stopped_capture(&full, lost[k], &cap_len), want[256];

		n = memscope_evbuf_count(full.evs);
		snprintf(want, sizeof(want),
			"recording incomplete: stopped by a write error (No space left on device) "
			"after %zu events; %s",
			n, said[k]);
		/* strict: every event delivered, then the file refused as incomplete */
		ck_assert_int_eq(tread_mem(&strict, cap, cap_len, NULL), MEMSCOPE_E_TRUNCATED);
		ck_assert_uint_eq(memscope_evbuf_count(strict.evs), n);
		ck_assert_str_eq(strict.err.msg, want);
		/* lenient: read, the stop kept where a cut is */
		ck_assert_int_eq(tread_mem(&len, cap, cap_len, &lo), 0);
		ck_assert_uint_eq(memscope_evbuf_count(len.evs), n);
		ck_assert_int_eq(len.stats.cut.code, MEMSCOPE_E_TRUNCATED);
		ck_assert_str_eq(len.stats.cut.msg, want);
		/* the last record is STOPPED, in place of END; a cut before it is a plain cut */
		tread_free(&strict);
		ck_assert_int_eq(tread_mem(&strict, cap, cap_len - 1, NULL), MEMSCOPE_E_TRUNCATED);
		ck_assert_ptr_nonnull(strstr(strict.err.msg, "truncated capture file"));
		tread_free(&strict);
		tread_free(&len);
		tread_free(&full);
		free(cap);
	}
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

/* Two host events the same in every field the capture keeps of them. */
static void assert_same_host_event(const struct memscope_event *x, const struct memscope_event *y)
{
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

		assert_same_host_event(x, y);
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

/* How many records of each type the capture file p[0..n) holds (its header is 16 bytes). */
static void count_records(const unsigned char *p, size_t n, size_t counts[256])
{
	size_t at = 16;

	memset(counts, 0, 256 * sizeof(counts[0]));
	while (at < n) {
		uint64_t len = 0;
		unsigned shift = 0;
		size_t h = at + 1;

		do
			len |= (uint64_t)(p[h] & 0x7f) << shift, shift += 7;
		while (p[h++] & 0x80);
		counts[p[at]]++;
		at = h + (size_t)len;
	}
	ck_assert_uint_eq(at, n);
}

/* The C stacks of x (ids of st) and y (ids of back's table) have the same frames. */
static void assert_same_stack(const struct memscope_strtab *st, const struct memscope_event *x,
	const struct tread *back, const struct memscope_event *y)
{
	const uint32_t *fx, *fy;
	size_t nx = 0, ny = 0, i;

	ck_assert_int_eq(!x->stack_c, !y->stack_c);
	if (!x->stack_c)
		return;
	fx = memscope_strtab_stack(st, x->stack_c, &nx);
	fy = memscope_strtab_stack(back->st, y->stack_c, &ny);
	ck_assert_uint_eq(nx, ny);
	for (i = 0; i < nx; i++)
		ck_assert_str_eq(memscope_strtab_str(st, fx[i], NULL), tstr(back, fy[i]));
}

static void assert_same_events(
	const struct memscope_strtab *st, const struct memscope_evbuf *in, const struct tread *t)
{
	const struct memscope_evbuf *back = t->evs;
	size_t i;

	ck_assert_uint_eq(memscope_evbuf_count(back), memscope_evbuf_count(in));
	for (i = 0; i < memscope_evbuf_count(in); i++) {
		const struct memscope_event *x = memscope_evbuf_get(in, i);
		const struct memscope_event *y = memscope_evbuf_get(back, i);

		assert_same_host_event(x, y);
		assert_same_stack(st, x, t, y);
	}
}

/* Threads of a recording merged in time order, as memscope-record writes them: each keeps up to 8
 * live blocks at places of its own region, reused as a heap reuses freed chunks. */
struct tthread {
	uint64_t tid, base;
	uint64_t serial[8], ptr[8], size[8];
	unsigned n_live;
	uint64_t free_place[8];
	unsigned n_free, n_places;
};

struct tstream {
	struct memscope_strtab *st;
	struct memscope_evbuf *in;
	struct memscope_capture_writer *w;
	uint64_t id, ts, serial;
	uint32_t stacks[3];
};

static void tput(struct tstream *s, struct memscope_event *ev)
{
	struct memscope_error err;

	ck_assert_int_eq(memscope_evbuf_add(s->in, ev), 0);
	ck_assert_msg(memscope_capture_writer_write(s->w, ev, &err) == 0, "%s", err.msg);
}

/* One event of thread t: a malloc while it has fewer than 8 live blocks, else a free of one. */
static void tstep(struct tstream *s, struct tthread *t)
{
	struct memscope_event ev;
	unsigned k;

	s->ts += 10 + trand(21);
	if (t->n_live < 8) {
		k = t->n_live++;
		t->serial[k] = ++s->serial;
		t->ptr[k] = t->n_free ? t->free_place[--t->n_free] : t->base + t->n_places++ * 4112;
		t->size[k] = 16 + trand(4081);
		host_event(&ev, s->id++, MEMSCOPE_KIND_MALLOC, t->serial[k], t->ptr[k],
			(int64_t)t->size[k], s->ts,
			trand(50) == 0 ? MEMSCOPE_FUNC_CALLOC : MEMSCOPE_FUNC_MALLOC);
		if (trand(4) == 0)
			ev.stack_c = s->stacks[trand(3)];
	} else {
		k = (unsigned)trand(8);
		host_event(&ev, s->id++, MEMSCOPE_KIND_FREE, t->serial[k], t->ptr[k],
			(int64_t)t->size[k], s->ts,
			trand(60) == 0 ? MEMSCOPE_FUNC_REALLOC : MEMSCOPE_FUNC_FREE);
		t->free_place[t->n_free++] = t->ptr[k];
		t->n_live--;
		t->serial[k] = t->serial[t->n_live];
		t->ptr[k] = t->ptr[t->n_live];
		t->size[k] = t->size[t->n_live];
	}
	ev.tid = t->tid;
	tput(s, &ev);
}

START_TEST(interleaved_threads_are_compact_and_exact)
{
	enum { N = 40000 };
	struct tthread th[2] = { { .tid = 4243, .base = 0x55d0c0a3e010ull },
		{ .tid = 4250, .base = 0x7f39f0000010ull } };
	struct tstream s = { .ts = 1764753083997498270ull };
	struct memscope_error err;
	struct memscope_event ev;
	struct tread back;
	size_t i, len, counts[256];
	char *cap = NULL;
	FILE *f = open_memstream(&cap, &len);

	s.st = memscope_strtab_new();
	s.in = memscope_evbuf_new();
	s.w = memscope_capture_writer_new(f, s.st);
	trand_state = 18;
	for (i = 0; i < 3; i++) {
		uint32_t fr[2];
		char name[64];

		snprintf(name, sizeof(name), "app(site%zu+0x1c) [0x55d0c0%06zx]", i, i * 64);
		ck_assert_int_eq(memscope_strtab_intern(s.st, name, strlen(name), &fr[0]), 0);
		ck_assert_int_eq(memscope_strtab_intern(s.st, "main (app.c:12)", 15, &fr[1]), 0);
		ck_assert_int_eq(memscope_strtab_intern_stack(s.st, fr, 2, &s.stacks[i]), 0);
	}
	ck_assert_int_eq(memscope_capture_writer_meta(s.w, "process.pid", "4243", &err), 0);
	/* the threads alternate event by event */
	for (i = 0; i < N; i++)
		tstep(&s, &th[i % 2]);
	ck_assert_int_eq(memscope_capture_writer_finish(s.w, &err), 0);
	fclose(f);
	count_records((const unsigned char *)cap, len, counts);
	/* a slot for the second thread instead of a CONTEXT record per switch */
	ck_assert_uint_eq(counts[0x11], 1);
	ck_assert_uint_eq(counts[0x16], 1);
	ck_assert_uint_eq(counts[0x17], N / 2);
	ck_assert_uint_eq(counts[0x04], 1);
	ck_assert_msg(len < 8 * (size_t)N, "%zu bytes for %d events", len, N);
	ck_assert_int_eq(tread_mem(&back, cap, len, NULL), 0);
	assert_same_events(s.st, s.in, &back);
	tread_free(&back);
	free(cap);

	/* runs of one thread, a cross-thread free, a host event that is not compact in between */
	cap = NULL;
	f = open_memstream(&cap, &len);
	memscope_evbuf_free(s.in);
	s.in = memscope_evbuf_new();
	memscope_capture_writer_free(s.w);
	s.w = memscope_capture_writer_new(f, s.st);
	s.id = s.serial = 0;
	memset(th, 0, sizeof(th));
	th[0] = (struct tthread){ .tid = 4243, .base = 0x55d0c0a3e010ull };
	th[1] = (struct tthread){ .tid = 4250, .base = 0x7f39f0000010ull };
	for (i = 0; i < N / 4;) {
		unsigned run = 1 + (unsigned)trand(30), t = (unsigned)trand(2);

		for (; run && i < N / 4; run--, i++)
			tstep(&s, &th[t]);
		if (trand(20) == 0) { /* a block of thread 0 freed on thread 1 */
			struct tthread *a = &th[0];

			if (a->n_live) {
				a->n_live--;
				host_event(&ev, s.id++, MEMSCOPE_KIND_FREE, a->serial[a->n_live],
					a->ptr[a->n_live], (int64_t)a->size[a->n_live], s.ts += 7,
					MEMSCOPE_FUNC_FREE);
				a->free_place[a->n_free++] = a->ptr[a->n_live];
				ev.tid = th[1].tid;
				tput(&s, &ev);
			}
		}
		if (trand(40) == 0) { /* a free the capture never saw allocated, on thread 1 */
			host_event(&ev, s.id++, MEMSCOPE_KIND_FREE, 1000000 + i, 0x1234, 8,
				s.ts += 3, MEMSCOPE_FUNC_FREE);
			ev.tid = th[1].tid;
			tput(&s, &ev);
		}
	}
	ck_assert_int_eq(memscope_capture_writer_finish(s.w, &err), 0);
	fclose(f);
	count_records((const unsigned char *)cap, len, counts);
	ck_assert_uint_gt(counts[0x17], 0);
	ck_assert_uint_gt(counts[0x11], 1); /* long runs moved CONTEXT */
	ck_assert_uint_gt(counts[0x10], 0);
	ck_assert_int_eq(tread_mem(&back, cap, len, NULL), 0);
	assert_same_events(s.st, s.in, &back);
	tread_free(&back);
	free(cap);
	memscope_capture_writer_free(s.w);
	memscope_evbuf_free(s.in);
	memscope_strtab_free(s.st);
}
END_TEST

struct slot_check {
	uint64_t n;
	int ok;
};

static int check_slot_event(void *ctx, const struct memscope_event *ev)
{
	struct slot_check *c = ctx;
	uint64_t k = c->n++ / 2;

	if (ev->tid != 1000 + k || ev->pid != 77 || ev->ptr != 0x10000 + k * 64 ||
		ev->alloc_id != k + 1 ||
		ev->kind != (c->n % 2 ? MEMSCOPE_KIND_MALLOC : MEMSCOPE_KIND_FREE))
		c->ok = 0;
	return 0;
}

START_TEST(thread_slots_are_bounded)
{
	enum { T = (1 << 20) + 3 };
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_capture_writer *w;
	struct memscope_source *src = NULL;
	struct memscope_error err;
	struct memscope_event ev;
	struct slot_check c = { 0, 1 };
	size_t i, len, counts[256];
	unsigned char *buf;
	char *cap = NULL;
	FILE *f = open_memstream(&cap, &len);

	/* the writer defines 2^20 slots, then writes the other threads under CONTEXT */
	w = memscope_capture_writer_new(f, st);
	for (i = 0; i < T; i++) {
		host_event(&ev, 2 * i, MEMSCOPE_KIND_MALLOC, i + 1, 0x10000 + i * 64, 32, 1000 + i,
			MEMSCOPE_FUNC_MALLOC);
		ev.pid = 77;
		ev.tid = 1000 + i;
		ck_assert_int_eq(memscope_capture_writer_write(w, &ev, &err), 0);
		host_event(&ev, 2 * i + 1, MEMSCOPE_KIND_FREE, i + 1, 0x10000 + i * 64, 32,
			1000 + i, MEMSCOPE_FUNC_FREE);
		ev.pid = 77;
		ev.tid = 1000 + i;
		ck_assert_int_eq(memscope_capture_writer_write(w, &ev, &err), 0);
	}
	ck_assert_int_eq(memscope_capture_writer_finish(w, &err), 0);
	memscope_capture_writer_free(w);
	fclose(f);
	count_records((const unsigned char *)cap, len, counts);
	ck_assert_uint_eq(counts[0x16], 1 << 20);
	ck_assert_uint_eq(counts[0x11], T - (1 << 20));
	ck_assert_int_eq(memscope_source_open_mem(&src, cap, len, "slots", st, NULL, &err), 0);
	ck_assert_msg(memscope_source_read(src, check_slot_event, &c, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c.n, 2 * (uint64_t)T);
	ck_assert(c.ok);
	memscope_source_close(src);
	free(cap);

	/* a reader refuses the THREAD record of slot 2^20 + 1 */
	len = 16 + 5 * ((size_t)(1 << 20) + 1);
	buf = malloc(len);
	memcpy(buf, header, 16);
	for (i = 16; i < len; i += 5)
		memcpy(buf + i, "\x16\x03\x01\x01\x01", 5);
	{
		struct tread t;

		ck_assert_int_eq(tread_mem(&t, buf, len, NULL), MEMSCOPE_E_INVALID);
		ck_assert_ptr_nonnull(strstr(t.err.msg, "thread"));
		ck_assert_uint_eq(t.err.offset, len - 5);
		tread_free(&t);
		/* and reads 2^20 of them */
		memcpy(buf + len - 5, "\x01\x01\x00", 3);
		ck_assert_int_eq(tread_mem(&t, buf, len - 2, NULL), 0);
		tread_free(&t);
	}
	free(buf);
	memscope_strtab_free(st);
}
END_TEST

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

/* THREAD pid 4242, tid 4243, host: defines slot 1 (7 bytes) */
#define THREAD_1 "\x16\x05\x93\x21\x94\x21\x01"

START_TEST(corrupt_thread_records_are_refused)
{
	static const struct {
		const char *body;
		size_t len;
		int rc;
		const char *msg;
		uint64_t offset;
	} cases[] = {
		/* HOST_T naming a slot before any THREAD, slot 0, a slot past the last THREAD */
		{ "\x17\x04\x04\x05\x10\x00", 6, MEMSCOPE_E_INVALID, "undefined thread slot", 16 },
		{ "\x17\x04\x00\x05\x10\x00", 6, MEMSCOPE_E_INVALID, "undefined thread slot", 16 },
		{ THREAD_1 "\x17\x04\x08\x05\x10\x00", 13, MEMSCOPE_E_INVALID,
			"undefined thread slot", 23 },
		/* HOST_T cut short: no fields, an allocation without its pointer delta, the slot
		 * varint cut inside */
		{ THREAD_1 "\x17\x00", 9, MEMSCOPE_E_INVALID, "truncated host record", 23 },
		{ THREAD_1 "\x17\x03\x04\x05\x10", 12, MEMSCOPE_E_INVALID, "truncated host record",
			23 },
		{ THREAD_1 "\x17\x01\x84", 10, MEMSCOPE_E_INVALID, "truncated host record", 23 },
		/* a HOST_T free of a block that is not live, an invalid func code */
		{ THREAD_1 "\x17\x03\x05\x05\x00", 12, MEMSCOPE_E_INVALID, "not live", 23 },
		{ THREAD_1 "\x17\x05\x06\x05\x10\x00\x63", 14, MEMSCOPE_E_INVALID,
			"invalid func code", 23 },
		/* THREAD cut short, with an invalid device code */
		{ "\x16\x02\x01\x01", 4, MEMSCOPE_E_INVALID, "invalid thread record", 16 },
		{ "\x16\x07\x01\x01\xff\xff\xff\xff\x7f", 9, MEMSCOPE_E_INVALID,
			"invalid thread record", 16 },
		/* the file cut inside a HOST_T record: the records before it, then truncation */
		{ THREAD_1 "\x17\x04\x04\x05\x10", 12, MEMSCOPE_E_TRUNCATED, "ends inside a record",
			23 },
	};
	/* slot 1: malloc 16 bytes at 64, its free; a 1.0 malloc under CONTEXT; slot 1: malloc at
	 * 64 + 1 */
	static const char good[] = THREAD_1 "\x17\x05\x04\x04\x10\x80\x01"
					    "\x17\x03\x05\x02\x00"
					    "\x12\x03\x02\x20\x00"
					    "\x17\x04\x04\x02\x10\x02"
					    "\x01\x01\x04";
	const struct memscope_event *ev[4];
	struct tread t;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(read_bytes(&t, (const unsigned char *)cases[i].body, cases[i].len),
			cases[i].rc);
		ck_assert_msg(strstr(t.err.msg, cases[i].msg), "case %zu: %s", i, t.err.msg);
		ck_assert(t.err.has_offset);
		ck_assert_uint_eq(t.err.offset, cases[i].offset);
		tread_free(&t);
	}
	ck_assert_int_eq(read_bytes(&t, (const unsigned char *)good, sizeof(good) - 1), 0);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 4);
	for (i = 0; i < 4; i++)
		ev[i] = memscope_evbuf_get(t.evs, i);
	ck_assert_uint_eq(ev[0]->kind, MEMSCOPE_KIND_MALLOC);
	ck_assert_uint_eq(ev[0]->pid, 4242);
	ck_assert_uint_eq(ev[0]->tid, 4243);
	ck_assert_int_eq(ev[0]->device, MEMSCOPE_DEVICE_HOST);
	ck_assert_uint_eq(ev[0]->ptr, 64);
	ck_assert_int_eq(ev[0]->size, 16);
	ck_assert_uint_eq(ev[0]->alloc_id, 1);
	ck_assert(ev[0]->ts_ns == 2);
	ck_assert_uint_eq(ev[1]->kind, MEMSCOPE_KIND_FREE);
	ck_assert_uint_eq(ev[1]->tid, 4243);
	ck_assert_uint_eq(ev[1]->ptr, 64);
	ck_assert_uint_eq(ev[1]->alloc_id, 1);
	ck_assert(ev[1]->ts_ns == 3);
	/* HOST_T left CONTEXT (still N/A) and the file's host_ptr (still 0) alone; the serial is
	 * shared */
	ck_assert_uint_eq(ev[2]->pid, MEMSCOPE_ID_NONE);
	ck_assert_uint_eq(ev[2]->tid, MEMSCOPE_ID_NONE);
	ck_assert_uint_eq(ev[2]->ptr, 0);
	ck_assert_uint_eq(ev[2]->alloc_id, 2);
	ck_assert_uint_eq(ev[3]->tid, 4243);
	ck_assert_uint_eq(ev[3]->ptr, 65);
	ck_assert_uint_eq(ev[3]->alloc_id, 3);
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
	tcase_add_test(tc, a_recording_stopped_early_is_refused_but_leniently);
	tcase_add_test(tc, host_stream_is_compact_and_exact);
	tcase_add_test(tc, interleaved_threads_are_compact_and_exact);
	tcase_add_test(tc, thread_slots_are_bounded);
	tcase_add_test(tc, corrupt_capture_files_are_refused);
	tcase_add_test(tc, corrupt_thread_records_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
