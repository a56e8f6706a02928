/* hwrt.compat: run an unmodified MindSpore script on hwrt.
 *
 *   python3 -m hwrt.compat [--simulate TARGETS] script.py [args...]
 *   python3 -m hwrt.compat [--simulate TARGETS] -m package.module [args...]
 *   python3 -m hwrt.compat [--simulate TARGETS] -c "code" [args...]
 *
 * For that process only, `import mindspore` (and mindspore.runtime, .hal, .context,
 * .communication, .communication.management, .device_context.*, .dtype, .common.dtype,
 * .ops, .profiler) resolve to hwrt's modules, which carry MindSpore's names. Nothing is
 * installed: no `mindspore` package exists on disk, so a real MindSpore install is never
 * shadowed outside such a process. --simulate sets HWRT_SIMULATE (target.c) for the
 * process, e.g. "--simulate Ascend" to run set_device("Ascend") on the simulated Atlas
 * 800I A2 model.
 *
 * `-m hwrt.compat` works although hwrt is one extension module: hwrt.compat is made in C
 * with a module spec whose loader's get_code() returns the two lines that call _main(). */
#include "hwpy.h"

#include <string.h>

/* mindspore name -> hwrt module (sys.modules key) */
static const char *const aliases[][2] = {
    {"mindspore", "hwrt"},
    {"mindspore.runtime", "hwrt.runtime"},
    {"mindspore.hal", "hwrt.hal"},
    {"mindspore.context", "hwrt.context"},
    {"mindspore.communication", "hwrt.communication"},
    {"mindspore.communication.management", "hwrt.communication.management"},
    {"mindspore.communication.comm_func", "hwrt.communication.comm_func"},
    {"mindspore.device_context", "hwrt.device_context"},
    {"mindspore.device_context.ascend", "hwrt.device_context.ascend"},
    {"mindspore.device_context.gpu", "hwrt.device_context.gpu"},
    {"mindspore.device_context.cpu", "hwrt.device_context.cpu"},
    {"mindspore.dtype", "hwrt.dtype"},
    {"mindspore.common", "hwrt.common"},
    {"mindspore.common.dtype", "hwrt.dtype"},
    {"mindspore.common.initializer", "hwrt.common.initializer"},
    {"mindspore.ops", "hwrt.ops"},
    {"mindspore.profiler", "hwrt.profiler"},
};

/* install(): make `import mindspore...` resolve to hwrt in this process. Returns the
 * list of names it bound. A real mindspore already imported is left alone (RuntimeError). */
static PyObject *install(PyObject *m, PyObject *unused)
{
    PyObject *mods = PyImport_GetModuleDict();
    PyObject *have = PyDict_GetItemString(mods, "mindspore");
    PyObject *hw = PyDict_GetItemString(mods, "hwrt");
    if (have && have != hw)
        return PyErr_Format(PyExc_RuntimeError, "hwrt.compat: a module 'mindspore' (%R) is "
                            "already imported in this process; hwrt will not replace it", have);
    PyObject *bound = PyList_New(0);
    if (!bound) return NULL;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        PyObject *target = PyDict_GetItemString(mods, aliases[i][1]);
        if (!target) continue;                 /* a part this build lacks */
        PyObject *name = PyUnicode_FromString(aliases[i][0]);
        if (!name || PyDict_SetItem(mods, name, target) < 0 || PyList_Append(bound, name) < 0) {
            Py_XDECREF(name);
            Py_DECREF(bound);
            return NULL;
        }
        Py_DECREF(name);
    }
    return bound;
}

static int usage(const char *why)
{
    PySys_FormatStderr("usage: python3 -m hwrt.compat [--simulate Ascend|GPU|1] "
                       "(script.py | -m module | -c code) [args...]\n%s\n", why);
    PyObject *code = PyLong_FromLong(2);
    PyErr_SetObject(PyExc_SystemExit, code);
    Py_XDECREF(code);
    return -1;
}

/* _main(): the entry point -m runs. sys.argv[1:] is what follows `-m hwrt.compat`. */
static PyObject *compat_main(PyObject *m, PyObject *unused)
{
    PyObject *argv = PySys_GetObject("argv");          /* borrowed */
    if (!argv || !PyList_Check(argv)) return PyErr_Format(PyExc_RuntimeError, "no sys.argv");
    Py_ssize_t n = PyList_GET_SIZE(argv), i = 1;
    while (i < n) {
        const char *a = PyUnicode_AsUTF8(PyList_GET_ITEM(argv, i));
        if (!a) return NULL;
        const char *val = NULL;
        if (!strcmp(a, "--simulate") && i + 1 < n) {
            val = PyUnicode_AsUTF8(PyList_GET_ITEM(argv, i + 1));
            i += 2;
        } else if (!strncmp(a, "--simulate=", 11)) {
            val = a + 11;
            i += 1;
        } else {
            break;
        }
        if (!val || !*val) {
            usage("--simulate needs a value such as Ascend, GPU or 1");
            return NULL;
        }
        /* through os.environ, so the script sees it there too (it also calls putenv) */
        PyObject *os = PyImport_ImportModule("os");
        PyObject *env = os ? PyObject_GetAttrString(os, "environ") : NULL;
        PyObject *v = env ? PyUnicode_FromString(val) : NULL;
        int rc = v ? PyMapping_SetItemString(env, "HWRT_SIMULATE", v) : -1;
        Py_XDECREF(v);
        Py_XDECREF(env);
        Py_XDECREF(os);
        if (rc < 0) return NULL;
    }
    if (i >= n) { usage("nothing to run"); return NULL; }
    const char *first = PyUnicode_AsUTF8(PyList_GET_ITEM(argv, i));
    int is_m = !strcmp(first, "-m"), is_c = !strcmp(first, "-c");
    if ((is_m || is_c) && i + 1 >= n) { usage(is_m ? "-m needs a module" : "-c needs code"); return NULL; }
    /* a reference of our own: sys.argv, which holds it, is replaced below */
    PyObject *what = Py_NewRef(PyList_GET_ITEM(argv, is_m || is_c ? i + 1 : i));
    PyObject *rest = PyList_GetSlice(argv, is_m || is_c ? i + 1 : i, n);
    if (!rest) { Py_DECREF(what); return NULL; }
    if (is_c) {                                 /* python -c: argv[0] is "-c" */
        PyObject *dash = PyUnicode_FromString("-c");
        if (!dash || PyList_SetItem(rest, 0, dash) < 0) {
            Py_DECREF(rest);
            Py_DECREF(what);
            return NULL;
        }
    }
    PyObject *bound = install(m, NULL);
    if (!bound || PySys_SetObject("argv", rest) < 0) {
        Py_XDECREF(bound);
        Py_DECREF(rest);
        Py_DECREF(what);
        return NULL;
    }
    Py_DECREF(bound);
    Py_DECREF(rest);
    PyObject *runpy = PyImport_ImportModule("runpy"), *r = NULL;
    PyObject *path = PySys_GetObject("path");          /* borrowed */
    if (runpy && path && PyList_Check(path)) {
        /* as `python3 script.py` would: sys.path[0] is the script's directory (-m and -c:
         * the current directory, which -m hwrt.compat already put there) */
        if (!is_m && !is_c) {
            PyObject *os_path = PyImport_ImportModule("os.path");
            PyObject *abs = os_path ? PyObject_CallMethod(os_path, "abspath", "O", what) : NULL;
            PyObject *dir = abs ? PyObject_CallMethod(os_path, "dirname", "O", abs) : NULL;
            int rc = dir ? (PyList_GET_SIZE(path) ? PyList_SetItem(path, 0, Py_NewRef(dir))
                                                  : PyList_Insert(path, 0, dir)) : -1;
            Py_XDECREF(os_path);
            Py_XDECREF(abs);
            Py_XDECREF(dir);
            if (rc < 0) goto done;
        }
        if (is_c) {
            PyObject *main_mod = PyImport_AddModule("__main__");           /* borrowed */
            PyObject *g = main_mod ? PyModule_GetDict(main_mod) : NULL;
            const char *src = PyUnicode_AsUTF8(what);
            PyObject *code = src ? Py_CompileString(src, "<string>", Py_file_input) : NULL;
            r = code && g ? PyEval_EvalCode(code, g, g) : NULL;
            Py_XDECREF(code);
        } else if (is_m) {
            r = PyObject_CallMethod(runpy, "run_module", "OOsO", what, Py_None, "__main__",
                                    Py_True);
        } else {
            r = PyObject_CallMethod(runpy, "run_path", "OOs", what, Py_None, "__main__");
        }
    }
done:
    Py_XDECREF(runpy);
    Py_DECREF(what);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_RETURN_NONE;
}

/* ---- the loader behind `python3 -m hwrt.compat` ---- */

typedef struct {
    PyObject_HEAD
} loader_obj;

static PyObject *loader_get_code(PyObject *self, PyObject *name)
{
    return Py_CompileString("import hwrt.compat as _hwrt_compat\n_hwrt_compat._main()\n",
                            "<hwrt.compat>", Py_file_input);
}

static PyObject *loader_is_package(PyObject *self, PyObject *name)
{
    Py_RETURN_FALSE;
}

static PyMethodDef loader_methods[] = {
    {"get_code", loader_get_code, METH_O, "get_code($self, fullname, /)\n--\n\n"
     "The code `python3 -m hwrt.compat` runs."},
    {"is_package", loader_is_package, METH_O, "is_package($self, fullname, /)\n--\n\n"
     "False."},
    {NULL}};

static PyTypeObject loader_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hwrt.compat._Loader",
    .tp_basicsize = sizeof(loader_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "_Loader()\n--\n\n"
              "Loader of hwrt.compat for runpy (python3 -m hwrt.compat).",
    .tp_new = PyType_GenericNew,
    .tp_methods = loader_methods,
};

static PyMethodDef compat_methods[] = {
    {"install", install, METH_NOARGS,
     "install($module, /)\n--\n\n"
     "Returns the names installed: `import mindspore` resolves to hwrt in this process (only)."},
    {"_main", compat_main, METH_NOARGS, "_main($module, /)\n--\n\n"
     "Entry point of python3 -m hwrt.compat."},
    {NULL}};

int hwpy_compat_init(PyObject *top, PyObject *compat)
{
    if (PyType_Ready(&loader_type) < 0 || hwpy_add_functions(compat, compat_methods) < 0)
        return -1;
    PyObject *loader = PyObject_CallNoArgs((PyObject *)&loader_type);
    PyObject *machinery = loader ? PyImport_ImportModule("importlib.machinery") : NULL;
    PyObject *spec = machinery ? PyObject_CallMethod(machinery, "ModuleSpec", "sO", "hwrt.compat",
                                                     loader) : NULL;
    /* runpy warns about a module found in sys.modules before it runs it unless the
     * module has __path__; its spec says it is no package */
    PyObject *empty = spec ? PyList_New(0) : NULL;
    int rc = empty && PyObject_SetAttrString(compat, "__spec__", spec) == 0 &&
                     PyObject_SetAttrString(compat, "__loader__", loader) == 0 &&
                     PyObject_SetAttrString(compat, "__path__", empty) == 0
                 ? 0 : -1;
    Py_XDECREF(empty);
    Py_XDECREF(spec);
    Py_XDECREF(machinery);
    Py_XDECREF(loader);
    return rc;
}
