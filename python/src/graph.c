/* hwrt.runtime.Graph: capture and replay, the GRAPH-mode analogue (seed, problem 5).
 *
 *   g = hwrt.runtime.Graph()
 *   with g.capture(stream):          # ops inside are recorded on stream, not run
 *       y = hwrt.relu(x @ w)         # y.asnumpy() here raises NotPermittedError
 *   g.replay()                       # runs them; y.asnumpy() afterwards reads the result
 *
 * Present when hwrt has hwrt_graph.h (diag's graph capture); inside a capture hwrt itself
 * forbids host reads and synchronizations, which is the seed's problem 5. */
#include "hwpy.h"

#if __has_include("hwrt/hwrt_graph.h")

typedef struct {
    PyObject_HEAD
    hwrt_graph g;
    PyObject *stream;         /* the capturing Stream (None: default stream) */
    PyObject *prev;           /* the thread's current stream before capture */
    int capturing;
} graph_obj;

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, ":Graph", kwlist)) return NULL;
    graph_obj *o = (graph_obj *)type->tp_alloc(type, 0);
    if (o) o->stream = Py_NewRef(Py_None);
    return (PyObject *)o;
}

static void graph_dealloc(PyObject *self)
{
    graph_obj *o = (graph_obj *)self;
    if (o->capturing) {               /* dropped mid-capture: leave the stream eager */
        hwrt_stream s;
        hwrt_graph g = NULL;
        if (hwpy_stream_arg(o->stream, &s) == 0 && hwrt_stream_end_capture(s, &g) == 0 && g)
            hwrt_graph_destroy(g);
        PyErr_Clear();
    }
    if (o->g) hwrt_graph_destroy(o->g);
    Py_XDECREF(o->stream);
    Py_XDECREF(o->prev);
    Py_TYPE(self)->tp_free(self);
}

/* capture(stream=None) -> self, for `with g.capture(s):` */
static PyObject *graph_capture(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", NULL};
    PyObject *so = Py_None;
    hwrt_stream s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:capture", kwlist, &so) ||
        hwpy_stream_arg(so, &s) < 0)
        return NULL;
    graph_obj *o = (graph_obj *)self;
    if (o->capturing)
        return hwpy_raise_msg(HWRT_ERROR_NOT_PERMITTED, "Graph.capture: this graph is already "
                              "capturing");
    Py_SETREF(o->stream, Py_NewRef(so == Py_None && hwpy_current_stream_obj()
                                       ? hwpy_current_stream_obj() : so));
    return Py_NewRef(self);
}

static PyObject *graph_enter(PyObject *self, PyObject *unused)
{
    graph_obj *o = (graph_obj *)self;
    hwrt_stream s;
    if (hwpy_stream_arg(o->stream, &s) < 0) return NULL;
    if (o->capturing)
        return hwpy_raise_msg(HWRT_ERROR_NOT_PERMITTED, "Graph: already capturing");
    hwrt_status st = hwrt_stream_begin_capture(s);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    o->capturing = 1;
    /* ops created inside go to the capturing stream */
    Py_XSETREF(o->prev, Py_XNewRef(hwpy_current_stream_obj()));
    if (o->stream != Py_None && hwpy_set_current_stream(o->stream) < 0) return NULL;
    return Py_NewRef(self);
}

static PyObject *graph_exit(PyObject *self, PyObject *args)
{
    graph_obj *o = (graph_obj *)self;
    hwrt_stream s;
    hwpy_stream_arg(o->stream, &s);
    hwrt_graph g = NULL;
    hwrt_status st = hwrt_stream_end_capture(s, &g);
    o->capturing = 0;
    int rc = hwpy_set_current_stream(o->prev);
    Py_CLEAR(o->prev);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    if (o->g) hwrt_graph_destroy(o->g);          /* a re-capture replaces the graph */
    o->g = g;
    if (rc < 0) return NULL;
    Py_RETURN_FALSE;
}

static PyObject *graph_replay(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", NULL};
    PyObject *so = Py_None;
    hwrt_stream s;
    graph_obj *o = (graph_obj *)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:replay", kwlist, &so) ||
        hwpy_stream_arg(so, &s) < 0)
        return NULL;
    if (!o->g)
        return hwpy_raise_msg(HWRT_ERROR_INVALID_ARGUMENT, "Graph.replay: nothing captured "
                              "yet; use `with g.capture(stream):` first");
    hwrt_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hwrt_graph_launch(o->g, s);
    Py_END_ALLOW_THREADS
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *graph_get_nodes(PyObject *self, void *c)
{
    graph_obj *o = (graph_obj *)self;
    size_t n = 0;
    if (o->g) {
        hwrt_status st = hwrt_graph_node_count(o->g, &n);
        if (st != HWRT_SUCCESS) return hwpy_raise(st);
    }
    return PyLong_FromSize_t(n);
}

static PyMethodDef graph_methods[] = {
    {"capture", (PyCFunction)(void (*)(void))graph_capture, METH_VARARGS | METH_KEYWORDS,
     "capture($self, stream=None)\n--\n\n"
     "Returns self: `with g.capture(s):` records the ops queued inside (on s, made "
     "current) instead of running them."},
    {"replay", (PyCFunction)(void (*)(void))graph_replay, METH_VARARGS | METH_KEYWORDS,
     "replay($self, stream=None)\n--\n\n"
     "Enqueue the recorded ops again."},
    {"__enter__", graph_enter, METH_NOARGS, "__enter__($self, /)\n--\n\n"
     "Start capturing (the stream given to capture())."},
    {"__exit__", graph_exit, METH_VARARGS, "__exit__($self, /, *args)\n--\n\n"
     "End the capture; the recorded ops can be replayed."},
    {NULL}};

static PyGetSetDef graph_getset[] = {
    {"node_count", graph_get_nodes, NULL, "recorded work items", NULL},
    {NULL}};

static PyTypeObject graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hwrt.runtime.Graph",
    .tp_basicsize = sizeof(graph_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Graph()\n--\n\n"
              "Capture a stream's ops once, replay them cheaply (GRAPH mode). Host reads and "
              "synchronizations inside a capture raise NotPermittedError.",
    .tp_new = graph_new,
    .tp_dealloc = graph_dealloc,
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
};

int hwpy_graph_init(PyObject *runtime)
{
    if (PyType_Ready(&graph_type) < 0) return -1;
    return PyModule_AddObjectRef(runtime, "Graph", (PyObject *)&graph_type);
}

int hwpy_graph_features(PyObject *d)
{
    return PyDict_SetItemString(d, "graph", Py_True);
}

#else

int hwpy_graph_init(PyObject *runtime) { (void)runtime; return 0; }

int hwpy_graph_features(PyObject *d)
{
    return PyDict_SetItemString(d, "graph", Py_False);
}

#endif
