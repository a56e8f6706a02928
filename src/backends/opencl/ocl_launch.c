/* Kernel launches: map the operands' device pointers to (buffer, offset), pick the
 * kernel, set its arguments and enqueue it. FILL needs no kernel: the value is converted
 * once on the host, with the sim's store rules, and written by clEnqueueFillBuffer. */
#include "ocl.h"
#include "../../base/half.h"
#include "../../base/status.h"

#include <math.h>
#include <string.h>

typedef struct { size_t size; const void *val; } arg;

static double sat(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

/* One element of dtype dt holding v, as the sim's generic store writes it. */
static size_t fill_pattern(hwrt_dtype dt, double v, unsigned char pat[8])
{
    union { float f; uint16_t h; double d; int8_t i8; uint8_t u8; int32_t i32; int64_t i64; } u;
    memset(&u, 0, sizeof u);
    switch (dt) {
    case HWRT_FLOAT32: u.f = (float)v; break;
    case HWRT_FLOAT16: u.h = hwi_float_to_half((float)v); break;
    case HWRT_BFLOAT16: u.h = hwi_float_to_bf16((float)v); break;
    case HWRT_FLOAT64: u.d = v; break;
    case HWRT_INT8: u.i8 = (int8_t)sat(v, -128, 127); break;
    case HWRT_UINT8: u.u8 = (uint8_t)sat(v, 0, 255); break;
    case HWRT_INT32: u.i32 = (int32_t)sat(v, -2147483648.0, 2147483647.0); break;
    case HWRT_INT64: u.i64 = (int64_t)sat(v, -9223372036854775808.0, 9223372036854774784.0); break;
    default: u.u8 = v != 0; break;                                   /* bool */
    }
    size_t n = hwrt_dtype_size(dt);
    memcpy(pat, &u, n);
    return n;
}

/* Fault injection (HWRT_OPENCL_FAIL_KERNEL=N): the Nth launch on the device waits on a
 * user event that fail_after() fails, so the driver itself fails the command. */
static cl_event inject(ocl_dev *d)
{
    if (!d->fail_kernel_at || atomic_fetch_add(&d->launches, 1) + 1 != d->fail_kernel_at)
        return NULL;
    cl_int e;
    cl_event u = ocl.CreateUserEvent(d->ctx, &e);
    return e == CL_SUCCESS ? u : NULL;
}

static void fail_after(cl_event u)
{
    if (!u) return;
    ocl.SetUserEventStatus(u, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    ocl.ReleaseEvent(u);
}

static hwrt_status fill(ocl_stream *s, const hwrt_kernel *k)
{
    unsigned char pat[8];
    size_t es = fill_pattern(k->dtype, k->scalar, pat);
    size_t bytes = (size_t)k->n * es, off;
    cl_mem m;
    HWI_TRY(ocl_resolve(s->dev, k->out, bytes, &m, &off));
    if (off % es)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "opencl device %d: fill of %s at %p: the "
                       "address is not aligned to the element size %zu", s->dev->ordinal,
                       hwrt_dtype_name(k->dtype), k->out, es);
    cl_event ev;
    pthread_mutex_lock(&s->enq_mu);
    cl_event u = inject(s->dev);
    cl_int e = ocl.EnqueueFillBuffer(s->q, m, pat, es, off, bytes, u ? 1 : 0, u ? &u : NULL, &ev);
    if (e == CL_SUCCESS) ocl_stream_track(s, ev);
    fail_after(u);
    pthread_mutex_unlock(&s->enq_mu);
    if (e != CL_SUCCESS)
        return ocl_err(e, "opencl device %d: Fill (clEnqueueFillBuffer of %zu bytes)",
                       s->dev->ordinal, bytes);
    return HWRT_SUCCESS;
}

typedef struct {
    cl_mem om, am, bm;
    cl_ulong oo, ao, bo;
} operands;

static hwrt_status resolve_all(ocl_dev *d, const hwrt_kernel *k, operands *x)
{
    size_t es = hwrt_dtype_size(k->dtype), os = hwrt_dtype_size(k->out_dtype);
    size_t obytes, abytes, bbytes = 0;
    switch (k->op) {
    case HWRT_K_MATMUL:
        obytes = (size_t)(k->m * k->nn) * os;
        abytes = (size_t)(k->m * k->k) * es;
        bbytes = (size_t)(k->k * k->nn) * es;
        break;
    case HWRT_K_SUM:
        obytes = (size_t)(k->m * k->nn) * os;
        abytes = (size_t)(k->m * k->k * k->nn) * es;
        break;
    default:
        obytes = (size_t)k->n * os;
        abytes = (size_t)k->n * es;
        if (hwi_op_info_of(k->op)->arity == 2) bbytes = abytes;    /* Add, Mul */
        break;
    }
    size_t off;
    HWI_TRY(ocl_resolve(d, k->out, obytes, &x->om, &off));
    x->oo = off;
    HWI_TRY(ocl_resolve(d, k->a, abytes, &x->am, &off));
    x->ao = off;
    x->bm = x->am;
    x->bo = x->ao;
    if (bbytes) {
        HWI_TRY(ocl_resolve(d, k->b, bbytes, &x->bm, &off));
        x->bo = off;
    }
    return HWRT_SUCCESS;
}

/* Pick the kernel and its arguments (after the three operand pairs); work size too. */
static int choose(const hwrt_kernel *k, int *dt, int *odt, int *op, cl_int *K, cl_int *N,
                  cl_int *M, cl_float *s32, arg *extra, int *nextra, size_t gws[2], cl_uint *dims)
{
    *dims = 1;
    gws[0] = (size_t)k->n;
    *dt = (int)k->dtype;
    *odt = (int)k->out_dtype;
    *op = (int)k->op;
    *nextra = 0;
    switch (k->op) {
    case HWRT_K_MATMUL:
        *K = (cl_int)k->k;
        *N = (cl_int)k->nn;
        *M = (cl_int)k->m;
        *dims = 2;
        extra[0] = (arg){sizeof *K, K};
        extra[1] = (arg){sizeof *N, N};
        *nextra = 2;
        gws[0] = (size_t)(k->nn + 7) / 8;           /* a 4x8 block per work item */
        gws[1] = (size_t)(k->m + 3) / 4;
        if (k->dtype == HWRT_FLOAT32 || k->dtype == HWRT_FLOAT64) {
            extra[(*nextra)++] = (arg){sizeof *M, M};
            return k->dtype == HWRT_FLOAT32 ? OCL_K_MATMUL_F32 : OCL_K_MATMUL_F64;
        }
        extra[(*nextra)++] = (arg){sizeof *dt, dt};
        extra[(*nextra)++] = (arg){sizeof *M, M};
        return OCL_K_MATMUL_HALF;
    case HWRT_K_SUM:
        *dims = 2;
        gws[0] = (size_t)k->nn;
        gws[1] = (size_t)k->m;
        return OCL_K_SUM;
    case HWRT_K_CAST:
        extra[0] = (arg){sizeof *dt, dt};
        extra[1] = (arg){sizeof *odt, odt};
        *nextra = 2;
        return OCL_K_CAST;
    default:
        break;
    }
    if (k->dtype == HWRT_FLOAT32) {
        if (k->op == HWRT_K_ADD) return OCL_K_ADD_F32;
        if (k->op == HWRT_K_MUL) return OCL_K_MUL_F32;
        if (k->op == HWRT_K_SCALE) {
            *s32 = (cl_float)k->scalar;
            extra[0] = (arg){sizeof *s32, s32};
            *nextra = 1;
            return OCL_K_SCALE_F32;
        }
        return OCL_K_RELU_F32;
    }
    extra[0] = (arg){sizeof *op, op};
    extra[1] = (arg){sizeof *dt, dt};
    extra[2] = (arg){sizeof k->scalar, &k->scalar};
    *nextra = 3;
    return OCL_K_EW;
}

/* Number of (buffer, offset) operand pairs each kernel takes before its extra args. */
static int npairs(int kid)
{
    switch (kid) {
    case OCL_K_SCALE_F32: case OCL_K_RELU_F32: case OCL_K_CAST: case OCL_K_SUM: return 2;
    default: return 3;
    }
}

static hwrt_status enqueue(ocl_stream *s, const hwrt_kernel *k, int kid, const operands *x,
                           const arg *extra, int nextra, const size_t *gws, cl_uint dims)
{
    ocl_dev *d = s->dev;
    cl_kernel kern = d->kernels[kid];
    const cl_mem mems[3] = {x->om, x->am, x->bm};
    const cl_ulong offs[3] = {x->oo, x->ao, x->bo};
    cl_uint i = 0;
    cl_int e = CL_SUCCESS;
    for (int p = 0; p < npairs(kid) && e == CL_SUCCESS; p++) {
        e = ocl.SetKernelArg(kern, i++, sizeof(cl_mem), &mems[p]);
        if (e == CL_SUCCESS) e = ocl.SetKernelArg(kern, i++, sizeof(cl_ulong), &offs[p]);
    }
    for (int j = 0; j < nextra && e == CL_SUCCESS; j++)
        e = ocl.SetKernelArg(kern, i++, extra[j].size, extra[j].val);
    cl_event ev = NULL;
    pthread_mutex_lock(&s->enq_mu);
    cl_event u = e == CL_SUCCESS ? inject(d) : NULL;
    if (e == CL_SUCCESS)
        e = ocl.EnqueueNDRangeKernel(s->q, kern, dims, NULL, gws, NULL, u ? 1 : 0, u ? &u : NULL,
                                     &ev);
    if (e == CL_SUCCESS) ocl_stream_track(s, ev);
    fail_after(u);
    pthread_mutex_unlock(&s->enq_mu);
    if (e != CL_SUCCESS)
        return ocl_err(e, "opencl device %d: launching %s on %s", d->ordinal, hwi_op_name(k->op),
                       hwrt_dtype_name(k->dtype));
    return HWRT_SUCCESS;
}

hwrt_status ocl_kernel_launch(hwrt_bstream *s, const hwrt_kernel *k)
{
    if (k->op == HWRT_K_FILL)
        return fill(s, k);
    ocl_dev *d = s->dev;
    operands x;
    HWI_TRY(resolve_all(d, k, &x));
    int dt, odt, op, nextra;
    cl_int K, N, M;
    cl_float s32;
    arg extra[5];
    size_t gws[2];
    cl_uint dims;
    int kid = choose(k, &dt, &odt, &op, &K, &N, &M, &s32, extra, &nextra, gws, &dims);
    cl_ulong KK = (cl_ulong)k->k, NN = (cl_ulong)k->nn;
    if (kid == OCL_K_SUM) {
        extra[0] = (arg){sizeof dt, &dt};
        extra[1] = (arg){sizeof odt, &odt};
        extra[2] = (arg){sizeof KK, &KK};
        extra[3] = (arg){sizeof NN, &NN};
        nextra = 4;
    }
    pthread_mutex_lock(&d->prog_mu);      /* kernel arguments are per cl_kernel object */
    hwrt_status st = ocl_program_get(d);
    if (st == HWRT_SUCCESS && !d->kernels[kid])
        st = hwi_err(HWRT_ERROR_NOT_SUPPORTED, "opencl device %d has no double precision "
                     "(cl_khr_fp64): %s on %s needs it (hwrt computes that path in double, as "
                     "the sim does)", d->ordinal, hwi_op_name(k->op), hwrt_dtype_name(k->dtype));
    if (st == HWRT_SUCCESS)
        st = enqueue(s, k, kid, &x, extra, nextra, gws, dims);
    pthread_mutex_unlock(&d->prog_mu);
    return st;
}
