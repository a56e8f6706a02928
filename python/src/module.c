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

/* A submodule hwrt.<name>, attached to the parent and to sys.modules. Borrowed. */
static PyObject *submodule(PyObject *parent, const char *name, const char *doc)
{
    char full[64];
    snprintf(full, sizeof full, "hwrt.%s", name);
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

PyMODINIT_FUNC PyInit_hwrt(void)
{
    PyObject *m = PyModule_Create(&hwrt_def);
    if (!m) return NULL;
    PyObject *runtime = submodule(m, "runtime", "Devices' memory, streams, events, synchronisation.");
    PyObject *comm = runtime ? submodule(m, "communication", "Ranks of a multi-process job.") : NULL;
    PyObject *prof = comm ? submodule(m, "profiler", "Profiler start/stop (hwrt-prof reads the output).") : NULL;
    PyObject *off = prof ? submodule(m, "offload", "Residency control behind memory_offload.") : NULL;
    if (!off ||
        PyModule_AddStringConstant(m, "__version__", hwrt_version()) < 0 ||
        hwpy_errors_init(m) < 0 || hwpy_dtype_init(m) < 0 || hwpy_tensor_init(m) < 0 ||
        hwpy_stream_init(m, runtime) < 0 || hwpy_graph_init(runtime) < 0 ||
        hwpy_context_init(m) < 0 ||
        hwpy_add_functions(m, hwpy_ops_methods) < 0 ||
        hwpy_add_functions(m, hwpy_device_top_methods) < 0 ||
        hwpy_add_functions(m, hwpy_context_methods) < 0 ||
        hwpy_add_functions(runtime, hwpy_runtime_methods) < 0 ||
        hwpy_add_functions(runtime, hwpy_stream_functions) < 0 ||
        hwpy_add_functions(comm, hwpy_comm_methods) < 0 ||
        hwpy_add_functions(prof, hwpy_prof_methods) < 0 ||
        hwpy_add_functions(off, hwpy_offload_methods) < 0) {
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
