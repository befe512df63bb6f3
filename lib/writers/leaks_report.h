/* What the leak report writers share: the report being written, the writer of each format (one
 * file each, called by leaks_write.c) and the pieces they share (ms__lrep_, leaks_report.c);
 * library-internal. */
#ifndef MEMSCOPE_LEAKS_REPORT_H
#define MEMSCOPE_LEAKS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/internal.h"
#include "memscope/blocks.h"
#include "memscope/leaks.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"
#include "report.h"

struct leaks_report {
	FILE *out;
	const struct memscope_leaks *l;
	const struct memscope_strtab *st;
	const struct memscope_leaks_input *inputs;
	size_t n_inputs;
	int printed; /* text: a section has been written */
	const char *
		*short_names; /* text: per input, the name that tells it apart (ms__input_names) */
	/* text: per input, and at [n_inputs] for any, whether it has ProfilerStep steps (NULL: not
	 * looked yet; the steps are walked once, however many inputs) */
	unsigned char *numbered;
	char *answer; /* text: the first line (answer_text), NULL until made */
};

/* ---- the writers (leaks_text.c, leaks_json.c, leaks_csv.c, leaks_reference.c) ---- */

/* Each writes the report of r->l in its format to r->out: 0, or MEMSCOPE_E_NOMEM before anything
 * is written (text: the names across inputs, the answer). Write errors are left in r->out. */
int ms__lrep_text(struct leaks_report *r);
int ms__lrep_json(struct leaks_report *r);
int ms__lrep_csv(struct leaks_report *r);
int ms__lrep_reference(struct leaks_report *r);

/* ---- the pieces they share (leaks_report.c) ---- */

/* The name of input src, "-" when it has none. Borrowed from r->inputs. */
const char *ms__lrep_input_name(const struct leaks_report *r, uint32_t src);
/* The file b's MALLOC line is in: its input, or the file of an input folder. */
const char *ms__lrep_block_file(const struct leaks_report *r, const struct memscope_block *b);
/* The Ptr column as the input writes it, into buf (n bytes); N/A for a block without an address. */
void ms__lrep_ptr_text(
	const struct leaks_report *r, const struct memscope_block *b, char *buf, size_t n);

/* whether a report section covers more than one process */
struct several {
	int any, several;
	uint64_t pid;
};

void ms__lrep_several_add(struct several *s, uint64_t pid);
/* " (process N)" into buf (n bytes) when several, else "". */
void ms__lrep_process_suffix(char *buf, size_t n, int several, uint64_t pid);
/*
 * Binary search: the first i of n for which before(r, i, v) is false, it being true of a prefix.
 * The result orders of memscope/leaks.h keep the items of one input in one run, so each input's
 * part of the text costs its own items, not every input's.
 */
size_t ms__lrep_first_not(size_t n,
	int (*before)(const struct leaks_report *r, size_t i, uint64_t v),
	const struct leaks_report *r, uint64_t v);
/* fluctuation groups of inputs before v (by input), for ms__lrep_first_not */
int ms__lrep_fluct_before(const struct leaks_report *r, size_t i, uint64_t v);
/* The fluctuation groups of input src: f[*first, *n) of the returned array. */
const struct memscope_fluct *ms__lrep_fluct_of_input(
	const struct leaks_report *r, uint32_t src, size_t *first, size_t *n);
/* The processes of input src whose groups f[first, n) have gaps, into sv. */
void ms__lrep_several_of(
	struct several *sv, const struct memscope_fluct *f, size_t first, size_t n, uint32_t src);
/* s[0..n) on one printable line: control characters and bytes that are not UTF-8 as '?'. */
void ms__lrep_text_str(FILE *out, const char *s, size_t n);
void ms__lrep_text_cstr(FILE *out, const char *s);
/* "stack", "op" or "owner": a memscope_leaks_opts.group_by. */
const char *ms__lrep_group_by_name(unsigned by);
/* "step", "mark" or "exit": a finding's kind. */
const char *ms__lrep_kind_name(unsigned kind);
/* Whether a group, or a finding's group, is in the reports: one of the first --top. */
int ms__lrep_listed(const struct leaks_report *r, const struct memscope_leak_group *g);
int ms__lrep_leak_listed(const struct leaks_report *r, const struct memscope_leak *x);

#endif
