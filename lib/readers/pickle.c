/* The pickle machine of pickle.h: the data opcodes of protocols 2 to 5 run over the source's
 * window, every other opcode refused (formats/torch-snapshot.md "The pickle subset"). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pickle.h"

#define PK_MAX_STACK (1u << 20) /* values on the stack */
#define PK_MAX_MARKS (1u << 16) /* open marks */
#define PK_MAX_HELD (1u << 23)	/* items, memo entries of containers, boxes */
#define PK_MAX_STR (64u << 20)	/* bytes of one string or bytes value */
#define PK_MAX_FRAME (UINT64_C(1) << 32)
#define PK_ID_MAX ((1u << 28) - 1) /* ids a memo entry can hold (28 bits) */
#define PK_SPARE_CLASSES 17	   /* item arrays of 2^0 .. 2^16 values kept for reuse */

/* A memo entry: a tag in its low 4 bits, an id above them. A memoized scalar is a box: 16 bytes
 * in the boxes array, not a node (a pickle of MEMOIZE after MEMOIZE costs what it holds). */
enum memo_tag {
	M_NONE,
	M_STR,
	M_BYTES,
	M_NODE,
	M_PAIR,
	M_FRAME0,
	M_FRAME1,
	M_FRAME2,
	M_GONE,
	M_BOX
};
#define MEMO(tag, id) ((uint32_t)(tag) | (uint32_t)(id) << 4)
#define MEMO_TAG(m) ((m)&15)
#define MEMO_ID(m) ((m) >> 4)

struct pk {
	struct memscope_source *src;
	struct memscope_error *err;
	struct window w;
	int w_open;
	uint64_t off;	    /* file offset of w.data + w.start */
	uint64_t op_off;    /* offset of the opcode running */
	uint64_t frame_end; /* where the last FRAME ends (0: none) */
	uint64_t frame_off;
	struct pk_hooks hooks;
	struct pk_val *stack;
	uint64_t *stack_off; /* where each value on the stack began (for the root hook) */
	size_t sp, cap, cap_off;
	size_t *marks; /* stack heights at each MARK */
	size_t n_marks, cap_marks;
	uint32_t *memo;
	size_t n_memo, cap_memo;
	struct ms__pk_node *nodes;
	size_t n_nodes, cap_nodes;
	uint32_t free_node; /* first free node (linked through aux), PK_NO_MEMO: none */
	size_t held;
	struct pk_val *boxes; /* memoized scalars; a free one is linked through id */
	size_t n_boxes, cap_boxes;
	uint32_t free_box; /* PK_NO_MEMO: none */
	uint32_t *dying;   /* nodes whose last reference went: freed in a loop, not by recursion */
	size_t n_dying, cap_dying;
	struct pk_val *spare[PK_SPARE_CLASSES]; /* linked through items[0].i */
};

static int fail(struct pk *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct pk *p, int code, const char *fmt, ...)
{
	char msg[MEMSCOPE_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return memscope_error_set_offset(p->err, code, p->src->name, p->op_off, "%s", msg);
}

static int nomem(struct pk *p)
{
	return fail(p, MEMSCOPE_E_NOMEM, "out of memory");
}

uint64_t ms__pk_offset(const struct pk *p)
{
	return p->op_off;
}

struct ms__pk_node *ms__pk_node(struct pk *p, uint32_t id)
{
	return &p->nodes[id];
}

/* ---- item arrays and nodes ---- */

static unsigned spare_class(uint32_t cap)
{
	unsigned k = 0;

	while ((1u << k) < cap)
		k++;
	return k;
}

/* An array of cap values (a power of two), reused when one is spare. NULL on OOM. */
static struct pk_val *items_get(struct pk *p, uint32_t cap)
{
	unsigned k = spare_class(cap);
	struct pk_val *a;

	if (k < PK_SPARE_CLASSES && (a = p->spare[k])) {
		p->spare[k] = (struct pk_val *)(uintptr_t)a[0].i;
		return a;
	}
	return malloc((size_t)cap * sizeof(*a));
}

static void items_put(struct pk *p, struct pk_val *a, uint32_t cap)
{
	unsigned k = spare_class(cap);

	if (!a)
		return;
	if (k >= PK_SPARE_CLASSES || (1u << k) != cap) {
		free(a);
		return;
	}
	a[0].i = (int64_t)(uintptr_t)p->spare[k];
	p->spare[k] = a;
}

/* A new node of kind with one reference into *id. 0 or an error. */
static int node_new(struct pk *p, uint8_t kind, uint32_t *id)
{
	struct ms__pk_node *n;

	/* at the limit no container can be filled or kept: refused here, the nodes stay bounded */
	if (p->held >= PK_MAX_HELD)
		return fail(p, MEMSCOPE_E_INVALID, "holds more than %u values besides its records",
			PK_MAX_HELD);
	if (p->free_node != PK_NO_MEMO) {
		*id = p->free_node;
		p->free_node = p->nodes[*id].aux;
	} else {
		if (p->n_nodes >= PK_ID_MAX)
			return fail(p, MEMSCOPE_E_INVALID, "more than %u containers", PK_ID_MAX);
		if (ms__grow_array(&p->nodes, &p->cap_nodes, p->n_nodes + 1, sizeof(*p->nodes)))
			return nomem(p);
		*id = (uint32_t)p->n_nodes++;
	}
	n = &p->nodes[*id];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->refs = 1;
	n->memo = PK_NO_MEMO;
	return 0;
}

/* Append v to node id (its reference moves in). 0 or an error. */
static int node_add(struct pk *p, uint32_t id, const struct pk_val *v)
{
	struct ms__pk_node *n = &p->nodes[id];

	if (n->n < n->cap && p->held < PK_MAX_HELD) { /* the common case, first */
		n->items[n->n++] = *v;
		p->held++;
		return 0;
	}
	if (p->held >= PK_MAX_HELD)
		return fail(p, MEMSCOPE_E_INVALID, "holds more than %u values besides its records",
			PK_MAX_HELD);
	if (n->n == n->cap) {
		/* from 1: a hostile nest of one-item lists costs 16 bytes an item, not 64 */
		uint32_t cap = n->cap ? n->cap * 2 : 1;
		struct pk_val *a = items_get(p, cap);

		if (!a)
			return nomem(p);
		if (n->n)
			memcpy(a, n->items, n->n * sizeof(*a));
		items_put(p, n->items, n->cap);
		n->items = a;
		n->cap = cap;
	}
	n->items[n->n++] = *v;
	p->held++;
	return 0;
}

static void unref(struct pk *p, uint32_t id);

/* What the memo keeps in place of a node the reader turned into a value (ms__pk_node_done). */
static uint32_t done_memo(const struct ms__pk_node *n)
{
	if (n->done == PK_PAIR)
		return MEMO(M_PAIR, n->aux);
	return MEMO(M_FRAME0 + (n->flag > 2 ? 2 : n->flag), n->aux);
}

/* One reference to node id gone: the node is freed, its references with it, when none is left;
 * one only the memo holds that the reader turned into a value becomes that value in the memo. */
static void unref(struct pk *p, uint32_t id)
{
	struct ms__pk_node *n = &p->nodes[id];

	if (--n->refs == 1 && n->done && n->memo != PK_NO_MEMO) {
		p->memo[n->memo] = done_memo(n);
		n->memo = PK_NO_MEMO;
		p->held--;
		n->refs = 0;
	}
	if (n->refs)
		return;
	/* room for it was made when the node was made (ms__pk_read keeps cap_dying >= n_nodes) */
	p->dying[p->n_dying++] = id;
}

/* Free the nodes of the dying list and those their freeing lets go. */
static void reap(struct pk *p)
{
	while (p->n_dying) {
		uint32_t id = p->dying[--p->n_dying], i;
		struct ms__pk_node *n = &p->nodes[id];

		for (i = 0; i < n->n; i++)
			if (n->items[i].type == PK_NODE)
				unref(p, n->items[i].id);
		n = &p->nodes[id];
		p->held -= n->n;
		items_put(p, n->items, n->cap);
		n->items = NULL;
		n->n = n->cap = 0;
		n->aux = p->free_node;
		p->free_node = id;
	}
}

static void drop(struct pk *p, const struct pk_val *v)
{
	if (v->type == PK_NODE) {
		unref(p, v->id);
		reap(p);
	}
}

/* Let the items of node id go, their references with them. */
static void release(struct pk *p, uint32_t id)
{
	struct ms__pk_node *n = &p->nodes[id];
	struct pk_val *items = n->items;
	uint32_t i, count = n->n, cap = n->cap;

	n->items = NULL;
	n->n = n->cap = 0;
	p->held -= count;
	for (i = 0; i < count; i++)
		if (items[i].type == PK_NODE)
			unref(p, items[i].id);
	items_put(p, items, cap);
	reap(p);
}

int ms__pk_node_done(struct pk *p, uint32_t id, uint8_t type, uint32_t aux, uint8_t flag)
{
	struct ms__pk_node *n = &p->nodes[id];

	if (aux > PK_ID_MAX)
		return fail(p, MEMSCOPE_E_INVALID, "more than %u stacks or frames", PK_ID_MAX);
	/* one let go while the reader read it (a hostile frames list holding the dict that holds
	 * it) is on the free list, linked through aux: left as it is, as is one already done */
	if (!n->refs || n->done)
		return 0;
	n->done = type;
	n->aux = aux;
	n->flag = flag;
	release(p, id);
	return 0;
}

const struct pk_val *ms__pk_dict_get(struct pk *p, const struct ms__pk_node *dict, uint32_t key)
{
	uint32_t i;

	(void)p;
	for (i = dict->n & ~1u; i >= 2; i -= 2)
		if (dict->items[i - 2].type == PK_STR && dict->items[i - 2].id == key)
			return &dict->items[i - 1];
	return NULL;
}

/* ---- the stack, marks and memo ---- */

static int push(struct pk *p, const struct pk_val *v)
{
	if (p->sp < p->cap) { /* the common case, first */
		p->stack_off[p->sp] = p->op_off;
		p->stack[p->sp++] = *v;
		return 0;
	}
	if (p->sp >= PK_MAX_STACK)
		return fail(
			p, MEMSCOPE_E_INVALID, "more than %u values on the stack", PK_MAX_STACK);
	if (ms__grow_array(&p->stack_off, &p->cap_off, p->sp + 1, sizeof(*p->stack_off)) ||
		ms__grow_array(&p->stack, &p->cap, p->sp + 1, sizeof(*p->stack)))
		return nomem(p);
	p->stack_off[p->sp] = p->op_off;
	p->stack[p->sp++] = *v;
	return 0;
}

/* The height of the stack above which values may be popped (the top mark's). */
static size_t floor_of(const struct pk *p)
{
	return p->n_marks ? p->marks[p->n_marks - 1] : 0;
}

/* Whether the n values on top lie above the top mark. */
static int have(struct pk *p, size_t n, const char *op)
{
	if (p->sp - floor_of(p) >= n)
		return 1;
	fail(p, MEMSCOPE_E_INVALID, "%s needs %zu value%s on the stack", op, n, n == 1 ? "" : "s");
	return 0;
}

/* Pop the top mark into *at (the stack height it marked). 0 or an error. */
static int pop_mark(struct pk *p, size_t *at, const char *op)
{
	if (!p->n_marks)
		return fail(p, MEMSCOPE_E_INVALID, "%s without a MARK", op);
	*at = p->marks[--p->n_marks];
	return 0;
}

/* The node of stack value at, when it is a container of kind; NULL (err set) when not. */
static struct ms__pk_node *container_at(struct pk *p, size_t at, uint8_t kind, const char *op)
{
	static const char *const kinds[] = { "list", "dict" };

	if (at < p->sp && p->stack[at].type == PK_NODE && p->nodes[p->stack[at].id].kind == kind &&
		!p->nodes[p->stack[at].id].done)
		return &p->nodes[p->stack[at].id];
	fail(p, MEMSCOPE_E_INVALID, "%s: not a %s below its values", op, kinds[kind]);
	return NULL;
}

/* A box holding scalar v into *id (one value held). 0 or an error. */
static int box_new(struct pk *p, const struct pk_val *v, uint32_t *id)
{
	if (p->held >= PK_MAX_HELD)
		return fail(p, MEMSCOPE_E_INVALID, "holds more than %u values besides its records",
			PK_MAX_HELD);
	if (p->free_box != PK_NO_MEMO) {
		*id = p->free_box;
		p->free_box = p->boxes[*id].id;
	} else {
		if (ms__grow_array(&p->boxes, &p->cap_boxes, p->n_boxes + 1, sizeof(*p->boxes)))
			return nomem(p);
		*id = (uint32_t)p->n_boxes++;
	}
	p->boxes[*id] = *v;
	p->held++;
	return 0;
}

static void box_free(struct pk *p, uint32_t id)
{
	p->boxes[id].id = p->free_box;
	p->free_box = id;
	p->held--;
}

static int memo_set(struct pk *p, uint64_t idx, const struct pk_val *v)
{
	uint32_t m, box = 0;
	int rc;

	if (idx > p->n_memo)
		return fail(p, MEMSCOPE_E_INVALID, "memo index %llu put before index %zu",
			(unsigned long long)idx, p->n_memo);
	if (idx == p->n_memo) {
		if (idx >= UINT32_MAX - 1)
			return fail(p, MEMSCOPE_E_INVALID, "too many memo entries");
		if (ms__grow_array(&p->memo, &p->cap_memo, p->n_memo + 1, sizeof(*p->memo)))
			return nomem(p);
		p->memo[p->n_memo++] = M_NONE;
	}
	if (MEMO_TAG(p->memo[idx]) == M_BOX) { /* put again: the old value let go */
		box_free(p, MEMO_ID(p->memo[idx]));
		p->memo[idx] = M_NONE;
	}
	if (MEMO_TAG(p->memo[idx]) == M_NODE) {
		uint32_t old = MEMO_ID(p->memo[idx]);

		if (p->nodes[old].memo == idx)
			p->nodes[old].memo = PK_NO_MEMO;
		p->memo[idx] = M_NONE;
		p->held--;
		unref(p, old);
		reap(p);
	}
	switch (v->type) {
	case PK_STR:
	case PK_BYTES:
	case PK_PAIR:
	case PK_FRAME:
		if (v->id > PK_ID_MAX)
			return fail(
				p, MEMSCOPE_E_INVALID, "more than %u distinct strings", PK_ID_MAX);
		m = MEMO(v->type == PK_STR     ? M_STR
			 : v->type == PK_BYTES ? M_BYTES
			 : v->type == PK_PAIR  ? M_PAIR
					       : M_FRAME0 + (v->flag > 2 ? 2 : v->flag),
			v->id);
		break;
	case PK_NODE: /* the memo's reference is a value held, as a container's is */
		if (p->held >= PK_MAX_HELD)
			return fail(p, MEMSCOPE_E_INVALID,
				"holds more than %u values besides its records", PK_MAX_HELD);
		p->held++;
		p->nodes[v->id].refs++;
		if (p->nodes[v->id].memo == PK_NO_MEMO)
			p->nodes[v->id].memo = (uint32_t)idx;
		m = MEMO(M_NODE, v->id);
		break;
	default: /* a scalar: boxed */
		if ((rc = box_new(p, v, &box)))
			return rc;
		m = MEMO(M_BOX, box);
		break;
	}
	p->memo[idx] = m;
	return 0;
}

static int memo_get(struct pk *p, uint64_t idx)
{
	struct pk_val v = { 0 };
	uint32_t m = idx < p->n_memo ? p->memo[idx] : M_NONE;

	switch (MEMO_TAG(m)) {
	case M_NONE:
		return fail(p, MEMSCOPE_E_INVALID, "memo index %llu was never put",
			(unsigned long long)idx);
	case M_GONE:
		return fail(p, MEMSCOPE_E_INVALID,
			"memo index %llu refers to a record already read (records are not shared)",
			(unsigned long long)idx);
	case M_BOX:
		return push(p, &p->boxes[MEMO_ID(m)]);
	case M_NODE:
		p->nodes[MEMO_ID(m)].refs++;
		v.type = PK_NODE;
		break;
	default:
		v.type = MEMO_TAG(m) == M_STR	  ? PK_STR
			 : MEMO_TAG(m) == M_BYTES ? PK_BYTES
			 : MEMO_TAG(m) == M_PAIR  ? PK_PAIR
						  : PK_FRAME;
		v.flag = (uint8_t)(MEMO_TAG(m) - M_FRAME0);
		break;
	}
	v.id = MEMO_ID(m);
	return push(p, &v);
}

/* Whether stack value at is a node of kind. */
static int node_at(const struct pk *p, size_t at, uint8_t kind)
{
	return p->stack[at].type == PK_NODE && p->nodes[p->stack[at].id].kind == kind;
}

/* The place of the list at stack height at in the list it goes into, -1 when there is none: the
 * list below its mark (APPENDS), the list a LIST opcode will make of the values above a mark with
 * no list or dict below it (a dict's would be SETITEMS), or the list just below it (APPEND of one
 * item). */
static int64_t index_in_parent(struct pk *p, size_t at)
{
	size_t k = 0, hi = p->n_marks, m;

	/* the marks at or below at (marks rise with the stack): searched, not walked, as a pickle
	 * of MARK after MARK and then APPENDS after APPENDS would make a walk quadratic */
	while (k < hi) {
		size_t mid = k + (hi - k) / 2;

		if (p->marks[mid] <= at)
			k = mid + 1;
		else
			hi = mid;
	}
	m = k ? p->marks[k - 1] : 0;
	if (m >= 1 && node_at(p, m - 1, PK_LIST))
		return (int64_t)p->nodes[p->stack[m - 1].id].n + (int64_t)(at - m);
	if (m >= 1 && !node_at(p, m - 1, PK_DICT))
		return (int64_t)(at - m);
	if (at >= 1 && node_at(p, at - 1, PK_LIST))
		return (int64_t)p->nodes[p->stack[at - 1].id].n;
	return -1;
}

/* Item v of a list offered to the hook: 1 when it took v (v's reference, its memo entry and its
 * items let go: a record is read once, a second reference to it (DUP, a second memo index) is
 * an empty container), 0 when v is to be stored, or an error. */
static int offer(struct pk *p, const struct pk_val *v, uint32_t list_id, int64_t index)
{
	int taken = p->hooks.item ? p->hooks.item(p->hooks.ctx, p, v, list_id, index) : 0;

	if (taken <= 0)
		return taken;
	if (v->type == PK_NODE) {
		struct ms__pk_node *n = &p->nodes[v->id];

		if (n->memo != PK_NO_MEMO && p->memo[n->memo] == MEMO(M_NODE, v->id)) {
			p->memo[n->memo] = M_GONE;
			n->memo = PK_NO_MEMO;
			p->held--;
			unref(p, v->id);
		}
		release(p, v->id);
	}
	drop(p, v);
	return 1;
}

/* Item v appended to the list at stack height at: offered to the hook, then stored or dropped. */
static int append(struct pk *p, size_t at, const struct pk_val *v, int64_t index)
{
	int rc = offer(p, v, p->stack[at].id, index);

	return rc ? (rc < 0 ? rc : 0) : node_add(p, p->stack[at].id, v);
}

/* ---- opcodes ---- */

enum op {
	OP_MARK = '(',
	OP_STOP = '.',
	OP_POP = '0',
	OP_POP_MARK = '1',
	OP_DUP = '2',
	OP_BININT = 'J',
	OP_BININT1 = 'K',
	OP_BININT2 = 'M',
	OP_NONE = 'N',
	OP_BINSTRING = 'T',
	OP_SHORT_BINSTRING = 'U',
	OP_BINUNICODE = 'X',
	OP_APPEND = 'a',
	OP_EMPTY_DICT = '}',
	OP_APPENDS = 'e',
	OP_BINGET = 'h',
	OP_LONG_BINGET = 'j',
	OP_LIST = 'l',
	OP_EMPTY_LIST = ']',
	OP_BINPUT = 'q',
	OP_LONG_BINPUT = 'r',
	OP_SETITEM = 's',
	OP_TUPLE = 't',
	OP_EMPTY_TUPLE = ')',
	OP_SETITEMS = 'u',
	OP_BINFLOAT = 'G',
	OP_DICT = 'd',
	OP_BINBYTES = 'B',
	OP_SHORT_BINBYTES = 'C',
	OP_PROTO = 0x80,
	OP_TUPLE1 = 0x85,
	OP_TUPLE2 = 0x86,
	OP_TUPLE3 = 0x87,
	OP_NEWTRUE = 0x88,
	OP_NEWFALSE = 0x89,
	OP_LONG1 = 0x8a,
	OP_LONG4 = 0x8b,
	OP_SHORT_BINUNICODE = 0x8c,
	OP_BINUNICODE8 = 0x8d,
	OP_BINBYTES8 = 0x8e,
	OP_MEMOIZE = 0x94,
	OP_FRAME = 0x95,
	OP_BYTEARRAY8 = 0x96,
};

/* The name of an opcode the subset refuses, and whether it runs code. */
static const char *refused_name(unsigned op, int *code)
{
	static const struct {
		unsigned char op;
		char code;
		const char *name;
	} names[] = {
		{ 'c', 1, "GLOBAL" },
		{ 0x93, 1, "STACK_GLOBAL" },
		{ 'R', 1, "REDUCE" },
		{ 'b', 1, "BUILD" },
		{ 'i', 1, "INST" },
		{ 'o', 1, "OBJ" },
		{ 0x81, 1, "NEWOBJ" },
		{ 0x92, 1, "NEWOBJ_EX" },
		{ 0x82, 1, "EXT1" },
		{ 0x83, 1, "EXT2" },
		{ 0x84, 1, "EXT4" },
		{ 'P', 1, "PERSID" },
		{ 'Q', 1, "BINPERSID" },
		{ 'I', 0, "INT" },
		{ 'L', 0, "LONG" },
		{ 'S', 0, "STRING" },
		{ 'V', 0, "UNICODE" },
		{ 'F', 0, "FLOAT" },
		{ 'p', 0, "PUT" },
		{ 'g', 0, "GET" },
		{ 0x8f, 0, "EMPTY_SET" },
		{ 0x90, 0, "ADDITEMS" },
		{ 0x91, 0, "FROZENSET" },
		{ 0x97, 0, "NEXT_BUFFER" },
		{ 0x98, 0, "READONLY_BUFFER" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].op == op) {
			*code = names[i].code;
			return names[i].name;
		}
	*code = 0;
	return NULL;
}

static int refuse(struct pk *p, unsigned op)
{
	int code;
	const char *name = refused_name(op, &code);

	if (code)
		return fail(p, MEMSCOPE_E_INVALID,
			"pickle opcode %s (0x%02x) refused: a snapshot is data, never code", name,
			op);
	if (name)
		return fail(p, MEMSCOPE_E_INVALID,
			"pickle opcode %s (0x%02x) is not in the subset snapshots use", name, op);
	return fail(p, MEMSCOPE_E_INVALID, "not a pickle opcode: 0x%02x", op);
}

/* At least n bytes at the window's start, reading more as needed; MEMSCOPE_E_TRUNCATED when the
 * file ends first. */
static int need(struct pk *p, size_t n)
{
	while (p->w.len - p->w.start < n) {
		int rc;

		if (p->w.final) {
			if (p->frame_end > p->off + (p->w.len - p->w.start))
				return fail(p, MEMSCOPE_E_TRUNCATED,
					"cut inside the FRAME of %llu bytes at byte %llu",
					(unsigned long long)(p->frame_end - p->frame_off - 9),
					(unsigned long long)p->frame_off);
			return fail(p, MEMSCOPE_E_TRUNCATED, "cut inside an opcode");
		}
		rc = ms__window_fill(&p->w, p->src, PK_MAX_STR + 16, p->err);
		if (rc)
			return rc;
	}
	return 0;
}

static uint64_t le(const unsigned char *s, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | s[n];
	return v;
}

/* A string or bytes value of len bytes after the opcode's hdr bytes, interned and pushed. */
static int op_string(struct pk *p, unsigned hdr, uint64_t len, uint8_t type)
{
	struct pk_val v = { .type = type };
	int rc;

	if (len > PK_MAX_STR)
		return fail(p, MEMSCOPE_E_INVALID, "a string of %llu bytes (more than %u MiB)",
			(unsigned long long)len, PK_MAX_STR >> 20);
	if ((rc = need(p, hdr + (size_t)len)))
		return rc;
	if (memscope_strtab_intern(p->src->st, p->w.data + p->w.start + hdr, (size_t)len, &v.id))
		return nomem(p);
	p->w.start += hdr + (size_t)len;
	p->off += hdr + len;
	return push(p, &v);
}

/* LONG1/LONG4: a little-endian two's complement integer of len bytes. */
static int op_long(struct pk *p, unsigned hdr, uint64_t len)
{
	const unsigned char *s;
	struct pk_val v = { .type = PK_INT };
	int rc;

	if (len > 4096)
		return fail(
			p, MEMSCOPE_E_INVALID, "an integer of %llu bytes", (unsigned long long)len);
	if ((rc = need(p, hdr + (size_t)len)))
		return rc;
	s = (const unsigned char *)p->w.data + p->w.start + hdr;
	if (len && len <= 8) {
		uint64_t u = le(s, (unsigned)len);

		if (len < 8 && (s[len - 1] & 0x80))
			u |= ~UINT64_C(0) << (8 * len);
		v.i = (int64_t)u;
	} else if (len == 9 && s[8] == 0) {
		v.i = (int64_t)le(s, 8);
		v.flag = 1;
	} else if (len) {
		v.type = PK_BIG;
	}
	p->w.start += hdr + (size_t)len;
	p->off += hdr + len;
	return push(p, &v);
}

/* The root hook for the keys and values above stack height at, set into the dict at the bottom
 * of the stack. 0 or the hook's status. */
static int root_items(struct pk *p, size_t at)
{
	size_t i;
	int rc = 0;

	for (i = at; p->hooks.root && i + 1 < p->sp && !rc; i += 2)
		rc = p->hooks.root(
			p->hooks.ctx, p, &p->stack[i], &p->stack[i + 1], p->stack_off[i + 1]);
	return rc;
}

/* A new container of kind from the values above stack height at (the values move in; a list's
 * are offered to the hook as appended ones are, so a LIST of records is read as APPENDS is). */
static int collect(struct pk *p, size_t at, uint8_t kind)
{
	struct pk_val v = { .type = PK_NODE };
	int64_t index = kind == PK_LIST && at < p->sp ? index_in_parent(p, at) : -1;
	uint64_t first = at < p->sp ? p->stack_off[at] : p->op_off;
	size_t i;
	int rc;

	if (kind == PK_DICT && (p->sp - at) % 2)
		return fail(p, MEMSCOPE_E_INVALID, "DICT of an odd number of values");
	if (kind == PK_DICT && at == 0 && (rc = root_items(p, at)))
		return rc;
	if ((rc = node_new(p, kind, &v.id)))
		return rc;
	for (i = at; i < p->sp; i++) {
		int taken = kind == PK_LIST ? offer(p, &p->stack[i], v.id, index) : 0;

		rc = taken ? (taken < 0 ? taken : 0) : node_add(p, v.id, &p->stack[i]);
		if (rc) {
			p->sp = i; /* the rest are dropped with the stack */
			unref(p, v.id);
			reap(p);
			return rc;
		}
	}
	p->sp = at;
	rc = push(p, &v);
	if (!rc) /* where its first value began, not where it was closed */
		p->stack_off[at] = first;
	return rc;
}

static int op_setitems(struct pk *p, size_t at, const char *op)
{
	struct ms__pk_node *d = container_at(p, at - 1, PK_DICT, op);
	uint32_t id;
	size_t i;
	int rc = 0;

	if (!d)
		return MEMSCOPE_E_INVALID;
	if ((p->sp - at) % 2)
		return fail(p, MEMSCOPE_E_INVALID, "%s of an odd number of values", op);
	if (at == 1 && (rc = root_items(p, at)))
		return rc;
	id = p->stack[at - 1].id;
	for (i = at; i < p->sp && !rc; i++)
		rc = node_add(p, id, &p->stack[i]);
	if (rc)
		for (i--; i < p->sp; i++)
			drop(p, &p->stack[i]);
	p->sp = at;
	return rc;
}

static int op_appends(struct pk *p, size_t at, const char *op)
{
	int64_t index;
	size_t i;
	int rc = 0;

	if (!container_at(p, at - 1, PK_LIST, op))
		return MEMSCOPE_E_INVALID;
	index = index_in_parent(p, at - 1);
	for (i = at; i < p->sp && !rc; i++)
		rc = append(p, at - 1, &p->stack[i], index);
	for (; i < p->sp; i++)
		drop(p, &p->stack[i]);
	p->sp = at;
	return rc;
}

/* The stack height of the mark an op that pops one needs (popped), or of its one value. */
static int op_marked(struct pk *p, size_t *at, const char *op)
{
	int rc = pop_mark(p, at, op);

	if (!rc && *at == 0)
		return fail(p, MEMSCOPE_E_INVALID, "%s without a container below its MARK", op);
	return rc;
}

/* The opcode's bytes: at least n of them at s, reading more as needed (avail: what was there). */
#define NEED(n)                                                                                    \
	do {                                                                                       \
		if (avail < (n) && (rc = need(p, (n))))                                            \
			return rc;                                                                 \
		s = (const unsigned char *)p->w.data + p->w.start;                                 \
	} while (0)
/* The opcode's n bytes consumed. */
#define TAKE(n) (p->w.start += (n), p->off += (n))

/* Run an opcode of the stack's structure at the window's start (step's other half): protocol,
 * frames, STOP, marks, POP, DUP and the containers. 1 at STOP, 0 to go on, or an error. */
static int step_structure(struct pk *p, unsigned op, int *proto)
{
	const unsigned char *s = (const unsigned char *)p->w.data + p->w.start;
	size_t avail = p->w.len - p->w.start, at = 0;
	struct pk_val v = { 0 };
	int rc = 0;

	switch (op) {
	case OP_PROTO:
		NEED(2);
		if (s[1] < 2 || s[1] > 5)
			return fail(p, MEMSCOPE_E_INVALID, "pickle protocol %u (2 to 5 are read)",
				s[1]);
		*proto = s[1];
		TAKE(2);
		return 0;
	case OP_FRAME:
		NEED(9);
		if (le(s + 1, 8) > PK_MAX_FRAME)
			return fail(p, MEMSCOPE_E_INVALID, "a FRAME of %llu bytes",
				(unsigned long long)le(s + 1, 8));
		p->frame_off = p->op_off;
		p->frame_end = p->op_off + 9 + le(s + 1, 8);
		TAKE(9);
		return 0;
	case OP_STOP:
		TAKE(1);
		if (!have(p, 1, "STOP"))
			return MEMSCOPE_E_INVALID;
		return 1;
	case OP_MARK:
		TAKE(1);
		if (p->n_marks >= PK_MAX_MARKS)
			return fail(p, MEMSCOPE_E_INVALID, "more than %u open MARKs", PK_MAX_MARKS);
		if (p->n_marks == p->cap_marks &&
			ms__grow_array(&p->marks, &p->cap_marks, p->n_marks + 1, sizeof(*p->marks)))
			return nomem(p);
		p->marks[p->n_marks++] = p->sp;
		return 0;
	case OP_POP:
		TAKE(1);
		if (!have(p, 1, "POP"))
			return MEMSCOPE_E_INVALID;
		drop(p, &p->stack[--p->sp]);
		return 0;
	case OP_POP_MARK:
		TAKE(1);
		if ((rc = pop_mark(p, &at, "POP_MARK")))
			return rc;
		while (p->sp > at)
			drop(p, &p->stack[--p->sp]);
		return 0;
	case OP_DUP:
		TAKE(1);
		if (!have(p, 1, "DUP"))
			return MEMSCOPE_E_INVALID;
		v = p->stack[p->sp - 1];
		if (v.type == PK_NODE)
			p->nodes[v.id].refs++;
		return push(p, &v);
	case OP_EMPTY_DICT:
	case OP_EMPTY_LIST:
	case OP_EMPTY_TUPLE:
		TAKE(1);
		return collect(p, p->sp,
			op == OP_EMPTY_DICT   ? PK_DICT
			: op == OP_EMPTY_LIST ? PK_LIST
					      : PK_TUPLE);
	case OP_LIST:
	case OP_DICT:
	case OP_TUPLE:
		TAKE(1);
		if ((rc = pop_mark(p, &at, "LIST, DICT or TUPLE")))
			return rc;
		return collect(p, at, op == OP_DICT ? PK_DICT : op == OP_LIST ? PK_LIST : PK_TUPLE);
	case OP_TUPLE1:
	case OP_TUPLE2:
	case OP_TUPLE3:
		TAKE(1);
		if (!have(p, op - OP_TUPLE1 + 1, "TUPLE1, TUPLE2 or TUPLE3"))
			return MEMSCOPE_E_INVALID;
		return collect(p, p->sp - (op - OP_TUPLE1 + 1), PK_TUPLE);
	case OP_APPEND:
		TAKE(1);
		if (!have(p, 2, "APPEND"))
			return MEMSCOPE_E_INVALID;
		if (!container_at(p, p->sp - 2, PK_LIST, "APPEND"))
			return MEMSCOPE_E_INVALID;
		v = p->stack[--p->sp];
		return append(p, p->sp - 1, &v, index_in_parent(p, p->sp - 1));
	case OP_APPENDS:
		TAKE(1);
		if ((rc = op_marked(p, &at, "APPENDS")))
			return rc;
		return op_appends(p, at, "APPENDS");
	case OP_SETITEM:
		TAKE(1);
		if (!have(p, 3, "SETITEM"))
			return MEMSCOPE_E_INVALID;
		return op_setitems(p, p->sp - 2, "SETITEM");
	case OP_SETITEMS:
		TAKE(1);
		if ((rc = op_marked(p, &at, "SETITEMS")))
			return rc;
		return op_setitems(p, at, "SETITEMS");
	default:
		return refuse(p, op);
	}
}

/* Run the opcode at the window's start (at least 9 bytes there unless the file ends): the values
 * and the memo here, the rest in step_structure. 1 at STOP, 0 to go on, or an error. */
static int step(struct pk *p, int *proto)
{
	const unsigned char *s = (const unsigned char *)p->w.data + p->w.start;
	size_t avail = p->w.len - p->w.start, at = 0;
	struct pk_val v = { 0 };
	unsigned op = s[0];
	int rc = 0;

	switch (op) {
	case OP_NONE:
	case OP_NEWTRUE:
	case OP_NEWFALSE:
		TAKE(1);
		v.type = op == OP_NONE ? PK_NONE : PK_BOOL;
		v.i = op == OP_NEWTRUE;
		return push(p, &v);
	case OP_BININT:
		NEED(5);
		v.type = PK_INT;
		v.i = (int32_t)(uint32_t)le(s + 1, 4);
		TAKE(5);
		return push(p, &v);
	case OP_BININT1:
		NEED(2);
		v.type = PK_INT;
		v.i = s[1];
		TAKE(2);
		return push(p, &v);
	case OP_BININT2:
		NEED(3);
		v.type = PK_INT;
		v.i = (int64_t)le(s + 1, 2);
		TAKE(3);
		return push(p, &v);
	case OP_LONG1:
		NEED(2);
		return op_long(p, 2, s[1]);
	case OP_LONG4: /* pickle writes it for 256 bytes and more: the subset's is at most 8 */
		NEED(5);
		if (le(s + 1, 4) > 8)
			return fail(p, MEMSCOPE_E_INVALID, "LONG4 of %llu bytes (at most 8)",
				(unsigned long long)le(s + 1, 4));
		return op_long(p, 5, le(s + 1, 4));
	case OP_BINFLOAT: {
		uint64_t bits = 0;
		int i;

		NEED(9);
		for (i = 1; i <= 8; i++)
			bits = bits << 8 | s[i];
		v.type = PK_FLOAT;
		memcpy(&v.f, &bits, sizeof(v.f));
		TAKE(9);
		return push(p, &v);
	}
	case OP_SHORT_BINUNICODE:
	case OP_SHORT_BINSTRING:
	case OP_SHORT_BINBYTES:
		NEED(2);
		return op_string(p, 2, s[1], op == OP_SHORT_BINBYTES ? PK_BYTES : PK_STR);
	case OP_BINUNICODE:
	case OP_BINSTRING:
	case OP_BINBYTES:
		NEED(5);
		if (op == OP_BINSTRING && (s[4] & 0x80))
			return fail(p, MEMSCOPE_E_INVALID, "BINSTRING of a negative length");
		return op_string(p, 5, le(s + 1, 4), op == OP_BINBYTES ? PK_BYTES : PK_STR);
	case OP_BINUNICODE8:
	case OP_BINBYTES8:
	case OP_BYTEARRAY8:
		NEED(9);
		return op_string(p, 9, le(s + 1, 8), op == OP_BINUNICODE8 ? PK_STR : PK_BYTES);
	case OP_MEMOIZE:
		TAKE(1);
		if (!have(p, 1, "MEMOIZE"))
			return MEMSCOPE_E_INVALID;
		return memo_set(p, p->n_memo, &p->stack[p->sp - 1]);
	case OP_BINPUT:
	case OP_LONG_BINPUT:
		NEED(op == OP_BINPUT ? 2 : 5);
		at = op == OP_BINPUT ? s[1] : (size_t)le(s + 1, 4);
		TAKE(op == OP_BINPUT ? 2 : 5);
		if (!have(p, 1, "BINPUT"))
			return MEMSCOPE_E_INVALID;
		return memo_set(p, at, &p->stack[p->sp - 1]);
	case OP_BINGET:
	case OP_LONG_BINGET:
		NEED(op == OP_BINGET ? 2 : 5);
		at = op == OP_BINGET ? s[1] : (size_t)le(s + 1, 4);
		TAKE(op == OP_BINGET ? 2 : 5);
		return memo_get(p, at);
	default:
		return step_structure(p, op, proto);
	}
}
#undef NEED
#undef TAKE

/* The bytes after STOP: none may follow. */
static int after_stop(struct pk *p)
{
	int rc = 0;

	while (!rc && p->w.len == p->w.start && !p->w.final)
		rc = ms__window_fill(&p->w, p->src, PK_MAX_STR + 16, p->err);
	if (!rc && p->w.len > p->w.start) {
		p->op_off = p->off;
		rc = fail(p, MEMSCOPE_E_INVALID, "bytes after the pickle's STOP");
	} else if (!rc && p->frame_end > p->off) {
		p->op_off = p->frame_off;
		rc = fail(p, MEMSCOPE_E_INVALID,
			"a FRAME of %llu bytes cut by the end of the file at byte %llu",
			(unsigned long long)(p->frame_end - p->frame_off - 9),
			(unsigned long long)p->off);
	}
	return rc;
}

int ms__pk_read(struct pk **out, struct memscope_source *src, const struct pk_hooks *hooks,
	struct pk_val *result, struct memscope_error *err)
{
	struct pk *p = calloc(1, sizeof(*p));
	int rc, proto = 0;

	*out = p;
	memset(result, 0, sizeof(*result));
	if (!p)
		return memscope_error_set(err, MEMSCOPE_E_NOMEM, src->name, 0, "out of memory");
	p->src = src;
	p->err = err;
	p->hooks = *hooks;
	p->free_node = PK_NO_MEMO;
	p->free_box = PK_NO_MEMO;
	rc = ms__window_open(&p->w, src, err);
	p->w_open = !rc;
	for (;;) {
		if (rc)
			break;
		p->op_off = p->off;
		if (p->w.len - p->w.start < 9 && !p->w.final &&
			(rc = ms__window_fill(&p->w, src, PK_MAX_STR + 16, err)))
			break;
		if (p->w.len == p->w.start) {
			rc = fail(p, MEMSCOPE_E_TRUNCATED,
				p->frame_end > p->off ? "cut inside a FRAME: no STOP"
						      : "the pickle ends without its STOP");
			break;
		}
		if (p->off == 0 && (unsigned char)p->w.data[p->w.start] != OP_PROTO) {
			rc = fail(p, MEMSCOPE_E_INVALID, "not a pickle of protocol 2 to 5");
			break;
		}
		/* room to free every node without allocating while freeing */
		if (p->cap_dying < p->n_nodes + 1 && ms__grow_array(&p->dying, &p->cap_dying,
							     p->n_nodes + 64, sizeof(*p->dying))) {
			rc = nomem(p);
			break;
		}
		rc = step(p, &proto);
		if (rc == 1) {
			*result = p->stack[--p->sp];
			rc = after_stop(p);
			break;
		}
	}
	return rc;
}

void ms__pk_free(struct pk *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n_nodes; i++)
		if (p->nodes[i].items)
			items_put(p, p->nodes[i].items, p->nodes[i].cap);
	for (i = 0; i < PK_SPARE_CLASSES; i++)
		while (p->spare[i]) {
			struct pk_val *a = p->spare[i];

			p->spare[i] = (struct pk_val *)(uintptr_t)a[0].i;
			free(a);
		}
	if (p->w_open)
		ms__window_close(&p->w);
	free(p->stack);
	free(p->stack_off);
	free(p->marks);
	free(p->memo);
	free(p->nodes);
	free(p->boxes);
	free(p->dying);
	free(p);
}
