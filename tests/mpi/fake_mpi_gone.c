/* A stand-in libhwrt_mpi.so whose peer is gone, for test_sigpipe.c: a real shared library
 * loaded by libhwrt through HWRT_MPI_PLUGIN, speaking the plugin ABI (mpi_plugin.h). Rank
 * 0 of 2. The first allgather (hwrt_dist_init's host exchange) copies this rank's record
 * into both slots (the test names the host with HWRT_DIST_HOSTNAME, so the host-name
 * check accepts two ranks on it): the peer dies after init. From then on every collective
 * (the device exchange before the first collective is an allgather) does what Open MPI's TCP transport does when a peer host has died: it
 * writes to a connection whose other end is closed (here a pipe with its read end
 * closed, so the kernel raises SIGPIPE in the writing thread every time), gets EPIPE and
 * reports the failure. FAKE_MPI_IN_CALL=1 says the plugin bounds its calls itself (the
 * collectives then run on the caller's thread), else on libhwrt's communication thread. */
#include "distributed/mpi_plugin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int p_init(int *rank, int *size, int *thread_level_ok, int *in_call_deadline,
                  char *version, size_t vlen, char *err, size_t len)
{
    const char *ic = getenv("FAKE_MPI_IN_CALL");
    *rank = 0;
    *size = 2;
    *thread_level_ok = 1;
    *in_call_deadline = ic && !strcmp(ic, "1");
    snprintf(version, vlen, "fake MPI (its peer is gone)");
    return HWRT_SUCCESS;
}

static int p_finalize(char *err, size_t len) { return HWRT_SUCCESS; }

/* The write to the dead peer: EPIPE, with SIGPIPE raised in this thread. */
static int send_to_gone(const char *what, char *err, size_t len)
{
    int p[2];
    if (pipe(p) != 0) {
        snprintf(err, len, "fake MPI %s: pipe failed: %s", what, strerror(errno));
        return HWRT_ERROR_DIST;
    }
    close(p[0]);
    ssize_t n = write(p[1], "x", 1);
    int e = errno;
    close(p[1]);
    snprintf(err, len, "fake MPI %s: writing to the peer returned %zd: %s", what, n,
             n < 0 ? strerror(e) : "no error");
    return HWRT_ERROR_DIST;
}

static int p_allreduce(void *c, void *buf, size_t n, int dt, int op, double t, char *err,
                       size_t len)
{
    return send_to_gone("allreduce", err, len);
}

static int p_broadcast(void *c, void *buf, size_t bytes, int root, double t, char *err,
                       size_t len)
{
    return send_to_gone("broadcast", err, len);
}

static int p_allgather(void *c, const void *in, void *out, size_t bytes, double t, char *err,
                       size_t len)
{
    static int calls;
    if (calls++) return send_to_gone("allgather", err, len);
    memcpy(out, in, bytes);
    memcpy((char *)out + bytes, in, bytes);
    return HWRT_SUCCESS;
}

static int p_reduce_scatter(void *c, const void *in, void *out, size_t n, int dt, int op,
                            double t, char *err, size_t len)
{
    return send_to_gone("reduce_scatter", err, len);
}

static int p_barrier(void *c, double t, char *err, size_t len)
{
    return send_to_gone("barrier", err, len);
}

static int p_comm_create(const int *ranks, int n, double t, void **comm, char *err, size_t len)
{
    return send_to_gone("comm_create", err, len);
}

static int p_comm_free(void *comm, char *err, size_t len) { return HWRT_SUCCESS; }

static const hwi_mpi_plugin table = {
    .abi = HWI_MPI_ABI, .init = p_init, .finalize = p_finalize, .allreduce = p_allreduce,
    .broadcast = p_broadcast, .allgather = p_allgather, .reduce_scatter = p_reduce_scatter,
    .barrier = p_barrier, .comm_create = p_comm_create, .comm_free = p_comm_free,
};

__attribute__((visibility("default"))) const hwi_mpi_plugin *hwrt_mpi_plugin(uint32_t abi)
{
    return abi == HWI_MPI_ABI ? &table : NULL;
}
