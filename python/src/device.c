/* Devices, memory figures and synchronisation: hwrt.get_device_id, device_count,
 * backend_info and the hwrt.runtime functions (get_memory_info, memory_allocated, ...,
 * empty_cache, synchronize, launch_blocking). Targets and set_device: target.c. */
#include "hwpy.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Functions of the caching pool (issue 3). Weak, so this module loads against a libhwrt
 * that does not have them yet; each use checks and says what is missing. */
#pragma weak hwrt_memory_stats
#pragma weak hwrt_memory_summary
#pragma weak hwrt_reset_peak_memory_stats
#pragma weak hwrt_memory_snapshot

int hwpy_device_arg(PyObject *obj, int *device_id)
{
    if (!obj || obj == Py_None) {
        hwrt_status st = hwrt_get_device(device_id);
        if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
        return 0;
    }
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "device_id must be an int or None, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    long v = PyLong_AsLong(obj);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v > 1 << 20) {
        PyErr_Format(PyExc_ValueError, "device_id %ld is negative or absurdly large", v);
        return -1;
    }
    *device_id = (int)v;
    return 0;
}

static PyObject *get_device_id(PyObject *m, PyObject *unused)
{
    int id;
    hwrt_status st = hwrt_get_device(&id);
    return st == HWRT_SUCCESS ? PyLong_FromLong(id) : hwpy_raise(st);
}

static PyObject *device_count(PyObject *m, PyObject *args)
{
    const char *target = NULL;
    if (!PyArg_ParseTuple(args, "|z:device_count", &target)) return NULL;
    char buf[32];
    int n;
    hwrt_status st = hwrt_device_count(target ? hwpy_map_target(target, buf, sizeof buf) : NULL, &n);
    return st == HWRT_SUCCESS ? PyLong_FromLong(n) : hwpy_raise(st);
}

static PyObject *current_backend(PyObject *m, PyObject *unused)
{
    return PyUnicode_FromString(hwrt_current_backend());
}

static PyObject *backend_info(PyObject *m, PyObject *arg)
{
    const char *target = PyUnicode_AsUTF8(arg);
    if (!target) return NULL;
    char buf[32];
    hwrt_backend_desc d;
    hwrt_status st = hwrt_backend_info(hwpy_map_target(target, buf, sizeof buf), &d);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return Py_BuildValue("{s:s,s:O,s:i,s:s}", "name", d.name, "available",
                         d.available ? Py_True : Py_False, "device_count", d.device_count,
                         "reason", d.reason);
}

/* ---- memory ---- */

/* The core resets both peaks at once (hwrt_reset_peak_memory_stats). MindSpore resets
 * each alone (memory.py: reset_max_memory_allocated / reset_max_memory_reserved), so
 * resetting one keeps the other's peak so far here, and the figure reported is the larger
 * of that floor and the core's peak since: exactly the peak since its own last reset. */
#define PEAK_DEVICES 64
static size_t floor_allocated[PEAK_DEVICES], floor_reserved[PEAK_DEVICES];

static hwrt_status info_of(int id, hwrt_memory_info *mi)
{
    hwrt_status st = hwrt_get_memory_info(id, mi);
    if (st == HWRT_SUCCESS && id >= 0 && id < PEAK_DEVICES) {
        if (floor_allocated[id] > mi->peak_allocated) mi->peak_allocated = floor_allocated[id];
        if (floor_reserved[id] > mi->peak_reserved) mi->peak_reserved = floor_reserved[id];
    }
    return st;
}

static int memory_info(PyObject *id_obj, hwrt_memory_info *mi)
{
    int id;
    if (hwpy_device_arg(id_obj, &id) < 0) return -1;
    hwrt_status st = info_of(id, mi);
    if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
    return 0;
}

static PyObject *get_memory_info(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_id", NULL};
    PyObject *id_obj = Py_None;
    hwrt_memory_info mi;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:get_memory_info", kwlist, &id_obj) ||
        memory_info(id_obj, &mi) < 0)
        return NULL;
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "total", (Py_ssize_t)mi.total,
                         "free", (Py_ssize_t)mi.free, "used", (Py_ssize_t)mi.used,
                         "allocated", (Py_ssize_t)mi.allocated, "reserved",
                         (Py_ssize_t)mi.reserved, "peak_allocated", (Py_ssize_t)mi.peak_allocated,
                         "peak_reserved", (Py_ssize_t)mi.peak_reserved, "overhead",
                         (Py_ssize_t)mi.overhead);
}

/* memory_allocated(device_id=None) and its three siblings: one figure each. */
#define FIGURE(fn, field)                                                                  \
    static PyObject *fn(PyObject *m, PyObject *args, PyObject *kw)                         \
    {                                                                                      \
        static char *kwlist[] = {"device_id", NULL};                                       \
        PyObject *id_obj = Py_None;                                                        \
        hwrt_memory_info mi;                                                               \
        if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:" #fn, kwlist, &id_obj) ||          \
            memory_info(id_obj, &mi) < 0)                                                  \
            return NULL;                                                                   \
        return PyLong_FromSize_t(mi.field);                                                \
    }
FIGURE(memory_allocated, allocated)
FIGURE(max_memory_allocated, peak_allocated)
FIGURE(memory_reserved, reserved)
FIGURE(max_memory_reserved, peak_reserved)

static int put(PyObject *d, const char *key, long long v)
{
    PyObject *o = PyLong_FromLongLong(v);
    int rc = o ? PyDict_SetItemString(d, key, o) : -1;
    Py_XDECREF(o);
    return rc;
}

static int put_stat(PyObject *d, const char *name, const hwrt_stat *s)
{
    char k[96];
    snprintf(k, sizeof k, "%s.current", name);
    if (put(d, k, s->current) < 0) return -1;
    snprintf(k, sizeof k, "%s.peak", name);
    if (put(d, k, s->peak) < 0) return -1;
    snprintf(k, sizeof k, "%s.allocated", name);
    if (put(d, k, s->allocated) < 0) return -1;
    snprintf(k, sizeof k, "%s.freed", name);
    return put(d, k, s->freed);
}

static int put_pool_stats(PyObject *d, const hwrt_mem_stats *s)
{
    const struct { const char *n; const hwrt_stat *s; } stats[] = {
        {"allocation", &s->allocation}, {"segment", &s->segment}, {"active", &s->active},
        {"inactive_split", &s->inactive_split}, {"allocated_bytes", &s->allocated_bytes},
        {"reserved_bytes", &s->reserved_bytes}, {"active_bytes", &s->active_bytes},
        {"inactive_split_bytes", &s->inactive_split_bytes},
        {"requested_bytes", &s->requested_bytes}};
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++)
        if (put_stat(d, stats[i].n, stats[i].s) < 0) return -1;
    return put(d, "num_ooms", s->num_ooms) < 0 || put(d, "num_alloc_retries", s->num_alloc_retries) < 0 ||
           put(d, "num_device_alloc", s->num_device_alloc) < 0 ||
           put(d, "num_device_free", s->num_device_free) < 0 ||
           put(d, "num_sync_all_streams", s->num_sync_all_streams) < 0 ||
           put(d, "max_split_size", s->max_split_size) < 0 ? -1 : 0;
}

/* MindSpore's per-pool dict (memory_py.cc): block_unit_size, block_counts, blocks_info. */
static PyObject *pool_dict(long long unit, long long count)
{
    return Py_BuildValue("{s:L,s:L,s:N}", "block_unit_size", unit, "block_counts", count,
                         "blocks_info", PyDict_New());
}

/* memory_stats(device_id=None): MindSpore's keys (memory_py.cc), its spelling
 * "commom_mem_pool_stats" included, and, with the caching pool, PyTorch-style counters
 * ("allocation.current", ...). hwrt frees at once (no eager-free list) and has no
 * persistent pool: those figures are 0; its segments are sized per request, so
 * block_unit_size is 0 and block_counts is the number of segments. */
static PyObject *memory_stats(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_id", NULL};
    PyObject *id_obj = Py_None;
    int id;
    hwrt_memory_info mi;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:memory_stats", kwlist, &id_obj) ||
        hwpy_device_arg(id_obj, &id) < 0)
        return NULL;
    hwrt_status st = info_of(id, &mi);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    hwrt_mem_stats s;
    int have_pool = hwrt_memory_stats != NULL;
    if (have_pool && (st = hwrt_memory_stats(id, &s)) != HWRT_SUCCESS) return hwpy_raise(st);
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    PyObject *common = pool_dict(0, have_pool ? s.segment.current : 0), *persistent = pool_dict(0, 0);
    if (!common || !persistent ||
        put(d, "total_reserved_memory", (long long)mi.reserved) < 0 ||
        put(d, "total_allocated_memory", (long long)mi.allocated) < 0 ||
        put(d, "total_idle_memory", (long long)(mi.reserved - mi.allocated)) < 0 ||
        put(d, "total_eager_free_memory", 0) < 0 ||
        put(d, "max_reserved_memory", (long long)mi.peak_reserved) < 0 ||
        put(d, "max_allocated_memory", (long long)mi.peak_allocated) < 0 ||
        PyDict_SetItemString(d, "commom_mem_pool_stats", common) < 0 ||
        PyDict_SetItemString(d, "persistent_mem_pool_stats", persistent) < 0 ||
        (have_pool && put_pool_stats(d, &s) < 0)) {
        Py_XDECREF(common);
        Py_XDECREF(persistent);
        Py_DECREF(d);
        return NULL;
    }
    Py_DECREF(common);
    Py_DECREF(persistent);
    return d;
}

static PyObject *memory_summary(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_id", NULL};
    PyObject *id_obj = Py_None;
    int id;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:memory_summary", kwlist, &id_obj) ||
        hwpy_device_arg(id_obj, &id) < 0)
        return NULL;
    if (hwrt_memory_summary) {
        size_t len = 1 << 16;
        char *buf = PyMem_Malloc(len);
        if (!buf) return PyErr_NoMemory();
        hwrt_status st = hwrt_memory_summary(id, buf, len);
        PyObject *res = st == HWRT_SUCCESS ? PyUnicode_FromString(buf) : hwpy_raise(st);
        PyMem_Free(buf);
        return res;
    }
    /* a libhwrt without the pool's table: the figures it does have */
    hwrt_memory_info mi;
    hwrt_status st = info_of(id, &mi);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    const double MiB = 1048576.0;
    char buf[512];
    snprintf(buf, sizeof buf,
             "hwrt memory on %s device %d (MiB)\n  allocated %.2f   peak %.2f\n"
             "  reserved  %.2f   peak %.2f\n  device total %.2f   free %.2f   used %.2f   "
             "overhead %.2f\n", hwrt_current_backend(), id, mi.allocated / MiB,
             mi.peak_allocated / MiB, mi.reserved / MiB, mi.peak_reserved / MiB, mi.total / MiB,
             mi.free / MiB, mi.used / MiB, mi.overhead / MiB);
    return PyUnicode_FromString(buf);
}

enum { RESET_BOTH, RESET_ALLOCATED, RESET_RESERVED };

static PyObject *reset_peaks(PyObject *args, PyObject *kw, const char *fn, int which)
{
    static char *kwlist[] = {"device_id", NULL};
    PyObject *id_obj = Py_None;
    int id;
    char fmt[64];
    snprintf(fmt, sizeof fmt, "|O:%s", fn);
    if (!PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, &id_obj) ||
        hwpy_device_arg(id_obj, &id) < 0)
        return NULL;
    if (!hwrt_reset_peak_memory_stats)
        return hwpy_raise_msg(HWRT_ERROR_NOT_SUPPORTED, "%s: this libhwrt has no "
                              "hwrt_reset_peak_memory_stats (it comes with the caching pool); "
                              "rebuild hwrt", fn);
    hwrt_memory_info mi;
    hwrt_status st = info_of(id, &mi);      /* the peaks so far, floors included */
    if (st == HWRT_SUCCESS) st = hwrt_reset_peak_memory_stats(id);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    if (id >= 0 && id < PEAK_DEVICES) {
        floor_allocated[id] = which == RESET_RESERVED ? mi.peak_allocated : 0;
        floor_reserved[id] = which == RESET_ALLOCATED ? mi.peak_reserved : 0;
    }
    Py_RETURN_NONE;
}

static PyObject *reset_peak(PyObject *m, PyObject *args, PyObject *kw)
{
    return reset_peaks(args, kw, "reset_peak_memory_stats", RESET_BOTH);
}

static PyObject *reset_max_allocated(PyObject *m, PyObject *args, PyObject *kw)
{
    return reset_peaks(args, kw, "reset_max_memory_allocated", RESET_ALLOCATED);
}

static PyObject *reset_max_reserved(PyObject *m, PyObject *args, PyObject *kw)
{
    return reset_peaks(args, kw, "reset_max_memory_reserved", RESET_RESERVED);
}

static PyObject *memory_snapshot(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "device_id", NULL};
    PyObject *id_obj = Py_None, *path_obj;
    int id;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|O:memory_snapshot", kwlist,
                                     PyUnicode_FSConverter, &path_obj, &id_obj))
        return NULL;
    if (hwpy_device_arg(id_obj, &id) < 0) { Py_DECREF(path_obj); return NULL; }
    if (!hwrt_memory_snapshot) {
        Py_DECREF(path_obj);
        return hwpy_raise_msg(HWRT_ERROR_NOT_SUPPORTED, "memory_snapshot: this libhwrt has no "
                              "hwrt_memory_snapshot (it comes with the caching pool)");
    }
    hwrt_status st;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_memory_snapshot(id, path);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *empty_cache(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_id", NULL};
    PyObject *id_obj = Py_None;
    int id;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:empty_cache", kwlist, &id_obj) ||
        hwpy_device_arg(id_obj, &id) < 0)
        return NULL;
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_empty_cache(id);
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *synchronize(PyObject *m, PyObject *unused)
{
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_device_synchronize();
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

/* MindSpore's runtime.launch_blocking(): from now on every op completes before its call
 * returns, so a device fault is reported by the call that caused it. */
static PyObject *launch_blocking(PyObject *m, PyObject *unused)
{
    hwrt_status st = hwrt_set_config("launch_blocking", "1");
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

int hwpy_device_features(PyObject *d)
{
    return PyDict_SetItemString(d, "caching_pool", hwrt_memory_stats ? Py_True : Py_False);
}

#define KW(fn) (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS

PyMethodDef hwpy_device_top_methods[] = {
    {"get_device_id", get_device_id, METH_NOARGS, "get_device_id($module, /)\n--\n\n"
     "This thread's current device ordinal."},
    {"device_count", device_count, METH_VARARGS, "device_count($module, target=None, /)\n--\n\n"
     "Number of devices of the target (None: the backend in use, or the default one)."},
    {"current_backend", current_backend, METH_NOARGS, "current_backend($module, /)\n--\n\n"
     "Backend in use (\"\" before any)."},
    {"backend_info", backend_info, METH_O,
     "backend_info($module, target, /)\n--\n\n"
     "Returns dict(name, available, device_count, reason)"},
    {NULL}};

PyMethodDef hwpy_runtime_methods[] = {
    {"get_memory_info", KW(get_memory_info),
     "get_memory_info($module, device_id=None)\n--\n\n"
     "Returns dict of bytes: total, free, used (device-wide), allocated (live tensors), "
     "reserved (pool), peak_allocated, peak_reserved, overhead."},
    {"memory_allocated", KW(memory_allocated), "memory_allocated($module, device_id=None)\n--\n\n"
     "Bytes held by live tensors."},
    {"max_memory_allocated", KW(max_memory_allocated), "max_memory_allocated($module, device_id=None)\n--\n\n"
     "Peak of memory_allocated."},
    {"memory_reserved", KW(memory_reserved), "memory_reserved($module, device_id=None)\n--\n\n"
     "Bytes the pool holds from the device."},
    {"max_memory_reserved", KW(max_memory_reserved), "max_memory_reserved($module, device_id=None)\n--\n\n"
     "Peak of memory_reserved."},
    {"memory_stats", KW(memory_stats), "memory_stats($module, device_id=None)\n--\n\n"
     "Returns dict of counters."},
    {"memory_summary", KW(memory_summary), "memory_summary($module, device_id=None)\n--\n\n"
     "Returns str table."},
    {"reset_peak_memory_stats", KW(reset_peak), "reset_peak_memory_stats($module, device_id=None)\n--\n\n"
     "Restart the peak figures from now."},
    {"reset_max_memory_allocated", KW(reset_max_allocated),
     "reset_max_memory_allocated($module, device_id=None)\n--\n\n"
     "Restart max_memory_allocated from now (max_memory_reserved keeps its peak)."},
    {"reset_max_memory_reserved", KW(reset_max_reserved),
     "reset_max_memory_reserved($module, device_id=None)\n--\n\n"
     "Restart max_memory_reserved from now (max_memory_allocated keeps its peak)."},
    {"memory_snapshot", KW(memory_snapshot), "memory_snapshot($module, path, device_id=None)\n--\n\n"
     "Write the pool's segments and blocks (with allocation sites when record_alloc_sites "
     "is on) to path as JSON."},
    {"empty_cache", KW(empty_cache),
     "empty_cache($module, device_id=None)\n--\n\n"
     "Synchronize and return cached segments to the device."},
    {"synchronize", synchronize, METH_NOARGS, "synchronize($module, /)\n--\n\n"
     "Block until all work on the current device is done."},
    {"launch_blocking", launch_blocking, METH_NOARGS,
     "launch_blocking($module, /)\n--\n\n"
     "Make every op complete before its call returns (debugging)."},
    {NULL}};
