/* Reader benchmark: read speed, peak RSS and capture size on generated dump CSV and host data. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
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
#include "bench_util.h"
#include "memscope/memscope.h"

/*
 * Every measurement runs in a forked child that reports its figures through a pipe; the parent
 * gets the child's peak RSS from wait4(). The parent itself never allocates much, so a child
 * starts from a small RSS and its peak is what the measured code used (plus the floor printed
 * as rss_floor).
 */

enum exit_status { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_IO = 4 };

enum mode {
	MODE_CSV = 1u << 0,	/* csv_read of the generated files */
	MODE_LIBCSV = 1u << 1,	/* libcsv alone and read(2) alone: same files */
	MODE_CAPTURE = 1u << 2, /* convert CSV to capture, then capture_read */
	MODE_HOST = 1u << 3,	/* host malloc/free stream as compact capture records */
	MODE_SCALE = 1u << 4,	/* csv_read peak RSS on 2x, 4x bigger files */
	MODE_GEN = 1u << 5,	/* only generate the files (kept) */
	MODE_DEFAULT = MODE_CSV | MODE_LIBCSV | MODE_CAPTURE | MODE_HOST | MODE_SCALE,
};

static const struct {
	const char *name;
	unsigned bit;
	const char *help;
} modes[] = {
	{ "csv", MODE_CSV, "read the dump CSVs (without and with call stacks)" },
	{ "libcsv", MODE_LIBCSV, "libcsv alone and read(2) alone (same files)" },
	{ "capture", MODE_CAPTURE, "convert the CSVs to capture files and read those" },
	{ "host", MODE_HOST, "host malloc/free stream: capture bytes/event and read speed" },
	{ "scale", MODE_SCALE, "peak RSS of csv_read on files --scale times bigger" },
	{ "gen", MODE_GEN, "only generate the files into --dir and keep them" },
	{ "all", MODE_DEFAULT, "csv libcsv capture host scale (the default)" },
};

/* options, with every default next to its flag */
struct bench_opts {
	uint64_t rows;	      /* -n: data rows of the generated dump CSV (500K) */
	unsigned stack_pct;   /* -s: percent of rows with call stacks in the stacked CSV (10) */
	unsigned repeat;      /* -r: runs per measurement (3) */
	uint64_t host_events; /* -e: events of the host stream (4M) */
	unsigned threads;     /* -t: threads of the host stream, 1..4 (4) */
	uint64_t switch_1in;  /* -w: a thread switch before an event, 1 in N (256) */
	uint64_t seed;	      /* -S: PRNG seed (1) */
	const char *dir;      /* -d: directory for the files, kept (NULL: temporary, removed) */
	const char *input;    /* -i: measure this CSV or capture file, generate nothing (NULL) */
	const char *scale;    /* -x: multiples of -n for the scale mode ("2,4") */
	int keep;	      /* -k: keep the temporary directory (0) */
	unsigned modes;	      /* positional MODEs (all) */
};

enum { OPT_HELP = 'h' };

static const struct option long_opts[] = {
	{ "rows", required_argument, NULL, 'n' },
	{ "stack-pct", required_argument, NULL, 's' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "host-events", required_argument, NULL, 'e' },
	{ "threads", required_argument, NULL, 't' },
	{ "switch", required_argument, NULL, 'w' },
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
	"-w, --switch N       host stream: a thread switch before an event, 1 in N (default 256;\n"
	"                     1: the threads alternate event by event, as a time-merged recording)",
	"-S, --seed N         PRNG seed (default 1)",
	"-d, --dir DIR        write the files into DIR and keep them (default: a temporary one)",
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

/* About log-uniform in [lo, hi): a uniform octave, then uniform inside it (no libm). */
static uint64_t rng_log(uint64_t *s, uint64_t lo, uint64_t hi)
{
	unsigned octaves = 0, k;
	uint64_t a, b;

	while ((lo << (octaves + 1)) <= hi)
		octaves++;
	k = (unsigned)rng_below(s, octaves + 1);
	a = lo << k;
	b = k == octaves ? hi : a << 1;
	return a + rng_below(s, b > a ? b - a : 1);
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

#define GEN_PID ((uint64_t)3101864)
#define GEN_TID_MAIN ((uint64_t)3101864)
#define GEN_TID_BWD ((uint64_t)3104193)
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
	int weights;	    /* its inputs include weights */
	const char *kernel; /* NULL: no kernel launch */
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
	struct blk **live; /* PTA activations */
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
		"/home/user/train.py",
		"/usr/lib/python3.9/site-packages/torch/nn/modules/module.py",
		"/usr/lib/python3.9/site-packages/torch/nn/modules/linear.py",
		"/usr/lib/python3.9/site-packages/torch/autograd/__init__.py",
		"/usr/lib/python3.9/site-packages/torch/optim/adam.py",
		"/usr/lib/python3.9/site-packages/torch_npu/utils/_module.py",
	};
	static const char *const py_funcs[] = {
		"<module>",
		"main",
		"train_one_epoch",
		"_call_impl",
		"forward",
		"backward",
		"step",
		"_single_tensor_adam",
		"_wrapped_call_impl",
		"_multi_tensor_adam",
	};
	static const char *const c_libs[] = {
		"libtorch_npu.so",
		"libtorch_cpu.so",
		"libc10.so",
		"libascendcl.so",
		"libruntime.so",
		"libpython3.9.so.1.0",
	};
	static const char *const c_funcs[] = {
		"_ZN2at6native5emptyEv",
		"_ZN3c1010TensorImplC1Ev",
		"aclrtMalloc",
		"_ZN10at_npu6native17NPUCachingAllocator6mallocEPPvim",
		"_PyEval_EvalFrameDefault",
		"_ZN5torch8autograd6Engine17evaluate_functionE",
		"PyObject_Call",
		"rtMalloc",
	};
	struct sbuf b = { 0 };
	unsigned depth =
		python ? 6 + (unsigned)rng_below(rng, 16) : 8 + (unsigned)rng_below(rng, 20);
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
	sb_printf(l, "%" PRIu64 ",%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,", id, event,
		type, name, ts, GEN_PID, tid, device);
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
	int64_t seg =
		size > GEN_SEGMENT ? (size + (2 << 20) - 1) / (2 << 20) * (2 << 20) : GEN_SEGMENT;
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
		",page_type:huge,alloc_type:alloc}",
		b->aid, addr, seg);
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
	b->shape = r < 30   ? (unsigned)rng_below(&g->rng, 4)
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
		",used:%" PRId64 "}",
		b->aid, b->addr, b->size, g->total, g->used);
	put_row(g, &b->rows, next_id(g), "MALLOC", "PTA", "N/A", next_ts(g), tid, "0", b->addr,
		g->attr.p, 1);
	return b;
}

static void pta_access(struct csv_gen *g, struct blk *b, const char *op, int write, uint64_t tid)
{
	g->attr.len = 0;
	sb_printf(&g->attr,
		"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRId64
		",type:PTA,dtype:%s,shape:%s}",
		b->aid, b->addr, b->size, dtypes[b->dtype].name, shapes[b->shape].text);
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
			",shadow:true}",
			b->aid, b->addr, b->size);
	} else {
		g->used -= b->size;
		g->attr.len = 0;
		sb_printf(&g->attr,
			"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRId64
			",total:%" PRId64 ",used:%" PRId64 "}",
			b->aid, b->addr, b->size, g->total, g->used);
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
			in = g->live[g->n_live - 1 -
				     rng_below(&g->rng, g->n_live < 6 ? g->n_live : 6)];
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
		sb_printf(&g->attr, "{streamId:2,taskId:%" PRIu64 "}", g->n_ops % 65536);
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

			memmove(g->live + i, g->live + i + 1,
				(g->n_live - i - 1) * sizeof(*g->live));
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
	put_row(g, NULL, next_id(g), "SYSTEM", "STEP", name, next_ts(g), GEN_TID_MAIN, "0", 0, NULL,
		0);
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
static int gen_csv(const char *path, uint64_t rows, unsigned stack_pct, uint64_t seed, char *msg,
	size_t msg_len)
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
	      "Call Stack(Python),Call Stack(C)\n",
		g.out);
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
	put_row(&g, NULL, 0, "SYSTEM", "ACL_INIT", "N/A", g.t_start - 900000, GEN_TID_MAIN, "N/A",
		0, NULL, 0);
	put_row(&g, NULL, 1, "SYSTEM", "START_TRACE", "N/A", g.t_start - 500000, GEN_TID_MAIN,
		"N/A", 0, "{free:62277025792,total:65452113920}", 0);
	put_row(&g, NULL, next_id(&g), "SYSTEM", "STOP_TRACE", "N/A", next_ts(&g), GEN_TID_MAIN,
		"N/A", 0, NULL, 0);
	put_row(&g, NULL, next_id(&g), "SYSTEM", "ACL_FINI", "N/A", next_ts(&g), GEN_TID_MAIN,
		"N/A", 0, NULL, 0);
	if (g.failed)
		snprintf(msg, msg_len, "%s: out of memory or write error", path);
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
	uint64_t switch_1in;
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

/* Write n host events into the capture writer; 0 or -1 (g->err or g->failed say why). */
static int host_run(struct host_gen *g, uint64_t n)
{
	static const char *const funcs[] = {
		"main",
		"parse_config",
		"json_parse_value",
		"strdup",
		"std::string::_M_create",
		"vector_grow",
		"hash_insert",
		"node_new",
		"buffer_append",
		"read_records",
		"load_dataset",
		"tokenize",
		"ms__arena_alloc",
		"list_push",
		"worker_loop",
	};
	uint32_t frames[16];
	unsigned i, k;

	for (i = 0; i < HOST_STACKS; i++) {
		unsigned depth = 4 + (unsigned)rng_below(&g->rng, 12);

		for (k = 0; k < depth; k++) {
			char s[96];
			int len = snprintf(s, sizeof(s), "app(%s+0x%x) [0x55d0c0%06x]",
				funcs[rng_below(&g->rng, 15)], (unsigned)rng_below(&g->rng, 0x300),
				(unsigned)rng_below(&g->rng, 0x1000000));

			if (memscope_strtab_intern(g->st, s, (size_t)len, &frames[k]))
				return -1;
		}
		if (memscope_strtab_intern_stack(g->st, frames, depth, &g->stacks[i]))
			return -1;
	}
	while (g->id < n && !g->failed) {
		struct hthread *t;

		if (g->n_threads > 1 && rng_below(&g->rng, g->switch_1in) == 0)
			g->cur = (g->cur + 1 + (unsigned)rng_below(&g->rng, g->n_threads - 1)) %
				 g->n_threads;
		t = &g->th[g->cur];
		if (g->n_long && (rng_below(&g->rng, 1000) < 18 || g->n_long == HOST_LONG_MAX)) {
			/* a long-lived block dies, often on another thread than its own */
			size_t at = rng_below(&g->rng, g->n_long);
			struct hblock b = g->longl[at];

			g->longl[at] = g->longl[--g->n_long];
			host_free(g, &b);
		} else if (t->n && rng_unit(&g->rng) < (double)t->n / ((double)t->n + 12.0)) {
			/* LIFO-ish: mostly the newest block, sometimes one of the few before it */
			size_t few = t->n < 8 ? t->n : 8;
			size_t back = rng_below(&g->rng, 100) < 85 ? 0 : rng_below(&g->rng, few);
			struct hblock b = t->live[t->n - 1 - back];

			memmove(&t->live[t->n - 1 - back], &t->live[t->n - back],
				back * sizeof(*t->live));
			t->n--;
			host_free(g, &b);
		} else {
			host_alloc(g);
		}
	}
	return g->failed ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* measurements in forked children */

static const struct {
	unsigned type;
	const char *name;
} rec_types[] = {
	{ CAP_END, "end" },
	{ CAP_STRING, "string" },
	{ CAP_STACK, "stack" },
	{ CAP_META, "meta" },
	{ CAP_EVENT, "event" },
	{ CAP_CONTEXT, "context" },
	{ CAP_HOST_ALLOC, "host_alloc" },
	{ CAP_HOST_FREE, "host_free" },
	{ CAP_HOST_ALLOC_FN, "host_alloc_fn" },
	{ CAP_HOST_FREE_FN, "host_free_fn" },
	{ CAP_THREAD, "thread" },
	{ CAP_HOST_T, "host_t" },
	{ 0, "other" },
};

#define N_REC (sizeof(rec_types) / sizeof(rec_types[0]))

/* What a child reports through its pipe. */
struct result {
	int rc;		/* 0, or a MEMSCOPE_E_* / -1 with msg */
	double wall_s;	/* the measured part only */
	uint64_t n;	/* rows or events */
	uint64_t bytes; /* input bytes (reads) or output bytes (writes) */
	uint64_t aux;	/* strtab footprint (reads), input bytes (convert) */
	uint64_t aux2;	/* strings interned (reads) */
	uint64_t rec_n[N_REC], rec_bytes[N_REC];
	char msg[600];
};

struct run {
	struct result r;
	double cpu_s;	/* user + system of the whole child */
	double rss_mib; /* peak RSS of the whole child */
};

typedef void (*child_fn)(const void *arg, struct result *r);

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

static size_t read_all(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/* Run fn(arg) in a child; its result, CPU time and peak RSS into *out. 0 or -1 (out->r.msg). */
static int run_child(child_fn fn, const void *arg, struct run *out)
{
	struct rusage ru;
	int fds[2], status = 0;
	pid_t pid;
	size_t got;

	memset(out, 0, sizeof(*out));
	fflush(stdout);
	fflush(stderr);
	if (pipe(fds)) {
		snprintf(out->r.msg, sizeof(out->r.msg), "pipe: %s", strerror(errno));
		return out->r.rc = -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(out->r.msg, sizeof(out->r.msg), "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return out->r.rc = -1;
	}
	if (pid == 0) {
		struct result r;

		close(fds[0]);
		memset(&r, 0, sizeof(r));
		fn(arg, &r);
		_exit(write_all(fds[1], &r, sizeof(r)) ? 1 : 0);
	}
	close(fds[1]);
	got = read_all(fds[0], &out->r, sizeof(out->r));
	close(fds[0]);
	memset(&ru, 0, sizeof(ru));
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	out->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	out->rss_mib = (double)ru.ru_maxrss / 1024.0;
	if (got != sizeof(out->r) || !WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(out->r.msg, sizeof(out->r.msg), "child failed (status 0x%x)", status);
		return out->r.rc = -1;
	}
	return out->r.rc ? -1 : 0;
}

static void set_error(struct result *r, const struct memscope_error *err, int rc)
{
	r->rc = rc ? rc : -1;
	memscope_error_format(err, r->msg, sizeof(r->msg));
}

static int count_event(void *ctx, const struct memscope_event *ev)
{
	uint64_t *n = ctx;

	(void)ev;
	(*n)++;
	return 0;
}

/* Read a file with the library (any format) and a counting callback. */
static void child_read(const void *arg, struct result *r)
{
	const char *path = arg;
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_error err;
	double t0;
	int rc;

	memscope_error_clear(&err);
	if (!st) {
		r->rc = MEMSCOPE_E_NOMEM;
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return;
	}
	t0 = bench_now_s();
	rc = memscope_source_open(&src, path, st, NULL, &err);
	if (!rc)
		rc = memscope_source_read(src, count_event, &r->n, &err);
	r->wall_s = bench_now_s() - t0;
	if (rc)
		set_error(r, &err, rc);
	if (src)
		r->bytes = memscope_source_stats(src)->bytes;
	r->aux = memscope_strtab_footprint(st);
	r->aux2 = memscope_strtab_count(st);
	memscope_source_close(src);
	memscope_strtab_free(st);
}

struct libcsv_arg {
	const char *path;
	int reader_opts; /* the options dump_csv.c sets (no trimming: a space function) */
};

struct libcsv_count {
	uint64_t fields, rows;
};

static void lc_field(void *s, size_t len, void *data)
{
	struct libcsv_count *c = data;

	(void)s;
	(void)len;
	c->fields++;
}

static void lc_row(int ch, void *data)
{
	struct libcsv_count *c = data;

	(void)ch;
	if (c->fields) {
		c->rows++;
		c->fields = 0;
	}
}

static int lc_no_space(unsigned char c)
{
	(void)c;
	return 0;
}

#define BENCH_CHUNK (256 * 1024) /* the readers' READ_CHUNK */

/* libcsv alone over the file: csv_parse with callbacks that only count. */
static void child_libcsv(const void *arg, struct result *r)
{
	const struct libcsv_arg *a = arg;
	struct csv_parser p;
	struct libcsv_count c = { 0, 0 };
	unsigned char *buf = malloc(BENCH_CHUNK);
	int fd = open(a->path, O_RDONLY);
	ssize_t n;
	double t0;

	if (!buf || fd < 0 ||
		csv_init(&p, a->reader_opts ? CSV_REPALL_NL | CSV_EMPTY_IS_NULL : 0)) {
		r->rc = -1;
		snprintf(r->msg, sizeof(r->msg), "%s: cannot set up: %s", a->path, strerror(errno));
		goto out;
	}
	if (a->reader_opts) {
		csv_set_space_func(&p, lc_no_space);
		csv_set_blk_size(&p, 64 * 1024);
	}
	t0 = bench_now_s();
	while ((n = read(fd, buf, BENCH_CHUNK)) > 0) {
		r->bytes += (uint64_t)n;
		if (csv_parse(&p, buf, (size_t)n, lc_field, lc_row, &c) != (size_t)n) {
			r->rc = -1;
			snprintf(r->msg, sizeof(r->msg), "csv_parse: %s",
				csv_strerror(csv_error(&p)));
			break;
		}
	}
	csv_fini(&p, lc_field, lc_row, &c);
	r->wall_s = bench_now_s() - t0;
	r->n = c.rows ? c.rows - 1 : 0; /* minus the header */
	csv_free(&p);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* read(2) alone, counting newlines: the I/O and memory-bandwidth ceiling. */
static void child_read_only(const void *arg, struct result *r)
{
	const char *path = arg;
	unsigned char *buf = malloc(BENCH_CHUNK);
	int fd = open(path, O_RDONLY);
	ssize_t n;
	double t0;

	if (!buf || fd < 0) {
		r->rc = -1;
		snprintf(r->msg, sizeof(r->msg), "%s: %s", path, strerror(errno));
		goto out;
	}
	t0 = bench_now_s();
	while ((n = read(fd, buf, BENCH_CHUNK)) > 0) {
		const unsigned char *q = buf, *end = buf + n;

		r->bytes += (uint64_t)n;
		while ((q = memchr(q, '\n', (size_t)(end - q))) != NULL) {
			r->n++;
			q++;
		}
	}
	r->wall_s = bench_now_s() - t0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

struct convert_arg {
	const char *in, *out;
};

struct convert_ctx {
	struct memscope_capture_writer *w;
	struct memscope_error werr;
};

static int convert_event(void *ctx, const struct memscope_event *ev)
{
	struct convert_ctx *c = ctx;

	return memscope_capture_writer_write(c->w, ev, &c->werr);
}

/* Any input to a capture file with the library's writer. */
static void child_convert(const void *arg, struct result *r)
{
	const struct convert_arg *a = arg;
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_error err;
	struct convert_ctx c;
	FILE *out = fopen(a->out, "w");
	double t0 = bench_now_s();
	int rc;

	memscope_error_clear(&err);
	memscope_error_clear(&c.werr);
	c.w = st && out ? memscope_capture_writer_new(out, st) : NULL;
	if (!c.w) {
		r->rc = -1;
		snprintf(r->msg, sizeof(r->msg), "%s: cannot set up: %s", a->out, strerror(errno));
		goto out;
	}
	rc = memscope_source_open(&src, a->in, st, NULL, &err);
	if (!rc)
		rc = memscope_source_read(src, convert_event, &c, &err);
	if (!rc)
		rc = memscope_capture_writer_finish(c.w, &err);
	if (rc)
		set_error(r, c.werr.code ? &c.werr : &err, rc);
	r->wall_s = bench_now_s() - t0;
	r->n = src ? memscope_source_stats(src)->n_events : 0;
	r->aux = src ? memscope_source_stats(src)->bytes : 0;
	r->bytes = memscope_capture_writer_bytes(c.w);
out:
	memscope_capture_writer_free(c.w);
	memscope_source_close(src);
	if (out && fclose(out) && !r->rc) {
		r->rc = -1;
		snprintf(r->msg, sizeof(r->msg), "%s: %s", a->out, strerror(errno));
	}
	memscope_strtab_free(st);
}

/* Count a capture file's records and bytes by record type. */
static void child_census(const void *arg, struct result *r)
{
	const char *path = arg;
	FILE *f = fopen(path, "rb");
	unsigned char *p = NULL;
	size_t n = 0, cap = 0, at, i;

	while (f) {
		unsigned char *np;
		size_t got;

		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			np = realloc(p, cap);
			if (!np)
				break;
			p = np;
		}
		got = fread(p + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (!f || ferror(f) || n < CAP_HEADER_LEN) {
		r->rc = -1;
		snprintf(r->msg, sizeof(r->msg), "%s: cannot read", path);
		goto out;
	}
	at = p[12] | p[13] << 8 | (size_t)p[14] << 16 | (size_t)p[15] << 24;
	while (at < n) {
		uint64_t len = 0;
		unsigned shift = 0;
		size_t h = at + 1;

		while (h < n && shift < 64) {
			len |= (uint64_t)(p[h] & 0x7f) << shift;
			shift += 7;
			if (!(p[h++] & 0x80))
				break;
		}
		for (i = 0; i < N_REC - 1 && rec_types[i].type != p[at]; i++)
			;
		r->rec_n[i]++;
		r->rec_bytes[i] += h - at + len;
		r->n++;
		if (len > n - h)
			break;
		at = h + (size_t)len;
	}
	r->bytes = n;
out:
	if (f)
		fclose(f);
	free(p);
}

struct gen_csv_arg {
	const char *path;
	uint64_t rows, seed;
	unsigned stack_pct;
};

static void child_gen_csv(const void *arg, struct result *r)
{
	const struct gen_csv_arg *a = arg;
	double t0 = bench_now_s();
	struct stat sb;

	if (gen_csv(a->path, a->rows, a->stack_pct, a->seed, r->msg, sizeof(r->msg))) {
		r->rc = -1;
		return;
	}
	r->wall_s = bench_now_s() - t0;
	if (stat(a->path, &sb) == 0)
		r->bytes = (uint64_t)sb.st_size;
}

struct gen_host_arg {
	const char *path;
	uint64_t events, seed, switch_1in;
	unsigned threads;
};

static void child_gen_host(const void *arg, struct result *r)
{
	static const uint64_t tid_off[4] = { 0, 7, 8, 9 };
	const struct gen_host_arg *a = arg;
	struct host_gen g;
	FILE *out = fopen(a->path, "w");
	double t0 = bench_now_s();
	unsigned i;

	memset(&g, 0, sizeof(g));
	memscope_error_clear(&g.err);
	g.rng = a->seed ^ 0x686f7374ull;
	g.ts_ns = 1764753083997498270ull;
	g.n_threads = a->threads;
	g.switch_1in = a->switch_1in;
	for (i = 0; i < 4; i++) {
		g.th[i].tid = HOST_PID + tid_off[i];
		/* main arena on the brk heap, the others in mmap'ed heaps of their own */
		g.arena[i].bump = i ? 0x00007f39f0000000ull + (uint64_t)(i - 1) * 0x08000000ull
				    : 0x000055d0c0a3e000ull;
		g.arena[i].mmap_top = 0x00007f3a2c000000ull - (uint64_t)i * 0x0400000000ull;
	}
	g.st = memscope_strtab_new();
	g.longl = malloc(HOST_LONG_MAX * sizeof(*g.longl));
	g.w = g.st && out ? memscope_capture_writer_new(out, g.st) : NULL;
	if (!g.w || !g.longl) {
		r->rc = -1;
		snprintf(r->msg, sizeof(r->msg), "%s: cannot set up: %s", a->path, strerror(errno));
		goto out;
	}
	if (host_run(&g, a->events) || memscope_capture_writer_finish(g.w, &g.err)) {
		if (g.err.code)
			set_error(r, &g.err, g.err.code);
		else
			snprintf(r->msg, sizeof(r->msg), "host stream: out of memory");
		r->rc = -1;
	}
	r->wall_s = bench_now_s() - t0;
	r->n = g.id;
	r->bytes = memscope_capture_writer_bytes(g.w);
out:
	memscope_capture_writer_free(g.w);
	if (out && fclose(out) && !r->rc) {
		r->rc = -1;
		snprintf(r->msg, sizeof(r->msg), "%s: %s", a->path, strerror(errno));
	}
	memscope_strtab_free(g.st);
	for (i = 0; i < 4; i++) {
		unsigned c;

		free(g.th[i].live);
		for (c = 0; c < HOST_CLASSES; c++)
			free(g.arena[i].free_list[c].v);
	}
	free(g.longl);
}

static void child_idle(const void *arg, struct result *r)
{
	(void)arg;
	(void)r;
}

/* ------------------------------------------------------------------------------------------ */
/* the parent: runs the children, prints one line per figure */

#define MAX_REPEAT 64
#define MAX_FILES 32

struct measured {
	double best, median, cpu, rss_mib;
	struct result r; /* of the best run */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* repeat runs of fn; best and median wall time, least CPU, highest peak RSS. 0 or -1 (printed). */
static int measure(
	const char *label, child_fn fn, const void *arg, unsigned repeat, struct measured *m)
{
	double wall[MAX_REPEAT];
	struct run run;
	unsigned i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < repeat; i++) {
		if (run_child(fn, arg, &run)) {
			fprintf(stderr, "bench_read: %s: %s\n", label, run.r.msg);
			return -1;
		}
		wall[i] = run.r.wall_s;
		if (i == 0 || run.r.wall_s < m->r.wall_s)
			m->r = run.r;
		if (i == 0 || run.cpu_s < m->cpu)
			m->cpu = run.cpu_s;
		if (run.rss_mib > m->rss_mib)
			m->rss_mib = run.rss_mib;
	}
	qsort(wall, repeat, sizeof(wall[0]), cmp_double);
	m->best = wall[0];
	m->median = repeat % 2 ? wall[repeat / 2] : (wall[repeat / 2 - 1] + wall[repeat / 2]) / 2;
	return 0;
}

static double mb(uint64_t bytes)
{
	return (double)bytes / 1e6;
}

struct bench {
	struct bench_opts o;
	char dir[4096];
	char files[MAX_FILES][4200];
	unsigned n_files;
	int own_dir;
	double rss_floor;
	/* for the goals */
	double csv_mbs[2], csv_rss_max, host_bpe;
	double cap_meps[2]; /* host stream, then a converted dump (or --input) */
	char csv_label[2][32], cap_label[2][32];
	char csv_rss_list[256];
	int failed;
};

static const char *path_in(struct bench *b, const char *name)
{
	char *p;

	if (b->n_files == MAX_FILES)
		return NULL;
	p = b->files[b->n_files++];
	snprintf(p, sizeof(b->files[0]), "%s/%s", b->dir, name);
	return p;
}

static void print_csv_read(struct bench *b, const char *label, const struct measured *m)
{
	printf("csv_read[%s]: %" PRIu64 " rows, %.1f MB, best %.3f s = %.1f MB/s, %.2f M rows/s, "
	       "median %.3f s, cpu %.3f s, peak RSS %.1f MiB (strtab %.2f MiB, %" PRIu64
	       " strings)\n",
		label, m->r.n, mb(m->r.bytes), m->best, mb(m->r.bytes) / m->best,
		(double)m->r.n / m->best / 1e6, m->median, m->cpu, m->rss_mib,
		(double)m->r.aux / 1048576.0, m->r.aux2);
	if (m->rss_mib > b->csv_rss_max)
		b->csv_rss_max = m->rss_mib;
}

static void print_census(const char *label, const struct result *r, uint64_t n_events)
{
	unsigned i;

	printf("capture_records[%s]:", label);
	for (i = 0; i < N_REC; i++)
		if (r->rec_n[i])
			printf(" %s %" PRIu64 " (%.1f B avg, %.1f%%)", rec_types[i].name,
				r->rec_n[i], (double)r->rec_bytes[i] / (double)r->rec_n[i],
				100.0 * (double)r->rec_bytes[i] / (double)r->bytes);
	printf(" = %.2f B/event\n", (double)r->bytes / (double)(n_events ? n_events : 1));
}

/* capture_read of path; returns M events/s or 0. */
static double bench_capture_read(struct bench *b, const char *label, const char *path)
{
	struct measured m;
	char what[64];

	snprintf(what, sizeof(what), "capture_read[%s]", label);
	if (measure(what, child_read, path, b->o.repeat, &m)) {
		b->failed = 1;
		return 0;
	}
	printf("capture_read[%s]: %" PRIu64 " events, %.1f MB, best %.3f s = %.1f M events/s "
	       "(%.1f ns/event, %.0f MB/s), median %.3f s, cpu %.3f s, peak RSS %.1f MiB\n",
		label, m.r.n, mb(m.r.bytes), m.best, (double)m.r.n / m.best / 1e6,
		m.best * 1e9 / (double)(m.r.n ? m.r.n : 1), mb(m.r.bytes) / m.best, m.median, m.cpu,
		m.rss_mib);
	return (double)m.r.n / m.best / 1e6;
}

static void census(struct bench *b, const char *label, const char *path, uint64_t n_events)
{
	struct run run;

	if (run_child(child_census, path, &run)) {
		fprintf(stderr, "bench_read: census %s: %s\n", path, run.r.msg);
		b->failed = 1;
		return;
	}
	print_census(label, &run.r, n_events);
}

/* Everything about one dump CSV: read, libcsv alone, read(2) alone, capture. */
static void bench_csv_file(struct bench *b, const char *label, const char *csv, int slot)
{
	struct measured m;
	char what[96];

	if (b->o.modes & MODE_CSV) {
		snprintf(what, sizeof(what), "csv_read[%s]", label);
		if (measure(what, child_read, csv, b->o.repeat, &m) == 0) {
			print_csv_read(b, label, &m);
			if (slot >= 0) {
				b->csv_mbs[slot] = mb(m.r.bytes) / m.best;
				snprintf(b->csv_label[slot], sizeof(b->csv_label[0]), "%s", label);
			}
			if (slot == 0)
				snprintf(b->csv_rss_list, sizeof(b->csv_rss_list), "1x %.1f",
					m.rss_mib);
		} else {
			b->failed = 1;
		}
	}
	if (b->o.modes & MODE_LIBCSV) {
		static const char *const names[2] = { "default opts", "reader opts" };
		int opts;

		for (opts = 1; opts >= 0; opts--) {
			struct libcsv_arg a = { csv, opts };

			snprintf(what, sizeof(what), "libcsv[%s, %s]", label, names[opts]);
			if (measure(what, child_libcsv, &a, b->o.repeat, &m)) {
				b->failed = 1;
				continue;
			}
			printf("libcsv[%s, %s]: %" PRIu64 " rows, %.1f MB, best %.3f s = "
			       "%.1f MB/s, %.2f M rows/s, median %.3f s, peak RSS %.1f MiB\n",
				label, names[opts], m.r.n, mb(m.r.bytes), m.best,
				mb(m.r.bytes) / m.best, (double)m.r.n / m.best / 1e6, m.median,
				m.rss_mib);
		}
		snprintf(what, sizeof(what), "read_only[%s]", label);
		if (measure(what, child_read_only, csv, b->o.repeat, &m) == 0)
			printf("read_only[%s]: %.1f MB, %" PRIu64 " lines, best %.3f s = %.0f MB/s "
			       "(read(2) + memchr)\n",
				label, mb(m.r.bytes), m.r.n, m.best, mb(m.r.bytes) / m.best);
		else
			b->failed = 1;
	}
	if (b->o.modes & MODE_CAPTURE) {
		char name[64];
		const char *cap;
		struct convert_arg a;
		struct run run;
		double meps;

		snprintf(name, sizeof(name), "dump_%s.mscap", slot == 1 ? "stacks" : "plain");
		if (!(cap = path_in(b, name)))
			return;
		a.in = csv;
		a.out = cap;
		if (run_child(child_convert, &a, &run)) {
			fprintf(stderr, "bench_read: convert %s: %s\n", csv, run.r.msg);
			b->failed = 1;
			return;
		}
		printf("convert[%s]: %" PRIu64 " events, %.1f MB CSV -> %.1f MB capture = "
		       "%.2f B/event (%.1fx smaller), %.3f s = %.2f M events/s, "
		       "peak RSS %.1f MiB\n",
			label, run.r.n, mb(run.r.aux), mb(run.r.bytes),
			(double)run.r.bytes / (double)(run.r.n ? run.r.n : 1),
			(double)run.r.aux / (double)(run.r.bytes ? run.r.bytes : 1), run.r.wall_s,
			(double)run.r.n / run.r.wall_s / 1e6, run.rss_mib);
		census(b, label, cap, run.r.n);
		meps = bench_capture_read(b, label, cap);
		if (slot == 0) {
			b->cap_meps[1] = meps;
			snprintf(b->cap_label[1], sizeof(b->cap_label[1]), "dump %s", label);
		}
	}
}

static int gen_csv_file(
	struct bench *b, const char *path, uint64_t rows, unsigned pct, const char *label)
{
	struct gen_csv_arg a = { path, rows, b->o.seed, pct };
	struct run run;

	if (run_child(child_gen_csv, &a, &run)) {
		fprintf(stderr, "bench_read: generate %s: %s\n", path, run.r.msg);
		b->failed = 1;
		return -1;
	}
	printf("gen_csv[%s]: >= %" PRIu64 " rows, %.1f MB (%.0f B/row) in %.2f s -> %s\n", label,
		rows, mb(run.r.bytes), (double)run.r.bytes / (double)rows, run.r.wall_s, path);
	return 0;
}

static void bench_host(struct bench *b)
{
	struct gen_host_arg a;
	struct run run;
	const char *path = path_in(b, "host.mscap");

	if (!path)
		return;
	a.path = path;
	a.events = b->o.host_events;
	a.seed = b->o.seed;
	a.threads = b->o.threads;
	a.switch_1in = b->o.switch_1in;
	if (run_child(child_gen_host, &a, &run)) {
		fprintf(stderr, "bench_read: host stream: %s\n", run.r.msg);
		b->failed = 1;
		return;
	}
	b->host_bpe = (double)run.r.bytes / (double)(run.r.n ? run.r.n : 1);
	printf("host_write: %" PRIu64 " events, %u threads, %.1f MB capture = %.2f B/event "
	       "(heaptrack raw text 17.8 B/event), %.3f s incl. heap model = %.2f M events/s, "
	       "peak RSS %.1f MiB\n",
		run.r.n, b->o.threads, mb(run.r.bytes), b->host_bpe, run.r.wall_s,
		(double)run.r.n / run.r.wall_s / 1e6, run.rss_mib);
	census(b, "host", path, run.r.n);
	if (!(b->o.modes & MODE_GEN)) {
		b->cap_meps[0] = bench_capture_read(b, "host", path);
		snprintf(b->cap_label[0], sizeof(b->cap_label[0]), "host");
	}
}

static void bench_scale(struct bench *b)
{
	const char *s = b->o.scale;

	while (*s) {
		char *end, label[32], name[64];
		unsigned long k = strtoul(s, &end, 10);
		const char *path;
		struct measured m;

		if (end == s || k == 0 || k > 1000 || (*end && *end != ',')) {
			fprintf(stderr, "bench_read: --scale: bad list '%s'\n", b->o.scale);
			b->failed = 1;
			return;
		}
		s = *end ? end + 1 : end;
		snprintf(label, sizeof(label), "%lux", k);
		snprintf(name, sizeof(name), "dump_%lux.csv", k);
		if (!(path = path_in(b, name)) || gen_csv_file(b, path, b->o.rows * k, 0, label))
			return;
		if (measure(label, child_read, path, b->o.repeat, &m) == 0) {
			size_t l = strlen(b->csv_rss_list);

			print_csv_read(b, label, &m);
			snprintf(b->csv_rss_list + l, sizeof(b->csv_rss_list) - l, "%s%s %.1f",
				l ? ", " : "", label, m.rss_mib);
		} else {
			b->failed = 1;
		}
		if (!b->o.keep && !b->o.dir)
			unlink(path);
	}
}

static const char *verdict(int ok)
{
	return ok ? "ok" : "MISS";
}

/* The goals, for what was measured. */
static void goals(const struct bench *b)
{
	int i;

	if (!b->csv_mbs[0] && !b->csv_mbs[1] && !b->cap_meps[0] && !b->cap_meps[1] && !b->host_bpe)
		return;
	printf("goals (rss_floor %.1f MiB = a forked child that does nothing):\n", b->rss_floor);
	if (b->csv_mbs[0] || b->csv_mbs[1]) {
		printf("  csv_read >= 150 MB/s single-threaded:");
		for (i = 0; i < 2; i++)
			if (b->csv_mbs[i])
				printf("%s %s %.1f MB/s [%s]", i && b->csv_mbs[0] ? ";" : "",
					b->csv_label[i], b->csv_mbs[i],
					verdict(b->csv_mbs[i] >= 150));
		printf("\n  csv_read peak RSS < 64 MiB whatever the size: max %.1f MiB (%s) [%s]\n",
			b->csv_rss_max, b->csv_rss_list, verdict(b->csv_rss_max < 64));
	}
	if (b->cap_meps[0] || b->cap_meps[1]) {
		printf("  capture_read >= 50 M events/s:");
		for (i = 0; i < 2; i++)
			if (b->cap_meps[i])
				printf("%s %s %.1f M/s [%s]", i && b->cap_meps[0] ? ";" : "",
					b->cap_label[i], b->cap_meps[i],
					verdict(b->cap_meps[i] >= 50));
		printf("\n");
	}
	if (b->host_bpe)
		printf("  host capture <= 8 B/event: %.2f B/event [%s]\n", b->host_bpe,
			verdict(b->host_bpe <= 8));
}

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	uint64_t v;
	int c, i;

	while ((c = getopt_long(argc, argv, "n:s:r:e:t:w:S:d:i:x:kh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'n':
		case 's':
		case 'r':
		case 'e':
		case 't':
		case 'w':
		case 'S':
			if (parse_count(optarg, &v)) {
				fprintf(stderr, "bench_read: -%c: not a number: '%s'\n", c, optarg);
				return EXIT_USAGE;
			}
			if ((c == 'n' && v < 1000) || (c == 's' && v > 100) ||
				(c == 'r' && (v < 1 || v > MAX_REPEAT)) || (c == 'e' && v < 1) ||
				(c == 't' && (v < 1 || v > 4)) || (c == 'w' && v < 1)) {
				fprintf(stderr, "bench_read: -%c: out of range: '%s'\n", c, optarg);
				return EXIT_USAGE;
			}
			if (c == 'n')
				o->rows = v;
			else if (c == 's')
				o->stack_pct = (unsigned)v;
			else if (c == 'r')
				o->repeat = (unsigned)v;
			else if (c == 'e')
				o->host_events = v;
			else if (c == 't')
				o->threads = (unsigned)v;
			else if (c == 'w')
				o->switch_1in = v;
			else
				o->seed = v;
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'i':
			o->input = optarg;
			break;
		case 'x':
			o->scale = optarg;
			break;
		case 'k':
			o->keep = 1;
			break;
		case OPT_HELP:
			usage();
			return -1;
		default:
			fprintf(stderr, "bench_read: try 'bench_read --help'\n");
			return EXIT_USAGE;
		}
	}
	for (i = optind; i < argc; i++) {
		size_t k;

		for (k = 0; k < sizeof(modes) / sizeof(modes[0]); k++)
			if (strcmp(argv[i], modes[k].name) == 0)
				break;
		if (k == sizeof(modes) / sizeof(modes[0])) {
			fprintf(stderr, "bench_read: unknown mode '%s' (see --help)\n", argv[i]);
			return EXIT_USAGE;
		}
		o->modes |= modes[k].bit;
	}
	if (!o->modes)
		o->modes = MODE_DEFAULT;
	if (o->modes & MODE_GEN)
		o->keep = 1;
	return 0;
}

static int is_capture(const char *path)
{
	unsigned char m[8];
	int fd = open(path, O_RDONLY), yes;

	if (fd < 0)
		return -1;
	yes = read_all(fd, m, sizeof(m)) == sizeof(m) && memcmp(m, CAP_MAGIC, 8) == 0;
	close(fd);
	return yes;
}

int main(int argc, char **argv)
{
	static struct bench b;
	struct bench_opts *o = &b.o;
	struct run run;
	const char *plain, *stacked;
	char label[32];
	unsigned i;
	int rc;

	*o = (struct bench_opts){ .rows = 500000,
		.stack_pct = 10,
		.repeat = 3,
		.host_events = 4000000,
		.threads = 4,
		.switch_1in = 256,
		.seed = 1,
		.scale = "2,4" };
	rc = parse_args(argc, argv, o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (o->dir) {
		if (mkdir(o->dir, 0755) && errno != EEXIST) {
			fprintf(stderr, "bench_read: %s: %s\n", o->dir, strerror(errno));
			return EXIT_IO;
		}
		snprintf(b.dir, sizeof(b.dir), "%s", o->dir);
	} else if (!o->input || (o->modes & MODE_CAPTURE)) {
		const char *tmp = getenv("TMPDIR");

		snprintf(b.dir, sizeof(b.dir), "%s/bench_read.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(b.dir)) {
			fprintf(stderr, "bench_read: mkdtemp %s: %s\n", b.dir, strerror(errno));
			return EXIT_IO;
		}
		b.own_dir = 1;
	}
	printf("bench_read: libmemscope %s, rows %" PRIu64 ", stack-pct %u, repeat %u, host events "
	       "%" PRIu64 " on %u threads (switch 1 in %" PRIu64 "), seed %" PRIu64 ", dir %s\n",
		memscope_version(), o->rows, o->stack_pct, o->repeat, o->host_events, o->threads,
		o->switch_1in, o->seed, b.dir[0] ? b.dir : "-");
	if (run_child(child_idle, NULL, &run) == 0) {
		b.rss_floor = run.rss_mib;
		printf("rss_floor: a forked child that does nothing: peak RSS %.1f MiB\n",
			run.rss_mib);
	}
	if (o->input) {
		int cap = is_capture(o->input);

		if (cap < 0) {
			fprintf(stderr, "bench_read: %s: %s\n", o->input, strerror(errno));
			return EXIT_IO;
		}
		if (cap) {
			b.cap_meps[1] = bench_capture_read(&b, "input", o->input);
			snprintf(b.cap_label[1], sizeof(b.cap_label[1]), "input");
		} else {
			bench_csv_file(&b, "input", o->input, 0);
		}
		goto done;
	}
	plain = path_in(&b, "dump_plain.csv");
	stacked = path_in(&b, "dump_stacks.csv");
	snprintf(label, sizeof(label), "stacks %u%%", o->stack_pct);
	if (o->modes & (MODE_CSV | MODE_LIBCSV | MODE_CAPTURE | MODE_GEN)) {
		if (gen_csv_file(&b, plain, o->rows, 0, "plain") == 0 && !(o->modes & MODE_GEN))
			bench_csv_file(&b, "plain", plain, 0);
		if (o->stack_pct && gen_csv_file(&b, stacked, o->rows, o->stack_pct, label) == 0 &&
			!(o->modes & MODE_GEN))
			bench_csv_file(&b, label, stacked, 1);
	}
	if (o->modes & (MODE_HOST | MODE_GEN))
		bench_host(&b);
	if ((o->modes & MODE_SCALE) && !(o->modes & MODE_GEN))
		bench_scale(&b);
done:
	if (!(o->modes & MODE_GEN))
		goals(&b);
	if (b.own_dir && !o->keep) {
		for (i = 0; i < b.n_files; i++)
			unlink(b.files[i]);
		rmdir(b.dir);
	} else if (b.dir[0]) {
		printf("files kept in %s\n", b.dir);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "bench_read: write error on standard output\n");
		return EXIT_IO;
	}
	return b.failed ? EXIT_IO : EXIT_OK;
}
