/* The live-bytes series shared by the peak and the timeline (live_series.h): a row's changes of
 * live bytes and their running sums per (process, device, pool). */
#include <stdlib.h>

#include "../core/internal.h"
#include "live_series.h"
#include "memscope/blocks.h"
#include "memscope/memscope.h"

int ms__live_changes(struct memscope_blocks *blocks, const struct memscope_event *ev,
	struct ms__live_change out[2], size_t *n)
{
	struct memscope_block b;
	int res = memscope_blocks_feed(blocks, ev, &b);

	*n = 0;
	if (res < 0)
		return res;
	if ((res == MEMSCOPE_PAIR_REPLACED || res == MEMSCOPE_PAIR_FREE ||
		    res == MEMSCOPE_PAIR_SHADOW_FREE) &&
		b.size > 0)
		out[(*n)++] = (struct ms__live_change){ -b.size, b.device, b.pool, b.tag };
	if ((res == MEMSCOPE_PAIR_ALLOC || res == MEMSCOPE_PAIR_REPLACED) &&
		(ev->flags & MEMSCOPE_EV_SIZE) && ev->size > 0)
		out[(*n)++] = (struct ms__live_change){ ev->size, ev->device, ev->pool, 0 };
	return 0;
}

void ms__live_sums_process(struct ms__live_sums *s)
{
	s->gen++;
	s->n = 0;
}

int ms__live_sums_add(struct ms__live_sums *s, int32_t device, uint16_t pool, int64_t change,
	int64_t *after, size_t *slot)
{
	uint64_t key = ms__live_pool_key(device, pool), ix, gen;
	int64_t cur;

	if (ms__u64map_get(&s->slot_of, key, &ix, &gen) && gen == s->gen) {
		/* saturating: sizes near 2^63 are hostile, not real */
		if (__builtin_add_overflow(s->bytes[ix], change, &cur))
			cur = change > 0 ? INT64_MAX : INT64_MIN;
		*after = s->bytes[ix] = cur;
		*slot = (size_t)ix;
		return 0;
	}
	if (ms__grow_array(&s->bytes, &s->cap, s->n + 1, sizeof(*s->bytes)) ||
		ms__u64map_put(&s->slot_of, key, s->n, s->gen))
		return MEMSCOPE_E_NOMEM;
	*after = s->bytes[s->n] = change;
	*slot = s->n++;
	return 1;
}

void ms__live_sums_free(struct ms__live_sums *s)
{
	ms__u64map_free(&s->slot_of);
	free(s->bytes);
	s->bytes = NULL;
	s->n = s->cap = 0;
}
