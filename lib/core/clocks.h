/* The clocks of an input's files: which files of a folder (a profiler output) were recorded far
 * apart in time from the others, and what keeps them on a time axis of their own. */
#ifndef MEMSCOPE_CLOCKS_H
#define MEMSCOPE_CLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "memscope/event.h"

struct memscope_strtab;

/*
 * The rule (formats/msprof.md "Files far apart in time"): the files of an input are delivered one
 * after the other, each whole. A file whose first timed row is more than CLOCKS_GAP_NS before or
 * after the rows of every clock so far of its input starts a clock of its own; else it joins the
 * clock its row is near. The input's first clock keeps its times; a later one is shifted so that
 * its first row falls on the first row of the input's first clock (shift_ns taken off its times).
 * Events of an input that is one file (memscope_event.file 0) are on one clock, unshifted; rows
 * without a time (0, PLAN rows) take their file's shift and decide nothing.
 */
#define CLOCKS_GAP_NS (UINT64_C(24) * 3600 * 1000000000)

struct clocks_span {
	uint32_t src;
	uint64_t first_ns;     /* its first row as delivered */
	uint64_t lo_ns, hi_ns; /* its rows' earliest and latest times */
	int64_t shift_ns;      /* taken off its times: 0 for an input's first clock (a gap past
				  2^63 ns saturated at +-INT64_MAX) */
};

struct clocks_file {
	uint32_t src, file;
	uint32_t clock; /* its clock (index of spans), CLOCKS_NONE until a timed row */
};
#define CLOCKS_NONE UINT32_MAX

/* Zero-initialise; free with ms__clocks_free. One object, one thread. */
struct clocks {
	struct clocks_span *spans;
	size_t n_spans, cap_spans;
	struct clocks_file *files;
	size_t n_files, cap_files;
	size_t last; /* files index of the last event's file */
};

void ms__clocks_free(struct clocks *c);

/*
 * One event (in delivery order): *shift_ns what to take off its time to put it on its input's
 * first clock (0 but for a file recorded far apart). 0 or MEMSCOPE_E_NOMEM.
 */
int ms__clocks_feed(struct clocks *c, const struct memscope_event *ev, int64_t *shift_ns);

/* The time of ev on its input's first clock: its ts_ns less shift_ns (at least 1, at most
 * UINT64_MAX), 0 kept as "no time". */
static inline uint64_t clocks_time(uint64_t ts_ns, int64_t shift_ns)
{
	uint64_t back = shift_ns < 0 ? 0 - (uint64_t)shift_ns : (uint64_t)shift_ns;

	if (!ts_ns || !shift_ns)
		return ts_ns;
	if (shift_ns > 0)
		return ts_ns > back ? ts_ns - back : 1;
	return ts_ns > UINT64_MAX - back ? UINT64_MAX : ts_ns + back;
}

/*
 * What an analysis that draws or measures time is fed instead of ev: ev itself, or when ev's file
 * is on a later clock of its input, a copy of it in *tmp with its time on the input's first clock
 * (*shift_ns, may be NULL, gets what was taken off). NULL on OOM.
 */
const struct memscope_event *ms__clocks_event(struct clocks *c, const struct memscope_event *ev,
	struct memscope_event *tmp, int64_t *shift_ns);

/* The shift of (src, file) (0 when it has none: unknown, or on its input's first clock). */
int64_t ms__clocks_shift(const struct clocks *c, uint32_t src, uint32_t file);

/* A track's label's ending for a shift: " (own clock, 342.1 days later)", "" for 0. Returns
 * buf. */
const char *ms__clocks_label(int64_t shift_ns, char *buf, size_t n);

/* How many clocks input src has (0 when it had no timed row of a folder's file). */
size_t ms__clocks_count(const struct clocks *c, uint32_t src);

/*
 * When input src has more than one clock: 1 and a line into buf (n bytes, NUL-terminated) naming
 * the files of each later clock, how far apart they are from the first clock's files, and what is
 * done about it; file names are st's text, their folder left out. Else 0.
 */
int ms__clocks_note(const struct clocks *c, uint32_t src, const struct memscope_strtab *st,
	char *buf, size_t n);

#endif
