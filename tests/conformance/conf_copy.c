/* Copies and memsets: every kind, pinned and pageable host memory, sizes from 1 byte to
 * past the split threshold of large copies, the DEFAULT kind, and every contradiction
 * between a kind and its pointers. */
#include "conf.h"

#include <pthread.h>

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 131u + seed * 7u + (i >> 12));
}

/* host -> device -> device -> host, blocking and async, checking every byte. */
static void roundtrip(unsigned char *src, unsigned char *dst, size_t n, hwrt_stream s, int async)
{
    void *d0, *d1;
    OK(hwrt_malloc(&d0, n));
    OK(hwrt_malloc(&d1, n));
    fill_pattern(src, n, (unsigned)n);
    memset(dst, 0, n);
    if (async) {
        OK(hwrt_memcpy_async(d0, src, n, HWRT_MEMCPY_HOST_TO_DEVICE, s));
        OK(hwrt_memcpy_async(d1, d0, n, HWRT_MEMCPY_DEVICE_TO_DEVICE, s));
        OK(hwrt_memcpy_async(dst, d1, n, HWRT_MEMCPY_DEVICE_TO_HOST, s));
        OK(hwrt_stream_synchronize(s));
    } else {
        OK(hwrt_memcpy(d0, src, n, HWRT_MEMCPY_HOST_TO_DEVICE));
        OK(hwrt_memcpy(d1, d0, n, HWRT_MEMCPY_DEVICE_TO_DEVICE));
        OK(hwrt_memcpy(dst, d1, n, HWRT_MEMCPY_DEVICE_TO_HOST));
    }
    EXPECT(memcmp(src, dst, n) == 0);
    /* DEFAULT infers the kind from the pointers */
    memset(dst, 0, n);
    OK(hwrt_memcpy(d1, src, n, HWRT_MEMCPY_DEFAULT));
    OK(hwrt_memcpy(dst, d1, n, HWRT_MEMCPY_DEFAULT));
    EXPECT(memcmp(src, dst, n) == 0);
    OK(hwrt_free(d0));
    OK(hwrt_free(d1));
}

static void kinds_and_sizes(void)
{
    CASE("memcpy round trips");
    /* the last size is past the sim's split threshold (32 MiB): checked once per kind */
    const size_t sizes[] = {1, 4095, (64 << 10) + 3, (1 << 20) + 7, (40 << 20) + 5};
    const size_t max = (40 << 20) + 5;
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    unsigned char *pin_src, *pin_dst, *hp_src, *hp_dst;
    unsigned char *m_src = malloc(max), *m_dst = malloc(max);
    OK(hwrt_host_alloc((void **)&pin_src, max, HWRT_HOST_PINNED));
    OK(hwrt_host_alloc((void **)&pin_dst, max, HWRT_HOST_PINNED));
    OK(hwrt_host_alloc((void **)&hp_src, max, HWRT_HOST_DEFAULT));
    OK(hwrt_host_alloc((void **)&hp_dst, max, HWRT_HOST_DEFAULT));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] - 1; i++)
        for (int async = 0; async < 2; async++) {
            roundtrip(pin_src, pin_dst, sizes[i], s, async);      /* pinned */
            roundtrip(m_src, m_dst, sizes[i], s, async);          /* pageable, malloc */
            roundtrip(hp_src, hp_dst, sizes[i], s, async);        /* pageable, hwrt */
            roundtrip(pin_src, m_dst, sizes[i], s, async);        /* mixed */
        }
    roundtrip(pin_src, pin_dst, max, s, 1);
    roundtrip(m_src, hp_dst, max, s, 0);
    /* unaligned interior ranges of a block */
    void *d;
    OK(hwrt_malloc(&d, 1 << 16));
    fill_pattern(m_src, 1 << 16, 3);
    OK(hwrt_memcpy(d, m_src, 1 << 16, HWRT_MEMCPY_HOST_TO_DEVICE));
    memset(m_dst, 0, 1000);
    OK(hwrt_memcpy(m_dst, (char *)d + 777, 1000, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(m_dst, m_src + 777, 1000) == 0);
    OK(hwrt_memcpy((char *)d + 1, (char *)d + 4001, 333, HWRT_MEMCPY_DEVICE_TO_DEVICE));
    OK(hwrt_memcpy(m_dst, d, 334, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(m_dst + 1, m_src + 4001, 333) == 0 && m_dst[0] == m_src[0]);
    /* host to host through hwrt */
    OK(hwrt_memcpy(m_dst, m_src, 5000, HWRT_MEMCPY_HOST_TO_HOST));
    EXPECT(memcmp(m_dst, m_src, 5000) == 0);
    /* zero bytes is a no-op, even with odd pointers */
    OK(hwrt_memcpy(m_dst, m_src, 0, HWRT_MEMCPY_HOST_TO_DEVICE));
    OK(hwrt_memcpy_async(m_dst, m_src, 0, HWRT_MEMCPY_DEVICE_TO_HOST, s));
    OK(hwrt_free(d));
    OK(hwrt_host_free(pin_src));
    OK(hwrt_host_free(pin_dst));
    OK(hwrt_host_free(hp_src));
    OK(hwrt_host_free(hp_dst));
    free(m_src);
    free(m_dst);
    OK(hwrt_stream_destroy(s));
}

static void copy_errors(void)
{
    CASE("memcpy errors");
    void *d, *d2;
    char host[256], host2[256];
    OK(hwrt_malloc(&d, 256));
    OK(hwrt_malloc(&d2, 256));
    /* a host pointer given as device memory */
    FAILS(hwrt_memcpy(host2, host, 16, HWRT_MEMCPY_HOST_TO_DEVICE), HWRT_ERROR_INVALID_ARGUMENT,
          "not device memory");
    FAILS(hwrt_memcpy(host2, host, 16, HWRT_MEMCPY_DEVICE_TO_HOST), HWRT_ERROR_INVALID_ARGUMENT,
          "not device memory");
    FAILS(hwrt_memcpy(d, host, 16, HWRT_MEMCPY_DEVICE_TO_DEVICE), HWRT_ERROR_INVALID_ARGUMENT,
          "not device memory");
    /* a device pointer given as host memory */
    FAILS(hwrt_memcpy(d, host, 16, HWRT_MEMCPY_DEVICE_TO_HOST), HWRT_ERROR_INVALID_ARGUMENT,
          "device memory");
    FAILS(hwrt_memcpy(host, d, 16, HWRT_MEMCPY_HOST_TO_DEVICE), HWRT_ERROR_INVALID_ARGUMENT,
          "device memory");
    FAILS(hwrt_memcpy(d, d2, 16, HWRT_MEMCPY_HOST_TO_HOST), HWRT_ERROR_INVALID_ARGUMENT,
          "device memory");
    /* ranges past the end of a block: the sentence gives the overrun */
    FAILS(hwrt_memcpy(d, host, 257, HWRT_MEMCPY_HOST_TO_DEVICE), HWRT_ERROR_INVALID_ARGUMENT,
          "past the end");
    FAILS(hwrt_memcpy(host, (char *)d + 200, 100, HWRT_MEMCPY_DEVICE_TO_HOST),
          HWRT_ERROR_INVALID_ARGUMENT, "by 44 bytes");
    FAILS(hwrt_memcpy(d2, d, 300, HWRT_MEMCPY_DEVICE_TO_DEVICE), HWRT_ERROR_INVALID_ARGUMENT,
          "past the end");
    /* kinds that are not kinds, NULL pointers */
    FAILS(hwrt_memcpy(d, host, 16, (hwrt_memcpy_kind)7), HWRT_ERROR_INVALID_ARGUMENT, "kind 7");
    FAILS(hwrt_memcpy(d, host, 16, (hwrt_memcpy_kind)-1), HWRT_ERROR_INVALID_ARGUMENT, "kind");
    FAILS(hwrt_memcpy(NULL, host, 16, HWRT_MEMCPY_HOST_TO_DEVICE), HWRT_ERROR_INVALID_ARGUMENT,
          "NULL");
    FAILS(hwrt_memcpy(d, NULL, 16, HWRT_MEMCPY_HOST_TO_DEVICE), HWRT_ERROR_INVALID_ARGUMENT,
          "NULL");
    FAILS(hwrt_memcpy_async(d, host, 16, (hwrt_memcpy_kind)9, NULL), HWRT_ERROR_INVALID_ARGUMENT,
          "kind");
    /* freed memory is no longer device memory */
    OK(hwrt_free(d2));
    FAILS(hwrt_memcpy(d2, host, 16, HWRT_MEMCPY_HOST_TO_DEVICE), HWRT_ERROR_INVALID_ARGUMENT,
          "not device memory");
    /* a stale stream */
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    OK(hwrt_stream_destroy(s));
    FAILS(hwrt_memcpy_async(d, host, 16, HWRT_MEMCPY_HOST_TO_DEVICE, s), HWRT_ERROR_INVALID_HANDLE,
          "stream");
    FAILS(hwrt_memset_async(d, 0, 16, s), HWRT_ERROR_INVALID_HANDLE, "stream");
    /* the failed calls left the block intact */
    memset(host, 0x11, sizeof host);
    OK(hwrt_memcpy(d, host, 256, HWRT_MEMCPY_HOST_TO_DEVICE));
    memset(host2, 0, sizeof host2);
    OK(hwrt_memcpy(host2, d, 256, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(host, host2, 256) == 0);
    OK(hwrt_free(d));
}

static void cross_device(void)
{
    CASE("copies across devices");
    if (c_ndev < 2) {
        unsupported("cross-device copy checks need 2 devices, backend %s has %d", c_backend,
                    c_ndev);
        return;
    }
    void *d0, *d1;
    char host[64] = "cross-device";
    OK(hwrt_malloc(&d0, 64));
    OK(hwrt_set_device(c_backend, 1));
    OK(hwrt_malloc(&d1, 64));
    hwrt_stream s1;
    OK(hwrt_stream_create(&s1, 0));
    /* device 0 memory on a device 1 stream */
    FAILS(hwrt_memcpy_async(d0, host, 64, HWRT_MEMCPY_HOST_TO_DEVICE, s1),
          HWRT_ERROR_INVALID_ARGUMENT, "device 0");
    FAILS(hwrt_memset_async(d0, 1, 64, s1), HWRT_ERROR_INVALID_ARGUMENT, "device 0");
    hwrt_status st = hwrt_memcpy(d1, d0, 64, HWRT_MEMCPY_DEVICE_TO_DEVICE);
    if (st == HWRT_ERROR_NOT_SUPPORTED)
        unsupported("peer copies: %s", hwrt_last_error());
    else
        OK(st);
    /* blocking copies go to the device that owns the memory, whatever is current */
    OK(hwrt_memcpy(d0, host, 64, HWRT_MEMCPY_HOST_TO_DEVICE));
    char back[64] = "";
    OK(hwrt_memcpy(back, d0, 64, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(!strcmp(back, "cross-device"));
    OK(hwrt_stream_destroy(s1));
    OK(hwrt_free(d1));
    OK(hwrt_set_device(c_backend, 0));
    OK(hwrt_free(d0));
}

static void memsets(void)
{
    CASE("memset_async");
    unsigned char *d, host[1000];
    OK(hwrt_malloc((void **)&d, 1000));
    OK(hwrt_memset_async(d, 0x3c, 1000, NULL));
    OK(hwrt_memset_async(d + 100, 0x1ff, 50, NULL));       /* value is taken as a byte */
    OK(hwrt_memset_async(d, 0, 0, NULL));
    OK(hwrt_memcpy(host, d, 1000, HWRT_MEMCPY_DEVICE_TO_HOST));
    int ok = 1;
    for (int i = 0; i < 1000; i++) ok &= host[i] == ((i >= 100 && i < 150) ? 0xff : 0x3c);
    EXPECT(ok);
    FAILS(hwrt_memset_async(d, 0, 1001, NULL), HWRT_ERROR_INVALID_ARGUMENT, "past the end");
    FAILS(hwrt_memset_async(host, 0, 10, NULL), HWRT_ERROR_INVALID_ARGUMENT, "not device memory");
    FAILS(hwrt_memset_async(NULL, 0, 10, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    OK(hwrt_free(d));
}

/* ---- pageable vs pinned async copies (their calls run in a thread: they may block) ---- */

typedef struct {
    void *dst; const void *src; size_t n; hwrt_memcpy_kind kind; hwrt_stream s;
    hwrt_status st; volatile int done;
} async_call;

static void *do_async(void *arg)
{
    async_call *c = arg;
    c->st = hwrt_memcpy_async(c->dst, c->src, c->n, c->kind, c->s);
    __atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static int call_done(void *c) { return __atomic_load_n(&((async_call *)c)->done, __ATOMIC_SEQ_CST); }

static void pageable_semantics(void)
{
    CASE("pageable/pinned async copies");
    const size_t n = 1 << 20;
    hwrt_stream s;
    OK(hwrt_stream_create(&s, 0));
    unsigned char *dev, *pin, *page = malloc(n), *check = malloc(n);
    OK(hwrt_malloc((void **)&dev, n));
    OK(hwrt_host_alloc((void **)&pin, n, HWRT_HOST_PINNED));
    /* pinned: returns while the stream is held, the copy happens later */
    conf_gate g = {0};
    OK(hwrt_launch_host_func(s, conf_gate_fn, &g));
    EXPECT(conf_gate_wait_entered(&g, 5000));
    memset(pin, 0x42, n);
    async_call c = {dev, pin, n, HWRT_MEMCPY_HOST_TO_DEVICE, s, HWRT_SUCCESS, 0};
    pthread_t th;
    pthread_create(&th, NULL, do_async, &c);
    EXPECT(conf_wait_until(call_done, &c, 5000));          /* did not wait for the gate */
    EXPECT(hwrt_stream_query(s) == HWRT_ERROR_NOT_READY);
    conf_gate_open(&g);
    pthread_join(th, NULL);
    OK(c.st);
    OK(hwrt_stream_synchronize(s));
    /* pageable H2D: once the call returns, the source may be reused */
    conf_gate g2 = {0};
    OK(hwrt_launch_host_func(s, conf_gate_fn, &g2));
    EXPECT(conf_gate_wait_entered(&g2, 5000));
    memset(page, 0x17, n);
    async_call c2 = {dev, page, n, HWRT_MEMCPY_HOST_TO_DEVICE, s, HWRT_SUCCESS, 0};
    pthread_create(&th, NULL, do_async, &c2);
    conf_sleep_ms(20);
    conf_gate_open(&g2);                  /* a staging backend returned already; sim waits */
    pthread_join(th, NULL);
    OK(c2.st);
    memset(page, 0x99, n);                /* reuse the source right after the call */
    OK(hwrt_stream_synchronize(s));
    OK(hwrt_memcpy(check, dev, n, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(check[0] == 0x17 && check[n - 1] == 0x17);
    /* pageable D2H: the call returns with the destination filled, ordered after the
     * stream's earlier work */
    OK(hwrt_memset_async(dev, 0x6b, n, s));
    memset(page, 0, n);
    OK(hwrt_memcpy_async(page, dev, n, HWRT_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT(page[0] == 0x6b && page[n - 1] == 0x6b);
    OK(hwrt_stream_destroy(s));
    OK(hwrt_free(dev));
    OK(hwrt_host_free(pin));
    free(page);
    free(check);
}

void conf_copy(void)
{
    kinds_and_sizes();
    copy_errors();
    cross_device();
    memsets();
    pageable_semantics();
}
