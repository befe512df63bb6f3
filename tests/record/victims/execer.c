/* Victim: fork + exec of the program named by its argument (the victim leaf); returns the
 * child's status. */
#include <stdlib.h>
#include <sys/wait.h>

#include "victim.h"

void *victim_keep[64];

int main(int argc, char **argv)
{
	pid_t pid;
	int status;

	if (argc < 2)
		return 2;
	victim_keep[0] = malloc(4444); /* LEAK 4444 */
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
