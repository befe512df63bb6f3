/*
 * An LD_PRELOAD fault injector for the tools' output publishing (rename, renameat2, link), so
 * races, late signals and other file systems can be tested on demand:
 * MEMSCOPE_FAULT_DELAY_MS=N sleeps N ms before each call; MEMSCOPE_FAULT_CREATE=PATH creates PATH
 * before the first call (another run's file appearing); MEMSCOPE_FAULT_SIGNAL=S raises signal S
 * after a call that succeeded; MEMSCOPE_FAULT_NOREPLACE=1 fails renameat2 with flags (EINVAL, a
 * file system without RENAME_NOREPLACE); MEMSCOPE_FAULT_NOLINK=1 fails link (EPERM, no hard links).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
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
	static int created;
	const char *ms = getenv("MEMSCOPE_FAULT_DELAY_MS");
	const char *path = getenv("MEMSCOPE_FAULT_CREATE");

	if (path && !created++) {
		int fd = open(path, O_WRONLY | O_CREAT, 0644);

		if (fd >= 0)
			close(fd);
	}
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
	if (flags && getenv("MEMSCOPE_FAULT_NOREPLACE")) {
		errno = EINVAL;
		return -1;
	}
	return after(real(fd_from, from, fd_to, to, flags));
}

int link(const char *from, const char *to)
{
	int (*real)(const char *, const char *) =
		(int (*)(const char *, const char *))dlsym(RTLD_NEXT, "link");

	before();
	if (getenv("MEMSCOPE_FAULT_NOLINK")) {
		errno = EPERM;
		return -1;
	}
	return after(real(from, to));
}
