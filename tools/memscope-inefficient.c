/* memscope-inefficient: blocks allocated too early, freed too late or left idle, from dumps or
 * capture files, ranked by the memory they wasted. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "memscope/inefficient.h"

enum {
	OPT_FORMAT = 256,
	OPT_IDLE_THRESHOLD,
	OPT_MIN_SIZE,
	OPT_KINDS,
	OPT_ANNOTATE,
	OPT_FAIL_ON_FINDING,
	OPT_TOP,
};

static const struct cli_option options[] = {
	{ "format", 0, OPT_FORMAT, "FORMAT",
		"text, json or csv (default: from -o's ending, else text)", NULL },
	{ "idle-threshold", 0, OPT_IDLE_THRESHOLD, "N",
		"idle when two uses are more than N APIs apart (default 3000)", NULL },
	{ "min-size", 0, OPT_MIN_SIZE, "BYTES",
		"flag only blocks of at least this size; K, M, G, T suffixes (default 0)", NULL },
	{ "kinds", 0, OPT_KINDS, "LIST",
		"early_allocation,late_deallocation,temporary_idleness or all (default all)",
		NULL },
	{ "types", 0, OPT_KINDS, "LIST", .alias_of = "kinds" },
	{ "annotate", 0, OPT_ANNOTATE, "FILE",
		"write a copy of the input with inefficient_type in the flagged MALLOC rows",
		NULL },
	{ "top", 0, OPT_TOP, "N",
		"report the N most wasteful blocks, 0 for all (default 20 in text, all "
		"otherwise)",
		NULL },
	{ "fail-on-finding", 0, OPT_FAIL_ON_FINDING, NULL, "exit 1 when any block is flagged",
		NULL },
	{ "output", 'o', 'o', "FILE", "write the report there (default -, stdout)", NULL },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	"memscope-inefficient",
	"[--format text|json|csv] [--idle-threshold N] [--min-size BYTES]\n"
	"       [--kinds LIST] [--top N] [--annotate FILE] [--fail-on-finding] [-o FILE] [-f]\n"
	"       [--lenient] [-q] INPUT...",
	"Find memory allocated too early, freed too late, or idle between uses.", options,
	0,    /* options anywhere */
	NULL, /* the usual Inputs and Exit status lines */
};

/* options; main sets every default, beside its flag */
struct ineff_opts {
	struct memscope_inefficient_opts ineff; /* --kinds, --idle-threshold, --min-size */
	enum memscope_ineff_format format;	/* --format */
	const char *annotate;			/* --annotate; NULL: no annotated copy */
	uint64_t top;				/* --top: blocks in the report; 0: all */
	int top_given;				/* --top was given */
	int format_given;			/* --format was given */
	int fail_on_finding;			/* --fail-on-finding */
	struct cli_common common;		/* -o, -f, -q, --lenient */
	struct memscope_session *session;	/* the INPUTs */
	const char *const *inputs;		/* their names (the session's) */
	size_t n_inputs;
};

/* One option of parse_args (cli_options): c into ctx, a struct ineff_opts. */
static int option(void *ctx, int c)
{
	struct ineff_opts *o = ctx;
	const struct cli_choice kinds[] = {
		{ memscope_ineff_type_name(MEMSCOPE_INEFF_EARLY), MEMSCOPE_INEFF_EARLY },
		{ memscope_ineff_type_name(MEMSCOPE_INEFF_LATE), MEMSCOPE_INEFF_LATE },
		{ memscope_ineff_type_name(MEMSCOPE_INEFF_IDLE), MEMSCOPE_INEFF_IDLE },
		{ "all", MEMSCOPE_INEFF_ALL },
		{ NULL, 0 },
	};
	unsigned long long n;
	unsigned format;
	int rc = 0;

	switch (c) {
	case OPT_FORMAT:
		rc = cli_parse_format(&tool, optarg, &format);
		o->format = (enum memscope_ineff_format)format;
		o->format_given = 1;
		break;
	case OPT_IDLE_THRESHOLD:
		rc = cli_parse_count(&tool, "idle-threshold", optarg, 1, &o->ineff.idle_threshold);
		break;
	case OPT_MIN_SIZE:
		if (cli_parse_size(optarg, &n)) {
			cli_msg(&tool, "--min-size: expected bytes like 4096, 64K or 1M, got '%s'",
				optarg);
			return CLI_EXIT_USAGE;
		}
		o->ineff.min_size = n;
		break;
	case OPT_KINDS:
		rc = cli_parse_names(&tool, "kinds", optarg, kinds, &o->ineff.types);
		break;
	case OPT_ANNOTATE:
		o->annotate = optarg;
		break;
	case OPT_TOP:
		rc = cli_parse_count(&tool, "top", optarg, 0, &o->top);
		o->top_given = 1;
		break;
	case OPT_FAIL_ON_FINDING:
		o->fail_on_finding = 1;
		break;
	default:
		return CLI_OPT_SHARED;
	}
	return rc;
}

static int parse_args(int argc, char **argv, struct ineff_opts *o)
{
	unsigned format;
	int rc;

	if ((rc = cli_options(&tool, argc, argv, &o->common, option, o)))
		return rc;
	if ((rc = cli_named_inputs(
		     &tool, argc, argv, &o->common, &o->session, &o->inputs, &o->n_inputs)))
		return rc;
	format = o->format;
	if ((rc = cli_report_format(&tool, o->common.output, NULL, o->format_given, &format)))
		return rc;
	o->format = (enum memscope_ineff_format)format;
	if (!o->top_given)
		o->top = o->format == MEMSCOPE_INEFF_TEXT ? 20 : 0;
	if (o->annotate && argc - optind == 1 && o->n_inputs != 1 &&
		strcmp(memscope_session_input(o->session, 0)->path, argv[optind])) {
		/* one argument, a folder of several inputs (cli_inputs) */
		cli_msg(&tool, "%s: --annotate takes one dump CSV and this folder holds %zu inputs",
			argv[optind], o->n_inputs);
		return CLI_EXIT_USAGE;
	}
	if (o->annotate && argc - optind == 1 && o->n_inputs != 1) {
		/* one argument, a database of several inputs (cli_inputs) */
		cli_msg(&tool,
			"%s: --annotate needs a dump CSV and this is a database of %zu inputs "
			"(give the dump CSV of one of them)",
			argv[optind], o->n_inputs);
		return CLI_EXIT_INVALID;
	}
	if (o->annotate && o->n_inputs != 1) {
		cli_msg(&tool, "--annotate takes exactly one INPUT, got %d", argc - optind);
		return CLI_EXIT_USAGE;
	}
	if (o->annotate && strcmp(o->annotate, "-") == 0) {
		cli_msg(&tool, "--annotate needs a file name (the report goes to standard output)");
		return CLI_EXIT_USAGE;
	}
	if (o->annotate && strcmp(o->common.output, "-") &&
		cli_same_path(o->annotate, o->common.output)) {
		cli_msg(&tool, "--annotate and -o name the same file '%s'", o->annotate);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/*
 * The annotated copy reads the input a second time: it must be a regular file and a dump CSV.
 * 0 or an exit status (reported).
 */
static int check_annotate_input(const struct ineff_opts *o, struct memscope_strtab *st)
{
	const char *in = o->inputs[0];
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int rc = memscope_source_rereadable(in);

	if (rc < 0)
		return 0; /* the read reports a missing file */
	if (!rc) {
		cli_msg(&tool,
			"--annotate reads the input twice, and %s cannot be read twice: save it to "
			"a file",
			strcmp(in, "-") ? in : "standard input");
		return CLI_EXIT_USAGE;
	}
	memscope_error_clear(&err);
	if ((rc = memscope_session_open(o->session, 0, st, &src, &err)))
		return cli_error(&tool, &err);
	if (memscope_source_format(src) != MEMSCOPE_FORMAT_DUMP_CSV) {
		cli_msg(&tool,
			"%s: --annotate needs a dump CSV and this is a %s file (memscope-convert "
			"writes one)",
			in, memscope_format_name(memscope_source_format(src)));
		rc = CLI_EXIT_INVALID;
	}
	memscope_source_close(src);
	return rc;
}

/*
 * Inputs without memory accesses, which this analysis judges by, are refused before anything is
 * read (standard input is not looked at twice; its read ends with "no ACCESS rows"). 0 or
 * CLI_EXIT_INVALID (reported).
 */
static int refuse_inputs_without_accesses(const struct ineff_opts *o, struct memscope_strtab *st)
{
	size_t i;

	for (i = 0; i < o->n_inputs; i++) {
		struct memscope_source *src = NULL;
		struct memscope_error err;
		const char *path = memscope_session_input(o->session, i)->path;
		enum memscope_format f;

		if (memscope_source_rereadable(path) != 1)
			continue;
		memscope_error_clear(&err);
		if (memscope_source_open(&src, path, st, NULL, &err))
			continue; /* the read says why */
		f = memscope_source_format(src);
		memscope_source_close(src);
		if (memscope_format_without_accesses(f)) {
			cli_msg(&tool,
				"%s: %s has no memory access events, which "
				"this analysis needs: record the job with msMemScope "
				"(msmemscope --events=alloc,free,launch,access ...) and give its "
				"dump",
				o->inputs[i], memscope_format_without_accesses(f));
			return CLI_EXIT_INVALID;
		}
	}
	return 0;
}

/* Read every input into the analysis and finish it. 0 or an exit status (reported). */
static int analyse(
	const struct ineff_opts *o, struct memscope_strtab *st, struct memscope_inefficient *a)
{
	const struct memscope_run_item item = { &memscope_inefficient_analysis, a };

	return cli_session_run(&tool, o->session, st, &item, 1, o->common.quiet);
}

/* What the analysis skipped or could not judge, on stderr. */
static void report(const struct ineff_opts *o, const struct memscope_inefficient *a)
{
	const struct memscope_inefficient_stats *s = memscope_inefficient_stats(a);

	if (s->n_untracked)
		cli_msg(&tool,
			"%s: %" PRIu64 " ACCESS or FREE row(s) of no live block (first: process "
			"%" PRIu64 ", ID %" PRIu64 "): counted as APIs, not judged",
			o->inputs[s->untracked_src], s->n_untracked, s->untracked_pid,
			s->untracked_id);
	if (s->n_replaced)
		cli_msg(&tool,
			"%" PRIu64 " MALLOC row(s) on a block still live: the old block ends there",
			s->n_replaced);
	if (o->common.quiet)
		return;
	if (s->n_shadow)
		cli_msg(&tool,
			"%" PRIu64 " shadow:true row(s) (synthetic, written by msMemScope) are not "
			"APIs",
			s->n_shadow);
	if (s->n_other_access)
		cli_msg(&tool, "%" PRIu64 " ACCESS row(s) of pools other than PTA and ATB ignored",
			s->n_other_access);
}

/* Each input nothing of could be flagged, on stderr (also with -q: it changes the verdict). The
 * number of them. */
static size_t report_unchecked(const struct ineff_opts *o, const struct memscope_inefficient *a)
{
	size_t i, n = 0;

	for (i = 0; i < o->n_inputs; i++) {
		const char *why = memscope_inefficient_input_note(a, (uint32_t)i);

		if (!why)
			continue;
		n++;
		cli_msg(&tool, "%s: %s (record with msmemscope --events=...,access)",
			strcmp(o->inputs[i], "-") ? o->inputs[i] : "standard input", why);
	}
	return n;
}

/* Write the annotated copy of the input into out. 0 or an exit status (reported). */
static int annotate(const struct ineff_opts *o, struct memscope_strtab *st,
	const struct memscope_inefficient *a, FILE *out)
{
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int rc;

	memscope_error_clear(&err);
	rc = memscope_session_open(o->session, 0, st, &src, &err);
	if (!rc)
		rc = memscope_inefficient_annotate(a, 0, src, out, &err);
	memscope_source_close(src);
	return rc ? cli_error_io(&tool, &err, o->inputs[0], o->annotate) : 0;
}

/* The report and the annotated copy, both or neither. 0 or an exit status (reported). */
static int write_outputs(const struct ineff_opts *o, struct memscope_strtab *st,
	const struct memscope_inefficient *a)
{
	struct cli_out out = { 0 }, ann = { 0 };
	int status;

	if ((status = cli_out_open_session(
		     &tool, &out, o->common.output, o->common.force, o->session)))
		goto out;
	if (memscope_inefficient_write(out.f, o->format, a, st, o->inputs, o->n_inputs,
		    o->top > SIZE_MAX ? SIZE_MAX : (size_t)o->top)) {
		cli_msg(&tool, "%s: write failed: %s", o->common.output, strerror(errno));
		status = CLI_EXIT_IO;
		goto out;
	}
	if (o->annotate && ((status = cli_out_open_session(
				     &tool, &ann, o->annotate, o->common.force, o->session)) ||
				   (status = annotate(o, st, a, ann.f))))
		goto out;
	status = cli_out_commit_all(
		&tool, (struct cli_out *const[]){ &out, &ann }, o->annotate ? 2 : 1);
out:
	if (out.f)
		cli_out_abort(&out);
	if (ann.f)
		cli_out_abort(&ann);
	return status;
}

int main(int argc, char **argv)
{
	struct ineff_opts o = {
		/* .ineff: the library's defaults, memscope_inefficient_opts_init below (--kinds
		 * all, --idle-threshold 3000, --min-size 0) */
		.format = MEMSCOPE_INEFF_TEXT, /* --format text */
		.annotate = NULL,	       /* --annotate: no annotated copy */
		.top = 0,		       /* --top: 20 in text, all otherwise (parse_args) */
		.top_given = 0,		       /* --top */
		.fail_on_finding = 0,	       /* --fail-on-finding: findings leave the status 0 */
		.common.output = "-",	       /* -o: standard output */
		.common.force = 0,	       /* -f: never over an existing file */
		.common.quiet = 0,	       /* -q: the summary on stderr */
		.common.read.lenient = 0,      /* --lenient: a bad row is an error */
	};
	struct memscope_strtab *st = NULL;
	struct memscope_inefficient *a = NULL;
	const struct memscope_inefficient_stats *s;
	char total[MEMSCOPE_BYTES_TEXT_MAX];
	size_t n_unchecked;
	int status;

	memscope_inefficient_opts_init(&o.ineff);
	status = parse_args(argc, argv, &o);
	if (status) {
		status = status < 0 ? CLI_EXIT_OK : status;
		goto out;
	}
	/* a progress line for the reads outside cli_run too (--annotate's copy) */
	cli_progress(
		&tool, memscope_session_read_opts(o.session), o.inputs, o.n_inputs, o.common.quiet);
	st = memscope_strtab_new();
	if (!st || !(a = memscope_inefficient_new(&o.ineff, st))) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
		goto out;
	}
	/* no output is ever written over an input, nor over a file without --force */
	if ((status = cli_out_check_session(&tool, o.common.output, o.common.force, o.session)) ||
		(o.annotate && (status = cli_out_check_session(
					&tool, o.annotate, o.common.force, o.session))))
		goto out;
	if ((status = refuse_inputs_without_accesses(&o, st)) ||
		(o.annotate && (status = check_annotate_input(&o, st))))
		goto out;
	if ((status = analyse(&o, st, a)))
		goto out;
	report(&o, a);
	n_unchecked = report_unchecked(&o, a);
	s = memscope_inefficient_stats(a);
	/* a check that could not run is no pass, and nothing found writes no report (as an
	 * unreadable input: memscope-leaks does the same) */
	if (o.fail_on_finding && n_unchecked && !s->n_blocks) {
		status = CLI_EXIT_INVALID;
		goto out;
	}
	if ((status = write_outputs(&o, st, a)))
		goto out;
	if (!o.common.quiet)
		cli_msg(&tool,
			"%" PRIu64 " inefficient block(s), %s: early_allocation %" PRIu64
			", late_deallocation %" PRIu64 ", temporary_idleness %" PRIu64
			"; from %" PRIu64 " events",
			s->n_blocks, memscope_bytes_text(total, sizeof(total), s->bytes),
			s->n_type[0], s->n_type[1], s->n_type[2], s->n_events);
	if (o.fail_on_finding && s->n_blocks)
		status = CLI_EXIT_FINDINGS;
out:
	memscope_inefficient_free(a);
	memscope_strtab_free(st);
	memscope_session_free(o.session);
	return status;
}
