/* The leak report as CSV (MEMSCOPE_LEAKS_CSV): one row per finding of the listed groups. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks_report.h"

int ms__lrep_csv(struct leaks_report *r)
{
	size_t n = memscope_leaks_count(r->l), i;

	fputs("kind,input,pid,device,pool,ptr,size,allocation_id,event_id,line,timestamp_ns,"
	      "alloc_step,detected_step,kernel_index,owner,stack_python,stack_c,group,op\n",
		r->out);
	for (i = 0; i < n; i++) {
		const struct memscope_leak *x = memscope_leaks_get(r->l, i);
		const struct memscope_block *b = &x->blk;
		const char *name = ms__lrep_input_name(r, b->src);
		char dev[MEMSCOPE_DEVICE_TEXT_MAX];
		size_t len = 0, op_len = 0;
		const char *owner = b->owner ? memscope_strtab_str(r->st, b->owner, &len) : "";
		const char *op = x->op ? memscope_strtab_str(r->st, x->op, &op_len) : "";

		if (!ms__lrep_leak_listed(r, x))
			continue;

		fprintf(r->out, "%s,", ms__lrep_kind_name(x->kind));
		ms__csv_field(r->out, name, strlen(name));
		fprintf(r->out, ",%" PRIu64 ",%s,%s,", b->pid, memscope_device_text(b->device, dev),
			memscope_subtype_name(b->pool));
		if (b->flags & MEMSCOPE_BLOCK_NO_PTR)
			fputs("N/A", r->out);
		else
			fprintf(r->out, "0x%016" PRIx64, b->ptr);
		fprintf(r->out, ",%" PRId64 ",", b->size);
		if (b->alloc_id)
			fprintf(r->out, "%" PRIu64, b->alloc_id);
		fprintf(r->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", b->alloc_event_id,
			b->alloc_line, b->alloc_ts_ns);
		if (x->kind == MEMSCOPE_LEAK_STEP)
			fprintf(r->out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64, x->alloc_step,
				x->detected_step, x->kernel_index);
		else if (x->alloc_step != MEMSCOPE_LEAK_NO_STEP)
			fprintf(r->out, "%" PRIu64 ",,", x->alloc_step);
		else
			fputs(",,", r->out);
		fputc(',', r->out);
		ms__csv_field(r->out, owner ? owner : "", owner ? len : 0);
		fputc(',', r->out);
		ms__csv_stack(r->out, r->st, b->stack_py);
		fputc(',', r->out);
		ms__csv_stack(r->out, r->st, b->stack_c);
		fprintf(r->out, ",%u,", (unsigned)x->report_group + 1);
		ms__csv_field(r->out, op ? op : "", op ? op_len : 0);
		fputc('\n', r->out);
	}
	return 0;
}
