/* memscope-report's findings as text for a terminal: the verdict lines first, one a line, then
 * short tables (who held the peak, the largest leak sites, the last steps, what was not checked
 * and why). */
#include <stdlib.h>
#include <string.h>

#include "report_impl.h"

/* the rows of each short table */
#define TEXT_ROWS 5
#define TEXT_STEPS 10

static void held(FILE *out, const struct ms__report_detail *d)
{
	size_t n, i;
	const struct memscope_peak_owner *o = memscope_peak_owners(d->peak, &n);
	char b[MEMSCOPE_BYTES_TEXT_MAX], name[300];

	if (!n)
		return;
	fprintf(out, "\nHeld at the peak (%zu owner%s):\n", n, n == 1 ? "" : "s");
	for (i = 0; i < n && i < TEXT_ROWS; i++) {
		const char *nm = memscope_strtab_str(d->st, o[i].name, NULL);

		if (o[i].by == MEMSCOPE_PEAK_BY_OP)
			nm = ms__report_op_text(nm, name, sizeof(name));
		fprintf(out, "  %10s  %6llu block%s  %s %s\n",
			memscope_bytes_text(b, sizeof(b), o[i].bytes),
			(unsigned long long)o[i].blocks, o[i].blocks == 1 ? " " : "s",
			ms__report_by_name(o[i].by), nm);
	}
	if (n > TEXT_ROWS)
		fprintf(out, "  and %zu more\n", n - TEXT_ROWS);
}

/* A site's op, owner or innermost frame. */
static const char *site_where(const struct ms__report_detail *d,
	const struct memscope_leak_group *g, char *buf, size_t size)
{
	size_t n = 0;
	const uint32_t *f;

	if (g->op)
		return ms__report_op_text(memscope_strtab_str(d->st, g->op, NULL), buf, size);
	if (g->owner)
		return memscope_strtab_str(d->st, g->owner, NULL);
	if ((f = memscope_strtab_stack(d->st, g->stack_py ? g->stack_py : g->stack_c, &n)) && n)
		return memscope_strtab_str(d->st, f[0], NULL);
	return "no op, owner or stack";
}

static void sites(FILE *out, const struct ms__report_detail *d)
{
	size_t n, ng, i;
	size_t *s = ms__report_sites(d, &n);
	const struct memscope_leak_group *g = memscope_leaks_groups(d->leaks, &ng);
	char b[MEMSCOPE_BYTES_TEXT_MAX], w[300];

	if (n)
		fprintf(out, "\nLeak sites (%zu, largest first):\n", ng);
	for (i = 0; s && i < n && i < TEXT_ROWS; i++) {
		const struct memscope_leak_group *x = &g[s[i]];

		fprintf(out, "  %10s  %6llu block%s  %-4s %-4s %s\n",
			memscope_bytes_text(b, sizeof(b), x->bytes), (unsigned long long)x->n,
			x->n == 1 ? " " : "s",
			x->kind == MEMSCOPE_LEAK_STEP	? "step"
			: x->kind == MEMSCOPE_LEAK_MARK ? "mark"
							: "exit",
			memscope_subtype_name(x->pool), site_where(d, x, w, sizeof(w)));
	}
	free(s);
}

/* The last TEXT_STEPS rows of the step table. */
static void steps(FILE *out, const struct memscope_report *r)
{
	size_t n, i;
	struct ms__report_step_row *rows = ms__report_step_rows(r->detail, &n);
	const struct memscope_step_proc *sp = ms__report_peak_steps(r->detail);
	char e[MEMSCOPE_BYTES_TEXT_MAX], a[MEMSCOPE_BYTES_TEXT_MAX], f[MEMSCOPE_BYTES_TEXT_MAX],
		p[MEMSCOPE_BYTES_TEXT_MAX];

	if (!n)
		goto out;
	fprintf(out, "\nSteps (%llu, %s%s): live at the end, allocated, freed, peak in the step\n",
		(unsigned long long)memscope_steps_count(sp),
		memscope_steps_source_name(memscope_steps_source(sp)),
		n > TEXT_STEPS ? "; the last ones" : "");
	for (i = n > TEXT_STEPS ? n - TEXT_STEPS : 0; i < n; i++)
		fprintf(out, "  %6llu %10s %10s %10s %10s%s\n", (unsigned long long)rows[i].number,
			memscope_bytes_text(e, sizeof(e), (uint64_t)rows[i].end),
			memscope_bytes_text(a, sizeof(a), (uint64_t)rows[i].alloc),
			memscope_bytes_text(f, sizeof(f), (uint64_t)rows[i].freed),
			memscope_bytes_text(p, sizeof(p), (uint64_t)rows[i].peak),
			rows[i].leak_first ? "  a step leak starts" : "");
out:
	free(rows);
}

int ms__report_text(FILE *out, const struct memscope_report *r)
{
	size_t i;

	for (i = 0; i < r->n_verdicts; i++)
		fprintf(out, "%s\n", r->verdicts[i].text);
	if (r->detail) {
		held(out, r->detail);
		sites(out, r->detail);
		steps(out, r);
	}
	if (r->n_unchecked)
		fputs("\nNot checked:\n", out);
	for (i = 0; i < r->n_unchecked; i++)
		fprintf(out, "  %s\n", r->unchecked[i]);
	return ferror(out) ? MEMSCOPE_E_IO : 0;
}
