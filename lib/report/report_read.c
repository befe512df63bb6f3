/* memscope-report's reads (memscope/report.h): each input of a session read alone into fresh
 * analyses, its batch summary kept, its figures handed to the ranks, and the details of the one
 * with the highest peak kept for the page. */
#include <stdlib.h>
#include <string.h>

#include "../session/summary.h"
#include "report_impl.h"

int memscope_report_new(struct memscope_report **out, struct memscope_error *err)
{
	struct memscope_report *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r || !(r->ranks = ms__ranks_new())) {
		free(r);
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	}
	*out = r;
	return 0;
}

void ms__report_detail_free(struct ms__report_detail *d)
{
	if (!d)
		return;
	ms__rblocks_free(d->blocks);
	memscope_inefficient_free(d->ineff);
	memscope_peak_free(d->peak);
	memscope_leaks_free(d->leaks);
	memscope_strtab_free(d->st);
	free(d);
}

static void free_texts(char **t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(t[i]);
	free(t);
}

void memscope_report_free(struct memscope_report *r)
{
	size_t side, i;

	if (!r)
		return;
	for (side = 0; side < 2; side++) {
		for (i = 0; i < r->n_rows[side]; i++)
			memscope_summary_clear(&r->rows[side][i]);
		free(r->rows[side]);
	}
	ms__report_detail_free(r->detail);
	ms__ranks_free(r->ranks);
	free_texts(r->notes, r->n_notes);
	free_texts(r->unchecked, r->n_unchecked);
	free(r);
}

void memscope_report_on_input(struct memscope_report *r,
	void (*fn)(void *ctx, enum memscope_report_side side, size_t i, size_t n, const char *name),
	void *ctx)
{
	r->on_input = fn;
	r->on_input_ctx = ctx;
}

void memscope_report_expect_baseline(struct memscope_report *r, int will)
{
	r->no_baseline = !will;
}

struct ms__report_detail *ms__report_detail_new(void)
{
	struct ms__report_detail *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (!(d->st = memscope_strtab_new()) || !(d->leaks = memscope_leaks_new(NULL, d->st)) ||
		!(d->peak = memscope_peak_new(NULL, d->st)) ||
		!(d->ineff = memscope_inefficient_new(NULL, d->st)) ||
		!(d->blocks = ms__rblocks_new(d->st))) {
		ms__report_detail_free(d);
		return NULL;
	}
	return d;
}

void ms__report_batch_input(struct memscope_batch_input *in, const char *name)
{
	memset(in, 0, sizeof(*in));
	in->path = (char *)name;
	in->rank = memscope_rank_of_path(name);
	memscope_device_of_path(name, in->device, sizeof(in->device));
}

void ms__report_keep_detail(struct memscope_report *r, struct ms__report_detail *d, size_t i,
	const struct memscope_summary *sum)
{
	int64_t peak = -1;

	ms__report_num(sum, MEMSCOPE_SUM_PEAK_BYTES, &peak);
	d->input = i;
	d->peak_bytes = peak;
	if (!r->detail || peak > r->detail->peak_bytes) {
		ms__report_detail_free(r->detail);
		r->detail = d;
		return;
	}
	ms__report_detail_free(d);
}

/*
 * Read input i of s (n inputs) as side into r->rows[side][i]. Returns 0 (also for an input that
 * could not be read when n > 1: its row says why), the read's error when n is 1, or NOMEM.
 */
static int read_one(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, size_t i, size_t n, struct memscope_error *err)
{
	const char *name = memscope_session_input(s, i)->name;
	struct ms__report_detail *d = ms__report_detail_new();
	struct memscope_summary *sum = &r->rows[side][i];
	struct memscope_batch_input in;
	struct memscope_run_item extra[2];
	struct ms__summary_run run = { 0 };
	int rc;

	if (!d)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, name, 0, "out of memory");
	ms__report_batch_input(&in, name);
	extra[0] = (struct memscope_run_item){ &ms__rblocks_analysis, d->blocks };
	run = (struct ms__summary_run){ d->st, d->leaks, d->peak, d->ineff, extra, 1, s, i };
	if (n == 1 && !(side == MEMSCOPE_REPORT_RUN && r->no_baseline) &&
		(rc = ms__ranks_item(r->ranks, (enum ms__ranks_side)side, name, d->st,
			 &extra[run.n_extra++]))) {
		ms__report_detail_free(d);
		return memscope_error_set(err, rc, name, 0, "%s", memscope_strerror(rc));
	}
	rc = ms__summary_read_into(sum, &in, i, NULL, &run, err);
	if (rc == MEMSCOPE_E_NOMEM || (rc && n == 1)) {
		ms__report_detail_free(d);
		return rc;
	}
	if ((rc = ms__ranks_add(r->ranks, (enum ms__ranks_side)side, (uint32_t)i, sum,
		     rc ? NULL : d->peak, rc ? NULL : d->leaks, d->st))) {
		ms__report_detail_free(d);
		return memscope_error_set(err, rc, name, 0, "%s", memscope_strerror(rc));
	}
	memscope_error_clear(err);
	if (side == MEMSCOPE_REPORT_RUN && !strcmp(sum->str[MEMSCOPE_SUM_STATUS], "ok"))
		ms__report_keep_detail(r, d, i, sum);
	else
		ms__report_detail_free(d);
	return 0;
}

int ms__report_keep_notes(struct memscope_report *r, const struct memscope_session *s)
{
	size_t n, i;
	const struct memscope_note *nt = memscope_session_notes(s, &n);
	char **t = realloc(r->notes, (r->n_notes + n + 1) * sizeof(*t));

	if (!t)
		return MEMSCOPE_E_NOMEM;
	r->notes = t;
	for (i = 0; i < n; i++) {
		if (!(t[r->n_notes] = strdup(nt[i].text)))
			return MEMSCOPE_E_NOMEM;
		r->n_notes++;
	}
	return 0;
}

int memscope_report_read_begin(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, struct memscope_error *err)
{
	size_t n = memscope_session_count(s);

	memscope_error_clear(err);
	if ((side != MEMSCOPE_REPORT_RUN && side != MEMSCOPE_REPORT_BASELINE) || r->read[side] ||
		r->finished || !n)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "%s",
			!n ? "no input to read"
			   : "a report's side read twice, or after its finish");
	if (!(r->rows[side] = calloc(n, sizeof(*r->rows[side]))))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	r->n_rows[side] = n;
	r->read[side] = 1;
	r->in_parts[side] = 1;
	r->next[side] = 0;
	return 0;
}

int memscope_report_read(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, struct memscope_error *err)
{
	size_t n = memscope_session_count(s), i;
	int rc;

	if ((rc = memscope_report_read_begin(r, side, s, err)))
		return rc;
	r->in_parts[side] = 0; /* read here, not in parts */
	for (i = 0; i < n && !rc; i++) {
		rc = read_one(r, side, s, i, n, err);
		if (!rc && r->on_input)
			r->on_input(
				r->on_input_ctx, side, i, n, memscope_session_input(s, i)->name);
	}
	if (!rc && ms__report_keep_notes(r, s))
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	return rc;
}

int memscope_report_finish(struct memscope_report *r, struct memscope_error *err)
{
	memscope_error_clear(err);
	if (!r->read[MEMSCOPE_REPORT_RUN] || r->finished)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "%s",
			r->finished ? "a report finished twice" : "a report without its run");
	if (ms__ranks_finish(r->ranks) || ms__report_verdicts(r))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	r->finished = 1;
	return 0;
}

int memscope_report_found(const struct memscope_report *r)
{
	size_t i;

	for (i = 0; r->finished && i < r->n_verdicts; i++)
		if (!strcmp(r->verdicts[i].level, "bad"))
			return 1;
	return 0;
}

size_t memscope_report_inputs(const struct memscope_report *r, enum memscope_report_side side)
{
	return side == MEMSCOPE_REPORT_RUN || side == MEMSCOPE_REPORT_BASELINE ? r->n_rows[side]
									       : 0;
}

size_t memscope_report_failed(const struct memscope_report *r, enum memscope_report_side side)
{
	size_t i, n = 0;

	for (i = 0; i < memscope_report_inputs(r, side); i++)
		n += !r->rows[side][i].str[MEMSCOPE_SUM_STATUS] ||
		     strcmp(r->rows[side][i].str[MEMSCOPE_SUM_STATUS], "ok") != 0;
	return n;
}

const char *memscope_report_error(
	const struct memscope_report *r, enum memscope_report_side side, size_t i)
{
	const struct memscope_summary *s;

	if (i >= memscope_report_inputs(r, side))
		return NULL;
	s = &r->rows[side][i];
	if (s->str[MEMSCOPE_SUM_STATUS] && !strcmp(s->str[MEMSCOPE_SUM_STATUS], "ok"))
		return NULL;
	return s->str[MEMSCOPE_SUM_ERROR] ? s->str[MEMSCOPE_SUM_ERROR] : "not read";
}
