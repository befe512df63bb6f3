/* The reference's step comparison: per-device op/kernel sequences, their values, and the greedy
 * Myers alignment. */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/compare.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"
#include "diff.h"

enum row_what {
	W_OP = 1,      /* ATEN_END / ATB_END */
	W_KERNEL = 2,  /* KERNEL_LAUNCH */
	W_PTA = 4,     /* a PTA pool row */
	W_MS = 8,      /* a MINDSPORE pool row */
	W_START = 16,  /* ATEN_START / ATB_START */
	W_ATB = 32,    /* an ATB pool row */
	W_FREE = 64,   /* (with a pool bit) the row is a FREE */
	W_USED = 128,  /* (with a pool bit) the row has `used` */
	W_NAMED = 256, /* (with a pool bit) a MALLOC that names its op (memscope_event_op): name */
	W_CUDA = 512,  /* a CUDA_CACHING pool row: PyTorch's caching allocator on CUDA */
	W_POOLS = W_PTA | W_MS | W_ATB | W_CUDA,
};

struct cmp_row {
	uint64_t ts;
	int64_t size;
	int64_t used;
	uint32_t seq; /* file order, to keep equal timestamps stable (wraps past 2^32 rows) */
	uint32_t pid; /* pid and tid: low 32 bits, only compared for equality */
	uint32_t tid;
	uint32_t name;
	uint32_t what;
};

struct cmp_dev {
	int32_t device;
	int bad_name;	   /* an element name starting with = + - @: the reference drops the list */
	int64_t cuda_live; /* bytes of its live CUDA_CACHING blocks so far, in input order (wraps)
			    */
	struct cmp_row *rows;
	size_t n, cap;
};

struct memscope_compare_side {
	char *name;
	const struct memscope_strtab *st;
	struct cmp_dev *devs;
	size_t n_devs, cap_devs;
	struct u64map dev_at; /* device -> its index in devs */
	uint64_t seq;
	uint64_t first_line[3]; /* first PTA, MINDSPORE, CUDA_CACHING row (0: none) */
	uint32_t first_file[3]; /* their memscope_event.file */
	uint64_t first_seq[3];
	uint64_t n_pool_rows;	      /* framework-pool rows (W_POOLS) of a numbered device */
	uint64_t n_used_rows[3];      /* those of PTA, MINDSPORE, CUDA_CACHING with `used` */
	struct memscope_steps *steps; /* the input's steps, for --step */
	/* what an empty comparison is explained by (memscope_compare_run) */
	int profiler;			 /* rows only an Ascend profiler output has */
	uint64_t n_ops, n_ops_no_device; /* op START/END rows, those of no numbered device */
	uint64_t n_kernels;		 /* KERNEL_LAUNCH rows */
	uint64_t n_dev_elems[2];	 /* op END, KERNEL_LAUNCH rows of a numbered device */
};

/* one process's span of the chosen step */
struct window {
	uint64_t pid, lo, hi; /* lo <= ts <= hi */
};

/* The spans of the chosen step of one input, and each pid's first span. */
struct windows {
	uint64_t step, n_steps; /* n_steps: the most steps with a span any process has */
	struct window *w;	/* NULL: the whole input */
	size_t n, cap;
	struct u64map by_pid; /* low 32 bits of the pid -> index in w */
};

struct memscope_compare_side *memscope_compare_side_new(
	const char *name, const struct memscope_strtab *st)
{
	struct memscope_compare_side *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->st = st;
	if (!(s->name = strdup(name ? name : "")) || !(s->steps = memscope_steps_new(st))) {
		memscope_compare_side_free(s);
		s = NULL;
	}
	return s;
}

void memscope_compare_side_free(struct memscope_compare_side *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_devs; i++)
		free(s->devs[i].rows);
	free(s->devs);
	ms__u64map_free(&s->dev_at);
	memscope_steps_free(s->steps);
	free(s->name);
	free(s);
}

static struct cmp_dev *find_dev(struct memscope_compare_side *s, int32_t device)
{
	uint64_t at;

	return ms__u64map_get(&s->dev_at, (uint32_t)device, &at, NULL) ? &s->devs[at] : NULL;
}

/* The device's rows, added when new. NULL on OOM. */
static struct cmp_dev *dev_of(struct memscope_compare_side *s, int32_t device)
{
	struct cmp_dev *d = find_dev(s, device);

	if (d)
		return d;
	if (ms__grow_array(&s->devs, &s->cap_devs, s->n_devs + 1, sizeof(*s->devs)) ||
		ms__u64map_put(&s->dev_at, (uint32_t)device, s->n_devs, 0))
		return NULL;
	memset(&s->devs[s->n_devs], 0, sizeof(s->devs[0]));
	s->devs[s->n_devs].device = device;
	return &s->devs[s->n_devs++];
}

int memscope_compare_side_add(struct memscope_compare_side *s, const struct memscope_event *ev)
{
	uint32_t what = 0;
	struct cmp_dev *d;
	struct cmp_row *r;
	int boundary = memscope_steps_feed(s->steps, ev);

	if (boundary < 0)
		return MEMSCOPE_E_NOMEM;
	if (ev->kind == MEMSCOPE_KIND_COUNTER || ev->kind == MEMSCOPE_KIND_PLAN ||
		((ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE) &&
			memscope_subtype_is_pool(ev->subtype) && !(ev->flags & MEMSCOPE_EV_PTR)))
		s->profiler = 1;
	/* a ProfilerStep#N op is a step, not an element (its number differs between runs) */
	if (boundary && ev->kind == MEMSCOPE_KIND_OP_LAUNCH)
		return 0;
	if (ev->subtype == MEMSCOPE_SUB_ATEN_END || ev->subtype == MEMSCOPE_SUB_ATB_END)
		what = W_OP;
	else if (ev->subtype == MEMSCOPE_SUB_ATEN_START || ev->subtype == MEMSCOPE_SUB_ATB_START)
		what = W_START;
	else if (ev->subtype == MEMSCOPE_SUB_ATB &&
		 (ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE))
		what = W_ATB;
	else if (ev->subtype == MEMSCOPE_SUB_KERNEL_LAUNCH)
		what = W_KERNEL;
	else if (ev->subtype == MEMSCOPE_SUB_PTA)
		what = W_PTA;
	else if (ev->subtype == MEMSCOPE_SUB_MINDSPORE)
		what = W_MS;
	else if (ev->subtype == MEMSCOPE_SUB_CUDA_CACHING &&
		 (ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE))
		what = W_CUDA;
	s->seq++;
	if (what & (W_OP | W_START)) {
		s->n_ops++;
		s->n_ops_no_device += ev->device < 0;
	}
	s->n_kernels += what == W_KERNEL;
	if (what & (W_PTA | W_MS | W_CUDA)) {
		int f = what == W_MS ? 1 : what == W_CUDA ? 2 : 0;

		if (!s->first_line[f]) {
			s->first_line[f] = ev->line ? ev->line : 1;
			s->first_file[f] = ev->file;
			s->first_seq[f] = s->seq;
		}
	}
	/* rows without a numbered device are not compared (the reference skips N/A, host, cpu) */
	if (!what || ev->device < 0)
		return 0;
	s->n_dev_elems[0] += what == W_OP;
	s->n_dev_elems[1] += what == W_KERNEL;
	if (!(d = dev_of(s, ev->device)) ||
		ms__grow_array(&d->rows, &d->cap, d->n + 1, sizeof(*d->rows)))
		return MEMSCOPE_E_NOMEM;
	r = &d->rows[d->n++];
	r->ts = ev->ts_ns;
	r->seq = (uint32_t)s->seq;
	r->pid = (uint32_t)ev->pid;
	r->size = (ev->flags & MEMSCOPE_EV_SIZE) ? ev->size : 0;
	r->used = (ev->flags & MEMSCOPE_EV_USED) ? ev->used : 0;
	if (what == W_CUDA && !(ev->flags & MEMSCOPE_EV_USED)) {
		/* a snapshot carries no `used`: its live blocks' bytes (those alive before its
		 * trace come first, from its segments) */
		uint64_t sz = r->size < 0 ? 0 - (uint64_t)r->size : (uint64_t)r->size;

		d->cuda_live = (int64_t)((uint64_t)d->cuda_live +
					 (ev->kind == MEMSCOPE_KIND_FREE ? 0 - sz : sz));
		r->used = d->cuda_live;
		what |= W_USED;
	}
	if (what & W_POOLS) {
		s->n_pool_rows++;
		if ((what & (W_PTA | W_MS | W_CUDA)) &&
			((ev->flags & MEMSCOPE_EV_USED) || (what & W_USED)))
			s->n_used_rows[(what & W_MS) ? 1 : (what & W_CUDA) ? 2 : 0]++;
	}
	r->tid = (uint32_t)ev->tid;
	r->name = ev->name;
	if (what & W_POOLS) {
		what |= ev->kind == MEMSCOPE_KIND_FREE ? W_FREE : 0;
		what |= (ev->flags & MEMSCOPE_EV_USED) ? W_USED : 0; /* (or set above) */
		what |= memscope_event_op(ev) ? W_NAMED : 0;
	}
	r->what = what;
	return 0;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct cmp_row *a = pa, *b = pb;
	int c = MS__CMP(a->ts, b->ts);

	return c ? c : MS__CMP(a->seq, b->seq);
}

static int add_window(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	struct windows *ws = ctx;
	uint64_t n = memscope_steps_count(p), lo, hi;
	int open;

	(void)src;
	n -= memscope_steps_source(p) == MEMSCOPE_STEPS_SYSTEM && n; /* the step still running
									has no STEP row */
	ws->n_steps = n > ws->n_steps ? n : ws->n_steps;
	/* step numbers: ProfilerStep#N is step N */
	if (!memscope_steps_span(p, ws->step, &lo, &hi, &open))
		return 0;
	if (ms__grow_array(&ws->w, &ws->cap, ws->n + 1, sizeof(*ws->w)))
		return MEMSCOPE_E_NOMEM;
	/* rows keep 32 bits of their pid: the first process with those bits decides */
	if (!ms__u64map_get(&ws->by_pid, (uint32_t)pid, NULL, NULL) &&
		ms__u64map_put(&ws->by_pid, (uint32_t)pid, ws->n, 0))
		return MEMSCOPE_E_NOMEM;
	ws->w[ws->n++] = (struct window){ (uint32_t)pid, lo, hi };
	return 0;
}

static void windows_free(struct windows *ws)
{
	free(ws->w);
	ms__u64map_free(&ws->by_pid);
	memset(ws, 0, sizeof(*ws));
}

/* The processes' spans of step `step` into *ws (the caller frees it with windows_free, also on
 * failure), or MEMSCOPE_E_INVALID in err when there are none. */
static int step_windows(struct memscope_compare_side *s, uint64_t step, struct windows *ws,
	struct memscope_error *err)
{
	char has[MEMSCOPE_STEPS_TEXT_MAX];

	memset(ws, 0, sizeof(*ws));
	ws->step = step;
	if (memscope_steps_resolve(s->steps) || memscope_steps_foreach(s->steps, add_window, ws))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	if (ws->n)
		return 0;
	if (!ws->n_steps)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, s->name, 0,
			"no steps: neither mstx \"step start\" ranges, SYSTEM STEP rows nor "
			"ProfilerStep#N ops");
	if (memscope_steps_text(s->steps, MEMSCOPE_STEPS_ALL_INPUTS, has, sizeof(has)))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	return memscope_error_set(err, MEMSCOPE_E_INVALID, s->name, 0, "no step %llu: it has %s",
		(unsigned long long)step, has);
}

/* Is r in its process's span (every row is when there are no spans)? */
static int in_windows(const struct cmp_row *r, const struct windows *ws)
{
	uint64_t at;

	if (!ws->w)
		return 1;
	if (!ms__u64map_get(&ws->by_pid, r->pid, &at, NULL))
		return 0;
	return r->ts >= ws->w[at].lo && r->ts <= ws->w[at].hi;
}

/* The elements of one device: names and values, in timestamp order. */
struct seq {
	uint32_t *name;
	int64_t *value;
	uint16_t *event;
	size_t n;
	/* at the op level: what each element itself allocated, and whether its END closed a
	 * START (else NULL) */
	int64_t *own;
	unsigned char *known;
	uint64_t outside; /* net pool bytes made while no op ran on their thread (wraps) */
};

static void seq_free(struct seq *q)
{
	free(q->name);
	free(q->value);
	free(q->event);
	free(q->own);
	free(q->known);
	memset(q, 0, sizeof(*q));
}

/* a row's pid or tid of N/A, as cmp_row keeps it */
#define NO_ID32 UINT32_MAX

/*
 * An op START still waiting for its END. Its END closes the innermost open START of the same op
 * on the same thread: the frames of one (thread, name) are a stack, linked through `inner`. A
 * pool row counts for one frame at most (`own`): a MALLOC that names its op (a profiler
 * output's) for the innermost open frame of that op in its process (the frames of one
 * (process, name) are a stack too, linked through `pinner`, across threads); else a row of a
 * thread for the innermost open frame of its thread, a row without a thread for the newest open
 * frame of its process. When a frame ends, its bytes and its inner frames' go to the frame it ran
 * in (the one opened before it on its thread and still open): `sub`. Its peak is the highest
 * framework-pool `used` from its START to its END: the `used` at START, or a sample taken since.
 */
struct frame {
	uint64_t own;	 /* bytes counted for it alone (wraps) */
	uint64_t sub;	 /* bytes of the frames that ended inside it on its thread (wraps) */
	int64_t used0;	 /* the pool's `used` at START */
	uint64_t s0;	 /* samples before START */
	size_t inner;	 /* the next open frame of its (thread, name), or of the free list; + 1 */
	size_t pinner;	 /* the next older open frame of its (process, name); + 1 */
	size_t pouter;	 /* the next newer one; + 1, 0: it is the newest */
	size_t pos;	 /* its place in its thread's stack */
	size_t ppos;	 /* its place in its process's stack */
	uint32_t thread; /* its thread's number */
	uint32_t proc;	 /* its process's number */
};

/*
 * The frames of one thread (or one process) in the order they opened, at places 1..n (0: none).
 * An ended frame stays in place until the frames above it are gone; link[p] finds the open frame
 * below place p (a union-find: link[p] = p while p is open, else a lower place), so a frame's
 * outer frame is found in amortized near-constant time however the frames end; n is always an
 * open place or 0.
 */
struct thread_frames {
	size_t *at, *link; /* by place; at[0], link[0] = 0 */
	size_t n, cap, cap_link;
};

/* The highest open place at or below p (0: none), compressing the path. */
static size_t place_open(struct thread_frames *tf, size_t p)
{
	while (tf->link[p] != p) {
		tf->link[p] = tf->link[tf->link[p]];
		p = tf->link[p];
	}
	return p;
}

/* Put frame `at` on top of tf: its place, or 0 on OOM. */
static size_t place_push(struct thread_frames *tf, size_t at)
{
	if (ms__grow_array(&tf->at, &tf->cap, tf->n + 2, sizeof(*tf->at)) ||
		ms__grow_array(&tf->link, &tf->cap_link, tf->n + 2, sizeof(*tf->link)))
		return 0;
	tf->n++;
	tf->at[0] = tf->link[0] = 0;
	tf->at[tf->n] = at;
	tf->link[tf->n] = tf->n;
	return tf->n;
}

/* End place p of tf; the open place below it (0: none). */
static size_t place_end(struct thread_frames *tf, size_t p)
{
	size_t below;

	tf->link[p] = p - 1;
	below = place_open(tf, p);
	while (tf->n && tf->link[tf->n] != tf->n)
		tf->n--;
	return below;
}

/*
 * The `used` samples of a device in order, kept as the ones no later sample reaches (index up,
 * value strictly down): the highest of the samples from index s0 on is the first kept one at or
 * after s0.
 */
struct samples {
	uint64_t *idx;
	int64_t *val;
	size_t n, cap, cap_val;
	uint64_t count; /* samples taken */
};

static int sample_add(struct samples *sm, int64_t v)
{
	while (sm->n && sm->val[sm->n - 1] <= v)
		sm->n--;
	if (ms__grow_array(&sm->idx, &sm->cap, sm->n + 1, sizeof(*sm->idx)) ||
		ms__grow_array(&sm->val, &sm->cap_val, sm->n + 1, sizeof(*sm->val)))
		return MEMSCOPE_E_NOMEM;
	sm->idx[sm->n] = sm->count++;
	sm->val[sm->n++] = v;
	return 0;
}

/* The highest sample from index s0 on into *v; 0 when there is none. */
static int sample_max_since(const struct samples *sm, uint64_t s0, int64_t *v)
{
	size_t lo = 0, hi = sm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sm->idx[mid] < s0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == sm->n)
		return 0;
	*v = sm->val[lo];
	return 1;
}

/* the open frames of a device's forward pass */
struct frames {
	struct frame *f;
	size_t cap, free_head; /* free_head: a free frame + 1, 0: none */
	size_t n, n_open;      /* frames made, open */
	struct u64map threads; /* pid << 32 | tid -> the thread's number */
	struct u64map procs;   /* pid -> the process's number */
	struct u64map top;     /* number << 32 | name -> its innermost open frame + 1 */
	struct u64map ptop;    /* pid << 32 | name -> its innermost open frame + 1, any thread */
	struct thread_frames *stk, *pstk; /* by thread number, by process number */
	size_t cap_stk, cap_pstk;
	uint64_t n_threads, n_procs;
};

static void frames_free(struct frames *fs)
{
	uint64_t t;

	for (t = 0; t < fs->n_threads && t < fs->cap_stk; t++) {
		free(fs->stk[t].at);
		free(fs->stk[t].link);
	}
	for (t = 0; t < fs->n_procs && t < fs->cap_pstk; t++) {
		free(fs->pstk[t].at);
		free(fs->pstk[t].link);
	}
	free(fs->stk);
	free(fs->pstk);
	free(fs->f);
	ms__u64map_free(&fs->threads);
	ms__u64map_free(&fs->procs);
	ms__u64map_free(&fs->top);
	ms__u64map_free(&fs->ptop);
}

/*
 * The number of `key` in map (numbering a new key when add is set, its stack zeroed in *stk) into
 * *num; 0, 1 when absent (add not set), or MEMSCOPE_E_NOMEM.
 */
static int number_of(struct u64map *map, uint64_t key, int add, struct thread_frames **stk,
	size_t *cap, uint64_t *n, uint64_t *num)
{
	if (ms__u64map_get(map, key, num, NULL))
		return 0;
	if (!add)
		return 1;
	if (*n > UINT32_MAX || ms__grow_array(stk, cap, *n + 1, sizeof(**stk)))
		return MEMSCOPE_E_NOMEM;
	memset(&(*stk)[*n], 0, sizeof(**stk));
	if (ms__u64map_put(map, key, *n, 0))
		return MEMSCOPE_E_NOMEM;
	*num = (*n)++;
	return 0;
}

/* The key of (pid, tid, name) in frames.top; 0 and *key on success, else MEMSCOPE_E_NOMEM. */
static int frame_key(struct frames *fs, const struct cmp_row *r, int add, uint64_t *key)
{
	uint64_t t;
	int rc = number_of(&fs->threads, (uint64_t)r->pid << 32 | r->tid, add, &fs->stk,
		&fs->cap_stk, &fs->n_threads, &t);

	if (rc < 0)
		return rc;
	*key = rc ? UINT64_MAX /* no frame was opened on it */ : t << 32 | r->name;
	return 0;
}

/* the key of (pid, name) in frames.ptop */
static uint64_t process_key(uint32_t pid, uint32_t name)
{
	return (uint64_t)pid << 32 | name;
}

/* Open a frame for START row r. 0 or MEMSCOPE_E_NOMEM (fs is then only fit for frames_free). */
static int frame_open(struct frames *fs, const struct cmp_row *r, int64_t used0, uint64_t s0)
{
	uint64_t key, proc, pkey = process_key(r->pid, r->name), inner = 0, pinner = 0;
	size_t at, pos, ppos;

	if (frame_key(fs, r, 1, &key) ||
		number_of(&fs->procs, r->pid, 1, &fs->pstk, &fs->cap_pstk, &fs->n_procs, &proc))
		return MEMSCOPE_E_NOMEM;
	if (fs->free_head) {
		at = fs->free_head - 1;
		fs->free_head = fs->f[at].inner;
	} else {
		if (ms__grow_array(&fs->f, &fs->cap, fs->n + 1, sizeof(*fs->f)))
			return MEMSCOPE_E_NOMEM;
		at = fs->n++;
	}
	ms__u64map_get(&fs->top, key, &inner, NULL);
	ms__u64map_get(&fs->ptop, pkey, &pinner, NULL);
	if (ms__u64map_put(&fs->top, key, at + 1, 0) ||
		ms__u64map_put(&fs->ptop, pkey, at + 1, 0) ||
		!(pos = place_push(&fs->stk[key >> 32], at)) ||
		!(ppos = place_push(&fs->pstk[proc], at)))
		return MEMSCOPE_E_NOMEM;
	if (pinner)
		fs->f[pinner - 1].pouter = at + 1;
	fs->f[at] = (struct frame){ 0, 0, used0, s0, (size_t)inner, (size_t)pinner, 0, pos, ppos,
		(uint32_t)(key >> 32), (uint32_t)proc };
	fs->n_open++;
	return 0;
}

/* The innermost open frame of op `name` in process pid, on any thread, + 1; 0 when none. */
static size_t frame_of_op(const struct frames *fs, uint32_t pid, uint32_t name)
{
	uint64_t top = 0;

	return ms__u64map_get(&fs->ptop, process_key(pid, name), &top, NULL) ? (size_t)top : 0;
}

/*
 * The frame a pool row without an op name counts for, + 1 (0: none): the innermost open one of
 * its thread, or for a row without a thread, the newest open one of its process.
 */
static size_t frame_of_row(const struct frames *fs, const struct cmp_row *r)
{
	const struct thread_frames *tf;
	uint64_t t;

	if (r->tid != NO_ID32) {
		if (!ms__u64map_get(&fs->threads, (uint64_t)r->pid << 32 | r->tid, &t, NULL))
			return 0;
		tf = &fs->stk[t];
	} else {
		if (!ms__u64map_get(&fs->procs, r->pid, &t, NULL))
			return 0;
		tf = &fs->pstk[t];
	}
	return tf->n ? tf->at[tf->n] + 1 : 0;
}

/*
 * Close the innermost open frame of r's thread and name into *out: 1, 0 when none is open, or
 * MEMSCOPE_E_NOMEM. Its bytes go to the frame it ran in, if that is still open.
 */
static int frame_close(struct frames *fs, const struct cmp_row *r, struct frame *out)
{
	uint64_t key, top = 0;
	struct frame *f;
	size_t at, outer;

	if (frame_key(fs, r, 0, &key))
		return MEMSCOPE_E_NOMEM;
	if (key == UINT64_MAX || !ms__u64map_get(&fs->top, key, &top, NULL) || !top)
		return 0;
	at = (size_t)top - 1;
	f = &fs->f[at];
	*out = *f;
	/* off the stacks of its (thread, name) and (process, name); the keys are there: no
	 * allocation */
	ms__u64map_put(&fs->top, key, f->inner, 0);
	if (f->pouter)
		fs->f[f->pouter - 1].pinner = f->pinner;
	else
		ms__u64map_put(&fs->ptop, process_key(r->pid, r->name), f->pinner, 0);
	if (f->pinner)
		fs->f[f->pinner - 1].pouter = f->pouter;
	/* its bytes to the frame it ran in; off its thread's and process's stacks */
	if ((outer = place_end(&fs->stk[f->thread], f->pos)))
		fs->f[fs->stk[f->thread].at[outer]].sub += f->own + f->sub;
	place_end(&fs->pstk[f->proc], f->ppos);
	f->inner = fs->free_head;
	fs->free_head = at + 1;
	fs->n_open--;
	return 1;
}

/*
 * One forward pass over the device's rows: q->value[] (unless values is 0: the reference's
 * values are made elsewhere) by metric (delta or peak), q->own[] and q->known[] (when not NULL),
 * q->outside; q->name[] and q->event[] too. stats gets the unmatched STARTs and ENDs and the
 * MALLOCs naming an op not running.
 */
static int forward_values(const struct cmp_dev *d, unsigned level, uint32_t fw, int metric,
	int values, const struct windows *win, struct seq *q, struct memscope_compare_stats *stats)
{
	struct frames fs = { 0 };
	struct samples sm = { 0 };
	size_t i, e = 0;
	int64_t cur_used = 0;
	int rc = MEMSCOPE_E_NOMEM, r_close;

	for (i = 0; i < d->n; i++) {
		const struct cmp_row *r = &d->rows[i];
		struct frame f;

		if (!in_windows(r, win))
			continue;
		if (r->what & W_POOLS) {
			/* legacy FREE sizes are negative; hostile sizes wrap instead of overflowing
			 */
			uint64_t sz = r->size < 0 ? 0 - (uint64_t)r->size : (uint64_t)r->size;
			size_t op = (r->what & W_NAMED) ? frame_of_op(&fs, r->pid, r->name) : 0;

			if (!op && (r->what & W_NAMED))
				stats->n_named_unopen++;
			if (!op)
				op = frame_of_row(&fs, r);
			sz = (r->what & W_FREE) ? 0 - sz : sz;
			if (op)
				fs.f[op - 1].own += sz;
			else
				q->outside += sz;
			if ((r->what & fw) && (r->what & W_USED)) {
				cur_used = r->used;
				/* no open frame: no later END asks about the samples so far */
				if (!fs.n_open)
					sm.n = 0;
				if (sample_add(&sm, cur_used))
					goto out;
			}
		} else if (r->what & W_START) {
			if (frame_open(&fs, r, cur_used, sm.count))
				goto out;
		} else if (r->what & level) {
			int64_t val = metric == MEMSCOPE_METRIC_PEAK ? cur_used : 0, pk;

			if ((r_close = frame_close(&fs, r, &f)) < 0)
				goto out;
			if (!r_close) {
				stats->n_unmatched_end++;
			} else if (metric == MEMSCOPE_METRIC_DELTA) {
				val = (int64_t)(f.own + f.sub);
			} else {
				val = f.used0;
				if (sample_max_since(&sm, f.s0, &pk) && pk > val)
					val = pk;
			}
			if (q->known) {
				q->known[e] = r_close == 1;
				q->own[e] = r_close == 1 ? (int64_t)f.own : 0;
			}
			if (values)
				q->value[e] = val;
			q->name[e] = r->name;
			q->event[e++] = r->what == W_OP ? MEMSCOPE_KIND_OP_LAUNCH
							: MEMSCOPE_KIND_KERNEL_LAUNCH;
		}
	}
	stats->n_unmatched_start += fs.n_open;
	rc = 0;
out:
	frames_free(&fs);
	free(sm.idx);
	free(sm.val);
	return rc;
}

static int build_seq(struct cmp_dev *d, const struct memscope_strtab *st, unsigned level,
	uint32_t fw, int metric, const struct windows *win, struct seq *q,
	struct memscope_compare_stats *stats)
{
	size_t i, n = 0;
	int64_t next = 0;

	memset(q, 0, sizeof(*q));
	if (!d)
		return 0;
	qsort(d->rows, d->n, sizeof(*d->rows), cmp_rows);
	for (i = 0; i < d->n; i++) {
		if (!(d->rows[i].what & level) || !in_windows(&d->rows[i], win))
			continue;
		const char *nm = memscope_strtab_str(st, d->rows[i].name, NULL);

		if (nm && (nm[0] == '=' || nm[0] == '+' || nm[0] == '-' || nm[0] == '@'))
			return 0; /* the reference empties the list */
		n++;
	}
	if (!n)
		return 0;
	q->name = malloc((n + 1) * sizeof(*q->name)); /* + the sentinel */
	q->value = malloc(n * sizeof(*q->value));
	q->event = malloc(n * sizeof(*q->event));
	if (!q->name || !q->value || !q->event) {
		seq_free(q);
		return MEMSCOPE_E_NOMEM;
	}
	q->n = n;
	if (level == W_OP) {
		/* what each op allocated itself, under every metric; the unmatched rows are the
		 * delta and peak metrics' to report */
		struct memscope_compare_stats scratch = { 0 };
		int rc;

		q->own = malloc(n * sizeof(*q->own));
		q->known = malloc(n);
		rc = !q->own || !q->known
			     ? MEMSCOPE_E_NOMEM
			     : forward_values(d, level, fw, metric,
				       metric != MEMSCOPE_METRIC_REFERENCE, win, q,
				       metric != MEMSCOPE_METRIC_REFERENCE ? stats : &scratch);
		if (rc || metric != MEMSCOPE_METRIC_REFERENCE) {
			if (rc)
				seq_free(q);
			return rc;
		}
	} else if (metric != MEMSCOPE_METRIC_REFERENCE) {
		int rc = forward_values(d, level, fw, metric, 1, win, q, stats);

		if (rc)
			seq_free(q);
		return rc;
	}
	/* backwards: the value of an element is the size of the next framework row, 0 if none */
	for (i = d->n; i-- > 0;) {
		const struct cmp_row *r = &d->rows[i];

		if (!in_windows(r, win))
			continue;
		if (r->what & fw)
			next = r->size;
		else if (r->what & level) {
			n--;
			q->name[n] = r->name;
			q->value[n] = next;
			q->event[n] = r->what == W_OP ? MEMSCOPE_KIND_OP_LAUNCH
						      : MEMSCOPE_KIND_KERNEL_LAUNCH;
		}
	}
	return 0;
}

struct emit {
	size_t diff_bytes;
	int (*fn)(void *ctx, const struct memscope_compare_row *row);
	void *ctx;
	struct memscope_compare_stats *stats;
	int32_t device;
};

static int emit_pair(
	struct emit *e, const struct seq *qa, int64_t ia, const struct seq *qb, int64_t ib)
{
	struct memscope_compare_row r;
	int64_t base, cmp;

	memset(&r, 0, sizeof(r));
	r.device = e->device;
	r.index = e->stats->n_rows;
	r.has_base = ia >= 0;
	r.has_cmp = ib >= 0;
	r.has_own = 1;
	if (r.has_base) {
		r.base = qa->value[ia];
		r.event = qa->event[ia];
		r.name = qa->name[ia];
		r.has_own = qa->known && qa->known[ia];
		r.base_own = r.has_own ? qa->own[ia] : 0;
	}
	if (r.has_cmp) {
		r.cmp = qb->value[ib];
		r.event = qb->event[ib];
		r.name = qb->name[ib];
		r.has_own = r.has_own && qb->known && qb->known[ib];
		r.cmp_own = r.has_own ? qb->own[ib] : 0;
	}
	base = r.has_base ? r.base : 0;
	cmp = r.has_cmp ? r.cmp : 0;
	if (__builtin_sub_overflow(cmp, base, &r.diff))
		r.diff = cmp; /* the reference's overflow guard */
	if (!r.has_own)
		r.base_own = r.cmp_own = 0;
	else if (__builtin_sub_overflow(r.cmp_own, r.base_own, &r.diff_own))
		r.diff_own = r.cmp_own;
	e->stats->n_rows++;
	e->stats->n_matched += r.has_base && r.has_cmp;
	e->stats->n_base_only += r.has_base && !r.has_cmp;
	e->stats->n_cmp_only += !r.has_base && r.has_cmp;
	if (__builtin_add_overflow(e->stats->total_diff, r.diff, &e->stats->total_diff))
		e->stats->total_diff = r.diff < 0 ? INT64_MIN : INT64_MAX;
	return e->fn(e->ctx, &r);
}

/* Past the exact diff's bound: the anchored alignment, each gap's deletions before its
 * insertions (formats/analyses.md "Compare: alignment"). */
static int align_anchored(struct emit *e, struct seq *qa, struct seq *qb)
{
	uint32_t *ia, *ib, x = 0, y = 0;
	size_t count, i;
	int rc = ms__diff_anchored(
		qa->name, (int64_t)qa->n, qb->name, (int64_t)qb->n, &ia, &ib, &count);

	if (rc)
		return rc;
	e->stats->n_anchored++;
	for (i = 0; i <= count && !rc; i++) {
		uint32_t xe = i < count ? ia[i] : (uint32_t)qa->n;
		uint32_t ye = i < count ? ib[i] : (uint32_t)qb->n;

		while (!rc && x < xe)
			rc = emit_pair(e, qa, x++, qb, -1);
		while (!rc && y < ye)
			rc = emit_pair(e, qa, -1, qb, y++);
		if (!rc && i < count)
			rc = emit_pair(e, qa, x++, qb, y++);
	}
	free(ia);
	free(ib);
	return rc;
}

static int align(struct emit *e, struct seq *qa, struct seq *qb)
{
	static const uint32_t none_a[1] = { DIFF_SENTINEL_A }, none_b[1] = { DIFF_SENTINEL_B };
	unsigned char *dirs;
	int64_t D, d, x = 0, y = 0, n = (int64_t)qa->n, m = (int64_t)qb->n;
	int rc;

	if (n)
		qa->name[n] = DIFF_SENTINEL_A;
	if (m)
		qb->name[m] = DIFF_SENTINEL_B;
	rc = ms__diff_myers(n ? qa->name : none_a, n, m ? qb->name : none_b, m,
		e->diff_bytes ? e->diff_bytes : DIFF_BUDGET_DEFAULT, DIFF_EXACT_WORK, &dirs, &D);

	if (rc == 1)
		return align_anchored(e, qa, qb);
	if (rc)
		return rc;
	for (d = 0; d <= D && !rc; d++) {
		if (d > 0) {
			if (dirs[d])
				rc = emit_pair(e, qa, -1, qb, y++);
			else
				rc = emit_pair(e, qa, x++, qb, -1);
		}
		while (!rc && x < n && y < m && qa->name[x] == qb->name[y])
			rc = emit_pair(e, qa, x++, qb, y++);
	}
	free(dirs);
	return rc;
}

int memscope_compare_side_lacks(
	const struct memscope_compare_side *s, unsigned level, struct memscope_error *err)
{
	level = level ? level : MEMSCOPE_COMPARE_OP;
	if (!s->profiler || ((level & MEMSCOPE_COMPARE_KERNEL) && s->n_kernels) ||
		((level & MEMSCOPE_COMPARE_OP) && s->n_ops > s->n_ops_no_device))
		return 0; /* no profiler data, or it has elements of the level */
	if (!(level & MEMSCOPE_COMPARE_OP))
		return memscope_error_set(err, MEMSCOPE_E_INVALID, s->name, 0,
			"an Ascend profiler output has no kernel launches, which the kernel level "
			"compares: %s",
			s->n_ops ? "compare its ops (--level op)"
				 : "and this one has no timeline (trace_view.json / msprof_*.json) "
				   "with op slices (cpu_op) to compare ops");
	if (!s->n_ops)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, s->name, 0,
			"this output has no timeline (trace_view.json / msprof_*.json) with op "
			"slices (cpu_op), which the op sequence comes from");
	return memscope_error_set(err, MEMSCOPE_E_INVALID, s->name, 0,
		"its op slices have no device, which comes from the output's memory files: give "
		"the output folder, not its timeline alone");
}

/* What one side's sequences held, for saying why nothing matched. */
struct reach {
	uint64_t n;	/* elements, all devices */
	int32_t dev[3]; /* the first devices with elements */
	size_t n_dev;
	int has_name;
	uint32_t name; /* an element's name: one on a device both sides have, if any */
};

static void reach_add(struct reach *r, int32_t device, const struct seq *q, size_t other)
{
	if (!q->n)
		return;
	r->n += q->n;
	if (r->n_dev < sizeof(r->dev) / sizeof(r->dev[0]))
		r->dev[r->n_dev] = device;
	r->n_dev++;
	if (!r->has_name || (other && r->has_name == 1)) {
		r->name = q->name[0];
		r->has_name = other ? 2 : 1;
	}
}

/* Add a side's bytes made outside every op (wrapped) to *total, saturating. */
static void add_outside(int64_t *total, uint64_t v)
{
	int64_t x = (int64_t)v;

	if (__builtin_add_overflow(*total, x, total))
		*total = x < 0 ? INT64_MIN : INT64_MAX;
}

/* "on device 0", "on devices 0, 1", "on devices 0, 1, 2 and 3 more" into buf */
static const char *devices_text(char *buf, size_t n, const struct reach *r)
{
	size_t i, k = r->n_dev < 3 ? r->n_dev : 3, at;

	at = (size_t)snprintf(buf, n, "on device%s ", r->n_dev > 1 ? "s" : "");
	for (i = 0; i < k && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%d", i ? ", " : "", (int)r->dev[i]);
	if (r->n_dev > k && at < n)
		snprintf(buf + at, n - at, " and %zu more", r->n_dev - k);
	return buf;
}

/*
 * Why no element of either side matched one of the other (MEMSCOPE_E_INVALID in err): a side
 * without elements of the level (and the level both sides do have, if any), sides on different
 * devices, or sides whose names all differ.
 */
static int nothing_in_common(struct memscope_compare_side *const *sides, unsigned level,
	uint64_t step, const struct reach *reach, size_t shared, const struct memscope_strtab *st,
	struct memscope_error *err)
{
	static const char *const rows[] = { "", "op END rows (ATEN_END, ATB_END)",
		"KERNEL_LAUNCH rows", "op END or KERNEL_LAUNCH rows" };
	static const char *const elems[] = { "", "ops", "kernel launches",
		"ops or kernel launches" };
	static const char *const names[] = { "", "op", "kernel", "op,kernel" };
	static const char *const elem[] = { "", "op", "kernel launch", "op or kernel launch" };
	unsigned other = level == MEMSCOPE_COMPARE_OP	    ? MEMSCOPE_COMPARE_KERNEL
			 : level == MEMSCOPE_COMPARE_KERNEL ? MEMSCOPE_COMPARE_OP
							    : 0;
	int both_other =
		other && sides[0]->n_dev_elems[other - 1] && sides[1]->n_dev_elems[other - 1];
	const char *a = sides[0]->name, *b = sides[1]->name;
	char in_step[40] = "", hint[160] = "", da[64], db[64];
	const char *na, *nb;

	if (step)
		snprintf(in_step, sizeof(in_step), " in step %llu", (unsigned long long)step);
	if (both_other)
		snprintf(hint, sizeof(hint), "; both have %s: compare those with --level %s",
			rows[other], names[other]);
	if (!reach[0].n && !reach[1].n)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, 0,
			"%s, %s: neither input has %s of a numbered device%s, which the %s level "
			"compares%s",
			a, b, rows[level], in_step, names[level], hint);
	if (!reach[0].n || !reach[1].n) {
		const struct memscope_compare_side *lack = sides[!reach[0].n ? 0 : 1],
						   *has = sides[!reach[0].n ? 1 : 0];

		if (!both_other && other && lack->n_dev_elems[other - 1])
			snprintf(hint, sizeof(hint),
				"; it has %s, but %s has none: no level has elements in both "
				"inputs",
				rows[other], has->name);
		return memscope_error_set(err, MEMSCOPE_E_INVALID, lack->name, 0,
			"no %s of a numbered device%s, which the %s level compares: nothing to "
			"compare %s's %llu %s with%s",
			rows[level], in_step, names[level], has->name,
			(unsigned long long)reach[lack == sides[0] ? 1 : 0].n,
			reach[lack == sides[0] ? 1 : 0].n == 1 ? elem[level] : elems[level], hint);
	}
	if (!shared)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, 0,
			"%s, %s: the inputs share no device: the %s of the first are %s, those "
			"of the second %s",
			a, b, elems[level], devices_text(da, sizeof(da), &reach[0]),
			devices_text(db, sizeof(db), &reach[1]));
	na = memscope_strtab_str(st, reach[0].name, NULL);
	nb = memscope_strtab_str(st, reach[1].name, NULL);
	return memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, 0,
		"%s, %s: no name is in both inputs (%llu %s such as '%.60s', %llu such as "
		"'%.60s'): %s",
		a, b, (unsigned long long)reach[0].n, elems[level], na ? na : "",
		(unsigned long long)reach[1].n, nb ? nb : "",
		sides[0]->profiler != sides[1]->profiler
			? "an Ascend profiler output names its ops as the profiler does "
			  "(aten::mm), an msMemScope dump as torch does "
			  "(torch._ops.aten.mm.default): "
			  "compare two profiler outputs or two dumps"
			: "different programs, or recorders that name them differently");
}

static int cmp_int32(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;

	return a < b ? -1 : a > b;
}

int memscope_compare_run(struct memscope_compare_side *base, struct memscope_compare_side *cmp,
	const struct memscope_compare_opts *opts, const struct memscope_strtab *st,
	int (*fn)(void *ctx, const struct memscope_compare_row *row), void *ctx,
	struct memscope_compare_stats *stats, struct memscope_error *err)
{
	struct memscope_compare_side *sides[2] = { base, cmp };
	struct memscope_compare_stats local;
	struct emit e = { opts->diff_bytes, fn, ctx, stats ? stats : &local, 0 };
	unsigned level = opts->level ? opts->level : MEMSCOPE_COMPARE_OP;
	struct windows win[2];
	struct reach reach[2];
	size_t shared = 0;
	int32_t *devs = NULL;
	size_t n_devs = 0, cap_devs = 0, i, j;
	static const uint32_t fw_bits[3] = { W_PTA, W_MS, W_CUDA };
	static const char *const fw_names[3] = { "PTA", "MINDSPORE", "CUDA_CACHING" };
	uint32_t fw = 0;
	int rc = 0, fwi = -1; /* the framework pool's index in first_line */

	memset(e.stats, 0, sizeof(*e.stats));
	memset(win, 0, sizeof(win));
	memset(reach, 0, sizeof(reach));
	/* the framework pool: the first PTA, MINDSPORE or CUDA_CACHING row seen, base first
	 * (formats/analyses.md "Compare: sequences and values") */
	for (i = 0; i < 2 && fwi < 0; i++) {
		const struct memscope_compare_side *s = sides[i];

		for (j = 0; j < 3; j++)
			if (s->first_line[j] && (fwi < 0 || s->first_seq[j] < s->first_seq[fwi]))
				fwi = (int)j;
	}
	fw = fwi < 0 ? 0 : fw_bits[fwi];
	for (i = 0; i < 2 && fwi >= 0; i++)
		for (j = 0; j < 3; j++) {
			const struct memscope_compare_side *s = sides[i];

			if ((int)j == fwi || !s->first_line[j])
				continue;
			return memscope_error_set(err, MEMSCOPE_E_INVALID,
				memscope_event_file(s->st, s->first_file[j], s->name),
				s->first_line[j],
				"%s pool row in a %s comparison: the inputs mix %s", fw_names[j],
				fw_names[fwi],
				j == 2 || fwi == 2 ? "CUDA and Ascend data"
						   : "PyTorch and MindSpore");
		}
	for (i = 0; i < 2 && opts->metric == MEMSCOPE_METRIC_PEAK && fwi >= 0; i++)
		if (sides[i]->first_line[fwi] && !sides[i]->n_used_rows[fwi])
			return memscope_error_set(err, MEMSCOPE_E_INVALID, sides[i]->name, 0,
				"--measure peak needs the pool's used bytes, which its %s rows do "
				"not carry: use --measure delta",
				fw_names[fwi]);
	/* (a profiler output's ops are its timeline's: no reference refuses them) */
	if (fw == W_MS && (level & MEMSCOPE_COMPARE_OP) && !base->profiler && !cmp->profiler)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, base->name, 0,
			"op-level comparison of MindSpore data is not supported (as in the "
			"reference); "
			"use the kernel level");
	level &= MEMSCOPE_COMPARE_OP | MEMSCOPE_COMPARE_KERNEL;
	if (opts->metric != MEMSCOPE_METRIC_REFERENCE && (level & MEMSCOPE_COMPARE_KERNEL))
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0,
			"the delta and peak metrics need op START and END rows: use the op level");
	for (i = 0; i < 2 && opts->step; i++)
		if ((rc = step_windows(sides[i], opts->step, &win[i], err)))
			goto out;
	for (i = 0; i < 2; i++)
		for (j = 0; j < sides[i]->n_devs; j++) {
			if (ms__grow_array(&devs, &cap_devs, n_devs + 1, sizeof(*devs))) {
				rc = memscope_error_set(
					err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
				goto out;
			}
			devs[n_devs++] = sides[i]->devs[j].device;
		}
	if (n_devs)
		qsort(devs, n_devs, sizeof(*devs), cmp_int32);
	for (i = 0; i < n_devs && !rc; i++) {
		struct seq qa = { 0 }, qb = { 0 };
		uint64_t before = e.stats->n_rows;

		if (i && devs[i] == devs[i - 1])
			continue;
		e.device = devs[i];
		rc = build_seq(find_dev(base, devs[i]), st, level, fw, (int)opts->metric, &win[0],
			&qa, e.stats);
		if (!rc)
			rc = build_seq(find_dev(cmp, devs[i]), st, level, fw, (int)opts->metric,
				&win[1], &qb, e.stats);
		if (!rc && (qa.n || qb.n))
			rc = align(&e, &qa, &qb);
		if (!rc) {
			reach_add(&reach[0], devs[i], &qa, qb.n);
			reach_add(&reach[1], devs[i], &qb, qa.n);
			shared += qa.n && qb.n;
			add_outside(&e.stats->base_outside, qa.outside);
			add_outside(&e.stats->cmp_outside, qb.outside);
		}
		if (rc == MEMSCOPE_E_NOMEM)
			memscope_error_set(err, rc, NULL, 0, "out of memory");
		else if (rc == MEMSCOPE_E_ARG)
			memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, 0,
				"device %d: more than %d elements in a sequence", (int)devs[i],
				INT32_MAX / 4);
		else if (rc)
			memscope_error_set(err, rc, NULL, 0, "stopped by the row callback (%s)",
				memscope_strerror(rc));
		e.stats->n_devices += e.stats->n_rows > before;
		seq_free(&qa);
		seq_free(&qb);
	}
	/* nothing matched: a profiler output's lack says why in its terms, else what is missing */
	for (i = 0; i < 2 && !rc && !e.stats->n_matched; i++)
		rc = memscope_compare_side_lacks(sides[i], level, err);
	if (!rc && !e.stats->n_matched)
		rc = nothing_in_common(sides, level, opts->step, reach, shared, st, err);
	/* without framework-pool rows every element is valued 0: a table that hides that */
	if (!rc && !base->n_pool_rows && !cmp->n_pool_rows)
		rc = memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, 0,
			"%s, %s: neither input has framework-pool rows (PTA, ATB, MINDSPORE or "
			"CUDA_CACHING) of a numbered device: every %s would be valued 0",
			base->name, cmp->name,
			level == MEMSCOPE_COMPARE_KERNEL ? "kernel launch"
			: level == MEMSCOPE_COMPARE_OP	 ? "op"
							 : "element");
out:
	free(devs);
	windows_free(&win[0]);
	windows_free(&win[1]);
	return rc;
}

int memscope_compare_side_profiler(const struct memscope_compare_side *s)
{
	return s->profiler;
}

enum memscope_compare_metric memscope_compare_default_metric(
	const struct memscope_compare_side *base, const struct memscope_compare_side *cmp,
	unsigned level)
{
	return (level == 0 || level == MEMSCOPE_COMPARE_OP) && (base->profiler || cmp->profiler)
		       ? MEMSCOPE_METRIC_DELTA
		       : MEMSCOPE_METRIC_REFERENCE;
}

/* ---- the analysis interface (memscope/analysis.h): one side, fed one input ---- */

static int side_feed(void *self, const struct memscope_event *ev)
{
	return memscope_compare_side_add(self, ev);
}

static int side_finish(void *self)
{
	(void)self;
	return 0;
}

const struct memscope_analysis memscope_compare_side_analysis = {
	.name = "compare-side",
	.feed = side_feed,
	.finish = side_finish,
};
