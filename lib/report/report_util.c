/* What the files of memscope-report (lib/report/) share: a summary's figures, an op's name as
 * people read it, the detail input's peak track and its steps, its leak sites in order, and the
 * owners at its peak as JSON. */
#include <stdlib.h>
#include <string.h>

#include "../writers/report.h"
#include "report_impl.h"

int ms__report_num(const struct memscope_summary *s, enum memscope_sum_field f, int64_t *v)
{
	if (!(s->has & UINT64_C(1) << f))
		return 0;
	*v = s->num[f];
	return 1;
}

size_t ms__report_ineff_sum(const struct memscope_report *r, int64_t *blocks, int64_t *bytes)
{
	size_t i, n = 0;

	*blocks = *bytes = 0;
	for (i = 0; i < r->n_rows[MEMSCOPE_REPORT_RUN]; i++) {
		const struct memscope_summary *s = &r->rows[MEMSCOPE_REPORT_RUN][i];
		int64_t c, b;

		if (!ms__report_num(s, MEMSCOPE_SUM_INEFFICIENT_BLOCKS, &c) ||
			!ms__report_num(s, MEMSCOPE_SUM_INEFFICIENT_BYTES, &b))
			continue;
		n++;
		*blocks += c;
		*bytes = *bytes > INT64_MAX - b ? INT64_MAX : *bytes + b;
	}
	return n;
}

const char *ms__report_op_text(const char *name, char *buf, size_t size)
{
	static const char pre[] = "torch._ops.";
	size_t n = strlen(name);
	const char *dot;

	if (!strncmp(name, pre, sizeof(pre) - 1) && n > sizeof(pre) - 1) {
		name += sizeof(pre) - 1;
		/* aten._to_copy.default: the overload after the op's second dot */
		if ((dot = strchr(name, '.')) && (dot = strchr(dot + 1, '.')))
			n = (size_t)(dot - name);
		else
			n = strlen(name);
	}
	snprintf(buf, size, "%.*s", (int)n, name);
	return buf;
}

long ms__report_peak_track(const struct ms__report_detail *d)
{
	return d ? memscope_peak_track_of_peak(d->peak) : -1;
}

const struct memscope_step_proc *ms__report_peak_steps(const struct ms__report_detail *d)
{
	size_t n;
	long k = ms__report_peak_track(d);
	const struct memscope_peak_track *t;

	if (k < 0)
		return NULL;
	t = memscope_peak_tracks(d->peak, &n) + k;
	return memscope_steps_proc(memscope_peak_steps(d->peak), t->src, t->pid);
}

/* ------------------------------------------------------------------------------------------ */
/* leak sites */

struct site_sort {
	const struct memscope_leak_group *g;
	size_t i;
};

static int cmp_site(const void *pa, const void *pb)
{
	const struct site_sort *a = pa, *b = pb;
	int c = MS__CMP(b->g->bytes, a->g->bytes);

	return c ? c : MS__CMP(a->i, b->i);
}

size_t *ms__report_sites(const struct ms__report_detail *d, size_t *n)
{
	size_t ng, i;
	const struct memscope_leak_group *g = memscope_leaks_groups(d->leaks, &ng);
	struct site_sort *s = ng ? malloc(ng * sizeof(*s)) : NULL;
	size_t *out = NULL;

	*n = 0;
	if (!s)
		return NULL;
	for (i = 0; i < ng; i++)
		s[i].g = &g[i], s[i].i = i;
	ms__qsort(s, ng, sizeof(*s), cmp_site);
	if ((out = malloc(ng * sizeof(*out)))) {
		for (i = 0; i < ng && i < MS__REPORT_MAX_SITES; i++)
			out[i] = s[i].i;
		*n = i;
	}
	free(s);
	return out;
}

const char *ms__report_by_name(uint32_t by)
{
	static const char *const names[] = { "owner", "op", "python", "c", "none" };

	return by < sizeof(names) / sizeof(names[0]) ? names[by] : "none";
}

void ms__report_json_owners(
	FILE *out, const struct ms__report_detail *d, size_t max, const char *key)
{
	size_t n, i;
	const struct memscope_peak_owner *o = memscope_peak_owners(d->peak, &n);
	uint64_t bytes = 0, blocks = 0;

	fprintf(out, ",\"%s\":[", key);
	for (i = 0; i < n && i < max; i++) {
		fprintf(out, "%s{\"name\":", i ? "," : "");
		ms__json_id(out, d->st, o[i].name);
		fprintf(out, ",\"by\":\"%s\",\"bytes\":%llu,\"blocks\":%llu}",
			ms__report_by_name(o[i].by), (unsigned long long)o[i].bytes,
			(unsigned long long)o[i].blocks);
	}
	fputc(']', out);
	for (; i < n; i++)
		bytes += o[i].bytes, blocks += o[i].blocks;
	if (!strcmp(key, "owners"))
		fprintf(out, ",\"rest\":{\"owners\":%zu,\"bytes\":%llu,\"blocks\":%llu}",
			n > max ? n - max : 0, (unsigned long long)bytes,
			(unsigned long long)blocks);
}

/* A stack's frames, innermost first, at most MS__REPORT_MAX_FRAMES (then "[N more frames]"); C
 * frames (text) as memscope_frame_text writes them. */
static void frames(FILE *out, const struct memscope_strtab *st, uint32_t stack, int c)
{
	size_t n = 0, i, len;
	const uint32_t *f = memscope_strtab_stack(st, stack, &n);
	char text[1024];

	fputc('[', out);
	for (i = 0; f && i < n && i < MS__REPORT_MAX_FRAMES; i++) {
		const char *s = memscope_strtab_str(st, f[i], &len);

		if (i)
			fputc(',', out);
		if (!s)
			s = "", len = 0;
		if (c && (len = memscope_frame_text(s, len, text, sizeof(text))) >= sizeof(text))
			len = sizeof(text) - 1;
		ms__json_str(out, c ? text : s, len);
	}
	if (f && n > MS__REPORT_MAX_FRAMES)
		fprintf(out, ",\"[%zu more frames]\"", n - MS__REPORT_MAX_FRAMES);
	fputc(']', out);
}

void ms__report_json_stack(FILE *out, const struct memscope_strtab *st, uint32_t py, uint32_t c)
{
	fputs("{\"python\":", out);
	frames(out, st, py, 0);
	fputs(",\"c\":", out);
	frames(out, st, c, 1);
	fputc('}', out);
}
