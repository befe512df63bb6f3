/* The shim's Python frames: a per-thread shadow stack of the Python frames running, kept by a
 * C profile function (PyEval_SetProfile) that the program's sitecustomize installs, and read at
 * each allocation into a PYSTACK record (formats/record.md, "Python frames"). No Python header:
 * the few functions of CPython's stable C API it calls are looked up in the process when the
 * sitecustomize first asks, so a program without Python pays nothing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "tracker.h"

#define EXPORT __attribute__((visibility("default")))

/* CPython's what codes of a profile function (Include/cpython/pystate.h, stable since 2.x) */
enum { PY_TRACE_CALL = 0, PY_TRACE_RETURN = 3 };

typedef int (*py_tracefunc)(void *obj, void *frame, int what, void *arg);

/* The C API functions used, all in the stable ABI but for PyFrame_GetCode and PyFrame_GetBack
 * (3.9 and later: f_code is read as an attribute where it is missing). */
static struct {
	int (*is_initialized)(void);
	void (*set_profile)(py_tracefunc, void *);
	int (*line)(void *frame);		      /* PyFrame_GetLineNumber */
	void *(*code)(void *frame);		      /* PyFrame_GetCode: new reference */
	void *(*back)(void *frame);		      /* PyFrame_GetBack: new reference */
	void *(*attr)(void *obj, const char *name);   /* PyObject_GetAttrString */
	const char *(*utf8)(void *str, ssize_t *len); /* PyUnicode_AsUTF8AndSize */
	void (*incref)(void *);
	void (*decref)(void *);
	void (*err_clear)(void);
	int (*gil)(void); /* PyGILState_Check */
	int found;	  /* 0 not looked up, 1 found, -1 missing */
} py;

#define CODE_SLOTS 8192u       /* code objects a thread names (a power of two) */
#define NAMES_BYTES (1u << 20) /* their file and function names */
#define NO_SLOT UINT32_MAX     /* a frame whose code could not be named */
#define STACK_FIRST 1024u      /* shadow stack entries mapped at first */
#define PY_WORDS (2 + 2 * SPOOL_PY_DEPTH_MAX)

/* a Python code object the thread has met: its names in names[at..], its id in the spool (0:
 * not defined yet); the shim holds a reference on it, so that its address names only it */
struct py_code {
	void *code;
	uint32_t id, at;
	uint16_t file_len, func_len;
};

/* a running frame: the shim holds a reference on it from its call to its return */
struct py_entry {
	void *frame;
	uint32_t slot;
	int32_t line; /* read at the frame's call, at its child's and at allocations with the GIL */
};

struct rec_py {
	struct py_entry *stack;
	uint32_t depth, cap;
	int busy;     /* the code table is being rebuilt: allocations take no Python stack */
	uint64_t gen; /* changes at every push and pop */
	uint64_t last_gen;
	int32_t last_line;
	uint32_t last_native, last_sid; /* the last allocation's stack, kept for the next */
	uint32_t n_codes, names_used;
	struct py_code codes[CODE_SLOTS];
	char names[NAMES_BYTES];
};

/* ---------------------------------------------------------------- the C API */

#define LOOK(field, name) (*(void **)&py.field = dlsym(RTLD_DEFAULT, name))

/* The C API looked up once, by the first thread that installs (it holds the GIL, so no other
 * runs this): whether it is all there and Python is running. */
static int find_api(void)
{
	if (!py.found) {
		LOOK(is_initialized, "Py_IsInitialized");
		LOOK(set_profile, "PyEval_SetProfile");
		LOOK(line, "PyFrame_GetLineNumber");
		LOOK(attr, "PyObject_GetAttrString");
		LOOK(utf8, "PyUnicode_AsUTF8AndSize");
		LOOK(incref, "Py_IncRef");
		LOOK(decref, "Py_DecRef");
		LOOK(err_clear, "PyErr_Clear");
		LOOK(gil, "PyGILState_Check");
		LOOK(code, "PyFrame_GetCode"); /* 3.9 */
		LOOK(back, "PyFrame_GetBack"); /* 3.9 */
		dlerror();
		py.found = py.is_initialized && py.set_profile && py.line && py.attr && py.utf8 &&
					   py.incref && py.decref && py.err_clear && py.gil
				   ? 1
				   : -1;
	}
	return py.found == 1 && py.is_initialized();
}

/* attribute name of obj, a new reference or NULL (the error cleared) */
static void *get(void *obj, const char *name)
{
	void *v = py.attr(obj, name);

	if (!v)
		py.err_clear();
	return v;
}

static void *frame_code(void *frame)
{
	return py.code ? py.code(frame) : get(frame, "f_code");
}

/* the frame that called frame, a new reference or NULL (before 3.9: NULL, a stack installed
 * on a running thread starts at the frame it was installed from) */
static void *frame_back(void *frame)
{
	return py.back ? py.back(frame) : NULL;
}

/* ---------------------------------------------------------------- the code table */

static uint32_t code_hash(const void *code)
{
	uint64_t h = (uint64_t)(uintptr_t)code * 0x9e3779b97f4a7c15u;

	return (uint32_t)(h >> 40) & (CODE_SLOTS - 1);
}

/* len bytes of the str attribute name of code into the thread's names; 0 or -1 */
static int copy_name(struct rec_py *t, void *code, const char *name, uint16_t *len)
{
	void *s = get(code, name);
	const char *u = NULL;
	ssize_t n = 0;

	if (s) {
		u = py.utf8(s, &n);
		if (!u) {
			py.err_clear();
			n = 0;
		}
	}
	if (n > (ssize_t)SPOOL_PY_NAME_MAX)
		n = SPOOL_PY_NAME_MAX;
	if (t->names_used + (size_t)n > NAMES_BYTES) {
		if (s)
			py.decref(s);
		return -1;
	}
	if (n)
		memcpy(t->names + t->names_used, u, (size_t)n);
	t->names_used += (uint32_t)n;
	*len = (uint16_t)n;
	if (s)
		py.decref(s);
	return 0;
}

static void codes_clear(struct rec_py *t);

/* The slot of code (a new reference, which the table keeps or drops), named when new. */
static uint32_t code_slot(struct rec_py *t, void *code)
{
	uint32_t k;
	struct py_code c = { code, 0, 0, 0, 0 };

	for (k = code_hash(code); t->codes[k].code; k = (k + 1) & (CODE_SLOTS - 1))
		if (t->codes[k].code == code) {
			py.decref(code);
			return k;
		}
	if (t->n_codes >= CODE_SLOTS / 4 * 3 ||
		t->names_used + 2 * SPOOL_PY_NAME_MAX > NAMES_BYTES) {
		codes_clear(t);
		for (k = code_hash(code); t->codes[k].code; k = (k + 1) & (CODE_SLOTS - 1))
			;
	}
	c.at = t->names_used;
	if (copy_name(t, code, "co_filename", &c.file_len) ||
		copy_name(t, code, "co_name", &c.func_len)) {
		py.decref(code);
		return NO_SLOT;
	}
	t->codes[k] = c; /* the code last: an allocation above saw an empty slot */
	t->n_codes++;
	return k;
}

/* The slot of frame's code, NO_SLOT when it cannot be named. */
static uint32_t frame_slot(struct rec_py *t, void *frame)
{
	void *code = frame_code(frame);

	return code ? code_slot(t, code) : NO_SLOT;
}

/* The table full: emptied, its references dropped, and the running frames' codes named again. */
static void codes_clear(struct rec_py *t)
{
	uint32_t k;

	t->busy = 1;
	for (k = 0; k < CODE_SLOTS; k++)
		if (t->codes[k].code)
			py.decref(t->codes[k].code);
	memset(t->codes, 0, sizeof(t->codes));
	t->n_codes = t->names_used = 0;
	t->last_sid = 0;
	for (k = 0; k < t->depth; k++)
		t->stack[k].slot = frame_slot(t, t->stack[k].frame);
	t->busy = 0;
}

/* ---------------------------------------------------------------- the shadow stack */

static struct rec_py *py_new(void)
{
	struct rec_py *t = ms__rec_real.mmap(NULL, sizeof(struct rec_py), PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *s;

	if (t == MAP_FAILED)
		return NULL;
	s = ms__rec_real.mmap(NULL, STACK_FIRST * sizeof(struct py_entry), PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED) {
		ms__rec_real.munmap(t, sizeof(struct rec_py));
		return NULL;
	}
	t->stack = s;
	t->cap = STACK_FIRST;
	return t;
}

/* Room for one more entry: the stack twice as long when full. 0 or -1. */
static int grow(struct rec_py *t)
{
	size_t old = (size_t)t->cap * sizeof(struct py_entry);
	void *s;

	if (t->depth < t->cap)
		return 0;
	s = mremap(t->stack, old, 2 * old, MREMAP_MAYMOVE);
	if (s == MAP_FAILED)
		return -1;
	t->stack = s;
	t->cap *= 2;
	return 0;
}

static void push(struct rec_py *t, void *frame)
{
	struct py_entry e;

	if (grow(t))
		return;
	if (t->depth) /* the caller's line is the call's, until this frame returns */
		t->stack[t->depth - 1].line = py.line(t->stack[t->depth - 1].frame);
	e.slot = frame_slot(t, frame);
	e.line = py.line(frame);
	e.frame = frame;
	py.incref(frame);
	t->stack[t->depth] = e;
	atomic_signal_fence(memory_order_seq_cst);
	t->depth++;
	t->gen++;
}

/* frame returns (or yields): it and what a missed return left above it popped */
static void pop(struct rec_py *t, void *frame)
{
	uint32_t i = t->depth;

	while (i && t->stack[i - 1].frame != frame)
		i--;
	if (!i)
		return; /* a frame that ran before the profile function was installed */
	while (t->depth >= i) {
		void *f = t->stack[t->depth - 1].frame;
		t->depth--;
		t->gen++;
		py.decref(f);
	}
}

/* The profile function: CALL (a call, or a generator or coroutine resumed) and RETURN (a
 * return, a yield, or an exception leaving the frame); the other events cost a return. */
static int profile(void *obj, void *frame, int what, void *arg)
{
	struct rec_py *t = ms__rec_thr.py;

	(void)obj;
	(void)arg;
	if (LIKELY(t != NULL)) {
		if (what == PY_TRACE_CALL)
			push(t, frame);
		else if (what == PY_TRACE_RETURN)
			pop(t, frame);
	}
	return 0;
}

/* The shadow stack emptied, then filled with frame and its callers, outermost first. */
static void prime(struct rec_py *t, void *frame)
{
	void *chain[256];
	unsigned n = 0;

	while (t->depth)
		pop(t, t->stack[t->depth - 1].frame);
	if (frame) {
		py.incref(frame);
		chain[n++] = frame;
		while (n < sizeof(chain) / sizeof(chain[0]) && (frame = frame_back(frame)))
			chain[n++] = frame;
	}
	while (n--) {
		push(t, chain[n]);
		py.decref(chain[n]);
	}
}

/* ---------------------------------------------------------------- the shim's side */

/*
 * Called by the program's sitecustomize through ctypes.PyDLL (so with the GIL held), on the
 * main thread at start-up and on each later thread at its first Python call: frame (a Python
 * frame object, or NULL) and its callers become the thread's shadow stack, and the profile
 * function is installed on the thread. Returns 1, or 0 when not recording Python frames (not
 * recording, --stack without python, no CPython C API in the process, out of memory).
 */
EXPORT int memscope_record_python_start(void *frame)
{
	if (atomic_load(&ms__rec.state) != ST_ON || !ms__rec.python || !find_api())
		return 0;
	if (!ms__rec_thr.py && !(ms__rec_thr.py = py_new()))
		return 0;
	prime(ms__rec_thr.py, frame);
	py.set_profile(profile, NULL);
	return 1;
}

uint32_t ms__rec_py_stack(uint32_t native)
{
	struct rec_py *t = ms__rec_thr.py;
	uintptr_t w[PY_WORDS];
	struct py_entry *top;
	uint32_t i, n = 2, sid;

	if (!t->depth || t->busy)
		return native;
	top = &t->stack[t->depth - 1];
	if (py.gil()) /* only the innermost frame's line moves; without the GIL: the last read */
		top->line = py.line(top->frame);
	if (t->last_sid && t->gen == t->last_gen && top->line == t->last_line &&
		native == t->last_native)
		return t->last_sid;
	w[0] = 1;
	w[1] = native;
	for (i = t->depth; i-- > 0 && n < PY_WORDS;) {
		struct py_entry *e = &t->stack[i];
		struct py_code *c;
		if (e->slot == NO_SLOT)
			continue;
		c = &t->codes[e->slot];
		if (!c->id && !(c->id = ms__rec_py_code(t->names + c->at, c->file_len,
					t->names + c->at + c->file_len, c->func_len)))
			return native;
		w[n++] = c->id;
		w[n++] = (uintptr_t)(e->line > 0 ? e->line : 0);
	}
	if (n == 2 || !(sid = ms__rec_stack_id(w, n, SPOOL_R_PYSTACK)))
		return native;
	t->last_gen = t->gen;
	t->last_line = top->line;
	t->last_native = native;
	t->last_sid = sid;
	return sid;
}

void ms__rec_py_forget(void)
{
	struct rec_py *t = ms__rec_thr.py;
	uint32_t k;

	for (k = 0; k < CODE_SLOTS; k++)
		t->codes[k].id = 0;
	t->last_sid = 0;
}

void ms__rec_py_thread_end(void)
{
	struct rec_py *t = ms__rec_thr.py;

	t->last_sid = 0; /* the thread's stack table is gone */
	if (t->depth)
		return; /* frames still running: the Python thread state outlives this */
	ms__rec_real.munmap(t->stack, (size_t)t->cap * sizeof(struct py_entry));
	ms__rec_real.munmap(t, sizeof(struct rec_py)); /* its codes' references stay: no GIL here */
	ms__rec_thr.py = NULL;
}
