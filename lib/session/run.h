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

#endif
