/* memscope-record's spool turned into a capture file: the threads' segments merged by time,
 * frees paired with their blocks by address, stacks symbolized (formats/record.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/capture.h"
#include "memscope/record.h"
#include "memscope/strtab.h"
#include "memscope/symbolize.h"
#include "spool_fmt.h"

/* one segment of the spool */
struct seg {
	uint64_t tid, off, len;
	uint32_t thread, seq; /* tid and thread together name the thread */
};

/* the next event of a thread, decoded */
struct pending {
	unsigned type; /* SPOOL_R_ALLOC | func, ... */
	uint64_t tick, ptr, size, id;
	uint32_t stack, stack_py; /* strtab stack ids of Call Stack(C) and Call Stack(Python) */
	uint64_t cut;		  /* its native stack's (struct stack_ids) */
	unsigned what;
	const unsigned char *text;
	size_t text_len;
};

/* a stack of the spool: its native frames and its Python frames, as strtab stack ids */
struct stack_ids {
	uint32_t c, py;
	uint64_t cut; /* cut short (SPOOL_R_STACK_CUT): 1 + its last pc (0: no frame); else 0 */
};

/* a module of the modules file, and how many allocations' stacks were cut short in it */
struct cut_module {
	uint64_t lo, hi, n;
	char name[64]; /* its file's name */
};

/* a Python function the spool names (PYCODE), its names borrowed from the map */
struct py_code {
	const unsigned char *file, *func;
	size_t file_len, func_len;
};

/* a thread's cursor over its segments */
struct thread {
	uint64_t tid;
	size_t first, n_segs, at; /* its segments: segs[first .. first + n_segs), at: current */
	const unsigned char *p, *end;
	uint64_t prev_tick, prev_ptr;
	struct stack_ids *stacks; /* its stack id -> strtab stack ids */
	size_t n_stacks, cap_stacks;
	struct py_code *codes; /* its Python code id - 1 -> names, in the map */
	size_t n_codes, cap_codes;
	struct pending next;
	int done;
	int freed_by_realloc; /* its last event was a realloc's FREE, of: */
	uint64_t realloc_ptr, realloc_size;
};

struct spool {
	const char *path;
	int unstarted; /* the file has no header: the shim could not write it */
	const unsigned char *map;
	size_t size;
	struct spool_header h;
	struct seg *segs;
	size_t n_segs;
	struct thread *threads;
	size_t n_threads;
	size_t *heap; /* thread indexes by their next event's tick */
	size_t n_heap;
	/* ticks to epoch ns: ns = base_ns + ((tick - base_tick) * mult >> 32) */
	uint64_t base_tick, base_ns, mult;
	struct memscope_strtab *st;
	struct memscope_symbolizer *sym;
	struct u64map pcs; /* pc -> (first, n) in pc_frames */
	uint32_t *pc_frames;
	size_t n_pc_frames, cap_pc_frames;
	uint32_t *frames; /* scratch: one stack's frame string ids */
	size_t cap_frames;
	struct u64map live; /* ptr -> (alloc_id, size) */
	uint64_t serial;
	struct memscope_record_stats *st_out;
	struct cut_module *mods; /* the modules file's, in its order */
	size_t n_mods, cap_mods;
	uint64_t cut_nowhere; /* stacks cut in no module */
	struct memscope_error *err;
	struct memscope_event ev; /* the fields every event of the recording shares */
};

/* ---------------------------------------------------------------- the file */

/*
 * The file's holes (the punched tails of segments, the places of segments whose fallocate
 * failed) made anonymous zero pages of the map, so that reading them never touches the file: on
 * tmpfs a read fault on a hole allocates a page, which on the full disk that stopped the
 * recording is a SIGBUS. The data between them read ahead. A file system without SEEK_HOLE is
 * read as it is.
 */
#ifdef MADV_POPULATE_READ
#define POPULATE MADV_POPULATE_READ /* page tables too, as MAP_POPULATE made them */
#else
#define POPULATE MADV_WILLNEED
#endif

static void map_holes(int fd, unsigned char *m, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), at = 0;

	while (at < size) {
		off_t hole = lseek(fd, (off_t)at, SEEK_HOLE), data;
		size_t lo, hi;

		if (hole < 0 || (size_t)hole >= size)
			hole = (off_t)size;
		if ((size_t)hole > at) /* at is in data up to hole */
			madvise(m + (at & ~(page - 1)), (size_t)hole - (at & ~(page - 1)),
				POPULATE);
		if ((size_t)hole >= size)
			break;
		data = lseek(fd, hole, SEEK_DATA);
		if (data < 0 || (size_t)data > size)
			data = (off_t)size; /* ENXIO: a hole up to the end */
		/* whole pages only: a partial page keeps its file bytes (zeros where holes are) */
		lo = ((size_t)hole + page - 1) & ~(page - 1);
		hi = (size_t)data == size ? (size + page - 1) & ~(page - 1)
					  : (size_t)data & ~(page - 1);
		if (hi > lo)
			mmap(m + lo, hi - lo, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				-1, 0);
		at = (size_t)data;
	}
}

/* A spool file the shim made but could not write its header into (the disk full as the
 * recording started, formats/record.md 1.3): nothing was recorded. */
static int unstarted(struct spool *s)
{
	s->unstarted = 1;
	return memscope_error_set(s->err, MEMSCOPE_E_IO, s->path, 0,
		"nothing recorded: the shim could not write the spool's header");
}

static int load(struct spool *s)
{
	struct stat sb;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC), rc = 0;
	void *m;

	if (fd < 0)
		return memscope_error_set(s->err, MEMSCOPE_E_IO, s->path, 0, "%s", strerror(errno));
	if (fstat(fd, &sb)) {
		rc = memscope_error_set(s->err, MEMSCOPE_E_IO, s->path, 0, "%s", strerror(errno));
		goto out;
	}
	if ((uint64_t)sb.st_size < sizeof(struct spool_header)) {
		rc = unstarted(s);
		goto out;
	}
	s->size = (size_t)sb.st_size;
	m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		rc = memscope_error_set(s->err, MEMSCOPE_E_IO, s->path, 0, "%s", strerror(errno));
		goto out;
	}
	map_holes(fd, m, s->size);
	s->map = m;
	memcpy(&s->h, s->map, sizeof(s->h));
	if (!memcmp(s->h.magic, "\0\0\0\0\0\0\0\0", 8))
		rc = unstarted(s);
	else if (memcmp(s->h.magic, SPOOL_MAGIC, 8))
		rc = memscope_error_set(
			s->err, MEMSCOPE_E_INVALID, s->path, 0, "not a memscope-record spool");
	else if (s->h.version != SPOOL_VERSION || s->h.header_len != SPOOL_HEADER_LEN ||
		 s->h.seg_len != SPOOL_SEG_MIN)
		rc = memscope_error_set(s->err, MEMSCOPE_E_UNSUPPORTED, s->path, 0,
			"spool version %u is not this memscope's (%u)", s->h.version,
			SPOOL_VERSION);
	else if (s->h.clock > SPOOL_CLOCK_TSC || s->h.depth > SPOOL_DEPTH_MAX ||
		 s->h.cmdline_len > SPOOL_HEADER_LEN - sizeof(s->h) ||
		 s->h.cmdline_len > s->size - sizeof(s->h))
		rc = memscope_error_set_offset(
			s->err, MEMSCOPE_E_INVALID, s->path, 0, "malformed spool header");
out:
	close(fd);
	return rc;
}

/* s made afresh for the spool file at path, its header loaded (load's result) */
static int open_spool(struct spool *s, const char *path, struct memscope_error *err)
{
	memset(s, 0, sizeof(*s));
	memscope_error_clear(err);
	s->path = path;
	s->err = err;
	return load(s);
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	int c = MS__CMP(x->tid, y->tid);

	c = c ? c : MS__CMP(x->thread, y->thread);
	return c ? c : MS__CMP(x->seq, y->seq);
}

/* The segments, each thread's in order, and a cursor per thread. */
static int find_segments(struct spool *s)
{
	size_t cap = 0, i, cap_t = 0;
	uint64_t off = SPOOL_HEADER_LEN;
	struct spool_seg h;

	while (off + SPOOL_SEG_HEAD <= s->size) {
		memcpy(&h, s->map + off, sizeof(h));
		if (h.magic != SPOOL_SEG_MAGIC || h.len < SPOOL_SEG_MIN || h.len % SPOOL_SEG_MIN ||
			h.len > SPOOL_SEG_MAX) {
			off += SPOOL_SEG_MIN; /* an unwritten segment: zeros up to the next one */
			continue;
		}
		if (ms__grow_array(&s->segs, &cap, s->n_segs + 1, sizeof(*s->segs)))
			return MEMSCOPE_E_NOMEM;
		s->segs[s->n_segs].tid = h.tid;
		s->segs[s->n_segs].seq = h.seq;
		s->segs[s->n_segs].thread = h.thread;
		s->segs[s->n_segs].off = off;
		s->segs[s->n_segs].len = off + h.len <= s->size ? h.len : s->size - off;
		/* the earliest and latest calibration pairs fit the clock */
		if (h.tick < s->base_tick) {
			s->base_tick = h.tick;
			s->base_ns = h.mono_ns;
		}
		s->n_segs++;
		off += h.len;
	}
	if (s->n_segs)
		qsort(s->segs, s->n_segs, sizeof(*s->segs), seg_cmp);
	for (i = 0; i < s->n_segs; i++) {
		struct thread *t;
		if (i && s->segs[i].tid == s->segs[i - 1].tid &&
			s->segs[i].thread == s->segs[i - 1].thread) {
			s->threads[s->n_threads - 1].n_segs++;
			continue;
		}
		if (ms__grow_array(&s->threads, &cap_t, s->n_threads + 1, sizeof(*s->threads)))
			return MEMSCOPE_E_NOMEM;
		t = &s->threads[s->n_threads++];
		memset(t, 0, sizeof(*t));
		t->tid = s->segs[i].tid;
		t->first = i;
		t->n_segs = 1;
		t->at = i;
		t->p = t->end = NULL;
	}
	return 0;
}

/* The clock: ticks to epoch ns, fitted to the earliest and latest pairs. */
static void fit_clock(struct spool *s, const struct memscope_record_info *info)
{
	uint64_t hi_tick = s->h.tick0, hi_ns = s->h.mono0_ns, dt, dn;
	size_t i;

	if (s->h.tick0 <= s->base_tick) {
		s->base_tick = s->h.tick0;
		s->base_ns = s->h.mono0_ns;
	}
	for (i = 0; i < s->n_segs; i++) {
		const struct spool_seg *h = (const void *)(s->map + s->segs[i].off);
		uint64_t tick, ns;
		memcpy(&tick, &h->tick, 8);
		memcpy(&ns, &h->mono_ns, 8);
		if (tick > hi_tick) {
			hi_tick = tick;
			hi_ns = ns;
		}
	}
	if (s->h.exit_tick > hi_tick) {
		hi_tick = s->h.exit_tick;
		hi_ns = s->h.exit_mono_ns;
	}
	if (info && info->end_tick > hi_tick) {
		hi_tick = info->end_tick;
		hi_ns = info->end_mono_ns;
	}
	s->mult = (uint64_t)1 << 32; /* CLOCK_MONOTONIC ticks, or nothing to fit to */
	dt = hi_tick - s->base_tick;
	dn = hi_ns - s->base_ns;
	if (s->h.clock == SPOOL_CLOCK_TSC && dt > 0 && hi_ns > s->base_ns &&
		dn < ((uint64_t)1 << 62))
		s->mult = (uint64_t)(((unsigned __int128)dn << 32) / dt);
	/* mono to epoch, once */
	s->base_ns = s->base_ns - s->h.mono0_ns + s->h.real0_ns;
}

static uint64_t tick_ns(const struct spool *s, uint64_t tick)
{
	if (tick < s->base_tick)
		return s->base_ns;
	return s->base_ns + (uint64_t)(((unsigned __int128)(tick - s->base_tick) * s->mult) >> 32);
}

/* ---------------------------------------------------------------- stacks */

struct frames_ctx {
	struct spool *s;
	int rc;
};

static int add_frame(void *arg, const char *text, size_t len)
{
	struct frames_ctx *c = arg;
	struct spool *s = c->s;
	uint32_t id;

	if (ms__grow_array(
		    &s->pc_frames, &s->cap_pc_frames, s->n_pc_frames + 1, sizeof(*s->pc_frames)) ||
		memscope_strtab_intern(s->st, text, len, &id))
		return c->rc = MEMSCOPE_E_NOMEM;
	s->pc_frames[s->n_pc_frames++] = id;
	return 0;
}

/* A malformed stack record: 1. */
/* Append pc's frames (symbolized once per pc) to the scratch stack at *n. */
static int pc_frames(struct spool *s, uint64_t pc, size_t *n)
{
	uint64_t first, count;
	struct frames_ctx c = { s, 0 };
	int rc;

	if (!ms__u64map_get(&s->pcs, pc, &first, &count)) {
		first = s->n_pc_frames;
		rc = memscope_symbolizer_frames(s->sym, pc, add_frame, &c);
		if (rc || c.rc)
			return rc ? rc : c.rc;
		count = s->n_pc_frames - first;
		if (ms__u64map_put(&s->pcs, pc, first, count))
			return MEMSCOPE_E_NOMEM;
	}
	if (ms__grow_array(&s->frames, &s->cap_frames, *n + count, sizeof(*s->frames)))
		return MEMSCOPE_E_NOMEM;
	memcpy(s->frames + *n, s->pc_frames + first, count * sizeof(*s->frames));
	*n += count;
	return 0;
}

/* ---------------------------------------------------------------- records */

static int get(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	int n = ms__varint_get(*p, (size_t)(end - *p), v);

	if (n <= 0)
		return -1;
	*p += n;
	return 0;
}

/* Enter the thread's next segment; 0 when it has none left. */
static int next_seg(struct spool *s, struct thread *t)
{
	const struct seg *g;
	uint64_t tick;

	if (t->p && ++t->at >= t->first + t->n_segs)
		return 0;
	g = &s->segs[t->at];
	memcpy(&tick, s->map + g->off + offsetof(struct spool_seg, tick), 8);
	t->p = s->map + g->off + SPOOL_SEG_HEAD;
	t->end = s->map + g->off + g->len;
	t->prev_tick = tick;
	t->prev_ptr = 0;
	return 1;
}

static int define_stack(struct spool *s, struct thread *t, const unsigned char **pp,
	const unsigned char *end, int cut)
{
	uint64_t id, n, d, pc = 0, i;
	size_t nf = 0;
	uint32_t sid;
	int rc;

	if (get(pp, end, &id) || get(pp, end, &n) || id != t->n_stacks + 1 || n > SPOOL_DEPTH_MAX)
		return 1;
	for (i = 0; i < n; i++) {
		if (get(pp, end, &d))
			return 1;
		pc += (uint64_t)unzigzag(d);
		if ((rc = pc_frames(s, pc, &nf)))
			return rc;
	}
	if (memscope_strtab_intern_stack(s->st, s->frames, nf, &sid) ||
		ms__grow_array(&t->stacks, &t->cap_stacks, t->n_stacks + 1, sizeof(*t->stacks)))
		return MEMSCOPE_E_NOMEM;
	t->stacks[t->n_stacks].c = sid;
	t->stacks[t->n_stacks].cut = cut ? 1 + pc : 0;
	t->stacks[t->n_stacks++].py = 0;
	return 0;
}

/* A PYCODE record: 0, 1 when malformed, or MEMSCOPE_E_NOMEM. */
static int define_code(struct thread *t, const unsigned char **pp, const unsigned char *end)
{
	struct py_code c;
	uint64_t id, n;

	if (get(pp, end, &id) || id != t->n_codes + 1 || get(pp, end, &n) ||
		n > SPOOL_PY_NAME_MAX || n > (uint64_t)(end - *pp))
		return 1;
	c.file = *pp;
	c.file_len = (size_t)n;
	*pp += n;
	if (get(pp, end, &n) || n > SPOOL_PY_NAME_MAX || n > (uint64_t)(end - *pp))
		return 1;
	c.func = *pp;
	c.func_len = (size_t)n;
	*pp += n;
	if (ms__grow_array(&t->codes, &t->cap_codes, t->n_codes + 1, sizeof(*t->codes)))
		return MEMSCOPE_E_NOMEM;
	t->codes[t->n_codes++] = c;
	return 0;
}

/* A PYSTACK record: its Python frames "file(line): function", innermost first, as a stack of
 * their own beside the native stack it names. 0, 1 when malformed, or MEMSCOPE_E_NOMEM. */
static int define_py_stack(
	struct spool *s, struct thread *t, const unsigned char **pp, const unsigned char *end)
{
	uint64_t id, native, n, code, line, i;
	char text[2 * SPOOL_PY_NAME_MAX + 32];
	uint32_t sid;

	if (get(pp, end, &id) || id != t->n_stacks + 1 || get(pp, end, &native) ||
		native > t->n_stacks || get(pp, end, &n) || !n || n > SPOOL_PY_DEPTH_MAX)
		return 1;
	if (ms__grow_array(&s->frames, &s->cap_frames, n, sizeof(*s->frames)))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < n; i++) {
		const struct py_code *c;
		int len;
		if (get(pp, end, &code) || !code || code > t->n_codes || get(pp, end, &line) ||
			line > INT32_MAX)
			return 1;
		c = &t->codes[code - 1];
		len = snprintf(text, sizeof(text), "%.*s(%llu): %.*s", (int)c->file_len,
			(const char *)c->file, (unsigned long long)line, (int)c->func_len,
			(const char *)c->func);
		if (memscope_strtab_intern(s->st, text, (size_t)len, &s->frames[i]))
			return MEMSCOPE_E_NOMEM;
	}
	if (memscope_strtab_intern_stack(s->st, s->frames, (size_t)n, &sid) ||
		ms__grow_array(&t->stacks, &t->cap_stacks, t->n_stacks + 1, sizeof(*t->stacks)))
		return MEMSCOPE_E_NOMEM;
	t->stacks[t->n_stacks].c = native ? t->stacks[native - 1].c : 0;
	t->stacks[t->n_stacks].cut = native ? t->stacks[native - 1].cut : 0;
	t->stacks[t->n_stacks++].py = sid;
	return 0;
}

/* Decode the thread's next event into t->next (stack definitions on the way); t->done at the
 * end. A malformed record ends its segment. 0 or MEMSCOPE_E_NOMEM. */
static int advance(struct spool *s, struct thread *t)
{
	struct pending *e = &t->next;

	for (;;) {
		const unsigned char *p = t->p, *end = t->end;
		uint64_t v, d;
		unsigned type;
		int rc;

		if (!p || p >= end || !*p) {
			if (!next_seg(s, t)) {
				t->done = 1;
				return 0;
			}
			continue;
		}
		type = *p++;
		memset(e, 0, sizeof(*e));
		e->type = type;
		if (type == SPOOL_R_STACK || type == SPOOL_R_STACK_CUT || type == SPOOL_R_PYCODE ||
			type == SPOOL_R_PYSTACK) {
			rc = type == SPOOL_R_STACK	 ? define_stack(s, t, &p, end, 0)
			     : type == SPOOL_R_STACK_CUT ? define_stack(s, t, &p, end, 1)
			     : type == SPOOL_R_PYCODE	 ? define_code(t, &p, end)
							 : define_py_stack(s, t, &p, end);
			if (rc > 0)
				goto bad;
			if (rc)
				return rc;
			t->p = p;
			continue;
		}
		if (get(&p, end, &d))
			goto bad;
		e->tick = t->prev_tick + d;
		if (type == SPOOL_R_MARK) {
			if (p >= end || *p > SPOOL_RANGE_END)
				goto bad;
			e->what = *p++;
			if (get(&p, end, &e->id) || get(&p, end, &v) || v > SPOOL_TEXT_MAX ||
				v > (uint64_t)(end - p))
				goto bad;
			e->text = p;
			e->text_len = (size_t)v;
			p += v;
		} else {
			unsigned kind = type & 0xe0, func = type & 0x1f;
			if ((kind != SPOOL_R_ALLOC && kind != SPOOL_R_FREE &&
				    type != SPOOL_R_UNMAP && type != SPOOL_R_REVIVE) ||
				(kind != SPOOL_R_UNMAP && (func == MEMSCOPE_FUNC_NONE ||
								  func >= MEMSCOPE_FUNC_COUNT_)))
				goto bad;
			if (kind == SPOOL_R_ALLOC && get(&p, end, &e->size))
				goto bad;
			if (get(&p, end, &v))
				goto bad;
			e->ptr = t->prev_ptr + (uint64_t)unzigzag(v);
			if (get(&p, end, &v) || v > t->n_stacks)
				goto bad;
			e->stack = v ? t->stacks[v - 1].c : 0;
			e->stack_py = v ? t->stacks[v - 1].py : 0;
			e->cut = v ? t->stacks[v - 1].cut : 0;
			if (type == SPOOL_R_UNMAP && get(&p, end, &e->size))
				goto bad;
			t->prev_ptr = e->ptr;
		}
		t->prev_tick = e->tick;
		t->p = p;
		return 0;
	bad:
		s->st_out->n_bad_segments++;
		t->p = t->end; /* on to the next segment */
	}
}

/* ---------------------------------------------------------------- the merge */

static int before(const struct spool *s, size_t a, size_t b)
{
	const struct thread *x = &s->threads[a], *y = &s->threads[b];

	return x->next.tick < y->next.tick || (x->next.tick == y->next.tick && a < b);
}

static void sift_down(struct spool *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i, tmp;
		if (l < s->n_heap && before(s, s->heap[l], s->heap[m]))
			m = l;
		if (l + 1 < s->n_heap && before(s, s->heap[l + 1], s->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = tmp;
		i = m;
	}
}

/* An allocation's native stack counted, and when cut short (cut: struct stack_ids), where. */
static void count_cut(struct spool *s, uint64_t cut)
{
	size_t i;

	s->st_out->n_stacks++;
	if (!cut)
		return;
	s->st_out->n_stacks_cut++;
	for (i = 0; i < s->n_mods; i++)
		if (cut - 1 >= s->mods[i].lo && cut - 1 < s->mods[i].hi) {
			s->mods[i].n++;
			return;
		}
	s->cut_nowhere++;
}

/* The modules where most stacks were cut, "python3.11, libc.so.6", into st->cut_where (three at
 * most, most first; "code in no module" for stacks cut outside them), and a "stacks.cut" note
 * in the capture, "1234 of 56789 (python3.11 1200, libc.so.6 34)", when any was cut. */
static int say_cut(struct spool *s, struct memscope_capture_writer *w)
{
	struct memscope_record_stats *st = s->st_out;
	char text[512];
	size_t k, i, t = 0, at = 0;
	int used[3] = { -1, -1, -1 };

	if (!st->n_stacks_cut)
		return 0;
	t = (size_t)snprintf(text, sizeof(text), "%llu of %llu (",
		(unsigned long long)st->n_stacks_cut, (unsigned long long)st->n_stacks);
	for (k = 0; k < 3; k++) {
		size_t best = SIZE_MAX;
		uint64_t n = s->cut_nowhere;
		const char *name = "code in no module";
		for (i = 0; i < s->n_mods; i++)
			if (s->mods[i].n > n && (int)i != used[0] && (int)i != used[1]) {
				best = i;
				n = s->mods[i].n;
			}
		if (!n)
			break;
		if (best != SIZE_MAX) {
			used[k] = (int)best;
			name = s->mods[best].name;
		} else {
			s->cut_nowhere = 0; /* named once */
		}
		at += (size_t)snprintf(st->cut_where + at, sizeof(st->cut_where) - at, "%s%s",
			k ? ", " : "", name);
		if (at >= sizeof(st->cut_where))
			at = sizeof(st->cut_where) - 1;
		t += (size_t)snprintf(text + t, sizeof(text) - t, "%s%s %llu", k ? ", " : "", name,
			(unsigned long long)n);
		if (t >= sizeof(text))
			t = sizeof(text) - 1;
	}
	if (t + 2 <= sizeof(text))
		memcpy(text + t, ")", 2);
	return memscope_capture_writer_meta(w, "stacks.cut", text, s->err);
}

/* A module noted for say_cut. 0 or MEMSCOPE_E_NOMEM. */
static int add_cut_module(struct spool *s, const char *path, uint64_t lo, uint64_t hi)
{
	const char *slash = strrchr(path, '/');
	struct cut_module *m;
	size_t len;

	if (ms__grow_array(&s->mods, &s->cap_mods, s->n_mods + 1, sizeof(*s->mods)))
		return MEMSCOPE_E_NOMEM;
	m = &s->mods[s->n_mods++];
	m->lo = lo;
	m->hi = hi;
	m->n = 0;
	path = slash ? slash + 1 : path;
	len = strlen(path) < sizeof(m->name) ? strlen(path) : sizeof(m->name) - 1; /* cut short */
	memcpy(m->name, path, len);
	m->name[len] = '\0';
	return 0;
}

static int emit(struct spool *s, struct memscope_capture_writer *w, struct thread *t)
{
	const struct pending *e = &t->next;
	struct memscope_record_stats *st = s->st_out;
	struct memscope_event *ev = &s->ev; /* the fields of every event set here, the rest fixed */
	unsigned kind = e->type == SPOOL_R_REVIVE ? SPOOL_R_ALLOC : e->type & 0xe0;
	uint64_t a, b, size = e->size;
	size_t n_live;
	char name[64];

	ev->id = st->n_events;
	ev->ts_ns = tick_ns(s, e->tick);
	ev->tid = t->tid;
	ev->line = st->n_events + 1;
	ev->alloc_id = 0;
	ev->size = 0;
	if (e->type == SPOOL_R_MARK) {
		size_t n = e->text_len;
		ev->kind = MEMSCOPE_KIND_MSTX;
		ev->subtype = e->what == SPOOL_MARK	     ? MEMSCOPE_SUB_MARK
			      : e->what == SPOOL_RANGE_START ? MEMSCOPE_SUB_RANGE_START
							     : MEMSCOPE_SUB_RANGE_END;
		ev->pool = 0;
		ev->func = 0;
		ev->ptr = 0;
		ev->stack_c = 0;
		ev->stack_py = 0;
		ev->flags = MEMSCOPE_EV_NAME_QUOTED;
		if (e->what == SPOOL_RANGE_END) {
			memcpy(name, "Range end from id ", 18);
			n = 18 + ms__fmt_u64(name + 18, e->id);
		}
		if (memscope_strtab_intern(s->st,
			    e->what == SPOOL_RANGE_END ? name : (const char *)e->text, n,
			    &ev->name))
			return MEMSCOPE_E_NOMEM;
		st->n_marks++;
	} else {
		ev->func = e->type == SPOOL_R_UNMAP    ? MEMSCOPE_FUNC_MUNMAP
			   : e->type == SPOOL_R_REVIVE ? MEMSCOPE_FUNC_REALLOC
						       : (e->type & 0x1f);
		if (e->type == SPOOL_R_REVIVE) { /* a failed realloc: the block its FREE released */
			if (!t->freed_by_realloc || t->realloc_ptr != e->ptr) {
				st->n_unmatched++;
				return 0;
			}
			size = t->realloc_size;
		}
		t->freed_by_realloc = 0;
		ev->subtype = ev->func == MEMSCOPE_FUNC_MMAP || ev->func == MEMSCOPE_FUNC_MUNMAP
				      ? MEMSCOPE_SUB_MMAP
				      : MEMSCOPE_SUB_HOST;
		ev->pool = ev->subtype;
		ev->ptr = e->ptr;
		ev->stack_c = e->stack;
		ev->stack_py = e->stack_py;
		ev->name = MEMSCOPE_STR_NA;
		ev->flags = MEMSCOPE_EV_PTR;
		if (ev->func == MEMSCOPE_FUNC_REALLOC)
			ev->flags |= MEMSCOPE_EV_REALLOC;
		if (kind == SPOOL_R_ALLOC) {
			ev->kind = MEMSCOPE_KIND_MALLOC;
			ev->alloc_id = ++s->serial;
			ev->size = (int64_t)(size > INT64_MAX ? INT64_MAX : size);
			ev->flags |= MEMSCOPE_EV_SIZE | MEMSCOPE_EV_ALLOC_ID;
			n_live = s->live.n;
			if (ms__u64map_put(&s->live, e->ptr, ev->alloc_id, (uint64_t)ev->size))
				return MEMSCOPE_E_NOMEM;
			st->n_reused +=
				s->live.n == n_live; /* an overwrite: the address was live */
			st->n_allocs++;
			if (e->stack)
				count_cut(s, e->cut);
		} else {
			ev->kind = MEMSCOPE_KIND_FREE;
			if (e->type == SPOOL_R_UNMAP && !ms__u64map_get(&s->live, e->ptr, &a, &b)) {
				st->n_partial_unmaps++;
				return 0;
			}
			if (ms__u64map_del(&s->live, e->ptr, &a, &b)) {
				ev->alloc_id = a;
				ev->size = (int64_t)b;
				ev->flags |= MEMSCOPE_EV_SIZE | MEMSCOPE_EV_ALLOC_ID;
				t->freed_by_realloc = ev->func == MEMSCOPE_FUNC_REALLOC;
				t->realloc_ptr = e->ptr;
				t->realloc_size = b;
			} else {
				st->n_unmatched++;
			}
			st->n_frees++;
		}
	}
	st->n_events++;
	return memscope_capture_writer_write(w, ev, s->err);
}

/* ---------------------------------------------------------------- modules and facts */

static int read_modules(struct spool *s, struct memscope_capture_writer *w)
{
	char path[SPOOL_PATH_MAX + 16], text[SPOOL_PATH_MAX + 200];
	const char *slash = strrchr(s->path, '/'), *base = slash ? slash + 1 : s->path;
	unsigned char *buf = NULL;
	size_t n = 0, at = 0, dir_len = (size_t)(base - s->path);
	struct stat sb;
	int fd, rc = 0;

	if (dir_len + strlen(base) + 1 > sizeof(path) || base[0] != 'p')
		return 0;
	memcpy(path, s->path, dir_len);
	path[dir_len] = 'm';
	strcpy(path + dir_len + 1, base + 1);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no stacks, or no module noted */
	if (fstat(fd, &sb) || sb.st_size > (64 << 20) || !(buf = malloc((size_t)sb.st_size + 1)))
		goto out;
	while (n < (size_t)sb.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)sb.st_size - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	while (at + 4 <= n) {
		uint32_t len;
		uint64_t bias, lo, hi;
		size_t bid_len, path_len, k, t;
		memcpy(&len, buf + at, 4);
		if (len < SPOOL_MODULE_FIXED - 4 || len > n - at - 4)
			break; /* cut: the process was killed while noting it */
		memcpy(&bias, buf + at + 4, 8);
		memcpy(&lo, buf + at + 12, 8);
		memcpy(&hi, buf + at + 20, 8);
		bid_len = buf[at + 28];
		if (bid_len > SPOOL_BUILD_ID_MAX || SPOOL_MODULE_FIXED - 4 + bid_len > len)
			break;
		path_len = len - (SPOOL_MODULE_FIXED - 4) - bid_len;
		memcpy(path, buf + at + 29 + bid_len, path_len < SPOOL_PATH_MAX ? path_len : 0);
		path[path_len < SPOOL_PATH_MAX ? path_len : 0] = 0;
		if ((rc = memscope_symbolizer_add_module(
			     s->sym, path, bias, lo, hi, buf + at + 29, bid_len)) ||
			(rc = add_cut_module(s, path, lo, hi)))
			goto out;
		t = (size_t)snprintf(
			text, sizeof(text), "%s 0x%llx ", path, (unsigned long long)bias);
		for (k = 0; k < bid_len && t + 3 < sizeof(text); k++)
			t += (size_t)snprintf(text + t, sizeof(text) - t, "%02x", buf[at + 29 + k]);
		if ((rc = memscope_capture_writer_meta(w, "module", text, s->err)))
			goto out;
		s->st_out->n_modules++;
		at += 4 + len;
	}
out:
	free(buf);
	close(fd);
	return rc;
}

static void exit_text(
	const struct spool *s, const struct memscope_record_info *info, char *out, size_t size)
{
	if (info && info->exec)
		snprintf(out, size, "exec");
	else if (info && info->status_known && info->signal)
		snprintf(out, size, "signal %d", info->signal);
	else if (s->h.exit_kind == SPOOL_EXIT_SIGNAL)
		snprintf(out, size, "signal %llu", (unsigned long long)s->h.exit_status);
	else if (s->h.exit_kind == SPOOL_EXIT__EXIT)
		snprintf(out, size, "_exit %llu", (unsigned long long)s->h.exit_status);
	else if (info && info->status_known)
		snprintf(out, size, "exit %d", info->exit_code);
	else if (s->h.exit_kind == SPOOL_EXIT_EXIT)
		snprintf(out, size, "exit %llu", (unsigned long long)s->h.exit_status);
	else if (s->h.exit_kind == SPOOL_EXIT_RETURN)
		snprintf(out, size, "exit, status unseen");
	else
		snprintf(out, size, "unknown");
}

static void program_name(const struct spool *s, char *out, size_t size)
{
	const char *args = (const char *)s->map + sizeof(s->h);
	size_t n = strnlen(args, s->h.cmdline_len);

	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), args);
}

static int write_facts(struct spool *s, struct memscope_capture_writer *w)
{
	char num[24], cmd[SPOOL_HEADER_LEN];
	const char *args = (const char *)s->map + sizeof(s->h);
	size_t n = s->h.cmdline_len, i;
	int rc;

	memcpy(cmd, args, n);
	while (n && !cmd[n - 1])
		n--;
	cmd[n] = 0;
	program_name(s, s->st_out->program, sizeof(s->st_out->program));
	for (i = 0; i < n; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	num[ms__fmt_u64(num, s->h.pid)] = 0;
	if ((rc = memscope_capture_writer_meta(w, "process.pid", num, s->err)))
		return rc;
	num[ms__fmt_u64(num, s->h.ppid)] = 0;
	if ((rc = memscope_capture_writer_meta(w, "process.ppid", num, s->err)) ||
		(rc = memscope_capture_writer_meta(w, "process.cmdline", cmd, s->err)) ||
		(rc = memscope_capture_writer_meta(w, "record.clock",
			 s->h.clock == SPOOL_CLOCK_TSC ? "tsc" : "monotonic", s->err)))
		return rc;
	num[ms__fmt_u64(num, s->h.depth)] = 0;
	return memscope_capture_writer_meta(w, "record.stack_depth", num, s->err);
}

int memscope_record_probe(
	const char *path, struct memscope_record_image *im, struct memscope_error *err)
{
	struct spool s;
	int rc;

	memset(im, 0, sizeof(*im));
	if (!(rc = open_spool(&s, path, err))) {
		im->pid = s.h.pid;
		im->ppid = s.h.ppid;
		im->gen = s.h.gen;
		im->forked = s.h.forked != 0;
		im->start_ns = s.h.mono0_ns;
		program_name(&s, im->program, sizeof(im->program));
	}
	if (s.map)
		munmap((void *)s.map, s.size);
	return rc;
}

/* ---------------------------------------------------------------- entry */

int memscope_record_transcode(const char *path, FILE *out, const struct memscope_record_info *info,
	struct memscope_record_stats *st, struct memscope_error *err)
{
	struct spool s;
	struct memscope_capture_writer *w = NULL;
	size_t i;
	int rc;

	memset(st, 0, sizeof(*st));
	snprintf(st->exit_text, sizeof(st->exit_text), "unknown");
	rc = open_spool(&s, path, err);
	s.st_out = st;
	s.base_tick = UINT64_MAX;
	if (rc) {
		st->unstarted = s.unstarted;
		goto out;
	}
	st->pid = s.h.pid;
	s.ev.pid = s.h.pid;
	s.ev.device = MEMSCOPE_DEVICE_HOST;
	s.ev.name = MEMSCOPE_STR_NA;
	st->ppid = s.h.ppid;
	st->gen = s.h.gen;
	st->forked = s.h.forked != 0;
	st->stopped = s.h.stopped > INT32_MAX ? EIO : (int)s.h.stopped;
	st->lost = s.h.lost ? s.h.lost - 1 : UINT64_MAX;
	s.st = memscope_strtab_new();
	s.sym = memscope_symbolizer_new();
	if (!s.st || !s.sym || !(w = memscope_capture_writer_new(out, s.st))) {
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, path, 0, "out of memory");
		goto out;
	}
	if ((rc = find_segments(&s)))
		goto nomem;
	fit_clock(&s, info);
	exit_text(&s, info, st->exit_text, sizeof(st->exit_text));
	if ((rc = write_facts(&s, w)) || (rc = read_modules(&s, w)))
		goto fail;
	st->n_threads = s.n_threads;
	if (!(s.heap = malloc((s.n_threads ? s.n_threads : 1) * sizeof(*s.heap))))
		goto nomem;
	for (i = 0; i < s.n_threads; i++) {
		if ((rc = advance(&s, &s.threads[i])))
			goto fail;
		if (!s.threads[i].done)
			s.heap[s.n_heap++] = i;
	}
	for (i = s.n_heap; i-- > 0;)
		sift_down(&s, i);
	while (s.n_heap) {
		struct thread *t = &s.threads[s.heap[0]];
		if ((rc = emit(&s, w, t)) || (rc = advance(&s, t)))
			goto fail;
		if (t->done)
			s.heap[0] = s.heap[--s.n_heap];
		if (s.n_heap > 1)
			sift_down(&s, 0);
	}
	{
		const char *p = NULL, *why = NULL;
		st->n_modules_unread = memscope_symbolizer_skipped(s.sym, &p, &why);
		if (st->n_modules_unread)
			snprintf(st->unread, sizeof(st->unread), "%s: %s", p ? p : "?",
				why ? why : "?");
	}
	st->live_blocks = s.live.n;
	for (i = 0; i <= s.live.mask && s.live.e; i++)
		if (s.live.e[i].used)
			st->live_bytes += s.live.e[i].b;
	if (st->stopped) /* the capture says so: readers refuse it unless lenient */
		memscope_capture_writer_stop(
			w, MEMSCOPE_CAPTURE_STOP_WRITE, strerror(st->stopped), st->lost);
	if ((rc = say_cut(&s, w)) ||
		(rc = memscope_capture_writer_meta(w, "process.exit", st->exit_text, err)) ||
		(rc = memscope_capture_writer_finish(w, err)))
		goto fail;
	st->bytes = memscope_capture_writer_bytes(w);
	goto out;
nomem:
	rc = MEMSCOPE_E_NOMEM;
fail:
	if (rc == MEMSCOPE_E_NOMEM && !err->code)
		memscope_error_set(err, rc, path, 0, "out of memory");
out:
	memscope_capture_writer_free(w);
	for (i = 0; i < s.n_threads; i++) {
		free(s.threads[i].stacks);
		free(s.threads[i].codes);
	}
	free(s.threads);
	free(s.segs);
	free(s.heap);
	free(s.mods);
	free(s.pc_frames);
	free(s.frames);
	ms__u64map_free(&s.pcs);
	ms__u64map_free(&s.live);
	memscope_symbolizer_free(s.sym);
	memscope_strtab_free(s.st);
	if (s.map)
		munmap((void *)s.map, s.size);
	return rc;
}
