/* Victim: 4 steps marked with memscope_record.h's ranges, one block leaked in step LEAK_STEP;
 * runs as well without memscope-record (the markers do nothing then). */
#include <stdlib.h>

#include "memscope_record.h"
#include "victim.h"

#define LEAK_STEP 2

void *victim_keep[64];

static void *step_leak(void)
{
	return malloc(2222); /* LEAK:step 2222 */
}

int main(void)
{
	int step;

	memscope_mark("start");
	for (step = 1; step <= 4; step++) {
		uint64_t id = memscope_range_start("step start");
		churn(4096);
		if (step == LEAK_STEP)
			victim_keep[0] = step_leak();
		memscope_range_end(id);
	}
	say("ok\n");
	return 0;
}
