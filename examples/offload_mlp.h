/* The workload shared by examples/offload_demo.c and hwrt-bench-offload: an N-layer MLP
 * (x = relu(x @ W_i)) whose weights are several times the simulated device's capacity,
 * or (transformer = 1) a transformer-shaped stack of non-uniform weights: per block four
 * matrices D x 3D, 3D x D, D x 4D and 4D x D (the attention projections' and the MLP's
 * shapes; `layers` counts matrices, a multiple of 4; D = hidden), activations B x D,
 * B x 3D and B x 4D. Each run starts the runtime afresh with its own simulated device
 * size. */
#ifndef OFFLOAD_MLP_H
#define OFFLOAD_MLP_H

#include <hwrt.h>
#include "example_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


typedef enum { MLP_RESIDENT, MLP_TRANSFER_ONLY, MLP_ON_DEMAND, MLP_PREFETCH, MLP_LEARNED } mlp_mode;

typedef struct {
    int layers, hidden, batch, steps;
    double link_gbps;
    size_t device_mb;          /* simulated capacity for offloaded runs */
    int host_sync;             /* the host waits for every layer (eager execution that
                                  reads results, PyNative-like), so it cannot run ahead */
    int transformer;           /* non-uniform transformer-shaped weights (see above) */
    int prefetch_depth;        /* hwrt_offload_config.prefetch_depth (0: 2) */
    hwrt_mem_stats *pool_out;  /* optional: the pool's counters over the steps after the
                                  first (device syncs and OOM retries: the host's waits) */
} mlp_shape;

/* Rows and columns of weight `layer`. */
static void mlp_dims(const mlp_shape *m, int layer, int *rows, int *cols)
{
    static const int r[4] = {1, 3, 1, 4}, c[4] = {3, 1, 4, 1};
    *rows = m->transformer ? m->hidden * r[layer % 4] : m->hidden;
    *cols = m->transformer ? m->hidden * c[layer % 4] : m->hidden;
}

static size_t mlp_weight_bytes(const mlp_shape *m, int layer)
{
    int rows, cols;
    mlp_dims(m, layer, &rows, &cols);
    return (size_t)rows * (size_t)cols * sizeof(float);
}

static size_t mlp_total_bytes(const mlp_shape *m)
{
    size_t total = 0;
    for (int l = 0; l < m->layers; l++) total += mlp_weight_bytes(m, l);
    return total;
}

static double mlp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Median of n values (sorts them in place). */
static double mlp_median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) { double x = v[j]; v[j] = v[j - 1]; v[j - 1] = x; }
    return v[n / 2];
}

static float *mlp_weight(const mlp_shape *m, int layer)
{
    int rows, cols;
    mlp_dims(m, layer, &rows, &cols);
    size_t n = (size_t)rows * cols;
    float *w = malloc(n * sizeof *w);
    unsigned s = 12345u + 977u * (unsigned)layer;
    float scale = 2.0f / (float)rows;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        w[i] = ((float)(s >> 8) / 16777216.0f - 0.45f) * scale;
    }
    return w;
}

/* Runs `steps` inference steps; returns the median step time (s) of steps after the
 * first and writes the final activations (batch x hidden) into out (may be NULL).
 * stats (may be NULL) and m->pool_out cover the steps after the first (which places
 * the weights and, in learned mode, records the order). */
static double mlp_run(const mlp_shape *m, mlp_mode mode, int pinned, float *out,
                      hwrt_offload_stats *stats)
{
    char buf[64];
    int offload = mode >= MLP_ON_DEMAND;
    size_t wmax = 0, total = mlp_total_bytes(m);
    for (int l = 0; l < m->layers; l++)
        if (mlp_weight_bytes(m, l) > wmax) wmax = mlp_weight_bytes(m, l);
    snprintf(buf, sizeof buf, "%zuMB", offload ? m->device_mb + 8 : total / 1048576 + 256);
    setenv("HWRT_SIM_MEMORY", buf, 1);
    setenv("HWRT_SIM_OVERHEAD", "8MB", 1);
    snprintf(buf, sizeof buf, "%g", m->link_gbps);
    setenv("HWRT_SIM_LINK_GBPS", buf, 1);
    CHECK(hwrt_set_device("sim", 0));
    hwrt_offload_config cfg = {.enabled = offload, .auto_offload = mode == MLP_LEARNED,
                               .offload_cpu_size = total * 2, .enable_pinned_mem = pinned,
                               .prefetch_depth = m->prefetch_depth ? m->prefetch_depth : 2};
    CHECK(hwrt_set_offload_config(&cfg));

    hwrt_tensor *w = calloc((size_t)m->layers, sizeof *w);
    float **host_w = calloc((size_t)m->layers, sizeof *host_w);
    for (int l = 0; l < m->layers; l++) {
        int rows, cols;
        mlp_dims(m, l, &rows, &cols);
        int64_t wshape[2] = {rows, cols};
        host_w[l] = mlp_weight(m, l);
        if (mode == MLP_TRANSFER_ONLY) continue;
        CHECK(hwrt_tensor_from_host(&w[l], HWRT_FLOAT32, 2, wshape, host_w[l]));
        if (offload) CHECK(hwrt_tensor_set_offloadable(w[l], 1));
    }
    /* activations: xa, xb (B x D: the MLP's ping-pong), h[3], h[4] (B x 3D, B x 4D) */
    int64_t xshape[2] = {m->batch, m->hidden};
    size_t xbytes = (size_t)m->batch * m->hidden * sizeof(float);
    float *x0 = malloc(xbytes);
    for (int i = 0; i < m->batch * m->hidden; i++) x0[i] = (float)((i * 7919) % 1000) / 1000.0f;
    hwrt_tensor xa, xb, h[5] = {0};
    CHECK(hwrt_tensor_from_host(&xa, HWRT_FLOAT32, 2, xshape, x0));
    CHECK(hwrt_tensor_empty(&xb, HWRT_FLOAT32, 2, xshape));
    if (m->transformer && mode != MLP_TRANSFER_ONLY)
        for (int k = 3; k <= 4; k++) {
            int64_t hshape[2] = {m->batch, (int64_t)m->hidden * k};
            CHECK(hwrt_tensor_empty(&h[k], HWRT_FLOAT32, 2, hshape));
        }
    void *dev_w = NULL, *pin_w = NULL;
    if (mode == MLP_TRANSFER_ONLY) {          /* the same bytes over the link, no compute */
        CHECK(hwrt_malloc(&dev_w, wmax));
        CHECK(hwrt_host_alloc(&pin_w, wmax, pinned ? HWRT_HOST_PINNED : 0));
        memcpy(pin_w, host_w[0], mlp_weight_bytes(m, 0));
    }
    double *times = calloc((size_t)m->steps, sizeof *times);
    if (stats) hwrt_offload_reset_stats();
    hwrt_mem_stats pool0 = {0};
    for (int s = 0; s < m->steps; s++) {
        if (s == 1 && m->steps > 1) {        /* the steady state: after the first step */
            if (stats) CHECK(hwrt_offload_reset_stats());
            if (m->pool_out) CHECK(hwrt_memory_stats(0, &pool0));
        }
        double t0 = mlp_now();
        if (s > 0) CHECK(hwrt_tensor_copy_from_host(xa, x0, xbytes));
        hwrt_tensor in = xa, outt = xb;
        for (int l = 0; l < m->layers; l++) {
            if (mode == MLP_TRANSFER_ONLY) {
                CHECK(hwrt_memcpy_async(dev_w, pin_w, mlp_weight_bytes(m, l),
                                        HWRT_MEMCPY_HOST_TO_DEVICE, NULL));
                if (m->host_sync) CHECK(hwrt_stream_synchronize(NULL));
                continue;
            }
            if (mode == MLP_PREFETCH && l + 1 < m->layers)
                CHECK(hwrt_offload_prefetch(w[l + 1], NULL));
            if (m->transformer) {             /* x -> h3 -> x -> h4 -> x */
                static const int src[4] = {0, 3, 0, 4}, dst[4] = {3, 0, 4, 0};
                in = src[l % 4] ? h[src[l % 4]] : xa;
                outt = dst[l % 4] ? h[dst[l % 4]] : xa;
            }
            CHECK(hwrt_op_matmul(outt, in, w[l], NULL));
            CHECK(hwrt_op_relu(outt, outt, NULL));
            if (m->host_sync) CHECK(hwrt_stream_synchronize(NULL));
            if (m->transformer) in = outt;
            else { hwrt_tensor tmp = in; in = outt; outt = tmp; }
        }
        if (mode == MLP_PREFETCH) CHECK(hwrt_offload_prefetch(w[0], NULL));
        CHECK(hwrt_device_synchronize());
        if (offload) CHECK(hwrt_offload_step());
        times[s] = mlp_now() - t0;
        if (out && s == m->steps - 1 && mode != MLP_TRANSFER_ONLY)
            CHECK(hwrt_tensor_copy_to_host(in, out, xbytes));
    }
    if (stats) CHECK(hwrt_offload_stats_get(stats));
    if (m->pool_out) {
        CHECK(hwrt_memory_stats(0, m->pool_out));
        m->pool_out->num_sync_all_streams -= pool0.num_sync_all_streams;
        m->pool_out->num_alloc_retries -= pool0.num_alloc_retries;
        m->pool_out->num_ooms -= pool0.num_ooms;
    }
    /* median of steps 1.. (step 0 places the weights) */
    double med = mlp_median(times + (m->steps > 1), m->steps > 1 ? m->steps - 1 : 1);
    for (int l = 0; l < m->layers; l++) {
        if (mode != MLP_TRANSFER_ONLY) hwrt_tensor_release(w[l]);
        free(host_w[l]);
    }
    hwrt_tensor_release(xa);
    hwrt_tensor_release(xb);
    for (int k = 3; k <= 4; k++)
        if (h[k]) hwrt_tensor_release(h[k]);
    if (dev_w) hwrt_free(dev_w);
    if (pin_w) hwrt_host_free(pin_w);
    free(w); free(host_w); free(x0); free(times);
    hwrt_offload_config off = {.enabled = 0, .prefetch_depth = 2, .enable_pinned_mem = 1};
    hwrt_set_offload_config(&off);
    CHECK(hwrt_shutdown());
    return med;
}

#endif
