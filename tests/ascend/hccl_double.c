/* A TEST DOUBLE of libhccl.so (Huawei's collective library), never a collective library:
 * it exports the entry points src/distributed/hccl_api.h lists, so that hwrt's loader
 * (HWRT_HCCL_LIBRARY) resolves it, for tests/ascend/ascend_hccl.c. It runs on the fake
 * devices of the test double of libascendcl (acl_double*.c, HWRT_ASCEND_DOUBLE=device),
 * which it finds by HWRT_ASCEND_LIBRARY, as HCCL uses the ACL runtime it is loaded with:
 *   - the root info names a POSIX shared memory segment (made by the first rank to attach,
 *     unlinked once all have, or by the last to detach, or at exit); every collective
 *     really moves the ranks' data through it, between two barriers in it (60 s, then
 *     HCCL_E_TIMEOUT);
 *   - streams: a collective first synchronizes the aclrtStream it is given (the double's
 *     streams run each op at once, but host functions wait for the report thread), so it
 *     comes after the stream's earlier work; that needs the stream's context current;
 *   - the buffers must lie in the double's device memory (HCCL_E_PTR otherwise);
 *   - reductions of int8, int32, int64, float32 and bfloat16 only: another data type is
 *     HCCL_E_NOT_SUPPORT (float16 included: hwrt lets it through, the double refuses it);
 *   - at most SLOT bytes per rank and call (HCCL_E_PARA beyond);
 *   - HcclCommDestroy needs the communicator's device current (HCCL_E_RUNTIME otherwise);
 *   - a failing HcclCommInitRootInfo (hccl_double_fail_init) still writes a handle, which
 *     HcclCommDestroy aborts on: only a communicator whose init succeeded is destroyed;
 *   - HcclGetErrorString answers "" for a code it does not know.
 * Built twice: hwrt_test_hccl_double, and hwrt_test_hccl_double_old (HCCL_DOUBLE_OLD)
 * without the two optional entry points, HcclGetErrorString and HcclGetCommAsyncError,
 * as older releases. Hooks for the test: hccl_double_*. The segment, its barrier and the
 * data's moves through it are tests/coll_double_shm.h, shared with nccl_double.c. */
#include "../coll_double_shm.h"

#define API __attribute__((visibility("default")))
enum { OK = 0, E_PARA = 1, E_PTR = 2, E_INTERNAL = 4, E_NOT_SUPPORT = 5, E_TIMEOUT = 9,
       E_RUNTIME = 15 };
#define ROOT_MAGIC 0x48434344u

typedef struct { char internal[4108]; } root_t;
typedef struct { uint32_t magic; int rank, nranks, device, async; seg_t *seg; char name[60]; } comm_t;
#define COMM_MAGIC 0xc0aa
#define DEAD_MAGIC 0xdead

static int fail_root, fail_init, fail_next, fail_destroy, async_now, calls;
static comm_t dead = {.magic = DEAD_MAGIC};

API void hccl_double_fail_root(int code) { fail_root = code; }
API void hccl_double_fail_init(int code) { fail_init = code; }
API void hccl_double_fail_next(int code) { fail_next = code; }
API void hccl_double_fail_destroy(int code) { fail_destroy = code; }
API void hccl_double_async(int code) { async_now = code; }  /* every communicator, from now */
API int hccl_double_live(void) { return live; }             /* communicators not destroyed */
API int hccl_double_calls(void) { return calls; }           /* collectives that reached it */

/* the ACL double's entry points, in the instance hwrt loaded */
static void *acl(const char *sym)
{
    return runtime_sym("HWRT_ASCEND_LIBRARY", "libhccl", "libascendcl", sym);
}
static int current_device(void) { return ((int (*)(void))acl("acl_double_current_device"))(); }

API int HcclGetRootInfo(root_t *r)
{
    if (!r) return E_PARA;
    if (fail_root) return take(&fail_root);
    seg_name_new(r->internal, sizeof r->internal, ROOT_MAGIC, "hccl");
    return OK;
}

API int HcclCommInitRootInfo(uint32_t n, const root_t *r, uint32_t rank, void **out)
{
    seg_head h;
    if (!r || !out || n < 1 || n > MAX_RANKS || rank >= n) return E_PARA;
    if (fail_init) {           /* the handle is written before the failure is known */
        *out = &dead;
        return take(&fail_init);
    }
    if (seg_name_get(r->internal, ROOT_MAGIC, &h)) return E_PARA;
    int dev = current_device();
    if (dev < 0) return E_RUNTIME;
    seg_t *g;
    int e = seg_join(h.name, (int)n, &g, E_INTERNAL, E_PARA);
    if (e) return e;
    comm_t *c = calloc(1, sizeof *c);
    *c = (comm_t){COMM_MAGIC, (int)rank, (int)n, dev, 0, g, ""};
    memcpy(c->name, h.name, sizeof c->name);
    comm_made(c);
    *out = c;
    return OK;
}

API int HcclCommDestroy(void *comm)
{
    comm_t *c = comm;
    if (c == &dead) {
        fprintf(stderr, "hwrt's test double of libhccl: HcclCommDestroy of the handle a failed "
                "HcclCommInitRootInfo wrote\n");
        abort();
    }
    if (!c || c->magic != COMM_MAGIC) return E_PARA;
    if (current_device() != c->device) return E_RUNTIME;
    if (fail_destroy) return take(&fail_destroy);
    comm_gone(c, c->seg, c->name, &c->magic);
    return OK;
}

#ifndef HCCL_DOUBLE_OLD
API const char *HcclGetErrorString(int code)
{
    static const char *const s[] = {
        [OK] = "no error", [E_PARA] = "parameter error", [E_PTR] = "empty pointer",
        [E_INTERNAL] = "internal error", [E_NOT_SUPPORT] = "not supported",
        [E_TIMEOUT] = "timeout", [E_RUNTIME] = "call runtime api fail",
        [21] = "error cqe (a remote rank failed)"};
    return code >= 0 && code < (int)(sizeof s / sizeof s[0]) && s[code] ? s[code] : "";
}

API int HcclGetCommAsyncError(void *comm, int *e)
{
    comm_t *c = comm;
    if (!c || c->magic != COMM_MAGIC || !e) return E_PARA;
    *e = async_now;
    return OK;
}
#endif

/* element size of an HcclDataType the double reduces (0: not supported) */
static size_t esize(int dt)
{
    switch (dt) {
    case 0: return 1;                      /* INT8 */
    case 2: case 4: return 4;              /* INT32, FP32 */
    case 5: return 8;                      /* INT64 */
    case 11: return 2;                     /* BFP16 */
    default: return 0;
    }
}

static float bf2f(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

#define COMBINE(a, b, op) (op == 0 ? a + b : op == 1 ? a * b : op == 2 ? (b > a ? b : a) : (b < a ? b : a))
#define REDUCE(T)                                                                       \
    for (uint64_t i = 0; i < n; i++) {                                                  \
        T a = ((const T *)(g->slot[0] + off))[i];                                       \
        for (int r = 1; r < g->nranks; r++) {                                           \
            T b = ((const T *)(g->slot[r] + off))[i];                                   \
            a = (T)COMBINE(a, b, op);                                                   \
        }                                                                               \
        ((T *)out)[i] = a;                                                              \
    }

/* out[i] = op over the ranks of element i of their slots, from byte off */
static void reduce(seg_t *g, size_t off, void *out, uint64_t n, int dt, int op)
{
    switch (dt) {
    case 0: REDUCE(int8_t) break;
    case 2: REDUCE(int32_t) break;
    case 4: REDUCE(float) break;
    case 5: REDUCE(int64_t) break;
    default:
        for (uint64_t i = 0; i < n; i++) {
            float a = bf2f(((const uint16_t *)(g->slot[0] + off))[i]);
            for (int r = 1; r < g->nranks; r++) {
                float b = bf2f(((const uint16_t *)(g->slot[r] + off))[i]);
                a = COMBINE(a, b, op);
            }
            ((uint16_t *)out)[i] = f2bf(a);
        }
    }
}

/* What every collective does first: the injected failure, the checks (op -1: none), the
 * stream's earlier work. a, b: the buffers, of an and bn bytes. */
static int enter(comm_t *c, void *stream, int dt, int op, const void *a, size_t an,
                 const void *b, size_t bn)
{
    calls++;
    if (fail_next) return take(&fail_next);
    if (!c || c->magic != COMM_MAGIC || !stream || op < -1 || op > 3) return E_PARA;
    if (!esize(dt)) return E_NOT_SUPPORT;
    if (an > SLOT) {
        fprintf(stderr, "hwrt's test double of libhccl: more than %u bytes per rank\n", SLOT);
        return E_PARA;
    }
    int (*in_dev)(const void *, size_t) = (int (*)(const void *, size_t))acl("acl_double_in_device_memory");
    if (!an || !in_dev(a, an) || !in_dev(b, bn)) return E_PTR;
    int (*sync)(void *) = (int (*)(void *))acl("aclrtSynchronizeStream");
    int r = sync(stream);
    if (r) {
        fprintf(stderr, "hwrt's test double of libhccl: aclrtSynchronizeStream: %d (the "
                "stream's context not current?)\n", r);
        return E_RUNTIME;
    }
    return OK;
}

API int HcclAllReduce(void *s, void *r, uint64_t n, int dt, int op, void *comm, void *st)
{
    comm_t *c = comm;
    int e = enter(c, st, dt, op, s, n * esize(dt), r, n * esize(dt));
    if (e) return e;
    return seg_reduce(c->seg, c->rank, s, n * esize(dt), 0, r, n, dt, op, reduce, E_TIMEOUT);
}

API int HcclBroadcast(void *b, uint64_t n, int dt, uint32_t root, void *comm, void *st)
{
    comm_t *c = comm;
    int e = enter(c, st, dt, -1, b, n * esize(dt), b, n * esize(dt));
    if (e) return e;
    if (root >= (uint32_t)c->nranks) return E_PARA;
    return seg_broadcast(c->seg, c->rank, (int)root, b, b, n * esize(dt), E_TIMEOUT);
}

API int HcclAllGather(void *s, void *r, uint64_t n, int dt, void *comm, void *st)
{
    comm_t *c = comm;
    size_t bytes = n * esize(dt);
    int e = enter(c, st, dt, -1, s, bytes, r, bytes * (c ? (size_t)c->nranks : 1));
    if (e) return e;
    return seg_allgather(c->seg, c->rank, s, r, bytes, E_TIMEOUT);
}

API int HcclReduceScatter(void *s, void *r, uint64_t n, int dt, int op, void *comm, void *st)
{
    comm_t *c = comm;
    size_t bytes = n * esize(dt), all = bytes * (c ? (size_t)c->nranks : 1);
    int e = enter(c, st, dt, op, s, all, r, bytes);
    if (e) return e;
    return seg_reduce(c->seg, c->rank, s, all, (size_t)c->rank * bytes, r, n, dt, op, reduce,
                      E_TIMEOUT);
}
