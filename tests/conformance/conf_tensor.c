/* Tensors: dtypes, creation, host round trips, accessors, reference counting, and every
 * bad descriptor and handle. */
#include "conf.h"

static const hwrt_dtype all_dtypes[] = {HWRT_FLOAT32, HWRT_FLOAT16, HWRT_BFLOAT16, HWRT_FLOAT64,
                                        HWRT_INT8, HWRT_UINT8, HWRT_INT32, HWRT_INT64, HWRT_BOOL,
                                        HWRT_INT16, HWRT_UINT16, HWRT_UINT32, HWRT_UINT64,
                                        HWRT_COMPLEX64, HWRT_COMPLEX128};

static void dtypes(void)
{
    CASE("dtypes");
    static const struct { hwrt_dtype dt; size_t size; const char *name, *alias; } d[] = {
        {HWRT_FLOAT32, 4, "float32", "fp32"}, {HWRT_FLOAT16, 2, "float16", "half"},
        {HWRT_BFLOAT16, 2, "bfloat16", "bf16"}, {HWRT_FLOAT64, 8, "float64", "double"},
        {HWRT_INT8, 1, "int8", "i8"}, {HWRT_UINT8, 1, "uint8", "u8"},
        {HWRT_INT32, 4, "int32", "int"}, {HWRT_INT64, 8, "int64", "i64"},
        {HWRT_BOOL, 1, "bool", "bool"}, {HWRT_INT16, 2, "int16", "short"},
        {HWRT_UINT16, 2, "uint16", "u16"}, {HWRT_UINT32, 4, "uint32", "uint"},
        {HWRT_UINT64, 8, "uint64", "u64"}, {HWRT_COMPLEX64, 8, "complex64", "cfloat"},
        {HWRT_COMPLEX128, 16, "complex128", "cdouble"}};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        EXPECT(hwrt_dtype_size(d[i].dt) == d[i].size);
        EXPECT(!strcmp(hwrt_dtype_name(d[i].dt), d[i].name));
        hwrt_dtype out = (hwrt_dtype)-1;
        OK(hwrt_dtype_from_name(d[i].name, &out));
        EXPECT(out == d[i].dt);
        out = (hwrt_dtype)-1;
        OK(hwrt_dtype_from_name(d[i].alias, &out));
        EXPECT(out == d[i].dt);
    }
    hwrt_dtype out;
    OK(hwrt_dtype_from_name("FP16", &out));            /* any case */
    EXPECT(out == HWRT_FLOAT16);
    OK(hwrt_dtype_from_name("float", &out));
    EXPECT(out == HWRT_FLOAT32);
    /* the values are ABI: the dtypes added later were appended */
    EXPECT(HWRT_BOOL == 8 && HWRT_INT16 == 9 && HWRT_COMPLEX128 == 14 && HWRT_DTYPE_COUNT == 15);
    EXPECT(hwrt_dtype_size(HWRT_DTYPE_COUNT) == 0 && hwrt_dtype_size((hwrt_dtype)-1) == 0);
    EXPECT(!strcmp(hwrt_dtype_name((hwrt_dtype)42), ""));
    /* the first value past the table too (issue 25, seed 3008, dtype.c: `<` made `<=`
     * read one entry past it) */
    EXPECT(!strcmp(hwrt_dtype_name(HWRT_DTYPE_COUNT), "") &&
           !strcmp(hwrt_dtype_name((hwrt_dtype)-1), ""));
    FAILS(hwrt_dtype_from_name("float8", &out), HWRT_ERROR_INVALID_ARGUMENT, "float8");
    FAILS(hwrt_dtype_from_name(NULL, &out), HWRT_ERROR_INVALID_ARGUMENT, "");
    FAILS(hwrt_dtype_from_name("int8", NULL), HWRT_ERROR_INVALID_ARGUMENT, "");
}

static void creation(void)
{
    CASE("tensor_empty");
    for (size_t i = 0; i < sizeof all_dtypes / sizeof all_dtypes[0]; i++) {
        hwrt_tensor t = NULL;
        int64_t shape[3] = {2, 3, 5};
        OK(hwrt_tensor_empty(&t, all_dtypes[i], 3, shape));
        size_t nb = 0;
        OK(hwrt_tensor_nbytes(t, &nb));
        EXPECT(nb == 30 * hwrt_dtype_size(all_dtypes[i]));
        OK(hwrt_tensor_release(t));
    }
    hwrt_tensor t;
    int64_t n;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 0, NULL));           /* a scalar */
    OK(hwrt_tensor_numel(t, &n));
    EXPECT(n == 1);
    OK(hwrt_tensor_release(t));
    int64_t zero[2] = {3, 0};
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT16, 2, zero));           /* no elements */
    OK(hwrt_tensor_numel(t, &n));
    EXPECT(n == 0);
    OK(hwrt_tensor_copy_to_host(t, NULL, 0));
    OK(hwrt_op_fill(t, 1.0, NULL));
    OK(hwrt_tensor_release(t));
    int64_t eight[8] = {1, 2, 1, 2, 1, 2, 1, 2};
    OK(hwrt_tensor_empty(&t, HWRT_INT8, 8, eight));
    OK(hwrt_tensor_release(t));
    CASE("tensor_empty errors");
    int64_t shape[2] = {2, 3};
    FAILS(hwrt_tensor_empty(NULL, HWRT_FLOAT32, 2, shape), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_tensor_empty(&t, HWRT_DTYPE_COUNT, 2, shape), HWRT_ERROR_INVALID_ARGUMENT, "dtype 15");
    FAILS(hwrt_tensor_empty(&t, (hwrt_dtype)-1, 2, shape), HWRT_ERROR_INVALID_ARGUMENT, "dtype -1");
    FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, -1, shape), HWRT_ERROR_INVALID_ARGUMENT, "ndim -1");
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, 9, nine), HWRT_ERROR_INVALID_ARGUMENT, "ndim 9");
    int64_t neg[2] = {4, -2};
    FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, 2, neg), HWRT_ERROR_INVALID_ARGUMENT, "-2");
    FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, 2, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 16};
    FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, 3, huge), HWRT_ERROR_INVALID_ARGUMENT, "overflow");
    /* exactly 2^60 bytes is a size (the device refuses it); one element more is not
     * (issue 25, seed 3008, tensor.c: `n > 2^60 / size` made `>=` refused the first) */
    int64_t edge[1] = {(int64_t)1 << 58};
    FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, edge), HWRT_ERROR_OUT_OF_MEMORY, "");
    edge[0] += 1;
    FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, edge), HWRT_ERROR_INVALID_ARGUMENT,
          "elements of float32 overflow a size");
    hwrt_device_props p;
    OK(hwrt_get_device_props(0, &p));
    int64_t big[1] = {(int64_t)(p.total_memory / 4) + (1 << 28)};
    FAILS(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, big), HWRT_ERROR_OUT_OF_MEMORY, "device");
}

static void host_roundtrips(void)
{
    CASE("tensor host round trip");
    for (size_t i = 0; i < sizeof all_dtypes / sizeof all_dtypes[0]; i++) {
        hwrt_dtype dt = all_dtypes[i];
        size_t es = hwrt_dtype_size(dt), nb = 6 * 7 * es;
        unsigned char *src = malloc(nb), *dst = malloc(nb);
        for (size_t k = 0; k < nb; k++) src[k] = (unsigned char)(k * 37 + i);
        if (dt == HWRT_BOOL)
            for (size_t k = 0; k < nb; k++) src[k] &= 1;
        int64_t shape[2] = {6, 7};
        hwrt_tensor t;
        OK(hwrt_tensor_from_host(&t, dt, 2, shape, src));
        memset(dst, 0, nb);
        OK(hwrt_tensor_copy_to_host(t, dst, nb));
        EXPECT(memcmp(src, dst, nb) == 0);
        for (size_t k = 0; k < nb; k++) src[k] ^= 1;
        if (dt == HWRT_BOOL)
            for (size_t k = 0; k < nb; k++) src[k] &= 1;
        OK(hwrt_tensor_copy_from_host(t, src, nb));
        OK(hwrt_tensor_copy_to_host(t, dst, nb));
        EXPECT(memcmp(src, dst, nb) == 0);
        OK(hwrt_tensor_release(t));
        free(src);
        free(dst);
    }
    CASE("tensor host errors");
    float buf[6] = {0};
    int64_t shape[2] = {2, 3};
    hwrt_tensor t;
    FAILS(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 2, shape, NULL), HWRT_ERROR_INVALID_ARGUMENT,
          "NULL");
    FAILS(hwrt_tensor_from_host(NULL, HWRT_FLOAT32, 2, shape, buf), HWRT_ERROR_INVALID_ARGUMENT,
          "NULL");
    FAILS(hwrt_tensor_from_host(&t, (hwrt_dtype)77, 2, shape, buf), HWRT_ERROR_INVALID_ARGUMENT,
          "dtype 77");
    OK(hwrt_tensor_from_host(&t, HWRT_FLOAT32, 2, shape, buf));
    FAILS(hwrt_tensor_copy_from_host(t, buf, 20), HWRT_ERROR_INVALID_ARGUMENT, "[2,3]");
    FAILS(hwrt_tensor_copy_to_host(t, buf, 28), HWRT_ERROR_INVALID_ARGUMENT, "24 bytes");
    FAILS(hwrt_tensor_copy_to_host(t, NULL, 24), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_tensor_copy_from_host(t, NULL, 24), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    OK(hwrt_tensor_release(t));
    FAILS(hwrt_tensor_copy_to_host(t, buf, 24), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_copy_from_host(t, buf, 24), HWRT_ERROR_INVALID_HANDLE, "tensor");
}

static void accessors(void)
{
    CASE("tensor accessors");
    int64_t shape[3] = {4, 1, 6};
    hwrt_tensor t;
    OK(hwrt_tensor_empty(&t, HWRT_BFLOAT16, 3, shape));
    hwrt_dtype dt;
    int nd, dev = -1;
    int64_t sh[8] = {0}, n;
    size_t nb;
    void *data = NULL;
    OK(hwrt_tensor_dtype(t, &dt));
    EXPECT(dt == HWRT_BFLOAT16);
    OK(hwrt_tensor_ndim(t, &nd));
    EXPECT(nd == 3);
    OK(hwrt_tensor_shape(t, sh, 8));
    EXPECT(sh[0] == 4 && sh[1] == 1 && sh[2] == 6 && sh[3] == 0);
    int64_t one[1] = {0};
    OK(hwrt_tensor_shape(t, one, 1));                  /* only `cap` extents */
    EXPECT(one[0] == 4);
    OK(hwrt_tensor_shape(t, NULL, 0));
    OK(hwrt_tensor_numel(t, &n));
    EXPECT(n == 24);
    OK(hwrt_tensor_nbytes(t, &nb));
    EXPECT(nb == 48);
    OK(hwrt_tensor_device(t, &dev));
    EXPECT(dev == 0);
    OK(hwrt_tensor_data(t, &data));
    EXPECT(data != NULL);
    /* the data pointer is device memory usable with the copy API */
    unsigned char host[48];
    OK(hwrt_memcpy(host, data, 48, HWRT_MEMCPY_DEVICE_TO_HOST));
    FAILS(hwrt_memcpy(host, (char *)data + 40, 16, HWRT_MEMCPY_DEVICE_TO_HOST),
          HWRT_ERROR_INVALID_ARGUMENT, "past the end");
    FAILS(hwrt_tensor_dtype(t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_tensor_ndim(t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_tensor_shape(t, NULL, 3), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_tensor_numel(t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_tensor_nbytes(t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_tensor_device(t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    FAILS(hwrt_tensor_data(t, NULL), HWRT_ERROR_INVALID_ARGUMENT, "NULL");
    CASE("tensor retain/release");
    OK(hwrt_tensor_retain(t));
    OK(hwrt_tensor_release(t));
    OK(hwrt_tensor_dtype(t, &dt));                     /* one reference left */
    OK(hwrt_tensor_release(t));
    FAILS(hwrt_tensor_release(t), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_retain(t), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_dtype(t, &dt), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_ndim(t, &nd), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_shape(t, sh, 8), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_numel(t, &n), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_nbytes(t, &nb), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_device(t, &dev), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_data(t, &data), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_release(NULL), HWRT_ERROR_INVALID_HANDLE, "tensor");
    hwrt_stream ds;
    OK(hwrt_stream_default(&ds));
    FAILS(hwrt_tensor_numel((hwrt_tensor)(void *)ds, &n), HWRT_ERROR_INVALID_HANDLE, "tensor");
    FAILS(hwrt_tensor_release((hwrt_tensor)(uintptr_t)0x7777), HWRT_ERROR_INVALID_HANDLE, "tensor");
    if (c_ndev >= 2) {
        OK(hwrt_set_device(c_backend, 1));
        OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 3, shape));
        OK(hwrt_set_device(c_backend, 0));
        OK(hwrt_tensor_device(t, &dev));
        EXPECT(dev == 1);
        OK(hwrt_tensor_release(t));
    } else {
        unsupported("tensors on device 1 need 2 devices, backend %s has %d", c_backend, c_ndev);
    }
}

void conf_tensor(void)
{
    dtypes();
    creation();
    host_roundtrips();
    accessors();
}
