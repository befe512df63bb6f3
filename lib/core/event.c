/* Names of event kinds, subtypes and host functions, and lookups on an event. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "memscope/event.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"

/* a name and its length, so lookups compare lengths before bytes */
struct name {
	const char *s;
	size_t len;
};
/* clang-format off */
#define N(lit) { lit, sizeof(lit) - 1 }
/* clang-format on */

static const struct name kind_names[MEMSCOPE_KIND_COUNT_] = {
	[MEMSCOPE_KIND_SYSTEM] = N("SYSTEM"),
	[MEMSCOPE_KIND_MALLOC] = N("MALLOC"),
	[MEMSCOPE_KIND_FREE] = N("FREE"),
	[MEMSCOPE_KIND_ACCESS] = N("ACCESS"),
	[MEMSCOPE_KIND_OP_LAUNCH] = N("OP_LAUNCH"),
	[MEMSCOPE_KIND_KERNEL_LAUNCH] = N("KERNEL_LAUNCH"),
	[MEMSCOPE_KIND_MSTX] = N("MSTX"),
	[MEMSCOPE_KIND_SNAPSHOT] = N("SNAPSHOT"),
	[MEMSCOPE_KIND_OOM_DETAIL] = N("OOM_DETAIL"),
	[MEMSCOPE_KIND_COUNTER] = N("COUNTER"),
	[MEMSCOPE_KIND_PLAN] = N("PLAN"),
};

static const struct name subtype_names[MEMSCOPE_SUB_COUNT_] = {
	[MEMSCOPE_SUB_ACL_INIT] = N("ACL_INIT"),
	[MEMSCOPE_SUB_ACL_FINI] = N("ACL_FINI"),
	[MEMSCOPE_SUB_START_TRACE] = N("START_TRACE"),
	[MEMSCOPE_SUB_STOP_TRACE] = N("STOP_TRACE"),
	[MEMSCOPE_SUB_STEP] = N("STEP"),
	[MEMSCOPE_SUB_PTA] = N("PTA"),
	[MEMSCOPE_SUB_PTA_WORKSPACE] = N("PTA_WORKSPACE"),
	[MEMSCOPE_SUB_ATB] = N("ATB"),
	[MEMSCOPE_SUB_MINDSPORE] = N("MINDSPORE"),
	[MEMSCOPE_SUB_HAL] = N("HAL"),
	[MEMSCOPE_SUB_HOST_PINNED] = N("HOST_PINNED"),
	[MEMSCOPE_SUB_MMAP] = N("MMAP"),
	[MEMSCOPE_SUB_CUDA] = N("CUDA"),
	[MEMSCOPE_SUB_CUDA_CACHING] = N("CUDA_CACHING"),
	[MEMSCOPE_SUB_CUDA_MANAGED] = N("CUDA_MANAGED"),
	[MEMSCOPE_SUB_HOST] = N("HOST"),
	[MEMSCOPE_SUB_GE] = N("GE"),
	[MEMSCOPE_SUB_READ] = N("READ"),
	[MEMSCOPE_SUB_WRITE] = N("WRITE"),
	[MEMSCOPE_SUB_ACCESS_UNKNOWN] = N("UNKNOWN"),
	[MEMSCOPE_SUB_ATEN_START] = N("ATEN_START"),
	[MEMSCOPE_SUB_ATEN_END] = N("ATEN_END"),
	[MEMSCOPE_SUB_ATB_START] = N("ATB_START"),
	[MEMSCOPE_SUB_ATB_END] = N("ATB_END"),
	[MEMSCOPE_SUB_KERNEL_LAUNCH] = N("KERNEL_LAUNCH"),
	[MEMSCOPE_SUB_KERNEL_EXECUTE_START] = N("KERNEL_EXECUTE_START"),
	[MEMSCOPE_SUB_KERNEL_EXECUTE_END] = N("KERNEL_EXECUTE_END"),
	[MEMSCOPE_SUB_KERNEL_START] = N("KERNEL_START"),
	[MEMSCOPE_SUB_KERNEL_END] = N("KERNEL_END"),
	[MEMSCOPE_SUB_MARK] = N("Mark"),
	[MEMSCOPE_SUB_RANGE_START] = N("Range_start"),
	[MEMSCOPE_SUB_RANGE_END] = N("Range_end"),
	[MEMSCOPE_SUB_SNAPSHOT] = N("SNAPSHOT"),
	[MEMSCOPE_SUB_OOM_TRIGGER] = N("OOM_TRIGGER"),
	[MEMSCOPE_SUB_OOM_RECENT_ALLOC] = N("OOM_RECENT_ALLOC"),
	[MEMSCOPE_SUB_OOM_TOP_ALLOC] = N("OOM_TOP_ALLOC"),
	[MEMSCOPE_SUB_POOL_SAMPLE] = N("POOL"),
	[MEMSCOPE_SUB_NPU_MEM] = N("NPU_MEM"),
	[MEMSCOPE_SUB_MODULE_SAMPLE] = N("MODULE"),
};

static const struct name func_names[MEMSCOPE_FUNC_COUNT_] = {
	[MEMSCOPE_FUNC_MALLOC] = N("malloc"),
	[MEMSCOPE_FUNC_CALLOC] = N("calloc"),
	[MEMSCOPE_FUNC_REALLOC] = N("realloc"),
	[MEMSCOPE_FUNC_MEMALIGN] = N("memalign"),
	[MEMSCOPE_FUNC_POSIX_MEMALIGN] = N("posix_memalign"),
	[MEMSCOPE_FUNC_ALIGNED_ALLOC] = N("aligned_alloc"),
	[MEMSCOPE_FUNC_VALLOC] = N("valloc"),
	[MEMSCOPE_FUNC_PVALLOC] = N("pvalloc"),
	[MEMSCOPE_FUNC_FREE] = N("free"),
	[MEMSCOPE_FUNC_MMAP] = N("mmap"),
	[MEMSCOPE_FUNC_MUNMAP] = N("munmap"),
	[MEMSCOPE_FUNC_NEW] = N("new"),
	[MEMSCOPE_FUNC_DELETE] = N("delete"),
};

const char *memscope_version(void)
{
	return MEMSCOPE_VERSION;
}

const char *memscope_bytes_text(char *buf, size_t n, uint64_t bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1023.5 && u < 6) { /* from 1023.5 on, "%.0f" would print 1024 */
		v /= 1024;
		u++;
	}
	if (bytes == MEMSCOPE_BYTES_OVERFLOW)
		snprintf(buf, n, "more than %.1f %s (the total overflowed)", v, unit[u]);
	else if (!u)
		snprintf(buf, n, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, n, "%.*f %s", v < 9.995 ? 2 : v < 99.95 ? 1 : 0, v, unit[u]);
	return buf;
}

const char *memscope_seconds_text(char *buf, size_t n, uint64_t ts_ns, uint64_t origin_ns)
{
	uint64_t d = ts_ns >= origin_ns ? ts_ns - origin_ns : origin_ns - ts_ns;

	snprintf(buf, n, "%s%" PRIu64 ".%06" PRIu64 " s", ts_ns < origin_ns ? "-" : "",
		d / 1000000000u, d % 1000000000u / 1000u);
	return buf;
}

const char *memscope_kind_name(unsigned kind)
{
	return kind < MEMSCOPE_KIND_COUNT_ ? kind_names[kind].s : NULL;
}

const char *memscope_subtype_name(unsigned subtype)
{
	return subtype < MEMSCOPE_SUB_COUNT_ ? subtype_names[subtype].s : NULL;
}

const char *memscope_func_name(unsigned func)
{
	return func < MEMSCOPE_FUNC_COUNT_ ? func_names[func].s : NULL;
}

static unsigned lookup(const struct name *names, unsigned n, const char *s, size_t len)
{
	unsigned i;

	for (i = 1; i < n; i++)
		if (names[i].len == len && memcmp(names[i].s, s, len) == 0)
			return i;
	return 0;
}

unsigned memscope_kind_parse(const char *s, size_t len)
{
	return lookup(kind_names, MEMSCOPE_KIND_COUNT_, s, len);
}

unsigned memscope_subtype_parse(const char *s, size_t len)
{
	/* the legacy layout's spelling (formats/dump-csv.md "Event and Event Type values") */
	if (len == 8 && memcmp(s, "acl init", 8) == 0)
		return MEMSCOPE_SUB_ACL_INIT;
	return lookup(subtype_names, MEMSCOPE_SUB_COUNT_, s, len);
}

unsigned memscope_func_parse(const char *s, size_t len)
{
	return lookup(func_names, MEMSCOPE_FUNC_COUNT_, s, len);
}

const char *memscope_device_text(int32_t device, char buf[MEMSCOPE_DEVICE_TEXT_MAX])
{
	if (device == MEMSCOPE_DEVICE_HOST)
		return "cpu";
	if (device < 0)
		return "N/A";
	buf[ms__fmt_u64(buf, (uint64_t)device)] = '\0';
	return buf;
}

int memscope_subtype_is_pool(unsigned subtype)
{
	return (subtype >= MEMSCOPE_SUB_PTA && subtype <= MEMSCOPE_SUB_GE) ||
	       subtype == MEMSCOPE_SUB_MMAP ||
	       (subtype >= MEMSCOPE_SUB_CUDA && subtype <= MEMSCOPE_SUB_CUDA_MANAGED);
}

unsigned ms__component_pool(const char *s, size_t len)
{
	if (len == 9 && memcmp(s, "WORKSPACE", 9) == 0)
		return MEMSCOPE_SUB_PTA_WORKSPACE;
	if (len == 9 && memcmp(s, "MindSpore", 9) == 0)
		return MEMSCOPE_SUB_MINDSPORE;
	if ((len == 3 && memcmp(s, "PTA", 3) == 0) || (len == 2 && memcmp(s, "GE", 2) == 0))
		return memscope_subtype_parse(s, len);
	return 0;
}

void ms__event_set_pool(struct memscope_event *ev, const struct memscope_strtab *st)
{
	size_t len;
	const char *s;

	if ((ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE ||
		    ev->kind == MEMSCOPE_KIND_PLAN) &&
		memscope_subtype_is_pool(ev->subtype))
		ev->pool = ev->subtype;
	else if (ev->kind == MEMSCOPE_KIND_COUNTER && ev->subtype == MEMSCOPE_SUB_POOL_SAMPLE &&
		 (s = memscope_strtab_str(st, ev->name, &len)))
		ev->pool = (uint16_t)ms__component_pool(s, len);
}

uint32_t memscope_event_op(const struct memscope_event *ev)
{
	return ev->kind == MEMSCOPE_KIND_MALLOC && ev->name != MEMSCOPE_STR_EMPTY &&
			       ev->name != MEMSCOPE_STR_NA
		       ? ev->name
		       : 0;
}

const char *memscope_event_file(const struct memscope_strtab *st, uint32_t file, const char *input)
{
	const char *s = file && st ? memscope_strtab_str(st, file, NULL) : NULL;

	return s ? s : input;
}

const struct memscope_attr *memscope_event_attr(const struct memscope_event *ev, uint32_t key)
{
	uint32_t i;

	for (i = 0; i < ev->n_attrs; i++)
		if (ev->attrs[i].key == key)
			return &ev->attrs[i];
	return NULL;
}

/* The typed fields the analyses use, from the attrs. Returns a message on a bad value. */
const char *ms__event_type_attrs(struct memscope_event *ev, const struct memscope_attr **bad)
{
	int strict = ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE ||
		     ev->kind == MEMSCOPE_KIND_ACCESS;
	uint32_t i;

	for (i = 0; i < ev->n_attrs; i++) {
		const struct memscope_attr *a = &ev->attrs[i];
		uint64_t u;
		int64_t v;

		switch (a->key) {
		case MEMSCOPE_STR_ALLOCATION_ID:
			if (ms__parse_u64(a->val, a->val_len, &u) == 0) {
				ev->alloc_id = u;
				ev->flags |= MEMSCOPE_EV_ALLOC_ID;
			} else if (strict) {
				*bad = a;
				return "invalid allocation_id";
			}
			break;
		case MEMSCOPE_STR_SIZE:
		case MEMSCOPE_STR_TOTAL:
		case MEMSCOPE_STR_USED:
			if (ms__parse_i64(a->val, a->val_len, &v) == 0) {
				if (a->key == MEMSCOPE_STR_SIZE) {
					ev->size = v;
					ev->flags |= MEMSCOPE_EV_SIZE;
				} else if (a->key == MEMSCOPE_STR_TOTAL) {
					ev->total = v;
					ev->flags |= MEMSCOPE_EV_TOTAL;
				} else {
					ev->used = v;
					ev->flags |= MEMSCOPE_EV_USED;
				}
			} else if (strict) {
				*bad = a;
				return a->key == MEMSCOPE_STR_SIZE    ? "invalid size"
				       : a->key == MEMSCOPE_STR_TOTAL ? "invalid total"
								      : "invalid used";
			}
			break;
		case MEMSCOPE_STR_SHADOW:
			if (a->val_len == 4 && memcmp(a->val, "true", 4) == 0)
				ev->flags |= MEMSCOPE_EV_SHADOW;
			break;
		case MEMSCOPE_STR_TYPE:
			if (ev->kind == MEMSCOPE_KIND_ACCESS) {
				unsigned pool = memscope_subtype_parse(a->val, a->val_len);

				if (memscope_subtype_is_pool(pool))
					ev->pool = (uint16_t)pool;
			}
			break;
		case MEMSCOPE_STR_FUNC:
			ev->func = (uint16_t)memscope_func_parse(a->val, a->val_len);
			break;
		default:
			break;
		}
	}
	/* the realloc flag follows the function, whichever way it came */
	if (ev->func == MEMSCOPE_FUNC_REALLOC)
		ev->flags |= MEMSCOPE_EV_REALLOC;
	else
		ev->flags &= ~(uint32_t)MEMSCOPE_EV_REALLOC;
	return NULL;
}

uint32_t ms__event_synth_attrs(
	const struct memscope_event *ev, struct memscope_attr *out, char *buf)
{
	const char *fn = memscope_func_name(ev->func);
	uint32_t n = 0;
	size_t len;

	if (ev->flags & MEMSCOPE_EV_ALLOC_ID) {
		len = ms__fmt_u64(buf, ev->alloc_id);
		out[n++] = (struct memscope_attr){ MEMSCOPE_STR_ALLOCATION_ID, (uint32_t)len, buf };
		buf += len;
	}
	if (ev->flags & MEMSCOPE_EV_PTR) {
		ms__fmt_hex16(buf, ev->ptr);
		out[n++] = (struct memscope_attr){ MEMSCOPE_STR_ADDR, 18, buf };
		buf += 18;
	}
	if (ev->flags & MEMSCOPE_EV_SIZE) {
		len = ms__fmt_i64(buf, ev->size);
		out[n++] = (struct memscope_attr){ MEMSCOPE_STR_SIZE, (uint32_t)len, buf };
	}
	if (fn)
		out[n++] = (struct memscope_attr){ MEMSCOPE_STR_FUNC, (uint32_t)strlen(fn), fn };
	return n;
}
