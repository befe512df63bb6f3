/* The recorded process image, for the shim: the launcher's options, the spool file and what
 * its header says of the process (how it ended, why recording stopped, calls lost), the start
 * of the recording and a forked child's fresh one. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracker.h"

struct rec_process ms__rec;

/* ---------------------------------------------------------------- small helpers */

/* The shim links nothing of libmemscope (which the sanitizer build instruments, and which uses
 * stdio and malloc): the few helpers it needs are its own. */

static size_t str_len(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

/* dst = a + b (NUL-terminated, cut to the buffer) */
static void join(char *dst, size_t size, const char *a, const char *b)
{
	size_t n = 0;
	for (; *a && n + 1 < size; a++)
		dst[n++] = *a;
	for (; *b && n + 1 < size; b++)
		dst[n++] = *b;
	dst[n] = 0;
}

static char *put_dec(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* The one line the shim ever prints: why recording stopped. */
static void say(const char *what, int err)
{
	char line[SPOOL_PATH_MAX + 256];
	size_t n;
	const char *e = strerror(err); /* glibc's table: no allocation for known codes */

	join(line, sizeof(line), "memscope-record: recording stopped: ", what);
	n = str_len(line);
	join(line + n, sizeof(line) - n, ": ", e);
	n = str_len(line);
	if (n + 1 < sizeof(line))
		line[n++] = '\n';
	if (write(2, line, n) < 0)
		return;
}

/* len bytes at offset off of the spool file's header (its block exists already, so the write
 * succeeds on a full disk too). 0 or -1 with errno. */
static int put_header(const void *p, size_t len, off_t off)
{
	int fd, rc = -1;

	if (atomic_load(&ms__rec.file_state) != 2 ||
		(fd = open(ms__rec.spool, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	if (pwrite(fd, p, len, off) == (ssize_t)len)
		rc = 0;
	close(fd);
	return rc;
}

/* After a stop: how many calls went unrecorded since, into the header (1 + the count). */
void ms__rec_write_lost(void)
{
	uint64_t n = atomic_load(&ms__rec.lost) + 1;

	if (atomic_load(&ms__rec.state) == ST_STOPPED && (uint64_t)getpid() == ms__rec.pid)
		put_header(&n, sizeof(n), offsetof(struct spool_header, lost));
}

/* Recording stops for good: one line, and the header says why. */
void ms__rec_stop(const char *what, int err)
{
	int s = atomic_load(&ms__rec.state);
	uint64_t e = (uint64_t)(err > 0 ? err : EIO);

	/* from recording, or from starting (the spool could not be made: said all the same) */
	do
		if (s != ST_ON && s != ST_PASS)
			return;
	while (!atomic_compare_exchange_weak(&ms__rec.state, &s, ST_STOPPED));
	say(what, err);
	put_header(&e, sizeof(e), offsetof(struct spool_header, stopped));
}

/* ---------------------------------------------------------------- the spool file */

/* "key=value" in MEMSCOPE_RECORD_OPTS, as a number; def when absent */
static unsigned long opt(const char *opts, const char *key, unsigned long def)
{
	size_t k = str_len(key);
	const char *p = opts;

	while (p && *p) {
		if (!strncmp(p, key, k) && p[k] == '=') {
			unsigned long v = 0;
			if (!strncmp(p + k + 1, "tsc", 3))
				return SPOOL_CLOCK_TSC;
			if (!strncmp(p + k + 1, "mono", 4))
				return SPOOL_CLOCK_MONO;
			for (p += k + 1; *p >= '0' && *p <= '9'; p++)
				v = v * 10 + (unsigned long)(*p - '0');
			return v;
		}
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return def;
}

/* The spool file's name for this process image: DIR/pPID-GEN (kind 'p'), its modules file
 * ('m'), or the note of an image left unrecorded ('s'). */
static void name_of(char *out, char kind, uint64_t pid, uint64_t gen)
{
	char tail[64], *p = tail;

	*p++ = '/';
	*p++ = kind;
	p = put_dec(p, pid);
	*p++ = '-';
	p = put_dec(p, gen);
	*p = 0;
	join(out, SPOOL_PATH_MAX, ms__rec.dir, tail);
}

/* Create this image's spool file with its header: the first free generation of the pid. */
static int make_spool(void)
{
	struct spool_header h;
	char cmd[SPOOL_HEADER_LEN - sizeof(struct spool_header)];
	ssize_t n = 0;
	int fd = -1, c;
	uint64_t gen;

	for (gen = 0; gen < 1000; gen++) {
		name_of(ms__rec.spool, 'p', ms__rec.pid, gen);
		fd = open(ms__rec.spool, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		ms__rec_stop(ms__rec.spool, errno);
		return -1;
	}
	ms__rec.gen = gen;
	name_of(ms__rec.modules, 'm', ms__rec.pid, gen);
	c = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (c >= 0) {
		n = read(c, cmd, sizeof(cmd));
		close(c);
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SPOOL_MAGIC, 8);
	h.version = SPOOL_VERSION;
	h.header_len = SPOOL_HEADER_LEN;
	h.seg_len = SPOOL_SEG_MIN;
	h.clock = (uint32_t)ms__rec.clock;
	h.pid = ms__rec.pid;
	h.ppid = (uint64_t)getppid();
	h.gen = gen;
	h.tick0 = ms__rec.tick0;
	h.mono0_ns = ms__rec.mono0_ns;
	h.real0_ns = ms__rec.real0_ns;
	h.depth = ms__rec.depth;
	h.cmdline_len = n > 0 ? (uint32_t)n : 0;
	h.forked = ms__rec.forked;
	if (ftruncate(fd, SPOOL_HEADER_LEN) || pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
		(n > 0 && pwrite(fd, cmd, (size_t)n, sizeof(h)) != n)) {
		ms__rec_stop(ms__rec.spool, errno ? errno : EIO);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int ms__rec_spool_ready(void)
{
	int s = atomic_load(&ms__rec.file_state), zero = 0;

	if (LIKELY(s == 2))
		return 1;
	if (s == 0 && atomic_compare_exchange_strong(&ms__rec.file_state, &zero, 1)) {
		atomic_store(&ms__rec.file_state, make_spool() ? 3 : 2);
		return atomic_load(&ms__rec.file_state) == 2;
	}
	while ((s = atomic_load(&ms__rec.file_state)) == 1)
		sched_yield();
	return s == 2;
}

/* The spool file open for writing: one descriptor kept above the program's usual ones and
 * checked to still be ours (a program may close every descriptor, and reuse the number), so
 * that running out of descriptors later does not stop the recording. -1 with errno. */
int ms__rec_spool_fd(void)
{
	struct stat sb;
	int fd = atomic_load(&ms__rec.fd), hi;

	if (fd >= 0 && !fstat(fd, &sb) && sb.st_dev == ms__rec.fd_dev &&
		sb.st_ino == ms__rec.fd_ino)
		return fd;
	fd = open(ms__rec.spool, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if ((hi = fcntl(fd, F_DUPFD_CLOEXEC, 900)) >= 0) {
		close(fd);
		fd = hi;
	}
	if (fstat(fd, &sb)) {
		close(fd);
		return -1;
	}
	ms__rec.fd_dev = sb.st_dev;
	ms__rec.fd_ino = sb.st_ino;
	atomic_store(&ms__rec.fd, fd); /* a thread that raced us keeps its own open: harmless */
	return fd;
}

/* ---------------------------------------------------------------- ms__rec_start, fork and exit */

void ms__rec_exit(uint64_t kind, uint64_t status)
{
	uint64_t v[4]; /* exit_kind, exit_status, exit_tick, exit_mono_ns */

	/* a vfork child (posix_spawn) shares our memory but is not us */
	if (ms__rec.exit_written || atomic_load(&ms__rec.file_state) != 2 ||
		(uint64_t)getpid() != ms__rec.pid)
		return;
	ms__rec.exit_written = 1;
	v[0] = kind;
	v[1] = status;
	v[2] = rec_ticks();
	v[3] = rec_clock_ns(CLOCK_MONOTONIC);
	if (put_header(v, sizeof(v), offsetof(struct spool_header, exit_kind)))
		ms__rec_stop(ms__rec.spool, errno);
	ms__rec_write_lost();
}

static void on_fatal(int sig)
{
	ms__rec_exit(SPOOL_EXIT_SIGNAL, (uint64_t)sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The note of an exec'd program left unrecorded, for the launcher to list: "PPID MONO_NS PATH". */
static void note_skipped(void)
{
	char path[SPOOL_PATH_MAX], text[SPOOL_PATH_MAX + 48], *p = text;
	ssize_t n;
	int fd;

	p = put_dec(p, (uint64_t)getppid());
	*p++ = ' ';
	p = put_dec(p, rec_clock_ns(CLOCK_MONOTONIC));
	*p++ = ' ';
	n = readlink("/proc/self/exe", p, SPOOL_PATH_MAX - 1);
	if (n <= 0)
		return;
	p += n;
	name_of(path, 's', ms__rec.pid, 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, text, (size_t)(p - text)) < 0)
		n = 0;
	close(fd);
}

static void after_fork_child(void)
{
	ms__rec_thread_forget();
	if (!ms__rec.follow_fork || atomic_load(&ms__rec.state) != ST_ON) {
		if (atomic_load(&ms__rec.state) == ST_ON)
			atomic_store(&ms__rec.state, ST_PASS);
		return;
	}
	ms__rec.pid = (uint64_t)getpid();
	ms__rec.forked = 1;
	ms__rec.exit_written = 0;
	atomic_store(&ms__rec.next_off, SPOOL_HEADER_LEN);
	atomic_store(&ms__rec.file_state, 0); /* made at the child's first event */
	if (atomic_load(&ms__rec.fd) >= 0)
		close(atomic_exchange(&ms__rec.fd, -1)); /* the parent's spool */
	ms__rec_forget_modules();
	ms__rec.tick0 = rec_ticks();
	ms__rec.mono0_ns = rec_clock_ns(CLOCK_MONOTONIC);
	ms__rec.real0_ns = rec_clock_ns(CLOCK_REALTIME);
}

void ms__rec_start(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	const char *dir = getenv("MEMSCOPE_RECORD_SPOOL");
	const char *opts = getenv("MEMSCOPE_RECORD_OPTS");
	const char *main_pid = getenv("MEMSCOPE_RECORD_MAIN");
	unsigned long mp = 0;
	unsigned i;

	atomic_store(&ms__rec.fd, -1);
	if (!dir || !*dir || str_len(dir) + 64 > SPOOL_PATH_MAX) {
		atomic_store(&ms__rec.state, ST_PASS);
		return;
	}
	join(ms__rec.dir, sizeof(ms__rec.dir), dir, "");
	ms__rec.depth = (unsigned)opt(opts, "depth", 32);
	if (ms__rec.depth > SPOOL_DEPTH_MAX)
		ms__rec.depth = SPOOL_DEPTH_MAX;
	ms__rec.follow_fork = (int)opt(opts, "fork", 1);
	ms__rec.follow_exec = (int)opt(opts, "exec", 0);
	ms__rec.mmap = (int)opt(opts, "mmap", 0);
	ms__rec.clock = (int)opt(opts, "clock", SPOOL_CLOCK_MONO);
	ms__rec.python = (int)opt(opts, "python", 1);
	ms__rec.pid = (uint64_t)getpid();
	for (; main_pid && *main_pid >= '0' && *main_pid <= '9'; main_pid++)
		mp = mp * 10 + (unsigned long)(*main_pid - '0');
	if (mp != ms__rec.pid && !ms__rec.follow_exec) {
		note_skipped();
		atomic_store(&ms__rec.state, ST_PASS);
		return;
	}
	ms__rec.tick0 = rec_ticks();
	ms__rec.mono0_ns = rec_clock_ns(CLOCK_MONOTONIC);
	ms__rec.real0_ns = rec_clock_ns(CLOCK_REALTIME);
	pthread_atfork(NULL, NULL, after_fork_child);
	ms__rec.have_key = !pthread_key_create(&ms__rec.thread_key, ms__rec_thread_end);
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old, sa;
		if (sigaction(fatal[i], NULL, &old) || old.sa_handler != SIG_DFL ||
			(old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal;
		sa.sa_flags = SA_RESETHAND | SA_NODEFER;
		sigaction(fatal[i], &sa, NULL);
	}
	atomic_store(&ms__rec.next_off, SPOOL_HEADER_LEN);
	if (!ms__rec_spool_ready())
		return;
	ms__rec_spool_fd(); /* now, while descriptors are free: a program may take them all */
	atomic_store(&ms__rec.state, ST_ON);
	if (ms__rec.depth)
		ms__rec_scan_modules();
}
