/* Unit tests of the dump CSV reader and writer: layouts, Attr and stack parsing, errors with
 * positions. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define HDR                                                                                        \
	"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"          \
	"Call Stack(Python),Call Stack(C)\n"

static const struct memscope_event *ev_at(const struct tread *t, size_t i)
{
	const struct memscope_event *ev = memscope_evbuf_get(t->evs, i);

	ck_assert_ptr_nonnull(ev);
	return ev;
}

static const char *attr_text(
	const struct tread *t, const struct memscope_event *ev, const char *key, char *buf)
{
	uint32_t i;

	for (i = 0; i < ev->n_attrs; i++)
		if (strcmp(tstr(t, ev->attrs[i].key), key) == 0) {
			memcpy(buf, ev->attrs[i].val, ev->attrs[i].val_len);
			buf[ev->attrs[i].val_len] = '\0';
			return buf;
		}
	return NULL;
}

static int read_str(struct tread *t, const char *text, int lenient)
{
	struct memscope_read_opts o = { 0 };

	o.lenient = lenient;
	return tread_mem(t, text, strlen(text), &o);
}

START_TEST(current_layout_fields)
{
	struct tread t;
	const struct memscope_event *ev;
	char buf[64];

	ck_assert_int_eq(tread_file(&t, testdata("baseline.csv"), NULL), 0);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 121);
	ck_assert_int_eq(t.stats.layout, MEMSCOPE_LAYOUT_CURRENT);
	ev = ev_at(&t, 0);
	ck_assert_uint_eq(ev->id, 2);
	ck_assert_uint_eq(ev->kind, MEMSCOPE_KIND_OP_LAUNCH);
	ck_assert_uint_eq(ev->subtype, MEMSCOPE_SUB_ATEN_START);
	ck_assert_str_eq(tstr(&t, ev->name), "torch._ops.aten.t.default");
	ck_assert(ev->ts_ns == 1764753083997498270ull);
	ck_assert_uint_eq(ev->pid, 3101864);
	ck_assert_int_eq(ev->device, 0);
	ck_assert(!(ev->flags & (MEMSCOPE_EV_PTR | MEMSCOPE_EV_ATTR)));
	ck_assert_uint_eq(ev->line, 2);
	ev = ev_at(&t, 5); /* line 7: MALLOC PTA */
	ck_assert_uint_eq(ev->kind, MEMSCOPE_KIND_MALLOC);
	ck_assert_uint_eq(ev->pool, MEMSCOPE_SUB_PTA);
	ck_assert_uint_eq(ev->ptr, 0x12c041400000ull);
	ck_assert_uint_eq(ev->alloc_id, 4);
	ck_assert_int_eq(ev->size, 16778240);
	ck_assert_int_eq(ev->total, 20971520);
	ck_assert_int_eq(ev->used, 16780288);
	ck_assert_uint_eq(ev->n_attrs, 5);
	ck_assert_str_eq(attr_text(&t, ev, "addr", buf), "0x000012c041400000");
	ev = ev_at(&t, 119); /* SYSTEM START_TRACE with device N/A */
	ck_assert_uint_eq(ev->subtype, MEMSCOPE_SUB_START_TRACE);
	ck_assert_int_eq(ev->device, MEMSCOPE_DEVICE_NONE);
	tread_free(&t);
}
END_TEST

START_TEST(legacy_layout_is_normalised)
{
	struct tread t;
	const struct memscope_event *ev;
	size_t i, n_host = 0, n_free_na = 0, n_mstx = 0;

	ck_assert_int_eq(tread_file(&t, testdata("memscope_dump_20250428113810.csv"), NULL), 0);
	ck_assert_int_eq(t.stats.layout, MEMSCOPE_LAYOUT_LEGACY);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 330);
	ev = ev_at(&t, 0);
	ck_assert_uint_eq(ev->subtype, MEMSCOPE_SUB_ACL_INIT); /* "acl init" */
	ck_assert(ev->ts_ns == 1746006014162153000ull);	       /* µs scaled to ns */
	ev = ev_at(&t, 1);
	ck_assert_uint_eq(ev->ptr, 20615843020800ull); /* decimal Ptr */
	for (i = 0; i < memscope_evbuf_count(t.evs); i++) {
		ev = ev_at(&t, i);
		n_host += ev->device == MEMSCOPE_DEVICE_HOST;
		n_free_na += ev->kind == MEMSCOPE_KIND_FREE && ev->subtype == MEMSCOPE_SUB_HAL &&
			     ev->device == MEMSCOPE_DEVICE_NONE;
		if (ev->kind == MEMSCOPE_KIND_MSTX && ev->subtype == MEMSCOPE_SUB_MARK) {
			n_mstx++;
			ck_assert_str_eq(tstr(&t, ev->name),
				"[mstx]: mstxMarkA :------training start----- ");
		}
		if (ev->kind == MEMSCOPE_KIND_FREE && ev->subtype == MEMSCOPE_SUB_PTA)
			ck_assert_int_lt(ev->size, 0); /* legacy FREE sizes are negative */
	}
	ck_assert_uint_gt(n_host, 0);
	ck_assert_uint_eq(n_free_na, 9);
	ck_assert_uint_eq(n_mstx, 2);
	tread_free(&t);
}
END_TEST

static const char attrs_csv[] =
	HDR "1,ACCESS,READ,torch._ops.aten.add.Tensor,5,1,1,0,0x0000000000000010,"
	    "\"{allocation_id:3,addr:0x0000000000000010,size:64,type:PTA,"
	    "dtype:torch.float32,shape:torch.Size([2, 3])}\",,\n"
	    "2,ACCESS,WRITE,AddOp,6,1,1,0,0x0000000000000010,"
	    "\"{allocation_id:3,addr:0x0000000000000010,size:64,type:ATB,dtype:f16,format:nd,"
	    "shape:[2,3,]}\",,\n"
	    "3,MALLOC,PTA,N/A,4,1,1,0,0x0000000000000010,\"{allocation_id:3,addr:"
	    "0x0000000000000010,size:64,total:128,used:64,inefficient_type:early_allocation,"
	    "late_deallocation}\",,\n"
	    "4,SNAPSHOT,SNAPSHOT,Memory Snapshot,7,1,1,0,N/A,\"not {braced}\",,\n"
	    "5,SYSTEM,STOP_TRACE,N/A,8,1,1,N/A,N/A,\"{}\",,\n";

START_TEST(attr_values_keep_commas_and_brackets)
{
	struct tread t;
	const struct memscope_event *ev;
	char buf[128];

	ck_assert_int_eq(read_str(&t, attrs_csv, 0), 0);
	ev = ev_at(&t, 0);
	ck_assert_str_eq(attr_text(&t, ev, "shape", buf), "torch.Size([2, 3])");
	ck_assert_uint_eq(ev->pool, MEMSCOPE_SUB_PTA);
	ck_assert_uint_eq(ev->alloc_id, 3);
	ev = ev_at(&t, 1);
	ck_assert_str_eq(attr_text(&t, ev, "shape", buf), "[2,3,]");
	ck_assert_uint_eq(ev->pool, MEMSCOPE_SUB_ATB);
	ev = ev_at(&t, 2);
	ck_assert_str_eq(
		attr_text(&t, ev, "inefficient_type", buf), "early_allocation,late_deallocation");
	ev = ev_at(&t, 3);
	ck_assert(ev->flags & MEMSCOPE_EV_ATTR_RAW);
	ck_assert_uint_eq(ev->n_attrs, 1);
	ev = ev_at(&t, 4);
	ck_assert(ev->flags & MEMSCOPE_EV_ATTR);
	ck_assert_uint_eq(ev->n_attrs, 0);
	/* and all of it is written back as it was read */
	size_t len;
	char *csv = tread_csv(&t, &len);

	ck_assert_str_eq(csv, attrs_csv);
	free(csv);
	tread_free(&t);
}
END_TEST

START_TEST(crlf_stacks_bom_match_the_lf_twin)
{
	struct tread a, b;
	size_t i, n, nf;
	int with_stacks = 0;

	ck_assert_int_eq(tread_file(&a, testdata("stacks_crlf.csv"), NULL), 0);
	ck_assert_int_eq(tread_file(&b, testdata("stacks_crlf_twin.csv"), NULL), 0);
	n = memscope_evbuf_count(b.evs);
	ck_assert_uint_eq(n, 12);
	ck_assert_uint_eq(memscope_evbuf_count(a.evs), n);
	for (i = 0; i < n; i++) {
		struct memscope_event x = *ev_at(&a, i), y = *ev_at(&b, i);
		uint32_t k;

		if (x.stack_py) {
			const uint32_t *f = memscope_strtab_stack(a.st, x.stack_py, &nf);

			with_stacks++;
			ck_assert_uint_eq(
				nf, 3); /* two frames and the empty one after the last \n */
			ck_assert_str_eq(tstr(&a, f[0]), "/usr/lib/python3/train.py(42): step");
			ck_assert_str_eq(tstr(&a, f[2]), "");
			f = memscope_strtab_stack(a.st, x.stack_c, &nf);
			ck_assert_uint_eq(nf, 2);
			ck_assert_str_eq(
				tstr(&a, f[1]), "libc.so.6(__libc_start_main+0xf3) [0x7f01]");
		}
		ck_assert_uint_eq(y.stack_py, 0);
		ck_assert_uint_eq(x.id, y.id);
		ck_assert_uint_eq(x.kind, y.kind);
		ck_assert_uint_eq(x.subtype, y.subtype);
		ck_assert_str_eq(tstr(&a, x.name), tstr(&b, y.name));
		ck_assert(x.ts_ns == y.ts_ns);
		ck_assert_uint_eq(x.pid, y.pid);
		ck_assert_uint_eq(x.tid, y.tid);
		ck_assert_int_eq(x.device, y.device);
		ck_assert_uint_eq(x.ptr, y.ptr);
		ck_assert_uint_eq(x.flags, y.flags);
		ck_assert_int_eq(x.size, y.size);
		ck_assert_uint_eq(x.n_attrs, y.n_attrs);
		for (k = 0; k < x.n_attrs; k++) {
			ck_assert_str_eq(tstr(&a, x.attrs[k].key), tstr(&b, y.attrs[k].key));
			ck_assert_uint_eq(x.attrs[k].val_len, y.attrs[k].val_len);
			ck_assert_int_eq(
				memcmp(x.attrs[k].val, y.attrs[k].val, x.attrs[k].val_len), 0);
		}
	}
	ck_assert_int_eq(with_stacks, 4);
	ck_assert_str_eq(tstr(&a, ev_at(&a, n - 1)->name), "epoch 1, \"warm\" start");
	/* lines are counted across multi-line fields: 4 stack rows of 4 lines, the last row at 25
	 */
	ck_assert_uint_eq(ev_at(&a, n - 1)->line, 25);
	tread_free(&a);
	tread_free(&b);
}
END_TEST

START_TEST(bad_input_names_file_line_and_reason)
{
	struct tread t;

	ck_assert_int_eq(read_str(&t, "", 0), MEMSCOPE_E_INVALID);
	ck_assert_str_eq(t.err.msg, "empty file");
	tread_free(&t);

	ck_assert_int_eq(read_str(&t, HDR, 0), 0); /* header only: no events, fine */
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 0);
	tread_free(&t);

	/* text of another format: no reader takes it, and the error says what an input may be */
	ck_assert_int_eq(read_str(&t, "a,b,c\n1,2,3\n", 0), MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(t.err.line, 0);
	/* every reader in the registry's order: binary formats first, the dump CSV last */
	ck_assert_ptr_eq(strstr(t.err.msg, "not a capture file, a database, "), t.err.msg);
	ck_assert_str_eq(t.err.msg + strlen(t.err.msg) - strlen(" or a memscope_dump CSV"),
		" or a memscope_dump CSV");
	tread_free(&t);

	/* a dump's header short of a column: the dump reader names it */
	ck_assert_int_eq(
		read_str(&t, "\"Event\",Event Type,Name,Ptr\n1,2,3,4\n", 0), MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(t.err.line, 1);
	ck_assert_ptr_nonnull(strstr(t.err.msg, "header has no 'ID' column"));
	tread_free(&t);

	ck_assert_int_eq(
		read_str(&t,
			HDR
			"1,SYSTEM,STOP_TRACE,N/A,8,1,1,N/A,N/A,,,\n2,MALLOC,PTA,N/A,9,1,1,0,0x1,"
			"\"{size:12x}\",,\n",
			0),
		MEMSCOPE_E_INVALID);
	ck_assert_uint_eq(t.err.line, 3);
	ck_assert_str_eq(t.err.msg, "invalid size \"12x\"");
	ck_assert_str_eq(t.err.file, "mem.csv");
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 1); /* the good row before it came through */
	tread_free(&t);

	ck_assert_int_eq(read_str(&t, HDR "1,SYSTEM,STOP_TRACE,N/A,8,1\n", 0), MEMSCOPE_E_INVALID);
	ck_assert_str_eq(t.err.msg, "expected 12 fields, found 6");
	tread_free(&t);

	ck_assert_int_eq(read_str(&t, HDR "x1,SYSTEM,STOP_TRACE,N/A,8,1,1,N/A,N/A,,,\n", 0),
		MEMSCOPE_E_INVALID);
	ck_assert_str_eq(t.err.msg, "invalid ID \"x1\"");
	tread_free(&t);

	ck_assert_int_eq(read_str(&t, HDR "1,SYSTEM,STOP_TRACE,N/A,8,1,1,gpu,N/A,,,\n", 0),
		MEMSCOPE_E_INVALID);
	ck_assert_str_eq(t.err.msg, "invalid Device Id \"gpu\"");
	tread_free(&t);

	ck_assert_int_eq(read_str(&t, HDR "1,MSTX,Mark,\"never closed,8,1,1,0,N/A,,,\n", 0),
		MEMSCOPE_E_TRUNCATED);
	tread_free(&t);

	ck_assert_int_eq(read_str(&t, "ID,Event\0\1\2", 0), MEMSCOPE_E_INVALID);
	tread_free(&t);

	ck_assert_int_eq(tread_file(&t, "/nonexistent/dump.csv", NULL), MEMSCOPE_E_IO);
	ck_assert_ptr_nonnull(strstr(t.err.msg, "cannot open"));
	tread_free(&t);
}
END_TEST

START_TEST(lenient_mode_skips_and_counts)
{
	struct tread t;

	ck_assert_int_eq(read_str(&t,
				 HDR "1,SYSTEM,STOP_TRACE,N/A,8,1,1,N/A,N/A,,,\n"
				     "2,MALLOC,PTA,N/A,9,1,1,0,0x1,\"{size:12x}\",,\n"
				     "3,SYSTEM,STOP_TRACE,N/A,8,1\n"
				     "4,SYSTEM,START_TRACE,N/A,10,1,1,N/A,N/A,,,\n",
				 1),
		0);
	ck_assert_uint_eq(memscope_evbuf_count(t.evs), 2);
	ck_assert_uint_eq(t.stats.n_skipped, 2);
	ck_assert_uint_eq(t.stats.first_skip.line, 3);
	ck_assert_str_eq(t.stats.first_skip.msg, "invalid size \"12x\"");
	tread_free(&t);
}
END_TEST

START_TEST(unknown_kinds_and_columns_are_kept_and_counted)
{
	struct tread t;
	size_t len;
	char *csv;

	ck_assert_int_eq(read_str(&t,
				 "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread "
				 "Id,Device Id,Ptr,Attr,Extra\n"
				 "1,CLEAN_UP,PROC_EXIT,N/A,8,N/A,N/A,N/A,N/A,,x\n",
				 0),
		0);
	ck_assert_uint_eq(t.stats.n_unknown_kind, 2);
	ck_assert_uint_eq(t.stats.n_ignored_columns, 1);
	csv = tread_csv(&t, &len);
	ck_assert_str_eq(csv, HDR "1,CLEAN_UP,PROC_EXIT,N/A,8,N/A,N/A,N/A,N/A,,,\n");
	free(csv);
	tread_free(&t);
}
END_TEST

START_TEST(time_unit_option_overrides_detection)
{
	struct tread t;
	struct memscope_read_opts o = { 0 };
	const char *text = HDR "1,SYSTEM,STOP_TRACE,N/A,1746006014162153,1,1,N/A,N/A,,,\n";

	o.time_unit = MEMSCOPE_TIME_NS;
	ck_assert_int_eq(tread_mem(&t, text, strlen(text), &o), 0);
	ck_assert(ev_at(&t, 0)->ts_ns == 1746006014162153ull);
	tread_free(&t);
	o.time_unit = MEMSCOPE_TIME_AUTO;
	ck_assert_int_eq(tread_mem(&t, text, strlen(text), &o), 0);
	ck_assert(ev_at(&t, 0)->ts_ns == 1746006014162153000ull);
	tread_free(&t);
	/* small synthetic timestamps stay nanoseconds */
	ck_assert_int_eq(read_str(&t, HDR "1,SYSTEM,STOP_TRACE,N/A,100,1,1,N/A,N/A,,,\n", 0), 0);
	ck_assert(ev_at(&t, 0)->ts_ns == 100);
	tread_free(&t);
}
END_TEST

static int stop_after_two(void *ctx, const struct memscope_event *ev)
{
	(void)ev;
	return ++*(int *)ctx == 2 ? 1 : 0;
}

START_TEST(callback_can_stop_the_read)
{
	struct memscope_strtab *st = memscope_strtab_new();
	struct memscope_source *src;
	struct memscope_error err;
	int n = 0;

	ck_assert_int_eq(memscope_source_open(&src, testdata("baseline.csv"), st, NULL, &err), 0);
	ck_assert_int_eq(memscope_source_format(src), MEMSCOPE_FORMAT_DUMP_CSV);
	ck_assert_int_eq(memscope_source_read(src, stop_after_two, &n, &err), MEMSCOPE_E_STOPPED);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(memscope_source_read(src, stop_after_two, &n, &err), MEMSCOPE_E_ARG);
	memscope_source_close(src);
	memscope_strtab_free(st);
}
END_TEST

START_TEST(writer_reproduces_reference_files)
{
	static const char *const files[] = { "baseline.csv", "leaks.csv" };
	size_t i, len, orig_len;

	for (i = 0; i < 2; i++) {
		struct tread t;
		char *orig = slurp(testdata(files[i]), &orig_len), *csv;

		ck_assert_int_eq(tread_file(&t, testdata(files[i]), NULL), 0);
		csv = tread_csv(&t, &len);
		ck_assert_uint_eq(len, orig_len);
		ck_assert_int_eq(memcmp(csv, orig, len), 0);
		free(csv);
		free(orig);
		tread_free(&t);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dump_csv");
	TCase *tc = tcase_create("read");

	tcase_add_test(tc, current_layout_fields);
	tcase_add_test(tc, legacy_layout_is_normalised);
	tcase_add_test(tc, attr_values_keep_commas_and_brackets);
	tcase_add_test(tc, crlf_stacks_bom_match_the_lf_twin);
	tcase_add_test(tc, bad_input_names_file_line_and_reason);
	tcase_add_test(tc, lenient_mode_skips_and_counts);
	tcase_add_test(tc, unknown_kinds_and_columns_are_kept_and_counted);
	tcase_add_test(tc, time_unit_option_overrides_detection);
	tcase_add_test(tc, callback_can_stop_the_read);
	tcase_add_test(tc, writer_reproduces_reference_files);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
