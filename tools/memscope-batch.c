/* memscope-batch: one summary over many inputs (every rank and device of a job), read by parallel
 * workers, in shards that merge into the same result. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "memscope/batch.h"
#include "workers.h"

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
	unsigned format = o->format;
	int rc = 0;

	switch (c) {
	case 'j':
		rc = workers_parse_jobs(&tool, optarg, &o->jobs);
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
/* the workers (workers.h): one forked process per input, its summary back through a pipe as one
 * line; its progress ("p BYTES") and the readers' notes ("n TEXT") before it ("s JSON") */

static int child_fd = -1; /* the notice callback's pipe, in a worker */

static void child_notice(void *ctx, uint32_t src, const char *msg)
{
	char line[1024];
	size_t n = memscope_text_escape(line, sizeof(line), msg, strlen(msg)); /* one line */

	(void)ctx, (void)src;
	workers_put(child_fd, "n ", 2);
	workers_put(child_fd, line, n);
	workers_put(child_fd, "\n", 1);
}

/* ------------------------------------------------------------------------------------------ */
/* the parent */

struct run {
	const struct batch_opts *o;
	const struct memscope_walk *w;
	struct memscope_batch *b;
	struct workers_run pool; /* the inputs to read (its todo, size), their workers */
	uint64_t *todo, *size;	 /* pool's, owned */
	char **summary;		 /* per input, its worker's "s" line without "s " until it ends */
	uint64_t n_failed;
	const char **files; /* every file the run reads: the output is never one of them */
	size_t n_files;
};

/* A worker: summarise input i of the run ctx into fd, then exit (never returns). */
static void child(void *ctx, uint64_t i, int fd)
{
	const struct run *r = ctx;
	struct memscope_read_opts ro = r->o->common.read;
	struct memscope_summary s = { 0 };
	struct memscope_error err;
	FILE *f;
	int rc;

	child_fd = fd;
	ro.progress = workers_child_progress, ro.progress_ctx = &fd;
	ro.notice = child_notice, ro.notice_ctx = NULL;
	rc = memscope_summary_read(&s, &r->w->inputs[i], i, &ro, &err);
	if (rc == MEMSCOPE_E_NOMEM && !(s.has & UINT64_C(1) << MEMSCOPE_SUM_INDEX))
		_exit(CLI_EXIT_IO); /* the parent says so */
	if (!(f = fdopen(fd, "w")))
		_exit(CLI_EXIT_IO);
	fputs("s ", f);
	memscope_summary_write(f, &s);
	_exit(fclose(f) ? CLI_EXIT_IO : 0);
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

	workers_lost_text(msg, sizeof(msg), r->w->inputs[i].path, st);
	if ((rc = memscope_summary_fail(&s, &r->w->inputs[i], i, MEMSCOPE_E_IO, msg)) ||
		(rc = memscope_batch_add(r->b, &s, NULL, 0, &err)))
		cli_msg(&tool, "out of memory");
	memscope_summary_clear(&s);
	return rc ? CLI_EXIT_IO : 0;
}

/* The worker of input i has ended with wait status st: take its summary. 0 or an exit status
 * (printed). */
static int finish(void *ctx, uint64_t i, int st)
{
	struct run *r = ctx;
	struct memscope_error err;
	const struct memscope_summary *s;
	int rc = 0;

	if (!r->summary[i] || !WIFEXITED(st) || WEXITSTATUS(st))
		rc = worker_lost(r, i, st);
	else if ((rc = memscope_batch_add_line(
			  r->b, r->summary[i], strlen(r->summary[i]), "a worker", 1, &err)))
		rc = cli_error(&tool, &err);
	free(r->summary[i]);
	r->summary[i] = NULL;
	if (rc)
		return rc;
	s = memscope_batch_get(r->b, i);
	if (s && strcmp(s->str[MEMSCOPE_SUM_STATUS], "ok")) {
		say_failed(s);
		r->n_failed++;
	} else if (s && s->num[MEMSCOPE_SUM_SKIPPED] > 0) {
		cli_msg(&tool, "%s: %" PRId64 " bad row(s) skipped (--lenient)",
			r->w->inputs[i].path, s->num[MEMSCOPE_SUM_SKIPPED]);
	}
	return 0;
}

/* A line the worker of input i wrote: a note, printed, or its summary, kept. 0. */
static int take_line(void *ctx, uint64_t i, char *at)
{
	struct run *r = ctx;

	if (at[0] == 'n' && at[1] == ' ')
		cli_msg(&tool, "%s: %s", r->w->inputs[i].path, at + 2);
	else if (at[0] == 's' && at[1] == ' ' && !r->summary[i])
		r->summary[i] = strdup(at + 2);
	return 0;
}

static const struct workers_ops batch_workers = { child, take_line, finish };

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
	unsigned long n_workers = (unsigned long)workers_count(&r->pool);
	uint64_t read = 0, i;

	if (o->merge) {
		cli_msg(&tool,
			"%" PRIu64 " inputs from %zu parts: %" PRIu64 " read, %" PRIu64
			" failed (%" PRIu64 " invalid, %" PRIu64 " not readable)",
			res->n_inputs, o->n_paths, res->n_ok, res->n_invalid + res->n_error,
			res->n_invalid, res->n_error);
		return;
	}
	for (i = 0; i < r->pool.n_todo; i++) { /* bytes read, as the report counts them */
		const struct memscope_summary *s = memscope_batch_get(r->b, r->todo[i]);

		if (s && s->has & UINT64_C(1) << MEMSCOPE_SUM_BYTES)
			read += (uint64_t)s->num[MEMSCOPE_SUM_BYTES];
	}
	cli_msg(&tool,
		"%" PRIu64 " input%s%s: %" PRIu64 " read, %" PRIu64 " failed; %s read in %.1f s "
		"(%s/s), %lu worker%s, the largest %s",
		r->pool.n_todo, r->pool.n_todo == 1 ? "" : "s", o->sharded ? " of this shard" : "",
		r->pool.n_todo - r->n_failed, r->n_failed,
		memscope_bytes_text(bytes, sizeof(bytes), read), secs,
		memscope_bytes_text(
			rate, sizeof(rate), (uint64_t)((double)read / (secs > 0 ? secs : 1))),
		n_workers, n_workers == 1 ? "" : "s",
		memscope_bytes_text(rss, sizeof(rss), (uint64_t)r->pool.max_rss_kib * 1024));
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
		!(r->size = calloc(w->n, sizeof(*r->size))) ||
		!(r->summary = calloc(w->n, sizeof(*r->summary)))) {
		cli_msg(&tool, "out of memory");
		return CLI_EXIT_IO;
	}
	for (i = o->sharded ? o->shard : 0; i < w->n; i += o->sharded ? o->n_shards : 1) {
		r->todo[r->pool.n_todo++] = i;
		r->pool.total += r->size[i] = workers_input_size(w->inputs[i].path,
			(const char *const *)w->inputs[i].traces, w->inputs[i].n_traces);
	}
	r->pool.todo = r->todo, r->pool.size = r->size;
	/* the progress line over all inputs: "K/N inputs done," */
	return workers_read(&r->pool);
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

	workers_keep_dispositions();
	signal(SIGCHLD, SIG_DFL); /* workers are waited for, whatever the caller left */
	o.jobs = cpus > 0 ? (unsigned long)cpus : 1;
	r.o = &o, r.w = &w;
	r.pool = (struct workers_run){ .tool = &tool, .ops = &batch_workers, .ctx = &r };
	if ((status = parse_args(argc, argv, &o))) {
		status = status < 0 ? CLI_EXIT_OK : status;
		goto out;
	}
	r.pool.jobs = o.jobs, r.pool.quiet = o.common.quiet;
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
	free(r.summary);
	free(r.files);
	memscope_walk_free(&w);
	return status;
}
