/* libFuzzer harness of the dump CSV reader (strict and lenient), with the capture round-trip
 * oracle. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int lenient;

	if (size >= 8 && memcmp(data, "\x89MSCAP\r\n", 8) == 0)
		return 0; /* the capture harness covers those */
	for (lenient = 0; lenient <= 1; lenient++) {
		char *csv = NULL, *cap = NULL;
		size_t csv_len = 0, cap_len = 0;
		uint64_t n = 0;

		fuzz_read(data, size, lenient, &csv, &csv_len, &cap, &cap_len, &n);
		fuzz_check_capture_roundtrip(csv, csv_len, cap, cap_len, n);
		free(csv);
		free(cap);
	}
	return 0;
}
