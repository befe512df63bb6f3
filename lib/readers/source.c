/* Opening inputs (file, stdin or memory), their format from the first bytes (registry.c) and
 * the read through its reader. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/internal.h"
#include "reader.h"

/* Fill the peek buffer (up to READ_CHUNK bytes, or less at end of input). */
static int peek(struct memscope_source *src, struct memscope_error *err)
{
	while (src->peek_len < READ_CHUNK) {
		ssize_t r = read(src->fd, src->buf + src->peek_len, READ_CHUNK - src->peek_len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return memscope_error_set(err, MEMSCOPE_E_IO, src->name, 0,
				"read failed: %s", strerror(errno));
		if (r == 0) {
			src->eof = 1;
			break;
		}
		src->peek_len += (size_t)r;
	}
	return 0;
}

/* The format of the peeked bytes: the first reader of the registry that recognises them. */
static int detect(struct memscope_source *src, struct memscope_error *err)
{
	const unsigned char *p = src->fd < 0 ? src->mem : src->buf;
	int rc;

	if (src->peek_len == 0)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, 0, "empty file");
	rc = reader_detect(&src->reader, p, src->peek_len, src->eof, src->name, err);
	if (!rc)
		src->format = src->reader->format;
	return rc;
}

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
	struct memscope_source *src;
	int rc;

	if (!out || !path || !st)
		return memscope_error_set(err, MEMSCOPE_E_ARG, path, 0, "bad argument");
	rc = source_new(&src, path, st, opts, err);
	if (rc)
		return rc;
	if (strcmp(path, "-") == 0) {
		src->fd = STDIN_FILENO;
	} else {
		src->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (src->fd < 0) {
			rc = memscope_error_set(
				err, MEMSCOPE_E_IO, path, 0, "cannot open: %s", strerror(errno));
			goto out;
		}
		src->own_fd = 1;
	}
	src->buf = malloc(READ_CHUNK);
	if (!src->buf) {
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, path, 0, "out of memory");
		goto out;
	}
	rc = peek(src, err);
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
	struct memscope_source *src;
	int rc;

	if (!out || (!buf && len) || !st)
		return memscope_error_set(err, MEMSCOPE_E_ARG, name, 0, "bad argument");
	rc = source_new(&src, name ? name : "<memory>", st, opts, err);
	if (rc)
		return rc;
	src->mem = buf ? buf : (const unsigned char *)"";
	src->mem_len = len;
	src->peek_len = len;
	src->eof = 1;
	rc = detect(src, err);
	if (rc)
		memscope_source_close(src);
	else
		*out = src;
	return rc;
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
	return rc;
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
	return rc;
}

enum memscope_format memscope_source_format(const struct memscope_source *src)
{
	return src->format;
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
	free(src->buf);
	free(src->name);
	free(src);
}

int memscope_source_rereadable(const char *path)
{
	struct stat sb;

	if (strcmp(path, "-") == 0)
		return 0;
	if (stat(path, &sb))
		return MEMSCOPE_E_IO;
	return S_ISREG(sb.st_mode) ? 1 : 0;
}
