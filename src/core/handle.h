/* Checked handles. A public handle (hwrt_stream, hwrt_event, hwrt_tensor, ...) is an
 * encoded slot index + generation + type, never a pointer the caller could make us
 * dereference: a destroyed, foreign or made-up handle is detected, not followed. */
#ifndef HWI_HANDLE_H
#define HWI_HANDLE_H

#include <stdint.h>

typedef enum hwi_htype {
    HWI_H_STREAM = 1,
    HWI_H_EVENT = 2,
    HWI_H_TENSOR = 3,
    HWI_H_GRAPH = 4,
    HWI_H_OTHER = 5,
} hwi_htype;

/* Register obj; returns the handle value (NULL when the table is full: 16M handles). */
void *hwi_handle_new(hwi_htype type, void *obj);
/* The object behind h, or NULL if h is not a live handle of that type. */
void *hwi_handle_get(const void *h, hwi_htype type);
/* Invalidate h (later lookups fail); returns the object or NULL if h was not live. */
void *hwi_handle_free(const void *h, hwi_htype type);
/* Invalidate every live handle of a type and call fn(obj) for each, outside the table
 * lock (hwrt_shutdown: handles from before it must be stale afterwards, not dangling).
 * Returns how many there were. */
uint64_t hwi_handle_drain(hwi_htype type, void (*fn)(void *obj));

#endif
