/* The pool of forked workers memscope-batch and memscope-report read their inputs with: one
 * process per input, at most N at a time, each sending its lines back through a pipe, with the
 * progress line over all inputs. */
#ifndef MEMSCOPE_TOOLS_WORKERS_H
#define MEMSCOPE_TOOLS_WORKERS_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* What a tool does with its workers (ctx: struct workers_run.ctx). */
struct workers_ops {
	/* In the worker, input i: read it and write its lines to fd (progress lines through
	 * workers_child_progress), then _exit; never returns. Fatal signals are as the tool
	 * started with them (workers_keep_dispositions). */
	void (*child)(void *ctx, uint64_t i, int fd);
	/* A whole line (NUL-terminated, without its newline; not a progress line) the worker of
	 * input i wrote, the tool's to change. 0 or an exit status (printed). */
	int (*line)(void *ctx, uint64_t i, char *line);
	/* The worker of input i has ended with wait status st, after its every line. 0 or an exit
	 * status (printed). */
	int (*done)(void *ctx, uint64_t i, int st);
};

/* One read of inputs through workers: the caller sets the first fields, the rest are the
 * pool's. */
struct workers_run {
	const struct cli_tool *tool;
	const struct workers_ops *ops;
	void *ctx;
	unsigned long jobs;   /* at most this many at a time (-j) */
	const uint64_t *todo; /* the inputs to read, in order (indexes) */
	uint64_t n_todo;
	const uint64_t *size; /* each input's size in bytes by index (0: not known) */
	uint64_t total;	      /* of the inputs to read */
	int quiet;	      /* no progress line */
	/* the pool's */
	uint64_t next, n_done, done_bytes;
	long max_rss_kib;		/* the largest worker */
	struct memscope_read_opts prog; /* cli_progress's callback, when shown */
	char label[64];
	const char *labels[1];
};

/* -j N's argument into *jobs: a count from 1 to 1024. 0 or CLI_EXIT_USAGE (printed). */
int workers_parse_jobs(const struct cli_tool *t, const char *arg, unsigned long *jobs);

/* Keep the fatal signals' dispositions the tool started with, for its workers (call first in
 * main, before cli_out installs its handlers). */
void workers_keep_dispositions(void);

/* How many workers w starts: jobs, at most one per input, and within the descriptors the
 * process may open (one pipe each, and room for the rest). */
size_t workers_count(const struct workers_run *w);

/* Read every input of w->todo through workers, with the progress line "K/N inputs done," unless
 * quiet. 0, or an exit status (printed; the workers still running are killed). */
int workers_read(struct workers_run *w);

/* In a worker: memscope_progress_fn writing "p DONE" lines to the pipe *(int *)ctx. */
void workers_child_progress(void *ctx, uint32_t src, uint64_t done, uint64_t total);

/* In a worker: write all of s[0, n) to fd (short writes retried; _exit on failure). */
void workers_put(int fd, const char *s, size_t n);

/* The message of an input named name whose worker ended with wait status st and no result
 * ("NAME: its worker was killed by signal 9 (Killed)"), into buf. */
void workers_lost_text(char *buf, size_t n, const char *name, int st);

/* The size of the file path, with its traces (a folder or what cannot be stat'd: 0). */
uint64_t workers_input_size(const char *path, const char *const *traces, size_t n_traces);

#endif
