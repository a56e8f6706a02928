/* hwrt.common.initializer (MindSpore's common/initializer.py): Initializer and Zero, One,
 * Constant(value), Normal(sigma=0.01, mean=0.0), Uniform(scale=0.07),
 * TruncatedNormal(sigma=0.01, mean=0.0, a=-2.0, b=2.0), XavierUniform(gain=1),
 * initializer(init, shape=None, dtype=float32); and Tensor(init=..., shape=..., dtype=...)
 * with has_init / init_data().
 *
 * A tensor made with init= has its device memory from the start (an hwrt tensor is its
 * allocation) and is filled by init_data() or by the first read (asnumpy, item, float,
 * an op method of this module's): Zero/One/Constant with hwrt's fill op on the device,
 * the random ones drawn by numpy on the host and uploaded. The initializer waiting for
 * each such tensor is kept here by the tensor's address, dropped with the tensor. */
#include "hwpy.h"

#include <math.h>
#include <string.h>

#define T(o) (((hwpy_tensor_obj *)(o))->t)

static PyObject *pending;          /* id(tensor) -> (initializer, weakref to the tensor) */
static PyObject *base_class;       /* Initializer */

PyObject *hwpy_tensor_init_of(PyObject *t)
{
    if (!pending) return NULL;
    PyObject *key = PyLong_FromVoidPtr(t);
    PyObject *v = key ? PyDict_GetItemWithError(pending, key) : NULL;
    Py_XDECREF(key);
    if (!v) { PyErr_Clear(); return NULL; }
    return PyTuple_GET_ITEM(v, 0);
}

void hwpy_tensor_drop_init(PyObject *t)
{
    if (!pending) return;
    PyObject *key = PyLong_FromVoidPtr(t);
    if (key && PyDict_DelItem(pending, key) < 0) PyErr_Clear();
    Py_XDECREF(key);
}

/* weakref callback: the tensor went, forget its initializer */
static PyObject *forget(PyObject *key, PyObject *ref)
{
    if (PyDict_DelItem(pending, key) < 0) PyErr_Clear();
    Py_RETURN_NONE;
}
static PyMethodDef forget_def = {"_forget", forget, METH_O, NULL};

static int remember(PyObject *t, PyObject *init)
{
    PyObject *key = PyLong_FromVoidPtr(t);
    PyObject *cb = key ? PyCFunction_New(&forget_def, key) : NULL;
    PyObject *ref = cb ? PyWeakref_NewRef(t, cb) : NULL;
    PyObject *v = ref ? PyTuple_Pack(2, init, ref) : NULL;
    int rc = v ? PyDict_SetItem(pending, key, v) : -1;
    Py_XDECREF(v);
    Py_XDECREF(ref);
    Py_XDECREF(cb);
    Py_XDECREF(key);
    return rc;
}

static double attr_double(PyObject *o, const char *name, double def)
{
    PyObject *v = PyObject_GetAttrString(o, name);
    if (!v) { PyErr_Clear(); return def; }
    double d = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return d;
}

/* numpy draws for the random initializers: an array of shape and numpy dtype name */
static PyObject *draw(PyObject *init, const char *kind, PyObject *shape, const int64_t *dims,
                      int ndim)
{
    PyObject *np = PyImport_ImportModule("numpy");
    PyObject *rnd = np ? PyObject_GetAttrString(np, "random") : NULL;
    PyObject *arr = NULL;
    if (!rnd) goto out;
    if (!strcmp(kind, "normal") || !strcmp(kind, "truncatednormal")) {
        double sigma = attr_double(init, "sigma", 0.01), mean = attr_double(init, "mean", 0.0);
        arr = PyObject_CallMethod(rnd, "normal", "ddO", mean, sigma, shape);
        if (arr && !strcmp(kind, "truncatednormal")) {
            /* draw again where outside [a, b], then clip what is left */
            double a = attr_double(init, "a", -2.0), b = attr_double(init, "b", 2.0);
            for (int round = 0; arr && round < 64; round++) {
                PyObject *lo = PyObject_CallMethod(np, "less", "Od", arr, a);
                PyObject *hi = lo ? PyObject_CallMethod(np, "greater", "Od", arr, b) : NULL;
                PyObject *bad = hi ? PyNumber_Or(lo, hi) : NULL;
                PyObject *any = bad ? PyObject_CallMethod(bad, "any", NULL) : NULL;
                int more = any ? PyObject_IsTrue(any) : -1;
                PyObject *fresh = more == 1 ? PyObject_CallMethod(rnd, "normal", "ddO", mean,
                                                                   sigma, shape) : NULL;
                PyObject *mixed = fresh ? PyObject_CallMethod(np, "where", "OOO", bad, fresh, arr)
                                        : NULL;
                Py_XDECREF(lo); Py_XDECREF(hi); Py_XDECREF(bad); Py_XDECREF(any);
                Py_XDECREF(fresh);
                if (more != 1) { if (more < 0) Py_CLEAR(arr); break; }
                Py_SETREF(arr, mixed);
            }
            if (arr) Py_SETREF(arr, PyObject_CallMethod(np, "clip", "Odd", arr, a, b));
        }
    } else if (!strcmp(kind, "uniform") || !strcmp(kind, "xavieruniform")) {
        double bound = attr_double(init, "scale", 0.07);
        if (!strcmp(kind, "xavieruniform")) {
            if (ndim < 2) {
                PyErr_SetString(PyExc_ValueError, "'fan_in' and 'fan_out' can not be computed "
                                "for tensor with fewer than 2 dimensions");
                goto out;
            }
            double rf = 1;
            for (int i = 2; i < ndim; i++) rf *= (double)dims[i];
            double fan_in = (double)dims[1] * rf, fan_out = (double)dims[0] * rf;
            bound = attr_double(init, "gain", 1.0) * sqrt(6.0 / (fan_in + fan_out));
        }
        arr = PyObject_CallMethod(rnd, "uniform", "ddO", -bound, bound, shape);
    } else {
        PyErr_Format(PyExc_ValueError, "initializer kind '%s' is unknown", kind);
    }
out:
    Py_XDECREF(rnd);
    Py_XDECREF(np);
    return arr;
}

/* Fill tensor t (a Tensor object) as init says, on the current stream. */
static int fill_from(PyObject *t, PyObject *init)
{
    PyObject *k = PyObject_GetAttrString(init, "_kind");
    const char *kind = k ? PyUnicode_AsUTF8(k) : NULL;
    if (!kind) { Py_XDECREF(k); return -1; }
    hwrt_stream s = hwpy_current_stream();
    hwrt_status st = HWRT_SUCCESS;
    int rc = 0;
    if (!strcmp(kind, "zeros") || !strcmp(kind, "ones") || !strcmp(kind, "constant")) {
        double v = !strcmp(kind, "ones") ? 1.0 : 0.0;
        if (!strcmp(kind, "constant")) {
            v = attr_double(init, "value", 0.0);
            if (PyErr_Occurred()) { Py_DECREF(k); return -1; }
        }
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_op_fill(T(t), v, s);
        Py_END_ALLOW_THREADS
    } else {
        int64_t dims[HWRT_MAX_DIMS];
        int ndim = hwpy_tensor_shape(T(t), dims);
        hwrt_dtype dt;
        hwrt_tensor_dtype(T(t), &dt);
        PyObject *shape = ndim >= 0 ? PyTuple_New(ndim) : NULL;
        for (int i = 0; shape && i < ndim; i++) PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(dims[i]));
        PyObject *arr = shape ? draw(init, kind, shape, dims, ndim) : NULL;
        PyObject *host = arr ? hwpy_tensor_from_object(arr, (int)dt) : NULL;
        if (!host || hwpy_cast(T(t), T(host), s) < 0) rc = -1;
        Py_XDECREF(host);
        Py_XDECREF(arr);
        Py_XDECREF(shape);
    }
    Py_DECREF(k);
    if (rc == 0 && st != HWRT_SUCCESS) { hwpy_raise(st); rc = -1; }
    return rc;
}

int hwpy_tensor_init_pending(PyObject *t)
{
    PyObject *init = hwpy_tensor_init_of(t);
    if (!init) return 0;
    Py_INCREF(init);
    int rc = fill_from(t, init);
    Py_DECREF(init);
    if (rc == 0) hwpy_tensor_drop_init(t);      /* filled: only now is it initialized */
    return rc;
}

/* ---- Tensor(init=..., shape=..., dtype=...) ---- */

static int is_initializer(PyObject *o)
{
    return PyObject_IsInstance(o, base_class);
}

/* Tensor.__new__ (the type's tp_new, tensor.c): init= here, the rest in hwpy_tensor_new. */
PyObject *hwpy_tensor_new_init(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *init = kw ? PyDict_GetItemString(kw, "init") : NULL;
    if (!init || init == Py_None) {
        if (!init) return hwpy_tensor_new(type, args, kw);
        PyObject *kw2 = PyDict_Copy(kw);
        if (!kw2 || PyDict_DelItemString(kw2, "init") < 0) { Py_XDECREF(kw2); return NULL; }
        PyObject *r = hwpy_tensor_new(type, args, kw2);
        Py_DECREF(kw2);
        return r;
    }
    int ok = is_initializer(init);
    if (ok < 0) return NULL;
    if (!ok)
        return PyErr_Format(PyExc_TypeError, "For 'Tensor', 'init' must be an Initializer "
                            "(hwrt.common.initializer), but got %.100s", Py_TYPE(init)->tp_name);
    PyObject *shape = PyDict_GetItemString(kw, "shape");
    if ((PyTuple_GET_SIZE(args) && PyTuple_GET_ITEM(args, 0) != Py_None) ||
        (PyDict_GetItemString(kw, "input_data") && PyDict_GetItemString(kw, "input_data") != Py_None))
        return PyErr_Format(PyExc_TypeError, "For 'Tensor', 'input_data' and 'init' can not be "
                            "given both");
    if (!shape || shape == Py_None)
        return PyErr_Format(PyExc_ValueError, "For 'Tensor', 'shape' must be given with 'init'");
    PyObject *kw2 = PyDict_Copy(kw);
    if (!kw2 || PyDict_DelItemString(kw2, "init") < 0) { Py_XDECREF(kw2); return NULL; }
    PyObject *t = hwpy_tensor_new(type, args, kw2);   /* Tensor(shape=, dtype=): memory */
    Py_DECREF(kw2);
    if (t && remember(t, init) < 0) Py_CLEAR(t);
    return t;
}

/* ---- the initializer classes ---- */

/* Initializer.__init__(self, *args, **kwargs): the class's _params ((name, default), ...)
 * bound from args and kwargs into attributes; _kwargs keeps them as MindSpore does. */
static PyObject *init_init(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *cls = (PyObject *)Py_TYPE(self);
    PyObject *params = PyObject_GetAttrString(cls, "_params");
    if (!params) return NULL;
    Py_ssize_t np_ = PyTuple_GET_SIZE(params), na = PyTuple_GET_SIZE(args);
    PyObject *bound = PyDict_New();
    if (!bound) { Py_DECREF(params); return NULL; }
    if (na > np_) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %zd arguments (%zd given)",
                     ((PyTypeObject *)cls)->tp_name, np_, na);
        goto fail;
    }
    for (Py_ssize_t i = 0; i < np_; i++) {
        PyObject *p = PyTuple_GET_ITEM(params, i), *name = PyTuple_GET_ITEM(p, 0);
        PyObject *v = i < na ? PyTuple_GET_ITEM(args, i) : NULL;
        PyObject *kv = kw ? PyDict_GetItemWithError(kw, name) : NULL;
        if (kv && v) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for '%U'",
                         ((PyTypeObject *)cls)->tp_name, name);
            goto fail;
        }
        v = v ? v : kv ? kv : PyTuple_GET_SIZE(p) > 1 ? PyTuple_GET_ITEM(p, 1) : NULL;
        if (!v) {           /* required (NULL default stored as a missing marker) */
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%U'",
                         ((PyTypeObject *)cls)->tp_name, name);
            goto fail;
        }
        if (PyDict_SetItem(bound, name, v) < 0 || PyObject_SetAttr(self, name, v) < 0) goto fail;
    }
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (kw && PyDict_Next(kw, &pos, &k, &v))
        if (!PyDict_Contains(bound, k)) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
                         ((PyTypeObject *)cls)->tp_name, k);
            goto fail;
        }
    if (PyObject_SetAttrString(self, "_kwargs", bound) < 0) goto fail;
    Py_DECREF(bound);
    Py_DECREF(params);
    Py_RETURN_NONE;
fail:
    Py_DECREF(bound);
    Py_DECREF(params);
    return NULL;
}

static PyObject *init_wrapper(PyObject *unused, PyObject *args, PyObject *kw)
{
    /* args[0] is self (bound through instancemethod) */
    if (PyTuple_GET_SIZE(args) < 1) return PyErr_Format(PyExc_TypeError, "__init__ needs self");
    PyObject *rest = PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args));
    PyObject *r = rest ? init_init(PyTuple_GET_ITEM(args, 0), rest, kw) : NULL;
    Py_XDECREF(rest);
    return r;
}
/* The __init__ of a class binding params: init_wrapper, with a text signature naming them
 * ("__init__($self, sigma=0.01, mean=0.0)"). Its method def and docstring live as long as
 * the class, which is as long as the process (the module's classes are never freed). */
static PyObject *init_method(PyObject *params)
{
    PyObject *text = PyUnicode_FromString("__init__($self");
    for (Py_ssize_t i = 0; text && i < PyTuple_GET_SIZE(params); i++) {
        PyObject *p = PyTuple_GET_ITEM(params, i), *next;
        if (PyTuple_GET_SIZE(p) > 1)
            next = PyUnicode_FromFormat("%U, %U=%R", text, PyTuple_GET_ITEM(p, 0),
                                        PyTuple_GET_ITEM(p, 1));
        else
            next = PyUnicode_FromFormat("%U, %U", text, PyTuple_GET_ITEM(p, 0));
        Py_SETREF(text, next);
    }
    if (text) Py_SETREF(text, PyUnicode_FromFormat("%U)\n--\n\nBind the initializer's "
                                                   "arguments.", text));
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
    PyMethodDef *def = utf8 ? PyMem_RawMalloc(sizeof *def) : NULL;
    char *doc = def ? strdup(utf8) : NULL;
    Py_XDECREF(text);
    if (!doc) {
        PyMem_RawFree(def);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    *def = (PyMethodDef){"__init__", (PyCFunction)(void (*)(void))init_wrapper,
                         METH_VARARGS | METH_KEYWORDS, doc};
    PyObject *f = PyCFunction_New(def, NULL);
    PyObject *im = f ? PyInstanceMethod_New(f) : NULL;
    Py_XDECREF(f);
    return im;
}

/* initializer(init, shape=None, dtype=float32) -> Tensor with init (initializer.py) */
static PyObject *initializer_fn(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"init", "shape", "dtype", NULL};
    PyObject *init, *shape = Py_None, *dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:initializer", kwlist, &init, &shape, &dtype))
        return NULL;
    PyObject *mod = PyImport_ImportModule("hwrt.common.initializer");
    if (!mod) return NULL;
    PyObject *obj = NULL;
    if (hwpy_tensor_check(init)) {
        Py_DECREF(mod);
        return Py_NewRef(init);
    } else if (PyUnicode_Check(init)) {
        static const char *const names[][2] = {
            {"zeros", "Zero"}, {"ones", "One"}, {"normal", "Normal"}, {"uniform", "Uniform"},
            {"truncatednormal", "TruncatedNormal"}, {"xavier_uniform", "XavierUniform"},
            {"xavieruniform", "XavierUniform"}};
        const char *s = PyUnicode_AsUTF8(init);
        char low[32] = "";
        for (size_t i = 0; s && s[i] && i < sizeof low - 1; i++) low[i] = (char)(s[i] | 0x20), low[i + 1] = 0;
        for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
            if (!strcmp(low, names[i][0])) obj = PyObject_CallMethod(mod, names[i][1], NULL);
        if (!obj && !PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "For 'initializer', the class corresponding to '%s' "
                         "was not found.", s ? s : "?");
    } else if (PyLong_Check(init) || PyFloat_Check(init)) {
        obj = PyObject_CallMethod(mod, "Constant", "O", init);
    } else {
        int ok = is_initializer(init);
        if (ok > 0) obj = Py_NewRef(init);
        else if (ok == 0)
            PyErr_Format(PyExc_TypeError, "For 'initializer', the type of the 'init' argument "
                         "should be 'Tensor', 'number', 'string' or 'initializer', but got %R.",
                         (PyObject *)Py_TYPE(init));
    }
    Py_DECREF(mod);
    if (!obj) return NULL;
    PyObject *sh = shape == Py_None ? PyTuple_New(0) : PyLong_Check(shape) ? Py_BuildValue("(O)", shape)
                                                                           : PySequence_Tuple(shape);
    PyObject *kw2 = sh ? Py_BuildValue("{s:O,s:O,s:O}", "init", obj, "shape", sh, "dtype",
                                       dtype && dtype != Py_None ? dtype
                                                                 : hwpy_dtype_object(HWRT_FLOAT32))
                       : NULL;
    PyObject *empty = kw2 ? PyTuple_New(0) : NULL;
    PyObject *t = empty ? PyObject_Call((PyObject *)&hwpy_tensor_type, empty, kw2) : NULL;
    Py_XDECREF(empty);
    Py_XDECREF(kw2);
    Py_XDECREF(sh);
    Py_DECREF(obj);
    return t;
}

static PyMethodDef fn_defs[] = {
    {"initializer", (PyCFunction)(void (*)(void))initializer_fn, METH_VARARGS | METH_KEYWORDS,
     "initializer($module, init, shape=None, dtype=None)\n--\n\n"
     "Returns a Tensor filled by init on first use (dtype None: float32)."},
    {NULL}};

/* inspect.Signature of a class whose __init__ binds params ((name, default), ...; (name,)
 * for a required one): the shared C __init__ cannot carry each class's text signature. */
static PyObject *signature_of(PyObject *params)
{
    PyObject *inspect = PyImport_ImportModule("inspect");
    PyObject *param = inspect ? PyObject_GetAttrString(inspect, "Parameter") : NULL;
    PyObject *kind = param ? PyObject_GetAttrString(param, "POSITIONAL_OR_KEYWORD") : NULL;
    PyObject *list = kind ? PyList_New(0) : NULL, *sig = NULL;
    for (Py_ssize_t i = 0; list && i < PyTuple_GET_SIZE(params); i++) {
        PyObject *p = PyTuple_GET_ITEM(params, i);
        PyObject *args = Py_BuildValue("(OO)", PyTuple_GET_ITEM(p, 0), kind);
        PyObject *kw = args && PyTuple_GET_SIZE(p) > 1
                           ? Py_BuildValue("{s:O}", "default", PyTuple_GET_ITEM(p, 1)) : NULL;
        PyObject *one = args && (kw || PyTuple_GET_SIZE(p) == 1) ? PyObject_Call(param, args, kw)
                                                                  : NULL;
        if (!one || PyList_Append(list, one) < 0) Py_CLEAR(list);
        Py_XDECREF(one);
        Py_XDECREF(kw);
        Py_XDECREF(args);
    }
    if (list) sig = PyObject_CallMethod(inspect, "Signature", "O", list);
    Py_XDECREF(list);
    Py_XDECREF(kind);
    Py_XDECREF(param);
    Py_XDECREF(inspect);
    return sig;
}

/* One class: name, kind, params ((name, default), ...; (name,) for a required one),
 * taken over. */
static int add_class(PyObject *mod, const char *name, const char *kind, PyObject *params,
                     PyObject *base)
{
    PyObject *bases = params ? PyTuple_Pack(1, base) : NULL;
    PyObject *sig = bases ? signature_of(params) : NULL;
    PyObject *im = sig ? init_method(params) : NULL;
    PyObject *doc = sig ? PyUnicode_FromFormat("MindSpore's %s initializer: a tensor made with "
                                               "init=%s() is filled on first use.", name, name)
                        : NULL;
    PyObject *d = doc && im ? Py_BuildValue("{s:s,s:O,s:s,s:N,s:N,s:N}", "_kind", kind, "_params",
                                            params, "__module__", "hwrt.common.initializer",
                                            "__signature__", sig, "__doc__", doc, "__init__", im)
                            : NULL;
    if (!d && !(doc && im)) {
        Py_XDECREF(sig);
        Py_XDECREF(doc);
        Py_XDECREF(im);
    }
    PyObject *cls = d ? PyObject_CallFunction((PyObject *)&PyType_Type, "sOO", name, bases, d)
                      : NULL;
    int rc = cls ? PyModule_AddObjectRef(mod, name, cls) : -1;
    Py_XDECREF(cls);
    Py_XDECREF(d);
    Py_XDECREF(bases);
    Py_XDECREF(params);
    return rc;
}

int hwpy_initializer_init(PyObject *common)
{
    pending = PyDict_New();
    if (!pending) return -1;
    PyObject *mod = PyModule_New("hwrt.common.initializer");
    PyObject *mods = PyImport_GetModuleDict();
    if (!mod || PyDict_SetItemString(mods, "hwrt.common.initializer", mod) < 0 ||
        PyModule_AddObjectRef(common, "initializer", mod) < 0) {
        Py_XDECREF(mod);
        return -1;
    }
    PyObject *empty = PyTuple_New(0), *sig = empty ? signature_of(empty) : NULL;
    PyObject *im = sig ? init_method(empty) : NULL;
    Py_XDECREF(empty);
    if (!im) Py_CLEAR(sig);
    PyObject *d = sig ? Py_BuildValue("{s:O,s:s,s:(),s:s,s:N,s:s}", "__init__", im, "_kind", "",
                                      "_params", "__module__", "hwrt.common.initializer",
                                      "__signature__", sig, "__doc__", "The base of hwrt's "
                                      "initializers (MindSpore's Initializer).")
                      : NULL;
    Py_XDECREF(im);
    base_class = d ? PyObject_CallFunction((PyObject *)&PyType_Type, "s()O", "Initializer", d)
                   : NULL;
    Py_XDECREF(d);
    int rc = base_class ? PyModule_AddObjectRef(mod, "Initializer", base_class) : -1;
    if (rc == 0)
        rc = add_class(mod, "Zero", "zeros", PyTuple_New(0), base_class) < 0 ||
             add_class(mod, "One", "ones", PyTuple_New(0), base_class) < 0 ||
             add_class(mod, "Constant", "constant", Py_BuildValue("((s))", "value"),
                       base_class) < 0 ||
             add_class(mod, "Normal", "normal",
                       Py_BuildValue("((sd)(sd))", "sigma", 0.01, "mean", 0.0), base_class) < 0 ||
             add_class(mod, "Uniform", "uniform", Py_BuildValue("((sd))", "scale", 0.07),
                       base_class) < 0 ||
             add_class(mod, "TruncatedNormal", "truncatednormal",
                       Py_BuildValue("((sd)(sd)(sd)(sd))", "sigma", 0.01, "mean", 0.0, "a", -2.0,
                                     "b", 2.0), base_class) < 0 ||
             add_class(mod, "XavierUniform", "xavieruniform", Py_BuildValue("((si))", "gain", 1),
                       base_class) < 0 ||
             hwpy_add_functions(mod, fn_defs) < 0
                 ? -1 : 0;
    Py_DECREF(mod);
    if (rc < 0) return -1;
    return 0;
}
