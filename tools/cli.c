/* Implementation of the shared CLI helper (cli.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define MAX_OPTS 64

/* The longest option name a suggestion is looked for (longer words are no typo of ours). */
#define NAME_MAX_LEN 40

/*
 * The edit distance of a[0..na) and b[0..nb), both at most NAME_MAX_LEN: insertions, deletions,
 * substitutions and swaps of two neighbours count one each ("gruop" is one from "group").
 */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	size_t d[NAME_MAX_LEN + 1][NAME_MAX_LEN + 1], i, j;

	for (i = 0; i <= na; i++)
		d[i][0] = i;
	for (j = 0; j <= nb; j++)
		d[0][j] = j;
	for (i = 1; i <= na; i++)
		for (j = 1; j <= nb; j++) {
			size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			size_t best = sub < del ? sub : del;

			best = ins < best ? ins : best;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
				d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[na][nb];
}

/*
 * The message of an unknown long option arg ("--gruop-by=x"): which options it abbreviates when
 * it is ambiguous, else the tool's closest option when it is close (one edit for a name of up to
 * four letters, two for a longer one).
 */
static void unknown_long(const struct cli_tool *t, const char *arg)
{
	const char *name = arg + strspn(arg, "-");
	size_t n = strcspn(name, "="), i, best_d = SIZE_MAX, n_prefix = 0;
	const struct cli_option *best = NULL;
	char prefixed[256];
	int len = 0;

	prefixed[0] = '\0';
	for (i = 0; t->opts[i].name && n <= NAME_MAX_LEN; i++) {
		const char *o = t->opts[i].name;
		size_t d, on = strlen(o);

		if (on > n && !strncmp(o, name, n) && len >= 0 && (size_t)len < sizeof(prefixed)) {
			len += snprintf(prefixed + len, sizeof(prefixed) - (size_t)len, "%s--%s",
				n_prefix ? ", " : "", o);
			n_prefix++;
		}
		if (on > NAME_MAX_LEN)
			continue;
		d = edit_distance(name, n, o, on);
		if (d < best_d) {
			best_d = d;
			best = &t->opts[i];
		}
	}
	if (n_prefix > 1)
		cli_msg(t, "option '%.*s' is ambiguous: %s", (int)(name - arg + n), arg, prefixed);
	else if (best && best_d && best_d <= (n <= 4 ? 1u : 2u))
		cli_msg(t, "unknown option '%.*s': did you mean --%s?", (int)(name - arg + n), arg,
			best->name);
	else
		cli_msg(t, "unknown option '%.*s'", (int)(name - arg + n), arg);
}

/* Whether arg is "--NAME=x" for a flag (or a prefix of one's name) whose value is val: what
 * getopt's '?' with optopt val means then, rather than an unknown short option -val. */
static int flag_given_value(const struct cli_tool *t, const char *arg, int val)
{
	size_t i, n;

	if (strncmp(arg, "--", 2) || !strchr(arg, '='))
		return 0;
	n = strcspn(arg + 2, "=");
	for (i = 0; t->opts[i].name; i++)
		if (!t->opts[i].arg && t->opts[i].val == val &&
			!strncmp(t->opts[i].name, arg + 2, n))
			return 1;
	return 0;
}

int cli_getopt(const struct cli_tool *t, int argc, char **argv)
{
	static struct option longs[MAX_OPTS + 1];
	static char shorts[MAX_OPTS * 2 + 3];
	static const struct cli_tool *built;
	size_t i, n = 0, s = 0;

	if (built != t) {
		if (t->in_order)
			shorts[s++] = '+';
		shorts[s++] = ':';
		for (i = 0; t->opts[i].name && n < MAX_OPTS; i++, n++) {
			longs[n].name = t->opts[i].name;
			longs[n].has_arg = t->opts[i].arg ? required_argument : no_argument;
			longs[n].flag = NULL;
			longs[n].val = t->opts[i].val;
			if (t->opts[i].short_name) {
				shorts[s++] = (char)t->opts[i].short_name;
				if (t->opts[i].arg)
					shorts[s++] = ':';
			}
		}
		memset(&longs[n], 0, sizeof(longs[n]));
		shorts[s] = '\0';
		built = t;
	}
	int k = -1, c = getopt_long(argc, argv, shorts, longs, &k);
	const char *eq = k >= 0 && t->opts[k].alias_of ? strchr(t->opts[k].alias_of, '=') : NULL;

	if (eq)
		optarg = (char *)eq + 1; /* a flag alias: its option's argument (cli.h) */
	if (c == ':') {
		cli_msg(t, "option '%s' needs an argument", argv[optind - 1]);
		return '?';
	}
	if (c == '?') {
		const char *arg = optind > 0 ? argv[optind - 1] : "";

		/* getopt's optopt: 0 for an unknown long option, the val of a flag given "=x";
		 * an unknown short option inside a bundle ("-Zq") leaves optind on it, so arg is
		 * then the argument before it */
		if (!optopt)
			unknown_long(t, arg);
		else if (flag_given_value(t, arg, optopt))
			cli_msg(t, "option '%.*s' takes no argument", (int)strcspn(arg, "="), arg);
		else
			cli_msg(t, "unknown option '-%c'", optopt);
	}
	return c;
}

int cli_common_option(const struct cli_tool *t, int opt, struct cli_common *c)
{
	switch (opt) {
	case 'o':
		c->output = optarg;
		return 0;
	case 'f':
		c->force = 1;
		return 0;
	case 'q':
		c->quiet = 1;
		return 0;
	case CLI_OPT_LENIENT:
		c->read.lenient = 1;
		return 0;
	}
	if (opt == 'h') {
		cli_help(t);
		return -1;
	}
	if (opt == 'V') {
		printf("%s %s\n", t->name, memscope_version());
		return -1;
	}
	cli_msg(t, "try '%s --help'", t->name);
	return CLI_EXIT_USAGE;
}

int cli_options(const struct cli_tool *t, int argc, char **argv, struct cli_common *c,
	int (*fn)(void *ctx, int opt), void *ctx)
{
	int opt, rc = 0;

	while (!rc && (opt = cli_getopt(t, argc, argv)) != -1) {
		rc = fn(ctx, opt);
		if (rc == CLI_OPT_SHARED)
			rc = cli_common_option(t, opt, c);
	}
	return rc;
}

/*
 * The progress line of cli_progress: one per process, on stderr. shown is the length of what is on
 * the terminal (0: nothing); a read's rate counts from its first report.
 */
static struct {
	const struct cli_tool *t;
	const char *const *inputs;
	size_t n;
	size_t shown;
	int started;
	uint32_t src;
	uint64_t done, start_done;
	double start, last;
} prog;

double cli_now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Blank the progress line, if one is shown (before a message, at the end of a read, at exit). */
static void progress_clear(void)
{
	if (!prog.shown)
		return;
	fprintf(stderr, "\r%*s\r", (int)prog.shown, "");
	prog.shown = 0;
}

/* "12 s", "3 min", "2 h" */
static void eta_text(char *buf, size_t n, double s)
{
	if (s < 100)
		snprintf(buf, n, "%.0f s", s);
	else if (s < 6000)
		snprintf(buf, n, "%.0f min", s / 60);
	else
		snprintf(buf, n, "%.0f h", s / 3600);
}

/* The terminal's width in columns (80 when it does not say). */
static size_t term_columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

/* memscope_progress_fn of cli_progress: the line redrawn a few times a second. */
static void on_progress(void *ctx, uint32_t src, uint64_t done, uint64_t total)
{
	char name[256], figs[160], d[MEMSCOPE_BYTES_TEXT_MAX], tot[MEMSCOPE_BYTES_TEXT_MAX];
	char rate[MEMSCOPE_BYTES_TEXT_MAX], eta[32], head[320], line[512];
	const char *in;
	double now = cli_now_seconds(), secs;
	size_t cols, len, k, off = 0;

	(void)ctx;
	if (!prog.started || src != prog.src || done < prog.done) {
		/* a new read (or the same input read again) */
		prog.started = 1;
		prog.src = src;
		prog.start = now;
		prog.start_done = done;
		prog.last = 0;
	}
	prog.done = done;
	if (total && done >= total) {
		progress_clear(); /* read to its end */
		return;
	}
	if (prog.last && now - prog.last < 0.25)
		return;
	prog.last = now;
	in = src < prog.n ? prog.inputs[src] : "input";
	memscope_text_escape(name, sizeof(name), strcmp(in, "-") ? in : "standard input",
		strlen(strcmp(in, "-") ? in : "standard input"));
	memscope_bytes_text(d, sizeof(d), done);
	len = (size_t)snprintf(figs, sizeof(figs), " %s", d);
	if (total)
		len += (size_t)snprintf(figs + len, sizeof(figs) - len, " of %s",
			memscope_bytes_text(tot, sizeof(tot), total));
	secs = now - prog.start;
	if (secs >= 0.2 && done > prog.start_done) {
		double bps = (double)(done - prog.start_done) / secs;

		len += (size_t)snprintf(figs + len, sizeof(figs) - len, ", %s/s",
			memscope_bytes_text(rate, sizeof(rate), (uint64_t)bps));
		if (total) {
			eta_text(eta, sizeof(eta), (double)(total - done) / bps);
			snprintf(figs + len, sizeof(figs) - len, ", ETA %s", eta);
		}
	}
	if (prog.n > 1)
		snprintf(head, sizeof(head), "%s: [%u/%zu] ", prog.t->name, (unsigned)src + 1,
			prog.n);
	else
		snprintf(head, sizeof(head), "%s: ", prog.t->name);
	/* one terminal line: a long name loses its beginning */
	cols = term_columns() - 1;
	len = strlen(head) + strlen(figs);
	if (len + strlen(name) > cols) {
		k = len + 3 < cols ? cols - len - 3 : 0;
		off = strlen(name) - (k < strlen(name) ? k : strlen(name));
		while (name[off] && ((unsigned char)name[off] & 0xc0) == 0x80)
			off++; /* not inside a UTF-8 sequence */
	}
	len = (size_t)snprintf(
		line, sizeof(line), "%s%s%s%s", head, off ? "..." : "", name + off, figs);
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	if (len > cols)
		len = cols;
	fprintf(stderr, "\r%.*s%*s", (int)len, line, (int)(prog.shown > len ? prog.shown - len : 0),
		"");
	prog.shown = prog.shown > len ? prog.shown : len;
}

/* A reader's note on how it read an input: one line, after the progress line is cleared. */
static void on_notice(void *ctx, uint32_t src, const char *msg)
{
	char name[256];
	const char *in = src < prog.n ? prog.inputs[src] : "input";

	(void)ctx;
	progress_clear();
	memscope_text_escape(name, sizeof(name), strcmp(in, "-") ? in : "standard input",
		strlen(strcmp(in, "-") ? in : "standard input"));
	cli_msg(prog.t, "%s: %s", name, msg);
}

void cli_progress(const struct cli_tool *t, struct memscope_read_opts *ro,
	const char *const *inputs, size_t n, int quiet)
{
	static int at_exit;

	if (quiet)
		return;
	progress_clear();
	prog.t = t;
	prog.inputs = inputs;
	prog.n = n;
	prog.started = 0;
	ro->notice = on_notice;
	if (!isatty(STDERR_FILENO))
		return;
	if (!at_exit && atexit(progress_clear) == 0)
		at_exit = 1;
	ro->progress = on_progress;
	ro->progress_ctx = &prog;
}

/* memscope_note_fn of the tools: a note's text as one line (ctx: the tool). */
static void print_note(void *ctx, const struct memscope_note *n)
{
	cli_msg(ctx, "%s", n->text);
}

/* print_note for a quiet tool: not the info notes (how the read went). */
static void print_note_quiet(void *ctx, const struct memscope_note *n)
{
	if (!n->info)
		cli_msg(ctx, "%s", n->text);
}

/* A new session for t's reads with c's options, its notes printed. 0 or the exit status
 * (printed). */
static int session_new(
	const struct cli_tool *t, const struct cli_common *c, struct memscope_session **s)
{
	struct memscope_error err;

	if (memscope_session_new(
		    s, &c->read, c->quiet ? print_note_quiet : print_note, (void *)t, &err)) {
		cli_msg(t, "out of memory");
		return CLI_EXIT_IO;
	}
	return 0;
}

/* The exit status of err of a call into s, printed: the session's whole line when it has one
 * (memscope_session_error_line: a long path), else err. */
static int session_error(const struct cli_tool *t, const struct memscope_session *s,
	const struct memscope_error *err)
{
	const char *line = memscope_session_error_line(s);

	if (!line)
		return cli_error(t, err);
	cli_msg(t, "%s", line);
	return cli_exit_status(err->code);
}

/* The exit status of err (printed as session_error), *s freed and cleared. */
static int session_fail(
	const struct cli_tool *t, struct memscope_session **s, const struct memscope_error *err)
{
	int rc = session_error(t, *s, err);

	memscope_session_free(*s);
	*s = NULL;
	return rc;
}

int cli_inputs(const struct cli_tool *t, int argc, char **argv, const struct cli_common *c,
	unsigned flags, struct memscope_session **s)
{
	struct memscope_error err;
	int rc;

	*s = NULL;
	if (optind >= argc) {
		cli_msg(t,
			"no INPUT given (a dump CSV, capture file, database, PyTorch memory "
			"snapshot, Nsight Systems export, PyTorch profiler trace, Ascend profiler "
			"output or a folder of them; - for stdin)");
		return CLI_EXIT_USAGE;
	}
	if ((rc = session_new(t, c, s)))
		return rc;
	rc = memscope_session_add(
		*s, (const char *const *)argv + optind, (size_t)(argc - optind), flags, &err);
	return rc ? session_fail(t, s, &err) : 0;
}

int cli_named_inputs(const struct cli_tool *t, int argc, char **argv, const struct cli_common *c,
	struct memscope_session **s, const char *const **names, size_t *n)
{
	int rc = cli_inputs(t, argc, argv, c, 0, s);

	if (rc)
		return rc;
	*names = memscope_session_names(*s);
	*n = memscope_session_count(*s);
	return 0;
}

int cli_input(const struct cli_tool *t, const char *path, const struct cli_common *c,
	struct memscope_session **s)
{
	struct memscope_error err;
	int rc;

	*s = NULL;
	if ((rc = session_new(t, c, s)))
		return rc;
	rc = memscope_session_add_one(*s, path, &err);
	return rc ? session_fail(t, s, &err) : 0;
}

int cli_session_run(const struct cli_tool *t, struct memscope_session *s,
	struct memscope_strtab *st, const struct memscope_run_item *items, size_t n_items,
	int quiet)
{
	struct memscope_error err;
	int rc;

	cli_progress(t, memscope_session_read_opts(s), memscope_session_names(s),
		memscope_session_count(s), quiet);
	rc = memscope_session_run(s, st, items, n_items, &err);
	progress_clear();
	return rc ? session_error(t, s, &err) : 0;
}

void cli_report_read(
	const struct cli_tool *t, const char *input, const struct memscope_read_stats *s)
{
	memscope_read_notes(input, MEMSCOPE_NOTE_NO_INPUT, s, print_note, (void *)t);
}

/* The aliases of row o at the end of its --help line: " (also -t, --to)", " (also --to-csv for
 * csv)". */
static void help_aliases(const struct cli_tool *t, const struct cli_option *o)
{
	const struct cli_option *a;
	const char *sep = " (also ";

	for (a = t->opts; a->name; a++) {
		size_t n = a->alias_of ? strcspn(a->alias_of, "=") : 0;

		if (!a->alias_of || strlen(o->name) != n || strncmp(a->alias_of, o->name, n))
			continue;
		printf("%s", sep);
		if (a->short_name)
			printf("-%c, ", a->short_name);
		printf("--%s", a->name);
		if (a->alias_of[n] == '=')
			printf(" for %s", a->alias_of + n + 1);
		sep = ", ";
	}
	if (*sep == ',')
		putchar(')');
}

/* --help's Inputs lines, true for tool t: python_trace files for memscope-db only; a folder of
 * several inputs for the tools that take several, of one for those that take one. */
static void help_inputs(const struct cli_tool *t)
{
	int db = !strcmp(t->name, "memscope-db");
	int one = !strcmp(t->name, "memscope-convert");
	int two = !strcmp(t->name, "memscope-compare");

	printf("\nInputs: memscope_dump CSV, capture and database files, PyTorch CUDA memory "
	       "snapshots,\nNsight Systems SQLite exports%s,\nPyTorch profiler traces "
	       "(*.pt.trace.json), gzip or zstd compressed too (- is standard\ninput); Ascend "
	       "profiler outputs: a torch_npu *_ascend_pt, MindSpore *_ascend_ms or msprof\n"
	       "PROF_* folder, or one of its memory CSVs or its timeline JSON;\n%s; see "
	       "memscope(7).%s\n",
		db ? ", python_trace files (stored beside the events)" : "",
		one || two ? "a folder holding one of any of them (a folder of several is refused)"
			   : "a folder of any of them (each its own input, in name order)",
		two   ? "\nExactly two inputs: BASE and COMPARE."
		: one ? "\nOne input."
		      : "");
}

void cli_help(const struct cli_tool *t)
{
	const struct cli_option *o;
	size_t i;

	printf("Usage: %s %s\n%s\n\nOptions:\n", t->name, t->synopsis, t->summary);
	for (i = 0; t->opts[i].name; i++) {
		char left[64];

		o = &t->opts[i];
		if (o->alias_of)
			continue; /* on its row's line */
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name,
				o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
				o->arg ? o->arg : "");
		printf("  %-26s %s", left, o->help);
		help_aliases(t, o);
		putchar('\n');
	}
	if (t->footer) {
		printf("\n%s\nSee %s(1).\n", t->footer, t->name);
		return;
	}
	for (o = t->opts; o->name && (o->alias_of || strncmp(o->name, "fail-on-", 8)); o++)
		;
	help_inputs(t);
	printf("\nExit status: 0 ok, %s%s%s2 usage error, 3 invalid input, 4 I/O or internal "
	       "error.\nSee %s(1).\n",
		o->name ? "1 findings (with --" : "", o->name ? o->name : "", o->name ? "), " : "",
		t->name);
}

void cli_msg(const struct cli_tool *t, const char *fmt, ...)
{
	char line[4096];
	va_list ap;

	/* one line whatever the text quotes: control bytes and invalid UTF-8 are escaped */
	va_start(ap, fmt);
	memscope_text_vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	progress_clear();
	fprintf(stderr, "%s: %s\n", t->name, line);
}

int cli_exit_status(int code)
{
	switch (code) {
	case MEMSCOPE_OK:
		return CLI_EXIT_OK;
	case MEMSCOPE_E_INVALID:
	case MEMSCOPE_E_TRUNCATED:
	case MEMSCOPE_E_UNSUPPORTED:
		return CLI_EXIT_INVALID;
	case MEMSCOPE_E_ARG:
		return CLI_EXIT_USAGE;
	default:
		return CLI_EXIT_IO;
	}
}

int cli_error(const struct cli_tool *t, const struct memscope_error *err)
{
	char buf[1200];

	memscope_error_format(err, buf, sizeof(buf));
	/* only a strict read stops at a cut: say what the lenient one does */
	cli_msg(t, "%s%s", buf,
		err->code == MEMSCOPE_E_TRUNCATED
			? " (--lenient reads every complete row or record before the cut)"
			: "");
	return cli_exit_status(err->code);
}

int cli_error_io(const struct cli_tool *t, const struct memscope_error *err, const char *input,
	const char *output)
{
	struct memscope_error e = *err;

	if (!e.file[0])
		snprintf(e.file, sizeof(e.file), "%s", e.line ? input : output);
	return cli_error(t, &e);
}

int cli_parse_uint(const char *s, unsigned long long *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int cli_parse_count(const struct cli_tool *t, const char *opt, const char *arg,
	unsigned long long min, uint64_t *v)
{
	unsigned long long n;

	if (cli_parse_uint(arg, &n) || n < min) {
		cli_msg(t, "--%s: expected a whole number from %llu, got '%s'", opt, min, arg);
		return CLI_EXIT_USAGE;
	}
	*v = n;
	return 0;
}

const char *cli_trim(const char *s, size_t *n)
{
	while (*n && (*s == ' ' || *s == '\t'))
		s++, (*n)--;
	while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
		(*n)--;
	return s;
}

int cli_parse_list(const char *arg, int (*item)(void *ctx, const char *s, size_t n), void *ctx)
{
	const char *p = arg;

	if (!*p)
		return -1;
	while (*p) {
		size_t n = strcspn(p, ","), k = n;
		const char *s = cli_trim(p, &k);

		if (!k || item(ctx, s, k))
			return -1;
		p += n;
		if (*p == ',' && !*++p)
			return -1;
	}
	return 0;
}

/* Whether choice c goes into the message's list: its value's first name and, in a list of names
 * (list), not "all", which comes last. */
static int listed(const struct cli_choice *choices, const struct cli_choice *c, int list)
{
	const struct cli_choice *e;

	if (list && strcmp(c->name, "all") == 0)
		return 0;
	for (e = choices; e < c; e++)
		if (e->value == c->value)
			return 0;
	return 1;
}

/* The usage error of cli_parse_choice (list 0) and cli_parse_names (list 1). */
static int bad_choice(const struct cli_tool *t, const char *opt, const char *arg,
	const struct cli_choice *choices, int list)
{
	const struct cli_choice *c;
	size_t n = 0, i = 0, len = 0;
	int all = 0;
	char buf[512];

	for (c = choices; c->name; c++) {
		n += (size_t)listed(choices, c, list);
		all |= list && strcmp(c->name, "all") == 0;
	}
	buf[0] = '\0';
	for (c = choices; c->name && len < sizeof(buf); c++) {
		const char *sep = !i ? "" : i + 1 < n ? ", " : list ? " and/or " : " or ";

		if (!listed(choices, c, list))
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", sep, c->name);
		i++;
	}
	cli_msg(t, "--%s: expected %s%s, got '%s'", opt, buf, all ? ", or all" : "", arg);
	return CLI_EXIT_USAGE;
}

int cli_parse_choice(const struct cli_tool *t, const char *opt, const char *arg,
	const struct cli_choice *choices, int *value)
{
	const struct cli_choice *c;

	for (c = choices; c->name; c++)
		if (strcmp(arg, c->name) == 0) {
			*value = c->value;
			return 0;
		}
	return bad_choice(t, opt, arg, choices, 0);
}

struct names {
	const struct cli_choice *choices;
	unsigned bits;
};

/* one name of a cli_parse_names list into ((struct names *)ctx)->bits */
static int name_item(void *ctx, const char *s, size_t n)
{
	struct names *x = ctx;
	const struct cli_choice *c;

	for (c = x->choices; c->name; c++)
		if (strlen(c->name) == n && strncmp(s, c->name, n) == 0) {
			x->bits |= (unsigned)c->value;
			return 0;
		}
	return -1;
}

int cli_parse_names(const struct cli_tool *t, const char *opt, const char *arg,
	const struct cli_choice *choices, unsigned *bits)
{
	struct names x = { choices, 0 };

	if (cli_parse_list(arg, name_item, &x))
		return bad_choice(t, opt, arg, choices, 1);
	*bits = x.bits;
	return 0;
}

/* --format of the report tools, in the order of their format enums */
static const struct cli_choice report_formats[] = { { "text", 0 }, { "json", 1 }, { "csv", 2 },
	{ NULL, 0 } };

int cli_parse_format(const struct cli_tool *t, const char *arg, unsigned *format)
{
	int v = 0, rc = cli_parse_choice(t, "format", arg, report_formats, &v);

	if (!rc)
		*format = (unsigned)v;
	return rc;
}

int cli_report_format(const struct cli_tool *t, const char *output,
	const struct cli_choice *choices, int given, unsigned *format)
{
	struct cli_ext exts[8] = { { ".txt", 0 }, { ".json", 1 }, { ".csv", 2 } };
	const struct cli_choice *c;
	size_t n = 3;
	int v = (int)*format, rc;

	if (!choices)
		choices = report_formats;
	for (c = choices; c->name && n + 1 < sizeof(exts) / sizeof(exts[0]); c++)
		if (c->value > 2)
			exts[n++] = (struct cli_ext){ ".txt", c->value };
	exts[n] = (struct cli_ext){ NULL, 0 };
	rc = cli_format_from_output(t, output, exts, choices, given, &v);
	if (!rc)
		*format = (unsigned)v;
	return rc;
}

/* The first name of value in choices ("?" when none). */
const char *cli_choice_name(const struct cli_choice *choices, int value)
{
	for (; choices->name; choices++)
		if (choices->value == value)
			return choices->name;
	return "?";
}

int cli_format_from_output(const struct cli_tool *t, const char *output,
	const struct cli_ext *table, const struct cli_choice *choices, int given, int *value)
{
	const struct cli_ext *e, *best = NULL;
	const char *base;
	size_t n, k;

	if (!output || !strcmp(output, "-"))
		return 0;
	base = strrchr(output, '/') ? strrchr(output, '/') + 1 : output;
	n = strlen(base);
	for (e = table; e->ext; e++) {
		k = strlen(e->ext);
		if (n > k && !strcasecmp(base + n - k, e->ext) && (!best || k > strlen(best->ext)))
			best = e;
	}
	if (!best && (given & CLI_FORMAT_KNOWN) && !(given & CLI_FORMAT_GIVEN) &&
		strrchr(base, '.') > base) {
		char known[256];
		size_t len = 0;

		known[0] = '\0';
		for (e = table; e->ext && len < sizeof(known); e++) {
			const struct cli_ext *x;

			for (x = table; x < e && strcmp(x->ext, e->ext); x++)
				;
			if (x == e) /* an ending's first row */
				len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
					len ? ", " : "", e->ext);
		}
		cli_msg(t,
			"-o %s: %s is no ending of a format %s writes (%s); give --format to "
			"write one there anyway",
			output, strrchr(base, '.'), t->name, known);
		return CLI_EXIT_USAGE;
	}
	if (!best)
		return 0;
	if (!(given & CLI_FORMAT_GIVEN)) {
		*value = best->value;
		return 0;
	}
	for (e = table; e->ext; e++)
		if (!strcmp(e->ext, best->ext) && e->value == *value)
			return 0;
	cli_msg(t, "--format %s contradicts -o %s (%s)", cli_choice_name(choices, *value), output,
		cli_choice_name(choices, best->value));
	return CLI_EXIT_USAGE;
}

int cli_parse_size(const char *s, unsigned long long *v)
{
	static const char units[] = "KMGT";
	unsigned long long n = 0, mult = 1;
	const char *u;

	if (!s || *s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++)
		if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, *s - '0', &n))
			return -1;
	if (*s && (u = strchr(units, toupper((unsigned char)*s))) != NULL) {
		mult = 1ull << (10 * (u - units + 1));
		s++;
		if ((*s == 'i' || *s == 'I') && (s[1] == 'B' || s[1] == 'b'))
			s++;
	}
	if (*s == 'B' || *s == 'b')
		s++;
	if (*s || __builtin_mul_overflow(n, mult, v))
		return -1;
	return 0;
}

/* The directory of path resolved, then its last component: one text per file, existing or not.
 * NULL on failure (malloc'd). */
static char *canonical(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	char *real = dir ? realpath(dir, NULL) : NULL, *out = NULL;

	if (real && asprintf(&out, "%s/%s", real, slash ? slash + 1 : path) < 0)
		out = NULL;
	free(dir);
	free(real);
	return out;
}

int cli_same_path(const char *a, const char *b)
{
	struct stat sa, sb;
	char *x, *y;
	int same;

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	x = canonical(a);
	y = canonical(b);
	same = x && y ? strcmp(x, y) == 0 : strcmp(a, b) == 0;
	free(x);
	free(y);
	return same;
}

/* What a name is: "-" is fd (standard input or output), any other a path followed through links. */
static int file_stat(const char *name, int fd, struct stat *st)
{
	return strcmp(name, "-") ? stat(name, st) : fstat(fd, st);
}

/*
 * The input among inputs that the output path is, by identity (links of any kind count; "-" is
 * standard input or output, and then only a regular file counts: a terminal is both), or NULL.
 */
static const char *input_at(
	const char *path, const char *const *inputs, const char *const *paths, size_t n_inputs)
{
	struct stat so, si;
	size_t i;

	if (file_stat(path, STDOUT_FILENO, &so))
		return NULL;
	for (i = 0; i < n_inputs; i++)
		if (file_stat(paths ? paths[i] : inputs[i], STDIN_FILENO, &si) == 0 &&
			so.st_dev == si.st_dev && so.st_ino == si.st_ino &&
			(S_ISREG(so.st_mode) || (strcmp(path, "-") && strcmp(inputs[i], "-"))))
			return inputs[i];
	return NULL;
}

/* Refuse output path when it is an input (cli_out_check's first rule): 0 or CLI_EXIT_USAGE. */
static int refuse_input(const struct cli_tool *t, const char *path, const char *const *inputs,
	const char *const *paths, size_t n_inputs)
{
	const char *in = input_at(path, inputs, paths, n_inputs);

	/* the files a profiler folder is read from, and every profiler file elsewhere */
	if (!in && strcmp(path, "-") && !access(path, F_OK) &&
		memscope_profiler_file_name(strrchr(path, '/') ? strrchr(path, '/') + 1 : path)) {
		cli_msg(t,
			"%s: an Ascend profiler file: memscope never writes over one (name the "
			"output "
			"otherwise with -o)",
			path);
		return CLI_EXIT_USAGE;
	}
	if (!in)
		return 0;
	if (strcmp(in, path) == 0)
		cli_msg(t, "%s: output would overwrite the input", path);
	else
		cli_msg(t, "%s: output would overwrite the input %s (the same file)",
			strcmp(path, "-") ? path : "standard output",
			strcmp(in, "-") ? in : "standard input");
	return CLI_EXIT_USAGE;
}

/* cli_out_check whose inputs are read from paths (NULL: the inputs themselves). */
static int out_check(const struct cli_tool *t, const char *path, int force,
	const char *const *inputs, const char *const *paths, size_t n_inputs)
{
	struct stat sl, so;
	int rc;

	if (!*path) {
		cli_msg(t, "an empty output file name");
		return CLI_EXIT_USAGE;
	}
	if ((rc = refuse_input(t, path, inputs, paths, n_inputs)) || strcmp(path, "-") == 0 ||
		lstat(path, &sl))
		return rc;
	if (stat(path, &so)) {
		if (force)
			return 0;
		cli_msg(t, "%s: exists as a dangling symbolic link (use --force to replace it)",
			path);
		return CLI_EXIT_USAGE;
	}
	if (S_ISDIR(so.st_mode)) {
		cli_msg(t, "%s: is a directory", path);
		return CLI_EXIT_USAGE;
	}
	if (!force && S_ISREG(so.st_mode)) {
		cli_msg(t, "%s: exists (use --force to overwrite)", path);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/*
 * Temporary outputs not yet published, removed if a signal ends the tool, so an interrupted run
 * leaves nothing beside its output either. The list changes only with those signals blocked; the
 * handler only reads it.
 */
static struct cli_out *volatile pending;
static const int fatal_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ };

/* Is name the placeholder cli_out_reserve made for o? (async-signal-safe) */
static int is_placeholder(const struct cli_out *o, const char *name)
{
	struct stat sl;

	return o->reserved && lstat(name, &sl) == 0 && (uint64_t)sl.st_dev == o->res_dev &&
	       (uint64_t)sl.st_ino == o->res_ino;
}

static void on_fatal_signal(int sig)
{
	struct cli_out *o;

	for (o = pending; o; o = o->next) {
		unlink(o->tmp);
		if (is_placeholder(o, o->path))
			unlink(o->path);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Block the fatal signals, *old (if given) getting the mask to restore with SIG_SETMASK. */
static void fatal_block(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++)
		sigaddset(&set, fatal_sigs[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void install_handlers(void)
{
	static int installed;
	size_t i;

	if (installed)
		return;
	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++) {
		struct sigaction sa, old_sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal_signal;
		/* a signal ignored from the start (nohup, a background job) stays ignored */
		if (sigaction(fatal_sigs[i], NULL, &old_sa) == 0 && old_sa.sa_handler != SIG_IGN)
			sigaction(fatal_sigs[i], &sa, NULL);
	}
	installed = 1;
}

static void pending_remove(struct cli_out *o)
{
	struct cli_out *volatile *pp;
	sigset_t old;

	fatal_block(&old);
	for (pp = &pending; *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

int cli_out_check(const struct cli_tool *t, const char *path, int force, const char *const *inputs,
	size_t n_inputs)
{
	return out_check(t, path, force, inputs, NULL, n_inputs);
}

int cli_out_check_session(
	const struct cli_tool *t, const char *path, int force, const struct memscope_session *s)
{
	return out_check(t, path, force, memscope_session_names(s), memscope_session_paths(s),
		memscope_session_count(s));
}

/* cli_out_open whose inputs are read from paths (NULL: the inputs themselves). */
static int out_open(const struct cli_tool *t, struct cli_out *o, const char *path, int force,
	const char *const *inputs, const char *const *paths, size_t n_inputs)
{
	struct stat so;
	sigset_t old;
	int fd, rc;

	memset(o, 0, sizeof(*o));
	if ((rc = out_check(t, path, force, inputs, paths, n_inputs)))
		return rc;
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	o->force = force;
	o->inputs = inputs;
	o->paths = paths;
	o->n_inputs = n_inputs;
	if (stat(path, &so) == 0 && !S_ISREG(so.st_mode)) {
		/* a device or pipe (/dev/null, a FIFO): written in place, nothing to replace */
		if (!(o->f = fopen(path, "wb"))) {
			cli_msg(t, "%s: cannot open: %s", path, strerror(errno));
			return CLI_EXIT_IO;
		}
		o->path = strdup(path); /* for messages; NULL is fine */
		return 0;
	}
	o->path = strdup(path);
	o->tmp = malloc(strlen(path) + 16);
	if (!o->path || !o->tmp) {
		cli_msg(t, "out of memory");
		cli_out_abort(o);
		return CLI_EXIT_IO;
	}
	sprintf(o->tmp, "%s.tmp.XXXXXX", path);
	install_handlers();
	/* the temporary file exists only on the list: a signal cannot come in between */
	fatal_block(&old);
	if ((fd = mkstemp(o->tmp)) >= 0) {
		o->next = pending;
		pending = o;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
		cli_msg(t, "%s: cannot create: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
		} else {
			free(o->tmp); /* nothing was created */
			o->tmp = NULL;
		}
		cli_out_abort(o);
		return CLI_EXIT_IO;
	}
	fchmod(fd, 0644 & ~umask(umask(0)));
	return 0;
}

int cli_out_open(const struct cli_tool *t, struct cli_out *o, const char *path, int force,
	const char *const *inputs, size_t n_inputs)
{
	return out_open(t, o, path, force, inputs, NULL, n_inputs);
}

int cli_out_open_session(const struct cli_tool *t, struct cli_out *o, const char *path, int force,
	const struct memscope_session *s)
{
	return out_open(t, o, path, force, memscope_session_names(s), memscope_session_paths(s),
		memscope_session_count(s));
}

/* Flush; prints and returns the exit status on failure (nothing is renamed or removed). */
static int out_flush(const struct cli_tool *t, struct cli_out *o)
{
	if (fflush(o->f) == 0 && !ferror(o->f))
		return 0;
	cli_msg(t, "%s: write failed: %s",
		o->f == stdout ? "standard output"
		: o->path      ? o->path
			       : "output",
		strerror(errno));
	return CLI_EXIT_IO;
}

int cli_out_reserve(const struct cli_tool *t, struct cli_out *o, const char *path,
	const char *const *inputs, size_t n_inputs)
{
	struct stat sp;
	sigset_t old;
	int fd, rc;

	memset(o, 0, sizeof(*o));
	install_handlers();
	/* the placeholder exists only with its output on the pending list */
	fatal_block(&old);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		rc = errno == EEXIST ? CLI_OUT_TAKEN : CLI_EXIT_IO;
		if (rc != CLI_OUT_TAKEN)
			cli_msg(t, "%s: cannot create: %s", path, strerror(errno));
	} else if (fstat(fd, &sp)) {
		cli_msg(t, "%s: cannot create: %s", path, strerror(errno));
		rc = CLI_EXIT_IO;
	} else if (!(rc = cli_out_open(t, o, path, 1, inputs, n_inputs))) {
		o->force = 0;
		o->reserved = 1;
		o->res_dev = (uint64_t)sp.st_dev;
		o->res_ino = (uint64_t)sp.st_ino;
	}
	if (fd >= 0) {
		close(fd);
		if (rc)
			unlink(path);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/*
 * Move o->tmp over the placeholder cli_out_reserve made at o->path, and only over it: 0, 1 when
 * the placeholder is gone (nothing moved), or -1 with errno (EEXIST: another file is there).
 */
static int replace_placeholder(struct cli_out *o)
{
	struct stat sl;
	int e;

	if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_EXCHANGE) == 0) {
		/* o->tmp now names what was at the path */
		if (is_placeholder(o, o->tmp)) {
			unlink(o->tmp);
			return 0;
		}
		/* put it back; if that fails, the other run's file stays at our temporary name,
		 * which then must never be removed */
		if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_EXCHANGE)) {
			pending_remove(o);
			free(o->tmp);
			o->tmp = NULL;
			errno = EIO;
			return -1;
		}
		errno = EEXIST;
		return -1;
	}
	e = errno;
	if (lstat(o->path, &sl))
		return 1;
	if (e != EINVAL && e != ENOSYS && e != EOPNOTSUPP) {
		errno = e;
		return -1;
	}
	/* no RENAME_EXCHANGE on this file system: a check, then the move */
	if (!is_placeholder(o, o->path)) {
		errno = EEXIST;
		return -1;
	}
	return rename(o->tmp, o->path) == 0 ? 0 : -1;
}

/*
 * Move the temporary file to o->path: over what is there with --force, or over the placeholder
 * cli_out_reserve made, otherwise only if nothing is (another run may have written the path
 * since the check). 0 or the exit status, printed.
 */
static int publish(const struct cli_tool *t, struct cli_out *o)
{
	struct stat sl;
	int rc;

	if ((rc = refuse_input(t, o->path, o->inputs, o->paths, o->n_inputs)))
		return rc; /* the path became an input after the check */
	if (o->reserved && (rc = replace_placeholder(o)) <= 0) {
		if (!rc)
			return 0;
		goto failed;
	}
	if (o->force ? rename(o->tmp, o->path) == 0
		     : renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) == 0)
		return 0;
	if (!o->force && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
		/* no RENAME_NOREPLACE on this file system: a hard link does not replace either;
		 * without hard links (vfat) only a check before the rename is left, which a run
		 * racing this one can pass */
		if (link(o->tmp, o->path) == 0) {
			unlink(o->tmp);
			return 0;
		}
		if (errno == EPERM || errno == EOPNOTSUPP || errno == ENOSYS) {
			if (lstat(o->path, &sl) == 0)
				errno = EEXIST;
			else if (rename(o->tmp, o->path) == 0)
				return 0;
		}
	}
failed:
	if (errno == EEXIST) {
		cli_msg(t,
			"%s: exists: written by another run meanwhile (use --force to overwrite)",
			o->path);
		return CLI_EXIT_USAGE;
	}
	cli_msg(t, "%s: write failed: %s", o->path, strerror(errno));
	return CLI_EXIT_IO;
}

int cli_out_commit_all(const struct cli_tool *t, struct cli_out *const *outs, size_t n)
{
	size_t i, k;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		struct cli_out *o = outs[i];

		rc = o->f ? out_flush(t, o) : 0;
		if (o->f == stdout)
			continue;
		if (o->f && fclose(o->f) && !rc) {
			cli_msg(t, "%s: write failed: %s", o->path ? o->path : "output",
				strerror(errno));
			rc = CLI_EXIT_IO;
		}
		o->f = NULL;
	}
	if (!rc)
		/* from here the run finishes: a fatal signal waits for the exit, whose status
		 * then tells what was written */
		fatal_block(NULL);
	for (k = 0; k < n && !rc; k++)
		if (outs[k]->tmp)
			rc = publish(t, outs[k]);
	if (rc) {
		/* all or nothing: the new files already published go (a replaced one cannot) */
		for (i = 0; i + 1 < k; i++)
			if (outs[i]->tmp && !outs[i]->force)
				unlink(outs[i]->path);
		for (i = 0; i < n; i++)
			cli_out_abort(outs[i]);
		return rc;
	}
	for (i = 0; i < n; i++) {
		if (outs[i]->tmp)
			pending_remove(outs[i]);
		free(outs[i]->tmp);
		free(outs[i]->path);
		outs[i]->tmp = outs[i]->path = NULL;
	}
	return 0;
}

int cli_out_commit(const struct cli_tool *t, struct cli_out *o)
{
	return cli_out_commit_all(t, &o, 1);
}

void cli_out_abort(struct cli_out *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (is_placeholder(o, o->path))
		unlink(o->path);
	if (o->tmp) {
		pending_remove(o);
		unlink(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}

char *cli_default_output(const char *input, const char *ext)
{
	static const char *const zext[] = { ".gz", ".zst" };
	size_t len = strlen(input), base, i;
	const char *name, *dot, *mark;
	struct stat sb;
	char *out, *real = NULL;

	/* a folder (a profiler output): its name and the extension; a name that is no name ("."
	 * or "..") resolved first */
	while (len > 1 && input[len - 1] == '/')
		len--;
	if (stat(input, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		const char *last = memrchr(input, '/', len)
					   ? (const char *)memrchr(input, '/', len) + 1
					   : input;
		size_t n = len - (size_t)(last - input);

		if ((n == 1 && *last == '.') || (n == 2 && !memcmp(last, "..", 2)) ||
			(n == 1 && *last == '/')) {
			if (!(real = realpath(input, NULL)))
				return NULL;
			input = strcmp(real, "/") ? real : "/memscope";
			len = strlen(input);
		}
		name = (const char *)memrchr(input, '/', len);
		name = name ? name + 1 : input;
		n = len - (size_t)(name - input);
		if ((out = malloc(n + strlen(ext) + 1))) {
			memcpy(out, name, n);
			strcpy(out + n, ext);
		}
		free(real);
		return out;
	}
	/* a file: its name in the current folder, never beside the input (a shared or read-only
	 * data folder) */
	name = (const char *)memrchr(input, '/', len);
	name = name ? name + 1 : input;
	len -= (size_t)(name - input);
	for (i = 0; i < 2; i++) {
		size_t n = strlen(zext[i]);

		if (len > n && strncmp(name + len - n, zext[i], n) == 0) {
			len -= n;
			break;
		}
	}
	dot = memrchr(name, '.', len);
	base = dot && dot != name ? (size_t)(dot - name) : len;
	/* a profiler file's name (trace_view.json, operator_memory.csv) is the profiler's: ours
	 * gets ".memscope" before its extension (room made for it, written only then) */
	mark = ".memscope";
	if ((out = malloc(base + strlen(mark) + strlen(ext) + 1))) {
		memcpy(out, name, base);
		strcpy(out + base, ext);
		if (memscope_profiler_file_name(out)) {
			strcpy(out + base, mark);
			strcat(out, ext);
		}
	}
	return out;
}

/* one pool name of --pool ("hal", "pta", ... or "all") into *(uint64_t *)ctx */
static int pool_item(void *ctx, const char *s, size_t n)
{
	uint64_t *bits = ctx;
	char up[32];
	unsigned sub;
	size_t i;

	if (n == 3 && strncmp(s, "all", 3) == 0) {
		*bits |= MEMSCOPE_POOLS_ALL;
		return 0;
	}
	if (n >= sizeof(up))
		return -1;
	for (i = 0; i < n; i++)
		up[i] = (char)toupper((unsigned char)s[i]);
	sub = memscope_subtype_parse(up, n);
	if (!memscope_subtype_is_pool(sub))
		return -1;
	*bits |= MEMSCOPE_POOL_BIT(sub);
	return 0;
}

int cli_parse_pools(const struct cli_tool *t, const char *arg, uint64_t *pools)
{
	*pools = 0;
	if (cli_parse_list(arg, pool_item, pools) == 0)
		return 0;
	cli_msg(t,
		"--pool: expected pools (hal, pta, pta_workspace, atb, mindspore, host, "
		"host_pinned, ge, mmap, cuda, cuda_caching, cuda_managed) or all, got '%s'",
		arg);
	return CLI_EXIT_USAGE;
}
