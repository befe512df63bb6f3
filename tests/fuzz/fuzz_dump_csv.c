/* libFuzzer harness of the dump CSV reader (strict and lenient), with the capture round-trip
 * oracle. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 8 && memcmp(data, "\x89MSCAP\r\n", 8) == 0)
		return 0; /* the capture harness covers those */
	fuzz_both_modes(data, size);
	return 0;
}
