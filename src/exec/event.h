/* Events as the layers above the backend see them. */
#ifndef HWI_EVENT_H
#define HWI_EVENT_H

#include "dispatch.h"

struct hwi_event {
    hwrt_event handle;
    hwi_device *dev;
    int device;        /* dev->id */
    hwrt_bevent *be;
    unsigned flags;
    _Atomic int recorded;
    int internal;      /* the runtime's own (offload), not in the handle table */
};

/* The live event behind e, pinned until hwi_event_put (runtime/handle.h). */
hwrt_status hwi_event_resolve(hwrt_event e, hwi_event **out);
void hwi_event_put(hwi_event *e);
static inline void hwi_event_unpin(hwi_event **e) { hwi_event_put(*e); }
/* A local that holds a resolved event and puts it when it goes out of scope. */
#define HWI_EVENT_REF(v) hwi_event *v __attribute__((cleanup(hwi_event_unpin))) = NULL

#endif
