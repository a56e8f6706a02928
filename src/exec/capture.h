/* Graph capture: while a stream captures, the dispatch pre hook records its work into a
 * graph instead of submitting it, and the host_sync hook forbids host-blocking calls.
 * graph.c turns the record into a launchable graph. */
#ifndef HWI_CAPTURE_H
#define HWI_CAPTURE_H

#include "dispatch.h"

#include <pthread.h>

/* Something a graph keeps alive and re-announces at each launch (a tensor: retained at
 * capture, its writer/user streams updated at launch so host reads stay ordered). */
typedef struct hwi_keep_ops {
    void (*retain)(void *obj);
    void (*release)(void *obj);
    void (*on_launch)(void *obj, hwi_stream *s, int write);
} hwi_keep_ops;

typedef struct hwi_keep {
    void *obj;
    int write;
    const hwi_keep_ops *ops;
} hwi_keep;

/* A device or pinned-host pointer the graph's nodes use: checked at each launch. */
typedef struct hwi_graph_ptr {
    const void *p;
    size_t bytes;
    int host;                    /* 1: pinned host range, 0: device pointer */
} hwi_graph_ptr;

typedef struct hwi_graph {
    void *handle;                /* hwrt_graph once ended; NULL while capturing */
    int device;
    hwi_stream *origin;          /* capturing stream (NULL once ended) */
    pthread_t owner;             /* thread that began the capture */
    hwi_work *nodes;
    void **events;               /* per node: the event handle of record/wait nodes */
    size_t n, cap;
    hwi_keep *keeps;
    size_t nkeep, cap_keep;
    hwi_graph_ptr *ptrs;
    size_t nptr, cap_ptr;
    int oom;                     /* recording ran out of host memory: drop at end */
    pthread_mutex_t mu;          /* launches of one graph are serialized */
} hwi_graph;

/* Keep obj alive in the graph being captured on s (no-op if s is not capturing). */
void hwi_capture_keep(hwi_stream *s, void *obj, int write, const hwi_keep_ops *ops);
/* 1 if the calling thread began a capture that has not ended. */
int hwi_capture_on_this_thread(void);

/* Drop every capture in progress (hwrt_shutdown); their streams become eager. */
void hwi_capture_abort_all(void);

/* graph.c */
void hwi_graph_free(hwi_graph *g);
/* Give an ended capture its handle; frees g on failure. */
hwrt_status hwi_graph_publish(hwi_graph *g);

#endif
