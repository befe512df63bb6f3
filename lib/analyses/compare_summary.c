/* The summary of a comparison for a person: per device, the op names whose own allocations
 * differ most, and what the CSV's values mean. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/compare.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"

struct memscope_compare_summary {
	int own; /* ranked by what each op allocated itself (the op level alone) */
	struct memscope_compare_device *devs;
	size_t n_devs, cap_devs;
	struct memscope_compare_group *groups;
	size_t n_groups, cap_groups;
	struct u64map group_at; /* device << 32 | name -> its index in groups */
	struct memscope_compare_group *
		*top; /* the top ones, made by memscope_compare_summary_top */
	size_t max_top;
	int has_max_row;
	struct memscope_compare_row max_row; /* the first row of largest |diff| */
};

struct memscope_compare_summary *memscope_compare_summary_new(
	size_t top, const struct memscope_compare_opts *opts)
{
	struct memscope_compare_summary *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->own = opts->level == 0 || opts->level == MEMSCOPE_COMPARE_OP;
	s->max_top = top;
	return s;
}

void memscope_compare_summary_free(struct memscope_compare_summary *s)
{
	if (!s)
		return;
	free(s->devs);
	free(s->groups);
	free(s->top);
	ms__u64map_free(&s->group_at);
	free(s);
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

/* *sum += v, saturating */
static void add_sat(int64_t *sum, int64_t v)
{
	if (__builtin_add_overflow(*sum, v, sum))
		*sum = v < 0 ? INT64_MIN : INT64_MAX;
}

/* The group of r's device and name, added when new. NULL on OOM. */
static struct memscope_compare_group *group_of(
	struct memscope_compare_summary *s, const struct memscope_compare_row *r)
{
	uint64_t key = (uint64_t)(uint32_t)r->device << 32 | r->name;
	struct memscope_compare_group *g;
	size_t at;
	int rc;

	rc = ms__u64map_slot(&s->group_at, key, &s->groups, &s->n_groups, &s->cap_groups,
		sizeof(*s->groups), &at);
	if (rc <= 0)
		return rc ? NULL : &s->groups[at];
	g = &s->groups[at];
	g->device = r->device;
	g->event = r->event;
	g->name = r->name;
	return g;
}

int memscope_compare_summary_add(
	struct memscope_compare_summary *s, const struct memscope_compare_row *r)
{
	struct memscope_compare_device *d;
	struct memscope_compare_group *g;
	int known = !s->own || r->has_own;
	int64_t base = s->own ? r->base_own : r->has_base ? r->base : 0;
	int64_t cmp = s->own ? r->cmp_own : r->has_cmp ? r->cmp : 0;
	int64_t diff = s->own ? r->diff_own : r->diff;

	if (!s->n_devs || s->devs[s->n_devs - 1].device != r->device) {
		if (ms__grow_array(&s->devs, &s->cap_devs, s->n_devs + 1, sizeof(*s->devs)))
			return MEMSCOPE_E_NOMEM;
		memset(&s->devs[s->n_devs], 0, sizeof(*d));
		s->devs[s->n_devs++].device = r->device;
	}
	if (!(g = group_of(s, r)))
		return MEMSCOPE_E_NOMEM;
	d = &s->devs[s->n_devs - 1];
	d->n_matched += r->has_base && r->has_cmp;
	d->n_base_only += r->has_base && !r->has_cmp;
	d->n_cmp_only += !r->has_base && r->has_cmp;
	if (r->diff && (!s->has_max_row || mag(r->diff) > mag(s->max_row.diff))) {
		s->max_row = *r;
		s->has_max_row = 1;
	}
	g->n_rows++;
	if (!known) {
		d->n_unknown++;
		g->n_unknown++;
		return 0;
	}
	add_sat(&d->base, base);
	add_sat(&d->cmp, cmp);
	add_sat(&d->diff, diff);
	add_sat(&g->base, base);
	add_sat(&g->cmp, cmp);
	add_sat(&g->diff, diff);
	if (!diff)
		return 0;
	if (!g->n_differ || diff < g->diff_min)
		g->diff_min = diff;
	if (!g->n_differ || diff > g->diff_max)
		g->diff_max = diff;
	if (g->n_differ < sizeof(g->index) / sizeof(g->index[0]))
		g->index[g->n_differ] = r->index;
	g->n_differ++;
	g->n_differ_matched += r->has_base && r->has_cmp;
	g->n_differ_base_only += r->has_base && !r->has_cmp;
	g->n_differ_cmp_only += !r->has_base && r->has_cmp;
	return 0;
}

const struct memscope_compare_device *memscope_compare_summary_devices(
	const struct memscope_compare_summary *s, size_t *n)
{
	*n = s->n_devs;
	return s->devs;
}

/* larger |diff| first, then the one whose first differing row comes first */
static int cmp_groups(const void *pa, const void *pb)
{
	const struct memscope_compare_group *a = *(const struct memscope_compare_group *const *)pa,
					    *b = *(const struct memscope_compare_group *const *)pb;

	if (mag(a->diff) != mag(b->diff))
		return mag(a->diff) > mag(b->diff) ? -1 : 1;
	return a->index[0] < b->index[0] ? -1 : a->index[0] > b->index[0];
}

const struct memscope_compare_group *const *memscope_compare_summary_top(
	struct memscope_compare_summary *s, size_t *n)
{
	size_t i, k = 0;

	*n = 0;
	free(s->top);
	if (!(s->top = malloc((s->n_groups + 1) * sizeof(*s->top))))
		return NULL;
	for (i = 0; i < s->n_groups; i++)
		if (s->groups[i].diff)
			s->top[k++] = &s->groups[i];
	if (k)
		qsort(s->top, k, sizeof(*s->top), cmp_groups);
	*n = k < s->max_top ? k : s->max_top;
	return (const struct memscope_compare_group *const *)s->top;
}

/* ---- text ---- */

/* A signed byte count as text: a sign when plus is set or v < 0, then memscope_bytes_text;
 * a saturated sum (INT64_MAX, INT64_MIN with saturated set) says that it overflowed. */
static const char *signed_text(char *buf, size_t n, int64_t v, int plus, int saturated)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];

	if (saturated && (v == INT64_MAX || v == INT64_MIN))
		snprintf(buf, n, "%s%s (the total overflowed)",
			v > 0 ? "more than " : "less than -",
			memscope_bytes_text(b, sizeof(b), (uint64_t)INT64_MAX));
	else
		snprintf(buf, n, "%s%s",
			v < 0		? "-"
			: plus && v > 0 ? "+"
					: "",
			memscope_bytes_text(b, sizeof(b), mag(v)));
	return buf;
}

/* "7.63 MiB more" or "512 B less" of a difference; a saturated one says that it overflowed */
static const char *more_text(char *buf, size_t n, int64_t v)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];
	int sat = v == INT64_MAX || v == INT64_MIN;

	snprintf(buf, n, "%s%s %s%s", sat ? "over " : "",
		memscope_bytes_text(b, sizeof(b), sat ? (uint64_t)INT64_MAX : mag(v)),
		v < 0 ? "less" : "more", sat ? " (the total overflowed)" : "");
	return buf;
}

/* Hand line one printf-made line; 0, line's return, or MEMSCOPE_E_NOMEM. */
static int emit_line(int (*line)(void *ctx, const char *text), void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int emit_line(int (*line)(void *ctx, const char *text), void *ctx, const char *fmt, ...)
{
	char small[512], *text = small;
	va_list ap;
	int len, rc;

	va_start(ap, fmt);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (len < 0)
		return MEMSCOPE_E_NOMEM;
	if ((size_t)len >= sizeof(small)) {
		if (!(text = malloc((size_t)len + 1)))
			return MEMSCOPE_E_NOMEM;
		va_start(ap, fmt);
		vsnprintf(text, (size_t)len + 1, fmt, ap);
		va_end(ap);
	}
	rc = line(ctx, text);
	if (text != small)
		free(text);
	return rc;
}

/* the word for n elements of a comparison at level */
static const char *elems(unsigned level, uint64_t n)
{
	if (level == MEMSCOPE_COMPARE_KERNEL)
		return n == 1 ? "kernel launch" : "kernel launches";
	if (level == (MEMSCOPE_COMPARE_OP | MEMSCOPE_COMPARE_KERNEL))
		return n == 1 ? "element" : "elements";
	return n == 1 ? "op" : "ops";
}

/* " only in compare", " in both" or ": 1 in both, 2 only in compare": where a group's rows
 * that differ are */
static const char *where_text(char *buf, size_t n, const struct memscope_compare_group *g)
{
	const uint64_t k[3] = { g->n_differ_matched, g->n_differ_base_only, g->n_differ_cmp_only };
	static const char *const words[3] = { "in both", "only in base", "only in compare" };
	size_t i, at = 0, kinds = (k[0] > 0) + (k[1] > 0) + (k[2] > 0);

	buf[0] = '\0';
	for (i = 0; i < 3 && at < n; i++) {
		if (kinds == 1 && k[i])
			snprintf(buf, n, " %s", words[i]);
		else if (k[i])
			at += (size_t)snprintf(buf + at, n - at, "%s%llu %s", at ? ", " : ": ",
				(unsigned long long)k[i], words[i]);
	}
	return buf;
}

/* "line 24", "lines 24, 46" or "lines 24, 46, 68 and 3 more" (of the output CSV) */
static const char *lines_text(char *buf, size_t n, const struct memscope_compare_group *g)
{
	size_t max = sizeof(g->index) / sizeof(g->index[0]), i, at;
	uint64_t k = g->n_differ < max ? g->n_differ : max;

	at = (size_t)snprintf(buf, n, "line%s ", g->n_differ > 1 ? "s" : "");
	/* the CSV's line: two header lines, then the rows */
	for (i = 0; i < k && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%llu", i ? ", " : "",
			(unsigned long long)g->index[i] + 3);
	if (g->n_differ > k && at < n)
		snprintf(buf + at, n - at, " and %llu more", (unsigned long long)(g->n_differ - k));
	return buf;
}

/* One finding: a name whose rows differ, said in its own words. */
static int group_line(const struct memscope_compare_summary *s,
	const struct memscope_compare_opts *opts, const struct memscope_compare_group *g,
	const struct memscope_strtab *st, const char *output,
	int (*line)(void *ctx, const char *text), void *ctx)
{
	static const char *const figures[] = { "msMemScope's", "--measure delta's",
		"--measure peak's" };
	unsigned level = opts->level ? opts->level : MEMSCOPE_COMPARE_OP;
	int metric = opts->metric <= MEMSCOPE_METRIC_PEAK ? (int)opts->metric : 0;
	char total[MEMSCOPE_BYTES_TEXT_MAX + 48], each[2 * MEMSCOPE_BYTES_TEXT_MAX + 32];
	char where[96], at[96], lo[MEMSCOPE_BYTES_TEXT_MAX + 2], hi[MEMSCOPE_BYTES_TEXT_MAX + 2];
	const char *name = memscope_strtab_str(st, g->name, NULL);
	const char *what = level == (MEMSCOPE_COMPARE_OP | MEMSCOPE_COMPARE_KERNEL)
				   ? (g->event == MEMSCOPE_KIND_KERNEL_LAUNCH ? "kernel " : "op ")
			   : level == MEMSCOPE_COMPARE_KERNEL ? "kernel "
							      : "";
	unsigned one = g->event == MEMSCOPE_KIND_KERNEL_LAUNCH ? MEMSCOPE_COMPARE_KERNEL
							       : MEMSCOPE_COMPARE_OP;

	where_text(where, sizeof(where), g);
	if (g->diff_min == g->diff_max && g->n_differ > 1)
		snprintf(each, sizeof(each), "%llu %s%s, %s each", (unsigned long long)g->n_differ,
			elems(one, g->n_differ), where,
			memscope_bytes_text(lo, sizeof(lo), mag(g->diff_min)));
	else if (g->diff_min == g->diff_max)
		snprintf(each, sizeof(each), "1 %s%s", elems(one, 1), where);
	else
		snprintf(each, sizeof(each), "%llu %s%s, from %s to %s",
			(unsigned long long)g->n_differ, elems(one, g->n_differ), where,
			signed_text(lo, sizeof(lo), g->diff_min, 1, 0),
			signed_text(hi, sizeof(hi), g->diff_max, 1, 0));
	lines_text(at, sizeof(at), g);
	/* the output's rows hold the CSV's values, which the ranking by own bytes is not */
	if (s->own)
		return emit_line(line, ctx,
			"%s%s allocated %s in compare than in base, on device %d (%s; %s of %s "
			"hold%s %s figures)",
			what, name ? name : "", more_text(total, sizeof(total), g->diff),
			(int)g->device, each, at, output ? output : "the output",
			g->n_differ > 1 ? "" : "s", figures[metric]);
	return emit_line(line, ctx,
		"%s%s differs by %s between base and compare, on device %d (%s; %s of %s)", what,
		name ? name : "", signed_text(total, sizeof(total), g->diff, 1, 1), (int)g->device,
		each, at, output ? output : "the output");
}

/* One device's counts: how much matched, and (ranked by own allocations) their total. */
static int device_line(const struct memscope_compare_summary *s, unsigned level,
	const struct memscope_compare_device *d, int (*line)(void *ctx, const char *text),
	void *ctx)
{
	char total[MEMSCOPE_BYTES_TEXT_MAX + 200], more[MEMSCOPE_BYTES_TEXT_MAX + 48];
	size_t at = 0;

	if (!d->n_matched)
		return emit_line(line, ctx,
			"device %d: no %s in both inputs (%llu only in base, %llu only in "
			"compare): "
			"nothing to compare them with",
			(int)d->device, elems(level, 2), (unsigned long long)d->n_base_only,
			(unsigned long long)d->n_cmp_only);
	total[0] = '\0';
	if (s->own && d->diff)
		at = (size_t)snprintf(total, sizeof(total),
			"; ops allocated %s in compare than in base, each allocation counted once",
			more_text(more, sizeof(more), d->diff));
	else if (s->own)
		at = (size_t)snprintf(
			total, sizeof(total), "; ops allocated as much in compare as in base");
	if (d->n_unknown && at < sizeof(total))
		snprintf(total + at, sizeof(total) - at,
			"; %llu unknown (an op END without its START)",
			(unsigned long long)d->n_unknown);
	return emit_line(line, ctx,
		"device %d: %llu %s in both inputs, %llu only in base, %llu only in compare%s",
		(int)d->device, (unsigned long long)d->n_matched, elems(level, d->n_matched),
		(unsigned long long)d->n_base_only, (unsigned long long)d->n_cmp_only, total);
}

/* What the CSV's values are, and (ranked by own allocations) what the ranking is. */
static int meaning_lines(const struct memscope_compare_summary *s,
	const struct memscope_compare_opts *opts, const struct memscope_strtab *st,
	const char *output, int (*line)(void *ctx, const char *text), void *ctx)
{
	char a[MEMSCOPE_BYTES_TEXT_MAX + 2], b[MEMSCOPE_BYTES_TEXT_MAX + 2];
	const struct memscope_compare_row *m = &s->max_row;
	const char *name = memscope_strtab_str(st, m->name, NULL);
	int rc = 0;

	if (!s->own)
		return line(ctx, "these values are msMemScope's, as in the CSV: the size of the "
				 "first framework-pool row at or after each element, often a later "
				 "element's allocation (a kernel launch has no start and end, so "
				 "what it allocated itself cannot be told)");
	rc = line(ctx, "what an op allocated: the bytes of the framework pools (PTA, ATB, "
		       "MindSpore, CUDA_CACHING) it allocated minus freed between its START and "
		       "END, on its thread, outside the ops nested in it");
	if (rc)
		return rc;
	if (opts->metric == MEMSCOPE_METRIC_DELTA)
		return line(ctx, "the CSV's values (--measure delta): what each op allocated "
				 "with the ops nested in it");
	if (opts->metric == MEMSCOPE_METRIC_PEAK)
		return line(ctx, "the CSV's values (--measure peak): the highest used bytes of "
				 "the framework pool between each op's START and END");
	if (!s->has_max_row || (m->has_own && m->diff_own == m->diff))
		return line(ctx, "the CSV's values are msMemScope's: the size of the first "
				 "framework-pool row at or after each op, often a later op's "
				 "allocation");
	return emit_line(line, ctx,
		"the CSV's values are msMemScope's: the size of the first framework-pool row at "
		"or after each op, often a later op's allocation (line %llu of %s: %s at %s, "
		"which itself allocated %s)",
		(unsigned long long)m->index + 3, output ? output : "the output",
		signed_text(a, sizeof(a), m->diff, 1, 0), name ? name : "",
		m->has_own ? more_text(b, sizeof(b), m->diff_own) : "an unknown amount");
}

int memscope_compare_summary_text(struct memscope_compare_summary *s,
	const struct memscope_compare_opts *opts, const struct memscope_compare_stats *stats,
	const struct memscope_strtab *st, const char *output,
	int (*line)(void *ctx, const char *text), void *ctx)
{
	unsigned level = opts->level ? opts->level : MEMSCOPE_COMPARE_OP;
	const struct memscope_compare_group *const *top;
	const struct memscope_compare_device *devs;
	char d[MEMSCOPE_BYTES_TEXT_MAX + 48];
	size_t i, n;
	int rc = 0;

	if (!(top = memscope_compare_summary_top(s, &n)))
		return MEMSCOPE_E_NOMEM;
	for (i = 0; i < n && !rc; i++)
		rc = group_line(s, opts, top[i], st, output, line, ctx);
	if (!n && !rc && s->own)
		rc = line(ctx, "no op allocated a different amount in compare than in base");
	else if (!n && !rc)
		rc = emit_line(
			line, ctx, "no %s differs between base and compare", elems(level, 1));
	devs = memscope_compare_summary_devices(s, &n);
	for (i = 0; i < n && !rc; i++)
		rc = device_line(s, level, &devs[i], line, ctx);
	if (!rc && s->own && stats->base_outside != stats->cmp_outside) {
		int64_t diff;

		if (__builtin_sub_overflow(stats->cmp_outside, stats->base_outside, &diff))
			diff = stats->cmp_outside < 0 ? INT64_MIN : INT64_MAX;
		rc = emit_line(line, ctx,
			"outside every op: %s in compare than in base (pool rows made while no op "
			"ran on their thread)",
			more_text(d, sizeof(d), diff));
	}
	if (!rc)
		rc = meaning_lines(s, opts, st, output, line, ctx);
	if (!rc)
		rc = emit_line(line, ctx, "%llu rows%s%s", (unsigned long long)stats->n_rows,
			output ? " -> " : "", output ? output : "");
	return rc;
}
