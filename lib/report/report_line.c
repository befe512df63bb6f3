/* memscope-report's reads in other processes (memscope/report.h memscope_report_read_begin): an
 * input read alone in a worker and sent back as one line (its summary, what the ranks keep of it,
 * its notes), that line added back in the order of the inputs, and the detail input read again. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../core/json_scan.h"
#include "../session/run.h"
#include "../session/summary.h"
#include "report_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* the worker's side: the line */

/* s[0, n) as a JSON string of its bytes in hex: every byte comes back as it was (strings of
 * inputs need not be UTF-8). */
static void put_hex(FILE *out, const char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	fputc('"', out);
	for (i = 0; i < n; i++) {
		fputc(digits[(unsigned char)s[i] >> 4], out);
		fputc(digits[(unsigned char)s[i] & 15], out);
	}
	fputc('"', out);
}

/* String id of st as put_hex's string, or null for 0. */
static void put_id(FILE *out, const struct memscope_strtab *st, uint32_t id)
{
	size_t len = 0;
	const char *s = id ? memscope_strtab_str(st, id, &len) : NULL;

	if (s)
		put_hex(out, s, len);
	else
		fputs("null", out);
}

/* Stack id of st as an array of its frames (put_id's), or null for 0. */
static void put_stack(FILE *out, const struct memscope_strtab *st, uint32_t id)
{
	size_t n = 0, i;
	const uint32_t *fr = id ? memscope_strtab_stack(st, id, &n) : NULL;

	if (!fr) {
		fputs("null", out);
		return;
	}
	fputc('[', out);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		put_id(out, st, fr[i]);
	}
	fputc(']', out);
}

/* The summary s, every figure and text as it is (its texts as put_hex's strings, null for none):
 * [has, [figures], [texts]]. */
static void put_summary(FILE *out, const struct memscope_summary *s)
{
	size_t f;

	fprintf(out, "[%" PRIu64 ",[", s->has);
	for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++)
		fprintf(out, "%s%" PRId64, f ? "," : "", s->num[f]);
	fputs("],[", out);
	for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++) {
		if (f)
			fputc(',', out);
		if (s->str[f])
			put_hex(out, s->str[f], strlen(s->str[f]));
		else
			fputs("null", out);
	}
	fputs("]]", out);
}

/* What the ranks kept of the one input of k (row 0 of its run side) and the notes s gave from
 * the n0-th on, as the rest of the line after the summary. */
static void put_kept(FILE *out, const struct ms__ranks *k, struct memscope_session *s, size_t n0)
{
	const struct ms__ranks_part *p = &k->side[MS__RANKS_RUN];
	const struct ms__ranks_row *w = &p->rows[0];
	const struct memscope_note *nt;
	size_t i, n;

	fputs(",\"cols\":[", out);
	for (i = 0; i < w->n_cols; i++)
		fprintf(out, "%s[%" PRIu64 ",%" PRId64 "]", i ? "," : "", w->cols[i].step,
			w->cols[i].bytes);
	fputs("],\"sites\":[", out);
	for (i = 0; i < p->n_sites; i++) {
		const struct ms__ranks_site *e = &p->sites[i];

		fprintf(out, "%s[%u,%u,%" PRIu64 ",%" PRIu64 ",", i ? "," : "", e->kind,
			(unsigned)e->pool, e->n, e->bytes);
		put_id(out, k->st, e->op);
		fputc(',', out);
		put_id(out, k->st, e->owner);
		fputc(',', out);
		put_stack(out, k->st, e->stack_py);
		fputc(',', out);
		put_stack(out, k->st, e->stack_c);
		fputc(']', out);
	}
	fputs("],\"notes\":[", out);
	nt = memscope_session_notes(s, &n);
	for (i = n0; i < n; i++) {
		fprintf(out, "%s[%u,%d,%" PRIu64 ",%" PRIu64 ",", i > n0 ? "," : "",
			(unsigned)nt[i].kind, nt[i].info, (uint64_t)nt[i].input, nt[i].count);
		put_hex(out, nt[i].text, strlen(nt[i].text));
		fputc(']', out);
	}
	fputs("]}\n", out);
}

int memscope_report_input_line(
	FILE *out, struct memscope_session *s, size_t i, struct memscope_error *err)
{
	const char *name = memscope_session_input(s, i)->name;
	struct ms__report_detail *d = ms__report_detail_new();
	struct ms__ranks *k = ms__ranks_new();
	struct memscope_summary sum = { 0 };
	struct memscope_batch_input in;
	struct ms__summary_run run;
	size_t n0 = 0;
	int rc = MEMSCOPE_E_NOMEM;

	memscope_error_clear(err);
	if (!d || !k)
		goto out;
	ms__session_note_fn(s, NULL, NULL); /* the notes go into the line */
	memscope_session_notes(s, &n0);
	ms__report_batch_input(&in, name);
	run = (struct ms__summary_run){ d->st, d->leaks, d->peak, d->ineff, NULL, 0, s, i };
	rc = ms__summary_read_into(&sum, &in, i, NULL, &run, err);
	if (rc == MEMSCOPE_E_NOMEM)
		goto out;
	memscope_error_clear(err);
	if ((rc = ms__ranks_add(
		     k, MS__RANKS_RUN, 0, &sum, rc ? NULL : d->peak, rc ? NULL : d->leaks, d->st)))
		goto out;
	fputs("{\"summary\":", out);
	put_summary(out, &sum);
	put_kept(out, k, s, n0);
	rc = ms__write_end(out, 0, err);
out:
	if (rc == MEMSCOPE_E_NOMEM)
		memscope_error_set(err, rc, name, 0, "out of memory");
	memscope_summary_clear(&sum);
	ms__ranks_free(k);
	ms__report_detail_free(d);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the parent's side: the line read back (json_scan.h's scanner) */

/* What a line holds once read: its strings in st. */
struct kept {
	struct memscope_strtab *st;
	struct ms__ranks_col *cols;
	size_t n_cols, cap_cols;
	struct ms__ranks_site *sites;
	size_t n_sites, cap_sites;
	struct memscope_note *notes; /* texts owned */
	size_t n_notes, cap_notes;
	struct buf text; /* the last string read */
	struct memscope_summary sum;
};

static void kept_free(struct kept *k)
{
	size_t i;

	for (i = 0; i < k->n_notes; i++)
		free((char *)k->notes[i].text);
	free(k->notes);
	free(k->cols);
	free(k->sites);
	ms__buf_free(&k->text);
	memscope_summary_clear(&k->sum);
	memscope_strtab_free(k->st);
}

/* what the readers below return besides MS__JSON_OK and MS__JSON_BAD */
#define L_NOMEM 3

/* A whole number (JSON's, no fraction) into *v, negative when neg allows it. */
static int get_num(struct ms__json *j, int neg_ok, int64_t *v)
{
	struct ms__json_val t;
	uint64_t x = 0;
	size_t i, neg;

	ms__json_skip_ws(j);
	if (j->p == j->end || ms__json_scalar(j, &t) || t.type != MS__JSON_NUM)
		return ms__json_bad(j, "a number expected");
	neg = t.s[0] == '-';
	for (i = neg; i < t.len; i++) {
		uint64_t d = (uint64_t)(t.s[i] - '0');

		if (t.s[i] < '0' || t.s[i] > '9' || x > (UINT64_MAX - d) / 10)
			return ms__json_bad(j, "a whole number expected");
		x = x * 10 + d;
	}
	if (neg && (!neg_ok || x > (uint64_t)INT64_MAX + 1))
		return ms__json_bad(j, "a number out of range");
	*v = neg ? (int64_t)(0 - x) : (int64_t)x; /* u64 figures come back through the cast */
	return MS__JSON_OK;
}

/* put_hex's string into k->text (NUL-terminated), or null (*is_null 1). */
static int get_hex(struct ms__json *j, struct kept *k, int *is_null)
{
	struct ms__json_val t;
	size_t i;

	*is_null = 0;
	k->text.len = 0;
	ms__json_skip_ws(j);
	if (j->end - j->p >= 4 && !memcmp(j->p, "null", 4)) {
		j->p += 4;
		*is_null = 1;
		return MS__JSON_OK;
	}
	if (j->p == j->end || *j->p != '"' || ms__json_string(j, &t))
		return ms__json_bad(j, "a string expected");
	if (t.type != MS__JSON_STR || t.esc || t.len % 2)
		return ms__json_bad(j, "a string of bytes in hex expected");
	if (ms__buf_reserve(&k->text, t.len / 2 + 1))
		return L_NOMEM;
	for (i = 0; i < t.len; i += 2) {
		const char *a = strchr("0123456789abcdef", t.s[i]),
			   *b = strchr("0123456789abcdef", t.s[i + 1]);

		if (!t.s[i] || !t.s[i + 1] || !a || !b)
			return ms__json_bad(j, "a string of bytes in hex expected");
		k->text.p[k->text.len++] =
			(char)((a - "0123456789abcdef") * 16 + (b - "0123456789abcdef"));
	}
	k->text.p[k->text.len] = 0;
	return MS__JSON_OK;
}

/* get_hex's string as a string id of k->st into *id (0 for null). */
static int get_id(struct ms__json *j, struct kept *k, uint32_t *id)
{
	int rc, is_null;

	*id = 0;
	if ((rc = get_hex(j, k, &is_null)) || is_null)
		return rc;
	return memscope_strtab_intern(k->st, k->text.p, k->text.len, id) ? L_NOMEM : 0;
}

/* put_stack's array as a stack id of k->st into *id (0 for null). */
static int get_stack(struct ms__json *j, struct kept *k, uint32_t *id)
{
	uint32_t *fr = NULL, f;
	size_t n = 0, cap = 0;
	int rc = 0;

	*id = 0;
	ms__json_skip_ws(j);
	if (j->end - j->p >= 4 && !memcmp(j->p, "null", 4)) {
		j->p += 4;
		return 0;
	}
	if (!ms__json_eat(j, '['))
		return ms__json_bad(j, "a stack expected");
	while (!rc && !ms__json_eat(j, ']')) {
		if ((n && !ms__json_eat(j, ',')) || (rc = get_id(j, k, &f)))
			rc = rc ? rc : ms__json_bad(j, "',' expected");
		else if (ms__grow_array(&fr, &cap, n + 1, sizeof(*fr)))
			rc = L_NOMEM;
		else
			fr[n++] = f;
	}
	if (!rc && memscope_strtab_intern_stack(k->st, fr, n, id) < 0)
		rc = L_NOMEM;
	free(fr);
	return rc;
}

/* One element of "cols", "sites" or "notes" (by which) after its '['. */
static int get_elem(struct ms__json *j, struct kept *k, int which)
{
	int64_t v[4] = { 0 };
	int rc = 0, is_null, nums = which == 0 ? 2 : 4, i;

	for (i = 0; i < nums && !rc; i++)
		if ((i && !ms__json_eat(j, ',')) || (rc = get_num(j, which == 0 && i == 1, &v[i])))
			rc = rc ? rc : ms__json_bad(j, "',' expected");
	if (!rc && which == 0) {
		if (ms__grow_array(&k->cols, &k->cap_cols, k->n_cols + 1, sizeof(*k->cols)))
			return L_NOMEM;
		k->cols[k->n_cols++] = (struct ms__ranks_col){ (uint64_t)v[0], v[1] };
	} else if (!rc && which == 1) {
		struct ms__ranks_site e = { .kind = (unsigned)v[0],
			.pool = (uint16_t)v[1],
			.n = (uint64_t)v[2],
			.bytes = (uint64_t)v[3] };

		if (!ms__json_eat(j, ',') || (rc = get_id(j, k, &e.op)) || !ms__json_eat(j, ',') ||
			(rc = get_id(j, k, &e.owner)) || !ms__json_eat(j, ',') ||
			(rc = get_stack(j, k, &e.stack_py)) || !ms__json_eat(j, ',') ||
			(rc = get_stack(j, k, &e.stack_c)))
			return rc ? rc : ms__json_bad(j, "',' expected");
		if (ms__grow_array(&k->sites, &k->cap_sites, k->n_sites + 1, sizeof(*k->sites)))
			return L_NOMEM;
		k->sites[k->n_sites++] = e;
	} else if (!rc) {
		struct memscope_note nt = { (enum memscope_note_kind)v[0], (int)v[1], (size_t)v[2],
			(uint64_t)v[3], NULL };

		if (!ms__json_eat(j, ',') || (rc = get_hex(j, k, &is_null)) || is_null)
			return rc ? rc : ms__json_bad(j, "a note's text expected");
		if (ms__grow_array(&k->notes, &k->cap_notes, k->n_notes + 1, sizeof(*k->notes)) ||
			!(nt.text = strdup(k->text.p)))
			return L_NOMEM;
		k->notes[k->n_notes++] = nt;
	}
	if (!rc && !ms__json_eat(j, ']'))
		rc = ms__json_bad(j, "']' expected");
	return rc;
}

/* put_summary's array into k->sum. */
static int get_summary(struct ms__json *j, struct kept *k)
{
	const char *bad = "a summary expected";
	int64_t has;
	size_t f;
	int rc, is_null;

	if (!ms__json_eat(j, '[') || get_num(j, 0, &has) || !ms__json_eat(j, ',') ||
		!ms__json_eat(j, '['))
		return ms__json_bad(j, bad);
	k->sum.has = (uint64_t)has;
	for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++)
		if ((f && !ms__json_eat(j, ',')) || get_num(j, 1, &k->sum.num[f]))
			return ms__json_bad(j, bad);
	if (!ms__json_eat(j, ']') || !ms__json_eat(j, ',') || !ms__json_eat(j, '['))
		return ms__json_bad(j, bad);
	for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++) {
		if (f && !ms__json_eat(j, ','))
			return ms__json_bad(j, bad);
		if ((rc = get_hex(j, k, &is_null)))
			return rc;
		if (!is_null && !(k->sum.str[f] = strdup(k->text.p)))
			return L_NOMEM;
	}
	return ms__json_eat(j, ']') && ms__json_eat(j, ']') ? 0 : ms__json_bad(j, bad);
}

/* The line {"summary":[...],"cols":[...],"sites":[...],"notes":[...]} into k. */
static int get_line(struct ms__json *j, struct kept *k)
{
	static const char *const keys[] = { "summary", "cols", "sites", "notes" };
	struct ms__json_val key;
	size_t n;
	int rc = 0, i;

	if (!ms__json_eat(j, '{'))
		return ms__json_bad(j, "'{' expected");
	for (i = 0; i < 4 && !rc; i++) {
		if ((i && !ms__json_eat(j, ',')) || (ms__json_skip_ws(j), j->p == j->end) ||
			ms__json_key(j, &key) || !ms__json_str_eq(&key, keys[i]))
			return ms__json_bad(j, "the line's keys expected in order");
		if (i == 0) {
			rc = get_summary(j, k);
			continue;
		}
		if (!ms__json_eat(j, '['))
			return ms__json_bad(j, "'[' expected");
		for (n = 0; !rc && !ms__json_eat(j, ']'); n++)
			if ((n && !ms__json_eat(j, ',')) || !ms__json_eat(j, '['))
				rc = ms__json_bad(j, "'[' expected");
			else
				rc = get_elem(j, k, i - 1);
	}
	if (!rc && !ms__json_eat(j, '}'))
		rc = ms__json_bad(j, "'}' expected");
	ms__json_skip_ws(j);
	if (!rc && j->p != j->end)
		rc = ms__json_bad(j, "text after the line");
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the parent's side: the read in parts */

/* 0 when input i of side is the one to add next (after begin, before end), else
 * MEMSCOPE_E_ARG (err set). */
static int check_next(const struct memscope_report *r, enum memscope_report_side side, size_t i,
	struct memscope_error *err)
{
	memscope_error_clear(err);
	if ((side == MEMSCOPE_REPORT_RUN || side == MEMSCOPE_REPORT_BASELINE) &&
		r->in_parts[side] && i == r->next[side] && i < r->n_rows[side])
		return 0;
	return memscope_error_set(
		err, MEMSCOPE_E_ARG, NULL, 0, "input %zu added out of order, or not in parts", i);
}

/* Input i of side added: the next one, and the progress callback. */
static void added(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, size_t i)
{
	r->next[side]++;
	if (r->on_input)
		r->on_input(r->on_input_ctx, side, i, r->n_rows[side],
			memscope_session_input(s, i)->name);
}

int memscope_report_add_line(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, size_t i, const char *line, size_t len,
	struct memscope_error *err)
{
	const char *name;
	struct ms__json j = { .p = line, .end = line + len, .data = line, .line = 1 };
	struct kept k = { 0 };
	size_t e;
	int rc;

	if (check_next(r, side, i, err))
		return MEMSCOPE_E_ARG;
	name = memscope_session_input(s, i)->name;
	if (!(k.st = memscope_strtab_new()))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, name, 0, "out of memory");
	if (!(rc = get_line(&j, &k))) {
		r->rows[side][i] = k.sum; /* taken */
		memset(&k.sum, 0, sizeof(k.sum));
		for (e = 0; e < k.n_notes; e++)
			ms__session_note(s, &k.notes[e]);
		rc = ms__ranks_add_kept(r->ranks, (enum ms__ranks_side)side, (uint32_t)i,
			&r->rows[side][i], k.cols, k.n_cols, k.sites, k.n_sites, k.st);
	}
	kept_free(&k);
	if (rc == L_NOMEM || rc == MEMSCOPE_E_NOMEM)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, name, 0, "out of memory");
	if (rc)
		return memscope_error_set(err, rc == MEMSCOPE_E_ARG ? rc : MEMSCOPE_E_INVALID, name,
			0, "its worker's line: %s",
			rc == MS__JSON_BAD && j.bad ? j.bad : memscope_strerror(rc));
	added(r, side, s, i);
	return 0;
}

int memscope_report_add_failed(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, size_t i, const char *msg, struct memscope_error *err)
{
	struct memscope_batch_input in;
	const char *name;
	int rc;

	if (check_next(r, side, i, err))
		return MEMSCOPE_E_ARG;
	name = memscope_session_input(s, i)->name;
	ms__report_batch_input(&in, name);
	if ((rc = memscope_summary_fail(&r->rows[side][i], &in, i, MEMSCOPE_E_IO, msg)) ||
		(rc = ms__ranks_add(r->ranks, (enum ms__ranks_side)side, (uint32_t)i,
			 &r->rows[side][i], NULL, NULL, NULL)))
		return memscope_error_set(err, rc, name, 0, "%s", memscope_strerror(rc));
	added(r, side, s, i);
	return 0;
}

/* The run's input with the highest peak read again in this process for its details, its notes
 * not given twice. 0 or its read's error (err set). */
static int read_detail(
	struct memscope_report *r, struct memscope_session *s, struct memscope_error *err)
{
	const struct memscope_summary *rows = r->rows[MEMSCOPE_REPORT_RUN];
	struct memscope_summary again = { 0 };
	struct memscope_batch_input in;
	struct memscope_run_item extra;
	struct ms__report_detail *d;
	struct ms__summary_run run;
	int64_t best_peak = -1, peak;
	size_t i, best = SIZE_MAX;
	int rc;

	for (i = 0; i < r->n_rows[MEMSCOPE_REPORT_RUN]; i++) {
		if (!rows[i].str[MEMSCOPE_SUM_STATUS] ||
			strcmp(rows[i].str[MEMSCOPE_SUM_STATUS], "ok"))
			continue;
		peak = -1;
		ms__report_num(&rows[i], MEMSCOPE_SUM_PEAK_BYTES, &peak);
		if (best == SIZE_MAX || peak > best_peak)
			best = i, best_peak = peak;
	}
	if (best == SIZE_MAX)
		return 0;
	if (!(d = ms__report_detail_new()))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	ms__report_batch_input(&in, memscope_session_input(s, best)->name);
	extra = (struct memscope_run_item){ &ms__rblocks_analysis, d->blocks };
	run = (struct ms__summary_run){ d->st, d->leaks, d->peak, d->ineff, &extra, 1, s, best };
	ms__session_mute(s, 1);
	rc = ms__summary_read_into(&again, &in, best, NULL, &run, err);
	ms__session_mute(s, 0);
	memscope_summary_clear(&again);
	if (rc) {
		ms__report_detail_free(d);
		return rc;
	}
	ms__report_keep_detail(r, d, best, &rows[best]);
	return 0;
}

int memscope_report_read_end(struct memscope_report *r, enum memscope_report_side side,
	struct memscope_session *s, struct memscope_error *err)
{
	int rc = 0;

	memscope_error_clear(err);
	if ((side != MEMSCOPE_REPORT_RUN && side != MEMSCOPE_REPORT_BASELINE) ||
		!r->in_parts[side] || r->next[side] != r->n_rows[side])
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0,
			"a read in parts ended before its every input was added");
	r->in_parts[side] = 0;
	if (side == MEMSCOPE_REPORT_RUN && (rc = read_detail(r, s, err)))
		return rc;
	if (ms__report_keep_notes(r, s))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	return 0;
}
