/* The hwrt Python module: declarations shared by its C files.
 *
 * One extension module, `hwrt`, written against the CPython C API. Its submodules
 * (hwrt.runtime, hwrt.communication, hwrt.profiler) are module objects made in C and
 * registered in sys.modules, so `import hwrt.runtime as mrt` works as in the seed. */
#ifndef HWPY_H
#define HWPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <hwrt.h>

/* hwrt's distributed part (hwrt_dist.h) is optional */
#if __has_include("hwrt/hwrt_dist.h")
#define HWPY_HAVE_DIST 1
#endif

/* ---- errors (errors.c) ---- */
/* Raise the hwrt exception for st, carrying hwrt_last_error(); returns NULL. */
PyObject *hwpy_raise(hwrt_status st);
/* Raise the exception of status st with our own sentence; returns NULL. */
PyObject *hwpy_raise_msg(hwrt_status st, const char *fmt, ...);
int hwpy_errors_init(PyObject *module);

/* ---- dtypes (dtype.c) ---- */
typedef struct {
    PyObject_HEAD
    hwrt_dtype dt;
} hwpy_dtype_obj;
extern PyTypeObject hwpy_dtype_type;
/* The singleton dtype object of dt (borrowed). */
PyObject *hwpy_dtype_object(hwrt_dtype dt);
/* Convert an hwrt dtype, a name ("float16") or a numpy dtype/type to dt. 0 on success,
 * -1 with TypeError/ValueError set. */
int hwpy_dtype_convert(PyObject *obj, hwrt_dtype *dt);
/* O& converter for PyArg_Parse: None leaves *dt untouched. */
int hwpy_dtype_converter_opt(PyObject *obj, void *dt);
/* PEP 3118 format and itemsize of a buffer -> dtype; 0 on success, -1 with an error. */
int hwpy_dtype_from_format(const char *format, Py_ssize_t itemsize, hwrt_dtype *dt);
/* PEP 3118 format of dt ("e", "f", ...), NULL for bfloat16 which has none. */
const char *hwpy_dtype_format(hwrt_dtype dt);
/* numpy's name for dt ("float16"); bfloat16 maps to float32 on the host. */
const char *hwpy_dtype_numpy_name(hwrt_dtype dt);
int hwpy_dtype_init(PyObject *top, PyObject *dtmod);

/* ---- tensors (tensor.c, tensor_interop.c) ---- */
typedef struct {
    PyObject_HEAD
    hwrt_tensor t;
    PyObject *weakrefs;
} hwpy_tensor_obj;
extern PyTypeObject hwpy_tensor_type;
#define hwpy_tensor_check(o) PyObject_TypeCheck((o), &hwpy_tensor_type)
/* Wrap a tensor handle, taking over its reference (released on failure). */
PyObject *hwpy_tensor_wrap(hwrt_tensor t);
/* Allocate an uninitialised tensor and wrap it. */
PyObject *hwpy_tensor_new_empty(hwrt_dtype dt, int ndim, const int64_t *shape);
/* Shape of a tensor as a C array; returns ndim or -1 with an error set. */
int hwpy_tensor_shape(hwrt_tensor t, int64_t shape[HWRT_MAX_DIMS]);
/* Tensor from any host object: buffer protocol, else numpy.asarray(obj). dt_req < 0 keeps
 * the source dtype; otherwise the data is cast on the device to dt_req. */
PyObject *hwpy_tensor_from_object(PyObject *obj, int dt_req);
/* Host copy of the tensor as a numpy array (bfloat16 widened to float32). */
PyObject *hwpy_tensor_asnumpy(hwrt_tensor t);
/* A shape argument (an int or a sequence of ints >= 0); returns ndim or -1. */
int hwpy_parse_shape(PyObject *obj, int64_t shape[HWRT_MAX_DIMS]);
/* Live hwrt.Tensor objects (for leak tests). */
extern Py_ssize_t hwpy_live_tensors;
extern PyBufferProcs hwpy_tensor_as_buffer;
extern PyNumberMethods hwpy_tensor_as_number;
PyObject *hwpy_tensor_dlpack(PyObject *self, PyObject *args, PyObject *kw);
PyObject *hwpy_tensor_dlpack_device(PyObject *self, PyObject *unused);
PyObject *hwpy_from_dlpack(PyObject *module, PyObject *obj);
int hwpy_tensor_init(PyObject *module);
/* out = src in out's dtype on s: the device's cast, else numpy's on the host copy (a
 * dtype without kernels). 0, or -1 with an exception. */
int hwpy_cast(hwrt_tensor out, hwrt_tensor src, hwrt_stream s);
/* Tensor() without init= (tensor.c) and with it (initializer.c: the type's tp_new). */
PyObject *hwpy_tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw);
PyObject *hwpy_tensor_new_init(PyTypeObject *type, PyObject *args, PyObject *kw);
/* MindSpore's Tensor methods, getters and slots (tensor_ms.c), in the type from the
 * start (hwpy_tensor_init). */
extern PyMethodDef hwpy_tensor_ms_methods[];
extern PyGetSetDef hwpy_tensor_ms_getset[];
PyObject *hwpy_tensor_repr(PyObject *self);
PyObject *hwpy_tensor_str(PyObject *self);
PyObject *hwpy_tensor_item(PyObject *self, Py_ssize_t i);
PyObject *hwpy_tensor_subscript(PyObject *self, PyObject *key);
PyObject *hwpy_tensor_float(PyObject *self);
PyObject *hwpy_tensor_int(PyObject *self);
PyObject *hwpy_tensor_index(PyObject *self);
int hwpy_tensor_bool(PyObject *self);
/* Tensor(init=...) (initializer.c): the initializer still to fill t (borrowed, NULL:
 * none); fill t now if it has one (0 / -1); forget it (t was overwritten). */
PyObject *hwpy_tensor_init_of(PyObject *t);
int hwpy_tensor_init_pending(PyObject *t);
void hwpy_tensor_drop_init(PyObject *t);
/* hwrt.common.initializer, and Tensor(init=) */
int hwpy_initializer_init(PyObject *common);

/* ---- ops (ops.c) ---- */
extern PyMethodDef hwpy_ops_methods[];
/* hwrt._kernel_ops, from the runtime's op table (src/base/op_table.h). */
int hwpy_ops_init(PyObject *module);
/* Tensor methods that are ops (t.sum(), t.astype(), ...). */
extern PyMethodDef hwpy_tensor_op_methods[];

/* ---- streams and events (stream.c) ---- */
typedef struct {
    PyObject_HEAD
    hwrt_stream s;
    int owned;            /* 0 for the default stream, which is never destroyed */
    long long sid;        /* MindSpore's stream id: 0 the default stream, then 1, 2, ... */
} hwpy_stream_obj;
extern PyTypeObject hwpy_stream_type;
/* The stream ops should use now: the innermost StreamCtx of this thread, else NULL
 * (the current device's default stream). Borrowed from the thread's state. */
hwrt_stream hwpy_current_stream(void);
/* Resolve an optional Python stream argument: None -> current stream. 0 / -1 error. */
int hwpy_stream_arg(PyObject *obj, hwrt_stream *out);
int hwpy_stream_init(PyObject *module, PyObject *runtime);
/* The Stream object current on this thread (borrowed; NULL: none set), and setting it
 * (NULL clears; 0 / -1 with an error). */
PyObject *hwpy_current_stream_obj(void);
int hwpy_set_current_stream(PyObject *stream);
/* Graph capture (graph.c): adds hwrt.runtime.Graph when hwrt has hwrt_graph.h. */
int hwpy_graph_init(PyObject *runtime);
int hwpy_graph_features(PyObject *d);
extern PyMethodDef hwpy_stream_functions[];

/* ---- devices, memory, synchronisation (device.c) ---- */
extern PyMethodDef hwpy_device_top_methods[];     /* hwrt.set_device, ... */
extern PyMethodDef hwpy_runtime_methods[];        /* hwrt.runtime.* */
/* device_id argument: None -> current device. */
int hwpy_device_arg(PyObject *obj, int *device_id);

/* ---- device targets (target.c; the rest of the concern: target.h) ---- */
extern PyMethodDef hwpy_target_top_methods[];     /* set_device, get_current_device, ... */
extern PyMethodDef hwpy_hal_device_methods[];     /* hwrt.hal.is_available, ... */
int hwpy_target_init(PyObject *module, PyObject *hal, PyObject *devctx);
/* Target name -> backend name ("Ascend" -> "ascend", "CPU" -> "sim"); buf holds others. */
const char *hwpy_map_target(const char *target, char *buf, size_t len);
/* set_device's work: target as the user wrote it, id_obj an int or None. by_set_device 0
 * (set_context's device_target=): before any work another call may choose again. 0 / -1. */
int hwpy_choose_device(const char *target, PyObject *id_obj, int by_set_device);
/* HCCL_DETERMINISTIC / TE_PARALLEL_COMPILER as MindSpore's deterministic switch sets them. */
int hwpy_set_deterministic_env(int on);
/* What the user passed to the successful set_device (NULL: none yet). */
const char *hwpy_chosen_target(void);
/* get_context("device_target"): the chosen target, else the backend in use, else "CPU". */
const char *hwpy_context_target(void);
/* Set once a tensor, stream or event was made: hal.is_initialized. */
extern int hwpy_device_used;

/* ---- MindSpore's runtime configuration calls (runtime_conf.c) ---- */
extern PyMethodDef hwpy_runtime_conf_methods[];   /* set_memory, memory_replay, ... */
/* "xxGB" -> bytes as MindSpore validates it; -1 with ValueError naming what. */
double hwpy_parse_gb(const char *what, const char *s, int allow_zero);
/* After set_device: what set_memory asked for before it (init_size). 0 / -1. */
int hwpy_runtime_device_set(void);

/* ---- context and offload configuration (context.c) ---- */
extern PyMethodDef hwpy_context_methods[];
int hwpy_context_init(PyObject *module);
/* After set_device: hbm_ratio of the device's total when no max_device_memory. 0 / -1. */
int hwpy_context_device_set(void);
/* runtime.set_memory(max_size=): the max_device_memory MindSpore reports. 0 / -1. */
int hwpy_context_set_max_memory(double bytes);

/* ---- offload (offload.c) ---- */
/* "device", "host" or "disk". */
PyObject *hwpy_offload_location(hwrt_tensor t);
PyObject *hwpy_tensor_set_offloadable(PyObject *self, PyObject *args, PyObject *kw);
extern PyMethodDef hwpy_offload_methods[];
int hwpy_offload_features(PyObject *d);

/* ---- communication and profiler (comm.c) ---- */
extern PyMethodDef hwpy_comm_methods[];
/* Functions, GlobalComm and the world-group names into hwrt.communication and
 * hwrt.communication.management. */
int hwpy_comm_init(PyObject *comm, PyObject *mgmt);
/* Put the optional parts present into dict d (dist, profiler, caching_pool). */
int hwpy_comm_features(PyObject *d);
int hwpy_device_features(PyObject *d);
extern PyMethodDef hwpy_prof_methods[];

/* ---- python3 -m hwrt.compat (compat.c) ---- */
int hwpy_compat_init(PyObject *top, PyObject *compat);

/* Add methods to a module (module-level functions). */
int hwpy_add_functions(PyObject *module, PyMethodDef *defs);

/* ---- communication.comm_func (comm_func.c) ---- */
#ifdef HWPY_HAVE_DIST
/* The group argument of a collective (comm.c): None or the world's name -> *grp NULL and
 * *ranks Py_None; a created group this process is in -> its hwrt_group and its world
 * ranks (a new list). -1 with MindSpore's error otherwise (before init, not a str,
 * unknown, this rank not in it). */
int hwpy_comm_group(const char *fn, PyObject *g, hwrt_group *grp, PyObject **ranks);
#endif
/* comm_func's functions, and ops.ReduceOp into ops. */
int hwpy_comm_func_init(PyObject *cfunc, PyObject *ops);

#endif
