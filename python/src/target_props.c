/* hwrt.get_current_device's DeviceInfo and the DeviceProperties object (hwrt.
 * get_device_properties, hal.get_device_properties): what the chosen device reports,
 * with the stand-in model's name and GPU figures when the sim stands in (target.c). */
#include "target.h"

#include <string.h>

/* ---- DeviceInfo: get_current_device() -> ("Ascend", 0) with .device_target, .device_id */

static PyTypeObject devinfo_type;
static PyStructSequence_Field devinfo_fields[] = {
    {"device_target", "the target set_device chose"}, {"device_id", "its device id"}, {NULL}};
static PyStructSequence_Desc devinfo_desc = {"hwrt.DeviceInfo",
                                             "(device_target, device_id)", devinfo_fields, 2};

PyObject *hwpy_get_current_device(PyObject *m, PyObject *unused)
{
    PyObject *r = PyStructSequence_New(&devinfo_type);
    if (!r) return NULL;
    int id = hwpy_chosen.device_id;
    if (!hwpy_chosen.chosen && *hwrt_current_backend() && hwrt_get_device(&id) != HWRT_SUCCESS) id = 0;
    PyObject *t = PyUnicode_FromString(hwpy_context_target()), *i = PyLong_FromLong(id);
    if (!t || !i) { Py_XDECREF(t); Py_XDECREF(i); Py_DECREF(r); return NULL; }
    PyStructSequence_SetItem(r, 0, t);
    PyStructSequence_SetItem(r, 1, i);
    return r;
}

/* ---- device properties: an object with attributes (and [] for hwrt's older dict use) */

typedef struct {
    PyObject_HEAD
    PyObject *d;
} props_obj;

static void props_dealloc(PyObject *self)
{
    Py_XDECREF(((props_obj *)self)->d);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *props_getattro(PyObject *self, PyObject *name)
{
    PyObject *v = PyDict_GetItemWithError(((props_obj *)self)->d, name);
    if (v) return Py_NewRef(v);
    if (PyErr_Occurred()) return NULL;
    return PyObject_GenericGetAttr(self, name);
}

static PyObject *props_getitem(PyObject *self, PyObject *key)
{
    return PyObject_GetItem(((props_obj *)self)->d, key);
}

static PyObject *props_keys(PyObject *self, PyObject *unused)
{
    return PyDict_Keys(((props_obj *)self)->d);
}

static PyObject *props_repr(PyObject *self)
{
    PyObject *d = ((props_obj *)self)->d;
    PyObject *name = PyDict_GetItemString(d, "name"), *tot = PyDict_GetItemString(d, "total_memory"),
             *fr = PyDict_GetItemString(d, "free_memory");
    long long t = tot ? PyLong_AsLongLong(tot) : 0, f = fr ? PyLong_AsLongLong(fr) : 0;
    return PyUnicode_FromFormat("_DeviceProperties(name='%S', total_memory=%lldMB, "
                                "free_memory=%lldMB, simulated=%S)", name ? name : Py_None,
                                t >> 20, f >> 20, PyDict_GetItemString(d, "simulated"));
}

static PyMappingMethods props_mapping = {.mp_subscript = props_getitem};
static PyMethodDef props_methods[] = {
    {"keys", props_keys, METH_NOARGS, "keys($self, /)\n--\n\n"
     "Names of the properties."}, {NULL}};

static PyTypeObject props_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hwrt.hal.DeviceProperties",
    .tp_basicsize = sizeof(props_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Device properties: name, total_memory, free_memory (bytes), and for a GPU "
              "major, minor, multi_processor_count, is_integrated, is_multi_gpu_board; hwrt's "
              "device_id, backend, compute_units, copy_engines, link_gbps, simulated.",
    .tp_dealloc = props_dealloc,
    .tp_getattro = props_getattro,
    .tp_as_mapping = &props_mapping,
    .tp_repr = props_repr,
    .tp_methods = props_methods,
};

void hwpy_device_name(const hwrt_device_props *p, char *buf, size_t len)
{
    if (hwpy_chosen.model)
        snprintf(buf, len, "%s%s", hwpy_chosen.model->name,
                 hwpy_chosen.memory_overridden ? " [memory from HWRT_SIM_MEMORY]" : "");
    else if (hwpy_chosen.chosen && !strcmp(hwpy_chosen.ms_target, "CPU"))
        snprintf(buf, len, "CPU");
    else
        snprintf(buf, len, "%s", p->name);
}

PyObject *hwpy_props_object(int id)
{
    hwrt_device_props p;
    hwrt_memory_info mi;
    hwrt_status st = hwrt_get_device_props(id, &p);
    if (st == HWRT_SUCCESS) st = hwrt_get_memory_info(id, &mi);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    char name[192];
    hwpy_device_name(&p, name, sizeof name);
    PyObject *d = Py_BuildValue("{s:s,s:n,s:n,s:i,s:s,s:i,s:i,s:O,s:d}", "name", name,
                                "total_memory", (Py_ssize_t)p.total_memory, "free_memory",
                                (Py_ssize_t)mi.free, "device_id", p.device_id, "backend",
                                p.backend, "compute_units", p.compute_units, "copy_engines",
                                p.copy_engines, "simulated", p.simulated ? Py_True : Py_False,
                                "link_gbps", p.link_gbps);
    if (!d) return NULL;
    if (hwpy_chosen.model && hwpy_chosen.model->major >= 0) {
        PyObject *extra = Py_BuildValue("{s:i,s:i,s:i,s:O,s:O,s:i}", "major", hwpy_chosen.model->major,
                                        "minor", hwpy_chosen.model->minor, "multi_processor_count",
                                        hwpy_chosen.model->sm_count, "is_integrated", Py_False,
                                        "is_multi_gpu_board", Py_False, "warp_size", 32);
        if (!extra || PyDict_Update(d, extra) < 0) { Py_XDECREF(extra); Py_DECREF(d); return NULL; }
        Py_DECREF(extra);
    }
    props_obj *o = PyObject_New(props_obj, &props_type);
    if (!o) { Py_DECREF(d); return NULL; }
    o->d = d;
    return (PyObject *)o;
}

/* hwrt.get_device_properties(device_id=None): hwrt's own, for any target. */
PyObject *hwpy_get_device_props(PyObject *m, PyObject *args)
{
    PyObject *id_obj = Py_None;
    int id;
    if (!PyArg_ParseTuple(args, "|O:get_device_properties", &id_obj) ||
        hwpy_device_arg(id_obj, &id) < 0)
        return NULL;
    return hwpy_props_object(id);
}

int hwpy_props_zero_memory(PyObject *props)
{
    PyObject *zero = PyLong_FromLong(0), *d = ((props_obj *)props)->d;
    int rc = zero && PyDict_SetItemString(d, "total_memory", zero) == 0 &&
             PyDict_SetItemString(d, "free_memory", zero) == 0 ? 0 : -1;
    Py_XDECREF(zero);
    return rc;
}

int hwpy_target_props_init(PyObject *module, PyObject *hal)
{
    if (PyType_Ready(&props_type) < 0 ||
        (!devinfo_type.tp_name && PyStructSequence_InitType2(&devinfo_type, &devinfo_desc) < 0) ||
        PyModule_AddObjectRef(module, "DeviceInfo", (PyObject *)&devinfo_type) < 0 ||
        PyModule_AddObjectRef(hal, "DeviceProperties", (PyObject *)&props_type) < 0)
        return -1;
    return 0;
}
