/* hwrt.runtime.Stream, Event, StreamCtx and the per-thread current stream.
 *
 * The C API has no "current stream" (NULL means the device's default stream); MindSpore
 * and PyTorch do. The module keeps one per Python thread, in the thread's state dict:
 * StreamCtx(s) makes s current inside a `with` block, set_cur_stream(s) outside one,
 * and every op the module enqueues uses it.
 *
 * As MindSpore's runtime/stream.py and runtime/event.py: Stream(priority=0, stream=None,
 * stream_id=None) (stream= and stream_id= name an existing stream: the same object comes
 * back), .id is the stream id (0 for the default stream, 1, 2, ... in creation order),
 * comparing a Stream with anything else raises TypeError, StreamCtx(None) and
 * set_cur_stream(None) do nothing, Event's flags must be bools. */
#include "hwpy.h"

#define CUR_KEY "hwrt.current_stream"

typedef struct {
    PyObject_HEAD
    hwrt_event e;
} event_obj;

typedef struct {
    PyObject_HEAD
    PyObject *stream;      /* the Stream to make current */
    PyObject *prev;        /* what was current on __enter__ (NULL: none) */
} ctx_obj;

static PyTypeObject event_type, ctx_type;

/* Live streams by id, for Stream(stream_id=N): id -> the Stream object (borrowed; the
 * entry goes when the object does). */
static PyObject *by_id;
static long long next_sid = 1;

/* ---- the thread's current stream ---- */

PyObject *hwpy_current_stream_obj(void)     /* borrowed; NULL when none was set */
{
    PyObject *d = PyThreadState_GetDict();
    return d ? PyDict_GetItemString(d, CUR_KEY) : NULL;
}

int hwpy_set_current_stream(PyObject *stream)   /* NULL clears */
{
    PyObject *d = PyThreadState_GetDict();
    if (!d) {
        PyErr_SetString(PyExc_RuntimeError, "no thread state dict");
        return -1;
    }
    if (!stream) {
        if (PyDict_GetItemString(d, CUR_KEY)) return PyDict_DelItemString(d, CUR_KEY);
        return 0;
    }
    return PyDict_SetItemString(d, CUR_KEY, stream);
}

hwrt_stream hwpy_current_stream(void)
{
    PyObject *o = hwpy_current_stream_obj();
    return o ? ((hwpy_stream_obj *)o)->s : NULL;
}

int hwpy_stream_arg(PyObject *obj, hwrt_stream *out)
{
    if (!obj || obj == Py_None) {
        *out = hwpy_current_stream();
        return 0;
    }
    if (!PyObject_TypeCheck(obj, &hwpy_stream_type)) {
        PyErr_Format(PyExc_TypeError, "stream must be an hwrt.runtime.Stream or None, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = ((hwpy_stream_obj *)obj)->s;
    return 0;
}

/* ---- Stream ---- */

static PyObject *stream_wrap(hwrt_stream s, int owned)
{
    hwpy_stream_obj *o = PyObject_New(hwpy_stream_obj, &hwpy_stream_type);
    if (!o) {
        if (owned) hwrt_stream_destroy(s);
        return NULL;
    }
    o->s = s;
    o->owned = owned;
    o->sid = 0;
    if (owned) {
        hwpy_device_used = 1;
        o->sid = next_sid++;
        PyObject *key = PyLong_FromLongLong(o->sid), *ptr = PyLong_FromVoidPtr(o);
        if (!key || !ptr || PyDict_SetItem(by_id, key, ptr) < 0) {
            Py_XDECREF(key);
            Py_XDECREF(ptr);
            Py_DECREF(o);
            return NULL;
        }
        Py_DECREF(key);
        Py_DECREF(ptr);
    }
    return (PyObject *)o;
}

static int int_kw(const char *name, PyObject *v, long long *out)
{
    if (!PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "For 'Stream', the '%s' must be int, but got '%.100s'", name,
                     Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyLong_AsLongLong(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *default_stream(PyObject *m, PyObject *unused);

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"priority", "stream", "stream_id", NULL};
    PyObject *prio = NULL, *other = Py_None, *sid = NULL;
    long long priority = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$OO:Stream", kwlist, &prio, &other, &sid) ||
        (prio && int_kw("priority", prio, &priority) < 0))
        return NULL;
    if (other != Py_None) {                  /* Stream(stream=s): that stream */
        if (!PyObject_TypeCheck(other, &hwpy_stream_type))
            return PyErr_Format(PyExc_TypeError, "For 'Stream', the 'stream' must be a Stream, "
                                "but got '%.100s'", Py_TYPE(other)->tp_name);
        return Py_NewRef(other);
    }
    if (sid && sid != Py_None) {             /* Stream(stream_id=N): the live stream N */
        long long n;
        if (int_kw("stream_id", sid, &n) < 0) return NULL;
        if (n == 0) return default_stream(NULL, NULL);
        PyObject *ptr = PyDict_GetItemWithError(by_id, sid);
        if (!ptr) {
            if (PyErr_Occurred()) return NULL;
            return PyErr_Format(PyExc_ValueError, "For 'Stream', stream_id %lld is no live stream "
                                "(ids: 0 for the default stream, then those of Streams made and "
                                "not yet dropped)", n);
        }
        return Py_NewRef((PyObject *)PyLong_AsVoidPtr(ptr));
    }
    if (priority < -(1LL << 30) || priority > (1LL << 30))
        return PyErr_Format(PyExc_ValueError, "For 'Stream', priority %lld is out of range",
                            priority);
    hwrt_stream s;
    hwrt_status st = hwrt_stream_create(&s, (int)priority);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return stream_wrap(s, 1);
}

static void stream_dealloc(PyObject *self)
{
    hwpy_stream_obj *o = (hwpy_stream_obj *)self;
    if (o->sid) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyObject *key = PyLong_FromLongLong(o->sid);
        if (!key || PyDict_DelItem(by_id, key) < 0) PyErr_Clear();
        Py_XDECREF(key);
        PyErr_Restore(et, ev, tb);
    }
    if (o->owned && o->s) {
        hwrt_stream s = o->s;
        Py_BEGIN_ALLOW_THREADS
        hwrt_stream_destroy(s);           /* waits for the stream's queued work */
        Py_END_ALLOW_THREADS
    }
    o->s = NULL;
    Py_TYPE(self)->tp_free(self);
}

#define CALL_NOGIL(call)                                                                    \
    do {                                                                                    \
        hwrt_status st_;                                                                    \
        Py_BEGIN_ALLOW_THREADS                                                              \
        st_ = (call);                                                                       \
        Py_END_ALLOW_THREADS                                                                \
        if (st_ != HWRT_SUCCESS) return hwpy_raise(st_);                                    \
    } while (0)

static PyObject *stream_synchronize(PyObject *self, PyObject *unused)
{
    CALL_NOGIL(hwrt_stream_synchronize(((hwpy_stream_obj *)self)->s));
    Py_RETURN_NONE;
}

static PyObject *stream_query(PyObject *self, PyObject *unused)
{
    hwrt_status st = hwrt_stream_query(((hwpy_stream_obj *)self)->s);
    if (st == HWRT_SUCCESS) Py_RETURN_TRUE;
    if (st == HWRT_ERROR_NOT_READY) Py_RETURN_FALSE;
    return hwpy_raise(st);
}

static PyObject *stream_wait_event(PyObject *self, PyObject *ev)
{
    if (!PyObject_TypeCheck(ev, &event_type))
        return PyErr_Format(PyExc_TypeError, "For 'wait_event', the argument 'event' should be "
                            "Event, but got %R.", (PyObject *)Py_TYPE(ev));
    hwrt_status st = hwrt_stream_wait_event(((hwpy_stream_obj *)self)->s, ((event_obj *)ev)->e);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *event_make(int timing);

static PyObject *stream_record_event(PyObject *self, PyObject *args)
{
    PyObject *ev = Py_None;
    if (!PyArg_ParseTuple(args, "|O:record_event", &ev)) return NULL;
    if (ev == Py_None) {
        ev = event_make(0);
        if (!ev) return NULL;
    } else if (!PyObject_TypeCheck(ev, &event_type)) {
        return PyErr_Format(PyExc_TypeError, "For 'record_event', the argument 'event' should be "
                            "Event, but got %R.", (PyObject *)Py_TYPE(ev));
    } else {
        Py_INCREF(ev);
    }
    hwrt_status st = hwrt_event_record(((event_obj *)ev)->e, ((hwpy_stream_obj *)self)->s);
    if (st != HWRT_SUCCESS) { Py_DECREF(ev); return hwpy_raise(st); }
    return ev;
}

/* s.wait_stream(other): work queued on s later waits for other's work queued so far. */
static PyObject *stream_wait_stream(PyObject *self, PyObject *other)
{
    if (!PyObject_TypeCheck(other, &hwpy_stream_type))
        return PyErr_Format(PyExc_TypeError, "For 'wait_stream', the argument 'stream' should be "
                            "Stream, but got %R.", (PyObject *)Py_TYPE(other));
    PyObject *ev = event_make(0);
    if (!ev) return NULL;
    hwrt_status st = hwrt_event_record(((event_obj *)ev)->e, ((hwpy_stream_obj *)other)->s);
    if (st == HWRT_SUCCESS)
        st = hwrt_stream_wait_event(((hwpy_stream_obj *)self)->s, ((event_obj *)ev)->e);
    Py_DECREF(ev);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *stream_get_id(PyObject *self, void *c)
{
    return PyLong_FromLongLong(((hwpy_stream_obj *)self)->sid);
}

static PyObject *stream_stream_id(PyObject *self, PyObject *unused)
{
    return stream_get_id(self, NULL);
}

static PyObject *stream_get_device_id(PyObject *self, void *c)
{
    int d;
    hwrt_status st = hwrt_stream_device(((hwpy_stream_obj *)self)->s, &d);
    return st == HWRT_SUCCESS ? PyLong_FromLong(d) : hwpy_raise(st);
}

static PyObject *stream_richcompare(PyObject *a, PyObject *b, int op)
{
    if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
    if (!PyObject_TypeCheck(b, &hwpy_stream_type))        /* stream.py __eq__ */
        return PyErr_Format(PyExc_TypeError, "For '__eq__', the argument 'other' should be "
                            "Stream, but got %R.", (PyObject *)Py_TYPE(b));
    int eq = ((hwpy_stream_obj *)a)->s == ((hwpy_stream_obj *)b)->s;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t stream_hash(PyObject *self)
{
    return _Py_HashPointer(((hwpy_stream_obj *)self)->s);
}

static PyObject *stream_repr(PyObject *self)
{
    hwpy_stream_obj *o = (hwpy_stream_obj *)self;
    int d = 0;
    hwrt_stream_device(o->s, &d);
    return PyUnicode_FromFormat("Stream(device_name=%s, device_id:%d, stream id:%lld)",
                                hwpy_context_target(), d, o->sid);
}

static PyMethodDef stream_methods[] = {
    {"synchronize", stream_synchronize, METH_NOARGS, "synchronize($self, /)\n--\n\n"
     "Block until the work queued so far is done."},
    {"query", stream_query, METH_NOARGS, "query($self, /)\n--\n\n"
     "True when the stream is idle."},
    {"wait_event", stream_wait_event, METH_O, "wait_event($self, event, /)\n--\n\n"
     "Later work waits for the event's last record."},
    {"wait_stream", stream_wait_stream, METH_O, "wait_stream($self, stream, /)\n--\n\n"
     "Later work waits for the other stream's work so far."},
    {"record_event", stream_record_event, METH_VARARGS, "record_event($self, event=None, /)\n--\n\n"
     "Returns Event"},
    {"stream_id", stream_stream_id, METH_NOARGS, "stream_id($self, /)\n--\n\n"
     "The stream id (the same as .id)."},
    {NULL}};

static PyGetSetDef stream_getset[] = {
    {"id", stream_get_id, NULL, "the stream id: 0 for the default stream, then 1, 2, ...", NULL},
    {"device_id", stream_get_device_id, NULL, "device ordinal", NULL},
    {NULL}};

PyTypeObject hwpy_stream_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hwrt.runtime.Stream",
    .tp_basicsize = sizeof(hwpy_stream_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Stream(priority=0, *, stream=None, stream_id=None)\n--\n\n"
              "An in-order queue of device work on the current device. Dropping it waits for its "
              "queued work.",
    .tp_new = stream_new,
    .tp_dealloc = stream_dealloc,
    .tp_methods = stream_methods,
    .tp_getset = stream_getset,
    .tp_richcompare = stream_richcompare,
    .tp_hash = stream_hash,
    .tp_repr = stream_repr,
};

/* ---- Event ---- */

static PyObject *event_make(int timing)
{
    hwrt_event e;
    hwrt_status st = hwrt_event_create(&e, timing ? HWRT_EVENT_DEFAULT : HWRT_EVENT_DISABLE_TIMING);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    event_obj *o = PyObject_New(event_obj, &event_type);
    if (!o) { hwrt_event_destroy(e); return NULL; }
    o->e = e;
    hwpy_device_used = 1;
    return (PyObject *)o;
}

static PyObject *event_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"enable_timing", "blocking", NULL};
    PyObject *timing = Py_False, *blocking = Py_False;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:Event", kwlist, &timing, &blocking))
        return NULL;
    if (!PyBool_Check(timing))                 /* runtime/event.py */
        return PyErr_Format(PyExc_TypeError, "For 'Event', the 'enable_timing' must be a bool, "
                            "but got %.100s.", Py_TYPE(timing)->tp_name);
    if (!PyBool_Check(blocking))
        return PyErr_Format(PyExc_TypeError, "For 'Event', the 'blocking' must be a bool, but got "
                            "%.100s.", Py_TYPE(blocking)->tp_name);
    return event_make(timing == Py_True);   /* hwrt's synchronize waits the same way either way */
}

static void event_dealloc(PyObject *self)
{
    event_obj *o = (event_obj *)self;
    if (o->e) hwrt_event_destroy(o->e);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *event_record(PyObject *self, PyObject *args)
{
    PyObject *so = Py_None;
    hwrt_stream s;
    if (!PyArg_ParseTuple(args, "|O:record", &so) || hwpy_stream_arg(so, &s) < 0) return NULL;
    hwrt_status st = hwrt_event_record(((event_obj *)self)->e, s);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *event_wait(PyObject *self, PyObject *args)
{
    PyObject *so = Py_None;
    hwrt_stream s;
    if (!PyArg_ParseTuple(args, "|O:wait", &so) || hwpy_stream_arg(so, &s) < 0) return NULL;
    hwrt_status st = hwrt_stream_wait_event(s, ((event_obj *)self)->e);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *event_synchronize(PyObject *self, PyObject *unused)
{
    CALL_NOGIL(hwrt_event_synchronize(((event_obj *)self)->e));
    Py_RETURN_NONE;
}

static PyObject *event_query(PyObject *self, PyObject *unused)
{
    hwrt_status st = hwrt_event_query(((event_obj *)self)->e);
    if (st == HWRT_SUCCESS) Py_RETURN_TRUE;
    if (st == HWRT_ERROR_NOT_READY) Py_RETURN_FALSE;
    return hwpy_raise(st);
}

static PyObject *event_elapsed_time(PyObject *self, PyObject *end)
{
    if (!PyObject_TypeCheck(end, &event_type))
        return PyErr_Format(PyExc_TypeError, "For 'elapsed_time', the argument 'end_event' should "
                            "be Event, but got %R.", (PyObject *)Py_TYPE(end));
    float ms;
    hwrt_status st = hwrt_event_elapsed_ms(&ms, ((event_obj *)self)->e, ((event_obj *)end)->e);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return PyFloat_FromDouble(ms);
}

static PyMethodDef event_methods[] = {
    {"record", event_record, METH_VARARGS, "record($self, stream=None, /)\n--\n\n"
     "Capture the stream's work so far."},
    {"wait", event_wait, METH_VARARGS, "wait($self, stream=None, /)\n--\n\n"
     "The stream's later work waits for this event."},
    {"synchronize", event_synchronize, METH_NOARGS, "synchronize($self, /)\n--\n\n"
     "Block until the recorded work is done."},
    {"query", event_query, METH_NOARGS, "query($self, /)\n--\n\n"
     "True when the recorded work is done (or never recorded)."},
    {"elapsed_time", event_elapsed_time, METH_O,
     "elapsed_time($self, end_event, /)\n--\n\n"
     "Returns ms of device time between this record and end_event's (both need "
     "enable_timing=True)."},
    {NULL}};

static PyTypeObject event_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hwrt.runtime.Event",
    .tp_basicsize = sizeof(event_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Event(enable_timing=False, blocking=False)\n--\n\n"
              "A marker in a stream.",
    .tp_new = event_new,
    .tp_dealloc = event_dealloc,
    .tp_methods = event_methods,
};

/* ---- StreamCtx ---- */

static PyObject *ctx_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"ctx_stream", NULL};
    PyObject *s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:StreamCtx", kwlist, &s)) return NULL;
    if (s != Py_None && !PyObject_TypeCheck(s, &hwpy_stream_type))
        return PyErr_Format(PyExc_TypeError, "For 'StreamCtx', the argument 'ctx_stream' should be "
                            "Stream, but got %R.", (PyObject *)Py_TYPE(s));
    ctx_obj *o = (ctx_obj *)type->tp_alloc(type, 0);
    if (!o) return NULL;
    o->stream = Py_NewRef(s);
    o->prev = NULL;
    return (PyObject *)o;
}

static void ctx_dealloc(PyObject *self)
{
    ctx_obj *o = (ctx_obj *)self;
    Py_XDECREF(o->stream);
    Py_XDECREF(o->prev);
    Py_TYPE(self)->tp_free(self);
}

/* StreamCtx(None) does nothing (stream.py: "This manager is a no-op if it's None"). */
static PyObject *ctx_enter(PyObject *self, PyObject *unused)
{
    ctx_obj *o = (ctx_obj *)self;
    if (o->stream == Py_None) Py_RETURN_NONE;
    Py_XSETREF(o->prev, Py_XNewRef(hwpy_current_stream_obj()));
    if (hwpy_set_current_stream(o->stream == Py_None ? NULL : o->stream) < 0) return NULL;
    return Py_NewRef(o->stream);
}

static PyObject *ctx_exit(PyObject *self, PyObject *args)
{
    ctx_obj *o = (ctx_obj *)self;
    if (o->stream == Py_None) Py_RETURN_FALSE;
    int rc = hwpy_set_current_stream(o->prev);
    Py_CLEAR(o->prev);
    if (rc < 0) return NULL;
    Py_RETURN_FALSE;
}

static PyMethodDef ctx_methods[] = {
    {"__enter__", ctx_enter, METH_NOARGS, "__enter__($self, /)\n--\n\n"
     "Make the stream current for this thread."},
    {"__exit__", ctx_exit, METH_VARARGS, "__exit__($self, /, *args)\n--\n\n"
     "Restore the previous current stream."},
    {NULL}};

static PyTypeObject ctx_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hwrt.runtime.StreamCtx",
    .tp_basicsize = sizeof(ctx_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "StreamCtx(ctx_stream)\n--\n\n"
              "`with StreamCtx(s):` makes s the current stream of this thread; ops created inside "
              "run on it.",
    .tp_new = ctx_new,
    .tp_dealloc = ctx_dealloc,
    .tp_methods = ctx_methods,
};

/* ---- functions ---- */

static PyObject *default_stream(PyObject *m, PyObject *unused)
{
    hwrt_stream s;
    hwrt_status st = hwrt_stream_default(&s);
    if (st != HWRT_SUCCESS) return hwpy_raise(st);
    return stream_wrap(s, 0);
}

static PyObject *current_stream(PyObject *m, PyObject *unused)
{
    PyObject *o = hwpy_current_stream_obj();
    return o ? Py_NewRef(o) : default_stream(m, NULL);
}

/* set_cur_stream(None) does nothing (stream.py: "a no-op if this argument is None"). */
static PyObject *set_cur_stream(PyObject *m, PyObject *s)
{
    if (s == Py_None) Py_RETURN_NONE;
    if (!PyObject_TypeCheck(s, &hwpy_stream_type))
        return PyErr_Format(PyExc_TypeError, "For 'set_cur_stream', the argument 'stream' should "
                            "be Stream, but got %R.", (PyObject *)Py_TYPE(s));
    if (hwpy_set_current_stream(s) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *synchronize_stream(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", NULL};
    PyObject *so = Py_None;
    hwrt_stream s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:synchronize_stream", kwlist, &so) ||
        hwpy_stream_arg(so, &s) < 0)
        return NULL;
    CALL_NOGIL(hwrt_stream_synchronize(s));
    Py_RETURN_NONE;
}

PyMethodDef hwpy_stream_functions[] = {
    {"current_stream", current_stream, METH_NOARGS,
     "current_stream($module, /)\n--\n\n"
     "The stream ops use now: the innermost StreamCtx's, else the default stream."},
    {"default_stream", default_stream, METH_NOARGS, "default_stream($module, /)\n--\n\n"
     "The current device's default stream."},
    {"set_cur_stream", set_cur_stream, METH_O, "set_cur_stream($module, stream, /)\n--\n\n"
     "Make a stream current for this thread (None: no-op, as in MindSpore)."},
    {"synchronize_stream", (PyCFunction)(void (*)(void))synchronize_stream,
     METH_VARARGS | METH_KEYWORDS,
     "synchronize_stream($module, stream=None)\n--\n\n"
     "Block until the work queued on the stream (default: the current stream) is done."},
    {NULL}};

int hwpy_stream_init(PyObject *module, PyObject *runtime)
{
    by_id = PyDict_New();
    if (!by_id || PyType_Ready(&hwpy_stream_type) < 0 || PyType_Ready(&event_type) < 0 ||
        PyType_Ready(&ctx_type) < 0)
        return -1;
    PyObject *targets[2] = {module, runtime};
    for (int i = 0; i < 2; i++)
        if (PyModule_AddObjectRef(targets[i], "Stream", (PyObject *)&hwpy_stream_type) < 0 ||
            PyModule_AddObjectRef(targets[i], "Event", (PyObject *)&event_type) < 0 ||
            PyModule_AddObjectRef(targets[i], "StreamCtx", (PyObject *)&ctx_type) < 0)
            return -1;
    return 0;
}
