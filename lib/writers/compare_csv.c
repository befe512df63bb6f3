/* The reference's memory_compare CSV: its two header lines and one row per aligned pair. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "memscope/compare.h"
#include "memscope/memscope.h"
#include "memscope/strtab.h"

int memscope_compare_csv_header(FILE *out)
{
	static const char h[] = ",,,Base,Compare\nEvent,Name,Device Id,Allocated Memory(byte),"
				"Allocated Memory(byte),Diff Memory(byte)\n";

	return fputs(h, out) < 0 ? MEMSCOPE_E_IO : 0;
}

int memscope_compare_csv_row(
	FILE *out, const struct memscope_strtab *st, const struct memscope_compare_row *row)
{
	char base[24] = "N/A", cmp[24] = "N/A";
	const char *name = memscope_strtab_str(st, row->name, NULL);
	/* as the reference, but a name that would split the row is quoted (inner quotes as is) */
	const char *q = name && strpbrk(name, ",\r\n") ? "\"" : "";

	if (row->has_base)
		base[ms__fmt_i64(base, row->base)] = '\0';
	if (row->has_cmp)
		cmp[ms__fmt_i64(cmp, row->cmp)] = '\0';
	return fprintf(out, "%s,%s%s%s,%d,%s,%s,%lld\n", memscope_kind_name(row->event), q,
		       name ? name : "", q, (int)row->device, base, cmp, (long long)row->diff) < 0
		       ? MEMSCOPE_E_IO
		       : 0;
}
