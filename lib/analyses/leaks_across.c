/* The report groups merged across inputs: one per key without the input, with how many inputs
 * have it and which has the most and the least, ranked per kind (memscope_leak_across). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_impl.h"

struct aranked {
	struct memscope_leak_across a;
	size_t old;
};

static int cmp_aranked(const void *pa, const void *pb)
{
	const struct aranked *a = pa, *b = pb;
	int c = kind_rank(a->a.kind) - kind_rank(b->a.kind);

	/* by kind, then the most bytes, inputs, findings */
	c = c ? c : MS__CMP(b->a.bytes, a->a.bytes);
	c = c ? c : MS__CMP(b->a.n_inputs, a->a.n_inputs);
	c = c ? c : MS__CMP(b->a.n, a->a.n);
	return c ? c : MS__CMP(a->old, b->old);
}

/* After finish_members: the groups of every input merged by their key without the input (one hash
 * insert per group), ranked per kind; each group's across index. */
int ms__leaks_across(struct memscope_leaks *l)
{
	struct gentry *table = NULL, *e, *tmp;
	struct aranked *a = NULL;
	size_t i, n = 0, *rank = NULL, *at = NULL;
	int rc = MEMSCOPE_E_NOMEM;

	if (!l->n_groups)
		return 0;
	/* at most one across group per group */
	if (!(a = malloc(l->n_groups * sizeof(*a))) ||
		!(l->across_groups = malloc(l->n_groups * sizeof(*l->across_groups))))
		goto out;
	for (i = 0; i < l->n_groups; i++) {
		struct memscope_leak_group *g = &l->groups[i];
		struct memscope_leak_across *x;
		struct gkey k;

		ms__leaks_group_key(
			l, 0, g->kind, g->pool, g->stack_py, g->stack_c, g->owner, g->op, &k);
		HASH_FIND(hh, table, &k, sizeof(k), e);
		if (!e) {
			if (!(e = malloc(sizeof(*e))))
				goto out;
			e->key = k;
			e->idx = n;
			l->oom = 0;
			HASH_ADD(hh, table, key, sizeof(e->key), e);
			if (l->oom) {
				free(e);
				goto out;
			}
			/* groups come by input: the first one seen is the lowest input's */
			a[n].old = n;
			a[n].a = (struct memscope_leak_across){ .kind = g->kind,
				.pool = g->pool,
				.stack_py = g->stack_py,
				.stack_c = g->stack_c,
				.owner = g->owner,
				.op = g->op,
				.min_src = g->src,
				.max_src = g->src,
				.min_bytes = g->bytes,
				.max_bytes = g->bytes };
			n++;
		}
		x = &a[e->idx].a;
		g->across = (uint32_t)e->idx;
		x->n_inputs++;
		x->n += g->n;
		if (__builtin_add_overflow(x->bytes, g->bytes, &x->bytes))
			x->bytes = MEMSCOPE_BYTES_OVERFLOW;
		x->differ |= g->differ;
		if (g->op != x->op)
			x->differ |= MEMSCOPE_LEAK_GROUP_OPS;
		if (g->stack_py != x->stack_py || g->stack_c != x->stack_c)
			x->differ |= MEMSCOPE_LEAK_GROUP_STACKS;
		if (g->owner != x->owner)
			x->differ |= MEMSCOPE_LEAK_GROUP_OWNERS;
		if (g->bytes < x->min_bytes) {
			x->min_bytes = g->bytes;
			x->min_src = g->src;
		}
		if (g->bytes > x->max_bytes) {
			x->max_bytes = g->bytes;
			x->max_src = g->src;
		}
	}
	if (!(rank = malloc(n * sizeof(*rank))) || !(at = malloc(n * sizeof(*at))) ||
		!(l->across = malloc(n * sizeof(*l->across))))
		goto out;
	qsort(a, n, sizeof(*a), cmp_aranked);
	for (i = 0; i < n; i++) {
		rank[a[i].old] = i;
		l->across[i] = a[i].a;
		l->across[i].rank =
			i && a[i - 1].a.kind == a[i].a.kind ? l->across[i - 1].rank + 1 : 0;
		l->across[i].groups_at = i ? l->across[i - 1].groups_at + a[i - 1].a.n_inputs : 0;
		at[i] = l->across[i].groups_at;
	}
	/* in group order, so by input within each */
	for (i = 0; i < l->n_groups; i++) {
		l->groups[i].across = (uint32_t)rank[l->groups[i].across];
		l->across_groups[at[l->groups[i].across]++] = i;
	}
	l->n_across = n;
	rc = 0;
out:
	HASH_ITER(hh, table, e, tmp)
	{
		HASH_DELETE(hh, table, e);
		free(e);
	}
	if (rc) {
		free(l->across);
		free(l->across_groups);
		l->across = NULL;
		l->across_groups = NULL;
	}
	free(a);
	free(rank);
	free(at);
	return rc;
}

const struct memscope_leak_across *memscope_leaks_across(const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_across;
	return l->across;
}

const size_t *memscope_leaks_across_groups(const struct memscope_leaks *l, size_t *n)
{
	*n = l->across ? l->n_groups : 0;
	return l->across_groups;
}
