/* The op table (src/base/op_table.{h,c}), white-box: lookups by name, the dtype sets and
 * their sentences, and every lookup outside the table answering "none" instead of
 * reading past it. op_table.c is compiled into the test (tests/unit/CMakeLists.txt). */
#include "harness.h"
#include "base/op_table.h"
#include "base/dtype.h"

int main(void)
{
    TEST_CASE("names");
    EXPECT(!strcmp(hwi_op_name(HWRT_K_MATMUL), "MatMul"));
    EXPECT(!strcmp(hwi_op_name(HWRT_K_SUM), "ReduceSum"));
    EXPECT(!strcmp(hwi_op_name(HWRT_K_COUNT), "?"));
    EXPECT(!strcmp(hwi_op_name((hwrt_kernel_op)-1), "?"));
    EXPECT(hwi_op_from_name("MatMul") == HWRT_K_MATMUL);
    EXPECT(hwi_op_from_name("matmul") == HWRT_K_MATMUL);
    EXPECT(hwi_op_from_name("REDUCESUM") == HWRT_K_SUM);
    EXPECT(hwi_op_from_name("sum") == HWRT_K_SUM);
    EXPECT(hwi_op_from_name("Fill") == HWRT_K_FILL);
    EXPECT(hwi_op_from_name("Conv2D") == -1);
    EXPECT(hwi_op_from_name("") == -1);
    EXPECT(hwi_op_from_name(NULL) == -1);
    char buf[256];
    hwi_op_names_str(buf, sizeof buf);
    EXPECT(!strcmp(buf, "Fill, Add, Mul, Scale, Relu, Cast, MatMul or ReduceSum"));
    hwi_op_names_str(buf, 10);                 /* truncated, terminated */
    EXPECT(strlen(buf) == 9);

    TEST_CASE("rows");
    EXPECT(hwi_op_info_of(HWRT_K_FILL)->arity == 0);
    EXPECT(hwi_op_info_of(HWRT_K_ADD)->arity == 2);
    EXPECT(hwi_op_info_of(HWRT_K_RELU)->arity == 1);
    EXPECT(hwi_op_info_of(HWRT_K_CAST)->out_dtype && hwi_op_info_of(HWRT_K_SUM)->out_dtype);
    EXPECT(!hwi_op_info_of(HWRT_K_MATMUL)->out_dtype);
    EXPECT(hwi_op_info_of(HWRT_K_COUNT) == NULL);
    EXPECT(!strcmp(hwi_op_info_of(HWRT_K_SCALE)->py, "scale"));

    TEST_CASE("dtypes");
    EXPECT(hwi_op_allows(HWRT_K_MATMUL, HWRT_BFLOAT16));
    EXPECT(!hwi_op_allows(HWRT_K_MATMUL, HWRT_INT32));
    EXPECT(!hwi_op_allows(HWRT_K_ADD, HWRT_BOOL));
    EXPECT(hwi_op_allows(HWRT_K_ADD, HWRT_UINT8));
    EXPECT(hwi_op_allows(HWRT_K_SUM, HWRT_BOOL));
    EXPECT(hwi_op_allows(HWRT_K_CAST, HWRT_BOOL));
    /* FILL takes every dtype with kernels; those appended after bool have none */
    for (int d = 0; d < HWRT_DTYPE_COUNT; d++)
        EXPECT(hwi_op_allows(HWRT_K_FILL, (hwrt_dtype)d) == hwi_dtype_has_kernel((hwrt_dtype)d));
    EXPECT(!hwi_op_allows(HWRT_K_CAST, HWRT_COMPLEX64));
    EXPECT(!hwi_op_allows(HWRT_K_COUNT, HWRT_FLOAT32));       /* outside the table */
    EXPECT(!hwi_op_allows(HWRT_K_FILL, HWRT_DTYPE_COUNT));    /* not a dtype */
    /* past the 32-bit dtype masks: refused, never a shift by 32 (which x86 takes as 0 and so
     * reads dtype 0's bit; seed 3009's op_table.c:35 `dt < 32u` made `<=`) */
    EXPECT(!hwi_op_allows(HWRT_K_FILL, (hwrt_dtype)32));
    EXPECT(!hwi_op_allows(HWRT_K_FILL, (hwrt_dtype)-1));
    EXPECT(hwi_op_allows(HWRT_K_FILL, (hwrt_dtype)0));        /* dtype 0's bit is set */
    EXPECT(!hwi_op_allows(HWRT_K_FILL, (hwrt_dtype)40));
    hwi_op_dtypes_str(HWRT_K_MATMUL, buf, sizeof buf);
    EXPECT(!strcmp(buf, "float32, float16, bfloat16 or float64"));
    hwi_op_dtypes_str(HWRT_K_RELU, buf, sizeof buf);
    EXPECT(!strcmp(buf, "float32, float16, bfloat16, float64, int8, uint8, int32 or int64"));
    hwi_op_dtypes_str(HWRT_K_COUNT, buf, sizeof buf);
    EXPECT(buf[0] == 0);
    return test_report();
}
