/* The reference's memory_compare CSV (its two header lines and one row per aligned pair), and the
 * summary of a comparison as text for a person. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/compare.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"

int memscope_compare_csv_header(FILE *out)
{
	static const char h[] = ",,,Base,Compare\nEvent,Name,Device Id,Allocated Memory(byte),"
				"Allocated Memory(byte),Diff Memory(byte)\n";

	return fputs(h, out) < 0 ? MEMSCOPE_E_IO : 0;
}

int memscope_compare_csv_row(
	FILE *out, const struct memscope_strtab *st, const struct memscope_compare_row *row)
{
	char base[24] = "N/A", cmp[24] = "N/A";
	const char *name = memscope_strtab_str(st, row->name, NULL);
	/* as the reference, but a name that would split the row is quoted (inner quotes as is) */
	const char *q = name && strpbrk(name, ",\r\n") ? "\"" : "";

	if (row->has_base)
		base[fmt_i64(base, row->base)] = '\0';
	if (row->has_cmp)
		cmp[fmt_i64(cmp, row->cmp)] = '\0';
	return fprintf(out, "%s,%s%s%s,%d,%s,%s,%lld\n", memscope_kind_name(row->event), q,
		       name ? name : "", q, (int)row->device, base, cmp, (long long)row->diff) < 0
		       ? MEMSCOPE_E_IO
		       : 0;
}

/* the reference's values at the op level, where the summary adds the delta values beside them */
static int delta_beside(const struct memscope_compare_opts *opts)
{
	return opts->metric == MEMSCOPE_METRIC_REFERENCE &&
	       (opts->level == 0 || opts->level == MEMSCOPE_COMPARE_OP);
}

const char *memscope_compare_meaning(const struct memscope_compare_opts *opts)
{
	switch (opts->metric) {
	case MEMSCOPE_METRIC_DELTA:
		return "values (--measure delta): the bytes each op allocated minus freed in the "
		       "PTA, ATB and MindSpore pools between its START and END (a block whose "
		       "MALLOC names its op counts for that op)";
	case MEMSCOPE_METRIC_PEAK:
		return "values (--measure peak): the highest used bytes of the framework pool "
		       "between each op's START and END";
	default:
		break;
	}
	if (delta_beside(opts))
		return "values (the reference's rule): the size of the first framework-pool row "
		       "at or after the op, often a later op's allocation; by delta: what the op "
		       "itself allocated minus freed (--measure delta ranks by it)";
	return "values (the reference's rule): the size of the first framework-pool row at or "
	       "after the element, often a later element's allocation";
}

/* A signed byte count as text: a sign when plus is set or v < 0, then memscope_bytes_text;
 * a saturated total (INT64_MAX, INT64_MIN with saturated set) says that it overflowed. */
static const char *signed_text(char *buf, size_t n, int64_t v, int plus, int saturated)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	if (saturated && (v == INT64_MAX || v == INT64_MIN))
		snprintf(buf, n, "%s%s (the total overflowed)",
			v > 0 ? "more than +" : "less than -",
			memscope_bytes_text(b, sizeof(b), (uint64_t)INT64_MAX));
	else
		snprintf(buf, n, "%s%s",
			v < 0		? "-"
			: plus && v > 0 ? "+"
					: "",
			memscope_bytes_text(b, sizeof(b), mag));
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

/* "diff D (base B, compare C)" of one valuation of a row, into buf */
static const char *values_text(char *buf, size_t n, const struct memscope_compare_row *r,
	int64_t base, int64_t cmp, int64_t diff)
{
	char d[MEMSCOPE_BYTES_TEXT_MAX + 2];
	char b[MEMSCOPE_BYTES_TEXT_MAX + 2] = "absent";
	char c[MEMSCOPE_BYTES_TEXT_MAX + 2] = "absent";

	if (r->has_base)
		signed_text(b, sizeof(b), base, 0, 0);
	if (r->has_cmp)
		signed_text(c, sizeof(c), cmp, 0, 0);
	snprintf(buf, n, "diff %s (base %s, compare %s)", signed_text(d, sizeof(d), diff, 1, 0), b,
		c);
	return buf;
}

int memscope_compare_summary_text(const struct memscope_compare_summary *s,
	const struct memscope_compare_opts *opts, const struct memscope_compare_stats *stats,
	const struct memscope_strtab *st, const char *output,
	int (*line)(void *ctx, const char *text), void *ctx)
{
	char d[MEMSCOPE_BYTES_TEXT_MAX + 32], ref[3 * MEMSCOPE_BYTES_TEXT_MAX + 64],
		del[3 * MEMSCOPE_BYTES_TEXT_MAX + 64];
	const struct memscope_compare_device *devs;
	const struct memscope_compare_row *top;
	size_t i, n;
	int rc;

	if ((rc = line(ctx, memscope_compare_meaning(opts))))
		return rc;
	devs = memscope_compare_summary_devices(s, &n);
	for (i = 0; i < n && !rc; i++)
		rc = emit_line(line, ctx,
			"device %d: %llu matched, %llu base-only, %llu compare-only, diff %s",
			(int)devs[i].device, (unsigned long long)devs[i].n_matched,
			(unsigned long long)devs[i].n_base_only,
			(unsigned long long)devs[i].n_cmp_only,
			signed_text(d, sizeof(d), devs[i].diff, 1, 1));
	top = memscope_compare_summary_top(s, &n);
	for (i = 0; i < n && !rc; i++) {
		const struct memscope_compare_row *r = &top[i];
		const char *name = memscope_strtab_str(st, r->name, NULL);

		values_text(ref, sizeof(ref), r, r->base, r->cmp, r->diff);
		del[0] = '\0';
		if (delta_beside(opts) && !r->has_delta)
			snprintf(del, sizeof(del),
				"; by delta: unknown (an op END without its START)");
		else if (delta_beside(opts) && (r->base_delta != r->base || r->cmp_delta != r->cmp))
			values_text(stpcpy(del, "; by delta: "), sizeof(del) - 12, r, r->base_delta,
				r->cmp_delta, r->diff_delta);
		/* the CSV's line: two header lines, then the rows */
		rc = emit_line(line, ctx, "top %zu (CSV line %llu): %s %s on device %d: %s%s",
			i + 1, (unsigned long long)r->index + 3, memscope_kind_name(r->event),
			name ? name : "", (int)r->device, ref, del);
	}
	if (!rc)
		rc = emit_line(line, ctx, "%llu rows, total diff %s%s%s",
			(unsigned long long)stats->n_rows,
			signed_text(d, sizeof(d), stats->total_diff, 1, 1), output ? " -> " : "",
			output ? output : "");
	return rc;
}
