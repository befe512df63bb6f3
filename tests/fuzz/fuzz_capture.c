/* libFuzzer harness of the capture reader, strict and lenient, with the round-trip oracle. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t header[16] = { 0x89, 'M', 'S', 'C', 'A', 'P', '\r', '\n', 1, 0, 0, 0,
		16, 0, 0, 0 };
	uint8_t *buf;

	/* a body gets a valid header in front; an input with the magic is used as it is */
	if (size >= 8 && memcmp(data, header, 8) == 0) {
		buf = malloc(size ? size : 1);
		memcpy(buf, data, size);
	} else {
		buf = malloc(size + sizeof(header));
		memcpy(buf, header, sizeof(header));
		memcpy(buf + sizeof(header), data, size);
		size += sizeof(header);
	}
	fuzz_both_modes(buf, size);
	free(buf);
	return 0;
}
