/* Where the memory goes, for memscope-report's page (formats/report.md "where"): the owners at the
 * peak as a table, and where call stacks were recorded the bytes allocated per stack as a flame
 * graph's tree, small nodes pruned. */
#include <stdlib.h>
#include <string.h>

#include "../writers/report.h"
#include "report_impl.h"

/* the most nodes the tree is built with, and its deepest level */
#define TREE_MAX_NODES 200000
#define TREE_MAX_DEPTH 64

struct node {
	uint32_t name; /* frame string id */
	uint64_t value;
	uint32_t child, sibling; /* node indexes, 0: none (node 0 is the root) */
};

struct tree {
	struct node *n;
	size_t len, cap;
};

/* The child of node at named name, made when new (the node itself when the tree is full). */
static uint32_t child(struct tree *t, uint32_t at, uint32_t name)
{
	uint32_t c;

	for (c = t->n[at].child; c; c = t->n[c].sibling)
		if (t->n[c].name == name)
			return c;
	if (t->len >= TREE_MAX_NODES || ms__grow_array(&t->n, &t->cap, t->len + 1, sizeof(*t->n)))
		return at;
	c = (uint32_t)t->len++;
	t->n[c] = (struct node){ name, 0, 0, t->n[at].child };
	t->n[at].child = c;
	return c;
}

/* Add bytes along the frames of stack id (innermost first) from the outermost, from node at. */
static uint32_t add_stack(struct tree *t, const struct memscope_strtab *st, uint32_t id,
	uint32_t at, uint64_t bytes, size_t *depth)
{
	size_t n = 0, i;
	const uint32_t *f = memscope_strtab_stack(st, id, &n);

	for (i = n; f && i > 0 && *depth < TREE_MAX_DEPTH; i--, ++*depth) {
		uint32_t c = child(t, at, f[i - 1]);

		if (c == at)
			break;
		at = c;
		t->n[at].value += bytes;
	}
	return at;
}

/* The tree of the bytes allocated per pair of stacks: Python frames, then C frames, outermost
 * first. 0 or NOMEM. */
static int build(struct tree *t, const struct ms__report_detail *d)
{
	const struct u64map *m = &d->blocks->stacks;
	size_t i, depth;

	if (ms__grow_array(&t->n, &t->cap, 1, sizeof(*t->n)))
		return MEMSCOPE_E_NOMEM;
	t->len = 1;
	for (i = 0; m->e && i <= m->mask; i++) {
		uint32_t at;

		if (!m->e[i].used)
			continue;
		depth = 0;
		t->n[0].value += m->e[i].a;
		at = add_stack(t, d->st, (uint32_t)(m->e[i].key >> 32), 0, m->e[i].a, &depth);
		add_stack(t, d->st, (uint32_t)m->e[i].key, at, m->e[i].a, &depth);
	}
	return 0;
}

/* Node at and its children of at least min bytes, *left nodes more at most. */
static void write_node(FILE *out, const struct tree *t, const struct ms__report_detail *d,
	uint32_t at, uint64_t min, size_t *left)
{
	char text[512];
	const char *name;
	size_t len = 0;
	uint32_t c;
	int first = 1;

	--*left;
	fputs("{\"name\":", out);
	if (!at)
		fputs("\"all\"", out);
	else {
		name = memscope_strtab_str(d->st, t->n[at].name, &len);
		len = memscope_frame_text(name ? name : "", name ? len : 0, text, sizeof(text));
		ms__json_str(out, text, len < sizeof(text) ? len : sizeof(text) - 1);
	}
	fprintf(out, ",\"value\":%llu,\"children\":[", (unsigned long long)t->n[at].value);
	for (c = t->n[at].child; c; c = t->n[c].sibling) {
		if (t->n[c].value < min || !*left)
			continue;
		if (!first)
			fputc(',', out);
		first = 0;
		write_node(out, t, d, c, min, left);
	}
	fputs("]}", out);
}

/* ,"flame":{...} or null: only where call stacks were recorded. */
static void flame(FILE *out, const struct ms__report_detail *d)
{
	struct tree t = { 0 };
	size_t left = MS__REPORT_MAX_FLAME;

	fputs(",\"flame\":", out);
	if (!d->blocks->has_stacks || build(&t, d)) {
		fputs("null", out);
		free(t.n);
		return;
	}
	write_node(out, &t, d, 0, t.n[0].value / 1000 ? t.n[0].value / 1000 : 1, &left);
	fputs(",\"flame_metric\":\"allocated\"", out);
	free(t.n);
}

void ms__report_json_where(FILE *out, const struct ms__report_detail *d)
{
	size_t n;
	const struct memscope_peak_owner *o = memscope_peak_owners(d->peak, &n);

	fprintf(out, ",\"where\":{\"by\":\"%s\"", n ? ms__report_by_name(o[0].by) : "none");
	ms__report_json_owners(out, d, MS__REPORT_MAX_WHERE, "rows");
	flame(out, d);
	fputc('}', out);
}
