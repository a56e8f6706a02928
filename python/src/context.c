/* hwrt.set_context / get_context / set_offload_context / get_offload_context.
 *
 * Every key except mode, device_target and device_id is an hwrt_set_config key
 * (memory_offload, max_device_memory, max_split_size, launch_blocking, ...), so the
 * Python names, HWRT_ALLOC_CONF / HWRT_OFFLOAD_CONF and the C API agree. A call applies
 * all its keys or none: on the first bad one the keys already set get their old values
 * back and the error names the bad one.
 *
 * mode: hwrt has no graph compiler; GRAPH_MODE is asynchronous execution (ops return at
 * once), PYNATIVE_MODE is the seed's "the framework synchronizes for you", i.e.
 * launch_blocking (each op completes before its call returns). get_context("mode")
 * reads it back from launch_blocking. */
#include "hwpy.h"

#include <stdlib.h>
#include <string.h>

enum { GRAPH_MODE = 0, PYNATIVE_MODE = 1 };

static const char *const offload_keys[] = {"auto_offload", "offload_cpu_size",
                                           "offload_disk_size", "offload_path",
                                           "enable_pinned_mem", "prefetch_depth", NULL};
static const char *const bool_keys[] = {"auto_offload", "enable_pinned_mem",
                                        "expandable_segments", "record_alloc_sites",
                                        "pinned_pool", "launch_blocking", "check_sync", NULL};

static int in_list(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (!strcmp(*list, key)) return 1;
    return 0;
}

/* A Python value as hwrt_set_config text. Returns a new bytes-like str or NULL. */
static PyObject *config_text(const char *key, PyObject *v)
{
    if (PyBool_Check(v))
        return PyUnicode_FromString(v == Py_True ? "true" : "false");
    if (PyLong_Check(v) || PyFloat_Check(v))
        return PyObject_Str(v);
    if (PyUnicode_Check(v))
        return Py_NewRef(v);
    PyErr_Format(PyExc_TypeError, "%s: value must be a str, int, float or bool, not %.100s", key,
                 Py_TYPE(v)->tp_name);
    return NULL;
}

typedef struct { char key[64]; char old[512]; } saved;

static void roll_back(saved *undo, Py_ssize_t n)
{
    for (Py_ssize_t i = n - 1; i >= 0; i--)
        hwrt_set_config(undo[i].key, undo[i].old);   /* values hwrt itself printed */
}

/* Set every (key, value) of items (a list of 2-tuples) or none. On success *keep (when
 * given) receives the old values (free() it; roll_back with n = len(items)). */
static int apply_all(PyObject *items, saved **keep)
{
    Py_ssize_t n = PyList_GET_SIZE(items);
    saved *undo = calloc((size_t)n + 1, sizeof *undo);
    if (!undo) { PyErr_NoMemory(); return -1; }
    Py_ssize_t done = 0;
    int rc = 0;
    for (; done < n; done++) {
        PyObject *kv = PyList_GET_ITEM(items, done);
        const char *key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kv, 0));
        PyObject *text = key ? config_text(key, PyTuple_GET_ITEM(kv, 1)) : NULL;
        const char *value = text ? PyUnicode_AsUTF8(text) : NULL;
        if (!value) { Py_XDECREF(text); rc = -1; break; }
        snprintf(undo[done].key, sizeof undo[done].key, "%s", key);
        hwrt_status st = hwrt_get_config(key, undo[done].old, sizeof undo[done].old);
        if (st == HWRT_SUCCESS) st = hwrt_set_config(key, value);
        Py_DECREF(text);
        if (st != HWRT_SUCCESS) { hwpy_raise(st); rc = -1; break; }
    }
    if (rc < 0)
        roll_back(undo, done);
    if (rc == 0 && keep)
        *keep = undo;
    else
        free(undo);
    return rc;
}

static int mode_value(PyObject *v, int *mode)
{
    long m = PyLong_Check(v) ? PyLong_AsLong(v) : -1;
    if (m != GRAPH_MODE && m != PYNATIVE_MODE) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "mode must be hwrt.GRAPH_MODE (0) or "
                        "hwrt.PYNATIVE_MODE (1)");
        return -1;
    }
    *mode = (int)m;
    return 0;
}

static PyObject *set_context(PyObject *m, PyObject *args, PyObject *kw)
{
    if (PyTuple_GET_SIZE(args))
        return PyErr_Format(PyExc_TypeError, "set_context takes keyword arguments only");
    PyObject *items = PyList_New(0), *target = NULL, *dev = NULL;
    if (!items) return NULL;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    int mode = -1;
    while (kw && PyDict_Next(kw, &pos, &k, &v)) {
        const char *key = PyUnicode_AsUTF8(k);
        if (!key) goto fail;
        if (!strcmp(key, "device_target")) { target = v; continue; }
        if (!strcmp(key, "device_id")) { dev = v; continue; }
        if (!strcmp(key, "mode")) {
            if (mode_value(v, &mode) < 0) goto fail;
            v = mode == PYNATIVE_MODE ? Py_True : Py_False;
            key = "launch_blocking";
        }
        PyObject *kv = Py_BuildValue("(sO)", key, v);
        if (!kv || PyList_Append(items, kv) < 0) { Py_XDECREF(kv); goto fail; }
        Py_DECREF(kv);
    }
    if (target && !PyUnicode_Check(target)) {
        PyErr_SetString(PyExc_TypeError, "device_target must be a str such as \"sim\"");
        goto fail;
    }
    int id = 0;
    if (dev && hwpy_device_arg(dev, &id) < 0) goto fail;
    saved *undo = NULL;
    if (apply_all(items, &undo) < 0) goto fail;
    if (target || dev) {
        /* the device comes last; if it fails, the keys just set get their old values */
        PyObject *sd = PyObject_GetAttrString(m, "set_device");
        PyObject *r = NULL;
        if (sd) {
            const char *backend = hwrt_current_backend();
            r = target ? PyObject_CallFunction(sd, "Oi", target, id)
                       : PyObject_CallFunction(sd, "si", *backend ? backend : "auto", id);
        }
        Py_XDECREF(sd);
        if (!r) {
            roll_back(undo, PyList_GET_SIZE(items));
            free(undo);
            Py_DECREF(items);
            return NULL;
        }
        Py_DECREF(r);
    }
    free(undo);
    Py_DECREF(items);
    Py_RETURN_NONE;
fail:
    Py_DECREF(items);
    return NULL;
}

/* A config value in Python form: bools as bool, numbers as int/float, the rest str. */
static PyObject *config_value(const char *key)
{
    char buf[512];
    hwrt_status st = hwrt_get_config(key, buf, sizeof buf);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    if (!strcmp(key, "memory_offload"))
        return PyUnicode_FromString(strcmp(buf, "0") ? "ON" : "OFF");
    if (in_list(bool_keys, key))
        return PyBool_FromLong(strcmp(buf, "0") != 0);
    char *end;
    long long i = strtoll(buf, &end, 10);
    if (*buf && !*end) return PyLong_FromLongLong(i);
    double d = strtod(buf, &end);
    if (*buf && !*end) return PyFloat_FromDouble(d);
    return PyUnicode_FromString(buf);
}

static PyObject *get_context(PyObject *m, PyObject *arg)
{
    const char *key = PyUnicode_AsUTF8(arg);
    if (!key) return NULL;
    if (!strcmp(key, "mode")) {
        PyObject *lb = config_value("launch_blocking");
        if (!lb) return NULL;
        int pynative = lb == Py_True;
        Py_DECREF(lb);
        return PyLong_FromLong(pynative ? PYNATIVE_MODE : GRAPH_MODE);
    }
    if (!strcmp(key, "device_target")) return PyUnicode_FromString(hwrt_current_backend());
    if (!strcmp(key, "device_id")) {
        int id;
        hwrt_status st = hwrt_get_device(&id);
        return st == HWRT_SUCCESS ? PyLong_FromLong(id) : hwpy_raise(st);
    }
    return config_value(key);
}

static PyObject *set_offload_context(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"offload_config", NULL};
    PyObject *cfg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:set_offload_context", kwlist, &cfg))
        return NULL;
    if (cfg == Py_None) Py_RETURN_NONE;
    if (!PyDict_Check(cfg))
        return PyErr_Format(PyExc_TypeError, "offload_config must be a dict");
    PyObject *items = PyList_New(0);
    if (!items) return NULL;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(cfg, &pos, &k, &v)) {
        const char *key = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        if (!key || !in_list(offload_keys, key)) {
            Py_DECREF(items);
            if (key)
                return hwpy_raise_msg(HWRT_ERROR_INVALID_ARGUMENT, "set_offload_context: key '%s' "
                                      "is not supported by hwrt; the keys are auto_offload, "
                                      "offload_cpu_size, offload_disk_size, offload_path, "
                                      "enable_pinned_mem, prefetch_depth", key);
            return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "offload_config keys must be str");
        }
        PyObject *kv = Py_BuildValue("(OO)", k, v);
        if (!kv || PyList_Append(items, kv) < 0) { Py_XDECREF(kv); Py_DECREF(items); return NULL; }
        Py_DECREF(kv);
    }
    int rc = apply_all(items, NULL);
    Py_DECREF(items);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *get_offload_context(PyObject *m, PyObject *unused)
{
    PyObject *d = PyDict_New();
    for (const char *const *k = offload_keys; d && *k; k++) {
        PyObject *v = config_value(*k);
        if (!v || PyDict_SetItemString(d, *k, v) < 0) { Py_XDECREF(v); Py_CLEAR(d); break; }
        Py_DECREF(v);
    }
    return d;
}

PyMethodDef hwpy_context_methods[] = {
    {"set_context", (PyCFunction)(void (*)(void))set_context, METH_VARARGS | METH_KEYWORDS,
     "set_context($module, /, **kwargs)\n--\n\n"
     "mode=GRAPH_MODE|PYNATIVE_MODE, device_target=, device_id=, and any hwrt config key "
     "(memory_offload=\"ON\", max_device_memory=\"24GB\", ...). All or none."},
    {"get_context", get_context, METH_O, "get_context($module, key, /)\n--\n\n"
     "The current value."},
    {"set_offload_context", (PyCFunction)(void (*)(void))set_offload_context,
     METH_VARARGS | METH_KEYWORDS,
     "set_offload_context($module, offload_config=None)\n--\n\n"
     "auto_offload, offload_cpu_size, offload_disk_size, offload_path, enable_pinned_mem, "
     "prefetch_depth. All or none."},
    {"get_offload_context", get_offload_context, METH_NOARGS, "get_offload_context($module, /)\n--\n\n"
     "The offload keys and values."},
    {NULL}};

int hwpy_context_init(PyObject *module)
{
    if (PyModule_AddIntConstant(module, "GRAPH_MODE", GRAPH_MODE) < 0 ||
        PyModule_AddIntConstant(module, "PYNATIVE_MODE", PYNATIVE_MODE) < 0)
        return -1;
    return 0;
}
