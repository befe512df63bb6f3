/* The step tracker: boundary rows of each process turned into step starts and ends. */
#include <stdio.h>
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

enum raw_kind { RAW_STEP_START, RAW_RANGE, RAW_END, RAW_SYS_STEP, RAW_PROF_START, RAW_PROF_END };

/* one boundary row as fed, kept so the steps can be rebuilt in time order */
struct raw {
	struct memscope_pos pos;
	uint64_t tid, seq, line;
	uint64_t num; /* RAW_PROF_START: the N of ProfilerStep#N, NO_NUM when not a number */
	uint32_t name;
	int kind;
};

/* a ProfilerStep#N whose N is no decimal number below 2^63 */
#define NO_NUM UINT64_MAX

struct proc_key {
	uint64_t pid;
	uint32_t src, pad;
};

struct memscope_step_proc {
	struct proc_key key;
	enum memscope_step_source source;
	uint64_t ignored;
	uint64_t misnumbered; /* ProfilerStep starts not taken: N not above the last step's */
	struct memscope_pos *starts, *ends; /* ends[i].id == UINT64_MAX && ts == UINT64_MAX: none */
	uint64_t *nums;			    /* the step numbers, ascending (mstx, SYSTEM: i + 1) */
	size_t n, cap, cap_nums;
	uint64_t *ended; /* indexes (from 1) of the steps that have an end, ascending */
	size_t n_ended, cap_ended;
	int open;		     /* an mstx or ProfilerStep step is running */
	uint64_t open_tid;	     /* its thread */
	uint32_t open_name;	     /* ProfilerStep: the name of its op, which its end has */
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
	free(p->nums);
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

/* Is this op a torch profiler step, "ProfilerStep#<n>"? 1 and its N in *num (NO_NUM when not a
 * decimal number below 2^63), else 0. */
static int is_profiler_step(const struct memscope_steps *s, uint32_t name, uint64_t *num)
{
	size_t n;
	const char *t = memscope_strtab_str(s->st, name, &n);

	if (!t || n <= 13 || memcmp(t, "ProfilerStep#", 13) != 0)
		return 0;
	if (ms__parse_u64(t + 13, n - 13, num) || *num > INT64_MAX)
		*num = NO_NUM;
	return 1;
}

/* A new step numbered num starts at `at`. 0 or MEMSCOPE_E_NOMEM. */
static int push_start(struct memscope_step_proc *p, struct memscope_pos at, uint64_t num)
{
	size_t cap = p->cap;

	if (ms__grow_array(&p->starts, &cap, p->n + 1, sizeof(*p->starts)) ||
		ms__grow_array(&p->nums, &p->cap_nums, p->n + 1, sizeof(*p->nums)) ||
		ms__grow_array(&p->ends, &p->cap, p->n + 1, sizeof(*p->ends)))
		return MEMSCOPE_E_NOMEM;
	p->starts[p->n] = at;
	p->nums[p->n] = num;
	p->ends[p->n++] = no_pos;
	return 0;
}

/* Step n (the latest) ends at `at`. 0 or MEMSCOPE_E_NOMEM. */
static int set_end(struct memscope_step_proc *p, struct memscope_pos at)
{
	if (ms__grow_array(&p->ended, &p->cap_ended, p->n_ended + 1, sizeof(*p->ended)))
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
	case RAW_PROF_START:
		if (p->source &&
			p->source != (r->kind == RAW_STEP_START ? MEMSCOPE_STEPS_MSTX
								: MEMSCOPE_STEPS_PROFILER)) {
			p->ignored++;
			return 0;
		}
		/* ProfilerStep numbers go up: one that does not is no step (nor is its end) */
		if (r->kind == RAW_PROF_START &&
			(r->num == NO_NUM || (p->n && r->num <= p->nums[p->n - 1]))) {
			p->misnumbered++;
			return 0;
		}
		p->source =
			r->kind == RAW_STEP_START ? MEMSCOPE_STEPS_MSTX : MEMSCOPE_STEPS_PROFILER;
		p->open = 1;
		p->open_tid = r->tid;
		p->open_name = r->name;
		p->depth = 0;
		return push_start(p, r->pos, r->kind == RAW_PROF_START ? r->num : p->n + 1)
			       ? MEMSCOPE_E_NOMEM
			       : 1;
	case RAW_RANGE:
		if (p->open && p->source == MEMSCOPE_STEPS_MSTX && r->tid == p->open_tid)
			p->depth++;
		return 0;
	case RAW_END:
	case RAW_PROF_END:
		if (!p->open || r->tid != p->open_tid ||
			(p->source == MEMSCOPE_STEPS_PROFILER) != (r->kind == RAW_PROF_END) ||
			(r->kind == RAW_PROF_END && r->name != p->open_name))
			return 0;
		if (p->depth) {
			p->depth--;
			return 0;
		}
		p->open = 0;
		return set_end(p, r->pos) ? MEMSCOPE_E_NOMEM : 1;
	default: /* RAW_SYS_STEP */
		if (p->source && p->source != MEMSCOPE_STEPS_SYSTEM) {
			p->ignored++;
			return 0;
		}
		p->source = MEMSCOPE_STEPS_SYSTEM;
		if ((!p->n && push_start(p, (struct memscope_pos){ 0, 0 }, 1)) ||
			set_end(p, r->pos) || push_start(p, r->pos, p->n + 1))
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
	struct raw r = { .num = NO_NUM };
	int rc, relevant, late;

	if (ev->kind == MEMSCOPE_KIND_MSTX && ev->subtype == MEMSCOPE_SUB_RANGE_START)
		r.kind = is_step_start(s, ev->name) ? RAW_STEP_START : RAW_RANGE;
	else if (ev->kind == MEMSCOPE_KIND_MSTX && ev->subtype == MEMSCOPE_SUB_RANGE_END)
		r.kind = RAW_END;
	else if (ev->kind == MEMSCOPE_KIND_SYSTEM && ev->subtype == MEMSCOPE_SUB_STEP)
		r.kind = RAW_SYS_STEP;
	else if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH &&
		 (ev->subtype == MEMSCOPE_SUB_ATEN_START || ev->subtype == MEMSCOPE_SUB_ATEN_END) &&
		 is_profiler_step(s, ev->name, &r.num))
		r.kind = ev->subtype == MEMSCOPE_SUB_ATEN_START ? RAW_PROF_START : RAW_PROF_END;
	else
		return 0;
	r.pos = memscope_pos_of(ev);
	r.tid = ev->tid;
	r.seq = s->seq++;
	r.line = ev->line;
	r.name = ev->name;
	if (!(p = get_proc(s, ev->src, ev->pid)) ||
		ms__grow_array(&p->raws, &p->cap_raws, p->n_raws + 1, sizeof(*p->raws)))
		return MEMSCOPE_E_NOMEM;
	p->raws[p->n_raws++] = r;
	/* mstx ranges matter only to a process with mstx steps; before its first step start they
	 * change nothing, unless that start comes earlier than them (checked against max_raw) */
	relevant = r.kind == RAW_STEP_START || r.kind == RAW_SYS_STEP || r.kind == RAW_PROF_START ||
		   r.kind == RAW_PROF_END || p->source == MEMSCOPE_STEPS_MSTX;
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
		p->misnumbered = 0;
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

uint64_t memscope_steps_number(const struct memscope_step_proc *p, uint64_t i)
{
	return p && i >= 1 && i <= p->n ? p->nums[i - 1] : MEMSCOPE_STEP_NONE;
}

uint64_t memscope_steps_index(const struct memscope_step_proc *p, uint64_t n)
{
	size_t lo = 0, hi = p ? p->n : 0;

	/* the first step numbered n or more (numbers ascend) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->nums[mid] < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return p && lo < p->n && p->nums[lo] == n ? lo + 1 : 0;
}

uint64_t memscope_steps_index_at(const struct memscope_step_proc *p, struct memscope_pos pos)
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

uint64_t memscope_steps_at(const struct memscope_step_proc *p, struct memscope_pos pos)
{
	uint64_t i = memscope_steps_index_at(p, pos);

	if (i)
		return p->nums[i - 1];
	return p && p->source == MEMSCOPE_STEPS_PROFILER ? MEMSCOPE_STEP_NONE : 0;
}

int memscope_steps_start(const struct memscope_step_proc *p, uint64_t n, struct memscope_pos *pos)
{
	uint64_t i = memscope_steps_index(p, n);

	if (!i)
		return 0;
	*pos = p->starts[i - 1];
	return 1;
}

int memscope_steps_end(const struct memscope_step_proc *p, uint64_t n, struct memscope_pos *pos)
{
	uint64_t i = memscope_steps_index(p, n);

	if (!i || is_none(p->ends[i - 1]))
		return 0;
	*pos = p->ends[i - 1];
	return 1;
}

int memscope_steps_span(
	const struct memscope_step_proc *p, uint64_t n, uint64_t *lo_ns, uint64_t *hi_ns, int *open)
{
	uint64_t i = memscope_steps_index(p, n);
	struct memscope_pos start, end, next;

	*open = 0;
	if (!i)
		return 0;
	start = p->starts[i - 1];
	end = p->ends[i - 1];
	if (p->source != MEMSCOPE_STEPS_SYSTEM) {
		*lo_ns = start.ts_ns;
		*open = is_none(end);
		next = i < p->n ? p->starts[i] : no_pos;
		*hi_ns = !*open		  ? end.ts_ns
			 : !is_none(next) ? next.ts_ns - !!next.ts_ns
					  : UINT64_MAX;
		return 1;
	}
	/* msmemscope.step() ends step n at its row and starts step n + 1 */
	if (is_none(end))
		return 0;
	*lo_ns = i == 1 ? 0 : start.ts_ns + 1;
	*hi_ns = end.ts_ns;
	return 1;
}

int memscope_steps_end_from(
	const struct memscope_step_proc *p, uint64_t n, uint64_t *k, struct memscope_pos *pos)
{
	size_t lo = 0, hi = p ? p->n_ended : 0;

	/* ended[] holds indexes, ascending, and numbers ascend with them */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->nums[p->ended[mid] - 1] < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!p || lo == p->n_ended)
		return 0;
	*k = p->nums[p->ended[lo] - 1];
	*pos = p->ends[p->ended[lo] - 1];
	return 1;
}

const char *memscope_steps_source_name(enum memscope_step_source source)
{
	switch (source) {
	case MEMSCOPE_STEPS_MSTX:
		return "mstx ranges";
	case MEMSCOPE_STEPS_SYSTEM:
		return "SYSTEM STEP rows";
	case MEMSCOPE_STEPS_PROFILER:
		return "ProfilerStep ops";
	default:
		return "no steps";
	}
}

uint64_t memscope_steps_ignored(const struct memscope_step_proc *p)
{
	return p ? p->ignored : 0;
}

uint64_t memscope_steps_misnumbered(const struct memscope_step_proc *p)
{
	return p ? p->misnumbered : 0;
}

/* runs of consecutive step numbers, for memscope_steps_text */
struct run {
	uint64_t lo, hi;
};

struct runs {
	uint32_t src;
	struct run *r;
	size_t n, cap;
};

/* memscope_steps_foreach: the runs of one process's steps that have a span. */
static int add_runs(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	struct runs *rs = ctx;
	size_t i, n = p->n;

	(void)pid;
	if (rs->src != MEMSCOPE_STEPS_ALL_INPUTS && src != rs->src)
		return 0;
	/* SYSTEM: the step still running has no STEP row, so no span */
	if (p->source == MEMSCOPE_STEPS_SYSTEM && n && is_none(p->ends[n - 1]))
		n--;
	for (i = 0; i < n; i++) {
		if (rs->n && rs->r[rs->n - 1].hi + 1 == p->nums[i] && i) {
			rs->r[rs->n - 1].hi = p->nums[i];
			continue;
		}
		if (ms__grow_array(&rs->r, &rs->cap, rs->n + 1, sizeof(*rs->r)))
			return MEMSCOPE_E_NOMEM;
		rs->r[rs->n++] = (struct run){ p->nums[i], p->nums[i] };
	}
	return 0;
}

static int cmp_run(const void *pa, const void *pb)
{
	const struct run *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* text, and then the number v when has_v, after the at bytes of buf (of size bytes; cut short
 * when full) */
static void append(char *buf, size_t size, size_t *at, const char *text, int has_v, uint64_t v)
{
	int w;

	if (*at + 1 >= size)
		return;
	w = has_v ? snprintf(buf + *at, size - *at, "%s%llu", text, (unsigned long long)v)
		  : snprintf(buf + *at, size - *at, "%s", text);
	*at = w < 0 ? *at : *at + (size_t)w >= size ? size - 1 : *at + (size_t)w;
}

/* at most this many runs written by memscope_steps_text; the last always is */
#define TEXT_RUNS 4

int memscope_steps_text(const struct memscope_steps *s, uint32_t src, char *buf, size_t size)
{
	struct runs rs = { src, NULL, 0, 0 };
	size_t i, k = 0, at = 0;
	int rc;

	if (!size)
		return 0;
	buf[0] = '\0';
	if ((rc = memscope_steps_foreach(s, add_runs, &rs)))
		goto out;
	if (rs.n > 1)
		qsort(rs.r, rs.n, sizeof(*rs.r), cmp_run);
	/* merge the runs of several processes that overlap or touch */
	for (i = 0; i < rs.n; i++)
		if (k && rs.r[i].lo <= rs.r[k - 1].hi + 1) {
			if (rs.r[i].hi > rs.r[k - 1].hi)
				rs.r[k - 1].hi = rs.r[i].hi;
		} else {
			rs.r[k++] = rs.r[i];
		}
	if (!k) {
		snprintf(buf, size, "no steps");
		goto out;
	}
	append(buf, size, &at, k == 1 && rs.r[0].lo == rs.r[0].hi ? "step" : "steps", 0, 0);
	for (i = 0; i < k; i++) {
		if (k > TEXT_RUNS && i == TEXT_RUNS - 1) {
			append(buf, size, &at, ", ...", 0, 0);
			i = k - 1;
		}
		append(buf, size, &at, i ? ", " : " ", 1, rs.r[i].lo);
		if (rs.r[i].hi != rs.r[i].lo)
			append(buf, size, &at, rs.r[i].hi == rs.r[i].lo + 1 ? ", " : " to ", 1,
				rs.r[i].hi);
	}
out:
	free(rs.r);
	return rc;
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
