/* Memory over time as one self-contained HTML page (memscope_peak_write_html): curves of live
 * bytes and of the profiler's samples cut to one column per pixel, the peak, the steps, the owners
 * at the peak; its script is memory_html.js, embedded at build time. */
#include <stdlib.h>
#include <string.h>

#include "../core/clocks.h"
#include "../core/internal.h"
#include "memscope/memscope.h"
#include "memscope/peak.h"
#include "memscope/steps.h"
#include "memscope/strtab.h"
#include "report.h"

extern const char memscope_memory_html_js[];

/* pixels: the SVG, and the plot inside it; one column of the curves per pixel of PLOT_W */
enum { SVG_W = 1200, SVG_H = 500, PLOT_X = 84, PLOT_Y = 44, PLOT_W = 1092, PLOT_H = 400 };
/* curves drawn (the highest peaks), curves of samples drawn, owners listed, step bands shaded, at
 * most */
enum { MAX_CURVES = 32, MAX_SAMPLE_CURVES = 24, TOP_OWNERS = 20, MAX_BANDS = 1000 };

/* One colour per curve of live bytes, then one per track of samples (its series told apart by
 * dashes: allocated solid, reserved dashed, active dotted), in this order, so no two curves share
 * a colour below 20 of them; the most distinct hues first. Past 20, the live curves' dashes
 * change. */
static const char *const palette[] = { "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1",
	"#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#7f7f7f", "#1b3a6b", "#c05a00", "#6b8e23",
	"#8b1e3f", "#17becf", "#5e3c99", "#b8860b", "#d62f8f", "#2f6f5f", "#3d3d3d" };
#define N_COLOURS (sizeof(palette) / sizeof(palette[0]))
static const char *const dashes[] = { "", "6 3", "2 2", "8 3 2 3" };
static const char *const series_key[MEMSCOPE_CTR_N] = { "used", "total", "active" };
/* what a series is called on the page: memory_record's columns Total Allocated, Total Reserved,
 * Total Active */
static const char *const series_word[MEMSCOPE_CTR_N] = { "allocated", "reserved", "active" };

/* A curve's pixel column: its lowest, highest and last live bytes there. */
struct col {
	int64_t lo, hi, end;
};

/* A curve of the profiler's samples: one series of a sample track, and what it drew. */
struct scurve {
	size_t track;	 /* index into the page's ctr */
	unsigned series; /* MEMSCOPE_CTR_* */
	unsigned colour; /* index into palette */
	int off;	 /* hidden until its legend row is clicked (sample_hidden) */
	int64_t first_v, last_v;
	uint64_t first_ts;
	int seen;
};

struct page {
	FILE *out;
	const struct memscope_peak *p;
	const struct memscope_strtab *st;
	const struct memscope_peak_track *tracks;
	size_t n_tracks;
	const struct memscope_counter_track *ctr; /* the profiler's samples */
	size_t n_ctr;
	struct scurve *sc; /* the curves of samples drawn: slots n_curves .. n_curves + n_sc - 1 */
	size_t n_sc, n_sc_more;
	const char **names; /* per input: the name that tells it apart (ms__input_names) */
	size_t n_inputs;
	long *slot_of;	    /* per track: its curve, -1 when not drawn */
	size_t *track_of;   /* per curve of live bytes: its track, in track order */
	size_t n_curves;    /* curves of live bytes */
	struct col *cols;   /* (n_curves + n_sc) * PLOT_W */
	unsigned char *has; /* (n_curves + n_sc) * PLOT_W: the column has a point */
	uint64_t from;	    /* the x axis starts from ns after each input's first row */
	uint64_t span;	    /* and is span ns wide */
	uint64_t ymax;	    /* the y axis' top, bytes: that of the curves shown at first */
	long peak_track;    /* -1: none */
	long *same_as;	    /* per curve: the curve drawn over it with the same path, -1 none */
};

static void html_cstr(FILE *out, const char *s)
{
	ms__xml_str(out, s, strlen(s));
}

/* The name of input src: the shortest ending of its path that tells the inputs apart. */
static const char *input_name(const struct page *g, uint32_t src)
{
	return src < g->n_inputs && g->names ? g->names[src] : "input";
}

/* A process id as the dump's Process Id column writes it: "3101864", or "N/A" (a profiler's
 * output without a timeline). Returns buf or a constant. */
static const char *pid_text(uint64_t pid, char buf[24])
{
	if (pid == MEMSCOPE_ID_NONE)
		return "N/A";
	snprintf(buf, 24, "%llu", (unsigned long long)pid);
	return buf;
}

/* ", process 3101864", or nothing when the process is not known (a profiler's output without a
 * timeline). */
static void put_process(const struct page *g, uint64_t pid)
{
	char buf[24];

	if (pid != MEMSCOPE_ID_NONE)
		fprintf(g->out, ", process %s", pid_text(pid, buf));
}

/* "PTA, device 0, process 3101864" and, with several inputs, the input's name. */
static void track_label(const struct page *g, const struct memscope_peak_track *t)
{
	char dev[MEMSCOPE_DEVICE_TEXT_MAX];
	const char *pool = memscope_subtype_name(t->pool);

	fprintf(g->out, "%s, device %s", pool ? pool : "memory",
		memscope_device_text(t->device, dev));
	put_process(g, t->pid);
	if (g->n_inputs > 1) {
		fputs(", ", g->out);
		html_cstr(g->out, input_name(g, t->src));
	}
}

/* "PTA allocated (memory_record), device 0, process 3101864", "APP/Memory (npu_mem), ...",
 * "HCCL reserved (npu_module_mem), ..." and, with several inputs, the input's name. */
static void sample_label(const struct page *g, const struct scurve *c)
{
	const struct memscope_counter_track *t = &g->ctr[c->track];
	char dev[MEMSCOPE_DEVICE_TEXT_MAX], lab[48];
	size_t len;
	const char *name = memscope_strtab_str(g->st, t->name, &len);
	int single = t->subtype == MEMSCOPE_SUB_NPU_MEM && t->series == 1u << MEMSCOPE_CTR_USED;

	ms__xml_str(g->out, name ? name : "", name ? len : 0);
	fprintf(g->out, "%s%s (%s), device %s", single ? "" : " ",
		single ? "" : series_word[c->series], memscope_counter_source(t->subtype),
		memscope_device_text(t->device, dev));
	put_process(g, t->pid);
	fputs(ms__clocks_label(t->shift_ns, lab, sizeof(lab)), g->out);
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

/* The y of v bytes on the axis the page opens with: above the plot for a curve hidden at first
 * that is higher (the script scales the curves when it is shown). */
static double y_of(const struct page *g, int64_t v)
{
	double f = v <= 0 || !g->ymax ? 0 : (double)v / (double)g->ymax;

	return PLOT_Y + PLOT_H - f * PLOT_H;
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

/* A series of a sample track that may be drawn: its place and its highest value. */
struct sample_rank {
	size_t track;
	unsigned series, kind; /* kind: 0 memory_record, 1 npu_mem, 2 npu_module_mem */
	int hide;	       /* sample_hidden */
	int64_t max;
};

/* Those shown at first first (every input's, when several have the same), then memory_record's,
 * npu_mem's, the modules'; the highest first; in order. */
static int cmp_sample_rank(const void *pa, const void *pb)
{
	const struct sample_rank *a = pa, *b = pb;
	int c = MS__CMP(a->hide, b->hide);

	c = c ? c : MS__CMP(a->kind, b->kind);
	c = c ? c : MS__CMP(b->max, a->max);
	c = c ? c : MS__CMP(a->track, b->track);
	return c ? c : MS__CMP(a->series, b->series);
}

/* The drawn in the order of the tracks, then series. */
static int cmp_scurve(const void *pa, const void *pb)
{
	const struct scurve *a = pa, *b = pb;

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->series > b->series) - (a->series < b->series);
}

/* Which of a track's curves are hidden at first, so the page opens on the few that tell most
 * at a scale where the live bytes show: HIDE_TOTAL, the memory of the whole process or device
 * (memory_record's APP, npu_mem's APP/ and Device/ series), far above the pools, hidden when
 * another curve is shown; HIDE_ALWAYS, sums of others (memory_record's PTA+GE), the modules;
 * else 0. */
enum { HIDE_TOTAL = 1, HIDE_ALWAYS = 2 };

static int sample_hidden(const struct page *g, const struct memscope_counter_track *t)
{
	size_t len;
	const char *name = memscope_strtab_str(g->st, t->name, &len);

	if (!name)
		return 0;
	switch (t->subtype) {
	case MEMSCOPE_SUB_POOL_SAMPLE:
		return memchr(name, '+', len)		     ? HIDE_ALWAYS
		       : len == 3 && !memcmp(name, "APP", 3) ? HIDE_TOTAL
							     : 0;
	case MEMSCOPE_SUB_NPU_MEM: /* the DDR and HBM parts of Memory: shown with it */
		return (len >= 4 && !strcmp(name + len - 4, "/DDR")) ||
				       (len >= 4 && !strcmp(name + len - 4, "/HBM"))
			       ? HIDE_ALWAYS
			       : HIDE_TOTAL;
	default:
		return HIDE_ALWAYS;
	}
}

/* The curves of samples drawn: every series of memory_record and npu_mem, the modules' that
 * were ever above 0, at most MAX_SAMPLE_CURVES of them (those first, then the highest), each
 * track its colour. 0 or MEMSCOPE_E_NOMEM. */
static int pick_samples(struct page *g)
{
	struct sample_rank *r = malloc((g->n_ctr * MEMSCOPE_CTR_N + 1) * sizeof(*r));
	size_t i, n = 0, colours, shown = 0;
	unsigned j;

	g->sc = calloc(MAX_SAMPLE_CURVES, sizeof(*g->sc));
	if (!r || !g->sc) {
		free(r);
		return MEMSCOPE_E_NOMEM;
	}
	for (i = 0; i < g->n_ctr; i++)
		for (j = 0; j < MEMSCOPE_CTR_N; j++) {
			const struct memscope_counter_track *t = &g->ctr[i];
			unsigned kind = t->subtype == MEMSCOPE_SUB_POOL_SAMPLE ? 0
					: t->subtype == MEMSCOPE_SUB_NPU_MEM   ? 1
									       : 2;

			if (!(t->series & 1u << j))
				continue;
			if (kind == 2 && t->max[j] <= 0) {
				g->n_sc_more++;
				continue;
			}
			r[n++] = (struct sample_rank){ i, j, kind, sample_hidden(g, t), t->max[j] };
		}
	if (n)
		qsort(r, n, sizeof(*r), cmp_sample_rank);
	g->n_sc = n < MAX_SAMPLE_CURVES ? n : MAX_SAMPLE_CURVES;
	g->n_sc_more += n - g->n_sc;
	for (i = 0; i < g->n_sc; i++)
		g->sc[i] = (struct scurve){ .track = r[i].track, .series = r[i].series };
	free(r);
	if (g->n_sc)
		qsort(g->sc, g->n_sc, sizeof(*g->sc), cmp_scurve);
	/* after the live bytes' colours */
	colours = g->n_curves;
	for (i = 0; i < g->n_sc; i++) {
		if (i && g->sc[i].track != g->sc[i - 1].track)
			colours++;
		g->sc[i].colour = (unsigned)(colours % N_COLOURS);
		g->sc[i].off = sample_hidden(g, &g->ctr[g->sc[i].track]);
		shown += !g->sc[i].off;
	}
	/* nothing else to show: the whole process's and device's memory */
	for (i = 0; i < g->n_sc && !g->n_curves && !shown; i++)
		g->sc[i].off = g->sc[i].off == HIDE_TOTAL ? 0 : g->sc[i].off;
	return 0;
}

/* The samples of the curves drawn into their columns, each track's walked once. */
static void sample_columns(struct page *g)
{
	size_t i, e, k;

	for (i = 0; i < g->n_sc; i = e) {
		const struct memscope_counter_track *t = &g->ctr[g->sc[i].track];
		struct memscope_counter_iter it;
		struct memscope_counter_sample s;

		for (e = i; e < g->n_sc && g->sc[e].track == g->sc[i].track; e++)
			;
		memscope_counter_iter_init(&it, t);
		while (memscope_counter_next(&it, &s)) {
			size_t c = col_of(g, t->src, s.ts_ns);

			for (k = i; k < e; k++) {
				struct scurve *sc = &g->sc[k];
				size_t at = (g->n_curves + k) * PLOT_W + c;
				int64_t v = s.v[sc->series];
				struct col *x = &g->cols[at];

				if (!(s.has & 1u << sc->series))
					continue;
				if (!sc->seen) {
					sc->seen = 1;
					sc->first_v = v;
					sc->first_ts = s.ts_ns;
				}
				sc->last_v = v;
				if (!g->has[at]) {
					g->has[at] = 1;
					*x = (struct col){ v, v, v };
					continue;
				}
				if (v < x->lo)
					x->lo = v;
				if (v > x->hi)
					x->hi = v;
				x->end = v;
			}
		}
	}
}

/* Where curve slot is drawn: its input, its first and last time, its value at the first. */
struct line {
	uint32_t src;
	uint64_t from_ts, end_ts;
	int64_t start;
};

/* A curve of live bytes from its live bytes at its start (the window's; 0 without one) to its
 * process's end; one of samples from its first sample to its process's end (the window's). */
static struct line line_of(const struct page *g, size_t slot)
{
	const struct memscope_peak_track *t;
	const struct memscope_counter_track *k;
	const struct scurve *c;

	if (slot < g->n_curves) {
		t = &g->tracks[g->track_of[slot]];
		return (struct line){ t->src, t->from_ts_ns, t->end_ts_ns, t->start_bytes };
	}
	c = &g->sc[slot - g->n_curves];
	k = &g->ctr[c->track];
	return (struct line){ k->src, c->first_ts, k->end_ts_ns, c->first_v };
}

/* Whether curves a and b draw the same path: the same columns, from the same start to the same
 * end. */
static int same_path(const struct page *g, size_t a, size_t b)
{
	struct line la = line_of(g, a), lb = line_of(g, b);
	size_t c;

	if (la.start != lb.start ||
		col_of(g, la.src, la.from_ts) != col_of(g, lb.src, lb.from_ts) ||
		col_of(g, la.src, la.end_ts) != col_of(g, lb.src, lb.end_ts) ||
		memcmp(&g->has[a * PLOT_W], &g->has[b * PLOT_W], PLOT_W))
		return 0;
	for (c = 0; c < PLOT_W; c++)
		if (g->has[a * PLOT_W + c] &&
			(g->cols[a * PLOT_W + c].lo != g->cols[b * PLOT_W + c].lo ||
				g->cols[a * PLOT_W + c].hi != g->cols[b * PLOT_W + c].hi ||
				g->cols[a * PLOT_W + c].end != g->cols[b * PLOT_W + c].end))
			return 0;
	return 1;
}

/* The order curves are drawn in: the samples' first (behind), then the live bytes'. */
static size_t draw_rank(const struct page *g, size_t slot)
{
	return slot < g->n_curves ? g->n_sc + slot : slot - g->n_curves;
}

/* For each curve the one drawn last over it with the same path (which hides it), -1 for none.
 * 0 or MEMSCOPE_E_NOMEM. */
static int same_curves(struct page *g)
{
	size_t n = g->n_curves + g->n_sc, a, b;

	if (!(g->same_as = malloc((n ? n : 1) * sizeof(*g->same_as))))
		return MEMSCOPE_E_NOMEM;
	for (a = 0; a < n; a++) {
		g->same_as[a] = -1;
		for (b = 0; b < n; b++)
			if (draw_rank(g, b) > draw_rank(g, a) &&
				(g->same_as[a] < 0 ||
					draw_rank(g, b) > draw_rank(g, (size_t)g->same_as[a])) &&
				same_path(g, a, b))
				g->same_as[a] = (long)b;
	}
	return 0;
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
	if (pick_samples(g))
		return MEMSCOPE_E_NOMEM;
	/* the axis of the curves shown at first (of all when none shows a byte); a curve shown
	 * later raises it (memory_html.js) */
	for (i = 0; i < g->n_sc; i++)
		if (!g->sc[i].off && g->ctr[g->sc[i].track].max[g->sc[i].series] > top)
			top = g->ctr[g->sc[i].track].max[g->sc[i].series];
	for (i = 0; i < g->n_sc && top <= 0; i++)
		if (g->ctr[g->sc[i].track].max[g->sc[i].series] > top)
			top = g->ctr[g->sc[i].track].max[g->sc[i].series];
	memscope_peak_axis(g->p, &g->from, &g->span);
	g->span = g->span > g->from ? g->span - g->from : 1;
	/* headroom above the peak for its dot and label */
	g->ymax = (uint64_t)top + (uint64_t)top / 20 + 1;
	i = g->n_curves + g->n_sc;
	g->cols = calloc(i ? i * PLOT_W : 1, sizeof(*g->cols));
	g->has = calloc(i ? i * PLOT_W : 1, 1);
	if (!g->cols || !g->has)
		return MEMSCOPE_E_NOMEM;
	sample_columns(g);
	memscope_peak_foreach_point(g->p, on_point, g);
	return same_curves(g);
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
 * the last tick. memory_html.js draws it again the same way when a higher curve is shown. */
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
	fputs("<g id=\"yaxis\">\n", g->out);
	for (i = 0; (v = i * step) <= top + step / 2; i++) {
		double y = PLOT_Y + PLOT_H - v / top * PLOT_H;

		fprintf(g->out,
			"<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"ytick\" x=\"%d\" y=\"%.1f\">%.*f %s</text>\n",
			PLOT_X, PLOT_X + PLOT_W, y, y, PLOT_X - 6, y + 4, d, v, unit[k]);
	}
	fprintf(g->out,
		"</g>\n<text class=\"label\" transform=\"translate(16 %d) rotate(-90)\">%s "
		"(<tspan id=\"yunit\">%s</tspan>)</text>\n",
		PLOT_Y + PLOT_H / 2,
		g->n_sc ? "live bytes and the profiler's samples" : "live bytes", unit[k]);
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
	uint64_t first, count; /* the steps drawn: indexes first .. first + count - 1 (their
				  numbers: memscope_steps_number) */
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

/* The start and end (ns) of the step of index i: memscope_steps_span, a step without an end to
 * the axis' end. */
static void step_span(const struct page *g, uint32_t src, const struct memscope_step_proc *p,
	uint64_t i, uint64_t *start, uint64_t *end)
{
	struct memscope_pos pos = { 0, 0 };
	uint64_t n = memscope_steps_number(p, i);
	int open;

	if (!memscope_steps_span(p, n, start, end, &open)) { /* SYSTEM: the step still running */
		*start = i > 1 && memscope_steps_start(p, n, &pos) ? pos.ts_ns + 1 : 0;
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
	uint64_t top = k->first + count, most = memscope_steps_number(k->p, top - 1);
	double need = 7.0 * (most > 999 ? 4 : most > 99 ? 3 : most > 9 ? 2 : 1) + 6, avg;

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
		uint64_t number = memscope_steps_number(k->p, n); /* n is the step's index */
		int len = snprintf(num, sizeof(num), "%llu", (unsigned long long)number);

		if (!step_drawn(g, k, n, &start, &end))
			continue;
		x0 = x_of_ts(g, k->src, start);
		x1 = x_of_ts(g, k->src, end);
		fprintf(g->out,
			"<rect class=\"band%s\" data-step=\"%llu\" data-start-ns=\"%llu\" "
			"data-end-ns=\"%llu\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\"/>",
			n % 2 ? "" : " even", (unsigned long long)number, (unsigned long long)start,
			(unsigned long long)end, x0, PLOT_Y, x1 - x0, PLOT_H);
		if (every == 1 ? x1 - x0 >= len * 7 + 4 : number % every == 0)
			fprintf(g->out, "<text class=\"stepno\" x=\"%.2f\" y=\"%d\">%s</text>",
				(x0 + x1) / 2, PLOT_Y - 9, num);
		fputc('\n', g->out);
	}
	fputs("</g>\n", g->out);
}

/* The path's stroke: a curve of live bytes by its place, one of samples by its track and
 * series. */
static void curve_head(const struct page *g, size_t slot)
{
	const struct scurve *c;

	if (slot < g->n_curves) {
		fprintf(g->out,
			"<path class=\"curve\" data-track=\"%zu\" stroke=\"%s\" "
			"stroke-dasharray=\"%s\" d=\"",
			g->track_of[slot], palette[slot % N_COLOURS], dashes[slot / N_COLOURS % 4]);
		return;
	}
	c = &g->sc[slot - g->n_curves];
	fprintf(g->out,
		"<path class=\"curve sample%s\" data-sample=\"%zu\" data-series=\"%s\" "
		"stroke=\"%s\" stroke-dasharray=\"%s\" d=\"",
		c->off ? " off" : "", c->track, series_key[c->series], palette[c->colour],
		dashes[g->ctr[c->track].series == 1u << c->series ? 0 : c->series]);
}

/* A curve's path: from its value at its start, a vertical stroke over each column's values (the
 * value before it, its lowest and highest, its last), flat between, to its process's end. */
static void curve(const struct page *g, size_t slot)
{
	struct line l = line_of(g, slot);
	const struct col *cols = &g->cols[slot * PLOT_W];
	const unsigned char *has = &g->has[slot * PLOT_W];
	int64_t carried = l.start, v[3];
	double x = PLOT_X + (double)col_of(g, l.src, l.from_ts) + 0.5, y = y_of(g, carried), ny;
	size_t c, end = col_of(g, l.src, l.end_ts), j;
	int started = 0;

	curve_head(g, slot);
	for (c = 0; c < PLOT_W; c++) {
		if (!has[c])
			continue;
		if (!started) {
			/* from its value at its start */
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
		"<text class=\"peaktext\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%speak %s at "
		"%s</text>"
		"</g>\n",
		g->peak_track, (long long)t->peak, (unsigned long long)t->peak_at.ts_ns, x, x, y,
		PLOT_Y + PLOT_H, x, y, right ? x - 8 : x + 8, y < PLOT_Y + 14 ? y + 16 : y - 8,
		right ? "end" : "start", g->n_sc ? "live " : "",
		memscope_bytes_text(b, sizeof(b), (uint64_t)t->peak),
		memscope_seconds_text(s, sizeof(s), t->peak_at.ts_ns, t0_of(g, t->src)));
}

/* Where curve slot is: its input, process and device. */
static void slot_place(
	const struct page *g, size_t slot, uint32_t *src, uint64_t *pid, int32_t *dev)
{
	const struct memscope_peak_track *t;
	const struct memscope_counter_track *k;

	if (slot < g->n_curves) {
		t = &g->tracks[g->track_of[slot]];
		*src = t->src, *pid = t->pid, *dev = t->device;
		return;
	}
	k = &g->ctr[g->sc[slot - g->n_curves].track];
	*src = k->src, *pid = k->pid, *dev = k->device;
}

/* Whether curves a and b show the same thing (of maybe another input, process or device): the
 * live bytes of one pool, or one series of samples of one name. */
static int same_kind(const struct page *g, size_t a, size_t b)
{
	const struct scurve *x, *y;

	if ((a < g->n_curves) != (b < g->n_curves))
		return 0;
	if (a < g->n_curves)
		return g->tracks[g->track_of[a]].pool == g->tracks[g->track_of[b]].pool;
	x = &g->sc[a - g->n_curves];
	y = &g->sc[b - g->n_curves];
	return x->series == y->series && g->ctr[x->track].name == g->ctr[y->track].name &&
	       g->ctr[x->track].subtype == g->ctr[y->track].subtype;
}

/* After a curve's name: the curve drawn over it with the same path, which hides it, named by
 * what tells it apart ("rank3", "APP/Memory (npu_mem)", "PTA of rank1"). */
static void same_note(const struct page *g, size_t slot)
{
	const struct scurve *c;
	const struct memscope_counter_track *t;
	char dev[MEMSCOPE_DEVICE_TEXT_MAX], pid[24];
	const char *name;
	uint32_t s1, s2;
	uint64_t p1, p2;
	int32_t d1, d2;
	size_t o, len;

	if (g->same_as[slot] < 0)
		return;
	o = (size_t)g->same_as[slot];
	slot_place(g, slot, &s1, &p1, &d1);
	slot_place(g, o, &s2, &p2, &d2);
	fputs("<span class=\"same\"> (drawn under the same curve of ", g->out);
	/* one of another input or process: named by it alone */
	if (same_kind(g, slot, o) && d1 == d2 && (s1 != s2 || p2 != MEMSCOPE_ID_NONE)) {
		if (s1 != s2)
			html_cstr(g->out, input_name(g, s2));
		else
			fprintf(g->out, "process %s", pid_text(p2, pid));
		fputs(")</span>", g->out);
		return;
	}
	if (o < g->n_curves) {
		name = memscope_subtype_name(g->tracks[g->track_of[o]].pool);
		fputs(name ? name : "memory", g->out);
	} else {
		c = &g->sc[o - g->n_curves];
		t = &g->ctr[c->track];
		name = memscope_strtab_str(g->st, t->name, &len);
		ms__xml_str(g->out, name ? name : "", name ? len : 0);
		if (!(t->subtype == MEMSCOPE_SUB_NPU_MEM && t->series == 1u << MEMSCOPE_CTR_USED))
			fprintf(g->out, " %s", series_word[c->series]);
		fprintf(g->out, " (%s)", memscope_counter_source(t->subtype));
	}
	if (d1 != d2)
		fprintf(g->out, ", device %s", memscope_device_text(d2, dev));
	if (p1 != p2 && p2 != MEMSCOPE_ID_NONE)
		fprintf(g->out, ", process %s", pid_text(p2, pid));
	if (s1 != s2) {
		fputs(" of ", g->out);
		html_cstr(g->out, input_name(g, s2));
	}
	fputs(")</span>", g->out);
}

/* The legend: each curve's colour, name and peak; a click hides or shows the curve. */
static void legend(const struct page *g)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX], s[MEMSCOPE_SECONDS_TEXT_MAX], e[MEMSCOPE_BYTES_TEXT_MAX];
	size_t i, hidden;

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
		same_note(g, i);
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
	for (i = 0; i < g->n_sc; i++) {
		const struct scurve *c = &g->sc[i];
		const struct memscope_counter_track *t = &g->ctr[c->track];
		int64_t max = t->max[c->series];

		fprintf(g->out,
			"<tr class=\"entry sample%s\" data-sample=\"%zu\" data-series=\"%s\" "
			"data-peak=\"%lld\" data-peak-ts-ns=\"%llu\"><td><svg width=\"28\" "
			"height=\"10\"><line x1=\"1\" x2=\"27\" y1=\"5\" y2=\"5\" stroke=\"%s\" "
			"stroke-width=\"1.6\" stroke-dasharray=\"%s\"/></svg></td><td "
			"class=\"name\">",
			c->off ? " off" : "", c->track, series_key[c->series], (long long)max,
			(unsigned long long)t->max_ts_ns[c->series], palette[c->colour],
			dashes[t->series == 1u << c->series ? 0 : c->series]);
		sample_label(g, c);
		same_note(g, g->n_curves + i);
		fprintf(g->out,
			"</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td "
			"class=\"num\">%s</td></tr>\n",
			memscope_bytes_text(b, sizeof(b), max > 0 ? (uint64_t)max : 0),
			memscope_seconds_text(
				s, sizeof(s), t->max_ts_ns[c->series], t0_of(g, t->src)),
			memscope_bytes_text(e, sizeof(e), c->last_v > 0 ? (uint64_t)c->last_v : 0));
	}
	fputs("</tbody></table>\n", g->out);
	if (g->n_tracks > g->n_curves)
		fprintf(g->out,
			"<p class=\"note\" id=\"more-tracks\" data-n=\"%zu\">%zu more tracks, with "
			"lower peaks, are not drawn.</p>\n",
			g->n_tracks - g->n_curves, g->n_tracks - g->n_curves);
	for (i = 0, hidden = 0; i < g->n_sc; i++)
		hidden += g->sc[i].off;
	if (g->n_sc)
		fprintf(g->out,
			"<p class=\"note\" id=\"samples\">Thin lines: the profiler's own samples, "
			"not live bytes: memory_record's Total Allocated, Reserved and Active of "
			"each "
			"component (PTA+GE rows are the sums of PTA and GE; APP is all the device "
			"memory of the process), npu_mem's memory of the process (APP) and of the "
			"device, npu_module_mem's memory reserved by each CANN module.%s</p>\n",
			hidden ? " The rows greyed out are hidden at first (sums of other rows, "
				 "the memory of the whole process and device, far above the "
				 "pools, the DDR and HBM parts of Memory, the modules): a click "
				 "shows them, and the y axis grows to them."
			       : "");
	if (g->n_sc_more)
		fprintf(g->out,
			"<p class=\"note\" id=\"more-samples\" data-n=\"%zu\">%zu more series of "
			"samples (modules never above 0, or lower ones) %s not drawn; the Chrome "
			"trace (--format chrome-trace) has them all.</p>\n",
			g->n_sc_more, g->n_sc_more, g->n_sc_more == 1 ? "is" : "are");
}

/* The value of series of sample track t at ts (its last sample at or before ts) into *v: 1, or 0
 * when it has none then. */
static int sample_at(
	const struct memscope_counter_track *t, unsigned series, uint64_t ts, int64_t *v)
{
	struct memscope_counter_iter it;
	struct memscope_counter_sample s;
	int found = 0;

	memscope_counter_iter_init(&it, t);
	while (memscope_counter_next(&it, &s) && s.ts_ns <= ts)
		if (s.has & 1u << series) {
			*v = s.v[series];
			found = 1;
		}
	return found;
}

/* Under the plot, for each input whose files were recorded far apart in time: which, and that
 * each is drawn from the input's start. */
static void clock_notes(const struct page *g)
{
	char note[600];
	uint32_t x;

	for (x = 0; x < g->n_inputs; x++) {
		if (!memscope_peak_clock_note(g->p, x, note, sizeof(note)))
			continue;
		fputs("<p class=\"note clock\">", g->out);
		if (g->n_inputs > 1) {
			html_cstr(g->out, input_name(g, x));
			fputs(": ", g->out);
		}
		html_cstr(g->out, note);
		fputs(".</p>\n", g->out);
	}
}

/* Under the plot, where live bytes are drawn beside memory_record's allocated bytes of their
 * pool: the live bytes count only the blocks allocated in the input, from 0 (an Ascend
 * profiler's window starts with blocks allocated before it), the allocated bytes every block. */
static void live_note(const struct page *g)
{
	char b[MEMSCOPE_BYTES_TEXT_MAX], a[MEMSCOPE_BYTES_TEXT_MAX], dev[MEMSCOPE_DEVICE_TEXT_MAX];
	size_t i, n = 0;
	int devices = 0; /* the curves are of several devices: say which */

	for (i = 1; i < g->n_curves; i++)
		devices |= g->tracks[g->track_of[i]].device != g->tracks[g->track_of[0]].device;
	for (i = 0; i < g->n_curves; i++) {
		const struct memscope_peak_track *t = &g->tracks[g->track_of[i]];
		long c = memscope_peak_samples_of(g->p, g->track_of[i]);
		const char *pool = memscope_subtype_name(t->pool);

		if (c < 0)
			continue;
		if (!n++)
			fputs("<p class=\"note\" id=\"live-start\">Live bytes count only the "
			      "blocks allocated in the input (the profiler's operator_memory), "
			      "from 0: memory_record's allocated bytes also count the blocks "
			      "allocated before its window (",
				g->out);
		else if (n > 3)
			continue;
		fprintf(g->out, "%s%s", n > 1 ? "; " : "", pool ? pool : "memory");
		if (devices)
			fprintf(g->out, " on device %s", memscope_device_text(t->device, dev));
		if (g->n_inputs > 1) {
			fputs(" of ", g->out);
			html_cstr(g->out, input_name(g, t->src));
		}
		fprintf(g->out, ": live peak %s, allocated peak %s",
			memscope_bytes_text(b, sizeof(b), t->peak > 0 ? (uint64_t)t->peak : 0),
			memscope_bytes_text(a, sizeof(a),
				g->ctr[c].max[MEMSCOPE_CTR_USED] > 0
					? (uint64_t)g->ctr[c].max[MEMSCOPE_CTR_USED]
					: 0));
	}
	if (n > 3)
		fprintf(g->out, "; %zu more", n - 3);
	if (n)
		fputs(").</p>\n", g->out);
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

	long c = memscope_peak_samples_of(g->p, (size_t)g->peak_track);
	int64_t then;

	fputs("<h2>Who held the memory at the peak</h2>\n<p class=\"sub\">The blocks of ", g->out);
	track_label(g, t);
	fprintf(g->out, " live at %s: %s",
		memscope_seconds_text(s, sizeof(s), t->peak_at.ts_ns, t0_of(g, t->src)),
		memscope_bytes_text(b, sizeof(b), (uint64_t)t->peak));
	/* the profiler's own figure then, which counts the blocks from before its window too */
	if (c >= 0 && sample_at(&g->ctr[c], MEMSCOPE_CTR_USED, t->peak_at.ts_ns, &then) &&
		then > t->peak)
		fprintf(g->out,
			" (memory_record's allocated then: %s, which also counts the blocks "
			"allocated before the window)",
			memscope_bytes_text(b, sizeof(b), (uint64_t)then));
	fputs(", by owner tag, else the op that allocated them, else the innermost frame of "
	      "their call stack.</p>\n",
		g->out);
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
		ms__xml_str(g->out, name ? name : "", name ? len : 0);
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
		"\"svg_w\":%d,\"plot_y\":%d,\"plot_h\":%d,\"ymax\":%llu,\"from_ns\":%llu,"
		"\"span_ns\":%llu,\"curves\":[",
		PLOT_X, PLOT_W, SVG_W, PLOT_Y, PLOT_H, (unsigned long long)g->ymax,
		(unsigned long long)g->from, (unsigned long long)g->span);
	for (i = 0; i < g->n_curves + g->n_sc; i++) {
		struct line l = line_of(g, i);
		const struct col *cols = &g->cols[i * PLOT_W];
		const unsigned char *has = &g->has[i * PLOT_W];
		size_t first = col_of(g, l.src, l.from_ts);
		size_t last = col_of(g, l.src, l.end_ts);
		int64_t carried = l.start;

		if (i < g->n_curves)
			fprintf(g->out, "%s{\"track\":%zu,\"values\":[", i ? "," : "",
				g->track_of[i]);
		else
			fprintf(g->out, "%s{\"sample\":%zu,\"series\":\"%s\",\"values\":[",
				i ? "," : "", g->sc[i - g->n_curves].track,
				series_key[g->sc[i - g->n_curves].series]);
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
		fprintf(g->out, "%s[%llu,%llu,%llu]", comma++ ? "," : "",
			(unsigned long long)memscope_steps_number(k->p, n),
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
	".curve { fill: none; stroke-width: 1.6; stroke-linejoin: round;\n"
	"  vector-effect: non-scaling-stroke; }\n"
	".curve.sample { stroke-width: 1.1; }\n"
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
	"td.name { max-width: 900px; overflow-wrap: anywhere; }\n"
	"#legend tr.entry { cursor: pointer; }\n"
	"#legend tr.off { opacity: 0.4; }\n"
	"#owners tbody tr:nth-child(even) { background: #f5f6f8; }\n";

/* What the page draws of the profiler's samples: "; the profiler's samples: 18659 of
 * memory_record (5 series drawn), 240 of npu_mem (6)". */
static void sample_sources(const struct page *g)
{
	static const unsigned subs[] = { MEMSCOPE_SUB_POOL_SAMPLE, MEMSCOPE_SUB_NPU_MEM,
		MEMSCOPE_SUB_MODULE_SAMPLE };
	size_t i, k, drawn;
	uint64_t n;
	int first = 1;

	for (k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
		for (i = 0, n = 0; i < g->n_ctr; i++)
			n += g->ctr[i].subtype == subs[k] ? g->ctr[i].n_samples : 0;
		for (i = 0, drawn = 0; i < g->n_sc; i++)
			drawn += g->ctr[g->sc[i].track].subtype == subs[k];
		if (!n)
			continue;
		fprintf(g->out, "%s%llu of %s (%zu series drawn)",
			first ? "; the profiler's samples: " : ", ", (unsigned long long)n,
			memscope_counter_source(subs[k]), drawn);
		first = 0;
	}
}

/* The title's inputs (the first three) and what is counted. */
static void header(const struct page *g, size_t n_points)
{
	uint64_t seen, pools = memscope_peak_pools(g->p, &seen);
	unsigned k;
	size_t i;
	int first = 1;

	fprintf(g->out,
		"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
		"<meta name=\"generator\" content=\"memscope %s\"/>\n<title>%s over "
		"time: ",
		memscope_version(), g->n_sc ? "Memory" : "Live memory");
	for (i = 0; i < g->n_inputs && i < 3; i++) {
		fputs(i ? ", " : "", g->out);
		html_cstr(g->out, input_name(g, (uint32_t)i));
	}
	fprintf(g->out,
		"%s</title>\n<style>\n%s</style>\n</head>\n<body>\n"
		"<h1>%s over time</h1>\n<p class=\"sub\">",
		g->n_inputs > 3 ? " ..." : "", style, g->n_sc ? "Memory" : "Live memory");
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
	if ((seen & MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA)) &&
		!(pools & MEMSCOPE_POOL_BIT(MEMSCOPE_SUB_CUDA)))
		fputs(" (CUDA left out: the caching allocator's blocks are carved out of its "
		      "segments; --pool cuda draws it)",
			g->out);
	fprintf(g->out, "; %zu allocations and frees in %zu track%s", n_points, g->n_tracks,
		g->n_tracks == 1 ? "" : "s");
	sample_sources(g);
	fputs(".</p>\n", g->out);
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
	char *names_buf = NULL, pid[24];
	int rc;

	g.tracks = memscope_peak_tracks(p, &g.n_tracks);
	g.ctr = memscope_peak_counters(p, &g.n_ctr);
	if (!(g.names = calloc(n_inputs ? n_inputs : 1, sizeof(*g.names))) ||
		!(names_buf = ms__input_names(inputs, n_inputs, g.names))) {
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
	/* the samples behind the live bytes, which they often equal; clipped to the plot, scaled
	 * (#zoom) by the script when a curve higher than the axis is shown */
	fprintf(out,
		"<clipPath id=\"plotclip\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
		"height=\"%d\"/></clipPath>\n<g clip-path=\"url(#plotclip)\"><g id=\"zoom\">\n"
		"<g id=\"samples\">\n",
		PLOT_X, PLOT_Y - 4, PLOT_W + 1, PLOT_H + 8);
	for (i = g.n_curves; i < g.n_curves + g.n_sc; i++)
		curve(&g, i);
	fputs("</g>\n<g id=\"curves\">\n", out);
	for (i = 0; i < g.n_curves; i++)
		curve(&g, i);
	fputs("</g>\n</g></g>\n", out);
	if (g.peak_track >= 0)
		peak_mark(&g);
	else /* above the plot when samples are drawn in it */
		fprintf(out,
			"<text class=\"label\" x=\"%d\" y=\"%d\">no block with a size in the "
			"pools counted%s</text>\n",
			PLOT_X + PLOT_W / 2, g.n_sc ? PLOT_Y - 24 : PLOT_Y + PLOT_H / 2,
			g.n_sc ? ": the profiler's samples only" : "");
	fprintf(out,
		"<line id=\"cursor\" x1=\"0\" x2=\"0\" y1=\"%d\" y2=\"%d\" "
		"visibility=\"hidden\"/>\n"
		"<rect id=\"hover\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"transparent\"/>\n"
		"</svg>\n<div id=\"tip\" hidden=\"hidden\"></div>\n</div>\n",
		PLOT_Y, PLOT_Y + PLOT_H, PLOT_X, PLOT_Y, PLOT_W, PLOT_H);
	live_note(&g);
	clock_notes(&g);
	if (count > MAX_BANDS)
		fprintf(out, "<p class=\"note\">%llu steps: too many to shade at this width.</p>\n",
			(unsigned long long)count);
	if (count && count <= MAX_BANDS) {
		if (count == memscope_steps_count(k.p))
			fprintf(out, "<p class=\"note\">Bands: the %llu training step%s",
				(unsigned long long)count, count == 1 ? "" : "s");
		else
			fprintf(out, "<p class=\"note\">Bands: training step%s %llu%s%.0llu",
				count == 1 ? "" : "s",
				(unsigned long long)memscope_steps_number(k.p, k.first),
				count == 1 ? "" : " to ",
				count == 1 ? 0ULL
					   : (unsigned long long)memscope_steps_number(
						     k.p, k.first + count - 1));
		if (k.pid != MEMSCOPE_ID_NONE)
			fprintf(out, " of process %s", pid_text(k.pid, pid));
		if (count != memscope_steps_count(k.p))
			fputs(" in the window", out);
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
	free(g.sc);
	free(g.same_as);
	if (!rc)
		rc = ms__write_end(out, 0, err);
	return rc;
}
