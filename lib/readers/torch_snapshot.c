/* Reader of PyTorch CUDA memory snapshots (formats/torch-snapshot.md): the pickle's trace entries,
 * segments and annotations turned into events as the pickle machine (pickle.h) reads them. */
#include <stdlib.h>
#include <string.h>

#include "../core/u64map.h"
#include "pickle.h"

/* The strings the reader compares by id: dict keys, values, attr keys. */
enum key {
	K_ACTION,
	K_ADDR,
	K_SIZE,
	K_STREAM,
	K_TIME_US,
	K_FRAMES,
	K_DEVICE_FREE,
	K_USER_METADATA,
	K_COMPILE_CONTEXT,
	K_FILENAME,
	K_LINE,
	K_NAME,
	K_DEVICE,
	K_ADDRESS,
	K_TOTAL_SIZE,
	K_BLOCKS,
	K_STATE,
	K_REQUESTED_SIZE,
	K_SEGMENT_TYPE,
	K_HISTORY,
	K_REAL_SIZE,
	K_STAGE,
	K_SEGMENTS,
	K_DEVICE_TRACES,
	K_BEFORE_TRACE,
	V_ALLOC,
	V_FREE_REQUESTED,
	V_FREE_COMPLETED,
	V_SEGMENT_ALLOC,
	V_SEGMENT_FREE,
	V_SEGMENT_MAP,
	V_SEGMENT_UNMAP,
	V_SNAPSHOT,
	V_OOM,
	V_ANNOTATE,
	V_ACTIVE_ALLOCATED,
	V_ACTIVE_PENDING_FREE,
	V_START,
	V_END,
	V_UNKNOWN_FRAME,
	K_COUNT
};

static const char *const key_text[K_COUNT] = {
	"action",
	"addr",
	"size",
	"stream",
	"time_us",
	"frames",
	"device_free",
	"user_metadata",
	"compile_context",
	"filename",
	"line",
	"name",
	"device",
	"address",
	"total_size",
	"blocks",
	"state",
	"requested_size",
	"segment_type",
	"history",
	"real_size",
	"stage",
	"segments",
	"device_traces",
	"before_trace",
	"alloc",
	"free_requested",
	"free_completed",
	"segment_alloc",
	"segment_free",
	"segment_map",
	"segment_unmap",
	"snapshot",
	"oom",
	"annotate",
	"active_allocated",
	"active_pending_free",
	"START",
	"END",
	"??",
};

/* A segment or block of the snapshot's state, delivered at the end when the trace did not
 * allocate it. */
struct held {
	uint64_t addr;
	int64_t size, requested; /* requested -1: none */
	int32_t device;
	uint16_t pool;
	uint32_t pair; /* its stacks */
	uint32_t text; /* segment_type or state: string id, 0 none */
};

/* A record (trace entry, segment, annotation) has a dozen keys: a dict of more items is not
 * looked into, as a pickle appending one big dict again and again would make the lookups cost
 * its size at every append. */
#define SNAP_RECORD_ITEMS 256
/* Bytes of the distinct frames' text: a frame dict of a few bytes can name a long string the
 * memo shares, so the text is bounded apart from the file's size. */
#define SNAP_FRAME_TEXT (256u << 20)

struct snap {
	struct memscope_source *src;
	struct memscope_strtab *st;
	memscope_event_fn fn;
	void *ctx;
	struct memscope_error *err;
	struct pk *pk;
	uint32_t k[K_COUNT];
	uint64_t n_ev;
	struct u64map live[2];	 /* by address, CUDA_CACHING [0] and CUDA [1]: the device */
	struct u64map requested; /* address -> free_requested time */
	struct u64map first_ts;	 /* device -> its first trace entry's time */
	struct held *held;
	size_t n_held, cap_held;
	uint32_t (*pairs)[2]; /* stack pairs (Python, C); pair 0 has none */
	size_t n_pairs, cap_pairs;
	struct u64map pair_of;
	uint32_t *py, *c; /* frames of the list being turned into stacks */
	size_t cap_py, cap_c;
	struct buf text;
	uint64_t frame_text; /* bytes of the distinct frames' text so far */
	struct ev_attrs ax;
};

/* ---- delivery ---- */

static void ev_start(struct snap *s, struct memscope_event *ev, unsigned kind, unsigned subtype,
	int32_t device, uint64_t ts_ns)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint16_t)kind;
	ev->subtype = (uint16_t)subtype;
	event_set_pool(ev, s->st);
	ev->pid = MEMSCOPE_ID_NONE;
	ev->tid = MEMSCOPE_ID_NONE;
	ev->name = MEMSCOPE_STR_NA;
	ev->device = device;
	ev->ts_ns = ts_ns;
	ev->attrs = s->ax.a;
}

static void attr_str(struct snap *s, struct memscope_event *ev, uint32_t key, uint32_t id)
{
	size_t len;
	const char *v = memscope_strtab_str(s->st, id, &len);

	if (v)
		ev_attr_text(&s->ax, ev, key, v, len);
}

static void set_block(struct snap *s, struct memscope_event *ev, uint64_t addr, int64_t size)
{
	ev->ptr = addr;
	ev->size = size;
	ev->flags |= MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE;
	ev_attr_num(&s->ax, ev, MEMSCOPE_STR_SIZE, size);
}

static void set_stacks(struct snap *s, struct memscope_event *ev, uint32_t pair)
{
	ev->stack_py = s->pairs[pair][0];
	ev->stack_c = s->pairs[pair][1];
}

static int emit(struct snap *s, struct memscope_event *ev)
{
	int rc;

	ev->id = ++s->n_ev;
	ev->line = ev->id;
	ev->src = s->src->opts.src;
	if (ev->n_attrs)
		ev->flags |= MEMSCOPE_EV_ATTR;
	rc = source_deliver(s->src, s->fn, s->ctx, ev);
	if (rc && rc != MEMSCOPE_E_NOMEM)
		memscope_error_set(s->err, rc, s->src->name, 0, "%s", memscope_strerror(rc));
	return rc;
}

/* A record that cannot be read: an error at its offset, or counted and skipped (lenient). */
static int bad(struct snap *s, const char *what, const char *why)
{
	struct memscope_error e;

	memscope_error_set_offset(
		&e, MEMSCOPE_E_INVALID, s->src->name, pk_offset(s->pk), "%s: %s", what, why);
	return source_bad(s->src, &e, s->err);
}

static int nomem(struct snap *s)
{
	return memscope_error_set(s->err, MEMSCOPE_E_NOMEM, s->src->name, 0, "out of memory");
}

/* ---- values ---- */

/* The integer at key of dict n: 1 and *v, 0 when absent or None, -1 when not an integer. */
static int get_int(struct snap *s, const struct pk_node *n, enum key key, int64_t *v)
{
	const struct pk_val *x = pk_dict_get(s->pk, n, s->k[key]);

	if (!x || x->type == PK_NONE)
		return 0;
	if (x->type != PK_INT && x->type != PK_BOOL)
		return -1;
	*v = x->i;
	return 1;
}

/* The string id at key of dict n, 0 when absent or not a string. */
static uint32_t get_str(struct snap *s, const struct pk_node *n, enum key key)
{
	const struct pk_val *x = pk_dict_get(s->pk, n, s->k[key]);

	return x && x->type == PK_STR ? x->id : 0;
}

/* The string at key of dict n as the attr of that name, when it is there and not empty. */
static void attr_given(
	struct snap *s, struct memscope_event *ev, const struct pk_node *n, enum key key)
{
	uint32_t id = get_str(s, n, key);

	if (id != MEMSCOPE_STR_EMPTY)
		attr_str(s, ev, s->k[key], id);
}

/* The device of a list index or a device field: MEMSCOPE_DEVICE_NONE when out of range. */
static int32_t device_of(int64_t d)
{
	return d >= 0 && d <= INT32_MAX ? (int32_t)d : MEMSCOPE_DEVICE_NONE;
}

/* ---- stacks ---- */

static int pair_of(struct snap *s, uint32_t py, uint32_t c, uint32_t *pair)
{
	uint64_t key = (uint64_t)py << 32 | c, a, b;

	if (u64map_get(&s->pair_of, key, &a, &b)) {
		*pair = (uint32_t)a;
		return 0;
	}
	if (grow_array(&s->pairs, &s->cap_pairs, s->n_pairs + 1, sizeof(*s->pairs)) ||
		u64map_put(&s->pair_of, key, s->n_pairs, 0))
		return nomem(s);
	s->pairs[s->n_pairs][0] = py;
	s->pairs[s->n_pairs][1] = c;
	*pair = (uint32_t)s->n_pairs++;
	return 0;
}

/* Whether a frame's file is Python's: "x.py", "<frozen runpy>". */
static int python_file(const char *f, size_t len)
{
	return (len >= 3 && memcmp(f + len - 3, ".py", 3) == 0) || (len && f[0] == '<');
}

/* The text of frame dict id as its stack shows it, interned, into *text and its kind into *py;
 * the dict is let go for that value (pk_node_done). 0 or an error. */
static int frame_text(struct snap *s, uint32_t id, uint32_t *text, int *py)
{
	const struct pk_node *n = pk_node(s->pk, id);
	uint32_t file = get_str(s, n, K_FILENAME), name = get_str(s, n, K_NAME);
	const char *f, *fn;
	char line[24];
	size_t f_len, fn_len, l_len = 0;
	uint32_t n_strs = memscope_strtab_count(s->st);
	int64_t l = 0;
	int rc = 0;

	f = memscope_strtab_str(s->st, file, &f_len);
	fn = memscope_strtab_str(s->st, name, &fn_len);
	if (get_int(s, n, K_LINE, &l) == 1)
		l_len = fmt_i64(line, l);
	line[l_len] = '\0';
	*py = python_file(f, f_len);
	s->text.len = 0;
	if (*py)
		rc = buf_append(&s->text, f, f_len) || buf_append(&s->text, "(", 1) ||
		     buf_append(&s->text, line, l_len) || buf_append(&s->text, "): ", 3) ||
		     buf_append(&s->text, fn, fn_len);
	else if (!f_len || file == s->k[V_UNKNOWN_FRAME])
		rc = buf_append(&s->text, fn, fn_len);
	else
		rc = buf_append(&s->text, fn, fn_len) || buf_append(&s->text, " (", 2) ||
		     buf_append(&s->text, f, f_len) || buf_append(&s->text, ":", 1) ||
		     buf_append(&s->text, line, l_len) || buf_append(&s->text, ")", 1);
	if (rc || memscope_strtab_intern(s->st, s->text.p, s->text.len, text))
		return nomem(s);
	if (memscope_strtab_count(s->st) > n_strs &&
		(s->frame_text += s->text.len) > SNAP_FRAME_TEXT)
		return memscope_error_set_offset(s->err, MEMSCOPE_E_INVALID, s->src->name,
			pk_offset(s->pk), "the frames' text passes %u MiB", SNAP_FRAME_TEXT >> 20);
	return pk_node_done(s->pk, id, PK_FRAME, *text, (uint8_t)*py);
}

/* Append one frame to the Python or C list of frames. */
static int add_frame(struct snap *s, uint32_t text, int py, size_t *n_py, size_t *n_c)
{
	uint32_t **a = py ? &s->py : &s->c;
	size_t *cap = py ? &s->cap_py : &s->cap_c, *n = py ? n_py : n_c;

	if (*n >= *cap && grow_array(a, cap, *n + 1, sizeof(**a)))
		return nomem(s);
	(*a)[(*n)++] = text;
	return 0;
}

/* The stacks of a frames value into *pair (0: none): a list is turned into its stacks once and
 * keeps them (pk_node_done), so a list the file shares is read once. 0 or an error. */
static int stacks_of(struct snap *s, const struct pk_val *frames, uint32_t *pair)
{
	struct pk_node *n;
	size_t n_py = 0, n_c = 0, i;
	uint32_t py = 0, c = 0, id;
	int rc = 0;

	*pair = 0;
	if (!frames || (frames->type != PK_PAIR && frames->type != PK_NODE))
		return 0;
	if (frames->type == PK_PAIR) {
		*pair = frames->id;
		return 0;
	}
	id = frames->id;
	n = pk_node(s->pk, id);
	if (n->done == PK_PAIR)
		*pair = n->aux;
	if (n->done || (n->kind != PK_LIST && n->kind != PK_TUPLE))
		return 0;
	for (i = 0; i < n->n && !rc; i++) {
		const struct pk_val *v = &pk_node(s->pk, id)->items[i];
		uint32_t text;
		int is_py;

		if (v->type == PK_FRAME) {
			rc = add_frame(s, v->id, v->flag, &n_py, &n_c);
		} else if (v->type == PK_NODE && pk_node(s->pk, v->id)->done == PK_FRAME) {
			const struct pk_node *f = pk_node(s->pk, v->id);

			rc = add_frame(s, f->aux, f->flag, &n_py, &n_c);
		} else if (v->type == PK_NODE && pk_node(s->pk, v->id)->kind == PK_DICT &&
			   !pk_node(s->pk, v->id)->done) {
			rc = frame_text(s, v->id, &text, &is_py);
			if (!rc)
				rc = add_frame(s, text, is_py, &n_py, &n_c);
		}
	}
	if (!rc && n_py && memscope_strtab_intern_stack(s->st, s->py, n_py, &py))
		rc = nomem(s);
	if (!rc && n_c && memscope_strtab_intern_stack(s->st, s->c, n_c, &c))
		rc = nomem(s);
	if (!rc)
		rc = pair_of(s, py, c, pair);
	return rc ? rc : pk_node_done(s->pk, id, PK_PAIR, *pair, 0);
}

/* ---- trace entries ---- */

/* The time before a device's first trace entry, for what was allocated before the trace. */
static uint64_t before_ts(struct snap *s, int32_t device)
{
	uint64_t t, b;

	if (!u64map_get(&s->first_ts, (uint64_t)(int64_t)device, &t, &b))
		return 0;
	return t >= 1000 ? t - 1000 : 0;
}

/* A MALLOC of what was allocated before the trace. */
static int emit_before(struct snap *s, const struct held *h)
{
	struct memscope_event ev;

	ev_start(s, &ev, MEMSCOPE_KIND_MALLOC, h->pool, h->device, before_ts(s, h->device));
	set_block(s, &ev, h->addr, h->size);
	set_stacks(s, &ev, h->pair);
	ev_attr_text(&s->ax, &ev, s->k[K_BEFORE_TRACE], "1", 1);
	if (h->requested >= 0)
		ev_attr_num(&s->ax, &ev, s->k[K_REQUESTED_SIZE], h->requested);
	if (h->text)
		attr_str(s, &ev, s->k[h->pool == MEMSCOPE_SUB_CUDA ? K_SEGMENT_TYPE : K_STATE],
			h->text);
	return emit(s, &ev);
}

/* The fields of a trace entry. */
struct entry {
	uint32_t action, pair;
	int32_t device;
	int has_addr, has_size, has_stream;
	int64_t addr, size, stream;
	uint64_t ts;
};

/* A MALLOC or FREE of pool for entry e: the live map kept, a FREE of a block the trace did not
 * allocate preceded by its MALLOC (before_trace). */
static int block_event(struct snap *s, const struct pk_node *n, const struct entry *e,
	unsigned kind, unsigned pool)
{
	struct u64map *live = &s->live[pool == MEMSCOPE_SUB_CUDA];
	struct memscope_event ev;
	uint64_t a, b, addr = (uint64_t)e->addr;
	int rc;

	if (!e->has_addr || !e->has_size || e->size < 0)
		return bad(s, "trace entry", "an alloc or free without its addr or size");
	if (kind == MEMSCOPE_KIND_MALLOC) {
		if (u64map_put(live, addr, (uint64_t)(int64_t)e->device, 0))
			return nomem(s);
	} else if (!u64map_del(live, addr, &a, &b)) {
		struct held h = { addr, e->size, -1, e->device, (uint16_t)pool, 0, 0 };

		if ((rc = emit_before(s, &h)))
			return rc;
	}
	ev_start(s, &ev, kind, pool, e->device, e->ts);
	set_block(s, &ev, addr, e->size);
	set_stacks(s, &ev, e->pair);
	if (e->has_stream)
		ev_attr_num(&s->ax, &ev, s->k[K_STREAM], e->stream);
	if (pool == MEMSCOPE_SUB_CUDA_CACHING && kind == MEMSCOPE_KIND_FREE &&
		u64map_del(&s->requested, addr, &a, &b))
		ev_attr_unum(&s->ax, &ev, s->k[V_FREE_REQUESTED], a);
	attr_given(s, &ev, n, K_USER_METADATA);
	attr_given(s, &ev, n, K_COMPILE_CONTEXT);
	return emit(s, &ev);
}

/* An entry that is not a block's: oom, snapshot, annotate, or an action not known. */
static int other_event(struct snap *s, const struct pk_node *n, const struct entry *e)
{
	struct memscope_event ev;
	int64_t v;

	if (e->action == s->k[V_OOM]) {
		ev_start(s, &ev, MEMSCOPE_KIND_OOM_DETAIL, MEMSCOPE_SUB_OOM_TRIGGER, e->device,
			e->ts);
		if (e->has_size) {
			ev.size = e->size;
			ev.flags |= MEMSCOPE_EV_SIZE;
			ev_attr_num(&s->ax, &ev, MEMSCOPE_STR_SIZE, e->size);
		}
		if (get_int(s, n, K_DEVICE_FREE, &v) == 1)
			ev_attr_num(&s->ax, &ev, s->k[K_DEVICE_FREE], v);
	} else if (e->action == s->k[V_SNAPSHOT]) {
		ev_start(s, &ev, MEMSCOPE_KIND_SNAPSHOT, MEMSCOPE_SUB_SNAPSHOT, e->device, e->ts);
	} else if (e->action == s->k[V_ANNOTATE]) {
		ev_start(s, &ev, MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_MARK, e->device, e->ts);
		ev.flags |= MEMSCOPE_EV_NAME_QUOTED; /* as the dump writes MSTX names */
		ev.name = get_str(s, n, K_NAME)		   ? get_str(s, n, K_NAME)
			  : get_str(s, n, K_USER_METADATA) ? get_str(s, n, K_USER_METADATA)
							   : s->k[V_ANNOTATE];
	} else {
		ev_start(s, &ev, MEMSCOPE_KIND_UNKNOWN, MEMSCOPE_SUB_UNKNOWN, e->device, e->ts);
		ev.kind_text = e->action;
		ev.subtype_text = MEMSCOPE_STR_NA;
		s->src->stats.n_unknown_kind++;
		if (e->has_addr) {
			ev.ptr = (uint64_t)e->addr;
			ev.flags |= MEMSCOPE_EV_PTR;
		}
		if (e->has_size) {
			ev.size = e->size;
			ev.flags |= MEMSCOPE_EV_SIZE;
			ev_attr_num(&s->ax, &ev, MEMSCOPE_STR_SIZE, e->size);
		}
	}
	if (e->has_stream)
		ev_attr_num(&s->ax, &ev, s->k[K_STREAM], e->stream);
	attr_given(s, &ev, n, K_USER_METADATA);
	attr_given(s, &ev, n, K_COMPILE_CONTEXT);
	set_stacks(s, &ev, e->pair);
	return emit(s, &ev);
}

static int trace_entry(struct snap *s, uint32_t id, int64_t device)
{
	const struct pk_node *n = pk_node(s->pk, id);
	struct entry e = { 0 };
	int64_t t = 0;
	int rc, has_t;
	uint64_t a, b;

	e.device = device_of(device);
	e.action = get_str(s, n, K_ACTION);
	if (!e.action)
		return bad(s, "trace entry", "its action is not a string");
	if ((e.has_addr = get_int(s, n, K_ADDR, &e.addr)) < 0 ||
		(e.has_size = get_int(s, n, K_SIZE, &e.size)) < 0 ||
		(e.has_stream = get_int(s, n, K_STREAM, &e.stream)) < 0 ||
		(has_t = get_int(s, n, K_TIME_US, &t)) < 0)
		return bad(s, "trace entry", "addr, size, stream or time_us is not an integer");
	if (t < 0 || (uint64_t)t > UINT64_MAX / 1000)
		return bad(s, "trace entry", "time_us out of range");
	e.ts = (uint64_t)t * 1000;
	/* the device's first entry, with a time or not (then 0) */
	if (!u64map_get(&s->first_ts, (uint64_t)(int64_t)e.device, &a, &b) &&
		u64map_put(&s->first_ts, (uint64_t)(int64_t)e.device, e.ts, 0))
		return nomem(s);
	if ((rc = stacks_of(s, pk_dict_get(s->pk, pk_node(s->pk, id), s->k[K_FRAMES]), &e.pair)))
		return rc;
	n = pk_node(s->pk, id);
	if (e.action == s->k[V_ALLOC])
		return block_event(s, n, &e, MEMSCOPE_KIND_MALLOC, MEMSCOPE_SUB_CUDA_CACHING);
	if (e.action == s->k[V_FREE_COMPLETED])
		return block_event(s, n, &e, MEMSCOPE_KIND_FREE, MEMSCOPE_SUB_CUDA_CACHING);
	if (e.action == s->k[V_SEGMENT_ALLOC] || e.action == s->k[V_SEGMENT_MAP])
		return block_event(s, n, &e, MEMSCOPE_KIND_MALLOC, MEMSCOPE_SUB_CUDA);
	if (e.action == s->k[V_SEGMENT_FREE] || e.action == s->k[V_SEGMENT_UNMAP])
		return block_event(s, n, &e, MEMSCOPE_KIND_FREE, MEMSCOPE_SUB_CUDA);
	if (e.action == s->k[V_FREE_REQUESTED]) {
		if (!e.has_addr)
			return bad(s, "trace entry", "a free_requested without its addr");
		return u64map_put(&s->requested, (uint64_t)e.addr, e.ts, 0) ? nomem(s) : 0;
	}
	return other_event(s, n, &e);
}

/* ---- segments and annotations ---- */

static int hold(struct snap *s, const struct held *h)
{
	if (grow_array(&s->held, &s->cap_held, s->n_held + 1, sizeof(*s->held)))
		return nomem(s);
	s->held[s->n_held++] = *h;
	return 0;
}

/* The history of a block (older snapshots): every entry's frames turned into stacks, the last
 * entry's into *pair and its real_size into *requested when it has one, then the entries and the
 * list let go (pk_node_done), so the memo does not keep them. 0 or an error. */
static int block_history(struct snap *s, uint32_t hist_id, uint32_t *pair, int64_t *requested)
{
	uint32_t i, e_id, e_pair;
	int64_t v;
	int rc;

	for (i = 0; i < pk_node(s->pk, hist_id)->n; i++) {
		const struct pk_val *e = &pk_node(s->pk, hist_id)->items[i];
		int last = i + 1 == pk_node(s->pk, hist_id)->n;

		if (e->type != PK_NODE || pk_node(s->pk, e->id)->kind != PK_DICT ||
			pk_node(s->pk, e->id)->done)
			continue;
		e_id = e->id;
		if (last && get_int(s, pk_node(s->pk, e_id), K_REAL_SIZE, &v) == 1)
			*requested = v;
		if ((rc = stacks_of(s, pk_dict_get(s->pk, pk_node(s->pk, e_id), s->k[K_FRAMES]),
			     &e_pair)) ||
			(rc = pk_node_done(s->pk, e_id, PK_PAIR, 0, 0)))
			return rc;
		if (last)
			*pair = e_pair;
	}
	return pk_node_done(s->pk, hist_id, PK_PAIR, 0, 0);
}

/* One block of a segment: kept when it holds a tensor (active_*). Its frames (or history) are
 * turned into stacks whatever its state, so the memo keeps none of it once the block goes. */
static int segment_block(struct snap *s, uint32_t id, int32_t device)
{
	const struct pk_node *n = pk_node(s->pk, id);
	const struct pk_val *hist;
	struct held h = { 0 };
	uint32_t state, hist_pair = 0;
	int64_t addr = 0, v, real;
	int rc, active, has_frames;

	if (n->kind != PK_DICT || n->done)
		return 0;
	state = get_str(s, n, K_STATE);
	active = state == s->k[V_ACTIVE_ALLOCATED] || state == s->k[V_ACTIVE_PENDING_FREE];
	if (active && (get_int(s, n, K_ADDRESS, &addr) != 1 ||
			      get_int(s, n, K_SIZE, &h.size) != 1 || h.size < 0))
		return bad(s, "segment block", "its address or size is not an integer");
	h.addr = (uint64_t)addr;
	h.requested = real = get_int(s, n, K_REQUESTED_SIZE, &v) == 1 ? v : -1;
	has_frames = pk_dict_get(s->pk, n, s->k[K_FRAMES]) != NULL;
	if ((rc = stacks_of(s, pk_dict_get(s->pk, n, s->k[K_FRAMES]), &h.pair)))
		return rc;
	/* looked up after the frames: a hostile frames list holding this dict let its items go */
	hist = pk_dict_get(s->pk, pk_node(s->pk, id), s->k[K_HISTORY]);
	if (hist && hist->type == PK_NODE) {
		/* older snapshots: the block's last allocation in its history */
		if ((rc = block_history(s, hist->id, &hist_pair, &real)))
			return rc;
		if (!has_frames) {
			h.pair = hist_pair;
			h.requested = real;
		}
	}
	if (!active)
		return 0;
	h.device = device;
	h.pool = MEMSCOPE_SUB_CUDA_CACHING;
	h.text = state;
	return hold(s, &h);
}

static int segment(struct snap *s, uint32_t id)
{
	const struct pk_node *n = pk_node(s->pk, id);
	const struct pk_val *blocks;
	struct held h = { 0 };
	int64_t addr, device = -1;
	uint32_t i, blocks_id;
	int rc;

	if (get_int(s, n, K_ADDRESS, &addr) != 1 || get_int(s, n, K_TOTAL_SIZE, &h.size) != 1 ||
		h.size < 0 || get_int(s, n, K_DEVICE, &device) < 0)
		return bad(s, "segment", "its address, total_size or device is not an integer");
	h.addr = (uint64_t)addr;
	h.requested = -1;
	h.device = device_of(device);
	h.pool = MEMSCOPE_SUB_CUDA;
	h.text = get_str(s, n, K_SEGMENT_TYPE);
	if ((rc = stacks_of(s, pk_dict_get(s->pk, pk_node(s->pk, id), s->k[K_FRAMES]), &h.pair)) ||
		(rc = hold(s, &h)))
		return rc;
	/* looked up after its frames: a hostile frames list holding this dict let its items go */
	blocks = pk_dict_get(s->pk, pk_node(s->pk, id), s->k[K_BLOCKS]);
	if (!blocks || blocks->type != PK_NODE)
		return 0;
	/* each block, then the list, let go once read (pk_node_done): the memo keeps none of them,
	 * and a list two segments share is read once */
	blocks_id = blocks->id;
	for (i = 0; i < pk_node(s->pk, blocks_id)->n; i++) {
		const struct pk_val *b = &pk_node(s->pk, blocks_id)->items[i];
		uint32_t b_id = b->id;

		if (b->type != PK_NODE || pk_node(s->pk, b_id)->kind != PK_DICT)
			continue;
		if ((rc = segment_block(s, b_id, h.device)) ||
			(rc = pk_node_done(s->pk, b_id, PK_PAIR, 0, 0)))
			return rc;
	}
	return pk_node_done(s->pk, blocks_id, PK_PAIR, 0, 0);
}

static int annotation(struct snap *s, uint32_t id)
{
	const struct pk_node *n = pk_node(s->pk, id);
	uint32_t stage = get_str(s, n, K_STAGE), name = get_str(s, n, K_NAME);
	struct memscope_event ev;
	int64_t device = -1, t = 0;

	if (stage != s->k[V_START] && stage != s->k[V_END])
		return bad(s, "annotation", "its stage is neither START nor END");
	if (get_int(s, n, K_DEVICE, &device) < 0 || get_int(s, n, K_TIME_US, &t) < 0 || t < 0 ||
		(uint64_t)t > UINT64_MAX / 1000)
		return bad(s, "annotation", "its device or time_us is not an integer");
	ev_start(s, &ev, MEMSCOPE_KIND_OP_LAUNCH,
		stage == s->k[V_START] ? MEMSCOPE_SUB_ATEN_START : MEMSCOPE_SUB_ATEN_END,
		device_of(device), (uint64_t)t * 1000);
	ev.name = name ? name : MEMSCOPE_STR_NA;
	return emit(s, &ev);
}

/* pk_item_fn: trace entries, segments and annotations are taken as they are appended. */
static int on_item(void *ctx, struct pk *p, const struct pk_val *item, int64_t list_index)
{
	struct snap *s = ctx;
	const struct pk_node *n;
	int rc;

	if (item->type != PK_NODE)
		return 0;
	n = pk_node(p, item->id);
	if (n->kind != PK_DICT || n->done || n->n > SNAP_RECORD_ITEMS)
		return 0;
	if (pk_dict_get(p, n, s->k[K_ACTION]))
		rc = trace_entry(s, item->id, list_index);
	else if (pk_dict_get(p, n, s->k[K_TOTAL_SIZE]))
		rc = segment(s, item->id);
	else if (pk_dict_get(p, n, s->k[K_STAGE]))
		rc = annotation(s, item->id);
	else
		return 0;
	return rc < 0 ? rc : 1;
}

/* After the trace: the segments and blocks of the state the trace did not allocate. */
static int emit_held(struct snap *s)
{
	size_t i;
	uint64_t a, b;
	int rc;

	for (i = 0; i < s->n_held; i++) {
		const struct held *h = &s->held[i];

		if (u64map_get(&s->live[h->pool == MEMSCOPE_SUB_CUDA], h->addr, &a, &b))
			continue;
		if ((rc = emit_before(s, h)))
			return rc;
	}
	return 0;
}

static void snap_free(struct snap *s)
{
	pk_free(s->pk);
	u64map_free(&s->live[0]);
	u64map_free(&s->live[1]);
	u64map_free(&s->requested);
	u64map_free(&s->first_ts);
	u64map_free(&s->pair_of);
	free(s->held);
	free(s->pairs);
	free(s->py);
	free(s->c);
	buf_free(&s->text);
}

static int snapshot_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct snap s = { .src = src, .st = src->st, .fn = fn, .ctx = ctx, .err = err };
	struct pk_val root;
	uint32_t none;
	int rc = 0, i;

	for (i = 0; i < K_COUNT && !rc; i++)
		rc = memscope_strtab_intern(s.st, key_text[i], strlen(key_text[i]), &s.k[i]);
	if (rc || pair_of(&s, 0, 0, &none)) {
		rc = nomem(&s);
		goto out;
	}
	src->stats.layout = MEMSCOPE_LAYOUT_CURRENT;
	rc = pk_read(&s.pk, src, on_item, &s, &root, err);
	if (rc == MEMSCOPE_E_TRUNCATED && src->opts.lenient) {
		/* a cut snapshot: what was read is the input (the state, then the trace) */
		src->stats.cut = *err;
		rc = emit_held(&s);
		goto out;
	}
	if (!rc &&
		(root.type != PK_NODE || pk_node(s.pk, root.id)->kind != PK_DICT ||
			(!pk_dict_get(s.pk, pk_node(s.pk, root.id), s.k[K_SEGMENTS]) &&
				!pk_dict_get(s.pk, pk_node(s.pk, root.id), s.k[K_DEVICE_TRACES]))))
		rc = memscope_error_set_offset(err, MEMSCOPE_E_INVALID, src->name, pk_offset(s.pk),
			"not a PyTorch memory snapshot: a pickle without segments or "
			"device_traces");
	if (!rc)
		rc = emit_held(&s);
out:
	snap_free(&s);
	return rc;
}

/* A pickle of protocol 2 to 5 (PROTO): whether it is a snapshot, and safe, its read says. */
static int snapshot_sniff(
	const unsigned char *p, size_t n, int eof, const char *name, struct memscope_error *err)
{
	(void)eof, (void)name, (void)err;
	return n >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5;
}

const struct reader torch_snapshot_reader = {
	.format = MEMSCOPE_FORMAT_TORCH_SNAPSHOT,
	.name = "torch-snapshot",
	.what = "a PyTorch memory snapshot",
	.sniff = snapshot_sniff,
	.read = snapshot_read,
};
