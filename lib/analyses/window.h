/* A window of time or of a step cut out of a finished timeline or peak (memscope_timeline_window,
 * memscope_peak_window): the checks before the cut and the messages of a window that finds
 * nothing; library-internal. */
#ifndef MEMSCOPE_WINDOW_H
#define MEMSCOPE_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "memscope/error.h"
#include "memscope/timeline.h"

struct memscope_steps;

/* Whether w can be cut of a series that is finished (finished) and not cut yet (cut 0): 0, or
 * MEMSCOPE_E_ARG set in err (a window is cut once, after finish; it is a step or a time span, not
 * both). */
int ms__window_can_cut(const struct memscope_timeline_window *w, int finished, int cut,
	struct memscope_error *err);

/* Input src (named input) of a step window has no step `step`: MEMSCOPE_E_INVALID set in err,
 * saying that it has no steps at all (any 0), else which steps it has (memscope_steps_text of
 * steps); MEMSCOPE_E_NOMEM (set too) when that text cannot be made. */
int ms__window_no_step(const struct memscope_steps *steps, uint32_t src, const char *input,
	uint64_t step, int any, struct memscope_error *err);

/* Nothing of any input in the window: MEMSCOPE_E_INVALID set in err, said of inputs[0] with the
 * span of its rows (span_ns) when it is the only input and has rows (has_span). */
int ms__window_empty(const char *const *inputs, size_t n_inputs, int has_span, uint64_t span_ns,
	struct memscope_error *err);

#endif
