/* Device targets as MindSpore names them ("Ascend", "GPU", "CPU") and hwrt's own ("sim",
 * "opencl", "auto"), the process's one chosen device, and the MindSpore functions that
 * describe devices: hwrt.set_device / get_current_device, hwrt.hal.is_initialized /
 * is_available / device_count / get_device_properties / get_device_name /
 * get_device_capability / get_arch_list, hwrt.device_context.{ascend,gpu,cpu}.
 *
 * Targets -> backends: "Ascend"/"NPU" -> ascend, "GPU"/"CUDA" -> cuda, "CPU" -> the sim
 * backend with a host model (see below), "sim" / "opencl" / "auto" as named.
 *
 * hwrt has no ascend backend yet, and cuda needs an NVIDIA driver and GPU. Where the
 * backend is unavailable, the switch HWRT_SIMULATE (environment: "1" for
 * both, or a comma list of "Ascend", "GPU") lets the simulated NPU stand in for them,
 * modelled on a real product (the presets below); every name it reports says
 * "(simulated)" and get_device_properties(...).simulated is True. Without the switch the
 * error names it.
 *
 * "CPU": the sim backend's engines are host threads running its kernels on host memory,
 * so the CPU target is that backend with one device whose memory is the host's physical
 * RAM (HWRT_SIM_* variables the user set still win). No separate host backend: it would
 * be the same code.
 *
 * As in MindSpore (device_manager.py), the first set_device fixes the process's target
 * and id: another one later raises RuntimeError (hwrt.NotPermittedError); an unknown
 * target or an id out of range still gets its own error first. */
#include "hwpy.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct {
    const char *target;      /* MindSpore's name */
    const char *name;        /* device name reported (always says simulated) */
    const char *memory;      /* HWRT_SIM_MEMORY of the model */
    const char *devices;     /* HWRT_SIM_DEVICES: cards per node */
    int major, minor;        /* compute capability (GPU); -1: none */
    int sm_count;            /* multi_processor_count (GPU); 0: none */
    const char *source;
} preset;

/* Atlas 800I A2: 8 Ascend 910B NPU modules per server, 64 GB HBM each (Huawei Atlas 800I
 * A2 inference server datasheet; npu-smi reports 65536 MB HBM per card).
 * H200 SXM: 141 GB HBM3e, compute capability 9.0, 132 SMs, 8 per HGX H200 node (NVIDIA
 * H200 Tensor Core GPU datasheet; decimal GB as NVIDIA gives it). */
static const preset presets[] = {
    {"Ascend", "Atlas 800I A2 NPU (simulated)", "64GB", "8", -1, -1, 0,
     "Huawei Atlas 800I A2 datasheet: 8 NPUs per node, 64 GB HBM per NPU"},
    {"GPU", "NVIDIA H200 (simulated)", "141000000000", "8", 9, 0, 132,
     "NVIDIA H200 datasheet: 141 GB HBM3e, compute capability 9.0, 132 SMs; 8 per HGX node"},
};

static struct {
    int chosen;              /* set_device succeeded */
    char target[16];         /* as the user wrote it ("Ascend") */
    char ms_target[16];      /* MindSpore's spelling ("Ascend", "GPU", "CPU") or "" */
    char backend[16];        /* the backend it runs on ("sim" for a stand-in) */
    int device_id;
    const preset *model;     /* NULL: no stand-in */
    int memory_overridden;   /* HWRT_SIM_MEMORY given by the user */
    int by_set_device;       /* chosen by set_device (fixed), not only set_context */
    int set_memory_env, set_devices_env;   /* apply_model wrote these variables */
} chosen;

int hwpy_device_used;        /* a tensor, stream or event was made (hal.is_initialized) */

/* MindSpore's spelling of a target ("Ascend", "GPU", "CPU") or NULL. */
static const char *ms_name(const char *target)
{
    if (!strcasecmp(target, "ascend") || !strcasecmp(target, "npu")) return "Ascend";
    if (!strcasecmp(target, "gpu") || !strcasecmp(target, "cuda")) return "GPU";
    if (!strcasecmp(target, "cpu")) return "CPU";
    return NULL;
}

const char *hwpy_map_target(const char *target, char *buf, size_t len)
{
    const char *ms = ms_name(target);
    if (ms && !strcmp(ms, "Ascend")) return "ascend";
    if (ms && !strcmp(ms, "GPU")) return "cuda";
    if (ms && !strcmp(ms, "CPU")) return "sim";
    size_t i;
    for (i = 0; target[i] && i + 1 < len; i++) buf[i] = (char)tolower((unsigned char)target[i]);
    buf[i] = 0;
    return buf;
}

static const preset *preset_of(const char *ms)
{
    for (size_t i = 0; ms && i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(presets[i].target, ms)) return &presets[i];
    return NULL;
}

/* HWRT_SIMULATE allows the sim to stand in for ms ("Ascend" / "GPU")? */
static int simulate_allowed(const char *ms)
{
    const char *v = getenv("HWRT_SIMULATE");
    if (!v || !*v) return 0;
    if (!strcmp(v, "1") || !strcasecmp(v, "all") || !strcasecmp(v, "true")) return 1;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        const char *n = ms_name(tok);
        if (n && !strcmp(n, ms)) return 1;
    }
    return 0;
}

/* Put the model into the sim's environment unless the user said otherwise. */
static void apply_model(const char *memory, const char *devices)
{
    chosen.memory_overridden = getenv("HWRT_SIM_MEMORY") && *getenv("HWRT_SIM_MEMORY");
    chosen.set_memory_env = !chosen.memory_overridden;
    chosen.set_devices_env = !(getenv("HWRT_SIM_DEVICES") && *getenv("HWRT_SIM_DEVICES"));
    if (chosen.set_memory_env) setenv("HWRT_SIM_MEMORY", memory, 1);
    if (chosen.set_devices_env) setenv("HWRT_SIM_DEVICES", devices, 1);
}

const char *hwpy_chosen_target(void)
{
    return chosen.chosen ? chosen.target : NULL;
}

/* The target as get_context("device_target") reports it: what the user chose, else the
 * backend in use, else "CPU" (nothing chosen: MindSpore's default on a host). */
const char *hwpy_context_target(void)
{
    if (chosen.chosen) return chosen.target;
    const char *b = hwrt_current_backend();
    return *b ? b : "CPU";
}

/* Undo what apply_model put into the environment (a new target is being chosen). */
static void unapply_model(void)
{
    if (chosen.set_memory_env) unsetenv("HWRT_SIM_MEMORY");
    if (chosen.set_devices_env) unsetenv("HWRT_SIM_DEVICES");
    chosen.set_memory_env = chosen.set_devices_env = 0;
}

int hwpy_choose_device(const char *target, PyObject *id_obj, int by_set_device)
{
    int id = 0;
    if (id_obj && id_obj != Py_None) {
        if (!PyLong_Check(id_obj) || PyBool_Check(id_obj)) {
            PyErr_Format(PyExc_TypeError, "The parameter 'device_id' must be <class 'int'>, but "
                         "got <class '%.100s'>", Py_TYPE(id_obj)->tp_name);
            return -1;
        }
        long v = PyLong_AsLong(id_obj);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < 0) {
            PyErr_Format(PyExc_ValueError, "The device id must bigger than or equal to 0, but got "
                         "%ld.", v);
            return -1;
        }
        if (v > 4095) {
            PyErr_Format(PyExc_ValueError, "device_id must be in range [0, 4095], but got %ld.", v);
            return -1;
        }
        id = (int)v;
    }
    /* set_context(device_target=...) only names the target, as MindSpore's context
     * parameter does: before any work a later call may name another (hwrt starts over) */
    int rechoose = chosen.chosen && !chosen.by_set_device && !hwpy_device_used &&
                   (strcmp(chosen.target, target) || chosen.device_id != id);
    if (chosen.chosen && !rechoose) {
        if (!strcmp(chosen.target, target) && chosen.device_id == id) {
            /* the same choice: make it this thread's device too (hwrt's is per thread) */
            hwrt_status st = hwrt_set_device(chosen.backend, id);
            if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
            chosen.by_set_device |= by_set_device;
            return 0;
        }
        /* name what is wrong with the new request first: an unknown target or an id out
         * of range says so; a valid one is refused because the process has its device */
        char b2[32];
        const char *want = strcmp(chosen.target, target) ? hwpy_map_target(target, b2, sizeof b2)
                                                         : chosen.backend;
        hwrt_backend_desc d;
        hwrt_status st = hwrt_backend_info(want, &d);
        if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
        if (!strcmp(want, chosen.backend) && d.available && id >= d.device_count) {
            hwpy_raise_msg(HWRT_ERROR_INVALID_DEVICE, "set_device(\"%s\", %d): device_id %d is out "
                           "of range: \"%s\" has %d devices (0..%d)", target, id, id, target,
                           d.device_count, d.device_count - 1);
            return -1;
        }
        hwpy_raise_msg(HWRT_ERROR_NOT_PERMITTED, "The 'mindspore.set_device' can not be modified: "
                       "this process runs on set_device(\"%s\", %d) (backend \"%s\"); "
                       "set_device(\"%s\", %d) (backend \"%s\") needs another process.",
                       chosen.target, chosen.device_id, chosen.backend, target, id, want);
        return -1;
    }
    const char *ms = ms_name(target);
    char buf[32];
    const char *backend = hwpy_map_target(target, buf, sizeof buf);
    const preset *model = NULL;
    if (ms && strcmp(ms, "CPU")) {
        hwrt_backend_desc d;
        hwrt_status st = hwrt_backend_info(backend, &d);
        if (st != HWRT_SUCCESS || !d.available) {
            if (!simulate_allowed(ms)) {
                hwpy_raise_msg(HWRT_ERROR_UNAVAILABLE, "set_device(\"%s\", %d): hwrt's %s backend "
                               "is not available (%s). To run on hwrt's simulated NPU modelled as "
                               "%s, set the environment variable HWRT_SIMULATE=%s (or =1); or use "
                               "the target \"sim\" or \"CPU\".", target, id, backend,
                               st == HWRT_SUCCESS ? d.reason : hwrt_last_error(),
                               preset_of(ms)->name, ms);
                return -1;
            }
            model = preset_of(ms);
            backend = "sim";
        }
    }
    if (rechoose) {
        hwrt_backend_desc d;
        hwrt_status st = hwrt_backend_info(backend, &d);
        if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_shutdown();
        Py_END_ALLOW_THREADS
        if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
        unapply_model();
        chosen.chosen = 0;
    }
    const char *in_use = hwrt_current_backend();
    if (model || (ms && !strcmp(ms, "CPU"))) {
        if (*in_use || hwpy_device_used) {
            PyErr_Format(PyExc_RuntimeError, "The runtime has been initialized (backend \"%s\" "
                         "in use), please set it before the kernel is executed: set_device(\"%s\") "
                         "must come before any tensor, stream or event.", in_use, target);
            return -1;
        }
        if (model) {
            apply_model(model->memory, model->devices);
        } else {
            char mem[32];
            long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
            snprintf(mem, sizeof mem, "%lld", pages > 0 && psz > 0 ? (long long)pages * psz
                                                                   : 8LL << 30);
            apply_model(mem, "1");
        }
    }
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_set_device(backend, id);
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) {
        if (model || (ms && !strcmp(ms, "CPU"))) unapply_model();
        hwpy_raise_msg(st, "%sset_device(\"%s\", device_id=%d): %s (the simulated NPU is the "
                       "target \"sim\"; \"CPU\" runs on the host)",
                       st == HWRT_ERROR_NOT_PERMITTED ? "The runtime has been initialized: " : "",
                       target, id, hwrt_last_error());
        return -1;
    }
    chosen.chosen = 1;
    snprintf(chosen.target, sizeof chosen.target, "%s", target);
    snprintf(chosen.ms_target, sizeof chosen.ms_target, "%s", ms ? ms : "");
    snprintf(chosen.backend, sizeof chosen.backend, "%s", hwrt_current_backend());
    chosen.device_id = id;
    chosen.model = model;
    chosen.by_set_device = by_set_device;
    return hwpy_runtime_device_set();
}

static PyObject *set_device(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device_target", "device_id", NULL};
    PyObject *target_obj, *id_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:set_device", kwlist, &target_obj, &id_obj))
        return NULL;
    /* device_manager.py: args_type_check(device_target=str, device_id=int) */
    if (!PyUnicode_Check(target_obj))
        return PyErr_Format(PyExc_TypeError, "The parameter 'device_target' must be <class "
                            "'str'>, but got <class '%.100s'>", Py_TYPE(target_obj)->tp_name);
    const char *target = PyUnicode_AsUTF8(target_obj);
    if (!target || hwpy_choose_device(target, id_obj, 1) < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- set_deterministic (device_manager.py) ---- */

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

static PyObject *set_deterministic(PyObject *m, PyObject *arg)
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

/* ---- DeviceInfo: get_current_device() -> ("Ascend", 0) with .device_target, .device_id */

static PyTypeObject devinfo_type;
static PyStructSequence_Field devinfo_fields[] = {
    {"device_target", "the target set_device chose"}, {"device_id", "its device id"}, {NULL}};
static PyStructSequence_Desc devinfo_desc = {"hwrt.DeviceInfo",
                                             "(device_target, device_id)", devinfo_fields, 2};

static PyObject *get_current_device(PyObject *m, PyObject *unused)
{
    PyObject *r = PyStructSequence_New(&devinfo_type);
    if (!r) return NULL;
    int id = chosen.device_id;
    if (!chosen.chosen && *hwrt_current_backend() && hwrt_get_device(&id) != HWRT_SUCCESS) id = 0;
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

/* The device name as reported: the model's when the sim stands in. */
static void device_name(const hwrt_device_props *p, char *buf, size_t len)
{
    if (chosen.model)
        snprintf(buf, len, "%s%s", chosen.model->name,
                 chosen.memory_overridden ? " [memory from HWRT_SIM_MEMORY]" : "");
    else if (chosen.chosen && !strcmp(chosen.ms_target, "CPU"))
        snprintf(buf, len, "CPU");
    else
        snprintf(buf, len, "%s", p->name);
}

static PyObject *props_object(int id)
{
    hwrt_device_props p;
    hwrt_memory_info mi;
    hwrt_status st = hwrt_get_device_props(id, &p);
    if (st == HWRT_SUCCESS) st = hwrt_get_memory_info(id, &mi);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    char name[192];
    device_name(&p, name, sizeof name);
    PyObject *d = Py_BuildValue("{s:s,s:n,s:n,s:i,s:s,s:i,s:i,s:O,s:d}", "name", name,
                                "total_memory", (Py_ssize_t)p.total_memory, "free_memory",
                                (Py_ssize_t)mi.free, "device_id", p.device_id, "backend",
                                p.backend, "compute_units", p.compute_units, "copy_engines",
                                p.copy_engines, "simulated", p.simulated ? Py_True : Py_False,
                                "link_gbps", p.link_gbps);
    if (!d) return NULL;
    if (chosen.model && chosen.model->major >= 0) {
        PyObject *extra = Py_BuildValue("{s:i,s:i,s:i,s:O,s:O,s:i}", "major", chosen.model->major,
                                        "minor", chosen.model->minor, "multi_processor_count",
                                        chosen.model->sm_count, "is_integrated", Py_False,
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
static PyObject *get_device_props(PyObject *m, PyObject *args)
{
    PyObject *id_obj = Py_None;
    int id;
    if (!PyArg_ParseTuple(args, "|O:get_device_properties", &id_obj) ||
        hwpy_device_arg(id_obj, &id) < 0)
        return NULL;
    return props_object(id);
}

/* ---- hal (hal/device.py) ---- */

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

/* Can hwrt run ms ("CPU", "GPU", "Ascend") in this process? */
static int target_available(const char *ms)
{
    if (!strcmp(ms, "CPU")) return 1;
    if (chosen.chosen && !strcmp(chosen.ms_target, ms)) return 1;
    char buf[32];
    hwrt_backend_desc d;
    if (hwrt_backend_info(hwpy_map_target(ms, buf, sizeof buf), &d) == HWRT_SUCCESS && d.available)
        return 1;
    return simulate_allowed(ms);
}

static PyObject *hal_is_available(PyObject *m, PyObject *arg)
{
    const char *t;
    if (valid_target(arg, "hal.is_available", &t) < 0) return NULL;
    return PyBool_FromLong(target_available(t));
}

static PyObject *hal_is_initialized(PyObject *m, PyObject *arg)
{
    const char *t;
    if (valid_target(arg, "hal.is_initialized", &t) < 0) return NULL;
    return PyBool_FromLong(chosen.chosen && !strcmp(chosen.ms_target, t) && hwpy_device_used);
}

/* The device_target argument of the hal functions: None -> the context's target. */
static int hal_target(PyObject *obj, const char **out)
{
    if (!obj || obj == Py_None) {
        const char *t = hwpy_context_target();
        const char *ms = ms_name(t);
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
    if (!target_available(*out)) {
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
    return chosen.chosen && !strcmp(chosen.ms_target, t);
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

static int count_of(const char *t, int *n)
{
    if (!strcmp(t, "CPU")) { *n = 1; return 0; }
    if (!is_current(t)) {
        /* not chosen yet: the model's card count, or the real backend's */
        const preset *p = preset_of(t);
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
        hal_target(t_obj, &t) < 0 || count_of(t, &n) < 0)
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
    PyObject *p = props_object(id);
    /* hal/device.py: "For Ascend, backend must be initialized before calling this method,
     * or total_memory and free_memory will be 0" (tests/st/hal/test_hal_device.py checks) */
    if (p && !strcmp(t, "Ascend") && !hwpy_device_used) {
        PyObject *zero = PyLong_FromLong(0), *d = ((props_obj *)p)->d;
        if (!zero || PyDict_SetItemString(d, "total_memory", zero) < 0 ||
            PyDict_SetItemString(d, "free_memory", zero) < 0)
            Py_CLEAR(p);
        Py_XDECREF(zero);
    }
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
    device_name(&p, name, sizeof name);
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
        hal_target(t_obj, &t) < 0 || hal_device_id(id_obj, &id) < 0 || count_of(t, &n) < 0)
        return NULL;
    if (strcmp(t, "GPU")) Py_RETURN_NONE;      /* _ascend.py, _cpu.py: None */
    if (id >= n)
        return PyErr_Format(PyExc_ValueError, "device_id %d is out of range: %d GPU devices", id, n);
    const preset *p = preset_of("GPU");
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

/* ---- device_context.{ascend,gpu,cpu} ---- */

static PyObject *dc_is_available(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(target_available(PyUnicode_AsUTF8(self)));
}

static PyObject *dc_device_count(PyObject *self, PyObject *unused)
{
    const char *t = PyUnicode_AsUTF8(self);
    if (!target_available(t))
        return PyErr_Format(PyExc_RuntimeError, "Device %s not exist. (hwrt: set "
                            "HWRT_SIMULATE=%s to let the simulated NPU stand in.)", t, t);
    int n;
    if (count_of(t, &n) < 0) return NULL;
    return PyLong_FromLong(n);
}

static PyMethodDef dc_methods[] = {
    {"is_available", dc_is_available, METH_NOARGS, "is_available($module, /)\n--\n\n"
     "Whether this target can run here."},
    {"device_count", dc_device_count, METH_NOARGS, "device_count($module, /)\n--\n\n"
     "Devices of this target."},
    {NULL}};

#define KW(fn) (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS

PyMethodDef hwpy_target_top_methods[] = {
    {"set_device", KW(set_device),
     "set_device($module, device_target, device_id=None)\n--\n\n"
     "Choose the process's device, once. Targets: "
     "\"Ascend\", \"GPU\", \"CPU\" (MindSpore's), \"sim\", \"opencl\", \"auto\". \"Ascend\"/\"GPU\" "
     "need the backend or HWRT_SIMULATE; another target or id later raises RuntimeError."},
    {"set_deterministic", set_deterministic, METH_O,
     "set_deterministic($module, deterministic, /)\n--\n\n"
     "Once; sets HCCL_DETERMINISTIC and TE_PARALLEL_COMPILER "
     "as MindSpore does (hwrt's ops are deterministic either way)."},
    {"get_current_device", get_current_device, METH_NOARGS,
     "get_current_device($module, /)\n--\n\n"
     "Returns DeviceInfo(device_target, device_id)."},
    {"get_device_properties", get_device_props, METH_VARARGS,
     "get_device_properties($module, device_id=None, /)\n--\n\n"
     "Returns DeviceProperties (any target)."},
    {NULL}};

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

int hwpy_target_init(PyObject *module, PyObject *hal, PyObject *devctx)
{
    if (PyType_Ready(&props_type) < 0 ||
        (!devinfo_type.tp_name && PyStructSequence_InitType2(&devinfo_type, &devinfo_desc) < 0) ||
        PyModule_AddObjectRef(module, "DeviceInfo", (PyObject *)&devinfo_type) < 0 ||
        PyModule_AddObjectRef(hal, "DeviceProperties", (PyObject *)&props_type) < 0)
        return -1;
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
