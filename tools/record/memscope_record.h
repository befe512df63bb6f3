/* Markers for memscope-record: name a moment or a range of a program's run in its recording.
 * Header only; without memscope-record (its shim not loaded) every call does nothing. Thread-safe;
 * async-signal-safe in a PIE program or library (a plain -no-pie program looks the shim up with
 * dlsym at each function's first call). Steps: a range named "step start", ended by
 * memscope_range_end, is a step to memscope-leaks and the other tools, as msMemScope's mstx
 * convention. */
#ifndef MEMSCOPE_RECORD_API_H
#define MEMSCOPE_RECORD_API_H

#include <dlfcn.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the shim's functions, when it is loaded: weak references (NULL without it; also NULL in a
 * program linked -no-pie from objects built without -fPIE, where they are bound at link time),
 * else looked up once with dlsym (glibc: a NULL handle searches the global scope) */
extern void memscope_record_mark(const char *text) __attribute__((weak));
extern uint64_t memscope_record_range_start(const char *text) __attribute__((weak));
extern void memscope_record_range_end(uint64_t id) __attribute__((weak));

/* dlsym(name), once: *cache holds the answer, cache itself standing for "none" */
static inline void *memscope_record_fn_(const char *name, void **cache)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (!fn) {
		fn = dlsym((void *)0, name);
		__atomic_store_n(cache, fn ? fn : (void *)cache, __ATOMIC_RELAXED);
	}
	return fn == (void *)cache ? (void *)0 : fn;
}

/* A marker named text (at most 1024 bytes kept). */
static inline void memscope_mark(const char *text)
{
	static void *cache;
	void (*fn)(const char *) = memscope_record_mark;

	if (!fn)
		fn = __extension__(void (*)(const char *))
			memscope_record_fn_("memscope_record_mark", &cache);
	if (fn)
		fn(text);
}

/* The start of a range named text; returns its id for memscope_range_end (0 when not
 * recording). */
static inline uint64_t memscope_range_start(const char *text)
{
	static void *cache;
	uint64_t (*fn)(const char *) = memscope_record_range_start;

	if (!fn)
		fn = __extension__(uint64_t(*)(const char *))
			memscope_record_fn_("memscope_record_range_start", &cache);
	return fn ? fn(text) : 0;
}

/* The end of the range id (0: nothing). */
static inline void memscope_range_end(uint64_t id)
{
	static void *cache;
	void (*fn)(uint64_t) = memscope_record_range_end;

	if (!fn)
		fn = __extension__(void (*)(uint64_t))
			memscope_record_fn_("memscope_record_range_end", &cache);
	if (fn && id)
		fn(id);
}

#ifdef __cplusplus
}
#endif

#endif
