/* Names of event kinds, subtypes and host functions, and lookups on an event. */
#include <string.h>

#include "internal.h"
#include "memscope/event.h"
#include "memscope/memscope.h"

static const char *const kind_names[MEMSCOPE_KIND_COUNT_] = {
	[MEMSCOPE_KIND_SYSTEM] = "SYSTEM",
	[MEMSCOPE_KIND_MALLOC] = "MALLOC",
	[MEMSCOPE_KIND_FREE] = "FREE",
	[MEMSCOPE_KIND_ACCESS] = "ACCESS",
	[MEMSCOPE_KIND_OP_LAUNCH] = "OP_LAUNCH",
	[MEMSCOPE_KIND_KERNEL_LAUNCH] = "KERNEL_LAUNCH",
	[MEMSCOPE_KIND_MSTX] = "MSTX",
	[MEMSCOPE_KIND_SNAPSHOT] = "SNAPSHOT",
	[MEMSCOPE_KIND_OOM_DETAIL] = "OOM_DETAIL",
	[MEMSCOPE_KIND_COUNTER] = "COUNTER",
};

static const char *const subtype_names[MEMSCOPE_SUB_COUNT_] = {
	[MEMSCOPE_SUB_ACL_INIT] = "ACL_INIT",
	[MEMSCOPE_SUB_ACL_FINI] = "ACL_FINI",
	[MEMSCOPE_SUB_START_TRACE] = "START_TRACE",
	[MEMSCOPE_SUB_STOP_TRACE] = "STOP_TRACE",
	[MEMSCOPE_SUB_STEP] = "STEP",
	[MEMSCOPE_SUB_PTA] = "PTA",
	[MEMSCOPE_SUB_PTA_WORKSPACE] = "PTA_WORKSPACE",
	[MEMSCOPE_SUB_ATB] = "ATB",
	[MEMSCOPE_SUB_MINDSPORE] = "MINDSPORE",
	[MEMSCOPE_SUB_HAL] = "HAL",
	[MEMSCOPE_SUB_HOST_PINNED] = "HOST_PINNED",
	[MEMSCOPE_SUB_HOST] = "HOST",
	[MEMSCOPE_SUB_GE] = "GE",
	[MEMSCOPE_SUB_READ] = "READ",
	[MEMSCOPE_SUB_WRITE] = "WRITE",
	[MEMSCOPE_SUB_ACCESS_UNKNOWN] = "UNKNOWN",
	[MEMSCOPE_SUB_ATEN_START] = "ATEN_START",
	[MEMSCOPE_SUB_ATEN_END] = "ATEN_END",
	[MEMSCOPE_SUB_ATB_START] = "ATB_START",
	[MEMSCOPE_SUB_ATB_END] = "ATB_END",
	[MEMSCOPE_SUB_KERNEL_LAUNCH] = "KERNEL_LAUNCH",
	[MEMSCOPE_SUB_KERNEL_EXECUTE_START] = "KERNEL_EXECUTE_START",
	[MEMSCOPE_SUB_KERNEL_EXECUTE_END] = "KERNEL_EXECUTE_END",
	[MEMSCOPE_SUB_KERNEL_START] = "KERNEL_START",
	[MEMSCOPE_SUB_KERNEL_END] = "KERNEL_END",
	[MEMSCOPE_SUB_MARK] = "Mark",
	[MEMSCOPE_SUB_RANGE_START] = "Range_start",
	[MEMSCOPE_SUB_RANGE_END] = "Range_end",
	[MEMSCOPE_SUB_SNAPSHOT] = "SNAPSHOT",
	[MEMSCOPE_SUB_OOM_TRIGGER] = "OOM_TRIGGER",
	[MEMSCOPE_SUB_OOM_RECENT_ALLOC] = "OOM_RECENT_ALLOC",
	[MEMSCOPE_SUB_OOM_TOP_ALLOC] = "OOM_TOP_ALLOC",
};

static const char *const func_names[MEMSCOPE_FUNC_COUNT_] = {
	[MEMSCOPE_FUNC_MALLOC] = "malloc",
	[MEMSCOPE_FUNC_CALLOC] = "calloc",
	[MEMSCOPE_FUNC_REALLOC] = "realloc",
	[MEMSCOPE_FUNC_MEMALIGN] = "memalign",
	[MEMSCOPE_FUNC_POSIX_MEMALIGN] = "posix_memalign",
	[MEMSCOPE_FUNC_ALIGNED_ALLOC] = "aligned_alloc",
	[MEMSCOPE_FUNC_VALLOC] = "valloc",
	[MEMSCOPE_FUNC_PVALLOC] = "pvalloc",
	[MEMSCOPE_FUNC_FREE] = "free",
	[MEMSCOPE_FUNC_MMAP] = "mmap",
	[MEMSCOPE_FUNC_MUNMAP] = "munmap",
};

const char *memscope_version(void)
{
	return MEMSCOPE_VERSION;
}

const char *memscope_kind_name(unsigned kind)
{
	return kind < MEMSCOPE_KIND_COUNT_ ? kind_names[kind] : NULL;
}

const char *memscope_subtype_name(unsigned subtype)
{
	return subtype < MEMSCOPE_SUB_COUNT_ ? subtype_names[subtype] : NULL;
}

const char *memscope_func_name(unsigned func)
{
	return func < MEMSCOPE_FUNC_COUNT_ ? func_names[func] : NULL;
}

static unsigned lookup(const char *const *names, unsigned n, const char *s, size_t len)
{
	unsigned i;

	for (i = 1; i < n; i++)
		if (names[i] && strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
			return i;
	return 0;
}

unsigned memscope_kind_parse(const char *s, size_t len)
{
	return lookup(kind_names, MEMSCOPE_KIND_COUNT_, s, len);
}

unsigned memscope_subtype_parse(const char *s, size_t len)
{
	/* the legacy layout's spelling (msmemscope.md §2.4) */
	if (len == 8 && memcmp(s, "acl init", 8) == 0)
		return MEMSCOPE_SUB_ACL_INIT;
	return lookup(subtype_names, MEMSCOPE_SUB_COUNT_, s, len);
}

unsigned memscope_func_parse(const char *s, size_t len)
{
	return lookup(func_names, MEMSCOPE_FUNC_COUNT_, s, len);
}

int memscope_subtype_is_pool(unsigned subtype)
{
	return subtype >= MEMSCOPE_SUB_PTA && subtype <= MEMSCOPE_SUB_GE;
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
const char *event_type_attrs(struct memscope_event *ev, const struct memscope_attr **bad)
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
			if (parse_u64(a->val, a->val_len, &u) == 0) {
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
			if (parse_i64(a->val, a->val_len, &v) == 0) {
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
				return a->key == MEMSCOPE_STR_SIZE	  ? "invalid size"
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
	return NULL;
}

