/* Checked, pinned handles. A public handle (hwrt_stream, hwrt_event, hwrt_tensor, ...) is
 * an encoded slot index + generation + type, never a pointer the caller could make us
 * dereference: a destroyed, foreign or made-up handle is detected, not followed.
 *
 * Lifetime (docs/RELIABILITY.md, "Handle lifetime"): each slot counts references, one
 * for the handle itself and one per call using the object. A call resolves a handle with
 * hwi_handle_acquire, which pins the object, and drops the pin with hwi_handle_put when it
 * is done with the object. Destroying a handle (hwi_handle_kill) makes later acquires
 * fail at once; the object itself goes (its type's destructor runs) when the last pin is
 * put, on whichever thread puts it. A slot whose generation is about to wrap is retired,
 * never reused, so a stale handle can never name a later object. */
#ifndef HWI_HANDLE_H
#define HWI_HANDLE_H

#include "hwrt.h"

#include <stdint.h>

typedef enum hwi_htype {
    HWI_H_STREAM = 1,
    HWI_H_EVENT = 2,
    HWI_H_TENSOR = 3,
    HWI_H_GRAPH = 4,
    HWI_H_OTHER = 5,
} hwi_htype;

#define HWI_H_TYPES 8

/* Frees the object of a handle after its last reference went; its status is returned by
 * the hwi_handle_put (or hwi_handle_kill) that dropped it. */
typedef hwrt_status (*hwi_handle_dtor)(void *obj);
/* Set the destructor of a type (before its first hwi_handle_new; setting it again with
 * the same function is a no-op). */
void hwi_handle_set_dtor(hwi_htype type, hwi_handle_dtor fn);

/* Register obj with one reference (the handle's); returns the handle value (NULL when
 * the table is full: 16M live handles). */
void *hwi_handle_new(hwi_htype type, void *obj);
/* The object behind h, pinned (it outlives a concurrent destroy until hwi_handle_put),
 * or NULL if h is not a live handle of that type. */
void *hwi_handle_acquire(const void *h, hwi_htype type);
/* One more pin on an object the caller already has pinned (a graph keeping a tensor). */
void hwi_handle_pin(const void *h);
/* Drop a pin taken by hwi_handle_acquire/hwi_handle_pin (h may be dead by now). The last
 * reference runs the destructor here; its status is returned, else HWRT_SUCCESS. */
hwrt_status hwi_handle_put(const void *h);
/* Destroy the handle: later acquires fail, the handle's reference is dropped (the
 * destructor runs when the last pin goes; if that is here, *st gets its status). Returns
 * 1 if this call destroyed it, 0 if it was not live (a concurrent destroy won). */
int hwi_handle_kill(const void *h, hwi_htype type, hwrt_status *st);
/* 1 if h is a live handle of that type right now (no pin: for diagnostics only). */
int hwi_handle_live(const void *h, hwi_htype type);
/* Destroy every live handle of a type (hwrt_shutdown: handles from before it must be
 * stale afterwards, not dangling) and call fn(obj), outside the table lock, for each one
 * no call had pinned; a pinned one is destroyed by its type's destructor when its last
 * call ends. Returns how many handles there were. */
uint64_t hwi_handle_drain(hwi_htype type, void (*fn)(void *obj));

#endif
