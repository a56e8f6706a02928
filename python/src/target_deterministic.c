/* hwrt.set_deterministic (MindSpore's device_manager.py): the once-only switch, and the
 * environment variables it sets (hwpy_set_deterministic_env, also set_context's). */
#include "target.h"

static int deterministic_set;

/* os.environ[key] = value, or del when value is NULL (os.environ also calls putenv) */
static int environ_set(const char *key, const char *value)
{
    PyObject *os = PyImport_ImportModule("os");
    PyObject *env = os ? PyObject_GetAttrString(os, "environ") : NULL;
    int rc = -1;
    if (env) {
        if (value) {
            PyObject *v = PyUnicode_FromString(value);
            rc = v ? PyMapping_SetItemString(env, key, v) : -1;
            Py_XDECREF(v);
        } else {
            PyObject *k = PyUnicode_FromString(key);
            int has = k ? PySequence_Contains(env, k) : -1;
            rc = has == 1 ? PyObject_DelItem(env, k) : has;
            Py_XDECREF(k);
        }
    }
    Py_XDECREF(env);
    Py_XDECREF(os);
    return rc;
}

/* MindSpore's switch for deterministic computing: HCCL_DETERMINISTIC / TE_PARALLEL_COMPILER
 * as MindSpore sets them. hwrt's own ops are deterministic either way (the sim runs them
 * in one order; the host reduction of the collectives has a fixed order). */
int hwpy_set_deterministic_env(int on)
{
    return environ_set("HCCL_DETERMINISTIC", on ? "true" : NULL) < 0 ||
                   environ_set("TE_PARALLEL_COMPILER", on ? "1" : NULL) < 0
               ? -1 : 0;
}

PyObject *hwpy_set_deterministic(PyObject *m, PyObject *arg)
{
    if (!PyBool_Check(arg))
        return PyErr_Format(PyExc_TypeError, "The parameter 'deterministic' must be <class "
                            "'bool'>, but got <class '%.100s'>", Py_TYPE(arg)->tp_name);
    if (deterministic_set)
        return PyErr_Format(PyExc_RuntimeError, "The 'mindspore.set_deterministic' can not be "
                            "set repeatedly.");
    if (hwpy_set_deterministic_env(arg == Py_True) < 0) return NULL;
    deterministic_set = 1;
    Py_RETURN_NONE;
}
