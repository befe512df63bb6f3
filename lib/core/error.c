/* The error record: setting it with a position and formatting it as a compiler-style diagnostic. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "memscope/error.h"

size_t ms__utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned c = *p;
	size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
	size_t k;

	for (k = 1; len && k < len; k++)
		if (p + k >= end || (p[k] & 0xc0) != 0x80)
			len = 0;
	/* overlong forms and surrogates are invalid too */
	if ((len == 2 && c < 0xc2) || (len == 3 && c == 0xe0 && p[1] < 0xa0) ||
		(len == 3 && c == 0xed && p[1] >= 0xa0) ||
		(len == 4 &&
			(c > 0xf4 || (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))))
		len = 0;
	return len;
}

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
	memscope_text_escape(
		err->file, sizeof(err->file), file ? file : "", file ? strlen(file) : 0);
	memscope_text_vformat(err->msg, sizeof(err->msg), fmt, ap);
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

size_t memscope_text_escape(char *buf, size_t n, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t w = 0;

	if (!n)
		return 0;
	while (p < end) {
		size_t k = ms__utf8_seq(p, end);

		/* C0, DEL and C1 (U+0080..U+009F: terminals act on them too) */
		if ((k == 1 && (*p < 0x20 || *p == 0x7f)) || (k == 2 && *p == 0xc2 && p[1] < 0xa0))
			k = 0;
		if (k ? w + k >= n : w + 4 >= n)
			break;
		if (k) {
			memcpy(buf + w, p, k);
			w += k;
			p += k;
			continue;
		}
		buf[w++] = '\\';
		buf[w++] = 'x';
		buf[w++] = hex[*p >> 4];
		buf[w++] = hex[*p++ & 15];
	}
	buf[w] = '\0';
	return w;
}

size_t memscope_text_vformat(char *buf, size_t n, const char *fmt, va_list ap)
{
	char raw[4096];
	int len = vsnprintf(raw, sizeof(raw), fmt, ap);

	return memscope_text_escape(buf, n, raw,
		len < 0			    ? 0
		: (size_t)len < sizeof(raw) ? (size_t)len
					    : sizeof(raw) - 1);
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
