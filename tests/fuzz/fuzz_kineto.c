/* libFuzzer harness of the PyTorch profiler trace reader (strict and lenient): the capture
 * round-trip oracle, and the events' own rules: time order, IDs in delivery order, only ops,
 * MALLOC/FREE with an address and pool samples, every op START closed by its END. */
#include "fuzz_common.h"

struct order {
	uint64_t last_ts, n_open, n;
};

static int check_event(void *ctx, const struct memscope_event *ev)
{
	struct order *o = ctx;

	if (o->n++ && ev->ts_ns < o->last_ts)
		abort();
	o->last_ts = ev->ts_ns;
	if (ev->id != o->n)
		abort();
	if (ev->kind == MEMSCOPE_KIND_OP_LAUNCH) {
		if (ev->subtype == MEMSCOPE_SUB_ATEN_START)
			o->n_open++;
		else if (ev->subtype != MEMSCOPE_SUB_ATEN_END || o->n_open-- == 0)
			abort();
	} else if (ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE) {
		if (!(ev->flags & MEMSCOPE_EV_PTR) || !ev->pool || ev->size < 0)
			abort();
	} else if (ev->kind != MEMSCOPE_KIND_COUNTER || ev->subtype != MEMSCOPE_SUB_POOL_SAMPLE ||
		   !(ev->flags & (MEMSCOPE_EV_USED | MEMSCOPE_EV_TOTAL))) {
		abort();
	}
	return 0;
}

static void check_order(const uint8_t *buf, size_t size)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_read_opts opts = { 0 };
	struct memscope_error err;
	struct order o = { 0 };
	int rc;

	if (!st)
		abort();
	opts.lenient = 1;
	rc = memscope_source_open_mem(&src, buf, size, "fuzz", st, &opts, &err);
	if (!rc && memscope_source_format(src) == MEMSCOPE_FORMAT_KINETO) {
		rc = memscope_source_read(src, check_event, &o, &err);
		if ((!rc && o.n_open) || (rc && (!err.msg[0] || err.code != rc)))
			abort();
	}
	memscope_source_close(src);
	memscope_strtab_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char head[] = "{\"schemaVersion\":1,\"traceEvents\":[";
	uint8_t *buf = malloc(size + sizeof(head));

	/* a body of trace events gets the object's head in front; an input that opens an object
	 * is used as it is */
	if (size >= 1 && data[0] == '{') {
		memcpy(buf, data, size);
	} else {
		memcpy(buf, head, sizeof(head) - 1);
		if (size)
			memcpy(buf + sizeof(head) - 1, data, size);
		size += sizeof(head) - 1;
	}
	fuzz_both_modes(buf, size);
	check_order(buf, size);
	free(buf);
	return 0;
}
