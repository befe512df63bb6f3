/* Victim: leaves holes in its own spool file and its disk full, as a recording stopped by a full
 * disk while other threads went on may leave them (a segment whose fallocate failed between
 * two that did not, the punched tails of ended threads): the launcher must read the holes as the
 * zeros they are. On tmpfs, a read through a mapping of a hole takes a page, which a full disk
 * refuses with SIGBUS. Run under memscope-record with the spool on a small tmpfs. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "victim.h"

void *victim_keep[64];

int main(void)
{
	const char *dir = getenv("MEMSCOPE_RECORD_SPOOL");
	char path[4096];
	struct stat sb;
	int fd;

	victim_keep[0] = malloc(4242); /* LEAK 4242 */
	if (!dir)
		return 1;
	snprintf(path, sizeof(path), "%s/p%d-0", dir, (int)getpid());
	fd = open(path, O_WRONLY);
	/* three segments' room of hole after the segments: the launcher looks for heads there */
	if (fd < 0 || fstat(fd, &sb) || ftruncate(fd, sb.st_size + 3 * 16384))
		return 1;
	close(fd);
	/* the rest of the disk taken (the launcher removes the spool folder and this with it) */
	snprintf(path, sizeof(path), "%s/zfill", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return 1;
	{
		static char block[4096];
		while (write(fd, block, sizeof(block)) > 0)
			;
	}
	close(fd);
	say("ok\n");
	return 0;
}
