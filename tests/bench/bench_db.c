/* Benchmark of memscope-db: generates training-loop dumps and prints the rows/s and peak RSS of
 * writing them into the database, through the library and through the tool, of the tool's way
 * back to CSV (checked byte-identical to the dump), and of the reference's way of inserting. */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_dump.h"
#include "gen_training.h"
#include "memscope/memscope.h"

#define DB_ROWS 400000	     /* -n default: the rows of the goal's dump */
#define REF_ROWS 20000	     /* rows the reference-like baseline inserts */
#define GOAL_ROWS_S 500000.0 /* the goal: the tool on the small dump, at least this many rows/s */
#define GOAL_RSS_BYTES 64e6  /* and at most this peak RSS */
#define PATH_MAX_LEN 4200    /* of the files written next to a dump */
#define REF_LOAD (32u << 20) /* bytes of the dump the reference-like baseline reads, at most */

/* ------------------------------------------------------------------------------------------ */
/* measurements: the bench_kinds, then the tool back to CSV */

enum mode {
	MODE_TO_CSV = BENCH_TOOL + 1, /* TOOL -q -f --to-csv FILE.tool.db -o FILE.back.csv */
	MODE_COUNT
};

static const char *const mode_names[] = { "floor", "read(2)", "parse", "db-lib", "db-tool",
	"to-csv" };

/* what the child of BENCH_LIB reports through its pipe, after the events and times */
struct result {
	struct memscope_db_stats s;
	double insert_s; /* the read+insert phase, for its rows/s */
	uint64_t db_bytes;
};

/* The dump's path with its .csv replaced by suffix into buf. */
static void out_path(char *buf, size_t n, const char *csv, const char *suffix)
{
	size_t len = strlen(csv);

	if (len >= 4 && strcmp(csv + len - 4, ".csv") == 0)
		len -= 4;
	snprintf(buf, n, "%.*s%s", (int)len, csv, suffix);
}

/* The end of the line of db-lib. */
static void print_lib(const void *res)
{
	const struct result *r = res;

	printf("; %" PRIu64 " rows (%.0f rows/s inserting), %" PRIu64 " blocks (%" PRIu64
	       " unreleased, %" PRIu64 " unmatched frees); db %.1f MB",
		r->s.n_rows, r->insert_s > 0 ? (double)r->s.n_rows / r->insert_s : 0, r->s.n_blocks,
		r->s.n_unreleased, r->s.n_unmatched_free, (double)r->db_bytes / 1e6);
}

/* the writer and its own error, for the callback */
struct sink {
	struct memscope_db_writer *w;
	struct memscope_error werr;
};

static int insert(void *ctx, const struct memscope_event *ev)
{
	struct sink *k = ctx;

	return memscope_db_writer_event(k->w, ev, &k->werr);
}

static void lib_failed(const char *path, const struct memscope_error *err)
{
	fprintf(stderr, "bench_db: %s:%" PRIu64 ": %s\n", path, err->line, err->msg);
}

/*
 * The library path of memscope-db, as the tool wires it, into FILE.lib.db: read and insert every
 * row, end the input (its open blocks), then finish (indexes, view, commit). 0 or a status.
 */
static int run_lib(const char *path, FILE *out, struct bench_msg *m, void *res)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_error err;
	struct result *r = res;
	struct sink k;
	struct stat sb;
	char db[PATH_MAX_LEN];
	double t = bench_now_s();
	int rc = -1;

	(void)out;
	k.w = NULL;
	memscope_error_clear(&err);
	memscope_error_clear(&k.werr);
	out_path(db, sizeof(db), path, ".lib.db");
	unlink(db);
	if (!st)
		goto out;
	if (memscope_db_writer_open(&k.w, db, st, &k.werr)) {
		lib_failed(db, &k.werr);
		goto out;
	}
	if (memscope_source_open(&src, path, st, NULL, &err) ||
		memscope_source_read(src, insert, &k, &err) ||
		memscope_db_writer_end_source(k.w, 0, path, memscope_source_format(src),
			memscope_source_stats(src)->layout, &k.werr)) {
		lib_failed(path, k.werr.code ? &k.werr : &err);
		goto out;
	}
	m->n = memscope_source_stats(src)->n_events;
	memscope_source_close(src);
	src = NULL;
	m->read = bench_lap(&t);
	if (memscope_db_writer_finish(k.w, &k.werr)) {
		lib_failed(db, &k.werr);
		goto out;
	}
	m->finish = bench_lap(&t);
	r->s = *memscope_db_writer_stats(k.w);
	r->insert_s = m->read;
	r->db_bytes = stat(db, &sb) ? 0 : (uint64_t)sb.st_size;
	rc = 0;
out:
	memscope_source_close(src);
	memscope_db_writer_free(k.w);
	memscope_strtab_free(st);
	return rc;
}

/* how the CSV of a round trip differs from the dump: lines of the longer file, lines that differ,
 * the first of them, and its text in each file without the LF (NULL: past the end) */
struct diff {
	uint64_t n_lines, n_diff, first;
	char *a, *b;
};

/* A line of getline without its LF, or NULL for none; NULL too when out of memory. */
static char *line_dup(const char *s, ssize_t n)
{
	return n < 0 ? NULL : strndup(s, n && s[n - 1] == '\n' ? (size_t)n - 1 : (size_t)n);
}

/*
 * Files a and b compared line by line (physical lines, each with its LF) into *d, whose a and b
 * are the caller's to free; they are byte-identical when d->n_diff is 0. 0, or -1 when one cannot
 * be read.
 */
static int diff_lines(const char *a, const char *b, struct diff *d)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	char *la = NULL, *lb = NULL;
	size_t ca = 0, cb = 0;
	ssize_t na, nb;
	int rc = -1;

	memset(d, 0, sizeof(*d));
	if (!fa || !fb)
		goto out;
	for (;;) {
		na = getline(&la, &ca, fa);
		nb = getline(&lb, &cb, fb);
		if (na < 0 && nb < 0)
			break;
		d->n_lines++;
		if (na == nb && memcmp(la, lb, (size_t)na) == 0)
			continue;
		if (!d->n_diff++) {
			d->first = d->n_lines;
			d->a = line_dup(la, na);
			d->b = line_dup(lb, nb);
		}
	}
	rc = ferror(fa) || ferror(fb) ? -1 : 0;
out:
	free(la);
	free(lb);
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the reference-like baseline: msMemScope's DbHandler (formats/sqlite.md) with plain SQLite */

#define N_COLS 12

/* the DDL and INSERT the reference issues */
static const char ref_ddl[] =
	"CREATE TABLE IF NOT EXISTS memscope_dump (\"ID\" INTEGER, \"Event\" TEXT, "
	"\"Event Type\" TEXT, \"Name\" TEXT, \"Timestamp(ns)\" INTEGER, \"Process Id\" INTEGER, "
	"\"Thread Id\" INTEGER, \"Device Id\" TEXT, \"Ptr\" TEXT, \"Attr\" TEXT, "
	"\"Call Stack(Python)\" TEXT, \"Call Stack(C)\" TEXT)";
static const char ref_ins[] =
	"INSERT INTO memscope_dump (\"ID\", \"Event\", \"Event Type\", \"Name\", "
	"\"Timestamp(ns)\", \"Process Id\", \"Thread Id\", \"Device Id\", \"Ptr\", \"Attr\", "
	"\"Call Stack(Python)\", \"Call Stack(C)\") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/* one row as the reference binds it: the integers, and the texts as its CSV writer spells them
 * (quotes kept), the Attr as its FixJson makes it */
struct ref_row {
	int64_t id, ts_ns;
	int pid, tid;
	const char *text[N_COLS];
};

/* the first rows of a dump, ready to insert */
struct ref_rows {
	char *csv;  /* the dump's first bytes, each field NUL-terminated in place */
	char *json; /* the Attr texts */
	struct ref_row *row;
	size_t n;
};

/*
 * The reference's FixJson of the raw Attr field s into out, which has room for 3 * strlen(s) + 9
 * bytes: "{k:v,...}" (quotes included) becomes {"k":"v",...}, where a value ends at the last
 * comma before the next colon; empty becomes {}. A value holding a colon is not split as the
 * reference splits it: the generated dumps have none. Returns the byte after the NUL.
 */
static char *fix_json(const char *s, char *out)
{
	size_t n = strlen(s);
	const char *end, *colon, *next, *vend;
	char *o = out;

	if (n >= 4) {
		s += 2;
		n -= 4;
	}
	end = s + n;
	*o++ = '{';
	while (s < end && (colon = memchr(s, ':', (size_t)(end - s)))) {
		next = memchr(colon + 1, ':', (size_t)(end - colon - 1));
		vend = next ? memrchr(colon + 1, ',', (size_t)(next - colon - 1)) : NULL;
		if (!vend)
			vend = next ? next : end;
		if (o > out + 1)
			*o++ = ',';
		o += sprintf(o, "\"%.*s\":\"%.*s\"", (int)(colon - s), s, (int)(vend - colon - 1),
			colon + 1);
		s = vend < end ? vend + 1 : end;
	}
	*o++ = '}';
	*o++ = '\0';
	return o;
}

/* The fields of one row, f[0..N_COLS), into r. */
static void ref_row_set(struct ref_row *r, char *const *f, char **json)
{
	int c;

	r->id = strtoll(f[0], NULL, 10);
	r->ts_ns = strtoll(f[4], NULL, 10);
	r->pid = atoi(f[5]);
	r->tid = atoi(f[6]);
	for (c = 0; c < N_COLS; c++)
		r->text[c] = f[c];
	r->text[9] = *json;
	*json = fix_json(f[9], *json);
}

/*
 * The first `max` data rows of the dump at path (those within its first REF_LOAD bytes) into *r,
 * split where its writer put commas and newlines outside quotes. 0, or -1 after saying why on
 * stderr.
 */
static int ref_load(struct ref_rows *r, const char *path, size_t max)
{
	FILE *f = fopen(path, "rb");
	char *f_start[N_COLS], *p, *end, *start, *json;
	size_t len = 0, c = 0;
	int inq = 0, header = 1, rc = -1;

	memset(r, 0, sizeof(*r));
	r->csv = malloc(REF_LOAD + 1);
	r->row = calloc(max, sizeof(*r->row));
	if (!f || !r->csv || !r->row)
		goto out;
	len = fread(r->csv, 1, REF_LOAD, f);
	if (ferror(f) || !(r->json = malloc(4 * len + 16 * max)))
		goto out;
	json = r->json;
	for (p = start = r->csv, end = r->csv + len; p < end && r->n < max; p++) {
		if (*p == '"')
			inq = !inq;
		if (inq || (*p != ',' && *p != '\n'))
			continue;
		if (c < N_COLS)
			f_start[c] = start;
		c++;
		start = p + 1;
		if (*p == ',') {
			*p = '\0';
			continue;
		}
		*p = '\0';
		if (!header && c == N_COLS)
			ref_row_set(&r->row[r->n++], f_start, &json);
		header = 0;
		c = 0;
	}
	rc = 0;
out:
	if (rc)
		perror("bench_db: reading the reference-like rows");
	if (f)
		fclose(f);
	return rc;
}

static void ref_free(struct ref_rows *r)
{
	free(r->csv);
	free(r->json);
	free(r->row);
}

/* db and its -wal and -shm side files removed. */
static void ref_unlink(const char *db)
{
	char side[PATH_MAX_LEN + 8];

	unlink(db);
	snprintf(side, sizeof(side), "%s-wal", db);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", db);
	unlink(side);
}

/* The first column of the first row of sql into buf ("" when none). 0 or -1. */
static int sql_text(sqlite3 *h, const char *sql, char *buf, size_t n)
{
	sqlite3_stmt *s = NULL;
	const unsigned char *t;
	int rc = -1;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK) {
		int r = sqlite3_step(s);

		if (r == SQLITE_ROW && (t = sqlite3_column_text(s, 0)))
			snprintf(buf, n, "%s", (const char *)t);
		rc = r == SQLITE_ROW || r == SQLITE_DONE ? 0 : -1;
	}
	sqlite3_finalize(s);
	return rc;
}

/*
 * The reference's way into db: journal_mode=WAL, default synchronous, the prepared INSERT as one
 * autocommit statement per row, then its stray COMMIT and a full checkpoint. The journal mode and
 * synchronous setting SQLite reports into mode and sync. Seconds from open to close, or -1 after
 * saying why on stderr.
 */
static double ref_insert(const struct ref_rows *r, const char *db, char *mode, char *sync, size_t n)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *ins = NULL;
	double t0, secs = -1;
	size_t i;
	int c;

	ref_unlink(db);
	t0 = bench_now_s();
	if (sqlite3_open(db, &h) != SQLITE_OK || sqlite3_busy_timeout(h, 5000) != SQLITE_OK ||
		sql_text(h, "PRAGMA journal_mode=WAL", mode, n) ||
		sqlite3_exec(h, ref_ddl, NULL, NULL, NULL) != SQLITE_OK ||
		sqlite3_prepare_v2(h, ref_ins, -1, &ins, NULL) != SQLITE_OK)
		goto out;
	for (i = 0; i < r->n; i++) {
		const struct ref_row *w = &r->row[i];

		sqlite3_reset(ins);
		for (c = 0; c < N_COLS; c++)
			sqlite3_bind_text(ins, c + 1, w->text[c], -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 1, w->id);
		sqlite3_bind_int64(ins, 5, w->ts_ns);
		sqlite3_bind_int(ins, 6, w->pid);
		sqlite3_bind_int(ins, 7, w->tid);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto out;
	}
	sqlite3_finalize(ins);
	ins = NULL;
	/* the reference's stray COMMIT, which fails: no transaction is open */
	sqlite3_exec(h, "COMMIT;", NULL, NULL, NULL);
	if (sqlite3_wal_checkpoint_v2(h, NULL, SQLITE_CHECKPOINT_FULL, NULL, NULL) != SQLITE_OK ||
		sql_text(h, "PRAGMA synchronous", sync, n))
		goto out;
	if (sqlite3_close(h) != SQLITE_OK)
		goto out;
	h = NULL;
	secs = bench_now_s() - t0;
out:
	if (secs < 0)
		fprintf(stderr, "bench_db: %s: %s\n", db, h ? sqlite3_errmsg(h) : "cannot open");
	sqlite3_finalize(ins);
	sqlite3_close(h);
	ref_unlink(db);
	return secs;
}

/* ------------------------------------------------------------------------------------------ */
/* the summary */

/* best wall time and highest peak RSS of each mode on each dump */
struct best {
	double wall[MODE_COUNT];
	long rss[MODE_COUNT];
};

static double rows_s(const struct dump_file *df, double wall)
{
	return wall > 0 ? (double)df->k.rows / wall : 0;
}

/* "name 1.234 s 345678 rows/s (x1.50 parse) peak RSS 12.3 MiB" */
static void print_mode(const struct best *b, const struct dump_file *df, int m)
{
	if (!b->wall[m])
		return;
	printf("  %-10s %7.3f s %9.0f rows/s (x%5.2f parse) peak RSS %6.1f MiB\n", mode_names[m],
		b->wall[m], rows_s(df, b->wall[m]),
		b->wall[BENCH_PARSE] ? b->wall[m] / b->wall[BENCH_PARSE] : 0,
		(double)b->rss[m] / 1024);
}

/* The ratios of mode m: against parsing alone on both dumps, against the reference-like rows/s,
 * and its peak RSS growth from the small dump to the big one. */
static void print_ratios(
	const struct best b[2], const struct dump_file df[2], int m, double ref_rows_s)
{
	unsigned i;

	if (!b[0].wall[m])
		return;
	printf("%s vs parse only:", mode_names[m]);
	for (i = 0; i < 2; i++)
		if (b[i].wall[m] && b[i].wall[BENCH_PARSE])
			printf("%s %s x%.2f the time (%.0f vs %.0f rows/s)", i ? "," : "",
				df[i].label, b[i].wall[m] / b[i].wall[BENCH_PARSE],
				rows_s(&df[i], b[i].wall[m]),
				rows_s(&df[i], b[i].wall[BENCH_PARSE]));
	printf("\n");
	if (ref_rows_s > 0)
		printf("%s vs reference-like: x%.1f the rows/s (%.0f vs %.0f rows/s)\n",
			mode_names[m], rows_s(&df[0], b[0].wall[m]) / ref_rows_s,
			rows_s(&df[0], b[0].wall[m]), ref_rows_s);
	bench_print_growth(mode_names[m], b[0].rss[m], b[1].rss[m], df);
}

static void usage(FILE *f)
{
	fputs("usage: bench_db " DUMP_OPTS_USAGE "\n"
	      "                [-t TOOL] [-k]\n"
	      "Generates a dump with ACCESS rows of ROWS rows (default 400000, about 75 MB)\n"
	      "and one SCALE times bigger (default 4) in DIR (default /tmp), then prints, N\n"
	      "times each (default 3), the time, rows/s and peak RSS of read(2) alone, parsing\n"
	      "alone, the memscope-db library path and, with -t, the memscope-db binary TOOL\n"
	      "into a database and back with --to-csv (which must give the dump byte for byte);\n"
	      "then the rows/s of the reference's inserts (one autocommit INSERT per row, WAL)\n"
	      "on the first 20000 rows. Exits 1 when a round trip differs.\n" DUMP_OPTS_HELP,
		f);
}

int main(int argc, char **argv)
{
	struct dump_opts o = dump_opts_default;
	struct dump_file df[2] = { { .label = "small" }, { .label = "big" } };
	char lib_db[2][PATH_MAX_LEN], tool_db[2][PATH_MAX_LEN], back[2][PATH_MAX_LEN];
	char ref_db[PATH_MAX_LEN], mode[32], sync[32];
	unsigned i, run, n_same[2] = { 0, 0 }, n_back[2] = { 0, 0 };
	struct ref_rows ref;
	double ref_best = 0; /* rows/s */
	size_t ref_n = 0;
	struct best bst[2];
	int m, status = 0;

	o.rows = DB_ROWS;
	dump_getopt(argc, argv, "", &o, "bench_db", usage);
	memset(bst, 0, sizeof(bst));
	for (i = 0; i < 2; i++) {
		if (dump_generate(&df[i], "bench_db", o.dir, i ? o.rows * o.scale : o.rows,
			    gen_training, &o))
			return 4;
		out_path(lib_db[i], sizeof(lib_db[i]), df[i].path, ".lib.db");
		out_path(tool_db[i], sizeof(tool_db[i]), df[i].path, ".tool.db");
		out_path(back[i], sizeof(back[i]), df[i].path, ".back.csv");
	}
	bench_floor();
	for (i = 0; i < 2; i++)
		for (m = BENCH_READ; m < MODE_COUNT; m++)
			for (run = 1; run <= o.repeat && (m < BENCH_TOOL || o.tool); run++) {
				char *to_db[] = { (char *)o.tool, "-q", "-f", "-o", tool_db[i],
					df[i].path, NULL };
				char *to_csv[] = { (char *)o.tool, "-q", "-f", "--to-csv",
					tool_db[i], "-o", back[i], NULL };
				struct result r;
				struct bench_job j = {
					.kind = m == MODE_TO_CSV ? BENCH_TOOL : (enum bench_kind)m,
					.df = &df[i],
					.name = mode_names[m],
					.run = run,
					.argv = m == MODE_TO_CSV  ? to_csv
						: m == BENCH_TOOL ? to_db
								  : NULL,
					.out = m == MODE_TO_CSV	 ? back[i]
					       : m == BENCH_TOOL ? tool_db[i]
								 : NULL,
					.phase = { "read+insert", "finish", NULL },
					.lib = run_lib,
					.print = print_lib,
					.res = &r,
					.size = sizeof(r)
				};
				struct diff d;

				if (bench_measure(&j))
					continue;
				if (!bst[i].wall[m] || j.wall < bst[i].wall[m])
					bst[i].wall[m] = j.wall;
				if (j.rss > bst[i].rss[m])
					bst[i].rss[m] = j.rss;
				if (m != MODE_TO_CSV)
					continue;
				n_back[i]++;
				if (diff_lines(df[i].path, back[i], &d)) {
					printf("%-6s round trip: cannot compare %s\n", df[i].label,
						back[i]);
				} else if (!d.n_diff) {
					n_same[i]++;
				} else if (n_back[i] - n_same[i] == 1) {
					printf("%-6s round trip DIFFERS: %" PRIu64 " of %" PRIu64
					       " lines, the first line %" PRIu64
					       ":\n  dump: %s\n  back: %s\n",
						df[i].label, d.n_diff, d.n_lines, d.first,
						d.a ? d.a : "(end of file)",
						d.b ? d.b : "(end of file)");
				}
				free(d.a);
				free(d.b);
			}
	for (i = 0; i < 2; i++) {
		if (!o.tool) {
			printf("%-6s round trip not checked (no -t TOOL)\n", df[i].label);
			continue;
		}
		if (n_back[i] && n_same[i] == n_back[i]) {
			printf("%-6s round trip identical (%u of %u runs)\n", df[i].label,
				n_same[i], n_back[i]);
			continue;
		}
		printf("%-6s round trip FAILED (%u of %u runs identical, %u runs failed)\n",
			df[i].label, n_same[i], n_back[i], o.repeat - n_back[i]);
		status = 1;
	}
	out_path(ref_db, sizeof(ref_db), df[0].path, ".ref.db");
	if (!ref_load(&ref, df[0].path, REF_ROWS))
		for (run = 1; run <= o.repeat; run++) {
			double s = ref_insert(&ref, ref_db, mode, sync, sizeof(mode));

			if (s < 0)
				break;
			printf("%-6s %-10s run %u: %8zu rows %7.3f s %9.0f rows/s "
			       "(journal_mode %s, synchronous %s, autocommit per row)\n",
				df[0].label, "ref-like", run, ref.n, s, (double)ref.n / s, mode,
				sync);
			if (!ref_best || (double)ref.n / s > ref_best)
				ref_best = (double)ref.n / s;
			ref_n = ref.n;
		}
	ref_free(&ref);
	for (i = 0; i < 2; i++) {
		printf("%s (%" PRIu64 " rows), best of %u:\n", df[i].label, df[i].k.rows, o.repeat);
		for (m = BENCH_READ; m < MODE_COUNT; m++)
			print_mode(&bst[i], &df[i], m);
	}
	if (ref_best)
		printf("  %-10s %9.0f rows/s on the first %zu rows of the small dump\n", "ref-like",
			ref_best, ref_n);
	print_ratios(bst, df, BENCH_LIB, ref_best);
	print_ratios(bst, df, BENCH_TOOL, ref_best);
	if (bst[0].wall[BENCH_TOOL])
		printf("goal (tool on the small dump: >= %.0f rows/s, <= %.0f MB peak RSS): %.0f "
		       "rows/s, %.1f MB (%.1f MiB) -> %s\n",
			GOAL_ROWS_S, GOAL_RSS_BYTES / 1e6, rows_s(&df[0], bst[0].wall[BENCH_TOOL]),
			(double)bst[0].rss[BENCH_TOOL] * 1024 / 1e6,
			(double)bst[0].rss[BENCH_TOOL] / 1024,
			rows_s(&df[0], bst[0].wall[BENCH_TOOL]) >= GOAL_ROWS_S &&
					bst[0].rss[BENCH_TOOL] * 1024.0 <= GOAL_RSS_BYTES
				? "met"
				: "NOT met");
	for (i = 0; i < 2; i++) {
		unlink(lib_db[i]);
		unlink(tool_db[i]);
		unlink(back[i]);
		if (!o.keep)
			unlink(df[i].path);
	}
	return status;
}
