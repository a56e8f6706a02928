/* hwrt dtypes as Python objects: hwrt.float16, hwrt.float32, ... (singletons, as
 * mindspore.float16 is), and the conversions from names, numpy dtypes and PEP 3118
 * buffer formats. */
#include "hwpy.h"

#include <string.h>

static PyObject *singletons[HWRT_DTYPE_COUNT];

/* MindSpore spells its dtypes' repr with a capital ("Float16"). */
static const char *const pretty[HWRT_DTYPE_COUNT] = {
    [HWRT_FLOAT32] = "Float32", [HWRT_FLOAT16] = "Float16", [HWRT_BFLOAT16] = "BFloat16",
    [HWRT_FLOAT64] = "Float64", [HWRT_INT8] = "Int8", [HWRT_UINT8] = "UInt8",
    [HWRT_INT32] = "Int32", [HWRT_INT64] = "Int64", [HWRT_BOOL] = "Bool",
    [HWRT_INT16] = "Int16", [HWRT_UINT16] = "UInt16", [HWRT_UINT32] = "UInt32",
    [HWRT_UINT64] = "UInt64", [HWRT_COMPLEX64] = "Complex64", [HWRT_COMPLEX128] = "Complex128"};

static PyObject *dtype_repr(PyObject *self)
{
    return PyUnicode_FromString(pretty[((hwpy_dtype_obj *)self)->dt]);
}

static PyObject *dtype_str(PyObject *self)
{
    return PyUnicode_FromString(hwrt_dtype_name(((hwpy_dtype_obj *)self)->dt));
}

static Py_hash_t dtype_hash(PyObject *self)
{
    return (Py_hash_t)((hwpy_dtype_obj *)self)->dt + 1;
}

/* Equal to itself and to its names ("float16", "fp16", "half"). */
static PyObject *dtype_richcompare(PyObject *self, PyObject *other, int op)
{
    if (op != Py_EQ && op != Py_NE)
        Py_RETURN_NOTIMPLEMENTED;
    int eq;
    if (PyObject_TypeCheck(other, &hwpy_dtype_type)) {
        eq = ((hwpy_dtype_obj *)other)->dt == ((hwpy_dtype_obj *)self)->dt;
    } else if (PyUnicode_Check(other)) {
        hwrt_dtype dt;
        const char *s = PyUnicode_AsUTF8(other);
        if (!s) return NULL;
        eq = hwrt_dtype_from_name(s, &dt) == HWRT_SUCCESS && dt == ((hwpy_dtype_obj *)self)->dt;
    } else {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *dtype_get_itemsize(PyObject *self, void *c)
{
    return PyLong_FromSize_t(hwrt_dtype_size(((hwpy_dtype_obj *)self)->dt));
}

static PyObject *dtype_get_name(PyObject *self, void *c)
{
    return PyUnicode_FromString(hwrt_dtype_name(((hwpy_dtype_obj *)self)->dt));
}

static PyObject *dtype_get_value(PyObject *self, void *c)
{
    return PyLong_FromLong((long)((hwpy_dtype_obj *)self)->dt);
}

static PyGetSetDef dtype_getset[] = {
    {"itemsize", dtype_get_itemsize, NULL, "bytes per element", NULL},
    {"name", dtype_get_name, NULL, "hwrt's name (\"float16\")", NULL},
    {"value", dtype_get_value, NULL, "the hwrt_dtype enum value", NULL},
    {NULL}};

PyTypeObject hwpy_dtype_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hwrt.dtype.Type",
    .tp_basicsize = sizeof(hwpy_dtype_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An hwrt element type; use the module's singletons (hwrt.float16, ...).",
    .tp_repr = dtype_repr,
    .tp_str = dtype_str,
    .tp_hash = dtype_hash,
    .tp_richcompare = dtype_richcompare,
    .tp_getset = dtype_getset,
};

PyObject *hwpy_dtype_object(hwrt_dtype dt)
{
    return (unsigned)dt < HWRT_DTYPE_COUNT ? singletons[dt] : Py_None;
}

int hwpy_dtype_convert(PyObject *obj, hwrt_dtype *dt)
{
    if (PyObject_TypeCheck(obj, &hwpy_dtype_type)) {
        *dt = ((hwpy_dtype_obj *)obj)->dt;
        return 0;
    }
    PyObject *name = NULL;
    if (PyUnicode_Check(obj)) {
        name = Py_NewRef(obj);
    } else {
        /* numpy dtypes and scalar types (np.float16, np.dtype("int8"), float, ...) */
        PyObject *np = PyImport_ImportModule("numpy");
        PyObject *npdt = np ? PyObject_CallMethod(np, "dtype", "O", obj) : NULL;
        Py_XDECREF(np);
        if (npdt) name = PyObject_GetAttrString(npdt, "name");
        Py_XDECREF(npdt);
        if (!name) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "dtype must be an hwrt dtype (hwrt.float16, ...), a "
                         "name such as \"float16\", or a numpy dtype; got %.100s",
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
    }
    const char *s = PyUnicode_AsUTF8(name);
    hwrt_status st = s ? hwrt_dtype_from_name(s, dt) : HWRT_ERROR_INVALID_ARGUMENT;
    if (s && st != HWRT_SUCCESS)
        PyErr_Format(PyExc_ValueError, "%s", hwrt_last_error());
    Py_DECREF(name);
    return s && st == HWRT_SUCCESS ? 0 : -1;
}

int hwpy_dtype_converter_opt(PyObject *obj, void *dt)
{
    if (obj == Py_None)
        return 1;
    hwrt_dtype d;
    if (hwpy_dtype_convert(obj, &d) < 0)
        return 0;
    *(int *)dt = (int)d;
    return 1;
}

int hwpy_dtype_from_format(const char *f, Py_ssize_t itemsize, hwrt_dtype *dt)
{
    if (!f) f = "B";
    const char *f0 = f;
    if (*f == '@' || *f == '=' || *f == '<') f++;
    else if (*f == '>' || *f == '!') goto bad;   /* big-endian data would be misread */
    if (f[0] == 'Z' && f[1] && !f[2]) {          /* complex: "Zf", "Zd" */
        if (f[1] == 'f') *dt = HWRT_COMPLEX64;
        else if (f[1] == 'd') *dt = HWRT_COMPLEX128;
        else goto bad;
    } else if (!f[0] || f[1]) {
        goto bad;
    } else {
        switch (*f) {
        case 'e': *dt = HWRT_FLOAT16; break;
        case 'f': *dt = HWRT_FLOAT32; break;
        case 'd': *dt = HWRT_FLOAT64; break;
        case 'b': *dt = HWRT_INT8; break;
        case 'B': *dt = HWRT_UINT8; break;
        case '?': *dt = HWRT_BOOL; break;
        case 'h': *dt = HWRT_INT16; break;
        case 'H': *dt = HWRT_UINT16; break;
        case 'i': case 'l': case 'q': case 'n':
            if (itemsize == 4) { *dt = HWRT_INT32; break; }
            if (itemsize == 8) { *dt = HWRT_INT64; break; }
            goto bad;
        case 'I': case 'L': case 'Q': case 'N':
            if (itemsize == 4) { *dt = HWRT_UINT32; break; }
            if (itemsize == 8) { *dt = HWRT_UINT64; break; }
            goto bad;
        default: goto bad;
        }
    }
    if ((Py_ssize_t)hwrt_dtype_size(*dt) != itemsize) goto bad;
    return 0;
bad:
    PyErr_Format(PyExc_TypeError, "buffer format \"%s\" (itemsize %zd) has no hwrt dtype; hwrt "
                 "holds float16, float32, float64, int8, uint8, int16, uint16, int32, uint32, "
                 "int64, uint64, bool, complex64 and complex128 (convert first, e.g. "
                 "array.astype(numpy.float32))", f0, itemsize);
    return -1;
}

const char *hwpy_dtype_format(hwrt_dtype dt)
{
    static const char *const fmt[HWRT_DTYPE_COUNT] = {
        [HWRT_FLOAT32] = "f", [HWRT_FLOAT16] = "e", [HWRT_BFLOAT16] = NULL,
        [HWRT_FLOAT64] = "d", [HWRT_INT8] = "b", [HWRT_UINT8] = "B", [HWRT_INT32] = "i",
        [HWRT_INT64] = "q", [HWRT_BOOL] = "?", [HWRT_INT16] = "h", [HWRT_UINT16] = "H",
        [HWRT_UINT32] = "I", [HWRT_UINT64] = "Q", [HWRT_COMPLEX64] = "Zf",
        [HWRT_COMPLEX128] = "Zd"};
    return (unsigned)dt < HWRT_DTYPE_COUNT ? fmt[dt] : NULL;
}

const char *hwpy_dtype_numpy_name(hwrt_dtype dt)
{
    return dt == HWRT_BFLOAT16 ? "float32" : hwrt_dtype_name(dt);
}

/* The dtypes go into the top-level module and into hwrt.dtype (MindSpore's
 * mindspore.dtype / mindspore.common.dtype module: ms.dtype.float32), whose base class
 * is dtype.Type. */
int hwpy_dtype_init(PyObject *top, PyObject *dtmod)
{
    if (PyType_Ready(&hwpy_dtype_type) < 0 ||
        PyModule_AddObjectRef(dtmod, "Type", (PyObject *)&hwpy_dtype_type) < 0)
        return -1;
    for (int i = 0; i < HWRT_DTYPE_COUNT; i++) {
        hwpy_dtype_obj *o = PyObject_New(hwpy_dtype_obj, &hwpy_dtype_type);
        if (!o) return -1;
        o->dt = (hwrt_dtype)i;
        singletons[i] = (PyObject *)o;
    }
    /* MindSpore's aliases (common/dtype.py): bool_, half, single, double, byte, short,
     * intc, intp, ubyte, ushort, uintc, uintp; float_, int_ (MindSpore's generic Float()
     * and Int(), here float32 and int64) */
    static const struct { const char *alias; hwrt_dtype dt; } aliases[] = {
        {"bool_", HWRT_BOOL}, {"half", HWRT_FLOAT16}, {"single", HWRT_FLOAT32},
        {"double", HWRT_FLOAT64}, {"float_", HWRT_FLOAT32}, {"int_", HWRT_INT64},
        {"byte", HWRT_INT8}, {"short", HWRT_INT16}, {"intc", HWRT_INT32}, {"intp", HWRT_INT64},
        {"ubyte", HWRT_UINT8}, {"ushort", HWRT_UINT16}, {"uintc", HWRT_UINT32},
        {"uintp", HWRT_UINT64}};
    PyObject *mods[2] = {top, dtmod};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < HWRT_DTYPE_COUNT; i++)
            if (PyModule_AddObjectRef(mods[k], hwrt_dtype_name((hwrt_dtype)i), singletons[i]) < 0)
                return -1;
        for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
            if (PyModule_AddObjectRef(mods[k], aliases[i].alias, singletons[aliases[i].dt]) < 0)
                return -1;
    }
    return 0;
}
