/* Victim: a program another victim execs; leaks one block, prints its pid. */
#include <stdlib.h>

#include "victim.h"

void *victim_keep[64];

int main(void)
{
	victim_keep[0] = malloc(777); /* LEAK 777 */
	say_num("leaf ", getpid());
	return 0;
}
