/* Victim: a leak five calls below main, built twice (deep_noomit with frame pointers, deep_omit
 * without): the stacks memscope-record records of each, whole or cut short, compared. */
#include <stdlib.h>

#include "victim.h"

void *victim_keep[64];

__attribute__((noinline)) static void *level4(size_t n)
{
	void *p = malloc(n); /* LEAK 4444 */
	victim_keep[1] = p;
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void *level3(size_t n)
{
	void *p = level4(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void *level2(size_t n)
{
	void *p = level3(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *level1(size_t n)
{
	void *p = level2(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(void)
{
	victim_keep[0] = level1(4444);
	say("ok\n");
	return 0;
}
