/* C frames as people read them: backtrace_symbols lines demangled, without paths, offsets and
 * addresses; memscope-record's "function (file:line)" frames as they are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "memscope/error.h"
#include "memscope/strtab.h"

/* libstdc++'s Itanium C++ ABI demangler (the one GDB, perf and c++filt agree with) */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* The last '/'-separated part of s[0..n). */
static const char *base_name(const char *s, size_t n, size_t *base_len)
{
	const char *b = s;
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '/')
			b = s + i + 1;
	*base_len = n - (size_t)(b - s);
	return b;
}

/* Whether s[0..n) is "+0x" and hex digits. */
static int is_offset(const char *s, size_t n)
{
	size_t i;

	if (n < 4 || memcmp(s, "+0x", 3) != 0)
		return 0;
	for (i = 3; i < n; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return 0;
	return 1;
}

size_t memscope_frame_text(const char *frame, size_t len, char *out, size_t size)
{
	const char *open, *close, *sym, *mod, *plus = NULL;
	size_t mod_len, sym_len, i;
	char name[1024];
	char *dem = NULL;
	int status = -1, w;

	/* module(symbol+0xoff) [0xaddr]: the "(" after the module, the ")" before " [0x" */
	open = memchr(frame, '(', len);
	close = len ? frame + len - 1 : frame;
	while (close > frame && *close != ')')
		close--;
	/* "function (file:line)", memscope-record's symbolized frames, is kept as it is */
	if (!open || close <= open || open == frame || open[-1] == ' ')
		goto copy;
	for (i = (size_t)(close - frame) + 1; i < len; i++)
		if (!strchr(" []0123456789abcdefxABCDEF", frame[i]))
			goto copy;
	sym = open + 1;
	sym_len = (size_t)(close - sym);
	for (i = sym_len; i > 0; i--)
		if (sym[i - 1] == '+') {
			plus = sym + i - 1;
			break;
		}
	/* backtrace_symbols writes an offset; without one it is a C++ signature ("f(int)
	 * (x.cpp:9)", a PyTorch snapshot's C++ frame), kept */
	if (!plus || !is_offset(plus, (size_t)(close - plus)))
		goto copy;
	sym_len = (size_t)(plus - sym);
	mod = base_name(frame, (size_t)(open - frame), &mod_len);
	if (!sym_len) /* no symbol: the offset in the module is all that names the code */
		w = snprintf(out, size, "%.*s%.*s", (int)mod_len, mod, (int)(close - plus), plus);
	else {
		if (sym_len < sizeof(name) && sym_len > 2 && sym[0] == '_' && sym[1] == 'Z') {
			memcpy(name, sym, sym_len);
			name[sym_len] = 0;
			dem = __cxa_demangle(name, NULL, NULL, &status);
		}
		if (dem && !status)
			w = snprintf(out, size, "%s (%.*s)", dem, (int)mod_len, mod);
		else
			w = snprintf(
				out, size, "%.*s (%.*s)", (int)sym_len, sym, (int)mod_len, mod);
		free(dem);
	}
	return w < 0 ? 0 : (size_t)w;
copy:
	if (size) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(out, frame, n);
		out[n] = 0;
	}
	return len;
}

int memscope_strtab_frame_text(struct memscope_strtab *st, uint32_t id, uint32_t *text)
{
	char small[512], *big = NULL;
	size_t len = 0, need;
	const char *s = memscope_strtab_str(st, id, &len);
	int rc;

	if (!s) {
		*text = id;
		return 0;
	}
	need = memscope_frame_text(s, len, small, sizeof(small));
	if (need >= sizeof(small)) {
		if (need == SIZE_MAX || !(big = malloc(need + 1)))
			return MEMSCOPE_E_NOMEM;
		memscope_frame_text(s, len, big, need + 1);
	}
	rc = memscope_strtab_intern(st, big ? big : small, need, text);
	free(big);
	return rc ? MEMSCOPE_E_NOMEM : 0;
}
