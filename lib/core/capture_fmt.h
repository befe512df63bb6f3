/* Constants of our capture format, shared by its writer and reader (normative text:
 * formats/capture.md). */
#ifndef MEMSCOPE_CAPTURE_FMT_H
#define MEMSCOPE_CAPTURE_FMT_H

#include <stdint.h>

#include "memscope/capture.h"
#include "memscope/event.h"

#define CAP_MAGIC "\x89MSCAP\r\n"
#define CAP_VERSION_MAJOR 1
#define CAP_VERSION_MINOR 3
#define CAP_HEADER_LEN 16
#define CAP_HEADER_MAX 4096
#define CAP_RECORD_MAX (64u << 20) /* longest payload a reader accepts */
#define CAP_ATTRS_MAX 4096
#define CAP_FRAMES_MAX (1u << 20)
#define CAP_SLOTS_MAX (1u << 20) /* thread slots a file may define (THREAD records) */

enum cap_record {
	CAP_END = 0x01,
	CAP_STRING = 0x02,
	CAP_STACK = 0x03,
	CAP_META = 0x04,
	CAP_STOPPED = 0x05, /* 1.2: END of a recording stopped early */
	CAP_EVENT = 0x10,
	CAP_CONTEXT = 0x11,
	CAP_HOST_ALLOC = 0x12,
	CAP_HOST_FREE = 0x13,
	CAP_HOST_ALLOC_FN = 0x14,
	CAP_HOST_FREE_FN = 0x15,
	CAP_THREAD = 0x16, /* 1.1 */
	CAP_HOST_T = 0x17, /* 1.1 */
};

/* causes of a STOPPED record */
enum cap_stop {
	CAP_STOP_WRITE = MEMSCOPE_CAPTURE_STOP_WRITE, /* a write error of the recorder */
	CAP_STOP_INPUT = MEMSCOPE_CAPTURE_STOP_INPUT, /* converted from an incomplete input */
};

/* op of a HOST_T record (its first varint is slot << 2 | op): the compact host record it stands for
 */
enum cap_host_op {
	CAP_OP_ALLOC = 0,
	CAP_OP_FREE = 1,
	CAP_OP_ALLOC_FN = 2,
	CAP_OP_FREE_FN = 3,
};

/* field bits of an EVENT record */
enum cap_field {
	CAP_F_ID = 1u << 0,
	CAP_F_PID = 1u << 1,
	CAP_F_TID = 1u << 2,
	CAP_F_DEVICE = 1u << 3,
	CAP_F_PTR = 1u << 4,
	CAP_F_NAME = 1u << 5,
	CAP_F_STACK_PY = 1u << 6,
	CAP_F_STACK_C = 1u << 7,
	CAP_F_ATTR = 1u << 8,
	CAP_F_ATTR_RAW = 1u << 9,
	CAP_F_NAME_QUOTED = 1u << 10,
	CAP_F_FUNC = 1u << 11,
	CAP_F_TYPED = 1u << 12, /* typed fields of an event that has no Attr text */
	CAP_F_KNOWN = (1u << 13) - 1,
};

/* bits of the TYPED field */
enum cap_typed {
	CAP_TY_ALLOC_ID = 1u << 0,
	CAP_TY_SIZE = 1u << 1,
	CAP_TY_TOTAL = 1u << 2,
	CAP_TY_USED = 1u << 3,
};

/* value tags of an attr */
enum cap_tag {
	CAP_T_INLINE = 0,
	CAP_T_REF = 1,
	CAP_T_UINT = 2,
	CAP_T_NEG = 3,
	CAP_T_PTR_REL = 4,
	CAP_T_DELTA = 5,
	CAP_T_EMPTY = 6,
};

/* device codes */
static inline uint64_t cap_device_code(int32_t device)
{
	return device == MEMSCOPE_DEVICE_NONE	? 0
	       : device == MEMSCOPE_DEVICE_HOST ? 1
						: (uint64_t)device + 2;
}

#endif
