/* Writer of our binary capture format (formats/capture.md): delta-coded, interned, self-describing
 * records. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/capture_fmt.h"
#include "../core/internal.h"
#include "../core/live_ring.h"
#include "memscope/event.h"
#include "memscope/strtab.h"
#include "memscope/capture.h"
#include "outbuf.h"
#include "report.h"

/* After this many host events in a row from one thread that is not the CONTEXT one, a CONTEXT
 * record (about 9 bytes) costs less than the slot byte of each HOST_T that would follow. */
#define RUN_SWITCH 8

/* A thread of the THREAD records (formats/capture.md §6.1). */
struct thread_slot {
	uint64_t pid, tid, host_ptr;
	int32_t device;
};

struct memscope_capture_writer {
	struct memscope_strtab *st;
	uint32_t *str_map; /* strtab id -> file id (0: not written yet; strtab 0 is file 0) */
	size_t str_map_cap;
	uint32_t n_file_strs;
	uint32_t *stack_map; /* strtab stack id -> file stack id (0: not written yet) */
	size_t stack_map_cap;
	uint32_t n_file_stacks;
	int64_t *last; /* file key id -> last integer value (DELTA tag state) */
	size_t last_cap;
	uint64_t prev_id, prev_ts, cur_pid, cur_tid, prev_ptr, host_ptr, host_serial;
	int32_t cur_device;
	uint64_t n_events;
	int started;
	int stopped; /* a cause: finish writes STOPPED, not END (memscope_capture_writer_stop) */
	uint64_t stop_lost; /* its calls not recorded after the stop, UINT64_MAX: not known */
	char stop_why[128]; /* its cause in words */
	struct live_ring host_live; /* host serial -> (ptr, size) */
	uint64_t n_host;	    /* compact host records written */
	struct thread_slot *slots;  /* slot number -> thread; slot 0 unused */
	size_t slots_cap;
	uint32_t n_slots;
	uint32_t *slot_idx;	    /* open addressing over slot numbers, 0 = empty */
	size_t idx_mask;	    /* capacity - 1; 0 when there is no table yet */
	uint32_t run_slot, run_len; /* the slot of the last HOST_T, how many of it in a row */
	struct buf rec;		    /* payload being built */
	struct outbuf o;
};

struct memscope_capture_writer *memscope_capture_writer_new(FILE *out, struct memscope_strtab *st)
{
	struct memscope_capture_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->st = st;
	w->o.out = out;
	w->n_file_strs = 1;
	w->n_file_stacks = 1;
	w->prev_id = UINT64_MAX;
	w->cur_pid = w->cur_tid = MEMSCOPE_ID_NONE;
	w->cur_device = MEMSCOPE_DEVICE_NONE;
	return w;
}

void memscope_capture_writer_free(struct memscope_capture_writer *w)
{
	if (!w)
		return;
	free(w->str_map);
	free(w->stack_map);
	free(w->last);
	ms__live_ring_free(&w->host_live);
	free(w->slots);
	free(w->slot_idx);
	ms__buf_free(&w->rec);
	free(w);
}

uint64_t memscope_capture_writer_bytes(const struct memscope_capture_writer *w)
{
	return w->o.total + w->o.len;
}

static int put_record(struct memscope_capture_writer *w, unsigned type, const void *p, size_t n)
{
	unsigned char hdr[11];
	size_t h;

	hdr[0] = (unsigned char)type;
	h = 1 + ms__varint_put(hdr + 1, n);
	if (outbuf_put(&w->o, hdr, h) || outbuf_put(&w->o, p, n))
		return MEMSCOPE_E_IO;
	return 0;
}

static int start(struct memscope_capture_writer *w)
{
	unsigned char h[CAP_HEADER_LEN] = { 0 };

	memcpy(h, CAP_MAGIC, 8);
	h[8] = CAP_VERSION_MAJOR;
	h[10] = CAP_VERSION_MINOR;
	h[12] = CAP_HEADER_LEN;
	w->started = 1;
	return outbuf_put(&w->o, h, sizeof(h));
}

/* File id of strtab string id, writing a STRING record the first time. */
static int file_str(struct memscope_capture_writer *w, uint32_t id, uint32_t *fid)
{
	const char *s;
	size_t n;

	if (id == 0) {
		*fid = 0;
		return 0;
	}
	if (ms__grow_array(&w->str_map, &w->str_map_cap, (size_t)id + 1, sizeof(*w->str_map)))
		return MEMSCOPE_E_NOMEM;
	if (!w->str_map[id]) {
		s = memscope_strtab_str(w->st, id, &n);
		if (!s)
			return MEMSCOPE_E_ARG;
		if (put_record(w, CAP_STRING, s, n))
			return MEMSCOPE_E_IO;
		w->str_map[id] = w->n_file_strs++;
	}
	*fid = w->str_map[id];
	return 0;
}

static int file_stack(struct memscope_capture_writer *w, uint32_t id, uint32_t *fid)
{
	const uint32_t *frames;
	size_t n, i;
	int rc;

	if (ms__grow_array(&w->stack_map, &w->stack_map_cap, (size_t)id + 1, sizeof(*w->stack_map)))
		return MEMSCOPE_E_NOMEM;
	if (!w->stack_map[id]) {
		struct buf b = { 0 };
		unsigned char tmp[10];

		frames = memscope_strtab_stack(w->st, id, &n);
		if (!frames)
			return MEMSCOPE_E_ARG;
		rc = ms__buf_append(&b, tmp, ms__varint_put(tmp, n));
		for (i = 0; !rc && i < n; i++) {
			uint32_t f;

			rc = file_str(w, frames[i], &f);
			if (!rc)
				rc = ms__buf_append(&b, tmp, ms__varint_put(tmp, f));
		}
		if (!rc)
			rc = put_record(w, CAP_STACK, b.p, b.len);
		ms__buf_free(&b);
		if (rc)
			return rc;
		w->stack_map[id] = w->n_file_stacks++;
	}
	*fid = w->stack_map[id];
	return 0;
}

static inline int rec_varint(struct memscope_capture_writer *w, uint64_t v)
{
	unsigned char tmp[10];

	return ms__buf_append(&w->rec, tmp, ms__varint_put(tmp, v));
}

static int is_plain_text(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((s[i] < '0' || s[i] > '9') && s[i] != '.' && s[i] != '-')
			return 1;
	return 0;
}

static int put_attr(struct memscope_capture_writer *w, const struct memscope_event *ev,
	const struct memscope_attr *a)
{
	uint32_t key, sid;
	int64_t v, *last;
	uint64_t u;
	int rc;

	rc = file_str(w, a->key, &key);
	if (rc)
		return rc;
	if (a->val_len == 0)
		return rec_varint(w, (uint64_t)key << 3 | CAP_T_EMPTY);
	if (ms__is_canonical_i64(a->val, a->val_len)) {
		ms__parse_i64(a->val, a->val_len, &v);
		if ((rc = ms__grow_array(
			     &w->last, &w->last_cap, (size_t)key + 1, sizeof(*w->last))))
			return rc;
		last = &w->last[key];
		uint64_t d = zigzag((int64_t)((uint64_t)v - (uint64_t)*last));
		uint64_t direct = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

		*last = v;
		if (d < direct)
			return rec_varint(w, (uint64_t)key << 3 | CAP_T_DELTA) ? MEMSCOPE_E_NOMEM
									       : rec_varint(w, d);
		return rec_varint(w, (uint64_t)key << 3 | (v < 0 ? CAP_T_NEG : CAP_T_UINT)) ||
				       rec_varint(w, direct)
			       ? MEMSCOPE_E_NOMEM
			       : 0;
	}
	if (a->val_len == 18 && a->val[0] == '0' && a->val[1] == 'x' &&
		ms__parse_hex64(a->val + 2, 16, &u) == 0) {
		char canon[18];

		ms__fmt_hex16(canon, u);
		if (memcmp(canon, a->val, 18) == 0) {
			uint64_t base = (ev->flags & MEMSCOPE_EV_PTR) ? ev->ptr : 0;

			return rec_varint(w, (uint64_t)key << 3 | CAP_T_PTR_REL) ||
					       rec_varint(w, zigzag((int64_t)(u - base)))
				       ? MEMSCOPE_E_NOMEM
				       : 0;
		}
	}
	if (a->val_len <= 48 && is_plain_text(a->val, a->val_len)) {
		uint32_t id;

		if (memscope_strtab_intern(w->st, a->val, a->val_len, &id))
			return MEMSCOPE_E_NOMEM;
		if ((rc = file_str(w, id, &sid)))
			return rc;
		return rec_varint(w, (uint64_t)key << 3 | CAP_T_REF) || rec_varint(w, sid)
			       ? MEMSCOPE_E_NOMEM
			       : 0;
	}
	if (rec_varint(w, (uint64_t)key << 3 | CAP_T_INLINE) || rec_varint(w, a->val_len) ||
		ms__buf_append(&w->rec, a->val, a->val_len))
		return MEMSCOPE_E_NOMEM;
	return 0;
}

/* The payload of a CONTEXT or THREAD record for ev's thread into p[30]; its length. */
static size_t thread_fields(unsigned char *p, const struct memscope_event *ev)
{
	size_t n = 0;

	n += ms__varint_put(p + n, ev->pid + 1);
	n += ms__varint_put(p + n, ev->tid + 1);
	n += ms__varint_put(p + n, cap_device_code(ev->device));
	return n;
}

static int put_context(struct memscope_capture_writer *w, const struct memscope_event *ev)
{
	unsigned char p[30];
	size_t n;

	if (ev->pid == w->cur_pid && ev->tid == w->cur_tid && ev->device == w->cur_device)
		return 0;
	n = thread_fields(p, ev);
	w->cur_pid = ev->pid;
	w->cur_tid = ev->tid;
	w->cur_device = ev->device;
	return put_record(w, CAP_CONTEXT, p, n);
}

static uint64_t thread_hash(const struct memscope_event *ev)
{
	uint64_t h = (ev->pid * 0x9e3779b97f4a7c15ull) ^ ev->tid ^
		     ((uint64_t)(uint32_t)ev->device << 40);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

/* The slot of ev's thread, 0 when it has none yet. */
static uint32_t slot_find(const struct memscope_capture_writer *w, const struct memscope_event *ev)
{
	const struct thread_slot *s;
	size_t i;

	if (w->run_slot) { /* the thread of the last HOST_T, most of the time */
		s = &w->slots[w->run_slot];
		if (s->tid == ev->tid && s->pid == ev->pid && s->device == ev->device)
			return w->run_slot;
	}
	if (!w->idx_mask)
		return 0;
	for (i = thread_hash(ev) & w->idx_mask; w->slot_idx[i]; i = (i + 1) & w->idx_mask) {
		s = &w->slots[w->slot_idx[i]];
		if (s->tid == ev->tid && s->pid == ev->pid && s->device == ev->device)
			return w->slot_idx[i];
	}
	return 0;
}

static void slot_insert(uint32_t *idx, size_t mask, uint64_t h, uint32_t slot)
{
	size_t i;

	for (i = h & mask; idx[i]; i = (i + 1) & mask)
		;
	idx[i] = slot;
}

/* Define the next slot for ev's thread (writing its THREAD record) into *slot. 0,
 * MEMSCOPE_E_NOMEM (no slot defined) or MEMSCOPE_E_IO. */
static int slot_new(
	struct memscope_capture_writer *w, const struct memscope_event *ev, uint32_t *slot)
{
	unsigned char p[30];
	uint32_t id = w->n_slots + 1;
	struct memscope_event key;

	if (ms__grow_array(&w->slots, &w->slots_cap, (size_t)id + 1, sizeof(*w->slots)))
		return MEMSCOPE_E_NOMEM;
	if ((size_t)id * 2 > w->idx_mask) { /* keep the table at most half full */
		size_t cap = w->idx_mask ? (w->idx_mask + 1) * 2 : 64, i;
		uint32_t *idx = calloc(cap, sizeof(*idx));

		if (!idx)
			return MEMSCOPE_E_NOMEM;
		for (i = 1; i < id; i++) {
			key.pid = w->slots[i].pid;
			key.tid = w->slots[i].tid;
			key.device = w->slots[i].device;
			slot_insert(idx, cap - 1, thread_hash(&key), (uint32_t)i);
		}
		free(w->slot_idx);
		w->slot_idx = idx;
		w->idx_mask = cap - 1;
	}
	w->slots[id] = (struct thread_slot){ ev->pid, ev->tid, 0, ev->device };
	slot_insert(w->slot_idx, w->idx_mask, thread_hash(ev), id);
	w->n_slots = id;
	*slot = id;
	return put_record(w, CAP_THREAD, p, thread_fields(p, ev));
}

/*
 * The thread slot a compact host event of ev's thread is written with, 0 for a 1.0 record under
 * CONTEXT: the CONTEXT thread's events (and the file's first host event) go without a slot,
 * another thread's with its slot, defined on first sight while fewer than CAP_SLOTS_MAX are, until
 * it has made RUN_SWITCH in a row and becomes the CONTEXT one.
 */
static int host_slot(
	struct memscope_capture_writer *w, const struct memscope_event *ev, uint32_t *slot)
{
	*slot = 0;
	if (!w->n_host ||
		(ev->pid == w->cur_pid && ev->tid == w->cur_tid && ev->device == w->cur_device))
		return 0;
	*slot = slot_find(w, ev);
	if (!*slot && w->n_slots < CAP_SLOTS_MAX)
		return slot_new(w, ev, slot);
	if (*slot && *slot == w->run_slot && w->run_len >= RUN_SWITCH)
		*slot = 0;
	return 0;
}

/* The compact host records of the capture shim; 1 if ev was written that way, 0 if it does not fit.
 */
static int try_host(struct memscope_capture_writer *w, const struct memscope_event *ev)
{
	const uint32_t need = MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE | MEMSCOPE_EV_ALLOC_ID;
	const uint32_t allowed = need | MEMSCOPE_EV_REALLOC;
	unsigned char p[70];
	uint64_t ptr, size, *host_ptr;
	uint32_t stack = 0, stack_py = 0, slot;
	size_t n = 0;
	int is_alloc = ev->kind == MEMSCOPE_KIND_MALLOC, rc;
	unsigned type;

	if ((ev->kind != MEMSCOPE_KIND_MALLOC && ev->kind != MEMSCOPE_KIND_FREE) ||
		ev->subtype != MEMSCOPE_SUB_HOST || (ev->flags & need) != need ||
		(ev->flags & ~allowed) || ev->func == MEMSCOPE_FUNC_NONE ||
		ev->func >= MEMSCOPE_FUNC_COUNT_ || ev->name != MEMSCOPE_STR_NA ||
		ev->id != w->prev_id + 1 || ev->size < 0 ||
		((ev->flags & MEMSCOPE_EV_REALLOC) != 0) != (ev->func == MEMSCOPE_FUNC_REALLOC))
		return 0;
	if (is_alloc ? ev->alloc_id != w->host_serial + 1
		     : !ms__live_ring_find(&w->host_live, ev->alloc_id, &ptr, &size, 0) ||
				ptr != ev->ptr || size != (uint64_t)ev->size)
		return 0;
	if ((ev->stack_c && (rc = file_stack(w, ev->stack_c, &stack))) ||
		(ev->stack_py && (rc = file_stack(w, ev->stack_py, &stack_py))))
		return rc;
	if ((rc = host_slot(w, ev, &slot)) || (!slot && (rc = put_context(w, ev))))
		return rc;
	if (is_alloc)
		type = ev->func == MEMSCOPE_FUNC_MALLOC ? CAP_HOST_ALLOC : CAP_HOST_ALLOC_FN;
	else
		type = ev->func == MEMSCOPE_FUNC_FREE ? CAP_HOST_FREE : CAP_HOST_FREE_FN;
	if (slot) /* HOST_T: the slot and the record it stands for, then that record's fields */
		n += ms__varint_put(p + n, (uint64_t)slot << 2 | (type - CAP_HOST_ALLOC));
	host_ptr = slot ? &w->slots[slot].host_ptr : &w->host_ptr;
	n += ms__varint_put(p + n, zigzag((int64_t)(ev->ts_ns - w->prev_ts)));
	if (is_alloc) {
		n += ms__varint_put(p + n, (uint64_t)ev->size);
		n += ms__varint_put(p + n, zigzag((int64_t)(ev->ptr - *host_ptr)));
		if (ms__live_ring_put(&w->host_live, ev->alloc_id, ev->ptr, (uint64_t)ev->size))
			return MEMSCOPE_E_NOMEM;
		w->host_serial++;
		*host_ptr = ev->ptr;
	} else {
		n += ms__varint_put(p + n, w->host_serial - ev->alloc_id);
		ms__live_ring_find(&w->host_live, ev->alloc_id, &ptr, &size, 1);
	}
	if (type == CAP_HOST_ALLOC_FN || type == CAP_HOST_FREE_FN)
		n += ms__varint_put(p + n, ev->func);
	if (stack || stack_py) /* optional trailing fields */
		n += ms__varint_put(p + n, stack);
	if (stack_py)
		n += ms__varint_put(p + n, stack_py);
	if (put_record(w, slot ? CAP_HOST_T : type, p, n))
		return MEMSCOPE_E_IO;
	w->run_len = slot && slot == w->run_slot ? w->run_len + 1 : 1;
	w->run_slot = slot;
	w->n_host++;
	return 1;
}

/* The typed fields of an event without Attr text (e.g. a host event that is not compact). */
static int put_typed(struct memscope_capture_writer *w, const struct memscope_event *ev)
{
	uint64_t t = ((ev->flags & MEMSCOPE_EV_ALLOC_ID) ? CAP_TY_ALLOC_ID : 0) |
		     ((ev->flags & MEMSCOPE_EV_SIZE) ? CAP_TY_SIZE : 0) |
		     ((ev->flags & MEMSCOPE_EV_TOTAL) ? CAP_TY_TOTAL : 0) |
		     ((ev->flags & MEMSCOPE_EV_USED) ? CAP_TY_USED : 0);
	int rc = rec_varint(w, t);

	if (!rc && (t & CAP_TY_ALLOC_ID))
		rc = rec_varint(w, ev->alloc_id);
	if (!rc && (t & CAP_TY_SIZE))
		rc = rec_varint(w, zigzag(ev->size));
	if (!rc && (t & CAP_TY_TOTAL))
		rc = rec_varint(w, zigzag(ev->total));
	if (!rc && (t & CAP_TY_USED))
		rc = rec_varint(w, zigzag(ev->used));
	return rc;
}

static int put_event(struct memscope_capture_writer *w, const struct memscope_event *ev)
{
	uint32_t fields = 0, sid, i;
	unsigned char head[2];
	int rc;

	w->rec.len = 0;
	/* strings first: their records must precede the event */
	head[0] = ev->kind < 256 && memscope_kind_name(ev->kind) ? (unsigned char)ev->kind : 0;
	head[1] = ev->subtype < 256 && memscope_subtype_name(ev->subtype)
			  ? (unsigned char)ev->subtype
			  : 0;
	if ((rc = ms__buf_append(&w->rec, head, 1)))
		return rc;
	if (!head[0] && ((rc = file_str(w, ev->kind_text, &sid)) || (rc = rec_varint(w, sid))))
		return rc;
	if ((rc = ms__buf_append(&w->rec, head + 1, 1)))
		return rc;
	if (!head[1] && ((rc = file_str(w, ev->subtype_text, &sid)) || (rc = rec_varint(w, sid))))
		return rc;

	if (ev->id != w->prev_id + 1)
		fields |= CAP_F_ID;
	if (ev->pid != w->cur_pid)
		fields |= CAP_F_PID;
	if (ev->tid != w->cur_tid)
		fields |= CAP_F_TID;
	if (ev->device != w->cur_device)
		fields |= CAP_F_DEVICE;
	if (ev->flags & MEMSCOPE_EV_PTR)
		fields |= CAP_F_PTR;
	if (ev->name != MEMSCOPE_STR_NA)
		fields |= CAP_F_NAME;
	if (ev->stack_py)
		fields |= CAP_F_STACK_PY;
	if (ev->stack_c)
		fields |= CAP_F_STACK_C;
	if (ev->flags & MEMSCOPE_EV_ATTR)
		fields |= CAP_F_ATTR;
	if (ev->flags & MEMSCOPE_EV_ATTR_RAW)
		fields |= CAP_F_ATTR_RAW | CAP_F_ATTR;
	if (ev->flags & MEMSCOPE_EV_NAME_QUOTED)
		fields |= CAP_F_NAME_QUOTED;
	if (ev->func)
		fields |= CAP_F_FUNC;
	if (!(ev->flags & MEMSCOPE_EV_ATTR) &&
		(ev->flags & (MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_SIZE | MEMSCOPE_EV_TOTAL |
				     MEMSCOPE_EV_USED)))
		fields |= CAP_F_TYPED;
	if ((rc = rec_varint(w, fields)) ||
		(rc = rec_varint(w, zigzag((int64_t)(ev->ts_ns - w->prev_ts)))))
		return rc;
	if ((fields & CAP_F_ID) &&
		(rc = rec_varint(w, zigzag((int64_t)(ev->id - (w->prev_id + 1))))))
		return rc;
	if ((fields & CAP_F_PID) && (rc = rec_varint(w, ev->pid + 1)))
		return rc;
	if ((fields & CAP_F_TID) && (rc = rec_varint(w, ev->tid + 1)))
		return rc;
	if ((fields & CAP_F_DEVICE) && (rc = rec_varint(w, cap_device_code(ev->device))))
		return rc;
	if ((fields & CAP_F_PTR) && (rc = rec_varint(w, zigzag((int64_t)(ev->ptr - w->prev_ptr)))))
		return rc;
	if ((fields & CAP_F_NAME) &&
		((rc = file_str(w, ev->name, &sid)) || (rc = rec_varint(w, sid))))
		return rc;
	if ((fields & CAP_F_STACK_PY) &&
		((rc = file_stack(w, ev->stack_py, &sid)) || (rc = rec_varint(w, sid))))
		return rc;
	if ((fields & CAP_F_STACK_C) &&
		((rc = file_stack(w, ev->stack_c, &sid)) || (rc = rec_varint(w, sid))))
		return rc;
	if (fields & CAP_F_ATTR) {
		if ((rc = rec_varint(w, ev->n_attrs)))
			return rc;
		for (i = 0; i < ev->n_attrs; i++)
			if ((rc = put_attr(w, ev, &ev->attrs[i])))
				return rc;
	}
	if ((fields & CAP_F_FUNC) && (rc = rec_varint(w, ev->func)))
		return rc;
	if ((fields & CAP_F_TYPED) && (rc = put_typed(w, ev)))
		return rc;
	if (put_record(w, CAP_EVENT, w->rec.p, w->rec.len))
		return MEMSCOPE_E_IO;
	w->cur_pid = ev->pid;
	w->cur_tid = ev->tid;
	w->cur_device = ev->device;
	if (ev->flags & MEMSCOPE_EV_PTR)
		w->prev_ptr = ev->ptr;
	return 0;
}

int memscope_capture_writer_write(struct memscope_capture_writer *w,
	const struct memscope_event *ev, struct memscope_error *err)
{
	int rc = 0;

	if (!w->started)
		rc = start(w);
	if (!rc && ev->n_attrs > CAP_ATTRS_MAX)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, ev->line,
			"%u attrs in one event, more than the capture format holds (%u)",
			ev->n_attrs, CAP_ATTRS_MAX);
	if (!rc) {
		rc = try_host(w, ev);
		if (rc == 0)
			rc = put_event(w, ev);
		else if (rc == 1)
			rc = 0;
	}
	if (rc)
		return memscope_error_set(err, rc, NULL, 0, "%s%s",
			rc == MEMSCOPE_E_IO ? "write failed: " : memscope_strerror(rc),
			rc == MEMSCOPE_E_IO ? strerror(errno ? errno : EIO) : "");
	w->prev_id = ev->id;
	w->prev_ts = ev->ts_ns;
	w->n_events++;
	return 0;
}

int memscope_capture_writer_meta(struct memscope_capture_writer *w, const char *key,
	const char *value, struct memscope_error *err)
{
	unsigned char p[20];
	uint32_t k, v;
	size_t n;
	int rc = 0;

	if (!w->started)
		rc = start(w);
	if (!rc && (memscope_strtab_intern(w->st, key, strlen(key), &k) ||
			   memscope_strtab_intern(w->st, value, strlen(value), &v)))
		rc = MEMSCOPE_E_NOMEM;
	if (!rc && !(rc = file_str(w, k, &k)) && !(rc = file_str(w, v, &v))) {
		n = ms__varint_put(p, k);
		n += ms__varint_put(p + n, v);
		rc = put_record(w, CAP_META, p, n);
	}
	if (rc)
		return memscope_error_set(err, rc, NULL, 0, "%s%s",
			rc == MEMSCOPE_E_IO ? "write failed: " : memscope_strerror(rc),
			rc == MEMSCOPE_E_IO ? strerror(errno ? errno : EIO) : "");
	return 0;
}

void memscope_capture_writer_stop(struct memscope_capture_writer *w,
	enum memscope_capture_stop cause, const char *why, uint64_t lost)
{
	w->stopped = cause;
	w->stop_lost = lost;
	snprintf(w->stop_why, sizeof(w->stop_why), "%s", why ? why : "");
}

/* The STOPPED record that ends a recording stopped early (formats/capture.md §3.1). */
static int put_stopped(struct memscope_capture_writer *w)
{
	unsigned char p[3 * 10 + sizeof(w->stop_why)];
	size_t n = ms__varint_put(p, w->n_events), k = strlen(w->stop_why);

	n += ms__varint_put(p + n, (uint64_t)w->stopped);
	n += ms__varint_put(p + n, w->stop_lost == UINT64_MAX ? 0 : w->stop_lost + 1);
	memcpy(p + n, w->stop_why, k);
	return put_record(w, CAP_STOPPED, p, n + k);
}

int memscope_capture_writer_finish(struct memscope_capture_writer *w, struct memscope_error *err)
{
	unsigned char p[10];
	int rc = 0;

	if (!w->started)
		rc = start(w);
	if (!rc)
		rc = w->stopped ? put_stopped(w)
				: put_record(w, CAP_END, p, ms__varint_put(p, w->n_events));
	if (!rc)
		rc = outbuf_flush(&w->o);
	if (rc || fflush(w->o.out))
		return ms__write_failed(err);
	return 0;
}
