/* The `hwrt` extension module: hwrt's C API for Python users, under the names the seed
 * (MindSpore on Ascend) uses and MindSpore's real names beside them.
 *
 *   import hwrt as ms;  from hwrt import runtime;  import hwrt.runtime as mrt
 *   from hwrt.communication import init, get_rank, get_group_size
 *
 * Submodules are module objects made here and registered in sys.modules, so they import
 * like files of a package. See docs/python.md. */
#include "hwpy.h"

static PyObject *live_tensors(PyObject *m, PyObject *unused)
{
    return PyLong_FromSsize_t(hwpy_live_tensors);
}

static PyMethodDef top_methods[] = {
    {"from_dlpack", hwpy_from_dlpack, METH_O,
     "from_dlpack($module, obj, /)\n--\n\n"
     "a Tensor from a DLPack capsule or an object with __dlpack__. hwrt's own device "
     "memory is shared without a copy; host (kDLCPU) data is copied onto the current "
     "device."},
    {"_live_tensors", live_tensors, METH_NOARGS, "_live_tensors($module, /)\n--\n\n"
     "Number of live hwrt.Tensor objects (tests)."},
    {NULL}};

static struct PyModuleDef hwrt_def = {
    PyModuleDef_HEAD_INIT, "hwrt",
    "hwrt: a hardware runtime for AI accelerators (device management, memory pool, copies, "
    "streams, offload, ranks, profiling), with the seed's MindSpore-style names.",
    -1, top_methods, NULL, NULL, NULL, NULL,
};

int hwpy_add_functions(PyObject *module, PyMethodDef *defs)
{
    return PyModule_AddFunctions(module, defs);
}

/* A submodule <parent>.<name>, attached to the parent and to sys.modules. Borrowed. */
static PyObject *submodule_of(PyObject *parent, const char *parent_name, const char *name,
                              const char *doc)
{
    char full[96];
    snprintf(full, sizeof full, "%s.%s", parent_name, name);
    PyObject *sub = PyModule_New(full);
    if (!sub) return NULL;
    PyObject *d = PyUnicode_FromString(doc);
    if (d) { PyObject_SetAttrString(sub, "__doc__", d); Py_DECREF(d); }
    PyObject *mods = PyImport_GetModuleDict();
    if (PyDict_SetItemString(mods, full, sub) < 0 || PyModule_AddObject(parent, name, sub) < 0) {
        Py_DECREF(sub);
        return NULL;
    }
    return sub;      /* the parent holds the reference */
}

static PyObject *submodule(PyObject *parent, const char *name, const char *doc)
{
    return submodule_of(parent, "hwrt", name, doc);
}

/* MindSpore's `from mindspore.runtime import *` and `from mindspore.hal import ...`:
 * names copied from hwrt.runtime to the top level and to hwrt.hal. */
static const char *const runtime_exports[] = {
    "launch_blocking", "dispatch_threads_num", "set_cpu_affinity", "set_kernel_launch_group",
    "Stream", "communication_stream", "synchronize", "set_cur_stream", "current_stream",
    "default_stream", "StreamCtx", "set_memory", "memory_stats", "memory_reserved",
    "max_memory_reserved", "empty_cache", "memory_replay", "reset_peak_memory_stats",
    "memory_summary", "memory_allocated", "max_memory_allocated", "reset_max_memory_reserved",
    "reset_max_memory_allocated", "Event", NULL};
static const char *const hal_exports[] = {
    "Event", "Stream", "synchronize", "set_cur_stream", "current_stream", "default_stream",
    "StreamCtx", "memory_stats", "memory_reserved", "max_memory_reserved", "empty_cache",
    "reset_peak_memory_stats", "memory_summary", "memory_allocated", "max_memory_allocated",
    "reset_max_memory_reserved", "reset_max_memory_allocated", NULL};
/* mindspore.ops names hwrt has (MindSpore's ops.mm is matmul) */
static const char *const ops_exports[] = {"add", "mul", "matmul", "relu", "cast", "zeros",
                                          "ones", "full", NULL};
static const char *const common_exports[] = {"Tensor", "dtype", NULL};
static const char *const context_exports[] = {
    "GRAPH_MODE", "PYNATIVE_MODE", "set_context", "get_context", "set_offload_context",
    "get_offload_context", NULL};

static int copy_names(PyObject *from, PyObject *to, const char *const *names, int overwrite)
{
    for (; *names; names++) {
        if (!overwrite && PyObject_HasAttrString(to, *names)) continue;
        PyObject *v = PyObject_GetAttrString(from, *names);
        if (!v || PyObject_SetAttrString(to, *names, v) < 0) { Py_XDECREF(v); return -1; }
        Py_DECREF(v);
    }
    return 0;
}

static int alias(PyObject *from, const char *name, PyObject *to, const char *as)
{
    PyObject *v = PyObject_GetAttrString(from, name);
    int rc = v ? PyObject_SetAttrString(to, as, v) : -1;
    Py_XDECREF(v);
    return rc;
}

PyMODINIT_FUNC PyInit_hwrt(void)
{
    PyObject *m = PyModule_Create(&hwrt_def);
    if (!m) return NULL;
    PyObject *runtime = submodule(m, "runtime", "Devices' memory, streams, events, synchronisation.");
    PyObject *comm = runtime ? submodule(m, "communication", "Ranks of a multi-process job.") : NULL;
    PyObject *prof = comm ? submodule(m, "profiler", "Profiler start/stop (hwrt-prof reads the output).") : NULL;
    PyObject *off = prof ? submodule(m, "offload", "Residency control behind memory_offload.") : NULL;
    PyObject *hal = off ? submodule(m, "hal", "MindSpore's hal: devices, streams, events, memory.") : NULL;
    PyObject *ctx = hal ? submodule(m, "context", "MindSpore's context: set_context, get_context, "
                                    "set_offload_context, get_offload_context.") : NULL;
    PyObject *devctx = ctx ? submodule(m, "device_context", "MindSpore's device_context: ascend, "
                                       "gpu, cpu (is_available, device_count).") : NULL;
    PyObject *dtmod = devctx ? submodule(m, "dtype", "MindSpore's dtype module: float32, ..., "
                                         "and Type, their class.") : NULL;
    PyObject *ops = dtmod ? submodule(m, "ops", "The mindspore.ops functions hwrt has: add, "
                                      "mul, matmul (mm), relu, cast, zeros, ones, full.") : NULL;
    PyObject *common = ops ? submodule(m, "common", "mindspore.common: Tensor, dtype.") : NULL;
    PyObject *compat = common ? submodule(m, "compat", "Run an unmodified MindSpore script: "
                                          "python3 -m hwrt.compat script.py") : NULL;
    PyObject *mgmt = compat ? submodule_of(comm, "hwrt.communication", "management",
                                           "MindSpore's communication.management.") : NULL;
    PyObject *cfunc = mgmt ? submodule_of(comm, "hwrt.communication", "comm_func",
                                          "MindSpore's communication.comm_func: collectives "
                                          "on the world or a group.") : NULL;
    if (!cfunc ||
        PyModule_AddStringConstant(m, "__version__", hwrt_version()) < 0 ||
        hwpy_errors_init(m) < 0 || hwpy_dtype_init(m, dtmod) < 0 || hwpy_tensor_init(m) < 0 ||
        hwpy_stream_init(m, runtime) < 0 || hwpy_graph_init(runtime) < 0 ||
        hwpy_context_init(m) < 0 || hwpy_target_init(m, hal, devctx) < 0 ||
        hwpy_add_functions(m, hwpy_ops_methods) < 0 || hwpy_ops_init(m) < 0 ||
        hwpy_add_functions(m, hwpy_device_top_methods) < 0 ||
        hwpy_add_functions(m, hwpy_target_top_methods) < 0 ||
        hwpy_add_functions(m, hwpy_context_methods) < 0 ||
        hwpy_add_functions(runtime, hwpy_runtime_methods) < 0 ||
        hwpy_add_functions(runtime, hwpy_stream_functions) < 0 ||
        hwpy_add_functions(runtime, hwpy_runtime_conf_methods) < 0 ||
        hwpy_add_functions(hal, hwpy_hal_device_methods) < 0 ||
        hwpy_comm_init(comm, mgmt) < 0 || hwpy_comm_func_init(cfunc, ops) < 0 ||
        hwpy_add_functions(prof, hwpy_prof_methods) < 0 ||
        hwpy_add_functions(off, hwpy_offload_methods) < 0 ||
        copy_names(runtime, m, runtime_exports, 0) < 0 ||
        copy_names(runtime, hal, hal_exports, 1) < 0 ||
        copy_names(m, ctx, context_exports, 1) < 0 ||
        copy_names(m, ops, ops_exports, 1) < 0 || copy_names(m, common, common_exports, 1) < 0 ||
        alias(m, "matmul", ops, "mm") < 0 ||
        hwpy_initializer_init(common) < 0 || hwpy_compat_init(m, compat) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *features = PyDict_New();
    if (!features || hwpy_comm_features(features) < 0 || hwpy_device_features(features) < 0 ||
        hwpy_offload_features(features) < 0 || hwpy_graph_features(features) < 0 ||
        PyModule_AddObject(m, "_features", features) < 0) {
        Py_XDECREF(features);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
