/* Writer of the reference's memscope_dump CSV layout, byte for byte as the reference spells rows.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/strtab.h"
#include "memscope/dump_csv.h"
#include "dump_text.h"
#include "outbuf.h"
#include "report.h"

static const char header[] = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,"
			     "Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n";

struct memscope_csv_writer {
	const struct memscope_strtab *st;
	int header_done;
	int nomem;
	struct buf scratch; /* a stack's text */
	struct outbuf o;
};

struct memscope_csv_writer *memscope_csv_writer_new(FILE *out, const struct memscope_strtab *st)
{
	struct memscope_csv_writer *w = malloc(sizeof(*w));

	if (!w)
		return NULL;
	w->st = st;
	w->header_done = 0;
	w->o.out = out;
	w->o.len = 0;
	w->o.total = 0;
	w->o.failed = 0;
	w->scratch = (struct buf){ 0 };
	w->nomem = 0;
	return w;
}

uint64_t memscope_csv_writer_bytes(const struct memscope_csv_writer *w)
{
	return w->o.total + w->o.len;
}

void memscope_csv_writer_free(struct memscope_csv_writer *w)
{
	if (w)
		ms__buf_free(&w->scratch);
	free(w);
}

static int put_str(struct outbuf *o, const struct memscope_strtab *st, uint32_t id)
{
	size_t n;
	const char *s = memscope_strtab_str(st, id, &n);

	return s ? outbuf_put(o, s, n) : 0;
}

static int needs_quotes(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '\n' || s[i] == '\r')
			return 1;
	return 0;
}

const char *ms__dump_kind_text(
	const struct memscope_strtab *st, const struct memscope_event *ev, int sub, size_t *n)
{
	const char *s = sub ? memscope_subtype_name(ev->subtype) : memscope_kind_name(ev->kind);

	if (s) {
		*n = strlen(s);
		return s;
	}
	s = memscope_strtab_str(st, sub ? ev->subtype_text : ev->kind_text, n);
	return s ? s : (*n = 0, "");
}

int ms__dump_stack_text(struct buf *b, const struct memscope_strtab *st, uint32_t id)
{
	size_t n, i, len;
	const uint32_t *frames;
	const char *s;
	int rc;

	if (!id)
		return 0;
	frames = memscope_strtab_stack(st, id, &n);
	rc = ms__buf_append(b, "\"", 1);
	for (i = 0; frames && i < n && !rc; i++) {
		if (i)
			rc = ms__buf_append(b, "\n", 1);
		if ((s = memscope_strtab_str(st, frames[i], &len)) != NULL && !rc)
			rc = ms__buf_append(b, s, len);
	}
	return rc ? rc : ms__buf_append(b, "\"", 1);
}

static int put_stack(struct memscope_csv_writer *w, uint32_t id)
{
	w->scratch.len = 0;
	if (ms__dump_stack_text(&w->scratch, w->st, id)) {
		w->nomem = 1;
		return MEMSCOPE_E_NOMEM;
	}
	return outbuf_put(&w->o, w->scratch.p, w->scratch.len);
}

/* "{k:v,...}" quoted, from n entries */
static int put_attrs(struct memscope_csv_writer *w, const struct memscope_attr *a, uint32_t n)
{
	struct outbuf *o = &w->o;
	int rc = outbuf_put(o, "\"{", 2);
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (i)
			rc |= outbuf_put(o, ",", 1);
		rc |= put_str(o, w->st, a[i].key);
		rc |= outbuf_put(o, ":", 1);
		rc |= outbuf_put(o, a[i].val, a[i].val_len);
	}
	return rc | outbuf_put(o, "}\"", 2);
}

static int put_num_or_na(struct outbuf *o, uint64_t v)
{
	char tmp[24];

	if (v == MEMSCOPE_ID_NONE)
		return outbuf_put(o, "N/A,", 4);
	size_t n = ms__fmt_u64(tmp, v);

	tmp[n++] = ',';
	return outbuf_put(o, tmp, n);
}

int memscope_csv_writer_write(
	struct memscope_csv_writer *w, const struct memscope_event *ev, struct memscope_error *err)
{
	struct outbuf *o = &w->o;
	struct memscope_attr synth[4];
	char tmp[32], synth_buf[MEMSCOPE_SYNTH_BUF];
	size_t n, len;
	const char *s;
	int rc = 0;

	if (!w->header_done) {
		rc |= outbuf_put(o, header, sizeof(header) - 1);
		w->header_done = 1;
	}
	n = ms__fmt_u64(tmp, ev->id);
	tmp[n++] = ',';
	rc |= outbuf_put(o, tmp, n);
	s = ms__dump_kind_text(w->st, ev, 0, &len);
	rc |= outbuf_put(o, s, len);
	rc |= outbuf_put(o, ",", 1);
	s = ms__dump_kind_text(w->st, ev, 1, &len);
	rc |= outbuf_put(o, s, len);
	rc |= outbuf_put(o, ",", 1);

	s = memscope_strtab_str(w->st, ev->name, &len);
	if (!s)
		s = "", len = 0;
	if ((ev->flags & MEMSCOPE_EV_NAME_QUOTED) || needs_quotes(s, len)) {
		rc |= outbuf_put(o, "\"", 1);
		rc |= outbuf_put(o, s, len);
		rc |= outbuf_put(o, "\",", 2);
	} else {
		rc |= outbuf_put(o, s, len);
		rc |= outbuf_put(o, ",", 1);
	}

	n = ms__fmt_u64(tmp, ev->ts_ns);
	tmp[n++] = ',';
	rc |= outbuf_put(o, tmp, n);
	rc |= put_num_or_na(o, ev->pid);
	rc |= put_num_or_na(o, ev->tid);
	s = memscope_device_text(ev->device, tmp);
	rc |= outbuf_put(o, s, strlen(s));
	rc |= outbuf_put(o, ",", 1);
	if (ev->flags & MEMSCOPE_EV_PTR) {
		ms__fmt_hex16(tmp, ev->ptr);
		tmp[18] = ',';
		rc |= outbuf_put(o, tmp, 19);
	} else {
		rc |= outbuf_put(o, "N/A,", 4);
	}

	if (ev->flags & MEMSCOPE_EV_ATTR_RAW) {
		rc |= outbuf_put(o, "\"", 1);
		if (ev->n_attrs)
			rc |= outbuf_put(o, ev->attrs[0].val, ev->attrs[0].val_len);
		rc |= outbuf_put(o, "\"", 1);
	} else if (ev->flags & MEMSCOPE_EV_ATTR) {
		rc |= put_attrs(w, ev->attrs, ev->n_attrs);
	} else if (ev->flags & (MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_SIZE)) {
		rc |= put_attrs(w, synth, ms__event_synth_attrs(ev, synth, synth_buf));
	}
	rc |= outbuf_put(o, ",", 1);
	rc |= put_stack(w, ev->stack_py);
	rc |= outbuf_put(o, ",", 1);
	rc |= put_stack(w, ev->stack_c);
	rc |= outbuf_put(o, "\n", 1);
	if (rc && w->nomem)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, NULL, 0, "out of memory");
	if (rc)
		return ms__write_failed(err);
	return 0;
}

int memscope_csv_writer_finish(struct memscope_csv_writer *w, struct memscope_error *err)
{
	if (!w->header_done) {
		w->header_done = 1;
		if (outbuf_put(&w->o, header, sizeof(header) - 1))
			return ms__write_failed(err);
	}
	if (outbuf_flush(&w->o) || fflush(w->o.out))
		return ms__write_failed(err);
	return 0;
}
