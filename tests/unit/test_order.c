/* Unit tests of the ordering and identity helpers: time order, the event buffer, MALLOC/FREE
 * pairing. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define HDR                                                                                        \
	"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"          \
	"Call Stack(Python),Call Stack(C)\n"

struct pairing {
	struct memscope_blocks *b;
	int counts[8];
	struct memscope_block last;
};

static void pair_all(struct pairing *p, const struct tread *t)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	p->b = memscope_blocks_new(NULL);
	ck_assert_ptr_nonnull(p->b);
	for (i = 0; i < memscope_evbuf_count(t->evs); i++) {
		int r = memscope_blocks_feed(p->b, memscope_evbuf_get(t->evs, i), &p->last);

		ck_assert_int_ge(r, 0);
		p->counts[r]++;
	}
}

START_TEST(time_order_is_per_input_and_pid_with_id_tie_break)
{
	struct tread t;
	const struct memscope_event *prev = NULL;
	size_t i, inversions_before = 0;

	ck_assert_int_eq(tread_file(&t, testdata("baseline.csv"), NULL), 0);
	for (i = 1; i < memscope_evbuf_count(t.evs); i++)
		inversions_before += memscope_event_cmp_time(memscope_evbuf_get(t.evs, i - 1),
					     memscope_evbuf_get(t.evs, i)) > 0;
	ck_assert_uint_eq(inversions_before, 16); /* testdata/README.txt */
	memscope_evbuf_sort(t.evs);
	for (i = 0; i < memscope_evbuf_count(t.evs); i++) {
		const struct memscope_event *ev = memscope_evbuf_get(t.evs, i);

		if (prev)
			ck_assert_int_le(memscope_event_cmp_time(prev, ev), 0);
		prev = ev;
	}
	ck_assert_uint_eq(memscope_evbuf_get(t.evs, 0)->id, 1); /* START_TRACE, written last */
	/* attrs were copied: they outlive the reader */
	ck_assert_uint_eq(memscope_evbuf_get(t.evs, 1)->n_attrs, 0);
	tread_free(&t);

	/* equal timestamps: ID decides; pid separates */
	const char *ties = HDR "7,SYSTEM,STOP_TRACE,N/A,100,2,1,N/A,N/A,,,\n"
			       "5,SYSTEM,STOP_TRACE,N/A,100,1,1,N/A,N/A,,,\n"
			       "3,SYSTEM,STOP_TRACE,N/A,100,2,1,N/A,N/A,,,\n";

	ck_assert_int_eq(tread_mem(&t, ties, strlen(ties), NULL), 0);
	memscope_evbuf_sort(t.evs);
	ck_assert_uint_eq(memscope_evbuf_get(t.evs, 0)->id, 5);
	ck_assert_uint_eq(memscope_evbuf_get(t.evs, 1)->id, 3);
	ck_assert_uint_eq(memscope_evbuf_get(t.evs, 2)->id, 7);
	tread_free(&t);
}
END_TEST

static int count_live(void *ctx, const struct memscope_block *blk)
{
	int *n = ctx;

	ck_assert(!(blk->flags & MEMSCOPE_BLOCK_FREED));
	(*n)++;
	return 0;
}

START_TEST(pairing_by_allocation_id)
{
	struct tread t;
	struct pairing p;
	int live = 0;

	ck_assert_int_eq(tread_file(&t, testdata("baseline.csv"), NULL), 0);
	pair_all(&p, &t);
	/* testdata/README.txt: 4 unpaired PTA MALLOCs and 3 unpaired HAL MALLOCs */
	ck_assert_uint_eq(memscope_blocks_live(p.b), 7);
	ck_assert_int_eq(p.counts[MEMSCOPE_PAIR_FREE], 16); /* every FREE row */
	ck_assert_int_eq(p.counts[MEMSCOPE_PAIR_UNMATCHED_FREE], 0);
	ck_assert_int_eq(memscope_blocks_foreach_live(p.b, count_live, &live), 0);
	ck_assert_int_eq(live, 7);
	memscope_blocks_free(p.b);
	tread_free(&t);
}
END_TEST

START_TEST(legacy_pairing_by_address_ignores_na_device)
{
	struct tread t;
	struct pairing p;
	size_t i;
	int n_hal = 0;

	ck_assert_int_eq(tread_file(&t, testdata("memscope_dump_20250428113810.csv"), NULL), 0);
	memscope_evbuf_sort(t.evs);
	p.b = memscope_blocks_new(NULL);
	for (i = 0; i < memscope_evbuf_count(t.evs); i++) {
		const struct memscope_event *ev = memscope_evbuf_get(t.evs, i);
		int r = memscope_blocks_feed(p.b, ev, &p.last);

		if (ev->kind == MEMSCOPE_KIND_FREE && ev->subtype == MEMSCOPE_SUB_HAL &&
			r == MEMSCOPE_PAIR_FREE) {
			/* a FREE with Device Id N/A found its MALLOC on a real device */
			ck_assert_int_eq(ev->device, MEMSCOPE_DEVICE_NONE);
			ck_assert_int_ne(p.last.device, MEMSCOPE_DEVICE_NONE);
			n_hal++;
		}
	}
	/* 6 of the 9 HAL FREE rows have their MALLOC in the file (lines 235-242, 262-265); the
	 * other 3 free addresses never allocated in it: counted, not paired */
	ck_assert_int_eq(n_hal, 6);
	ck_assert_uint_eq(memscope_blocks_stats(p.b)->n_unmatched_free, 7); /* 3 HAL + 4 PTA */
	memscope_blocks_free(p.b);
	tread_free(&t);
}
END_TEST

START_TEST(shadow_unmatched_and_replaced_blocks)
{
	struct tread t;
	struct pairing p;
	const char *text =
		HDR "1,MALLOC,PTA,N/A,10,1,1,0,0x0000000000000100,\"{allocation_id:1,addr:"
		    "0x0000000000000100,size:64,total:64,used:64}\",,\n"
		    "2,FREE,PTA,N/A,20,1,1,0,0x0000000000000100,\"{allocation_id:1,addr:"
		    "0x0000000000000100,size:64,shadow:true}\",,\n"
		    "3,FREE,PTA,N/A,30,1,1,0,0x0000000000000200,\"{allocation_id:9,addr:"
		    "0x0000000000000200,size:8,total:64,used:0}\",,\n"
		    "4,MALLOC,HAL,N/A,40,1,1,0,0x0000000000000300,\"{addr:0x0000000000000300,"
		    "size:32}\",,\n"
		    "5,MALLOC,HAL,N/A,50,1,1,0,0x0000000000000300,\"{addr:0x0000000000000300,"
		    "size:48}\",,\n"
		    "6,FREE,HAL,N/A,60,1,1,N/A,0x0000000000000300,\"{addr:0x0000000000000300,"
		    "size:48}\",,\n"
		    "7,MALLOC,HAL,N/A,70,2,1,0,0x0000000000000300,\"{addr:0x0000000000000300,"
		    "size:16}\",,\n";

	ck_assert_int_eq(tread_mem(&t, text, strlen(text), NULL), 0);
	pair_all(&p, &t);
	ck_assert_int_eq(p.counts[MEMSCOPE_PAIR_SHADOW_FREE], 1);
	ck_assert_int_eq(p.counts[MEMSCOPE_PAIR_UNMATCHED_FREE], 1);
	ck_assert_int_eq(p.counts[MEMSCOPE_PAIR_REPLACED], 1);
	ck_assert_int_eq(p.counts[MEMSCOPE_PAIR_FREE], 1);
	ck_assert_int_eq(p.last.size, 48); /* the last block closed: the replacing MALLOC's */
	ck_assert_uint_eq(memscope_blocks_live(p.b), 1); /* pid 2's block: pids never mix */
	ck_assert_uint_eq(memscope_blocks_stats(p.b)->n_shadow_free, 1);
	memscope_blocks_free(p.b);
	tread_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("order");
	TCase *tc = tcase_create("order");

	tcase_add_test(tc, time_order_is_per_input_and_pid_with_id_tie_break);
	tcase_add_test(tc, pairing_by_allocation_id);
	tcase_add_test(tc, legacy_pairing_by_address_ignores_na_device);
	tcase_add_test(tc, shadow_unmatched_and_replaced_blocks);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
