/* The session (memscope/session.h): the list of inputs, the folders walked and the databases
 * split into them, their opening, the read feeding the analyses, and the notes about them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "memscope/session.h"
#include "../readers/registry.h"
#include "memscope/walk.h"
#include "file_id.h"
#include "run.h"

struct memscope_session {
	struct memscope_read_opts ro;
	memscope_note_fn note_fn;
	void *note_ctx;
	struct memscope_input *in; /* n of them; name and path owned */
	const char **names;	   /* in[i].name, for memscope_session_names */
	const char **paths;	   /* in[i].path, for memscope_session_paths */
	size_t n, cap;
	struct memscope_note *notes; /* text owned */
	size_t n_notes, cap_notes;
	char *err_line; /* the whole line of the last error s set itself, owned; or NULL */
	/* the input a read of one (ms__session_run_input) reads: its src 0 is this input */
	size_t run_base;
	const struct memscope_run_hooks *run_hooks; /* and its caller's hooks (NULL: none) */
	void *run_ctx;
	int muted; /* ms__session_mute: notes neither kept nor given */
};

/* A new string of fmt's text, or NULL on OOM. */
static char *text_of(const char *fmt, va_list ap)
{
	char *s = NULL;

	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

/*
 * Set err to code at file (NULL: none) with fmt's message, and keep the whole line ("FILE: MSG",
 * as memscope_error_format puts it) in s for memscope_session_error_line: a long path does not
 * fit err. Returns code.
 */
static int fail(struct memscope_session *s, struct memscope_error *err, int code, const char *file,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail(struct memscope_session *s, struct memscope_error *err, int code, const char *file,
	const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = text_of(fmt, ap);
	va_end(ap);
	free(s->err_line);
	s->err_line = NULL;
	if (!msg)
		return memscope_error_set(err, code, file, 0, "%s", memscope_strerror(code));
	memscope_error_set(err, code, file, 0, "%s", msg);
	if (file && asprintf(&s->err_line, "%s: %s", file, msg) < 0)
		s->err_line = NULL;
	else if (!file)
		s->err_line = msg, msg = NULL;
	free(msg);
	return code;
}

/* Clear err and s's error line, as a call into s starts. */
static void fail_clear(struct memscope_session *s, struct memscope_error *err)
{
	memscope_error_clear(err);
	free(s->err_line);
	s->err_line = NULL;
}

/* Keep a note and give it to the session's callback. A note lost to no memory is dropped. */
static void note_keep(struct memscope_session *s, const struct memscope_note *nt)
{
	char *text;

	if (s->muted)
		return;
	if (s->n_notes == s->cap_notes) {
		size_t cap = s->cap_notes ? 2 * s->cap_notes : 16;
		struct memscope_note *nn = realloc(s->notes, cap * sizeof(*nn));

		if (!nn)
			goto give;
		s->notes = nn;
		s->cap_notes = cap;
	}
	if ((text = strdup(nt->text))) {
		s->notes[s->n_notes] = *nt;
		s->notes[s->n_notes++].text = text;
	}
give:
	if (s->note_fn)
		s->note_fn(s->note_ctx, nt);
}

void ms__session_mute(struct memscope_session *s, int mute)
{
	s->muted = mute;
}

void ms__session_note_fn(struct memscope_session *s, memscope_note_fn fn, void *ctx)
{
	s->note_fn = fn;
	s->note_ctx = ctx;
}

void ms__session_note(struct memscope_session *s, const struct memscope_note *nt)
{
	note_keep(s, nt);
}

/* memscope_note_fn relaying a note to the session's list and callback. */
static void note_relay(void *ctx, const struct memscope_note *nt)
{
	note_keep(ctx, nt);
}

/* A note of kind about input (count) with the text of fmt and ap, to fn; how the session went
 * (HOW_READ, AGAIN) is info. Nothing when its text cannot be made (no memory). */
static void note_give(memscope_note_fn fn, void *ctx, enum memscope_note_kind kind, size_t input,
	uint64_t count, const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
static void note_give(memscope_note_fn fn, void *ctx, enum memscope_note_kind kind, size_t input,
	uint64_t count, const char *fmt, va_list ap)
{
	struct memscope_note nt = { kind,
		kind == MEMSCOPE_NOTE_HOW_READ || kind == MEMSCOPE_NOTE_AGAIN, input, count, NULL };
	char *text = text_of(fmt, ap);

	if (!text)
		return;
	nt.text = text;
	fn(ctx, &nt);
	free(text);
}

/* A note of kind about input (count) with fmt's text, kept and given. */
static void note(struct memscope_session *s, enum memscope_note_kind kind, size_t input,
	uint64_t count, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void note(struct memscope_session *s, enum memscope_note_kind kind, size_t input,
	uint64_t count, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note_give(note_relay, s, kind, input, count, fmt, ap);
	va_end(ap);
}

/* A line of the read notes through fn. */
static void read_note(memscope_note_fn fn, void *ctx, enum memscope_note_kind kind, size_t input,
	uint64_t count, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void read_note(memscope_note_fn fn, void *ctx, enum memscope_note_kind kind, size_t input,
	uint64_t count, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note_give(fn, ctx, kind, input, count, fmt, ap);
	va_end(ap);
}

void memscope_read_notes(const char *name, size_t input, const struct memscope_read_stats *s,
	memscope_note_fn fn, void *ctx)
{
	char buf[1200];

	if (s->n_skipped) {
		memscope_error_format(&s->first_skip, buf, sizeof(buf));
		read_note(fn, ctx, MEMSCOPE_NOTE_SKIPPED, input, s->n_skipped,
			"%s: skipped %llu bad row%s (first: %s)", name,
			(unsigned long long)s->n_skipped, s->n_skipped == 1 ? "" : "s", buf);
	}
	if (s->cut.code) {
		memscope_error_format(&s->cut, buf, sizeof(buf));
		read_note(fn, ctx, MEMSCOPE_NOTE_CUT, input, 0,
			"%s; every complete record before the cut was read (--lenient)", buf);
	}
	if (s->n_unknown_kind)
		read_note(fn, ctx, MEMSCOPE_NOTE_UNKNOWN_KIND, input, s->n_unknown_kind,
			"%s: %llu rows with an unknown Event or Event Type (kept as text)", name,
			(unsigned long long)s->n_unknown_kind);
	if (s->n_ignored_columns)
		read_note(fn, ctx, MEMSCOPE_NOTE_IGNORED_COLUMNS, input, s->n_ignored_columns,
			"%s: %llu unknown columns dropped", name,
			(unsigned long long)s->n_ignored_columns);
	if (s->n_unknown_records)
		read_note(fn, ctx, MEMSCOPE_NOTE_UNKNOWN_RECORDS, input, s->n_unknown_records,
			"%s: %llu records of unknown type skipped", name,
			(unsigned long long)s->n_unknown_records);
}

int memscope_session_new(struct memscope_session **out, const struct memscope_read_opts *ro,
	memscope_note_fn fn, void *ctx, struct memscope_error *err)
{
	struct memscope_session *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	if (ro)
		s->ro = *ro;
	s->note_fn = fn;
	s->note_ctx = ctx;
	*out = s;
	return 0;
}

void memscope_session_free(struct memscope_session *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free((char *)s->in[i].name);
		free((char *)s->in[i].path);
	}
	for (i = 0; i < s->n_notes; i++)
		free((char *)s->notes[i].text);
	free(s->in);
	free(s->names);
	free(s->paths);
	free(s->notes);
	free(s->err_line);
	free(s);
}

const char *memscope_session_error_line(const struct memscope_session *s)
{
	return s->err_line;
}

struct memscope_read_opts *memscope_session_read_opts(struct memscope_session *s)
{
	return &s->ro;
}

size_t memscope_session_count(const struct memscope_session *s)
{
	return s->n;
}

const struct memscope_input *memscope_session_input(const struct memscope_session *s, size_t i)
{
	return &s->in[i];
}

const char *const *memscope_session_names(const struct memscope_session *s)
{
	return s->names;
}

const char *const *memscope_session_paths(const struct memscope_session *s)
{
	return s->paths;
}

const struct memscope_note *memscope_session_notes(const struct memscope_session *s, size_t *n)
{
	*n = s->n_notes;
	return s->notes;
}

/* Add an input named name (taken: freed on failure) read from path (copied). 0 or
 * MEMSCOPE_E_NOMEM. */
static int input_add(struct memscope_session *s, char *name, const char *path, uint32_t part,
	int traces_only, int as_one)
{
	struct memscope_input *in;
	char *p = strdup(path);

	if (!name || !p)
		goto nomem;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct memscope_input *ii = realloc(s->in, cap * sizeof(*ii));
		const char **nn = ii ? realloc(s->names, cap * sizeof(*nn)) : NULL;
		const char **pp = nn ? realloc(s->paths, cap * sizeof(*pp)) : NULL;

		if (ii)
			s->in = ii;
		if (nn)
			s->names = nn;
		if (!pp)
			goto nomem;
		s->paths = pp;
		s->cap = cap;
	}
	in = &s->in[s->n];
	memset(in, 0, sizeof(*in));
	in->name = name;
	in->path = p;
	in->part = part;
	in->traces_only = traces_only;
	in->as_one = as_one;
	s->names[s->n] = name;
	s->paths[s->n++] = p;
	return 0;
nomem:
	free(name);
	free(p);
	return MEMSCOPE_E_NOMEM;
}

void memscope_session_remove(struct memscope_session *s, size_t i)
{
	free((char *)s->in[i].name);
	free((char *)s->in[i].path);
	memmove(s->in + i, s->in + i + 1, (s->n - i - 1) * sizeof(*s->in));
	memmove(s->names + i, s->names + i + 1, (s->n - i - 1) * sizeof(*s->names));
	memmove(s->paths + i, s->paths + i + 1, (s->n - i - 1) * sizeof(*s->paths));
	s->n--;
}

/* ------------------------------------------------------------------------------------------ */
/* folders */

/* The walk's notes about a folder, kept until it is known whether the folder holds inputs. */
struct held {
	char **lines;
	size_t n, cap;
};

static void hold_note(void *ctx, uint32_t src, const char *msg)
{
	struct held *h = ctx;
	char *line = strdup(msg);

	(void)src;
	if (!line)
		return; /* a note lost to no memory: the walk's own failure says so */
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 8;
		char **ll = realloc(h->lines, cap * sizeof(*ll));

		if (!ll) {
			free(line);
			return;
		}
		h->lines = ll;
		h->cap = cap;
	}
	h->lines[h->n++] = line;
}

/* Give the held notes unless give is 0, and free them. */
static void held_flush(struct memscope_session *s, struct held *h, int give)
{
	size_t i;

	for (i = 0; i < h->n; i++) {
		if (give)
			note(s, MEMSCOPE_NOTE_WALK, MEMSCOPE_NOTE_NO_INPUT, 0, "%s", h->lines[i]);
		free(h->lines[i]);
	}
	free(h->lines);
	memset(h, 0, sizeof(*h));
}

/* Whether path is a folder (followed through links). */
static int is_folder(const char *path)
{
	struct stat sb;

	return strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/*
 * The inputs under folder dir into *w (memscope_walk; the caller frees it whatever the return):
 * dir itself when it is a profiler output. With traces 0, its python_trace files are said to be
 * left out. The walk's notes given (with one set, only when it holds one input). 0, or the
 * error (err set): the folder or a file in it cannot be read, it holds nothing to read.
 */
static int folder_inputs(struct memscope_session *s, const char *dir, int traces, int one,
	struct memscope_walk *w, struct memscope_error *err)
{
	struct held h = { 0 };
	uint64_t n_traces = 0;
	size_t i;
	char kinds[256];
	int rc;

	if ((rc = memscope_walk(&dir, 1, w, hold_note, &h, err))) {
		held_flush(s, &h, 0);
		return rc;
	}
	for (i = 0; i < w->n; i++) {
		const struct memscope_batch_input *in = &w->inputs[i];

		if (in->err_code) {
			held_flush(s, &h, 0);
			return fail(s, err, in->err_code, in->path, "%s", in->err_msg);
		}
		n_traces += in->n_traces;
	}
	/* for one input, a folder of several is an error of one line: its notes are not worth it */
	held_flush(s, &h, one ? w->n == 1 : w->n > 0);
	if (!w->n && !w->n_skipped)
		return fail(s, err, MEMSCOPE_E_INVALID, dir, "an empty folder: nothing to read");
	if (!w->n) /* the kinds of input files the walk looked for, from the reader table */
		return fail(s, err, MEMSCOPE_E_INVALID, dir,
			"no profiler memory files in the folder nor any other input under it "
			"(%s): nothing to read, %llu entr%s skipped",
			ms__reader_walk_inputs(kinds, sizeof(kinds)),
			(unsigned long long)w->n_skipped, w->n_skipped == 1 ? "y" : "ies");
	if (n_traces && !traces)
		note(s, MEMSCOPE_NOTE_TRACES_LEFT, MEMSCOPE_NOTE_NO_INPUT, n_traces,
			"%s: %llu python_trace file%s left out (function calls, no memory events; "
			"memscope-db stores them)",
			dir, (unsigned long long)n_traces, n_traces == 1 ? "" : "s");
	return 0;
}

/* The files of memscope_session_add before databases are split: names owned. */
struct files {
	char **paths;
	size_t n, cap;
};

/* Add path to f taking it (freed on failure, *path cleared): 0 or MEMSCOPE_E_NOMEM. */
static int files_take(struct files *f, char **path)
{
	if (!*path)
		return MEMSCOPE_E_NOMEM;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		char **pp = realloc(f->paths, cap * sizeof(*pp));

		if (!pp) {
			free(*path);
			*path = NULL;
			return MEMSCOPE_E_NOMEM;
		}
		f->paths = pp;
		f->cap = cap;
	}
	f->paths[f->n++] = *path;
	*path = NULL;
	return 0;
}

/* Add a copy of path to f: 0 or MEMSCOPE_E_NOMEM. */
static int files_add(struct files *f, const char *path)
{
	char *p = strdup(path);

	return files_take(f, &p);
}

/* The files arg names into f (a folder walked). 0 or the error (err set). */
static int arg_files(struct memscope_session *s, struct files *f, const char *arg, int traces,
	struct memscope_error *err)
{
	struct memscope_walk w;
	size_t i, k;
	int rc;

	if (!is_folder(arg))
		return files_add(f, arg);
	rc = folder_inputs(s, arg, traces, 0, &w, err);
	if (!rc && w.n == 1 && !strcmp(w.inputs[0].path, arg))
		rc = files_add(f, arg); /* a profiler output: as given */
	else
		for (i = 0; i < w.n && !rc; i++) {
			rc = files_take(f, &w.inputs[i].path);
			for (k = 0; traces && k < w.inputs[i].n_traces && !rc; k++)
				rc = files_take(f, &w.inputs[i].traces[k]);
		}
	memscope_walk_free(&w);
	return rc;
}

/*
 * The second and later names of one file in f (same device and inode: the same name twice, a
 * link, a file also found under a folder given) dropped, each said in a note: read twice, its
 * blocks would be counted twice. Standard input and names that cannot be looked at stay (their
 * read says why). 0 or MEMSCOPE_E_NOMEM.
 */
static int files_dedup(struct memscope_session *s, struct files *f)
{
	size_t n = f->n, n_keys = 0, i, j;
	struct ms__file_id *keys = calloc(n ? n : 1, sizeof(*keys));
	unsigned char *drop = calloc(n ? n : 1, 1);
	int rc = 0;

	if (!keys || !drop) {
		rc = MEMSCOPE_E_NOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct stat sb;

		if (strcmp(f->paths[i], "-") && !stat(f->paths[i], &sb))
			keys[n_keys++] = (struct ms__file_id){ sb.st_dev, sb.st_ino, i };
	}
	qsort(keys, n_keys, sizeof(*keys), ms__file_id_cmp);
	for (i = 1, j = 0; i < n_keys; i++) {
		if (keys[i].dev != keys[j].dev || keys[i].ino != keys[j].ino) {
			j = i;
			continue;
		}
		drop[keys[i].at] = 1;
		note(s, MEMSCOPE_NOTE_SAME_FILE, MEMSCOPE_NOTE_NO_INPUT, 0,
			"%s: the same as %s, listed once", f->paths[keys[i].at],
			f->paths[keys[j].at]);
	}
	for (i = 0, j = 0; i < n; i++) {
		if (drop[i])
			free(f->paths[i]);
		else
			f->paths[j++] = f->paths[i];
	}
	f->n = j;
out:
	free(keys);
	free(drop);
	return rc;
}

struct part_ctx {
	struct memscope_session *s;
	const char *path;
};

/* memscope_part_fn of memscope_session_add: one input of the database c->path, "DB:NAME". */
static int add_part(void *ctx, uint32_t part, const char *name)
{
	struct part_ctx *c = ctx;
	char *full = NULL;

	if (asprintf(&full, "%s:%s", c->path, name) < 0)
		return MEMSCOPE_E_NOMEM;
	return input_add(c->s, full, c->path, part, 0, 0);
}

/* The inputs of file path: itself, or a database's parts (and its python_trace tables with
 * traces). 0 or the error (err set). */
static int file_inputs(
	struct memscope_session *s, const char *path, int traces, struct memscope_error *err)
{
	struct part_ctx c = { s, path };
	int k;

	memscope_error_clear(err);
	k = memscope_source_parts(path, add_part, &c, err);
	if (k == 1)
		k = input_add(s, strdup(path), path, 0, 0, 0);
	else if (k > 1 && traces)
		k = input_add(s, strdup(path), path, 0, 1, 0);
	if (k < 0 && !err->code)
		memscope_error_set(err, k, path, 0, "%s", memscope_strerror(k));
	return k < 0 ? k : 0;
}

int memscope_session_add(struct memscope_session *s, const char *const *args, size_t n,
	unsigned flags, struct memscope_error *err)
{
	int traces = (flags & MEMSCOPE_SESSION_TRACES) != 0;
	struct files f = { 0 };
	size_t i;
	int rc = 0;

	fail_clear(s, err);
	for (i = 0; i < n && !rc; i++)
		rc = arg_files(s, &f, args[i], traces, err);
	if (!rc)
		rc = files_dedup(s, &f);
	for (i = 0; i < f.n && !rc; i++)
		rc = file_inputs(s, f.paths[i], traces, err);
	if (rc == MEMSCOPE_E_NOMEM && !err->code)
		memscope_error_set(err, rc, NULL, 0, "out of memory");
	for (i = 0; i < f.n; i++)
		free(f.paths[i]);
	free(f.paths);
	return rc;
}

int memscope_session_add_one(
	struct memscope_session *s, const char *arg, struct memscope_error *err)
{
	struct memscope_walk w;
	const char *path = arg;
	int rc;

	fail_clear(s, err);
	if (!is_folder(arg))
		goto add;
	rc = folder_inputs(s, arg, 0, 1, &w, err);
	if (!rc && w.n == 1 && strcmp(w.inputs[0].path, arg))
		path = w.inputs[0].path; /* the one input in the folder (else a profiler output) */
	else if (!rc && w.n > 1)
		rc = fail(s, err, MEMSCOPE_E_ARG, arg,
			"a folder of %zu inputs (%s, ...), read here as one input: give one of "
			"them",
			w.n, w.inputs[0].path);
	if (!rc)
		rc = input_add(s, strdup(path), path, 0, 0, 1);
	memscope_walk_free(&w);
	goto out;
add:
	rc = input_add(s, strdup(path), path, 0, 0, 1);
out:
	if (rc == MEMSCOPE_E_NOMEM && !err->code)
		memscope_error_set(err, rc, NULL, 0, "out of memory");
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* reading */

/* memscope_notice_fn of the session's reads: a reader's note as a note about input src. */
static void on_notice(void *ctx, uint32_t src, const char *msg)
{
	struct memscope_session *s = ctx;
	const char *in;
	char name[256];

	if (src < s->n)
		src = (uint32_t)(src + s->run_base);
	in = src < s->n ? s->in[src].name : "input";

	if (!strcmp(in, "-"))
		in = "standard input";
	memscope_text_escape(name, sizeof(name), in, strlen(in));
	note(s, MEMSCOPE_NOTE_HOW_READ, src < s->n ? src : MEMSCOPE_NOTE_NO_INPUT, 0, "%s: %s",
		name, msg);
}

/* memscope_progress_fn of the session's reads: the caller's, told the session's index of input
 * src (a read of one input, ms__session_run_input, reads it as src 0). */
static void on_progress(void *ctx, uint32_t src, uint64_t done, uint64_t total)
{
	const struct memscope_session *s = ctx;

	if (src < s->n)
		src = (uint32_t)(src + s->run_base);
	s->ro.progress(s->ro.progress_ctx, src, done, total);
}

/* The session's read options for its reads: its notice hook, and the caller's progress through
 * on_progress. */
static struct memscope_read_opts read_opts(struct memscope_session *s)
{
	struct memscope_read_opts o = s->ro;

	o.notice = on_notice;
	o.notice_ctx = s;
	if (o.progress) {
		o.progress = on_progress;
		o.progress_ctx = s;
	}
	return o;
}

int memscope_session_open(struct memscope_session *s, size_t i, struct memscope_strtab *st,
	struct memscope_source **out, struct memscope_error *err)
{
	struct memscope_read_opts o = read_opts(s);

	*out = NULL;
	fail_clear(s, err);
	o.src = (uint32_t)i;
	return memscope_source_open_part(out, s->in[i].path, s->in[i].part, st, &o, err);
}

static void run_input_read(
	void *ctx, uint32_t src, const char *name, const struct memscope_source *so, unsigned pass)
{
	struct memscope_session *s = ctx;
	struct memscope_input *in = &s->in[src + s->run_base];

	if (s->run_hooks && s->run_hooks->input_read)
		s->run_hooks->input_read(s->run_ctx, src, name, so, pass);
	src = (uint32_t)(src + s->run_base);
	(void)name; /* the file; the session's name for the input is in->name */
	in->n_reads++;
	if (pass != 1)
		return;
	in->stats = *memscope_source_stats(so);
	in->layout = in->stats.layout;
	memscope_read_notes(in->name, src, &in->stats, note_relay, s);
}

static void run_again(void *ctx, uint32_t src, uint64_t line, const char *why)
{
	struct memscope_session *s = ctx;

	if (s->run_hooks && s->run_hooks->again)
		s->run_hooks->again(s->run_ctx, src, line, why);
	src = (uint32_t)(src + s->run_base);
	note(s, MEMSCOPE_NOTE_AGAIN, src, line, "%s:%llu: %s; reading again", s->in[src].name,
		(unsigned long long)line, why);
}

/* An input of [from, to) added as one that is a database of several is refused. 0 or the error
 * (err set). */
static int refuse_several(
	struct memscope_session *s, size_t from, size_t to, struct memscope_error *err)
{
	size_t i;
	int np;

	for (i = from; i < to; i++) {
		if (!s->in[i].as_one)
			continue;
		np = memscope_source_parts(s->in[i].path, NULL, NULL, err);
		if (np < 0)
			return np;
		if (np > 1)
			return fail(s, err, MEMSCOPE_E_ARG, s->in[i].name,
				"a database of %d inputs, read here as one input: give one of them "
				"(memscope-db writes a database of each)",
				np);
	}
	return 0;
}

int memscope_session_run(struct memscope_session *s, struct memscope_strtab *st,
	const struct memscope_run_item *items, size_t n_items, struct memscope_error *err)
{
	static const struct memscope_run_hooks hooks = { run_input_read, run_again };
	struct memscope_read_opts o = read_opts(s);
	const char **paths = calloc(s->n ? s->n : 1, sizeof(*paths));
	uint32_t *parts = calloc(s->n ? s->n : 1, sizeof(*parts));
	size_t i;
	int rc;

	fail_clear(s, err);
	if (!paths || !parts) {
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
		goto out;
	}
	if ((rc = refuse_several(s, 0, s->n, err)))
		goto out;
	for (i = 0; i < s->n; i++) {
		paths[i] = s->in[i].path;
		parts[i] = s->in[i].part;
	}
	rc = ms__run(paths, parts, s->n, st, &o, items, n_items, &hooks, s, err);
out:
	free(paths);
	free(parts);
	return rc;
}

int ms__session_run_input(struct memscope_session *s, size_t i, struct memscope_strtab *st,
	const struct memscope_run_item *items, size_t n_items,
	const struct memscope_run_hooks *hooks, void *ctx, struct memscope_error *err)
{
	static const struct memscope_run_hooks own = { run_input_read, run_again };
	struct memscope_read_opts o = read_opts(s);
	const char *path;
	uint32_t part;
	int rc;

	fail_clear(s, err);
	if (i >= s->n)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "no input %zu", i);
	if ((rc = refuse_several(s, i, i + 1, err)))
		return rc;
	path = s->in[i].path;
	part = s->in[i].part;
	s->run_base = i;
	s->run_hooks = hooks;
	s->run_ctx = ctx;
	rc = ms__run(&path, &part, 1, st, &o, items, n_items, &own, s, err);
	s->run_base = 0;
	s->run_hooks = NULL;
	s->run_ctx = NULL;
	return rc;
}
