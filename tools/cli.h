/* The small shared CLI helper of the memscope tools: option tables, --help, diagnostics, exit
 * codes, safe outputs. */
#ifndef MEMSCOPE_CLI_H
#define MEMSCOPE_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "memscope/memscope.h"

/* Exit status of every tool (documented in each man page). */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FINDINGS = 1, /* findings present and the user asked to fail on them */
	CLI_EXIT_USAGE = 2,
	CLI_EXIT_INVALID = 3, /* invalid input */
	CLI_EXIT_IO = 4,      /* I/O or internal error */
};

/*
 * One row of a tool's option table: drives getopt_long and --help alike. An alias (an older
 * spelling kept working) is a row of its own with alias_of set and the val of the row it stands
 * for, after that row: getopt takes it, --help names it at the end of that row's line ("(also
 * --types)"), and the man page says it is an older spelling. A flag alias of an option with an
 * argument names the argument it gives: alias_of "format=csv" (--to-csv is --format csv).
 */
struct cli_option {
	const char *name;     /* long name, without "--" */
	int short_name;	      /* 0 for long-only; otherwise also the value getopt returns */
	int val;	      /* value getopt returns (= short_name when there is one) */
	const char *arg;      /* argument name in --help, NULL for a flag */
	const char *help;     /* one line; NULL for an alias */
	const char *alias_of; /* NULL; for an alias the name of its row, with "=ARG" for a flag */
};

struct cli_tool {
	const char *name;	       /* "memscope-convert" */
	const char *synopsis;	       /* after the name: "[options] INPUT" */
	const char *summary;	       /* one line */
	const struct cli_option *opts; /* terminated by a row with name NULL */
	int in_order; /* options end at the first operand (a command line to run follows) */
	const char
		*footer; /* --help's last lines; NULL: the report tools' Inputs and Exit status */
};

/*
 * Parse the next option like getopt_long; returns the option's val, -1 at the end, '?' on error.
 * A flag alias with "=ARG" (struct cli_option) sets optarg to ARG, as its row's option would.
 */
int cli_getopt(const struct cli_tool *t, int argc, char **argv);

/* The options several tools share, meaning the same in each (their table rows stay per tool). */
struct cli_common {
	const char *output;		/* -o, --output FILE; NULL: the tool's default */
	int force;			/* -f, --force: overwrite an existing output */
	int quiet;			/* -q, --quiet: no summary on stderr */
	struct memscope_read_opts read; /* --lenient */
};

/* getopt value of --lenient */
#define CLI_OPT_LENIENT 0x1000

/* The table rows of the shared options but -o (whose default each tool says), and the end. */
/* clang-format off */
#define CLI_OPTIONS_SHARED \
	{ "force", 'f', 'f', NULL, "overwrite an existing output file", NULL }, \
	{ "lenient", 0, CLI_OPT_LENIENT, NULL, "skip and count bad rows instead of failing", \
		NULL }, \
	{ "quiet", 'q', 'q', NULL, "no summary on stderr", NULL }, \
	{ "help", 'h', 'h', NULL, "show this help and exit", NULL }, \
	{ "version", 'V', 'V', NULL, "show the version and exit", NULL }, \
	{ NULL, 0, 0, NULL, NULL, NULL }
/* clang-format on */

/*
 * The shared options into *c, --help, --version, and any unknown option. Tools call it for the
 * getopt values they do not take themselves. Returns 0 when taken, -1 when done (--help,
 * --version: exit 0) or CLI_EXIT_USAGE.
 */
int cli_common_option(const struct cli_tool *t, int opt, struct cli_common *c);

/* What a tool's option function returns for a getopt value it does not take (cli_options). */
#define CLI_OPT_SHARED (-2)

/*
 * A tool's options: each getopt value of cli_getopt (optarg set) to fn(ctx, value), which returns
 * 0 (taken), CLI_OPT_SHARED (the value is cli_common_option's, into *c) or an exit status
 * (printed). Stops at the first that is not 0: returns it, -1 (--help, --version: exit 0), or 0
 * when every option is taken (optind at the first INPUT).
 */
int cli_options(const struct cli_tool *t, int argc, char **argv, struct cli_common *c,
	int (*fn)(void *ctx, int opt), void *ctx);

/*
 * The session of a tool's INPUT arguments after the options (argv from optind): a new session
 * with c's read options, whose notes are printed as they arise (each a cli_msg line; the info
 * ones unless c->quiet), the arguments added with flags (memscope_session_add: folders walked,
 * a file named twice listed once, a database of several inputs standing for them;
 * MEMSCOPE_SESSION_TRACES for memscope-db). 0 and *s (the caller frees it), or the exit status
 * (printed; *s NULL): CLI_EXIT_USAGE when there are none, 3 for a folder
 * with nothing to read or a database whose memscope_sources is not right, 4 for one that cannot
 * be read.
 */
int cli_inputs(const struct cli_tool *t, int argc, char **argv, const struct cli_common *c,
	unsigned flags, struct memscope_session **s);

/* cli_inputs (flags 0) for a tool that names its inputs in messages: on success *names and *n
 * are the session's (memscope_session_names, memscope_session_count; borrowed from *s). */
int cli_named_inputs(const struct cli_tool *t, int argc, char **argv, const struct cli_common *c,
	struct memscope_session **s, const char *const **names, size_t *n);

/*
 * As cli_inputs for a tool that reads path as one input (memscope-convert, a side of
 * memscope-compare): memscope_session_add_one; a folder of several inputs is the exit status
 * CLI_EXIT_USAGE (printed), and so is a database of several at cli_session_run.
 */
int cli_input(const struct cli_tool *t, const char *path, const struct cli_common *c,
	struct memscope_session **s);

/* One stderr line for each thing a read skipped or kept unusual (memscope_read_notes), for a
 * tool that opens a source itself. */
void cli_report_read(
	const struct cli_tool *t, const char *input, const struct memscope_read_stats *s);

/*
 * memscope_session_run for a tool: every input of s read once for the n_items analyses of items
 * (strings into st), with the progress line (cli_progress) on s's read options; the notes as
 * the session gives them, an error printed. 0 or the exit status.
 */
int cli_session_run(const struct cli_tool *t, struct memscope_session *s,
	struct memscope_strtab *st, const struct memscope_run_item *items, size_t n_items,
	int quiet);

/*
 * Progress of the reads made with ro, on stderr when it is a terminal and quiet is 0 (else ro is
 * left as it is): ro gets a callback that keeps one line up to date a few times a second,
 * "memscope-db: [3/100] rank3.csv 412 MiB of 847 MiB, 95 MiB/s, ETA 4 s" (inputs[ro->src] names
 * the input; "[i/n]" only for several inputs; a compressed file counts its compressed bytes; a
 * database, its size in the share of its rows read). The line is cleared at the end of each file,
 * before every cli_msg line and at exit. Unless quiet, the readers' notes on how they read an input
 * (memscope_read_opts.notice: which export of a profiler folder was taken) are printed as cli_msg
 * lines "tool: input: note", terminal or not. cli_session_run calls it itself; a tool that opens
 * sources itself calls it once on the read options it opens them with.
 */
void cli_progress(const struct cli_tool *t, struct memscope_read_opts *ro,
	const char *const *inputs, size_t n, int quiet);

/* Seconds on the monotonic clock (for rates and times taken). */
double cli_now_seconds(void);

/* --help text on stdout. */
void cli_help(const struct cli_tool *t);

/* "tool: message" on stderr. */
void cli_msg(const struct cli_tool *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "tool: file:line: message" on stderr; returns the exit status for err->code. */
int cli_error(const struct cli_tool *t, const struct memscope_error *err);

/*
 * cli_error for an error of a writer fed by a read of input, or of the read: one without a file
 * names input when it has a line (a row the output cannot hold) and output otherwise (the library
 * does not know the output's name). Returns the exit status.
 */
int cli_error_io(const struct cli_tool *t, const struct memscope_error *err, const char *input,
	const char *output);

/* Exit status for a MEMSCOPE_E_* code. */
int cli_exit_status(int code);

/* Strict number parsing for option values ("12abc" is refused). 0 or -1. */
int cli_parse_uint(const char *s, unsigned long long *v);
/* A whole number of at least min for option --opt into *v; 0 or CLI_EXIT_USAGE (printed). */
int cli_parse_count(const struct cli_tool *t, const char *opt, const char *arg,
	unsigned long long min, uint64_t *v);
/* s[0..*n) without the spaces and TABs around it (*n shortened): a list item as typed after
 * ", ". Returns the first byte kept (borrowed from s). */
const char *cli_trim(const char *s, size_t *n);
/*
 * A comma-separated list: each item, without the spaces around it (cli_trim), through
 * item(ctx, s, len), which returns 0, or -1 to refuse it. 0, or -1 for an empty list or item, a
 * trailing comma or a refused item.
 */
int cli_parse_list(const char *arg, int (*item)(void *ctx, const char *s, size_t n), void *ctx);

/* One accepted value of an option: its text and what it means. Tables end with a NULL name. */
struct cli_choice {
	const char *name;
	int value;
};

/* The first name of value in choices ("?" when none). */
const char *cli_choice_name(const struct cli_choice *choices, int value);
/*
 * The value of option --opt: arg, exactly one of choices' names, into *value. A later name with
 * an earlier one's value is another spelling: accepted, not listed in the message. 0, or
 * CLI_EXIT_USAGE after the one line "--opt: expected a, b or c, got 'x'" (*value unchanged).
 */
int cli_parse_choice(const struct cli_tool *t, const char *opt, const char *arg,
	const struct cli_choice *choices, int *value);
/*
 * The value of option --opt: arg, a comma-separated list of choices' names, into *bits, the OR
 * of their values (bits; a choice named "all" has them all). 0, or CLI_EXIT_USAGE after the
 * one line "--opt: expected a, b and/or c[, or all], got 'x'" for an empty list or name, a
 * trailing comma or an unknown name (*bits unchanged).
 */
int cli_parse_names(const struct cli_tool *t, const char *opt, const char *arg,
	const struct cli_choice *choices, unsigned *bits);
/* --pool: pool names (hal, pta, ... any case) or all into MEMSCOPE_POOL_BIT bits; 0 or
 * CLI_EXIT_USAGE (printed). */
int cli_parse_pools(const struct cli_tool *t, const char *arg, uint64_t *pools);
/* --format text, json or csv (cli_parse_choice) into 0, 1 or 2 (the order of every report
 * tool's format enum); 0 or CLI_EXIT_USAGE (printed). */
int cli_parse_format(const struct cli_tool *t, const char *arg, unsigned *format);
/*
 * A report tool's format after its options: with given 0 (no --format), from -o's ending
 * (.txt text, .json json, .csv csv; *format keeps its default otherwise); with given 1, *format
 * as given, refused when -o's ending holds another format (cli_format_from_output). choices:
 * the tool's --format table, whose text, json and csv are 0, 1 and 2, or NULL for just those
 * (cli_parse_format's); a choice beyond them is text too (memscope-leaks' reference lines). 0 or
 * CLI_EXIT_USAGE (printed).
 */
int cli_report_format(const struct cli_tool *t, const char *output,
	const struct cli_choice *choices, int given, unsigned *format);
/* One row of a tool's table of output name endings: an ending (".svg", ".trace.json") and the
 * --format value it stands for. Several rows of one ending: the first gives the format, the
 * others are formats such a file may hold too (".json": speedscope, or a Chrome trace). Tables
 * end with a NULL ext. */
struct cli_ext {
	const char *ext;
	int value;
};
/* cli_format_from_output's given: bits */
#define CLI_FORMAT_GIVEN 1 /* --format was given */
#define CLI_FORMAT_KNOWN 2 /* without --format, an ending not in the table is refused */
/*
 * --format from -o: the longest ending of table that output's file name (its last '/' part,
 * longer than the ending) ends in, any case. given without CLI_FORMAT_GIVEN (no --format): *value
 * gets that ending's format, and keeps the tool's default for NULL, "-" or a name with no ending
 * of table; with CLI_FORMAT_KNOWN, a name with another ending (a '.' in its last part, not
 * first: "x.png", not ".x" nor "x") is a usage error, one line naming the endings of table.
 * With CLI_FORMAT_GIVEN: *value is the --format given, any name with no ending of table takes
 * it, and an ending that cannot hold it is a usage error, the one line "--format X contradicts
 * -o FILE (Y)" (X, Y: the names of choices, the --format table). 0 or CLI_EXIT_USAGE (printed).
 */
int cli_format_from_output(const struct cli_tool *t, const char *output,
	const struct cli_ext *table, const struct cli_choice *choices, int given, int *value);
/* A byte count: digits, then optionally K, M, G or T (powers of 1024), optionally followed by
 * "B" or "iB", any case ("64K", "1MiB", "512b"). 0 or -1 (bad text or overflow). */
int cli_parse_size(const char *s, unsigned long long *v);

/*
 * An output file written to a temporary name beside it and moved into place on success, so
 * nothing half-written is ever left at path. "-" is standard output. The caller owns the struct
 * and keeps it in place from cli_out_open to cli_out_commit or cli_out_abort (a signal handler
 * finds the temporary file through it).
 */
struct cli_out {
	FILE *f;
	char *path;
	char *tmp;
	int force;
	const char *const *inputs; /* borrowed: the files the output must never be */
	const char *const *paths;  /* borrowed: inputs[i] is read from paths[i] (NULL: itself) */
	size_t n_inputs;
	struct cli_out *next; /* temporaries a fatal signal removes */
	/* cli_out_reserve: the placeholder at path (device, inode) the commit replaces */
	int reserved;
	uint64_t res_dev, res_ino;
};

/*
 * Whether path may be written: refused (exit 2) when it is empty, one of the inputs by identity
 * (a symbolic or hard link to an input, or an input named through one; for "-", standard input
 * or output, a regular file), a directory, or exists without force (a dangling symbolic link
 * too). A device or pipe (/dev/null) is fine: it is written in place. 0 or the exit status,
 * printed.
 */
int cli_out_check(const struct cli_tool *t, const char *path, int force, const char *const *inputs,
	size_t n_inputs);
/*
 * cli_out_check, then open path's temporary file (a device or pipe: path itself). inputs stay
 * borrowed until commit or abort, which checks them again. On failure prints the reason and
 * returns the exit status, with *o cleared.
 */
int cli_out_open(const struct cli_tool *t, struct cli_out *o, const char *path, int force,
	const char *const *inputs, size_t n_inputs);
/* cli_out_check and cli_out_open for the inputs of session s (borrowed as the names and paths
 * it gives): an input is the file it is read from (a database for each of its parts), named
 * as the session names it. */
int cli_out_check_session(
	const struct cli_tool *t, const char *path, int force, const struct memscope_session *s);
int cli_out_open_session(const struct cli_tool *t, struct cli_out *o, const char *path, int force,
	const struct memscope_session *s);
/* cli_out_reserve's answer when path exists (nothing printed): take another name */
#define CLI_OUT_TAKEN (-1)
/*
 * cli_out_open for a name the tool chose that must never collide with another run's: path is
 * first created empty with O_CREAT|O_EXCL, a placeholder reserving it against every other run,
 * and the commit replaces exactly that placeholder (a file found there instead fails the commit,
 * exit 2). cli_out_abort, and a fatal signal before the commit, remove the placeholder. Returns 0,
 * CLI_OUT_TAKEN when something is at path (nothing printed), or the exit status, printed; on
 * failure *o is cleared and nothing is left at path.
 */
int cli_out_reserve(const struct cli_tool *t, struct cli_out *o, const char *path,
	const char *const *inputs, size_t n_inputs);
/* Whether two paths name the same file: by identity when both exist, else by their resolved
 * directory and name. */
int cli_same_path(const char *a, const char *b);
/*
 * Flush, close and move into place: over an existing file only with force; without it, a file
 * that appeared at path since the check (another run) is kept and the commit fails with exit 2.
 * From the first commit on, the fatal signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE,
 * SIGXFSZ) wait for the exit, so the exit status always tells what was written. Prints and
 * returns the exit status on failure, the temporary file removed. A caller that writes the
 * temporary file by its name (a database) closes f and sets it to NULL first.
 */
int cli_out_commit(const struct cli_tool *t, struct cli_out *o);
/*
 * cli_out_commit of n outputs, all or none: every one is flushed and closed before any is moved,
 * and when one cannot be moved those moved before it are removed again (but one that replaced a
 * file with force, which cannot be undone; that takes an I/O error).
 */
int cli_out_commit_all(const struct cli_tool *t, struct cli_out *const *outs, size_t n);
/* The default output of every tool that names one after its input: in the current folder (never
 * beside the input, which may be read-only or shared), input's file name without a .gz or .zst
 * and with its extension replaced by ext ("data/in.csv", ".db" -> "in.db"; "in.csv.zst" ->
 * "in.db"); a folder input gets ext after its name ("runs/run_ascend_pt/", ".db" ->
 * "run_ascend_pt.db"; "." its real name). NULL on OOM; the caller frees. */
char *cli_default_output(const char *input, const char *ext);

/* Drop the temporary file (after a failure). */
void cli_out_abort(struct cli_out *o);

#endif
