/* memscope-record's spool as an input: one recorded process image turned into a capture file
 * (formats/record.md). */
#ifndef MEMSCOPE_RECORD_H
#define MEMSCOPE_RECORD_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

/* What the launcher knows of a recorded process that its spool may not say. */
struct memscope_record_info {
	uint64_t end_tick, end_mono_ns; /* a clock pair (memscope_record_now) taken after the
					   process ended; 0, 0: none */
	int status_known;		/* the launcher reaped the process: */
	int exit_code;			/* its exit status, when signal is 0 */
	int signal;			/* the signal that ended it, or 0 */
	int exec;			/* it ended by exec'ing another program */
};

/* What a transcoding found. */
struct memscope_record_stats {
	uint64_t pid, ppid, gen; /* gen: the image's number among its pid's (exec), from 0 */
	int forked;		 /* a child made by fork, recorded from its first event */
	int stopped;   /* errno of the write error that stopped the recording early, or 0; the
			  capture then ends with a STOPPED record (formats/capture.md §3.1) */
	uint64_t lost; /* with stopped: the calls not recorded after it, UINT64_MAX: not known */
	int unstarted; /* the spool has no header (the shim could not write it): nothing recorded;
			  the transcoding fails with MEMSCOPE_E_IO */
	uint64_t n_events, n_threads, n_allocs, n_frees, n_marks;
	uint64_t n_unmatched;	   /* frees of blocks the recording never saw allocated */
	uint64_t n_reused;	   /* allocations at an address still live (its free unseen) */
	uint64_t n_partial_unmaps; /* munmaps that start inside a mapping: ignored */
	uint64_t live_blocks, live_bytes; /* alive at the end */
	uint64_t n_bad_segments;	  /* segments whose records stopped at a malformed one */
	uint64_t n_modules, n_modules_unread; /* modules, and those not symbolized from */
	uint64_t n_stacks;		      /* allocations with a native stack */
	uint64_t n_stacks_cut;		      /* of those, stacks cut short (formats/record.md) */
	char cut_where[256]; /* "python3.11, libc.so.6": where most of those were cut */
	char unread[320];    /* the first of those and why */
	uint64_t bytes;	     /* of the capture written */
	char exit_text[40];  /* "exit 0", "_exit 3", "signal 9", "unknown" */
	char program[256];   /* the command line's first argument */
};

/* A spool file's facts, read from its header. */
struct memscope_record_image {
	uint64_t pid, ppid, gen;
	int forked;	   /* made by fork (else the program of an exec or the main program) */
	uint64_t start_ns; /* CLOCK_MONOTONIC when its recording started */
	char program[256]; /* the command line's first argument */
};

/* The header of the spool file at path into *im. 0, MEMSCOPE_E_IO, MEMSCOPE_E_INVALID or
 * MEMSCOPE_E_UNSUPPORTED (err says which; *im is zeroed then). */
int memscope_record_probe(
	const char *path, struct memscope_record_image *im, struct memscope_error *err);

/* The clock the shim should use on this machine: 1 (the CPU's invariant counter, when the kernel
 * keeps time with it) or 0 (CLOCK_MONOTONIC). Values of MEMSCOPE_RECORD_OPTS' clock. */
int memscope_record_clock(void);

/* The shim's clock now, as a (tick, CLOCK_MONOTONIC ns) pair for memscope_record_info. */
void memscope_record_now(int clock, uint64_t *tick, uint64_t *mono_ns);

/*
 * The spool file at path (one process image, with its modules file beside it) as a capture file
 * on out: its events in time order, stacks symbolized from the modules the process had loaded
 * (their files read now), the process's facts as META records. info may be NULL. *st is filled
 * as far as the spool was read, also on failure. Malformed records end their segment (counted in
 * n_bad_segments); a bad header is an error. 0, MEMSCOPE_E_IO (path or out; a spool whose header
 * was never written: st->unstarted), MEMSCOPE_E_INVALID
 * or MEMSCOPE_E_UNSUPPORTED (not a spool of this version), MEMSCOPE_E_NOMEM; err says which.
 */
int memscope_record_transcode(const char *path, FILE *out, const struct memscope_record_info *info,
	struct memscope_record_stats *st, struct memscope_error *err);

#endif
