/* Victim: allocates known blocks, frees others, then kills itself with SIGKILL. */
#include <signal.h>
#include <stdlib.h>

#include "victim.h"

void *victim_keep[64];
static const size_t kill_sizes[] = { 64, 128, 192, 256, 320, 384, 448, 512, 576, 640, 704, 768, 832,
	896, 960, 1024 };

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(kill_sizes) / sizeof(kill_sizes[0]); i++) {
		churn(i + 1);
		victim_keep[i] = malloc(kill_sizes[i]); /* LEAK kill_sizes */
	}
	say("ok\n");
	kill(getpid(), SIGKILL);
	return 0;
}
