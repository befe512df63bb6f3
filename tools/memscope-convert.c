/* memscope-convert: any supported input to the reference's dump CSV layout or to our capture
 * format. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum { OPT_FORMAT = 't', OPT_TIME_UNIT = 256, OPT_COMPRESS };

static const struct cli_option options[] = {
	{ "format", 0, OPT_FORMAT, "FORMAT",
		"output format: csv or capture (default: as -o's ending says, .csv or .mscap; "
		"else capture for a CSV, csv otherwise)",
		NULL },
	{ "to", 't', OPT_FORMAT, "FORMAT", .alias_of = "format" },
	{ "output", 'o', 'o', "FILE",
		"output file, - for stdout (default: INPUT's name with .mscap or .csv, in the "
		"current folder)",
		NULL },
	{ "time-unit", 0, OPT_TIME_UNIT, "UNIT",
		"dump CSV timestamps: auto, ns or us (default auto)", NULL },
	{ "compress", 0, OPT_COMPRESS, "KIND",
		"compress the output: gzip or zstd (default: by the output name, .gz or .zst)",
		NULL },
	CLI_OPTIONS_SHARED,
};

static const struct cli_tool tool = {
	"memscope-convert",
	"[--format csv|capture] [-o FILE] [--compress gzip|zstd] [-f] [--lenient]\n"
	"       [--time-unit auto|ns|us] [-q] INPUT",
	"Convert a memscope_dump CSV, capture file, database, PyTorch memory snapshot, Nsight\n"
	"Systems export or Ascend profiler output to the dump CSV layout or the capture format.",
	options, 0, /* options anywhere */
	NULL,	    /* the usual Inputs and Exit status lines */
};

/* options; main sets every default, beside its flag */
struct convert_opts {
	const char *to;			    /* --format (-t, --to): "csv" or "capture" */
	enum memscope_compression compress; /* --compress; NONE: by the output name */
	struct cli_common common;	    /* -o, -f, -q, --lenient, --time-unit */
};

struct convert {
	struct memscope_compress_writer *z; /* in front of the output when it is compressed */
	struct memscope_csv_writer *csv;
	struct memscope_capture_writer *cap;
	struct memscope_error werr;
};

static int on_event(void *ctx, const struct memscope_event *ev)
{
	struct convert *c = ctx;

	if (c->csv)
		return memscope_csv_writer_write(c->csv, ev, &c->werr);
	return memscope_capture_writer_write(c->cap, ev, &c->werr);
}

/* a format's value is its index: o->to is its name */
static const struct cli_choice format_names[] = { { "csv", 0 }, { "capture", 1 }, { NULL, 0 } };

/* One option of parse_args (cli_options): c into ctx, a struct convert_opts. */
static int option(void *ctx, int c)
{
	static const struct cli_choice time_units[] = { { "auto", MEMSCOPE_TIME_AUTO },
		{ "ns", MEMSCOPE_TIME_NS }, { "us", MEMSCOPE_TIME_US }, { NULL, 0 } };
	static const struct cli_choice kinds[] = { { "gzip", MEMSCOPE_COMPRESS_GZIP },
		{ "zstd", MEMSCOPE_COMPRESS_ZSTD }, { NULL, 0 } };
	struct convert_opts *o = ctx;
	int rc, v = 0;

	switch (c) {
	case OPT_FORMAT:
		if ((rc = cli_parse_choice(&tool, "format", optarg, format_names, &v)))
			return rc;
		o->to = format_names[v].name;
		break;
	case OPT_TIME_UNIT:
		if ((rc = cli_parse_choice(&tool, "time-unit", optarg, time_units, &v)))
			return rc;
		o->common.read.time_unit = (enum memscope_time_unit)v;
		break;
	case OPT_COMPRESS:
		if ((rc = cli_parse_choice(&tool, "compress", optarg, kinds, &v)))
			return rc;
		o->compress = (enum memscope_compression)v;
		break;
	default:
		return CLI_OPT_SHARED;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct convert_opts *o, const char **input)
{
	int rc, v;

	if ((rc = cli_options(&tool, argc, argv, &o->common, option, o)))
		return rc;
	if (argc - optind != 1) {
		cli_msg(&tool, argc - optind ? "expected one INPUT, got %d" : "no INPUT given%.0d",
			argc - optind);
		return CLI_EXIT_USAGE;
	}
	/* -o's ending gives the format when --format is not given, and must agree when it is */
	{
		static const struct cli_ext exts[] = { { ".csv", 0 }, { ".csv.gz", 0 },
			{ ".csv.zst", 0 }, { ".mscap", 1 }, { ".mscap.gz", 1 }, { ".mscap.zst", 1 },
			{ NULL, 0 } };

		v = o->to && strcmp(o->to, "csv") ? 1 : o->to ? 0 : -1;
		if ((rc = cli_format_from_output(
			     &tool, o->common.output, exts, format_names, o->to != NULL, &v)))
			return rc;
		if (v >= 0)
			o->to = format_names[v].name;
	}
	*input = argv[optind];
	return 0;
}

/* The compression a file name asks for by its extension: .gz, .zst, else NONE. */
static enum memscope_compression compression_of(const char *name)
{
	size_t n = strlen(name);

	if (n > 3 && strcmp(name + n - 3, ".gz") == 0)
		return MEMSCOPE_COMPRESS_GZIP;
	if (n > 4 && strcmp(name + n - 4, ".zst") == 0)
		return MEMSCOPE_COMPRESS_ZSTD;
	return MEMSCOPE_COMPRESS_NONE;
}

/*
 * The default output, in the current folder: the input's name without a .gz or .zst and its last
 * extension, with ext, and .gz or .zst for --compress ("data/run.csv.gz" -> "run.mscap"). NULL on
 * OOM (the caller frees).
 */
static char *default_output(const char *input, const char *ext, enum memscope_compression z)
{
	char *out = cli_default_output(input, ext), *full = NULL;

	if (!out || z == MEMSCOPE_COMPRESS_NONE)
		return out;
	if (asprintf(&full, "%s%s", out, z == MEMSCOPE_COMPRESS_GZIP ? ".gz" : ".zst") < 0)
		full = NULL;
	free(out);
	return full;
}

static void report(const struct convert_opts *o, const char *input, const char *output,
	const struct memscope_source *src, const struct convert *c, uint64_t out_bytes)
{
	const struct memscope_read_stats *s = memscope_source_stats(src);
	enum memscope_compression in_z = memscope_source_compression(src);
	char zin[32] = "", zout[32] = "", in_text[MEMSCOPE_BYTES_TEXT_MAX];
	char out_text[MEMSCOPE_BYTES_TEXT_MAX];

	cli_report_read(&tool, input, s);
	if (o->common.quiet)
		return;
	if (in_z)
		snprintf(zin, sizeof(zin), ", %s input", memscope_compression_name(in_z));
	if (c->z)
		snprintf(zout, sizeof(zout), ", %s output", memscope_compression_name(o->compress));
	cli_msg(&tool, "%s -> %s: %llu events, %s -> %s (%s%s%s%s)", input, output,
		(unsigned long long)s->n_events,
		memscope_bytes_text(in_text, sizeof(in_text), s->bytes),
		memscope_bytes_text(out_text, sizeof(out_text), out_bytes),
		memscope_format_name(memscope_source_format(src)),
		s->layout == MEMSCOPE_LAYOUT_LEGACY    ? ", legacy layout normalised"
		: s->layout == MEMSCOPE_LAYOUT_CURRENT ? ", current layout"
						       : "",
		zin, zout);
}

int main(int argc, char **argv)
{
	struct convert_opts o = {
		.to = NULL,		  /* --format: the other format than the input's */
		.common.output = NULL,	  /* -o: INPUT with .mscap or .csv */
		.common.force = 0,	  /* -f: never over an existing file */
		.common.quiet = 0,	  /* -q: the summary on stderr */
		.common.read.lenient = 0, /* --lenient: a bad row is an error */
		.common.read.time_unit = MEMSCOPE_TIME_AUTO, /* --time-unit auto */
		.compress = MEMSCOPE_COMPRESS_NONE,	     /* --compress: by the output name */
	};
	struct convert c = { 0 };
	struct memscope_strtab *st = NULL;
	struct memscope_source *src = NULL;
	struct memscope_session *s = NULL;
	struct memscope_error err;
	struct cli_out out = { 0 };
	struct cli_common rc_opts;
	const char *input = NULL;
	char *default_out = NULL;
	enum memscope_compression by_name;
	const char *to;
	FILE *f;
	int rc, status;

	memscope_error_clear(&err);
	memscope_error_clear(&c.werr);
	status = parse_args(argc, argv, &o, &input);
	if (status)
		return status < 0 ? CLI_EXIT_OK : status;
	/* the progress line and the readers' notes, but not between CSV lines written to the same
	 * terminal */
	rc_opts = o.common;
	rc_opts.quiet = o.common.quiet ||
			(isatty(STDOUT_FILENO) &&
				strcmp(o.common.output ? o.common.output : input, "-") == 0);
	/* a folder: the one input in it (or a profiler output) */
	if ((status = cli_input(&tool, input, &rc_opts, &s)))
		return status;
	input = memscope_session_input(s, 0)->path;
	st = memscope_strtab_new();
	if (!st) {
		cli_msg(&tool, "out of memory");
		memscope_session_free(s);
		return CLI_EXIT_IO;
	}
	cli_progress(&tool, memscope_session_read_opts(s), &input, 1, rc_opts.quiet);
	rc = memscope_session_open(s, 0, st, &src, &err);
	if (rc) {
		status = cli_error(&tool, &err);
		goto out;
	}
	to = o.to						       ? o.to
	     : memscope_source_format(src) == MEMSCOPE_FORMAT_DUMP_CSV ? "capture"
								       : "csv";
	if (!o.common.output) {
		if (strcmp(input, "-") == 0) {
			o.common.output = "-";
		} else {
			default_out = default_output(
				input, strcmp(to, "csv") ? ".mscap" : ".csv", o.compress);
			if (!default_out) {
				cli_msg(&tool, "out of memory");
				status = CLI_EXIT_IO;
				goto out;
			}
			o.common.output = default_out;
		}
	}
	by_name = compression_of(o.common.output);
	if (o.compress && by_name && o.compress != by_name) {
		cli_msg(&tool, "--compress %s contradicts the output name %s",
			memscope_compression_name(o.compress), o.common.output);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	if (!o.compress)
		o.compress = by_name;
	if ((strcmp(to, "capture") == 0 || o.compress) && strcmp(o.common.output, "-") == 0 &&
		isatty(STDOUT_FILENO)) {
		cli_msg(&tool, "refusing to write binary %s data to a terminal (use -o FILE)",
			o.compress ? "compressed" : "capture");
		status = CLI_EXIT_USAGE;
		goto out;
	}
	status = cli_out_open(&tool, &out, o.common.output, o.common.force, &input, 1);
	if (status)
		goto out;
	f = out.f;
	if (o.compress && (c.z = memscope_compress_writer_new(out.f, o.compress)))
		f = memscope_compress_writer_file(c.z);
	if (strcmp(to, "csv") == 0)
		c.csv = memscope_csv_writer_new(f, st);
	else
		c.cap = memscope_capture_writer_new(f, st);
	if ((!c.csv && !c.cap) || (o.compress && !c.z)) {
		cli_msg(&tool, "out of memory");
		status = CLI_EXIT_IO;
		goto out;
	}
	rc = memscope_source_read(src, on_event, &c, &err);
	if (rc && c.werr.code) {
		status = cli_error_io(&tool, &c.werr, input, o.common.output);
		goto out;
	}
	if (rc) {
		status = cli_error(&tool, &err);
		goto out;
	}
	/* a cut or stopped input read with --lenient: the capture says so too, so that it never
	 * reads as a whole run (a CSV has no such mark: the note printed is all) */
	if (c.cap && memscope_source_stats(src)->cut.code)
		memscope_capture_writer_stop(c.cap, MEMSCOPE_CAPTURE_STOP_INPUT,
			memscope_source_stats(src)->cut.msg, UINT64_MAX);
	rc = c.csv ? memscope_csv_writer_finish(c.csv, &c.werr)
		   : memscope_capture_writer_finish(c.cap, &c.werr);
	if (!rc && c.z)
		rc = memscope_compress_writer_finish(c.z, &c.werr);
	if (rc) {
		cli_msg(&tool, "%s: %s", o.common.output, c.werr.msg);
		status = CLI_EXIT_IO;
		goto out;
	}
	uint64_t out_bytes = c.z     ? memscope_compress_writer_bytes(c.z)
			     : c.cap ? memscope_capture_writer_bytes(c.cap)
				     : memscope_csv_writer_bytes(c.csv);

	status = cli_out_commit(&tool, &out);
	if (!status)
		report(&o, input, o.common.output, src, &c, out_bytes);
out:
	/* the writers first: freeing the compressor closes the FILE they wrote to */
	memscope_csv_writer_free(c.csv);
	memscope_capture_writer_free(c.cap);
	memscope_compress_writer_free(c.z);
	if (status)
		cli_out_abort(&out);
	memscope_source_close(src);
	memscope_strtab_free(st);
	memscope_session_free(s);
	free(default_out);
	return status;
}
