/* The pool of forked workers memscope-batch and memscope-report read their inputs with
 * (workers.h): start, lines through pipes, wait, progress. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workers.h"

/* One worker. */
struct worker {
	pid_t pid;
	int fd;		/* the pipe's read end; -1: free */
	uint64_t input; /* the index of the input it reads */
	uint64_t done;	/* its progress, in bytes */
	char *buf;	/* what it wrote that is not a whole line yet */
	size_t len, cap;
};

void workers_put(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(CLI_EXIT_IO);
		s += w, n -= (size_t)w;
	}
}

void workers_child_progress(void *ctx, uint32_t src, uint64_t done, uint64_t total)
{
	char line[32];

	(void)src, (void)total;
	workers_put(
		*(int *)ctx, line, (size_t)snprintf(line, sizeof(line), "p %" PRIu64 "\n", done));
}

/* The fatal signals cli_out catches, and what they did when the tool started: a worker takes
 * them so (the parent's handler would remove the parent's temporary output; one the caller
 * ignores, a background job's SIGINT, stays ignored). */
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ };
#define N_FATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))
static struct sigaction started_with[N_FATAL];

int workers_parse_jobs(const struct cli_tool *t, const char *arg, unsigned long *jobs)
{
	uint64_t n = 0;
	int rc = cli_parse_count(t, "jobs", arg, 1, &n);

	if (!rc && n > 1024) {
		cli_msg(t, "--jobs: at most 1024, got %s", arg);
		rc = CLI_EXIT_USAGE;
	}
	*jobs = (unsigned long)n;
	return rc;
}

void workers_keep_dispositions(void)
{
	size_t s;

	for (s = 0; s < N_FATAL; s++)
		sigaction(fatal_signals[s], NULL, &started_with[s]);
}

/* Start a worker on input i into k. 0, or CLI_EXIT_IO (printed). */
static int start(struct workers_run *w, uint64_t i, struct worker *k, const struct worker *others,
	size_t n_others)
{
	sigset_t all, old;
	int p[2];
	size_t s;

	if (pipe2(p, O_CLOEXEC)) {
		cli_msg(w->tool, "cannot start a worker: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	fflush(NULL);
	k->pid = fork();
	if (k->pid == 0) {
		close(p[0]);
		for (s = 0; s < n_others; s++) /* the other workers' pipes are the parent's */
			if (others[s].fd >= 0)
				close(others[s].fd);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* the parent killed: no orphan reads on */
		if (getppid() == 1)
			_exit(CLI_EXIT_IO);
		for (s = 0; s < N_FATAL; s++)
			sigaction(fatal_signals[s], &started_with[s], NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		w->ops->child(w->ctx, i, p[1]);
		_exit(CLI_EXIT_IO);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[1]);
	if (k->pid < 0) {
		close(p[0]);
		cli_msg(w->tool, "cannot start a worker: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	k->fd = p[0], k->input = i, k->done = 0, k->len = 0;
	return 0;
}

/* The progress line: inputs and bytes done of all. */
static void show_progress(struct workers_run *w, const struct worker *k, size_t n_workers)
{
	uint64_t done = w->done_bytes;
	size_t i;

	if (!w->prog.progress)
		return;
	for (i = 0; i < n_workers; i++)
		if (k[i].fd >= 0)
			done += k[i].done;
	snprintf(w->label, sizeof(w->label), "%" PRIu64 "/%" PRIu64 " inputs done,", w->n_done,
		w->n_todo);
	if (done < w->total)
		w->prog.progress(w->prog.progress_ctx, 0, done, w->total);
}

void workers_lost_text(char *buf, size_t n, const char *name, int st)
{
	if (WIFSIGNALED(st))
		snprintf(buf, n, "%s: its worker was killed by signal %d (%s)", name, WTERMSIG(st),
			strsignal(WTERMSIG(st)));
	else
		snprintf(buf, n, "%s: its worker ended with status %d and no summary%s", name,
			WEXITSTATUS(st),
			WEXITSTATUS(st) == CLI_EXIT_IO ? " (out of memory, or its pipe broke)"
						       : "");
}

/* Worker k has ended: wait for it, hand its end to the tool. 0 or an exit status (printed). */
static int finish(struct workers_run *w, struct worker *k)
{
	struct rusage ru = { 0 };
	int st = 0;

	close(k->fd);
	k->fd = -1;
	while (wait4(k->pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	if (ru.ru_maxrss > w->max_rss_kib)
		w->max_rss_kib = ru.ru_maxrss;
	w->n_done++;
	w->done_bytes += w->size[k->input];
	return w->ops->done(w->ctx, k->input, st);
}

/* Take the whole lines worker k wrote. 0 or an exit status (printed). */
static int take_lines(struct workers_run *w, struct worker *k)
{
	char *nl, *at = k->buf;
	int rc = 0;

	while (!rc && (nl = memchr(at, '\n', k->len - (size_t)(at - k->buf)))) {
		*nl = 0;
		if (at[0] == 'p' && at[1] == ' ')
			k->done = strtoull(at + 2, NULL, 10);
		else
			rc = w->ops->line(w->ctx, k->input, at);
		at = nl + 1;
	}
	k->len -= (size_t)(at - k->buf);
	memmove(k->buf, at, k->len);
	return rc;
}

/* Read what worker k has written; 1 at its end, 0 to go on, or an exit status (printed). */
static int drain(struct workers_run *w, struct worker *k)
{
	ssize_t n;
	int rc;

	if (k->cap - k->len < 4096) {
		size_t cap = k->cap ? k->cap * 2 : 65536;
		char *b = realloc(k->buf, cap);

		if (!b) {
			cli_msg(w->tool, "out of memory");
			return CLI_EXIT_IO;
		}
		k->buf = b, k->cap = cap;
	}
	n = read(k->fd, k->buf + k->len, k->cap - k->len);
	if (n < 0)
		return errno == EINTR ? 0 : 1;
	if (n == 0)
		return 1;
	k->len += (size_t)n;
	return (rc = take_lines(w, k)) ? rc : 0;
}

size_t workers_count(const struct workers_run *w)
{
	struct rlimit rl;
	size_t n = w->jobs < w->n_todo ? w->jobs : (size_t)w->n_todo;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && n + 32 > rl.rlim_cur)
		n = rl.rlim_cur > 33 ? (size_t)rl.rlim_cur - 32 : 1;
	return n;
}

/* One round of the pool: poll the workers' pipes, drain those ready, finish those ended. 0 or
 * an exit status (printed). */
static int poll_round(
	struct workers_run *w, struct worker *k, size_t n_workers, struct pollfd *pf, int *busy)
{
	size_t n_pf = 0, i, j;
	int rc = 0;

	for (i = 0; i < n_workers; i++)
		if (k[i].fd >= 0)
			pf[n_pf].fd = k[i].fd, pf[n_pf].events = POLLIN, pf[n_pf++].revents = 0;
	if (poll(pf, n_pf, 250) < 0 && errno != EINTR) {
		cli_msg(w->tool, "poll: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	for (i = 0; i < n_workers && !rc; i++) {
		if (k[i].fd < 0)
			continue;
		for (j = 0; j < n_pf && pf[j].fd != k[i].fd; j++)
			;
		if (j == n_pf || !pf[j].revents)
			continue;
		if ((rc = drain(w, &k[i])) == 1) {
			rc = finish(w, &k[i]);
			(*busy)--;
		}
	}
	show_progress(w, k, n_workers);
	return rc;
}

int workers_read(struct workers_run *w)
{
	size_t n_workers = workers_count(w), i;
	struct worker *k = calloc(n_workers ? n_workers : 1, sizeof(*k));
	struct pollfd *pf = calloc(n_workers ? n_workers : 1, sizeof(*pf));
	int rc = 0, busy = 0;

	w->labels[0] = w->label;
	cli_progress(w->tool, &w->prog, w->labels, 1, w->quiet);
	if (!k || !pf) {
		cli_msg(w->tool, "out of memory");
		rc = CLI_EXIT_IO;
		goto out;
	}
	for (i = 0; i < n_workers; i++)
		k[i].fd = -1;
	for (;;) {
		for (i = 0; i < n_workers && !rc; i++)
			if (k[i].fd < 0 && w->next < w->n_todo &&
				!(rc = start(w, w->todo[w->next], &k[i], k, n_workers)))
				w->next++, busy++;
		if (rc || !busy || (rc = poll_round(w, k, n_workers, pf, &busy)))
			break;
	}
out:
	for (i = 0; k && i < n_workers; i++) {
		if (k[i].fd >= 0) { /* an error: stop the others */
			kill(k[i].pid, SIGKILL);
			close(k[i].fd);
			waitpid(k[i].pid, NULL, 0);
		}
		free(k[i].buf);
	}
	free(k);
	free(pf);
	return rc;
}

uint64_t workers_input_size(const char *path, const char *const *traces, size_t n_traces)
{
	struct stat st;
	uint64_t n = 0;
	size_t i;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	n = (uint64_t)st.st_size;
	for (i = 0; i < n_traces; i++)
		if (!stat(traces[i], &st) && S_ISREG(st.st_mode))
			n += (uint64_t)st.st_size;
	return n;
}
