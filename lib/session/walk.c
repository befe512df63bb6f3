/* Finding a batch's inputs under files and folders (memscope/walk.h): the walk, what a file is by
 * its name or its first bytes, ranks and devices from paths, and the list's hash. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/internal.h"
#include "../readers/registry.h"
#include "memscope/strtab.h"
#include "memscope/walk.h"
#include "file_id.h"

/* Bytes of a file read to tell what it is when its name does not say: a header line or a magic
 * is far shorter. */
#define SNIFF_BYTES (64 * 1024)

/* What a folder entry is to the batch: the reader table's enum reader_walk. */
enum what { W_SKIP = READER_WALK_SKIP, W_INPUT = READER_WALK_INPUT, W_TRACE = READER_WALK_TRACE };

/* An input while the walk goes on: what is kept of it, and the file it is, for duplicates. */
struct item {
	struct memscope_batch_input in;
	dev_t dev;
	ino_t ino;
	int has_id; /* dev and ino known */
	size_t seq; /* when it was found: the order of equal paths */
};

struct walker {
	struct item *items;
	size_t n, cap;
	uint64_t n_skipped, n_orphans;
	memscope_notice_fn notice;
	void *ctx;
	struct memscope_strtab *st; /* for the format detection of the sources opened (no events) */
	unsigned char *buf;	    /* SNIFF_BYTES */
	struct memscope_error *err;
};

static void tell(struct walker *wk, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One printable line to the caller's notice callback. */
static void tell(struct walker *wk, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (!wk->notice)
		return;
	va_start(ap, fmt);
	memscope_text_vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	wk->notice(wk->ctx, 0, line);
}

static int nomem(struct walker *wk, const char *path)
{
	return memscope_error_set(wk->err, MEMSCOPE_E_NOMEM, path, 0, "out of memory");
}

/* dir + "/" + name (no second "/" when dir ends in one), malloc'd; NULL on OOM. */
static char *join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	int slash = dl && dir[dl - 1] != '/';
	char *p = malloc(dl + slash + nl + 1);

	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	if (slash)
		p[dl] = '/';
	memcpy(p + dl + slash, name, nl + 1);
	return p;
}

static int ends_with(const char *s, size_t len, const char *suffix)
{
	size_t sl = strlen(suffix);

	return len >= sl && memcmp(s + len - sl, suffix, sl) == 0;
}

/* The length of name without a .gz or .zst ending; *compressed says whether it had one. */
static size_t plain_len(const char *name, int *compressed)
{
	size_t len = strlen(name);

	*compressed = 1;
	if (ends_with(name, len, ".gz"))
		return len - 3;
	if (ends_with(name, len, ".zst"))
		return len - 4;
	*compressed = 0;
	return len;
}

/* Whether a folder's name says it is a profiler output: *_ascend_pt, *_ascend_ms or PROF_*, or
 * the output folder inside one met on its own (ASCEND_PROFILER_OUTPUT, mindstudio_profiler_output:
 * a copied-out export) (the names readers/msprof_dir.c knows). */
static int profiler_folder_name(const char *name, size_t len)
{
	return (len > 10 && (ends_with(name, len, "_ascend_pt") ||
				    ends_with(name, len, "_ascend_ms"))) ||
	       (len >= 5 && memcmp(name, "PROF_", 5) == 0) ||
	       !strcmp(name, "ASCEND_PROFILER_OUTPUT") ||
	       !strcmp(name, "mindstudio_profiler_output");
}

/* A new input for path (taken: freed on failure too); its rank and device from the path. The
 * new item, or NULL on OOM. */
static struct item *add_item(struct walker *wk, char *path, const struct stat *sb)
{
	struct item *it;

	if (ms__grow_array(&wk->items, &wk->cap, wk->n + 1, sizeof(*wk->items))) {
		free(path);
		nomem(wk, NULL);
		return NULL;
	}
	it = &wk->items[wk->n];
	memset(it, 0, sizeof(*it));
	it->in.path = path;
	it->in.rank = memscope_rank_of_path(path);
	memscope_device_of_path(path, it->in.device, sizeof(it->in.device));
	if (sb) {
		it->dev = sb->st_dev;
		it->ino = sb->st_ino;
		it->has_id = 1;
	}
	it->seq = wk->n++;
	return it;
}

/* An input that carries an error: code and the message (printf, one line). 0 or NOMEM. */
static int add_failed(struct walker *wk, char *path, const struct stat *sb, int code,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int add_failed(
	struct walker *wk, char *path, const struct stat *sb, int code, const char *fmt, ...)
{
	char msg[MEMSCOPE_ERROR_MSG_MAX];
	struct item *it = add_item(wk, path, sb);
	va_list ap;

	if (!it)
		return MEMSCOPE_E_NOMEM;
	va_start(ap, fmt);
	memscope_text_vformat(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	it->in.err_code = code;
	if (!(it->in.err_msg = strdup(msg)))
		return nomem(wk, it->in.path);
	return 0;
}

/* The N of a profiler_info_N.json in folder path (torch_npu writes one per rank), the lowest
 * when there are several; -1 when none (or the folder cannot be read: its read says so). */
static int64_t rank_of_profiler_info(const char *path)
{
	DIR *dp = opendir(path);
	struct dirent *e;
	int64_t rank = -1;

	if (!dp)
		return -1;
	while ((e = readdir(dp))) {
		size_t len = strlen(e->d_name);
		int64_t v;

		if (len > 19 && memcmp(e->d_name, "profiler_info_", 14) == 0 &&
			ends_with(e->d_name, len, ".json") &&
			!ms__parse_i64(e->d_name + 14, len - 19, &v) && e->d_name[14] != '-' &&
			(rank < 0 || v < rank))
			rank = v;
	}
	closedir(dp);
	return rank;
}

/* A profiler folder as one input: its rank from its path, else from its profiler_info file. */
static int add_profiler(struct walker *wk, char *path, const struct stat *sb)
{
	struct item *it = add_item(wk, path, sb);

	if (!it)
		return MEMSCOPE_E_NOMEM;
	if (it->in.rank < 0)
		it->in.rank = rank_of_profiler_info(it->in.path);
	return 0;
}

/* Up to SNIFF_BYTES of the file at path into wk->buf: the bytes read, or -1 (errno set). */
static ssize_t read_head(struct walker *wk, const char *path)
{
	/* non-blocking: a FIFO put in the place of the file looked at would not block */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	size_t got = 0;
	ssize_t r = 0;

	if (fd < 0)
		return -1;
	while (got < SNIFF_BYTES && (r = read(fd, wk->buf + got, SNIFF_BYTES - got)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		got += (size_t)r;
	}
	if (r < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return (ssize_t)got;
}

/*
 * What the regular file at path is by its content (the library's format detection): W_INPUT,
 * W_TRACE or W_SKIP, or MEMSCOPE_E_IO with why in msg (msg_size bytes), MEMSCOPE_E_NOMEM. A
 * compressed one (by its name) is opened by the library, which decompresses what detection
 * needs; any other has its first SNIFF_BYTES read (a cut compressed block could say nothing).
 */
static int sniff(struct walker *wk, const char *path, int compressed, char *msg, size_t msg_size)
{
	struct memscope_source *src = NULL;
	struct memscope_error e;
	ssize_t got = 0;
	int rc;

	if (!wk->st && !(wk->st = memscope_strtab_new()))
		return nomem(wk, path);
	if (!wk->buf && !(wk->buf = malloc(SNIFF_BYTES)))
		return nomem(wk, path);
	memscope_error_clear(&e);
	if (compressed) {
		rc = memscope_source_open(&src, path, wk->st, NULL, &e);
	} else if ((got = read_head(wk, path)) < 0) {
		snprintf(msg, msg_size, "cannot open: %s", strerror(errno));
		return MEMSCOPE_E_IO;
	} else {
		rc = memscope_source_open_mem(&src, wk->buf, (size_t)got, path, wk->st, NULL, &e);
	}
	if (!rc) {
		enum memscope_format f = memscope_source_format(src);

		memscope_source_close(src);
		/* what the reader table makes of f (a database holding no events: skipped) */
		rc = ms__reader_walk_by_content(f, path);
		return rc < 0 ? nomem(wk, path) : rc;
	}
	switch (rc) {
	case MEMSCOPE_E_NOMEM:
		return nomem(wk, path);
	case MEMSCOPE_E_IO:
		snprintf(msg, msg_size, "%s", e.msg);
		return MEMSCOPE_E_IO;
	/* an event format that cannot be read as it is (a capture of a newer version or cut in
	 * its header, a compressed database): its read says so */
	case MEMSCOPE_E_UNSUPPORTED:
	case MEMSCOPE_E_TRUNCATED:
		return W_INPUT;
	default:
		return W_SKIP;
	}
}

/* What a file is by its name (the reader table's endings): W_INPUT, W_TRACE, or -1 when its
 * content decides; W_SKIP for any other name. */
static int by_name(const char *name, int *compressed)
{
	return ms__reader_walk_by_name(name, plain_len(name, compressed));
}

/* A folder's entry: its name and type (a DT_ value, DT_UNKNOWN when readdir did not say). */
struct dent {
	char *name;
	unsigned char type;
};

static int dent_cmp(const void *a, const void *b)
{
	return strverscmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

static void dents_free(struct dent *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(d[i].name);
	free(d);
}

/* The entries of folder dir but hidden ones (counted skipped), sorted: 0, MEMSCOPE_E_IO when it
 * cannot be opened or read (errno set, *verb "open" or "read"), MEMSCOPE_E_NOMEM. */
static int list_folder(
	struct walker *wk, const char *dir, struct dent **out, size_t *n_out, const char **verb)
{
	struct dent *d = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *dp = opendir(dir);
	int rc = 0, saved;

	*out = NULL;
	*n_out = 0;
	*verb = "open";
	if (!dp)
		return MEMSCOPE_E_IO;
	for (errno = 0; (e = readdir(dp)); errno = 0) {
		if (e->d_name[0] == '.') {
			wk->n_skipped += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
			continue;
		}
		if (ms__grow_array(&d, &cap, n + 1, sizeof(*d)) ||
			!(d[n].name = strdup(e->d_name))) {
			rc = nomem(wk, dir);
			goto out;
		}
		d[n++].type = e->d_type;
	}
	if (errno) {
		*verb = "read";
		rc = MEMSCOPE_E_IO;
		goto out;
	}
	if (n > 1)
		qsort(d, n, sizeof(*d), dent_cmp);
out:
	saved = errno;
	closedir(dp);
	if (rc) {
		dents_free(d, n);
		errno = saved;
	} else {
		*out = d;
		*n_out = n;
	}
	return rc;
}

static int walk_folder(struct walker *wk, const char *dir);

/*
 * Entry de of folder dir, at full (taken): a folder walked or a profiler input, an input, a
 * python_trace file (appended to *traces, *n_traces), or skipped. *first gets the index of the
 * folder's first input file (SIZE_MAX until there is one); *n_prof counts profiler files. 0 or
 * MEMSCOPE_E_NOMEM.
 */
static int walk_entry(struct walker *wk, const struct dent *de, char *full, size_t *first,
	char ***traces, size_t *n_traces, size_t *cap_traces, size_t *n_prof)
{
	char msg[MEMSCOPE_ERROR_MSG_MAX];
	struct stat sb;
	int have = 0, link = de->type == DT_LNK, compressed, what, rc = 0;

	/* sb is had (have) once looked up: of the link's target for a link */
	if (de->type == DT_UNKNOWN) { /* a file system whose readdir does not tell */
		if (lstat(full, &sb))
			goto skip; /* gone since it was listed */
		link = S_ISLNK(sb.st_mode);
		have = !link;
	}
	if (link) {
		have = stat(full, &sb) == 0;
		if (have && S_ISDIR(sb.st_mode)) {
			tell(wk, "%s: a symbolic link to a folder, not followed", full);
			goto skip;
		}
	}
	if (de->type == DT_DIR || (have && S_ISDIR(sb.st_mode))) {
		if (profiler_folder_name(de->name, strlen(de->name))) {
			have = have || stat(full, &sb) == 0;
			return add_profiler(wk, full, have ? &sb : NULL);
		}
		rc = walk_folder(wk, full);
		free(full);
		return rc;
	}
	what = by_name(de->name, &compressed);
	if (what == W_SKIP)
		goto skip;
	if (!have)
		have = stat(full, &sb) == 0;
	if (what < 0) {
		/* only a regular file is opened to see what it holds: a FIFO would block */
		if (!have || !S_ISREG(sb.st_mode))
			goto skip;
		what = sniff(wk, full, compressed, msg, sizeof(msg));
		if (what == MEMSCOPE_E_IO)
			return add_failed(wk, full, &sb, MEMSCOPE_E_IO, "%s", msg);
		if (what < 0)
			goto fail;
		if (what == W_SKIP)
			goto skip;
	}
	if (what == W_TRACE) {
		if (ms__grow_array(traces, cap_traces, *n_traces + 1, sizeof(**traces))) {
			rc = nomem(wk, full);
			goto fail;
		}
		(*traces)[(*n_traces)++] = full;
		return 0;
	}
	if (*first == SIZE_MAX)
		*first = wk->n;
	return add_item(wk, full, have ? &sb : NULL) ? 0 : MEMSCOPE_E_NOMEM;
skip:
	wk->n_skipped++;
	*n_prof += memscope_profiler_file_name(de->name) != 0;
	free(full);
	return 0;
fail:
	free(full);
	return rc ? rc : what;
}

/* Walk folder dir (borrowed): its inputs added, its python_trace files given to its first input
 * file, its subfolders walked. 0 or MEMSCOPE_E_NOMEM. */
static int walk_folder(struct walker *wk, const char *dir)
{
	struct dent *d = NULL;
	char **traces = NULL;
	size_t n = 0, i, n_traces = 0, cap_traces = 0, first = SIZE_MAX, n_prof = 0;
	const char *verb;
	int rc = list_folder(wk, dir, &d, &n, &verb);

	if (rc == MEMSCOPE_E_IO) {
		int e = errno;
		struct stat sb;
		char *path = strdup(dir);
		int have = stat(dir, &sb) == 0;

		if (!path)
			return nomem(wk, dir);
		return add_failed(wk, path, have ? &sb : NULL, MEMSCOPE_E_IO,
			"cannot %s folder: %s", verb, strerror(e));
	}
	for (i = 0; i < n && !rc; i++) {
		char *full = join(dir, d[i].name);

		rc = full ? walk_entry(wk, &d[i], full, &first, &traces, &n_traces, &cap_traces,
				    &n_prof)
			  : nomem(wk, dir);
	}
	if (!rc && n_traces && first != SIZE_MAX) {
		wk->items[first].in.traces = traces;
		wk->items[first].in.n_traces = n_traces;
		traces = NULL;
		n_traces = 0;
	} else if (!rc && n_traces) {
		wk->n_orphans += n_traces;
		tell(wk,
			"%s: %zu python_trace file%s with no memscope_dump file beside %s, skipped",
			dir, n_traces, n_traces == 1 ? "" : "s", n_traces == 1 ? "it" : "them");
	}
	if (!rc && n_prof)
		tell(wk,
			"%s: %zu Ascend profiler file%s not read alone: give %s profiler folder "
			"(*_ascend_pt, *_ascend_ms, PROF_*)",
			dir, n_prof, n_prof == 1 ? "" : "s", n_prof == 1 ? "its" : "their");
	for (i = 0; i < n_traces; i++)
		free(traces[i]);
	free(traces);
	dents_free(d, n);
	return rc;
}

/* Whether the profiler reader reads folder path as one output, whatever its name (a renamed
 * *_ascend_pt, an ASCEND_PROFILER_OUTPUT copied out and renamed): 1 yes, 0 no, MEMSCOPE_E_NOMEM. */
static int profiler_output(struct walker *wk, const char *path)
{
	struct memscope_source *src = NULL;
	struct memscope_error e;
	int rc;

	if (!wk->st && !(wk->st = memscope_strtab_new()))
		return nomem(wk, path);
	rc = memscope_source_open(&src, path, wk->st, NULL, &e);
	memscope_source_close(src);
	return rc == MEMSCOPE_E_NOMEM ? nomem(wk, path) : rc == 0;
}

/* One PATH given: a file is an input whatever it is, a folder is walked (or is a profiler
 * input). 0 or MEMSCOPE_E_NOMEM. */
static int walk_path(struct walker *wk, const char *path)
{
	struct stat sb;
	size_t len = strlen(path);
	char *copy;
	int rc = 0;

	if (stat(path, &sb)) {
		int e = errno;

		if (!(copy = strdup(path)))
			return nomem(wk, path);
		return add_failed(wk, copy, NULL, MEMSCOPE_E_IO, "cannot look up: %s", strerror(e));
	}
	if (!S_ISDIR(sb.st_mode)) {
		if (!(copy = strdup(path)))
			return nomem(wk, path);
		return add_item(wk, copy, &sb) ? 0 : MEMSCOPE_E_NOMEM;
	}
	while (len > 1 && path[len - 1] == '/')
		len--;
	{
		const char *base = path + len;

		while (base > path && base[-1] != '/')
			base--;
		if (profiler_folder_name(base, (size_t)(path + len - base)) ||
			(rc = profiler_output(wk, path)) == 1) {
			if (!(copy = strdup(path)))
				return nomem(wk, path);
			return add_profiler(wk, copy, &sb);
		}
	}
	return rc < 0 ? rc : walk_folder(wk, path);
}

static int item_path_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strverscmp(x->in.path, y->in.path);

	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* By file, then by place: the first of a file comes first. */
static void input_free(struct memscope_batch_input *in)
{
	size_t i;

	for (i = 0; i < in->n_traces; i++)
		free(in->traces[i]);
	free(in->traces);
	free(in->path);
	free(in->err_msg);
	memset(in, 0, sizeof(*in));
}

/*
 * Sort the items by path and drop the later of two that are the same file (or the same path),
 * with a notice. 0 or MEMSCOPE_E_NOMEM (nothing dropped then).
 */
static int sort_and_dedup(struct walker *wk)
{
	struct ms__file_id *ids;
	size_t *kept, i, j, n_id = 0;

	if (!wk->n)
		return 0;
	qsort(wk->items, wk->n, sizeof(*wk->items), item_path_cmp);
	ids = malloc(wk->n * sizeof(*ids));
	kept = malloc(wk->n * sizeof(*kept)); /* the item an item repeats, SIZE_MAX: none */
	if (!ids || !kept) {
		free(ids);
		free(kept);
		return nomem(wk, NULL);
	}
	for (i = 0; i < wk->n; i++) {
		const struct item *it = &wk->items[i];

		kept[i] = SIZE_MAX;
		if (it->has_id)
			ids[n_id++] = (struct ms__file_id){ it->dev, it->ino, i };
		else if (i && strcmp(it->in.path, wk->items[i - 1].in.path) == 0)
			kept[i] = kept[i - 1] == SIZE_MAX ? i - 1 : kept[i - 1];
	}
	if (n_id > 1)
		qsort(ids, n_id, sizeof(*ids), ms__file_id_cmp);
	for (i = 1, j = 0; i < n_id; i++) {
		if (ids[i].dev == ids[j].dev && ids[i].ino == ids[j].ino)
			kept[ids[i].at] = ids[j].at;
		else
			j = i;
	}
	for (i = 0; i < wk->n; i++)
		if (kept[i] != SIZE_MAX)
			tell(wk, "%s: the same as %s, listed once", wk->items[i].in.path,
				wk->items[kept[i]].in.path);
	for (i = 0, j = 0; i < wk->n; i++) {
		if (kept[i] != SIZE_MAX)
			input_free(&wk->items[i].in);
		else
			wk->items[j++] = wk->items[i];
	}
	wk->n = j;
	free(ids);
	free(kept);
	return 0;
}

int memscope_walk(const char *const *paths, size_t n, struct memscope_walk *out,
	memscope_notice_fn notice, void *ctx, struct memscope_error *err)
{
	struct walker wk = { .notice = notice, .ctx = ctx, .err = err };
	size_t i;
	int rc = 0;

	if (out)
		memset(out, 0, sizeof(*out));
	for (i = 0; paths && i < n && paths[i]; i++)
		;
	if (!out || (!paths && n) || (paths && i < n))
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "bad argument");
	memscope_error_clear(err);
	for (i = 0; i < n && !rc; i++)
		rc = walk_path(&wk, paths[i]);
	if (!rc)
		rc = sort_and_dedup(&wk);
	memscope_strtab_free(wk.st);
	free(wk.buf);
	if (!rc && !(out->inputs = malloc((wk.n ? wk.n : 1) * sizeof(*out->inputs))))
		rc = nomem(&wk, NULL);
	if (rc) {
		for (i = 0; i < wk.n; i++)
			input_free(&wk.items[i].in);
		wk.n = 0;
	}
	for (i = 0; i < wk.n; i++)
		out->inputs[i] = wk.items[i].in;
	out->n = wk.n;
	out->n_skipped = wk.n_skipped;
	out->n_orphan_traces = wk.n_orphans;
	free(wk.items);
	return rc;
}

void memscope_walk_free(struct memscope_walk *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->n; i++)
		input_free(&w->inputs[i]);
	free(w->inputs);
	memset(w, 0, sizeof(*w));
}

/* FNV-1a 64 */
#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ s[i]) * FNV_PRIME;
	return h;
}

/* A text with its NUL, so that "ab","c" and "a","bc" differ. */
static uint64_t fnv_str(uint64_t h, const char *s)
{
	return fnv(h, s ? s : "", (s ? strlen(s) : 0) + 1);
}

/* v as 8 bytes, least significant first whatever the host. */
static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return fnv(h, b, sizeof(b));
}

uint64_t memscope_walk_hash(const struct memscope_walk *w)
{
	uint64_t h = FNV_OFFSET;
	size_t i, k;

	h = fnv_u64(h, w->n);
	for (i = 0; i < w->n; i++) {
		const struct memscope_batch_input *in = &w->inputs[i];

		h = fnv_str(h, in->path);
		h = fnv_u64(h, in->n_traces);
		for (k = 0; k < in->n_traces; k++)
			h = fnv_str(h, in->traces[k]);
		h = fnv_u64(h, (uint64_t)in->rank);
		h = fnv_str(h, in->device);
		h = fnv_u64(h, (uint64_t)(int64_t)in->err_code);
		h = fnv_str(h, in->err_msg);
	}
	return h;
}

static int is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The rank component s[0..len) holds (memscope_rank_of_path), or -1. */
static int64_t rank_in(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i + 4 < len; i++) {
		size_t j = i + 4, k;
		uint64_t v;

		if ((s[i] | 0x20) != 'r' || (s[i + 1] | 0x20) != 'a' || (s[i + 2] | 0x20) != 'n' ||
			(s[i + 3] | 0x20) != 'k' || (i && is_letter(s[i - 1])))
			continue;
		if (s[j] == '_' || s[j] == '-')
			j++;
		for (k = j; k < len && is_digit(s[k]); k++)
			;
		if (k > j && k - j <= 18 && !ms__parse_u64(s + j, k - j, &v))
			return (int64_t)v;
	}
	return -1;
}

/* The device component s[0..len) is, into buf (memscope_device_of_path): its length, 0 if none. */
static size_t device_in(const char *s, size_t len, char *buf, size_t size)
{
	char text[MEMSCOPE_PATH_DEVICE_MAX];
	size_t n, i = 6;
	uint64_t v;

	if (len < 7 || memcmp(s, "device", 6))
		return 0;
	if (len == 10 && memcmp(s + 6, "_cpu", 4) == 0) {
		n = 3;
		memcpy(text, "cpu", 4);
	} else {
		i += s[i] == '_';
		if (i == len || len - i > 15 || ms__parse_u64(s + i, len - i, &v) || v > INT32_MAX)
			return 0;
		n = ms__fmt_u64(text, v);
		text[n] = '\0';
	}
	if (n >= size)
		return 0;
	memcpy(buf, text, n + 1);
	return n;
}

int64_t memscope_rank_of_path(const char *path)
{
	const char *end = path + strlen(path);

	while (end > path) {
		const char *start = end;
		int64_t r;

		while (start > path && start[-1] != '/')
			start--;
		if ((r = rank_in(start, (size_t)(end - start))) >= 0)
			return r;
		end = start > path ? start - 1 : path;
	}
	return -1;
}

size_t memscope_device_of_path(const char *path, char *buf, size_t size)
{
	const char *end = path + strlen(path);

	if (size)
		buf[0] = '\0';
	while (end > path) {
		const char *start = end;
		size_t n;

		while (start > path && start[-1] != '/')
			start--;
		if ((n = device_in(start, (size_t)(end - start), buf, size)))
			return n;
		end = start > path ? start - 1 : path;
	}
	return 0;
}
