/* The analyses a caller can make by name: every analysis whose table has a create. */
#include <string.h>

#include "memscope/memscope.h"

static const struct memscope_analysis *const analyses[] = {
	&memscope_leaks_analysis,
	&memscope_inefficient_analysis,
	&memscope_flame_analysis,
	&memscope_timeline_analysis,
	&memscope_peak_analysis,
};
#define N_ANALYSES (sizeof(analyses) / sizeof(analyses[0]))

const struct memscope_analysis *const *memscope_analyses(size_t *n)
{
	*n = N_ANALYSES;
	return analyses;
}

const struct memscope_analysis *memscope_analysis_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_ANALYSES; i++)
		if (strcmp(analyses[i]->name, name) == 0)
			return analyses[i];
	return NULL;
}
