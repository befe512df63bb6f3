/* The shim's inside, between its preloaded hooks (hooks.c) and the tracker that records and
 * writes the spool (tracker.c, process.c, modules.c): the state they share and the calls the
 * hooks make. Internal to libmemscope-record.so: every symbol here is hidden. No stdio, no
 * malloc and no lock on the recording path; the shim links nothing of libmemscope. */
#ifndef MEMSCOPE_RECORD_TRACKER_H
#define MEMSCOPE_RECORD_TRACKER_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "record/spool_fmt.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

#pragma GCC visibility push(hidden)

/* The functions the hooks stand in front of, found with dlsym(RTLD_NEXT) by hooks.c; NULL until
 * then (and a C++ one until its first call, hooks.c's late()). The tracker maps with mmap and
 * munmap from here. */
struct rec_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void (*exit)(int) __attribute__((noreturn));
	void (*_exit)(int) __attribute__((noreturn));
	void (*_Exit)(int) __attribute__((noreturn));
	void *(*new_)(size_t);
	void *(*new_a)(size_t);
	void *(*new_nt)(size_t, const void *);
	void *(*new_a_nt)(size_t, const void *);
	void *(*new_al)(size_t, size_t);
	void *(*new_a_al)(size_t, size_t);
	void *(*new_al_nt)(size_t, size_t, const void *);
	void *(*new_a_al_nt)(size_t, size_t, const void *);
	void (*del)(void *);
	void (*del_a)(void *);
	void (*del_s)(void *, size_t);
	void (*del_a_s)(void *, size_t);
	void (*del_al)(void *, size_t);
	void (*del_a_al)(void *, size_t);
	void (*del_s_al)(void *, size_t, size_t);
	void (*del_a_s_al)(void *, size_t, size_t);
	void (*del_nt)(void *, const void *);
	void (*del_a_nt)(void *, const void *);
	void (*del_al_nt)(void *, size_t, const void *);
	void (*del_a_al_nt)(void *, size_t, const void *);
};
extern struct rec_real ms__rec_real;

/* ---------------------------------------------------------------- process state */

/* the shim's states, in this order: hooks.c's READY() resolves below ST_PASS */
enum { ST_OFF, ST_RESOLVING, ST_PASS, ST_ON, ST_STOPPED };

/* The recorded process image (process.c sets it up, at start and in a forked child). */
struct rec_process {
	_Atomic int state;	   /* ST_*: recording only in ST_ON */
	_Atomic int file_state;	   /* 0 no spool file yet, 1 being made, 2 made, 3 failed */
	_Atomic uint64_t next_off; /* where the next segment goes */
	_Atomic uint64_t range_id;
	_Atomic uint32_t threads; /* threads numbered so far */
	_Atomic uint64_t lost;	  /* calls not recorded since recording stopped */
	unsigned depth;		  /* frames per stack, 0: none */
	int follow_fork, follow_exec, mmap, clock;
	int python; /* record Python frames once the program's sitecustomize asks (python.c) */
	uint64_t pid, gen, forked;
	char dir[SPOOL_PATH_MAX];
	char spool[SPOOL_PATH_MAX], modules[SPOOL_PATH_MAX];
	uint64_t tick0, mono0_ns, real0_ns;
	int exit_written;
	_Atomic int fd; /* the spool file (ms__rec_spool_fd), -1 until opened */
	dev_t fd_dev;
	ino_t fd_ino;
	pthread_key_t thread_key; /* its destructor gives back a thread's segment and table */
	int have_key;
};
extern struct rec_process ms__rec;

/* ---------------------------------------------------------------- per thread */

#define TABLE_SLOTS 16384u     /* stack table slots (a power of two) */
#define ARENA_WORDS (1u << 17) /* frames the table keeps (1 MiB) */
#define TABLE_BYTES (TABLE_SLOTS * sizeof(struct slot) + ARENA_WORDS * sizeof(uintptr_t))

struct slot {
	uint64_t hash;
	uint32_t id, at;  /* at: first frame in the arena; id 0: empty */
	uint32_t n, kind; /* kind: SPOOL_R_STACK or SPOOL_R_PYSTACK */
};

struct rec_py; /* a thread's Python frames (python.c) */

/* A thread's recording (tracker.c): its segment of the spool, its stack table, its guard. */
struct rec_thread {
	unsigned char *pos, *end, *seg;
	uint64_t prev_tick, prev_ptr, tid;
	size_t seg_len;
	uint64_t seg_off; /* where the segment is in the spool file */
	uintptr_t stack_lo, stack_hi;
	uint32_t seq, next_stack, n_in_table, arena_used;
	uint32_t next_code; /* Python code ids defined (python.c) */
	uint32_t serial;    /* the thread's number in the process, from 1 */
	int guard, ready;
	struct slot *table;
	uintptr_t *arena;
	struct rec_py *py; /* NULL until the thread runs Python under the shim's profile function */
};
extern __thread struct rec_thread ms__rec_thr __attribute__((tls_model("initial-exec")));

/* ---------------------------------------------------------------- the clock */

/* The spool's clock now: the CPU's counter (SPOOL_CLOCK_TSC) or CLOCK_MONOTONIC ns. */
static inline uint64_t rec_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (LIKELY(ms__rec.clock == SPOOL_CLOCK_TSC))
		return __rdtsc();
#elif defined(__aarch64__)
	if (LIKELY(ms__rec.clock == SPOOL_CLOCK_TSC)) {
		uint64_t v;
		__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
		return v;
	}
#endif
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* clock c now, in ns */
static inline uint64_t rec_clock_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---------------------------------------------------------------- tracker.c: recording */

/* A thread's first recorded call: its number, bounds and stack table. */
void ms__rec_first_event(void);

/* Whether this thread records now (the hooks' per-thread recursion guard): sets the guard when
 * it does, and the hook then calls leave. A call after a stop is counted as lost. */
static inline int enter(void)
{
	int s = atomic_load_explicit(&ms__rec.state, memory_order_relaxed);

	if (UNLIKELY(s != ST_ON) || ms__rec_thr.guard) {
		if (UNLIKELY(s == ST_STOPPED) && !ms__rec_thr.guard)
			atomic_fetch_add_explicit(&ms__rec.lost, 1, memory_order_relaxed);
		return 0;
	}
	ms__rec_thr.guard = 1;
	atomic_signal_fence(memory_order_seq_cst);
	if (UNLIKELY(!ms__rec_thr.ready))
		ms__rec_first_event();
	return 1;
}

/* The guard set by enter released. */
static inline void leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	ms__rec_thr.guard = 0;
}

/* One ALLOC, FREE, REVIVE or UNMAP record (type: SPOOL_R_* | MEMSCOPE_FUNC_*) between enter and
 * leave; fp: the hook's frame, where an ALLOC's stack starts. A call that meets the stop is
 * counted as lost. */
void ms__rec_event(unsigned type, uintptr_t ptr, uint64_t size, const uintptr_t *fp);

/* A MARK record (what: enum spool_mark) of text (cut to SPOOL_TEXT_MAX; NULL: none) between
 * enter and leave, as memscope_record_mark and the range functions make it. Returns the range
 * id: a new one for SPOOL_RANGE_START, else id (also when the record met the stop: counted as
 * lost). */
uint64_t ms__rec_mark(unsigned what, const char *text, uint64_t id);

/* The thread's id of the stack words w[0..n) of kind SPOOL_R_STACK (return addresses; or
 * SPOOL_R_STACK_CUT: a walk that stopped before the outermost frame) or
 * SPOOL_R_PYSTACK (python.c's words: 1, the native stack id, then code id and line per frame,
 * innermost first), between enter and leave, defining it in the spool when new; 0 on failure. */
uint32_t ms__rec_stack_id(const uintptr_t *w, unsigned n, unsigned kind);

/* A PYCODE record between enter and leave: a Python function's file and name (each cut to
 * SPOOL_PY_NAME_MAX). Returns its new code id, 0 when the record met the stop. */
uint32_t ms__rec_py_code(const char *file, size_t file_len, const char *func, size_t func_len);

/* ---------------------------------------------------------------- python.c: Python frames */

/* An allocation's stack id with the thread's Python frames (between enter and leave): native,
 * the native stack's id (0: none), when the thread runs no Python or its frames cannot be read
 * now; else the id of a PYSTACK of both. */
uint32_t ms__rec_py_stack(uint32_t native);

/* In a forked child: the thread's Python code ids forgotten (its spool is new). */
void ms__rec_py_forget(void);

/* A thread ends: its Python frames' memory given back when it runs no Python any more. */
void ms__rec_py_thread_end(void);

/* A thread ends (the thread key's destructor): its segment and stack table go. */
void ms__rec_thread_end(void *arg);

/* In a forked child: the parent's segment and table of this thread dropped. */
void ms__rec_thread_forget(void);

/* ---------------------------------------------------------------- process.c: the image */

/* After the real functions are found: read the launcher's environment and start recording
 * (state ST_ON), or pass every call through (ST_PASS). */
void ms__rec_start(void);

/* Whether this image's spool file exists (made at the first call that needs it). */
int ms__rec_spool_ready(void);

/* The spool file open for writing, kept above the program's usual descriptors; -1 with errno. */
int ms__rec_spool_fd(void);

/* Recording stops for good: one line on stderr (what: strerror(err)), the header says why. */
void ms__rec_stop(const char *what, int err);

/* How the process ends (kind: enum spool_exit) into the header, once per image. */
void ms__rec_exit(uint64_t kind, uint64_t status);

/* After a stop: how many calls went unrecorded since, into the header. */
void ms__rec_write_lost(void);

/* ---------------------------------------------------------------- modules.c */

/* Note the modules loaded since the last scan in the modules file; never waits for another
 * thread's scan. */
void ms__rec_scan_modules(void);

/* Whether pc lies in a known module's executable range. */
int ms__rec_in_module(uintptr_t pc);

/* Whether any module is known yet. */
int ms__rec_have_modules(void);

/* In a forked child: no module known (the child notes them in its own file). */
void ms__rec_forget_modules(void);

#pragma GCC visibility pop

#endif
