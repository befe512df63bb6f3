/* Benchmark of memscope-leaks: generates training-loop dumps and prints the time and peak RSS of
 * the leak analysis on them, through the library and through the tool. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_dump.h"
#include "memscope/memscope.h"

/* options, with every default next to its flag */
struct bench_opts {
	struct dump_opts d; /* those of both benchmarks; -t: the memscope-leaks binary */
	int no_kernels;	    /* -K: no KERNEL_LAUNCH rows (0: one per other op) */
	int no_step_leaks;  /* -L: no blocks leaking across steps (0: 3% of the blocks) */
};

/* ------------------------------------------------------------------------------------------ */
/* the generator: one process of a PyTorch training loop on device 0 */

#define OPS_PER_STEP 700 /* about 2900 rows */

static const char *const funcs[] = { "forward", "_call_impl", "train_step", "backward", "step",
	"_conv_forward", "linear", "attention", "mlp", "__init__" };
static const char *const syms[] = { "_ZN6c10_npu20NPUCachingAllocator6mallocEm",
	"_ZN2at6native9empty_npuEN3c108ArrayRefIlEE", "_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_",
	"_ZN5torch8autograd6Engine17evaluate_functionE", "_ZN2at6native13npu_dropout_doE",
	"_ZN3c104impl18BoxedKernelWrapperE" };
static const struct dump_frames frames = { funcs, sizeof(funcs) / sizeof(funcs[0]), syms,
	sizeof(syms) / sizeof(syms[0]) };

struct gen {
	struct dump d;
	const struct bench_opts *o;
};

/* A PTA block made by op, freed at op `due` (DUE_END: alive until the end); 7 in 10 written by
 * op. */
static void pta_malloc(struct gen *g, uint64_t size, uint64_t due, unsigned op, uint32_t tid)
{
	uint32_t s = dump_take_slot(&g->d);

	if (s == SLOT_NONE)
		return;
	dump_reserve(&g->d, size, tid);
	dump_tick(&g->d, 3000);
	dump_pta_block(&g->d, s, size, due, tid);
	if (dump_chance(700))
		dump_add_access(&g->d, s, op, 1, tid);
}

/* One aten op: START, maybe a kernel, its allocations, the frees due now, END. */
static void one_op(struct gen *g, unsigned in_step)
{
	unsigned op = (unsigned)((g->d.op * 5 + g->d.op / 13) % N_OPS);
	uint32_t tid = in_step >= OPS_PER_STEP * 45 / 100 && in_step < OPS_PER_STEP * 9 / 10
			       ? TID_BWD
			       : TID_MAIN;
	unsigned n = (unsigned)dump_rand_below(3) == 0 ? 1 + (unsigned)dump_rand_below(2) : 0;

	dump_row_op(&g->d, "ATEN_START", op, tid);
	if (!g->o->no_kernels && dump_chance(500))
		dump_row_kernel(&g->d, op, tid);
	while (n--) {
		uint64_t due, r = dump_rand_below(1000);

		if (g->d.step <= 1 && r < 20) /* optimizer state: alive until the end */
			due = DUE_END;
		else if (r < 30 &&
			 !g->o->no_step_leaks) /* leaks across steps: freed 1 to 4 steps later */
			due = g->d.op + OPS_PER_STEP + dump_rand_below(3 * OPS_PER_STEP);
		else if (r == 999 && dump_chance(100)) /* a real leak: never freed */
			due = DUE_END;
		else /* activations and temporaries */
			due = g->d.op + 1 + dump_rand_below(in_step < OPS_PER_STEP / 2 ? 200 : 30);
		if (due != DUE_END && due - g->d.op >= N_BUCKETS)
			due = g->d.op + N_BUCKETS - 1;
		pta_malloc(g, dump_act_size(), due, op, tid);
	}
	dump_free_due(&g->d, op, TID_OWN);
	dump_row_op(&g->d, "ATEN_END", op, tid);
	g->d.op++;
}

/*
 * A dump of at least `rows` data rows: model weights before the first step, then steps of
 * OPS_PER_STEP aten ops in mstx "step start" ranges, then the blocks still alive with their shadow
 * frees. Fills *k; returns 0 or -1.
 */
static int gen(const char *path, uint64_t rows, const void *opts, struct dump_counts *k)
{
	struct gen g;
	unsigned i;
	int rc;

	g.o = opts;
	rc = dump_open(&g.d, path, g.o->d.seed, g.o->d.stack_pct, &frames);
	g.d.shadow_totals = 1;
	if (!rc) {
		for (i = 0; i < 300; i++) /* weights */
			pta_malloc(
				&g, (1 + dump_rand_below(32)) * 512 * 1024, DUE_END, 14, TID_MAIN);
		while (g.d.k.rows < rows && !g.d.oom) {
			dump_step_start(&g.d);
			for (i = 0; i < OPS_PER_STEP; i++)
				one_op(&g, i);
			dump_step_end(&g.d);
		}
	}
	return dump_end(&g.d, rc, k);
}

/* ------------------------------------------------------------------------------------------ */
/* measurements: the names of the bench_kinds, and the library path of memscope-leaks */

static const char *const mode_names[] = { "floor", "read(2)", "parse", "leaks-lib", "leaks-tool" };

/* what the child of BENCH_LIB reports through its pipe, after the events and times */
struct result {
	uint64_t n_step_leaks, n_exit_leaks, n_fluct;
	int rewound; /* a second pass was needed */
};

/* The end of the line of leaks-lib. */
static void print_leaks(const void *res)
{
	const struct result *r = res;

	printf(", %" PRIu64 " step leaks, %" PRIu64 " exit leaks, %zu fluct groups%s",
		r->n_step_leaks, r->n_exit_leaks, (size_t)r->n_fluct,
		r->rewound ? ", second pass" : "");
}

static int feed(void *ctx, const struct memscope_event *ev)
{
	return memscope_leaks_feed(ctx, ev);
}

/* One pass of the file into the analysis. 0 or a status. */
static int read_into(
	const char *path, struct memscope_strtab *st, struct memscope_leaks *l, uint64_t *n_events)
{
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int rc;

	memscope_error_clear(&err);
	rc = memscope_source_open(&src, path, st, NULL, &err);
	if (!rc)
		rc = memscope_source_read(src, feed, l, &err);
	if (!rc)
		*n_events = memscope_source_stats(src)->n_events;
	else
		fprintf(stderr, "bench_leaks: %s:%" PRIu64 ": %s\n", path, err.line, err.msg);
	memscope_source_close(src);
	return rc;
}

/* The library path of memscope-leaks, as the tool wires it. 0 or a status. */
static int run_leaks(const char *path, FILE *out, struct bench_msg *m, void *res)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_leaks *l = st ? memscope_leaks_new(NULL, st) : NULL;
	struct memscope_leaks_input in = { path, 0 };
	const struct memscope_leaks_stats *s;
	struct result *r = res;
	double t = bench_now_s();
	int rc = -1;

	if (!l || read_into(path, st, l, &m->n))
		goto out;
	m->read = bench_lap(&t);
	if (memscope_leaks_finish(l))
		goto out;
	if (memscope_leaks_needs_rewind(l, NULL, NULL)) {
		r->rewound = 1;
		if (memscope_leaks_rewind(l) || read_into(path, st, l, &m->n) ||
			memscope_leaks_finish(l))
			goto out;
	}
	m->finish = bench_lap(&t);
	if (memscope_leaks_write(out, MEMSCOPE_LEAKS_TEXT, l, st, &in, 1) || fflush(out))
		goto out;
	m->write = bench_lap(&t);
	s = memscope_leaks_stats(l);
	r->n_step_leaks = s->n_step_leaks;
	r->n_exit_leaks = s->n_exit_leaks;
	memscope_leaks_fluct(l, &r->n_fluct);
	rc = 0;
out:
	memscope_leaks_free(l);
	memscope_strtab_free(st);
	return rc;
}

static void usage(FILE *f)
{
	fputs("usage: bench_leaks " DUMP_OPTS_USAGE "\n"
	      "                   [-t TOOL] [-k] [-K] [-L]\n"
	      "Generates a dump of ROWS rows (default 300000, about 45 MB) and one SCALE times\n"
	      "bigger (default 4) in DIR (default /tmp), then prints, N times each (default 3),\n"
	      "the time and peak RSS of read(2) alone, parsing alone, the memscope-leaks library\n"
	      "path and, with -t, the memscope-leaks binary TOOL.\n" DUMP_OPTS_HELP
	      "  -K       no KERNEL_LAUNCH rows (default: one per other aten op)\n"
	      "  -L       no blocks leaking across steps (default: 3% of the blocks)\n",
		f);
}

int main(int argc, char **argv)
{
	struct bench_opts o = { dump_opts_default, 0, 0 };
	struct dump_file df[2] = { { .label = "small" }, { .label = "big" } };
	long rss[2] = { 0, 0 };
	unsigned i, run;
	int c, m;

	while ((c = dump_getopt(argc, argv, "KL", &o.d, "bench_leaks", usage)) != -1)
		if (c == 'K')
			o.no_kernels = 1;
		else
			o.no_step_leaks = 1;
	for (i = 0; i < 2; i++)
		if (dump_generate(&df[i], "bench_leaks", o.d.dir,
			    i ? o.d.rows * o.d.scale : o.d.rows, gen, &o))
			return 4;
	bench_floor();
	for (i = 0; i < 2; i++)
		for (m = BENCH_READ; m <= BENCH_TOOL; m++)
			for (run = 1; run <= o.d.repeat && (m != BENCH_TOOL || o.d.tool); run++) {
				struct result r;
				struct bench_job j = { .kind = (enum bench_kind)m,
					.df = &df[i],
					.name = mode_names[m],
					.run = run,
					.tool = o.d.tool,
					.lib = run_leaks,
					.print = print_leaks,
					.res = &r,
					.size = sizeof(r) };

				if (!bench_measure(&j) && m == BENCH_LIB && j.rss > rss[i])
					rss[i] = j.rss;
			}
	bench_print_growth(mode_names[BENCH_LIB], rss[0], rss[1], df);
	if (!o.d.keep) {
		unlink(df[0].path);
		unlink(df[1].path);
	}
	return 0;
}
