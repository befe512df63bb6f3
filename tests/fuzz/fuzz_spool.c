/* libFuzzer harness of memscope-record's spool reader: any bytes as a spool file; a transcoding
 * that succeeds must give a capture file that reads back strictly (one stopped early: refused
 * strictly, read leniently) and survives the round trip. */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "memscope/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memscope_record_stats st;
	struct memscope_error err;
	char path[64], *cap = NULL, *csv = NULL, *cap2 = NULL;
	size_t cap_len = 0, csv_len = 0, cap2_len = 0;
	uint64_t n = 0;
	int fd = memfd_create("spool", MFD_CLOEXEC), rc;
	FILE *out;

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	out = open_memstream(&cap, &cap_len);
	if (!out)
		abort();
	rc = memscope_record_transcode(path, out, NULL, &st, &err);
	fclose(out);
	close(fd);
	if (rc && (!err.msg[0] || err.code != rc))
		abort(); /* every failure names itself */
	if (!rc) {
		/* a recording stopped early reads strictly as that, and whole only leniently */
		if ((st.stopped && fuzz_read((const uint8_t *)cap, cap_len, 0, &csv, &csv_len, NULL,
					   NULL, &n) != MEMSCOPE_E_TRUNCATED))
			abort();
		free(csv);
		csv = NULL;
		csv_len = 0;
		if (fuzz_read((const uint8_t *)cap, cap_len, st.stopped != 0, &csv, &csv_len, &cap2,
			    &cap2_len, &n) ||
			n != st.n_events)
			abort();
		fuzz_check_capture_roundtrip(csv, csv_len, cap2, cap2_len, n);
	}
	free(cap);
	free(csv);
	free(cap2);
	(void)fuzz_both_modes;
	return 0;
}
