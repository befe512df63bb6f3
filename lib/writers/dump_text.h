/* How the dump writers (CSV and SQLite) spell a row's fields, shared so they cannot drift apart. */
#ifndef MEMSCOPE_DUMP_TEXT_H
#define MEMSCOPE_DUMP_TEXT_H

#include <stdint.h>

#include "../core/internal.h"

struct memscope_strtab;
struct memscope_event;

/*
 * A call stack's field text appended to b: nothing for stack 0, else the frames one
 * per line inside one pair of double quotes, as the reference writes it (and stores it in its
 * database). 0 or MEMSCOPE_E_NOMEM.
 */
int ms__dump_stack_text(struct buf *b, const struct memscope_strtab *st, uint32_t id);

/*
 * The Event (sub 0) or Event Type (sub 1) column of ev: the canonical name of its kind or
 * subtype, or the text it was read with when that is not one of ours. *n gets the length.
 */
const char *ms__dump_kind_text(
	const struct memscope_strtab *st, const struct memscope_event *ev, int sub, size_t *n);

#endif
