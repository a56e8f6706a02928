/* Host memory: page-locked (pinned) buffers and the registry that tells copies whether
 * a host range is pinned. */
#ifndef HWI_HOST_MEM_H
#define HWI_HOST_MEM_H

#include "hwrt.h"

/* 1 if [p, p+bytes) lies inside one pinned buffer from hwrt_host_alloc. */
int hwi_host_is_pinned(const void *p, size_t bytes);
/* Bytes of pinned buffers kept for reuse by the pinned host pool. */
size_t hwi_host_cached_bytes(void);

#endif
