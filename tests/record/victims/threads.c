/* Victim: 8 threads released at once by a barrier, each allocating and freeing, and leaking one
 * block of its own size. */
#include <pthread.h>
#include <stdlib.h>

#include "victim.h"

#define N_THREADS 8

void *victim_keep[64];
static const size_t thread_sizes[N_THREADS] = { 1001, 1002, 2003, 2004, 3005, 3006, 4007, 4008 };
static pthread_barrier_t start;

static void *worker(void *arg)
{
	size_t i = (size_t)arg, k;

	pthread_barrier_wait(&start);
	for (k = 0; k < 1000; k++)
		churn(16 + k);
	victim_keep[i] = malloc(thread_sizes[i]); /* LEAK thread_sizes */
	return NULL;
}

int main(void)
{
	pthread_t t[N_THREADS];
	size_t i;

	pthread_barrier_init(&start, NULL, N_THREADS);
	for (i = 0; i < N_THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (i = 0; i < N_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	say("ok\n");
	return 0;
}
