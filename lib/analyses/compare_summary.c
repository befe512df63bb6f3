/* The summary of a comparison: rows per device and the rows of largest difference. */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/compare.h"

struct memscope_compare_summary {
	struct memscope_compare_device *devs;
	size_t n_devs, cap_devs;
	size_t n_top, max_top;
	struct memscope_compare_row top[]; /* max_top of them, largest |diff| first */
};

struct memscope_compare_summary *memscope_compare_summary_new(size_t top)
{
	struct memscope_compare_summary *s = NULL;

	if (top < (SIZE_MAX - sizeof(*s)) / sizeof(s->top[0]) &&
		(s = calloc(1, sizeof(*s) + top * sizeof(s->top[0]))))
		s->max_top = top;
	return s;
}

void memscope_compare_summary_free(struct memscope_compare_summary *s)
{
	if (s)
		free(s->devs);
	free(s);
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

/* Keep the max_top rows of largest absolute difference (the first of equals stays first). */
static void keep_top(struct memscope_compare_summary *s, const struct memscope_compare_row *r)
{
	size_t i = s->n_top;

	if (!r->diff || !s->max_top || (i == s->max_top && mag(s->top[i - 1].diff) >= mag(r->diff)))
		return;
	if (i == s->max_top)
		i--;
	while (i > 0 && mag(s->top[i - 1].diff) < mag(r->diff)) {
		s->top[i] = s->top[i - 1];
		i--;
	}
	s->top[i] = *r;
	if (s->n_top < s->max_top)
		s->n_top++;
}

int memscope_compare_summary_add(
	struct memscope_compare_summary *s, const struct memscope_compare_row *r)
{
	struct memscope_compare_device *d;

	if (!s->n_devs || s->devs[s->n_devs - 1].device != r->device) {
		if (grow_array(&s->devs, &s->cap_devs, s->n_devs + 1, sizeof(*s->devs)))
			return MEMSCOPE_E_NOMEM;
		memset(&s->devs[s->n_devs], 0, sizeof(*d));
		s->devs[s->n_devs++].device = r->device;
	}
	d = &s->devs[s->n_devs - 1];
	keep_top(s, r);
	d->n_matched += r->has_base && r->has_cmp;
	d->n_base_only += r->has_base && !r->has_cmp;
	d->n_cmp_only += !r->has_base && r->has_cmp;
	if (__builtin_add_overflow(d->diff, r->diff, &d->diff))
		d->diff = r->diff < 0 ? INT64_MIN : INT64_MAX;
	return 0;
}

const struct memscope_compare_device *memscope_compare_summary_devices(
	const struct memscope_compare_summary *s, size_t *n)
{
	*n = s->n_devs;
	return s->devs;
}

const struct memscope_compare_row *memscope_compare_summary_top(
	const struct memscope_compare_summary *s, size_t *n)
{
	*n = s->n_top;
	return s->top;
}
