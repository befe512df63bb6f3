/* The leak reports: text grouped by stack, op or owner, the reference's own lines, JSON, and CSV.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/blocks.h"
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

/* ---- text ---- */

struct report {
	FILE *out;
	const struct memscope_leaks *l;
	const struct memscope_strtab *st;
	const struct memscope_leaks_input *inputs;
	size_t n_inputs;
	int printed; /* text: a section has been written */
	const char *
		*short_names; /* text: per input, the name that tells it apart (ms__input_names) */
	/* text: per input, and at [n_inputs] for any, whether it has ProfilerStep steps (NULL: not
	 * looked yet; the steps are walked once, however many inputs) */
	unsigned char *numbered;
	char *answer; /* text: the first line (answer_text), NULL until made */
};

static const char *input_name(const struct report *r, uint32_t src)
{
	return src < r->n_inputs && r->inputs[src].name ? r->inputs[src].name : "-";
}

/* The file b's MALLOC line is in: its input, or the file of an input folder. */
static const char *block_file(const struct report *r, const struct memscope_block *b)
{
	return memscope_event_file(r->st, b->file, input_name(r, b->src));
}

/* the Ptr column as the input writes it; N/A for a block without an address */
static void ptr_text(const struct report *r, const struct memscope_block *b, char *buf, size_t n)
{
	if (b->flags & MEMSCOPE_BLOCK_NO_PTR)
		snprintf(buf, n, "N/A");
	else if (b->src < r->n_inputs && r->inputs[b->src].ptr_decimal)
		snprintf(buf, n, "%" PRIu64, b->ptr);
	else
		snprintf(buf, n, "0x%016" PRIx64, b->ptr);
}

/* ,"file":NAME when b's MALLOC line is in a file of an input folder (a profiler output), its
 * line then that file's; nothing for a line of the input itself */
static void json_file(const struct report *r, const struct memscope_block *b)
{
	if (!b->file)
		return;
	fputs(",\"file\":", r->out);
	ms__json_cstr(r->out, block_file(r, b));
}

/* ,"pid":N — null for N/A (a profiler output without a timeline) — then ,"device": */
static void json_pid(FILE *out, uint64_t pid)
{
	if (pid == MEMSCOPE_ID_NONE)
		fputs(",\"pid\":null,\"device\":", out);
	else
		fprintf(out, ",\"pid\":%" PRIu64 ",\"device\":", pid);
}

/* A block's address as JSON: a string, null when it has none. */
static void json_ptr(FILE *out, const struct memscope_block *b)
{
	if (b->flags & MEMSCOPE_BLOCK_NO_PTR)
		fputs("null", out);
	else
		fprintf(out, "\"0x%016" PRIx64 "\"", b->ptr);
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

/* The fluctuation groups of input src: f[*first, *n) of the returned array. */
static const struct memscope_fluct *fluct_of_input(
	const struct report *r, uint32_t src, size_t *first, size_t *n)
{
	const struct memscope_fluct *f = memscope_leaks_fluct(r->l, n);

	*first = first_not(*n, fluct_before, r, src);
	*n = first_not(*n, fluct_before, r, (uint64_t)src + 1);
	return f;
}

/* The processes of input src whose groups f[first, n) have gaps, into sv. */
static void several_of(
	struct several *sv, const struct memscope_fluct *f, size_t first, size_t n, uint32_t src)
{
	size_t i;

	for (i = first; i < n; i++)
		if (f[i].src == src && f[i].has_gaps)
			several_add(sv, f[i].pid);
}

/* The gap analysis (formats/analyses.md "Fluctuation") of each device and pool. */
static void text_gap(struct report *r, uint32_t src)
{
	size_t n, i, first;
	const struct memscope_fluct *f = fluct_of_input(r, src, &first, &n);
	struct several sv = { 0, 0, 0 };

	several_of(&sv, f, first, n, src);
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

/* The reference's lines of every input, under a "==> input <==" line when there are several and
 * the input has some. */
static int has_reference_lines(const struct report *r, uint32_t src)
{
	size_t n, i;
	const struct memscope_fluct *f = memscope_leaks_fluct(r->l, &n);
	const struct memscope_mark_group *g;

	if (memscope_leaks_input(r->l, src)->n_leaks[0])
		return 1;
	for (i = first_not(n, fluct_before, r, src); i < n && f[i].src == src; i++)
		if (f[i].has_gaps)
			return 1;
	g = memscope_leaks_mark_groups(r->l, &n);
	for (i = first_not(n, mgroup_before, r, src); i < n && g[i].src == src; i++)
		if (g[i].checked)
			return 1;
	return 0;
}

/* s[0..n) on one printable line: control characters (C0, DEL, C1) and bytes that are not UTF-8
 * as '?', so a name from an input can neither break the report's lines nor drive a terminal. */
static void text_str(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t len;

	for (; p < end; p += len) {
		len = ms__utf8_seq(p, end);
		if (!len || *p < 0x20 || *p == 0x7f || (len == 2 && p[0] == 0xc2 && p[1] < 0xa0))
			fputc('?', out);
		else
			fwrite(p, 1, len, out);
		len = len ? len : 1;
	}
}

static void text_cstr(FILE *out, const char *s)
{
	text_str(out, s, strlen(s));
}

static void write_reference(struct report *r)
{
	size_t i;

	for (i = 0; i < r->n_inputs; i++) {
		if (r->n_inputs > 1) {
			if (!has_reference_lines(r, (uint32_t)i))
				continue;
			fputs(r->printed ? "\n==> " : "==> ", r->out);
			text_cstr(r->out, input_name(r, (uint32_t)i));
			fputs(" <==\n", r->out);
			r->printed = 1;
		}
		text_step(r, (uint32_t)i);
		text_gap(r, (uint32_t)i);
		text_mark(r, (uint32_t)i);
	}
}

/* ---- text: the groups of each input and kind, largest first ---- */

/* Text of the input as it is, control characters as '?' (a line stays one line). */
static void text_id(const struct report *r, uint32_t id)
{
	size_t n = 0;
	const char *s = memscope_strtab_str(r->st, id, &n);

	if (!s || !n)
		fputs("[unnamed]", r->out);
	else
		text_str(r->out, s, n);
}

/* frames shown per stack: the first and the last, the middle elided */
#define FRAMES_HEAD 8
#define FRAMES_TAIL 8

static void text_frames(const struct report *r, uint32_t stack, const char *lang)
{
	size_t n = 0, i;
	const uint32_t *fr = memscope_strtab_stack(r->st, stack, &n);

	for (i = 0; fr && i < n; i++) {
		if (n > FRAMES_HEAD + FRAMES_TAIL + 1 && i == FRAMES_HEAD) {
			fprintf(r->out, "   %s ... %zu more frames\n", lang,
				n - FRAMES_HEAD - FRAMES_TAIL);
			i = n - FRAMES_TAIL - 1;
			continue;
		}
		fprintf(r->out, "   %s ", lang);
		text_id(r, fr[i]);
		fputc('\n', r->out);
	}
}

/* at most this many ranges of steps in a group's line */
#define STEP_RANGES 6

/* ", allocated in steps 2-4, 7": the steps of a group's findings (ascending among them; those
 * of processes without steps have none), at most STEP_RANGES ranges, then ", ... (40 steps)". */
static void text_steps(const struct report *r, const struct memscope_leak_group *g)
{
	size_t n, i, k = 0;
	const size_t *m = memscope_leaks_members(r->l, &n);
	uint64_t lo[STEP_RANGES + 1], hi[STEP_RANGES + 1], count = 0, last = 0;

	/* the members in step order: each distinct step counted once, ranges while they fit */
	for (i = g->members_at; i < g->members_at + g->n && i < n; i++) {
		uint64_t s = memscope_leaks_get(r->l, m[i])->alloc_step;

		if (s == MEMSCOPE_LEAK_NO_STEP || (count && s == last))
			continue;
		count++;
		last = s;
		if (k && k <= STEP_RANGES && s == hi[k - 1] + 1) {
			hi[k - 1] = s;
			continue;
		}
		if (k <= STEP_RANGES) {
			lo[k] = hi[k] = s;
			k++;
		}
	}
	if (!k)
		return;
	fprintf(r->out, ", allocated in step%s", count > 1 ? "s" : "");
	for (i = 0; i < k && i < STEP_RANGES; i++)
		fprintf(r->out, lo[i] == hi[i] ? "%s%" PRIu64 : "%s%" PRIu64 "-%" PRIu64,
			i ? ", " : " ", lo[i], hi[i]);
	if (k > STEP_RANGES)
		fprintf(r->out, ", ... (%" PRIu64 " steps)", count);
}

/* "#1 PTA 3.00 MiB in 2 blocks, owner X": a group's line up to its owner. */
static void text_group_head(const struct report *r, uint64_t rank, uint16_t pool, uint64_t bytes,
	uint64_t n, uint32_t owner, unsigned differ)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];

	fprintf(r->out, "#%" PRIu64 " %s %s in %" PRIu64 " block%s", rank + 1,
		memscope_subtype_name(pool), memscope_bytes_text(b, sizeof(b), bytes), n,
		n == 1 ? "" : "s");
	if (owner) {
		fputs(", owner ", r->out);
		text_id(r, owner);
		if (differ & MEMSCOPE_LEAK_GROUP_OWNERS)
			fputs(" and others", r->out);
	} else if (memscope_leaks_opts(r->l)->group_by == MEMSCOPE_LEAKS_BY_OWNER) {
		fputs(", no owner tag", r->out); /* the group of the untagged blocks */
	}
}

/* A group's op line; "outside any op" only when its input has op rows (op_rows). */
static void text_group_op(const struct report *r, uint32_t op, unsigned differ, int op_rows)
{
	if (op) {
		fputs("   op ", r->out);
		text_id(r, op);
		fputs(differ & MEMSCOPE_LEAK_GROUP_OPS ? " and others\n" : "\n", r->out);
	} else if (differ & MEMSCOPE_LEAK_GROUP_OPS) {
		fputs("   outside any op (the first block; others differ)\n", r->out);
	} else if (op_rows) {
		fputs("   outside any op\n", r->out);
	}
}

/* A group's call stacks, or what it has instead. */
static void text_group_stacks(const struct report *r, uint32_t py, uint32_t c, unsigned differ)
{
	if (differ & MEMSCOPE_LEAK_GROUP_STACKS)
		fprintf(r->out, "   %s (others differ)\n",
			py || c ? "stack of the first block" : "the first block has no call stack");
	else if (!py && !c)
		fputs("   no call stack\n", r->out);
	text_frames(r, py, "py");
	text_frames(r, c, "c ");
}

/* One group: its line, its op, its first finding, its stacks. */
static void text_group(const struct report *r, const struct memscope_leak_group *g)
{
	const struct memscope_leak *x = memscope_leaks_get(r->l, g->first);
	char dev[MEMSCOPE_DEVICE_TEXT_MAX], ptr[34], pid[40] = "";
	char t[MEMSCOPE_SECONDS_TEXT_MAX];

	text_group_head(r, g->rank, g->pool, g->bytes, g->n, g->owner, g->differ);
	text_steps(r, g);
	fputc('\n', r->out);
	/* a block from before the recorded history has no op, nor a time of its own */
	if (x && (x->blk.flags & MEMSCOPE_BLOCK_BEFORE_TRACE) && !g->op)
		fputs("   allocated before the recorded history\n", r->out);
	else
		text_group_op(
			r, g->op, g->differ, memscope_leaks_input(r->l, g->src)->n_op_rows != 0);
	if (x) {
		/* what the input says of the block: a profiler's has no process or address */
		if (x->blk.pid != MEMSCOPE_ID_NONE)
			snprintf(pid, sizeof(pid), "process %" PRIu64 ", ", x->blk.pid);
		ptr[0] = ',', ptr[1] = ' ';
		ptr_text(r, &x->blk, ptr + 2, sizeof(ptr) - 2);
		fputs("   first ", r->out);
		text_cstr(r->out, block_file(r, &x->blk));
		/* a snapshot's position is its record number, not a line */
		fprintf(r->out,
			memscope_leaks_end_of(r->l, x->blk.src) == MEMSCOPE_LEAKS_END_SNAPSHOT
				? " record %" PRIu64
				: ":%" PRIu64,
			x->blk.alloc_line);
		if (x->blk.flags & MEMSCOPE_BLOCK_BEFORE_TRACE)
			snprintf(t, sizeof(t), "before the recorded history");
		else
			memscope_seconds_text(t, sizeof(t), x->blk.alloc_ts_ns,
				memscope_leaks_origin(r->l, x->blk.src, x->blk.file));
		fprintf(r->out, " %s%s (%sdevice %s%s)\n",
			x->blk.flags & MEMSCOPE_BLOCK_BEFORE_TRACE ? "" : "at ", t, pid,
			memscope_device_text(x->blk.device, dev),
			x->blk.flags & MEMSCOPE_BLOCK_NO_PTR ? "" : ptr);
	}
	text_group_stacks(r, g->stack_py, g->stack_c, g->differ);
}

/* "Step leaks", "Marked-range leaks", and for the blocks alive when input src (or every
 * input) ended what its end makes them: "Unreleased at exit", "Alive at the end of the
 * snapshot", ... (memscope_leaks_end_text, capitalised) into buf (room for 64). */
static const char *kind_title(const struct report *r, unsigned kind, uint32_t src, char *buf)
{
	if (kind == MEMSCOPE_LEAK_STEP)
		return "Step leaks";
	if (kind == MEMSCOPE_LEAK_MARK)
		return "Marked-range leaks";
	snprintf(buf, 64, "%s", memscope_leaks_end_text(memscope_leaks_end_of(r->l, src)));
	if (buf[0] >= 'a' && buf[0] <= 'z')
		buf[0] = (char)(buf[0] - 'a' + 'A');
	return buf;
}

static const char *group_by_name(unsigned by)
{
	return by == MEMSCOPE_LEAKS_BY_OP      ? "op"
	       : by == MEMSCOPE_LEAKS_BY_OWNER ? "owner"
					       : "stack";
}

static int note_numbered(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	struct report *r = ctx;

	(void)pid;
	if (memscope_steps_source(p) == MEMSCOPE_STEPS_PROFILER && src < r->n_inputs)
		r->numbered[src] = r->numbered[r->n_inputs] = 1;
	return 0;
}

/* Whether some process of input src (or MEMSCOPE_LEAKS_ALL_INPUTS) has ProfilerStep steps,
 * which keep the profiler's numbers, so --skip-steps is not "s > N" there. 0 when that cannot
 * be known (out of memory). */
static int profiler_numbered(struct report *r, uint32_t src)
{
	if (!r->numbered) {
		if (!(r->numbered = calloc(r->n_inputs + 1, 1)))
			return 0;
		memscope_steps_foreach(memscope_leaks_steps(r->l), note_numbered, r);
	}
	return r->numbered[src < r->n_inputs ? src : r->n_inputs];
}

/* "Step leaks (...): 3 blocks in 2 groups by stack, PTA 3.51 MiB": the line of a kind's
 * groups, n of them; stacked: some of the findings have call stacks; nested: totals_text's. */
static void text_kind_line(
	struct report *r, unsigned kind, uint32_t src, size_t n, int stacked, int nested)
{
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
	char text[MEMSCOPE_LEAKS_TOTALS_TEXT_MAX], title[64];
	size_t k = memscope_leaks_totals(r->l, kind, src, t), i;
	uint64_t count = 0;

	for (i = 0; i < k; i++)
		count += t[i].n;
	fprintf(r->out, "%s%s", r->printed ? "\n" : "", kind_title(r, kind, src, title));
	r->printed = 1;
	if (kind == MEMSCOPE_LEAK_STEP && profiler_numbered(r, src) && o->skip_steps)
		fprintf(r->out,
			" (allocated in step s after the first %" PRIu64
			", alive at the end of step s + %" PRIu64 ")",
			o->skip_steps, o->min_steps_alive);
	else if (kind == MEMSCOPE_LEAK_STEP && profiler_numbered(r, src))
		fprintf(r->out, " (allocated in step s, alive at the end of step s + %" PRIu64 ")",
			o->min_steps_alive);
	else if (kind == MEMSCOPE_LEAK_STEP)
		fprintf(r->out,
			" (allocated in step s > %" PRIu64 ", alive at the end of step s + %" PRIu64
			")",
			o->skip_steps, o->min_steps_alive);
	else if (kind == MEMSCOPE_LEAK_MARK) {
		fputs(" (between Mark rows '", r->out);
		text_str(r->out, o->mark, strlen(o->mark));
		fprintf(r->out, "' #%" PRIu64 " and #%" PRIu64 ", not freed by #%" PRIu64 ")",
			o->mark_index, o->mark_index + 1, o->mark_index + 2);
	}
	fprintf(r->out, ": %" PRIu64 " block%s in %zu group%s by %s", count, count == 1 ? "" : "s",
		n, n == 1 ? "" : "s",
		o->group_by == MEMSCOPE_LEAKS_BY_STACK && !stacked ? "op (no call stacks)"
								   : group_by_name(o->group_by));
	fprintf(r->out, ", %s\n", memscope_leaks_totals_text(text, sizeof(text), t, k, nested));
}

/* the groups past --top of a kind, per pool */
struct rest {
	struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
	size_t n_pools, n_groups;
	uint64_t n;
};

static void rest_add(struct rest *x, uint16_t pool, uint64_t n, uint64_t bytes)
{
	size_t j;

	for (j = 0; j < x->n_pools && x->t[j].pool != pool; j++)
		;
	if (j == x->n_pools) {
		if (j == MEMSCOPE_LEAKS_MAX_POOLS)
			return;
		x->t[x->n_pools++] = (struct memscope_leaks_total){ pool, 0, 0 };
	}
	x->n_groups++;
	x->n += n;
	x->t[j].n += n;
	if (__builtin_add_overflow(x->t[j].bytes, bytes, &x->t[j].bytes))
		x->t[j].bytes = MEMSCOPE_BYTES_OVERFLOW;
}

/* "... 4 more groups: 5 blocks, PTA 2.56 MiB", when there are some */
static void rest_line(const struct report *r, const struct rest *x, int nested)
{
	char text[MEMSCOPE_LEAKS_TOTALS_TEXT_MAX];

	if (x->n)
		fprintf(r->out, "... %zu more group%s: %" PRIu64 " block%s, %s\n", x->n_groups,
			x->n_groups == 1 ? "" : "s", x->n, x->n == 1 ? "" : "s",
			memscope_leaks_totals_text(text, sizeof(text), x->t, x->n_pools, nested));
}

/* The line of a kind of an input, then the first top groups of [g, g + n), then what the others
 * hold. */
static void text_kind(struct report *r, uint32_t src, unsigned kind,
	const struct memscope_leak_group *g, size_t n)
{
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	struct rest rest = { .n = 0 };
	size_t i;

	/* one input's pools: nested when they hold both */
	text_kind_line(r, kind, src, n, memscope_leaks_input(r->l, src)->n_stacked != 0, 1);
	for (i = 0; i < n; i++) {
		if (!o->top || g[i].rank < o->top)
			text_group(r, &g[i]);
		else
			rest_add(&rest, g[i].pool, g[i].n, g[i].bytes);
	}
	rest_line(r, &rest, 1);
}

/* The fluctuation of each device and pool of an input, one line each. */
static void text_fluct(struct report *r, uint32_t src)
{
	size_t n, i, first;
	const struct memscope_fluct *f = fluct_of_input(r, src, &first, &n);
	struct several sv = { 0, 0, 0 };
	int any = 0;

	several_of(&sv, f, first, n, src);
	for (i = first; i < n; i++) {
		static const char *const label[2] = { "MinGap", "MaxGap" };
		char dev[MEMSCOPE_DEVICE_TEXT_MAX], proc[48], lo[MEMSCOPE_BYTES_TEXT_MAX],
			hi[MEMSCOPE_BYTES_TEXT_MAX];
		int k;

		if (f[i].src != src || !f[i].has_gaps)
			continue;
		if (!any++) {
			fprintf(r->out, "%sFluctuation (lowest / highest used memory in a step):\n",
				r->printed ? "\n" : "");
			r->printed = 1;
		}
		process_suffix(proc, sizeof(proc), sv.several, f[i].pid);
		fprintf(r->out, "%s on device %s%s:", memscope_subtype_name(f[i].pool),
			memscope_device_text(f[i].device, dev), proc);
		for (k = 0; k < 2; k++) {
			const struct memscope_fluct_step *s =
				&f[i].steps[k ? f[i].max_gap : f[i].min_gap];

			fprintf(r->out, "%s %s step %" PRIu64 ", %.2f%% (%s of %s)", k ? ";" : "",
				label[k], s->step, (double)s->min / (double)s->max * 100,
				memscope_bytes_text(
					lo, sizeof(lo), s->min > 0 ? (uint64_t)s->min : 0),
				memscope_bytes_text(hi, sizeof(hi), (uint64_t)s->max));
		}
		fputc('\n', r->out);
	}
}

/* Whether an input has something for the text report: out-of-memory events, findings or
 * fluctuation. */
static int has_findings(const struct report *r, uint32_t src)
{
	const struct memscope_leaks_input_info *in = memscope_leaks_input(r->l, src);
	size_t n, i;
	const struct memscope_fluct *f = memscope_leaks_fluct(r->l, &n);

	if (in->n_leaks[0] || in->n_leaks[1] || in->n_leaks[2] || in->n_ooms)
		return 1;
	for (i = first_not(n, fluct_before, r, src); i < n && f[i].src == src; i++)
		if (f[i].has_gaps)
			return 1;
	return 0;
}

/* groups of inputs before v (by input) */
static int group_before(const struct report *r, size_t i, uint64_t v)
{
	size_t n;

	return memscope_leaks_groups(r->l, &n)[i].src < v;
}

/* ", owner X", ", op X" or ", at FRAME" (the innermost of its Python stack, else of its C
 * stack): what names the holder of some bytes in one line; nothing when none does. */
static void text_holder(
	const struct report *r, uint32_t owner, uint32_t op, uint32_t stack_py, uint32_t stack_c)
{
	size_t n = 0;
	const uint32_t *fr = memscope_strtab_stack(r->st, stack_py ? stack_py : stack_c, &n);

	if (owner) {
		fputs(", owner ", r->out);
		text_id(r, owner);
	} else if (op) {
		fputs(", op ", r->out);
		text_id(r, op);
	} else if (fr && n) {
		fputs(", at ", r->out);
		text_id(r, fr[0]);
	}
}

/* "device 0 at 1.500000 s (process 7): asked for 2.00 GiB, device free 1.00 GiB, reserved
 * ..., allocated ...": an out-of-memory event in one line, without its newline. */
static void text_oom_line(const struct report *r, const struct memscope_leaks_oom *o)
{
	static const char *const names[4] = { "asked for", "device free", "reserved", "allocated" };
	const int64_t v[4] = { o->requested, o->device_free, o->reserved, o->allocated };
	char dev[MEMSCOPE_DEVICE_TEXT_MAX], t[MEMSCOPE_SECONDS_TEXT_MAX],
		b[MEMSCOPE_BYTES_TEXT_MAX];
	int k, any = 0;

	fprintf(r->out, "device %s at %s", memscope_device_text(o->device, dev),
		memscope_seconds_text(
			t, sizeof(t), o->ts_ns, memscope_leaks_input(r->l, o->src)->first_ts_ns));
	if (o->pid != MEMSCOPE_ID_NONE)
		fprintf(r->out, " (process %" PRIu64 ")", o->pid);
	for (k = 0; k < 4; k++)
		if (v[k] >= 0)
			fprintf(r->out, "%s %s %s", any++ ? "," : ":", names[k],
				memscope_bytes_text(b, sizeof(b), (uint64_t)v[k]));
}

/* out-of-memory events listed per input, at most */
#define OOMS_LISTED 5

/* The out-of-memory events of input src, each with the blocks alive then and who held the
 * most of them, first in its section: the biggest finding. */
static void text_ooms(struct report *r, uint32_t src)
{
	size_t n, i, k = 0, total = memscope_leaks_input(r->l, src)->n_ooms;
	const struct memscope_leaks_oom *o = memscope_leaks_ooms(r->l, &n);
	char text[MEMSCOPE_LEAKS_TOTALS_TEXT_MAX], b[MEMSCOPE_BYTES_TEXT_MAX];

	if (!total)
		return;
	fprintf(r->out, "%sOut of memory: %zu event%s\n", r->printed ? "\n" : "", total,
		total == 1 ? "" : "s");
	r->printed = 1;
	for (i = 0; i < n && k < OOMS_LISTED; i++) {
		if (o[i].src != src)
			continue;
		k++;
		text_oom_line(r, &o[i]);
		fputc('\n', r->out);
		if (!o[i].n_pools && i >= MEMSCOPE_LEAKS_OOM_STATES)
			continue;
		fprintf(r->out, "   alive then%s: %s\n", o[i].partial ? " (at least)" : "",
			memscope_leaks_totals_text(
				text, sizeof(text), o[i].pools, o[i].n_pools, 1));
		if (!o[i].top_bytes)
			continue;
		fprintf(r->out, "   largest holder: %s in %" PRIu64 " block%s",
			memscope_bytes_text(b, sizeof(b), o[i].top_bytes), o[i].top_blocks,
			o[i].top_blocks == 1 ? "" : "s");
		text_holder(r, o[i].top_owner, 0, o[i].top_stack_py, o[i].top_stack_c);
		fputc('\n', r->out);
	}
	if (total > k)
		fprintf(r->out, "... %zu more\n", total - k);
}

/* One input's sections: out of memory, step leaks, fluctuation, marked-range leaks, blocks alive
 * at its end. */
static void text_input(struct report *r, uint32_t src)
{
	static const unsigned kinds[3] = { MEMSCOPE_LEAK_STEP, MEMSCOPE_LEAK_MARK,
		MEMSCOPE_LEAK_EXIT };
	size_t n, i, k;
	const struct memscope_leak_group *g = memscope_leaks_groups(r->l, &n);

	text_ooms(r, src);
	i = first_not(n, group_before, r, src);
	for (k = 0; k < 3; k++) {
		size_t j = i;

		while (j < n && g[j].src == src && g[j].kind == kinds[k])
			j++;
		if (j > i)
			text_kind(r, src, kinds[k], &g[i], j - i);
		i = j;
		if (kinds[k] == MEMSCOPE_LEAK_STEP)
			text_fluct(r, src);
	}
}

/* ---- text: the groups merged across inputs ---- */

static const char *short_name(const struct report *r, uint32_t src)
{
	return r->short_names && src < r->n_inputs ? r->short_names[src] : input_name(r, src);
}

/* ", in 4 of 4 inputs: most in rank2/x.csv 3.00 MiB, least in rank0/x.csv 1.00 MiB" */
static void text_across_inputs(const struct report *r, const struct memscope_leak_across *a)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];

	fprintf(r->out, ", in %" PRIu32 " of %zu inputs", a->n_inputs, r->n_inputs);
	if (a->n_inputs == 1) {
		fputs(": ", r->out);
		text_cstr(r->out, short_name(r, a->max_src));
	} else if (a->min_bytes == a->max_bytes) {
		fprintf(r->out, ", %s each", memscope_bytes_text(b, sizeof(b), a->max_bytes));
	} else {
		fputs(": most in ", r->out);
		text_cstr(r->out, short_name(r, a->max_src));
		fprintf(r->out, " %s, least in ", memscope_bytes_text(b, sizeof(b), a->max_bytes));
		text_cstr(r->out, short_name(r, a->min_src));
		fprintf(r->out, " %s", memscope_bytes_text(b, sizeof(b), a->min_bytes));
	}
}

/* whether one of the inputs of an across group has op rows */
static int across_op_rows(const struct report *r, const struct memscope_leak_across *a)
{
	size_t n, ng, i;
	const size_t *ag = memscope_leaks_across_groups(r->l, &n);
	const struct memscope_leak_group *g = memscope_leaks_groups(r->l, &ng);

	for (i = a->groups_at; i < a->groups_at + a->n_inputs && i < n; i++)
		if (ag[i] < ng && memscope_leaks_input(r->l, g[ag[i]].src)->n_op_rows)
			return 1;
	return 0;
}

/* "Across 4 inputs", then per kind its line over every input and its first top groups merged
 * across inputs, each with the inputs that have it, the most and the least of them. */
static void text_across(struct report *r)
{
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	size_t n, i, j;
	const struct memscope_leak_across *a = memscope_leaks_across(r->l, &n);
	int stacked = 0;

	for (i = 0; i < r->n_inputs; i++)
		stacked |= memscope_leaks_input(r->l, (uint32_t)i)->n_stacked != 0;
	fprintf(r->out, "%sAcross %zu inputs\n", r->printed ? "\n" : "", r->n_inputs);
	r->printed = 0;
	for (i = 0; i < n; i = j) {
		int nested = memscope_leaks_nested(r->l, a[i].kind, MEMSCOPE_LEAKS_ALL_INPUTS);
		struct rest rest = { .n = 0 };

		for (j = i; j < n && a[j].kind == a[i].kind; j++)
			;
		text_kind_line(r, a[i].kind, MEMSCOPE_LEAKS_ALL_INPUTS, j - i, stacked, nested);
		for (; i < j; i++) {
			if (o->top && a[i].rank >= o->top) {
				rest_add(&rest, a[i].pool, a[i].n, a[i].bytes);
				continue;
			}
			text_group_head(r, a[i].rank, a[i].pool, a[i].bytes, a[i].n, a[i].owner,
				a[i].differ);
			text_across_inputs(r, &a[i]);
			fputc('\n', r->out);
			text_group_op(r, a[i].op, a[i].differ, across_op_rows(r, &a[i]));
			text_group_stacks(r, a[i].stack_py, a[i].stack_c, a[i].differ);
		}
		rest_line(r, &rest, nested);
	}
	r->printed = 1;
}

/* The reasons kind was not checked in the inputs (bits 1 << enum memscope_leaks_unchecked,
 * NOT_ASKED left out), *n how many inputs. */
static unsigned unchecked_why(const struct report *r, unsigned kind, size_t *n)
{
	unsigned why = 0;
	size_t i;

	*n = 0;
	for (i = 0; i < r->n_inputs; i++) {
		enum memscope_leaks_unchecked w = memscope_leaks_checked(r->l, kind, (uint32_t)i);

		if (w == MEMSCOPE_LEAKS_CHECKED || w == MEMSCOPE_LEAKS_NOT_ASKED)
			continue;
		why |= 1u << w;
		++*n;
	}
	return why;
}

/* The reasons of unchecked_why: the whole text of one (long), or the short ones ("no steps", "no
 * allocations or frees") joined by "; " */
static void text_why(const struct report *r, unsigned why, int long_text)
{
	unsigned w, k = 0;

	for (w = MEMSCOPE_LEAKS_NO_BLOCKS; w <= MEMSCOPE_LEAKS_FEW_STEPS; w++) {
		const char *t = memscope_leaks_unchecked_text((enum memscope_leaks_unchecked)w);
		const char *colon = strchr(t, ':');

		if (!(why & 1u << w))
			continue;
		fputs(k++ ? "; " : "", r->out);
		if (long_text && !(why & ~(1u << w)))
			fputs(t, r->out);
		else
			fwrite(t, 1, colon ? (size_t)(colon - t) : strlen(t), r->out);
	}
}

/* "summary: step leaks 3 (PTA 3.51 MiB); ..." over every input; a kind not checked in some
 * input says so, and why: "step leaks: not checked (no steps: ...)". */
static void text_totals(struct report *r)
{
	static const unsigned kinds[3] = { MEMSCOPE_LEAK_STEP, MEMSCOPE_LEAK_MARK,
		MEMSCOPE_LEAK_EXIT };
	const char *names[3] = { "step leaks", "marked-range leaks",
		memscope_leaks_end_text(memscope_leaks_end_of(r->l, MEMSCOPE_LEAKS_ALL_INPUTS)) };
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	const struct memscope_leaks_stats *s = memscope_leaks_stats(r->l);
	const uint64_t counts[3] = { s->n_step_leaks, s->n_mark_leaks, s->n_exit_leaks };
	struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
	char text[MEMSCOPE_LEAKS_TOTALS_TEXT_MAX];
	size_t k, i, n_with, n_unchecked;

	fprintf(r->out, "%ssummary", r->printed ? "\n" : "");
	if (r->n_inputs > 1)
		fprintf(r->out, " of %zu inputs", r->n_inputs);
	fputc(':', r->out);
	for (k = 0; k < 3; k++) {
		unsigned why;

		if (!(o->kinds & kinds[k]))
			continue;
		why = unchecked_why(r, kinds[k], &n_unchecked);
		if (n_unchecked && n_unchecked == r->n_inputs && !counts[k]) {
			fprintf(r->out, " %s: not checked", names[k]);
			if (r->n_inputs > 1)
				fprintf(r->out, " in any of the %zu inputs", r->n_inputs);
			fputs(" (", r->out);
			text_why(r, why, 1);
			fputs(");", r->out);
			continue;
		}
		fprintf(r->out, " %s %" PRIu64, names[k], counts[k]);
		for (i = 0, n_with = 0; r->n_inputs > 1 && i < r->n_inputs; i++)
			n_with += memscope_leaks_input(r->l, (uint32_t)i)->n_leaks[k] != 0;
		if (r->n_inputs > 1 && counts[k])
			fprintf(r->out, " in %zu input%s", n_with, n_with == 1 ? "" : "s");
		fprintf(r->out, " (%s)",
			memscope_leaks_totals_text(text, sizeof(text), t,
				memscope_leaks_totals(r->l, kinds[k], MEMSCOPE_LEAKS_ALL_INPUTS, t),
				memscope_leaks_nested(r->l, kinds[k], MEMSCOPE_LEAKS_ALL_INPUTS)));
		if (n_unchecked) {
			fprintf(r->out, ", not checked in %zu of %zu inputs (", n_unchecked,
				r->n_inputs);
			text_why(r, why, 0);
			fputc(')', r->out);
		}
		fputc(';', r->out);
	}
	fprintf(r->out, " %" PRIu64 " allocations, %" PRIu64 " frees\n", s->n_alloc,
		s->n_free + s->n_shadow_free);
}

/* what the answer says of the blocks of a kind: "3 blocks leaked from step to step" */
static const char *answer_phrase(const struct report *r, unsigned kind)
{
	return kind == MEMSCOPE_LEAK_STEP ? "leaked from step to step"
	       : kind == MEMSCOPE_LEAK_MARK
		       ? "allocated in the marked range and not freed by its end"
		       : memscope_leaks_end_text(
				 memscope_leaks_end_of(r->l, MEMSCOPE_LEAKS_ALL_INPUTS));
}

/*
 * The answer, the report's first line (without its newline): the biggest finding in the user's
 * terms, then what could not be checked. Out of memory first; then the first kind with findings
 * of step leaks, marked-range leaks and blocks alive at the end, its totals and its largest group
 * (merged across inputs); the other kinds found; "no leaks found"; "step leaks not checked (no
 * steps)".
 */
static void text_answer_to(struct report *r)
{
	static const unsigned kinds[3] = { MEMSCOPE_LEAK_STEP, MEMSCOPE_LEAK_MARK,
		MEMSCOPE_LEAK_EXIT };
	static const char *const names[3] = { "step leaks", "marked-range leaks", NULL };
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	const struct memscope_leaks_stats *s = memscope_leaks_stats(r->l);
	const uint64_t counts[3] = { s->n_step_leaks, s->n_mark_leaks, s->n_exit_leaks };
	struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
	char text[MEMSCOPE_LEAKS_TOTALS_TEXT_MAX], b[MEMSCOPE_BYTES_TEXT_MAX];
	size_t n_oom, n_across, i, k, main = 3, n_unchecked, n_checked = 0, n_blockless = 0;
	const struct memscope_leaks_oom *oom = memscope_leaks_ooms(r->l, &n_oom);
	const struct memscope_leak_across *a = memscope_leaks_across(r->l, &n_across);
	const char *sep = "";

	if (n_oom) {
		fputs("out of memory on ", r->out);
		text_oom_line(r, &oom[0]);
		if (r->n_inputs > 1) {
			fputs(" in ", r->out);
			text_cstr(r->out, input_name(r, oom[0].src));
		}
		/* who held the most then: the out-of-memory moment, apart from the end state */
		if (oom[0].top_bytes) {
			fprintf(r->out, "; the largest holder then %s in %" PRIu64 " block%s",
				memscope_bytes_text(b, sizeof(b), oom[0].top_bytes),
				oom[0].top_blocks, oom[0].top_blocks == 1 ? "" : "s");
			text_holder(
				r, oom[0].top_owner, 0, oom[0].top_stack_py, oom[0].top_stack_c);
		}
		if (n_oom > 1)
			fprintf(r->out, " (%zu out-of-memory events in all)", n_oom);
		sep = "; apart from it, ";
	}
	for (k = 0; k < 3 && main == 3; k++)
		if (counts[k])
			main = k;
	if (main < 3) {
		fprintf(r->out, "%s%" PRIu64 " block%s %s (%s)", sep, counts[main],
			counts[main] == 1 ? "" : "s", answer_phrase(r, kinds[main]),
			memscope_leaks_totals_text(text, sizeof(text), t,
				memscope_leaks_totals(
					r->l, kinds[main], MEMSCOPE_LEAKS_ALL_INPUTS, t),
				memscope_leaks_nested(
					r->l, kinds[main], MEMSCOPE_LEAKS_ALL_INPUTS)));
		/* of nested pools, the largest of those carved out of the other: its blocks
		 * are what the program asked for */
		for (i = 0; i < n_across && a[i].kind != kinds[main]; i++)
			;
		for (k = i; memscope_leaks_nested(r->l, kinds[main], MEMSCOPE_LEAKS_ALL_INPUTS) &&
			    k < n_across && a[k].kind == kinds[main];
			k++)
			if (a[k].pool < 64 &&
				(MEMSCOPE_POOL_BIT(a[k].pool) & MEMSCOPE_POOLS_INNER)) {
				i = k;
				break;
			}
		if (i < n_across && (a[i].n > 1 || counts[main] > 1)) {
			fprintf(r->out, ", the largest group %s %s in %" PRIu64 " block%s",
				memscope_subtype_name(a[i].pool),
				memscope_bytes_text(b, sizeof(b), a[i].bytes), a[i].n,
				a[i].n == 1 ? "" : "s");
			text_holder(r, a[i].owner, a[i].op, a[i].stack_py, a[i].stack_c);
			if (r->n_inputs > 1 && a[i].n_inputs == 1) {
				fputs(" in ", r->out);
				text_cstr(r->out, short_name(r, a[i].max_src));
			} else if (r->n_inputs > 1) {
				fprintf(r->out, " in %" PRIu32 " of %zu inputs", a[i].n_inputs,
					r->n_inputs);
			}
		}
		for (k = main + 1; k < 3; k++)
			if (counts[k])
				fprintf(r->out, "; also %" PRIu64 " block%s %s", counts[k],
					counts[k] == 1 ? "" : "s", answer_phrase(r, kinds[k]));
		sep = "; ";
	}
	/* inputs without blocks had nothing checked: said once, not per kind */
	for (i = 0; i < r->n_inputs; i++)
		n_blockless += !memscope_leaks_input(r->l, (uint32_t)i)->n_block_rows;
	if (n_blockless) {
		fprintf(r->out, "%snothing to check", sep);
		if (r->n_inputs > 1)
			fprintf(r->out, " in %zu of %zu inputs", n_blockless, r->n_inputs);
		fprintf(r->out, " (%s)", memscope_leaks_unchecked_text(MEMSCOPE_LEAKS_NO_BLOCKS));
		sep = "; ";
	}
	for (k = 0; k < 3; k++) {
		unsigned why;

		if (!(o->kinds & kinds[k]))
			continue;
		why = unchecked_why(r, kinds[k], &n_unchecked);
		n_checked += n_unchecked < r->n_inputs;
		why &= ~(1u << MEMSCOPE_LEAKS_NO_BLOCKS);
		if (!(n_unchecked -= n_blockless))
			continue;
		fprintf(r->out, "%s%s not checked", sep,
			names[k] ? names[k] : answer_phrase(r, kinds[k]));
		if (r->n_inputs > 1)
			fprintf(r->out, " in %zu%s of %zu inputs", n_unchecked,
				n_blockless ? " more" : "", r->n_inputs);
		fputs(" (", r->out);
		text_why(r, why, 0);
		fputc(')', r->out);
		sep = "; ";
	}
	if (!n_oom && main == 3)
		fprintf(r->out, "%s%s", *sep ? "; " : "",
			n_checked ? "no leaks found in what was checked" : "nothing was checked");
}

/* The answer (text_answer_to) as one line with its first letter capitalised: malloc'd, NULL on
 * OOM. */
static char *answer_text(struct report *r)
{
	FILE *saved = r->out;
	char *buf = NULL;
	size_t len = 0;

	if (!(r->out = open_memstream(&buf, &len))) {
		r->out = saved;
		return NULL;
	}
	text_answer_to(r);
	if (fclose(r->out)) {
		free(buf);
		buf = NULL;
	}
	r->out = saved;
	if (buf && buf[0] >= 'a' && buf[0] <= 'z')
		buf[0] = (char)(buf[0] - 'a' + 'A');
	return buf;
}

static void write_text(struct report *r)
{
	size_t i, n_quiet = 0, n_leaky = 0;

	if (r->answer) {
		fprintf(r->out, "%s\n\n", r->answer);
		r->printed = 0;
	}
	for (i = 0; i < r->n_inputs; i++) {
		const struct memscope_leaks_input_info *in =
			memscope_leaks_input(r->l, (uint32_t)i);

		n_leaky += in->n_leaks[0] || in->n_leaks[1] || in->n_leaks[2];
		if (!has_findings(r, (uint32_t)i)) {
			n_quiet++;
			continue;
		}
		if (r->n_inputs > 1) {
			fputs(r->printed ? "\n==> " : "==> ", r->out);
			text_cstr(r->out, input_name(r, (uint32_t)i));
			fputs(" <==\n", r->out);
			r->printed = 0;
		}
		text_input(r, (uint32_t)i);
		r->printed = 1;
	}
	/* the inputs without findings: one line */
	if (r->n_inputs > 1 && n_quiet) {
		size_t k = 0;

		fprintf(r->out, "%sno leaks in %zu of %zu inputs:", r->printed ? "\n" : "", n_quiet,
			r->n_inputs);
		for (i = 0; i < r->n_inputs; i++)
			if (!has_findings(r, (uint32_t)i)) {
				fputs(k++ ? ", " : " ", r->out);
				text_str(r->out, input_name(r, (uint32_t)i),
					strlen(input_name(r, (uint32_t)i)));
			}
		fputc('\n', r->out);
		r->printed = 1;
	}
	if (n_leaky > 1)
		text_across(r);
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
	ms__json_cstr(r->out, input_name(r, b->src));
	json_pid(r->out, b->pid);
	ms__json_cstr(r->out, memscope_device_text(b->device, dev));
	fprintf(r->out, ",\"pool\":\"%s\",\"ptr\":", memscope_subtype_name(b->pool));
	json_ptr(r->out, b);
	fprintf(r->out, ",\"size\":%" PRId64 ",\"allocation_id\":", b->size);
	if (b->alloc_id)
		fprintf(r->out, "%" PRIu64, b->alloc_id);
	else
		fputs("null", r->out);
	fprintf(r->out, ",\"event_id\":%" PRIu64, b->alloc_event_id);
	json_file(r, b);
	fprintf(r->out, ",\"line\":%" PRIu64 ",\"timestamp_ns\":%" PRIu64, b->alloc_line,
		b->alloc_ts_ns);
	if (x->kind == MEMSCOPE_LEAK_STEP)
		fprintf(r->out,
			",\"alloc_step\":%" PRIu64 ",\"detected_step\":%" PRIu64
			",\"kernel_index\":%" PRIu64,
			x->alloc_step, x->detected_step, x->kernel_index);
	else if (x->alloc_step != MEMSCOPE_LEAK_NO_STEP)
		fprintf(r->out, ",\"alloc_step\":%" PRIu64 ",\"detected_step\":null",
			x->alloc_step);
	else
		fputs(",\"alloc_step\":null,\"detected_step\":null", r->out);
	if (x->kind == MEMSCOPE_LEAK_EXIT)
		fprintf(r->out, ",\"freed_by\":\"%s\"", x->shadow ? "shadow" : "none");
	fprintf(r->out, ",\"group\":%u", (unsigned)x->report_group + 1);
	fputs(",\"op\":", r->out);
	ms__json_id_or_null(r->out, r->st, x->op);
	fputs(",\"owner\":", r->out);
	ms__json_id_or_null(r->out, r->st, b->owner);
	fputs(",\"stack\":", r->out);
	ms__json_stack(r->out, r->st, b->stack_py, b->stack_c);
	fputc('}', r->out);
}

/* Whether a finding, or a group, is in the reports: its group is one of the first top. */
static int listed(const struct report *r, const struct memscope_leak_group *g)
{
	uint64_t top = memscope_leaks_opts(r->l)->top;

	return !top || g->rank < top;
}

static int leak_listed(const struct report *r, const struct memscope_leak *x)
{
	size_t n;
	const struct memscope_leak_group *g = memscope_leaks_groups(r->l, &n);

	return x->report_group < n && listed(r, &g[x->report_group]);
}

/* ,"op":,"owner":,"stack":,"differ":{} of a group: what it shows, and whether its members differ
 * in it */
static void js_shown(const struct report *r, uint32_t op, uint32_t owner, uint32_t stack_py,
	uint32_t stack_c, unsigned differ)
{
	fputs(",\"op\":", r->out);
	ms__json_id_or_null(r->out, r->st, op);
	fputs(",\"owner\":", r->out);
	ms__json_id_or_null(r->out, r->st, owner);
	fputs(",\"stack\":", r->out);
	ms__json_stack(r->out, r->st, stack_py, stack_c);
	fprintf(r->out, ",\"differ\":{\"op\":%s,\"owner\":%s,\"stack\":%s}",
		differ & MEMSCOPE_LEAK_GROUP_OPS ? "true" : "false",
		differ & MEMSCOPE_LEAK_GROUP_OWNERS ? "true" : "false",
		differ & MEMSCOPE_LEAK_GROUP_STACKS ? "true" : "false");
}

/* One report group: its key and totals, its first finding, the steps of its findings. */
static void js_group(const struct report *r, const struct memscope_leak_group *g, size_t i)
{
	const struct memscope_leak *x = memscope_leaks_get(r->l, g->first);
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];
	size_t n, k;
	const size_t *m = memscope_leaks_members(r->l, &n);
	uint64_t last = MEMSCOPE_LEAK_NO_STEP;
	int any = 0;

	fprintf(r->out, "{\"group\":%zu,\"kind\":\"%s\",\"input\":", i + 1, kind_name(g->kind));
	ms__json_cstr(r->out, input_name(r, g->src));
	fprintf(r->out, ",\"rank\":%" PRIu64 ",\"pool\":\"%s\",\"count\":%" PRIu64, g->rank + 1,
		memscope_subtype_name(g->pool), g->n);
	ms__json_bytes(r->out, "bytes", g->bytes);
	js_shown(r, g->op, g->owner, g->stack_py, g->stack_c, g->differ);
	fputs(",\"steps\":[", r->out);
	for (k = g->members_at; k < g->members_at + g->n && k < n; k++) {
		uint64_t s = memscope_leaks_get(r->l, m[k])->alloc_step;

		if (s == MEMSCOPE_LEAK_NO_STEP || (any && s == last))
			continue;
		fprintf(r->out, "%s%" PRIu64, any++ ? "," : "", s);
		last = s;
	}
	fputs("],\"first\":", r->out);
	if (x) {
		fprintf(r->out, "{\"line\":%" PRIu64, x->blk.alloc_line);
		json_file(r, &x->blk);
		json_pid(r->out, x->blk.pid);
		ms__json_cstr(r->out, memscope_device_text(x->blk.device, dev));
		fputs(",\"ptr\":", r->out);
		json_ptr(r->out, &x->blk);
		fprintf(r->out, ",\"timestamp_ns\":%" PRIu64 "}", x->blk.alloc_ts_ns);
	} else {
		fputs("null", r->out);
	}
	fputc('}', r->out);
}

/* ,"pools":[{"pool","leaks","bytes"}],"pools_nested":bool of a kind of input src or every
 * input (MEMSCOPE_LEAKS_ALL_INPUTS: nested when one input's pools are) */
static void js_pools(const struct report *r, unsigned kind, uint32_t src)
{
	struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
	size_t k = memscope_leaks_totals(r->l, kind, src, t), i;

	fputs(",\"pools\":[", r->out);
	for (i = 0; i < k; i++) {
		fprintf(r->out, "%s{\"pool\":\"%s\",\"leaks\":%" PRIu64, i ? "," : "",
			memscope_subtype_name(t[i].pool), t[i].n);
		ms__json_bytes(r->out, "bytes", t[i].bytes);
		fputc('}', r->out);
	}
	fprintf(r->out, "],\"pools_nested\":%s",
		memscope_leaks_nested(r->l, kind, src) ? "true" : "false");
}

/* ,"checked":bool,"not_checked":why|null of kind in input src (memscope_leaks_checked) */
static void js_checked(const struct report *r, unsigned kind, uint32_t src)
{
	enum memscope_leaks_unchecked why = memscope_leaks_checked(r->l, kind, src);

	fprintf(r->out, ",\"checked\":%s,\"not_checked\":",
		why == MEMSCOPE_LEAKS_CHECKED ? "true" : "false");
	if (why == MEMSCOPE_LEAKS_CHECKED)
		fputs("null", r->out);
	else
		ms__json_cstr(r->out, memscope_leaks_unchecked_text(why));
}

/* The summary of each input: {"input","events","end","ooms","step","mark","exit"}, a kind's
 * {"leaks","checked","not_checked","bytes","pools","pools_nested"} (null when not looked for;
 * checked: js_checked). */
static void js_inputs(const struct report *r)
{
	static const unsigned kinds[3] = { MEMSCOPE_LEAK_STEP, MEMSCOPE_LEAK_MARK,
		MEMSCOPE_LEAK_EXIT };
	const struct memscope_leaks_opts *o = memscope_leaks_opts(r->l);
	size_t i, k, j;

	fputs(",\"inputs\":[", r->out);
	for (i = 0; i < r->n_inputs; i++) {
		const struct memscope_leaks_input_info *in =
			memscope_leaks_input(r->l, (uint32_t)i);

		fputs(i ? ",\n{\"input\":" : "\n{\"input\":", r->out);
		ms__json_cstr(r->out, input_name(r, (uint32_t)i));
		fprintf(r->out, ",\"events\":%" PRIu64 ",\"end\":\"%s\",\"ooms\":%" PRIu64,
			in->n_events, memscope_leaks_end_name(in->end), in->n_ooms);
		for (k = 0; k < 3; k++) {
			struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
			size_t n = memscope_leaks_totals(r->l, kinds[k], (uint32_t)i, t);
			uint64_t bytes = 0;

			fprintf(r->out, ",\"%s\":", kind_name(kinds[k]));
			if (!(o->kinds & kinds[k])) {
				fputs("null", r->out);
				continue;
			}
			for (j = 0; j < n; j++)
				if (__builtin_add_overflow(bytes, t[j].bytes, &bytes))
					bytes = MEMSCOPE_BYTES_OVERFLOW;
			fprintf(r->out, "{\"leaks\":%" PRIu64, in->n_leaks[k]);
			js_checked(r, kinds[k], (uint32_t)i);
			ms__json_bytes(r->out, "bytes", bytes);
			js_pools(r, kinds[k], (uint32_t)i);
			fputc('}', r->out);
		}
		fputc('}', r->out);
	}
	fputc(']', r->out);
}

/* One group merged across inputs: its key, totals, the least and most of its inputs, and each
 * input's part ("group": its entry of "groups", null when --top left it out). */
static void js_across(const struct report *r, const struct memscope_leak_across *a)
{
	size_t n, ng, i;
	const size_t *ag = memscope_leaks_across_groups(r->l, &n);
	const struct memscope_leak_group *g = memscope_leaks_groups(r->l, &ng);

	fprintf(r->out,
		"{\"kind\":\"%s\",\"rank\":%" PRIu64 ",\"pool\":\"%s\",\"inputs\":%" PRIu32
		",\"count\":%" PRIu64,
		kind_name(a->kind), a->rank + 1, memscope_subtype_name(a->pool), a->n_inputs, a->n);
	ms__json_bytes(r->out, "bytes", a->bytes);
	fputs(",\"min\":{\"input\":", r->out);
	ms__json_cstr(r->out, input_name(r, a->min_src));
	fprintf(r->out, ",\"bytes\":%" PRIu64 "},\"max\":{\"input\":", a->min_bytes);
	ms__json_cstr(r->out, input_name(r, a->max_src));
	fprintf(r->out, ",\"bytes\":%" PRIu64 "}", a->max_bytes);
	js_shown(r, a->op, a->owner, a->stack_py, a->stack_c, a->differ);
	fputs(",\"per_input\":[", r->out);
	for (i = a->groups_at; i < a->groups_at + a->n_inputs && i < n; i++) {
		const struct memscope_leak_group *x = ag[i] < ng ? &g[ag[i]] : NULL;

		if (!x)
			continue;
		fputs(i > a->groups_at ? ",{\"input\":" : "{\"input\":", r->out);
		ms__json_cstr(r->out, input_name(r, x->src));
		fputs(",\"group\":", r->out);
		if (listed(r, x))
			fprintf(r->out, "%zu", ag[i] + 1);
		else
			fputs("null", r->out);
		fprintf(r->out, ",\"count\":%" PRIu64, x->n);
		ms__json_bytes(r->out, "bytes", x->bytes);
		fputc('}', r->out);
	}
	fputs("]}", r->out);
}

/* The opening of an object about one process and device: {"input":..,"pid":..,"device":.. */
static void js_where(const struct report *r, uint32_t src, uint64_t pid, int32_t device)
{
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];

	fputs("{\"input\":", r->out);
	ms__json_cstr(r->out, input_name(r, src));
	json_pid(r->out, pid);
	ms__json_cstr(r->out, memscope_device_text(device, dev));
}

static void js_fluct(const struct report *r, const struct memscope_fluct *f)
{
	static const char *const names[2] = { "min_gap", "max_gap" };
	size_t i;

	js_where(r, f->src, f->pid, f->device);
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

/* ,"unchecked_inputs":[{"input","why"}]: the inputs kind was asked for and not checked in */
static void js_unchecked(const struct report *r, unsigned kind)
{
	size_t i, k = 0;

	fputs(",\"unchecked_inputs\":[", r->out);
	for (i = 0; i < r->n_inputs; i++) {
		enum memscope_leaks_unchecked why = memscope_leaks_checked(r->l, kind, (uint32_t)i);

		if (why == MEMSCOPE_LEAKS_CHECKED || why == MEMSCOPE_LEAKS_NOT_ASKED)
			continue;
		fputs(k++ ? ",{\"input\":" : "{\"input\":", r->out);
		ms__json_cstr(r->out, input_name(r, (uint32_t)i));
		fputs(",\"why\":", r->out);
		ms__json_cstr(r->out, memscope_leaks_unchecked_text(why));
		fputc('}', r->out);
	}
	fputc(']', r->out);
}

/* One out-of-memory event: where and when, what it asked for and the device's state, and the
 * blocks alive then (null beyond MEMSCOPE_LEAKS_OOM_STATES). */
static void js_oom(const struct report *r, const struct memscope_leaks_oom *o, size_t i)
{
	static const char *const names[4] = { "requested", "device_free", "reserved", "allocated" };
	const int64_t v[4] = { o->requested, o->device_free, o->reserved, o->allocated };
	size_t k;

	js_where(r, o->src, o->pid, o->device);
	fprintf(r->out, ",\"line\":%" PRIu64 ",\"timestamp_ns\":%" PRIu64, o->line, o->ts_ns);
	for (k = 0; k < 4; k++)
		if (v[k] >= 0)
			fprintf(r->out, ",\"%s\":%" PRId64, names[k], v[k]);
		else
			fprintf(r->out, ",\"%s\":null", names[k]);
	fputs(",\"alive\":", r->out);
	if (i >= MEMSCOPE_LEAKS_OOM_STATES) {
		fputs("null}", r->out);
		return;
	}
	fputs("{\"pools\":[", r->out);
	for (k = 0; k < o->n_pools; k++) {
		fprintf(r->out, "%s{\"pool\":\"%s\",\"blocks\":%" PRIu64, k ? "," : "",
			memscope_subtype_name(o->pools[k].pool), o->pools[k].n);
		ms__json_bytes(r->out, "bytes", o->pools[k].bytes);
		fputc('}', r->out);
	}
	fprintf(r->out, "],\"partial\":%s,\"largest_holder\":", o->partial ? "true" : "false");
	if (!o->top_bytes) {
		fputs("null}}", r->out);
		return;
	}
	fputs("{\"owner\":", r->out);
	ms__json_id_or_null(r->out, r->st, o->top_owner);
	fputs(",\"stack\":", r->out);
	ms__json_stack(r->out, r->st, o->top_stack_py, o->top_stack_c);
	fprintf(r->out, ",\"blocks\":%" PRIu64, o->top_blocks);
	ms__json_bytes(r->out, "bytes", o->top_bytes);
	fputs("}}}", r->out);
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
		ms__json_bytes(r->out, "bytes", s->step_bytes);
		js_pools(r, MEMSCOPE_LEAK_STEP, MEMSCOPE_LEAKS_ALL_INPUTS);
		js_unchecked(r, MEMSCOPE_LEAK_STEP);
		fprintf(r->out, ",\"skip_steps\":%" PRIu64 ",\"min_steps_alive\":%" PRIu64 "}",
			o->skip_steps, o->min_steps_alive);
	} else
		fputs("null", r->out);
	fputs(",\"mark\":", r->out);
	if (o->kinds & MEMSCOPE_LEAK_MARK) {
		fputs("{\"text\":", r->out);
		ms__json_cstr(r->out, o->mark);
		fprintf(r->out, ",\"start_index\":%" PRIu64 ",\"leaks\":%" PRIu64, o->mark_index,
			s->n_mark_leaks);
		ms__json_bytes(r->out, "bytes", s->mark_bytes);
		js_pools(r, MEMSCOPE_LEAK_MARK, MEMSCOPE_LEAKS_ALL_INPUTS);
		js_unchecked(r, MEMSCOPE_LEAK_MARK);
		fprintf(r->out, ",\"unchecked_blocks\":%" PRIu64 ",\"groups\":[",
			s->n_unchecked_mark_blocks);
		m = memscope_leaks_mark_groups(r->l, &n);
		for (i = 0; i < n; i++) {
			char dev[MEMSCOPE_DEVICE_TEXT_MAX];

			fprintf(r->out, "%s{\"input\":", i ? "," : "");
			ms__json_cstr(r->out, input_name(r, m[i].src));
			json_pid(r->out, m[i].pid);
			ms__json_cstr(r->out, memscope_device_text(m[i].device, dev));
			fprintf(r->out, ",\"marks\":%" PRIu64 ",\"checked\":%s", m[i].n_marks,
				m[i].checked ? "true" : "false");
			if (m[i].checked)
				fprintf(r->out,
					",\"mark_ids\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64
					"],\"mark_lines\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
					m[i].mark[0].id, m[i].mark[1].id, m[i].mark[2].id,
					m[i].mark_line[0], m[i].mark_line[1], m[i].mark_line[2]);
			fprintf(r->out, ",\"leaks\":%" PRIu64, m[i].n_leaks);
			ms__json_bytes(r->out, "bytes", m[i].bytes);
			fputc('}', r->out);
		}
		fputs("]}", r->out);
	} else {
		fputs("null", r->out);
	}
	fputs(",\"exit\":", r->out);
	if (o->kinds & MEMSCOPE_LEAK_EXIT) {
		int any = 0;

		fprintf(r->out,
			"{\"leaks\":%" PRIu64 ",\"end\":\"%s\",\"alive_at\":", s->n_exit_leaks,
			memscope_leaks_end_name(
				memscope_leaks_end_of(r->l, MEMSCOPE_LEAKS_ALL_INPUTS)));
		ms__json_cstr(r->out, memscope_leaks_end_text(memscope_leaks_end_of(
					      r->l, MEMSCOPE_LEAKS_ALL_INPUTS)));
		ms__json_bytes(r->out, "bytes", s->exit_bytes);
		js_pools(r, MEMSCOPE_LEAK_EXIT, MEMSCOPE_LEAKS_ALL_INPUTS);
		js_unchecked(r, MEMSCOPE_LEAK_EXIT);
		/* the exit kind's entries of "groups" */
		fputs(",\"groups\":[", r->out);
		g = memscope_leaks_groups(r->l, &n);
		for (i = 0; i < n; i++) {
			if (g[i].kind != MEMSCOPE_LEAK_EXIT || !listed(r, &g[i]))
				continue;
			fputs(any++ ? "," : "", r->out);
			js_group(r, &g[i], i);
		}
		fputs("]}", r->out);
	} else {
		fputs("null", r->out);
	}
	fprintf(r->out, ",\"group_by\":\"%s\",\"top\":", group_by_name(o->group_by));
	if (o->top)
		fprintf(r->out, "%" PRIu64, o->top);
	else
		fputs("null", r->out);
	js_inputs(r);
	fputc('}', r->out);
}

static void write_json(const struct report *r)
{
	size_t n = memscope_leaks_count(r->l), i, k = 0;
	const struct memscope_fluct *f;
	const struct memscope_leak_group *g;
	const struct memscope_leak_across *a;
	const struct memscope_leaks_oom *o;
	uint64_t top = memscope_leaks_opts(r->l)->top;

	fputs("{\"leaks\":[", r->out);
	for (i = 0; i < n; i++) {
		const struct memscope_leak *x = memscope_leaks_get(r->l, i);

		if (!leak_listed(r, x))
			continue;
		fputs(k++ ? ",\n" : "\n", r->out);
		js_leak(r, x);
	}
	fputs("],\n\"groups\":[", r->out);
	g = memscope_leaks_groups(r->l, &n);
	for (i = 0, k = 0; i < n; i++) {
		if (!listed(r, &g[i]))
			continue;
		fputs(k++ ? ",\n" : "\n", r->out);
		js_group(r, &g[i], i);
	}
	fputs("],\n\"across\":[", r->out);
	a = memscope_leaks_across(r->l, &n);
	for (i = 0, k = 0; i < n; i++) {
		if (top && a[i].rank >= top)
			continue;
		fputs(k++ ? ",\n" : "\n", r->out);
		js_across(r, &a[i]);
	}
	fputs("],\n\"fluctuation\":[", r->out);
	f = memscope_leaks_fluct(r->l, &n);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", r->out);
		js_fluct(r, &f[i]);
	}
	fputs("],\n\"ooms\":[", r->out);
	o = memscope_leaks_ooms(r->l, &n);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", r->out);
		js_oom(r, &o[i], i);
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
	      "alloc_step,detected_step,kernel_index,owner,stack_python,stack_c,group,op\n",
		r->out);
	for (i = 0; i < n; i++) {
		const struct memscope_leak *x = memscope_leaks_get(r->l, i);
		const struct memscope_block *b = &x->blk;
		const char *name = input_name(r, b->src);
		char dev[MEMSCOPE_DEVICE_TEXT_MAX];
		size_t len = 0, op_len = 0;
		const char *owner = b->owner ? memscope_strtab_str(r->st, b->owner, &len) : "";
		const char *op = x->op ? memscope_strtab_str(r->st, x->op, &op_len) : "";

		if (!leak_listed(r, x))
			continue;

		fprintf(r->out, "%s,", kind_name(x->kind));
		ms__csv_field(r->out, name, strlen(name));
		fprintf(r->out, ",%" PRIu64 ",%s,%s,", b->pid, memscope_device_text(b->device, dev),
			memscope_subtype_name(b->pool));
		if (b->flags & MEMSCOPE_BLOCK_NO_PTR)
			fputs("N/A", r->out);
		else
			fprintf(r->out, "0x%016" PRIx64, b->ptr);
		fprintf(r->out, ",%" PRId64 ",", b->size);
		if (b->alloc_id)
			fprintf(r->out, "%" PRIu64, b->alloc_id);
		fprintf(r->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", b->alloc_event_id,
			b->alloc_line, b->alloc_ts_ns);
		if (x->kind == MEMSCOPE_LEAK_STEP)
			fprintf(r->out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64, x->alloc_step,
				x->detected_step, x->kernel_index);
		else if (x->alloc_step != MEMSCOPE_LEAK_NO_STEP)
			fprintf(r->out, "%" PRIu64 ",,", x->alloc_step);
		else
			fputs(",,", r->out);
		fputc(',', r->out);
		ms__csv_field(r->out, owner ? owner : "", owner ? len : 0);
		fputc(',', r->out);
		ms__csv_stack(r->out, r->st, b->stack_py);
		fputc(',', r->out);
		ms__csv_stack(r->out, r->st, b->stack_c);
		fprintf(r->out, ",%u,", (unsigned)x->report_group + 1);
		ms__csv_field(r->out, op ? op : "", op ? op_len : 0);
		fputc('\n', r->out);
	}
}

int memscope_leaks_write(FILE *out, enum memscope_leaks_format fmt, const struct memscope_leaks *l,
	const struct memscope_strtab *st, const struct memscope_leaks_input *inputs,
	size_t n_inputs)
{
	struct report r = { out, l, st, inputs, n_inputs, 0, NULL, NULL, NULL };
	const char **full = NULL;
	char *names = NULL;
	size_t i;
	int rc = 0;

	/* the text's names across inputs, before anything is written */
	if (fmt == MEMSCOPE_LEAKS_TEXT && n_inputs > 1) {
		if (!(full = malloc(n_inputs * sizeof(*full))) ||
			!(r.short_names = malloc(n_inputs * sizeof(*r.short_names)))) {
			rc = MEMSCOPE_E_NOMEM;
			goto out;
		}
		for (i = 0; i < n_inputs; i++)
			full[i] = input_name(&r, (uint32_t)i);
		if (!(names = ms__input_names(full, n_inputs, r.short_names))) {
			rc = MEMSCOPE_E_NOMEM;
			goto out;
		}
	}
	if (fmt == MEMSCOPE_LEAKS_TEXT && !(r.answer = answer_text(&r))) {
		rc = MEMSCOPE_E_NOMEM;
		goto out;
	}
	if (fmt == MEMSCOPE_LEAKS_JSON)
		write_json(&r);
	else if (fmt == MEMSCOPE_LEAKS_CSV)
		write_csv(&r);
	else if (fmt == MEMSCOPE_LEAKS_REFERENCE)
		write_reference(&r);
	else
		write_text(&r);
	rc = ferror(out) ? MEMSCOPE_E_IO : 0;
out:
	free(full);
	free(r.short_names);
	free(r.numbered);
	free(r.answer);
	free(names);
	return rc;
}
