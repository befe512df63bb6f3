/* Writer of memory over time as Chrome trace event JSON (Perfetto, chrome://tracing). */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "../core/u64map.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"
#include "memscope/timeline.h"
#include "report.h"

/* "%llu.%03u": nanoseconds as the microseconds of the trace format */
static void put_ts(FILE *out, uint64_t ns)
{
	fprintf(out, "\"ts\":%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

/* the track of a (device, pool): "PTA device 0" */
static void track_name(FILE *out, const struct memscope_timeline_point *r, const char *suffix)
{
	char name[64], dev[MEMSCOPE_DEVICE_TEXT_MAX];
	const char *pool = memscope_subtype_name(r->pool);

	snprintf(name, sizeof(name), "%s device %s%s", pool ? pool : "memory",
		memscope_device_text(r->device, dev), suffix);
	json_cstr(out, name);
}

/* The start of a counter event of r's track, up to its args' first member. */
static void counter(FILE *out, const struct memscope_timeline_point *r, const char *suffix)
{
	fputs(",{\"name\":", out);
	track_name(out, r, suffix);
	fputs(",\"ph\":\"C\",", out);
	put_ts(out, r->at.ts_ns);
	fprintf(out, ",\"pid\":%llu,\"args\":{", (unsigned long long)r->pid);
}

int memscope_timeline_write_chrome(FILE *out, const struct memscope_timeline *t,
	const char *const *inputs, size_t n_inputs, const char *producer,
	struct memscope_error *err)
{
	struct u64map open = { 0 }; /* tid -> open slices of the process; none left at its end */
	uint64_t *tids = NULL; /* the process's tids with open slices, to end them at its end */
	size_t i, j, k, n_points, n_tids = 0, cap_tids = 0;
	const struct memscope_timeline_point *recs = memscope_timeline_points(t, &n_points);
	const struct memscope_strtab *st = memscope_timeline_strtab(t);
	int first = 1, rc = 0;

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":", out);
	json_cstr(out, producer ? producer : "libmemscope");
	fputs("},\"traceEvents\":[", out);

	for (i = 0; i < n_points && !rc; i = j) {
		const struct memscope_timeline_point *p = &recs[i];
		char pname[512];
		uint64_t last_ts = p->at.ts_ns, depth, unused;

		/* one process of one input: its name, its points, then the slices left open */
		snprintf(pname, sizeof(pname), "process %llu (%s)", (unsigned long long)p->pid,
			p->src < n_inputs ? inputs[p->src] : "?");
		fprintf(out,
			"%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%llu,\"tid\":0,"
			"\"args\":{\"name\":",
			first ? "" : ",", (unsigned long long)p->pid);
		json_cstr(out, pname);
		fputs("}}", out);
		first = 0;
		n_tids = 0;
		for (j = i; j < n_points && recs[j].src == p->src && recs[j].pid == p->pid && !rc;
			j++) {
			const struct memscope_timeline_point *r = &recs[j];
			size_t len;
			const char *name;

			last_ts = r->at.ts_ns;
			switch (r->kind) {
			case MEMSCOPE_TL_LIVE:
				counter(out, r, " live");
				fprintf(out, "\"bytes\":%lld}}", (long long)r->value);
				break;
			case MEMSCOPE_TL_USED:
				counter(out, r, " pool");
				fprintf(out, "\"used\":%lld", (long long)r->value);
				if (r->total != INT64_MIN)
					fprintf(out, ",\"reserved\":%lld", (long long)r->total);
				fputs("}}", out);
				break;
			case MEMSCOPE_TL_BEGIN:
			case MEMSCOPE_TL_END:
			case MEMSCOPE_TL_MARK:
				depth = 0;
				u64map_get(&open, r->tid, &depth, &unused);
				if (r->kind == MEMSCOPE_TL_END && !depth)
					break; /* an end without its start */
				if (r->kind == MEMSCOPE_TL_BEGIN && !depth &&
					grow_array(&tids, &cap_tids, n_tids + 1, sizeof(*tids)) ==
						0)
					tids[n_tids++] = r->tid;
				if (r->kind == MEMSCOPE_TL_BEGIN &&
					(n_tids > cap_tids ||
						u64map_put(&open, r->tid, depth + 1, 0))) {
					rc = MEMSCOPE_E_NOMEM;
					break;
				}
				if (r->kind == MEMSCOPE_TL_END && depth == 1)
					u64map_del(&open, r->tid, NULL, NULL);
				else if (r->kind == MEMSCOPE_TL_END)
					u64map_put(&open, r->tid, depth - 1, 0); /* in place */
				name = memscope_strtab_str(st, r->name, &len);
				fputs(",{\"name\":", out);
				json_str(out, name ? name : "", name ? len : 0);
				fprintf(out, ",\"cat\":\"%s\",\"ph\":\"%s\",",
					r->kind == MEMSCOPE_TL_MARK ? "mstx" : "op",
					r->kind == MEMSCOPE_TL_BEGIN ? "B"
					: r->kind == MEMSCOPE_TL_END ? "E"
								     : "i");
				if (r->kind == MEMSCOPE_TL_MARK)
					fputs("\"s\":\"t\",", out);
				put_ts(out, r->at.ts_ns);
				fprintf(out, ",\"pid\":%llu,\"tid\":%llu}",
					(unsigned long long)r->pid, (unsigned long long)r->tid);
				break;
			}
		}
		/* slices still open end with the process's last point (in the order their
		 * threads first opened one); the map is empty again for the next process */
		for (k = 0; k < n_tids; k++) {
			depth = 0;
			u64map_del(&open, tids[k], &depth, NULL);
			for (; depth && !rc; depth--) {
				fputs(",{\"ph\":\"E\",", out);
				put_ts(out, last_ts);
				fprintf(out, ",\"pid\":%llu,\"tid\":%llu}",
					(unsigned long long)p->pid, (unsigned long long)tids[k]);
			}
		}
	}
	fputs("]}\n", out);
	u64map_free(&open);
	free(tids);
	if (rc)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	if (ferror(out))
		return memscope_error_set(err, MEMSCOPE_E_IO, NULL, 0, "write failed");
	return 0;
}
