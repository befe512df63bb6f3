/* memscope-report's verdict lines, the first thing a user reads: each finding's figure and where
 * it is (the peak and who held it, leaks and their largest site, growth per step, memory held
 * longer than needed, fragmentation, clocks, ranks, the baseline), and what could not be
 * checked. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report_impl.h"

/* Where a leak group is, in words: "op aten._to_copy", "owner PTA@model", "at train.py(12):
 * step", "in f (lib.so)", "no op, owner or stack". Into buf. */
static const char *site_text(const struct ms__report_detail *d, const struct memscope_leak_group *g,
	char *buf, size_t size)
{
	char op[256];
	size_t n = 0;
	const uint32_t *f;

	if (g->op)
		snprintf(buf, size, "op %s",
			ms__report_op_text(
				memscope_strtab_str(d->st, g->op, NULL), op, sizeof(op)));
	else if (g->owner)
		snprintf(buf, size, "owner %s", memscope_strtab_str(d->st, g->owner, NULL));
	else if ((f = memscope_strtab_stack(d->st, g->stack_py, &n)) && n)
		snprintf(buf, size, "at %s", memscope_strtab_str(d->st, f[0], NULL));
	else if ((f = memscope_strtab_stack(d->st, g->stack_c, &n)) && n)
		snprintf(buf, size, "in %s", memscope_strtab_str(d->st, f[0], NULL));
	else
		snprintf(buf, size, "site (no op, owner or stack)");
	return buf;
}

/* ------------------------------------------------------------------------------------------ */
/* verdicts */

static struct ms__report_verdict *verdict(struct memscope_report *r, const char *id,
	const char *level, const char *section, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static struct ms__report_verdict *verdict(struct memscope_report *r, const char *id,
	const char *level, const char *section, const char *fmt, ...)
{
	struct ms__report_verdict *v = &r->verdicts[r->n_verdicts++];
	va_list ap;

	memset(v, 0, sizeof(*v));
	v->id = id, v->level = level, v->section = section;
	va_start(ap, fmt);
	vsnprintf(v->text, sizeof(v->text), fmt, ap);
	va_end(ap);
	return v;
}

/* " (NAME)" of the detail input, or " (k of n inputs)". */
static void where_text(const struct memscope_report *r, size_t k, char *buf, size_t size)
{
	size_t n = r->n_rows[MEMSCOPE_REPORT_RUN];

	if (n == 1)
		snprintf(buf, size, " (%s)",
			r->rows[MEMSCOPE_REPORT_RUN][0].str[MEMSCOPE_SUM_INPUT]);
	else
		snprintf(buf, size, " (%zu of %zu inputs)", k, n);
}

/* "PTA, device 0" of a track. */
static const char *track_text(const struct memscope_peak_track *t, char *buf, size_t size)
{
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];

	snprintf(buf, size, "%s, device %s", memscope_subtype_name(t->pool),
		memscope_device_text(t->device, dev));
	return buf;
}

static void peak_verdict(struct memscope_report *r)
{
	const struct ms__report_detail *d = r->detail;
	long k = ms__report_peak_track(d);
	const struct memscope_step_proc *sp = ms__report_peak_steps(d);
	const struct memscope_peak_track *t;
	const struct memscope_peak_owner *own;
	char b[MEMSCOPE_BYTES_TEXT_MAX], ob[MEMSCOPE_BYTES_TEXT_MAX],
		when[MEMSCOPE_SECONDS_TEXT_MAX];
	char tr[64], step[48] = "", who[400] = "", name[300], in[300];
	size_t n;
	uint64_t s;
	struct ms__report_verdict *v;

	if (k < 0) {
		verdict(r, "peak", "unchecked", "timeline", "peak: no allocations with a size");
		return;
	}
	t = memscope_peak_tracks(d->peak, &n) + k;
	own = memscope_peak_owners(d->peak, &n);
	if (sp && memscope_steps_count(sp) &&
		(s = memscope_steps_at(sp, t->peak_at)) != MEMSCOPE_STEP_NONE && s)
		snprintf(step, sizeof(step), " in step %llu", (unsigned long long)s);
	if (n) {
		const char *nm = memscope_strtab_str(d->st, own[0].name, NULL);

		if (own[0].by == MEMSCOPE_PEAK_BY_OP)
			nm = ms__report_op_text(nm, name, sizeof(name));
		snprintf(who, sizeof(who), ": %s held %s of it", nm,
			memscope_bytes_text(ob, sizeof(ob), own[0].bytes));
	}
	where_text(r, 1, in, sizeof(in));
	if (r->n_rows[MEMSCOPE_REPORT_RUN] > 1)
		snprintf(in, sizeof(in), " (%s)",
			r->rows[MEMSCOPE_REPORT_RUN][d->input].str[MEMSCOPE_SUM_INPUT]);
	v = verdict(r, "peak", "info", "timeline", "peak %s (%s) at %s%s%s%s",
		memscope_bytes_text(b, sizeof(b), (uint64_t)t->peak), track_text(t, tr, sizeof(tr)),
		memscope_seconds_text(when, sizeof(when), t->peak_at.ts_ns,
			memscope_peak_origin(d->peak, t->src)),
		step, who, in);
	v->has_bytes = 1, v->bytes = t->peak;
}

/* The pools of kind's totals, those counted (not HAL beside a pool inside it): "PTA, ATB". */
static void pools_text(const struct memscope_leaks *l, unsigned kind, char *buf, size_t size)
{
	struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
	size_t n = memscope_leaks_totals(l, kind, 0, t), i, at = 0;
	int nested = memscope_leaks_nested(l, kind, 0);

	buf[0] = 0;
	for (i = 0; i < n; i++) {
		if (nested && t[i].pool < 64 &&
			(MEMSCOPE_POOL_BIT(t[i].pool) & MEMSCOPE_POOLS_OUTER))
			continue;
		ms__text_put(
			buf, size, &at, "%s%s", at ? ", " : "", memscope_subtype_name(t[i].pool));
	}
}

/* The largest site of kind in a counted pool, as text: ", the largest op aten.mm 7.63 MiB in 2
 * blocks". "" when none. */
static void largest_text(
	const struct ms__report_detail *d, unsigned kind, int several, char *buf, size_t size)
{
	size_t n, i, ng;
	size_t *s = ms__report_sites(d, &n);
	const struct memscope_leak_group *g = memscope_leaks_groups(d->leaks, &ng);
	int nested = memscope_leaks_nested(d->leaks, kind, 0);
	char b[MEMSCOPE_BYTES_TEXT_MAX], where[400];

	buf[0] = 0;
	for (i = 0; s && i < n; i++) {
		const struct memscope_leak_group *x = &g[s[i]];

		if (x->kind != kind || x->src ||
			(nested && x->pool < 64 &&
				(MEMSCOPE_POOL_BIT(x->pool) & MEMSCOPE_POOLS_OUTER)))
			continue;
		snprintf(buf, size, ", the largest%s %s %s in %llu block%s",
			several ? " in the peak's input" : "",
			site_text(d, x, where, sizeof(where)),
			memscope_bytes_text(b, sizeof(b), x->bytes), (unsigned long long)x->n,
			x->n == 1 ? "" : "s");
		break;
	}
	free(s);
}

/* The run's leaks of kind: count, bytes, inputs with some; 0 when no input checked them. */
static int leak_sum(const struct memscope_report *r, enum memscope_sum_field count, int64_t *n,
	int64_t *bytes, size_t *inputs)
{
	size_t i;
	int any = 0;

	*n = *bytes = 0, *inputs = 0;
	for (i = 0; i < r->n_rows[MEMSCOPE_REPORT_RUN]; i++) {
		const struct memscope_summary *s = &r->rows[MEMSCOPE_REPORT_RUN][i];
		int64_t c, b;

		if (!ms__report_num(s, count, &c) || !ms__report_num(s, count + 1, &b))
			continue;
		any = 1;
		*n += c;
		*bytes = *bytes > INT64_MAX - b ? INT64_MAX : *bytes + b;
		*inputs += c > 0;
	}
	return any;
}

/* "3.51 MiB in 3 blocks leaked from step to step from step 2 (PTA), the largest ..." */
static void leak_part(const struct memscope_report *r, unsigned kind, int64_t n, int64_t bytes,
	char *buf, size_t size)
{
	const struct ms__report_detail *d = r->detail;
	char b[MEMSCOPE_BYTES_TEXT_MAX], pools[200], largest[500], from[48] = "";
	size_t i, ng;
	const struct memscope_leak_group *g = memscope_leaks_groups(d->leaks, &ng);
	uint64_t first = MEMSCOPE_LEAK_NO_STEP;

	pools_text(d->leaks, kind, pools, sizeof(pools));
	largest_text(d, kind, r->n_rows[MEMSCOPE_REPORT_RUN] > 1, largest, sizeof(largest));
	for (i = 0; kind == MEMSCOPE_LEAK_STEP && i < ng; i++) {
		const struct memscope_leak *x = memscope_leaks_get(d->leaks, g[i].first);

		if (g[i].kind == kind && x->alloc_step < first)
			first = x->alloc_step;
	}
	if (first != MEMSCOPE_LEAK_NO_STEP)
		snprintf(from, sizeof(from), " from step %llu", (unsigned long long)first);
	snprintf(buf, size, "%s in %lld block%s %s%s%s%s%s%s",
		memscope_bytes_text(b, sizeof(b), (uint64_t)bytes), (long long)n, n == 1 ? "" : "s",
		kind == MEMSCOPE_LEAK_STEP
			? "leaked from step to step"
			: memscope_leaks_end_text(memscope_leaks_end_of(d->leaks, 0)),
		from, pools[0] ? " (" : "", pools, pools[0] ? ")" : "", largest);
}

static void leaks_verdict(struct memscope_report *r)
{
	const struct ms__report_detail *d = r->detail;
	int64_t en, eb, sn, sb;
	size_t ei, si;
	int exit_ok = leak_sum(r, MEMSCOPE_SUM_EXIT_LEAKS, &en, &eb, &ei);
	int step_ok = leak_sum(r, MEMSCOPE_SUM_STEP_LEAKS, &sn, &sb, &si);
	int at_exit = memscope_leaks_end_of(d->leaks, 0) == MEMSCOPE_LEAKS_END_EXIT;
	char in[300], main_part[800], also[800] = "";
	struct ms__report_verdict *v;

	if (!exit_ok) {
		verdict(r, "leaks", "unchecked", "leaks", "leaks: not checked (%s)",
			memscope_leaks_unchecked_text(
				memscope_leaks_checked(d->leaks, MEMSCOPE_LEAK_EXIT, 0)));
		return;
	}
	where_text(r, sn ? si : ei, in, sizeof(in));
	if (sn) {
		leak_part(r, MEMSCOPE_LEAK_STEP, sn, sb, main_part, sizeof(main_part));
		if (en) {
			char b[MEMSCOPE_BYTES_TEXT_MAX];

			snprintf(also, sizeof(also), "; also %s in %lld block%s %s",
				memscope_bytes_text(b, sizeof(b), (uint64_t)eb), (long long)en,
				en == 1 ? "" : "s",
				memscope_leaks_end_text(memscope_leaks_end_of(d->leaks, 0)));
		}
	} else if (en) {
		leak_part(r, MEMSCOPE_LEAK_EXIT, en, eb, main_part, sizeof(main_part));
		snprintf(also, sizeof(also), "; %s",
			step_ok ? "none from step to step" : "step leaks not checked");
	} else {
		snprintf(main_part, sizeof(main_part), "none %s%s",
			memscope_leaks_end_text(memscope_leaks_end_of(d->leaks, 0)),
			step_ok ? ", none from step to step" : "; step leaks not checked");
		in[0] = 0;
	}
	v = verdict(r, "leaks",
		sn || (en && at_exit) ? "bad"
		: en		      ? "warn"
				      : "ok",
		"leaks", "leaks: %s%s%s", main_part, also, in);
	v->has_bytes = v->has_count = 1;
	v->bytes = sn ? sb : eb;
	v->count = (uint64_t)(sn ? sn : en);
}

static void growth_verdict(struct memscope_report *r)
{
	const struct memscope_summary *s = &r->rows[MEMSCOPE_REPORT_RUN][r->detail->input];
	long k = ms__report_peak_track(r->detail);
	int64_t g, steps = 0, peak = 0;
	char b[MEMSCOPE_BYTES_TEXT_MAX], tr[64] = "";
	size_t n;
	struct ms__report_verdict *v;

	ms__report_num(s, MEMSCOPE_SUM_STEPS, &steps);
	ms__report_num(s, MEMSCOPE_SUM_PEAK_BYTES, &peak);
	if (!ms__report_num(s, MEMSCOPE_SUM_GROWTH_PER_STEP, &g)) {
		if (steps)
			verdict(r, "growth", "unchecked", "steps",
				"growth: not checked (%lld step%s: growth per step needs 3 ended)",
				(long long)steps, steps == 1 ? "" : "s");
		else
			verdict(r, "growth", "unchecked", "steps",
				"growth: not checked (no steps)");
		return;
	}
	if (k >= 0)
		track_text(memscope_peak_tracks(r->detail->peak, &n) + k, tr, sizeof(tr));
	/* worth a finding: the steps after the warm-up added 1% of the peak or more */
	if (g > 0 && steps > 2 && g * (steps - 2) >= peak / 100)
		v = verdict(r, "growth", "bad", "steps",
			"growth: %s more live per step from step 2 on (%s, %lld steps)",
			memscope_bytes_text(b, sizeof(b), (uint64_t)g), tr, (long long)steps);
	else
		v = verdict(r, "growth", "ok", "steps",
			"growth: none worth a look (%s%s per step, %s, %lld steps)",
			g < 0 ? "-" : "",
			memscope_bytes_text(b, sizeof(b), (uint64_t)(g < 0 ? -g : g)), tr,
			(long long)steps);
	v->has_bytes = 1, v->bytes = g;
}

static void inefficient_verdict(struct memscope_report *r)
{
	const struct memscope_inefficient *a = r->detail->ineff;
	const struct memscope_inefficient_stats *st = memscope_inefficient_stats(a);
	char b[MEMSCOPE_BYTES_TEXT_MAX], tb[MEMSCOPE_BYTES_TEXT_MAX], types[300] = "", in[64] = "";
	int64_t blocks, bytes;
	size_t at = 0, n = r->n_rows[MEMSCOPE_REPORT_RUN];
	size_t checked = ms__report_ineff_sum(r, &blocks, &bytes);
	unsigned i;
	struct ms__report_verdict *v;

	if (!checked) {
		verdict(r, "inefficient", "unchecked", "inefficient",
			"inefficient: not checked (no ACCESS rows)");
		return;
	}
	/* the types of one input; the inputs checked of several */
	for (i = 0; n == 1 && i < 3; i++)
		if (st->n_type[i])
			ms__text_put(types, sizeof(types), &at, "%s%s %s", at ? ", " : " (",
				memscope_ineff_type_name(1u << i),
				memscope_bytes_text(tb, sizeof(tb), st->type_bytes[i]));
	if (at)
		ms__text_put(types, sizeof(types), &at, ")");
	if (n > 1)
		snprintf(in, sizeof(in), " (%zu of %zu inputs checked)", checked, n);
	if (blocks)
		v = verdict(r, "inefficient", "warn", "inefficient",
			"inefficient: %s in %lld block%s held longer than needed%s%s",
			memscope_bytes_text(b, sizeof(b), (uint64_t)bytes), (long long)blocks,
			blocks == 1 ? "" : "s", types, in);
	else
		v = verdict(r, "inefficient", "ok", "inefficient",
			"inefficient: no memory held longer than needed%s", in);
	v->has_bytes = v->has_count = 1;
	v->bytes = bytes, v->count = (uint64_t)blocks;
}

/* The highest reserved sample of the profiler's memory_record for track k into r->frag. */
static void frag_samples(struct memscope_report *r, long k)
{
	const struct ms__report_detail *d = r->detail;
	long c = memscope_peak_samples_of(d->peak, (size_t)k);
	const struct memscope_counter_track *ct;
	struct memscope_counter_iter it;
	struct memscope_counter_sample s;
	size_t n;
	unsigned both = 1u << MEMSCOPE_CTR_TOTAL | 1u << MEMSCOPE_CTR_USED;

	if (c < 0)
		return;
	ct = memscope_peak_counters(d->peak, &n) + c;
	memscope_counter_iter_init(&it, ct);
	while (memscope_counter_next(&it, &s))
		if ((s.has & both) == both &&
			(!r->frag.checked || s.v[MEMSCOPE_CTR_TOTAL] > r->frag.reserved)) {
			r->frag.checked = 1;
			r->frag.source = "memory_record";
			r->frag.reserved = s.v[MEMSCOPE_CTR_TOTAL];
			r->frag.allocated = s.v[MEMSCOPE_CTR_USED];
			r->frag.ts_ns = s.ts_ns - memscope_peak_origin(d->peak, ct->src);
		}
}

static void fragmentation_verdict(struct memscope_report *r)
{
	const struct ms__report_detail *d = r->detail;
	long k = ms__report_peak_track(d);
	const struct memscope_peak_track *t;
	const struct ms__rblocks_key *key;
	char rb[MEMSCOPE_BYTES_TEXT_MAX], ab[MEMSCOPE_BYTES_TEXT_MAX], gb[MEMSCOPE_BYTES_TEXT_MAX];
	char when[MEMSCOPE_SECONDS_TEXT_MAX], tr[64], range[120] = "";
	int64_t gap;
	size_t n;
	struct ms__report_verdict *v;

	r->frag.gap = -1;
	if (k >= 0) {
		t = memscope_peak_tracks(d->peak, &n) + k;
		frag_samples(r, k);
		key = ms__rblocks_key(d->blocks, t->pid, t->device, t->pool);
		if (key && key->gap_at_end >= 0) {
			r->frag.gap = key->gap_at_end;
			snprintf(range, sizeof(range),
				"; the largest free range of a segment %s at the end",
				memscope_bytes_text(gb, sizeof(gb), (uint64_t)key->gap_at_end));
		}
		if (!r->frag.checked && key && key->has_total) {
			r->frag.checked = 1;
			r->frag.source = "pool totals";
			r->frag.reserved = key->total, r->frag.allocated = key->used;
			r->frag.ts_ns = key->total_ts_ns - memscope_peak_origin(d->peak, t->src);
		} else if (!r->frag.checked && key && key->has_outer) {
			r->frag.checked = 1;
			r->frag.source = t->pool == MEMSCOPE_SUB_CUDA_CACHING ? "segments" : "HAL";
			r->frag.reserved = key->outer_at, r->frag.allocated = key->inner_max;
			r->frag.ts_ns =
				key->inner_max_ts_ns - memscope_peak_origin(d->peak, t->src);
		}
	}
	if (!r->frag.checked) {
		verdict(r, "fragmentation", "unchecked", "timeline",
			"fragmentation: not checked (no reserved and allocated pool totals)");
		return;
	}
	gap = r->frag.reserved - r->frag.allocated;
	v = verdict(r, "fragmentation",
		gap > 0 && gap >= r->frag.reserved / 4 && gap >= (1 << 20) ? "warn" : "ok",
		"timeline",
		"fragmentation: %s reserved but unused of %s reserved (%s allocated) at %s (%s)%s",
		memscope_bytes_text(gb, sizeof(gb), (uint64_t)(gap > 0 ? gap : 0)),
		memscope_bytes_text(rb, sizeof(rb), (uint64_t)r->frag.reserved),
		memscope_bytes_text(ab, sizeof(ab), (uint64_t)r->frag.allocated),
		memscope_seconds_text(when, sizeof(when), r->frag.ts_ns, 0),
		track_text(memscope_peak_tracks(d->peak, &n) + k, tr, sizeof(tr)), range);
	v->has_bytes = 1, v->bytes = gap > 0 ? gap : 0;
}

/* A verdict of the ranks' (ranks, baseline) as a line. */
static void ranks_line(struct memscope_report *r, const char *id, const char *section,
	const struct ms__ranks_verdict *rv)
{
	struct ms__report_verdict *v = verdict(r, id, rv->level, section, "%s", rv->text);

	v->has_bytes = rv->has_bytes, v->bytes = rv->bytes;
	v->has_count = rv->has_count, v->count = rv->count;
}

/* Keep "what: why" among the unchecked. 0 or NOMEM. */
static int unchecked(struct memscope_report *r, const char *what, const char *why)
{
	char **u = realloc(r->unchecked, (r->n_unchecked + 1) * sizeof(*u));

	if (!u)
		return MEMSCOPE_E_NOMEM;
	r->unchecked = u;
	if (asprintf(&u[r->n_unchecked], "%s: %s", what, why) < 0)
		return MEMSCOPE_E_NOMEM;
	r->n_unchecked++;
	return 0;
}

/* What the detail input could not be checked for, and why. 0 or NOMEM. */
static int unchecked_list(struct memscope_report *r)
{
	const struct ms__report_detail *d = r->detail;
	char why[300];
	int rc = 0;

	if (memscope_leaks_checked(d->leaks, MEMSCOPE_LEAK_EXIT, 0) != MEMSCOPE_LEAKS_CHECKED)
		rc = unchecked(r, "exit leaks",
			memscope_leaks_unchecked_say(
				d->leaks, MEMSCOPE_LEAK_EXIT, 0, why, sizeof(why)));
	if (!rc &&
		memscope_leaks_checked(d->leaks, MEMSCOPE_LEAK_STEP, 0) != MEMSCOPE_LEAKS_CHECKED)
		rc = unchecked(r, "step leaks",
			memscope_leaks_unchecked_say(
				d->leaks, MEMSCOPE_LEAK_STEP, 0, why, sizeof(why)));
	if (!rc && !memscope_inefficient_input_checked(d->ineff, 0))
		rc = unchecked(r, "inefficient", "no ACCESS rows (memory accesses)");
	if (!rc && !r->frag.checked)
		rc = unchecked(r, "fragmentation",
			"no pool totals (the profiler's memory_record, or total and used attrs)");
	if (!rc && !d->blocks->has_stacks)
		rc = unchecked(r, "call stacks", "none recorded: memory is shown by owner or op");
	return rc;
}

static void unchecked_verdict(struct memscope_report *r)
{
	char text[600];
	size_t i, at = 0;

	if (!r->n_unchecked) {
		verdict(r, "unchecked", "ok", "unchecked", "everything was checked");
		return;
	}
	for (i = 0; i < r->n_unchecked; i++) {
		/* "what: why: more" -> "what (why)" */
		const char *u = r->unchecked[i], *c1 = strstr(u, ": "), *c2 = c1 ? c1 + 2 : u;
		size_t why = strcspn(c2, ":(");

		while (why && c2[why - 1] == ' ')
			why--;
		ms__text_put(text, sizeof(text), &at, "%s%.*s (%.*s)", i ? ", " : "",
			(int)(c1 ? c1 - u : (long)strlen(u)), u, (int)why, c2);
	}
	verdict(r, "unchecked", "unchecked", "unchecked", "not checked: %s", text);
}

/* With several inputs, the lines of the detail input alone say so: "growth in the peak's input:
 * ...". */
static void of_peak_input(struct memscope_report *r)
{
	static const char *const ids[] = { "growth", "fragmentation" };
	static const char in[] = " in the peak's input";
	size_t i, k, at, len;

	for (i = 0; r->n_rows[MEMSCOPE_REPORT_RUN] > 1 && i < r->n_verdicts; i++)
		for (k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
			char *t = r->verdicts[i].text;

			if (strcmp(r->verdicts[i].id, ids[k]) ||
				(at = strlen(ids[k])) >= strlen(t) ||
				(len = strlen(t)) + sizeof(in) > sizeof(r->verdicts[i].text))
				continue;
			memmove(t + at + sizeof(in) - 1, t + at, len - at + 1);
			memcpy(t + at, in, sizeof(in) - 1);
		}
}

/* The findings first: the verdicts of level "bad" move ahead of the others, each group keeping
 * its order (formats/report.md "verdicts"). */
static void findings_first(struct memscope_report *r)
{
	struct ms__report_verdict *v = r->verdicts, tmp;
	size_t i, j, n_bad = 0;

	for (i = 0; i < r->n_verdicts; i++) {
		if (strcmp(v[i].level, "bad"))
			continue;
		tmp = v[i];
		for (j = i; j > n_bad; j--)
			v[j] = v[j - 1];
		v[n_bad++] = tmp;
	}
}

int ms__report_verdicts(struct memscope_report *r)
{
	struct ms__ranks_verdict rv;
	char note[600];

	r->n_verdicts = 0;
	if (r->detail) {
		peak_verdict(r);
		leaks_verdict(r);
		growth_verdict(r);
		inefficient_verdict(r);
		fragmentation_verdict(r);
		if (memscope_peak_clock_note(r->detail->peak, 0, note, sizeof(note)))
			verdict(r, "clocks", "warn", "timeline", "clocks: %s", note);
	} else
		verdict(r, "peak", "unchecked", "timeline", "no input could be read");
	memset(&rv, 0, sizeof(rv));
	if (ms__ranks_verdict(r->ranks, &rv))
		ranks_line(r, "ranks", "ranks", &rv);
	memset(&rv, 0, sizeof(rv));
	if (ms__baseline_verdict(r->ranks, &rv))
		ranks_line(r, "baseline", "baseline", &rv);
	if (r->detail && unchecked_list(r))
		return MEMSCOPE_E_NOMEM;
	of_peak_input(r);
	unchecked_verdict(r);
	findings_first(r);
	return 0;
}
