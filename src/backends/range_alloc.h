/* First-fit allocator of offsets in a reserved address range, shared by backends whose
 * device memory is carved out of one reservation (sim's arena, OpenCL's address range
 * that maps back to buffers). Not thread-safe: callers hold their device's lock. */
#ifndef HWI_RANGE_ALLOC_H
#define HWI_RANGE_ALLOC_H

#include <stddef.h>

typedef struct hwi_range_alloc {
    struct hwi_range { size_t off, len; } *free;   /* free ranges, sorted by offset */
    int n, cap;
} hwi_range_alloc;

/* All of [0, len) free. Returns 0 when out of host memory. */
int hwi_range_init(hwi_range_alloc *r, size_t len);
void hwi_range_destroy(hwi_range_alloc *r);
/* Take len bytes (first fit); 1 and *off, or 0 when no free range is large enough. */
int hwi_range_take(hwi_range_alloc *r, size_t len, size_t *off);
/* Give [off, off+len) back, merging with its neighbours; 0 when out of host memory. */
int hwi_range_give(hwi_range_alloc *r, size_t off, size_t len);

#endif
