/* The raw file: one tab-separated line per record, after '#' header lines. It is text
 * so that a reader (hwrt-prof, a script) needs no knowledge of hwrt's structs, and it
 * is written to a temporary name and renamed, so a reader never sees half a file.
 *
 * Lines (times are CLOCK_MONOTONIC ns; dev_end 0 = no device time):
 *   #thread  index  os_tid  name
 *   #stream  id  device  is_default
 *   W  thread kind name device stream t0 t1 dev_end bytes sub pinned failed a b c dev_start
 *      (kind: copy memset kernel hostfn record wait; sub: copy kind or kernel dtype;
 *       a b c: kernel m k nn for MatMul/Sum, else n elements in a; dev_start: device
 *       start from the backend's activity record, 0 when the work had a marker instead
 *       (readers derive it: the later of t0 and the previous end on the stream); older
 *       files lack the column)
 *   S  thread api device stream t0 t1 failed                   (host time in a sync)
 *   M  thread alloc|free|reserve|release device t bytes allocated reserved addr
 *   X  thread category name device t0 t1 bytes                 (offload, collectives)
 * Names (thread names, op and API names, categories) are written with hwi_tsv_field
 * (base/escape.h): a tab, newline or control byte in a name is escaped (\t \n \xHH, and
 * \\ for a backslash), so no name can split a line or forge another record; hwrt-prof
 * reverses it with hwi_tsv_unescape.
 */
#include "prof.h"
#include "../base/escape.h"
#include "../base/out_file.h"
#include "../base/status.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const work_kind[] = {"copy", "memset", "kernel", "hostfn", "record", "wait"};
static const char *const ext_cat[] = {"", "offload_evict", "offload_fetch", "offload_prefetch",
                                      "offload_stall", "collective", "user"};

static void write_rec(FILE *f, uint32_t th, const prof_rec *r)
{
    unsigned long long t0 = r->t0, t1 = r->t1;
    switch (r->type) {
    case PREC_WORK:
        fprintf(f, "W\t%u\t%s\t", th, r->kind < 6 ? work_kind[r->kind] : "other");
        hwi_tsv_field(f, r->name);
        fprintf(f, "\t%d\t%u\t%llu\t%llu\t%llu\t%llu\t%u\t%u\t%u\t%llu\t%llu\t%llu\t%llu\n",
                r->device, r->stream,
                t0, t1, (unsigned long long)atomic_load_explicit(&r->dev_end, memory_order_relaxed),
                (unsigned long long)r->bytes, r->sub, r->pinned, r->flags & PREC_F_FAILED,
                (unsigned long long)r->a, (unsigned long long)r->b, (unsigned long long)r->c,
                (unsigned long long)r->dev_start);
        break;
    case PREC_SYNC:
        fprintf(f, "S\t%u\t", th);
        hwi_tsv_field(f, r->name);
        fprintf(f, "\t%d\t%u\t%llu\t%llu\t%u\n", r->device, r->stream, t0, t1,
                r->flags & PREC_F_FAILED);
        break;
    case PREC_MEM:
        fprintf(f, "M\t%u\t", th);
        hwi_tsv_field(f, r->name);
        fprintf(f, "\t%d\t%llu\t%llu\t%llu\t%llu\t0x%llx\n", r->device, t0,
                (unsigned long long)r->bytes, (unsigned long long)r->a,
                (unsigned long long)r->b, (unsigned long long)r->c);
        break;
    case PREC_EXT:
        fprintf(f, "X\t%u\t%s\t", th, r->kind < 7 ? ext_cat[r->kind] : "user");
        hwi_tsv_field(f, r->name);
        fprintf(f, "\t%d\t%llu\t%llu\t%llu\n", r->device, t0, t1, (unsigned long long)r->bytes);
        break;
    default:
        break;
    }
}

static void write_buf(FILE *f, const prof_buf *b)
{
    size_t n = atomic_load_explicit(&b->count, memory_order_acquire), i = 0;
    for (const prof_chunk *c = b->first; c && i < n; c = c->next)
        for (size_t k = 0; k < PROF_CHUNK && i < n; k++, i++)
            write_rec(f, b->index, &c->recs[k]);
}

hwrt_status prof_write_raw(const char *path, prof_buf *const *bufs, int nbufs, const char *header)
{
    char tmp[900];
    FILE *f = hwi_out_open(path, tmp, sizeof tmp);    /* never through a planted symlink */
    if (!f)
        return hwi_err(HWRT_ERROR_IO, "profiler: cannot write \"%s\": %s; check the output "
                       "directory", tmp, strerror(errno));
    static char iobuf[1 << 16];
    setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
    fputs(header, f);
    for (int i = 0; i < nbufs; i++) {
        fprintf(f, "#thread\t%u\t%ld\t", bufs[i]->index, bufs[i]->os_tid);
        hwi_tsv_field(f, bufs[i]->thread_name[0] ? bufs[i]->thread_name : "thread");
        fputc('\n', f);
    }
    prof_markers_describe(f);
    for (int i = 0; i < nbufs; i++)
        write_buf(f, bufs[i]);
    if (hwi_out_commit(f, tmp, path) != 0)
        return hwi_err(HWRT_ERROR_IO, "profiler: writing \"%s\" failed: %s (disk full?)", path,
                       strerror(errno));
    return HWRT_SUCCESS;
}
