/* Graphs: the recorded work of a capture, replayed on a stream. A replay skips the op
 * front-end (handle checks, shape checks, per-tensor bookkeeping per op) and the dispatch
 * hooks: it checks the graph's pointers and events once, submits the node array straight
 * to the backend, then updates the retained tensors once. When a hook must see every op
 * (sync checker on, launch_blocking on, a profiling session recording, replay into a
 * capturing stream) it goes op by op through hwi_dispatch instead. */
#include "capture.h"
#include "event.h"
#include "../base/config.h"
#include "../runtime/handle.h"
#include "../base/status.h"
#include "../mem/host_mem.h"
#include "../mem/pool.h"

#include <stdlib.h>

static pthread_mutex_t list_mu = PTHREAD_MUTEX_INITIALIZER;
static hwi_graph **live;
static size_t nlive, cap_live;

void hwi_graph_free(hwi_graph *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->nkeep; i++)
        g->keeps[i].ops->release(g->keeps[i].obj);
    free(g->keeps);
    free(g->nodes);
    free(g->events);
    free(g->ptrs);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* The last reference went: the handle was destroyed and no launch uses the graph. */
static hwrt_status graph_dtor(void *obj)
{
    hwi_graph *g = obj;
    pthread_mutex_lock(&list_mu);
    for (size_t i = 0; i < nlive; i++)
        if (live[i] == g) { live[i] = live[--nlive]; break; }
    pthread_mutex_unlock(&list_mu);
    hwi_graph_free(g);
    return HWRT_SUCCESS;
}

static hwrt_status shutdown_graphs(void)
{
    hwi_capture_abort_all();
    pthread_mutex_lock(&list_mu);
    hwi_graph **list = live;
    size_t n = nlive;
    live = NULL;
    nlive = cap_live = 0;
    pthread_mutex_unlock(&list_mu);
    for (size_t i = 0; i < n; i++)
        hwi_handle_kill(list[i]->handle, HWI_H_GRAPH, NULL);     /* graph_dtor frees it */
    free(list);
    return HWRT_SUCCESS;
}

hwrt_status hwi_graph_publish(hwi_graph *g)
{
    pthread_mutex_lock(&list_mu);
    if (nlive == cap_live) {
        size_t nc = cap_live ? cap_live * 2 : 16;
        hwi_graph **nl = realloc(live, nc * sizeof *nl);
        if (nl) { live = nl; cap_live = nc; }
    }
    int ok = nlive < cap_live;
    hwi_handle_set_dtor(HWI_H_GRAPH, graph_dtor);
    if (ok) g->handle = hwi_handle_new(HWI_H_GRAPH, g);
    ok = ok && g->handle;
    if (ok) live[nlive++] = g;
    pthread_mutex_unlock(&list_mu);
    if (!ok) {
        hwi_graph_free(g);
        return hwi_err(HWRT_ERROR_HOST_OUT_OF_MEMORY, "hwrt_stream_end_capture: host out of "
                       "memory for the graph handle; the stream is eager again");
    }
    hwi_on_shutdown(20, shutdown_graphs);
    return HWRT_SUCCESS;
}

static void graph_unpin(hwi_graph **g)
{
    if (*g) hwi_handle_put((*g)->handle);
}
/* A local that holds a resolved (pinned) graph and puts it when it goes out of scope. */
#define GRAPH_REF(v) hwi_graph *v __attribute__((cleanup(graph_unpin))) = NULL

/* The live graph behind h, pinned (runtime/handle.h). */
static hwrt_status resolve(hwrt_graph h, hwi_graph **out)
{
    hwi_graph *g = hwi_handle_acquire(h, HWI_H_GRAPH);
    if (!g)
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "graph handle %p is not a live graph "
                       "(destroyed, NULL, or not from hwrt_stream_end_capture)", (void *)h);
    *out = g;
    return HWRT_SUCCESS;
}

static void put_events(hwi_graph *g, size_t upto)
{
    for (size_t i = 0; i < upto; i++)
        if (g->events[i]) hwi_event_put(g->nodes[i].u.event.ev);
}

/* Every pointer and event the nodes use must still exist: a replay into freed memory
 * would corrupt whoever owns it now. One lookup per distinct pointer, not per node. The
 * events come pinned for the launch (put_events after it). */
static hwrt_status check_inputs(hwi_graph *g)
{
    for (size_t i = 0; i < g->nptr; i++) {
        const hwi_graph_ptr *p = &g->ptrs[i];
        hwi_block_info b;
        int ok = p->host ? hwi_host_is_pinned(p->p, p->bytes) : hwi_pool_find(p->p, p->bytes, &b);
        if (!ok)
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_graph_launch: %s pointer %p used "
                           "by the graph (device %d) was freed after capture; keep buffers a "
                           "graph uses allocated until hwrt_graph_destroy, or capture again",
                           p->host ? "host" : "device", p->p, g->device);
    }
    for (size_t i = 0; i < g->n; i++) {
        if (!g->events[i]) continue;
        hwi_event *e = hwi_handle_acquire(g->events[i], HWI_H_EVENT);
        if (!e) {
            put_events(g, i);
            return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_graph_launch: event %p of graph "
                           "node %zu (%s) was destroyed after capture; keep it until "
                           "hwrt_graph_destroy", g->events[i], i, g->nodes[i].name);
        }
        g->nodes[i].u.event.ev = e;
        if (g->nodes[i].kind == HWI_WORK_EVENT_RECORD)
            e->recorded = 1;             /* hwrt_event_elapsed_ms may use it after the launch */
    }
    return HWRT_SUCCESS;
}

static hwrt_status submit_all(hwi_graph *g, hwi_stream *s, int one_by_one)
{
    for (size_t i = 0; i < g->n; i++) {
        hwi_work *w = &g->nodes[i];
        w->stream = s;
        hwrt_status st = one_by_one ? hwi_dispatch(w) : hwi_dispatch_submit(w);
        if (st != HWRT_SUCCESS)
            return hwi_err_prefix(st, "hwrt_graph_launch: node %zu of %zu (%s) on device %d", i,
                                  g->n, w->name, s->device);
    }
    return HWRT_SUCCESS;
}

hwrt_status hwrt_graph_launch(hwrt_graph h, hwrt_stream sh)
{
    GRAPH_REF(g);
    HWI_STREAM_REF(s);
    HWI_TRY(resolve(h, &g));
    HWI_TRY(hwi_stream_resolve(sh, &s));
    if (s->device != g->device)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_graph_launch: the graph was captured "
                       "on device %d but the stream is on device %d; launch it on a stream of "
                       "device %d", g->device, s->device, g->device);
    int one_by_one = s->capture || hwi_cfg_int(HWI_CFG_CHECK_SYNC) ||
                     hwi_cfg_int(HWI_CFG_LAUNCH_BLOCKING) || hwi_dispatch_per_work();
    pthread_mutex_lock(&g->mu);
    hwrt_status st = check_inputs(g);
    if (st == HWRT_SUCCESS) {
        st = submit_all(g, s, one_by_one);
        put_events(g, g->n);
    }
    pthread_mutex_unlock(&g->mu);
    /* the tensors the graph wrote are now written by s: host reads wait for it */
    for (size_t i = 0; i < g->nkeep; i++)
        g->keeps[i].ops->on_launch(g->keeps[i].obj, s, g->keeps[i].write);
    return st;
}

hwrt_status hwrt_graph_node_count(hwrt_graph h, size_t *count)
{
    if (!count)
        return hwi_err(HWRT_ERROR_INVALID_ARGUMENT, "hwrt_graph_node_count: count is NULL");
    GRAPH_REF(g);
    HWI_TRY(resolve(h, &g));
    *count = g->n;
    return HWRT_SUCCESS;
}

/* Later calls with h fail at once; a launch in progress finishes, and the last call
 * using the graph frees it. */
hwrt_status hwrt_graph_destroy(hwrt_graph h)
{
    if (!hwi_handle_kill(h, HWI_H_GRAPH, NULL))
        return hwi_err(HWRT_ERROR_INVALID_HANDLE, "hwrt_graph_destroy(%p): not a live graph "
                       "(already destroyed?)", (void *)h);
    return HWRT_SUCCESS;
}
