/* The shim's tracker: each thread's records (allocations, frees, markers and the stacks they
 * name) written into its own segment of the spool, a mapped slice of the spool file, without a
 * lock or a system call on the way (formats/record.md, "The spool"). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memscope/event.h"
#include "tracker.h"

#ifdef MEMSCOPE_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

__thread struct rec_thread ms__rec_thr __attribute__((tls_model("initial-exec")));

static inline unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static inline uint64_t zz(uint64_t v)
{
	return (v << 1) ^ (uint64_t)((int64_t)v >> 63);
}

/* ---------------------------------------------------------------- segments */

/* Map the next segment of the spool for this thread. 0, or -1 with recording stopped. */
static int next_segment(void)
{
	struct spool_seg h;
	size_t len;
	off_t off;
	void *m;
	int fd, rc;

	if (!ms__rec_spool_ready())
		return -1;
	if (ms__rec_thr.seg)
		ms__rec_real.munmap(ms__rec_thr.seg, ms__rec_thr.seg_len);
	ms__rec_thr.seg = ms__rec_thr.pos = ms__rec_thr.end = NULL;
	/* a thread's first segment is small (threads that allocate little cost little), each next
	 * one twice as long up to the longest */
	len = ms__rec_thr.seq < 7 ? (size_t)SPOOL_SEG_MIN << ms__rec_thr.seq : SPOOL_SEG_MAX;
	off = (off_t)atomic_fetch_add(&ms__rec.next_off, len);
	fd = ms__rec_spool_fd();
	if (fd < 0) {
		ms__rec_stop(ms__rec.spool, errno);
		return -1;
	}
	/* blocks reserved first: a full disk is an error here, never a SIGBUS later */
	rc = fallocate(fd, 0, off, (off_t)len);
	if (rc && (errno == EOPNOTSUPP || errno == ENOSYS))
		rc = posix_fallocate(fd, off, (off_t)len) ? -1 : 0;
	if (rc) {
		ms__rec_stop(ms__rec.spool, errno);
		return -1;
	}
	m = ms__rec_real.mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (m == MAP_FAILED) {
		ms__rec_stop(ms__rec.spool, errno);
		return -1;
	}
	/* its pages made writable now, in one call, rather than by a fault each while recording */
#ifdef MADV_POPULATE_WRITE
	madvise(m, len, MADV_POPULATE_WRITE);
#endif
	ms__rec_thr.seg = m;
	ms__rec_thr.seg_len = len;
	ms__rec_thr.seg_off = (uint64_t)off;
	ms__rec_thr.prev_tick = rec_ticks();
	ms__rec_thr.prev_ptr = 0;
	memset(&h, 0, sizeof(h));
	h.seq = ms__rec_thr.seq++;
	h.len = (uint32_t)len;
	h.tid = ms__rec_thr.tid;
	h.thread = ms__rec_thr.serial;
	h.tick = ms__rec_thr.prev_tick;
	h.mono_ns = rec_clock_ns(CLOCK_MONOTONIC);
	memcpy(ms__rec_thr.seg + 4, (unsigned char *)&h + 4, sizeof(h) - 4);
	atomic_signal_fence(memory_order_seq_cst);
	h.magic = SPOOL_SEG_MAGIC;
	memcpy(ms__rec_thr.seg, &h.magic, 4);
	ms__rec_thr.pos = ms__rec_thr.seg + SPOOL_SEG_HEAD;
	ms__rec_thr.end = ms__rec_thr.seg + len - 1; /* a zero byte always ends the segment */
	return 0;
}

/* Room for n bytes of record at ms__rec_thr.pos; NULL when recording stopped. */
static inline unsigned char *room(size_t n)
{
	if (UNLIKELY(ms__rec_thr.pos + n > ms__rec_thr.end) && next_segment())
		return NULL;
	return ms__rec_thr.pos;
}

/* Store the type byte that makes the record at ms__rec_thr.pos (ending at end) count. */
static inline void commit(unsigned char type, unsigned char *end)
{
	atomic_signal_fence(memory_order_seq_cst);
	*ms__rec_thr.pos = type;
	ms__rec_thr.pos = end;
}

/* ---------------------------------------------------------------- stacks */

/* The main thread's outermost frame with a frame pointer is main's: its return address lies in
 * glibc's caller of main, __libc_start_call_main just before __libc_start_main (2.34 and
 * later), or __libc_start_main itself (before): a walk that ends there is whole. */
#define START_BEFORE 256u
#define START_AFTER 768u

extern void __libc_start_main(void) __attribute__((weak));

/* Whether pc is a return address into glibc's caller of main (walk). */
static inline int in_start(uintptr_t pc)
{
	uintptr_t start = (uintptr_t)&__libc_start_main;

	return start && pc + START_BEFORE >= start && pc < start + START_AFTER;
}

/* Return addresses by the frame-pointer chain from frame fp (the hook's own), each frame read
 * only when both its words lie between fp and the top of the thread's stack: a chain that leaves
 * it (code without frame pointers keeps anything in the register, -16 say) ends the walk. *cut
 * is set when the walk stopped before the outermost frame: a thread's chain ends with a zero
 * frame pointer (start_thread's), the main thread's at main's frame (START_BEFORE); one cut by
 * the depth asked for is not. */
static inline unsigned walk(uintptr_t *out, const uintptr_t *fp, int *cut)
{
	unsigned n = 0;
	int end = 0; /* the chain ended with a zero frame pointer */
	uintptr_t lo = (uintptr_t)fp,
		  last = ms__rec_thr.stack_hi - 16; /* the highest frame that fits */

	*cut = 0;
	if ((uintptr_t)fp < ms__rec_thr.stack_lo || (uintptr_t)fp > last ||
		ms__rec_thr.stack_hi < 16)
		last = (uintptr_t)fp; /* not on the thread's stack (a signal stack): one frame */
	while (n < ms__rec.depth) {
		if ((uintptr_t)fp < lo || (uintptr_t)fp > last || ((uintptr_t)fp & 7) ||
			fp[1] < 4096)
			break;
		out[n++] = fp[1];
		if ((uintptr_t)fp[0] <= (uintptr_t)fp) {
			end = !fp[0];
			break;
		}
		fp = (const uintptr_t *)fp[0];
	}
	if (n < ms__rec.depth && !end && !(n && in_start(out[n - 1])))
		*cut = 1;
	return n;
}

#ifdef MEMSCOPE_HAVE_LIBUNWIND
/* A stack the frame-pointer walk cut short (fr[0..n), n > 0) unwound again through the
 * modules' .eh_frame by libunwind, from fr[0] on (the frames inside the shim dropped) and, in
 * the main thread, up to main's caller as walk ends; kept when that gives no more frames. *cut
 * is cleared unless it stops short of main's caller in the main thread (another thread's ends
 * at its outermost frame, clone's, or at code without unwind tables). Returns the frames. */
static unsigned unwind(uintptr_t *fr, unsigned n, int *cut)
{
	static _Atomic int policy;
	void *ip[SPOOL_DEPTH_MAX + 8];
	int got, i, k = 0, whole = 0;

	if (!atomic_exchange(&policy, 1))
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_GLOBAL);
	got = unw_backtrace(ip, (int)ms__rec.depth + 8);
	for (i = 0; i < got && (uintptr_t)ip[i] != fr[0]; i++)
		;
	while (i < got && k < (int)ms__rec.depth) {
		fr[k] = (uintptr_t)ip[i++];
		if (in_start(fr[k++])) {
			whole = 1;
			break;
		}
	}
	if (k <= (int)n)
		return n;
	*cut = !whole && k < (int)ms__rec.depth && ms__rec_thr.tid == ms__rec.pid;
	return (unsigned)k;
}
#endif

static void thread_bounds(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &addr, &size)) {
		ms__rec_thr.stack_lo = (uintptr_t)addr;
		ms__rec_thr.stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

static int table_init(void)
{
	void *t = ms__rec_real.mmap(NULL, TABLE_BYTES, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (t == MAP_FAILED)
		return -1;
	ms__rec_thr.table = t;
	ms__rec_thr.arena = (uintptr_t *)(ms__rec_thr.table + TABLE_SLOTS);
	return 0;
}

static void table_reset(void)
{
	memset(ms__rec_thr.table, 0, TABLE_SLOTS * sizeof(struct slot));
	ms__rec_thr.n_in_table = ms__rec_thr.arena_used = 0;
}

/* A native stack's frames past the first that lie in no module end it (no frame pointers
 * there); a frame in a module loaded since the last scan has it noted. Returns how many stay. */
static unsigned in_modules(const uintptr_t *fr, unsigned n)
{
	unsigned keep;

	if (!ms__rec_have_modules())
		ms__rec_scan_modules();
	for (keep = 0; keep < n; keep++) {
		if (!ms__rec_in_module(fr[keep])) {
			ms__rec_scan_modules();
			if (keep && !ms__rec_in_module(fr[keep]))
				break;
		}
	}
	return keep;
}

/* The record defining stack id of kind from w[0..n); 0, or -1 when recording stopped. A native
 * stack cut where its frames leave the known modules is defined as SPOOL_R_STACK_CUT. */
static int define(uint32_t id, const uintptr_t *w, unsigned n, unsigned kind)
{
	unsigned char *p, *q;
	uintptr_t prev = 0;
	int native = kind != SPOOL_R_PYSTACK;
	unsigned i, keep = native ? in_modules(w, n) : n;

	p = room(3 + 10 + 10 + (size_t)keep * 10);
	if (!p)
		return -1;
	if (keep < n)
		kind = SPOOL_R_STACK_CUT;
	q = put_varint(p + 1, id);
	if (native) {
		q = put_varint(q, keep);
		for (i = 0; i < keep; i++) {
			q = put_varint(q, zz(w[i] - prev));
			prev = w[i];
		}
	} else { /* 1, native stack id, then (code id, line) per frame */
		q = put_varint(q, w[1]);
		q = put_varint(q, (n - 2) / 2);
		for (i = 2; i < n; i++)
			q = put_varint(q, w[i]);
	}
	commit((unsigned char)kind, q);
	return 0;
}

uint32_t ms__rec_stack_id(const uintptr_t *w, unsigned n, unsigned kind)
{
	uint64_t h = 0x9e3779b97f4a7c15u ^ n ^ ((uint64_t)kind << 40);
	unsigned i, k;
	struct slot *s;

	if (UNLIKELY(!ms__rec_thr.table) && table_init())
		return 0;
	for (i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x100000001b3u + (h >> 29);
	if (!h)
		h = 1;
	for (k = (unsigned)h & (TABLE_SLOTS - 1);; k = (k + 1) & (TABLE_SLOTS - 1)) {
		s = &ms__rec_thr.table[k];
		if (!s->id)
			break;
		if (s->hash == h && s->n == n && s->kind == kind &&
			!memcmp(ms__rec_thr.arena + s->at, w, n * sizeof(*w)))
			return s->id;
	}
	if (ms__rec_thr.n_in_table >= TABLE_SLOTS / 4 * 3 ||
		ms__rec_thr.arena_used + n > ARENA_WORDS) {
		table_reset();
		return ms__rec_stack_id(w, n, kind);
	}
	if (define(ms__rec_thr.next_stack + 1u, w, n, kind))
		return 0;
	s->hash = h;
	s->id = ++ms__rec_thr.next_stack;
	s->n = n;
	s->kind = kind;
	s->at = ms__rec_thr.arena_used;
	memcpy(ms__rec_thr.arena + ms__rec_thr.arena_used, w, n * sizeof(*w));
	ms__rec_thr.arena_used += n;
	ms__rec_thr.n_in_table++;
	return s->id;
}

uint32_t ms__rec_py_code(const char *file, size_t file_len, const char *func, size_t func_len)
{
	unsigned char *p, *q;

	if (file_len > SPOOL_PY_NAME_MAX)
		file_len = SPOOL_PY_NAME_MAX;
	if (func_len > SPOOL_PY_NAME_MAX)
		func_len = SPOOL_PY_NAME_MAX;
	p = room(1 + 3 * 10 + file_len + func_len);
	if (!p)
		return 0;
	q = put_varint(p + 1, ms__rec_thr.next_code + 1u);
	q = put_varint(q, file_len);
	memcpy(q, file, file_len);
	q = put_varint(q + file_len, func_len);
	memcpy(q, func, func_len);
	commit(SPOOL_R_PYCODE, q + func_len);
	return ++ms__rec_thr.next_code;
}

/* ---------------------------------------------------------------- recording */

void ms__rec_first_event(void)
{
	ms__rec_thr.ready = 1;
	ms__rec_thr.tid = (uint64_t)syscall(SYS_gettid);
	if (!ms__rec_thr.serial)
		ms__rec_thr.serial = atomic_fetch_add(&ms__rec.threads, 1) + 1;
	thread_bounds();
	if (ms__rec.depth && table_init())
		ms__rec.depth = 0;
	if (ms__rec.have_key)
		pthread_setspecific(ms__rec.thread_key, &ms__rec_thr);
}

/* A thread ends: its segment (recorded already: the file keeps it) and its stack table go. Its
 * events after this (later destructors) start afresh. */
void ms__rec_thread_end(void *arg)
{
	(void)arg;
	if (ms__rec_thr.seg) {
		/* the segment's unused tail back to the file system: many short threads cost
		 * their records, not 16 KiB each */
		uint64_t used =
			((uint64_t)(ms__rec_thr.pos - ms__rec_thr.seg) + 4095) & ~(uint64_t)4095;
		int fd = used < ms__rec_thr.seg_len ? ms__rec_spool_fd() : -1;
		if (fd >= 0)
			fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)(ms__rec_thr.seg_off + used),
				(off_t)(ms__rec_thr.seg_len - used));
		ms__rec_real.munmap(ms__rec_thr.seg, ms__rec_thr.seg_len);
	}
	if (ms__rec_thr.table)
		ms__rec_real.munmap(ms__rec_thr.table, TABLE_BYTES);
	ms__rec_thr.seg = ms__rec_thr.pos = ms__rec_thr.end = NULL;
	ms__rec_thr.table = NULL;
	ms__rec_thr.ready = 0;
	if (ms__rec_thr.py)
		ms__rec_py_thread_end();
}

void ms__rec_thread_forget(void)
{
	if (ms__rec_thr.seg)
		ms__rec_real.munmap(ms__rec_thr.seg, ms__rec_thr.seg_len);
	ms__rec_thr.seg = ms__rec_thr.pos = ms__rec_thr.end = NULL;
	ms__rec_thr.ready = 0;
	ms__rec_thr.seq = 0;
	ms__rec_thr.next_stack = 0;
	ms__rec_thr.next_code = 0;
	if (ms__rec_thr.py)
		ms__rec_py_forget();
	if (ms__rec_thr.table)
		ms__rec_real.munmap(ms__rec_thr.table, TABLE_BYTES);
	ms__rec_thr.table = NULL;
}

void ms__rec_event(unsigned type, uintptr_t ptr, uint64_t size, const uintptr_t *fp)
{
	uintptr_t fr[SPOOL_DEPTH_MAX];
	uint32_t sid = 0;
	unsigned n;
	int cut;
	unsigned char *p, *q;
	uint64_t t;

	if ((type & 0xe0) == SPOOL_R_ALLOC) { /* who frees is not asked */
		if (ms__rec.depth) {
			n = walk(fr, fp, &cut);
#ifdef MEMSCOPE_HAVE_LIBUNWIND
			if (cut && n)
				n = unwind(fr, n, &cut);
#endif
			sid = ms__rec_stack_id(fr, n, cut ? SPOOL_R_STACK_CUT : SPOOL_R_STACK);
		}
		if (ms__rec_thr.py)
			sid = ms__rec_py_stack(sid);
	}
	p = room(1 + 4 * 10);
	if (!p) { /* the call that met the stop */
		atomic_fetch_add_explicit(&ms__rec.lost, 1, memory_order_relaxed);
		return;
	}
	t = rec_ticks();
	q = put_varint(p + 1, t - ms__rec_thr.prev_tick);
	ms__rec_thr.prev_tick = t;
	if ((type & 0xe0) == SPOOL_R_ALLOC)
		q = put_varint(q, size);
	q = put_varint(q, zz(ptr - ms__rec_thr.prev_ptr));
	ms__rec_thr.prev_ptr = ptr;
	q = put_varint(q, sid);
	if (type == SPOOL_R_UNMAP)
		q = put_varint(q, size);
	commit((unsigned char)type, q);
}

uint64_t ms__rec_mark(unsigned what, const char *text, uint64_t id)
{
	unsigned char *p, *q;
	size_t n = 0;
	uint64_t t;

	if (what == SPOOL_RANGE_START)
		id = atomic_fetch_add(&ms__rec.range_id, 1) + 1;
	if (text)
		while (n < SPOOL_TEXT_MAX && text[n])
			n++;
	p = room(1 + 10 + 1 + 10 + 10 + n);
	if (p) {
		t = rec_ticks();
		q = put_varint(p + 1, t - ms__rec_thr.prev_tick);
		ms__rec_thr.prev_tick = t;
		*q++ = (unsigned char)what;
		q = put_varint(q, id);
		q = put_varint(q, n);
		memcpy(q, text, n);
		commit(SPOOL_R_MARK, q + n);
	} else {
		atomic_fetch_add_explicit(&ms__rec.lost, 1, memory_order_relaxed);
	}
	return id;
}
