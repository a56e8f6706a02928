/* Regression tests for survivors of issue 25's seed-3004 mutation run (docs/RELIABILITY.md
 * "Mutation score (issue 25 item 2)") that need libhwrt's internals: libhwrt linked
 * statically, and the sim registry's source compiled into this file (its SIGBUS handler is
 * static). Each case names its mutant; each fails with it planted by hand.
 * - sim_registry.c on_sigbus: a fault at the mapping's first byte (the header's magic, the
 *   first word open_reg reads) is the registry's own, one past its end is not
 *   (`a >= lo` made `>` passed the registry's own fault on to the default action);
 * - pool_map.c pmap_take: backward-shift deletion across the table's end keeps every other
 *   block findable (`home > j || home <= k` made `&&` moved a block before its home);
 * - offload_plan.c better_handover: a tensor used exactly prefetch_depth + 1 uses ahead is
 *   inside the prefetch window, so a block outside it is handed over first (`distance(r) <=
 *   window` made `<` gave away the soon-needed tensor's block for being smaller); within
 *   the window the farther next use goes first, whatever the sizes (hunt run 4002:
 *   `distance(r) != distance(best)` made `==`);
 * - tier_disk.c free_extent: a freed region merges with the hole after it only when they
 *   touch (`off + len == holes[i].off` made `!=` stretched a hole over a live region, and
 *   the next write overwrote that region's data). */
#include "../../src/backends/sim/sim_registry.c"

#include "harness.h"
#include "mem/pool_internal.h"
#include "offload/residency.h"
#include "offload/tier_disk.h"
#include "tensor/tensor.h"

#include <stdint.h>
#include <stdlib.h>

/* ---- sim_registry.c: the SIGBUS guard's range ---- */

static int guard_takes(const char *addr)
{
    static sigjmp_buf jb;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGBUS;
    si.si_code = BUS_ADRERR;          /* a fault, not kill(): nothing is raised again */
    si.si_addr = (void *)addr;
    if (sigsetjmp(jb, 0)) {
        guard_jb = NULL;
        return 1;
    }
    guard_jb = &jb;
    on_sigbus(SIGBUS, &si, NULL);
    guard_jb = NULL;
    return 0;
}

static void sigbus_guard_range(void)
{
    TEST_CASE("the registry's SIGBUS guard takes its first byte, not one past its end");
    static char area[64 + sizeof(reg_file) + 64];
    char *fake = area + 64;
    struct sigaction keep;
    sigaction(SIGBUS, NULL, &keep);
    mapped = (reg_file *)fake;
    memset(&prev_bus, 0, sizeof prev_bus);   /* before hwrt: the default action */
    EXPECT(guard_takes(fake) == 1);
    EXPECT(guard_takes(fake + sizeof(reg_file) - 1) == 1);
    EXPECT(guard_takes(fake + sizeof(reg_file)) == 0);
    EXPECT(guard_takes(fake - 1) == 0);
    mapped = NULL;
    sigaction(SIGBUS, &keep, NULL);          /* on_sigbus reset it for a foreign fault */
}

/* ---- pool_map.c: deletion across the end of the table ---- */

static void pointer_map_churn(void)
{
    TEST_CASE("the pool's pointer map: every live block found through random churn");
    enum { LIVE = 480, STEPS = 40000 };
    static pblock blocks[LIVE];
    static int live[LIVE];
    dpool dp;
    memset(&dp, 0, sizeof dp);
    memset(live, 0, sizeof live);
    uint64_t x = 3004, next_base = 0x7f0000000000ull;
    int nlive = 0, lost = 0, ghosts = 0;
    for (int step = 0; step < STEPS && !lost; step++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((x >> 33) % LIVE);
        if (!live[i]) {
            blocks[i].base = (char *)(uintptr_t)next_base;
            next_base += 512 * (1 + ((x >> 20) & 63));
            if (!pmap_put(&dp, &blocks[i])) break;
            live[i] = 1;
            nlive++;
        } else {
            if (pmap_take(&dp, blocks[i].base) != &blocks[i]) lost++;
            live[i] = 0;
            nlive--;
            if (pmap_get(&dp, blocks[i].base)) ghosts++;
        }
        if (step % 97 == 0)
            for (int k = 0; k < LIVE; k++)
                if (live[k] && pmap_get(&dp, blocks[k].base) != &blocks[k]) lost++;
    }
    EXPECT(lost == 0 && ghosts == 0);
    EXPECT(dp.nused == (size_t)nlive);
    EXPECT(dp.nslots == 1024);               /* the churn ran at up to 47% load, no growth */
    pmap_clear(&dp);
}

/* ---- offload_plan.c: the prefetch window's edge ---- */

static void handover_window_edge(void)
{
    TEST_CASE("a tensor used prefetch_depth + 1 uses ahead keeps its block");
    char depth[32] = "", autoo[32] = "";
    OK(hwrt_get_config("prefetch_depth", depth, sizeof depth));
    OK(hwrt_get_config("auto_offload", autoo, sizeof autoo));
    OK(hwrt_set_config("auto_offload", "1"));
    OK(hwrt_set_config("prefetch_depth", "1"));          /* window: 2 uses ahead */
    static hwi_tensor small_t, large_t;
    small_t.device = large_t.device = 0;
    small_t.data = (void *)(uintptr_t)0x10000;           /* not the pool's: block = nbytes */
    large_t.data = (void *)(uintptr_t)0x20000;
    small_t.nbytes = (size_t)8 << 20;
    large_t.nbytes = (size_t)16 << 20;
    hwi_resident small_r = {.t = &small_t}, large_r = {.t = &large_t};
    hwi_resident *order[8] = {0};
    hwi_offload_mgr saved = hwi_offload;
    for (int first = 0; first < 2; first++) {          /* the list in both orders */
        hwi_resident *list[2] = {first ? &large_r : &small_r, first ? &small_r : &large_r};
        hwi_offload.list = list;
        hwi_offload.n = 2;
        hwi_offload.order = order;
        hwi_offload.norder = 8;
        hwi_offload.recording = 0;
        hwi_offload.cursor = 0;
        hwi_offload.horizon = 0;
        large_r.order_pos = 5;                           /* outside the window */
        small_r.order_pos = 2;                           /* exactly at its edge: inside */
        EXPECT(hwi_plan_pick_handover(0, small_t.nbytes, NULL, 0) == &large_r);
        small_r.order_pos = 3;                           /* both outside: the smaller block */
        EXPECT(hwi_plan_pick_handover(0, small_t.nbytes, NULL, 0) == &small_r);
        small_r.order_pos = 1;                           /* inside */
        EXPECT(hwi_plan_pick_handover(0, small_t.nbytes, NULL, 0) == &large_r);
        /* both inside the window: the farther next use goes, though its block is larger
         * (hunt run 4002: `distance(r) != distance(best)` made `==` took the smaller) */
        large_r.order_pos = 2;
        EXPECT(hwi_plan_pick_handover(0, small_t.nbytes, NULL, 0) == &large_r);
        large_r.order_pos = 1;
        small_r.order_pos = 2;
        EXPECT(hwi_plan_pick_handover(0, small_t.nbytes, NULL, 0) == &small_r);
    }
    hwi_offload = saved;
    OK(hwrt_set_config("auto_offload", autoo));
    OK(hwrt_set_config("prefetch_depth", depth));
}

/* ---- tier_disk.c: a freed region and the hole after it ---- */

static void disk_holes(void)
{
    TEST_CASE("a freed region not touching the next hole leaves the regions between alone");
    enum { R = 6, K = 4096 };
    static unsigned char data[R][K], back[2 * K];
    hwi_disk_region reg_[R], g;
    memset(reg_, 0, sizeof reg_);
    memset(&g, 0, sizeof g);
    for (int r = 0; r < R; r++) {
        memset(data[r], 'a' + r, K);
        OK(hwi_disk_write(&reg_[r], data[r], K, "test", "region"));
    }
    EXPECT(reg_[1].off == K && reg_[4].off == 4 * K);   /* first fit, in order */
    hwi_disk_release(&reg_[4]);                         /* hole [16K, 20K) */
    hwi_disk_release(&reg_[0]);                         /* [0, 4K): touches no hole */
    static unsigned char two[2 * K];
    memset(two, 'z', sizeof two);
    OK(hwi_disk_write(&g, two, sizeof two, "test", "8 KiB region"));
    EXPECT(g.off != 0);                                 /* no 8 KiB hole at 0 */
    for (int r = 1; r < R; r++) {
        if (r == 4) continue;
        memset(back, 0, K);
        OK(hwi_disk_read(&reg_[r], back, "test", "region"));
        EXPECT(!memcmp(back, data[r], K));
    }
    OK(hwi_disk_read(&g, back, "test", "8 KiB region"));
    EXPECT(!memcmp(back, two, sizeof two));
    for (int r = 1; r < R; r++)
        if (r != 4) hwi_disk_release(&reg_[r]);
    hwi_disk_release(&g);
}

int main(void)
{
    sigbus_guard_range();
    pointer_map_churn();
    handover_window_edge();
    disk_holes();
    return test_report();
}
