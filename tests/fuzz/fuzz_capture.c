/* libFuzzer harness of the capture reader: the input is taken as a capture file body after a valid header. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t header[16] = { 0x89, 'M', 'S', 'C', 'A', 'P', '\r', '\n', 1, 0, 0, 0,
		16, 0, 0, 0 };
	uint8_t *buf;
	char *csv = NULL, *cap = NULL;
	size_t csv_len = 0, cap_len = 0;
	uint64_t n = 0;

	/* inputs that already start with the magic are used as they are (seed files) */
	if (size >= 8 && memcmp(data, header, 8) == 0) {
		buf = malloc(size ? size : 1);
		memcpy(buf, data, size);
	} else {
		buf = malloc(size + sizeof(header));
		memcpy(buf, header, sizeof(header));
		memcpy(buf + sizeof(header), data, size);
		size += sizeof(header);
	}
	fuzz_read(buf, size, 0, &csv, &csv_len, &cap, &cap_len, &n);
	fuzz_check_capture_roundtrip(csv, csv_len, cap, cap_len, n);
	free(csv);
	free(cap);
	free(buf);
	return 0;
}
