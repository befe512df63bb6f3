/* Unit tests of memscope-record's spool reader (lib/record/transcode.c) on spools built here
 * byte by byte: the Python frames' records (PYCODE, PYSTACK) into Call Stack(Python), beside the
 * native stack a PYSTACK names, and their malformed forms ending a segment. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memscope/order.h"
#include "memscope/record.h"
#include "record/spool_fmt.h"
#include "testutil.h"

/* a spool being built: the header, then segments of SPOOL_SEG_MIN bytes */
struct sb {
	unsigned char buf[SPOOL_HEADER_LEN + 2 * SPOOL_SEG_MIN];
	size_t at; /* where the next record goes */
};

static void sb_start(struct sb *b)
{
	struct spool_header h;

	memset(b, 0, sizeof(*b));
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SPOOL_MAGIC, 8);
	h.version = SPOOL_VERSION;
	h.header_len = SPOOL_HEADER_LEN;
	h.seg_len = SPOOL_SEG_MIN;
	h.clock = SPOOL_CLOCK_MONO;
	h.pid = 42;
	h.mono0_ns = 1000;
	h.real0_ns = 1000;
	h.exit_kind = SPOOL_EXIT_RETURN;
	memcpy(b->buf, &h, sizeof(h));
}

/* segment k (from 0) of thread tid */
static void sb_segment(struct sb *b, unsigned k, uint64_t tid)
{
	struct spool_seg s;

	memset(&s, 0, sizeof(s));
	s.magic = SPOOL_SEG_MAGIC;
	s.tid = tid;
	s.len = SPOOL_SEG_MIN;
	s.thread = k + 1;
	s.tick = 1000;
	s.mono_ns = 1000;
	memcpy(b->buf + SPOOL_HEADER_LEN + k * SPOOL_SEG_MIN, &s, sizeof(s));
	b->at = SPOOL_HEADER_LEN + k * SPOOL_SEG_MIN + SPOOL_SEG_HEAD;
}

static void put(struct sb *b, uint64_t v)
{
	while (v >= 0x80) {
		b->buf[b->at++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b->buf[b->at++] = (unsigned char)v;
}

static void put_text(struct sb *b, const char *s)
{
	put(b, strlen(s));
	memcpy(b->buf + b->at, s, strlen(s));
	b->at += strlen(s);
}

/* a malloc of size at ptr with stack id sid, 10 ticks after the last */
static void put_alloc(struct sb *b, uint64_t size, uint64_t ptr, uint64_t sid)
{
	b->buf[b->at++] = SPOOL_R_ALLOC | 1;
	put(b, 10);
	put(b, size);
	put(b, ptr << 1); /* zigzag of ptr - 0 */
	put(b, sid);
}

/* The spool transcoded and read back: its events in t, the transcoding's stats in st. */
static void transcode(struct sb *b, struct tread *t, struct memscope_record_stats *st)
{
	struct memscope_error err;
	char path[64], *cap = NULL;
	size_t cap_len = 0;
	int fd = memfd_create("spool", MFD_CLOEXEC);
	FILE *out = open_memstream(&cap, &cap_len);

	ck_assert(fd >= 0 && out);
	ck_assert(write(fd, b->buf, sizeof(b->buf)) == (ssize_t)sizeof(b->buf));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ck_assert_int_eq(memscope_record_transcode(path, out, NULL, st, &err), 0);
	fclose(out);
	close(fd);
	ck_assert_int_eq(tread_mem(t, cap, cap_len, NULL), 0);
	free(cap);
}

/* the frames of stack id joined by '|' */
static const char *frames(const struct tread *t, uint32_t id)
{
	static char text[512];
	size_t n = 0, i, at = 0;
	const uint32_t *f = id ? memscope_strtab_stack(t->st, id, &n) : NULL;

	text[0] = 0;
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(
			text + at, sizeof(text) - at, "%s%s", i ? "|" : "", tstr(t, f[i]));
	return text;
}

START_TEST(python_frames)
{
	struct sb b;
	struct tread t;
	struct memscope_record_stats st;
	const struct memscope_event *e;

	sb_start(&b);
	sb_segment(&b, 0, 7);
	b.buf[b.at++] = SPOOL_R_PYCODE; /* code 1 */
	put(&b, 1);
	put_text(&b, "/x/prog.py");
	put_text(&b, "leak");
	b.buf[b.at++] = SPOOL_R_PYCODE; /* code 2 */
	put(&b, 2);
	put_text(&b, "/x/prog.py");
	put_text(&b, "<module>");
	b.buf[b.at++] = SPOOL_R_PYSTACK; /* stack 1: Python frames only */
	put(&b, 1);
	put(&b, 0);
	put(&b, 2);
	put(&b, 1);
	put(&b, 12);
	put(&b, 2);
	put(&b, 30);
	b.buf[b.at++] = SPOOL_R_STACK; /* stack 2: one native frame, in no module */
	put(&b, 2);
	put(&b, 1);
	put(&b, 0x1234 << 1);
	b.buf[b.at++] = SPOOL_R_PYSTACK; /* stack 3: stack 2 below Python frames */
	put(&b, 3);
	put(&b, 2);
	put(&b, 1);
	put(&b, 1);
	put(&b, 13);
	put_alloc(&b, 100, 0x1000, 1);
	put_alloc(&b, 200, 0x2000, 3);
	put_alloc(&b, 300, 0x3000, 2);
	/* thread 2: a PYSTACK naming a code id never defined ends its segment */
	sb_segment(&b, 1, 8);
	put_alloc(&b, 400, 0x4000, 0);
	b.buf[b.at++] = SPOOL_R_PYSTACK;
	put(&b, 1);
	put(&b, 0);
	put(&b, 1);
	put(&b, 1);
	put(&b, 5);
	put_alloc(&b, 500, 0x5000, 1);
	transcode(&b, &t, &st);
	ck_assert_uint_eq(st.n_bad_segments, 1);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 4);
	e = memscope_evbuf_get(t.evs, 0);
	ck_assert_int_eq(e->size, 100);
	ck_assert_str_eq(frames(&t, e->stack_py), "/x/prog.py(12): leak|/x/prog.py(30): <module>");
	ck_assert_uint_eq(e->stack_c, 0);
	e = memscope_evbuf_get(t.evs, 2); /* 400 of thread 2 comes before: by time, then thread */
	ck_assert_int_eq(e->size, 200);
	ck_assert_str_eq(frames(&t, e->stack_py), "/x/prog.py(13): leak");
	ck_assert_str_eq(frames(&t, e->stack_c), "[0x1234]");
	e = memscope_evbuf_get(t.evs, 3);
	ck_assert_int_eq(e->size, 300);
	ck_assert_uint_eq(e->stack_py, 0);
	ck_assert_str_eq(frames(&t, e->stack_c), "[0x1234]");
	tread_free(&t);
}
END_TEST

START_TEST(python_malformed)
{
	/* each a thread's second record after a PYCODE of id 1: the segment ends there */
	static const unsigned char bad[][8] = {
		{ SPOOL_R_PYCODE, 3, 0, 0 },		  /* code id not the next */
		{ SPOOL_R_PYSTACK, 1, 0, 0 },		  /* no frames */
		{ SPOOL_R_PYSTACK, 1, 5, 1, 1, 1 },	  /* native stack 5 not defined */
		{ SPOOL_R_PYSTACK, 2, 0, 1, 1, 1 },	  /* stack id not the next */
		{ SPOOL_R_PYSTACK, 1, 0, 1, 0, 1 },	  /* code id 0 */
		{ SPOOL_R_PYSTACK, 1, 0, 0x81, 1, 1, 1 }, /* 129 frames */
	};
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sb b;
		struct tread t;
		struct memscope_record_stats st;
		sb_start(&b);
		sb_segment(&b, 0, 7);
		b.buf[b.at++] = SPOOL_R_PYCODE;
		put(&b, 1);
		put_text(&b, "f.py");
		put_text(&b, "f");
		memcpy(b.buf + b.at, bad[i], sizeof(bad[i]));
		b.at += sizeof(bad[i]);
		put_alloc(&b, 1, 0x10, 0);
		transcode(&b, &t, &st);
		ck_assert_msg(st.n_bad_segments == 1, "case %u", i);
		ck_assert_uint_eq(memscope_evbuf_count(t.evs), 0);
		tread_free(&t);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("spool");

	tcase_add_test(tc, python_frames);
	tcase_add_test(tc, python_malformed);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
