/* libFuzzer harness of the capture reader, strict and lenient, with the round-trip oracle. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t header[16] = { 0x89, 'M', 'S', 'C', 'A', 'P', '\r', '\n', 1, 0, 0, 0,
		16, 0, 0, 0 };
	uint8_t *buf;
	int lenient;

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
	for (lenient = 0; lenient <= 1; lenient++) {
		char *csv = NULL, *cap = NULL;
		size_t csv_len = 0, cap_len = 0;
		uint64_t n = 0;

		fuzz_read(buf, size, lenient, &csv, &csv_len, &cap, &cap_len, &n);
		fuzz_check_capture_roundtrip(csv, csv_len, cap, cap_len, n);
		free(csv);
		free(cap);
	}
	free(buf);
	return 0;
}
