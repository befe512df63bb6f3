/* The run of the session layer with the part of each input (lib/session/run.c). */
#ifndef MEMSCOPE_SESSION_RUN_H
#define MEMSCOPE_SESSION_RUN_H

#include "memscope/analysis.h"
#include "memscope/session.h"

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

/* Notes of s from now on (mute 1) neither kept nor given: a second read of an input whose notes
 * were given already; mute 0: kept and given again. */
void ms__session_mute(struct memscope_session *s, int mute);

/* The callback s gives each note to, replaced (fn NULL: none; the notes are still kept): a
 * worker that sends its notes to the process that gives them. */
void ms__session_note_fn(struct memscope_session *s, memscope_note_fn fn, void *ctx);

/* nt (borrowed) kept and given as a note of s arising now: a worker's note, given in the order
 * of the inputs. A note lost to no memory is dropped, as s's own. */
void ms__session_note(struct memscope_session *s, const struct memscope_note *nt);

#endif
