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
 * target or an id out of range still gets its own error first.
 *
 * This file holds the choice; target.h lists the files of the rest. */
#include "target.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Atlas 800I A2: 8 Ascend 910B NPU modules per server, 64 GB HBM each (Huawei Atlas 800I
 * A2 inference server datasheet; npu-smi reports 65536 MB HBM per card).
 * H200 SXM: 141 GB HBM3e, compute capability 9.0, 132 SMs, 8 per HGX H200 node (NVIDIA
 * H200 Tensor Core GPU datasheet; decimal GB as NVIDIA gives it). */
static const hwpy_preset presets[] = {
    {"Ascend", "Atlas 800I A2 NPU (simulated)", "64GB", "8", -1, -1, 0,
     "Huawei Atlas 800I A2 datasheet: 8 NPUs per node, 64 GB HBM per NPU"},
    {"GPU", "NVIDIA H200 (simulated)", "141000000000", "8", 9, 0, 132,
     "NVIDIA H200 datasheet: 141 GB HBM3e, compute capability 9.0, 132 SMs; 8 per HGX node"},
};

hwpy_choice hwpy_chosen;

int hwpy_device_used;        /* a tensor, stream or event was made (hal.is_initialized) */

const char *hwpy_ms_name(const char *target)
{
    if (!strcasecmp(target, "ascend") || !strcasecmp(target, "npu")) return "Ascend";
    if (!strcasecmp(target, "gpu") || !strcasecmp(target, "cuda")) return "GPU";
    if (!strcasecmp(target, "cpu")) return "CPU";
    return NULL;
}

const char *hwpy_map_target(const char *target, char *buf, size_t len)
{
    const char *ms = hwpy_ms_name(target);
    if (ms && !strcmp(ms, "Ascend")) return "ascend";
    if (ms && !strcmp(ms, "GPU")) return "cuda";
    if (ms && !strcmp(ms, "CPU")) return "sim";
    size_t i;
    for (i = 0; target[i] && i + 1 < len; i++) buf[i] = (char)tolower((unsigned char)target[i]);
    buf[i] = 0;
    return buf;
}

const hwpy_preset *hwpy_preset_of(const char *ms)
{
    for (size_t i = 0; ms && i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(presets[i].target, ms)) return &presets[i];
    return NULL;
}

int hwpy_simulate_allowed(const char *ms)
{
    const char *v = getenv("HWRT_SIMULATE");
    if (!v || !*v) return 0;
    if (!strcmp(v, "1") || !strcasecmp(v, "all") || !strcasecmp(v, "true")) return 1;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        const char *n = hwpy_ms_name(tok);
        if (n && !strcmp(n, ms)) return 1;
    }
    return 0;
}

/* Put the model into the sim's environment unless the user said otherwise. */
static void apply_model(const char *memory, const char *devices)
{
    hwpy_chosen.memory_overridden = getenv("HWRT_SIM_MEMORY") && *getenv("HWRT_SIM_MEMORY");
    hwpy_chosen.set_memory_env = !hwpy_chosen.memory_overridden;
    hwpy_chosen.set_devices_env = !(getenv("HWRT_SIM_DEVICES") && *getenv("HWRT_SIM_DEVICES"));
    if (hwpy_chosen.set_memory_env) setenv("HWRT_SIM_MEMORY", memory, 1);
    if (hwpy_chosen.set_devices_env) setenv("HWRT_SIM_DEVICES", devices, 1);
}

const char *hwpy_chosen_target(void)
{
    return hwpy_chosen.chosen ? hwpy_chosen.target : NULL;
}

/* The target as get_context("device_target") reports it: what the user chose, else the
 * backend in use, else "CPU" (nothing chosen: MindSpore's default on a host). */
const char *hwpy_context_target(void)
{
    if (hwpy_chosen.chosen) return hwpy_chosen.target;
    const char *b = hwrt_current_backend();
    return *b ? b : "CPU";
}

/* Undo what apply_model put into the environment (a new target is being chosen). */
static void unapply_model(void)
{
    if (hwpy_chosen.set_memory_env) unsetenv("HWRT_SIM_MEMORY");
    if (hwpy_chosen.set_devices_env) unsetenv("HWRT_SIM_DEVICES");
    hwpy_chosen.set_memory_env = hwpy_chosen.set_devices_env = 0;
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
    int rechoose = hwpy_chosen.chosen && !hwpy_chosen.by_set_device && !hwpy_device_used &&
                   (strcmp(hwpy_chosen.target, target) || hwpy_chosen.device_id != id);
    if (hwpy_chosen.chosen && !rechoose) {
        if (!strcmp(hwpy_chosen.target, target) && hwpy_chosen.device_id == id) {
            /* the same choice: make it this thread's device too (hwrt's is per thread) */
            hwrt_status st = hwrt_set_device(hwpy_chosen.backend, id);
            if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
            hwpy_chosen.by_set_device |= by_set_device;
            return 0;
        }
        /* name what is wrong with the new request first: an unknown target or an id out
         * of range says so; a valid one is refused because the process has its device */
        char b2[32];
        const char *want = strcmp(hwpy_chosen.target, target) ? hwpy_map_target(target, b2, sizeof b2)
                                                         : hwpy_chosen.backend;
        hwrt_backend_desc d;
        hwrt_status st = hwrt_backend_info(want, &d);
        if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
        if (!strcmp(want, hwpy_chosen.backend) && d.available && id >= d.device_count) {
            hwpy_raise_msg(HWRT_ERROR_INVALID_DEVICE, "set_device(\"%s\", %d): device_id %d is out "
                           "of range: \"%s\" has %d devices (0..%d)", target, id, id, target,
                           d.device_count, d.device_count - 1);
            return -1;
        }
        hwpy_raise_msg(HWRT_ERROR_NOT_PERMITTED, "The 'mindspore.set_device' can not be modified: "
                       "this process runs on set_device(\"%s\", %d) (backend \"%s\"); "
                       "set_device(\"%s\", %d) (backend \"%s\") needs another process.",
                       hwpy_chosen.target, hwpy_chosen.device_id, hwpy_chosen.backend, target, id, want);
        return -1;
    }
    const char *ms = hwpy_ms_name(target);
    char buf[32];
    const char *backend = hwpy_map_target(target, buf, sizeof buf);
    const hwpy_preset *model = NULL;
    if (ms && strcmp(ms, "CPU")) {
        hwrt_backend_desc d;
        hwrt_status st = hwrt_backend_info(backend, &d);
        if (st != HWRT_SUCCESS || !d.available) {
            if (!hwpy_simulate_allowed(ms)) {
                hwpy_raise_msg(HWRT_ERROR_UNAVAILABLE, "set_device(\"%s\", %d): hwrt's %s backend "
                               "is not available (%s). To run on hwrt's simulated NPU modelled as "
                               "%s, set the environment variable HWRT_SIMULATE=%s (or =1); or use "
                               "the target \"sim\" or \"CPU\".", target, id, backend,
                               st == HWRT_SUCCESS ? d.reason : hwrt_last_error(),
                               hwpy_preset_of(ms)->name, ms);
                return -1;
            }
            model = hwpy_preset_of(ms);
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
        hwpy_chosen.chosen = 0;
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
    hwpy_chosen.chosen = 1;
    snprintf(hwpy_chosen.target, sizeof hwpy_chosen.target, "%s", target);
    snprintf(hwpy_chosen.ms_target, sizeof hwpy_chosen.ms_target, "%s", ms ? ms : "");
    snprintf(hwpy_chosen.backend, sizeof hwpy_chosen.backend, "%s", hwrt_current_backend());
    hwpy_chosen.device_id = id;
    hwpy_chosen.model = model;
    hwpy_chosen.by_set_device = by_set_device;
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

PyMethodDef hwpy_target_top_methods[] = {
    {"set_device", KW(set_device),
     "set_device($module, device_target, device_id=None)\n--\n\n"
     "Choose the process's device, once. Targets: "
     "\"Ascend\", \"GPU\", \"CPU\" (MindSpore's), \"sim\", \"opencl\", \"auto\". \"Ascend\"/\"GPU\" "
     "need the backend or HWRT_SIMULATE; another target or id later raises RuntimeError."},
    {"set_deterministic", hwpy_set_deterministic, METH_O,
     "set_deterministic($module, deterministic, /)\n--\n\n"
     "Once; sets HCCL_DETERMINISTIC and TE_PARALLEL_COMPILER "
     "as MindSpore does (hwrt's ops are deterministic either way)."},
    {"get_current_device", hwpy_get_current_device, METH_NOARGS,
     "get_current_device($module, /)\n--\n\n"
     "Returns DeviceInfo(device_target, device_id)."},
    {"get_device_properties", hwpy_get_device_props, METH_VARARGS,
     "get_device_properties($module, device_id=None, /)\n--\n\n"
     "Returns DeviceProperties (any target)."},
    {NULL}};

int hwpy_target_init(PyObject *module, PyObject *hal, PyObject *devctx)
{
    return hwpy_target_props_init(module, hal) < 0 || hwpy_devctx_init(devctx) < 0 ? -1 : 0;
}
