/* memscope-export: memory by allocation site as speedscope JSON or folded stacks, for flame
 * graphs. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_FORMAT = 256,
	OPT_METRIC,
	OPT_GROUP_BY,
	OPT_STACK,
	OPT_POOL,
	OPT_MERGE,
	OPT_STEP,
	OPT_FROM,
	OPT_TO,
	OPT_RESOLUTION,
};

static const struct cli_option options[] = {
	{ "format", 0, OPT_FORMAT, "FORMAT",
		"speedscope, folded, svg, chrome-trace or html (default: from -o's extension, else "
		"speedscope)",
		NULL },
	{ "metric", 0, OPT_METRIC, "LIST",
		"allocated, peak, leaked and/or count (default allocated; folded and svg take "
		"one)",
		NULL },
	{ "group-by", 0, OPT_GROUP_BY, "WHAT", "stack, owner or op (default stack)", NULL },
	{ "stack", 0, OPT_STACK, "WHICH", "python, c or both (default both)", NULL },
	{ "pool", 0, OPT_POOL, "LIST",
		"pools counted: hal,pta,atb,... or all (default: each input's framework pools, "
		"HAL without them)",
		NULL },
	{ "merge", 0, OPT_MERGE, NULL, "add several inputs up (default: one root frame per input)",
		NULL },
	{ "step", 0, OPT_STEP, "N",
		"chrome-trace, html: only step N of each process (ProfilerStep#N is step N; "
		"default: all)",
		NULL },
	{ "from", 0, OPT_FROM, "T",
		"chrome-trace, html: from T seconds after each input's first row, or a timestamp "
		"Tns "
		"(default: the start)",
		NULL },
	{ "to", 0, OPT_TO, "T", "chrome-trace, html: up to T (as --from; default: the end)", NULL },
	{ "resolution", 0, OPT_RESOLUTION, "TIME",
		"chrome-trace: counter samples kept per TIME: 0 (all) or with ns, us, ms or s "
		"(default: the finest of 1us, 2us, 5us, 10us... that keeps 500000 samples)",
		NULL },
	{ "output", 'o', 'o', "FILE", "output file (default: standard output)", NULL },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	"memscope-export",
	"[--format speedscope|folded|svg|chrome-trace|html] [--metric LIST]\n"
	"       [--group-by stack|owner|op] [--stack python|c|both] [--pool LIST] [--merge]\n"
	"       [-o FILE] [-f] [--lenient] [-q]\n"
	"       [--step N | --from T --to T] [--resolution TIME] INPUT...",
	"Bytes (or allocations) per call stack, owner tag or op as speedscope JSON, folded stacks "
	"or an SVG flame graph, or memory over time as a Chrome trace or a web page.",
	options, 0, /* options anywhere */
	NULL,	    /* the usual Inputs and Exit status lines */
};

enum format { FORMAT_SPEEDSCOPE, FORMAT_FOLDED, FORMAT_SVG, FORMAT_CHROME_TRACE, FORMAT_HTML };

/* The formats (bits 1 << enum format) each option does something for: an option given for
 * another format is a usage error. */
#define FLAME_FORMATS (1u << FORMAT_SPEEDSCOPE | 1u << FORMAT_FOLDED | 1u << FORMAT_SVG)
static const struct {
	int opt;
	const char *name;
	unsigned formats;
} applies[] = {
	{ OPT_METRIC, "metric", FLAME_FORMATS },
	{ OPT_GROUP_BY, "group-by", FLAME_FORMATS },
	{ OPT_STACK, "stack", FLAME_FORMATS },
	{ OPT_MERGE, "merge", FLAME_FORMATS },
	/* the window of memscope_timeline_window and the trace's samples */
	{ OPT_STEP, "step", 1u << FORMAT_CHROME_TRACE | 1u << FORMAT_HTML },
	{ OPT_FROM, "from", 1u << FORMAT_CHROME_TRACE | 1u << FORMAT_HTML },
	{ OPT_TO, "to", 1u << FORMAT_CHROME_TRACE | 1u << FORMAT_HTML },
	{ OPT_RESOLUTION, "resolution", 1u << FORMAT_CHROME_TRACE },
};

/* -o's ending gives the format when --format is not given (cli_format_from_output) */
static const struct cli_ext exts[] = {
	{ ".json", FORMAT_SPEEDSCOPE },
	{ ".json", FORMAT_CHROME_TRACE }, /* a Chrome trace is JSON too */
	{ ".trace.json", FORMAT_CHROME_TRACE },
	{ ".folded", FORMAT_FOLDED },
	{ ".txt", FORMAT_FOLDED },
	{ ".svg", FORMAT_SVG },
	{ ".html", FORMAT_HTML },
	{ ".htm", FORMAT_HTML },
	{ NULL, 0 },
};

/* options; main sets every default, beside its flag */
struct export_opts {
	enum format format;			     /* --format */
	struct memscope_flame_opts flame;	     /* --metric, --group-by, --stack, --pool */
	struct cli_common common;		     /* -o, -f, -q, --lenient */
	struct memscope_timeline_window window;	     /* --step, --from, --to */
	struct memscope_timeline_chrome_opts chrome; /* --resolution */
	unsigned given;			  /* bits 1 << (OPT_x - OPT_FORMAT) of the options given */
	struct memscope_session *session; /* the INPUTs */
	const char *const *inputs;	  /* their names (the session's) */
	size_t n_inputs;
};

/* A decimal number of units of unit_ns ns each ("12", "12.5"; up to 9 decimals) into *ns. 0 or
 * -1 (bad text, overflow, or a part of a nanosecond). */
static int parse_decimal(const char *s, size_t len, uint64_t unit_ns, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0, scale = 1000000000; /* frac in units of 1/10^9 */
	size_t i = 0;

	if (!len || s[0] < '0' || s[0] > '9')
		return -1;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
			__builtin_add_overflow(whole, (uint64_t)(s[i] - '0'), &whole))
			return -1;
	if (i < len && s[i] == '.' && ++i < len)
		for (; i < len && s[i] >= '0' && s[i] <= '9' && scale > 1; i++) {
			scale /= 10;
			frac += (uint64_t)(s[i] - '0') * scale;
		}
	/* frac * unit_ns < 10^18: no overflow */
	if (i != len || s[len - 1] == '.' || frac * unit_ns % 1000000000)
		return -1;
	if (__builtin_mul_overflow(whole, unit_ns, ns) ||
		__builtin_add_overflow(*ns, frac * unit_ns / 1000000000, ns))
		return -1;
	return 0;
}

/* --from / --to: seconds after the input's first row ("12.5"), or a timestamp ("...ns"). */
static int parse_when(const char *opt, const char *arg, uint64_t *ns, unsigned *flags,
	unsigned flag_set, unsigned flag_abs)
{
	size_t len = strlen(arg);
	int abs_ns = len > 2 && strcmp(arg + len - 2, "ns") == 0;

	if (abs_ns ? parse_decimal(arg, len - 2, 1, ns) || strchr(arg, '.')
		   : parse_decimal(arg, len, 1000000000, ns)) {
		cli_msg(&tool,
			"--%s: expected seconds after the first row (12.5) or a timestamp in ns "
			"(1764753084427185510ns), got '%s'",
			opt, arg);
		return CLI_EXIT_USAGE;
	}
	*flags |= flag_set | (abs_ns ? flag_abs : 0);
	return 0;
}

/* --resolution: 0, or a time with its unit (ns, us, ms, s). */
static int parse_resolution(const char *arg, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };
	size_t len = strlen(arg), i, u;

	if (strcmp(arg, "0") == 0) {
		*ns = 0;
		return 0;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		u = strlen(units[i].unit);
		/* "s" alone: not the end of "ns", "us" or "ms" */
		if (len > u && strcmp(arg + len - u, units[i].unit) == 0 &&
			(u == 2 || (arg[len - 2] >= '0' && arg[len - 2] <= '9')) &&
			!parse_decimal(arg, len - u, units[i].ns, ns) && *ns)
			return 0;
	}
	cli_msg(&tool,
		"--resolution: expected 0 or a time with its unit (1us, 100us, 1ms), got '%s'",
		arg);
	return CLI_EXIT_USAGE;
}

static const struct cli_choice format_names[] = { { "speedscope", FORMAT_SPEEDSCOPE },
	{ "folded", FORMAT_FOLDED }, { "svg", FORMAT_SVG }, { "chrome-trace", FORMAT_CHROME_TRACE },
	{ "html", FORMAT_HTML }, { NULL, 0 } };
static const struct cli_choice metric_names[] = {
	{ "allocated", 1u << MEMSCOPE_FLAME_ALLOCATED },
	{ "peak", 1u << MEMSCOPE_FLAME_PEAK },
	{ "leaked", 1u << MEMSCOPE_FLAME_LEAKED },
	{ "count", 1u << MEMSCOPE_FLAME_COUNT },
	{ NULL, 0 },
};
static const struct cli_choice group_names[] = { { "stack", MEMSCOPE_FLAME_BY_STACK },
	{ "owner", MEMSCOPE_FLAME_BY_OWNER }, { "op", MEMSCOPE_FLAME_BY_OP }, { NULL, 0 } };
static const struct cli_choice stack_names[] = { { "python", MEMSCOPE_FLAME_PYTHON },
	{ "c", MEMSCOPE_FLAME_C }, { "both", MEMSCOPE_FLAME_PYTHON | MEMSCOPE_FLAME_C },
	{ NULL, 0 } };

/* One option of parse_args (cli_options): c into ctx, a struct export_opts. */
static int option(void *ctx, int c)
{
	struct export_opts *o = ctx;
	int rc = 0, v = 0;

	if (c >= OPT_FORMAT && c < OPT_FORMAT + 32)
		o->given |= 1u << (c - OPT_FORMAT);
	switch (c) {
	case OPT_FORMAT:
		if (!(rc = cli_parse_choice(&tool, "format", optarg, format_names, &v)))
			o->format = (enum format)v;
		break;
	case OPT_METRIC:
		rc = cli_parse_names(&tool, "metric", optarg, metric_names, &o->flame.metrics);
		break;
	case OPT_GROUP_BY:
		if (!(rc = cli_parse_choice(&tool, "group-by", optarg, group_names, &v)))
			o->flame.group = (unsigned)v;
		break;
	case OPT_STACK:
		if (!(rc = cli_parse_choice(&tool, "stack", optarg, stack_names, &v)))
			o->flame.stacks = (unsigned)v;
		break;
	case OPT_POOL:
		rc = cli_parse_pools(&tool, optarg, &o->flame.pools);
		break;
	case OPT_MERGE:
		o->flame.merge = 1;
		break;
	case OPT_STEP:
		rc = cli_parse_count(&tool, "step", optarg, 1, &o->window.step);
		break;
	case OPT_FROM:
		rc = parse_when("from", optarg, &o->window.from_ns, &o->window.flags,
			MEMSCOPE_TL_FROM, MEMSCOPE_TL_FROM_ABS);
		break;
	case OPT_TO:
		rc = parse_when("to", optarg, &o->window.to_ns, &o->window.flags, MEMSCOPE_TL_TO,
			MEMSCOPE_TL_TO_ABS);
		break;
	case OPT_RESOLUTION:
		rc = parse_resolution(optarg, &o->chrome.tick_ns);
		break;
	default:
		return CLI_OPT_SHARED;
	}
	return rc;
}

static int parse_args(int argc, char **argv, struct export_opts *o)
{
	int rc, n, v;
	size_t i;

	if ((rc = cli_options(&tool, argc, argv, &o->common, option, o)))
		return rc;
	v = (int)o->format;
	/* a name of another ending (x.png) is refused unless --format says what goes there */
	if ((rc = cli_format_from_output(&tool, o->common.output, exts, format_names,
		     ((o->given >> (OPT_FORMAT - OPT_FORMAT)) & 1) | CLI_FORMAT_KNOWN, &v)))
		return rc;
	o->format = (enum format)v;
	for (i = 0; i < sizeof(applies) / sizeof(applies[0]); i++)
		if ((o->given >> (applies[i].opt - OPT_FORMAT) & 1) &&
			!(applies[i].formats >> o->format & 1)) {
			cli_msg(&tool, "--%s does nothing for --format %s", applies[i].name,
				cli_choice_name(format_names, (int)o->format));
			return CLI_EXIT_USAGE;
		}
	if ((o->given >> (OPT_STACK - OPT_FORMAT) & 1) &&
		o->flame.group != MEMSCOPE_FLAME_BY_STACK) {
		cli_msg(&tool, "--stack does nothing for --group-by %s",
			cli_choice_name(group_names, (int)o->flame.group));
		return CLI_EXIT_USAGE;
	}
	if (o->window.step && (o->window.flags & (MEMSCOPE_TL_FROM | MEMSCOPE_TL_TO))) {
		cli_msg(&tool, "--step and --from/--to: give one window");
		return CLI_EXIT_USAGE;
	}
	/* both offsets or both timestamps: the order is known now (else at the cut) */
	if ((o->window.flags & (MEMSCOPE_TL_FROM | MEMSCOPE_TL_TO)) ==
			(MEMSCOPE_TL_FROM | MEMSCOPE_TL_TO) &&
		!(o->window.flags & MEMSCOPE_TL_FROM_ABS) ==
			!(o->window.flags & MEMSCOPE_TL_TO_ABS) &&
		o->window.from_ns >= o->window.to_ns) {
		cli_msg(&tool, "--from must come before --to");
		return CLI_EXIT_USAGE;
	}
	n = __builtin_popcount(o->flame.metrics);
	if ((o->format == FORMAT_FOLDED || o->format == FORMAT_SVG) && n != 1) {
		cli_msg(&tool, "--format %s holds one metric, %d given",
			o->format == FORMAT_SVG ? "svg" : "folded", n);
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_named_inputs(
		     &tool, argc, argv, &o->common, &o->session, &o->inputs, &o->n_inputs)))
		return rc;
	return 0;
}

/* The names of the pools of bits into buf, "PTA, ATB" ("PTA and ATB" with and_). */
static const char *pool_names(uint64_t bits, int and_, char *buf, size_t size)
{
	unsigned p, k = 0, n = (unsigned)__builtin_popcountll(bits);
	int len = 0;

	buf[0] = 0;
	for (p = 0; p < 64 && len >= 0 && (size_t)len < size; p++)
		if (bits >> p & 1) {
			const char *name = memscope_subtype_name(p);

			len += snprintf(buf + len, size - (size_t)len, "%s%s",
				!k++		 ? ""
				: and_ && k == n ? " and "
						 : ", ",
				name ? name : "?");
		}
	return buf;
}

/* Whether f counted HAL beside a pool carved out of it; the warning into buf. */
static int nested_note(const struct memscope_flame *f, char *buf, size_t size)
{
	int nested;
	uint64_t pools = memscope_flame_pools(f, NULL, &nested);
	char names[128];

	pool_names(pools & MEMSCOPE_POOLS_INNER, 1, names, sizeof(names));
	snprintf(buf, size, "%s memory holds the %s pool%s blocks: counted twice",
		memscope_pools_outer_name(pools), names,
		__builtin_popcountll(pools & MEMSCOPE_POOLS_INNER) > 1 ? "s'" : "'s");
	return nested;
}

/* The flame graph's subtitle: the inputs' file names (the first three), what the paths are made
 * of and the pools counted. */
static const char *subtitle(
	const struct export_opts *o, const struct memscope_flame *f, char *buf, size_t size)
{
	const char *const *inputs = o->inputs;
	int n = (int)o->n_inputs;
	static const char *const by[] = { "call stack", "owner tag",
		"op: the op that allocated each block" };
	static const char *const stacks[] = { "", " (Python frames)", " (C frames)",
		" (Python frames, then C)" };
	char names[256];
	int i, len = 0;

	buf[0] = 0;
	for (i = 0; i < n && i < 3 && len >= 0 && (size_t)len < size; i++)
		len += snprintf(buf + len, size - (size_t)len, "%s%s", i ? ", " : "",
			strrchr(inputs[i], '/') ? strrchr(inputs[i], '/') + 1 : inputs[i]);
	if (n > 3 && len >= 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, " and %d more", n - 3);
	if (n > 1 && o->flame.merge && len >= 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, " added up");
	if (len >= 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, "; by %s%s",
			by[memscope_flame_grouped_by(f)],
			memscope_flame_grouped_by(f) != o->flame.group ? " (no call stacks)"
			: o->flame.group == MEMSCOPE_FLAME_BY_STACK    ? stacks[o->flame.stacks & 3]
								       : "");
	if (memscope_flame_pools(f, NULL, NULL) && len >= 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, "; pools %s",
			pool_names(memscope_flame_pools(f, NULL, NULL), 0, names, sizeof(names)));
	if (nested_note(f, names, sizeof(names)) && len >= 0 && (size_t)len < size)
		snprintf(buf + len, size - (size_t)len, " (%s)", names);
	return buf;
}

/* One summary line per metric: paths and total. */
static void summary(const struct export_opts *o, const struct memscope_flame *f)
{
	const struct memscope_flame_ops *ops = memscope_flame_op_stats(f);
	char text[MEMSCOPE_BYTES_TEXT_MAX], names[256], left[256];
	uint64_t counted, left_out;
	unsigned m;

	if (o->common.quiet)
		return;
	if (memscope_flame_grouped_by(f) != o->flame.group)
		cli_msg(&tool,
			"no MALLOC has a call stack or owner tag: grouped by op, the op that "
			"allocated each block");
	counted = memscope_flame_pools(f, &left_out, NULL);
	/* the default left a pool out of an input: which, and why */
	if (!o->flame.pools && left_out)
		cli_msg(&tool,
			"pools counted: %s (%s left out: its memory holds their blocks; --pool all "
			"counts both)",
			pool_names(counted, 1, names, sizeof(names)),
			pool_names(left_out, 1, left, sizeof(left)));
	for (m = 0; m < MEMSCOPE_FLAME_N_METRICS; m++) {
		size_t n;
		uint64_t total;

		if (!((o->flame.metrics >> m) & 1))
			continue;
		memscope_flame_entries(f, m, &n, &total);
		if (m == MEMSCOPE_FLAME_COUNT)
			cli_msg(&tool, "%s: %zu path%s, %llu allocation%s",
				memscope_flame_metric_name(m), n, n == 1 ? "" : "s",
				(unsigned long long)total, total == 1 ? "" : "s");
		else
			cli_msg(&tool, "%s: %zu path%s, %s", memscope_flame_metric_name(m), n,
				n == 1 ? "" : "s", memscope_bytes_text(text, sizeof(text), total));
	}
	if (ops->unmatched_ends || ops->unclosed || ops->deep)
		cli_msg(&tool,
			"op rows that made no frame: %llu ends with no open op of their name, %llu "
			"ops without an end of their own, %llu ops past 64 open on their thread",
			(unsigned long long)ops->unmatched_ends, (unsigned long long)ops->unclosed,
			(unsigned long long)ops->deep);
}

/* The page's peak on one line: its bytes, where and when, and the tracks drawn from; beside it
 * the profiler's own allocated peak of that pool, which also counts the blocks allocated before
 * its window. */
static void peak_summary(const struct export_opts *o, const struct memscope_peak *pk)
{
	size_t n, n_ctr;
	const struct memscope_peak_track *t = memscope_peak_tracks(pk, &n);
	const struct memscope_counter_track *c = memscope_peak_counters(pk, &n_ctr);
	long k = memscope_peak_track_of_peak(pk), ck;
	char b[MEMSCOPE_BYTES_TEXT_MAX], s[MEMSCOPE_SECONDS_TEXT_MAX], d[MEMSCOPE_DEVICE_TEXT_MAX];
	char proc[48] = "", rec[160] = "", b2[MEMSCOPE_BYTES_TEXT_MAX],
	     s2[MEMSCOPE_SECONDS_TEXT_MAX];
	const char *pool;

	if (k < 0) {
		cli_msg(&tool, "%s: no block with a size in the pools counted", o->common.output);
		return;
	}
	t += k;
	pool = memscope_subtype_name(t->pool) ? memscope_subtype_name(t->pool) : "memory";
	/* (a profiler's output without a timeline has no process id) */
	if (t->pid != MEMSCOPE_ID_NONE)
		snprintf(proc, sizeof(proc), " of process %llu", (unsigned long long)t->pid);
	if ((ck = memscope_peak_samples_of(pk, (size_t)k)) >= 0 && c[ck].max[MEMSCOPE_CTR_USED] > 0)
		snprintf(rec, sizeof(rec),
			"; memory_record's %s allocated peaks at %s at %s (with the blocks "
			"allocated before the window)",
			pool,
			memscope_bytes_text(b2, sizeof(b2), (uint64_t)c[ck].max[MEMSCOPE_CTR_USED]),
			memscope_seconds_text(s2, sizeof(s2), c[ck].max_ts_ns[MEMSCOPE_CTR_USED],
				memscope_peak_origin(pk, t->src)));
	cli_msg(&tool, "%s: live peak %s of %s on device %s%s at %s; %zu track%s%s",
		o->common.output, memscope_bytes_text(b, sizeof(b), (uint64_t)t->peak), pool,
		memscope_device_text(t->device, d), proc,
		memscope_seconds_text(
			s, sizeof(s), t->peak_at.ts_ns, memscope_peak_origin(pk, t->src)),
		n, n == 1 ? "" : "s", rec);
}

/* The trace on one line: what it holds, the unit and resolution of its counters, the module
 * tracks left out. */
static void trace_summary(
	const struct export_opts *o, const struct memscope_timeline_chrome_stats *cs)
{
	static const char *const units[] = { "s", "ms", "us", "ns" };
	char res[32], mods[96] = "";
	uint64_t v = cs->tick_ns, div = 1000000000;
	unsigned u = 0;

	/* the tick in the largest unit that writes it whole, as --resolution takes it */
	while (v && v % div && u < 3) {
		div /= 1000;
		u++;
	}
	if (v)
		snprintf(res, sizeof(res), "%llu%s", (unsigned long long)(v / div), units[u]);
	else
		snprintf(res, sizeof(res), "0");
	if (cs->modules_left_out)
		snprintf(mods, sizeof(mods), "; %llu npu_module_mem track%s never above 0 left out",
			(unsigned long long)cs->modules_left_out,
			cs->modules_left_out == 1 ? "" : "s");
	cli_msg(&tool,
		"%s: process groups %llu, counter samples %llu in %s (and %llu left out by "
		"--resolution %s), op slices %llu, steps %llu%s",
		o->common.output, (unsigned long long)cs->processes,
		(unsigned long long)cs->samples, cs->mb ? "MB" : "bytes",
		(unsigned long long)cs->samples_left_out, res, (unsigned long long)cs->slices,
		(unsigned long long)cs->steps, mods);
}

/* The trace's pools when nested (said whatever -q). */
static void trace_pools_note(const struct export_opts *o, const struct memscope_timeline *tl)
{
	char names[128];
	uint32_t src;

	for (src = 0; src < o->n_inputs; src++) {
		const struct memscope_timeline_input *in = memscope_timeline_input(tl, src);

		if (in && memscope_pools_nested(in->counted))
			cli_msg(&tool,
				"%s: %s memory holds the %s blocks: its tracks are labelled "
				"(--pool)",
				o->inputs[src], memscope_pools_outer_name(in->counted),
				pool_names(in->counted & MEMSCOPE_POOLS_INNER, 1, names,
					sizeof(names)));
	}
}

/* The window (--step, --from, --to) of the trace tl or of the page pk, whichever is not NULL
 * (memscope_timeline_window, memscope_peak_window): 0 or the exit status (printed). */
static int cut_window(
	const struct export_opts *o, struct memscope_timeline *tl, struct memscope_peak *pk)
{
	struct memscope_error err;
	uint64_t left_out = 0;
	int rc;

	if (!o->window.step && !o->window.flags)
		return 0;
	memscope_error_clear(&err);
	if (tl)
		rc = memscope_timeline_window(
			tl, &o->window, o->inputs, o->n_inputs, &left_out, &err);
	else
		rc = memscope_peak_window(pk, &o->window, o->inputs, o->n_inputs, &left_out, &err);
	if (rc)
		return cli_error(&tool, &err);
	if (left_out && !o->common.quiet)
		cli_msg(&tool, "%llu processes have no step %llu: left out",
			(unsigned long long)left_out, (unsigned long long)o->window.step);
	return 0;
}

int main(int argc, char **argv)
{
	struct export_opts o = {
		/* .flame: the library's defaults, memscope_flame_opts_init below (--metric
		 * allocated, --group-by stack, --stack both, --pool: each input's default pools,
		 * no --merge) */
		.format = FORMAT_SPEEDSCOPE,		 /* --format speedscope */
		.common.output = "-",			 /* -o: standard output */
		.common.force = 0,			 /* -f: never over an existing file */
		.common.quiet = 0,			 /* -q: the summary on stderr */
		.common.read.lenient = 0,		 /* --lenient: a bad row is an error */
		.window = { 0 },			 /* --step, --from, --to: everything */
		.chrome.tick_ns = MEMSCOPE_TL_TICK_AUTO, /* --resolution: 1us or coarser */
	};
	struct memscope_strtab *st = NULL;
	struct memscope_flame *f = NULL;
	struct memscope_timeline *tl = NULL;
	struct memscope_peak *pk = NULL;
	struct memscope_peak_opts po;
	struct memscope_leaks *leaks = NULL;
	struct memscope_leaks_opts lo;
	struct memscope_run_item items[2];
	size_t n_items = 0;
	struct memscope_error err;
	struct cli_out out = { 0 };
	int status, rc;
	unsigned m = 0;
	char sub[512], producer[64];
	struct memscope_timeline_chrome_stats cs;

	memscope_flame_opts_init(&o.flame);
	status = parse_args(argc, argv, &o);
	if (status)
		return status < 0 ? CLI_EXIT_OK : status;
	o.flame.inputs = o.inputs; /* several inputs: one root frame each, named after them */
	o.flame.n_inputs = o.n_inputs;
	if ((status = cli_out_check_session(&tool, o.common.output, o.common.force, o.session)))
		goto out;
	st = memscope_strtab_new();
	memscope_flame_leaks_opts(&o.flame, &lo);
	if (st && o.format == FORMAT_CHROME_TRACE &&
		(tl = memscope_timeline_new(o.flame.pools, 0, st)))
		items[n_items++] = (struct memscope_run_item){ &memscope_timeline_analysis, tl };
	memscope_peak_opts_init(&po);
	po.pools = o.flame.pools;
	if (st && o.format == FORMAT_HTML && (pk = memscope_peak_new(&po, st)))
		items[n_items++] = (struct memscope_run_item){ &memscope_peak_analysis, pk };
	/* the leaked metric weighs the exit leaks of memscope-leaks: that analysis goes first */
	if (st && o.format != FORMAT_CHROME_TRACE && o.format != FORMAT_HTML &&
		(f = memscope_flame_new(&o.flame, st)) &&
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
	status = cli_session_run(&tool, o.session, st, items, n_items, o.common.quiet);
	if (!status)
		status = cli_out_open_session(
			&tool, &out, o.common.output, o.common.force, o.session);
	if (status)
		goto out;
	/* bytes counted twice: said whatever -q */
	if (f && nested_note(f, sub, sizeof(sub)))
		cli_msg(&tool, "%s (--pool)", sub);
	if (tl)
		trace_pools_note(&o, tl);
	if ((tl || pk) && (status = cut_window(&o, tl, pk)))
		goto out;
	memscope_error_clear(&err);
	snprintf(producer, sizeof(producer), "%s@%s", tool.name, memscope_version());
	while (m < MEMSCOPE_FLAME_N_METRICS && !((o.flame.metrics >> m) & 1))
		m++;
	if (tl)
		rc = memscope_timeline_write_chrome_opts(
			out.f, tl, o.inputs, o.n_inputs, producer, &o.chrome, &cs, &err);
	else if (pk)
		rc = memscope_peak_write_html(out.f, pk, o.inputs, o.n_inputs, &err);
	else if (o.format == FORMAT_FOLDED)
		rc = memscope_flame_write_folded(out.f, f, m, &err);
	else if (o.format == FORMAT_SVG)
		rc = memscope_flame_write_svg(out.f, f, m, subtitle(&o, f, sub, sizeof(sub)), &err);
	else {
		if (o.n_inputs > 1)
			snprintf(sub, sizeof(sub), "%s and %zu more", o.inputs[0], o.n_inputs - 1);
		rc = memscope_flame_write_speedscope(out.f, f,
			o.n_inputs > 1			? sub
			: strcmp(o.inputs[0], "-") == 0 ? "standard input"
							: o.inputs[0],
			producer, &err);
	}
	if (rc) {
		cli_msg(&tool, "%s: %s", o.common.output, err.msg);
		status = cli_exit_status(err.code);
		goto out;
	}
	status = cli_out_commit(&tool, &out);
	if (!status && f)
		summary(&o, f);
	if (!status && tl && !o.common.quiet)
		trace_summary(&o, &cs);
	if (!status && pk && !o.common.quiet)
		peak_summary(&o, pk);
out:
	if (status)
		cli_out_abort(&out);
	memscope_flame_free(f);
	memscope_leaks_free(leaks);
	memscope_timeline_free(tl);
	memscope_peak_free(pk);
	memscope_strtab_free(st);
	memscope_session_free(o.session);
	return status;
}
