/* memscope-report: one command, one report: the verdicts a user reads first (peak, leaks, growth,
 * inefficient memory, fragmentation, what could not be checked) and their details, as text, JSON
 * or one self-contained HTML page, optionally beside a baseline run. */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "workers.h"

/* getopt values of the long-only options */
enum { OPT_FORMAT = 256, OPT_BASELINE, OPT_FAIL_ON_FINDING };

static const struct cli_option options[] = {
	{ "baseline", 0, OPT_BASELINE, "OTHER",
		"an input of the run to compare with (as INPUT); once per input", NULL },
	{ "format", 0, OPT_FORMAT, "FORMAT",
		"text, json or html (default: from -o's ending, .txt, .json, .html or .htm, else "
		"text)",
		NULL },
	{ "fail-on-finding", 0, OPT_FAIL_ON_FINDING, NULL,
		"exit 1 when a verdict is a finding (a leak, growth per step)", NULL },
	{ "jobs", 'j', 'j', "N",
		"read N inputs at a time (default: the number of CPUs; 1: one after another, in "
		"this process)",
		NULL },
	{ "output", 'o', 'o', "FILE", "write the report there (default -, stdout)", NULL },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	.name = "memscope-report",
	.synopsis = "[--baseline OTHER]... [--format text|json|html] [--fail-on-finding]\n"
		    "       [-j N] [-o FILE] [-f] [--lenient] [-q] INPUT...",
	.summary = "The findings first: the peak and what held it, leaks, growth per step,\n"
		   "inefficient memory, fragmentation and what could not be checked, as text,\n"
		   "JSON or one HTML page.",
	.opts = options,
	.in_order = 0,	/* options anywhere */
	.footer = NULL, /* the usual Inputs and Exit status lines */
};

/* -o's ending gives the format when --format is not given (cli_format_from_output) */
static const struct cli_ext exts[] = {
	{ ".txt", MEMSCOPE_REPORT_TEXT },
	{ ".json", MEMSCOPE_REPORT_JSON },
	{ ".html", MEMSCOPE_REPORT_HTML },
	{ ".htm", MEMSCOPE_REPORT_HTML },
	{ NULL, 0 },
};

static const struct cli_choice format_names[] = { { "text", MEMSCOPE_REPORT_TEXT },
	{ "json", MEMSCOPE_REPORT_JSON }, { "html", MEMSCOPE_REPORT_HTML }, { NULL, 0 } };

/* options; main sets every default, beside its flag */
struct report_opts {
	enum memscope_report_format format; /* --format */
	int format_given;		    /* --format was given */
	int fail_on_finding;		    /* --fail-on-finding */
	unsigned long jobs;		    /* -j */
	char **baseline;		    /* --baseline, in the order given (argv's strings) */
	size_t n_baseline;
	struct cli_common common; /* -o, -f, -q, --lenient */
	/* the INPUTs and the --baseline inputs, MEMSCOPE_REPORT_RUN and _BASELINE */
	struct memscope_session *sessions[2];
	const char *const *names[2]; /* their names (the sessions') */
	size_t n_names[2];
};

/* --baseline OTHER, kept in o->baseline. 0 or an exit status (printed). */
static int add_baseline(struct report_opts *o, char *arg)
{
	char **more;

	if (!*arg) {
		cli_msg(&tool, "--baseline: the input's name must not be empty");
		return CLI_EXIT_USAGE;
	}
	more = realloc(o->baseline, (o->n_baseline + 1) * sizeof(*more));
	if (!more) {
		cli_msg(&tool, "out of memory");
		return CLI_EXIT_IO;
	}
	o->baseline = more;
	o->baseline[o->n_baseline++] = arg;
	return 0;
}

/* One option of parse_args (cli_options): c into ctx, a struct report_opts. */
static int option(void *ctx, int c)
{
	struct report_opts *o = ctx;
	int rc = 0, v = 0;

	switch (c) {
	case 'j':
		rc = workers_parse_jobs(&tool, optarg, &o->jobs);
		break;
	case OPT_FORMAT:
		if (!(rc = cli_parse_choice(&tool, "format", optarg, format_names, &v)))
			o->format = (enum memscope_report_format)v;
		o->format_given = 1;
		break;
	case OPT_BASELINE:
		rc = add_baseline(o, optarg);
		break;
	case OPT_FAIL_ON_FINDING:
		o->fail_on_finding = 1;
		break;
	default:
		return CLI_OPT_SHARED;
	}
	return rc;
}

/*
 * The --baseline inputs' session, as cli_named_inputs makes the INPUTs' (it takes the arguments
 * from optind on: here the list of --baseline's). 0 or the exit status (printed).
 */
static int baseline_inputs(struct report_opts *o)
{
	const int side = MEMSCOPE_REPORT_BASELINE, at = optind;
	int rc;

	optind = 0;
	rc = cli_named_inputs(&tool, (int)o->n_baseline, o->baseline, &o->common,
		&o->sessions[side], &o->names[side], &o->n_names[side]);
	optind = at;
	return rc;
}

/* Whether an input of side is standard input. */
static int reads_stdin(const struct report_opts *o, enum memscope_report_side side)
{
	size_t i;

	for (i = 0; i < o->n_names[side]; i++)
		if (strcmp(o->names[side][i], "-") == 0)
			return 1;
	return 0;
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	const int run = MEMSCOPE_REPORT_RUN;
	int rc, v;

	if ((rc = cli_options(&tool, argc, argv, &o->common, option, o)))
		return rc;
	v = (int)o->format;
	/* a name of another ending (x.png) is refused unless --format says what goes there */
	if ((rc = cli_format_from_output(&tool, o->common.output, exts, format_names,
		     (o->format_given ? CLI_FORMAT_GIVEN : 0) | CLI_FORMAT_KNOWN, &v)))
		return rc;
	o->format = (enum memscope_report_format)v;
	if ((rc = cli_named_inputs(&tool, argc, argv, &o->common, &o->sessions[run], &o->names[run],
		     &o->n_names[run])))
		return rc;
	if (o->n_baseline && (rc = baseline_inputs(o)))
		return rc;
	if (o->n_baseline && reads_stdin(o, MEMSCOPE_REPORT_RUN) &&
		reads_stdin(o, MEMSCOPE_REPORT_BASELINE)) {
		cli_msg(&tool, "standard input (-) given to the run and to --baseline: it is read "
			       "once; save one of them to a file");
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* The exit status of err of a read of s, printed: the session's whole line when it has one
 * (memscope_session_error_line: a long path), else err. */
static int read_error(const struct memscope_session *s, const struct memscope_error *err)
{
	const char *line = memscope_session_error_line(s);

	if (!line)
		return cli_error(&tool, err);
	cli_msg(&tool, "%s", line);
	return cli_exit_status(err->code);
}

/* One line for each input of side that could not be read (of several: the report has its row),
 * naming it and saying why. */
static void failed_inputs(const struct memscope_report *r, enum memscope_report_side side)
{
	size_t i, n = memscope_report_failed(r, side) ? memscope_report_inputs(r, side) : 0;
	const char *why;

	for (i = 0; i < n; i++)
		if ((why = memscope_report_error(r, side, i)))
			cli_msg(&tool, "%s", why);
}

/* ------------------------------------------------------------------------------------------ */
/* a side of several inputs read by workers (workers.h), each input's line added in order */

/* One side's read by workers: what each worker gave, until its input's turn. */
struct par {
	struct memscope_report *r;
	enum memscope_report_side side;
	struct memscope_session *s;
	char **line;	/* per input, its worker's "r" line without "r " (NULL: none yet) */
	int *st;	/* per input, its worker's wait status */
	char *ended;	/* per input, its worker has ended */
	size_t n, next; /* inputs; the next to add */
};

/* A worker: input i of the side ctx read alone, its line written to fd; then exit. */
static void par_child(void *ctx, uint64_t i, int fd)
{
	struct par *p = ctx;
	struct memscope_read_opts *ro = memscope_session_read_opts(p->s);
	struct memscope_error err;
	FILE *f;
	int rc;

	ro->progress = workers_child_progress, ro->progress_ctx = &fd;
	if (!(f = fdopen(fd, "w")))
		_exit(CLI_EXIT_IO);
	fputs("r ", f);
	rc = memscope_report_input_line(f, p->s, (size_t)i, &err);
	_exit(fclose(f) || rc ? CLI_EXIT_IO : 0);
}

/* A line of the worker of input i: its input's line, kept. 0 or CLI_EXIT_IO (printed). */
static int par_line(void *ctx, uint64_t i, char *line)
{
	struct par *p = ctx;

	if (line[0] != 'r' || line[1] != ' ' || p->line[i])
		return 0;
	if (!(p->line[i] = strdup(line + 2))) {
		cli_msg(&tool, "out of memory");
		return CLI_EXIT_IO;
	}
	return 0;
}

/* The worker of input i has ended: the inputs ended so far added in order. 0 or the exit
 * status (printed). */
static int par_done(void *ctx, uint64_t i, int st)
{
	struct par *p = ctx;
	struct memscope_error err;
	char msg[512];
	int rc = 0;

	p->st[i] = st, p->ended[i] = 1;
	for (; !rc && p->next < p->n && p->ended[p->next]; p->next++) {
		size_t k = p->next;

		memscope_error_clear(&err);
		if (p->line[k] && WIFEXITED(p->st[k]) && !WEXITSTATUS(p->st[k])) {
			rc = memscope_report_add_line(
				p->r, p->side, p->s, k, p->line[k], strlen(p->line[k]), &err);
		} else {
			workers_lost_text(
				msg, sizeof(msg), memscope_session_input(p->s, k)->name, p->st[k]);
			rc = memscope_report_add_failed(p->r, p->side, p->s, k, msg, &err);
		}
		free(p->line[k]);
		p->line[k] = NULL;
		if (rc)
			rc = cli_error(&tool, &err);
	}
	return rc;
}

static const struct workers_ops par_ops = { par_child, par_line, par_done };

/* Side of r read from s by o->jobs workers (memscope_report_read_begin's parts), then its end
 * (the detail input read again) with the progress line. 0 or the exit status (printed). */
static int read_par(const struct report_opts *o, struct memscope_report *r,
	enum memscope_report_side side, struct memscope_session *s)
{
	struct par p = { r, side, s, NULL, NULL, NULL, memscope_session_count(s), 0 };
	struct workers_run w = {
		.tool = &tool, .ops = &par_ops, .ctx = &p, .jobs = o->jobs, .quiet = o->common.quiet
	};
	struct memscope_error err;
	uint64_t *todo = calloc(p.n, sizeof(*todo)), *size = calloc(p.n, sizeof(*size));
	size_t i;
	int rc = 0;

	memscope_error_clear(&err);
	p.line = calloc(p.n, sizeof(*p.line));
	p.st = calloc(p.n, sizeof(*p.st));
	p.ended = calloc(p.n, 1);
	if (!todo || !size || !p.line || !p.st || !p.ended) {
		cli_msg(&tool, "out of memory");
		rc = CLI_EXIT_IO;
		goto out;
	}
	for (i = 0; i < p.n; i++) {
		todo[i] = i;
		w.total += size[i] = workers_input_size(memscope_session_paths(s)[i], NULL, 0);
	}
	w.todo = todo, w.n_todo = p.n, w.size = size;
	if (memscope_report_read_begin(r, side, s, &err)) {
		rc = cli_error(&tool, &err);
		goto out;
	}
	if ((rc = workers_read(&w)))
		goto out;
	cli_progress(&tool, memscope_session_read_opts(s), o->names[side], o->n_names[side],
		o->common.quiet);
	if (memscope_report_read_end(r, side, s, &err))
		rc = read_error(s, &err);
out:
	for (i = 0; p.line && i < p.n; i++)
		free(p.line[i]);
	free(p.line);
	free(p.st);
	free(p.ended);
	free(todo);
	free(size);
	return rc;
}

/* Whether side's inputs are read by workers: -j above 1, two inputs or more, none of them
 * standard input (a worker cannot read it). */
static int by_workers(const struct report_opts *o, enum memscope_report_side side)
{
	return o->jobs > 1 && o->n_names[side] > 1 && !reads_stdin(o, side);
}

/* Both sides read into r (the run, then the baseline when there is one), with the progress line,
 * and the report finished. 0 or the exit status (printed). */
static int read_all(const struct report_opts *o, struct memscope_report *r)
{
	static const enum memscope_report_side sides[] = { MEMSCOPE_REPORT_RUN,
		MEMSCOPE_REPORT_BASELINE };
	struct memscope_error err;
	size_t i;
	int rc = 0;

	memscope_error_clear(&err);
	memscope_report_expect_baseline(r, o->sessions[MEMSCOPE_REPORT_BASELINE] != NULL);
	for (i = 0; i < 2 && !rc; i++) {
		struct memscope_session *s = o->sessions[sides[i]];

		if (!s)
			continue;
		if (by_workers(o, sides[i])) {
			if (!(rc = read_par(o, r, sides[i], s)))
				failed_inputs(r, sides[i]);
			continue;
		}
		cli_progress(&tool, memscope_session_read_opts(s), o->names[sides[i]],
			o->n_names[sides[i]], o->common.quiet);
		if ((rc = memscope_report_read(r, sides[i], s, &err)))
			rc = read_error(s, &err);
		else
			failed_inputs(r, sides[i]);
	}
	if (!rc && memscope_report_finish(r, &err))
		rc = cli_error(&tool, &err);
	return rc;
}

/*
 * The verdict lines on stderr, each a cli_msg line: the text report's lines before its first
 * empty line. 0 or the exit status (printed).
 */
static int verdicts(const struct memscope_report *r)
{
	struct memscope_error err;
	char *text = NULL, *line, *end;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	int rc = 0;

	memscope_error_clear(&err);
	if (!f) {
		cli_msg(&tool, "out of memory");
		return CLI_EXIT_IO;
	}
	if (memscope_report_write(f, MEMSCOPE_REPORT_TEXT, r, &err) || fflush(f)) {
		cli_msg(&tool, "%s", err.msg[0] ? err.msg : "out of memory");
		rc = CLI_EXIT_IO;
	}
	fclose(f);
	for (line = text; !rc && line && *line && *line != '\n'; line = end + 1) {
		if (!(end = strchr(line, '\n')))
			end = line + strlen(line) - 1;
		cli_msg(&tool, "%.*s", (int)(end - line + (*end != '\n')), line);
	}
	free(text);
	return rc;
}

/* The report written to -o (a temporary file moved into place, never over an input of either
 * side), then the verdict lines on stderr unless -q or they went to stdout. 0 or the exit
 * status (printed). */
static int write_report(const struct report_opts *o, const struct memscope_report *r)
{
	struct memscope_error err;
	struct cli_out out = { 0 };
	int status;

	memscope_error_clear(&err);
	if ((status = cli_out_open_session(&tool, &out, o->common.output, o->common.force,
		     o->sessions[MEMSCOPE_REPORT_RUN])))
		return status;
	if (memscope_report_write(out.f, o->format, r, &err)) {
		cli_msg(&tool, "%s: %s", o->common.output, err.msg);
		cli_out_abort(&out);
		return cli_exit_status(err.code);
	}
	if ((status = cli_out_commit(&tool, &out)))
		return status;
	if (o->common.quiet ||
		(o->format == MEMSCOPE_REPORT_TEXT && strcmp(o->common.output, "-") == 0))
		return 0;
	return verdicts(r);
}

int main(int argc, char **argv)
{
	struct report_opts o = {
		.format = MEMSCOPE_REPORT_TEXT, /* --format text */
		.format_given = 0,		/* --format: else from -o's ending */
		.fail_on_finding = 0,		/* --fail-on-finding: findings leave the status 0 */
		.jobs = 0,			/* -j: the number of CPUs (below) */
		.baseline = NULL,		/* --baseline: none */
		.n_baseline = 0,
		.common.output = "-",	  /* -o: standard output */
		.common.force = 0,	  /* -f: never over an existing file */
		.common.quiet = 0,	  /* -q: the verdicts on stderr */
		.common.read.lenient = 0, /* --lenient: a bad row is an error */
	};
	struct memscope_report *r = NULL;
	struct memscope_error err;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int status;

	memscope_error_clear(&err);
	workers_keep_dispositions();
	signal(SIGCHLD, SIG_DFL); /* workers are waited for, whatever the caller left */
	o.jobs = cpus > 0 ? (unsigned long)cpus : 1; /* -j: the number of CPUs */
	status = parse_args(argc, argv, &o);
	if (status) {
		status = status < 0 ? CLI_EXIT_OK : status;
		goto out;
	}
	/* the report is never written over an input, nor over a file without --force */
	if ((status = cli_out_check_session(
		     &tool, o.common.output, o.common.force, o.sessions[MEMSCOPE_REPORT_RUN])) ||
		(o.sessions[MEMSCOPE_REPORT_BASELINE] &&
			(status = cli_out_check_session(&tool, o.common.output, o.common.force,
				 o.sessions[MEMSCOPE_REPORT_BASELINE]))))
		goto out;
	if (memscope_report_new(&r, &err)) {
		status = cli_error(&tool, &err);
		goto out;
	}
	if ((status = read_all(&o, r)) || (status = write_report(&o, r)))
		goto out;
	if (memscope_report_failed(r, MEMSCOPE_REPORT_RUN) ||
		(o.n_baseline && memscope_report_failed(r, MEMSCOPE_REPORT_BASELINE)))
		status = CLI_EXIT_INVALID;
	else if (o.fail_on_finding && memscope_report_found(r))
		status = CLI_EXIT_FINDINGS;
out:
	memscope_report_free(r);
	memscope_session_free(o.sessions[MEMSCOPE_REPORT_RUN]);
	memscope_session_free(o.sessions[MEMSCOPE_REPORT_BASELINE]);
	free(o.baseline);
	return status;
}
