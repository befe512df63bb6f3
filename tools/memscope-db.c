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

static int parse_args(int argc, char **argv, struct db_opts *o)
{
	/* a format's value is o->to_csv */
	static const struct cli_choice formats[] = { { "db", 0 }, { "csv", 1 }, { NULL, 0 } };
	int c, rc;

	while ((c = cli_getopt(&tool, argc, argv)) != -1) {
		if (c == OPT_FORMAT)
			rc = cli_parse_choice(&tool, "format", optarg, formats, &o->to_csv);
		else
			rc = cli_common_option(&tool, c, &o->common);
		if (rc)
			return rc;
	}
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
 * Stream what one source holds into the database: python_trace rows, or events; a database has
 * both (its python_trace_{pid} tables are read through a second opening). 0 or the status.
 */
static int read_one(struct sink *k, struct memscope_source *src, const char *input,
	struct memscope_strtab *st, const struct memscope_read_opts *ro, struct memscope_error *err)
{
	struct memscope_source *again = NULL;
	int rc;

	if (memscope_source_format(src) == MEMSCOPE_FORMAT_PYTHON_TRACE)
		return memscope_source_read_trace(src, on_trace, k, err);
	rc = memscope_source_read(src, on_event, k, err);
	if (rc || memscope_source_format(src) != MEMSCOPE_FORMAT_DB)
		return rc;
	rc = memscope_source_open(&again, input, st, ro, err);
	if (!rc)
		rc = memscope_source_read_trace(again, on_trace, k, err);
	memscope_source_close(again);
	return rc;
}

/*
 * The sources of the new database, in order: one per input, and one per input a database of
 * several holds (formats/sqlite.md "Reading a database") named DB:PATH as every tool names it,
 * followed by one for that database's python_trace_{pid} tables (per process, not per input),
 * named by the database's path and kept only when they have rows. Source s is names[s], read from
 * items[s].path; parts[s] is its memscope_read_opts.parts entry (0: all of the file).
 */
struct plan {
	struct plan_item {
		const char *path;
		int trace; /* 1: only the python_trace tables of the database path */
		char *own; /* names[s] when built here (freed with the plan) */
	} * items;
	const char **names; /* what memscope_sources records and the progress line shows */
	uint32_t *parts;
	size_t n, cap;
};

/* Add a source to p; name is owned by p when own. 0 or MEMSCOPE_E_NOMEM (own freed then). */
static int plan_add(
	struct plan *p, const char *name, const char *path, uint32_t part, int trace, char *own)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct plan_item *ii = realloc(p->items, cap * sizeof(*ii));
		const char **nn = ii ? realloc(p->names, cap * sizeof(*nn)) : NULL;
		uint32_t *qq = nn ? realloc(p->parts, cap * sizeof(*qq)) : NULL;

		if (ii)
			p->items = ii;
		if (nn)
			p->names = nn;
		if (!qq) {
			free(own);
			return MEMSCOPE_E_NOMEM;
		}
		p->parts = qq;
		p->cap = cap;
	}
	p->items[p->n] = (struct plan_item){ path, trace, own };
	p->names[p->n] = name;
	p->parts[p->n++] = part;
	return 0;
}

/* Remove source s of p (a database's python_trace tables that have no rows). */
static void plan_drop(struct plan *p, size_t s)
{
	free(p->items[s].own);
	memmove(p->items + s, p->items + s + 1, (p->n - s - 1) * sizeof(*p->items));
	memmove(p->names + s, p->names + s + 1, (p->n - s - 1) * sizeof(*p->names));
	memmove(p->parts + s, p->parts + s + 1, (p->n - s - 1) * sizeof(*p->parts));
	p->n--;
}

static void plan_free(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->items[i].own);
	free(p->items);
	free(p->names);
	free(p->parts);
}

struct part_ctx {
	struct plan *p;
	const char *path;
};

/* memscope_part_fn: part k of the database c->path, as "db:name". */
static int add_part(void *ctx, uint32_t part, const char *name)
{
	struct part_ctx *c = ctx;
	size_t len = strlen(c->path) + 1 + strlen(name) + 1;
	char *full = malloc(len);

	if (!full)
		return MEMSCOPE_E_NOMEM;
	snprintf(full, len, "%s:%s", c->path, name);
	return plan_add(c->p, full, c->path, part, 0, full);
}

/* The sources of the n_in inputs into p. 0 or the exit status (printed). */
static int plan_build(struct plan *p, size_t n_in, const char *const *inputs)
{
	struct memscope_error err;
	size_t i;
	int np;

	for (i = 0; i < n_in; i++) {
		struct part_ctx c = { p, inputs[i] };

		memscope_error_clear(&err);
		np = memscope_source_parts(inputs[i], add_part, &c, &err);
		if (np == 1)
			np = plan_add(p, inputs[i], inputs[i], 0, 0, NULL);
		else if (np > 1)
			np = plan_add(p, inputs[i], inputs[i], 0, 1, NULL);
		if (np < 0 && !err.code)
			memscope_error_set(&err, np, inputs[i], 0, "%s", memscope_strerror(np));
		if (np < 0)
			return cli_error(&tool, &err);
	}
	return 0;
}

/*
 * Source s of p into the database: an input read whole (a database of one input with its
 * python_trace tables), one input a database holds, or a database's python_trace tables, which
 * *kept says were written as source s (0: they have no rows, s is free for the next source).
 * 0 or the exit status (printed).
 */
static int add_input(const struct db_opts *o, struct sink *k, struct memscope_strtab *st,
	const struct plan *p, uint32_t s, int *kept)
{
	const struct plan_item *it = &p->items[s];
	const char *name = p->names[s];
	struct memscope_read_opts ro = o->common.read;
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int rc, status = 0;

	memscope_error_clear(&err);
	*kept = 1;
	ro.src = s;
	ro.parts = p->parts[s] ? p->parts : NULL;
	rc = memscope_source_open(&src, it->path, st, &ro, &err);
	if (rc)
		return cli_error(&tool, &err);
	if (it->trace)
		rc = memscope_source_read_trace(src, on_trace, k, &err);
	else if (p->parts[s])
		rc = memscope_source_read(src, on_event, k, &err);
	else
		rc = read_one(k, src, it->path, st, &ro, &err);
	if (!rc && it->trace && !memscope_source_stats(src)->n_events)
		*kept = 0;
	else if (!rc)
		rc = memscope_db_writer_end_source(k->db, s, name, memscope_source_format(src),
			it->trace ? MEMSCOPE_LAYOUT_UNKNOWN : memscope_source_stats(src)->layout,
			&k->werr);
	if (rc) {
		status = read_failed(name, o->common.output, k, &err);
		goto out;
	}
	cli_report_read(&tool, name, memscope_source_stats(src));
out:
	memscope_source_close(src);
	return status;
}

static int to_db(
	struct db_opts *o, size_t n_in, const char *const *inputs, struct memscope_strtab *st)
{
	struct sink k = { 0 };
	struct cli_out out = { 0 };
	struct plan p = { 0 };
	const char *path = o->common.output;
	size_t s = 0;
	int kept, status = 0;

	memscope_error_clear(&k.werr);
	if (strcmp(path, "-") == 0) {
		cli_msg(&tool, "a database cannot be written to standard output (use -o FILE)");
		return CLI_EXIT_USAGE;
	}
	if ((status = plan_build(&p, n_in, inputs)))
		goto out;
	if ((status = cli_out_open(&tool, &out, path, o->common.force, inputs, n_in)))
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
	/* a progress line while the sources are read (each read's ro.src is its number) */
	cli_progress(&tool, &o->common.read, p.names, p.n, o->common.quiet);
	while (s < p.n && !status) {
		status = add_input(o, &k, st, &p, (uint32_t)s, &kept);
		if (kept) {
			s++;
		} else {
			plan_drop(&p, s);
			cli_progress(&tool, &o->common.read, p.names, p.n, o->common.quiet);
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
	plan_free(&p);
	return status;
}

static int to_csv(const struct db_opts *o, const char *input, struct memscope_strtab *st)
{
	struct sink k = { 0 };
	struct cli_out out = { 0 };
	struct memscope_source *src = NULL;
	struct memscope_error err;
	int status = 0;

	memscope_error_clear(&err);
	memscope_error_clear(&k.werr);
	if (memscope_source_open(&src, input, st, &o->common.read, &err))
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
	const char *const *inputs = NULL;
	const char *input = NULL;
	char *default_out = NULL;
	size_t n_inputs = 0;
	int status;

	status = parse_args(argc, argv, &o);
	if (status)
		return status < 0 ? CLI_EXIT_OK : status;
	/* folders: the inputs under them, python_trace files too */
	status = o.to_csv ? cli_one_input(&tool, argv[optind], &input)
			  : cli_input_files(&tool, argc, argv, 1, &inputs, &n_inputs);
	if (status)
		return status;
	if (!o.common.output) {
		if (strcmp(argv[optind], "-") == 0) {
			cli_msg(&tool, "input from standard input: name the output with -o");
			return CLI_EXIT_USAGE;
		}
		/* named after the database read, or the one argument (a folder: its name) */
		default_out = cli_default_output(
			o.to_csv ? input : argv[optind], o.to_csv ? ".csv" : ".db");
		o.common.output = default_out;
	}
	st = memscope_strtab_new();
	if (!st || !o.common.output) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
	} else if (o.to_csv) {
		/* a progress line while the database is read */
		cli_progress(&tool, &o.common.read, &input, 1, o.common.quiet);
		status = to_csv(&o, input, st);
	} else {
		status = to_db(&o, n_inputs, inputs, st);
	}
	memscope_strtab_free(st);
	free(default_out);
	return status;
}
