/* memscope-export: memory by allocation site as speedscope JSON or folded stacks, for flame
 * graphs. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_FORMAT = 256, OPT_METRIC, OPT_GROUP_BY, OPT_STACK, OPT_POOL };

static const struct cli_option options[] = {
	{ "format", 0, OPT_FORMAT, "FORMAT",
		"speedscope, folded, svg or chrome-trace (default speedscope)" },
	{ "metric", 0, OPT_METRIC, "LIST",
		"allocated, peak, leaked and/or count (default allocated; folded and svg take "
		"one)" },
	{ "group-by", 0, OPT_GROUP_BY, "WHAT", "stack, owner or op (default stack)" },
	{ "stack", 0, OPT_STACK, "WHICH", "python, c or both (default both)" },
	{ "pool", 0, OPT_POOL, "LIST", "pools counted: hal,pta,atb,... or all (default all)" },
	{ "output", 'o', 'o', "FILE", "output file (default: standard output)" },
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

/* options, with every default next to its flag */
struct export_opts {
	enum format format;		  /* speedscope */
	struct memscope_flame_opts flame; /* allocated, by stack, both stacks, every pool */
	/* output NULL: standard output; strict reading; summary on stderr */
	struct cli_common common;
};

static int parse_args(int argc, char **argv, struct export_opts *o)
{
	static const char *const metrics[] = { "allocated", "peak", "leaked", "count" };
	static const char *const stacks[] = { "python", "c" };
	int c, rc = 0, n;

	while ((c = cli_getopt(&tool, argc, argv)) != -1 && !rc) {
		switch (c) {
		case OPT_FORMAT:
			if (strcmp(optarg, "speedscope") == 0) {
				o->format = FORMAT_SPEEDSCOPE;
			} else if (strcmp(optarg, "folded") == 0) {
				o->format = FORMAT_FOLDED;
			} else if (strcmp(optarg, "svg") == 0) {
				o->format = FORMAT_SVG;
			} else if (strcmp(optarg, "chrome-trace") == 0) {
				o->format = FORMAT_CHROME_TRACE;
			} else {
				cli_msg(&tool,
					"--format: expected speedscope, folded, svg or "
					"chrome-trace, "
					"got '%s'",
					optarg);
				rc = CLI_EXIT_USAGE;
			}
			break;
		case OPT_METRIC:
			if (cli_parse_names(optarg, metrics, 4, 0, &o->flame.metrics)) {
				cli_msg(&tool,
					"--metric: expected allocated, peak, leaked and/or count, "
					"got "
					"'%s'",
					optarg);
				rc = CLI_EXIT_USAGE;
			}
			break;
		case OPT_GROUP_BY:
			if (strcmp(optarg, "stack") == 0) {
				o->flame.group = MEMSCOPE_FLAME_BY_STACK;
			} else if (strcmp(optarg, "owner") == 0) {
				o->flame.group = MEMSCOPE_FLAME_BY_OWNER;
			} else if (strcmp(optarg, "op") == 0) {
				o->flame.group = MEMSCOPE_FLAME_BY_OP;
			} else {
				cli_msg(&tool, "--group-by: expected stack, owner or op, got '%s'",
					optarg);
				rc = CLI_EXIT_USAGE;
			}
			break;
		case OPT_STACK:
			if (strcmp(optarg, "both") == 0)
				o->flame.stacks = MEMSCOPE_FLAME_PYTHON | MEMSCOPE_FLAME_C;
			else if (cli_parse_names(optarg, stacks, 2, 0, &o->flame.stacks) ||
				 strchr(optarg, ',')) {
				cli_msg(&tool, "--stack: expected python, c or both, got '%s'",
					optarg);
				rc = CLI_EXIT_USAGE;
			}
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
	if (optind == argc) {
		cli_msg(&tool,
			"no INPUT given (a dump CSV, capture file or database; - for stdin)");
		return CLI_EXIT_USAGE;
	}
	return 0;
}

static int feed(void *ctx, const struct memscope_event *ev)
{
	return memscope_flame_feed(ctx, ev);
}

static int feed_timeline(void *ctx, const struct memscope_event *ev)
{
	return memscope_timeline_feed(ctx, ev);
}

/* The flame graph's subtitle: the inputs' file names (the first three) and what the paths are
 * made of. */
static const char *subtitle(
	const struct export_opts *o, char *const *inputs, int n, char *buf, size_t size)
{
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
	struct export_opts o = { 0 };
	struct memscope_strtab *st = NULL;
	struct memscope_flame *f = NULL;
	struct memscope_timeline *tl = NULL;
	struct memscope_error err;
	struct cli_out out = { 0 };
	int i, status, rc;
	unsigned m = 0;
	char sub[512];

	o.format = FORMAT_SPEEDSCOPE;
	memscope_flame_opts_init(&o.flame);
	status = parse_args(argc, argv, &o);
	if (status)
		return status < 0 ? CLI_EXIT_OK : status;
	if (!o.common.output)
		o.common.output = "-";
	if ((status = cli_out_check(&tool, o.common.output, o.common.force,
		     (const char *const *)argv + optind, (size_t)(argc - optind))))
		return status;
	st = memscope_strtab_new();
	if (o.format == FORMAT_CHROME_TRACE)
		tl = st ? memscope_timeline_new(o.flame.pools, 0, st) : NULL;
	else
		f = st ? memscope_flame_new(&o.flame, st) : NULL;
	if (!f && !tl) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
		goto out;
	}
	for (i = optind; i < argc && !status; i++) {
		o.common.read.src = (uint32_t)(i - optind);
		status = tl ? cli_read_input(&tool, argv[i], st, &o.common.read, feed_timeline, tl,
				      1, NULL)
			    : cli_read_input(&tool, argv[i], st, &o.common.read, feed, f, 1, NULL);
	}
	if (!status && (tl ? memscope_timeline_finish(tl) : memscope_flame_finish(f))) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
	}
	if (!status)
		status = cli_out_open(&tool, &out, o.common.output, o.common.force,
			(const char *const *)argv + optind, (size_t)(argc - optind));
	if (status)
		goto out;
	memscope_error_clear(&err);
	while (m < MEMSCOPE_FLAME_N_METRICS && !((o.flame.metrics >> m) & 1))
		m++;
	if (tl)
		rc = memscope_timeline_write_chrome(out.f, tl, (const char *const *)argv + optind,
			(size_t)(argc - optind), &err);
	else if (o.format == FORMAT_FOLDED)
		rc = memscope_flame_write_folded(out.f, f, m, &err);
	else if (o.format == FORMAT_SVG)
		rc = memscope_flame_write_svg(out.f, f, m,
			subtitle(&o, argv + optind, argc - optind, sub, sizeof(sub)), &err);
	else
		rc = memscope_flame_write_speedscope(out.f, f, argv[optind], &err);
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
	memscope_timeline_free(tl);
	memscope_strtab_free(st);
	return status;
}
