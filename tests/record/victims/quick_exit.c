/* Victim: leaks, then ends with _exit(5) (no atexit handlers, no stdio flush). */
#include <stdlib.h>

#include "victim.h"

void *victim_keep[64];

int main(void)
{
	victim_keep[0] = malloc(5555);	/* LEAK 5555 */
	victim_keep[1] = calloc(1, 55); /* LEAK 55 */
	say("ok\n");
	_exit(5);
}
