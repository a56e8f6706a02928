/* First-fit allocator of offsets in a reserved address range, shared by backends whose
 * device memory is carved out of one reservation (sim's arena, OpenCL's address range
 * that maps back to buffers). Not thread-safe: callers hold their device's lock.
 *
 * Giving a range back never fails: free ranges are separated by taken ones, so there are
 * at most taken + 1 of them, and take reserves the free-list entry its range's give may
 * need (a take that cannot reserve it, host memory out, takes nothing). */
#ifndef HWI_RANGE_ALLOC_H
#define HWI_RANGE_ALLOC_H

#include <stddef.h>

typedef struct hwi_range_alloc {
    struct hwi_range { size_t off, len; } *free;   /* free ranges, sorted by offset */
    int n, cap;
    int taken;                                     /* ranges taken and not given back */
} hwi_range_alloc;

/* hwi_range_take's answers. */
enum { HWI_RANGE_FULL = 0, HWI_RANGE_OK = 1, HWI_RANGE_NO_HOST_MEMORY = -1 };

/* All of [0, len) free. Returns 0 when out of host memory. */
int hwi_range_init(hwi_range_alloc *r, size_t len);
void hwi_range_destroy(hwi_range_alloc *r);
/* Take len bytes (first fit): HWI_RANGE_OK and *off; HWI_RANGE_FULL when no free range is
 * large enough; HWI_RANGE_NO_HOST_MEMORY when the free list could not reserve the entry
 * the range's give may need. Both failures take nothing. */
int hwi_range_take(hwi_range_alloc *r, size_t len, size_t *off);
/* Give [off, off+len), a whole range take handed out, back, merging with its neighbours.
 * Never fails (take reserved the room). */
void hwi_range_give(hwi_range_alloc *r, size_t off, size_t len);

#endif
