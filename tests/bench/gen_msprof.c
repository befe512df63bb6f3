/* gen_msprof: writes a torch_npu profiler output folder (<name>_ascend_pt/ASCEND_PROFILER_OUTPUT
 * with operator_memory.csv and memory_record.csv in the current layouts of formats/msprof.md) of
 * any size, and reads files with read(2) alone (--read), for bench_msprof.sh. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The folder, with every default next to its flag. One process on NPU:0 runs a training loop:
 * the caching allocator (PTA) makes a block every 2-38 us (20 on average) for one of ~50 ops;
 * 70% of the blocks live up to 2 ms, 27% up to 100 ms and 3% up to 2 s, so about 2,400 are live
 * at a time; 2.5% of them (small ones, from four ops) are never freed. The graph engine (GE)
 * makes the other 2% of the rows: short-lived blocks in its own pool. Each freed PTA block is
 * first freed (BLOCK_FREE, Active Release Time) and 1-5 us later returned (FREE, Release Time).
 * Every size is a multiple of 512 bytes, so the KB and MB figures are exact binary fractions
 * written as Python prints them.
 *
 * operator_memory.csv: the PTA rows by allocation time (blocks alive at the end of the window
 * have empty release columns), then the cann:: rows in GE order, as torch_npu writes them.
 * memory_record.csv: the APP rows (every 20 ms) first, then one PTA or GE row per allocator
 * event in time order, each followed by its PTA+GE sum, as torch_npu merges them. There are
 * about three events per PTA block, so when -m asks for fewer rows the events written are an
 * evenly spread subset: every row written holds the pool totals at that event.
 */
struct gen_opts {
	uint64_t rows;	  /* -n --rows: operator_memory rows (1000000) */
	uint64_t records; /* -m --records: memory_record rows, fewer only when the events run out
			   * (3000000) */
	uint64_t seed;	  /* -s --seed: the random sequence (1) */
	int crlf;	  /* -r --crlf: CRLF line ends, as Python's csv module writes (0: LF) */
	int read_only;	  /* --read: read the FILEs given with read(2) and write nothing (0) */
};

static const struct gen_opts gen_defaults = {
	.rows = 1000000,
	.records = 3000000,
	.seed = 1,
	.crlf = 0,
	.read_only = 0,
};

#define T0_NS 1764246877074330300ull /* the first event, epoch ns */
#define APP_EVERY_NS 20000000ull     /* npu_mem's APP sampling period */
#define END_AFTER_NS 1000000ull	     /* the window ends this long after the last block */
#define MIB (1ull << 20)
#define BASE_ALLOCATED 4514075136ull	 /* PTA bytes allocated before the window (weights) */
#define SEGMENT (20 * MIB)		 /* PTA reserved grows in these */
#define SHRINK_ABOVE (3ull << 30)	 /* reserved minus allocated that empties the cache */
#define GE_RESERVED0 (7475 * MIB / 100)	 /* 74.75 MB, GE's pool when it starts */
#define APP_OVERHEAD_KB (1536ull * 1024) /* APP = the pools + runtime, HCCL...: 1.5 GB */
#define LEAK_PER_MILLE 25		 /* PTA blocks never freed */
#define GE_PERCENT 2			 /* cann:: rows */
#define EMPTY_NAME_PER_MILLE 5		 /* PTA rows with an empty Name */
#define STREAM "2"			 /* Stream Ptr, as 2025-11 torch_npu writes it */

static const char *const op_names[] = { "aten::matmul", "npu::npu_rms_norm",
	"npu::npu_rms_norm_backward", "aten::empty", "npu::_npu_dtype_cast", "aten::mul",
	"aten::pow", "aten::linalg_vector_norm", "npu::npu_fusion_attention_grad",
	"npu::npu_fusion_attention", "aten::cat", "aten::add", "aten::zeros", "aten::sub",
	"aten::_fused_adamw_", "npu::npu_swiglu_backward", "npu::npu_swiglu", "aten::sin",
	"aten::cos", "aten::clone", "aten::index", "aten::gt", "aten::empty_strided",
	"aten::embedding_dense_backward", "aten::ones", "aten::ne", "aten::eq", "aten::embedding",
	"aten::arange", "aten::abs", "aten::addmm", "aten::mm", "aten::bmm", "aten::_softmax",
	"aten::_softmax_backward_data", "aten::gelu", "aten::gelu_backward",
	"aten::native_layer_norm", "aten::native_layer_norm_backward", "aten::native_dropout",
	"aten::native_dropout_backward", "aten::copy_", "aten::contiguous", "aten::transpose",
	"aten::sum", "aten::mean", "aten::div", "aten::neg", "aten::where", "aten::masked_fill",
	"npu::npu_format_cast", "npu::npu_rotary_mul", "aten::nll_loss_forward",
	"aten::_log_softmax" };
#define N_OPS (sizeof(op_names) / sizeof(op_names[0]))
/* the ops whose blocks leak: aten::empty, npu::_npu_dtype_cast, aten::cat, aten::index */
static const unsigned leak_ops[] = { 3, 4, 10, 20 };
#define N_LEAK_OPS (sizeof(leak_ops) / sizeof(leak_ops[0]))
static const char *const ge_names[] = { "trans_TransData_", "Conv2D", "MatMulV2_", "Cast_",
	"ReduceSumD_", "AddN_" };
#define N_GE_NAMES (sizeof(ge_names) / sizeof(ge_names[0]))
#define EMPTY_OP 0xffff

/* ------------------------------------------------------------------------------------------ */
/* output: a buffered file and the number formats torch_npu writes */

struct out {
	FILE *f;
	char *buf;
	size_t len;
	const char *eol;
	int failed;
};

#define OUT_CAP (1u << 20)

static void out_flush(struct out *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->failed = 1;
	o->len = 0;
}

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n > OUT_CAP)
		out_flush(o);
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void put_s(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_u64(struct out *o, uint64_t v)
{
	char d[24];
	size_t n = sizeof(d);

	do {
		d[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, d + n, sizeof(d) - n);
}

/* Epoch ns as us with three decimals and the TAB torch_npu puts after times and durations. */
static void put_us_tab(struct out *o, uint64_t ns)
{
	char d[4] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
		(char)('0' + ns % 10) };

	put_u64(o, ns / 1000);
	put(o, d, 4);
	put(o, "\t", 1);
}

/* bytes / 2^shift as Python's repr prints the float: exact here (every value is below 2^18 of
 * the unit with at most 11 binary decimals, so its exact decimal expansion is also its shortest
 * repr), at least one decimal ("1452.0"). */
static void put_units(struct out *o, uint64_t bytes, unsigned shift)
{
	uint64_t mask = (1ull << shift) - 1, frac = bytes & mask;
	char d[64];
	size_t n = 0;

	put_u64(o, bytes >> shift);
	d[n++] = '.';
	do {
		frac *= 10;
		d[n++] = (char)('0' + (frac >> shift));
		frac &= mask;
	} while (frac && n < sizeof(d));
	put(o, d, n);
}

/* A GE duration as msprof's Python exporter rounds it (2 decimals, no TAB): ns multiple of 10. */
static void put_dur2(struct out *o, uint64_t ns)
{
	char d[3] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10) };

	put_u64(o, ns / 1000);
	put(o, d, d[2] == '0' ? 2 : 3);
}

static void put_eol(struct out *o)
{
	put_s(o, o->eol);
}

/* ------------------------------------------------------------------------------------------ */
/* the simulation: run twice with the same seed, once per file */

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static uint64_t rnd_in(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rnd(s) % (hi - lo + 1);
}

enum ev_kind { EV_BLOCK_FREE, EV_FREE, EV_GE_ALLOC, EV_GE_FREE };

struct pending {
	uint64_t t, seq; /* when; ties in the order scheduled */
	uint64_t idx;	 /* the PTA row's serial or the GE row's index */
	uint64_t size;	 /* the block's bytes */
	enum ev_kind kind;
};

/* a PTA row waiting for its release; ns 0: none */
struct pta_row {
	uint64_t ta, tar, tr, size;
	uint64_t a_alloc, a_res, r_alloc, r_res; /* pool totals at allocation and release */
	unsigned op;
	int leak;
};

/* a GE row; release 0: none */
struct ge_row {
	uint64_t ta, tr, size;
	uint64_t a_alloc, a_res, r_alloc, r_res;
	unsigned name, num;
};

struct pool {
	uint64_t alloc, res;
};

struct sim {
	const struct gen_opts *o;
	int pass; /* 0: operator_memory, 1: memory_record */
	uint64_t rng;
	struct out *out;
	struct pool pta, ge;
	uint64_t n_pta, n_ge;

	struct pending *heap;
	size_t n_heap, cap_heap;
	uint64_t seq;

	/* pass 0: PTA rows from serial head to next, in a ring of cap_ring (a power of 2) */
	struct pta_row *ring;
	uint64_t head, next, cap_ring;
	struct ge_row *ges; /* n_ge of them (pass 0) */
	uint64_t ge_next;   /* GE blocks scheduled */

	/* APP samples: times and KB (written by pass 0, read by pass 1) */
	uint64_t *app_t, *app_kb, n_app, cap_app, t_app;

	/* events: counted by pass 0 (n_events); pass 1 writes `keep` of them, evenly spread, in
	 * at most `rows` rows (the last one may lack its PTA+GE row) */
	uint64_t n_events, ev, kept, keep, rows;
	int failed; /* out of memory */
};

static int heap_less(const struct pending *a, const struct pending *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void schedule(struct sim *s, uint64_t t, uint64_t idx, uint64_t size, enum ev_kind kind)
{
	size_t i;

	if (s->n_heap == s->cap_heap) {
		size_t cap = s->cap_heap ? 2 * s->cap_heap : 4096;
		struct pending *h = realloc(s->heap, cap * sizeof(*h));

		if (!h) {
			s->failed = 1;
			return;
		}
		s->heap = h;
		s->cap_heap = cap;
	}
	i = s->n_heap++;
	s->heap[i] = (struct pending){ t, s->seq++, idx, size, kind };
	while (i && heap_less(&s->heap[i], &s->heap[(i - 1) / 2])) {
		struct pending x = s->heap[i];

		s->heap[i] = s->heap[(i - 1) / 2];
		s->heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

static struct pending pop(struct sim *s)
{
	struct pending top = s->heap[0];
	size_t i = 0;

	s->heap[0] = s->heap[--s->n_heap];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < s->n_heap && heap_less(&s->heap[l], &s->heap[m]))
			m = l;
		if (l + 1 < s->n_heap && heap_less(&s->heap[l + 1], &s->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		struct pending x = s->heap[i];

		s->heap[i] = s->heap[m];
		s->heap[m] = x;
		i = m;
	}
	return top;
}

static struct pta_row *row_at(struct sim *s, uint64_t serial)
{
	return &s->ring[serial & (s->cap_ring - 1)];
}

/* Room for one more PTA row in the ring. */
static int ring_grow(struct sim *s)
{
	uint64_t cap = s->cap_ring ? 2 * s->cap_ring : 65536, i;
	struct pta_row *r;

	if (s->next - s->head < s->cap_ring)
		return 0;
	r = malloc(cap * sizeof(*r));
	if (!r)
		return -1;
	for (i = s->head; i < s->next; i++)
		r[i & (cap - 1)] = *row_at(s, i);
	free(s->ring);
	s->ring = r;
	s->cap_ring = cap;
	return 0;
}

/* One allocator event: pass 0 counts it, pass 1 writes it (when kept) and its PTA+GE sum. */
static void record(struct sim *s, int ge, uint64_t t)
{
	struct out *o = s->out;
	uint64_t j = s->ev++;

	if (s->pass == 0) {
		s->n_events++;
		return;
	}
	if (s->kept >= s->keep || (j + 1) * s->keep / s->n_events == j * s->keep / s->n_events)
		return;
	s->kept++;
	if (ge) {
		put_s(o, "GE,");
		put_us_tab(o, t);
		put(o, ",", 1);
		put_units(o, s->ge.alloc, 20);
		put(o, ",", 1);
		put_units(o, s->ge.res, 20);
		put_s(o, ",,,NPU:0");
	} else {
		put_s(o, "PTA,");
		put_us_tab(o, t);
		put(o, ",", 1);
		put_units(o, s->pta.alloc, 20);
		put(o, ",", 1);
		put_units(o, s->pta.res, 20);
		put(o, ",", 1);
		put_units(o, s->pta.alloc, 20);
		put_s(o, "," STREAM ",NPU:0");
	}
	put_eol(o);
	if (!--s->rows)
		return;
	s->rows--;
	put_s(o, "PTA+GE,");
	put_us_tab(o, t);
	put(o, ",", 1);
	put_units(o, s->pta.alloc + s->ge.alloc, 20);
	put(o, ",", 1);
	put_units(o, s->pta.res + s->ge.res, 20);
	put(o, ",", 1);
	put_units(o, s->pta.alloc, 20);
	put_s(o, "," STREAM ",NPU:0");
	put_eol(o);
}

/* The APP samples due by t: the pools' reserved bytes plus the runtime's. */
static void app_until(struct sim *s, uint64_t t)
{
	while (s->t_app <= t) {
		uint64_t kb = (s->pta.res + s->ge.res) / 1024 + APP_OVERHEAD_KB +
			      rnd_in(&s->rng, 0, 65535);

		if (s->pass == 0) {
			if (s->n_app == s->cap_app) {
				uint64_t cap = s->cap_app ? 2 * s->cap_app : 1024;
				uint64_t *a = realloc(s->app_t, cap * sizeof(*a));
				uint64_t *b = a ? realloc(s->app_kb, cap * sizeof(*b)) : NULL;

				if (a)
					s->app_t = a;
				if (!b) {
					s->failed = 1;
					return;
				}
				s->app_kb = b;
				s->cap_app = cap;
			}
			s->app_t[s->n_app] = s->t_app;
			s->app_kb[s->n_app++] = kb;
		}
		s->t_app += APP_EVERY_NS - 5000 + 10 * rnd_in(&s->rng, 0, 1000);
	}
}

static void write_pta_row(struct sim *s, const struct pta_row *r)
{
	struct out *o = s->out;

	if (r->op != EMPTY_OP)
		put_s(o, op_names[r->op]);
	put(o, ",", 1);
	put_units(o, r->size, 10);
	put(o, ",", 1);
	put_us_tab(o, r->ta);
	put(o, ",", 1);
	if (r->tr)
		put_us_tab(o, r->tr);
	put(o, ",", 1);
	if (r->tar)
		put_us_tab(o, r->tar);
	put(o, ",", 1);
	if (r->tr)
		put_us_tab(o, r->tr - r->ta);
	put(o, ",", 1);
	if (r->tar)
		put_us_tab(o, r->tar - r->ta);
	put(o, ",", 1);
	put_units(o, r->a_alloc, 20);
	put(o, ",", 1);
	put_units(o, r->a_res, 20);
	put(o, ",", 1);
	put_units(o, r->a_alloc, 20);
	put(o, ",", 1);
	if (r->tr || r->tar) {
		put_units(o, r->r_alloc, 20);
		put(o, ",", 1);
		put_units(o, r->r_res, 20);
		put(o, ",", 1);
		put_units(o, r->r_alloc, 20);
	} else {
		put(o, ",,", 2);
	}
	put_s(o, "," STREAM ",NPU:0");
	put_eol(o);
}

static void write_ge_row(struct sim *s, const struct ge_row *r)
{
	struct out *o = s->out;
	char num[16];

	snprintf(num, sizeof(num), "%u", r->num);
	put_s(o, "cann::");
	put_s(o, ge_names[r->name]);
	put_s(o, num);
	put(o, ",", 1);
	put_units(o, r->size, 10);
	put(o, ",", 1);
	put_us_tab(o, r->ta);
	put(o, ",", 1);
	if (r->tr)
		put_us_tab(o, r->tr);
	put_s(o, ",,");
	if (r->tr)
		put_dur2(o, r->tr - r->ta);
	put_s(o, ",,");
	put_units(o, r->a_alloc, 20);
	put(o, ",", 1);
	put_units(o, r->a_res, 20);
	put_s(o, ",,");
	if (r->tr) {
		put_units(o, r->r_alloc, 20);
		put(o, ",", 1);
		put_units(o, r->r_res, 20);
	} else {
		put(o, ",", 1);
	}
	put_s(o, ",,,NPU:0");
	put_eol(o);
}

/* Pass 0: write the PTA rows whose release is known, in allocation order (all at the end). */
static void flush_rows(struct sim *s, int all)
{
	if (s->pass != 0)
		return;
	while (s->head < s->next) {
		struct pta_row *r = row_at(s, s->head);

		if (!all && !r->leak && !r->tr)
			break;
		write_pta_row(s, r);
		s->head++;
	}
}

static void pta_grow(struct pool *p)
{
	if (p->alloc > p->res)
		p->res = (p->alloc + SEGMENT - 1) / SEGMENT * SEGMENT + SEGMENT;
}

static void run_event(struct sim *s, const struct pending *e)
{
	struct pta_row *r = s->pass == 0 && e->kind <= EV_FREE ? row_at(s, e->idx) : NULL;
	struct ge_row *g = s->pass == 0 && e->kind >= EV_GE_ALLOC ? &s->ges[e->idx] : NULL;

	switch (e->kind) {
	case EV_BLOCK_FREE:
		if (r) {
			r->tar = e->t;
			r->r_alloc = s->pta.alloc;
			r->r_res = s->pta.res;
		}
		record(s, 0, e->t);
		break;
	case EV_FREE:
		s->pta.alloc -= e->size;
		if (s->pta.res - s->pta.alloc > SHRINK_ABOVE) /* torch.npu.empty_cache() */
			s->pta.res =
				(s->pta.alloc + SEGMENT - 1) / SEGMENT * SEGMENT + (1ull << 30);
		if (r) {
			r->tr = e->t;
			r->r_alloc = s->pta.alloc;
			r->r_res = s->pta.res;
		}
		record(s, 0, e->t);
		break;
	case EV_GE_ALLOC: {
		uint64_t dur = 10 * rnd_in(&s->rng, 2000, 15000);
		unsigned name = (unsigned)(rnd(&s->rng) % N_GE_NAMES);

		s->ge.alloc += e->size;
		if (s->ge.res < GE_RESERVED0)
			s->ge.res = GE_RESERVED0;
		if (s->ge.alloc > s->ge.res)
			s->ge.res = (s->ge.alloc + 2 * MIB - 1) / (2 * MIB) * (2 * MIB);
		if (g)
			*g = (struct ge_row){ .ta = e->t,
				.size = e->size,
				.a_alloc = s->ge.alloc,
				.a_res = s->ge.res,
				.name = name,
				.num = (unsigned)(e->idx % 97) };
		schedule(s, e->t + dur, e->idx, e->size, EV_GE_FREE);
		record(s, 1, e->t);
		break;
	}
	case EV_GE_FREE:
		s->ge.alloc -= e->size;
		if (g) {
			g->tr = e->t;
			g->r_alloc = s->ge.alloc;
			g->r_res = s->ge.res;
		}
		record(s, 1, e->t);
		break;
	}
}

/* The pending events before t (at or before t when `incl`), in time order. */
static void drain(struct sim *s, uint64_t t, int incl)
{
	while (s->n_heap && (s->heap[0].t < t || (incl && s->heap[0].t == t))) {
		struct pending e = pop(s);

		app_until(s, e.t);
		run_event(s, &e);
	}
	app_until(s, t);
	flush_rows(s, 0);
}

/* A PTA block's bytes: mostly small, a few up to 32 MB; leaks are up to 64 KB. */
static uint64_t pta_size(struct sim *s, int leak)
{
	uint64_t r = rnd(&s->rng) % 1000;

	if (leak)
		return 512 * rnd_in(&s->rng, 1, 128);
	if (r < 400)
		return 512 * rnd_in(&s->rng, 1, 16);
	if (r < 750)
		return 512 * rnd_in(&s->rng, 17, 1024);
	if (r < 960)
		return 512 * rnd_in(&s->rng, 1025, 16384);
	return 512 * rnd_in(&s->rng, 16385, 65536);
}

/* A freed PTA block's lifetime in ns (multiple of 10): 70% up to 2 ms, 27% up to 100 ms, 3% (not
 * the 8 MB and larger ones) up to 2 s. */
static uint64_t pta_life(struct sim *s, uint64_t size)
{
	uint64_t r = rnd(&s->rng) % 1000;

	if (r < 700)
		return 10 * rnd_in(&s->rng, 500, 200000);
	if (r < 970 || size >= 8 * MIB)
		return 10 * rnd_in(&s->rng, 200000, 10000000);
	return 10 * rnd_in(&s->rng, 20000000, 200000000);
}

static void pta_alloc(struct sim *s, uint64_t t)
{
	int leak = rnd(&s->rng) % 1000 < LEAK_PER_MILLE;
	uint64_t a = rnd(&s->rng) % N_OPS, b = rnd(&s->rng) % N_OPS, e = rnd(&s->rng) % 1000;
	unsigned op = (unsigned)(a * b / N_OPS); /* skewed to the first names */
	uint64_t size = pta_size(s, leak), serial = s->next;

	if (leak)
		op = leak_ops[a % N_LEAK_OPS];
	else if (e < EMPTY_NAME_PER_MILLE)
		op = EMPTY_OP;
	s->pta.alloc += size;
	pta_grow(&s->pta);
	if (s->pass == 0) {
		if (ring_grow(s)) {
			s->failed = 1;
			return;
		}
		*row_at(s, serial) = (struct pta_row){ .ta = t,
			.size = size,
			.a_alloc = s->pta.alloc,
			.a_res = s->pta.res,
			.op = op,
			.leak = leak };
	}
	s->next++;
	record(s, 0, t);
	if (!leak) {
		uint64_t life = pta_life(s, size), gap = 10 * rnd_in(&s->rng, 100, 500);

		if (gap > life / 2)
			gap = life / 2 / 10 * 10;
		schedule(s, t + life - gap, serial, size, EV_BLOCK_FREE);
		schedule(s, t + life, serial, size, EV_FREE);
	}
}

/* One run of the whole window: pass 0 writes operator_memory, pass 1 memory_record's events. */
static int simulate(struct sim *s)
{
	uint64_t t = T0_NS, i;

	s->rng = s->o->seed;
	s->pta = (struct pool){ BASE_ALLOCATED, 0 };
	pta_grow(&s->pta);
	s->pta.res += 2ull << 30;
	s->ge = (struct pool){ 0, 0 };
	s->n_heap = 0;
	s->seq = s->head = s->next = s->ge_next = s->ev = s->kept = 0;
	s->t_app = T0_NS + 8000000;
	for (i = 0; i < s->n_pta && !s->failed; i++) {
		t += 10 * rnd_in(&s->rng, 200, 3800);
		/* GE blocks spread evenly among the PTA ones, each just after one */
		while (s->ge_next < s->n_ge && s->ge_next * s->n_pta <= i * s->n_ge) {
			schedule(s, t + 10 * rnd_in(&s->rng, 100, 2000), s->ge_next,
				65536 * rnd_in(&s->rng, 1, 800), EV_GE_ALLOC);
			s->ge_next++;
		}
		drain(s, t, 0);
		pta_alloc(s, t);
	}
	drain(s, t + END_AFTER_NS, 1);
	flush_rows(s, 1);
	return s->failed ? -1 : 0;
}

static void sim_free(struct sim *s)
{
	free(s->heap);
	free(s->ring);
	free(s->ges);
	free(s->app_t);
	free(s->app_kb);
}

/* ------------------------------------------------------------------------------------------ */

static int open_out(struct out *o, const char *path, int crlf)
{
	o->f = fopen(path, "wb");
	o->buf = malloc(OUT_CAP);
	o->len = 0;
	o->eol = crlf ? "\r\n" : "\n";
	o->failed = 0;
	if (!o->f || !o->buf) {
		fprintf(stderr, "gen_msprof: %s: %s\n", path, strerror(errno));
		if (o->f)
			fclose(o->f);
		free(o->buf);
		return -1;
	}
	return 0;
}

static int close_out(struct out *o, const char *path)
{
	out_flush(o);
	if (fclose(o->f) || o->failed) {
		fprintf(stderr, "gen_msprof: %s: write failed\n", path);
		o->failed = 1;
	}
	free(o->buf);
	return o->failed ? -1 : 0;
}

static int gen(const struct gen_opts *opt, const char *dir)
{
	struct sim s = { .o = opt };
	struct out o;
	char path[4096];
	uint64_t i, budget;
	int rc = -1;

	s.n_ge = opt->rows * GE_PERCENT / 100;
	s.n_pta = opt->rows - s.n_ge;
	s.ges = calloc(s.n_ge ? s.n_ge : 1, sizeof(*s.ges));
	if (!s.ges)
		goto out;
	if ((mkdir(dir, 0777) && errno != EEXIST) ||
		(snprintf(path, sizeof(path), "%s/ASCEND_PROFILER_OUTPUT", dir),
			mkdir(path, 0777) && errno != EEXIST)) {
		fprintf(stderr, "gen_msprof: %s: %s\n", dir, strerror(errno));
		goto out;
	}

	snprintf(path, sizeof(path), "%s/ASCEND_PROFILER_OUTPUT/operator_memory.csv", dir);
	if (open_out(&o, path, opt->crlf))
		goto out;
	s.out = &o;
	put_s(&o, "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),"
		  "Duration(us),Active Duration(us),Allocation Total Allocated(MB),"
		  "Allocation Total Reserved(MB),Allocation Total Active(MB),"
		  "Release Total Allocated(MB),Release Total Reserved(MB),"
		  "Release Total Active(MB),Stream Ptr,Device Type");
	put_eol(&o);
	s.pass = 0;
	if (simulate(&s))
		fprintf(stderr, "gen_msprof: out of memory\n");
	for (i = 0; i < s.n_ge && !s.failed; i++)
		write_ge_row(&s, &s.ges[i]);
	if (close_out(&o, path) || s.failed)
		goto out;

	snprintf(path, sizeof(path), "%s/ASCEND_PROFILER_OUTPUT/memory_record.csv", dir);
	if (open_out(&o, path, opt->crlf))
		goto out;
	put_s(&o, "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),"
		  "Stream Ptr,Device Type");
	put_eol(&o);
	for (i = 0; i < s.n_app && i < opt->records; i++) {
		put_s(&o, "APP,");
		put_us_tab(&o, s.app_t[i]);
		put(&o, ",,", 2);
		put_units(&o, s.app_kb[i], 10);
		put_s(&o, ",,,NPU:0");
		put_eol(&o);
	}
	budget = opt->records > s.n_app ? opt->records - s.n_app : 0;
	s.keep = (budget + 1) / 2 < s.n_events ? (budget + 1) / 2 : s.n_events;
	s.rows = budget;
	s.pass = 1;
	if (s.keep && simulate(&s))
		fprintf(stderr, "gen_msprof: out of memory\n");
	if (close_out(&o, path) || s.failed)
		goto out;
	fprintf(stderr,
		"gen_msprof: %s: %" PRIu64 " operator_memory rows (%" PRIu64 " cann::), %" PRIu64
		" memory_record rows (%" PRIu64 " APP, %" PRIu64 " of %" PRIu64 " events)\n",
		dir, opt->rows, s.n_ge,
		(s.n_app < opt->records ? s.n_app : opt->records) + budget - s.rows, s.n_app,
		s.kept, s.n_events);
	rc = 0;
out:
	sim_free(&s);
	return rc;
}

/* --read: the benchmark's baseline, every byte of each file through read(2) in 1 MiB pieces. */
static int read_files(char **paths, int n)
{
	static char buf[1 << 20];
	uint64_t total = 0;
	int i, rc = 0;

	for (i = 0; i < n && !rc; i++) {
		int fd = open(paths[i], O_RDONLY);
		ssize_t got = 0;

		if (fd < 0) {
			fprintf(stderr, "gen_msprof: %s: %s\n", paths[i], strerror(errno));
			return -1;
		}
		while ((got = read(fd, buf, sizeof(buf))) > 0)
			total += (uint64_t)got;
		if (got < 0) {
			fprintf(stderr, "gen_msprof: %s: %s\n", paths[i], strerror(errno));
			rc = -1;
		}
		close(fd);
	}
	if (!rc)
		printf("%" PRIu64 "\n", total);
	return rc;
}

static const struct option long_opts[] = {
	{ "rows", required_argument, NULL, 'n' },
	{ "records", required_argument, NULL, 'm' },
	{ "seed", required_argument, NULL, 's' },
	{ "crlf", no_argument, NULL, 'r' },
	{ "read", no_argument, NULL, 'R' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gen_msprof [options] DIR_ascend_pt\n"
		"       gen_msprof --read FILE...\n"
		"Writes DIR_ascend_pt/ASCEND_PROFILER_OUTPUT/{operator_memory,memory_record}.csv;\n"
		"with --read, reads the FILEs with read(2) alone and prints their bytes.\n"
		"  -n, --rows N      operator_memory rows (%" PRIu64 ")\n"
		"  -m, --records N   memory_record rows (%" PRIu64 ")\n"
		"  -s, --seed N      random sequence (%" PRIu64 ")\n"
		"  -r, --crlf        CRLF line ends (LF)\n"
		"      --read        read FILEs, write nothing (the benchmark's baseline)\n"
		"  -h, --help        this help\n",
		gen_defaults.rows, gen_defaults.records, gen_defaults.seed);
}

/* A whole decimal number, 0 or -1. */
static int parse_count(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct gen_opts o = gen_defaults;
	uint64_t *field;
	int c;

	while ((c = getopt_long(argc, argv, "n:m:s:rh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			field = &o.rows;
			break;
		case 'm':
			field = &o.records;
			break;
		case 's':
			field = &o.seed;
			break;
		case 'r':
			o.crlf = 1;
			continue;
		case 'R':
			o.read_only = 1;
			continue;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (parse_count(optarg, field)) {
			fprintf(stderr, "gen_msprof: -%c: bad number '%s'\n", c, optarg);
			return 2;
		}
	}
	if (o.read_only && optind < argc)
		return read_files(argv + optind, argc - optind) ? 4 : 0;
	if (o.read_only || optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	return gen(&o, argv[optind]) ? 4 : 0;
}
