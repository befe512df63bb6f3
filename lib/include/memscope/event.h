/* The event model: one struct for every record of every input (dump CSV rows, capture records,
 * later msprof rows). */
#ifndef MEMSCOPE_EVENT_H
#define MEMSCOPE_EVENT_H

#include <stddef.h>
#include <stdint.h>

struct memscope_strtab;

/* What happened (the dump's "Event" column, plus kinds other inputs bring). */
enum memscope_kind {
	MEMSCOPE_KIND_UNKNOWN = 0, /* text kept in kind_text */
	MEMSCOPE_KIND_SYSTEM,
	MEMSCOPE_KIND_MALLOC,
	MEMSCOPE_KIND_FREE,
	MEMSCOPE_KIND_ACCESS,
	MEMSCOPE_KIND_OP_LAUNCH,
	MEMSCOPE_KIND_KERNEL_LAUNCH,
	MEMSCOPE_KIND_MSTX,
	MEMSCOPE_KIND_SNAPSHOT,
	MEMSCOPE_KIND_OOM_DETAIL,
	MEMSCOPE_KIND_COUNTER, /* a usage sample of a pool, the process, the device or a module
				  (the Ascend profiler's memory_record, npu_mem, npu_module_mem):
				  subtype POOL, NPU_MEM or MODULE, name the series */
	MEMSCOPE_KIND_PLAN,    /* one block of a static graph's memory plan (static_op_mem): no
				  time (ts_ns 0), attrs graph, model, start, end (node indices) */
	MEMSCOPE_KIND_COUNT_
};

/* The dump's "Event Type" column: pools for MALLOC/FREE, and every other subtype the reference
 * writes (formats/dump-csv.md "Event and Event Type values"). */
enum memscope_subtype {
	MEMSCOPE_SUB_UNKNOWN = 0, /* text kept in subtype_text */
	/* SYSTEM */
	MEMSCOPE_SUB_ACL_INIT,
	MEMSCOPE_SUB_ACL_FINI,
	MEMSCOPE_SUB_START_TRACE,
	MEMSCOPE_SUB_STOP_TRACE,
	MEMSCOPE_SUB_STEP,
	/* pools (MALLOC, FREE; ACCESS carries its pool in the `type` attr) */
	MEMSCOPE_SUB_PTA,
	MEMSCOPE_SUB_PTA_WORKSPACE, /* only from the `type` attr of ACCESS rows and capture files */
	MEMSCOPE_SUB_ATB,
	MEMSCOPE_SUB_MINDSPORE,
	MEMSCOPE_SUB_HAL,
	MEMSCOPE_SUB_HOST_PINNED,
	MEMSCOPE_SUB_HOST, /* host heap: CPU tensors, and malloc-family calls from our capture shim
			    */
	MEMSCOPE_SUB_GE,   /* msprof GE pool */
	/* ACCESS */
	MEMSCOPE_SUB_READ,
	MEMSCOPE_SUB_WRITE,
	MEMSCOPE_SUB_ACCESS_UNKNOWN, /* "UNKNOWN" */
	/* OP_LAUNCH */
	MEMSCOPE_SUB_ATEN_START,
	MEMSCOPE_SUB_ATEN_END,
	MEMSCOPE_SUB_ATB_START,
	MEMSCOPE_SUB_ATB_END,
	/* KERNEL_LAUNCH */
	MEMSCOPE_SUB_KERNEL_LAUNCH,
	MEMSCOPE_SUB_KERNEL_EXECUTE_START,
	MEMSCOPE_SUB_KERNEL_EXECUTE_END,
	MEMSCOPE_SUB_KERNEL_START,
	MEMSCOPE_SUB_KERNEL_END,
	/* MSTX */
	MEMSCOPE_SUB_MARK,
	MEMSCOPE_SUB_RANGE_START,
	MEMSCOPE_SUB_RANGE_END,
	/* SNAPSHOT, OOM_DETAIL */
	MEMSCOPE_SUB_SNAPSHOT,
	MEMSCOPE_SUB_OOM_TRIGGER,
	MEMSCOPE_SUB_OOM_RECENT_ALLOC,
	MEMSCOPE_SUB_OOM_TOP_ALLOC,
	/* COUNTER (values: used = allocated or in-use bytes, total = reserved bytes, attr active)
	 */
	MEMSCOPE_SUB_POOL_SAMPLE,   /* "POOL": memory_record, name the component (PTA, GE, PTA+GE,
				       APP, ...); pool set when the component is one pool */
	MEMSCOPE_SUB_NPU_MEM,	    /* "NPU_MEM": npu_mem or the timeline's NPU MEM counters, name
				       APP/DDR, APP/HBM, APP/Memory, Device/DDR, ...: used */
	MEMSCOPE_SUB_MODULE_SAMPLE, /* "MODULE": npu_module_mem, name the CANN module: total */
	MEMSCOPE_SUB_MMAP, /* a pool: anonymous mmap/munmap recorded by memscope-record --mmap */
	/* pools of CUDA inputs (formats/torch-snapshot.md, formats/nsys.md) */
	MEMSCOPE_SUB_CUDA,	   /* device memory from cudaMalloc and kin: the PyTorch caching
				      allocator's segments, Nsight's Device, Array and static kinds */
	MEMSCOPE_SUB_CUDA_CACHING, /* the PyTorch CUDA caching allocator's blocks (tensors), carved
				      out of its CUDA segments */
	MEMSCOPE_SUB_CUDA_MANAGED, /* unified memory (cudaMallocManaged): Nsight's Managed kinds */
	MEMSCOPE_SUB_COUNT_
};

/* The host call behind a MALLOC/FREE of pool HOST recorded by our capture shim. */
enum memscope_func {
	MEMSCOPE_FUNC_NONE = 0,
	MEMSCOPE_FUNC_MALLOC,
	MEMSCOPE_FUNC_CALLOC,
	MEMSCOPE_FUNC_REALLOC, /* a realloc is delivered as FREE (old block) then MALLOC (new block)
				*/
	MEMSCOPE_FUNC_MEMALIGN,
	MEMSCOPE_FUNC_POSIX_MEMALIGN,
	MEMSCOPE_FUNC_ALIGNED_ALLOC,
	MEMSCOPE_FUNC_VALLOC,
	MEMSCOPE_FUNC_PVALLOC,
	MEMSCOPE_FUNC_FREE,
	MEMSCOPE_FUNC_MMAP,
	MEMSCOPE_FUNC_MUNMAP,
	MEMSCOPE_FUNC_NEW,    /* C++ operator new, new[] and their nothrow and aligned forms */
	MEMSCOPE_FUNC_DELETE, /* C++ operator delete, delete[] and their sized and aligned forms */
	MEMSCOPE_FUNC_COUNT_
};

/* pid/tid value meaning "N/A". */
#define MEMSCOPE_ID_NONE UINT64_MAX
/* device values besides NPU ordinals >= 0 */
#define MEMSCOPE_DEVICE_NONE (-1) /* "N/A" (the reference's 9999) */
#define MEMSCOPE_DEVICE_HOST (-2) /* "cpu" (10000); legacy "host" */

/* event flags */
enum memscope_event_flag {
	MEMSCOPE_EV_PTR = 1u << 0,	/* ptr is set (else the Ptr column is N/A) */
	MEMSCOPE_EV_SIZE = 1u << 1,	/* size parsed from the `size` attr */
	MEMSCOPE_EV_ALLOC_ID = 1u << 2, /* alloc_id parsed from `allocation_id` */
	MEMSCOPE_EV_TOTAL = 1u << 3,	/* total parsed from `total` */
	MEMSCOPE_EV_USED = 1u << 4,	/* used parsed from `used` */
	MEMSCOPE_EV_SHADOW = 1u << 5, /* `shadow:true`: synthetic event written by the reference */
	MEMSCOPE_EV_ATTR = 1u << 6,   /* the Attr field was present as {...} (attrs may be 0) */
	MEMSCOPE_EV_ATTR_RAW = 1u << 7, /* Attr was not {k:v,...}: attrs[0] holds it whole, key 0 */
	MEMSCOPE_EV_NAME_QUOTED =
		1u << 8, /* Name was written quoted (the reference quotes MSTX names) */
	MEMSCOPE_EV_REALLOC = 1u << 9, /* half of a realloc (see MEMSCOPE_FUNC_REALLOC) */
};

/* One Attr entry, in source order; unknown keys are kept too. */
struct memscope_attr {
	uint32_t key;	  /* string id of the key (0 for a raw, unparsed Attr) */
	uint32_t val_len; /* value length in bytes */
	const char *val;  /* value text, not NUL-terminated; borrowed (see memscope_event) */
};

/*
 * One event. Readers hand events to a callback; the event and everything it points to (attrs and
 * their values) are borrowed and valid only during that callback. String and stack ids refer to
 * the memscope_strtab the reader was given and stay valid as long as that table.
 */
struct memscope_event {
	uint64_t id;	   /* the dump's ID column (unique per process, not per file) */
	uint64_t ts_ns;	   /* nanoseconds since the Unix epoch (legacy microseconds are scaled) */
	uint64_t pid, tid; /* MEMSCOPE_ID_NONE for N/A */
	uint64_t ptr;	   /* with MEMSCOPE_EV_PTR */
	uint64_t alloc_id; /* with MEMSCOPE_EV_ALLOC_ID: block serial, unique per process */
	int64_t size;	   /* with MEMSCOPE_EV_SIZE: bytes (legacy FREE rows: negative) */
	int64_t total;	   /* with MEMSCOPE_EV_TOTAL: pool reserved bytes */
	int64_t used;	   /* with MEMSCOPE_EV_USED: pool allocated bytes after the event */
	int32_t device;	   /* NPU ordinal, MEMSCOPE_DEVICE_NONE or MEMSCOPE_DEVICE_HOST */
	uint16_t kind;	   /* enum memscope_kind */
	uint16_t subtype;  /* enum memscope_subtype */
	uint16_t pool; /* pool subtype: = subtype for MALLOC/FREE, from `type` for ACCESS, else 0 */
	uint16_t func; /* enum memscope_func, host shim events only */
	uint32_t flags;	    /* enum memscope_event_flag */
	uint32_t kind_text; /* string id of the Event text when kind is UNKNOWN, else 0 */
	uint32_t
		subtype_text; /* string id of the Event Type text when subtype is UNKNOWN, else 0 */
	uint32_t name;	      /* string id of Name ("N/A" is MEMSCOPE_STR_NA) */
	uint32_t stack_py;    /* stack id of Call Stack(Python), 0 = empty field */
	uint32_t stack_c;     /* stack id of Call Stack(C), 0 = empty field */
	uint32_t n_attrs;
	const struct memscope_attr *attrs;
	uint32_t src;  /* input index given in memscope_read_opts */
	uint32_t file; /* when the input is a folder of files (a profiler output), string id of
			  the file the row is in, its path as the input's name and the folders
			  below it ("x_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv");
			  0: the input itself (memscope_event_file) */
	uint64_t line; /* first line of the row (CSV) or record number from 1 (capture), in the
			  file */
};

/* Canonical dump text of a kind / subtype ("MALLOC", "PTA", ...); NULL for UNKNOWN or out of range.
 */
const char *memscope_kind_name(unsigned kind);
const char *memscope_subtype_name(unsigned subtype);
/* Name of a host function ("realloc"); NULL for NONE or out of range. */
const char *memscope_func_name(unsigned func);

/* Map dump text to a kind / subtype; UNKNOWN (0) when the text is not one of ours. */
unsigned memscope_kind_parse(const char *s, size_t len);
unsigned memscope_subtype_parse(const char *s, size_t len);
unsigned memscope_func_parse(const char *s, size_t len);

/* True for the pool subtypes (PTA ... GE). */
int memscope_subtype_is_pool(unsigned subtype);

/* The Device Id column's text of a device: "0", "cpu" or "N/A". Returns buf or a constant. */
#define MEMSCOPE_DEVICE_TEXT_MAX 12
const char *memscope_device_text(int32_t device, char buf[MEMSCOPE_DEVICE_TEXT_MAX]);

/*
 * The op a MALLOC names as the one that allocated its block: its Name (the Ascend profiler's
 * operator_memory owner, "aten::add"); 0 when it names none (msMemScope writes N/A there), and
 * for every other kind. Analyses that weigh blocks by op take it before the thread's open ops.
 */
uint32_t memscope_event_op(const struct memscope_event *ev);

struct memscope_strtab;

/*
 * The name of the file a location (an event's, a block's: src, file, line) is in, for messages
 * and reports: file's text in st when file is set (memscope_event.file), else input, the name of
 * input src as given. Borrowed from st or input; input when st does not hold file.
 */
const char *memscope_event_file(const struct memscope_strtab *st, uint32_t file, const char *input);

/* First attr with key id `key`, or NULL. */
const struct memscope_attr *memscope_event_attr(const struct memscope_event *ev, uint32_t key);

#endif
