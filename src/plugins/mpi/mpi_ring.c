/* Ring allreduce (reduce-scatter then allgather, 2 (p - 1) steps of n / p elements), the
 * bandwidth-optimal algorithm NCCL uses for large messages. Open MPI 4.1's blocking
 * MPI_Allreduce picks a much slower schedule for tens of MiB on one host (measured in
 * docs/distributed.md), so from hwrt_mpi_ring_min_bytes() on the ring is used instead,
 * written over MPI_Isend/MPI_Irecv, each step polled against the collective's deadline,
 * and reduced with MPI_Reduce_local (MPI's vectorized operators, and hwrt's
 * float16/bfloat16 operators). */
#include "mpi_ring.h"
#include "hwrt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { TAG_RS = 7301, TAG_AG = 7302 };

size_t hwrt_mpi_ring_min_bytes(void)
{
    static size_t v;
    static int read;
    if (!read) {
        const char *e = getenv("HWRT_MPI_RING_BYTES");
        char *end = NULL;
        v = (size_t)16 << 20;
        if (e && *e) {
            unsigned long long n = strtoull(e, &end, 10);
            if (e[0] >= '0' && e[0] <= '9' && !*end)
                v = (size_t)n;
            else
                fprintf(stderr, "[hwrt warn] HWRT_MPI_RING_BYTES=\"%s\" is not a whole number "
                        "of bytes; using the default (%zu)\n", e, v);
        }
        read = 1;
    }
    return v;
}

static void *scratch;
static size_t scratch_len;

void hwrt_mpi_ring_free(void)
{
    free(scratch);
    scratch = NULL;
    scratch_len = 0;
}

/* Block i of the ring: elements [off(i), off(i + 1)). */
static inline int off(int i, int count, int chunk)
{
    int64_t o = (int64_t)i * chunk;
    return o < count ? (int)o : count;
}

static int step(MPI_Comm comm, void *sendbuf, int scount, void *recvbuf, int rcount,
                MPI_Datatype t, int right, int left, int tag, double deadline, double timeout,
                char *err, size_t len)
{
    MPI_Request q[2];
    int rc = MPI_Irecv(recvbuf, rcount, t, left, tag, comm, &q[0]);
    if (rc != MPI_SUCCESS) return hwrt_mpi_fail(err, len, "Irecv (ring allreduce)", rc);
    rc = MPI_Isend(sendbuf, scount, t, right, tag, comm, &q[1]);
    if (rc != MPI_SUCCESS) return hwrt_mpi_fail(err, len, "Isend (ring allreduce)", rc);
    return hwrt_mpi_waitall(2, q, "allreduce", deadline, timeout, err, len);
}

int hwrt_mpi_ring_allreduce(MPI_Comm comm, void *buf, int count, MPI_Datatype t, MPI_Op o,
                            double timeout, char *err, size_t len)
{
    int r, p, tsize;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    MPI_Type_size(t, &tsize);
    double deadline = MPI_Wtime() + timeout;
    int chunk = (int)(((int64_t)count + p - 1) / p);
    size_t need = (size_t)chunk * (size_t)tsize;
    if (scratch_len < need) {
        void *s = realloc(scratch, need);
        if (!s)
            return hwrt_mpi_fail(err, len, "ring allreduce scratch allocation", MPI_ERR_NO_MEM);
        scratch = s;
        scratch_len = need;
    }
    char *b = buf;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    /* reduce-scatter: after p - 1 steps rank r holds the full reduction of block r + 1 */
    for (int s = 0; s < p - 1; s++) {
        int si = (r - s + p) % p, ri = (r - s - 1 + p) % p;
        int sc = off(si + 1, count, chunk) - off(si, count, chunk);
        int rcn = off(ri + 1, count, chunk) - off(ri, count, chunk);
        int st = step(comm, b + (size_t)off(si, count, chunk) * tsize, sc, scratch, rcn, t, right,
                      left, TAG_RS, deadline, timeout, err, len);
        if (st) return st;
        int rc = MPI_Reduce_local(scratch, b + (size_t)off(ri, count, chunk) * tsize, rcn, t, o);
        if (rc != MPI_SUCCESS) return hwrt_mpi_fail(err, len, "Reduce_local", rc);
    }
    /* allgather: pass the reduced blocks around the ring */
    for (int s = 0; s < p - 1; s++) {
        int si = (r + 1 - s + p) % p, ri = (r - s + p) % p;
        int sc = off(si + 1, count, chunk) - off(si, count, chunk);
        int rcn = off(ri + 1, count, chunk) - off(ri, count, chunk);
        int st = step(comm, b + (size_t)off(si, count, chunk) * tsize, sc,
                      b + (size_t)off(ri, count, chunk) * tsize, rcn, t, right, left, TAG_AG,
                      deadline, timeout, err, len);
        if (st) return st;
    }
    return HWRT_SUCCESS;
}
