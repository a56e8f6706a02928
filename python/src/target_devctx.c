/* hwrt.device_context.{ascend,gpu,cpu}: one submodule per MindSpore target, each with
 * is_available() and device_count() bound to its target's name. */
#include "target.h"

#include <stdio.h>

static PyObject *dc_is_available(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(hwpy_target_available(PyUnicode_AsUTF8(self)));
}

static PyObject *dc_device_count(PyObject *self, PyObject *unused)
{
    const char *t = PyUnicode_AsUTF8(self);
    if (!hwpy_target_available(t))
        return PyErr_Format(PyExc_RuntimeError, "Device %s not exist. (hwrt: set "
                            "HWRT_SIMULATE=%s to let the simulated NPU stand in.)", t, t);
    int n;
    if (hwpy_target_count(t, &n) < 0) return NULL;
    return PyLong_FromLong(n);
}

static PyMethodDef dc_methods[] = {
    {"is_available", dc_is_available, METH_NOARGS, "is_available($module, /)\n--\n\n"
     "Whether this target can run here."},
    {"device_count", dc_device_count, METH_NOARGS, "device_count($module, /)\n--\n\n"
     "Devices of this target."},
    {NULL}};

int hwpy_devctx_init(PyObject *devctx)
{
    const struct { const char *sub, *target; } subs[] = {
        {"ascend", "Ascend"}, {"gpu", "GPU"}, {"cpu", "CPU"}};
    for (size_t i = 0; i < 3; i++) {
        char full[64];
        snprintf(full, sizeof full, "hwrt.device_context.%s", subs[i].sub);
        PyObject *sub = PyModule_New(full);
        PyObject *self = PyUnicode_FromString(subs[i].target);
        PyObject *modname = PyUnicode_FromString(full);   /* the functions' __module__ */
        PyObject *mods = PyImport_GetModuleDict();
        int rc = sub && self && modname ? 0 : -1;
        for (PyMethodDef *d = dc_methods; rc == 0 && d->ml_name; d++) {
            PyObject *f = PyCFunction_NewEx(d, self, modname);
            rc = f ? PyModule_AddObject(sub, d->ml_name, f) : -1;
            if (rc < 0) Py_XDECREF(f);
        }
        if (rc == 0) rc = PyDict_SetItemString(mods, full, sub);
        Py_XDECREF(self);
        Py_XDECREF(modname);
        if (rc < 0 || PyModule_AddObject(devctx, subs[i].sub, sub) < 0) {
            Py_XDECREF(sub);
            return -1;
        }
    }
    return 0;
}
