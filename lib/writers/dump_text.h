/* How the dump writers (CSV and SQLite) spell a row's fields, shared so they cannot drift apart. */
#ifndef MEMSCOPE_DUMP_TEXT_H
#define MEMSCOPE_DUMP_TEXT_H

#include <stdint.h>

#include "../core/internal.h"

struct memscope_strtab;

/*
 * A call stack's field text appended to b: nothing for stack 0, else the frames one
 * per line inside one pair of double quotes, as the reference writes it (and stores it in its
 * database). 0 or MEMSCOPE_E_NOMEM.
 */
int dump_stack_text(struct buf *b, const struct memscope_strtab *st, uint32_t id);

#endif
