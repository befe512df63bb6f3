/* The reference's step comparison: per-device op/kernel sequences, their values, and the greedy
 * Myers alignment. */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/compare.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"

enum row_what {
	W_OP = 1,     /* ATEN_END / ATB_END */
	W_KERNEL = 2, /* KERNEL_LAUNCH */
	W_PTA = 4,    /* a PTA pool row */
	W_MS = 8,     /* a MINDSPORE pool row */
	W_START = 16, /* ATEN_START / ATB_START */
	W_ATB = 32,   /* an ATB pool row */
	W_FREE = 64,  /* (with a pool bit) the row is a FREE */
	W_USED = 128, /* (with a pool bit) the row has `used` */
	W_POOLS = W_PTA | W_MS | W_ATB,
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
	int bad_name; /* an element name starting with = + - @: the reference drops the list */
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
	uint64_t first_line[2]; /* first PTA, MINDSPORE row (0: none) */
	uint64_t first_seq[2];
	struct memscope_steps *steps; /* the input's steps, for --step */
};

/* one process's span of the chosen step */
struct window {
	uint64_t pid, lo, hi; /* lo <= ts <= hi */
};

/* The spans of the chosen step of one input, and each pid's first span. */
struct windows {
	uint64_t step, n_steps; /* n_steps: the most any process has */
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
	u64map_free(&s->dev_at);
	memscope_steps_free(s->steps);
	free(s->name);
	free(s);
}

static struct cmp_dev *find_dev(struct memscope_compare_side *s, int32_t device)
{
	uint64_t at;

	return u64map_get(&s->dev_at, (uint32_t)device, &at, NULL) ? &s->devs[at] : NULL;
}

/* The device's rows, added when new. NULL on OOM. */
static struct cmp_dev *dev_of(struct memscope_compare_side *s, int32_t device)
{
	struct cmp_dev *d = find_dev(s, device);

	if (d)
		return d;
	if (grow_array(&s->devs, &s->cap_devs, s->n_devs + 1, sizeof(*s->devs)) ||
		u64map_put(&s->dev_at, (uint32_t)device, s->n_devs, 0))
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

	if (memscope_steps_feed(s->steps, ev) < 0)
		return MEMSCOPE_E_NOMEM;
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
	s->seq++;
	if (what & (W_PTA | W_MS)) {
		int f = what == W_MS;

		if (!s->first_line[f]) {
			s->first_line[f] = ev->line ? ev->line : 1;
			s->first_seq[f] = s->seq;
		}
	}
	/* rows without a numbered device are not compared (the reference skips N/A, host, cpu) */
	if (!what || ev->device < 0)
		return 0;
	if (!(d = dev_of(s, ev->device)) ||
		grow_array(&d->rows, &d->cap, d->n + 1, sizeof(*d->rows)))
		return MEMSCOPE_E_NOMEM;
	r = &d->rows[d->n++];
	r->ts = ev->ts_ns;
	r->seq = (uint32_t)s->seq;
	r->pid = (uint32_t)ev->pid;
	r->size = (ev->flags & MEMSCOPE_EV_SIZE) ? ev->size : 0;
	r->used = (ev->flags & MEMSCOPE_EV_USED) ? ev->used : 0;
	r->tid = (uint32_t)ev->tid;
	r->name = ev->name;
	if (what & W_POOLS) {
		what |= ev->kind == MEMSCOPE_KIND_FREE ? W_FREE : 0;
		what |= (ev->flags & MEMSCOPE_EV_USED) ? W_USED : 0;
	}
	r->what = what;
	return 0;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct cmp_row *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int add_window(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	struct windows *ws = ctx;
	struct memscope_pos start, end, next;
	uint64_t n = memscope_steps_count(p), lo, hi;
	int mstx = memscope_steps_source(p) == MEMSCOPE_STEPS_MSTX;

	(void)src;
	n -= !mstx && n; /* SYSTEM: the step still running has no STEP row */
	ws->n_steps = n > ws->n_steps ? n : ws->n_steps;
	if (n < ws->step)
		return 0;
	memscope_steps_start(p, ws->step, &start);
	if (mstx) {
		/* to its Range_end, else to the next step start, else to the end */
		lo = start.ts_ns;
		hi = memscope_steps_end(p, ws->step, &end)	    ? end.ts_ns
		     : memscope_steps_start(p, ws->step + 1, &next) ? next.ts_ns - !!next.ts_ns
								    : UINT64_MAX;
	} else {
		/* msmemscope.step() ends step n at its row and starts step n + 1 */
		memscope_steps_end(p, ws->step, &end);
		lo = ws->step == 1 ? 0 : start.ts_ns + 1;
		hi = end.ts_ns;
	}
	if (grow_array(&ws->w, &ws->cap, ws->n + 1, sizeof(*ws->w)))
		return MEMSCOPE_E_NOMEM;
	/* rows keep 32 bits of their pid: the first process with those bits decides */
	if (!u64map_get(&ws->by_pid, (uint32_t)pid, NULL, NULL) &&
		u64map_put(&ws->by_pid, (uint32_t)pid, ws->n, 0))
		return MEMSCOPE_E_NOMEM;
	ws->w[ws->n++] = (struct window){ (uint32_t)pid, lo, hi };
	return 0;
}

static void windows_free(struct windows *ws)
{
	free(ws->w);
	u64map_free(&ws->by_pid);
	memset(ws, 0, sizeof(*ws));
}

/* The processes' spans of step `step` into *ws (the caller frees it with windows_free, also on
 * failure), or MEMSCOPE_E_INVALID in err when there are none. */
static int step_windows(struct memscope_compare_side *s, uint64_t step, struct windows *ws,
	struct memscope_error *err)
{
	memset(ws, 0, sizeof(*ws));
	ws->step = step;
	if (memscope_steps_resolve(s->steps) || memscope_steps_foreach(s->steps, add_window, ws))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	if (ws->n)
		return 0;
	if (!ws->n_steps)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, s->name, 0,
			"no steps: neither mstx \"step start\" ranges nor SYSTEM STEP rows");
	return memscope_error_set(err, MEMSCOPE_E_INVALID, s->name, 0, "no step %llu: it has %llu",
		(unsigned long long)step, (unsigned long long)ws->n_steps);
}

/* Is r in its process's span (every row is when there are no spans)? */
static int in_windows(const struct cmp_row *r, const struct windows *ws)
{
	uint64_t at;

	if (!ws->w)
		return 1;
	if (!u64map_get(&ws->by_pid, r->pid, &at, NULL))
		return 0;
	return r->ts >= ws->w[at].lo && r->ts <= ws->w[at].hi;
}

/* The elements of one device: names and values, in timestamp order. */
struct seq {
	uint32_t *name;
	int64_t *value;
	uint16_t *event;
	size_t n;
};

static void seq_free(struct seq *q)
{
	free(q->name);
	free(q->value);
	free(q->event);
	memset(q, 0, sizeof(*q));
}

/*
 * An op START still waiting for its END, for the delta and peak metrics. Its END closes the
 * innermost open START of the same op on the same thread: the frames of one (thread, name) are a
 * stack, linked through `inner`. Its peak is the highest framework-pool `used` from its START to
 * its END: the `used` at START, or a sample taken since.
 */
struct frame {
	int64_t net0;  /* the process's net pool bytes at START */
	int64_t used0; /* the pool's `used` at START */
	uint64_t s0;   /* samples before START */
	size_t inner;  /* the next open frame of its (thread, name), or of the free list; + 1 */
};

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
	if (grow_array(&sm->idx, &sm->cap, sm->n + 1, sizeof(*sm->idx)) ||
		grow_array(&sm->val, &sm->cap_val, sm->n + 1, sizeof(*sm->val)))
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
	struct u64map top;     /* number << 32 | name -> its innermost open frame + 1 */
	uint64_t n_threads;
};

/* The key of (pid, tid, name) in frames.top; 0 and *key on success, else MEMSCOPE_E_NOMEM. */
static int frame_key(struct frames *fs, const struct cmp_row *r, int add, uint64_t *key)
{
	uint64_t t, thread = (uint64_t)r->pid << 32 | r->tid;

	if (!u64map_get(&fs->threads, thread, &t, NULL)) {
		if (!add) {
			*key = UINT64_MAX; /* no frame was opened on it */
			return 0;
		}
		t = fs->n_threads++;
		if (u64map_put(&fs->threads, thread, t, 0))
			return MEMSCOPE_E_NOMEM;
	}
	*key = t << 32 | r->name;
	return 0;
}

static int frame_open(
	struct frames *fs, const struct cmp_row *r, int64_t net0, int64_t used0, uint64_t s0)
{
	uint64_t key, inner = 0;
	size_t at;

	if (frame_key(fs, r, 1, &key))
		return MEMSCOPE_E_NOMEM;
	if (fs->free_head) {
		at = fs->free_head - 1;
		fs->free_head = fs->f[at].inner;
	} else {
		if (grow_array(&fs->f, &fs->cap, fs->n + 1, sizeof(*fs->f)))
			return MEMSCOPE_E_NOMEM;
		at = fs->n++;
	}
	u64map_get(&fs->top, key, &inner, NULL);
	if (u64map_put(&fs->top, key, at + 1, 0)) {
		fs->f[at].inner = fs->free_head;
		fs->free_head = at + 1;
		return MEMSCOPE_E_NOMEM;
	}
	fs->f[at] = (struct frame){ net0, used0, s0, (size_t)inner };
	fs->n_open++;
	return 0;
}

/* Close the innermost open frame of r's thread and name into *out: 1, 0 when none is open, or
 * MEMSCOPE_E_NOMEM. */
static int frame_close(struct frames *fs, const struct cmp_row *r, struct frame *out)
{
	uint64_t key, top = 0;
	size_t at;

	if (frame_key(fs, r, 0, &key))
		return MEMSCOPE_E_NOMEM;
	if (key == UINT64_MAX || !u64map_get(&fs->top, key, &top, NULL) || !top)
		return 0;
	at = (size_t)top - 1;
	*out = fs->f[at];
	u64map_put(&fs->top, key, fs->f[at].inner, 0); /* the key is there: no allocation */
	fs->f[at].inner = fs->free_head;
	fs->free_head = at + 1;
	fs->n_open--;
	return 1;
}

/* The delta or peak value of each element, in one forward pass over the device's rows. */
static int forward_values(const struct cmp_dev *d, unsigned level, uint32_t fw, int metric,
	const struct windows *win, struct seq *q, struct memscope_compare_stats *stats)
{
	struct frames fs = { 0 };
	struct samples sm = { 0 };
	struct u64map nets = { 0 }; /* pid -> its net pool bytes */
	size_t i, e = 0;
	int64_t cur_used = 0;
	int rc = MEMSCOPE_E_NOMEM, r_close;

	for (i = 0; i < d->n; i++) {
		const struct cmp_row *r = &d->rows[i];
		uint64_t net = 0;
		struct frame f;

		if (!in_windows(r, win))
			continue;
		u64map_get(&nets, r->pid, &net, NULL);
		if (r->what & W_POOLS) {
			/* legacy FREE sizes are negative; hostile sizes wrap instead of overflowing
			 */
			uint64_t sz = r->size < 0 ? 0 - (uint64_t)r->size : (uint64_t)r->size;

			net = (r->what & W_FREE) ? net - sz : net + sz;
			if (u64map_put(&nets, r->pid, net, 0))
				goto out;
			if ((r->what & fw) && (r->what & W_USED)) {
				cur_used = r->used;
				/* no open frame: no later END asks about the samples so far */
				if (!fs.n_open)
					sm.n = 0;
				if (sample_add(&sm, cur_used))
					goto out;
			}
		} else if (r->what & W_START) {
			if (frame_open(&fs, r, (int64_t)net, cur_used, sm.count))
				goto out;
		} else if (r->what & level) {
			int64_t val = metric == MEMSCOPE_METRIC_PEAK ? cur_used : 0, pk;

			if ((r_close = frame_close(&fs, r, &f)) < 0)
				goto out;
			if (!r_close) {
				stats->n_unmatched_end++;
			} else if (metric == MEMSCOPE_METRIC_DELTA) {
				val = (int64_t)(net - (uint64_t)f.net0);
			} else {
				val = f.used0;
				if (sample_max_since(&sm, f.s0, &pk) && pk > val)
					val = pk;
			}
			q->name[e] = r->name;
			q->value[e] = val;
			q->event[e++] = r->what == W_OP ? MEMSCOPE_KIND_OP_LAUNCH
							: MEMSCOPE_KIND_KERNEL_LAUNCH;
		}
	}
	stats->n_unmatched_start += fs.n_open;
	rc = 0;
out:
	free(fs.f);
	u64map_free(&fs.threads);
	u64map_free(&fs.top);
	free(sm.idx);
	free(sm.val);
	u64map_free(&nets);
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
	if (metric != MEMSCOPE_METRIC_REFERENCE) {
		int rc = forward_values(d, level, fw, metric, win, q, stats);

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

/* ids no string has, closing the two sequences so a snake stops without bounds checks */
#define SENTINEL_A UINT32_MAX
#define SENTINEL_B (UINT32_MAX - 1)
/* V's value for diagonals not reached yet: loses every comparison */
#define V_NONE (INT32_MIN / 2)
/* memory for direction bits before the diff keeps checkpoints instead */
#define DIFF_BYTES_DEFAULT ((size_t)64 << 20)

/* One (d, k) step: the direction taken (1: down), and V[k] updated. */
static inline int step(
	int32_t *v, const uint32_t *a, uint32_t n, const uint32_t *b, uint32_t m, int32_t k)
{
	int down = v[k - 1] < v[k + 1];
	int32_t x = down ? v[k + 1] : v[k - 1] + 1, y = x - k;

	if ((uint32_t)x <= n && (uint32_t)y <= m)
		while (a[x] == b[y])
			x++, y++;
	v[k] = x;
	return down;
}

/* the forward pass's inputs and its V array (v[k] for k in -max-1 .. max+1) */
struct fwd {
	const uint32_t *a, *b;
	int32_t n, m, kend, max;
	int32_t *v;
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

		if (grow_array(
			    &bt->row, &bt->row_cap, (size_t)(d - bt->d0) + 1, sizeof(*bt->row)) ||
			grow_array(&bt->w, &bt->cap, bt->n + words, sizeof(*bt->w)))
			return MEMSCOPE_E_NOMEM;
		bt->row[d - bt->d0] = w = bt->n;
		bt->n += words;
	}
	/* in the reference's k order: off the grid below, on it, above */
	for (k = -d; k < lo; k += 2)
		step(v, a, n, b, m, k);
	for (; k <= hi; k += 2) {
		int down = step(v, a, n, b, m, k);

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
		step(v, a, n, b, m, k);
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

/*
 * The reference's greedy forward Myers (msmemscope.md §4.5). At (d, k) it goes "down" (an
 * insertion, from diagonal k+1) when k == -d or (k != d and V[k-1] < V[k+1]), else "right" (a
 * deletion, from k-1), then follows the snake of equal names; the first d that reaches (n, m)
 * ends it. With V preset to V_NONE the edge rules are the plain comparison: V[-d-1] and V[d+1]
 * are never reached before iteration d. The path never leaves the grid and the search can only
 * end on diagonal n - m (a point past (n, m) costs more edits), so instead of the reference's
 * node per (d, k) one direction bit per (d, k) on the grid is kept; the path is walked back
 * from (n, m) and replayed forwards. When the bits would take more than `budget` bytes, V is
 * kept every K iterations instead (K doubling to keep those under budget / 2), and each
 * stretch is run again with bits while walking back: the same path in bounded memory, for
 * twice the time. a and b hold n + 1 and m + 1 ids, the last being SENTINEL_A / SENTINEL_B.
 * dirs gets D + 1 bytes (dirs[d] = 1: down at d), *D the edit distance. Caller frees *dirs.
 */
static int myers(const uint32_t *a, int64_t n64, const uint32_t *b, int64_t m64, size_t budget,
	unsigned char **dirs, int64_t *D)
{
	struct fwd f = { a, b, (int32_t)n64, (int32_t)m64, (int32_t)(n64 - m64),
		(int32_t)(n64 + m64 + 1), NULL };
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
		if (d % K)
			continue;
		if (grow_array(&snaps, &cap_snaps, n_snaps + 1, sizeof(*snaps)) ||
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
	r.has_base = ia >= 0;
	r.has_cmp = ib >= 0;
	if (r.has_base) {
		r.base = qa->value[ia];
		r.event = qa->event[ia];
		r.name = qa->name[ia];
	}
	if (r.has_cmp) {
		r.cmp = qb->value[ib];
		r.event = qb->event[ib];
		r.name = qb->name[ib];
	}
	base = r.has_base ? r.base : 0;
	cmp = r.has_cmp ? r.cmp : 0;
	if (__builtin_sub_overflow(cmp, base, &r.diff))
		r.diff = cmp; /* the reference's overflow guard */
	e->stats->n_rows++;
	e->stats->n_matched += r.has_base && r.has_cmp;
	e->stats->n_base_only += r.has_base && !r.has_cmp;
	e->stats->n_cmp_only += !r.has_base && r.has_cmp;
	if (__builtin_add_overflow(e->stats->total_diff, r.diff, &e->stats->total_diff))
		e->stats->total_diff = r.diff < 0 ? INT64_MIN : INT64_MAX;
	return e->fn(e->ctx, &r);
}

static int align(struct emit *e, struct seq *qa, struct seq *qb)
{
	static const uint32_t none_a[1] = { SENTINEL_A }, none_b[1] = { SENTINEL_B };
	unsigned char *dirs;
	int64_t D, d, x = 0, y = 0, n = (int64_t)qa->n, m = (int64_t)qb->n;
	int rc;

	if (n)
		qa->name[n] = SENTINEL_A;
	if (m)
		qb->name[m] = SENTINEL_B;
	rc = myers(n ? qa->name : none_a, n, m ? qb->name : none_b, m,
		e->diff_bytes ? e->diff_bytes : DIFF_BYTES_DEFAULT, &dirs, &D);

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
	int32_t *devs = NULL;
	size_t n_devs = 0, cap_devs = 0, i, j;
	uint32_t fw = 0;
	int rc = 0;

	memset(e.stats, 0, sizeof(*e.stats));
	memset(win, 0, sizeof(win));
	/* the framework pool: the first PTA or MINDSPORE row seen, base first (§4.2) */
	for (i = 0; i < 2 && !fw; i++) {
		const struct memscope_compare_side *s = sides[i];

		if (s->first_line[0] && (!s->first_line[1] || s->first_seq[0] < s->first_seq[1]))
			fw = W_PTA;
		else if (s->first_line[1])
			fw = W_MS;
	}
	for (i = 0; i < 2; i++) {
		int other = fw == W_PTA; /* index of the other pool in first_line */

		if (fw && sides[i]->first_line[other])
			return memscope_error_set(err, MEMSCOPE_E_INVALID, sides[i]->name,
				sides[i]->first_line[other],
				"%s pool row in a %s comparison: the inputs mix PyTorch and "
				"MindSpore",
				other ? "MINDSPORE" : "PTA", other ? "PTA" : "MINDSPORE");
	}
	if (fw == W_MS && (level & MEMSCOPE_COMPARE_OP))
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
			if (grow_array(&devs, &cap_devs, n_devs + 1, sizeof(*devs))) {
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
out:
	free(devs);
	windows_free(&win[0]);
	windows_free(&win[1]);
	return rc;
}

int memscope_compare_csv_header(FILE *out)
{
	static const char h[] = ",,,Base,Compare\nEvent,Name,Device Id,Allocated Memory(byte),"
				"Allocated Memory(byte),Diff Memory(byte)\n";

	return fputs(h, out) < 0 ? MEMSCOPE_E_IO : 0;
}

int memscope_compare_csv_row(
	FILE *out, const struct memscope_strtab *st, const struct memscope_compare_row *row)
{
	char base[24] = "N/A", cmp[24] = "N/A";
	const char *name = memscope_strtab_str(st, row->name, NULL);
	/* as the reference, but a name that would split the row is quoted (inner quotes as is) */
	const char *q = name && strpbrk(name, ",\r\n") ? "\"" : "";

	if (row->has_base)
		base[fmt_i64(base, row->base)] = '\0';
	if (row->has_cmp)
		cmp[fmt_i64(cmp, row->cmp)] = '\0';
	return fprintf(out, "%s,%s%s%s,%d,%s,%s,%lld\n", memscope_kind_name(row->event), q,
		       name ? name : "", q, (int)row->device, base, cmp, (long long)row->diff) < 0
		       ? MEMSCOPE_E_IO
		       : 0;
}
