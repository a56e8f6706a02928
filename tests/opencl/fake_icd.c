/* A stand-in for the OpenCL ICD loader (libOpenCL.so.1) whose enumeration fails the way a
 * broken installation does, for tests/opencl/loader_faults.c: FAKE_OCL_MODE=
 *   platform-error  clGetPlatformIDs fails with CL_OUT_OF_HOST_MEMORY
 *   no-device       one platform, clGetDeviceIDs says CL_DEVICE_NOT_FOUND
 *   device-error    two platforms, clGetDeviceIDs fails with CL_INVALID_VALUE on both
 * Every other entry point hwrt looks up exists (hwrt checks them all at load) and is never
 * reached: with no device, no context is made. No OpenCL header: only the symbols matter. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;

static const char *mode(void)
{
    const char *m = getenv("FAKE_OCL_MODE");
    return m ? m : "";
}

cl_int clGetPlatformIDs(cl_uint n, void **plats, cl_uint *np);
cl_int clGetPlatformIDs(cl_uint n, void **plats, cl_uint *np)
{
    if (!strcmp(mode(), "platform-error")) return -6;            /* CL_OUT_OF_HOST_MEMORY */
    cl_uint have = !strcmp(mode(), "device-error") ? 2 : 1;
    for (cl_uint i = 0; plats && i < n && i < have; i++) plats[i] = (void *)(uintptr_t)(i + 1);
    if (np) *np = have;
    return 0;
}

cl_int clGetDeviceIDs(void *plat, uint64_t type, cl_uint n, void **devs, cl_uint *nd);
cl_int clGetDeviceIDs(void *plat, uint64_t type, cl_uint n, void **devs, cl_uint *nd)
{
    if (nd) *nd = 0;
    return !strcmp(mode(), "device-error") ? -30 : -1;  /* CL_INVALID_VALUE, CL_DEVICE_NOT_FOUND */
}

#define UNREACHED(name) cl_int name(void); cl_int name(void) { abort(); }
UNREACHED(clGetPlatformInfo) UNREACHED(clGetDeviceInfo) UNREACHED(clCreateContext)
UNREACHED(clReleaseContext) UNREACHED(clCreateCommandQueue) UNREACHED(clReleaseCommandQueue)
UNREACHED(clFlush) UNREACHED(clFinish) UNREACHED(clCreateBuffer) UNREACHED(clReleaseMemObject)
UNREACHED(clEnqueueReadBuffer) UNREACHED(clEnqueueWriteBuffer) UNREACHED(clEnqueueCopyBuffer)
UNREACHED(clEnqueueFillBuffer) UNREACHED(clEnqueueMapBuffer) UNREACHED(clEnqueueUnmapMemObject)
UNREACHED(clCreateProgramWithSource) UNREACHED(clBuildProgram) UNREACHED(clGetProgramBuildInfo)
UNREACHED(clReleaseProgram) UNREACHED(clCreateKernel) UNREACHED(clReleaseKernel)
UNREACHED(clSetKernelArg) UNREACHED(clEnqueueNDRangeKernel) UNREACHED(clEnqueueMarkerWithWaitList)
UNREACHED(clEnqueueBarrierWithWaitList) UNREACHED(clCreateUserEvent) UNREACHED(clSetUserEventStatus)
UNREACHED(clSetEventCallback) UNREACHED(clWaitForEvents) UNREACHED(clGetEventInfo)
UNREACHED(clGetEventProfilingInfo) UNREACHED(clRetainEvent) UNREACHED(clReleaseEvent)
