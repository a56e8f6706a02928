/* The op front-end: validate operands (live handles, one device, matching shapes, the
 * dtypes the op table allows: src/base/op_table.h), build the kernel descriptor,
 * dispatch it, and note which streams wrote and read each tensor so host reads are
 * ordered after them. */
#include "tensor.h"
#include "../base/dtype.h"
#include "../base/op_table.h"
#include "../base/status.h"
#include "../offload/offload.h"

#include <stdio.h>
#include <string.h>

static void shape_str(const hwi_tensor *t, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "%s[", hwrt_dtype_name(t->dtype));
    for (int i = 0; i < t->ndim && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? "," : "", (long long)t->shape[i]);
    if (o < len) snprintf(buf + o, len - o, "]");
}

static int same_shape(const hwi_tensor *a, const hwi_tensor *b)
{
    return a->ndim == b->ndim && !memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]);
}

static hwrt_status mismatch(const char *api, const char *what, const hwi_tensor *a,
                            const hwi_tensor *b)
{
    char sa[96], sb[96];
    shape_str(a, sa, sizeof sa);
    shape_str(b, sb, sizeof sb);
    return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: %s: %s vs %s (no broadcasting; make them "
                   "equal)", api, what, sa, sb);
}

typedef struct {
    const char *api;
    hwrt_kernel_op op;
    hwi_stream *s;
    hwi_tensor *out, *a, *b;
} op_ctx;

/* An op holds its operands and stream pinned until it returns (runtime/handle.h). */
static void op_end(op_ctx *c)
{
    hwi_tensor_put(c->out);
    hwi_tensor_put(c->a);
    hwi_tensor_put(c->b);
    hwi_stream_put(c->s);
}
#define OP_CTX(c) op_ctx c __attribute__((cleanup(op_end))) = {0}

/* Every operand's dtype must have kernels (base/dtype.h); inputs are named first. */
static hwrt_status need_kernels(const op_ctx *c)
{
    const hwi_tensor *all[3] = {c->out, c->a, c->b};
    static const char *const role[3] = {"the output", "input a", "input b"};
    for (int j = 1; j <= 3; j++) {
        int i = j % 3;
        if (all[i] && !hwi_dtype_has_kernel(all[i]->dtype))
            return hwi_err(HWRT_ERROR_NOT_SUPPORTED, "%s: %s has dtype %s, which no backend has "
                           "a kernel for (tensors of it are created, copied and shared through "
                           "DLPack only); ops run on %s", c->api, role[i],
                           hwrt_dtype_name(all[i]->dtype), HWI_KERNEL_DTYPES);
    }
    return HWRT_SUCCESS;
}

/* Resolve op's handles (the table's arity of them) and the stream; every tensor must
 * live on the stream's device and have a dtype with kernels, except for a cast to the
 * same dtype (a byte copy). */
static hwrt_status begin(op_ctx *c, const char *api, hwrt_kernel_op op, hwrt_tensor out,
                         hwrt_tensor a, hwrt_tensor b, hwrt_stream sh)
{
    int nin = hwi_op_info_of(op)->arity;
    c->api = api;
    c->op = op;
    HWI_TRY(hwi_tensor_resolve(out, &c->out));
    if (nin >= 1) HWI_TRY(hwi_tensor_resolve(a, &c->a));
    if (nin >= 2) HWI_TRY(hwi_tensor_resolve(b, &c->b));
    HWI_TRY(hwi_stream_resolve_on(sh, c->out->device, &c->s));
    hwi_tensor *all[3] = {c->out, c->a, c->b};
    if (!(op == HWRT_K_CAST && c->a && c->a->dtype == c->out->dtype)) HWI_TRY(need_kernels(c));
    for (int i = 0; i < 3; i++)
        if (all[i] && all[i]->device != c->s->device)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: %s is on device %d but the stream is "
                           "on device %d; move the tensor or use a stream of device %d", api,
                           i == 0 ? "the output" : i == 1 ? "input a" : "input b", all[i]->device,
                           c->s->device, all[i]->device);
    /* offloaded operands come back first, stream-ordered */
    int writes[3] = {1, 0, 0};
    return hwi_offload_ensure(all, writes, 3, c->s);
}

/* Submit w and note the stream's use of the operands. */
static hwrt_status submit(op_ctx *c, hwi_work *w)
{
    if (c->out->nbytes == 0)
        return HWRT_SUCCESS;
    HWI_TRY(hwi_dispatch(w));
    hwi_tensor *all[3] = {c->out, c->a, c->b};
    hwi_offload_after_use(all, 3, c->s);
    if (c->a) hwi_tensor_note_use(c->a, c->s, 0);
    if (c->b) hwi_tensor_note_use(c->b, c->s, 0);
    hwi_tensor_note_use(c->out, c->s, 1);
    return HWRT_SUCCESS;
}

static hwrt_status launch(op_ctx *c, hwrt_kernel *k)
{
    hwi_work w = {.kind = HWI_WORK_KERNEL, .stream = c->s, .name = hwi_op_name(k->op)};
    w.u.kernel = *k;
    return submit(c, &w);
}

/* t's dtype must be one the op table allows for the op. */
static hwrt_status check_dtype(op_ctx *c, hwi_tensor *t)
{
    if (hwi_op_allows(c->op, t->dtype))
        return HWRT_SUCCESS;
    char allowed[256];
    hwi_op_dtypes_str(c->op, allowed, sizeof allowed);
    return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "%s: dtype %s is not supported by %s; use %s",
                   c->api, hwrt_dtype_name(t->dtype), hwi_op_name(c->op), allowed);
}

static hwrt_status unary_like(op_ctx *c, hwrt_kernel *k)
{
    if (c->a->dtype != c->out->dtype)
        return mismatch(c->api, "dtypes differ", c->a, c->out);
    if (!same_shape(c->a, c->out))
        return mismatch(c->api, "shapes differ", c->a, c->out);
    HWI_TRY(check_dtype(c, c->a));
    k->dtype = k->out_dtype = c->a->dtype;
    k->out = c->out->data;
    k->a = c->a->data;
    k->n = c->out->numel;
    return HWRT_SUCCESS;
}

hwrt_status hwrt_op_fill(hwrt_tensor out, double value, hwrt_stream s)
{
    OP_CTX(c);
    HWI_TRY(begin(&c, "hwrt_op_fill", HWRT_K_FILL, out, NULL, NULL, s));
    HWI_TRY(check_dtype(&c, c.out));
    hwrt_kernel k = {.op = HWRT_K_FILL, .dtype = c.out->dtype, .out_dtype = c.out->dtype,
                     .out = c.out->data, .n = c.out->numel, .scalar = value};
    return launch(&c, &k);
}

static hwrt_status binary(const char *api, hwrt_kernel_op op, hwrt_tensor out, hwrt_tensor a,
                          hwrt_tensor b, hwrt_stream s)
{
    OP_CTX(c);
    HWI_TRY(begin(&c, api, op, out, a, b, s));
    if (c.a->dtype != c.b->dtype) return mismatch(api, "input dtypes differ", c.a, c.b);
    if (!same_shape(c.a, c.b)) return mismatch(api, "input shapes differ", c.a, c.b);
    hwrt_kernel k = {.op = op};
    HWI_TRY(unary_like(&c, &k));
    k.b = c.b->data;
    return launch(&c, &k);
}

hwrt_status hwrt_op_add(hwrt_tensor out, hwrt_tensor a, hwrt_tensor b, hwrt_stream s)
{
    return binary("hwrt_op_add", HWRT_K_ADD, out, a, b, s);
}

hwrt_status hwrt_op_mul(hwrt_tensor out, hwrt_tensor a, hwrt_tensor b, hwrt_stream s)
{
    return binary("hwrt_op_mul", HWRT_K_MUL, out, a, b, s);
}

hwrt_status hwrt_op_scale(hwrt_tensor out, hwrt_tensor a, double alpha, hwrt_stream s)
{
    OP_CTX(c);
    HWI_TRY(begin(&c, "hwrt_op_scale", HWRT_K_SCALE, out, a, NULL, s));
    hwrt_kernel k = {.op = HWRT_K_SCALE, .scalar = alpha};
    HWI_TRY(unary_like(&c, &k));
    return launch(&c, &k);
}

hwrt_status hwrt_op_relu(hwrt_tensor out, hwrt_tensor a, hwrt_stream s)
{
    OP_CTX(c);
    HWI_TRY(begin(&c, "hwrt_op_relu", HWRT_K_RELU, out, a, NULL, s));
    hwrt_kernel k = {.op = HWRT_K_RELU};
    HWI_TRY(unary_like(&c, &k));
    return launch(&c, &k);
}

hwrt_status hwrt_op_cast(hwrt_tensor out, hwrt_tensor a, hwrt_stream s)
{
    OP_CTX(c);
    HWI_TRY(begin(&c, "hwrt_op_cast", HWRT_K_CAST, out, a, NULL, s));
    if (!same_shape(c.a, c.out)) return mismatch(c.api, "shapes differ", c.a, c.out);
    if (c.a->dtype == c.out->dtype) {    /* a byte-exact device copy, for every dtype */
        if (c.a->data == c.out->data) return HWRT_SUCCESS;
        hwi_work w = {.kind = HWI_WORK_COPY, .stream = c.s, .name = "MemcpyDtoD"};
        w.u.copy.dst = c.out->data;
        w.u.copy.src = c.a->data;
        w.u.copy.bytes = c.out->nbytes;
        w.u.copy.kind = HWRT_MEMCPY_DEVICE_TO_DEVICE;
        w.u.copy.pinned = 1;
        return submit(&c, &w);
    }
    HWI_TRY(check_dtype(&c, c.a));
    if (c.out->nbytes && c.a->data == c.out->data)      /* empty: no memory, no alias */
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_op_cast: in-place cast between dtypes "
                       "of different sizes is not allowed; use a separate output tensor");
    hwrt_kernel k = {.op = HWRT_K_CAST, .dtype = c.a->dtype, .out_dtype = c.out->dtype,
                     .out = c.out->data, .a = c.a->data, .n = c.a->numel};
    return launch(&c, &k);
}

hwrt_status hwrt_op_matmul(hwrt_tensor out, hwrt_tensor a, hwrt_tensor b, hwrt_stream s)
{
    OP_CTX(c);
    HWI_TRY(begin(&c, "hwrt_op_matmul", HWRT_K_MATMUL, out, a, b, s));
    HWI_TRY(check_dtype(&c, c.a));
    if (c.a->dtype != c.b->dtype || c.a->dtype != c.out->dtype)
        return mismatch(c.api, "dtypes differ", c.a->dtype != c.b->dtype ? c.b : c.out, c.a);
    if (c.a->ndim != 2 || c.b->ndim != 2 || c.out->ndim != 2)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_op_matmul: a, b and out must be 2-D "
                       "(got %d-D, %d-D, %d-D)", c.a->ndim, c.b->ndim, c.out->ndim);
    if (c.a->shape[1] != c.b->shape[0])
        return mismatch(c.api, "inner dimensions differ (a is [M,K], b must be [K,N])", c.a, c.b);
    if (c.out->shape[0] != c.a->shape[0] || c.out->shape[1] != c.b->shape[1])
        return mismatch(c.api, "out must be [M,N]", c.out, c.a);
    if (c.a->shape[0] > INT32_MAX || c.a->shape[1] > INT32_MAX || c.b->shape[1] > INT32_MAX)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_op_matmul: dimensions above 2^31-1 are "
                       "not supported by BLAS");
    /* empty tensors have no memory (data NULL): they alias nothing */
    if (c.out->nbytes && (c.out->data == c.a->data || c.out->data == c.b->data))
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_op_matmul: out must not alias a or b");
    hwrt_kernel k = {.op = HWRT_K_MATMUL, .dtype = c.a->dtype, .out_dtype = c.a->dtype,
                     .out = c.out->data, .a = c.a->data, .b = c.b->data, .m = c.a->shape[0],
                     .k = c.a->shape[1], .nn = c.b->shape[1]};
    if (k.k == 0 && c.out->nbytes) {     /* empty inner dimension: the product is zero */
        k.op = HWRT_K_FILL;
        k.n = c.out->numel;
        k.scalar = 0;
    }
    return launch(&c, &k);
}

hwrt_status hwrt_op_sum(hwrt_tensor out, hwrt_tensor a, int axis, hwrt_stream s)
{
    OP_CTX(c);
    HWI_TRY(begin(&c, "hwrt_op_sum", HWRT_K_SUM, out, a, NULL, s));
    HWI_TRY(check_dtype(&c, c.a));
    hwrt_dtype odt = c.a->dtype == HWRT_BOOL ? HWRT_INT64 : c.a->dtype;
    if (c.out->dtype != odt)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_op_sum: out must have dtype %s for a "
                       "%s input (got %s)", hwrt_dtype_name(odt), hwrt_dtype_name(c.a->dtype),
                       hwrt_dtype_name(c.out->dtype));
    hwrt_kernel k = {.op = HWRT_K_SUM, .dtype = c.a->dtype, .out_dtype = odt, .out = c.out->data,
                     .a = c.a->data};
    if (axis == -1) {
        if (c.out->numel != 1)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_op_sum: axis -1 sums everything: out "
                           "must have exactly one element (it has %lld)", (long long)c.out->numel);
        k.m = 1; k.k = c.a->numel; k.nn = 1;
    } else {
        if (axis < 0 || axis >= c.a->ndim)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_op_sum: axis %d is out of range for "
                           "a %d-D input (use 0..%d, or -1 for all)", axis, c.a->ndim, c.a->ndim - 1);
        int64_t outer = 1, inner = 1;
        for (int i = 0; i < axis; i++) outer *= c.a->shape[i];
        for (int i = axis + 1; i < c.a->ndim; i++) inner *= c.a->shape[i];
        int ok = c.out->ndim == c.a->ndim - 1;
        for (int i = 0, j = 0; ok && i < c.a->ndim; i++)
            if (i != axis) ok = c.out->shape[j++] == c.a->shape[i];
        if (!ok) return mismatch(c.api, "out must be the input's shape without the summed axis",
                                 c.out, c.a);
        k.m = outer; k.k = c.a->shape[axis]; k.nn = inner;
    }
    if (c.a->numel == 0 && c.out->nbytes) {   /* sum over nothing is zero */
        k.op = HWRT_K_FILL; k.n = c.out->numel; k.scalar = 0; k.dtype = odt;
    }
    return launch(&c, &k);
}
