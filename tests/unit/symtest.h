/* The symbolizer test's helper code: the functions of the small test library (symtest_lib.c) and
 * how a module looks in memory (what the recorder writes down), read back with dl_iterate_phdr. */
#ifndef SYMTEST_H
#define SYMTEST_H

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* symtest_lib.c: return addresses of calls on known lines */
void *symtest_ra(int *line_out, int line);
void *symtest_call(int *line);
void *symtest_outer(int *lines);
const char *symtest_file(void);

/* The module holding an address, as the recorder sees it in memory. */
struct symtest_mod {
	uintptr_t addr;	       /* in: the address */
	int found;	       /* out: the rest is set */
	uint64_t bias, lo, hi; /* dlpi_addr, the executable segment holding addr */
	unsigned char id[64];  /* the GNU build id from the loaded PT_NOTE segments */
	size_t id_len;
};

static inline void symtest_note_id(
	struct symtest_mod *m, const unsigned char *p, size_t n, size_t align)
{
	while (!m->id_len && n >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		size_t name_at = sizeof(nh), desc_at, next;

		memcpy(&nh, p, sizeof(nh));
		desc_at = name_at + ((nh.n_namesz + align - 1) & ~(align - 1));
		next = desc_at + ((nh.n_descsz + align - 1) & ~(align - 1));
		if (desc_at + nh.n_descsz > n)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			!memcmp(p + name_at, "GNU", 4) && nh.n_descsz <= sizeof(m->id)) {
			memcpy(m->id, p + desc_at, nh.n_descsz);
			m->id_len = nh.n_descsz;
		}
		if (next >= n)
			return;
		p += next;
		n -= next;
	}
}

static inline int symtest_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct symtest_mod *m = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && m->addr >= lo &&
			m->addr < lo + ph->p_memsz) {
			m->found = 1;
			m->bias = info->dlpi_addr;
			m->lo = lo;
			m->hi = lo + ph->p_memsz;
		}
	}
	if (!m->found)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE)
			symtest_note_id(m, (const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
				ph->p_memsz, ph->p_align == 8 ? 8 : 4);
	}
	return 1;
}

/* The loaded module holding addr into *m (m->found 0 when none). */
static inline void symtest_find(uintptr_t addr, struct symtest_mod *m)
{
	memset(m, 0, sizeof(*m));
	m->addr = addr;
	dl_iterate_phdr(symtest_phdr_cb, m);
}

#endif
