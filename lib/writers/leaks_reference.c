/* The leak report of only the lines msMemScope writes, byte for byte: the online step check's exit
 * report, the gap analysis and the marked range's results (MEMSCOPE_LEAKS_REFERENCE). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_report.h"

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
	case MEMSCOPE_SUB_MMAP:
		return (struct pool_names){ "Host mmap memory", "Host mmap memory", "mmap" };
	case MEMSCOPE_SUB_CUDA:
		return (struct pool_names){ "CUDA device memory", "CUDA device memory", "CUDA" };
	case MEMSCOPE_SUB_CUDA_CACHING:
		return (struct pool_names){ "PyTorch CUDA caching allocator",
			"PyTorch CUDA caching allocator", "CUDA caching" };
	case MEMSCOPE_SUB_CUDA_MANAGED:
		return (struct pool_names){ "CUDA managed memory", "CUDA managed memory",
			"CUDA managed" };
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

/* findings: the STEP ones of inputs before v (STEP findings come first, by input) */
static int step_before(const struct leaks_report *r, size_t i, uint64_t v)
{
	const struct memscope_leak *x = memscope_leaks_get(r->l, i);

	return x->kind == MEMSCOPE_LEAK_STEP && x->blk.src < v;
}

/* findings: the STEP ones, and the MARK ones of groups before v (by group) */
static int mark_before(const struct leaks_report *r, size_t i, uint64_t v)
{
	const struct memscope_leak *x = memscope_leaks_get(r->l, i);

	return x->kind == MEMSCOPE_LEAK_STEP || (x->kind == MEMSCOPE_LEAK_MARK && x->group < v);
}

/* mark groups of inputs before v (by input) */
static int mgroup_before(const struct leaks_report *r, size_t i, uint64_t v)
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
static void text_step(struct leaks_report *r, uint32_t src)
{
	size_t n = memscope_leaks_count(r->l), i, j, lo;
	struct several sv = { 0, 0, 0 };

	/* the input's step findings are [lo, n) from here on */
	lo = ms__lrep_first_not(n, step_before, r, src);
	n = ms__lrep_first_not(n, step_before, r, (uint64_t)src + 1);
	for (i = lo; i < n; i++) {
		const struct memscope_leak *x = memscope_leaks_get(r->l, i);

		if (x->kind == MEMSCOPE_LEAK_STEP && x->blk.src == src)
			ms__lrep_several_add(&sv, x->blk.pid);
	}
	for (i = lo; i < n;) {
		const struct memscope_leak *x = memscope_leaks_get(r->l, i);
		char dev[MEMSCOPE_DEVICE_TEXT_MAX], proc[48];
		uint64_t bytes = 0, count = 0;

		if (x->kind != MEMSCOPE_LEAK_STEP || x->blk.src != src) {
			i++;
			continue;
		}
		ms__lrep_process_suffix(proc, sizeof(proc), sv.several, x->blk.pid);
		r->printed = 1;
		fprintf(r->out, "====== ERROR: Detected memory leaks on device %s%s ======\n",
			memscope_device_text(x->blk.device, dev), proc);
		for (j = i; j < n; j++) {
			const struct memscope_leak *y = memscope_leaks_get(r->l, j);

			if (y->kind != MEMSCOPE_LEAK_STEP || y->blk.src != src ||
				y->blk.pid != x->blk.pid || y->blk.device != x->blk.device)
				break;
			char at[24] = "N/A";

			if (!(y->blk.flags & MEMSCOPE_BLOCK_NO_PTR))
				snprintf(at, sizeof(at), "0x%" PRIx64, y->blk.ptr);
			fprintf(r->out,
				"Direct %s leak of %f Mb(s) at %s in kernel_%" PRIu64
				" at step %" PRIu64 ".\n",
				pool_names(y->blk.pool).step, (double)y->blk.size / MIB, at,
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
static void text_gap(struct leaks_report *r, uint32_t src)
{
	size_t n, i, first;
	const struct memscope_fluct *f = ms__lrep_fluct_of_input(r, src, &first, &n);
	struct several sv = { 0, 0, 0 };

	ms__lrep_several_of(&sv, f, first, n, src);
	for (i = first; i < n; i++) {
		const struct memscope_fluct_step *lo, *hi;
		char dev[MEMSCOPE_DEVICE_TEXT_MAX], proc[48];

		if (f[i].src != src || !f[i].has_gaps)
			continue;
		lo = &f[i].steps[f[i].min_gap];
		hi = &f[i].steps[f[i].max_gap];
		ms__lrep_process_suffix(proc, sizeof(proc), sv.several, f[i].pid);
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
static void text_mark(struct leaks_report *r, uint32_t src)
{
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	size_t n, i, j, lo, nl = memscope_leaks_count(r->l);
	const struct memscope_mark_group *g = memscope_leaks_mark_groups(r->l, &n);
	struct several sv = { 0, 0, 0 };
	const char *noun =
		o->pools == MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL) ? "hal memory" : "memory";
	int any = 0;

	/* the input's groups are [lo, n) from here on, their MARK findings from j on */
	lo = ms__lrep_first_not(n, mgroup_before, r, src);
	n = ms__lrep_first_not(n, mgroup_before, r, (uint64_t)src + 1);
	j = ms__lrep_first_not(nl, mark_before, r, lo);
	for (i = lo; i < n; i++) {
		if (g[i].src != src || !g[i].checked)
			continue;
		any = 1;
		ms__lrep_several_add(&sv, g[i].pid);
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
		ms__lrep_process_suffix(proc, sizeof(proc), sv.several, g[i].pid);
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
			ms__lrep_ptr_text(r, &x->blk, ptr, sizeof(ptr));
			fprintf(r->out,
				"Direct %s memory leak of %s Mb(s) at %s in Index %" PRIu64 ".\n",
				pool_names(x->blk.pool).mark, size, ptr, x->blk.alloc_event_id);
		}
	}
}

/* The reference's lines of every input, under a "==> input <==" line when there are several and
 * the input has some. */
static int has_reference_lines(const struct leaks_report *r, uint32_t src)
{
	size_t n, i;
	const struct memscope_fluct *f = memscope_leaks_fluct(r->l, &n);
	const struct memscope_mark_group *g;

	if (memscope_leaks_input(r->l, src)->n_leaks[0])
		return 1;
	for (i = ms__lrep_first_not(n, ms__lrep_fluct_before, r, src); i < n && f[i].src == src;
		i++)
		if (f[i].has_gaps)
			return 1;
	g = memscope_leaks_mark_groups(r->l, &n);
	for (i = ms__lrep_first_not(n, mgroup_before, r, src); i < n && g[i].src == src; i++)
		if (g[i].checked)
			return 1;
	return 0;
}

int ms__lrep_reference(struct leaks_report *r)
{
	size_t i;

	for (i = 0; i < r->n_inputs; i++) {
		if (r->n_inputs > 1) {
			if (!has_reference_lines(r, (uint32_t)i))
				continue;
			fputs(r->printed ? "\n==> " : "==> ", r->out);
			ms__lrep_text_cstr(r->out, ms__lrep_input_name(r, (uint32_t)i));
			fputs(" <==\n", r->out);
			r->printed = 1;
		}
		text_step(r, (uint32_t)i);
		text_gap(r, (uint32_t)i);
		text_mark(r, (uint32_t)i);
	}
	return 0;
}
