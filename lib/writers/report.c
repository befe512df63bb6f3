/* Implementation of the report writers' shared helpers (report.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "memscope/memscope.h"
#include "memscope/strtab.h"
#include "report.h"

/* ---- how a write ended ---- */

int ms__write_failed(struct memscope_error *err)
{
	return memscope_error_set(
		err, MEMSCOPE_E_IO, NULL, 0, "write failed: %s", strerror(errno ? errno : EIO));
}

int ms__write_end(FILE *out, int nomem, struct memscope_error *err)
{
	if (nomem)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	if (ferror(out))
		return ms__write_failed(err);
	return 0;
}

/* ---- JSON ---- */

void ms__json_bytes(FILE *out, const char *key, uint64_t bytes)
{
	fprintf(out, ",\"%s\":%" PRIu64, key, bytes);
	if (bytes == MEMSCOPE_BYTES_OVERFLOW)
		fprintf(out, ",\"%s_overflowed\":true", key);
}

/* s[0..n) as a JSON string; invalid UTF-8 becomes U+FFFD so the output stays valid JSON. */
void ms__json_str(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	fputc('"', out);
	while (p < end) {
		unsigned c = *p;
		size_t len;

		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc((int)c, out);
			p++;
			continue;
		}
		if (c < 0x20) {
			fprintf(out, "\\u%04x", c);
			p++;
			continue;
		}
		if (!(len = ms__utf8_seq(p, end))) {
			fputs("\xef\xbf\xbd", out);
			p++;
			continue;
		}
		fwrite(p, 1, len, out);
		p += len;
	}
	fputc('"', out);
}

void ms__json_cstr(FILE *out, const char *s)
{
	ms__json_str(out, s, strlen(s));
}

void ms__json_id(FILE *out, const struct memscope_strtab *st, uint32_t id)
{
	size_t n;
	const char *s = memscope_strtab_str(st, id, &n);

	ms__json_str(out, s ? s : "", s ? n : 0);
}

static void json_frames(FILE *out, const struct memscope_strtab *st, uint32_t stack)
{
	size_t n, i;
	const uint32_t *fr = memscope_strtab_stack(st, stack, &n);

	fputc('[', out);
	for (i = 0; fr && i < n; i++) {
		if (i)
			fputc(',', out);
		ms__json_id(out, st, fr[i]);
	}
	fputc(']', out);
}

void ms__json_stack(FILE *out, const struct memscope_strtab *st, uint32_t py, uint32_t c)
{
	fputs("{\"python\":", out);
	json_frames(out, st, py);
	fputs(",\"c\":", out);
	json_frames(out, st, c);
	fputc('}', out);
}

void ms__json_id_or_null(FILE *out, const struct memscope_strtab *st, uint32_t id)
{
	if (id)
		ms__json_id(out, st, id);
	else
		fputs("null", out);
}

/* ---- CSV ---- */

static int csv_special(const char *s, size_t n)
{
	return memchr(s, ',', n) || memchr(s, '"', n) || memchr(s, '\n', n) || memchr(s, '\r', n);
}

/* Text inside a quoted CSV field: quotes doubled. */
static void csv_quoted(FILE *out, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '"')
			fputc('"', out);
		fputc(s[i], out);
	}
}

/* A CSV field, quoted when it holds a comma, quote or line break. */
size_t ms__xml_next_char(const unsigned char *p, const unsigned char *end, int *ok)
{
	size_t len = ms__utf8_seq(p, end);

	/* U+FFFE and U+FFFF are not XML characters */
	*ok = len && !(len == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe);
	return len ? len : 1;
}

void ms__xml_char(FILE *out, const unsigned char *p, size_t len, int ok)
{
	if (!ok)
		fputc('?', out);
	else if (*p == '<')
		fputs("&lt;", out);
	else if (*p == '>')
		fputs("&gt;", out);
	else if (*p == '&')
		fputs("&amp;", out);
	else if (*p == '"')
		fputs("&quot;", out);
	else if (*p < 0x20)
		fputc(' ', out);
	else
		fwrite(p, 1, len, out);
}

void ms__xml_str(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t len;
	int ok;

	for (; p < end; p += len) {
		len = ms__xml_next_char(p, end, &ok);
		ms__xml_char(out, p, len, ok);
	}
}

void ms__csv_field(FILE *out, const char *s, size_t n)
{
	if (!csv_special(s, n)) {
		fwrite(s, 1, n, out);
		return;
	}
	fputc('"', out);
	csv_quoted(out, s, n);
	fputc('"', out);
}

void ms__csv_stack(FILE *out, const struct memscope_strtab *st, uint32_t stack)
{
	size_t n, i, len;
	const uint32_t *fr = memscope_strtab_stack(st, stack, &n);
	int quote = fr && n > 1;
	const char *s;

	for (i = 0; fr && i < n && !quote; i++) {
		s = memscope_strtab_str(st, fr[i], &len);
		quote = csv_special(s, len);
	}
	if (quote)
		fputc('"', out);
	for (i = 0; fr && i < n; i++) {
		s = memscope_strtab_str(st, fr[i], &len);
		if (i)
			fputc('\n', out);
		csv_quoted(out, s, len);
	}
	if (quote)
		fputc('"', out);
}
