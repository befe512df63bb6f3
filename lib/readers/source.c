/* Opening inputs (file, stdin or memory, any of them gzip or zstd compressed), their format from
 * the first bytes (registry.c) and the read through its reader. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/internal.h"
#include "decompress.h"
#include "reader.h"

/*
 * Fill the peek buffer (up to READ_CHUNK bytes, or less at end of input). Compressed data that
 * fails after some bytes came out stops the peek short of its end: the failure is the reader's
 * to report, after the events before it.
 */
static int peek(struct memscope_source *src, struct memscope_error *err)
{
	while (src->peek_len < READ_CHUNK && !(src->peek_len && ms__zsrc_failing(src->z))) {
		ssize_t r = ms__source_pull(
			src, src->buf + src->peek_len, READ_CHUNK - src->peek_len, err);

		if (r < 0)
			return (int)r;
		if (r == 0) {
			src->eof = 1;
			break;
		}
		src->peek_len += (size_t)r;
	}
	return 0;
}

/* The decompressor's raw bytes: src's file (ms__zsrc_read_fn). */
static ssize_t read_raw(void *src, unsigned char *dst, size_t cap, struct memscope_error *err)
{
	return ms__source_read_file(src, dst, cap, err);
}

/*
 * A compressed input (by its magic) gets its decompressor, fed the bytes peeked (a file's, then
 * the rest of the file) or all of a memory input's, and the peek is done again through it into
 * src->buf, so the format is detected from decompressed bytes. 0 or the error.
 */
static int unwrap(struct memscope_source *src, struct memscope_error *err)
{
	int file = src->fd >= 0;
	const unsigned char *p = file ? src->buf : src->mem;
	enum zkind k = ms__zkind_of(p, src->peek_len);
	int rc;

	if (k == ZKIND_NONE)
		return 0;
	rc = ms__zsrc_open(&src->z, k, p, src->peek_len, src->eof, file ? read_raw : NULL, src,
		src->name, err);
	if (!rc && !src->buf && !(src->buf = malloc(READ_CHUNK)))
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	if (rc)
		return rc;
	src->peek_len = 0; /* the plain bytes, peeked again through z */
	src->eof = 0;
	return peek(src, err);
}

/* The format of the peeked bytes: the first reader of the registry that recognises them. */
static int detect(struct memscope_source *src, struct memscope_error *err)
{
	const unsigned char *p = source_whole(src) ? src->mem : src->buf;
	int rc;

	if (src->peek_len == 0 && !src->zcut.code)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, 0,
			src->z ? "empty file (once decompressed)" : "empty file");
	rc = src->peek_len
		     ? ms__reader_detect(&src->reader, p, src->peek_len, src->eof, src->name, err)
		     : src->zcut.code;
	if (rc && src->zcut.code) {
		/* the compressed data broke before anything could be read: that is the error */
		if (err)
			*err = src->zcut;
		return src->zcut.code;
	}
	if (rc)
		return rc;
	src->format = src->reader->format;
	/* the reader's second look: a database may be an Nsight Systems export, read by its own
	 * reader, or compressed, which SQLite cannot read */
	if (src->reader->refine && (rc = src->reader->refine(src, &src->format, err)))
		return rc;
	if (src->format != src->reader->format)
		src->reader = ms__reader_of(src->format);
	if (src->part > 1 && !src->reader->parts)
		return memscope_error_set(
			err, MEMSCOPE_E_ARG, src->name, 0, "holds one input, not %u", src->part);
	src->progress_on = !src->reader->by_name && src->fd >= 0;
	ms__source_report(src);
	return 0;
}

/* How a folder's reader opens its files (struct reader's open_path). */
static const struct source_files folder_files = { memscope_source_open, memscope_source_close };

static int source_new(struct memscope_source **out, const char *name, struct memscope_strtab *st,
	const struct memscope_read_opts *opts, struct memscope_error *err)
{
	struct memscope_source *src = calloc(1, sizeof(*src));

	*out = NULL;
	if (!src || !(src->name = strdup(name))) {
		free(src);
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, name, 0, "out of memory");
	}
	src->fd = -1;
	src->chunk = READ_CHUNK;
	src->st = st;
	if (opts)
		src->opts = *opts;
	*out = src;
	return 0;
}

int memscope_source_open(struct memscope_source **out, const char *path, struct memscope_strtab *st,
	const struct memscope_read_opts *opts, struct memscope_error *err)
{
	return memscope_source_open_part(out, path, 0, st, opts, err);
}

int memscope_source_open_part(struct memscope_source **out, const char *path, uint32_t part,
	struct memscope_strtab *st, const struct memscope_read_opts *opts,
	struct memscope_error *err)
{
	struct memscope_source *src;
	struct stat sb;
	int rc;

	if (!out || !path || !st)
		return memscope_error_set(err, MEMSCOPE_E_ARG, path, 0, "bad argument");
	rc = source_new(&src, path, st, opts, err);
	if (rc)
		return rc;
	src->part = part;
	if (strcmp(path, "-") == 0) {
		src->fd = STDIN_FILENO;
	} else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		/* a folder (a profiler's output): its reader opens its files as it reads them */
		src->reader = ms__reader_of_folder();
		src->format = src->reader->format;
		rc = src->part > 1 ? memscope_error_set(err, MEMSCOPE_E_ARG, path, 0,
					     "holds one input, not %u", src->part)
				   : src->reader->open_path(src, path, &folder_files, err);
		goto out;
	} else {
		src->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (src->fd < 0) {
			rc = memscope_error_set(
				err, MEMSCOPE_E_IO, path, 0, "cannot open: %s", strerror(errno));
			goto out;
		}
		src->own_fd = 1;
	}
	if (fstat(src->fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0)
		src->raw_total = (uint64_t)sb.st_size;
	src->buf = malloc(READ_CHUNK);
	if (!src->buf) {
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, path, 0, "out of memory");
		goto out;
	}
	rc = peek(src, err);
	if (!rc)
		rc = unwrap(src, err);
	if (!rc)
		rc = detect(src, err);
out:
	if (rc)
		memscope_source_close(src);
	else
		*out = src;
	return rc;
}

int memscope_source_open_mem(struct memscope_source **out, const void *buf, size_t len,
	const char *name, struct memscope_strtab *st, const struct memscope_read_opts *opts,
	struct memscope_error *err)
{
	return memscope_source_open_mem_part(out, buf, len, name, 0, st, opts, err);
}

int memscope_source_open_mem_part(struct memscope_source **out, const void *buf, size_t len,
	const char *name, uint32_t part, struct memscope_strtab *st,
	const struct memscope_read_opts *opts, struct memscope_error *err)
{
	struct memscope_source *src;
	int rc;

	if (!out || (!buf && len) || !st)
		return memscope_error_set(err, MEMSCOPE_E_ARG, name, 0, "bad argument");
	rc = source_new(&src, name ? name : "<memory>", st, opts, err);
	if (rc)
		return rc;
	src->part = part;
	src->mem = buf ? buf : (const unsigned char *)"";
	src->mem_len = len;
	src->peek_len = len;
	src->eof = 1;
	rc = unwrap(src, err);
	if (!rc)
		rc = detect(src, err);
	if (rc)
		memscope_source_close(src);
	else
		*out = src;
	return rc;
}

/*
 * After a read that returned rc: a compressed stream that broke is where the input was cut,
 * whatever its reader made of the bytes before the break (a capture "ends inside a record", a
 * row is cut short): in lenient mode that is kept in the stats, in strict mode it is the error
 * (but a callback's own). Returns the read's status.
 */
static int read_end(struct memscope_source *src, int rc, struct memscope_error *err)
{
	if (!src->zcut.code)
		return rc;
	if (src->opts.lenient) {
		src->stats.cut = src->zcut;
		return rc;
	}
	if (rc && rc != MEMSCOPE_E_INVALID && rc != MEMSCOPE_E_TRUNCATED)
		return rc;
	/* a row the reader placed may be the one the break cut short, or a bad row well before
	 * it (a small file is decompressed to its break before the first row is read): say both */
	if (rc && err && err->line) {
		char row[MEMSCOPE_ERROR_MSG_MAX];

		snprintf(row, sizeof(row), "%s", err->msg);
		/* each part cut to fit MEMSCOPE_ERROR_MSG_MAX (512) */
		snprintf(err->msg, sizeof(err->msg), "%.240s; and the file is cut: %.240s", row,
			src->zcut.msg);
		if (src->zcut.code ==
			MEMSCOPE_E_TRUNCATED) /* the cut is what --lenient reads past */
			err->code = rc = MEMSCOPE_E_TRUNCATED;
		return rc;
	}
	if (err)
		*err = src->zcut;
	return src->zcut.code;
}

int memscope_source_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	int rc;

	if (!src || !fn)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "bad argument");
	if (src->read_done)
		return memscope_error_set(err, MEMSCOPE_E_ARG, src->name, 0, "source already read");
	src->read_done = 1;
	if (err)
		memscope_error_clear(err);
	if (!src->reader->read)
		return memscope_error_set(err, MEMSCOPE_E_UNSUPPORTED, src->name, 0,
			"%s holds function calls, no memory events", src->reader->what);
	rc = src->reader->read(src, fn, ctx, err);
	/* a callback's own failure (out of memory) has no message yet */
	if (rc < 0 && err && !err->code)
		memscope_error_set(err, rc, src->name, 0, "%s", memscope_strerror(rc));
	return read_end(src, rc, err);
}

int memscope_source_read_trace(
	struct memscope_source *src, memscope_trace_fn fn, void *ctx, struct memscope_error *err)
{
	int rc;

	if (!src || !fn)
		return memscope_error_set(err, MEMSCOPE_E_ARG, NULL, 0, "bad argument");
	if (!src->reader->read_trace)
		return memscope_error_set(err, MEMSCOPE_E_UNSUPPORTED, src->name, 0,
			"not a python_trace file or database");
	if (src->read_done)
		return memscope_error_set(err, MEMSCOPE_E_ARG, src->name, 0, "source already read");
	src->read_done = 1;
	if (err)
		memscope_error_clear(err);
	rc = src->reader->read_trace(src, fn, ctx, err);
	if (rc < 0 && err && !err->code)
		memscope_error_set(err, rc, src->name, 0, "%s", memscope_strerror(rc));
	return read_end(src, rc, err);
}

enum memscope_format memscope_source_format(const struct memscope_source *src)
{
	return src->format;
}

enum memscope_compression memscope_source_compression(const struct memscope_source *src)
{
	return ms__zsrc_kind(src->z) == ZKIND_GZIP   ? MEMSCOPE_COMPRESS_GZIP
	       : ms__zsrc_kind(src->z) == ZKIND_ZSTD ? MEMSCOPE_COMPRESS_ZSTD
						     : MEMSCOPE_COMPRESS_NONE;
}

const struct memscope_read_stats *memscope_source_stats(const struct memscope_source *src)
{
	return &src->stats;
}

const char *memscope_source_name(const struct memscope_source *src)
{
	return src->name;
}

void memscope_source_close(struct memscope_source *src)
{
	if (!src)
		return;
	if (src->own_fd && src->fd >= 0)
		close(src->fd);
	ms__zsrc_free(src->z);
	if (src->reader && src->reader->close)
		src->reader->close(src);
	free(src->buf);
	free(src->name);
	free(src);
}
