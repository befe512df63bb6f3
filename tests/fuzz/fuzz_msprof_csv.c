/* libFuzzer harness of the Ascend profiler memory CSV reader (strict and lenient): the capture
 * round-trip oracle, and the events' own rules: IDs in order, no pointers, blocks numbered up with
 * each FREE after its own MALLOC, module samples in range, plans without time. */
#include "fuzz_common.h"

struct rules {
	uint64_t n, last_block, malloc_ts;
	int64_t malloc_size;
	int open; /* the last block's MALLOC has no FREE yet */
};

static int check_event(void *ctx, const struct memscope_event *ev)
{
	struct rules *r = ctx;

	if (ev->id != ++r->n || (ev->flags & MEMSCOPE_EV_PTR))
		abort();
	switch (ev->kind) {
	case MEMSCOPE_KIND_MALLOC:
	case MEMSCOPE_KIND_FREE:
		if ((ev->flags & (MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_SIZE)) !=
				(MEMSCOPE_EV_ALLOC_ID | MEMSCOPE_EV_SIZE) ||
			ev->size < 0 || ev->pool != ev->subtype ||
			(ev->pool != MEMSCOPE_SUB_PTA && ev->pool != MEMSCOPE_SUB_GE &&
				ev->pool != MEMSCOPE_SUB_MINDSPORE))
			abort();
		if (ev->kind == MEMSCOPE_KIND_MALLOC) {
			if (ev->alloc_id <= r->last_block)
				abort();
			r->last_block = ev->alloc_id;
			r->malloc_ts = ev->ts_ns;
			r->malloc_size = ev->size;
			r->open = 1;
		} else if (ev->name != MEMSCOPE_STR_NA) {
			abort();
		} else if (ev->alloc_id == r->last_block && r->open) {
			/* the release of the block just allocated */
			if (ev->size != r->malloc_size || ev->ts_ns < r->malloc_ts)
				abort();
			r->open = 0;
		} else if (ev->alloc_id > r->last_block) {
			/* a release alone */
			r->last_block = ev->alloc_id;
			r->open = 0;
		} else {
			abort();
		}
		break;
	case MEMSCOPE_KIND_COUNTER:
		if (ev->subtype == MEMSCOPE_SUB_MODULE_SAMPLE) {
			if (!(ev->flags & MEMSCOPE_EV_TOTAL) || ev->total < 0 ||
				ev->total >= ((int64_t)1 << 53))
				abort();
		} else if (ev->subtype == MEMSCOPE_SUB_NPU_MEM) {
			if (!(ev->flags & MEMSCOPE_EV_USED))
				abort();
		} else if (ev->subtype != MEMSCOPE_SUB_POOL_SAMPLE) {
			abort();
		}
		r->open = 0;
		break;
	case MEMSCOPE_KIND_PLAN:
		if (ev->ts_ns != 0 || !(ev->flags & MEMSCOPE_EV_SIZE))
			abort();
		r->open = 0;
		break;
	default:
		abort();
	}
	return 0;
}

static void check_rules(const uint8_t *buf, size_t size, int lenient)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_read_opts opts = { 0 };
	struct memscope_error err;
	struct rules r = { 0 };
	int rc;

	if (!st)
		abort();
	opts.lenient = lenient;
	rc = memscope_source_open_mem(&src, buf, size, "fuzz", st, &opts, &err);
	if (!rc && memscope_source_format(src) == MEMSCOPE_FORMAT_MSPROF_CSV) {
		rc = memscope_source_read(src, check_event, &r, &err);
		/* every failure names itself and its line */
		if (rc && (!err.msg[0] || err.code != rc))
			abort();
		if (memscope_source_stats(src)->n_events != r.n)
			abort();
	}
	memscope_source_close(src);
	memscope_strtab_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 8 && memcmp(data, "\x89MSCAP\r\n", 8) == 0)
		return 0; /* the capture harness covers those */
	fuzz_both_modes(data, size);
	check_rules(data, size, 0);
	check_rules(data, size, 1);
	return 0;
}
