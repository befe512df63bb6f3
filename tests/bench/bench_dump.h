/* What bench_leaks.c, bench_inefficient.c and bench_db.c share: their options, the writer of
 * their training-loop dumps, and the measurement of a run in a child (wall time, and peak RSS from
 * wait4). */
#ifndef MEMSCOPE_BENCH_DUMP_H
#define MEMSCOPE_BENCH_DUMP_H

#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "memscope/memscope.h"

/* ------------------------------------------------------------------------------------------ */
/* options */

/* the options the benchmarks share, with every default next to its flag */
struct dump_opts {
	uint64_t rows;	    /* -n: data rows of the small dump (300000; bench_db: 400000) */
	unsigned scale;	    /* -x: the big dump has this many times the rows (4) */
	unsigned repeat;    /* -r: runs per measurement (3) */
	uint64_t seed;	    /* -S: PRNG seed (1) */
	const char *dir;    /* -d: directory of the dumps (/tmp) */
	const char *tool;   /* -t: the tool's binary to time as well (NULL: none) */
	int keep;	    /* -k: keep the dumps (0: removed at the end) */
	unsigned stack_pct; /* -s: percent of PTA MALLOC rows with call stacks (8) */
};

static const struct dump_opts dump_opts_default = { 300000, 4, 3, 1, "/tmp", NULL, 0, 8 };

/* their lines in the usage that are the same in all */
#define DUMP_OPTS_USAGE "[-n ROWS] [-x SCALE] [-r N] [-S SEED] [-s PCT] [-d DIR]"
#define DUMP_OPTS_HELP                                                                             \
	"  -S SEED  PRNG seed (default 1)\n"                                                       \
	"  -s PCT   percent of PTA MALLOC rows with call stacks (default 8)\n"                     \
	"  -k       keep the dumps\n"

/* A whole decimal number. 0 or -1. */
static inline int dump_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	*v = strtoull(s, &end, 10);
	return *end ? -1 : 0;
}

/* Option c, one they share, with its argument into *o. 0, or -1 after saying on stderr
 * that the number is bad. */
static inline int dump_opt(struct dump_opts *o, int c, const char *arg, const char *prog)
{
	uint64_t v;

	switch (c) {
	case 'd':
		o->dir = arg;
		return 0;
	case 't':
		o->tool = arg;
		return 0;
	case 'k':
		o->keep = 1;
		return 0;
	}
	if (dump_parse_u64(arg, &v) || (c != 'S' && v == 0) || (c != 'n' && c != 'S' && v > 1000)) {
		fprintf(stderr, "%s: -%c: bad number '%s'\n", prog, c, arg);
		return -1;
	}
	if (c == 'n')
		o->rows = v;
	else if (c == 'x')
		o->scale = (unsigned)v;
	else if (c == 'r')
		o->repeat = (unsigned)v;
	else if (c == 'S')
		o->seed = v;
	else
		o->stack_pct = (unsigned)v > 100 ? 100 : (unsigned)v;
	return 0;
}

/*
 * The next option of argv that is the benchmark's own (a letter of own, which take no argument),
 * after taking the shared ones into *o; -1 when there are no more. Exits after the usage on -h (0),
 * and on a bad option, number or operand (2).
 */
static inline int dump_getopt(int argc, char **argv, const char *own, struct dump_opts *o,
	const char *prog, void (*usage)(FILE *f))
{
	char spec[64];
	int c;

	snprintf(spec, sizeof(spec), "n:x:r:S:s:d:t:k%sh", own);
	while ((c = getopt(argc, argv, spec)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == '?') {
			usage(stderr);
			exit(2);
		}
		if (strchr(own, c))
			return c;
		if (dump_opt(o, c, optarg, prog))
			exit(2);
	}
	if (optind != argc) {
		usage(stderr);
		exit(2);
	}
	return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* the dump writer: one process of a PyTorch training loop on device 0 */

#define PID 3290097u
#define TID_MAIN 3290097u
#define TID_BWD 3291992u
#define TID_OWN 0u	     /* dump_free_due: the thread of the block read */
#define N_SLOTS 65536	     /* blocks alive at once, at most */
#define N_BUCKETS 16384	     /* ops ahead a free can be scheduled, at most */
#define N_STACKS 48	     /* distinct call stacks */
#define SLOT_NONE UINT32_MAX /* no block, no access */
#define DUE_END UINT64_MAX   /* alive until the end: freed by the shadow free */
#define MIB (1024ull * 1024)

/* the generators' PRNG, seeded by dump_open: their data depends only on the seed */
static uint64_t dump_rng = BENCH_SEED;

static inline uint64_t dump_rand_below(uint64_t n)
{
	return n ? bench_rand(&dump_rng) % n : 0;
}

/* true with a chance of per_mille in 1000 */
static inline int dump_chance(unsigned per_mille)
{
	return dump_rand_below(1000) < per_mille;
}

/* Sizes of activations and temporaries: about log-uniform from 512 B to 16 MiB, 512-aligned. */
static inline uint64_t dump_act_size(void)
{
	unsigned octave = (unsigned)dump_rand_below(15);

	return ((512ull << octave) + dump_rand_below(512ull << octave)) & ~511ull;
}

static const char *const dump_op_names[] = {
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

#define N_OPS (sizeof(dump_op_names) / sizeof(dump_op_names[0]))

static const char *const dump_dtypes[] = { "torch.float32", "torch.float16", "torch.bfloat16",
	"torch.int64" };

/* the function names and C symbols a generator's call stacks are made of */
struct dump_frames {
	const char *const *funcs;
	size_t n_funcs;
	const char *const *syms;
	size_t n_syms;
};

/* one ACCESS row, kept until its block's rows are written */
struct dump_acc {
	uint64_t id, ts;
	uint32_t next; /* next access of the block, or of the free list */
	uint32_t tid;
	uint16_t op;
	uint8_t write;
};

/* a PTA block or a HAL segment, from its MALLOC until its rows are written */
struct dump_block {
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
struct dump_counts {
	uint64_t rows, ops, kernels, mstx, system;
	uint64_t mallocs, frees, shadow; /* PTA; shadow frees are among the frees */
	uint64_t hal;			 /* HAL MALLOC and FREE rows */
	uint64_t reads, writes;		 /* ACCESS rows */
};

/* a dump being written; each benchmark's generator embeds one */
struct dump {
	FILE *f;
	struct dump_block *b;
	uint32_t *bucket; /* blocks due at op o are in bucket[o % N_BUCKETS] */
	uint32_t free_slot;
	uint32_t *hal; /* live HAL segments, newest last */
	size_t n_hal;
	struct dump_acc *acc;
	uint32_t n_acc, cap_acc, free_acc;
	int oom;
	int shadow_totals;  /* the shadow FREE rows of PTA blocks carry total and used */
	unsigned stack_pct; /* percent of PTA MALLOC rows with call stacks */
	char *py[N_STACKS], *c[N_STACKS];
	uint64_t id, ts, alloc_seq, op, step;
	uint64_t used, reserved; /* PTA pool: allocated and reserved bytes */
	uint64_t hal_seq;
	struct dump_counts k;
	/* when set, what dump_free_due calls in place of dump_add_access for the read of a block
	 * before its free (a generator that writes only some reads, or counts them); NULL after
	 * dump_open */
	void (*free_read)(struct dump *d, uint32_t s, unsigned op, int write, uint32_t tid);
};

/* Python and C call stacks of about 350 and 450 bytes, innermost frame first. */
static inline int dump_make_stacks(struct dump *d, const struct dump_frames *fr)
{
	int i, k;

	for (i = 0; i < N_STACKS; i++) {
		char py[1024], c[1024];
		size_t pn = 0, cn = 0;
		int depth = 4 + (int)dump_rand_below(3);

		for (k = 0; k < depth; k++) {
			pn += (size_t)snprintf(py + pn, sizeof(py) - pn, "%s%s(%u): %s",
				k ? "\n" : "",
				k == depth - 1
					? "/home/user/train.py"
					: "/usr/lib/python3.9/site-packages/torch/nn/modules/"
					  "module.py",
				(unsigned)(20 + dump_rand_below(1500)),
				fr->funcs[dump_rand_below(fr->n_funcs)]);
			cn += (size_t)snprintf(c + cn, sizeof(c) - cn,
				"%s/usr/local/Ascend/lib64/libtorch_npu.so(%s+0x%x) [0x7f3a%08x]",
				k ? "\n" : "", fr->syms[dump_rand_below(fr->n_syms)],
				(unsigned)dump_rand_below(0x400),
				(unsigned)dump_rand_below(0xffffffffu));
		}
		if (!(d->py[i] = strdup(py)) || !(d->c[i] = strdup(c)))
			return -1;
	}
	return 0;
}

/* The next event: IDs and timestamps grow together, as the reference numbers events. */
static inline void dump_tick(struct dump *d, uint64_t max_ns)
{
	d->id++;
	d->ts += 100 + dump_rand_below(max_ns);
}

static inline void dump_row_op(struct dump *d, const char *type, unsigned op, uint32_t tid)
{
	dump_tick(d, 20000);
	fprintf(d->f, "%" PRIu64 ",OP_LAUNCH,%s,%s,%" PRIu64 ",%u,%u,0,N/A,,,\n", d->id, type,
		dump_op_names[op], d->ts, PID, tid);
	d->k.ops++;
	d->k.rows++;
}

static inline void dump_row_kernel(struct dump *d, unsigned op, uint32_t tid)
{
	dump_tick(d, 2000);
	fprintf(d->f,
		"%" PRIu64 ",KERNEL_LAUNCH,KERNEL_LAUNCH,%sKernel_%u,%" PRIu64
		",%u,%u,0,N/A,\"{streamId:2,taskId:%" PRIu64 "}\",,\n",
		d->id, dump_op_names[op] + 16, op, d->ts, PID, tid, d->id % 65536);
	d->k.kernels++;
	d->k.rows++;
}

static inline void dump_row_mstx(struct dump *d, const char *type, const char *name)
{
	dump_tick(d, 2000);
	fprintf(d->f, "%" PRIu64 ",MSTX,%s,%s,%" PRIu64 ",%u,%u,0,N/A,,,\n", d->id, type, name,
		d->ts, PID, TID_MAIN);
	d->k.mstx++;
	d->k.rows++;
}

static inline void dump_row_system(struct dump *d, const char *type)
{
	dump_tick(d, 2000);
	fprintf(d->f, "%" PRIu64 ",SYSTEM,%s,N/A,%" PRIu64 ",%u,%u,N/A,N/A,,,\n", d->id, type,
		d->ts, PID, TID_MAIN);
	d->k.system++;
	d->k.rows++;
}

/* A free slot taken, or SLOT_NONE when every slot is taken. */
static inline uint32_t dump_take_slot(struct dump *d)
{
	uint32_t s = d->free_slot;

	if (s != SLOT_NONE)
		d->free_slot = d->b[s].next;
	return s;
}

/* A fresh block of size bytes in slot s: its MALLOC is the current event. */
static inline struct dump_block *dump_init_block(
	struct dump *d, uint32_t s, uint64_t size, uint32_t tid)
{
	struct dump_block *b = &d->b[s];

	memset(b, 0, sizeof(*b));
	b->alloc_id = ++d->alloc_seq;
	b->size = size;
	b->id = d->id;
	b->ts = d->ts;
	b->due = DUE_END;
	b->next = SLOT_NONE;
	b->acc_head = b->acc_tail = SLOT_NONE;
	b->tid = tid;
	b->stack = -1;
	b->live = 1;
	return b;
}

/* A PTA block of size bytes in slot s, made now and freed at op `due` (DUE_END: at the end). */
static inline void dump_pta_block(
	struct dump *d, uint32_t s, uint64_t size, uint64_t due, uint32_t tid)
{
	struct dump_block *b = dump_init_block(d, s, size, tid);

	d->used += size;
	b->addr = 0x12c000000000ull + (uint64_t)s * 0x1000000ull;
	b->used = d->used;
	b->total = d->reserved;
	b->due = due;
	b->stack = dump_chance(d->stack_pct * 10) ? (int)dump_rand_below(N_STACKS) : -1;
	if (due != DUE_END) {
		b->next = d->bucket[due % N_BUCKETS];
		d->bucket[due % N_BUCKETS] = s;
	}
}

/* A HAL segment when the PTA pool cannot hold size more bytes, alive until an empty_cache or the
 * end. */
static inline void dump_reserve(struct dump *d, uint64_t size, uint32_t tid)
{
	struct dump_block *b;
	uint64_t need, seg;
	uint32_t s;

	if (d->used + size <= d->reserved)
		return;
	need = d->used + size - d->reserved;
	seg = need < 20 * MIB ? 20 * MIB : (need + 2 * MIB - 1) & ~(2 * MIB - 1);
	dump_tick(d, 5000);
	if ((s = dump_take_slot(d)) == SLOT_NONE)
		return;
	b = dump_init_block(d, s, seg, tid);
	b->addr = 0x120000000000ull + (d->hal_seq++ % 4096) * 0x40000000ull;
	b->hal = 1;
	d->hal[d->n_hal++] = s;
	d->reserved += seg;
}

/* An ACCESS of block s (SLOT_NONE: none) by op, as thread tid, now. */
static inline void dump_add_access(struct dump *d, uint32_t s, unsigned op, int write, uint32_t tid)
{
	struct dump_block *b;
	uint32_t i = d->free_acc;

	if (s == SLOT_NONE)
		return;
	b = &d->b[s];
	if (i != SLOT_NONE) {
		d->free_acc = d->acc[i].next;
	} else {
		if (d->n_acc == d->cap_acc) {
			uint32_t cap = d->cap_acc ? d->cap_acc * 2 : 65536;
			struct dump_acc *p = realloc(d->acc, cap * sizeof(*p));

			if (!p) {
				d->oom = 1;
				return;
			}
			d->acc = p;
			d->cap_acc = cap;
		}
		i = d->n_acc++;
	}
	dump_tick(d, 1000);
	d->acc[i].id = d->id;
	d->acc[i].ts = d->ts;
	d->acc[i].next = SLOT_NONE;
	d->acc[i].tid = tid;
	d->acc[i].op = (uint16_t)op;
	d->acc[i].write = (uint8_t)write;
	if (b->acc_head == SLOT_NONE)
		b->acc_head = i;
	else
		d->acc[b->acc_tail].next = i;
	b->acc_tail = i;
}

/* The MALLOC row of a block, its ACCESS rows, then its FREE row (now, or the shadow free). */
static inline void dump_write_block(struct dump *d, uint32_t s, int shadow)
{
	struct dump_block *b = &d->b[s];
	uint32_t i, next;

	fprintf(d->f,
		"%" PRIu64 ",MALLOC,%s,N/A,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
		",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64,
		b->id, b->hal ? "HAL" : "PTA", b->ts, PID, b->tid, b->addr, b->alloc_id, b->addr,
		b->size);
	if (b->hal)
		fputs(",page_type:huge,alloc_type:alloc}\",,\n", d->f);
	else if (b->stack >= 0)
		fprintf(d->f, ",total:%" PRIu64 ",used:%" PRIu64 "}\",\"%s\",\"%s\"\n", b->total,
			b->used, d->py[b->stack], d->c[b->stack]);
	else
		fprintf(d->f, ",total:%" PRIu64 ",used:%" PRIu64 "}\",,\n", b->total, b->used);
	for (i = b->acc_head; i != SLOT_NONE; i = next) {
		struct dump_acc *a = &d->acc[i];

		fprintf(d->f,
			"%" PRIu64 ",ACCESS,%s,%s,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
			",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64
			",type:PTA,dtype:%s,shape:torch.Size([%" PRIu64 ", 256])}\",,\n",
			a->id, a->write ? "WRITE" : "READ", dump_op_names[a->op], a->ts, PID,
			a->tid, b->addr, b->alloc_id, b->addr, b->size,
			dump_dtypes[b->alloc_id % 4], b->size / 1024 + 1);
		*(a->write ? &d->k.writes : &d->k.reads) += 1;
		d->k.rows++;
		next = a->next;
		a->next = d->free_acc;
		d->free_acc = i;
	}
	if (!shadow)
		dump_tick(d, 3000);
	else
		d->id++;
	if (b->hal) {
		d->reserved -= b->size;
		fprintf(d->f,
			"%" PRIu64 ",FREE,HAL,N/A,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
			",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64
			"%s}\",,\n",
			d->id, d->ts, PID, b->tid, b->addr, b->alloc_id, b->addr, b->size,
			shadow ? ",shadow:true" : "");
		d->k.hal += 2;
	} else {
		d->used -= b->size;
		fprintf(d->f,
			"%" PRIu64 ",FREE,PTA,N/A,%" PRIu64 ",%u,%u,0,0x%016" PRIx64
			",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64,
			d->id, d->ts, PID, b->tid, b->addr, b->alloc_id, b->addr, b->size);
		if (!shadow || d->shadow_totals)
			fprintf(d->f, ",total:%" PRIu64 ",used:%" PRIu64, d->reserved, d->used);
		fputs(shadow ? ",shadow:true}\",,\n" : "}\",,\n", d->f);
		d->k.mallocs++;
		d->k.frees++;
		d->k.shadow += (uint64_t)shadow;
	}
	d->k.rows += 2;
	b->live = 0;
	b->next = d->free_slot;
	d->free_slot = s;
}

/* Free the blocks due at the current op, half of them read by op first (through d->free_read
 * when set), as thread tid (TID_OWN: the block's). */
static inline void dump_free_due(struct dump *d, unsigned op, uint32_t tid)
{
	uint32_t *link = &d->bucket[d->op % N_BUCKETS];

	while (*link != SLOT_NONE) {
		uint32_t s = *link;
		struct dump_block *b = &d->b[s];

		if (b->due != d->op) {
			link = &b->next;
			continue;
		}
		*link = b->next;
		if (dump_chance(500))
			(d->free_read ? d->free_read : dump_add_access)(
				d, s, op, 0, tid == TID_OWN ? b->tid : tid);
		dump_write_block(d, s, 0);
	}
}

/* empty_cache: give back the newest HAL segments the pool does not need. */
static inline void dump_trim_hal(struct dump *d)
{
	while (d->n_hal > 4) {
		uint32_t s = d->hal[d->n_hal - 1];

		if (d->reserved - d->b[s].size < d->used + 64 * MIB)
			break;
		d->n_hal--;
		dump_write_block(d, s, 0);
	}
}

/* A new step: its mstx "step start" range opens. */
static inline void dump_step_start(struct dump *d)
{
	d->step++;
	dump_row_mstx(d, "Range_start", "\"step start\"");
}

/* The end of the step: its range closes, and every 20 steps an empty_cache. */
static inline void dump_step_end(struct dump *d)
{
	char name[64];

	snprintf(name, sizeof(name), "Range end from id %" PRIu64, d->step);
	dump_row_mstx(d, "Range_end", name);
	if (d->step % 20 == 0)
		dump_trim_hal(d);
}

/* A dump at path, up to its START_TRACE row, with the PRNG seeded. 0 or -1; dump_end either way. */
static inline int dump_open(struct dump *d, const char *path, uint64_t seed, unsigned stack_pct,
	const struct dump_frames *fr)
{
	uint32_t i;

	memset(d, 0, sizeof(*d));
	dump_rng = seed;
	d->ts = 1764753083000000000ull;
	d->stack_pct = stack_pct;
	d->free_acc = SLOT_NONE;
	d->f = fopen(path, "w");
	d->b = calloc(N_SLOTS, sizeof(*d->b));
	d->bucket = malloc(N_BUCKETS * sizeof(*d->bucket));
	d->hal = malloc(N_SLOTS * sizeof(*d->hal));
	if (!d->f || !d->b || !d->bucket || !d->hal || dump_make_stacks(d, fr))
		return -1;
	for (i = 0; i < N_BUCKETS; i++)
		d->bucket[i] = SLOT_NONE;
	for (i = 0; i < N_SLOTS; i++)
		d->b[i].next = i + 1 < N_SLOTS ? i + 1 : SLOT_NONE;
	fputs("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
	      "Call Stack(Python),Call Stack(C)\n",
		d->f);
	dump_row_system(d, "START_TRACE");
	return 0;
}

/* The STOP_TRACE row, then every block still alive, PTA then HAL, with the shadow free. 0, or -1
 * when the accesses ran out of memory. */
static inline int dump_finish(struct dump *d)
{
	uint32_t i;

	dump_row_system(d, "STOP_TRACE");
	d->ts++;
	for (i = 0; i < N_SLOTS; i++)
		if (d->b[i].live && !d->b[i].hal)
			dump_write_block(d, i, 1);
	for (i = 0; i < d->n_hal; i++)
		dump_write_block(d, d->hal[i], 1);
	return d->oom ? -1 : 0;
}

/*
 * The end of a dump: unless rc, the STOP_TRACE row and the blocks still alive with their shadow
 * frees; its counts into *k, what d holds freed, its file closed. 0, or -1 when rc, when the
 * accesses ran out of memory or when the file could not be written.
 */
static inline int dump_end(struct dump *d, int rc, struct dump_counts *k)
{
	int i;

	if (!rc)
		rc = dump_finish(d);
	*k = d->k;
	for (i = 0; i < N_STACKS; i++) {
		free(d->py[i]);
		free(d->c[i]);
	}
	free(d->b);
	free(d->bucket);
	free(d->hal);
	free(d->acc);
	if (d->f && fclose(d->f))
		rc = -1;
	return rc ? -1 : 0;
}

/* a generator: a dump of at least `rows` data rows at path, its counts into *k; 0 or -1 */
typedef int (*dump_gen_fn)(
	const char *path, uint64_t rows, const void *opts, struct dump_counts *k);

/* one of the two dumps a benchmark measures */
struct dump_file {
	const char *label; /* "small" or "big" */
	char path[4096];
	struct dump_counts k;
};

/*
 * The dump DIR/PROG_LABEL.csv of `rows` rows, generated in a child so that the generator's memory
 * (which glibc may keep after free) does not raise the RSS of the measured children forked later,
 * and its size printed. 0, or -1 after saying so on stderr.
 */
static inline int dump_generate(struct dump_file *df, const char *prog, const char *dir,
	uint64_t rows, dump_gen_fn gen, const void *opts)
{
	double t0 = bench_now_s();
	int status = 0, fd[2], ok = 0;
	char msg[64];
	struct stat sb;
	pid_t pid;

	snprintf(df->path, sizeof(df->path), "%s/%s_%s.csv", dir, prog, df->label);
	if (!pipe(fd)) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			close(fd[0]);
			if (gen(df->path, rows, opts, &df->k) ||
				write(fd[1], &df->k, sizeof(df->k)) != (ssize_t)sizeof(df->k))
				_exit(4);
			_exit(0);
		}
		close(fd[1]);
		ok = pid > 0 && read(fd[0], &df->k, sizeof(df->k)) == (ssize_t)sizeof(df->k);
		close(fd[0]);
		if (pid > 0 &&
			(waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)))
			ok = 0;
	}
	if (!ok || stat(df->path, &sb)) {
		snprintf(msg, sizeof(msg), "%s: generating", prog);
		perror(msg);
		return -1;
	}
	printf("generated %s: %" PRIu64 " rows, %.1f MB (%.0f bytes/row) in %.1f s\n", df->path,
		df->k.rows, (double)sb.st_size / 1e6, (double)sb.st_size / (double)df->k.rows,
		bench_now_s() - t0);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* measurements: each in a forked child; the parent times it and takes its peak RSS from wait4 */

/* what a measured child does */
enum bench_kind {
	BENCH_FLOOR, /* nothing: the RSS every measurement starts from */
	BENCH_READ,  /* read(2) of the file in 1 MiB chunks, like cat */
	BENCH_PARSE, /* memscope_source_read with a callback that only counts */
	BENCH_LIB,   /* the library path: read + feed, finish, write text to /dev/null */
	BENCH_TOOL,  /* exec the tool: TOOL -q [--annotate ANN] FILE >/dev/null, or argv */
};

/* what a measured child sends up its pipe, then the result of BENCH_LIB */
struct bench_msg {
	uint64_t n;		    /* bytes (BENCH_READ), events (BENCH_PARSE, BENCH_LIB) */
	double read, finish, write; /* BENCH_LIB: seconds of each phase inside the child */
};

/* one measurement: what it runs, what its line starts with, what the parent saw of it */
struct bench_job {
	enum bench_kind kind;
	const struct dump_file *df; /* the dump, NULL for BENCH_FLOOR */
	const char *name;	    /* of the kind, printed after the dump's label */
	unsigned run;
	const char *tool, *ann; /* BENCH_TOOL: the binary, --annotate's file */
	char *const *argv;	/* BENCH_TOOL: the command line instead (argv[0]: the binary) */
	const char *out;	/* BENCH_TOOL: a file it writes, removed before, its size printed */
	/* BENCH_LIB: what m.read, m.finish and m.write timed, NULL for a phase not printed; all
	 * NULL: read+feed, finish, write */
	const char *phase[3];
	/* BENCH_LIB: the library path on path, report to out; fills *m, *res. 0 or a status */
	int (*lib)(const char *path, FILE *out, struct bench_msg *m, void *res);
	void (*print)(const void *res); /* BENCH_LIB: the end of the line, from *res */
	void *res;
	size_t size;
	double wall; /* seconds from fork to reap */
	long rss;    /* the child's peak RSS in KiB */
};

/* Seconds since *t, which becomes now. */
static inline double bench_lap(double *t)
{
	double t0 = *t;

	*t = bench_now_s();
	return *t - t0;
}

static inline int bench_count_event(void *ctx, const struct memscope_event *ev)
{
	(void)ev;
	++*(uint64_t *)ctx;
	return 0;
}

/* read(2) of path: its bytes into *n. 0 or -1. */
static inline int bench_read(const char *path, uint64_t *n)
{
	char *buf = malloc(1 << 20);
	int fd = open(path, O_RDONLY);
	ssize_t got = 0;

	while (buf && fd >= 0 && (got = read(fd, buf, 1 << 20)) > 0)
		*n += (uint64_t)got;
	free(buf);
	if (fd >= 0)
		close(fd);
	return !buf || fd < 0 || got < 0 ? -1 : 0;
}

/* The events of path, counted and nothing else: into *n. 0 or -1. */
static inline int bench_parse(const char *path, uint64_t *n)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int rc = -1;

	if (st && !memscope_source_open(&src, path, st, NULL, &err) &&
		!memscope_source_read(src, bench_count_event, n, &err))
		rc = 0;
	memscope_source_close(src);
	memscope_strtab_free(st);
	return rc;
}

/* The library path with its report to /dev/null. 0 or a status. */
static inline int bench_lib(const struct bench_job *j, struct bench_msg *m)
{
	FILE *out = fopen("/dev/null", "w");
	int rc = out ? j->lib(j->df->path, out, m, j->res) : -1;

	if (out)
		fclose(out);
	return rc;
}

/* The child: run the job, send the message (and the result of BENCH_LIB) up fd, exit. */
static inline void bench_child(const struct bench_job *j, int fd)
{
	struct bench_msg m;
	int rc = 0, null_fd;

	memset(&m, 0, sizeof(m));
	switch (j->kind) {
	case BENCH_FLOOR:
		break;
	case BENCH_READ:
		rc = bench_read(j->df->path, &m.n);
		break;
	case BENCH_PARSE:
		rc = bench_parse(j->df->path, &m.n);
		break;
	case BENCH_LIB:
		rc = bench_lib(j, &m);
		break;
	case BENCH_TOOL:
		/* the report on stdout, sent to /dev/null: the same work as `-o /dev/null`, which
		 * a tool refuses ("exists") where /dev/null is not a device */
		close(fd);
		null_fd = open("/dev/null", O_WRONLY);
		if (null_fd < 0 || dup2(null_fd, STDOUT_FILENO) < 0)
			_exit(4);
		if (j->argv)
			execv(j->argv[0], j->argv);
		else if (j->ann)
			execl(j->tool, j->tool, "-q", "--annotate", j->ann, j->df->path,
				(char *)NULL);
		else
			execl(j->tool, j->tool, "-q", j->df->path, (char *)NULL);
		_exit(4);
	}
	if (rc || write(fd, &m, sizeof(m)) != (ssize_t)sizeof(m) ||
		(j->kind == BENCH_LIB && write(fd, j->res, j->size) != (ssize_t)j->size))
		_exit(4);
	_exit(0);
}

/* What a measured child sent up fd: the message, then the result of BENCH_LIB. 0, or -1 when a
 * part is missing. */
static inline int bench_receive(const struct bench_job *j, int fd, struct bench_msg *m)
{
	if (read(fd, m, sizeof(*m)) != (ssize_t)sizeof(*m))
		return -1;
	if (j->kind == BENCH_LIB && read(fd, j->res, j->size) != (ssize_t)j->size)
		return -1;
	return 0;
}

/*
 * Run the job in a child. Prints its line: wall time (fork to reap), rate and peak RSS, and what
 * it found; fills j->wall and j->rss. 0, or -1 after printing that it failed.
 */
static inline int bench_measure(struct bench_job *j)
{
	static const char *const phase_default[3] = { "read+feed", "finish", "write" };
	const char *const *phase =
		j->phase[0] || j->phase[1] || j->phase[2] ? j->phase : phase_default;
	struct bench_msg m;
	struct rusage ru;
	struct stat sb;
	const char *label = j->df ? j->df->label : "-", *sep = "";
	double t0, mb, t[3];
	int status = 0, fd[2], got = -1, i;
	pid_t pid;

	memset(&m, 0, sizeof(m));
	if (j->res)
		memset(j->res, 0, j->size);
	if (j->ann)
		unlink(j->ann);
	if (j->out)
		unlink(j->out);
	if (pipe(fd))
		return -1;
	fflush(stdout);
	fflush(stderr);
	t0 = bench_now_s();
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		bench_child(j, fd[1]);
	}
	close(fd[1]);
	if (pid > 0)
		got = bench_receive(j, fd[0], &m);
	close(fd[0]);
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
		WEXITSTATUS(status) || (j->kind != BENCH_TOOL && got)) {
		printf("%-6s %-10s run %u: failed (status %d)\n", label, j->name, j->run, status);
		return -1;
	}
	j->wall = bench_now_s() - t0;
	j->rss = ru.ru_maxrss;
	if (j->kind == BENCH_FLOOR) {
		printf("%-6s %-10s peak RSS %.1f MiB\n", label, j->name, (double)j->rss / 1024);
		return 0;
	}
	mb = stat(j->df->path, &sb) ? 0 : (double)sb.st_size / 1e6;
	printf("%-6s %-10s run %u: %8" PRIu64
	       " rows %6.1f MB %7.3f s %7.1f MB/s peak RSS %6.1f MiB",
		label, j->name, j->run, j->df->k.rows, mb, j->wall, mb / j->wall,
		(double)j->rss / 1024);
	if (j->kind == BENCH_LIB) {
		t[0] = m.read;
		t[1] = m.finish;
		t[2] = m.write;
		printf("  [");
		for (i = 0; i < 3; i++)
			if (phase[i]) {
				printf("%s%s %.3f", sep, phase[i], t[i]);
				sep = ", ";
			}
		printf(" s; %" PRIu64 " events", m.n);
		j->print(j->res);
		printf("]");
	} else if (j->kind == BENCH_PARSE) {
		printf("  [%" PRIu64 " events]", m.n);
	} else if (j->kind == BENCH_TOOL && j->ann && !stat(j->ann, &sb)) {
		printf("  [annotated copy %.1f MB]", (double)sb.st_size / 1e6);
	} else if (j->kind == BENCH_TOOL && j->out && !stat(j->out, &sb)) {
		printf("  [wrote %.1f MB]", (double)sb.st_size / 1e6);
	}
	printf("\n");
	return 0;
}

/* The floor: the peak RSS of a child that does nothing. */
static inline void bench_floor(void)
{
	struct bench_job j = { .kind = BENCH_FLOOR, .name = "floor" };

	bench_measure(&j);
}

/* "NAME peak RSS: small ..., big ... (xR for xN rows)": how the library path grows. */
static inline void bench_print_growth(
	const char *name, long small, long big, const struct dump_file df[2])
{
	if (small && big)
		printf("%s peak RSS: small %.1f MiB, big %.1f MiB (x%.2f for x%.2f rows)\n", name,
			(double)small / 1024, (double)big / 1024, (double)big / (double)small,
			(double)df[1].k.rows / (double)df[0].k.rows);
}

#endif
