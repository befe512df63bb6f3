/* Benchmark of the readers: generates realistic dump CSV and host streams, prints read speed, peak RSS and capture size. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <csv.h>

#include "core/capture_fmt.h"
#include "memscope/memscope.h"

/*
 * Every measurement runs in a forked child that reports its figures through a pipe; the parent
 * gets the child's peak RSS from wait4(). The parent itself never allocates much, so a child
 * starts from a small RSS and its peak is what the measured code used (plus the floor printed
 * as rss_floor).
 */

enum exit_status { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_IO = 4 };

enum mode {
	MODE_CSV = 1u << 0,     /* csv_read of the generated files */
	MODE_LIBCSV = 1u << 1,  /* libcsv alone and read(2) alone on the same files */
	MODE_CAPTURE = 1u << 2, /* convert CSV to capture, then capture_read */
	MODE_HOST = 1u << 3,    /* host malloc/free stream as compact capture records */
	MODE_SCALE = 1u << 4,   /* csv_read peak RSS on 2x, 4x bigger files */
	MODE_GEN = 1u << 5,     /* only generate the files (kept) */
	MODE_DEFAULT = MODE_CSV | MODE_LIBCSV | MODE_CAPTURE | MODE_HOST | MODE_SCALE,
};

static const struct {
	const char *name;
	unsigned bit;
	const char *help;
} modes[] = {
	{ "csv", MODE_CSV, "read the dump CSVs (without and with call stacks)" },
	{ "libcsv", MODE_LIBCSV, "libcsv alone (empty callbacks) and read(2) alone, same files" },
	{ "capture", MODE_CAPTURE, "convert the CSVs to capture files and read those" },
	{ "host", MODE_HOST, "host malloc/free stream: capture bytes/event and read speed" },
	{ "scale", MODE_SCALE, "peak RSS of csv_read on files --scale times bigger" },
	{ "gen", MODE_GEN, "only generate the files into --dir and keep them" },
	{ "all", MODE_DEFAULT, "csv libcsv capture host scale (the default)" },
};

/* options, with every default next to its flag */
struct bench_opts {
	uint64_t rows;        /* -n: data rows of the generated dump CSV (500K) */
	unsigned stack_pct;   /* -s: percent of rows with call stacks in the stacked CSV (10) */
	unsigned repeat;      /* -r: runs per measurement (3) */
	uint64_t host_events; /* -e: events of the host stream (4M) */
	unsigned threads;     /* -t: threads of the host stream, 1..4 (4) */
	uint64_t seed;        /* -S: PRNG seed (1) */
	const char *dir;      /* -d: directory for the files, kept (NULL: temporary, removed) */
	const char *input;    /* -i: measure this CSV or capture file instead of generating (NULL) */
	const char *scale;    /* -x: multiples of -n for the scale mode ("2,4") */
	int keep;             /* -k: keep the temporary directory (0) */
	unsigned modes;       /* positional MODEs (all) */
};

enum { OPT_HELP = 'h' };

static const struct option long_opts[] = {
	{ "rows", required_argument, NULL, 'n' },
	{ "stack-pct", required_argument, NULL, 's' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "host-events", required_argument, NULL, 'e' },
	{ "threads", required_argument, NULL, 't' },
	{ "seed", required_argument, NULL, 'S' },
	{ "dir", required_argument, NULL, 'd' },
	{ "input", required_argument, NULL, 'i' },
	{ "scale", required_argument, NULL, 'x' },
	{ "keep", no_argument, NULL, 'k' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static const char *const opt_help[] = {
	"-n, --rows N         data rows of the generated dump CSV (default 500K; K/M/G accepted)",
	"-s, --stack-pct P    percent of rows with call stacks in the stacked CSV (default 10)",
	"-r, --repeat N       runs per measurement; best and median are printed (default 3)",
	"-e, --host-events N  events of the host malloc/free stream (default 4M)",
	"-t, --threads N      threads of the host stream, 1..4 (default 4)",
	"-S, --seed N         PRNG seed (default 1)",
	"-d, --dir DIR        write the files into DIR and keep them (default: a temporary directory)",
	"-i, --input FILE     measure this dump CSV or capture file instead of generated ones",
	"-x, --scale LIST     multiples of --rows for the scale mode (default 2,4)",
	"-k, --keep           keep the temporary directory",
	"-h, --help           show this help and exit",
	NULL,
};

static void usage(void)
{
	size_t i;

	printf("usage: bench_read [options] [MODE...]\n"
	       "Print read speed, peak RSS and capture size of libmemscope's readers on\n"
	       "generated dump CSV files and host malloc/free streams.\n\noptions:\n");
	for (i = 0; opt_help[i]; i++)
		printf("  %s\n", opt_help[i]);
	printf("\nmodes:\n");
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		printf("  %-8s %s\n", modes[i].name, modes[i].help);
}

/* Strict unsigned number with an optional K/M/G (x1000) suffix: "12abc" is refused. */
static int parse_count(const char *s, uint64_t *v)
{
	uint64_t x = 0, mul = 1;
	const char *p = s;

	if (!*p)
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		return -1;
	if (*p == 'K' || *p == 'k')
		mul = 1000;
	else if (*p == 'M' || *p == 'm')
		mul = 1000000;
	else if (*p == 'G' || *p == 'g')
		mul = 1000000000;
	if (mul > 1)
		p++;
	if (*p || (x && x > UINT64_MAX / mul))
		return -1;
	*v = x * mul;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* PRNG (splitmix64): deterministic for a seed */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}

static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/* Log-uniform integer in [lo, hi]. */
static uint64_t rng_log(uint64_t *s, double lo, double hi)
{
	return (uint64_t)exp(log(lo) + rng_unit(s) * (log(hi) - log(lo)));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------------------------ */
/* growable text, with a sticky failure flag */

struct sbuf {
	char *p;
	size_t len, cap;
	int failed;
};

static void sb_reserve(struct sbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->failed || b->cap - b->len > n)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len <= n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->failed = 1;
		return;
	}
	b->p = p;
	b->cap = cap;
}

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	if (b->failed)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		return;
	}
	sb_reserve(b, (size_t)n + 1);
	if (b->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void sb_free(struct sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------------------------------------ */
/* dump CSV generator: a training loop as msMemScope (HEAD) writes it */

#define GEN_PID 3101864ull
#define GEN_TID_MAIN 3101864ull
#define GEN_TID_BWD 3104193ull
#define GEN_LAYERS 4
#define GEN_STACKS 96
#define GEN_SEGMENT (20ll << 20)
#define GEN_POOL_BASE 0x000012c041400000ull

struct shape {
	const char *text;
	uint64_t numel;
};

static const struct shape shapes[] = {
	{ "torch.Size([2, 3])", 6 },
	{ "torch.Size([])", 1 },
	{ "torch.Size([64])", 64 },
	{ "torch.Size([1024])", 1024 },
	{ "torch.Size([64, 1024])", 65536 },
	{ "torch.Size([1024, 1024])", 1048576 },
	{ "torch.Size([1024, 4096])", 4194304 },
	{ "torch.Size([32, 128, 768])", 3145728 },
	{ "torch.Size([32, 128])", 4096 },
	{ "torch.Size([8, 3, 224, 224])", 1204224 },
};

static const struct {
	const char *name;
	unsigned elem;
} dtypes[] = {
	{ "torch.float32", 4 },
	{ "torch.float32", 4 },
	{ "torch.float32", 4 },
	{ "torch.float16", 2 },
	{ "torch.bfloat16", 2 },
	{ "torch.int64", 8 },
};

/* An aten op of the loop: reads n_in blocks, writes n_out new ones, uses n_tmp scratch blocks. */
struct op_def {
	const char *name;
	unsigned n_in, n_out, n_tmp;
	int weights;                /* its inputs include weights */
	const char *kernel;         /* NULL: no kernel launch */
};

static const struct op_def fwd_ops[] = {
	{ "torch._ops.aten.t.default", 0, 0, 0, 0, NULL },
	{ "torch._ops.aten.addmm.default", 3, 1, 0, 1, "MatMulV3_a3f1c2_high_performance_1" },
	{ "torch._ops.aten.relu.default", 1, 1, 0, 0, "Relu_9b7e11_high_performance_0" },
	{ "torch._ops.aten.native_dropout.default", 1, 2, 0, 0, "DropOutDoMask_5c4a" },
};

static const struct op_def loss_ops[] = {
	{ "torch._ops.aten.mse_loss.default", 2, 1, 1, 0, "MseLoss_1d2c3b_high_performance_0" },
	{ "torch._ops.profiler._record_function_enter_new.default", 0, 0, 0, 0, NULL },
	{ "torch._ops.profiler._record_function_exit._RecordFunction", 0, 0, 0, 0, NULL },
	{ "torch._ops.aten.ones_like.default", 1, 1, 0, 0, "Fills_7e0a" },
	{ "torch._ops.aten.mse_loss_backward.default", 3, 1, 0, 0, "MseLossGrad_4b2a" },
};

static const struct op_def bwd_ops[] = {
	{ "torch._ops.aten.threshold_backward.default", 2, 1, 0, 0, "ReluGrad_0c1d" },
	{ "torch._ops.aten.t.default", 0, 0, 0, 0, NULL },
	{ "torch._ops.aten.mm.default", 2, 1, 0, 1, "MatMulV3_a3f1c2_high_performance_1" },
	{ "torch._ops.aten.t.default", 0, 0, 0, 0, NULL },
	{ "torch._ops.aten.mm.default", 2, 1, 0, 0, "MatMulV3_a3f1c2_high_performance_1" },
	{ "torch._ops.aten.sum.dim_IntList", 1, 1, 1, 0, "ReduceSum_2f8e_high_precision" },
	{ "torch._ops.aten.view.default", 0, 0, 0, 0, NULL },
};

static const struct op_def opt_ops[] = {
	{ "torch._ops.aten._foreach_mul_.Scalar", 1, 0, 0, 1, "Muls_7a1f" },
	{ "torch._ops.aten._foreach_addcmul_.Scalar", 2, 0, 1, 1, "Addcmul_3d9b" },
	{ "torch._ops.aten._foreach_sqrt.default", 1, 1, 0, 1, "Sqrt_11ad" },
	{ "torch._ops.aten._foreach_add_.Tensor", 2, 0, 0, 1, "Add_6e2f_high_performance_0" },
	{ "torch._ops.aten._foreach_addcdiv_.Scalar", 3, 0, 0, 1, "Addcdiv_8c0e" },
	{ "torch._ops.aten.zero_.default", 1, 0, 0, 1, "ZerosLike_0a1b" },
};

struct blk {
	uint64_t aid, addr;
	int64_t size;
	unsigned shape, dtype;
	int hal;
	uint64_t free_after; /* op number after which it is freed (activations) */
	struct sbuf rows;    /* its MALLOC and ACCESS rows: written with its FREE */
};

struct csv_gen {
	FILE *out;
	uint64_t rng;
	uint64_t id, ts_ns, serial, rows, rows_goal, n_ops, step;
	unsigned stack_pct;
	int64_t used, total;
	uint64_t pool_next;
	struct blk **live;   /* PTA activations */
	size_t n_live, cap_live;
	struct blk *weights[GEN_LAYERS * 6];
	size_t n_weights;
	struct blk *segs[64]; /* HAL segments backing the pool */
	size_t n_segs;
	struct sbuf line, attr;
	char *py_stacks[GEN_STACKS], *c_stacks[GEN_STACKS];
	uint64_t t_start, id_start;
	int failed;
};

static uint64_t next_id(struct csv_gen *g)
{
	uint64_t id = g->id++;

	if (rng_below(&g->rng, 10) == 0) /* events the dump filtered out leave gaps */
		g->id += 1 + rng_below(&g->rng, 2);
	return id;
}

static uint64_t next_ts(struct csv_gen *g)
{
	g->ts_ns += rng_log(&g->rng, 800, 120000);
	return g->ts_ns;
}

static char *make_stack(uint64_t *rng, int python)
{
	static const char *const py_files[] = {
		"/home/user/train.py", "/usr/lib/python3.9/site-packages/torch/nn/modules/module.py",
		"/usr/lib/python3.9/site-packages/torch/nn/modules/linear.py",
		"/usr/lib/python3.9/site-packages/torch/autograd/__init__.py",
		"/usr/lib/python3.9/site-packages/torch/optim/adam.py",
		"/usr/lib/python3.9/site-packages/torch_npu/utils/_module.py",
	};
	static const char *const py_funcs[] = {
		"<module>", "main", "train_one_epoch", "_call_impl", "forward", "backward",
		"step", "_single_tensor_adam", "_wrapped_call_impl", "_multi_tensor_adam",
	};
	static const char *const c_libs[] = {
		"libtorch_npu.so", "libtorch_cpu.so", "libc10.so", "libascendcl.so",
		"libruntime.so", "libpython3.9.so.1.0",
	};
	static const char *const c_funcs[] = {
		"_ZN2at6native5emptyEv", "_ZN3c1010TensorImplC1Ev", "aclrtMalloc",
		"_ZN10at_npu6native17NPUCachingAllocator6mallocEPPvim", "_PyEval_EvalFrameDefault",
		"_ZN5torch8autograd6Engine17evaluate_functionE", "PyObject_Call", "rtMalloc",
	};
	struct sbuf b = { 0 };
	unsigned depth = python ? 6 + (unsigned)rng_below(rng, 16) : 8 + (unsigned)rng_below(rng, 20);
	unsigned i;

	for (i = 0; i < depth; i++) {
		if (python)
			sb_printf(&b, "%s(%u): %s\n", py_files[rng_below(rng, 6)],
				10 + (unsigned)rng_below(rng, 900), py_funcs[rng_below(rng, 10)]);
		else
			sb_printf(&b, "%s%s(%s+0x%x) [0x7f3a%08" PRIx64 "]", i ? "\n" : "",
				c_libs[rng_below(rng, 6)], c_funcs[rng_below(rng, 8)],
				(unsigned)rng_below(rng, 0x400), rng_next(rng) & 0xffffffffu);
	}
	if (b.failed) {
		sb_free(&b);
		return NULL;
	}
	return b.p;
}

/*
 * One row into dst (NULL: straight to the file). ptr 0 writes N/A; attr NULL leaves the Attr
 * field empty; stacks: the row may get call stacks (--stack-pct).
 */
static void put_row(struct csv_gen *g, struct sbuf *dst, uint64_t id, const char *event,
	const char *type, const char *name, uint64_t ts, uint64_t tid, const char *device,
	uint64_t ptr, const char *attr, int stacks)
{
	struct sbuf *l = &g->line;

	l->len = 0;
	sb_printf(l, "%" PRIu64 ",%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,", id, event, type,
		name, ts, GEN_PID, tid, device);
	if (ptr)
		sb_printf(l, "0x%016" PRIx64 ",", ptr);
	else
		sb_put(l, "N/A,", 4);
	if (attr)
		sb_printf(l, "\"%s\"", attr);
	if (stacks && g->stack_pct && rng_below(&g->rng, 100) < g->stack_pct)
		sb_printf(l, ",\"%s\",\"%s\"\n", g->py_stacks[rng_below(&g->rng, GEN_STACKS)],
			g->c_stacks[rng_below(&g->rng, GEN_STACKS)]);
	else
		sb_put(l, ",,\n", 3);
	if (l->failed) {
		g->failed = 1;
		return;
	}
	g->rows++;
	if (dst)
		sb_put(dst, l->p, l->len);
	else if (fwrite(l->p, 1, l->len, g->out) != l->len)
		g->failed = 1;
}

static void flush_block(struct csv_gen *g, struct blk *b)
{
	if (b->rows.failed || fwrite(b->rows.p, 1, b->rows.len, g->out) != b->rows.len)
		g->failed = 1;
	sb_free(&b->rows);
	free(b);
}

/* A HAL segment of at least size bytes for the pool (buffered: written when freed). */
static void hal_grow(struct csv_gen *g, int64_t size)
{
	int64_t seg = size > GEN_SEGMENT ? (size + (2 << 20) - 1) / (2 << 20) * (2 << 20)
					 : GEN_SEGMENT;
	struct blk *b;
	uint64_t addr = GEN_POOL_BASE + (uint64_t)g->total;

	if (g->n_segs == sizeof(g->segs) / sizeof(g->segs[0]) || !(b = calloc(1, sizeof(*b)))) {
		g->failed = 1;
		return;
	}
	b->aid = ++g->serial;
	b->addr = addr;
	b->size = seg;
	b->hal = 1;
	g->attr.len = 0;
	sb_printf(&g->attr,
		"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRId64
		",page_type:huge,alloc_type:alloc}", b->aid, addr, seg);
	put_row(g, &b->rows, next_id(g), "MALLOC", "HAL", "N/A", next_ts(g), GEN_TID_MAIN, "0",
		addr, g->attr.p, 1);
	g->total += seg;
	g->segs[g->n_segs++] = b;
}

/* The caching allocator gives its last segment back (torch.npu.empty_cache()). */
static void hal_shrink(struct csv_gen *g)
{
	struct blk *b;

	if (g->n_segs < 2 || g->total - g->segs[g->n_segs - 1]->size < g->used + GEN_SEGMENT)
		return;
	b = g->segs[--g->n_segs];
	g->total -= b->size;
	g->attr.len = 0;
	sb_printf(&g->attr, "{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRId64 "}",
		b->aid, b->addr, b->size);
	put_row(g, &b->rows, next_id(g), "FREE", "HAL", "N/A", next_ts(g), GEN_TID_MAIN, "0",
		b->addr, g->attr.p, 1);
	flush_block(g, b);
}

static struct blk *pta_alloc(struct csv_gen *g, uint64_t tid)
{
	struct blk *b = calloc(1, sizeof(*b));
	uint64_t r = rng_below(&g->rng, 100);

	if (!b) {
		g->failed = 1;
		return NULL;
	}
	/* mostly small and mid tensors, now and then a big one */
	b->shape = r < 30 ? (unsigned)rng_below(&g->rng, 4)
		 : r < 85 ? 4 + (unsigned)rng_below(&g->rng, 2) * 4
			  : 5 + (unsigned)rng_below(&g->rng, 6) % 5;
	b->dtype = (unsigned)rng_below(&g->rng, sizeof(dtypes) / sizeof(dtypes[0]));
	b->size = (int64_t)((shapes[b->shape].numel * dtypes[b->dtype].elem + 511) / 512 * 512);
	if (g->used + b->size > g->total)
		hal_grow(g, g->used + b->size - g->total);
	b->aid = ++g->serial;
	b->addr = GEN_POOL_BASE + g->pool_next % (uint64_t)g->total;
	g->pool_next += (uint64_t)b->size;
	g->used += b->size;
	g->attr.len = 0;
	sb_printf(&g->attr,
		"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRId64 ",total:%" PRId64
		",used:%" PRId64 "}", b->aid, b->addr, b->size, g->total, g->used);
	put_row(g, &b->rows, next_id(g), "MALLOC", "PTA", "N/A", next_ts(g), tid, "0", b->addr,
		g->attr.p, 1);
	return b;
}

static void pta_access(struct csv_gen *g, struct blk *b, const char *op, int write, uint64_t tid)
{
	g->attr.len = 0;
	sb_printf(&g->attr,
		"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRId64
		",type:PTA,dtype:%s,shape:%s}", b->aid, b->addr, b->size, dtypes[b->dtype].name,
		shapes[b->shape].text);
	put_row(g, &b->rows, next_id(g), "ACCESS", write ? "WRITE" : "READ", op, next_ts(g), tid,
		"0", b->addr, g->attr.p, 0);
}

/* FREE row, then the block's rows go out together (the reference's order). */
static void pta_free(struct csv_gen *g, struct blk *b, uint64_t tid, int shadow)
{
	if (shadow) {
		g->attr.len = 0;
		sb_printf(&g->attr,
			"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRId64
			",shadow:true}", b->aid, b->addr, b->size);
	} else {
		g->used -= b->size;
		g->attr.len = 0;
		sb_printf(&g->attr,
			"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRId64
			",total:%" PRId64 ",used:%" PRId64 "}", b->aid, b->addr, b->size, g->total,
			g->used);
	}
	put_row(g, &b->rows, next_id(g), "FREE", b->hal ? "HAL" : "PTA", "N/A", next_ts(g), tid,
		"0", b->addr, g->attr.p, !shadow);
	flush_block(g, b);
}

static void live_push(struct csv_gen *g, struct blk *b)
{
	if (g->n_live == g->cap_live) {
		size_t cap = g->cap_live ? g->cap_live * 2 : 64;
		struct blk **nl = realloc(g->live, cap * sizeof(*nl));

		if (!nl) {
			g->failed = 1;
			return;
		}
		g->live = nl;
		g->cap_live = cap;
	}
	g->live[g->n_live++] = b;
}

static void run_op(struct csv_gen *g, const struct op_def *op, uint64_t tid)
{
	uint64_t start_id = next_id(g);
	unsigned i;

	put_row(g, NULL, start_id, "OP_LAUNCH", "ATEN_START", op->name, next_ts(g), tid, "0", 0,
		NULL, 1);
	for (i = 0; i < op->n_tmp && !g->failed; i++) {
		struct blk *t = pta_alloc(g, tid);

		if (!t)
			return;
		pta_access(g, t, op->name, 1, tid);
		pta_access(g, t, op->name, 0, tid);
		pta_free(g, t, tid, 0);
	}
	for (i = 0; i < op->n_in; i++) {
		struct blk *in;

		if (op->weights && (i == 0 || !g->n_live))
			in = g->weights[rng_below(&g->rng, g->n_weights)];
		else if (g->n_live)
			in = g->live[g->n_live - 1 - rng_below(&g->rng, g->n_live < 6 ? g->n_live : 6)];
		else
			continue;
		pta_access(g, in, op->name, op->n_out == 0 && i == 0, tid);
	}
	for (i = 0; i < op->n_out && !g->failed; i++) {
		struct blk *o = pta_alloc(g, tid);

		if (!o)
			return;
		pta_access(g, o, op->name, 1, tid);
		/* activations: most die soon, some live to the end of the step */
		o->free_after = g->n_ops + 1 + rng_below(&g->rng, 1 + rng_below(&g->rng, 40));
		live_push(g, o);
	}
	if (op->kernel && rng_below(&g->rng, 10) < 7) {
		g->attr.len = 0;
		sb_printf(&g->attr, "streamId:2,taskId:%" PRIu64, g->n_ops % 65536);
		put_row(g, NULL, next_id(g), "KERNEL_LAUNCH", "KERNEL_LAUNCH", op->kernel,
			next_ts(g), tid, "0", 0, g->attr.p, 0);
	}
	put_row(g, NULL, next_id(g), "OP_LAUNCH", "ATEN_END", op->name, next_ts(g), tid, "0", 0,
		NULL, 1);
	g->n_ops++;
	/* free what died during the op, oldest first */
	for (i = 0; i < g->n_live;) {
		if (g->live[i]->free_after <= g->n_ops) {
			struct blk *b = g->live[i];

			memmove(g->live + i, g->live + i + 1, (g->n_live - i - 1) * sizeof(*g->live));
			g->n_live--;
			pta_free(g, b, tid, 0);
		} else {
			i++;
		}
	}
}

static void run_step(struct csv_gen *g)
{
	uint64_t range_id = next_id(g);
	char name[64];
	unsigned l, k;

	put_row(g, NULL, range_id, "MSTX", "Range_start", "\"step start\"", next_ts(g),
		GEN_TID_MAIN, "0", 0, NULL, 0);
	snprintf(name, sizeof(name), "%" PRIu64, ++g->step);
	put_row(g, NULL, next_id(g), "SYSTEM", "STEP", name, next_ts(g), GEN_TID_MAIN, "0", 0,
		NULL, 0);
	for (l = 0; l < GEN_LAYERS; l++)
		for (k = 0; k < sizeof(fwd_ops) / sizeof(fwd_ops[0]); k++)
			run_op(g, &fwd_ops[k], GEN_TID_MAIN);
	for (k = 0; k < sizeof(loss_ops) / sizeof(loss_ops[0]); k++)
		run_op(g, &loss_ops[k], GEN_TID_MAIN);
	for (l = 0; l < GEN_LAYERS; l++)
		for (k = 0; k < sizeof(bwd_ops) / sizeof(bwd_ops[0]); k++)
			run_op(g, &bwd_ops[k], GEN_TID_BWD);
	for (k = 0; k < sizeof(opt_ops) / sizeof(opt_ops[0]); k++)
		run_op(g, &opt_ops[k], GEN_TID_MAIN);
	/* the autograd graph goes at the end of the step */
	while (g->n_live && !g->failed)
		pta_free(g, g->live[--g->n_live], GEN_TID_MAIN, 0);
	if (g->step % 97 == 0)
		hal_shrink(g);
	snprintf(name, sizeof(name), "\"Range end from id %" PRIu64 "\"", range_id);
	put_row(g, NULL, next_id(g), "MSTX", "Range_end", name, next_ts(g), GEN_TID_MAIN, "0", 0,
		NULL, 0);
}

/* Generate a dump CSV of at least rows data rows into path. 0 or -1 (msg set). */
static int gen_csv(const char *path, uint64_t rows, unsigned stack_pct, uint64_t seed,
	char *msg, size_t msg_len)
{
	struct csv_gen g;
	static char iobuf[1 << 20];
	size_t i;
	int rc = -1;

	memset(&g, 0, sizeof(g));
	g.rng = seed;
	g.rows_goal = rows;
	g.stack_pct = stack_pct;
	g.id = g.id_start = 2;
	g.ts_ns = g.t_start = 1764753083997498270ull;
	g.out = fopen(path, "w");
	if (!g.out) {
		snprintf(msg, msg_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	setvbuf(g.out, iobuf, _IOFBF, sizeof(iobuf));
	for (i = 0; i < GEN_STACKS; i++) {
		g.py_stacks[i] = make_stack(&g.rng, 1);
		g.c_stacks[i] = make_stack(&g.rng, 0);
		if (!g.py_stacks[i] || !g.c_stacks[i])
			g.failed = 1;
	}
	fputs("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
	      "Call Stack(Python),Call Stack(C)\n", g.out);
	/* the weights and the optimizer state live for the whole run */
	hal_grow(&g, GEN_SEGMENT);
	for (i = 0; i < sizeof(g.weights) / sizeof(g.weights[0]) && !g.failed; i++) {
		g.weights[i] = pta_alloc(&g, GEN_TID_MAIN);
		if (g.weights[i])
			g.n_weights++;
	}
	while (g.rows < g.rows_goal && !g.failed)
		run_step(&g);
	/* exit: blocks still alive get the reference's synthetic shadow FREE */
	for (i = 0; i < g.n_weights; i++)
		pta_free(&g, g.weights[i], GEN_TID_MAIN, 1);
	while (g.n_segs)
		pta_free(&g, g.segs[--g.n_segs], GEN_TID_MAIN, 1);
	/* public (device N/A) events are appended at the end of every device file */
	put_row(&g, NULL, 0, "SYSTEM", "ACL_INIT", "N/A", g.t_start - 900000, GEN_TID_MAIN, "N/A", 0,
		NULL, 0);
	put_row(&g, NULL, 1, "SYSTEM", "START_TRACE", "N/A", g.t_start - 500000, GEN_TID_MAIN,
		"N/A", 0, "{free:62277025792,total:65452113920}", 0);
	put_row(&g, NULL, next_id(&g), "SYSTEM", "STOP_TRACE", "N/A", next_ts(&g), GEN_TID_MAIN,
		"N/A", 0, NULL, 0);
	put_row(&g, NULL, next_id(&g), "SYSTEM", "ACL_FINI", "N/A", next_ts(&g), GEN_TID_MAIN,
		"N/A", 0, NULL, 0);
	if (g.failed)
		snprintf(msg, msg_len, "%s: generation failed (out of memory or write error)", path);
	else
		rc = 0;
	if (fclose(g.out) && !rc) {
		snprintf(msg, msg_len, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	for (i = 0; i < GEN_STACKS; i++) {
		free(g.py_stacks[i]);
		free(g.c_stacks[i]);
	}
	for (i = 0; i < g.n_live; i++) {
		sb_free(&g.live[i]->rows);
		free(g.live[i]);
	}
	free(g.live);
	sb_free(&g.line);
	sb_free(&g.attr);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* host malloc/free stream, as an LD_PRELOAD shim would record it */

#define HOST_PID 48213ull
#define HOST_STACKS 48
#define HOST_LONG_MAX 32768
#define HOST_CLASSES 98 /* 16-byte classes up to 1 KiB, 4 KiB pages up to 128 KiB, mmap */

struct hblock {
	uint64_t aid, ptr, size;
	unsigned arena;
};

struct hvec {
	uint64_t *v;
	size_t n, cap;
};

struct harena {
	uint64_t bump, mmap_top;
	struct hvec free_list[HOST_CLASSES];
};

struct hthread {
	uint64_t tid;
	struct hblock *live; /* LIFO */
	size_t n, cap;
};

struct host_gen {
	uint64_t rng, id, ts_ns, serial;
	struct harena arena[4];
	struct hthread th[4];
	unsigned n_threads, cur;
	struct hblock *longl; /* long-lived blocks */
	size_t n_long;
	uint32_t stacks[HOST_STACKS];
	struct memscope_strtab *st;
	struct memscope_capture_writer *w;
	struct memscope_error err;
	int failed;
};

static int hvec_push(struct hvec *v, uint64_t x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		uint64_t *nv = realloc(v->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}

static unsigned size_class(uint64_t size, uint64_t *rounded)
{
	if (size <= 1024) {
		*rounded = (size + 15) / 16 * 16;
		return (unsigned)(*rounded / 16); /* 1..64 */
	}
	if (size <= 128 * 1024) {
		*rounded = (size + 4095) / 4096 * 4096;
		return 64 + (unsigned)(*rounded / 4096); /* 65..96 */
	}
	*rounded = (size + 4095) / 4096 * 4096;
	return HOST_CLASSES - 1;
}

/* Requested sizes: mostly small, a tail of big ones. */
static uint64_t host_size(uint64_t *rng)
{
	uint64_t r = rng_below(rng, 1000);

	if (r < 550)
		return 8 + rng_below(rng, 57);
	if (r < 800)
		return 65 + rng_below(rng, 192);
	if (r < 920)
		return 257 + rng_below(rng, 1792);
	if (r < 980)
		return 2049 + rng_below(rng, 30 * 1024);
	if (r < 998)
		return 32769 + rng_below(rng, 96 * 1024);
	return rng_log(rng, 128 * 1024 + 1, 8 << 20);
}

/* An address for size from the thread's arena: its free list, else bump (mmap for big ones). */
static uint64_t host_place(struct host_gen *g, unsigned arena, uint64_t size)
{
	struct harena *a = &g->arena[arena];
	uint64_t rounded, p;
	unsigned c = size_class(size, &rounded);

	if (c == HOST_CLASSES - 1) {
		a->mmap_top -= rounded + 4096;
		return a->mmap_top + 16;
	}
	if (a->free_list[c].n)
		return a->free_list[c].v[--a->free_list[c].n];
	p = a->bump + 16;
	a->bump += rounded + 16; /* chunk header */
	return p;
}

static void host_unplace(struct host_gen *g, const struct hblock *b)
{
	struct harena *a = &g->arena[b->arena];
	uint64_t rounded;
	unsigned c = size_class(b->size, &rounded);

	if (c == HOST_CLASSES - 1) {
		if (b->ptr - 16 == a->mmap_top)
			a->mmap_top += rounded + 4096;
		return;
	}
	if (hvec_push(&a->free_list[c], b->ptr))
		g->failed = 1;
}

static void host_emit(struct host_gen *g, const struct hblock *b, int is_alloc, uint32_t stack)
{
	struct memscope_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.id = g->id++;
	g->ts_ns += rng_log(&g->rng, 50, 5000);
	ev.ts_ns = g->ts_ns;
	ev.pid = HOST_PID;
	ev.tid = g->th[g->cur].tid;
	ev.device = MEMSCOPE_DEVICE_HOST;
	ev.ptr = b->ptr;
	ev.alloc_id = b->aid;
	ev.size = (int64_t)b->size;
	ev.kind = is_alloc ? MEMSCOPE_KIND_MALLOC : MEMSCOPE_KIND_FREE;
	ev.subtype = ev.pool = MEMSCOPE_SUB_HOST;
	ev.func = is_alloc ? MEMSCOPE_FUNC_MALLOC : MEMSCOPE_FUNC_FREE;
	ev.flags = MEMSCOPE_EV_PTR | MEMSCOPE_EV_SIZE | MEMSCOPE_EV_ALLOC_ID;
	ev.name = MEMSCOPE_STR_NA;
	ev.stack_c = stack;
	if (memscope_capture_writer_write(g->w, &ev, &g->err))
		g->failed = 1;
}

static void host_alloc(struct host_gen *g)
{
	struct hthread *t = &g->th[g->cur];
	struct hblock b;
	double r = rng_unit(&g->rng);

	b.aid = ++g->serial;
	b.size = host_size(&g->rng);
	b.arena = g->cur;
	b.ptr = host_place(g, b.arena, b.size);
	/* a few hot call sites make most of the calls */
	host_emit(g, &b, 1, g->stacks[(unsigned)(r * r * r * HOST_STACKS)]);
	if (rng_below(&g->rng, 100) < 4 && g->n_long < HOST_LONG_MAX) {
		g->longl[g->n_long++] = b;
		return;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct hblock *nl = realloc(t->live, cap * sizeof(*nl));

		if (!nl) {
			g->failed = 1;
			return;
		}
		t->live = nl;
		t->cap = cap;
	}
	t->live[t->n++] = b;
}

static void host_free(struct host_gen *g, struct hblock *b)
{
	host_unplace(g, b);
	host_emit(g, b, 0, 0);
}

