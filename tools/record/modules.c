/* The shim's record of the modules the program has loaded: their executable ranges (a stack
 * ends at the first return address outside them) and, for the transcoder to symbolize from,
 * their paths, load biases and build ids appended to the modules file beside the spool. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "tracker.h"

/* the loaded modules' executable ranges: return addresses outside them end a stack */
#define MODULES_MAX 4096
static struct {
	uintptr_t lo, hi;
} mods[MODULES_MAX];
static _Atomic unsigned n_mods;
static unsigned long long mods_adds; /* dlpi_adds at the last scan */
static _Atomic int module_lock;

struct scan {
	int fd;
	int full; /* 0: only read dlpi_adds */
	unsigned long long adds;
};

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	unsigned char rec[SPOOL_MODULE_FIXED + SPOOL_BUILD_ID_MAX + SPOOL_PATH_MAX];
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const unsigned char *bid = NULL;
	size_t bid_len = 0, path_len, n;
	char exe[SPOOL_PATH_MAX];
	const char *path = info->dlpi_name;
	uint32_t len;
	uint64_t v;
	int i;

	(void)size;
	s->adds = info->dlpi_adds;
	if (!s->full)
		return 1;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;
			if (a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_NOTE && !bid) {
			const unsigned char *p = (const void *)(info->dlpi_addr + ph->p_vaddr);
			size_t off = 0;
			while (off + 12 <= ph->p_memsz) {
				uint32_t nsz, dsz, type;
				memcpy(&nsz, p + off, 4);
				memcpy(&dsz, p + off + 4, 4);
				memcpy(&type, p + off + 8, 4);
				size_t at = off + 12 + ((nsz + 3u) & ~3u);
				if (at + dsz > ph->p_memsz || nsz > ph->p_memsz)
					break;
				if (type == NT_GNU_BUILD_ID && nsz == 4 &&
					!memcmp(p + off + 12, "GNU", 4)) {
					bid = p + at;
					bid_len =
						dsz > SPOOL_BUILD_ID_MAX ? SPOOL_BUILD_ID_MAX : dsz;
					break;
				}
				off = at + ((dsz + 3u) & ~3u);
			}
		}
	}
	if (!hi)
		return 0;
	if (!path || !*path) {
		ssize_t r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (r <= 0)
			return 0;
		exe[r] = 0;
		path = exe;
	}
	if (!strncmp(path, "linux-vdso", 10) || !strncmp(path, "linux-gate", 10))
		return 0;
	n = atomic_load(&n_mods);
	for (i = 0; i < (int)n; i++)
		if (mods[i].lo == lo && mods[i].hi == hi)
			return 0;
	if (n < MODULES_MAX) {
		mods[n].lo = lo;
		mods[n].hi = hi;
		atomic_store(&n_mods, (unsigned)n + 1);
	}
	path_len = strlen(path);
	if (path_len > SPOOL_PATH_MAX)
		path_len = SPOOL_PATH_MAX;
	len = (uint32_t)(SPOOL_MODULE_FIXED - 4 + bid_len + path_len);
	memcpy(rec, &len, 4);
	v = info->dlpi_addr;
	memcpy(rec + 4, &v, 8);
	v = lo;
	memcpy(rec + 12, &v, 8);
	v = hi;
	memcpy(rec + 20, &v, 8);
	rec[28] = (unsigned char)bid_len;
	if (bid_len)
		memcpy(rec + 29, bid, bid_len);
	memcpy(rec + 29 + bid_len, path, path_len);
	if (s->fd >= 0 && write(s->fd, rec, 4 + len) != (ssize_t)(4 + len)) {
		close(s->fd);
		s->fd = -1;
	}
	return 0;
}

/* Note the modules loaded since the last scan in the modules file (once dlopen added some).
 * Never waits: a thread that finds another scanning goes on without (its stack is cut where
 * its frames leave the known modules), since that other one may be waiting in dl_iterate_phdr
 * for a loader lock this thread holds. */
void ms__rec_scan_modules(void)
{
	struct scan s = { -1, 0, 0 };
	int unlocked = 0;

	if (!ms__rec_spool_ready() || !atomic_compare_exchange_strong(&module_lock, &unlocked, 1))
		return;
	dl_iterate_phdr(scan_one, &s);
	if (s.adds != mods_adds || !atomic_load(&n_mods)) {
		s.full = 1;
		s.fd = open(ms__rec.modules, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		dl_iterate_phdr(scan_one, &s);
		mods_adds = s.adds;
		if (s.fd >= 0)
			close(s.fd);
	}
	atomic_store(&module_lock, 0);
}

int ms__rec_in_module(uintptr_t pc)
{
	unsigned i, n = atomic_load(&n_mods);

	for (i = 0; i < n; i++)
		if (pc >= mods[i].lo && pc < mods[i].hi)
			return 1;
	return 0;
}

int ms__rec_have_modules(void)
{
	return atomic_load(&n_mods) != 0;
}

void ms__rec_forget_modules(void)
{
	atomic_store(&module_lock, 0); /* another thread may have held it */
	atomic_store(&n_mods, 0);
	mods_adds = 0;
}
