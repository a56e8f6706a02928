/* A TEST DOUBLE of libnccl.so.2 (NVIDIA's collective library), never a collective library:
 * it exports the entry points src/distributed/nccl_api.h lists, so that hwrt's loader
 * (HWRT_NCCL_LIBRARY) resolves it, for tests/cuda/cuda_nccl.c. It runs on the fake devices
 * of the test double of libcuda (cuda_double.c, HWRT_CUDA_DOUBLE=device), which it finds
 * by HWRT_CUDA_LIBRARY, as NCCL uses the driver it is loaded with:
 *   - the unique id names a POSIX shared memory segment (made by the first rank to attach,
 *     unlinked once all have, or by the last to detach, or at exit); every collective
 *     really moves the ranks' data through it, between two barriers in it (60 s, then
 *     ncclSystemError);
 *   - a collective needs its communicator's device current on the calling thread and a
 *     stream of that device (ncclUnhandledCudaError / ncclInvalidArgument otherwise), and
 *     first waits for the stream's earlier work (host functions), so it comes after it;
 *   - the buffers must lie in that device's memory (ncclInvalidArgument otherwise);
 *   - every data type NCCL has, ops sum, prod, max, min and avg (integers: the sum
 *     divided, truncated toward zero); at most SLOT bytes per rank and call;
 *   - ncclCommDestroy needs the communicator's device current (ncclUnhandledCudaError
 *     otherwise: harder than NCCL);
 *   - a failing ncclCommInitRank (nccl_double_fail_init) still writes a handle, which
 *     ncclCommDestroy and ncclCommAbort abort on: only a communicator whose init succeeded
 *     may be handed back;
 *   - ncclGetVersion answers HWRT_NCCL_DOUBLE_VERSION (default 22809; "fail": an error).
 * Hooks for the test: nccl_double_*. The segment, its barrier and the data's moves through
 * it are tests/coll_double_shm.h, shared with hccl_double.c. */
#include "../coll_double_shm.h"

#include "base/half.h"

#define API __attribute__((visibility("default")))
enum { OK = 0, E_CUDA = 1, E_SYSTEM = 2, E_INTERNAL = 3, E_ARG = 4, E_USAGE = 5, E_REMOTE = 6,
       E_PROGRESS = 7 };
#define ID_MAGIC 0x4e43434cu

typedef struct { char internal[128]; } id_t_;
typedef struct { uint32_t magic; int rank, nranks, device; seg_t *seg; char name[60]; } comm_t;
#define COMM_MAGIC 0xc0aa
#define DEAD_MAGIC 0xdead

static int fail_root, fail_init, fail_next, fail_destroy, async_now, calls, aborted;
static comm_t dead = {.magic = DEAD_MAGIC};

API void nccl_double_fail_root(int code) { fail_root = code; }
API void nccl_double_fail_init(int code) { fail_init = code; }
API void nccl_double_fail_next(int code) { fail_next = code; }
API void nccl_double_fail_destroy(int code) { fail_destroy = code; }
API void nccl_double_async(int code) { async_now = code; }  /* every communicator, from now */
API int nccl_double_live(void) { return live; }             /* made, not destroyed or aborted */
API int nccl_double_aborted(void) { return aborted; }       /* ncclCommAbort calls */
API int nccl_double_calls(void) { return calls; }           /* collectives that reached it */

/* the CUDA double's entry points, in the instance hwrt loaded */
static void *cuda(const char *sym)
{
    return runtime_sym("HWRT_CUDA_LIBRARY", "libnccl", "libcuda", sym);
}
static int current_device(void) { return ((int (*)(void))cuda("cuda_double_current_device"))(); }

API int ncclGetVersion(int *v)
{
    const char *e = getenv("HWRT_NCCL_DOUBLE_VERSION");
    if (e && !strcmp(e, "fail")) return E_INTERNAL;
    *v = e ? atoi(e) : 22809;
    return OK;
}

API const char *ncclGetErrorString(int code)
{
    static const char *const s[] = {
        [OK] = "no error", [E_CUDA] = "unhandled cuda error", [E_SYSTEM] = "unhandled system error",
        [E_INTERNAL] = "internal error", [E_ARG] = "invalid argument", [E_USAGE] = "invalid usage",
        [E_REMOTE] = "remote process exited or there was a network error",
        [E_PROGRESS] = "NCCL operation in progress"};
    return code >= 0 && code < (int)(sizeof s / sizeof s[0]) ? s[code] : "unknown result code";
}

API int ncclGetUniqueId(id_t_ *id)
{
    if (!id) return E_ARG;
    if (fail_root) return take(&fail_root);
    seg_name_new(id->internal, sizeof id->internal, ID_MAGIC, "nccl");
    return OK;
}

API int ncclCommInitRank(void **out, int n, id_t_ id, int rank)
{
    seg_head h;
    if (!out || n < 1 || n > MAX_RANKS || rank < 0 || rank >= n) return E_ARG;
    if (fail_init) {           /* the handle is written before the failure is known */
        *out = &dead;
        return take(&fail_init);
    }
    if (seg_name_get(id.internal, ID_MAGIC, &h)) return E_ARG;
    int dev = current_device();
    if (dev < 0) return E_CUDA;
    seg_t *g;
    int e = seg_join(h.name, n, &g, E_SYSTEM, E_ARG);
    if (e) return e;
    comm_t *c = calloc(1, sizeof *c);
    *c = (comm_t){COMM_MAGIC, rank, n, dev, g, ""};
    memcpy(c->name, h.name, sizeof c->name);
    comm_made(c);
    *out = c;
    return OK;
}

static int handed_back(comm_t *c, const char *fn)
{
    if (c == &dead) {
        fprintf(stderr, "hwrt's test double of libnccl: %s of the handle a failed "
                "ncclCommInitRank wrote\n", fn);
        abort();
    }
    if (!c || c->magic != COMM_MAGIC) return E_ARG;
    comm_gone(c, c->seg, c->name, &c->magic);
    return OK;
}

API int ncclCommDestroy(void *comm)
{
    comm_t *c = comm;
    if (c && c != &dead && c->magic == COMM_MAGIC && current_device() != c->device)
        return E_CUDA;
    if (fail_destroy && c != &dead) return take(&fail_destroy);
    return handed_back(c, "ncclCommDestroy");
}

API int ncclCommAbort(void *comm)
{
    int r = handed_back(comm, "ncclCommAbort");
    if (r == OK) aborted++;
    return r;
}

API int ncclCommGetAsyncError(void *comm, int *e)
{
    comm_t *c = comm;
    if (!c || c->magic != COMM_MAGIC || !e) return E_ARG;
    *e = async_now;
    return OK;
}

API int ncclGroupStart(void) { return OK; }
API int ncclGroupEnd(void) { return OK; }

/* element size of an ncclDataType_t (0: none) */
static size_t esize(int dt)
{
    static const size_t s[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
    return dt >= 0 && dt < 10 ? s[dt] : 0;
}

#define COMBINE(a, b, op) (op == 1 ? a * b : op == 2 ? (b > a ? b : a) : op == 3 ? (b < a ? b : a) : a + b)
#define REDUCE(T, LOAD, STORE)                                                          \
    for (uint64_t i = 0; i < n; i++) {                                                  \
        T a = LOAD(((const void *)(g->slot[0] + off)), i);                              \
        for (int r = 1; r < g->nranks; r++) {                                           \
            T b = LOAD(((const void *)(g->slot[r] + off)), i);                          \
            a = (T)COMBINE(a, b, op);                                                   \
        }                                                                               \
        if (op == 4) a = (T)(a / (T)g->nranks);                                         \
        STORE(out, i, a);                                                               \
    }
#define PLAIN_LOAD(T) static T ld_##T(const void *p, uint64_t i) { return ((const T *)p)[i]; } \
    static void st_##T(void *p, uint64_t i, T v) { ((T *)p)[i] = v; }
typedef double f64;
typedef float f32;
PLAIN_LOAD(int8_t) PLAIN_LOAD(uint8_t) PLAIN_LOAD(int32_t) PLAIN_LOAD(uint32_t)
PLAIN_LOAD(int64_t) PLAIN_LOAD(uint64_t) PLAIN_LOAD(f32) PLAIN_LOAD(f64)
static float ld_half(const void *p, uint64_t i) { return hwi_half_to_float(((const uint16_t *)p)[i]); }
static void st_half(void *p, uint64_t i, float v) { ((uint16_t *)p)[i] = hwi_float_to_half(v); }
static float ld_bf16(const void *p, uint64_t i) { return hwi_bf16_to_float(((const uint16_t *)p)[i]); }
static void st_bf16(void *p, uint64_t i, float v) { ((uint16_t *)p)[i] = hwi_float_to_bf16(v); }

/* out[i] = op over the ranks of element i of their slots, from byte off */
static void reduce(seg_t *g, size_t off, void *out, uint64_t n, int dt, int op)
{
    switch (dt) {
    case 0: REDUCE(int8_t, ld_int8_t, st_int8_t) break;
    case 1: REDUCE(uint8_t, ld_uint8_t, st_uint8_t) break;
    case 2: REDUCE(int32_t, ld_int32_t, st_int32_t) break;
    case 3: REDUCE(uint32_t, ld_uint32_t, st_uint32_t) break;
    case 4: REDUCE(int64_t, ld_int64_t, st_int64_t) break;
    case 5: REDUCE(uint64_t, ld_uint64_t, st_uint64_t) break;
    case 6: REDUCE(float, ld_half, st_half) break;
    case 7: REDUCE(float, ld_f32, st_f32) break;
    case 8: REDUCE(double, ld_f64, st_f64) break;
    default: REDUCE(float, ld_bf16, st_bf16) break;
    }
}

/* What every collective does first: the injected failure, the checks (op -1: none), the
 * stream's earlier work. a, b: the buffers, of an and bn bytes. */
static int enter(comm_t *c, void *stream, int dt, int op, const void *a, size_t an,
                 const void *b, size_t bn)
{
    calls++;
    if (fail_next) return take(&fail_next);
    if (!c || c->magic != COMM_MAGIC || op < -1 || op > 4 || !esize(dt)) return E_ARG;
    if (current_device() != c->device) return E_CUDA;
    if (((int (*)(const void *))cuda("cuda_double_stream_device"))(stream) != c->device)
        return E_ARG;
    if (an > SLOT) {
        fprintf(stderr, "hwrt's test double of libnccl: more than %u bytes per rank\n", SLOT);
        return E_ARG;
    }
    int (*in_dev)(const void *, size_t, int) =
        (int (*)(const void *, size_t, int))cuda("cuda_double_in_device_memory");
    if (!an || !in_dev(a, an, c->device) || !in_dev(b, bn, c->device)) return E_ARG;
    ((void (*)(void *))cuda("cuda_double_stream_drain"))(stream);
    return OK;
}

API int ncclAllReduce(const void *s, void *r, size_t n, int dt, int op, void *comm, void *st)
{
    comm_t *c = comm;
    int e = enter(c, st, dt, op, s, n * esize(dt), r, n * esize(dt));
    if (e) return e;
    return seg_reduce(c->seg, c->rank, s, n * esize(dt), 0, r, n, dt, op, reduce, E_SYSTEM);
}

API int ncclBroadcast(const void *s, void *r, size_t n, int dt, int root, void *comm, void *st)
{
    comm_t *c = comm;
    int e = enter(c, st, dt, -1, s, n * esize(dt), r, n * esize(dt));
    if (e) return e;
    if (root < 0 || root >= c->nranks) return E_ARG;
    return seg_broadcast(c->seg, c->rank, root, s, r, n * esize(dt), E_SYSTEM);
}

API int ncclAllGather(const void *s, void *r, size_t n, int dt, void *comm, void *st)
{
    comm_t *c = comm;
    size_t bytes = n * esize(dt);
    int e = enter(c, st, dt, -1, s, bytes, r, bytes * (c ? (size_t)c->nranks : 1));
    if (e) return e;
    return seg_allgather(c->seg, c->rank, s, r, bytes, E_SYSTEM);
}

API int ncclReduceScatter(const void *s, void *r, size_t n, int dt, int op, void *comm, void *st)
{
    comm_t *c = comm;
    size_t bytes = n * esize(dt), all = bytes * (c ? (size_t)c->nranks : 1);
    int e = enter(c, st, dt, op, s, all, r, bytes);
    if (e) return e;
    return seg_reduce(c->seg, c->rank, s, all, (size_t)c->rank * bytes, r, n, dt, op, reduce,
                      E_SYSTEM);
}
