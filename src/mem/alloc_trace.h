/* HWRT_ALLOC_TRACE=file.csv: every device allocation, free and tag of the process, in
 * hwrt-bench pool's trace format, so that `hwrt-bench pool --min-capacity file.csv`
 * finds the smallest device the workload fits on (docs/memory.md). The pool calls these
 * under its lock, so each device's rows are in its pool's own order; while a trace is open the
 * thread cache is off (every event takes the locked path). */
#ifndef HWI_ALLOC_TRACE_H
#define HWI_ALLOC_TRACE_H

#include "../runtime/runtime.h"

#include <stdatomic.h>
#include <stddef.h>

extern _Atomic int hwi_alloc_trace_on;       /* 1 while a trace file is open */
static inline int hwi_alloc_trace_active(void)
{
    return atomic_load_explicit(&hwi_alloc_trace_on, memory_order_relaxed);
}

/* Open the file HWRT_ALLOC_TRACE names, once per runtime session (the first session of
 * the process truncates it and writes the header, later ones append). A file that
 * cannot be opened safely (a symbolic link, not a regular file, no permission) is
 * refused with a warning on stderr; the program runs on without a trace. */
void hwi_alloc_trace_open(void);
/* Rows: owner is the stream the block was allocated for, on is the stream of the free
 * (the last stream recorded on the block, else its owner). */
void hwi_alloc_trace_alloc(int device, const void *p, size_t requested, hwrt_bstream *owner);
void hwi_alloc_trace_free(int device, const void *p, hwrt_bstream *on, const char *tag);
void hwi_alloc_trace_tag(int device, const void *p, hwrt_bstream *owner, const char *tag);
/* A destroyed stream's index may be given to a later stream. */
void hwi_alloc_trace_stream_gone(hwrt_bstream *bs);
/* Flush and close (hwrt_shutdown, after the live blocks' free rows). */
void hwi_alloc_trace_close(void);

#endif
