/* memscope-record's LD_PRELOAD shim: records the malloc family, C++ new/delete, optionally
 * anonymous mmap, and markers of the program it is loaded into, into the spool
 * (lib/core/spool_fmt.h). No stdio, no malloc and no lock on the recording path. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "core/spool_fmt.h"
#include "memscope/event.h"

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* the functions we stand in front of, found with dlsym(RTLD_NEXT) */
static struct {
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
} real;

/* ---------------------------------------------------------------- process state */

enum { ST_OFF, ST_RESOLVING, ST_PASS, ST_ON, ST_STOPPED };

static struct {
	_Atomic int state;	   /* ST_*: recording only in ST_ON */
	_Atomic int file_state;	   /* 0 no spool file yet, 1 being made, 2 made, 3 failed */
	_Atomic uint64_t next_off; /* where the next segment goes */
	_Atomic uint64_t range_id;
	_Atomic uint32_t threads; /* threads numbered so far */
	_Atomic int module_lock;
	_Atomic uint64_t lost; /* calls not recorded since recording stopped */
	unsigned depth;	       /* frames per stack, 0: none */
	int follow_fork, follow_exec, mmap, clock;
	uint64_t pid, gen, forked;
	char dir[SPOOL_PATH_MAX];
	char spool[SPOOL_PATH_MAX], modules[SPOOL_PATH_MAX];
	uint64_t tick0, mono0_ns, real0_ns;
	int exit_written;
	_Atomic int fd; /* the spool file (spool_fd), -1 until opened */
	dev_t fd_dev;
	ino_t fd_ino;
	pthread_key_t thread_key; /* its destructor gives back a thread's segment and table */
	int have_key;
} g;

/* the loaded modules' executable ranges: return addresses outside them end a stack */
#define MODULES_MAX 4096
static struct {
	uintptr_t lo, hi;
} mods[MODULES_MAX];
static _Atomic unsigned n_mods;
static unsigned long long mods_adds; /* dlpi_adds at the last scan */

/* ---------------------------------------------------------------- per thread */

#define TABLE_SLOTS 16384u     /* stack table slots (a power of two) */
#define ARENA_WORDS (1u << 17) /* frames the table keeps (1 MiB) */

struct slot {
	uint64_t hash;
	uint32_t id, at; /* at: first frame in the arena; id 0: empty */
	uint32_t n, pad;
};

struct thr {
	unsigned char *pos, *end, *seg;
	uint64_t prev_tick, prev_ptr, tid;
	size_t seg_len;
	uint64_t seg_off; /* where the segment is in the spool file */
	uintptr_t stack_lo, stack_hi;
	uint32_t seq, next_stack, n_in_table, arena_used;
	uint32_t serial; /* the thread's number in the process, from 1 */
	int guard, ready;
	struct slot *table;
	uintptr_t *arena;
};

static __thread struct thr T __attribute__((tls_model("initial-exec")));

/* ---------------------------------------------------------------- small helpers */

/* The shim links nothing of libmemscope (which the sanitizer build instruments, and which uses
 * stdio and malloc): the few helpers it needs, varints among them, are its own. */

static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (LIKELY(g.clock == SPOOL_CLOCK_TSC))
		return __rdtsc();
#elif defined(__aarch64__)
	if (LIKELY(g.clock == SPOOL_CLOCK_TSC)) {
		uint64_t v;
		__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
		return v;
	}
#endif
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

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

static size_t str_len(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

/* dst = a + b (NUL-terminated, cut to the buffer) */
static void join(char *dst, size_t size, const char *a, const char *b)
{
	size_t n = 0;
	for (; *a && n + 1 < size; a++)
		dst[n++] = *a;
	for (; *b && n + 1 < size; b++)
		dst[n++] = *b;
	dst[n] = 0;
}

static char *put_dec(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* The one line the shim ever prints: why recording stopped. */
static void say(const char *what, int err)
{
	char line[SPOOL_PATH_MAX + 256];
	size_t n;
	const char *e = strerror(err); /* glibc's table: no allocation for known codes */

	join(line, sizeof(line), "memscope-record: recording stopped: ", what);
	n = str_len(line);
	join(line + n, sizeof(line) - n, ": ", e);
	n = str_len(line);
	if (n + 1 < sizeof(line))
		line[n++] = '\n';
	if (write(2, line, n) < 0)
		return;
}

/* len bytes at offset off of the spool file's header (its block exists already, so the write
 * succeeds on a full disk too). 0 or -1 with errno. */
static int put_header(const void *p, size_t len, off_t off)
{
	int fd, rc = -1;

	if (atomic_load(&g.file_state) != 2 || (fd = open(g.spool, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	if (pwrite(fd, p, len, off) == (ssize_t)len)
		rc = 0;
	close(fd);
	return rc;
}

/* After a stop: how many calls went unrecorded since, into the header (1 + the count). */
static void write_lost(void)
{
	uint64_t n = atomic_load(&g.lost) + 1;

	if (atomic_load(&g.state) == ST_STOPPED && (uint64_t)getpid() == g.pid)
		put_header(&n, sizeof(n), offsetof(struct spool_header, lost));
}

/* Recording stops for good: one line, and the header says why. */
static void stop(const char *what, int err)
{
	int s = atomic_load(&g.state);
	uint64_t e = (uint64_t)(err > 0 ? err : EIO);

	/* from recording, or from starting (the spool could not be made: said all the same) */
	do
		if (s != ST_ON && s != ST_PASS)
			return;
	while (!atomic_compare_exchange_weak(&g.state, &s, ST_STOPPED));
	say(what, err);
	put_header(&e, sizeof(e), offsetof(struct spool_header, stopped));
}

/* ---------------------------------------------------------------- bootstrap arena */

/* dlsym may allocate before the real functions are known; those blocks come from here and are
 * never freed. */
static unsigned char boot[64 << 10] __attribute__((aligned(64)));
static _Atomic size_t boot_used;

static void *boot_alloc(size_t n, size_t align)
{
	size_t at, end, cur = atomic_load(&boot_used);

	if (align < 16)
		align = 16;
	do {
		at = (cur + align - 1) & ~(align - 1);
		end = at + n;
		if (end > sizeof(boot) || end < at || at < cur)
			return NULL;
	} while (!atomic_compare_exchange_weak(&boot_used, &cur, end));
	return boot + at;
}

static int in_boot(const void *p)
{
	return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + sizeof(boot);
}

/* ---------------------------------------------------------------- setup */

#define FIND(field, name) (*(void **)&real.field = dlsym(RTLD_NEXT, name))

static void resolve(void)
{
	FIND(malloc, "malloc");
	FIND(free, "free");
	FIND(calloc, "calloc");
	FIND(realloc, "realloc");
	FIND(reallocarray, "reallocarray");
	FIND(posix_memalign, "posix_memalign");
	FIND(aligned_alloc, "aligned_alloc");
	FIND(memalign, "memalign");
	FIND(valloc, "valloc");
	FIND(pvalloc, "pvalloc");
	FIND(mmap, "mmap");
	FIND(munmap, "munmap");
	FIND(exit, "exit");
	FIND(_exit, "_exit");
	FIND(_Exit, "_Exit");
	FIND(new_, "_Znwm");
	FIND(new_a, "_Znam");
	FIND(new_nt, "_ZnwmRKSt9nothrow_t");
	FIND(new_a_nt, "_ZnamRKSt9nothrow_t");
	FIND(new_al, "_ZnwmSt11align_val_t");
	FIND(new_a_al, "_ZnamSt11align_val_t");
	FIND(new_al_nt, "_ZnwmSt11align_val_tRKSt9nothrow_t");
	FIND(new_a_al_nt, "_ZnamSt11align_val_tRKSt9nothrow_t");
	FIND(del, "_ZdlPv");
	FIND(del_a, "_ZdaPv");
	FIND(del_s, "_ZdlPvm");
	FIND(del_a_s, "_ZdaPvm");
	FIND(del_al, "_ZdlPvSt11align_val_t");
	FIND(del_a_al, "_ZdaPvSt11align_val_t");
	FIND(del_s_al, "_ZdlPvmSt11align_val_t");
	FIND(del_a_s_al, "_ZdaPvmSt11align_val_t");
	FIND(del_nt, "_ZdlPvRKSt9nothrow_t");
	FIND(del_a_nt, "_ZdaPvRKSt9nothrow_t");
	FIND(del_al_nt, "_ZdlPvSt11align_val_tRKSt9nothrow_t");
	FIND(del_a_al_nt, "_ZdaPvSt11align_val_tRKSt9nothrow_t");
	/* the names this program lacks (new and delete in a C program) left an error message that
	 * dlsym allocated while nothing was recorded: freed here, not by the program's next dlsym
	 */
	dlerror();
	dlerror();
}

/* "key=value" in MEMSCOPE_RECORD_OPTS, as a number; def when absent */
static unsigned long opt(const char *opts, const char *key, unsigned long def)
{
	size_t k = str_len(key);
	const char *p = opts;

	while (p && *p) {
		if (!strncmp(p, key, k) && p[k] == '=') {
			unsigned long v = 0;
			if (!strncmp(p + k + 1, "tsc", 3))
				return SPOOL_CLOCK_TSC;
			if (!strncmp(p + k + 1, "mono", 4))
				return SPOOL_CLOCK_MONO;
			for (p += k + 1; *p >= '0' && *p <= '9'; p++)
				v = v * 10 + (unsigned long)(*p - '0');
			return v;
		}
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return def;
}

/* The spool file's name for this process image: DIR/pPID-GEN (kind 'p'), its modules file
 * ('m'), or the note of an image left unrecorded ('s'). */
static void name_of(char *out, char kind, uint64_t pid, uint64_t gen)
{
	char tail[64], *p = tail;

	*p++ = '/';
	*p++ = kind;
	p = put_dec(p, pid);
	*p++ = '-';
	p = put_dec(p, gen);
	*p = 0;
	join(out, SPOOL_PATH_MAX, g.dir, tail);
}

/* Create this image's spool file with its header: the first free generation of the pid. */
static int make_spool(void)
{
	struct spool_header h;
	char cmd[SPOOL_HEADER_LEN - sizeof(struct spool_header)];
	ssize_t n = 0;
	int fd = -1, c;
	uint64_t gen;

	for (gen = 0; gen < 1000; gen++) {
		name_of(g.spool, 'p', g.pid, gen);
		fd = open(g.spool, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		stop(g.spool, errno);
		return -1;
	}
	g.gen = gen;
	name_of(g.modules, 'm', g.pid, gen);
	c = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (c >= 0) {
		n = read(c, cmd, sizeof(cmd));
		close(c);
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SPOOL_MAGIC, 8);
	h.version = SPOOL_VERSION;
	h.header_len = SPOOL_HEADER_LEN;
	h.seg_len = SPOOL_SEG_MIN;
	h.clock = (uint32_t)g.clock;
	h.pid = g.pid;
	h.ppid = (uint64_t)getppid();
	h.gen = gen;
	h.tick0 = g.tick0;
	h.mono0_ns = g.mono0_ns;
	h.real0_ns = g.real0_ns;
	h.depth = g.depth;
	h.cmdline_len = n > 0 ? (uint32_t)n : 0;
	h.forked = g.forked;
	if (ftruncate(fd, SPOOL_HEADER_LEN) || pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
		(n > 0 && pwrite(fd, cmd, (size_t)n, sizeof(h)) != n)) {
		stop(g.spool, errno ? errno : EIO);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int spool_ready(void)
{
	int s = atomic_load(&g.file_state), zero = 0;

	if (LIKELY(s == 2))
		return 1;
	if (s == 0 && atomic_compare_exchange_strong(&g.file_state, &zero, 1)) {
		atomic_store(&g.file_state, make_spool() ? 3 : 2);
		return atomic_load(&g.file_state) == 2;
	}
	while ((s = atomic_load(&g.file_state)) == 1)
		sched_yield();
	return s == 2;
}

/* ---------------------------------------------------------------- modules */

struct scan {
	int fd;
	int full; /* 0: only read dlpi_adds */
	unsigned long long adds;
};

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	unsigned char rec[SPOOL_MODULE_FIXED + SPOOL_BUILD_ID_MAX + SPOOL_PATH_MAX];
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const unsigned char *bid = NULL;
	size_t bid_len = 0, path_len, n;
	char exe[SPOOL_PATH_MAX];
	const char *path = info->dlpi_name;
	uint32_t len;
	uint64_t v;
	int i;

	(void)size;
	s->adds = info->dlpi_adds;
	if (!s->full)
		return 1;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;
			if (a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_NOTE && !bid) {
			const unsigned char *p = (const void *)(info->dlpi_addr + ph->p_vaddr);
			size_t off = 0;
			while (off + 12 <= ph->p_memsz) {
				uint32_t nsz, dsz, type;
				memcpy(&nsz, p + off, 4);
				memcpy(&dsz, p + off + 4, 4);
				memcpy(&type, p + off + 8, 4);
				size_t at = off + 12 + ((nsz + 3u) & ~3u);
				if (at + dsz > ph->p_memsz || nsz > ph->p_memsz)
					break;
				if (type == NT_GNU_BUILD_ID && nsz == 4 &&
					!memcmp(p + off + 12, "GNU", 4)) {
					bid = p + at;
					bid_len =
						dsz > SPOOL_BUILD_ID_MAX ? SPOOL_BUILD_ID_MAX : dsz;
					break;
				}
				off = at + ((dsz + 3u) & ~3u);
			}
		}
	}
	if (!hi)
		return 0;
	if (!path || !*path) {
		ssize_t r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (r <= 0)
			return 0;
		exe[r] = 0;
		path = exe;
	}
	if (!strncmp(path, "linux-vdso", 10) || !strncmp(path, "linux-gate", 10))
		return 0;
	n = atomic_load(&n_mods);
	for (i = 0; i < (int)n; i++)
		if (mods[i].lo == lo && mods[i].hi == hi)
			return 0;
	if (n < MODULES_MAX) {
		mods[n].lo = lo;
		mods[n].hi = hi;
		atomic_store(&n_mods, (unsigned)n + 1);
	}
	path_len = str_len(path);
	if (path_len > SPOOL_PATH_MAX)
		path_len = SPOOL_PATH_MAX;
	len = (uint32_t)(SPOOL_MODULE_FIXED - 4 + bid_len + path_len);
	memcpy(rec, &len, 4);
	v = info->dlpi_addr;
	memcpy(rec + 4, &v, 8);
	v = lo;
	memcpy(rec + 12, &v, 8);
	v = hi;
	memcpy(rec + 20, &v, 8);
	rec[28] = (unsigned char)bid_len;
	if (bid_len)
		memcpy(rec + 29, bid, bid_len);
	memcpy(rec + 29 + bid_len, path, path_len);
	if (s->fd >= 0 && write(s->fd, rec, 4 + len) != (ssize_t)(4 + len)) {
		close(s->fd);
		s->fd = -1;
	}
	return 0;
}

/* Note the modules loaded since the last scan in the modules file (once dlopen added some).
 * Never waits: a thread that finds another scanning goes on without (its stack is cut where
 * its frames leave the known modules), since that other one may be waiting in dl_iterate_phdr
 * for a loader lock this thread holds. */
static void scan_modules(void)
{
	struct scan s = { -1, 0, 0 };
	int unlocked = 0;

	if (!spool_ready() || !atomic_compare_exchange_strong(&g.module_lock, &unlocked, 1))
		return;
	dl_iterate_phdr(scan_one, &s);
	if (s.adds != mods_adds || !atomic_load(&n_mods)) {
		s.full = 1;
		s.fd = open(g.modules, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		dl_iterate_phdr(scan_one, &s);
		mods_adds = s.adds;
		if (s.fd >= 0)
			close(s.fd);
	}
	atomic_store(&g.module_lock, 0);
}

static int in_module(uintptr_t pc)
{
	unsigned i, n = atomic_load(&n_mods);

	for (i = 0; i < n; i++)
		if (pc >= mods[i].lo && pc < mods[i].hi)
			return 1;
	return 0;
}

/* ---------------------------------------------------------------- segments */

/* Map the next segment of the spool for this thread. 0, or -1 with recording stopped. */
/* The spool file open for writing: one descriptor kept above the program's usual ones and
 * checked to still be ours (a program may close every descriptor, and reuse the number), so
 * that running out of descriptors later does not stop the recording. -1 with errno. */
static int spool_fd(void)
{
	struct stat sb;
	int fd = atomic_load(&g.fd), hi;

	if (fd >= 0 && !fstat(fd, &sb) && sb.st_dev == g.fd_dev && sb.st_ino == g.fd_ino)
		return fd;
	fd = open(g.spool, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if ((hi = fcntl(fd, F_DUPFD_CLOEXEC, 900)) >= 0) {
		close(fd);
		fd = hi;
	}
	if (fstat(fd, &sb)) {
		close(fd);
		return -1;
	}
	g.fd_dev = sb.st_dev;
	g.fd_ino = sb.st_ino;
	atomic_store(&g.fd, fd); /* a thread that raced us keeps its own open: harmless */
	return fd;
}

static int next_segment(void)
{
	struct spool_seg h;
	size_t len;
	off_t off;
	void *m;
	int fd, rc;

	if (!spool_ready())
		return -1;
	if (T.seg)
		real.munmap(T.seg, T.seg_len);
	T.seg = T.pos = T.end = NULL;
	/* a thread's first segment is small (threads that allocate little cost little), each next
	 * one twice as long up to the longest */
	len = T.seq < 7 ? (size_t)SPOOL_SEG_MIN << T.seq : SPOOL_SEG_MAX;
	off = (off_t)atomic_fetch_add(&g.next_off, len);
	fd = spool_fd();
	if (fd < 0) {
		stop(g.spool, errno);
		return -1;
	}
	/* blocks reserved first: a full disk is an error here, never a SIGBUS later */
	rc = fallocate(fd, 0, off, (off_t)len);
	if (rc && (errno == EOPNOTSUPP || errno == ENOSYS))
		rc = posix_fallocate(fd, off, (off_t)len) ? -1 : 0;
	if (rc) {
		stop(g.spool, errno);
		return -1;
	}
	m = real.mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (m == MAP_FAILED) {
		stop(g.spool, errno);
		return -1;
	}
	/* its pages made writable now, in one call, rather than by a fault each while recording */
#ifdef MADV_POPULATE_WRITE
	madvise(m, len, MADV_POPULATE_WRITE);
#endif
	T.seg = m;
	T.seg_len = len;
	T.seg_off = (uint64_t)off;
	T.prev_tick = ticks();
	T.prev_ptr = 0;
	memset(&h, 0, sizeof(h));
	h.seq = T.seq++;
	h.len = (uint32_t)len;
	h.tid = T.tid;
	h.thread = T.serial;
	h.tick = T.prev_tick;
	h.mono_ns = clock_ns(CLOCK_MONOTONIC);
	memcpy(T.seg + 4, (unsigned char *)&h + 4, sizeof(h) - 4);
	atomic_signal_fence(memory_order_seq_cst);
	h.magic = SPOOL_SEG_MAGIC;
	memcpy(T.seg, &h.magic, 4);
	T.pos = T.seg + SPOOL_SEG_HEAD;
	T.end = T.seg + len - 1; /* a zero byte always ends the segment */
	return 0;
}

/* Room for n bytes of record at T.pos; NULL when recording stopped. */
static inline unsigned char *room(size_t n)
{
	if (UNLIKELY(T.pos + n > T.end) && next_segment())
		return NULL;
	return T.pos;
}

/* Store the type byte that makes the record at T.pos (ending at end) count. */
static inline void commit(unsigned char type, unsigned char *end)
{
	atomic_signal_fence(memory_order_seq_cst);
	*T.pos = type;
	T.pos = end;
}

/* ---------------------------------------------------------------- stacks */

/* Return addresses by the frame-pointer chain from frame fp (the hook's own), each frame read
 * only when both its words lie between fp and the top of the thread's stack: a chain that leaves
 * it (code without frame pointers keeps anything in the register, -16 say) ends the walk. */
static inline unsigned walk(uintptr_t *out, const uintptr_t *fp)
{
	unsigned n = 0;
	uintptr_t lo = (uintptr_t)fp, last = T.stack_hi - 16; /* the highest frame that fits */

	if ((uintptr_t)fp < T.stack_lo || (uintptr_t)fp > last || T.stack_hi < 16)
		last = (uintptr_t)fp; /* not on the thread's stack (a signal stack): one frame */
	while (n < g.depth) {
		if ((uintptr_t)fp < lo || (uintptr_t)fp > last || ((uintptr_t)fp & 7))
			break;
		if (fp[1] < 4096)
			break;
		out[n++] = fp[1];
		if ((uintptr_t)fp[0] <= (uintptr_t)fp)
			break;
		fp = (const uintptr_t *)fp[0];
	}
	return n;
}

static void thread_bounds(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &addr, &size)) {
		T.stack_lo = (uintptr_t)addr;
		T.stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

static int table_init(void)
{
	void *t =
		real.mmap(NULL, TABLE_SLOTS * sizeof(struct slot) + ARENA_WORDS * sizeof(uintptr_t),
			PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (t == MAP_FAILED)
		return -1;
	T.table = t;
	T.arena = (uintptr_t *)(T.table + TABLE_SLOTS);
	return 0;
}

static void table_reset(void)
{
	memset(T.table, 0, TABLE_SLOTS * sizeof(struct slot));
	T.n_in_table = T.arena_used = 0;
}

/* The thread's id of stack fr[0..n), defining it in the spool when new; 0 on failure. */
static uint32_t stack_id(const uintptr_t *fr, unsigned n)
{
	uint64_t h = 0x9e3779b97f4a7c15u ^ n;
	unsigned i, k, keep;
	struct slot *s;
	unsigned char *p, *q;
	uintptr_t prev = 0;

	for (i = 0; i < n; i++)
		h = (h ^ fr[i]) * 0x100000001b3u + (h >> 29);
	if (!h)
		h = 1;
	for (k = (unsigned)h & (TABLE_SLOTS - 1);; k = (k + 1) & (TABLE_SLOTS - 1)) {
		s = &T.table[k];
		if (!s->id)
			break;
		if (s->hash == h && s->n == n && !memcmp(T.arena + s->at, fr, n * sizeof(*fr)))
			return s->id;
	}
	if (T.n_in_table >= TABLE_SLOTS / 4 * 3 || T.arena_used + n > ARENA_WORDS) {
		table_reset();
		return stack_id(fr, n);
	}
	/* new: frames past the first that lie in no module end it (no frame pointers there); a
	 * frame in a module loaded since the last scan has it noted */
	if (!atomic_load(&n_mods))
		scan_modules();
	for (keep = 0; keep < n; keep++) {
		if (!in_module(fr[keep])) {
			scan_modules();
			if (keep && !in_module(fr[keep]))
				break;
		}
	}
	p = room(3 + 10 + 10 + (size_t)keep * 10);
	if (!p)
		return 0;
	q = put_varint(p + 1, T.next_stack + 1u);
	q = put_varint(q, keep);
	for (i = 0; i < keep; i++) {
		q = put_varint(q, zz(fr[i] - prev));
		prev = fr[i];
	}
	commit(SPOOL_R_STACK, q);
	s->hash = h;
	s->id = ++T.next_stack;
	s->n = n;
	s->at = T.arena_used;
	memcpy(T.arena + T.arena_used, fr, n * sizeof(*fr));
	T.arena_used += n;
	T.n_in_table++;
	return s->id;
}

/* ---------------------------------------------------------------- recording */

static void first_event(void)
{
	T.ready = 1;
	T.tid = (uint64_t)syscall(SYS_gettid);
	if (!T.serial)
		T.serial = atomic_fetch_add(&g.threads, 1) + 1;
	thread_bounds();
	if (g.depth && table_init())
		g.depth = 0;
	if (g.have_key)
		pthread_setspecific(g.thread_key, &T);
}

/* A thread ends: its segment (recorded already: the file keeps it) and its stack table go. Its
 * events after this (later destructors) start afresh. */
static void thread_end(void *arg)
{
	(void)arg;
	if (T.seg) {
		/* the segment's unused tail back to the file system: many short threads cost
		 * their records, not 16 KiB each */
		uint64_t used = ((uint64_t)(T.pos - T.seg) + 4095) & ~(uint64_t)4095;
		int fd = used < T.seg_len ? spool_fd() : -1;
		if (fd >= 0)
			fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)(T.seg_off + used), (off_t)(T.seg_len - used));
		real.munmap(T.seg, T.seg_len);
	}
	if (T.table)
		real.munmap(T.table,
			TABLE_SLOTS * sizeof(struct slot) + ARENA_WORDS * sizeof(uintptr_t));
	T.seg = T.pos = T.end = NULL;
	T.table = NULL;
	T.ready = 0;
}

/* Whether this thread records now; sets the guard when it does. A call after a stop is
 * counted as lost. */
static inline int enter(void)
{
	int s = atomic_load_explicit(&g.state, memory_order_relaxed);

	if (UNLIKELY(s != ST_ON) || T.guard) {
		if (UNLIKELY(s == ST_STOPPED) && !T.guard)
			atomic_fetch_add_explicit(&g.lost, 1, memory_order_relaxed);
		return 0;
	}
	T.guard = 1;
	atomic_signal_fence(memory_order_seq_cst);
	if (UNLIKELY(!T.ready))
		first_event();
	return 1;
}

static inline void leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	T.guard = 0;
}

/* One ALLOC, FREE or UNMAP record; fp: the hook's frame, for the stack. */
static inline void record(unsigned type, uintptr_t ptr, uint64_t size, const uintptr_t *fp)
{
	uintptr_t fr[SPOOL_DEPTH_MAX];
	uint32_t sid = 0;
	unsigned char *p, *q;
	uint64_t t;

	if (g.depth && (type & 0xe0) == SPOOL_R_ALLOC) { /* who frees is not asked */
		unsigned n = walk(fr, fp);
		sid = stack_id(fr, n);
	}
	p = room(1 + 4 * 10);
	if (!p) { /* the call that met the stop */
		atomic_fetch_add_explicit(&g.lost, 1, memory_order_relaxed);
		return;
	}
	t = ticks();
	q = put_varint(p + 1, t - T.prev_tick);
	T.prev_tick = t;
	if ((type & 0xe0) == SPOOL_R_ALLOC)
		q = put_varint(q, size);
	q = put_varint(q, zz(ptr - T.prev_ptr));
	T.prev_ptr = ptr;
	q = put_varint(q, sid);
	if (type == SPOOL_R_UNMAP)
		q = put_varint(q, size);
	commit((unsigned char)type, q);
}

#define FRAME ((const uintptr_t *)__builtin_frame_address(0))

/* ---------------------------------------------------------------- setup and teardown */

static void after_fork_child(void);

static void write_exit(uint64_t kind, uint64_t status)
{
	uint64_t v[4]; /* exit_kind, exit_status, exit_tick, exit_mono_ns */

	/* a vfork child (posix_spawn) shares our memory but is not us */
	if (g.exit_written || atomic_load(&g.file_state) != 2 || (uint64_t)getpid() != g.pid)
		return;
	g.exit_written = 1;
	v[0] = kind;
	v[1] = status;
	v[2] = ticks();
	v[3] = clock_ns(CLOCK_MONOTONIC);
	if (put_header(v, sizeof(v), offsetof(struct spool_header, exit_kind)))
		stop(g.spool, errno);
	write_lost();
}

static void on_fatal(int sig)
{
	write_exit(SPOOL_EXIT_SIGNAL, (uint64_t)sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The note of an exec'd program left unrecorded: its path, for the launcher to list. */
/* The note of an exec'd program left unrecorded, for the launcher to list: "PPID MONO_NS PATH". */
static void note_skipped(void)
{
	char path[SPOOL_PATH_MAX], text[SPOOL_PATH_MAX + 48], *p = text;
	ssize_t n;
	int fd;

	p = put_dec(p, (uint64_t)getppid());
	*p++ = ' ';
	p = put_dec(p, clock_ns(CLOCK_MONOTONIC));
	*p++ = ' ';
	n = readlink("/proc/self/exe", p, SPOOL_PATH_MAX - 1);
	if (n <= 0)
		return;
	p += n;
	name_of(path, 's', g.pid, 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, text, (size_t)(p - text)) < 0)
		n = 0;
	close(fd);
}

static void start(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	const char *dir = getenv("MEMSCOPE_RECORD_SPOOL");
	const char *opts = getenv("MEMSCOPE_RECORD_OPTS");
	const char *main_pid = getenv("MEMSCOPE_RECORD_MAIN");
	unsigned long mp = 0;
	unsigned i;

	atomic_store(&g.fd, -1);
	if (!dir || !*dir || str_len(dir) + 64 > SPOOL_PATH_MAX) {
		atomic_store(&g.state, ST_PASS);
		return;
	}
	join(g.dir, sizeof(g.dir), dir, "");
	g.depth = (unsigned)opt(opts, "depth", 32);
	if (g.depth > SPOOL_DEPTH_MAX)
		g.depth = SPOOL_DEPTH_MAX;
	g.follow_fork = (int)opt(opts, "fork", 1);
	g.follow_exec = (int)opt(opts, "exec", 0);
	g.mmap = (int)opt(opts, "mmap", 0);
	g.clock = (int)opt(opts, "clock", SPOOL_CLOCK_MONO);
	g.pid = (uint64_t)getpid();
	for (; main_pid && *main_pid >= '0' && *main_pid <= '9'; main_pid++)
		mp = mp * 10 + (unsigned long)(*main_pid - '0');
	if (mp != g.pid && !g.follow_exec) {
		note_skipped();
		atomic_store(&g.state, ST_PASS);
		return;
	}
	g.tick0 = ticks();
	g.mono0_ns = clock_ns(CLOCK_MONOTONIC);
	g.real0_ns = clock_ns(CLOCK_REALTIME);
	pthread_atfork(NULL, NULL, after_fork_child);
	g.have_key = !pthread_key_create(&g.thread_key, thread_end);
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old, sa;
		if (sigaction(fatal[i], NULL, &old) || old.sa_handler != SIG_DFL ||
			(old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal;
		sa.sa_flags = SA_RESETHAND | SA_NODEFER;
		sigaction(fatal[i], &sa, NULL);
	}
	atomic_store(&g.next_off, SPOOL_HEADER_LEN);
	if (!spool_ready())
		return;
	spool_fd(); /* now, while descriptors are free: a program may take them all */
	atomic_store(&g.state, ST_ON);
	if (g.depth)
		scan_modules();
}

/* First call of any hook, or the shim's constructor if none came before: find the real functions
 * (dlsym may allocate: the bootstrap arena answers), then start recording if the launcher asked,
 * so that what other libraries' constructors allocate is recorded too. */
static void init(void)
{
	int off = ST_OFF, guard = T.guard;

	if (!atomic_compare_exchange_strong(&g.state, &off, ST_RESOLVING))
		return;
	resolve();
	atomic_store(&g.state, ST_PASS);
	T.guard = 1;
	start();
	T.guard = guard;
}

__attribute__((constructor)) static void shim_load(void)
{
	init();
}

__attribute__((destructor)) static void shim_unload(void)
{
	write_exit(SPOOL_EXIT_RETURN, 0);
	write_lost(); /* again: the destructors that ran after exit's call may have added */
}

static void after_fork_child(void)
{
	if (T.seg)
		real.munmap(T.seg, T.seg_len);
	T.seg = T.pos = T.end = NULL;
	T.ready = 0;
	T.seq = 0;
	T.next_stack = 0;
	if (T.table)
		real.munmap(T.table,
			TABLE_SLOTS * sizeof(struct slot) + ARENA_WORDS * sizeof(uintptr_t));
	T.table = NULL;
	if (!g.follow_fork || atomic_load(&g.state) != ST_ON) {
		if (atomic_load(&g.state) == ST_ON)
			atomic_store(&g.state, ST_PASS);
		return;
	}
	g.pid = (uint64_t)getpid();
	g.forked = 1;
	g.exit_written = 0;
	atomic_store(&g.next_off, SPOOL_HEADER_LEN);
	atomic_store(&g.file_state, 0); /* made at the child's first event */
	if (atomic_load(&g.fd) >= 0)
		close(atomic_exchange(&g.fd, -1)); /* the parent's spool */
	atomic_store(&g.module_lock, 0);	   /* another thread may have held it */
	atomic_store(&n_mods, 0);
	mods_adds = 0;
	g.tick0 = ticks();
	g.mono0_ns = clock_ns(CLOCK_MONOTONIC);
	g.real0_ns = clock_ns(CLOCK_REALTIME);
}

/* ---------------------------------------------------------------- the hooks */

#define READY()                                                                                    \
	do {                                                                                       \
		if (UNLIKELY(atomic_load_explicit(&g.state, memory_order_relaxed) < ST_PASS))      \
			init();                                                                    \
	} while (0)

EXPORT void *malloc(size_t n)
{
	void *p;

	READY();
	if (UNLIKELY(!real.malloc))
		return boot_alloc(n, 16);
	if (!enter())
		return real.malloc(n);
	p = real.malloc(n);
	if (p)
		record(SPOOL_R_ALLOC | MEMSCOPE_FUNC_MALLOC, (uintptr_t)p, n, FRAME);
	leave();
	return p;
}

EXPORT void free(void *p)
{
	READY();
	if (UNLIKELY(!p || in_boot(p)))
		return;
	if (UNLIKELY(!real.free))
		return;
	if (!enter()) {
		real.free(p);
		return;
	}
	record(SPOOL_R_FREE | MEMSCOPE_FUNC_FREE, (uintptr_t)p, 0, FRAME);
	real.free(p); /* under the guard: an allocator that allocates in free is not recorded */
	leave();
}

EXPORT void *calloc(size_t k, size_t n)
{
	void *p;
	size_t total;

	READY();
	if (__builtin_mul_overflow(k, n, &total))
		total = SIZE_MAX;
	if (UNLIKELY(!real.calloc)) {
		p = total == SIZE_MAX ? NULL : boot_alloc(total, 16);
		return p; /* the arena is zero */
	}
	if (!enter())
		return real.calloc(k, n);
	p = real.calloc(k, n);
	if (p)
		record(SPOOL_R_ALLOC | MEMSCOPE_FUNC_CALLOC, (uintptr_t)p, total, FRAME);
	leave();
	return p;
}

/* realloc and reallocarray: the old block's FREE before the call (so no other thread's malloc
 * can take its address first), the new block's MALLOC after; a failed call revives the old
 * block (REVIVE: the reader gives it back its size). */
static inline void *re_alloc(void *old, size_t n, size_t k, int array, const uintptr_t *fp)
{
	void *p;
	size_t total = n;

	if (array && __builtin_mul_overflow(n, k, &total))
		total = SIZE_MAX;
	if (old)
		record(SPOOL_R_FREE | MEMSCOPE_FUNC_REALLOC, (uintptr_t)old, 0, fp);
	p = array ? real.reallocarray(old, n, k) : real.realloc(old, n);
	if (p)
		record(SPOOL_R_ALLOC | MEMSCOPE_FUNC_REALLOC, (uintptr_t)p, total, fp);
	else if (old && total)
		record(SPOOL_R_REVIVE, (uintptr_t)old, 0, fp); /* the old block lives on */
	return p;
}

static void *boot_realloc(void *old, size_t n)
{
	void *p = boot_alloc(n, 16);

	if (p && old) /* the arena's blocks: copy what fits, their size is not kept */
		memcpy(p, old,
			(size_t)(boot + sizeof(boot) - (unsigned char *)old) < n
				? (size_t)(boot + sizeof(boot) - (unsigned char *)old)
				: n);
	return p;
}

EXPORT void *realloc(void *old, size_t n)
{
	void *p;

	READY();
	if (UNLIKELY(!real.realloc || in_boot(old))) {
		if (real.malloc && in_boot(old)) {
			p = real.malloc(n);
			if (p)
				memcpy(p, old, n);
			return p;
		}
		return boot_realloc(old, n);
	}
	if (!enter())
		return real.realloc(old, n);
	p = re_alloc(old, n, 1, 0, FRAME);
	leave();
	return p;
}

EXPORT void *reallocarray(void *old, size_t n, size_t k)
{
	void *p;

	READY();
	if (UNLIKELY(!real.reallocarray)) {
		size_t t;
		if (__builtin_mul_overflow(n, k, &t)) {
			errno = ENOMEM;
			return NULL;
		}
		return realloc(old, t);
	}
	if (!enter())
		return real.reallocarray(old, n, k);
	p = re_alloc(old, n, k, 1, FRAME);
	leave();
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int rc;

	READY();
	if (UNLIKELY(!real.posix_memalign)) {
		*out = boot_alloc(n, align);
		return *out ? 0 : ENOMEM;
	}
	if (!enter())
		return real.posix_memalign(out, align, n);
	rc = real.posix_memalign(out, align, n);
	if (!rc)
		record(SPOOL_R_ALLOC | MEMSCOPE_FUNC_POSIX_MEMALIGN, (uintptr_t)*out, n, FRAME);
	leave();
	return rc;
}

/* aligned_alloc, memalign, valloc and pvalloc: the block call makes, recorded as FUNC */
#define ALIGNED_BODY(fn, FUNC, call, boot_align)                                                   \
	do {                                                                                       \
		void *p;                                                                           \
		READY();                                                                           \
		if (UNLIKELY(!real.fn))                                                            \
			return boot_alloc(n, boot_align);                                          \
		if (!enter())                                                                      \
			return call;                                                               \
		p = call;                                                                          \
		if (p)                                                                             \
			record(SPOOL_R_ALLOC | FUNC, (uintptr_t)p, n, FRAME);                      \
		leave();                                                                           \
		return p;                                                                          \
	} while (0)

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	ALIGNED_BODY(
		aligned_alloc, MEMSCOPE_FUNC_ALIGNED_ALLOC, real.aligned_alloc(align, n), align);
}

EXPORT void *memalign(size_t align, size_t n)
{
	ALIGNED_BODY(memalign, MEMSCOPE_FUNC_MEMALIGN, real.memalign(align, n), align);
}

EXPORT void *valloc(size_t n)
{
	ALIGNED_BODY(valloc, MEMSCOPE_FUNC_VALLOC, real.valloc(n), 4096);
}

EXPORT void *pvalloc(size_t n)
{
	ALIGNED_BODY(pvalloc, MEMSCOPE_FUNC_PVALLOC, real.pvalloc(n), 4096);
}

EXPORT void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
	void *p;

	READY();
	if (UNLIKELY(!real.mmap))
		return (void *)syscall(SYS_mmap, addr, n, prot, flags, fd, off);
	if (!g.mmap || !(flags & MAP_ANONYMOUS) || !enter())
		return real.mmap(addr, n, prot, flags, fd, off);
	p = real.mmap(addr, n, prot, flags, fd, off);
	if (p != MAP_FAILED)
		record(SPOOL_R_ALLOC | MEMSCOPE_FUNC_MMAP, (uintptr_t)p, n, FRAME);
	leave();
	return p;
}

EXPORT int munmap(void *addr, size_t n)
{
	READY();
	if (UNLIKELY(!real.munmap))
		return (int)syscall(SYS_munmap, addr, n);
	if (g.mmap && enter()) {
		record(SPOOL_R_UNMAP, (uintptr_t)addr, n, FRAME);
		leave();
	}
	return real.munmap(addr, n);
}

/* C++ operator new and delete, hooked themselves so that a stack's innermost frame is the
 * function that called new (libstdc++ keeps no frame pointer). The guard is reset even when new
 * throws (the shim is built with -fexceptions). */
static void unguard(int *on)
{
	if (*on)
		leave();
}

/* The C++ runtime of a C program comes later (a Python extension, torch): its functions are
 * looked up when first called; when dlopen loaded it outside the global scope (RTLD_LOCAL),
 * where RTLD_NEXT does not look, new is made of malloc as the runtime makes it (without a
 * new_handler: out of memory aborts) and delete of free. */
#define NO_FN ((void *)-1) /* looked up, not found */

/* Whether *slot holds the function: looked up once. */
static int late(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (LIKELY(fn && fn != NO_FN))
		return 1;
	if (fn == NO_FN)
		return 0;
	fn = dlsym(RTLD_NEXT, name);
	if (!fn) {
		dlerror(); /* the message dlsym allocated, freed now */
		dlerror();
	}
	__atomic_store_n(slot, fn ? fn : NO_FN, __ATOMIC_RELAXED);
	return fn != NULL;
}
#define LATE(field, name) late((void **)&real.field, name)

static void *new_fallback(size_t n, size_t align, int nothrow)
{
	void *p = NULL;

	if (align > 16) {
		if (real.posix_memalign(&p, align, n ? n : 1))
			p = NULL;
	} else {
		p = real.malloc(n ? n : 1);
	}
	if (!p && !nothrow)
		abort();
	return p;
}

#define NEW_BODY(field, name, call, align, nothrow)                                                \
	do {                                                                                       \
		void *p;                                                                           \
		READY();                                                                           \
		int on __attribute__((cleanup(unguard))) = enter();                                \
		if (UNLIKELY(!LATE(field, name)))                                                  \
			p = new_fallback(n, align, nothrow);                                       \
		else                                                                               \
			p = call;                                                                  \
		if (on && p)                                                                       \
			record(SPOOL_R_ALLOC | MEMSCOPE_FUNC_NEW, (uintptr_t)p, n, FRAME);         \
		return p;                                                                          \
	} while (0)

/* the guard is held over the real delete: libstdc++'s sized delete calls the plain one, which
 * calls free */
#define DELETE_BODY(field, name, call)                                                             \
	do {                                                                                       \
		READY();                                                                           \
		if (UNLIKELY(!p || in_boot(p)))                                                    \
			return;                                                                    \
		if (UNLIKELY(!LATE(field, name))) {                                                \
			free(p);                                                                   \
			return;                                                                    \
		}                                                                                  \
		int on __attribute__((cleanup(unguard))) = enter();                                \
		if (on)                                                                            \
			record(SPOOL_R_FREE | MEMSCOPE_FUNC_DELETE, (uintptr_t)p, 0, FRAME);       \
		call;                                                                              \
	} while (0)

/* operator new(size_t), new[], their nothrow and aligned forms */
EXPORT void *_Znwm(size_t n)
{
	NEW_BODY(new_, "_Znwm", real.new_(n), 0, 0);
}

EXPORT void *_Znam(size_t n)
{
	NEW_BODY(new_a, "_Znam", real.new_a(n), 0, 0);
}

EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *t)
{
	NEW_BODY(new_nt, "_ZnwmRKSt9nothrow_t", real.new_nt(n, t), 0, 1);
}

EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *t)
{
	NEW_BODY(new_a_nt, "_ZnamRKSt9nothrow_t", real.new_a_nt(n, t), 0, 1);
}

EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t a)
{
	NEW_BODY(new_al, "_ZnwmSt11align_val_t", real.new_al(n, a), a, 0);
}

EXPORT void *_ZnamSt11align_val_t(size_t n, size_t a)
{
	NEW_BODY(new_a_al, "_ZnamSt11align_val_t", real.new_a_al(n, a), a, 0);
}

EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t)
{
	NEW_BODY(new_al_nt, "_ZnwmSt11align_val_tRKSt9nothrow_t", real.new_al_nt(n, a, t), a, 1);
}

EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t)
{
	NEW_BODY(
		new_a_al_nt, "_ZnamSt11align_val_tRKSt9nothrow_t", real.new_a_al_nt(n, a, t), a, 1);
}

/* operator delete(void *), delete[], their sized, aligned and nothrow forms */
EXPORT void _ZdlPv(void *p)
{
	DELETE_BODY(del, "_ZdlPv", real.del(p));
}

EXPORT void _ZdaPv(void *p)
{
	DELETE_BODY(del_a, "_ZdaPv", real.del_a(p));
}

EXPORT void _ZdlPvm(void *p, size_t n)
{
	DELETE_BODY(del_s, "_ZdlPvm", real.del_s(p, n));
}

EXPORT void _ZdaPvm(void *p, size_t n)
{
	DELETE_BODY(del_a_s, "_ZdaPvm", real.del_a_s(p, n));
}

EXPORT void _ZdlPvSt11align_val_t(void *p, size_t a)
{
	DELETE_BODY(del_al, "_ZdlPvSt11align_val_t", real.del_al(p, a));
}

EXPORT void _ZdaPvSt11align_val_t(void *p, size_t a)
{
	DELETE_BODY(del_a_al, "_ZdaPvSt11align_val_t", real.del_a_al(p, a));
}

EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a)
{
	DELETE_BODY(del_s_al, "_ZdlPvmSt11align_val_t", real.del_s_al(p, n, a));
}

EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a)
{
	DELETE_BODY(del_a_s_al, "_ZdaPvmSt11align_val_t", real.del_a_s_al(p, n, a));
}

EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *t)
{
	DELETE_BODY(del_nt, "_ZdlPvRKSt9nothrow_t", real.del_nt(p, t));
}

EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *t)
{
	DELETE_BODY(del_a_nt, "_ZdaPvRKSt9nothrow_t", real.del_a_nt(p, t));
}

EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *t)
{
	DELETE_BODY(del_al_nt, "_ZdlPvSt11align_val_tRKSt9nothrow_t", real.del_al_nt(p, a, t));
}

EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *t)
{
	DELETE_BODY(del_a_al_nt, "_ZdaPvSt11align_val_tRKSt9nothrow_t", real.del_a_al_nt(p, a, t));
}

/* exit, _exit and _Exit: the status into the spool's header first */
EXPORT void exit(int status)
{
	READY();
	write_exit(SPOOL_EXIT_EXIT, (uint64_t)(unsigned)status);
	real.exit(status);
}

EXPORT void _exit(int status)
{
	READY();
	write_exit(SPOOL_EXIT__EXIT, (uint64_t)(unsigned)status);
	if (real._exit)
		real._exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

EXPORT void _Exit(int status)
{
	READY();
	write_exit(SPOOL_EXIT__EXIT, (uint64_t)(unsigned)status);
	if (real._Exit)
		real._Exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* ---------------------------------------------------------------- markers */

static uint64_t marker(unsigned what, const char *text, uint64_t id)
{
	unsigned char *p, *q;
	size_t n = 0;
	uint64_t t;

	READY();
	if (!enter())
		return 0;
	if (what == SPOOL_RANGE_START)
		id = atomic_fetch_add(&g.range_id, 1) + 1;
	if (text)
		while (n < SPOOL_TEXT_MAX && text[n])
			n++;
	p = room(1 + 10 + 1 + 10 + 10 + n);
	if (p) {
		t = ticks();
		q = put_varint(p + 1, t - T.prev_tick);
		T.prev_tick = t;
		*q++ = (unsigned char)what;
		q = put_varint(q, id);
		q = put_varint(q, n);
		memcpy(q, text, n);
		commit(SPOOL_R_MARK, q + n);
	} else {
		atomic_fetch_add_explicit(&g.lost, 1, memory_order_relaxed);
	}
	leave();
	return id;
}

EXPORT void memscope_record_mark(const char *text)
{
	marker(SPOOL_MARK, text, 0);
}

EXPORT uint64_t memscope_record_range_start(const char *text)
{
	return marker(SPOOL_RANGE_START, text, 0);
}

EXPORT void memscope_record_range_end(uint64_t id)
{
	if (id)
		marker(SPOOL_RANGE_END, NULL, id);
}

/* msTX: the exported functions of libms_tools_ext.so where a program links them, and the
 * injection entry point the header-only msTX looks up (formats/record.md, "Markers"). */
EXPORT void mstxMarkA(const char *message, void *stream)
{
	(void)stream;
	memscope_record_mark(message);
}

EXPORT uint64_t mstxRangeStartA(const char *message, void *stream)
{
	(void)stream;
	return memscope_record_range_start(message);
}

EXPORT void mstxRangeEnd(uint64_t id)
{
	memscope_record_range_end(id);
}

typedef void (*mstx_fn)(void);
typedef int (*mstx_get_table)(int module, mstx_fn ***table, unsigned *size);

EXPORT int InitInjectionMstx(mstx_get_table get)
{
	mstx_fn **t = NULL;
	unsigned n = 0;

	if (!get || get(1 /* MSTX_API_MODULE_CORE */, &t, &n) || !t)
		return 1;
	if (n >= 1 && t[1])
		*t[1] = (mstx_fn)mstxMarkA;
	if (n >= 2 && t[2])
		*t[2] = (mstx_fn)mstxRangeStartA;
	if (n >= 3 && t[3])
		*t[3] = (mstx_fn)mstxRangeEnd;
	return 0;
}
