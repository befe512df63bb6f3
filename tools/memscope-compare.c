/* memscope-compare: step-to-step comparison of two dumps into the reference's memory_compare CSV.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

enum { OPT_INPUT = 'i', OPT_LEVEL = 256, OPT_METRIC, OPT_STEP, OPT_OUTPUT_DIR };
#define TOP_ROWS 5

static const struct cli_option options[] = {
	{ "input", 'i', OPT_INPUT, "BASE,COMPARE", "the two dumps (',' or the full-width comma)" },
	{ "level", 0, OPT_LEVEL, "LEVEL", "op, kernel or op,kernel (default op)" },
	{ "metric", 0, OPT_METRIC, "METRIC", "reference, delta or peak (default reference)" },
	{ "step", 0, OPT_STEP, "N", "compare step N of each input (default: all of them)" },
	{ "output-dir", 0, OPT_OUTPUT_DIR, "DIR", "default output under DIR (default .)" },
	{ "output", 'o', 'o', "FILE", "write exactly there, - for stdout" },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	"memscope-compare",
	"--input BASE,COMPARE [--level op|kernel|op,kernel] [--metric M] [--step N] [--output-dir "
	"DIR] [-o "
	"FILE]\n"
	"       [-f] [--lenient] [-q]",
	"Compare the memory of two steps op by op (or kernel by kernel), as msMemScope does.",
	options,
};

/* options, with every default next to its flag */
struct compare_opts {
	char *inputs[2];		  /* required */
	struct memscope_compare_opts cmp; /* level op, whole inputs (step 0) */
	const char *output_dir;		  /* "." */
	/* output NULL: output_dir/memscopeDumpResults/compare/memory_compare_TS.csv; never
	 * overwrite; summary on stderr; strict reading */
	struct cli_common common;
};

struct dev_count {
	int32_t device;
	uint64_t matched, base_only, cmp_only;
	int64_t diff;
};

struct compare {
	struct memscope_compare_row top[TOP_ROWS]; /* largest |diff| first */
	size_t n_top;
	struct cli_out out;
	const struct memscope_strtab *st;
	uint64_t n_rows;
	int write_failed;
	struct dev_count *devs;
	size_t n_devs, cap_devs;
};

static uint64_t mag(int64_t v)
{
	return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

/* Keep the TOP_ROWS rows of largest absolute difference (the first of equals stays first). */
static void keep_top(struct compare *c, const struct memscope_compare_row *r)
{
	size_t i = c->n_top;

	if (!r->diff || (i == TOP_ROWS && mag(c->top[i - 1].diff) >= mag(r->diff)))
		return;
	if (i == TOP_ROWS)
		i--;
	while (i > 0 && mag(c->top[i - 1].diff) < mag(r->diff)) {
		c->top[i] = c->top[i - 1];
		i--;
	}
	c->top[i] = *r;
	if (c->n_top < TOP_ROWS)
		c->n_top++;
}

static int on_row(void *ctx, const struct memscope_compare_row *r)
{
	struct compare *c = ctx;
	struct dev_count *d;

	if (c->n_rows++ == 0 && memscope_compare_csv_header(c->out.f))
		c->write_failed = 1;
	if (memscope_compare_csv_row(c->out.f, c->st, r))
		c->write_failed = 1;
	if (!c->n_devs || c->devs[c->n_devs - 1].device != r->device) {
		if (c->n_devs == c->cap_devs) {
			size_t cap = c->cap_devs ? 2 * c->cap_devs : 8;
			struct dev_count *nd = realloc(c->devs, cap * sizeof(*nd));

			if (!nd)
				return MEMSCOPE_E_NOMEM;
			c->devs = nd;
			c->cap_devs = cap;
		}
		memset(&c->devs[c->n_devs], 0, sizeof(*d));
		c->devs[c->n_devs++].device = r->device;
	}
	d = &c->devs[c->n_devs - 1];
	keep_top(c, r);
	d->matched += r->has_base && r->has_cmp;
	d->base_only += r->has_base && !r->has_cmp;
	d->cmp_only += !r->has_base && r->has_cmp;
	if (__builtin_add_overflow(d->diff, r->diff, &d->diff))
		d->diff = r->diff < 0 ? INT64_MIN : INT64_MAX;
	return c->write_failed ? MEMSCOPE_E_IO : 0;
}

static int add_event(void *ctx, const struct memscope_event *ev)
{
	return memscope_compare_side_add(ctx, ev);
}

/* Split "A,B" or "A，B" (full-width comma, UTF-8 EF BC 8C) into two names. */
static int split_inputs(const char *arg, struct compare_opts *o)
{
	const char *comma = strchr(arg, ','), *wide = strstr(arg, "\xef\xbc\x8c");
	const char *sep = comma && (!wide || comma < wide) ? comma : wide;
	size_t seplen = sep == comma ? 1 : 3;

	if (!sep || strchr(sep + seplen, ',') || strstr(sep + seplen, "\xef\xbc\x8c") ||
		sep == arg || !sep[seplen]) {
		cli_msg(&tool, "--input: expected exactly two files, BASE,COMPARE: '%s'", arg);
		return CLI_EXIT_USAGE;
	}
	o->inputs[0] = strndup(arg, (size_t)(sep - arg));
	o->inputs[1] = strdup(sep + seplen);
	if (!o->inputs[0] || !o->inputs[1]) {
		cli_msg(&tool, "out of memory");
		return CLI_EXIT_IO;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct compare_opts *o)
{
	int c, rc;

	while ((c = cli_getopt(&tool, argc, argv)) != -1) {
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
			if (strcmp(optarg, "op") == 0)
				o->cmp.level = MEMSCOPE_COMPARE_OP;
			else if (strcmp(optarg, "kernel") == 0)
				o->cmp.level = MEMSCOPE_COMPARE_KERNEL;
			else if (strcmp(optarg, "op,kernel") == 0 ||
				 strcmp(optarg, "kernel,op") == 0)
				o->cmp.level = MEMSCOPE_COMPARE_OP | MEMSCOPE_COMPARE_KERNEL;
			else {
				cli_msg(&tool,
					"--level: expected op, kernel or op,kernel, got '%s'",
					optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case OPT_METRIC:
			if (strcmp(optarg, "reference") == 0)
				o->cmp.metric = MEMSCOPE_METRIC_REFERENCE;
			else if (strcmp(optarg, "delta") == 0)
				o->cmp.metric = MEMSCOPE_METRIC_DELTA;
			else if (strcmp(optarg, "peak") == 0)
				o->cmp.metric = MEMSCOPE_METRIC_PEAK;
			else {
				cli_msg(&tool,
					"--metric: expected reference, delta or peak, got '%s'",
					optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case OPT_STEP: {
			unsigned long long n;

			if (cli_parse_uint(optarg, &n) || n == 0) {
				cli_msg(&tool, "--step: expected a step number from 1, got '%s'",
					optarg);
				return CLI_EXIT_USAGE;
			}
			o->cmp.step = n;
			break;
		}
		case OPT_OUTPUT_DIR:
			o->output_dir = optarg;
			break;
		default:
			if ((rc = cli_common_option(&tool, c, &o->common)))
				return rc;
			break;
		}
	}
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

/* The reference's default: DIR/memscopeDumpResults/compare/memory_compare_{YYYYmmddHHMMSS}.csv */
static char *default_output(const char *dir)
{
	char stamp[32], *path, *slash;
	time_t now = time(NULL);
	size_t n;

	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", localtime(&now));
	n = strlen(dir) + 64;
	path = malloc(n);
	if (!path)
		return NULL;
	snprintf(path, n, "%s/memscopeDumpResults/compare/memory_compare_%s.csv", dir, stamp);
	slash = strrchr(path, '/');
	*slash = '\0';
	if (mkdirs(path)) {
		cli_msg(&tool, "%s: cannot create: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	*slash = '/';
	return path;
}

static int read_side(const struct compare_opts *o, int i, struct memscope_strtab *st,
	struct memscope_compare_side *side)
{
	struct memscope_read_opts ro = o->common.read;

	ro.src = (uint32_t)i;
	return cli_read_input(&tool, o->inputs[i], st, &ro, add_event, side, 1, NULL);
}

int main(int argc, char **argv)
{
	struct compare_opts o = { { NULL, NULL },
		{ MEMSCOPE_COMPARE_OP, 0, MEMSCOPE_METRIC_REFERENCE, 0 }, ".",
		{ NULL, 0, 0, { 0 } } };
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
	st = memscope_strtab_new();
	sides[0] = memscope_compare_side_new(o.inputs[0], st);
	sides[1] = memscope_compare_side_new(o.inputs[1], st);
	if (!st || !sides[0] || !sides[1]) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
		goto out;
	}
	for (i = 0; i < 2; i++)
		if ((status = read_side(&o, (int)i, st, sides[i])))
			goto out;
	if (!o.common.output) {
		if (!(default_out = default_output(o.output_dir))) {
			status = CLI_EXIT_IO;
			goto out;
		}
		o.common.output = default_out;
	}
	status = cli_out_open(
		&tool, &c.out, o.common.output, o.common.force, (const char *const *)o.inputs, 2);
	if (status)
		goto out;
	c.st = st;
	rc = memscope_compare_run(sides[0], sides[1], &o.cmp, st, on_row, &c, &stats, &err);
	if (rc) {
		if (c.write_failed)
			cli_msg(&tool, "%s: write failed: %s", o.common.output, strerror(errno));
		status = c.write_failed ? CLI_EXIT_IO : cli_error(&tool, &err);
		goto out;
	}
	if (!stats.n_rows) {
		cli_msg(&tool, "%s, %s: no %s rows on any device: nothing to compare", o.inputs[0],
			o.inputs[1],
			o.cmp.level == MEMSCOPE_COMPARE_KERNEL ? "KERNEL_LAUNCH"
			: o.cmp.level == MEMSCOPE_COMPARE_OP   ? "ATEN_END/ATB_END"
							       : "op END or KERNEL_LAUNCH");
		status = CLI_EXIT_INVALID;
		goto out;
	}
	status = cli_out_commit(&tool, &c.out);
	if (status)
		goto out;
	if (stats.n_unmatched_end || stats.n_unmatched_start)
		cli_msg(&tool, "%llu op END rows had no START (counted 0), %llu STARTs no END",
			(unsigned long long)stats.n_unmatched_end,
			(unsigned long long)stats.n_unmatched_start);
	if (o.common.quiet)
		goto out;
	for (i = 0; i < c.n_devs; i++)
		cli_msg(&tool,
			"device %d: %llu matched, %llu base-only, %llu compare-only, diff %+lld "
			"bytes",
			(int)c.devs[i].device, (unsigned long long)c.devs[i].matched,
			(unsigned long long)c.devs[i].base_only,
			(unsigned long long)c.devs[i].cmp_only, (long long)c.devs[i].diff);
	for (i = 0; i < c.n_top; i++)
		cli_msg(&tool, "top %zu: %s %s on device %d: base %s, compare %s, diff %+lld bytes",
			i + 1, memscope_kind_name(c.top[i].event),
			memscope_strtab_str(st, c.top[i].name, NULL), (int)c.top[i].device,
			c.top[i].has_base ? "present" : "absent",
			c.top[i].has_cmp ? "present" : "absent", (long long)c.top[i].diff);
	if (stats.total_diff == INT64_MAX || stats.total_diff == INT64_MIN)
		cli_msg(&tool, "%llu rows, total diff %s%+lld bytes (the total overflowed) -> %s",
			(unsigned long long)stats.n_rows,
			stats.total_diff > 0 ? "more than " : "less than ",
			(long long)stats.total_diff + (stats.total_diff > 0 ? -1 : 1),
			o.common.output);
	else
		cli_msg(&tool, "%llu rows, total diff %+lld bytes -> %s",
			(unsigned long long)stats.n_rows, (long long)stats.total_diff,
			o.common.output);
out:
	if (status && c.out.f)
		cli_out_abort(&c.out);
	remove_made_dirs(status != 0);
	memscope_compare_side_free(sides[0]);
	memscope_compare_side_free(sides[1]);
	memscope_strtab_free(st);
	free(o.inputs[0]);
	free(o.inputs[1]);
	free(default_out);
	free(c.devs);
	return status;
}
