/* memscope-report's findings as one JSON object (formats/report.md): the inputs, the verdicts,
 * the ranks, the baseline and the notes around the detail members (report_detail.c), and the
 * writer that hands that JSON to the page or writes the text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../writers/report.h"
#include "html.h"
#include "report_impl.h"

/* ,"key":"text" or ,"key":null for a field the summary does not have. */
static void sum_str(
	FILE *out, const char *key, const struct memscope_summary *s, enum memscope_sum_field f)
{
	fprintf(out, ",\"%s\":", key);
	if (s->has & UINT64_C(1) << f && s->str[f])
		ms__json_cstr(out, s->str[f]);
	else
		fputs("null", out);
}

/* ,"key":N or ,"key":null. */
static void sum_num(
	FILE *out, const char *key, const struct memscope_summary *s, enum memscope_sum_field f)
{
	int64_t v;

	if (ms__report_num(s, f, &v))
		fprintf(out, ",\"%s\":%lld", key, (long long)v);
	else
		fprintf(out, ",\"%s\":null", key);
}

/* The "inputs" of one side: the rows as memscope-batch names them. */
static void inputs(FILE *out, const struct memscope_report *r, enum memscope_report_side side)
{
	size_t i;

	fputc('[', out);
	for (i = 0; i < r->n_rows[side]; i++) {
		const struct memscope_summary *s = &r->rows[side][i];

		fprintf(out, "%s{\"index\":%zu", i ? "," : "", i);
		sum_str(out, "name", s, MEMSCOPE_SUM_INPUT);
		sum_num(out, "rank", s, MEMSCOPE_SUM_RANK);
		sum_str(out, "node", s, MEMSCOPE_SUM_NODE);
		sum_str(out, "device", s, MEMSCOPE_SUM_DEVICE);
		sum_str(out, "format", s, MEMSCOPE_SUM_FORMAT);
		sum_str(out, "status", s, MEMSCOPE_SUM_STATUS);
		sum_str(out, "error", s, MEMSCOPE_SUM_ERROR);
		sum_str(out, "end", s, MEMSCOPE_SUM_END);
		sum_num(out, "peak_bytes", s, MEMSCOPE_SUM_PEAK_BYTES);
		sum_num(out, "events", s, MEMSCOPE_SUM_EVENTS);
		fputc('}', out);
	}
	fputc(']', out);
}

static void verdicts(FILE *out, const struct memscope_report *r)
{
	size_t i;

	fputs(",\"verdicts\":[", out);
	for (i = 0; i < r->n_verdicts; i++) {
		const struct ms__report_verdict *v = &r->verdicts[i];

		fprintf(out, "%s{\"id\":\"%s\",\"level\":\"%s\",\"section\":\"%s\"", i ? "," : "",
			v->id, v->level, v->section);
		if (v->has_bytes)
			fprintf(out, ",\"bytes\":%lld", (long long)v->bytes);
		else
			fputs(",\"bytes\":null", out);
		if (v->has_count)
			fprintf(out, ",\"count\":%llu", (unsigned long long)v->count);
		fputs(",\"text\":", out);
		ms__json_cstr(out, v->text);
		fputc('}', out);
	}
	fputc(']', out);
}

/* ,"key":["text",...] */
static void texts(FILE *out, const char *key, char *const *t, size_t n)
{
	size_t i;

	fprintf(out, ",\"%s\":[", key);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		ms__json_cstr(out, t[i]);
	}
	fputc(']', out);
}

int ms__report_json(FILE *out, const struct memscope_report *r)
{
	fprintf(out, "{\"memscope_report\":1,\"producer\":\"memscope-report@%s\",\"inputs\":",
		memscope_version());
	inputs(out, r, MEMSCOPE_REPORT_RUN);
	if (r->detail)
		fprintf(out, ",\"detail\":%zu", r->detail->input);
	else
		fputs(",\"detail\":null", out);
	verdicts(out, r);
	ms__report_json_detail(out, r);
	texts(out, "unchecked", r->unchecked, r->n_unchecked);
	fputs(",\"ranks\":", out);
	ms__ranks_json(out, r->ranks);
	fputs(",\"baseline\":", out);
	ms__baseline_json(out, r->ranks);
	if (r->read[MEMSCOPE_REPORT_BASELINE]) {
		fputs(",\"baseline_inputs\":", out);
		inputs(out, r, MEMSCOPE_REPORT_BASELINE);
	}
	texts(out, "notes", r->notes, r->n_notes);
	fputs("}\n", out);
	return ferror(out) ? MEMSCOPE_E_IO : 0;
}

/* The page's title: the one input's name, or "N inputs". */
static void title_of(const struct memscope_report *r, char *buf, size_t size)
{
	size_t n = r->n_rows[MEMSCOPE_REPORT_RUN];

	if (n == 1)
		snprintf(buf, size, "%s", r->rows[MEMSCOPE_REPORT_RUN][0].str[MEMSCOPE_SUM_INPUT]);
	else
		snprintf(buf, size, "%zu inputs", n);
}

/* The page: the JSON made in memory, then wrapped. */
static int write_html(FILE *out, const struct memscope_report *r, struct memscope_error *err)
{
	char *json = NULL, title[512];
	size_t len = 0;
	FILE *mem = open_memstream(&json, &len);
	int rc;

	if (!mem)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	rc = ms__report_json(mem, r);
	if (fclose(mem) || rc) {
		free(json);
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	}
	title_of(r, title, sizeof(title));
	rc = ms__report_write_html(out, json, len, title, err);
	free(json);
	return rc;
}

int memscope_report_write(FILE *out, enum memscope_report_format fmt,
	const struct memscope_report *r, struct memscope_error *err)
{
	int rc;

	memscope_error_clear(err);
	if (!r->finished)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "a report not finished");
	errno = 0;
	switch (fmt) {
	case MEMSCOPE_REPORT_TEXT:
		ms__report_text(out, r);
		break;
	case MEMSCOPE_REPORT_JSON:
		ms__report_json(out, r);
		break;
	case MEMSCOPE_REPORT_HTML:
		if ((rc = write_html(out, r, err)))
			return rc;
		break;
	default:
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "no such report format");
	}
	fflush(out);
	return ms__write_end(out, 0, err);
}
