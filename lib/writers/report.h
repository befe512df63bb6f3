/* Helpers the report writers share: JSON strings that stay valid UTF-8, CSV fields quoted when
 * needed, and call stacks in either. */
#ifndef MEMSCOPE_REPORT_H
#define MEMSCOPE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/internal.h"

struct memscope_strtab;

/* s[0..n) as a JSON string; invalid UTF-8 becomes U+FFFD so the output stays valid JSON. */
void json_str(FILE *out, const char *s, size_t n);
void json_cstr(FILE *out, const char *s);
/* ,"key":bytes, and ,"key_overflowed":true when the total saturated (MEMSCOPE_BYTES_OVERFLOW). */
void json_bytes(FILE *out, const char *key, uint64_t bytes);
/* String id of st as a JSON string ("" for an unknown id). */
void json_id(FILE *out, const struct memscope_strtab *st, uint32_t id);
/* The Python and C stacks as {"python":[frames],"c":[frames]} ([] for stack 0). */
void json_stack(FILE *out, const struct memscope_strtab *st, uint32_t py, uint32_t c);
/* String id of st as a JSON string, or null for id 0. */
void json_id_or_null(FILE *out, const struct memscope_strtab *st, uint32_t id);

/* A CSV field, quoted (quotes doubled) when it holds a comma, quote or line break. */
void csv_field(FILE *out, const char *s, size_t n);
/* A stack as the dump writes it: frames one per line, in one field (empty for stack 0). */
void csv_stack(FILE *out, const struct memscope_strtab *st, uint32_t stack);

#endif
