/*
 * The Ascend profiler's timeline (trace_view.json, msprof_*.json; formats/msprof.md): a JSON
 * array of trace events, streamed through the JSON scanner (core/json_scan.h), of which the
 * cpu_op slices, the "NPU MEM" counters and the process names are kept, then delivered in time
 * order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/json_scan.h"
#include "msprof.h"

#define ELEM_MAX ((size_t)64 << 20) /* the longest element read */

/* A cpu_op slice: its op's START at ts_ns and END at end_ns. */
struct slice {
	uint64_t ts_ns, end_ns;
	uint64_t pid, tid; /* MEMSCOPE_ID_NONE when not written */
	uint64_t line;
	uint32_t name, stack;
	uint32_t seq;  /* file order */
	uint32_t file; /* the slice's file (prof_ctx.file): the timeline may come in several */
};

/* A sample of one NPU MEM series. */
struct counter {
	uint64_t ts_ns;
	int64_t used; /* bytes */
	uint64_t pid; /* the msprof pid: its low 5 bits are the device */
	uint64_t line;
	uint32_t name;
	uint32_t seq;
	uint32_t file; /* as the slices' */
};

/* A process_name metadata event: whether the process is "NPU MEM". */
struct pname {
	uint64_t pid;
	uint32_t seq;
	int npu_mem;
};

struct prof_trace {
	struct slice *slices;
	size_t n_slices, cap_slices;
	struct counter *counters;
	size_t n_counters, cap_counters;
};

/* The counter series kept (formats/msprof.md "Timeline"). */
static const char *const series[6] = { "APP/DDR", "APP/HBM", "APP/Memory", "Device/DDR",
	"Device/HBM", "Device/Memory" };

/* The keys of an element read; the rest is skipped. */
enum { K_NAME, K_PH, K_CAT, K_TS, K_DUR, K_PID, K_TID, K_ARGS, N_KEYS };
static const char *const keys[N_KEYS] = { "name", "ph", "cat", "ts", "dur", "pid", "tid", "args" };
enum { A_NAME, A_KB, A_STACK, N_ARGS };
static const char *const arg_keys[N_ARGS] = { "name", "KB", "Call stack" };
static const struct ms__json_keys args_tab = { arg_keys, N_ARGS, -1, NULL };
static const struct ms__json_keys elem_tab = { keys, N_KEYS, K_ARGS, &args_tab };

struct elem {
	struct ms__json_val v[N_KEYS], a[N_ARGS];
	uint64_t line;
};

struct loader {
	struct memscope_source *src;
	struct prof_ctx *c;
	struct memscope_error *err;
	struct prof_trace *t;
	struct pname *pnames;
	size_t n_pnames, cap_pnames;
	struct buf scratch; /* a decoded string */
	struct buf stack;   /* a decoded call stack */
	uint32_t *frames;
	size_t cap_frames;
	uint32_t series_id[6]; /* interned series names, 0 until met */
	uint64_t line;	       /* of the window's first unconsumed byte */
	int cr_before;
	uint64_t n_elems;
	uint64_t first_step_pid, first_op_pid;
	uint64_t n_rounded, first_rounded;
};

/* An element object at p: the values of keys (args' of arg_keys), the rest skipped. */
static int scan_elem(struct ms__json *j, struct elem *e)
{
	memset(e, 0, sizeof(*e));
	e->line = j->line;
	return ms__json_object(j, &elem_tab, e->v, e->a);
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The JSON number s[0..n) as plain decimal text into out (cap bytes): an optional '-', digits,
 * and a point and decimals when it has some; its exponent moves the point, leading zeros and
 * trailing decimal zeros go. 0, PROF_NUM_BAD (not a JSON number) or PROF_NUM_RANGE (too long).
 */
static int num_plain(const char *s, size_t n, char *out, size_t cap, size_t *out_len)
{
	const char *end = s + n, *ip, *fp = NULL;
	size_t ni, nf = 0, nd, k, o = 0;
	long exp = 0, point;
	char digits[128];
	int neg = 0, eneg = 0;

	if (s < end && *s == '-')
		neg = 1, s++;
	ip = s;
	while (s < end && is_digit(*s))
		s++;
	ni = (size_t)(s - ip);
	if (!ni || (ni > 1 && *ip == '0'))
		return PROF_NUM_BAD;
	if (s < end && *s == '.') {
		fp = ++s;
		while (s < end && is_digit(*s))
			s++;
		nf = (size_t)(s - fp);
		if (!nf)
			return PROF_NUM_BAD;
	}
	if (s < end && (*s == 'e' || *s == 'E')) {
		const char *ep;

		s++;
		if (s < end && (*s == '+' || *s == '-'))
			eneg = *s++ == '-';
		ep = s;
		while (s < end && is_digit(*s)) {
			if (exp < 100000)
				exp = exp * 10 + (*s - '0');
			s++;
		}
		if (s == ep)
			return PROF_NUM_BAD;
		if (eneg)
			exp = -exp;
	}
	if (s != end)
		return PROF_NUM_BAD;
	if (ni + nf > sizeof(digits))
		return PROF_NUM_RANGE;
	memcpy(digits, ip, ni);
	if (nf)
		memcpy(digits + ni, fp, nf);
	nd = ni + nf;
	point = (long)ni + exp; /* digits before the point */
	/* leading and trailing zeros */
	for (k = 0; k < nd && digits[k] == '0'; k++)
		point--;
	memmove(digits, digits + k, nd - k);
	nd -= k;
	while (nd && digits[nd - 1] == '0' && (long)nd > point)
		nd--;
	if (!nd) {
		*out_len = 1;
		out[0] = '0';
		return 0;
	}
	if (point > (long)cap || -point > (long)cap || nd + 3 + (size_t)labs(point) > cap)
		return PROF_NUM_RANGE;
	if (neg)
		out[o++] = '-';
	if (point <= 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (k = 0; k < (size_t)-point; k++)
			out[o++] = '0';
		memcpy(out + o, digits, nd);
		o += nd;
	} else if ((size_t)point >= nd) {
		memcpy(out + o, digits, nd);
		o += nd;
		for (k = nd; k < (size_t)point; k++)
			out[o++] = '0';
	} else {
		memcpy(out + o, digits, (size_t)point);
		o += (size_t)point;
		out[o++] = '.';
		memcpy(out + o, digits + point, nd - (size_t)point);
		o += nd - (size_t)point;
	}
	*out_len = o;
	return 0;
}

/* The text of a scalar (a string decoded into the scratch buffer and trimmed); NULL on OOM. */
static const char *value_text(struct loader *L, const struct ms__json_val *v, size_t *len)
{
	if (v->type != MS__JSON_STR || !v->esc) {
		*len = v->len;
		return v->type == MS__JSON_STR ? ms__prof_trim(v->s, len) : v->s;
	}
	L->scratch.len = 0;
	if (ms__json_decode(&L->scratch, v, 0))
		return NULL;
	*len = L->scratch.len;
	return ms__prof_trim(L->scratch.p, len);
}

#define nomem(L) memscope_error_set((L)->err, MEMSCOPE_E_NOMEM, (L)->src->name, 0, "out of memory")

/* Room in *arr (*cap elements of elem bytes, n used) for one more, read at line: at most
 * UINT32_MAX of them ("more than 4294967295 what"). 0 or MEMSCOPE_E_NOMEM (said). */
static int room_for_one(struct loader *L, void *arr, size_t *cap, size_t n, size_t elem,
	uint64_t line, const char *what)
{
	if (n >= UINT32_MAX)
		return memscope_error_set(L->err, MEMSCOPE_E_NOMEM, L->src->name, line,
			"more than %u %s", UINT32_MAX, what);
	if (ms__grow_array(arr, cap, n + 1, elem))
		return nomem(L);
	return 0;
}

/* A time in µs (ts, dur) as exact ns: 0, or the bad row's status (0 when skipped: *skip set). */
static int get_time(struct loader *L, const struct elem *e, int key, uint64_t *ns, int *skip)
{
	const struct ms__json_val *v = &e->v[key];
	const char *s;
	size_t len;
	int rc;

	*skip = 1;
	if (v->type != MS__JSON_STR && v->type != MS__JSON_NUM)
		return ms__source_bad_row(L->src, L->err, e->line,
			v->type == MS__JSON_NONE ? "no %s" : "%s is not a number", keys[key]);
	if (!(s = value_text(L, v, &len)))
		return nomem(L);
	if ((rc = ms__prof_parse_us(s, len, ns)))
		return ms__source_bad_row(L->src, L->err, e->line, "%s \"%.*s\" %s", keys[key],
			CLIP(len), s, ms__prof_num_error(rc));
	*skip = 0;
	return 0;
}

/* A pid or tid: an integer, as a number or a string; MEMSCOPE_ID_NONE when not written. */
static int get_id(struct loader *L, const struct elem *e, int key, uint64_t *id, int *skip)
{
	const struct ms__json_val *v = &e->v[key];
	const char *s;
	char plain[64];
	size_t len, n;

	*id = MEMSCOPE_ID_NONE;
	*skip = 0;
	if (v->type == MS__JSON_NONE)
		return 0;
	if (v->type != MS__JSON_STR && v->type != MS__JSON_NUM)
		s = "", len = 0;
	else if (!(s = value_text(L, v, &len)))
		return nomem(L);
	if (v->type == MS__JSON_OTHER || num_plain(s, len, plain, sizeof(plain), &n) ||
		ms__parse_u64(plain, n, id)) {
		*skip = 1;
		return ms__source_bad_row(L->src, L->err, e->line, "%s \"%.*s\" is not an integer",
			keys[key], CLIP(len), s);
	}
	return 0;
}

/* The string of a name (decoded) interned into *id: MEMSCOPE_STR_NA when not written. */
static int get_name(struct loader *L, const struct ms__json_val *v, uint32_t *id)
{
	const char *s = v->s;
	size_t len = v->len;

	*id = MEMSCOPE_STR_NA;
	if (v->type != MS__JSON_STR)
		return 0;
	if (v->esc) {
		L->scratch.len = 0;
		if (ms__json_decode(&L->scratch, v, 0))
			return nomem(L);
		s = L->scratch.p, len = L->scratch.len;
	}
	return memscope_strtab_intern(L->src->st, s, len, id) ? nomem(L) : 0;
}

/*
 * torch's "Call stack": frames separated by ';' and a line end (";\r\n", ";\n"), innermost
 * first, interned as a stack (0 when it has no frame).
 */
static int get_stack(struct loader *L, const struct ms__json_val *v, uint32_t *id)
{
	const char *p, *end, *semi;
	size_t nf = 0;

	*id = 0;
	if (v->type != MS__JSON_STR || !v->len)
		return 0;
	p = v->s;
	end = v->s + v->len;
	if (v->esc) {
		L->stack.len = 0;
		if (ms__json_decode(&L->stack, v, 0))
			return nomem(L);
		p = L->stack.p;
		end = p + L->stack.len;
	}
	while (p < end) {
		const char *fe = end, *next = end;

		for (semi = p; (semi = memchr(semi, ';', (size_t)(end - semi))); semi++)
			if (semi + 1 < end && (semi[1] == '\n' || semi[1] == '\r')) {
				fe = semi;
				next = semi + 2 +
				       (semi[1] == '\r' && semi + 2 < end && semi[2] == '\n');
				break;
			}
		if (fe > p) {
			if (ms__grow_array(
				    &L->frames, &L->cap_frames, nf + 1, sizeof(*L->frames)) ||
				memscope_strtab_intern(
					L->src->st, p, (size_t)(fe - p), &L->frames[nf]))
				return nomem(L);
			nf++;
		}
		p = next;
	}
	if (nf && memscope_strtab_intern_stack(L->src->st, L->frames, nf, id))
		return nomem(L);
	return 0;
}

static int keep_slice(struct loader *L, const struct elem *e)
{
	struct prof_trace *t = L->t;
	struct slice s = { 0 };
	uint64_t dur;
	int rc, skip;

	if ((rc = get_time(L, e, K_TS, &s.ts_ns, &skip)) || skip)
		return rc;
	if ((rc = get_time(L, e, K_DUR, &dur, &skip)) || skip)
		return rc;
	if (__builtin_add_overflow(s.ts_ns, dur, &s.end_ns))
		return ms__source_bad_row(L->src, L->err, e->line, "ts + dur is out of range");
	if ((rc = get_id(L, e, K_PID, &s.pid, &skip)) || skip)
		return rc;
	if ((rc = get_id(L, e, K_TID, &s.tid, &skip)) || skip)
		return rc;
	if ((rc = get_name(L, &e->v[K_NAME], &s.name)) ||
		(rc = get_stack(L, &e->a[A_STACK], &s.stack)))
		return rc;
	if ((rc = room_for_one(L, &t->slices, &t->cap_slices, t->n_slices, sizeof(*t->slices),
		     e->line, "slices")))
		return rc;
	s.line = e->line;
	s.file = L->c->file;
	s.seq = (uint32_t)t->n_slices;
	t->slices[t->n_slices++] = s;
	if (s.pid != MEMSCOPE_ID_NONE) {
		if (L->first_op_pid == MEMSCOPE_ID_NONE)
			L->first_op_pid = s.pid;
		size_t len;
		const char *name = memscope_strtab_str(L->src->st, s.name, &len);

		if (L->first_step_pid == MEMSCOPE_ID_NONE && len >= 13 &&
			memcmp(name, "ProfilerStep#", 13) == 0)
			L->first_step_pid = s.pid;
	}
	return 0;
}

static int keep_counter(struct loader *L, const struct elem *e, int which)
{
	struct prof_trace *t = L->t;
	const struct ms__json_val *kb = &e->a[A_KB];
	struct counter k = { 0 };
	char plain[128];
	const char *s, *dot;
	size_t len, n;
	int rc, skip, exact;

	if ((rc = get_time(L, e, K_TS, &k.ts_ns, &skip)) || skip)
		return rc;
	if ((rc = get_id(L, e, K_PID, &k.pid, &skip)) || skip)
		return rc;
	if (kb->type != MS__JSON_STR && kb->type != MS__JSON_NUM)
		return ms__source_bad_row(L->src, L->err, e->line, "counter %s: args.KB %s",
			series[which], kb->type == MS__JSON_NONE ? "missing" : "is not a number");
	if (!(s = value_text(L, kb, &len)))
		return nomem(L);
	rc = num_plain(s, len, plain, sizeof(plain), &n);
	/* decimals past the 30th are below a byte: ms__prof_parse_bytes takes 30 */
	if (!rc && (dot = memchr(plain, '.', n)) && n - (size_t)(dot + 1 - plain) > 30)
		n = (size_t)(dot + 1 - plain) + 30;
	if (!rc)
		rc = ms__prof_parse_bytes(plain, n, 1024, &k.used, &exact);
	if (rc)
		return ms__source_bad_row(L->src, L->err, e->line,
			"counter %s: args.KB \"%.*s\" %s", series[which], CLIP(len), s,
			ms__prof_num_error(rc));
	if (!exact && L->n_rounded++ == 0)
		L->first_rounded = e->line;
	if (!L->series_id[which] && memscope_strtab_intern(L->src->st, series[which],
					    strlen(series[which]), &L->series_id[which]))
		return nomem(L);
	if ((rc = room_for_one(L, &t->counters, &t->cap_counters, t->n_counters,
		     sizeof(*t->counters), e->line, "counters")))
		return rc;
	k.name = L->series_id[which];
	k.line = e->line;
	k.file = L->c->file;
	k.seq = (uint32_t)t->n_counters;
	t->counters[t->n_counters++] = k;
	return 0;
}

static int keep_pname(struct loader *L, const struct elem *e)
{
	uint64_t pid;
	int rc, skip;

	if ((rc = get_id(L, e, K_PID, &pid, &skip)) || skip || pid == MEMSCOPE_ID_NONE)
		return rc;
	if ((rc = room_for_one(L, &L->pnames, &L->cap_pnames, L->n_pnames, sizeof(*L->pnames),
		     e->line, "process names")))
		return rc;
	L->pnames[L->n_pnames].pid = pid;
	L->pnames[L->n_pnames].seq = (uint32_t)L->n_pnames;
	L->pnames[L->n_pnames].npu_mem = ms__json_str_eq(&e->a[A_NAME], "NPU MEM");
	L->n_pnames++;
	return 0;
}

/* What of a whole element is kept. 0 or the status to stop with. */
static int keep(struct loader *L, const struct elem *e)
{
	const struct ms__json_val *ph = &e->v[K_PH];
	int i;

	if (ms__json_str_eq(ph, "X")) {
		if (ms__json_str_eq(&e->v[K_CAT], "cpu_op"))
			return keep_slice(L, e);
	} else if (ms__json_str_eq(ph, "C")) {
		for (i = 0; i < 6; i++)
			if (ms__json_str_eq(&e->v[K_NAME], series[i]))
				return keep_counter(L, e, i);
	} else if (ms__json_str_eq(ph, "M")) {
		if (ms__json_str_eq(&e->v[K_NAME], "process_name"))
			return keep_pname(L, e);
	}
	return 0;
}

/* The top level: where the scanner is in the array. */
enum top { T_START, T_FIRST, T_ELEM, T_NEXT, T_AFTER };

/*
 * One step of the top level from j->p: whitespace, then the next token or element (kept).
 * MS__JSON_OK, MS__JSON_END (*in_elem set when the input ends inside an element), MS__JSON_BAD, or
 * a status (< 0).
 */
static int top_step(struct loader *L, struct ms__json *j, enum top *state, int *in_elem)
{
	struct elem e;
	int rc, closed;

	if (*state == T_START && j->end - j->p >= 1 && (unsigned char)*j->p == 0xef) {
		/* a UTF-8 byte order mark */
		if (j->end - j->p < 3)
			return MS__JSON_END;
		if (memcmp(j->p, "\xef\xbb\xbf", 3))
			return ms__json_bad(j, "not a JSON array ('[' expected)");
		j->p += 3;
	}
	ms__json_skip_ws(j);
	if (j->p == j->end)
		return MS__JSON_END;
	switch (*state) {
	case T_START:
		if (*j->p != '[')
			return ms__json_bad(j, "not a JSON array ('[' expected)");
		j->p++;
		*state = T_FIRST;
		return MS__JSON_OK;
	case T_NEXT:
		if ((rc = ms__json_comma_or(
			     j, ']', "',' or ']' expected after an element", &closed)))
			return rc;
		*state = closed ? T_AFTER : T_ELEM;
		return MS__JSON_OK;
	case T_AFTER:
		return ms__json_bad(j, "data after the closing ']'");
	case T_FIRST:
	case T_ELEM:
		if (*j->p == ']') {
			if (*state == T_ELEM)
				return ms__json_bad(j, "']' after a ',' (an element expected)");
			j->p++;
			*state = T_AFTER;
			return MS__JSON_OK;
		}
		break;
	}
	*in_elem = 1;
	j->elem = j->p;
	j->elem_line = j->line;
	if (*j->p != '{') {
		if ((rc = ms__json_skip_value(j)))
			return rc;
		L->n_elems++;
		*state = T_NEXT;
		return ms__source_bad_row(L->src, L->err, j->elem_line,
			"element %llu is not an object", (unsigned long long)L->n_elems);
	}
	if ((rc = scan_elem(j, &e)))
		return rc;
	L->n_elems++;
	*state = T_NEXT;
	return keep(L, &e);
}

/* More input behind the element being read, at least twice what is left of it (so an element
 * spread over many chunks is scanned a few times at most). */
static int more_input(struct loader *L, struct window *w)
{
	size_t want = 2 * (w->len - w->start);
	int rc;

	if (w->start)
		L->cr_before = w->data[w->start - 1] == '\r';
	do {
		if (w->len - w->start > ELEM_MAX)
			return memscope_error_set(L->err, MEMSCOPE_E_INVALID, L->src->name, L->line,
				"an element longer than %zu MiB", ELEM_MAX >> 20);
		if ((rc = ms__window_fill(w, L->src, SIZE_MAX, L->err)))
			return rc;
	} while (!w->final && w->len - w->start < want);
	return 0;
}

static int cmp_pname(const void *a, const void *b)
{
	const struct pname *x = a, *y = b;
	int c = MS__CMP(x->pid, y->pid);

	return c ? c : MS__CMP(x->seq, y->seq);
}

/* The counters from the from-th on (this file's) of processes named otherwise than "NPU MEM" left
 * out (the last name of a process is its name); their count. */
static uint64_t filter_counters(struct loader *L, size_t from)
{
	struct prof_trace *t = L->t;
	size_t i, n = from;

	if (!L->n_pnames)
		return 0;
	qsort(L->pnames, L->n_pnames, sizeof(*L->pnames), cmp_pname);
	for (i = from; i < t->n_counters; i++) {
		size_t lo = 0, hi = L->n_pnames;

		/* the first name of a greater pid, then the one before it */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (L->pnames[mid].pid <= t->counters[i].pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && L->pnames[lo - 1].pid == t->counters[i].pid && !L->pnames[lo - 1].npu_mem)
			continue;
		t->counters[n++] = t->counters[i];
	}
	i = t->n_counters - n;
	t->n_counters = n;
	return i;
}

int ms__prof_trace_load(struct prof_trace **out, struct memscope_source *src, struct prof_ctx *c,
	struct memscope_error *err)
{
	struct loader L = { 0 };
	struct window w;
	enum top state = T_START;
	uint64_t n_left;
	size_t from;
	int rc;

	/* the slices before (owned here until the end: freed with the rest on failure) */
	L.t = *out;
	*out = NULL;
	L.src = src;
	L.c = c;
	L.err = err;
	L.line = 1;
	L.first_step_pid = L.first_op_pid = MEMSCOPE_ID_NONE;
	if (!L.t && !(L.t = calloc(1, sizeof(*L.t))))
		return nomem(&L);
	from = L.t->n_counters;
	if ((rc = ms__window_open(&w, src, err)))
		goto out;
	for (;;) {
		struct ms__json j = { .p = w.data + w.start,
			.end = w.data + w.len,
			.data = w.data,
			.cr_before = L.cr_before,
			.line = L.line };
		int in_elem = 0;

		rc = top_step(&L, &j, &state, &in_elem);
		/* what is read is consumed; of an element cut short, the whitespace before it */
		if (rc == MS__JSON_OK || (rc == MS__JSON_END && !in_elem)) {
			w.start = (size_t)(j.p - w.data);
			L.line = j.line;
		} else if (rc == MS__JSON_END) {
			w.start = (size_t)(j.elem - w.data);
			L.line = j.elem_line;
		}
		if (rc == MS__JSON_OK)
			continue;
		if (rc == MS__JSON_BAD) {
			rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, j.line,
				"invalid JSON: %s", j.bad);
			goto out;
		}
		if (rc != MS__JSON_END)
			goto out; /* a bad element in strict mode, out of memory */
		if (!w.final) {
			if ((rc = more_input(&L, &w)))
				goto out;
			continue;
		}
		rc = 0;
		if (state == T_START) {
			rc = memscope_error_set(err, MEMSCOPE_E_INVALID, src->name, j.line,
				"no JSON array (an empty file?)");
		} else if (in_elem) {
			struct memscope_error cut;

			memscope_error_set(&cut, MEMSCOPE_E_TRUNCATED, src->name, j.elem_line,
				"truncated timeline: the file ends inside this element "
				"(after %llu whole ones)",
				(unsigned long long)L.n_elems);
			if (src->opts.lenient) {
				src->stats.cut = cut; /* the elements before it are whole */
			} else {
				rc = MEMSCOPE_E_TRUNCATED;
				if (err)
					*err = cut;
			}
		}
		break;
	}
	if (rc)
		goto out;
	n_left = filter_counters(&L, from);
	if (c->pid == MEMSCOPE_ID_NONE)
		c->pid = L.first_step_pid != MEMSCOPE_ID_NONE ? L.first_step_pid : L.first_op_pid;
	if (n_left)
		ms__source_notice(src,
			"%llu memory counter%s left out: their process is not \"NPU MEM\"",
			(unsigned long long)n_left, n_left == 1 ? "" : "s");
	if (L.n_rounded)
		ms__source_notice(src,
			"%llu counter value%s rounded to whole bytes (the exporter rounded the KB "
			"figure; first at %s:%llu)",
			(unsigned long long)L.n_rounded, L.n_rounded == 1 ? "" : "s", src->name,
			(unsigned long long)L.first_rounded);
	*out = L.t;
	L.t = NULL;
out:
	ms__window_close(&w);
	ms__prof_trace_free(L.t);
	free(L.pnames);
	free(L.frames);
	ms__buf_free(&L.scratch);
	ms__buf_free(&L.stack);
	return rc;
}

/* Slices by start, the longer first (so nested slices open outside in), then in file order. */
static int cmp_start(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	int c = MS__CMP(x->ts_ns, y->ts_ns);

	c = c ? c : MS__CMP(y->end_ns, x->end_ns);
	return c ? c : MS__CMP(x->seq, y->seq);
}

/* An END: the slice's end and its place in start order. */
struct end_ref {
	uint64_t end_ns;
	uint32_t rank;
};

/* ENDs by time, the later started first (so nested slices close inside out). */
static int cmp_end(const void *a, const void *b)
{
	const struct end_ref *x = a, *y = b;
	int c = MS__CMP(x->end_ns, y->end_ns);

	return c ? c : MS__CMP(y->rank, x->rank);
}

static int cmp_counter(const void *a, const void *b)
{
	const struct counter *x = a, *y = b;
	int c = MS__CMP(x->ts_ns, y->ts_ns);

	return c ? c : MS__CMP(x->seq, y->seq);
}

static int emit_op(struct memscope_source *src, struct prof_ctx *c, memscope_event_fn fn, void *ctx,
	const struct slice *s, int end, struct memscope_error *err)
{
	struct memscope_event ev = { 0 };

	ev.kind = MEMSCOPE_KIND_OP_LAUNCH;
	ev.subtype = end ? MEMSCOPE_SUB_ATEN_END : MEMSCOPE_SUB_ATEN_START;
	ev.ts_ns = end ? s->end_ns : s->ts_ns;
	ev.pid = s->pid;
	ev.tid = s->tid;
	ev.device = c->device;
	ev.name = s->name;
	ev.stack_py = end ? 0 : s->stack;
	ev.line = s->line;
	ev.file = s->file;
	return ms__prof_deliver(src, c, fn, ctx, &ev, err);
}

static int emit_counter(struct memscope_source *src, struct prof_ctx *c, memscope_event_fn fn,
	void *ctx, const struct counter *k, struct memscope_error *err)
{
	struct memscope_event ev = { 0 };
	struct memscope_attr a;
	char text[24];

	ev.kind = MEMSCOPE_KIND_COUNTER;
	ev.subtype = MEMSCOPE_SUB_NPU_MEM;
	ev.ts_ns = k->ts_ns;
	ev.pid = MEMSCOPE_ID_NONE; /* the output's (ms__prof_deliver) */
	ev.tid = MEMSCOPE_ID_NONE;
	/* msprof's pid: the device in its low 5 bits, 31 the host */
	ev.device = k->pid == MEMSCOPE_ID_NONE ? MEMSCOPE_DEVICE_NONE
		    : (k->pid & 31) == 31      ? MEMSCOPE_DEVICE_HOST
					       : (int32_t)(k->pid & 31);
	ev.name = k->name;
	ev.used = k->used;
	ev.flags = MEMSCOPE_EV_USED | MEMSCOPE_EV_ATTR;
	a.key = MEMSCOPE_STR_USED;
	a.val = text;
	a.val_len = (uint32_t)ms__fmt_i64(text, k->used);
	ev.attrs = &a;
	ev.n_attrs = 1;
	ev.line = k->line;
	ev.file = k->file;
	return ms__prof_deliver(src, c, fn, ctx, &ev, err);
}

int ms__prof_trace_emit(struct prof_trace *t, struct memscope_source *src, struct prof_ctx *c,
	memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct end_ref *ends = NULL;
	size_t i, s = 0, e = 0, k = 0, n_ends = 0;
	int rc = 0;

	if (!t)
		return 0;
	if (t->n_slices)
		qsort(t->slices, t->n_slices, sizeof(*t->slices), cmp_start);
	if (t->n_counters)
		qsort(t->counters, t->n_counters, sizeof(*t->counters), cmp_counter);
	if (t->n_slices && !(ends = malloc(t->n_slices * sizeof(*ends)))) {
		rc = memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
		goto out;
	}
	/* a slice of no duration ends right after it starts */
	for (i = 0; i < t->n_slices; i++)
		if (t->slices[i].end_ns != t->slices[i].ts_ns)
			ends[n_ends++] = (struct end_ref){ t->slices[i].end_ns, (uint32_t)i };
	if (n_ends)
		qsort(ends, n_ends, sizeof(*ends), cmp_end);
	/* at one time: ENDs, then counters, then STARTs */
	while (!rc && (s < t->n_slices || e < n_ends || k < t->n_counters)) {
		int which = -1;
		uint64_t at = 0;

		if (e < n_ends)
			which = 0, at = ends[e].end_ns;
		if (k < t->n_counters && (which < 0 || t->counters[k].ts_ns < at))
			which = 1, at = t->counters[k].ts_ns;
		if (s < t->n_slices && (which < 0 || t->slices[s].ts_ns < at))
			which = 2;
		if (which == 0) {
			rc = emit_op(src, c, fn, ctx, &t->slices[ends[e++].rank], 1, err);
		} else if (which == 1) {
			rc = emit_counter(src, c, fn, ctx, &t->counters[k++], err);
		} else {
			const struct slice *sl = &t->slices[s++];

			rc = emit_op(src, c, fn, ctx, sl, 0, err);
			if (!rc && sl->end_ns == sl->ts_ns)
				rc = emit_op(src, c, fn, ctx, sl, 1, err);
		}
	}
out:
	free(ends);
	ms__prof_trace_free(t);
	return rc;
}

void ms__prof_trace_free(struct prof_trace *t)
{
	if (!t)
		return;
	free(t->slices);
	free(t->counters);
	free(t);
}

int ms__prof_trace_sniff(const unsigned char *p, size_t n, int eof)
{
	const char *s = (const char *)p, *end = s + n;
	struct ms__json j = { 0 };
	struct elem e;
	int rc;

	(void)eof;
	if (!ms__sniff_text(p, n))
		return 0;
	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	j.p = j.data = s;
	j.end = end;
	ms__json_skip_ws(&j);
	if (j.p == end || *j.p != '[')
		return 0;
	j.p++;
	ms__json_skip_ws(&j);
	if (j.p == end || *j.p != '{')
		return 0;
	s = j.p;
	rc = scan_elem(&j, &e);
	if (e.v[K_PH].type != MS__JSON_NONE)
		return 1;
	/* the first element goes on past what is there */
	return rc == MS__JSON_END && memmem(s, (size_t)(end - s), "\"ph\"", 4) != NULL;
}

static int json_sniff(
	const unsigned char *p, size_t n, int eof, const char *name, struct memscope_error *err)
{
	(void)name, (void)err;
	return ms__prof_trace_sniff(p, n, eof);
}

static int json_read(
	struct memscope_source *src, memscope_event_fn fn, void *ctx, struct memscope_error *err)
{
	struct prof_trace *t = NULL;
	struct prof_ctx c;
	int rc;

	ms__prof_ctx_init(&c);
	rc = ms__prof_trace_load(&t, src, &c, err);
	if (!rc)
		rc = ms__prof_trace_emit(t, src, &c, fn, ctx, err);
	return rc;
}

const struct reader ms__msprof_json_reader = {
	.format = MEMSCOPE_FORMAT_MSPROF_JSON,
	.name = "msprof-json",
	.what = "an Ascend profiler timeline",
	.sniff = json_sniff,
	.read = json_read,
	.without_accesses = "an Ascend profiler output",
	.end = READER_END_PROFILE,
};
