/* libFuzzer harness of the python_trace reader (strict and lenient): the rows it delivers, written
 * back in the reference's row format, read back to the same rows. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memscope/memscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char header[] = "FuncInfo,StartTime(ns),EndTime(ns),Thread Id,Process Id\n";

struct rows {
	FILE *text; /* the rows as the reference writes them */
	uint64_t n;
};

static void put_time(FILE *f, uint64_t v)
{
	if (v == MEMSCOPE_ID_NONE)
		fputs("N/A", f);
	else
		fprintf(f, "%" PRIu64, v);
}

static int on_row(void *ctx, const struct memscope_trace_row *r)
{
	struct rows *c = ctx;

	if (memchr(r->func, '\n', r->func_len) || r->tid == MEMSCOPE_ID_NONE ||
		r->pid == MEMSCOPE_ID_NONE)
		abort();
	c->n++;
	fwrite(r->func, 1, r->func_len, c->text);
	fputc(',', c->text);
	put_time(c->text, r->start_ns);
	fputc(',', c->text);
	put_time(c->text, r->end_ns);
	fprintf(c->text, ",%" PRIu64 ",%" PRIu64 "\n", r->tid, r->pid);
	return 0;
}

/* Read buf; the rows' text (header first) into *out. Returns the read status. */
static int read_rows(
	const uint8_t *buf, size_t size, int lenient, char **out, size_t *len, uint64_t *n)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_read_opts opts = { 0 };
	struct memscope_source *src = NULL;
	struct memscope_error err;
	struct rows c = { open_memstream(out, len), 0 };
	int rc;

	if (!st || !c.text)
		abort();
	fputs(header, c.text);
	opts.lenient = lenient;
	rc = memscope_source_open_mem(&src, buf, size, "fuzz", st, &opts, &err);
	if (!rc && memscope_source_format(src) != MEMSCOPE_FORMAT_PYTHON_TRACE)
		rc = -100;
	else if (!rc)
		rc = memscope_source_read_trace(src, on_row, &c, &err);
	if (rc && rc != -100 && (!err.msg[0] || err.code != rc))
		abort();
	memscope_source_close(src);
	memscope_strtab_free(st);
	fclose(c.text);
	*n = c.n;
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + sizeof(header));
	int lenient;

	/* a body gets the header in front; an input with one is used as it is */
	if (size >= 9 && memcmp(data, header, 9) == 0) {
		memcpy(buf, data, size);
	} else {
		memcpy(buf, header, sizeof(header) - 1);
		memcpy(buf + sizeof(header) - 1, data, size);
		size += sizeof(header) - 1;
	}
	for (lenient = 0; lenient <= 1; lenient++) {
		char *t1 = NULL, *t2 = NULL;
		size_t l1 = 0, l2 = 0;
		uint64_t n1 = 0, n2 = 0;

		read_rows(buf, size, lenient, &t1, &l1, &n1);
		if (read_rows((const uint8_t *)t1, l1, 0, &t2, &l2, &n2) || n1 != n2 || l1 != l2 ||
			memcmp(t1, t2, l1))
			abort();
		free(t1);
		free(t2);
	}
	free(buf);
	return 0;
}
