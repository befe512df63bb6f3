/* memscope-compare: step-to-step comparison of two dumps into the reference's memory_compare CSV.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

enum { OPT_INPUT = 'i', OPT_LEVEL = 256, OPT_MEASURE, OPT_STEP, OPT_OUTPUT_DIR };
/* names of largest difference in the summary */
#define TOP_ROWS 5

static const struct cli_option options[] = {
	{ "input", 'i', OPT_INPUT, "BASE,COMPARE", "the two dumps (',' or the full-width comma)",
		NULL },
	{ "level", 0, OPT_LEVEL, "LEVEL", "op, kernel or op,kernel (default op)", NULL },
	{ "measure", 0, OPT_MEASURE, "RULE",
		"an element's Allocated Memory: reference, delta or peak (default reference; delta "
		"for a profiler output at the op level)",
		NULL },
	{ "metric", 0, OPT_MEASURE, "RULE", .alias_of = "measure" },
	{ "step", 0, OPT_STEP, "N", "compare step N of each input (default: all of them)", NULL },
	{ "output-dir", 0, OPT_OUTPUT_DIR, "DIR", "default output under DIR (default .)", NULL },
	{ "output", 'o', 'o', "FILE", "write exactly there, - for stdout", NULL },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	"memscope-compare",
	"--input BASE,COMPARE [--level op|kernel|op,kernel] [--measure RULE]\n"
	"       [--step N] [--output-dir DIR] [-o FILE] [-f] [--lenient] [-q]",
	"Compare the memory of two steps op by op (or kernel by kernel), as msMemScope does.",
	options, 0, /* options anywhere */
	NULL,	    /* the usual Inputs and Exit status lines */
};

/* options; main sets every default, beside its flag */
struct compare_opts {
	char *inputs[2];		  /* --input, required */
	struct memscope_compare_opts cmp; /* --level, --measure (--metric), --step */
	int measure_given;		  /* --measure: else the library's default for the inputs */
	const char *output_dir;		  /* --output-dir */
	struct cli_common common;	  /* -o, -f, -q, --lenient */
	struct memscope_session *sides[2]; /* BASE's input and COMPARE's */
};

struct compare {
	struct cli_out out;
	const struct memscope_strtab *st;
	struct memscope_compare_summary *sum; /* per device, and the top rows */
	uint64_t n_rows;
	int write_failed;
};

static int on_row(void *ctx, const struct memscope_compare_row *r)
{
	struct compare *c = ctx;

	if (c->n_rows++ == 0 && memscope_compare_csv_header(c->out.f))
		c->write_failed = 1;
	if (memscope_compare_csv_row(c->out.f, c->st, r))
		c->write_failed = 1;
	if (memscope_compare_summary_add(c->sum, r))
		return MEMSCOPE_E_NOMEM;
	return c->write_failed ? MEMSCOPE_E_IO : 0;
}

/* Split "A,B" or "A，B" (full-width comma, UTF-8 EF BC 8C) into two names, without the spaces
 * around each (cli_trim: "A, B"). */
static int split_inputs(const char *arg, struct compare_opts *o)
{
	const char *comma = strchr(arg, ','), *wide = strstr(arg, "\xef\xbc\x8c");
	const char *sep = comma && (!wide || comma < wide) ? comma : wide;
	size_t seplen = sep == comma ? 1 : 3, n0 = sep ? (size_t)(sep - arg) : 0, n1;
	const char *a0 = cli_trim(arg, &n0), *a1 = sep ? sep + seplen : "";

	n1 = strlen(a1);
	a1 = cli_trim(a1, &n1);
	if (!sep || strchr(sep + seplen, ',') || strstr(sep + seplen, "\xef\xbc\x8c") || !n0 ||
		!n1) {
		cli_msg(&tool,
			"--input: expected exactly two files separated by a comma, BASE,COMPARE "
			"(no space after the comma unless quoted): '%s'",
			arg);
		return CLI_EXIT_USAGE;
	}
	o->inputs[0] = strndup(a0, n0);
	o->inputs[1] = strndup(a1, n1);
	if (!o->inputs[0] || !o->inputs[1]) {
		cli_msg(&tool, "out of memory");
		return CLI_EXIT_IO;
	}
	return 0;
}

/* One option of parse_args (cli_options): c into ctx, a struct compare_opts. */
static int option(void *ctx, int c)
{
	static const struct cli_choice levels[] = { { "op", MEMSCOPE_COMPARE_OP },
		{ "kernel", MEMSCOPE_COMPARE_KERNEL },
		{ "op,kernel", MEMSCOPE_COMPARE_OP | MEMSCOPE_COMPARE_KERNEL },
		{ "kernel,op", MEMSCOPE_COMPARE_OP | MEMSCOPE_COMPARE_KERNEL }, { NULL, 0 } };
	static const struct cli_choice measures[] = { { "reference", MEMSCOPE_METRIC_REFERENCE },
		{ "delta", MEMSCOPE_METRIC_DELTA }, { "peak", MEMSCOPE_METRIC_PEAK }, { NULL, 0 } };
	struct compare_opts *o = ctx;
	int rc, v = 0;

	switch (c) {
	case OPT_INPUT:
		if (o->inputs[0]) {
			cli_msg(&tool, "--input given twice");
			return CLI_EXIT_USAGE;
		}
		if ((rc = split_inputs(optarg, o)))
			return rc;
		break;
	case OPT_LEVEL:
		if ((rc = cli_parse_choice(&tool, "level", optarg, levels, &v)))
			return rc;
		o->cmp.level = (unsigned)v;
		break;
	case OPT_MEASURE:
		if ((rc = cli_parse_choice(&tool, "measure", optarg, measures, &v)))
			return rc;
		o->cmp.metric = (enum memscope_compare_metric)v;
		o->measure_given = 1;
		break;
	case OPT_STEP: {
		unsigned long long n;

		if (cli_parse_uint(optarg, &n) || n == 0) {
			cli_msg(&tool, "--step: expected a step number from 1, got '%s'", optarg);
			return CLI_EXIT_USAGE;
		}
		o->cmp.step = n;
		break;
	}
	case OPT_OUTPUT_DIR:
		o->output_dir = optarg;
		break;
	default:
		return CLI_OPT_SHARED;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct compare_opts *o)
{
	int rc;

	if ((rc = cli_options(&tool, argc, argv, &o->common, option, o)))
		return rc;
	if (optind < argc) {
		cli_msg(&tool, "unexpected argument '%s' (the inputs go to --input)", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (!o->inputs[0]) {
		cli_msg(&tool, "--input BASE,COMPARE is required");
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* directories mkdirs made, removed again (innermost first) when the run fails */
static char *made_dirs[64];
static int n_made_dirs;

static void remove_made_dirs(int remove)
{
	while (n_made_dirs > 0) {
		char *d = made_dirs[--n_made_dirs];

		if (remove)
			rmdir(d);
		free(d);
	}
}

/* Make dir and its parents (like mkdir -p), remembering what it made. 0 or -1 with errno. */
static int mkdirs(char *path)
{
	char *p = path + 1;

	for (;;) {
		char c;

		while (*p && *p != '/')
			p++;
		c = *p;
		*p = '\0';
		if (mkdir(path, 0750) == 0) {
			if (n_made_dirs < 64)
				made_dirs[n_made_dirs++] = strdup(path);
		} else if (errno != EEXIST) {
			*p = c;
			return -1;
		}
		*p = c;
		if (!c)
			return 0;
		p++;
	}
}

/* names a run tries in one second before it gives up */
#define MAX_SAME_SECOND 100000

/*
 * Open the default output: the reference's DIR/memscopeDumpResults/compare/
 * memory_compare_{YYYYmmddHHMMSS}.csv, or for a later run of the same second the first free of
 * memory_compare_{YYYYmmddHHMMSS}_2.csv, _3, ...; each name is reserved (cli_out_reserve), so
 * runs never take one name, even at once, and none replaces a file. *path gets the name
 * (malloc'd, the caller frees, also on failure). 0 or the exit status, printed.
 */
static int open_default_output(
	const char *dir, const char *const *inputs, struct cli_out *out, char **path)
{
	char stamp[32], *slash;
	time_t now = time(NULL);
	struct tm tm;
	size_t n = strlen(dir) + 80;
	long k;
	int rc = CLI_OUT_TAKEN;

	if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm)) {
		cli_msg(&tool, "cannot tell the local time for the default output name");
		return CLI_EXIT_IO;
	}
	if (!(*path = malloc(n))) {
		cli_msg(&tool, "out of memory");
		return CLI_EXIT_IO;
	}
	snprintf(*path, n, "%s/memscopeDumpResults/compare/memory_compare_%s.csv", dir, stamp);
	slash = strrchr(*path, '/');
	*slash = '\0';
	if (mkdirs(*path)) {
		cli_msg(&tool, "%s: cannot create: %s", *path, strerror(errno));
		return CLI_EXIT_IO;
	}
	*slash = '/';
	for (k = 1; k <= MAX_SAME_SECOND && rc == CLI_OUT_TAKEN; k++) {
		if (k > 1)
			snprintf(slash + 1, n - (size_t)(slash + 1 - *path),
				"memory_compare_%s_%ld.csv", stamp, k);
		rc = cli_out_reserve(&tool, out, *path, inputs, 2);
	}
	if (rc == CLI_OUT_TAKEN) {
		cli_msg(&tool, "%s: %d names of this second taken", *path, MAX_SAME_SECOND);
		rc = CLI_EXIT_IO;
	}
	return rc;
}

static int summary_line(void *ctx, const char *text)
{
	(void)ctx;
	cli_msg(&tool, "%s", text);
	return 0;
}

/* The one line that says the CSV's values are by delta because of profiler inputs. */
static void say_default(const struct compare_opts *o, struct memscope_compare_side *const *sides)
{
	int a = memscope_compare_side_profiler(sides[0]),
	    b = memscope_compare_side_profiler(sides[1]);

	cli_msg(&tool,
		"%s%s%s: Ascend profiler data, which msMemScope does not compare: the CSV's "
		"values by --measure delta, what each op allocated minus freed with the ops "
		"nested in it (--measure reference for msMemScope's rule)",
		a ? o->inputs[0] : "", a && b ? ", " : "", b ? o->inputs[1] : "");
}

/* Warn when BASE and COMPARE name one file (device and inode), likely a mistake. */
static void say_same_file(const struct compare_opts *o)
{
	struct stat a, b;

	if (stat(o->inputs[0], &a) || stat(o->inputs[1], &b) || a.st_dev != b.st_dev ||
		a.st_ino != b.st_ino)
		return;
	cli_msg(&tool,
		"warning: %s and %s are the same file, compared with itself: give two different "
		"inputs",
		o->inputs[0], o->inputs[1]);
}

/*
 * Each side's session of one input (cli_input): a folder is the one input in it, a folder of
 * several is refused in one line (exit 2), before a read whose notes would come first. 0 or the
 * exit status.
 */
static int folder_of_several(struct compare_opts *o)
{
	int i, rc = 0;

	for (i = 0; i < 2 && !rc; i++) {
		const char *in;
		char *copy;

		if ((rc = cli_input(&tool, o->inputs[i], &o->common, &o->sides[i])))
			continue;
		in = memscope_session_input(o->sides[i], 0)->path;
		if (!strcmp(in, o->inputs[i]))
			continue;
		if (!(copy = strdup(in))) {
			cli_msg(&tool, "out of memory");
			return CLI_EXIT_IO;
		}
		free(o->inputs[i]);
		o->inputs[i] = copy;
	}
	return rc;
}

/* a row callback that writes nothing: the trial run before writing in place */
static int count_row(void *ctx, const struct memscope_compare_row *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

static int read_side(const struct compare_opts *o, int i, struct memscope_strtab *st,
	struct memscope_compare_side *side)
{
	const struct memscope_run_item item = { &memscope_compare_side_analysis, side };

	return cli_session_run(&tool, o->sides[i], st, &item, 1, o->common.quiet);
}

int main(int argc, char **argv)
{
	struct compare_opts o = {
		.inputs = { NULL, NULL },		 /* --input: required */
		.cmp.level = MEMSCOPE_COMPARE_OP,	 /* --level op */
		.cmp.metric = MEMSCOPE_METRIC_REFERENCE, /* --measure reference, */
		.measure_given = 0,			 /* or delta for profiler data */
		.cmp.step = 0,				 /* --step: the whole inputs */
		.cmp.diff_bytes = 0,			 /* no flag: the library's 64 MiB */
		.output_dir = ".",			 /* --output-dir */
		.common.output = NULL,	  /* -o: DIR/memscopeDumpResults/compare/... */
		.common.force = 0,	  /* -f: never over an existing file */
		.common.quiet = 0,	  /* -q: the summary on stderr */
		.common.read.lenient = 0, /* --lenient: a bad row is an error */
	};
	struct memscope_compare_side *sides[2] = { NULL, NULL };
	struct memscope_compare_stats stats;
	struct memscope_strtab *st = NULL;
	struct memscope_error err;
	struct compare c;
	char *default_out = NULL;
	size_t i;
	int status, rc;

	memset(&c, 0, sizeof(c));
	memscope_error_clear(&err);
	status = parse_args(argc, argv, &o);
	if (status) {
		status = status < 0 ? CLI_EXIT_OK : status;
		goto out;
	}
	if ((status = folder_of_several(&o)))
		goto out;
	st = memscope_strtab_new();
	sides[0] = memscope_compare_side_new(o.inputs[0], st);
	sides[1] = memscope_compare_side_new(o.inputs[1], st);
	c.sum = memscope_compare_summary_new(TOP_ROWS, &o.cmp);
	if (!st || !sides[0] || !sides[1] || !c.sum) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
		goto out;
	}
	for (i = 0; i < 2; i++)
		if ((status = read_side(&o, (int)i, st, sides[i])))
			goto out;
	if (!o.measure_given)
		o.cmp.metric = memscope_compare_default_metric(sides[0], sides[1], o.cmp.level);
	if (o.common.output) {
		status = cli_out_open(&tool, &c.out, o.common.output, o.common.force,
			(const char *const *)o.inputs, 2);
	} else {
		status = open_default_output(
			o.output_dir, (const char *const *)o.inputs, &c.out, &default_out);
		o.common.output = default_out;
	}
	if (status)
		goto out;
	c.st = st;
	/* standard output or a device cannot be taken back: a comparison that fails writes
	 * nothing there either, so it is made once without writing first */
	if (!c.out.tmp && !c.out.reserved &&
		(rc = memscope_compare_run(
			 sides[0], sides[1], &o.cmp, st, count_row, NULL, &stats, &err))) {
		status = cli_error(&tool, &err);
		goto out;
	}
	rc = memscope_compare_run(sides[0], sides[1], &o.cmp, st, on_row, &c, &stats, &err);
	if (rc) {
		if (c.write_failed)
			cli_msg(&tool, "%s: write failed: %s", o.common.output, strerror(errno));
		status = c.write_failed ? CLI_EXIT_IO : cli_error(&tool, &err);
		goto out;
	}
	status = cli_out_commit(&tool, &c.out);
	if (status)
		goto out;
	if (!o.common.quiet &&
		memscope_compare_summary_text(c.sum, &o.cmp, &stats, st,
			strcmp(o.common.output, "-") ? o.common.output : "standard output",
			summary_line, NULL)) {
		/* the output is in place: the summary's memory alone ran out */
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
	}
	if (!o.measure_given && o.cmp.metric != MEMSCOPE_METRIC_REFERENCE && !o.common.quiet)
		say_default(&o, sides);
	say_same_file(&o);
	if (stats.n_named_unopen)
		cli_msg(&tool,
			"%llu MALLOCs name an op that was not running in their process then: "
			"counted for the op running then",
			(unsigned long long)stats.n_named_unopen);
	if (stats.n_anchored)
		cli_msg(&tool,
			"%llu device(s) too different for the exact diff (over 2^27 steps): "
			"aligned on "
			"names once in each input, then in blocks of 128: rows may differ from the "
			"reference's",
			(unsigned long long)stats.n_anchored);
	if (stats.n_unmatched_end || stats.n_unmatched_start)
		cli_msg(&tool, "%llu op END rows had no START (counted 0), %llu STARTs no END",
			(unsigned long long)stats.n_unmatched_end,
			(unsigned long long)stats.n_unmatched_start);
out:
	if (status && c.out.f)
		cli_out_abort(&c.out);
	remove_made_dirs(status != 0);
	memscope_compare_side_free(sides[0]);
	memscope_compare_side_free(sides[1]);
	memscope_strtab_free(st);
	free(o.inputs[0]);
	free(o.inputs[1]);
	memscope_session_free(o.sides[0]);
	memscope_session_free(o.sides[1]);
	free(default_out);
	memscope_compare_summary_free(c.sum);
	return status;
}
