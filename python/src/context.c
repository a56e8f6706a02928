/* hwrt.set_context / get_context / set_offload_context / get_offload_context (also in
 * hwrt.context), as MindSpore's context.py and parallel/_offload_context.py define them.
 *
 * MindSpore's keys are validated by MindSpore's rules (TypeError for a wrong type, as
 * args_type_check gives; ValueError for a bad value) and get_context returns MindSpore's
 * types. Where hwrt's C config has the setting, the key is wired to it:
 *   mode                  -> launch_blocking (PYNATIVE_MODE = the seed's "the framework
 *                            synchronizes"; GRAPH_MODE = asynchronous)
 *   pynative_synchronize  -> launch_blocking
 *   memory_offload        -> memory_offload ("ON"/"OFF" exactly)
 *   max_device_memory     -> max_device_memory ("xxGB"; times hbm_ratio with offload ON)
 *   device_target/_id     -> the device (target.c)
 * mempool_block_size, memory_optimize_level and variable_memory_max_size are validated
 * and reported but have no hwrt counterpart (hwrt's pool sizes its segments per request,
 * has no graph memory optimizer and no static/dynamic memory split). Other hwrt config
 * keys (max_split_size, expandable_segments, ...) are accepted in hwrt's own forms.
 * MindSpore's compiler keys (jit_config, save_graphs, ...) are stored and reported with
 * a warning that hwrt, having no compiler, does nothing with them.
 *
 * set_offload_context takes MindSpore's 13 keys (and hwrt's prefetch_depth); the wiring
 * to the residency manager is in offload_keys[] below.
 *
 * A call applies all its keys or none: everything is validated first, then the hwrt
 * config keys are set with the old values restored at the first failure. */
#include "hwpy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { GRAPH_MODE = 0, PYNATIVE_MODE = 1 };
#define GB 1073741824.0

/* MindSpore-side values: what get_context / get_offload_context report. */
typedef struct {
    double max_gb;                 /* max_device_memory; 0: not set (reported as 1024.0) */
    double mempool_block_gb;
    int memory_optimize_level;
    char variable_memory_max_size[64];
    char offload_param[8], offload_checkpoint[8];
    long long offload_cpu_size, offload_disk_size, aio_block_size, host_mem_block_size;
    long long aio_queue_depth;
    int enable_aio;
    double cpu_ratio, hbm_ratio;
} ms_values;

static ms_values cur = {0, 1.0, 0, "0", "", "", 0, 0, 1 << 20, 1LL << 30, 1024, 1, 1.0, 1.0};
static PyObject *compiler_values;  /* dict: MindSpore compiler keys as given */

static const char *const compiler_keys[] = {
    "jit_config", "jit_level", "jit_syntax_level", "debug_level", "save_graphs",
    "save_graphs_path", "precompile_only", "enable_graph_kernel", "graph_kernel_flags",
    "ascend_config", "gpu_config", "runtime_num_threads", "op_timeout",
    "inter_op_parallel_num", "max_call_depth", "print_file_path", "env_config_path",
    "enable_reduce_precision", "check_bprop", "reserve_class_name_in_scope",
    "enable_compile_cache", "compile_cache_path", "grad_for_scalar", "save_compile_cache",
    "load_compile_cache", "disable_format_transform", "aoe_tune_mode", "aoe_config",
    "exec_order", "jit_enable_inplace_ops", "enable_auto_mixed_precision", NULL};

static const char *const bool_keys[] = {"auto_offload", "enable_pinned_mem",
                                        "expandable_segments", "record_alloc_sites",
                                        "pinned_pool", "thread_cache", "launch_blocking",
                                        "check_sync", "dist_force_staging", NULL};

static int in_list(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (!strcmp(*list, key)) return 1;
    return 0;
}

/* ---- hwrt config writes, all or none ---- */

typedef struct { char key[64]; char value[512]; char old[512]; } write_t;
typedef struct { write_t w[64]; int n; } writes;

static int add_write(writes *ws, const char *key, const char *value)
{
    for (int i = 0; i < ws->n; i++)          /* a later write of a key replaces the earlier */
        if (!strcmp(ws->w[i].key, key)) {
            snprintf(ws->w[i].value, sizeof ws->w[i].value, "%s", value);
            return 0;
        }
    if (ws->n == 64) {
        PyErr_SetString(PyExc_ValueError, "too many keys in one call");
        return -1;
    }
    snprintf(ws->w[ws->n].key, sizeof ws->w[0].key, "%s", key);
    snprintf(ws->w[ws->n].value, sizeof ws->w[0].value, "%s", value);
    ws->n++;
    return 0;
}

static void roll_back(writes *ws, int done)
{
    for (int i = done - 1; i >= 0; i--)
        hwrt_set_config(ws->w[i].key, ws->w[i].old);      /* values hwrt itself printed */
}

static int apply_writes(writes *ws)
{
    for (int i = 0; i < ws->n; i++) {
        hwrt_status st = hwrt_get_config(ws->w[i].key, ws->w[i].old, sizeof ws->w[i].old);
        if (st == HWRT_SUCCESS) st = hwrt_set_config(ws->w[i].key, ws->w[i].value);
        if (st != HWRT_SUCCESS) {
            roll_back(ws, i);
            hwpy_raise(st);
            return -1;
        }
    }
    return 0;
}

/* A Python value as hwrt_set_config text (hwrt's own keys). */
static int config_text(const char *key, PyObject *v, char *out, size_t len)
{
    PyObject *s = NULL;
    if (PyBool_Check(v)) {
        snprintf(out, len, "%s", v == Py_True ? "true" : "false");
        return 0;
    }
    if (PyLong_Check(v) || PyFloat_Check(v)) s = PyObject_Str(v);
    else if (PyUnicode_Check(v)) s = Py_NewRef(v);
    else {
        PyErr_Format(PyExc_TypeError, "%s: value must be a str, int, float or bool, not %.100s",
                     key, Py_TYPE(v)->tp_name);
        return -1;
    }
    const char *t = s ? PyUnicode_AsUTF8(s) : NULL;
    if (t) snprintf(out, len, "%s", t);
    Py_XDECREF(s);
    return t ? 0 : -1;
}

/* ---- MindSpore's validators (_checkparam.py) ---- */

static int need_str(const char *fn, const char *key, PyObject *v, const char **out)
{
    if (!PyUnicode_Check(v)) {
        PyErr_Format(PyExc_TypeError, "For '%s', the argument '%s' must be str, but got the type "
                     ": <class '%.100s'>.", fn, key, Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyUnicode_AsUTF8(v);
    return *out ? 0 : -1;
}

static int need_bool(const char *fn, const char *key, PyObject *v)
{
    if (!PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "For '%s', the '%s' must be a bool, but got %.100s.", fn,
                     key, Py_TYPE(v)->tp_name);
        return -1;
    }
    return 0;
}

static int need_int(const char *fn, const char *key, PyObject *v, long long *out)
{
    if (!PyLong_Check(v) || PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "For '%s', the '%s' must be int, but got '%.100s'", fn, key,
                     Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyLong_AsLongLong(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* check_float_range(v, 0, 1, INC_RIGHT): a float (numpy floats too), 0 < v <= 1 */
static int need_ratio(const char *key, PyObject *v, double *out)
{
    if (PyBool_Check(v) || !(PyFloat_Check(v) || PyObject_HasAttrString(v, "dtype"))) {
        PyErr_Format(PyExc_TypeError, "The '%s' must be 'float',  but got '%.100s'.", key,
                     Py_TYPE(v)->tp_name);
        return -1;
    }
    double d = PyFloat_AsDouble(v);
    if (d == -1 && PyErr_Occurred()) return -1;
    if (!(d > 0 && d <= 1)) {
        PyErr_Format(PyExc_ValueError, "The '%s' must be in range of (0.0, 1.0], but got %R.",
                     key, v);
        return -1;
    }
    *out = d;
    return 0;
}

/* "xxGB" as MindSpore's K_RE_PATTERN, for key of fn. Bytes or -1. */
static double need_gb(const char *fn, const char *key, PyObject *v, int allow_zero)
{
    const char *s;
    if (need_str(fn, key, v, &s) < 0) return -1;
    return hwpy_parse_gb(key, s, allow_zero);
}

/* ---- device budget: max_device_memory x hbm_ratio (with offload ON) ---- */

static int offload_on(writes *ws)
{
    for (int i = 0; ws && i < ws->n; i++)
        if (!strcmp(ws->w[i].key, "memory_offload")) return !strcmp(ws->w[i].value, "true");
    char buf[16];
    return hwrt_get_config("memory_offload", buf, sizeof buf) == HWRT_SUCCESS && strcmp(buf, "0");
}

/* The hwrt max_device_memory for v: its max_device_memory, scaled by hbm_ratio when
 * offload is on; with no max_device_memory the device's total is scaled (0: no cap). */
static int budget_write(const ms_values *v, writes *ws)
{
    double ratio = offload_on(ws) ? v->hbm_ratio : 1.0, bytes = 0;
    if (v->max_gb > 0) {
        bytes = v->max_gb * GB * ratio;
    } else if (ratio < 1 && *hwrt_current_backend()) {
        int id;
        hwrt_device_props p;
        if (hwrt_get_device(&id) == HWRT_SUCCESS && hwrt_get_device_props(id, &p) == HWRT_SUCCESS)
            bytes = (double)p.total_memory * ratio;
    }
    char text[32];
    snprintf(text, sizeof text, "%.0f", floor(bytes));
    return add_write(ws, "max_device_memory", text);
}

int hwpy_context_device_set(void)
{
    if (cur.max_gb > 0 || cur.hbm_ratio >= 1) return 0;
    writes ws = {.n = 0};
    return budget_write(&cur, &ws) < 0 || apply_writes(&ws) < 0 ? -1 : 0;
}

int hwpy_context_set_max_memory(double bytes)
{
    ms_values v = cur;
    v.max_gb = bytes / GB;
    writes ws = {.n = 0};
    if (budget_write(&v, &ws) < 0 || apply_writes(&ws) < 0) return -1;
    cur = v;
    return 0;
}

/* ---- set_context ---- */

static PyObject *not_recognized(const char *fn, const char *key)
{
    return PyErr_Format(PyExc_ValueError, "For 'context.%s', the keyword argument %s is not "
                        "recognized! For detailed usage of '%s', please refer to the Mindspore "
                        "official website.", fn, key, fn);
}

static int mode_value(PyObject *v, int *mode)
{
    long long m;
    if (need_int("context.set_context", "mode", v, &m) < 0) return -1;
    if (m != GRAPH_MODE && m != PYNATIVE_MODE) {
        PyErr_Format(PyExc_ValueError, "For 'context.set_context', the argument 'mode' should be "
                     "context.GRAPH_MODE (0) or context.PYNATIVE_MODE (1), but got %lld.", m);
        return -1;
    }
    *mode = (int)m;
    return 0;
}

static PyObject *set_context(PyObject *m, PyObject *args, PyObject *kw)
{
    static const char *fn = "context.set_context";
    if (PyTuple_GET_SIZE(args))
        return PyErr_Format(PyExc_TypeError, "set_context takes keyword arguments only");
    ms_values v = cur;
    writes ws = {.n = 0};
    PyObject *target = NULL, *dev = NULL, *k, *val, *compiler = PyDict_New();
    PyObject *recorded = compiler ? PyDict_New() : NULL;   /* keys reported, not warned about */
    if (!recorded) { Py_XDECREF(compiler); return NULL; }
    int budget = 0, deterministic = -1;
    Py_ssize_t pos = 0;
    while (kw && PyDict_Next(kw, &pos, &k, &val)) {
        const char *key = PyUnicode_AsUTF8(k), *s;
        if (!key) goto fail;
        char text[512];
        double d;
        if (!strcmp(key, "device_target")) {
            if (need_str(fn, key, val, &s) < 0) goto fail;
            target = val;
        } else if (!strcmp(key, "device_id")) {
            long long id;
            if (need_int(fn, key, val, &id) < 0) goto fail;
            if (id < 0 || id > 4095) {
                PyErr_Format(PyExc_ValueError, "For 'context.set_context', the argument "
                             "'device_id' must be in range [0, 4095], but got %lld.", id);
                goto fail;
            }
            dev = val;
        } else if (!strcmp(key, "mode")) {
            int mode;
            if (mode_value(val, &mode) < 0 ||
                add_write(&ws, "launch_blocking", mode == PYNATIVE_MODE ? "true" : "false") < 0)
                goto fail;
        } else if (!strcmp(key, "pynative_synchronize")) {
            if (!PyBool_Check(val)) {
                PyErr_Format(PyExc_TypeError, "The parameter 'pynative_synchronize' must be <class "
                             "'bool'>, but got <class '%.100s'>", Py_TYPE(val)->tp_name);
                goto fail;
            }
            if (add_write(&ws, "launch_blocking", val == Py_True ? "true" : "false") < 0) goto fail;
        } else if (!strcmp(key, "memory_offload")) {
            s = PyUnicode_Check(val) ? PyUnicode_AsUTF8(val) : NULL;
            if (!s || (strcmp(s, "ON") && strcmp(s, "OFF"))) {
                PyObject *r = PyObject_Repr(val);
                PyErr_Format(PyExc_ValueError, "For 'context.set_context', the argument "
                             "'memory_offload' must be one of ['ON', 'OFF'], but got %S.", r);
                Py_XDECREF(r);
                goto fail;
            }
            if (add_write(&ws, "memory_offload", strcmp(s, "ON") ? "false" : "true") < 0) goto fail;
            budget = 1;
        } else if (!strcmp(key, "max_device_memory")) {
            if ((d = need_gb(fn, key, val, 0)) < 0) goto fail;
            v.max_gb = d / GB;
            budget = 1;
        } else if (!strcmp(key, "mempool_block_size")) {
            if ((d = need_gb(fn, key, val, 0)) < 0) goto fail;
            if (d < GB) {
                PyErr_Format(PyExc_ValueError, "For 'context.set_context',  the argument "
                             "'mempool_block_size' should be greater or equal to \"1GB\", but "
                             "got %gGB", d / GB);
                goto fail;
            }
            v.mempool_block_gb = d / GB;
        } else if (!strcmp(key, "memory_optimize_level")) {
            s = PyUnicode_Check(val) ? PyUnicode_AsUTF8(val) : NULL;
            if (!s || (strcmp(s, "O0") && strcmp(s, "O1"))) {
                PyObject *r = PyObject_Str(val);
                PyErr_Format(PyExc_ValueError, "For 'context.set_context', the argument "
                             "'memory_optimize_level' must be one of ['O0', 'O1'], but got %S.", r);
                Py_XDECREF(r);
                goto fail;
            }
            v.memory_optimize_level = s[1] - '0';
        } else if (!strcmp(key, "variable_memory_max_size")) {
            if ((d = need_gb(fn, key, val, 0)) < 0) goto fail;
            if (d > 31 * GB) {
                PyErr_Format(PyExc_ValueError, "For 'context.set_context', the argument "
                             "'variable_memory_max_size' should not be greater than 31GB, but got "
                             "%gGB.", d / GB);
                goto fail;
            }
            s = PyUnicode_AsUTF8(val);
            snprintf(v.variable_memory_max_size, sizeof v.variable_memory_max_size,
                     "%.*s * 1024 * 1024 * 1024", (int)strlen(s) - 2, s);
        } else if (!strcmp(key, "deterministic")) {
            s = PyUnicode_Check(val) ? PyUnicode_AsUTF8(val) : NULL;
            if (!s || (strcmp(s, "ON") && strcmp(s, "OFF"))) {
                PyObject *r = PyObject_Repr(val);
                PyErr_Format(PyExc_ValueError, "For 'context.set_context', the argument "
                             "'deterministic' must be one of ['ON', 'OFF'], but got %S.", r);
                Py_XDECREF(r);
                goto fail;
            }
            deterministic = !strcmp(s, "ON");
            if (PyDict_SetItem(recorded, k, val) < 0) goto fail;
        } else if (in_list(compiler_keys, key)) {
            if (PyDict_SetItem(compiler, k, val) < 0) goto fail;
        } else {
            char probe[512];
            if (hwrt_get_config(key, probe, sizeof probe) != HWRT_SUCCESS) {
                not_recognized("set_context", key);
                goto fail;
            }
            if (config_text(key, val, text, sizeof text) < 0 || add_write(&ws, key, text) < 0)
                goto fail;
        }
    }
    if (budget && budget_write(&v, &ws) < 0) goto fail;
    /* a device target that cannot work fails before any key changes */
    const char *t = target ? PyUnicode_AsUTF8(target) : NULL;
    if (apply_writes(&ws) < 0) goto fail;
    if (t || dev) {
        const char *keep = hwpy_chosen_target();
        char backend[16];
        snprintf(backend, sizeof backend, "%s", *hwrt_current_backend() ? hwrt_current_backend()
                                                                          : "auto");
        /* device_target= alone keeps the device id in use (MindSpore's context keeps
         * device_id as its own parameter) */
        PyObject *id = dev ? Py_NewRef(dev) : NULL;
        int cur_id;
        if (!id && keep && hwrt_get_device(&cur_id) == HWRT_SUCCESS) id = PyLong_FromLong(cur_id);
        int rc = hwpy_choose_device(t ? t : keep ? keep : backend, id, 0);
        Py_XDECREF(id);
        if (rc < 0) {
            roll_back(&ws, ws.n);
            goto fail;
        }
    }
    cur = v;
    if ((deterministic >= 0 && hwpy_set_deterministic_env(deterministic) < 0) ||
        PyDict_Update(compiler_values, recorded) < 0)
        goto fail;
    if (PyDict_Size(compiler)) {
        if (PyErr_WarnFormat(PyExc_UserWarning, 1, "set_context: %R are MindSpore compiler "
                             "settings; hwrt has no graph compiler and records them only",
                             compiler) < 0 ||
            PyDict_Update(compiler_values, compiler) < 0)
            goto fail;
    }
    Py_DECREF(compiler);
    Py_DECREF(recorded);
    Py_RETURN_NONE;
fail:
    Py_DECREF(compiler);
    Py_DECREF(recorded);
    return NULL;
}

/* ---- get_context ---- */

/* An hwrt config value in Python form: bools as bool, numbers as int/float, else str. */
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
    const char *key = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!key) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "get_context takes the key as a str, not %.100s",
                         Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (!strcmp(key, "mode")) {
        PyObject *lb = config_value("launch_blocking");
        if (!lb) return NULL;
        int pynative = lb == Py_True;
        Py_DECREF(lb);
        return PyLong_FromLong(pynative ? PYNATIVE_MODE : GRAPH_MODE);
    }
    if (!strcmp(key, "pynative_synchronize")) return config_value("launch_blocking");
    if (!strcmp(key, "device_target")) return PyUnicode_FromString(hwpy_context_target());
    if (!strcmp(key, "device_id")) {
        int id = 0;
        if (*hwrt_current_backend() && hwrt_get_device(&id) != HWRT_SUCCESS) id = 0;
        return PyLong_FromLong(id);
    }
    if (!strcmp(key, "max_device_memory")) return PyFloat_FromDouble(cur.max_gb > 0 ? cur.max_gb : 1024.0);
    if (!strcmp(key, "mempool_block_size")) return PyFloat_FromDouble(cur.mempool_block_gb);
    if (!strcmp(key, "memory_optimize_level")) return PyLong_FromLong(cur.memory_optimize_level);
    if (!strcmp(key, "variable_memory_max_size"))
        return PyUnicode_FromString(cur.variable_memory_max_size);
    PyObject *c = PyDict_GetItemWithError(compiler_values, arg);
    if (c) return Py_NewRef(c);
    if (PyErr_Occurred()) return NULL;
    char probe[512];
    if (hwrt_get_config(key, probe, sizeof probe) != HWRT_SUCCESS)
        return PyErr_Format(PyExc_ValueError, "For 'context.get_context', the argument %s is not "
                            "recognized! For detailed usage of 'get_context', please refer to "
                            "the Mindspore official website.", key);
    return config_value(key);
}

/* ---- set_offload_context (parallel/_offload_context.py) ---- */

/* Wiring of the 13 keys:
 *   offload_param        "cpu"|"disk": recorded. hwrt's residency manager moves an evicted
 *                        tensor to the host tier and spills to disk only when
 *                        offload_cpu_size is full; the C config has no per-kind target.
 *   offload_checkpoint   "cpu"|"disk": recorded (hwrt has no recompute/checkpoints).
 *   offload_path         -> offload_path (the disk tier's directory)
 *   offload_cpu_size     "xxGB" -> offload_cpu_size (times cpu_ratio)
 *   offload_disk_size    "xxGB" -> offload_disk_size
 *   enable_aio, aio_block_size, aio_queue_depth: recorded (the disk tier does plain
 *                        synchronous file I/O; no AIO queue to size)
 *   enable_pinned_mem    -> enable_pinned_mem
 *   auto_offload         -> auto_offload
 *   host_mem_block_size  "xxGB": recorded (the host tier allocates per tensor)
 *   cpu_ratio            (0, 1] -> offload_cpu_size = cpu_ratio x (offload_cpu_size, else
 *                        the host's available memory)
 *   hbm_ratio            (0, 1] -> max_device_memory = hbm_ratio x (max_device_memory,
 *                        else the device's total), with memory_offload ON
 *   prefetch_depth       hwrt's own: -> prefetch_depth */
static const char *const offload_keys[] = {
    "offload_param", "offload_path", "offload_cpu_size", "offload_disk_size", "enable_aio",
    "aio_block_size", "aio_queue_depth", "enable_pinned_mem", "auto_offload",
    "host_mem_block_size", "cpu_ratio", "hbm_ratio", "offload_checkpoint", "prefetch_depth", NULL};

static long long host_available(void)
{
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (long long)pages * psz : 0;
}

static int cpu_budget_write(const ms_values *v, writes *ws)
{
    double bytes = (double)v->offload_cpu_size;
    if (v->cpu_ratio < 1) bytes = (bytes > 0 ? bytes : (double)host_available()) * v->cpu_ratio;
    char text[32];
    snprintf(text, sizeof text, "%.0f", floor(bytes));
    return add_write(ws, "offload_cpu_size", text);
}

static int one_offload_key(const char *key, PyObject *val, ms_values *v, writes *ws, int *cpu,
                           int *hbm)
{
    char fn[64], text[512];
    const char *s;
    double d;
    long long n;
    snprintf(fn, sizeof fn, "set_%s", key);
    if (!strcmp(key, "offload_param") || !strcmp(key, "offload_checkpoint")) {
        if (need_str(fn, key, val, &s) < 0) return -1;
        char low[8] = "";
        size_t i;
        for (i = 0; s[i] && i < sizeof low - 1; i++) low[i] = (char)(s[i] | 0x20);
        low[i] = 0;
        if (s[i] || (strcmp(low, "cpu") && strcmp(low, "disk"))) {
            PyErr_Format(PyExc_ValueError, "For '%s', the '%s' must be str and must be in "
                         "'['cpu', 'disk']', but got '%s'.", fn, key, s);
            return -1;
        }
        snprintf(!strcmp(key, "offload_param") ? v->offload_param : v->offload_checkpoint, 8,
                 "%s", low);
    } else if (!strcmp(key, "offload_path")) {
        if (need_str(fn, key, val, &s) < 0) return -1;
        return add_write(ws, "offload_path", s);
    } else if (!strcmp(key, "offload_cpu_size")) {
        if ((d = need_gb(fn, key, val, 0)) < 0) return -1;
        v->offload_cpu_size = (long long)d;
        *cpu = 1;
    } else if (!strcmp(key, "offload_disk_size")) {
        if ((d = need_gb(fn, key, val, 0)) < 0) return -1;
        v->offload_disk_size = (long long)d;
        snprintf(text, sizeof text, "%lld", (long long)d);
        return add_write(ws, "offload_disk_size", text);
    } else if (!strcmp(key, "enable_aio")) {
        if (need_bool(fn, key, val) < 0) return -1;
        v->enable_aio = val == Py_True;
    } else if (!strcmp(key, "aio_block_size") || !strcmp(key, "host_mem_block_size")) {
        if ((d = need_gb(fn, key, val, 0)) < 0) return -1;
        *(!strcmp(key, "aio_block_size") ? &v->aio_block_size : &v->host_mem_block_size) =
            (long long)d;
    } else if (!strcmp(key, "aio_queue_depth")) {
        if (need_int(fn, key, val, &n) < 0) return -1;
        if (n <= 0) {
            PyErr_Format(PyExc_ValueError, "For '%s', the 'aio_queue_depth' must be int and must "
                         "> 0, but got '%lld' with type 'int'.", fn, n);
            return -1;
        }
        v->aio_queue_depth = n;
    } else if (!strcmp(key, "enable_pinned_mem") || !strcmp(key, "auto_offload")) {
        if (need_bool(fn, key, val) < 0) return -1;
        return add_write(ws, key, val == Py_True ? "true" : "false");
    } else if (!strcmp(key, "cpu_ratio")) {
        if (need_ratio(key, val, &v->cpu_ratio) < 0) return -1;
        *cpu = 1;
    } else if (!strcmp(key, "hbm_ratio")) {
        if (need_ratio(key, val, &v->hbm_ratio) < 0) return -1;
        *hbm = 1;
    } else {                                       /* prefetch_depth, hwrt's own */
        if (config_text(key, val, text, sizeof text) < 0) return -1;
        return add_write(ws, key, text);
    }
    return 0;
}

static PyObject *set_offload_context(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"offload_config", NULL};
    PyObject *cfg;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:set_offload_context", kwlist, &cfg))
        return NULL;
    if (!PyDict_Check(cfg))
        return PyErr_Format(PyExc_TypeError, "The parameter 'offload_config' must be <class "
                            "'dict'>, but got <class '%.100s'>", Py_TYPE(cfg)->tp_name);
    PyObject *unknown = PyList_New(0);
    if (!unknown) return NULL;
    PyObject *k, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(cfg, &pos, &k, &val)) {
        const char *key = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        if ((!key || !in_list(offload_keys, key)) && PyList_Append(unknown, k) < 0) {
            Py_DECREF(unknown);
            return NULL;
        }
    }
    if (PyList_GET_SIZE(unknown)) {
        PyErr_Format(PyExc_ValueError, "Unknown config: %R (the keys are offload_param, "
                     "offload_path, offload_cpu_size, offload_disk_size, enable_aio, "
                     "aio_block_size, aio_queue_depth, enable_pinned_mem, auto_offload, "
                     "host_mem_block_size, cpu_ratio, hbm_ratio, offload_checkpoint; hwrt adds "
                     "prefetch_depth)", unknown);
        Py_DECREF(unknown);
        return NULL;
    }
    Py_DECREF(unknown);
    ms_values v = cur;
    writes ws = {.n = 0};
    int cpu = 0, hbm = 0;
    pos = 0;
    while (PyDict_Next(cfg, &pos, &k, &val))
        if (one_offload_key(PyUnicode_AsUTF8(k), val, &v, &ws, &cpu, &hbm) < 0) return NULL;
    if ((cpu && cpu_budget_write(&v, &ws) < 0) || (hbm && budget_write(&v, &ws) < 0) ||
        apply_writes(&ws) < 0)
        return NULL;
    cur = v;
    Py_RETURN_NONE;
}

static PyObject *get_offload_context(PyObject *m, PyObject *unused)
{
    PyObject *d = Py_BuildValue(
        "{s:s,s:s,s:L,s:L,s:O,s:L,s:L,s:L,s:d,s:d}", "offload_param", cur.offload_param,
        "offload_checkpoint", cur.offload_checkpoint, "offload_cpu_size", cur.offload_cpu_size,
        "offload_disk_size", cur.offload_disk_size, "enable_aio",
        cur.enable_aio ? Py_True : Py_False, "aio_block_size", cur.aio_block_size,
        "aio_queue_depth", cur.aio_queue_depth, "host_mem_block_size", cur.host_mem_block_size,
        "cpu_ratio", cur.cpu_ratio, "hbm_ratio", cur.hbm_ratio);
    static const char *const live[] = {"offload_path", "enable_pinned_mem", "auto_offload",
                                       "prefetch_depth", NULL};
    for (const char *const *k = live; d && *k; k++) {
        PyObject *v = config_value(*k);
        if (!v || PyDict_SetItemString(d, *k, v) < 0) { Py_XDECREF(v); Py_CLEAR(d); }
        Py_XDECREF(v);
    }
    return d;
}

PyMethodDef hwpy_context_methods[] = {
    {"set_context", (PyCFunction)(void (*)(void))set_context, METH_VARARGS | METH_KEYWORDS,
     "set_context($module, /, **kwargs)\n--\n\n"
     "mode=GRAPH_MODE|PYNATIVE_MODE, device_target=, device_id=, memory_offload=\"ON\"|\"OFF\", "
     "max_device_memory=\"xxGB\", pynative_synchronize=, mempool_block_size=, "
     "memory_optimize_level=, and any hwrt config key. All or none."},
    {"get_context", get_context, METH_O, "get_context($module, key, /)\n--\n\n"
     "The current value, MindSpore's type."},
    {"set_offload_context", (PyCFunction)(void (*)(void))set_offload_context,
     METH_VARARGS | METH_KEYWORDS,
     "set_offload_context($module, offload_config)\n--\n\n"
     "MindSpore's 13 offload keys (and prefetch_depth). All or none."},
    {"get_offload_context", get_offload_context, METH_NOARGS, "get_offload_context($module, /)\n--\n\n"
     "The offload keys and values."},
    {NULL}};

int hwpy_context_init(PyObject *module)
{
    compiler_values = PyDict_New();
    if (!compiler_values ||
        PyModule_AddIntConstant(module, "GRAPH_MODE", GRAPH_MODE) < 0 ||
        PyModule_AddIntConstant(module, "PYNATIVE_MODE", PYNATIVE_MODE) < 0)
        return -1;
    return 0;
}
