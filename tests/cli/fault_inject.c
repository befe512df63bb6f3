/* An LD_PRELOAD fault injector for the tools' output publishing: delays the rename or link that
 * puts an output in place, and raises a signal right after it, so races and late signals can be
 * tested on demand. MEMSCOPE_FAULT_DELAY_MS=N sleeps N ms before the call;
 * MEMSCOPE_FAULT_SIGNAL=S raises signal S after a call that succeeded. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int rename(const char *from, const char *to);
int renameat2(int fd_from, const char *from, int fd_to, const char *to, unsigned flags);
int link(const char *from, const char *to);

static void before(void)
{
	const char *ms = getenv("MEMSCOPE_FAULT_DELAY_MS");

	if (ms) {
		long n = atol(ms);
		struct timespec ts = { n / 1000, (n % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

static int after(int rc)
{
	const char *sig = getenv("MEMSCOPE_FAULT_SIGNAL");

	if (rc == 0 && sig)
		raise(atoi(sig));
	return rc;
}

int rename(const char *from, const char *to)
{
	int (*real)(const char *, const char *) =
		(int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");

	before();
	return after(real(from, to));
}

int renameat2(int fd_from, const char *from, int fd_to, const char *to, unsigned flags)
{
	int (*real)(int, const char *, int, const char *, unsigned) = (int (*)(
		int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");

	before();
	return after(real(fd_from, from, fd_to, to, flags));
}

int link(const char *from, const char *to)
{
	int (*real)(const char *, const char *) =
		(int (*)(const char *, const char *))dlsym(RTLD_NEXT, "link");

	before();
	return after(real(from, to));
}
