/* memscope-batch's summaries and parts read back: the JSON lines memscope_summary_write and
 * memscope_batch_part_header write, through the JSON scanner (core/json_scan.h), into a run. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/json_scan.h"
#include "batch_run.h"
#include "memscope/batch.h"
#include "memscope/memscope.h"

#define BIT(f) (UINT64_C(1) << (f))

/* the suffix of the JSON key that says a byte figure overflowed ("bytes_overflowed") */
#define OVERFLOWED "_overflowed"

/* Our own JSON lines: flat objects of strings, whole numbers, null, true, and objects
 * of whole numbers (pool_peaks, read as its "PTA=1;ATB=2" text), through the JSON scanner
 * (core/json_scan.h). Not cJSON: it reads numbers as doubles, which lose byte counts and times
 * above 2^53, and a merge must give the run's bytes. */

/* what the parser returns for text that is not what it reads (MEMSCOPE_E_* are negative) */
#define JP_BAD 2

/* A string after whitespace, decoded and appended to t, which stays NUL-terminated (a \u of a
 * UTF-16 surrogate is refused: we never write one). 0, JP_BAD, or MEMSCOPE_E_NOMEM. */
static int jp_string(struct ms__json *j, struct buf *t)
{
	struct ms__json_val v;
	int rc;

	ms__json_skip_ws(j);
	if (j->p == j->end || *j->p != '"' || ms__json_string(j, &v))
		return JP_BAD;
	if ((rc = ms__json_decode(t, &v, 1)) || (rc = ms__buf_reserve(t, 1)))
		return rc == MEMSCOPE_E_NOMEM ? rc : JP_BAD;
	t->p[t->len] = 0;
	return 0;
}

/* A whole number (leading zeros allowed) after whitespace into *v. 0 or -1. */
static int jp_number(struct ms__json *j, int64_t *v)
{
	int neg = 0;
	uint64_t x = 0;
	const char *start;

	ms__json_skip_ws(j);
	if (j->p < j->end && *j->p == '-')
		neg = 1, j->p++;
	start = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
		if (x > (UINT64_C(1) << 63) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*j->p++ - '0');
	}
	if (j->p == start || x > (uint64_t)INT64_MAX + neg)
		return -1;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

/* What one value of a flat object is. */
enum jtype { J_NULL, J_NUM, J_STR, J_OBJ /* of numbers, as "k=v;k=v" text */, J_TRUE };

/* An object of whole numbers after its '{' as "k=v;k=v" text into t (names hold neither '='
 * nor ';'). 0, JP_BAD, or MEMSCOPE_E_NOMEM. */
static int jp_numbers(struct ms__json *j, struct buf *t)
{
	int64_t num;
	int rc;

	if (ms__buf_reserve(t, 1))
		return MEMSCOPE_E_NOMEM;
	t->p[0] = 0;
	while (!ms__json_eat(j, '}')) {
		char n[24];
		size_t at = t->len;

		if ((t->len && !ms__json_eat(j, ',')) || (rc = jp_string(j, t)) == JP_BAD)
			return JP_BAD;
		if (rc)
			return rc;
		if (strcspn(t->p + at, "=;") != t->len - at || !ms__json_eat(j, ':') ||
			jp_number(j, &num))
			return JP_BAD;
		snprintf(n, sizeof(n), "=%" PRId64 ";", num);
		if (ms__buf_append(t, n, strlen(n) + 1))
			return MEMSCOPE_E_NOMEM;
		t->len--; /* the NUL */
	}
	if (t->len)
		t->p[--t->len] = 0; /* the last ';' */
	return 0;
}

/*
 * Walk the flat object of line[0, len): fn(ctx, key, type, num, text) per member (text for J_STR
 * the string; for J_OBJ an object of numbers as "k=v;k=v"). 0, JP_BAD (not such an object; *why
 * says what), the first non-zero fn return, or MEMSCOPE_E_NOMEM.
 */
static int jp_object(const char *line, size_t len,
	int (*fn)(void *ctx, const char *key, enum jtype type, int64_t num, const char *text),
	void *ctx, const char **why)
{
	struct ms__json j = { .p = line, .end = line + len, .data = line, .line = 1 };
	struct buf key = { 0 }, text = { 0 };
	int rc = JP_BAD;

	*why = "not a JSON object";
	if (!ms__json_eat(&j, '{'))
		goto out;
	if (ms__json_eat(&j, '}'))
		goto done;
	do {
		enum jtype type = J_STR;
		int64_t num = 0;

		key.len = text.len = 0;
		*why = "a bad key";
		if ((rc = jp_string(&j, &key)))
			goto out;
		rc = JP_BAD;
		*why = "a bad value";
		if (!ms__json_eat(&j, ':'))
			goto out;
		ms__json_skip_ws(&j);
		if (j.end - j.p >= 4 && !memcmp(j.p, "null", 4)) {
			j.p += 4, type = J_NULL;
		} else if (j.end - j.p >= 4 && !memcmp(j.p, "true", 4)) {
			j.p += 4, type = J_TRUE;
		} else if (j.p < j.end && *j.p == '"') {
			if ((rc = jp_string(&j, &text)))
				goto out;
		} else if (ms__json_eat(&j, '{')) { /* {"PTA":1,...} as "PTA=1;..." */
			type = J_OBJ;
			if ((rc = jp_numbers(&j, &text)))
				goto out;
		} else if (jp_number(&j, &num)) {
			goto out;
		} else {
			type = J_NUM;
		}
		if ((rc = fn(ctx, key.p, type, num, text.p ? text.p : "")))
			goto out;
		rc = JP_BAD;
	} while (ms__json_eat(&j, ','));
	*why = "a bad object";
	if (!ms__json_eat(&j, '}'))
		goto out;
done:
	ms__json_skip_ws(&j);
	*why = "text after the object";
	rc = j.p == j.end ? 0 : JP_BAD;
out:
	ms__buf_free(&key);
	ms__buf_free(&text);
	return rc;
}

/* A summary's member into s; 1 for a key that is none of the fields or seen twice, a value of the
 * wrong type, or a negative one where none is. */
static int summary_member(
	void *ctx, const char *key, enum jtype type, int64_t num, const char *text)
{
	struct memscope_summary *s = ctx;
	size_t f, n = strlen(key), k = strlen(OVERFLOWED);

	/* "KEY_overflowed":true after a byte figure held at its highest: what its value says */
	if (n > k && !memcmp(key + n - k, OVERFLOWED, k)) {
		for (f = 0; f < MEMSCOPE_SUM_COUNT_ &&
			    (strlen(memscope_batch_field_name(f)) != n - k ||
				    memcmp(memscope_batch_field_name(f), key, n - k));
			f++)
			;
		return f == MEMSCOPE_SUM_COUNT_ || type != J_TRUE || !(s->has & BIT(f)) ||
		       !ms__batch_overflowed(f, s->num[f]);
	}
	for (f = 0; f < MEMSCOPE_SUM_COUNT_ && strcmp(memscope_batch_field_name(f), key); f++)
		;
	if (f == MEMSCOPE_SUM_COUNT_ || (s->has & BIT(f)) || type == J_TRUE)
		return 1;
	if (type != J_NULL && (type == J_OBJ) != (f == MEMSCOPE_SUM_POOL_PEAKS))
		return 1; /* pool_peaks an object, nothing else one */
	if (type != J_NULL && type != J_OBJ && (type == J_STR) != ms__batch_field_text(f))
		return 1;
	if (type == J_NULL)
		return 0;
	if (type == J_NUM && num < 0 && f != MEMSCOPE_SUM_GROWTH_PER_STEP)
		return 1; /* counts, bytes and times are never below 0 */
	if (type != J_NUM && !(s->str[f] = strdup(text)))
		return MEMSCOPE_E_NOMEM;
	s->num[f] = num;
	s->has |= BIT(f);
	return 0;
}

int memscope_batch_add_line(struct memscope_batch *b, const char *line, size_t len,
	const char *name, uint64_t line_no, struct memscope_error *err)
{
	struct memscope_summary s = { 0 };
	const char *why;
	int rc = jp_object(line, len, summary_member, &s, &why);

	if (rc == MEMSCOPE_E_NOMEM)
		rc = memscope_error_set(err, rc, name, line_no, "out of memory");
	else if (rc)
		rc = memscope_error_set(err, MEMSCOPE_E_INVALID, name, line_no,
			"not an input's summary: %s",
			rc == JP_BAD ? why
				     : "an unknown or repeated key, or a value out of its range");
	else
		rc = memscope_batch_add(b, &s, name, line_no, err);
	memscope_summary_clear(&s);
	return rc;
}

static int head_member(void *ctx, const char *key, enum jtype type, int64_t num, const char *text)
{
	static const char *const keys[] = { "memscope-batch", "version", "inputs", "list",
		"lenient", "shard", "shards" };
	struct ms__batch_part_head *h = ctx;
	char *end;
	int k;

	for (k = 0; k < 7 && strcmp(keys[k], key); k++)
		;
	if (k == 7 || (h->seen & 1 << k) || type == J_NULL || type == J_OBJ ||
		(type == J_STR) != (k == 0 || k == 3) || (k == 0 && strcmp(text, "part")) ||
		(k == 1 && num != 2) || (k != 3 && num < 0) || type == J_TRUE)
		return 1;
	if (k == 3) {
		errno = 0;
		h->hash = strtoull(text, &end, 16);
		if (errno || strlen(text) != 16 || *end)
			return 1;
	}
	h->seen |= 1 << k;
	if (k == 2 || k >= 4)
		*(k == 2	 ? &h->inputs
			: k == 4 ? &h->lenient
			: k == 5 ? &h->shard
				 : &h->shards) = num;
	return 0;
}

/* One line of f into *line (grown as needed), without its newline: 1, 0 at the end, or an error
 * (err set). */
static int read_line(FILE *f, char **line, size_t *cap, size_t *len, const char *name,
	uint64_t line_no, struct memscope_error *err)
{
	ssize_t n = getline(line, cap, f);

	if (n < 0)
		return ferror(f) ? memscope_error_set(
					   err, MEMSCOPE_E_IO, name, line_no, "%s", strerror(errno))
				 : 0;
	if (n && (*line)[n - 1] == '\n')
		n--;
	*len = (size_t)n;
	return 1;
}

/* the most shards a part may say its run has */
#define MAX_SHARDS (1 << 24)

int memscope_batch_read_part(struct memscope_batch **b, FILE *f, const char *name, uint64_t *shard,
	uint64_t *n_shards, struct memscope_error *err)
{
	struct ms__batch_part_head h = { 0 };
	char *line = NULL;
	size_t cap = 0, len;
	uint64_t line_no = 1;
	const char *why;
	int rc;

	if ((rc = read_line(f, &line, &cap, &len, name, 1, err)) <= 0) {
		if (!rc)
			rc = memscope_error_set(err, MEMSCOPE_E_INVALID, name, 0,
				"empty: not a part of memscope-batch --shard");
		goto out;
	}
	if ((rc = jp_object(line, len, head_member, &h, &why)) || h.seen != 0x7f ||
		h.shard >= h.shards || h.shards > MAX_SHARDS ||
		(uint64_t)h.inputs > MEMSCOPE_BATCH_MAX_INPUTS) {
		rc = rc == MEMSCOPE_E_NOMEM ? memscope_error_set(err, rc, name, 1, "out of memory")
					    : memscope_error_set(err, MEMSCOPE_E_INVALID, name, 1,
						      "not a part of memscope-batch --shard (its "
						      "first line is not "
						      "a part's header)");
		goto out;
	}
	*shard = (uint64_t)h.shard, *n_shards = (uint64_t)h.shards;
	if ((rc = ms__batch_join_part(b, &h, name, err)))
		goto out;
	while ((rc = read_line(f, &line, &cap, &len, name, ++line_no, err)) == 1)
		if ((rc = memscope_batch_add_line(*b, line, len, name, line_no, err)))
			goto out;
out:
	free(line);
	return rc;
}
