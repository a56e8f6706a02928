/* The handle table (src/runtime/handle.c, built into this test with a retirement
 * generation of 64 instead of 2^32 - 16, so that a slot gets there in 32 reuses):
 *   - a stale handle never resolves, whatever reused its slot since, also when the
 *     slot's generation would wrap (a retired slot is never handed out again);
 *   - pins: a destroyed handle's object lives until its last pin is put, and the
 *     destructor runs exactly once, on the put that drops the last reference;
 *   - drain (hwrt_shutdown) destroys unpinned objects at once and leaves pinned ones to
 *     their last put. */
#include "harness.h"
#include "runtime/handle.h"

#include <pthread.h>

static int dtor_runs;
static void *last_freed;
static hwrt_status dtor(void *obj)
{
    dtor_runs++;
    last_freed = obj;
    return HWRT_ERROR_IO;              /* distinctive: the put that ran it returns it */
}

static int drained;
static void drain_fn(void *obj) { (void)obj; drained++; }

static uint32_t slot_of(const void *h) { return (uint32_t)(((uintptr_t)h >> 8) & 0xffffffu); }

int main(void)
{
    hwi_handle_set_dtor(HWI_H_OTHER, dtor);
    int objs[64];

    TEST_CASE("stale_never_resolves");
    void *first = hwi_handle_new(HWI_H_OTHER, &objs[0]);
    uint32_t slot = slot_of(first);
    void *stale[40];
    int lives = 0, moved = 0;
    void *h = first;
    for (int i = 0; i < 40; i++) {
        stale[i] = h;
        EXPECT(hwi_handle_kill(h, HWI_H_OTHER, NULL) == 1);
        h = hwi_handle_new(HWI_H_OTHER, &objs[(i + 1) % 64]);
        if (slot_of(h) == slot) lives++;
        else moved = 1;
        for (int j = 0; j <= i; j++) {         /* no earlier handle names the new object */
            void *o = hwi_handle_acquire(stale[j], HWI_H_OTHER);
            EXPECT(o == NULL);
            if (o) hwi_handle_put(stale[j]);
        }
        void *o = hwi_handle_acquire(h, HWI_H_OTHER);
        EXPECT(o == &objs[(i + 1) % 64]);
        if (o) hwi_handle_put(h);
    }
    /* generations 1, 3, .. 63 are the slot's 32 lives; then it is retired */
    EXPECT(lives == 31);
    EXPECT(moved);
    printf("slot %u: %d lives, then retired\n", slot, lives + 1);
    hwi_handle_kill(h, HWI_H_OTHER, NULL);

    TEST_CASE("pins_outlive_destroy");
    dtor_runs = 0;
    void *p = hwi_handle_new(HWI_H_OTHER, &objs[1]);
    EXPECT(hwi_handle_acquire(p, HWI_H_OTHER) == &objs[1]);
    EXPECT(hwi_handle_acquire(p, HWI_H_OTHER) == &objs[1]);
    hwrt_status st = HWRT_SUCCESS;
    EXPECT(hwi_handle_kill(p, HWI_H_OTHER, &st) == 1);
    EXPECT(st == HWRT_SUCCESS && dtor_runs == 0);      /* two pins left */
    EXPECT(hwi_handle_acquire(p, HWI_H_OTHER) == NULL);  /* dead to new calls */
    EXPECT(hwi_handle_kill(p, HWI_H_OTHER, &st) == 0);   /* a second destroy is refused */
    EXPECT(hwi_handle_put(p) == HWRT_SUCCESS && dtor_runs == 0);
    EXPECT(hwi_handle_put(p) == HWRT_ERROR_IO && dtor_runs == 1 && last_freed == &objs[1]);

    TEST_CASE("kill_without_pins_frees_at_once");
    dtor_runs = 0;
    void *q = hwi_handle_new(HWI_H_OTHER, &objs[2]);
    EXPECT(hwi_handle_kill(q, HWI_H_OTHER, &st) == 1);
    EXPECT(st == HWRT_ERROR_IO && dtor_runs == 1 && last_freed == &objs[2]);

    TEST_CASE("wrong_type_or_forged");
    void *r = hwi_handle_new(HWI_H_OTHER, &objs[3]);
    EXPECT(hwi_handle_acquire(r, HWI_H_TENSOR) == NULL);
    EXPECT(hwi_handle_acquire((void *)((uintptr_t)r ^ (1ull << 33)), HWI_H_OTHER) == NULL);
    EXPECT(hwi_handle_acquire(NULL, HWI_H_OTHER) == NULL);
    EXPECT(hwi_handle_acquire((void *)((uintptr_t)r & ~(uintptr_t)1), HWI_H_OTHER) == NULL);
    /* the type bits of another type on r's slot and generation: not a tensor, not killed */
    void *forged = (void *)(((uintptr_t)r & ~((uintptr_t)0x7f << 1)) | ((uintptr_t)HWI_H_TENSOR << 1));
    EXPECT(hwi_handle_acquire(forged, HWI_H_TENSOR) == NULL);
    EXPECT(hwi_handle_kill(forged, HWI_H_TENSOR, NULL) == 0);
    EXPECT(hwi_handle_live(r, HWI_H_OTHER));

    TEST_CASE("many_live");               /* more than one chunk of slots (4096 each) */
    enum { MANY = 10000 };
    static void *many[MANY];
    int all = 1;
    for (int i = 0; i < MANY; i++) {
        many[i] = hwi_handle_new(HWI_H_OTHER, &objs[i % 64]);
        all &= many[i] != NULL;
    }
    EXPECT(all);
    for (int i = 0; all && i < MANY; i++) {
        void *o = hwi_handle_acquire(many[i], HWI_H_OTHER);
        if (o != &objs[i % 64]) { all = 0; break; }
        hwi_handle_put(many[i]);
        for (int j = i + 1; j < i + 3 && j < MANY; j++) all &= many[j] != many[i];
    }
    EXPECT(all);
    dtor_runs = 0;
    for (int i = 0; i < MANY; i++) hwi_handle_kill(many[i], HWI_H_OTHER, NULL);
    EXPECT(dtor_runs == MANY);

    TEST_CASE("drain");
    dtor_runs = drained = 0;
    void *pinned = hwi_handle_new(HWI_H_OTHER, &objs[4]);
    EXPECT(hwi_handle_acquire(pinned, HWI_H_OTHER) == &objs[4]);
    EXPECT(hwi_handle_drain(HWI_H_OTHER, drain_fn) == 2);     /* r and pinned */
    EXPECT(drained == 1 && dtor_runs == 0);
    EXPECT(!hwi_handle_live(r, HWI_H_OTHER) && !hwi_handle_live(pinned, HWI_H_OTHER));
    EXPECT(hwi_handle_put(pinned) == HWRT_ERROR_IO && dtor_runs == 1);
    return test_report();
}
