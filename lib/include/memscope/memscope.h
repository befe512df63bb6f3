/* Umbrella header of libmemscope: offline analysis of memory-event streams. */
#ifndef MEMSCOPE_H
#define MEMSCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "strtab.h"
#include "event.h"
#include "source.h"
#include "writer.h"
#include "order.h"
#include "compare.h"
#include "steps.h"
#include "leaks.h"
#include "inefficient.h"
#include "db.h"
#include "flame.h"

/* Byte totals saturate: one at MEMSCOPE_BYTES_OVERFLOW overflowed (the true sum is larger), and
 * every report says so rather than print the number as a total. */
#define MEMSCOPE_BYTES_OVERFLOW UINT64_MAX
/* Room for any text of memscope_bytes_text. */
#define MEMSCOPE_BYTES_TEXT_MAX 72
/* "N bytes", or "more than 18446744073709551614 bytes (the total overflowed)", into buf (n bytes,
 * MEMSCOPE_BYTES_TEXT_MAX is enough). Returns buf. */
const char *memscope_bytes_text(char *buf, size_t n, uint64_t bytes);

/* Release version of the library ("0.1.0"); independent of any file format version. */
const char *memscope_version(void);

#endif
