/*
 * The Ascend profiler's memory CSVs (formats/msprof.md): operator_memory, memory_record, npu_mem,
 * npu_module_mem and static_op_mem, in every layout msprof, torch_npu and MindSpore write. The
 * table is told by its header; columns are bound by name; every row becomes events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvtok.h"
#include "msprof.h"

enum table { T_NONE, T_OPMEM, T_RECORD, T_NPUMEM, T_MODULE, T_STATIC };

static const char *const table_names[] = {
	[T_NONE] = "",
	[T_OPMEM] = "operator_memory",
	[T_RECORD] = "memory_record",
	[T_NPUMEM] = "npu_mem",
	[T_MODULE] = "npu_module_mem",
	[T_STATIC] = "static_op_mem",
};

enum col {
	C_DEVICE_ID,
	C_DEVICE,
	C_NAME,
	C_SIZE,
	C_ALLOC_TIME,
	C_RELEASE_TIME,
	C_DURATION,
	C_ALLOC_ALLOCATED,
	C_ALLOC_RESERVED,
	C_ALLOC_ACTIVE,
	C_REL_ALLOCATED,
	C_REL_RESERVED,
	C_REL_ACTIVE,
	C_STREAM,
	C_COMPONENT,
	C_TIMESTAMP,
	C_ALLOCATED,
	C_RESERVED,
	C_ACTIVE,
	C_EVENT,
	C_DDR,
	C_HBM,
	C_MEMORY,
	C_OP_NAME,
	C_MODEL,
	C_GRAPH,
	C_NODE_START,
	C_NODE_END,
	N_COLS,
	C_OTHER = N_COLS, /* known, not used: Active Release Time, Active Duration */
};

/* Column names as written, without a unit suffix; byte columns take "(KB)" or "(MB)". */
static const struct {
	const char *name;
	int bytes;
} cols[N_COLS] = {
	[C_DEVICE_ID] = { "Device_id", 0 },
	[C_DEVICE] = { "Device Type", 0 },
	[C_NAME] = { "Name", 0 },
	[C_SIZE] = { "Size", 1 },
	[C_ALLOC_TIME] = { "Allocation Time(us)", 0 },
	[C_RELEASE_TIME] = { "Release Time(us)", 0 },
	[C_DURATION] = { "Duration(us)", 0 },
	[C_ALLOC_ALLOCATED] = { "Allocation Total Allocated", 1 },
	[C_ALLOC_RESERVED] = { "Allocation Total Reserved", 1 },
	[C_ALLOC_ACTIVE] = { "Allocation Total Active", 1 },
	[C_REL_ALLOCATED] = { "Release Total Allocated", 1 },
	[C_REL_RESERVED] = { "Release Total Reserved", 1 },
	[C_REL_ACTIVE] = { "Release Total Active", 1 },
	[C_STREAM] = { "Stream Ptr", 0 },
	[C_COMPONENT] = { "Component", 0 },
	[C_TIMESTAMP] = { "Timestamp(us)", 0 },
	[C_ALLOCATED] = { "Total Allocated", 1 },
	[C_RESERVED] = { "Total Reserved", 1 },
	[C_ACTIVE] = { "Total Active", 1 },
	[C_EVENT] = { "event", 0 },
	[C_DDR] = { "ddr", 1 },
	[C_HBM] = { "hbm", 1 },
	[C_MEMORY] = { "memory", 1 },
	[C_OP_NAME] = { "Op Name", 0 },
	[C_MODEL] = { "Model Name", 0 },
	[C_GRAPH] = { "Graph ID", 0 },
	[C_NODE_START] = { "Node Index Start", 0 },
	[C_NODE_END] = { "Node Index End", 0 },
};

/* Other spellings of a column (formats/msprof.md "CSV tables"). */
static const struct {
	const char *name;
	enum col col;
} aliases[] = {
	{ "Device", C_DEVICE },
	{ "timestamp(us)", C_TIMESTAMP },
	{ "Active Release Time(us)", C_OTHER },
	{ "Active Duration(us)", C_OTHER },
};

/* The columns each table needs, the first three telling it apart (in the order tried). */
static const struct {
	enum table t;
	enum col need[4];
} tables[] = {
	{ T_OPMEM, { C_NAME, C_SIZE, C_ALLOC_TIME, N_COLS } },
	{ T_STATIC, { C_OP_NAME, C_NODE_START, C_SIZE, C_NODE_END } },
	{ T_RECORD, { C_COMPONENT, C_TIMESTAMP, C_ALLOCATED, C_RESERVED } },
	{ T_MODULE, { C_COMPONENT, C_TIMESTAMP, C_RESERVED, N_COLS } },
	{ T_NPUMEM, { C_EVENT, C_TIMESTAMP, C_MEMORY, N_COLS } },
};

#define KB 1024u
#define MB (1024u * 1024u)
#define MINDSPORE_MB (1000u * 1024u)  /* MindSpore's memory_record: KB / 1000 */
#define MODULE_MAX ((int64_t)1 << 53) /* larger module values are a wrapped -1 */

struct pcsv {
	struct memscope_source *src;
	struct prof_ctx *c;
	memscope_event_fn fn;
	void *ctx;
	struct memscope_error *err;
	enum table table;
	unsigned n_header;
	int pos[N_COLS]; /* column -> header position, -1 if absent */
	uint64_t unit[N_COLS];
	int msprof_opmem; /* msprof's own operator_memory: GE, release = allocation + duration */
	char header[N_COLS][48];      /* each column's name as written, for messages */
	const struct csvtok_field *f; /* the row being read */
	uint64_t line;
	int bad; /* the row has a bad value: skipped (lenient), or the read stops with bad_rc */
	int bad_rc;
	uint32_t key_active, key_stream, key_graph, key_model, key_start, key_end;
	uint64_t n_rounded, n_bad_module;
	char first_rounded[320];
	struct ev_attrs ax;
};

/* The last n bytes of a path at most, for messages that quote it: the file's name is its end. */
static const char *tail(const char *path, size_t n)
{
	size_t len = strlen(path);

	return len > n ? path + len - n : path;
}

/* A field of the row, trimmed; "" when the column is absent. */
static const char *field(const struct pcsv *p, enum col c, size_t *len)
{
	int pos = p->pos[c];

	if (pos < 0) {
		*len = 0;
		return "";
	}
	*len = p->f[pos].len;
	return ms__prof_trim(p->f[pos].p, len);
}

/* The row's first bad value, c's: counted (lenient) or the read's error. */
static void bad_value(struct pcsv *p, enum col c, const char *s, size_t len, const char *why)
{
	char shown[48];
	size_t i, n = len > 40 ? 40 : len;

	if (p->bad)
		return;
	for (i = 0; i < n; i++) /* as written, control bytes shown as '?' */
		shown[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	shown[n] = '\0';
	p->bad = 1;
	p->bad_rc = ms__source_bad_row(p->src, p->err, p->line, "column %d \"%s\": \"%s%s\" %s",
		p->pos[c] + 1, p->header[c], shown, len > 40 ? "..." : "", why);
}

/* The row's column c, which it needs, is empty or N/A: the row is bad. */
static int no_value(struct pcsv *p, enum col c)
{
	return ms__source_bad_row(
		p->src, p->err, p->line, "column %d \"%s\": no value", p->pos[c] + 1, p->header[c]);
}

/* A time column: 1 and *ns when written, 0 when missing or bad (then p->bad is set). */
static int get_time(struct pcsv *p, enum col c, uint64_t *ns)
{
	size_t len;
	const char *s = field(p, c, &len);
	int rc;

	if (ms__prof_missing(s, len))
		return 0;
	if ((rc = ms__prof_parse_us(s, len, ns))) {
		bad_value(p, c, s, len, ms__prof_num_error(rc));
		return 0;
	}
	return 1;
}

/* A byte column in its unit: 1 and *v when written, 0 when missing or bad; with wrapped, a value
 * too large for bytes (an unsigned exporter's -1) is -1. */
static int get_bytes_wrapped(struct pcsv *p, enum col c, int64_t *v, int wrapped)
{
	size_t len;
	const char *s = field(p, c, &len);
	int rc, exact;

	if (ms__prof_missing(s, len))
		return 0;
	rc = ms__prof_parse_bytes(s, len, p->unit[c], v, &exact);
	if (rc == PROF_NUM_RANGE && wrapped) {
		*v = -1;
		return 1;
	}
	if (rc) {
		bad_value(p, c, s, len, ms__prof_num_error(rc));
		return 0;
	}
	if (!exact && p->n_rounded++ == 0)
		snprintf(p->first_rounded, sizeof(p->first_rounded), "%.200s:%llu, %s",
			tail(p->src->name, 200), (unsigned long long)p->line, p->header[c]);
	return 1;
}

/* A byte column in its unit: 1 and *v when written, 0 when missing or bad. */
static int get_bytes(struct pcsv *p, enum col c, int64_t *v)
{
	return get_bytes_wrapped(p, c, v, 0);
}

/* An unsigned integer column (Stream Ptr, node indices): 1 and *v, 0 when missing or bad. */
static int get_u64(struct pcsv *p, enum col c, uint64_t *v)
{
	size_t len;
	const char *s = field(p, c, &len);

	if (ms__prof_missing(s, len))
		return 0;
	if (ms__parse_u64(s, len, v)) {
		bad_value(p, c, s, len,
			memchr(s, 'E', len) || memchr(s, 'e', len)
				? ms__prof_num_error(PROF_NUM_EXP)
				: "is not an integer");
		return 0;
	}
	return 1;
}

/* A string column interned: its id, MEMSCOPE_STR_NA when missing (or on no memory: p->bad). */
static uint32_t get_str(struct pcsv *p, enum col c)
{
	size_t len;
	const char *s = field(p, c, &len);
	uint32_t id;

	if (ms__prof_missing(s, len))
		return MEMSCOPE_STR_NA;
	if (memscope_strtab_intern(p->src->st, s, len, &id)) {
		if (!p->bad)
			p->bad = 1, p->bad_rc = memscope_error_set(p->err, MEMSCOPE_E_NOMEM,
					    p->src->name, p->line, "out of memory");
		return MEMSCOPE_STR_NA;
	}
	return id;
}

/*
 * The row's device: Device_id ("0", "host") when written, else the Device column ("NPU:0", "0",
 * "cpu", "host"); MEMSCOPE_DEVICE_NONE when neither says.
 */
static int32_t get_device(struct pcsv *p)
{
	static const enum col order[2] = { C_DEVICE_ID, C_DEVICE };
	int i;

	for (i = 0; i < 2; i++) {
		size_t len;
		const char *s = field(p, order[i], &len);
		uint64_t d;

		if (ms__prof_missing(s, len))
			continue;
		if ((len == 4 && memcmp(s, "host", 4) == 0) ||
			(len == 3 && memcmp(s, "cpu", 3) == 0))
			return MEMSCOPE_DEVICE_HOST;
		if (len > 4 && memcmp(s, "NPU:", 4) == 0)
			s += 4, len -= 4;
		if (ms__parse_u64(s, len, &d) || d > INT32_MAX) {
			bad_value(p, order[i], s, len, "is not a device");
			return MEMSCOPE_DEVICE_NONE;
		}
		return (int32_t)d;
	}
	return MEMSCOPE_DEVICE_NONE;
}

/* ev's size, total (reserved bytes) or used (allocated bytes), by its attr key: the typed field
 * and the attr the dump writes. */
static void put_value(struct pcsv *p, struct memscope_event *ev, uint32_t key, int64_t v)
{
	if (key == MEMSCOPE_STR_SIZE) {
		ev->size = v;
		ev->flags |= MEMSCOPE_EV_SIZE;
	} else if (key == MEMSCOPE_STR_TOTAL) {
		ev->total = v;
		ev->flags |= MEMSCOPE_EV_TOTAL;
	} else {
		ev->used = v;
		ev->flags |= MEMSCOPE_EV_USED;
	}
	ev_attr_num(&p->ax, ev, key, v);
}

/* A new event of the row: no pointer, no thread, the row's line; attrs from p->ax. */
static void event_init(struct pcsv *p, struct memscope_event *ev, unsigned kind, unsigned subtype)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint16_t)kind;
	ev->subtype = (uint16_t)subtype;
	ms__event_set_pool(ev, p->src->st);
	ev->pid = MEMSCOPE_ID_NONE;
	ev->tid = MEMSCOPE_ID_NONE;
	ev->name = MEMSCOPE_STR_NA;
	ev->line = p->line;
	ev->file = p->c->file;
	ev->attrs = p->ax.a;
}

static int deliver(struct pcsv *p, struct memscope_event *ev)
{
	if (ev->n_attrs)
		ev->flags |= MEMSCOPE_EV_ATTR;
	return ms__prof_deliver(p->src, p->c, p->fn, p->ctx, ev, p->err);
}

/* The pool totals of one side of an operator_memory row (allocation or release). */
struct totals {
	int64_t allocated, reserved, active;
	int has_allocated, has_reserved, has_active;
};

static void get_totals(struct pcsv *p, struct totals *t, enum col allocated)
{
	t->has_allocated = get_bytes(p, allocated, &t->allocated);
	t->has_reserved = get_bytes(p, allocated + 1, &t->reserved);
	t->has_active = get_bytes(p, allocated + 2, &t->active);
}

/* One block event of an operator_memory row. */
static int block_event(struct pcsv *p, unsigned kind, unsigned pool, uint64_t ts, uint64_t block,
	int64_t size, const struct totals *t, int has_stream, uint64_t stream, int32_t device,
	uint32_t name)
{
	struct memscope_event ev;

	event_init(p, &ev, kind, pool);
	ev.ts_ns = ts;
	ev.device = device;
	ev.name = name;
	ev.alloc_id = block;
	ev.flags = MEMSCOPE_EV_ALLOC_ID;
	ev_attr_num(&p->ax, &ev, MEMSCOPE_STR_ALLOCATION_ID, (int64_t)block);
	put_value(p, &ev, MEMSCOPE_STR_SIZE, size);
	if (t->has_reserved)
		put_value(p, &ev, MEMSCOPE_STR_TOTAL, t->reserved);
	if (t->has_allocated)
		put_value(p, &ev, MEMSCOPE_STR_USED, t->allocated);
	if (t->has_active)
		ev_attr_num(&p->ax, &ev, p->key_active, t->active);
	if (has_stream)
		ev_attr_unum(&p->ax, &ev, p->key_stream, stream);
	return deliver(p, &ev);
}

static int has_prefix(const struct memscope_strtab *st, uint32_t id, const char *pre)
{
	size_t len, n = strlen(pre);
	const char *s = memscope_strtab_str(st, id, &len);

	return s && len >= n && memcmp(s, pre, n) == 0;
}

/*
 * operator_memory: a MALLOC at the allocation and a FREE at the release (formats/msprof.md). A
 * row with a negative Size or without an allocation is the release of a block allocated before
 * the window: a FREE alone, at the Release Time, else at the row's one time. msprof's own file has
 * no Release Time: the release is allocation + duration, and a duration of 0 with no release
 * totals is "not released".
 */
static int opmem_row(struct pcsv *p)
{
	struct totals at_alloc = { 0 }, at_release = { 0 };
	uint64_t alloc = 0, release = 0, dur = 0, stream = 0, block;
	int64_t size = 0;
	int has_alloc, has_release, has_size, has_stream, rc;
	uint32_t name = get_str(p, C_NAME);
	int32_t device = get_device(p);
	unsigned pool;

	has_size = get_bytes(p, C_SIZE, &size);
	has_alloc = get_time(p, C_ALLOC_TIME, &alloc);
	has_release = get_time(p, C_RELEASE_TIME, &release);
	get_totals(p, &at_alloc, C_ALLOC_ALLOCATED);
	get_totals(p, &at_release, C_REL_ALLOCATED);
	has_stream = get_u64(p, C_STREAM, &stream);
	if (p->pos[C_RELEASE_TIME] < 0 && has_alloc && get_time(p, C_DURATION, &dur) &&
		(dur || at_release.reserved || at_release.allocated)) {
		has_release = 1;
		release = alloc + dur;
	}
	if (p->bad)
		return p->bad_rc;
	if (!has_size)
		return no_value(p, C_SIZE);
	if (!has_alloc && !has_release)
		return ms__source_bad_row(
			p->src, p->err, p->line, "neither an Allocation nor a Release Time");
	if (size < 0 && !has_release) { /* msprof's release-only row: its one time is the release */
		release = alloc;
		has_release = 1;
		has_alloc = 0;
	}
	if (has_alloc && has_release && release < alloc)
		return ms__source_bad_row(
			p->src, p->err, p->line, "Release Time before Allocation Time");
	pool = p->c->mindspore						   ? MEMSCOPE_SUB_MINDSPORE
	       : p->msprof_opmem || has_prefix(p->src->st, name, "cann::") ? MEMSCOPE_SUB_GE
									   : MEMSCOPE_SUB_PTA;
	block = ++p->c->next_block;
	if (size < 0 || !has_alloc) /* a release alone */
		return block_event(p, MEMSCOPE_KIND_FREE, pool, release, block,
			size < 0 ? -size : size, &at_release, has_stream, stream, device,
			MEMSCOPE_STR_NA);
	rc = block_event(p, MEMSCOPE_KIND_MALLOC, pool, alloc, block, size, &at_alloc, has_stream,
		stream, device, name);
	if (!rc && has_release)
		rc = block_event(p, MEMSCOPE_KIND_FREE, pool, release, block, size, &at_release,
			has_stream, stream, device, MEMSCOPE_STR_NA);
	return rc;
}

/* memory_record: one POOL sample of the component (formats/msprof.md "memory_record"). */
static int record_row(struct pcsv *p)
{
	struct memscope_event ev;
	int64_t allocated, reserved, active;
	uint64_t ts = 0, stream;
	int has_ts, has_allocated, has_reserved, has_active, has_stream;

	event_init(p, &ev, MEMSCOPE_KIND_COUNTER, MEMSCOPE_SUB_POOL_SAMPLE);
	ev.name = get_str(p, C_COMPONENT);
	ms__event_set_pool(&ev, p->src->st);
	ev.device = get_device(p);
	has_ts = get_time(p, C_TIMESTAMP, &ts);
	has_allocated = get_bytes(p, C_ALLOCATED, &allocated);
	has_reserved = get_bytes(p, C_RESERVED, &reserved);
	has_active = get_bytes(p, C_ACTIVE, &active);
	has_stream = get_u64(p, C_STREAM, &stream);
	if (p->bad)
		return p->bad_rc;
	if (!has_ts)
		return no_value(p, C_TIMESTAMP);
	ev.ts_ns = ts;
	if (has_allocated)
		put_value(p, &ev, MEMSCOPE_STR_USED, allocated);
	if (has_reserved)
		put_value(p, &ev, MEMSCOPE_STR_TOTAL, reserved);
	if (has_active)
		ev_attr_num(&p->ax, &ev, p->key_active, active);
	if (has_stream)
		ev_attr_unum(&p->ax, &ev, p->key_stream, stream);
	return deliver(p, &ev);
}

/* npu_mem: the row's ddr, hbm and memory as three NPU_MEM samples named like the timeline's
 * counters ("APP/DDR"); formats/msprof.md "npu_mem". */
static int npumem_row(struct pcsv *p)
{
	static const char *const series[3] = { "DDR", "HBM", "Memory" };
	static const enum col col[3] = { C_DDR, C_HBM, C_MEMORY };
	int64_t v[3];
	int got[3], i, rc;
	uint64_t ts = 0;
	size_t len;
	const char *what = field(p, C_EVENT, &len);
	int32_t device = get_device(p);
	int has_ts = get_time(p, C_TIMESTAMP, &ts);

	for (i = 0; i < 3; i++)
		got[i] = get_bytes(p, col[i], &v[i]);
	if (p->bad)
		return p->bad_rc;
	if (!has_ts)
		return no_value(p, C_TIMESTAMP);
	if (ms__prof_missing(what, len))
		return no_value(p, C_EVENT);
	/* the raw enum: 0 the process (APP), 1 the device */
	if (len == 1 && (*what == '0' || *what == '1'))
		what = *what == '0' ? "APP" : "Device", len = strlen(what);
	for (i = 0; i < 3; i++) {
		struct memscope_event ev;
		char name[64];
		int n = snprintf(name, sizeof(name), "%.*s/%s", CLIP(len), what, series[i]);

		if (!got[i])
			continue;
		event_init(p, &ev, MEMSCOPE_KIND_COUNTER, MEMSCOPE_SUB_NPU_MEM);
		if (memscope_strtab_intern(p->src->st, name, (size_t)n, &ev.name))
			return memscope_error_set(
				p->err, MEMSCOPE_E_NOMEM, p->src->name, p->line, "out of memory");
		ev.ts_ns = ts;
		ev.device = device;
		put_value(p, &ev, MEMSCOPE_STR_USED, v[i]);
		if ((rc = deliver(p, &ev)))
			return rc;
	}
	return 0;
}

/*
 * npu_module_mem: a MODULE sample. A negative value ("only the release was captured") or a huge
 * one (the same -1 through an unsigned exporter) says nothing of the module: left out, counted.
 */
static int module_row(struct pcsv *p)
{
	struct memscope_event ev;
	int64_t reserved = 0;
	uint64_t ts = 0;
	int has_ts, has_reserved;

	event_init(p, &ev, MEMSCOPE_KIND_COUNTER, MEMSCOPE_SUB_MODULE_SAMPLE);
	ev.name = get_str(p, C_COMPONENT);
	ev.device = get_device(p);
	has_ts = get_time(p, C_TIMESTAMP, &ts);
	has_reserved = get_bytes_wrapped(p, C_RESERVED, &reserved, 1);
	if (p->bad)
		return p->bad_rc;
	if (!has_ts)
		return no_value(p, C_TIMESTAMP);
	if (!has_reserved || reserved < 0 || reserved >= MODULE_MAX) {
		p->n_bad_module++;
		return 0;
	}
	ev.ts_ns = ts;
	put_value(p, &ev, MEMSCOPE_STR_TOTAL, reserved);
	return deliver(p, &ev);
}

/* static_op_mem: one PLAN block (no time); the TOTAL rows are kept as written. */
static int static_row(struct pcsv *p)
{
	struct memscope_event ev;
	int64_t size = 0;
	uint64_t graph = 0, start = 0, end = 0;
	int has_size, has_graph, has_start, has_end;
	uint32_t model;

	event_init(p, &ev, MEMSCOPE_KIND_PLAN, MEMSCOPE_SUB_GE);
	ev.name = get_str(p, C_OP_NAME);
	ev.device = get_device(p);
	model = get_str(p, C_MODEL);
	has_size = get_bytes(p, C_SIZE, &size);
	has_graph = get_u64(p, C_GRAPH, &graph);
	has_start = get_u64(p, C_NODE_START, &start);
	has_end = get_u64(p, C_NODE_END, &end);
	if (p->bad)
		return p->bad_rc;
	if (!has_size)
		return no_value(p, C_SIZE);
	put_value(p, &ev, MEMSCOPE_STR_SIZE, size);
	if (has_graph)
		ev_attr_unum(&p->ax, &ev, p->key_graph, graph);
	if (has_start)
		ev_attr_unum(&p->ax, &ev, p->key_start, start);
	if (has_end)
		ev_attr_unum(&p->ax, &ev, p->key_end, end);
	if (model != MEMSCOPE_STR_NA) {
		size_t len;
		const char *v = memscope_strtab_str(p->src->st, model, &len); /* the table's text */

		ev_attr_text(&p->ax, &ev, p->key_model, v, len);
	}
	return deliver(p, &ev);
}

/* The column a header field names, its unit in *unit (bytes per KB or MB; 0 for other
 * columns); N_COLS + 1 when it is none of ours. */
static unsigned header_col(const char *s, size_t len, uint64_t *unit)
{
	size_t i, n;

	*unit = 0;
	for (i = 0; i < ARRAY_SIZE(aliases); i++)
		if (strlen(aliases[i].name) == len && memcmp(aliases[i].name, s, len) == 0)
			return aliases[i].col;
	for (i = 0; i < N_COLS; i++) {
		n = strlen(cols[i].name);
		if (cols[i].bytes && len == n + 4 && memcmp(s, cols[i].name, n) == 0 &&
			(memcmp(s + n, "(KB)", 4) == 0 || memcmp(s + n, "(MB)", 4) == 0)) {
			*unit = s[n + 1] == 'K' ? KB : MB;
			return (unsigned)i;
		}
		if (!cols[i].bytes && len == n && memcmp(s, cols[i].name, n) == 0)
			return (unsigned)i;
	}
	return N_COLS + 1;
}

/*
 * Bind the header's columns into pos/unit (unit may be NULL) and return the table they make,
 * T_NONE when none; *unknown counts the columns that are not ours. fields[i] / lens[i] are
 * the n header fields.
 */
static enum table header_table(const char *const *fields, const size_t *lens, unsigned n,
	int pos[N_COLS], uint64_t unit[N_COLS], uint64_t *unknown)
{
	unsigned i, k;

	for (i = 0; i < N_COLS; i++)
		pos[i] = -1;
	*unknown = 0;
	for (i = 0; i < n; i++) {
		size_t len = lens[i];
		const char *s = ms__prof_trim(fields[i], &len);
		uint64_t u;
		unsigned c = header_col(s, len, &u);

		if (c < N_COLS && pos[c] < 0) {
			pos[c] = (int)i;
			if (unit)
				unit[c] = u;
		} else if (c > N_COLS) {
			(*unknown)++;
		}
	}
	for (i = 0; i < ARRAY_SIZE(tables); i++) {
		for (k = 0; k < 3 && pos[tables[i].need[k]] >= 0; k++)
			;
		if (k == 3)
			return tables[i].t;
	}
	return T_NONE;
}

static int intern_key(struct pcsv *p, const char *key, uint32_t *id)
{
	return memscope_strtab_intern(p->src->st, key, strlen(key), id);
}

static int header_row(struct pcsv *p, const struct csvtok_field *f, unsigned n)
{
	const char *fields[CSVTOK_MAX_FIELDS];
	size_t lens[CSVTOK_MAX_FIELDS];
	uint64_t unknown;
	unsigned i, k;

	if (n > CSVTOK_MAX_FIELDS)
		return memscope_error_set(p->err, MEMSCOPE_E_INVALID, p->src->name, p->line,
			"header of %u columns: not a profiler memory CSV", n);
	for (i = 0; i < n; i++)
		fields[i] = f[i].p, lens[i] = f[i].len;
	p->table = header_table(fields, lens, n, p->pos, p->unit, &unknown);
	if (p->table == T_NONE)
		return memscope_error_set(p->err, MEMSCOPE_E_INVALID, p->src->name, p->line,
			"not a profiler memory CSV (no operator_memory, memory_record, npu_mem, "
			"npu_module_mem or static_op_mem header)");
	for (i = 0; i < ARRAY_SIZE(tables); i++)
		if (tables[i].t == p->table)
			for (k = 0; k < 4; k++)
				if (tables[i].need[k] < N_COLS && p->pos[tables[i].need[k]] < 0)
					return memscope_error_set(p->err, MEMSCOPE_E_INVALID,
						p->src->name, p->line,
						"%s header without a \"%s\" column",
						table_names[p->table],
						cols[tables[i].need[k]].name);
	p->src->stats.n_ignored_columns += unknown;
	p->n_header = n;
	for (i = 0; i < N_COLS; i++)
		if (p->pos[i] >= 0) {
			size_t len = f[p->pos[i]].len;
			const char *s = ms__prof_trim(f[p->pos[i]].p, &len);

			snprintf(p->header[i], sizeof(p->header[i]), "%.*s", CLIP(len), s);
		}
	/* MindSpore's memory_record has Total Active and no Stream Ptr; its MB are 1000 KB (a
	 * folder looks before its operator_memory is read: ms__prof_csv_mindspore) */
	if (p->table == T_RECORD && p->pos[C_ACTIVE] >= 0 && p->pos[C_STREAM] < 0)
		p->c->mindspore = 1;
	if (p->table == T_RECORD && p->c->mindspore)
		for (i = 0; i < N_COLS; i++)
			if (p->unit[i] == MB)
				p->unit[i] = MINDSPORE_MB;
	p->msprof_opmem = p->table == T_OPMEM && p->pos[C_RELEASE_TIME] < 0;
	if (intern_key(p, "active", &p->key_active) || intern_key(p, "stream", &p->key_stream) ||
		intern_key(p, "graph", &p->key_graph) || intern_key(p, "model", &p->key_model) ||
		intern_key(p, "start", &p->key_start) || intern_key(p, "end", &p->key_end))
		return memscope_error_set(
			p->err, MEMSCOPE_E_NOMEM, p->src->name, p->line, "out of memory");
	return 0;
}

static int csv_row(void *ctx, const struct csvtok_field *f, unsigned n, uint64_t line)
{
	struct pcsv *p = ctx;

	p->line = line;
	p->f = f;
	p->bad = 0;
	if (p->table == T_NONE)
		return header_row(p, f, n);
	/* msprof writes a trailing comma on some rows: an empty last field more is the same row */
	if (n != p->n_header && !(n == p->n_header + 1 && n <= CSVTOK_MAX_FIELDS && f[n - 1].null))
		return ms__source_bad_row(
			p->src, p->err, line, "%u fields, the header has %u", n, p->n_header);
	switch (p->table) {
	case T_OPMEM:
		return opmem_row(p);
	case T_RECORD:
		return record_row(p);
	case T_NPUMEM:
		return npumem_row(p);
	case T_MODULE:
		return module_row(p);
	default:
		return static_row(p);
	}
}

/* The notes of a read: values rounded to whole bytes, module samples left out. */
static void notes(struct pcsv *p)
{
	if (p->n_rounded)
		ms__source_notice(p->src,
			"%llu value%s rounded to whole bytes (the exporter rounded the KB or MB "
			"figure; first at %s)",
			(unsigned long long)p->n_rounded, p->n_rounded == 1 ? "" : "s",
			p->first_rounded);
	if (p->n_bad_module)
		ms__source_notice(p->src,
			"%llu module sample%s left out: negative or huge Total Reserved (only a "
			"release was captured)",
			(unsigned long long)p->n_bad_module, p->n_bad_module == 1 ? "" : "s");
}

int ms__prof_csv_read(struct memscope_source *src, struct prof_ctx *c, memscope_event_fn fn,
	void *ctx, struct memscope_error *err)
{
	struct pcsv *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	p->src = src;
	p->c = c;
	p->fn = fn;
	p->ctx = ctx;
	p->err = err;
	rc = ms__csv_read_rows(src, csv_row, p, err);
	if (!rc && p->table == T_NONE)
		rc = memscope_error_set(
			err, MEMSCOPE_E_INVALID, src->name, 0, "empty file (no header line)");
	notes(p);
	free(p);
	return rc;
}

/* The table the first line of p[0..n) (a header: no quotes) makes, its columns in pos; T_NONE
 * when it is none, or when the line runs past p + n and more follows. */
static enum table first_line_table(const unsigned char *p, size_t n, int eof, int pos[N_COLS])
{
	const char *fields[CSVTOK_MAX_FIELDS], *s = (const char *)p, *end;
	size_t lens[CSVTOK_MAX_FIELDS];
	uint64_t unknown;
	unsigned k = 0;

	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3, n -= 3;
	end = memchr(s, '\n', n);
	if (!end && !eof)
		return T_NONE;
	if (!end)
		end = s + n;
	while (k < CSVTOK_MAX_FIELDS) {
		const char *comma = memchr(s, ',', (size_t)(end - s));

		fields[k] = s;
		lens[k++] = (size_t)((comma ? comma : end) - s);
		if (!comma)
			break;
		s = comma + 1;
	}
	return header_table(fields, lens, k, pos, NULL, &unknown);
}

int ms__prof_csv_mindspore(const struct memscope_source *src)
{
	int pos[N_COLS];

	return first_line_table(source_whole(src) ? src->mem : src->buf, src->peek_len, src->eof,
		       pos) == T_RECORD &&
	       pos[C_ACTIVE] >= 0 && pos[C_STREAM] < 0;
}

static int msprof_csv_sniff(
	const unsigned char *p, size_t n, int eof, const char *name, struct memscope_error *err)
{
	int pos[N_COLS];

	(void)name, (void)err;
	return ms__csv_sniff_text(p, n) && first_line_table(p, n, eof, pos) != T_NONE;
}

static int msprof_csv_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct prof_ctx c;

	ms__prof_ctx_init(&c);
	return ms__prof_csv_read(src, &c, fn, ctx, err);
}

const struct reader ms__msprof_csv_reader = {
	.format = MEMSCOPE_FORMAT_MSPROF_CSV,
	.name = "msprof-csv",
	.what = "an Ascend profiler memory CSV",
	.sniff = msprof_csv_sniff,
	.read = msprof_csv_read,
	.without_accesses = "an Ascend profiler output",
	.end = READER_END_PROFILE,
};
