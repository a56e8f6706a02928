/* The learned use order of auto_offload and the victims it picks (offload_plan.c), with
 * made-up residents (issue 25, a sweep of offload_plan.c):
 * - recording a step keeps each tensor once, at its first use, the tensor at position 0
 *   included (`order_pos >= 0` made `> 0` appended it again at every use);
 * - replaying, a use moves the cursor to the tensor's position, position 0 included;
 * - with the order learned the victim is the farthest next use, a tensor the order does
 *   not know counting as farther than all (`norder + 1` made `- 1`), the one at position
 *   0 included (`order_pos < 0` made `<= 0` took it for unknown);
 * - the order is used only with auto_offload on, not while recording, and once it holds a
 *   tensor; otherwise the least recently used is the victim (each `&&` of learned() made
 *   `||`, and `norder > 0` made `>= 0`);
 * - block sizes: a tensor in the upper half of the largest takes the largest's size where
 *   two such blocks fit the offloadable share, one under half keeps its own (seed 3009);
 * - between tensors the order does not know, the least recently used goes, whatever the
 *   list's order; a busy victim goes before an idle one needed within the prefetch window
 *   (prefetch_depth + 1 uses), the edge included, never before one needed later or equally
 *   late (hwi_plan_prefer_busy; a sweep of offload_plan.c, thirteenth session);
 * - the block handed over (hwi_plan_pick_handover): within the prefetch window the farthest
 *   next use, outside it the smaller block, then the oldest last use.
 * White-box (hwi_plan_*, linked statically). */
#include "harness.h"
#include "offload/residency.h"
#include "tensor/tensor.h"

#include <stdint.h>
#include <stdlib.h>

static hwi_tensor ta, tb, tc, tu;
static hwi_resident a = {.t = &ta}, b = {.t = &tb}, c = {.t = &tc}, u = {.t = &tu};

static void tensors(void)
{
    hwi_tensor *all[4] = {&ta, &tb, &tc, &tu};
    for (int i = 0; i < 4; i++) {
        all[i]->device = 0;
        all[i]->data = (void *)(uintptr_t)(0x10000 * (i + 1));   /* not the pool's */
        all[i]->nbytes = (size_t)1 << 20;
    }
}

int main(void)
{
    char autoo[32] = "";
    OK(hwrt_get_config("auto_offload", autoo, sizeof autoo));
    OK(hwrt_set_config("auto_offload", "1"));
    tensors();
    hwi_offload_mgr saved = hwi_offload;

    TEST_CASE("recording: each tensor once, at its first use");
    hwi_offload.recording = 1;
    hwi_offload.order = NULL;
    hwi_offload.norder = hwi_offload.cap_order = 0;
    a.order_pos = b.order_pos = c.order_pos = u.order_pos = -1;
    hwi_plan_note_use(&a);
    hwi_plan_note_use(&b);
    hwi_plan_note_use(&a);
    hwi_plan_note_use(&c);
    hwi_plan_note_use(&b);
    EXPECT(hwi_offload.norder == 3);
    EXPECT(hwi_offload.norder >= 3 && hwi_offload.order[0] == &a && hwi_offload.order[1] == &b &&
           hwi_offload.order[2] == &c);
    EXPECT(a.order_pos == 0 && b.order_pos == 1 && c.order_pos == 2);
    hwi_resident **order = hwi_offload.order;

    TEST_CASE("replaying: a use moves the cursor to the tensor's position");
    hwi_offload.recording = 0;
    hwi_offload.norder = 3;
    hwi_offload.cursor = 2;
    hwi_plan_note_use(&a);
    EXPECT(hwi_offload.cursor == 0);
    hwi_plan_note_use(&c);
    EXPECT(hwi_offload.cursor == 2);

    TEST_CASE("learned: the farthest next use, an unknown tensor farther than all");
    hwi_resident *list[4] = {&a, &b, &c, &u};
    hwi_offload.list = list;
    hwi_offload.n = 4;
    hwi_offload.horizon = 0;
    hwi_offload.cursor = 0;            /* next uses: b 1, c 2, a 3 (a full turn), u unknown */
    EXPECT(hwi_plan_pick_victim(0, NULL, 0, 1) == &u);
    hwi_offload.n = 3;
    EXPECT(hwi_plan_pick_victim(0, NULL, 0, 1) == &a);
    hwi_offload.cursor = 2;            /* just used c: a 1, b 2, c 3 */
    EXPECT(hwi_plan_pick_victim(0, NULL, 0, 1) == &c);

    TEST_CASE("not learned: the least recently used");
    a.last_use = 30, b.last_use = 10, c.last_use = 20;   /* LRU: b; farthest (cursor 2): c */
    hwi_offload.recording = 1;         /* recording a step: the old order does not count */
    EXPECT(hwi_plan_pick_victim(0, NULL, 0, 1) == &b);
    hwi_offload.recording = 0;
    OK(hwrt_set_config("auto_offload", "0"));
    EXPECT(hwi_plan_pick_victim(0, NULL, 0, 1) == &b);
    OK(hwrt_set_config("auto_offload", "1"));
    EXPECT(hwi_plan_pick_victim(0, NULL, 0, 1) == &c);   /* learned again */
    hwi_offload.norder = 0;            /* nothing learned yet */
    a.order_pos = b.order_pos = c.order_pos = -1;
    EXPECT(hwi_plan_pick_victim(0, NULL, 0, 1) == &b);

    TEST_CASE("learned: between tensors the order does not know, the least recently used");
    hwi_offload.norder = 3;
    b.order_pos = 0, c.order_pos = 1;  /* a and u unknown, equally far */
    hwi_offload.cursor = 0;
    u.last_use = 40;                   /* a (30) is the less recently used */
    list[0] = &u, list[1] = &a, list[2] = &b, list[3] = &c;
    hwi_offload.n = 4;
    EXPECT(hwi_plan_pick_victim(0, NULL, 0, 1) == &a);
    list[0] = &a, list[1] = &u;        /* whatever the list's order */
    EXPECT(hwi_plan_pick_victim(0, NULL, 0, 1) == &a);
    list[0] = &a, list[1] = &b, list[2] = &c, list[3] = &u;
    hwi_offload.n = 3;

    TEST_CASE("a busy victim first where the idle one is needed within the prefetch window");
    /* hwi_plan_prefer_busy(busy, idle), window prefetch_depth + 1 (offload_plan.c) */
    char depth[32] = "";
    OK(hwrt_get_config("prefetch_depth", depth, sizeof depth));
    OK(hwrt_set_config("prefetch_depth", "1"));      /* window 2 */
    a.order_pos = 0, b.order_pos = 1, c.order_pos = 2, u.order_pos = -1;
    hwi_offload.cursor = 0;            /* next uses: b 1, c 2, a 3, u unknown (4) */
    EXPECT(hwi_plan_prefer_busy(&c, &b) == 1);       /* idle b next, busy c later */
    EXPECT(hwi_plan_prefer_busy(&a, &c) == 1);       /* idle c at the window's edge */
    EXPECT(hwi_plan_prefer_busy(&b, &c) == 0);       /* the busy one is needed sooner */
    EXPECT(hwi_plan_prefer_busy(&u, &a) == 0);       /* idle a beyond the window */
    OK(hwrt_set_config("prefetch_depth", "64"));     /* window 65 */
    EXPECT(hwi_plan_prefer_busy(&u, &a) == 1);
    a.order_pos = -1;                  /* a and u both unknown: equally far, idle a stays */
    EXPECT(hwi_plan_prefer_busy(&u, &a) == 0);
    OK(hwrt_set_config("auto_offload", "0"));        /* nothing learned: never */
    EXPECT(hwi_plan_prefer_busy(&c, &b) == 0);
    OK(hwrt_set_config("auto_offload", "1"));

    TEST_CASE("hand-over: outside the window the smaller block, then the oldest last use");
    /* hwi_plan_pick_handover (better_handover): window 2 again; next uses b 1, c 2, a 3,
     * u unknown. Within the window the farthest next use goes first, then the smaller
     * block; a tensor at the window's edge counts as within */
    OK(hwrt_set_config("prefetch_depth", "1"));
    a.order_pos = 0;
    ta.nbytes = tb.nbytes = tc.nbytes = tu.nbytes = (size_t)1 << 20;
    a.last_use = 30, b.last_use = 10, c.last_use = 5, u.last_use = 40;
    hwi_resident *two[2];
    hwi_offload.list = two;
    hwi_offload.n = 2;
    two[0] = &a, two[1] = &c;          /* c (at the edge) is within, a (3) outside */
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, NULL, 0) == &a);
    two[0] = &c, two[1] = &a;
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, NULL, 0) == &a);
    two[0] = &b, two[1] = &c;          /* both within: the farther, whatever the sizes */
    tc.nbytes = (size_t)2 << 20;
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, NULL, 0) == &c);
    two[0] = &c, two[1] = &b;
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, NULL, 0) == &c);
    tc.nbytes = (size_t)1 << 20;
    two[0] = &a, two[1] = &u;          /* both outside: the smaller block, however far */
    ta.nbytes = (size_t)2 << 20;
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, NULL, 0) == &u);
    ta.nbytes = (size_t)1 << 20, tu.nbytes = (size_t)2 << 20;
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, NULL, 0) == &a);
    tu.nbytes = (size_t)1 << 20;       /* the same size: the oldest last use (a, 30) */
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, NULL, 0) == &a);
    two[0] = &u, two[1] = &a;
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, NULL, 0) == &a);
    EXPECT(hwi_plan_pick_handover(0, 2 << 20, NULL, 0) == NULL);   /* no block holds it */
    hwi_tensor *keep_a[1] = {&ta};     /* an operand of the current op stays */
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, keep_a, 1) == &u);
    u.wb = (hwi_xfer *)&u;             /* one already handed over, its write-back queued */
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, keep_a, 1) == NULL);
    u.wb = NULL;
    OK(hwrt_set_config("auto_offload", "0"));        /* no order: size, then oldest */
    two[0] = &a, two[1] = &c;
    EXPECT(hwi_plan_pick_handover(0, 1 << 20, NULL, 0) == &c);
    OK(hwrt_set_config("auto_offload", "1"));
    hwi_offload.list = list;
    hwi_offload.n = 3;
    OK(hwrt_set_config("prefetch_depth", depth));

    TEST_CASE("block sizes: one class for the upper half of the largest, where two fit");
    /* learned order a (1 MiB), b (4 MiB), c (3 MiB): c is fetched into a 4 MiB block when the
     * offloadable share holds two of them, a (under half of 4 MiB) keeps its own size
     * (seed 3009's offload_plan.c:236 `n < max / 2 || n >= max` made `&&` gave a 4 MiB) */
    hwi_offload.norder = 3;
    a.order_pos = 0, b.order_pos = 1, c.order_pos = 2;
    ta.nbytes = (size_t)1 << 20;
    tb.nbytes = (size_t)4 << 20;
    tc.nbytes = (size_t)3 << 20;
    hwi_offload.n = 0;                 /* no resident holds device memory */
    EXPECT(hwi_plan_block_bytes(&a) == ((size_t)1 << 20));
    EXPECT(hwi_plan_block_bytes(&b) == ((size_t)4 << 20));
    EXPECT(hwi_plan_block_bytes(&c) == ((size_t)4 << 20));
    int hole = -1;                     /* the class block fits: fetched in it, not a hole */
    EXPECT(hwi_plan_fetch_bytes(&c, NULL, 0, &hole) == ((size_t)4 << 20) && hole == 0);
    char cap[32] = "";
    OK(hwrt_get_config("max_device_memory", cap, sizeof cap));
    OK(hwrt_set_config("max_device_memory", "8MB"));   /* room for two, exactly */
    EXPECT(hwi_plan_block_bytes(&c) == ((size_t)4 << 20));
    ta.nbytes = (size_t)2 << 20;       /* half of the largest exactly: the upper half */
    EXPECT(hwi_plan_block_bytes(&a) == ((size_t)4 << 20));
    ta.nbytes = (size_t)1 << 20;
    OK(hwrt_set_config("max_device_memory", "6MB"));   /* room for one 4 MiB block only */
    EXPECT(hwi_plan_block_bytes(&c) == ((size_t)3 << 20));
    EXPECT(hwi_plan_block_bytes(&a) == ((size_t)1 << 20));
    OK(hwrt_set_config("max_device_memory", cap));
    OK(hwrt_set_config("auto_offload", "0"));          /* not learned: its own size */
    EXPECT(hwi_plan_block_bytes(&c) == ((size_t)3 << 20));
    OK(hwrt_set_config("auto_offload", "1"));

    free(order);
    hwi_offload = saved;
    OK(hwrt_set_config("auto_offload", autoo));
    return test_report();
}
