/* memscope-record: run a program with the capture shim preloaded and turn what it recorded into
 * capture files, one per process image. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "memscope/record.h"

#define SHIM_NAME "libmemscope-record.so"

enum { OPT_STACK = 256, OPT_FOLLOW_FORK, OPT_NO_FOLLOW_FORK, OPT_FOLLOW_EXEC, OPT_MMAP };

static const struct cli_option options[] = {
	{ "output", 'o', 'o', "FILE",
		"the recording (default: PROG.PID.mscap); other processes' beside it", NULL },
	{ "stack", 0, OPT_STACK, "KIND",
		"call stacks: c[:DEPTH] (frame pointers), python (Python frames), both\n"
		"(c:32,python: the default) or none",
		NULL },
	{ "follow-fork", 0, OPT_FOLLOW_FORK, NULL,
		"record forked children, each into its own file (default)", NULL },
	{ "no-follow-fork", 0, OPT_NO_FOLLOW_FORK, NULL, "leave forked children unrecorded", NULL },
	{ "follow-exec", 0, OPT_FOLLOW_EXEC, NULL,
		"record the programs child processes exec too, each into its own file", NULL },
	{ "mmap", 0, OPT_MMAP, NULL, "record anonymous mmap and munmap too", NULL },
	{ "force", 'f', 'f', NULL, "overwrite existing output files", NULL },
	{ "quiet", 'q', 'q', NULL, "no summary on stderr", NULL },
	{ "help", 'h', 'h', NULL, "show this help and exit", NULL },
	{ "version", 'V', 'V', NULL, "show the version and exit", NULL },
	{ NULL, 0, 0, NULL, NULL, NULL },
};

static const struct cli_tool tool = {
	"memscope-record",
	"[-o FILE] [-f] [--stack c[:DEPTH][,python]|python|none]\n"
	"       [--follow-fork|--no-follow-fork]\n"
	"       [--follow-exec] [--mmap] [-q] [--] PROG [ARGS...]",
	"Run a program and record its allocations, frees and markers into a capture file.",
	options,
	1, /* options end at PROG */
	"Exit status: the program's (128+N when signal N ended it), 126 or 127 when it could not\n"
	"be run, 2 usage error, 4 when the program exited 0 but a recording could not be written.",
};

/* options; main sets every default, beside its flag */
struct record_opts {
	unsigned depth;		  /* --stack: frames per stack, 0 for none */
	int python;		  /* --stack ...,python: Python frames */
	int follow_fork;	  /* --follow-fork, --no-follow-fork */
	int follow_exec;	  /* --follow-exec */
	int mmap;		  /* --mmap */
	struct cli_common common; /* -o, -f, -q */
	char **argv;		  /* PROG ARGS... */
};

/* a process the launcher reaped */
struct reaped {
	pid_t pid;
	int status;
};

static volatile sig_atomic_t child_pid;	   /* the program while it runs, then 0 */
static volatile sig_atomic_t stop_waiting; /* a SIGTERM or SIGHUP after the program ended */

/* SIGTERM and SIGHUP: to the program while it runs; after it, stop waiting for the processes
 * it left running and write what was recorded. */
static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
	else
		stop_waiting = 1;
}

/* Whether name ends in what the other tools write, not a capture file. */
static int is_not_capture(const char *name)
{
	static const char *const others[] = { ".csv", ".json", ".txt", ".db", ".svg", ".html",
		".folded", ".gz", ".zst", NULL };
	size_t n = strlen(name), k, i;

	for (i = 0; others[i]; i++) {
		k = strlen(others[i]);
		if (n > k && !strcasecmp(name + n - k, others[i]))
			return 1;
	}
	return 0;
}

/* --stack's KIND[,KIND] into o: c, c:DEPTH, python, none. 0 or -1. */
static int parse_stack(struct record_opts *o, const char *arg)
{
	char kind[64];
	unsigned long long v;
	const char *p = arg;

	o->depth = 0;
	o->python = 0;
	if (!strcmp(arg, "none"))
		return 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (!n || n >= sizeof(kind))
			return -1;
		memcpy(kind, p, n);
		kind[n] = 0;
		if (!strcmp(kind, "python") && !o->python)
			o->python = 1;
		else if (!strcmp(kind, "c") && !o->depth)
			o->depth = 32;
		else if (!strncmp(kind, "c:", 2) && !o->depth && !cli_parse_uint(kind + 2, &v) &&
			 v >= 1 && v <= 256)
			o->depth = (unsigned)v;
		else
			return -1;
		p += n;
		if (*p && !*++p)
			return -1; /* a trailing comma */
	}
	return 0;
}

/* One option of parse_args (cli_options): c into ctx, a struct record_opts. */
static int option(void *ctx, int c)
{
	struct record_opts *o = ctx;

	switch (c) {
	case OPT_STACK:
		if (parse_stack(o, optarg)) {
			cli_msg(&tool,
				"--stack: expected c, c:DEPTH (1 to 256), python, both as "
				"c:DEPTH,python, or none, got '%s'",
				optarg);
			return CLI_EXIT_USAGE;
		}
		break;
	case OPT_FOLLOW_FORK:
		o->follow_fork = 1;
		break;
	case OPT_NO_FOLLOW_FORK:
		o->follow_fork = 0;
		break;
	case OPT_FOLLOW_EXEC:
		o->follow_exec = 1;
		break;
	case OPT_MMAP:
		o->mmap = 1;
		break;
	default:
		return CLI_OPT_SHARED;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	int rc;

	if ((rc = cli_options(&tool, argc, argv, &o->common, option, o)))
		return rc;
	if (o->common.output && !strcmp(o->common.output, "-")) {
		cli_msg(&tool,
			"-o -: a recording is written to files (forked processes get their own)");
		return CLI_EXIT_USAGE;
	}
	if (o->common.output && is_not_capture(o->common.output)) {
		cli_msg(&tool,
			"-o %s: a recording is a capture file (.mscap); memscope-convert turns it "
			"into "
			"CSV",
			o->common.output);
		return CLI_EXIT_USAGE;
	}
	if (optind >= argc) {
		cli_msg(&tool, "no program given: memscope-record [options] -- PROG [ARGS...]");
		return CLI_EXIT_USAGE;
	}
	o->argv = argv + optind;
	return 0;
}

/* The directory of this executable, into dir (PATH_MAX). */
static int exe_dir(char *dir)
{
	ssize_t n = readlink("/proc/self/exe", dir, PATH_MAX - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

/* A file or folder next to this executable (the build tree), where it is installed relative to
 * it (rel: "lib/memscope", a moved installation), or where it was installed. */
static int find_beside(const char *name, const char *rel, const char *installed, char *out)
{
	char dir[PATH_MAX];

	if (!exe_dir(dir) && (size_t)snprintf(out, PATH_MAX, "%s/%s", dir, name) < PATH_MAX &&
		!access(out, R_OK))
		return 0;
	if (!exe_dir(dir) &&
		(size_t)snprintf(out, PATH_MAX, "%s/../%s/%s", dir, rel, name) < PATH_MAX &&
		!access(out, R_OK))
		return 0;
	if (strlen(installed) < PATH_MAX && !access(installed, R_OK)) {
		strcpy(out, installed);
		return 0;
	}
	return -1;
}

/* NAME=value prepended to the variable's list (sep-separated), or set. */
static int prepend_env(const char *name, const char *value, char sep)
{
	const char *old = getenv(name);
	char *v = NULL;
	int rc;

	if (!old || !*old)
		return setenv(name, value, 1);
	if (asprintf(&v, "%s%c%s", value, sep, old) < 0)
		return -1;
	rc = setenv(name, v, 1);
	free(v);
	return rc;
}

/* Whether the folder of output (the current one for a bare name) takes new files; 0, or the
 * exit status after one line: checked before the program runs, not after. */
/* The folder of path into dir (PATH_MAX): "." for a bare name. */
static void folder_of(const char *path, char *dir)
{
	char *slash;

	snprintf(dir, PATH_MAX, "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
}

static int check_folder(const char *output)
{
	char dir[PATH_MAX];

	folder_of(output, dir);
	if (access(dir, W_OK | X_OK) == 0)
		return 0;
	cli_msg(&tool, "%s: cannot create: %s", output, strerror(errno));
	return CLI_EXIT_USAGE;
}

/* The spool folder: beside the output (so a full disk there is met while recording), else in
 * TMPDIR. Its absolute path into dir (PATH_MAX). */
static int make_spool(const char *output, char *dir)
{
	const char *tmp = getenv("TMPDIR");
	char where[PATH_MAX];
	struct stat sb;

	folder_of(output, where);
	if (stat(output, &sb) == 0 && !S_ISREG(sb.st_mode))
		snprintf(where, sizeof(where), "%s", tmp && *tmp ? tmp : "/tmp");
	if ((size_t)snprintf(dir, PATH_MAX, "%s/.memscope-record-XXXXXX", where) < PATH_MAX &&
		mkdtemp(dir))
		goto ok;
	if ((size_t)snprintf(dir, PATH_MAX, "%s/.memscope-record-XXXXXX",
		    tmp && *tmp ? tmp : "/tmp") >= PATH_MAX ||
		!mkdtemp(dir))
		return -1;
ok:
	if (dir[0] != '/') {
		char abs[PATH_MAX];
		if (!realpath(dir, abs))
			return -1;
		strcpy(dir, abs);
	}
	return 0;
}

/* The output of a process image other than the main program's first: OUT with .PID[-GEN]
 * before a final .mscap. NULL on OOM. */
static char *image_output(const char *out, uint64_t pid, uint64_t gen)
{
	size_t n = strlen(out);
	char tag[48], *s = NULL;

	if (gen)
		snprintf(tag, sizeof(tag), ".%llu-%llu", (unsigned long long)pid,
			(unsigned long long)gen);
	else
		snprintf(tag, sizeof(tag), ".%llu", (unsigned long long)pid);
	if (n > 6 && !strcmp(out + n - 6, ".mscap")) {
		if (asprintf(&s, "%.*s%s.mscap", (int)(n - 6), out, tag) < 0)
			s = NULL;
	} else if (asprintf(&s, "%s%s", out, tag) < 0) {
		s = NULL;
	}
	return s;
}

/* one spool file: p<pid>-<gen> */
struct image {
	uint64_t pid, gen;
	char name[64];
	int exec; /* the image exec'd another program: a later image or a note of the pid */
	int drop; /* a wrapper's: not written (choose_images) */
	int note; /* the note of an exec'd program left unrecorded, not a spool */
	struct memscope_record_image facts;
};

static int image_cmp(const void *a, const void *b)
{
	const struct image *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* The spool's images and the notes of programs left unrecorded (note set), in (pid, gen) order,
 * a note after its pid's images. */
static int list_spool(const char *dir, struct image **out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t cap = 0, i;

	*out = NULL;
	*n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		unsigned long long pid, gen;
		char tail, path[PATH_MAX];
		struct image *im;
		int note = sscanf(e->d_name, "s%llu-%llu%c", &pid, &gen, &tail) == 2;
		if (!note && sscanf(e->d_name, "p%llu-%llu%c", &pid, &gen, &tail) != 2)
			continue;
		if (*n == cap) {
			struct image *m = realloc(*out, (cap = cap ? 2 * cap : 8) * sizeof(**out));
			if (!m) {
				closedir(d);
				return -1;
			}
			*out = m;
		}
		im = &(*out)[(*n)++];
		memset(im, 0, sizeof(*im));
		im->pid = pid;
		im->gen = note ? UINT64_MAX : gen;
		im->note = note;
		snprintf(im->name, sizeof(im->name), "%.63s", e->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, im->name);
		if (note) {
			char text[PATH_MAX + 48] = "";
			unsigned long long ppid = 0, start = 0;
			int fd = open(path, O_RDONLY | O_CLOEXEC), at = 0;
			ssize_t r = fd >= 0 ? read(fd, text, sizeof(text) - 1) : 0;
			if (fd >= 0)
				close(fd);
			text[r > 0 ? r : 0] = 0;
			sscanf(text, "%llu %llu %n", &ppid, &start, &at);
			im->facts.pid = pid;
			im->facts.ppid = ppid;
			im->facts.start_ns = start;
			snprintf(im->facts.program, sizeof(im->facts.program), "%s", text + at);
		} else {
			struct memscope_error err;
			memscope_record_probe(path, &im->facts, &err); /* a bad one fails later */
		}
	}
	closedir(d);
	qsort(*out, *n, sizeof(**out), image_cmp);
	for (i = 0; i + 1 < *n; i++)
		(*out)[i].exec = (*out)[i + 1].pid == (*out)[i].pid;
	return 0;
}

/* One line for the exec'd programs left unrecorded (but those of wrappers). */
static void report_notes(const struct image *im, size_t n)
{
	size_t i, count = 0;
	char shown[512] = "";

	for (i = 0; i < n; i++) {
		if (!im[i].note || im[i].drop)
			continue;
		if (count++ < 4 && strlen(shown) + strlen(im[i].facts.program) + 24 < sizeof(shown))
			snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown),
				"%s%s (pid %llu)", *shown ? ", " : "", im[i].facts.program,
				(unsigned long long)im[i].pid);
	}
	if (count)
		cli_msg(&tool,
			"%zu program%s exec'd by child processes not recorded (--follow-exec "
			"records them): %s%s",
			count, count == 1 ? "" : "s", shown, count > 4 ? ", ..." : "");
}

/*
 * The images worth a file. A wrapper script that execs the program (pyenv's python3, a launcher
 * script ending in exec) makes the main pid's last image the program the user meant: that one
 * is the recording, and what started before it (the wrappers' images and every process they
 * started: all descendants of the main pid, so the wrapper's) is left out, said in one line.
 * Returns the main pid's last image, or NULL when it was not recorded.
 */
static struct image *choose_images(
	struct image *im, size_t n, pid_t main_pid, int follow_exec, int quiet)
{
	struct image *last = NULL;
	size_t i, dropped = 0;
	char shown[256] = "";

	for (i = 0; i < n; i++)
		if ((pid_t)im[i].pid == main_pid && !im[i].note && (!last || im[i].gen > last->gen))
			last = &im[i];
	if (!last || !last->gen)
		return last;
	for (i = 0; i < n; i++) {
		struct image *x = &im[i];
		/* with --follow-exec what the wrapper ran was asked for: only its images go */
		x->drop = x != last && x->facts.start_ns < last->facts.start_ns &&
			  (!follow_exec || (pid_t)x->pid == main_pid);
		if (x->drop && !x->note && dropped++ < 4 &&
			strlen(shown) + strlen(x->facts.program) + 4 < sizeof(shown))
			snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "%s%s",
				*shown ? ", " : "", x->facts.program);
	}
	if (dropped && !quiet)
		cli_msg(&tool,
			"%s was exec'd by a wrapper: %zu process image%s before it not written "
			"(%s%s)",
			last->facts.program, dropped, dropped == 1 ? "" : "s", shown,
			dropped > 4 ? ", ..." : "");
	return last;
}

/* Remove the spool folder and what is in it. */
static void remove_spool(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
				(size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) <
					sizeof(path))
				unlink(path);
		closedir(d);
	}
	rmdir(dir);
}

/* the end of the line on stacks cut short: what would make them whole */
#ifdef MEMSCOPE_HAVE_LIBUNWIND
#define CUT_HINT "neither frame pointers nor unwind tables (.eh_frame) reached them"
#else
#define CUT_HINT                                                                                   \
	"this memscope-record has no libunwind (stacks follow frame pointers only); built with "   \
	"-fno-omit-frame-pointer they are whole"
#endif

/* Transcode one image into out (opened); prints its lines, *incomplete set when the recording
 * stopped early. 0 or the exit status. */
static int transcode(const struct record_opts *o, const char *spool_dir, const struct image *im,
	const char *name, struct cli_out *out, const struct reaped *r, size_t n_r, int clock,
	int *incomplete)
{
	struct memscope_record_info info = { 0 };
	struct memscope_record_stats st;
	struct memscope_error err;
	char path[PATH_MAX], size[MEMSCOPE_BYTES_TEXT_MAX];
	size_t i;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", spool_dir, im->name);
	memscope_record_now(clock, &info.end_tick, &info.end_mono_ns);
	info.exec = im->exec;
	for (i = 0; i < n_r && !im->exec; i++)
		if ((uint64_t)r[i].pid == im->pid) {
			/* the status of the pid's last image only */
			info.status_known = 1;
			info.exit_code = WIFEXITED(r[i].status) ? WEXITSTATUS(r[i].status) : 0;
			info.signal = WIFSIGNALED(r[i].status) ? WTERMSIG(r[i].status) : 0;
		}
	rc = memscope_record_transcode(path, out->f, &info, &st, &err);
	if (rc == MEMSCOPE_E_IO && !err.file[0] && (fflush(out->f) || ferror(out->f))) {
		/* the output's error: flushing again tells why */
		cli_msg(&tool, "%s: write failed: %s", name, strerror(errno));
		return CLI_EXIT_IO;
	}
	if (rc && st.unstarted) { /* the shim said why, if it could */
		struct statvfs v;
		cli_msg(&tool,
			"%s: not written: nothing was recorded (the spool could not be written%s)",
			name, !statvfs(spool_dir, &v) && !v.f_bavail ? ": its disk is full" : "");
		return CLI_EXIT_IO;
	}
	if (rc) {
		cli_error_io(&tool, &err, path, name);
		return cli_exit_status(rc);
	}
	if ((rc = cli_out_commit(&tool, out)))
		return rc;
	if (st.stopped) { /* the shim said why when it happened; the file is kept, marked */
		char lost[64] = "not known";
		if (st.lost != UINT64_MAX)
			snprintf(lost, sizeof(lost), "%llu", (unsigned long long)st.lost);
		cli_msg(&tool,
			"%s: recording incomplete: stopped by a write error (%s) after %llu "
			"event%s, later calls not recorded: %s; kept, marked incomplete (read it "
			"with --lenient)",
			name, strerror(st.stopped), (unsigned long long)st.n_events,
			st.n_events == 1 ? "" : "s", lost);
		*incomplete = 1;
	}
	if (!o->common.quiet)
		cli_msg(&tool,
			"%s: %llu events, %llu thread%s, pid %llu (%s), %s, %s; %llu blocks "
			"(%llu bytes) alive at the end",
			name, (unsigned long long)st.n_events, (unsigned long long)st.n_threads,
			st.n_threads == 1 ? "" : "s", (unsigned long long)st.pid, st.program,
			st.exit_text, memscope_bytes_text(size, sizeof(size), st.bytes),
			(unsigned long long)st.live_blocks, (unsigned long long)st.live_bytes);
	if (st.n_unmatched)
		cli_msg(&tool,
			"%s: %llu free%s of blocks the recording did not see allocated (before it "
			"started, or in the parent of a forked process)",
			name, (unsigned long long)st.n_unmatched, st.n_unmatched == 1 ? "" : "s");
	if (st.n_reused)
		cli_msg(&tool,
			"%s: %llu allocation%s at an address still in use (its free was not "
			"recorded: made inside the shim, e.g. by a signal handler)",
			name, (unsigned long long)st.n_reused, st.n_reused == 1 ? "" : "s");
	if (st.n_partial_unmaps)
		cli_msg(&tool,
			"%s: %llu munmaps not at the start of a recorded mapping (part of one, or "
			"a mapping not recorded) left out",
			name, (unsigned long long)st.n_partial_unmaps);
	if (st.n_bad_segments)
		cli_msg(&tool, "%s: %llu spool segments ended at a malformed record", name,
			(unsigned long long)st.n_bad_segments);
	if (st.n_stacks_cut && !o->common.quiet) /* a summary line: the capture says it too */
		cli_msg(&tool,
			"%s: %llu of %llu stacks cut short (no frame pointers in %s): their "
			"outer callers are missing; %s",
			name, (unsigned long long)st.n_stacks_cut, (unsigned long long)st.n_stacks,
			st.cut_where, CUT_HINT);
	if (st.n_modules_unread)
		cli_msg(&tool, "%s: %llu of %llu modules not symbolized from (%s)", name,
			(unsigned long long)st.n_modules_unread, (unsigned long long)st.n_modules,
			st.unread);
	return 0;
}

/* Run the program (its pid into *program) and wait for it and every process it leaves running
 * (a SIGTERM or SIGHUP after it ended stops that); its wait status into *status, every reaped
 * process into *r. 0, or the exit status of a failure to start it (printed). */
static int run(struct record_opts *o, char **def_out, struct reaped **r, size_t *n_r, int *status,
	pid_t *program)
{
	int go[2], fail[2], e = 0;
	pid_t pid, p;
	size_t cap = 0;
	char c = 1;
	ssize_t got;
	struct sigaction ign = { 0 }, fwd = { 0 }, old_int, old_quit;

	if (pipe2(go, O_CLOEXEC) || pipe2(fail, O_CLOEXEC)) {
		cli_msg(&tool, "pipe: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = fork();
	if (pid < 0) {
		cli_msg(&tool, "fork: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	if (pid == 0) {
		char num[24];
		close(go[1]);
		close(fail[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		snprintf(num, sizeof(num), "%d", (int)getpid());
		setenv("MEMSCOPE_RECORD_MAIN", num, 1);
		execvp(o->argv[0], o->argv);
		e = errno;
		if (write(fail[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	child_pid = pid;
	*program = pid;
	close(go[0]);
	close(fail[1]);
	if (!o->common.output) { /* PROG.PID.mscap: checked before the program runs */
		const char *base = strrchr(o->argv[0], '/');
		int rc =
			asprintf(def_out, "%s.%d.mscap", base ? base + 1 : o->argv[0], (int)pid) < 0
				? CLI_EXIT_IO
				: cli_out_check(&tool, *def_out, o->common.force, NULL, 0);
		if (rc) {
			if (rc == CLI_EXIT_IO)
				cli_msg(&tool, "out of memory");
			close(go[1]); /* the child ends without running the program */
			close(fail[0]);
			waitpid(pid, NULL, 0);
			return rc;
		}
		o->common.output = *def_out;
	}
	/* the terminal's ^C and ^\ reach the program; memscope-record stays to write the
	 * recording. SIGTERM and SIGHUP are passed on. */
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	fwd.sa_handler = forward;
	sigaction(SIGTERM, &fwd, NULL);
	sigaction(SIGHUP, &fwd, NULL);
	if (write(go[1], &c, 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	got = read(fail[0], &e, sizeof(e));
	close(fail[0]);
	*r = NULL;
	*n_r = 0;
	*status = 0;
	for (;;) {
		int s;
		p = waitpid(-1, &s, 0);
		if (p < 0) {
			if (errno == EINTR && !stop_waiting)
				continue;
			break;
		}
		if (p == pid) {
			*status = s;
			child_pid = 0;
		}
		if (*n_r == cap) {
			struct reaped *m = realloc(*r, (cap = cap ? 2 * cap : 8) * sizeof(**r));
			if (!m)
				continue;
			*r = m;
		}
		(*r)[*n_r].pid = p;
		(*r)[(*n_r)++].status = s;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (got == (ssize_t)sizeof(e)) {
		cli_msg(&tool, "cannot run '%s': %s", o->argv[0], strerror(e));
		return e == ENOENT ? 127 : 126;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct record_opts o = {
		.depth = 32,	       /* --stack c:32,python */
		.python = 1,	       /* with python */
		.follow_fork = 1,      /* --follow-fork */
		.follow_exec = 0,      /* --follow-exec: off */
		.mmap = 0,	       /* --mmap: off */
		.common.output = NULL, /* -o: PROG.PID.mscap */
		.common.force = 0,     /* -f: never over an existing file */
		.common.quiet = 0,     /* -q: the summary on stderr */
	};
	char shim[PATH_MAX], py[PATH_MAX], spool[PATH_MAX] = "", opts[128], *def_out = NULL;
	struct image *images = NULL, *last;
	struct reaped *reaped = NULL;
	size_t n_images = 0, n_reaped = 0, i;
	int status, wstatus = 0, clock, failed = 0, incomplete = 0, rc;
	pid_t main_pid = 0;

	status = parse_args(argc, argv, &o);
	if (status)
		return status < 0 ? CLI_EXIT_OK : status;
	if (find_beside(SHIM_NAME, MEMSCOPE_LIBDIR_REL "/memscope",
		    MEMSCOPE_LIBDIR "/memscope/" SHIM_NAME, shim)) {
		cli_msg(&tool, "cannot find %s beside %s or in %s/memscope", SHIM_NAME, tool.name,
			MEMSCOPE_LIBDIR);
		return CLI_EXIT_IO;
	}
	if ((o.common.output &&
		    (status = cli_out_check(&tool, o.common.output, o.common.force, NULL, 0))) ||
		(status = check_folder(o.common.output ? o.common.output : "x")))
		return status;
	if (make_spool(o.common.output ? o.common.output : "./x", spool)) {
		cli_msg(&tool, "cannot make a spool folder beside %s or in TMPDIR: %s",
			o.common.output ? o.common.output : ".", strerror(errno));
		return CLI_EXIT_IO;
	}
	clock = memscope_record_clock();
	snprintf(opts, sizeof(opts), "depth=%u,fork=%d,exec=%d,mmap=%d,clock=%s,python=%d", o.depth,
		o.follow_fork, o.follow_exec, o.mmap, clock ? "tsc" : "mono", o.python);
	if (prepend_env("LD_PRELOAD", shim, ':') || setenv("MEMSCOPE_RECORD_SPOOL", spool, 1) ||
		setenv("MEMSCOPE_RECORD_OPTS", opts, 1) ||
		(!find_beside("python", MEMSCOPE_DATADIR_REL "/memscope",
			 MEMSCOPE_DATADIR "/memscope/python", py) &&
			prepend_env("PYTHONPATH", py, ':'))) {
		cli_msg(&tool, "setenv: %s", strerror(errno));
		status = CLI_EXIT_IO;
		goto out;
	}
	status = run(&o, &def_out, &reaped, &n_reaped, &wstatus, &main_pid);
	if (status)
		goto out;
	if (list_spool(spool, &images, &n_images)) {
		cli_msg(&tool, "%s: %s", spool, strerror(errno));
		failed = 1;
	}
	last = choose_images(images, n_images, main_pid, o.follow_exec, o.common.quiet);
	if (!o.common.quiet)
		report_notes(images, n_images);
	for (i = 0; i < n_images; i++) {
		const struct image *im = &images[i];
		int is_main = im == last;
		struct cli_out out = { 0 };
		char *name = NULL;
		/* a forked child's part before it exec'd a program left unrecorded: that program's
		 */
		if (im->drop || im->note || (!o.follow_exec && im->exec && im->facts.forked))
			continue;
		name = is_main ? strdup(o.common.output)
			       : image_output(o.common.output, im->pid, im->gen);
		if (!name) {
			failed = 1;
			break;
		}
		rc = cli_out_open(&tool, &out, name, o.common.force, NULL, 0);
		if (!rc)
			rc = transcode(
				&o, spool, im, name, &out, reaped, n_reaped, clock, &incomplete);
		if (rc) {
			cli_out_abort(&out);
			failed = 1;
		}
		free(name);
	}
	if (!last && !failed)
		cli_msg(&tool, "nothing was recorded (is %s a static program, or setuid?)",
			o.argv[0]);
	status = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
	if ((failed || incomplete) && !status)
		status = CLI_EXIT_IO;
out:
	if (spool[0])
		remove_spool(spool);
	free(images);
	free(reaped);
	free(def_out);
	return status;
}
