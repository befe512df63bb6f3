/* Victim: steps marked the way msTX's header-only form does it, emulated here: look up
 * InitInjectionMstx in the global scope (what msTX does with MSTX_INJECTION_PATH unset), hand it
 * a callback giving out the core table (slots 1..3: mark, range start, range end, each the
 * address of a function-pointer variable), then call through those variables. Without a tool
 * they stay no-ops. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include "victim.h"

#define LEAK_STEP 2

typedef void (*mstx_fn)(void);
typedef int (*mstx_get_table)(int module, mstx_fn ***table, unsigned *size);
typedef int (*mstx_init)(mstx_get_table get);

void *victim_keep[64];

static void mark_noop(const char *message, void *stream)
{
	(void)message;
	(void)stream;
}

static uint64_t range_start_noop(const char *message, void *stream)
{
	(void)message;
	(void)stream;
	return 0;
}

static void range_end_noop(uint64_t id)
{
	(void)id;
}

static void (*mark_a)(const char *, void *) = mark_noop;
static uint64_t (*range_start_a)(const char *, void *) = range_start_noop;
static void (*range_end)(uint64_t) = range_end_noop;

/* the core module's table: slot 0 unused */
static mstx_fn *core_table[4] = { NULL, (mstx_fn *)&mark_a, (mstx_fn *)&range_start_a,
	(mstx_fn *)&range_end };

static int get_table(int module, mstx_fn ***table, unsigned *size)
{
	if (module != 1 || !table || !size)
		return 1;
	*table = core_table;
	*size = 4;
	return 0;
}

static void *step_leak(void)
{
	return malloc(3333); /* LEAK:step 3333 */
}

int main(void)
{
	mstx_init init = (mstx_init)dlsym(RTLD_DEFAULT, "InitInjectionMstx");
	int step;

	if (init && init(get_table))
		return 1;
	mark_a("start", NULL);
	for (step = 1; step <= 4; step++) {
		uint64_t id = range_start_a("step start", NULL);
		churn(4096);
		if (step == LEAK_STEP)
			victim_keep[0] = step_leak();
		range_end(id);
	}
	say(init ? "ok injected\n" : "ok\n");
	return 0;
}
