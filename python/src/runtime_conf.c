/* MindSpore's runtime configuration calls (runtime/memory.py, runtime/executor.py,
 * runtime/stream.py): set_memory, memory_replay, dispatch_threads_num, set_cpu_affinity,
 * set_kernel_launch_group, set_kernel_launch_capture, communication_stream. Each
 * validates as MindSpore does (TypeError for a wrong type, ValueError for a bad value,
 * RuntimeError when set twice); what each does in hwrt is in its doc string and in
 * docs/python.md. */
#define _GNU_SOURCE
#include "hwpy.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "xxGB" as MindSpore's _MEMORY_PATTERN accepts it ([1-9][0-9]*.?[0-9]*GB or 0.[0-9]*GB,
 * matched at the start, then float(s[:-2])); allow_zero for _RESERVE_PATTERN. Returns
 * the bytes (GB = 2^30) or -1 with ValueError set naming what. */
double hwpy_parse_gb(const char *what, const char *s, int allow_zero)
{
    size_t n = strlen(s);
    int ok = n > 2 && !strcmp(s + n - 2, "GB");
    size_t digits = 0, dots = 0;
    for (size_t i = 0; ok && i + 2 < n; i++) {
        if (s[i] == '.') dots++;
        else if (s[i] >= '0' && s[i] <= '9') digits++;
        else ok = 0;
    }
    ok = ok && digits > 0 && dots <= 1 && s[0] != '.';
    if (ok && !allow_zero && s[0] == '0') ok = s[1] == '.';       /* 0.5GB, not 05GB or 0GB */
    double v = ok ? strtod(s, NULL) : 0;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "The argument '%s' should be in correct format! It must "
                     "be a string ending with 'GB', in addition to that, it must contain only "
                     "numbers or decimal points, such as \"5GB\" or \"3.5GB\", but got %s.", what, s);
        return -1;
    }
    if (v == 0 && !allow_zero) {
        PyErr_Format(PyExc_ValueError, "The argument '%s' should not be \"0GB\".", what);
        return -1;
    }
    return v * 1073741824.0;
}

/* A str argument or TypeError in args_type_check's words. */
static const char *str_arg(const char *name, PyObject *v)
{
    if (!PyUnicode_Check(v)) {
        PyErr_Format(PyExc_TypeError, "The parameter '%s' must be <class 'str'>, but got <class "
                     "'%.100s'>", name, Py_TYPE(v)->tp_name);
        return NULL;
    }
    return PyUnicode_AsUTF8(v);
}

static int int_arg(const char *name, PyObject *v, long *out)
{
    if (!PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "The parameter '%s' must be <class 'int'>, but got <class "
                     "'%.100s'>", name, Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyLong_AsLong(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* ---- set_memory ---- */

static int memory_configured;
static double pending_init;          /* bytes to reserve once a device is set */

/* Reserve init bytes in the pool: allocate them and free them at once, so the pool
 * keeps the segment cached (memory_reserved() shows it). Clamped to the device's free
 * memory less 1/16 (the pool needs headroom for its own bookkeeping). */
static int reserve_init(void)
{
    if (pending_init <= 0 || !*hwrt_current_backend()) return 0;
    int id;
    hwrt_memory_info mi;
    if (hwrt_get_device(&id) != HWRT_SUCCESS || hwrt_get_memory_info(id, &mi) != HWRT_SUCCESS)
        return 0;
    size_t want = (size_t)pending_init, cap = mi.free - mi.free / 16;
    pending_init = 0;
    if (want > cap) want = cap;
    if (want <= mi.reserved - mi.allocated) return 0;     /* already cached */
    void *p;
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_malloc(&p, want);
    if (st == HWRT_SUCCESS) st = hwrt_free(p);
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) { hwpy_raise(st); return -1; }
    return 0;
}

int hwpy_runtime_device_set(void)
{
    return hwpy_context_device_set() < 0 ? -1 : reserve_init();
}

static PyObject *set_memory(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"init_size", "increase_size", "max_size", "optimize_level",
                             "huge_page_reserve_size", NULL};
    PyObject *o[5] = {NULL, NULL, NULL, NULL, NULL};
    const char *defaults[5] = {"2GB", "2GB", "1024GB", "O0", "0GB"}, *v[5];
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOOO:set_memory", kwlist, &o[0], &o[1], &o[2],
                                     &o[3], &o[4]))
        return NULL;
    for (int i = 0; i < 5; i++) {
        v[i] = o[i] && o[i] != Py_None ? str_arg(kwlist[i], o[i]) : defaults[i];
        if (!v[i]) return NULL;
    }
    if (memory_configured)
        return PyErr_Format(PyExc_RuntimeError, "The 'set_memory' can not be set repeatedly.");
    double init = hwpy_parse_gb("init_size", v[0], 0), inc = hwpy_parse_gb("increase_size", v[1], 0),
           max = hwpy_parse_gb("max_size", v[2], 0);
    if (init < 0 || inc < 0 || max < 0 || hwpy_parse_gb("huge_page_reserve_size", v[4], 1) < 0)
        return NULL;
    if (strcmp(v[3], "O0") && strcmp(v[3], "O1"))
        return PyErr_Format(PyExc_ValueError, "The optimize_level must be one of ['O0', 'O1'], "
                            "but got %s.", v[3]);
    if (hwpy_context_set_max_memory(max) < 0) return NULL;
    memory_configured = 1;
    pending_init = init < max ? init : max;
    if (reserve_init() < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- memory_replay ---- */

typedef struct { unsigned long long end; void *p; } live_block;

static int by_end(const void *a, const void *b)
{
    unsigned long long x = ((const live_block *)a)->end, y = ((const live_block *)b)->end;
    return x < y ? -1 : x > y;
}

static void free_until(live_block *live, size_t *n, unsigned long long t)
{
    size_t k = 0;
    qsort(live, *n, sizeof *live, by_end);
    while (k < *n && live[k].end <= t) hwrt_free(live[k++].p);
    memmove(live, live + k, (*n - k) * sizeof *live);
    *n -= k;
}

/* memory_replay(file_path): replay a MindSpore memory-block CSV (a title line, then one
 * block per line: start time, end time, -, stream id, -, size, actual peak, -, -, type,
 * ...; more than 10 columns) against hwrt's pool: every block is allocated at its start
 * and freed at its end, in time order. max_memory_allocated() then shows the peak the
 * trace needs under hwrt's allocator. A malformed line raises ValueError naming it. */
static PyObject *memory_replay(PyObject *m, PyObject *arg)
{
    PyObject *path_b;
    if (!PyUnicode_FSConverter(arg, &path_b)) return NULL;
    FILE *f = fopen(PyBytes_AS_STRING(path_b), "r");
    if (!f) {
        PyErr_Format(PyExc_RuntimeError, "Failed to open file: %s. Please check whether the file "
                     "exists. (%s)", PyBytes_AS_STRING(path_b), strerror(errno));
        Py_DECREF(path_b);
        return NULL;
    }
    Py_DECREF(path_b);
    char line[4096];
    size_t cap = 64, n = 0, lineno = 0;
    live_block *live = malloc(cap * sizeof *live);
    unsigned long long cur = 0;
    PyObject *err = NULL;
    hwrt_status st = HWRT_SUCCESS;
    while (live && fgets(line, sizeof line, f)) {
        if (++lineno == 1) continue;                      /* title */
        if (line[0] == '\n' || line[0] == '\r') continue;
        char *fields[16] = {0}, *save = NULL;
        int nf = 0;
        for (char *t = strtok_r(line, ",\r\n", &save); t && nf < 16; t = strtok_r(NULL, ",\r\n", &save))
            fields[nf++] = t;
        unsigned long long start = nf > 10 ? strtoull(fields[0], NULL, 10) : 0,
                           end = nf > 10 ? strtoull(fields[1], NULL, 10) : 0,
                           size = nf > 10 ? strtoull(fields[5], NULL, 10) : 0;
        if (nf <= 10 || !start || !end || !size || start < cur) {
            err = PyUnicode_FromFormat("memory_replay: invalid memory block, line no : %zu (needs "
                                       "more than 10 columns, nonzero start/end/size, start times "
                                       "in order)", lineno);
            break;
        }
        cur = start;
        free_until(live, &n, start);
        if (n == cap) {
            live_block *bigger = realloc(live, 2 * cap * sizeof *live);
            if (!bigger) break;
            live = bigger;
            cap *= 2;
        }
        st = hwrt_malloc(&live[n].p, (size_t)size);
        if (st != HWRT_SUCCESS) break;
        live[n++].end = end;
    }
    fclose(f);
    if (live) {
        free_until(live, &n, ~0ull);
        free(live);
    } else {
        return PyErr_NoMemory();
    }
    if (err) {
        PyErr_SetObject(PyExc_ValueError, err);
        Py_DECREF(err);
        return NULL;
    }
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

/* ---- executor ---- */

static int threads_configured, affinity_configured, launch_group_configured, launch_capture;
static long dispatch_threads = 5, group_threads, group_num;

static PyObject *dispatch_threads_num(PyObject *m, PyObject *arg)
{
    long v;
    if (int_arg("threads_num", arg, &v) < 0) return NULL;
    if (threads_configured)
        return PyErr_Format(PyExc_RuntimeError, "The 'dispatch_threads_num' can not be set "
                            "repeatedly.");
    if (PyBool_Check(arg) || v <= 0)
        return PyErr_Format(PyExc_ValueError, "The 'threads_num' must be int and must > 0, but "
                            "got '%ld' with type 'int'.", v);
    threads_configured = 1;
    dispatch_threads = v;
    Py_RETURN_NONE;
}

/* "a-b" ranges into set; -1 with ValueError for a bad range */
static int add_ranges(PyObject *list, cpu_set_t *set)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *r = PyList_GET_ITEM(list, i);
        const char *s = PyUnicode_Check(r) ? PyUnicode_AsUTF8(r) : NULL;
        unsigned a, b;
        char tail;
        if (!s) {
            PyErr_Format(PyExc_ValueError, "CPU range '%R' in '%R' should be a string.", r, list);
            return -1;
        }
        if (sscanf(s, "%u-%u%c", &a, &b, &tail) != 2 || strchr(s, ' ') || strchr(s, '+')) {
            PyErr_Format(PyExc_ValueError, "CPU range '%s' in '%R' should be in format "
                         "'cpuidX-cpuidY'.", s, list);
            return -1;
        }
        for (unsigned c = a; c <= b && c < CPU_SETSIZE; c++) CPU_SET(c, set);
    }
    return 0;
}

/* set_cpu_affinity(enable_affinity, affinity_cpu_list=None, module_to_cpu_dict=None):
 * binds the calling (main) thread to the CPUs given: affinity_cpu_list's ranges, or the
 * CPUs the process may use; module_to_cpu_dict["main"] picks indices into those. Other
 * modules ("runtime", "pynative", "minddata") are validated; hwrt's own threads are not
 * rebound. */
static PyObject *set_cpu_affinity(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"enable_affinity", "affinity_cpu_list", "module_to_cpu_dict", NULL};
    PyObject *enable, *cpus = Py_None, *mods = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:set_cpu_affinity", kwlist, &enable, &cpus,
                                     &mods))
        return NULL;
    if (!PyBool_Check(enable))
        return PyErr_Format(PyExc_TypeError, "The parameter 'enable_affinity' must be bool, but "
                            "got %.100s", Py_TYPE(enable)->tp_name);
    if (cpus != Py_None && !PyList_Check(cpus))
        return PyErr_Format(PyExc_TypeError, "The parameter '%R' must be list, but got %R", cpus,
                            (PyObject *)Py_TYPE(cpus));
    if (mods != Py_None && !PyDict_Check(mods))
        return PyErr_Format(PyExc_TypeError, "The parameter '%R' must be dict, but got %R", mods,
                            (PyObject *)Py_TYPE(mods));
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpus != Py_None && add_ranges(cpus, &set) < 0) return NULL;
    PyObject *k, *v, *main_idx = NULL;
    Py_ssize_t pos = 0;
    while (mods != Py_None && PyDict_Next(mods, &pos, &k, &v)) {
        if (!PyUnicode_Check(k))
            return PyErr_Format(PyExc_TypeError, "A key of module_to_cpu_dict must be a str, not %R", k);
        if (!PyList_Check(v))
            return PyErr_Format(PyExc_ValueError, "The value of module_to_cpu_dict: %R should be a "
                                "list.", v);
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
            PyObject *c = PyList_GET_ITEM(v, i);
            if (!PyLong_Check(c) || PyBool_Check(c) || PyLong_AsLong(c) < 0)
                return PyErr_Format(PyExc_ValueError, "CPU index '%R' for module '%S' in '%R' should "
                                    "be a non-negative integer.", c, k, v);
        }
        if (!strcmp(PyUnicode_AsUTF8(k), "main")) main_idx = v;
    }
    if (affinity_configured)
        return PyErr_Format(PyExc_RuntimeError, "The 'mindspore.runtime.set_cpu_affinity' cannot "
                            "be set repeatedly.");
    affinity_configured = 1;
    if (enable == Py_False) Py_RETURN_NONE;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    if (cpus == Py_None || !PyList_GET_SIZE(cpus)) set = allowed;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set) && !CPU_ISSET(c, &allowed))
            return PyErr_Format(PyExc_RuntimeError, "set_cpu_affinity: CPU %d is not available to "
                                "this process (see /sys/fs/cgroup/cpuset.cpus.effective or "
                                "taskset -p %d).", c, (int)getpid());
    if (main_idx && PyList_GET_SIZE(main_idx)) {
        int ids[CPU_SETSIZE], n = 0;
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set)) ids[n++] = c;
        cpu_set_t pick;
        CPU_ZERO(&pick);
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(main_idx); i++) {
            long x = PyLong_AsLong(PyList_GET_ITEM(main_idx, i));
            if (x >= n)
                return PyErr_Format(PyExc_RuntimeError, "set_cpu_affinity: CPU index %ld for module "
                                    "'main' is out of range: %d CPUs to choose from.", x, n);
            CPU_SET(ids[x], &pick);
        }
        set = pick;
    }
    if (sched_setaffinity(0, sizeof set, &set) != 0) return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

/* set_kernel_launch_group(thread_num=2, kernel_group_num=8): validated and recorded
 * (hwrt.runtime._kernel_launch_config()); hwrt enqueues each op from the calling thread
 * at once, with no dispatch queue to split into groups, so there is nothing to spread. */
static PyObject *set_kernel_launch_group(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"thread_num", "kernel_group_num", NULL};
    PyObject *t = NULL, *g = NULL;
    long tn = 2, gn = 8;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:set_kernel_launch_group", kwlist, &t, &g) ||
        (t && int_arg("thread_num", t, &tn) < 0) || (g && int_arg("kernel_group_num", g, &gn) < 0))
        return NULL;
    if (launch_group_configured)
        return PyErr_Format(PyExc_RuntimeError, "The 'kernel_launch_group' can not be set repeatedly.");
    if (launch_capture)
        return PyErr_Format(PyExc_RuntimeError, "The 'kernel_launch_group' can not be set with "
                            "kernel launch capture");
    if (tn < 1)
        return PyErr_Format(PyExc_ValueError, "The value of thread_num should be at least 1, but "
                            "got %ld", tn);
    if (gn < 1)
        return PyErr_Format(PyExc_ValueError, "The value of kernel_group_num should be at least 1, "
                            "but got %ld", gn);
    if (gn % tn)
        return PyErr_Format(PyExc_ValueError, "Invalid parameter value, kernel_group_num: %ld "
                            "cannot be evenly divisible by thread_num: %ld", gn, tn);
    launch_group_configured = 1;
    group_threads = tn;
    group_num = gn;
    Py_RETURN_NONE;
}

/* set_kernel_launch_capture(enable_capture_graph): recorded; with it on, hwrt.runtime.Graph
 * is the way to capture and replay launches (hwrt does not capture implicitly). */
static PyObject *set_kernel_launch_capture(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"enable_capture_graph", NULL};
    PyObject *on;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:set_kernel_launch_capture", kwlist, &on))
        return NULL;
    if (!PyBool_Check(on))
        return PyErr_Format(PyExc_TypeError, "The parameter 'enable_capture_graph' must be <class "
                            "'bool'>, but got <class '%.100s'>", Py_TYPE(on)->tp_name);
    if (launch_group_configured)
        return PyErr_Format(PyExc_RuntimeError, "The 'kernel_launch_group' can not be set with "
                            "kernel launch capture");
    launch_capture = on == Py_True;
    Py_RETURN_NONE;
}

static PyObject *launch_config(PyObject *m, PyObject *unused)
{
    return Py_BuildValue("{s:l,s:l,s:l,s:O,s:O}", "dispatch_threads_num", dispatch_threads,
                         "thread_num", group_threads, "kernel_group_num", group_num,
                         "kernel_launch_capture", launch_capture ? Py_True : Py_False,
                         "cpu_affinity_configured", affinity_configured ? Py_True : Py_False);
}

/* ---- communication_stream ---- */

static PyObject *comm_stream;

/* communication_stream(): the stream for communication on this device: one Stream made
 * on the first call, the same one afterwards. */
static PyObject *communication_stream(PyObject *m, PyObject *unused)
{
    if (!comm_stream) {
        comm_stream = PyObject_CallNoArgs((PyObject *)&hwpy_stream_type);
        if (!comm_stream) return NULL;
    }
    return Py_NewRef(comm_stream);
}

#define KW(fn) (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS

PyMethodDef hwpy_runtime_conf_methods[] = {
    {"set_memory", KW(set_memory),
     "set_memory($module, init_size='2GB', increase_size='2GB', max_size='1024GB', "
     "optimize_level='O0', huge_page_reserve_size='0GB')\n--\n\n"
     "Once. max_size caps the pool "
     "(max_device_memory); init_size is reserved in the pool when the device is set."},
    {"memory_replay", memory_replay, METH_O,
     "memory_replay($module, file_path, /)\n--\n\n"
     "Replay a MindSpore memory-block CSV against the pool."},
    {"dispatch_threads_num", dispatch_threads_num, METH_O,
     "dispatch_threads_num($module, threads_num, /)\n--\n\n"
     "Once; recorded (hwrt has no dispatch threads)."},
    {"set_cpu_affinity", KW(set_cpu_affinity),
     "set_cpu_affinity($module, enable_affinity, affinity_cpu_list=None, "
     "module_to_cpu_dict=None)\n--\n\n"
     "Bind the calling thread to those CPUs. Once."},
    {"set_kernel_launch_group", KW(set_kernel_launch_group),
     "set_kernel_launch_group($module, thread_num=2, kernel_group_num=8)\n--\n\n"
     "Validated and recorded."},
    {"set_kernel_launch_capture", KW(set_kernel_launch_capture),
     "set_kernel_launch_capture($module, enable_capture_graph)\n--\n\n"
     "Recorded; use runtime.Graph to capture."},
    {"_kernel_launch_config", launch_config, METH_NOARGS,
     "_kernel_launch_config($module, /)\n--\n\n"
     "What the executor calls recorded."},
    {"communication_stream", communication_stream, METH_NOARGS,
     "communication_stream($module, /)\n--\n\n"
     "The Stream for communication (one per process)."},
    {NULL}};
