/* An interactive SVG flame graph of one metric (memscope_flame_write_svg); its script is
 * flame_svg.js, embedded at build time. */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/flame.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"
#include "report.h"

extern const char memscope_flame_svg_js[];

/* pixels; CHAR_W is the 12 px monospace font's advance, as in flame_svg.js */
enum { WIDTH = 1200, PAD = 10, FRAME_H = 16, TOP = 60, BOTTOM = 34 };
#define CHAR_W 7.2
#define MIN_WIDTH 0.1
/* A graph has at most MAX_DEPTH levels (deeper frames are one DEEPER frame) and MAX_FRAMES frames
 * (the widest, then the shallowest), so a hostile input of a few deep stacks or many narrow ones
 * cannot make a file a browser cannot open. */
#define MAX_DEPTH 256
#define MAX_FRAMES 100000
#define DEEPER UINT32_MAX
#define DEEPER_NAME "[deeper frames]"
/* a byte total of MEMSCOPE_BYTES_OVERFLOW in a tooltip (the title has memscope_bytes_text's) */
#define OVERFLOWED "more than 16.0 EiB: the total overflowed"

/* one path, for sorting by its frames' names; a path deeper than MAX_DEPTH is cut to its first
 * MAX_DEPTH - 1 frames and DEEPER */
struct item {
	const struct memscope_strtab *st;
	const uint32_t *fr;
	size_t nf;
	int cut;
	uint64_t weight;
};

/* a frame being laid out: its string, where it starts (in weight from the left), and how many
 * frames had been drawn when it opened (those drawn before it closes are its descendants) */
struct open_frame {
	uint32_t id;
	uint32_t prev; /* the sibling before it, in name order (has_prev) */
	int has_prev;
	uint64_t start;
	size_t drawn;
};

/* a frame that could be drawn, while choosing the MAX_FRAMES that are */
struct cand {
	uint64_t weight;
	size_t depth;
};

struct svg {
	FILE *out; /* NULL: collect the frames that could be drawn in cands */
	const struct memscope_strtab *st;
	const char *unit; /* "bytes" or "allocations" */
	int count;	  /* the weights are allocations, not bytes */
	uint64_t total;
	double scale; /* pixels per unit of weight */
	size_t depth; /* of the deepest frame; the root "all" is depth 0 */
	size_t drawn; /* frames drawn so far */
	struct cand *cands;
	size_t n_cands, cap_cands, left_out;
	int oom;
	struct cand cut; /* with more than MAX_FRAMES frames: a frame no wider than cut.weight is
			    drawn only when shallower than cut.depth (cut.depth 0: no cut) */
};

/* v with thousands separators ("1,234,567") into buf of at least 27 bytes. */
static const char *thousands(uint64_t v, char *buf)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v), i, o = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

/* The next character of s: its length in bytes (1 for a byte that is not valid UTF-8, which
 * *ok says). */
/* The characters of s[0..n), as ms__xml_next_char counts them. */
static size_t count_chars(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t chars = 0;
	int ok;

	for (; p < end; chars++)
		p += ms__xml_next_char(p, end, &ok);
	return chars;
}

/* The index of the '(' that the ')' at s[k - 1] closes; SIZE_MAX when none does. */
static size_t open_paren(const char *s, size_t k)
{
	size_t depth = 0;

	while (k--) {
		depth += s[k] == ')';
		if (s[k] == '(' && !--depth)
			return k;
	}
	return SIZE_MAX;
}

/* The part of a name a label too narrow for all of it shows, a prefix: a C frame
 * "ns::f(int) (libx.so)" without " (libx.so)" and then without "(int)", so that what is left is
 * the function ("ns::f"); any other name whole. (A control character counts as the blank it is
 * written as.) */
static size_t short_len(const char *s, size_t n)
{
	size_t p;

	if (n && s[n - 1] == ')' && (p = open_paren(s, n)) != SIZE_MAX && p > 1 &&
		(unsigned char)s[p - 1] <= ' ')
		n = p - 1;
	if (n && s[n - 1] == ')' && (p = open_paren(s, n)) != SIZE_MAX && p > 0)
		n = p;
	return n;
}

/* Whether a part of a name ends with c: '.', '/', ':' or a blank (a control character is
 * written as one). */
static int ends_part(unsigned char c)
{
	return c == '.' || c == '/' || c == ':' || c <= ' ';
}

/* The fewest characters of a name an elided label shows after its ellipsis, and before it (a
 * start of 1 or 2 characters, "c1…", is left out: the end alone says more). A label too narrow
 * for TAIL_MIN characters and the ellipsis is empty (the frame keeps its tooltip). */
enum { TAIL_MIN = 4, HEAD_MIN = 3 };

/*
 * Where the middle of s[0..n), chars characters, goes in a label of max (at least TAIL_MIN + 1):
 * its characters head to tail (the first of the end kept), the start filling the room the end
 * leaves. With shared (a start its siblings have too, shared_start), the end from there, or the
 * last max - 1 characters when that is longer: "torch._ops.aten.addmm.default" beside
 * "torch._ops.aten.addcmul.default" in 13 is "…ddmm.default", in 25 "torch._ops.…addmm.default".
 * Else the longest end that starts a part (a character that is not '.', '/', ':' or a blank
 * after one of them, so "::" ends one part) with room for the ellipsis: alone in 14,
 * "…addmm.default"; else the first (max - 1) / 3 characters (none when under HEAD_MIN) and the
 * rest of the room from the end. The end has at least TAIL_MIN characters; a start under
 * HEAD_MIN characters is none.
 */
static void middle(const char *s, size_t n, size_t chars, size_t max, size_t shared, size_t *head,
	size_t *tail)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t k, len;
	int ok;

	if (shared && shared < chars) {
		*tail = chars - shared <= max - 1 ? shared : chars - (max - 1);
		if (*tail > chars - TAIL_MIN)
			*tail = chars - TAIL_MIN;
		*head = max - 1 - (chars - *tail);
		goto out;
	}
	for (k = 0; p < end; p += len, k++) {
		len = ms__xml_next_char(p, end, &ok);
		if (k + TAIL_MIN > chars)
			break;
		if (k + max - 1 >= chars && k && ends_part(p[-1]) && !ends_part(p[0])) {
			*head = max - 1 - (chars - k);
			*tail = k;
			goto out;
		}
	}
	*head = (max - 1) / 3 < HEAD_MIN ? 0 : (max - 1) / 3;
	*tail = chars - (max - 1 - *head);
out:
	if (*head < HEAD_MIN)
		*head = 0;
}

/*
 * s[0..n) as XML text: markup characters escaped, control characters as blanks, bytes that are
 * not UTF-8 (and U+FFFE, U+FFFF) as '?'. When max is not 0 and s has more characters, a label
 * of at most max: the short part of s (short_len), and when that is still longer, its start and
 * its end with an ellipsis for the middle (middle, with shared): the end of a name tells siblings
 * apart more often than its start; nothing when max is under TAIL_MIN + 1. The characters
 * counted are those flame_svg.js's label counts for the names it has.
 */
static void xml_text(FILE *out, const char *s, size_t n, size_t max, size_t shared)
{
	const unsigned char *p, *end;
	size_t chars = 0, len, head = SIZE_MAX, tail = 0, k;
	int ok;

	if (max && count_chars(s, n) > max) {
		n = short_len(s, n);
		if ((chars = count_chars(s, n)) > max && max < TAIL_MIN + 1)
			return;
		if (chars > max)
			middle(s, n, chars, max, shared, &head, &tail);
	}
	end = (const unsigned char *)s + n;
	for (p = (const unsigned char *)s, k = 0; p < end; p += len, k++) {
		len = ms__xml_next_char(p, end, &ok);
		if (k == head)
			fputs("\xe2\x80\xa6", out); /* U+2026 HORIZONTAL ELLIPSIS */
		if (k >= head && k < tail)
			continue;
		ms__xml_char(out, p, len, ok);
	}
}

/* A colour of the name's family: Python frames green, placeholders ("[PTA, no stack]") grey,
 * others (C frames, ops, owner levels) blue; the shade from a hash of the name, so a name has
 * the same colour in every graph. */
static void fill(FILE *out, const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;
	int py = 0;

	for (i = 0; i < n; i++) {
		h = (h ^ (unsigned char)s[i]) * 16777619u;
		py |= i + 4 <= n && memcmp(s + i, ".py(", 4) == 0;
	}
	if (n && s[0] == '[')
		fprintf(out, "rgb(%u,%u,%u)", 170 + h % 30, 170 + h % 30, 170 + h % 30);
	else if (py)
		fprintf(out, "rgb(%u,%u,%u)", 60 + h % 70, 170 + (h >> 8) % 60,
			60 + (h >> 16) % 50);
	else
		fprintf(out, "rgb(%u,%u,%u)", 60 + h % 60, 150 + (h >> 8) % 60,
			200 + (h >> 16) % 50);
}

/* The characters of s[0..n)'s start that t[0..tn) has too, back to the end of a part (after '.',
 * '/', ':' or a blank), or best when that is more. */
static size_t shared_start(const char *s, size_t n, const char *t, size_t tn, size_t best)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	const unsigned char *q = (const unsigned char *)t, *q_end = q + tn;
	size_t k, len, q_len;
	int ok;

	for (k = 0; p < end && q < q_end; p += len, q += q_len, k++) {
		len = ms__xml_next_char(p, end, &ok);
		q_len = ms__xml_next_char(q, q_end, &ok);
		if (len != q_len || memcmp(p, q, len))
			break;
		if (len == 1 && ends_part(*p) && k + 1 > best)
			best = k + 1;
	}
	return best;
}

/* A frame's weight in its tooltip: bytes in binary units and exact ("1.50 KiB, 1,536 bytes";
 * under 1 KiB "512 bytes"), allocations exact ("1,234 allocations"). A total that overflowed
 * says so, without parentheses: the script takes a frame's name from its tooltip up to the last
 * " (". */
static void amount(struct svg *g, uint64_t weight)
{
	char num[32], text[MEMSCOPE_BYTES_TEXT_MAX];

	if (!g->count && weight == MEMSCOPE_BYTES_OVERFLOW)
		fputs(OVERFLOWED, g->out);
	else if (g->count || weight < 1024)
		fprintf(g->out, "%s %s", thousands(weight, num), g->unit);
	else
		fprintf(g->out, "%s, %s bytes", memscope_bytes_text(text, sizeof(text), weight),
			thousands(weight, num));
}

/* One frame, unless narrower than MIN_WIDTH or past the cut: its group of tooltip, rectangle and
 * label, how many frames before it are its descendants, and (data-p) how many characters of its
 * start its label may leave out because a sibling has them too (shared_start). */
static void frame(struct svg *g, const char *s, size_t n, size_t depth, uint64_t start,
	uint64_t weight, size_t descendants, size_t shared)
{
	double x = PAD + (double)start * g->scale;
	double w = depth ? (double)weight * g->scale : WIDTH - 2 * PAD;
	double y = TOP + (double)(g->depth - depth) * FRAME_H;
	double w_chars;
	char width[32];

	if (depth && (w < MIN_WIDTH || (g->cut.depth && weight <= g->cut.weight &&
					       (weight < g->cut.weight || depth >= g->cut.depth))))
		return;
	g->drawn++;
	if (!g->out) {
		if (ms__grow_array(&g->cands, &g->cap_cands, g->n_cands + 1, sizeof(*g->cands)))
			g->oom = 1;
		else
			g->cands[g->n_cands++] = (struct cand){ weight, depth };
		return;
	}
	/* the label fits the width as written, which is what the script has */
	snprintf(width, sizeof(width), "%.2f", w);
	w_chars = (strtod(width, NULL) - 6) / CHAR_W;
	fprintf(g->out,
		shared ? "<g data-n=\"%zu\" data-p=\"%zu\"><title>" : "<g data-n=\"%zu\"><title>",
		descendants, shared);
	xml_text(g->out, s, n, 0, 0);
	fputs(" (", g->out);
	amount(g, weight);
	fprintf(g->out,
		", %.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%s\" "
		"height=\"%d\" fill=\"",
		g->total ? 100.0 * (double)weight / (double)g->total : 100.0, x, y, width,
		FRAME_H - 1);
	if (depth)
		fill(g->out, s, n);
	else
		fputs("rgb(190,190,200)", g->out);
	fprintf(g->out, "\"/><text x=\"%.2f\" y=\"%.0f\">", x + 3, y + FRAME_H - 4);
	if (w_chars >= 3)
		xml_text(g->out, s, n, (size_t)w_chars, shared);
	fputs("</text></g>\n", g->out);
}

static int cmp_cand(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return (a->depth > b->depth) - (a->depth < b->depth);
}

static size_t item_len(const struct item *it)
{
	return it->nf + (size_t)it->cut;
}

static uint32_t item_frame(const struct item *it, size_t k)
{
	return k < it->nf ? it->fr[k] : DEEPER;
}

static const char *frame_str(const struct memscope_strtab *st, uint32_t id, size_t *len)
{
	const char *s = id == DEEPER ? DEEPER_NAME : memscope_strtab_str(st, id, len);

	if (id == DEEPER)
		*len = sizeof(DEEPER_NAME) - 1;
	else if (!s)
		*len = 0;
	return s ? s : "";
}

static int cmp_item(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	size_t k, la, lb, na = item_len(a), nb = item_len(b);

	for (k = 0; k < na && k < nb; k++) {
		uint32_t fa = item_frame(a, k), fb = item_frame(b, k);
		const char *sa = frame_str(a->st, fa, &la), *sb = frame_str(b->st, fb, &lb);
		int c = fa == fb ? 0 : memcmp(sa, sb, la < lb ? la : lb);

		if (c || la != lb)
			return c ? c : la < lb ? -1 : 1;
	}
	return (na > nb) - (na < nb);
}

/* o closes at at; next (has_next) is the sibling after it. */
static void close_frame(struct svg *g, const struct open_frame *o, size_t depth, uint64_t at,
	uint32_t next, int has_next)
{
	size_t len, t_len, shared = 0;
	const char *s = frame_str(g->st, o->id, &len), *t;

	if (g->out && o->has_prev) {
		t = frame_str(g->st, o->prev, &t_len);
		shared = shared_start(s, len, t, t_len, shared);
	}
	if (g->out && has_next) {
		t = frame_str(g->st, next, &t_len);
		shared = shared_start(s, len, t, t_len, shared);
	}
	frame(g, s, len, depth, o->start, at - o->start, g->drawn - o->drawn, shared);
}

/* The paths in name order, the root's frames drawn (or counted): a frame opens with the first
 * path through it and closes, with the weight of the paths through it, when a path leaves it.
 * open holds g->depth frames. */
static void sweep(struct svg *g, const struct item *items, size_t n, struct open_frame *open)
{
	size_t i, k, common, len, depth = 0;
	uint32_t prev;
	int had;
	uint64_t at = 0;

	g->drawn = 0;
	for (i = 0; i < n; i++) {
		len = item_len(&items[i]);
		for (common = 0; common < depth && common < len &&
				 open[common].id == item_frame(&items[i], common);
			common++)
			;
		/* the frame closing at common is the previous sibling of the one opening there */
		had = depth > common && common < len;
		prev = had ? open[common].id : 0;
		while (depth > common) {
			depth--;
			close_frame(g, &open[depth], depth + 1, at,
				depth == common && had ? item_frame(&items[i], common) : 0,
				depth == common && had);
		}
		for (k = common; k < len; k++)
			open[depth++] = (struct open_frame){ item_frame(&items[i], k), prev,
				k == common && had, at, g->drawn };
		if (__builtin_add_overflow(at, items[i].weight, &at))
			at = UINT64_MAX;
	}
	while (depth) {
		depth--;
		close_frame(g, &open[depth], depth + 1, at, 0, 0);
	}
}

static void header(struct svg *g, const char *title, const char *subtitle, int height)
{
	fprintf(g->out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		"<!-- memscope-export %s -->\n"
		"<style>\n"
		"text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); }\n"
		"#title { text-anchor: middle; font-size: 17px; }\n"
		"#subtitle { text-anchor: middle; fill: rgb(90,90,90); }\n"
		"#search, #matched { text-anchor: end; }\n"
		"#search, #unzoom, #frames > g { cursor: pointer; }\n"
		"#frames > g:hover > rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
		".hide { display: none; }\n"
		".parent { opacity: 0.5; }\n"
		"</style>\n"
		"<defs><linearGradient id=\"background\" x1=\"0\" x2=\"0\" y1=\"0\" y2=\"1\">"
		"<stop stop-color=\"#eeeeee\" offset=\"5%%\"/>"
		"<stop stop-color=\"#e0e8f0\" offset=\"95%%\"/></linearGradient></defs>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
		"fill=\"url(#background)\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"24\">",
		WIDTH, height, WIDTH, height, memscope_version(), WIDTH / 2);
	xml_text(g->out, title, strlen(title), 0, 0);
	fprintf(g->out, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"44\">", WIDTH / 2);
	if (subtitle)
		xml_text(g->out, subtitle, strlen(subtitle), 0, 0);
	if (g->cut.depth)
		fprintf(g->out, "%s%zu frames left out (the narrowest, then the deepest)",
			subtitle ? "; " : "", g->left_out);
	fprintf(g->out,
		"</text>\n"
		"<text id=\"unzoom\" x=\"%d\" y=\"24\" class=\"hide\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"24\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n"
		"<g id=\"frames\" data-cut-weight=\"%llu\" data-cut-depth=\"%zu\">\n",
		PAD, WIDTH - PAD, PAD, height - 12, WIDTH - PAD, height - 12,
		(unsigned long long)g->cut.weight, g->cut.depth);
}

int memscope_flame_write_svg(FILE *out, const struct memscope_flame *f, unsigned metric,
	const char *subtitle, struct memscope_error *err)
{
	struct svg g = { .st = memscope_flame_strtab(f),
		.unit = metric == MEMSCOPE_FLAME_COUNT ? "allocations" : "bytes",
		.count = metric == MEMSCOPE_FLAME_COUNT };
	size_t n, i;
	const struct memscope_flame_entry *e = memscope_flame_entries(f, metric, &n, &g.total);
	struct item *items = malloc((n ? n : 1) * sizeof(*items));
	struct open_frame *open = NULL;
	char title[320], num[MEMSCOPE_BYTES_TEXT_MAX], text[32];

	for (i = 0; items && i < n; i++) {
		struct item *it = &items[i];

		*it = (struct item){ g.st, NULL, 0, 0, e[i].weight };
		it->fr = memscope_strtab_stack(g.st, e[i].path, &it->nf);
		if (it->nf > MAX_DEPTH) {
			it->nf = MAX_DEPTH - 1;
			it->cut = 1;
		}
		if (item_len(it) > g.depth)
			g.depth = item_len(it);
	}
	if (!items || !(open = malloc((g.depth + 1) * sizeof(*open)))) {
		free(items);
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	}
	qsort(items, n, sizeof(*items), cmp_item);
	g.scale = g.total ? (double)(WIDTH - 2 * PAD) / (double)g.total : 0;
	sweep(&g, items, n, open);
	if (g.n_cands > MAX_FRAMES && !g.oom) {
		/* the MAX_FRAMES widest, then shallowest: a frame is never wider than its parent
		 * and is deeper, so the frames kept are a tree */
		size_t kept = MAX_FRAMES;

		qsort(g.cands, g.n_cands, sizeof(*g.cands), cmp_cand);
		g.cut = g.cands[MAX_FRAMES];
		while (kept && !cmp_cand(&g.cands[kept - 1], &g.cut))
			kept--;
		g.left_out = g.n_cands - kept;
	}
	if (g.oom) {
		free(g.cands);
		free(open);
		free(items);
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	}
	memscope_flame_profile_name(f, metric, title, sizeof(title));
	/* the title is for people: bytes in binary units (the tooltips have them exact) */
	if (metric != MEMSCOPE_FLAME_PEAK || !memscope_flame_peak(f)->found) {
		if (g.count)
			snprintf(num, sizeof(num), "%s allocations", thousands(g.total, text));
		else
			memscope_bytes_text(num, sizeof(num), g.total);
		snprintf(title + strlen(title), sizeof(title) - strlen(title), " (total: %s)", num);
	}
	g.out = out;
	header(&g, title, subtitle, TOP + (int)(g.depth + 1) * FRAME_H + BOTTOM);
	sweep(&g, items, n, open);
	frame(&g, "all", 3, 0, 0, g.total, g.drawn, 0);
	fprintf(out, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
		memscope_flame_svg_js);
	free(g.cands);
	free(open);
	free(items);
	return ms__write_end(out, 0, err);
}
