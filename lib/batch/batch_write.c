/* memscope-batch's summaries as JSON lines (read back by readers/batch_part.c), the runs that
 * gather them (whole or in shards merged), and the report over every input: text, JSON lines or
 * CSV. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "memscope/batch.h"
#include "memscope/memscope.h"
#include "batch_run.h"
#include "../writers/report.h"

#define BIT(f) (UINT64_C(1) << (f))

static const char *const field_names[MEMSCOPE_SUM_COUNT_] = { "index", "input", "rank", "device",
	"format", "status", "error", "bytes", "events", "skipped", "processes", "span_ns", "steps",
	"allocations", "frees", "accesses", "exit_leaks", "exit_leak_bytes", "step_leaks",
	"step_leak_bytes", "peak_bytes", "peak_pool", "peak_ns", "peak_step", "peak_owner",
	"peak_owner_bytes", "pool_peaks", "growth_per_step", "inefficient_blocks",
	"inefficient_bytes", "trace_rows", "pid", "node", "not_checked", "end" };

/* the text fields; every other is a number */
#define TEXT_FIELDS                                                                                \
	(BIT(MEMSCOPE_SUM_INPUT) | BIT(MEMSCOPE_SUM_DEVICE) | BIT(MEMSCOPE_SUM_NODE) |             \
		BIT(MEMSCOPE_SUM_FORMAT) | BIT(MEMSCOPE_SUM_STATUS) | BIT(MEMSCOPE_SUM_ERROR) |    \
		BIT(MEMSCOPE_SUM_NOT_CHECKED) | BIT(MEMSCOPE_SUM_PEAK_POOL) |                      \
		BIT(MEMSCOPE_SUM_PEAK_OWNER) | BIT(MEMSCOPE_SUM_POOL_PEAKS) |                      \
		BIT(MEMSCOPE_SUM_END))

/* the byte figures: held at MEMSCOPE_SUM_OVERFLOW when they overflowed */
#define BYTE_FIELDS                                                                                \
	(BIT(MEMSCOPE_SUM_BYTES) | BIT(MEMSCOPE_SUM_EXIT_LEAK_BYTES) |                             \
		BIT(MEMSCOPE_SUM_STEP_LEAK_BYTES) | BIT(MEMSCOPE_SUM_PEAK_BYTES) |                 \
		BIT(MEMSCOPE_SUM_PEAK_OWNER_BYTES) | BIT(MEMSCOPE_SUM_INEFFICIENT_BYTES))

const char *memscope_batch_field_name(enum memscope_sum_field f)
{
	return (unsigned)f < MEMSCOPE_SUM_COUNT_ ? field_names[f] : NULL;
}

static int has(const struct memscope_summary *s, enum memscope_sum_field f)
{
	return (s->has & BIT(f)) != 0;
}

/* Whether input s ended at its program's exit: what is alive then is a leak (summaries of
 * older parts have no end: exit). */
static int at_exit(const struct memscope_summary *s)
{
	return !has(s, MEMSCOPE_SUM_END) || !strcmp(s->str[MEMSCOPE_SUM_END], "exit");
}

static int is_ok(const struct memscope_summary *s)
{
	return has(s, MEMSCOPE_SUM_STATUS) && !strcmp(s->str[MEMSCOPE_SUM_STATUS], "ok");
}

/* Whether v of figure f is a byte figure that overflowed (MEMSCOPE_SUM_OVERFLOW). */
static int overflowed(size_t f, int64_t v)
{
	return (BYTE_FIELDS & BIT(f)) && v == MEMSCOPE_SUM_OVERFLOW;
}

/* ------------------------------------------------------------------------------------------ */
/* a summary as JSON */

/* pool_peaks "PTA=1;ATB=2" as {"PTA":1,"ATB":2} */
static void json_pools(FILE *out, const char *s)
{
	const char *sep = "";

	fputc('{', out);
	while (*s) {
		const char *eq = strchr(s, '='), *end = strchr(s, ';');

		if (!end)
			end = s + strlen(s);
		if (!eq || eq > end)
			break;
		fputs(sep, out);
		ms__json_str(out, s, (size_t)(eq - s));
		fprintf(out, ":%.*s", (int)(end - eq - 1), eq + 1);
		sep = ",";
		s = *end ? end + 1 : end;
	}
	fputc('}', out);
}

/* Every field as "key":value, comma-separated. */
static void json_fields(FILE *out, const struct memscope_summary *s)
{
	size_t f;

	for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++) {
		fprintf(out, "%s\"%s\":", f ? "," : "", field_names[f]);
		if (!has(s, f))
			fputs("null", out);
		else if (f == MEMSCOPE_SUM_POOL_PEAKS)
			json_pools(out, s->str[f]);
		else if (TEXT_FIELDS & BIT(f))
			ms__json_cstr(out, s->str[f]);
		else
			fprintf(out, "%" PRId64, s->num[f]);
		/* memscope-leaks' rule (ms__json_bytes): the figure, then that it overflowed */
		if (has(s, f) && overflowed(f, s->num[f]))
			fprintf(out, ",\"%s_overflowed\":true", field_names[f]);
	}
}

int memscope_summary_write(FILE *out, const struct memscope_summary *s)
{
	fputc('{', out);
	json_fields(out, s);
	fputs("}\n", out);
	return ferror(out) ? MEMSCOPE_E_IO : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the run */

struct memscope_batch {
	uint64_t n, hash;
	int lenient;
	uint64_t n_shards;	    /* of the parts read (0: none) */
	uint8_t *shard_read;	    /* [n_shards]: its part was read */
	struct memscope_summary *s; /* [n] */
	uint8_t *taken;		    /* [n] */
};

struct memscope_batch *memscope_batch_new(uint64_t n_inputs, uint64_t list_hash, int lenient)
{
	struct memscope_batch *b = calloc(1, sizeof(*b));

	if (!b || n_inputs > MEMSCOPE_BATCH_MAX_INPUTS ||
		!(b->s = calloc(n_inputs ? n_inputs : 1, sizeof(*b->s))) ||
		!(b->taken = calloc(n_inputs ? n_inputs : 1, 1))) {
		memscope_batch_free(b);
		return NULL;
	}
	b->n = n_inputs, b->hash = list_hash, b->lenient = lenient;
	return b;
}

void memscope_batch_free(struct memscope_batch *b)
{
	uint64_t i;

	if (!b)
		return;
	for (i = 0; b->s && b->taken && i < b->n; i++)
		if (b->taken[i])
			memscope_summary_clear(&b->s[i]);
	free(b->s);
	free(b->taken);
	free(b->shard_read);
	free(b);
}

int memscope_batch_add(struct memscope_batch *b, struct memscope_summary *s, const char *name,
	uint64_t line, struct memscope_error *err)
{
	uint64_t i = (uint64_t)s->num[MEMSCOPE_SUM_INDEX];

	if (!has(s, MEMSCOPE_SUM_INDEX) || s->num[MEMSCOPE_SUM_INDEX] < 0 || i >= b->n)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, name, line,
			"input number %" PRId64 " of %" PRIu64 " inputs: not one of this run's",
			s->num[MEMSCOPE_SUM_INDEX], b->n);
	if (b->taken[i])
		return memscope_error_set(err, MEMSCOPE_E_INVALID, name, line,
			"input %" PRIu64 " given twice (a part given twice?)", i);
	if (!has(s, MEMSCOPE_SUM_INPUT) || !has(s, MEMSCOPE_SUM_STATUS))
		return memscope_error_set(err, MEMSCOPE_E_INVALID, name, line,
			"a summary without its input or status");
	b->s[i] = *s;
	b->taken[i] = 1;
	memset(s, 0, sizeof(*s));
	return 0;
}

int memscope_batch_part_header(FILE *out, uint64_t n_inputs, uint64_t list_hash, int lenient,
	uint64_t shard, uint64_t n_shards)
{
	fprintf(out,
		"{\"memscope-batch\":\"part\",\"version\":2,\"inputs\":%" PRIu64
		",\"list\":\"%016" PRIx64 "\",\"lenient\":%d,\"shard\":%" PRIu64
		",\"shards\":%" PRIu64 "}\n",
		n_inputs, list_hash, lenient ? 1 : 0, shard, n_shards);
	return ferror(out) ? MEMSCOPE_E_IO : 0;
}

int ms__batch_join_part(struct memscope_batch **b, const struct ms__batch_part_head *h,
	const char *name, struct memscope_error *err)
{
	if (!*b && !(*b = memscope_batch_new((uint64_t)h->inputs, h->hash, (int)h->lenient)))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, name, 1, "out of memory");
	if ((*b)->n != (uint64_t)h->inputs || (*b)->hash != h->hash)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, name, 1,
			"a part of another run: its shard found %" PRId64
			" inputs (list %016" PRIx64 "), the first part's %" PRIu64
			" (list %016" PRIx64 "); every shard must be "
			"given the same PATHs, spelled alike, over the same files",
			h->inputs, h->hash, (*b)->n, (*b)->hash);
	if ((*b)->lenient != h->lenient)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, name, 1,
			"a part of another run: read %s --lenient, the first part %s",
			h->lenient ? "with" : "without", (*b)->lenient ? "with" : "without");
	if ((*b)->n_shards && (*b)->n_shards != (uint64_t)h->shards)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, name, 1,
			"shard %" PRId64 "/%" PRId64 " of a run in %" PRId64 " shards, the first "
			"part's run is in %" PRIu64,
			h->shard, h->shards, h->shards, (*b)->n_shards);
	if (!(*b)->shard_read && !((*b)->shard_read = calloc((size_t)h->shards, 1)))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, name, 1, "out of memory");
	(*b)->n_shards = (uint64_t)h->shards;
	if ((*b)->shard_read[h->shard]++)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, name, 1,
			"the part of shard %" PRId64 "/%" PRId64 " given twice", h->shard,
			h->shards);
	return 0;
}

int ms__batch_field_text(enum memscope_sum_field f)
{
	return (TEXT_FIELDS & BIT(f)) != 0;
}

int ms__batch_overflowed(size_t f, int64_t v)
{
	return overflowed(f, v);
}

uint64_t memscope_batch_inputs(const struct memscope_batch *b)
{
	return b->n;
}

const struct memscope_summary *memscope_batch_get(const struct memscope_batch *b, uint64_t i)
{
	return i < b->n && b->taken[i] ? &b->s[i] : NULL;
}

int memscope_batch_complete(const struct memscope_batch *b, struct memscope_error *err)
{
	uint64_t i, first = 0, missing = 0;

	for (i = 0; i < b->n_shards; i++)
		if (!b->shard_read[i])
			return memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, 0,
				"the part of shard %" PRIu64 "/%" PRIu64
				" is missing: every shard's part is needed",
				i, b->n_shards);
	for (i = b->n; i-- > 0;)
		if (!b->taken[i])
			missing++, first = i;
	if (!missing)
		return 0;
	if (b->n_shards)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, 0,
			"%" PRIu64 " of %" PRIu64
			" inputs have no summary, the first input %" PRIu64
			": the part of shard %" PRIu64 "/%" PRIu64 " is missing, cut or edited",
			missing, b->n, first, first % b->n_shards, b->n_shards);
	return memscope_error_set(err, MEMSCOPE_E_INVALID, NULL, 0,
		"%" PRIu64 " of %" PRIu64 " inputs have no summary, the first input %" PRIu64,
		missing, b->n, first);
}

/* ------------------------------------------------------------------------------------------ */
/* the figures across inputs */

/*
 * The figures compared across inputs, with the smallest distance from the median that counts;
 * inputs stand out by the memory figures only (a file's size or its events are no finding).
 */
static const struct across_figure {
	enum memscope_sum_field f;
	int64_t floor;	   /* a distance from the median at or below this never stands out */
	int leak;	   /* a leak figure: inputs that have it when most have none stand out */
	int stands;	   /* inputs may stand out by it */
	const char *words; /* what the text calls it */
} across_figures[] = {
	{ MEMSCOPE_SUM_BYTES, 1 << 20, 0, 0, "file size" },
	{ MEMSCOPE_SUM_EVENTS, 100, 0, 0, "events" },
	{ MEMSCOPE_SUM_SPAN_NS, 1000000000, 0, 0, "time span" },
	{ MEMSCOPE_SUM_ALLOCATIONS, 100, 0, 0, "allocations" },
	{ MEMSCOPE_SUM_PEAK_BYTES, MS__STAND_FLOOR_PEAK, 0, 1, "peak" },
	{ MEMSCOPE_SUM_GROWTH_PER_STEP, MS__STAND_FLOOR_GROWTH, 0, 1, "growth per step" },
	{ MEMSCOPE_SUM_STEP_LEAK_BYTES, 0, 1, 1, "step leaks" },
	{ MEMSCOPE_SUM_EXIT_LEAK_BYTES, 0, 1, 1, "alive at end" },
	{ MEMSCOPE_SUM_INEFFICIENT_BYTES, 1 << 20, 0, 0, "inefficient memory" },
};
#define N_ACROSS (sizeof(across_figures) / sizeof(across_figures[0]))

/* One figure across the inputs read. */
struct across {
	uint64_t n;		  /* inputs with the figure */
	int64_t min, median, max; /* the lower middle one for an even n */
	uint64_t min_at, max_at;  /* the first input with the lowest, the highest */
	uint64_t mad;		  /* the median distance from the median */
	uint64_t limit;		  /* a distance above this stands out */
	uint64_t n_nonzero;	  /* inputs where it is above 0 */
	int only_some;		  /* a leak figure above 0 on at most half the inputs */
};

/* The figure of a across the inputs of b; v has room for every input. */
static void across_of(const struct memscope_batch *b, const struct across_figure *a, int64_t *v,
	uint64_t *d, struct across *r)
{
	uint64_t i, n = 0;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < b->n; i++) {
		const struct memscope_summary *s = &b->s[i];

		if (!is_ok(s) || !has(s, a->f))
			continue;
		if (!n || s->num[a->f] < r->min)
			r->min = s->num[a->f], r->min_at = i;
		if (!n || s->num[a->f] > r->max)
			r->max = s->num[a->f], r->max_at = i;
		r->n_nonzero += s->num[a->f] > 0;
		v[n++] = s->num[a->f];
	}
	if (!(r->n = n))
		return;
	r->limit = ms__stand_limit(v, d, n, a->floor, &r->median, &r->mad);
	r->only_some = a->leak && r->n_nonzero && r->n_nonzero * 2 <= n;
}

/* Whether input s stands out in figure a (across it is r). */
static int stands_out(
	const struct memscope_summary *s, const struct across_figure *a, const struct across *r)
{
	if (!a->stands || !is_ok(s) || !has(s, a->f) || r->n < 3)
		return 0;
	if (r->only_some)
		return s->num[a->f] > 0;
	return ms__apart(s->num[a->f], r->median) > r->limit;
}

/* max / median as a number ("-" when the median is not above 0 or the highest overflowed:
 * JSON null, CSV empty). */
static const char *imbalance(char *buf, size_t n, const struct across *r)
{
	if (r->median <= 0 || r->max == MEMSCOPE_SUM_OVERFLOW)
		return "-";
	snprintf(buf, n, "%.2f", (double)r->max / (double)r->median);
	return buf;
}

/* ------------------------------------------------------------------------------------------ */
/* the report */

struct report {
	FILE *out;
	const struct memscope_batch *b;
	const struct memscope_batch_opts *o;
	struct across r[N_ACROSS];
	const char **names; /* short names of the inputs (ms__input_names) */
	char *names_buf;
};

/* Whether s has leaks of the kinds o counts: a leak figure known and above 0. */
static int leaks_of(const struct memscope_summary *s, const struct memscope_batch_opts *o)
{
	return ((o->fail_kinds & MEMSCOPE_LEAK_STEP) && has(s, MEMSCOPE_SUM_STEP_LEAKS) &&
		       s->num[MEMSCOPE_SUM_STEP_LEAKS] > 0) ||
	       ((o->fail_kinds & MEMSCOPE_LEAK_EXIT) && has(s, MEMSCOPE_SUM_EXIT_LEAKS) &&
		       s->num[MEMSCOPE_SUM_EXIT_LEAKS] > 0);
}

/* Whether s fails the run for a pipeline: leaks of the kinds asked. */
static int leaking(const struct memscope_summary *s, const struct memscope_batch_opts *o)
{
	return o->fail_on_leak && is_ok(s) && leaks_of(s, o);
}

/* Whether no kind --fail-on-leak counts could be checked in s, which was read. */
static int unchecked_all(const struct memscope_summary *s, const struct memscope_batch_opts *o)
{
	return o->fail_on_leak && is_ok(s) &&
	       (!(o->fail_kinds & MEMSCOPE_LEAK_STEP) || !has(s, MEMSCOPE_SUM_STEP_LEAKS)) &&
	       (!(o->fail_kinds & MEMSCOPE_LEAK_EXIT) || !has(s, MEMSCOPE_SUM_EXIT_LEAKS));
}

/* Whether a kind --fail-on-leak counts could not be checked in s, which was read: its figure is
 * unknown (no steps, no blocks; not_checked says why). */
static int unchecked(const struct memscope_summary *s, const struct memscope_batch_opts *o)
{
	return o->fail_on_leak && is_ok(s) &&
	       (((o->fail_kinds & MEMSCOPE_LEAK_STEP) && !has(s, MEMSCOPE_SUM_STEP_LEAKS)) ||
		       ((o->fail_kinds & MEMSCOPE_LEAK_EXIT) && !has(s, MEMSCOPE_SUM_EXIT_LEAKS)));
}

static int over_peak(const struct memscope_summary *s, const struct memscope_batch_opts *o)
{
	return o->has_max_peak && is_ok(s) && has(s, MEMSCOPE_SUM_PEAK_BYTES) &&
	       (uint64_t)s->num[MEMSCOPE_SUM_PEAK_BYTES] > o->max_peak;
}

/* The names of the figures input i stands out in, joined by sep (nothing when none). */
static void put_stands_out(struct report *rp, uint64_t i, const char *sep, int json)
{
	size_t k;
	const char *at = "";

	for (k = 0; k < N_ACROSS; k++)
		if (stands_out(&rp->b->s[i], &across_figures[k], &rp->r[k])) {
			fprintf(rp->out, json ? "%s\"%s\"" : "%s%s", at,
				field_names[across_figures[k].f]);
			at = sep;
		}
}

/* A CSV field of a summary */
static void csv_value(FILE *out, const struct memscope_summary *s, size_t f)
{
	if (!has(s, f))
		return;
	if (TEXT_FIELDS & BIT(f))
		ms__csv_field(out, s->str[f], strlen(s->str[f]));
	else
		fprintf(out, "%" PRId64, s->num[f]);
}

/* The CSV column overflowed of a summary: its byte figures that overflowed, by ';'. */
static void csv_overflowed(FILE *out, const struct memscope_summary *s)
{
	const char *sep = "";
	size_t f;

	for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++)
		if (has(s, f) && overflowed(f, s->num[f])) {
			fprintf(out, "%s%s", sep, field_names[f]);
			sep = ";";
		}
}

static void write_csv(struct report *rp)
{
	static const char *const rows[] = { "min", "median", "max", "imbalance" };
	FILE *out = rp->out;
	uint64_t i;
	size_t f, k, w;

	fputs("row", out);
	for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++)
		fprintf(out, ",%s", field_names[f]);
	fputs(",stands_out,overflowed\n", out);
	for (i = 0; i < rp->b->n; i++) {
		fputs("input", out);
		for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++) {
			fputc(',', out);
			csv_value(out, &rp->b->s[i], f);
		}
		fputc(',', out);
		put_stands_out(rp, i, ";", 0);
		fputc(',', out);
		csv_overflowed(out, &rp->b->s[i]);
		fputc('\n', out);
	}
	for (w = 0; w < 4; w++) {
		const char *sep = "";

		fputs(rows[w], out);
		for (f = 0; f < MEMSCOPE_SUM_COUNT_; f++) {
			char buf[32];

			fputc(',', out);
			for (k = 0; k < N_ACROSS && across_figures[k].f != f; k++)
				;
			if (k == N_ACROSS || !rp->r[k].n)
				continue;
			if (w < 3)
				fprintf(out, "%" PRId64,
					w == 0	 ? rp->r[k].min
					: w == 1 ? rp->r[k].median
						 : rp->r[k].max);
			else if (strcmp(imbalance(buf, sizeof(buf), &rp->r[k]), "-"))
				fputs(buf, out); /* none: empty */
		}
		fputs(",,", out);
		for (k = 0; w < 3 && k < N_ACROSS; k++)
			if (rp->r[k].n &&
				overflowed(across_figures[k].f, w == 0	 ? rp->r[k].min
								: w == 1 ? rp->r[k].median
									 : rp->r[k].max)) {
				fprintf(out, "%s%s", sep, field_names[across_figures[k].f]);
				sep = ";";
			}
		fputc('\n', out);
	}
}

/* The inputs that pred says of as a JSON array of indexes. */
static void json_inputs(struct report *rp,
	int (*pred)(const struct memscope_summary *s, const struct memscope_batch_opts *o))
{
	const char *sep = "";
	uint64_t i;

	fputc('[', rp->out);
	for (i = 0; i < rp->b->n; i++)
		if (pred(&rp->b->s[i], rp->o))
			fprintf(rp->out, "%s%" PRIu64, sep, i), sep = ",";
	fputc(']', rp->out);
}

/* ,"key":v of figure f, and ,"key_overflowed":true when it overflowed (memscope-leaks' rule) */
static void json_figure(FILE *out, const char *key, size_t f, int64_t v)
{
	fprintf(out, ",\"%s\":%" PRId64, key, v);
	if (overflowed(f, v))
		fprintf(out, ",\"%s_overflowed\":true", key);
}

static void write_json(struct report *rp, const struct memscope_batch_result *res)
{
	FILE *out = rp->out;
	uint64_t i;
	size_t k;

	for (i = 0; i < rp->b->n; i++) {
		fputs("{\"type\":\"input\",", out);
		json_fields(out, &rp->b->s[i]);
		fputs(",\"stands_out\":[", out);
		put_stands_out(rp, i, ",", 1);
		fputs("]}\n", out);
	}
	for (k = 0; k < N_ACROSS; k++) {
		const struct across *r = &rp->r[k];
		size_t f = across_figures[k].f;
		const char *sep = "";
		char buf[32];

		if (!r->n)
			continue;
		fprintf(out, "{\"type\":\"across\",\"figure\":\"%s\",\"inputs\":%" PRIu64,
			field_names[f], r->n);
		json_figure(out, "min", f, r->min);
		fprintf(out, ",\"min_input\":%" PRIu64, r->min_at);
		json_figure(out, "median", f, r->median);
		json_figure(out, "max", f, r->max);
		fprintf(out, ",\"max_input\":%" PRIu64 ",\"imbalance\":%s,\"stand_out\":[",
			r->max_at, strcmp(imbalance(buf, sizeof(buf), r), "-") ? buf : "null");
		for (i = 0; i < rp->b->n; i++)
			if (stands_out(&rp->b->s[i], &across_figures[k], r))
				fprintf(out, "%s%" PRIu64, sep, i), sep = ",";
		fputs("]}\n", out);
	}
	fprintf(out,
		"{\"type\":\"summary\",\"inputs\":%" PRIu64 ",\"read\":%" PRIu64
		",\"invalid\":%" PRIu64 ",\"error\":%" PRIu64,
		res->n_inputs, res->n_ok, res->n_invalid, res->n_error);
	ms__json_bytes(out, "bytes", res->bytes);
	fprintf(out, ",\"leaking\":%" PRIu64 ",\"leaking_inputs\":", res->n_leaking);
	json_inputs(rp, leaking);
	fprintf(out, ",\"unchecked\":%" PRIu64 ",\"unchecked_inputs\":", res->n_unchecked);
	json_inputs(rp, unchecked);
	fprintf(out, ",\"over_peak\":%" PRIu64 ",\"over_peak_inputs\":", res->n_over_peak);
	json_inputs(rp, over_peak);
	fputs("}\n", out);
}

/* A number of figure f as text: bytes in binary units (held at its highest: "more than 8.00 EiB
 * (the total overflowed)"), times in seconds, counts as they are. */
static const char *num_text(char *buf, size_t n, size_t f, int64_t v)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];

	if (overflowed(f, v)) {
		snprintf(buf, n, "more than %s (the total overflowed)",
			memscope_bytes_text(b, sizeof(b), (uint64_t)v));
		return buf;
	}
	switch (f) {
	case MEMSCOPE_SUM_BYTES:
	case MEMSCOPE_SUM_PEAK_BYTES:
	case MEMSCOPE_SUM_STEP_LEAK_BYTES:
	case MEMSCOPE_SUM_EXIT_LEAK_BYTES:
	case MEMSCOPE_SUM_INEFFICIENT_BYTES:
	case MEMSCOPE_SUM_PEAK_OWNER_BYTES:
		return memscope_bytes_text(buf, n, (uint64_t)v);
	case MEMSCOPE_SUM_GROWTH_PER_STEP:
		if (v < 0) {
			buf[0] = '-';
			memscope_bytes_text(buf + 1, n - 1, 0 - (uint64_t)v);
		} else {
			buf[0] = '+';
			memscope_bytes_text(buf + 1, n - 1, (uint64_t)v);
		}
		return buf;
	case MEMSCOPE_SUM_SPAN_NS:
	case MEMSCOPE_SUM_PEAK_NS:
		return memscope_seconds_text(buf, n, (uint64_t)v, 0);
	default:
		snprintf(buf, n, "%" PRId64, v);
		return buf;
	}
}

/* A figure of s as a text table shows it ("-" for none). */
static const char *field_text(char *buf, size_t n, const struct memscope_summary *s, size_t f)
{
	if (!has(s, f))
		return "-";
	if (!(TEXT_FIELDS & BIT(f)))
		return num_text(buf, n, f, s->num[f]);
	memscope_text_escape(buf, n, s->str[f], strlen(s->str[f])); /* one printable line */
	return buf;
}

/* "#12 rank 3 device 0 pid 77 node host1 (short name)": how the text names input i. */
static void text_who(struct report *rp, uint64_t i)
{
	static const enum memscope_sum_field who[4] = { MEMSCOPE_SUM_RANK, MEMSCOPE_SUM_DEVICE,
		MEMSCOPE_SUM_PID, MEMSCOPE_SUM_NODE };
	const struct memscope_summary *s = &rp->b->s[i];
	char name[512];
	size_t k;

	fprintf(rp->out, "#%" PRIu64, i);
	for (k = 0; k < 4; k++) {
		enum memscope_sum_field f = who[k];

		if (!has(s, f))
			continue;
		if (!(TEXT_FIELDS & BIT(f))) {
			fprintf(rp->out, " %s %" PRId64, field_names[f], s->num[f]);
			continue;
		}
		memscope_text_escape(name, sizeof(name), s->str[f], strlen(s->str[f]));
		fprintf(rp->out, " %s %s", field_names[f], name);
	}
	memscope_text_escape(name, sizeof(name), rp->names[i], strlen(rp->names[i]));
	fprintf(rp->out, " (%s)", name);
}

/* "12 (1.50 MiB)" for a count and its bytes into buf (n bytes), "0", "-" unknown. */
static const char *count_bytes(
	char *buf, size_t n, const struct memscope_summary *s, size_t count, size_t bytes)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX];

	if (!has(s, count))
		return "-";
	if (!s->num[count])
		return "0";
	snprintf(buf, n, "%" PRId64 " (%s)", s->num[count],
		num_text(b, sizeof(b), bytes, s->num[bytes]));
	return buf;
}

/* One line of the table: input i. */
static void text_row(struct report *rp, uint64_t i)
{
	const struct memscope_summary *s = &rp->b->s[i];
	char rank_buf[32], dev_buf[32], pid_buf[32], node_buf[64], ev[32], span[40],
		peak[MEMSCOPE_BYTES_TEXT_MAX], at[32], grow[MEMSCOPE_BYTES_TEXT_MAX + 1], step[96],
		exit[96], ineff[96], name[1024];
	const char *rank = field_text(rank_buf, sizeof(rank_buf), s, MEMSCOPE_SUM_RANK);
	const char *dev = field_text(dev_buf, sizeof(dev_buf), s, MEMSCOPE_SUM_DEVICE);
	const char *pid = field_text(pid_buf, sizeof(pid_buf), s, MEMSCOPE_SUM_PID);
	const char *node = field_text(node_buf, sizeof(node_buf), s, MEMSCOPE_SUM_NODE);

	memscope_text_escape(name, sizeof(name), rp->names[i], strlen(rp->names[i]));
	if (!is_ok(s)) {
		fprintf(rp->out, "%4" PRIu64 " %4s %4s %8s %-12s  %-s, not read  %s\n", i, rank,
			dev, pid, node, field_text(ev, sizeof(ev), s, MEMSCOPE_SUM_STATUS), name);
		return;
	}
	fprintf(rp->out,
		"%4" PRIu64 " %4s %4s %8s %-12s %8s %11s %10s %4s %10s %15s %15s %15s  %s\n", i,
		rank, dev, pid, node, field_text(ev, sizeof(ev), s, MEMSCOPE_SUM_EVENTS),
		field_text(span, sizeof(span), s, MEMSCOPE_SUM_SPAN_NS),
		field_text(peak, sizeof(peak), s, MEMSCOPE_SUM_PEAK_BYTES),
		field_text(at, sizeof(at), s, MEMSCOPE_SUM_PEAK_STEP),
		field_text(grow, sizeof(grow), s, MEMSCOPE_SUM_GROWTH_PER_STEP),
		count_bytes(step, sizeof(step), s, MEMSCOPE_SUM_STEP_LEAKS,
			MEMSCOPE_SUM_STEP_LEAK_BYTES),
		count_bytes(exit, sizeof(exit), s, MEMSCOPE_SUM_EXIT_LEAKS,
			MEMSCOPE_SUM_EXIT_LEAK_BYTES),
		count_bytes(ineff, sizeof(ineff), s, MEMSCOPE_SUM_INEFFICIENT_BLOCKS,
			MEMSCOPE_SUM_INEFFICIENT_BYTES),
		name);
	if (!at_exit(s) && has(s, MEMSCOPE_SUM_EXIT_LEAKS))
		fprintf(rp->out, "%*s(AT END: alive at the end of the %s, not a leak by itself)\n",
			10, "", s->str[MEMSCOPE_SUM_END]);
}

static size_t short_why(const char *s, const char **at);

/* The first line, an answer: "2 of 5 inputs leak at exit (largest: #3 rank 3, 7.63 MiB); 1 holds
 * memory at the end of its snapshot or profile; 2 could not be step-checked (no steps)". */
static void text_answer(struct report *rp, const struct memscope_batch_result *res)
{
	const struct memscope_batch *b = rp->b;
	uint64_t i, n_exit = 0, n_other = 0, n_step_unchecked = 0, best = 0;
	int64_t best_bytes = -1;
	const char *why = NULL;
	size_t why_len = 0;
	char bytes[MEMSCOPE_BYTES_TEXT_MAX], rank[32], name[512];

	for (i = 0; i < b->n; i++) {
		const struct memscope_summary *s = &b->s[i];

		if (!is_ok(s))
			continue;
		if (!has(s, MEMSCOPE_SUM_STEP_LEAKS)) {
			if (!n_step_unchecked++ && has(s, MEMSCOPE_SUM_NOT_CHECKED))
				why_len = short_why(s->str[MEMSCOPE_SUM_NOT_CHECKED], &why);
		}
		if (!has(s, MEMSCOPE_SUM_EXIT_LEAKS) || s->num[MEMSCOPE_SUM_EXIT_LEAKS] <= 0)
			continue;
		if (!at_exit(s)) {
			n_other++;
			continue;
		}
		if (!n_exit++ || s->num[MEMSCOPE_SUM_EXIT_LEAK_BYTES] > best_bytes) {
			best = i;
			best_bytes = s->num[MEMSCOPE_SUM_EXIT_LEAK_BYTES];
		}
	}
	fprintf(rp->out, "%" PRIu64 " of %" PRIu64 " input%s read leak%s at exit", n_exit,
		res->n_ok, res->n_ok == 1 ? "" : "s", res->n_ok == 1 ? "s" : "");
	if (n_exit) {
		const struct memscope_summary *s = &b->s[best];

		fprintf(rp->out, " (largest: #%" PRIu64, best);
		if (has(s, MEMSCOPE_SUM_RANK))
			fprintf(rp->out, " rank %s",
				field_text(rank, sizeof(rank), s, MEMSCOPE_SUM_RANK));
		memscope_text_escape(name, sizeof(name), rp->names[best], strlen(rp->names[best]));
		fprintf(rp->out, " %s, %s)", name,
			best_bytes == MEMSCOPE_SUM_OVERFLOW
				? "more than 8.00 EiB"
				: memscope_bytes_text(bytes, sizeof(bytes), (uint64_t)best_bytes));
	}
	if (n_other)
		fprintf(rp->out,
			"; %" PRIu64 " hold%s memory at the end of a snapshot, profile or stopped "
			"recording (not a leak by itself)",
			n_other, n_other == 1 ? "s" : "");
	if (n_step_unchecked)
		fprintf(rp->out, "; %" PRIu64 " could not be step-checked (%.*s)", n_step_unchecked,
			why ? (int)why_len : 7, why ? why : "unknown");
	if (res->n_invalid + res->n_error)
		fprintf(rp->out, "; %" PRIu64 " not read", res->n_invalid + res->n_error);
	fputs("\n\n", rp->out);
}

/* "1.20 GiB (#3)": a figure across inputs and the input that has it. */
static const char *value_at(char *buf, size_t n, size_t f, int64_t v, uint64_t at)
{
	char t[MEMSCOPE_BYTES_TEXT_MAX + 1];

	snprintf(buf, n, "%s (#%" PRIu64 ")", num_text(t, sizeof(t), f, v), at);
	return buf;
}

/* The highest against the median as text: "2.50" (max / median), "3.00 MiB vs 0" when the
 * median is 0 and the highest is not (no ratio says how far that is), "-" else. */
static const char *ratio_text(char *buf, size_t n, size_t f, const struct across *r)
{
	char t[MEMSCOPE_BYTES_TEXT_MAX + 1];

	if (r->median > 0)
		return imbalance(buf, n, r);
	if (r->median == 0 && r->max > 0) {
		snprintf(buf, n, "%s vs 0", num_text(t, sizeof(t), f, r->max));
		return buf;
	}
	return "-";
}

/* The inputs that stand out in figure k, under a line saying which. 1 when there is one. */
static int text_stand_out(struct report *rp, size_t k)
{
	const struct across *r = &rp->r[k];
	size_t f = across_figures[k].f;
	uint64_t i, n_out = 0;
	char v[64], m[64];

	for (i = 0; i < rp->b->n; i++)
		n_out += stands_out(&rp->b->s[i], &across_figures[k], r);
	if (!n_out)
		return 0;
	if (r->only_some)
		fprintf(rp->out, "  %s: above 0 on %" PRIu64 " of %" PRIu64 " inputs (median %s)\n",
			across_figures[k].words, r->n_nonzero, r->n,
			num_text(m, sizeof(m), f, r->median));
	else
		fprintf(rp->out, "  %s: %" PRIu64 " input%s far from the median %s\n",
			across_figures[k].words, n_out, n_out == 1 ? "" : "s",
			num_text(m, sizeof(m), f, r->median));
	for (i = 0; i < rp->b->n; i++)
		if (stands_out(&rp->b->s[i], &across_figures[k], r)) {
			fputs("    ", rp->out);
			text_who(rp, i);
			fprintf(rp->out, ": %s\n", num_text(v, sizeof(v), f, rp->b->s[i].num[f]));
		}
	return 1;
}

/* The inputs pred says of, one line each with what follow adds, or "none". */
static void text_list(struct report *rp,
	int (*pred)(const struct memscope_summary *s, const struct memscope_batch_opts *o), int why)
{
	uint64_t i, n = 0;
	char text[512];

	for (i = 0; i < rp->b->n; i++) {
		const struct memscope_summary *s = &rp->b->s[i];

		if (!pred(s, rp->o))
			continue;
		fputs("  ", rp->out);
		text_who(rp, i);
		if (why && has(s, MEMSCOPE_SUM_NOT_CHECKED)) {
			memscope_text_escape(text, sizeof(text), s->str[MEMSCOPE_SUM_NOT_CHECKED],
				strlen(s->str[MEMSCOPE_SUM_NOT_CHECKED]));
			fprintf(rp->out, ": %s", text);
		}
		fputc('\n', rp->out);
		n++;
	}
	if (!n)
		fputs("  none\n", rp->out);
}

/* leak kinds in words: "step", "exit", "step or exit" */
static const char *kinds_words(unsigned kinds)
{
	return kinds == MEMSCOPE_LEAK_STEP   ? "step"
	       : kinds == MEMSCOPE_LEAK_EXIT ? "exit"
					     : "step or exit";
}

/* what --fail-on-leak counts, in words */
static const char *kinds_text(const struct memscope_batch_opts *o)
{
	return kinds_words(o->fail_kinds);
}

/* The kinds --fail-on-leak counts that some input read could not be checked for. */
static unsigned unchecked_kinds(const struct memscope_batch *b, const struct memscope_batch_opts *o)
{
	unsigned kinds = 0;
	uint64_t i;

	for (i = 0; i < b->n; i++) {
		const struct memscope_summary *s = &b->s[i];

		if (!b->taken[i] || !unchecked(s, o))
			continue;
		if ((o->fail_kinds & MEMSCOPE_LEAK_STEP) && !has(s, MEMSCOPE_SUM_STEP_LEAKS))
			kinds |= MEMSCOPE_LEAK_STEP;
		if ((o->fail_kinds & MEMSCOPE_LEAK_EXIT) && !has(s, MEMSCOPE_SUM_EXIT_LEAKS))
			kinds |= MEMSCOPE_LEAK_EXIT;
	}
	return kinds;
}

static void write_text(struct report *rp, const struct memscope_batch_result *res)
{
	FILE *out = rp->out;
	const struct memscope_batch *b = rp->b;
	uint64_t i;
	size_t k;
	int any = 0;
	char lo[96], mid[96], hi[96], ratio[96], name[1024];

	text_answer(rp, res);
	fprintf(out, "%4s %4s %4s %8s %-12s %8s %11s %10s %4s %10s %15s %15s %15s  %s\n", "#",
		"RANK", "DEV", "PID", "NODE", "EVENTS", "TIME SPAN", "PEAK", "STEP", "GROWTH",
		"STEP LEAKS", "AT END", "INEFFICIENT", "INPUT");
	for (i = 0; i < b->n; i++)
		text_row(rp, i);
	fputs("(PID: the process of its events; NODE: the host its path names; STEP: the step of "
	      "the peak;\n GROWTH: live bytes added per step; leaks and inefficient memory: "
	      "blocks (bytes), - not checked;\n AT END: blocks alive at the input's end, a leak at "
	      "a program's exit; HAL blocks not counted where\n PTA, ATB or MindSpore blocks lie "
	      "inside them (memscope-leaks lists both pools))\n",
		out);
	if (res->n_invalid + res->n_error) {
		fprintf(out, "\nnot read (%" PRIu64 "):\n", res->n_invalid + res->n_error);
		for (i = 0; i < b->n; i++)
			if (!is_ok(&b->s[i])) {
				const char *msg = b->s[i].str[MEMSCOPE_SUM_ERROR];

				memscope_text_escape(
					name, sizeof(name), msg ? msg : "", msg ? strlen(msg) : 0);
				fprintf(out, "  #%" PRIu64 " %s\n", i, name);
			}
	}
	fprintf(out, "\nacross %" PRIu64 " input%s read: %22s %14s %22s %14s\n", res->n_ok,
		res->n_ok == 1 ? "" : "s", "lowest", "median", "highest", "max/median");
	for (k = 0; k < N_ACROSS; k++) {
		const struct across *r = &rp->r[k];
		size_t f = across_figures[k].f;

		if (r->n)
			fprintf(out, "  %-20s %22s %14s %22s %14s\n", across_figures[k].words,
				value_at(lo, sizeof(lo), f, r->min, r->min_at),
				num_text(mid, sizeof(mid), f, r->median),
				value_at(hi, sizeof(hi), f, r->max, r->max_at),
				ratio_text(ratio, sizeof(ratio), f, r));
	}
	fputs("\nstand out (by peak, growth per step, step leaks and memory alive at the end):\n",
		out);
	for (k = 0; k < N_ACROSS; k++)
		any |= text_stand_out(rp, k);
	if (!any)
		fputs("  none\n", out);
	fprintf(out,
		"\n%" PRIu64 " input%s: %" PRIu64 " read, %" PRIu64 " invalid, %" PRIu64
		" not readable; %s of files read\n",
		res->n_inputs, res->n_inputs == 1 ? "" : "s", res->n_ok, res->n_invalid,
		res->n_error, memscope_bytes_text(lo, sizeof(lo), res->bytes));
	if (rp->o->fail_on_leak) {
		fprintf(out, "%" PRIu64 " input%s with %s leaks:\n", res->n_leaking,
			res->n_leaking == 1 ? "" : "s", kinds_text(rp->o));
		text_list(rp, leaking, 0);
		if (res->n_unchecked) {
			fprintf(out, "%" PRIu64 " input%s where %s leaks could not be checked:\n",
				res->n_unchecked, res->n_unchecked == 1 ? "" : "s",
				kinds_words(unchecked_kinds(b, rp->o)));
			text_list(rp, unchecked, 1);
		}
	}
	if (rp->o->has_max_peak) {
		fprintf(out, "%" PRIu64 " input%s above --max-peak %s:\n", res->n_over_peak,
			res->n_over_peak == 1 ? "" : "s",
			memscope_bytes_text(lo, sizeof(lo), rp->o->max_peak));
		text_list(rp, over_peak, 0);
	}
}

/* The short reason of a not_checked text: "no steps" of "step leaks: no steps: neither ...". */
static size_t short_why(const char *s, const char **at)
{
	const char *p = strstr(s, ": ");

	*at = p ? p + 2 : s;
	p = strchr(*at, ':');
	return p ? (size_t)(p - *at) : strlen(*at);
}

const char *memscope_batch_unchecked_text(
	char *buf, size_t size, const struct memscope_batch *b, const struct memscope_batch_opts *o)
{
	uint64_t i, n = 0, n_ok = 0, named = 0;
	size_t at = 0, len = 0;
	const char *why = "", *first = "";
	int same = 1;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < b->n; i++) {
		const struct memscope_summary *s = &b->s[i];
		const char *w = "";
		size_t wl = 0;

		n_ok += is_ok(s);
		if (!b->taken[i] || !unchecked(s, o))
			continue;
		if (has(s, MEMSCOPE_SUM_NOT_CHECKED))
			wl = short_why(s->str[MEMSCOPE_SUM_NOT_CHECKED], &w);
		if (!n++)
			why = w, len = wl, first = w;
		else if (wl != len || memcmp(w, why, wl))
			same = 0;
	}
	if (!n)
		return buf;
	ms__text_put(buf, size, &at,
		"%s leaks not checked in %" PRIu64 " of %" PRIu64 " input%s read",
		kinds_words(unchecked_kinds(b, o)), n, n_ok, n_ok == 1 ? "" : "s");
	if (same && len)
		ms__text_put(buf, size, &at, " (%.*s)", (int)len, first);
	ms__text_put(buf, size, &at, ":");
	for (i = 0; i < b->n && named <= 8; i++) {
		const struct memscope_summary *s = &b->s[i];
		char name[256];

		if (!b->taken[i] || !unchecked(s, o))
			continue;
		if (named++ == 8) {
			ms__text_put(buf, size, &at, " ...");
			break;
		}
		memscope_text_escape(name, sizeof(name), s->str[MEMSCOPE_SUM_INPUT],
			strlen(s->str[MEMSCOPE_SUM_INPUT]));
		ms__text_put(buf, size, &at, "%s #%" PRIu64 " (%s)", named > 1 ? "," : "", i, name);
	}
	return buf;
}

int memscope_batch_write(FILE *out, enum memscope_batch_format fmt, const struct memscope_batch *b,
	const struct memscope_batch_opts *o, struct memscope_batch_result *res)
{
	struct report rp = { out, b, o, { { 0 } }, NULL, NULL };
	struct memscope_batch_result r0 = { 0 };
	const char **inputs = NULL;
	int64_t *v = malloc((b->n ? b->n : 1) * sizeof(*v));
	uint64_t i;
	size_t k;
	int rc = 0;

	if (!res)
		res = &r0;
	memset(res, 0, sizeof(*res));
	if (!v || !(inputs = calloc(b->n ? b->n : 1, sizeof(*inputs))) ||
		!(rp.names = calloc(b->n ? b->n : 1, sizeof(*rp.names)))) {
		rc = MEMSCOPE_E_NOMEM;
		goto out;
	}
	for (i = 0; i < b->n; i++) {
		const struct memscope_summary *s = &b->s[i];

		inputs[i] = s->str[MEMSCOPE_SUM_INPUT] ? s->str[MEMSCOPE_SUM_INPUT] : "";
		res->n_inputs++;
		if (is_ok(s))
			res->n_ok++;
		else if (s->str[MEMSCOPE_SUM_STATUS] &&
			 !strcmp(s->str[MEMSCOPE_SUM_STATUS], "invalid"))
			res->n_invalid++;
		else
			res->n_error++;
		/* a figure held at its highest adds up to more than a sum holds */
		if (has(s, MEMSCOPE_SUM_BYTES) &&
			(overflowed(MEMSCOPE_SUM_BYTES, s->num[MEMSCOPE_SUM_BYTES]) ||
				__builtin_add_overflow(res->bytes,
					(uint64_t)s->num[MEMSCOPE_SUM_BYTES], &res->bytes)))
			res->bytes = MEMSCOPE_BYTES_OVERFLOW;
		res->n_leaking += leaking(s, o);
		res->n_unchecked += unchecked(s, o);
		res->n_unchecked_all += unchecked_all(s, o);
		res->n_over_peak += over_peak(s, o);
	}
	/* the short names of the inputs: only the text report shows them */
	if (fmt == MEMSCOPE_BATCH_TEXT &&
		!(rp.names_buf = ms__input_names(inputs, b->n, rp.names))) {
		rc = MEMSCOPE_E_NOMEM;
		goto out;
	}
	for (k = 0; k < N_ACROSS; k++)
		across_of(b, &across_figures[k], v, (uint64_t *)v,
			&rp.r[k]); /* distances in v's room */
	if (fmt == MEMSCOPE_BATCH_CSV)
		write_csv(&rp);
	else if (fmt == MEMSCOPE_BATCH_JSON)
		write_json(&rp, res);
	else
		write_text(&rp, res);
	rc = ferror(out) ? MEMSCOPE_E_IO : 0;
out:
	free(rp.names_buf);
	free(rp.names);
	free(inputs);
	free(v);
	return rc;
}
