/* gen_ranks: writes msMemScope output trees of many ranks for memscope-batch: a small tree with
 * planted outliers and broken files for tests/batch/test_batch.sh, and big inputs for
 * tests/bench/bench_batch.sh. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench/gen_training.h"

/*
 * The trees. Every input is one device of one rank's process, in msMemScope's layout:
 * OUT/rank<R>/msmemscope_<pid>_<ts>_ascend/device_<D>/dump/memscope_dump_<ts>.csv. Its rows are
 * a PyTorch training loop written through bench_dump.h, with the process, thread and device ids
 * of the rank (bench_dump.h writes its own; a filter on the file rewrites them). Every rank holds
 * the same model: weights of the same sizes, made before the first step and alive to the end,
 * and an optimizer state per weight made in the first step. Everything an op makes is freed by
 * the end of its step, so the live bytes at every step end after the first are the same, except
 * where something is planted:
 * - a step leak: a block made in every step and never freed;
 * - a big block made at the first op of a step and freed at its last (an outsized peak).
 *
 * `tree OUT`: 64 ranks of 2 devices each (D = 2R % 8 and 2R % 8 + 1), 8 steps, 70-115 KB each.
 *   Ranks 5, 23 and 42 leak 4 MiB per step on both devices; rank 17's first device holds
 *   2.5 GiB through step 4 (3.9x the others' peak). Ranks R % 3 == 2 have no ACCESS rows. The
 *   first device of ranks 3, 19, 35, 51 and the second of rank 42 have a python_trace file beside
 *   the dump. The second device of rank 30 has an invalid size ("12x") in a MALLOC row in the
 *   middle; the first device of rank 50 is an empty file.
 * `bench OUT N SIZE_MB [JOBS]`: N inputs of about SIZE_MB MB each (rank R, device R % 8; one in
 *   16 ranks leaks, all with ACCESS rows), written by JOBS processes (1). A file already there
 *   with a size that generator could have written is kept: a file is written under a hidden
 *   name and renamed when complete.
 * The bytes depend only on the arguments: the same on every run.
 */

#define N_RANKS 64
#define MAX_WEIGHTS 512
#define MAX_TRACE_STEPS 64
#define GIB (1024 * MIB)
#define PID_BASE 3290000u
#define TID_BWD_DELTA (TID_BWD - TID_MAIN)
#define MODEL_SEED 20251203u
#define ACCESS_ROW_BYTES 229		   /* about, in the bench inputs */
#define TS_BASE_S (9 * 3600 + 1 * 60 + 23) /* 09:01:23, the time of day in the names */

/* what every input of a tree has */
struct shape {
	unsigned n_weights;	   /* model weights */
	uint64_t weight_min;	   /* their sizes: weight_min + a multiple of 512 KiB below */
	uint64_t weight_span;	   /* ... weight_span */
	unsigned ops_per_step;	   /* aten ops per step */
	unsigned steps;		   /* steps, or 0: as many as `bytes` needs */
	uint64_t bytes;		   /* with steps 0: the file holds about this many bytes */
	unsigned stack_pct;	   /* percent of PTA MALLOC rows with call stacks */
	uint64_t act_max_octave;   /* activations are 512 B << (0 .. this - 1), and up to twice */
	unsigned access_per_mille; /* of the accesses made, those written (with ACCESS rows) */
};

static const struct shape tree_shape = {
	.n_weights = 12,
	.weight_min = 16 * MIB,
	.weight_span = 48 * MIB,
	.ops_per_step = 12,
	.steps = 8,
	.stack_pct = 10,
	.act_max_octave = 13,
	/* few ACCESS rows: the events of inputs with and without them stay within a quarter of
	 * their median, so that events do not set them apart (memscope-batch's stand out) */
	.access_per_mille = 150,
};
/* a model and step the size of gen_training.h's; .bytes set from SIZE_MB */
static const struct shape bench_shape = {
	.n_weights = 300,
	.weight_min = 512 * 1024,
	.weight_span = 16 * MIB,
	.ops_per_step = 700,
	.steps = 0,
	.stack_pct = 8,
	.act_max_octave = 15,
	.access_per_mille = 1000,
};

/* what one input is given */
struct plant {
	unsigned rank, dev; /* dev: the device id */
	uint64_t seed;
	int access;	    /* ACCESS rows written */
	uint64_t leak_size; /* a block this big made in every step, never freed (0: none) */
	uint64_t big_size;  /* a block this big held through step big_step (0: none) */
	unsigned big_step;
	int trace; /* a python_trace file beside the dump */
};

/* ------------------------------------------------------------------------------------------ */
/* the filter: the dump's process, thread and device ids replaced by the rank's */

struct filter {
	FILE *out;
	char pid[16], tid_bwd[16], dev[16];
	char field[32]; /* the id field being read */
	size_t field_len;
	unsigned n_field; /* of the row, from 0 */
	int quoted;
	uint64_t bytes; /* written to out */
};

/* The field just read, replaced when it is one of bench_dump.h's ids, written out. */
static void filter_put_field(struct filter *f)
{
	static const char pid[] = "3290097", bwd[] = "3291992";
	const char *s = f->field;
	size_t n = f->field_len;

	if (f->n_field <= 6 && n == sizeof(pid) - 1 && !memcmp(s, pid, n))
		s = f->pid;
	else if (f->n_field == 6 && n == sizeof(bwd) - 1 && !memcmp(s, bwd, n))
		s = f->tid_bwd;
	else if (f->n_field == 7 && n == 1 && *s == '0')
		s = f->dev;
	if (s != f->field)
		n = strlen(s);
	fwrite(s, 1, n, f->out);
	f->bytes += n;
	f->field_len = 0;
}

/* fopencookie's write: the rows through with the ids of fields 5 to 7 (Process Id, Thread Id,
 * Device Id: never quoted, bench_dump.h writes no quote before them) replaced; every byte
 * taken, or 0 on a write error. */
static ssize_t filter_write(void *cookie, const char *buf, size_t len)
{
	struct filter *f = cookie;
	size_t i, from = 0; /* buf[from..i) is still to be written as it is */

	for (i = 0; i < len; i++) {
		char c = buf[i];

		if (f->n_field >= 5 && f->n_field <= 7 && !f->quoted) {
			fwrite(buf + from, 1, i - from, f->out);
			f->bytes += i - from;
			from = i;
			if (c != ',' && c != '\n' && f->field_len < sizeof(f->field)) {
				f->field[f->field_len++] = c;
				from = i + 1;
				continue;
			}
			filter_put_field(f);
		}
		if (c == '"')
			f->quoted = !f->quoted;
		else if (c == ',' && !f->quoted)
			f->n_field++;
		else if (c == '\n' && !f->quoted)
			f->n_field = 0;
	}
	fwrite(buf + from, 1, len - from, f->out);
	f->bytes += len - from;
	return ferror(f->out) ? 0 : (ssize_t)len;
}

static int filter_close(void *cookie)
{
	struct filter *f = cookie;
	int rc = ferror(f->out) ? -1 : 0;

	if (fclose(f->out))
		rc = -1;
	free(f);
	return rc;
}

/* A FILE writing to path through a filter for input p, or NULL. *fp gets the filter (its bytes
 * count what reached the file; fclose of the FILE frees it). */
static FILE *filter_open(const char *path, const struct plant *p, struct filter **fp)
{
	static const cookie_io_functions_t io = { NULL, filter_write, NULL, filter_close };
	struct filter *f = calloc(1, sizeof(*f));
	unsigned pid = PID_BASE + 101 * p->rank;
	FILE *file;

	if (!f)
		return NULL;
	snprintf(f->pid, sizeof(f->pid), "%u", pid);
	snprintf(f->tid_bwd, sizeof(f->tid_bwd), "%u", pid + TID_BWD_DELTA);
	snprintf(f->dev, sizeof(f->dev), "%u", p->dev);
	if (!(f->out = fopen(path, "w"))) {
		free(f);
		return NULL;
	}
	if (!(file = fopencookie(f, "w", io))) {
		fclose(f->out);
		free(f);
		return NULL;
	}
	setvbuf(file, NULL, _IOFBF, 1 << 16);
	*fp = f;
	return file;
}

/* ------------------------------------------------------------------------------------------ */
/* the training loop */

struct gen {
	struct dump d; /* first: gen_free_read finds the struct gen from it */
	const struct shape *sh;
	const struct plant *p;
	struct filter *filter;
	uint64_t weight_size[MAX_WEIGHTS];
	uint32_t weight[MAX_WEIGHTS], state[MAX_WEIGHTS];
	uint32_t recent[N_RECENT];
	uint64_t recent_aid[N_RECENT];
	unsigned n_recent;
	/* for the python_trace: the times of each step's start, forward end, backward end, end */
	uint64_t step_ts[MAX_TRACE_STEPS][4];
	uint64_t last_ts;
	uint64_t n_access; /* ACCESS rows added, written or held with their block */
};
_Static_assert(offsetof(struct gen, d) == 0, "gen_free_read casts a struct dump to its gen");

/* An ACCESS of block s (SLOT_NONE: none) by op when the input has them. */
static void gen_access(struct gen *g, uint32_t s, unsigned op, int write, uint32_t tid)
{
	if (g->p->access && s != SLOT_NONE &&
		(g->sh->access_per_mille >= 1000 || dump_chance(g->sh->access_per_mille))) {
		dump_add_access(&g->d, s, op, write, tid);
		g->n_access++;
	}
}

/* A PTA block freed at op `due` (DUE_END: alive until the end), written by op when there are
 * accesses. Its slot, or SLOT_NONE. */
static uint32_t gen_malloc(struct gen *g, uint64_t size, uint64_t due, unsigned op, uint32_t tid)
{
	uint32_t s;

	dump_reserve(&g->d, size, tid);
	dump_tick(&g->d, 3000);
	if ((s = dump_take_slot(&g->d)) == SLOT_NONE)
		return s;
	dump_pta_block(&g->d, s, size, due, tid);
	gen_access(g, s, op, 1, tid);
	return s;
}

/* d->free_read, dump_free_due's read of a block before its free: an ACCESS as gen_access adds
 * them (d is the first member of a struct gen). */
static void gen_free_read(struct dump *d, uint32_t s, unsigned op, int write, uint32_t tid)
{
	gen_access((struct gen *)d, s, op, write, tid);
}

/* The back-th latest activation if still alive, else SLOT_NONE. */
static uint32_t gen_recent(const struct gen *g, unsigned back)
{
	unsigned i = (g->n_recent + 2 * N_RECENT - 1 - back) % N_RECENT;
	uint32_t s = g->recent[i];

	return s != SLOT_NONE && g->d.b[s].live && g->d.b[s].alloc_id == g->recent_aid[i]
		       ? s
		       : SLOT_NONE;
}

/* Sizes of activations: about log-uniform from 512 B up, 512-aligned. */
static uint64_t gen_act_size(const struct gen *g)
{
	unsigned octave = (unsigned)dump_rand_below(g->sh->act_max_octave);

	return ((512ull << octave) + dump_rand_below(512ull << octave)) & ~511ull;
}

/* One aten op, the in_step-th of a step whose last op is `last`: START, maybe a kernel, its
 * reads, the blocks it makes (all freed by `last`), the frees due now, END. */
static void gen_op(struct gen *g, unsigned in_step, uint64_t last)
{
	struct dump *d = &g->d;
	const struct shape *sh = g->sh;
	unsigned fwd_end = sh->ops_per_step * 45 / 100, bwd_end = sh->ops_per_step * 90 / 100;
	unsigned op = in_step < bwd_end ? (unsigned)((d->op * 5 + d->op / 13) % N_OPS)
					: OP_OPTIM + (unsigned)(d->op % 5);
	uint32_t tid = in_step >= fwd_end && in_step < bwd_end ? TID_BWD : TID_MAIN;
	unsigned n = (unsigned)dump_rand_below(3), i;

	dump_row_op(d, "ATEN_START", op, tid);
	if (dump_chance(500))
		dump_row_kernel(d, op, tid);
	if (g->p->big_size && d->step == g->p->big_step && in_step == 0)
		gen_malloc(g, g->p->big_size, last, op, tid);
	if (g->p->leak_size && in_step == 1)
		gen_malloc(g, g->p->leak_size, DUE_END, op, tid);
	if (in_step < bwd_end) {
		/* backward reads the weights of the mirror forward op */
		unsigned j = in_step < fwd_end ? in_step : bwd_end - 1 - in_step;

		if (dump_chance(800))
			gen_access(g, gen_recent(g, 0), op, 0, tid);
		gen_access(g, g->weight[j % sh->n_weights], op, 0, tid);
		while (n--) {
			uint64_t due = d->op + 1 + dump_rand_below(8);
			uint32_t s;

			if (in_step < fwd_end && dump_chance(450)) /* saved for backward */
				due = d->op + (bwd_end - 1 - 2 * in_step) + dump_rand_below(4);
			s = gen_malloc(g, gen_act_size(g), due < last ? due : last, op, tid);
			if (s == SLOT_NONE)
				continue;
			g->recent[g->n_recent % N_RECENT] = s;
			g->recent_aid[g->n_recent++ % N_RECENT] = d->b[s].alloc_id;
		}
	} else {
		/* the optimizer: each op updates its share of the weights, whose states are made in
		 * the first step */
		unsigned n_optim = sh->ops_per_step - bwd_end;

		for (i = in_step - bwd_end; i < sh->n_weights; i += n_optim) {
			if (g->state[i] == SLOT_NONE) {
				g->state[i] = gen_malloc(g, g->weight_size[i], DUE_END, op, tid);
			} else {
				gen_access(g, g->state[i], op, 0, tid);
				gen_access(g, g->state[i], op, 1, tid);
			}
			gen_access(g, g->weight[i], op, 1, tid);
		}
	}
	dump_free_due(d, op, tid);
	dump_row_op(d, "ATEN_END", op, tid);
	d->op++;
}

/* One step in its mstx range; its times kept for the python_trace. */
static void gen_step(struct gen *g)
{
	struct dump *d = &g->d;
	unsigned ops = g->sh->ops_per_step, i;
	uint64_t last = d->op + ops - 1, *ts;

	dump_step_start(d);
	ts = d->step <= MAX_TRACE_STEPS ? g->step_ts[d->step - 1] : NULL;
	if (ts)
		ts[0] = d->ts;
	for (i = 0; i < ops; i++) {
		gen_op(g, i, last);
		if (ts && i == ops * 45 / 100 - 1)
			ts[1] = d->ts;
		if (ts && i == ops * 90 / 100 - 1)
			ts[2] = d->ts;
	}
	dump_step_end(d);
	if (ts)
		ts[3] = d->ts;
}

/* The sizes of the model's weights: the same on every rank. */
static void gen_model(struct gen *g)
{
	uint64_t rng = MODEL_SEED;
	unsigned i;

	for (i = 0; i < g->sh->n_weights; i++)
		g->weight_size[i] =
			g->sh->weight_min +
			bench_rand(&rng) % (g->sh->weight_span / (512 * 1024)) * (512 * 1024);
}

/*
 * The dump of input p at path: weights loaded, the steps, the blocks still alive with their
 * shadow frees. 0, or -1 after saying why on stderr.
 */
static int gen_dump(struct gen *g, const char *path)
{
	struct dump *d = &g->d;
	struct dump_counts k;
	unsigned i;
	int rc;

	/* dump_open writes its header and START_TRACE to a file of its own: they are written
	 * again to the filter, which then takes every row */
	rc = dump_open(d, "/dev/null", g->p->seed, g->sh->stack_pct, &training_frames);
	if (!rc) {
		fclose(d->f);
		d->f = filter_open(path, g->p, &g->filter);
		d->free_read = gen_free_read;
		if (!d->f)
			rc = -1;
	}
	if (!rc) {
		fputs("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,"
		      "Attr,Call Stack(Python),Call Stack(C)\n",
			d->f);
		fprintf(d->f, "%" PRIu64 ",SYSTEM,START_TRACE,N/A,%" PRIu64 ",%u,%u,N/A,N/A,,,\n",
			d->id, d->ts, PID, TID_MAIN);
		for (i = 0; i < N_RECENT; i++)
			g->recent[i] = SLOT_NONE;
		for (i = 0; i < g->sh->n_weights;
			i++) { /* each weight made, then written by a copy_ */
			g->state[i] = SLOT_NONE;
			dump_row_op(d, "ATEN_START", OP_COPY, TID_MAIN);
			g->weight[i] = gen_malloc(g, g->weight_size[i], DUE_END, OP_COPY, TID_MAIN);
			dump_row_op(d, "ATEN_END", OP_COPY, TID_MAIN);
		}
		for (;;) {
			/* the ACCESS rows of live blocks are written with them, at their end */
			uint64_t held = g->n_access - d->k.reads - d->k.writes;

			if (g->sh->steps ? d->step >= g->sh->steps
					 : g->filter->bytes + held * ACCESS_ROW_BYTES >=
						   g->sh->bytes)
				break;
			gen_step(g);
			if (fflush(d->f) || d->oom)
				break;
		}
		g->last_ts = d->ts;
	}
	if (dump_end(d, rc, &k)) {
		fprintf(stderr, "gen_ranks: %s: %s\n", path, errno ? strerror(errno) : "failed");
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* files and folders */

/* mkdir -p of the folder of path. 0 or -1. */
static int make_parents(const char *path)
{
	char buf[4096];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

/* HHMMSS, the time of day s seconds after TS_BASE_S, into buf */
static void time_of_day(char *buf, size_t n, unsigned s)
{
	s = (TS_BASE_S + s) % 86400;
	snprintf(buf, n, "%02u%02u%02u", s / 3600, s / 60 % 60, s % 60);
}

/* The folder of input p's files under out:
 * OUT/rank<R>/msmemscope_<pid>_<ts>_ascend/device_<D>/dump, and the stamp of its files into stamp.
 */
static void input_dir(
	char *buf, size_t n, char *stamp, size_t stamp_n, const char *out, const struct plant *p)
{
	char t0[8], t1[8];

	time_of_day(t0, sizeof(t0), 7 * p->rank);
	time_of_day(t1, sizeof(t1), 7 * p->rank + 1 + p->dev % 2);
	snprintf(buf, n, "%s/rank%u/msmemscope_%u_20251203%s_ascend/device_%u/dump", out, p->rank,
		PID_BASE + 101 * p->rank, t0, p->dev);
	snprintf(stamp, stamp_n, "20251203%s", t1);
}

/* A python_trace file beside the dump (formats/python-trace.md): the training script's frames
 * per step, one open when tracing started and one still open when it stopped. 0 or -1. */
static int write_trace(const struct gen *g, const char *path)
{
	unsigned pid = PID_BASE + 101 * g->p->rank, tid_bwd = pid + TID_BWD_DELTA;
	unsigned steps = g->d.step < MAX_TRACE_STEPS ? (unsigned)g->d.step : MAX_TRACE_STEPS, i;
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (!f)
		return -1;
	fputs("FuncInfo,StartTime(ns),EndTime(ns),Thread Id,Process Id\n", f);
	for (i = 0; i < steps; i++) {
		const uint64_t *ts = g->step_ts[i];

		fprintf(f, "nn.Module: Transformer,%" PRIu64 ",%" PRIu64 ",%u,%u\n", ts[0] + 10,
			ts[1], pid, pid);
		fprintf(f,
			"<built-in method run_backward of torch._C._EngineBase object at "
			"0x7f3a2c1b4e60>,%" PRIu64 ",%" PRIu64 ",%u,%u\n",
			ts[1] + 10, ts[2], tid_bwd, pid);
		fprintf(f,
			"/usr/lib/python3.9/site-packages/torch/optim/adamw.py(150): step,%" PRIu64
			",%" PRIu64 ",%u,%u\n",
			ts[2] + 10, ts[3] - 10, pid, pid);
		fprintf(f, "/home/user/train.py(120): train_step,%" PRIu64 ",%" PRIu64 ",%u,%u\n",
			ts[0], ts[3], pid, pid);
	}
	fprintf(f, "start: /home/user/train.py(200): main,N/A,%" PRIu64 ",%u,%u\n", g->last_ts, pid,
		pid);
	fprintf(f, "/home/user/train.py(210): save_checkpoint,%" PRIu64 ",N/A,%u,%u\n",
		g->last_ts - 5, pid, pid);
	if (ferror(f))
		rc = -1;
	if (fclose(f))
		rc = -1;
	return rc;
}

/* The size of the PTA MALLOC row in the middle of the file at path replaced by "12x". 0 or -1. */
static int corrupt_size(const char *path)
{
	FILE *f = fopen(path, "r+");
	char *buf = NULL, *row, *size, *end;
	long n = -1;
	int rc = -1;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
		(buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = 0;
		row = strstr(buf + n / 2, ",MALLOC,PTA,");
		size = row ? strstr(row, ",size:") : NULL;
		if (size) {
			size += 6;
			end = size + strspn(size, "0123456789");
			/* the digits become "12x" and the rest of the file moves up */
			memcpy(size, "12x", 3);
			memmove(size + 3, end, (size_t)(buf + n - end) + 1);
			n = (long)strlen(buf);
			if (!fseek(f, 0, SEEK_SET) && fwrite(buf, 1, (size_t)n, f) == (size_t)n &&
				!ftruncate(fileno(f), n))
				rc = 0;
		}
	}
	free(buf);
	if (f && fclose(f))
		rc = -1;
	if (rc)
		fprintf(stderr, "gen_ranks: %s: cannot plant the bad size\n", path);
	return rc;
}

/* The input p under out, through a struct gen on the heap (it is large). 0 or -1. */
static int write_input(
	const struct shape *sh, const struct plant *p, const char *path, const char *trace_path)
{
	struct gen *g = calloc(1, sizeof(*g));
	int rc = -1;

	if (g) {
		g->sh = sh;
		g->p = p;
		gen_model(g);
		rc = gen_dump(g, path);
		if (!rc && trace_path && write_trace(g, trace_path)) {
			fprintf(stderr, "gen_ranks: %s: %s\n", trace_path, strerror(errno));
			rc = -1;
		}
	}
	free(g);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the two modes */

static int write_tree(const char *out)
{
	unsigned r, i;

	for (r = 0; r < N_RANKS; r++) {
		for (i = 0; i < 2; i++) {
			struct plant p = { r, (2 * r + i) % 8, 1000 + 2 * r + i, r % 3 != 2, 0, 0,
				0, 0 };
			char dir[4096], stamp[32], path[4200], trace[4200];

			if (r == 5 || r == 23 || r == 42)
				p.leak_size = 4 * MIB;
			if (r == 17 && i == 0) {
				p.big_size = 5 * GIB / 2;
				p.big_step = 4;
			}
			p.trace = (i == 0 && r % 16 == 3) || (r == 42 && i == 1);
			input_dir(dir, sizeof(dir), stamp, sizeof(stamp), out, &p);
			snprintf(path, sizeof(path), "%s/memscope_dump_%s.csv", dir, stamp);
			snprintf(trace, sizeof(trace), "%s/python_trace_%s.csv", dir, stamp);
			if (make_parents(path)) {
				fprintf(stderr, "gen_ranks: %s: %s\n", dir, strerror(errno));
				return 4;
			}
			if (r == 50 && i == 0) { /* the empty file */
				FILE *f = fopen(path, "w");

				if (!f || fclose(f)) {
					fprintf(stderr, "gen_ranks: %s: %s\n", path,
						strerror(errno));
					return 4;
				}
				continue;
			}
			if (write_input(&tree_shape, &p, path, p.trace ? trace : NULL))
				return 4;
			if (r == 30 && i == 1 && corrupt_size(path))
				return 4;
		}
	}
	return 0;
}

/* Bench input r under out, unless a complete one is there already (*reused set). 0 or -1. */
static int write_bench_input(const char *out, unsigned r, uint64_t bytes, int *reused)
{
	struct shape sh = bench_shape;
	struct plant p = { r, r % 8, 5000 + r, 1, r % 16 == 5 ? 4 * MIB : 0, 0, 0, 0 };
	char dir[4096], stamp[32], path[4200], tmp[4200];
	struct stat sb;

	sh.bytes = bytes;
	input_dir(dir, sizeof(dir), stamp, sizeof(stamp), out, &p);
	snprintf(path, sizeof(path), "%s/memscope_dump_%s.csv", dir, stamp);
	snprintf(tmp, sizeof(tmp), "%s/.memscope_dump_%s.csv.tmp", dir, stamp);
	/* what the generator writes: about `bytes` (the rows held to the end are estimated), and
	 * at most a step more */
	*reused = !stat(path, &sb) && (uint64_t)sb.st_size >= bytes - bytes / 10 &&
		  (uint64_t)sb.st_size <= bytes + bytes / 10 + 4 * MIB;
	if (*reused)
		return 0;
	if (make_parents(path)) {
		fprintf(stderr, "gen_ranks: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (write_input(&sh, &p, tmp, NULL))
		return -1;
	if (rename(tmp, path)) {
		fprintf(stderr, "gen_ranks: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Inputs 0..n-1 of about size_mb MB, by `jobs` processes (input r by process r % jobs). */
static int write_bench(const char *out, unsigned n, unsigned size_mb, unsigned jobs)
{
	uint64_t bytes = (uint64_t)size_mb * 1000000;
	double t0 = bench_now_s();
	unsigned j, made = 0;
	int rc = 0, status;
	int fd[2];

	if (pipe(fd))
		return 4;
	for (j = 0; j < jobs; j++) {
		pid_t pid = fork();

		if (pid < 0) {
			rc = 4;
			break;
		}
		if (pid == 0) {
			unsigned r, count = 0;
			int reused;

			close(fd[0]);
			for (r = j; r < n; r += jobs) {
				if (write_bench_input(out, r, bytes, &reused))
					_exit(4);
				count += !reused;
			}
			_exit(write(fd[1], &count, sizeof(count)) == (ssize_t)sizeof(count) ? 0
											    : 4);
		}
	}
	close(fd[1]);
	for (;;) {
		unsigned count;

		if (read(fd[0], &count, sizeof(count)) != (ssize_t)sizeof(count))
			break;
		made += count;
	}
	close(fd[0]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 4;
	if (!rc)
		printf("gen_ranks: %u inputs of %u MB in %s: %u written (%.1f s), %u kept\n", n,
			size_mb, out, made, bench_now_s() - t0, n - made);
	return rc;
}

/* A whole decimal number from 1 to max. 0 or -1. */
static int parse_count(const char *s, unsigned max, unsigned *v)
{
	uint64_t u;

	if (dump_parse_u64(s, &u) || u == 0 || u > max)
		return -1;
	*v = (unsigned)u;
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: gen_ranks tree OUT\n"
	      "       gen_ranks bench OUT N SIZE_MB [JOBS]\n"
	      "Writes msMemScope output trees of many ranks (see the comment in gen_ranks.c).\n",
		f);
}

int main(int argc, char **argv)
{
	unsigned n, size_mb, jobs = 1;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "tree"))
		return write_tree(argv[2]);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "bench") &&
		!parse_count(argv[3], 100000, &n) && !parse_count(argv[4], 100000, &size_mb) &&
		(argc == 5 || !parse_count(argv[5], 256, &jobs)))
		return write_bench(argv[2], n, size_mb, jobs);
	usage(stderr);
	return 2;
}
