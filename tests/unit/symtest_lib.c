/* A small library, built with -g -O0, whose return addresses the symbolizer test resolves: calls on
 * lines it reports itself, and a call inlined into another function. */
#include "symtest.h"

__attribute__((noinline)) void *symtest_ra(int *line_out, int line)
{
	*line_out = line;
	return __builtin_return_address(0);
}

void *symtest_call(int *line)
{
	return symtest_ra(line, __LINE__);
}

/* lines[0]: the line of the call in here, lines[1]: the line of the call to here */
static inline __attribute__((always_inline)) void *symtest_inl(int *lines, int outer_line)
{
	lines[1] = outer_line;
	return symtest_ra(&lines[0], __LINE__);
}

void *symtest_outer(int *lines)
{
	return symtest_inl(lines, __LINE__);
}

const char *symtest_file(void)
{
	return __FILE__;
}
