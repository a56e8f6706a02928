/* The OpenCL backend's error translation (src/backends/opencl/ocl_api.c), white-box: every
 * CL error code the backend can meet is named by its own identifier in error sentences
 * (ocl_error_name), and each maps to the hwrt_status its meaning calls for (ocl_err):
 * allocation failures are OUT_OF_MEMORY with the "free device memory" hint, a missing
 * device or compiler UNAVAILABLE, a failed dependency DEVICE_FAULT, CL_INVALID_* (which
 * only a hwrt bug can cause: the core validates user arguments) INTERNAL with "bug" in
 * the sentence. Linked against libhwrt.a, where the backend's internal functions are. */
#include "harness.h"
#include "backends/opencl/ocl.h"

#include <stdio.h>
#include <string.h>

#define CODE(c) {c, #c}
static const struct { cl_int code; const char *name; } codes[] = {
    CODE(CL_SUCCESS), CODE(CL_DEVICE_NOT_FOUND), CODE(CL_DEVICE_NOT_AVAILABLE),
    CODE(CL_COMPILER_NOT_AVAILABLE), CODE(CL_MEM_OBJECT_ALLOCATION_FAILURE),
    CODE(CL_OUT_OF_RESOURCES), CODE(CL_OUT_OF_HOST_MEMORY), CODE(CL_PROFILING_INFO_NOT_AVAILABLE),
    CODE(CL_MEM_COPY_OVERLAP), CODE(CL_IMAGE_FORMAT_MISMATCH), CODE(CL_IMAGE_FORMAT_NOT_SUPPORTED),
    CODE(CL_BUILD_PROGRAM_FAILURE), CODE(CL_MAP_FAILURE), CODE(CL_MISALIGNED_SUB_BUFFER_OFFSET),
    CODE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), CODE(CL_COMPILE_PROGRAM_FAILURE),
    CODE(CL_LINKER_NOT_AVAILABLE), CODE(CL_LINK_PROGRAM_FAILURE), CODE(CL_DEVICE_PARTITION_FAILED),
    CODE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE), CODE(CL_INVALID_VALUE), CODE(CL_INVALID_DEVICE_TYPE),
    CODE(CL_INVALID_PLATFORM), CODE(CL_INVALID_DEVICE), CODE(CL_INVALID_CONTEXT),
    CODE(CL_INVALID_QUEUE_PROPERTIES), CODE(CL_INVALID_COMMAND_QUEUE), CODE(CL_INVALID_HOST_PTR),
    CODE(CL_INVALID_MEM_OBJECT), CODE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
    CODE(CL_INVALID_IMAGE_SIZE), CODE(CL_INVALID_SAMPLER), CODE(CL_INVALID_BINARY),
    CODE(CL_INVALID_BUILD_OPTIONS), CODE(CL_INVALID_PROGRAM), CODE(CL_INVALID_PROGRAM_EXECUTABLE),
    CODE(CL_INVALID_KERNEL_NAME), CODE(CL_INVALID_KERNEL_DEFINITION), CODE(CL_INVALID_KERNEL),
    CODE(CL_INVALID_ARG_INDEX), CODE(CL_INVALID_ARG_VALUE), CODE(CL_INVALID_ARG_SIZE),
    CODE(CL_INVALID_KERNEL_ARGS), CODE(CL_INVALID_WORK_DIMENSION), CODE(CL_INVALID_WORK_GROUP_SIZE),
    CODE(CL_INVALID_WORK_ITEM_SIZE), CODE(CL_INVALID_GLOBAL_OFFSET), CODE(CL_INVALID_EVENT_WAIT_LIST),
    CODE(CL_INVALID_EVENT), CODE(CL_INVALID_OPERATION), CODE(CL_INVALID_GL_OBJECT),
    CODE(CL_INVALID_BUFFER_SIZE), CODE(CL_INVALID_MIP_LEVEL), CODE(CL_INVALID_GLOBAL_WORK_SIZE),
    CODE(CL_INVALID_PROPERTY), CODE(CL_INVALID_IMAGE_DESCRIPTOR), CODE(CL_INVALID_COMPILER_OPTIONS),
    CODE(CL_INVALID_LINKER_OPTIONS), CODE(CL_INVALID_DEVICE_PARTITION_COUNT),
    CODE(CL_PLATFORM_NOT_FOUND_KHR),
};

int main(void)
{
    char want[128];

    TEST_CASE("every CL code is named by its identifier");
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *got = ocl_error_name(codes[i].code);
        if (strcmp(got, codes[i].name))
            fprintf(stderr, "code %d named %s, want %s\n", codes[i].code, got, codes[i].name);
        EXPECT(strcmp(got, codes[i].name) == 0);
    }
    EXPECT(strcmp(ocl_error_name(-9999), "an unknown OpenCL error") == 0);
    EXPECT(strcmp(ocl_error_name(7777), "an unknown OpenCL error") == 0);

    TEST_CASE("CL errors map to the status their meaning calls for");
    static const struct { cl_int code; hwrt_status st; const char *hint; } map[] = {
        {CL_OUT_OF_HOST_MEMORY, HWRT_ERROR_HOST_OUT_OF_MEMORY, ""},
        {CL_MEM_OBJECT_ALLOCATION_FAILURE, HWRT_ERROR_OUT_OF_MEMORY, "free device memory"},
        {CL_OUT_OF_RESOURCES, HWRT_ERROR_OUT_OF_MEMORY, "free device memory"},
        {CL_INVALID_BUFFER_SIZE, HWRT_ERROR_OUT_OF_MEMORY, "free device memory"},
        {CL_DEVICE_NOT_FOUND, HWRT_ERROR_UNAVAILABLE, ""},
        {CL_DEVICE_NOT_AVAILABLE, HWRT_ERROR_UNAVAILABLE, ""},
        {CL_COMPILER_NOT_AVAILABLE, HWRT_ERROR_UNAVAILABLE, ""},
        {CL_PLATFORM_NOT_FOUND_KHR, HWRT_ERROR_UNAVAILABLE, ""},
        {CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, HWRT_ERROR_DEVICE_FAULT, ""},
        {CL_PROFILING_INFO_NOT_AVAILABLE, HWRT_ERROR_NOT_SUPPORTED, ""},
        {CL_INVALID_KERNEL_ARGS, HWRT_ERROR_INTERNAL, "a bug in hwrt's OpenCL backend"},
        {CL_INVALID_VALUE, HWRT_ERROR_INTERNAL, "a bug in hwrt's OpenCL backend"},
        {CL_BUILD_PROGRAM_FAILURE, HWRT_ERROR_INTERNAL, "a bug in hwrt's OpenCL backend"},
        {5, HWRT_ERROR_DEVICE_FAULT, ""},      /* a positive, vendor-specific status */
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        hwrt_status st = ocl_err(map[i].code, "clEnqueueThing on %s", "queue 3");
        const char *e = hwrt_last_error();
        snprintf(want, sizeof want, "clEnqueueThing on queue 3: OpenCL error %s (%d)",
                 ocl_error_name(map[i].code), (int)map[i].code);
        if (st != map[i].st || !strstr(e, want) || !strstr(e, map[i].hint))
            fprintf(stderr, "code %d -> %s \"%s\"\n", map[i].code, hwrt_status_name(st), e);
        EXPECT(st == map[i].st);
        EXPECT(strstr(e, want) != NULL);
        EXPECT(strstr(e, map[i].hint) != NULL);
        /* the hints name what they mean only where they apply */
        if (map[i].st != HWRT_ERROR_OUT_OF_MEMORY) EXPECT(!strstr(e, "free device memory"));
        if (map[i].st != HWRT_ERROR_INTERNAL) EXPECT(!strstr(e, "bug"));
    }
    EXPECT(ocl_err(CL_SUCCESS, "nothing") == HWRT_SUCCESS);
    return test_report();
}
