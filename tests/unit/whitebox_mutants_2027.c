/* Regression tests for survivors of issue 25's seeded mutation runs (seeds 2026-2027 and
 * later; docs/RELIABILITY.md "Mutation score (issue 25 item 2)") that need libhwrt's
 * internals: libhwrt linked statically, calloc wrapped (-Wl,--wrap=calloc) so that an
 * array of device records (bind.c's dev_rec, 464 bytes) gets a poisoned record after its
 * end. Each case names its mutant. */
#include "harness.h"
#include "base/status.h"
#include "distributed/dist.h"
#include "runtime/device.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

/* ---- calloc with a canary record after every array of bind.c's dev_rec ---- */

#define DEV_REC_SIZE 464              /* sizeof(dev_rec) in src/distributed/bind.c */
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
static int canaries;                  /* arrays given a canary */
void *__wrap_calloc(size_t n, size_t size)
{
    if (size != DEV_REC_SIZE || n == 0 || n > 1024) return __real_calloc(n, size);
    unsigned char *p = __real_calloc(n + 1, size);
    if (p) {
        /* a record that failed, with a sentence of its own: read only past the end */
        int32_t bad = HWRT_ERROR_INTERNAL;
        memcpy(p + n * size, &bad, sizeof bad);
        snprintf((char *)p + n * size + 24, 440, "CANARY: a record past the array's end");
        canaries++;
    }
    return p;
}

/* device.c hwi_device_close_parts: with two parts failing, the first one's error (in
 * close order) is the device's (the mutant `st != SUCCESS && first == SUCCESS` made `||`
 * reported the last failing part's sentence instead). The parts are fakes attached to a
 * sim device in the two slots no test call has filled yet (offload, exec). */
static int closes;
static hwrt_status close_a(hwi_device *d, void *part)
{
    (void)d, (void)part;
    closes++;
    return hwi_err(HWRT_ERROR_IO, "part A: first close failed");
}
static hwrt_status close_b(hwi_device *d, void *part)
{
    (void)d, (void)part;
    closes++;
    return hwi_err(HWRT_ERROR_DEVICE_FAULT, "part B: second close failed");
}
static const hwi_dev_part_ops ops_a = {close_a, NULL}, ops_b = {close_b, NULL};

static void first_part_failure_wins(void)
{
    TEST_CASE("closing a device reports its first failing part");
    OK(hwrt_set_device("sim", 0));
    hwi_device *d = NULL;
    OK(hwi_device_current(&d));
    if (!d) return;
    static int a, b;
    EXPECT(hwi_device_part(d, HWI_PART_OFFLOAD) == NULL && hwi_device_part(d, HWI_PART_EXEC) == NULL);
    EXPECT(hwi_device_attach(d, HWI_PART_OFFLOAD, &a, &ops_a) == &a);
    EXPECT(hwi_device_attach(d, HWI_PART_EXEC, &b, &ops_b) == &b);
    FAILS(hwi_device_close_parts(d), HWRT_ERROR_IO, "part A: first close failed");
    EXPECT(closes == 2);                          /* both closed, whichever failed */
    EXPECT(hwi_device_part(d, HWI_PART_OFFLOAD) == NULL && hwi_device_part(d, HWI_PART_EXEC) == NULL);
    /* the same order through hwrt_shutdown */
    EXPECT(hwi_device_attach(d, HWI_PART_OFFLOAD, &a, &ops_a) == &a);
    EXPECT(hwi_device_attach(d, HWI_PART_EXEC, &b, &ops_b) == &b);
    FAILS(hwrt_shutdown(), HWRT_ERROR_IO, "hwrt_shutdown: part A: first close failed");
    EXPECT(closes == 4);
}

/* bind.c verdict_failed: the failing ranks are counted over the d->size records the
 * exchange gathered, and no further (the mutant `r < d->size` made `<=` read one record
 * past the calloc'd array: here the canary, counted as a third failing rank). The world is
 * faked: 3 ranks on two hosts, an engine whose allgather hands out the ranks' records. */
static const hwrt_status rank_status[3] = {HWRT_SUCCESS, HWRT_ERROR_INVALID_DEVICE, HWRT_SUCCESS};
static hwrt_status fake_allgather(void *comm, const void *in, void *out, size_t bytes,
                                  hwi_stream *s)
{
    (void)comm, (void)s;
    for (int r = 0; r < 3; r++) {
        unsigned char *rec = (unsigned char *)out + (size_t)r * bytes;
        memcpy(rec, in, bytes);                   /* rank 0's, then each rank's own status */
        int32_t st = rank_status[r];
        memcpy(rec, &st, sizeof st);
        if (st != HWRT_SUCCESS)
            snprintf((char *)rec + 24, 440, "rank %d: no device %d here", r, r);
    }
    return HWRT_SUCCESS;
}

static void failed_ranks_counted_within_the_world(void)
{
    TEST_CASE("a failed binding counts the world's ranks only");
    static char hosts[3][HWI_HOST_LEN] = {"hostA", "hostA", "hostB"};
    static hwi_coll_engine eng;
    eng = hwi_engine_self;
    eng.name = "fake3";
    eng.allgather = fake_allgather;
    hwi_dist saved = hwi_dist_g;
    hwi_dist_g.rank = 0;
    hwi_dist_g.size = 3;
    hwi_dist_g.nhosts = 2;
    hwi_dist_g.hosts = hosts;
    hwi_dist_g.eng = &eng;
    int before = canaries;
    FAILS(hwi_dist_exchange_devices("hwrt_dist_bind_device", "sim", 0, HWRT_SUCCESS, ""),
          HWRT_ERROR_INVALID_DEVICE, "hwrt_dist_bind_device: 1 rank(s) could not bind a device");
    EXPECT(strstr(hwrt_last_error(), "rank 1 (host hostA) said: rank 1: no device 1 here") != NULL);
    EXPECT(strstr(hwrt_last_error(), "CANARY") == NULL);
    EXPECT(canaries == before + 1);               /* the records' array was the one wrapped */
    hwi_dist_g = saved;
}

int main(void)
{
    setenv("HWRT_SIM_DEVICES", "1", 1);
    first_part_failure_wins();
    failed_ranks_counted_within_the_world();
    return test_report();
}
