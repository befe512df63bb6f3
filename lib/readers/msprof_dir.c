/*
 * A profiler output folder as one input (formats/msprof.md "Folders"): its memory files found by
 * name (newest export, slices in order), each read by the reader its content says, as one
 * output's events.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/clocks.h"
#include "msprof.h"

/* The files of an output, in the order they are read: the timeline first (its ops and steps go
 * before the memory rows), then the tables. */
enum kind { K_TIMELINE, K_OPMEM, K_RECORD, K_NPUMEM, K_MODULE, K_STATIC, N_KINDS };

/* Names by prefix, the longer of two that share a start first (npu_module_mem, npu_mem). */
static const struct {
	const char *prefix;
	enum kind kind;
	int json;
} names[] = {
	{ "trace_view", K_TIMELINE, 1 },
	{ "msprof", K_TIMELINE, 1 },
	{ "ge_operator_memory", K_OPMEM, 0 },
	{ "operator_memory", K_OPMEM, 0 },
	{ "ge_memory_record", K_RECORD, 0 },
	{ "memory_record", K_RECORD, 0 },
	{ "npu_module_mem", K_MODULE, 0 },
	{ "npu_mem", K_NPUMEM, 0 },
	{ "static_op_mem", K_STATIC, 0 },
};

static const char *const kind_names[N_KINDS] = {
	"timeline",
	"operator_memory",
	"memory_record",
	"npu_mem",
	"npu_module_mem",
	"static_op_mem",
};

struct pfile {
	char *path;
	enum kind kind;
	int trace_view; /* torch_npu's trace_view.json (preferred to an msprof_*.json) */
	char stamp[24]; /* the export's <ts>, "" when the name has none */
	long slice;	/* -1 when the name has none */
	uint64_t size;
};

struct prof_dir {
	const struct source_files *open; /* how its files are opened (struct reader's open_path) */
	struct pfile *files;
	size_t n, cap;
	char *out;  /* the folder the files are in */
	char *real; /* out resolved (or as given, when it cannot be): its names say what it is */
	uint64_t total; /* bytes of every file */
};

/* "_" and 1 to 20 digits at *s (moved past them) into d (NUL-terminated), else 0. */
static int digits_part(const char **s, char *d, size_t cap)
{
	const char *p = *s + 1;
	size_t n = 0;

	if (**s != '_')
		return 0;
	while (p[n] >= '0' && p[n] <= '9' && n < 20)
		n++;
	if (!n || n >= cap || (p[n] >= '0' && p[n] <= '9'))
		return 0;
	memcpy(d, p, n);
	d[n] = '\0';
	*s = p + n;
	return 1;
}

/*
 * Whether name is a memory file of an output: <prefix>[_slice_<k>][_<ts>].csv (.gz, .zst too),
 * trace_view.json, msprof[_slice_<k>]_<ts>.json. Fills f's kind, stamp and slice.
 */
static int classify(const char *name, struct pfile *f)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		size_t n = strlen(names[i].prefix);
		const char *s = name + n;
		char k[24];

		if (strncmp(name, names[i].prefix, n))
			continue;
		f->kind = names[i].kind;
		f->slice = -1;
		f->stamp[0] = '\0';
		f->trace_view = i == 0;
		if (strncmp(s, "_slice", 6) == 0) {
			s += 6;
			if (!digits_part(&s, k, sizeof(k)))
				return 0;
			f->slice = strtol(k, NULL, 10);
		}
		if (*s == '_' && !digits_part(&s, f->stamp, sizeof(f->stamp)))
			return 0;
		if (names[i].json)
			return strcmp(s, ".json") == 0 &&
			       (f->trace_view ? !f->stamp[0] : !!f->stamp[0]);
		return strcmp(s, ".csv") == 0 || strcmp(s, ".csv.gz") == 0 ||
		       strcmp(s, ".csv.zst") == 0;
	}
	return 0;
}

int memscope_profiler_file_name(const char *name)
{
	struct pfile f;

	return classify(name, &f);
}

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);

	while (a > 1 && dir[a - 1] == '/')
		a--;
	if (p) {
		memcpy(p, dir, a);
		p[a] = '/';
		memcpy(p + a + 1, name, b + 1);
	}
	return p;
}

static int is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static void dir_clear(struct prof_dir *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->files[i].path);
	d->n = 0;
}

/* What a file that is not a regular one is, for messages ("a FIFO"). */
static const char *file_type(mode_t m)
{
	return S_ISDIR(m)    ? "a folder"
	       : S_ISFIFO(m) ? "a FIFO (named pipe)"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "a special file";
}

/*
 * Whether the memory file at path (named so by the folder) is a regular file that can be read as
 * one, a link to one too: 0 and *sb its status, else MEMSCOPE_E_INVALID naming it and saying what
 * it is instead (a FIFO, a folder, a device, a link to nothing), or MEMSCOPE_E_IO. No profiler
 * writes such a file: read, a pipe would block the read or end it early, a device never end, a
 * folder read as nothing. A file given alone as an input is read as it comes (a FIFO too).
 */
static int regular(const char *path, struct stat *sb, struct memscope_error *err)
{
	struct stat lsb;
	int e;

	if (stat(path, sb) == 0)
		return S_ISREG(sb->st_mode)
			       ? 0
			       : memscope_error_set(err, MEMSCOPE_E_INVALID, path, 0,
					 "%s%s, not a regular file: not read%s",
					 lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode)
						 ? "a symbolic link to "
						 : "is ",
					 file_type(sb->st_mode),
					 S_ISFIFO(sb->st_mode) ? " (given alone as an input, a "
								 "FIFO is read as it comes)"
							       : "");
	e = errno;
	if (lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
		return memscope_error_set(err, MEMSCOPE_E_INVALID, path, 0,
			"a symbolic link to a file that cannot be reached (%s): not read",
			strerror(e));
	return memscope_error_set(err, MEMSCOPE_E_IO, path, 0, "cannot read: %s", strerror(e));
}

/* The memory files of folder dir into d->files. 0 (perhaps none found) or the error. */
static int scan(struct prof_dir *d, const char *dir, const char *name, struct memscope_error *err)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!dp)
		return memscope_error_set(
			err, MEMSCOPE_E_IO, name, 0, "cannot open %s: %s", dir, strerror(errno));
	while (!rc && (e = readdir(dp))) {
		struct pfile f;
		struct stat sb;

		memset(&f, 0, sizeof(f));
		if (!classify(e->d_name, &f))
			continue;
		if (!(f.path = join(dir, e->d_name)) ||
			ms__grow_array(&d->files, &d->cap, d->n + 1, sizeof(*d->files))) {
			free(f.path);
			rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, name, 0, "out of memory");
			break;
		}
		if ((rc = regular(f.path, &sb, err))) {
			free(f.path);
			break;
		}
		f.size = (uint64_t)sb.st_size;
		d->files[d->n++] = f;
	}
	closedir(dp);
	return rc;
}

/* Stamps compare as numbers: the longer is larger, else by text. */
static int stamp_cmp(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

/* Read order: by kind; trace_view.json before msprof_*.json; newest export first; slices up. */
static int cmp_file(const void *pa, const void *pb)
{
	const struct pfile *a = pa, *b = pb;
	int c;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->trace_view != b->trace_view)
		return a->trace_view ? -1 : 1;
	if ((c = stamp_cmp(a->stamp, b->stamp)))
		return -c;
	if (a->slice != b->slice)
		return a->slice < b->slice ? -1 : 1;
	return strcmp(a->path, b->path);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Whether a and b are the same file of one export: one of them compressed, or both. */
static int same_file(const struct pfile *a, const struct pfile *b)
{
	return a->kind == b->kind && a->trace_view == b->trace_view && a->slice == b->slice &&
	       !strcmp(a->stamp, b->stamp);
}

/*
 * Keep, of each kind, the files of the newest export (msprof keeps only the largest <ts> of a
 * prefix) and of one timeline; of a file there also compressed, the plain one; no empty file (the
 * profiler leaves 0-byte placeholders). Says what was left out.
 */
static void choose(struct memscope_source *src, struct prof_dir *d)
{
	size_t i, j, kept = 0, n_empty = 0, n_twins = 0;
	char empty[128] = "", twin[128] = "";

	qsort(d->files, d->n, sizeof(*d->files), cmp_file);
	for (i = 0; i < d->n; i = j) {
		size_t dropped = 0, first = kept;

		for (j = i; j < d->n && d->files[j].kind == d->files[i].kind; j++) {
			struct pfile f = d->files[j];

			if (!f.size) {
				if (!n_empty++)
					snprintf(empty, sizeof(empty), "%s", base_name(f.path));
			} else if (kept > first && same_file(&f, &d->files[kept - 1])) {
				if (!n_twins++)
					snprintf(twin, sizeof(twin), "%s", base_name(f.path));
			} else if (f.trace_view == d->files[i].trace_view &&
				   !strcmp(f.stamp, d->files[i].stamp)) {
				d->files[kept++] = f; /* kept <= j: over one already dealt with */
				continue;
			} else {
				dropped++;
			}
			free(f.path);
		}
		if (dropped && kept > first)
			ms__source_notice(src,
				"%zu %s file%s of other exports left out: reading %s%s (the "
				"newest, "
				"as msprof does)",
				dropped, kind_names[d->files[first].kind], dropped == 1 ? "" : "s",
				base_name(d->files[first].path),
				kept - first > 1 ? " and its slices" : "");
	}
	if (n_empty)
		ms__source_notice(src, "%zu empty file%s left out (%s%s)", n_empty,
			n_empty == 1 ? "" : "s", empty, n_empty > 1 ? ", ..." : "");
	if (n_twins)
		ms__source_notice(src,
			"%zu compressed cop%s of files also there uncompressed left out (%s%s)",
			n_twins, n_twins == 1 ? "y" : "ies", twin, n_twins > 1 ? ", ..." : "");
	d->n = kept;
	for (i = 0; i < d->n; i++)
		d->total += d->files[i].size;
}

/* Subfolders of dir whose names say they are profiler outputs (for the message of a folder that
 * holds several); their count, the first of their names in order in first (cap bytes). */
static size_t outputs_in(const char *dir, char *first, size_t cap)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	first[0] = '\0';
	if (!dp)
		return 0;
	while ((e = readdir(dp))) {
		size_t len = strlen(e->d_name);
		char *sub;
		int named =
			(len > 10 && (strcmp(e->d_name + len - 10, "_ascend_pt") == 0 ||
					     strcmp(e->d_name + len - 10, "_ascend_ms") == 0)) ||
			strncmp(e->d_name, "PROF_", 5) == 0;

		if (!named || !(sub = join(dir, e->d_name)))
			continue;
		if (is_dir(sub) && (!n++ || strcmp(e->d_name, first) < 0))
			snprintf(first, cap, "%s", e->d_name);
		free(sub);
	}
	closedir(dp);
	return n;
}

/*
 * Whether base/sub (sub NULL: base) holds memory files: 1 and d->out set, 0 when it does not (or
 * is no folder), or the error (path names the input in messages).
 */
static int try_out(struct prof_dir *d, const char *path, const char *base, const char *sub,
	struct memscope_error *err)
{
	char *dir = sub ? join(base, sub) : strdup(base);
	int rc;

	if (!dir)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, path, 0, "out of memory");
	rc = is_dir(dir) ? scan(d, dir, path, err) : 0;
	if (!rc && d->n) {
		d->out = dir;
		return 1;
	}
	free(dir);
	return rc;
}

/* The output folder of path: itself when it holds memory files, else its ASCEND_PROFILER_OUTPUT,
 * its mindstudio_profiler_output, or its one PROF_*'s; files found into d. 0 or the error. */
static int find_output(struct prof_dir *d, const char *path, struct memscope_error *err)
{
	static const char *const inner[] = { "ASCEND_PROFILER_OUTPUT",
		"mindstudio_profiler_output" };
	char first[256] = "", *fw;
	size_t i, n = 0;
	int rc = try_out(d, path, path, NULL, err);

	for (i = 0; !rc && i < ARRAY_SIZE(inner); i++)
		rc = try_out(d, path, path, inner[i], err);
	/* a torch_npu folder's PROF_*, or an msprof run's: the one holding the deliverables */
	if (!rc && (n = outputs_in(path, first, sizeof(first))) == 1 &&
		!strncmp(first, "PROF_", 5)) {
		char *prof = join(path, first);

		rc = prof ? try_out(d, path, prof, inner[1], err)
			  : memscope_error_set(err, MEMSCOPE_E_NOMEM, path, 0, "out of memory");
		free(prof);
	}
	if (rc)
		return rc < 0 ? rc : 0;
	if (n > 1 || (n == 1 && strncmp(first, "PROF_", 5))) {
		size_t len = strlen(first);
		const char *glob = !strncmp(first, "PROF_", 5) ? "PROF_*"
				   : len > 10 && !strcmp(first + len - 10, "_ascend_ms")
					   ? "*_ascend_ms"
					   : "*_ascend_pt";

		return memscope_error_set(err, MEMSCOPE_E_INVALID, path, 0,
			"holds %zu profiler output%s (%s%s): give each as an input, e.g. %s/%s", n,
			n == 1 ? "" : "s", first, n > 1 ? ", ..." : "", path, glob);
	}
	fw = join(path, "FRAMEWORK");
	rc = fw && is_dir(fw)
		     ? memscope_error_set(err, MEMSCOPE_E_INVALID, path, 0,
			       "a torch_npu output not analysed yet (no "
			       "ASCEND_PROFILER_OUTPUT): run "
			       "torch_npu.profiler.profiler.analyse(\"%s\") first",
			       path)
		     : memscope_error_set(err, MEMSCOPE_E_INVALID, path, 0,
			       "no profiler memory files in the folder (operator_memory, "
			       "memory_record, npu_mem, npu_module_mem, static_op_mem CSVs, "
			       "trace_view.json or msprof_*.json), nor in its "
			       "ASCEND_PROFILER_OUTPUT or PROF_*/mindstudio_profiler_output");
	free(fw);
	return rc;
}

/*
 * The torch_npu or MindSpore output folder (named *_ascend_pt or *_ascend_ms) that path is or is
 * in, up to two levels above it: 1 and its name at [*name, *end), else 0.
 */
static int output_folder(const char *path, const char **name, const char **end)
{
	const char *s = path + strlen(path), *e;
	int levels;

	for (levels = 0; levels < 3 && s > path; levels++) {
		for (e = s; e > path && e[-1] == '/'; e--)
			;
		for (s = e; s > path && s[-1] != '/'; s--)
			;
		if (e - s > 10 &&
			(!memcmp(e - 10, "_ascend_pt", 10) || !memcmp(e - 10, "_ascend_ms", 10))) {
			*name = s;
			*end = e;
			return 1;
		}
	}
	return 0;
}

/* The process the output folder's name gives, <host>_<pid>_<timestamp>_ascend_pt, else
 * MEMSCOPE_ID_NONE. */
static uint64_t pid_of_name(const char *path)
{
	const char *s, *end, *p;
	uint64_t pid;

	if (!output_folder(path, &s, &end))
		return MEMSCOPE_ID_NONE;
	/* back over _<timestamp>, then _<pid> */
	for (p = end - 10; p > s && p[-1] >= '0' && p[-1] <= '9'; p--)
		;
	if (p == end - 10 || p <= s || p[-1] != '_')
		return MEMSCOPE_ID_NONE;
	end = p - 1;
	for (p = end; p > s && p[-1] >= '0' && p[-1] <= '9'; p--)
		;
	if (p == end || p <= s || p[-1] != '_' || ms__parse_u64(p, (size_t)(end - p), &pid))
		return MEMSCOPE_ID_NONE;
	return pid;
}

/* Whether path is (in) a MindSpore output folder, *_ascend_ms. */
static int mindspore_output(const char *path)
{
	const char *s, *end;

	return output_folder(path, &s, &end) && !memcmp(end - 10, "_ascend_ms", 10);
}

/*
 * The folder reader's open_path hook (struct reader): path's output folder found and its memory
 * files chosen (formats/msprof.md "Folders"), with notes of what was left out, into src->state
 * (set on failure too: prof_dir_close frees it). 0, or MEMSCOPE_E_INVALID (no output folder in
 * path, several), MEMSCOPE_E_IO (a folder that cannot be listed), MEMSCOPE_E_NOMEM, err naming
 * path.
 */
static int prof_dir_open(struct memscope_source *src, const char *path,
	const struct source_files *files, struct memscope_error *err)
{
	struct prof_dir *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, path, 0, "out of memory");
	d->open = files;
	src->state = d;
	rc = find_output(d, path, err);
	if (!rc && !(d->real = realpath(d->out, NULL)) && !(d->real = strdup(d->out)))
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, path, 0, "out of memory");
	if (!rc)
		choose(src, d);
	if (!rc && d->total)
		src->raw_total = d->total;
	return rc;
}

/* The close hook: the folder's file list freed. */
static void prof_dir_close(struct memscope_source *src)
{
	struct prof_dir *d = src->state;

	if (!d)
		return;
	dir_clear(d);
	free(d->files);
	free(d->out);
	free(d->real);
	free(d);
	src->state = NULL;
}

/* Progress of one file as that of the folder: the bytes of the files read before it added. */
struct dir_progress {
	struct memscope_source *src;
	uint64_t base;
};

static void file_progress(void *ctx, uint32_t s, uint64_t done, uint64_t total)
{
	struct dir_progress *p = ctx;

	(void)total;
	p->src->opts.progress(p->src->opts.progress_ctx, s, p->base + done, p->src->raw_total);
}

/* What a file's read adds to the folder's statistics. */
static void add_stats(struct memscope_read_stats *to, const struct memscope_read_stats *s)
{
	to->n_events += s->n_events;
	if (!to->n_skipped && s->n_skipped)
		to->first_skip = s->first_skip;
	to->n_skipped += s->n_skipped;
	to->n_unknown_kind += s->n_unknown_kind;
	to->n_ignored_columns += s->n_ignored_columns;
	to->bytes += s->bytes;
	if (!to->cut.code && s->cut.code)
		to->cut = s->cut;
}

/* Open f with the folder's options; its format must be the one its name says. */
static int open_file(struct memscope_source **out, struct memscope_source *src,
	const struct pfile *f, struct dir_progress *prog, struct memscope_error *err)
{
	struct memscope_read_opts o = src->opts;
	enum memscope_format want =
		f->kind == K_TIMELINE ? MEMSCOPE_FORMAT_MSPROF_JSON : MEMSCOPE_FORMAT_MSPROF_CSV;
	const struct source_files *files = ((const struct prof_dir *)src->state)->open;
	int rc;

	if (src->opts.progress) {
		o.progress = file_progress;
		o.progress_ctx = prog;
	}
	rc = files->open(out, f->path, src->st, &o, err);
	if (!rc && (*out)->format != want) {
		rc = memscope_error_set(err, MEMSCOPE_E_INVALID, f->path, 0,
			"named like an Ascend profiler %s file, but it is %s", kind_names[f->kind],
			(*out)->reader->what);
		files->close(*out);
		*out = NULL;
	}
	return rc;
}

/* Whether the caller has no use for any event a file of kind k holds (skip_kinds): it is not
 * read at all. */
static int unwanted(const struct memscope_source *src, enum kind k)
{
	uint32_t skip = src->opts.skip_kinds, wants;

	switch (k) {
	case K_TIMELINE:
		wants = 1u << MEMSCOPE_KIND_OP_LAUNCH | 1u << MEMSCOPE_KIND_COUNTER;
		break;
	case K_OPMEM:
		wants = 1u << MEMSCOPE_KIND_MALLOC | 1u << MEMSCOPE_KIND_FREE;
		break;
	case K_STATIC:
		wants = 1u << MEMSCOPE_KIND_PLAN;
		break;
	default:
		wants = 1u << MEMSCOPE_KIND_COUNTER;
		break;
	}
	return (wants & ~skip) == 0;
}

/*
 * The folder's hook on the delivery of its events (struct prof_ctx's before): the timeline, loaded
 * and not yet delivered (*c->before_arg), goes before the first memory row's event, whose device
 * its ops take. 0 or the status to stop with.
 */
static int timeline_first(struct prof_ctx *c, struct memscope_source *src, memscope_event_fn fn,
	void *ctx, const struct memscope_event *ev, struct memscope_error *err)
{
	struct prof_trace **pending = c->before_arg, *t = *pending;

	if (!t)
		return 0;
	*pending = NULL;
	if (c->device == MEMSCOPE_DEVICE_NONE)
		c->device = ev->device;
	return ms__prof_trace_emit(t, src, c, fn, ctx, err);
}

static int prof_dir_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct prof_dir *d = src->state;
	struct dir_progress prog = { src, 0 };
	struct clocks clocks = { 0 };
	struct prof_trace *pending = NULL;
	struct prof_ctx c;
	char note[600], skipped[400] = "";
	size_t i, skipped_len = 0;
	int rc = 0;

	ms__prof_ctx_init(&c);
	c.clocks = &clocks;
	c.before = timeline_first;
	c.before_arg = &pending;
	c.mindspore = mindspore_output(d->real);
	/* a MindSpore memory_record says so in its header: its blocks are MindSpore's too */
	for (i = 0; !rc && !c.mindspore && i < d->n; i++)
		if (d->files[i].kind == K_RECORD) {
			struct memscope_source *s = NULL;

			if (!(rc = open_file(&s, src, &d->files[i], &prog, err)))
				c.mindspore = ms__prof_csv_mindspore(s);
			d->open->close(s);
			break;
		}
	for (i = 0; !rc && i < d->n; i++) {
		struct memscope_source *s = NULL;

		if (unwanted(src, d->files[i].kind)) {
			if (d->files[i].size && skipped_len < sizeof(skipped))
				skipped_len += (size_t)snprintf(skipped + skipped_len,
					sizeof(skipped) - skipped_len, "%s%s",
					skipped_len ? ", " : "", base_name(d->files[i].path));
			prog.base += d->files[i].size;
			continue;
		}
		/* the events name their file: locations say where in the folder they are */
		if (memscope_strtab_intern(
			    src->st, d->files[i].path, strlen(d->files[i].path), &c.file)) {
			rc = memscope_error_set(
				err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
			break;
		}
		rc = open_file(&s, src, &d->files[i], &prog, err);
		if (rc)
			break;
		/* the timeline's process, else the folder name's */
		if (d->files[i].kind != K_TIMELINE && c.pid == MEMSCOPE_ID_NONE)
			c.pid = pid_of_name(d->real);
		if (d->files[i].kind == K_TIMELINE) {
			/* the timeline (its slices one after the other) waits for the first
			 * memory row, whose device its ops take */
			rc = ms__prof_trace_load(&pending, s, &c, err);
		} else {
			rc = ms__prof_csv_read(s, &c, fn, ctx, err);
		}
		add_stats(&src->stats, &s->stats);
		prog.base += d->files[i].size;
		d->open->close(s);
	}
	if (!rc && pending) {
		struct prof_trace *t = pending;

		pending = NULL;
		rc = ms__prof_trace_emit(t, src, &c, fn, ctx, err);
	}
	ms__prof_trace_free(pending);
	/* a file left unread is not checked either: said, so that a damaged one is not a surprise
	 * to a tool that reads it */
	if (!rc && skipped_len)
		ms__source_notice(src,
			"not read, so not checked (events this tool does not use): %s", skipped);
	/* files recorded days apart: said once, from the rule the analyses' pictures follow */
	if (!rc && ms__clocks_note(&clocks, src->opts.src, src->st, note, sizeof(note)))
		ms__source_notice(src, "%s", note);
	ms__clocks_free(&clocks);
	return rc;
}

const struct reader ms__prof_dir_reader = {
	.format = MEMSCOPE_FORMAT_PROFILER,
	.name = "profiler",
	.what = "an Ascend profiler output folder",
	.sniff = NULL, /* chosen by its path at open (memscope_source_open) */
	.read = prof_dir_read,
	.open_path = prof_dir_open,
	.close = prof_dir_close,
	.without_accesses = "an Ascend profiler output",
	.end = READER_END_PROFILE,
};
