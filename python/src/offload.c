/* hwrt.offload: the residency manager behind the seed's memory_offload (section 2.5).
 *
 * With memory_offload ON, tensors marked with t.set_offloadable() (typically the model's
 * weights) move to the host (or disk) tier when the device budget (max_device_memory)
 * would be passed, and come back when an op or a read needs them.
 * hwrt.offload.prefetch / evict / step / stats give the explicit controls.
 *
 * Tensors are not marked automatically (as MindSpore marks weights and activations):
 * with this libhwrt an offloadable tensor that is an operand of an op can be evicted by
 * the fetch of another operand of the same op, and the kernel then reads freed memory
 * (reported; see docs/python.md). Until that is fixed, mark at most one operand of each
 * op offloadable, e.g. the weights, as examples/offload_demo.c does. */
#include "hwpy.h"

#if __has_include("hwrt/hwrt_offload.h")
#define HWPY_HAVE_OFFLOAD 1
#endif

#define T(o) (((hwpy_tensor_obj *)(o))->t)

#ifdef HWPY_HAVE_OFFLOAD

static int need_tensor(PyObject *o)
{
    if (hwpy_tensor_check(o)) return 0;
    PyErr_Format(PyExc_TypeError, "expected an hwrt.Tensor, not %.100s", Py_TYPE(o)->tp_name);
    return -1;
}

static PyObject *set_offloadable(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tensor", "on", NULL};
    PyObject *t;
    int on = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p:set_offloadable", kwlist, &t, &on) ||
        need_tensor(t) < 0)
        return NULL;
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_tensor_set_offloadable(T(t), on);
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return Py_NewRef(t);
}

PyObject *hwpy_tensor_set_offloadable(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"on", NULL};
    int on = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:set_offloadable", kwlist, &on)) return NULL;
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_tensor_set_offloadable(T(self), on);
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return Py_NewRef(self);
}

static PyObject *prefetch(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tensor", "stream", NULL};
    PyObject *t, *so = Py_None;
    hwrt_stream s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:prefetch", kwlist, &t, &so) ||
        need_tensor(t) < 0 || hwpy_stream_arg(so, &s) < 0)
        return NULL;
    hwrt_status st = hwrt_offload_prefetch(T(t), s);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *evict(PyObject *m, PyObject *t)
{
    if (need_tensor(t) < 0) return NULL;
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_offload_evict(T(t));
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *step(PyObject *m, PyObject *unused)
{
    hwrt_status st = hwrt_offload_step();
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

PyObject *hwpy_offload_location(hwrt_tensor t)
{
    static const char *const names[] = {"device", "host", "disk"};
    int where;
    hwrt_status st = hwrt_offload_location(t, &where);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return PyUnicode_FromString(where >= 0 && where <= 2 ? names[where] : "unknown");
}

static PyObject *location(PyObject *m, PyObject *t)
{
    if (need_tensor(t) < 0) return NULL;
    return hwpy_offload_location(T(t));
}

static PyObject *stats(PyObject *m, PyObject *unused)
{
    hwrt_offload_stats s;
    hwrt_status st = hwrt_offload_stats_get(&s);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return Py_BuildValue(
        "{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:d,s:d,s:K,s:K,s:K,s:d,s:n,s:n,s:n,s:n,s:K,s:K,"
        "s:K,s:K}",
        "evictions_to_host", (unsigned long long)s.evictions_to_host,
        "evictions_to_disk", (unsigned long long)s.evictions_to_disk,
        "clean_evictions", (unsigned long long)s.clean_evictions,
        "bytes_to_host", (unsigned long long)s.bytes_to_host,
        "bytes_to_disk", (unsigned long long)s.bytes_to_disk,
        "fetches_from_host", (unsigned long long)s.fetches_from_host,
        "fetches_from_disk", (unsigned long long)s.fetches_from_disk,
        "bytes_from_host", (unsigned long long)s.bytes_from_host,
        "bytes_from_disk", (unsigned long long)s.bytes_from_disk,
        "evict_ms", s.evict_ms, "fetch_ms", s.fetch_ms,
        "prefetch_hits", (unsigned long long)s.prefetch_hits,
        "prefetch_late", (unsigned long long)s.prefetch_late,
        "prefetch_misses", (unsigned long long)s.prefetch_misses, "stall_ms", s.stall_ms,
        "device_bytes", (Py_ssize_t)s.device_bytes, "host_bytes", (Py_ssize_t)s.host_bytes,
        "disk_bytes", (Py_ssize_t)s.disk_bytes, "device_budget", (Py_ssize_t)s.device_budget,
        "victim_waits", (unsigned long long)s.victim_waits,
        "fetches_after_victim", (unsigned long long)s.fetches_after_victim,
        "fetches_exposed", (unsigned long long)s.fetches_exposed,
        "fetch_window_uses", (unsigned long long)s.fetch_window_uses);
}

static PyObject *reset_stats(PyObject *m, PyObject *unused)
{
    hwrt_status st = hwrt_offload_reset_stats();
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

#define KW(fn) (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS
PyMethodDef hwpy_offload_methods[] = {
    {"set_offloadable", KW(set_offloadable),
     "set_offloadable($module, tensor, on=True)\n--\n\n"
     "Returns tensor: let it move off the device (on) or pin it there (off)."},
    {"prefetch", KW(prefetch), "prefetch($module, tensor, stream=None)\n--\n\n"
     "Start bringing it back now."},
    {"evict", evict, METH_O, "evict($module, tensor, /)\n--\n\n"
     "Move it off the device now (blocking)."},
    {"step", step, METH_NOARGS, "step($module, /)\n--\n\n"
     "Iteration boundary (auto_offload learns the use order)."},
    {"location", location, METH_O, "location($module, tensor, /)\n--\n\n"
     "Returns \"device\" | \"host\" | \"disk\""},
    {"stats", stats, METH_NOARGS, "stats($module, /)\n--\n\n"
     "Evictions, fetches, bytes, prefetch hits, stall time, tier use."},
    {"reset_stats", reset_stats, METH_NOARGS, "reset_stats($module, /)\n--\n\n"
     "Zero the counters."},
    {NULL}};

#else   /* a libhwrt without the offload part: tensors are simply resident */

PyObject *hwpy_offload_location(hwrt_tensor t)
{
    (void)t;
    return PyUnicode_FromString("device");
}

PyObject *hwpy_tensor_set_offloadable(PyObject *self, PyObject *args, PyObject *kw)
{
    return hwpy_raise_msg(HWRT_ERROR_NOT_SUPPORTED, "set_offloadable: this hwrt was built "
                          "without its offload part (hwrt_offload.h)");
}

PyMethodDef hwpy_offload_methods[] = {{NULL}};

#endif

int hwpy_offload_features(PyObject *d)
{
#ifdef HWPY_HAVE_OFFLOAD
    return PyDict_SetItemString(d, "offload", Py_True);
#else
    return PyDict_SetItemString(d, "offload", Py_False);
#endif
}
