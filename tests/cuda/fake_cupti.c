/* A stand-in libcupti for cupti_records.c: a real shared library, loaded by hwrt through
 * HWRT_CUPTI_LIBRARY, exporting the CUPTI entry points hwrt resolves. It has no device
 * behind it: the test queues activity records (fake_cupti_add: fixed 128-byte records
 * with CUPTI's field offsets, as cuda_api.h names them) and ends a buffer
 * (fake_cupti_cut); cuptiActivityFlushAll hands every ended buffer to the registered
 * callback in a buffer hwrt itself supplied (buffer_requested), as CUPTI does.
 * cuptiActivityEnable fails for the kind set by fake_cupti_fail_enable (0: none), the
 * push of an external id while fake_cupti_fail_push(1). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
#define REC 128
#define MAXBUF 16
#define BUFCAP (1u << 20)

typedef void (*req_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*comp_fn)(void *ctx, uint32_t stream_id, uint8_t *buffer, size_t size, size_t valid);

static req_fn req;
static comp_fn comp;
static uint8_t *bufs[MAXBUF];
static size_t lens[MAXBUF];
static int nbufs;                 /* ended buffers: 0..nbufs-1; bufs[nbufs]: being filled */
static unsigned fail_kind;
static int fail_push;
static int enabled[64], disables, flushes, forced_flushes;
static uint64_t stack[64];
static int depth, pushes;

API void fake_cupti_fail_enable(unsigned kind) { fail_kind = kind; }
API void fake_cupti_fail_push(int on) { fail_push = on; }
API int fake_cupti_enabled(unsigned kind) { return kind < 64 ? enabled[kind] : 0; }
API int fake_cupti_disables(void) { return disables; }
API int fake_cupti_flushes(int forced) { return forced ? forced_flushes : flushes; }
API int fake_cupti_pushes(void) { return pushes; }
API int fake_cupti_depth(void) { return depth; }

/* A record of kind: for EXTERNAL_CORRELATION (39) a = external kind, b = external id,
 * c = CUPTI's correlation id; for kernels (10), memcpy (1), memset (2) and any other kind
 * a = start, b = end, c = correlation id. Returns 0 when the buffer is full. */
API int fake_cupti_add(unsigned kind, uint64_t a, uint64_t b, uint32_t c)
{
    if (nbufs == MAXBUF) return 0;
    if (!bufs[nbufs]) bufs[nbufs] = calloc(1, BUFCAP);
    if (!bufs[nbufs] || lens[nbufs] + REC > BUFCAP) return 0;
    uint8_t *r = bufs[nbufs] + lens[nbufs];
    memset(r, 0, REC);
    memcpy(r, &kind, 4);
    if (kind == 39) {
        uint32_t k = (uint32_t)a;
        memcpy(r + 4, &k, 4);
        memcpy(r + 8, &b, 8);
        memcpy(r + 16, &c, 4);
    } else {
        memcpy(r + 16, &a, 8);
        memcpy(r + 24, &b, 8);
        memcpy(r + (kind == 10 ? 92 : 44), &c, 4);
    }
    lens[nbufs] += REC;
    return 1;
}

API void fake_cupti_cut(void) { if (nbufs < MAXBUF && lens[nbufs]) nbufs++; }

API unsigned cuptiGetTimestamp(uint64_t *ts) { *ts = 1000000000ull; return 0; }
API unsigned cuptiActivityEnable(unsigned kind)
{
    if (kind == fail_kind) return 1;   /* CUPTI_ERROR_INVALID_PARAMETER */
    if (kind < 64) enabled[kind] = 1;
    return 0;
}
API unsigned cuptiActivityDisable(unsigned kind)
{
    if (kind < 64) enabled[kind] = 0;
    disables++;
    return 0;
}
API unsigned cuptiActivityRegisterCallbacks(req_fn r, comp_fn c) { req = r; comp = c; return 0; }
API unsigned cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + REC : buffer;
    if ((size_t)(next - buffer) + REC > valid) return 12;   /* CUPTI_ERROR_MAX_LIMIT_REACHED */
    *record = next;
    return 0;
}
API unsigned cuptiActivityFlushAll(uint32_t flag)
{
    flushes++;
    forced_flushes += flag == 1;
    for (int i = 0; i < nbufs; i++) {
        uint8_t *b = NULL;
        size_t size = 0, maxr = 0;
        req(&b, &size, &maxr);
        size_t n = b && lens[i] <= size ? lens[i] : 0;
        if (n) memcpy(b, bufs[i], n);
        comp(NULL, 0, b, size, n);
        free(bufs[i]);
        bufs[i] = NULL;
        lens[i] = 0;
    }
    if (nbufs && nbufs < MAXBUF) {           /* the one being filled moves to the front */
        bufs[0] = bufs[nbufs];
        lens[0] = lens[nbufs];
        bufs[nbufs] = NULL;
        lens[nbufs] = 0;
    }
    nbufs = 0;
    return 0;
}
API unsigned cuptiActivityPushExternalCorrelationId(unsigned kind, uint64_t id)
{
    if (kind != 3 || depth == 64 || fail_push) return 1;
    stack[depth++] = id;
    pushes++;
    return 0;
}
API unsigned cuptiActivityPopExternalCorrelationId(unsigned kind, uint64_t *last)
{
    if (kind != 3 || !depth) return 1;
    *last = stack[--depth];
    return 0;
}
