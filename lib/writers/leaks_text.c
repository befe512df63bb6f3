/* The leak report as text (MEMSCOPE_LEAKS_TEXT): the answer first, then per input its
 * out-of-memory events and the groups of each kind, largest first, the groups merged across
 * inputs, and a summary. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_report.h"

/* Text of the input as it is, control characters as '?' (a line stays one line). */
static void text_id(const struct leaks_report *r, uint32_t id)
{
	size_t n = 0;
	const char *s = memscope_strtab_str(r->st, id, &n);

	if (!s || !n)
		fputs("[unnamed]", r->out);
	else
		ms__lrep_text_str(r->out, s, n);
}

/* frames shown per stack: the first and the last, the middle elided */
#define FRAMES_HEAD 8
#define FRAMES_TAIL 8

static void text_frames(const struct leaks_report *r, uint32_t stack, const char *lang)
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
static void text_steps(const struct leaks_report *r, const struct memscope_leak_group *g)
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
static void text_group_head(const struct leaks_report *r, uint64_t rank, uint16_t pool,
	uint64_t bytes, uint64_t n, uint32_t owner, unsigned differ)
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
static void text_group_op(const struct leaks_report *r, uint32_t op, unsigned differ, int op_rows)
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
static void text_group_stacks(
	const struct leaks_report *r, uint32_t py, uint32_t c, unsigned differ)
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
static void text_group(const struct leaks_report *r, const struct memscope_leak_group *g)
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
		ms__lrep_ptr_text(r, &x->blk, ptr + 2, sizeof(ptr) - 2);
		fputs("   first ", r->out);
		ms__lrep_text_cstr(r->out, ms__lrep_block_file(r, &x->blk));
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
static const char *kind_title(const struct leaks_report *r, unsigned kind, uint32_t src, char *buf)
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

static int note_numbered(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	struct leaks_report *r = ctx;

	(void)pid;
	if (memscope_steps_source(p) == MEMSCOPE_STEPS_PROFILER && src < r->n_inputs)
		r->numbered[src] = r->numbered[r->n_inputs] = 1;
	return 0;
}

/* Whether some process of input src (or MEMSCOPE_LEAKS_ALL_INPUTS) has ProfilerStep steps,
 * which keep the profiler's numbers, so --skip-steps is not "s > N" there. 0 when that cannot
 * be known (out of memory). */
static int profiler_numbered(struct leaks_report *r, uint32_t src)
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
	struct leaks_report *r, unsigned kind, uint32_t src, size_t n, int stacked, int nested)
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
		ms__lrep_text_str(r->out, o->mark, strlen(o->mark));
		fprintf(r->out, "' #%" PRIu64 " and #%" PRIu64 ", not freed by #%" PRIu64 ")",
			o->mark_index, o->mark_index + 1, o->mark_index + 2);
	}
	fprintf(r->out, ": %" PRIu64 " block%s in %zu group%s by %s", count, count == 1 ? "" : "s",
		n, n == 1 ? "" : "s",
		o->group_by == MEMSCOPE_LEAKS_BY_STACK && !stacked
			? "op (no call stacks)"
			: ms__lrep_group_by_name(o->group_by));
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
static void rest_line(const struct leaks_report *r, const struct rest *x, int nested)
{
	char text[MEMSCOPE_LEAKS_TOTALS_TEXT_MAX];

	if (x->n)
		fprintf(r->out, "... %zu more group%s: %" PRIu64 " block%s, %s\n", x->n_groups,
			x->n_groups == 1 ? "" : "s", x->n, x->n == 1 ? "" : "s",
			memscope_leaks_totals_text(text, sizeof(text), x->t, x->n_pools, nested));
}

/* The line of a kind of an input, then the first top groups of [g, g + n), then what the others
 * hold. */
static void text_kind(struct leaks_report *r, uint32_t src, unsigned kind,
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
static void text_fluct(struct leaks_report *r, uint32_t src)
{
	size_t n, i, first;
	const struct memscope_fluct *f = ms__lrep_fluct_of_input(r, src, &first, &n);
	struct several sv = { 0, 0, 0 };
	int any = 0;

	ms__lrep_several_of(&sv, f, first, n, src);
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
		ms__lrep_process_suffix(proc, sizeof(proc), sv.several, f[i].pid);
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
static int has_findings(const struct leaks_report *r, uint32_t src)
{
	const struct memscope_leaks_input_info *in = memscope_leaks_input(r->l, src);
	size_t n, i;
	const struct memscope_fluct *f = memscope_leaks_fluct(r->l, &n);

	if (in->n_leaks[0] || in->n_leaks[1] || in->n_leaks[2] || in->n_ooms)
		return 1;
	for (i = ms__lrep_first_not(n, ms__lrep_fluct_before, r, src); i < n && f[i].src == src;
		i++)
		if (f[i].has_gaps)
			return 1;
	return 0;
}

/* groups of inputs before v (by input) */
static int group_before(const struct leaks_report *r, size_t i, uint64_t v)
{
	size_t n;

	return memscope_leaks_groups(r->l, &n)[i].src < v;
}

/* ", owner X", ", op X" or ", at FRAME" (the innermost of its Python stack, else of its C
 * stack): what names the holder of some bytes in one line; nothing when none does. */
static void text_holder(const struct leaks_report *r, uint32_t owner, uint32_t op,
	uint32_t stack_py, uint32_t stack_c)
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
static void text_oom_line(const struct leaks_report *r, const struct memscope_leaks_oom *o)
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

/* out-of-memory events ms__lrep_listed per input, at most */
#define OOMS_LISTED 5

/* The out-of-memory events of input src, each with the blocks alive then and who held the
 * most of them, first in its section: the biggest finding. */
static void text_ooms(struct leaks_report *r, uint32_t src)
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
static void text_input(struct leaks_report *r, uint32_t src)
{
	static const unsigned kinds[3] = { MEMSCOPE_LEAK_STEP, MEMSCOPE_LEAK_MARK,
		MEMSCOPE_LEAK_EXIT };
	size_t n, i, k;
	const struct memscope_leak_group *g = memscope_leaks_groups(r->l, &n);

	text_ooms(r, src);
	i = ms__lrep_first_not(n, group_before, r, src);
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

static const char *short_name(const struct leaks_report *r, uint32_t src)
{
	return r->short_names && src < r->n_inputs ? r->short_names[src]
						   : ms__lrep_input_name(r, src);
}

/* ", in 4 of 4 inputs: most in rank2/x.csv 3.00 MiB, least in rank0/x.csv 1.00 MiB" */
static void text_across_inputs(const struct leaks_report *r, const struct memscope_leak_across *a)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];

	fprintf(r->out, ", in %" PRIu32 " of %zu inputs", a->n_inputs, r->n_inputs);
	if (a->n_inputs == 1) {
		fputs(": ", r->out);
		ms__lrep_text_cstr(r->out, short_name(r, a->max_src));
	} else if (a->min_bytes == a->max_bytes) {
		fprintf(r->out, ", %s each", memscope_bytes_text(b, sizeof(b), a->max_bytes));
	} else {
		fputs(": most in ", r->out);
		ms__lrep_text_cstr(r->out, short_name(r, a->max_src));
		fprintf(r->out, " %s, least in ", memscope_bytes_text(b, sizeof(b), a->max_bytes));
		ms__lrep_text_cstr(r->out, short_name(r, a->min_src));
		fprintf(r->out, " %s", memscope_bytes_text(b, sizeof(b), a->min_bytes));
	}
}

/* whether one of the inputs of an across group has op rows */
static int across_op_rows(const struct leaks_report *r, const struct memscope_leak_across *a)
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
static void text_across(struct leaks_report *r)
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
static unsigned unchecked_why(const struct leaks_report *r, unsigned kind, size_t *n)
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
static void text_why(const struct leaks_report *r, unsigned why, int long_text)
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
static void text_totals(struct leaks_report *r)
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
static const char *answer_phrase(const struct leaks_report *r, unsigned kind)
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
static void text_answer_to(struct leaks_report *r)
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
			ms__lrep_text_cstr(r->out, ms__lrep_input_name(r, oom[0].src));
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
				ms__lrep_text_cstr(r->out, short_name(r, a[i].max_src));
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
static char *answer_text(struct leaks_report *r)
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

static void write_text(struct leaks_report *r)
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
			ms__lrep_text_cstr(r->out, ms__lrep_input_name(r, (uint32_t)i));
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
				ms__lrep_text_str(r->out, ms__lrep_input_name(r, (uint32_t)i),
					strlen(ms__lrep_input_name(r, (uint32_t)i)));
			}
		fputc('\n', r->out);
		r->printed = 1;
	}
	if (n_leaky > 1)
		text_across(r);
	text_totals(r);
}

int ms__lrep_text(struct leaks_report *r)
{
	const char **full = NULL;
	char *names = NULL;
	size_t i;
	int rc = MEMSCOPE_E_NOMEM;

	/* the names across inputs and the answer, before anything is written */
	if (r->n_inputs > 1) {
		if (!(full = malloc(r->n_inputs * sizeof(*full))) ||
			!(r->short_names = malloc(r->n_inputs * sizeof(*r->short_names))))
			goto out;
		for (i = 0; i < r->n_inputs; i++)
			full[i] = ms__lrep_input_name(r, (uint32_t)i);
		if (!(names = ms__input_names(full, r->n_inputs, r->short_names)))
			goto out;
	}
	if (!(r->answer = answer_text(r)))
		goto out;
	write_text(r);
	rc = 0;
out:
	free(full);
	free(r->short_names);
	free(r->numbered);
	free(r->answer);
	free(names);
	r->short_names = NULL;
	r->numbered = NULL;
	r->answer = NULL;
	return rc;
}
