/* scale_run: the scaling test of one dimension: each tool the dimension matters to runs on dumps
 * of size n and 4n (written by scale_gen), and the test fails when a run's CPU time grows more than
 * BOUND times. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The runs: memscope-TOOL and its arguments, split at spaces, where {in} is the input (every file
 * of the inputs dimension), {pair} "BASE,COMPARE" (the input and its twin with 3 ops renamed) and
 * {out} a file in the work directory.
 */
#define CONVERT "convert -t capture -o {out} -f {in}"
#define COMPARE_REF "compare -i {pair} --level op,kernel -o {out} -f"
#define COMPARE_PEAK "compare -i {pair} --metric peak --step 2 -o {out} -f"
#define COMPARE_DELTA "compare -i {pair} --metric delta -o {out} -f"
#define LEAKS_TEXT "leaks --mark scale_mark {in}"
#define LEAKS_JSON "leaks --mark scale_mark --format json {in}"
#define LEAKS_CSV "leaks --format csv {in}"
#define INEFFICIENT_TEXT "inefficient {in}"
#define INEFFICIENT_JSON "inefficient --format json {in}"
#define DB "db -o {out} -f {in}"
#define EXPORT_ALL "export --metric allocated,peak,leaked,count {in}"
#define EXPORT_TRACE "export --format chrome-trace {in}"
#define EXPORT_SVG "export --format svg --metric peak {in}"
#define EXPORT_OP "export --group-by op --format folded {in}"
#define EXPORT_OWNER "export --group-by owner --metric leaked {in}"

#define MAX_CASES 16

/*
 * A dimension: scale_gen's flags for size n ({n} is n), n for the plain build (chosen so that a
 * quadratic cost shows clearly, the n runs taking about 0.03 to 0.3 s there), and the runs of the
 * tools it matters to.
 */
struct dim {
	const char *name;
	uint64_t n;
	const char *gen;
	const char *cases[MAX_CASES];
};

/* every dimension grows alone; the others stay small */
static const struct dim dims[] = {
	{ "rows", 4000, "-O {n}",
		{ CONVERT, COMPARE_REF, COMPARE_PEAK, COMPARE_DELTA, LEAKS_TEXT, LEAKS_JSON,
			LEAKS_CSV, INEFFICIENT_TEXT, INEFFICIENT_JSON, DB, EXPORT_ALL, EXPORT_TRACE,
			EXPORT_SVG, EXPORT_OP, EXPORT_OWNER } },
	{ "inputs", 2000, "-F {n} -S 4 -O 1",
		{ LEAKS_TEXT, LEAKS_JSON, INEFFICIENT_TEXT, DB, EXPORT_ALL, EXPORT_TRACE } },
	{ "processes", 4000, "-P {n} -S 2 -O 1",
		{ CONVERT, COMPARE_REF, COMPARE_PEAK, COMPARE_DELTA, LEAKS_TEXT, LEAKS_JSON,
			INEFFICIENT_TEXT, DB, EXPORT_ALL, EXPORT_TRACE, EXPORT_OP } },
	{ "devices", 8000, "-D {n} -S 2 -O 1",
		{ CONVERT, COMPARE_REF, COMPARE_PEAK, COMPARE_DELTA, LEAKS_TEXT, LEAKS_JSON,
			INEFFICIENT_TEXT, DB, EXPORT_ALL, EXPORT_TRACE } },
	{ "stacks", 8000, "-K {n} -k 1 -O {n} -S 1 -L",
		{ CONVERT, LEAKS_TEXT, LEAKS_JSON, INEFFICIENT_JSON, DB, EXPORT_ALL, EXPORT_SVG,
			EXPORT_OWNER } },
	{ "steps", 8000, "-S {n} -O 1",
		{ CONVERT, COMPARE_REF, COMPARE_PEAK, COMPARE_DELTA, LEAKS_TEXT, LEAKS_JSON,
			INEFFICIENT_TEXT, DB, EXPORT_ALL, EXPORT_TRACE } },
	/* two unrelated steps (the twin's names drawn by another seed): past the exact diff's
	 * bound at 4n, so the anchored alignment */
	{ "unrelated", 20000, "-S 1 -M -U 1 -O {n}", { COMPARE_REF, COMPARE_DELTA } },
};

/* options, with every default next to its flag */
struct run_opts {
	const char *bin_dir; /* -B: where memscope-* are (required) */
	const char *gen;     /* -G: the scale_gen binary (required) */
	const char *work;    /* -W: work directory, made, and removed unless -k (required) */
	double bound;	     /* -b: highest 4n/n CPU-time ratio that passes (8) */
	unsigned shrink;     /* -s: divide n by this, for slow builds (1) */
	uint64_t n;	     /* -n: n itself (0: the dimension's, divided by SHRINK) */
	const char *only;    /* -t: only the runs of memscope-TOOL (NULL: all) */
	int no_limit;	     /* -l: no CPU limit on the 4n runs (0: 2 * BOUND * the n run + 2 s) */
	int keep;	     /* -k: keep the dumps (0) */
};

static const struct run_opts run_defaults = { NULL, NULL, NULL, 8.0, 1, 0, NULL, 0, 0 };

/* The CPU time of one run. */
struct figure {
	double cpu_s;
	int killed; /* stopped at the CPU limit: took at least that long */
};

static void usage(FILE *f)
{
	fputs("Usage: scale_run -B BIN_DIR -G SCALE_GEN -W WORK_DIR [-b BOUND] [-s SHRINK] [-n N] "
	      "[-t TOOL] [-l] [-k] DIMENSION\n"
	      "Run the tools DIMENSION (rows, inputs, processes, devices, stacks, steps or "
	      "unrelated) "
	      "matters "
	      "to on dumps of size n and 4n; fail when a run's CPU time grows more than BOUND "
	      "times.\n"
	      "  -b BOUND   highest 4n/n CPU-time ratio that passes (default 8)\n"
	      "  -s SHRINK  divide n by SHRINK (slow builds)\n"
	      "  -n N       n itself\n"
	      "  -t TOOL    only the runs of memscope-TOOL\n"
	      "  -l         no CPU limit on the 4n runs (default: 2 * BOUND * the n run + 2 s)\n"
	      "  -k         keep the dumps\n",
		f);
}

/* Words of s split at spaces, each "{n}" replaced by n, appended to argv from *k. 0 or -1. */
static int split(const char *s, uint64_t n, char **argv, size_t *k, size_t max)
{
	char *copy = strdup(s), *save = NULL, *w;
	int rc = 0;

	for (w = copy ? strtok_r(copy, " ", &save) : NULL; w && !rc;
		w = strtok_r(NULL, " ", &save)) {
		if (*k + 1 >= max)
			rc = -1;
		else if (strcmp(w, "{n}") == 0)
			rc = asprintf(&argv[(*k)++], "%" PRIu64, n) < 0 ? -1 : 0;
		else
			rc = (argv[(*k)++] = strdup(w)) ? 0 : -1;
	}
	free(copy);
	return copy ? rc : -1;
}

static void free_argv(char **argv)
{
	size_t i;

	for (i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/*
 * Run argv with stdout to /dev/null and stderr to err_path, with at most limit_s seconds of CPU
 * (0: no limit). 0 and its CPU time (user + system) in *fig when it exits 0 or is stopped at the
 * limit; -1 otherwise, after saying so on stderr.
 */
static int run(char *const *argv, const char *err_path, unsigned limit_s, struct figure *fig)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("scale_run: fork");
		return -1;
	}
	if (pid == 0) {
		int out = open("/dev/null", O_WRONLY);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		struct rlimit core = { 0, 0 }, cpu = { limit_s, limit_s + 1 };

		if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(127);
		setrlimit(RLIMIT_CORE, &core);
		if (limit_s)
			setrlimit(RLIMIT_CPU, &cpu);
		execv(argv[0], argv);
		dprintf(2, "scale_run: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("scale_run: wait4");
		return -1;
	}
	fig->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	fig->killed = limit_s && WIFSIGNALED(status) &&
		      (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL);
	if (fig->killed || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
		return 0;
	fprintf(stderr, "scale_run: %s ", argv[0]);
	if (WIFEXITED(status))
		fprintf(stderr, "exited with status %d", WEXITSTATUS(status));
	else
		fprintf(stderr, "was killed by signal %d", WTERMSIG(status));
	fprintf(stderr, "; its stderr is in %s\n", err_path);
	return -1;
}

/* The dumps of one size: their paths, and the twin for compare. */
struct dumps {
	char **in;
	size_t n_in;
	char *twin;
	char *dir; /* the inputs dimension's directory */
};

static void dumps_free(struct dumps *d, int keep)
{
	size_t i;

	for (i = 0; i < d->n_in; i++) {
		if (!keep)
			unlink(d->in[i]);
		free(d->in[i]);
	}
	if (d->twin && !keep)
		unlink(d->twin);
	if (d->dir && !keep)
		rmdir(d->dir);
	free(d->in);
	free(d->twin);
	free(d->dir);
	memset(d, 0, sizeof(*d));
}

/* Run scale_gen with the dimension's flags for size n, and extra (may be NULL), writing out. */
static int gen(const struct run_opts *o, const struct dim *d, uint64_t n, const char *extra,
	const char *out)
{
	char *argv[32] = { NULL }, err[4096];
	size_t k = 0;
	struct figure fig;
	int rc = -1;

	snprintf(err, sizeof(err), "%s/gen.err", o->work);
	if (!(argv[k++] = strdup(o->gen)) || split(d->gen, n, argv, &k, 30) ||
		(extra && split(extra, n, argv, &k, 30)) || !(argv[k++] = strdup(out)))
		goto out;
	rc = run(argv, err, 0, &fig);
	unlink(err);
out:
	for (k = 0; argv[k]; k++)
		free(argv[k]);
	return rc;
}

/* Write the dumps of size n: work/DIM-n.csv and its twin work/DIM-n-twin.csv, or n files in the
 * directory work/DIM-n for the inputs dimension. 0 or -1; *ds is to be freed either way. */
static int generate(
	const struct run_opts *o, const struct dim *d, uint64_t n, int twin, struct dumps *ds)
{
	int many = strcmp(d->name, "inputs") == 0;
	char *path;

	memset(ds, 0, sizeof(*ds));
	if (!(ds->in = calloc(many ? n : 1, sizeof(*ds->in))) ||
		asprintf(&path, "%s/%s-%" PRIu64 "%s", o->work, d->name, n, many ? "" : ".csv") < 0)
		return -1;
	if (many)
		ds->dir = path;
	else
		ds->in[ds->n_in++] = path;
	if (gen(o, d, n, NULL, path))
		return -1;
	for (; many && ds->n_in < n; ds->n_in++) {
		if (asprintf(&path, "%s/in%05zu.csv", ds->dir, ds->n_in) < 0)
			return -1;
		ds->in[ds->n_in] = path;
	}
	if (twin) {
		if (asprintf(&path, "%s/%s-%" PRIu64 "-twin.csv", o->work, d->name, n) < 0)
			return -1;
		ds->twin = path;
		if (gen(o, d, n, "-E 3", path))
			return -1;
	}
	return 0;
}

/* The argv of run c on the dumps ds (NULL on OOM). */
static char **case_argv(
	const struct run_opts *o, const char *c, const struct dumps *ds, const char *out)
{
	size_t max = ds->n_in + 32, k = 0, i, j;
	char **argv = calloc(max, sizeof(*argv)), *words[32] = { NULL };
	size_t n_words = 0;

	if (!argv || split(c, 0, words, &n_words, 32) ||
		asprintf(&argv[k++], "%s/memscope-%s", o->bin_dir, words[0]) < 0)
		goto fail;
	for (i = 1; i < n_words; i++) {
		if (strcmp(words[i], "{in}") == 0) {
			for (j = 0; j < ds->n_in; j++)
				if (!(argv[k++] = strdup(ds->in[j])))
					goto fail;
		} else if (strcmp(words[i], "{pair}") == 0) {
			if (asprintf(&argv[k++], "%s,%s", ds->in[0], ds->twin) < 0)
				goto fail;
		} else if (!(argv[k++] = strdup(strcmp(words[i], "{out}") ? words[i] : out))) {
			goto fail;
		}
	}
	for (i = 0; i < n_words; i++)
		free(words[i]);
	return argv;
fail:
	for (i = 0; i < n_words; i++)
		free(words[i]);
	free_argv(argv);
	return NULL;
}

/* Run case c (of the cases of d) on ds into *fig. 0 or -1. */
static int run_case(const struct run_opts *o, const char *c, const struct dumps *ds,
	unsigned limit_s, struct figure *fig)
{
	char out[4096], err[4096], **argv;
	int rc;

	snprintf(out, sizeof(out), "%s/out", o->work);
	snprintf(err, sizeof(err), "%s/stderr", o->work);
	if (!(argv = case_argv(o, c, ds, out))) {
		fprintf(stderr, "scale_run: out of memory\n");
		return -1;
	}
	rc = run(argv, err, limit_s, fig);
	free_argv(argv);
	unlink(out);
	if (!rc)
		unlink(err);
	return rc;
}

/* A whole decimal number, or with frac a decimal fraction, into *v; 0 or -1. */
static int parse_num(const char *s, int frac, double *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = frac ? strtod(s, &end) : (double)strtoull(s, &end, 10);
	return *end || errno ? -1 : 0;
}

static int selected(const struct run_opts *o, const char *c)
{
	size_t n = o->only ? strlen(o->only) : 0;

	return !o->only || (strncmp(c, o->only, n) == 0 && c[n] == ' ');
}

int main(int argc, char **argv)
{
	struct run_opts o = run_defaults;
	const struct dim *d = NULL;
	struct figure small[MAX_CASES], big[MAX_CASES], again;
	struct dumps ds_small, ds_big;
	uint64_t n;
	size_t i;
	double v;
	int c, twin = 0, failed = 0;

	while ((c = getopt(argc, argv, "B:G:W:b:s:n:t:lkh")) != -1) {
		switch (c) {
		case 'B':
			o.bin_dir = optarg;
			break;
		case 'G':
			o.gen = optarg;
			break;
		case 'W':
			o.work = optarg;
			break;
		case 'b':
		case 's':
		case 'n':
			if (parse_num(optarg, c == 'b', &v) || v > 1e9) {
				fprintf(stderr, "scale_run: -%c: bad number '%s'\n", c, optarg);
				return 2;
			}
			if (c == 'b')
				o.bound = v;
			else if (c == 's')
				o.shrink = (unsigned)v;
			else
				o.n = (uint64_t)v;
			break;
		case 't':
			o.only = optarg;
			break;
		case 'l':
			o.no_limit = 1;
			break;
		case 'k':
			o.keep = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (i = 0; optind == argc - 1 && i < sizeof(dims) / sizeof(dims[0]); i++)
		if (strcmp(dims[i].name, argv[optind]) == 0)
			d = &dims[i];
	if (!d || !o.bin_dir || !o.gen || !o.work || !(o.bound > 1) || !o.shrink) {
		usage(stderr);
		return 2;
	}
	n = o.n ? o.n : d->n / o.shrink;
	if (mkdir(o.work, 0777) && errno != EEXIST) {
		fprintf(stderr, "scale_run: %s: %s\n", o.work, strerror(errno));
		return 2;
	}
	for (i = 0; d->cases[i]; i++)
		twin |= strncmp(d->cases[i], "compare ", 8) == 0;
	if (generate(&o, d, n, twin, &ds_small) || generate(&o, d, 4 * n, twin, &ds_big)) {
		fprintf(stderr, "scale_run: %s: cannot write the dumps\n", d->name);
		failed = 1;
		goto out;
	}
	printf("%-62s %8s %8s %8s %8s %6s\n", d->name, "n", "4n", "n s", "4n s", "ratio");
	for (i = 0; d->cases[i] && !(failed & 2); i++) {
		double ratio = 0;
		unsigned limit, tries;
		int bad = 0;

		if (!selected(&o, d->cases[i]))
			continue;
		/* a run that grew too much runs again, twice at most: the lowest of each size
		 * counts (runs of 0.05 s vary by half on a shared machine) */
		for (tries = 0; tries < 3 && (!tries || bad); tries++) {
			if (run_case(&o, d->cases[i], &ds_small, 0, tries ? &again : &small[i])) {
				failed |= 2;
				break;
			}
			if (tries && again.cpu_s < small[i].cpu_s)
				small[i] = again;
			limit = o.no_limit ? 0 : (unsigned)(2 * o.bound * small[i].cpu_s) + 2;
			if (run_case(&o, d->cases[i], &ds_big, limit, tries ? &again : &big[i])) {
				failed |= 2;
				break;
			}
			if (tries && again.cpu_s < big[i].cpu_s)
				big[i] = again;
			ratio = small[i].cpu_s > 0 ? big[i].cpu_s / small[i].cpu_s : 0;
			bad = big[i].killed || ratio > o.bound;
		}
		if (failed & 2)
			break;
		printf("memscope-%-53s %8" PRIu64 " %8" PRIu64 " %8.3f %7.3f%s %6.2f%s\n",
			d->cases[i], n, 4 * n, small[i].cpu_s, big[i].cpu_s,
			big[i].killed ? "+" : " ", ratio, bad ? "  FAIL" : "");
		fflush(stdout);
		failed |= bad;
	}
out:
	dumps_free(&ds_small, o.keep);
	dumps_free(&ds_big, o.keep);
	if (!o.keep)
		rmdir(o.work);
	return failed ? 1 : 0;
}
