/* The spool memscope-record's shim writes and the launcher turns into a capture file (normative
 * text: formats/record.md, "The spool"). Shared by the shim (tools/record/) and the transcoder
 * (lib/record/transcode.c). */
#ifndef MEMSCOPE_SPOOL_FMT_H
#define MEMSCOPE_SPOOL_FMT_H

#include <stdint.h>

#define SPOOL_MAGIC "MSSPOOL1"
#define SPOOL_VERSION 1
#define SPOOL_HEADER_LEN 4096u
#define SPOOL_SEG_MIN (16u << 10)   /* a thread's first segment; every segment is a multiple */
#define SPOOL_SEG_MAX (1u << 20)    /* longest segment (a thread's 7th and later) */
#define SPOOL_SEG_MAGIC 0x31474553u /* "SEG1" */
#define SPOOL_SEG_HEAD 64u
#define SPOOL_TEXT_MAX 1024u /* longest marker text kept */
#define SPOOL_DEPTH_MAX 256u /* deepest stack */
#define SPOOL_PATH_MAX 4096u /* longest module path kept */
#define SPOOL_BUILD_ID_MAX 64u
#define SPOOL_PY_NAME_MAX 1024u /* longest Python file or function name kept */
#define SPOOL_PY_DEPTH_MAX 128u /* Python frames per stack at most (the innermost) */

/* the file header, at offset 0 (SPOOL_HEADER_LEN bytes, the command line after it) */
struct spool_header {
	char magic[8];
	uint32_t version, header_len, seg_len; /* seg_len: SPOOL_SEG_MIN */
	uint32_t clock;			       /* enum spool_clock */
	uint64_t pid, ppid, gen;
	uint64_t tick0, mono0_ns, real0_ns; /* one calibration pair, and the epoch at it */
	uint32_t depth;			    /* frames per stack at most, 0: no stacks */
	uint32_t cmdline_len; /* bytes of /proc/self/cmdline after the header struct */
	uint64_t exit_kind;   /* enum spool_exit, written when the process ends */
	uint64_t exit_status;
	uint64_t exit_tick, exit_mono_ns; /* a second calibration pair at the end, or 0 */
	uint64_t forked;  /* 1: a child made by fork, recorded from its first event */
	uint64_t stopped; /* errno of the write error that stopped the recording, or 0 */
	uint64_t lost;	  /* with stopped: 1 + the calls not recorded after the stop (0: unknown) */
	uint64_t reserved[2];
	/* then cmdline_len bytes: the NUL-separated arguments */
};

enum spool_clock {
	SPOOL_CLOCK_MONO = 0, /* ticks are CLOCK_MONOTONIC nanoseconds */
	SPOOL_CLOCK_TSC = 1,  /* ticks of the CPU's invariant counter: fitted to the pairs */
};

enum spool_exit {
	SPOOL_EXIT_NONE = 0,   /* not known (killed, or exec'd) */
	SPOOL_EXIT_EXIT = 1,   /* exit(status) */
	SPOOL_EXIT__EXIT = 2,  /* _exit(status) or _Exit */
	SPOOL_EXIT_SIGNAL = 3, /* a fatal signal, status = its number */
	SPOOL_EXIT_RETURN = 4, /* the process ended through exit without our hook seeing the status
				  (main returned) */
};

/* the head of a segment: SPOOL_SEG_HEAD bytes */
struct spool_seg {
	uint32_t magic; /* SPOOL_SEG_MAGIC once the rest is written */
	uint32_t seq;	/* the thread's segments are numbered from 0 */
	uint64_t tid;
	uint32_t len;	  /* bytes of the segment, head included: a multiple of SPOOL_SEG_MIN */
	uint32_t thread;  /* the thread's number in the process from 1 (a tid may be reused) */
	uint64_t tick;	  /* start of the segment: the first record's time delta is against it */
	uint64_t mono_ns; /* CLOCK_MONOTONIC at tick: a calibration pair */
	uint64_t reserved[3];
};

/*
 * Segments follow each other from SPOOL_HEADER_LEN, each at a multiple of SPOOL_SEG_MIN. A
 * segment whose magic is not set (its process was killed before its head was written) holds
 * only zeros: the next segment is found at the next multiple of SPOOL_SEG_MIN with the magic.
 *
 * Records after a segment head, each a type byte then its fields (varints: LEB128; zz: zigzag).
 * The type byte is stored last, so a record cut by a kill reads as the end: type 0 ends a segment.
 * Per segment, prev_tick starts at the segment's tick and prev_ptr at 0.
 *   SPOOL_R_STACK   varint id, varint n, n x varint zz(addr - previous addr of this record)
 *   SPOOL_R_STACK_CUT  as STACK: a walk that stopped before the outermost frame (no frame
 *                   pointer in the caller of its last frame, or a return address in no module)
 *   SPOOL_R_MARK    varint dtick, u8 what (enum spool_mark), varint range id, varint len, bytes
 *   SPOOL_R_PYCODE  varint code id, varint len, file bytes, varint len, function bytes
 *   SPOOL_R_PYSTACK varint id, varint native stack id, varint n, n x (varint code id, varint line)
 *   ALLOC | func    varint dtick, varint size, varint zz(ptr - prev_ptr), varint stack id
 *   FREE | func     varint dtick, varint zz(ptr - prev_ptr), varint stack id
 *   UNMAP           varint dtick, varint zz(ptr - prev_ptr), varint stack id, varint length
 *   REVIVE          varint dtick, varint zz(ptr - prev_ptr), varint stack id: a realloc failed,
 *                   the block its FREE released (the thread's last) lives on with its size
 * Stack ids are the thread's own, from 1, defined before use; 0 = no stack. STACK and PYSTACK
 * records share them: a PYSTACK is a native stack (its id, 0: none) with the Python frames that
 * were running, innermost first. Python code ids are the thread's own too, from 1.
 */
enum spool_record {
	SPOOL_R_END = 0,
	SPOOL_R_STACK = 1,
	SPOOL_R_MARK = 2,
	SPOOL_R_PYCODE = 3,    /* a Python function: its file and name */
	SPOOL_R_PYSTACK = 4,   /* a native stack and the Python frames above it */
	SPOOL_R_STACK_CUT = 5, /* a native stack whose walk stopped before the outermost frame */
	SPOOL_R_ALLOC = 0x20,  /* | enum memscope_func */
	SPOOL_R_FREE = 0x40,   /* | enum memscope_func */
	SPOOL_R_UNMAP = 0x60,
	SPOOL_R_REVIVE = 0x61,
};

enum spool_mark {
	SPOOL_MARK = 0,
	SPOOL_RANGE_START = 1,
	SPOOL_RANGE_END = 2,
};

/*
 * The modules file beside the spool ("m" instead of "p" in its name): records appended with one
 * write(2) each, never cut in the middle by a kill:
 *   u32 len (of what follows), u64 bias, u64 lo, u64 hi, u8 build id length, build id, path bytes
 */
#define SPOOL_MODULE_FIXED 29u

#endif
