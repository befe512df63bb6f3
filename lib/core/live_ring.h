/* The live host blocks of a capture stream by allocation serial: a ring for recent ones, a hash map
 * for the rest. */
#ifndef MEMSCOPE_LIVE_RING_H
#define MEMSCOPE_LIVE_RING_H

#include <stdint.h>

#include "u64map.h"

#define LIVE_RING_SIZE 4096 /* frees are mostly of recent blocks: they never leave the ring */

struct live_slot {
	uint64_t serial; /* 0: empty (serials start at 1) */
	uint64_t ptr, size;
};

struct live_ring {
	struct live_slot *slot; /* LIVE_RING_SIZE of them, allocated on first put */
	struct u64map spill;	/* older live blocks pushed out of the ring */
};

/* Add block serial (>= 1). 0 or MEMSCOPE_E_NOMEM. */
int ms__live_ring_put(struct live_ring *r, uint64_t serial, uint64_t ptr, uint64_t size);
/* Look up (and with take, remove) block serial: 1 and its ptr/size if live, else 0. */
int ms__live_ring_find(
	struct live_ring *r, uint64_t serial, uint64_t *ptr, uint64_t *size, int take);
void ms__live_ring_free(struct live_ring *r);

#endif
