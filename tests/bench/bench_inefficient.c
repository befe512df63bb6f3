/* Benchmark of memscope-inefficient: generates training-loop dumps with ACCESS rows and prints the
 * time and peak RSS of the inefficient-memory analysis on them, through the library and through
 * the tool. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "memscope/memscope.h"

/* options, with every default next to its flag */
struct bench_opts {
	uint64_t rows;	    /* -n: data rows of the small dump (300000) */
	unsigned scale;	    /* -x: the big dump has this many times the rows (4) */
	unsigned repeat;    /* -r: runs per measurement (3) */
	uint64_t seed;	    /* -S: PRNG seed (1) */
	const char *dir;    /* -d: directory of the dumps (/tmp) */
	const char *tool;   /* -t: memscope-inefficient binary to time as well (NULL: none) */
	int keep;	    /* -k: keep the dumps (0: removed at the end) */
	unsigned stack_pct; /* -s: percent of PTA MALLOC rows with call stacks (8) */
};

static uint64_t rng = BENCH_SEED;

static uint64_t next_rand(void)
{
	return bench_rand(&rng);
}

static uint64_t rand_below(uint64_t n)
{
	return n ? next_rand() % n : 0;
}

/* true with a chance of per_mille in 1000 */
static int chance(unsigned per_mille)
{
	return rand_below(1000) < per_mille;
}

/* ------------------------------------------------------------------------------------------ */
/*
 * The generator: one process of a PyTorch training loop on device 0, as bench_leaks.c's, with the
 * ACCESS rows of --events=...,access. Each aten op reads its input (the latest activation,
 * sometimes an older one) and a weight, and WRITEs the blocks it makes; the optimizer reads and
 * writes its state and writes a weight. Expert weights are read only in the steps they are routed
 * to (1 in 8), activations saved for backward are read again at the mirror op, and a few buffers
 * are kept across steps: the three findings all occur.
 */

#define PID 3290097u
#define TID_MAIN 3290097u
#define TID_BWD 3291992u
#define N_SLOTS 65536			  /* blocks alive at once, at most */
#define N_BUCKETS 16384			  /* ops ahead a free can be scheduled, at most */
#define OPS_PER_STEP 700		  /* about 5500 rows */
#define FWD_END (OPS_PER_STEP * 45 / 100) /* forward ops, then backward ones */
#define BWD_END (OPS_PER_STEP * 90 / 100) /* then optimizer ones */
#define N_STACKS 48			  /* distinct call stacks */
#define N_WEIGHTS 300			  /* model weights, alive until the end */
#define N_EXPERTS 30			  /* weights [0, N_EXPERTS) are experts */
#define N_DENSE (N_WEIGHTS - N_EXPERTS)	  /* the others, each with an optimizer state */
#define N_RECENT 8			  /* activations an op may take as input */
#define OP_COPY 21			  /* copy_: writes the weights at load time */
#define OP_OPTIM 22			  /* the optimizer's ops start here (5 of them) */
#define NONE UINT32_MAX
#define DUE_END UINT64_MAX /* alive until the end: freed by the shadow free */
#define MIB (1024ull * 1024)

/* one ACCESS row, kept until its block's rows are written */
struct acc {
	uint64_t id, ts;
	uint32_t next; /* next access of the block, or of the free list */
	uint16_t op;
	uint8_t write, bwd;
};

struct block {
	uint64_t alloc_id, addr, size;
	uint64_t id, ts, used, total; /* of its MALLOC event */
	uint64_t due;		      /* op it is freed at, or DUE_END */
	uint32_t next;		      /* next slot of its bucket, or of the free list */
	uint32_t acc_head, acc_tail;  /* its accesses, in time order */
	uint32_t tid;
	int stack; /* index into the stacks, -1: none */
	uint8_t hal, live;
};

/* rows written, by kind */
struct counts {
	uint64_t rows, ops, kernels, mstx, system;
	uint64_t mallocs, frees, shadow; /* PTA; shadow frees are among the frees */
	uint64_t hal;			 /* HAL MALLOC and FREE rows */
	uint64_t reads, writes;		 /* ACCESS rows */
};

struct gen {
	FILE *f;
	struct block *b;
	uint32_t *bucket; /* blocks due at op o are in bucket[o % N_BUCKETS] */
	uint32_t free_slot;
	uint32_t *hal; /* live HAL segments, newest last */
	size_t n_hal;
	struct acc *acc;
	uint32_t n_acc, cap_acc, free_acc;
	int oom;
	char *py[N_STACKS], *c[N_STACKS];
	uint64_t id, ts, alloc_seq, op, n_optim;
	uint64_t used, reserved; /* PTA pool: allocated and reserved bytes */
	uint64_t hal_seq;
	uint32_t weight[N_WEIGHTS], state[N_DENSE]; /* slots; a state is made at its first update */
	uint32_t recent[N_RECENT];		    /* latest activations, a ring */
	uint64_t recent_aid[N_RECENT];		    /* their allocation ids */
	unsigned n_recent;
	uint8_t routed[N_EXPERTS]; /* experts used in this step */
	struct counts k;
	const struct bench_opts *o;
};

static const char *const op_names[] = {
	"torch._ops.aten.addmm.default",
	"torch._ops.aten.mm.default",
	"torch._ops.aten.add.Tensor",
	"torch._ops.aten.mul.Tensor",
	"torch._ops.aten.relu.default",
	"torch._ops.aten.gelu.default",
	"torch._ops.aten.native_layer_norm.default",
	"torch._ops.aten.native_layer_norm_backward.default",
	"torch._ops.aten._softmax.default",
	"torch._ops.aten._softmax_backward_data.default",
	"torch._ops.aten.view.default",
	"torch._ops.aten.t.default",
	"torch._ops.aten.transpose.int",
	"torch._ops.aten.bmm.default",
	"torch._ops.aten.embedding.default",
	"torch._ops.aten.embedding_dense_backward.default",
	"torch._ops.aten.mse_loss.default",
	"torch._ops.aten.mse_loss_backward.default",
	"torch._ops.aten.sum.dim_IntList",
	"torch._ops.aten.ones_like.default",
	"torch._ops.aten.clone.default",
	"torch._ops.aten.copy_.default",
	"torch._ops.aten._foreach_add_.List",
	"torch._ops.aten._foreach_mul_.Scalar",
	"torch._ops.aten.addcmul_.default",
	"torch._ops.aten.sqrt.default",
	"torch._ops.aten.div.Tensor",
	"torch._ops.aten.zero_.default",
};

#define N_OPS (sizeof(op_names) / sizeof(op_names[0]))

static const char *const dtypes[] = { "torch.float32", "torch.float16", "torch.bfloat16",
	"torch.int64" };

/* Python and C call stacks of about 350 and 450 bytes, innermost frame first. */
static int make_stacks(struct gen *g)
{
	static const char *const funcs[] = { "forward", "_call_impl", "train_step", "backward",
		"step", "linear", "attention", "mlp" };
	static const char *const syms[] = { "_ZN6c10_npu20NPUCachingAllocator6mallocEm",
		"_ZN2at6native9empty_npuEN3c108ArrayRefIlEE",
		"_ZN5torch8autograd6Engine17evaluate_functionE" };
	int i, k;

	for (i = 0; i < N_STACKS; i++) {
		char py[1024], c[1024];
		size_t pn = 0, cn = 0;
		int depth = 4 + (int)rand_below(3);

		for (k = 0; k < depth; k++) {
			pn += (size_t)snprintf(py + pn, sizeof(py) - pn, "%s%s(%u): %s",
				k ? "\n" : "",
				k == depth - 1
					? "/home/user/train.py"
					: "/usr/lib/python3.9/site-packages/torch/nn/modules/"
					  "module.py",
				(unsigned)(20 + rand_below(1500)),
				funcs[rand_below(sizeof(funcs) / sizeof(funcs[0]))]);
			cn += (size_t)snprintf(c + cn, sizeof(c) - cn,
				"%s/usr/local/Ascend/lib64/libtorch_npu.so(%s+0x%x) [0x7f3a%08x]",
				k ? "\n" : "", syms[rand_below(sizeof(syms) / sizeof(syms[0]))],
				(unsigned)rand_below(0x400), (unsigned)rand_below(0xffffffffu));
		}
		if (!(g->py[i] = strdup(py)) || !(g->c[i] = strdup(c)))
			return -1;
	}
	return 0;
}

/* The next event: IDs and timestamps grow together, as the reference numbers events. */
static void tick(struct gen *g, uint64_t max_ns)
{
	g->id++;
	g->ts += 100 + rand_below(max_ns);
}

static void row_op(struct gen *g, const char *type, unsigned op, uint32_t tid)
{
	tick(g, 20000);
	fprintf(g->f, "%" PRIu64 ",OP_LAUNCH,%s,%s,%" PRIu64 ",%u,%u,0,N/A,,,\n", g->id, type,
		op_names[op], g->ts, PID, tid);
	g->k.ops++;
}

static void row_kernel(struct gen *g, unsigned op, uint32_t tid)
{
	tick(g, 2000);
	fprintf(g->f,
		"%" PRIu64 ",KERNEL_LAUNCH,KERNEL_LAUNCH,%sKernel_%u,%" PRIu64
		",%u,%u,0,N/A,\"{streamId:2,taskId:%" PRIu64 "}\",,\n",
		g->id, op_names[op] + 16, op, g->ts, PID, tid, g->id % 65536);
	g->k.kernels++;
}

static void row_mstx(struct gen *g, const char *type, const char *name)
{
	tick(g, 2000);
	fprintf(g->f, "%" PRIu64 ",MSTX,%s,%s,%" PRIu64 ",%u,%u,0,N/A,,,\n", g->id, type, name,
		g->ts, PID, TID_MAIN);
	g->k.mstx++;
}

static void row_system(struct gen *g, const char *type)
{
	tick(g, 2000);
	fprintf(g->f, "%" PRIu64 ",SYSTEM,%s,N/A,%" PRIu64 ",%u,%u,N/A,N/A,,,\n", g->id, type,
		g->ts, PID, TID_MAIN);
	g->k.system++;
}

static uint32_t take_slot(struct gen *g)
{
	uint32_t s = g->free_slot;

	if (s != NONE)
		g->free_slot = g->b[s].next;
	return s;
}

/* Sizes of activations and temporaries: about log-uniform from 512 B to 16 MiB, 512-aligned. */
static uint64_t act_size(void)
{
	unsigned octave = (unsigned)rand_below(15);

	return ((512ull << octave) + rand_below(512ull << octave)) & ~511ull;
}

/* A fresh block in a free slot: its MALLOC is now. NONE when every slot is taken. */
static uint32_t new_block(struct gen *g, uint64_t size, uint32_t tid)
{
	uint32_t s = take_slot(g);
	struct block *b;

	if (s == NONE)
		return NONE;
	b = &g->b[s];
	memset(b, 0, sizeof(*b));
	b->alloc_id = ++g->alloc_seq;
	b->size = size;
	b->id = g->id;
	b->ts = g->ts;
	b->due = DUE_END;
	b->next = NONE;
	b->acc_head = b->acc_tail = NONE;
	b->tid = tid;
	b->stack = -1;
	b->live = 1;
	return s;
}

/* A HAL segment for the PTA pool, alive until an empty_cache or the end. */
static void hal_segment(struct gen *g, uint64_t need, uint32_t tid)
{
	uint64_t seg = need < 20 * MIB ? 20 * MIB : (need + 2 * MIB - 1) & ~(2 * MIB - 1);
	uint32_t s;

	tick(g, 5000);
	if ((s = new_block(g, seg, tid)) == NONE)
		return;
	g->b[s].addr = 0x120000000000ull + (g->hal_seq++ % 4096) * 0x40000000ull;
	g->b[s].hal = 1;
	g->hal[g->n_hal++] = s;
	g->reserved += seg;
}

/* The MALLOC row of a block, its ACCESS rows, then its FREE row (now, or the shadow free). */
static void write_block(struct gen *g, uint32_t s, int shadow)
{
	struct block *b = &g->b[s];
	uint32_t i, next;

	fprintf(g->f,
		"%" PRIu64 ",MALLOC,%s,N/A,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
		",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64,
		b->id, b->hal ? "HAL" : "PTA", b->ts, PID, b->tid, b->addr, b->alloc_id, b->addr,
		b->size);
	if (b->hal)
		fputs(",page_type:huge,alloc_type:alloc}\",,\n", g->f);
	else if (b->stack >= 0)
		fprintf(g->f, ",total:%" PRIu64 ",used:%" PRIu64 "}\",\"%s\",\"%s\"\n", b->total,
			b->used, g->py[b->stack], g->c[b->stack]);
	else
		fprintf(g->f, ",total:%" PRIu64 ",used:%" PRIu64 "}\",,\n", b->total, b->used);
	for (i = b->acc_head; i != NONE; i = next) {
		struct acc *a = &g->acc[i];

		fprintf(g->f,
			"%" PRIu64 ",ACCESS,%s,%s,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
			",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64
			",type:PTA,dtype:%s,shape:torch.Size([%" PRIu64 ", 256])}\",,\n",
			a->id, a->write ? "WRITE" : "READ", op_names[a->op], a->ts, PID,
			a->bwd ? TID_BWD : TID_MAIN, b->addr, b->alloc_id, b->addr, b->size,
			dtypes[b->alloc_id % 4], b->size / 1024 + 1);
		*(a->write ? &g->k.writes : &g->k.reads) += 1;
		next = a->next;
		a->next = g->free_acc;
		g->free_acc = i;
	}
	if (!shadow)
		tick(g, 3000);
	else
		g->id++;
	if (b->hal) {
		g->reserved -= b->size;
		fprintf(g->f,
			"%" PRIu64 ",FREE,HAL,N/A,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
			",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64
			"%s}\",,\n",
			g->id, g->ts, PID, b->tid, b->addr, b->alloc_id, b->addr, b->size,
			shadow ? ",shadow:true" : "");
		g->k.hal += 2;
	} else {
		g->used -= b->size;
		fprintf(g->f,
			"%" PRIu64 ",FREE,PTA,N/A,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
			",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64,
			g->id, g->ts, PID, b->tid, b->addr, b->alloc_id, b->addr, b->size);
		if (shadow) /* synthetic rows have no total and used (msmemscope.md §2.3) */
			fputs(",shadow:true}\",,\n", g->f);
		else
			fprintf(g->f, ",total:%" PRIu64 ",used:%" PRIu64 "}\",,\n", g->reserved,
				g->used);
		g->k.mallocs++;
		g->k.frees++;
		g->k.shadow += (uint64_t)shadow;
	}
	b->live = 0;
	b->next = g->free_slot;
	g->free_slot = s;
}

/* An ACCESS of block s by op, now. */
static void add_access(struct gen *g, uint32_t s, unsigned op, int write, uint32_t tid)
{
	struct block *b;
	uint32_t i = g->free_acc;

	if (s == NONE)
		return;
	b = &g->b[s];
	if (i != NONE) {
		g->free_acc = g->acc[i].next;
	} else {
		if (g->n_acc == g->cap_acc) {
			uint32_t cap = g->cap_acc ? g->cap_acc * 2 : 65536;
			struct acc *p = realloc(g->acc, cap * sizeof(*p));

			if (!p) {
				g->oom = 1;
				return;
			}
			g->acc = p;
			g->cap_acc = cap;
		}
		i = g->n_acc++;
	}
	tick(g, 1000);
	g->acc[i].id = g->id;
	g->acc[i].ts = g->ts;
	g->acc[i].next = NONE;
	g->acc[i].op = (uint16_t)op;
	g->acc[i].write = (uint8_t)write;
	g->acc[i].bwd = tid == TID_BWD;
	if (b->acc_head == NONE)
		b->acc_head = i;
	else
		g->acc[b->acc_tail].next = i;
	b->acc_tail = i;
}

/* A PTA block freed at op `due` (DUE_END: alive until the end). Its slot, or NONE. */
static uint32_t pta_malloc(struct gen *g, uint64_t size, uint64_t due, uint32_t tid)
{
	struct block *b;
	uint32_t s;

	if (g->used + size > g->reserved)
		hal_segment(g, g->used + size - g->reserved, tid);
	tick(g, 3000);
	if ((s = new_block(g, size, tid)) == NONE)
		return NONE;
	b = &g->b[s];
	g->used += size;
	b->addr = 0x12c000000000ull + (uint64_t)s * 0x1000000ull;
	b->used = g->used;
	b->total = g->reserved;
	b->due = due;
	b->stack = chance(g->o->stack_pct * 10) ? (int)rand_below(N_STACKS) : -1;
	if (due != DUE_END) {
		b->next = g->bucket[due % N_BUCKETS];
		g->bucket[due % N_BUCKETS] = s;
	}
	return s;
}

/* The back-th latest activation if still alive, else NONE. */
static uint32_t recent(const struct gen *g, unsigned back)
{
	unsigned i = (g->n_recent + 2 * N_RECENT - 1 - back) % N_RECENT;
	uint32_t s = g->recent[i];

	return s != NONE && g->b[s].live && g->b[s].alloc_id == g->recent_aid[i] ? s : NONE;
}

/* Free the blocks due at the current op, half of them read by it first. */
static void free_due(struct gen *g, unsigned op, uint32_t tid)
{
	uint32_t *link = &g->bucket[g->op % N_BUCKETS];

	while (*link != NONE) {
		uint32_t s = *link;
		struct block *b = &g->b[s];

		if (b->due != g->op) {
			link = &b->next;
			continue;
		}
		*link = b->next;
		if (chance(500))
			add_access(g, s, op, 0, tid);
		write_block(g, s, 0);
	}
}

/* An optimizer op: the next dense weight's state is read and written (made at its first update),
 * then the weight is written. */
static void optimizer(struct gen *g, unsigned op, uint32_t tid)
{
	unsigned i = (unsigned)(g->n_optim++ % N_DENSE);
	uint32_t w = g->weight[N_EXPERTS + i];

	if (w == NONE)
		return;
	if (g->state[i] == NONE) {
		g->state[i] = pta_malloc(g, g->b[w].size, DUE_END, tid);
		add_access(g, g->state[i], op, 1, tid);
	} else {
		add_access(g, g->state[i], op, 0, tid);
		add_access(g, g->state[i], op, 1, tid);
	}
	add_access(g, w, op, 1, tid);
}

/* When a block made by the op at in_step is freed. */
static uint64_t due_of(struct gen *g, unsigned in_step)
{
	uint64_t due, r = rand_below(1000);

	if (r < 30) /* kept across steps (gradient buckets, metrics): 1 to 6 steps */
		due = g->op + OPS_PER_STEP + rand_below(5 * OPS_PER_STEP);
	else if (r == 999 && chance(100)) /* a real leak: never freed */
		return DUE_END;
	else if (in_step < FWD_END && r < 450) /* saved for backward: freed at the mirror op */
		due = g->op + (BWD_END - 1 - 2 * in_step) + rand_below(4);
	else /* temporaries */
		due = g->op + 1 + rand_below(30);
	return due - g->op >= N_BUCKETS ? g->op + N_BUCKETS - 1 : due;
}

/* One aten op: START, maybe a kernel, its reads, the blocks it makes, the frees due now, END. */
static void one_op(struct gen *g, unsigned in_step)
{
	unsigned op = in_step < BWD_END ? (unsigned)((g->op * 5 + g->op / 13) % N_OPS)
					: OP_OPTIM + (unsigned)(g->op % 5);
	uint32_t tid = in_step >= FWD_END && in_step < BWD_END ? TID_BWD : TID_MAIN;
	unsigned n = (unsigned)rand_below(3);

	row_op(g, "ATEN_START", op, tid);
	if (chance(500))
		row_kernel(g, op, tid);
	if (in_step < BWD_END) {
		/* backward reads the weights of the mirror forward op */
		unsigned j = in_step < FWD_END ? in_step : BWD_END - 1 - in_step;

		if (chance(800))
			add_access(g, recent(g, 0), op, 0, tid);
		if (chance(300))
			add_access(
				g, recent(g, 1 + (unsigned)rand_below(N_RECENT - 1)), op, 0, tid);
		add_access(g, g->weight[N_EXPERTS + j % N_DENSE], op, 0, tid);
		if (j % 10 == 0 && j / 10 < N_EXPERTS && g->routed[j / 10])
			add_access(g, g->weight[j / 10], op, 0, tid);
	} else {
		optimizer(g, op, tid);
	}
	while (n--) {
		uint32_t s = pta_malloc(g, act_size(), due_of(g, in_step), tid);

		if (s == NONE)
			continue;
		if (chance(900))
			add_access(g, s, op, 1, tid);
		g->recent[g->n_recent % N_RECENT] = s;
		g->recent_aid[g->n_recent++ % N_RECENT] = g->b[s].alloc_id;
	}
	free_due(g, op, tid);
	row_op(g, "ATEN_END", op, tid);
	g->op++;
}

/* empty_cache: give back the newest HAL segments the pool does not need. */
static void trim_hal(struct gen *g)
{
	while (g->n_hal > 4) {
		uint32_t s = g->hal[g->n_hal - 1];

		if (g->reserved - g->b[s].size < g->used + 64 * MIB)
			break;
		g->n_hal--;
		write_block(g, s, 0);
	}
}

/*
 * A dump of at least `rows` data rows: model weights loaded before the first step, then steps of
 * OPS_PER_STEP aten ops in mstx "step start" ranges, then the blocks still alive with their shadow
 * frees. Fills *k; returns 0 or -1.
 */
static int gen(const char *path, uint64_t rows, const struct bench_opts *o, struct counts *k)
{
	struct gen g;
	uint64_t step = 0, i;
	char name[64];
	int rc = -1;

	memset(&g, 0, sizeof(g));
	rng = o->seed ? o->seed : BENCH_SEED;
	g.ts = 1764753083000000000ull;
	g.o = o;
	g.free_acc = NONE;
	g.f = fopen(path, "w");
	g.b = calloc(N_SLOTS, sizeof(*g.b));
	g.bucket = malloc(N_BUCKETS * sizeof(*g.bucket));
	g.hal = malloc(N_SLOTS * sizeof(*g.hal));
	if (!g.f || !g.b || !g.bucket || !g.hal || make_stacks(&g))
		goto out;
	for (i = 0; i < N_BUCKETS; i++)
		g.bucket[i] = NONE;
	for (i = 0; i < N_SLOTS; i++)
		g.b[i].next = i + 1 < N_SLOTS ? (uint32_t)i + 1 : NONE;
	for (i = 0; i < N_RECENT; i++)
		g.recent[i] = NONE;
	for (i = 0; i < N_DENSE; i++)
		g.state[i] = NONE;
	fputs("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
	      "Call Stack(Python),Call Stack(C)\n",
		g.f);
	row_system(&g, "START_TRACE");
	for (i = 0; i < N_WEIGHTS; i++) { /* each weight made, then written by a copy_ */
		g.weight[i] = pta_malloc(&g, (1 + rand_below(32)) * 512 * 1024, DUE_END, TID_MAIN);
		row_op(&g, "ATEN_START", OP_COPY, TID_MAIN);
		add_access(&g, g.weight[i], OP_COPY, 1, TID_MAIN);
		row_op(&g, "ATEN_END", OP_COPY, TID_MAIN);
	}
	while (g.id < rows && !g.oom) { /* every row so far has an ID, shadow frees aside */
		unsigned n;

		step++;
		for (n = 0; n < N_EXPERTS; n++)
			g.routed[n] = (uint8_t)chance(125);
		row_mstx(&g, "Range_start", "\"step start\"");
		for (n = 0; n < OPS_PER_STEP; n++)
			one_op(&g, n);
		snprintf(name, sizeof(name), "Range end from id %" PRIu64, step);
		row_mstx(&g, "Range_end", name);
		if (step % 20 == 0)
			trim_hal(&g);
	}
	row_system(&g, "STOP_TRACE");
	g.ts++;
	/* every block still alive, PTA then HAL, with the shadow free */
	for (i = 0; i < N_SLOTS; i++)
		if (g.b[i].live && !g.b[i].hal)
			write_block(&g, (uint32_t)i, 1);
	for (i = 0; i < g.n_hal; i++)
		write_block(&g, g.hal[i], 1);
	g.k.rows = g.k.ops + g.k.kernels + g.k.mstx + g.k.system + g.k.mallocs + g.k.frees +
		   g.k.hal + g.k.reads + g.k.writes;
	*k = g.k;
	rc = g.oom ? -1 : 0;
out:
	for (i = 0; i < N_STACKS; i++) {
		free(g.py[i]);
		free(g.c[i]);
	}
	free(g.b);
	free(g.bucket);
	free(g.hal);
	free(g.acc);
	if (g.f && fclose(g.f))
		rc = -1;
	return rc;
}

/*
 * gen in a child, so that the generator's memory (which glibc may keep after free) does not raise
 * the RSS of the measured children forked later. 0 or -1.
 */
static int gen_in_child(
	const char *path, uint64_t rows, const struct bench_opts *o, struct counts *k)
{
	int status = 0, fd[2], rc = 0;
	pid_t pid;

	if (pipe(fd))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		rc = gen(path, rows, o, k);
		_exit(!rc && write(fd[1], k, sizeof(*k)) == (ssize_t)sizeof(*k) ? 0 : 4);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], k, sizeof(*k)) != (ssize_t)sizeof(*k))
		rc = -1;
	close(fd[0]);
	if (pid > 0 && (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)))
		rc = -1;
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* measurements: each in a forked child; the parent times it and takes its peak RSS from wait4 */

enum mode {
	MODE_FLOOR,    /* a child that does nothing: the RSS every measurement starts from */
	MODE_READ,     /* read(2) of the file in 1 MiB chunks, like cat */
	MODE_PARSE,    /* memscope_source_read with a callback that only counts */
	MODE_LIB,      /* read + memscope_inefficient_feed, finish, write text to /dev/null */
	MODE_TOOL,     /* exec the tool: TOOL -q FILE >/dev/null */
	MODE_ANNOTATE, /* exec the tool: TOOL -q --annotate FILE.annotated.csv FILE >/dev/null */
	MODE_COUNT
};

static const char *const mode_names[] = { "floor", "read(2)", "parse", "ineff-lib", "ineff-tool",
	"tool+annot" };

/* what a child reports through its pipe */
struct result {
	uint64_t n_events, n_apis, n_accesses, n_untracked, n_alive_at_end;
	uint64_t n_blocks, n_type[3], rows_held;
	double t_read, t_finish, t_write; /* seconds inside the child */
};

static int count_event(void *ctx, const struct memscope_event *ev)
{
	(void)ev;
	++*(uint64_t *)ctx;
	return 0;
}

static int feed(void *ctx, const struct memscope_event *ev)
{
	return memscope_inefficient_feed(ctx, ev);
}

/* The library path of memscope-inefficient, as the tool wires it. 0 or a status. */
static int run_lib(const char *path, struct result *r)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_inefficient *a = st ? memscope_inefficient_new(NULL, st) : NULL;
	const char *const names[1] = { path };
	const struct memscope_inefficient_stats *s;
	struct memscope_source *src = NULL;
	struct memscope_error err;
	double t0 = bench_now_s(), t1, t2;
	FILE *out = fopen("/dev/null", "w");
	int rc = -1;

	memscope_error_clear(&err);
	if (!a || !out)
		goto out;
	if (memscope_source_open(&src, path, st, NULL, &err) ||
		memscope_source_read(src, feed, a, &err)) {
		fprintf(stderr, "bench_inefficient: %s:%" PRIu64 ": %s\n", path, err.line, err.msg);
		goto out;
	}
	r->n_events = memscope_source_stats(src)->n_events;
	memscope_source_close(src);
	src = NULL;
	t1 = bench_now_s();
	if (memscope_inefficient_finish(a))
		goto out;
	t2 = bench_now_s();
	if (memscope_inefficient_write(out, MEMSCOPE_INEFF_TEXT, a, st, names, 1, 0) || fflush(out))
		goto out;
	s = memscope_inefficient_stats(a);
	r->n_apis = s->n_apis[MEMSCOPE_INEFF_PTA] + s->n_apis[MEMSCOPE_INEFF_ATB];
	r->n_accesses = s->n_accesses;
	r->n_untracked = s->n_untracked;
	r->n_alive_at_end = s->n_alive_at_end;
	r->n_blocks = s->n_blocks;
	memcpy(r->n_type, s->n_type, sizeof(r->n_type));
	r->rows_held = s->rows_held;
	r->t_read = t1 - t0;
	r->t_finish = t2 - t1;
	r->t_write = bench_now_s() - t2;
	rc = 0;
out:
	if (out)
		fclose(out);
	memscope_source_close(src);
	memscope_inefficient_free(a);
	memscope_strtab_free(st);
	return rc;
}

static int run_parse(const char *path, struct result *r)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_error err;
	double t0 = bench_now_s();
	int rc = -1;

	if (st && !memscope_source_open(&src, path, st, NULL, &err) &&
		!memscope_source_read(src, count_event, &r->n_events, &err))
		rc = 0;
	r->t_read = bench_now_s() - t0;
	memscope_source_close(src);
	memscope_strtab_free(st);
	return rc;
}

static int run_read(const char *path, struct result *r)
{
	char *buf = malloc(1 << 20);
	int fd = open(path, O_RDONLY);
	double t0 = bench_now_s();
	ssize_t n = 0;

	while (buf && fd >= 0 && (n = read(fd, buf, 1 << 20)) > 0)
		r->n_events += (uint64_t)n;
	r->t_read = bench_now_s() - t0;
	free(buf);
	if (fd >= 0)
		close(fd);
	return !buf || fd < 0 || n < 0 ? -1 : 0;
}

/* The child: run one mode, send the result up the pipe, exit. */
static void child(enum mode m, const char *path, const char *tool, const char *ann, int fd)
{
	struct result r;
	int rc = 0, null_fd;

	memset(&r, 0, sizeof(r));
	switch (m) {
	case MODE_FLOOR:
	case MODE_COUNT:
		break;
	case MODE_READ:
		rc = run_read(path, &r);
		break;
	case MODE_PARSE:
		rc = run_parse(path, &r);
		break;
	case MODE_LIB:
		rc = run_lib(path, &r);
		break;
	case MODE_TOOL:
	case MODE_ANNOTATE:
		/* the report on stdout, sent to /dev/null: the same work as `-o /dev/null`, which
		 * the tool refuses ("exists") while /dev/null is not a device */
		close(fd);
		null_fd = open("/dev/null", O_WRONLY);
		if (null_fd < 0 || dup2(null_fd, STDOUT_FILENO) < 0)
			_exit(4);
		if (m == MODE_TOOL)
			execl(tool, tool, "-q", path, (char *)NULL);
		else
			execl(tool, tool, "-q", "--annotate", ann, path, (char *)NULL);
		_exit(4);
	}
	if (rc || write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(4);
	_exit(0);
}

/* best wall time and highest peak RSS of each mode on each dump */
struct best {
	double wall[MODE_COUNT];
	long rss[MODE_COUNT];
};

/*
 * Run one mode on path in a child. Prints wall time (fork to reap), rate and peak RSS, and keeps
 * the best in *bst; returns 0 or -1.
 */
static int measure(enum mode m, const char *label, const char *path, const char *tool,
	const char *ann, uint64_t rows, unsigned run, struct best *bst)
{
	struct result r;
	struct rusage ru;
	struct stat sb;
	double t0, wall, mb;
	int status = 0, fd[2];
	ssize_t got = 0;
	pid_t pid;

	memset(&r, 0, sizeof(r));
	if (ann)
		unlink(ann);
	if (pipe(fd))
		return -1;
	fflush(stdout);
	fflush(stderr);
	t0 = bench_now_s();
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		child(m, path, tool, ann, fd[1]);
	}
	close(fd[1]);
	if (pid > 0)
		got = read(fd[0], &r, sizeof(r));
	close(fd[0]);
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
		WEXITSTATUS(status) ||
		(m != MODE_TOOL && m != MODE_ANNOTATE && got != (ssize_t)sizeof(r))) {
		printf("%-6s %-10s run %u: failed (status %d)\n", label, mode_names[m], run,
			status);
		return -1;
	}
	wall = bench_now_s() - t0;
	if (bst && (!bst->wall[m] || wall < bst->wall[m]))
		bst->wall[m] = wall;
	if (bst && ru.ru_maxrss > bst->rss[m])
		bst->rss[m] = ru.ru_maxrss;
	if (m == MODE_FLOOR) {
		printf("%-6s %-10s peak RSS %.1f MiB\n", label, mode_names[m],
			(double)ru.ru_maxrss / 1024);
		return 0;
	}
	mb = stat(path, &sb) ? 0 : (double)sb.st_size / 1e6;
	printf("%-6s %-10s run %u: %8" PRIu64
	       " rows %6.1f MB %7.3f s %7.1f MB/s peak RSS %6.1f MiB",
		label, mode_names[m], run, rows, mb, wall, mb / wall, (double)ru.ru_maxrss / 1024);
	if (m == MODE_LIB)
		printf("  [read+feed %.3f, finish %.3f, write %.3f s; %" PRIu64 " events, %" PRIu64
		       " APIs, %" PRIu64 " ACCESS; flagged %" PRIu64 " blocks: early %" PRIu64
		       ", late %" PRIu64 ", idle %" PRIu64 "; %" PRIu64 " rows held; %" PRIu64
		       " untracked, %" PRIu64 " alive at end]",
			r.t_read, r.t_finish, r.t_write, r.n_events, r.n_apis, r.n_accesses,
			r.n_blocks, r.n_type[0], r.n_type[1], r.n_type[2], r.rows_held,
			r.n_untracked, r.n_alive_at_end);
	else if (m == MODE_PARSE)
		printf("  [%" PRIu64 " events]", r.n_events);
	else if (m == MODE_ANNOTATE && !stat(ann, &sb))
		printf("  [annotated copy %.1f MB]", (double)sb.st_size / 1e6);
	printf("\n");
	return 0;
}

/* "name 1.234 s (x1.5 parse), 12.3 MiB" for the summary */
static void print_vs_parse(const struct best *b, enum mode m)
{
	if (!b->wall[m])
		return;
	printf("  %-10s %7.3f s (x%5.2f parse) peak RSS %6.1f MiB (x%5.2f parse)\n", mode_names[m],
		b->wall[m], b->wall[MODE_PARSE] ? b->wall[m] / b->wall[MODE_PARSE] : 0,
		(double)b->rss[m] / 1024,
		b->rss[MODE_PARSE] ? (double)b->rss[m] / b->rss[MODE_PARSE] : 0);
}

static void usage(FILE *f)
{
	fputs("usage: bench_inefficient [-n ROWS] [-x SCALE] [-r N] [-S SEED] [-s PCT] [-d DIR]\n"
	      "                         [-t TOOL] [-k]\n"
	      "Generates a dump with ACCESS rows of ROWS rows (default 300000, about 45 MB) and\n"
	      "one SCALE times bigger (default 4) in DIR (default /tmp), then prints, N times\n"
	      "each (default 3), the time and peak RSS of read(2) alone, parsing alone, the\n"
	      "memscope-inefficient library path and, with -t, the memscope-inefficient binary\n"
	      "TOOL, without and with --annotate.\n"
	      "  -S SEED  PRNG seed (default 1)\n"
	      "  -s PCT   percent of PTA MALLOC rows with call stacks (default 8)\n"
	      "  -k       keep the dumps\n",
		f);
}

static int parse_u64_arg(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	*v = strtoull(s, &end, 10);
	return *end ? -1 : 0;
}

/* The dump's rows by kind. */
static void print_counts(const char *label, const struct counts *k)
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
	struct bench_opts o = { 300000, 4, 3, 1, "/tmp", NULL, 0, 8 };
	const char *labels[2] = { "small", "big" };
	char path[2][4096], ann[2][4200];
	struct counts k[2];
	struct best bst[2];
	struct stat dn;
	uint64_t v;
	unsigned i, run;
	int c, m;

	while ((c = getopt(argc, argv, "n:x:r:S:s:d:t:kh")) != -1) {
		switch (c) {
		case 'n':
		case 'x':
		case 'r':
		case 'S':
		case 's':
			if (parse_u64_arg(optarg, &v) || (c != 'S' && v == 0) ||
				(c != 'n' && c != 'S' && v > 1000)) {
				fprintf(stderr, "bench_inefficient: -%c: bad number '%s'\n", c,
					optarg);
				return 2;
			}
			if (c == 'n')
				o.rows = v;
			else if (c == 'x')
				o.scale = (unsigned)v;
			else if (c == 'r')
				o.repeat = (unsigned)v;
			else if (c == 'S')
				o.seed = v;
			else
				o.stack_pct = (unsigned)v > 100 ? 100 : (unsigned)v;
			break;
		case 'd':
			o.dir = optarg;
			break;
		case 't':
			o.tool = optarg;
			break;
		case 'k':
			o.keep = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	memset(bst, 0, sizeof(bst));
	if (stat("/dev/null", &dn) || !S_ISCHR(dn.st_mode))
		printf("warning: /dev/null is not a character device: the reports written there "
		       "cost real writes\n");
	for (i = 0; i < 2; i++) {
		struct stat sb;
		double t0 = bench_now_s();

		snprintf(path[i], sizeof(path[i]), "%s/bench_inefficient_%s.csv", o.dir, labels[i]);
		snprintf(ann[i], sizeof(ann[i]), "%s.annotated.csv", path[i]);
		if (gen_in_child(path[i], i ? o.rows * o.scale : o.rows, &o, &k[i]) ||
			stat(path[i], &sb)) {
			perror("bench_inefficient: generating");
			return 4;
		}
		printf("generated %s: %" PRIu64 " rows, %.1f MB (%.0f bytes/row) in %.1f s\n",
			path[i], k[i].rows, (double)sb.st_size / 1e6,
			(double)sb.st_size / (double)k[i].rows, bench_now_s() - t0);
		print_counts(labels[i], &k[i]);
	}
	measure(MODE_FLOOR, "-", NULL, NULL, NULL, 0, 0, NULL);
	for (i = 0; i < 2; i++)
		for (m = MODE_READ; m < MODE_COUNT; m++)
			for (run = 1; run <= o.repeat && (m < MODE_TOOL || o.tool); run++)
				measure((enum mode)m, labels[i], path[i], o.tool,
					m == MODE_ANNOTATE ? ann[i] : NULL, k[i].rows, run,
					&bst[i]);
	for (i = 0; i < 2; i++) {
		printf("%s (%" PRIu64 " rows), best of %u vs parse only (%.3f s, %.1f MiB):\n",
			labels[i], k[i].rows, o.repeat, bst[i].wall[MODE_PARSE],
			(double)bst[i].rss[MODE_PARSE] / 1024);
		for (m = MODE_READ; m < MODE_COUNT; m++)
			if (m != MODE_PARSE)
				print_vs_parse(&bst[i], (enum mode)m);
	}
	if (bst[0].rss[MODE_LIB] && bst[1].rss[MODE_LIB])
		printf("ineff-lib peak RSS: small %.1f MiB, big %.1f MiB (x%.2f for x%.2f rows)\n",
			(double)bst[0].rss[MODE_LIB] / 1024, (double)bst[1].rss[MODE_LIB] / 1024,
			(double)bst[1].rss[MODE_LIB] / bst[0].rss[MODE_LIB],
			(double)k[1].rows / k[0].rows);
	if (bst[0].wall[MODE_TOOL])
		printf("goal (tool on the small dump: <= 0.3 s, <= 50 MB peak RSS): %.3f s, %.1f "
		       "MiB "
		       "-> %s\n",
			bst[0].wall[MODE_TOOL], (double)bst[0].rss[MODE_TOOL] / 1024,
			bst[0].wall[MODE_TOOL] <= 0.3 && bst[0].rss[MODE_TOOL] * 1024.0 <= 50e6
				? "met"
				: "NOT met");
	for (i = 0; i < 2; i++) {
		unlink(ann[i]);
		if (!o.keep)
			unlink(path[i]);
	}
	return 0;
}
