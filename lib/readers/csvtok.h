/* A zero-copy CSV row tokenizer over a contiguous buffer, with libcsv's non-strict dialect (no
 * blank trimming). */
#ifndef MEMSCOPE_CSVTOK_H
#define MEMSCOPE_CSVTOK_H

#include <stddef.h>
#include <stdint.h>

#include "../core/internal.h"

#define CSVTOK_MAX_FIELDS 64
/* a row longer than this is taken for an unterminated quote */
#define CSVTOK_MAX_ROW_BYTES ((size_t)64 << 20)

/*
 * The dialect is exactly what libcsv 3 does with CSV_REPALL_NL | CSV_EMPTY_IS_NULL and a
 * space function that says "no blanks" (tests/fuzz/fuzz_csvtok.c checks it differentially):
 * fields end at ',', rows at CR or LF, blank lines are skipped; a field starting with '"' is
 * quoted: inside it '""' is one quote, a '"' followed by ',', CR, LF or the end of input closes
 * it, and any other '"' is kept literally (the reference writes inner quotes un-doubled); in an
 * unquoted field quotes are literal. An empty unquoted field is "null".
 */
struct csvtok_field {
	const char
		*p; /* borrowed: into the input buffer, or into the tokenizer's unescape buffer */
	size_t len;
	int null; /* empty and unquoted */
	int quoted;
	size_t raw_off; /* the field as written, quotes included: raw_len bytes at p + raw_off, */
	size_t raw_len; /* p being the buffer given to ms__csvtok_row */
};

struct csvtok {
	struct csvtok_field f[CSVTOK_MAX_FIELDS];
	unsigned n;	 /* fields of the row; may exceed CSVTOK_MAX_FIELDS (extra ones not kept) */
	uint64_t row_nl; /* line ends of the row (LF, CR LF, lone CR): inside quoted fields and
			    its terminator */
	struct buf unq;	 /* unescaped copies of fields that held '""' */
};

enum csvtok_status {
	CSVTOK_ROW = 1,	 /* a row is in t (valid until the next call or the buffer changes) */
	CSVTOK_MORE = 0, /* the rest of the buffer is an incomplete row: give more input */
	CSVTOK_END = 2,	 /* final input exhausted (only blank lines were left) */
	CSVTOK_OPEN_QUOTE = -1, /* final input ends inside a quoted field */
	CSVTOK_NOMEM = -2,
};

/*
 * Tokenize the next row of p[0..n). final says no input follows. *used gets the bytes consumed
 * (blank lines before the row included, also with CSVTOK_MORE), *lead_nl the line ends of
 * those blank lines; the row's own line ends are in t->row_nl. A line ends at LF, CR LF or a
 * lone CR, so a CR at the end of non-final input waits for more. Free t->unq with ms__buf_free.
 */
int ms__csvtok_row(
	struct csvtok *t, const char *p, size_t n, int final, size_t *used, uint64_t *lead_nl);

/* Whether p[0..n), the first bytes of an input, may be a CSV: no NUL byte in its first line
 * (within 4 KiB). The CSV sniffers' test; a NUL byte further on is ms__csv_read_rows' to name. */
int ms__csv_sniff_text(const unsigned char *p, size_t n);

struct memscope_source;
struct memscope_error;

/* One row of a CSV read by ms__csv_read_rows: 0 to go on, else the status to stop with (err set).
 */
typedef int (*csv_row_fn)(void *ctx, const struct csvtok_field *f, unsigned n, uint64_t line);

/*
 * Every row of src (the header too: it is the first) to row, streamed through src's window,
 * after a UTF-8 byte order mark. Returns 0 at the end of input, row's status, or MEMSCOPE_E_
 * INVALID (a row over CSVTOK_MAX_ROW_BYTES, a NUL byte in a row: its line and column named),
 * MEMSCOPE_E_TRUNCATED (the file ends inside a
 * quoted field), MEMSCOPE_E_IO, MEMSCOPE_E_NOMEM, with err naming src's line.
 */
int ms__csv_read_rows(
	struct memscope_source *src, csv_row_fn row, void *ctx, struct memscope_error *err);

#endif
