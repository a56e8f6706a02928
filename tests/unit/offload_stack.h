/* The transformer-shaped weight stack of the offload tests (test_offload_shapes,
 * test_offload_fragmented; the stack of hwrt-bench offload): per block four weights
 * D x 3D, 3D x D, D x 4D and 4D x D, activations x (B x D), h3 (B x 3D), h4 (B x 4D),
 * each layer a matmul and a relu (x -> h3 -> x -> h4 -> x per block).
 * The including test defines D, B and W (weights: 4 per block) before including this
 * header: constants, or variables for a test of several shapes, which then defines
 * STACK_WMAX, the most weights a net holds (W by default). */
#ifndef HWRT_TEST_OFFLOAD_STACK_H
#define HWRT_TEST_OFFLOAD_STACK_H

#include "harness.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline void dims(int l, int *rows, int *cols)
{
    static const int r[4] = {1, 3, 1, 4}, c[4] = {3, 1, 4, 1};
    *rows = D * r[l % 4];
    *cols = D * c[l % 4];
}

static inline size_t wbytes(int l)
{
    int r, c;
    dims(l, &r, &c);
    return (size_t)r * c * sizeof(float);
}

#ifndef STACK_WMAX
#define STACK_WMAX W
#endif

typedef struct {
    hwrt_tensor w[STACK_WMAX], x, h3, h4;
} net;

/* The host's weights (seeded, scaled by 1/rows so activations stay bounded; free each
 * host_w[l] after) and the input x0 (B x D); returns the weights' bytes. */
static inline size_t host_init(float **host_w, float *x0)
{
    size_t total = 0;
    unsigned seed = 12345u;
    for (int l = 0; l < W; l++) {
        size_t n = wbytes(l) / sizeof(float);
        int r, c;
        dims(l, &r, &c);
        host_w[l] = malloc(wbytes(l));
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            host_w[l][i] = ((float)(seed >> 8) / 16777216.0f - 0.45f) * 2.0f / (float)r;
        }
        total += wbytes(l);
    }
    for (int i = 0; i < B * D; i++) x0[i] = (float)((i * 7919) % 1000) / 1000.0f;
    return total;
}

static inline void setup(net *n, float *const *host_w, const float *x0, int offload)
{
    for (int l = 0; l < W; l++) {
        int r, c;
        dims(l, &r, &c);
        int64_t shape[2] = {r, c};
        OK(hwrt_tensor_from_host(&n->w[l], HWRT_FLOAT32, 2, shape, host_w[l]));
        if (offload) OK(hwrt_tensor_set_offloadable(n->w[l], 1));
    }
    int64_t xs[2] = {B, D}, s3[2] = {B, 3 * D}, s4[2] = {B, 4 * D};
    OK(hwrt_tensor_from_host(&n->x, HWRT_FLOAT32, 2, xs, x0));
    OK(hwrt_tensor_empty(&n->h3, HWRT_FLOAT32, 2, s3));
    OK(hwrt_tensor_empty(&n->h4, HWRT_FLOAT32, 2, s4));
}

/* The sim device (HWRT_SIM_MEMORY as set) with learned offload (auto_offload, pinned
 * host tier of cpu_size, prefetch_depth 2), then the net with offloadable weights. */
static inline void setup_learned(net *n, float *const *host_w, const float *x0,
                                 size_t cpu_size)
{
    OK(hwrt_set_device("sim", 0));
    hwrt_offload_config cfg = {.enabled = 1, .auto_offload = 1, .offload_cpu_size = cpu_size,
                               .enable_pinned_mem = 1, .prefetch_depth = 2};
    OK(hwrt_set_offload_config(&cfg));
    setup(n, host_w, x0, 1);
}

/* Layer l, queued on the current stream: its matmul, then relu in place. */
static inline void layer(net *n, int l)
{
    hwrt_tensor in = (l % 4 == 1) ? n->h3 : (l % 4 == 3) ? n->h4 : n->x;
    hwrt_tensor out = (l % 4 == 0) ? n->h3 : (l % 4 == 2) ? n->h4 : n->x;
    OK(hwrt_op_matmul(out, in, n->w[l], NULL));
    OK(hwrt_op_relu(out, out, NULL));
}

static inline void teardown(net *n)
{
    for (int l = 0; l < W; l++) OK(hwrt_tensor_release(n->w[l]));
    OK(hwrt_tensor_release(n->x));
    OK(hwrt_tensor_release(n->h3));
    OK(hwrt_tensor_release(n->h4));
}

/* The end of an offloaded run: x is bit for bit `want` (the resident run's), the
 * tensors go, offload is off again, the device shut down and the host weights freed. */
static inline void finish(net *n, const float *want, float **host_w)
{
    float *got = malloc(sizeof(float) * B * D);
    EXPECT(got != NULL);
    if (got) {
        OK(hwrt_tensor_copy_to_host(n->x, got, sizeof(float) * B * D));
        EXPECT(memcmp(got, want, sizeof(float) * B * D) == 0);   /* the data is right */
        free(got);
    }
    teardown(n);
    hwrt_offload_config off = {.enabled = 0, .prefetch_depth = 2, .enable_pinned_mem = 1};
    OK(hwrt_set_offload_config(&off));
    OK(hwrt_shutdown());
    for (int l = 0; l < W; l++) free(host_w[l]);
}

#endif
