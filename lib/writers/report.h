/* Helpers the writers share: how a write ended, JSON strings that stay valid UTF-8, CSV fields
 * quoted when needed, and call stacks in either. */
#ifndef MEMSCOPE_REPORT_H
#define MEMSCOPE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/internal.h"

struct memscope_strtab;
struct memscope_error;

/* A write that failed: MEMSCOPE_E_IO into err, "write failed: " and errno's text (EIO's when errno
 * is 0). Returns MEMSCOPE_E_IO. */
int ms__write_failed(struct memscope_error *err);
/* How writing to out ended: MEMSCOPE_E_NOMEM ("out of memory") when nomem, else
 * ms__write_failed's when out's error flag is set, else 0. */
int ms__write_end(FILE *out, int nomem, struct memscope_error *err);

/* s[0..n) as a JSON string; invalid UTF-8 becomes U+FFFD so the output stays valid JSON. */
void ms__json_str(FILE *out, const char *s, size_t n);
void ms__json_cstr(FILE *out, const char *s);
/* ,"key":bytes, and ,"key_overflowed":true when the total saturated (MEMSCOPE_BYTES_OVERFLOW). */
void ms__json_bytes(FILE *out, const char *key, uint64_t bytes);
/* String id of st as a JSON string ("" for an unknown id). */
void ms__json_id(FILE *out, const struct memscope_strtab *st, uint32_t id);
/* The Python and C stacks as {"python":[frames],"c":[frames]} ([] for stack 0). */
void ms__json_stack(FILE *out, const struct memscope_strtab *st, uint32_t py, uint32_t c);
/* String id of st as a JSON string, or null for id 0. */
void ms__json_id_or_null(FILE *out, const struct memscope_strtab *st, uint32_t id);

/* The length of the character at p (1 for a byte that starts none) and in *ok whether it is a
 * character XML may hold (valid UTF-8, not U+FFFE or U+FFFF). */
size_t ms__xml_next_char(const unsigned char *p, const unsigned char *end, int *ok);
/* One character of XML (and HTML) text, p[0..len) with ms__xml_next_char's ok: markup characters
 * escaped, control characters as a blank, one XML may not hold as '?'. */
void ms__xml_char(FILE *out, const unsigned char *p, size_t len, int ok);
/* s[0..n) as XML text, character by character (ms__xml_char). */
void ms__xml_str(FILE *out, const char *s, size_t n);

/* A CSV field, quoted (quotes doubled) when it holds a comma, quote or line break. */
void ms__csv_field(FILE *out, const char *s, size_t n);
/* A stack as the dump writes it: frames one per line, in one field (empty for stack 0). */
void ms__csv_stack(FILE *out, const struct memscope_strtab *st, uint32_t stack);

#endif
