/* The reader registry: every input format in the order its sniffer is asked, and their names. */
#include <stdio.h>
#include <string.h>

#include "reader.h"

/* Binary formats by their magic first, then the text formats by their header lines. */
extern const struct reader ms__capture_reader, ms__db_reader, ms__python_trace_reader,
	ms__dump_csv_reader, ms__msprof_csv_reader, ms__msprof_json_reader, ms__prof_dir_reader,
	ms__nsys_reader, ms__torch_snapshot_reader;

static const struct reader *const readers[] = {
	&ms__capture_reader,
	&ms__db_reader,
	&ms__torch_snapshot_reader,
	&ms__python_trace_reader,
	&ms__msprof_json_reader,
	&ms__msprof_csv_reader,
	&ms__dump_csv_reader,
	&ms__prof_dir_reader,
	/* no sniffer: a database that the database reader's refine finds is an Nsight Systems
	 * export */
	&ms__nsys_reader,
};
#define N_READERS (sizeof(readers) / sizeof(readers[0]))

int ms__reader_detect(const struct reader **out, const unsigned char *p, size_t n, int eof,
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
	/* every file format of memory events named, an Nsight export (a database the database
	 * reader's refine tells) after databases; not python_trace files: no tool reads them as an
	 * input of their own */
	for (i = 0, k = 0; i < n_byte; i++) {
		if (!byte_readers[i]->read)
			continue;
		named[k++] = byte_readers[i]->what;
		if (byte_readers[i]->format == MEMSCOPE_FORMAT_DB)
			named[k++] = ms__nsys_reader.what;
	}
	for (i = 0; i < k && len < sizeof(expected); i++)
		len += (size_t)snprintf(expected + len, sizeof(expected) - len, "%s%s",
			!i	    ? ""
			: i + 1 < k ? ", "
				    : " or ",
			named[i]);
	return memscope_error_set(err, MEMSCOPE_E_INVALID, name, 0, "not %s%s", expected,
		ms__sniff_text(p, n) ? "" : " (binary data)");
}

const struct reader *ms__reader_of(enum memscope_format f)
{
	size_t i;

	for (i = 0; i < N_READERS; i++)
		if (readers[i]->format == f)
			return readers[i];
	return NULL;
}

const struct reader *ms__reader_of_folder(void)
{
	size_t i;

	for (i = 0; i < N_READERS; i++)
		if (readers[i]->open_path)
			return readers[i];
	return NULL;
}

const char *memscope_format_name(enum memscope_format f)
{
	const struct reader *r = ms__reader_of(f);

	return r ? r->name : "unknown";
}
