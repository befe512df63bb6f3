/* Unit tests of the offline symbolizer: return addresses in a test library and in test programs
 * (PIE and fixed-address) resolved to function (file:line) with inlined frames, the symbol and the
 * plain forms, build id mismatches and missing, odd or hostile module files; the ELF note reader on
 * crafted, cut and mutated images. */
#include <dlfcn.h>
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memscope/error.h"
#include "memscope/symbolize.h"
#include "symtest.h"
#include "testutil.h"

#define MAX_FRAMES 16
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct frames {
	int n;
	int stop_at; /* return 7 from the stop_at-th frame (0: never) */
	char *f[MAX_FRAMES];
};

static int collect(void *arg, const char *frame, size_t len)
{
	struct frames *fr = arg;

	ck_assert_uint_eq(strlen(frame), len);
	ck_assert_int_lt(fr->n, MAX_FRAMES);
	fr->f[fr->n] = strdup(frame);
	ck_assert_ptr_nonnull(fr->f[fr->n]);
	fr->n++;
	return fr->stop_at && fr->n == fr->stop_at ? 7 : 0;
}

static void frames_free(struct frames *fr)
{
	int i;

	for (i = 0; i < fr->n; i++)
		free(fr->f[i]);
	memset(fr, 0, sizeof(*fr));
}

/* The frames of pc into fr (freed first), asserting the call returned 0. */
static void frames_of(struct memscope_symbolizer *s, uint64_t pc, struct frames *fr)
{
	frames_free(fr);
	ck_assert_int_eq(memscope_symbolizer_frames(s, pc, collect, fr), 0);
	ck_assert_int_ge(fr->n, 1);
}

/* pc's frames are the one frame want. */
static void assert_one_frame(
	struct memscope_symbolizer *s, uint64_t pc, struct frames *fr, const char *want)
{
	frames_of(s, pc, fr);
	ck_assert_int_eq(fr->n, 1);
	ck_assert_str_eq(fr->f[0], want);
}

/* The function sym of the library at path (loaded once, kept loaded). */
static void *lib_sym(const char *path, const char *sym)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL), *p;

	ck_assert_msg(h != NULL, "%s", dlerror());
	p = dlsym(h, sym);
	ck_assert_msg(p != NULL, "%s", dlerror());
	return p;
}

/* A return address of the test library (path) whose call is on *line; its module into *m. */
static uintptr_t lib_call(const char *path, int *line, struct symtest_mod *m)
{
	void *(*call)(int *);
	void *ra;

	*(void **)&call = lib_sym(path, "symtest_call");
	ra = call(line);
	symtest_find((uintptr_t)ra - 1, m);
	ck_assert(m->found);
	return (uintptr_t)ra;
}

static const char *lib_file(const char *path)
{
	const char *(*file)(void);

	*(void **)&file = lib_sym(path, "symtest_file");
	return file();
}

static struct memscope_symbolizer *with_module(
	const char *path, const struct symtest_mod *m, const unsigned char *id, size_t id_len)
{
	struct memscope_symbolizer *s = memscope_symbolizer_new();

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(
		memscope_symbolizer_add_module(s, path, m->bias, m->lo, m->hi, id, id_len), 0);
	return s;
}

/* The text a pc of a module without usable symbols gets: MODULE(+0xOFF) [0xPC]. */
static void expect_plain(
	struct memscope_symbolizer *s, const char *path, uint64_t bias, uint64_t pc)
{
	struct frames fr = { 0 };
	char want[4200];

	snprintf(want, sizeof(want), "%s(+0x%" PRIx64 ") [0x%" PRIx64 "]", path, pc - bias, pc);
	frames_of(s, pc, &fr);
	ck_assert_int_eq(fr.n, 1);
	ck_assert_str_eq(fr.f[0], want);
	frames_free(&fr);
}

START_TEST(library_call_names_function_file_and_line)
{
	struct symtest_mod m;
	struct frames fr = { 0 };
	char want[4200];
	int line = 0;
	uintptr_t ra = lib_call(SYMTEST_LIB, &line, &m);
	struct memscope_symbolizer *s = with_module(SYMTEST_LIB, &m, m.id, m.id_len);

	ck_assert_uint_gt(m.id_len, 0); /* the build links with a build id: it is checked */
	ck_assert_uint_ne(m.bias, 0);
	snprintf(want, sizeof(want), "symtest_call (%s:%d)", lib_file(SYMTEST_LIB), line);
	assert_one_frame(s, ra, &fr, want);
	ck_assert_uint_eq(memscope_symbolizer_skipped(s, NULL, NULL), 0);
	/* a second time: the cached texts, the same */
	assert_one_frame(s, ra, &fr, want);
	frames_free(&fr);
	memscope_symbolizer_free(s);
}
END_TEST

START_TEST(inlined_frames_come_first)
{
	void *(*outer)(int *);
	int lines[2] = { 0, 0 };
	struct symtest_mod m;
	struct frames fr = { 0 };
	struct memscope_symbolizer *s;
	char want0[4200], want1[4200];
	uintptr_t ra;
	int rc;

	*(void **)&outer = lib_sym(SYMTEST_LIB, "symtest_outer");
	ra = (uintptr_t)outer(lines);
	symtest_find(ra - 1, &m);
	ck_assert(m.found);
	s = with_module(SYMTEST_LIB, &m, m.id, m.id_len);
	snprintf(want0, sizeof(want0), "symtest_inl (%s:%d)", lib_file(SYMTEST_LIB), lines[0]);
	snprintf(want1, sizeof(want1), "symtest_outer (%s:%d)", lib_file(SYMTEST_LIB), lines[1]);
	frames_of(s, ra, &fr);
	ck_assert_int_eq(fr.n, 2);
	ck_assert_str_eq(fr.f[0], want0);
	ck_assert_str_eq(fr.f[1], want1);
	/* a callback's non-zero return ends the frames and is returned, cached or not */
	frames_free(&fr);
	fr.stop_at = 1;
	rc = memscope_symbolizer_frames(s, ra, collect, &fr);
	ck_assert_int_eq(rc, 7);
	ck_assert_int_eq(fr.n, 1);
	frames_free(&fr);
	memscope_symbolizer_free(s);
}
END_TEST

START_TEST(without_debug_info_symbol_plus_offset)
{
	struct symtest_mod m;
	struct frames fr = { 0 };
	char want[4200];
	int line;
	uintptr_t ra = lib_call(SYMTEST_NODEBUG_LIB, &line, &m);
	uintptr_t fn = (uintptr_t)lib_sym(SYMTEST_NODEBUG_LIB, "symtest_call");
	struct memscope_symbolizer *s = with_module(SYMTEST_NODEBUG_LIB, &m, m.id, m.id_len);

	snprintf(want, sizeof(want), "%s(symtest_call+0x%" PRIxPTR ") [0x%" PRIxPTR "]",
		SYMTEST_NODEBUG_LIB, ra - fn, ra);
	assert_one_frame(s, ra, &fr, want);
	frames_free(&fr);
	memscope_symbolizer_free(s);
}
END_TEST

/* Run a symtest program, check its return address resolves to its call's line. */
static void check_program(const char *path, int fixed)
{
	char file[4096], idhex[200], want[4200];
	unsigned char id[64];
	uint64_t bias, lo, hi, ra;
	size_t id_len = 0, i;
	struct memscope_symbolizer *s;
	struct frames fr = { 0 };
	FILE *p = popen(path, "r");
	int line;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(
		fscanf(p, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %199s %" SCNx64 " %d %4095s", &bias,
			&lo, &hi, idhex, &ra, &line, file),
		7);
	ck_assert_int_eq(pclose(p), 0);
	if (fixed)
		ck_assert_uint_eq(bias, 0);
	else
		ck_assert_uint_ne(bias, 0);
	for (i = 0; idhex[0] != '-' && idhex[2 * i]; i++) {
		unsigned v;

		ck_assert_int_eq(sscanf(idhex + 2 * i, "%2x", &v), 1);
		id[id_len++] = (unsigned char)v;
	}
	ck_assert_uint_gt(id_len, 0);
	s = memscope_symbolizer_new();
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(memscope_symbolizer_add_module(s, path, bias, lo, hi, id, id_len), 0);
	snprintf(want, sizeof(want), "exe_call (%s:%d)", file, line);
	frames_of(s, ra, &fr);
	ck_assert_str_eq(fr.f[0], want);
	frames_free(&fr);
	memscope_symbolizer_free(s);
}

START_TEST(programs_pie_and_fixed_address)
{
	check_program(SYMTEST_PIE, 0);
	check_program(SYMTEST_NOPIE, 1);
}
END_TEST

START_TEST(build_id_mismatch_and_missing_files_are_plain)
{
	struct symtest_mod m;
	unsigned char bad[64];
	const char *path, *why;
	struct memscope_symbolizer *s;
	int line;
	uintptr_t ra = lib_call(SYMTEST_LIB, &line, &m);

	/* one byte differs */
	memcpy(bad, m.id, m.id_len);
	bad[m.id_len - 1] ^= 1;
	s = with_module(SYMTEST_LIB, &m, bad, m.id_len);
	expect_plain(s, SYMTEST_LIB, m.bias, ra);
	ck_assert_uint_eq(memscope_symbolizer_skipped(s, &path, &why), 1);
	ck_assert_str_eq(path, SYMTEST_LIB);
	ck_assert_str_eq(why, "build id differs from the recording");
	memscope_symbolizer_free(s);

	/* recorded without one: the file has one */
	s = with_module(SYMTEST_LIB, &m, NULL, 0);
	expect_plain(s, SYMTEST_LIB, m.bias, ra);
	ck_assert_uint_eq(memscope_symbolizer_skipped(s, NULL, &why), 1);
	ck_assert_str_eq(why, "build id differs from the recording");
	memscope_symbolizer_free(s);

	/* a prefix of the id */
	s = with_module(SYMTEST_LIB, &m, m.id, m.id_len - 1);
	expect_plain(s, SYMTEST_LIB, m.bias, ra);
	memscope_symbolizer_free(s);

	s = with_module("/nonexistent/dir/libsymtest.so", &m, m.id, m.id_len);
	expect_plain(s, "/nonexistent/dir/libsymtest.so", m.bias, ra);
	/* the second pc of the module: cached file status, counted once */
	expect_plain(s, "/nonexistent/dir/libsymtest.so", m.bias, ra + 1);
	ck_assert_uint_eq(memscope_symbolizer_skipped(s, &path, &why), 1);
	ck_assert_str_eq(path, "/nonexistent/dir/libsymtest.so");
	ck_assert_str_eq(why, "file not found");
	memscope_symbolizer_free(s);

	s = with_module("/", &m, m.id, m.id_len);
	expect_plain(s, "/", m.bias, ra);
	ck_assert_uint_eq(memscope_symbolizer_skipped(s, NULL, &why), 1);
	ck_assert_str_eq(why, "not a regular file");
	memscope_symbolizer_free(s);
}
END_TEST

START_TEST(pc_outside_every_module)
{
	struct symtest_mod m;
	struct frames fr = { 0 };
	char want[64];
	int line;
	uintptr_t ra = lib_call(SYMTEST_LIB, &line, &m);
	struct memscope_symbolizer *s = with_module(SYMTEST_LIB, &m, m.id, m.id_len);
	uint64_t pcs[] = { m.hi + 1, m.lo, 0, 1, UINT64_MAX };
	size_t i;

	(void)ra;
	for (i = 0; i < ARRAY_SIZE(pcs); i++) {
		snprintf(want, sizeof(want), "[0x%" PRIx64 "]", pcs[i]);
		frames_of(s, pcs[i], &fr);
		ck_assert_int_eq(fr.n, 1);
		ck_assert_str_eq(fr.f[0], want);
	}
	/* return addresses lo + 1 and hi: calls in the module's first and last byte */
	frames_of(s, m.hi, &fr);
	ck_assert_int_ne(fr.f[0][0], '[');
	frames_of(s, m.lo + 1, &fr);
	ck_assert_int_ne(fr.f[0][0], '[');
	frames_free(&fr);
	ck_assert_int_eq(memscope_symbolizer_add_module(s, "x", 0, 5, 5, NULL, 0), MEMSCOPE_E_ARG);
	ck_assert_int_eq(memscope_symbolizer_add_module(s, NULL, 0, 5, 6, NULL, 0), MEMSCOPE_E_ARG);
	memscope_symbolizer_free(s);
}
END_TEST

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* The first section of img with file contents (not the first one: a section libbacktrace reads). */
static Elf64_Shdr *some_section(char *img, size_t len, const char *name)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh, *names;
	int i;

	ck_assert_uint_ge(len, sizeof(eh));
	memcpy(&eh, img, sizeof(eh));
	ck_assert_uint_le(eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(*sh), len);
	sh = (Elf64_Shdr *)(img + eh.e_shoff);
	names = &sh[eh.e_shstrndx];
	for (i = 1; i < eh.e_shnum; i++)
		if (!strcmp(img + names->sh_offset + sh[i].sh_name, name))
			return &sh[i];
	ck_abort_msg("no section %s", name);
	return NULL;
}

START_TEST(hostile_module_files_are_plain)
{
	char dir[] = "/tmp/symtest.XXXXXX", path[64];
	unsigned char junk[64] = "\177ELF\2\1\1";
	struct symtest_mod m;
	const char *why;
	size_t len, i;
	char *img = slurp(SYMTEST_LIB, &len), *copy;
	int line, k;
	uintptr_t ra = lib_call(SYMTEST_LIB, &line, &m);
	struct memscope_symbolizer *s;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_ptr_nonnull(img);
	copy = malloc(len);
	ck_assert_ptr_nonnull(copy);
	for (i = 7; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 37);
	for (k = 0; k < 8; k++) {
		const char *want_why = "not a well-formed ELF file of this machine";

		snprintf(path, sizeof(path), "%s/m%d.so", dir, k);
		memcpy(copy, img, len);
		switch (k) {
		case 0: /* empty */
			write_file(path, copy, 0);
			break;
		case 1: /* an ELF magic and junk */
			write_file(path, junk, sizeof(junk));
			break;
		case 2: /* cut in half: the build id note is still there */
			write_file(path, copy, len / 2);
			break;
		case 3: /* cut by one byte */
			write_file(path, copy, len - 1);
			break;
		case 4: /* a debug section's contents past the end of the file */
			some_section(copy, len, ".debug_info")->sh_offset = len + 4096;
			write_file(path, copy, len);
			break;
		case 5: /* the symbol table's size past the end of the file */
			some_section(copy, len, ".symtab")->sh_size = (uint64_t)len * 3;
			write_file(path, copy, len);
			break;
		case 6: /* the symbol table's string table out of range */
			some_section(copy, len, ".symtab")->sh_link = 0xffff;
			write_file(path, copy, len);
			break;
		case 7: /* a FIFO: must not hang */
			ck_assert_int_eq(mkfifo(path, 0600), 0);
			want_why = "not a regular file";
			break;
		}
		s = with_module(path, &m, m.id, m.id_len);
		expect_plain(s, path, m.bias, ra);
		ck_assert_uint_eq(memscope_symbolizer_skipped(s, NULL, &why), 1);
		ck_assert_str_eq(why, want_why);
		memscope_symbolizer_free(s);
		ck_assert_int_eq(unlink(path), 0);
	}
	ck_assert_int_eq(rmdir(dir), 0);
	free(copy);
	free(img);
}
END_TEST

/* A minimal ELF image: header, one PT_NOTE segment or SHT_NOTE section (plus the section 0 and
 * a string table) holding notes[0..n), note alignment align. Returns its length in img. */
static size_t make_elf(
	unsigned char *img, const void *notes, size_t n, size_t align, int as_section)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };
	Elf64_Shdr sh[3] = { { 0 } };
	size_t at = sizeof(eh) + sizeof(ph), notes_at;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	at = (at + 7) & ~(size_t)7;
	notes_at = at;
	memcpy(img + at, notes, n);
	at += n;
	memcpy(img + at, "\0.note\0", 8);
	if (as_section) {
		at = (at + 8 + 7) & ~(size_t)7;
		eh.e_shoff = at;
		eh.e_shentsize = sizeof(Elf64_Shdr);
		eh.e_shnum = 3;
		eh.e_shstrndx = 2;
		sh[1].sh_name = 1;
		sh[1].sh_type = SHT_NOTE;
		sh[1].sh_offset = notes_at;
		sh[1].sh_size = n;
		sh[1].sh_addralign = align;
		sh[2].sh_type = SHT_STRTAB;
		sh[2].sh_offset = notes_at + n;
		sh[2].sh_size = 8;
		memcpy(img + at, sh, sizeof(sh));
		at += sizeof(sh);
	} else {
		eh.e_phoff = sizeof(eh);
		eh.e_phentsize = sizeof(ph);
		eh.e_phnum = 1;
		ph.p_type = PT_NOTE;
		ph.p_offset = notes_at;
		ph.p_filesz = n;
		ph.p_align = align;
		memcpy(img + sizeof(eh), &ph, sizeof(ph));
		at += 8;
	}
	memcpy(img, &eh, sizeof(eh));
	return at;
}

/* A note (name, type, desc of dlen bytes) at p, aligned to align; returns its length. */
static size_t put_note(unsigned char *p, const char *name, uint32_t type, const unsigned char *desc,
	uint32_t dlen, size_t align)
{
	Elf64_Nhdr nh = {
		.n_namesz = (uint32_t)strlen(name) + 1, .n_descsz = dlen, .n_type = type
	};
	size_t at = sizeof(nh);

	memcpy(p, &nh, sizeof(nh));
	memset(p + at, 0, 600);
	memcpy(p + at, name, nh.n_namesz);
	at += (nh.n_namesz + align - 1) & ~(align - 1);
	memcpy(p + at, desc, dlen);
	at += (dlen + align - 1) & ~(align - 1);
	return at;
}

START_TEST(note_reader_on_crafted_images)
{
	static unsigned char img[8192], notes[2048], id[300], got[256];
	size_t n, len, got_len, align;
	int sect;

	for (n = 0; n < sizeof(id); n++)
		id[n] = (unsigned char)(n * 7 + 1);
	for (sect = 0; sect < 2; sect++)
		for (align = 4; align <= 8; align += 4) {
			/* another note, then the id */
			n = put_note(notes, "GNU", NT_GNU_PROPERTY_TYPE_0, id, 12, align);
			n += put_note(notes + n, "XYZ", NT_GNU_BUILD_ID, id, 8, align);
			n += put_note(notes + n, "GNU", NT_GNU_BUILD_ID, id + 1, 20, align);
			len = make_elf(img, notes, n, align, sect);
			ck_assert_int_eq(
				memscope_elf_build_id(img, len, got, sizeof(got), &got_len), 1);
			ck_assert_uint_eq(got_len, 20);
			ck_assert_mem_eq(got, id + 1, 20);
			/* the area ends inside the id: none */
			len = make_elf(img, notes, n - 16, align, sect);
			ck_assert_int_eq(
				memscope_elf_build_id(img, len, got, sizeof(got), &got_len), 0);
			ck_assert_uint_eq(got_len, 0);
			/* longer than the room given */
			n = put_note(notes, "GNU", NT_GNU_BUILD_ID, id, 300, align);
			len = make_elf(img, notes, n, align, sect);
			ck_assert_int_eq(
				memscope_elf_build_id(img, len, got, sizeof(got), &got_len),
				MEMSCOPE_E_UNSUPPORTED);
			ck_assert_uint_eq(got_len, 0);
			/* a note whose name size runs far past the area */
			n = put_note(notes, "GNU", NT_GNU_BUILD_ID, id, 20, align);
			((Elf64_Nhdr *)notes)->n_namesz = 0xfffffff0u;
			len = make_elf(img, notes, n, align, sect);
			ck_assert_int_eq(
				memscope_elf_build_id(img, len, got, sizeof(got), &got_len), 0);
			/* the note area itself past the end of the image: malformed */
			n = put_note(notes, "GNU", NT_GNU_BUILD_ID, id, 20, align);
			len = make_elf(img, notes, n, align, sect);
			ck_assert_int_eq(
				memscope_elf_build_id(img, len - 8 - (sect ? 3 * 64 : 0) - 4, got,
					sizeof(got), &got_len),
				MEMSCOPE_E_INVALID);
		}
	/* not ELF, other class or type */
	len = make_elf(img, notes, n, 4, 0);
	img[EI_CLASS] = ELFCLASS32;
	ck_assert_int_eq(
		memscope_elf_build_id(img, len, got, sizeof(got), &got_len), MEMSCOPE_E_INVALID);
	img[EI_CLASS] = ELFCLASS64;
	((Elf64_Ehdr *)img)->e_type = ET_REL;
	ck_assert_int_eq(
		memscope_elf_build_id(img, len, got, sizeof(got), &got_len), MEMSCOPE_E_INVALID);
	ck_assert_int_eq(memscope_elf_build_id(
				 (const unsigned char *)"\177EL", 3, got, sizeof(got), &got_len),
		MEMSCOPE_E_INVALID);
}
END_TEST

START_TEST(note_reader_on_cut_and_mutated_files)
{
	static unsigned char got[256];
	struct symtest_mod m;
	size_t len, cut, got_len, i;
	unsigned char *img, *copy;
	int line, rc, iter;

	lib_call(SYMTEST_LIB, &line, &m);
	img = (unsigned char *)slurp(SYMTEST_LIB, &len);
	ck_assert_ptr_nonnull(img);
	/* the whole file: the id the loaded library has in memory */
	ck_assert_int_eq(memscope_elf_build_id(img, len, got, sizeof(got), &got_len), 1);
	ck_assert_uint_eq(got_len, m.id_len);
	ck_assert_mem_eq(got, m.id, m.id_len);
	/* every cut: the section headers are at the end, so no cut file is well-formed */
	for (cut = 0; cut < len; cut += cut < 4096 ? 1 : 61) {
		copy = malloc(cut ? cut : 1); /* exactly cut bytes: reading past them is caught */
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, img, cut);
		rc = memscope_elf_build_id(copy, cut, got, sizeof(got), &got_len);
		ck_assert_int_eq(rc, MEMSCOPE_E_INVALID);
		ck_assert_uint_eq(got_len, 0);
		free(copy);
	}
	/* random bytes changed in the headers, the notes and the section table */
	copy = malloc(len);
	ck_assert_ptr_nonnull(copy);
	trand_state = 0x5eed5eedu;
	for (iter = 0; iter < 20000; iter++) {
		int k, flips = 1 + (int)trand(8);

		memcpy(copy, img, len);
		for (k = 0; k < flips; k++) {
			uint64_t at = trand(3) == 0 ? len - 1 - trand(len < 4096 ? len : 4096)
						    : trand(len < 1024 ? len : 1024);

			copy[at] = trand(4) ? (unsigned char)trand(256) : 0xff;
		}
		rc = memscope_elf_build_id(copy, len, got, sizeof(got), &got_len);
		ck_assert(rc == 1 || rc == 0 || rc == MEMSCOPE_E_INVALID ||
			  rc == MEMSCOPE_E_UNSUPPORTED);
		ck_assert(rc == 1 ? got_len > 0 && got_len <= sizeof(got) : got_len == 0);
	}
	/* random images behind a valid identification */
	for (iter = 0; iter < 20000; iter++) {
		size_t n = 64 + trand(512);

		memcpy(copy, img, 16);
		for (i = 16; i < n; i++)
			copy[i] = trand(3) ? (unsigned char)trand(256) : 0;
		rc = memscope_elf_build_id(copy, n, got, sizeof(got), &got_len);
		ck_assert(rc == 1 || rc == 0 || rc == MEMSCOPE_E_INVALID ||
			  rc == MEMSCOPE_E_UNSUPPORTED);
	}
	free(copy);
	free(img);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = tcase_create("symbolize");

	tcase_add_test(tc, library_call_names_function_file_and_line);
	tcase_add_test(tc, inlined_frames_come_first);
	tcase_add_test(tc, without_debug_info_symbol_plus_offset);
	tcase_add_test(tc, programs_pie_and_fixed_address);
	tcase_add_test(tc, build_id_mismatch_and_missing_files_are_plain);
	tcase_add_test(tc, pc_outside_every_module);
	tcase_add_test(tc, hostile_module_files_are_plain);
	tcase_add_test(tc, note_reader_on_crafted_images);
	tcase_add_test(tc, note_reader_on_cut_and_mutated_files);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
