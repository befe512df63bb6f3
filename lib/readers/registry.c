/* The reader registry: every input format in the order its sniffer is asked, and their names. */
#include <stdio.h>
#include <string.h>

#include "reader.h"

/* Binary formats by their magic first, then the text formats by their header lines. */
extern const struct reader capture_reader, db_reader, python_trace_reader, dump_csv_reader,
	msprof_csv_reader, msprof_json_reader, prof_dir_reader, nsys_reader, torch_snapshot_reader;

static const struct reader *const readers[] = {
	&capture_reader,
	&db_reader,
	&torch_snapshot_reader,
	&python_trace_reader,
	&msprof_json_reader,
	&msprof_csv_reader,
	&dump_csv_reader,
	&prof_dir_reader,
	/* no sniffer: a database that db_refine finds is an Nsight Systems export */
	&nsys_reader,
};
#define N_READERS (sizeof(readers) / sizeof(readers[0]))

int sniff_text(const unsigned char *p, size_t n)
{
	return !memchr(p, '\0', n < 4096 ? n : 4096);
}

int reader_detect(const struct reader **out, const unsigned char *p, size_t n, int eof,
	const char *name, struct memscope_error *err)
{
	const struct reader *byte_readers[N_READERS];
	const char *named[N_READERS + 1];
	char expected[400];
	size_t i, k, len = 0, n_byte = 0;
	int rc;

	for (i = 0; i < N_READERS; i++)
		if (readers[i]->sniff) /* not a folder's, chosen by its path */
			byte_readers[n_byte++] = readers[i];
	for (i = 0; i < n_byte; i++) {
		rc = byte_readers[i]->sniff(p, n, eof, name, err);
		if (rc < 0)
			return rc;
		if (rc) {
			*out = byte_readers[i];
			return 0;
		}
	}
	/* every file format of memory events named, an Nsight export (a database db_refine tells)
	 * after databases; not python_trace files: no tool reads them as an input of their own */
	for (i = 0, k = 0; i < n_byte; i++) {
		if (!byte_readers[i]->read)
			continue;
		named[k++] = byte_readers[i]->what;
		if (byte_readers[i]->format == MEMSCOPE_FORMAT_DB)
			named[k++] = nsys_reader.what;
	}
	for (i = 0; i < k && len < sizeof(expected); i++)
		len += (size_t)snprintf(expected + len, sizeof(expected) - len, "%s%s",
			!i	    ? ""
			: i + 1 < k ? ", "
				    : " or ",
			named[i]);
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
