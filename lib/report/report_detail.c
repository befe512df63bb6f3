/* The JSON members of the input memscope-report shows in detail (formats/report.md): who held the
 * peak, the leaks and their sites, growth per step, memory held longer than needed,
 * fragmentation, and where the memory goes (a table and, with call stacks, a flame graph). */
#include <stdlib.h>
#include <string.h>

#include "../writers/report.h"
#include "report_impl.h"

/* ,"device":"0" */
static void device(FILE *out, int32_t dev)
{
	char buf[MEMSCOPE_DEVICE_TEXT_MAX];

	fprintf(out, ",\"device\":\"%s\"", memscope_device_text(dev, buf));
}

static void peak(FILE *out, const struct ms__report_detail *d)
{
	long k = ms__report_peak_track(d);
	const struct memscope_step_proc *sp = ms__report_peak_steps(d);
	const struct memscope_peak_track *t;
	uint64_t s = MEMSCOPE_STEP_NONE;
	size_t n;

	if (k < 0) {
		fputs(",\"peak\":null", out);
		return;
	}
	t = memscope_peak_tracks(d->peak, &n) + k;
	if (sp && memscope_steps_count(sp))
		s = memscope_steps_at(sp, t->peak_at);
	fprintf(out, ",\"peak\":{\"input\":%zu,\"pid\":", d->input);
	if (t->pid == MEMSCOPE_ID_NONE)
		fputs("null", out);
	else
		fprintf(out, "%llu", (unsigned long long)t->pid);
	device(out, t->device);
	fprintf(out, ",\"pool\":\"%s\",\"bytes\":%lld,\"ts_ns\":%llu,\"step\":",
		memscope_subtype_name(t->pool), (long long)t->peak,
		(unsigned long long)(t->peak_at.ts_ns - memscope_peak_origin(d->peak, t->src)));
	if (s == MEMSCOPE_STEP_NONE || !s)
		fputs("null", out);
	else
		fprintf(out, "%llu", (unsigned long long)s);
	ms__report_json_owners(out, d, MS__REPORT_MAX_OWNERS, "owners");
	fputc('}', out);
}

/* ,"key":{"count":n,"bytes":N} of the summary's fields, null when unknown. */
static void leak_total(
	FILE *out, const char *key, const struct memscope_summary *s, enum memscope_sum_field count)
{
	int64_t c, b;

	if (!ms__report_num(s, count, &c) || !ms__report_num(s, count + 1, &b)) {
		fprintf(out, ",\"%s\":null", key);
		return;
	}
	fprintf(out, ",\"%s\":{\"count\":%lld,\"bytes\":%lld", key, (long long)c, (long long)b);
}

static const char *kind_name(unsigned kind)
{
	return kind == MEMSCOPE_LEAK_STEP ? "step" : kind == MEMSCOPE_LEAK_MARK ? "mark" : "exit";
}

/* One site: a report group of the leaks. */
static void site(FILE *out, const struct ms__report_detail *d, const struct memscope_leak_group *g,
	size_t id)
{
	const struct memscope_leak *x = memscope_leaks_get(d->leaks, g->first);

	fprintf(out, "%s{\"id\":%zu,\"kind\":\"%s\",\"input\":%zu,\"pool\":\"%s\",\"count\":%llu",
		id ? "," : "", id, kind_name(g->kind), d->input, memscope_subtype_name(g->pool),
		(unsigned long long)g->n);
	ms__json_bytes(out, "bytes", g->bytes);
	fputs(",\"op\":", out);
	ms__json_id_or_null(out, d->st, g->op);
	fputs(",\"owner\":", out);
	ms__json_id_or_null(out, d->st, g->owner);
	fputs(",\"first_step\":", out);
	if (x->alloc_step == MEMSCOPE_LEAK_NO_STEP)
		fputs("null", out);
	else
		fprintf(out, "%llu", (unsigned long long)x->alloc_step);
	fprintf(out, ",\"ts_ns\":%llu,\"ranks\":1,\"stack\":",
		(unsigned long long)(x->blk.alloc_ts_ns -
				     memscope_leaks_origin(d->leaks, 0, x->blk.file)));
	ms__report_json_stack(out, d->st, g->stack_py, g->stack_c);
	fputc('}', out);
}

static void leaks(FILE *out, const struct memscope_report *r)
{
	const struct ms__report_detail *d = r->detail;
	const struct memscope_summary *s = &r->rows[MEMSCOPE_REPORT_RUN][d->input];
	enum memscope_leaks_unchecked why = memscope_leaks_checked(d->leaks, MEMSCOPE_LEAK_STEP, 0);
	size_t n, ng, i;
	size_t *sites = ms__report_sites(d, &n);
	const struct memscope_leak_group *g = memscope_leaks_groups(d->leaks, &ng);
	uint64_t first = MEMSCOPE_LEAK_NO_STEP;
	char say[300];

	fprintf(out, ",\"leaks\":{\"end\":\"%s\",\"steps_checked\":%s,\"why\":",
		memscope_leaks_end_name(memscope_leaks_end_of(d->leaks, 0)),
		why == MEMSCOPE_LEAKS_CHECKED ? "true" : "false");
	ms__json_cstr(out, why == MEMSCOPE_LEAKS_CHECKED
				   ? ""
				   : memscope_leaks_unchecked_say(
					     d->leaks, MEMSCOPE_LEAK_STEP, 0, say, sizeof(say)));
	leak_total(out, "exit", s, MEMSCOPE_SUM_EXIT_LEAKS);
	if (s->has & UINT64_C(1) << MEMSCOPE_SUM_EXIT_LEAKS)
		fputc('}', out);
	for (i = 0; i < ng; i++)
		if (g[i].kind == MEMSCOPE_LEAK_STEP &&
			memscope_leaks_get(d->leaks, g[i].first)->alloc_step < first)
			first = memscope_leaks_get(d->leaks, g[i].first)->alloc_step;
	leak_total(out, "step", s, MEMSCOPE_SUM_STEP_LEAKS);
	if (s->has & UINT64_C(1) << MEMSCOPE_SUM_STEP_LEAKS) {
		if (first == MEMSCOPE_LEAK_NO_STEP)
			fputs(",\"first_step\":null}", out);
		else
			fprintf(out, ",\"first_step\":%llu}", (unsigned long long)first);
	}
	fputs(",\"sites\":[", out);
	for (i = 0; sites && i < n; i++)
		site(out, d, &g[sites[i]], i);
	fputs("]}", out);
	free(sites);
}

static void growth(FILE *out, const struct memscope_report *r)
{
	const struct memscope_summary *s = &r->rows[MEMSCOPE_REPORT_RUN][r->detail->input];
	int64_t steps = 0;

	fputs(",\"growth\":{", out);
	ms__report_num(s, MEMSCOPE_SUM_STEPS, &steps);
	fputs("\"per_step_bytes\":", out);
	if (s->has & UINT64_C(1) << MEMSCOPE_SUM_GROWTH_PER_STEP)
		fprintf(out, "%lld", (long long)s->num[MEMSCOPE_SUM_GROWTH_PER_STEP]);
	else
		fputs("null", out);
	fprintf(out, ",\"steps\":%lld}", (long long)steps);
}

static int cmp_ineff(const void *pa, const void *pb)
{
	const struct memscope_ineff_block *a = *(const struct memscope_ineff_block *const *)pa;
	const struct memscope_ineff_block *b = *(const struct memscope_ineff_block *const *)pb;
	int c = MS__CMP(b->size, a->size);

	return c ? c : MS__CMP(a->alloc_seq, b->alloc_seq);
}

/* The largest flagged blocks: "top":[...]. */
static void ineff_top(FILE *out, const struct ms__report_detail *d)
{
	size_t n = memscope_inefficient_count(d->ineff), i, k;
	const struct memscope_ineff_block **b = n ? malloc(n * sizeof(*b)) : NULL;

	fputs(",\"top\":[", out);
	for (i = 0; b && i < n; i++)
		b[i] = memscope_inefficient_get(d->ineff, i);
	if (b)
		ms__qsort(b, n, sizeof(*b), cmp_ineff);
	for (i = 0; b && i < n && i < MS__REPORT_MAX_INEFF; i++) {
		fprintf(out, "%s{\"type\":\"", i ? "," : "");
		for (k = 0; k < b[i]->n_types; k++)
			fprintf(out, "%s%s", k ? "," : "",
				memscope_ineff_type_name(b[i]->order[k]));
		fprintf(out, "\",\"bytes\":%lld,\"pool\":\"%s\",\"op\":", (long long)b[i]->size,
			memscope_subtype_name(b[i]->pool));
		ms__json_id_or_null(out, d->st, b[i]->alloc.op);
		fputs(",\"owner\":", out);
		ms__json_id_or_null(out, d->st, b[i]->owner);
		fputs(",\"stack\":", out);
		ms__report_json_stack(out, d->st, b[i]->stack_py, b[i]->stack_c);
		fputc('}', out);
	}
	fputc(']', out);
	free(b);
}

static void inefficient(FILE *out, const struct memscope_report *r)
{
	int64_t blocks, bytes;
	size_t checked = ms__report_ineff_sum(r, &blocks, &bytes);

	fprintf(out, ",\"inefficient\":{\"checked\":%s,\"why\":\"%s\"", checked ? "true" : "false",
		checked ? "" : "no ACCESS rows");
	if (!checked) {
		fputs(",\"blocks\":null,\"bytes\":null,\"top\":[]}", out);
		return;
	}
	fprintf(out, ",\"blocks\":%lld,\"bytes\":%lld,\"inputs_checked\":%zu", (long long)blocks,
		(long long)bytes, checked);
	ineff_top(out, r->detail);
	fputc('}', out);
}

static void fragmentation(FILE *out, const struct memscope_report *r)
{
	const struct ms__report_frag *f = &r->frag;

	if (!f->checked) {
		fputs(",\"fragmentation\":{\"checked\":false,\"why\":\"no pool totals\","
		      "\"reserved_bytes\":null,\"allocated_bytes\":null,\"ts_ns\":null,"
		      "\"gap_bytes\":null}",
			out);
		return;
	}
	fprintf(out,
		",\"fragmentation\":{\"checked\":true,\"why\":\"\",\"source\":\"%s\","
		"\"reserved_bytes\":%lld,\"allocated_bytes\":%lld,\"ts_ns\":%llu,\"gap_bytes\":",
		f->source, (long long)f->reserved, (long long)f->allocated,
		(unsigned long long)f->ts_ns);
	if (f->gap >= 0)
		fprintf(out, "%lld}", (long long)f->gap);
	else
		fputs("null}", out);
}

void ms__report_json_detail(FILE *out, const struct memscope_report *r)
{
	const struct ms__report_detail *d = r->detail;

	if (!d) {
		fputs(",\"peak\":null,\"leaks\":null,\"growth\":null,\"inefficient\":null,"
		      "\"fragmentation\":null,\"timeline\":null,\"steps\":[],\"where\":null",
			out);
		return;
	}
	peak(out, d);
	leaks(out, r);
	growth(out, r);
	inefficient(out, r);
	fragmentation(out, r);
	ms__report_json_timeline(out, d);
	ms__report_json_steps(out, d);
	ms__report_json_where(out, d);
}
