/* The error record: setting it with a position and formatting it as a compiler-style diagnostic. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memscope/error.h"

void memscope_error_clear(struct memscope_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

__attribute__((format(printf, 7, 0))) static int error_vset(struct memscope_error *err, int code,
	const char *file, uint64_t line, uint64_t offset, int has_offset, const char *fmt,
	va_list ap)
{
	if (!err)
		return code;
	err->code = code;
	err->line = line;
	err->offset = offset;
	err->has_offset = has_offset;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return code;
}

int memscope_error_set(
	struct memscope_error *err, int code, const char *file, uint64_t line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = error_vset(err, code, file, line, 0, 0, fmt, ap);
	va_end(ap);
	return code;
}

int memscope_error_set_offset(struct memscope_error *err, int code, const char *file,
	uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = error_vset(err, code, file, 0, offset, 1, fmt, ap);
	va_end(ap);
	return code;
}

size_t memscope_error_format(const struct memscope_error *err, char *buf, size_t n)
{
	const char *msg = err->msg[0] ? err->msg : memscope_strerror(err->code);
	int r;

	if (!err->file[0])
		r = snprintf(buf, n, "%s", msg);
	else if (err->line)
		r = snprintf(buf, n, "%s:%" PRIu64 ": %s", err->file, err->line, msg);
	else if (err->has_offset)
		r = snprintf(buf, n, "%s: byte %" PRIu64 ": %s", err->file, err->offset, msg);
	else
		r = snprintf(buf, n, "%s: %s", err->file, msg);
	return r < 0 ? 0 : (size_t)r;
}

const char *memscope_strerror(int code)
{
	switch (code) {
	case MEMSCOPE_OK:
		return "success";
	case MEMSCOPE_E_NOMEM:
		return "out of memory";
	case MEMSCOPE_E_IO:
		return "input/output error";
	case MEMSCOPE_E_INVALID:
		return "invalid input";
	case MEMSCOPE_E_TRUNCATED:
		return "truncated input";
	case MEMSCOPE_E_UNSUPPORTED:
		return "unsupported format";
	case MEMSCOPE_E_ARG:
		return "invalid argument";
	case MEMSCOPE_E_STOPPED:
		return "stopped by callback";
	default:
		return "unknown error";
	}
}
