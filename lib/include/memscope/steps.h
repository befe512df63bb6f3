/* Training steps of each process, from mstx "step start" ranges or SYSTEM STEP rows
 * (formats/analyses.md "Steps"), and event positions in a process's time order. */
#ifndef MEMSCOPE_STEPS_H
#define MEMSCOPE_STEPS_H

#include <stdint.h>

#include "event.h"
#include "order.h"

struct memscope_strtab;

/* Where a process's steps come from: the first kind of boundary row it has wins. */
enum memscope_step_source {
	MEMSCOPE_STEPS_NONE = 0,
	/* mstx Range_start named "step start" starts step s (1-based); the Range_end that closes
	 * it on its thread ends it (other ranges opened on that thread after it close first); a
	 * new "step start" before that leaves step s without an end */
	MEMSCOPE_STEPS_MSTX,
	/* msmemscope.step(): SYSTEM STEP row n ends step n and starts step n + 1; step 1 starts
	 * with the process */
	MEMSCOPE_STEPS_SYSTEM,
};

/*
 * The step boundaries of every (input, process). Memory grows with the boundary rows fed (every
 * mstx range and SYSTEM STEP row, about 48 bytes each), not with the other events.
 */
struct memscope_steps;

/* st is the table the events' names are in (borrowed, must outlive this). NULL on OOM. */
struct memscope_steps *memscope_steps_new(const struct memscope_strtab *st);
void memscope_steps_free(struct memscope_steps *s);

/*
 * Take ev if it is a boundary row (an mstx Range_start or Range_end, a SYSTEM STEP row): returns
 * 2 when it starts or ends a step (or may, when it came out of order), 1 for another boundary
 * row, 0 when ev is not one, MEMSCOPE_E_NOMEM. Boundaries are applied as they come,
 * which is right while each process's boundaries come in time order; one that comes earlier than
 * a boundary fed before it marks the steps out of order until memscope_steps_resolve.
 */
int memscope_steps_feed(struct memscope_steps *s, const struct memscope_event *ev);

/*
 * 1 when a boundary came out of time order since the last resolve (*src and *line, if given,
 * say where the first one was), else 0.
 */
int memscope_steps_out_of_order(const struct memscope_steps *s, uint32_t *src, uint64_t *line);

/* Put every process's boundaries in time order and rebuild its steps. 0 or MEMSCOPE_E_NOMEM. */
int memscope_steps_resolve(struct memscope_steps *s);

/* The steps of one process (borrowed, valid until the next feed, resolve or free). */
struct memscope_step_proc;

/* The process's steps; NULL when it has no boundary rows. */
const struct memscope_step_proc *memscope_steps_proc(
	const struct memscope_steps *s, uint32_t src, uint64_t pid);
enum memscope_step_source memscope_steps_source(const struct memscope_step_proc *p);
/* Steps started so far (SYSTEM: the STEP rows plus one, the step still running). */
uint64_t memscope_steps_count(const struct memscope_step_proc *p);
/* The step at pos: the number of step starts at or before it (0: before the first step). */
uint64_t memscope_steps_at(const struct memscope_step_proc *p, struct memscope_pos pos);
/*
 * Start and end of step n (1-based): 1 and *pos when the step has one, else 0. SYSTEM: the start
 * of step 1 is {0, 0}; the start of step n + 1 is the end of step n (the same row).
 */
int memscope_steps_start(const struct memscope_step_proc *p, uint64_t n, struct memscope_pos *pos);
int memscope_steps_end(const struct memscope_step_proc *p, uint64_t n, struct memscope_pos *pos);
/* The first step k >= n that has an end: 1, *k and its end *pos; 0 when there is none. */
int memscope_steps_end_from(
	const struct memscope_step_proc *p, uint64_t n, uint64_t *k, struct memscope_pos *pos);
/*
 * The times step n (1-based) covers, [*lo_ns, *hi_ns], the one rule of memscope-compare --step
 * and the trace's step slices: mstx, from its "step start" to its Range_end, else (*open 1: no
 * row ends it) to just before the next step start, else to the end (*hi_ns UINT64_MAX); SYSTEM,
 * from just after the STEP row that ended step n - 1 (step 1: from 0) to step n's STEP row. 1,
 * or 0 when the process has no such step (SYSTEM: the step still running has no STEP row and no
 * span).
 */
int memscope_steps_span(const struct memscope_step_proc *p, uint64_t n, uint64_t *lo_ns,
	uint64_t *hi_ns, int *open);
/* Boundary rows of the other source, ignored (the first source of a process wins). */
uint64_t memscope_steps_ignored(const struct memscope_step_proc *p);

/* Visit every process with boundaries, in order of (src, pid). fn returns 0 to go on. */
int memscope_steps_foreach(const struct memscope_steps *s,
	int (*fn)(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p),
	void *ctx);

#endif
