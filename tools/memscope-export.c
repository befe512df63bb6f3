/* memscope-export: memory by allocation site as speedscope JSON or folded stacks, for flame
 * graphs. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_FORMAT = 256, OPT_METRIC, OPT_GROUP_BY, OPT_STACK, OPT_POOL };

static const struct cli_option options[] = {
	{ "format", 0, OPT_FORMAT, "FORMAT",
		"speedscope, folded, svg or chrome-trace (default speedscope)", NULL },
	{ "metric", 0, OPT_METRIC, "LIST",
		"allocated, peak, leaked and/or count (default allocated; folded and svg take "
		"one)",
		NULL },
	{ "group-by", 0, OPT_GROUP_BY, "WHAT", "stack, owner or op (default stack)", NULL },
	{ "stack", 0, OPT_STACK, "WHICH", "python, c or both (default both)", NULL },
	{ "pool", 0, OPT_POOL, "LIST", "pools counted: hal,pta,atb,... or all (default all)",
		NULL },
	{ "output", 'o', 'o', "FILE", "output file (default: standard output)", NULL },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	"memscope-export",
	"[--format speedscope|folded|svg|chrome-trace] [--metric LIST] [--group-by "
	"stack|owner|op]\n"
	"       [--stack python|c|both] [--pool LIST] [-o FILE] [-f] [--lenient] [-q] INPUT...",
	"Bytes (or allocations) per call stack, owner tag or op as speedscope JSON, folded stacks "
	"or an SVG flame graph, or memory over time as a Chrome trace.",
	options,
};

enum format { FORMAT_SPEEDSCOPE, FORMAT_FOLDED, FORMAT_SVG, FORMAT_CHROME_TRACE };

/* options; main sets every default, beside its flag */
struct export_opts {
	enum format format;		  /* --format */
	struct memscope_flame_opts flame; /* --metric, --group-by, --stack, --pool */
	struct cli_common common;	  /* -o, -f, -q, --lenient */
	const char *const *inputs;	  /* the INPUT arguments */
	size_t n_inputs;
};

static int parse_args(int argc, char **argv, struct export_opts *o)
{
	static const struct cli_choice formats[] = { { "speedscope", FORMAT_SPEEDSCOPE },
		{ "folded", FORMAT_FOLDED }, { "svg", FORMAT_SVG },
		{ "chrome-trace", FORMAT_CHROME_TRACE }, { NULL, 0 } };
	static const struct cli_choice metrics[] = {
		{ "allocated", 1u << MEMSCOPE_FLAME_ALLOCATED },
		{ "peak", 1u << MEMSCOPE_FLAME_PEAK },
		{ "leaked", 1u << MEMSCOPE_FLAME_LEAKED },
		{ "count", 1u << MEMSCOPE_FLAME_COUNT },
		{ NULL, 0 },
	};
	static const struct cli_choice groups[] = { { "stack", MEMSCOPE_FLAME_BY_STACK },
		{ "owner", MEMSCOPE_FLAME_BY_OWNER }, { "op", MEMSCOPE_FLAME_BY_OP }, { NULL, 0 } };
	static const struct cli_choice stacks[] = { { "python", MEMSCOPE_FLAME_PYTHON },
		{ "c", MEMSCOPE_FLAME_C }, { "both", MEMSCOPE_FLAME_PYTHON | MEMSCOPE_FLAME_C },
		{ NULL, 0 } };
	int c, rc = 0, n, v = 0;

	while (!rc && (c = cli_getopt(&tool, argc, argv)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (!(rc = cli_parse_choice(&tool, "format", optarg, formats, &v)))
				o->format = (enum format)v;
			break;
		case OPT_METRIC:
			rc = cli_parse_names(&tool, "metric", optarg, metrics, &o->flame.metrics);
			break;
		case OPT_GROUP_BY:
			if (!(rc = cli_parse_choice(&tool, "group-by", optarg, groups, &v)))
				o->flame.group = (unsigned)v;
			break;
		case OPT_STACK:
			if (!(rc = cli_parse_choice(&tool, "stack", optarg, stacks, &v)))
				o->flame.stacks = (unsigned)v;
			break;
		case OPT_POOL:
			rc = cli_parse_pools(&tool, optarg, &o->flame.pools);
			break;
		default:
			rc = cli_common_option(&tool, c, &o->common);
			break;
		}
	}
	if (rc)
		return rc;
	n = __builtin_popcount(o->flame.metrics);
	if ((o->format == FORMAT_FOLDED || o->format == FORMAT_SVG) && n != 1) {
		cli_msg(&tool, "--format %s holds one metric, %d given",
			o->format == FORMAT_SVG ? "svg" : "folded", n);
		return CLI_EXIT_USAGE;
	}
	return cli_inputs(&tool, argc, argv, &o->inputs, &o->n_inputs);
}

/* The flame graph's subtitle: the inputs' file names (the first three) and what the paths are
 * made of. */
static const char *subtitle(const struct export_opts *o, char *buf, size_t size)
{
	const char *const *inputs = o->inputs;
	int n = (int)o->n_inputs;
	static const char *const by[] = { "call stack", "owner tag", "op" };
	static const char *const stacks[] = { "", " (Python frames)", " (C frames)",
		" (Python frames, then C)" };
	int i, len = 0;

	buf[0] = 0;
	for (i = 0; i < n && i < 3 && len >= 0 && (size_t)len < size; i++)
		len += snprintf(buf + len, size - (size_t)len, "%s%s", i ? ", " : "",
			strrchr(inputs[i], '/') ? strrchr(inputs[i], '/') + 1 : inputs[i]);
	if (n > 3 && len >= 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, " and %d more", n - 3);
	if (len >= 0 && (size_t)len < size)
		snprintf(buf + len, size - (size_t)len, "; by %s%s", by[o->flame.group],
			o->flame.group == MEMSCOPE_FLAME_BY_STACK ? stacks[o->flame.stacks & 3]
								  : "");
	return buf;
}

/* One summary line per metric: paths and total. */
static void summary(const struct export_opts *o, const struct memscope_flame *f)
{
	const struct memscope_flame_ops *ops = memscope_flame_op_stats(f);
	char text[MEMSCOPE_BYTES_TEXT_MAX];
	unsigned m;

	if (o->common.quiet)
		return;
	for (m = 0; m < MEMSCOPE_FLAME_N_METRICS; m++) {
		size_t n;
		uint64_t total;

		if (!((o->flame.metrics >> m) & 1))
			continue;
		memscope_flame_entries(f, m, &n, &total);
		if (m == MEMSCOPE_FLAME_COUNT)
			cli_msg(&tool, "%s: %zu paths, %llu allocations",
				memscope_flame_metric_name(m), n, (unsigned long long)total);
		else
			cli_msg(&tool, "%s: %zu paths, %s", memscope_flame_metric_name(m), n,
				memscope_bytes_text(text, sizeof(text), total));
	}
	if (ops->unmatched_ends || ops->unclosed || ops->deep)
		cli_msg(&tool,
			"op rows that made no frame: %llu ends with no open op of their name, %llu "
			"ops without an end of their own, %llu ops past 64 open on their thread",
			(unsigned long long)ops->unmatched_ends, (unsigned long long)ops->unclosed,
			(unsigned long long)ops->deep);
}

int main(int argc, char **argv)
{
	struct export_opts o = {
		/* .flame: the library's defaults, memscope_flame_opts_init below (--metric
		 * allocated, --group-by stack, --stack both, --pool all) */
		.format = FORMAT_SPEEDSCOPE, /* --format speedscope */
		.common.output = "-",	     /* -o: standard output */
		.common.force = 0,	     /* -f: never over an existing file */
		.common.quiet = 0,	     /* -q: the summary on stderr */
		.common.read.lenient = 0,    /* --lenient: a bad row is an error */
	};
	struct memscope_strtab *st = NULL;
	struct memscope_flame *f = NULL;
	struct memscope_timeline *tl = NULL;
	struct memscope_leaks *leaks = NULL;
	struct memscope_leaks_opts lo;
	struct memscope_run_item items[2];
	size_t n_items = 0;
	struct memscope_error err;
	struct cli_out out = { 0 };
	int status, rc;
	unsigned m = 0;
	char sub[512], producer[64];

	memscope_flame_opts_init(&o.flame);
	status = parse_args(argc, argv, &o);
	if (status)
		return status < 0 ? CLI_EXIT_OK : status;
	if ((status = cli_out_check(&tool, o.common.output, o.common.force, o.inputs, o.n_inputs)))
		return status;
	st = memscope_strtab_new();
	memscope_flame_leaks_opts(&o.flame, &lo);
	if (st && o.format == FORMAT_CHROME_TRACE &&
		(tl = memscope_timeline_new(o.flame.pools, 0, st)))
		items[n_items++] = (struct memscope_run_item){ &memscope_timeline_analysis, tl };
	/* the leaked metric weighs the exit leaks of memscope-leaks: that analysis goes first */
	if (st && o.format != FORMAT_CHROME_TRACE && (f = memscope_flame_new(&o.flame, st)) &&
		(!(o.flame.metrics & 1u << MEMSCOPE_FLAME_LEAKED) ||
			(leaks = memscope_leaks_new(&lo, st)))) {
		if (leaks) {
			items[n_items++] =
				(struct memscope_run_item){ &memscope_leaks_analysis, leaks };
			memscope_flame_use_leaks(f, leaks);
		}
		items[n_items++] = (struct memscope_run_item){ &memscope_flame_analysis, f };
	}
	if (!n_items) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
		goto out;
	}
	status = cli_run(&tool, o.inputs, o.n_inputs, st, &o.common.read, items, n_items,
		o.common.quiet, NULL);
	if (!status)
		status = cli_out_open(
			&tool, &out, o.common.output, o.common.force, o.inputs, o.n_inputs);
	if (status)
		goto out;
	memscope_error_clear(&err);
	snprintf(producer, sizeof(producer), "%s@%s", tool.name, memscope_version());
	while (m < MEMSCOPE_FLAME_N_METRICS && !((o.flame.metrics >> m) & 1))
		m++;
	if (tl)
		rc = memscope_timeline_write_chrome(
			out.f, tl, o.inputs, o.n_inputs, producer, &err);
	else if (o.format == FORMAT_FOLDED)
		rc = memscope_flame_write_folded(out.f, f, m, &err);
	else if (o.format == FORMAT_SVG)
		rc = memscope_flame_write_svg(out.f, f, m, subtitle(&o, sub, sizeof(sub)), &err);
	else
		rc = memscope_flame_write_speedscope(out.f, f, o.inputs[0], producer, &err);
	if (rc) {
		cli_msg(&tool, "%s: %s", o.common.output, err.msg);
		status = cli_exit_status(err.code);
		goto out;
	}
	status = cli_out_commit(&tool, &out);
	if (!status && f)
		summary(&o, f);
	if (!status && tl && !o.common.quiet) {
		size_t n;

		memscope_timeline_points(tl, &n);
		cli_msg(&tool, "%s: %zu points", o.common.output, n);
	}
out:
	if (status)
		cli_out_abort(&out);
	memscope_flame_free(f);
	memscope_leaks_free(leaks);
	memscope_timeline_free(tl);
	memscope_strtab_free(st);
	return status;
}
