/* The greedy forward Myers diff of two id sequences, in bounded memory (diff.h). */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "diff.h"
#include "memscope/error.h"

/*
 * Direction bits of iterations d0 .. d0 + rows - 1, one per (d, k) on the grid; each iteration
 * starts at a 64-bit word.
 */
struct bits {
	uint64_t *w;
	size_t cap;  /* words */
	size_t n;    /* words used */
	size_t *row; /* row[d - d0]: first word of iteration d */
	size_t row_cap;
	int32_t d0;
};

/* lowest / highest k of parity d with the diagonal on the grid (-m .. n) */
static int64_t lo_k(int64_t d, int64_t m)
{
	int64_t lo = -d > -m ? -d : -m;

	return ((lo + d) & 1) ? lo + 1 : lo;
}

static int64_t hi_k(int64_t d, int64_t n)
{
	int64_t hi = d < n ? d : n;

	return ((hi + d) & 1) ? hi - 1 : hi;
}

/* V's value for diagonals not reached yet: loses every comparison */
#define V_NONE (INT32_MIN / 2)

/* One (d, k) step: the direction taken (1: down), and V[k] updated. */
static inline int step(int32_t *v, const uint32_t *a, uint32_t n, const uint32_t *b, uint32_t m,
	int32_t k, int64_t *work)
{
	int down = v[k - 1] < v[k + 1];
	int32_t x = down ? v[k + 1] : v[k - 1] + 1, y = x - k, x0 = x;

	if ((uint32_t)x <= n && (uint32_t)y <= m)
		while (a[x] == b[y])
			x++, y++;
	v[k] = x;
	*work += 1 + (x - x0);
	return down;
}

/* the forward pass's inputs and its V array (v[k] for k in -max-1 .. max+1) */
struct fwd {
	const uint32_t *a, *b;
	int32_t n, m, kend, max;
	int32_t *v;
	int64_t work; /* steps taken and elements matched so far */
};

/*
 * Iteration d of the forward pass, its direction bits into bt when bt is not NULL. 1 when it
 * reached (n, m), 0 if not, MEMSCOPE_E_NOMEM.
 */
static int iterate(struct fwd *f, int32_t d, struct bits *bt)
{
	int32_t lo = (int32_t)lo_k(d, f->m), hi = (int32_t)hi_k(d, f->n), k;
	const uint32_t *a = f->a, *b = f->b;
	uint32_t n = (uint32_t)f->n, m = (uint32_t)f->m;
	int32_t *v = f->v;
	uint64_t acc = 0;
	unsigned j = 0;
	size_t w = 0;

	if (bt) {
		size_t words = hi >= lo ? (size_t)((hi - lo) / 2) / 64 + 1 : 0;

		if (ms__grow_array(
			    &bt->row, &bt->row_cap, (size_t)(d - bt->d0) + 1, sizeof(*bt->row)) ||
			ms__grow_array(&bt->w, &bt->cap, bt->n + words, sizeof(*bt->w)))
			return MEMSCOPE_E_NOMEM;
		bt->row[d - bt->d0] = w = bt->n;
		bt->n += words;
	}
	/* in the reference's k order: off the grid below, on it, above */
	for (k = -d; k < lo; k += 2)
		step(v, a, n, b, m, k, &f->work);
	for (; k <= hi; k += 2) {
		int down = step(v, a, n, b, m, k, &f->work);

		if (bt) {
			acc |= (uint64_t)down << j;
			if (++j == 64) {
				bt->w[w++] = acc;
				acc = 0;
				j = 0;
			}
		}
		if (k == f->kend && v[k] >= f->n)
			break;
	}
	if (bt && j)
		bt->w[w] = acc;
	if (k == f->kend && v[k] >= f->n)
		return 1;
	for (; k <= d; k += 2)
		step(v, a, n, b, m, k, &f->work);
	return 0;
}

static int bit_at(const struct bits *bt, int32_t d, int32_t k, int32_t m)
{
	size_t bit = (size_t)((k - lo_k(d, m)) / 2);

	return (int)((bt->w[bt->row[d - bt->d0] + bit / 64] >> (bit % 64)) & 1);
}

/* V after iteration d: its entries of d's parity, -d .. d (the others are not read next) */
struct snap {
	int32_t d;
	int32_t *v;
};

static void v_reset(struct fwd *f)
{
	int32_t i;

	for (i = -f->max - 1; i <= f->max + 1; i++)
		f->v[i] = V_NONE;
	f->v[1] = 0; /* the reference's start node (x 0, y -1) */
}

int ms__diff_myers(const uint32_t *a, int64_t n64, const uint32_t *b, int64_t m64, size_t budget,
	int64_t max_work, unsigned char **dirs, int64_t *D)
{
	struct fwd f = { a, b, (int32_t)n64, (int32_t)m64, (int32_t)(n64 - m64),
		(int32_t)(n64 + m64 + 1), NULL, 0 };
	int32_t *vbuf = NULL, d, k, K = 64, top;
	struct bits bt = { 0 };
	struct snap *snaps = NULL;
	size_t n_snaps = 0, cap_snaps = 0, snap_bytes = 0, i, j;
	int rc = MEMSCOPE_E_NOMEM, use_bits = 1, r;

	*dirs = NULL;
	if (n64 > INT32_MAX / 4 || m64 > INT32_MAX / 4)
		return MEMSCOPE_E_ARG;
	vbuf = malloc((size_t)(2 * f.max + 3) * sizeof(*vbuf));
	if (!vbuf)
		return rc;
	f.v = vbuf + f.max + 1;
	v_reset(&f);
	while (K < (int32_t)(budget >> 16) && K < (1 << 20))
		K *= 2; /* checkpoints every 1024 iterations for 64 MiB: about 1/64 of the bits */
	for (d = 0;; d++) {
		r = iterate(&f, d, use_bits ? &bt : NULL);
		if (r < 0)
			goto out;
		if (use_bits && bt.n * sizeof(*bt.w) > budget) {
			use_bits = 0; /* from here on, checkpoints */
			free(bt.w);
			free(bt.row);
			memset(&bt, 0, sizeof(bt));
		}
		if (r)
			break;
		if (max_work && f.work > max_work) {
			rc = 1; /* past the bound: the caller aligns another way */
			goto out;
		}
		if (d % K)
			continue;
		if (ms__grow_array(&snaps, &cap_snaps, n_snaps + 1, sizeof(*snaps)) ||
			!(snaps[n_snaps].v = malloc(((size_t)d + 1) * sizeof(int32_t))))
			goto out;
		snaps[n_snaps].d = d;
		for (k = -d, i = 0; k <= d; k += 2)
			snaps[n_snaps].v[i++] = f.v[k];
		snap_bytes += ((size_t)d + 1) * sizeof(int32_t);
		n_snaps++;
		while (snap_bytes > budget / 2 && n_snaps > 1) {
			K *= 2; /* thin out: keep every other checkpoint (d = 0 stays) */
			for (i = j = 0; i < n_snaps; i++) {
				if (snaps[i].d % K == 0) {
					snaps[j++] = snaps[i];
					continue;
				}
				snap_bytes -= ((size_t)snaps[i].d + 1) * sizeof(int32_t);
				free(snaps[i].v);
			}
			n_snaps = j;
		}
	}
	*D = d;
	if (!(*dirs = malloc((size_t)d + 1)))
		goto out;
	k = f.kend;
	for (top = d; top > 0;) {
		int32_t from = 0;

		if (!use_bits) {
			/* the last checkpoint before top, then the stretch again with bits */
			for (i = n_snaps; i-- > 0;)
				if (snaps[i].d < top)
					break;
			from = snaps[i].d;
			v_reset(&f);
			for (d = -from, j = 0; d <= from; d += 2)
				f.v[d] = snaps[i].v[j++];
			bt.n = 0;
			bt.d0 = from + 1;
			for (d = from + 1; d <= top; d++)
				if (iterate(&f, d, &bt) < 0)
					goto out;
		}
		for (d = top; d > from; d--) {
			int down = bit_at(&bt, d, k, f.m);

			(*dirs)[d] = (unsigned char)down;
			k = down ? k + 1 : k - 1;
		}
		top = from;
	}
	rc = 0;
out:
	if (rc) {
		free(*dirs);
		*dirs = NULL;
	}
	for (i = 0; i < n_snaps; i++)
		free(snaps[i].v);
	free(snaps);
	free(vbuf);
	free(bt.w);
	free(bt.row);
	return rc;
}
