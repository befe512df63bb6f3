/* Status codes and the caller-owned error record every fallible libmemscope call fills in. */
#ifndef MEMSCOPE_ERROR_H
#define MEMSCOPE_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Fallible functions return 0 or one of these negative codes; streaming reads hand each item to a
 * callback, whose non-zero return stops them (MEMSCOPE_E_STOPPED, or its own negative code). */
enum memscope_status {
	MEMSCOPE_OK = 0,
	MEMSCOPE_E_NOMEM = -1,	 /* out of memory */
	MEMSCOPE_E_IO = -2,	 /* read/write/open failed; errno text in the message */
	MEMSCOPE_E_INVALID = -3, /* malformed input: the message names the position */
	MEMSCOPE_E_TRUNCATED =
		-4, /* input ends early (cut file); everything before was delivered */
	MEMSCOPE_E_UNSUPPORTED = -5, /* unknown format or format version */
	MEMSCOPE_E_ARG = -6,	     /* caller passed a bad argument */
	MEMSCOPE_E_STOPPED = -7,     /* a callback asked to stop */
};

#define MEMSCOPE_ERROR_FILE_MAX 512
#define MEMSCOPE_ERROR_MSG_MAX 512

/*
 * Where and why something failed. Owned by the caller (usually on the stack); the library only
 * writes into it. Position: line (1-based, text inputs) or offset (bytes, binary inputs); both 0
 * when the error has no position (e.g. open failed).
 */
struct memscope_error {
	int code;
	uint64_t line;
	uint64_t offset;
	int has_offset;
	char file[MEMSCOPE_ERROR_FILE_MAX];
	char msg[MEMSCOPE_ERROR_MSG_MAX];
};

/* Reset err to "no error". err may be NULL. */
void memscope_error_clear(struct memscope_error *err);

/*
 * Record an error at a text position (line 0: none). file may be NULL. The file name and the
 * message are kept escaped (memscope_text_escape). Returns code, so callers
 * can write `return memscope_error_set(err, MEMSCOPE_E_INVALID, ...)`. err may be NULL.
 */
int memscope_error_set(struct memscope_error *err, int code, const char *file, uint64_t line,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* As memscope_error_set, at a byte offset of a binary input. */
int memscope_error_set_offset(struct memscope_error *err, int code, const char *file,
	uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Compiler-style text "file:line: msg", "file: byte N: msg" or "file: msg" into buf (always
 * NUL-terminated when n > 0). Returns the length it wanted to write.
 */
size_t memscope_error_format(const struct memscope_error *err, char *buf, size_t n);

/*
 * s[0..len) as one printable line into buf (always NUL-terminated when n > 0): every byte below
 * 0x20, 0x7f, the bytes of C1 controls (U+0080..U+009F) and every byte that is not part of valid
 * UTF-8 becomes \xNN, so text quoted from an
 * input can neither break a message into lines nor drive a terminal. Stops at a whole character
 * when buf is full. Returns the bytes written, without the NUL. The messages memscope_error_set
 * records have been through it already.
 */
size_t memscope_text_escape(char *buf, size_t n, const char *s, size_t len);

/* printf into buf (n bytes, always NUL-terminated when n > 0) as memscope_text_escape makes it:
 * one printable line. Returns the bytes written, without the NUL. */
size_t memscope_text_vformat(char *buf, size_t n, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Static text for a status code ("invalid input", ...). */
const char *memscope_strerror(int code);

#endif
