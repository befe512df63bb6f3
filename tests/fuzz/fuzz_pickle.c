/* libFuzzer harness of the PyTorch snapshot reader and its pickle machine (strict and lenient),
 * with the capture round-trip oracle: any bytes are an error naming itself or events that
 * survive a capture round trip, never a crash, a leak or a hang. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* PROTO 2, EMPTY_DICT, MARK: a body goes on as the snapshot dict's items */
	static const uint8_t head[4] = { 0x80, 0x02, '}', '(' };
	uint8_t *buf;

	/* an input that is a pickle already is used as it is */
	if (size >= 2 && data[0] == 0x80) {
		buf = malloc(size);
		memcpy(buf, data, size);
	} else {
		buf = malloc(size + sizeof(head));
		memcpy(buf, head, sizeof(head));
		memcpy(buf + sizeof(head), data, size);
		size += sizeof(head);
	}
	fuzz_both_modes(buf, size);
	free(buf);
	return 0;
}
