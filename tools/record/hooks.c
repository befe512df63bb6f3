/* memscope-record's LD_PRELOAD shim, its preloaded hooks: the malloc family, C++ new/delete,
 * mmap and munmap, the exit family and the marker functions (memscope_record.h, msTX) of the
 * program it is loaded into, each handing what it saw to the tracker (tracker.h) around the
 * real call. No stdio, no malloc and no lock on the recording path. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memscope/event.h"
#include "tracker.h"

#define EXPORT __attribute__((visibility("default")))
/* the hook's own frame, where the stack of what it records starts */
#define FRAME ((const uintptr_t *)__builtin_frame_address(0))

struct rec_real ms__rec_real;

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

#define FIND(field, name) (*(void **)&ms__rec_real.field = dlsym(RTLD_NEXT, name))

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

/* First call of any hook, or the shim's constructor if none came before: find the real functions
 * (dlsym may allocate: the bootstrap arena answers), then start recording if the launcher asked,
 * so that what other libraries' constructors allocate is recorded too. */
static void init(void)
{
	int off = ST_OFF, guard = ms__rec_thr.guard;

	if (!atomic_compare_exchange_strong(&ms__rec.state, &off, ST_RESOLVING))
		return;
	resolve();
	atomic_store(&ms__rec.state, ST_PASS);
	ms__rec_thr.guard = 1;
	ms__rec_start();
	ms__rec_thr.guard = guard;
}

__attribute__((constructor)) static void shim_load(void)
{
	init();
}

/* Whether the process runs one thread now (/proc/self/stat's 20th field); 0 when not known. */
static int one_thread(void)
{
	char buf[1024], *p, *end;
	ssize_t n = -1;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field = 2;

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the command's name may hold spaces */
	for (; p && field < 20; p = strchr(p + 1, ' '))
		field++;
	return p && strtol(p, &end, 10) == 1 && end > p;
}

/* At the end of a recorded process, as valgrind does: glibc's and libstdc++'s own caches
 * released (__libc_freeres, __gnu_cxx::__freeres: the DTVs of joined threads, dlerror's
 * messages, stdio's buffers, the C++ emergency pool), so that the blocks left are the
 * program's. Only with one thread left: another could still be using them. */
static void release_caches(void)
{
	void (*cxx)(void), (*libc)(void);
	int guard = ms__rec_thr.guard;

	if (atomic_load(&ms__rec.state) != ST_ON || (uint64_t)getpid() != ms__rec.pid ||
		!one_thread())
		return;
	/* the lookups' blocks (a failed one's message) are not the program's: not recorded */
	ms__rec_thr.guard = 1;
	*(void **)&cxx = dlsym(RTLD_DEFAULT, "_ZN9__gnu_cxx9__freeresEv");
	*(void **)&libc = dlsym(RTLD_DEFAULT, "__libc_freeres");
	dlerror();
	dlerror();
	ms__rec_thr.guard = guard;
	if (cxx)
		cxx();
	if (libc)
		libc();
}

__attribute__((destructor)) static void shim_unload(void)
{
	release_caches();
	ms__rec_exit(SPOOL_EXIT_RETURN, 0);
	ms__rec_write_lost(); /* again: the destructors that ran after exit's call may have added */
}

/* ---------------------------------------------------------------- the hooks */

#define READY()                                                                                    \
	do {                                                                                       \
		if (UNLIKELY(                                                                      \
			    atomic_load_explicit(&ms__rec.state, memory_order_relaxed) < ST_PASS)) \
			init();                                                                    \
	} while (0)

EXPORT void *malloc(size_t n)
{
	void *p;

	READY();
	if (UNLIKELY(!ms__rec_real.malloc))
		return boot_alloc(n, 16);
	if (!enter())
		return ms__rec_real.malloc(n);
	p = ms__rec_real.malloc(n);
	if (p)
		ms__rec_event(SPOOL_R_ALLOC | MEMSCOPE_FUNC_MALLOC, (uintptr_t)p, n, FRAME);
	leave();
	return p;
}

EXPORT void free(void *p)
{
	READY();
	if (UNLIKELY(!p || in_boot(p)))
		return;
	if (UNLIKELY(!ms__rec_real.free))
		return;
	if (!enter()) {
		ms__rec_real.free(p);
		return;
	}
	ms__rec_event(SPOOL_R_FREE | MEMSCOPE_FUNC_FREE, (uintptr_t)p, 0, FRAME);
	ms__rec_real.free(
		p); /* under the guard: an allocator that allocates in free is not recorded */
	leave();
}

EXPORT void *calloc(size_t k, size_t n)
{
	void *p;
	size_t total;

	READY();
	if (__builtin_mul_overflow(k, n, &total))
		total = SIZE_MAX;
	if (UNLIKELY(!ms__rec_real.calloc)) {
		p = total == SIZE_MAX ? NULL : boot_alloc(total, 16);
		return p; /* the arena is zero */
	}
	if (!enter())
		return ms__rec_real.calloc(k, n);
	p = ms__rec_real.calloc(k, n);
	if (p)
		ms__rec_event(SPOOL_R_ALLOC | MEMSCOPE_FUNC_CALLOC, (uintptr_t)p, total, FRAME);
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
		ms__rec_event(SPOOL_R_FREE | MEMSCOPE_FUNC_REALLOC, (uintptr_t)old, 0, fp);
	p = array ? ms__rec_real.reallocarray(old, n, k) : ms__rec_real.realloc(old, n);
	if (p)
		ms__rec_event(SPOOL_R_ALLOC | MEMSCOPE_FUNC_REALLOC, (uintptr_t)p, total, fp);
	else if (old && total)
		ms__rec_event(SPOOL_R_REVIVE, (uintptr_t)old, 0, fp); /* the old block lives on */
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
	if (UNLIKELY(!ms__rec_real.realloc || in_boot(old))) {
		if (ms__rec_real.malloc && in_boot(old)) {
			p = ms__rec_real.malloc(n);
			if (p)
				memcpy(p, old, n);
			return p;
		}
		return boot_realloc(old, n);
	}
	if (!enter())
		return ms__rec_real.realloc(old, n);
	p = re_alloc(old, n, 1, 0, FRAME);
	leave();
	return p;
}

EXPORT void *reallocarray(void *old, size_t n, size_t k)
{
	void *p;

	READY();
	if (UNLIKELY(!ms__rec_real.reallocarray)) {
		size_t t;
		if (__builtin_mul_overflow(n, k, &t)) {
			errno = ENOMEM;
			return NULL;
		}
		return realloc(old, t);
	}
	if (!enter())
		return ms__rec_real.reallocarray(old, n, k);
	p = re_alloc(old, n, k, 1, FRAME);
	leave();
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int rc;

	READY();
	if (UNLIKELY(!ms__rec_real.posix_memalign)) {
		*out = boot_alloc(n, align);
		return *out ? 0 : ENOMEM;
	}
	if (!enter())
		return ms__rec_real.posix_memalign(out, align, n);
	rc = ms__rec_real.posix_memalign(out, align, n);
	if (!rc)
		ms__rec_event(
			SPOOL_R_ALLOC | MEMSCOPE_FUNC_POSIX_MEMALIGN, (uintptr_t)*out, n, FRAME);
	leave();
	return rc;
}

/* aligned_alloc, memalign, valloc and pvalloc: the block call makes, recorded as FUNC */
#define ALIGNED_BODY(fn, FUNC, call, boot_align)                                                   \
	do {                                                                                       \
		void *p;                                                                           \
		READY();                                                                           \
		if (UNLIKELY(!ms__rec_real.fn))                                                    \
			return boot_alloc(n, boot_align);                                          \
		if (!enter())                                                                      \
			return call;                                                               \
		p = call;                                                                          \
		if (p)                                                                             \
			ms__rec_event(SPOOL_R_ALLOC | FUNC, (uintptr_t)p, n, FRAME);               \
		leave();                                                                           \
		return p;                                                                          \
	} while (0)

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	ALIGNED_BODY(aligned_alloc, MEMSCOPE_FUNC_ALIGNED_ALLOC,
		ms__rec_real.aligned_alloc(align, n), align);
}

EXPORT void *memalign(size_t align, size_t n)
{
	ALIGNED_BODY(memalign, MEMSCOPE_FUNC_MEMALIGN, ms__rec_real.memalign(align, n), align);
}

EXPORT void *valloc(size_t n)
{
	ALIGNED_BODY(valloc, MEMSCOPE_FUNC_VALLOC, ms__rec_real.valloc(n), 4096);
}

EXPORT void *pvalloc(size_t n)
{
	ALIGNED_BODY(pvalloc, MEMSCOPE_FUNC_PVALLOC, ms__rec_real.pvalloc(n), 4096);
}

EXPORT void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
	void *p;

	READY();
	if (UNLIKELY(!ms__rec_real.mmap))
		return (void *)syscall(SYS_mmap, addr, n, prot, flags, fd, off);
	if (!ms__rec.mmap || !(flags & MAP_ANONYMOUS) || !enter())
		return ms__rec_real.mmap(addr, n, prot, flags, fd, off);
	p = ms__rec_real.mmap(addr, n, prot, flags, fd, off);
	if (p != MAP_FAILED)
		ms__rec_event(SPOOL_R_ALLOC | MEMSCOPE_FUNC_MMAP, (uintptr_t)p, n, FRAME);
	leave();
	return p;
}

EXPORT int munmap(void *addr, size_t n)
{
	READY();
	if (UNLIKELY(!ms__rec_real.munmap))
		return (int)syscall(SYS_munmap, addr, n);
	if (ms__rec.mmap && enter()) {
		ms__rec_event(SPOOL_R_UNMAP, (uintptr_t)addr, n, FRAME);
		leave();
	}
	return ms__rec_real.munmap(addr, n);
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
#define LATE(field, name) late((void **)&ms__rec_real.field, name)

static void *new_fallback(size_t n, size_t align, int nothrow)
{
	void *p = NULL;

	if (align > 16) {
		if (ms__rec_real.posix_memalign(&p, align, n ? n : 1))
			p = NULL;
	} else {
		p = ms__rec_real.malloc(n ? n : 1);
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
			ms__rec_event(SPOOL_R_ALLOC | MEMSCOPE_FUNC_NEW, (uintptr_t)p, n, FRAME);  \
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
			ms__rec_event(                                                             \
				SPOOL_R_FREE | MEMSCOPE_FUNC_DELETE, (uintptr_t)p, 0, FRAME);      \
		call;                                                                              \
	} while (0)

/* operator new(size_t), new[], their nothrow and aligned forms */
EXPORT void *_Znwm(size_t n)
{
	NEW_BODY(new_, "_Znwm", ms__rec_real.new_(n), 0, 0);
}

EXPORT void *_Znam(size_t n)
{
	NEW_BODY(new_a, "_Znam", ms__rec_real.new_a(n), 0, 0);
}

EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *t)
{
	NEW_BODY(new_nt, "_ZnwmRKSt9nothrow_t", ms__rec_real.new_nt(n, t), 0, 1);
}

EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *t)
{
	NEW_BODY(new_a_nt, "_ZnamRKSt9nothrow_t", ms__rec_real.new_a_nt(n, t), 0, 1);
}

EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t a)
{
	NEW_BODY(new_al, "_ZnwmSt11align_val_t", ms__rec_real.new_al(n, a), a, 0);
}

EXPORT void *_ZnamSt11align_val_t(size_t n, size_t a)
{
	NEW_BODY(new_a_al, "_ZnamSt11align_val_t", ms__rec_real.new_a_al(n, a), a, 0);
}

EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t)
{
	NEW_BODY(new_al_nt, "_ZnwmSt11align_val_tRKSt9nothrow_t", ms__rec_real.new_al_nt(n, a, t),
		a, 1);
}

EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t)
{
	NEW_BODY(new_a_al_nt, "_ZnamSt11align_val_tRKSt9nothrow_t",
		ms__rec_real.new_a_al_nt(n, a, t), a, 1);
}

/* operator delete(void *), delete[], their sized, aligned and nothrow forms */
EXPORT void _ZdlPv(void *p)
{
	DELETE_BODY(del, "_ZdlPv", ms__rec_real.del(p));
}

EXPORT void _ZdaPv(void *p)
{
	DELETE_BODY(del_a, "_ZdaPv", ms__rec_real.del_a(p));
}

EXPORT void _ZdlPvm(void *p, size_t n)
{
	DELETE_BODY(del_s, "_ZdlPvm", ms__rec_real.del_s(p, n));
}

EXPORT void _ZdaPvm(void *p, size_t n)
{
	DELETE_BODY(del_a_s, "_ZdaPvm", ms__rec_real.del_a_s(p, n));
}

EXPORT void _ZdlPvSt11align_val_t(void *p, size_t a)
{
	DELETE_BODY(del_al, "_ZdlPvSt11align_val_t", ms__rec_real.del_al(p, a));
}

EXPORT void _ZdaPvSt11align_val_t(void *p, size_t a)
{
	DELETE_BODY(del_a_al, "_ZdaPvSt11align_val_t", ms__rec_real.del_a_al(p, a));
}

EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a)
{
	DELETE_BODY(del_s_al, "_ZdlPvmSt11align_val_t", ms__rec_real.del_s_al(p, n, a));
}

EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a)
{
	DELETE_BODY(del_a_s_al, "_ZdaPvmSt11align_val_t", ms__rec_real.del_a_s_al(p, n, a));
}

EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *t)
{
	DELETE_BODY(del_nt, "_ZdlPvRKSt9nothrow_t", ms__rec_real.del_nt(p, t));
}

EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *t)
{
	DELETE_BODY(del_a_nt, "_ZdaPvRKSt9nothrow_t", ms__rec_real.del_a_nt(p, t));
}

EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *t)
{
	DELETE_BODY(
		del_al_nt, "_ZdlPvSt11align_val_tRKSt9nothrow_t", ms__rec_real.del_al_nt(p, a, t));
}

EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *t)
{
	DELETE_BODY(del_a_al_nt, "_ZdaPvSt11align_val_tRKSt9nothrow_t",
		ms__rec_real.del_a_al_nt(p, a, t));
}

/* exit, _exit and _Exit: the status into the spool's header first */
EXPORT void exit(int status)
{
	READY();
	ms__rec_exit(SPOOL_EXIT_EXIT, (uint64_t)(unsigned)status);
	ms__rec_real.exit(status);
}

/* _exit and _Exit: the real one (fn, NULL when not found) or the system call */
__attribute__((noreturn)) static void exit_now(void (*fn)(int), int status)
{
	ms__rec_exit(SPOOL_EXIT__EXIT, (uint64_t)(unsigned)status);
	if (fn)
		fn(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

EXPORT void _exit(int status)
{
	READY();
	exit_now(ms__rec_real._exit, status);
}

EXPORT void _Exit(int status)
{
	READY();
	exit_now(ms__rec_real._Exit, status);
}

/* ---------------------------------------------------------------- markers */

static uint64_t marker(unsigned what, const char *text, uint64_t id)
{
	READY();
	if (!enter())
		return 0;
	id = ms__rec_mark(what, text, id);
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
