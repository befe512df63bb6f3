/* Memory over time for a picture: live bytes per (input, process, device, pool), the peak, who
 * held the memory at the peak (by owner tag, else the op the MALLOC names, else the op open on its
 * thread, else the innermost frame), and the profiler's samples. */
#include <stdlib.h>
#include <string.h>

#include "../core/clocks.h"
#include "../core/internal.h"
#include "../core/u64map.h"
#include "analysis_impl.h"
#include "counters.h"
#include "live_series.h"
#include "opnames.h"
#include "window.h"
#include "memscope/blocks.h"
#include "memscope/memscope.h"
#include "memscope/peak.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"

/* A row kept for finish: a live change, or an op's start or end. */
enum rec_kind { R_LIVE, R_BEGIN, R_END };

struct rec {
	struct memscope_pos at;
	uint64_t pid, tid;
	int64_t value; /* R_LIVE: the change; after finish, its track's live bytes after it */
	uint32_t src;
	uint32_t ref;	/* R_LIVE: the block's number; R_BEGIN, R_END: the op's name */
	uint32_t track; /* R_LIVE, after finish: its track (NO_TRACK: its pool is not counted) */
	int32_t device;
	uint16_t pool;
	uint8_t kind; /* enum rec_kind */
};

#define NO_TRACK UINT32_MAX
/* who[] of a block: its owner's index, FINAL once the owner cannot change (an owner tag, or the
 * block's MALLOC or FREE was reached in time order) */
#define FINAL (UINT32_C(1) << 31)
/* An owner: what it is named by and its name. */
struct owner {
	uint32_t by, name;
};

/* An input's time: its first row of any kind (the origin of its times) and the last row of its
 * processes; PLAN rows have no time and are none of them. */
struct clock {
	uint64_t row0, end;
	int has_row, has;
	struct u64map procs; /* pid -> a: its first row, b: its last */
};

/* The window of one process, inclusive, absolute ns (memscope_peak_window). */
struct span {
	uint64_t lo, hi;
};

struct memscope_peak {
	struct memscope_peak_opts o;
	struct memscope_strtab *st;
	struct memscope_blocks *blocks;
	struct memscope_steps *steps;
	struct rec *recs;
	size_t n_recs, cap_recs;
	uint32_t *who; /* per block (its number): owner index | FINAL */
	size_t n_blocks, cap_who;
	struct owner *owners;
	size_t n_owners, cap_owners;
	struct u64map owner_of;	 /* (by << 32 | name) -> owner index */
	struct u64map by_stacks; /* (stack_py << 32 | stack_c) -> owner index, for the fallback */
	struct u64map none_of;	 /* pool -> owner index of "[POOL, no owner, op or stack]" */
	uint64_t *seen_of;	 /* per input: the pools with blocks */
	size_t cap_seen;
	uint64_t seen, counted; /* of every input */
	/* after finish */
	struct memscope_peak_track *tracks;
	size_t n_tracks, cap_tracks;
	size_t peak; /* index into recs of the peak's point; n_recs when none */
	struct memscope_peak_owner *at_peak;
	size_t n_at_peak;
	struct clock *clock; /* per input, [0, cap_clock): from feed */
	size_t cap_clock;
	struct counters ctr;	     /* the profiler's samples */
	struct clocks clocks;	     /* the clocks of the inputs' files */
	uint64_t axis_from, axis_to; /* memscope_peak_axis */
	long peak_track;	     /* memscope_peak_track_of_peak */
	int finished, cut;
};

void memscope_peak_opts_init(struct memscope_peak_opts *o)
{
	o->pools = 0;
}

struct memscope_peak *memscope_peak_new(
	const struct memscope_peak_opts *o, struct memscope_strtab *st)
{
	struct memscope_peak *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (o)
		p->o = *o;
	else
		memscope_peak_opts_init(&p->o);
	p->st = st;
	p->peak_track = -1;
	if (!(p->blocks = memscope_blocks_new(NULL)) || !(p->steps = memscope_steps_new(st)) ||
		ms__counters_init(&p->ctr, st)) {
		memscope_peak_free(p);
		return NULL;
	}
	return p;
}

void memscope_peak_free(struct memscope_peak *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->cap_clock; i++)
		ms__u64map_free(&p->clock[i].procs);
	ms__counters_free(&p->ctr);
	ms__clocks_free(&p->clocks);
	memscope_blocks_free(p->blocks);
	memscope_steps_free(p->steps);
	free(p->recs);
	free(p->who);
	free(p->owners);
	ms__u64map_free(&p->owner_of);
	ms__u64map_free(&p->by_stacks);
	ms__u64map_free(&p->none_of);
	free(p->tracks);
	free(p->at_peak);
	free(p->seen_of);
	free(p->clock);
	free(p);
}

static struct rec *add_rec(struct memscope_peak *p, const struct memscope_event *ev, unsigned kind)
{
	struct rec *r;

	if (ms__grow_array(&p->recs, &p->cap_recs, p->n_recs + 1, sizeof(*p->recs)))
		return NULL;
	r = &p->recs[p->n_recs++];
	*r = (struct rec){ .at = memscope_pos_of(ev),
		.pid = ev->pid,
		.tid = ev->tid,
		.src = ev->src,
		.ref = ev->name,
		.track = NO_TRACK,
		.device = ev->device,
		.pool = ev->pool,
		.kind = (uint8_t)kind };
	return r;
}

/* The index of the owner (by, name), made when new, into *ix. 0 or MEMSCOPE_E_NOMEM. */
static int owner_index(struct memscope_peak *p, unsigned by, uint32_t name, uint32_t *ix)
{
	uint64_t key = (uint64_t)by << 32 | name, a, unused;

	if (ms__u64map_get(&p->owner_of, key, &a, &unused)) {
		*ix = (uint32_t)a;
		return 0;
	}
	if (p->n_owners >= FINAL ||
		ms__grow_array(&p->owners, &p->cap_owners, p->n_owners + 1, sizeof(*p->owners)) ||
		ms__u64map_put(&p->owner_of, key, p->n_owners, 0))
		return MEMSCOPE_E_NOMEM;
	p->owners[p->n_owners] = (struct owner){ by, name };
	*ix = (uint32_t)p->n_owners++;
	return 0;
}

/* The owner of a block of pool with nothing to name it by. */
static int none_owner(struct memscope_peak *p, unsigned pool, uint32_t *ix)
{
	char tmp[64];
	const char *name = memscope_subtype_name(pool);
	uint64_t a, unused;
	uint32_t id;
	int len;

	if (ms__u64map_get(&p->none_of, pool, &a, &unused)) {
		*ix = (uint32_t)a;
		return 0;
	}
	len = snprintf(tmp, sizeof(tmp), "[%s, no owner, op or stack]", name ? name : "memory");
	if (memscope_strtab_intern(p->st, tmp, (size_t)len, &id) ||
		owner_index(p, MEMSCOPE_PEAK_BY_NONE, id, ix) ||
		ms__u64map_put(&p->none_of, pool, *ix, 0))
		return MEMSCOPE_E_NOMEM;
	return 0;
}

/* The innermost non-empty frame of a stack, 0 when it has none. */
static uint32_t top_frame(const struct memscope_strtab *st, uint32_t stack)
{
	size_t n, k, len;
	const uint32_t *fr = memscope_strtab_stack(st, stack, &n);

	for (k = 0; fr && k < n; k++)
		if (memscope_strtab_str(st, fr[k], &len) && len)
			return fr[k];
	return 0;
}

/* The owner of a block without an owner tag until its op is known: its innermost Python frame,
 * else its innermost C frame as people read it, else nothing. */
static int stack_owner(struct memscope_peak *p, const struct memscope_event *ev, uint32_t *ix)
{
	uint64_t key = (uint64_t)ev->stack_py << 32 | ev->stack_c, a, unused;
	uint32_t frame, id;
	int rc;

	if (ms__u64map_get(&p->by_stacks, key, &a, &unused)) {
		*ix = (uint32_t)a;
		return 0;
	}
	/* (stacks of empty frames name nothing: the pool's placeholder, not cached by stack) */
	if ((frame = top_frame(p->st, ev->stack_py)))
		rc = owner_index(p, MEMSCOPE_PEAK_BY_PYTHON, frame, ix);
	else if ((frame = top_frame(p->st, ev->stack_c)))
		rc = memscope_strtab_frame_text(p->st, frame, &id) ||
		     owner_index(p, MEMSCOPE_PEAK_BY_C, id, ix);
	else {
		return none_owner(p, ev->pool, ix);
	}
	if (rc || ms__u64map_put(&p->by_stacks, key, *ix, 0))
		return MEMSCOPE_E_NOMEM;
	return 0;
}

/* A new block: its number, its owner as far as the MALLOC row tells (final with an owner tag or
 * the op the MALLOC names, memscope_event_op, as memscope-leaks and the flame graph take it). */
static int new_block(struct memscope_peak *p, const struct memscope_event *ev, uint32_t *seq)
{
	const struct memscope_attr *a = memscope_event_attr(ev, MEMSCOPE_STR_OWNER);
	uint32_t ix, name, op = memscope_event_op(ev);
	int rc, final = (a && a->val_len) || op;

	if (p->n_blocks >= FINAL ||
		ms__grow_array(&p->who, &p->cap_who, p->n_blocks + 1, sizeof(*p->who)))
		return MEMSCOPE_E_NOMEM;
	if (a && a->val_len)
		rc = memscope_strtab_intern(p->st, a->val, a->val_len, &name) ||
		     owner_index(p, MEMSCOPE_PEAK_BY_OWNER, name, &ix);
	else if (op)
		rc = owner_index(p, MEMSCOPE_PEAK_BY_OP, op, &ix);
	else
		rc = stack_owner(p, ev, &ix);
	if (rc)
		return MEMSCOPE_E_NOMEM;
	p->who[p->n_blocks] = ix | (final ? FINAL : 0);
	*seq = (uint32_t)p->n_blocks++;
	return 0;
}

/* A block the map did not number (its MALLOC had no size attr, yet a size): owned by nothing. */
static int orphan_block(struct memscope_peak *p, unsigned pool, uint32_t *seq)
{
	uint32_t ix;

	if (p->n_blocks >= FINAL ||
		ms__grow_array(&p->who, &p->cap_who, p->n_blocks + 1, sizeof(*p->who)) ||
		none_owner(p, pool, &ix))
		return MEMSCOPE_E_NOMEM;
	p->who[p->n_blocks] = ix | FINAL;
	*seq = (uint32_t)p->n_blocks++;
	return 0;
}

/* The live-bytes changes of a MALLOC/FREE row (ms__live_changes), each with its block's number:
 * a block taken away its tag's, a new block a new one (tagged with it). */
static int add_live(struct memscope_peak *p, const struct memscope_event *ev)
{
	struct ms__live_change ch[2];
	struct rec *r;
	uint32_t seq;
	size_t n, k;
	int res = ms__live_changes(p->blocks, ev, ch, &n);

	if (res < 0)
		return res;
	for (k = 0; k < n; k++) {
		if (ch[k].bytes > 0) {
			if (new_block(p, ev, &seq))
				return MEMSCOPE_E_NOMEM;
			memscope_blocks_tag(p->blocks, (uint64_t)seq + 1);
		} else if (ch[k].tag) {
			seq = (uint32_t)(ch[k].tag - 1);
		} else if (orphan_block(p, ch[k].pool, &seq)) {
			return MEMSCOPE_E_NOMEM;
		}
		if (!(r = add_rec(p, ev, R_LIVE)))
			return MEMSCOPE_E_NOMEM;
		r->value = ch[k].bytes;
		r->device = ch[k].device;
		r->pool = ch[k].pool;
		r->ref = seq;
	}
	return 0;
}

int memscope_peak_feed(struct memscope_peak *p, const struct memscope_event *ev)
{
	unsigned sub = ev->subtype;
	struct memscope_event tmp;
	struct rec *r;
	size_t len;
	int rc;
	struct clock *k;
	uint64_t first, last;
	int64_t shift;

	/* a memory plan's block has no time: not a row of the input's times */
	if (ev->kind == MEMSCOPE_KIND_PLAN)
		return 0;
	/* a file recorded far apart: drawn on its input's first clock */
	if (!(ev = ms__clocks_event(&p->clocks, ev, &tmp, &shift)))
		return MEMSCOPE_E_NOMEM;
	if ((rc = memscope_steps_feed(p->steps, ev)) < 0)
		return rc;
	if (ms__grow_array(&p->clock, &p->cap_clock, (size_t)ev->src + 1, sizeof(*p->clock)))
		return MEMSCOPE_E_NOMEM;
	k = &p->clock[ev->src];
	if (!k->has_row || ev->ts_ns < k->row0)
		k->row0 = ev->ts_ns;
	k->has_row = 1;
	if (!ms__u64map_get(&k->procs, ev->pid, &first, &last)) {
		if (ms__u64map_put(&k->procs, ev->pid, ev->ts_ns, ev->ts_ns))
			return MEMSCOPE_E_NOMEM;
	} else if ((ev->ts_ns < first || ev->ts_ns > last) &&
		   ms__u64map_put(&k->procs, ev->pid, ev->ts_ns < first ? ev->ts_ns : first,
			   ev->ts_ns > last ? ev->ts_ns : last)) {
		return MEMSCOPE_E_NOMEM;
	}
	switch (ev->kind) {
	case MEMSCOPE_KIND_MALLOC:
	case MEMSCOPE_KIND_FREE:
		if (!ev->pool || ev->pool >= 64 ||
			(p->o.pools && !(p->o.pools & MEMSCOPE_POOL_BIT(ev->pool))))
			return 0;
		/* every MALLOC and FREE row notes its pool, as the timeline and the flame graph
		 * do, so the default pools (and the peak) are theirs */
		if (ms__grow_array(
			    &p->seen_of, &p->cap_seen, (size_t)ev->src + 1, sizeof(*p->seen_of)))
			return MEMSCOPE_E_NOMEM;
		p->seen_of[ev->src] |= MEMSCOPE_POOL_BIT(ev->pool);
		return add_live(p, ev);
	case MEMSCOPE_KIND_OP_LAUNCH:
		if (sub != MEMSCOPE_SUB_ATEN_START && sub != MEMSCOPE_SUB_ATB_START &&
			sub != MEMSCOPE_SUB_ATEN_END && sub != MEMSCOPE_SUB_ATB_END)
			return 0;
		if (!(r = add_rec(p, ev,
			      sub == MEMSCOPE_SUB_ATEN_START || sub == MEMSCOPE_SUB_ATB_START
				      ? R_BEGIN
				      : R_END)))
			return MEMSCOPE_E_NOMEM;
		if ((!memscope_strtab_str(p->st, ev->name, &len) || !len) &&
			memscope_strtab_intern(p->st, "[unnamed op]", 12, &r->ref))
			return MEMSCOPE_E_NOMEM;
		return 0;
	case MEMSCOPE_KIND_COUNTER:
		return ms__counters_feed(&p->ctr, ev, shift);
	default:
		return 0;
	}
}

/* ms__live_cmp: live changes before op rows of one position */
MS__LIVE_CMP_FN(cmp_rec, struct rec)

/* The pools counted of input src: those asked for, else memscope_pools_default of its own. */
static uint64_t counted_of(const struct memscope_peak *p, uint32_t src)
{
	if (p->o.pools)
		return p->o.pools;
	return memscope_pools_default(src < p->cap_seen ? p->seen_of[src] : 0);
}

/* The state of the sweep through one process's rows. */
struct sweep {
	struct ms__live_sums sums; /* the process's live bytes per (device, pool): its tracks' */
	struct u64map thread_of;   /* tid -> (stack, gen) */
	struct opnames *stacks;	   /* the threads' of this process: [0, n_stacks) */
	size_t n_stacks, cap_stacks;
	uint64_t gen;	    /* 1 + the process changes so far */
	size_t first_track; /* this process's first track */
	size_t proc_start;  /* its first row */
	size_t peak_start;  /* the first row of the peak's process */
	int64_t best;
};

/* The op stack of thread tid in this process, made empty when new with create (else NULL; NULL
 * on OOM). */
static struct opnames *thread_stack(struct sweep *s, uint64_t tid, int create)
{
	uint64_t ix, gen;

	if (ms__u64map_get(&s->thread_of, tid, &ix, &gen) && gen == s->gen)
		return &s->stacks[ix];
	if (!create)
		return NULL;
	if (ms__grow_array(&s->stacks, &s->cap_stacks, s->n_stacks + 1, sizeof(*s->stacks)) ||
		ms__u64map_put(&s->thread_of, tid, s->n_stacks, s->gen))
		return NULL;
	opnames_clear(&s->stacks[s->n_stacks]); /* another process's thread had it */
	return &s->stacks[s->n_stacks++];
}

/* Live change r applied to its track's live bytes (ms__live_sums), the track made when new: *t
 * its track, *after its live bytes after it. 0 or MEMSCOPE_E_NOMEM. */
static int track_add(
	struct memscope_peak *p, struct sweep *s, const struct rec *r, uint32_t *t, int64_t *after)
{
	size_t slot;
	int rc = ms__live_sums_add(&s->sums, r->device, r->pool, r->value, after, &slot);

	if (rc <= 0) {
		/* the process's tracks are made in the order of its slots */
		*t = (uint32_t)(s->first_track + slot);
		return rc;
	}
	if (p->n_tracks >= NO_TRACK ||
		ms__grow_array(&p->tracks, &p->cap_tracks, p->n_tracks + 1, sizeof(*p->tracks)))
		return MEMSCOPE_E_NOMEM;
	p->tracks[p->n_tracks] = (struct memscope_peak_track){ .src = r->src,
		.device = r->device,
		.pid = r->pid,
		.pool = r->pool,
		.first_ts_ns = r->at.ts_ns,
		.from_ts_ns = r->at.ts_ns };
	*t = (uint32_t)p->n_tracks++;
	return 0;
}

/* The last row of the process just swept ends its tracks. */
static void end_process(struct memscope_peak *p, struct sweep *s, size_t end)
{
	size_t t;

	for (t = s->first_track; end && t < p->n_tracks; t++)
		p->tracks[t].end_ts_ns = p->tracks[t].to_ts_ns = p->recs[end - 1].at.ts_ns;
	s->first_track = p->n_tracks;
}

/* An op row: opnames.h's rule. */
static int op_row(struct sweep *s, const struct rec *r)
{
	struct opnames *st = thread_stack(s, r->tid, 1);

	if (!st)
		return MEMSCOPE_E_NOMEM;
	if (r->kind == R_BEGIN)
		return opnames_begin(st, r->ref);
	opnames_end(st, r->ref);
	return 0;
}

/* A live change: its block's owner settled, its track's live bytes after it, the peaks. */
static int live_row(struct memscope_peak *p, struct sweep *s, size_t i)
{
	struct rec *r = &p->recs[i];
	struct memscope_peak_track *tr;
	struct opnames *st;
	uint32_t t, w, ix;
	int64_t cur;

	if (!(counted_of(p, r->src) & MEMSCOPE_POOL_BIT(r->pool)))
		return 0;
	if (!((w = p->who[r->ref]) & FINAL)) {
		/* the MALLOC (or a FREE before it, in a hostile input) settles the owner: the
		 * innermost op open on the MALLOC's thread, else the frame found at feed */
		st = r->value > 0 ? thread_stack(s, r->tid, 0) : NULL;
		if (st && st->depth) {
			if (owner_index(p, MEMSCOPE_PEAK_BY_OP, st->name[st->depth - 1], &ix))
				return MEMSCOPE_E_NOMEM;
			w = ix;
		}
		p->who[r->ref] = w | FINAL;
	}
	if (track_add(p, s, r, &t, &cur))
		return MEMSCOPE_E_NOMEM;
	tr = &p->tracks[t];
	tr->end_bytes = r->value = cur;
	tr->last_ts_ns = r->at.ts_ns;
	tr->n_points++;
	r->track = t;
	if (cur > tr->peak) {
		tr->peak = cur;
		tr->peak_at = r->at;
	}
	if (cur > s->best) {
		s->best = cur;
		p->peak = i;
		s->peak_start = s->proc_start;
	}
	return 0;
}

/* Who held the bytes of the peak's track at the peak: its changes from the start of its process
 * up to the peak, each applied once, by owner. */
static int owners_at_peak(struct memscope_peak *p, size_t start)
{
	const struct rec *pk = &p->recs[p->peak];
	int64_t *bytes = calloc(p->n_owners ? p->n_owners : 1, sizeof(*bytes)), prev = 0, d;
	int64_t *blocks = calloc(p->n_owners ? p->n_owners : 1, sizeof(*blocks));
	uint32_t o;
	size_t i, n = 0;
	int rc = MEMSCOPE_E_NOMEM;

	if (!bytes || !blocks)
		goto out;
	for (i = start; i <= p->peak; i++) {
		const struct rec *r = &p->recs[i];

		if (r->kind != R_LIVE || r->track != pk->track)
			continue;
		/* the change, from the live bytes before and after it */
		if (__builtin_sub_overflow(r->value, prev, &d))
			d = r->value > prev ? INT64_MAX : INT64_MIN;
		prev = r->value;
		o = p->who[r->ref] & ~FINAL;
		if (__builtin_add_overflow(bytes[o], d, &bytes[o]))
			bytes[o] = d > 0 ? INT64_MAX : INT64_MIN;
		blocks[o] += d > 0 ? 1 : d < 0 ? -1 : 0;
	}
	for (o = 0; o < p->n_owners; o++)
		n += bytes[o] > 0;
	if (!(p->at_peak = malloc((n ? n : 1) * sizeof(*p->at_peak))))
		goto out;
	for (o = 0; o < p->n_owners; o++)
		if (bytes[o] > 0)
			p->at_peak[p->n_at_peak++] =
				(struct memscope_peak_owner){ p->owners[o].name, p->owners[o].by,
					(uint64_t)bytes[o],
					blocks[o] > 0 ? (uint64_t)blocks[o] : 0 };
	rc = 0;
out:
	free(bytes);
	free(blocks);
	return rc;
}

/* The last row of process pid of input src (of any kind but PLAN); 0 when it had none. */
static uint64_t proc_last(const struct memscope_peak *p, uint32_t src, uint64_t pid)
{
	uint64_t first = 0, last = 0;

	if (src < p->cap_clock)
		ms__u64map_get(&p->clock[src].procs, pid, &first, &last);
	return last;
}

/* The inputs' ends and the time axis: from 0 to the longest time from an input's first row to
 * the last row of its processes (with live bytes or samples). */
static void clocks(struct memscope_peak *p)
{
	size_t i;

	for (i = 0; i < p->n_tracks + p->ctr.n; i++) {
		uint32_t src = i < p->n_tracks ? p->tracks[i].src : p->ctr.pub[i - p->n_tracks].src;
		uint64_t end = i < p->n_tracks ? p->tracks[i].end_ts_ns
					       : p->ctr.pub[i - p->n_tracks].end_ts_ns;
		struct clock *k = &p->clock[src]; /* fed: src < cap_clock */

		if (!k->has || end > k->end)
			k->end = end;
		k->has = 1;
	}
	p->axis_from = p->axis_to = 0;
	for (i = 0; i < p->cap_clock; i++)
		if (p->clock[i].has && p->clock[i].end - p->clock[i].row0 > p->axis_to)
			p->axis_to = p->clock[i].end - p->clock[i].row0;
}

/* A track and its place before sorting. */
struct track_at {
	struct memscope_peak_track t;
	uint32_t old;
};

static int cmp_track(const void *pa, const void *pb)
{
	const struct memscope_peak_track *a = &((const struct track_at *)pa)->t;
	const struct memscope_peak_track *b = &((const struct track_at *)pb)->t;
	int c = ms__track_cmp(a->src, a->pid, a->device, b->src, b->pid, b->device);

	if (c)
		return c;
	return (a->pool > b->pool) - (a->pool < b->pool);
}

/* The tracks in order of (input, process, device, pool), and the points' track numbers with
 * them. 0 or MEMSCOPE_E_NOMEM. */
static int sort_tracks(struct memscope_peak *p)
{
	struct track_at *ta = malloc((p->n_tracks ? p->n_tracks : 1) * sizeof(*ta));
	uint32_t *to = malloc((p->n_tracks ? p->n_tracks : 1) * sizeof(*to));
	size_t i;
	int rc = MEMSCOPE_E_NOMEM;

	if (!ta || !to)
		goto out;
	for (i = 0; i < p->n_tracks; i++)
		ta[i] = (struct track_at){ p->tracks[i], (uint32_t)i };
	if (p->n_tracks)
		qsort(ta, p->n_tracks, sizeof(*ta), cmp_track);
	for (i = 0; i < p->n_tracks; i++) {
		p->tracks[i] = ta[i].t;
		to[ta[i].old] = (uint32_t)i;
	}
	for (i = 0; i < p->n_recs; i++)
		if (p->recs[i].kind == R_LIVE && p->recs[i].track != NO_TRACK)
			p->recs[i].track = to[p->recs[i].track];
	rc = 0;
out:
	free(ta);
	free(to);
	return rc;
}

static int cmp_owner(const void *pa, const void *pb)
{
	const struct memscope_peak_owner *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

int memscope_peak_finish(struct memscope_peak *p)
{
	struct sweep s = { .gen = 0 };
	size_t i;
	int rc = 0;

	for (i = 0; i < p->cap_seen; i++) {
		p->seen |= p->seen_of[i];
		p->counted |= counted_of(p, (uint32_t)i);
	}
	if (p->o.pools)
		p->counted = p->o.pools;
	p->peak = p->n_recs;
	if (memscope_steps_out_of_order(p->steps, NULL, NULL) && memscope_steps_resolve(p->steps))
		return MEMSCOPE_E_NOMEM;
	if (p->n_recs)
		ms__sort_rows(p->recs, p->n_recs, sizeof(*p->recs), cmp_rec);
	for (i = 0; i < p->n_recs && !rc; i++) {
		const struct rec *r = &p->recs[i];

		if (!i || r->src != r[-1].src || r->pid != r[-1].pid) {
			end_process(p, &s, i);
			s.gen++;
			ms__live_sums_process(&s.sums);
			s.n_stacks = 0;
			s.proc_start = i;
		}
		rc = r->kind == R_LIVE ? live_row(p, &s, i) : op_row(&s, r);
	}
	end_process(p, &s, p->n_recs);
	if (!rc)
		rc = sort_tracks(p);
	if (!rc && !(rc = ms__counters_finish(&p->ctr, p->st)))
		for (i = 0; i < p->ctr.n; i++)
			p->ctr.pub[i].end_ts_ns =
				proc_last(p, p->ctr.pub[i].src, p->ctr.pub[i].pid);
	if (!rc)
		clocks(p);
	p->peak_track = !rc && p->peak < p->n_recs ? (long)p->recs[p->peak].track : -1;
	if (!rc && p->peak < p->n_recs && !(rc = owners_at_peak(p, s.peak_start)) && p->n_at_peak)
		qsort(p->at_peak, p->n_at_peak, sizeof(*p->at_peak), cmp_owner);
	p->finished = !rc;
	ms__live_sums_free(&s.sums);
	ms__u64map_free(&s.thread_of);
	for (i = 0; i < s.cap_stacks; i++)
		opnames_free(&s.stacks[i]);
	free(s.stacks);
	return rc;
}

const struct memscope_peak_track *memscope_peak_tracks(const struct memscope_peak *p, size_t *n)
{
	*n = p->n_tracks;
	return p->tracks;
}

int memscope_peak_foreach_point(const struct memscope_peak *p,
	int (*fn)(void *ctx, const struct memscope_peak_point *pt), void *ctx)
{
	struct memscope_peak_point pt;
	size_t i;
	int rc;

	for (i = 0; i < p->n_recs; i++) {
		const struct rec *r = &p->recs[i];

		if (r->kind != R_LIVE || r->track == NO_TRACK)
			continue;
		pt = (struct memscope_peak_point){ r->at.ts_ns, r->value, r->track };
		if ((rc = fn(ctx, &pt)))
			return rc;
	}
	return 0;
}

uint64_t memscope_peak_origin(const struct memscope_peak *p, uint32_t src)
{
	return src < p->cap_clock && p->clock[src].has_row ? p->clock[src].row0 : 0;
}

void memscope_peak_axis(const struct memscope_peak *p, uint64_t *from_ns, uint64_t *to_ns)
{
	*from_ns = p->axis_from;
	*to_ns = p->axis_to;
}

uint64_t memscope_peak_pools(const struct memscope_peak *p, uint64_t *seen)
{
	if (seen)
		*seen = p->seen;
	return p->counted;
}

long memscope_peak_track_of_peak(const struct memscope_peak *p)
{
	return p->peak_track;
}

const struct memscope_peak_owner *memscope_peak_owners(const struct memscope_peak *p, size_t *n)
{
	*n = p->n_at_peak;
	return p->n_at_peak ? p->at_peak : NULL;
}

const struct memscope_counter_track *memscope_peak_counters(
	const struct memscope_peak *p, size_t *n)
{
	*n = p->finished ? p->ctr.n : 0;
	return p->finished ? p->ctr.pub : NULL;
}

long memscope_peak_samples_of(const struct memscope_peak *p, size_t k)
{
	const struct memscope_peak_track *t;
	size_t i;

	if (!p->finished || k >= p->n_tracks)
		return -1;
	t = &p->tracks[k];
	for (i = 0; i < p->ctr.n; i++) {
		const struct memscope_counter_track *c = &p->ctr.pub[i];

		if (c->subtype == MEMSCOPE_SUB_POOL_SAMPLE && c->pool == t->pool &&
			c->src == t->src && c->pid == t->pid && c->device == t->device &&
			(c->series & 1u << MEMSCOPE_CTR_USED))
			return (long)i;
	}
	return -1;
}

const struct memscope_steps *memscope_peak_steps(const struct memscope_peak *p)
{
	return p->steps;
}

int memscope_peak_clock_note(const struct memscope_peak *p, uint32_t src, char *buf, size_t n)
{
	return ms__clocks_note(&p->clocks, src, p->st, buf, n);
}

const struct memscope_strtab *memscope_peak_strtab(const struct memscope_peak *p)
{
	return p->st;
}

/* ---- the window (memscope_peak_window) ---- */

/* The time window of input src: memscope_timeline_window_ns from its first row. */
static int time_window(const struct memscope_peak *p, const struct memscope_timeline_window *w,
	uint32_t src, uint64_t *lo, uint64_t *hi)
{
	return memscope_timeline_window_ns(w, memscope_peak_origin(p, src), lo, hi);
}

/* Whether some process of input src has a step with a span, and step `step` with one. */
struct has_step {
	uint32_t src;
	uint64_t step;
	int any, found;
};

static int has_step(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *sp)
{
	struct has_step *h = ctx;
	uint64_t lo, hi, n = memscope_steps_count(sp);
	int open;

	(void)pid;
	if (src != h->src)
		return 0;
	/* SYSTEM: the step still running has no span */
	h->any |= n > (memscope_steps_source(sp) == MEMSCOPE_STEPS_SYSTEM);
	h->found |= memscope_steps_span(sp, h->step, &lo, &hi, &open);
	return 0;
}

/* Every input of a step window has that step in some process; else MEMSCOPE_E_INVALID. */
static int check_steps(const struct memscope_peak *p, uint64_t step, const char *const *inputs,
	size_t n_inputs, struct memscope_error *err)
{
	struct has_step h;
	size_t src;

	for (src = 0; src < n_inputs; src++) {
		h = (struct has_step){ (uint32_t)src, step, 0, 0 };
		memscope_steps_foreach(p->steps, has_step, &h);
		if (!h.any || !h.found)
			return ms__window_no_step(
				p->steps, (uint32_t)src, inputs[src], step, h.any, err);
	}
	return 0;
}

/* The window of process (src, pid) whose rows run from first to last: [*lo, *hi]. 1, or 0 when
 * nothing of it is in the window (*no_step set when it has no step w->step). */
static int proc_window(const struct memscope_peak *p, const struct memscope_timeline_window *w,
	uint32_t src, uint64_t pid, uint64_t first, uint64_t last, uint64_t *lo, uint64_t *hi,
	int *no_step)
{
	int open;

	*no_step = 0;
	if (w->step) {
		if (!memscope_steps_span(
			    memscope_steps_proc(p->steps, src, pid), w->step, lo, hi, &open)) {
			*no_step = 1;
			return 0;
		}
	} else {
		time_window(p, w, src, lo, hi);
	}
	return first <= *hi && last >= *lo;
}

/* Whether process (src, pid) has rows kept for finish (recs are by input and process). */
static int has_recs(const struct memscope_peak *p, uint32_t src, uint64_t pid)
{
	size_t a = 0, b = p->n_recs, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (p->recs[m].src < src || (p->recs[m].src == src && p->recs[m].pid < pid))
			a = m + 1;
		else
			b = m;
	}
	return a < p->n_recs && p->recs[a].src == src && p->recs[a].pid == pid;
}

/* The window's cut of the sample tracks: their process's window, from its rows of any kind. */
struct ctr_win {
	const struct memscope_peak *p;
	const struct memscope_timeline_window *w;
	uint64_t left_out;
	uint32_t src; /* the process asked last (asked: 1) */
	uint64_t pid;
	int asked;
};

/* counters_window_fn of memscope_peak_window. */
static int ctr_window(void *ctx, const struct memscope_counter_track *t, uint64_t *lo, uint64_t *hi)
{
	struct ctr_win *c = ctx;
	uint64_t first = 0, last = 0;
	int no_step, in;

	ms__u64map_get(
		&c->p->clock[t->src].procs, t->pid, &first, &last); /* fed: src < cap_clock */
	in = proc_window(c->p, c->w, t->src, t->pid, first, last, lo, hi, &no_step);
	/* a process with live bytes or ops was counted with them */
	if (no_step && (!c->asked || c->src != t->src || c->pid != t->pid) &&
		!has_recs(c->p, t->src, t->pid))
		c->left_out++;
	c->asked = 1;
	c->src = t->src;
	c->pid = t->pid;
	return in;
}

/* A track's state in a window. */
struct track_win {
	int64_t start, peak, end;
	struct memscope_pos peak_at;
	uint64_t first, last, n, from, to, proc_last;
	size_t start_rec, peak_rec; /* n_recs: none */
	int in;			    /* its process has rows in the window */
};

/* A window being cut: each track's state in it, the highest live bytes of all, the time axis. */
struct win_cut {
	const struct memscope_timeline_window *w;
	struct track_win *tw; /* per track */
	uint32_t *to;	      /* per track: its number among those kept, NO_TRACK: dropped */
	uint64_t left_out, from_axis, to_axis;
	int64_t best;
	size_t peak, peak_start; /* the peak's point (n_recs: none) and its process's first row */
	long peak_track;	 /* -1: none */
	int any;		 /* some process has rows in the window */
};

/* The window can be cut: once, after finish, a step or a time span, every input has the step,
 * no time window ends before it starts. 0 or a MEMSCOPE_E_* error set in err. */
static int window_check(const struct memscope_peak *p, const struct memscope_timeline_window *w,
	const char *const *inputs, size_t n_inputs, struct memscope_error *err)
{
	uint64_t lo, hi;
	uint32_t src;
	int rc;

	if ((rc = ms__window_can_cut(w, p->finished, p->cut, err)))
		return rc;
	if (w->step)
		return check_steps(p, w->step, inputs, n_inputs, err);
	for (src = 0; src < p->cap_clock && src < n_inputs; src++)
		if (p->clock[src].has_row && !time_window(p, w, src, &lo, &hi))
			return memscope_error_set(err, MEMSCOPE_E_ARG, inputs[src], 0,
				"the window ends before it starts (%llu ns to %llu ns)",
				(unsigned long long)lo, (unsigned long long)hi + 1);
	return 0;
}

/* Live bytes v of track k at row k_rec of the process from row start: the window's peak when
 * above all before. */
static void window_best(struct win_cut *c, int64_t v, size_t rec, size_t k, size_t start)
{
	if (v > c->best) {
		c->best = v;
		c->peak = rec;
		c->peak_track = (long)k;
		c->peak_start = start;
	}
}

/* The tracks of the process of rows [i, j) from *tc on (tracks and rows are in the same order)
 * in the window [lo, hi]: each starts with its live bytes at lo. */
static void window_tracks(const struct memscope_peak *p, struct win_cut *c, size_t i, size_t j,
	size_t *tc, uint64_t lo, uint64_t hi)
{
	const struct rec *r0 = &p->recs[i];
	uint64_t o = memscope_peak_origin(p, r0->src), last = p->recs[j - 1].at.ts_ns;

	for (; *tc < p->n_tracks && p->tracks[*tc].src == r0->src && p->tracks[*tc].pid == r0->pid;
		(*tc)++) {
		struct track_win *t = &c->tw[*tc];

		t->in = 1;
		t->from = lo > o ? lo : o;
		t->to = hi < last ? hi : last;
		t->proc_last = last;
		t->peak = t->end = t->start;
		t->peak_at = (struct memscope_pos){ t->from, 0 };
		t->peak_rec = t->start_rec;
		window_best(c, t->start, t->start_rec, *tc, i);
	}
}

/* One process, rows [i, j), its tracks from *tc: the live bytes at the window's start, then the
 * points in it. */
static void window_proc(
	const struct memscope_peak *p, struct win_cut *c, size_t i, size_t j, size_t *tc)
{
	const struct rec *r0 = &p->recs[i];
	uint64_t lo, hi;
	size_t k;
	int no_step;

	while (*tc < p->n_tracks &&
		(p->tracks[*tc].src < r0->src ||
			(p->tracks[*tc].src == r0->src && p->tracks[*tc].pid < r0->pid)))
		(*tc)++;
	if (!proc_window(p, c->w, r0->src, r0->pid, r0->at.ts_ns, p->recs[j - 1].at.ts_ns, &lo, &hi,
		    &no_step)) {
		c->left_out += no_step;
		return;
	}
	c->any = 1;
	for (k = i; k < j && p->recs[k].at.ts_ns < lo; k++)
		if (p->recs[k].kind == R_LIVE && p->recs[k].track != NO_TRACK) {
			c->tw[p->recs[k].track].start = p->recs[k].value;
			c->tw[p->recs[k].track].start_rec = k;
		}
	window_tracks(p, c, i, j, tc, lo, hi);
	for (; k < j && p->recs[k].at.ts_ns <= hi; k++) {
		const struct rec *r = &p->recs[k];
		struct track_win *t;

		if (r->kind != R_LIVE || r->track == NO_TRACK)
			continue;
		t = &c->tw[r->track];
		if (!t->n++)
			t->first = r->at.ts_ns;
		t->last = r->at.ts_ns;
		t->end = r->value;
		if (r->value > t->peak) {
			t->peak = r->value;
			t->peak_at = r->at;
			t->peak_rec = k;
		}
		window_best(c, r->value, k, r->track, i);
	}
}

/* Every process in (input, pid) order into the cut. */
static void window_sweep(const struct memscope_peak *p, struct win_cut *c)
{
	size_t i, j, tc = 0;

	for (i = 0; i < p->n_recs; i = j) {
		for (j = i; j < p->n_recs && p->recs[j].src == p->recs[i].src &&
			    p->recs[j].pid == p->recs[i].pid;
			j++)
			;
		window_proc(p, c, i, j, &tc);
	}
}

/* The owners at the window's peak, before the points outside it are dropped; on failure the
 * owners of the whole are kept. 0 or MEMSCOPE_E_NOMEM. */
static int window_owners(struct memscope_peak *p, const struct win_cut *c)
{
	struct memscope_peak_owner *old = p->at_peak;
	size_t old_n = p->n_at_peak;

	p->at_peak = NULL;
	p->n_at_peak = 0;
	p->peak = c->peak;
	if (c->peak < p->n_recs && owners_at_peak(p, c->peak_start)) {
		free(p->at_peak);
		p->at_peak = old;
		p->n_at_peak = old_n;
		return MEMSCOPE_E_NOMEM;
	}
	free(old);
	if (p->n_at_peak)
		qsort(p->at_peak, p->n_at_peak, sizeof(*p->at_peak), cmp_owner);
	return 0;
}

/* The axis takes in [from, to) of input src (absolute ns). */
static void window_axis(
	const struct memscope_peak *p, struct win_cut *c, uint32_t src, uint64_t from, uint64_t to)
{
	uint64_t o = memscope_peak_origin(p, src);

	if (from - o < c->from_axis)
		c->from_axis = from - o;
	if (to - o > c->to_axis)
		c->to_axis = to - o;
}

/* The tracks with something in the window (a point, or live bytes at its start), cut to it and
 * renumbered, and the points' track numbers with them. Returns how many are kept. */
static size_t window_keep(struct memscope_peak *p, struct win_cut *c)
{
	size_t i, k, n_kept = 0;

	for (k = 0; k < p->n_tracks; k++) {
		struct memscope_peak_track *t = &p->tracks[k];
		const struct track_win *x = &c->tw[k];

		c->to[k] = NO_TRACK;
		if (!x->in || (!x->n && x->start <= 0))
			continue;
		window_axis(p, c, t->src, x->from, x->to < x->proc_last ? x->to + 1 : x->to);
		t->start_bytes = x->start;
		t->peak = x->peak > 0 ? x->peak : 0;
		t->peak_at = x->peak_at;
		t->end_bytes = x->end;
		t->first_ts_ns = x->n ? x->first : x->from;
		t->last_ts_ns = x->n ? x->last : x->from;
		t->from_ts_ns = x->from;
		t->to_ts_ns = t->end_ts_ns = x->to;
		t->n_points = x->n;
		c->to[k] = (uint32_t)n_kept;
		p->tracks[n_kept++] = *t;
	}
	for (i = 0; i < p->n_recs; i++) {
		struct rec *r = &p->recs[i];

		if (r->kind != R_LIVE || r->track == NO_TRACK)
			continue;
		if (c->to[r->track] == NO_TRACK || r->at.ts_ns < c->tw[r->track].from ||
			r->at.ts_ns > c->tw[r->track].to)
			r->track = NO_TRACK;
		else
			r->track = c->to[r->track];
	}
	p->n_tracks = n_kept;
	p->peak_track = c->peak_track >= 0 ? (long)c->to[c->peak_track] : -1;
	return n_kept;
}

int memscope_peak_window(struct memscope_peak *p, const struct memscope_timeline_window *w,
	const char *const *inputs, size_t n_inputs, uint64_t *n_left_out,
	struct memscope_error *err)
{
	struct win_cut c = { .w = w, .peak = p->n_recs, .peak_track = -1, .from_axis = UINT64_MAX };
	struct ctr_win cw = { .p = p, .w = w };
	struct counters ctr = { 0 };
	size_t k, n_kept;
	int rc;

	if (n_left_out)
		*n_left_out = 0;
	if ((rc = window_check(p, w, inputs, n_inputs, err)))
		return rc;
	c.tw = calloc(p->n_tracks ? p->n_tracks : 1, sizeof(*c.tw));
	c.to = malloc((p->n_tracks ? p->n_tracks : 1) * sizeof(*c.to));
	if (!c.tw || !c.to) {
		rc = MEMSCOPE_E_NOMEM;
		goto out;
	}
	for (k = 0; k < p->n_tracks; k++)
		c.tw[k].start_rec = c.tw[k].peak_rec = p->n_recs;
	window_sweep(p, &c);
	if ((rc = ms__counters_cut(&p->ctr, ctr_window, &cw, &ctr)))
		goto out;
	c.left_out += cw.left_out;
	if (!c.any && !ctr.n) {
		rc = ms__window_empty(inputs, n_inputs, p->cap_clock && p->clock[0].has_row,
			p->cap_clock ? p->clock[0].end - p->clock[0].row0 : 0, err);
		goto out;
	}
	if ((rc = window_owners(p, &c)))
		goto out;
	n_kept = window_keep(p, &c);
	/* the samples kept: from the first (at the window's start, with the value held then) to
	 * their process's end in it */
	for (k = 0; k < ctr.n; k++) {
		const struct memscope_counter_track *t = &ctr.pub[k];

		window_axis(p, &c, t->src, t->first_ts_ns,
			t->end_ts_ns < proc_last(p, t->src, t->pid) ? t->end_ts_ns + 1
								    : t->end_ts_ns);
	}
	n_kept += ctr.n;
	ms__counters_replace(&p->ctr, &ctr);
	p->axis_from = n_kept ? c.from_axis : 0;
	p->axis_to = n_kept ? c.to_axis : 0;
	p->cut = 1;
	if (n_left_out)
		*n_left_out = c.left_out;
out:
	free(c.tw);
	free(c.to);
	ms__counters_free(&ctr);
	return rc == MEMSCOPE_E_NOMEM ? memscope_error_set(err, rc, NULL, 0, "out of memory") : rc;
}

/* ---- the analysis interface (memscope/analysis.h) ---- */

ANALYSIS_CALLS(memscope_peak)
ANALYSIS_CREATE(memscope_peak)

ANALYSIS_TABLE(memscope_peak, "peak", .again = NULL);
