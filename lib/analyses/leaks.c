/* The leak analysis (formats/analyses.md, "Exit rule" to "Marked-range leaks"): its object, the
 * feed that hands each row to the rules and logs of the leaks_*.c files (leaks_impl.h), the end
 * of a pass and the second pass. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_impl.h"
#include "analysis_impl.h"

void memscope_leaks_opts_init(struct memscope_leaks_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->kinds = MEMSCOPE_LEAK_ALL;
	o->skip_steps = 1;
	o->min_steps_alive = 1;
	o->group_by = MEMSCOPE_LEAKS_BY_STACK;
	o->top = 0;
}

static int alloc_state(struct memscope_leaks *l)
{
	l->steps = l->steps ? l->steps : memscope_steps_new(l->st);
	l->blocks = memscope_blocks_new(l->st);
	return l->steps && l->blocks ? 0 : MEMSCOPE_E_NOMEM;
}

struct memscope_leaks *memscope_leaks_new(
	const struct memscope_leaks_opts *o, struct memscope_strtab *st)
{
	struct memscope_leaks *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->st = st;
	if (o && o->mark && o->mark_index > UINT32_MAX) {
		free(l);
		return NULL;
	}
	if (o)
		l->o = *o;
	else
		memscope_leaks_opts_init(&l->o);
	if (!l->o.kinds)
		l->o.kinds = MEMSCOPE_LEAK_ALL;
	if (!l->o.mark)
		l->o.kinds &= ~MEMSCOPE_LEAK_MARK;
	l->pools_step = l->o.pools ? l->o.pools : MEMSCOPE_POOLS_FRAMEWORK;
	l->pools_mark = l->pools_exit = l->o.pools ? l->o.pools : MEMSCOPE_POOLS_ALL;
	if ((l->o.mark &&
		    (!(l->mark = strdup(l->o.mark)) ||
			    memscope_strtab_intern(st, l->mark, strlen(l->mark), &l->mark_id))) ||
		alloc_state(l)) {
		memscope_leaks_free(l);
		return NULL;
	}
	l->o.mark = l->mark;
	if (ms__leaks_oom_keys(l) ||
		!(l->oom_state = calloc(MEMSCOPE_LEAKS_OOM_STATES, sizeof(*l->oom_state)))) {
		memscope_leaks_free(l);
		return NULL;
	}
	return l;
}

/* Drop what one pass built; the boundaries (steps, marks) stay. */
static void clear_pass(struct memscope_leaks *l)
{
	struct lproc *p, *ptmp;
	struct fgroup *f, *ftmp;
	struct mgroup *m, *mtmp;
	struct othread *t, *ttmp;

	HASH_ITER(hh, l->procs, p, ptmp)
	{
		HASH_DELETE(hh, l->procs, p);
		ms__buf_free(&p->kernels);
		free(p);
	}
	HASH_ITER(hh, l->othreads, t, ttmp)
	{
		HASH_DELETE(hh, l->othreads, t);
		ms__buf_free(&t->log);
		free(t);
	}
	l->last_ot = NULL;
	free(l->members);
	l->members = NULL;
	if (l->n_info)
		memset(l->info, 0, l->n_info * sizeof(*l->info));
	HASH_ITER(hh, l->fgroups, f, ftmp)
	{
		HASH_DELETE(hh, l->fgroups, f);
		free(f);
	}
	ms__u64map_free(&l->fmap);
	HASH_ITER(hh, l->mgroups, m, mtmp)
	{
		m->g.n_leaks = m->g.bytes = 0;
		m->n_blocks = 0;
	}
	l->last_proc = NULL;
	l->last_fg = NULL;
	memscope_blocks_free(l->blocks);
	l->blocks = NULL;
	l->n_shadowed = l->n_leaks = 0;
	free(l->groups);
	free(l->across);
	free(l->across_groups);
	l->across = NULL;
	l->across_groups = NULL;
	l->n_across = 0;
	free(l->mg_out);
	free(l->fl_out);
	free(l->fl_steps);
	l->groups = NULL;
	l->mg_out = NULL;
	l->fl_out = NULL;
	l->fl_steps = NULL;
	l->n_groups = l->n_mg_out = l->n_fl_out = l->n_fl_steps = 0;
	memset(&l->stats, 0, sizeof(l->stats));
	if (l->oom_state)
		memset(l->oom_state, 0, MEMSCOPE_LEAKS_OOM_STATES * sizeof(*l->oom_state));
	ms__u64map_free(&l->oom_owners);
}

void memscope_leaks_free(struct memscope_leaks *l)
{
	struct mgroup *m, *tmp;

	if (!l)
		return;
	clear_pass(l);
	HASH_ITER(hh, l->mgroups, m, tmp)
	{
		HASH_DELETE(hh, l->mgroups, m);
		free(m->marks);
		free(m);
	}
	memscope_steps_free(l->steps);
	free(l->ooms);
	free(l->oom_state);
	free(l->shadowed);
	free(l->leaks);
	free(l->mark);
	free(l->info);
	free(l->frames);
	ms__u64map_free(&l->clean_stacks);
	ms__clocks_free(&l->clocks);
	free(l);
}

int memscope_leaks_feed(struct memscope_leaks *l, const struct memscope_event *ev)
{
	int is_mark = ev->kind == MEMSCOPE_KIND_MSTX && ev->subtype == MEMSCOPE_SUB_MARK &&
		      (l->o.kinds & MEMSCOPE_LEAK_MARK) && ev->name == l->mark_id;
	struct lproc *p;
	int r;

	l->stats.n_events++;
	if (ms__leaks_note_input(l, ev) || !(p = ms__leaks_proc(l, ev->src, ev->pid)))
		return MEMSCOPE_E_NOMEM;
	if (memscope_event_is_real(ev) && ev->ts_ns > p->last_real_ts)
		p->last_real_ts = ev->ts_ns;
	if ((l->o.kinds & MEMSCOPE_LEAK_MARK) && ev->device != MEMSCOPE_DEVICE_NONE &&
		!ms__leaks_mgroup(l, ev->src, ev->pid, ev->device))
		return MEMSCOPE_E_NOMEM;
	if (ev->kind == MEMSCOPE_KIND_OOM_DETAIL && ev->subtype == MEMSCOPE_SUB_OOM_TRIGGER)
		return l->complete ? 0 : ms__leaks_add_oom(l, p, ev);
	/* boundaries are taken in the first pass only; the second one knows them all */
	if (is_mark && !l->complete) {
		ms__leaks_check_late(l, p, ev);
		return ms__leaks_add_mark(l, ev);
	}
	if (!l->complete && (l->o.kinds & MEMSCOPE_LEAK_STEP)) {
		if ((r = memscope_steps_feed(l->steps, ev)) < 0)
			return r;
		/* only a step's start or end moves a verdict */
		if (r == 2)
			ms__leaks_check_late(l, p, ev);
		if (r)
			return 0;
	}
	if (ev->kind == MEMSCOPE_KIND_KERNEL_LAUNCH && ev->subtype == MEMSCOPE_SUB_KERNEL_LAUNCH &&
		(l->o.kinds & MEMSCOPE_LEAK_STEP))
		return ms__leaks_add_kernel(p, ev);
	if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH &&
		(ev->subtype == MEMSCOPE_SUB_ATEN_START || ev->subtype == MEMSCOPE_SUB_ATB_START))
		return ms__leaks_add_op(l, ev, 0);
	if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH &&
		(ev->subtype == MEMSCOPE_SUB_ATEN_END || ev->subtype == MEMSCOPE_SUB_ATB_END))
		return ms__leaks_add_op(l, ev, 1);
	if (ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE)
		return ms__leaks_feed_block(l, p, ev);
	return 0;
}

int memscope_leaks_finish(struct memscope_leaks *l)
{
	uint32_t src;
	uint64_t line;
	size_t i;
	int rc;

	if (!l->complete && !l->late && memscope_steps_out_of_order(l->steps, &src, &line))
		ms__leaks_set_late(l, src, line, LATE_BOUNDARY);
	/* blocks freed before an out-of-memory row that came after them (a snapshot's oom
	 * entries follow its trace) were judged without it: the second pass knows every one */
	for (i = 0; !l->complete && i < l->n_ooms && i < MEMSCOPE_LEAKS_OOM_STATES; i++)
		if (l->ooms[i].partial)
			ms__leaks_set_late(l, l->ooms[i].src, l->ooms[i].line,
				"out-of-memory row after rows later than it");
	if ((rc = ms__leaks_judge_live(l)) || (rc = ms__leaks_kernel_indexes(l)) ||
		(rc = ms__leaks_fluct_finish(l)) || (rc = ms__leaks_marks_finish(l)) ||
		(rc = ms__leaks_ops_finish(l)) || (rc = ms__leaks_group(l)) ||
		(rc = ms__leaks_across(l)))
		return rc;
	ms__leaks_ooms_finish(l);
	return ms__leaks_note_steps(l);
}

int memscope_leaks_needs_rewind(const struct memscope_leaks *l, uint32_t *src, uint64_t *line)
{
	if (l->late) {
		if (src)
			*src = l->late_src;
		if (line)
			*line = l->late_line;
	}
	return l->late;
}

int memscope_leaks_rewind(struct memscope_leaks *l)
{
	clear_pass(l);
	ms__leaks_marks_sort(l);
	l->late = 0;
	l->complete = 1;
	if (memscope_steps_resolve(l->steps))
		return MEMSCOPE_E_NOMEM;
	return alloc_state(l);
}

size_t memscope_leaks_count(const struct memscope_leaks *l)
{
	return l->n_leaks;
}

const struct memscope_leak *memscope_leaks_get(const struct memscope_leaks *l, size_t i)
{
	return i < l->n_leaks ? &l->leaks[i] : NULL;
}

const struct memscope_leaks_stats *memscope_leaks_stats(const struct memscope_leaks *l)
{
	return &l->stats;
}

const struct memscope_leaks_opts *memscope_leaks_opts(const struct memscope_leaks *l)
{
	return &l->o;
}

const struct memscope_steps *memscope_leaks_steps(const struct memscope_leaks *l)
{
	return l->steps;
}

/* ---- the analysis interface (memscope/analysis.h) ---- */

ANALYSIS_CALLS(memscope_leaks)
ANALYSIS_CREATE(memscope_leaks)

static int leaks_again(const void *self, uint32_t *src, uint64_t *line, const char **why)
{
	const struct memscope_leaks *l = self;

	*why = l->late_why;
	return memscope_leaks_needs_rewind(self, src, line);
}

static int leaks_rewind(void *self)
{
	return memscope_leaks_rewind(self);
}

static int leaks_input_end(void *self, uint32_t src, const struct memscope_source *s)
{
	return memscope_leaks_input_end(
		self, src, memscope_source_format(s), memscope_source_stats(s));
}

/* the profiler's samples and static plans say nothing of blocks, steps or marks */
ANALYSIS_TABLE(memscope_leaks, "leaks", .again = leaks_again, .rewind = leaks_rewind,
	.input_end = leaks_input_end,
	.skip_kinds = 1u << MEMSCOPE_KIND_COUNTER | 1u << MEMSCOPE_KIND_PLAN);
