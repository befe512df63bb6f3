/* The three leak rules (formats/analyses.md "Step leaks", "Marked-range leaks", "Exit rule"):
 * each block is judged once, at its end, by the step rule and the marked range, and those alive
 * when their input ended by the exit rule; with the processes and mark groups they keep. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_impl.h"

struct lproc *ms__leaks_proc(struct memscope_leaks *l, uint32_t src, uint64_t pid)
{
	struct key k = { pid, src, 0, 0, 0 };
	struct lproc *p = l->last_proc;

	if (p && same_key(&p->key, &k))
		return p;
	GET_ENTRY(l, l->procs, k, struct lproc, p);
	return l->last_proc = p;
}

/* The mark group of (src, pid, device), made on first sight; numbered in that order. */
struct mgroup *ms__leaks_mgroup(struct memscope_leaks *l, uint32_t src, uint64_t pid, int32_t dev)
{
	struct key k = { pid, src, dev, 0, 0 };
	struct mgroup *m = l->last_mg;
	unsigned n;

	if (m && same_key(&m->key, &k))
		return m;
	n = HASH_COUNT(l->mgroups);
	GET_ENTRY(l, l->mgroups, k, struct mgroup, m);
	if (m && HASH_COUNT(l->mgroups) > n) {
		m->g.src = src;
		m->g.pid = pid;
		m->g.device = dev;
		m->seq = n;
	}
	return l->last_mg = m;
}

static int add_leak(struct memscope_leaks *l, unsigned kind, const struct memscope_block *b,
	struct memscope_leak **out)
{
	struct memscope_leak *x;

	if (ms__grow_array(&l->leaks, &l->cap_leaks, l->n_leaks + 1, sizeof(*l->leaks)))
		return MEMSCOPE_E_NOMEM;
	x = &l->leaks[l->n_leaks++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->blk = *b;
	if (out)
		*out = x;
	return 0;
}

/* The pools step-checked for block b: --pool's, else the frameworks' and, for a program's own
 * blocks recorded by memscope-record, its host pools; for a process whose CUDA memory has no
 * caching allocator's blocks in it (an Nsight export), its CUDA pools (formats/analyses.md
 * "Step leaks"). */
static uint64_t step_pools(struct memscope_leaks *l, const struct memscope_block *b)
{
	uint64_t pools = l->pools_step;
	const struct lproc *p;

	if (l->o.pools)
		return pools;
	if (b->flags & MEMSCOPE_BLOCK_RECORDED)
		pools |=
			MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HOST) | MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_MMAP);
	if ((b->pool == MEMSCOPE_SUB_CUDA || b->pool == MEMSCOPE_SUB_CUDA_MANAGED) &&
		(p = ms__leaks_proc(l, b->src, b->pid)) &&
		!(p->pools_seen & MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA_CACHING)))
		pools |= MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA) |
			 MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA_MANAGED);
	return pools;
}

/* Step rule: allocated in step s after the first skip steps of its process, alive at the end of
 * the first ended step >= s + N (step numbers, formats/analyses.md "Step leaks"). */
static int judge_step(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos)
{
	const struct memscope_step_proc *p;
	struct memscope_leak *x;
	struct memscope_pos end;
	uint64_t s, k, i;

	if (!(l->o.kinds & MEMSCOPE_LEAK_STEP) || !(step_pools(l, b) & MEMSCOPE_POOL_BIT(b->pool)))
		return 0;
	p = memscope_steps_proc(l->steps, b->src, b->pid);
	i = memscope_steps_index_at(p, alloc_pos(b));
	if (i <= l->o.skip_steps)
		return 0;
	s = memscope_steps_number(p, i);
	if (s + l->o.min_steps_alive < s ||
		!memscope_steps_end_from(p, s + l->o.min_steps_alive, &k, &end))
		return 0;
	if (freed && memscope_pos_cmp(free_pos, end) < 0)
		return 0;
	if (add_leak(l, MEMSCOPE_LEAK_STEP, b, &x))
		return MEMSCOPE_E_NOMEM;
	x->alloc_step = s;
	x->detected_step = k;
	l->stats.n_step_leaks++;
	add_bytes(&l->stats.step_bytes, b->size);
	return 0;
}

/* Marked range: allocated between marks A and B (inclusive), not freed by mark C. */
static int judge_mark(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos)
{
	struct memscope_pos at = alloc_pos(b);
	struct memscope_leak *x;
	struct mgroup *m;
	size_t i = l->o.mark_index;

	if (!(l->o.kinds & MEMSCOPE_LEAK_MARK) || !(l->pools_mark & MEMSCOPE_POOL_BIT(b->pool)) ||
		b->device == MEMSCOPE_DEVICE_NONE)
		return 0;
	if (!(m = ms__leaks_mgroup(l, b->src, b->pid, b->device)))
		return MEMSCOPE_E_NOMEM;
	m->n_blocks++;
	/* without mark C yet, a freed block was freed before it */
	if (m->dirty || m->n < i + 3 || memscope_pos_cmp(at, m->marks[i].pos) < 0 ||
		memscope_pos_cmp(at, m->marks[i + 1].pos) > 0 ||
		(freed && memscope_pos_cmp(free_pos, m->marks[i + 2].pos) <= 0))
		return 0;
	if (add_leak(l, MEMSCOPE_LEAK_MARK, b, &x))
		return MEMSCOPE_E_NOMEM;
	x->group = m->seq;
	m->g.n_leaks++;
	add_bytes(&m->g.bytes, b->size);
	l->stats.n_mark_leaks++;
	add_bytes(&l->stats.mark_bytes, b->size);
	return 0;
}

/* The step and mark verdicts of a block; a promoted historical block (its allocation time is
 * not its own) has neither. Every block comes here once, at its end. */
static int judge(struct memscope_leaks *l, const struct memscope_block *b, const int freed,
	struct memscope_pos free_pos)
{
	int rc;

	if (l->n_ooms && (rc = ms__leaks_oom_account(l, b, freed, free_pos)))
		return rc;
	if (b->flags & MEMSCOPE_BLOCK_SHADOW_ALLOC)
		return 0;
	rc = judge_step(l, b, freed, free_pos);
	return rc ? rc : judge_mark(l, b, freed, free_pos);
}

/* The first row out of time order (src, line: why, a static text): a second pass is needed. */
void ms__leaks_set_late(struct memscope_leaks *l, uint32_t src, uint64_t line, const char *why)
{
	if (!l->late) {
		l->late = 1;
		l->late_src = src;
		l->late_line = line;
		l->late_why = why;
	}
}

/* A boundary row of process p: late if a MALLOC/FREE row after it in time came first. */
void ms__leaks_check_late(
	struct memscope_leaks *l, struct lproc *p, const struct memscope_event *ev)
{
	if (memscope_pos_cmp(memscope_pos_of(ev), p->max_mem) < 0)
		ms__leaks_set_late(l, ev->src, ev->line, LATE_BOUNDARY);
}

/* A Mark row with the text; one out of time order needs the second pass, sorted. */
int ms__leaks_add_mark(struct memscope_leaks *l, const struct memscope_event *ev)
{
	struct memscope_pos at = memscope_pos_of(ev);
	struct mgroup *m;

	if (ev->device == MEMSCOPE_DEVICE_NONE)
		return 0;
	if (!(m = ms__leaks_mgroup(l, ev->src, ev->pid, ev->device)) ||
		ms__grow_array(&m->marks, &m->cap, m->n + 1, sizeof(*m->marks)))
		return MEMSCOPE_E_NOMEM;
	m->g.n_marks++;
	if (m->n && memscope_pos_cmp(at, m->marks[m->n - 1].pos) < 0) {
		m->dirty = 1;
		ms__leaks_set_late(l, ev->src, ev->line, LATE_BOUNDARY);
	}
	m->marks[m->n++] = (struct mark_at){ at, ev->line };
	return 0;
}

static int cmp_mark_at(const void *pa, const void *pb)
{
	const struct mark_at *a = pa, *b = pb;
	int c = memscope_pos_cmp(a->pos, b->pos);

	return c ? c : MS__CMP(a->line, b->line);
}

void ms__leaks_marks_sort(struct memscope_leaks *l)
{
	struct mgroup *m, *tmp;

	HASH_ITER(hh, l->mgroups, m, tmp)
	{
		if (m->dirty)
			qsort(m->marks, m->n, sizeof(*m->marks), cmp_mark_at);
		m->dirty = 0;
	}
}

static int on_live(void *ctx, const struct memscope_block *b);

/* A block the reference freed with a shadow FREE: alive at exit unless that free comes before
 * a later row of its process (freed while not tracing, or its address reused). */
static int judge_shadowed(
	struct memscope_leaks *l, const struct lproc *p, const struct memscope_block *b)
{
	struct memscope_pos at = { b->free_ts_ns, b->free_event_id };

	if (memscope_shadow_free_at_exit(b, p->last_real_ts))
		return on_live(l, b);
	l->stats.n_shadow_not_exit++;
	return judge(l, b, 1, at);
}

int ms__leaks_feed_block(struct memscope_leaks *l, struct lproc *p, const struct memscope_event *ev)
{
	struct memscope_block out;
	int r;

	if (ev->kind == MEMSCOPE_KIND_MALLOC && ev->pool < 64)
		p->pools_seen |= MEMSCOPE_POOL_BIT(ev->pool);
	if (!(ev->flags & MEMSCOPE_EV_SHADOW)) {
		if (memscope_pos_cmp(memscope_pos_of(ev), p->max_mem) > 0)
			p->max_mem = memscope_pos_of(ev);
		if ((l->o.kinds & MEMSCOPE_LEAK_STEP) && (ev->flags & MEMSCOPE_EV_USED) &&
			(l->pools_step & MEMSCOPE_POOL_BIT(ev->pool)) &&
			(r = ms__leaks_fluct_sample(l, ev)))
			return r;
	}
	r = memscope_blocks_feed(l->blocks, ev, &out);
	switch (r) {
	case MEMSCOPE_PAIR_ALLOC:
		l->stats.n_alloc++;
		return 0;
	case MEMSCOPE_PAIR_FREE:
		l->stats.n_free++;
		return judge(l, &out, 1, memscope_pos_of(ev));
	case MEMSCOPE_PAIR_REPLACED:
		l->stats.n_alloc++;
		l->stats.n_replaced++;
		return judge(l, &out, 1, memscope_pos_of(ev));
	case MEMSCOPE_PAIR_SHADOW_FREE:
		l->stats.n_shadow_free++;
		if (!memscope_shadow_free_at_exit(&out, p->last_real_ts))
			return judge_shadowed(l, p, &out);
		if (ms__grow_array(&l->shadowed, &l->cap_shadowed, l->n_shadowed + 1,
			    sizeof(*l->shadowed)))
			return MEMSCOPE_E_NOMEM;
		l->shadowed[l->n_shadowed++] = out;
		return 0;
	case MEMSCOPE_PAIR_UNMATCHED_FREE:
		if (!l->stats.n_unmatched_free++) {
			l->stats.unmatched_src = ev->src;
			l->stats.unmatched_file = ev->file;
			l->stats.unmatched_line = ev->line;
		}
		if (ev->src < l->n_info)
			l->info[ev->src].n_unmatched_free++;
		return 0;
	default:
		return r < 0 ? r : 0;
	}
}

static int on_live(void *ctx, const struct memscope_block *b)
{
	struct memscope_leaks *l = ctx;
	struct memscope_pos none = { 0, 0 };
	struct memscope_leak *x;
	int rc = judge(l, b, 0, none);

	if (rc || !(l->o.kinds & MEMSCOPE_LEAK_EXIT) ||
		!(l->pools_exit & MEMSCOPE_POOL_BIT(b->pool)))
		return rc;
	if (add_leak(l, MEMSCOPE_LEAK_EXIT, b, &x))
		return MEMSCOPE_E_NOMEM;
	x->shadow = (b->flags & MEMSCOPE_BLOCK_SHADOW_FREE) != 0;
	l->stats.n_exit_leaks++;
	add_bytes(&l->stats.exit_bytes, b->size);
	return 0;
}

/* Shadow-freed blocks: alive at exit when the shadow free is not before the process's last row
 * (known when a later row came, else at finish). */
static int finish_shadowed(struct memscope_leaks *l)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < l->n_shadowed && !rc; i++) {
		struct lproc *p = ms__leaks_proc(l, l->shadowed[i].src, l->shadowed[i].pid);

		rc = p ? judge_shadowed(l, p, &l->shadowed[i]) : MEMSCOPE_E_NOMEM;
	}
	return rc;
}

int ms__leaks_judge_live(struct memscope_leaks *l)
{
	int rc = memscope_blocks_foreach_live(l->blocks, on_live, l);

	return rc ? rc : finish_shadowed(l);
}

static int cmp_mgroup_seq(const void *pa, const void *pb)
{
	const struct mgroup *a = *(const struct mgroup *const *)pa;
	const struct mgroup *b = *(const struct mgroup *const *)pb;
	int c = MS__CMP(a->g.src, b->g.src);

	return c ? c : MS__CMP(a->seq, b->seq);
}

/* Mark groups by input, then in order of first sight (the order they were seen in when the
 * inputs come one after the other); a MARK leak's group, its seq until now, becomes the index
 * there. Marks A, B, C. */
int ms__leaks_marks_finish(struct memscope_leaks *l)
{
	size_t n = HASH_COUNT(l->mgroups), i = 0, j, k = l->o.mark_index;
	struct mgroup **all, *m, *tmp;
	uint32_t *index = NULL;

	if (!n)
		return 0;
	all = malloc(n * sizeof(*all));
	index = malloc(n * sizeof(*index));
	if (!all || !index || !(l->mg_out = calloc(n, sizeof(*l->mg_out)))) {
		free(all);
		free(index);
		return MEMSCOPE_E_NOMEM;
	}
	HASH_ITER(hh, l->mgroups, m, tmp)
	all[i++] = m;
	qsort(all, n, sizeof(*all), cmp_mgroup_seq);
	for (i = 0; i < n; i++)
		index[all[i]->seq] = (uint32_t)i;
	for (i = 0; i < l->n_leaks; i++)
		if (l->leaks[i].kind == MEMSCOPE_LEAK_MARK)
			l->leaks[i].group = index[l->leaks[i].group];
	free(index);
	for (i = 0; i < n; i++) {
		struct memscope_mark_group *g = &l->mg_out[i];

		m = all[i];
		*g = m->g;
		g->checked = m->n >= k + 3;
		for (j = 0; j < 3 && g->checked; j++) {
			g->mark[j] = m->marks[k + j].pos;
			g->mark_line[j] = m->marks[k + j].line;
		}
		if (!g->checked)
			l->stats.n_unchecked_mark_blocks += m->n_blocks;
	}
	l->n_mg_out = n;
	free(all);
	return 0;
}

const struct memscope_mark_group *memscope_leaks_mark_groups(
	const struct memscope_leaks *l, size_t *n)
{
	*n = l->n_mg_out;
	return l->mg_out;
}
