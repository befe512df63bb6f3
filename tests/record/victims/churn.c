/* Victim: many allocations (more events than a small disk holds), then exits 3. */
#include <stdlib.h>

#include "victim.h"

void *victim_keep[64];

int main(void)
{
	long i;

	for (i = 0; i < 200000; i++)
		churn((size_t)(i & 1023) + 1);
	say("done\n");
	return 3;
}
