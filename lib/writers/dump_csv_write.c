/* Writer of the reference's memscope_dump CSV layout, byte for byte as the reference spells rows.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/strtab.h"
#include "memscope/writer.h"
#include "outbuf.h"

static const char header[] = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,"
			     "Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n";

struct memscope_csv_writer {
	const struct memscope_strtab *st;
	int header_done;
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
	return w;
}

uint64_t memscope_csv_writer_bytes(const struct memscope_csv_writer *w)
{
	return w->o.total + w->o.len;
}

void memscope_csv_writer_free(struct memscope_csv_writer *w)
{
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

static int put_stack(struct outbuf *o, const struct memscope_strtab *st, uint32_t id)
{
	size_t n, i;
	const uint32_t *frames;
	int rc = 0;

	if (!id)
		return 0;
	frames = memscope_strtab_stack(st, id, &n);
	rc |= outbuf_put(o, "\"", 1);
	for (i = 0; frames && i < n; i++) {
		if (i)
			rc |= outbuf_put(o, "\n", 1);
		rc |= put_str(o, st, frames[i]);
	}
	rc |= outbuf_put(o, "\"", 1);
	return rc;
}

/*
 * Events from the capture shim carry typed fields and no Attr text: write the Attr the
 * reference would, {allocation_id:N,addr:0x...,size:N}, plus func:NAME.
 */
static int put_synthetic_attrs(struct outbuf *o, const struct memscope_event *ev)
{
	char tmp[128];
	size_t n = 0;
	const char *fn = memscope_func_name(ev->func);

	tmp[n++] = '"';
	tmp[n++] = '{';
	if (ev->flags & MEMSCOPE_EV_ALLOC_ID) {
		memcpy(tmp + n, "allocation_id:", 14);
		n += 14;
		n += fmt_u64(tmp + n, ev->alloc_id);
	}
	if (ev->flags & MEMSCOPE_EV_PTR) {
		if (n > 2)
			tmp[n++] = ',';
		memcpy(tmp + n, "addr:", 5);
		n += 5;
		fmt_hex16(tmp + n, ev->ptr);
		n += 18;
	}
	if (ev->flags & MEMSCOPE_EV_SIZE) {
		if (n > 2)
			tmp[n++] = ',';
		memcpy(tmp + n, "size:", 5);
		n += 5;
		n += fmt_i64(tmp + n, ev->size);
	}
	if (fn) {
		if (n > 2)
			tmp[n++] = ',';
		memcpy(tmp + n, "func:", 5);
		n += 5;
		memcpy(tmp + n, fn, strlen(fn));
		n += strlen(fn);
	}
	tmp[n++] = '}';
	tmp[n++] = '"';
	return outbuf_put(o, tmp, n);
}

static int put_num_or_na(struct outbuf *o, uint64_t v)
{
	char tmp[24];

	if (v == MEMSCOPE_ID_NONE)
		return outbuf_put(o, "N/A,", 4);
	size_t n = fmt_u64(tmp, v);

	tmp[n++] = ',';
	return outbuf_put(o, tmp, n);
}

int memscope_csv_writer_write(
	struct memscope_csv_writer *w, const struct memscope_event *ev, struct memscope_error *err)
{
	struct outbuf *o = &w->o;
	char tmp[32];
	size_t n, len;
	const char *s;
	uint32_t i;
	int rc = 0;

	if (!w->header_done) {
		rc |= outbuf_put(o, header, sizeof(header) - 1);
		w->header_done = 1;
	}
	n = fmt_u64(tmp, ev->id);
	tmp[n++] = ',';
	rc |= outbuf_put(o, tmp, n);
	if ((s = memscope_kind_name(ev->kind)) != NULL)
		rc |= outbuf_put(o, s, strlen(s));
	else
		rc |= put_str(o, w->st, ev->kind_text);
	rc |= outbuf_put(o, ",", 1);
	if ((s = memscope_subtype_name(ev->subtype)) != NULL)
		rc |= outbuf_put(o, s, strlen(s));
	else
		rc |= put_str(o, w->st, ev->subtype_text);
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

	n = fmt_u64(tmp, ev->ts_ns);
	tmp[n++] = ',';
	rc |= outbuf_put(o, tmp, n);
	rc |= put_num_or_na(o, ev->pid);
	rc |= put_num_or_na(o, ev->tid);
	s = memscope_device_text(ev->device, tmp);
	rc |= outbuf_put(o, s, strlen(s));
	rc |= outbuf_put(o, ",", 1);
	if (ev->flags & MEMSCOPE_EV_PTR) {
		fmt_hex16(tmp, ev->ptr);
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
		rc |= outbuf_put(o, "\"{", 2);
		for (i = 0; i < ev->n_attrs; i++) {
			if (i)
				rc |= outbuf_put(o, ",", 1);
			rc |= put_str(o, w->st, ev->attrs[i].key);
			rc |= outbuf_put(o, ":", 1);
			rc |= outbuf_put(o, ev->attrs[i].val, ev->attrs[i].val_len);
		}
		rc |= outbuf_put(o, "}\"", 2);
	} else if (ev->flags & (MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_SIZE)) {
		rc |= put_synthetic_attrs(o, ev);
	}
	rc |= outbuf_put(o, ",", 1);
	rc |= put_stack(o, w->st, ev->stack_py);
	rc |= outbuf_put(o, ",", 1);
	rc |= put_stack(o, w->st, ev->stack_c);
	rc |= outbuf_put(o, "\n", 1);
	if (rc)
		return memscope_error_set(err, MEMSCOPE_E_IO, NULL, 0, "write failed");
	return 0;
}

int memscope_csv_writer_finish(struct memscope_csv_writer *w, struct memscope_error *err)
{
	if (!w->header_done) {
		w->header_done = 1;
		if (outbuf_put(&w->o, header, sizeof(header) - 1))
			return memscope_error_set(err, MEMSCOPE_E_IO, NULL, 0, "write failed");
	}
	if (outbuf_flush(&w->o) || fflush(w->o.out))
		return memscope_error_set(err, MEMSCOPE_E_IO, NULL, 0, "write failed");
	return 0;
}
