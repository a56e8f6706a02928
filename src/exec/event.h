/* Events as the layers above the backend see them. */
#ifndef HWI_EVENT_H
#define HWI_EVENT_H

#include "dispatch.h"

struct hwi_event {
    hwrt_event handle;
    int device;
    hwrt_bevent *be;
    unsigned flags;
    int recorded;
    int internal;      /* the runtime's own (offload), not in the handle table */
};

hwrt_status hwi_event_resolve(hwrt_event e, hwi_event **out);

#endif
