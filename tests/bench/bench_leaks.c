/* Benchmark of memscope-leaks: generates training-loop dumps and prints the time and peak RSS of
 * the leak analysis on them, through the library and through the tool. */
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
	const char *tool;   /* -t: memscope-leaks binary to time as well (NULL: none) */
	int keep;	    /* -k: keep the dumps (0: removed at the end) */
	unsigned stack_pct; /* -s: percent of PTA MALLOC rows with call stacks (8) */
	int no_kernels;	    /* -K: no KERNEL_LAUNCH rows (0: one per other op) */
	int no_step_leaks;  /* -L: no blocks leaking across steps (0: 3% of the blocks) */
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
/* the generator: one process of a PyTorch training loop on device 0 */

#define PID 3290097u
#define TID_MAIN 3290097u
#define TID_BWD 3291992u
#define MAX_ACC 2	 /* ACCESS rows kept per block: a WRITE when made, a READ when freed */
#define N_SLOTS 65536	 /* blocks alive at once, at most */
#define N_BUCKETS 16384	 /* ops ahead a free can be scheduled, at most */
#define OPS_PER_STEP 700 /* about 2900 rows */
#define N_STACKS 48	 /* distinct call stacks */
#define SLOT_NONE UINT32_MAX
#define DUE_END UINT64_MAX /* alive until the end: freed by the shadow free */
#define MIB (1024ull * 1024)

struct block {
	uint64_t alloc_id, addr, size;
	uint64_t id, ts, used, total; /* of its MALLOC event */
	uint64_t due;		      /* op it is freed at, or DUE_END */
	uint64_t acc_id[MAX_ACC], acc_ts[MAX_ACC];
	uint32_t next; /* next slot of its bucket, or of the free list */
	uint16_t acc_op[MAX_ACC];
	uint8_t acc_write[MAX_ACC];
	uint8_t n_acc;
	uint8_t hal;
	uint32_t tid;
	int stack; /* index into the stacks, -1: none */
};

struct gen {
	FILE *f;
	struct block *b;
	uint32_t *bucket; /* blocks due at op o are in bucket[o % N_BUCKETS] */
	uint32_t free_slot;
	uint32_t *hal; /* live HAL segments, newest last */
	size_t n_hal;
	char *py[N_STACKS], *c[N_STACKS];
	uint64_t id, ts, alloc_seq, op, rows;
	uint64_t used, reserved; /* PTA pool: allocated and reserved bytes */
	uint64_t hal_seq;
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
		"step", "_conv_forward", "linear", "attention", "mlp", "__init__" };
	static const char *const syms[] = { "_ZN6c10_npu20NPUCachingAllocator6mallocEm",
		"_ZN2at6native9empty_npuEN3c108ArrayRefIlEE",
		"_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_",
		"_ZN5torch8autograd6Engine17evaluate_functionE", "_ZN2at6native13npu_dropout_doE",
		"_ZN3c104impl18BoxedKernelWrapperE" };
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
	g->rows++;
}

static void row_kernel(struct gen *g, unsigned op, uint32_t tid)
{
	tick(g, 2000);
	fprintf(g->f,
		"%" PRIu64 ",KERNEL_LAUNCH,KERNEL_LAUNCH,%sKernel_%u,%" PRIu64
		",%u,%u,0,N/A,\"{streamId:2,taskId:%" PRIu64 "}\",,\n",
		g->id, op_names[op] + 16, op, g->ts, PID, tid, g->id % 65536);
	g->rows++;
}

static void row_mstx(struct gen *g, const char *type, const char *name)
{
	tick(g, 2000);
	fprintf(g->f, "%" PRIu64 ",MSTX,%s,%s,%" PRIu64 ",%u,%u,0,N/A,,,\n", g->id, type, name,
		g->ts, PID, TID_MAIN);
	g->rows++;
}

static void row_system(struct gen *g, const char *type)
{
	tick(g, 2000);
	fprintf(g->f, "%" PRIu64 ",SYSTEM,%s,N/A,%" PRIu64 ",%u,%u,N/A,N/A,,,\n", g->id, type,
		g->ts, PID, TID_MAIN);
	g->rows++;
}

static uint32_t take_slot(struct gen *g)
{
	uint32_t s = g->free_slot;

	if (s != SLOT_NONE)
		g->free_slot = g->b[s].next;
	return s;
}

/* Sizes of activations and temporaries: about log-uniform from 512 B to 16 MiB, 512-aligned. */
static uint64_t act_size(void)
{
	unsigned octave = (unsigned)rand_below(15);

	return ((512ull << octave) + rand_below(512ull << octave)) & ~511ull;
}

/* A HAL segment for the PTA pool, alive until an empty_cache or the end. */
static void hal_segment(struct gen *g, uint64_t need, uint32_t tid)
{
	uint64_t seg = need < 20 * MIB ? 20 * MIB : (need + 2 * MIB - 1) & ~(2 * MIB - 1);
	uint32_t s = take_slot(g);
	struct block *b;

	if (s == SLOT_NONE)
		return;
	b = &g->b[s];
	memset(b, 0, sizeof(*b));
	tick(g, 5000);
	b->alloc_id = ++g->alloc_seq;
	b->addr = 0x120000000000ull + (g->hal_seq++ % 4096) * 0x40000000ull;
	b->size = seg;
	b->id = g->id;
	b->ts = g->ts;
	b->due = DUE_END;
	b->hal = 1;
	b->tid = tid;
	b->stack = -1;
	g->hal[g->n_hal++] = s;
	g->reserved += seg;
}

/* The MALLOC row of a block, its ACCESS rows, then its FREE row (now, or the shadow free). */
static void write_block(struct gen *g, uint32_t s, int shadow)
{
	struct block *b = &g->b[s];
	unsigned i;

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
	for (i = 0; i < b->n_acc; i++)
		fprintf(g->f,
			"%" PRIu64 ",ACCESS,%s,%s,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
			",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64
			",type:PTA,dtype:%s,shape:torch.Size([%" PRIu64 ", 256])}\",,\n",
			b->acc_id[i], b->acc_write[i] ? "WRITE" : "READ", op_names[b->acc_op[i]],
			b->acc_ts[i], PID, b->tid, b->addr, b->alloc_id, b->addr, b->size,
			dtypes[b->alloc_id % 4], b->size / 1024 + 1);
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
	} else {
		g->used -= b->size;
		fprintf(g->f,
			"%" PRIu64 ",FREE,PTA,N/A,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
			",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64
			",total:%" PRIu64 ",used:%" PRIu64 "%s}\",,\n",
			g->id, g->ts, PID, b->tid, b->addr, b->alloc_id, b->addr, b->size,
			g->reserved, g->used, shadow ? ",shadow:true" : "");
	}
	g->rows += 2 + b->n_acc;
	b->next = g->free_slot;
	g->free_slot = s;
}

static void add_access(struct gen *g, struct block *b, unsigned op, int write)
{
	if (b->n_acc == MAX_ACC)
		return;
	tick(g, 1000);
	b->acc_id[b->n_acc] = g->id;
	b->acc_ts[b->n_acc] = g->ts;
	b->acc_op[b->n_acc] = (uint16_t)op;
	b->acc_write[b->n_acc] = (uint8_t)write;
	b->n_acc++;
}

/* A PTA block made by op, freed at op `due` (DUE_END: alive until the end). */
static void pta_malloc(struct gen *g, uint64_t size, uint64_t due, unsigned op, uint32_t tid)
{
	uint32_t s = take_slot(g);
	struct block *b;

	if (s == SLOT_NONE)
		return;
	if (g->used + size > g->reserved)
		hal_segment(g, g->used + size - g->reserved, tid);
	b = &g->b[s];
	memset(b, 0, sizeof(*b));
	tick(g, 3000);
	g->used += size;
	b->alloc_id = ++g->alloc_seq;
	b->addr = 0x12c000000000ull + (uint64_t)s * 0x1000000ull;
	b->size = size;
	b->id = g->id;
	b->ts = g->ts;
	b->used = g->used;
	b->total = g->reserved;
	b->due = due;
	b->tid = tid;
	b->stack = chance(g->o->stack_pct * 10) ? (int)rand_below(N_STACKS) : -1;
	if (chance(700))
		add_access(g, b, op, 1);
	if (due != DUE_END) {
		b->next = g->bucket[due % N_BUCKETS];
		g->bucket[due % N_BUCKETS] = s;
	} else {
		b->next = SLOT_NONE;
	}
}

/* Free the blocks due at the current op. */
static void free_due(struct gen *g, unsigned op)
{
	uint32_t *link = &g->bucket[g->op % N_BUCKETS];

	while (*link != SLOT_NONE) {
		uint32_t s = *link;
		struct block *b = &g->b[s];

		if (b->due != g->op) {
			link = &b->next;
			continue;
		}
		*link = b->next;
		if (chance(500))
			add_access(g, b, op, 0);
		write_block(g, s, 0);
	}
}

/* One aten op: START, maybe a kernel, its allocations, the frees due now, END. */
static void one_op(struct gen *g, uint64_t step, unsigned in_step)
{
	unsigned op = (unsigned)((g->op * 5 + g->op / 13) % N_OPS);
	uint32_t tid = in_step >= OPS_PER_STEP * 45 / 100 && in_step < OPS_PER_STEP * 9 / 10
			       ? TID_BWD
			       : TID_MAIN;
	unsigned n = (unsigned)rand_below(3) == 0 ? 1 + (unsigned)rand_below(2) : 0;

	row_op(g, "ATEN_START", op, tid);
	if (!g->o->no_kernels && chance(500))
		row_kernel(g, op, tid);
	while (n--) {
		uint64_t due, r = rand_below(1000);

		if (step <= 1 && r < 20) /* optimizer state: alive until the end */
			due = DUE_END;
		else if (r < 30 &&
			 !g->o->no_step_leaks) /* leaks across steps: freed 1 to 4 steps later */
			due = g->op + OPS_PER_STEP + rand_below(3 * OPS_PER_STEP);
		else if (r == 999 && chance(100)) /* a real leak: never freed */
			due = DUE_END;
		else /* activations and temporaries */
			due = g->op + 1 + rand_below(in_step < OPS_PER_STEP / 2 ? 200 : 30);
		if (due != DUE_END && due - g->op >= N_BUCKETS)
			due = g->op + N_BUCKETS - 1;
		pta_malloc(g, act_size(), due, op, tid);
	}
	free_due(g, op);
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
 * A dump of at least `rows` data rows: model weights before the first step, then steps of
 * OPS_PER_STEP aten ops in mstx "step start" ranges, then the blocks still alive with their shadow
 * frees. Returns the data rows written, 0 on failure.
 */
static uint64_t gen(const char *path, uint64_t rows, const struct bench_opts *o)
{
	struct gen g;
	uint64_t step = 0, i, ok;
	unsigned char *is_free = NULL;
	char name[64];
	uint32_t s;

	memset(&g, 0, sizeof(g));
	rng = o->seed;
	g.id = 0;
	g.ts = 1764753083000000000ull;
	g.o = o;
	g.f = fopen(path, "w");
	g.b = calloc(N_SLOTS, sizeof(*g.b));
	g.bucket = malloc(N_BUCKETS * sizeof(*g.bucket));
	g.hal = malloc(N_SLOTS * sizeof(*g.hal));
	if (!g.f || !g.b || !g.bucket || !g.hal || make_stacks(&g))
		goto fail;
	for (i = 0; i < N_BUCKETS; i++)
		g.bucket[i] = SLOT_NONE;
	for (i = 0; i < N_SLOTS; i++)
		g.b[i].next = i + 1 < N_SLOTS ? (uint32_t)i + 1 : SLOT_NONE;
	fputs("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
	      "Call Stack(Python),Call Stack(C)\n",
		g.f);
	row_system(&g, "START_TRACE");
	for (i = 0; i < 300; i++) /* weights */
		pta_malloc(&g, (1 + rand_below(32)) * 512 * 1024, DUE_END, 14, TID_MAIN);
	while (g.rows < rows) {
		unsigned k;

		step++;
		row_mstx(&g, "Range_start", "\"step start\"");
		for (k = 0; k < OPS_PER_STEP; k++)
			one_op(&g, step, k);
		snprintf(name, sizeof(name), "Range end from id %" PRIu64, step);
		row_mstx(&g, "Range_end", name);
		if (step % 20 == 0)
			trim_hal(&g);
	}
	row_system(&g, "STOP_TRACE");
	g.ts++;
	/* every block still alive, PTA then HAL, with the shadow free */
	if (!(is_free = calloc(N_SLOTS, 1)))
		goto fail;
	for (s = g.free_slot; s != SLOT_NONE; s = g.b[s].next)
		is_free[s] = 1;
	for (i = 0; i < N_SLOTS; i++)
		if (!is_free[i] && !g.b[i].hal)
			write_block(&g, (uint32_t)i, 1);
	for (i = 0; i < g.n_hal; i++)
		write_block(&g, g.hal[i], 1);
	ok = g.rows;
	goto out;
fail:
	ok = 0;
out:
	for (i = 0; i < N_STACKS; i++) {
		free(g.py[i]);
		free(g.c[i]);
	}
	free(g.b);
	free(g.bucket);
	free(g.hal);
	free(is_free);
	if (g.f && fclose(g.f))
		ok = 0;
	return ok;
}

/*
 * gen in a child, so that the generator's memory (which glibc may keep after free) does not raise
 * the RSS of the measured children forked later. Rows written, 0 on failure.
 */
static uint64_t gen_in_child(const char *path, uint64_t rows, const struct bench_opts *o)
{
	uint64_t n = 0;
	int status = 0, fd[2];
	pid_t pid;

	if (pipe(fd))
		return 0;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		n = gen(path, rows, o);
		_exit(write(fd[1], &n, sizeof(n)) == (ssize_t)sizeof(n) && n ? 0 : 4);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &n, sizeof(n)) != (ssize_t)sizeof(n))
		n = 0;
	close(fd[0]);
	if (pid > 0 && (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)))
		n = 0;
	return n;
}

/* ------------------------------------------------------------------------------------------ */
/* measurements: each in a forked child; the parent times it and takes its peak RSS from wait4 */

enum mode {
	MODE_FLOOR, /* a child that does nothing: the RSS every measurement starts from */
	MODE_READ,  /* read(2) of the file in 1 MiB chunks, like cat */
	MODE_PARSE, /* memscope_source_read with a callback that only counts */
	MODE_LEAKS, /* read + memscope_leaks_feed, finish, write text to /dev/null */
	MODE_TOOL,  /* exec the tool: TOOL -q FILE >/dev/null */
};

static const char *const mode_names[] = { "floor", "read(2)", "parse", "leaks-lib", "leaks-tool" };

/* what a child reports through its pipe */
struct result {
	uint64_t n_events;
	uint64_t n_step_leaks, n_exit_leaks, n_fluct;
	double t_read, t_finish, t_write; /* seconds inside the child */
	int rewound;			  /* a second pass was needed */
};

static int count_event(void *ctx, const struct memscope_event *ev)
{
	(void)ev;
	++*(uint64_t *)ctx;
	return 0;
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
static int run_leaks(const char *path, struct result *r)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_leaks *l = st ? memscope_leaks_new(NULL, st) : NULL;
	struct memscope_leaks_input in = { path, 0 };
	const struct memscope_leaks_stats *s;
	double t0 = bench_now_s(), t1, t2;
	FILE *out = fopen("/dev/null", "w");
	int rc = -1;

	if (!l || !out || read_into(path, st, l, &r->n_events))
		goto out;
	t1 = bench_now_s();
	if (memscope_leaks_finish(l))
		goto out;
	if (memscope_leaks_needs_rewind(l, NULL, NULL)) {
		r->rewound = 1;
		if (memscope_leaks_rewind(l) || read_into(path, st, l, &r->n_events) ||
			memscope_leaks_finish(l))
			goto out;
	}
	t2 = bench_now_s();
	if (memscope_leaks_write(out, MEMSCOPE_LEAKS_TEXT, l, st, &in, 1) || fflush(out))
		goto out;
	s = memscope_leaks_stats(l);
	r->n_step_leaks = s->n_step_leaks;
	r->n_exit_leaks = s->n_exit_leaks;
	memscope_leaks_fluct(l, &r->n_fluct);
	r->t_read = t1 - t0;
	r->t_finish = t2 - t1;
	r->t_write = bench_now_s() - t2;
	rc = 0;
out:
	if (out)
		fclose(out);
	memscope_leaks_free(l);
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
static void child(enum mode m, const char *path, const char *tool, int fd)
{
	struct result r;
	int rc = 0, null_fd;

	memset(&r, 0, sizeof(r));
	switch (m) {
	case MODE_FLOOR:
		break;
	case MODE_READ:
		rc = run_read(path, &r);
		break;
	case MODE_PARSE:
		rc = run_parse(path, &r);
		break;
	case MODE_LEAKS:
		rc = run_leaks(path, &r);
		break;
	case MODE_TOOL:
		close(fd);
		null_fd = open("/dev/null", O_WRONLY);
		if (null_fd < 0 || dup2(null_fd, STDOUT_FILENO) < 0)
			_exit(4);
		execl(tool, tool, "-q", path, (char *)NULL);
		_exit(4);
	}
	if (rc || write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(4);
	_exit(0);
}

/*
 * Run one mode on path in a child. Prints wall time (fork to reap), rate and peak RSS; returns the
 * peak RSS in KiB, 0 on failure.
 */
static long measure(enum mode m, const char *label, const char *path, const char *tool,
	uint64_t rows, unsigned run)
{
	struct result r;
	struct rusage ru;
	struct stat sb;
	double t0, wall, mb;
	int status = 0, fd[2];
	ssize_t got = 0;
	pid_t pid;

	memset(&r, 0, sizeof(r));
	if (pipe(fd))
		return 0;
	fflush(stdout);
	fflush(stderr);
	t0 = bench_now_s();
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		child(m, path, tool, fd[1]);
	}
	close(fd[1]);
	if (pid > 0)
		got = read(fd[0], &r, sizeof(r));
	close(fd[0]);
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
		WEXITSTATUS(status) || (m != MODE_TOOL && got != (ssize_t)sizeof(r))) {
		printf("%-6s %-10s run %u: failed (status %d)\n", label, mode_names[m], run,
			status);
		return 0;
	}
	wall = bench_now_s() - t0;
	if (m == MODE_FLOOR) {
		printf("%-6s %-10s peak RSS %.1f MiB\n", label, mode_names[m],
			(double)ru.ru_maxrss / 1024);
		return ru.ru_maxrss;
	}
	mb = stat(path, &sb) ? 0 : (double)sb.st_size / 1e6;
	printf("%-6s %-10s run %u: %8" PRIu64
	       " rows %6.1f MB %7.3f s %7.1f MB/s peak RSS %6.1f MiB",
		label, mode_names[m], run, rows, mb, wall, mb / wall, (double)ru.ru_maxrss / 1024);
	if (m == MODE_LEAKS)
		printf("  [read+feed %.3f, finish %.3f, write %.3f s; %" PRIu64 " events, %" PRIu64
		       " step leaks, %" PRIu64 " exit leaks, %zu fluct groups%s]",
			r.t_read, r.t_finish, r.t_write, r.n_events, r.n_step_leaks, r.n_exit_leaks,
			(size_t)r.n_fluct, r.rewound ? ", second pass" : "");
	else if (m == MODE_PARSE)
		printf("  [%" PRIu64 " events]", r.n_events);
	printf("\n");
	return ru.ru_maxrss;
}

static void usage(FILE *f)
{
	fputs("usage: bench_leaks [-n ROWS] [-x SCALE] [-r N] [-S SEED] [-s PCT] [-d DIR]\n"
	      "                   [-t TOOL] [-k] [-K] [-L]\n"
	      "Generates a dump of ROWS rows (default 300000, about 45 MB) and one SCALE times\n"
	      "bigger (default 4) in DIR (default /tmp), then prints, N times each (default 3),\n"
	      "the time and peak RSS of read(2) alone, parsing alone, the memscope-leaks library\n"
	      "path and, with -t, the memscope-leaks binary TOOL.\n"
	      "  -S SEED  PRNG seed (default 1)\n"
	      "  -s PCT   percent of PTA MALLOC rows with call stacks (default 8)\n"
	      "  -k       keep the dumps\n"
	      "  -K       no KERNEL_LAUNCH rows (default: one per other aten op)\n"
	      "  -L       no blocks leaking across steps (default: 3% of the blocks)\n",
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

int main(int argc, char **argv)
{
	struct bench_opts o = { 300000, 4, 3, 1, "/tmp", NULL, 0, 8, 0, 0 };
	const char *labels[2] = { "small", "big" };
	char path[2][4096];
	uint64_t rows[2], v;
	long rss[2] = { 0, 0 };
	unsigned i, run;
	int c, m;

	while ((c = getopt(argc, argv, "n:x:r:S:s:d:t:kKLh")) != -1) {
		switch (c) {
		case 'n':
		case 'x':
		case 'r':
		case 'S':
		case 's':
			if (parse_u64_arg(optarg, &v) || (c != 'S' && v == 0) ||
				(c != 'n' && c != 'S' && v > 1000)) {
				fprintf(stderr, "bench_leaks: -%c: bad number '%s'\n", c, optarg);
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
		case 'K':
			o.no_kernels = 1;
			break;
		case 'L':
			o.no_step_leaks = 1;
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
	for (i = 0; i < 2; i++) {
		struct stat sb;
		double t0 = bench_now_s();

		snprintf(path[i], sizeof(path[i]), "%s/bench_leaks_%s.csv", o.dir, labels[i]);
		rows[i] = gen_in_child(path[i], i ? o.rows * o.scale : o.rows, &o);
		if (!rows[i] || stat(path[i], &sb)) {
			perror("bench_leaks: generating");
			return 4;
		}
		printf("generated %s: %" PRIu64 " rows, %.1f MB (%.0f bytes/row) in %.1f s\n",
			path[i], rows[i], (double)sb.st_size / 1e6, (double)sb.st_size / rows[i],
			bench_now_s() - t0);
	}
	measure(MODE_FLOOR, "-", NULL, NULL, 0, 0);
	for (i = 0; i < 2; i++)
		for (m = MODE_READ; m <= MODE_TOOL; m++)
			for (run = 1; run <= o.repeat && (m != MODE_TOOL || o.tool); run++) {
				long k = measure(
					(enum mode)m, labels[i], path[i], o.tool, rows[i], run);

				if (m == MODE_LEAKS && k > rss[i])
					rss[i] = k;
			}
	if (rss[0] && rss[1])
		printf("leaks-lib peak RSS: small %.1f MiB, big %.1f MiB (x%.2f for x%.2f rows)\n",
			(double)rss[0] / 1024, (double)rss[1] / 1024, (double)rss[1] / rss[0],
			(double)rows[1] / rows[0]);
	if (!o.keep) {
		unlink(path[0]);
		unlink(path[1]);
	}
	return 0;
}
