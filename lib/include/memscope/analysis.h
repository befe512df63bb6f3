/* One interface for every analysis, and the run that reads each input once and feeds every
 * analysis attached to it. */
#ifndef MEMSCOPE_ANALYSIS_H
#define MEMSCOPE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "event.h"
#include "source.h"

struct memscope_strtab;

/*
 * What the run needs of an analysis: one table per kind of analysis (each analysis file defines
 * its own, memscope_leaks_analysis and so on, declared extern in the analysis' public header),
 * called with that analysis' object as self; lib/analyses/analysis_impl.h makes the table's
 * members from the analysis' typed functions.
 * Events come in file order, input after input (ev->src numbers the inputs from 0). An analysis
 * that needs a process's rows in time order keeps the few it needs and orders them at finish
 * through memscope_time_cmp (memscope/order.h), which holds the one rule of that order.
 */
struct memscope_analysis {
	const char *name; /* "leaks" */
	/* May be NULL. A new object with the analysis' defaults over st (borrowed, must outlive
	 * it), for a caller that knows the analysis by its table alone; NULL on OOM. */
	void *(*create)(struct memscope_strtab *st);
	/* May be NULL when create is. Free what create made (NULL is fine). */
	void (*destroy)(void *self);
	/* One event. 0, or a negative MEMSCOPE_E_* code that stops the read. */
	int (*feed)(void *self, const struct memscope_event *ev);
	/* After the last event of every input. 0 or a negative MEMSCOPE_E_* code. */
	int (*finish)(void *self);
	/*
	 * May be NULL. After finish: 1 when the analysis must be fed every input again (a row it
	 * judges by came after rows it judged; *src and *line say where, *why what: "step or mark
	 * row out of time order"), else 0. The run then calls rewind, feeds it every input
	 * again, and calls finish once more.
	 */
	int (*again)(const void *self, uint32_t *src, uint64_t *line, const char **why);
	/* Drop what the second pass recomputes. 0 or a negative MEMSCOPE_E_* code. */
	int (*rewind)(void *self);
	/* May be NULL. Input src has been fed whole; s is its source, still open (its format, its
	 * read's statistics). Called after every input of every pass the analysis is fed. 0, or a
	 * negative MEMSCOPE_E_* code that stops the run. */
	int (*input_end)(void *self, uint32_t src, const struct memscope_source *s);
	/* The kinds of events it has no use for (bit 1u << kind): a run whose analyses all skip a
	 * kind lets the readers leave it out (memscope_read_opts.skip_kinds). 0: none. */
	uint32_t skip_kinds;
};

/*
 * The analyses that can be made from their table alone (create), in a fixed order, and the one
 * named name (NULL when none is). Borrowed, static.
 */
const struct memscope_analysis *const *memscope_analyses(size_t *n);
const struct memscope_analysis *memscope_analysis_find(const char *name);

/* What the run tells its caller as it goes (every member may be NULL). */
struct memscope_run_hooks {
	/* Input src (named name, as given) has been read whole; its source is still open, for its
	 * format and stats. pass is 1, or 2 for the second pass. */
	void (*input_read)(void *ctx, uint32_t src, const char *name,
		const struct memscope_source *s, unsigned pass);
	/* A second pass is about to start because of the row at (src, line): why (as the
	 * analysis' again hook says it). */
	void (*again)(void *ctx, uint32_t src, uint64_t line, const char *why);
};

/* One analysis of a run: its table and its object. */
struct memscope_run_item {
	const struct memscope_analysis *analysis;
	void *self;
};

/*
 * One read of n inputs for the n_items analyses of items: each input is opened (path "-" is
 * standard input), read once and every event fed to each analysis in turn, in the order given
 * (the kinds every analysis skips added to ro's skip_kinds, which the second pass's analysis
 * alone decides); then each analysis finishes, in that order (so one may use the results of one
 * before it). An analysis whose again hook asks for it is fed every input a second time, alone; an
 * input that cannot be read twice (standard input, a pipe) is then an error: MEMSCOPE_E_INVALID at
 * the row the analysis named. ro as memscope_source_open's (NULL: defaults); its src is set per
 * input. st is the table every input's strings go into (borrowed). hooks and ctx may be NULL.
 * Returns 0 or the first error, with err saying where (every event before it was fed): one of
 * an open or a read (memscope_source_open, memscope_source_read), MEMSCOPE_E_INVALID for an
 * input that cannot be read twice (at the row the analysis named), the negative code an
 * analysis' feed returned (out of memory: MEMSCOPE_E_NOMEM; at the input being read) or its
 * finish or rewind returned (no position), MEMSCOPE_E_ARG when n_items is 0 (nothing is read).
 */
int memscope_run(const char *const *paths, size_t n, struct memscope_strtab *st,
	const struct memscope_read_opts *ro, const struct memscope_run_item *items, size_t n_items,
	const struct memscope_run_hooks *hooks, void *ctx, struct memscope_error *err);

#endif
