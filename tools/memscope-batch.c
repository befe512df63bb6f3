/* memscope-batch: one summary over many inputs (every rank and device of a job), read by parallel
 * workers, in shards that merge into the same result. */
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

#include "cli.h"
#include "memscope/batch.h"

enum {
	OPT_FORMAT = 256,
	OPT_SHARD,
	OPT_MERGE,
	OPT_FAIL_ON_LEAK,
	OPT_KINDS,
	OPT_MAX_PEAK,
	OPT_LIST,
};

static const struct cli_option options[] = {
	{ "jobs", 'j', 'j', "N", "read N inputs at a time (default: the number of CPUs)", NULL },
	{ "shard", 0, OPT_SHARD, "I/N",
		"read only inputs I, I+N, I+2N, ... and write a part for --merge", NULL },
	{ "merge", 0, OPT_MERGE, NULL, "the arguments are parts of one run: write its result",
		NULL },
	{ "format", 0, OPT_FORMAT, "FORMAT",
		"text, json (JSON lines) or csv (default: from -o's ending, else text)", NULL },
	{ "fail-on-leak", 0, OPT_FAIL_ON_LEAK, NULL,
		"exit 1 when an input has leaks of --kinds; say which inputs they could not be "
		"checked in",
		NULL },
	{ "kinds", 0, OPT_KINDS, "LIST",
		"leaks --fail-on-leak counts: step, exit or all (default all)", NULL },
	{ "max-peak", 0, OPT_MAX_PEAK, "SIZE",
		"exit 1 when an input's peak is above SIZE; K, M, G, T suffixes", NULL },
	{ "list", 0, OPT_LIST, NULL, "print the inputs found, with rank and device, and exit",
		NULL },
	{ "output", 'o', 'o', "FILE", "write the result there (default -, stdout)", NULL },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	"memscope-batch",
	"[-j N] [--shard I/N] [--format text|json|csv] [--fail-on-leak]\n"
	"       [--kinds LIST] [--max-peak SIZE] [--list] [-o FILE] [-f] [--lenient] [-q]\n"
	"       PATH...\n"
	"       memscope-batch --merge [--format text|json|csv] [--fail-on-leak] [--kinds LIST]\n"
	"       [--max-peak SIZE] [-o FILE] [-f] [-q] PART...",
	"Summarise the memory of many ranks and devices: leaks, peaks, growth, outliers.",
	options,
	0, /* options anywhere */
	"PATHs are files or folders, walked for msMemScope outputs (memscope_dump CSV and "
	"database\n"
	"files with their python_trace files), capture files and Ascend profiler folders; see\n"
	"memscope-batch(1).\n\n"
	"Exit status: 0 ok, 1 findings (with --fail-on-leak or --max-peak), 2 usage error,\n"
	"3 an input invalid, or leaks --fail-on-leak counts not checkable (and none found),\n"
	"4 an input unreadable or an I/O or internal error.",
};

/* options; main sets every default, beside its flag */
struct batch_opts {
	unsigned long jobs;		   /* -j */
	int sharded;			   /* --shard given */
	uint64_t shard, n_shards;	   /* --shard I/N */
	int merge;			   /* --merge */
	int list;			   /* --list */
	int kinds_given;		   /* --kinds */
	int format_given;		   /* --format */
	int jobs_given;			   /* -j */
	enum memscope_batch_format format; /* --format */
	struct memscope_batch_opts fail;   /* --fail-on-leak, --kinds, --max-peak */
	struct cli_common common;	   /* -o, -f, -q, --lenient */
	const char *const *paths;
	size_t n_paths;
};

/* --shard I/N into o. 0 or CLI_EXIT_USAGE (printed). */
static int parse_shard(const char *arg, struct batch_opts *o)
{
	const char *slash = strchr(arg, '/');
	char i[32];
	unsigned long long a, b;

	if (!slash || (size_t)(slash - arg) >= sizeof(i))
		goto bad;
	memcpy(i, arg, (size_t)(slash - arg));
	i[slash - arg] = 0;
	if (cli_parse_uint(i, &a) || cli_parse_uint(slash + 1, &b) || !b || a >= b)
		goto bad;
	o->shard = a, o->n_shards = b, o->sharded = 1;
	return 0;
bad:
	cli_msg(&tool, "--shard: expected I/N with 0 <= I < N (0/4 to 3/4), got '%s'", arg);
	return CLI_EXIT_USAGE;
}

/* What --merge does not take, and what --shard does not. 0 or CLI_EXIT_USAGE (printed). */
static int check_modes(
	const struct batch_opts *o, int format_given, int jobs_given, int kinds_given)
{
	const char *bad = NULL;

	if (o->merge && o->sharded)
		bad = "--merge and --shard";
	else if (o->merge && o->list)
		bad = "--merge and --list";
	else if (o->merge && jobs_given)
		bad = "--merge and -j (merging reads no input)";
	else if (o->merge && o->common.read.lenient)
		bad = "--merge and --lenient (the parts say how they were read)";
	else if (o->sharded && format_given)
		bad = "--shard and --format (a part has a format of its own, for --merge)";
	else if (o->sharded && (o->fail.fail_on_leak || o->fail.has_max_peak))
		bad = "--shard and --fail-on-leak or --max-peak (give them to --merge)";
	else if (o->list && (format_given || strcmp(o->common.output, "-")))
		bad = "--list and --format or -o (it prints the inputs found, as text)";
	if (!bad && kinds_given && !o->fail.fail_on_leak) {
		cli_msg(&tool, "--kinds says which leaks --fail-on-leak counts: give it too");
		return CLI_EXIT_USAGE;
	}
	if (!bad)
		return 0;
	cli_msg(&tool, "%s cannot be given together", bad);
	return CLI_EXIT_USAGE;
}

/*
 * Every PATH must exist: one that does not is a mistyped command, not a failed input (what a
 * PATH holds that cannot be read is one). Standard input is no input of a batch. 0 or
 * CLI_EXIT_USAGE (printed).
 */
static int check_paths(const struct batch_opts *o)
{
	struct stat st;
	size_t i;

	for (i = 0; i < o->n_paths; i++) {
		if (!strcmp(o->paths[i], "-")) {
			cli_msg(&tool, "standard input cannot be read by workers: give files or "
				       "folders");
			return CLI_EXIT_USAGE;
		}
		if (stat(o->paths[i], &st)) {
			cli_msg(&tool, "%s: %s", o->paths[i], strerror(errno));
			return CLI_EXIT_USAGE;
		}
	}
	return 0;
}

static const struct cli_choice kinds[] = {
	{ "step", MEMSCOPE_LEAK_STEP },
	{ "exit", MEMSCOPE_LEAK_EXIT },
	{ "all", MEMSCOPE_LEAK_STEP | MEMSCOPE_LEAK_EXIT },
	{ NULL, 0 },
};

/* One option of parse_args (cli_options): c into ctx, a struct batch_opts. */
static int option(void *ctx, int c)
{
	struct batch_opts *o = ctx;
	unsigned long long n;
	uint64_t jobs;
	unsigned format = o->format;
	int rc = 0;

	switch (c) {
	case 'j':
		rc = cli_parse_count(&tool, "jobs", optarg, 1, &jobs);
		if (!rc && jobs > 1024) {
			cli_msg(&tool, "--jobs: at most 1024, got %s", optarg);
			rc = CLI_EXIT_USAGE;
		}
		o->jobs = (unsigned long)jobs;
		o->jobs_given = 1;
		break;
	case OPT_SHARD:
		rc = parse_shard(optarg, o);
		break;
	case OPT_MERGE:
		o->merge = 1;
		break;
	case OPT_FORMAT:
		rc = cli_parse_format(&tool, optarg, &format);
		o->format = (enum memscope_batch_format)format;
		o->format_given = 1;
		break;
	case OPT_FAIL_ON_LEAK:
		o->fail.fail_on_leak = 1;
		break;
	case OPT_KINDS:
		rc = cli_parse_names(&tool, "kinds", optarg, kinds, &o->fail.fail_kinds);
		o->kinds_given = 1;
		break;
	case OPT_MAX_PEAK:
		if (cli_parse_size(optarg, &n)) {
			cli_msg(&tool, "--max-peak: expected bytes like 30G or 512M, got '%s'",
				optarg);
			return CLI_EXIT_USAGE;
		}
		o->fail.max_peak = n, o->fail.has_max_peak = 1;
		break;
	case OPT_LIST:
		o->list = 1;
		break;
	default:
		return CLI_OPT_SHARED;
	}
	return rc;
}

static int parse_args(int argc, char **argv, struct batch_opts *o)
{
	unsigned format;
	int rc;

	if ((rc = cli_options(&tool, argc, argv, &o->common, option, o)))
		return rc;
	if (optind >= argc) {
		cli_msg(&tool, "no %s given (see --help)", o->merge ? "PART" : "PATH");
		return CLI_EXIT_USAGE;
	}
	o->paths = (const char *const *)argv + optind;
	o->n_paths = (size_t)(argc - optind);
	if ((rc = check_modes(o, o->format_given, o->jobs_given, o->kinds_given)) ||
		(!o->merge && (rc = check_paths(o))))
		return rc;
	format = o->format;
	if (!o->sharded && !o->list &&
		(rc = cli_report_format(&tool, o->common.output, NULL, o->format_given, &format)))
		return rc;
	o->format = (enum memscope_batch_format)format;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the workers: one forked process per input, its summary back through a pipe as one line; its
 * progress ("p BYTES") and the readers' notes ("n TEXT") before it ("s JSON") */

struct worker {
	pid_t pid;
	int fd;		/* the pipe's read end; -1: free */
	uint64_t input; /* the index of the input it reads */
	uint64_t done;	/* its progress, in bytes */
	char *buf;	/* what it wrote that is not a whole line yet */
	size_t len, cap;
	char *summary; /* its "s" line, without "s " */
};

/* The child's side: write all of s[0, n) to fd (short writes retried). */
static void put_all(int fd, const char *s, size_t n)
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

static void child_progress(void *ctx, uint32_t src, uint64_t done, uint64_t total)
{
	char line[32];

	(void)src, (void)total;
	put_all(*(int *)ctx, line, (size_t)snprintf(line, sizeof(line), "p %" PRIu64 "\n", done));
}

static int child_fd = -1; /* the notice callback's pipe, in a worker */

static void child_notice(void *ctx, uint32_t src, const char *msg)
{
	char line[1024];
	size_t n = memscope_text_escape(line, sizeof(line), msg, strlen(msg)); /* one line */

	(void)ctx, (void)src;
	put_all(child_fd, "n ", 2);
	put_all(child_fd, line, n);
	put_all(child_fd, "\n", 1);
}

/* A worker: summarise input i of w into fd, then exit (never returns). */
static void child(const struct batch_opts *o, const struct memscope_walk *w, uint64_t i, int fd)
{
	struct memscope_read_opts ro = o->common.read;
	struct memscope_summary s = { 0 };
	struct memscope_error err;
	FILE *f;
	int rc;

	child_fd = fd;
	ro.progress = child_progress, ro.progress_ctx = &fd;
	ro.notice = child_notice, ro.notice_ctx = NULL;
	rc = memscope_summary_read(&s, &w->inputs[i], i, &ro, &err);
	if (rc == MEMSCOPE_E_NOMEM && !(s.has & UINT64_C(1) << MEMSCOPE_SUM_INDEX))
		_exit(CLI_EXIT_IO); /* the parent says so */
	if (!(f = fdopen(fd, "w")))
		_exit(CLI_EXIT_IO);
	fputs("s ", f);
	memscope_summary_write(f, &s);
	_exit(fclose(f) ? CLI_EXIT_IO : 0);
}

/* The fatal signals cli_out catches, and what they did when the tool started: a worker takes
 * them so (the parent's handler would remove the parent's temporary output; one the caller
 * ignores, a background job's SIGINT, stays ignored). */
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ };
#define N_FATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))
static struct sigaction started_with[N_FATAL];

static void keep_dispositions(void)
{
	size_t s;

	for (s = 0; s < N_FATAL; s++)
		sigaction(fatal_signals[s], NULL, &started_with[s]);
}

/* Start a worker on input i into k. 0, or CLI_EXIT_IO (printed). */
static int start(const struct batch_opts *o, const struct memscope_walk *w, uint64_t i,
	struct worker *k, const struct worker *others, size_t n_others)
{
	sigset_t all, old;
	int p[2];
	size_t s;

	if (pipe2(p, O_CLOEXEC)) {
		cli_msg(&tool, "cannot start a worker: %s", strerror(errno));
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
		child(o, w, i, p[1]);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[1]);
	if (k->pid < 0) {
		close(p[0]);
		cli_msg(&tool, "cannot start a worker: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	k->fd = p[0], k->input = i, k->done = 0, k->len = 0;
	free(k->summary);
	k->summary = NULL;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the parent */

struct run {
	const struct batch_opts *o;
	const struct memscope_walk *w;
	struct memscope_batch *b;
	uint64_t *todo; /* the inputs to read, in order */
	uint64_t n_todo, next, n_done, n_failed;
	uint64_t *size;		    /* each input's size in bytes (0: not known) */
	uint64_t total, done_bytes; /* of the inputs to read; of those finished */
	long max_rss_kib;	    /* the largest worker */
	const char **files;	    /* every file the run reads: the output is never one of them */
	size_t n_files;
	struct memscope_read_opts prog; /* cli_progress's callback, when shown */
	char label[64];
	const char *labels[1];
};

/* The size of input in (its files; a folder: 0, unknown). */
static uint64_t input_size(const struct memscope_batch_input *in)
{
	struct stat st;
	uint64_t n = 0;
	size_t i;

	if (stat(in->path, &st) || !S_ISREG(st.st_mode))
		return 0;
	n = (uint64_t)st.st_size;
	for (i = 0; i < in->n_traces; i++)
		if (!stat(in->traces[i], &st) && S_ISREG(st.st_mode))
			n += (uint64_t)st.st_size;
	return n;
}

/* The progress line: inputs and bytes done of all. */
static void show_progress(struct run *r, const struct worker *k, size_t n_workers)
{
	uint64_t done = r->done_bytes;
	size_t i;

	if (!r->prog.progress)
		return;
	for (i = 0; i < n_workers; i++)
		if (k[i].fd >= 0)
			done += k[i].done;
	snprintf(r->label, sizeof(r->label), "%" PRIu64 "/%" PRIu64 " inputs done,", r->n_done,
		r->n_todo);
	if (done < r->total)
		r->prog.progress(r->prog.progress_ctx, 0, done, r->total);
}

/* The one line of an input not read: its summary's message (which names it). */
static void say_failed(const struct memscope_summary *s)
{
	const char *msg = s->str[MEMSCOPE_SUM_ERROR] ? s->str[MEMSCOPE_SUM_ERROR]
						     : s->str[MEMSCOPE_SUM_INPUT];
	char line[2048];

	memscope_text_escape(line, sizeof(line), msg, strlen(msg)); /* a part may hold anything */
	cli_msg(&tool, "%s", line);
}

/* A summary for input i that the worker could not give (status st from wait). */
static int worker_lost(struct run *r, uint64_t i, int st)
{
	struct memscope_summary s = { 0 };
	struct memscope_error err;
	char msg[256];
	int rc;

	if (WIFSIGNALED(st))
		snprintf(msg, sizeof(msg), "%s: its worker was killed by signal %d (%s)",
			r->w->inputs[i].path, WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(msg, sizeof(msg), "%s: its worker ended with status %d and no summary%s",
			r->w->inputs[i].path, WEXITSTATUS(st),
			WEXITSTATUS(st) == CLI_EXIT_IO ? " (out of memory, or its pipe broke)"
						       : "");
	if ((rc = memscope_summary_fail(&s, &r->w->inputs[i], i, MEMSCOPE_E_IO, msg)) ||
		(rc = memscope_batch_add(r->b, &s, NULL, 0, &err)))
		cli_msg(&tool, "out of memory");
	memscope_summary_clear(&s);
	return rc ? CLI_EXIT_IO : 0;
}

/* Worker k has ended: wait for it, take its summary. 0 or an exit status (printed). */
static int finish(struct run *r, struct worker *k)
{
	struct rusage ru = { 0 };
	struct memscope_error err;
	const struct memscope_summary *s;
	int st = 0, rc = 0;

	close(k->fd);
	k->fd = -1;
	while (wait4(k->pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	if (ru.ru_maxrss > r->max_rss_kib)
		r->max_rss_kib = ru.ru_maxrss;
	r->n_done++;
	r->done_bytes += r->size[k->input];
	if (!k->summary || !WIFEXITED(st) || WEXITSTATUS(st))
		rc = worker_lost(r, k->input, st);
	else if ((rc = memscope_batch_add_line(
			  r->b, k->summary, strlen(k->summary), "a worker", 1, &err)))
		rc = cli_error(&tool, &err);
	if (rc)
		return rc;
	s = memscope_batch_get(r->b, k->input);
	if (s && strcmp(s->str[MEMSCOPE_SUM_STATUS], "ok")) {
		say_failed(s);
		r->n_failed++;
	} else if (s && s->num[MEMSCOPE_SUM_SKIPPED] > 0) {
		cli_msg(&tool, "%s: %" PRId64 " bad row(s) skipped (--lenient)",
			r->w->inputs[k->input].path, s->num[MEMSCOPE_SUM_SKIPPED]);
	}
	return 0;
}

/* Take the whole lines worker k wrote. */
static void take_lines(struct run *r, struct worker *k)
{
	char *nl, *at = k->buf;

	while ((nl = memchr(at, '\n', k->len - (size_t)(at - k->buf)))) {
		*nl = 0;
		if (at[0] == 'p' && at[1] == ' ')
			k->done = strtoull(at + 2, NULL, 10);
		else if (at[0] == 'n' && at[1] == ' ')
			cli_msg(&tool, "%s: %s", r->w->inputs[k->input].path, at + 2);
		else if (at[0] == 's' && at[1] == ' ' && !k->summary)
			k->summary = strdup(at + 2);
		at = nl + 1;
	}
	k->len -= (size_t)(at - k->buf);
	memmove(k->buf, at, k->len);
}

/* Read what worker k has written; 1 at its end, 0 to go on, or an exit status (printed). */
static int drain(struct run *r, struct worker *k)
{
	ssize_t n;

	if (k->cap - k->len < 4096) {
		size_t cap = k->cap ? k->cap * 2 : 65536;
		char *b = realloc(k->buf, cap);

		if (!b) {
			cli_msg(&tool, "out of memory");
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
	take_lines(r, k);
	return 0;
}

/* How many workers: -j, at most one per input, and within the descriptors the process may open
 * (one pipe each, and room for the rest). */
static size_t workers(const struct run *r)
{
	struct rlimit rl;
	size_t n = r->o->jobs < r->n_todo ? r->o->jobs : (size_t)r->n_todo;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && n + 32 > rl.rlim_cur)
		n = rl.rlim_cur > 33 ? (size_t)rl.rlim_cur - 32 : 1;
	return n;
}

/* Read every input to do through at most jobs workers. 0 or an exit status (printed). */
static int read_inputs(struct run *r)
{
	size_t n_workers = workers(r), i;
	struct worker *k = calloc(n_workers ? n_workers : 1, sizeof(*k));
	struct pollfd *pf = calloc(n_workers ? n_workers : 1, sizeof(*pf));
	int rc = 0, busy = 0;

	if (!k || !pf) {
		cli_msg(&tool, "out of memory");
		rc = CLI_EXIT_IO;
		goto out;
	}
	for (i = 0; i < n_workers; i++)
		k[i].fd = -1;
	for (;;) {
		size_t n_pf = 0;

		for (i = 0; i < n_workers && !rc; i++)
			if (k[i].fd < 0 && r->next < r->n_todo &&
				!(rc = start(r->o, r->w, r->todo[r->next], &k[i], k, n_workers)))
				r->next++, busy++;
		if (rc || !busy)
			break;
		for (i = 0; i < n_workers; i++)
			if (k[i].fd >= 0)
				pf[n_pf].fd = k[i].fd, pf[n_pf].events = POLLIN,
				pf[n_pf++].revents = 0;
		if (poll(pf, n_pf, 250) < 0 && errno != EINTR) {
			cli_msg(&tool, "poll: %s", strerror(errno));
			rc = CLI_EXIT_IO;
			break;
		}
		for (i = 0; i < n_workers && !rc; i++) {
			size_t j;

			if (k[i].fd < 0)
				continue;
			for (j = 0; j < n_pf && pf[j].fd != k[i].fd; j++)
				;
			if (j == n_pf || !pf[j].revents)
				continue;
			if ((rc = drain(r, &k[i])) == 1) {
				rc = finish(r, &k[i]);
				busy--;
			}
		}
		show_progress(r, k, n_workers);
	}
out:
	for (i = 0; k && i < n_workers; i++) {
		if (k[i].fd >= 0) { /* an error: stop the others */
			kill(k[i].pid, SIGKILL);
			close(k[i].fd);
			waitpid(k[i].pid, NULL, 0);
		}
		free(k[i].buf);
		free(k[i].summary);
	}
	free(k);
	free(pf);
	return rc;
}

/* --list: the inputs found, one per line. */
static int list_inputs(const struct memscope_walk *w, FILE *out)
{
	size_t i, t;

	for (i = 0; i < w->n; i++) {
		const struct memscope_batch_input *in = &w->inputs[i];

		fprintf(out, "%zu\t", i);
		if (in->rank >= 0)
			fprintf(out, "%" PRId64, in->rank);
		else
			fputc('-', out);
		fprintf(out, "\t%s\t%s", in->device[0] ? in->device : "-", in->path);
		for (t = 0; t < in->n_traces; t++)
			fprintf(out, "\t%s", in->traces[t]);
		fputc('\n', out);
	}
	return 0;
}

/* The parts of --merge into *b. 0 or an exit status (printed). */
static int read_parts(const struct batch_opts *o, struct memscope_batch **b)
{
	struct memscope_error err;
	uint64_t shard, n_shards, i;
	size_t k;
	int rc = 0;

	for (k = 0; k < o->n_paths && !rc; k++) {
		FILE *f = strcmp(o->paths[k], "-") ? fopen(o->paths[k], "r") : stdin;

		memscope_error_clear(&err);
		if (!f) {
			cli_msg(&tool, "%s: %s", o->paths[k], strerror(errno));
			return CLI_EXIT_IO;
		}
		rc = memscope_batch_read_part(b, f, o->paths[k], &shard, &n_shards, &err);
		if (f != stdin)
			fclose(f);
	}
	if (rc || (rc = memscope_batch_complete(*b, &err)))
		return cli_error(&tool, &err);
	for (i = 0; i < memscope_batch_inputs(*b); i++) {
		const struct memscope_summary *s = memscope_batch_get(*b, i);

		if (strcmp(s->str[MEMSCOPE_SUM_STATUS], "ok")) /* as the run said it */
			say_failed(s);
	}
	return 0;
}

/* Write the result (or with --shard the part) of b to the output. 0 or an exit status. */
static int write_result(const struct batch_opts *o, const struct run *r,
	const struct memscope_batch *b, uint64_t n_inputs, uint64_t hash,
	struct memscope_batch_result *res)
{
	struct cli_out out = { 0 };
	uint64_t i;
	int rc;

	/* never over a file read, one found under a folder given too (--force or not) */
	if ((rc = cli_out_open(&tool, &out, o->common.output, o->common.force,
		     r->files ? r->files : o->paths, r->files ? r->n_files : o->n_paths)))
		return rc;
	if (o->sharded) {
		rc = memscope_batch_part_header(
			out.f, n_inputs, hash, o->common.read.lenient, o->shard, o->n_shards);
		for (i = o->shard; !rc && i < n_inputs; i += o->n_shards)
			rc = memscope_summary_write(out.f, memscope_batch_get(b, i));
	} else {
		rc = memscope_batch_write(out.f, o->format, b, &o->fail, res);
	}
	if (rc) {
		cli_msg(&tool, "%s: write failed: %s", o->common.output,
			rc == MEMSCOPE_E_NOMEM ? "out of memory" : strerror(errno));
		cli_out_abort(&out);
		return CLI_EXIT_IO;
	}
	return cli_out_commit(&tool, &out);
}

/* The last stderr line of a run (with -q, none): what was read, how fast, the largest worker;
 * what the walk left out. */
static void say_done(const struct batch_opts *o, const struct run *r,
	const struct memscope_batch_result *res, double secs)
{
	char bytes[MEMSCOPE_BYTES_TEXT_MAX], rate[MEMSCOPE_BYTES_TEXT_MAX];
	char rss[MEMSCOPE_BYTES_TEXT_MAX];
	unsigned long n_workers = (unsigned long)workers(r);
	uint64_t read = 0, i;

	if (o->merge) {
		cli_msg(&tool,
			"%" PRIu64 " inputs from %zu parts: %" PRIu64 " read, %" PRIu64
			" failed (%" PRIu64 " invalid, %" PRIu64 " not readable)",
			res->n_inputs, o->n_paths, res->n_ok, res->n_invalid + res->n_error,
			res->n_invalid, res->n_error);
		return;
	}
	for (i = 0; i < r->n_todo; i++) { /* bytes read, as the report counts them */
		const struct memscope_summary *s = memscope_batch_get(r->b, r->todo[i]);

		if (s && s->has & UINT64_C(1) << MEMSCOPE_SUM_BYTES)
			read += (uint64_t)s->num[MEMSCOPE_SUM_BYTES];
	}
	cli_msg(&tool,
		"%" PRIu64 " input%s%s: %" PRIu64 " read, %" PRIu64 " failed; %s read in %.1f s "
		"(%s/s), %lu worker%s, the largest %s",
		r->n_todo, r->n_todo == 1 ? "" : "s", o->sharded ? " of this shard" : "",
		r->n_todo - r->n_failed, r->n_failed,
		memscope_bytes_text(bytes, sizeof(bytes), read), secs,
		memscope_bytes_text(
			rate, sizeof(rate), (uint64_t)((double)read / (secs > 0 ? secs : 1))),
		n_workers, n_workers == 1 ? "" : "s",
		memscope_bytes_text(rss, sizeof(rss), (uint64_t)r->max_rss_kib * 1024));
	if (r->w->n_skipped || r->w->n_orphan_traces)
		cli_msg(&tool,
			"%" PRIu64
			" file(s) under the folders are no input and were skipped, %" PRIu64
			" python_trace file(s) had no input beside them (--list shows what is "
			"read)",
			r->w->n_skipped, r->w->n_orphan_traces);
}

/* A note of the walk (traces without an input) on stderr. */
static void walk_notice(void *ctx, uint32_t src, const char *msg)
{
	(void)ctx, (void)src;
	cli_msg(&tool, "%s", msg);
}

/* The PATHs and every file found under them, for the output's checks (NULL on OOM). */
static const char **inputs_read(
	const struct batch_opts *o, const struct memscope_walk *w, size_t *n)
{
	size_t i, t, k = 0, total = o->n_paths;
	const char **f;

	for (i = 0; i < w->n; i++)
		total += 1 + w->inputs[i].n_traces;
	if (!(f = calloc(total, sizeof(*f))))
		return NULL;
	for (i = 0; i < o->n_paths; i++)
		f[k++] = o->paths[i];
	for (i = 0; i < w->n; i++) {
		f[k++] = w->inputs[i].path;
		for (t = 0; t < w->inputs[i].n_traces; t++)
			f[k++] = w->inputs[i].traces[t];
	}
	*n = k;
	return f;
}

/* Walk the PATHs and read the inputs of this run (of its shard) into *b. 0 or an exit status. */
static int run_inputs(
	const struct batch_opts *o, struct memscope_walk *w, struct run *r, uint64_t *hash)
{
	struct memscope_error err;
	uint64_t i;

	memscope_error_clear(&err);
	if (memscope_walk(
		    o->paths, o->n_paths, w, o->common.quiet ? NULL : walk_notice, NULL, &err))
		return cli_error(&tool, &err);
	*hash = memscope_walk_hash(w);
	if (o->list)
		return 0;
	if (!(r->files = inputs_read(o, w, &r->n_files))) {
		cli_msg(&tool, "out of memory");
		return CLI_EXIT_IO;
	}
	if (!w->n) {
		if (o->n_paths == 1)
			cli_msg(&tool,
				"%s: no input found under it (see memscope-batch(1), INPUTS)",
				o->paths[0]);
		else
			cli_msg(&tool,
				"no input found under the %zu PATHs given (%s, ...; see "
				"memscope-batch(1), INPUTS)",
				o->n_paths, o->paths[0]);
		return CLI_EXIT_INVALID;
	}
	if (!(r->b = memscope_batch_new(w->n, *hash, o->common.read.lenient)) ||
		!(r->todo = calloc(w->n, sizeof(*r->todo))) ||
		!(r->size = calloc(w->n, sizeof(*r->size)))) {
		cli_msg(&tool, "out of memory");
		return CLI_EXIT_IO;
	}
	for (i = o->sharded ? o->shard : 0; i < w->n; i += o->sharded ? o->n_shards : 1) {
		r->todo[r->n_todo++] = i;
		r->total += r->size[i] = input_size(&w->inputs[i]);
	}
	/* the progress line over all inputs: cli_progress's, named by r->label */
	r->labels[0] = r->label;
	cli_progress(&tool, &r->prog, r->labels, 1, o->common.quiet);
	return read_inputs(r);
}

int main(int argc, char **argv)
{
	struct batch_opts o = {
		.jobs = 0,		       /* -j: the number of CPUs (below) */
		.sharded = 0,		       /* --shard: every input */
		.merge = 0,		       /* --merge */
		.list = 0,		       /* --list */
		.kinds_given = 0,	       /* --kinds */
		.format = MEMSCOPE_BATCH_TEXT, /* --format: text, or -o's ending */
		.fail.fail_on_leak = 0,	       /* --fail-on-leak: leaks leave the status 0 */
		/* --kinds all: a gate on step leaks alone passes inputs without steps */
		.fail.fail_kinds = MEMSCOPE_LEAK_STEP | MEMSCOPE_LEAK_EXIT,
		.fail.has_max_peak = 0,	  /* --max-peak: none */
		.common.output = "-",	  /* -o: standard output */
		.common.force = 0,	  /* -f: never over an existing file */
		.common.quiet = 0,	  /* -q: the summary on stderr */
		.common.read.lenient = 0, /* --lenient: a bad row fails its input */
	};
	struct memscope_walk w = { 0 };
	struct run r = { 0 };
	struct memscope_batch_result res = { 0 };
	struct memscope_batch *merged = NULL;
	uint64_t hash = 0;
	double t0 = cli_now_seconds();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int status;

	keep_dispositions();
	signal(SIGCHLD, SIG_DFL); /* workers are waited for, whatever the caller left */
	o.jobs = cpus > 0 ? (unsigned long)cpus : 1;
	r.o = &o, r.w = &w;
	if ((status = parse_args(argc, argv, &o))) {
		status = status < 0 ? CLI_EXIT_OK : status;
		goto out;
	}
	/* no output is ever written over an input, nor over a file without --force */
	if (!o.list && (status = cli_out_check(
				&tool, o.common.output, o.common.force, o.paths, o.n_paths)))
		goto out;
	if (o.merge)
		status = read_parts(&o, &merged);
	else
		status = run_inputs(&o, &w, &r, &hash);
	if (status == CLI_EXIT_OK && o.list)
		status = list_inputs(&w, stdout) || fflush(stdout) ? CLI_EXIT_IO : 0;
	if (status || o.list)
		goto out;
	if ((status = write_result(&o, &r, o.merge ? merged : r.b, w.n, hash, &res)))
		goto out;
	/* a gate says what it could not check, -q or not */
	if (!o.sharded && res.n_unchecked) {
		char line[2048];

		cli_msg(&tool, "%s",
			memscope_batch_unchecked_text(
				line, sizeof(line), o.merge ? merged : r.b, &o.fail));
	}
	/* a shard that wrote its part has done its job: the merge says what failed; a check asked
	 * for that could not run is no pass (findings elsewhere are still findings) */
	status = o.sharded						     ? 0
		 : res.n_error						     ? CLI_EXIT_IO
		 : res.n_invalid					     ? CLI_EXIT_INVALID
		 : res.n_leaking || res.n_over_peak			     ? CLI_EXIT_FINDINGS
		 : res.n_unchecked_all || (o.kinds_given && res.n_unchecked) ? CLI_EXIT_INVALID
									     : 0;
	if (!o.common.quiet)
		say_done(&o, &r, &res, cli_now_seconds() - t0);
out:
	memscope_batch_free(merged);
	memscope_batch_free(r.b);
	free(r.todo);
	free(r.size);
	free(r.files);
	memscope_walk_free(&w);
	return status;
}
