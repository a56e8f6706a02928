/* Allocation events (see mem_events.h). */
#include "mem_events.h"

#include <stdatomic.h>

static _Atomic(hwi_mem_event_fn) observer;

void hwi_mem_events_set(hwi_mem_event_fn fn) { atomic_store(&observer, fn); }

int hwi_mem_events_active(void)
{
    return atomic_load_explicit(&observer, memory_order_relaxed) != NULL;
}

void hwi_mem_event(hwi_mem_event_kind kind, int device, const void *ptr, size_t bytes,
                   size_t allocated, size_t reserved)
{
    hwi_mem_event_fn fn = atomic_load_explicit(&observer, memory_order_acquire);
    if (fn)
        fn(kind, device, ptr, bytes, allocated, reserved);
}
