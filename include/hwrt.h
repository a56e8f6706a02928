/*
 * hwrt — a hardware runtime for AI accelerators.
 *
 * This is the one public C API. It is split into one header per section so each
 * can be read on its own; include this file, never the parts.
 *
 *   #include <hwrt.h>           link with -lhwrt (pkg-config hwrt, or CMake hwrt::hwrt)
 *
 * Conventions (see docs/ARCHITECTURE.md):
 *  - names are hwrt_<object>_<verb>; outputs come last;
 *  - every fallible call returns hwrt_status; on failure a full sentence (what failed,
 *    on which device, the numbers, what to do) is readable with hwrt_last_error();
 *  - handles are checked: a NULL, destroyed or foreign handle gives
 *    HWRT_ERROR_INVALID_HANDLE, never a crash;
 *  - the library never aborts and prints nothing unless HWRT_LOG_LEVEL asks for it;
 *  - all functions are thread-safe unless their comment says otherwise.
 *
 * Quick start:
 *   hwrt_set_device("sim", 0);
 *   hwrt_tensor t;  int64_t shape[2] = {8, 128};
 *   hwrt_tensor_from_host(&t, HWRT_FLOAT16, 2, shape, host_data);
 *   hwrt_op_relu(t, t, NULL);
 *   hwrt_tensor_copy_to_host(t, host_out, sizeof host_out);   // ordered, never stale
 *   hwrt_tensor_release(t);
 *   hwrt_shutdown();
 */
#ifndef HWRT_H
#define HWRT_H

#include "hwrt/hwrt_version.h"
#include "hwrt/hwrt_core.h"
#include "hwrt/hwrt_device.h"
#include "hwrt/hwrt_memory.h"
#include "hwrt/hwrt_exec.h"
#include "hwrt/hwrt_tensor.h"
#include "hwrt/hwrt_smi.h"
#include "hwrt/hwrt_offload.h"
#if __has_include("hwrt/hwrt_graph.h")
#include "hwrt/hwrt_graph.h"
#endif
#if __has_include("hwrt/hwrt_dist.h")
#include "hwrt/hwrt_dist.h"
#endif
#if __has_include("hwrt/hwrt_prof.h")
#include "hwrt/hwrt_prof.h"
#endif
#if __has_include("hwrt/hwrt_diag.h")
#include "hwrt/hwrt_diag.h"
#endif

#endif /* HWRT_H */
