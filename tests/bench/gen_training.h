/* The training-loop dumps of bench_inefficient.c and bench_db.c: one process of a PyTorch training
 * loop with PTA MALLOC/FREE, ACCESS, op and mstx rows and some call stacks, written through
 * bench_dump.h. */
#ifndef MEMSCOPE_BENCH_GEN_TRAINING_H
#define MEMSCOPE_BENCH_GEN_TRAINING_H

#include <stdint.h>
#include <string.h>

#include "bench_dump.h"

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

static const char *const training_funcs[] = { "forward", "_call_impl", "train_step", "backward",
	"step", "linear", "attention", "mlp" };
static const char *const training_syms[] = { "_ZN6c10_npu20NPUCachingAllocator6mallocEm",
	"_ZN2at6native9empty_npuEN3c108ArrayRefIlEE",
	"_ZN5torch8autograd6Engine17evaluate_functionE" };
static const struct dump_frames training_frames = { training_funcs,
	sizeof(training_funcs) / sizeof(training_funcs[0]), training_syms,
	sizeof(training_syms) / sizeof(training_syms[0]) };

/* the generator's state: the dump, and the slots of the model's blocks */
struct training {
	struct dump d;
	uint64_t n_optim;
	uint32_t weight[N_WEIGHTS], state[N_DENSE]; /* slots; a state is made at its first update */
	uint32_t recent[N_RECENT];		    /* latest activations, a ring */
	uint64_t recent_aid[N_RECENT];		    /* their allocation ids */
	unsigned n_recent;
	uint8_t routed[N_EXPERTS]; /* experts used in this step */
};

/* A PTA block freed at op `due` (DUE_END: alive until the end). Its slot, or SLOT_NONE. */
static inline uint32_t training_malloc(
	struct training *g, uint64_t size, uint64_t due, uint32_t tid)
{
	uint32_t s;

	dump_reserve(&g->d, size, tid);
	dump_tick(&g->d, 3000);
	if ((s = dump_take_slot(&g->d)) != SLOT_NONE)
		dump_pta_block(&g->d, s, size, due, tid);
	return s;
}

/* The back-th latest activation if still alive, else SLOT_NONE. */
static inline uint32_t training_recent(const struct training *g, unsigned back)
{
	unsigned i = (g->n_recent + 2 * N_RECENT - 1 - back) % N_RECENT;
	uint32_t s = g->recent[i];

	return s != SLOT_NONE && g->d.b[s].live && g->d.b[s].alloc_id == g->recent_aid[i]
		       ? s
		       : SLOT_NONE;
}

/* An optimizer op: the next dense weight's state is read and written (made at its first update),
 * then the weight is written. */
static inline void training_optimizer(struct training *g, unsigned op, uint32_t tid)
{
	unsigned i = (unsigned)(g->n_optim++ % N_DENSE);
	uint32_t w = g->weight[N_EXPERTS + i];

	if (w == SLOT_NONE)
		return;
	if (g->state[i] == SLOT_NONE) {
		g->state[i] = training_malloc(g, g->d.b[w].size, DUE_END, tid);
		dump_add_access(&g->d, g->state[i], op, 1, tid);
	} else {
		dump_add_access(&g->d, g->state[i], op, 0, tid);
		dump_add_access(&g->d, g->state[i], op, 1, tid);
	}
	dump_add_access(&g->d, w, op, 1, tid);
}

/* When a block made by the op at in_step is freed. */
static inline uint64_t training_due(const struct dump *d, unsigned in_step)
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
static inline void training_op(struct training *g, unsigned in_step)
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
			dump_add_access(d, training_recent(g, 0), op, 0, tid);
		if (dump_chance(300))
			dump_add_access(d,
				training_recent(g, 1 + (unsigned)dump_rand_below(N_RECENT - 1)), op,
				0, tid);
		dump_add_access(d, g->weight[N_EXPERTS + j % N_DENSE], op, 0, tid);
		if (j % 10 == 0 && j / 10 < N_EXPERTS && g->routed[j / 10])
			dump_add_access(d, g->weight[j / 10], op, 0, tid);
	} else {
		training_optimizer(g, op, tid);
	}
	while (n--) {
		uint32_t s = training_malloc(g, dump_act_size(), training_due(d, in_step), tid);

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
static inline int gen_training(
	const char *path, uint64_t rows, const void *opts, struct dump_counts *k)
{
	const struct dump_opts *o = opts;
	struct training g;
	unsigned i;
	int rc;

	memset(&g, 0, sizeof(g));
	for (i = 0; i < N_RECENT; i++)
		g.recent[i] = SLOT_NONE;
	for (i = 0; i < N_DENSE; i++)
		g.state[i] = SLOT_NONE;
	rc = dump_open(&g.d, path, o->seed ? o->seed : BENCH_SEED, o->stack_pct, &training_frames);
	if (!rc) {
		for (i = 0; i < N_WEIGHTS; i++) { /* each weight made, then written by a copy_ */
			g.weight[i] = training_malloc(
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
				training_op(&g, i);
			dump_step_end(&g.d);
		}
	}
	return dump_end(&g.d, rc, k);
}

#endif
