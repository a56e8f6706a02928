/* Kernels: the op set through aclnn's two-phase API, without graph compilation.
 *
 *   aclnn<Op>GetWorkspaceSize(tensors..., &ws_bytes, &executor)   host only: checks dtypes
 *                                                                 and shapes, tiles
 *   aclnn<Op>(workspace, ws_bytes, executor, stream)              enqueues; the executor is
 *                                                                 single-use
 *
 * The workspace is the stream's own buffer (asc_stream.ws), grown when an op needs more:
 * work on one stream runs in order, so one buffer serves every op of the stream; before it
 * is replaced the stream is synchronized, since queued ops may still read the old one.
 * The aclTensor/aclScalar/aclIntArray descriptors are host objects, destroyed right after
 * the enqueue (GGML does the same).
 *
 * The op libraries are opened at the first kernel: libnnopbase.so (the descriptors),
 * libopapi_math.so and libopapi_nn.so (CANN 8.5's split libraries), falling back to
 * libopapi.so (the older all-in-one library); each symbol is looked up across all of them
 * (hwi_dynlib_find), as torch_npu does. */
#include "ascend_internal.h"
#include "../../base/dynlib.h"
#include "../../base/status.h"

#include <stdio.h>
#include <string.h>

/* ---- the plan: pure, checked by tests/ascend without CANN ---- */

int asc_acl_dtype(hwrt_dtype dt)
{
    switch (dt) {
    case HWRT_FLOAT32: return HACL_FLOAT;
    case HWRT_FLOAT16: return HACL_FLOAT16;
    case HWRT_BFLOAT16: return HACL_BF16;
    case HWRT_FLOAT64: return HACL_DOUBLE;
    case HWRT_INT8: return HACL_INT8;
    case HWRT_UINT8: return HACL_UINT8;
    case HWRT_INT32: return HACL_INT32;
    case HWRT_INT64: return HACL_INT64;
    case HWRT_BOOL: return HACL_BOOL;
    case HWRT_INT16: return HACL_INT16;
    case HWRT_UINT16: return HACL_UINT16;
    case HWRT_UINT32: return HACL_UINT32;
    case HWRT_UINT64: return HACL_UINT64;
    case HWRT_COMPLEX64: return HACL_COMPLEX64;
    case HWRT_COMPLEX128: return HACL_COMPLEX128;
    default: return HACL_DT_UNDEFINED;
    }
}

static int soc_full_fp32(const char *soc)
{
    return soc && (!strncmp(soc, "Ascend910B", 10) || !strncmp(soc, "Ascend910_93", 12));
}

hwrt_status asc_matmul_cube_math(hwrt_dtype dt, const char *soc, int8_t *cube)
{
    switch (dt) {
    case HWRT_FLOAT16:
    case HWRT_BFLOAT16:
        *cube = HACL_CUBE_KEEP_DTYPE;
        return HWRT_SUCCESS;
    case HWRT_FLOAT32:
        /* A2/A3 keep float32; 910A and 310P refuse KEEP_DTYPE for it and compute in
         * float16 (docs/ascend.md: reduced precision there) */
        *cube = soc_full_fp32(soc) ? HACL_CUBE_KEEP_DTYPE : HACL_CUBE_ALLOW_FP32_DOWN_PRECISION;
        return HWRT_SUCCESS;
    default:
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "ascend: MatMul of %s is not supported: "
                       "aclnnMatmul takes float32, float16 and bfloat16 only; cast the "
                       "operands to float32 first", hwrt_dtype_name(dt));
    }
}

static size_t elem_size(hwrt_dtype dt)
{
    return hwrt_dtype_size(dt);
}

hwrt_status asc_plan_kernel(const hwrt_kernel *k, const char *soc, asc_plan *p)
{
    memset(p, 0, sizeof *p);
    p->op = ASC_OP_NONE;
    p->dt = asc_acl_dtype(k->dtype);
    p->out_dt = asc_acl_dtype(k->op == HWRT_K_CAST || k->op == HWRT_K_SUM ? k->out_dtype
                                                                          : k->dtype);
    if (p->dt == HACL_DT_UNDEFINED || p->out_dt == HACL_DT_UNDEFINED)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "ascend: %s of %s has no ACL data type",
                       hwi_op_name(k->op), hwrt_dtype_name(k->dtype));
    switch (k->op) {
    case HWRT_K_MATMUL:
        HWI_TRY(asc_matmul_cube_math(k->dtype, soc, &p->cube_math));
        if (k->m == 0 || k->nn == 0) return HWRT_SUCCESS;
        p->out_bytes = (size_t)(k->m * k->nn) * elem_size(k->dtype);
        if (k->k == 0) {                       /* an empty inner product: zeros */
            p->op = ASC_OP_ZERO;
            return HWRT_SUCCESS;
        }
        p->op = ASC_OP_MATMUL;
        p->a_rank = p->b_rank = p->out_rank = 2;
        p->a_dims[0] = k->m, p->a_dims[1] = k->k;
        p->b_dims[0] = k->k, p->b_dims[1] = k->nn;
        p->out_dims[0] = k->m, p->out_dims[1] = k->nn;
        return HWRT_SUCCESS;
    case HWRT_K_SUM:
        if (k->m * k->nn == 0) return HWRT_SUCCESS;
        p->out_bytes = (size_t)(k->m * k->nn) * elem_size(k->out_dtype);
        if (k->k == 0) {                       /* an empty sum: zeros */
            p->op = ASC_OP_ZERO;
            return HWRT_SUCCESS;
        }
        /* a viewed as [m, k, nn], dimension 1 reduced, out [m, nn]; ReduceSum's dtype
         * argument is out's (int64 for bool) */
        p->op = ASC_OP_REDUCE_SUM;
        p->a_rank = 3;
        p->a_dims[0] = k->m, p->a_dims[1] = k->k, p->a_dims[2] = k->nn;
        p->out_rank = 2;
        p->out_dims[0] = k->m, p->out_dims[1] = k->nn;
        p->reduce_dim = 1;
        return HWRT_SUCCESS;
    default:
        break;
    }
    if (k->n == 0) return HWRT_SUCCESS;
    p->a_rank = p->b_rank = p->out_rank = 1;
    p->a_dims[0] = p->b_dims[0] = p->out_dims[0] = k->n;
    switch (k->op) {
    case HWRT_K_FILL: p->op = ASC_OP_FILL; break;
    case HWRT_K_ADD: p->op = ASC_OP_ADD; break;
    case HWRT_K_MUL: p->op = ASC_OP_MUL; break;
    case HWRT_K_SCALE: p->op = ASC_OP_MULS; break;
    case HWRT_K_RELU: p->op = ASC_OP_RELU; break;
    case HWRT_K_CAST:
        p->op = k->dtype == k->out_dtype ? ASC_OP_COPY : ASC_OP_CAST;
        p->out_bytes = (size_t)k->n * elem_size(k->dtype);
        break;
    default:
        return hwi_err(HWRT_ERROR_INTERNAL, "ascend: kernel op %d is not in the op table; this "
                       "is a bug in hwrt", (int)k->op);
    }
    return HWRT_SUCCESS;
}

/* ---- the op libraries (HWRT_ASCEND_NNOPBASE_LIBRARY and HWRT_ASCEND_OPAPI_LIBRARY
 * override libnnopbase.so and the first op library tried) ---- */

static pthread_mutex_t ops_mu = PTHREAD_MUTEX_INITIALIZER;
static int ops_tried;
static hwrt_status ops_status;
static char ops_msg[384];

static const hwi_dynsym nn_syms[] = {
#define ASC_SYM(slot, sym, ret, args, flags) {#sym, (void **)&hacl.slot, flags, NULL},
    HACL_NN_FUNCS(ASC_SYM)
#undef ASC_SYM
};

static hwrt_status ops_open(void)
{
    static const char *const nnopbase[] = {"libnnopbase.so", NULL};
    static const char *const math[] = {"libopapi_math.so", NULL};
    static const char *const nn[] = {"libopapi_nn.so", NULL};
    static const char *const legacy[] = {"libopapi.so", NULL};
    char why[200];
    void *h[4];
    h[0] = hwi_dynlib_open("HWRT_ASCEND_OPAPI_LIBRARY", math, NULL, NULL, 0);
    h[1] = hwi_dynlib_open(NULL, nn, NULL, NULL, 0);
    h[2] = hwi_dynlib_open(NULL, legacy, NULL, NULL, 0);
    h[3] = hwi_dynlib_open("HWRT_ASCEND_NNOPBASE_LIBRARY", nnopbase, NULL, why, sizeof why);
    if (!h[3]) {
        snprintf(ops_msg, sizeof ops_msg, "ascend: the aclnn op libraries could not be loaded: "
                 "libnnopbase.so is missing (%s); source CANN's set_env.sh", why);
        return HWRT_ERROR_UNAVAILABLE;
    }
    const char *missing = hwi_dynlib_resolve(h[3], nn_syms, sizeof nn_syms / sizeof nn_syms[0]);
    if (missing) {
        snprintf(ops_msg, sizeof ops_msg, "ascend: libnnopbase.so lacks %s", missing);
        return HWRT_ERROR_UNAVAILABLE;
    }
    if (!h[0] && !h[1] && !h[2]) {
        snprintf(ops_msg, sizeof ops_msg, "ascend: no aclnn op library could be loaded "
                 "(libopapi_math.so, libopapi_nn.so or libopapi.so); source CANN's set_env.sh");
        return HWRT_ERROR_UNAVAILABLE;
    }
    /* an op missing everywhere leaves its slot NULL: that op alone is refused */
#define ASC_FIND(slot, ws_sym, run_sym, args)                                              \
    *(void **)&hacl.slot = hwi_dynlib_find(h, 4, #ws_sym);                                 \
    *(void **)&hacl.slot##Run = hwi_dynlib_find(h, 4, #run_sym);
    HACL_OP_FUNCS(ASC_FIND)
#undef ASC_FIND
    return HWRT_SUCCESS;
}

hwrt_status asc_ops_load(void)
{
    pthread_mutex_lock(&ops_mu);
    if (!ops_tried) {
        ops_status = ops_open();
        ops_tried = 1;
    }
    hwrt_status st = ops_status;
    pthread_mutex_unlock(&ops_mu);
    if (st != HWRT_SUCCESS) return hwi_err(st, "%s", ops_msg);
    return HWRT_SUCCESS;
}

/* ---- the workspace ---- */

#define WS_ROUND (1u << 20)

/* A workspace of at least bytes for s (NULL when 0); caller holds s->ws_mu. */
static hwrt_status workspace(asc_stream *s, uint64_t bytes, void **ws)
{
    asc_dev *d = s->dev;
    *ws = NULL;
    if (bytes == 0) return HWRT_SUCCESS;
    if (bytes > s->ws_bytes) {
        size_t want = (size_t)((bytes + WS_ROUND - 1) / WS_ROUND * WS_ROUND);
        if (s->ws) {
            /* queued ops may still use the old buffer */
            hacl_error r = hacl.SynchronizeStream(s->s);
            if (r != HACL_SUCCESS && !asc_overflow(r))
                return asc_err(d, r, "ascend device %d: synchronizing before growing the aclnn "
                               "workspace", d->ordinal);
            hacl.Free(s->ws);
            s->ws = NULL;
            s->ws_bytes = 0;
        }
        void *p = NULL;
        hacl_error r = hacl.Malloc(&p, want, HACL_MEM_MALLOC_HUGE_FIRST);
        if (r != HACL_SUCCESS)
            return asc_err(d, r, "ascend device %d: aclrtMalloc(%zu bytes) for an aclnn "
                           "workspace", d->ordinal, want);
        s->ws = p;
        s->ws_bytes = want;
    }
    *ws = s->ws;
    return HWRT_SUCCESS;
}

void asc_workspace_free(asc_stream *s)
{
    if (s->ws) {
        hacl.SynchronizeStream(s->s);
        hacl.Free(s->ws);
    }
    s->ws = NULL;
    s->ws_bytes = 0;
}

/* ---- launching ---- */

static hacl_tensor *tensor(const int64_t *dims, int rank, int dt, const void *ptr)
{
    int64_t strides[3];
    int64_t st = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = st;
        st *= dims[i];
    }
    return hacl.CreateTensor(dims, (uint64_t)rank, dt, strides, 0, HACL_FORMAT_ND, dims,
                             (uint64_t)rank, (void *)ptr);
}

/* The scalar of FILL and SCALE: float32 semantics for the float32-computed dtypes (as
 * the other backends), double for float64, int64 for integers, bool for bool. */
typedef union { float f; double d; int64_t i; bool b; } scalar_val;
static hacl_scalar *scalar(hwrt_dtype dt, double v, scalar_val *buf)
{
    switch (dt) {
    case HWRT_FLOAT32:
    case HWRT_FLOAT16:
    case HWRT_BFLOAT16: buf->f = (float)v; return hacl.CreateScalar(&buf->f, HACL_FLOAT);
    case HWRT_BOOL: buf->b = v != 0; return hacl.CreateScalar(&buf->b, HACL_BOOL);
    case HWRT_FLOAT64: buf->d = v; return hacl.CreateScalar(&buf->d, HACL_DOUBLE);
    default:
        break;
    }
    /* integer FILL takes the value, integer SCALE multiplies in double like the others */
    buf->d = v;
    return hacl.CreateScalar(&buf->d, HACL_DOUBLE);
}

static hwrt_status nn_err(asc_dev *d, hacl_nn_status st, const char *what, const hwrt_kernel *k)
{
    const char *msg = hacl.GetRecentErrMsg ? hacl.GetRecentErrMsg() : NULL;
    hwrt_status hs = st == HACL_NN_ERR_PARAM_INVALID ? HWRT_ERROR_NOT_SUPPORTED
                     : st == HACL_NN_ERR_PARAM_NULLPTR ? HWRT_ERROR_INTERNAL
                                                      : HWRT_ERROR_INTERNAL;
    return hwi_err(hs, "ascend device %d (%s): %s for %s of %s -> %s failed: aclnnStatus %d%s%.200s",
                   d->ordinal, d->soc, what, hwi_op_name(k->op), hwrt_dtype_name(k->dtype),
                   hwrt_dtype_name(k->op == HWRT_K_CAST || k->op == HWRT_K_SUM ? k->out_dtype
                                                                               : k->dtype),
                   (int)st, msg && *msg ? ": " : "", msg && *msg ? msg : "");
}

hwrt_status asc_kernel_launch(hwrt_bstream *sb, const hwrt_kernel *k)
{
    asc_stream *s = sb;
    asc_dev *d = s->dev;
    asc_plan p;
    HWI_TRY(asc_enter(d));
    HWI_TRY(asc_plan_kernel(k, d->soc, &p));
    hacl_error r = HACL_SUCCESS;
    switch (p.op) {
    case ASC_OP_NONE: return HWRT_SUCCESS;
    case ASC_OP_ZERO:
        r = hacl.MemsetAsync(k->out, p.out_bytes, 0, p.out_bytes, s->s);
        break;
    case ASC_OP_COPY:
        r = hacl.MemcpyAsync(k->out, p.out_bytes, k->a, p.out_bytes, HACL_MEMCPY_DEVICE_TO_DEVICE,
                             s->s);
        break;
    default:
        goto aclnn;
    }
    if (r != HACL_SUCCESS)
        return asc_err(d, r, "ascend device %d: %s of %s", d->ordinal, hwi_op_name(k->op),
                       hwrt_dtype_name(k->dtype));
    return HWRT_SUCCESS;

aclnn:
    HWI_TRY(asc_ops_load());
    static const char *const ws_name[] = {
        [ASC_OP_ADD] = "aclnnAddGetWorkspaceSize", [ASC_OP_MUL] = "aclnnMulGetWorkspaceSize",
        [ASC_OP_MULS] = "aclnnMulsGetWorkspaceSize", [ASC_OP_RELU] = "aclnnReluGetWorkspaceSize",
        [ASC_OP_CAST] = "aclnnCastGetWorkspaceSize", [ASC_OP_MATMUL] = "aclnnMatmulGetWorkspaceSize",
        [ASC_OP_REDUCE_SUM] = "aclnnReduceSumGetWorkspaceSize",
        [ASC_OP_FILL] = "aclnnInplaceFillScalarGetWorkspaceSize",
    };
    hacl_nn_status (*run)(void *, uint64_t, hacl_executor *, hacl_stream) = NULL;
    int have = 0;
    switch (p.op) {
    case ASC_OP_ADD: have = hacl.Add && (run = hacl.AddRun); break;
    case ASC_OP_MUL: have = hacl.Mul && (run = hacl.MulRun); break;
    case ASC_OP_MULS: have = hacl.Muls && (run = hacl.MulsRun); break;
    case ASC_OP_RELU: have = hacl.Relu && (run = hacl.ReluRun); break;
    case ASC_OP_CAST: have = hacl.Cast && (run = hacl.CastRun); break;
    case ASC_OP_MATMUL: have = hacl.Matmul && (run = hacl.MatmulRun); break;
    case ASC_OP_REDUCE_SUM: have = hacl.ReduceSum && (run = hacl.ReduceSumRun); break;
    case ASC_OP_FILL: have = hacl.Fill && (run = hacl.FillRun); break;
    default: break;
    }
    if (!have)
        return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "ascend: %s needs %s, which none of the aclnn "
                       "op libraries loaded exports (CANN too old?)", hwi_op_name(k->op),
                       ws_name[p.op]);

    hacl_tensor *ta = NULL, *tb = NULL, *to = NULL;
    hacl_scalar *sc = NULL;
    hacl_int_array *dims = NULL;
    scalar_val sv;
    to = tensor(p.out_dims, p.out_rank, p.out_dt, k->out);
    if (p.op != ASC_OP_FILL) ta = tensor(p.a_dims, p.a_rank, p.dt, k->a);
    if (p.op == ASC_OP_ADD || p.op == ASC_OP_MUL || p.op == ASC_OP_MATMUL)
        tb = tensor(p.b_dims, p.b_rank, p.dt, k->b);
    if (p.op == ASC_OP_FILL || p.op == ASC_OP_MULS) sc = scalar(k->dtype, k->scalar, &sv);
    if (p.op == ASC_OP_ADD) sc = scalar(k->dtype, 1.0, &sv);      /* out = a + 1 * b */
    if (p.op == ASC_OP_REDUCE_SUM) dims = hacl.CreateIntArray(&p.reduce_dim, 1);
    const int need_b = p.op == ASC_OP_ADD || p.op == ASC_OP_MUL || p.op == ASC_OP_MATMUL;
    const int need_sc = p.op == ASC_OP_FILL || p.op == ASC_OP_MULS || p.op == ASC_OP_ADD;
    hwrt_status st = HWRT_SUCCESS;
    if (!to || (p.op != ASC_OP_FILL && !ta) || (need_b && !tb) || (need_sc && !sc) ||
        (p.op == ASC_OP_REDUCE_SUM && !dims))
        st = hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "ascend: creating the aclnn descriptors of "
                     "%s failed", hwi_op_name(k->op));

    uint64_t ws_bytes = 0;
    hacl_executor *ex = NULL;
    hacl_nn_status ns = HACL_NN_SUCCESS;
    if (st == HWRT_SUCCESS) {
        switch (p.op) {
        case ASC_OP_ADD: ns = hacl.Add(ta, tb, sc, to, &ws_bytes, &ex); break;
        case ASC_OP_MUL: ns = hacl.Mul(ta, tb, to, &ws_bytes, &ex); break;
        case ASC_OP_MULS: ns = hacl.Muls(ta, sc, to, &ws_bytes, &ex); break;
        case ASC_OP_RELU: ns = hacl.Relu(ta, to, &ws_bytes, &ex); break;
        case ASC_OP_CAST: ns = hacl.Cast(ta, p.out_dt, to, &ws_bytes, &ex); break;
        case ASC_OP_MATMUL: ns = hacl.Matmul(ta, tb, to, p.cube_math, &ws_bytes, &ex); break;
        case ASC_OP_REDUCE_SUM:
            ns = hacl.ReduceSum(ta, dims, false, p.out_dt, to, &ws_bytes, &ex);
            break;
        default: ns = hacl.Fill(to, sc, &ws_bytes, &ex); break;
        }
        if (ns != HACL_NN_SUCCESS) st = nn_err(d, ns, ws_name[p.op], k);
    }
    if (st == HWRT_SUCCESS) {
        void *ws = NULL;
        pthread_mutex_lock(&s->ws_mu);
        st = workspace(s, ws_bytes, &ws);
        if (st == HWRT_SUCCESS) {
            /* the executor is consumed by the run, also when it fails */
            ns = run(ws, ws_bytes, ex, s->s);
            ex = NULL;
            if (ns != HACL_NN_SUCCESS) st = nn_err(d, ns, "the launch (phase 2)", k);
        }
        pthread_mutex_unlock(&s->ws_mu);
    }
    /* an executor built but not run (the workspace could not be had) stays with aclnn:
     * aclDestroyAclOpExecutor is for repeatable executors only (docs/ascend.md) */
    if (ta) hacl.DestroyTensor(ta);
    if (tb) hacl.DestroyTensor(tb);
    if (to) hacl.DestroyTensor(to);
    if (sc) hacl.DestroyScalar(sc);
    if (dims) hacl.DestroyIntArray(dims);
    return st;
}
