/* Victim: takes every file descriptor it can, then allocates enough for new spool segments, frees
 * its descriptors and leaks one block: the recording must go on (LEAK 7777). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

void *victim_keep[1];

int main(void)
{
	static int fds[1 << 16];
	int n = 0, fd;
	long i;

	while (n < (1 << 16) && (fd = open("/dev/null", O_RDONLY)) >= 0)
		fds[n++] = fd;
	for (i = 0; i < 200000; i++) {
		void *volatile p = malloc(100);
		free(p);
	}
	while (n)
		close(fds[--n]);
	victim_keep[0] = malloc(7777); /* LEAK 7777 */
	return write(1, "ok\n", 3) == 3 ? 0 : 1;
}
