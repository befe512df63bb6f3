/* A window cut out of a finished timeline or peak (window.h): its bounds in an input's times,
 * the checks before the cut and the messages of a window that finds nothing. */
#include "window.h"
#include "memscope/memscope.h"
#include "memscope/steps.h"

int memscope_timeline_window_ns(const struct memscope_timeline_window *w, uint64_t first_ns,
	uint64_t *lo_ns, uint64_t *hi_ns)
{
	uint64_t end;

	*lo_ns = 0;
	*hi_ns = UINT64_MAX;
	if (w->flags & MEMSCOPE_TL_FROM)
		*lo_ns = (w->flags & MEMSCOPE_TL_FROM_ABS)    ? w->from_ns
			 : w->from_ns > UINT64_MAX - first_ns ? UINT64_MAX
							      : first_ns + w->from_ns;
	if (!(w->flags & MEMSCOPE_TL_TO))
		return 1;
	/* the end is not in it */
	end = (w->flags & MEMSCOPE_TL_TO_ABS)	 ? w->to_ns
	      : w->to_ns > UINT64_MAX - first_ns ? UINT64_MAX
						 : first_ns + w->to_ns;
	*hi_ns = end ? end - 1 : 0;
	return end > *lo_ns;
}

int ms__window_can_cut(
	const struct memscope_timeline_window *w, int finished, int cut, struct memscope_error *err)
{
	if (!finished || cut)
		return memscope_error_set(
			err, MEMSCOPE_E_ARG, NULL, 0, "a window is cut once, after finish");
	if (w->step && (w->flags & (MEMSCOPE_TL_FROM | MEMSCOPE_TL_TO)))
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0,
			"a window is a step or a time span, not both");
	return 0;
}

int ms__window_no_step(const struct memscope_steps *steps, uint32_t src, const char *input,
	uint64_t step, int any, struct memscope_error *err)
{
	char has[MEMSCOPE_STEPS_TEXT_MAX];

	if (!any)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, input, 0,
			"no steps: neither mstx \"step start\" ranges, SYSTEM STEP rows "
			"nor ProfilerStep#N ops");
	if (memscope_steps_text(steps, src, has, sizeof(has)))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	return memscope_error_set(err, MEMSCOPE_E_INVALID, input, 0, "no step %llu: it has %s",
		(unsigned long long)step, has);
}

int ms__window_empty(const char *const *inputs, size_t n_inputs, int has_span, uint64_t span_ns,
	struct memscope_error *err)
{
	if (n_inputs != 1 || !has_span)
		return memscope_error_set(
			err, MEMSCOPE_E_INVALID, NULL, 0, "nothing of any input in the window");
	return memscope_error_set(err, MEMSCOPE_E_INVALID, inputs[0], 0,
		"nothing in the window: the rows span %llu.%09llu s",
		(unsigned long long)(span_ns / 1000000000),
		(unsigned long long)(span_ns % 1000000000));
}
