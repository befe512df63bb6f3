/* The leak reports: text in the reference's line shapes, JSON, and CSV. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/leaks.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"
#include "report.h"

#define MIB 1048576.0

/* How the reference names a pool in each report (others follow its pattern). */
struct pool_names {
	const char *step; /* "Direct %s leak of" (online step check) */
	const char *gap;  /* "======= %s Gap Analysis" */
	const char *mark; /* "Direct %s memory leak of" (offline marked range) */
};

static struct pool_names pool_names(unsigned pool)
{
	switch (pool) {
	case MEMSCOPE_SUB_PTA:
		return (struct pool_names){ "Pytorch Caching memory pool", "Pytorch memory pool",
			"PTA" };
	case MEMSCOPE_SUB_PTA_WORKSPACE:
		return (struct pool_names){ "Pytorch Workspace memory pool",
			"Pytorch Workspace memory pool", "PTA workspace" };
	case MEMSCOPE_SUB_ATB:
		return (struct pool_names){ "ATB memory pool", "ATB memory pool", "ATB" };
	case MEMSCOPE_SUB_MINDSPORE:
		return (struct pool_names){ "Mindspore memory pool", "Mindspore memory pool",
			"MindSpore" };
	case MEMSCOPE_SUB_HAL:
		return (struct pool_names){ "Hal memory", "Hal memory", "Hal" };
	case MEMSCOPE_SUB_HOST_PINNED:
		return (struct pool_names){ "Host pinned memory", "Host pinned memory",
			"Host pinned" };
	case MEMSCOPE_SUB_HOST:
		return (struct pool_names){ "Host memory", "Host memory", "Host" };
	case MEMSCOPE_SUB_GE:
		return (struct pool_names){ "GE memory pool", "GE memory pool", "GE" };
	default:
		return (struct pool_names){ "unknown memory", "unknown memory", "unknown" };
	}
}

/* Python's repr() of a double (shortest text that reads back the same), as print() shows it. */
static void fmt_pyfloat(char *dst, size_t n, double v)
{
	char e[40], digits[24];
	int prec, exp10, nd = 0, i;
	const char *p;
	size_t at = 0;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec - 1, v);
		if (strtod(e, NULL) == v)
			break;
	}
	p = e;
	if (*p == '-')
		dst[at++] = *p++;
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[nd++] = *p;
	exp10 = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (exp10 >= -4 && exp10 < 16) {
		if (exp10 < 0) {
			at += (size_t)snprintf(dst + at, n - at, "0.");
			for (i = 0; i < -exp10 - 1; i++)
				dst[at++] = '0';
			for (i = 0; i < nd; i++)
				dst[at++] = digits[i];
		} else {
			for (i = 0; i <= exp10; i++)
				dst[at++] = i < nd ? digits[i] : '0';
			dst[at++] = '.';
			if (nd > exp10 + 1)
				for (i = exp10 + 1; i < nd; i++)
					dst[at++] = digits[i];
			else
				dst[at++] = '0';
		}
		dst[at] = '\0';
		return;
	}
	dst[at++] = digits[0];
	if (nd > 1) {
		dst[at++] = '.';
		for (i = 1; i < nd; i++)
			dst[at++] = digits[i];
	}
	snprintf(dst + at, n - at, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
}

/* ---- text ---- */

struct report {
	FILE *out;
	const struct memscope_leaks *l;
	const struct memscope_strtab *st;
	const struct memscope_leaks_input *inputs;
	size_t n_inputs;
	int printed; /* text: a section has been written */
};

static const char *input_name(const struct report *r, uint32_t src)
{
	return src < r->n_inputs && r->inputs[src].name ? r->inputs[src].name : "-";
}

/* the Ptr column as the input writes it */
static void ptr_text(const struct report *r, const struct memscope_block *b, char *buf, size_t n)
{
	if (b->src < r->n_inputs && r->inputs[b->src].ptr_decimal)
		snprintf(buf, n, "%" PRIu64, b->ptr);
	else
		snprintf(buf, n, "0x%016" PRIx64, b->ptr);
}

/* whether a report section covers more than one process */
struct several {
	int any, several;
	uint64_t pid;
};

static void several_add(struct several *s, uint64_t pid)
{
	if (s->any && s->pid != pid)
		s->several = 1;
	s->any = 1;
	s->pid = pid;
}

static void process_suffix(char *buf, size_t n, int several, uint64_t pid)
{
	if (several)
		snprintf(buf, n, " (process %" PRIu64 ")", pid);
	else
		buf[0] = '\0';
}

/*
 * Binary search: the first i of n for which before(r, i, v) is false, it being true of a prefix.
 * The result orders of memscope/leaks.h keep the items of one input in one run, so each input's
 * part of the text costs its own items, not every input's.
 */
static size_t first_not(size_t n, int (*before)(const struct report *r, size_t i, uint64_t v),
	const struct report *r, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (before(r, mid, v))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* findings: the STEP ones of inputs before v (STEP findings come first, by input) */
static int step_before(const struct report *r, size_t i, uint64_t v)
{
	const struct memscope_leak *x = memscope_leaks_get(r->l, i);

	return x->kind == MEMSCOPE_LEAK_STEP && x->blk.src < v;
}

/* findings: the STEP ones, and the MARK ones of groups before v (by group) */
static int mark_before(const struct report *r, size_t i, uint64_t v)
{
	const struct memscope_leak *x = memscope_leaks_get(r->l, i);

	return x->kind == MEMSCOPE_LEAK_STEP || (x->kind == MEMSCOPE_LEAK_MARK && x->group < v);
}

/* fluctuation groups of inputs before v (by input) */
static int fluct_before(const struct report *r, size_t i, uint64_t v)
{
	size_t n;

	return memscope_leaks_fluct(r->l, &n)[i].src < v;
}

/* mark groups of inputs before v (by input) */
static int mgroup_before(const struct report *r, size_t i, uint64_t v)
{
	size_t n;

	return memscope_leaks_mark_groups(r->l, &n)[i].src < v;
}

/* After a byte figure in the reference's Mb(s) lines: a note when the total saturated. */
static const char *overflowed(uint64_t bytes)
{
	return bytes == MEMSCOPE_BYTES_OVERFLOW ? " (the total overflowed)" : "";
}

/* The online check's exit report (formats/analyses.md "Step leaks"), per process and device with
 * step leaks. */
static void text_step(struct report *r, uint32_t src)
{
	size_t n = memscope_leaks_count(r->l), i, j, lo;
	struct several sv = { 0, 0, 0 };

	/* the input's step findings are [lo, n) from here on */
	lo = first_not(n, step_before, r, src);
	n = first_not(n, step_before, r, (uint64_t)src + 1);
	for (i = lo; i < n; i++) {
		const struct memscope_leak *x = memscope_leaks_get(r->l, i);

		if (x->kind == MEMSCOPE_LEAK_STEP && x->blk.src == src)
			several_add(&sv, x->blk.pid);
	}
	for (i = lo; i < n;) {
		const struct memscope_leak *x = memscope_leaks_get(r->l, i);
		char dev[MEMSCOPE_DEVICE_TEXT_MAX], proc[48];
		uint64_t bytes = 0, count = 0;

		if (x->kind != MEMSCOPE_LEAK_STEP || x->blk.src != src) {
			i++;
			continue;
		}
		process_suffix(proc, sizeof(proc), sv.several, x->blk.pid);
		r->printed = 1;
		fprintf(r->out, "====== ERROR: Detected memory leaks on device %s%s ======\n",
			memscope_device_text(x->blk.device, dev), proc);
		for (j = i; j < n; j++) {
			const struct memscope_leak *y = memscope_leaks_get(r->l, j);

			if (y->kind != MEMSCOPE_LEAK_STEP || y->blk.src != src ||
				y->blk.pid != x->blk.pid || y->blk.device != x->blk.device)
				break;
			fprintf(r->out,
				"Direct %s leak of %f Mb(s) at 0x%" PRIx64 " in kernel_%" PRIu64
				" at step %" PRIu64 ".\n",
				pool_names(y->blk.pool).step, (double)y->blk.size / MIB, y->blk.ptr,
				y->kernel_index, y->alloc_step);
			add_bytes(&bytes, y->blk.size);
			count++;
		}
		fprintf(r->out,
			"====== SUMMARY: %f Mb(s)%s leaked in %" PRIu64 " allocation(s) ======\n",
			(double)bytes / MIB, overflowed(bytes), count);
		i = j;
	}
}

/* The gap analysis (formats/analyses.md "Fluctuation") of each device and pool. */
static void text_gap(struct report *r, uint32_t src)
{
	size_t n, i, first;
	const struct memscope_fluct *f = memscope_leaks_fluct(r->l, &n);
	struct several sv = { 0, 0, 0 };

	/* the input's groups are [first, n) from here on */
	first = first_not(n, fluct_before, r, src);
	n = first_not(n, fluct_before, r, (uint64_t)src + 1);
	for (i = first; i < n; i++)
		if (f[i].src == src && f[i].has_gaps)
			several_add(&sv, f[i].pid);
	for (i = first; i < n; i++) {
		const struct memscope_fluct_step *lo, *hi;
		char dev[MEMSCOPE_DEVICE_TEXT_MAX], proc[48];

		if (f[i].src != src || !f[i].has_gaps)
			continue;
		lo = &f[i].steps[f[i].min_gap];
		hi = &f[i].steps[f[i].max_gap];
		process_suffix(proc, sizeof(proc), sv.several, f[i].pid);
		r->printed = 1;
		fprintf(r->out, "======= %s Gap Analysis of Device %s%s =======\n",
			pool_names(f[i].pool).gap, memscope_device_text(f[i].device, dev), proc);
		fprintf(r->out, "\t%-25s%-25s%s\n", "MinAlloc/MaxAlloc(%)", "MinAllocMem(MB)",
			"StepId");
		fprintf(r->out, "MinGap\t%-25.4f%-25.4f%" PRIu64 "\n",
			(double)lo->min / (double)lo->max * 100, (double)lo->min / MIB, lo->step);
		fprintf(r->out, "MaxGap\t%-25.4f%-25.4f%" PRIu64 "\n",
			(double)hi->min / (double)hi->max * 100, (double)hi->min / MIB, hi->step);
	}
}

/* The offline check's output (formats/analyses.md "Marked-range leaks"): every checked group,
 * leaks or "No ... detected". */
static void text_mark(struct report *r, uint32_t src)
{
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	size_t n, i, j, lo, nl = memscope_leaks_count(r->l);
	const struct memscope_mark_group *g = memscope_leaks_mark_groups(r->l, &n);
	struct several sv = { 0, 0, 0 };
	const char *noun =
		o->pools == MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL) ? "hal memory" : "memory";
	int any = 0;

	/* the input's groups are [lo, n) from here on, their MARK findings from j on */
	lo = first_not(n, mgroup_before, r, src);
	n = first_not(n, mgroup_before, r, (uint64_t)src + 1);
	j = first_not(nl, mark_before, r, lo);
	for (i = lo; i < n; i++) {
		if (g[i].src != src || !g[i].checked)
			continue;
		any = 1;
		several_add(&sv, g[i].pid);
	}
	if (!any)
		return;
	r->printed = 1;
	fprintf(r->out, "\nLeak Analysis Results for the Custom Range:\n");
	for (i = lo; i < n; i++) {
		char buf[MEMSCOPE_DEVICE_TEXT_MAX], proc[48];
		const char *dev;

		if (g[i].src != src || !g[i].checked)
			continue;
		process_suffix(proc, sizeof(proc), sv.several, g[i].pid);
		dev = memscope_device_text(g[i].device, buf);
		if (!g[i].n_leaks) {
			fprintf(r->out, "No %s leaks detected on device %s%s.\n", noun, dev, proc);
			continue;
		}
		fprintf(r->out, "====== ERROR: Detected memory leaks on device %s%s ======\n", dev,
			proc);
		/* the MARK findings come by group: walk them once */
		for (; j < nl; j++) {
			const struct memscope_leak *x = memscope_leaks_get(r->l, j);
			char size[48], ptr[32];

			if (x->kind != MEMSCOPE_LEAK_MARK || x->group > i)
				break;
			if (x->group < i)
				continue;
			fmt_pyfloat(size, sizeof(size), (double)x->blk.size / MIB);
			ptr_text(r, &x->blk, ptr, sizeof(ptr));
			fprintf(r->out,
				"Direct %s memory leak of %s Mb(s) at %s in Index %" PRIu64 ".\n",
				pool_names(x->blk.pool).mark, size, ptr, x->blk.alloc_event_id);
		}
	}
}

static void text_frames(const struct report *r, uint32_t stack, const char *lang)
{
	size_t n, i;
	const uint32_t *fr = memscope_strtab_stack(r->st, stack, &n);

	for (i = 0; fr && i < n; i++)
		fprintf(r->out, "    %s  %s\n", lang, memscope_strtab_str(r->st, fr[i], NULL));
}

/* Our summary of what was alive at exit, grouped by stack or owner, largest first. */
static void text_exit(struct report *r)
{
	const struct memscope_leaks_stats *s = memscope_leaks_stats(r->l);
	size_t n, i, j = 0, nl = memscope_leaks_count(r->l);
	const struct memscope_leak_group *g = memscope_leaks_groups(r->l, &n);

	if (!n)
		return;
	fprintf(r->out,
		"%s====== Unreleased at exit: %" PRIu64
		" allocation(s), %f Mb(s)%s in %zu group(s) "
		"======\n",
		r->printed ? "\n" : "", s->n_exit_leaks, (double)s->exit_bytes / MIB,
		overflowed(s->exit_bytes), n);
	r->printed = 1;
	for (i = 0; i < n; i++) {
		const struct memscope_leak *x = NULL;
		char dev[MEMSCOPE_DEVICE_TEXT_MAX], ptr[32];

		while (j < nl && (x = memscope_leaks_get(r->l, j))->kind != MEMSCOPE_LEAK_EXIT)
			j++;
		while (j < nl && memscope_leaks_get(r->l, j)->group < i)
			j++;
		x = memscope_leaks_get(r->l, j);
		fprintf(r->out, "#%zu %f Mb(s)%s in %" PRIu64 " allocation(s) of %s", i + 1,
			(double)g[i].bytes / MIB, overflowed(g[i].bytes), g[i].n,
			memscope_subtype_name(g[i].pool));
		if (g[i].owner)
			fprintf(r->out, ", owner %s", memscope_strtab_str(r->st, g[i].owner, NULL));
		if (!g[i].stack_py && !g[i].stack_c)
			fprintf(r->out, ", no call stack");
		if (x) {
			ptr_text(r, &x->blk, ptr, sizeof(ptr));
			fprintf(r->out,
				"; first %s:%" PRIu64 " (process %" PRIu64 ", device %s, %s)",
				input_name(r, x->blk.src), x->blk.alloc_line, x->blk.pid,
				memscope_device_text(x->blk.device, dev), ptr);
		}
		fputc('\n', r->out);
		text_frames(r, g[i].stack_py, "py");
		text_frames(r, g[i].stack_c, "c ");
	}
}

static void text_totals(struct report *r)
{
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	const struct memscope_leaks_stats *s = memscope_leaks_stats(r->l);
	char b[MEMSCOPE_BYTES_TEXT_MAX];

	fprintf(r->out, "%ssummary:", r->printed ? "\n" : "");
	if (o->kinds & MEMSCOPE_LEAK_STEP)
		fprintf(r->out, " step leaks %" PRIu64 " (%s);", s->n_step_leaks,
			memscope_bytes_text(b, sizeof(b), s->step_bytes));
	if (o->kinds & MEMSCOPE_LEAK_MARK)
		fprintf(r->out, " marked-range leaks %" PRIu64 " (%s);", s->n_mark_leaks,
			memscope_bytes_text(b, sizeof(b), s->mark_bytes));
	if (o->kinds & MEMSCOPE_LEAK_EXIT)
		fprintf(r->out, " unreleased at exit %" PRIu64 " (%s);", s->n_exit_leaks,
			memscope_bytes_text(b, sizeof(b), s->exit_bytes));
	fprintf(r->out, " %" PRIu64 " allocations, %" PRIu64 " frees\n", s->n_alloc,
		s->n_free + s->n_shadow_free);
}

static void write_text(struct report *r)
{
	size_t i;

	for (i = 0; i < r->n_inputs; i++) {
		if (r->n_inputs > 1) {
			fprintf(r->out, "%s==> %s <==\n", r->printed ? "\n" : "",
				input_name(r, (uint32_t)i));
			r->printed = 1;
		}
		text_step(r, (uint32_t)i);
		text_gap(r, (uint32_t)i);
		text_mark(r, (uint32_t)i);
	}
	text_exit(r);
	text_totals(r);
}

/* ---- JSON ---- */

static const char *kind_name(unsigned kind)
{
	return kind == MEMSCOPE_LEAK_STEP ? "step" : kind == MEMSCOPE_LEAK_MARK ? "mark" : "exit";
}

static void js_leak(const struct report *r, const struct memscope_leak *x)
{
	const struct memscope_block *b = &x->blk;
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];

	fprintf(r->out, "{\"kind\":\"%s\",\"input\":", kind_name(x->kind));
	json_cstr(r->out, input_name(r, b->src));
	fprintf(r->out, ",\"pid\":%" PRIu64 ",\"device\":", b->pid);
	json_cstr(r->out, memscope_device_text(b->device, dev));
	fprintf(r->out,
		",\"pool\":\"%s\",\"ptr\":\"0x%016" PRIx64 "\",\"size\":%" PRId64
		",\"allocation_id\":",
		memscope_subtype_name(b->pool), b->ptr, b->size);
	if (b->alloc_id)
		fprintf(r->out, "%" PRIu64, b->alloc_id);
	else
		fputs("null", r->out);
	fprintf(r->out, ",\"event_id\":%" PRIu64 ",\"line\":%" PRIu64 ",\"timestamp_ns\":%" PRIu64,
		b->alloc_event_id, b->alloc_line, b->alloc_ts_ns);
	if (x->kind == MEMSCOPE_LEAK_STEP)
		fprintf(r->out,
			",\"alloc_step\":%" PRIu64 ",\"detected_step\":%" PRIu64
			",\"kernel_index\":%" PRIu64,
			x->alloc_step, x->detected_step, x->kernel_index);
	else
		fputs(",\"alloc_step\":null,\"detected_step\":null", r->out);
	if (x->kind == MEMSCOPE_LEAK_EXIT)
		fprintf(r->out, ",\"freed_by\":\"%s\",\"group\":%u", x->shadow ? "shadow" : "none",
			(unsigned)x->group + 1);
	fputs(",\"owner\":", r->out);
	json_id_or_null(r->out, r->st, b->owner);
	fputs(",\"stack\":", r->out);
	json_stack(r->out, r->st, b->stack_py, b->stack_c);
	fputc('}', r->out);
}

static void js_fluct(const struct report *r, const struct memscope_fluct *f)
{
	static const char *const names[2] = { "min_gap", "max_gap" };
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];
	size_t i;

	fputs("{\"input\":", r->out);
	json_cstr(r->out, input_name(r, f->src));
	fprintf(r->out, ",\"pid\":%" PRIu64 ",\"device\":", f->pid);
	json_cstr(r->out, memscope_device_text(f->device, dev));
	fprintf(r->out, ",\"pool\":\"%s\",\"steps\":[", memscope_subtype_name(f->pool));
	for (i = 0; i < f->n_steps; i++)
		fprintf(r->out, "%s{\"step\":%" PRIu64 ",\"min\":%" PRId64 ",\"max\":%" PRId64 "}",
			i ? "," : "", f->steps[i].step, f->steps[i].min, f->steps[i].max);
	fputc(']', r->out);
	for (i = 0; i < 2; i++) {
		const struct memscope_fluct_step *s = &f->steps[i ? f->max_gap : f->min_gap];

		fprintf(r->out, ",\"%s\":", names[i]);
		if (!f->has_gaps) {
			fputs("null", r->out);
			continue;
		}
		fprintf(r->out,
			"{\"step\":%" PRIu64 ",\"ratio\":%.10g,\"min\":%" PRId64 ",\"max\":%" PRId64
			"}",
			s->step, (double)s->min / (double)s->max, s->min, s->max);
	}
	fputc('}', r->out);
}

static void js_summary(const struct report *r)
{
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	const struct memscope_leaks_stats *s = memscope_leaks_stats(r->l);
	size_t n, i;
	const struct memscope_leak_group *g = memscope_leaks_groups(r->l, &n);
	const struct memscope_mark_group *m;

	fprintf(r->out,
		"{\"events\":%" PRIu64 ",\"allocations\":%" PRIu64 ",\"frees\":%" PRIu64
		",\"shadow_frees\":%" PRIu64 ",\"shadow_frees_not_at_exit\":%" PRIu64
		",\"unmatched_frees\":%" PRIu64 ",\"replaced\":%" PRIu64,
		s->n_events, s->n_alloc, s->n_free, s->n_shadow_free, s->n_shadow_not_exit,
		s->n_unmatched_free, s->n_replaced);
	fputs(",\"step\":", r->out);
	if (o->kinds & MEMSCOPE_LEAK_STEP) {
		fprintf(r->out, "{\"leaks\":%" PRIu64, s->n_step_leaks);
		json_bytes(r->out, "bytes", s->step_bytes);
		fprintf(r->out, ",\"skip_steps\":%" PRIu64 ",\"min_steps_alive\":%" PRIu64 "}",
			o->skip_steps, o->min_steps_alive);
	} else
		fputs("null", r->out);
	fputs(",\"mark\":", r->out);
	if (o->kinds & MEMSCOPE_LEAK_MARK) {
		fputs("{\"text\":", r->out);
		json_cstr(r->out, o->mark);
		fprintf(r->out, ",\"start_index\":%" PRIu64 ",\"leaks\":%" PRIu64, o->mark_index,
			s->n_mark_leaks);
		json_bytes(r->out, "bytes", s->mark_bytes);
		fprintf(r->out, ",\"unchecked_blocks\":%" PRIu64 ",\"groups\":[",
			s->n_unchecked_mark_blocks);
		m = memscope_leaks_mark_groups(r->l, &n);
		for (i = 0; i < n; i++) {
			char dev[MEMSCOPE_DEVICE_TEXT_MAX];

			fprintf(r->out, "%s{\"input\":", i ? "," : "");
			json_cstr(r->out, input_name(r, m[i].src));
			fprintf(r->out, ",\"pid\":%" PRIu64 ",\"device\":", m[i].pid);
			json_cstr(r->out, memscope_device_text(m[i].device, dev));
			fprintf(r->out, ",\"marks\":%" PRIu64 ",\"checked\":%s", m[i].n_marks,
				m[i].checked ? "true" : "false");
			if (m[i].checked)
				fprintf(r->out,
					",\"mark_ids\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64
					"],\"mark_lines\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
					m[i].mark[0].id, m[i].mark[1].id, m[i].mark[2].id,
					m[i].mark_line[0], m[i].mark_line[1], m[i].mark_line[2]);
			fprintf(r->out, ",\"leaks\":%" PRIu64, m[i].n_leaks);
			json_bytes(r->out, "bytes", m[i].bytes);
			fputc('}', r->out);
		}
		fputs("]}", r->out);
	} else {
		fputs("null", r->out);
	}
	fputs(",\"exit\":", r->out);
	if (o->kinds & MEMSCOPE_LEAK_EXIT) {
		fprintf(r->out, "{\"leaks\":%" PRIu64, s->n_exit_leaks);
		json_bytes(r->out, "bytes", s->exit_bytes);
		fputs(",\"groups\":[", r->out);
		g = memscope_leaks_groups(r->l, &n);
		for (i = 0; i < n; i++) {
			fprintf(r->out, "%s{\"group\":%zu,\"pool\":\"%s\",\"count\":%" PRIu64,
				i ? "," : "", i + 1, memscope_subtype_name(g[i].pool), g[i].n);
			json_bytes(r->out, "bytes", g[i].bytes);
			fputs(",\"owner\":", r->out);
			json_id_or_null(r->out, r->st, g[i].owner);
			fputs(",\"stack\":", r->out);
			json_stack(r->out, r->st, g[i].stack_py, g[i].stack_c);
			fputc('}', r->out);
		}
		fputs("]}", r->out);
	} else {
		fputs("null", r->out);
	}
	fputc('}', r->out);
}

static void write_json(const struct report *r)
{
	size_t n = memscope_leaks_count(r->l), i;
	const struct memscope_fluct *f;

	fputs("{\"leaks\":[", r->out);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", r->out);
		js_leak(r, memscope_leaks_get(r->l, i));
	}
	fputs("],\n\"fluctuation\":[", r->out);
	f = memscope_leaks_fluct(r->l, &n);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", r->out);
		js_fluct(r, &f[i]);
	}
	fputs("],\n\"summary\":", r->out);
	js_summary(r);
	fputs("}\n", r->out);
}

/* ---- CSV ---- */

static void write_csv(const struct report *r)
{
	size_t n = memscope_leaks_count(r->l), i;

	fputs("kind,input,pid,device,pool,ptr,size,allocation_id,event_id,line,timestamp_ns,"
	      "alloc_step,detected_step,kernel_index,owner,stack_python,stack_c\n",
		r->out);
	for (i = 0; i < n; i++) {
		const struct memscope_leak *x = memscope_leaks_get(r->l, i);
		const struct memscope_block *b = &x->blk;
		const char *name = input_name(r, b->src);
		char dev[MEMSCOPE_DEVICE_TEXT_MAX];
		size_t len = 0;
		const char *owner = b->owner ? memscope_strtab_str(r->st, b->owner, &len) : "";

		fprintf(r->out, "%s,", kind_name(x->kind));
		csv_field(r->out, name, strlen(name));
		fprintf(r->out, ",%" PRIu64 ",%s,%s,0x%016" PRIx64 ",%" PRId64 ",", b->pid,
			memscope_device_text(b->device, dev), memscope_subtype_name(b->pool),
			b->ptr, b->size);
		if (b->alloc_id)
			fprintf(r->out, "%" PRIu64, b->alloc_id);
		fprintf(r->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", b->alloc_event_id,
			b->alloc_line, b->alloc_ts_ns);
		if (x->kind == MEMSCOPE_LEAK_STEP)
			fprintf(r->out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64, x->alloc_step,
				x->detected_step, x->kernel_index);
		else
			fputs(",,", r->out);
		fputc(',', r->out);
		csv_field(r->out, owner ? owner : "", owner ? len : 0);
		fputc(',', r->out);
		csv_stack(r->out, r->st, b->stack_py);
		fputc(',', r->out);
		csv_stack(r->out, r->st, b->stack_c);
		fputc('\n', r->out);
	}
}

int memscope_leaks_write(FILE *out, enum memscope_leaks_format fmt, const struct memscope_leaks *l,
	const struct memscope_strtab *st, const struct memscope_leaks_input *inputs,
	size_t n_inputs)
{
	struct report r = { out, l, st, inputs, n_inputs, 0 };

	if (fmt == MEMSCOPE_LEAKS_JSON)
		write_json(&r);
	else if (fmt == MEMSCOPE_LEAKS_CSV)
		write_csv(&r);
	else
		write_text(&r);
	return ferror(out) ? MEMSCOPE_E_IO : 0;
}
