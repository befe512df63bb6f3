/* memscope-leaks: step leaks, marked-range leaks and memory unreleased at exit, from dumps or
 * capture files. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

enum {
	OPT_FORMAT = 256,
	OPT_POOL,
	OPT_SKIP_STEPS,
	OPT_MIN_STEPS_ALIVE,
	OPT_MARK,
	OPT_START_INDEX,
	OPT_KINDS,
	OPT_GROUP_BY,
	OPT_TOP,
	OPT_FAIL_ON_FINDING,
};

static const struct cli_option options[] = {
	{ "format", 0, OPT_FORMAT, "FORMAT",
		"text, json, csv, or reference: only msMemScope's own lines (default: from -o's "
		"ending, else text)",
		NULL },
	{ "group-by", 0, OPT_GROUP_BY, "WHAT",
		"group leaks by stack, op or owner (default stack; owner tag and op without "
		"stacks)",
		NULL },
	{ "top", 0, OPT_TOP, "N",
		"report the N largest groups per input and kind, and per kind across inputs, 0 "
		"for all (default 20 in text, all otherwise)",
		NULL },
	{ "kinds", 0, OPT_KINDS, "LIST", "look for step, mark and/or exit leaks (default all)",
		NULL },
	{ "pool", 0, OPT_POOL, "LIST",
		"pools checked: hal,pta,atb,mindspore,host,cuda,... or all (default pta,atb,"
		"mindspore,cuda_caching, an Nsight export's cuda and a recording's host for step "
		"leaks, all for mark and exit)",
		NULL },
	{ "skip-steps", 0, OPT_SKIP_STEPS, "N",
		"blocks of steps 0..N are not step leaks (default 1)", NULL },
	{ "min-steps-alive", 0, OPT_MIN_STEPS_ALIVE, "N",
		"step ends a block must outlive (default 1)", NULL },
	{ "mark", 0, OPT_MARK, "TEXT", "marked range: MSTX Mark rows with exactly this text",
		NULL },
	{ "start-index", 0, OPT_START_INDEX, "N", "mark A is the N-th of them, from 0 (default 0)",
		NULL },
	{ "fail-on-finding", 0, OPT_FAIL_ON_FINDING, NULL, "exit 1 when any leak is found", NULL },
	{ "fail-on-leak", 0, OPT_FAIL_ON_FINDING, NULL, .alias_of = "fail-on-finding" },
	{ "output", 'o', 'o', "FILE", "write the report there (default -, stdout)", NULL },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	"memscope-leaks",
	"[--format text|json|csv|reference] [--group-by stack|op|owner]\n"
	"       [--top N] [--kinds LIST] [--pool LIST] [--skip-steps N]\n"
	"       [--min-steps-alive N] [--mark TEXT [--start-index N]] [--fail-on-finding]\n"
	"       [-o FILE] [-f] [--lenient] [-q] INPUT...",
	"Find memory leaks: per training step, over a marked range, and unreleased at exit;\n"
	"out-of-memory events first.",
	options, 0, /* options anywhere */
	NULL,	    /* the usual Inputs and Exit status lines */
};

/* options; main sets every default, beside its flag */
struct leaks_opts {
	struct memscope_leaks_opts leaks;  /* --kinds, --pool, ..., --group-by, --top */
	enum memscope_leaks_format format; /* --format */
	int fail_on_leak;		   /* --fail-on-finding (--fail-on-leak) */
	int kinds_given;		   /* --kinds was given */
	int format_given;		   /* --format was given */
	int top_given;			   /* --top was given */
	int group_by_given;		   /* --group-by was given */
	struct cli_common common;	   /* -o, -f, -q, --lenient */
	struct memscope_session *session;  /* the INPUTs */
	const char *const *inputs;	   /* their names (the session's) */
	size_t n_inputs;
};

static const struct cli_choice kind_names[] = { { "step", MEMSCOPE_LEAK_STEP },
	{ "mark", MEMSCOPE_LEAK_MARK }, { "exit", MEMSCOPE_LEAK_EXIT }, { NULL, 0 } };
static const struct cli_choice format_names[] = { { "text", MEMSCOPE_LEAKS_TEXT },
	{ "json", MEMSCOPE_LEAKS_JSON }, { "csv", MEMSCOPE_LEAKS_CSV },
	{ "reference", MEMSCOPE_LEAKS_REFERENCE }, { NULL, 0 } };
static const struct cli_choice group_names[] = { { "stack", MEMSCOPE_LEAKS_BY_STACK },
	{ "op", MEMSCOPE_LEAKS_BY_OP }, { "owner", MEMSCOPE_LEAKS_BY_OWNER }, { NULL, 0 } };

/* One option of parse_args (cli_options): c into ctx, a struct leaks_opts. */
static int option(void *ctx, int c)
{
	struct leaks_opts *o = ctx;
	int rc = 0, v = 0;

	switch (c) {
	case OPT_FORMAT:
		if (!(rc = cli_parse_choice(&tool, "format", optarg, format_names, &v)))
			o->format = (enum memscope_leaks_format)v;
		o->format_given = 1;
		break;
	case OPT_GROUP_BY:
		if (!(rc = cli_parse_choice(&tool, "group-by", optarg, group_names, &v)))
			o->leaks.group_by = (enum memscope_leaks_group_by)v;
		o->group_by_given = 1;
		break;
	case OPT_TOP:
		rc = cli_parse_count(&tool, "top", optarg, 0, &o->leaks.top);
		o->top_given = 1;
		break;
	case OPT_KINDS:
		rc = cli_parse_names(&tool, "kinds", optarg, kind_names, &o->leaks.kinds);
		o->kinds_given = 1;
		break;
	case OPT_POOL:
		rc = cli_parse_pools(&tool, optarg, &o->leaks.pools);
		break;
	case OPT_SKIP_STEPS:
		rc = cli_parse_count(&tool, "skip-steps", optarg, 0, &o->leaks.skip_steps);
		break;
	case OPT_MIN_STEPS_ALIVE:
		rc = cli_parse_count(
			&tool, "min-steps-alive", optarg, 1, &o->leaks.min_steps_alive);
		break;
	case OPT_MARK:
		if (!*optarg) {
			cli_msg(&tool, "--mark: the text must not be empty");
			return CLI_EXIT_USAGE;
		}
		o->leaks.mark = optarg;
		break;
	case OPT_START_INDEX:
		rc = cli_parse_count(&tool, "start-index", optarg, 0, &o->leaks.mark_index);
		if (!rc && o->leaks.mark_index > 1000000) {
			cli_msg(&tool, "--start-index: at most 1000000, got '%s'", optarg);
			rc = CLI_EXIT_USAGE;
		}
		break;
	case OPT_FAIL_ON_FINDING:
		o->fail_on_leak = 1;
		break;
	default:
		return CLI_OPT_SHARED;
	}
	return rc;
}

static int parse_args(int argc, char **argv, struct leaks_opts *o)
{
	int rc;
	unsigned f;

	if ((rc = cli_options(&tool, argc, argv, &o->common, option, o)))
		return rc;
	if ((rc = cli_named_inputs(
		     &tool, argc, argv, &o->common, &o->session, &o->inputs, &o->n_inputs)))
		return rc;
	f = o->format;
	if ((rc = cli_report_format(&tool, o->common.output, format_names, o->format_given, &f)))
		return rc;
	o->format = (enum memscope_leaks_format)f;
	if ((o->leaks.kinds & MEMSCOPE_LEAK_MARK) && o->kinds_given && !o->leaks.mark) {
		cli_msg(&tool, "--kinds mark needs --mark TEXT");
		return CLI_EXIT_USAGE;
	}
	/* the reference's lines have every finding and no groups */
	if (o->format == MEMSCOPE_LEAKS_REFERENCE && (o->top_given || o->group_by_given)) {
		cli_msg(&tool, "--%s: --format reference writes every leak, ungrouped",
			o->top_given ? "top" : "group-by");
		return CLI_EXIT_USAGE;
	}
	if (!o->top_given)
		o->leaks.top = o->format == MEMSCOPE_LEAKS_TEXT ? 20 : 0;
	return 0;
}

/* Every input read into the analysis (twice when a boundary came late). 0 or an exit status
 * (reported). */
static int analyse(const struct leaks_opts *o, struct memscope_strtab *st, struct memscope_leaks *l,
	struct memscope_leaks_input *names)
{
	const struct memscope_run_item item = { &memscope_leaks_analysis, l };
	size_t i;
	int rc;

	rc = cli_session_run(&tool, o->session, st, &item, 1, o->common.quiet);
	for (i = 0; i < o->n_inputs; i++) {
		names[i].name = o->inputs[i];
		names[i].ptr_decimal =
			memscope_session_input(o->session, i)->layout == MEMSCOPE_LAYOUT_LEGACY;
	}
	return rc;
}

static int note_steps(void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	const struct leaks_opts *o = ctx;
	uint64_t ignored = memscope_steps_ignored(p), misnumbered = memscope_steps_misnumbered(p);
	char proc[48] = ""; /* "process 123: ", none for an input without pids (a snapshot) */

	if (pid != MEMSCOPE_ID_NONE)
		snprintf(proc, sizeof(proc), "process %" PRIu64 ": ", pid);
	if (misnumbered)
		cli_msg(&tool,
			"%s: %s%" PRIu64 " ProfilerStep op(s) ignored: their "
			"number is not above the step before theirs",
			o->inputs[src], proc, misnumbered);
	if (memscope_steps_source(p) != MEMSCOPE_STEPS_NONE && ignored)
		cli_msg(&tool,
			"%s: %s%" PRIu64 " step row(s) of another kind ignored: "
			"its steps come from %s",
			o->inputs[src], proc, ignored,
			memscope_steps_source_name(memscope_steps_source(p)));
	return 0;
}

/* inputs named in a note about some of them, at most */
#define NOTE_NAMES 5

/*
 * One stderr line about the inputs i whose flag[i] is want: "INPUT: head one" for a single input,
 * else "head in K of N inputs (a, b, c)several", the inputs named when at most NOTE_NAMES.
 * Nothing when there are none. The texts are the library's (what it could not check, why).
 */
static void note_inputs(const struct leaks_opts *o, const unsigned char *flag, unsigned char want,
	const char *head, const char *one, const char *several)
{
	char names[1024];
	size_t i, k = 0, at = 0;

	for (i = 0; i < o->n_inputs; i++)
		k += flag[i] == want;
	if (!k)
		return;
	if (o->n_inputs == 1) {
		cli_msg(&tool, "%s: %s%s", o->inputs[0], head, one);
		return;
	}
	names[0] = '\0';
	for (i = 0; i < o->n_inputs && k <= NOTE_NAMES; i++) {
		int w;

		if (flag[i] != want)
			continue;
		w = snprintf(
			names + at, sizeof(names) - at, "%s%s", at ? ", " : " (", o->inputs[i]);
		at += w > 0 ? (size_t)w : 0;
		if (at >= sizeof(names)) {
			at = sizeof(names) - 1;
			break;
		}
	}
	cli_msg(&tool, "%s in %zu of %zu inputs%s%s%s", head, k, o->n_inputs, names, at ? ")" : "",
		several);
}

/* Whether an input's leaks were grouped by op for want of call stacks. */
static int stackless(const struct memscope_leaks_input_info *in)
{
	return in->n_leaks[0] + in->n_leaks[1] + in->n_leaks[2] && !in->n_stacked;
}

/* Whether an input had no MALLOC or FREE row: nothing could be checked. */
static int blockless(const struct memscope_leaks_input_info *in)
{
	return !in->n_block_rows;
}

/* note_inputs of the inputs that pred says (*any set when there are some). 0, or -1 on OOM. */
static int note_where(const struct leaks_opts *o, const struct memscope_leaks *l,
	int (*pred)(const struct memscope_leaks_input_info *), int *any, const char *head,
	const char *one, const char *several)
{
	unsigned char *flag = calloc(o->n_inputs, 1);
	size_t i;

	if (!flag) {
		cli_msg(&tool, "out of memory");
		return -1;
	}
	for (i = 0; i < o->n_inputs; i++)
		*any |= flag[i] = (unsigned char)pred(memscope_leaks_input(l, (uint32_t)i));
	note_inputs(o, flag, 1, head, one, several);
	free(flag);
	return 0;
}

/* The note that inputs without call stacks had their leaks grouped by op. 0, or -1 on OOM. */
static int no_stacks(const struct leaks_opts *o, const struct memscope_leaks *l)
{
	int any = 0;

	return note_where(o, l, stackless, &any, "no call stacks", ": leaks grouped by op",
		": their leaks grouped by op");
}

/*
 * The inputs without MALLOC or FREE rows, where nothing could be checked: one line (also with
 * -q). *unchecked set when there are some. 0, or -1 on OOM.
 */
static int no_blocks(const struct leaks_opts *o, const struct memscope_leaks *l, int *unchecked)
{
	return note_where(o, l, blockless, unchecked,
		memscope_leaks_unchecked_text(MEMSCOPE_LEAKS_NO_BLOCKS),
		": nothing to check (samples alone, like an Ascend profiler memory_record's, hold "
		"no blocks: give its operator_memory or the whole folder)",
		": nothing to check in them (samples alone, like an Ascend profiler "
		"memory_record's, hold no blocks)");
}

/*
 * The diagnostics of the analysis on stderr; CLI_EXIT_INVALID when --mark found no range.
 * *unchecked set when an input had nothing to check, or no steps when --kinds asked for step
 * leaks (what --fail-on-finding fails on).
 */
static int report(const struct leaks_opts *o, const struct memscope_leaks *l,
	const struct memscope_strtab *st, int *unchecked)
{
	const struct memscope_leaks_stats *s = memscope_leaks_stats(l);
	const struct memscope_steps *steps = memscope_leaks_steps(l);
	size_t n, i;
	const struct memscope_mark_group *g = memscope_leaks_mark_groups(l, &n);
	uint64_t most = 0;
	size_t n_unmatched = 0;
	int checked = 0;
	/* --kinds step with --fail-on-finding: no steps fails, so it is said with -q too */
	int steps_asked = o->kinds_given && (o->leaks.kinds & MEMSCOPE_LEAK_STEP);

	for (i = 0; i < o->n_inputs; i++)
		n_unmatched += memscope_leaks_input(l, (uint32_t)i)->n_unmatched_free != 0;
	/* the first such row, and how many inputs the count is over */
	if (s->n_unmatched_free)
		cli_msg(&tool,
			"%s:%" PRIu64 ": FREE with no live MALLOC (a block allocated before the "
			"input starts, or freed twice); %" PRIu64
			" such row(s)%s%.0zu%s, counted and skipped",
			memscope_event_file(st, s->unmatched_file, o->inputs[s->unmatched_src]),
			s->unmatched_line, s->n_unmatched_free, n_unmatched > 1 ? " in " : "",
			n_unmatched > 1 ? n_unmatched : 0, n_unmatched > 1 ? " inputs" : "");
	if (s->n_replaced)
		cli_msg(&tool,
			"%" PRIu64 " MALLOC row(s) on an address still live: the old block counts "
			"as freed there",
			s->n_replaced);
	if (no_blocks(o, l, unchecked))
		return CLI_EXIT_IO;
	memscope_steps_foreach(steps, note_steps, (void *)o);
	if (o->leaks.kinds & MEMSCOPE_LEAK_STEP) {
		unsigned char *no_steps = calloc(o->n_inputs, 1);
		char one[256], several[256];
		const char *why = memscope_leaks_unchecked_text(MEMSCOPE_LEAKS_NO_STEPS);

		if (!no_steps) {
			cli_msg(&tool, "out of memory");
			return CLI_EXIT_IO;
		}
		/* an input without blocks has had its line; 1 no steps, 2 too few */
		for (i = 0; i < o->n_inputs; i++) {
			enum memscope_leaks_unchecked w =
				memscope_leaks_checked(l, MEMSCOPE_LEAK_STEP, (uint32_t)i);

			no_steps[i] = w == MEMSCOPE_LEAKS_NO_STEPS    ? 1
				      : w == MEMSCOPE_LEAKS_FEW_STEPS ? 2
								      : 0;
		}
		for (i = 0; steps_asked && i < o->n_inputs; i++)
			*unchecked |= no_steps[i] != 0;
		/* a gate says what it could not check, -q or not */
		snprintf(one, sizeof(one), " (%s)", why);
		snprintf(several, sizeof(several), ": %s", why);
		if (!o->common.quiet || o->fail_on_leak)
			note_inputs(o, no_steps, 1, "step leaks not checked", one, several);
		/* too few steps: the figures of the single input, else the rule */
		why = memscope_leaks_unchecked_text(MEMSCOPE_LEAKS_FEW_STEPS);
		snprintf(several, sizeof(several), ": %s", why);
		for (i = 0; i < o->n_inputs && no_steps[i] != 2; i++)
			;
		if (i < o->n_inputs) {
			char say[200];

			snprintf(one, sizeof(one), " (%s)",
				memscope_leaks_unchecked_say(
					l, MEMSCOPE_LEAK_STEP, (uint32_t)i, say, sizeof(say)));
		}
		if (!o->common.quiet || o->fail_on_leak)
			note_inputs(o, no_steps, 2, "step leaks not checked", one, several);
		free(no_steps);
	}
	if (o->format != MEMSCOPE_LEAKS_REFERENCE && o->leaks.group_by == MEMSCOPE_LEAKS_BY_STACK &&
		!o->common.quiet && no_stacks(o, l))
		return CLI_EXIT_IO;
	if (!(memscope_leaks_opts(l)->kinds & MEMSCOPE_LEAK_MARK))
		return 0;
	for (i = 0; i < n; i++) {
		checked |= g[i].checked;
		most = g[i].n_marks > most ? g[i].n_marks : most;
	}
	/* groups short of marks are worth a line each only when others were checked */
	for (i = 0; i < n && checked; i++) {
		char dev[MEMSCOPE_DEVICE_TEXT_MAX];

		if (g[i].checked || !g[i].n_marks)
			continue;
		cli_msg(&tool,
			"%s: device %s of process %" PRIu64 " has %" PRIu64 " Mark row(s) '%s', "
			"fewer than --start-index + 3 = %" PRIu64 ": not checked",
			o->inputs[g[i].src], memscope_device_text(g[i].device, dev), g[i].pid,
			g[i].n_marks, o->leaks.mark, o->leaks.mark_index + 3);
	}
	if (!checked) {
		cli_msg(&tool,
			"no device has %" PRIu64 " Mark rows '%s' (from index %" PRIu64
			"; the most any has is %" PRIu64 ")",
			o->leaks.mark_index + 3, o->leaks.mark, o->leaks.mark_index, most);
		return CLI_EXIT_INVALID;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct leaks_opts o = {
		/* .leaks: the library's defaults, memscope_leaks_opts_init below (--kinds all,
		 * --pool per kind, --skip-steps 1, --min-steps-alive 1, no --mark,
		 * --start-index 0, --group-by stack); .leaks.top: parse_args sets --top 20 for
		 * text, 0 (all) for the other formats */
		.format = MEMSCOPE_LEAKS_TEXT, /* --format text */
		.fail_on_leak = 0,	       /* --fail-on-finding: findings leave the status 0 */
		.kinds_given = 0,	       /* --kinds */
		.format_given = 0,	       /* --format: else from -o's ending */
		.top_given = 0,		       /* --top */
		.group_by_given = 0,	       /* --group-by */
		.common.output = "-",	       /* -o: standard output */
		.common.force = 0,	       /* -f: never over an existing file */
		.common.quiet = 0,	       /* -q: the summary on stderr */
		.common.read.lenient = 0,      /* --lenient: a bad row is an error */
	};
	struct memscope_strtab *st = NULL;
	struct memscope_leaks *l = NULL;
	struct memscope_leaks_input *names = NULL;
	const struct memscope_leaks_stats *s;
	struct memscope_leaks_total t[MEMSCOPE_LEAKS_MAX_POOLS];
	char total[MEMSCOPE_LEAKS_TOTALS_TEXT_MAX];
	struct cli_out out = { 0 };
	int status, rc, unchecked = 0;

	memscope_leaks_opts_init(&o.leaks);
	status = parse_args(argc, argv, &o);
	if (status) {
		status = status < 0 ? CLI_EXIT_OK : status;
		goto out;
	}
	st = memscope_strtab_new();
	names = calloc(o.n_inputs, sizeof(*names));
	if (!st || !names || !(l = memscope_leaks_new(&o.leaks, st))) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
		goto out;
	}
	/* the report is never written over an input, nor over a file without --force */
	if ((status = cli_out_check_session(&tool, o.common.output, o.common.force, o.session)))
		goto out;
	if ((status = analyse(&o, st, l, names)) || (status = report(&o, l, st, &unchecked)))
		goto out;
	s = memscope_leaks_stats(l);
	/* a check asked for that could not run is no pass, nor a report: an error (findings
	 * elsewhere are still findings) */
	if (o.fail_on_leak && unchecked && !(s->n_step_leaks + s->n_mark_leaks + s->n_exit_leaks)) {
		status = CLI_EXIT_INVALID;
		goto out;
	}
	if ((status = cli_out_open_session(
		     &tool, &out, o.common.output, o.common.force, o.session)))
		goto out;
	if ((rc = memscope_leaks_write(out.f, o.format, l, st, names, o.n_inputs))) {
		if (rc == MEMSCOPE_E_NOMEM)
			cli_msg(&tool, "out of memory");
		else
			cli_msg(&tool, "%s: write failed: %s", o.common.output, strerror(errno));
		status = CLI_EXIT_IO;
		goto out;
	}
	if ((status = cli_out_commit(&tool, &out)))
		goto out;
	if (!o.common.quiet) {
		char steps[48] = "", marks[48] = "",
		     exits[MEMSCOPE_LEAKS_TOTALS_TEXT_MAX + 80] = "", ooms[48] = "";
		const unsigned kinds = memscope_leaks_opts(l)->kinds;
		size_t n_oom;

		/* the biggest finding first */
		if (memscope_leaks_ooms(l, &n_oom) && n_oom)
			snprintf(ooms, sizeof(ooms), "%zu out-of-memory event(s), ", n_oom);
		/* a kind not asked for says nothing; one not checked is no count of 0 */
		if ((kinds & MEMSCOPE_LEAK_STEP) &&
			memscope_leaks_unchecked_inputs(l, MEMSCOPE_LEAK_STEP, o.n_inputs, NULL) <
				o.n_inputs)
			snprintf(steps, sizeof(steps), "%" PRIu64 " step leak(s), ",
				s->n_step_leaks);
		else if (kinds & MEMSCOPE_LEAK_STEP)
			snprintf(steps, sizeof(steps), "step leaks not checked, ");
		if ((kinds & MEMSCOPE_LEAK_MARK) && o.leaks.mark)
			snprintf(marks, sizeof(marks), "%" PRIu64 " marked-range leak(s), ",
				s->n_mark_leaks);
		if (kinds & MEMSCOPE_LEAK_EXIT)
			snprintf(exits, sizeof(exits), "%" PRIu64 " %s (%s), ", s->n_exit_leaks,
				memscope_leaks_end_text(
					memscope_leaks_end_of(l, MEMSCOPE_LEAKS_ALL_INPUTS)),
				memscope_leaks_totals_text(total, sizeof(total), t,
					memscope_leaks_totals(l, MEMSCOPE_LEAK_EXIT,
						MEMSCOPE_LEAKS_ALL_INPUTS, t),
					memscope_leaks_nested(
						l, MEMSCOPE_LEAK_EXIT, MEMSCOPE_LEAKS_ALL_INPUTS)));
		cli_msg(&tool, "%s%s%s%sfrom %" PRIu64 " events", ooms, steps, marks, exits,
			s->n_events);
	}
	if (o.fail_on_leak && s->n_step_leaks + s->n_mark_leaks + s->n_exit_leaks)
		status = CLI_EXIT_FINDINGS;
out:
	if (out.f)
		cli_out_abort(&out);
	memscope_leaks_free(l);
	memscope_strtab_free(st);
	memscope_session_free(o.session);
	free(names);
	return status;
}
