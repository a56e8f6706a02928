/* hwrt.communication (init, get_rank, get_group_size, get_local_rank, release) and
 * hwrt.profiler (start, stop).
 *
 * They call hwrt_dist_* and hwrt_profiler_* when this hwrt has them (hwrt_dist.h,
 * hwrt_prof.h). A build without the distributed part still runs a plain process as
 * rank 0 of 1, and refuses (UnavailableError) when a launcher started several ranks,
 * rather than letting every rank believe it is rank 0. */
#include "hwpy.h"

#include <stdlib.h>
#include <string.h>

#if __has_include("hwrt/hwrt_dist.h")
#define HWPY_HAVE_DIST 1
#endif
#if __has_include("hwrt/hwrt_prof.h")
#define HWPY_HAVE_PROF 1
#endif

static int initialized;

#ifndef HWPY_HAVE_DIST
/* World size a launcher announced (mpirun, torchrun, msrun, Slurm, PMI); 1 if none. */
static long launcher_world_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "WORLD_SIZE", "RANK_SIZE",
                                       "PMI_SIZE", "SLURM_NTASKS", NULL};
    for (const char *const *v = vars; *v; v++) {
        const char *s = getenv(*v);
        if (s && *s) return strtol(s, NULL, 10);
    }
    return 1;
}
#endif

static PyObject *comm_init(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"backend_name", NULL};
    const char *backend = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|z:init", kwlist, &backend)) return NULL;
#ifdef HWPY_HAVE_DIST
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_dist_init();
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    /* MPI requires every rank that joined to finalize before exiting; the seed's scripts
     * never call release(), so do it at interpreter exit as MindSpore does */
    static int registered;
    if (!registered) {
        PyObject *atexit = PyImport_ImportModule("atexit");
        PyObject *fn = atexit ? PyObject_GetAttrString(m, "release") : NULL;
        PyObject *r = fn ? PyObject_CallMethod(atexit, "register", "O", fn) : NULL;
        Py_XDECREF(atexit);
        Py_XDECREF(fn);
        if (!r) return NULL;
        Py_DECREF(r);
        registered = 1;
    }
#else
    long n = launcher_world_size();
    if (n > 1)
        return hwpy_raise_msg(HWRT_ERROR_UNAVAILABLE, "communication.init: the launcher started "
                              "%ld ranks but this hwrt was built without its distributed part "
                              "(hwrt_dist.h); rebuild hwrt with it", n);
#endif
    initialized = 1;
    Py_RETURN_NONE;
}

static int need_init(const char *fn)
{
    if (initialized) return 0;
    hwpy_raise_msg(HWRT_ERROR_NOT_PERMITTED, "communication.%s: call "
                   "hwrt.communication.init() first", fn);
    return -1;
}

static PyObject *get_rank(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"group", NULL};
    PyObject *group = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:get_rank", kwlist, &group) ||
        need_init("get_rank") < 0)
        return NULL;
#ifdef HWPY_HAVE_DIST
    return PyLong_FromLong(hwrt_dist_rank());
#else
    return PyLong_FromLong(0);
#endif
}

static PyObject *get_group_size(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"group", NULL};
    PyObject *group = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:get_group_size", kwlist, &group) ||
        need_init("get_group_size") < 0)
        return NULL;
#ifdef HWPY_HAVE_DIST
    return PyLong_FromLong(hwrt_dist_size());
#else
    return PyLong_FromLong(1);
#endif
}

static PyObject *get_local_rank(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"group", NULL};
    PyObject *group = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:get_local_rank", kwlist, &group) ||
        need_init("get_local_rank") < 0)
        return NULL;
#ifdef HWPY_HAVE_DIST
    return PyLong_FromLong(hwrt_dist_local_rank());
#else
    return PyLong_FromLong(0);
#endif
}

static PyObject *release(PyObject *m, PyObject *unused)
{
    if (!initialized) Py_RETURN_NONE;
#ifdef HWPY_HAVE_DIST
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_dist_finalize();
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
#endif
    initialized = 0;
    Py_RETURN_NONE;
}

#define KW(fn) (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS
PyMethodDef hwpy_comm_methods[] = {
    {"init", KW(comm_init), "init($module, backend_name=None)\n--\n\n"
     "Join the job the launcher started (mpirun, torchrun, msrun, Slurm); a plain process "
     "is rank 0 of 1."},
    {"get_rank", KW(get_rank), "get_rank($module, group=None)\n--\n\n"
     "This process's global rank."},
    {"get_group_size", KW(get_group_size), "get_group_size($module, group=None)\n--\n\n"
     "Number of ranks."},
    {"get_local_rank", KW(get_local_rank), "get_local_rank($module, group=None)\n--\n\n"
     "Rank among the processes of this host."},
    {"release", release, METH_NOARGS, "release($module, /)\n--\n\n"
     "Leave the job."},
    {NULL}};

/* ---- profiler ---- */

static PyObject *prof_start(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"output_path", NULL};
    const char *dir = "./hwrt_prof";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|s:start", kwlist, &dir)) return NULL;
#ifdef HWPY_HAVE_PROF
    hwrt_status st = hwrt_profiler_start(dir);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
#else
    return hwpy_raise_msg(HWRT_ERROR_NOT_SUPPORTED, "profiler.start(\"%s\"): this hwrt was built "
                          "without its profiler (hwrt_prof.h); rebuild hwrt with it", dir);
#endif
}

static PyObject *prof_stop(PyObject *m, PyObject *unused)
{
#ifdef HWPY_HAVE_PROF
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_profiler_stop();
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
#else
    return hwpy_raise_msg(HWRT_ERROR_NOT_SUPPORTED, "profiler.stop(): this hwrt was built "
                          "without its profiler (hwrt_prof.h)");
#endif
}

/* Which optional parts this build of the module was compiled with. */
int hwpy_comm_features(PyObject *d)
{
#ifdef HWPY_HAVE_DIST
    int dist = 1;
#else
    int dist = 0;
#endif
#ifdef HWPY_HAVE_PROF
    int prof = 1;
#else
    int prof = 0;
#endif
    if (PyDict_SetItemString(d, "dist", dist ? Py_True : Py_False) < 0) return -1;
    return PyDict_SetItemString(d, "profiler", prof ? Py_True : Py_False);
}

PyMethodDef hwpy_prof_methods[] = {
    {"start", KW(prof_start), "start($module, output_path='./hwrt_prof')\n--\n\n"
     "Record API calls, device work, copies and memory into output_path (read it with "
     "hwrt-prof)."},
    {"stop", prof_stop, METH_NOARGS, "stop($module, /)\n--\n\n"
     "Stop recording and write the trace."},
    {NULL}};
