/* The inefficient-memory analysis: the reference's API counters per (process, family), replayed in
 * time order, and its three rules (formats/analyses.md, the "Inefficient memory" sections). */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "analysis_impl.h"
#include "memscope/error.h"
#include "memscope/inefficient.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"

/* uthash must not exit on OOM: the failing insert sets a->oom and is undone by uthash. */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (a->oom = 1)
#include <uthash.h>

/* what a kept row was */
enum rec_kind { R_OP_START, R_OP_END, R_MALLOC, R_FREE, R_ACCESS };

/* one kept row of the PTA or ATB family */
struct rec {
	struct memscope_pos pos; /* time order: timestamp, then ID */
	uint64_t key;	/* allocation id, or the address when the row has none (keyed = 0) */
	uint32_t aux;	/* op start: the op's name; MALLOC: index into the process's mallocs */
	uint8_t kind;	/* enum rec_kind */
	uint8_t family; /* enum memscope_ineff_family */
	uint8_t keyed;
	uint8_t pad;
};

/* what the report needs of a MALLOC row */
struct malloc_info {
	uint64_t ptr, event_id, line;
	uint64_t seq; /* events fed before it */
	int64_t size; /* -1 when the row has none (the reference's value then) */
	int32_t device;
	uint16_t pool;
	uint16_t has_alloc_id;
	uint32_t owner, stack_py, stack_c;
};

struct pkey {
	uint64_t pid;
	uint32_t src;
	uint32_t pad;
};

/* rows are kept in chunks, each sorted on its own at finish and merged while replaying: no
 * reallocation while feeding, no sort buffer the size of the input */
#define CHUNK_RECS 65536

struct chunk {
	struct rec *r;
	size_t n, cap; /* a process's chunks grow from 16 rows to CHUNK_RECS */
};

struct iproc {
	struct pkey key;
	struct chunk *chunks;
	size_t n_chunks, cap_chunks;
	struct malloc_info *mallocs;
	size_t n_mallocs, cap_mallocs;
	UT_hash_handle hh;
};

/* one family's counter in one process (the reference's PidState) */
struct fam_state {
	uint64_t api;	     /* the current API, from 1 */
	uint64_t malloc_tmp; /* latest finished API that allocated (0: none yet) */
	uint64_t free_tmp;   /* latest finished API that freed (0: none yet) */
	uint32_t op;	     /* name of the op that made the current API, while in_op */
	int in_op;
	unsigned tmp; /* rows of the unfinished API: TMP_* bits */
};

enum { TMP_ANY = 1, TMP_MALLOC = 2, TMP_FREE = 4 };

/* a live block during the replay */
struct bstate {
	uint64_t key;
	uint32_t m; /* its MALLOC in the process's mallocs */
	uint8_t family, n_types, order[3];
	unsigned types;
	uint64_t fa; /* API of its first ACCESS in another API than the MALLOC (0: none) */
	struct memscope_ineff_api alloc, first_access, last_access;
	uint64_t n_access, max_idle, idle_sum;
	uint64_t early_free, late_malloc, idle_from, idle_to; /* evidence of each type */
	uint32_t next_free;				      /* free list of the slots */
};

struct memscope_inefficient {
	struct memscope_inefficient_opts o;
	struct memscope_strtab *st;
	struct iproc *procs, *last_proc;
	struct memscope_inefficient_stats stats;
	struct memscope_ineff_block *found;
	size_t n_found, cap_found;
	/* replay state, reused from process to process */
	struct bstate *slots;
	size_t n_slots, cap_slots;
	uint32_t free_slot; /* head of the free list + 1 (0: empty) */
	struct u64map by_id, by_ptr;
	uint8_t *accessed; /* per input (src): 1 once it had an ACCESS row of PTA or ATB */
	size_t n_accessed;
	int oom, finished;
};

static const char *const type_names[3] = { "early_allocation", "late_deallocation",
	"temporary_idleness" };

const char *memscope_ineff_type_name(unsigned type)
{
	/* one bit of the three: its index in type_names */
	return type && !(type & (type - 1)) && type <= MEMSCOPE_INEFF_IDLE
		       ? type_names[__builtin_ctz(type)]
		       : NULL;
}

void memscope_inefficient_opts_init(struct memscope_inefficient_opts *o)
{
	o->types = MEMSCOPE_INEFF_ALL;
	o->idle_threshold = 3000;
	o->min_size = 0;
}

struct memscope_inefficient *memscope_inefficient_new(
	const struct memscope_inefficient_opts *o, struct memscope_strtab *st)
{
	struct memscope_inefficient *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (o)
		a->o = *o;
	else
		memscope_inefficient_opts_init(&a->o);
	a->st = st;
	return a;
}

static void proc_release(struct iproc *p)
{
	size_t i;

	for (i = 0; i < p->n_chunks; i++)
		free(p->chunks[i].r);
	free(p->chunks);
	free(p->mallocs);
	p->chunks = NULL;
	p->mallocs = NULL;
	p->n_chunks = p->cap_chunks = p->n_mallocs = p->cap_mallocs = 0;
}

void memscope_inefficient_free(struct memscope_inefficient *a)
{
	struct iproc *p, *tmp;

	if (!a)
		return;
	HASH_ITER(hh, a->procs, p, tmp)
	{
		HASH_DELETE(hh, a->procs, p);
		proc_release(p);
		free(p);
	}
	free(a->found);
	free(a->slots);
	free(a->accessed);
	ms__u64map_free(&a->by_id);
	ms__u64map_free(&a->by_ptr);
	free(a);
}

static struct iproc *proc_of(struct memscope_inefficient *a, uint32_t src, uint64_t pid)
{
	struct pkey k = { pid, src, 0 };
	struct iproc *p = a->last_proc;

	if (p && p->key.pid == pid && p->key.src == src)
		return p;
	HASH_FIND(hh, a->procs, &k, sizeof(k), p);
	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			return NULL;
		p->key = k;
		HASH_ADD(hh, a->procs, key, sizeof(p->key), p);
		if (a->oom) {
			free(p);
			return NULL;
		}
	}
	return a->last_proc = p;
}

/* The family of a pool: PTA workspace blocks are PTA rows in a dump CSV. -1 for other pools. */
static int pool_family(unsigned pool)
{
	if (pool == MEMSCOPE_SUB_PTA || pool == MEMSCOPE_SUB_PTA_WORKSPACE)
		return MEMSCOPE_INEFF_PTA;
	return pool == MEMSCOPE_SUB_ATB ? MEMSCOPE_INEFF_ATB : -1;
}

/* The kept row of ev, or -1 for rows the model ignores. */
static int classify_row(
	struct memscope_inefficient *a, const struct memscope_event *ev, uint8_t *kind, int *family)
{
	switch (ev->kind) {
	case MEMSCOPE_KIND_OP_LAUNCH:
		*kind = ev->subtype == MEMSCOPE_SUB_ATEN_START ||
					ev->subtype == MEMSCOPE_SUB_ATB_START
				? R_OP_START
				: R_OP_END;
		if (ev->subtype == MEMSCOPE_SUB_ATEN_START || ev->subtype == MEMSCOPE_SUB_ATEN_END)
			*family = MEMSCOPE_INEFF_PTA;
		else if (ev->subtype == MEMSCOPE_SUB_ATB_START ||
			 ev->subtype == MEMSCOPE_SUB_ATB_END)
			*family = MEMSCOPE_INEFF_ATB;
		else
			return -1;
		return 0;
	case MEMSCOPE_KIND_MALLOC:
	case MEMSCOPE_KIND_FREE:
	case MEMSCOPE_KIND_ACCESS:
		*kind = ev->kind == MEMSCOPE_KIND_MALLOC ? R_MALLOC
			: ev->kind == MEMSCOPE_KIND_FREE ? R_FREE
							 : R_ACCESS;
		*family = pool_family(ev->pool);
		if (*family < 0) {
			a->stats.n_other_access += ev->kind == MEMSCOPE_KIND_ACCESS;
			return -1;
		}
		if (ev->flags & MEMSCOPE_EV_SHADOW) {
			a->stats.n_shadow++;
			return -1;
		}
		return 0;
	default:
		return -1;
	}
}

/* The MALLOC row's report fields. 0 or MEMSCOPE_E_NOMEM. */
static int add_malloc(struct memscope_inefficient *a, struct iproc *p,
	const struct memscope_event *ev, uint32_t *index)
{
	const struct memscope_attr *owner = memscope_event_attr(ev, MEMSCOPE_STR_OWNER);
	struct malloc_info *m;

	if (p->n_mallocs >= UINT32_MAX ||
		ms__grow_array(&p->mallocs, &p->cap_mallocs, p->n_mallocs + 1, sizeof(*p->mallocs)))
		return MEMSCOPE_E_NOMEM;
	m = &p->mallocs[p->n_mallocs];
	m->ptr = ev->ptr;
	m->event_id = ev->id;
	m->line = ev->line;
	m->seq = a->stats.n_events - 1;
	m->size = ev->flags & MEMSCOPE_EV_SIZE ? ev->size : -1;
	m->device = ev->device;
	m->pool = ev->pool;
	m->has_alloc_id = (ev->flags & MEMSCOPE_EV_ALLOC_ID) != 0;
	m->owner = 0;
	m->stack_py = ev->stack_py;
	m->stack_c = ev->stack_c;
	if (owner && owner->val_len &&
		memscope_strtab_intern(a->st, owner->val, owner->val_len, &m->owner))
		return MEMSCOPE_E_NOMEM;
	*index = (uint32_t)p->n_mallocs++;
	return 0;
}

/* The chunk the next row of p goes into. NULL on OOM. */
static struct chunk *room(struct iproc *p)
{
	struct chunk *c = p->n_chunks ? &p->chunks[p->n_chunks - 1] : NULL;

	size_t cap = c ? (c->cap < CHUNK_RECS ? 2 * c->cap : CHUNK_RECS) : 16;

	if (c && c->n < c->cap)
		return c;
	if (ms__grow_array(&p->chunks, &p->cap_chunks, p->n_chunks + 1, sizeof(*p->chunks)))
		return NULL;
	c = &p->chunks[p->n_chunks];
	if (!(c->r = malloc(cap * sizeof(*c->r))))
		return NULL;
	c->n = 0;
	c->cap = cap;
	p->n_chunks++;
	return c;
}

/* Input src had an ACCESS row the model judges by. 0 or MEMSCOPE_E_NOMEM. */
static int mark_accessed(struct memscope_inefficient *a, uint32_t src)
{
	if (src >= a->n_accessed) {
		size_t n = (size_t)src + 1;
		uint8_t *x = realloc(a->accessed, n);

		if (!x)
			return MEMSCOPE_E_NOMEM;
		memset(x + a->n_accessed, 0, n - a->n_accessed);
		a->accessed = x;
		a->n_accessed = n;
	}
	a->accessed[src] = 1;
	return 0;
}

int memscope_inefficient_feed(struct memscope_inefficient *a, const struct memscope_event *ev)
{
	struct chunk *c;
	struct iproc *p;
	struct rec r;
	int family;

	a->stats.n_events++;
	memset(&r, 0, sizeof(r));
	if (classify_row(a, ev, &r.kind, &family))
		return 0;
	if (!(p = proc_of(a, ev->src, ev->pid)) || !(c = room(p)))
		return MEMSCOPE_E_NOMEM;
	r.pos = memscope_pos_of(ev);
	r.family = (uint8_t)family;
	r.keyed = (ev->flags & MEMSCOPE_EV_ALLOC_ID) != 0;
	r.key = r.keyed ? ev->alloc_id : ev->ptr;
	if (r.kind == R_OP_START)
		r.aux = ev->name;
	else if (r.kind == R_MALLOC && add_malloc(a, p, ev, &r.aux))
		return MEMSCOPE_E_NOMEM;
	c->r[c->n++] = r;
	a->stats.rows_held++;
	if (r.kind == R_ACCESS && mark_accessed(a, ev->src))
		return MEMSCOPE_E_NOMEM;
	return 0;
}

int memscope_inefficient_input_checked(const struct memscope_inefficient *a, uint32_t src)
{
	return src < a->n_accessed && a->accessed[src];
}

const char *memscope_inefficient_input_note(const struct memscope_inefficient *a, uint32_t src)
{
	return memscope_inefficient_input_checked(a, src)
		       ? NULL
		       : "no memory access events (ACCESS rows): not checked";
}

/* ---- the replay ---- */

static int cmp_rec(const void *pa, const void *pb)
{
	const struct rec *x = pa, *y = pb;
	int c = memscope_pos_cmp(x->pos, y->pos);

	c = c ? c : MS__CMP(x->kind, y->kind);
	c = c ? c : MS__CMP(x->key, y->key);
	return c ? c : MS__CMP(x->aux, y->aux);
}

/* The reference's classify: an API has finished; note whether it allocated or freed. */
static void finish_api(struct fam_state *f)
{
	if (f->tmp & TMP_MALLOC)
		f->malloc_tmp = f->api;
	if (f->tmp & TMP_FREE)
		f->free_tmp = f->api;
	f->tmp = 0;
}

static struct u64map *map_of(struct memscope_inefficient *a, const struct rec *r)
{
	return r->keyed ? &a->by_id : &a->by_ptr;
}

static struct bstate *block_of(struct memscope_inefficient *a, const struct rec *r)
{
	uint64_t slot, unused;

	if (!ms__u64map_get(map_of(a, r), r->key, &slot, &unused))
		return NULL;
	return &a->slots[slot];
}

static int can_flag(const struct memscope_inefficient *a, const struct iproc *p,
	const struct bstate *b, unsigned type)
{
	const struct malloc_info *m = &p->mallocs[b->m];

	return !(b->types & type) && (a->o.types & type) && m->size >= 0 &&
	       (uint64_t)m->size >= a->o.min_size;
}

static void flag(struct bstate *b, unsigned type)
{
	b->types |= type;
	b->order[b->n_types++] = (uint8_t)type;
}

/* A judged block leaves the replay: a finding when it was flagged. 0 or MEMSCOPE_E_NOMEM. */
static int settle(struct memscope_inefficient *a, const struct iproc *p, uint64_t slot,
	const struct memscope_ineff_api *freed)
{
	struct bstate *b = &a->slots[slot];
	const struct malloc_info *m = &p->mallocs[b->m];
	struct memscope_ineff_block *x;
	unsigned i;
	int rc = 0;

	if (b->types) {
		if (ms__grow_array(&a->found, &a->cap_found, a->n_found + 1, sizeof(*a->found))) {
			rc = MEMSCOPE_E_NOMEM;
			goto out;
		}
		x = &a->found[a->n_found++];
		x->src = p->key.src;
		x->pid = p->key.pid;
		x->device = m->device;
		x->pool = m->pool;
		x->family = b->family;
		x->n_types = b->n_types;
		memcpy(x->order, b->order, sizeof(x->order));
		x->types = b->types;
		x->has_alloc_id = m->has_alloc_id;
		x->alloc_id = m->has_alloc_id ? b->key : 0;
		x->ptr = m->ptr;
		x->size = m->size;
		x->alloc_event_id = m->event_id;
		x->alloc_line = m->line;
		x->alloc_seq = m->seq;
		x->owner = m->owner;
		x->stack_py = m->stack_py;
		x->stack_c = m->stack_c;
		x->freed = freed != NULL;
		x->alloc = b->alloc;
		x->first_access = b->first_access;
		x->last_access = b->last_access;
		x->free = freed ? *freed : (struct memscope_ineff_api){ 0, 0, 0 };
		x->early_free_api = b->early_free;
		x->early_use_api = b->types & MEMSCOPE_INEFF_EARLY ? b->fa : 0;
		x->late_malloc_api = b->late_malloc;
		x->idle_from_api = b->idle_from;
		x->idle_to_api = b->idle_to;
		x->n_access = b->n_access;
		x->max_idle_apis = b->max_idle;
		x->unused_apis = 0;
		if (b->types & MEMSCOPE_INEFF_EARLY)
			x->unused_apis += b->fa - b->alloc.api;
		if ((b->types & MEMSCOPE_INEFF_LATE) && freed)
			x->unused_apis += freed->api - b->last_access.api;
		if (b->types & MEMSCOPE_INEFF_IDLE)
			x->unused_apis += b->idle_sum;
		if (__builtin_mul_overflow((uint64_t)x->size, x->unused_apis, &x->wasted))
			x->wasted = UINT64_MAX;
		a->stats.n_blocks++;
		add_bytes(&a->stats.bytes, x->size);
		for (i = 0; i < x->n_types; i++) {
			a->stats.n_type[__builtin_ctz(x->order[i])]++;
			add_bytes(&a->stats.type_bytes[__builtin_ctz(x->order[i])], x->size);
		}
	}
out:
	b->next_free = a->free_slot;
	a->free_slot = (uint32_t)slot + 1;
	return rc;
}

static int on_malloc(struct memscope_inefficient *a, const struct iproc *p, const struct rec *r,
	const struct memscope_ineff_api *at)
{
	struct u64map *map = map_of(a, r);
	uint64_t slot, unused;
	struct bstate *b;

	if (ms__u64map_del(map, r->key, &slot, &unused)) {
		a->stats.n_replaced++;
		if (settle(a, p, slot, NULL))
			return MEMSCOPE_E_NOMEM;
	}
	if (a->free_slot) {
		slot = a->free_slot - 1;
		a->free_slot = a->slots[slot].next_free;
	} else {
		if (a->n_slots >= UINT32_MAX - 1 ||
			ms__grow_array(&a->slots, &a->cap_slots, a->n_slots + 1, sizeof(*a->slots)))
			return MEMSCOPE_E_NOMEM;
		slot = a->n_slots++;
	}
	if (ms__u64map_put(map, r->key, slot, 0)) {
		a->slots[slot].next_free = a->free_slot;
		a->free_slot = (uint32_t)slot + 1;
		return MEMSCOPE_E_NOMEM;
	}
	b = &a->slots[slot];
	memset(b, 0, sizeof(*b));
	b->key = r->key;
	b->m = r->aux;
	b->family = r->family;
	b->alloc = *at;
	return 0;
}

static void on_access(struct memscope_inefficient *a, const struct iproc *p, struct bstate *b,
	const struct fam_state *f, const struct memscope_ineff_api *at)
{
	/* the block's row before this one: its last ACCESS once it has one, else its MALLOC */
	if (!b->n_access++)
		b->first_access = *at;
	else if (at->api > b->last_access.api) {
		uint64_t gap = at->api - b->last_access.api;

		b->max_idle = gap > b->max_idle ? gap : b->max_idle;
		if (gap > a->o.idle_threshold) {
			b->idle_sum += gap;
			if (can_flag(a, p, b, MEMSCOPE_INEFF_IDLE)) {
				flag(b, MEMSCOPE_INEFF_IDLE);
				b->idle_from = b->last_access.api;
				b->idle_to = at->api;
			}
		}
	}
	if (!b->fa && at->api != b->alloc.api)
		b->fa = at->api;
	/* some other API freed memory after the MALLOC's API and before the first use's */
	if (f->free_tmp && b->fa && b->alloc.api != f->free_tmp && b->alloc.api < f->free_tmp &&
		f->free_tmp < b->fa && can_flag(a, p, b, MEMSCOPE_INEFF_EARLY)) {
		flag(b, MEMSCOPE_INEFF_EARLY);
		b->early_free = f->free_tmp;
	}
	b->last_access = *at;
}

static void note_untracked(
	struct memscope_inefficient *a, const struct iproc *p, const struct rec *r)
{
	if (!a->stats.n_untracked++) {
		a->stats.untracked_src = p->key.src;
		a->stats.untracked_pid = p->key.pid;
		a->stats.untracked_id = r->pos.id;
	}
}

/* A FREE: the block's last judgement; a FREE of no live block is only counted. */
static int on_free(struct memscope_inefficient *a, const struct iproc *p, const struct rec *r,
	const struct fam_state *f, const struct memscope_ineff_api *at)
{
	uint64_t slot, unused;
	struct bstate *b;

	if (!ms__u64map_del(map_of(a, r), r->key, &slot, &unused)) {
		note_untracked(a, p, r);
		return 0;
	}
	b = &a->slots[slot];
	/* the row before the FREE was a use, and some other API allocated memory after that
	 * use's API and before the FREE's */
	if (f->malloc_tmp && b->n_access && b->last_access.api != f->api &&
		b->last_access.api < f->malloc_tmp && f->malloc_tmp < f->api &&
		can_flag(a, p, b, MEMSCOPE_INEFF_LATE)) {
		flag(b, MEMSCOPE_INEFF_LATE);
		b->late_malloc = f->malloc_tmp;
	}
	return settle(a, p, slot, at);
}

/* One row of the replay. 0 or MEMSCOPE_E_NOMEM. */
static int replay_row(struct memscope_inefficient *a, const struct iproc *p, struct fam_state *fs,
	const struct rec *r)
{
	struct fam_state *f = &fs[r->family];
	struct memscope_ineff_api at;
	struct bstate *b;

	switch (r->kind) {
	case R_OP_START:
		f->in_op = 1;
		f->api++;
		f->op = r->aux;
		a->stats.n_ops++;
		a->stats.n_apis[r->family]++;
		return 0;
	case R_OP_END:
		f->in_op = 0;
		finish_api(f);
		return 0;
	}
	f->tmp |= TMP_ANY | (r->kind == R_MALLOC ? TMP_MALLOC : r->kind == R_FREE ? TMP_FREE : 0);
	at.ts_ns = r->pos.ts_ns;
	if (f->in_op) {
		at.op = f->op;
	} else {
		/* a memory row outside any op is an API of its own */
		f->api++;
		a->stats.n_apis[r->family]++;
		finish_api(f);
		at.op = 0;
	}
	at.api = f->api;
	switch (r->kind) {
	case R_MALLOC:
		a->stats.n_mallocs++;
		return on_malloc(a, p, r, &at);
	case R_ACCESS:
		a->stats.n_accesses++;
		if (!(b = block_of(a, r))) {
			note_untracked(a, p, r);
			return 0;
		}
		on_access(a, p, b, f, &at);
		return 0;
	default:
		a->stats.n_frees++;
		return on_free(a, p, r, f, &at);
	}
}

static int cmp_proc(const void *pa, const void *pb)
{
	const struct iproc *x = pa, *y = pb;

	if (x->key.src != y->key.src)
		return x->key.src < y->key.src ? -1 : 1;
	return x->key.pid < y->key.pid ? -1 : x->key.pid > y->key.pid;
}

/* the next row of chunk k */
static const struct rec *head(const struct iproc *p, const size_t *at, uint32_t k)
{
	return &p->chunks[k].r[at[k]];
}

static void sift_down(const struct iproc *p, const size_t *at, uint32_t *heap, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint32_t t;

		if (l < n && cmp_rec(head(p, at, heap[l]), head(p, at, heap[m])) < 0)
			m = l;
		if (l + 1 < n && cmp_rec(head(p, at, heap[l + 1]), head(p, at, heap[m])) < 0)
			m = l + 1;
		if (m == i)
			return;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

/* Put one process in time order and replay it; its rows are dropped after. 0 or NOMEM. */
static int replay(struct memscope_inefficient *a, struct iproc *p)
{
	struct fam_state fs[MEMSCOPE_INEFF_FAMILIES];
	struct u64map *maps[2] = { &a->by_id, &a->by_ptr };
	uint32_t *heap = NULL;
	size_t *at = NULL, i, n_heap;
	int m, rc = 0;

	memset(fs, 0, sizeof(fs));
	a->n_slots = 0;
	a->free_slot = 0;
	if (!(heap = malloc((p->n_chunks ? p->n_chunks : 1) * sizeof(*heap))) ||
		!(at = calloc(p->n_chunks ? p->n_chunks : 1, sizeof(*at)))) {
		rc = MEMSCOPE_E_NOMEM;
		goto out;
	}
	/* a k-way merge of the sorted chunks: heap[0] is the chunk with the earliest next row */
	for (i = n_heap = 0; i < p->n_chunks; i++) {
		ms__sort_rows(p->chunks[i].r, p->chunks[i].n, sizeof(struct rec), cmp_rec);
		if (p->chunks[i].n) /* a chunk left empty by an allocation failure */
			heap[n_heap++] = (uint32_t)i;
	}
	for (i = n_heap / 2; i-- > 0;)
		sift_down(p, at, heap, n_heap, i);
	while (n_heap && !rc) {
		uint32_t k = heap[0];

		rc = replay_row(a, p, fs, &p->chunks[k].r[at[k]++]);
		if (at[k] == p->chunks[k].n)
			heap[0] = heap[--n_heap];
		sift_down(p, at, heap, n_heap, 0);
	}
	/* blocks never freed are judged as they stand */
	for (m = 0; m < 2; m++)
		for (i = 0; !rc && maps[m]->e && i <= maps[m]->mask; i++)
			if (maps[m]->e[i].used) {
				a->stats.n_alive_at_end++;
				rc = settle(a, p, maps[m]->e[i].a, NULL);
			}
out:
	free(heap);
	free(at);
	proc_release(p);
	/* emptied for the next process, which may be small: big tables are not worth clearing */
	for (m = 0; m < 2; m++)
		if (maps[m]->mask > 1023)
			ms__u64map_free(maps[m]);
		else
			ms__u64map_clear(maps[m]);
	return rc;
}

static int cmp_found(const void *pa, const void *pb)
{
	const struct memscope_ineff_block *x = pa, *y = pb;

	if (x->wasted != y->wasted)
		return x->wasted > y->wasted ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->alloc_line != y->alloc_line)
		return x->alloc_line < y->alloc_line ? -1 : 1;
	return x->alloc_event_id < y->alloc_event_id ? -1 : x->alloc_event_id > y->alloc_event_id;
}

int memscope_inefficient_finish(struct memscope_inefficient *a)
{
	struct iproc *p;

	if (a->finished)
		return 0;
	a->finished = 1;
	HASH_SRT(hh, a->procs, cmp_proc);
	for (p = a->procs; p; p = p->hh.next)
		if (replay(a, p))
			return MEMSCOPE_E_NOMEM;
	if (a->n_found > 1)
		qsort(a->found, a->n_found, sizeof(*a->found), cmp_found);
	return 0;
}

size_t memscope_inefficient_count(const struct memscope_inefficient *a)
{
	return a->n_found;
}

const struct memscope_ineff_block *memscope_inefficient_get(
	const struct memscope_inefficient *a, size_t i)
{
	return i < a->n_found ? &a->found[i] : NULL;
}

const struct memscope_inefficient_stats *memscope_inefficient_stats(
	const struct memscope_inefficient *a)
{
	return &a->stats;
}

const struct memscope_inefficient_opts *memscope_inefficient_opts(
	const struct memscope_inefficient *a)
{
	return &a->o;
}

/* ---- the analysis interface (memscope/analysis.h) ---- */

ANALYSIS_CALLS(memscope_inefficient)
ANALYSIS_CREATE(memscope_inefficient)

/* profiler inputs are refused by the tool; their samples and plans are no APIs anyway */
ANALYSIS_TABLE(memscope_inefficient, "inefficient", .again = NULL,
	.skip_kinds = 1u << MEMSCOPE_KIND_COUNTER | 1u << MEMSCOPE_KIND_PLAN);
