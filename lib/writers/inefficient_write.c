/* The inefficient-memory reports (text, JSON, CSV) and the reference's Attr annotation. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/inefficient.h"
#include "memscope/memscope.h"
#include "memscope/source.h"
#include "memscope/strtab.h"
#include "report.h"

static const char *const family_names[MEMSCOPE_INEFF_FAMILIES] = { "PTA", "ATB" };

struct report {
	FILE *out;
	const struct memscope_inefficient *a;
	const struct memscope_strtab *st;
	const char *const *names;
	size_t n_names;
	size_t n_blocks; /* blocks shown */
};

static const char *input_name(const struct report *r, uint32_t src)
{
	return src < r->n_names && r->names[src] ? r->names[src] : "-";
}

/* the longest list of types: all three names and two separators of up to 2 bytes */
#define TYPES_MAX 64

/* The block's types in the order found, joined by sep, into buf. Returns the length. */
static size_t types_text(const struct memscope_ineff_block *b, const char *sep, char *buf)
{
	size_t len = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < b->n_types; i++)
		len += (size_t)snprintf(buf + len, TYPES_MAX - len, "%s%s", i ? sep : "",
			memscope_ineff_type_name(b->order[i]));
	return len;
}

static const char *op_name(const struct report *r, uint32_t op)
{
	const char *s = op ? memscope_strtab_str(r->st, op, NULL) : NULL;

	return s ? s : "";
}

/* ---- text ---- */

static void text_api(const struct report *r, const char *what, const struct memscope_ineff_api *x)
{
	if (!x->api) {
		fprintf(r->out, "    %-10s -\n", what);
		return;
	}
	fprintf(r->out, "    %-10s API %-8" PRIu64 " %s\n", what, x->api,
		x->op ? op_name(r, x->op) : "(a memory event outside any op)");
}

static void text_block(const struct report *r, size_t rank, const struct memscope_ineff_block *b)
{
	char dev[MEMSCOPE_DEVICE_TEXT_MAX], size[32], types[TYPES_MAX];
	char wasted[MEMSCOPE_BYTES_TEXT_MAX];

	memscope_bytes_text(size, sizeof(size), b->size > 0 ? (uint64_t)b->size : 0);
	types_text(b, ", ", types);
	fprintf(r->out, "#%zu %s", rank, types);
	fprintf(r->out, ": %s block", memscope_subtype_name(b->pool));
	if (b->has_alloc_id)
		fprintf(r->out, " allocation_id %" PRIu64, b->alloc_id);
	fprintf(r->out, " at 0x%016" PRIx64 ", %s, process %" PRIu64 ", device %s", b->ptr, size,
		b->pid, memscope_device_text(b->device, dev));
	if (r->n_names > 1)
		fprintf(r->out, ", %s", input_name(r, b->src));
	/* bytes times APIs, in the units of bytes ("more than ... (the total overflowed)") */
	fprintf(r->out, "\n    unused for %" PRIu64 " %s API(s): %s-APIs wasted\n", b->unused_apis,
		family_names[b->family], memscope_bytes_text(wasted, sizeof(wasted), b->wasted));
	if (b->types & MEMSCOPE_INEFF_EARLY)
		fprintf(r->out,
			"    why: API %" PRIu64 " freed memory between the allocation (API %" PRIu64
			") and the first use in another API (API %" PRIu64 ")\n",
			b->early_free_api, b->alloc.api, b->early_use_api);
	if (b->types & MEMSCOPE_INEFF_LATE)
		fprintf(r->out,
			"    why: API %" PRIu64
			" allocated memory between the last use (API %" PRIu64
			") and the free (API %" PRIu64 ")\n",
			b->late_malloc_api, b->last_access.api, b->free.api);
	if (b->types & MEMSCOPE_INEFF_IDLE)
		fprintf(r->out,
			"    why: unused from API %" PRIu64 " to API %" PRIu64 ", %" PRIu64
			" APIs apart\n",
			b->idle_from_api, b->idle_to_api, b->idle_to_api - b->idle_from_api);
	text_api(r, "allocated", &b->alloc);
	text_api(r, "first use", &b->first_access);
	text_api(r, "last use", &b->last_access);
	if (b->freed)
		text_api(r, "freed", &b->free);
	else
		fprintf(r->out, "    %-10s never\n", "freed");
	fprintf(r->out,
		"    %" PRIu64 " use(s), longest idle %" PRIu64 " API(s); MALLOC line %" PRIu64
		", ID %" PRIu64 "\n",
		b->n_access, b->max_idle_apis, b->alloc_line, b->alloc_event_id);
}

/* A row of the totals table; a total that overflowed says so in its column. */
static void table_row(const struct report *r, const char *what, uint64_t blocks, uint64_t bytes)
{
	char text[MEMSCOPE_BYTES_TEXT_MAX];

	fprintf(r->out, "%-20s %10" PRIu64 " %12s\n", what, blocks,
		bytes == MEMSCOPE_BYTES_OVERFLOW ? "overflowed"
						 : memscope_bytes_text(text, sizeof(text), bytes));
}

static void write_text(const struct report *r)
{
	const struct memscope_inefficient_stats *s = memscope_inefficient_stats(r->a);
	const struct memscope_inefficient_opts *o = memscope_inefficient_opts(r->a);
	size_t n = r->n_blocks, i;
	char buf[32], total[MEMSCOPE_BYTES_TEXT_MAX];
	unsigned t;

	memscope_bytes_text(buf, sizeof(buf), o->min_size);
	fprintf(r->out,
		"Inefficient memory: %" PRIu64 " block(s), %s (idle threshold %" PRIu64
		" APIs, minimum size %s)\n",
		s->n_blocks, memscope_bytes_text(total, sizeof(total), s->bytes), o->idle_threshold,
		buf);
	for (i = 0; i < r->n_names; i++)
		if (memscope_inefficient_input_note(r->a, (uint32_t)i))
			fprintf(r->out, "%s: %s\n", input_name(r, (uint32_t)i),
				memscope_inefficient_input_note(r->a, (uint32_t)i));
	for (i = 0; i < n; i++) {
		fputc('\n', r->out);
		text_block(r, i + 1, memscope_inefficient_get(r->a, i));
	}
	if (n < memscope_inefficient_count(r->a))
		fprintf(r->out, "\n(%zu more block(s) not shown)\n",
			memscope_inefficient_count(r->a) - n);
	fprintf(r->out, "\n%-20s %10s %12s\n", "type", "blocks", "bytes");
	for (t = 0; t < 3; t++) {
		if (!(o->types & (1u << t)))
			continue;
		table_row(r, memscope_ineff_type_name(1u << t), s->n_type[t], s->type_bytes[t]);
	}
	table_row(r, "flagged blocks", s->n_blocks, s->bytes);
	fprintf(r->out,
		"APIs: PTA %" PRIu64 ", ATB %" PRIu64 "; %" PRIu64 " op(s), %" PRIu64
		" MALLOC, %" PRIu64 " FREE, %" PRIu64 " ACCESS row(s)\n",
		s->n_apis[MEMSCOPE_INEFF_PTA], s->n_apis[MEMSCOPE_INEFF_ATB], s->n_ops,
		s->n_mallocs, s->n_frees, s->n_accesses);
}

/* ---- JSON ---- */

static void js_api(const struct report *r, const char *name, const struct memscope_ineff_api *x)
{
	fprintf(r->out, ",\"%s\":", name);
	if (!x->api) {
		fputs("null", r->out);
		return;
	}
	fprintf(r->out, "{\"api\":%" PRIu64 ",\"ts_ns\":%" PRIu64 ",\"op\":", x->api, x->ts_ns);
	ms__json_id_or_null(r->out, r->st, x->op);
	fputc('}', r->out);
}

static void js_block(const struct report *r, size_t rank, const struct memscope_ineff_block *b)
{
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];
	unsigned i;

	fprintf(r->out, "{\"rank\":%zu,\"input\":", rank);
	ms__json_cstr(r->out, input_name(r, b->src));
	fprintf(r->out, ",\"pid\":%" PRIu64 ",\"device\":", b->pid);
	ms__json_cstr(r->out, memscope_device_text(b->device, dev));
	fprintf(r->out, ",\"pool\":\"%s\",\"family\":\"%s\",\"allocation_id\":",
		memscope_subtype_name(b->pool), family_names[b->family]);
	if (b->has_alloc_id)
		fprintf(r->out, "%" PRIu64, b->alloc_id);
	else
		fputs("null", r->out);
	fprintf(r->out, ",\"ptr\":\"0x%016" PRIx64 "\",\"size\":%" PRId64 ",\"types\":[", b->ptr,
		b->size);
	for (i = 0; i < b->n_types; i++)
		fprintf(r->out, "%s\"%s\"", i ? "," : "", memscope_ineff_type_name(b->order[i]));
	fprintf(r->out, "],\"event_id\":%" PRIu64 ",\"line\":%" PRIu64, b->alloc_event_id,
		b->alloc_line);
	js_api(r, "alloc", &b->alloc);
	js_api(r, "first_access", &b->first_access);
	js_api(r, "last_access", &b->last_access);
	js_api(r, "free", &b->free);
	fputs(",\"why\":{", r->out);
	for (i = 0; i < b->n_types; i++) {
		unsigned t = b->order[i];

		fprintf(r->out, "%s\"%s\":", i ? "," : "", memscope_ineff_type_name(t));
		if (t == MEMSCOPE_INEFF_EARLY)
			fprintf(r->out, "{\"free_api\":%" PRIu64 ",\"use_api\":%" PRIu64 "}",
				b->early_free_api, b->early_use_api);
		else if (t == MEMSCOPE_INEFF_LATE)
			fprintf(r->out, "{\"malloc_api\":%" PRIu64 "}", b->late_malloc_api);
		else
			fprintf(r->out, "{\"from_api\":%" PRIu64 ",\"to_api\":%" PRIu64 "}",
				b->idle_from_api, b->idle_to_api);
	}
	fputc('}', r->out);
	fprintf(r->out,
		",\"accesses\":%" PRIu64 ",\"max_idle_apis\":%" PRIu64 ",\"unused_apis\":%" PRIu64,
		b->n_access, b->max_idle_apis, b->unused_apis);
	ms__json_bytes(r->out, "wasted_byte_apis", b->wasted);
	fputs(",\"owner\":", r->out);
	ms__json_id_or_null(r->out, r->st, b->owner);
	fputs(",\"stack\":", r->out);
	ms__json_stack(r->out, r->st, b->stack_py, b->stack_c);
	fputc('}', r->out);
}

/* ,"not_checked":[{"input":...,"why":...},...]: the inputs nothing of could be flagged */
static void js_not_checked(const struct report *r)
{
	size_t i, k = 0;

	fputs(",\"not_checked\":[", r->out);
	for (i = 0; i < r->n_names; i++) {
		const char *why = memscope_inefficient_input_note(r->a, (uint32_t)i);

		if (!why)
			continue;
		fputs(k++ ? ",{\"input\":" : "{\"input\":", r->out);
		ms__json_cstr(r->out, input_name(r, (uint32_t)i));
		fputs(",\"why\":", r->out);
		ms__json_cstr(r->out, why);
		fputc('}', r->out);
	}
	fputc(']', r->out);
}

static void js_summary(const struct report *r)
{
	const struct memscope_inefficient_stats *s = memscope_inefficient_stats(r->a);
	const struct memscope_inefficient_opts *o = memscope_inefficient_opts(r->a);
	unsigned t, k = 0;

	fprintf(r->out, "{\"blocks\":%" PRIu64, s->n_blocks);
	ms__json_bytes(r->out, "bytes", s->bytes);
	fputs(",\"types\":{", r->out);
	for (t = 0; t < 3; t++) {
		if (!(o->types & (1u << t)))
			continue;
		fprintf(r->out, "%s\"%s\":{\"blocks\":%" PRIu64, k++ ? "," : "",
			memscope_ineff_type_name(1u << t), s->n_type[t]);
		ms__json_bytes(r->out, "bytes", s->type_bytes[t]);
		fputc('}', r->out);
	}
	fprintf(r->out,
		"},\"idle_threshold\":%" PRIu64 ",\"min_size\":%" PRIu64 ",\"events\":%" PRIu64
		",\"apis\":{\"PTA\":%" PRIu64 ",\"ATB\":%" PRIu64 "},\"ops\":%" PRIu64
		",\"mallocs\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"accesses\":%" PRIu64
		",\"untracked\":%" PRIu64 ",\"replaced\":%" PRIu64 ",\"shadow_rows\":%" PRIu64
		",\"other_pool_accesses\":%" PRIu64 ",\"alive_at_end\":%" PRIu64,
		o->idle_threshold, o->min_size, s->n_events, s->n_apis[MEMSCOPE_INEFF_PTA],
		s->n_apis[MEMSCOPE_INEFF_ATB], s->n_ops, s->n_mallocs, s->n_frees, s->n_accesses,
		s->n_untracked, s->n_replaced, s->n_shadow, s->n_other_access, s->n_alive_at_end);
	js_not_checked(r);
	fputc('}', r->out);
}

static void write_json(const struct report *r)
{
	size_t n = r->n_blocks, i;

	fputs("{\"blocks\":[", r->out);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", r->out);
		js_block(r, i + 1, memscope_inefficient_get(r->a, i));
	}
	fputs("],\n\"summary\":", r->out);
	js_summary(r);
	fputs("}\n", r->out);
}

/* ---- CSV ---- */

static void csv_api(const struct report *r, uint64_t api)
{
	fputc(',', r->out);
	if (api)
		fprintf(r->out, "%" PRIu64, api);
}

static void csv_op(const struct report *r, const struct memscope_ineff_api *x)
{
	const char *s = op_name(r, x->op);

	fputc(',', r->out);
	ms__csv_field(r->out, s, strlen(s));
}

static void write_csv(const struct report *r)
{
	size_t n = r->n_blocks, i;

	fputs("rank,input,pid,device,pool,allocation_id,ptr,size,types,alloc_api,first_access_api,"
	      "last_access_api,free_api,max_idle_apis,unused_apis,wasted_byte_apis,alloc_event_id,"
	      "alloc_line,alloc_ts_ns,free_ts_ns,alloc_op,first_access_op,last_access_op,"
	      "free_op,early_free_api,early_use_api,late_malloc_api,idle_from_api,idle_to_api\n",
		r->out);
	for (i = 0; i < n; i++) {
		const struct memscope_ineff_block *b = memscope_inefficient_get(r->a, i);
		const char *name = input_name(r, b->src);
		char dev[MEMSCOPE_DEVICE_TEXT_MAX], types[TYPES_MAX];

		fprintf(r->out, "%zu,", i + 1);
		ms__csv_field(r->out, name, strlen(name));
		fprintf(r->out, ",%" PRIu64 ",%s,%s,", b->pid, memscope_device_text(b->device, dev),
			memscope_subtype_name(b->pool));
		if (b->has_alloc_id)
			fprintf(r->out, "%" PRIu64, b->alloc_id);
		fprintf(r->out, ",0x%016" PRIx64 ",%" PRId64 ",", b->ptr, b->size);
		types_text(b, ";", types);
		fputs(types, r->out);
		csv_api(r, b->alloc.api);
		csv_api(r, b->first_access.api);
		csv_api(r, b->last_access.api);
		csv_api(r, b->free.api);
		fprintf(r->out,
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
			b->max_idle_apis, b->unused_apis, b->wasted, b->alloc_event_id,
			b->alloc_line, b->alloc.ts_ns);
		if (b->freed)
			fprintf(r->out, "%" PRIu64, b->free.ts_ns);
		csv_op(r, &b->alloc);
		csv_op(r, &b->first_access);
		csv_op(r, &b->last_access);
		csv_op(r, &b->free);
		csv_api(r, b->early_free_api);
		csv_api(r, b->early_use_api);
		csv_api(r, b->late_malloc_api);
		csv_api(r, b->idle_from_api);
		csv_api(r, b->idle_to_api);
		fputc('\n', r->out);
	}
}

int memscope_inefficient_write(FILE *out, enum memscope_ineff_format fmt,
	const struct memscope_inefficient *a, const struct memscope_strtab *st,
	const char *const *names, size_t n_names, size_t top)
{
	size_t n = memscope_inefficient_count(a);
	struct report r = { out, a, st, names, n_names, top && top < n ? top : n };

	if (fmt == MEMSCOPE_INEFF_JSON)
		write_json(&r);
	else if (fmt == MEMSCOPE_INEFF_CSV)
		write_csv(&r);
	else
		write_text(&r);
	return ferror(out) ? MEMSCOPE_E_IO : 0;
}

/* ---- annotation ---- */

struct edit_text {
	char val[TYPES_MAX];
};

static int cmp_seq(const void *pa, const void *pb)
{
	const struct memscope_ineff_block *const *x = pa, *const *y = pb;

	return (*x)->alloc_seq < (*y)->alloc_seq ? -1 : (*x)->alloc_seq > (*y)->alloc_seq;
}

int memscope_inefficient_annotate(const struct memscope_inefficient *a, uint32_t input,
	struct memscope_source *src, FILE *out, struct memscope_error *err)
{
	size_t n = memscope_inefficient_count(a), i, k = 0;
	const struct memscope_ineff_block **bl = calloc(n ? n : 1, sizeof(*bl));
	struct memscope_attr_edit *ed = calloc(n ? n : 1, sizeof(*ed));
	struct edit_text *txt = calloc(n ? n : 1, sizeof(*txt));
	int rc;

	if (!bl || !ed || !txt) {
		rc = memscope_error_set(
			err, MEMSCOPE_E_NOMEM, memscope_source_name(src), 0, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		if (memscope_inefficient_get(a, i)->src == input)
			bl[k++] = memscope_inefficient_get(a, i);
	/* the edits in file order */
	qsort(bl, k, sizeof(*bl), cmp_seq);
	for (i = 0; i < k; i++) {
		size_t len = types_text(bl[i], ",", txt[i].val);

		ed[i] = (struct memscope_attr_edit){ bl[i]->alloc_line, bl[i]->alloc_event_id,
			bl[i]->pid, "inefficient_type", txt[i].val, len };
	}
	rc = memscope_dump_copy_edit(src, ed, k, out, err);
out:
	free(bl);
	free(ed);
	free(txt);
	return rc;
}
