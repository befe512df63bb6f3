/* Benchmark of memscope-inefficient: generates training-loop dumps with ACCESS rows and prints the
 * time and peak RSS of the inefficient-memory analysis on them, through the library and through
 * the tool. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_dump.h"
#include "memscope/memscope.h"

/* ------------------------------------------------------------------------------------------ */
/*
 * The generator: one process of a PyTorch training loop on device 0, as bench_leaks.c's, with the
 * ACCESS rows of --events=...,access. Each aten op reads its input (the latest activation,
 * sometimes an older one) and a weight, and WRITEs the blocks it makes; the optimizer reads and
 * writes its state and writes a weight. Expert weights are read only in the steps they are routed
 * to (1 in 8), activations saved for backward are read again at the mirror op, and a few buffers
 * are kept across steps: the three findings all occur.
 */

#define OPS_PER_STEP 700		  /* about 5500 rows */
#define FWD_END (OPS_PER_STEP * 45 / 100) /* forward ops, then backward ones */
#define BWD_END (OPS_PER_STEP * 90 / 100) /* then optimizer ones */
#define N_WEIGHTS 300			  /* model weights, alive until the end */
#define N_EXPERTS 30			  /* weights [0, N_EXPERTS) are experts */
#define N_DENSE (N_WEIGHTS - N_EXPERTS)	  /* the others, each with an optimizer state */
#define N_RECENT 8			  /* activations an op may take as input */
#define OP_COPY 21			  /* copy_: writes the weights at load time */
#define OP_OPTIM 22			  /* the optimizer's ops start here (5 of them) */

static const char *const funcs[] = { "forward", "_call_impl", "train_step", "backward", "step",
	"linear", "attention", "mlp" };
static const char *const syms[] = { "_ZN6c10_npu20NPUCachingAllocator6mallocEm",
	"_ZN2at6native9empty_npuEN3c108ArrayRefIlEE",
	"_ZN5torch8autograd6Engine17evaluate_functionE" };
static const struct dump_frames frames = { funcs, sizeof(funcs) / sizeof(funcs[0]), syms,
	sizeof(syms) / sizeof(syms[0]) };

struct gen {
	struct dump d;
	uint64_t n_optim;
	uint32_t weight[N_WEIGHTS], state[N_DENSE]; /* slots; a state is made at its first update */
	uint32_t recent[N_RECENT];		    /* latest activations, a ring */
	uint64_t recent_aid[N_RECENT];		    /* their allocation ids */
	unsigned n_recent;
	uint8_t routed[N_EXPERTS]; /* experts used in this step */
};

/* A PTA block freed at op `due` (DUE_END: alive until the end). Its slot, or SLOT_NONE. */
static uint32_t pta_malloc(struct gen *g, uint64_t size, uint64_t due, uint32_t tid)
{
	uint32_t s;

	dump_reserve(&g->d, size, tid);
	dump_tick(&g->d, 3000);
	if ((s = dump_take_slot(&g->d)) != SLOT_NONE)
		dump_pta_block(&g->d, s, size, due, tid);
	return s;
}

/* The back-th latest activation if still alive, else SLOT_NONE. */
static uint32_t recent(const struct gen *g, unsigned back)
{
	unsigned i = (g->n_recent + 2 * N_RECENT - 1 - back) % N_RECENT;
	uint32_t s = g->recent[i];

	return s != SLOT_NONE && g->d.b[s].live && g->d.b[s].alloc_id == g->recent_aid[i]
		       ? s
		       : SLOT_NONE;
}

/* An optimizer op: the next dense weight's state is read and written (made at its first update),
 * then the weight is written. */
static void optimizer(struct gen *g, unsigned op, uint32_t tid)
{
	unsigned i = (unsigned)(g->n_optim++ % N_DENSE);
	uint32_t w = g->weight[N_EXPERTS + i];

	if (w == SLOT_NONE)
		return;
	if (g->state[i] == SLOT_NONE) {
		g->state[i] = pta_malloc(g, g->d.b[w].size, DUE_END, tid);
		dump_add_access(&g->d, g->state[i], op, 1, tid);
	} else {
		dump_add_access(&g->d, g->state[i], op, 0, tid);
		dump_add_access(&g->d, g->state[i], op, 1, tid);
	}
	dump_add_access(&g->d, w, op, 1, tid);
}

/* When a block made by the op at in_step is freed. */
static uint64_t due_of(const struct dump *d, unsigned in_step)
{
	uint64_t due, r = dump_rand_below(1000);

	if (r < 30) /* kept across steps (gradient buckets, metrics): 1 to 6 steps */
		due = d->op + OPS_PER_STEP + dump_rand_below(5 * OPS_PER_STEP);
	else if (r == 999 && dump_chance(100)) /* a real leak: never freed */
		return DUE_END;
	else if (in_step < FWD_END && r < 450) /* saved for backward: freed at the mirror op */
		due = d->op + (BWD_END - 1 - 2 * in_step) + dump_rand_below(4);
	else /* temporaries */
		due = d->op + 1 + dump_rand_below(30);
	return due - d->op >= N_BUCKETS ? d->op + N_BUCKETS - 1 : due;
}

/* One aten op: START, maybe a kernel, its reads, the blocks it makes, the frees due now, END. */
static void one_op(struct gen *g, unsigned in_step)
{
	struct dump *d = &g->d;
	unsigned op = in_step < BWD_END ? (unsigned)((d->op * 5 + d->op / 13) % N_OPS)
					: OP_OPTIM + (unsigned)(d->op % 5);
	uint32_t tid = in_step >= FWD_END && in_step < BWD_END ? TID_BWD : TID_MAIN;
	unsigned n = (unsigned)dump_rand_below(3);

	dump_row_op(d, "ATEN_START", op, tid);
	if (dump_chance(500))
		dump_row_kernel(d, op, tid);
	if (in_step < BWD_END) {
		/* backward reads the weights of the mirror forward op */
		unsigned j = in_step < FWD_END ? in_step : BWD_END - 1 - in_step;

		if (dump_chance(800))
			dump_add_access(d, recent(g, 0), op, 0, tid);
		if (dump_chance(300))
			dump_add_access(d, recent(g, 1 + (unsigned)dump_rand_below(N_RECENT - 1)),
				op, 0, tid);
		dump_add_access(d, g->weight[N_EXPERTS + j % N_DENSE], op, 0, tid);
		if (j % 10 == 0 && j / 10 < N_EXPERTS && g->routed[j / 10])
			dump_add_access(d, g->weight[j / 10], op, 0, tid);
	} else {
		optimizer(g, op, tid);
	}
	while (n--) {
		uint32_t s = pta_malloc(g, dump_act_size(), due_of(d, in_step), tid);

		if (s == SLOT_NONE)
			continue;
		if (dump_chance(900))
			dump_add_access(d, s, op, 1, tid);
		g->recent[g->n_recent % N_RECENT] = s;
		g->recent_aid[g->n_recent++ % N_RECENT] = d->b[s].alloc_id;
	}
	dump_free_due(d, op, tid);
	dump_row_op(d, "ATEN_END", op, tid);
	d->op++;
}

/*
 * A dump of at least `rows` data rows: model weights loaded before the first step, then steps of
 * OPS_PER_STEP aten ops in mstx "step start" ranges, then the blocks still alive with their shadow
 * frees. Fills *k; returns 0 or -1.
 */
static int gen(const char *path, uint64_t rows, const void *opts, struct dump_counts *k)
{
	const struct dump_opts *o = opts;
	struct gen g;
	unsigned i;
	int rc;

	memset(&g, 0, sizeof(g));
	for (i = 0; i < N_RECENT; i++)
		g.recent[i] = SLOT_NONE;
	for (i = 0; i < N_DENSE; i++)
		g.state[i] = SLOT_NONE;
	rc = dump_open(&g.d, path, o->seed ? o->seed : BENCH_SEED, o->stack_pct, &frames);
	if (!rc) {
		for (i = 0; i < N_WEIGHTS; i++) { /* each weight made, then written by a copy_ */
			g.weight[i] = pta_malloc(
				&g, (1 + dump_rand_below(32)) * 512 * 1024, DUE_END, TID_MAIN);
			dump_row_op(&g.d, "ATEN_START", OP_COPY, TID_MAIN);
			dump_add_access(&g.d, g.weight[i], OP_COPY, 1, TID_MAIN);
			dump_row_op(&g.d, "ATEN_END", OP_COPY, TID_MAIN);
		}
		/* every row so far has an ID, shadow frees aside */
		while (g.d.id < rows && !g.d.oom) {
			for (i = 0; i < N_EXPERTS; i++)
				g.routed[i] = (uint8_t)dump_chance(125);
			dump_step_start(&g.d);
			for (i = 0; i < OPS_PER_STEP; i++)
				one_op(&g, i);
			dump_step_end(&g.d);
		}
	}
	return dump_end(&g.d, rc, k);
}

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
			    gen, &o))
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
