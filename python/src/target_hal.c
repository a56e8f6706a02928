/* hwrt.hal's device functions (MindSpore's hal/device.py): is_initialized, is_available,
 * device_count, get_device_properties, get_device_name, get_device_capability,
 * get_arch_list, for MindSpore's three targets; the devices of the chosen one only. */
#include "target.h"

#include <stdlib.h>
#include <string.h>

static const char *const valid_targets = "['CPU', 'GPU', 'Ascend']";

/* device_target argument: must be one of MindSpore's three ("" for fn's message). */
static int valid_target(PyObject *obj, const char *fn, const char **out)
{
    const char *t = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (!t || (strcmp(t, "CPU") && strcmp(t, "GPU") && strcmp(t, "Ascend"))) {
        if (PyErr_Occurred()) return -1;
        PyObject *r = PyObject_Repr(obj);
        PyErr_Format(PyExc_ValueError, "For '%s', the argument 'device_target' must be one of "
                     "%s, but got %S.", fn, valid_targets, r ? r : Py_None);
        Py_XDECREF(r);
        return -1;
    }
    *out = t;
    return 0;
}

int hwpy_target_available(const char *ms)
{
    if (!strcmp(ms, "CPU")) return 1;
    if (hwpy_chosen.chosen && !strcmp(hwpy_chosen.ms_target, ms)) return 1;
    char buf[32];
    hwrt_backend_desc d;
    if (hwrt_backend_info(hwpy_map_target(ms, buf, sizeof buf), &d) == HWRT_SUCCESS && d.available)
        return 1;
    return hwpy_simulate_allowed(ms);
}

static PyObject *hal_is_available(PyObject *m, PyObject *arg)
{
    const char *t;
    if (valid_target(arg, "hal.is_available", &t) < 0) return NULL;
    return PyBool_FromLong(hwpy_target_available(t));
}

static PyObject *hal_is_initialized(PyObject *m, PyObject *arg)
{
    const char *t;
    if (valid_target(arg, "hal.is_initialized", &t) < 0) return NULL;
    return PyBool_FromLong(hwpy_chosen.chosen && !strcmp(hwpy_chosen.ms_target, t) && hwpy_device_used);
}

/* The device_target argument of the hal functions: None -> the context's target. */
static int hal_target(PyObject *obj, const char **out)
{
    if (!obj || obj == Py_None) {
        const char *t = hwpy_context_target();
        const char *ms = hwpy_ms_name(t);
        if (!ms) {
            PyErr_Format(PyExc_ValueError, "The argument 'device_target' must be one of %s, "
                         "but got %s (hwrt's own target; name one of MindSpore's).",
                         valid_targets, t);
            return -1;
        }
        *out = ms;
    } else if (valid_target(obj, "hal", out) < 0) {
        return -1;
    }
    if (!hwpy_target_available(*out)) {
        PyErr_Format(PyExc_ValueError, "%s backend is not available for this MindSpore package."
                     "You can call hal.is_available to check the reason. (hwrt: set "
                     "HWRT_SIMULATE=%s to let the simulated NPU stand in.)", *out, *out);
        return -1;
    }
    return 0;
}

/* Is t the target this process runs on (so that its devices can be asked)? */
static int is_current(const char *t)
{
    return hwpy_chosen.chosen && !strcmp(hwpy_chosen.ms_target, t);
}

static int hal_device_id(PyObject *obj, int *id)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "device_id must be an int, not %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    long v = PyLong_AsLong(obj);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0) {
        PyErr_Format(PyExc_ValueError, "`device_id` should not be negative, but got %ld.", v);
        return -1;
    }
    *id = (int)v;
    return 0;
}

static PyObject *not_current(const char *fn, const char *t)
{
    return PyErr_Format(PyExc_RuntimeError, "hal.%s(device_target=\"%s\"): this process runs on "
                        "\"%s\"; hwrt can only describe the devices of the target set_device "
                        "chose", fn, t, hwpy_context_target());
}

int hwpy_target_count(const char *t, int *n)
{
    if (!strcmp(t, "CPU")) { *n = 1; return 0; }
    if (!is_current(t)) {
        /* not chosen yet: the model's card count, or the real backend's */
        const hwpy_preset *p = hwpy_preset_of(t);
        char buf[32];
        hwrt_backend_desc d;
        if (hwrt_backend_info(hwpy_map_target(t, buf, sizeof buf), &d) == HWRT_SUCCESS &&
            d.available) {
            *n = d.device_count;
            return 0;
        }
        const char *env = getenv("HWRT_SIM_DEVICES");
        *n = env && *env ? atoi(env) : atoi(p->devices);
        return 0;
    }
    hwrt_status st = hwrt_device_count(NULL, n);
    if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
    return 0;
}

static PyObject *hal_device_count(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_target", NULL};
    PyObject *t_obj = Py_None;
    const char *t;
    int n;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:device_count", kwlist, &t_obj) ||
        hal_target(t_obj, &t) < 0 || hwpy_target_count(t, &n) < 0)
        return NULL;
    return PyLong_FromLong(n);
}

static PyObject *hal_get_device_properties(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_id", "device_target", NULL};
    PyObject *id_obj, *t_obj = Py_None;
    const char *t;
    int id;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:get_device_properties", kwlist, &id_obj,
                                     &t_obj) ||
        hal_target(t_obj, &t) < 0 || hal_device_id(id_obj, &id) < 0)
        return NULL;
    if (!strcmp(t, "CPU")) Py_RETURN_NONE;     /* _cpu.py: None for CPU */
    if (!is_current(t)) return not_current("get_device_properties", t);
    PyObject *p = hwpy_props_object(id);
    /* hal/device.py: "For Ascend, backend must be initialized before calling this method,
     * or total_memory and free_memory will be 0" (tests/st/hal/test_hal_device.py checks) */
    if (p && !strcmp(t, "Ascend") && !hwpy_device_used && hwpy_props_zero_memory(p) < 0)
        Py_CLEAR(p);
    return p;
}

static PyObject *hal_get_device_name(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_id", "device_target", NULL};
    PyObject *id_obj, *t_obj = Py_None;
    const char *t;
    int id;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:get_device_name", kwlist, &id_obj, &t_obj) ||
        hal_target(t_obj, &t) < 0 || hal_device_id(id_obj, &id) < 0)
        return NULL;
    if (!strcmp(t, "CPU")) return PyUnicode_FromString("CPU");
    if (!is_current(t)) return not_current("get_device_name", t);
    hwrt_device_props p;
    hwrt_status st = hwrt_get_device_props(id, &p);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    char name[192];
    hwpy_device_name(&p, name, sizeof name);
    return PyUnicode_FromString(name);
}

static PyObject *hal_get_device_capability(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_id", "device_target", NULL};
    PyObject *id_obj, *t_obj = Py_None;
    const char *t;
    int id, n;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:get_device_capability", kwlist, &id_obj,
                                     &t_obj) ||
        hal_target(t_obj, &t) < 0 || hal_device_id(id_obj, &id) < 0 || hwpy_target_count(t, &n) < 0)
        return NULL;
    if (strcmp(t, "GPU")) Py_RETURN_NONE;      /* _ascend.py, _cpu.py: None */
    if (id >= n)
        return PyErr_Format(PyExc_ValueError, "device_id %d is out of range: %d GPU devices", id, n);
    const hwpy_preset *p = hwpy_preset_of("GPU");
    return Py_BuildValue("(ii)", p->major, p->minor);
}

/* The architectures this build has device code for: none (hwrt compiles no CUDA or
 * Ascend kernels; the simulated devices run host code), so None as MindSpore gives for
 * Ascend and CPU. The target is still validated. */
static PyObject *hal_get_arch_list(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_target", NULL};
    PyObject *t_obj = Py_None;
    const char *t;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:get_arch_list", kwlist, &t_obj) ||
        hal_target(t_obj, &t) < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyMethodDef hwpy_hal_device_methods[] = {
    {"is_initialized", hal_is_initialized, METH_O,
     "is_initialized($module, device_target, /)\n--\n\n"
     "Whether the target was chosen and has run work."},
    {"is_available", hal_is_available, METH_O, "is_available($module, device_target, /)\n--\n\n"
     "Whether the target can run here."},
    {"device_count", KW(hal_device_count), "device_count($module, device_target=None)\n--\n\n"
     "Number of devices of the target (default: the one in use)."},
    {"get_device_properties", KW(hal_get_device_properties),
     "get_device_properties($module, device_id, device_target=None)\n--\n\n"
     "Returns DeviceProperties (None for CPU)."},
    {"get_device_name", KW(hal_get_device_name), "get_device_name($module, device_id, device_target=None)\n--\n\n"
     "The device's name."},
    {"get_device_capability", KW(hal_get_device_capability),
     "get_device_capability($module, device_id, device_target=None)\n--\n\n"
     "Returns (major, minor) for GPU, else None."},
    {"get_arch_list", KW(hal_get_arch_list), "get_arch_list($module, device_target=None)\n--\n\n"
     "Returns None (as MindSpore's)."},
    {NULL}};
