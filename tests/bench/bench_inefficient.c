/* Benchmark of memscope-inefficient: generates training-loop dumps with ACCESS rows and prints the
 * time and peak RSS of the inefficient-memory analysis on them, through the library and through
 * the tool. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_dump.h"
#include "gen_training.h"
#include "memscope/memscope.h"

/* ------------------------------------------------------------------------------------------ */
/* measurements: the bench_kinds, then the tool with --annotate */

enum mode {
	MODE_ANNOTATE = BENCH_TOOL + 1, /* TOOL -q --annotate FILE.annotated.csv FILE >/dev/null */
	MODE_COUNT
};

static const char *const mode_names[] = { "floor", "read(2)", "parse", "ineff-lib", "ineff-tool",
	"tool+annot" };

/* what the child of BENCH_LIB reports through its pipe, after the events and times */
struct result {
	uint64_t n_apis, n_accesses, n_untracked, n_alive_at_end;
	uint64_t n_blocks, n_type[3], rows_held;
};

/* The end of the line of ineff-lib. */
static void print_lib(const void *res)
{
	const struct result *r = res;

	printf(", %" PRIu64 " APIs, %" PRIu64 " ACCESS; flagged %" PRIu64 " blocks: early %" PRIu64
	       ", late %" PRIu64 ", idle %" PRIu64 "; %" PRIu64 " rows held; %" PRIu64
	       " untracked, %" PRIu64 " alive at end",
		r->n_apis, r->n_accesses, r->n_blocks, r->n_type[0], r->n_type[1], r->n_type[2],
		r->rows_held, r->n_untracked, r->n_alive_at_end);
}

static int feed(void *ctx, const struct memscope_event *ev)
{
	return memscope_inefficient_feed(ctx, ev);
}

/* The library path of memscope-inefficient, as the tool wires it. 0 or a status. */
static int run_lib(const char *path, FILE *out, struct bench_msg *m, void *res)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_inefficient *a = st ? memscope_inefficient_new(NULL, st) : NULL;
	const char *const names[1] = { path };
	const struct memscope_inefficient_stats *s;
	struct memscope_source *src = NULL;
	struct memscope_error err;
	struct result *r = res;
	double t = bench_now_s();
	int rc = -1;

	memscope_error_clear(&err);
	if (!a)
		goto out;
	if (memscope_source_open(&src, path, st, NULL, &err) ||
		memscope_source_read(src, feed, a, &err)) {
		fprintf(stderr, "bench_inefficient: %s:%" PRIu64 ": %s\n", path, err.line, err.msg);
		goto out;
	}
	m->n = memscope_source_stats(src)->n_events;
	memscope_source_close(src);
	src = NULL;
	m->read = bench_lap(&t);
	if (memscope_inefficient_finish(a))
		goto out;
	m->finish = bench_lap(&t);
	if (memscope_inefficient_write(out, MEMSCOPE_INEFF_TEXT, a, st, names, 1, 0) || fflush(out))
		goto out;
	m->write = bench_lap(&t);
	s = memscope_inefficient_stats(a);
	r->n_apis = s->n_apis[MEMSCOPE_INEFF_PTA] + s->n_apis[MEMSCOPE_INEFF_ATB];
	r->n_accesses = s->n_accesses;
	r->n_untracked = s->n_untracked;
	r->n_alive_at_end = s->n_alive_at_end;
	r->n_blocks = s->n_blocks;
	memcpy(r->n_type, s->n_type, sizeof(r->n_type));
	r->rows_held = s->rows_held;
	rc = 0;
out:
	memscope_source_close(src);
	memscope_inefficient_free(a);
	memscope_strtab_free(st);
	return rc;
}

/* best wall time and highest peak RSS of each mode on each dump */
struct best {
	double wall[MODE_COUNT];
	long rss[MODE_COUNT];
};

/* "name 1.234 s (x1.5 parse), 12.3 MiB" for the summary */
static void print_vs_parse(const struct best *b, int m)
{
	if (!b->wall[m])
		return;
	printf("  %-10s %7.3f s (x%5.2f parse) peak RSS %6.1f MiB (x%5.2f parse)\n", mode_names[m],
		b->wall[m], b->wall[BENCH_PARSE] ? b->wall[m] / b->wall[BENCH_PARSE] : 0,
		(double)b->rss[m] / 1024,
		b->rss[BENCH_PARSE] ? (double)b->rss[m] / b->rss[BENCH_PARSE] : 0);
}

static void usage(FILE *f)
{
	fputs("usage: bench_inefficient " DUMP_OPTS_USAGE "\n"
	      "                         [-t TOOL] [-k]\n"
	      "Generates a dump with ACCESS rows of ROWS rows (default 300000, about 45 MB) and\n"
	      "one SCALE times bigger (default 4) in DIR (default /tmp), then prints, N times\n"
	      "each (default 3), the time and peak RSS of read(2) alone, parsing alone, the\n"
	      "memscope-inefficient library path and, with -t, the memscope-inefficient binary\n"
	      "TOOL, without and with --annotate.\n" DUMP_OPTS_HELP,
		f);
}

/* The dump's rows by kind. */
static void print_counts(const char *label, const struct dump_counts *k)
{
	uint64_t acc = k->reads + k->writes;

	printf("%-6s composition: %" PRIu64 " ATEN_START/END, %" PRIu64 " KERNEL_LAUNCH, %" PRIu64
	       " MSTX, %" PRIu64 " SYSTEM, %" PRIu64 " PTA MALLOC, %" PRIu64 " PTA FREE (%" PRIu64
	       " shadow), %" PRIu64 " HAL MALLOC+FREE, %" PRIu64 " ACCESS (%" PRIu64
	       " READ, %" PRIu64 " WRITE; %.1f%% of rows)\n",
		label, k->ops, k->kernels, k->mstx, k->system, k->mallocs, k->frees, k->shadow,
		k->hal, acc, k->reads, k->writes, k->rows ? 100.0 * (double)acc / k->rows : 0);
}

int main(int argc, char **argv)
{
	struct dump_opts o = dump_opts_default;
	struct dump_file df[2] = { { .label = "small" }, { .label = "big" } };
	char ann[2][4200];
	struct best bst[2];
	struct stat dn;
	unsigned i, run;
	int m;

	dump_getopt(argc, argv, "", &o, "bench_inefficient", usage);
	memset(bst, 0, sizeof(bst));
	if (stat("/dev/null", &dn) || !S_ISCHR(dn.st_mode))
		printf("warning: /dev/null is not a character device: the reports written there "
		       "cost real writes\n");
	for (i = 0; i < 2; i++) {
		if (dump_generate(&df[i], "bench_inefficient", o.dir, i ? o.rows * o.scale : o.rows,
			    gen_training, &o))
			return 4;
		snprintf(ann[i], sizeof(ann[i]), "%s.annotated.csv", df[i].path);
		print_counts(df[i].label, &df[i].k);
	}
	bench_floor();
	for (i = 0; i < 2; i++)
		for (m = BENCH_READ; m < MODE_COUNT; m++)
			for (run = 1; run <= o.repeat && (m < BENCH_TOOL || o.tool); run++) {
				enum bench_kind kind =
					m == MODE_ANNOTATE ? BENCH_TOOL : (enum bench_kind)m;
				struct result r;
				struct bench_job j = { .kind = kind,
					.df = &df[i],
					.name = mode_names[m],
					.run = run,
					.tool = o.tool,
					.ann = m == MODE_ANNOTATE ? ann[i] : NULL,
					.lib = run_lib,
					.print = print_lib,
					.res = &r,
					.size = sizeof(r) };

				if (bench_measure(&j))
					continue;
				if (!bst[i].wall[m] || j.wall < bst[i].wall[m])
					bst[i].wall[m] = j.wall;
				if (j.rss > bst[i].rss[m])
					bst[i].rss[m] = j.rss;
			}
	for (i = 0; i < 2; i++) {
		printf("%s (%" PRIu64 " rows), best of %u vs parse only (%.3f s, %.1f MiB):\n",
			df[i].label, df[i].k.rows, o.repeat, bst[i].wall[BENCH_PARSE],
			(double)bst[i].rss[BENCH_PARSE] / 1024);
		for (m = BENCH_READ; m < MODE_COUNT; m++)
			if (m != BENCH_PARSE)
				print_vs_parse(&bst[i], m);
	}
	bench_print_growth(mode_names[BENCH_LIB], bst[0].rss[BENCH_LIB], bst[1].rss[BENCH_LIB], df);
	if (bst[0].wall[BENCH_TOOL])
		printf("goal (tool on the small dump: <= 0.3 s, <= 50 MB peak RSS): %.3f s, %.1f "
		       "MiB "
		       "-> %s\n",
			bst[0].wall[BENCH_TOOL], (double)bst[0].rss[BENCH_TOOL] / 1024,
			bst[0].wall[BENCH_TOOL] <= 0.3 && bst[0].rss[BENCH_TOOL] * 1024.0 <= 50e6
				? "met"
				: "NOT met");
	for (i = 0; i < 2; i++) {
		unlink(ann[i]);
		if (!o.keep)
			unlink(df[i].path);
	}
	return 0;
}
