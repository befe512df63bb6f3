/* Writer of memory over time as Chrome trace event JSON (Perfetto, chrome://tracing): a process
 * group per (input, process), counters with the samples that cannot change the curve left out,
 * op and step slices, marks. */
#include <stdlib.h>
#include <string.h>

#include "../analyses/opstack.h"
#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/blocks.h"
#include "memscope/memscope.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"
#include "memscope/timeline.h"
#include "report.h"

void memscope_timeline_chrome_opts_init(struct memscope_timeline_chrome_opts *o)
{
	o->tick_ns = 1000; /* 1 us: the trace format's unit */
}

/* one counter sample: its time, its value, its place in its process's points */
struct sample {
	uint64_t ts_ns;
	int64_t v;
	size_t seq;
};

/* what a counter track shows of a device's pool */
enum track_kind { TRACK_LIVE, TRACK_USED, TRACK_RESERVED };

/* one counter track of the process being written, and the tick it is in */
struct track {
	char head[192]; /* ,{"name":"PTA device 0 live","ph":"C","ts": */
	size_t head_len;
	int has_prev, open;
	int64_t prev;
	uint64_t tick, n_tick; /* the tick open, and its samples */
	struct sample first, lo, hi, last;
};

struct writer {
	FILE *out;
	const struct memscope_timeline *t;
	const struct memscope_timeline_point *recs;
	const struct memscope_strtab *st;
	uint64_t tick_ns, origin_ns;
	struct memscope_timeline_chrome_stats stats;
	char pid_args[40]; /* ,"pid":N,"args":{ */
	unsigned long long tpid;
	struct track *tracks;
	size_t n_tracks, cap_tracks;
	struct u64map track_of; /* (track_kind << 48 | device << 16 | pool) -> index in tracks */
	struct opstack ops;
	uint64_t *tids; /* scratch: the threads of a process's ops and marks */
	size_t cap_tids;
	char hal_holds[96]; /* " (holds PTA, ATB)": the pools of the input HAL's blocks hold */
};

/* Nanoseconds as the trace's microseconds: "12", "12.5", "12.005". Returns the length. */
static size_t fmt_us(char *d, uint64_t ns)
{
	size_t n = fmt_u64(d, ns / 1000);
	unsigned f = (unsigned)(ns % 1000);

	if (f) {
		d[n++] = '.';
		d[n++] = (char)('0' + f / 100);
		d[n++] = (char)('0' + f / 10 % 10);
		d[n++] = (char)('0' + f % 10);
		while (d[n - 1] == '0')
			n--;
	}
	return n;
}

static void put_us(FILE *out, const char *key, uint64_t ns)
{
	char d[32];

	fputs(key, out);
	fwrite(d, 1, fmt_us(d, ns), out);
}

/* ,"ts":T,"dur":D (from and to are timestamps, to >= from) */
static void put_span(const struct writer *w, uint64_t from, uint64_t to)
{
	put_us(w->out, ",\"ts\":", from - w->origin_ns);
	put_us(w->out, ",\"dur\":", to - from);
}

/* ---- counters ---- */

static void emit(struct writer *w, const struct track *k, const struct sample *s)
{
	char buf[sizeof(k->head) + sizeof(w->pid_args) + 64];
	size_t n = k->head_len, p = strlen(w->pid_args);

	memcpy(buf, k->head, n);
	n += fmt_us(buf + n, s->ts_ns - w->origin_ns);
	memcpy(buf + n, w->pid_args, p);
	n += p;
	memcpy(buf + n, "\"bytes\":", 8);
	n += 8 + fmt_i64(buf + n + 8, s->v);
	memcpy(buf + n, "}}", 2);
	fwrite(buf, 1, n + 2, w->out);
	w->stats.samples++;
}

/* The tick of k is over: its lowest, highest and last sample, in order, each once (the first
 * was written when the tick opened). */
static void flush_tick(struct writer *w, struct track *k)
{
	const struct sample *c[3] = { &k->lo, &k->hi, &k->last }, *x;
	size_t i, done = 1;

	if (!k->open)
		return;
	if (c[0]->seq > c[1]->seq) {
		x = c[0];
		c[0] = c[1];
		c[1] = x;
	}
	/* the last comes last */
	for (i = 0; i < 3; i++)
		if (c[i]->seq != k->first.seq && (!i || c[i]->seq != c[i - 1]->seq)) {
			emit(w, k, c[i]);
			done++;
		}
	w->stats.samples_left_out += k->n_tick - done;
	k->open = 0;
}

/* Track `kind` of counter point r, made on first use. NULL on OOM. */
static struct track *track_of(
	struct writer *w, const struct memscope_timeline_point *r, enum track_kind kind)
{
	static const char *const what[] = { "live", "used", "reserved" };
	uint64_t key = (uint64_t)kind << 48 | (uint64_t)(uint32_t)r->device << 16 | r->pool, at;
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];
	const char *pool = memscope_subtype_name(r->pool);
	struct track *k;
	int len;

	if (u64map_get(&w->track_of, key, &at, NULL))
		return &w->tracks[at];
	if (grow_array(&w->tracks, &w->cap_tracks, w->n_tracks + 1, sizeof(*w->tracks)) ||
		u64map_put(&w->track_of, key, w->n_tracks, 0))
		return NULL;
	k = &w->tracks[w->n_tracks++];
	memset(k, 0, sizeof(*k));
	/* the pool and device names are plain ASCII: nothing to escape */
	len = snprintf(k->head, sizeof(k->head),
		",{\"name\":\"%s device %s %s%s\",\"ph\":\"C\",\"ts\":", pool ? pool : "memory",
		memscope_device_text(r->device, dev), what[kind],
		r->pool == MEMSCOPE_SUB_HAL ? w->hal_holds : "");
	k->head_len = len > 0 && (size_t)len < sizeof(k->head) ? (size_t)len : 0;
	return k;
}

/* Value v of track `kind` of counter point r (the seq-th of its process): written, held for
 * its tick, or left out. 0 or MEMSCOPE_E_NOMEM. */
static int counter(struct writer *w, const struct memscope_timeline_point *r, enum track_kind kind,
	int64_t v, size_t seq)
{
	struct track *k = track_of(w, r, kind);
	struct sample s = { r->at.ts_ns, v, seq };
	uint64_t tick;

	if (!k)
		return MEMSCOPE_E_NOMEM;
	if (!w->tick_ns) {
		emit(w, k, &s);
		return 0;
	}
	/* the value of the sample before: the curve does not move */
	if (k->has_prev && v == k->prev) {
		w->stats.samples_left_out++;
		return 0;
	}
	k->has_prev = 1;
	k->prev = v;
	tick = s.ts_ns / w->tick_ns;
	if (k->open && tick == k->tick) {
		k->n_tick++;
		if (v < k->lo.v)
			k->lo = s;
		if (v > k->hi.v)
			k->hi = s;
		k->last = s;
		return 0;
	}
	flush_tick(w, k);
	k->open = 1;
	k->tick = tick;
	k->n_tick = 1;
	k->first = k->lo = k->hi = k->last = s;
	emit(w, k, &s);
	return 0;
}

/* ---- one process group ---- */

/* ,{"name":NAME,"cat":CAT,"ph":"X" of point r's name */
static void slice_head(
	struct writer *w, const struct memscope_timeline_point *r, const char *cat, const char *ph)
{
	size_t len;
	const char *name = memscope_strtab_str(w->st, r->name, &len);

	fputs(",{\"name\":", w->out);
	json_str(w->out, name ? name : "", name ? len : 0);
	fprintf(w->out, ",\"cat\":\"%s\",\"ph\":\"%s\"", cat, ph);
}

/* The op slice from BEGIN point b to end_ns. */
static void op_slice(struct writer *w, size_t b, uint64_t end_ns)
{
	const struct memscope_timeline_point *r = &w->recs[b];

	slice_head(w, r, "op", "X");
	put_span(w, r->at.ts_ns, end_ns);
	fprintf(w->out, ",\"pid\":%llu,\"tid\":%llu}", w->tpid, (unsigned long long)r->tid);
	w->stats.slices++;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

/* The thread of the steps: the smallest from 1 that no op or mark of points [i, j) has; 0 on
 * OOM. */
static uint64_t steps_tid(struct writer *w, size_t i, size_t j)
{
	size_t n = 0, k;
	uint64_t tid = 1;

	for (k = i; k < j; k++) {
		if (w->recs[k].kind != MEMSCOPE_TL_BEGIN && w->recs[k].kind != MEMSCOPE_TL_END &&
			w->recs[k].kind != MEMSCOPE_TL_MARK)
			continue;
		if (grow_array(&w->tids, &w->cap_tids, n + 1, sizeof(*w->tids)))
			return 0;
		w->tids[n++] = w->recs[k].tid;
	}
	if (n)
		qsort(w->tids, n, sizeof(*w->tids), cmp_u64);
	for (k = 0; k < n; k++)
		if (w->tids[k] == tid)
			tid++;
	return tid;
}

/* What the HAL tracks of the process of points [i, j) say of the pools beside HAL there whose
 * blocks HAL's hold (memscope_pools_nested): " (holds PTA, ATB)", or nothing. */
static void hal_holds(struct writer *w, size_t i, size_t j)
{
	uint64_t pools = 0, inner;
	size_t len = 0, k;
	unsigned pool;

	for (k = i; k < j; k++)
		if ((w->recs[k].kind == MEMSCOPE_TL_LIVE || w->recs[k].kind == MEMSCOPE_TL_USED) &&
			w->recs[k].pool < 64)
			pools |= MEMSCOPE_POOL_BIT(w->recs[k].pool);
	inner = memscope_pools_nested(pools) ? pools & MEMSCOPE_POOLS_IN_HAL : 0;
	w->hal_holds[0] = 0;
	for (pool = 0; inner && pool < 64; pool++) {
		const char *name = memscope_subtype_name(pool);

		if (!((inner >> pool) & 1) || !name ||
			len + strlen(name) + 12 > sizeof(w->hal_holds))
			continue;
		len += (size_t)snprintf(w->hal_holds + len, sizeof(w->hal_holds) - len, "%s%s",
			len ? ", " : " (holds ", name);
	}
	if (len)
		snprintf(w->hal_holds + len, sizeof(w->hal_holds) - len, ")");
}

/* The metadata of process pid of input src: its name, labels, place, and the steps' thread. */
static void proc_meta(struct writer *w, uint32_t src, uint64_t pid, const char *const *inputs,
	size_t n_inputs, uint64_t tid_steps)
{
	const char *in = src < n_inputs ? inputs[src] : NULL;
	const char *base = in && strrchr(in, '/') ? strrchr(in, '/') + 1 : in;
	char text[1200];

	if (in && strcmp(in, "-") == 0)
		base = in = "standard input";
	if (base && !*base)
		base = in;
	if (base)
		snprintf(text, sizeof(text), "pid %llu (%s)", (unsigned long long)pid, base);
	else
		snprintf(text, sizeof(text), "pid %llu (input %u)", (unsigned long long)pid,
			src + 1);
	fprintf(w->out,
		"%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%llu,\"tid\":0,\"args\":{"
		"\"name\":",
		w->stats.processes ? "," : "", w->tpid);
	json_cstr(w->out, text);
	snprintf(text, sizeof(text), "input %u: %s%s%s", src + 1, in ? in : "?",
		w->hal_holds[0] ? "; HAL" : "", w->hal_holds);
	fprintf(w->out,
		"}},{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%llu,\"args\":{"
		"\"labels\":",
		w->tpid);
	json_cstr(w->out, text);
	fprintf(w->out,
		"}},{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%llu,\"args\":{"
		"\"sort_index\":%llu}}",
		w->tpid, w->tpid);
	if (tid_steps)
		fprintf(w->out,
			",{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%llu,\"tid\":%llu,"
			"\"args\":{\"name\":\"steps\"}},{\"name\":\"thread_sort_index\",\"ph\":"
			"\"M\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"sort_index\":-1}}",
			w->tpid, (unsigned long long)tid_steps, w->tpid,
			(unsigned long long)tid_steps);
}

/* One process group: the points [i, j) and the steps spans[0, n_spans) of process pid of src. */
static int write_proc(struct writer *w, uint32_t src, uint64_t pid, size_t i, size_t j,
	const struct memscope_timeline_step *spans, size_t n_spans, const char *const *inputs,
	size_t n_inputs)
{
	uint64_t tid_steps = 0, last_ts = i < j ? w->recs[i].at.ts_ns : 0;
	size_t k, b, m, n;

	w->tpid++;
	hal_holds(w, i, j);
	if (n_spans && !(tid_steps = steps_tid(w, i, j)))
		return MEMSCOPE_E_NOMEM;
	proc_meta(w, src, pid, inputs, n_inputs, tid_steps);
	snprintf(w->pid_args, sizeof(w->pid_args), ",\"pid\":%llu,\"args\":{", w->tpid);
	w->stats.processes++;
	u64map_free(&w->track_of);
	w->n_tracks = 0;
	opstack_reset(&w->ops);
	for (k = i; k < j; k++) {
		const struct memscope_timeline_point *r = &w->recs[k];

		last_ts = r->at.ts_ns;
		switch (r->kind) {
		case MEMSCOPE_TL_LIVE:
			if (counter(w, r, TRACK_LIVE, r->value, k))
				return MEMSCOPE_E_NOMEM;
			break;
		case MEMSCOPE_TL_USED:
			if (counter(w, r, TRACK_USED, r->value, k) ||
				(r->total != INT64_MIN &&
					counter(w, r, TRACK_RESERVED, r->total, k)))
				return MEMSCOPE_E_NOMEM;
			break;
		case MEMSCOPE_TL_BEGIN:
			if (opstack_push(&w->ops, r->tid, k, r->name))
				return MEMSCOPE_E_NOMEM;
			break;
		case MEMSCOPE_TL_END:
			/* it ends its op and those inside it; one without its start is dropped */
			for (n = opstack_closes(&w->ops, r->tid, r->name); n; n--)
				op_slice(w, opstack_pop(&w->ops, r->tid), r->at.ts_ns);
			break;
		case MEMSCOPE_TL_MARK:
			slice_head(w, r, "mstx", "i");
			put_us(w->out, ",\"s\":\"t\",\"ts\":", r->at.ts_ns - w->origin_ns);
			fprintf(w->out, ",\"pid\":%llu,\"tid\":%llu}", w->tpid,
				(unsigned long long)r->tid);
			break;
		}
	}
	for (m = 0; m < w->n_tracks; m++)
		flush_tick(w, &w->tracks[m]);
	/* slices still open end with the process's last point */
	for (m = 0; m < w->ops.n_tids; m++)
		while ((b = opstack_pop(&w->ops, w->ops.tids[m])) != SIZE_MAX)
			op_slice(w, b, last_ts);
	for (m = 0; m < n_spans; m++) {
		const struct memscope_timeline_step *s = &spans[m];

		fprintf(w->out, ",{\"name\":\"step %llu\",\"cat\":\"step\",\"ph\":\"X\"",
			(unsigned long long)s->n);
		put_span(w, s->start_ns, s->end_ns);
		fprintf(w->out,
			",\"pid\":%llu,\"tid\":%llu,\"args\":{\"step\":%llu,\"source\":\"%s\"%s}}",
			w->tpid, (unsigned long long)tid_steps, (unsigned long long)s->n,
			s->source == MEMSCOPE_STEPS_SYSTEM ? "SYSTEM STEP" : "mstx",
			s->open ? ",\"end\":\"none: to the next step or the last row\"" : "");
		w->stats.steps++;
	}
	return 0;
}

/* The trace's time origin: the earliest row of every input, points and steps, down to a
 * second. */
static uint64_t origin_of(const struct memscope_timeline *t, size_t n_inputs)
{
	const struct memscope_timeline_point *recs;
	const struct memscope_timeline_step *spans;
	size_t n, k;
	uint64_t o = UINT64_MAX;
	uint32_t src;

	for (src = 0; src < n_inputs; src++) {
		const struct memscope_timeline_input *in = memscope_timeline_input(t, src);

		if (in && in->first_ts_ns < o)
			o = in->first_ts_ns;
	}
	recs = memscope_timeline_points(t, &n);
	for (k = 0; k < n; k++)
		o = recs[k].at.ts_ns < o ? recs[k].at.ts_ns : o;
	spans = memscope_timeline_steps(t, &n);
	for (k = 0; k < n; k++)
		o = spans[k].start_ns < o ? spans[k].start_ns : o;
	return o == UINT64_MAX ? 0 : o / 1000000000 * 1000000000;
}

int memscope_timeline_write_chrome_opts(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	const struct memscope_timeline_chrome_opts *o, struct memscope_timeline_chrome_stats *stats,
	struct memscope_error *err)
{
	struct memscope_timeline_chrome_opts defaults;
	struct writer w = { .out = out, .t = t, .ops = OPSTACK_INIT };
	const struct memscope_timeline_step *spans;
	size_t i = 0, k = 0, j, e, n_points, n_spans;
	int rc = 0;

	if (!o) {
		memscope_timeline_chrome_opts_init(&defaults);
		o = &defaults;
	}
	w.tick_ns = o->tick_ns;
	w.recs = memscope_timeline_points(t, &n_points);
	w.st = memscope_timeline_strtab(t);
	spans = memscope_timeline_steps(t, &n_spans);
	w.origin_ns = origin_of(t, n_inputs);
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":", out);
	json_cstr(out, producer ? producer : "libmemscope");
	fprintf(out, ",\"origin_s\":%llu},\"traceEvents\":[",
		(unsigned long long)(w.origin_ns / 1000000000));
	/* every process, of the points and of the steps, in (input, pid) order */
	while (!rc && (i < n_points || k < n_spans)) {
		const struct memscope_timeline_point *p = i < n_points ? &w.recs[i] : NULL;
		const struct memscope_timeline_step *s = k < n_spans ? &spans[k] : NULL;
		uint32_t src;
		uint64_t pid;

		if (p && (!s || s->src > p->src || (s->src == p->src && s->pid >= p->pid)))
			src = p->src, pid = p->pid;
		else
			src = s->src, pid = s->pid;
		for (j = i; j < n_points && w.recs[j].src == src && w.recs[j].pid == pid; j++)
			;
		for (e = k; e < n_spans && spans[e].src == src && spans[e].pid == pid; e++)
			;
		/* no steps at all: spans is NULL, and NULL + 0 is undefined */
		rc = write_proc(
			&w, src, pid, i, j, spans ? spans + k : NULL, e - k, inputs, n_inputs);
		i = j;
		k = e;
	}
	fputs("]}\n", out);
	u64map_free(&w.track_of);
	free(w.tracks);
	free(w.tids);
	opstack_free(&w.ops);
	if (stats)
		*stats = w.stats;
	if (rc)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	if (ferror(out))
		return memscope_error_set(err, MEMSCOPE_E_IO, NULL, 0, "write failed");
	return 0;
}

int memscope_timeline_write_chrome(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	struct memscope_error *err)
{
	return memscope_timeline_write_chrome_opts(
		out, t, inputs, n_inputs, producer, NULL, NULL, err);
}
