/* The reader registry: every input format in the order its sniffer is asked, and their names. */
#include <stdio.h>
#include <string.h>

#include "reader.h"

/* Binary formats by their magic first, then the text formats by their header lines. */
extern const struct reader capture_reader, db_reader, python_trace_reader, dump_csv_reader;

static const struct reader *const readers[] = {
	&capture_reader,
	&db_reader,
	&python_trace_reader,
	&dump_csv_reader,
};
#define N_READERS (sizeof(readers) / sizeof(readers[0]))

int sniff_text(const unsigned char *p, size_t n)
{
	return !memchr(p, '\0', n < 4096 ? n : 4096);
}

int reader_detect(const struct reader **out, const unsigned char *p, size_t n, int eof,
	const char *name, struct memscope_error *err)
{
	char expected[256];
	size_t i, len = 0;
	int rc;

	for (i = 0; i < N_READERS; i++) {
		rc = readers[i]->sniff(p, n, eof, name, err);
		if (rc < 0)
			return rc;
		if (rc) {
			*out = readers[i];
			return 0;
		}
	}
	for (i = 0; i < N_READERS && len < sizeof(expected); i++)
		len += (size_t)snprintf(expected + len, sizeof(expected) - len, "%s%s",
			!i		    ? ""
			: i + 1 < N_READERS ? ", "
					    : " or ",
			readers[i]->what);
	return memscope_error_set(err, MEMSCOPE_E_INVALID, name, 0, "not %s%s", expected,
		sniff_text(p, n) ? "" : " (binary data)");
}

const struct reader *reader_of(enum memscope_format f)
{
	size_t i;

	for (i = 0; i < N_READERS; i++)
		if (readers[i]->format == f)
			return readers[i];
	return NULL;
}

const char *memscope_format_name(enum memscope_format f)
{
	const struct reader *r = reader_of(f);

	return r ? r->name : "unknown";
}
