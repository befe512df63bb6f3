/* Benchmark of memscope-compare's library path: generates step dumps and prints time and peak RSS
 * of comparing them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "memscope/memscope.h"

static uint64_t rng = BENCH_SEED;

static uint64_t next_rand(void)
{
	return bench_rand(&rng);
}

/* Element i's op name: a vocabulary of 300 aten ops, in a repeating training-loop pattern. */
static unsigned op_of(uint64_t i, int unrelated)
{
	return unrelated ? (unsigned)(next_rand() % 300) : (unsigned)((i * 7 + i / 13) % 300);
}

/*
 * A dump of about `rows` rows: per op a START, an END and, every other op, a PTA MALLOC and its
 * FREE. With edits > 0 the op sequence gets that many random insertions/deletions/changes.
 */
static int gen(const char *path, uint64_t rows, uint64_t edits, int unrelated, uint64_t seed)
{
	FILE *f = fopen(path, "w");
	uint64_t i = 0, id = 1, ts = 1764753083000000000ull, n_ops = rows / 3, alloc = 1;
	uint64_t edit_every = edits ? n_ops / edits : 0;

	if (!f)
		return -1;
	rng = seed;
	fputs("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
	      "Call Stack(Python),Call Stack(C)\n",
		f);
	for (i = 0; i < n_ops; i++) {
		unsigned op = op_of(i, unrelated);

		if (edit_every && i % edit_every == edit_every / 2) {
			uint64_t r = next_rand() % 3;

			if (r == 0)
				continue; /* deletion */
			if (r == 1)
				op = (op + 1 + (unsigned)(next_rand() % 298)) % 300; /* change */
			else
				fprintf(f,
					"%" PRIu64 ",OP_LAUNCH,ATEN_END,torch._ops.aten.extra%u."
					"default,%" PRIu64 ",7,7,0,N/A,,,\n",
					id++, (unsigned)(next_rand() % 5),
					ts += 500); /* insertion */
		}
		fprintf(f,
			"%" PRIu64 ",OP_LAUNCH,ATEN_START,torch._ops.aten.op%u.default,%" PRIu64
			",7,7,0,N/A,,,\n",
			id++, op, ts += 1000);
		if (i % 2 == 0) {
			uint64_t size = 512 * (1 + next_rand() % 64);

			fprintf(f,
				"%" PRIu64 ",MALLOC,PTA,N/A,%" PRIu64 ",7,7,0,0x%016" PRIx64
				",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64
				",total:20971520,used:%" PRIu64 "}\",,\n",
				id++, ts += 300,
				(uint64_t)(0x12c041400000ull + 512 * (alloc % 1000)), alloc,
				(uint64_t)(0x12c041400000ull + 512 * (alloc % 1000)), size, size);
			fprintf(f,
				"%" PRIu64 ",FREE,PTA,N/A,%" PRIu64 ",7,7,0,0x%016" PRIx64
				",\"{allocation_id:%" PRIu64 ",addr:0x%016" PRIx64 ",size:%" PRIu64
				",total:20971520,used:0}\",,\n",
				id++, ts += 300,
				(uint64_t)(0x12c041400000ull + 512 * (alloc % 1000)), alloc,
				(uint64_t)(0x12c041400000ull + 512 * (alloc % 1000)), size);
			alloc++;
		}
		fprintf(f,
			"%" PRIu64 ",OP_LAUNCH,ATEN_END,torch._ops.aten.op%u.default,%" PRIu64
			",7,7,0,N/A,,,\n",
			id++, op, ts += 1000);
	}
	return fclose(f);
}

static int add(void *ctx, const struct memscope_event *ev)
{
	return memscope_compare_side_add(ctx, ev);
}

static int count_row(void *ctx, const struct memscope_compare_row *r)
{
	(void)r;
	++*(uint64_t *)ctx;
	return 0;
}

/* CPU seconds (user + system) of this process so far. */
static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Read both files and compare them in a child; print wall time (and the comparison's CPU time)
 * and the child's peak RSS. */
static void measure(const char *label, const char *a, const char *b)
{
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();

	if (pid == 0) {
		struct memscope_strtab *st = memscope_strtab_new();
		struct memscope_compare_side *s[2] = { memscope_compare_side_new(a, st),
			memscope_compare_side_new(b, st) };
		struct memscope_compare_opts opts = { MEMSCOPE_COMPARE_OP, 0,
			MEMSCOPE_METRIC_REFERENCE, 0 };
		const char *paths[2] = { a, b };
		struct memscope_compare_stats stats;
		struct memscope_error err;
		uint64_t rows = 0;
		double t0 = bench_now_s(), t1, c1;
		int i;

		for (i = 0; i < 2; i++) {
			struct memscope_source *src;

			if (memscope_source_open(&src, paths[i], st, NULL, &err) ||
				memscope_source_read(src, add, s[i], &err))
				_exit(3);
			memscope_source_close(src);
		}
		t1 = bench_now_s();
		c1 = cpu_s();
		if (memscope_compare_run(s[0], s[1], &opts, st, count_row, &rows, &stats, &err))
			_exit(4);
		printf("%s: %" PRIu64 " rows out (%" PRIu64 " matched, %" PRIu64
		       " base-only, %" PRIu64
		       " compare-only%s), read %.3f s + compare %.3f s (CPU %.3f s) = %.3f s",
			label, rows, stats.n_matched, stats.n_base_only, stats.n_cmp_only,
			stats.n_anchored ? ", anchored" : "", t1 - t0, bench_now_s() - t1,
			cpu_s() - c1, bench_now_s() - t0);
		fflush(stdout);
		_exit(0);
	}
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("%s: failed (status %d)\n", label, status);
		return;
	}
	printf(", peak RSS %.1f MiB\n", (double)ru.ru_maxrss / 1024);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	char a[4096], b[4096], c[4096], d[4096], label[64];
	uint64_t ops;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr,
			"usage: bench_compare [DIR]\nGenerates 2 x 400k-row steps with about "
			"1000 edits and 2 nearly unrelated 40k-row steps in DIR (default /tmp),\n"
			"then 2 unrelated steps of 50k, 100k, 200k and 400k ops, and prints the\n"
			"time and peak RSS of comparing each pair.\n");
		return 2;
	}
	snprintf(a, sizeof(a), "%s/bench_cmp_a.csv", dir);
	snprintf(b, sizeof(b), "%s/bench_cmp_b.csv", dir);
	snprintf(c, sizeof(c), "%s/bench_cmp_c.csv", dir);
	snprintf(d, sizeof(d), "%s/bench_cmp_d.csv", dir);
	if (gen(a, 400000, 0, 0, 1) || gen(b, 400000, 1000, 0, 1) || gen(c, 40000, 0, 1, 2) ||
		gen(d, 40000, 0, 1, 3)) {
		perror("bench_compare: generating");
		return 4;
	}
	measure("similar 2x400k rows, ~1000 edits", a, b);
	measure("unrelated 2x40k rows", c, d);
	/* past the exact diff's bound: the anchored alignment, linear (issue 33) */
	for (ops = 50000; ops <= 400000; ops *= 2) {
		if (gen(c, 3 * ops, 0, 1, 2) || gen(d, 3 * ops, 0, 1, 3)) {
			perror("bench_compare: generating");
			break;
		}
		snprintf(label, sizeof(label), "unrelated 2x%" PRIu64 "k ops", ops / 1000);
		measure(label, c, d);
	}
	unlink(a);
	unlink(b);
	unlink(c);
	unlink(d);
	return 0;
}
