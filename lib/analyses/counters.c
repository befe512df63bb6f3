/* The profiler's samples (COUNTER events) kept per track as varint-encoded changes, sorted,
 * ordered and cut to a window: the store behind counters.h and the public counter iterator of
 * memscope/timeline.h. */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "counters.h"
#include "live_series.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"
#include "memscope/timeline.h"

/* A run of a track's encoded samples; a sample never spans two. */
struct ctr_chunk {
	struct ctr_chunk *next;
	uint32_t len, cap;
	unsigned char data[];
};

/* A track's store: its chunks, and the sample its next one's changes are from. */
struct ctr {
	struct ctr_chunk *head, *tail;
	struct memscope_counter_sample prev;
	int unordered; /* a sample came before the one fed ahead of it */
};

/* an encoded sample at most: its time's change, the values present, each value's change; the
 * chunks: from the first's size doubling to the last */
enum { CTR_SAMPLE_MAX = 10 + 1 + 10 * MEMSCOPE_CTR_N, CTR_CHUNK_MIN = 256, CTR_CHUNK_MAX = 65536 };

const char *memscope_counter_source(unsigned subtype)
{
	switch (subtype) {
	case MEMSCOPE_SUB_POOL_SAMPLE:
		return "memory_record";
	case MEMSCOPE_SUB_NPU_MEM:
		return "npu_mem";
	case MEMSCOPE_SUB_MODULE_SAMPLE:
		return "npu_module_mem";
	default:
		return NULL;
	}
}

int ms__counters_init(struct counters *c, struct memscope_strtab *st)
{
	memset(c, 0, sizeof(*c));
	return memscope_strtab_intern(st, "active", 6, &c->active_key) ? MEMSCOPE_E_NOMEM : 0;
}

static void ctr_free_chunks(struct ctr *k)
{
	struct ctr_chunk *ch = k->head, *next;

	for (; ch; ch = next) {
		next = ch->next;
		free(ch);
	}
	k->head = k->tail = NULL;
}

void ms__counters_free(struct counters *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		ctr_free_chunks(&c->priv[i]);
	free(c->pub);
	free(c->priv);
	ms__u64map_free(&c->index);
	c->pub = NULL;
	c->priv = NULL;
	c->n = c->cap = 0;
}

/* Sample s after the ones of track i: encoded, and the track's figures. 0 or MEMSCOPE_E_NOMEM
 * (the track unchanged). */
static int ctr_append(struct counters *c, size_t i, const struct memscope_counter_sample *s)
{
	struct memscope_counter_track *t = &c->pub[i];
	struct ctr *k = &c->priv[i];
	struct ctr_chunk *ch;
	unsigned char tmp[CTR_SAMPLE_MAX];
	size_t n = 0, j, size;

	/* wrapping differences: any value round-trips */
	n += ms__varint_put(tmp + n, zigzag((int64_t)(s->ts_ns - k->prev.ts_ns)));
	tmp[n++] = (unsigned char)s->has;
	for (j = 0; j < MEMSCOPE_CTR_N; j++)
		if (s->has & 1u << j)
			n += ms__varint_put(tmp + n,
				zigzag((int64_t)((uint64_t)s->v[j] - (uint64_t)k->prev.v[j])));
	if (!k->tail || k->tail->cap - k->tail->len < n) {
		size = k->tail ? 2 * (size_t)k->tail->cap : CTR_CHUNK_MIN;
		if (size > CTR_CHUNK_MAX)
			size = CTR_CHUNK_MAX;
		if (!(ch = malloc(sizeof(*ch) + size)))
			return MEMSCOPE_E_NOMEM;
		ch->next = NULL;
		ch->len = 0;
		ch->cap = (uint32_t)size;
		if (k->tail)
			k->tail->next = ch;
		else
			k->head = ch;
		k->tail = ch;
	}
	memcpy(k->tail->data + k->tail->len, tmp, n);
	k->tail->len += (uint32_t)n;
	if (t->n_samples && s->ts_ns < k->prev.ts_ns)
		k->unordered = 1;
	k->prev.ts_ns = s->ts_ns;
	if (!t->n_samples || s->ts_ns < t->first_ts_ns)
		t->first_ts_ns = s->ts_ns;
	if (!t->n_samples || s->ts_ns > t->last_ts_ns)
		t->last_ts_ns = s->ts_ns;
	t->n_samples++;
	t->series |= (uint16_t)s->has;
	for (j = 0; j < MEMSCOPE_CTR_N; j++) {
		if (!(s->has & 1u << j))
			continue;
		k->prev.v[j] = s->v[j];
		/* the first of the highest in time order: an earlier one of equal value too */
		if (s->v[j] > t->max[j] || (s->v[j] == t->max[j] && s->ts_ns < t->max_ts_ns[j])) {
			t->max[j] = s->v[j];
			t->max_ts_ns[j] = s->ts_ns;
		}
	}
	return 0;
}

void memscope_counter_iter_init(
	struct memscope_counter_iter *it, const struct memscope_counter_track *t)
{
	memset(it, 0, sizeof(*it));
	it->chunk = t->data ? ((const struct ctr *)t->data)->head : NULL;
	it->left = t->n_samples;
}

int memscope_counter_next(struct memscope_counter_iter *it, struct memscope_counter_sample *s)
{
	const struct ctr_chunk *ch = it->chunk;
	const unsigned char *p;
	size_t n, j;
	uint64_t u;
	int r;

	while (ch && it->off >= ch->len) {
		ch = ch->next;
		it->off = 0;
	}
	it->chunk = ch;
	if (!it->left || !ch)
		return 0;
	p = ch->data + it->off;
	n = ch->len - it->off;
	/* our own encoding: a sample is whole in its chunk */
	if ((r = ms__varint_get(p, n, &u)) <= 0 || (size_t)r >= n)
		return 0;
	it->prev.ts_ns += (uint64_t)unzigzag(u);
	it->prev.has = p[r];
	p += r + 1;
	n -= (size_t)r + 1;
	for (j = 0; j < MEMSCOPE_CTR_N; j++) {
		if (!(it->prev.has & 1u << j))
			continue;
		if ((r = ms__varint_get(p, n, &u)) <= 0)
			return 0;
		it->prev.v[j] = (int64_t)((uint64_t)it->prev.v[j] + (uint64_t)unzigzag(u));
		p += r;
		n -= (size_t)r;
	}
	it->off = (size_t)(p - ch->data);
	it->left--;
	*s = it->prev;
	return 1;
}

/* What tells one track from another. */
static uint64_t ctr_hash(
	uint32_t src, uint64_t pid, int32_t device, unsigned subtype, uint32_t name)
{
	struct {
		uint64_t pid;
		uint32_t src, name, subtype;
		int32_t device;
	} key;

	memset(&key, 0, sizeof(key));
	key.pid = pid;
	key.src = src;
	key.name = name;
	key.subtype = subtype;
	key.device = device;
	return ms__hash_bytes(&key, sizeof(key));
}

static int ctr_is(const struct memscope_counter_track *t, const struct memscope_event *ev)
{
	return t->src == ev->src && t->pid == ev->pid && t->device == ev->device &&
	       t->subtype == ev->subtype && t->name == ev->name;
}

/* A new, empty track like ev's at c->n. 0 or MEMSCOPE_E_NOMEM (nothing added). */
static int ctr_add_track(struct counters *c, const struct memscope_counter_track *like)
{
	size_t cap = c->cap, j;

	if (ms__grow_array(&c->pub, &cap, c->n + 1, sizeof(*c->pub)))
		return MEMSCOPE_E_NOMEM;
	cap = c->cap;
	if (ms__grow_array(&c->priv, &cap, c->n + 1, sizeof(*c->priv)))
		return MEMSCOPE_E_NOMEM;
	c->cap = cap;
	c->pub[c->n] = *like;
	c->pub[c->n].series = 0;
	c->pub[c->n].n_samples = 0;
	for (j = 0; j < MEMSCOPE_CTR_N; j++) {
		c->pub[c->n].max[j] = INT64_MIN;
		c->pub[c->n].max_ts_ns[j] = 0;
	}
	memset(&c->priv[c->n], 0, sizeof(c->priv[c->n]));
	c->n++;
	return 0;
}

int ms__counters_feed(struct counters *c, const struct memscope_event *ev, int64_t shift_ns)
{
	struct memscope_counter_sample s = { ev->ts_ns, 0, { 0 } };
	const struct memscope_attr *a;
	uint64_t h, at;
	size_t i;

	if (ev->kind != MEMSCOPE_KIND_COUNTER)
		return 0;
	if (ev->flags & MEMSCOPE_EV_USED) {
		s.v[MEMSCOPE_CTR_USED] = ev->used;
		s.has |= 1u << MEMSCOPE_CTR_USED;
	}
	if (ev->flags & MEMSCOPE_EV_TOTAL) {
		s.v[MEMSCOPE_CTR_TOTAL] = ev->total;
		s.has |= 1u << MEMSCOPE_CTR_TOTAL;
	}
	if ((a = memscope_event_attr(ev, c->active_key)) &&
		!ms__parse_i64(a->val, a->val_len, &s.v[MEMSCOPE_CTR_ACTIVE]))
		s.has |= 1u << MEMSCOPE_CTR_ACTIVE;
	if (!s.has || !memscope_counter_source(ev->subtype)) {
		c->empty++;
		return 0;
	}
	if (c->last < c->n && ctr_is(&c->pub[c->last], ev))
		return ctr_append(c, c->last, &s);
	/* open addressing over the hash: the next key on a collision */
	h = ctr_hash(ev->src, ev->pid, ev->device, ev->subtype, ev->name);
	for (;; h++) {
		if (!ms__u64map_get(&c->index, h, &at, NULL)) {
			struct memscope_counter_track like = { .src = ev->src,
				.device = ev->device,
				.pid = ev->pid,
				.subtype = ev->subtype,
				.pool = ev->subtype == MEMSCOPE_SUB_POOL_SAMPLE ? ev->pool : 0,
				.name = ev->name,
				.shift_ns = shift_ns };

			if (ctr_add_track(c, &like))
				return MEMSCOPE_E_NOMEM;
			if (ms__u64map_put(&c->index, h, c->n, 0)) {
				c->n--;
				return MEMSCOPE_E_NOMEM;
			}
			i = c->n - 1;
			break;
		}
		if (ctr_is(&c->pub[at - 1], ev)) {
			i = (size_t)at - 1;
			break;
		}
	}
	c->last = i;
	return ctr_append(c, i, &s);
}

/* A sample and its place in its track's events, to sort them stably. */
struct ctr_at {
	struct memscope_counter_sample s;
	uint64_t seq;
};

static int cmp_ctr_at(const void *pa, const void *pb)
{
	const struct ctr_at *a = pa, *b = pb;

	if (a->s.ts_ns != b->s.ts_ns)
		return a->s.ts_ns < b->s.ts_ns ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* A track's samples re-encoded from its samples in at[0, n): into a fresh store at tmp. */
static int ctr_rebuild(struct counters *tmp, const struct memscope_counter_track *like,
	const struct ctr_at *at, size_t n)
{
	size_t k;

	if (ctr_add_track(tmp, like))
		return MEMSCOPE_E_NOMEM;
	for (k = 0; k < n; k++)
		if (ctr_append(tmp, tmp->n - 1, &at[k].s))
			return MEMSCOPE_E_NOMEM;
	return 0;
}

/* Track i in time order. 0 or MEMSCOPE_E_NOMEM (unchanged). */
static int ctr_sort(struct counters *c, size_t i)
{
	struct counters tmp = { 0 };
	struct memscope_counter_iter it;
	struct ctr_at *at = malloc((c->pub[i].n_samples ? c->pub[i].n_samples : 1) * sizeof(*at));
	size_t n = 0;
	int rc = MEMSCOPE_E_NOMEM;

	if (!at)
		return rc;
	c->pub[i].data = &c->priv[i];
	memscope_counter_iter_init(&it, &c->pub[i]);
	while (n < c->pub[i].n_samples && memscope_counter_next(&it, &at[n].s)) {
		at[n].seq = n;
		n++;
	}
	qsort(at, n, sizeof(*at), cmp_ctr_at);
	if (!ctr_rebuild(&tmp, &c->pub[i], at, n)) {
		ctr_free_chunks(&c->priv[i]);
		c->priv[i] = tmp.priv[0];
		tmp.priv[0].head = tmp.priv[0].tail = NULL;
		tmp.pub[0].end_ts_ns = c->pub[i].end_ts_ns;
		c->pub[i] = tmp.pub[0];
		rc = 0;
	}
	ms__counters_free(&tmp);
	free(at);
	return rc;
}

/* A track with its name's text, to order the tracks. */
struct ctr_order {
	const struct memscope_counter_track *t;
	const char *name;
	size_t i;
};

static int cmp_ctr_order(const void *pa, const void *pb)
{
	const struct ctr_order *x = pa, *y = pb;
	const struct memscope_counter_track *a = x->t, *b = y->t;
	int c = ms__track_cmp(a->src, a->pid, a->device, b->src, b->pid, b->device);

	if (c)
		return c;
	if (a->subtype != b->subtype)
		return a->subtype < b->subtype ? -1 : 1;
	if ((c = strcmp(x->name, y->name)))
		return c;
	return (x->i > y->i) - (x->i < y->i);
}

int ms__counters_finish(struct counters *c, const struct memscope_strtab *st)
{
	struct ctr_order *o = malloc((c->n ? c->n : 1) * sizeof(*o));
	struct memscope_counter_track *pub = malloc((c->n ? c->n : 1) * sizeof(*pub));
	struct ctr *priv = malloc((c->n ? c->n : 1) * sizeof(*priv));
	size_t i;
	int rc = MEMSCOPE_E_NOMEM;

	if (!o || !pub || !priv)
		goto out;
	for (i = 0; i < c->n; i++)
		if (c->priv[i].unordered) {
			if (ctr_sort(c, i))
				goto out;
		}
	for (i = 0; i < c->n; i++) {
		const char *name = memscope_strtab_str(st, c->pub[i].name, NULL);

		o[i] = (struct ctr_order){ &c->pub[i], name ? name : "", i };
	}
	if (c->n)
		qsort(o, c->n, sizeof(*o), cmp_ctr_order);
	for (i = 0; i < c->n; i++) {
		pub[i] = c->pub[o[i].i];
		priv[i] = c->priv[o[i].i];
	}
	/* the public side points at its store from now on: the arrays do not move again */
	for (i = 0; i < c->n; i++) {
		c->pub[i] = pub[i];
		c->priv[i] = priv[i];
		c->pub[i].data = &c->priv[i];
	}
	ms__u64map_free(&c->index);
	c->finished = 1;
	rc = 0;
out:
	free(o);
	free(pub);
	free(priv);
	return rc;
}

int ms__counters_cut(
	const struct counters *c, counters_window_fn fn, void *ctx, struct counters *out)
{
	size_t i, j;
	int rc = 0;

	out->active_key = c->active_key;
	out->empty = c->empty;
	for (i = 0; i < c->n && !rc; i++) {
		const struct memscope_counter_track *t = &c->pub[i];
		struct memscope_counter_iter it;
		struct memscope_counter_sample s, held = { 0, 0, { 0 } };
		uint64_t lo, hi;
		int more;

		if (!fn(ctx, t, &lo, &hi))
			continue;
		if ((rc = ctr_add_track(out, t)))
			break;
		memscope_counter_iter_init(&it, t);
		while ((more = memscope_counter_next(&it, &s)) && s.ts_ns < lo) {
			held.has |= s.has;
			for (j = 0; j < MEMSCOPE_CTR_N; j++)
				if (s.has & 1u << j)
					held.v[j] = s.v[j];
		}
		held.ts_ns = lo;
		if (held.has && (rc = ctr_append(out, out->n - 1, &held)))
			break;
		for (; more && s.ts_ns <= hi; more = memscope_counter_next(&it, &s))
			if ((rc = ctr_append(out, out->n - 1, &s)))
				break;
		if (rc)
			break;
		if (!out->pub[out->n - 1].n_samples) {
			out->n--; /* nothing held, nothing in it */
			continue;
		}
		out->pub[out->n - 1].end_ts_ns = t->end_ts_ns < hi ? t->end_ts_ns : hi;
	}
	if (rc) {
		ms__counters_free(out);
		return rc;
	}
	for (i = 0; i < out->n; i++)
		out->pub[i].data = &out->priv[i];
	out->finished = 1;
	return 0;
}

void ms__counters_replace(struct counters *c, struct counters *cut)
{
	ms__counters_free(c);
	*c = *cut;
	memset(cut, 0, sizeof(*cut));
}
