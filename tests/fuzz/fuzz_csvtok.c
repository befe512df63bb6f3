/* Differential libFuzzer harness: our CSV tokenizer must split rows and fields exactly as libcsv
 * does, whole or chunked. */
#include <csv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers/csvtok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* rows as text: fields joined by 0x1f, null fields as 0x1e, rows ended by 0x1d */
struct out {
	struct buf b;
	unsigned n_fields;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (ms__buf_append(&o->b, p, n))
		abort();
}

static void lib_field(void *p, size_t n, void *ctx)
{
	struct out *o = ctx;

	if (o->n_fields++)
		put(o, "\x1f", 1);
	if (!p)
		put(o, "\x1e", 1);
	else
		put(o, p, n);
}

static void lib_row(int c, void *ctx)
{
	struct out *o = ctx;

	(void)c;
	if (o->n_fields) /* libcsv reports blank lines as empty rows: we skip them */
		put(o, "\x1d", 1);
	o->n_fields = 0;
}

static int no_space(unsigned char c)
{
	(void)c;
	return 0;
}

/* 0 when the input ends inside a quoted field (we refuse that, libcsv does not): skip */
static int run_libcsv(const uint8_t *data, size_t size, struct out *o)
{
	struct csv_parser p;

	csv_init(&p, CSV_REPALL_NL | CSV_EMPTY_IS_NULL);
	csv_set_space_func(&p, no_space);
	if (csv_parse(&p, data, size, lib_field, lib_row, o) != size)
		abort();
	if (p.quoted && p.pstate == 2) {
		csv_free(&p);
		return 0;
	}
	csv_fini(&p, lib_field, lib_row, o);
	csv_free(&p);
	return 1;
}

/* Our tokenizer fed in chunks of `step` bytes (0: all at once), as the reader's window does. */
static int run_ours(const uint8_t *data, size_t size, size_t step, struct out *o)
{
	struct csvtok t;
	size_t start = 0, avail = step ? (step < size ? step : size) : size;

	memset(&t, 0, sizeof(t));
	for (;;) {
		size_t used;
		uint64_t lead;
		int final = avail == size;
		int r = ms__csvtok_row(
			&t, (const char *)data + start, avail - start, final, &used, &lead);
		unsigned i;

		start += used;
		if (r == CSVTOK_ROW) {
			if (t.n > CSVTOK_MAX_FIELDS)
				abort(); /* the caller keeps the inputs small enough */
			for (i = 0; i < t.n; i++) {
				if (i)
					put(o, "\x1f", 1);
				if (t.f[i].null)
					put(o, "\x1e", 1);
				else
					put(o, t.f[i].p, t.f[i].len);
			}
			put(o, "\x1d", 1);
		} else if (r == CSVTOK_MORE) {
			if (final)
				abort(); /* MORE is never the answer to final input */
			avail = avail + step < size ? avail + step : size;
		} else if (r == CSVTOK_END) {
			break;
		} else if (r == CSVTOK_OPEN_QUOTE) {
			ms__buf_free(&t.unq);
			return 0;
		} else {
			abort();
		}
	}
	ms__buf_free(&t.unq);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct out a = { { 0 }, 0 }, b = { { 0 }, 0 };
	size_t i, commas = 0;
	int ok_a, ok_b;

	for (i = 0; i < size; i++)
		commas += data[i] == ',';
	if (commas >= CSVTOK_MAX_FIELDS)
		return 0;
	ok_a = run_libcsv(data, size, &a);
	ok_b = run_ours(data, size, 0, &b);
	if (ok_a != ok_b)
		abort();
	/* (an open quote leaves libcsv with a half-reported row: nothing more to compare then) */
	if (ok_a && (a.b.len != b.b.len || (a.b.len && memcmp(a.b.p, b.b.p, a.b.len))))
		abort();
	/* the same rows when the input arrives in small pieces */
	for (i = 1; ok_a && i <= 7; i += 3) {
		struct out c = { { 0 }, 0 };

		if (!run_ours(data, size, i, &c) || c.b.len != b.b.len ||
			(c.b.len && memcmp(c.b.p, b.b.p, c.b.len)))
			abort();
		ms__buf_free(&c.b);
	}
	ms__buf_free(&a.b);
	ms__buf_free(&b.b);
	return 0;
}
