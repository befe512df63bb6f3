/* Victim: fork without exec; the child leaks its own block, the parent one before and one after
 * the fork. Prints the child's pid. */
#include <stdlib.h>
#include <sys/wait.h>

#include "victim.h"

void *victim_keep[64];

int main(void)
{
	pid_t pid;
	int status;

	victim_keep[0] = malloc(3000); /* LEAK 3000 */
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		churn(100);
		victim_keep[1] = malloc(5000); /* LEAK:child 5000 */
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	victim_keep[2] = malloc(7000); /* LEAK 7000 */
	say_num("child ", pid);
	return 0;
}
