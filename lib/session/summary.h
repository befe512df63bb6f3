/* One input's summary read over analyses its caller keeps (lib/session/summary.c): the read of
 * memscope_summary_read for memscope-report, which goes on to the details of the same read. */
#ifndef MEMSCOPE_SESSION_SUMMARY_H
#define MEMSCOPE_SESSION_SUMMARY_H

#include "memscope/memscope.h"

/* the most extra run items of struct ms__summary_run */
#define MS__SUMMARY_EXTRA_MAX 4

/* The analyses a summary is read into, the caller's: made by it (with the options
 * memscope_summary_read's are made with: NULL), fed and finished here, never freed here. */
struct ms__summary_run {
	struct memscope_strtab *st; /* every string of the read */
	struct memscope_leaks *leaks;
	struct memscope_peak *peak;
	struct memscope_inefficient *ineff;
	/* fed after them, in order, and finished after them (NULL, 0: none; at most
	 * MS__SUMMARY_EXTRA_MAX) */
	const struct memscope_run_item *extra;
	size_t n_extra;
	/* NULL: in->path is read with ro; else input `input` of this session
	 * (ms__session_run_input: its part, its notes) */
	struct memscope_session *session;
	size_t input;
};

/*
 * memscope_summary_read of in into *s with the analyses of run: the same read, the same figures,
 * the same summary of an input that cannot be read (status and message; err says the same). The
 * analyses hold the results after it (when it returns 0). Returns as memscope_summary_read.
 */
int ms__summary_read_into(struct memscope_summary *s, const struct memscope_batch_input *in,
	uint64_t index, const struct memscope_read_opts *ro, const struct ms__summary_run *run,
	struct memscope_error *err);

#endif
