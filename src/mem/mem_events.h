/* Allocation events for observers (the profiler). The pool reports each block it hands
 * out or takes back, with the device's figures after the change; an observer registers
 * one callback. With none registered an event costs one atomic load. */
#ifndef HWI_MEM_EVENTS_H
#define HWI_MEM_EVENTS_H

#include <stddef.h>

typedef enum hwi_mem_event_kind {
    HWI_MEM_ALLOC,       /* a block was handed out (hwrt_malloc, tensors, offload fetch) */
    HWI_MEM_FREE,        /* a block was released to the pool */
    HWI_MEM_RESERVE,     /* the pool took a segment from the device (caching pools) */
    HWI_MEM_RELEASE      /* the pool returned a segment to the device */
} hwi_mem_event_kind;

/* allocated / reserved: the device's pool figures after the change, in bytes. Called on
 * the allocating thread, outside the pool's lock; it must not call back into the pool. */
typedef void (*hwi_mem_event_fn)(hwi_mem_event_kind kind, int device, const void *ptr,
                                 size_t bytes, size_t allocated, size_t reserved);

/* Register the observer (NULL removes it). One observer at a time; the last wins. */
void hwi_mem_events_set(hwi_mem_event_fn fn);
/* 1 when an observer is registered (so the pool gathers figures only then). */
int hwi_mem_events_active(void);
/* Report an event (the pool calls this). */
void hwi_mem_event(hwi_mem_event_kind kind, int device, const void *ptr, size_t bytes,
                   size_t allocated, size_t reserved);

#endif
