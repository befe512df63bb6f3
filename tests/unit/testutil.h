/* Helpers shared by the unit tests: read inputs into an event buffer, write events back as text. */
#ifndef MEMSCOPE_TESTUTIL_H
#define MEMSCOPE_TESTUTIL_H

#include <check.h>

#include "memscope/memscope.h"

struct tread {
	struct memscope_strtab *st;
	struct memscope_evbuf *evs;
	struct memscope_error err;
	struct memscope_read_stats stats;
	int rc;
};

/* Read a whole input into t (t->rc is the read status; events before an error are kept). */
int tread_mem(struct tread *t, const void *data, size_t len, const struct memscope_read_opts *o);
int tread_file(struct tread *t, const char *path, const struct memscope_read_opts *o);
/* tread_file of part of path only (memscope_source_open_part). */
int tread_part(
	struct tread *t, const char *path, uint32_t part, const struct memscope_read_opts *o);
void tread_free(struct tread *t);

/* The events of the file at path read with reads of `chunk` bytes after the sniffed first 256
 * KiB, as CSV (malloc'd; *rc the read's status, *len the CSV's length). */
char *tread_chunked(const char *path, size_t chunk, int *rc, size_t *len);

/* The events of t written by the CSV / capture writer (malloc'd; caller frees). */
char *tread_csv(const struct tread *t, size_t *len);
char *tread_capture(const struct tread *t, size_t *len);

/* Path of a file in the project's testdata/ (static buffer). */
const char *testdata(const char *name);
/* Whole file (malloc'd, NUL-terminated). */
char *slurp(const char *path, size_t *len);
/* Text of string id. */
const char *tstr(const struct tread *t, uint32_t id);

/* A small deterministic PRNG for random cases: seed trand_state (not 0); trand(n) is in [0, n). */
extern uint64_t trand_state;
uint64_t trand(uint64_t n);

/* Run a suite; returns the process exit status. */
int run_suite(Suite *s);

#endif
