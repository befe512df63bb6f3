/*
 * PyTorch profiler traces (Kineto's Chrome trace JSON, *.pt.trace.json; formats/kineto.md): the
 * "[memory]" instant events as allocations and frees with their totals as pool samples, the op
 * slices and ProfilerStep#N as op STARTs and ENDs, streamed through the JSON scanner
 * (core/json_scan.h) one trace event at a time, then delivered in time order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/json_scan.h"
#include "msprof.h"

#define ELEM_MAX ((size_t)64 << 20) /* the longest element (or top-level value) read */

/* c10::DeviceType values seen in "[memory]" events' "Device Type" */
enum { DT_CPU = 0, DT_CUDA = 1, DT_HIP = 6, DT_PRIVATEUSE1 = 20 };

/* An op slice: its START at ts_ns, END at end_ns. */
struct kslice {
	uint64_t ts_ns, end_ns, pid, tid, line;
	uint32_t name, seq;
};

/* A "[memory]" event with an address. */
struct kmem {
	uint64_t ts_ns, pid, tid, line, addr;
	int64_t bytes, allocated, reserved;
	int32_t device;
	uint16_t pool;
	uint16_t has; /* HAS_* */
	uint32_t seq, dtype;
};
enum { HAS_ALLOCATED = 1, HAS_RESERVED = 2 };

enum { K_NAME, K_PH, K_CAT, K_TS, K_DUR, K_PID, K_TID, K_ARGS, N_KEYS };
static const char *const keys[N_KEYS] = { "name", "ph", "cat", "ts", "dur", "pid", "tid", "args" };
enum { A_ADDR, A_BYTES, A_ALLOC, A_RESERVED, A_DTYPE, A_DID, N_ARGS };
static const char *const arg_keys[N_ARGS] = { "Addr", "Bytes", "Total Allocated", "Total Reserved",
	"Device Type", "Device Id" };
static const struct ms__json_keys args_tab = { arg_keys, N_ARGS, -1, NULL };
static const struct ms__json_keys elem_tab = { keys, N_KEYS, K_ARGS, &args_tab };

struct kelem {
	struct ms__json_val v[N_KEYS], a[N_ARGS];
	uint64_t line, byte; /* where it starts: its line, its byte offset in the input */
};

struct kin {
	struct memscope_source *src;
	struct memscope_error *err;
	memscope_event_fn fn;
	void *ctx;
	struct kslice *slices;
	size_t n_slices, cap_slices;
	struct kmem *mems;
	size_t n_mems, cap_mems;
	struct buf scratch;
	uint64_t line, n_elems, next_id;
	uint64_t base; /* the input's byte offset of the window's first byte */
	uint64_t n_no_addr, first_no_addr, n_other_dev, first_other_dev;
	uint32_t dev_name[4]; /* interned "CPU", "CUDA", "HIP", "NPU" */
	int cr_before;
};

#define nomem(K) memscope_error_set((K)->err, MEMSCOPE_E_NOMEM, (K)->src->name, 0, "out of memory")

/* A bad trace event e: what, printf-style, and where it starts in bytes (a trace is often one
 * line). 0 (lenient: counted) or the status to stop with. */
static int __attribute__((format(printf, 3, 4)))
bad(struct kin *K, const struct kelem *e, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ms__source_bad_row(K->src, K->err, e->line, "%s (trace event at byte %llu)", what,
		(unsigned long long)e->byte);
}

/* The text of a number or string value (a string decoded); NULL on OOM. */
static const char *val_text(struct kin *K, const struct ms__json_val *v, size_t *len)
{
	if (v->type != MS__JSON_STR || !v->esc) {
		*len = v->len;
		return v->s;
	}
	K->scratch.len = 0;
	if (ms__json_decode(&K->scratch, v, 0))
		return NULL;
	*len = K->scratch.len;
	return K->scratch.p;
}

/* A time in µs (ts, dur) as ns: 0 (*ok set when read) or the bad row's status. */
static int get_time(struct kin *K, const struct kelem *e, int key, uint64_t *ns, int *ok)
{
	const struct ms__json_val *v = &e->v[key];
	const char *s;
	size_t len;
	int rc;

	*ok = 0;
	if (v->type != MS__JSON_STR && v->type != MS__JSON_NUM)
		return bad(
			K, e, v->type == MS__JSON_NONE ? "no %s" : "%s is not a number", keys[key]);
	if (!(s = val_text(K, v, &len)))
		return nomem(K);
	if ((rc = ms__prof_parse_us(s, len, ns)))
		return bad(K, e, "%s \"%.*s\" %s", keys[key], CLIP(len), s, ms__prof_num_error(rc));
	*ok = 1;
	return 0;
}

/* An integer value of the element's (keys) or its args' (arg_keys): 0 (*ok set when it is one, 0
 * when absent) or the bad row's status. */
static int get_int(struct kin *K, const struct kelem *e, const struct ms__json_val *v,
	const char *what, int64_t *out, int *ok)
{
	const char *s;
	size_t len;

	*ok = 0;
	if (v->type == MS__JSON_NONE)
		return 0;
	if (v->type != MS__JSON_STR && v->type != MS__JSON_NUM)
		return bad(K, e, "%s is not an integer", what);
	if (!(s = val_text(K, v, &len)))
		return nomem(K);
	if (ms__parse_i64(s, len, out))
		return bad(K, e, "%s \"%.*s\" is not an integer", what, CLIP(len), s);
	*ok = 1;
	return 0;
}

/* A pid or tid: MEMSCOPE_ID_NONE when absent. 0 (*ok) or the bad row's status. */
static int get_id(struct kin *K, const struct kelem *e, int key, uint64_t *id, int *ok)
{
	int64_t v;
	int rc, has;

	*id = MEMSCOPE_ID_NONE;
	*ok = 0;
	if ((rc = get_int(K, e, &e->v[key], keys[key], &v, &has)))
		return rc;
	if (has && v < 0)
		return bad(K, e, "%s %lld is negative", keys[key], (long long)v);
	if (has)
		*id = (uint64_t)v;
	*ok = 1;
	return 0;
}

static int room(struct kin *K, void *arr, size_t *cap, size_t n, size_t elem, uint64_t line)
{
	if (n >= UINT32_MAX)
		return memscope_error_set(K->err, MEMSCOPE_E_NOMEM, K->src->name, line,
			"more than %u events kept", UINT32_MAX);
	return ms__grow_array(arr, cap, n + 1, elem) ? nomem(K) : 0;
}

static int keep_slice(struct kin *K, const struct kelem *e)
{
	struct kslice s = { 0 };
	const struct ms__json_val *n = &e->v[K_NAME];
	uint64_t dur;
	int rc, ok;

	if ((rc = get_time(K, e, K_TS, &s.ts_ns, &ok)) || !ok)
		return rc;
	if ((rc = get_time(K, e, K_DUR, &dur, &ok)) || !ok)
		return rc;
	if (__builtin_add_overflow(s.ts_ns, dur, &s.end_ns))
		return bad(K, e, "ts + dur is out of range");
	if ((rc = get_id(K, e, K_PID, &s.pid, &ok)) || !ok)
		return rc;
	if ((rc = get_id(K, e, K_TID, &s.tid, &ok)) || !ok)
		return rc;
	if (n->type == MS__JSON_STR) {
		const char *t;
		size_t len;

		if (!(t = val_text(K, n, &len)) ||
			memscope_strtab_intern(K->src->st, t, len, &s.name))
			return nomem(K);
	} else {
		s.name = MEMSCOPE_STR_NA;
	}
	if ((rc = room(K, &K->slices, &K->cap_slices, K->n_slices, sizeof(s), e->line)))
		return rc;
	s.line = e->line;
	s.seq = (uint32_t)K->n_slices;
	K->slices[K->n_slices++] = s;
	return 0;
}

/* The device and pool of a "[memory]" event's Device Type and Id: 1, or 0 for a type not known. */
static int device_of(int64_t type, int64_t id, int32_t *device, uint16_t *pool, uint32_t *which)
{
	if (type == DT_CPU) {
		*device = MEMSCOPE_DEVICE_HOST, *pool = MEMSCOPE_SUB_HOST, *which = 0;
		return 1;
	}
	if (type != DT_CUDA && type != DT_HIP && type != DT_PRIVATEUSE1)
		return 0;
	*device = id < 0 || id > INT32_MAX ? MEMSCOPE_DEVICE_NONE : (int32_t)id;
	*pool = type == DT_PRIVATEUSE1 ? MEMSCOPE_SUB_PTA : MEMSCOPE_SUB_CUDA_CACHING;
	*which = type == DT_CUDA ? 1 : type == DT_HIP ? 2 : 3;
	return 1;
}

static int keep_memory(struct kin *K, const struct kelem *e)
{
	struct kmem m = { 0 };
	int64_t addr, type, id = -1;
	int rc, ok, has_addr, has_type;

	if ((rc = get_time(K, e, K_TS, &m.ts_ns, &ok)) || !ok)
		return rc;
	if ((rc = get_id(K, e, K_PID, &m.pid, &ok)) || !ok ||
		(rc = get_id(K, e, K_TID, &m.tid, &ok)) || !ok)
		return rc;
	if ((rc = get_int(K, e, &e->a[A_BYTES], "args.Bytes", &m.bytes, &ok)))
		return rc;
	if (!ok)
		return bad(K, e, "[memory] without args.Bytes");
	if ((rc = get_int(K, e, &e->a[A_DTYPE], "args.Device Type", &type, &has_type)) ||
		(rc = get_int(K, e, &e->a[A_DID], "args.Device Id", &id, &ok)))
		return rc;
	if (!has_type)
		return bad(K, e, "[memory] without args.Device Type");
	if ((rc = get_int(K, e, &e->a[A_ADDR], "args.Addr", &addr, &has_addr)))
		return rc;
	if (!has_addr) {
		if (!K->n_no_addr++)
			K->first_no_addr = e->byte;
		return 0;
	}
	if (!device_of(type, id, &m.device, &m.pool, &m.dtype)) {
		if (!K->n_other_dev++)
			K->first_other_dev = e->byte;
		return 0;
	}
	if ((rc = get_int(K, e, &e->a[A_ALLOC], "args.Total Allocated", &m.allocated, &ok)))
		return rc;
	m.has |= ok ? HAS_ALLOCATED : 0;
	if ((rc = get_int(K, e, &e->a[A_RESERVED], "args.Total Reserved", &m.reserved, &ok)))
		return rc;
	m.has |= ok ? HAS_RESERVED : 0;
	if ((rc = room(K, &K->mems, &K->cap_mems, K->n_mems, sizeof(m), e->line)))
		return rc;
	m.addr = (uint64_t)addr;
	m.line = e->line;
	m.seq = (uint32_t)K->n_mems;
	K->mems[K->n_mems++] = m;
	return 0;
}

/* Whether v is a string starting with "ProfilerStep#". */
static int is_step(const struct ms__json_val *v)
{
	return v->type == MS__JSON_STR && v->len >= 13 && memcmp(v->s, "ProfilerStep#", 13) == 0;
}

/* What of one trace event is kept. 0 or the status to stop with. */
static int keep(struct kin *K, const struct kelem *e)
{
	const struct ms__json_val *ph = &e->v[K_PH], *cat = &e->v[K_CAT];

	if (ms__json_str_eq(ph, "X")) {
		if (ms__json_str_eq(cat, "cpu_op") || ms__json_str_eq(cat, "Operator") ||
			ms__json_str_eq(cat, "operator") || is_step(&e->v[K_NAME]))
			return keep_slice(K, e);
	} else if (ms__json_str_eq(ph, "i") || ms__json_str_eq(ph, "I")) {
		if (ms__json_str_eq(&e->v[K_NAME], "[memory]"))
			return keep_memory(K, e);
	}
	return 0;
}

/* Where the scanner is: the top object's keys, or the traceEvents array. */
enum top { T_START, T_KEY_FIRST, T_KEY, T_OBJ_NEXT, T_ARR_FIRST, T_ARR_ELEM, T_ARR_NEXT, T_AFTER };

/* A key of the top object and its value (the traceEvents array's '[' only), as one unit. */
static int top_member(struct kin *K, struct ms__json *j, enum top *state, int *in_elem)
{
	struct ms__json_val k;
	int rc;

	if (*j->p != '"')
		return ms__json_bad(j, "a key expected in the top object");
	*in_elem = 1;
	j->elem = j->p;
	j->elem_line = j->line;
	if ((rc = ms__json_key(j, &k)))
		return rc;
	if (j->p == j->end)
		return MS__JSON_END;
	if (ms__json_str_eq(&k, "traceEvents")) {
		if (*j->p != '[')
			return ms__json_bad(j, "traceEvents is not an array");
		j->p++;
		*state = T_ARR_FIRST;
		return MS__JSON_OK;
	}
	(void)K;
	if ((rc = ms__json_skip_value(j)))
		return rc;
	*state = T_OBJ_NEXT;
	return MS__JSON_OK;
}

/* One trace event at p. */
static int top_elem(struct kin *K, struct ms__json *j, enum top *state, int *in_elem)
{
	struct kelem e;
	int rc;

	*in_elem = 1;
	j->elem = j->p;
	j->elem_line = j->line;
	if (*j->p != '{') {
		if ((rc = ms__json_skip_value(j)))
			return rc;
		K->n_elems++;
		*state = T_ARR_NEXT;
		return ms__source_bad_row(K->src, K->err, j->elem_line,
			"trace event %llu is not an object (at byte %llu)",
			(unsigned long long)K->n_elems,
			(unsigned long long)(K->base + (uint64_t)(j->elem - j->data)));
	}
	memset(&e, 0, sizeof(e));
	e.line = j->line;
	e.byte = K->base + (uint64_t)(j->p - j->data);
	if ((rc = ms__json_object(j, &elem_tab, e.v, e.a)))
		return rc;
	K->n_elems++;
	*state = T_ARR_NEXT;
	return keep(K, &e);
}

/* One step from p: whitespace, then a token, a member of the top object or a trace event. */
static int top_step(struct kin *K, struct ms__json *j, enum top *state, int *in_elem)
{
	int rc, closed;

	if (*state == T_START && j->end - j->p >= 1 && (unsigned char)*j->p == 0xef) {
		if (j->end - j->p < 3)
			return MS__JSON_END;
		if (memcmp(j->p, "\xef\xbb\xbf", 3))
			return ms__json_bad(j, "not a JSON object ('{' expected)");
		j->p += 3;
	}
	ms__json_skip_ws(j);
	if (j->p == j->end)
		return MS__JSON_END;
	switch (*state) {
	case T_START:
		if (*j->p != '{')
			return ms__json_bad(j, "not a JSON object ('{' expected)");
		j->p++;
		*state = T_KEY_FIRST;
		return MS__JSON_OK;
	case T_KEY_FIRST:
		if (*j->p == '}') {
			j->p++;
			*state = T_AFTER;
			return MS__JSON_OK;
		}
		/* fall through */
	case T_KEY:
		return top_member(K, j, state, in_elem);
	case T_OBJ_NEXT:
		if ((rc = ms__json_comma_or(
			     j, '}', "',' or '}' expected in the top object", &closed)))
			return rc;
		*state = closed ? T_AFTER : T_KEY;
		return MS__JSON_OK;
	case T_ARR_NEXT:
		if ((rc = ms__json_comma_or(
			     j, ']', "',' or ']' expected after a trace event", &closed)))
			return rc;
		*state = closed ? T_OBJ_NEXT : T_ARR_ELEM;
		return MS__JSON_OK;
	case T_AFTER:
		return ms__json_bad(j, "data after the closing '}'");
	case T_ARR_FIRST:
	case T_ARR_ELEM:
		if (*j->p == ']') {
			if (*state == T_ARR_ELEM)
				return ms__json_bad(j, "']' after a ',' (a trace event expected)");
			j->p++;
			*state = T_OBJ_NEXT;
			return MS__JSON_OK;
		}
		break;
	}
	return top_elem(K, j, state, in_elem);
}

static int more_input(struct kin *K, struct window *w)
{
	size_t want = 2 * (w->len - w->start);
	int rc;

	if (w->start)
		K->cr_before = w->data[w->start - 1] == '\r';
	K->base += w->start; /* the fill moves the unconsumed bytes to the front */
	do {
		if (w->len - w->start > ELEM_MAX)
			return memscope_error_set(K->err, MEMSCOPE_E_INVALID, K->src->name, K->line,
				"a trace event longer than %zu MiB", ELEM_MAX >> 20);
		if ((rc = ms__window_fill(w, K->src, SIZE_MAX, K->err)))
			return rc;
	} while (!w->final && w->len - w->start < want);
	return 0;
}

/* The end of the input in state: 0, or what is wrong with a trace cut short. */
static int at_end(struct kin *K, enum top state, int in_elem, uint64_t line, uint64_t byte)
{
	struct memscope_error cut;

	if (state == T_START)
		return memscope_error_set(K->err, MEMSCOPE_E_INVALID, K->src->name, line,
			"no JSON object (an empty file?)");
	if (state == T_AFTER)
		return 0;
	memscope_error_set(&cut, MEMSCOPE_E_TRUNCATED, K->src->name, line,
		"truncated trace: the file ends %s (byte %llu; after %llu whole trace events)",
		in_elem ? "inside the value starting here" : "before the closing '}'",
		(unsigned long long)byte, (unsigned long long)K->n_elems);
	if (K->src->opts.lenient) {
		K->src->stats.cut = cut;
		return 0;
	}
	if (K->err)
		*K->err = cut;
	return MEMSCOPE_E_TRUNCATED;
}

/* The whole input scanned, its slices and memory events kept. */
static int load(struct kin *K)
{
	struct window w;
	enum top state = T_START;
	int rc;

	K->line = 1;
	if ((rc = ms__window_open(&w, K->src, K->err)))
		return rc;
	for (;;) {
		struct ms__json j = { .p = w.data + w.start,
			.end = w.data + w.len,
			.data = w.data,
			.cr_before = K->cr_before,
			.line = K->line };
		int in_elem = 0;

		rc = top_step(K, &j, &state, &in_elem);
		if (rc == MS__JSON_OK || (rc == MS__JSON_END && !in_elem)) {
			w.start = (size_t)(j.p - w.data);
			K->line = j.line;
		} else if (rc == MS__JSON_END) {
			w.start = (size_t)(j.elem - w.data);
			K->line = j.elem_line;
		}
		if (rc == MS__JSON_OK)
			continue;
		if (rc == MS__JSON_BAD) {
			rc = memscope_error_set(K->err, MEMSCOPE_E_INVALID, K->src->name, j.line,
				"invalid JSON at byte %llu: %s",
				(unsigned long long)(K->base + (uint64_t)(j.p - w.data)), j.bad);
			break;
		}
		if (rc != MS__JSON_END)
			break;
		if (!w.final) {
			if ((rc = more_input(K, &w)))
				break;
			continue;
		}
		rc = at_end(K, state, in_elem, in_elem ? j.elem_line : j.line,
			K->base + (uint64_t)((in_elem ? j.elem : j.p) - w.data));
		break;
	}
	ms__window_close(&w);
	return rc;
}

/* Slices by start, the longer first (nested slices open outside in), then in file order. */
static int cmp_start(const void *a, const void *b)
{
	const struct kslice *x = a, *y = b;
	int c = MS__CMP(x->ts_ns, y->ts_ns);

	c = c ? c : MS__CMP(y->end_ns, x->end_ns);
	return c ? c : MS__CMP(x->seq, y->seq);
}

struct end_ref {
	uint64_t end_ns;
	uint32_t rank;
};

/* ENDs by time, the later started first (nested slices close inside out). */
static int cmp_end(const void *a, const void *b)
{
	const struct end_ref *x = a, *y = b;
	int c = MS__CMP(x->end_ns, y->end_ns);

	return c ? c : MS__CMP(y->rank, x->rank);
}

static int cmp_mem(const void *a, const void *b)
{
	const struct kmem *x = a, *y = b;
	int c = MS__CMP(x->ts_ns, y->ts_ns);

	return c ? c : MS__CMP(x->seq, y->seq);
}

static int deliver(struct kin *K, struct memscope_event *ev)
{
	if (ev->n_attrs)
		ev->flags |= MEMSCOPE_EV_ATTR;
	ev->id = ++K->next_id;
	ev->src = K->src->opts.src;
	return source_deliver(K->src, K->fn, K->ctx, ev);
}

static int emit_op(struct kin *K, const struct kslice *s, int end)
{
	struct memscope_event ev = { 0 };

	ev.kind = MEMSCOPE_KIND_OP_LAUNCH;
	ev.subtype = end ? MEMSCOPE_SUB_ATEN_END : MEMSCOPE_SUB_ATEN_START;
	ev.ts_ns = end ? s->end_ns : s->ts_ns;
	ev.pid = s->pid;
	ev.tid = s->tid;
	ev.device = MEMSCOPE_DEVICE_NONE;
	ev.name = s->name;
	ev.line = s->line;
	return deliver(K, &ev);
}

/* A "[memory]" event: its MALLOC or FREE, then its totals as a sample of its pool. */
static int emit_mem(struct kin *K, const struct kmem *m)
{
	static const char *const dev_names[4] = { "CPU", "CUDA", "HIP", "NPU" };
	struct memscope_event ev = { 0 };
	struct ev_attrs ax;
	int rc;

	ev.kind = m->bytes < 0 ? MEMSCOPE_KIND_FREE : MEMSCOPE_KIND_MALLOC;
	ev.subtype = m->pool;
	ms__event_set_pool(&ev, K->src->st);
	ev.ts_ns = m->ts_ns;
	ev.pid = m->pid;
	ev.tid = m->tid;
	ev.device = m->device;
	ev.name = MEMSCOPE_STR_NA;
	ev.ptr = m->addr;
	ev.size = m->bytes < 0 ? -m->bytes : m->bytes;
	ev.flags = MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE;
	ev.attrs = ax.a;
	ev.line = m->line;
	ev_attr_num(&ax, &ev, MEMSCOPE_STR_SIZE, ev.size);
	if ((rc = deliver(K, &ev)) || !m->has)
		return rc;
	if (!K->dev_name[m->dtype] && memscope_strtab_intern(K->src->st, dev_names[m->dtype],
					      strlen(dev_names[m->dtype]), &K->dev_name[m->dtype]))
		return nomem(K);
	memset(&ev, 0, sizeof(ev));
	ev.kind = MEMSCOPE_KIND_COUNTER;
	ev.subtype = MEMSCOPE_SUB_POOL_SAMPLE;
	ev.ts_ns = m->ts_ns;
	ev.pid = m->pid;
	ev.tid = m->tid;
	ev.device = m->device;
	ev.name = K->dev_name[m->dtype];
	ms__event_set_pool(&ev, K->src->st); /* by its name, as the dump's rows (none) */
	ev.attrs = ax.a;
	ev.line = m->line;
	if (m->has & HAS_ALLOCATED) {
		ev.used = m->allocated;
		ev.flags |= MEMSCOPE_EV_USED;
		ev_attr_num(&ax, &ev, MEMSCOPE_STR_USED, m->allocated);
	}
	if (m->has & HAS_RESERVED) {
		ev.total = m->reserved;
		ev.flags |= MEMSCOPE_EV_TOTAL;
		ev_attr_num(&ax, &ev, MEMSCOPE_STR_TOTAL, m->reserved);
	}
	return deliver(K, &ev);
}

/* Everything kept, in time order: at one time ENDs, then memory events, then STARTs. */
static int emit(struct kin *K)
{
	struct end_ref *ends = NULL;
	size_t i, s = 0, e = 0, k = 0, n_ends = 0;
	int rc = 0;

	if (K->n_slices)
		qsort(K->slices, K->n_slices, sizeof(*K->slices), cmp_start);
	if (K->n_mems)
		qsort(K->mems, K->n_mems, sizeof(*K->mems), cmp_mem);
	if (K->n_slices && !(ends = malloc(K->n_slices * sizeof(*ends))))
		return nomem(K);
	for (i = 0; i < K->n_slices; i++)
		if (K->slices[i].end_ns != K->slices[i].ts_ns)
			ends[n_ends++] = (struct end_ref){ K->slices[i].end_ns, (uint32_t)i };
	if (n_ends)
		qsort(ends, n_ends, sizeof(*ends), cmp_end);
	while (!rc && (s < K->n_slices || e < n_ends || k < K->n_mems)) {
		int which = -1;
		uint64_t at = 0;

		if (e < n_ends)
			which = 0, at = ends[e].end_ns;
		if (k < K->n_mems && (which < 0 || K->mems[k].ts_ns < at))
			which = 1, at = K->mems[k].ts_ns;
		if (s < K->n_slices && (which < 0 || K->slices[s].ts_ns < at))
			which = 2;
		if (which == 0) {
			rc = emit_op(K, &K->slices[ends[e++].rank], 1);
		} else if (which == 1) {
			rc = emit_mem(K, &K->mems[k++]);
		} else {
			const struct kslice *sl = &K->slices[s++];

			rc = emit_op(K, sl, 0);
			if (!rc && sl->end_ns == sl->ts_ns)
				rc = emit_op(K, sl, 1);
		}
	}
	free(ends);
	return rc;
}

static int kineto_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct kin K = { 0 };
	int rc;

	K.src = src;
	K.err = err;
	K.fn = fn;
	K.ctx = ctx;
	rc = load(&K);
	if (!rc && K.n_no_addr)
		ms__source_notice(src,
			"%llu [memory] event%s without Addr (a trace from torch before 1.10; the "
			"first "
			"at byte %llu): blocks cannot be told apart, so only the ops and steps are "
			"read",
			(unsigned long long)K.n_no_addr, K.n_no_addr == 1 ? "" : "s",
			(unsigned long long)K.first_no_addr);
	if (!rc && K.n_other_dev)
		ms__source_notice(src,
			"%llu [memory] event%s of a Device Type other than CPU, CUDA, HIP or NPU "
			"left "
			"out (the first at byte %llu)",
			(unsigned long long)K.n_other_dev, K.n_other_dev == 1 ? "" : "s",
			(unsigned long long)K.first_other_dev);
	if (!rc)
		rc = emit(&K);
	free(K.slices);
	free(K.mems);
	ms__buf_free(&K.scratch);
	return rc;
}

/* A JSON object whose first bytes name "traceEvents" and one of Kineto's own keys or events. */
static int kineto_sniff(
	const unsigned char *p, size_t n, int eof, const char *name, struct memscope_error *err)
{
	static const char *const marks[] = { "\"schemaVersion\"", "\"deviceProperties\"",
		"\"[memory]\"", "\"ProfilerStep#", "\"cpu_op\"", "\"Operator\"" };
	const char *s = (const char *)p;
	size_t i, k = 0;

	(void)eof, (void)name, (void)err;
	if (!ms__sniff_text(p, n))
		return 0;
	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		k = 3;
	while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r' || s[k] == '\n'))
		k++;
	if (k == n || s[k] != '{' || !memmem(s, n, "\"traceEvents\"", 13))
		return 0;
	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (memmem(s, n, marks[i], strlen(marks[i])))
			return 1;
	return 0;
}

static const char *const kineto_endings[] = { ".pt.trace.json", NULL };

const struct reader ms__kineto_reader = {
	.format = MEMSCOPE_FORMAT_KINETO,
	.name = "kineto",
	.what = "a PyTorch profiler trace",
	.sniff = kineto_sniff,
	.read = kineto_read,
	.walk = READER_WALK_INPUT,
	.endings = kineto_endings,
	.inputs = "PyTorch profiler traces",
	.without_accesses = "a PyTorch profiler trace",
	.end = READER_END_PROFILE,
};
