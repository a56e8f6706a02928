/* libFuzzer harness: the input is a program of API calls on the simulated NPU (two
 * devices). Each step takes an opcode byte and argument bytes: devices, device and host
 * memory, copies of every kind (right and wrong), memsets, streams, events, host
 * functions, tensors of every dtype and ops on them, DLPack round trips, configuration
 * strings, memory figures, device resets and shutdowns. Arguments deliberately include
 * NULL, destroyed, forged and foreign handles, interior, freed and host pointers, wrong
 * copy kinds and huge sizes. The first byte may arm an HWRT_SIM_FAULTS plan, so sticky
 * faults and their recovery are fuzzed too.
 *
 * What counts as a bug (abort -> libFuzzer reports a crash): a crash or sanitizer report,
 * a status outside hwrt_status, HWRT_ERROR_INTERNAL, a failure without an error
 * sentence, a success that broke its contract (NULL pointer from malloc), and data that
 * differs from a host shadow where the program is well ordered (checked after device-
 * wide synchronization: blocking copies into device buffers, fills of float32 tensors).
 *
 * Built with -fsanitize=fuzzer (HWRT_SANITIZE=fuzzer, clang) it is a libFuzzer target;
 * otherwise a main() replays the files or directories given (the committed seed corpus
 * runs that way in every CTest build). */
#include <hwrt.h>

#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if __has_include(<hwrt/hwrt_offload.h>)
#define FUZZ_OFFLOAD 1
#endif

enum { NS = 4, NE = 4, NT = 6, NP = 6, HB = 1 << 16, MAXBUF = 1 << 16 };

typedef struct { const uint8_t *p; size_t n; } input;

static unsigned u8(input *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}
static unsigned u16(input *in) { unsigned a = u8(in); return a | (u8(in) << 8); }

static struct {
    hwrt_stream s[NS], stale_s;
    hwrt_event e[NE], stale_e;
    hwrt_tensor t[NT], stale_t;
    int t_known[NT];              /* 1: float32 tensor whose value is t_val after a sync */
    float t_val[NT];
    hwrt_stream t_writer[NT];
    int t_writes[NT];             /* ops that wrote t[i]: 0 none, 1 all on t_writer, 2 several streams */
    void *p[NP], *freed;
    size_t psz[NP];
    unsigned char *shadow[NP];    /* host copy of p[i] when valid */
    int shadow_ok[NP];
    unsigned char *host, *pinned;
    atomic_int hostfn_runs;
    int shutdowns;                /* in this input */
} S;

static void fail(const char *what, const char *call, hwrt_status st)
{
    fprintf(stderr, "hwrt fuzz: %s: %s -> %s (%d): \"%s\"\n", what, call, hwrt_status_name(st),
            (int)st, hwrt_last_error());
    abort();
}

/* Every returned status must be a real one, never INTERNAL, and failures carry text. */
static int trace;   /* HWRT_FUZZ_TRACE=1: print every call and its status (triage) */

static hwrt_status chk_(hwrt_status st, const char *call)
{
    if (trace) fprintf(stderr, "  %s -> %s\n", call, hwrt_status_name(st));
    if ((unsigned)st > HWRT_ERROR_INTERNAL) fail("status out of range", call, st);
    if (st == HWRT_ERROR_INTERNAL) fail("internal error", call, st);
    if (st != HWRT_SUCCESS && st != HWRT_ERROR_NOT_READY && !hwrt_last_error()[0])
        fail("failure without a sentence", call, st);
    return st;
}
#define CHK(call) chk_((call), #call)

static void invalidate_all(void)
{
    for (int i = 0; i < NP; i++) S.shadow_ok[i] = 0;
    for (int i = 0; i < NT; i++) S.t_known[i] = 0;
}

/* ---- argument pickers: mostly valid, sometimes hostile ---- */
static hwrt_stream pick_stream(input *in)
{
    unsigned b = u8(in);
    switch (b % 8) {
    case 0: return NULL;
    case 1: return S.stale_s;
    case 2: return (hwrt_stream)(uintptr_t)0xdeadbeefu;
    case 3: return (hwrt_stream)S.e[b / 8 % NE];
    default: return S.s[b / 8 % NS];
    }
}
static hwrt_event pick_event(input *in)
{
    unsigned b = u8(in);
    switch (b % 8) {
    case 0: return NULL;
    case 1: return S.stale_e;
    case 2: return (hwrt_event)S.s[b / 8 % NS];
    default: return S.e[b / 8 % NE];
    }
}
static int pick_tensor(input *in, hwrt_tensor *t)
{
    unsigned b = u8(in);
    int i = (int)(b / 8 % NT);
    switch (b % 8) {
    case 0: *t = NULL; return -1;
    case 1: *t = S.stale_t; return -1;
    case 2: *t = (hwrt_tensor)S.s[i % NS]; return -1;
    default: *t = S.t[i]; return i;
    }
}
/* A pointer: *slot gets the device slot for exact slot pointers, -1 otherwise. */
static void *pick_ptr(input *in, int *slot, size_t *room)
{
    unsigned b = u8(in);
    int i = (int)(b / 8 % NP);
    *slot = -1;
    *room = HB;
    switch (b % 8) {
    case 0: return NULL;
    case 1: return S.host;
    case 2: return S.pinned;
    case 3: *room = 0; return S.freed;
    case 4:
        if (!S.p[i]) return NULL;
        *room = S.psz[i] > 8 ? S.psz[i] - 8 : 0;
        return (char *)S.p[i] + 8;       /* interior */
    default:
        *slot = S.p[i] ? i : -1;
        *room = S.psz[i];
        return S.p[i];
    }
}
static size_t pick_size(input *in)
{
    unsigned b = u8(in);
    switch (b % 16) {
    case 0: return 0;
    case 1: return SIZE_MAX;
    case 2: return SIZE_MAX - u8(in);
    case 3: return (size_t)1 << (40 + b / 16 % 20);
    default: return 1 + u16(in) % MAXBUF;
    }
}

/* ---- state helpers ---- */
static void drop_ptr(int i)
{
    S.freed = S.p[i];
    S.p[i] = NULL;
    S.psz[i] = 0;
    S.shadow_ok[i] = 0;
}

static void sync_all(void)
{
    int cur = 0;
    hwrt_get_device(&cur);
    for (int d = 0; d < 2; d++)
        if (CHK(hwrt_set_device("sim", d)) == HWRT_SUCCESS) CHK(hwrt_device_synchronize());
    CHK(hwrt_set_device("sim", cur));
}

/* Compare shadows with the device after everything has finished. A sticky fault makes
 * the reads fail, which is fine; a success with wrong data is a bug. */
static void verify(void)
{
    sync_all();
    static unsigned char buf[MAXBUF];
    for (int i = 0; i < NP; i++) {
        if (!S.p[i] || !S.shadow_ok[i]) continue;
        if (CHK(hwrt_memcpy(buf, S.p[i], S.psz[i], HWRT_MEMCPY_DEVICE_TO_HOST)) == HWRT_SUCCESS &&
            memcmp(buf, S.shadow[i], S.psz[i])) {
            size_t k = 0;
            while (buf[k] == S.shadow[i][k]) k++;
            fprintf(stderr, "slot %d (%p, %zu bytes): byte %zu is 0x%02x, shadow 0x%02x\n", i,
                    S.p[i], S.psz[i], k, buf[k], S.shadow[i][k]);
            fail("device buffer differs from its shadow", "hwrt_memcpy D2H", HWRT_SUCCESS);
        }
    }
    for (int i = 0; i < NT; i++) {
        size_t nb = 0;
        if (!S.t_known[i] || CHK(hwrt_tensor_nbytes(S.t[i], &nb)) || nb > sizeof buf) continue;
        if (CHK(hwrt_tensor_copy_to_host(S.t[i], buf, nb)) != HWRT_SUCCESS) continue;
        const float *f = (const float *)buf;
        for (size_t k = 0; k < nb / sizeof(float); k++)
            if (f[k] != S.t_val[i]) fail("tensor differs from its fill value", "copy_to_host", 0);
    }
}

static void release_all(void)
{
    for (int i = 0; i < NT; i++) {
        if (S.t[i]) CHK(hwrt_tensor_release(S.t[i]));
        S.t[i] = NULL;
        S.t_known[i] = 0;
    }
    for (int i = 0; i < NP; i++)
        if (S.p[i]) { CHK(hwrt_free(S.p[i])); drop_ptr(i); }
    for (int i = 0; i < NS; i++)
        if (S.s[i]) { hwrt_stream_destroy(S.s[i]); S.stale_s = S.s[i]; S.s[i] = NULL; }
    for (int i = 0; i < NE; i++)
        if (S.e[i]) { CHK(hwrt_event_destroy(S.e[i])); S.stale_e = S.e[i]; S.e[i] = NULL; }
    S.freed = NULL;    /* its address may belong to the next session's blocks */
}

/* Does p point into a live tensor's memory (a stale pointer whose address came back)? */
static int aliases_tensor(const void *p)
{
    for (int i = 0; i < NT; i++) {
        void *d = NULL;
        size_t nb = 0;
        if (!S.t[i] || hwrt_tensor_data(S.t[i], &d) || hwrt_tensor_nbytes(S.t[i], &nb) || !d)
            continue;
        if ((const char *)p >= (const char *)d && (const char *)p <= (const char *)d + nb)
            return 1;
    }
    return 0;
}

static void bump(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }
static void dl_deleter(DLManagedTensorVersioned *m) { free(m); }

static const hwrt_dtype dtypes[] = {HWRT_FLOAT32, HWRT_FLOAT16, HWRT_BFLOAT16, HWRT_FLOAT64,
                                    HWRT_INT8, HWRT_UINT8, HWRT_INT32, HWRT_INT64, HWRT_BOOL,
                                    (hwrt_dtype)HWRT_DTYPE_COUNT, (hwrt_dtype)-1};
static const char *const keys[] = {"max_device_memory", "max_split_size", "expandable_segments",
                                   "garbage_collection_threshold", "record_alloc_sites",
                                   "memory_offload", "offload_cpu_size", "prefetch_depth",
                                   "launch_blocking", "check_sync", "log_level", "no_such_key",
                                   "offload_disk_size", "auto_offload", "enable_pinned_mem", ""};
/* offload_path is never fuzzed with random text: the disk tier writes files there. It is
 * a fresh temporary directory, or a path that does not exist. */
static char offload_dir[64];
static const char *const fault_plans[] = {
    "kernel:nth=3", "copy:nth=2", "alloc:every=3", "kernel:p=0.2,copy:p=0.1,seed=5",
    "stall:ms=1:every=2", "alloc:p=0.3:dev=1,kernel:every=5:dev=0"};

/* A NUL-terminated string of up to 24 fuzz bytes. */
static void fuzz_string(input *in, char *out, size_t cap)
{
    size_t n = u8(in) % 25;
    if (n >= cap) n = cap - 1;
    for (size_t i = 0; i < n; i++) out[i] = (char)u8(in);
    out[n] = 0;
}

static void op_tensor_new(input *in)
{
    int i = (int)(u8(in) % NT);
    hwrt_dtype dt = dtypes[u8(in) % (sizeof dtypes / sizeof dtypes[0])];
    int ndim = (int)(u8(in) % 5) - (u8(in) == 255 ? 3 : 0);
    int64_t shape[4] = {0};
    for (int k = 0; k < 4; k++) {
        unsigned b = u8(in);
        shape[k] = b == 255 ? -1 : b == 254 ? INT64_MAX / 3 : (int64_t)(b % 12);
    }
    if (S.t[i]) { CHK(hwrt_tensor_release(S.t[i])); S.t[i] = NULL; }
    S.t_known[i] = 0;
    S.t_writes[i] = 0;
    hwrt_tensor t = NULL;
    hwrt_status st;
    if (u8(in) & 1) {
        st = CHK(hwrt_tensor_empty(&t, dt, ndim, shape));
    } else {
        static unsigned char zeros[4 * 12 * 12 * 12 * 12 * 8];
        st = CHK(hwrt_tensor_from_host(&t, dt, ndim, shape, zeros));
    }
    if (st == HWRT_SUCCESS) S.t[i] = t;
}

static void op_tensor_op(input *in)
{
    hwrt_tensor o, a, b;
    int oi = pick_tensor(in, &o);
    pick_tensor(in, &a);
    pick_tensor(in, &b);
    hwrt_stream s = pick_stream(in);
    unsigned k = u8(in);
    double v = (double)((int)(k / 8 % 64) - 32);
    hwrt_status st;
    switch (k % 8) {
    case 0: st = CHK(hwrt_op_fill(o, v, s)); break;
    case 1: st = CHK(hwrt_op_add(o, a, b, s)); break;
    case 2: st = CHK(hwrt_op_mul(o, a, b, s)); break;
    case 3: st = CHK(hwrt_op_scale(o, a, v, s)); break;
    case 4: st = CHK(hwrt_op_relu(o, a, s)); break;
    case 5: st = CHK(hwrt_op_cast(o, a, s)); break;
    case 6: st = CHK(hwrt_op_matmul(o, a, b, s)); break;
    default: st = CHK(hwrt_op_sum(o, a, (int)(k / 8 % 6) - 1, s)); break;
    }
    if (oi < 0 || st != HWRT_SUCCESS) return;
    hwrt_dtype dt;
    /* Writes on two streams are unordered on the device (as in CUDA: hwrt orders host reads
     * after every writer, not one stream's write after another's), so a fill's value is
     * known only while every write to the tensor came from one stream. Known value: a
     * float32 fill; any other write forgets it, and so does a second writer stream, for
     * good (until the tensor is made again). */
    if (S.t_writes[oi] == 0) S.t_writer[oi] = s;
    if (S.t_writer[oi] != s) S.t_writes[oi] = 2;
    else if (S.t_writes[oi] == 0) S.t_writes[oi] = 1;
    if (k % 8 == 0 && CHK(hwrt_tensor_dtype(o, &dt)) == HWRT_SUCCESS && dt == HWRT_FLOAT32 &&
        S.t_writes[oi] == 1) {
        S.t_known[oi] = 1;
        S.t_val[oi] = (float)v;
    } else {
        S.t_known[oi] = 0;
    }
}

static void op_copy(input *in, int blocking)
{
    int ds, ss;
    size_t droom, sroom;
    void *dst = pick_ptr(in, &ds, &droom);
    const void *src = pick_ptr(in, &ss, &sroom);
    unsigned kb = u8(in);
    hwrt_memcpy_kind kind = kb % 16 == 15 ? (hwrt_memcpy_kind)(kb / 16 + 5) : (hwrt_memcpy_kind)(kb % 5);
    size_t n = (kb & 0x80) ? pick_size(in) : (droom < sroom ? droom : sroom);
    /* Host ranges cannot be checked by anyone (memcpy semantics): a host-to-host copy is
     * only ever issued between the harness's own HB-byte buffers. Device sides are
     * checked by hwrt, which bounds n for every other kind. */
    int live_dev = ds >= 0 || ss >= 0 ||
                   (dst && dst != S.host && dst != S.pinned && dst != S.freed) ||
                   (src && src != S.host && src != S.pinned && src != S.freed);
    if (!live_dev && (kind == HWRT_MEMCPY_HOST_TO_HOST || kind == HWRT_MEMCPY_DEFAULT)) {
        dst = S.host;
        src = S.pinned;
        ds = ss = -1;
        if (n > HB) n = HB;
    }
    int host_side = src == S.host || src == S.pinned || dst == S.host || dst == S.pinned;
    if (host_side)
        sync_all();          /* no queued copy still reads or writes the host buffers */
    if (src == S.host || src == S.pinned)
        for (size_t i = 0; i < 64; i++) ((unsigned char *)src)[i] = (unsigned char)u8(in);
    if (trace)
        fprintf(stderr, "  copy dst %p (slot %d) src %p (slot %d) n %zu kind %d\n", dst, ds,
                src, ss, n, (int)kind);
    hwrt_status st = blocking ? CHK(hwrt_memcpy(dst, src, n, kind))
                              : CHK(hwrt_memcpy_async(dst, src, n, kind, pick_stream(in)));
    if (st != HWRT_SUCCESS || n == 0) return;
    if (ds < 0 && (dst != S.host && dst != S.pinned)) invalidate_all();  /* aliasing write */
    if (ds >= 0) {
        /* a blocking H2D of a whole, well-ordered buffer defines its contents */
        S.shadow_ok[ds] = blocking && (src == S.host || src == S.pinned) && n == S.psz[ds] &&
                          S.shadow_ok[ds];
        if (S.shadow_ok[ds]) memcpy(S.shadow[ds], src, n);
    }
}

static void step(input *in)
{
    unsigned op = u8(in) % 34;         /* 33 (and 31, 32 without offload): shutdown */
    if (trace) fprintf(stderr, "step op %u\n", op);
    switch (op) {
    case 0: CHK(hwrt_set_device("sim", (int)(u8(in) % 3))); break;
    case 1: case 2: {
        int i = (int)(u8(in) % NP);
        size_t n = pick_size(in);
        if (S.p[i]) { CHK(hwrt_free(S.p[i])); drop_ptr(i); }
        void *p = NULL;
        hwrt_status st = op == 1 ? CHK(hwrt_malloc(&p, n)) : CHK(hwrt_malloc_async(&p, n, pick_stream(in)));
        if (st == HWRT_SUCCESS && n && !p) fail("malloc returned NULL", "hwrt_malloc", st);
        if (st == HWRT_SUCCESS && p) {
            if (n > MAXBUF) { CHK(hwrt_free(p)); break; }
            S.p[i] = p;
            S.psz[i] = n;
            if (trace) fprintf(stderr, "  slot %d = %p, %zu bytes\n", i, p, n);
            S.shadow_ok[i] = 0;
            /* give it a defined content so the shadow is valid. Work queued earlier on
             * other streams may still write this address: a block freed without
             * hwrt_record_stream is reusable at once (as in PyTorch), so that work
             * finishes first or it would land after the fill */
            sync_all();
            memset(S.shadow[i], (int)(n & 0xff), n);
            if (CHK(hwrt_memset_async(p, (int)(n & 0xff), n, NULL)) == HWRT_SUCCESS) {
                sync_all();
                S.shadow_ok[i] = 1;
            }
        }
        break;
    }
    case 3: {
        int slot;
        size_t room;
        void *p = pick_ptr(in, &slot, &room);
        if (slot < 0 && aliases_tensor(p))
            break;   /* a stale pointer now inside a tensor: freeing it is the caller's bug */
        hwrt_status st = (u8(in) & 1) ? CHK(hwrt_free(p)) : CHK(hwrt_free_async(p, pick_stream(in)));
        if (st != HWRT_SUCCESS || !p) break;
        if (slot < 0)      /* only a stale pointer whose address was handed out again */
            for (int k = 0; k < NP; k++)
                if (S.p[k] == p) slot = k;
        if (slot < 0) fail("freed a pointer hwrt did not hand out", "hwrt_free", st);
        drop_ptr(slot);
        break;
    }
    case 4: op_copy(in, 1); break;
    case 5: op_copy(in, 0); break;
    case 6: {
        int slot;
        size_t room;
        void *p = pick_ptr(in, &slot, &room);
        unsigned b = u8(in);
        size_t n = (b & 1) ? pick_size(in) : room;
        if (CHK(hwrt_memset_async(p, (int)b, n, pick_stream(in))) == HWRT_SUCCESS && n) {
            if (slot >= 0) S.shadow_ok[slot] = 0;
            else invalidate_all();
        }
        break;
    }
    case 7: {
        int i = (int)(u8(in) % NS);
        if (S.s[i]) break;
        CHK(hwrt_stream_create(&S.s[i], (int)(u8(in) % 3) - 1));
        break;
    }
    case 8: {
        int i = (int)(u8(in) % NS);
        if (!S.s[i]) { CHK(hwrt_stream_destroy(pick_stream(in))); break; }
        hwrt_stream_destroy(S.s[i]);            /* may report a sticky fault */
        for (int k = 0; k < NT; k++)
            if (S.t_writer[k] == S.s[i]) S.t_known[k] = 0;
        S.stale_s = S.s[i];
        S.s[i] = NULL;
        break;
    }
    case 9: CHK(hwrt_stream_synchronize(pick_stream(in))); break;
    case 10: CHK(hwrt_stream_query(pick_stream(in))); break;
    case 11: {
        int i = (int)(u8(in) % NE);
        if (S.e[i]) break;
        CHK(hwrt_event_create(&S.e[i], u8(in) % 3));
        break;
    }
    case 12: CHK(hwrt_event_record(pick_event(in), pick_stream(in))); break;
    case 13: CHK(hwrt_stream_wait_event(pick_stream(in), pick_event(in))); break;
    case 14: {
        float ms;
        unsigned b = u8(in);
        if (b % 3 == 0) CHK(hwrt_event_query(pick_event(in)));
        else if (b % 3 == 1) CHK(hwrt_event_synchronize(pick_event(in)));
        else CHK(hwrt_event_elapsed_ms((b & 8) ? NULL : &ms, pick_event(in), pick_event(in)));
        break;
    }
    case 15: {
        int i = (int)(u8(in) % NE);
        if (!S.e[i]) { CHK(hwrt_event_destroy(pick_event(in))); break; }
        CHK(hwrt_event_destroy(S.e[i]));
        S.stale_e = S.e[i];
        S.e[i] = NULL;
        break;
    }
    case 16: case 17: op_tensor_new(in); break;
    case 18: case 19: op_tensor_op(in); break;
    case 20: {
        hwrt_tensor t;
        pick_tensor(in, &t);
        size_t nb = 0;
        hwrt_tensor_nbytes(t, &nb);
        static unsigned char buf[4 * 12 * 12 * 12 * 12 * 8];
        unsigned b = u8(in);
        size_t n = b % 4 == 0 ? nb + 1 : nb;
        if (n > sizeof buf) break;
        if (b % 2) CHK(hwrt_tensor_copy_to_host(t, b % 8 == 1 ? NULL : buf, n));
        else {
            int ti = -1;
            for (int k = 0; k < NT; k++) if (S.t[k] == t) ti = k;
            if (CHK(hwrt_tensor_copy_from_host(t, buf, n)) == HWRT_SUCCESS && ti >= 0)
                S.t_known[ti] = 0;
        }
        break;
    }
    case 21: {
        hwrt_tensor t;
        int i = pick_tensor(in, &t);
        if (u8(in) & 1) {
            if (CHK(hwrt_tensor_retain(t)) == HWRT_SUCCESS) CHK(hwrt_tensor_release(t));
        } else if (CHK(hwrt_tensor_release(t)) == HWRT_SUCCESS && i >= 0) {
            S.stale_t = S.t[i];
            S.t[i] = NULL;
            S.t_known[i] = 0;
        }
        break;
    }
    case 22: {
        char val[32];
        const char *key = keys[u8(in) % (sizeof keys / sizeof keys[0])];
        fuzz_string(in, val, sizeof val);
        CHK(hwrt_set_config(key, (u8(in) % 16) ? val : NULL));
        hwrt_set_config("log_level", "0");      /* keep the output quiet */
        char buf[64];
        CHK(hwrt_get_config(key, buf, (size_t)(u8(in) % 3 == 0 ? 2 : sizeof buf)));
        break;
    }
    case 23: sync_all(); break;
    case 24:
        /* work queued while the device was faulted was skipped: forget what we knew */
        if (CHK(hwrt_device_reset((int)(u8(in) % 3))) == HWRT_SUCCESS) invalidate_all();
        break;
    case 25: CHK(hwrt_launch_host_func(pick_stream(in), (u8(in) & 7) ? bump : NULL, &S.hostfn_runs)); break;
    case 26: {
        hwrt_tensor t;
        pick_tensor(in, &t);
        DLManagedTensorVersioned *m = NULL;
        if (CHK(hwrt_tensor_to_dlpack(t, &m)) != HWRT_SUCCESS) break;
        hwrt_tensor back = NULL;
        if (CHK(hwrt_tensor_from_dlpack(&back, m)) == HWRT_SUCCESS) CHK(hwrt_tensor_release(back));
        else m->deleter(m);
        /* a host import with fuzzed shape and dtype */
        DLManagedTensorVersioned *h = calloc(1, sizeof *h);
        static int64_t shape[3];
        static double data[64];          /* 3 dims of <= 4, 8-byte elements at most */
        for (int k = 0; k < 3; k++) shape[k] = (int64_t)(u8(in) % 5);
        h->version.major = u8(in) % 4 == 0 ? 2 : 1;
        h->deleter = dl_deleter;
        h->dl_tensor.data = data;
        h->dl_tensor.device.device_type = (DLDeviceType)(u8(in) % 4 ? kDLCPU : u8(in) % 18);
        h->dl_tensor.ndim = (int32_t)(u8(in) % 5) - 1;
        h->dl_tensor.shape = shape;
        h->dl_tensor.dtype.code = (uint8_t)(u8(in) % 8);
        h->dl_tensor.dtype.bits = (uint8_t)(8u << (u8(in) % 4));
        h->dl_tensor.dtype.lanes = 1;
        hwrt_tensor imp = NULL;
        if (CHK(hwrt_tensor_from_dlpack(&imp, h)) == HWRT_SUCCESS) CHK(hwrt_tensor_release(imp));
        else free(h);
        break;
    }
    case 27: verify(); break;
    case 28: {
        hwrt_memory_info mi;
        int d = (int)(u8(in) % 3);
        CHK(hwrt_get_memory_info(d, (u8(in) & 15) ? &mi : NULL));
        CHK(hwrt_empty_cache(d));
        break;
    }
    case 29: {
        char name[32];
        hwrt_dtype dt;
        fuzz_string(in, name, sizeof name);
        CHK(hwrt_dtype_from_name(name, &dt));
        int cnt;
        CHK(hwrt_device_count((u8(in) & 1) ? "sim" : name, &cnt));
        break;
    }
    case 30: {
        void *h = NULL;
        size_t n = pick_size(in);
        /* huge sizes must fail cleanly; mid sizes are kept small (pinned = mlock'd RAM) */
        if (n > ((size_t)16 << 20) && n < ((size_t)1 << 44)) n = (size_t)16 << 20;
        if (CHK(hwrt_host_alloc(&h, n, u8(in) % 3)) == HWRT_SUCCESS) CHK(hwrt_host_free(h));
        break;
    }
#ifdef FUZZ_OFFLOAD
    case 31: {
        hwrt_offload_config c;
        memset(&c, 0, sizeof c);
        unsigned b = u8(in);
        c.enabled = b & 1;
        c.auto_offload = (b >> 1) & 1;
        c.enable_pinned_mem = (b >> 2) & 1;
        c.max_device_memory = (size_t)(u8(in) % 16) << 20;
        c.offload_cpu_size = (size_t)(u8(in) % 8) << 20;
        c.offload_disk_size = (b & 8) ? (size_t)(u8(in) % 8) << 20 : 0;
        c.offload_path = (b & 16) ? offload_dir : (b & 32) ? "/nonexistent/hwrt" : NULL;
        c.prefetch_depth = (int)(u8(in) % 72) - 2;
        hwrt_offload_config back;
        if (CHK(hwrt_set_offload_config((b & 64) ? NULL : &c)) == HWRT_SUCCESS)
            CHK(hwrt_get_offload_config(&back));
        break;
    }
    case 32: {
        hwrt_tensor t;
        pick_tensor(in, &t);
        unsigned b = u8(in);
        int where;
        hwrt_offload_stats st;
        switch (b % 6) {
        case 0: CHK(hwrt_tensor_set_offloadable(t, (b >> 3) & 1)); break;
        case 1: CHK(hwrt_offload_prefetch(t, pick_stream(in))); break;
        case 2: CHK(hwrt_offload_evict(t)); break;   /* data must survive: see verify() */
        case 3: CHK(hwrt_offload_step()); break;
        case 4: CHK(hwrt_offload_location(t, (b & 8) ? NULL : &where)); break;
        default: CHK(hwrt_offload_stats_get((b & 8) ? NULL : &st)); CHK(hwrt_offload_reset_stats()); break;
        }
        break;
    }
#endif
    default:
        /* a few shutdowns per program: each restarts every engine thread, and a storm of
         * them only makes the fuzzer slow (a 140-shutdown input took 68 s under load) */
        if (S.shutdowns++ >= 3) { verify(); break; }
        release_all();
        sync_all();
        hwrt_host_free(S.pinned);
        hwrt_shutdown();                       /* may report a sticky fault */
        invalidate_all();
        if (hwrt_host_alloc((void **)&S.pinned, HB, HWRT_HOST_PINNED) != HWRT_SUCCESS)
            fail("pinned host buffer", "hwrt_host_alloc", HWRT_SUCCESS);
        break;
    }
}

static void remove_offload_dir(void) { rmdir(offload_dir); }   /* empty once all is released */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        init = 1;
        trace = getenv("HWRT_FUZZ_TRACE") != NULL;
        setenv("HWRT_SIM_DEVICES", "2", 1);
        setenv("HWRT_SIM_MEMORY", "256MB", 1);
        setenv("HWRT_SIM_OVERHEAD", "16MB", 1);
        S.host = malloc(HB);
        for (int i = 0; i < NP; i++) S.shadow[i] = malloc(MAXBUF);
        snprintf(offload_dir, sizeof offload_dir, "/tmp/hwrt-fuzz-XXXXXX");
        if (!mkdtemp(offload_dir)) snprintf(offload_dir, sizeof offload_dir, "/tmp");
        else atexit(remove_offload_dir);
        hwrt_shutdown();
    }
    input in = {data, size};
    unsigned f = u8(&in);
    if (f < (sizeof fault_plans / sizeof fault_plans[0]) * 8 && f % 8 == 7)
        setenv("HWRT_SIM_FAULTS", fault_plans[f / 8], 1);
    else
        unsetenv("HWRT_SIM_FAULTS");
    memset(S.host, 0, HB);
    S.shutdowns = 0;
    hwrt_set_device("sim", 0);
    if (hwrt_host_alloc((void **)&S.pinned, HB, HWRT_HOST_PINNED) != HWRT_SUCCESS)
        fail("pinned host buffer", "hwrt_host_alloc", HWRT_SUCCESS);
    int steps = 0;
    while (in.n && steps++ < 200) step(&in);
    verify();
    release_all();
    sync_all();
    hwrt_host_free(S.pinned);
    S.pinned = NULL;
    hwrt_set_config("launch_blocking", "0");
    hwrt_shutdown();
    S.stale_s = NULL;
    S.stale_e = NULL;
    S.stale_t = NULL;
    invalidate_all();
    return 0;
}

#ifndef HWRT_LIBFUZZER
/* Replay: every file given, or every file of every directory given. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 1; }
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) { perror(argv[i]); return 1; }
        if (!S_ISDIR(st.st_mode)) { bad |= replay_file(argv[i]); files++; continue; }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            bad |= replay_file(path);
            files++;
        }
        if (d) closedir(d);
    }
    free(S.host);
    for (int i = 0; i < NP; i++) free(S.shadow[i]);
    hwrt_shutdown();
    printf("hwrt fuzz replay: %d inputs ran without a finding\n", files);
    return bad || files == 0;
}
#endif
