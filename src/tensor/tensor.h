/* Tensors as the op front-end, DLPack and offload see them. */
#ifndef HWI_TENSOR_H
#define HWI_TENSOR_H

#include "../exec/dispatch.h"

#include <pthread.h>
#include <stdatomic.h>

#define HWI_TENSOR_STREAMS 4

typedef struct hwi_tensor {
    hwrt_tensor handle;
    _Atomic int refs;                 /* hwrt_tensor_retain/release; 0: the handle is dead */
    hwrt_dtype dtype;
    int ndim;
    int64_t shape[HWRT_MAX_DIMS];
    int64_t numel;
    size_t nbytes;
    int device;
    void *data;                       /* device pointer (NULL for an empty tensor) */
    DLManagedTensorVersioned *ext;    /* imported DLPack owner, NULL if hwrt allocated */
    pthread_mutex_t mu;
    /* streams that wrote / used the tensor since the last host-visible point, as
     * handles (a destroyed stream was synchronized, so it simply drops out) */
    hwrt_stream writers[HWI_TENSOR_STREAMS];
    int nwriters;
    hwrt_stream users[HWI_TENSOR_STREAMS];
    int nusers;
    int overflow;                     /* more streams than slots: sync the device */
    void *_Atomic offload;            /* residency state (src/offload), NULL if resident only;
                                       * set under the manager lock, read without it */
} hwi_tensor;

/* The live tensor behind h, pinned until hwi_tensor_put (runtime/handle.h): a concurrent
 * last hwrt_tensor_release frees it only after the caller is done. */
hwrt_status hwi_tensor_resolve(hwrt_tensor h, hwi_tensor **out);
void hwi_tensor_put(hwi_tensor *t);
static inline void hwi_tensor_unpin(hwi_tensor **t) { hwi_tensor_put(*t); }
/* A local that holds a resolved tensor and puts it when it goes out of scope. */
#define HWI_TENSOR_REF(v) hwi_tensor *v __attribute__((cleanup(hwi_tensor_unpin))) = NULL
/* Make a tensor around device memory it does not own (DLPack import). */
hwrt_status hwi_tensor_wrap(hwrt_dtype dt, int ndim, const int64_t *shape, int device,
                            void *data, DLManagedTensorVersioned *owner, hwrt_tensor *out);
/* Record that stream s wrote (write=1) or read t. */
void hwi_tensor_note_use(hwi_tensor *t, hwi_stream *s, int write);
/* Wait on the host until every stream that wrote t (write_only) or used t is done. */
hwrt_status hwi_tensor_wait(hwi_tensor *t, int write_only, const char *api);
/* The same, except for stream `except` (work queued after it on that stream is ordered). */
hwrt_status hwi_tensor_wait_except(hwi_tensor *t, int write_only, const hwi_stream *except,
                                   const char *api);

#endif
