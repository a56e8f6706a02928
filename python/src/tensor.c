/* hwrt.Tensor: a device tensor owned by one hwrt_tensor reference.
 *
 *   Tensor(array)                   the seed's host -> device copy (any buffer, list, scalar)
 *   Tensor(shape=(8,128), dtype=hwrt.float16)   uninitialised device memory
 *   t.asnumpy() / t.copy_to_host()  device -> host, ordered after every writer
 *   t.copy_from_host(array)         host -> device into the existing tensor
 *
 * Dropping the last Python reference releases the hwrt reference at once; the memory
 * goes back to the pool when the work queued on it is done (stream-ordered). */
#include "hwpy.h"

#include <string.h>

Py_ssize_t hwpy_live_tensors;

PyObject *hwpy_tensor_wrap(hwrt_tensor t)
{
    hwpy_tensor_obj *o = PyObject_New(hwpy_tensor_obj, &hwpy_tensor_type);
    if (!o) {
        hwrt_tensor_release(t);
        return NULL;
    }
    o->t = t;
    o->weakrefs = NULL;
    hwpy_live_tensors++;
    hwpy_device_used = 1;
    return (PyObject *)o;
}

PyObject *hwpy_tensor_new_empty(hwrt_dtype dt, int ndim, const int64_t *shape)
{
    hwrt_tensor t;
    hwrt_status st = hwrt_tensor_empty(&t, dt, ndim, shape);
    if (st != HWRT_SUCCESS)
        return hwpy_raise(st);
    return hwpy_tensor_wrap(t);
}

static void tensor_dealloc(PyObject *self)
{
    hwpy_tensor_obj *o = (hwpy_tensor_obj *)self;
    if (o->weakrefs)
        PyObject_ClearWeakRefs(self);
    if (o->t) {
        hwrt_status st = hwrt_tensor_release(o->t);
        if (st != HWRT_SUCCESS) {
            /* A destructor cannot raise: report it the way Python reports such errors,
             * keeping the exception being handled (if any). Never hand self to
             * WriteUnraisable: at refcount 0 it would be resurrected by the hook's
             * reference and deallocated again, recursing until the stack overflows. */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            hwpy_raise_msg(st, "while freeing an hwrt.Tensor (its memory is released "
                           "anyway): %s", hwrt_last_error());
            PyErr_WriteUnraisable(NULL);
            PyErr_Restore(type, value, tb);
        }
        o->t = NULL;
        hwpy_live_tensors--;
    }
    Py_TYPE(self)->tp_free(self);
}

int hwpy_tensor_shape(hwrt_tensor t, int64_t shape[HWRT_MAX_DIMS])
{
    int ndim;
    hwrt_status st = hwrt_tensor_ndim(t, &ndim);
    if (st == HWRT_SUCCESS)
        st = hwrt_tensor_shape(t, shape, HWRT_MAX_DIMS);
    if (st != HWRT_SUCCESS) {
        hwpy_raise(st);
        return -1;
    }
    return ndim;
}

/* shape argument: an int or a sequence of ints, each >= 0. Returns ndim or -1. */
int hwpy_parse_shape(PyObject *obj, int64_t shape[HWRT_MAX_DIMS])
{
    if (PyLong_Check(obj)) {
        shape[0] = PyLong_AsLongLong(obj);
        if (shape[0] == -1 && PyErr_Occurred()) return -1;
        if (shape[0] < 0) goto negative;
        return 1;
    }
    PyObject *seq = PySequence_Fast(obj, "shape must be an int or a sequence of ints");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > HWRT_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "shape has %zd dimensions; hwrt tensors have at most %d",
                     n, HWRT_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyLong_Check(item)) {
            /* item is borrowed from seq: name it before seq (maybe a new list) goes */
            PyErr_Format(PyExc_TypeError, "shape[%zd] must be an int, not %.100s", i,
                         Py_TYPE(item)->tp_name);
            Py_DECREF(seq);
            return -1;
        }
        shape[i] = PyLong_AsLongLong(item);
        if (shape[i] == -1 && PyErr_Occurred()) { Py_DECREF(seq); return -1; }
        if (shape[i] < 0) { Py_DECREF(seq); goto negative; }
    }
    Py_DECREF(seq);
    return (int)n;
negative:
    PyErr_SetString(PyExc_ValueError, "shape extents must be >= 0");
    return -1;
}

/* Device copy of a tensor, converted to dt (same dtype: a plain copy). */
static PyObject *tensor_convert(hwrt_tensor src, hwrt_dtype dt)
{
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(src, shape);
    if (ndim < 0) return NULL;
    PyObject *out = hwpy_tensor_new_empty(dt, ndim, shape);
    if (!out) return NULL;
    if (hwpy_cast(((hwpy_tensor_obj *)out)->t, src, hwpy_current_stream()) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* Upload a C-contiguous host buffer as a new tensor (returns once the host was read). */
static PyObject *upload(const Py_buffer *v, const void *data)
{
    hwrt_dtype dt;
    if (hwpy_dtype_from_format(v->format, v->itemsize, &dt) < 0)
        return NULL;
    if (v->ndim > HWRT_MAX_DIMS)
        return PyErr_Format(PyExc_ValueError, "the array has %d dimensions; hwrt tensors have at "
                            "most %d", v->ndim, HWRT_MAX_DIMS);
    int64_t shape[HWRT_MAX_DIMS];
    for (int i = 0; i < v->ndim; i++)
        shape[i] = v->shape ? v->shape[i] : v->len / v->itemsize;
    hwrt_tensor t;
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_tensor_from_host(&t, dt, v->ndim, shape, data);
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS)
        return hwpy_raise(st);
    return hwpy_tensor_wrap(t);
}

static PyObject *from_buffer(PyObject *obj)
{
    Py_buffer v;
    if (PyObject_GetBuffer(obj, &v, PyBUF_RECORDS_RO) < 0)
        return NULL;
    PyObject *res;
    if (PyBuffer_IsContiguous(&v, 'C')) {
        res = upload(&v, v.buf);
    } else {
        void *tmp = PyMem_Malloc(v.len ? (size_t)v.len : 1);
        if (!tmp) {
            PyBuffer_Release(&v);
            return PyErr_NoMemory();
        }
        res = PyBuffer_ToContiguous(tmp, &v, v.len, 'C') < 0 ? NULL : upload(&v, tmp);
        PyMem_Free(tmp);
    }
    PyBuffer_Release(&v);
    return res;
}

/* out = src converted to out's dtype, on stream s: the device's cast where a kernel
 * exists; where none does (hwrt_op_cast: NOT_SUPPORTED, e.g. int16 or complex64 to
 * float32) numpy converts the host copy (as numpy's astype: a complex's imaginary part is
 * dropped with numpy's ComplexWarning) and it is uploaded, so the conversion is done when
 * this returns. 0, or -1 with an exception. */
int hwpy_cast(hwrt_tensor out, hwrt_tensor src, hwrt_stream s)
{
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_op_cast(out, src, s);
    Py_END_ALLOW_THREADS
    if (st == HWRT_SUCCESS) return 0;
    if (st != HWRT_ERROR_NOT_SUPPORTED) { hwpy_raise(st); return -1; }
    hwrt_dtype od;
    if ((st = hwrt_tensor_dtype(out, &od)) != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
    PyObject *arr = hwpy_tensor_asnumpy(src);
    PyObject *conv = arr ? PyObject_CallMethod(arr, "astype", "s", hwpy_dtype_numpy_name(od)) : NULL;
    Py_XDECREF(arr);
    if (!conv) return -1;
    if (od == HWRT_BFLOAT16) {       /* numpy has no bfloat16: float32 there, then the device */
        PyObject *tmp = from_buffer(conv);
        Py_DECREF(conv);
        if (!tmp) return -1;
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_op_cast(out, ((hwpy_tensor_obj *)tmp)->t, s);
        Py_END_ALLOW_THREADS
        Py_DECREF(tmp);
    } else {
        Py_buffer v;
        if (PyObject_GetBuffer(conv, &v, PyBUF_C_CONTIGUOUS) < 0) { Py_DECREF(conv); return -1; }
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_tensor_copy_from_host(out, v.buf, (size_t)v.len);
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&v);
        Py_DECREF(conv);
    }
    if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
    return 0;
}

PyObject *hwpy_tensor_from_object(PyObject *obj, int dt_req)
{
    PyObject *src;
    if (hwpy_tensor_check(obj)) {
        hwrt_dtype dt;
        hwrt_status st = hwrt_tensor_dtype(((hwpy_tensor_obj *)obj)->t, &dt);
        if (st != HWRT_SUCCESS) return hwpy_raise(st);
        return tensor_convert(((hwpy_tensor_obj *)obj)->t, dt_req >= 0 ? (hwrt_dtype)dt_req : dt);
    }
    if (PyObject_CheckBuffer(obj) && !PyUnicode_Check(obj)) {
        src = from_buffer(obj);
    } else {
        /* lists and scalars: numpy decides the layout; Python floats become float32 as in
         * MindSpore (numpy would pick float64) unless a dtype was asked for */
        PyObject *np = PyImport_ImportModule("numpy");
        if (!np) return NULL;
        PyObject *arr = PyObject_CallMethod(np, "asarray", "O", obj);
        if (arr && dt_req < 0) {
            PyObject *npdt = PyObject_GetAttrString(arr, "dtype");
            PyObject *kind = npdt ? PyObject_GetAttrString(npdt, "kind") : NULL;
            Py_XDECREF(npdt);
            PyErr_Clear();
            if (kind && PyUnicode_Check(kind) && !PyUnicode_CompareWithASCIIString(kind, "f")) {
                PyObject *a32 = PyObject_CallMethod(arr, "astype", "s", "float32");
                Py_SETREF(arr, a32);
            }
            Py_XDECREF(kind);
        }
        Py_DECREF(np);
        if (!arr) return NULL;
        if (!PyObject_CheckBuffer(arr)) {
            Py_DECREF(arr);
            return PyErr_Format(PyExc_TypeError, "cannot make a Tensor from %.100s",
                                Py_TYPE(obj)->tp_name);
        }
        src = from_buffer(arr);
        Py_DECREF(arr);
    }
    if (!src || dt_req < 0) return src;
    hwrt_dtype have;
    hwrt_tensor_dtype(((hwpy_tensor_obj *)src)->t, &have);
    if (have == (hwrt_dtype)dt_req) return src;
    PyObject *res = tensor_convert(((hwpy_tensor_obj *)src)->t, (hwrt_dtype)dt_req);
    Py_DECREF(src);
    return res;
}

PyObject *hwpy_tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"input_data", "dtype", "shape", NULL};
    PyObject *data = Py_None, *shape_obj = Py_None;
    int dt = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO&O:Tensor", kwlist, &data,
                                     hwpy_dtype_converter_opt, &dt, &shape_obj))
        return NULL;
    if (data != Py_None) {
        PyObject *t = hwpy_tensor_from_object(data, dt);
        if (!t || shape_obj == Py_None) return t;
        int64_t want[HWRT_MAX_DIMS], have[HWRT_MAX_DIMS];
        int nw = hwpy_parse_shape(shape_obj, want);
        int nh = nw < 0 ? -1 : hwpy_tensor_shape(((hwpy_tensor_obj *)t)->t, have);
        if (nw < 0 || nh < 0) { Py_DECREF(t); return NULL; }
        if (nw != nh || memcmp(want, have, sizeof(int64_t) * (size_t)nh)) {
            Py_DECREF(t);
            return PyErr_Format(PyExc_ValueError, "shape= does not match the data's shape; omit "
                                "shape= or reshape the data first");
        }
        return t;
    }
    if (shape_obj == Py_None)
        return PyErr_Format(PyExc_TypeError, "Tensor() needs input_data, or shape= and dtype=");
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_parse_shape(shape_obj, shape);
    if (ndim < 0) return NULL;
    return hwpy_tensor_new_empty(dt >= 0 ? (hwrt_dtype)dt : HWRT_FLOAT32, ndim, shape);
}

PyObject *hwpy_tensor_asnumpy(hwrt_tensor t)
{
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(t, shape);
    hwrt_dtype dt;
    size_t nbytes;
    if (ndim < 0) return NULL;
    hwrt_tensor_dtype(t, &dt);
    hwrt_tensor_nbytes(t, &nbytes);
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np) return NULL;
    PyObject *pyshape = PyTuple_New(ndim);
    for (int i = 0; pyshape && i < ndim; i++)
        PyTuple_SET_ITEM(pyshape, i, PyLong_FromLongLong(shape[i]));
    PyObject *arr = pyshape ? PyObject_CallMethod(np, "empty", "Os", pyshape,
                                                  hwpy_dtype_numpy_name(dt)) : NULL;
    Py_XDECREF(pyshape);
    Py_DECREF(np);
    if (!arr) return NULL;
    Py_buffer v;
    if (PyObject_GetBuffer(arr, &v, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    /* bfloat16 has no numpy type: fetch the raw halves into the upper part of the float32
     * array and widen in place from the end (exact: bf16 is float32's top 16 bits) */
    int bf16 = dt == HWRT_BFLOAT16;
    char *dst = bf16 ? (char *)v.buf + nbytes : v.buf;
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_tensor_copy_to_host(t, dst, nbytes);
    Py_END_ALLOW_THREADS
    if (st == HWRT_SUCCESS && bf16) {
        const uint16_t *h = (const uint16_t *)dst;
        uint32_t *f = (uint32_t *)v.buf;
        for (size_t i = 0; i < nbytes / 2; i++) f[i] = (uint32_t)h[i] << 16;
    }
    PyBuffer_Release(&v);
    if (st != HWRT_SUCCESS) {
        Py_DECREF(arr);
        return hwpy_raise(st);
    }
    return arr;
}

/* copy_to_host(out=None): a new numpy array, or into a C-contiguous writable buffer
 * of exactly the tensor's bytes. */
static PyObject *tensor_copy_to_host(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"out", NULL};
    PyObject *out = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:copy_to_host", kwlist, &out))
        return NULL;
    hwrt_tensor t = ((hwpy_tensor_obj *)self)->t;
    if (out == Py_None)
        return hwpy_tensor_asnumpy(t);
    Py_buffer v;
    if (PyObject_GetBuffer(out, &v, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_tensor_copy_to_host(t, v.buf, (size_t)v.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return Py_NewRef(out);
}

/* copy_from_host(array): same dtype -> one H2D copy (byte counts must match); another
 * dtype -> upload, then an on-device cast into this tensor (shapes must match). */
static PyObject *tensor_copy_from_host(PyObject *self, PyObject *src)
{
    hwrt_tensor t = ((hwpy_tensor_obj *)self)->t;
    hwrt_dtype dt;
    hwrt_status st = hwrt_tensor_dtype(t, &dt);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    if (PyObject_CheckBuffer(src) && !hwpy_tensor_check(src)) {
        Py_buffer v;
        if (PyObject_GetBuffer(src, &v, PyBUF_RECORDS_RO) < 0) return NULL;
        hwrt_dtype sdt;
        int same = hwpy_dtype_from_format(v.format, v.itemsize, &sdt) == 0 && sdt == dt &&
                   PyBuffer_IsContiguous(&v, 'C');
        PyErr_Clear();
        if (same) {
            Py_BEGIN_ALLOW_THREADS
            st = hwrt_tensor_copy_from_host(t, v.buf, (size_t)v.len);
            Py_END_ALLOW_THREADS
            PyBuffer_Release(&v);
            if (st != HWRT_SUCCESS) return hwpy_raise(st);
            return Py_NewRef(self);
        }
        PyBuffer_Release(&v);
    }
    PyObject *tmp = hwpy_tensor_from_object(src, -1);
    if (!tmp) return NULL;
    int rc = hwpy_cast(t, ((hwpy_tensor_obj *)tmp)->t, hwpy_current_stream());
    Py_DECREF(tmp);
    return rc < 0 ? NULL : Py_NewRef(self);
}

static PyObject *tensor_array(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:__array__", kwlist, &dtype, &copy))
        return NULL;
    PyObject *arr = hwpy_tensor_asnumpy(((hwpy_tensor_obj *)self)->t);
    if (!arr || dtype == Py_None) return arr;
    PyObject *res = PyObject_CallMethod(arr, "astype", "O", dtype);
    Py_DECREF(arr);
    return res;
}

static PyObject *tensor_item(PyObject *self, PyObject *unused)
{
    PyObject *arr = hwpy_tensor_asnumpy(((hwpy_tensor_obj *)self)->t);
    if (!arr) return NULL;
    PyObject *res = PyObject_CallMethod(arr, "item", NULL);
    Py_DECREF(arr);
    return res;
}

static PyObject *tensor_tolist(PyObject *self, PyObject *unused)
{
    PyObject *arr = hwpy_tensor_asnumpy(((hwpy_tensor_obj *)self)->t);
    if (!arr) return NULL;
    PyObject *res = PyObject_CallMethod(arr, "tolist", NULL);
    Py_DECREF(arr);
    return res;
}

static PyObject *get_shape(PyObject *self, void *c)
{
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(((hwpy_tensor_obj *)self)->t, shape);
    if (ndim < 0) return NULL;
    PyObject *tup = PyTuple_New(ndim);
    for (int i = 0; tup && i < ndim; i++)
        PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(shape[i]));
    return tup;
}

static PyObject *get_dtype(PyObject *self, void *c)
{
    hwrt_dtype dt;
    hwrt_status st = hwrt_tensor_dtype(((hwpy_tensor_obj *)self)->t, &dt);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return Py_NewRef(hwpy_dtype_object(dt));
}

static PyObject *get_ndim(PyObject *self, void *c)
{
    int n;
    hwrt_status st = hwrt_tensor_ndim(((hwpy_tensor_obj *)self)->t, &n);
    return st == HWRT_SUCCESS ? PyLong_FromLong(n) : hwpy_raise(st);
}

static PyObject *get_size(PyObject *self, void *c)
{
    int64_t n;
    hwrt_status st = hwrt_tensor_numel(((hwpy_tensor_obj *)self)->t, &n);
    return st == HWRT_SUCCESS ? PyLong_FromLongLong(n) : hwpy_raise(st);
}

static PyObject *get_nbytes(PyObject *self, void *c)
{
    size_t n;
    hwrt_status st = hwrt_tensor_nbytes(((hwpy_tensor_obj *)self)->t, &n);
    return st == HWRT_SUCCESS ? PyLong_FromSize_t(n) : hwpy_raise(st);
}

static PyObject *get_itemsize(PyObject *self, void *c)
{
    hwrt_dtype dt;
    hwrt_status st = hwrt_tensor_dtype(((hwpy_tensor_obj *)self)->t, &dt);
    return st == HWRT_SUCCESS ? PyLong_FromSize_t(hwrt_dtype_size(dt)) : hwpy_raise(st);
}

static PyObject *get_device_id(PyObject *self, void *c)
{
    int d;
    hwrt_status st = hwrt_tensor_device(((hwpy_tensor_obj *)self)->t, &d);
    return st == HWRT_SUCCESS ? PyLong_FromLong(d) : hwpy_raise(st);
}

static PyObject *get_device(PyObject *self, void *c)
{
    int d;
    hwrt_status st = hwrt_tensor_device(((hwpy_tensor_obj *)self)->t, &d);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return PyUnicode_FromFormat("%s:%d", hwrt_current_backend(), d);
}

static PyObject *get_location(PyObject *self, void *c)
{
    return hwpy_offload_location(((hwpy_tensor_obj *)self)->t);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, NULL, "extents, a tuple of ints", NULL},
    {"dtype", get_dtype, NULL, "element type (hwrt.float16, ...)", NULL},
    {"ndim", get_ndim, NULL, "number of dimensions", NULL},
    {"size", get_size, NULL, "number of elements", NULL},
    {"nbytes", get_nbytes, NULL, "bytes of device memory the data takes", NULL},
    {"itemsize", get_itemsize, NULL, "bytes per element", NULL},
    {"device_id", get_device_id, NULL, "device ordinal", NULL},
    {"device", get_device, NULL, "\"<backend>:<ordinal>\"", NULL},
    {"location", get_location, NULL, "\"device\", \"host\" or \"disk\" (memory_offload)", NULL},
    {NULL}};

static Py_ssize_t tensor_len(PyObject *self)
{
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(((hwpy_tensor_obj *)self)->t, shape);
    if (ndim < 0) return -1;
    if (ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)shape[0];
}

static PySequenceMethods tensor_as_sequence = {.sq_length = tensor_len,
                                               .sq_item = hwpy_tensor_item};
static PyMappingMethods tensor_as_mapping = {.mp_length = tensor_len,
                                             .mp_subscript = hwpy_tensor_subscript};

static PyMethodDef tensor_methods[] = {
    /* asnumpy, numpy: tensor_ms.c (they fill a tensor made with init= first) */
    {"copy_to_host", (PyCFunction)(void (*)(void))tensor_copy_to_host,
     METH_VARARGS | METH_KEYWORDS,
     "copy_to_host($self, out=None)\n--\n\n"
     "Device -> host; a new numpy array, or into `out` (a writable C-contiguous buffer of "
     "exactly nbytes). Blocking, never stale."},
    {"copy_from_host", tensor_copy_from_host, METH_O,
     "copy_from_host($self, array, /)\n--\n\n"
     "Returns self: host -> device into this tensor; returns once the host data was read. "
     "Another dtype is converted on the device (shapes must match)."},
    {"__array__", (PyCFunction)(void (*)(void))tensor_array, METH_VARARGS | METH_KEYWORDS,
     "__array__($self, dtype=None, copy=None)\n--\n\n"
     "numpy interop: numpy.asarray(tensor) is a host copy."},
    {"__dlpack__", (PyCFunction)(void (*)(void))hwpy_tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__($self, stream=None, *, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "a DLPack capsule sharing the tensor's memory on its backend's DLPack device (sim: "
     "kDLCPU, opencl: kDLOpenCL, cuda: kDLCUDA); max_version=(1, 0) gives a "
     "\"dltensor_versioned\" capsule; copy=True a copy; dl_device=(1, 0) a host copy."},
    {"__dlpack_device__", hwpy_tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n"
     "(DLPack device type, id): (1, 0) on sim, (4, ordinal) on opencl, (2, ordinal) on cuda"},
    {"item", tensor_item, METH_NOARGS, "item($self, /)\n--\n\n"
     "The one element as a Python number."},
    {"set_offloadable", (PyCFunction)(void (*)(void))hwpy_tensor_set_offloadable,
     METH_VARARGS | METH_KEYWORDS,
     "set_offloadable($self, on=True)\n--\n\n"
     "Returns self: let the tensor move off the device when the budget is exceeded (on), "
     "or pin it there (off). With memory_offload ON, tensors the module creates are "
     "offloadable from the start."},
    {"tolist", tensor_tolist, METH_NOARGS, "tolist($self, /)\n--\n\n"
     "Nested Python lists (a host copy)."},
    {NULL}};

PyTypeObject hwpy_tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hwrt.Tensor",
    .tp_basicsize = sizeof(hwpy_tensor_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Tensor(input_data=None, dtype=None, shape=None, *, init=None)\n--\n\n"
              "A dense row-major tensor in device memory on the current device.\n"
              "\n"
              "Tensor(array) copies host data (numpy arrays or any buffer, lists, scalars; Python "
              "floats become float32); dtype= converts on the device. Tensor(shape=..., dtype=...) "
              "is uninitialised memory (dtype defaults to float32).",
    .tp_new = hwpy_tensor_new_init,              /* initializer.c: init=, then hwpy_tensor_new */
    .tp_dealloc = tensor_dealloc,
    .tp_repr = hwpy_tensor_repr,                 /* tensor_ms.c: MindSpore's */
    .tp_str = hwpy_tensor_str,
    /* tp_getset, tp_methods: this file's, ops.c's and tensor_ms.c's (hwpy_tensor_init) */
    .tp_as_sequence = &tensor_as_sequence,
    .tp_as_mapping = &tensor_as_mapping,
    .tp_as_number = &hwpy_tensor_as_number,
    .tp_as_buffer = &hwpy_tensor_as_buffer,
    .tp_weaklistoffset = offsetof(hwpy_tensor_obj, weakrefs),
};

/* The type is complete before PyType_Ready (slots, methods and getters of this file,
 * ops.c and tensor_ms.c), so its __dict__ has every slot wrapper (__getitem__, __repr__,
 * ...) and nothing is patched in after. */
int hwpy_tensor_init(PyObject *module)
{
    static PyMethodDef methods[64];
    static PyGetSetDef getset[32];
    const PyMethodDef *mt[] = {tensor_methods, hwpy_tensor_op_methods, hwpy_tensor_ms_methods};
    const PyGetSetDef *gt[] = {tensor_getset, hwpy_tensor_ms_getset};
    size_t n = 0;
    for (size_t i = 0; i < sizeof mt / sizeof mt[0]; i++)
        for (const PyMethodDef *m = mt[i]; m->ml_name; m++) {
            if (n + 1 >= sizeof methods / sizeof methods[0]) goto full;
            methods[n++] = *m;
        }
    n = 0;
    for (size_t i = 0; i < sizeof gt / sizeof gt[0]; i++)
        for (const PyGetSetDef *g = gt[i]; g->name; g++) {
            if (n + 1 >= sizeof getset / sizeof getset[0]) goto full;
            getset[n++] = *g;
        }
    hwpy_tensor_type.tp_methods = methods;
    hwpy_tensor_type.tp_getset = getset;
    if (PyType_Ready(&hwpy_tensor_type) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "Tensor", (PyObject *)&hwpy_tensor_type);
full:
    PyErr_SetString(PyExc_SystemError, "hwrt.Tensor: the method or getter table is full");
    return -1;
}
