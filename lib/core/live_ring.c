/* Implementation of the live host-block set (live_ring.h). */
#include <stdlib.h>

#include "live_ring.h"
#include "memscope/error.h"

int ms__live_ring_put(struct live_ring *r, uint64_t serial, uint64_t ptr, uint64_t size)
{
	struct live_slot *s;

	if (!r->slot && !(r->slot = calloc(LIVE_RING_SIZE, sizeof(*r->slot))))
		return MEMSCOPE_E_NOMEM;
	s = &r->slot[serial & (LIVE_RING_SIZE - 1)];
	if (s->serial && ms__u64map_put(&r->spill, s->serial, s->ptr, s->size))
		return MEMSCOPE_E_NOMEM;
	*s = (struct live_slot){ serial, ptr, size };
	return 0;
}

int ms__live_ring_find(
	struct live_ring *r, uint64_t serial, uint64_t *ptr, uint64_t *size, int take)
{
	struct live_slot *s;

	if (!r->slot || serial == 0)
		return 0;
	s = &r->slot[serial & (LIVE_RING_SIZE - 1)];
	if (s->serial == serial) {
		*ptr = s->ptr;
		*size = s->size;
		if (take)
			s->serial = 0;
		return 1;
	}
	return take ? ms__u64map_del(&r->spill, serial, ptr, size)
		    : ms__u64map_get(&r->spill, serial, ptr, size);
}

void ms__live_ring_free(struct live_ring *r)
{
	free(r->slot);
	r->slot = NULL;
	ms__u64map_free(&r->spill);
}
