/* What ran where each finding was allocated: the op open on its thread (memscope_leak.op) and, for
 * a step leak, how many kernels its process had launched (memscope_leak.kernel_index), from
 * compact logs of the op and kernel rows walked once in time order at the end. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_impl.h"
#include "opnames.h"

int ms__leaks_add_kernel(struct lproc *p, const struct memscope_event *ev)
{
	unsigned char tmp[20];
	size_t n;

	n = ms__varint_put(tmp, zigzag((int64_t)(ev->ts_ns - p->last_kernel.ts_ns)));
	n += ms__varint_put(tmp + n, zigzag((int64_t)(ev->id - p->last_kernel.id)));
	if (ms__buf_append(&p->kernels, tmp, n))
		return MEMSCOPE_E_NOMEM;
	if (memscope_pos_cmp(memscope_pos_of(ev), p->last_kernel) < 0)
		p->kernels_unordered = 1;
	p->last_kernel = memscope_pos_of(ev);
	p->n_kernels++;
	return 0;
}

/* An ATen or ATB op's start or end row, into its thread's log. */
int ms__leaks_add_op(struct memscope_leaks *l, const struct memscope_event *ev, int end)
{
	struct tkey k;
	struct othread *t = l->last_ot;
	unsigned char tmp[30];
	uint32_t name = ev->name;
	size_t n;

	memset(&k, 0, sizeof(k));
	k.pid = ev->pid;
	k.tid = ev->tid;
	k.src = ev->src;
	if (!t || memcmp(&t->key, &k, sizeof(k)) != 0) {
		GET_ENTRY(l, l->othreads, k, struct othread, t);
		if (!(l->last_ot = t))
			return MEMSCOPE_E_NOMEM;
	}
	/* an op without a name is one still, "[unnamed op]" as flame graphs and the page call it */
	if ((!memscope_strtab_str(l->st, name, &n) || !n) &&
		memscope_strtab_intern(l->st, "[unnamed op]", 12, &name))
		return MEMSCOPE_E_NOMEM;
	n = ms__varint_put(tmp, zigzag((int64_t)(ev->ts_ns - t->last.ts_ns)));
	n += ms__varint_put(tmp + n, zigzag((int64_t)(ev->id - t->last.id)));
	n += ms__varint_put(tmp + n, (uint64_t)name << 1 | (unsigned)end);
	if (ms__buf_append(&t->log, tmp, n))
		return MEMSCOPE_E_NOMEM;
	if (ev->src < l->n_info)
		l->info[ev->src].n_op_rows++;
	if (memscope_pos_cmp(memscope_pos_of(ev), t->last) < 0)
		t->unordered = 1;
	t->last = memscope_pos_of(ev);
	t->n++;
	return 0;
}

static int cmp_pos(const void *pa, const void *pb)
{
	return memscope_pos_cmp(*(const struct memscope_pos *)pa, *(const struct memscope_pos *)pb);
}

static int cmp_leak_proc_alloc(const void *pa, const void *pb)
{
	const struct memscope_leak *a = pa, *b = pb;

	return memscope_time_cmp(a->blk.src, a->blk.pid, alloc_pos(&a->blk), b->blk.src, b->blk.pid,
		alloc_pos(&b->blk));
}

/* A walk over a process's KERNEL_LAUNCH positions in time order: decoded as it goes when they
 * came in order, else decoded whole and sorted (the rare case). */
struct kwalk {
	const struct lproc *p;
	size_t at;		 /* byte offset into p->kernels */
	uint64_t i;		 /* positions passed */
	struct memscope_pos cur; /* position i (valid while i < n_kernels) */
	struct memscope_pos *sorted;
};

static void kwalk_decode(struct kwalk *w)
{
	const unsigned char *c = (const unsigned char *)w->p->kernels.p;
	uint64_t dt = 0, di = 0;
	int n;

	n = ms__varint_get(c + w->at, w->p->kernels.len - w->at, &dt);
	w->at += n > 0 ? (size_t)n : 0;
	n = ms__varint_get(c + w->at, w->p->kernels.len - w->at, &di);
	w->at += n > 0 ? (size_t)n : 0;
	w->cur.ts_ns += (uint64_t)unzigzag(dt);
	w->cur.id += (uint64_t)unzigzag(di);
}

static int kwalk_init(struct kwalk *w, const struct lproc *p)
{
	uint64_t i;

	memset(w, 0, sizeof(*w));
	w->p = p;
	if (p->n_kernels && !p->kernels_unordered) {
		kwalk_decode(w);
		return 0;
	}
	if (!p->n_kernels)
		return 0;
	if (p->n_kernels > SIZE_MAX / sizeof(*w->sorted) ||
		!(w->sorted = malloc(p->n_kernels * sizeof(*w->sorted))))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < p->n_kernels; i++) {
		kwalk_decode(w);
		w->sorted[i] = w->cur;
	}
	qsort(w->sorted, p->n_kernels, sizeof(*w->sorted), cmp_pos);
	w->cur = w->sorted[0];
	return 0;
}

/* Step past every kernel before pos; returns how many are before it. */
static uint64_t kwalk_before(struct kwalk *w, struct memscope_pos pos)
{
	while (w->i < w->p->n_kernels && memscope_pos_cmp(w->cur, pos) < 0) {
		if (++w->i == w->p->n_kernels)
			break;
		if (w->sorted)
			w->cur = w->sorted[w->i];
		else
			kwalk_decode(w);
	}
	return w->i;
}

/* kernel_index of every STEP leak: its process's KERNEL_LAUNCH rows before its MALLOC. */
int ms__leaks_kernel_indexes(struct memscope_leaks *l)
{
	size_t i = 0, j;

	if (l->n_leaks > 1)
		qsort(l->leaks, l->n_leaks, sizeof(*l->leaks), cmp_leak_proc_alloc);
	while (i < l->n_leaks) {
		struct lproc *p = ms__leaks_proc(l, l->leaks[i].blk.src, l->leaks[i].blk.pid);
		struct kwalk w;

		if (!p || kwalk_init(&w, p))
			return MEMSCOPE_E_NOMEM;
		for (j = i; j < l->n_leaks && l->leaks[j].blk.src == l->leaks[i].blk.src &&
			    l->leaks[j].blk.pid == l->leaks[i].blk.pid;
			j++)
			l->leaks[j].kernel_index = kwalk_before(&w, alloc_pos(&l->leaks[j].blk));
		free(w.sorted);
		i = j;
	}
	return 0;
}

/* ---- the op of each finding: the innermost ATen or ATB op open on the thread of its MALLOC, in
 * the thread's time order; an end closes the innermost open op of its name and the ops opened
 * inside it, an end with none of its name open is ignored ---- */

/* one row of a thread's op log */
struct oprow {
	struct memscope_pos at;
	uint64_t seq; /* its place in the log: rows of one position keep it */
	uint32_t name;
	int end;
};

/* A walk over a thread's op rows in time order: decoded as it goes when they came in order, else
 * decoded whole and sorted. */
struct owalk {
	const struct othread *t;
	size_t at;	  /* byte offset into t->log */
	uint64_t i;	  /* rows passed */
	struct oprow cur; /* row i (valid while i < t->n) */
	struct oprow *sorted;
};

static void owalk_decode(struct owalk *w, uint64_t seq)
{
	const unsigned char *c = (const unsigned char *)w->t->log.p;
	uint64_t v[3] = { 0, 0, 0 };
	int k, n;

	for (k = 0; k < 3; k++) {
		n = ms__varint_get(c + w->at, w->t->log.len - w->at, &v[k]);
		w->at += n > 0 ? (size_t)n : 0;
	}
	w->cur.at.ts_ns += (uint64_t)unzigzag(v[0]);
	w->cur.at.id += (uint64_t)unzigzag(v[1]);
	w->cur.name = (uint32_t)(v[2] >> 1);
	w->cur.end = (int)(v[2] & 1);
	w->cur.seq = seq;
}

static int cmp_oprow(const void *pa, const void *pb)
{
	const struct oprow *a = pa, *b = pb;
	int c = memscope_pos_cmp(a->at, b->at);

	return c ? c : MS__CMP(a->seq, b->seq);
}

static int owalk_init(struct owalk *w, const struct othread *t)
{
	uint64_t i;

	memset(w, 0, sizeof(*w));
	w->t = t;
	if (!t->n)
		return 0;
	if (!t->unordered) {
		owalk_decode(w, 0);
		return 0;
	}
	if (t->n > SIZE_MAX / sizeof(*w->sorted) ||
		!(w->sorted = malloc(t->n * sizeof(*w->sorted))))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < t->n; i++) {
		owalk_decode(w, i);
		w->sorted[i] = w->cur;
	}
	qsort(w->sorted, t->n, sizeof(*w->sorted), cmp_oprow);
	w->cur = w->sorted[0];
	return 0;
}

static void owalk_next(struct owalk *w)
{
	if (++w->i >= w->t->n)
		return;
	if (w->sorted)
		w->cur = w->sorted[w->i];
	else
		owalk_decode(w, w->i);
}

static int cmp_leak_thread_alloc(const void *pa, const void *pb)
{
	const struct memscope_leak *a = pa, *b = pb;
	int c = MS__CMP(a->blk.src, b->blk.src);

	c = c ? c : MS__CMP(a->blk.pid, b->blk.pid);
	c = c ? c : MS__CMP(a->blk.tid, b->blk.tid);
	return c ? c : memscope_pos_cmp(alloc_pos(&a->blk), alloc_pos(&b->blk));
}

/* The op of every finding: the one its MALLOC names, else from its thread's op rows walked once in
 * time order with its findings. */
int ms__leaks_ops_finish(struct memscope_leaks *l)
{
	struct opnames s = { 0 };
	size_t i = 0, j;
	int rc = 0;

	for (i = 0; i < l->n_leaks; i++)
		l->leaks[i].op = l->leaks[i].blk.op;
	i = 0;
	if (!l->othreads)
		return 0;
	if (l->n_leaks > 1)
		qsort(l->leaks, l->n_leaks, sizeof(*l->leaks), cmp_leak_thread_alloc);
	while (i < l->n_leaks && !rc) {
		const struct memscope_block *b = &l->leaks[i].blk;
		struct othread *t;
		struct owalk w;
		struct tkey k;

		memset(&k, 0, sizeof(k));
		k.pid = b->pid;
		k.tid = b->tid;
		k.src = b->src;
		HASH_FIND(hh, l->othreads, &k, sizeof(k), t);
		for (j = i; j < l->n_leaks && l->leaks[j].blk.src == b->src &&
			    l->leaks[j].blk.pid == b->pid && l->leaks[j].blk.tid == b->tid;
			j++)
			;
		if (!t) {
			i = j;
			continue;
		}
		if ((rc = owalk_init(&w, t)))
			break;
		for (; i < j && !rc; i++) {
			struct memscope_pos at = alloc_pos(&l->leaks[i].blk);

			while (!rc && w.i < t->n && memscope_pos_cmp(w.cur.at, at) < 0) {
				if (!w.cur.end)
					rc = opnames_begin(&s, w.cur.name);
				else
					opnames_end(&s, w.cur.name);
				owalk_next(&w);
			}
			if (!l->leaks[i].blk.op)
				l->leaks[i].op = s.depth ? s.name[s.depth - 1] : 0;
		}
		free(w.sorted);
		opnames_clear(&s); /* the next thread starts with none open */
		i = j;
	}
	opnames_free(&s);
	return rc;
}
