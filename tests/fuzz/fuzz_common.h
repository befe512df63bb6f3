/* Shared body of the reader fuzz harnesses: read all events, re-encode them, and check the capture
 * round trip. */
#ifndef MEMSCOPE_FUZZ_COMMON_H
#define MEMSCOPE_FUZZ_COMMON_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memscope/memscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_ctx {
	struct memscope_csv_writer *csv;
	struct memscope_capture_writer *cap;
	FILE *facts; /* the typed fields of every event, which the CSV does not show */
	uint64_t n;
};

static int fuzz_on_event(void *ctx, const struct memscope_event *ev)
{
	struct fuzz_ctx *c = ctx;
	struct memscope_error err;

	c->n++;
	if (memscope_csv_writer_write(c->csv, ev, &err) ||
		memscope_capture_writer_write(c->cap, ev, &err))
		abort();
	fprintf(c->facts,
		"%" PRIu64 ": kind %u sub %u pool %u func %u flags %#x dev %d size %" PRId64
		" alloc_id %" PRIu64 " total %" PRId64 " used %" PRId64 " n_attrs %u\n",
		c->n, ev->kind, ev->subtype, ev->pool, ev->func, ev->flags, ev->device, ev->size,
		ev->alloc_id, ev->total, ev->used, ev->n_attrs);
	return 0;
}

/*
 * Events of a source written as CSV, followed by their typed fields, into *csv_out (malloc'd,
 * caller frees). Returns the read status.
 */
static int fuzz_read(const uint8_t *data, size_t size, int lenient, char **csv_out, size_t *csv_len,
	char **cap_out, size_t *cap_len, uint64_t *n_events)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_read_opts opts = { 0 };
	struct memscope_error err;
	struct fuzz_ctx c = { 0 };
	FILE *fcsv = open_memstream(csv_out, csv_len);
	FILE *fcap = cap_out ? open_memstream(cap_out, cap_len) : fopen("/dev/null", "wb");
	char *facts = NULL;
	size_t facts_len = 0;
	int rc;

	c.facts = open_memstream(&facts, &facts_len);
	if (!st || !fcsv || !fcap || !c.facts)
		abort();
	opts.lenient = lenient;
	c.csv = memscope_csv_writer_new(fcsv, st);
	c.cap = memscope_capture_writer_new(fcap, st);
	rc = memscope_source_open_mem(&src, data, size, "fuzz", st, &opts, &err);
	if (!rc)
		rc = memscope_source_read(src, fuzz_on_event, &c, &err);
	if (rc) {
		/* every failure names itself */
		if (!err.msg[0] || err.code != rc)
			abort();
	}
	if (memscope_csv_writer_finish(c.csv, &err) || memscope_capture_writer_finish(c.cap, &err))
		abort();
	memscope_csv_writer_free(c.csv);
	memscope_capture_writer_free(c.cap);
	memscope_source_close(src);
	memscope_strtab_free(st);
	fclose(fcsv);
	fclose(fcap);
	fclose(c.facts);
	*csv_out = realloc(*csv_out, *csv_len + facts_len + 1);
	if (!*csv_out)
		abort();
	memcpy(*csv_out + *csv_len, facts, facts_len + 1);
	*csv_len += facts_len;
	free(facts);
	*n_events = c.n;
	return rc;
}

/*
 * Whatever was read, re-encoded as capture, must read back to the same events: the CSV and the
 * typed fields written from the capture equal those written from the original events.
 */
static void fuzz_check_capture_roundtrip(
	const char *csv1, size_t csv1_len, const char *cap, size_t cap_len, uint64_t n1)
{
	char *csv2 = NULL, *cap2 = NULL;
	size_t csv2_len = 0, cap2_len = 0;
	uint64_t n2 = 0;

	if (fuzz_read((const uint8_t *)cap, cap_len, 0, &csv2, &csv2_len, &cap2, &cap2_len, &n2))
		abort();
	if (n1 != n2 || csv1_len != csv2_len || memcmp(csv1, csv2, csv1_len)) {
		/* MEMSCOPE_FUZZ_DEBUG=1 shows both sides when triaging a reproducer */
		if (getenv("MEMSCOPE_FUZZ_DEBUG"))
			fprintf(stderr, "--- read:\n%.*s--- capture round trip:\n%.*s",
				(int)csv1_len, csv1, (int)csv2_len, csv2);
		abort();
	}
	free(csv2);
	free(cap2);
}

/* Read data strictly and leniently; whatever was read must survive the capture round trip. */
static void fuzz_both_modes(const uint8_t *buf, size_t size)
{
	int lenient;

	for (lenient = 0; lenient <= 1; lenient++) {
		char *csv = NULL, *cap = NULL;
		size_t csv_len = 0, cap_len = 0;
		uint64_t n = 0;

		fuzz_read(buf, size, lenient, &csv, &csv_len, &cap, &cap_len, &n);
		fuzz_check_capture_roundtrip(csv, csv_len, cap, cap_len, n);
		free(csv);
		free(cap);
	}
}

#endif
