/* A streaming reader of the data subset of Python's pickle format (protocols 2 to 5): scalars,
 * strings, lists, dicts, tuples and the memo, with a hook that takes the items appended to a list
 * as they come, so a long list of records is never held whole (formats/torch-snapshot.md "The
 * pickle subset"). Strings are interned in the source's table. One object, one thread. */
#ifndef MEMSCOPE_PICKLE_H
#define MEMSCOPE_PICKLE_H

#include <stdint.h>

#include "reader.h"

enum pk_type {
	PK_NONE = 0,
	PK_BOOL,  /* i: 0 or 1 */
	PK_INT,	  /* i; flag 1: an unsigned value above INT64_MAX, i holds its bits */
	PK_BIG,	  /* an integer wider than 64 bits: no value */
	PK_FLOAT, /* f */
	PK_STR,	  /* id: its string id */
	PK_BYTES, /* id: its string id */
	PK_NODE,  /* id: a list, dict or tuple (ms__pk_node) */
	PK_PAIR,  /* id: what a frames list became (ms__pk_node_done) */
	PK_FRAME, /* id: what a frame dict became, flag its kind 0 to 2 (ms__pk_node_done) */
};

struct pk_val {
	uint8_t type; /* enum pk_type */
	uint8_t flag;
	uint32_t id;
	union {
		int64_t i;
		double f;
	};
};

/* (memoized scalars are kept in the machine's own array, not as nodes) */
enum pk_kind { PK_LIST, PK_DICT, PK_TUPLE };

/* A container. A dict's items are its keys and values in turn. */
struct ms__pk_node {
	struct pk_val *items;
	uint32_t n, cap;
	uint32_t refs; /* the stack's, the containers' and the memo's references */
	uint32_t memo; /* its memo index, PK_NO_MEMO when not memoized */
	uint8_t kind;  /* enum pk_kind */
	uint8_t done;  /* 0, or PK_PAIR / PK_FRAME: the reader turned it into aux (ms__pk_node_done)
			*/
	uint8_t flag;  /* with done: the PK_FRAME value's flag */
	uint32_t aux;  /* with done: the value; else the reader's (0 when the node is made) */
};
#define PK_NO_MEMO UINT32_MAX

struct pk;

/*
 * Called for each item appended to a list (APPEND, APPENDS) or made into one (MARK ... LIST), in
 * order, before it is stored: list_id is that list's node, list_index the list's place in the
 * list that holds it (its index there once appended), -1 when the list is not an item of a list
 * being filled. Returns 1 when the reader has taken the item (it is then dropped, its items let
 * go and its memo entry with it: a later reference to it is an error), 0 to store it, or a
 * negative status to stop with (err set).
 */
typedef int (*pk_item_fn)(
	void *ctx, struct pk *p, const struct pk_val *item, uint32_t list_id, int64_t list_index);

/*
 * Called for each key and value set into the dict at the bottom of the stack (the pickle's
 * outermost value: a snapshot's root dict) by SETITEM, SETITEMS or DICT, with the offset of the
 * opcode that began the value. 0 to go on, or a negative status to stop with (err set).
 */
typedef int (*pk_root_fn)(void *ctx, struct pk *p, const struct pk_val *key,
	const struct pk_val *value, uint64_t value_offset);

struct pk_hooks {
	pk_item_fn item; /* or NULL */
	pk_root_fn root; /* or NULL */
	void *ctx;
};

/*
 * Read src's pickle to its STOP and return its value in *out (a PK_NODE stays valid until
 * ms__pk_free). 0, or MEMSCOPE_E_INVALID (an opcode outside the subset, a limit passed, bytes after
 * STOP), MEMSCOPE_E_TRUNCATED (the file ends inside it), MEMSCOPE_E_IO, MEMSCOPE_E_NOMEM, or a
 * hook's status; err names the offset. *p is ms__pk_free's either way.
 */
int ms__pk_read(struct pk **p, struct memscope_source *src, const struct pk_hooks *hooks,
	struct pk_val *out, struct memscope_error *err);
void ms__pk_free(struct pk *p);

/* The node a PK_NODE value names (borrowed, valid until the next opcode runs or ms__pk_free). */
struct ms__pk_node *ms__pk_node(struct pk *p, uint32_t id);

/* The value of the last key of dict node whose string id is key, or NULL. */
const struct pk_val *ms__pk_dict_get(struct pk *p, const struct ms__pk_node *dict, uint32_t key);

/*
 * The reader has turned node id into what it needs (type PK_PAIR or PK_FRAME, aux, flag): its
 * items are let go, and once only the memo holds it the memo keeps that value in its place, so
 * a snapshot's frames cost what they became, not their dicts. 0 or MEMSCOPE_E_INVALID (more
 * ids than the memo can hold).
 */
int ms__pk_node_done(struct pk *p, uint32_t id, uint8_t type, uint32_t aux, uint8_t flag);

/* The offset of the opcode being run (for messages). */
uint64_t ms__pk_offset(const struct pk *p);

#endif
