/* The step tracker: boundary rows of each process turned into step starts and ends. */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/error.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"

/* uthash must not exit on OOM: the failing insert sets s->oom and is undone by uthash. */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (s->oom = 1)
#include <uthash.h>

enum raw_kind { RAW_STEP_START, RAW_RANGE, RAW_END, RAW_SYS_STEP };

/* one boundary row as fed, kept so the steps can be rebuilt in time order */
struct raw {
	struct memscope_pos pos;
	uint64_t tid, seq, line;
	int kind;
};

struct proc_key {
	uint64_t pid;
	uint32_t src, pad;
};

struct memscope_step_proc {
	struct proc_key key;
	enum memscope_step_source source;
	uint64_t ignored;
	struct memscope_pos *starts, *ends; /* ends[i].id == UINT64_MAX && ts == UINT64_MAX: none */
	size_t n, cap;
	uint64_t *ended; /* numbers of the steps that have an end, ascending */
	size_t n_ended, cap_ended;
	int open;		     /* an mstx step is running */
	uint64_t open_tid;	     /* its thread */
	uint64_t depth;		     /* other ranges opened on that thread since, still open */
	struct memscope_pos max_raw; /* latest boundary fed */
	int dirty;		     /* a boundary came out of order: rebuild on resolve */
	struct raw *raws;
	size_t n_raws, cap_raws;
	UT_hash_handle hh;
};

struct memscope_steps {
	const struct memscope_strtab *st;
	struct memscope_step_proc *procs;
	uint64_t seq;
	int oom;
	int out_of_order;
	uint32_t ooo_src;
	uint64_t ooo_line;
};

static const struct memscope_pos no_pos = { UINT64_MAX, UINT64_MAX };

static int is_none(struct memscope_pos p)
{
	return p.ts_ns == UINT64_MAX && p.id == UINT64_MAX;
}

struct memscope_steps *memscope_steps_new(const struct memscope_strtab *st)
{
	struct memscope_steps *s = calloc(1, sizeof(*s));

	if (s)
		s->st = st;
	return s;
}

static void proc_free(struct memscope_step_proc *p)
{
	free(p->starts);
	free(p->ends);
	free(p->ended);
	free(p->raws);
	free(p);
}

void memscope_steps_free(struct memscope_steps *s)
{
	struct memscope_step_proc *p, *tmp;

	if (!s)
		return;
	HASH_ITER(hh, s->procs, p, tmp)
	{
		HASH_DELETE(hh, s->procs, p);
		proc_free(p);
	}
	free(s);
}

/* Is this Range_start the step convention's? "step start", also with the quotes kept. */
static int is_step_start(const struct memscope_steps *s, uint32_t name)
{
	size_t n;
	const char *t = memscope_strtab_str(s->st, name, &n);

	if (!t)
		return 0;
	if (n == 12 && t[0] == '"' && t[11] == '"') {
		t++;
		n -= 2;
	}
	return n == 10 && memcmp(t, "step start", 10) == 0;
}

static int push_start(struct memscope_step_proc *p, struct memscope_pos at)
{
	size_t cap = p->cap;

	if (grow_array(&p->starts, &cap, p->n + 1, sizeof(*p->starts)) ||
		grow_array(&p->ends, &p->cap, p->n + 1, sizeof(*p->ends)))
		return MEMSCOPE_E_NOMEM;
	p->starts[p->n] = at;
	p->ends[p->n++] = no_pos;
	return 0;
}

/* Step n (the latest) ends at `at`. 0 or MEMSCOPE_E_NOMEM. */
static int set_end(struct memscope_step_proc *p, struct memscope_pos at)
{
	if (grow_array(&p->ended, &p->cap_ended, p->n_ended + 1, sizeof(*p->ended)))
		return MEMSCOPE_E_NOMEM;
	p->ends[p->n - 1] = at;
	p->ended[p->n_ended++] = p->n;
	return 0;
}

/* Apply one boundary in time order: 1 when it started or ended a step, 0 when not, or
 * MEMSCOPE_E_NOMEM. */
static int apply(struct memscope_step_proc *p, const struct raw *r)
{
	switch (r->kind) {
	case RAW_STEP_START:
		if (p->source == MEMSCOPE_STEPS_SYSTEM) {
			p->ignored++;
			return 0;
		}
		p->source = MEMSCOPE_STEPS_MSTX;
		p->open = 1;
		p->open_tid = r->tid;
		p->depth = 0;
		return push_start(p, r->pos) ? MEMSCOPE_E_NOMEM : 1;
	case RAW_RANGE:
		if (p->open && r->tid == p->open_tid)
			p->depth++;
		return 0;
	case RAW_END:
		if (!p->open || r->tid != p->open_tid)
			return 0;
		if (p->depth) {
			p->depth--;
			return 0;
		}
		p->open = 0;
		return set_end(p, r->pos) ? MEMSCOPE_E_NOMEM : 1;
	default: /* RAW_SYS_STEP */
		if (p->source == MEMSCOPE_STEPS_MSTX) {
			p->ignored++;
			return 0;
		}
		p->source = MEMSCOPE_STEPS_SYSTEM;
		if ((!p->n && push_start(p, (struct memscope_pos){ 0, 0 })) || set_end(p, r->pos) ||
			push_start(p, r->pos))
			return MEMSCOPE_E_NOMEM;
		return 1;
	}
}

static struct memscope_step_proc *get_proc(struct memscope_steps *s, uint32_t src, uint64_t pid)
{
	struct proc_key k = { pid, src, 0 };
	struct memscope_step_proc *p;

	HASH_FIND(hh, s->procs, &k, sizeof(k), p);
	if (p)
		return p;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->key = k;
	s->oom = 0;
	HASH_ADD(hh, s->procs, key, sizeof(k), p);
	if (s->oom) {
		free(p);
		return NULL;
	}
	return p;
}

int memscope_steps_feed(struct memscope_steps *s, const struct memscope_event *ev)
{
	struct memscope_step_proc *p;
	struct raw r;
	int rc, relevant, late;

	if (ev->kind == MEMSCOPE_KIND_MSTX && ev->subtype == MEMSCOPE_SUB_RANGE_START)
		r.kind = is_step_start(s, ev->name) ? RAW_STEP_START : RAW_RANGE;
	else if (ev->kind == MEMSCOPE_KIND_MSTX && ev->subtype == MEMSCOPE_SUB_RANGE_END)
		r.kind = RAW_END;
	else if (ev->kind == MEMSCOPE_KIND_SYSTEM && ev->subtype == MEMSCOPE_SUB_STEP)
		r.kind = RAW_SYS_STEP;
	else
		return 0;
	r.pos = memscope_pos_of(ev);
	r.tid = ev->tid;
	r.seq = s->seq++;
	r.line = ev->line;
	if (!(p = get_proc(s, ev->src, ev->pid)) ||
		grow_array(&p->raws, &p->cap_raws, p->n_raws + 1, sizeof(*p->raws)))
		return MEMSCOPE_E_NOMEM;
	p->raws[p->n_raws++] = r;
	/* mstx ranges matter only to a process with mstx steps; before its first step start they
	 * change nothing, unless that start comes earlier than them (checked against max_raw) */
	relevant = r.kind == RAW_STEP_START || r.kind == RAW_SYS_STEP ||
		   p->source == MEMSCOPE_STEPS_MSTX;
	late = p->n_raws > 1 && memscope_pos_cmp(r.pos, p->max_raw) < 0;
	if (memscope_pos_cmp(r.pos, p->max_raw) > 0 || p->n_raws == 1)
		p->max_raw = r.pos;
	if (!relevant && !p->dirty)
		return 1;
	if (!p->dirty && late) {
		p->dirty = 1;
		if (!s->out_of_order) {
			s->out_of_order = 1;
			s->ooo_src = ev->src;
			s->ooo_line = ev->line;
		}
	}
	/* out of order, whether it starts or ends a step is known after the resolve */
	if (p->dirty)
		return r.kind == RAW_RANGE ? 1 : 2;
	rc = apply(p, &r);
	return rc < 0 ? rc : 1 + rc;
}

int memscope_steps_out_of_order(const struct memscope_steps *s, uint32_t *src, uint64_t *line)
{
	if (s->out_of_order) {
		if (src)
			*src = s->ooo_src;
		if (line)
			*line = s->ooo_line;
	}
	return s->out_of_order;
}

static int cmp_raw(const void *pa, const void *pb)
{
	const struct raw *a = pa, *b = pb;
	int c = memscope_pos_cmp(a->pos, b->pos);

	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int memscope_steps_resolve(struct memscope_steps *s)
{
	struct memscope_step_proc *p, *tmp;
	size_t i;

	HASH_ITER(hh, s->procs, p, tmp)
	{
		if (p->n_raws > 1)
			qsort(p->raws, p->n_raws, sizeof(*p->raws), cmp_raw);
		p->n = 0;
		p->n_ended = 0;
		p->source = MEMSCOPE_STEPS_NONE;
		p->ignored = 0;
		p->open = 0;
		p->depth = 0;
		p->dirty = 0;
		for (i = 0; i < p->n_raws; i++)
			if (apply(p, &p->raws[i]) < 0)
				return MEMSCOPE_E_NOMEM;
	}
	s->out_of_order = 0;
	return 0;
}

const struct memscope_step_proc *memscope_steps_proc(
	const struct memscope_steps *s, uint32_t src, uint64_t pid)
{
	struct proc_key k = { pid, src, 0 };
	struct memscope_step_proc *p;

	HASH_FIND(hh, s->procs, &k, sizeof(k), p);
	return p;
}

enum memscope_step_source memscope_steps_source(const struct memscope_step_proc *p)
{
	return p ? p->source : MEMSCOPE_STEPS_NONE;
}

uint64_t memscope_steps_count(const struct memscope_step_proc *p)
{
	return p ? p->n : 0;
}

uint64_t memscope_steps_at(const struct memscope_step_proc *p, struct memscope_pos pos)
{
	size_t lo = 0, hi = p ? p->n : 0;

	/* the number of starts <= pos (starts are in time order) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (memscope_pos_cmp(p->starts[mid], pos) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int memscope_steps_start(const struct memscope_step_proc *p, uint64_t n, struct memscope_pos *pos)
{
	if (!p || n == 0 || n > p->n)
		return 0;
	*pos = p->starts[n - 1];
	return 1;
}

int memscope_steps_end(const struct memscope_step_proc *p, uint64_t n, struct memscope_pos *pos)
{
	if (!p || n == 0 || n > p->n || is_none(p->ends[n - 1]))
		return 0;
	*pos = p->ends[n - 1];
	return 1;
}

int memscope_steps_span(
	const struct memscope_step_proc *p, uint64_t n, uint64_t *lo_ns, uint64_t *hi_ns, int *open)
{
	struct memscope_pos start, end, next;

	*open = 0;
	if (!memscope_steps_start(p, n, &start))
		return 0;
	if (p->source == MEMSCOPE_STEPS_MSTX) {
		*lo_ns = start.ts_ns;
		*open = !memscope_steps_end(p, n, &end);
		*hi_ns = !*open					 ? end.ts_ns
			 : memscope_steps_start(p, n + 1, &next) ? next.ts_ns - !!next.ts_ns
								 : UINT64_MAX;
		return 1;
	}
	/* msmemscope.step() ends step n at its row and starts step n + 1 */
	if (!memscope_steps_end(p, n, &end))
		return 0;
	*lo_ns = n == 1 ? 0 : start.ts_ns + 1;
	*hi_ns = end.ts_ns;
	return 1;
}

int memscope_steps_end_from(
	const struct memscope_step_proc *p, uint64_t n, uint64_t *k, struct memscope_pos *pos)
{
	size_t lo = 0, hi = p ? p->n_ended : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->ended[mid] < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!p || lo == p->n_ended)
		return 0;
	*k = p->ended[lo];
	*pos = p->ends[*k - 1];
	return 1;
}

uint64_t memscope_steps_ignored(const struct memscope_step_proc *p)
{
	return p ? p->ignored : 0;
}

static int cmp_proc(const void *pa, const void *pb)
{
	const struct memscope_step_proc *a = *(const struct memscope_step_proc *const *)pa;
	const struct memscope_step_proc *b = *(const struct memscope_step_proc *const *)pb;

	if (a->key.src != b->key.src)
		return a->key.src < b->key.src ? -1 : 1;
	return a->key.pid < b->key.pid ? -1 : a->key.pid > b->key.pid;
}

int memscope_steps_foreach(const struct memscope_steps *s,
	int (*fn)(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p),
	void *ctx)
{
	size_t n = HASH_COUNT(s->procs), i = 0;
	struct memscope_step_proc **all, *p, *tmp;
	int rc = 0;

	if (!n)
		return 0;
	if (!(all = malloc(n * sizeof(*all))))
		return MEMSCOPE_E_NOMEM;
	HASH_ITER(hh, s->procs, p, tmp)
	all[i++] = p;
	qsort(all, n, sizeof(*all), cmp_proc);
	for (i = 0; i < n && !rc; i++)
		rc = fn(ctx, all[i]->key.src, all[i]->key.pid, all[i]);
	free(all);
	return rc;
}
