/* Memory by allocation site: weights per path (call stack, owner tag, op) for the flame graph
 * exporters. */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "analysis_impl.h"
#include "opnames.h"
#include "../writers/report.h"
#include "memscope/blocks.h"
#include "memscope/flame.h"
#include "memscope/leaks.h"
#include "memscope/strtab.h"
#include "memscope/timeline.h"

/* a block for the peak: where it lived and what it weighs */
struct prec {
	struct memscope_pos alloc, free; /* free.ts_ns UINT64_MAX: never freed */
	uint64_t pid, tid;
	int64_t size;
	uint32_t src, path; /* path 0 when grouped by op (found at finish) */
	int32_t device;
	uint16_t pool;
	uint16_t own_op; /* path is the op its MALLOC names, whatever the grouping */
};

/* Grouped by op: an op's start or end, or a weight for the ops open on its thread then. */
struct oprec {
	struct memscope_pos at;
	uint64_t pid, tid;
	uint64_t weight;    /* OPR_WEIGHT */
	uint32_t src, name; /* OPR_BEGIN, OPR_END: the op's name */
	uint16_t pool;	    /* OPR_WEIGHT: the block's pool */
	uint8_t kind;	    /* enum oprec_kind: at one position, starts, then weights, then ends */
	uint8_t metric;	    /* OPR_WEIGHT */
	uint32_t seq;	    /* the order it came in (wraps: only ties of one position use it) */
};

enum oprec_kind { OPR_BEGIN, OPR_WEIGHT, OPR_END };

/* Ops open deeper than this on one thread are not frames (a hostile input's starts without ends
 * would make every path as long as the file); they are still matched with their ends. */
#define OP_DEPTH 64

/* Where a weight counts: an input (0 when the inputs are not apart) and a pool. The pools counted
 * are known only at finish (memscope_pools_default of the pools an input had blocks in), so the
 * weights are kept per pool until then. */
struct wgroup {
	uint32_t in;
	uint16_t pool;
};

struct memscope_flame {
	struct memscope_flame_opts o;
	unsigned group; /* what paths are made of: o.group, or by op after the fallback */
	int split;	/* a root frame per input */
	struct memscope_strtab *st;
	struct memscope_blocks *blocks; /* PEAK: pairing */
	struct memscope_timeline *tl;	/* PEAK: live bytes over time */
	const struct memscope_leaks
		*leaks; /* LEAKED: the exit check of memscope-leaks (borrowed) */
	struct u64map weight[MEMSCOPE_FLAME_N_METRICS]; /* (wgroup << 32 | path) -> weight */
	struct u64map by_stacks;			/* (stack_py << 32 | stack_c) -> path */
	struct u64map by_owner;				/* (owner << 16 | pool) -> path */
	struct u64map c_text;				/* C frame -> its text's string */
	struct u64map under_root; /* (input << 32 | path) -> the path under its root frame */
	struct u64map first_ts;	  /* src -> the time of its earliest row of any kind */
	uint32_t *roots;	  /* split: the root frame of each of o.n_inputs inputs */
	struct wgroup *groups;
	size_t n_groups, cap_groups;
	struct u64map group_of; /* (in << 16 | pool) -> its wgroup */
	uint64_t last_key;	/* of the last wgroup looked up (n_groups 0: none) */
	uint32_t last_group;
	uint64_t *seen; /* per input (as wgroup.in): the pools it had MALLOC or FREE rows in */
	size_t n_seen, cap_seen;
	uint64_t counted;     /* after finish: the pools counted, of every input */
	int nested;	      /* after finish: an input's counted pools are nested */
	int seen_path;	      /* grouped by stack: a path of a stack or owner tag was made */
	int collect_ops;      /* grouped by stack: op rows kept for the fallback to op */
	uint64_t n_op_starts; /* op start rows kept */
	uint64_t n_own_ops;   /* MALLOCs that name their op (memscope_event_op) */
	uint32_t *frames;
	size_t cap_frames;
	struct prec *recs;
	size_t n_recs, cap_recs;
	struct oprec *ops; /* grouped by op */
	size_t n_ops, cap_ops;
	struct memscope_flame_ops op_stats;
	struct memscope_flame_entry *entries[MEMSCOPE_FLAME_N_METRICS];
	size_t n_entries[MEMSCOPE_FLAME_N_METRICS];
	uint64_t total[MEMSCOPE_FLAME_N_METRICS];
	struct memscope_flame_peak peak;
};

void memscope_flame_opts_init(struct memscope_flame_opts *o)
{
	o->metrics = 1u << MEMSCOPE_FLAME_ALLOCATED;
	o->group = MEMSCOPE_FLAME_BY_STACK;
	o->stacks = MEMSCOPE_FLAME_PYTHON | MEMSCOPE_FLAME_C;
	o->pools = 0;
	o->merge = 0;
	o->inputs = NULL;
	o->n_inputs = 0;
}

const char *memscope_flame_metric_name(unsigned metric)
{
	static const char *const names[MEMSCOPE_FLAME_N_METRICS] = { "allocated", "peak", "leaked",
		"count" };

	return metric < MEMSCOPE_FLAME_N_METRICS ? names[metric] : NULL;
}

static int wants(const struct memscope_flame *f, unsigned metric)
{
	return (f->o.metrics >> metric) & 1;
}

struct memscope_flame *memscope_flame_new(
	const struct memscope_flame_opts *o, struct memscope_strtab *st)
{
	struct memscope_flame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	if (o)
		f->o = *o;
	else
		memscope_flame_opts_init(&f->o);
	if (!f->o.stacks)
		f->o.stacks = MEMSCOPE_FLAME_PYTHON | MEMSCOPE_FLAME_C;
	f->group = f->o.group;
	f->split = !f->o.merge && f->o.n_inputs > 1;
	f->collect_ops = f->group == MEMSCOPE_FLAME_BY_STACK;
	f->st = st;
	if (wants(f, MEMSCOPE_FLAME_PEAK) &&
		(!(f->blocks = memscope_blocks_new(st)) ||
			!(f->tl = memscope_timeline_new(f->o.pools, 1, st))))
		goto fail;
	return f;
fail:
	memscope_flame_free(f);
	return NULL;
}

void memscope_flame_free(struct memscope_flame *f)
{
	unsigned m;

	if (!f)
		return;
	memscope_blocks_free(f->blocks);
	memscope_timeline_free(f->tl);
	for (m = 0; m < MEMSCOPE_FLAME_N_METRICS; m++) {
		ms__u64map_free(&f->weight[m]);
		free(f->entries[m]);
	}
	ms__u64map_free(&f->by_stacks);
	ms__u64map_free(&f->by_owner);
	ms__u64map_free(&f->c_text);
	ms__u64map_free(&f->under_root);
	ms__u64map_free(&f->first_ts);
	free(f->roots);
	ms__u64map_free(&f->group_of);
	free(f->groups);
	free(f->seen);
	free(f->frames);
	free(f->recs);
	free(f->ops);
	free(f);
}

static int push_frame(struct memscope_flame *f, size_t *n, uint32_t id)
{
	if (ms__grow_array(&f->frames, &f->cap_frames, *n + 1, sizeof(*f->frames)))
		return MEMSCOPE_E_NOMEM;
	f->frames[(*n)++] = id;
	return 0;
}

/* The string of C frame id as memscope_frame_text writes it into *text, once per frame. */
static int c_frame(struct memscope_flame *f, uint32_t id, uint32_t *text)
{
	uint64_t a, unused;

	if (ms__u64map_get(&f->c_text, id, &a, &unused)) {
		*text = (uint32_t)a;
		return 0;
	}
	return memscope_strtab_frame_text(f->st, id, text) ||
			       ms__u64map_put(&f->c_text, id, *text, 0)
		       ? MEMSCOPE_E_NOMEM
		       : 0;
}

/* The frames of a dump stack (innermost first) appended root first, C frames (c) as
 * memscope_frame_text writes them; empty frames dropped. */
static int add_stack(struct memscope_flame *f, size_t *n, uint32_t stack, int c)
{
	size_t k, len;
	const uint32_t *fr = memscope_strtab_stack(f->st, stack, &k);
	uint32_t id;
	int rc = 0;

	while (fr && k-- && !rc) {
		id = fr[k];
		if (c && (rc = c_frame(f, fr[k], &id)))
			break;
		if (memscope_strtab_str(f->st, id, &len) && len)
			rc = push_frame(f, n, id);
	}
	return rc;
}

/* The owner tag's levels, outermost first ("PTA@model@weight": PTA, model, weight). */
static int add_owner(struct memscope_flame *f, size_t *n, uint32_t owner)
{
	size_t len;
	const char *s = memscope_strtab_str(f->st, owner, &len), *end, *at;
	uint32_t id;
	int rc = 0;

	for (end = s + len; s && s < end && !rc; s = at + 1) {
		at = memchr(s, '@', (size_t)(end - s));
		if (!at)
			at = end;
		if (at > s)
			rc = memscope_strtab_intern(f->st, s, (size_t)(at - s), &id) ||
			     push_frame(f, n, id);
	}
	return rc ? MEMSCOPE_E_NOMEM : 0;
}

/* "[PTA, no stack]": the one frame of a block with nothing to group it by. */
static int add_placeholder(struct memscope_flame *f, size_t *n, unsigned pool)
{
	char tmp[64];
	const char *p = memscope_subtype_name(pool);
	static const char *const what[] = { "stack", "owner", "op" };
	int len = snprintf(tmp, sizeof(tmp), "[%s, no %s]", p ? p : "memory",
		what[f->group <= MEMSCOPE_FLAME_BY_OP ? f->group : 0]);
	uint32_t id;

	if (memscope_strtab_intern(f->st, tmp, (size_t)len, &id))
		return MEMSCOPE_E_NOMEM;
	return push_frame(f, n, id);
}

/* Grouped by stack, a path of a stack or owner tag was made: the op rows kept for the fallback to
 * op go. */
static void seen_path(struct memscope_flame *f)
{
	f->seen_path = 1;
	if (f->collect_ops) {
		f->collect_ops = 0;
		free(f->ops);
		f->ops = NULL;
		f->n_ops = f->cap_ops = 0;
	}
}

/* The path of a block whose MALLOC names its op (memscope_event_op): that op, as the op grouping
 * makes it for one open op. */
static int own_op_path(struct memscope_flame *f, uint32_t op, uint32_t *path)
{
	size_t n = 0;

	return push_frame(f, &n, op) || memscope_strtab_intern_stack(f->st, f->frames, n, path)
		       ? MEMSCOPE_E_NOMEM
		       : 0;
}

/* The path of a block with these stacks, owner tag and pool, into *path (grouped by op: the
 * placeholder of pool). */
static int path_of(struct memscope_flame *f, uint32_t py, uint32_t c, uint32_t owner, unsigned pool,
	uint32_t *path)
{
	uint64_t key, a, unused;
	struct u64map *cache;
	size_t n = 0;
	int rc = 0;

	if (f->group == MEMSCOPE_FLAME_BY_STACK) {
		py = (f->o.stacks & MEMSCOPE_FLAME_PYTHON) ? py : 0;
		c = (f->o.stacks & MEMSCOPE_FLAME_C) ? c : 0;
	} else {
		py = c = 0;
		owner = f->group == MEMSCOPE_FLAME_BY_OP ? 0 : owner;
	}
	cache = py || c ? &f->by_stacks : &f->by_owner;
	key = py || c ? (uint64_t)py << 32 | c : (uint64_t)owner << 16 | pool;
	if (ms__u64map_get(cache, key, &a, &unused)) {
		*path = (uint32_t)a;
		return 0;
	}
	if (py)
		rc = add_stack(f, &n, py, 0);
	if (c && !rc)
		rc = add_stack(f, &n, c, 1);
	if (!n && owner && !rc)
		rc = add_owner(f, &n, owner);
	if (n && f->group == MEMSCOPE_FLAME_BY_STACK)
		seen_path(f);
	if (!n && !rc)
		rc = add_placeholder(f, &n, pool);
	if (rc || memscope_strtab_intern_stack(f->st, f->frames, n, path) ||
		ms__u64map_put(cache, key, *path, 0))
		return MEMSCOPE_E_NOMEM;
	return 0;
}

static struct oprec *add_oprec(struct memscope_flame *f, uint32_t src, uint64_t pid, uint64_t tid,
	struct memscope_pos at, unsigned kind)
{
	struct oprec *r;

	if (ms__grow_array(&f->ops, &f->cap_ops, f->n_ops + 1, sizeof(*f->ops)))
		return NULL;
	r = &f->ops[f->n_ops++];
	*r = (struct oprec){ .at = at,
		.pid = pid,
		.tid = tid,
		.src = src,
		.kind = (uint8_t)kind,
		.seq = (uint32_t)f->n_ops };
	return r;
}

/* w of metric for the ops open on thread (src, pid, tid) at at, known at finish. */
static int add_op_weight(struct memscope_flame *f, unsigned metric, uint32_t src, uint64_t pid,
	uint64_t tid, struct memscope_pos at, unsigned pool, uint64_t w)
{
	struct oprec *r = w ? add_oprec(f, src, pid, tid, at, OPR_WEIGHT) : NULL;

	if (!w)
		return 0;
	if (!r)
		return MEMSCOPE_E_NOMEM;
	r->weight = w;
	r->pool = (uint16_t)pool;
	r->metric = (uint8_t)metric;
	return 0;
}

/* An ATen or ATB op's start or end row, grouped by op. */
static int add_op_row(struct memscope_flame *f, const struct memscope_event *ev)
{
	unsigned sub = ev->subtype, kind;
	uint32_t name = ev->name;
	struct oprec *r;
	size_t len;

	if (sub == MEMSCOPE_SUB_ATEN_START || sub == MEMSCOPE_SUB_ATB_START)
		kind = OPR_BEGIN;
	else if (sub == MEMSCOPE_SUB_ATEN_END || sub == MEMSCOPE_SUB_ATB_END)
		kind = OPR_END;
	else
		return 0;
	if (!memscope_strtab_str(f->st, ev->name, &len) || !len) {
		if (memscope_strtab_intern(f->st, "[unnamed op]", 12, &name))
			return MEMSCOPE_E_NOMEM;
	}
	if (!(r = add_oprec(f, ev->src, ev->pid, ev->tid, memscope_pos_of(ev), kind)))
		return MEMSCOPE_E_NOMEM;
	r->name = name;
	f->n_op_starts += kind == OPR_BEGIN;
	return 0;
}

/* Input src as a wgroup's input: 0 when the inputs are not apart. */
static uint32_t input_of(const struct memscope_flame *f, uint32_t src)
{
	return f->split ? src : 0;
}

/* The wgroup of (input, pool) into *g, made on first use. */
static int group_of(struct memscope_flame *f, uint32_t src, unsigned pool, uint32_t *g)
{
	uint32_t in = input_of(f, src);
	uint64_t key = (uint64_t)in << 16 | pool;
	size_t at;
	int rc;

	if (f->n_groups && key == f->last_key) {
		*g = f->last_group;
		return 0;
	}
	rc = ms__u64map_slot(&f->group_of, key, &f->groups, &f->n_groups, &f->cap_groups,
		sizeof(*f->groups), &at);
	if (rc < 0)
		return rc;
	if (rc)
		f->groups[at] = (struct wgroup){ in, (uint16_t)pool };
	f->last_key = key;
	*g = f->last_group = (uint32_t)at;
	return 0;
}

/* w more of metric on path, for input src's pool. */
static int add_weight(struct memscope_flame *f, unsigned metric, uint32_t src, unsigned pool,
	uint32_t path, uint64_t w)
{
	uint64_t cur = 0, unused, key;
	uint32_t g;

	if (!w)
		return 0;
	if (group_of(f, src, pool, &g))
		return MEMSCOPE_E_NOMEM;
	key = (uint64_t)g << 32 | path;
	ms__u64map_get(&f->weight[metric], key, &cur, &unused);
	if (__builtin_add_overflow(cur, w, &cur))
		cur = UINT64_MAX;
	return ms__u64map_put(&f->weight[metric], key, cur, 0);
}

/* Input src had a MALLOC or FREE row in pool. */
static int saw_pool(struct memscope_flame *f, uint32_t src, unsigned pool)
{
	uint32_t in = input_of(f, src);

	if (in >= f->n_seen) {
		if (ms__grow_array(&f->seen, &f->cap_seen, (size_t)in + 1, sizeof(*f->seen)))
			return MEMSCOPE_E_NOMEM;
		memset(f->seen + f->n_seen, 0, ((size_t)in + 1 - f->n_seen) * sizeof(*f->seen));
		f->n_seen = (size_t)in + 1;
	}
	f->seen[in] |= MEMSCOPE_POOL_BIT(pool);
	return 0;
}

/* The pools counted for input in (as wgroup.in): those asked for, or the default of those it
 * had MALLOC or FREE rows in (as the timeline's). */
static uint64_t pools_of(const struct memscope_flame *f, uint32_t in)
{
	uint64_t seen = in < f->n_seen ? f->seen[in] : 0;

	return f->o.pools ? f->o.pools & seen : memscope_pools_default(seen);
}

/* Whether pool's blocks of input src count. */
static int counts(const struct memscope_flame *f, uint32_t src, unsigned pool)
{
	return pool < 64 && (pools_of(f, input_of(f, src)) >> pool) & 1;
}

/* A block for the peak; end is where it stopped being live (NULL: never). */
static int record_block(
	struct memscope_flame *f, const struct memscope_block *b, const struct memscope_pos *end)
{
	struct prec *r;
	uint32_t path;

	if (b->size <= 0)
		return 0;
	/* grouped by op, the path of a block without its own op is made at the peak */
	path = 0;
	if ((b->op && own_op_path(f, b->op, &path)) ||
		(!b->op && f->group != MEMSCOPE_FLAME_BY_OP &&
			path_of(f, b->stack_py, b->stack_c, b->owner, b->pool, &path)) ||
		ms__grow_array(&f->recs, &f->cap_recs, f->n_recs + 1, sizeof(*f->recs)))
		return MEMSCOPE_E_NOMEM;
	r = &f->recs[f->n_recs++];
	r->alloc = (struct memscope_pos){ b->alloc_ts_ns, b->alloc_event_id };
	r->free = end ? *end : (struct memscope_pos){ UINT64_MAX, UINT64_MAX };
	r->pid = b->pid;
	r->tid = b->tid;
	r->size = b->size;
	r->src = b->src;
	r->path = path;
	r->device = b->device;
	r->pool = b->pool;
	r->own_op = b->op != 0;
	return 0;
}

/* The allocated and count weights of a MALLOC row: on its path, and on the ops open then (grouped
 * by op, or by stack while the op rows are kept for the fallback). */
static int add_malloc(struct memscope_flame *f, const struct memscope_event *ev)
{
	static const unsigned metric[2] = { MEMSCOPE_FLAME_ALLOCATED, MEMSCOPE_FLAME_COUNT };
	const uint64_t w[2] = {
		(ev->flags & MEMSCOPE_EV_SIZE) && ev->size > 0 ? (uint64_t)ev->size : 0, 1
	};
	const struct memscope_attr *a;
	uint32_t owner = 0, path = 0, op = memscope_event_op(ev);
	int k, rc = 0, by_op = f->group == MEMSCOPE_FLAME_BY_OP;

	if (op) { /* its op is known now: no op rows to wait for */
		if (own_op_path(f, op, &path))
			return MEMSCOPE_E_NOMEM;
		/* (not a path of a stack or owner tag: without those, the graph is by op) */
		f->n_own_ops++;
		for (k = 0; k < 2 && !rc; k++)
			if (wants(f, metric[k]))
				rc = add_weight(f, metric[k], ev->src, ev->pool, path, w[k]);
		return rc ? MEMSCOPE_E_NOMEM : 0;
	}
	if (!by_op && (((a = memscope_event_attr(ev, MEMSCOPE_STR_OWNER)) && a->val_len &&
			       memscope_strtab_intern(f->st, a->val, a->val_len, &owner)) ||
			      path_of(f, ev->stack_py, ev->stack_c, owner, ev->pool, &path)))
		return MEMSCOPE_E_NOMEM;
	for (k = 0; k < 2 && !rc; k++) {
		if (!wants(f, metric[k]))
			continue;
		if (!by_op)
			rc = add_weight(f, metric[k], ev->src, ev->pool, path, w[k]);
		if ((by_op || f->collect_ops) && !rc)
			rc = add_op_weight(f, metric[k], ev->src, ev->pid, ev->tid,
				memscope_pos_of(ev), ev->pool, w[k]);
	}
	return rc ? MEMSCOPE_E_NOMEM : 0;
}

int memscope_flame_feed(struct memscope_flame *f, const struct memscope_event *ev)
{
	struct memscope_block out;
	uint64_t first, unused;
	int r;

	if ((!ms__u64map_get(&f->first_ts, ev->src, &first, &unused) || ev->ts_ns < first) &&
		ms__u64map_put(&f->first_ts, ev->src, ev->ts_ns, 0))
		return MEMSCOPE_E_NOMEM;
	if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH &&
		(f->group == MEMSCOPE_FLAME_BY_OP || f->collect_ops))
		return add_op_row(f, ev);
	if ((ev->kind != MEMSCOPE_KIND_MALLOC && ev->kind != MEMSCOPE_KIND_FREE) || !ev->pool ||
		ev->pool >= 64 || (f->o.pools && !(f->o.pools & MEMSCOPE_POOL_BIT(ev->pool))))
		return 0;
	if (saw_pool(f, ev->src, ev->pool))
		return MEMSCOPE_E_NOMEM;
	/* (while the op rows are kept, every MALLOC's path is made: the first of a stack or owner
	 * tag ends the fallback to op, whatever the metrics) */
	if (ev->kind == MEMSCOPE_KIND_MALLOC &&
		(wants(f, MEMSCOPE_FLAME_ALLOCATED) || wants(f, MEMSCOPE_FLAME_COUNT) ||
			f->collect_ops) &&
		add_malloc(f, ev))
		return MEMSCOPE_E_NOMEM;
	if (!f->blocks)
		return 0;
	/* the timeline finds the peak's moment, the blocks say which were live then */
	if (memscope_timeline_feed(f->tl, ev))
		return MEMSCOPE_E_NOMEM;
	r = memscope_blocks_feed(f->blocks, ev, &out);
	if (r < 0)
		return r;
	if (r == MEMSCOPE_PAIR_FREE || r == MEMSCOPE_PAIR_SHADOW_FREE ||
		r == MEMSCOPE_PAIR_REPLACED) {
		struct memscope_pos end = memscope_pos_of(ev);

		return record_block(f, &out, &end);
	}
	return 0;
}

static int on_live(void *ctx, const struct memscope_block *b)
{
	return record_block(ctx, b, NULL);
}

/* The peak: the timeline's highest moment of a pool counted (the first of the highest, in the
 * timeline's order); its weights are the blocks of that (input, process, device, pool) live
 * then. */
static int find_peak(struct memscope_flame *f)
{
	const struct memscope_timeline_point *pk = NULL, *pt;
	size_t k, n;
	int64_t best = 0;
	uint64_t unused;
	int rc = memscope_timeline_finish(f->tl);

	if (rc)
		return rc;
	pt = memscope_timeline_points(f->tl, &n);
	for (k = 0; k < n; k++)
		if (pt[k].kind == MEMSCOPE_TL_LIVE && pt[k].value > best &&
			counts(f, pt[k].src, pt[k].pool)) {
			best = pt[k].value;
			pk = &pt[k];
		}
	if (!pk)
		return 0;
	f->peak = (struct memscope_flame_peak){ 1, pk->src, pk->pid, pk->device, pk->pool,
		pk->at.ts_ns, (uint64_t)pk->value, pk->at.ts_ns };
	ms__u64map_get(&f->first_ts, pk->src, &f->peak.origin_ns, &unused);
	for (k = 0; k < f->n_recs && !rc; k++) {
		const struct prec *r = &f->recs[k];

		if (r->src == pk->src && r->pid == pk->pid && r->device == pk->device &&
			r->pool == pk->pool && memscope_pos_cmp(r->alloc, pk->at) <= 0 &&
			memscope_pos_cmp(r->free, pk->at) > 0)
			rc = f->group == MEMSCOPE_FLAME_BY_OP && !r->own_op
				     ? add_op_weight(f, MEMSCOPE_FLAME_PEAK, r->src, r->pid, r->tid,
					       r->alloc, r->pool, (uint64_t)r->size)
				     : add_weight(f, MEMSCOPE_FLAME_PEAK, r->src, r->pool, r->path,
					       (uint64_t)r->size);
	}
	return rc;
}

static int add_leaks(struct memscope_flame *f)
{
	size_t i, n = memscope_leaks_count(f->leaks);
	uint32_t path;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		const struct memscope_leak *x = memscope_leaks_get(f->leaks, i);

		if (x->kind != MEMSCOPE_LEAK_EXIT || x->blk.size <= 0 ||
			!counts(f, x->blk.src, x->blk.pool))
			continue;
		if (x->blk.op)
			rc = own_op_path(f, x->blk.op, &path) ||
			     add_weight(f, MEMSCOPE_FLAME_LEAKED, x->blk.src, x->blk.pool, path,
				     (uint64_t)x->blk.size);
		else if (f->group == MEMSCOPE_FLAME_BY_OP)
			rc = add_op_weight(f, MEMSCOPE_FLAME_LEAKED, x->blk.src, x->blk.pid,
				x->blk.tid,
				(struct memscope_pos){ x->blk.alloc_ts_ns, x->blk.alloc_event_id },
				x->blk.pool, (uint64_t)x->blk.size);
		else
			rc = path_of(f, x->blk.stack_py, x->blk.stack_c, x->blk.owner, x->blk.pool,
				     &path) ||
			     add_weight(f, MEMSCOPE_FLAME_LEAKED, x->blk.src, x->blk.pool, path,
				     (uint64_t)x->blk.size);
	}
	return rc ? MEMSCOPE_E_NOMEM : 0;
}

static int cmp_oprec(const void *pa, const void *pb)
{
	const struct oprec *a = pa, *b = pb;
	int c = MS__CMP(a->src, b->src);

	c = c ? c : MS__CMP(a->pid, b->pid);
	c = c ? c : MS__CMP(a->tid, b->tid);
	c = c ? c : memscope_pos_cmp(a->at, b->at);
	c = c ? c : MS__CMP(a->kind, b->kind);
	return c ? c : MS__CMP(a->seq, b->seq);
}

/* The ops open on one thread (opnames.h) and the paths the outermost OP_DEPTH make (0: not made
 * yet). */
struct opstack {
	struct opnames ops;
	uint32_t path[OP_DEPTH];
};

/* The path of the open ops (the outermost OP_DEPTH of them). */
static int op_path(struct memscope_flame *f, struct opstack *s, uint32_t *path)
{
	size_t n = 0, k, top = s->ops.depth < OP_DEPTH ? s->ops.depth : OP_DEPTH;

	for (k = 0; !s->path[top - 1] && k < top; k++)
		if (push_frame(f, &n, s->ops.name[k]))
			return MEMSCOPE_E_NOMEM;
	if (n && memscope_strtab_intern_stack(f->st, f->frames, n, &s->path[top - 1]))
		return MEMSCOPE_E_NOMEM;
	*path = s->path[top - 1];
	return 0;
}

static int op_begin(struct opstack *s, uint32_t name)
{
	size_t depth = s->ops.depth;

	if (opnames_begin(&s->ops, name))
		return MEMSCOPE_E_NOMEM;
	if (depth < OP_DEPTH)
		s->path[depth] = 0;
	return 0;
}

/* Grouped by op: each thread's rows in time order (then in the order they came), and every
 * weight to the ops open then. */
static int weigh_by_op(struct memscope_flame *f)
{
	struct opstack s = { 0 };
	struct memscope_flame_ops *st = &f->op_stats;
	size_t i;
	uint32_t path;
	int rc = 0;

	if (f->n_ops)
		qsort(f->ops, f->n_ops, sizeof(*f->ops), cmp_oprec);
	for (i = 0; i < f->n_ops && !rc; i++) {
		const struct oprec *r = &f->ops[i];

		if (!i || r->src != r[-1].src || r->pid != r[-1].pid || r->tid != r[-1].tid) {
			/* the next thread starts with none open */
			st->unclosed += s.ops.depth;
			opnames_clear(&s.ops);
		}
		if (r->kind == OPR_BEGIN) {
			st->deep += s.ops.depth >= OP_DEPTH;
			rc = op_begin(&s, r->name);
		} else if (r->kind == OPR_END) {
			size_t closed = opnames_end(&s.ops, r->name);

			st->unmatched_ends += !closed;
			st->unclosed += closed > 1 ? closed - 1 : 0;
		} else if (counts(f, r->src, r->pool)) {
			rc = (s.ops.depth ? op_path(f, &s, &path)
					  : path_of(f, 0, 0, 0, r->pool, &path)) ||
			     add_weight(f, r->metric, r->src, r->pool, path, r->weight);
		}
	}
	st->unclosed += s.ops.depth;
	opnames_free(&s.ops);
	free(f->ops);
	f->ops = NULL;
	f->n_ops = f->cap_ops = 0;
	return rc ? MEMSCOPE_E_NOMEM : 0;
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct memscope_flame_entry *a = pa, *b = pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return (a->path > b->path) - (a->path < b->path);
}

/* The root frames of the inputs (memscope_flame_opts.inputs): the names that tell them apart
 * (ms__input_names). */
static int make_roots(struct memscope_flame *f)
{
	size_t n = f->o.n_inputs, i;
	const char **names = calloc(n ? n : 1, sizeof(*names));
	char *buf = NULL;
	int rc = MEMSCOPE_E_NOMEM;

	if (!names || !(f->roots = calloc(n ? n : 1, sizeof(*f->roots))) ||
		!(buf = ms__input_names(f->o.inputs, n, names)))
		goto out;
	for (i = 0; i < n; i++)
		if (memscope_strtab_intern(f->st, names[i], strlen(names[i]), &f->roots[i]))
			goto out;
	rc = 0;
out:
	free(buf);
	free(names);
	return rc;
}

/* path under input in's root frame, into *out (made once per (input, path)). */
static int root_path(struct memscope_flame *f, uint32_t in, uint32_t path, uint32_t *out)
{
	uint64_t key = (uint64_t)in << 32 | path, a, unused;
	const uint32_t *fr;
	size_t nf, n = 0, k;
	uint32_t root;
	char name[32];

	if (ms__u64map_get(&f->under_root, key, &a, &unused)) {
		*out = (uint32_t)a;
		return 0;
	}
	if (in < f->o.n_inputs)
		root = f->roots[in];
	else if (memscope_strtab_intern(
			 f->st, name, (size_t)snprintf(name, sizeof(name), "input %u", in), &root))
		return MEMSCOPE_E_NOMEM;
	fr = memscope_strtab_stack(f->st, path, &nf);
	if (push_frame(f, &n, root))
		return MEMSCOPE_E_NOMEM;
	for (k = 0; fr && k < nf; k++)
		if (push_frame(f, &n, fr[k]))
			return MEMSCOPE_E_NOMEM;
	if (memscope_strtab_intern_stack(f->st, f->frames, n, out) ||
		ms__u64map_put(&f->under_root, key, *out, 0))
		return MEMSCOPE_E_NOMEM;
	return 0;
}

/* The weights of metric of the pools counted, by the path they are drawn on (under their
 * input's root frame when the inputs are apart), heaviest first. */
static int make_entries(struct memscope_flame *f, unsigned m)
{
	const struct u64map *w = &f->weight[m];
	struct u64map sum = { 0 };
	size_t i, n = 0;
	uint64_t cur, unused;
	uint32_t path;
	int rc = 0;

	for (i = 0; w->n && i <= w->mask && !rc; i++) {
		const struct wgroup *g;

		if (!w->e[i].used)
			continue;
		g = &f->groups[w->e[i].key >> 32];
		path = (uint32_t)w->e[i].key;
		if (!((pools_of(f, g->in) >> g->pool) & 1))
			continue;
		if (f->split && (rc = root_path(f, g->in, path, &path)))
			break;
		cur = 0;
		ms__u64map_get(&sum, path, &cur, &unused);
		if (__builtin_add_overflow(cur, w->e[i].a, &cur))
			cur = UINT64_MAX;
		rc = ms__u64map_put(&sum, path, cur, 0);
	}
	if (!rc && sum.n && !(f->entries[m] = malloc(sum.n * sizeof(*f->entries[m]))))
		rc = MEMSCOPE_E_NOMEM;
	for (i = 0; !rc && sum.n && i <= sum.mask; i++) {
		if (!sum.e[i].used)
			continue;
		f->entries[m][n++] =
			(struct memscope_flame_entry){ (uint32_t)sum.e[i].key, sum.e[i].a };
		if (__builtin_add_overflow(f->total[m], sum.e[i].a, &f->total[m]))
			f->total[m] = UINT64_MAX;
	}
	if (n)
		qsort(f->entries[m], n, sizeof(*f->entries[m]), cmp_entry);
	f->n_entries[m] = n;
	ms__u64map_free(&sum);
	return rc ? MEMSCOPE_E_NOMEM : 0;
}

/* The fallback to op: the weights of metric on the "no stack" placeholders go (their blocks are
 * weighed again by the ops open then); those of MALLOCs that named their op stay, their paths
 * the same by op. 0 or MEMSCOPE_E_NOMEM. */
static int drop_placeholders(struct memscope_flame *f, unsigned metric)
{
	struct u64map kept = { 0 }, ph = { 0 }, *w = &f->weight[metric];
	uint64_t unused;
	size_t i;
	int rc = 0;

	/* (no path of a stack or owner tag was made: the paths cached are all placeholders) */
	for (i = 0; !rc && f->by_owner.n && i <= f->by_owner.mask; i++)
		if (f->by_owner.e[i].used)
			rc = ms__u64map_put(&ph, f->by_owner.e[i].a, 0, 0);
	for (i = 0; !rc && f->by_stacks.n && i <= f->by_stacks.mask; i++)
		if (f->by_stacks.e[i].used)
			rc = ms__u64map_put(&ph, f->by_stacks.e[i].a, 0, 0);
	for (i = 0; !rc && w->n && i <= w->mask; i++)
		if (w->e[i].used && !ms__u64map_get(&ph, (uint32_t)w->e[i].key, &unused, &unused))
			rc = ms__u64map_put(&kept, w->e[i].key, w->e[i].a, w->e[i].b);
	ms__u64map_free(&ph);
	if (rc) {
		ms__u64map_free(&kept);
		return MEMSCOPE_E_NOMEM;
	}
	ms__u64map_free(w);
	*w = kept;
	return 0;
}

int memscope_flame_finish(struct memscope_flame *f)
{
	unsigned m;
	size_t i;
	int rc = 0;

	/* grouped by stack, no MALLOC had a stack or owner tag: by op, when there are ops or
	 * MALLOCs that name theirs */
	if (f->collect_ops && (f->n_op_starts || f->n_own_ops)) {
		f->group = MEMSCOPE_FLAME_BY_OP;
		if ((rc = drop_placeholders(f, MEMSCOPE_FLAME_ALLOCATED)) ||
			(rc = drop_placeholders(f, MEMSCOPE_FLAME_COUNT)))
			return rc;
		ms__u64map_free(&f->by_owner); /* the "no stack" placeholders */
	} else if (f->collect_ops) {
		free(f->ops);
		f->ops = NULL;
		f->n_ops = f->cap_ops = 0;
	}
	f->collect_ops = 0;
	for (i = 0; i < f->n_seen; i++) {
		uint64_t c = pools_of(f, (uint32_t)i);

		f->counted |= c;
		f->nested |= memscope_pools_nested(c);
	}
	if (f->blocks && (rc = memscope_blocks_foreach_live(f->blocks, on_live, f)))
		return rc;
	if (f->blocks && (rc = find_peak(f)))
		return rc;
	if (wants(f, MEMSCOPE_FLAME_LEAKED) && (rc = f->leaks ? add_leaks(f) : MEMSCOPE_E_ARG))
		return rc;
	if (f->group == MEMSCOPE_FLAME_BY_OP && (rc = weigh_by_op(f)))
		return rc;
	if (f->split && (rc = make_roots(f)))
		return rc;
	for (m = 0; m < MEMSCOPE_FLAME_N_METRICS && !rc; m++)
		if (wants(f, m))
			rc = make_entries(f, m);
	return rc;
}

const struct memscope_flame_entry *memscope_flame_entries(
	const struct memscope_flame *f, unsigned metric, size_t *n, uint64_t *total)
{
	if (metric >= MEMSCOPE_FLAME_N_METRICS) {
		*n = 0;
		*total = 0;
		return NULL;
	}
	*n = f->n_entries[metric];
	*total = f->total[metric];
	return f->entries[metric];
}

const struct memscope_flame_peak *memscope_flame_peak(const struct memscope_flame *f)
{
	return &f->peak;
}

const struct memscope_flame_ops *memscope_flame_op_stats(const struct memscope_flame *f)
{
	return &f->op_stats;
}

unsigned memscope_flame_grouped_by(const struct memscope_flame *f)
{
	return f->group;
}

uint64_t memscope_flame_pools(const struct memscope_flame *f, uint64_t *left_out, int *nested)
{
	size_t i;

	if (left_out)
		for (*left_out = 0, i = 0; i < f->n_seen; i++)
			*left_out |= f->seen[i] & ~pools_of(f, (uint32_t)i);
	if (nested)
		*nested = f->nested;
	return f->counted;
}

const struct memscope_flame_opts *memscope_flame_opts(const struct memscope_flame *f)
{
	return &f->o;
}

const struct memscope_strtab *memscope_flame_strtab(const struct memscope_flame *f)
{
	return f->st;
}

void memscope_flame_leaks_opts(const struct memscope_flame_opts *o, struct memscope_leaks_opts *lo)
{
	memscope_leaks_opts_init(lo);
	lo->kinds = MEMSCOPE_LEAK_EXIT;
	lo->pools = o ? o->pools : 0;
}

void memscope_flame_use_leaks(struct memscope_flame *f, const struct memscope_leaks *l)
{
	f->leaks = l;
}

/* ---- the analysis interface (memscope/analysis.h) ---- */

ANALYSIS_CALLS(memscope_flame)
ANALYSIS_CREATE(memscope_flame)

/* the profiler's samples and static plans weigh no path */
ANALYSIS_TABLE(memscope_flame, "flame", .again = NULL,
	.skip_kinds = 1u << MEMSCOPE_KIND_COUNTER | 1u << MEMSCOPE_KIND_PLAN);
