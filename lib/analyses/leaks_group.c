/* The report groups of one input: each finding's shown fields (allocation step, cleaned C stack),
 * its group by memscope_leaks_opts.group_by, the groups ranked per input and kind, the findings in
 * report order and by group, and the totals per pool read from them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_impl.h"

/* ---- what the reports show of each finding ---- */

/* A C stack with every frame cleaned (memscope_strtab_frame_text: not cached, raw frames of one
 * function differ by offset and address, and each distinct raw stack is cleaned once), interned
 * (cached by raw id). */
static int clean_stack(struct memscope_leaks *l, uint32_t raw, uint32_t *out)
{
	const uint32_t *fr;
	uint64_t a, unused;
	size_t n = 0, i;
	int rc = 0;

	*out = 0;
	if (!raw)
		return 0;
	if (ms__u64map_get(&l->clean_stacks, raw, &a, &unused)) {
		*out = (uint32_t)a;
		return 0;
	}
	if (!(fr = memscope_strtab_stack(l->st, raw, &n)) || !n)
		return ms__u64map_put(&l->clean_stacks, raw, 0, 0);
	if (ms__grow_array(&l->frames, &l->cap_frames, n, sizeof(*l->frames)))
		return MEMSCOPE_E_NOMEM;
	memcpy(l->frames, fr, n * sizeof(*fr));
	for (i = 0; i < n && !rc; i++)
		rc = memscope_strtab_frame_text(l->st, l->frames[i], &l->frames[i]);
	if (!rc)
		rc = memscope_strtab_intern_stack(l->st, l->frames, n, out);
	return rc ? rc : ms__u64map_put(&l->clean_stacks, raw, *out, 0);
}

/* Every finding's allocation step (all kinds) and cleaned C stack. */
static int finish_fields(struct memscope_leaks *l)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < l->n_leaks && !rc; i++) {
		struct memscope_leak *x = &l->leaks[i];
		const struct memscope_step_proc *p;

		if (x->kind != MEMSCOPE_LEAK_STEP) {
			uint64_t s = MEMSCOPE_STEP_NONE;

			/* before a process's first ProfilerStep: in no step */
			p = memscope_steps_proc(l->steps, x->blk.src, x->blk.pid);
			if (p && memscope_steps_source(p) != MEMSCOPE_STEPS_NONE)
				s = memscope_steps_at(p, alloc_pos(&x->blk));
			x->alloc_step = s == MEMSCOPE_STEP_NONE ? MEMSCOPE_LEAK_NO_STEP : s;
		}
		rc = clean_stack(l, x->blk.stack_c, &x->stack_c_text);
	}
	return rc;
}

/* ---- the report groups ---- */

/* The key of memscope_leaks_opts.group_by from the fields of a finding or a group (whose
 * fields in the key are every finding's); src 0 for the key across inputs. */
void ms__leaks_group_key(const struct memscope_leaks *l, uint32_t src, unsigned kind, uint32_t pool,
	uint32_t py, uint32_t c, uint32_t owner, uint32_t op, struct gkey *k)
{
	memset(k, 0, sizeof(*k));
	k->src = src;
	k->kind = kind;
	k->pool = pool;
	switch (l->o.group_by) {
	case MEMSCOPE_LEAKS_BY_OP:
		k->op = op;
		break;
	case MEMSCOPE_LEAKS_BY_OWNER:
		k->owner = owner;
		break;
	default:
		k->py = py;
		k->c = c;
		/* a block without stacks is known by its owner tag and op */
		if (!k->py && !k->c) {
			k->owner = owner;
			k->op = op;
		}
		break;
	}
}

static void key_of(const struct memscope_leaks *l, const struct memscope_leak *x, struct gkey *k)
{
	ms__leaks_group_key(l, x->blk.src, x->kind, x->blk.pool, x->blk.stack_py, x->stack_c_text,
		x->blk.owner, x->op, k);
}

/* earlier in the reports' sense: lower process id, then earlier allocation */
static int leak_earlier(const struct memscope_leak *a, const struct memscope_leak *b)
{
	if (a->blk.pid != b->blk.pid)
		return a->blk.pid < b->blk.pid;
	return memscope_pos_cmp(alloc_pos(&a->blk), alloc_pos(&b->blk)) < 0;
}

struct granked {
	struct memscope_leak_group g;
	const struct memscope_leak *first; /* while ranking */
	size_t old;
};

static int cmp_granked(const void *pa, const void *pb)
{
	const struct granked *a = pa, *b = pb;
	int c = MS__CMP(a->g.src, b->g.src);

	/* by input, kind, then the most bytes, the most findings, the earliest first finding */
	c = c ? c : kind_rank(a->g.kind) - kind_rank(b->g.kind);
	c = c ? c : MS__CMP(b->g.bytes, a->g.bytes);
	c = c ? c : MS__CMP(b->g.n, a->g.n);
	if (c)
		return c;
	if (leak_earlier(a->first, b->first))
		return -1;
	if (leak_earlier(b->first, a->first))
		return 1;
	return MS__CMP(a->old, b->old);
}

/* Group every finding (key_of), rank the groups, set each finding's report_group. */
static int finish_groups(struct memscope_leaks *l)
{
	struct gentry *table = NULL, *e, *tmp;
	struct granked *g = NULL;
	size_t i, n = 0, cap = 0, *rank = NULL;
	int rc = MEMSCOPE_E_NOMEM;

	for (i = 0; i < l->n_leaks; i++) {
		struct memscope_leak *x = &l->leaks[i];
		struct gkey k;

		key_of(l, x, &k);
		HASH_FIND(hh, table, &k, sizeof(k), e);
		if (!e) {
			if (ms__grow_array(&g, &cap, n + 1, sizeof(*g)) ||
				!(e = malloc(sizeof(*e))))
				goto out;
			e->key = k;
			e->idx = n;
			memset(&g[n], 0, sizeof(g[n]));
			g[n].g.kind = x->kind;
			g[n].g.src = x->blk.src;
			g[n].g.pool = x->blk.pool;
			g[n].first = x;
			g[n].old = n;
			l->oom = 0;
			HASH_ADD(hh, table, key, sizeof(e->key), e);
			if (l->oom) {
				free(e);
				goto out;
			}
			n++;
		}
		x->report_group = (uint32_t)e->idx;
		g[e->idx].g.n++;
		add_bytes(&g[e->idx].g.bytes, x->blk.size);
		if (leak_earlier(x, g[e->idx].first))
			g[e->idx].first = x;
	}
	if (n) {
		if (!(rank = malloc(n * sizeof(*rank))) ||
			!(l->groups = malloc(n * sizeof(*l->groups))))
			goto out;
		qsort(g, n, sizeof(*g), cmp_granked);
		for (i = 0; i < n; i++) {
			rank[g[i].old] = i;
			l->groups[i] = g[i].g;
			l->groups[i].rank =
				i && g[i - 1].g.src == g[i].g.src && g[i - 1].g.kind == g[i].g.kind
					? l->groups[i - 1].rank + 1
					: 0;
		}
		for (i = 0; i < l->n_leaks; i++)
			l->leaks[i].report_group = (uint32_t)rank[l->leaks[i].report_group];
	}
	l->n_groups = n;
	rc = 0;
out:
	HASH_ITER(hh, table, e, tmp)
	{
		HASH_DELETE(hh, table, e);
		free(e);
	}
	free(g);
	free(rank);
	return rc;
}

/* the report order of memscope_leaks_get */
static int cmp_report(const void *pa, const void *pb)
{
	const struct memscope_leak *a = pa, *b = pb;
	const struct memscope_block *x = &a->blk, *y = &b->blk;
	int c = kind_rank(a->kind) - kind_rank(b->kind);

	if (!c && a->kind == MEMSCOPE_LEAK_MARK)
		c = MS__CMP(a->group, b->group);
	if (!c && a->kind == MEMSCOPE_LEAK_EXIT)
		c = MS__CMP(a->report_group, b->report_group);
	c = c ? c : MS__CMP(x->src, y->src);
	c = c ? c : MS__CMP(x->pid, y->pid);
	if (!c && a->kind == MEMSCOPE_LEAK_STEP)
		c = MS__CMP(x->device, y->device);
	if (!c && a->kind == MEMSCOPE_LEAK_STEP)
		c = MS__CMP(a->alloc_step, b->alloc_step);
	return c ? c : memscope_pos_cmp(alloc_pos(x), alloc_pos(y));
}

/* a finding's place in memscope_leaks_members, while sorting */
struct member {
	uint32_t group;
	int32_t device;
	uint64_t step, pid;
	struct memscope_pos at;
	size_t idx;
};

static int cmp_member(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;
	int c = MS__CMP(a->group, b->group);

	c = c ? c : MS__CMP(a->step, b->step);
	c = c ? c : MS__CMP(a->pid, b->pid);
	c = c ? c : MS__CMP(a->device, b->device);
	c = c ? c : memscope_pos_cmp(a->at, b->at);
	return c ? c : MS__CMP(a->idx, b->idx);
}

/* After the report order is set: each group's findings, its first one and the fields of the
 * first; each input's counts. */
static int finish_members(struct memscope_leaks *l)
{
	struct member *m;
	size_t i, j;

	if (!l->n_leaks)
		return 0;
	if (!(m = malloc(l->n_leaks * sizeof(*m))) ||
		!(l->members = malloc(l->n_leaks * sizeof(*l->members)))) {
		free(m);
		return MEMSCOPE_E_NOMEM;
	}
	for (i = 0; i < l->n_leaks; i++) {
		const struct memscope_leak *x = &l->leaks[i];

		m[i] = (struct member){ x->report_group, x->blk.device, x->alloc_step, x->blk.pid,
			alloc_pos(&x->blk), i };
	}
	qsort(m, l->n_leaks, sizeof(*m), cmp_member);
	for (i = 0; i < l->n_leaks; i++)
		l->members[i] = m[i].idx;
	free(m);
	for (i = 0; i < l->n_leaks; i = j) {
		struct memscope_leak_group *g = &l->groups[l->leaks[l->members[i]].report_group];
		const struct memscope_leak *f = &l->leaks[l->members[i]];

		g->members_at = i;
		for (j = i; j < l->n_leaks && l->leaks[l->members[j]].report_group ==
						      l->leaks[l->members[i]].report_group;
			j++)
			if (leak_earlier(&l->leaks[l->members[j]], f))
				f = &l->leaks[l->members[j]];
		g->first = (size_t)(f - l->leaks);
		g->stack_py = f->blk.stack_py;
		g->stack_c = f->stack_c_text;
		g->owner = f->blk.owner;
		g->op = f->op;
		for (; i < j; i++) {
			const struct memscope_leak *x = &l->leaks[l->members[i]];
			struct memscope_leaks_input_info *in =
				x->blk.src < l->n_info ? &l->info[x->blk.src] : NULL;

			if (x->op != g->op)
				g->differ |= MEMSCOPE_LEAK_GROUP_OPS;
			if (x->blk.stack_py != g->stack_py || x->stack_c_text != g->stack_c)
				g->differ |= MEMSCOPE_LEAK_GROUP_STACKS;
			if (x->blk.owner != g->owner)
				g->differ |= MEMSCOPE_LEAK_GROUP_OWNERS;
			if (!in)
				continue;
			in->n_leaks[kind_rank(x->kind)]++;
			in->n_stacked += x->blk.stack_py || x->blk.stack_c;
		}
	}
	return 0;
}

int ms__leaks_group(struct memscope_leaks *l)
{
	int rc;

	if ((rc = finish_fields(l)) || (rc = finish_groups(l)))
		return rc;
	if (l->n_leaks > 1)
		qsort(l->leaks, l->n_leaks, sizeof(*l->leaks), cmp_report);
	return finish_members(l);
}

const struct memscope_leak_group *memscope_leaks_groups(const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_groups;
	return l->groups;
}

const size_t *memscope_leaks_members(const struct memscope_leaks *l, size_t *n)
{
	*n = l->members ? l->n_leaks : 0;
	return l->members;
}

/* The first group of input src or a later one (they come by input). */
static size_t groups_from(const struct memscope_leaks *l, uint32_t src)
{
	size_t lo = 0, hi = l->n_groups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->groups[mid].src < src)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t memscope_leaks_totals(const struct memscope_leaks *l, unsigned kind, uint32_t src,
	struct memscope_leaks_total *out)
{
	uint64_t n[MEMSCOPE_LEAKS_MAX_POOLS] = { 0 }, bytes[MEMSCOPE_LEAKS_MAX_POOLS] = { 0 };
	size_t i, k = 0, lo = 0, hi = l->n_groups;

	/* the groups of src are one run (by input first) */
	if (src != MEMSCOPE_LEAKS_ALL_INPUTS)
		lo = groups_from(l, src);
	for (i = lo; i < hi; i++) {
		const struct memscope_leak_group *g = &l->groups[i];

		if (src != MEMSCOPE_LEAKS_ALL_INPUTS && g->src != src)
			break;
		if (g->kind != kind || g->pool >= MEMSCOPE_LEAKS_MAX_POOLS)
			continue;
		n[g->pool] += g->n;
		if (__builtin_add_overflow(bytes[g->pool], g->bytes, &bytes[g->pool]))
			bytes[g->pool] = MEMSCOPE_BYTES_OVERFLOW;
	}
	for (i = 0; i < MEMSCOPE_LEAKS_MAX_POOLS; i++)
		if (n[i])
			out[k++] = (struct memscope_leaks_total){ (uint16_t)i, n[i], bytes[i] };
	return k;
}

int memscope_leaks_nested(const struct memscope_leaks *l, unsigned kind, uint32_t src)
{
	uint64_t pools = 0;
	size_t i = 0;

	/* the groups come by input: one input's pools at a time, src's run found by bisection */
	if (src != MEMSCOPE_LEAKS_ALL_INPUTS)
		i = groups_from(l, src);
	for (; i < l->n_groups; i++) {
		const struct memscope_leak_group *g = &l->groups[i];

		if (src != MEMSCOPE_LEAKS_ALL_INPUTS && g->src != src)
			break;
		if (i && g->src != l->groups[i - 1].src) {
			if (memscope_pools_nested(pools))
				break;
			pools = 0;
		}
		if (g->kind == kind && g->pool < 64)
			pools |= MEMSCOPE_POOL_BIT(g->pool);
	}
	return memscope_pools_nested(pools);
}

const char *memscope_leaks_totals_text(
	char *buf, size_t size, const struct memscope_leaks_total *t, size_t n, int nested)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];
	uint64_t pools = 0, sum = 0;
	size_t i, at = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		pools |= t[i].pool < 64 ? MEMSCOPE_POOL_BIT(t[i].pool) : 0;
		if (__builtin_add_overflow(sum, t[i].bytes, &sum))
			sum = MEMSCOPE_BYTES_OVERFLOW;
	}
	if (!n) {
		ms__text_put(buf, size, &at, "%s", memscope_bytes_text(b, sizeof(b), 0));
		return buf;
	}
	if (n == 1) {
		ms__text_put(buf, size, &at, "%s %s", memscope_subtype_name(t[0].pool),
			memscope_bytes_text(b, sizeof(b), t[0].bytes));
		return buf;
	}
	nested = nested && memscope_pools_nested(pools);
	if (!nested)
		ms__text_put(buf, size, &at, "%s: ", memscope_bytes_text(b, sizeof(b), sum));
	for (i = 0; i < n; i++)
		ms__text_put(buf, size, &at, "%s%s %s in %" PRIu64 " block%s", i ? ", " : "",
			memscope_subtype_name(t[i].pool),
			memscope_bytes_text(b, sizeof(b), t[i].bytes), t[i].n,
			t[i].n == 1 ? "" : "s");
	if (nested) {
		int k = 0;

		ms__text_put(buf, size, &at, ", not summed: ");
		for (i = 0; i < n; i++)
			if (t[i].pool < 64 && (MEMSCOPE_POOL_BIT(t[i].pool) & MEMSCOPE_POOLS_INNER))
				ms__text_put(buf, size, &at, "%s%s", k++ ? ", " : "",
					memscope_subtype_name(t[i].pool));
		ms__text_put(buf, size, &at, " %s inside %s", k > 1 ? "lie" : "lies",
			memscope_pools_outer_name(pools));
	}
	return buf;
}
