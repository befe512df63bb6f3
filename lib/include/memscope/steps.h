/* Training steps of each process, from mstx "step start" ranges, SYSTEM STEP rows or
 * ProfilerStep#<n> ops (formats/analyses.md "Steps"), and event positions in a process's time
 * order. */
#ifndef MEMSCOPE_STEPS_H
#define MEMSCOPE_STEPS_H

#include <stdint.h>

#include "event.h"
#include "order.h"

struct memscope_strtab;

/*
 * Where a process's steps come from: the first kind of boundary row it has wins. Every step has
 * a number; numbers ascend with time. A step is named by its number in every function below
 * that takes or returns one ("n"), and by its index, its place among its process's steps from 1,
 * only where a name says index.
 */
enum memscope_step_source {
	MEMSCOPE_STEPS_NONE = 0,
	/* mstx Range_start named "step start" starts the next step (numbered 1, 2, ...); the
	 * Range_end that closes it on its thread ends it (other ranges opened on that thread
	 * after it close first); a new "step start" before that leaves the step without an end */
	MEMSCOPE_STEPS_MSTX,
	/* msmemscope.step(): SYSTEM STEP row n ends step n and starts step n + 1; step 1 starts
	 * with the process */
	MEMSCOPE_STEPS_SYSTEM,
	/* the torch profiler's ProfilerStep#<N> ops (an Ascend profiler timeline's cpu_op slices):
	 * the op's start starts step N, the end of an op of the same name on the same thread ends
	 * it, as for mstx. N is the number the name says (0 and gaps possible); an op whose N is no
	 * decimal number below 2^63 or not above the previous step's starts no step (counted:
	 * memscope_steps_misnumbered) */
	MEMSCOPE_STEPS_PROFILER,
};

/* no step: memscope_steps_number out of range, memscope_steps_at before a ProfilerStep */
#define MEMSCOPE_STEP_NONE UINT64_MAX

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
/* Steps started so far, so their indexes are 1 to this (SYSTEM: the STEP rows plus one, the
 * step still running). */
uint64_t memscope_steps_count(const struct memscope_step_proc *p);
/* The number of the step of index i (1 to memscope_steps_count); MEMSCOPE_STEP_NONE when there
 * is none. For mstx and SYSTEM steps it is i. */
uint64_t memscope_steps_number(const struct memscope_step_proc *p, uint64_t i);
/* The index of step n, 0 when the process has no step n. */
uint64_t memscope_steps_index(const struct memscope_step_proc *p, uint64_t n);
/* The index of the step at pos: the number of step starts at or before it (0: before the first
 * step). Counting steps from a process's first, as the skip rule of step leaks does. */
uint64_t memscope_steps_index_at(const struct memscope_step_proc *p, struct memscope_pos pos);
/*
 * The number of the step at pos: that of the latest step start at or before it. Before the
 * first step: 0 for steps numbered from 1 (mstx, SYSTEM, and a process without steps; the
 * reference's step 0), MEMSCOPE_STEP_NONE for ProfilerStep numbers (which may start at 0).
 */
uint64_t memscope_steps_at(const struct memscope_step_proc *p, struct memscope_pos pos);
/*
 * Start and end of step n: 1 and *pos when the process has step n and it has one, else 0 (also
 * for numbers between or before its steps'). SYSTEM: the start of step 1 is {0, 0}; the start
 * of step n + 1 is the end of step n (the same row).
 */
int memscope_steps_start(const struct memscope_step_proc *p, uint64_t n, struct memscope_pos *pos);
int memscope_steps_end(const struct memscope_step_proc *p, uint64_t n, struct memscope_pos *pos);
/* The first step k >= n (a number; with gaps, the next step that exists) that has an end: 1, *k
 * and its end *pos; 0 when there is none. */
int memscope_steps_end_from(
	const struct memscope_step_proc *p, uint64_t n, uint64_t *k, struct memscope_pos *pos);
/*
 * The times step n covers, [*lo_ns, *hi_ns], the one rule of memscope-compare --step and the
 * trace's step slices: mstx and ProfilerStep, from its start to its end, else (*open 1: no row
 * ends it) to just before the next step's start, else to the end (*hi_ns UINT64_MAX); SYSTEM,
 * from just after the STEP row that ended step n - 1 (step 1: from 0) to step n's STEP row. 1,
 * or 0 when the process has no such step (SYSTEM: the step still running has no STEP row and no
 * span).
 */
int memscope_steps_span(const struct memscope_step_proc *p, uint64_t n, uint64_t *lo_ns,
	uint64_t *hi_ns, int *open);
/* What a step source is, for messages: "mstx ranges", "SYSTEM STEP rows", "ProfilerStep ops";
 * "no steps" for NONE. */
const char *memscope_steps_source_name(enum memscope_step_source source);
/* Boundary rows of the other source, ignored (the first source of a process wins). */
uint64_t memscope_steps_ignored(const struct memscope_step_proc *p);
/* ProfilerStep ops that started no step: their N is no number, or not above the step before. */
uint64_t memscope_steps_misnumbered(const struct memscope_step_proc *p);
/*
 * Which steps the processes of input src (MEMSCOPE_STEPS_ALL_INPUTS: of all) have, for messages
 * such as "no step 51: it has steps 50, 52": the numbers of the steps with a span
 * (memscope_steps_span), runs of three or more consecutive ones merged: "step 50", "steps 1, 2",
 * "steps 1 to 3", "steps 1, 3, 5, ..., 99" (at most four runs, the last always), "no steps". buf
 * gets at most size bytes, NUL-terminated, cut short when it is full (MEMSCOPE_STEPS_TEXT_MAX is
 * enough). 0, or MEMSCOPE_E_NOMEM (buf then empty).
 */
#define MEMSCOPE_STEPS_ALL_INPUTS UINT32_MAX
#define MEMSCOPE_STEPS_TEXT_MAX 200
int memscope_steps_text(const struct memscope_steps *s, uint32_t src, char *buf, size_t size);

/* Visit every process with boundaries, in order of (src, pid). fn returns 0 to go on. */
int memscope_steps_foreach(const struct memscope_steps *s,
	int (*fn)(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p),
	void *ctx);

#endif
