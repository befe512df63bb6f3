/* Victim: planted leaks through every allocator of the malloc family, in main and in helpers;
 * exits with the status given as its argument (default 0). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* reallocarray, valloc */
#endif
#include <malloc.h>
#include <stdlib.h>

#include "victim.h"

void *victim_keep[64];

static void *from_helper(size_t n)
{
	return malloc(n); /* LEAK 1111 */
}

__attribute__((noinline)) void *realloc_chain(void)
{
	char *p = malloc(10);
	p = realloc(p, 100);
	p = realloc(p, 5000);
	p = realloc(p, 2500); /* LEAK 2500 */
	return p;
}

__attribute__((noinline)) void *aligned_blocks(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 640)) /* LEAK 640 */
		return NULL;
	victim_keep[10] = aligned_alloc(256, 768); /* LEAK 768 */
	victim_keep[11] = memalign(32, 96);	   /* LEAK 96 */
	victim_keep[12] = valloc(333);		   /* LEAK 333 */
	return p;
}

int main(int argc, char **argv)
{
	char *tmp;
	int i;

	victim_keep[0] = malloc(4242); /* LEAK 4242 */
	victim_keep[1] = from_helper(1111);
	victim_keep[2] = realloc_chain();
	victim_keep[3] = calloc(7, 300); /* LEAK 2100 */
	victim_keep[4] = aligned_blocks();
	/* freed blocks are no leaks: a realloc chain ending in free, reallocarray, calloc */
	tmp = realloc(NULL, 50);
	tmp = reallocarray(tmp, 10, 20);
	victim_keep[20] = tmp;
	free(victim_keep[20]);
	for (i = 0; i < 100; i++) {
		victim_keep[21] = calloc(i + 1, 8);
		free(victim_keep[21]);
	}
	say("ok\n");
	return argc > 1 ? atoi(argv[1]) : 0;
}
