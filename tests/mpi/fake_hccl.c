/* A stand-in libhccl.so for test_coll_engine's root-info scenarios on a machine without
 * CANN: a real shared library, loaded by hwrt through HWRT_HCCL_LIBRARY, exporting the
 * HCCL entry points hwrt resolves. HcclGetRootInfo fills the 4108-byte blob with bytes
 * from /dev/urandom (so two calls differ, as real root infos do); every collective and
 * HcclCommInitRootInfo answer HCCL_E_NOT_SUPPORT (5): there is no device behind it. Only
 * the loader and the exchange over MPI are tested with it, never a data path. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef struct { char internal[4108]; } root_t;

API int HcclGetRootInfo(root_t *r)
{
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f) return 4;
    size_t n = fread(r->internal, 1, sizeof r->internal, f);
    fclose(f);
    r->internal[0] |= 1;                 /* never all zero */
    return n == sizeof r->internal ? 0 : 4;
}
API int HcclCommInitRootInfo(uint32_t n, const root_t *r, uint32_t rank, void **comm) { return 5; }
API int HcclCommDestroy(void *comm) { return 0; }
API const char *HcclGetErrorString(int code) { return code == 5 ? "not supported (fake)" : "fake error"; }
API int HcclGetCommAsyncError(void *comm, int *e) { *e = 0; return 0; }
API int HcclAllReduce(void *s, void *r, uint64_t n, int dt, int op, void *c, void *st) { return 5; }
API int HcclBroadcast(void *b, uint64_t n, int dt, uint32_t root, void *c, void *st) { return 5; }
API int HcclAllGather(void *s, void *r, uint64_t n, int dt, void *c, void *st) { return 5; }
API int HcclReduceScatter(void *s, void *r, uint64_t n, int dt, int op, void *c, void *st) { return 5; }
