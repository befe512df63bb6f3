/* The greedy forward Myers diff of two sequences of ids, as the reference aligns ops and kernels;
 * library-internal. */
#ifndef MEMSCOPE_DIFF_H
#define MEMSCOPE_DIFF_H

#include <stddef.h>
#include <stdint.h>

/* ids no string has, closing the two sequences so a snake stops without bounds checks */
#define DIFF_SENTINEL_A UINT32_MAX
#define DIFF_SENTINEL_B (UINT32_MAX - 1)
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
 * frees *dirs.
 */
int ms__diff_myers(const uint32_t *a, int64_t n64, const uint32_t *b, int64_t m64, size_t budget,
	unsigned char **dirs, int64_t *D);

#endif
