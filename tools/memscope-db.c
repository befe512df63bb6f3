/* memscope-db: dump CSV, capture and python_trace files into the SQLite database MindStudio Insight
 * opens, and a database back to the dump CSV. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_FORMAT = 256 };

static const struct cli_option options[] = {
	{ "output", 'o', 'o', "FILE",
		"output file (default: the INPUT's name with .db, or .csv with --format csv, in "
		"the current folder; - for stdout with --format csv)",
		NULL },
	{ "format", 0, OPT_FORMAT, "FORMAT",
		"db (default), or csv: INPUT is a database, write its memscope_dump as CSV", NULL },
	{ "to-csv", 0, OPT_FORMAT, NULL, .alias_of = "format=csv" },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	"memscope-db",
	"[--format db] [-o OUT.db] [-f] [--lenient] [-q] INPUT...\n"
	"       | --format csv [-o OUT.csv] [-f] [-q] IN.db",
	"Write memscope_dump CSV, capture and python_trace files into one SQLite database in the "
	"schema MindStudio Insight opens, or a database back to the dump CSV.",
	options, 0, /* options anywhere */
	NULL,	    /* the usual Inputs and Exit status lines */
};

/* options; main sets every default, beside its flag */
struct db_opts {
	int to_csv;		  /* --format (--to-csv): 0 db, 1 csv */
	struct cli_common common; /* -o, -f, -q, --lenient */
};

/* what the callbacks write to, and the writer's own error */
struct sink {
	struct memscope_db_writer *db;
	struct memscope_csv_writer *csv;
	struct memscope_error werr;
};

static int on_event(void *ctx, const struct memscope_event *ev)
{
	struct sink *k = ctx;

	if (k->csv)
		return memscope_csv_writer_write(k->csv, ev, &k->werr);
	return memscope_db_writer_event(k->db, ev, &k->werr);
}

static int on_trace(void *ctx, const struct memscope_trace_row *row)
{
	struct sink *k = ctx;

	return memscope_db_writer_trace(k->db, row, &k->werr);
}

/* One option of parse_args (cli_options): c into ctx, a struct db_opts. */
static int option(void *ctx, int c)
{
	/* a format's value is o->to_csv */
	static const struct cli_choice formats[] = { { "db", 0 }, { "csv", 1 }, { NULL, 0 } };
	struct db_opts *o = ctx;

	if (c != OPT_FORMAT)
		return CLI_OPT_SHARED;
	return cli_parse_choice(&tool, "format", optarg, formats, &o->to_csv);
}

static int parse_args(int argc, char **argv, struct db_opts *o)
{
	int rc;

	if ((rc = cli_options(&tool, argc, argv, &o->common, option, o)))
		return rc;
	if (optind == argc) {
		cli_msg(&tool, "no INPUT given");
		return CLI_EXIT_USAGE;
	}
	if (o->to_csv && argc - optind != 1) {
		cli_msg(&tool, "--format csv takes one database, got %d inputs", argc - optind);
		return CLI_EXIT_USAGE;
	}
	if (!o->common.output && argc - optind > 1) {
		cli_msg(&tool, "%d inputs: name the database with -o", argc - optind);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/*
 * Print why a read of input into out failed: the reader's error, or the writer's, which names the
 * input's row when a row is to blame (a NUL byte in an Attr) and the output otherwise. Returns the
 * exit status.
 */
static int read_failed(
	const char *input, const char *out, struct sink *k, const struct memscope_error *err)
{
	return cli_error_io(&tool, k->werr.code ? &k->werr : err, input, out);
}

/*
 * Stream what input i of s holds, opened as src, into the database: python_trace rows, or
 * events; a database read whole has both (its python_trace_{pid} tables are read through a
 * second opening). 0 or the status.
 */
static int read_one(struct sink *k, struct memscope_source *src, struct memscope_session *s,
	size_t i, struct memscope_strtab *st, struct memscope_error *err)
{
	struct memscope_source *again = NULL;
	int rc;

	if (memscope_source_format(src) == MEMSCOPE_FORMAT_PYTHON_TRACE)
		return memscope_source_read_trace(src, on_trace, k, err);
	rc = memscope_source_read(src, on_event, k, err);
	if (rc || memscope_source_format(src) != MEMSCOPE_FORMAT_DB)
		return rc;
	rc = memscope_session_open(s, i, st, &again, err);
	if (!rc)
		rc = memscope_source_read_trace(again, on_trace, k, err);
	memscope_source_close(again);
	return rc;
}

/*
 * Input i of s into the database, as source i: an input read whole (a database of one input
 * with its python_trace tables), one input a database holds (formats/sqlite.md "Reading a
 * database", named DB:NAME as every tool names it), or a database's python_trace tables (per
 * process, not per input; traces_only), which *kept says were written as source i (0: they have
 * no rows, the caller drops the input). 0 or the exit status (printed).
 */
static int add_input(const struct db_opts *o, struct sink *k, struct memscope_strtab *st,
	struct memscope_session *s, uint32_t i, int *kept)
{
	const struct memscope_input *in = memscope_session_input(s, i);
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int rc, status = 0;

	memscope_error_clear(&err);
	*kept = 1;
	rc = memscope_session_open(s, i, st, &src, &err);
	if (rc)
		return cli_error(&tool, &err);
	if (in->traces_only)
		rc = memscope_source_read_trace(src, on_trace, k, &err);
	else if (in->part)
		rc = memscope_source_read(src, on_event, k, &err);
	else
		rc = read_one(k, src, s, i, st, &err);
	if (!rc && in->traces_only && !memscope_source_stats(src)->n_events)
		*kept = 0;
	else if (!rc)
		rc = memscope_db_writer_end_source(k->db, i, in->name, memscope_source_format(src),
			in->traces_only ? MEMSCOPE_LAYOUT_UNKNOWN
					: memscope_source_stats(src)->layout,
			&k->werr);
	if (rc) {
		status = read_failed(in->name, o->common.output, k, &err);
		goto out;
	}
	cli_report_read(&tool, in->name, memscope_source_stats(src));
out:
	memscope_source_close(src);
	return status;
}

/* The progress line over the inputs of s (each read's src is its number). */
static void progress(const struct db_opts *o, struct memscope_session *s)
{
	cli_progress(&tool, memscope_session_read_opts(s), memscope_session_names(s),
		memscope_session_count(s), o->common.quiet);
}

static int to_db(struct db_opts *o, struct memscope_session *s, struct memscope_strtab *st)
{
	struct sink k = { 0 };
	struct cli_out out = { 0 };
	const char *path = o->common.output;
	size_t i = 0;
	int kept, status = 0;

	memscope_error_clear(&k.werr);
	if (strcmp(path, "-") == 0) {
		cli_msg(&tool, "a database cannot be written to standard output (use -o FILE)");
		return CLI_EXIT_USAGE;
	}
	if ((status = cli_out_open(&tool, &out, path, o->common.force, memscope_session_paths(s),
		     memscope_session_count(s))))
		goto out;
	if (!out.tmp) {
		cli_msg(&tool, "%s: not a regular file (a database needs one)", path);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	/* SQLite writes the temporary file by its name */
	fclose(out.f);
	out.f = NULL;
	if (memscope_db_writer_open(&k.db, out.tmp, st, &k.werr)) {
		cli_msg(&tool, "%s: %s", path, k.werr.msg);
		status = cli_exit_status(k.werr.code);
		goto out;
	}
	progress(o, s);
	while (i < memscope_session_count(s) && !status) {
		status = add_input(o, &k, st, s, (uint32_t)i, &kept);
		if (kept) {
			i++;
		} else {
			memscope_session_remove(s, i);
			progress(o, s);
		}
	}
	if (!status && memscope_db_writer_finish(k.db, &k.werr)) {
		cli_msg(&tool, "%s: %s", path, k.werr.msg);
		status = cli_exit_status(k.werr.code);
	}
	if (!status)
		status = cli_out_commit(&tool, &out);
	if (!status && !o->common.quiet) {
		const struct memscope_db_stats *t = memscope_db_writer_stats(k.db);

		cli_msg(&tool,
			"%s: %llu rows (inputs: %llu), %llu blocks (unreleased at exit: %llu, "
			"unmatched frees: %llu), %llu python_trace rows (tables: %llu)",
			path, (unsigned long long)t->n_rows, (unsigned long long)t->n_sources,
			(unsigned long long)t->n_blocks, (unsigned long long)t->n_unreleased,
			(unsigned long long)t->n_unmatched_free,
			(unsigned long long)t->n_trace_rows, (unsigned long long)t->n_trace_tables);
	}
out:
	memscope_db_writer_free(k.db);
	if (status)
		cli_out_abort(&out);
	return status;
}

static int to_csv(const struct db_opts *o, struct memscope_session *s, struct memscope_strtab *st)
{
	const char *input = memscope_session_input(s, 0)->path;
	struct sink k = { 0 };
	struct cli_out out = { 0 };
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int status = 0;

	memscope_error_clear(&err);
	memscope_error_clear(&k.werr);
	if (memscope_session_open(s, 0, st, &src, &err))
		return cli_error(&tool, &err);
	if (memscope_source_format(src) != MEMSCOPE_FORMAT_DB) {
		cli_msg(&tool, "%s: not a database (--format csv reads one)", input);
		status = CLI_EXIT_INVALID;
		goto out;
	}
	if ((status = cli_out_open(&tool, &out, o->common.output, o->common.force, &input, 1)))
		goto out;
	if (!(k.csv = memscope_csv_writer_new(out.f, st))) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
		goto out;
	}
	if (memscope_source_read(src, on_event, &k, &err) ||
		memscope_csv_writer_finish(k.csv, &k.werr)) {
		status = read_failed(input, o->common.output, &k, &err);
		goto out;
	}
	status = cli_out_commit(&tool, &out);
	if (!status)
		cli_report_read(&tool, input, memscope_source_stats(src));
	if (!status && !o->common.quiet)
		cli_msg(&tool, "%s -> %s: %llu rows", input, o->common.output,
			(unsigned long long)memscope_source_stats(src)->n_events);
out:
	if (status)
		cli_out_abort(&out);
	memscope_csv_writer_free(k.csv);
	memscope_source_close(src);
	return status;
}

int main(int argc, char **argv)
{
	struct db_opts o = {
		.to_csv = 0,		  /* --format db */
		.common.output = NULL,	  /* -o: INPUT with .db, or .csv with --format csv */
		.common.force = 0,	  /* -f: never over an existing file */
		.common.quiet = 0,	  /* -q: the summary on stderr */
		.common.read.lenient = 0, /* --lenient: a bad row is an error */
	};
	struct memscope_strtab *st = NULL;
	struct memscope_session *s = NULL;
	char *default_out = NULL;
	int status;

	status = parse_args(argc, argv, &o);
	if (status)
		return status < 0 ? CLI_EXIT_OK : status;
	/* folders: the inputs under them, python_trace files too */
	status = o.to_csv ? cli_input(&tool, argv[optind], &o.common, &s)
			  : cli_inputs(&tool, argc, argv, &o.common, MEMSCOPE_SESSION_TRACES, &s);
	if (status)
		return status;
	if (!o.common.output) {
		if (strcmp(argv[optind], "-") == 0) {
			cli_msg(&tool, "input from standard input: name the output with -o");
			memscope_session_free(s);
			return CLI_EXIT_USAGE;
		}
		/* named after the database read, or the one argument (a folder: its name) */
		default_out = cli_default_output(
			o.to_csv ? memscope_session_input(s, 0)->path : argv[optind],
			o.to_csv ? ".csv" : ".db");
		o.common.output = default_out;
	}
	st = memscope_strtab_new();
	if (!st || !o.common.output) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
	} else if (o.to_csv) {
		/* a progress line while the database is read */
		cli_progress(&tool, memscope_session_read_opts(s), memscope_session_names(s), 1,
			o.common.quiet);
		status = to_csv(&o, s, st);
	} else {
		status = to_db(&o, s, st);
	}
	memscope_strtab_free(st);
	memscope_session_free(s);
	free(default_out);
	return status;
}
