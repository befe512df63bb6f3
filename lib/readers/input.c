/* What every reader shares, below them all: the bytes of a file (decompressed when it is
 * compressed), the chunked input window over them, and bad-row accounting. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/internal.h"
#include "decompress.h"
#include "reader.h"

void ms__source_report(struct memscope_source *src)
{
	if (src->progress_on && src->opts.progress)
		src->opts.progress(
			src->opts.progress_ctx, src->opts.src, src->raw_done, src->raw_total);
}

/*
 * Whether a read of r bytes (0: the end) that brought raw_done where it is should be reported:
 * at most once per READ_CHUNK bytes of the file whatever read(2) returns (a pipe gives 64 KiB at a
 * time), when a read crosses a multiple of READ_CHUNK or reaches the file's size, and once at the
 * end unless that was just reported, so the last report is the whole file.
 */
static int report_due(const struct memscope_source *src, uint64_t r)
{
	uint64_t done = src->raw_done;
	int reached = src->raw_total && done >= src->raw_total;

	if (r == 0)
		return done % READ_CHUNK != 0 && !reached;
	return (done - r) / READ_CHUNK != done / READ_CHUNK ||
	       (reached && done - r < src->raw_total);
}

ssize_t ms__source_read_file(
	struct memscope_source *src, unsigned char *dst, size_t cap, struct memscope_error *err)
{
	ssize_t r;

	do
		r = read(src->fd, dst, cap);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return memscope_error_set(
			err, MEMSCOPE_E_IO, src->name, 0, "read failed: %s", strerror(errno));
	src->raw_done += (uint64_t)r;
	if (report_due(src, (uint64_t)r))
		ms__source_report(src);
	return r;
}

ssize_t ms__source_pull(
	struct memscope_source *src, unsigned char *dst, size_t cap, struct memscope_error *err)
{
	if (src->z) {
		ssize_t r = ms__zsrc_pull(src->z, dst, cap, err);
		const struct memscope_error *cut = ms__zsrc_cut(src->z);

		if (cut && !src->zcut.code)
			src->zcut = *cut;
		return r;
	}
	if (src->fd < 0)
		return 0; /* a memory input is all in its window */
	return ms__source_read_file(src, dst, cap, err);
}

int ms__window_open(struct window *w, struct memscope_source *src, struct memscope_error *err)
{
	memset(w, 0, sizeof(*w));
	if (source_whole(src)) {
		w->data = (const char *)src->mem;
		w->len = src->mem_len;
		w->final = 1;
		src->stats.bytes = src->mem_len;
		return 0;
	}
	if (ms__buf_reserve(&w->own, 2 * READ_CHUNK))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	/* the sniffed bytes first */
	memcpy(w->own.p, src->buf, src->peek_len);
	w->own.len = src->peek_len;
	w->data = w->own.p;
	w->len = w->own.len;
	w->final = src->eof;
	src->stats.bytes = src->peek_len;
	return 0;
}

int ms__window_fill(struct window *w, struct memscope_source *src, size_t max_pending,
	struct memscope_error *err)
{
	size_t pending = w->len - w->start;
	ssize_t r;

	if (w->final)
		return 0;
	if (pending > max_pending)
		return memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, 0,
			"a row or record longer than %zu MiB", max_pending >> 20);
	if (w->start) {
		memmove(w->own.p, w->own.p + w->start, pending);
		w->own.len = pending;
		w->start = 0;
	}
	if (ms__buf_reserve(&w->own, src->chunk))
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	r = ms__source_pull(src, (unsigned char *)w->own.p + w->own.len, src->chunk, err);
	if (r < 0)
		return (int)r;
	if (r == 0)
		w->final = 1;
	w->own.len += (size_t)r;
	src->stats.bytes += (uint64_t)r;
	w->data = w->own.p;
	w->len = w->own.len;
	return 0;
}

void ms__window_close(struct window *w)
{
	ms__buf_free(&w->own);
}

int ms__source_bad(
	struct memscope_source *src, const struct memscope_error *e, struct memscope_error *err)
{
	if (!src->opts.lenient) {
		if (err)
			*err = *e;
		return e->code;
	}
	if (src->stats.n_skipped++ == 0)
		src->stats.first_skip = *e;
	return 0;
}

int ms__source_bad_row(struct memscope_source *src, struct memscope_error *err, uint64_t line,
	const char *fmt, ...)
{
	char msg[MEMSCOPE_ERROR_MSG_MAX];
	struct memscope_error e;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memscope_error_set(&e, MEMSCOPE_E_INVALID, src->name, line, "%s", msg);
	return ms__source_bad(src, &e, err);
}

void ms__source_notice(struct memscope_source *src, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!src->opts.notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	src->opts.notice(src->opts.notice_ctx, src->opts.src, msg);
}

int memscope_source_rereadable(const char *path)
{
	struct stat sb;

	if (strcmp(path, "-") == 0)
		return 0;
	if (stat(path, &sb))
		return MEMSCOPE_E_IO;
	return S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode) ? 1 : 0;
}
