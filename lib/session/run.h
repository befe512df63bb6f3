/* The run of the session layer with the part of each input (lib/session/run.c). */
#ifndef MEMSCOPE_SESSION_RUN_H
#define MEMSCOPE_SESSION_RUN_H

#include "memscope/analysis.h"

/*
 * memscope_run whose input i is read as part parts[i] of paths[i] (memscope_source_open_part;
 * parts NULL: every input whole). Returns as memscope_run.
 */
int ms__run(const char *const *paths, const uint32_t *parts, size_t n, struct memscope_strtab *st,
	const struct memscope_read_opts *ro, const struct memscope_run_item *items, size_t n_items,
	const struct memscope_run_hooks *hooks, void *ctx, struct memscope_error *err);

struct memscope_session;

/*
 * memscope_session_run over input i of s alone (i < memscope_session_count): its events have src
 * 0, so fresh analyses see one input; its notes, layout and stats are input i's as the session's
 * run keeps them. hooks (may be NULL) get the run's calls with ctx (src 0) besides the session's.
 * Returns as memscope_session_run; MEMSCOPE_E_ARG for an i beyond the inputs.
 */
int ms__session_run_input(struct memscope_session *s, size_t i, struct memscope_strtab *st,
	const struct memscope_run_item *items, size_t n_items,
	const struct memscope_run_hooks *hooks, void *ctx, struct memscope_error *err);

#endif
