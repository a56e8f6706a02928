/* MindSpore's Tensor methods (common/tensor.py) on hwrt.Tensor: float(t), int(t),
 * bool(t), index(t) for one-element tensors; repr with values and str as
 * str(t.asnumpy()); strides, contiguous, is_contiguous, data_ptr(), from_numpy,
 * copy_, assign_value, set_dtype, move_to, t[i]; init=/has_init/init_data with
 * hwrt.common.initializer (initializer.c).
 *
 * They are added to the type's dict after PyType_Ready, so tensor.c's tables stay as
 * they are. */
#include "hwpy.h"

#include <string.h>

#if __has_include("hwrt/hwrt_offload.h")
#define HWPY_HAVE_OFFLOAD 1
#endif

#define T(o) (((hwpy_tensor_obj *)(o))->t)

/* ---- one-element conversions (tensor.py __bool__/__int__/__float__/__index__) ---- */

static PyObject *one_item(PyObject *self, const char *msg)
{
    int64_t n;
    hwrt_status st = hwrt_tensor_numel(T(self), &n);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    if (n != 1) {
        PyErr_SetString(PyExc_ValueError, msg);
        return NULL;
    }
    if (hwpy_tensor_init_pending(self) < 0) return NULL;
    PyObject *arr = hwpy_tensor_asnumpy(T(self));
    PyObject *r = arr ? PyObject_CallMethod(arr, "item", NULL) : NULL;
    Py_XDECREF(arr);
    return r;
}

static const char *const scalar_msg = "Only one element tensors can be converted to Python scalars";

PyObject *hwpy_tensor_float(PyObject *self)
{
    PyObject *v = one_item(self, scalar_msg);
    PyObject *r = v ? PyNumber_Float(v) : NULL;
    Py_XDECREF(v);
    return r;
}

PyObject *hwpy_tensor_int(PyObject *self)
{
    PyObject *v = one_item(self, scalar_msg);
    PyObject *r = v ? PyNumber_Long(v) : NULL;
    Py_XDECREF(v);
    return r;
}

PyObject *hwpy_tensor_index(PyObject *self)
{
    hwrt_dtype dt;
    hwrt_tensor_dtype(T(self), &dt);
    static const char *msg = "Only integer tensors of a single element can be converted to an index.";
    if (dt != HWRT_INT8 && dt != HWRT_UINT8 && dt != HWRT_INT32 && dt != HWRT_INT64 &&
        dt != HWRT_BOOL && dt != HWRT_INT16 && dt != HWRT_UINT16 && dt != HWRT_UINT32 &&
        dt != HWRT_UINT64) {
        PyErr_SetString(PyExc_ValueError, msg);
        return NULL;
    }
    PyObject *v = one_item(self, msg);
    PyObject *r = v ? PyNumber_Long(v) : NULL;
    Py_XDECREF(v);
    return r;
}

int hwpy_tensor_bool(PyObject *self)
{
    PyObject *v = one_item(self, "The truth value of a Tensor with more than one element is "
                                 "ambiguous: use .any() / .all() on t.asnumpy()");
    int r = v ? PyObject_IsTrue(v) : -1;
    Py_XDECREF(v);
    return r;
}

/* t[key] as numpy indexes the host copy (ints, negative ints, slices, tuples, ellipsis,
 * None, boolean and integer arrays), the result a new Tensor of t's dtype (a 0-D one for
 * a single element, as MindSpore's). The read waits for every op that wrote t, so it is
 * never stale; numpy's IndexError for an index out of range. sq_item (t[i]) makes numpy
 * and Python see a sequence: np.array([t1, t2]) stacks tensors. */
PyObject *hwpy_tensor_subscript(PyObject *self, PyObject *key)
{
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(T(self), shape);
    if (ndim < 0) return NULL;
    if (ndim == 0 && PyIndex_Check(key))
        return PyErr_Format(PyExc_IndexError, "too many indices for a 0-D tensor: it has no "
                            "dimension to index (use t.item() or t[()])");
    if (hwpy_tensor_init_pending(self) < 0) return NULL;
    hwrt_dtype dt;
    hwrt_tensor_dtype(T(self), &dt);
    PyObject *arr = hwpy_tensor_asnumpy(T(self));
    PyObject *part = arr ? PyObject_GetItem(arr, key) : NULL;
    Py_XDECREF(arr);
    if (!part) return NULL;
    PyObject *r = hwpy_tensor_from_object(part, (int)dt);
    Py_DECREF(part);
    return r;
}

PyObject *hwpy_tensor_item(PyObject *self, Py_ssize_t i)
{
    PyObject *key = PyLong_FromSsize_t(i);
    PyObject *r = key ? hwpy_tensor_subscript(self, key) : NULL;
    Py_XDECREF(key);
    return r;
}

/* ---- repr / str ---- */

static PyObject *host_array(PyObject *self)
{
    if (hwpy_tensor_init_pending(self) < 0) return NULL;
    return hwpy_tensor_asnumpy(T(self));
}

/* Tensor(shape=[2, 2], dtype=Float32, value=\n[[1, 2],\n [3, 4]]), as MindSpore prints */
PyObject *hwpy_tensor_repr(PyObject *self)
{
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(T(self), shape);
    if (ndim < 0) return NULL;
    char dims[256] = "";
    for (int i = 0; i < ndim; i++)
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", i ? ", " : "",
                 (long long)shape[i]);
    hwrt_dtype dt;
    hwrt_tensor_dtype(T(self), &dt);
    PyObject *arr = host_array(self);
    PyObject *np = arr ? PyImport_ImportModule("numpy") : NULL;
    PyObject *text = NULL;
    if (np) {
        PyObject *kw = Py_BuildValue("{s:s}", "separator", ", ");
        PyObject *fn = kw ? PyObject_GetAttrString(np, "array2string") : NULL;
        PyObject *args = fn ? PyTuple_Pack(1, arr) : NULL;
        text = args ? PyObject_Call(fn, args, kw) : NULL;
        Py_XDECREF(args);
        Py_XDECREF(fn);
        Py_XDECREF(kw);
    }
    PyObject *r = text ? PyUnicode_FromFormat("Tensor(shape=[%s], dtype=%R, value=%s%U)", dims,
                                              hwpy_dtype_object(dt), ndim > 1 ? "\n" : " ", text)
                       : NULL;
    Py_XDECREF(text);
    Py_XDECREF(np);
    Py_XDECREF(arr);
    return r;
}

PyObject *hwpy_tensor_str(PyObject *self)
{
    PyObject *arr = host_array(self);
    PyObject *r = arr ? PyObject_Str(arr) : NULL;
    Py_XDECREF(arr);
    return r;
}

/* ---- properties and small methods ---- */

static PyObject *get_strides(PyObject *self, void *c)
{
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(T(self), shape);
    if (ndim < 0) return NULL;
    hwrt_dtype dt;
    hwrt_tensor_dtype(T(self), &dt);
    PyObject *tup = PyTuple_New(ndim);
    long long step = (long long)hwrt_dtype_size(dt);
    for (int i = ndim - 1; tup && i >= 0; i--) {
        PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(step));
        step *= shape[i];
    }
    return tup;
}

static PyObject *get_has_init(PyObject *self, void *c)
{
    return PyBool_FromLong(hwpy_tensor_init_of(self) != NULL);
}

static PyObject *get_init(PyObject *self, void *c)
{
    PyObject *i = hwpy_tensor_init_of(self);
    return Py_NewRef(i ? i : Py_None);
}

static PyObject *contiguous(PyObject *self, PyObject *unused)
{
    return Py_NewRef(self);         /* hwrt tensors are dense row-major */
}

static PyObject *is_contiguous(PyObject *self, PyObject *unused)
{
    Py_RETURN_TRUE;
}

static PyObject *data_ptr(PyObject *self, PyObject *unused)
{
    void *p;
    hwrt_status st = hwrt_tensor_data(T(self), &p);
    return st == HWRT_SUCCESS ? PyLong_FromVoidPtr(p) : hwpy_raise(st);
}

static PyObject *from_numpy(PyObject *unused, PyObject *array)
{
    PyObject *np = PyImport_ImportModule("numpy");
    PyObject *nd = np ? PyObject_GetAttrString(np, "ndarray") : NULL;
    int ok = nd ? PyObject_IsInstance(array, nd) : -1;
    Py_XDECREF(nd);
    Py_XDECREF(np);
    if (ok < 0) return NULL;
    if (!ok)
        return PyErr_Format(PyExc_TypeError, "For 'Tensor.from_numpy', the input should be a "
                            "numpy.ndarray, but got %.100s", Py_TYPE(array)->tp_name);
    return hwpy_tensor_from_object(array, -1);
}

/* A device copy of src with dtype dt (the same dtype: a plain copy), on the current
 * stream. New reference. */
static PyObject *device_copy(PyObject *src, hwrt_dtype dt)
{
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(T(src), shape);
    if (ndim < 0) return NULL;
    PyObject *r = hwpy_tensor_new_empty(dt, ndim, shape);
    if (!r) return NULL;
    if (hwpy_cast(T(r), T(src), hwpy_current_stream()) < 0) { Py_DECREF(r); return NULL; }
    return r;
}

/* Make self hold other's handle (other is a fresh tensor nobody else sees). */
static void take_handle(PyObject *self, PyObject *other)
{
    hwrt_tensor old = T(self);
    T(self) = T(other);
    T(other) = old;                 /* released with `other` */
    Py_DECREF(other);
}

static int need_tensor(const char *fn, PyObject *o)
{
    if (hwpy_tensor_check(o)) return 0;
    PyErr_Format(PyExc_TypeError, "For '%s', the argument must be a Tensor, but got %.100s", fn,
                 Py_TYPE(o)->tp_name);
    return -1;
}

/* t.copy_(src): src's values into t, converted to t's dtype on the device (shapes equal) */
static PyObject *copy_(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"src", "non_blocking", NULL};
    PyObject *src, *nb = Py_False;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:copy_", kwlist, &src, &nb) ||
        need_tensor("copy_", src) < 0 || hwpy_tensor_init_pending(src) < 0)
        return NULL;
    hwpy_tensor_drop_init(self);
    if (hwpy_cast(T(self), T(src), hwpy_current_stream()) < 0) return NULL;
    return Py_NewRef(self);
}

/* t.assign_value(value): t becomes a copy of value (its shape and dtype) */
static PyObject *assign_value(PyObject *self, PyObject *value)
{
    if (need_tensor("assign_value", value) < 0 || hwpy_tensor_init_pending(value) < 0)
        return NULL;
    hwrt_dtype dt;
    hwrt_tensor_dtype(T(value), &dt);
    PyObject *c = device_copy(value, dt);
    if (!c) return NULL;
    hwpy_tensor_drop_init(self);
    take_handle(self, c);
    return Py_NewRef(self);
}

/* t.set_dtype(dtype): t's values converted to dtype, in place of t's; returns t */
static PyObject *set_dtype(PyObject *self, PyObject *dtype)
{
    hwrt_dtype dt, cur;
    if (hwpy_dtype_convert(dtype, &dt) < 0) return NULL;
    hwrt_tensor_dtype(T(self), &cur);
    if (dt == cur) return Py_NewRef(self);
    if (hwpy_tensor_init_pending(self) < 0) return NULL;
    PyObject *c = device_copy(self, dt);
    if (!c) return NULL;
    take_handle(self, c);
    return Py_NewRef(self);
}

/* t.move_to(to, blocking=True) (tensor.py): a new tensor on `to`. The process's own
 * target: a device copy. "CPU" on a device target: a copy moved to the host tier of the
 * residency manager (t.location == "host"; ops bring it back), which needs
 * memory_offload="ON" and a host budget (set_offload_context offload_cpu_size). */
static PyObject *move_to(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"to", "blocking", NULL};
    PyObject *to_obj, *blocking = Py_True;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:move_to", kwlist, &to_obj, &blocking))
        return NULL;
    if (!PyBool_Check(blocking))
        return PyErr_Format(PyExc_ValueError, "The type of 'blocking' must be bool, but got %R",
                            blocking);
    const char *to = PyUnicode_Check(to_obj) ? PyUnicode_AsUTF8(to_obj) : NULL;
    if (!to || (strcmp(to, "Ascend") && strcmp(to, "GPU") && strcmp(to, "CPU")))
        return PyErr_Format(PyExc_ValueError, "The value of 'to' must be one of ['Ascend', 'GPU', "
                            "'CPU'], but got %R", to_obj);
    if (hwpy_tensor_init_pending(self) < 0) return NULL;
    const char *here = hwpy_context_target();
    int to_host = !strcmp(to, "CPU") && strcmp(here, "CPU");
    if (!to_host && strcmp(to, here))
        return PyErr_Format(PyExc_RuntimeError, "move_to(\"%s\"): this process runs on \"%s\"; "
                            "hwrt has one device target per process", to, here);
    hwrt_dtype dt;
    hwrt_tensor_dtype(T(self), &dt);
    PyObject *c = device_copy(self, dt);
    if (!c) return NULL;
    hwrt_status st = HWRT_SUCCESS;
    if (to_host) {
#ifdef HWPY_HAVE_OFFLOAD
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_stream_synchronize(hwpy_current_stream());
        if (st == HWRT_SUCCESS) st = hwrt_tensor_set_offloadable(T(c), 1);
        if (st == HWRT_SUCCESS) st = hwrt_offload_evict(T(c));
        Py_END_ALLOW_THREADS
#else
        Py_DECREF(c);
        return hwpy_raise_msg(HWRT_ERROR_NOT_SUPPORTED, "move_to(\"CPU\"): this hwrt has no "
                              "offload part (hwrt_offload.h) to hold tensors in host memory");
#endif
    } else if (blocking == Py_True) {
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_stream_synchronize(hwpy_current_stream());
        Py_END_ALLOW_THREADS
    }
    if (st != HWRT_SUCCESS) {
        Py_DECREF(c);
        return hwpy_raise_msg(st, "move_to(\"%s\"): %s%s", to, hwrt_last_error(),
                              to_host ? " (a host copy needs set_context(memory_offload=\"ON\") "
                                        "and an offload_cpu_size)" : "");
    }
    return c;
}

static PyObject *init_data(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"slice_index", "shape", "opt_shard_group", NULL};
    PyObject *a = Py_None, *b = Py_None, *c = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOO:init_data", kwlist, &a, &b, &c) ||
        hwpy_tensor_init_pending(self) < 0)
        return NULL;
    return Py_NewRef(self);
}

/* asnumpy()/numpy() of a tensor made with init= fill it first (as MindSpore's do) */
static PyObject *asnumpy(PyObject *self, PyObject *unused)
{
    return host_array(self);
}

PyMethodDef hwpy_tensor_ms_methods[] = {
    {"contiguous", contiguous, METH_NOARGS, "contiguous($self, /)\n--\n\n"
     "Returns self (hwrt tensors are dense)."},
    {"is_contiguous", is_contiguous, METH_NOARGS, "is_contiguous($self, /)\n--\n\n"
     "True (hwrt tensors are dense)."},
    {"data_ptr", data_ptr, METH_NOARGS,
     "data_ptr($self, /)\n--\n\n"
     "Returns int: device address of the data (for hwrt C calls); 0 while offloaded."},
    {"copy_", (PyCFunction)(void (*)(void))copy_, METH_VARARGS | METH_KEYWORDS,
     "copy_($self, src, non_blocking=False)\n--\n\n"
     "Returns self with src's values, converted to this dtype."},
    {"assign_value", assign_value, METH_O, "assign_value($self, value, /)\n--\n\n"
     "Returns self, a copy of value."},
    {"set_dtype", set_dtype, METH_O, "set_dtype($self, dtype, /)\n--\n\n"
     "Returns self, values converted in place."},
    {"move_to", (PyCFunction)(void (*)(void))move_to, METH_VARARGS | METH_KEYWORDS,
     "move_to($self, to, blocking=True)\n--\n\n"
     "Returns a Tensor on \"Ascend\"/\"GPU\" (this process's target) or "
     "\"CPU\" (host memory, with memory_offload ON)."},
    {"init_data", (PyCFunction)(void (*)(void))init_data, METH_VARARGS | METH_KEYWORDS,
     "init_data($self, slice_index=None, shape=None, opt_shard_group=None)\n--\n\n"
     "Returns self: fill a tensor made with init= from its initializer."},
    {"asnumpy", asnumpy, METH_NOARGS,
     "asnumpy($self, /)\n--\n\n"
     "Returns numpy.ndarray: a host copy, ordered after every op that wrote the tensor "
     "(never stale). bfloat16 is widened to float32."},
    {"numpy", asnumpy, METH_NOARGS, "numpy($self, /)\n--\n\n"
     "Same as asnumpy()."},
    {"from_numpy", from_numpy, METH_O | METH_STATIC,
     "from_numpy(array, /)\n--\n\n"
     "A Tensor with the array's dtype and values (copied to device "
     "memory: device memory cannot share the array's)."},
    {NULL}};

PyGetSetDef hwpy_tensor_ms_getset[] = {
    {"strides", get_strides, NULL, "bytes to step in each dimension", NULL},
    {"has_init", get_has_init, NULL, "made with init= and not filled yet", NULL},
    {"init", get_init, NULL, "the initializer of a tensor made with init= (else None)", NULL},
    {NULL}};

