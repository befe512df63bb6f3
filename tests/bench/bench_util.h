/* What the benchmark programs share: a monotonic clock and a small deterministic PRNG. */
#ifndef MEMSCOPE_BENCH_UTIL_H
#define MEMSCOPE_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* xorshift64 over *state (never 0): the generators' data depends only on the seed. */
static inline uint64_t bench_rand(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* A default seed for bench_rand. */
#define BENCH_SEED 88172645463325252ull

#endif
