/*
 * libFuzzer harness of the Ascend profiler folder reader: the input is a folder of up to six
 * files, each a name byte (one of the names below: exports, slices, a compressed twin, a file
 * not read) and a two-byte length, then its bytes. The folder is read strict and lenient; its
 * rules: IDs count from 1, every failure names itself, a block's FREE never precedes its MALLOC
 * in delivery, and a read never stops without a reason.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memscope/memscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[16] = {
	"operator_memory.csv",
	"memory_record.csv",
	"npu_mem_20260101000000.csv",
	"npu_module_mem.csv",
	"static_op_mem.csv",
	"trace_view.json",
	"msprof_slice_0_20260101000000.json",
	"msprof_slice_1_20260101000000.json",
	"operator_memory_slice_0_20260101000000.csv",
	"operator_memory_slice_1_20260101000000.csv",
	"operator_memory_20250101000000.csv",
	"operator_memory.csv.gz",
	"memory_record_20260101000000.csv",
	"npu_module_mem_20260101000000.csv",
	"ge_memory_record.csv",
	"kernel_details.csv",
};

static char dir[64];

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[sizeof(dir) + 256];

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	closedir(d);
}

static void at_exit(void)
{
	remove_dir();
	rmdir(dir);
}

struct check {
	uint64_t n, max_block;
};

static int on_event(void *ctx, const struct memscope_event *ev)
{
	struct check *c = ctx;

	if (ev->id != ++c->n || ev->src != 0)
		abort();
	/* blocks are numbered as their MALLOC (or lone FREE) comes: a FREE never runs ahead */
	if ((ev->kind == MEMSCOPE_KIND_MALLOC || ev->kind == MEMSCOPE_KIND_FREE)) {
		if (!(ev->flags & MEMSCOPE_EV_ALLOC_ID) || (ev->flags & MEMSCOPE_EV_PTR) ||
			ev->alloc_id > c->max_block + 1)
			abort();
		if (ev->alloc_id > c->max_block)
			c->max_block = ev->alloc_id;
	}
	return 0;
}

static void read_dir(int lenient)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src = NULL;
	struct memscope_read_opts opts = { 0 };
	struct memscope_error err;
	struct check c = { 0 };
	int rc;

	if (!st)
		abort();
	opts.lenient = lenient;
	memscope_error_clear(&err);
	rc = memscope_source_open(&src, dir, st, &opts, &err);
	if (!rc && memscope_source_format(src) != MEMSCOPE_FORMAT_PROFILER)
		abort();
	if (!rc)
		rc = memscope_source_read(src, on_event, &c, &err);
	if (rc && (!err.msg[0] || err.code != rc))
		abort();
	if (!rc && memscope_source_stats(src)->n_events != c.n)
		abort();
	memscope_source_close(src);
	memscope_strtab_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t at = 0;
	int files = 0;

	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%.40s/fuzzdirXXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir))
			abort();
		atexit(at_exit);
	}
	remove_dir();
	while (files < 6 && at + 3 <= size) {
		const char *name = names[data[at] & 15];
		size_t len = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
		char path[sizeof(dir) + 64];
		FILE *f;

		at += 3;
		len = len < size - at ? len : size - at;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (!(f = fopen(path, "wb")) || fwrite(data + at, 1, len, f) != len || fclose(f))
			abort();
		at += len;
		files++;
	}
	read_dir(0);
	read_dir(1);
	return 0;
}
