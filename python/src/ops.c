/* Ops: hwrt.add/mul/matmul/relu/scale/sum/cast/fill as functions, Tensor methods and
 * Tensor operators (+ - * / @, unary -). Each enqueues one hwrt_op_* on the current
 * stream (the innermost StreamCtx, else the device's default stream) and returns at
 * once: results are read with asnumpy(), which orders itself after the op.
 * Shapes must match exactly (no broadcasting); a Python scalar operand of + - * / is
 * applied through fill or scale. Every op accepts out= to write into an existing tensor. */
#include "hwpy.h"
#include "../../src/base/op_table.h"   /* the kernel ops, defined once (header-only list) */

#define T(o) (((hwpy_tensor_obj *)(o))->t)

typedef struct {
    hwrt_dtype dtype;
    int ndim;
    int64_t shape[HWRT_MAX_DIMS];
} desc;

static int describe(PyObject *t, desc *d)
{
    d->ndim = hwpy_tensor_shape(T(t), d->shape);
    if (d->ndim < 0) return -1;
    hwrt_tensor_dtype(T(t), &d->dtype);
    return 0;
}

static int need_tensor(PyObject *o, const char *what)
{
    if (hwpy_tensor_check(o)) return 0;
    PyErr_Format(PyExc_TypeError, "%s must be an hwrt.Tensor, not %.100s", what,
                 Py_TYPE(o)->tp_name);
    return -1;
}

/* The output: `out` if given (a Tensor), else a new tensor of d. New reference. */
static PyObject *output(PyObject *out, const desc *d)
{
    if (out && out != Py_None) {
        if (need_tensor(out, "out") < 0) return NULL;
        return Py_NewRef(out);
    }
    return hwpy_tensor_new_empty(d->dtype, d->ndim, d->shape);
}

/* Release the GIL around the enqueue (launch_blocking makes it wait for the device). */
#define ENQUEUE(call)                                                                          \
    do {                                                                                       \
        hwrt_status st_;                                                                       \
        Py_BEGIN_ALLOW_THREADS                                                                 \
        st_ = (call);                                                                          \
        Py_END_ALLOW_THREADS                                                                   \
        if (st_ != HWRT_SUCCESS) {                                                             \
            Py_DECREF(res);                                                                    \
            return hwpy_raise(st_);                                                            \
        }                                                                                      \
    } while (0)

/* hwrt._kernel_ops: the op table as the runtime validates against it, keyed by the Python
 * function: {"matmul": ("MatMul", 2, ("float32", ...), False), ...}: kernel name (as the
 * profiler and HWRT_SIM_FAULTS op= name it), tensor inputs, accepted input dtypes, and
 * whether the output has its own dtype. */
int hwpy_ops_init(PyObject *module)
{
    static const struct { const char *name, *py; int arity; unsigned dtypes; int out_dtype; }
    ops[] = {
#define HWPY_OP(id, nm, p, ar, dts, od) {nm, p, ar, dts, od},
        HWI_OP_LIST(HWPY_OP)
#undef HWPY_OP
    };
    PyObject *d = PyDict_New();
    for (size_t k = 0; d && k < sizeof ops / sizeof ops[0]; k++) {
        PyObject *dts = PyList_New(0);
        for (int i = 0; dts && i < HWRT_DTYPE_COUNT; i++) {
            if (!(ops[k].dtypes & HWI_DT(i))) continue;
            PyObject *n = PyUnicode_FromString(hwrt_dtype_name((hwrt_dtype)i));
            if (!n || PyList_Append(dts, n) < 0) Py_CLEAR(dts);
            Py_XDECREF(n);
        }
        PyObject *tup = dts ? PyList_AsTuple(dts) : NULL;
        Py_XDECREF(dts);
        PyObject *row = tup ? Py_BuildValue("(siNO)", ops[k].name, ops[k].arity, tup,
                                            ops[k].out_dtype ? Py_True : Py_False) : NULL;
        if (!row || PyDict_SetItemString(d, ops[k].py, row) < 0) Py_CLEAR(d);
        Py_XDECREF(row);
    }
    if (!d || PyModule_AddObject(module, "_kernel_ops", d) < 0) {
        Py_XDECREF(d);
        return -1;
    }
    return 0;
}

static PyObject *fill_like(const desc *d, double value, PyObject *out, hwrt_stream s)
{
    PyObject *res = output(out, d);
    if (!res) return NULL;
    ENQUEUE(hwrt_op_fill(T(res), value, s));
    return res;
}

/* An operand as a tensor shaped like `like`: tensors as they are, numbers filled,
 * anything else (numpy arrays, lists) uploaded and converted to like's dtype. */
static PyObject *operand(PyObject *o, const desc *like, hwrt_stream s)
{
    if (hwpy_tensor_check(o)) return Py_NewRef(o);
    if (PyFloat_Check(o) || PyLong_Check(o) || PyBool_Check(o)) {
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) return NULL;
        return fill_like(like, v, NULL, s);
    }
    return hwpy_tensor_from_object(o, (int)like->dtype);
}

typedef hwrt_status (*binary_fn)(hwrt_tensor, hwrt_tensor, hwrt_tensor, hwrt_stream);

static PyObject *binary(binary_fn fn, PyObject *a, PyObject *b, PyObject *out, hwrt_stream s)
{
    desc d;
    if (need_tensor(a, "a") < 0 || describe(a, &d) < 0) return NULL;
    PyObject *bt = operand(b, &d, s);
    if (!bt) return NULL;
    PyObject *res = output(out, &d);
    if (!res) { Py_DECREF(bt); return NULL; }
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = fn(T(res), T(a), T(bt), s);
    Py_END_ALLOW_THREADS
    Py_DECREF(bt);
    if (st != HWRT_SUCCESS) { Py_DECREF(res); return hwpy_raise(st); }
    return res;
}

static PyObject *scale(PyObject *a, double alpha, PyObject *out, hwrt_stream s)
{
    desc d;
    if (need_tensor(a, "a") < 0 || describe(a, &d) < 0) return NULL;
    PyObject *res = output(out, &d);
    if (!res) return NULL;
    ENQUEUE(hwrt_op_scale(T(res), T(a), alpha, s));
    return res;
}

/* A tensor of shape d holding src's bytes (a reshape: hwrt tensors are dense row-major),
 * copied on s. New reference. */
static PyObject *reshaped(PyObject *src, const desc *d, hwrt_stream s)
{
    PyObject *r = hwpy_tensor_new_empty(d->dtype, d->ndim, d->shape);
    void *from, *to;
    size_t bytes;
    hwrt_status st = r ? hwrt_tensor_data(T(src), &from) : HWRT_SUCCESS;
    if (r && st == HWRT_SUCCESS) st = hwrt_tensor_data(T(r), &to);
    if (r && st == HWRT_SUCCESS) st = hwrt_tensor_nbytes(T(r), &bytes);
    if (r && st == HWRT_SUCCESS)
        st = hwrt_memcpy_async(to, from, bytes, HWRT_MEMCPY_DEVICE_TO_DEVICE, s);
    if (r && st != HWRT_SUCCESS) { Py_DECREF(r); return hwpy_raise(st); }
    return r;
}

/* MindSpore's matmul of a 2-D by a 1-D tensor (and 1-D by 2-D): the vector as a column
 * (row), the product's extra dimension dropped. The result is copied out of the [M,1]
 * product after the stream finished it, so that reads of the result never see it early:
 * a matrix-vector product synchronizes s. */
static PyObject *matmul_vector(PyObject *a, const desc *da, PyObject *b, const desc *db,
                               hwrt_stream s)
{
    int vec_right = db->ndim == 1;
    desc dv = {.dtype = vec_right ? db->dtype : da->dtype, .ndim = 2};
    dv.shape[0] = vec_right ? db->shape[0] : 1;
    dv.shape[1] = vec_right ? 1 : da->shape[0];
    PyObject *v = reshaped(vec_right ? b : a, &dv, s);
    if (!v) return NULL;
    desc dp = {.dtype = da->dtype, .ndim = 2};
    dp.shape[0] = vec_right ? da->shape[0] : 1;
    dp.shape[1] = vec_right ? 1 : db->shape[1];
    PyObject *prod = hwpy_tensor_new_empty(dp.dtype, 2, dp.shape);
    if (!prod) { Py_DECREF(v); return NULL; }
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_op_matmul(T(prod), vec_right ? T(a) : T(v), vec_right ? T(v) : T(b), s);
    if (st == HWRT_SUCCESS) st = hwrt_stream_synchronize(s);
    Py_END_ALLOW_THREADS
    Py_DECREF(v);
    desc dr = {.dtype = da->dtype, .ndim = 1};
    dr.shape[0] = vec_right ? da->shape[0] : db->shape[1];
    PyObject *res = st == HWRT_SUCCESS ? hwpy_tensor_new_empty(dr.dtype, 1, dr.shape) : NULL;
    void *from, *to;
    size_t bytes;
    if (res) st = hwrt_tensor_data(T(prod), &from);
    if (res && st == HWRT_SUCCESS) st = hwrt_tensor_data(T(res), &to);
    if (res && st == HWRT_SUCCESS) st = hwrt_tensor_nbytes(T(res), &bytes);
    if (res && st == HWRT_SUCCESS) {
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_memcpy(to, from, bytes, HWRT_MEMCPY_DEVICE_TO_DEVICE);
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(prod);
    if (st != HWRT_SUCCESS) { Py_XDECREF(res); return hwpy_raise(st); }
    return res;
}

static PyObject *matmul(PyObject *a, PyObject *b, PyObject *out, hwrt_stream s)
{
    desc da, db;
    if (need_tensor(a, "a") < 0 || need_tensor(b, "b") < 0 || describe(a, &da) < 0 ||
        describe(b, &db) < 0)
        return NULL;
    if ((!out || out == Py_None) && ((da.ndim == 2 && db.ndim == 1) || (da.ndim == 1 && db.ndim == 2))) {
        int64_t k_a = da.ndim == 2 ? da.shape[1] : da.shape[0];
        int64_t k_b = db.ndim == 2 ? db.shape[0] : db.shape[0];
        if (k_a != k_b)
            return hwpy_raise_msg(HWRT_ERROR_INVALID_ARGUMENT, "matmul: a's last dimension (%lld) "
                                  "must equal b's first (%lld)", (long long)k_a, (long long)k_b);
        if (da.dtype != db.dtype)
            return hwpy_raise_msg(HWRT_ERROR_INVALID_ARGUMENT, "matmul: dtypes differ (%s, %s)",
                                  hwrt_dtype_name(da.dtype), hwrt_dtype_name(db.dtype));
        return matmul_vector(a, &da, b, &db, s);
    }
    /* [M,K] @ [K,N] -> [M,N]; other ranks get hwrt's own sentence from the op */
    desc d = {.dtype = da.dtype, .ndim = 2};
    d.shape[0] = da.ndim == 2 ? da.shape[0] : 0;
    d.shape[1] = db.ndim == 2 ? db.shape[1] : 0;
    PyObject *res = output(out, &d);
    if (!res) return NULL;
    ENQUEUE(hwrt_op_matmul(T(res), T(a), T(b), s));
    return res;
}

static PyObject *sum(PyObject *a, PyObject *axis_obj, PyObject *out, hwrt_stream s)
{
    desc da;
    if (need_tensor(a, "a") < 0 || describe(a, &da) < 0) return NULL;
    int axis = -1;                                /* hwrt: -1 sums everything */
    desc d = {.dtype = da.dtype == HWRT_BOOL ? HWRT_INT64 : da.dtype, .ndim = 0};
    if (axis_obj && axis_obj != Py_None) {
        long ax = PyLong_AsLong(axis_obj);
        if (ax == -1 && PyErr_Occurred()) return NULL;
        if (ax < -da.ndim || ax >= da.ndim)
            return PyErr_Format(PyExc_ValueError, "axis %ld is out of range for a %d-D tensor",
                                ax, da.ndim);
        axis = (int)(ax < 0 ? ax + da.ndim : ax);
        for (int i = 0; i < da.ndim; i++)
            if (i != axis) d.shape[d.ndim++] = da.shape[i];
    }
    PyObject *res = output(out, &d);
    if (!res) return NULL;
    ENQUEUE(hwrt_op_sum(T(res), T(a), axis, s));
    return res;
}

static PyObject *cast(PyObject *a, hwrt_dtype dt, PyObject *out, hwrt_stream s)
{
    desc d;
    if (need_tensor(a, "a") < 0 || describe(a, &d) < 0) return NULL;
    d.dtype = dt;
    PyObject *res = output(out, &d);
    if (!res) return NULL;
    if (hwpy_cast(T(res), T(a), s) < 0) Py_CLEAR(res);
    return res;
}

/* ---- module functions ---- */

#define STREAM_OR_FAIL(obj, s) if (hwpy_stream_arg((obj), &(s)) < 0) return NULL

static PyObject *f_add(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"a", "b", "out", "stream", NULL};
    PyObject *a, *b, *out = Py_None, *so = Py_None;
    hwrt_stream s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$OO:add", kwlist, &a, &b, &out, &so))
        return NULL;
    STREAM_OR_FAIL(so, s);
    if (!hwpy_tensor_check(a) && hwpy_tensor_check(b)) { PyObject *x = a; a = b; b = x; }
    return binary(hwrt_op_add, a, b, out, s);
}

static PyObject *f_mul(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"a", "b", "out", "stream", NULL};
    PyObject *a, *b, *out = Py_None, *so = Py_None;
    hwrt_stream s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$OO:mul", kwlist, &a, &b, &out, &so))
        return NULL;
    STREAM_OR_FAIL(so, s);
    if (!hwpy_tensor_check(a) && hwpy_tensor_check(b)) { PyObject *x = a; a = b; b = x; }
    if (hwpy_tensor_check(a) && (PyFloat_Check(b) || PyLong_Check(b))) {
        double v = PyFloat_AsDouble(b);
        if (v == -1.0 && PyErr_Occurred()) return NULL;
        return scale(a, v, out, s);
    }
    return binary(hwrt_op_mul, a, b, out, s);
}

static PyObject *f_matmul(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"a", "b", "out", "stream", NULL};
    PyObject *a, *b, *out = Py_None, *so = Py_None;
    hwrt_stream s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$OO:matmul", kwlist, &a, &b, &out, &so))
        return NULL;
    STREAM_OR_FAIL(so, s);
    return matmul(a, b, out, s);
}

static PyObject *f_relu(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"a", "out", "stream", NULL};
    PyObject *a, *out = Py_None, *so = Py_None;
    hwrt_stream s;
    desc d;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OO:relu", kwlist, &a, &out, &so))
        return NULL;
    STREAM_OR_FAIL(so, s);
    if (need_tensor(a, "a") < 0 || describe(a, &d) < 0) return NULL;
    PyObject *res = output(out, &d);
    if (!res) return NULL;
    ENQUEUE(hwrt_op_relu(T(res), T(a), s));
    return res;
}

static PyObject *f_scale(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"a", "alpha", "out", "stream", NULL};
    PyObject *a, *out = Py_None, *so = Py_None;
    double alpha;
    hwrt_stream s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Od|$OO:scale", kwlist, &a, &alpha, &out, &so))
        return NULL;
    STREAM_OR_FAIL(so, s);
    return scale(a, alpha, out, s);
}

static PyObject *f_sum(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"a", "axis", "out", "stream", NULL};
    PyObject *a, *axis = Py_None, *out = Py_None, *so = Py_None;
    hwrt_stream s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$OO:sum", kwlist, &a, &axis, &out, &so))
        return NULL;
    STREAM_OR_FAIL(so, s);
    return sum(a, axis, out, s);
}

static PyObject *f_cast(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"a", "dtype", "out", "stream", NULL};
    PyObject *a, *dto, *out = Py_None, *so = Py_None;
    hwrt_stream s;
    hwrt_dtype dt;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$OO:cast", kwlist, &a, &dto, &out, &so))
        return NULL;
    STREAM_OR_FAIL(so, s);
    if (hwpy_dtype_convert(dto, &dt) < 0) return NULL;
    return cast(a, dt, out, s);
}

/* full(shape, value, dtype=float32), zeros(shape, dtype), ones(shape, dtype) */
static PyObject *make_full(PyObject *shape_obj, double value, int dt)
{
    desc d = {.dtype = dt >= 0 ? (hwrt_dtype)dt : HWRT_FLOAT32};
    d.ndim = hwpy_parse_shape(shape_obj, d.shape);
    if (d.ndim < 0) return NULL;
    return fill_like(&d, value, NULL, hwpy_current_stream());
}

static PyObject *f_full(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"shape", "fill_value", "dtype", NULL};
    PyObject *shape;
    double v;
    int dt = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Od|O&:full", kwlist, &shape, &v,
                                     hwpy_dtype_converter_opt, &dt))
        return NULL;
    return make_full(shape, v, dt);
}

static PyObject *f_zeros(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"shape", "dtype", NULL};
    PyObject *shape;
    int dt = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O&:zeros", kwlist, &shape,
                                     hwpy_dtype_converter_opt, &dt))
        return NULL;
    return make_full(shape, 0.0, dt);
}

static PyObject *f_ones(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"shape", "dtype", NULL};
    PyObject *shape;
    int dt = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O&:ones", kwlist, &shape,
                                     hwpy_dtype_converter_opt, &dt))
        return NULL;
    return make_full(shape, 1.0, dt);
}

#define KW(fn) (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS
PyMethodDef hwpy_ops_methods[] = {
    {"add", KW(f_add), "add($module, a, b, *, out=None, stream=None)\n--\n\n"
     "a + b elementwise (b may be a number)."},
    {"mul", KW(f_mul), "mul($module, a, b, *, out=None, stream=None)\n--\n\n"
     "a * b elementwise (b may be a number)."},
    {"matmul", KW(f_matmul), "matmul($module, a, b, *, out=None, stream=None)\n--\n\n"
     "[M,K] @ [K,N] through BLAS."},
    {"relu", KW(f_relu), "relu($module, a, *, out=None, stream=None)\n--\n\n"
     "max(a, 0)."},
    {"scale", KW(f_scale), "scale($module, a, alpha, *, out=None, stream=None)\n--\n\n"
     "alpha * a."},
    {"sum", KW(f_sum), "sum($module, a, axis=None, *, out=None, stream=None)\n--\n\n"
     "Sum of all elements (0-d result) or along one axis."},
    {"cast", KW(f_cast), "cast($module, a, dtype, *, out=None, stream=None)\n--\n\n"
     "Elementwise conversion."},
    {"full", KW(f_full), "full($module, shape, fill_value, dtype=None)\n--\n\n"
     "A filled tensor (dtype None: float32)."},
    {"zeros", KW(f_zeros), "zeros($module, shape, dtype=None)\n--\n\n"
     "A tensor of zeros (dtype None: float32)."},
    {"ones", KW(f_ones), "ones($module, shape, dtype=None)\n--\n\n"
     "A tensor of ones (dtype None: float32)."},
    {NULL}};

/* ---- Tensor methods ---- */

static PyObject *m_astype(PyObject *self, PyObject *dto)
{
    hwrt_dtype dt;
    if (hwpy_dtype_convert(dto, &dt) < 0) return NULL;
    return cast(self, dt, NULL, hwpy_current_stream());
}

static PyObject *m_sum(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"axis", NULL};
    PyObject *axis = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:sum", kwlist, &axis)) return NULL;
    return sum(self, axis, NULL, hwpy_current_stream());
}

static PyObject *m_relu(PyObject *self, PyObject *unused)
{
    desc d;
    if (describe(self, &d) < 0) return NULL;
    PyObject *res = output(NULL, &d);
    if (!res) return NULL;
    ENQUEUE(hwrt_op_relu(T(res), T(self), hwpy_current_stream()));
    return res;
}

static PyObject *m_matmul(PyObject *self, PyObject *b)
{
    return matmul(self, b, NULL, hwpy_current_stream());
}

static PyObject *m_fill(PyObject *self, PyObject *v)
{
    double value = PyFloat_AsDouble(v);
    if (value == -1.0 && PyErr_Occurred()) return NULL;
    desc d;
    if (describe(self, &d) < 0) return NULL;
    return fill_like(&d, value, self, hwpy_current_stream());
}

PyMethodDef hwpy_tensor_op_methods[] = {
    {"astype", m_astype, METH_O, "astype($self, dtype, /)\n--\n\n"
     "Returns Tensor: converted on the device."},
    {"sum", KW(m_sum), "sum($self, axis=None)\n--\n\n"
     "Returns Tensor"},
    {"relu", m_relu, METH_NOARGS, "relu($self, /)\n--\n\n"
     "Returns Tensor"},
    {"matmul", m_matmul, METH_O, "matmul($self, b, /)\n--\n\n"
     "Returns Tensor"},
    {"fill", m_fill, METH_O, "fill($self, value, /)\n--\n\n"
     "Returns self: set every element (enqueued)."},
    {NULL}};

/* ---- operators ---- */

static int is_number(PyObject *o) { return PyFloat_Check(o) || PyLong_Check(o); }

static PyObject *nb_add(PyObject *a, PyObject *b)
{
    if (!hwpy_tensor_check(a)) { PyObject *x = a; a = b; b = x; }
    if (!is_number(b) && !hwpy_tensor_check(b)) Py_RETURN_NOTIMPLEMENTED;
    return binary(hwrt_op_add, a, b, NULL, hwpy_current_stream());
}

static PyObject *nb_mul(PyObject *a, PyObject *b)
{
    if (!hwpy_tensor_check(a)) { PyObject *x = a; a = b; b = x; }
    if (is_number(b)) {
        double v = PyFloat_AsDouble(b);
        if (v == -1.0 && PyErr_Occurred()) return NULL;
        return scale(a, v, NULL, hwpy_current_stream());
    }
    if (!hwpy_tensor_check(b)) Py_RETURN_NOTIMPLEMENTED;
    return binary(hwrt_op_mul, a, b, NULL, hwpy_current_stream());
}

static PyObject *nb_negative(PyObject *a)
{
    return scale(a, -1.0, NULL, hwpy_current_stream());
}

static PyObject *nb_sub(PyObject *a, PyObject *b)
{
    hwrt_stream s = hwpy_current_stream();
    if (hwpy_tensor_check(a) && is_number(b)) {        /* a - x */
        double v = PyFloat_AsDouble(b);
        if (v == -1.0 && PyErr_Occurred()) return NULL;
        PyObject *nb = PyFloat_FromDouble(-v);
        PyObject *res = nb ? binary(hwrt_op_add, a, nb, NULL, s) : NULL;
        Py_XDECREF(nb);
        return res;
    }
    if (!hwpy_tensor_check(b) || (!hwpy_tensor_check(a) && !is_number(a)))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *neg = scale(b, -1.0, NULL, s);            /* a - b = (-b) + a */
    PyObject *res = neg ? binary(hwrt_op_add, neg, a, NULL, s) : NULL;
    Py_XDECREF(neg);
    return res;
}

static PyObject *nb_truediv(PyObject *a, PyObject *b)
{
    if (!hwpy_tensor_check(a) || !is_number(b)) Py_RETURN_NOTIMPLEMENTED;
    double v = PyFloat_AsDouble(b);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    if (v == 0.0) {
        PyErr_SetString(PyExc_ZeroDivisionError, "tensor division by zero");
        return NULL;
    }
    return scale(a, 1.0 / v, NULL, hwpy_current_stream());
}

static PyObject *nb_matmul(PyObject *a, PyObject *b)
{
    if (!hwpy_tensor_check(a) || !hwpy_tensor_check(b)) Py_RETURN_NOTIMPLEMENTED;
    return matmul(a, b, NULL, hwpy_current_stream());
}

PyNumberMethods hwpy_tensor_as_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub,
    .nb_multiply = nb_mul,
    .nb_negative = nb_negative,
    .nb_true_divide = nb_truediv,
    .nb_matrix_multiply = nb_matmul,
    .nb_float = hwpy_tensor_float,       /* tensor_ms.c: one-element tensors */
    .nb_int = hwpy_tensor_int,
    .nb_index = hwpy_tensor_index,
    .nb_bool = hwpy_tensor_bool,
};
