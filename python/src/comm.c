/* hwrt.communication and hwrt.communication.management (MindSpore's names: init,
 * get_rank, get_group_size, get_local_rank, get_local_rank_size, groups, GlobalComm,
 * release) and hwrt.profiler (start, stop).
 *
 * They call hwrt_dist_* and hwrt_profiler_* when this hwrt has them (hwrt_dist.h,
 * hwrt_prof.h). A build without the distributed part still runs a plain process as
 * rank 0 of 1, and refuses (UnavailableError) when a launcher started several ranks,
 * rather than letting every rank believe it is rank 0. */
#include "hwpy.h"

#include <stdlib.h>
#include <string.h>

#if __has_include("hwrt/hwrt_prof.h")
#define HWPY_HAVE_PROF 1
#endif

static int initialized;
static int update_global_comm(void);

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
    if (update_global_comm() < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- groups (communication/management.py, _comm_helper.py) ----
 * The world group is named after the backend MindSpore would use for the target:
 * "hccl_world_group" (Ascend, and hwrt's own targets), "nccl_world_group" (GPU),
 * "mccl_world_group" (CPU). create_group records a group of world ranks (the rank
 * queries and translations answer for it) and, on its members, creates the group's
 * sub-communicator (hwrt_group_create: an MPI communicator of those ranks), on which
 * comm_func's collectives with group= run. A rank not in rank_ids records the group only
 * and is warned, as MindSpore's collective_manager.cc warns it. */

static PyObject *groups;           /* name -> list of world ranks */
#ifdef HWPY_HAVE_DIST
static PyObject *comms;            /* name -> capsule of its hwrt_group (members only) */
#endif
static PyObject *global_comm;      /* the GlobalComm class */

static const char *world_group(void)
{
    const char *t = hwpy_context_target();
    if (!strcmp(t, "GPU")) return "nccl_world_group";
    if (!strcmp(t, "CPU")) return "mccl_world_group";
    return "hccl_world_group";
}

static int is_world(const char *g)
{
    return !strcmp(g, "hccl_world_group") || !strcmp(g, "nccl_world_group") ||
           !strcmp(g, "mccl_world_group");
}

/* What the launcher says before init(): _comm_helper.py reads RANK_ID, RANK_SIZE,
 * LOCAL_RANK, LOCAL_RANK_SIZE (else 0 / 1 / 0 / 1); hwrt_dist_detect knows those of
 * msrun, torchrun, Open MPI, PMI and Slurm. */
static void launcher_view(int *rank, int *size, int *local_rank, int *local_size)
{
    *rank = 0, *size = 1, *local_rank = 0, *local_size = 1;
#ifdef HWPY_HAVE_DIST
    hwrt_dist_info d;
    if (hwrt_dist_detect(&d) == HWRT_SUCCESS) {
        *rank = d.rank, *size = d.size;
        if (d.local_rank >= 0) *local_rank = d.local_rank;
        if (d.local_size >= 0) *local_size = d.local_size;
    }
#endif
    const char *v;
    if ((v = getenv("RANK_ID")) && *v) *rank = atoi(v);
    if ((v = getenv("RANK_SIZE")) && *v) *size = atoi(v);
    if ((v = getenv("LOCAL_RANK")) && *v) *local_rank = atoi(v);
    if ((v = getenv("LOCAL_RANK_SIZE")) && *v) *local_size = atoi(v);
}

/* rank, size, local rank, local size of the world as init() joined it */
static void world_view(int *rank, int *size, int *local_rank, int *local_size)
{
    launcher_view(rank, size, local_rank, local_size);
    if (!initialized) return;
#ifdef HWPY_HAVE_DIST
    *rank = hwrt_dist_rank();
    *size = hwrt_dist_size();
    *local_rank = hwrt_dist_local_rank();
#else
    *rank = 0, *size = 1, *local_rank = 0, *local_size = 1;
#endif
}

static int need_init(const char *fn)
{
    if (initialized) return 0;
    PyErr_Format(PyExc_RuntimeError, "Distributed Communication has not been inited. You can't "
                 "invoke %s yet. Please call `init()` method first.", fn);
    return -1;
}

/* The group argument: a str (TypeError otherwise); NULL/None: the world group. Returns
 * the group's world ranks (new ref) or Py_None for the world group; NULL on error. */
static PyObject *group_arg(const char *fn, PyObject *g, int world_ok)
{
    if (!g || g == Py_None) return world_ok ? Py_NewRef(Py_None) : NULL;
    if (!PyUnicode_Check(g))
        return PyErr_Format(PyExc_TypeError, "For '%s', the argument 'group' must be type of "
                            "string, but got 'group' type : %R.", fn, (PyObject *)Py_TYPE(g));
    const char *name = PyUnicode_AsUTF8(g);
    if (!name) return NULL;
    if (is_world(name)) {
        if (!world_ok)
            return PyErr_Format(PyExc_ValueError, "For '%s', the argument 'group' should not be "
                                "the world group \"%s\".", fn, name);
        return Py_NewRef(Py_None);
    }
    PyObject *ranks = PyDict_GetItemWithError(groups, g);
    if (!ranks && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "For '%s', the group \"%s\" does not exist: create it "
                     "with create_group(group, rank_ids) first.", fn, name);
    return ranks ? Py_NewRef(ranks) : NULL;
}

/* get_rank / get_group_size / get_local_rank / get_local_rank_size (what: 0..3) */
static PyObject *rank_query(PyObject *args, PyObject *kw, const char *fn, int what)
{
    static char *kwlist[] = {"group", NULL};
    PyObject *g = Py_None;
    char fmt[64];
    snprintf(fmt, sizeof fmt, "|O:%s", fn);
    if (!PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, &g)) return NULL;
    PyObject *ranks = group_arg(fn, g, 1);
    if (!ranks) return NULL;
    int v[4];
    world_view(&v[0], &v[1], &v[2], &v[3]);
    if (ranks == Py_None) {
        Py_DECREF(ranks);
        return PyLong_FromLong(v[what]);
    }
    Py_ssize_t n = PyList_GET_SIZE(ranks);
    if (what == 1 || what == 3) {
        Py_DECREF(ranks);
        return PyLong_FromSsize_t(n);
    }
    PyObject *me = PyLong_FromLong(v[0]);
    Py_ssize_t idx = me ? PySequence_Index(ranks, me) : -1;
    Py_XDECREF(me);
    Py_DECREF(ranks);
    if (idx < 0) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError)) return NULL;
        PyErr_Clear();
        return PyErr_Format(PyExc_ValueError, "%s: this process (world rank %d) is not in group "
                            "%R", fn, v[0], g);
    }
    return PyLong_FromSsize_t(idx);
}

static PyObject *get_rank(PyObject *m, PyObject *args, PyObject *kw)
{
    return rank_query(args, kw, "get_rank", 0);
}

static PyObject *get_group_size(PyObject *m, PyObject *args, PyObject *kw)
{
    return rank_query(args, kw, "get_group_size", 1);
}

static PyObject *get_local_rank(PyObject *m, PyObject *args, PyObject *kw)
{
    return rank_query(args, kw, "get_local_rank", 2);
}

static PyObject *get_local_rank_size(PyObject *m, PyObject *args, PyObject *kw)
{
    return rank_query(args, kw, "get_local_rank_size", 3);
}

static int rank_int(const char *fn, const char *name, PyObject *v, long *out)
{
    if (!PyLong_Check(v) || PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "For '%s', the argument '%s' must be type of int, but got "
                     "%R.", fn, name, (PyObject *)Py_TYPE(v));
        return -1;
    }
    *out = PyLong_AsLong(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* The world ranks of a named group (a new list), after MindSpore's type check of it. */
static PyObject *group_ranks(const char *fn, PyObject *g)
{
    if (!PyUnicode_Check(g))
        return PyErr_Format(PyExc_TypeError, "For '%s', the argument 'group' must be type of "
                            "string, but got 'group' type : %R.", fn, (PyObject *)Py_TYPE(g));
    return group_arg(fn, g, 0);
}

static PyObject *world_from_group(PyObject *m, PyObject *args, PyObject *kw)
{
    static const char *fn = "get_world_rank_from_group_rank";
    static char *kwlist[] = {"group", "group_rank_id", NULL};
    PyObject *g, *r;
    long id;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:get_world_rank_from_group_rank", kwlist, &g,
                                     &r) ||
        need_init(fn) < 0 || rank_int(fn, "group_rank_id", r, &id) < 0)
        return NULL;
    PyObject *ranks = group_ranks(fn, g);
    if (!ranks) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ranks);
    PyObject *res = id >= 0 && id < n ? Py_NewRef(PyList_GET_ITEM(ranks, id))
                                      : PyErr_Format(PyExc_ValueError, "%s: group_rank_id %ld is "
                                                     "out of range: group %R has %zd ranks", fn,
                                                     id, g, n);
    Py_DECREF(ranks);
    return res;
}

static PyObject *group_from_world(PyObject *m, PyObject *args, PyObject *kw)
{
    static const char *fn = "get_group_rank_from_world_rank";
    static char *kwlist[] = {"world_rank_id", "group", NULL};
    PyObject *g, *r;
    long id;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:get_group_rank_from_world_rank", kwlist, &r,
                                     &g) ||
        need_init(fn) < 0 || rank_int(fn, "world_rank_id", r, &id) < 0)
        return NULL;
    PyObject *ranks = group_ranks(fn, g);
    if (!ranks) return NULL;
    Py_ssize_t idx = PySequence_Index(ranks, r);
    Py_DECREF(ranks);
    if (idx < 0) {
        PyErr_Clear();
        return PyErr_Format(PyExc_ValueError, "%s: world rank %ld is not in group %R", fn, id, g);
    }
    return PyLong_FromSsize_t(idx);
}

static PyObject *create_group(PyObject *m, PyObject *args, PyObject *kw)
{
    static const char *fn = "create_group";
    static char *kwlist[] = {"group", "rank_ids", "options", NULL};
    PyObject *g, *ids, *options = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:create_group", kwlist, &g, &ids, &options) ||
        need_init(fn) < 0)
        return NULL;
    if (!PyUnicode_Check(g))
        return PyErr_Format(PyExc_TypeError, "For 'create_group', the argument 'group' must be "
                            "type of string, but got 'group' type : %R.", (PyObject *)Py_TYPE(g));
    if (!PyList_Check(ids))
        return PyErr_Format(PyExc_TypeError, "For 'create_group', the argument 'rank_ids' must be "
                            "type of list, but got 'rank_ids' type : %R.", (PyObject *)Py_TYPE(ids));
    const char *name = PyUnicode_AsUTF8(g);
    if (!name) return NULL;
    if (is_world(name))
        return PyErr_Format(PyExc_ValueError, "For 'create_group', the argument 'group' should "
                            "not be the world group \"%s\".", name);
    if (PyDict_Contains(groups, g))
        return PyErr_Format(PyExc_ValueError, "For 'create_group', the group \"%s\" exists "
                            "already; destroy_group it first.", name);
    Py_ssize_t n = PyList_GET_SIZE(ids);
    if (n < 2)
        return PyErr_Format(PyExc_ValueError, "For 'create_group', the size of 'rank_ids' should "
                            "be larger than 1, but got %zd.", n);
    int v[4];
    world_view(&v[0], &v[1], &v[2], &v[3]);
    PyObject *seen = PySet_New(NULL);
    if (!seen) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(ids, i);
        long r;
        if (rank_int(fn, "rank_ids", x, &r) < 0) { Py_DECREF(seen); return NULL; }
        if (r < 0 || r >= v[1]) {
            Py_DECREF(seen);
            return PyErr_Format(PyExc_ValueError, "For 'create_group', rank id %ld in 'rank_ids' "
                                "is out of the world's range [0, %d).", r, v[1]);
        }
        if (PySet_Contains(seen, x)) {
            Py_DECREF(seen);
            return PyErr_Format(PyExc_ValueError, "For 'create_group', 'rank_ids' should not have "
                                "duplicate data, but %ld appears twice.", r);
        }
        if (PySet_Add(seen, x) < 0) { Py_DECREF(seen); return NULL; }
    }
    Py_DECREF(seen);
    PyObject *copy = PyList_GetSlice(ids, 0, n);
    if (!copy) return NULL;
#ifdef HWPY_HAVE_DIST
    int *list = PyMem_Malloc((size_t)n * sizeof *list), member = 0;
    if (!list) { Py_DECREF(copy); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        list[i] = (int)PyLong_AsLong(PyList_GET_ITEM(copy, i));
        member |= list[i] == v[0];
    }
    if (member) {
        hwrt_group grp = NULL;
        hwrt_status st;
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_group_create(list, (int)n, &grp);
        Py_END_ALLOW_THREADS
        PyMem_Free(list);
        PyObject *cap = st == HWRT_SUCCESS ? PyCapsule_New(grp, "hwrt_group", NULL) : NULL;
        if (st != HWRT_SUCCESS || !cap || PyDict_SetItem(comms, g, cap) < 0) {
            if (st != HWRT_SUCCESS) hwpy_raise(st);
            else hwrt_group_destroy(grp);
            Py_XDECREF(cap);
            Py_DECREF(copy);
            return NULL;
        }
        Py_DECREF(cap);
    } else {
        PyMem_Free(list);
        if (PyErr_WarnFormat(PyExc_UserWarning, 1, "create_group: this rank (%d) is not in "
                             "the group ranks %R: the group is recorded for the rank queries "
                             "and translations, but this rank cannot run its collectives",
                             v[0], copy) < 0) {
            Py_DECREF(copy);
            return NULL;
        }
    }
#endif
    int rc = PyDict_SetItem(groups, g, copy);
    Py_DECREF(copy);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

#ifdef HWPY_HAVE_DIST
int hwpy_comm_group(const char *fn, PyObject *g, hwrt_group *grp, PyObject **ranks)
{
    *grp = NULL;
    *ranks = NULL;
    if (need_init(fn) < 0) return -1;
    if (g != Py_None && !PyUnicode_Check(g)) {
        PyErr_Format(PyExc_TypeError, "For '%s', the argument 'group' must be type of string, "
                     "but got 'group' type : %R.", fn, (PyObject *)Py_TYPE(g));
        return -1;
    }
    PyObject *r = group_arg(fn, g, 1);
    if (!r) return -1;
    if (r == Py_None) { *ranks = r; return 0; }            /* the world */
    PyObject *cap = PyDict_GetItemWithError(comms, g);
    if (!cap) {
        Py_DECREF(r);
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_RuntimeError, "For '%s', this process (world rank %d) is not in "
                         "group %R: only its members run its collectives", fn,
                         hwrt_dist_rank(), g);
        return -1;
    }
    *grp = PyCapsule_GetPointer(cap, "hwrt_group");
    *ranks = r;
    return *grp ? 0 : -1;
}
#endif

static PyObject *destroy_group(PyObject *m, PyObject *g)
{
    if (need_init("destroy_group") < 0) return NULL;
    PyObject *ranks = group_arg("destroy_group", g, 0);
    if (!ranks) return NULL;
    Py_DECREF(ranks);
#ifdef HWPY_HAVE_DIST
    PyObject *cap = PyDict_GetItemWithError(comms, g);
    if (!cap && PyErr_Occurred()) return NULL;
    if (cap) {                      /* a member: the sub-communicator goes, on every member */
        hwrt_group grp = PyCapsule_GetPointer(cap, "hwrt_group");
        hwrt_status st;
        Py_BEGIN_ALLOW_THREADS
        st = hwrt_group_destroy(grp);
        Py_END_ALLOW_THREADS
        if (PyDict_DelItem(comms, g) < 0) return NULL;   /* the handle is gone either way */
        if (st != HWRT_SUCCESS) {
            PyDict_DelItem(groups, g);
            return hwpy_raise(st);
        }
    }
#endif
    if (PyDict_DelItem(groups, g) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *get_comm_name(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"group", NULL};
    PyObject *g = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:get_comm_name", kwlist, &g) ||
        need_init("get_comm_name") < 0)
        return NULL;
    PyObject *ranks = group_arg("get_comm_name", g, 1);
    if (!ranks) return NULL;
    int world = ranks == Py_None;
    Py_DECREF(ranks);
    return world ? PyUnicode_FromString(world_group()) : Py_NewRef(g);
}

static PyObject *get_process_group_ranks(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"group", NULL};
    PyObject *g = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:get_process_group_ranks", kwlist, &g))
        return NULL;
    PyObject *ranks = group_arg("get_process_group_ranks", g, 1);
    if (!ranks || ranks != Py_None) return ranks;
    Py_DECREF(ranks);
    int v[4];
    world_view(&v[0], &v[1], &v[2], &v[3]);
    PyObject *l = PyList_New(v[1]);
    for (int i = 0; l && i < v[1]; i++) PyList_SET_ITEM(l, i, PyLong_FromLong(i));
    return l;
}

/* GlobalComm.INITED, WORLD_COMM_GROUP, BACKEND follow init()/release() */
static int update_global_comm(void)
{
    const char *w = world_group();
    char backend[8];
    snprintf(backend, sizeof backend, "%.4s", w);
    PyObject *g = PyUnicode_FromString(w), *b = PyUnicode_FromString(backend);
    int rc = g && b && PyObject_SetAttrString(global_comm, "WORLD_COMM_GROUP", g) == 0 &&
                     PyObject_SetAttrString(global_comm, "BACKEND", b) == 0 &&
                     PyObject_SetAttrString(global_comm, "INITED",
                                            initialized ? Py_True : Py_False) == 0
                 ? 0 : -1;
    Py_XDECREF(g);
    Py_XDECREF(b);
    return rc;
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
    PyDict_Clear(groups);
#ifdef HWPY_HAVE_DIST
    PyDict_Clear(comms);           /* hwrt_dist_finalize dropped the groups */
#endif
    if (update_global_comm() < 0) return NULL;
    Py_RETURN_NONE;
}

#define KW(fn) (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS
PyMethodDef hwpy_comm_methods[] = {
    {"init", KW(comm_init), "init($module, backend_name=None)\n--\n\n"
     "Join the job the launcher started (mpirun, torchrun, msrun, Slurm); a plain process "
     "is rank 0 of 1."},
    {"get_rank", KW(get_rank), "get_rank($module, group=None)\n--\n\n"
     "This process's rank in group (default: the world; before init: the launcher's, else 0)."},
    {"get_group_size", KW(get_group_size), "get_group_size($module, group=None)\n--\n\n"
     "Number of ranks in group (default: the world)."},
    {"get_local_rank", KW(get_local_rank), "get_local_rank($module, group=None)\n--\n\n"
     "Rank among the processes of this host."},
    {"get_local_rank_size", KW(get_local_rank_size),
     "get_local_rank_size($module, group=None)\n--\n\n"
     "Ranks on this host."},
    {"get_world_rank_from_group_rank", KW(world_from_group),
     "get_world_rank_from_group_rank($module, group, group_rank_id)\n--\n\n"
     "The world rank of rank group_rank_id of group."},
    {"get_group_rank_from_world_rank", KW(group_from_world),
     "get_group_rank_from_world_rank($module, world_rank_id, group)\n--\n\n"
     "The rank in group of world rank world_rank_id."},
    {"create_group", KW(create_group),
     "create_group($module, group, rank_ids, options=None)\n--\n\n"
     "A named group of world ranks, group rank i being rank_ids[i]; on its members a "
     "sub-communicator that comm_func's collectives with group= run on (called by the "
     "members, with the same list)."},
    {"destroy_group", destroy_group, METH_O, "destroy_group($module, group, /)\n--\n\n"
     "Destroy a group made by create_group (its members destroy its communicator)."},
    {"get_comm_name", KW(get_comm_name), "get_comm_name($module, group=None)\n--\n\n"
     "The group's name (default: the world's)."},
    {"get_process_group_ranks", KW(get_process_group_ranks),
     "get_process_group_ranks($module, group=None)\n--\n\n"
     "The list of world ranks in group (default: the world)."},
    {"release", release, METH_NOARGS, "release($module, /)\n--\n\n"
     "Leave the job."},
    {NULL}};

int hwpy_comm_init(PyObject *comm, PyObject *mgmt)
{
#ifdef HWPY_HAVE_DIST
    comms = PyDict_New();
    if (!comms) return -1;
#endif
    groups = PyDict_New();
    global_comm = groups ? PyObject_CallFunction((PyObject *)&PyType_Type, "s()N", "GlobalComm",
                                                 Py_BuildValue("{s:s,s:s,s:O,s:O,s:s,s:s}", "BACKEND",
                                                               "hccl", "WORLD_COMM_GROUP",
                                                               "hccl_world_group", "INITED",
                                                               Py_False, "CHECK_ENVS", Py_True,
                                                               "__module__", "hwrt.communication",
                                                               "__doc__", "MindSpore's GlobalComm: "
                                                               "the backend and world group names, "
                                                               "INITED after init()."))
                         : NULL;
    if (!global_comm) return -1;
    PyObject *targets[2] = {comm, mgmt};
    for (int i = 0; i < 2; i++)
        if (PyModule_AddObjectRef(targets[i], "GlobalComm", global_comm) < 0 ||
            PyModule_AddStringConstant(targets[i], "HCCL_WORLD_COMM_GROUP", "hccl_world_group") < 0 ||
            PyModule_AddStringConstant(targets[i], "NCCL_WORLD_COMM_GROUP", "nccl_world_group") < 0 ||
            PyModule_AddStringConstant(targets[i], "MCCL_WORLD_COMM_GROUP", "mccl_world_group") < 0 ||
            hwpy_add_functions(targets[i], hwpy_comm_methods) < 0)
            return -1;
    return 0;
}

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
