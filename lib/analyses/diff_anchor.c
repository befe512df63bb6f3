/* The anchored alignment of two id sequences too different for the exact diff's bound (diff.h). */
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "memscope/error.h"

/* stretches deeper than this go by blocks */
#define ANCHOR_DEPTH 4
/* the elements of a side in one block of a stretch without anchors */
#define ANCHOR_BLOCK 128

struct anchor_run {
	const uint32_t *a, *b;
	uint32_t *ia, *ib; /* the matches so far (capacity min(n, m)) */
	size_t n_match;
	uint32_t *ga, *gb; /* a stretch copied with its sentinel, for ms__diff_myers */
};

static void match(struct anchor_run *r, uint32_t x, uint32_t y)
{
	r->ia[r->n_match] = x;
	r->ib[r->n_match++] = y;
}

/* The stretch by the exact diff within max_work (0: no bound): 0 done, 1 past it, or an error. */
static int stretch_myers(
	struct anchor_run *r, uint32_t x0, uint32_t n, uint32_t y0, uint32_t m, int64_t max_work)
{
	unsigned char *dirs;
	int64_t D, d, x = 0, y = 0;
	int rc;

	memcpy(r->ga, r->a + x0, (size_t)n * sizeof(*r->ga));
	memcpy(r->gb, r->b + y0, (size_t)m * sizeof(*r->gb));
	r->ga[n] = DIFF_SENTINEL_A;
	r->gb[m] = DIFF_SENTINEL_B;
	rc = ms__diff_myers(r->ga, n, r->gb, m, DIFF_BUDGET_DEFAULT, max_work, &dirs, &D);
	if (rc)
		return rc;
	for (d = 0; d <= D; d++) {
		if (d > 0 && dirs[d])
			y++;
		else if (d > 0)
			x++;
		while (x < n && y < m && r->ga[x] == r->gb[y])
			match(r, x0 + (uint32_t)x++, y0 + (uint32_t)y++);
	}
	free(dirs);
	return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

static int stretch(
	struct anchor_run *r, uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1, int depth);

/*
 * Anchors of the stretch: ids once on each side, the longest chain of them increasing on both
 * sides; the stretches between them aligned in turn. 1 when there is no anchor.
 */
static int stretch_anchors(
	struct anchor_run *r, uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1, int depth)
{
	size_t n = x1 - x0, m = y1 - y0, g = n + m, i, j, k = 0, len = 0;
	uint64_t *keys = malloc(g * sizeof(*keys));
	uint32_t *yof = malloc(n * sizeof(*yof)), *tail = NULL, *prev = NULL, *chain = NULL;
	int rc = MEMSCOPE_E_NOMEM;

	if (!keys || !yof)
		goto out;
	/* id, side, position in one sortable word */
	for (i = 0; i < n; i++)
		keys[i] = (uint64_t)r->a[x0 + i] << 32 | (uint64_t)i;
	for (i = 0; i < m; i++)
		keys[n + i] = (uint64_t)r->b[y0 + i] << 32 | 1u << 31 | (uint64_t)i;
	qsort(keys, g, sizeof(*keys), cmp_u64);
	for (i = 0; i < n; i++)
		yof[i] = UINT32_MAX;
	for (i = 0; i < g; i = j) {
		for (j = i + 1; j < g && keys[j] >> 32 == keys[i] >> 32;)
			j++;
		if (j - i == 2 && !(keys[i] & 1u << 31) && (keys[i + 1] & 1u << 31))
			yof[keys[i] & 0x7fffffffu] = (uint32_t)(keys[i + 1] & 0x7fffffffu), k++;
	}
	free(keys);
	keys = NULL;
	rc = 1;
	if (!k)
		goto out;
	rc = MEMSCOPE_E_NOMEM;
	tail = malloc(k * sizeof(*tail)); /* tail[l]: x ending the best chain of length l + 1 */
	prev = malloc(n * sizeof(*prev));
	chain = malloc(k * sizeof(*chain));
	if (!tail || !prev || !chain)
		goto out;
	for (i = 0; i < n; i++) {
		size_t lo = 0, hi = len;

		if (yof[i] == UINT32_MAX)
			continue;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (yof[tail[mid]] < yof[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		prev[i] = lo ? tail[lo - 1] : UINT32_MAX;
		tail[lo] = (uint32_t)i;
		len += lo == len;
	}
	for (i = len, j = tail[len - 1]; i-- > 0; j = prev[j])
		chain[i] = (uint32_t)j;
	free(tail);
	free(prev);
	tail = prev = NULL;
	rc = 0;
	for (i = 0; i <= len && !rc; i++) {
		uint32_t xe = i < len ? x0 + chain[i] : x1, ye = i < len ? y0 + yof[chain[i]] : y1;
		uint32_t xs = i ? x0 + chain[i - 1] + 1 : x0,
			 ys = i ? y0 + yof[chain[i - 1]] + 1 : y0;

		rc = stretch(r, xs, xe, ys, ye, depth + 1);
		if (!rc && i < len)
			match(r, xe, ye);
	}
out:
	free(keys);
	free(yof);
	free(tail);
	free(prev);
	free(chain);
	return rc;
}

/*
 * A stretch without anchors: cut into k blocks per side (ANCHOR_BLOCK elements on the longer
 * side), block i of one side aligned with block i of the other by the exact diff (at most
 * (2 * ANCHOR_BLOCK)^2 steps each).
 */
static int stretch_blocks(struct anchor_run *r, uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1)
{
	uint64_t n = x1 - x0, m = y1 - y0, k = ((n > m ? n : m) + ANCHOR_BLOCK - 1) / ANCHOR_BLOCK;
	uint64_t i;
	int rc = 0;

	for (i = 0; i < k && !rc; i++) {
		uint32_t xs = x0 + (uint32_t)(i * n / k), xe = x0 + (uint32_t)((i + 1) * n / k);
		uint32_t ys = y0 + (uint32_t)(i * m / k), ye = y0 + (uint32_t)((i + 1) * m / k);

		if (xs < xe && ys < ye)
			rc = stretch_myers(r, xs, xe - xs, ys, ye - ys, 0);
	}
	return rc;
}

/* One stretch: its common prefix and suffix, then the bounded diff, anchors, or blocks. */
static int stretch(
	struct anchor_run *r, uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1, int depth)
{
	uint32_t s = 0, i;
	int rc = 0;

	while (x0 < x1 && y0 < y1 && r->a[x0] == r->b[y0])
		match(r, x0++, y0++);
	while (x0 < x1 - s && y0 < y1 - s && r->a[x1 - 1 - s] == r->b[y1 - 1 - s])
		s++;
	x1 -= s;
	y1 -= s;
	if (x0 < x1 && y0 < y1) {
		rc = stretch_myers(
			r, x0, x1 - x0, y0, y1 - y0, 16 * ((int64_t)(x1 - x0) + (y1 - y0)) + 4096);
		if (rc == 1 && depth < ANCHOR_DEPTH)
			rc = stretch_anchors(r, x0, x1, y0, y1, depth);
		if (rc == 1)
			rc = stretch_blocks(r, x0, x1, y0, y1);
	}
	for (i = 0; i < s && !rc; i++)
		match(r, x1 + i, y1 + i);
	return rc;
}

int ms__diff_anchored(const uint32_t *a, int64_t n, const uint32_t *b, int64_t m, uint32_t **ia,
	uint32_t **ib, size_t *count)
{
	struct anchor_run r = { a, b, NULL, NULL, 0, NULL, NULL };
	size_t cap = (size_t)(n < m ? n : m) + 1;
	int rc = MEMSCOPE_E_NOMEM;

	*ia = *ib = NULL;
	*count = 0;
	if (n > INT32_MAX / 4 || m > INT32_MAX / 4)
		return MEMSCOPE_E_ARG;
	r.ia = malloc(cap * sizeof(*r.ia));
	r.ib = malloc(cap * sizeof(*r.ib));
	r.ga = malloc(((size_t)n + 1) * sizeof(*r.ga));
	r.gb = malloc(((size_t)m + 1) * sizeof(*r.gb));
	if (r.ia && r.ib && r.ga && r.gb)
		rc = stretch(&r, 0, (uint32_t)n, 0, (uint32_t)m, 0);
	free(r.ga);
	free(r.gb);
	if (rc) {
		free(r.ia);
		free(r.ib);
		return rc;
	}
	*ia = r.ia;
	*ib = r.ib;
	*count = r.n_match;
	return 0;
}
