/* The greedy forward Myers diff of two sequences of ids, as the reference aligns ops and kernels;
 * library-internal. */
#ifndef MEMSCOPE_DIFF_H
#define MEMSCOPE_DIFF_H

#include <stddef.h>
#include <stdint.h>

/* ids no string has, closing the two sequences so a snake stops without bounds checks */
#define DIFF_SENTINEL_A UINT32_MAX
#define DIFF_SENTINEL_B (UINT32_MAX - 1)
/* the exact diff's bound (steps taken plus elements matched) before the anchored alignment */
#define DIFF_EXACT_WORK ((int64_t)1 << 27)
/* memory for direction bits before the diff keeps checkpoints instead */
#define DIFF_BUDGET_DEFAULT ((size_t)64 << 20)

/*
 * The reference's greedy forward Myers (formats/analyses.md "Compare: alignment"). At (d, k) it
 * goes "down" (an insertion, from diagonal k+1) when k == -d or (k != d and V[k-1] < V[k+1]),
 * else "right" (a deletion, from k-1), then follows the snake of equal names; the first d that
 * reaches (n, m) ends it.
 * With V preset to V_NONE the edge rules are the plain comparison: V[-d-1] and V[d+1]
 * are never reached before iteration d. The path never leaves the grid and the search can only
 * end on diagonal n - m (a point past (n, m) costs more edits), so instead of the reference's
 * node per (d, k) one direction bit per (d, k) on the grid is kept; the path is walked back
 * from (n, m) and replayed forwards. When the bits would take more than `budget` bytes, V is
 * kept every K iterations instead (K doubling to keep those under budget / 2), and each
 * stretch is run again with bits while walking back: the same path in bounded memory, for
 * twice the time. a and b hold n + 1 and m + 1 ids, the last being DIFF_SENTINEL_A /
 * DIFF_SENTINEL_B. dirs gets D + 1 bytes (dirs[d] = 1: down at d), *D the edit distance. Caller
 * frees *dirs. With max_work > 0 the search gives up (returns 1, *dirs NULL) once it has taken
 * more than max_work steps (one per (d, k) visited plus one per element matched).
 */
int ms__diff_myers(const uint32_t *a, int64_t n64, const uint32_t *b, int64_t m64, size_t budget,
	int64_t max_work, unsigned char **dirs, int64_t *D);

/*
 * The alignment for sequences too different for the exact diff's bound, in time
 * O((n + m) log(n + m)) and memory O(n + m) (formats/analyses.md "Compare: alignment"): the
 * common prefix and suffix are matched, then the rest by ms__diff_myers bounded by 16 steps per
 * element; past that, the ids that occur once in each side's stretch anchor it (the longest
 * chain of them in order on both sides), and each stretch between anchors is aligned the same
 * way, up to 4 levels deep; a stretch without anchors is cut into blocks of 128 elements (on
 * its longer side; as many on the other), each pair aligned by the exact diff. Each side's
 * elements are in one block of the one pair. a and b hold n and m ids (no
 * sentinels needed). *ia and *ib get the *count matched positions, increasing; caller frees
 * both. 0, MEMSCOPE_E_NOMEM, or MEMSCOPE_E_ARG (a side over INT32_MAX / 4).
 */
int ms__diff_anchored(const uint32_t *a, int64_t n, const uint32_t *b, int64_t m, uint32_t **ia,
	uint32_t **ib, size_t *count);

#endif
