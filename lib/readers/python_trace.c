/* Streaming reader of msMemScope python_trace CSV files: one function call per line. */
#include <stdio.h>
#include <string.h>

#include "../core/internal.h"
#include "csvtok.h"
#include "reader.h"

static const char trace_header[] = "FuncInfo,StartTime(ns),EndTime(ns),Thread Id,Process Id";

struct trace_state {
	struct memscope_source *src;
	memscope_trace_fn fn;
	void *ctx;
	struct memscope_error *err;
};

#define trace_error(ts, line, ...) ms__source_bad_row((ts)->src, (ts)->err, line, __VA_ARGS__)

/*
 * One line without its terminator. The reference writes FuncInfo unquoted, so a comma in a path
 * would shift the columns: the four number columns are taken from the right instead.
 */
static int trace_line(struct trace_state *ts, const char *s, size_t n, uint64_t line)
{
	static const char *const names[4] = { "StartTime", "EndTime", "Thread Id", "Process Id" };
	struct memscope_trace_row r = { 0 };
	uint64_t *vals[4] = { &r.start_ns, &r.end_ns, &r.tid, &r.pid };
	size_t end = n;
	int i, rc;

	for (i = 3; i >= 0; i--) {
		const char *comma = NULL, *f;
		size_t k;

		for (k = end; k > 0; k--)
			if (s[k - 1] == ',') {
				comma = s + k - 1;
				break;
			}
		if (!comma)
			return trace_error(ts, line, "expected 5 fields, found %d", 4 - i);
		f = comma + 1;
		k = end - (size_t)(f - s);
		if (i < 2 && k == 3 && memcmp(f, "N/A", 3) == 0)
			*vals[i] = MEMSCOPE_ID_NONE;
		else if (ms__parse_u64(f, k, vals[i]) || *vals[i] == MEMSCOPE_ID_NONE)
			return trace_error(ts, line,
				reader_exp_notation(f, k) ? "%s \"%.*s\" " READER_EXP_NOTATION
							  : "invalid %s \"%.*s\"",
				names[i], CLIP(k), f);
		end = (size_t)(comma - s);
	}
	r.func = s;
	r.func_len = end;
	r.src = ts->src->opts.src;
	r.line = line;
	ts->src->stats.n_events++;
	rc = ts->fn(ts->ctx, &r);
	if (rc == 0)
		return 0;
	rc = rc < 0 ? rc : MEMSCOPE_E_STOPPED;
	if (rc != MEMSCOPE_E_NOMEM)
		memscope_error_set(ts->err, rc, ts->src->name, line, "%s", memscope_strerror(rc));
	return rc;
}

static int python_trace_read(
	struct memscope_source *src, memscope_trace_fn fn, void *ctx, struct memscope_error *err)
{
	struct trace_state ts = { src, fn, ctx, err };
	struct window w;
	uint64_t line = 1;
	int rc, have_header = 0;

	rc = ms__window_open(&w, src, err);
	if (!rc && w.len >= 3 && memcmp(w.data, "\xef\xbb\xbf", 3) == 0)
		w.start = 3; /* UTF-8 byte order mark */
	while (!rc) {
		const char *p = w.data + w.start;
		size_t avail = w.len - w.start, n;
		const char *nl = p, *end = p + avail;

		/* a line ends at LF, CR LF or a lone CR (one at the end waits for the next byte) */
		while (nl < end && *nl != '\n' && *nl != '\r')
			nl++;
		if (nl == end)
			nl = NULL;
		if ((!nl || (*nl == '\r' && nl + 1 == end)) && !w.final) {
			rc = ms__window_fill(&w, src, CSVTOK_MAX_ROW_BYTES, err);
			if (rc == MEMSCOPE_E_INVALID)
				rc = memscope_error_set(err, rc, src->name, line,
					"line longer than %zu MiB", CSVTOK_MAX_ROW_BYTES >> 20);
			continue;
		}
		if (!nl && avail == 0)
			break;
		n = nl ? (size_t)(nl - p) : avail;
		w.start += !nl ? n : *nl == '\r' && nl + 1 < end && nl[1] == '\n' ? n + 2 : n + 1;
		if (n == 0) {
			/* blank line */
		} else if (have_header) {
			rc = trace_line(&ts, p, n, line);
		} else if (n == sizeof(trace_header) - 1 && memcmp(p, trace_header, n) == 0) {
			have_header = 1;
		} else {
			rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, line,
				"not a python_trace CSV: header is not \"%s\"", trace_header);
		}
		line++;
	}
	if (!rc && !have_header)
		rc = memscope_error_set(
			err, MEMSCOPE_E_INVALID, src->name, 0, "empty file (no header line)");
	ms__window_close(&w);
	return rc;
}

/* Text whose first line starts with the header's first column (after a byte order mark). */
static int python_trace_sniff(
	const unsigned char *p, size_t n, int eof, const char *name, struct memscope_error *err)
{
	(void)eof, (void)name, (void)err;
	if (!ms__sniff_text(p, n))
		return 0;
	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3, n -= 3;
	return n >= 9 && memcmp(p, "FuncInfo,", 9) == 0;
}

const struct reader ms__python_trace_reader = {
	.format = MEMSCOPE_FORMAT_PYTHON_TRACE,
	.name = "python-trace",
	.what = "a python_trace CSV",
	.sniff = python_trace_sniff,
	.read_trace = python_trace_read,
	.walk = READER_WALK_TRACE,
	.prefix = "python_trace_",
	.endings = (const char *const[]){ ".csv", NULL },
};
