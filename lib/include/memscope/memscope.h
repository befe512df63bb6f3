/* Umbrella header of libmemscope: offline analysis of memory-event streams. */
#ifndef MEMSCOPE_H
#define MEMSCOPE_H

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

/* Release version of the library ("0.1.0"); independent of any file format version. */
const char *memscope_version(void);

#endif
