/* The reader registry: every input format in the order its sniffer is asked, and their names. */
#include <stdio.h>
#include <string.h>

#include "reader.h"

/* Binary formats by their magic first, then the text formats by their header lines. */
extern const struct reader ms__capture_reader, ms__db_reader, ms__python_trace_reader,
	ms__dump_csv_reader, ms__msprof_csv_reader, ms__msprof_json_reader, ms__prof_dir_reader,
	ms__nsys_reader, ms__torch_snapshot_reader, ms__kineto_reader;

static const struct reader *const readers[] = {
	&ms__capture_reader,
	&ms__db_reader,
	&ms__torch_snapshot_reader,
	&ms__python_trace_reader,
	&ms__msprof_json_reader,
	&ms__kineto_reader,
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

const char *memscope_format_without_accesses(enum memscope_format f)
{
	const struct reader *r = ms__reader_of(f);

	return r ? r->without_accesses : NULL;
}

enum reader_end ms__reader_end(enum memscope_format f)
{
	const struct reader *r = ms__reader_of(f);

	return r ? r->end : READER_END_EXIT;
}

/* Whether name[0..len) ends in one of r's endings. */
static int has_ending(const struct reader *r, const char *name, size_t len)
{
	size_t i, sl;

	for (i = 0; r->endings && r->endings[i]; i++)
		if ((sl = strlen(r->endings[i])) <= len &&
			memcmp(name + len - sl, r->endings[i], sl) == 0)
			return 1;
	return 0;
}

int ms__reader_walk_by_name(const char *name, size_t len)
{
	size_t i, pl;
	int content = 0;

	for (i = 0; i < N_READERS; i++) {
		const struct reader *r = readers[i];

		if (!has_ending(r, name, len))
			continue;
		if (r->prefix && (pl = strlen(r->prefix)) <= len &&
			memcmp(name, r->prefix, pl) == 0)
			return (int)r->walk;
		content = 1;
	}
	return content ? -1 : READER_WALK_SKIP;
}

int ms__reader_walk_by_content(enum memscope_format f, const char *path)
{
	const struct reader *r = ms__reader_of(f);
	int rc;

	if (!r || r->walk == READER_WALK_SKIP || !r->holds_events)
		return r ? (int)r->walk : READER_WALK_SKIP;
	rc = r->holds_events(path);
	return rc < 0 ? rc : rc ? (int)r->walk : READER_WALK_SKIP;
}

char *ms__reader_walk_inputs(char *buf, size_t size)
{
	size_t len = 0;
	int f;

	if (size)
		buf[0] = '\0';
	/* the enum's order, which is the order the formats came in (a new one last) */
	for (f = MEMSCOPE_FORMAT_UNKNOWN + 1; len < size; f++) {
		const struct reader *r = ms__reader_of((enum memscope_format)f);

		if (!r)
			break;
		if (r->inputs)
			len += (size_t)snprintf(
				buf + len, size - len, "%s%s", len ? ", " : "", r->inputs);
	}
	return buf;
}
