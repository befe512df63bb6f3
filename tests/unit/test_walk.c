/* Unit tests of finding a batch's inputs (memscope/walk.h): trees built in a temporary folder
 * (msMemScope's, rank folders, renamed files, captures, databases, profiler folders, links,
 * folders that cannot be read), ranks and devices from paths, and the list's hash. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

/* The notices a walk gave, joined by newlines. */
struct notes {
	char text[16384];
	size_t len;
	int n;
};

static void note(void *ctx, uint32_t src, const char *msg)
{
	struct notes *n = ctx;

	ck_assert_uint_eq(src, 0);
	ck_assert_ptr_null(strchr(msg, '\n'));
	n->len += (size_t)snprintf(n->text + n->len, sizeof(n->text) - n->len, "%s\n", msg);
	ck_assert_uint_lt(n->len, sizeof(n->text));
	n->n++;
}

/* Remove what is at name in folder fd, whatever it is (a folder made unreadable too): by
 * descriptors, so that trees deeper than PATH_MAX go as well. */
static void rm_at(int fd, const char *name)
{
	struct stat sb;
	struct dirent *e;
	DIR *dp;
	int sub;

	if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW))
		return;
	if (!S_ISDIR(sb.st_mode)) {
		ck_assert_int_eq(unlinkat(fd, name, 0), 0);
		return;
	}
	fchmodat(fd, name, 0700, 0);
	sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(sub, 0);
	dp = fdopendir(sub);
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rm_at(sub, e->d_name);
	closedir(dp);
	ck_assert_int_eq(unlinkat(fd, name, AT_REMOVEDIR), 0);
}

/* A fresh folder of the test's own (the caller frees the name and removes it with rm_tree). */
static char *make_root(void)
{
	const char *tmp = getenv("TMPDIR");
	char *root;

	ck_assert_int_gt(asprintf(&root, "%s/test_walk_XXXXXX", tmp && *tmp ? tmp : "/tmp"), 0);
	ck_assert_ptr_nonnull(mkdtemp(root));
	return root;
}

static void rm_tree(char *root)
{
	rm_at(AT_FDCWD, root);
	free(root);
}

/* root/rel, a static buffer of one of 8 in turn (several in one expression). */
static const char *at(const char *root, const char *rel)
{
	static char bufs[8][4096];
	static int i;
	char *p = bufs[i++ % 8];

	snprintf(p, sizeof(bufs[0]), "%s/%s", root, rel);
	return p;
}

/* mkdir -p of root/rel's folder (rel's last component is a file's name unless it ends in /). */
static void make_dirs(const char *root, const char *rel)
{
	char path[4096];
	char *s;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
		*s = '/';
	}
}

/* A file root/rel holding len bytes at p (its folders made). */
static void put(const char *root, const char *rel, const void *p, size_t len)
{
	FILE *f;

	make_dirs(root, rel);
	f = fopen(at(root, rel), "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static void put_text(const char *root, const char *rel, const char *text)
{
	put(root, rel, text, strlen(text));
}

/* The header line and first row of testdata/leaks.csv: a real dump CSV (malloc'd). */
static char *dump_text(void)
{
	size_t len;
	char *text = slurp(testdata("leaks.csv"), &len);
	char *nl = strchr(text, '\n');

	ck_assert_ptr_nonnull(nl);
	nl = strchr(nl + 1, '\n');
	ck_assert_ptr_nonnull(nl);
	nl[1] = '\0';
	return text;
}

/* testdata/leaks.csv written by the capture writer (malloc'd, *len bytes). */
static char *capture_bytes(size_t *len)
{
	struct tread t;
	char *cap;

	ck_assert_int_eq(tread_file(&t, testdata("leaks.csv"), NULL), 0);
	cap = tread_capture(&t, len);
	tread_free(&t);
	ck_assert_ptr_nonnull(cap);
	return cap;
}

/* text compressed with gzip into root/rel. */
static void put_gzip(const char *root, const char *rel, const char *text)
{
	struct memscope_compress_writer *w;
	struct memscope_error err;
	FILE *f;

	make_dirs(root, rel);
	f = fopen(at(root, rel), "wb");
	ck_assert_ptr_nonnull(f);
	w = memscope_compress_writer_new(f, MEMSCOPE_COMPRESS_GZIP);
	ck_assert_ptr_nonnull(w);
	fputs(text, memscope_compress_writer_file(w));
	ck_assert_int_eq(memscope_compress_writer_finish(w, &err), 0);
	memscope_compress_writer_free(w);
	ck_assert_int_eq(fclose(f), 0);
}

/* An SQLite database at root/rel with one table made by sql. */
static void put_db(const char *root, const char *rel, const char *sql)
{
	sqlite3 *db;

	make_dirs(root, rel);
	ck_assert_int_eq(sqlite3_open(at(root, rel), &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}

static void put_link(const char *root, const char *rel, const char *target)
{
	make_dirs(root, rel);
	ck_assert_int_eq(symlink(target, at(root, rel)), 0);
}

/* Walk the one path root (notices into *n); 0 expected. */
static void walk1(struct memscope_walk *w, const char *root, struct notes *n)
{
	struct memscope_error err;
	const char *paths[] = { root };

	memset(n, 0, sizeof(*n));
	ck_assert_int_eq(memscope_walk(paths, 1, w, note, n, &err), 0);
}

/* What an input is expected to be: its path under root, rank, device, python_trace files. */
struct want {
	const char *rel;
	int64_t rank;
	const char *device;
	const char *traces[3];
};

static void check_inputs(
	const struct memscope_walk *w, const char *root, const struct want *want, size_t n_want)
{
	size_t i, k;

	for (i = 0; i < w->n && i < n_want; i++) {
		const struct memscope_batch_input *in = &w->inputs[i];

		ck_assert_str_eq(in->path, at(root, want[i].rel));
		ck_assert_msg(
			in->rank == want[i].rank, "%s: rank %lld", in->path, (long long)in->rank);
		ck_assert_str_eq(in->device, want[i].device);
		ck_assert_int_eq(in->err_code, 0);
		ck_assert_ptr_null(in->err_msg);
		for (k = 0; k < 3 && want[i].traces[k]; k++) {
			ck_assert_uint_gt(in->n_traces, k);
			ck_assert_str_eq(in->traces[k], at(root, want[i].traces[k]));
		}
		ck_assert_uint_eq(in->n_traces, k);
	}
	ck_assert_uint_eq(w->n, n_want);
}

/* msMemScope's tree of process pid under root/dir, on device dev: a dump file, and n_traces
 * python_trace files. */
static void msmemscope_tree(
	const char *root, const char *dir, int pid, const char *dev, const char *dump, int n_traces)
{
	char rel[512];
	int i;

	snprintf(rel, sizeof(rel),
		"%s/msmemscope_%d_20250101000000_ascend/device_%s/dump/"
		"memscope_dump_20250101000000.csv",
		dir, pid, dev);
	put_text(root, rel, dump);
	for (i = 0; i < n_traces; i++) {
		snprintf(rel, sizeof(rel),
			"%s/msmemscope_%d_20250101000000_ascend/device_%s/dump/"
			"python_trace_2025010100000%d.csv",
			dir, pid, dev, 9 - i); /* 9 and 8: name order is not creation order */
		put_text(root, rel, "FuncInfo,StartTime(ns),EndTime(ns),Thread Id,Process Id\n");
	}
}

START_TEST(tree)
{
	char *root = make_root(), *dump = dump_text(), *cap;
	char rel[512], rank[16], dev[16];
	struct want want[40];
	struct memscope_walk w;
	struct notes n;
	size_t cap_len, n_want = 0;
	int r;

	/* rank folders 0..11, in natural order; rank0 also has host memory (device_cpu) */
	for (r = 0; r < 12; r++) {
		snprintf(rank, sizeof(rank), "rank%d", r);
		snprintf(dev, sizeof(dev), "%d", r % 8);
		msmemscope_tree(root, rank, 100 + r, dev, dump, r == 3 ? 2 : r % 2);
	}
	msmemscope_tree(root, "rank0", 100, "cpu", dump, 0);
	/* files named otherwise: by their content */
	put_text(root, "loose/rank5.csv", dump);
	put_text(root, "loose/notes.csv", "a,b\n1,2\n");
	put_text(root, "loose/readme.txt", "hello\n");
	put_text(root, "loose/.hidden.csv", dump);
	put_text(root, "loose/trace_renamed.csv", "FuncInfo,StartTime(ns)\n");
	cap = capture_bytes(&cap_len);
	put(root, "loose/cap.mscap", cap, cap_len);
	put(root, "loose/cap_renamed.csv", cap, cap_len);
	put_gzip(root, "loose/dump.csv.gz", dump);
	put_db(root, "loose/data.db", "CREATE TABLE memscope_dump (ID INTEGER)");
	put_db(root, "loose/other.db", "CREATE TABLE results (x INTEGER)");
	/* a FIFO is not opened (it would block), a profiler's file alone is not read */
	ck_assert_int_eq(mkfifo(at(root, "loose/pipe.csv"), 0600), 0);
	put_text(root, "loose/operator_memory_0.csv", "Name,Size(KB),Allocation Time(us)\n");
	/* python_trace files alone */
	put_text(root, "orphan/python_trace_1.csv", "FuncInfo\n");
	put_text(root, "orphan/python_trace_2.csv", "FuncInfo\n");
	/* a torch_npu profiler folder: one input, not walked, its rank from profiler_info_7 */
	put_text(root, "prof/host_123_20250101_ascend_pt/profiler_info_7.json", "{}");
	put_text(root,
		"prof/host_123_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
		"Name,Size(KB)\n");
	/* a loop, and a second name of loose/rank5.csv */
	put_link(root, "loopdir/loop", "..");
	put_link(root, "zlinks/rank5_copy.csv", "../loose/rank5.csv");

	want[n_want++] = (struct want){ "loose/cap.mscap", -1, "", { "loose/trace_renamed.csv" } };
	want[n_want++] = (struct want){ "loose/cap_renamed.csv", -1, "", { NULL } };
	want[n_want++] = (struct want){ "loose/data.db", -1, "", { NULL } };
	want[n_want++] = (struct want){ "loose/dump.csv.gz", -1, "", { NULL } };
	want[n_want++] = (struct want){ "loose/rank5.csv", 5, "", { NULL } };
	want[n_want++] = (struct want){ "prof/host_123_20250101_ascend_pt", 7, "", { NULL } };
	for (r = 0; r < 12; r++) {
		static char rels[12][2][256], devs[12][8], traces[12][2][256];
		struct want *x = &want[n_want++];
		int k, t = r == 3 ? 2 : r % 2;

		snprintf(devs[r], sizeof(devs[r]), "%d", r % 8);
		snprintf(rels[r][0], sizeof(rels[r][0]),
			"rank%d/msmemscope_%d_20250101000000_ascend/device_%d/dump/"
			"memscope_dump_20250101000000.csv",
			r, 100 + r, r % 8);
		*x = (struct want){ rels[r][0], r, devs[r], { NULL } };
		for (k = 0; k < t; k++) {
			snprintf(traces[r][k], sizeof(traces[r][k]),
				"rank%d/msmemscope_%d_20250101000000_ascend/device_%d/dump/"
				"python_trace_2025010100000%d.csv",
				r, 100 + r, r % 8, 10 - t + k);
			x->traces[k] = traces[r][k];
		}
		if (r == 0) {
			snprintf(rels[r][1], sizeof(rels[r][1]),
				"rank0/msmemscope_100_20250101000000_ascend/device_cpu/dump/"
				"memscope_dump_20250101000000.csv");
			want[n_want++] = (struct want){ rels[r][1], 0, "cpu", { NULL } };
		}
	}
	walk1(&w, root, &n);
	check_inputs(&w, root, want, n_want);
	/* notes.csv, readme.txt, .hidden.csv, other.db, pipe.csv, operator_memory_0.csv, the link
	 * to a folder */
	ck_assert_uint_eq(w.n_skipped, 7);
	ck_assert_uint_eq(w.n_orphan_traces, 2);
	snprintf(rel, sizeof(rel), "%s: 2 python_trace files", at(root, "orphan"));
	ck_assert_msg(strstr(n.text, rel), "%s", n.text);
	snprintf(rel, sizeof(rel), "%s: a symbolic link to a folder, not followed",
		at(root, "loopdir/loop"));
	ck_assert_msg(strstr(n.text, rel), "%s", n.text);
	snprintf(rel, sizeof(rel), "%s: the same as %s, listed once",
		at(root, "zlinks/rank5_copy.csv"), at(root, "loose/rank5.csv"));
	ck_assert_msg(strstr(n.text, rel), "%s", n.text);
	snprintf(rel, sizeof(rel), "%s: 1 Ascend profiler file not read alone", at(root, "loose"));
	ck_assert_msg(strstr(n.text, rel), "%s", n.text);
	ck_assert_int_eq(n.n, 4);
	memscope_walk_free(&w);
	ck_assert_ptr_null(w.inputs);
	ck_assert_uint_eq(w.n, 0);
	free(cap);
	free(dump);
	rm_tree(root);
}
END_TEST

/* A PATH that is a file is an input whatever it is; one given twice, or a file given and found
 * under a folder given, is listed once; PATH + "/" + names, with no second "/". */
START_TEST(paths_given)
{
	char *root = make_root(), *dump = dump_text();
	char with_slash[4200], missing[4200];
	const char *paths[5];
	struct memscope_walk w;
	struct memscope_error err;
	struct notes n = { 0 };

	put_text(root, "a/python_trace_1.csv", "FuncInfo\n");
	put_text(root, "a/memscope_dump_1.csv", dump);
	put_text(root, "b/whatever.bin", "not an input by name or content\n");
	/* links to nothing: one named as an input is one (its read says what is wrong) */
	put_link(root, "a/memscope_dump_2.csv", "gone.csv");
	put_link(root, "a/x.csv", "gone.csv");
	snprintf(with_slash, sizeof(with_slash), "%s/a/", root);
	snprintf(missing, sizeof(missing), "%s/no/such", root);
	paths[0] = with_slash;
	paths[1] = at(root, "a/python_trace_1.csv");
	paths[2] = at(root, "b/whatever.bin");
	paths[3] = at(root, "a/memscope_dump_1.csv");
	paths[4] = missing;
	ck_assert_int_eq(memscope_walk(paths, 5, &w, note, &n, &err), 0);
	ck_assert_uint_eq(w.n, 5);
	ck_assert_uint_eq(w.n_skipped, 1); /* a/x.csv */
	/* found under "a/" as "a/memscope_dump_1.csv" (no "a//"), the very path given too: listed
	 * once, as the walk found it first */
	ck_assert_str_eq(w.inputs[0].path, at(root, "a/memscope_dump_1.csv"));
	ck_assert_uint_eq(w.inputs[0].n_traces, 1); /* the folder's walk kept, with its trace */
	ck_assert_str_eq(w.inputs[0].traces[0], at(root, "a/python_trace_1.csv"));
	ck_assert_str_eq(w.inputs[1].path, at(root, "a/memscope_dump_2.csv"));
	ck_assert_int_eq(w.inputs[1].err_code, 0);
	ck_assert_str_eq(w.inputs[2].path, at(root, "a/python_trace_1.csv"));
	ck_assert_uint_eq(w.inputs[2].n_traces, 0);
	ck_assert_str_eq(w.inputs[3].path, at(root, "b/whatever.bin"));
	ck_assert_int_eq(w.inputs[3].err_code, 0);
	ck_assert_str_eq(w.inputs[4].path, missing);
	ck_assert_int_eq(w.inputs[4].err_code, MEMSCOPE_E_IO);
	ck_assert_str_eq(w.inputs[4].err_msg, "cannot look up: No such file or directory");
	ck_assert_int_eq(w.inputs[4].rank, -1);
	ck_assert_int_eq(n.n, 1);
	ck_assert_ptr_nonnull(strstr(n.text, "listed once"));
	memscope_walk_free(&w);
	/* bad arguments: *out cleared all the same */
	paths[1] = NULL;
	ck_assert_int_eq(memscope_walk(paths, 2, &w, NULL, NULL, &err), MEMSCOPE_E_ARG);
	ck_assert_uint_eq(w.n, 0);
	ck_assert_int_eq(memscope_walk(NULL, 1, &w, NULL, NULL, &err), MEMSCOPE_E_ARG);
	ck_assert_int_eq(memscope_walk(NULL, 0, &w, NULL, NULL, &err), 0);
	ck_assert_uint_eq(w.n, 0);
	memscope_walk_free(&w);
	free(dump);
	rm_tree(root);
}
END_TEST

/* A PATH that is a profiler folder is one input; so is one under a folder whatever its rank. */
START_TEST(profiler_folders)
{
	char *root = make_root();
	const char *paths[2];
	struct memscope_walk w;
	struct memscope_error err;

	put_text(root, "x/PROF_000001_20250101/device_0/data/a.csv", "x\n");
	put_text(root, "rank_4/host_9_1_ascend_ms/profiler_info_2.json", "{}");
	put_text(root, "x/y_ascend_pt/profiler_info_12.json", "{}");
	put_text(root, "x/y_ascend_pt/profiler_info_3.json", "{}");
	/* an export's output folder copied out on its own; inside a profiler folder it is not one
	 */
	put_text(root, "x/z_rank7/ASCEND_PROFILER_OUTPUT/operator_memory.csv", "x\n");
	put_text(root, "x/y_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv", "x\n");
	paths[0] = at(root, "x");
	paths[1] = at(root, "rank_4/host_9_1_ascend_ms/");
	ck_assert_int_eq(memscope_walk(paths, 2, &w, NULL, NULL, &err), 0);
	ck_assert_uint_eq(w.n, 4);
	/* its path's rank wins over its profiler_info file's */
	ck_assert_str_eq(w.inputs[0].path, at(root, "rank_4/host_9_1_ascend_ms/"));
	ck_assert_int_eq(w.inputs[0].rank, 4);
	ck_assert_str_eq(w.inputs[1].path, at(root, "x/PROF_000001_20250101"));
	ck_assert_int_eq(w.inputs[1].rank, -1);
	ck_assert_str_eq(w.inputs[2].path, at(root, "x/y_ascend_pt"));
	ck_assert_int_eq(w.inputs[2].rank, 3); /* the lowest of two */
	ck_assert_str_eq(w.inputs[3].path, at(root, "x/z_rank7/ASCEND_PROFILER_OUTPUT"));
	ck_assert_int_eq(w.inputs[3].rank, 7);
	ck_assert_uint_eq(w.n_skipped, 0);
	memscope_walk_free(&w);
	rm_tree(root);
}
END_TEST

/* A folder that cannot be read is an input carrying the error, its siblings are walked. */
START_TEST(unreadable_folders)
{
	char *root = make_root(), *dump = dump_text();
	char name[201], path[8192];
	struct memscope_walk w;
	struct notes n;
	size_t len;
	int fd, depth;

	put_text(root, "ok/memscope_dump_1.csv", dump);
	/* a tree deeper than PATH_MAX (4096), made by descriptors: opendir of its deepest folder
	 * fails (ENAMETOOLONG) whoever runs the test */
	memset(name, 'd', 200);
	name[200] = '\0';
	make_dirs(root, "deep/");
	fd = open(at(root, "deep"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	len = strlen(at(root, "deep"));
	snprintf(path, sizeof(path), "%s", at(root, "deep"));
	for (depth = 0; len < 4096; depth++) {
		int sub;

		ck_assert_int_eq(mkdirat(fd, name, 0755), 0);
		sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(sub, 0);
		close(fd);
		fd = sub;
		len += 201;
		strcat(path, "/");
		strcat(path, name);
	}
	close(fd);
	/* a folder without read permission: root reads it anyway */
	put_text(root, "locked/memscope_dump_1.csv", dump);
	ck_assert_int_eq(chmod(at(root, "locked"), 0), 0);

	walk1(&w, root, &n);
	if (geteuid() != 0) {
		ck_assert_uint_eq(w.n, 3);
		ck_assert_str_eq(w.inputs[1].path, at(root, "locked"));
		ck_assert_int_eq(w.inputs[1].err_code, MEMSCOPE_E_IO);
		ck_assert_str_eq(w.inputs[1].err_msg, "cannot open folder: Permission denied");
	} else {
		ck_assert_uint_eq(w.n, 3);
		ck_assert_str_eq(w.inputs[1].path, at(root, "locked/memscope_dump_1.csv"));
		ck_assert_int_eq(w.inputs[1].err_code, 0);
	}
	ck_assert_str_eq(w.inputs[0].path, path);
	ck_assert_int_eq(w.inputs[0].err_code, MEMSCOPE_E_IO);
	ck_assert_str_eq(w.inputs[0].err_msg, "cannot open folder: File name too long");
	ck_assert_str_eq(w.inputs[2].path, at(root, "ok/memscope_dump_1.csv"));
	ck_assert_int_eq(w.inputs[2].err_code, 0);
	memscope_walk_free(&w);
	free(dump);
	rm_tree(root);
}
END_TEST

/* The hash: the same for the same list, another when anything of an input differs. */
START_TEST(list_hash)
{
	char *root = make_root(), *dump = dump_text();
	struct memscope_walk w, w2, none = { 0 };
	struct notes n;
	uint64_t h;
	char *keep, saved;

	put_text(root, "rank1/memscope_dump_1.csv", dump);
	put_text(root, "rank1/python_trace_1.csv", "FuncInfo\n");
	put_text(root, "rank2/memscope_dump_1.csv", dump);
	walk1(&w, root, &n);
	walk1(&w2, root, &n);
	ck_assert_uint_eq(w.n, 2);
	h = memscope_walk_hash(&w);
	ck_assert_uint_eq(memscope_walk_hash(&w2), h);
	ck_assert_uint_ne(memscope_walk_hash(&none), h);
	/* each field in turn */
	keep = w.inputs[0].traces[0];
	saved = keep[strlen(keep) - 5];
	keep[strlen(keep) - 5] = 'X';
	ck_assert_uint_ne(memscope_walk_hash(&w), h);
	keep[strlen(keep) - 5] = saved;
	w.inputs[0].n_traces = 0;
	ck_assert_uint_ne(memscope_walk_hash(&w), h);
	w.inputs[0].n_traces = 1;
	w.inputs[1].rank = 3;
	ck_assert_uint_ne(memscope_walk_hash(&w), h);
	w.inputs[1].rank = 2;
	strcpy(w.inputs[1].device, "0");
	ck_assert_uint_ne(memscope_walk_hash(&w), h);
	w.inputs[1].device[0] = '\0';
	w.inputs[1].err_code = MEMSCOPE_E_IO;
	ck_assert_uint_ne(memscope_walk_hash(&w), h);
	w.inputs[1].err_code = 0;
	w.n = 1;
	ck_assert_uint_ne(memscope_walk_hash(&w), h);
	w.n = 2;
	ck_assert_uint_eq(memscope_walk_hash(&w), h);
	/* one more input */
	memscope_walk_free(&w2);
	put_text(root, "rank3/memscope_dump_1.csv", dump);
	walk1(&w2, root, &n);
	ck_assert_uint_ne(memscope_walk_hash(&w2), h);
	memscope_walk_free(&w);
	memscope_walk_free(&w2);
	free(dump);
	rm_tree(root);
}
END_TEST

START_TEST(rank_of_path)
{
	static const struct {
		const char *path;
		int64_t rank;
	} cases[] = {
		{ "rank3", 3 }, { "rank_3", 3 }, { "rank-03", 3 }, { "RANK7/x.csv", 7 },
		{ "Rank_12", 12 }, { "test_rank_1/dump.csv", 1 },
		{ "rank3_memory_snapshot.pickle", 3 },
		{ "out/rank1/rank2/memscope_dump_1.csv", 2 }, /* the deepest */
		{ "rank1/rank_x/memscope_dump_1.csv", 1 },    /* rank_x holds none */
		{ "rank1/", 1 }, { "/a/b/2rank5c", 5 },	      /* a digit before is no letter */
		{ "rankrank4", -1 }, /* the second "rank" follows a letter */
		{ "rank_x_rank4", 4 }, { "ranking/", -1 }, { "frank3", -1 },
		{ "Frank_3/data.csv", -1 }, { "rank", -1 }, { "rank_", -1 }, { "rank_-3", -1 },
		{ "rank__3", -1 }, { "", -1 }, { "/", -1 },
		{ "rank999999999999999999", 999999999999999999 },
		{ "rank1000000000000000000", -1 }, /* 19 digits */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(memscope_rank_of_path(cases[i].path) == cases[i].rank,
			"%s: %lld, not %lld", cases[i].path,
			(long long)memscope_rank_of_path(cases[i].path), (long long)cases[i].rank);
}
END_TEST

START_TEST(device_of_path)
{
	static const struct {
		const char *path;
		const char *device;
	} cases[] = {
		{ "x/device_3/dump/memscope_dump_1.csv", "3" },
		{ "device_cpu/dump/f.csv", "cpu" },
		{ "device7", "7" },
		{ "a/device_1/b/device_2/c", "2" }, /* the deepest */
		{ "device_03/", "3" },
		{ "device_2147483647", "2147483647" },
		{ "device_2147483648", "" },
		{ "device_x", "" },
		{ "device_", "" },
		{ "device", "" },
		{ "device_3a", "" },
		{ "my_device_3", "" },
		{ "device_cpux", "" },
		{ "DEVICE_3", "" },
		{ "", "" },
	};
	char buf[MEMSCOPE_PATH_DEVICE_MAX], small[2];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = memscope_device_of_path(cases[i].path, buf, sizeof(buf));

		ck_assert_msg(strcmp(buf, cases[i].device) == 0, "%s: \"%s\"", cases[i].path, buf);
		ck_assert_uint_eq(len, strlen(cases[i].device));
	}
	/* a buffer too small: unknown, not cut */
	ck_assert_uint_eq(memscope_device_of_path("device_cpu", small, sizeof(small)), 0);
	ck_assert_str_eq(small, "");
	ck_assert_uint_eq(memscope_device_of_path("device_7", small, sizeof(small)), 1);
	ck_assert_str_eq(small, "7");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("walk");
	TCase *tc = tcase_create("walk");

	tcase_add_test(tc, tree);
	tcase_add_test(tc, paths_given);
	tcase_add_test(tc, profiler_folders);
	tcase_add_test(tc, unreadable_folders);
	tcase_add_test(tc, list_hash);
	tcase_add_test(tc, rank_of_path);
	tcase_add_test(tc, device_of_path);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
