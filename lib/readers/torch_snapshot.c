/* Reader of PyTorch CUDA memory snapshots (formats/torch-snapshot.md): the pickle's trace entries,
 * segments and annotations turned into events as the pickle machine (pickle.h) reads them. */
#include <stdlib.h>
#include <string.h>

#include "../core/u64map.h"
#include "../core/u64tree.h"
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
	K_EXTERNAL_ANNOTATIONS,
	K_BEFORE_TRACE,
	K_BLOCK_SIZE,
	K_REMAINS_OF,
	K_RESERVED,
	K_ALLOCATED,
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
	"external_annotations",
	"before_trace",
	"block_size",
	"remains_of",
	"reserved",
	"allocated",
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

/* The two pools, as the per-device figures index them. */
enum { P_BLOCKS, P_CUDA };

/* A segment or block of the snapshot's state, delivered at the end when the trace did not
 * allocate it. */
struct held {
	uint64_t addr;
	int64_t size;	    /* its bytes: a block's requested size, a segment's total_size */
	int64_t block_size; /* a block's size as the allocator rounded it, -1 when it is size */
	int32_t device;
	uint16_t pool;
	uint32_t pair; /* its stacks */
	uint32_t text; /* segment_type or state: string id, 0 none */
};

/* A trace entry's fields (string ids 0 when absent or empty). */
struct entry {
	uint32_t action, pair, user_metadata, compile_context, name;
	int32_t device;
	uint8_t has_addr, has_size, has_stream, has_device_free;
	int64_t addr, size, stream, device_free;
	uint64_t ts;
};

/* What the reader knows of one device: when its trace starts, and the bytes of each pool alive
 * from the trace and delivered as allocated before it (the state at an oom entry). Sums wrap
 * modulo 2^64: exact whenever the figure they make fits. */
struct dev {
	int32_t device;
	uint8_t has_first;
	uint64_t first_ts;
	uint64_t live[2];   /* bytes alive that the trace allocated (P_BLOCKS, P_CUDA) */
	uint64_t before[2]; /* bytes delivered so far as allocated before the trace */
};

/* An oom entry, delivered after the file with the state at its time. */
struct oom {
	struct entry e;
	uint64_t live[2], before[2]; /* its device's figures at its time */
};

/* A list of trace entries, kept (its first entries) in case it is an item of device_traces again
 * (a memo reference: Python then reads its entries for that device too). */
struct kept_list {
	uint32_t parent; /* the list it was first put into */
	uint32_t first, n;
	int32_t device;
	uint8_t placed, cut; /* put into its parent; not all its entries kept */
};

/* A record (trace entry, segment, annotation) has a dozen keys: a dict of more items is not
 * looked into, as a pickle appending one big dict again and again would make the lookups cost
 * its size at every append. */
#define SNAP_RECORD_ITEMS 256
/* Bytes of the distinct frames' text: a frame dict of a few bytes can name a long string the
 * memo shares, so the text is bounded apart from the file's size. */
#define SNAP_FRAME_TEXT (256u << 20)
/* Trace entries kept for a list read again, and oom entries kept for the end. */
#define SNAP_KEPT_ENTRIES (1u << 16)
#define SNAP_OOMS (1u << 12)

struct snap {
	struct memscope_source *src;
	struct memscope_strtab *st;
	memscope_event_fn fn;
	void *ctx;
	struct memscope_error *err;
	struct pk *pk;
	uint32_t k[K_COUNT];
	uint64_t n_ev;
	struct u64map live;	 /* CUDA_CACHING blocks by address: a device, b bytes */
	struct u64tree mapped;	 /* CUDA memory by address: a bytes, b device << 32 | stacks */
	struct u64map requested; /* address -> free_requested time */
	struct u64map dev_of;	 /* device -> its index in devs */
	struct dev *devs;
	size_t n_devs, cap_devs;
	struct held *held;
	size_t n_held, cap_held;
	struct entry *kept;
	size_t n_kept, cap_kept;
	struct kept_list *lists;
	size_t n_lists, cap_lists;
	struct oom *ooms;
	size_t n_ooms, cap_ooms;
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
	ms__event_set_pool(ev, s->st);
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

/* A string attr of an entry, left out when it says nothing: empty (0) or "N/A". */
static void attr_given(struct snap *s, struct memscope_event *ev, enum key key, uint32_t id)
{
	if (id != MEMSCOPE_STR_EMPTY && id != MEMSCOPE_STR_NA)
		attr_str(s, ev, s->k[key], id);
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
		&e, MEMSCOPE_E_INVALID, s->src->name, ms__pk_offset(s->pk), "%s: %s", what, why);
	return ms__source_bad(s->src, &e, s->err);
}

static int nomem(struct snap *s)
{
	return memscope_error_set(s->err, MEMSCOPE_E_NOMEM, s->src->name, 0, "out of memory");
}

/* ---- values ---- */

/* The integer at key of dict n: 1 and *v, 0 when absent or None, -1 when not an integer. */
static int get_int(struct snap *s, const struct ms__pk_node *n, enum key key, int64_t *v)
{
	const struct pk_val *x = ms__pk_dict_get(s->pk, n, s->k[key]);

	if (!x || x->type == PK_NONE)
		return 0;
	if (x->type != PK_INT && x->type != PK_BOOL)
		return -1;
	*v = x->i;
	return 1;
}

/* The string id at key of dict n, 0 when absent or not a string. */
static uint32_t get_str(struct snap *s, const struct ms__pk_node *n, enum key key)
{
	const struct pk_val *x = ms__pk_dict_get(s->pk, n, s->k[key]);

	return x && x->type == PK_STR ? x->id : 0;
}

/* The device of a list index or a device field: MEMSCOPE_DEVICE_NONE when out of range. */
static int32_t device_of(int64_t d)
{
	return d >= 0 && d <= INT32_MAX ? (int32_t)d : MEMSCOPE_DEVICE_NONE;
}

/* The figures of device d into *out (made on first use, its index; valid until the next call).
 * 0 or an error. */
static int dev_get(struct snap *s, int32_t device, struct dev **out)
{
	uint64_t at, b;

	if (!ms__u64map_get(&s->dev_of, (uint64_t)(int64_t)device, &at, &b)) {
		if (ms__grow_array(&s->devs, &s->cap_devs, s->n_devs + 1, sizeof(*s->devs)) ||
			ms__u64map_put(&s->dev_of, (uint64_t)(int64_t)device, s->n_devs, 0))
			return nomem(s);
		at = s->n_devs++;
		s->devs[at].device = device;
	}
	*out = &s->devs[at];
	return 0;
}

/* bytes more (add) or fewer (!add) alive from the trace in pool p of device d. */
static int count_live(struct snap *s, int32_t device, int p, uint64_t bytes, int add)
{
	struct dev *d;
	int rc = dev_get(s, device, &d);

	if (!rc)
		d->live[p] = add ? d->live[p] + bytes : d->live[p] - bytes;
	return rc;
}

/* ---- stacks ---- */

static int pair_of(struct snap *s, uint32_t py, uint32_t c, uint32_t *pair)
{
	uint64_t key = (uint64_t)py << 32 | c, a, b;

	if (ms__u64map_get(&s->pair_of, key, &a, &b)) {
		*pair = (uint32_t)a;
		return 0;
	}
	if (ms__grow_array(&s->pairs, &s->cap_pairs, s->n_pairs + 1, sizeof(*s->pairs)) ||
		ms__u64map_put(&s->pair_of, key, s->n_pairs, 0))
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

/* Whether s[0..len) holds the text w. */
static int holds(const char *s, size_t len, const char *w)
{
	size_t n = strlen(w), i;

	for (i = 0; n <= len && i <= len - n; i++)
		if (s[i] == w[0] && memcmp(s + i, w, n) == 0)
			return 1;
	return 0;
}

/* Whether a C frame is the recorder's, the caching allocator's or the interpreter's own
 * (formats/torch-snapshot.md "Stacks"): left out of the stacks, so they show the caller. */
static int own_frame(const char *fn, size_t fn_len, const char *f, size_t f_len)
{
	static const char *const names[] = {
		"unwind::unwind",
		"CapturedTraceback::gather",
		"gather_with_cpp",
		"CUDACachingAllocator",
		"__libc_start_main",
		"PyEval_",
		"PyObject_",
		"PyFunction_",
	};
	static const char *const files[] = {
		"core/boxing",
		"/Register",
		"/Redispatch",
		"pythonrun.c",
		"Modules/main.c",
		"Objects/call.c",
		"Objects/methodobject.c",
		"pycore_ceval.h",
		"ceval.c",
		"cpython/abstract.h",
	};
	size_t i;

	if (fn_len == 6 && memcmp(fn, "_start", 6) == 0)
		return 1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (holds(fn, fn_len, names[i]))
			return 1;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (holds(f, f_len, files[i]))
			return 1;
	return 0;
}

/* The kinds of frame (a PK_FRAME value's flag). */
enum { FRAME_C, FRAME_PY, FRAME_OWN };

/* The text of frame dict id as its stack shows it, interned, into *text and its kind into *kind
 * (FRAME_OWN: left out, no text); the dict is let go for that value (ms__pk_node_done). 0 or an
 * error. */
static int frame_text(struct snap *s, uint32_t id, uint32_t *text, int *kind)
{
	const struct ms__pk_node *n = ms__pk_node(s->pk, id);
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
		l_len = ms__fmt_i64(line, l);
	line[l_len] = '\0';
	*text = 0;
	*kind = python_file(f, f_len)		  ? FRAME_PY
		: own_frame(fn, fn_len, f, f_len) ? FRAME_OWN
						  : FRAME_C;
	if (*kind == FRAME_OWN)
		return ms__pk_node_done(s->pk, id, PK_FRAME, 0, FRAME_OWN);
	s->text.len = 0;
	if (*kind == FRAME_PY)
		rc = ms__buf_append(&s->text, f, f_len) || ms__buf_append(&s->text, "(", 1) ||
		     ms__buf_append(&s->text, line, l_len) || ms__buf_append(&s->text, "): ", 3) ||
		     ms__buf_append(&s->text, fn, fn_len);
	else if (!f_len || file == s->k[V_UNKNOWN_FRAME])
		rc = ms__buf_append(&s->text, fn, fn_len);
	else
		rc = ms__buf_append(&s->text, fn, fn_len) || ms__buf_append(&s->text, " (", 2) ||
		     ms__buf_append(&s->text, f, f_len) || ms__buf_append(&s->text, ":", 1) ||
		     ms__buf_append(&s->text, line, l_len) || ms__buf_append(&s->text, ")", 1);
	if (rc || memscope_strtab_intern(s->st, s->text.p, s->text.len, text))
		return nomem(s);
	if (memscope_strtab_count(s->st) > n_strs &&
		(s->frame_text += s->text.len) > SNAP_FRAME_TEXT)
		return memscope_error_set_offset(s->err, MEMSCOPE_E_INVALID, s->src->name,
			ms__pk_offset(s->pk), "the frames' text passes %u MiB",
			SNAP_FRAME_TEXT >> 20);
	return ms__pk_node_done(s->pk, id, PK_FRAME, *text, (uint8_t)*kind);
}

/* Append one frame to the Python or C list of frames (a frame of our own is left out). */
static int add_frame(struct snap *s, uint32_t text, int kind, size_t *n_py, size_t *n_c)
{
	uint32_t **a = kind == FRAME_PY ? &s->py : &s->c;
	size_t *cap = kind == FRAME_PY ? &s->cap_py : &s->cap_c, *n = kind == FRAME_PY ? n_py : n_c;

	if (kind == FRAME_OWN)
		return 0;
	if (*n >= *cap && ms__grow_array(a, cap, *n + 1, sizeof(**a)))
		return nomem(s);
	(*a)[(*n)++] = text;
	return 0;
}

/* The stacks of a frames value into *pair (0: none): a list is turned into its stacks once and
 * keeps them (ms__pk_node_done), so a list the file shares is read once. 0 or an error. */
static int stacks_of(struct snap *s, const struct pk_val *frames, uint32_t *pair)
{
	struct ms__pk_node *n;
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
	n = ms__pk_node(s->pk, id);
	if (n->done == PK_PAIR)
		*pair = n->aux;
	if (n->done || (n->kind != PK_LIST && n->kind != PK_TUPLE))
		return 0;
	for (i = 0; i < n->n && !rc; i++) {
		const struct pk_val *v = &ms__pk_node(s->pk, id)->items[i];
		uint32_t text;
		int kind;

		if (v->type == PK_FRAME) {
			rc = add_frame(s, v->id, v->flag, &n_py, &n_c);
		} else if (v->type == PK_NODE && ms__pk_node(s->pk, v->id)->done == PK_FRAME) {
			const struct ms__pk_node *f = ms__pk_node(s->pk, v->id);

			rc = add_frame(s, f->aux, f->flag, &n_py, &n_c);
		} else if (v->type == PK_NODE && ms__pk_node(s->pk, v->id)->kind == PK_DICT &&
			   !ms__pk_node(s->pk, v->id)->done) {
			rc = frame_text(s, v->id, &text, &kind);
			if (!rc)
				rc = add_frame(s, text, kind, &n_py, &n_c);
		}
	}
	if (!rc && n_py && memscope_strtab_intern_stack(s->st, s->py, n_py, &py))
		rc = nomem(s);
	if (!rc && n_c && memscope_strtab_intern_stack(s->st, s->c, n_c, &c))
		rc = nomem(s);
	if (!rc)
		rc = pair_of(s, py, c, pair);
	return rc ? rc : ms__pk_node_done(s->pk, id, PK_PAIR, *pair, 0);
}

/* ---- trace entries ---- */

/* The time before a device's first trace entry, for what was allocated before the trace. */
static uint64_t before_ts(struct snap *s, int32_t device)
{
	uint64_t at, b;
	const struct dev *d;

	if (!ms__u64map_get(&s->dev_of, (uint64_t)(int64_t)device, &at, &b))
		return 0;
	d = &s->devs[at];
	return d->has_first && d->first_ts >= 1000 ? d->first_ts - 1000 : 0;
}

/* A MALLOC of what was allocated before the trace (counted as such for its device). */
static int emit_before(struct snap *s, const struct held *h)
{
	struct memscope_event ev;
	struct dev *d;
	int p = h->pool == MEMSCOPE_SUB_CUDA ? P_CUDA : P_BLOCKS;

	if (dev_get(s, h->device, &d))
		return nomem(s);
	d->before[p] += (uint64_t)h->size;
	ev_start(s, &ev, MEMSCOPE_KIND_MALLOC, h->pool, h->device, before_ts(s, h->device));
	set_block(s, &ev, h->addr, h->size);
	set_stacks(s, &ev, h->pair);
	ev_attr_text(&s->ax, &ev, s->k[K_BEFORE_TRACE], "1", 1);
	if (h->block_size >= 0)
		ev_attr_num(&s->ax, &ev, s->k[K_BLOCK_SIZE], h->block_size);
	if (h->text)
		attr_str(s, &ev, s->k[h->pool == MEMSCOPE_SUB_CUDA ? K_SEGMENT_TYPE : K_STATE],
			h->text);
	return emit(s, &ev);
}

/* The event of trace entry e of kind in pool at addr, size: its stacks, stream and string attrs
 * (free_requested when it ends a block whose free was requested). */
static int emit_entry(struct snap *s, const struct entry *e, unsigned kind, unsigned pool,
	uint64_t addr, int64_t size)
{
	struct memscope_event ev;
	uint64_t a, b;

	ev_start(s, &ev, kind, pool, e->device, e->ts);
	set_block(s, &ev, addr, size);
	set_stacks(s, &ev, e->pair);
	if (e->has_stream)
		ev_attr_num(&s->ax, &ev, s->k[K_STREAM], e->stream);
	if (pool == MEMSCOPE_SUB_CUDA_CACHING && kind == MEMSCOPE_KIND_FREE &&
		ms__u64map_del(&s->requested, addr, &a, &b))
		ev_attr_unum(&s->ax, &ev, s->k[V_FREE_REQUESTED], a);
	attr_given(s, &ev, K_USER_METADATA, e->user_metadata);
	attr_given(s, &ev, K_COMPILE_CONTEXT, e->compile_context);
	return emit(s, &ev);
}

/* An alloc or free_completed: the block's live entry kept, a free of a block the trace did not
 * allocate preceded by its MALLOC (before_trace). */
static int block_event(struct snap *s, const struct entry *e, unsigned kind)
{
	uint64_t dev, bytes, addr = (uint64_t)e->addr;
	int rc;

	if (kind == MEMSCOPE_KIND_MALLOC) {
		if (ms__u64map_get(&s->live, addr, &dev, &bytes) &&
			(rc = count_live(s, (int32_t)dev, P_BLOCKS, bytes, 0)))
			return rc;
		if (ms__u64map_put(&s->live, addr, (uint64_t)(int64_t)e->device, (uint64_t)e->size))
			return nomem(s);
		if ((rc = count_live(s, e->device, P_BLOCKS, (uint64_t)e->size, 1)))
			return rc;
	} else if (ms__u64map_del(&s->live, addr, &dev, &bytes)) {
		if ((rc = count_live(s, (int32_t)dev, P_BLOCKS, bytes, 0)))
			return rc;
	} else {
		struct held h = { addr, e->size, -1, e->device, MEMSCOPE_SUB_CUDA_CACHING, 0, 0 };

		if ((rc = emit_before(s, &h)))
			return rc;
	}
	return emit_entry(s, e, kind, MEMSCOPE_SUB_CUDA_CACHING, addr, e->size);
}

/* ---- the CUDA pool: memory mapped by range ---- */

static uint64_t end_of(uint64_t addr, uint64_t size)
{
	return addr + size < addr ? UINT64_MAX : addr + size;
}

/* [addr, addr + size) mapped on device with stacks pair: kept by address and counted. */
static int map_range(struct snap *s, uint64_t addr, uint64_t size, int32_t device, uint32_t pair)
{
	uint64_t bytes, b;
	int rc;

	if (ms__u64tree_get(&s->mapped, addr, &bytes, &b) &&
		(rc = count_live(s, (int32_t)(b >> 32), P_CUDA, bytes, 0)))
		return rc;
	if (ms__u64tree_put(&s->mapped, addr, size, (uint64_t)(uint32_t)device << 32 | pair))
		return nomem(s);
	return count_live(s, device, P_CUDA, size, 1);
}

/* A segment_alloc or segment_map. */
static int cuda_malloc(struct snap *s, const struct entry *e)
{
	int rc = map_range(s, (uint64_t)e->addr, (uint64_t)e->size, e->device, e->pair);

	return rc ? rc
		  : emit_entry(s, e, MEMSCOPE_KIND_MALLOC, MEMSCOPE_SUB_CUDA, (uint64_t)e->addr,
			    e->size);
}

/* The piece at addr (bytes, b as mapped kept) freed by entry e whose range is [lo, hi): its FREE,
 * then the MALLOCs of its parts outside the range, which stay mapped (remains_of). */
static int free_piece(struct snap *s, const struct entry *e, uint64_t addr, uint64_t bytes,
	uint64_t b, uint64_t lo, uint64_t hi)
{
	uint64_t end = end_of(addr, bytes), part[2][2] = { { addr, lo }, { hi, end } };
	int32_t device = (int32_t)(b >> 32);
	int rc, i;

	ms__u64tree_del(&s->mapped, addr, NULL, NULL);
	if ((rc = count_live(s, device, P_CUDA, bytes, 0)) ||
		(rc = emit_entry(
			 s, e, MEMSCOPE_KIND_FREE, MEMSCOPE_SUB_CUDA, addr, (int64_t)bytes)))
		return rc;
	for (i = 0; i < 2; i++) {
		struct memscope_event ev;
		char *t = s->ax.num[1];

		if (part[i][0] >= part[i][1] || part[i][0] < addr || part[i][1] > end)
			continue;
		if ((rc = map_range(s, part[i][0], part[i][1] - part[i][0], device, (uint32_t)b)))
			return rc;
		ev_start(s, &ev, MEMSCOPE_KIND_MALLOC, MEMSCOPE_SUB_CUDA, device, e->ts);
		set_block(s, &ev, part[i][0], (int64_t)(part[i][1] - part[i][0]));
		set_stacks(s, &ev, (uint32_t)b);
		ms__fmt_hex16(t, addr);
		ev_attr_text(&s->ax, &ev, s->k[K_REMAINS_OF], t, 18);
		if ((rc = emit(s, &ev)))
			return rc;
	}
	return 0;
}

/* [addr, addr + size) of entry e's free that no piece of the trace holds: mapped before the
 * trace, so its MALLOC (before_trace), then its FREE. */
static int free_gap(struct snap *s, const struct entry *e, uint64_t addr, uint64_t size)
{
	struct held h = { addr, (int64_t)size, -1, e->device, MEMSCOPE_SUB_CUDA, 0, 0 };
	int rc = emit_before(s, &h);

	return rc ? rc
		  : emit_entry(s, e, MEMSCOPE_KIND_FREE, MEMSCOPE_SUB_CUDA, addr, (int64_t)size);
}

/* The first piece at or after lo that reaches past lo (one starting below lo included): 1 and
 * its key and values, or 0. */
static int first_piece(struct snap *s, uint64_t lo, uint64_t *k, uint64_t *a, uint64_t *b)
{
	if (ms__u64tree_floor(&s->mapped, lo, k, a, b) && (end_of(*k, *a) > lo || *k == lo))
		return 1;
	return ms__u64tree_after(&s->mapped, lo, k, a, b);
}

/* A segment_free or segment_unmap of [addr, addr + size): every piece the trace mapped there
 * freed (free_piece), the parts no piece holds freed as mapped before the trace (free_gap); a
 * size of 0 frees the piece at addr. */
static int cuda_free(struct snap *s, const struct entry *e)
{
	uint64_t lo = (uint64_t)e->addr, hi = end_of(lo, (uint64_t)e->size), at = lo, k, a, b;
	int rc = 0, more;

	if (lo == hi)
		return ms__u64tree_get(&s->mapped, lo, &a, &b)
			       ? free_piece(s, e, lo, a, b, lo, end_of(lo, a))
			       : free_gap(s, e, lo, 0);
	for (more = first_piece(s, lo, &k, &a, &b); more && k < hi && !rc;
		more = ms__u64tree_after(&s->mapped, k, &k, &a, &b)) {
		uint64_t end = end_of(k, a);

		if (k > at && (rc = free_gap(s, e, at, k - at)))
			break;
		rc = free_piece(s, e, k, a, b, lo, hi);
		at = end > at ? end : at;
	}
	if (!rc && at < hi)
		rc = free_gap(s, e, at, hi - at);
	return rc;
}

/* ---- other entries ---- */

/* The size an entry gives, when it gives one, into ev. */
static void entry_size(struct snap *s, struct memscope_event *ev, const struct entry *e)
{
	if (e->has_size) {
		ev->size = e->size;
		ev->flags |= MEMSCOPE_EV_SIZE;
		ev_attr_num(&s->ax, ev, MEMSCOPE_STR_SIZE, e->size);
	}
}

/* The end of an oom's or another entry's event ev: entry e's stream, string attrs and stacks,
 * then ev delivered. */
static int emit_tail(struct snap *s, struct memscope_event *ev, const struct entry *e)
{
	if (e->has_stream)
		ev_attr_num(&s->ax, ev, s->k[K_STREAM], e->stream);
	attr_given(s, ev, K_USER_METADATA, e->user_metadata);
	attr_given(s, ev, K_COMPILE_CONTEXT, e->compile_context);
	set_stacks(s, ev, e->pair);
	return emit(s, ev);
}

/* An oom entry's event (OOM_TRIGGER): what it asked for and what CUDA had free, and with o, the
 * state of its device then: bytes reserved (the CUDA pool) and allocated (the blocks), those
 * allocated before the trace and alive then included. */
static int emit_oom(struct snap *s, const struct entry *e, const struct oom *o)
{
	struct memscope_event ev;
	struct dev *d;

	ev_start(s, &ev, MEMSCOPE_KIND_OOM_DETAIL, MEMSCOPE_SUB_OOM_TRIGGER, e->device, e->ts);
	entry_size(s, &ev, e);
	if (e->has_device_free)
		ev_attr_num(&s->ax, &ev, s->k[K_DEVICE_FREE], e->device_free);
	if (o) {
		if (dev_get(s, e->device, &d))
			return nomem(s);
		ev_attr_unum(&s->ax, &ev, s->k[K_RESERVED],
			o->live[P_CUDA] + d->before[P_CUDA] - o->before[P_CUDA]);
		ev_attr_unum(&s->ax, &ev, s->k[K_ALLOCATED],
			o->live[P_BLOCKS] + d->before[P_BLOCKS] - o->before[P_BLOCKS]);
	}
	return emit_tail(s, &ev, e);
}

/* An oom entry: kept with its device's figures now, delivered after the file (emit_ooms), when
 * what was allocated before the trace is known; past SNAP_OOMS of them, delivered now without
 * the state. */
static int oom_entry(struct snap *s, const struct entry *e)
{
	struct dev *d;
	struct oom *o;

	if (s->n_ooms >= SNAP_OOMS)
		return emit_oom(s, e, NULL);
	if (dev_get(s, e->device, &d) ||
		ms__grow_array(&s->ooms, &s->cap_ooms, s->n_ooms + 1, sizeof(*s->ooms)))
		return nomem(s);
	o = &s->ooms[s->n_ooms++];
	o->e = *e;
	memcpy(o->live, d->live, sizeof(o->live));
	memcpy(o->before, d->before, sizeof(o->before));
	return 0;
}

/* An entry that is not a block's or an oom: snapshot, annotate, or an action not known. */
static int other_event(struct snap *s, const struct entry *e)
{
	struct memscope_event ev;

	if (e->action == s->k[V_SNAPSHOT]) {
		ev_start(s, &ev, MEMSCOPE_KIND_SNAPSHOT, MEMSCOPE_SUB_SNAPSHOT, e->device, e->ts);
	} else if (e->action == s->k[V_ANNOTATE]) {
		ev_start(s, &ev, MEMSCOPE_KIND_MSTX, MEMSCOPE_SUB_MARK, e->device, e->ts);
		ev.flags |= MEMSCOPE_EV_NAME_QUOTED; /* as the dump writes MSTX names */
		ev.name = e->name	     ? e->name
			  : e->user_metadata ? e->user_metadata
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
		entry_size(s, &ev, e);
	}
	return emit_tail(s, &ev, e);
}

/* The events of trace entry e (its device's). 0 or an error. */
static int process(struct snap *s, const struct entry *e)
{
	uint32_t a = e->action;
	struct dev *d;

	if (dev_get(s, e->device, &d))
		return nomem(s);
	if (!d->has_first) { /* the device's first entry, with a time or not (then 0) */
		d->has_first = 1;
		d->first_ts = e->ts;
	}
	if (a == s->k[V_ALLOC] || a == s->k[V_FREE_COMPLETED] || a == s->k[V_SEGMENT_ALLOC] ||
		a == s->k[V_SEGMENT_MAP] || a == s->k[V_SEGMENT_FREE] ||
		a == s->k[V_SEGMENT_UNMAP]) {
		if (!e->has_addr || !e->has_size || e->size < 0)
			return bad(s, "trace entry", "an alloc or free without its addr or size");
		if (a == s->k[V_ALLOC])
			return block_event(s, e, MEMSCOPE_KIND_MALLOC);
		if (a == s->k[V_FREE_COMPLETED])
			return block_event(s, e, MEMSCOPE_KIND_FREE);
		if (a == s->k[V_SEGMENT_ALLOC] || a == s->k[V_SEGMENT_MAP])
			return cuda_malloc(s, e);
		return cuda_free(s, e);
	}
	if (a == s->k[V_FREE_REQUESTED]) {
		if (!e->has_addr)
			return bad(s, "trace entry", "a free_requested without its addr");
		return ms__u64map_put(&s->requested, (uint64_t)e->addr, e->ts, 0) ? nomem(s) : 0;
	}
	if (a == s->k[V_OOM])
		return oom_entry(s, e);
	return other_event(s, e);
}

/* Trace entry id's fields into *e (device its list's place in device_traces); e->action 0 when
 * it cannot be read (then bad's status: 0 when skipped). */
static int parse_entry(struct snap *s, uint32_t id, int32_t device, struct entry *e)
{
	const struct ms__pk_node *n = ms__pk_node(s->pk, id);
	int64_t t = 0;
	int a, z, st, tm;

	memset(e, 0, sizeof(*e));
	e->device = device;
	if (!(e->action = get_str(s, n, K_ACTION)))
		return bad(s, "trace entry", "its action is not a string");
	if ((a = get_int(s, n, K_ADDR, &e->addr)) < 0 ||
		(z = get_int(s, n, K_SIZE, &e->size)) < 0 ||
		(st = get_int(s, n, K_STREAM, &e->stream)) < 0 ||
		(tm = get_int(s, n, K_TIME_US, &t)) < 0) {
		e->action = 0;
		return bad(s, "trace entry", "addr, size, stream or time_us is not an integer");
	}
	if (t < 0 || (uint64_t)t > UINT64_MAX / 1000) {
		e->action = 0;
		return bad(s, "trace entry", "time_us out of range");
	}
	e->has_addr = (uint8_t)a;
	e->has_size = (uint8_t)z;
	e->has_stream = (uint8_t)st;
	e->ts = (uint64_t)t * 1000;
	e->has_device_free = get_int(s, n, K_DEVICE_FREE, &e->device_free) == 1;
	e->user_metadata = get_str(s, n, K_USER_METADATA);
	e->compile_context = get_str(s, n, K_COMPILE_CONTEXT);
	e->name = get_str(s, n, K_NAME);
	/* the frames last: a hostile frames list holding this dict lets its items go */
	return stacks_of(s, ms__pk_dict_get(s->pk, n, s->k[K_FRAMES]), &e->pair);
}

/* ---- lists of entries read again ---- */

/* Entry e of list list_id kept (the first SNAP_KEPT_ENTRIES of the file) in case the list is put
 * into device_traces again. 0 or an error. */
static int keep_entry(struct snap *s, uint32_t list_id, const struct entry *e)
{
	struct ms__pk_node *l = ms__pk_node(s->pk, list_id);
	struct kept_list *k;

	if (l->done || l->kind != PK_LIST)
		return 0;
	if (!l->aux) {
		if (s->n_lists >= SNAP_KEPT_ENTRIES)
			return memscope_error_set_offset(s->err, MEMSCOPE_E_INVALID, s->src->name,
				ms__pk_offset(s->pk), "trace entries in more than %u lists",
				SNAP_KEPT_ENTRIES);
		if (ms__grow_array(&s->lists, &s->cap_lists, s->n_lists + 1, sizeof(*s->lists)))
			return nomem(s);
		s->lists[s->n_lists].first = (uint32_t)s->n_kept;
		s->lists[s->n_lists].device = e->device;
		l->aux = (uint32_t)++s->n_lists;
	}
	k = &s->lists[l->aux - 1];
	if (k->cut)
		return 0;
	if (k->first + k->n != s->n_kept || s->n_kept >= SNAP_KEPT_ENTRIES) {
		k->cut = 1; /* another list's entries came between, or no room: not all kept */
		return 0;
	}
	if (ms__grow_array(&s->kept, &s->cap_kept, s->n_kept + 1, sizeof(*s->kept)))
		return nomem(s);
	s->kept[s->n_kept++] = *e;
	k->n++;
	return 0;
}

/* List id appended to list_id: the first time, its place; put into that same list again (a memo
 * reference: device_traces holding one list for two devices), its entries read again for the
 * device of its index there, as Python reads them. 0 or an error. */
static int list_again(struct snap *s, uint32_t id, uint32_t list_id)
{
	const struct ms__pk_node *n = ms__pk_node(s->pk, id);
	struct kept_list *k;
	struct entry e;
	int32_t device;
	uint32_t i;
	int rc = 0;

	if (n->done || !n->aux)
		return 0;
	k = &s->lists[n->aux - 1];
	if (!k->placed) {
		k->placed = 1;
		k->parent = list_id;
		return 0;
	}
	if (k->parent != list_id)
		return 0;
	if (k->cut)
		return bad(s, "device_traces",
			"a trace list put in it again (a memo reference) whose entries were not "
			"all kept: not read twice");
	device = device_of(ms__pk_node(s->pk, list_id)->n); /* the index it is about to take */
	for (i = 0; i < k->n && !rc; i++) {
		e = s->kept[k->first + i];
		e.device = device;
		rc = process(s, &e);
	}
	return rc;
}

static int trace_entry(struct snap *s, uint32_t id, uint32_t list_id, int64_t index)
{
	struct entry e;
	int rc = parse_entry(s, id, device_of(index), &e);

	if (rc || !e.action)
		return rc;
	if ((rc = keep_entry(s, list_id, &e)))
		return rc;
	return process(s, &e);
}

/* ---- segments and annotations ---- */

static int hold(struct snap *s, const struct held *h)
{
	if (ms__grow_array(&s->held, &s->cap_held, s->n_held + 1, sizeof(*s->held)))
		return nomem(s);
	s->held[s->n_held++] = *h;
	return 0;
}

/* The history of a block (older snapshots): every entry's frames turned into stacks, the last
 * entry's into *pair and its real_size into *requested when it has one, then the entries and the
 * list let go (ms__pk_node_done), so the memo does not keep them. 0 or an error. */
static int block_history(struct snap *s, uint32_t hist_id, uint32_t *pair, int64_t *requested)
{
	uint32_t i, e_id, e_pair;
	int64_t v;
	int rc;

	for (i = 0; i < ms__pk_node(s->pk, hist_id)->n; i++) {
		const struct pk_val *e = &ms__pk_node(s->pk, hist_id)->items[i];
		int last = i + 1 == ms__pk_node(s->pk, hist_id)->n;

		if (e->type != PK_NODE || ms__pk_node(s->pk, e->id)->kind != PK_DICT ||
			ms__pk_node(s->pk, e->id)->done)
			continue;
		e_id = e->id;
		if (last && get_int(s, ms__pk_node(s->pk, e_id), K_REAL_SIZE, &v) == 1)
			*requested = v;
		if ((rc = stacks_of(s,
			     ms__pk_dict_get(s->pk, ms__pk_node(s->pk, e_id), s->k[K_FRAMES]),
			     &e_pair)) ||
			(rc = ms__pk_node_done(s->pk, e_id, PK_PAIR, 0, 0)))
			return rc;
		if (last)
			*pair = e_pair;
	}
	return ms__pk_node_done(s->pk, hist_id, PK_PAIR, 0, 0);
}

/* One block of a segment: kept when it holds a tensor (active_*), its bytes its requested size
 * (its size when it has none). Its frames (or history) are turned into stacks whatever its
 * state, so the memo keeps none of it once the block goes. */
static int segment_block(struct snap *s, uint32_t id, int32_t device)
{
	const struct ms__pk_node *n = ms__pk_node(s->pk, id);
	const struct pk_val *hist;
	struct held h = { 0 };
	uint32_t state, hist_pair = 0;
	int64_t addr = 0, size = 0, v, requested, real;
	int rc, active, has_frames;

	if (n->kind != PK_DICT || n->done)
		return 0;
	state = get_str(s, n, K_STATE);
	active = state == s->k[V_ACTIVE_ALLOCATED] || state == s->k[V_ACTIVE_PENDING_FREE];
	if (active && (get_int(s, n, K_ADDRESS, &addr) != 1 || get_int(s, n, K_SIZE, &size) != 1 ||
			      size < 0))
		return bad(s, "segment block", "its address or size is not an integer");
	requested = real = get_int(s, n, K_REQUESTED_SIZE, &v) == 1 && v >= 0 ? v : -1;
	has_frames = ms__pk_dict_get(s->pk, n, s->k[K_FRAMES]) != NULL;
	if ((rc = stacks_of(s, ms__pk_dict_get(s->pk, n, s->k[K_FRAMES]), &h.pair)))
		return rc;
	/* looked up after the frames: a hostile frames list holding this dict let its items go */
	hist = ms__pk_dict_get(s->pk, ms__pk_node(s->pk, id), s->k[K_HISTORY]);
	if (hist && hist->type == PK_NODE) {
		/* older snapshots: the block's last allocation in its history */
		if ((rc = block_history(s, hist->id, &hist_pair, &real)))
			return rc;
		if (!has_frames) {
			h.pair = hist_pair;
			requested = real >= 0 ? real : requested;
		}
	}
	if (!active)
		return 0;
	h.addr = (uint64_t)addr;
	h.size = requested >= 0 ? requested : size;
	h.block_size = size != h.size ? size : -1;
	h.device = device;
	h.pool = MEMSCOPE_SUB_CUDA_CACHING;
	h.text = state;
	return hold(s, &h);
}

static int segment(struct snap *s, uint32_t id)
{
	const struct ms__pk_node *n = ms__pk_node(s->pk, id);
	const struct pk_val *blocks;
	struct held h = { 0 };
	int64_t addr, device = -1;
	uint32_t i, blocks_id;
	int rc;

	if (get_int(s, n, K_ADDRESS, &addr) != 1 || get_int(s, n, K_TOTAL_SIZE, &h.size) != 1 ||
		h.size < 0 || get_int(s, n, K_DEVICE, &device) < 0)
		return bad(s, "segment", "its address, total_size or device is not an integer");
	h.addr = (uint64_t)addr;
	h.block_size = -1;
	h.device = device_of(device);
	h.pool = MEMSCOPE_SUB_CUDA;
	h.text = get_str(s, n, K_SEGMENT_TYPE);
	if ((rc = stacks_of(
		     s, ms__pk_dict_get(s->pk, ms__pk_node(s->pk, id), s->k[K_FRAMES]), &h.pair)) ||
		(rc = hold(s, &h)))
		return rc;
	/* looked up after its frames: a hostile frames list holding this dict let its items go */
	blocks = ms__pk_dict_get(s->pk, ms__pk_node(s->pk, id), s->k[K_BLOCKS]);
	if (!blocks || blocks->type != PK_NODE)
		return 0;
	/* each block, then the list, let go once read (ms__pk_node_done): the memo keeps none of
	 * them, and a list two segments share is read once */
	blocks_id = blocks->id;
	for (i = 0; i < ms__pk_node(s->pk, blocks_id)->n; i++) {
		const struct pk_val *b = &ms__pk_node(s->pk, blocks_id)->items[i];
		uint32_t b_id = b->id;

		if (b->type != PK_NODE || ms__pk_node(s->pk, b_id)->kind != PK_DICT)
			continue;
		if ((rc = segment_block(s, b_id, h.device)) ||
			(rc = ms__pk_node_done(s->pk, b_id, PK_PAIR, 0, 0)))
			return rc;
	}
	return ms__pk_node_done(s->pk, blocks_id, PK_PAIR, 0, 0);
}

static int annotation(struct snap *s, uint32_t id)
{
	const struct ms__pk_node *n = ms__pk_node(s->pk, id);
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

/* pk_item_fn: trace entries, segments and annotations are taken as they are appended; a list of
 * entries put into device_traces again is read again (list_again). */
static int on_item(
	void *ctx, struct pk *p, const struct pk_val *item, uint32_t list_id, int64_t list_index)
{
	struct snap *s = ctx;
	const struct ms__pk_node *n;
	int rc;

	if (item->type != PK_NODE)
		return 0;
	n = ms__pk_node(p, item->id);
	if (n->kind == PK_LIST)
		return list_again(s, item->id, list_id);
	if (n->kind != PK_DICT || n->done || n->n > SNAP_RECORD_ITEMS)
		return 0;
	if (ms__pk_dict_get(p, n, s->k[K_ACTION]))
		rc = trace_entry(s, item->id, list_id, list_index);
	else if (ms__pk_dict_get(p, n, s->k[K_TOTAL_SIZE]))
		rc = segment(s, item->id);
	else if (ms__pk_dict_get(p, n, s->k[K_STAGE]))
		rc = annotation(s, item->id);
	else
		return 0;
	return rc < 0 ? rc : 1;
}

/* What a value is, for messages. */
static const char *type_name(struct pk *p, const struct pk_val *v)
{
	static const char *const names[] = { "None", "a bool", "an int", "an int", "a float",
		"a str", "bytes", "", "a list", "a dict" };
	static const char *const kinds[] = { "a list", "a dict", "a tuple" };

	if (v->type == PK_NODE)
		return kinds[ms__pk_node(p, v->id)->kind];
	return v->type < sizeof(names) / sizeof(names[0]) ? names[v->type] : "a value";
}

/* pk_root_fn: segments, device_traces and external_annotations are lists (device_traces one of
 * lists), else the file is not a snapshot, said at the value. */
static int on_root(
	void *ctx, struct pk *p, const struct pk_val *key, const struct pk_val *v, uint64_t offset)
{
	struct snap *s = ctx;
	const struct ms__pk_node *n;
	const char *what;
	uint32_t i;

	if (key->type != PK_STR ||
		(key->id != s->k[K_SEGMENTS] && key->id != s->k[K_DEVICE_TRACES] &&
			key->id != s->k[K_EXTERNAL_ANNOTATIONS]))
		return 0;
	what = key_text[key->id == s->k[K_SEGMENTS]	   ? K_SEGMENTS
			: key->id == s->k[K_DEVICE_TRACES] ? K_DEVICE_TRACES
							   : K_EXTERNAL_ANNOTATIONS];
	if (v->type != PK_NODE || ms__pk_node(p, v->id)->kind != PK_LIST ||
		ms__pk_node(p, v->id)->done)
		return memscope_error_set_offset(s->err, MEMSCOPE_E_INVALID, s->src->name, offset,
			"not a PyTorch memory snapshot: its %s is %s, not a list", what,
			type_name(p, v));
	n = ms__pk_node(p, v->id);
	for (i = 0; key->id == s->k[K_DEVICE_TRACES] && i < n->n; i++)
		if (n->items[i].type != PK_NODE || ms__pk_node(p, n->items[i].id)->kind != PK_LIST)
			return memscope_error_set_offset(s->err, MEMSCOPE_E_INVALID, s->src->name,
				offset,
				"not a PyTorch memory snapshot: its device_traces[%u] is %s, not a "
				"list",
				i, type_name(p, &n->items[i]));
	return 0;
}

/* ---- the end ---- */

/* Part [lo, hi) of held segment h, mapped before the trace: its MALLOC (before_trace), kept as
 * mapped so a segment listed twice is counted once. */
static int held_part(struct snap *s, const struct held *h, uint64_t lo, uint64_t hi)
{
	struct held g = *h;
	int rc;

	g.addr = lo;
	g.size = (int64_t)(hi - lo);
	if ((rc = emit_before(s, &g)))
		return rc;
	return map_range(s, lo, hi - lo, h->device, h->pair);
}

/* Held segment h: the parts of it no piece of the trace holds (an expandable segment's first
 * pieces may have been mapped before the trace, its others in it). */
static int held_segment(struct snap *s, const struct held *h)
{
	uint64_t lo = h->addr, hi = end_of(lo, (uint64_t)h->size), at = lo, k, a, b;
	int rc = 0, more;

	if (lo == hi)
		return ms__u64tree_get(&s->mapped, lo, &a, &b) ? 0 : held_part(s, h, lo, hi);
	for (more = first_piece(s, lo, &k, &a, &b); more && k < hi && !rc;
		more = ms__u64tree_after(&s->mapped, k, &k, &a, &b)) {
		uint64_t end = end_of(k, a);

		if (k > at)
			rc = held_part(s, h, at, k);
		at = end > at ? end : at;
	}
	if (!rc && at < hi)
		rc = held_part(s, h, at, hi);
	return rc;
}

/* After the trace: the segments and blocks of the state the trace did not allocate, then the oom
 * entries with the state at their time. */
static int finish(struct snap *s)
{
	size_t i;
	uint64_t a, b;
	int rc = 0;

	for (i = 0; i < s->n_held && !rc; i++) {
		const struct held *h = &s->held[i];

		if (h->pool == MEMSCOPE_SUB_CUDA)
			rc = held_segment(s, h);
		else if (!ms__u64map_get(&s->live, h->addr, &a, &b) && !(rc = emit_before(s, h)) &&
			 ms__u64map_put(&s->live, h->addr, (uint64_t)(int64_t)h->device,
				 (uint64_t)h->size))
			rc = nomem(s);
	}
	for (i = 0; i < s->n_ooms && !rc; i++)
		rc = emit_oom(s, &s->ooms[i].e, &s->ooms[i]);
	return rc;
}

static void snap_free(struct snap *s)
{
	ms__pk_free(s->pk);
	ms__u64map_free(&s->live);
	ms__u64tree_free(&s->mapped);
	ms__u64map_free(&s->requested);
	ms__u64map_free(&s->dev_of);
	ms__u64map_free(&s->pair_of);
	free(s->devs);
	free(s->held);
	free(s->kept);
	free(s->lists);
	free(s->ooms);
	free(s->pairs);
	free(s->py);
	free(s->c);
	ms__buf_free(&s->text);
}

static int snapshot_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct snap s = { .src = src, .st = src->st, .fn = fn, .ctx = ctx, .err = err };
	struct pk_hooks hooks = { .item = on_item, .root = on_root, .ctx = &s };
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
	rc = ms__pk_read(&s.pk, src, &hooks, &root, err);
	if (rc == MEMSCOPE_E_TRUNCATED && src->opts.lenient) {
		/* a cut snapshot: what was read is the input (the state, then the trace) */
		src->stats.cut = *err;
		rc = finish(&s);
		goto out;
	}
	if (!rc && (root.type != PK_NODE || ms__pk_node(s.pk, root.id)->kind != PK_DICT ||
			   (!ms__pk_dict_get(s.pk, ms__pk_node(s.pk, root.id), s.k[K_SEGMENTS]) &&
				   !ms__pk_dict_get(s.pk, ms__pk_node(s.pk, root.id),
					   s.k[K_DEVICE_TRACES]))))
		rc = memscope_error_set_offset(err, MEMSCOPE_E_INVALID, src->name,
			ms__pk_offset(s.pk),
			"not a PyTorch memory snapshot: a pickle without segments or "
			"device_traces");
	if (!rc)
		rc = finish(&s);
	if (!rc && !s.n_ev && !src->stats.n_skipped)
		rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, 0,
			"an empty PyTorch memory snapshot: no segments, trace entries or "
			"annotations (taken before CUDA memory was allocated, or with memory "
			"history not recorded)");
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

const struct reader ms__torch_snapshot_reader = {
	.format = MEMSCOPE_FORMAT_TORCH_SNAPSHOT,
	.name = "torch-snapshot",
	.what = "a PyTorch memory snapshot",
	.sniff = snapshot_sniff,
	.read = snapshot_read,
	/* x.pickle, x.pkl as torch's docs and torchtitan name them */
	.walk = READER_WALK_INPUT,
	.endings = (const char *const[]){ ".pickle", ".pkl", NULL },
	.inputs = "PyTorch memory snapshots",
	.without_accesses = "a PyTorch memory snapshot",
	.end = READER_END_SNAPSHOT,
};
