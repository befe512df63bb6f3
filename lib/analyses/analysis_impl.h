/* What an analysis file needs to define its table of memscope/analysis.h; library-internal. */
#ifndef MEMSCOPE_ANALYSIS_IMPL_H
#define MEMSCOPE_ANALYSIS_IMPL_H

#include "memscope/analysis.h"

/*
 * The table's members over an analysis' typed functions (on a struct name *): static
 * name_feed_any and name_finish_any over name_feed and name_finish (0 or a negative code), and
 * name_destroy over name_free.
 */
#define ANALYSIS_CALLS(name)                                                                       \
	static int name##_feed_any(void *self, const struct memscope_event *ev)                    \
	{                                                                                          \
		return name##_feed((struct name *)self, ev);                                       \
	}                                                                                          \
	static int name##_finish_any(void *self)                                                   \
	{                                                                                          \
		return name##_finish((struct name *)self);                                         \
	}                                                                                          \
	static void name##_destroy(void *self)                                                     \
	{                                                                                          \
		name##_free((struct name *)self);                                                  \
	}

/* name_create over name_new(NULL, st): the analysis with its defaults. */
#define ANALYSIS_CREATE(name)                                                                      \
	static void *name##_create(struct memscope_strtab *st)                                     \
	{                                                                                          \
		return name##_new(NULL, st);                                                       \
	}

/*
 * The table obj_analysis (obj is memscope_NAME) over the functions above, named label;
 * the rest of its members (.again, .rewind), at least one, follow.
 */
#define ANALYSIS_TABLE(obj, label, ...)                                                            \
	const struct memscope_analysis obj##_analysis = { .name = label,                           \
		.create = obj##_create,                                                            \
		.destroy = obj##_destroy,                                                          \
		.feed = obj##_feed_any,                                                            \
		.finish = obj##_finish_any,                                                        \
		__VA_ARGS__ }

#endif
