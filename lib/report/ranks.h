/* The report's "ranks" and "baseline" members: what each input of a run (and of its baseline)
 * leaves behind once read, a few figures per input and step, and the JSON and verdicts made of
 * them. */
#ifndef MEMSCOPE_REPORT_RANKS_H
#define MEMSCOPE_REPORT_RANKS_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/u64map.h"
#include "../writers/report.h"
#include "memscope/analysis.h"
#include "memscope/batch.h"
#include "memscope/compare.h"
#include "memscope/error.h"
#include "memscope/leaks.h"
#include "memscope/peak.h"
#include "memscope/strtab.h"

/* The two sides of a report: the run (every INPUT) and its baseline (--baseline OTHER...). */
enum ms__ranks_side {
	MS__RANKS_RUN = 0,
	MS__RANKS_BASE = 1,
};

/* the most step columns kept per input (the heatmap's) */
#define MS__RANKS_MAX_STEPS 500
/* the most cells of each of the heatmap's grids (live, growth): fewer columns for many inputs */
#define MS__RANKS_MAX_CELLS 150000
/* the most leak sites common to several inputs written */
#define MS__RANKS_MAX_COMMON 100
/* the most rows of the baseline's per op/owner differences written */
#define MS__RANKS_MAX_BY 100

/*
 * Both sides' inputs, row by row: per input its summary figures (those of memscope-batch's JSON),
 * the live bytes of its peak's track at the end of each step (at most MS__RANKS_MAX_STEPS
 * columns), and its leak sites (kind, pool, op, owner, stacks; their texts in a string table of
 * its own). Memory grows with the inputs x steps kept and the distinct leak sites, not with the
 * events; and, for the one input of a side given ms__ranks_item, with that input's op and pool
 * rows (memscope/compare.h: about 32 bytes each). One object, one thread.
 */
struct ms__ranks;

struct ms__ranks_col;
struct ms__ranks_site;

/* NULL on OOM. */
struct ms__ranks *ms__ranks_new(void);
/* NULL is fine. */
void ms__ranks_free(struct ms__ranks *r);

/*
 * Input i of side (numbered from 0 within its side, in any order, each once) once read: sum its
 * summary (read or failed: memscope_summary_read / memscope_summary_fail; copied), p and l the
 * peak and leak analyses of that read alone (finished; NULL for an input that could not be read,
 * or whose analyses were not made), st the table of their strings. p, l and st are borrowed
 * during the call only: what is kept is copied. 0, MEMSCOPE_E_ARG (an input given twice, a side
 * out of range, after finish), MEMSCOPE_E_NOMEM (the input counts as given, its row and sites
 * perhaps in part).
 */
int ms__ranks_add(struct ms__ranks *r, enum ms__ranks_side side, uint32_t i,
	const struct memscope_summary *sum, const struct memscope_peak *p,
	const struct memscope_leaks *l, const struct memscope_strtab *st);

/*
 * ms__ranks_add of what a worker kept of input i (report_line.c): its summary sum, the columns
 * its read gave (cols, n_cols: struct ms__ranks_row's) and its sites (n and bytes over the
 * input; their string and stack ids of st; n_inputs and last unused), in the order that input's
 * read found them: the same row and sites as ms__ranks_add of that read. Borrowed during the
 * call. Returns as ms__ranks_add.
 */
int ms__ranks_add_kept(struct ms__ranks *r, enum ms__ranks_side side, uint32_t i,
	const struct memscope_summary *sum, const struct ms__ranks_col *cols, size_t n_cols,
	const struct ms__ranks_site *sites, size_t n_sites, const struct memscope_strtab *st);

/*
 * For the baseline's per op figures, equal to memscope-compare's on the same pair: a run item to
 * add to the read of the one input of side (the run's, the baseline's), fed its events, whose
 * strings are in st (borrowed for the read). Call it once per side that has one input, before
 * that input's read; the comparison is made when both sides had one (ms__ranks_finish), and the
 * rows kept for it (memscope/compare.h: about 32 bytes per op and pool row, and a lookup per
 * event) go at finish either way. The item's object is r's (nothing to free). 0, MEMSCOPE_E_ARG
 * (called twice for a side, or after finish), MEMSCOPE_E_NOMEM. name names the input in
 * messages.
 */
int ms__ranks_item(struct ms__ranks *r, enum ms__ranks_side side, const char *name,
	const struct memscope_strtab *st, struct memscope_run_item *item);

/*
 * After every input of both sides is added: the figures across inputs (medians, who stands out),
 * the common leak sites, and with ms__ranks_item on both sides the comparison of the pair
 * (memscope_compare_run with memscope-compare's defaults). A comparison that fails is no failure
 * of the report: its message goes into the baseline's "by_why". 0 or MEMSCOPE_E_NOMEM.
 */
int ms__ranks_finish(struct ms__ranks *r);

/* One verdict line (report-schema.md "verdicts"): level "bad", "warn", "ok" or "info" (static),
 * the figure (bytes, has_bytes 0: null), the count (has_count 0: null) and the text. */
struct ms__ranks_verdict {
	const char *level;
	int has_bytes, has_count;
	int64_t bytes;
	uint64_t count;
	char text[512];
};

/*
 * After ms__ranks_finish, the "ranks" member's value for the run side: null (the word) with fewer
 * than two inputs, else {"rows", "steps", "live", "growth", "common_sites"} (report-schema.md;
 * the rule of "stands_out" and of the columns in formats/report.md "Several ranks"). 0,
 * MEMSCOPE_E_IO (out's error flag) or MEMSCOPE_E_NOMEM (nothing written).
 */
int ms__ranks_json(FILE *out, const struct ms__ranks *r);

/*
 * The "ranks" verdict, into *v: "3 of 64 ranks stand out: rank 7 peak 9.1 GiB (median 4.0 GiB),
 * ...; aten.mm at train.py:88 leaks on 4 of 64 ranks" ("bad" when some stand out by leaks or
 * growth or the first common site is a step leak, "warn" by the peak alone, "ok" else; count:
 * how many stand out). After ms__ranks_finish. 1 when the report has such a verdict (two inputs
 * or more on the run side), else 0 (*v untouched).
 */
int ms__ranks_verdict(const struct ms__ranks *r, struct ms__ranks_verdict *v);

/*
 * The "baseline" member's value: null (the word) when the baseline side has no input, else
 * {"inputs", "peak", "leaks", "growth", "by", "leaks_by", "ranks"} (report-schema.md): "by" the
 * bytes allocated per op as memscope-compare's summary says them (with ms__ranks_item on both
 * sides; [] otherwise, and "by_why" says why), "leaks_by" leaked bytes per op/owner, "ranks" per
 * rank (inputs paired by rank, else by order), each ranked by |difference|. After
 * ms__ranks_finish. 0, MEMSCOPE_E_IO (out's error flag) or MEMSCOPE_E_NOMEM (nothing written).
 */
int ms__baseline_json(FILE *out, const struct ms__ranks *r);

/* The "baseline" verdict: "peak 39.1 MiB vs 31.5 MiB in the baseline (+7.63 MiB); aten._to_copy
 * allocated 7.63 MiB more than in the baseline" ("warn" when the peak, leaks or growth grew, "ok"
 * else; bytes: the peak's difference). 1 when there is a baseline, else 0 (*v untouched). After
 * ms__ranks_finish. */
int ms__baseline_verdict(const struct ms__ranks *r, struct ms__ranks_verdict *v);

/* ------------------------------------------------------------------------------------------ */
/* The object's insides, for report_ranks.c, report_baseline.c and report_line.c alone. */

/* the figures of a row, those of memscope-batch's JSON (bit f of ms__ranks_row.has) */
enum ms__ranks_fig {
	MS__FIG_PEAK,	   /* peak_bytes */
	MS__FIG_GROWTH,	   /* growth_per_step */
	MS__FIG_STEP_LEAK, /* step_leak_bytes */
	MS__FIG_EXIT_LEAK, /* exit_leak_bytes */
	MS__FIG_RANK,	   /* rank */
	MS__FIG_COUNT_
};

/* live bytes of the peak's track at the end of step `step` (its number) */
struct ms__ranks_col {
	uint64_t step;
	int64_t bytes;
};

/* One input. Texts owned (NULL: none). */
struct ms__ranks_row {
	int added, ok;	/* given to ms__ranks_add; its summary's status is "ok" */
	uint64_t index; /* its summary's */
	unsigned has;	/* bits 1u << enum ms__ranks_fig */
	int64_t fig[MS__FIG_COUNT_];
	char *input, *node, *device, *format, *status, *error, *end;
	struct ms__ranks_col *cols; /* ended steps in order, at most MS__RANKS_MAX_STEPS */
	size_t n_cols;
	unsigned stands; /* after finish: bits 1u << MS__FIG_PEAK ... MS__FIG_EXIT_LEAK */
};

/* A leak site: one report group of memscope-leaks (step or exit) by its key; ids of r->st. */
struct ms__ranks_site {
	unsigned kind; /* MEMSCOPE_LEAK_STEP or MEMSCOPE_LEAK_EXIT */
	uint16_t pool;
	uint32_t op, owner;	    /* string ids, 0: none */
	uint32_t stack_py, stack_c; /* stack ids, 0: none */
	uint32_t n_inputs;	    /* inputs with it */
	uint32_t last;		    /* the last input counted, + 1 */
	uint64_t n, bytes;	    /* findings and bytes over those inputs (saturating) */
};

/* One side's inputs and sites, and the comparison's side when ms__ranks_item made one. */
struct ms__ranks_part {
	struct ms__ranks_row *rows; /* by input index, n_rows = the highest + 1 */
	size_t n_rows, cap_rows;
	struct ms__ranks_site *sites;
	size_t n_sites, cap_sites;
	struct u64map site_at; /* its key's string id -> its index in sites */
	/* after finish: each figure's median over the inputs read (bit f of has_median) */
	int64_t median[MS__FIG_COUNT_];
	unsigned has_median;
	struct memscope_compare_side *cmp;
	const struct memscope_strtab *from; /* the table of the events fed to cmp */
	struct memscope_strtab *to;	    /* r->st */
	struct u64map ids;		    /* their string ids -> those of r->st */
};

struct ms__ranks {
	struct memscope_strtab *st; /* the sites' and the comparison's strings */
	struct ms__ranks_part side[2];
	int finished;
	/* after finish: the run's sites of two inputs or more, most inputs then bytes first */
	size_t *common;
	size_t n_common;
	/* after finish, with both sides' cmp: the comparison (NULL: none, cmp_why says why) */
	struct memscope_compare_summary *sum;
	char cmp_why[512];
};

/* JSON: s as a string, or null for NULL; v, or null when !has (inline: both files write them,
 * and neither uses the other's). */
static inline void ms__ranks_put_str(FILE *out, const char *s)
{
	if (s)
		ms__json_cstr(out, s);
	else
		fputs("null", out);
}

static inline void ms__ranks_put_i64(FILE *out, int has, int64_t v)
{
	if (has)
		fprintf(out, "%" PRId64, v);
	else
		fputs("null", out);
}

/* ms__ranks_finish's part in report_baseline.c: the comparison. 0 or MEMSCOPE_E_NOMEM. */
int ms__baseline_finish(struct ms__ranks *r);

#endif
