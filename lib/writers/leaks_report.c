/* The pieces the leak report writers share (leaks_report.h): input names, addresses, the runs of
 * one input in the analysis's results, process suffixes and printable text. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "leaks_report.h"

const char *ms__lrep_input_name(const struct leaks_report *r, uint32_t src)
{
	return src < r->n_inputs && r->inputs[src].name ? r->inputs[src].name : "-";
}

/* The file b's MALLOC line is in: its input, or the file of an input folder. */
const char *ms__lrep_block_file(const struct leaks_report *r, const struct memscope_block *b)
{
	return memscope_event_file(r->st, b->file, ms__lrep_input_name(r, b->src));
}

/* the Ptr column as the input writes it; N/A for a block without an address */
void ms__lrep_ptr_text(
	const struct leaks_report *r, const struct memscope_block *b, char *buf, size_t n)
{
	if (b->flags & MEMSCOPE_BLOCK_NO_PTR)
		snprintf(buf, n, "N/A");
	else if (b->src < r->n_inputs && r->inputs[b->src].ptr_decimal)
		snprintf(buf, n, "%" PRIu64, b->ptr);
	else
		snprintf(buf, n, "0x%016" PRIx64, b->ptr);
}

void ms__lrep_several_add(struct several *s, uint64_t pid)
{
	if (s->any && s->pid != pid)
		s->several = 1;
	s->any = 1;
	s->pid = pid;
}

void ms__lrep_process_suffix(char *buf, size_t n, int several, uint64_t pid)
{
	if (several)
		snprintf(buf, n, " (process %" PRIu64 ")", pid);
	else
		buf[0] = '\0';
}

/*
 * Binary search: the first i of n for which before(r, i, v) is false, it being true of a prefix.
 * The result orders of memscope/leaks.h keep the items of one input in one run, so each input's
 * part of the text costs its own items, not every input's.
 */
size_t ms__lrep_first_not(size_t n,
	int (*before)(const struct leaks_report *r, size_t i, uint64_t v),
	const struct leaks_report *r, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (before(r, mid, v))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* fluctuation groups of inputs before v (by input) */
int ms__lrep_fluct_before(const struct leaks_report *r, size_t i, uint64_t v)
{
	size_t n;

	return memscope_leaks_fluct(r->l, &n)[i].src < v;
}

/* The fluctuation groups of input src: f[*first, *n) of the returned array. */
const struct memscope_fluct *ms__lrep_fluct_of_input(
	const struct leaks_report *r, uint32_t src, size_t *first, size_t *n)
{
	const struct memscope_fluct *f = memscope_leaks_fluct(r->l, n);

	*first = ms__lrep_first_not(*n, ms__lrep_fluct_before, r, src);
	*n = ms__lrep_first_not(*n, ms__lrep_fluct_before, r, (uint64_t)src + 1);
	return f;
}

/* The processes of input src whose groups f[first, n) have gaps, into sv. */
void ms__lrep_several_of(
	struct several *sv, const struct memscope_fluct *f, size_t first, size_t n, uint32_t src)
{
	size_t i;

	for (i = first; i < n; i++)
		if (f[i].src == src && f[i].has_gaps)
			ms__lrep_several_add(sv, f[i].pid);
}

/* s[0..n) on one printable line: control characters (C0, DEL, C1) and bytes that are not UTF-8
 * as '?', so a name from an input can neither break the report's lines nor drive a terminal. */
void ms__lrep_text_str(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t len;

	for (; p < end; p += len) {
		len = ms__utf8_seq(p, end);
		if (!len || *p < 0x20 || *p == 0x7f || (len == 2 && p[0] == 0xc2 && p[1] < 0xa0))
			fputc('?', out);
		else
			fwrite(p, 1, len, out);
		len = len ? len : 1;
	}
}

void ms__lrep_text_cstr(FILE *out, const char *s)
{
	ms__lrep_text_str(out, s, strlen(s));
}

const char *ms__lrep_group_by_name(unsigned by)
{
	return by == MEMSCOPE_LEAKS_BY_OP      ? "op"
	       : by == MEMSCOPE_LEAKS_BY_OWNER ? "owner"
					       : "stack";
}

const char *ms__lrep_kind_name(unsigned kind)
{
	return kind == MEMSCOPE_LEAK_STEP ? "step" : kind == MEMSCOPE_LEAK_MARK ? "mark" : "exit";
}

/* Whether a finding, or a group, is in the reports: its group is one of the first top. */
int ms__lrep_listed(const struct leaks_report *r, const struct memscope_leak_group *g)
{
	uint64_t top = memscope_leaks_opts(r->l)->top;

	return !top || g->rank < top;
}

int ms__lrep_leak_listed(const struct leaks_report *r, const struct memscope_leak *x)
{
	size_t n;
	const struct memscope_leak_group *g = memscope_leaks_groups(r->l, &n);

	return x->report_group < n && ms__lrep_listed(r, &g[x->report_group]);
}
