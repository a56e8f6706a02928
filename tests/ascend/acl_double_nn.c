/* The TEST DOUBLE's aclnn part (libnnopbase's descriptors and the 8 ops hwrt uses), for
 * tests/ascend/ascend_ops.c, with HWRT_ASCEND_NNOPBASE_LIBRARY and
 * HWRT_ASCEND_OPAPI_LIBRARY naming the double. Float32 (and a float32 -> int32 cast) on
 * the fake device's host memory, computed plainly, with CANN's rules enforced:
 *   - descriptors: contiguous element strides, ACL_FORMAT_ND, storage dims = view dims;
 *     every descriptor destroyed (acl_double_live() counts what is not);
 *   - the two phases: each executor run once, on a stream of the current context, with a
 *     workspace of at least the size phase 1 asked for, inside an aclrtMalloc allocation;
 *   - aclnnMatmul's cubeMathType must be KEEP_DTYPE for float32 on the Ascend910B3 the
 *     double's SoC name says; ReduceSum's dtype must be out's; Add's alpha 1.
 * Only the dtypes above: any other is ACLNN_ERR_PARAM_INVALID, as a SoC lacking a dtype
 * answers. Not aclnn: nothing here says how CANN's kernels behave. */
#include "backends/ascend/ascend_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int acl_double_in_device_memory(const void *p, size_t n);   /* acl_double_device.c */
int acl_double_stream_ok(void *s);

struct aclTensor { int64_t dims[8]; uint64_t rank; int dt; void *data; int64_t n; };
struct aclScalar { int dt; double v; };
struct aclIntArray { int64_t v[8]; uint64_t n; };
struct aclOpExecutor {
    int op;                         /* 0 add, 1 mul, 2 muls, 3 relu, 4 cast, 5 matmul, 6 sum, 7 fill */
    const hacl_tensor *a, *b;
    hacl_tensor *out;
    double s;
    int64_t dim;
    uint64_t ws;
};

static _Atomic int live, executors, runs;
int acl_double_live(void) { return live + executors; }
/* acl_double_fail_create(n): the nth descriptor creation from now (aclCreateTensor,
 * aclCreateScalar, aclCreateIntArray, counted together) returns NULL, as aclnn does when
 * it cannot allocate; 0 fails none. acl_double_phase1s() counts the GetWorkspaceSize calls. */
static _Atomic int create_countdown, phase1s;
void acl_double_fail_create(int nth) { create_countdown = nth; }
int acl_double_phase1s(void) { return phase1s; }
static int create_fails(void)
{
    int c = create_countdown;
    if (c <= 0) return 0;
    create_countdown = c - 1;
    return c == 1;
}
int acl_double_runs(void) { return runs; }
static _Atomic uint64_t ws_ask = 0;
void acl_double_workspace(uint64_t bytes) { ws_ask = bytes; }   /* phase 1's answer */

static void die(const char *what)
{
    fprintf(stderr, "hwrt's test double of aclnn: %s\n", what);
    abort();
}

hacl_tensor *aclCreateTensor(const int64_t *dims, uint64_t rank, hacl_data_type dt,
                             const int64_t *strides, int64_t off, hacl_format fmt,
                             const int64_t *sdims, uint64_t srank, void *data)
{
    if (rank < 1 || rank > 8 || fmt != HACL_FORMAT_ND || off || srank != rank)
        die("aclCreateTensor: not a contiguous ND tensor");
    if (create_fails()) return NULL;
    hacl_tensor *t = calloc(1, sizeof *t);
    int64_t st = 1;
    for (int i = (int)rank - 1; i >= 0; i--) {
        if (strides[i] != st || sdims[i] != dims[i]) die("aclCreateTensor: strides/storage");
        st *= dims[i];
        t->dims[i] = dims[i];
    }
    t->rank = rank, t->dt = dt, t->data = data, t->n = st;
    live++;
    return t;
}
hacl_nn_status aclDestroyTensor(const hacl_tensor *t) { live--; free((void *)t); return 0; }
hacl_scalar *aclCreateScalar(void *v, hacl_data_type dt)
{
    if (create_fails()) return NULL;
    hacl_scalar *s = calloc(1, sizeof *s);
    s->dt = dt;
    s->v = dt == HACL_FLOAT ? *(float *)v : dt == HACL_DOUBLE ? *(double *)v
         : dt == HACL_BOOL ? *(bool *)v : (double)*(int64_t *)v;
    live++;
    return s;
}
hacl_nn_status aclDestroyScalar(const hacl_scalar *s) { live--; free((void *)s); return 0; }
hacl_int_array *aclCreateIntArray(const int64_t *v, uint64_t n)
{
    if (create_fails()) return NULL;
    hacl_int_array *a = calloc(1, sizeof *a);
    memcpy(a->v, v, n * sizeof *v);
    a->n = n;
    live++;
    return a;
}
hacl_nn_status aclDestroyIntArray(const hacl_int_array *a) { live--; free((void *)a); return 0; }

static int f32(const hacl_tensor *t) { return t && t->dt == HACL_FLOAT; }

static hacl_nn_status phase1(int op, const hacl_tensor *a, const hacl_tensor *b, hacl_tensor *o,
                             double s, int64_t dim, uint64_t *ws, hacl_executor **ex)
{
    hacl_executor *e = calloc(1, sizeof *e);
    e->op = op, e->a = a, e->b = b, e->out = o, e->s = s, e->dim = dim, e->ws = ws_ask;
    *ws = e->ws;
    *ex = e;
    executors++;
    phase1s++;
    return HACL_NN_SUCCESS;
}

hacl_nn_status aclnnAddGetWorkspaceSize(const hacl_tensor *a, const hacl_tensor *b,
                                        const hacl_scalar *alpha, hacl_tensor *o, uint64_t *ws,
                                        hacl_executor **ex)
{
    if (!f32(a) || !f32(b) || !f32(o)) return HACL_NN_ERR_PARAM_INVALID;
    if (!alpha || alpha->v != 1.0) die("aclnnAdd: alpha is not 1");
    return phase1(0, a, b, o, 1, 0, ws, ex);
}
hacl_nn_status aclnnMulGetWorkspaceSize(const hacl_tensor *a, const hacl_tensor *b,
                                        hacl_tensor *o, uint64_t *ws, hacl_executor **ex)
{
    if (!f32(a) || !f32(b) || !f32(o)) return HACL_NN_ERR_PARAM_INVALID;
    return phase1(1, a, b, o, 0, 0, ws, ex);
}
hacl_nn_status aclnnMulsGetWorkspaceSize(const hacl_tensor *a, const hacl_scalar *s,
                                         hacl_tensor *o, uint64_t *ws, hacl_executor **ex)
{
    if (!f32(a) || !f32(o)) return HACL_NN_ERR_PARAM_INVALID;
    return phase1(2, a, NULL, o, s->v, 0, ws, ex);
}
hacl_nn_status aclnnReluGetWorkspaceSize(const hacl_tensor *a, const hacl_tensor *o,
                                         uint64_t *ws, hacl_executor **ex)
{
    if (!f32(a) || !f32(o)) return HACL_NN_ERR_PARAM_INVALID;
    return phase1(3, a, NULL, (hacl_tensor *)o, 0, 0, ws, ex);
}
hacl_nn_status aclnnCastGetWorkspaceSize(const hacl_tensor *a, hacl_data_type dt, hacl_tensor *o,
                                         uint64_t *ws, hacl_executor **ex)
{
    if (!f32(a) || dt != HACL_INT32 || o->dt != dt) return HACL_NN_ERR_PARAM_INVALID;
    return phase1(4, a, NULL, o, 0, 0, ws, ex);
}
hacl_nn_status aclnnMatmulGetWorkspaceSize(const hacl_tensor *a, const hacl_tensor *b,
                                           hacl_tensor *o, int8_t cube, uint64_t *ws,
                                           hacl_executor **ex)
{
    if (!f32(a) || !f32(b) || !f32(o) || a->rank != 2 || b->rank != 2 ||
        a->dims[1] != b->dims[0] || o->dims[0] != a->dims[0] || o->dims[1] != b->dims[1])
        return HACL_NN_ERR_PARAM_INVALID;
    if (cube != HACL_CUBE_KEEP_DTYPE) die("aclnnMatmul: float32 on Ascend910B3 needs KEEP_DTYPE");
    return phase1(5, a, b, o, 0, 0, ws, ex);
}
hacl_nn_status aclnnReduceSumGetWorkspaceSize(const hacl_tensor *a, const hacl_int_array *dims,
                                              bool keep, hacl_data_type dt, hacl_tensor *o,
                                              uint64_t *ws, hacl_executor **ex)
{
    if (!f32(a) || !f32(o) || dt != o->dt) return HACL_NN_ERR_PARAM_INVALID;
    if (keep || dims->n != 1 || a->rank != 3 || dims->v[0] != 1 || o->rank != 2 ||
        o->dims[0] != a->dims[0] || o->dims[1] != a->dims[2])
        die("aclnnReduceSum: not [m, k, nn] over dimension 1 into [m, nn]");
    return phase1(6, a, NULL, o, 0, 1, ws, ex);
}
hacl_nn_status aclnnInplaceFillScalarGetWorkspaceSize(hacl_tensor *o, const hacl_scalar *v,
                                                      uint64_t *ws, hacl_executor **ex)
{
    if (!f32(o)) return HACL_NN_ERR_PARAM_INVALID;
    return phase1(7, NULL, NULL, o, v->v, 0, ws, ex);
}

static hacl_nn_status run(void *ws, uint64_t wsn, hacl_executor *e, hacl_stream s, int op)
{
    if (!e || e->op != op) die("phase 2 with another op's executor (or one already run)");
    if (wsn < e->ws || (e->ws && (!ws || !acl_double_in_device_memory(ws, e->ws))))
        die("phase 2 without the workspace phase 1 asked for");
    if (!acl_double_stream_ok(s)) die("phase 2 on a stream of another context");
    const float *a = e->a ? e->a->data : NULL, *b = e->b ? e->b->data : NULL;
    float *o = e->out->data;
    const int64_t n = e->out->n;
    switch (op) {
    case 0: for (int64_t i = 0; i < n; i++) o[i] = a[i] + (float)e->s * b[i]; break;
    case 1: for (int64_t i = 0; i < n; i++) o[i] = a[i] * b[i]; break;
    case 2: for (int64_t i = 0; i < n; i++) o[i] = (float)e->s * a[i]; break;
    case 3: for (int64_t i = 0; i < n; i++) o[i] = a[i] > 0 ? a[i] : 0; break;
    case 4: for (int64_t i = 0; i < n; i++) ((int32_t *)e->out->data)[i] = (int32_t)a[i]; break;
    case 5: {
        int64_t m = e->a->dims[0], k = e->a->dims[1], nn = e->b->dims[1];
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                float acc = 0;
                for (int64_t x = 0; x < k; x++) acc += a[i * k + x] * b[x * nn + j];
                o[i * nn + j] = acc;
            }
        break;
    }
    case 6: {
        int64_t m = e->a->dims[0], k = e->a->dims[1], nn = e->a->dims[2];
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                float acc = 0;
                for (int64_t x = 0; x < k; x++) acc += a[(i * k + x) * nn + j];
                o[i * nn + j] = acc;
            }
        break;
    }
    default: for (int64_t i = 0; i < n; i++) o[i] = (float)e->s; break;
    }
    e->op = -1;
    free(e);
    executors--;
    runs++;
    return HACL_NN_SUCCESS;
}

#define RUN(name, op)                                                                      \
    hacl_nn_status name(void *ws, uint64_t n, hacl_executor *e, hacl_stream s)             \
    {                                                                                      \
        return run(ws, n, e, s, op);                                                       \
    }
RUN(aclnnAdd, 0) RUN(aclnnMul, 1) RUN(aclnnMuls, 2) RUN(aclnnRelu, 3) RUN(aclnnCast, 4)
RUN(aclnnMatmul, 5) RUN(aclnnReduceSum, 6) RUN(aclnnInplaceFillScalar, 7)
