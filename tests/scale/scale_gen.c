/* scale_gen: writes memscope_dump CSVs that grow in one dimension at a time (rows, inputs,
 * processes, devices, distinct stacks, steps), for the scaling tests of scale_run.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The shape of every file, with every default next to its flag. A file is a training loop: per
 * step, per op, every (process, device) opens the op, allocates a block, launches a kernel,
 * reads the block, frees the previous op's block and closes the op; each step also leaves one
 * block per (process, device) allocated until the end. The rows of the processes and devices are
 * interleaved in time (all open their op before any closes it), as in a merged multi-rank dump.
 */
struct gen_opts {
	uint64_t files;	 /* -F: files; more than 1: OUT is a directory (1) */
	uint64_t procs;	 /* -P: processes per file, each with its own thread (1) */
	uint64_t devs;	 /* -D: devices each process uses (1) */
	uint64_t steps;	 /* -S: mstx "step start" ranges per process (4) */
	uint64_t ops;	 /* -O: ops per step (16) */
	uint64_t stacks; /* -K: distinct call stacks, used in turn by the MALLOC rows (32) */
	uint64_t every;	 /* -k: one MALLOC row in this many carries call stacks (8) */
	uint64_t edits;	 /* -E: ops renamed, for the compare side of a pair (0) */
	int marks;	 /* -M: no MSTX Mark rows (1: marks A, B, C per process and device) */
	int leak_all;	 /* -L: no block is freed (0: each op frees the previous op's block) */
	uint64_t seed;	 /* -U: op names drawn from 300 by this seed (plus EDITS): unrelated
			  * steps for compare (0: the loop's 8 names in turn) */
};

static const struct gen_opts gen_defaults = { 1, 1, 1, 4, 16, 32, 8, 0, 1, 0, 0 };

#define MARK_TEXT "scale_mark"
#define POOL_BYTES (64ull << 30) /* each pool's reserved bytes */
#define STACK_DEPTH 5		 /* frames per stack; 16^5 distinct ones */

static const char *const op_names[] = { "torch._ops.aten.addmm.default",
	"torch._ops.aten.mm.default", "torch._ops.aten.add.Tensor", "torch._ops.aten.mul.Tensor",
	"torch._ops.aten.gelu.default", "torch._ops.aten.native_layer_norm.default",
	"torch._ops.aten._softmax.default", "torch._ops.aten.clone.default" };
#define N_OP_NAMES (sizeof(op_names) / sizeof(op_names[0]))

/* a file being written */
struct gen {
	const struct gen_opts *o;
	FILE *f;
	uint64_t id, ts, ptr, alloc_id, stack, file;
	uint64_t *used; /* per (process, device) */
	uint64_t *prev; /* per (process, device): the block of the previous op, 0: none */
	uint64_t *prev_size, *prev_aid;
};

static uint64_t pid_of(const struct gen *g, uint64_t p)
{
	return 100000 + g->file * g->o->procs + p;
}

/* The next row's ID and timestamp. */
static void tick(struct gen *g)
{
	g->id++;
	g->ts += 1000;
}

static void row_plain(struct gen *g, const char *event, const char *type, const char *name,
	uint64_t p, uint64_t d)
{
	tick(g);
	fprintf(g->f,
		"%" PRIu64 ",%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",N/A,,,\n",
		g->id, event, type, name, g->ts, pid_of(g, p), pid_of(g, p), d);
}

/* Stack k: its digits in base 16 pick the frames, so stacks share their frames' text. */
static void put_stack(struct gen *g, uint64_t k, int c)
{
	unsigned i;

	fputc('"', g->f);
	for (i = 0; i < STACK_DEPTH; i++) {
		unsigned digit = (unsigned)(k >> (4 * i)) & 15;

		if (c)
			fprintf(g->f, "%s/usr/lib/libscale.so(layer%u_op%x+0x%x) [0x7f00%04x%04x]",
				i ? "\n" : "", i, digit, 16 * digit, i, digit);
		else
			fprintf(g->f, "%s/scale/model.py(%u): layer%u_f%x", i ? "\n" : "",
				10 + i * 16 + digit, i, digit);
	}
	fputc('"', g->f);
}

/* A PTA MALLOC (free 0) or FREE (free 1) row of block ptr on device d of process p. */
static void row_block(struct gen *g, int is_free, uint64_t p, uint64_t d, uint64_t ptr,
	uint64_t size, uint64_t aid)
{
	uint64_t *used = &g->used[p * g->o->devs + d];

	tick(g);
	*used = is_free ? *used - size : *used + size;
	fprintf(g->f,
		"%" PRIu64 ",%s,PTA,N/A,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",0x%016" PRIx64 ",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64
		",total:%llu,used:%" PRIu64,
		g->id, is_free ? "FREE" : "MALLOC", g->ts, pid_of(g, p), pid_of(g, p), d, ptr, aid,
		ptr, size, POOL_BYTES, *used);
	if (is_free) {
		fputs("}\",,\n", g->f);
		return;
	}
	fprintf(g->f, ",owner:PTA@model@layer%u}\",", (unsigned)(aid % 8));
	if (aid % g->o->every) {
		fputs(",\n", g->f);
		return;
	}
	put_stack(g, g->stack % g->o->stacks, 0);
	fputc(',', g->f);
	put_stack(g, g->stack % g->o->stacks, 1);
	fputc('\n', g->f);
	g->stack++;
}

/* A new block of process p on device d: its ptr; size and allocation id into *size, *aid. */
static uint64_t new_block(struct gen *g, uint64_t p, uint64_t d, uint64_t *size, uint64_t *aid)
{
	uint64_t ptr = 0x12c000000000ull + (g->ptr++) * 0x200000ull;

	*size = 512 * (1 + (g->alloc_id * 7) % 64);
	*aid = ++g->alloc_id;
	row_block(g, 0, p, d, ptr, *size, *aid);
	return ptr;
}

/* The op name of (step, op, process, device); renamed in E places for the compare side. */
static const char *op_name(const struct gen *g, uint64_t s, uint64_t o, uint64_t p, uint64_t d)
{
	static char drawn[64];
	uint64_t e, h;

	if (g->o->seed) {
		/* splitmix64 of (seed + edits, step, op): the same name for every process */
		h = (g->o->seed + g->o->edits) * 0x9e3779b97f4a7c15ull + s * 0xbf58476d1ce4e5b9ull +
		    o * 0x94d049bb133111ebull;
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
		h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
		h ^= h >> 31;
		snprintf(drawn, sizeof(drawn), "torch._ops.aten.op%u.default", (unsigned)(h % 300));
		return drawn;
	}
	for (e = 0; e < g->o->edits && !p && !d && o == 1; e++)
		if (s == e * g->o->steps / g->o->edits)
			return "torch._ops.aten.scale_edit.default";
	return op_names[(s * 3 + o) % N_OP_NAMES];
}

/* Mark rows before op `op` of step s: marks A, B, C start steps 0, 1, 2, or with fewer steps come
 * before ops 0, O/3 and 2O/3 of step 0. */
static unsigned marks_before(const struct gen_opts *o, uint64_t s, uint64_t op)
{
	unsigned k, n = 0;

	if (!o->marks)
		return 0;
	if (o->steps >= 3)
		return s < 3 && op == 0;
	for (k = 0; k < 3 && s == 0; k++)
		n += k * o->ops / 3 == op;
	return n;
}

static void gen_step(struct gen *g, uint64_t s)
{
	const struct gen_opts *o = g->o;
	uint64_t p, d, k, op, n = o->procs * o->devs, size, aid;
	unsigned m;

	for (p = 0; p < o->procs; p++)
		row_plain(g, "MSTX", "Range_start", "\"step start\"", p, 0);
	for (op = 0; op < o->ops; op++) {
		for (m = marks_before(o, s, op); m; m--)
			for (k = 0; k < n; k++)
				row_plain(g, "MSTX", "Mark", "\"" MARK_TEXT "\"", k / o->devs,
					k % o->devs);
		for (k = 0; k < n; k++)
			row_plain(g, "OP_LAUNCH", "ATEN_START",
				op_name(g, s, op, k / o->devs, k % o->devs), k / o->devs,
				k % o->devs);
		for (k = 0; k < n; k++) {
			uint64_t ptr = new_block(g, k / o->devs, k % o->devs, &size, &aid);

			if (g->prev[k]) {
				tick(g); /* the block is read by a kernel of the op */
				fprintf(g->f,
					"%" PRIu64 ",ACCESS,READ,%s,%" PRIu64 ",%" PRIu64
					",%" PRIu64 ",%" PRIu64 ",0x%016" PRIx64
					",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64
					",size:%" PRIu64 ",type:PTA,dtype:torch.float32,"
					"shape:torch.Size([%" PRIu64 ", 128])}\",,\n",
					g->id, op_name(g, s, op, k / o->devs, k % o->devs), g->ts,
					pid_of(g, k / o->devs), pid_of(g, k / o->devs), k % o->devs,
					g->prev[k], g->prev_aid[k], g->prev[k], g->prev_size[k],
					g->prev_size[k] / 512);
				if (!o->leak_all)
					row_block(g, 1, k / o->devs, k % o->devs, g->prev[k],
						g->prev_size[k], g->prev_aid[k]);
			}
			g->prev[k] = ptr;
			g->prev_size[k] = size;
			g->prev_aid[k] = aid;
		}
		for (k = 0; k < n; k++)
			row_plain(g, "KERNEL_LAUNCH", "KERNEL_LAUNCH", "ScaleKernel", k / o->devs,
				k % o->devs);
		for (k = 0; k < n; k++)
			row_plain(g, "OP_LAUNCH", "ATEN_END",
				op_name(g, s, op, k / o->devs, k % o->devs), k / o->devs,
				k % o->devs);
	}
	/* one block per step stays until the end: a step leak and a leak at exit */
	for (p = 0; p < o->procs; p++)
		for (d = 0; d < o->devs; d++)
			new_block(g, p, d, &size, &aid);
	for (p = 0; p < o->procs; p++)
		row_plain(g, "MSTX", "Range_end", "\"Range end\"", p, 0);
}

static int gen_file(const struct gen_opts *o, const char *path, uint64_t file)
{
	uint64_t n = o->procs * o->devs, s, k;
	struct gen g = { o, fopen(path, "w"), 0, 1764753083000000000ull, 0, 0, 0, file, NULL, NULL,
		NULL, NULL };
	int rc = -1;

	g.used = calloc(n, sizeof(*g.used));
	g.prev = calloc(n, sizeof(*g.prev));
	g.prev_size = calloc(n, sizeof(*g.prev_size));
	g.prev_aid = calloc(n, sizeof(*g.prev_aid));
	if (!g.f || !g.used || !g.prev || !g.prev_size || !g.prev_aid)
		goto out;
	fputs("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
	      "Call Stack(Python),Call Stack(C)\n",
		g.f);
	for (s = 0; s < o->steps; s++)
		gen_step(&g, s);
	for (k = 0; k < n && !o->leak_all; k++)
		if (g.prev[k])
			row_block(&g, 1, k / o->devs, k % o->devs, g.prev[k], g.prev_size[k],
				g.prev_aid[k]);
	rc = ferror(g.f) ? -1 : 0;
out:
	if (g.f && fclose(g.f))
		rc = -1;
	free(g.used);
	free(g.prev);
	free(g.prev_size);
	free(g.prev_aid);
	return rc;
}

static void usage(FILE *f)
{
	fputs("Usage: scale_gen [-F FILES] [-P PROCS] [-D DEVS] [-S STEPS] [-O OPS] [-K STACKS] "
	      "[-k N] [-E EDITS] [-U SEED] [-M] [-L] OUT\n"
	      "Write a training-loop memscope_dump CSV (OUT), or FILES of them (OUT/in00000.csv, "
	      "...).\n"
	      "  -F FILES   files (default 1; more: OUT is a directory)\n"
	      "  -P PROCS   processes per file (default 1)\n"
	      "  -D DEVS    devices per process (default 1)\n"
	      "  -S STEPS   steps per process (default 4)\n"
	      "  -O OPS     ops per step (default 16)\n"
	      "  -K STACKS  distinct call stacks (default 32)\n"
	      "  -k N       one MALLOC row in N carries call stacks (default 8)\n"
	      "  -E EDITS   ops renamed, for the other side of a comparison (default 0)\n"
	      "  -U SEED    op names drawn from 300 by SEED + EDITS (unrelated steps)\n"
	      "  -M         no MSTX Mark rows\n"
	      "  -L         no block is freed\n",
		f);
}

/* A whole positive decimal number up to 2^32. 0 or -1. */
static int parse_count(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return *end || errno || *v > UINT32_MAX ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct gen_opts o = gen_defaults;
	uint64_t *field, i;
	int c;

	while ((c = getopt(argc, argv, "F:P:D:S:O:K:k:E:U:MLh")) != -1) {
		switch (c) {
		case 'F':
			field = &o.files;
			break;
		case 'P':
			field = &o.procs;
			break;
		case 'D':
			field = &o.devs;
			break;
		case 'S':
			field = &o.steps;
			break;
		case 'O':
			field = &o.ops;
			break;
		case 'K':
			field = &o.stacks;
			break;
		case 'k':
			field = &o.every;
			break;
		case 'E':
			field = &o.edits;
			break;
		case 'U':
			field = &o.seed;
			break;
		case 'M':
			o.marks = 0;
			continue;
		case 'L':
			o.leak_all = 1;
			continue;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (parse_count(optarg, field) || (c != 'E' && !*field)) {
			fprintf(stderr, "scale_gen: -%c: bad number '%s'\n", c, optarg);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (o.files == 1)
		return gen_file(&o, argv[optind], 0) ? 4 : 0;
	if (mkdir(argv[optind], 0777) && errno != EEXIST) {
		fprintf(stderr, "scale_gen: %s: %s\n", argv[optind], strerror(errno));
		return 4;
	}
	for (i = 0; i < o.files; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/in%05" PRIu64 ".csv", argv[optind], i);
		if (gen_file(&o, path, i)) {
			fprintf(stderr, "scale_gen: %s: write failed\n", path);
			return 4;
		}
	}
	return 0;
}
