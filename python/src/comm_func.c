/* hwrt.communication.comm_func, as MindSpore's mindspore/communication/comm_func.py:
 * all_reduce, all_gather_into_tensor, reduce_scatter_tensor, broadcast and barrier, on
 * the world or on a group made by create_group (its sub-communicator, hwrt_group_*), and
 * ops.ReduceOp. Each returns a new Tensor and leaves its input alone, as MindSpore's do;
 * each is done when it returns (hwrt's collectives are stream-ordered and blocking: they
 * run after the work queued on the current stream). */
#include "hwpy.h"

#include <string.h>

#define T(o) (((hwpy_tensor_obj *)(o))->t)
#define KW(fn) (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS

#ifdef HWPY_HAVE_DIST

static int need_tensor(const char *fn, PyObject *t)
{
    if (hwpy_tensor_check(t)) return hwpy_tensor_init_pending(t);
    PyErr_Format(PyExc_TypeError, "For %s, the input tensor must be tensor, but got %.100s", fn,
                 Py_TYPE(t)->tp_name);
    return -1;
}

/* ReduceOp's strings (MindSpore's comm_ops.py) */
static int reduce_op(const char *fn, PyObject *op, hwrt_reduce_op *out)
{
    static const struct { const char *name; hwrt_reduce_op op; } ops[] = {
        {"sum", HWRT_REDUCE_SUM}, {"prod", HWRT_REDUCE_PROD}, {"max", HWRT_REDUCE_MAX},
        {"min", HWRT_REDUCE_MIN}};
    if (!PyUnicode_Check(op)) {
        PyErr_Format(PyExc_TypeError, "For '%s', the argument 'op' must be a str (ReduceOp.SUM, "
                     "...), but got %.100s", fn, Py_TYPE(op)->tp_name);
        return -1;
    }
    const char *s = PyUnicode_AsUTF8(op);
    if (!s) return -1;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(s, ops[i].name)) { *out = ops[i].op; return 0; }
    PyErr_Format(PyExc_ValueError, "For '%s', the argument 'op' must be one of 'sum', 'prod', "
                 "'max', 'min' (ReduceOp), but got %R", fn, op);
    return -1;
}

/* A new tensor like t: a copy of its values (copy), or uninitialised with dimension 0
 * scaled by num/den (the gathered and scattered shapes). */
static PyObject *like(PyObject *t, int copy, int64_t num, int64_t den)
{
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(T(t), shape);
    if (ndim < 0) return NULL;
    hwrt_dtype dt;
    hwrt_tensor_dtype(T(t), &dt);
    if (num != den) {
        if (ndim == 0) { ndim = 1; shape[0] = 1; }
        shape[0] = shape[0] * num / den;
    }
    PyObject *r = hwpy_tensor_new_empty(dt, ndim, shape);
    if (r && copy && hwpy_cast(T(r), T(t), hwpy_current_stream()) < 0) Py_CLEAR(r);
    return r;
}

static int group_size(hwrt_group g, int *n)
{
    hwrt_status st = hwrt_group_size(g, n);
    if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
    return 0;
}

/* Run a collective with the GIL released; res is returned, or dropped on failure. */
#define RUN(res, call)                                                                     \
    do {                                                                                   \
        hwrt_status st_;                                                                   \
        Py_BEGIN_ALLOW_THREADS                                                             \
        st_ = (call);                                                                      \
        Py_END_ALLOW_THREADS                                                               \
        if (st_ != HWRT_SUCCESS) { Py_CLEAR(res); hwpy_raise(st_); }                       \
    } while (0)

static PyObject *all_reduce(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tensor", "op", "group", NULL};
    PyObject *t, *op = NULL, *g = Py_None, *ranks;
    hwrt_reduce_op rop = HWRT_REDUCE_SUM;
    hwrt_group grp;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:all_reduce", kwlist, &t, &op, &g) ||
        need_tensor("all_reduce", t) < 0 || (op && reduce_op("all_reduce", op, &rop) < 0) ||
        hwpy_comm_group("all_reduce", g, &grp, &ranks) < 0)
        return NULL;
    Py_DECREF(ranks);
    PyObject *res = like(t, 1, 1, 1);
    if (res) RUN(res, hwrt_group_allreduce(grp, T(res), rop, hwpy_current_stream()));
    return res;
}

static PyObject *all_gather(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tensor", "group", NULL};
    PyObject *t, *g = Py_None, *ranks;
    hwrt_group grp;
    int n;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:all_gather_into_tensor", kwlist, &t, &g) ||
        need_tensor("all_gather_into_tensor", t) < 0 ||
        hwpy_comm_group("all_gather_into_tensor", g, &grp, &ranks) < 0)
        return NULL;
    Py_DECREF(ranks);
    if (group_size(grp, &n) < 0) return NULL;
    PyObject *res = like(t, 0, n, 1);
    if (res) RUN(res, hwrt_group_allgather(grp, T(res), T(t), hwpy_current_stream()));
    return res;
}

static PyObject *reduce_scatter(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tensor", "op", "group", NULL};
    PyObject *t, *op = NULL, *g = Py_None, *ranks;
    hwrt_reduce_op rop = HWRT_REDUCE_SUM;
    hwrt_group grp;
    int n;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:reduce_scatter_tensor", kwlist, &t, &op,
                                     &g) ||
        need_tensor("reduce_scatter_tensor", t) < 0 ||
        (op && reduce_op("reduce_scatter_tensor", op, &rop) < 0) ||
        hwpy_comm_group("reduce_scatter_tensor", g, &grp, &ranks) < 0)
        return NULL;
    Py_DECREF(ranks);
    if (group_size(grp, &n) < 0) return NULL;
    int64_t shape[HWRT_MAX_DIMS];
    int ndim = hwpy_tensor_shape(T(t), shape);
    if (ndim < 0) return NULL;
    if (ndim == 0 || shape[0] % n)
        return PyErr_Format(PyExc_ValueError, "For 'reduce_scatter_tensor', the first dimension "
                            "of the input (%lld) must be divisible by the group's size %d",
                            ndim ? (long long)shape[0] : 0LL, n);
    PyObject *res = like(t, 0, 1, n);
    if (res) RUN(res, hwrt_group_reduce_scatter(grp, T(res), T(t), rop, hwpy_current_stream()));
    return res;
}

static PyObject *broadcast(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tensor", "src", "group", NULL};
    PyObject *t, *src = NULL, *g = Py_None, *ranks;
    hwrt_group grp;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:broadcast", kwlist, &t, &src, &g) ||
        need_tensor("broadcast", t) < 0)
        return NULL;
    long root = 0;
    if (src) {
        if (!PyLong_Check(src) || PyBool_Check(src))
            return PyErr_Format(PyExc_TypeError, "For broadcast, the src must be int, but got "
                                "%.100s", Py_TYPE(src)->tp_name);
        root = PyLong_AsLong(src);
        if (root == -1 && PyErr_Occurred()) return NULL;
    }
    if (hwpy_comm_group("broadcast", g, &grp, &ranks) < 0) return NULL;
    int gr = (int)root;                  /* src is a world rank: its rank in the group */
    if (ranks != Py_None) {
        PyObject *key = PyLong_FromLong(root);
        Py_ssize_t i = key ? PySequence_Index(ranks, key) : -1;
        Py_XDECREF(key);
        if (i < 0) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "For 'broadcast', src %ld (a world rank) is not in "
                         "group %R (ranks %R)", root, g, ranks);
            Py_DECREF(ranks);
            return NULL;
        }
        gr = (int)i;
    }
    Py_DECREF(ranks);
    PyObject *res = like(t, 1, 1, 1);
    if (res) RUN(res, hwrt_group_broadcast(grp, T(res), gr, hwpy_current_stream()));
    return res;
}

static PyObject *barrier(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"group", NULL};
    PyObject *g = Py_None, *ranks, *none = Py_None;
    hwrt_group grp;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:barrier", kwlist, &g) ||
        hwpy_comm_group("barrier", g, &grp, &ranks) < 0)
        return NULL;
    Py_DECREF(ranks);
    Py_INCREF(none);
    RUN(none, hwrt_group_barrier(grp));
    return none;
}

#else   /* a build without hwrt's distributed part */

static PyObject *unavailable(const char *fn)
{
    return hwpy_raise_msg(HWRT_ERROR_UNAVAILABLE, "comm_func.%s: this hwrt was built without its "
                          "distributed part (hwrt_dist.h); rebuild hwrt with it", fn);
}
static PyObject *all_reduce(PyObject *m, PyObject *a, PyObject *k) { return unavailable("all_reduce"); }
static PyObject *all_gather(PyObject *m, PyObject *a, PyObject *k) { return unavailable("all_gather_into_tensor"); }
static PyObject *reduce_scatter(PyObject *m, PyObject *a, PyObject *k) { return unavailable("reduce_scatter_tensor"); }
static PyObject *broadcast(PyObject *m, PyObject *a, PyObject *k) { return unavailable("broadcast"); }
static PyObject *barrier(PyObject *m, PyObject *a, PyObject *k) { return unavailable("barrier"); }

#endif

static PyMethodDef methods[] = {
    {"all_reduce", KW(all_reduce), "all_reduce($module, tensor, op='sum', group=None)\n--\n\n"
     "Returns a new Tensor: the reduction (ReduceOp: 'sum', 'prod', 'max', 'min') of tensor "
     "over the group's ranks (default: the world)."},
    {"all_gather_into_tensor", KW(all_gather),
     "all_gather_into_tensor($module, tensor, group=None)\n--\n\n"
     "Returns a new Tensor: the ranks' tensors concatenated along dimension 0, in group-rank "
     "order."},
    {"reduce_scatter_tensor", KW(reduce_scatter),
     "reduce_scatter_tensor($module, tensor, op='sum', group=None)\n--\n\n"
     "Returns a new Tensor: this rank's block (dimension 0 divided by the group's size) of "
     "the reduction."},
    {"broadcast", KW(broadcast), "broadcast($module, tensor, src=0, group=None)\n--\n\n"
     "Returns a new Tensor: world rank src's tensor, on every rank of the group."},
    {"barrier", KW(barrier), "barrier($module, group=None)\n--\n\n"
     "Returns once every rank of the group has called it."},
    {NULL}};

int hwpy_comm_func_init(PyObject *cfunc, PyObject *ops)
{
    PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:s}", "SUM", "sum", "MAX", "max", "MIN",
                                "min", "PROD", "prod", "__module__", "hwrt.ops", "__doc__",
                                "MindSpore's ReduceOp: the reductions of the collectives.");
    PyObject *cls = d ? PyObject_CallFunction((PyObject *)&PyType_Type, "s()O", "ReduceOp", d)
                      : NULL;
    Py_XDECREF(d);
    int rc = cls && PyModule_AddObjectRef(ops, "ReduceOp", cls) == 0 &&
                     PyModule_AddObjectRef(cfunc, "ReduceOp", cls) == 0 &&
                     hwpy_add_functions(cfunc, methods) == 0
                 ? 0 : -1;
    Py_XDECREF(cls);
    return rc;
}
