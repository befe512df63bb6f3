/* Shared bits of the memscope-record victims: output without stdio (stdio's buffers would be
 * blocks of libc's own in the recording), and a place that keeps planted blocks reachable.
 *
 * A planted leak is marked on the line that allocates it: LEAK[:TAG] SIZE... in a comment,
 * SIZE a number or the name of a size_t array of this file whose values are the blocks
 * allocated there (test_record.sh and check_record.py read the markers; TAG names the process
 * image: main by default, child for a forked child). */
#ifndef VICTIM_H
#define VICTIM_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* planted blocks stay reachable through here: the compiler cannot drop their allocations */
extern void *victim_keep[64];

/* malloc(n) then free: through a volatile pointer, so the pair is not elided (compilers may
 * drop a malloc whose block is only freed) */
static inline void churn(size_t n)
{
	void *volatile p = malloc(n);
	free(p);
}

static inline void say(const char *s)
{
	ssize_t r = write(1, s, strlen(s));
	(void)r;
}

/* text, then n in decimal and a newline */
static inline void say_num(const char *text, long n)
{
	char buf[32], *p = buf + sizeof(buf) - 1;

	*p = 0;
	*--p = '\n';
	do
		*--p = (char)('0' + n % 10);
	while ((n /= 10));
	say(text);
	say(p);
}

#endif
