/* Offline symbolization of a recorded process's return addresses: frame texts from the module files
 * on disk, checked against the build ids the recording holds. */
#ifndef MEMSCOPE_SYMBOLIZE_H
#define MEMSCOPE_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A symbolizer reads the module files of one recorded process image after that process ended, in
 * another process (the recorder's launcher): never in the recorded process. One object, one thread;
 * no global state of its own (libbacktrace's per-file state is never freed: it lives as long as the
 * process, a few hundred KiB per module file used).
 *
 * Frame texts, innermost first, for one return address PC (the address looked up is PC - 1, inside
 * the call instruction):
 *   - with DWARF line info for it: one `FUNCTION (FILE:LINE)` per frame, the inlined functions
 * first (innermost first), then the function that contains them. FUNCTION is demangled when it is a
 *     C++ mangled name (`_Z...`); FILE is the path the debug info names (joined with the
 * compilation directory), as libbacktrace returns it; a part the debug info lacks in an outer frame
 * is `??`.
 *   - else, with a symbol for it: `MODULE(SYMBOL+0xOFF) [0xPC]`, glibc backtrace_symbols style:
 *     MODULE the module path as recorded, SYMBOL as the symbol table has it (not demangled),
 *     OFF = PC - the symbol's runtime address, lower-case hex.
 *   - else, PC in a module: `MODULE(+0xOFF) [0xPC]`, OFF = PC - the module's load bias. This is
 *     also the form for every PC of a module whose file could not be used: missing, not a regular
 *     file, not a well-formed ELF file of this machine, or whose GNU build id differs from the
 *     recorded one (a recorded id of 0 bytes matches only a file without one).
 *   - PC in no module: `[0xPC]`.
 * A module's file is opened at the first PC in it. Results are cached per PC.
 */
struct memscope_symbolizer;

/* New symbolizer without modules. The caller frees it with memscope_symbolizer_free. NULL on OOM.
 */
struct memscope_symbolizer *memscope_symbolizer_new(void);

/* Free s (its modules and cached texts). NULL is fine. */
void memscope_symbolizer_free(struct memscope_symbolizer *s);

/*
 * Add a module of the recorded process: its file path, its load bias (dlpi_addr: runtime address =
 * file vaddr + bias), the runtime address range [lo, hi) of its executable segments (a module with
 * several is added once per segment) and its GNU build id (build_id_len bytes, 0 when it has none;
 * build_id may be NULL then). path and build_id are copied. Nothing is read here. Modules may be
 * added in any order, also after memscope_symbolizer_frames (texts already cached stay as they
 * are). Returns 0, MEMSCOPE_E_ARG (path NULL, lo >= hi) or MEMSCOPE_E_NOMEM; s is unchanged on
 * failure.
 */
int memscope_symbolizer_add_module(struct memscope_symbolizer *s, const char *path, uint64_t bias,
	uint64_t lo, uint64_t hi, const unsigned char *build_id, size_t build_id_len);

/*
 * The frames of return address pc, innermost first, as texts described above: each is handed to
 * cb with arg, NUL-terminated, len bytes without the NUL, borrowed (valid during the call only).
 * cb is called at least once. Returns 0, the first non-zero cb return (no more frames are handed
 * on then), or MEMSCOPE_E_NOMEM before any frame was handed on (nothing is cached then).
 */
int memscope_symbolizer_frames(struct memscope_symbolizer *s, uint64_t pc,
	int (*cb)(void *arg, const char *frame, size_t len), void *arg);

/*
 * Notes for the user: the number of module files opened so far that were not used, or only partly
 * (libbacktrace failed reading their symbols or debug info), and for the first of them its path and
 * why, e.g. "build id differs from the recording", "file not found". *path and *why (either may be
 * NULL) are borrowed from s, valid until it is freed, and NULL when the count is 0.
 */
size_t memscope_symbolizer_skipped(
	const struct memscope_symbolizer *s, const char **path, const char **why);

/*
 * The GNU build id of the ELF file image img[0..len) (the whole file) into id (id_size bytes of
 * room), its length into *id_len: from the first NT_GNU_BUILD_ID note of a PT_NOTE segment, else
 * of an SHT_NOTE section. The image must be a 64-bit ELF file of this machine's byte order whose
 * program headers, section headers and the sections with file contents all lie inside it (the
 * checks the symbolizer makes before it hands a file to libbacktrace). Returns 1 (found), 0 (none:
 * *id_len = 0), MEMSCOPE_E_INVALID (not such an ELF file) or MEMSCOPE_E_UNSUPPORTED (the id is
 * longer than id_size); *id_len is 0 on failure.
 */
int memscope_elf_build_id(
	const unsigned char *img, size_t len, unsigned char *id, size_t id_size, size_t *id_len);

#endif
