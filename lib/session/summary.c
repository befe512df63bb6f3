/* One input's summary for memscope-batch and memscope-report: one read feeding the leaks, peak and
 * inefficient analyses and a count of its own, then the figures taken from their results. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clocks.h"
#include "../core/u64map.h"
#include "run.h"
#include "summary.h"
#include "memscope/batch.h"
#include "memscope/memscope.h"

/* ------------------------------------------------------------------------------------------ */
/* what no analysis counts: processes, time span, devices, ACCESS rows */

struct tally {
	struct u64map pids;
	struct clocks clocks;	    /* a folder's files recorded apart: spans measured apart */
	uint64_t first_ns, last_ns; /* rows with a time (0: none yet), on the first clock */
	uint64_t n_access;
	uint64_t pid;	/* the first process id seen */
	int32_t device; /* the device of the blocks; INT32_MIN: none yet */
	int devices;	/* distinct devices of blocks seen: 0, 1, or 2 for several */
};

static int tally_feed(void *self, const struct memscope_event *ev)
{
	struct tally *t = self;
	struct memscope_event tmp;

	if (!(ev = ms__clocks_event(&t->clocks, ev, &tmp, NULL)))
		return MEMSCOPE_E_NOMEM;
	if (ev->ts_ns && ev->kind != MEMSCOPE_KIND_PLAN) {
		if (!t->first_ns || ev->ts_ns < t->first_ns)
			t->first_ns = ev->ts_ns;
		if (ev->ts_ns > t->last_ns)
			t->last_ns = ev->ts_ns;
	}
	if (ev->pid != MEMSCOPE_ID_NONE && !ms__u64map_get(&t->pids, ev->pid, NULL, NULL)) {
		if (ms__u64map_put(&t->pids, ev->pid, 0, 0))
			return MEMSCOPE_E_NOMEM;
		if (t->pids.n == 1)
			t->pid = ev->pid;
	}
	if (ev->kind == MEMSCOPE_KIND_ACCESS)
		t->n_access++;
	if (ev->kind == MEMSCOPE_KIND_MALLOC && ev->device != MEMSCOPE_DEVICE_NONE &&
		t->device != ev->device)
		t->devices = t->devices ? 2 : 1, t->device = ev->device;
	return 0;
}

static int tally_finish(void *self)
{
	(void)self;
	return 0;
}

static const struct memscope_analysis tally_analysis = {
	.name = "tally",
	.feed = tally_feed,
	.finish = tally_finish,
};

/* ------------------------------------------------------------------------------------------ */
/* setting fields */

static void set_num(struct memscope_summary *s, enum memscope_sum_field f, int64_t v)
{
	s->num[f] = v;
	s->has |= UINT64_C(1) << f;
}

/* A copy of text as field f. 0 or MEMSCOPE_E_NOMEM. */
static int set_str(struct memscope_summary *s, enum memscope_sum_field f, const char *text)
{
	char *c = strdup(text);

	if (!c)
		return MEMSCOPE_E_NOMEM;
	free(s->str[f]);
	s->str[f] = c;
	s->has |= UINT64_C(1) << f;
	return 0;
}

/* A byte count as a figure: one beyond what a figure holds is held at its highest, which says it
 * overflowed (MEMSCOPE_SUM_OVERFLOW). */
static int64_t bytes_figure(uint64_t bytes)
{
	return bytes >= (uint64_t)MEMSCOPE_SUM_OVERFLOW ? MEMSCOPE_SUM_OVERFLOW : (int64_t)bytes;
}

void memscope_summary_clear(struct memscope_summary *s)
{
	size_t f;

	for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++)
		free(s->str[f]);
	memset(s, 0, sizeof(*s));
}

/* whether c may be in a host name */
static int host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.';
}

/* The host of one path component HOST_PID_TIMESTAMP_ascend_pt (or _ascend_ms), name[0, n):
 * its length, 0 when it is none. */
static size_t node_of_component(const char *name, size_t n)
{
	static const char *const ends[2] = { "_ascend_pt", "_ascend_ms" };
	size_t k, at, digits, fields;

	for (k = 0; k < 2; k++)
		if (n > strlen(ends[k]) &&
			!memcmp(name + n - strlen(ends[k]), ends[k], strlen(ends[k])))
			break;
	if (k == 2)
		return 0;
	at = n - strlen(ends[k]);
	/* back over _PID_TIMESTAMP: two runs of digits, each after a '_' */
	for (fields = 0; fields < 2; fields++) {
		for (digits = 0; at > 0 && name[at - 1] >= '0' && name[at - 1] <= '9'; at--)
			digits++;
		if (!digits || !at || name[at - 1] != '_')
			return 0;
		at--;
	}
	for (k = 0; k < at; k++)
		if (!host_char(name[k]))
			return 0;
	return at;
}

size_t memscope_node_of_path(const char *path, char *buf, size_t size)
{
	const char *end = path + strlen(path), *start;
	size_t n;

	if (size)
		buf[0] = '\0';
	while (end > path) {
		while (end > path && end[-1] == '/')
			end--;
		for (start = end; start > path && start[-1] != '/'; start--)
			;
		if ((n = node_of_component(start, (size_t)(end - start)))) {
			if (n >= size)
				return 0;
			memcpy(buf, start, n);
			buf[n] = '\0';
			return n;
		}
		end = start;
	}
	return 0;
}

/* What every summary has, read or not: index, input, rank, device, node. 0 or NOMEM. */
static int set_identity(
	struct memscope_summary *s, const struct memscope_batch_input *in, uint64_t index)
{
	char node[256];

	memscope_summary_clear(s);
	set_num(s, MEMSCOPE_SUM_INDEX, (int64_t)index);
	if (in->rank >= 0)
		set_num(s, MEMSCOPE_SUM_RANK, in->rank);
	if (in->device[0] && set_str(s, MEMSCOPE_SUM_DEVICE, in->device))
		return MEMSCOPE_E_NOMEM;
	if (memscope_node_of_path(in->path, node, sizeof(node)) &&
		set_str(s, MEMSCOPE_SUM_NODE, node))
		return MEMSCOPE_E_NOMEM;
	return set_str(s, MEMSCOPE_SUM_INPUT, in->path);
}

int memscope_summary_fail(struct memscope_summary *s, const struct memscope_batch_input *in,
	uint64_t index, int code, const char *msg)
{
	int invalid = code == MEMSCOPE_E_INVALID || code == MEMSCOPE_E_TRUNCATED ||
		      code == MEMSCOPE_E_UNSUPPORTED;

	if (set_identity(s, in, index) ||
		set_str(s, MEMSCOPE_SUM_STATUS, invalid ? "invalid" : "error") ||
		set_str(s, MEMSCOPE_SUM_ERROR, msg))
		return MEMSCOPE_E_NOMEM;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the figures of the analyses */

/* What the read of the input and its traces saw, through the run's hook. */
struct seen {
	enum memscope_format format;
	struct memscope_read_stats stats;
};

static void input_read(
	void *ctx, uint32_t src, const char *name, const struct memscope_source *s, unsigned pass)
{
	struct seen *w = ctx;

	(void)src, (void)name;
	if (pass == 1) {
		w->format = memscope_source_format(s);
		w->stats = *memscope_source_stats(s);
	}
}

/* Live bytes of track k at the end of each ended step of its process, as growth per step. */
struct growth {
	uint32_t track;
	const uint64_t *ends_ns; /* ended steps' ends, ascending */
	size_t n_ends, next;
	int64_t *at_end; /* live bytes at each end */
	int64_t bytes;	 /* after the points so far */
};

static int growth_point(void *ctx, const struct memscope_peak_point *pt)
{
	struct growth *g = ctx;

	if (pt->track != g->track)
		return 0;
	while (g->next < g->n_ends && pt->ts_ns > g->ends_ns[g->next])
		g->at_end[g->next++] = g->bytes;
	g->bytes = pt->bytes;
	return 0;
}

/* The step figures of the peak's track k: steps, peak_step, growth_per_step. 0 or NOMEM. */
static int step_figures(struct memscope_summary *s, const struct memscope_peak *p, long k)
{
	const struct memscope_peak_track *t = memscope_peak_tracks(p, &(size_t){ 0 }) + k;
	const struct memscope_step_proc *sp =
		memscope_steps_proc(memscope_peak_steps(p), t->src, t->pid);
	struct growth g = { (uint32_t)k, NULL, 0, 0, NULL, 0 };
	uint64_t n, i, *ends;
	int rc = 0;

	if (!sp || !(n = memscope_steps_count(sp)))
		return 0;
	i = memscope_steps_at(sp, t->peak_at);
	if (i != MEMSCOPE_STEP_NONE)
		set_num(s, MEMSCOPE_SUM_PEAK_STEP, (int64_t)i);
	if (!(ends = malloc(n * sizeof(*ends))) || !(g.at_end = malloc(n * sizeof(*g.at_end)))) {
		rc = MEMSCOPE_E_NOMEM;
		goto out;
	}
	for (i = 1; i <= n; i++) {
		struct memscope_pos end;

		if (memscope_steps_end(sp, memscope_steps_number(sp, i), &end))
			ends[g.n_ends++] = end.ts_ns;
	}
	g.ends_ns = ends;
	memscope_peak_foreach_point(p, growth_point, &g);
	while (g.next < g.n_ends)
		g.at_end[g.next++] = g.bytes;
	/* from the end of the second step on: the first is the warm-up (memscope-leaks' skip) */
	if (g.n_ends >= 3)
		set_num(s, MEMSCOPE_SUM_GROWTH_PER_STEP,
			(g.at_end[g.n_ends - 1] - g.at_end[1]) / (int64_t)(g.n_ends - 2));
out:
	free(ends);
	free(g.at_end);
	return rc;
}

/* The peak figures. 0 or NOMEM. */
static int peak_figures(
	struct memscope_summary *s, const struct memscope_peak *p, const struct memscope_strtab *st)
{
	size_t n_tracks, n_owners, i, len = 0;
	const struct memscope_peak_track *t = memscope_peak_tracks(p, &n_tracks);
	const struct memscope_peak_owner *own = memscope_peak_owners(p, &n_owners);
	long k = memscope_peak_track_of_peak(p);
	int64_t pools[MEMSCOPE_SUB_COUNT_];
	char text[MEMSCOPE_SUB_COUNT_ * 32];
	uint16_t q;

	if (k < 0)
		return 0;
	set_num(s, MEMSCOPE_SUM_PEAK_BYTES, t[k].peak);
	set_num(s, MEMSCOPE_SUM_PEAK_NS,
		(int64_t)(t[k].peak_at.ts_ns - memscope_peak_origin(p, t[k].src)));
	if (set_str(s, MEMSCOPE_SUM_PEAK_POOL, memscope_subtype_name(t[k].pool)))
		return MEMSCOPE_E_NOMEM;
	if (n_owners) {
		set_num(s, MEMSCOPE_SUM_PEAK_OWNER_BYTES, bytes_figure(own[0].bytes));
		if (set_str(s, MEMSCOPE_SUM_PEAK_OWNER, memscope_strtab_str(st, own[0].name, NULL)))
			return MEMSCOPE_E_NOMEM;
	}
	for (q = 0; q < MEMSCOPE_SUB_COUNT_; q++)
		pools[q] = -1;
	for (i = 0; i < n_tracks; i++)
		if (t[i].pool < MEMSCOPE_SUB_COUNT_ && t[i].peak > pools[t[i].pool])
			pools[t[i].pool] = t[i].peak;
	text[0] = 0;
	for (q = 0; q < MEMSCOPE_SUB_COUNT_; q++)
		if (pools[q] >= 0)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s=%lld",
				len ? ";" : "", memscope_subtype_name(q), (long long)pools[q]);
	if (set_str(s, MEMSCOPE_SUM_POOL_PEAKS, text))
		return MEMSCOPE_E_NOMEM;
	return step_figures(s, p, k);
}

/* The most steps of any process, through memscope_steps_foreach. */
static int most_steps(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	uint64_t *most = ctx, n = memscope_steps_count(p);

	(void)src, (void)pid;
	if (n > *most)
		*most = n;
	return 0;
}

/* Count the rows of a python_trace file. */
static int count_row(void *ctx, const struct memscope_trace_row *row)
{
	(void)row;
	++*(uint64_t *)ctx;
	return 0;
}

/* Rows of the python_trace files of in into *rows, their bytes added to *bytes. 0 or the error. */
static int read_traces(const struct memscope_batch_input *in, struct memscope_strtab *st,
	const struct memscope_read_opts *ro, uint64_t *rows, uint64_t *bytes,
	struct memscope_error *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < in->n_traces && !rc; i++) {
		struct memscope_source *src = NULL;

		if (!(rc = memscope_source_open(&src, in->traces[i], st, ro, err))) {
			rc = memscope_source_read_trace(src, count_row, rows, err);
			*bytes += memscope_source_stats(src)->bytes;
		}
		memscope_source_close(src);
	}
	return rc;
}

/*
 * The leaks of kind into field count and the one after it (their bytes): those of every pool but
 * HAL when a pool carved out of HAL is among them (memscope_leaks_nested), which would count
 * memory twice, as memscope-leaks' text says ("not summed: PTA lies inside HAL"). Unknown when
 * the kind could not be checked (memscope_leaks_checked).
 */
static void leak_figures(struct memscope_summary *s, const struct memscope_leaks *l, unsigned kind,
	enum memscope_sum_field count)
{
	struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
	size_t n = memscope_leaks_totals(l, kind, 0, t), i;
	int nested = memscope_leaks_nested(l, kind, 0);
	uint64_t blocks = 0, bytes = 0;

	if (memscope_leaks_checked(l, kind, 0) != MEMSCOPE_LEAKS_CHECKED)
		return;
	for (i = 0; i < n; i++) {
		if (nested && t[i].pool < 64 &&
			(MEMSCOPE_POOL_BIT(t[i].pool) & MEMSCOPE_POOLS_OUTER))
			continue;
		blocks += t[i].n;
		bytes = bytes + t[i].bytes < bytes ? UINT64_MAX : bytes + t[i].bytes;
	}
	set_num(s, count, (int64_t)blocks);
	set_num(s, count + 1, bytes_figure(bytes));
}

/* not_checked: which leaks could not be checked and why, the library's words: "step leaks: no
 * steps: ...", "step and exit leaks: no allocations or frees", "" when none. 0 or NOMEM. */
static int not_checked(struct memscope_summary *s, const struct memscope_leaks *l)
{
	enum memscope_leaks_unchecked step = memscope_leaks_checked(l, MEMSCOPE_LEAK_STEP, 0);
	enum memscope_leaks_unchecked exit = memscope_leaks_checked(l, MEMSCOPE_LEAK_EXIT, 0);
	char text[256] = "";

	if (exit != MEMSCOPE_LEAKS_CHECKED)
		snprintf(text, sizeof(text), "step and exit leaks: %s",
			memscope_leaks_unchecked_text(exit));
	else if (step != MEMSCOPE_LEAKS_CHECKED)
		snprintf(text, sizeof(text), "step leaks: %s", memscope_leaks_unchecked_text(step));
	return set_str(s, MEMSCOPE_SUM_NOT_CHECKED, text);
}

/* The figures of the analyses and of the read. 0 or NOMEM. */
static int figures(struct memscope_summary *s, const struct seen *w, const struct tally *t,
	const struct memscope_leaks *l, const struct memscope_peak *p,
	const struct memscope_inefficient *a, const struct memscope_strtab *st)
{
	const struct memscope_leaks_stats *ls = memscope_leaks_stats(l);
	uint64_t steps = 0;
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];

	if (set_str(s, MEMSCOPE_SUM_STATUS, "ok") || set_str(s, MEMSCOPE_SUM_ERROR, "") ||
		set_str(s, MEMSCOPE_SUM_FORMAT, memscope_format_name(w->format)))
		return MEMSCOPE_E_NOMEM;
	if (!(s->has & UINT64_C(1) << MEMSCOPE_SUM_DEVICE) && t->devices == 1 &&
		set_str(s, MEMSCOPE_SUM_DEVICE, memscope_device_text(t->device, dev)))
		return MEMSCOPE_E_NOMEM;
	set_num(s, MEMSCOPE_SUM_BYTES, bytes_figure(w->stats.bytes));
	set_num(s, MEMSCOPE_SUM_EVENTS, (int64_t)w->stats.n_events);
	set_num(s, MEMSCOPE_SUM_SKIPPED, (int64_t)w->stats.n_skipped);
	set_num(s, MEMSCOPE_SUM_PROCESSES, (int64_t)t->pids.n);
	if (t->pids.n == 1 && t->pid <= (uint64_t)INT64_MAX)
		set_num(s, MEMSCOPE_SUM_PID, (int64_t)t->pid);
	if (t->first_ns) /* else no row has a time: no span */
		set_num(s, MEMSCOPE_SUM_SPAN_NS, (int64_t)(t->last_ns - t->first_ns));
	if (set_str(s, MEMSCOPE_SUM_END, memscope_leaks_end_name(memscope_leaks_end_of(l, 0))))
		return MEMSCOPE_E_NOMEM;
	memscope_steps_foreach(memscope_peak_steps(p), most_steps, &steps);
	set_num(s, MEMSCOPE_SUM_STEPS, (int64_t)steps);
	set_num(s, MEMSCOPE_SUM_ALLOCATIONS, (int64_t)ls->n_alloc);
	set_num(s, MEMSCOPE_SUM_FREES, (int64_t)ls->n_free);
	set_num(s, MEMSCOPE_SUM_ACCESSES, (int64_t)t->n_access);
	leak_figures(s, l, MEMSCOPE_LEAK_EXIT, MEMSCOPE_SUM_EXIT_LEAKS);
	leak_figures(s, l, MEMSCOPE_LEAK_STEP, MEMSCOPE_SUM_STEP_LEAKS);
	if (not_checked(s, l))
		return MEMSCOPE_E_NOMEM;
	if (t->n_access) {
		const struct memscope_inefficient_stats *is = memscope_inefficient_stats(a);

		set_num(s, MEMSCOPE_SUM_INEFFICIENT_BLOCKS, (int64_t)is->n_blocks);
		set_num(s, MEMSCOPE_SUM_INEFFICIENT_BYTES, bytes_figure(is->bytes));
	}
	return peak_figures(s, p, st);
}

/* The read of one input into the analyses of run, whose input_read hook w gets. 0 or the error. */
static int read_input(const struct memscope_batch_input *in, const struct memscope_read_opts *o,
	const struct ms__summary_run *run, struct tally *t, struct seen *w,
	struct memscope_error *err)
{
	struct memscope_run_hooks hooks = { .input_read = input_read };
	struct memscope_run_item items[4 + MS__SUMMARY_EXTRA_MAX] = {
		{ &memscope_leaks_analysis, run->leaks }, { &memscope_peak_analysis, run->peak },
		{ &memscope_inefficient_analysis, run->ineff }, { &tally_analysis, t }
	};
	const char *path = in->path;
	size_t n = 4, i;

	for (i = 0; i < run->n_extra && i < MS__SUMMARY_EXTRA_MAX; i++)
		items[n++] = run->extra[i];
	if (run->session)
		return ms__session_run_input(
			run->session, run->input, run->st, items, n, &hooks, w, err);
	return memscope_run(&path, 1, run->st, o, items, n, &hooks, w, err);
}

int ms__summary_read_into(struct memscope_summary *s, const struct memscope_batch_input *in,
	uint64_t index, const struct memscope_read_opts *ro, const struct ms__summary_run *run,
	struct memscope_error *err)
{
	struct tally t = { .device = INT32_MIN };
	struct seen w = { 0 };
	struct memscope_read_opts o = { 0 };
	uint64_t rows = 0, trace_bytes = 0;
	int rc;

	memscope_error_clear(err);
	if (ro)
		o = *ro;
	o.src = 0;
	if (in->err_code) {
		rc = memscope_error_set(err, in->err_code, in->path, 0, "%s", in->err_msg);
		goto failed;
	}
	if ((rc = read_input(in, &o, run, &t, &w, err)) ||
		(rc = read_traces(in, run->st, &o, &rows, &trace_bytes, err)))
		goto failed;
	if (__builtin_add_overflow(w.stats.bytes, trace_bytes, &w.stats.bytes))
		w.stats.bytes = UINT64_MAX;
	if ((rc = set_identity(s, in, index)) ||
		(rc = figures(s, &w, &t, run->leaks, run->peak, run->ineff, run->st)))
		goto nomem;
	set_num(s, MEMSCOPE_SUM_TRACE_ROWS, (int64_t)rows);
	goto out;
nomem:
	memscope_error_set(err, rc, in->path, 0, "out of memory");
failed : {
	char msg[1024];

	memscope_error_format(err, msg, sizeof(msg));
	if (memscope_summary_fail(s, in, index, rc, msg))
		rc = MEMSCOPE_E_NOMEM;
}
out:
	ms__u64map_free(&t.pids);
	ms__clocks_free(&t.clocks);
	return rc;
}

int memscope_summary_read(struct memscope_summary *s, const struct memscope_batch_input *in,
	uint64_t index, const struct memscope_read_opts *ro, struct memscope_error *err)
{
	struct ms__summary_run run = { 0 };
	int rc;

	memscope_error_clear(err);
	if (in->err_code)
		return ms__summary_read_into(s, in, index, ro, &run, err);
	if (!(run.st = memscope_strtab_new()) || !(run.leaks = memscope_leaks_new(NULL, run.st)) ||
		!(run.peak = memscope_peak_new(NULL, run.st)) ||
		!(run.ineff = memscope_inefficient_new(NULL, run.st))) {
		char msg[1024];

		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, in->path, 0, "out of memory");
		memscope_error_format(err, msg, sizeof(msg));
		if (memscope_summary_fail(s, in, index, rc, msg))
			rc = MEMSCOPE_E_NOMEM;
		goto out;
	}
	rc = ms__summary_read_into(s, in, index, ro, &run, err);
out:
	memscope_inefficient_free(run.ineff);
	memscope_peak_free(run.peak);
	memscope_leaks_free(run.leaks);
	memscope_strtab_free(run.st);
	return rc;
}
