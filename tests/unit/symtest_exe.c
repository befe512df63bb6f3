/* A small program, built as a PIE and as a fixed-address executable, that prints how its own module
 * looks in memory and a return address in it with the source line of its call: what the
 * symbolizer test feeds the symbolizer. Output: BIAS LO HI BUILDID RA LINE FILE (hex but LINE). */
#include <inttypes.h>
#include <stdio.h>

#include "symtest.h"

static __attribute__((noinline)) void *exe_ra(int *line_out, int line)
{
	*line_out = line;
	return __builtin_return_address(0);
}

static __attribute__((noinline)) void *exe_call(int *line)
{
	return exe_ra(line, __LINE__);
}

int main(void)
{
	struct symtest_mod m;
	int line = 0;
	void *ra = exe_call(&line);
	size_t i;

	symtest_find((uintptr_t)ra - 1, &m);
	if (!m.found)
		return 1;
	printf("%" PRIx64 " %" PRIx64 " %" PRIx64 " ", m.bias, m.lo, m.hi);
	for (i = 0; i < m.id_len; i++)
		printf("%02x", m.id[i]);
	printf("%s %" PRIxPTR " %d %s\n", m.id_len ? "" : "-", (uintptr_t)ra, line, __FILE__);
	return 0;
}
