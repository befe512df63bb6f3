/* Memory over time as one self-contained HTML page (memscope_peak_write_html): curves of live
 * bytes cut to one column per pixel, the peak, the steps, the owners at the peak; its script is
 * memory_html.js, embedded at build time. */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/memscope.h"
#include "memscope/peak.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"
#include "report.h"

extern const char memscope_memory_html_js[];

/* pixels: the SVG, and the plot inside it; one column of the curves per pixel of PLOT_W */
enum { SVG_W = 1200, SVG_H = 500, PLOT_X = 84, PLOT_Y = 44, PLOT_W = 1092, PLOT_H = 400 };
/* curves drawn (the highest peaks), owners listed, step bands shaded, at most */
enum { MAX_CURVES = 32, TOP_OWNERS = 20, MAX_BANDS = 1000 };

static const char *const palette[] = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#7f7f7f" };
#define N_COLOURS (sizeof(palette) / sizeof(palette[0]))
static const char *const dashes[] = { "", "6 3", "2 2", "8 3 2 3" };

/* A curve's pixel column: its lowest, highest and last live bytes there. */
struct col {
	int64_t lo, hi, end;
};

struct page {
	FILE *out;
	const struct memscope_peak *p;
	const struct memscope_strtab *st;
	const struct memscope_peak_track *tracks;
	size_t n_tracks;
	const char **names; /* per input: the name that tells it apart (input_names) */
	size_t n_inputs;
	long *slot_of;	  /* per track: its curve, -1 when not drawn */
	size_t *track_of; /* per curve: its track, in track order */
	size_t n_curves;
	struct col *cols;   /* n_curves * PLOT_W */
	unsigned char *has; /* n_curves * PLOT_W: the column has a point */
	uint64_t from;	    /* the x axis starts from ns after each input's first row */
	uint64_t span;	    /* and is span ns wide */
	uint64_t ymax;	    /* the y axis' top, bytes */
	long peak_track;    /* -1: none */
};

static void html_cstr(FILE *out, const char *s)
{
	xml_str(out, s, strlen(s));
}

/* The name of input src: the shortest ending of its path that tells the inputs apart. */
static const char *input_name(const struct page *g, uint32_t src)
{
	return src < g->n_inputs && g->names ? g->names[src] : "input";
}

/* "PTA, device 0, process 3101864" and, with several inputs, the input's name. */
static void track_label(const struct page *g, const struct memscope_peak_track *t)
{
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];
	const char *pool = memscope_subtype_name(t->pool);

	fprintf(g->out, "%s, device %s, process %llu", pool ? pool : "memory",
		memscope_device_text(t->device, dev), (unsigned long long)t->pid);
	if (g->n_inputs > 1) {
		fputs(", ", g->out);
		html_cstr(g->out, input_name(g, t->src));
	}
}

/* The origin of input src's times: its first row (memscope_peak_origin). */
static uint64_t t0_of(const struct page *g, uint32_t src)
{
	return memscope_peak_origin(g->p, src);
}

/* ts of input src in ns from the x axis' start (0 before it). */
static uint64_t rel(const struct page *g, uint32_t src, uint64_t ts)
{
	uint64_t t0 = t0_of(g, src) + g->from;

	return ts > t0 ? ts - t0 : 0;
}

static double x_of_ts(const struct page *g, uint32_t src, uint64_t ts)
{
	double x = (double)rel(g, src, ts) / (double)g->span * PLOT_W;

	return PLOT_X + (x > PLOT_W ? PLOT_W : x);
}

static size_t col_of(const struct page *g, uint32_t src, uint64_t ts)
{
	double c = (double)rel(g, src, ts) / (double)g->span * PLOT_W;

	return c >= PLOT_W - 1 ? PLOT_W - 1 : (size_t)c;
}

static double y_of(const struct page *g, int64_t v)
{
	double f = v <= 0 || !g->ymax ? 0 : (double)v / (double)g->ymax;

	return PLOT_Y + PLOT_H - (f > 1 ? 1 : f) * PLOT_H;
}

static int on_point(void *ctx, const struct memscope_peak_point *pt)
{
	struct page *g = ctx;
	long s = g->slot_of[pt->track];
	size_t c, k;
	struct col *x;

	if (s < 0)
		return 0;
	c = col_of(g, g->tracks[pt->track].src, pt->ts_ns);
	k = (size_t)s * PLOT_W + c;
	x = &g->cols[k];
	if (!g->has[k]) {
		g->has[k] = 1;
		*x = (struct col){ pt->bytes, pt->bytes, pt->bytes };
		return 0;
	}
	if (pt->bytes < x->lo)
		x->lo = pt->bytes;
	if (pt->bytes > x->hi)
		x->hi = pt->bytes;
	x->end = pt->bytes;
	return 0;
}

/* A track and its peak, to choose the curves drawn. */
struct rank {
	int64_t peak;
	size_t track;
	int first; /* the track of the peak: drawn whatever the others' peaks */
};

/* The peak's track first, then the highest peaks, then the first tracks. */
static int cmp_rank(const void *pa, const void *pb)
{
	const struct rank *a = pa, *b = pb;

	if (a->first != b->first)
		return a->first ? -1 : 1;
	if (a->peak != b->peak)
		return a->peak > b->peak ? -1 : 1;
	return (a->track > b->track) - (a->track < b->track);
}

static int cmp_size(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	return (a > b) - (a < b);
}

/* The curves drawn, their columns, and the axes. 0 or MEMSCOPE_E_NOMEM. */
static int lay_out(struct page *g)
{
	struct rank *r = malloc((g->n_tracks ? g->n_tracks : 1) * sizeof(*r));
	int64_t top = 0;
	size_t i;

	g->slot_of = malloc((g->n_tracks ? g->n_tracks : 1) * sizeof(*g->slot_of));
	g->track_of = malloc(MAX_CURVES * sizeof(*g->track_of));
	if (!r || !g->slot_of || !g->track_of) {
		free(r);
		return MEMSCOPE_E_NOMEM;
	}
	for (i = 0; i < g->n_tracks; i++) {
		r[i] = (struct rank){ g->tracks[i].peak, i, (long)i == g->peak_track };
		g->slot_of[i] = -1;
	}
	if (g->n_tracks)
		qsort(r, g->n_tracks, sizeof(*r), cmp_rank);
	g->n_curves = g->n_tracks < MAX_CURVES ? g->n_tracks : MAX_CURVES;
	for (i = 0; i < g->n_curves; i++)
		g->track_of[i] = r[i].track;
	free(r);
	/* drawn in the order of the tracks: input, process, device, pool */
	if (g->n_curves)
		qsort(g->track_of, g->n_curves, sizeof(*g->track_of), cmp_size);
	for (i = 0; i < g->n_curves; i++) {
		const struct memscope_peak_track *t = &g->tracks[g->track_of[i]];

		g->slot_of[g->track_of[i]] = (long)i;
		if (t->peak > top)
			top = t->peak;
	}
	memscope_peak_axis(g->p, &g->from, &g->span);
	g->span = g->span > g->from ? g->span - g->from : 1;
	/* headroom above the peak for its dot and label */
	g->ymax = (uint64_t)top + (uint64_t)top / 20 + 1;
	g->cols = calloc(g->n_curves ? g->n_curves * PLOT_W : 1, sizeof(*g->cols));
	g->has = calloc(g->n_curves ? g->n_curves * PLOT_W : 1, 1);
	if (!g->cols || !g->has)
		return MEMSCOPE_E_NOMEM;
	return memscope_peak_foreach_point(g->p, on_point, g);
}

/* The step of a round axis of about n ticks over [0, max] (1, 2 or 5 times a power of ten). */
static double nice_step(double max, double n)
{
	double raw = max > 0 ? max / n : 1, mag = 1, f;

	while (mag * 10 <= raw)
		mag *= 10;
	while (mag > raw && mag > 1e-12)
		mag /= 10;
	f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* The decimals that write the multiples of step (at most 9). */
static int decimals(double step)
{
	int d = 0;

	for (; step < 0.999999 && d < 9; d++)
		step *= 10;
	return d;
}

/* The y axis: round values in the binary unit of its top, written in that unit; ymax becomes
 * the last tick. */
static void y_axis(struct page *g)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double u = 1, top, step, v;
	unsigned k = 0, i;
	int d;

	if (!g->ymax)
		g->ymax = 1024;
	while ((double)g->ymax / u >= 1024 && k < 6) {
		u *= 1024;
		k++;
	}
	step = nice_step((double)g->ymax / u, 5);
	if (k == 0 && step < 1)
		step = 1;
	top = (double)(uint64_t)((double)g->ymax / u / step) * step;
	if (top * u < (double)g->ymax)
		top += step;
	g->ymax = top * u >= 9.2e18 ? INT64_MAX : (uint64_t)(top * u + 0.5);
	d = decimals(step);
	for (i = 0; (v = i * step) <= top + step / 2; i++) {
		double y = PLOT_Y + PLOT_H - v / top * PLOT_H;

		fprintf(g->out,
			"<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"ytick\" x=\"%d\" y=\"%.1f\">%.*f %s</text>\n",
			PLOT_X, PLOT_X + PLOT_W, y, y, PLOT_X - 6, y + 4, d, v, unit[k]);
	}
	fprintf(g->out,
		"<text class=\"label\" transform=\"translate(16 %d) rotate(-90)\">live bytes "
		"(%s)</text>\n",
		PLOT_Y + PLOT_H / 2, unit[k]);
}

/* The x axis: round times after each input's first row, from the axis' start to its end,
 * written as every time on the page (memscope_seconds_text). */
static void x_axis(const struct page *g)
{
	double step_s = nice_step((double)g->span / 1e9, 8);
	uint64_t step = step_s * 1e9 < 1 ? 1 : (uint64_t)(step_s * 1e9 + 0.5), v;
	char s[MEMSCOPE_SECONDS_TEXT_MAX];

	/* the texts have microsecond digits: no ticks closer */
	if (step < 1000)
		step = 1000;
	for (v = (g->from + step - 1) / step * step; v <= g->from + g->span; v += step) {
		double x = PLOT_X + (double)(v - g->from) / (double)g->span * PLOT_W;

		fprintf(g->out,
			"<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			"<text class=\"xtick%s\" data-ns=\"%llu\" x=\"%.1f\" y=\"%d\">%s</text>\n",
			x, x, PLOT_Y + PLOT_H, PLOT_Y + PLOT_H + 5,
			x > SVG_W - 48 ? " last" : "", /* its text ends at the tick, inside */
			(unsigned long long)v, x, PLOT_Y + PLOT_H + 19,
			memscope_seconds_text(s, sizeof(s), v, 0));
		if (v > UINT64_MAX - step)
			break;
	}
	fprintf(g->out,
		"<text class=\"label\" x=\"%d\" y=\"%d\">seconds after %s first row (as "
		"memscope-leaks and --from/--to count them)</text>\n",
		PLOT_X + PLOT_W / 2, PLOT_Y + PLOT_H + 40,
		g->n_inputs > 1 ? "each input's" : "the input's");
}

/* The process whose steps are drawn: the peak's, else the first with steps. */
struct step_pick {
	uint32_t src;
	uint64_t pid;
	const struct memscope_step_proc *p;
	uint64_t lo, hi;       /* its window (the axis without one), absolute ns */
	uint64_t first, count; /* the steps drawn: first .. first + count - 1 */
};

static int first_with_steps(
	void *ctx, uint32_t src, uint64_t pid, const struct memscope_step_proc *p)
{
	struct step_pick *k = ctx;

	if (!memscope_steps_count(p))
		return 0;
	*k = (struct step_pick){ src, pid, p, 0, 0, 0, 0 };
	return 1;
}

static struct step_pick pick_steps(const struct page *g)
{
	const struct memscope_steps *s = memscope_peak_steps(g->p);
	struct step_pick k = { 0, 0, NULL, 0, 0, 0, 0 };

	if (g->peak_track >= 0) {
		const struct memscope_peak_track *t = &g->tracks[g->peak_track];

		k = (struct step_pick){ t->src, t->pid, memscope_steps_proc(s, t->src, t->pid), 0,
			0, 0, 0 };
		if (k.p && memscope_steps_count(k.p))
			return k;
	}
	k.p = NULL;
	memscope_steps_foreach(s, first_with_steps, &k);
	return k;
}

static int step_drawn(const struct page *g, const struct step_pick *k, uint64_t n, uint64_t *start,
	uint64_t *end);

/* The process's window and the steps drawn in it. */
static void steps_drawn(const struct page *g, struct step_pick *k)
{
	uint64_t n, total = k->p ? memscope_steps_count(k->p) : 0, a, b;
	size_t i;

	k->lo = t0_of(g, k->src) + g->from;
	k->hi = k->lo + g->span;
	for (i = 0; i < g->n_tracks; i++)
		if (g->tracks[i].src == k->src && g->tracks[i].pid == k->pid) {
			k->lo = g->tracks[i].from_ts_ns;
			k->hi = g->tracks[i].to_ts_ns;
			break;
		}
	k->first = k->count = 0;
	for (n = 1; n <= total; n++)
		if (step_drawn(g, k, n, &a, &b)) {
			if (!k->count)
				k->first = n;
			k->count = n - k->first + 1;
		} else if (k->count && a > k->hi) {
			break;
		}
}

/* Step n's start and end (ns): memscope_steps_span, a step without an end to the axis' end. */
static void step_span(const struct page *g, uint32_t src, const struct memscope_step_proc *p,
	uint64_t n, uint64_t *start, uint64_t *end)
{
	struct memscope_pos pos = { 0, 0 };
	int open;

	if (!memscope_steps_span(p, n, start, end, &open)) { /* SYSTEM: the step still running */
		*start = n > 1 && memscope_steps_start(p, n, &pos) ? pos.ts_ns + 1 : 0;
		*end = UINT64_MAX;
	}
	if (*end == UINT64_MAX)
		*end = t0_of(g, src) + g->from + g->span;
	if (*end < *start)
		*end = *start;
}

/* Step n as drawn: its span clipped to the window of its process (the axis without one); 0 when
 * it is outside or only touches it. */
static int step_drawn(
	const struct page *g, const struct step_pick *k, uint64_t n, uint64_t *start, uint64_t *end)
{
	uint64_t lo = k->lo, hi = k->hi;

	step_span(g, k->src, k->p, n, start, end);
	if (*start > hi || *end < lo)
		return 0;
	if ((*start < lo || *end > hi) && (*end == lo || *start == hi))
		return 0;
	*start = *start < lo ? lo : *start;
	*end = *end > hi ? hi : *end;
	return 1;
}

/* The steps as bands behind the curves, numbered above the plot. */
static void bands(const struct page *g, const struct step_pick *k)
{
	uint64_t n, start, end, first, last, every = 1, mag = 1, count = k->count;
	uint64_t top = k->first + count;
	double need = 7.0 * (top > 999 ? 4 : top > 99 ? 3 : top > 9 ? 2 : 1) + 6, avg;

	/* narrow bands: every 1st, 2nd, 5th, 10th, 20th, ... step numbered, the numbers apart */
	if (count && count <= MAX_BANDS) {
		step_drawn(g, k, k->first, &first, &end);
		step_drawn(g, k, top - 1, &start, &last);
		avg = (x_of_ts(g, k->src, last) - x_of_ts(g, k->src, first)) / (double)count;
		while ((double)every * avg < need && every < count)
			every = every == mag ? 2 * mag : every == 2 * mag ? 5 * mag : (mag *= 10);
	}

	if (count && count <= MAX_BANDS)
		fprintf(g->out, "<text class=\"steplabel\" x=\"%d\" y=\"%d\">step</text>\n",
			PLOT_X - 6, PLOT_Y - 9);
	fprintf(g->out, "<g id=\"steps\" data-count=\"%llu\"", (unsigned long long)count);
	if (k->p)
		fprintf(g->out, " data-src=\"%u\" data-pid=\"%llu\"", k->src,
			(unsigned long long)k->pid);
	fputs(">\n", g->out);
	for (n = k->first; count <= MAX_BANDS && n < top; n++) {
		double x0, x1;
		char num[24];
		int len = snprintf(num, sizeof(num), "%llu", (unsigned long long)n);

		if (!step_drawn(g, k, n, &start, &end))
			continue;
		x0 = x_of_ts(g, k->src, start);
		x1 = x_of_ts(g, k->src, end);
		fprintf(g->out,
			"<rect class=\"band%s\" data-step=\"%llu\" data-start-ns=\"%llu\" "
			"data-end-ns=\"%llu\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\"/>",
			n % 2 ? "" : " even", (unsigned long long)n, (unsigned long long)start,
			(unsigned long long)end, x0, PLOT_Y, x1 - x0, PLOT_H);
		if (every == 1 ? x1 - x0 >= len * 7 + 4 : n % every == 0)
			fprintf(g->out, "<text class=\"stepno\" x=\"%.2f\" y=\"%d\">%s</text>",
				(x0 + x1) / 2, PLOT_Y - 9, num);
		fputc('\n', g->out);
	}
	fputs("</g>\n", g->out);
}

/* A curve's path: from 0 at its first column, a vertical stroke over each column's values (the
 * value before it, its lowest and highest, its last), flat between, to its process's end. */
static void curve(const struct page *g, size_t slot)
{
	const struct memscope_peak_track *t = &g->tracks[g->track_of[slot]];
	const struct col *cols = &g->cols[slot * PLOT_W];
	const unsigned char *has = &g->has[slot * PLOT_W];
	int64_t carried = t->start_bytes, v[3];
	double x = PLOT_X + (double)col_of(g, t->src, t->from_ts_ns) + 0.5, y = y_of(g, carried),
	       ny;
	size_t c, end = col_of(g, t->src, t->end_ts_ns), j;
	int started = 0;

	fprintf(g->out,
		"<path class=\"curve\" data-track=\"%zu\" stroke=\"%s\" stroke-dasharray=\"%s\" "
		"d=\"",
		g->track_of[slot], palette[slot % N_COLOURS], dashes[slot / N_COLOURS % 4]);
	for (c = 0; c < PLOT_W; c++) {
		if (!has[c])
			continue;
		if (!started) {
			/* from its live bytes at the window's start (0 without one) */
			fprintf(g->out, "M%.1f %.1f", x, y);
			started = 1;
		}
		if (PLOT_X + (double)c + 0.5 > x)
			fprintf(g->out, "H%.1f", PLOT_X + (double)c + 0.5);
		x = PLOT_X + (double)c + 0.5;
		v[0] = cols[c].hi > carried ? cols[c].hi : carried;
		v[1] = cols[c].lo < carried ? cols[c].lo : carried;
		v[2] = cols[c].end;
		for (j = 0; j < 3; j++) {
			ny = y_of(g, v[j]);
			if (ny != y)
				fprintf(g->out, "V%.1f", ny);
			y = ny;
		}
		carried = cols[c].end;
	}
	if (!started) /* no point in the window: its live bytes at the start, flat */
		fprintf(g->out, "M%.1f %.1f", x, y);
	if (PLOT_X + (double)end + 0.5 > x)
		fprintf(g->out, "H%.1f", PLOT_X + (double)end + 0.5);
	fputs("\"/>\n", g->out);
}

/* The peak: a dot on its curve, a dashed line down to the axis, and its bytes and time. */
static void peak_mark(const struct page *g)
{
	const struct memscope_peak_track *t = &g->tracks[g->peak_track];
	char b[MEMSCOPE_BYTES_TEXT_MAX], s[MEMSCOPE_SECONDS_TEXT_MAX];
	double x = PLOT_X + (double)col_of(g, t->src, t->peak_at.ts_ns) + 0.5;
	double y = y_of(g, t->peak);
	int right = x > PLOT_X + PLOT_W * 0.6;

	fprintf(g->out,
		"<g id=\"peak\" data-track=\"%ld\" data-bytes=\"%lld\" data-ts-ns=\"%llu\">"
		"<line class=\"peakline\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%d\"/>"
		"<circle class=\"peakdot\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\"/>"
		"<text class=\"peaktext\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">peak %s at "
		"%s</text>"
		"</g>\n",
		g->peak_track, (long long)t->peak, (unsigned long long)t->peak_at.ts_ns, x, x, y,
		PLOT_Y + PLOT_H, x, y, right ? x - 8 : x + 8, y < PLOT_Y + 14 ? y + 16 : y - 8,
		right ? "end" : "start", memscope_bytes_text(b, sizeof(b), (uint64_t)t->peak),
		memscope_seconds_text(s, sizeof(s), t->peak_at.ts_ns, t0_of(g, t->src)));
}

/* The legend: each curve's colour, name and peak; a click hides or shows the curve. */
static void legend(const struct page *g)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX], s[MEMSCOPE_SECONDS_TEXT_MAX], e[MEMSCOPE_BYTES_TEXT_MAX];
	size_t i;

	fputs("<table id=\"legend\"><thead><tr><th></th><th>curve (a click hides or shows "
	      "it)</th><th class=\"num\">peak</th><th class=\"num\">peak at</th><th "
	      "class=\"num\">at its end</th></tr></thead><tbody>\n",
		g->out);
	for (i = 0; i < g->n_curves; i++) {
		const struct memscope_peak_track *t = &g->tracks[g->track_of[i]];

		fprintf(g->out,
			"<tr class=\"entry\" data-track=\"%zu\" data-peak=\"%lld\" "
			"data-peak-ts-ns=\"%llu\"><td><svg width=\"28\" height=\"10\"><line "
			"x1=\"1\" "
			"x2=\"27\" y1=\"5\" y2=\"5\" stroke=\"%s\" stroke-width=\"2.5\" "
			"stroke-dasharray=\"%s\"/></svg></td><td class=\"name\">",
			g->track_of[i], (long long)t->peak, (unsigned long long)t->peak_at.ts_ns,
			palette[i % N_COLOURS], dashes[i / N_COLOURS % 4]);
		track_label(g, t);
		fprintf(g->out,
			"</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td "
			"class=\"num\">%s</td></tr>\n",
			memscope_bytes_text(b, sizeof(b), t->peak > 0 ? (uint64_t)t->peak : 0),
			t->peak > 0 ? memscope_seconds_text(
					      s, sizeof(s), t->peak_at.ts_ns, t0_of(g, t->src))
				    : "-",
			memscope_bytes_text(
				e, sizeof(e), t->end_bytes > 0 ? (uint64_t)t->end_bytes : 0));
	}
	fputs("</tbody></table>\n", g->out);
	if (g->n_tracks > g->n_curves)
		fprintf(g->out,
			"<p class=\"note\" id=\"more-tracks\" data-n=\"%zu\">%zu more tracks, with "
			"lower peaks, are not drawn.</p>\n",
			g->n_tracks - g->n_curves, g->n_tracks - g->n_curves);
}

/* A share of the peak's bytes: "12.3%", "<0.1%" for a sliver. */
static void share(FILE *out, uint64_t bytes, double total)
{
	double pct = 100.0 * (double)bytes / total;

	if (bytes && pct < 0.05)
		fputs("&lt;0.1%", out);
	else
		fprintf(out, "%.1f%%", pct);
}

/* The owners at the peak: the TOP_OWNERS with the most bytes, and the rest in one row. */
static void owners(const struct page *g)
{
	static const char *const by[] = { "owner tag", "op", "Python frame", "C frame", "-" };
	const struct memscope_peak_track *t = &g->tracks[g->peak_track];
	char b[MEMSCOPE_BYTES_TEXT_MAX], s[MEMSCOPE_SECONDS_TEXT_MAX];
	size_t n, i, len;
	const struct memscope_peak_owner *o = memscope_peak_owners(g->p, &n);
	uint64_t rest = 0, rest_blocks = 0;
	double total = t->peak > 0 ? (double)t->peak : 1;

	fputs("<h2>Who held the memory at the peak</h2>\n<p class=\"sub\">The blocks of ", g->out);
	track_label(g, t);
	fprintf(g->out,
		" live at %s: %s, by owner tag, else the op that allocated them, else the "
		"innermost frame of their call stack.</p>\n",
		memscope_seconds_text(s, sizeof(s), t->peak_at.ts_ns, t0_of(g, t->src)),
		memscope_bytes_text(b, sizeof(b), (uint64_t)t->peak));
	fprintf(g->out,
		"<table id=\"owners\" data-n=\"%zu\"><thead><tr><th class=\"num\">#</th>"
		"<th>owner</th><th>named by</th><th class=\"num\">bytes</th><th "
		"class=\"num\">share</th><th class=\"num\">blocks</th></tr></thead><tbody>\n",
		n);
	for (i = 0; i < n; i++) {
		const char *name = memscope_strtab_str(g->st, o[i].name, &len);

		if (i >= TOP_OWNERS) {
			rest += o[i].bytes;
			rest_blocks += o[i].blocks;
			continue;
		}
		fprintf(g->out,
			"<tr class=\"owner\" data-bytes=\"%llu\"><td class=\"num\">%zu</td><td "
			"class=\"name\">",
			(unsigned long long)o[i].bytes, i + 1);
		xml_str(g->out, name ? name : "", name ? len : 0);
		fprintf(g->out, "</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">",
			by[o[i].by <= MEMSCOPE_PEAK_BY_NONE ? o[i].by : MEMSCOPE_PEAK_BY_NONE],
			memscope_bytes_text(b, sizeof(b), o[i].bytes));
		share(g->out, o[i].bytes, total);
		fprintf(g->out, "</td><td class=\"num\">%llu</td></tr>\n",
			(unsigned long long)o[i].blocks);
	}
	if (n > TOP_OWNERS) {
		fprintf(g->out,
			"<tr class=\"rest\" data-bytes=\"%llu\"><td></td><td class=\"name\">%zu "
			"more "
			"owners</td><td></td><td class=\"num\">%s</td><td class=\"num\">",
			(unsigned long long)rest, n - TOP_OWNERS,
			memscope_bytes_text(b, sizeof(b), rest));
		share(g->out, rest, total);
		fprintf(g->out, "</td><td class=\"num\">%llu</td></tr>\n",
			(unsigned long long)rest_blocks);
	}
	fputs("</tbody></table>\n", g->out);
}

/* The values the script shows under the pointer: per curve and column, the highest live bytes
 * there (null outside its process's time); and the steps drawn. */
static void data(const struct page *g, const struct step_pick *k)
{
	size_t i, c;
	uint64_t n, start, end;
	int comma = 0;

	fprintf(g->out,
		"<script type=\"application/json\" id=\"memscope-data\">{\"plot_x\":%d,\"cols\":%d,"
		"\"svg_w\":%d,\"from_ns\":%llu,\"span_ns\":%llu,\"curves\":[",
		PLOT_X, PLOT_W, SVG_W, (unsigned long long)g->from, (unsigned long long)g->span);
	for (i = 0; i < g->n_curves; i++) {
		const struct memscope_peak_track *t = &g->tracks[g->track_of[i]];
		const struct col *cols = &g->cols[i * PLOT_W];
		const unsigned char *has = &g->has[i * PLOT_W];
		size_t first = col_of(g, t->src, t->from_ts_ns);
		size_t last = col_of(g, t->src, t->end_ts_ns);
		int64_t carried = t->start_bytes;

		fprintf(g->out, "%s{\"track\":%zu,\"values\":[", i ? "," : "", g->track_of[i]);
		for (c = 0; c < PLOT_W; c++) {
			int64_t v = carried;

			if (has[c]) {
				v = cols[c].hi > carried ? cols[c].hi : carried;
				carried = cols[c].end;
			}
			if (c < first || c > last)
				fprintf(g->out, "%snull", c ? "," : "");
			else
				fprintf(g->out, "%s%lld", c ? "," : "", (long long)v);
		}
		fputs("]}", g->out);
	}
	fputs("],\"steps\":[", g->out);
	/* [n, start, end]: ns after the input's first row, as the hover's time */
	for (n = k->first; k->count <= MAX_BANDS && n < k->first + k->count; n++) {
		if (!step_drawn(g, k, n, &start, &end))
			continue;
		fprintf(g->out, "%s[%llu,%llu,%llu]", comma++ ? "," : "", (unsigned long long)n,
			(unsigned long long)(start - t0_of(g, k->src)),
			(unsigned long long)(end - t0_of(g, k->src)));
	}
	fputs("]}</script>\n", g->out);
}

static const char style[] =
	"body { font: 14px/1.45 sans-serif; margin: 16px 24px; color: #222; background: #fff; }\n"
	"h1 { font-size: 20px; margin: 0 0 2px; }\n"
	"h2 { font-size: 16px; margin: 18px 0 2px; }\n"
	".sub, .note { color: #555; margin: 0 0 8px; }\n"
	"#chart { position: relative; width: 1200px; }\n"
	"#plot { display: block; }\n"
	"#plot text { font: 12px sans-serif; fill: #333; }\n"
	"#plot .ytick { text-anchor: end; }\n"
	"#plot .xtick, #plot .stepno, #plot .label { text-anchor: middle; }\n"
	"#plot .label { fill: #555; }\n"
	"#plot .stepno, #plot .steplabel { fill: #5a6b85; font-size: 11px; }\n"
	"#plot .steplabel, #plot .xtick.last { text-anchor: end; }\n"
	".grid { stroke: #e6e6e6; }\n"
	".tick, .axis { stroke: #666; }\n"
	".band { fill: #e4ebf5; }\n"
	".band.even { fill: #f3f6fa; }\n"
	".curve { fill: none; stroke-width: 1.6; stroke-linejoin: round; }\n"
	".curve.off { display: none; }\n"
	".peakline { stroke: #c0392b; stroke-dasharray: 4 3; }\n"
	".peakdot { fill: #c0392b; stroke: #fff; stroke-width: 1.5; }\n"
	"#plot .peaktext { fill: #c0392b; font-weight: bold; paint-order: stroke;\n"
	"  stroke: #fff; stroke-width: 5px; stroke-linejoin: round; }\n"
	"#cursor { stroke: #333; stroke-width: 0.8; }\n"
	"#tip { position: absolute; pointer-events: none; background: rgba(255,255,255,0.96);\n"
	"  border: 1px solid #aaa; border-radius: 4px; padding: 6px 9px; font-size: 12px;\n"
	"  white-space: nowrap; box-shadow: 0 1px 5px rgba(0,0,0,0.2); }\n"
	"#tip .t { font-weight: bold; }\n"
	"#tip .foot { color: #777; }\n"
	"#tip .sw { display: inline-block; width: 10px; height: 3px; margin: 0 6px 3px 0; }\n"
	"#tip .v { float: right; margin-left: 16px; font-variant-numeric: tabular-nums; }\n"
	"table { border-collapse: collapse; margin-top: 6px; }\n"
	"th, td { padding: 2px 10px; text-align: left; vertical-align: top; }\n"
	"th { border-bottom: 1px solid #bbb; font-weight: 600; }\n"
	".num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }\n"
	"td.name { max-width: 720px; overflow-wrap: anywhere; }\n"
	"#legend tr.entry { cursor: pointer; }\n"
	"#legend tr.off { opacity: 0.4; }\n"
	"#owners tbody tr:nth-child(even) { background: #f5f6f8; }\n";

/* The title's inputs (the first three) and what is counted. */
static void header(const struct page *g, size_t n_points)
{
	uint64_t seen, pools = memscope_peak_pools(g->p, &seen);
	unsigned k;
	size_t i;
	int first = 1;

	fprintf(g->out,
		"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
		"<meta name=\"generator\" content=\"memscope %s\"/>\n<title>Live memory over "
		"time: ",
		memscope_version());
	for (i = 0; i < g->n_inputs && i < 3; i++) {
		fputs(i ? ", " : "", g->out);
		html_cstr(g->out, input_name(g, (uint32_t)i));
	}
	fprintf(g->out,
		"%s</title>\n<style>\n%s</style>\n</head>\n<body>\n"
		"<h1>Live memory over time</h1>\n<p class=\"sub\">",
		g->n_inputs > 3 ? " ..." : "", style);
	for (i = 0; i < g->n_inputs && i < 3; i++) {
		fputs(i ? ", " : "", g->out);
		html_cstr(g->out, input_name(g, (uint32_t)i));
	}
	if (g->n_inputs > 3)
		fprintf(g->out, " and %zu more", g->n_inputs - 3);
	fputs("; pools counted: ", g->out);
	for (k = 0; k < 64; k++)
		if ((pools >> k) & 1 && memscope_subtype_name(k)) {
			fprintf(g->out, "%s%s", first ? "" : ", ", memscope_subtype_name(k));
			first = 0;
		}
	if (first)
		fputs("none", g->out);
	if ((seen & MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL)) &&
		!(pools & MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_HAL)))
		fputs(" (HAL left out: the framework pools' blocks are carved out of its memory; "
		      "--pool hal draws it)",
			g->out);
	fprintf(g->out, "; %zu allocations and frees in %zu track%s.</p>\n", n_points, g->n_tracks,
		g->n_tracks == 1 ? "" : "s");
}

int memscope_peak_write_html(FILE *out, const struct memscope_peak *p, const char *const *inputs,
	size_t n_inputs, struct memscope_error *err)
{
	struct page g = { .out = out,
		.p = p,
		.st = memscope_peak_strtab(p),
		.n_inputs = n_inputs,
		.peak_track = memscope_peak_track_of_peak(p) };
	struct step_pick k;
	uint64_t count = 0;
	size_t i, n_points = 0;
	char *names_buf = NULL;
	int rc;

	g.tracks = memscope_peak_tracks(p, &g.n_tracks);
	if (!(g.names = calloc(n_inputs ? n_inputs : 1, sizeof(*g.names))) ||
		!(names_buf = input_names(inputs, n_inputs, g.names))) {
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
		goto out;
	}
	for (i = 0; i < g.n_tracks; i++)
		n_points += g.tracks[i].n_points;
	if ((rc = lay_out(&g))) {
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
		goto out;
	}
	k = pick_steps(&g);
	steps_drawn(&g, &k);
	count = k.count;
	header(&g, n_points);
	fprintf(out,
		"<div id=\"chart\">\n<svg id=\"plot\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
		"%d\" role=\"img\" aria-label=\"live bytes over time\">\n",
		SVG_W, SVG_H, SVG_W, SVG_H);
	bands(&g, &k);
	y_axis(&g);
	x_axis(&g);
	fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n", PLOT_X,
		PLOT_X + PLOT_W, PLOT_Y + PLOT_H, PLOT_Y + PLOT_H);
	fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n", PLOT_X,
		PLOT_X, PLOT_Y, PLOT_Y + PLOT_H);
	fputs("<g id=\"curves\">\n", out);
	for (i = 0; i < g.n_curves; i++)
		curve(&g, i);
	fputs("</g>\n", out);
	if (g.peak_track >= 0)
		peak_mark(&g);
	else
		fprintf(out,
			"<text class=\"label\" x=\"%d\" y=\"%d\">no block with a size in the "
			"pools counted</text>\n",
			PLOT_X + PLOT_W / 2, PLOT_Y + PLOT_H / 2);
	fprintf(out,
		"<line id=\"cursor\" x1=\"0\" x2=\"0\" y1=\"%d\" y2=\"%d\" "
		"visibility=\"hidden\"/>\n"
		"<rect id=\"hover\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"transparent\"/>\n"
		"</svg>\n<div id=\"tip\" hidden=\"hidden\"></div>\n</div>\n",
		PLOT_Y, PLOT_Y + PLOT_H, PLOT_X, PLOT_Y, PLOT_W, PLOT_H);
	if (count > MAX_BANDS)
		fprintf(out, "<p class=\"note\">%llu steps: too many to shade at this width.</p>\n",
			(unsigned long long)count);
	if (count && count <= MAX_BANDS) {
		if (count == memscope_steps_count(k.p))
			fprintf(out,
				"<p class=\"note\">Bands: the %llu training step%s of process %llu",
				(unsigned long long)count, count == 1 ? "" : "s",
				(unsigned long long)k.pid);
		else
			fprintf(out,
				"<p class=\"note\">Bands: training step%s %llu%s%.0llu of process "
				"%llu "
				"in the window",
				count == 1 ? "" : "s", (unsigned long long)k.first,
				count == 1 ? "" : " to ",
				count == 1 ? 0ULL : (unsigned long long)(k.first + count - 1),
				(unsigned long long)k.pid);
		if (n_inputs > 1) {
			fputs(" of ", out);
			html_cstr(out, input_name(&g, k.src));
		}
		fputs(".</p>\n", out);
	}
	legend(&g);
	if (g.peak_track >= 0)
		owners(&g);
	data(&g, &k);
	fprintf(out, "<script>//<![CDATA[\n%s//]]></script>\n</body>\n</html>\n",
		memscope_memory_html_js);
	rc = 0;
out:
	free(names_buf);
	free(g.names);
	free(g.slot_of);
	free(g.track_of);
	free(g.cols);
	free(g.has);
	if (!rc && ferror(out))
		rc = memscope_error_set(err, MEMSCOPE_E_IO, NULL, 0, "write failed");
	return rc;
}
