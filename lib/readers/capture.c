/* Streaming reader of our capture format: records are parsed as they arrive; a cut file yields
 * every complete record. */
#include <stdlib.h>
#include <string.h>

#include "../core/capture_fmt.h"
#include "../core/internal.h"
#include "../core/live_ring.h"
#include "reader.h"

static const unsigned char capture_magic[8] = CAP_MAGIC;

/* The thread of compact host records: CONTEXT's, or a THREAD slot's (formats/capture.md §6.1). */
struct cap_thread {
	uint64_t pid, tid;
	uint64_t host_ptr; /* the pointer of its last allocation (CONTEXT: of the last 1.0 one) */
	int32_t device;
};

struct cap_state {
	struct memscope_source *src;
	struct memscope_strtab *st;
	memscope_event_fn fn;
	void *ctx;
	struct memscope_error *err;
	uint32_t *smap; /* file string id -> strtab id */
	size_t n_smap, cap_smap;
	uint32_t *kmap; /* file stack id -> strtab stack id */
	size_t n_kmap, cap_kmap;
	int64_t *last; /* file key id -> last integer value */
	size_t last_cap;
	uint64_t prev_id, prev_ts, prev_ptr, host_serial;
	/* CONTEXT state (cur_pid, cur_tid, cur_device) and the file's host_ptr */
	struct cap_thread cur;
	struct cap_thread *slots; /* slot number -> its state; slot 0 unused */
	size_t n_slots, slots_cap;
	struct live_ring host_live;
	struct memscope_event host_ev; /* the compact host event being decoded (on_host) */
	struct memscope_attr *attrs;
	size_t attrs_cap;
	uint32_t *frames;
	size_t frames_cap;
	struct buf vals; /* rendered attr values of the current event */
	size_t *val_off;
	size_t val_off_cap;
	uint64_t offset; /* file offset of the record being decoded */
	uint64_t n_events;
	int ended;
	struct memscope_error stop; /* a STOPPED record's message (stop.code 0: none) */
	unsigned minor;		    /* the file's minor version (header) */
};

/* A cursor over one record's payload. */
struct cur {
	const unsigned char *p, *end;
	/* end of the bytes that may be loaded (>= end: the window's) */
	const unsigned char *readable;
	int bad;
};

/*
 * The next varint (formats/capture.md §1); past the end or malformed, 0 and c->bad. Inline, as a
 * call per field costs more than the decoding: one and two bytes (most of them) by a predictable
 * branch, longer ones (pointer deltas) from one 8-byte load, the 7-bit groups packed by three
 * shift steps; the bytes loaded past the record are only used when they are the record's.
 */
static inline uint64_t get_varint(struct cur *c)
{
	const unsigned char *p = c->p;
	size_t n = (size_t)(c->end - p), i;
	uint64_t v;

	if (n >= 2) {
		if (p[0] < 0x80) {
			c->p = p + 1;
			return p[0];
		}
		if (p[1] < 0x80) {
			c->p = p + 2;
			return (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		}
	} else if (n && p[0] < 0x80) {
		c->p = p + 1;
		return p[0];
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (c->readable - p >= 8) {
		uint64_t stop, x;

		memcpy(&x, p, 8);
		stop = ~x & 0x8080808080808080ull; /* the high bit of the last byte */
		i = stop ? (size_t)__builtin_ctzll(stop) / 8 + 1 : 9;
		if (stop && i <= n) {
			x &= ((stop & (0 - stop)) << 1) - 1; /* the varint's bytes only */
			x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
			x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
			x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
			c->p = p + i;
			return x;
		}
	}
#endif
	if (n > 10)
		n = 10;
	v = 0;
	for (i = 0; i < n; i++) {
		if (i == 9 && p[i] > 1)
			break;
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80) {
			c->p = p + i + 1;
			return v;
		}
	}
	c->bad = 1;
	return 0;
}

static unsigned get_u8(struct cur *c)
{
	if (c->bad || c->p == c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

static int bad(struct cap_state *cs, const char *what)
{
	struct memscope_error e;

	memscope_error_clear(&e);
	memscope_error_set_offset(&e, MEMSCOPE_E_INVALID, cs->src->name, cs->offset, "%s", what);
	return ms__source_bad(cs->src, &e, cs->err);
}

/* Map a file string id; -1 for an id not defined yet. */
static int str_id(struct cap_state *cs, uint64_t fid, uint32_t *id)
{
	if (fid >= cs->n_smap)
		return -1;
	*id = cs->smap[fid];
	return 0;
}

static int stack_id(struct cap_state *cs, uint64_t fid, uint32_t *id)
{
	if (fid == 0 || fid >= cs->n_kmap)
		return -1;
	*id = cs->kmap[fid];
	return 0;
}

static int on_string(struct cap_state *cs, const unsigned char *p, size_t n)
{
	uint32_t id;

	if (ms__grow_array(&cs->smap, &cs->cap_smap, cs->n_smap + 1, sizeof(*cs->smap)) ||
		memscope_strtab_intern(cs->st, (const char *)p, n, &id))
		return memscope_error_set(
			cs->err, MEMSCOPE_E_NOMEM, cs->src->name, 0, "out of memory");
	cs->smap[cs->n_smap++] = id;
	return 0;
}

static int on_stack(struct cap_state *cs, struct cur *c)
{
	uint64_t n = get_varint(c), i;
	uint32_t id;

	if (c->bad || n > CAP_FRAMES_MAX || n > (uint64_t)(c->end - c->p))
		return bad(cs, "invalid stack record");
	if (ms__grow_array(&cs->frames, &cs->frames_cap, n, sizeof(*cs->frames)))
		goto nomem;
	for (i = 0; i < n; i++) {
		uint64_t f = get_varint(c);

		if (c->bad || str_id(cs, f, &cs->frames[i]))
			return bad(cs, "stack frame names an undefined string");
	}
	if (ms__grow_array(&cs->kmap, &cs->cap_kmap, cs->n_kmap + 1, sizeof(*cs->kmap)) ||
		memscope_strtab_intern_stack(cs->st, cs->frames, n, &id))
		goto nomem;
	cs->kmap[cs->n_kmap++] = id;
	return 0;
nomem:
	return memscope_error_set(cs->err, MEMSCOPE_E_NOMEM, cs->src->name, 0, "out of memory");
}

/* Device of a device code (formats/capture.md §4); *ok is 0 for a code out of range. */
static int32_t device_of(uint64_t code, int *ok)
{
	*ok = code <= (uint64_t)INT32_MAX + 2;
	if (!*ok)
		return MEMSCOPE_DEVICE_NONE;
	return code == 0   ? MEMSCOPE_DEVICE_NONE
	       : code == 1 ? MEMSCOPE_DEVICE_HOST
			   : (int32_t)(code - 2);
}

static int ensure_attrs(struct cap_state *cs, size_t n)
{
	return ms__grow_array(&cs->attrs, &cs->attrs_cap, n, sizeof(*cs->attrs)) ||
			       ms__grow_array(
				       &cs->val_off, &cs->val_off_cap, n, sizeof(*cs->val_off))
		       ? MEMSCOPE_E_NOMEM
		       : 0;
}

/* Decode the attrs of an EVENT record into cs->attrs (values rendered into cs->vals). */
static const char *get_attrs(struct cap_state *cs, struct cur *c, struct memscope_event *ev)
{
	uint64_t n = get_varint(c), i;

	if (c->bad || n > CAP_ATTRS_MAX || n > (uint64_t)(c->end - c->p))
		return "invalid attr count";
	if (ensure_attrs(cs, n))
		return "out of memory";
	cs->vals.len = 0;
	for (i = 0; i < n; i++) {
		uint64_t kt = get_varint(c), key = kt >> 3, v;
		struct memscope_attr *a = &cs->attrs[i];
		char tmp[24];
		const char *text = tmp;
		size_t len = 0;
		int64_t *last;
		uint32_t sid;

		if (c->bad || str_id(cs, key, &a->key))
			return "attr key names an undefined string";
		switch (kt & 7) {
		case CAP_T_INLINE:
			v = get_varint(c);
			if (c->bad || v > (uint64_t)(c->end - c->p))
				return "attr value runs past its record";
			text = (const char *)c->p;
			len = (size_t)v;
			c->p += v;
			break;
		case CAP_T_REF:
			if (str_id(cs, get_varint(c), &sid) || c->bad)
				return "attr value names an undefined string";
			text = memscope_strtab_str(cs->st, sid, &len);
			break;
		case CAP_T_UINT:
		case CAP_T_NEG:
		case CAP_T_DELTA: {
			int64_t val;

			v = get_varint(c);
			if (c->bad ||
				ms__grow_array(
					&cs->last, &cs->last_cap, key + 1, sizeof(*cs->last)) ||
				!(last = &cs->last[key]))
				return c->bad ? "truncated attr value" : "out of memory";
			if ((kt & 7) == CAP_T_UINT) {
				if (v > INT64_MAX)
					return "attr value out of range";
				val = (int64_t)v;
			} else if ((kt & 7) == CAP_T_NEG) {
				if (v == 0 || v > (uint64_t)INT64_MAX + 1)
					return "attr value out of range";
				val = (int64_t)(0 - v);
			} else {
				val = (int64_t)((uint64_t)*last + (uint64_t)unzigzag(v));
			}
			*last = val;
			len = ms__fmt_i64(tmp, val);
			break;
		}
		case CAP_T_PTR_REL:
			v = get_varint(c);
			ms__fmt_hex16(tmp, ((ev->flags & MEMSCOPE_EV_PTR) ? ev->ptr : 0) +
						   (uint64_t)unzigzag(v));
			len = 18;
			break;
		case CAP_T_EMPTY:
			break;
		default:
			return "unknown attr value tag";
		}
		if (c->bad)
			return "truncated attr";
		cs->val_off[i] = cs->vals.len;
		a->val_len = (uint32_t)len;
		if (ms__buf_append(&cs->vals, text, len))
			return "out of memory";
	}
	for (i = 0; i < n; i++)
		cs->attrs[i].val = cs->vals.p ? cs->vals.p + cs->val_off[i] : "";
	ev->attrs = cs->attrs;
	ev->n_attrs = (uint32_t)n;
	return NULL;
}

static int on_event(struct cap_state *cs, struct cur *c)
{
	struct memscope_event ev;
	const struct memscope_attr *bad_attr;
	const char *msg = NULL;
	uint64_t fields, v;
	int ok;

	memset(&ev, 0, sizeof(ev));
	ev.src = cs->src->opts.src;
	ev.name = MEMSCOPE_STR_NA;
	ev.kind = (uint16_t)get_u8(c);
	if (!ev.kind && str_id(cs, get_varint(c), &ev.kind_text))
		return bad(cs, "event kind names an undefined string");
	ev.subtype = (uint16_t)get_u8(c);
	if (!ev.subtype && str_id(cs, get_varint(c), &ev.subtype_text))
		return bad(cs, "event type names an undefined string");
	if (ev.kind >= MEMSCOPE_KIND_COUNT_ || ev.subtype >= MEMSCOPE_SUB_COUNT_)
		return bad(cs, "unknown event kind or type code");
	fields = get_varint(c);
	if (fields & ~(uint64_t)CAP_F_KNOWN)
		return bad(cs, "event record has unknown fields");
	ev.ts_ns = cs->prev_ts + (uint64_t)unzigzag(get_varint(c));
	ev.id = cs->prev_id + 1;
	if (fields & CAP_F_ID)
		ev.id += (uint64_t)unzigzag(get_varint(c));
	ev.pid = (fields & CAP_F_PID) ? get_varint(c) - 1 : cs->cur.pid;
	ev.tid = (fields & CAP_F_TID) ? get_varint(c) - 1 : cs->cur.tid;
	if (fields & CAP_F_DEVICE) {
		ev.device = device_of(get_varint(c), &ok);
		if (!ok)
			return bad(cs, "invalid device code");
	} else {
		ev.device = cs->cur.device;
	}
	if (fields & CAP_F_PTR) {
		ev.ptr = cs->prev_ptr + (uint64_t)unzigzag(get_varint(c));
		ev.flags |= MEMSCOPE_EV_PTR;
	}
	if ((fields & CAP_F_NAME) && str_id(cs, get_varint(c), &ev.name))
		return bad(cs, "event name names an undefined string");
	if ((fields & CAP_F_STACK_PY) && stack_id(cs, get_varint(c), &ev.stack_py))
		return bad(cs, "event names an undefined stack");
	if ((fields & CAP_F_STACK_C) && stack_id(cs, get_varint(c), &ev.stack_c))
		return bad(cs, "event names an undefined stack");
	if (fields & CAP_F_NAME_QUOTED)
		ev.flags |= MEMSCOPE_EV_NAME_QUOTED;
	if (c->bad)
		return bad(cs, "truncated event record");
	if (fields & CAP_F_ATTR) {
		ev.flags |= MEMSCOPE_EV_ATTR;
		if ((msg = get_attrs(cs, c, &ev)))
			return strcmp(msg, "out of memory")
				       ? bad(cs, msg)
				       : memscope_error_set(cs->err, MEMSCOPE_E_NOMEM,
						 cs->src->name, 0, "out of memory");
		if (fields & CAP_F_ATTR_RAW) {
			if (ev.n_attrs != 1 || ev.attrs[0].key != MEMSCOPE_STR_EMPTY)
				return bad(cs, "raw attr must be one value with key 0");
			ev.flags |= MEMSCOPE_EV_ATTR_RAW;
		}
	}
	if (fields & CAP_F_FUNC) {
		v = get_varint(c);
		if (c->bad || v == 0 || v >= MEMSCOPE_FUNC_COUNT_)
			return bad(cs, "invalid func code");
		ev.func = (uint16_t)v;
		if (v == MEMSCOPE_FUNC_REALLOC)
			ev.flags |= MEMSCOPE_EV_REALLOC;
	}
	if (fields & CAP_F_TYPED) {
		uint64_t t = get_varint(c);

		if (fields & CAP_F_ATTR)
			return bad(cs, "typed fields beside Attr text");
		if (t & CAP_TY_ALLOC_ID) {
			ev.alloc_id = get_varint(c);
			ev.flags |= MEMSCOPE_EV_ALLOC_ID;
		}
		if (t & CAP_TY_SIZE) {
			ev.size = unzigzag(get_varint(c));
			ev.flags |= MEMSCOPE_EV_SIZE;
		}
		if (t & CAP_TY_TOTAL) {
			ev.total = unzigzag(get_varint(c));
			ev.flags |= MEMSCOPE_EV_TOTAL;
		}
		if (t & CAP_TY_USED) {
			ev.used = unzigzag(get_varint(c));
			ev.flags |= MEMSCOPE_EV_USED;
		}
		if (c->bad)
			return bad(cs, "truncated typed fields");
	}
	ms__event_set_pool(&ev, cs->st);
	if (!(ev.flags & MEMSCOPE_EV_ATTR_RAW) && (msg = ms__event_type_attrs(&ev, &bad_attr)))
		return bad(cs, msg);
	cs->prev_id = ev.id;
	cs->prev_ts = ev.ts_ns;
	cs->cur.pid = ev.pid;
	cs->cur.tid = ev.tid;
	cs->cur.device = ev.device;
	if (ev.flags & MEMSCOPE_EV_PTR)
		cs->prev_ptr = ev.ptr;
	ev.line = ++cs->n_events;
	return source_deliver(cs->src, cs->fn, cs->ctx, &ev);
}

/*
 * A compact host record of type (HOST_T: the one its op names) of thread t. The hot path of a
 * recording: the event is built in place in cs->host_ev, whose fields that no host event changes
 * are set once in capture_read.
 */
static int on_host(struct cap_state *cs, unsigned type, struct cur *c, struct cap_thread *t)
{
	struct memscope_event *ev = &cs->host_ev;
	uint64_t size = 0, ptr = 0, ts, alloc_id, stack, stack_py;
	unsigned func;
	int is_alloc = type == CAP_HOST_ALLOC || type == CAP_HOST_ALLOC_FN;

	ts = cs->prev_ts + (uint64_t)unzigzag(get_varint(c));
	if (is_alloc) {
		size = get_varint(c);
		ptr = t->host_ptr + (uint64_t)unzigzag(get_varint(c));
		alloc_id = cs->host_serial + 1;
		func = MEMSCOPE_FUNC_MALLOC;
	} else {
		uint64_t back = get_varint(c);

		alloc_id = cs->host_serial - back;
		func = MEMSCOPE_FUNC_FREE;
		if (!c->bad && (back >= cs->host_serial || !ms__live_ring_find(&cs->host_live,
								   alloc_id, &ptr, &size, 1)))
			return bad(cs, "host free of a block that is not live");
	}
	if (type == CAP_HOST_ALLOC_FN || type == CAP_HOST_FREE_FN) {
		uint64_t f = get_varint(c);

		if (!c->bad && (f == 0 || f >= MEMSCOPE_FUNC_COUNT_))
			return bad(cs, "invalid func code");
		func = (unsigned)f;
	}
	stack = c->p < c->end ? get_varint(c) : 0; /* optional trailing fields */
	/* the Python stack id: from version 1.3 on (before, trailing bytes of a later minor) */
	stack_py = cs->minor >= 3 && c->p < c->end ? get_varint(c) : 0;
	if (c->bad)
		return bad(cs, "truncated host record");
	if (size > INT64_MAX)
		return bad(cs, "host allocation size out of range");
	ev->stack_c = ev->stack_py = 0;
	if ((stack && stack_id(cs, stack, &ev->stack_c)) ||
		(stack_py && stack_id(cs, stack_py, &ev->stack_py)))
		return bad(cs, "host record names an undefined stack");
	if (is_alloc) {
		if (ms__live_ring_put(&cs->host_live, alloc_id, ptr, size))
			return memscope_error_set(
				cs->err, MEMSCOPE_E_NOMEM, cs->src->name, 0, "out of memory");
		cs->host_serial++;
		t->host_ptr = ptr;
	}
	ev->kind = is_alloc ? MEMSCOPE_KIND_MALLOC : MEMSCOPE_KIND_FREE;
	ev->func = (uint16_t)func;
	ev->flags = MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE | MEMSCOPE_EV_ALLOC_ID |
		    (func == MEMSCOPE_FUNC_REALLOC ? MEMSCOPE_EV_REALLOC : 0);
	ev->ts_ns = cs->prev_ts = ts;
	ev->id = ++cs->prev_id;
	ev->pid = t->pid;
	ev->tid = t->tid;
	ev->device = t->device;
	ev->ptr = ptr;
	ev->size = (int64_t)size;
	ev->alloc_id = alloc_id;
	ev->line = ++cs->n_events;
	return source_deliver(cs->src, cs->fn, cs->ctx, ev);
}

/* THREAD: define the next slot. */
static int on_thread(struct cap_state *cs, struct cur *c)
{
	struct cap_thread t = { 0, 0, 0, 0 };
	int ok;

	if (cs->n_slots >= CAP_SLOTS_MAX)
		return bad(cs, "more thread records than the format allows (1048576)");
	t.pid = get_varint(c) - 1;
	t.tid = get_varint(c) - 1;
	t.device = device_of(get_varint(c), &ok);
	if (c->bad || !ok)
		return bad(cs, "invalid thread record");
	if (ms__grow_array(&cs->slots, &cs->slots_cap, cs->n_slots + 2, sizeof(*cs->slots)))
		return memscope_error_set(
			cs->err, MEMSCOPE_E_NOMEM, cs->src->name, 0, "out of memory");
	cs->slots[++cs->n_slots] = t;
	return 0;
}

/* A STOPPED record (formats/capture.md §3.1): the end of a recording stopped early, its message
 * kept for the end of the read. */
static int on_stopped(struct cap_state *cs, struct cur *c)
{
	uint64_t n = get_varint(c), cause = get_varint(c), lost = get_varint(c);
	int k = (int)(c->end - c->p < 200 ? c->end - c->p : 200);
	char rest[120];

	if (c->bad)
		return bad(cs, "invalid stopped record");
	if (n != cs->n_events + cs->src->stats.n_skipped)
		return memscope_error_set_offset(cs->err, MEMSCOPE_E_INVALID, cs->src->name,
			cs->offset, "stopped record counts %llu events, file has %llu",
			(unsigned long long)n, (unsigned long long)cs->n_events);
	if (lost)
		snprintf(rest, sizeof(rest),
			"%llu later call%s (allocations, frees, markers) not recorded",
			(unsigned long long)(lost - 1), lost == 2 ? "" : "s");
	else
		snprintf(rest, sizeof(rest), "how many later calls were not recorded is not known");
	/* the cause's text is escaped by memscope_error_set */
	memscope_error_set(&cs->stop, MEMSCOPE_E_TRUNCATED, cs->src->name, 0,
		"recording incomplete: stopped %s%s%.*s%s after %llu event%s; %s",
		cause == CAP_STOP_WRITE	  ? "by a write error"
		: cause == CAP_STOP_INPUT ? "before it was converted"
					  : "early",
		k ? " (" : "", k, (const char *)c->p, k ? ")" : "",
		(unsigned long long)cs->n_events, cs->n_events == 1 ? "" : "s", rest);
	cs->ended = 1;
	return 0;
}

/* The record type with payload p[0..n); the bytes up to readable may be loaded. */
static int on_record(struct cap_state *cs, unsigned type, const unsigned char *p, size_t n,
	const unsigned char *readable)
{
	struct cur c = { p, p + n, readable, 0 };
	struct cap_thread *t;
	uint64_t v;
	int ok;

	if (cs->ended)
		return memscope_error_set_offset(cs->err, MEMSCOPE_E_INVALID, cs->src->name,
			cs->offset, "data after the end record");
	switch (type) {
	case CAP_END:
		v = get_varint(&c);
		if (c.bad || v != cs->n_events + cs->src->stats.n_skipped)
			return memscope_error_set_offset(cs->err, MEMSCOPE_E_INVALID, cs->src->name,
				cs->offset, "end record counts %llu events, file has %llu",
				(unsigned long long)v, (unsigned long long)cs->n_events);
		cs->ended = 1;
		return 0;
	case CAP_STOPPED:
		return on_stopped(cs, &c);
	case CAP_STRING:
		return on_string(cs, p, n);
	case CAP_STACK:
		return on_stack(cs, &c);
	case CAP_META:
		return 0;
	case CAP_EVENT:
		return on_event(cs, &c);
	case CAP_CONTEXT:
		cs->cur.pid = get_varint(&c) - 1;
		cs->cur.tid = get_varint(&c) - 1;
		cs->cur.device = device_of(get_varint(&c), &ok);
		if (c.bad || !ok)
			return bad(cs, "invalid context record");
		return 0;
	case CAP_HOST_ALLOC:
	case CAP_HOST_FREE:
	case CAP_HOST_ALLOC_FN:
	case CAP_HOST_FREE_FN:
		t = &cs->cur;
		break;
	case CAP_THREAD:
		return on_thread(cs, &c);
	case CAP_HOST_T:
		v = get_varint(&c);
		if (c.bad)
			return bad(cs, "truncated host record");
		if (v >> 2 == 0 || v >> 2 > cs->n_slots)
			return bad(cs, "host record names an undefined thread slot");
		type = CAP_HOST_ALLOC + (unsigned)(v & 3);
		t = &cs->slots[v >> 2];
		break;
	default:
		cs->src->stats.n_unknown_records++;
		return 0;
	}
	return on_host(cs, type, &c, t); /* one call: inlined */
}

/* Decode the complete records in p[0..n); *used gets the bytes consumed. */
static int parse(struct cap_state *cs, const unsigned char *p, size_t n, size_t *used)
{
	size_t at = 0;
	int rc = 0;

	while (at < n) {
		uint64_t len;
		int h;

		if (n - at >= 2 && p[at + 1] < 0x80) { /* a short record: one-byte length */
			len = p[at + 1];
			h = 1;
		} else {
			h = ms__varint_get(p + at + 1, n - at - 1, &len);
		}

		if (h < 0 || (h > 0 && len > CAP_RECORD_MAX))
			return memscope_error_set_offset(cs->err, MEMSCOPE_E_INVALID, cs->src->name,
				cs->offset, "invalid record length");
		if (h == 0 || len > n - at - 1 - (size_t)h)
			break; /* incomplete: wait for more bytes */
		rc = on_record(cs, p[at], p + at + 1 + h, (size_t)len, p + n);
		if (rc)
			return rc;
		at += 1 + (size_t)h + (size_t)len;
		cs->offset += 1 + (uint64_t)h + len;
	}
	*used = at;
	return 0;
}

static int header(struct cap_state *cs, const unsigned char *p, size_t n, size_t *used)
{
	unsigned major, hlen;

	if (n < CAP_HEADER_LEN)
		return 0;
	major = p[8] | p[9] << 8;
	cs->minor = p[10] | p[11] << 8;
	hlen = p[12] | p[13] << 8 | (unsigned)p[14] << 16 | (unsigned)p[15] << 24;
	if (major != CAP_VERSION_MAJOR)
		return memscope_error_set(cs->err, MEMSCOPE_E_UNSUPPORTED, cs->src->name, 0,
			"capture format version %u is not supported (this reader reads %u)", major,
			CAP_VERSION_MAJOR);
	if (hlen < CAP_HEADER_LEN || hlen > CAP_HEADER_MAX)
		return memscope_error_set_offset(cs->err, MEMSCOPE_E_INVALID, cs->src->name, 12,
			"invalid header length %u", hlen);
	if (n < hlen)
		return 0;
	*used = hlen;
	return 0;
}

static int capture_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct memscope_error local;
	struct cap_state cs;
	struct window w;
	size_t used;
	int rc, have_header = 0;

	if (!err) /* the cut is kept in the stats: it needs a record to be written to */
		err = &local;
	memset(&cs, 0, sizeof(cs));
	memscope_error_clear(&cs.stop);
	cs.src = src;
	cs.st = src->st;
	cs.fn = fn;
	cs.ctx = ctx;
	cs.err = err;
	cs.prev_id = UINT64_MAX;
	cs.cur.pid = cs.cur.tid = MEMSCOPE_ID_NONE;
	cs.cur.device = MEMSCOPE_DEVICE_NONE;
	cs.host_ev.src = src->opts.src;
	cs.host_ev.name = MEMSCOPE_STR_NA;
	cs.host_ev.subtype = cs.host_ev.pool = MEMSCOPE_SUB_HOST;
	cs.host_ev.flags = MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE | MEMSCOPE_EV_ALLOC_ID;
	rc = ms__window_open(&w, src, err);
	if (!rc && (ms__grow_array(&cs.smap, &cs.cap_smap, 256, sizeof(*cs.smap)) ||
			   ms__grow_array(&cs.kmap, &cs.cap_kmap, 64, sizeof(*cs.kmap))))
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	if (rc)
		goto out;
	cs.smap[cs.n_smap++] = MEMSCOPE_STR_EMPTY;
	cs.kmap[cs.n_kmap++] = 0;
	for (;;) {
		const unsigned char *p = (const unsigned char *)w.data + w.start;
		size_t n = w.len - w.start;

		used = 0;
		if (!have_header) {
			rc = header(&cs, p, n, &used);
			have_header = used > 0;
			cs.offset = used;
		}
		if (!rc && have_header) {
			size_t u2 = 0;

			rc = parse(&cs, p + used, n - used, &u2);
			used += u2;
		}
		w.start += used;
		if (rc || w.final)
			break;
		rc = ms__window_fill(&w, src, CAP_RECORD_MAX + CAP_HEADER_MAX, err);
		if (rc)
			goto out;
	}
	if (rc)
		goto out;
	if (!have_header)
		rc = memscope_error_set_offset(err, MEMSCOPE_E_TRUNCATED, src->name, 0,
			"truncated capture file: the header is incomplete");
	else if (w.start < w.len)
		rc = memscope_error_set_offset(err, MEMSCOPE_E_TRUNCATED, src->name, cs.offset,
			"truncated capture file: it ends inside a record (%llu events read)",
			(unsigned long long)cs.n_events);
	else if (!cs.ended)
		rc = memscope_error_set_offset(err, MEMSCOPE_E_TRUNCATED, src->name, cs.offset,
			"truncated capture file: no end record (%llu events read)",
			(unsigned long long)cs.n_events);
	else if (cs.stop.code) /* a recording stopped early: read whole, but not all there is */
		rc = (*err = cs.stop).code;
	if (rc == MEMSCOPE_E_TRUNCATED && have_header && src->opts.lenient) {
		/* every complete record was delivered: the cut is reported, not fatal (a file cut
		 * inside its header is refused: nothing in it could be read) */
		src->stats.cut = *err;
		memscope_error_clear(err);
		rc = 0;
	}
out:
	ms__window_close(&w);
	ms__buf_free(&cs.vals);
	free(cs.smap);
	free(cs.kmap);
	free(cs.last);
	free(cs.attrs);
	free(cs.val_off);
	free(cs.frames);
	ms__live_ring_free(&cs.host_live);
	free(cs.slots);
	return rc;
}

/* The magic, or a file cut inside it (nothing else starts with its high byte and "MSCAP"). */
static int capture_sniff(
	const unsigned char *p, size_t n, int eof, const char *name, struct memscope_error *err)
{
	(void)eof;
	if (n >= sizeof(capture_magic))
		return memcmp(p, capture_magic, sizeof(capture_magic)) == 0;
	if (memcmp(p, capture_magic, n) == 0)
		return memscope_error_set(err, MEMSCOPE_E_TRUNCATED, name, 0,
			"truncated capture file: %zu bytes, shorter than its header", n);
	return 0;
}

const struct reader ms__capture_reader = {
	.format = MEMSCOPE_FORMAT_CAPTURE,
	.name = "capture",
	.what = "a capture file",
	.sniff = capture_sniff,
	.read = capture_read,
	.walk = READER_WALK_INPUT,
	.prefix = "", /* any NAME.mscap */
	.endings = (const char *const[]){ ".mscap", NULL },
	.inputs = "capture files",
	.end = READER_END_EXIT_OR_CUT,
};
