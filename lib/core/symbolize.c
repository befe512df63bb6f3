/* The offline symbolizer of symbolize.h: module files checked by a small ELF reader of our own,
 * then read by gcc's libbacktrace; frame texts cached per return address.
 *
 * Addresses: libbacktrace reads a file named to backtrace_create_state at the address this
 * process's dl_iterate_phdr gives for its main program when the file is a shared object or PIE
 * (ET_DYN), at its own vaddrs when it is a fixed-address executable (ET_EXEC), and then adds every
 * library loaded in this process as well. The build links a copy of libbacktrace.a whose call is
 * renamed to memscope_bt_dl_iterate_phdr (lib/CMakeLists.txt), which reports the named file alone
 * at address 0: every file is read at its own vaddrs, the address looked up for pc is
 * pc - 1 - bias, and nothing of this process is read (gcc 12: 0.1 ms instead of 75 ms per file
 * with libc6-dbg installed). tests/unit/test_symbolize.c checks both file types. */
#include <backtrace.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "memscope/error.h"
#include "memscope/symbolize.h"
#include "u64map.h"

/* libstdc++'s Itanium C++ ABI demangler (as core/frame.c) */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define BUILD_ID_MAX 256   /* longer ids are refused (sha1 ids are 20 bytes) */
#define NOTES_MAX 4096	   /* notes looked at per note segment or section */
#define DEMANGLE_MAX 65536 /* longer names are shown mangled */

/* libbacktrace's dl_iterate_phdr (see above): only the main program, i.e. the file named to
 * backtrace_create_state, at address 0. Keeps no state. */
int memscope_bt_dl_iterate_phdr(
	int (*cb)(struct dl_phdr_info *info, size_t size, void *data), void *data);
int memscope_bt_dl_iterate_phdr(
	int (*cb)(struct dl_phdr_info *info, size_t size, void *data), void *data)
{
	struct dl_phdr_info info;

	memset(&info, 0, sizeof(info));
	info.dlpi_name = "";
	return cb(&info, sizeof(info), data);
}

/* ---- the ELF reader: is a file well-formed enough for libbacktrace, and its build id ---- */

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

/* An ELF image to read: a file (fd) or bytes in memory (img), size bytes either way. */
struct elf_src {
	int fd;
	const unsigned char *img;
	uint64_t size;
};

/* n bytes at off into dst. 0, MEMSCOPE_E_INVALID (outside the image) or MEMSCOPE_E_IO. */
static int src_read(const struct elf_src *src, uint64_t off, void *dst, size_t n)
{
	size_t done = 0;
	ssize_t r;

	if (off > src->size || n > src->size - off)
		return MEMSCOPE_E_INVALID;
	if (src->img) {
		memcpy(dst, src->img + off, n);
		return 0;
	}
	while (done < n) {
		r = pread(src->fd, (char *)dst + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) /* an error, or the file shrank under us */
			return MEMSCOPE_E_IO;
		done += (size_t)r;
	}
	return 0;
}

/* Whether [off, off + n) lies inside the image. */
static int in_image(const struct elf_src *src, uint64_t off, uint64_t n)
{
	return off <= src->size && n <= src->size - off;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * The first GNU build id note in the note area [off, off + n) (entries aligned to align bytes).
 * 1 (found: id, *id_len), 0 (none), MEMSCOPE_E_UNSUPPORTED (longer than id_size), MEMSCOPE_E_IO.
 * A note running past the area ends the search: a malformed area holds no id.
 */
static int find_build_id(const struct elf_src *src, uint64_t off, uint64_t n, uint64_t align,
	unsigned char *id, size_t id_size, size_t *id_len)
{
	uint64_t end = off + n, name_at, desc_at, next;
	Elf64_Nhdr nh;
	char name[4];
	int rc, i;

	for (i = 0; i < NOTES_MAX && end - off >= sizeof(nh); i++) {
		if ((rc = src_read(src, off, &nh, sizeof(nh))) < 0)
			return rc == MEMSCOPE_E_IO ? rc : 0;
		name_at = off + sizeof(nh);
		desc_at = name_at + align_up(nh.n_namesz, align);
		next = desc_at + align_up(nh.n_descsz, align);
		/* the 32-bit sizes cannot overflow these 64-bit sums; the area is inside the image
		 */
		if (desc_at > end || (uint64_t)desc_at + nh.n_descsz > end)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4) {
			if ((rc = src_read(src, name_at, name, 4)) < 0)
				return rc;
			if (!memcmp(name, "GNU", 4)) {
				if (nh.n_descsz > id_size)
					return MEMSCOPE_E_UNSUPPORTED;
				if ((rc = src_read(src, desc_at, id, nh.n_descsz)) < 0)
					return rc;
				*id_len = nh.n_descsz;
				return nh.n_descsz ? 1 : 0;
			}
		}
		if (next > end)
			return 0;
		off = next;
	}
	return 0;
}

/*
 * Check src is a 64-bit ELF executable or shared object of this machine whose headers and
 * sections lie inside it, and find its build id (PT_NOTE first, then SHT_NOTE). Returns as
 * memscope_elf_build_id, or MEMSCOPE_E_IO; *id_len is 0 unless 1 is returned.
 */
static int elf_check(const struct elf_src *src, unsigned char *id, size_t id_size, size_t *id_len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr sh[64];
	uint64_t phnum, shnum, shstrndx, i, j, k;
	int rc, found = 0;

	*id_len = 0;
	if ((rc = src_read(src, 0, &eh, sizeof(eh))) < 0)
		goto out;
	rc = MEMSCOPE_E_INVALID;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
		eh.e_ident[EI_DATA] != HOST_DATA || eh.e_ident[EI_VERSION] != EV_CURRENT ||
		(eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		goto out;
#ifdef HOST_MACHINE
	if (eh.e_machine != HOST_MACHINE)
		goto out;
#endif
	/* section header count and string table index: in section 0 when they do not fit */
	shnum = eh.e_shnum;
	shstrndx = eh.e_shstrndx;
	phnum = eh.e_phnum;
	if (eh.e_shoff) {
		if (eh.e_shentsize != sizeof(Elf64_Shdr))
			goto out;
		if (!shnum || shstrndx == SHN_XINDEX || phnum == PN_XNUM) {
			if ((rc = src_read(src, eh.e_shoff, sh, sizeof(sh[0]))) < 0)
				goto out;
			rc = MEMSCOPE_E_INVALID;
			if (!shnum)
				shnum = sh[0].sh_size;
			if (shstrndx == SHN_XINDEX)
				shstrndx = sh[0].sh_link;
			if (phnum == PN_XNUM)
				phnum = sh[0].sh_info;
		}
		if (shnum > src->size / sizeof(Elf64_Shdr) ||
			!in_image(src, eh.e_shoff, shnum * sizeof(Elf64_Shdr)) ||
			(shnum && (!shstrndx || shstrndx >= shnum)))
			goto out;
	} else
		shnum = 0;
	if (phnum) {
		if (eh.e_phentsize != sizeof(Elf64_Phdr) ||
			phnum > src->size / sizeof(Elf64_Phdr) ||
			!in_image(src, eh.e_phoff, phnum * sizeof(Elf64_Phdr)))
			goto out;
	}
	for (i = 0; i < phnum; i++) {
		if ((rc = src_read(src, eh.e_phoff + i * sizeof(ph), &ph, sizeof(ph))) < 0)
			goto out;
		rc = MEMSCOPE_E_INVALID;
		if (ph.p_type != PT_NOTE)
			continue;
		if (!in_image(src, ph.p_offset, ph.p_filesz))
			goto out;
		if (!found && (rc = find_build_id(src, ph.p_offset, ph.p_filesz,
				       ph.p_align == 8 ? 8 : 4, id, id_size, id_len)) != 0) {
			if (rc < 0)
				goto out;
			found = 1;
		}
	}
	/* every section with file contents inside the file: libbacktrace maps them unchecked */
	for (i = 0; i < shnum; i += k) {
		k = shnum - i < ARRAY_SIZE(sh) ? shnum - i : ARRAY_SIZE(sh);
		if ((rc = src_read(src, eh.e_shoff + i * sizeof(sh[0]), sh, k * sizeof(sh[0]))) < 0)
			goto out;
		rc = MEMSCOPE_E_INVALID;
		for (j = 0; j < k; j++) {
			if (sh[j].sh_type == SHT_NOBITS || sh[j].sh_type == SHT_NULL)
				continue;
			if (!in_image(src, sh[j].sh_offset, sh[j].sh_size))
				goto out;
			if ((sh[j].sh_type == SHT_SYMTAB || sh[j].sh_type == SHT_DYNSYM) &&
				sh[j].sh_link >= shnum)
				goto out;
			if (sh[j].sh_type == SHT_NOTE && !found &&
				(rc = find_build_id(src, sh[j].sh_offset, sh[j].sh_size,
					 sh[j].sh_addralign == 8 ? 8 : 4, id, id_size, id_len)) !=
					0) {
				if (rc < 0)
					goto out;
				found = 1;
			}
			rc = MEMSCOPE_E_INVALID;
		}
	}
	rc = found;
out:
	if (rc != 1)
		*id_len = 0;
	return rc;
}

int memscope_elf_build_id(
	const unsigned char *img, size_t len, unsigned char *id, size_t id_size, size_t *id_len)
{
	struct elf_src src = { .fd = -1, .img = img, .size = len };

	*id_len = 0;
	if (!img)
		return MEMSCOPE_E_INVALID;
	return elf_check(&src, id, id_size, id_len);
}

/* ---- the symbolizer ---- */

enum file_status { FILE_UNOPENED, FILE_OK, FILE_SKIPPED };

/* One module file (shared by the modules of the same path and build id). */
struct sym_file {
	char *path; /* also libbacktrace's file name, which must outlive its state */
	unsigned char *id;
	size_t id_len;
	enum file_status status;
	int noted;		    /* counted in n_skipped */
	struct backtrace_state *bt; /* FILE_OK */
	char why[128];		    /* the reason when it is libbacktrace's message */
};

struct sym_module {
	uint64_t lo, hi, bias;
	struct sym_file *file;
};

struct memscope_symbolizer {
	struct sym_module *mods;
	size_t n_mods, cap_mods;
	int sorted;
	struct sym_file **files;
	size_t n_files, cap_files;
	struct u64map cache; /* pc -> offset of its first frame in pool, number of frames */
	struct buf pool;     /* frames: a size_t length, the text, a NUL */
	size_t n_skipped;
	const char *first_path, *first_why;
};

struct memscope_symbolizer *memscope_symbolizer_new(void)
{
	return calloc(1, sizeof(struct memscope_symbolizer));
}

void memscope_symbolizer_free(struct memscope_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	/* libbacktrace states cannot be freed; none is used again */
	for (i = 0; i < s->n_files; i++) {
		free(s->files[i]->path);
		free(s->files[i]->id);
		free(s->files[i]);
	}
	free(s->files);
	free(s->mods);
	ms__u64map_free(&s->cache);
	ms__buf_free(&s->pool);
	free(s);
}

int memscope_symbolizer_add_module(struct memscope_symbolizer *s, const char *path, uint64_t bias,
	uint64_t lo, uint64_t hi, const unsigned char *build_id, size_t build_id_len)
{
	struct sym_file *f = NULL;
	size_t i;
	int rc = MEMSCOPE_E_ARG;

	if (!s || !path || lo >= hi || (build_id_len && !build_id))
		goto out;
	rc = MEMSCOPE_E_NOMEM;
	if (ms__grow_array(&s->mods, &s->cap_mods, s->n_mods + 1, sizeof(*s->mods)))
		goto out;
	for (i = 0; i < s->n_files && !f; i++)
		if (!strcmp(s->files[i]->path, path) && s->files[i]->id_len == build_id_len &&
			(!build_id_len || !memcmp(s->files[i]->id, build_id, build_id_len)))
			f = s->files[i];
	if (!f) {
		if (ms__grow_array(&s->files, &s->cap_files, s->n_files + 1, sizeof(*s->files)) ||
			!(f = calloc(1, sizeof(*f))))
			goto out;
		f->path = strdup(path);
		f->id = malloc(build_id_len ? build_id_len : 1);
		if (!f->path || !f->id) {
			free(f->path);
			free(f->id);
			free(f);
			goto out;
		}
		if (build_id_len)
			memcpy(f->id, build_id, build_id_len);
		f->id_len = build_id_len;
		s->files[s->n_files++] = f;
	}
	s->mods[s->n_mods++] = (struct sym_module){ .lo = lo, .hi = hi, .bias = bias, .file = f };
	s->sorted = 0;
	rc = 0;
out:
	return rc;
}

size_t memscope_symbolizer_skipped(
	const struct memscope_symbolizer *s, const char **path, const char **why)
{
	if (path)
		*path = s && s->n_skipped ? s->first_path : NULL;
	if (why)
		*why = s && s->n_skipped ? s->first_why : NULL;
	return s ? s->n_skipped : 0;
}

/* Count f among the files not (fully) used, once. */
static void note_file(struct memscope_symbolizer *s, struct sym_file *f, const char *why)
{
	if (f->noted)
		return;
	f->noted = 1;
	if (!s->n_skipped++) {
		s->first_path = f->path;
		s->first_why = why;
	}
}

/* libbacktrace's errors: errnum -1 only says there are no symbols or no debug info (the plain
 * forms then); any other is a file it failed to read, noted once. Never printed. */
struct bt_ctx {
	struct memscope_symbolizer *s;
	struct sym_file *f;
};

static void bt_error(void *data, const char *msg, int errnum)
{
	struct bt_ctx *c = data;

	if (errnum == -1 || c->f->noted)
		return;
	snprintf(c->f->why, sizeof(c->f->why), "libbacktrace: %s%s%s", msg ? msg : "error",
		errnum > 0 ? ": " : "", errnum > 0 ? strerror(errnum) : "");
	note_file(c->s, c->f, c->f->why);
}

/* Open f: check the file and its build id, then make its libbacktrace state. Leaves f OK or
 * SKIPPED (noted). */
static void open_file(struct memscope_symbolizer *s, struct sym_file *f)
{
	struct elf_src src = { .fd = -1 };
	unsigned char id[BUILD_ID_MAX];
	struct bt_ctx c = { s, f };
	const char *why = NULL;
	struct stat st;
	size_t id_len;
	int rc;

	/* O_NONBLOCK: a FIFO named as the module must not hang us */
	src.fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (src.fd < 0) {
		why = errno == ENOENT || errno == ENOTDIR ? "file not found"
		      : errno == EACCES			  ? "permission denied"
							  : "cannot be opened";
		goto out;
	}
	if (fstat(src.fd, &st) || !S_ISREG(st.st_mode)) {
		why = "not a regular file";
		goto out;
	}
	src.size = (uint64_t)st.st_size;
	rc = elf_check(&src, id, sizeof(id), &id_len);
	if (rc == MEMSCOPE_E_IO)
		why = "read error";
	else if (rc == MEMSCOPE_E_INVALID)
		why = "not a well-formed ELF file of this machine";
	else if (rc == MEMSCOPE_E_UNSUPPORTED || id_len != f->id_len ||
		 (id_len && memcmp(id, f->id, id_len)))
		why = "build id differs from the recording";
	if (why)
		goto out;
	f->bt = backtrace_create_state(f->path, 0, bt_error, &c);
out:
	if (src.fd >= 0)
		close(src.fd);
	f->status = f->bt ? FILE_OK : FILE_SKIPPED;
	if (!f->bt) /* a no-op when bt_error noted it already */
		note_file(s, f, why ? why : "libbacktrace failed");
}

/* Append a frame text (printf) to the pool. 0 or MEMSCOPE_E_NOMEM (pool unchanged). */
static int __attribute__((format(printf, 2, 3))) pool_addf(struct buf *pool, const char *fmt, ...)
{
	va_list ap;
	size_t n;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (w < 0) /* only for texts over INT_MAX */
		return MEMSCOPE_E_NOMEM;
	n = (size_t)w;
	if (ms__buf_reserve(pool, sizeof(n) + n + 1))
		return MEMSCOPE_E_NOMEM;
	memcpy(pool->p + pool->len, &n, sizeof(n));
	va_start(ap, fmt);
	vsnprintf(pool->p + pool->len + sizeof(n), n + 1, fmt, ap);
	va_end(ap);
	pool->len += sizeof(n) + n + 1;
	return 0;
}

/* What a libbacktrace lookup of one pc collects. */
struct look {
	struct bt_ctx c;
	uint64_t pc;
	const struct sym_module *m;
	size_t n;     /* frames added to the pool */
	int rc;	      /* MEMSCOPE_E_NOMEM, or 0 */
	int no_lines; /* the innermost frame has no function or file */
};

static int pcinfo_cb(void *data, uintptr_t addr, const char *file, int line, const char *func)
{
	struct look *l = data;
	char *dem = NULL;
	int status = -1;

	(void)addr;
	if (!l->n && (!file || !func)) {
		l->no_lines = 1;
		return 1;
	}
	if (func && func[0] == '_' && func[1] == 'Z' && strnlen(func, DEMANGLE_MAX) < DEMANGLE_MAX)
		dem = __cxa_demangle(func, NULL, NULL, &status);
	l->rc = pool_addf(&l->c.s->pool, "%s (%s:%d)",
		dem && !status ? dem
		: func	       ? func
			       : "??",
		file ? file : "??", line);
	free(dem);
	if (l->rc)
		return 1;
	l->n++;
	return 0;
}

static void syminfo_cb(void *data, uintptr_t addr, const char *sym, uintptr_t val, uintptr_t size)
{
	struct look *l = data;

	(void)addr;
	(void)size;
	if (!sym)
		return;
	/* the symbol's runtime address is val + bias */
	l->rc = pool_addf(&l->c.s->pool, "%s(%s+0x%" PRIx64 ") [0x%" PRIx64 "]", l->m->file->path,
		sym, l->pc - l->m->bias - (uint64_t)val, l->pc);
	if (!l->rc)
		l->n++;
}

static int mod_cmp(const void *a, const void *b)
{
	const struct sym_module *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The module holding address a, or NULL. */
static const struct sym_module *find_module(struct memscope_symbolizer *s, uint64_t a)
{
	size_t lo = 0, hi = s->n_mods, mid, i;

	if (!s->sorted && s->n_mods) {
		qsort(s->mods, s->n_mods, sizeof(*s->mods), mod_cmp);
		s->sorted = 1;
	}
	while (lo < hi) { /* the first module with lo > a */
		mid = lo + (hi - lo) / 2;
		if (s->mods[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && a < s->mods[lo - 1].hi)
		return &s->mods[lo - 1];
	for (i = 0; i < lo; i++) /* overlapping ranges (a broken recording) */
		if (a < s->mods[i].hi)
			return &s->mods[i];
	return NULL;
}

/* Append pc's frames to the pool. Their count (>= 1), or MEMSCOPE_E_NOMEM. */
static int resolve(struct memscope_symbolizer *s, uint64_t pc, size_t *n)
{
	struct look l = { .c = { s, NULL }, .pc = pc };
	uint64_t addr;
	int rc;

	*n = 0;
	l.m = find_module(s, pc - 1);
	if (!l.m) {
		rc = pool_addf(&s->pool, "[0x%" PRIx64 "]", pc);
		*n = !rc;
		return rc;
	}
	l.c.f = l.m->file;
	if (l.c.f->status == FILE_UNOPENED)
		open_file(s, l.c.f);
	if (l.c.f->status == FILE_OK) {
		addr = pc - 1 - l.m->bias;
		backtrace_pcinfo(l.c.f->bt, (uintptr_t)addr, pcinfo_cb, bt_error, &l.c);
		if (l.rc)
			return l.rc;
		if (!l.n)
			backtrace_syminfo(l.c.f->bt, (uintptr_t)addr, syminfo_cb, bt_error, &l.c);
		if (l.rc)
			return l.rc;
	}
	if (!l.n) {
		if ((rc = pool_addf(&s->pool, "%s(+0x%" PRIx64 ") [0x%" PRIx64 "]", l.c.f->path,
			     pc - l.m->bias, pc)))
			return rc;
		l.n = 1;
	}
	*n = l.n;
	return 0;
}

int memscope_symbolizer_frames(struct memscope_symbolizer *s, uint64_t pc,
	int (*cb)(void *arg, const char *frame, size_t len), void *arg)
{
	uint64_t at, n, i;
	size_t start = s->pool.len, len, got;
	int rc = 0;

	if (!ms__u64map_get(&s->cache, pc, &at, &n)) {
		if ((rc = resolve(s, pc, &got)) ||
			(rc = ms__u64map_put(&s->cache, pc, start, got))) {
			s->pool.len = start;
			goto out;
		}
		at = start;
		n = got;
	}
	for (i = 0; i < n && !rc; i++) {
		memcpy(&len, s->pool.p + at, sizeof(len));
		rc = cb(arg, s->pool.p + at + sizeof(len), len);
		at += sizeof(len) + len + 1;
	}
out:
	return rc;
}
