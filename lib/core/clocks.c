/* The clocks of an input's files (clocks.h): a folder's files recorded far apart in time. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clocks.h"
#include "internal.h"
#include "memscope/error.h"
#include "memscope/strtab.h"

void ms__clocks_free(struct clocks *c)
{
	free(c->spans);
	free(c->files);
	memset(c, 0, sizeof(*c));
}

/* The files entry of (src, file), added when new: its index, or n_files on OOM. */
static size_t file_of(struct clocks *c, uint32_t src, uint32_t file)
{
	size_t i;

	if (c->last < c->n_files && c->files[c->last].src == src && c->files[c->last].file == file)
		return c->last;
	for (i = 0; i < c->n_files; i++)
		if (c->files[i].src == src && c->files[i].file == file)
			return c->last = i;
	if (ms__grow_array(&c->files, &c->cap_files, c->n_files + 1, sizeof(*c->files)))
		return c->n_files;
	c->files[c->n_files] = (struct clocks_file){ src, file, CLOCKS_NONE };
	return c->last = c->n_files++;
}

/* ts less from, saturated at +-INT64_MAX (a gap past it is hostile input, kept with its sign). */
static int64_t gap_ns(uint64_t ts, uint64_t from)
{
	if (ts >= from)
		return ts - from > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(ts - from);
	return from - ts > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)(from - ts);
}

/* The clock a file whose first timed row is at ts joins: one of src's near ts, else a new one.
 * Its index, or CLOCKS_NONE on OOM. */
static uint32_t clock_for(struct clocks *c, uint32_t src, uint64_t ts)
{
	const struct clocks_span *first = NULL;
	size_t i;

	for (i = 0; i < c->n_spans; i++) {
		const struct clocks_span *k = &c->spans[i];

		if (k->src != src)
			continue;
		if (!first)
			first = k;
		/* within CLOCKS_GAP_NS of its rows, said without wrapping past UINT64_MAX */
		if (ts >= k->lo_ns - (k->lo_ns < CLOCKS_GAP_NS ? k->lo_ns : CLOCKS_GAP_NS) &&
			ts - (ts < CLOCKS_GAP_NS ? ts : CLOCKS_GAP_NS) <= k->hi_ns)
			return (uint32_t)i;
	}
	if (c->n_spans >= CLOCKS_NONE ||
		ms__grow_array(&c->spans, &c->cap_spans, c->n_spans + 1, sizeof(*c->spans)))
		return CLOCKS_NONE;
	c->spans[c->n_spans] =
		(struct clocks_span){ src, ts, ts, ts, first ? gap_ns(ts, first->first_ns) : 0 };
	return (uint32_t)c->n_spans++;
}

int ms__clocks_feed(struct clocks *c, const struct memscope_event *ev, int64_t *shift_ns)
{
	struct clocks_file *f;
	struct clocks_span *k;
	size_t i;

	*shift_ns = 0;
	if (!ev->file)
		return 0; /* an input that is one file: one clock */
	if ((i = file_of(c, ev->src, ev->file)) == c->n_files)
		return MEMSCOPE_E_NOMEM;
	f = &c->files[i];
	if (!ev->ts_ns || ev->kind == MEMSCOPE_KIND_PLAN) {
		if (f->clock != CLOCKS_NONE)
			*shift_ns = c->spans[f->clock].shift_ns;
		return 0;
	}
	if (f->clock == CLOCKS_NONE && (f->clock = clock_for(c, ev->src, ev->ts_ns)) == CLOCKS_NONE)
		return MEMSCOPE_E_NOMEM;
	k = &c->spans[f->clock];
	if (ev->ts_ns < k->lo_ns)
		k->lo_ns = ev->ts_ns;
	if (ev->ts_ns > k->hi_ns)
		k->hi_ns = ev->ts_ns;
	*shift_ns = k->shift_ns;
	return 0;
}

const struct memscope_event *ms__clocks_event(struct clocks *c, const struct memscope_event *ev,
	struct memscope_event *tmp, int64_t *shift_ns)
{
	int64_t shift;

	if (ms__clocks_feed(c, ev, &shift))
		return NULL;
	if (shift_ns)
		*shift_ns = shift;
	if (!shift)
		return ev;
	*tmp = *ev;
	tmp->ts_ns = clocks_time(ev->ts_ns, shift);
	return tmp;
}

int64_t ms__clocks_shift(const struct clocks *c, uint32_t src, uint32_t file)
{
	size_t i;

	for (i = 0; file && i < c->n_files; i++)
		if (c->files[i].src == src && c->files[i].file == file)
			return c->files[i].clock == CLOCKS_NONE
				       ? 0
				       : c->spans[c->files[i].clock].shift_ns;
	return 0;
}

const char *ms__clocks_label(int64_t shift_ns, char *buf, size_t n)
{
	uint64_t gap = shift_ns < 0 ? (uint64_t)-shift_ns : (uint64_t)shift_ns;

	if (!shift_ns)
		snprintf(buf, n, "%s", "");
	else
		snprintf(buf, n, " (own clock, %.1f days %s)", (double)gap / 86400e9,
			shift_ns < 0 ? "earlier" : "later");
	return buf;
}

size_t ms__clocks_count(const struct clocks *c, uint32_t src)
{
	size_t i, n = 0;

	for (i = 0; i < c->n_spans; i++)
		n += c->spans[i].src == src;
	return n;
}

/* printf at buf + *len (n bytes in all), *len kept below n: text past the end is cut. */
static void put(char *buf, size_t n, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*len + 1 >= n)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *len, n - *len, fmt, ap);
	va_end(ap);
	if (w > 0)
		*len = *len + (size_t)w < n ? *len + (size_t)w : n - 1;
}

/* Append the names of the files of clock k (at most three, then "...") to buf at *len. */
static void put_files(const struct clocks *c, uint32_t k, const struct memscope_strtab *st,
	char *buf, size_t n, size_t *len)
{
	size_t i, shown = 0;

	for (i = 0; i < c->n_files; i++) {
		const char *name, *slash;

		if (c->files[i].clock != k)
			continue;
		if (shown++ == 3) {
			put(buf, n, len, ", ...");
			break;
		}
		name = memscope_strtab_str(st, c->files[i].file, NULL);
		name = name ? name : "?";
		slash = strrchr(name, '/');
		put(buf, n, len, "%s%s", shown > 1 ? ", " : "", slash ? slash + 1 : name);
	}
}

int ms__clocks_note(
	const struct clocks *c, uint32_t src, const struct memscope_strtab *st, char *buf, size_t n)
{
	size_t i, len = 0;
	uint32_t first = CLOCKS_NONE;

	if (!n || ms__clocks_count(c, src) < 2)
		return 0;
	buf[0] = '\0';
	for (i = 0; i < c->n_spans; i++) {
		const struct clocks_span *k = &c->spans[i];
		uint64_t gap;

		if (k->src != src)
			continue;
		if (first == CLOCKS_NONE) {
			first = (uint32_t)i;
			continue;
		}
		gap = k->shift_ns < 0 ? (uint64_t)-k->shift_ns : (uint64_t)k->shift_ns;
		if (len)
			put(buf, n, &len, "; ");
		put_files(c, (uint32_t)i, st, buf, n, &len);
		put(buf, n, &len, " recorded %.1f days (%llu s) %s ", (double)gap / 86400e9,
			(unsigned long long)((gap + 500000000) / 1000000000),
			k->shift_ns < 0 ? "before" : "after");
		put_files(c, first, st, buf, n, &len);
	}
	put(buf, n, &len,
		": not one run's clock, so each keeps its own time axis (pictures draw it from the "
		"input's start, spans measure each apart)");
	return 1;
}
