/* Tensor interop: the buffer protocol and DLPack.
 *
 * Export by buffer: a tensor lives in device memory, which a host program must not
 * touch, so its buffer is a read-only host snapshot taken at request time (ordered after
 * every writer). numpy.asarray(t) / memoryview(t) therefore give a copy. bfloat16 has no
 * PEP 3118 format: numpy then falls back to __array__ (widened to float32).
 * Import by buffer: Tensor(obj) reads any buffer (tensor.c).
 *
 * DLPack: __dlpack__ shares the memory on the device its backend names (sim: kDLCPU, so
 * numpy.from_dlpack and torch.from_dlpack read it in place; opencl: kDLOpenCL; cuda:
 * kDLCUDA), or gives a host copy for dl_device=(kDLCPU, 0); hwrt.from_dlpack shares what
 * hwrt_tensor_from_dlpack can share and copies host data (numpy's, torch's CPU tensors). */
#include "hwpy.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    Py_ssize_t shape[HWRT_MAX_DIMS];
    Py_ssize_t strides[HWRT_MAX_DIMS];
    char format[4];
    char data[];
} snapshot;

static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    hwrt_tensor t = ((hwpy_tensor_obj *)self)->t;
    if (flags & PyBUF_WRITABLE) {
        PyErr_SetString(PyExc_BufferError, "an hwrt.Tensor lives in device memory: its buffer is "
                        "a read-only host snapshot; write with copy_from_host()");
        return -1;
    }
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(t, shape);
    hwrt_dtype dt;
    size_t nbytes;
    if (ndim < 0) return -1;
    hwrt_tensor_dtype(t, &dt);
    hwrt_tensor_nbytes(t, &nbytes);
    const char *fmt = hwpy_dtype_format(dt);
    if (!fmt) {
        PyErr_SetString(PyExc_BufferError, "bfloat16 has no buffer format; use asnumpy() "
                        "(widened to float32)");
        return -1;
    }
    snapshot *s = malloc(sizeof *s + (nbytes ? nbytes : 1));
    if (!s) {
        PyErr_NoMemory();
        return -1;
    }
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_tensor_copy_to_host(t, s->data, nbytes);
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) {
        free(s);
        hwpy_raise(st);
        return -1;
    }
    Py_ssize_t item = (Py_ssize_t)hwrt_dtype_size(dt), stride = item;
    for (int i = ndim - 1; i >= 0; i--) {
        s->shape[i] = (Py_ssize_t)shape[i];
        s->strides[i] = stride;
        stride *= (Py_ssize_t)shape[i];
    }
    snprintf(s->format, sizeof s->format, "%s", fmt);
    view->buf = s->data;
    view->obj = Py_NewRef(self);
    view->len = (Py_ssize_t)nbytes;
    view->readonly = 1;
    view->itemsize = item;
    view->format = (flags & PyBUF_FORMAT) ? s->format : NULL;
    view->ndim = ndim;
    view->shape = (flags & PyBUF_ND) == PyBUF_ND ? s->shape : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? s->strides : NULL;
    view->suboffsets = NULL;
    view->internal = s;
    if (!view->shape) view->ndim = 1;     /* a plain byte view (PyBUF_SIMPLE) */
    return 0;
}

static void tensor_releasebuffer(PyObject *self, Py_buffer *view)
{
    free(view->internal);
}

PyBufferProcs hwpy_tensor_as_buffer = {
    .bf_getbuffer = tensor_getbuffer,
    .bf_releasebuffer = tensor_releasebuffer,
};

/* ---- DLPack export ---- */

/* Capsule destructors run whenever the capsule's last reference goes, often while the
 * consumer is returning its own error (numpy.from_dlpack refusing our device): the
 * pending exception is kept as it is (saved and restored around our work), never
 * cleared, or the consumer would return NULL without an exception (SystemError). */
static void versioned_capsule_free(PyObject *cap)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {   /* never consumed */
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (m && m->deleter) m->deleter(m);
    }
    PyErr_Restore(type, value, tb);
}

typedef struct {
    DLManagedTensor m;
    DLManagedTensorVersioned *v;
} legacy_export;

static void legacy_deleter(DLManagedTensor *self)
{
    legacy_export *e = (legacy_export *)self;
    if (e->v->deleter) e->v->deleter(e->v);
    free(e);
}

static void legacy_capsule_free(PyObject *cap)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
        if (m && m->deleter) m->deleter(m);
    }
    PyErr_Restore(type, value, tb);
}

/* A consumer asking for max_version >= 1 gets DLManagedTensorVersioned, else the
 * pre-1.0 DLManagedTensor (what numpy 1.24 and most existing consumers read). */
static int wants_versioned(PyObject *max_version)
{
    if (max_version == Py_None) return 0;
    if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) < 1) {
        PyErr_SetString(PyExc_TypeError, "max_version must be a (major, minor) tuple or None");
        return -1;
    }
    long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
    if (major == -1 && PyErr_Occurred()) return -1;
    return major >= 1;
}

/* Where the consumer wants the data: 0 on the tensor's own DLPack device (dl_device None
 * or equal to __dlpack_device__), 1 on the host (kDLCPU, 0) when that is another device,
 * -1 with BufferError for any other device. */
static int wanted_device(PyObject *self, PyObject *dl_device)
{
    if (dl_device == Py_None) return 0;
    PyObject *mine = hwpy_tensor_dlpack_device(self, NULL);
    if (!mine) return -1;
    int eq = PyObject_RichCompareBool(mine, dl_device, Py_EQ);
    Py_DECREF(mine);
    if (eq < 0) return -1;
    if (eq) return 0;
    PyObject *cpu = Py_BuildValue("(ii)", (int)kDLCPU, 0);
    int host = cpu ? PyObject_RichCompareBool(cpu, dl_device, Py_EQ) : -1;
    Py_XDECREF(cpu);
    if (host < 0) return -1;
    if (host) return 1;
    PyObject *r = PyObject_Repr(dl_device);
    PyErr_Format(PyExc_BufferError, "dl_device=%s is not supported: an hwrt.Tensor exports on "
                 "its own device (see __dlpack_device__) or as a host copy, dl_device=(%d, 0) "
                 "(kDLCPU)", r ? PyUnicode_AsUTF8(r) : "?", (int)kDLCPU);
    Py_XDECREF(r);
    return -1;
}

PyObject *hwpy_tensor_dlpack(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$OOO:__dlpack__", kwlist, &stream,
                                     &max_version, &dl_device, &copy))
        return NULL;
    /* hwrt finishes the tensor's writers on the host before exporting, so the data is
     * ready for any consumer stream: an int stream is accepted as is */
    if (stream != Py_None && !PyLong_Check(stream))
        return PyErr_Format(PyExc_TypeError, "stream must be an int or None");
    if (copy != Py_None && !PyBool_Check(copy))
        return PyErr_Format(PyExc_TypeError, "copy must be True, False or None");
    int versioned = wants_versioned(max_version);
    if (versioned < 0) return NULL;
    int to_host = wanted_device(self, dl_device);
    if (to_host < 0) return NULL;
    if (to_host && copy == Py_False)
        return PyErr_Format(PyExc_BufferError, "dl_device=(%d, 0) with copy=False: this tensor's "
                            "memory is not host memory (see __dlpack_device__), so it can reach "
                            "the host only as a copy (copy=None or True)", (int)kDLCPU);
    DLManagedTensorVersioned *m;
    hwrt_status st;
    if (to_host) {                  /* a host copy: kDLCPU, flagged copied */
        hwrt_tensor t = ((hwpy_tensor_obj *)self)->t;
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_tensor_to_dlpack_host(t, &m);
        Py_END_ALLOW_THREADS
        if (st != HWRT_SUCCESS) return hwpy_raise(st);
    } else {
        PyObject *src = Py_NewRef(self);
        if (copy == Py_True) {      /* an independent device copy */
            Py_SETREF(src, hwpy_tensor_from_object(self, -1));
            if (!src) return NULL;
        }
        st = hwrt_tensor_to_dlpack(((hwpy_tensor_obj *)src)->t, &m);
        Py_DECREF(src);             /* the export holds its own hwrt reference */
        if (st != HWRT_SUCCESS) return hwpy_raise(st);
        if (copy == Py_True) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    }
    if (versioned) {
        PyObject *cap = PyCapsule_New(m, "dltensor_versioned", versioned_capsule_free);
        if (!cap) m->deleter(m);
        return cap;
    }
    legacy_export *e = calloc(1, sizeof *e);
    if (!e) {
        m->deleter(m);
        return PyErr_NoMemory();
    }
    e->v = m;
    e->m.dl_tensor = m->dl_tensor;
    e->m.manager_ctx = e;
    e->m.deleter = legacy_deleter;
    PyObject *cap = PyCapsule_New(&e->m, "dltensor", legacy_capsule_free);
    if (!cap) legacy_deleter(&e->m);
    return cap;
}

PyObject *hwpy_tensor_dlpack_device(PyObject *self, PyObject *unused)
{
    DLDevice dev;
    hwrt_status st = hwrt_tensor_dlpack_device(((hwpy_tensor_obj *)self)->t, &dev);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return Py_BuildValue("(ii)", (int)dev.device_type, (int)dev.device_id);
}

/* ---- DLPack import ---- */

typedef struct {
    DLManagedTensorVersioned v;
    DLManagedTensor *legacy;
} legacy_import;

static void legacy_import_deleter(DLManagedTensorVersioned *self)
{
    legacy_import *w = (legacy_import *)self;
    if (w->legacy->deleter) w->legacy->deleter(w->legacy);
    free(w);
}

static PyObject *import_capsule(PyObject *cap)
{
    hwrt_tensor t;
    hwrt_status st;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
        st = hwrt_tensor_from_dlpack(&t, m);
        if (st != HWRT_SUCCESS) return hwpy_raise(st);    /* the capsule still owns m */
        PyCapsule_SetName(cap, "used_dltensor_versioned");
        return hwpy_tensor_wrap(t);
    }
    if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
        if (m->deleter == legacy_deleter) {     /* our own: import the export it wraps */
            legacy_export *e = (legacy_export *)m;
            st = hwrt_tensor_from_dlpack(&t, e->v);
            if (st != HWRT_SUCCESS) return hwpy_raise(st);
            free(e);                            /* hwrt owns e->v now */
            PyCapsule_SetName(cap, "used_dltensor");
            return hwpy_tensor_wrap(t);
        }
        legacy_import *w = calloc(1, sizeof *w);
        if (!w) return PyErr_NoMemory();
        w->legacy = m;
        w->v.version.major = 1;
        w->v.manager_ctx = w;
        w->v.deleter = legacy_import_deleter;
        w->v.dl_tensor = m->dl_tensor;
        st = hwrt_tensor_from_dlpack(&t, &w->v);
        if (st != HWRT_SUCCESS) {
            free(w);
            return hwpy_raise(st);
        }
        PyCapsule_SetName(cap, "used_dltensor");
        return hwpy_tensor_wrap(t);
    }
    return PyErr_Format(PyExc_ValueError, "not a live DLPack capsule (already consumed, or not "
                        "named \"dltensor\" / \"dltensor_versioned\")");
}

PyObject *hwpy_from_dlpack(PyObject *module, PyObject *obj)
{
    if (PyCapsule_CheckExact(obj))
        return import_capsule(obj);
    PyObject *fn = PyObject_GetAttrString(obj, "__dlpack__");
    if (!fn) {
        PyErr_Clear();
        return PyErr_Format(PyExc_TypeError, "%.100s has no __dlpack__; pass a DLPack capsule "
                            "or an object implementing the DLPack protocol", Py_TYPE(obj)->tp_name);
    }
    PyObject *args = PyTuple_New(0);
    PyObject *kw = Py_BuildValue("{s(ii)}", "max_version", 1, 0);
    PyObject *cap = (args && kw) ? PyObject_Call(fn, args, kw) : NULL;
    if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {   /* a pre-1.0 producer */
        PyErr_Clear();
        cap = PyObject_CallNoArgs(fn);
    }
    Py_XDECREF(args);
    Py_XDECREF(kw);
    Py_DECREF(fn);
    if (!cap) return NULL;
    PyObject *res = import_capsule(cap);
    Py_DECREF(cap);
    return res;
}
