/* The allocation-heavy program of the recorder benchmark (bench_record.sh), and its timer. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

/*
 * alloc_victim [-t THREADS] [-n PAIRS]
 *   THREADS threads (2), each PAIRS malloc/free pairs (2,500,000) of 16 B to 4 KiB (xorshift per
 *   thread), 8 blocks live per thread (a ring of 8 slots: free the oldest, malloc the new), every
 *   malloc made three noinline calls deep (alloc_3 -> alloc_2 -> alloc_1 -> malloc). Prints on
 *   stdout: "victim START_NS END_NS EVENTS", CLOCK_MONOTONIC at the start of main and after the
 *   threads joined, and the malloc + free calls made.
 *
 * alloc_victim --time CMD [ARGS...]
 *   Runs CMD (stdout and stderr inherited), waits for it, prints on stdout:
 *   "timer START_NS END_NS STATUS MAXRSS_KIB MINFLT CPU_NS" (CLOCK_MONOTONIC before fork and
 *   after wait4; STATUS the exit code or 128+N for signal N; MAXRSS of the largest process,
 *   minor faults and user+system CPU of all, as wait4 reports them). The clock is the victim's, so
 * the launcher's startup and its work after the program ended are the differences.
 */

enum { EXIT_USAGE = 2, EXIT_RUN = 4 };
enum { RING = 8, MIN_SIZE = 16, MAX_SIZE = 4096 };

/* a compiler barrier: the calls below are not tail calls, so each keeps its frame */
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noinline, noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif

struct worker {
	pthread_t th;
	uint64_t pairs, seed;
	unsigned long sum; /* of the first bytes, so the blocks are used */
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

NOINLINE static unsigned char *alloc_1(size_t n)
{
	unsigned char *p = malloc(n);

	KEEP(p);
	return p;
}

NOINLINE static unsigned char *alloc_2(size_t n)
{
	unsigned char *p = alloc_1(n);

	KEEP(p);
	return p;
}

NOINLINE static unsigned char *alloc_3(size_t n)
{
	unsigned char *p = alloc_2(n);

	KEEP(p);
	return p;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned char *ring[RING] = { NULL };
	uint64_t i, s = w->seed;
	unsigned k;

	for (i = 0; i < w->pairs; i++) {
		size_t n = MIN_SIZE + (size_t)(bench_rand(&s) % (MAX_SIZE - MIN_SIZE + 1));

		k = (unsigned)(i % RING);
		if (ring[k]) {
			w->sum += ring[k][0];
			free(ring[k]);
		}
		ring[k] = alloc_3(n);
		if (ring[k])
			ring[k][0] = (unsigned char)i;
	}
	for (k = 0; k < RING; k++)
		free(ring[k]);
	return NULL;
}

/* a strict decimal >= 1 */
static int number(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || !v)
		return -1;
	*out = v;
	return 0;
}

static int timer(char **argv)
{
	struct rusage ru;
	uint64_t t0, t1;
	int st, code;
	pid_t pid;

	fflush(stdout);
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "alloc_victim: fork: %s\n", strerror(errno));
		return EXIT_RUN;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "alloc_victim: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "alloc_victim: wait4: %s\n", strerror(errno));
			return EXIT_RUN;
		}
	t1 = now_ns();
	code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	printf("timer %" PRIu64 " %" PRIu64 " %d %ld %ld %" PRIu64 "\n", t0, t1, code, ru.ru_maxrss,
		ru.ru_minflt,
		((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
			((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u);
	return code;
}

int main(int argc, char **argv)
{
	struct worker *w;
	uint64_t threads = 2, pairs = 2500000, t0 = now_ns(), t1, i;
	int c, rc;

	if (argc > 2 && !strcmp(argv[1], "--time"))
		return timer(argv + 2);
	while ((c = getopt(argc, argv, "t:n:")) != -1) {
		if ((c == 't' && !number(optarg, &threads) && threads <= 64) ||
			(c == 'n' && !number(optarg, &pairs)))
			continue;
		fprintf(stderr, "usage: alloc_victim [-t THREADS] [-n PAIRS] | --time CMD...\n");
		return EXIT_USAGE;
	}
	w = calloc(threads, sizeof(*w));
	if (!w)
		return EXIT_RUN;
	for (i = 0; i < threads; i++) {
		w[i].pairs = pairs;
		w[i].seed = BENCH_SEED + i * 0x9e3779b97f4a7c15u;
		rc = pthread_create(&w[i].th, NULL, work, &w[i]);
		if (rc) {
			fprintf(stderr, "alloc_victim: pthread_create: %s\n", strerror(rc));
			return EXIT_RUN;
		}
	}
	for (i = 0; i < threads; i++)
		pthread_join(w[i].th, NULL);
	t1 = now_ns();
	free(w);
	printf("victim %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", t0, t1, threads * pairs * 2);
	return 0;
}
