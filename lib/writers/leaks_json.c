/* The leak report as JSON (MEMSCOPE_LEAKS_JSON): the findings, the report groups, the groups
 * merged across inputs, the fluctuation, the out-of-memory events and a summary with each
 * input's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_report.h"

/* ,"file":NAME when b's MALLOC line is in a file of an input folder (a profiler output), its
 * line then that file's; nothing for a line of the input itself */
static void json_file(const struct leaks_report *r, const struct memscope_block *b)
{
	if (!b->file)
		return;
	fputs(",\"file\":", r->out);
	ms__json_cstr(r->out, ms__lrep_block_file(r, b));
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

static void js_leak(const struct leaks_report *r, const struct memscope_leak *x)
{
	const struct memscope_block *b = &x->blk;
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];

	fprintf(r->out, "{\"kind\":\"%s\",\"input\":", ms__lrep_kind_name(x->kind));
	ms__json_cstr(r->out, ms__lrep_input_name(r, b->src));
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

/* ,"op":,"owner":,"stack":,"differ":{} of a group: what it shows, and whether its members differ
 * in it */
static void js_shown(const struct leaks_report *r, uint32_t op, uint32_t owner, uint32_t stack_py,
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
static void js_group(const struct leaks_report *r, const struct memscope_leak_group *g, size_t i)
{
	const struct memscope_leak *x = memscope_leaks_get(r->l, g->first);
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];
	size_t n, k;
	const size_t *m = memscope_leaks_members(r->l, &n);
	uint64_t last = MEMSCOPE_LEAK_NO_STEP;
	int any = 0;

	fprintf(r->out, "{\"group\":%zu,\"kind\":\"%s\",\"input\":", i + 1,
		ms__lrep_kind_name(g->kind));
	ms__json_cstr(r->out, ms__lrep_input_name(r, g->src));
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
static void js_pools(const struct leaks_report *r, unsigned kind, uint32_t src)
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
static void js_checked(const struct leaks_report *r, unsigned kind, uint32_t src)
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
static void js_inputs(const struct leaks_report *r)
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
		ms__json_cstr(r->out, ms__lrep_input_name(r, (uint32_t)i));
		fprintf(r->out, ",\"events\":%" PRIu64 ",\"end\":\"%s\",\"ooms\":%" PRIu64,
			in->n_events, memscope_leaks_end_name(in->end), in->n_ooms);
		for (k = 0; k < 3; k++) {
			struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
			size_t n = memscope_leaks_totals(r->l, kinds[k], (uint32_t)i, t);
			uint64_t bytes = 0;

			fprintf(r->out, ",\"%s\":", ms__lrep_kind_name(kinds[k]));
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
static void js_across(const struct leaks_report *r, const struct memscope_leak_across *a)
{
	size_t n, ng, i;
	const size_t *ag = memscope_leaks_across_groups(r->l, &n);
	const struct memscope_leak_group *g = memscope_leaks_groups(r->l, &ng);

	fprintf(r->out,
		"{\"kind\":\"%s\",\"rank\":%" PRIu64 ",\"pool\":\"%s\",\"inputs\":%" PRIu32
		",\"count\":%" PRIu64,
		ms__lrep_kind_name(a->kind), a->rank + 1, memscope_subtype_name(a->pool),
		a->n_inputs, a->n);
	ms__json_bytes(r->out, "bytes", a->bytes);
	fputs(",\"min\":{\"input\":", r->out);
	ms__json_cstr(r->out, ms__lrep_input_name(r, a->min_src));
	fprintf(r->out, ",\"bytes\":%" PRIu64 "},\"max\":{\"input\":", a->min_bytes);
	ms__json_cstr(r->out, ms__lrep_input_name(r, a->max_src));
	fprintf(r->out, ",\"bytes\":%" PRIu64 "}", a->max_bytes);
	js_shown(r, a->op, a->owner, a->stack_py, a->stack_c, a->differ);
	fputs(",\"per_input\":[", r->out);
	for (i = a->groups_at; i < a->groups_at + a->n_inputs && i < n; i++) {
		const struct memscope_leak_group *x = ag[i] < ng ? &g[ag[i]] : NULL;

		if (!x)
			continue;
		fputs(i > a->groups_at ? ",{\"input\":" : "{\"input\":", r->out);
		ms__json_cstr(r->out, ms__lrep_input_name(r, x->src));
		fputs(",\"group\":", r->out);
		if (ms__lrep_listed(r, x))
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
static void js_where(const struct leaks_report *r, uint32_t src, uint64_t pid, int32_t device)
{
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];

	fputs("{\"input\":", r->out);
	ms__json_cstr(r->out, ms__lrep_input_name(r, src));
	json_pid(r->out, pid);
	ms__json_cstr(r->out, memscope_device_text(device, dev));
}

static void js_fluct(const struct leaks_report *r, const struct memscope_fluct *f)
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
static void js_unchecked(const struct leaks_report *r, unsigned kind)
{
	size_t i, k = 0;

	fputs(",\"unchecked_inputs\":[", r->out);
	for (i = 0; i < r->n_inputs; i++) {
		enum memscope_leaks_unchecked why = memscope_leaks_checked(r->l, kind, (uint32_t)i);

		if (why == MEMSCOPE_LEAKS_CHECKED || why == MEMSCOPE_LEAKS_NOT_ASKED)
			continue;
		fputs(k++ ? ",{\"input\":" : "{\"input\":", r->out);
		ms__json_cstr(r->out, ms__lrep_input_name(r, (uint32_t)i));
		fputs(",\"why\":", r->out);
		ms__json_cstr(r->out, memscope_leaks_unchecked_text(why));
		fputc('}', r->out);
	}
	fputc(']', r->out);
}

/* One out-of-memory event: where and when, what it asked for and the device's state, and the
 * blocks alive then (null beyond MEMSCOPE_LEAKS_OOM_STATES). */
static void js_oom(const struct leaks_report *r, const struct memscope_leaks_oom *o, size_t i)
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

static void js_summary(const struct leaks_report *r)
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
			ms__json_cstr(r->out, ms__lrep_input_name(r, m[i].src));
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
			if (g[i].kind != MEMSCOPE_LEAK_EXIT || !ms__lrep_listed(r, &g[i]))
				continue;
			fputs(any++ ? "," : "", r->out);
			js_group(r, &g[i], i);
		}
		fputs("]}", r->out);
	} else {
		fputs("null", r->out);
	}
	fprintf(r->out, ",\"group_by\":\"%s\",\"top\":", ms__lrep_group_by_name(o->group_by));
	if (o->top)
		fprintf(r->out, "%" PRIu64, o->top);
	else
		fputs("null", r->out);
	js_inputs(r);
	fputc('}', r->out);
}

int ms__lrep_json(struct leaks_report *r)
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

		if (!ms__lrep_leak_listed(r, x))
			continue;
		fputs(k++ ? ",\n" : "\n", r->out);
		js_leak(r, x);
	}
	fputs("],\n\"groups\":[", r->out);
	g = memscope_leaks_groups(r->l, &n);
	for (i = 0, k = 0; i < n; i++) {
		if (!ms__lrep_listed(r, &g[i]))
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
	return 0;
}
