/* Writer of memory over time as Chrome trace event JSON (Perfetto, chrome://tracing): a process
 * group per (input, process), counters (live bytes, the pools' used and reserved, the profiler's
 * samples) in one unit, with the samples that cannot change the curve left out, op and step
 * slices, marks. */
#include <stdlib.h>
#include <string.h>

#include "../analyses/opstack.h"
#include "../core/clocks.h"
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
	o->tick_ns = MEMSCOPE_TL_TICK_AUTO;
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
	char head[320]; /* ,{"name":"PTA device 0 live","ph":"C","ts": */
	size_t head_len;
	int has_prev, open;
	int64_t prev;
	uint64_t tick, n_tick; /* the tick open, and its samples */
	struct sample lo, hi, last;
};

struct writer {
	FILE *out;
	const struct memscope_timeline *t;
	const struct memscope_timeline_point *recs;
	const struct memscope_strtab *st;
	uint64_t tick_ns, origin_ns;
	int mb; /* every counter in MB ("MB"), else in bytes ("bytes") */
	struct memscope_timeline_chrome_stats stats;
	char pid_args[48]; /* ,"pid":N,"tid":0,"args":{ */
	unsigned long long tpid;
	struct track *tracks;
	size_t n_tracks, cap_tracks;
	struct u64map track_of; /* (track_kind << 48 | device << 16 | pool) -> index in tracks */
	struct opstack ops;
	uint64_t *tids; /* scratch: the threads of a process's ops and marks */
	size_t cap_tids;
	char hal_holds[96]; /* " (holds PTA, ATB)": the pools of the input HAL's blocks hold */
	const char *outer;  /* the pool holding them: "HAL" or "CUDA" */
};

/* Nanoseconds as the trace's microseconds: "12", "12.5", "12.005". Returns the length. */
static size_t fmt_us(char *d, uint64_t ns)
{
	size_t n = ms__fmt_u64(d, ns / 1000);
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

/* Bytes as MB (1048576 bytes, the profiler's MB) with up to six decimals, rounded: "1452",
 * "0.5", "-0.000977". Returns the length (at most 28). */
static size_t fmt_mb(char *d, int64_t v)
{
	uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v, whole = a >> 20;
	uint64_t frac = ((a & 0xfffff) * 1000000 + (1u << 19)) >> 20; /* millionths, rounded */
	size_t n = 0;
	int k;

	if (frac == 1000000) {
		whole++;
		frac = 0;
	}
	if (v < 0 && (whole || frac))
		d[n++] = '-';
	n += ms__fmt_u64(d + n, whole);
	if (frac) {
		d[n++] = '.';
		for (k = 100000; k; k /= 10)
			d[n++] = (char)('0' + frac / (uint64_t)k % 10);
		while (d[n - 1] == '0')
			n--;
	}
	return n;
}

static void emit(struct writer *w, const struct track *k, const struct sample *s)
{
	char buf[sizeof(k->head) + sizeof(w->pid_args) + 80];
	size_t n = k->head_len, p = strlen(w->pid_args);

	memcpy(buf, k->head, n);
	n += fmt_us(buf + n, s->ts_ns - w->origin_ns);
	memcpy(buf + n, w->pid_args, p);
	n += p;
	if (w->mb) {
		memcpy(buf + n, "\"MB\":", 5);
		n += 5 + fmt_mb(buf + n + 5, s->v);
	} else {
		memcpy(buf + n, "\"bytes\":", 8);
		n += 8 + ms__fmt_i64(buf + n + 8, s->v);
	}
	memcpy(buf + n, "}}", 2);
	fwrite(buf, 1, n + 2, w->out);
	w->stats.samples++;
}

/* The tick of k is over: its lowest, highest and last sample, in order, each once (the value
 * held from before the tick and these draw the tick as every sample in it would). */
static void flush_tick(struct writer *w, struct track *k)
{
	const struct sample *c[3] = { &k->lo, &k->hi, &k->last }, *x;
	size_t i, done = 0;

	if (!k->open)
		return;
	if (c[0]->seq > c[1]->seq) {
		x = c[0];
		c[0] = c[1];
		c[1] = x;
	}
	/* the last comes last */
	for (i = 0; i < 3; i++)
		if (!i || c[i]->seq != c[i - 1]->seq) {
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
	uint64_t key = (uint64_t)kind << 48 | (uint64_t)(uint32_t)r->device << 16 | r->pool;
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];
	const char *pool = memscope_subtype_name(r->pool);
	struct track *k;
	size_t at;
	int len, rc;

	rc = ms__u64map_slot(&w->track_of, key, &w->tracks, &w->n_tracks, &w->cap_tracks,
		sizeof(*w->tracks), &at);
	if (rc <= 0)
		return rc ? NULL : &w->tracks[at];
	k = &w->tracks[at];
	/* the pool and device names are plain ASCII: nothing to escape */
	len = snprintf(k->head, sizeof(k->head),
		",{\"name\":\"%s device %s %s%s\",\"ph\":\"C\",\"ts\":", pool ? pool : "memory",
		memscope_device_text(r->device, dev), what[kind],
		r->pool < 64 && (MEMSCOPE_POOL_BIT(r->pool) & MEMSCOPE_POOLS_OUTER) ? w->hal_holds
										    : "");
	k->head_len = len > 0 && (size_t)len < sizeof(k->head) ? (size_t)len : 0;
	return k;
}

/* Value v of track k at ts_ns (the seq-th sample of its process or track, in time order):
 * written, held for its tick, or left out. */
static void sample(struct writer *w, struct track *k, uint64_t ts_ns, int64_t v, size_t seq)
{
	struct sample s = { ts_ns, v, seq };
	uint64_t tick;

	if (!w->tick_ns) {
		emit(w, k, &s);
		return;
	}
	/* the value of the sample before: the curve does not move */
	if (k->has_prev && v == k->prev) {
		w->stats.samples_left_out++;
		return;
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
		return;
	}
	flush_tick(w, k);
	k->open = 1;
	k->tick = tick;
	k->n_tick = 1;
	k->lo = k->hi = k->last = s;
}

/* Value v of track `kind` of counter point r (the seq-th of its process). 0 or
 * MEMSCOPE_E_NOMEM. */
static int counter(struct writer *w, const struct memscope_timeline_point *r, enum track_kind kind,
	int64_t v, size_t seq)
{
	struct track *k = track_of(w, r, kind);

	if (!k)
		return MEMSCOPE_E_NOMEM;
	sample(w, k, r->at.ts_ns, v, seq);
	return 0;
}

/* s[0..len) into d as the inside of a JSON string, at most room bytes, whole characters only
 * (invalid UTF-8 as U+FFFD). Returns the bytes written. */
static size_t json_into(char *d, size_t room, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t n = 0, c;

	while (p < end) {
		char esc[8];
		const char *put = esc;

		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			c = 2;
			p++;
		} else if (*p < 0x20) {
			c = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", *p);
			p++;
		} else if ((c = ms__utf8_seq(p, end))) {
			put = (const char *)p;
			p += c;
		} else {
			put = "\xef\xbf\xbd";
			c = 3;
			p++;
		}
		if (n + c > room)
			break;
		memcpy(d + n, put, c);
		n += c;
	}
	return n;
}

/* Whether a sample track is left out: a module never above 0 carries nothing (npu_module_mem
 * lists every CANN module, most of them idle). */
static int left_out(const struct memscope_counter_track *t)
{
	return t->subtype == MEMSCOPE_SUB_MODULE_SAMPLE && t->max[MEMSCOPE_CTR_TOTAL] <= 0;
}

/*
 * The counter tracks of one sample track of the profiler, one per series it has (one series per
 * event, so Chrome and Perfetto both draw it): memory_record's "NPU0 PTA (memory_record)
 * allocated", "... reserved", "... active"; npu_mem's "NPU0 APP/Memory"; npu_module_mem's "NPU0
 * module HCCL" (none never above 0). The samples in time order, left out as the other counters'.
 */
static void counter_track(struct writer *w, const struct memscope_counter_track *t)
{
	static const char *const what[MEMSCOPE_CTR_N] = { "allocated", "reserved", "active" };
	struct track k[MEMSCOPE_CTR_N];
	struct memscope_counter_iter it;
	struct memscope_counter_sample s;
	const char *name;
	char dev[24] = "", lab[48];
	size_t len, j, n, seq = 0;
	unsigned main = t->subtype == MEMSCOPE_SUB_NPU_MEM	   ? 1u << MEMSCOPE_CTR_USED
			: t->subtype == MEMSCOPE_SUB_MODULE_SAMPLE ? 1u << MEMSCOPE_CTR_TOTAL
								   : 0;

	if (left_out(t)) {
		w->stats.modules_left_out++;
		return;
	}
	if (t->device >= 0)
		snprintf(dev, sizeof(dev), "NPU%d ", (int)t->device);
	else if (t->device == MEMSCOPE_DEVICE_HOST)
		snprintf(dev, sizeof(dev), "host ");
	name = memscope_strtab_str(w->st, t->name, &len);
	for (j = 0; j < MEMSCOPE_CTR_N; j++) {
		char *h = k[j].head;
		size_t room = sizeof(k[j].head) - 64;

		memset(&k[j], 0, sizeof(k[j]));
		if (!(t->series & 1u << j))
			continue;
		n = (size_t)snprintf(h, room, ",{\"name\":\"%s%s", dev,
			t->subtype == MEMSCOPE_SUB_MODULE_SAMPLE ? "module " : "");
		n += json_into(h + n, room - n, name ? name : "", name ? len : 0);
		if (t->subtype == MEMSCOPE_SUB_POOL_SAMPLE)
			n += (size_t)snprintf(h + n, sizeof(k[j].head) - n, " (%s)",
				memscope_counter_source(t->subtype));
		if (!(main & 1u << j))
			n += (size_t)snprintf(h + n, sizeof(k[j].head) - n, " %s", what[j]);
		/* a file recorded far apart, drawn from the input's start: said in its name */
		n += (size_t)snprintf(h + n, sizeof(k[j].head) - n, "%s\",\"ph\":\"C\",\"ts\":",
			ms__clocks_label(t->shift_ns, lab, sizeof(lab)));
		k[j].head_len = n;
	}
	memscope_counter_iter_init(&it, t);
	while (memscope_counter_next(&it, &s)) {
		for (j = 0; j < MEMSCOPE_CTR_N; j++)
			if (s.has & 1u << j)
				sample(w, &k[j], s.ts_ns, s.v[j], seq);
		seq++;
	}
	for (j = 0; j < MEMSCOPE_CTR_N; j++)
		flush_tick(w, &k[j]);
}

/* ---- one process group ---- */

/* ,{"name":NAME,"cat":CAT,"ph":"X" of point r's name */
static void slice_head(
	struct writer *w, const struct memscope_timeline_point *r, const char *cat, const char *ph)
{
	size_t len;
	const char *name = memscope_strtab_str(w->st, r->name, &len);

	fputs(",{\"name\":", w->out);
	ms__json_str(w->out, name ? name : "", name ? len : 0);
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
		if (ms__grow_array(&w->tids, &w->cap_tids, n + 1, sizeof(*w->tids)))
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

/* What the HAL (or CUDA) tracks of the process of points [i, j) say of the pools beside it there
 * whose blocks its blocks hold (memscope_pools_nested): " (holds PTA, ATB)", or nothing. */
static void hal_holds(struct writer *w, size_t i, size_t j)
{
	uint64_t pools = 0, inner;
	size_t len = 0, k;
	unsigned pool;

	for (k = i; k < j; k++)
		if ((w->recs[k].kind == MEMSCOPE_TL_LIVE || w->recs[k].kind == MEMSCOPE_TL_USED) &&
			w->recs[k].pool < 64)
			pools |= MEMSCOPE_POOL_BIT(w->recs[k].pool);
	inner = memscope_pools_nested(pools) ? pools & MEMSCOPE_POOLS_INNER : 0;
	w->hal_holds[0] = 0;
	w->outer = memscope_pools_outer_name(pools);
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

/* ,"clocks":["input N: ..."] when an input's files were recorded far apart in time (their rows
 * drawn from its start), nothing else. */
static void clock_notes(FILE *out, const struct memscope_timeline *t, size_t n_inputs)
{
	char note[600], text[640];
	uint32_t x;
	int n = 0;

	for (x = 0; x < n_inputs; x++) {
		if (!memscope_timeline_clock_note(t, x, note, sizeof(note)))
			continue;
		snprintf(text, sizeof(text), "input %u: %s", x + 1, note);
		fputs(n++ ? "," : ",\"clocks\":[", out);
		ms__json_cstr(out, text);
	}
	if (n)
		fputc(']', out);
}

/* The metadata of process pid of input src: its name, labels, place, and the steps' thread. */
static void proc_meta(struct writer *w, uint32_t src, uint64_t pid, const char *const *inputs,
	size_t n_inputs, uint64_t tid_steps)
{
	const char *in = src < n_inputs ? inputs[src] : NULL;
	const char *base = in && strrchr(in, '/') ? strrchr(in, '/') + 1 : in;
	char text[1200], num[24], clock[600];
	int clocks = memscope_timeline_clock_note(w->t, src, clock, sizeof(clock));

	if (in && strcmp(in, "-") == 0)
		base = in = "standard input";
	if (base && !*base)
		base = in;
	/* a process not known (a profiler's output without a timeline): the input alone */
	snprintf(num, sizeof(num), "pid %llu ", (unsigned long long)pid);
	if (pid == MEMSCOPE_ID_NONE)
		num[0] = 0;
	if (base)
		snprintf(
			text, sizeof(text), pid == MEMSCOPE_ID_NONE ? "%s%s" : "%s(%s)", num, base);
	else
		snprintf(text, sizeof(text), "%s(input %u)", num, src + 1);
	fprintf(w->out,
		"%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%llu,\"tid\":0,\"args\":{"
		"\"name\":",
		w->stats.processes ? "," : "", w->tpid);
	ms__json_cstr(w->out, text);
	snprintf(text, sizeof(text), "input %u: %s%s%s%s%s%s", src + 1, in ? in : "?",
		w->hal_holds[0] ? "; " : "", w->hal_holds[0] ? w->outer : "", w->hal_holds,
		clocks ? "; " : "", clocks ? clock : "");
	fprintf(w->out,
		"}},{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%llu,\"args\":{"
		"\"labels\":",
		w->tpid);
	ms__json_cstr(w->out, text);
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

/* One process group: the points [i, j), the steps spans[0, n_spans) and the counter tracks
 * ctr[0, n_ctr) of process pid of src. */
static int write_proc(struct writer *w, uint32_t src, uint64_t pid, size_t i, size_t j,
	const struct memscope_timeline_step *spans, size_t n_spans,
	const struct memscope_counter_track *ctr, size_t n_ctr, const char *const *inputs,
	size_t n_inputs)
{
	uint64_t tid_steps = 0, last_ts = i < j ? w->recs[i].at.ts_ns : 0;
	size_t k, b, m, n;

	w->tpid++;
	hal_holds(w, i, j);
	if (n_spans && !(tid_steps = steps_tid(w, i, j)))
		return MEMSCOPE_E_NOMEM;
	proc_meta(w, src, pid, inputs, n_inputs, tid_steps);
	snprintf(w->pid_args, sizeof(w->pid_args), ",\"pid\":%llu,\"tid\":0,\"args\":{", w->tpid);
	w->stats.processes++;
	ms__u64map_free(&w->track_of);
	w->n_tracks = 0;
	opstack_reset(&w->ops);
	for (k = i; k < j; k++) {
		const struct memscope_timeline_point *r = &w->recs[k];

		last_ts = r->at.ts_ns;
		switch (r->kind) {
		case MEMSCOPE_TL_LIVE:
			if (counter(w, r, TRACK_LIVE, r->value, k) ||
				(r->used != INT64_MIN &&
					(counter(w, r, TRACK_USED, r->used, k) ||
						(r->total != INT64_MIN &&
							counter(w, r, TRACK_RESERVED, r->total,
								k)))))
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
	for (m = 0; m < n_ctr; m++)
		counter_track(w, &ctr[m]);
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

/* 1 when process (sa, pa) comes before (sb, pb) (UINT32_MAX, UINT64_MAX: none yet). */
static int proc_first(uint32_t sa, uint64_t pa, uint32_t sb, uint64_t pb)
{
	return sa != sb ? sa < sb : pa < pb;
}

/* The trace's time origin: the earliest row of every input, points, steps and samples, down to
 * a second. */
static uint64_t origin_of(const struct memscope_timeline *t, size_t n_inputs)
{
	const struct memscope_timeline_point *recs;
	const struct memscope_timeline_step *spans;
	const struct memscope_counter_track *ctr;
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
	ctr = memscope_timeline_counters(t, &n);
	for (k = 0; k < n; k++)
		o = ctr[k].first_ts_ns < o ? ctr[k].first_ts_ns : o;
	return o == UINT64_MAX ? 0 : o / 1000000000 * 1000000000;
}

/* ---- the resolution of MEMSCOPE_TL_TICK_AUTO ---- */

/* A counter track's samples and the times of its first and last. */
struct span_of {
	uint64_t n, first, last;
};

/* The samples of track x written at most at tick: all, or the lowest, highest and last of each
 * tick it spans. */
static uint64_t at_most(const struct span_of *x, uint64_t tick)
{
	uint64_t ticks = x->last / tick - x->first / tick + 1; /* < 2^54: no overflow below */

	return 3 * ticks < x->n ? 3 * ticks : x->n;
}

static int add_span(struct span_of **sp, size_t *n, size_t *cap, struct span_of x)
{
	if (ms__grow_array(sp, cap, *n + 1, sizeof(**sp)))
		return MEMSCOPE_E_NOMEM;
	(*sp)[(*n)++] = x;
	return 0;
}

/* MEMSCOPE_TL_TICK_AUTO: the finest tick of 1, 2, 5 times 1 us, 10 us, ... up to 1 s at which the
 * counter tracks of points recs[0, n) and of t's samples hold at most MEMSCOPE_TL_AUTO_SAMPLES,
 * into *tick. 0 or MEMSCOPE_E_NOMEM. */
static int auto_tick(const struct memscope_timeline *t, const struct memscope_timeline_point *recs,
	size_t n, uint64_t *tick)
{
	static const uint64_t times[] = { 1, 2, 5 };
	const struct memscope_counter_track *ctr;
	struct u64map at = { 0 };
	struct span_of *sp = NULL;
	size_t n_sp = 0, cap = 0, i, n_ctr;
	uint64_t decade, total, ix, key;
	unsigned j, m;
	int rc = 0;

	/* the point tracks of each process (the writer's track_of) */
	for (i = 0; i < n && !rc; i++) {
		const struct memscope_timeline_point *r = &recs[i];

		if (i && (r->src != r[-1].src || r->pid != r[-1].pid))
			ms__u64map_clear(&at);
		if (r->kind != MEMSCOPE_TL_LIVE && r->kind != MEMSCOPE_TL_USED)
			continue;
		/* the tracks of the point: live, used, reserved (USED: no live) */
		for (j = r->kind == MEMSCOPE_TL_USED; j < 3; j++) {
			enum track_kind kind = j == 0	? TRACK_LIVE
					       : j == 1 ? TRACK_USED
							: TRACK_RESERVED;

			if ((j == 1 && r->used == INT64_MIN) ||
				(j == 2 && (r->used == INT64_MIN || r->total == INT64_MIN)))
				continue;

			key = (uint64_t)kind << 48 | (uint64_t)(uint32_t)r->device << 16 | r->pool;
			if (!ms__u64map_get(&at, key, &ix, NULL)) {
				ix = n_sp;
				if ((rc = add_span(&sp, &n_sp, &cap,
					     (struct span_of){ 0, r->at.ts_ns, r->at.ts_ns })) ||
					(rc = ms__u64map_put(&at, key, ix, 0)))
					break;
			}
			sp[ix].n++;
			sp[ix].last = r->at.ts_ns;
		}
	}
	ctr = memscope_timeline_counters(t, &n_ctr);
	for (i = 0; i < n_ctr && !rc; i++)
		for (j = 0; j < MEMSCOPE_CTR_N && !rc && !left_out(&ctr[i]); j++)
			if (ctr[i].series & 1u << j)
				rc = add_span(&sp, &n_sp, &cap,
					(struct span_of){ ctr[i].n_samples, ctr[i].first_ts_ns,
						ctr[i].last_ts_ns });
	*tick = 1000000000;
	for (decade = 1000; !rc && decade < 1000000000; decade *= 10)
		for (m = 0; m < 3; m++) {
			for (i = 0, total = 0; i < n_sp && total <= MEMSCOPE_TL_AUTO_SAMPLES; i++)
				total += at_most(&sp[i], decade * times[m]);
			if (total <= MEMSCOPE_TL_AUTO_SAMPLES) {
				*tick = decade * times[m];
				decade = UINT64_MAX / 10; /* the finest found: done */
				break;
			}
		}
	ms__u64map_free(&at);
	free(sp);
	return rc ? MEMSCOPE_E_NOMEM : 0;
}

int memscope_timeline_write_chrome_opts(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	const struct memscope_timeline_chrome_opts *o, struct memscope_timeline_chrome_stats *stats,
	struct memscope_error *err)
{
	struct memscope_timeline_chrome_opts defaults;
	struct writer w = { .out = out, .t = t, .ops = OPSTACK_INIT };
	const struct memscope_timeline_step *spans;
	const struct memscope_counter_track *ctr;
	const struct memscope_timeline_input *in;
	size_t i = 0, k = 0, c = 0, j, e, d, n_points, n_spans, n_ctr;
	uint32_t x;
	int rc = 0;

	if (!o) {
		memscope_timeline_chrome_opts_init(&defaults);
		o = &defaults;
	}
	w.tick_ns = o->tick_ns;
	w.recs = memscope_timeline_points(t, &n_points);
	w.st = memscope_timeline_strtab(t);
	spans = memscope_timeline_steps(t, &n_spans);
	ctr = memscope_timeline_counters(t, &n_ctr);
	w.origin_ns = origin_of(t, n_inputs);
	/* one unit for every counter: the profiler's MB when its samples are there */
	for (x = 0; x < n_inputs; x++)
		if ((in = memscope_timeline_input(t, x)) && in->samples)
			w.mb = 1;
	if (w.tick_ns == MEMSCOPE_TL_TICK_AUTO && (rc = auto_tick(t, w.recs, n_points, &w.tick_ns)))
		goto out;
	w.stats.tick_ns = w.tick_ns;
	w.stats.mb = w.mb;
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":", out);
	ms__json_cstr(out, producer ? producer : "libmemscope");
	fprintf(out, ",\"origin_s\":%llu,\"resolution_ns\":%llu",
		(unsigned long long)(w.origin_ns / 1000000000), (unsigned long long)w.tick_ns);
	clock_notes(out, t, n_inputs);
	fputs("},\"traceEvents\":[", out);
	/* every process, of the points, the steps and the samples, in (input, pid) order */
	while (!rc && (i < n_points || k < n_spans || c < n_ctr)) {
		uint32_t src = UINT32_MAX;
		uint64_t pid = UINT64_MAX;

		if (i < n_points)
			src = w.recs[i].src, pid = w.recs[i].pid;
		if (k < n_spans && proc_first(spans[k].src, spans[k].pid, src, pid))
			src = spans[k].src, pid = spans[k].pid;
		if (c < n_ctr && proc_first(ctr[c].src, ctr[c].pid, src, pid))
			src = ctr[c].src, pid = ctr[c].pid;
		for (j = i; j < n_points && w.recs[j].src == src && w.recs[j].pid == pid; j++)
			;
		for (e = k; e < n_spans && spans[e].src == src && spans[e].pid == pid; e++)
			;
		for (d = c; d < n_ctr && ctr[d].src == src && ctr[d].pid == pid; d++)
			;
		/* no steps or samples at all: the array is NULL, and NULL + 0 is undefined */
		rc = write_proc(&w, src, pid, i, j, spans ? spans + k : NULL, e - k,
			ctr ? ctr + c : NULL, d - c, inputs, n_inputs);
		i = j;
		k = e;
		c = d;
	}
	fputs("]}\n", out);
out:
	ms__u64map_free(&w.track_of);
	free(w.tracks);
	free(w.tids);
	opstack_free(&w.ops);
	if (stats)
		*stats = w.stats;
	return ms__write_end(out, rc, err);
}

int memscope_timeline_write_chrome(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	struct memscope_error *err)
{
	return memscope_timeline_write_chrome_opts(
		out, t, inputs, n_inputs, producer, NULL, NULL, err);
}
