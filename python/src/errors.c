/* hwrt statuses as Python exceptions. Every failing hwrt call raises a subclass of
 * hwrt.HwrtError (itself a RuntimeError) whose message is hwrt_last_error()'s sentence
 * and whose .status / .status_name say which hwrt_status it was. Statuses about bad
 * values also derive from ValueError, so generic `except ValueError` code works. */
#include "hwpy.h"

#include <stdarg.h>

static PyObject *base_error;
static PyObject *by_status[HWRT_ERROR_INTERNAL + 1];

static const struct {
    hwrt_status st;
    const char *name;
    int value_error;
    const char *doc;
} table[] = {
    {HWRT_ERROR_INVALID_ARGUMENT, "InvalidArgumentError", 1, "A bad size, shape, dtype, key or value."},
    {HWRT_ERROR_INVALID_DEVICE, "InvalidDeviceError", 1, "Unknown backend or device ordinal out of range."},
    {HWRT_ERROR_NO_DEVICE, "NoDeviceError", 0, "The backend works but has no device."},
    {HWRT_ERROR_UNAVAILABLE, "UnavailableError", 0, "Driver or hardware absent (the reason is in the message)."},
    {HWRT_ERROR_OUT_OF_MEMORY, "OutOfMemoryError", 0, "Device memory exhausted (breakdown in the message)."},
    {HWRT_ERROR_HOST_OUT_OF_MEMORY, "HostOutOfMemoryError", 0, "Host memory exhausted."},
    {HWRT_ERROR_NOT_READY, "NotReadyError", 0, "Work still pending."},
    {HWRT_ERROR_INVALID_HANDLE, "InvalidHandleError", 0, "A NULL, destroyed or foreign handle."},
    {HWRT_ERROR_NOT_SUPPORTED, "NotSupportedError", 0, "This backend or build cannot do it."},
    {HWRT_ERROR_NOT_PERMITTED, "NotPermittedError", 0, "Not allowed now (e.g. a host sync during capture)."},
    {HWRT_ERROR_DEVICE_BUSY, "DeviceBusyError", 0, "Device held exclusively by another process."},
    {HWRT_ERROR_DEVICE_FAULT, "DeviceError", 0, "Sticky device fault: reset the device."},
    {HWRT_ERROR_DIST, "DistError", 0, "A distributed peer failed or timed out."},
    {HWRT_ERROR_IO, "HwrtIOError", 0, "A file could not be read or written."},
    {HWRT_ERROR_INTERNAL, "InternalError", 0, "A bug in hwrt; the message says where."},
};

static PyObject *raise_text(hwrt_status st, const char *text)
{
    PyObject *cls = ((unsigned)st <= HWRT_ERROR_INTERNAL && by_status[st]) ? by_status[st]
                                                                            : base_error;
    const char *msg = text && *text ? text : hwrt_status_name(st);
    PyObject *exc = PyObject_CallFunction(cls, "s", msg);
    if (!exc)
        return NULL;
    PyObject *code = PyLong_FromLong((long)st);
    PyObject *name = PyUnicode_FromString(hwrt_status_name(st));
    if (code && name) {
        PyObject_SetAttrString(exc, "status", code);
        PyObject_SetAttrString(exc, "status_name", name);
    }
    Py_XDECREF(code);
    Py_XDECREF(name);
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *hwpy_raise(hwrt_status st)
{
    return raise_text(st, hwrt_last_error());
}

PyObject *hwpy_raise_msg(hwrt_status st, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return raise_text(st, buf);
}

int hwpy_errors_init(PyObject *module)
{
    base_error = PyErr_NewExceptionWithDoc(
        "hwrt.HwrtError", "Base of every hwrt error; .status and .status_name give the "
        "hwrt_status, the message is the runtime's sentence.", PyExc_RuntimeError, NULL);
    if (!base_error || PyModule_AddObjectRef(module, "HwrtError", base_error) < 0)
        return -1;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char qual[96];
        snprintf(qual, sizeof qual, "hwrt.%s", table[i].name);
        PyObject *bases = table[i].value_error
                              ? PyTuple_Pack(2, base_error, PyExc_ValueError)
                              : PyTuple_Pack(1, base_error);
        if (!bases)
            return -1;
        PyObject *cls = PyErr_NewExceptionWithDoc(qual, table[i].doc, bases, NULL);
        Py_DECREF(bases);
        if (!cls || PyModule_AddObjectRef(module, table[i].name, cls) < 0)
            return -1;
        by_status[table[i].st] = cls;    /* ours for the life of the process */
    }
    return 0;
}
