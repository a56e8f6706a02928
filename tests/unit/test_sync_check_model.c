/* The sync checker against a model of happens-before (issue 25: diag/sync_check.c was the
 * stratum whose sampled mutants survived most often, one case at a time).
 *
 * Random single-threaded programs on the sim (kernels, device-to-device copies, pinned and
 * pageable copies both ways, event records and waits, stream / device / event
 * synchronization, synchronous copies with hwrt_memcpy both ways, streams destroyed and made
 * anew) run with the checker on, and a model written here predicts, after every call, the
 * reports the checker must make: how many, the kind of the last one, the two streams it
 * names and what each op did to the block. The model is the contract of hwrt_diag.h in vector clocks, one per stream
 * (destroyed ones too) and one for the host:
 * - an op on stream s first takes the host's clock (the host queued it after everything
 *   the host knows of), then counts itself in s's own entry;
 * - recording an event keeps s's clock; waiting on it joins that clock (an event never
 *   recorded orders nothing);
 * - a stream synchronization joins that stream's clock into the host's; a device or event
 *   synchronization joins every stream's; a pageable copy, which returns once it ran,
 *   joins its stream's; hwrt_memcpy synchronizes the default stream before and after;
 * - an earlier access is ordered before an op on s when it is s's own, when s's clock has
 *   counted it, or when its stream was destroyed (hwrt_stream_destroy synchronized it);
 * - per block, the op's reads (in argument order) are checked against the last writer
 *   (read after write, or a host read when the op is hwrt_memcpy's), then its write
 *   against the last writer (write after write) and against the readers since, the first
 *   unordered one reported (write after read); a write then starts the block over.
 * Programs are seeded (HWRT_SYNC_MODEL_SEEDS=first:count explores others); a mismatch
 * prints the program's seed, the op and both answers. */
#include "harness.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NT = 5, NE = 4, LIVE = 4, MAXM = 256, N = 256, OPS = 300 };

typedef struct { int live; hwrt_stream h; uint64_t vc[MAXM]; } mstream;   /* vc[own]: its ops */
typedef struct { int ms; uint64_t seq; } macc;
typedef struct { int has_writer; macc writer; macc readers[MAXM]; int nreaders; } mblock;
typedef struct { hwrt_event h; int recorded; uint64_t vc[MAXM]; } mevent;

static mstream ms[MAXM];
static int nms;
static uint64_t host[MAXM];
static mblock blk[NT];
static mevent ev[NE];
static hwrt_tensor tens[NT];
static void *tdata[NT];
static void *pinned, *pageable;
static uint64_t rng;

/* what the model expects of one call */
enum { RAW, WAW, WAR, HOSTREAD };
static int nexp, last_kind, last_cur, last_prev;
static uint64_t reports[4];            /* the checker's, by the kind of the op's last one */

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void join(uint64_t *dst, const uint64_t *src)
{
    for (int j = 0; j < nms; j++)
        if (src[j] > dst[j]) dst[j] = src[j];
}

static int ordered(const macc *a, int s)
{
    return a->ms == s || ms[s].vc[a->ms] >= a->seq || !ms[a->ms].live;
}

static void expect(int kind, int cur, int prev)
{
    nexp++;
    last_kind = kind;
    last_cur = cur;
    last_prev = prev;
}

/* An op on model stream s reading rd[0..nr) and writing wr (or -1), as the checker sees
 * it; host_read: hwrt_memcpy's own read. */
static void op(int s, const int *rd, int nr, int wr, int host_read)
{
    mstream *m = &ms[s];
    join(m->vc, host);
    macc cur = {s, ++m->vc[s]};
    for (int i = 0; i < nr; i++) {
        mblock *b = &blk[rd[i]];
        if (b->has_writer && !ordered(&b->writer, s))
            expect(host_read ? HOSTREAD : RAW, s, b->writer.ms);
        int r = 0;
        while (r < b->nreaders && b->readers[r].ms != s) r++;
        b->readers[r] = cur;
        if (r == b->nreaders) b->nreaders++;
    }
    if (wr >= 0) {
        mblock *b = &blk[wr];
        if (b->has_writer && !ordered(&b->writer, s)) expect(WAW, s, b->writer.ms);
        for (int r = 0; r < b->nreaders; r++)
            if (!ordered(&b->readers[r], s)) {
                expect(WAR, s, b->readers[r].ms);
                break;
            }
        b->writer = cur;
        b->has_writer = 1;
        b->nreaders = 0;
    }
}

static void host_join(int s) { join(host, ms[s].vc); }

static void host_join_all(void)
{
    for (int s = 0; s < nms; s++)
        host_join(s);             /* a stream with no work yet has an empty clock */
}

/* a live model stream, the default one (0) about a fifth of the time */
static int pick_stream(void)
{
    int live[MAXM], n = 0;
    for (int s = 1; s < nms; s++)
        if (ms[s].live) live[n++] = s;
    return n == 0 || rnd(5) == 0 ? 0 : live[rnd((uint32_t)n)];
}

/* a new model stream: hwrt's default stream (model stream 0) or a new one */
static void new_stream(int is_default)
{
    if (nms == MAXM) return;
    int s = nms++;
    memset(&ms[s], 0, sizeof ms[s]);
    if (!is_default) OK(hwrt_stream_create(&ms[s].h, 0));
    ms[s].live = 1;
}

static void stream_text(int s, char *buf, size_t len)
{
    if (s == 0) snprintf(buf, len, "the default stream of device 0");
    else snprintf(buf, len, "stream %p (device 0)", (void *)ms[s].h);
}

static const char *const kind_text[] = {"(read after write)", "(write after write)",
                                        "(write after read)", "host read of unsynchronized"};
/* what the op does to the block, and what the earlier op did */
static const char *const cur_text[] = {") reads device block", ") writes device block",
                                       ") writes device block", ") reads device block"};
static const char *const prev_text[] = {") writes, and no event", ") writes, and no event",
                                        ") reads, and no event", ") writes, and no event"};

static int check(uint64_t *seen, unsigned seed, int step, const char *what)
{
    uint64_t now = hwrt_diag_hazard_count();
    int ok = now - *seen == (uint64_t)nexp;
    char last[1024] = "", cur[64], prev[64];
    if (ok && nexp) {
        OK(hwrt_diag_last_hazard(last, sizeof last));
        stream_text(last_cur, cur, sizeof cur);
        stream_text(last_prev, prev, sizeof prev);
        ok = strstr(last, kind_text[last_kind]) && strstr(last, cur) && strstr(last, prev) &&
             strstr(last, cur_text[last_kind]) && strstr(last, prev_text[last_kind]);
        for (int k = 0; k < 4; k++)
            if (k != last_kind && strstr(last, kind_text[k])) ok = 0;
    }
    if (ok && nexp) reports[last_kind] += (uint64_t)nexp;
    if (!ok)
        fprintf(stderr, "seed %u, op %d (%s): the model expects %d report(s)%s%s, the checker "
                "made %llu%s%s\n", seed, step, what, nexp, nexp ? ", the last " : "",
                nexp ? kind_text[last_kind] : "", (unsigned long long)(now - *seen),
                last[0] ? ": " : "", last);
    *seen = now;
    nexp = 0;
    return ok;
}

static int run_program(unsigned seed)
{
    rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed * 0x100000001b3ull);
    OK(hwrt_device_synchronize());
    OK(hwrt_diag_reset());
    memset(host, 0, sizeof host);
    memset(blk, 0, sizeof blk);
    nms = 0;
    new_stream(1);
    int live = 1 + (int)rnd(LIVE);
    for (int i = 0; i < live; i++) new_stream(0);
    for (int e = 0; e < NE; e++) ev[e].recorded = 0;
    uint64_t seen = hwrt_diag_hazard_count();
    int bad = 0;
    size_t bytes = N * sizeof(float);
    for (int step = 0; step < OPS && bad < 3; step++) {
        int s = pick_stream(), a = (int)rnd(NT), b = (int)rnd(NT), c = (int)rnd(NT);
        hwrt_stream h = ms[s].h;
        const char *what;
        uint32_t k = rnd(100);
        if (k < 12) {
            what = "fill";
            OK(hwrt_op_fill(tens[c], 1.0, h));
            op(s, NULL, 0, c, 0);
        } else if (k < 22) {
            what = "scale";
            OK(hwrt_op_scale(tens[c], tens[a], 2.0, h));
            op(s, (int[]){a}, 1, c, 0);
        } else if (k < 34) {
            what = "add";
            OK(hwrt_op_add(tens[c], tens[a], tens[b], h));
            op(s, (int[]){a, b}, 2, c, 0);
        } else if (k < 42) {
            what = "device-to-device copy";
            if (a == c) c = (c + 1) % NT;
            OK(hwrt_memcpy_async(tdata[c], tdata[a], bytes, HWRT_MEMCPY_DEVICE_TO_DEVICE, h));
            op(s, (int[]){a}, 1, c, 0);
        } else if (k < 47) {
            what = "pinned host-to-device copy";
            OK(hwrt_memcpy_async(tdata[c], pinned, bytes, HWRT_MEMCPY_HOST_TO_DEVICE, h));
            op(s, NULL, 0, c, 0);
        } else if (k < 50) {
            what = "pageable host-to-device copy";
            OK(hwrt_memcpy_async(tdata[c], pageable, bytes, HWRT_MEMCPY_HOST_TO_DEVICE, h));
            op(s, NULL, 0, c, 0);
            host_join(s);
        } else if (k < 55) {
            what = "pinned device-to-host copy";
            OK(hwrt_memcpy_async(pinned, tdata[a], bytes, HWRT_MEMCPY_DEVICE_TO_HOST, h));
            op(s, (int[]){a}, 1, -1, 0);
        } else if (k < 58) {
            what = "pageable device-to-host copy";
            OK(hwrt_memcpy_async(pageable, tdata[a], bytes, HWRT_MEMCPY_DEVICE_TO_HOST, h));
            op(s, (int[]){a}, 1, -1, 0);
            host_join(s);
        } else if (k < 70) {
            int e = (int)rnd(NE);
            what = "event record";
            OK(hwrt_event_record(ev[e].h, h));
            join(ms[s].vc, host);
            memcpy(ev[e].vc, ms[s].vc, sizeof ev[e].vc);
            ev[e].recorded = 1;
        } else if (k < 82) {
            int e = (int)rnd(NE);
            what = "wait on an event";
            OK(hwrt_stream_wait_event(h, ev[e].h));
            if (ev[e].recorded) {
                join(ms[s].vc, host);
                join(ms[s].vc, ev[e].vc);
            }
        } else if (k < 86) {
            what = "stream synchronize";
            OK(hwrt_stream_synchronize(h));
            host_join(s);
        } else if (k < 88) {
            what = "device synchronize";
            OK(hwrt_device_synchronize());
            host_join_all();
        } else if (k < 90) {
            what = "event synchronize";
            OK(hwrt_event_synchronize(ev[rnd(NE)].h));
            host_join_all();
        } else if (k < 94) {
            what = "hwrt_memcpy to the host";
            float back[N];
            OK(hwrt_memcpy(back, tdata[a], bytes, HWRT_MEMCPY_DEVICE_TO_HOST));
            host_join(0);
            op(0, (int[]){a}, 1, -1, 1);
            host_join(0);
        } else if (k < 95) {
            what = "hwrt_memcpy from the host";
            OK(hwrt_memcpy(tdata[c], pageable, bytes, HWRT_MEMCPY_HOST_TO_DEVICE));
            host_join(0);
            op(0, NULL, 0, c, 0);
            host_join(0);
        } else if (s != 0) {
            what = "stream destroyed, another made";
            OK(hwrt_stream_destroy(h));
            ms[s].live = 0;
            new_stream(0);
        } else {
            what = "stream made";
            int n = 0;
            for (int i = 1; i < nms; i++) n += ms[i].live;
            if (n < LIVE) new_stream(0);
        }
        if (!check(&seen, seed, step, what)) bad++;
    }
    OK(hwrt_device_synchronize());
    for (int i = 1; i < nms; i++)
        if (ms[i].live) OK(hwrt_stream_destroy(ms[i].h));
    return bad == 0;
}

int main(void)
{
    OK(hwrt_set_device("sim", 0));
    OK(hwrt_set_check_sync(1));
    int64_t shape[1] = {N};
    static float zero[N];
    for (int i = 0; i < NT; i++) {
        OK(hwrt_tensor_from_host(&tens[i], HWRT_FLOAT32, 1, shape, zero));
        OK(hwrt_tensor_data(tens[i], &tdata[i]));
    }
    for (int e = 0; e < NE; e++) OK(hwrt_event_create(&ev[e].h, 0));
    OK(hwrt_host_alloc(&pinned, N * sizeof(float), HWRT_HOST_PINNED));
    pageable = calloc(N, sizeof(float));
    EXPECT(pageable != NULL);

    unsigned first = 1, count = 60;
    const char *env = getenv("HWRT_SYNC_MODEL_SEEDS");
    if (env && sscanf(env, "%u:%u", &first, &count) != 2) first = 1, count = 60;
    TEST_CASE("random programs: the checker's reports are the model's");
    int agreed = 0;
    for (unsigned seed = first; seed < first + count; seed++) agreed += run_program(seed);
    printf("%d of %u programs agreed with the model; reports by the kind of each op's last: "
           "%llu read after write, %llu write after write, %llu write after read, %llu host "
           "reads\n", agreed, count, (unsigned long long)reports[RAW],
           (unsigned long long)reports[WAW], (unsigned long long)reports[WAR],
           (unsigned long long)reports[HOSTREAD]);
    EXPECT(agreed == (int)count);
    for (int k = 0; k < 4; k++) EXPECT(reports[k] > 0);   /* the programs make every kind */

    for (int e = 0; e < NE; e++) OK(hwrt_event_destroy(ev[e].h));
    for (int i = 0; i < NT; i++) OK(hwrt_tensor_release(tens[i]));
    OK(hwrt_host_free(pinned));
    free(pageable);
    return test_report();
}
