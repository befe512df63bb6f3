/* What the leak analysis saw of each input: its rows, steps and end, and for each kind whether
 * it could be checked there and why not. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../readers/registry.h"
#include "leaks_impl.h"

/* the inputs an analysis keeps what it saw of: src numbers those of one run, a few; a larger
 * one is not an input of ours */
#define MAX_INFO (1u << 20)

/* What the analysis saw of input src (below MAX_INFO), made on first sight. 0 or NOMEM. */
static int grow_info(struct memscope_leaks *l, uint32_t src)
{
	size_t cap = l->n_info, n = (size_t)src + 1;

	if (src < l->n_info)
		return 0;
	if (ms__grow_array(&l->info, &cap, n, sizeof(*l->info)))
		return MEMSCOPE_E_NOMEM;
	memset(l->info + l->n_info, 0, (cap - l->n_info) * sizeof(*l->info));
	l->n_info = cap;
	return 0;
}

/* What the analysis saw of input src: n_events, n_block_rows and the earliest timestamp. */
int ms__leaks_note_input(struct memscope_leaks *l, const struct memscope_event *ev)
{
	struct memscope_leaks_input_info *in;
	int64_t shift;
	uint64_t ts;

	if (ev->src >= MAX_INFO)
		return 0;
	if (grow_info(l, ev->src))
		return MEMSCOPE_E_NOMEM;
	in = &l->info[ev->src];
	/* time 0 of a file recorded far apart is its own (memscope_leaks_origin) */
	if (ms__clocks_feed(&l->clocks, ev, &shift))
		return MEMSCOPE_E_NOMEM;
	ts = clocks_time(ev->ts_ns, shift);
	if (!in->n_events++ || ts < in->first_ts_ns)
		in->first_ts_ns = ts;
	in->n_block_rows += ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE;
	return 0;
}

static int note_steps(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	struct memscope_leaks *l = ctx;

	struct memscope_leaks_input_info *in;
	uint64_t n, s, k;
	struct memscope_pos end;

	(void)pid;
	if (src >= l->n_info || memscope_steps_source(p) == MEMSCOPE_STEPS_NONE)
		return 0;
	in = &l->info[src];
	in->has_steps = 1;
	n = memscope_steps_count(p);
	in->n_steps = n > in->n_steps ? n : in->n_steps;
	/* judge_step's rule for the first step it may judge: later ones reach no further */
	if (l->o.skip_steps < n &&
		(s = memscope_steps_number(p, l->o.skip_steps + 1)) != MEMSCOPE_STEP_NONE &&
		s + l->o.min_steps_alive >= s &&
		memscope_steps_end_from(p, s + l->o.min_steps_alive, &k, &end))
		in->step_room = 1;
	return 0;
}

int ms__leaks_note_steps(struct memscope_leaks *l)
{
	return memscope_steps_foreach(l->steps, note_steps, l);
}

const struct memscope_leaks_input_info *memscope_leaks_input(
	const struct memscope_leaks *l, uint32_t src)
{
	static const struct memscope_leaks_input_info none;

	return src < l->n_info ? &l->info[src] : &none;
}

uint64_t memscope_leaks_origin(const struct memscope_leaks *l, uint32_t src, uint32_t file)
{
	return memscope_leaks_input(l, src)->first_ts_ns +
	       (uint64_t)ms__clocks_shift(&l->clocks, src, file);
}

int memscope_leaks_input_end(struct memscope_leaks *l, uint32_t src, enum memscope_format format,
	const struct memscope_read_stats *stats)
{
	enum memscope_leaks_end end = MEMSCOPE_LEAKS_END_EXIT;

	if (src >= MAX_INFO)
		return 0;
	if (grow_info(l, src))
		return MEMSCOPE_E_NOMEM;
	switch (ms__reader_end(format)) { /* what the end of an input of its format means */
	case READER_END_PROFILE:
		end = MEMSCOPE_LEAKS_END_PROFILE;
		break;
	case READER_END_SNAPSHOT:
		end = MEMSCOPE_LEAKS_END_SNAPSHOT;
		break;
	case READER_END_EXIT_OR_CUT: /* read to its cut (--lenient): its program went on */
		if (stats && stats->cut.code)
			end = MEMSCOPE_LEAKS_END_STOPPED;
		break;
	default:
		break;
	}
	l->info[src].end = end;
	return 0;
}

enum memscope_leaks_end memscope_leaks_end_of(const struct memscope_leaks *l, uint32_t src)
{
	enum memscope_leaks_end end = MEMSCOPE_LEAKS_END_EXIT;
	size_t i;
	int any = 0;

	if (src != MEMSCOPE_LEAKS_ALL_INPUTS)
		return memscope_leaks_input(l, src)->end;
	for (i = 0; i < l->n_info; i++) {
		if (!l->info[i].n_events)
			continue;
		if (any && l->info[i].end != end)
			return MEMSCOPE_LEAKS_END_MIXED;
		end = l->info[i].end;
		any = 1;
	}
	return end;
}

/* What each end of an input means, as a report's text and as JSON's name; an end out of range
 * is the program's exit. */
static const struct {
	const char *text, *name;
} ends[] = {
	[MEMSCOPE_LEAKS_END_EXIT] = { "unreleased at exit", "exit" },
	[MEMSCOPE_LEAKS_END_PROFILE] = { "alive at the end of the profile", "profile" },
	[MEMSCOPE_LEAKS_END_SNAPSHOT] = { "alive at the end of the snapshot", "snapshot" },
	[MEMSCOPE_LEAKS_END_STOPPED] = { "alive when the recording stopped", "recording_stopped" },
	[MEMSCOPE_LEAKS_END_MIXED] = { "alive at the end of each input", "mixed" },
};

const char *memscope_leaks_end_text(enum memscope_leaks_end end)
{
	return ends[(size_t)end < sizeof(ends) / sizeof(ends[0]) ? end : 0].text;
}

const char *memscope_leaks_end_name(enum memscope_leaks_end end)
{
	return ends[(size_t)end < sizeof(ends) / sizeof(ends[0]) ? end : 0].name;
}

enum memscope_leaks_unchecked memscope_leaks_checked(
	const struct memscope_leaks *l, unsigned kind, uint32_t src)
{
	const struct memscope_leaks_input_info *in = memscope_leaks_input(l, src);
	size_t i;

	if (!(l->o.kinds & kind))
		return MEMSCOPE_LEAKS_NOT_ASKED;
	if (!in->n_block_rows)
		return MEMSCOPE_LEAKS_NO_BLOCKS;
	if (kind == MEMSCOPE_LEAK_STEP && !in->has_steps)
		return MEMSCOPE_LEAKS_NO_STEPS;
	if (kind == MEMSCOPE_LEAK_STEP && !in->step_room)
		return MEMSCOPE_LEAKS_FEW_STEPS;
	if (kind != MEMSCOPE_LEAK_MARK)
		return MEMSCOPE_LEAKS_CHECKED;
	for (i = 0; i < l->n_mg_out; i++)
		if (l->mg_out[i].src == src && l->mg_out[i].checked)
			return MEMSCOPE_LEAKS_CHECKED;
	return MEMSCOPE_LEAKS_NO_MARKS;
}

const char *memscope_leaks_unchecked_text(enum memscope_leaks_unchecked why)
{
	switch (why) {
	case MEMSCOPE_LEAKS_NOT_ASKED:
		return "not asked for";
	case MEMSCOPE_LEAKS_NO_BLOCKS:
		return "no allocations or frees";
	case MEMSCOPE_LEAKS_NO_STEPS:
		return "no steps: neither mstx \"step start\" ranges, SYSTEM STEP rows nor "
		       "ProfilerStep#N ops";
	case MEMSCOPE_LEAKS_NO_MARKS:
		return "no device has the three Mark rows";
	case MEMSCOPE_LEAKS_FEW_STEPS:
		return "too few steps: a step leak needs a step after the --skip-steps ones and "
		       "an ended step --min-steps-alive after it";
	default:
		return "";
	}
}

const char *memscope_leaks_unchecked_say(
	const struct memscope_leaks *l, unsigned kind, uint32_t src, char *buf, size_t size)
{
	enum memscope_leaks_unchecked why = memscope_leaks_checked(l, kind, src);
	const struct memscope_leaks_input_info *in = memscope_leaks_input(l, src);
	uint64_t need = l->o.skip_steps + 1 + l->o.min_steps_alive;

	if (!size)
		return buf;
	if (why != MEMSCOPE_LEAKS_FEW_STEPS)
		snprintf(buf, size, "%s", memscope_leaks_unchecked_text(why));
	else if (need > l->o.skip_steps && need > l->o.min_steps_alive)
		snprintf(buf, size,
			"%" PRIu64 " step%s: a step leak needs %" PRIu64 " (--skip-steps %" PRIu64
			", then a step and one ended --min-steps-alive %" PRIu64 " later)",
			in->n_steps, in->n_steps == 1 ? "" : "s", need, l->o.skip_steps,
			l->o.min_steps_alive);
	else
		snprintf(buf, size, "%s", memscope_leaks_unchecked_text(why));
	return buf;
}

size_t memscope_leaks_unchecked_inputs(const struct memscope_leaks *l, unsigned kind,
	size_t n_inputs, enum memscope_leaks_unchecked *why)
{
	size_t i, n = 0;

	if (why)
		*why = MEMSCOPE_LEAKS_CHECKED;
	for (i = 0; i < n_inputs && i < UINT32_MAX; i++) {
		enum memscope_leaks_unchecked w = memscope_leaks_checked(l, kind, (uint32_t)i);

		if (w == MEMSCOPE_LEAKS_CHECKED || w == MEMSCOPE_LEAKS_NOT_ASKED)
			continue;
		if (!n++ && why)
			*why = w;
	}
	return n;
}
