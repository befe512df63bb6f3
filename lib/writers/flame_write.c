/* Writers of memory by allocation site: speedscope JSON and folded stacks
 * (formats/flame.md). */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/flame.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"
#include "report.h"

/* A frame of speedscope: a Python frame "file(line): func" is split into its parts. */
static void speedscope_frame(FILE *out, const char *s, size_t n)
{
	const char *sep = NULL, *open = NULL, *p;
	uint64_t line;

	for (p = s; p + 3 <= s + n; p++)
		if (p[0] == ')' && p[1] == ':' && p[2] == ' ')
			sep = p;
	for (p = sep; sep && p > s; p--)
		if (p[-1] == '(') {
			open = p - 1;
			break;
		}
	if (open && open > s && ms__parse_u64(open + 1, (size_t)(sep - open - 1), &line) == 0) {
		fputs("{\"name\":", out);
		ms__json_str(out, sep + 3, (size_t)(s + n - sep - 3));
		fputs(",\"file\":", out);
		ms__json_str(out, s, (size_t)(open - s));
		fprintf(out, ",\"line\":%llu}", (unsigned long long)line);
		return;
	}
	fputs("{\"name\":", out);
	ms__json_str(out, s, n);
	fputc('}', out);
}

void memscope_flame_profile_name(const struct memscope_flame *f, unsigned m, char *buf, size_t size)
{
	static const char *const names[MEMSCOPE_FLAME_N_METRICS] = { "allocated bytes",
		"peak live bytes", "bytes unreleased at exit", "allocations" };
	const struct memscope_flame_peak *pk = memscope_flame_peak(f);
	char dev[MEMSCOPE_DEVICE_TEXT_MAX], at[MEMSCOPE_SECONDS_TEXT_MAX],
		live[MEMSCOPE_BYTES_TEXT_MAX];
	const char *pool;
	size_t n;
	uint64_t total;

	if (m != MEMSCOPE_FLAME_PEAK || !pk->found) {
		snprintf(buf, size, "%s", m < MEMSCOPE_FLAME_N_METRICS ? names[m] : "?");
		return;
	}
	memscope_flame_entries(f, m, &n, &total);
	pool = memscope_subtype_name(pk->pool);
	/* text for people: seconds since the input's first row, bytes in binary units */
	snprintf(buf, size,
		"peak live bytes: %s on device %s of process %llu (input %u) at %s, %s live",
		pool ? pool : "?", memscope_device_text(pk->device, dev),
		(unsigned long long)pk->pid, (unsigned)pk->src,
		memscope_seconds_text(at, sizeof(at), pk->ts_ns, pk->origin_ns),
		memscope_bytes_text(live, sizeof(live), total));
}

int memscope_flame_write_speedscope(FILE *out, const struct memscope_flame *f, const char *name,
	const char *producer, struct memscope_error *err)
{
	const struct memscope_strtab *st = NULL;
	struct u64map index = { 0 };
	char title[256];
	uint64_t n_frames = 0, at, unused;
	unsigned m, first = 1;
	int rc = 0;

	fprintf(out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		     "\"exporter\":");
	ms__json_cstr(out, producer ? producer : "libmemscope");
	fputs(",\"name\":", out);
	ms__json_cstr(out, name ? name : "memscope");
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
	st = memscope_flame_strtab(f);
	/* every frame once, in order of first use */
	for (m = 0; m < MEMSCOPE_FLAME_N_METRICS && !rc; m++) {
		size_t n, i, k, nf;
		uint64_t total;
		const struct memscope_flame_entry *e = memscope_flame_entries(f, m, &n, &total);

		for (i = 0; i < n && !rc; i++) {
			const uint32_t *fr = memscope_strtab_stack(st, e[i].path, &nf);

			for (k = 0; fr && k < nf && !rc; k++) {
				size_t len;
				const char *s;

				if (ms__u64map_get(&index, fr[k], &at, &unused))
					continue;
				s = memscope_strtab_str(st, fr[k], &len);
				if (n_frames)
					fputc(',', out);
				speedscope_frame(out, s ? s : "", s ? len : 0);
				rc = ms__u64map_put(&index, fr[k], n_frames++, 0);
			}
		}
	}
	fputs("]},\"profiles\":[", out);
	for (m = 0; m < MEMSCOPE_FLAME_N_METRICS && !rc; m++) {
		size_t n, i, k, nf;
		uint64_t total;
		const struct memscope_flame_entry *e = memscope_flame_entries(f, m, &n, &total);

		if (!((memscope_flame_opts(f)->metrics >> m) & 1))
			continue;
		fprintf(out, "%s{\"type\":\"sampled\",\"name\":", first ? "" : ",");
		first = 0;
		memscope_flame_profile_name(f, m, title, sizeof(title));
		ms__json_cstr(out, title);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\"samples\":[",
			m == MEMSCOPE_FLAME_COUNT ? "none" : "bytes", (unsigned long long)total);
		for (i = 0; i < n; i++) {
			const uint32_t *fr = memscope_strtab_stack(st, e[i].path, &nf);

			fputs(i ? ",[" : "[", out);
			for (k = 0; fr && k < nf; k++) {
				ms__u64map_get(&index, fr[k], &at, &unused);
				fprintf(out, k ? ",%llu" : "%llu", (unsigned long long)at);
			}
			fputc(']', out);
		}
		fputs("],\"weights\":[", out);
		for (i = 0; i < n; i++)
			fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)e[i].weight);
		fputs("]}", out);
	}
	fputs("]}\n", out);
	ms__u64map_free(&index);
	return ms__write_end(out, rc, err);
}

/*
 * A frame of a folded line, made safe for flamegraph.pl and speedscope: ';' (the separator)
 * becomes ':', control characters become spaces, invalid UTF-8 becomes '?', outer blanks go,
 * an empty frame is "?", and the last frame must not end in a blank and digits (read as a
 * second count): that blank becomes '_'.
 */
static void folded_frame(FILE *out, const char *s, size_t n, int last)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t digits = 0;

	/* blanks and control characters (which become blanks) go at both ends */
	while (p < end && *p <= ' ')
		p++;
	while (end > p && end[-1] <= ' ')
		end--;
	if (p == end) {
		fputc('?', out);
		return;
	}
	while (last && digits < (size_t)(end - p) && end[-1 - (long)digits] >= '0' &&
		end[-1 - (long)digits] <= '9')
		digits++;
	if (!digits || digits == (size_t)(end - p) || end[-1 - (long)digits] > ' ')
		digits = 0;
	while (p < end) {
		size_t len = ms__utf8_seq(p, end);

		if (digits && p == end - digits - 1)
			fputc('_', out);
		else if (*p == ';')
			fputc(':', out);
		else if (*p < 0x20)
			fputc(' ', out);
		else if (!len)
			fputc('?', out);
		else
			fwrite(p, 1, len, out);
		p += len ? len : 1;
	}
}

int memscope_flame_write_folded(
	FILE *out, const struct memscope_flame *f, unsigned metric, struct memscope_error *err)
{
	const struct memscope_strtab *st = memscope_flame_strtab(f);
	size_t n, i, k, nf, len;
	uint64_t total;
	const struct memscope_flame_entry *e = memscope_flame_entries(f, metric, &n, &total);

	for (i = 0; i < n; i++) {
		const uint32_t *fr = memscope_strtab_stack(st, e[i].path, &nf);

		for (k = 0; fr && k < nf; k++) {
			const char *s = memscope_strtab_str(st, fr[k], &len);

			if (k)
				fputc(';', out);
			folded_frame(out, s ? s : "", s ? len : 0, k + 1 == nf);
		}
		fprintf(out, " %llu\n", (unsigned long long)e[i].weight);
	}
	return ms__write_end(out, 0, err);
}
