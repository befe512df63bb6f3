/* Umbrella header of libmemscope: offline analysis of memory-event streams. */
#ifndef MEMSCOPE_H
#define MEMSCOPE_H

/*
 * Conventions every header follows (each function's comment says only where it departs):
 *
 * Layers. A source (source.h) reads an input and calls back once per event; an analysis
 * (leaks.h, inefficient.h, flame.h, timeline.h, compare.h) is fed events and finished, then
 * asked for results; a writer turns results or events into a file format. analysis.h's run
 * reads inputs once for several analyses. Events, strings and stacks are ids into a string table
 * (strtab.h) the caller creates and keeps alive while anything made from it is used.
 *
 * Ownership. Whoever calls _new or _open frees with the matching _free or _close, which accept
 * NULL. Everything else returned (results, names, events in callbacks) is borrowed: its lifetime
 * is written beside the function, and at the latest it ends when the object it came from is
 * freed. FILE * arguments are borrowed: the library writes and flushes, never closes.
 *
 * Errors. A fallible function returns 0 or a negative MEMSCOPE_E_* code (error.h) and lists the
 * codes it returns. One that takes a struct memscope_error * fills it in on failure, with the
 * input's name and line (or byte offset) when the failure has a place; the message is one
 * printable line. Streaming calls hand each item to a callback whose non-zero return stops them.
 * A _new returns NULL on out of memory only. The library never prints, exits or aborts.
 *
 * Out-parameters. *out is set on success. On failure it is NULL (or 0) unless the comment says
 * otherwise, and nothing needs releasing; where a failed call leaves something to free (an
 * opened source, a writer), the comment says so.
 *
 * Threads. There is no global state: every object is independent, and one object is used by one
 * thread at a time (calls on different objects may run in parallel; a string table is shared
 * by the objects made from it, so they belong to one thread together). No function keeps a
 * pointer to its arguments past its return unless its comment says "borrowed".
 *
 * Units. Sizes are bytes, times nanoseconds (ts_ns), unless a name says otherwise. Byte totals
 * saturate at MEMSCOPE_BYTES_OVERFLOW (below).
 */

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "analysis.h"
#include "strtab.h"
#include "event.h"
#include "source.h"
#include "dump_csv.h"
#include "capture.h"
#include "compress.h"
#include "order.h"
#include "blocks.h"
#include "compare.h"
#include "steps.h"
#include "leaks.h"
#include "inefficient.h"
#include "db.h"
#include "flame.h"
#include "timeline.h"
#include "peak.h"
#include "walk.h"
#include "batch.h"
#include "session.h"
#include "report.h"

/* Byte totals saturate: one at MEMSCOPE_BYTES_OVERFLOW overflowed (the true sum is larger), and
 * every report says so rather than print the number as a total. */
#define MEMSCOPE_BYTES_OVERFLOW UINT64_MAX
/* Room for any text of memscope_bytes_text. */
#define MEMSCOPE_BYTES_TEXT_MAX 72
/*
 * The one rule of every text report (JSON and CSV carry exact bytes): binary units with the unit
 * written and three significant digits, "512 B", "1.50 KiB", "39.0 MiB", "312 GiB", or "more
 * than 16.0 EiB (the total overflowed)" for MEMSCOPE_BYTES_OVERFLOW, into buf (n bytes,
 * MEMSCOPE_BYTES_TEXT_MAX is enough). Returns buf.
 */
const char *memscope_bytes_text(char *buf, size_t n, uint64_t bytes);
/* Room for any text of memscope_seconds_text. */
#define MEMSCOPE_SECONDS_TEXT_MAX 32
/*
 * The time rule of every text report (JSON and CSV carry exact ns): ts_ns as seconds since
 * origin_ns with microsecond digits, "12.345678 s", "-0.000500 s" before the origin, into buf
 * (n bytes, MEMSCOPE_SECONDS_TEXT_MAX is enough). Returns buf.
 */
const char *memscope_seconds_text(char *buf, size_t n, uint64_t ts_ns, uint64_t origin_ns);

/* Release version of the library ("0.1.0"); independent of any file format version. */
const char *memscope_version(void);

#endif
