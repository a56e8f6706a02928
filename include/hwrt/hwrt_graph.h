/* hwrt public API — graph capture and replay (the GRAPH-mode analogue). Include <hwrt.h>.
 *
 * Work queued on a capturing stream is recorded instead of run; hwrt_stream_end_capture
 * turns the record into a graph that hwrt_graph_launch replays on any stream of the same
 * device, skipping per-op validation and bookkeeping (cheaper per op than eager launch).
 *
 *   hwrt_graph g;
 *   hwrt_stream_begin_capture(s);
 *   hwrt_op_matmul(y, x, w, s);  hwrt_op_relu(y, y, s);      // recorded, not run
 *   hwrt_stream_end_capture(s, &g);
 *   for (int step = 0; step < n; step++) hwrt_graph_launch(g, s);
 *   hwrt_graph_destroy(g);
 *
 * Inside a capture (on the capturing stream, or on the thread that began it) every host
 * synchronization or host read — hwrt_tensor_copy_to_host, hwrt_tensor_copy_from_host,
 * hwrt_tensor_from_host, hwrt_memcpy, hwrt_stream_synchronize, hwrt_device_synchronize,
 * hwrt_event_synchronize — fails with HWRT_ERROR_NOT_PERMITTED and a sentence naming the
 * call; the call has no effect and the capture goes on. Copies from pageable host memory
 * cannot be captured either (they block the caller): use hwrt_host_alloc(...,
 * HWRT_HOST_PINNED). An error never leaves the stream capturing after end_capture.
 *
 * Tensors used by captured ops are retained by the graph until hwrt_graph_destroy, so
 * replays never touch freed memory, and hwrt_tensor_copy_to_host stays ordered after a
 * replay that wrote the tensor. Raw device pointers (hwrt_malloc) must stay allocated:
 * a launch checks them and fails with INVALID_ARGUMENT if one was freed. */
#ifndef HWRT_GRAPH_H
#define HWRT_GRAPH_H

#include "hwrt_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwrt_graph_s *hwrt_graph;

/* Start recording the work queued on s (NULL: the current device's default stream).
 * Non-blocking. Errors: NOT_PERMITTED if s is already capturing; INVALID_HANDLE. */
HWRT_API hwrt_status hwrt_stream_begin_capture(hwrt_stream s);

/* Stop recording on s and return the recorded work as a graph in *g (an empty capture
 * gives a valid graph of 0 nodes). Once s was capturing, it is eager again after this
 * call whatever the outcome. Non-blocking. Errors: NOT_PERMITTED if s is not capturing;
 * INVALID_ARGUMENT for a NULL g (nothing changes: the capture goes on);
 * HOST_OUT_OF_MEMORY if recording ran out of host memory (the capture is dropped,
 * *g = NULL). */
HWRT_API hwrt_status hwrt_stream_end_capture(hwrt_stream s, hwrt_graph *g);

/* Enqueue every node of g on s, in capture order (s may differ from the capture stream
 * but must be on the same device). Non-blocking unless launch_blocking is on. Launching
 * into a capturing stream records the nodes into that capture.
 * Errors: INVALID_HANDLE (g or s), INVALID_ARGUMENT (other device; a raw device block or
 * an event used by the graph was freed/destroyed since capture), DEVICE_FAULT with
 * launch_blocking. */
HWRT_API hwrt_status hwrt_graph_launch(hwrt_graph g, hwrt_stream s);

/* Number of nodes (recorded work items) of g. */
HWRT_API hwrt_status hwrt_graph_node_count(hwrt_graph g, size_t *count);

/* Release g and the tensor references it holds. Launches already queued still run (the
 * tensors' memory is reused only after them). Not to be called while another thread is
 * inside hwrt_graph_launch(g, ...). Errors: INVALID_HANDLE. */
HWRT_API hwrt_status hwrt_graph_destroy(hwrt_graph g);

#ifdef __cplusplus
}
#endif
#endif /* HWRT_GRAPH_H */
