/* The run: every input read once and its events fed to several analyses, and the second pass an
 * analysis may ask for. */
#include <string.h>

#include "memscope/analysis.h"
#include "memscope/strtab.h"
#include "run.h"

struct fanout {
	const struct memscope_run_item *items;
	size_t n_items;
	size_t only;	     /* the one item fed on a second pass; n_items: every item */
	int failed;	     /* an analysis returned the read's status (not the reader) */
	uint32_t skip_kinds; /* the kinds no item fed wants */
};

static int fan(void *ctx, const struct memscope_event *ev)
{
	struct fanout *f = ctx;
	size_t i;
	int rc;

	if (f->only < f->n_items) {
		rc = f->items[f->only].analysis->feed(f->items[f->only].self, ev);
		f->failed = rc != 0;
		return rc;
	}
	for (i = 0; i < f->n_items; i++)
		if ((rc = f->items[i].analysis->feed(f->items[i].self, ev))) {
			f->failed = 1;
			return rc;
		}
	return 0;
}

/* The input_end hook of the analyses f feeds, after input src. 0 or the first's error (f->failed
 * set). */
static int input_end(struct fanout *f, uint32_t src, const struct memscope_source *s)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < f->n_items && !rc; i++)
		if ((f->only == f->n_items || f->only == i) && f->items[i].analysis->input_end)
			rc = f->items[i].analysis->input_end(f->items[i].self, src, s);
	f->failed = rc != 0;
	return rc;
}

/* Read every input once into the analyses of f. 0 or the error, err set. */
static int read_all(const char *const *paths, const uint32_t *parts, size_t n,
	struct memscope_strtab *st, const struct memscope_read_opts *ro, struct fanout *f,
	unsigned pass, const struct memscope_run_hooks *hooks, void *ctx,
	struct memscope_error *err)
{
	struct memscope_read_opts o = { 0 };
	size_t i;
	int rc = 0;

	if (ro)
		o = *ro;
	o.skip_kinds |= f->skip_kinds;
	for (i = 0; i < n && !rc; i++) {
		struct memscope_source *src = NULL;

		o.src = (uint32_t)i;
		f->failed = 0;
		rc = memscope_source_open_part(&src, paths[i], parts ? parts[i] : 0, st, &o, err);
		if (!rc)
			rc = memscope_source_read(src, fan, f, err);
		if (!rc)
			rc = input_end(f, (uint32_t)i, src);
		if (rc && f->failed && !err->code)
			memscope_error_set(err, rc, paths[i], 0, "%s", memscope_strerror(rc));
		if (!rc && hooks && hooks->input_read)
			hooks->input_read(ctx, (uint32_t)i, paths[i], src, pass);
		memscope_source_close(src);
	}
	return rc;
}

int memscope_run(const char *const *paths, size_t n, struct memscope_strtab *st,
	const struct memscope_read_opts *ro, const struct memscope_run_item *items, size_t n_items,
	const struct memscope_run_hooks *hooks, void *ctx, struct memscope_error *err)
{
	return ms__run(paths, NULL, n, st, ro, items, n_items, hooks, ctx, err);
}

int ms__run(const char *const *paths, const uint32_t *parts, size_t n, struct memscope_strtab *st,
	const struct memscope_read_opts *ro, const struct memscope_run_item *items, size_t n_items,
	const struct memscope_run_hooks *hooks, void *ctx, struct memscope_error *err)
{
	struct fanout f = { items, n_items, n_items, 0, UINT32_MAX };
	size_t k, i;
	int rc;

	memscope_error_clear(err);
	if (!n_items)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "no analysis to run");
	for (k = 0; k < n_items; k++)
		f.skip_kinds &= items[k].analysis->skip_kinds;
	if ((rc = read_all(paths, parts, n, st, ro, &f, 1, hooks, ctx, err)))
		return rc;
	for (k = 0; k < n_items; k++) {
		const struct memscope_analysis *a = items[k].analysis;
		uint32_t src = 0;
		uint64_t line = 0;
		const char *why = "a row out of order";

		if ((rc = a->finish(items[k].self)))
			goto failed;
		if (!a->again || !n || !a->again(items[k].self, &src, &line, &why))
			continue;
		if (src >= n) /* an input the run does not have: name the first */
			src = 0, line = 0;
		for (i = 0; i < n; i++)
			if (memscope_source_rereadable(paths[i]) != 1)
				return memscope_error_set(err, MEMSCOPE_E_INVALID, paths[src], line,
					"%s: a second pass is needed, and %s cannot be read "
					"twice: save it to a file",
					why, strcmp(paths[i], "-") ? paths[i] : "standard input");
		if (hooks && hooks->again)
			hooks->again(ctx, src, line, why);
		f.only = k;
		f.skip_kinds = a->skip_kinds;
		if ((rc = a->rewind(items[k].self)) ||
			(rc = read_all(paths, parts, n, st, ro, &f, 2, hooks, ctx, err)) ||
			(rc = a->finish(items[k].self)))
			goto failed;
	}
	return 0;
failed:
	if (!err->code)
		memscope_error_set(err, rc, NULL, 0, "%s", memscope_strerror(rc));
	return rc;
}
