/* trace.json in the Chrome Trace Event Format (JSON object form), which Perfetto and
 * chrome://tracing load. Layout:
 *   process "Host pid N"        one track per host thread: launches and syncs, plus one
 *                               track per device for offload / collective events;
 *   process "NPU d (backend)"   one track per engine and stream ("compute · stream 1"),
 *                               and a "device memory" counter (allocated, reserved).
 * Times are microseconds from the earliest session start. */
#include "base/out_file.h"
#include "prof_data.h"

#include <errno.h>
#include <string.h>

#define DEV_PID_BASE 100000000      /* above any Linux pid (pid_max <= 4194304) */

static long dev_pid(int file, int device) { return DEV_PID_BASE + file * 1000L + device + 1; }
static long lane_tid(int engine, uint32_t stream) { return (long)engine * 100000L + stream; }

static const pthread_info *thread_of(const pfile *pf, uint32_t index)
{
    for (int i = 0; i < pf->nthreads; i++)
        if (pf->threads[i].index == index) return &pf->threads[i];
    return NULL;
}

static long host_tid(const pfile *pf, uint32_t index)
{
    const pthread_info *t = thread_of(pf, index);
    return t ? t->os_tid : (long)index + 1;
}

static void meta(FILE *f, int *first, const char *what, long pid, long tid, const char *name,
                 int sort)
{
    fprintf(f, "%s\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%ld,\"tid\":%ld,\"args\":{\"name\":",
            *first ? "" : ",", what, pid, tid);
    hwi_json_str(f, name);
    fprintf(f, "}}");
    fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"%s_sort_index\",\"pid\":%ld,\"tid\":%ld,"
            "\"args\":{\"sort_index\":%d}}", !strcmp(what, "process_name") ? "process" : "thread",
            pid, tid, sort);
    *first = 0;
}

static int stream_is_default(const pfile *pf, uint32_t id)
{
    for (int i = 0; i < pf->nstreams; i++)
        if (pf->streams[i].id == id) return pf->streams[i].is_default;
    return 0;
}

static void ext_tracks(FILE *f, const prof_data *d, int *first)
{
    long seen[256];
    int ns = 0;
    char name[160];
    for (size_t i = 0; i < d->nexts; i++) {
        const pext *x = &d->exts[i];
        long pid = d->files[x->file].pid, tid = 900000L + (long)x->thread * 100 + x->device + 1;
        int dup = 0;
        for (int j = 0; j < ns && !dup; j++) dup = seen[j] == pid * 1000003L + tid;
        if (dup || ns == 256) continue;
        seen[ns++] = pid * 1000003L + tid;
        snprintf(name, sizeof name, "offload/collectives: thread %u, device %d", x->thread,
                 x->device);
        meta(f, first, "thread_name", pid, tid, name, 100000 + ns);
    }
}

/* Name every process and track that has events. */
static void metadata(FILE *f, const prof_data *d, int *first)
{
    char name[160];
    ext_tracks(f, d, first);
    for (int fi = 0; fi < d->nfiles; fi++) {
        const pfile *pf = &d->files[fi];
        snprintf(name, sizeof name, "Host pid %ld", pf->pid);
        meta(f, first, "process_name", pf->pid, 0, name, fi * 100);
        for (int t = 0; t < pf->nthreads; t++) {
            snprintf(name, sizeof name, "thread %u %s (tid %ld)", pf->threads[t].index,
                     pf->threads[t].name, pf->threads[t].os_tid);
            meta(f, first, "thread_name", pf->pid, pf->threads[t].os_tid, name, (int)t);
        }
    }
    /* device lanes: one per (file, device, engine, stream) seen */
    static char seen[64][64];
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < d->nops; i++) {
        const pop *o = &d->ops[i];
        if (!o->on_device) continue;
        const pfile *pf = &d->files[o->file];
        int dv = o->device < 0 ? 0 : o->device % 64;
        if (o->file < 64 && !seen[o->file][dv]) {
            seen[o->file][dv] = 1;
            snprintf(name, sizeof name, "NPU %d (%s, pid %ld)", o->device, pf->backend, pf->pid);
            meta(f, first, "process_name", dev_pid(o->file, o->device), 0, name,
                 o->file * 100 + 10 + dv);
        }
    }
    /* track names: one per distinct (file, device, engine, stream) */
    typedef struct { int file, device, engine; uint32_t stream; } lane;
    lane lanes[512];
    int nl = 0;
    for (size_t i = 0; i < d->nops; i++) {
        const pop *o = &d->ops[i];
        if (!o->on_device) continue;
        int dup = 0;
        for (int j = 0; j < nl && !dup; j++)
            dup = lanes[j].file == o->file && lanes[j].device == o->device &&
                  lanes[j].engine == o->engine && lanes[j].stream == o->stream;
        if (dup || nl == 512) continue;
        lanes[nl++] = (lane){o->file, o->device, o->engine, o->stream};
        snprintf(name, sizeof name, "%s \xc2\xb7 stream %u%s", engine_names[o->engine],
                 o->stream, stream_is_default(&d->files[o->file], o->stream) ? " (default)" : "");
        meta(f, first, "thread_name", dev_pid(o->file, o->device), lane_tid(o->engine, o->stream),
             name, o->engine * 1000 + (int)o->stream);
    }
}

static void op_event(FILE *f, const prof_data *d, const pop *o)
{
    const pfile *pf = &d->files[o->file];
    double dur = (double)(o->dend - o->dstart) / 1000.0;
    fputs(",\n{\"ph\":\"X\",\"cat\":", f);
    hwi_json_str(f, o->kind);
    fputs(",\"name\":", f);
    hwi_json_str(f, o->name);
    fprintf(f, ",\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"stream\":%u,"
            "\"task_id\":%u,\"host_launch_us\":%.3f,\"wait_us\":%.3f",
            dev_pid(o->file, o->device), lane_tid(o->engine, o->stream), rel_us(d, o->dstart),
            dur, o->stream, o->task_id, rel_us(d, o->t0), (double)o->wait / 1000.0);
    if (!strcmp(o->kind, "copy"))
        fprintf(f, ",\"bytes\":%llu,\"GB/s\":%.3f,\"memory\":\"%s\",\"direction\":\"%s\"",
                (unsigned long long)o->bytes,
                o->dend > o->dstart ? (double)o->bytes / (double)(o->dend - o->dstart) : 0.0,
                o->sub == 3 ? "device" : o->pinned ? "pinned" : "pageable",
                copy_direction(o->sub));
    else if (!strcmp(o->kind, "memset"))
        fprintf(f, ",\"bytes\":%llu", (unsigned long long)o->bytes);
    else if (!strcmp(o->kind, "kernel"))
        fprintf(f, ",\"shape\":\"%llu,%llu,%llu\"", (unsigned long long)o->a,
                (unsigned long long)o->b, (unsigned long long)o->c);
    fprintf(f, "}}");
    (void)pf;
}

static void host_events(FILE *f, const prof_data *d)
{
    for (size_t i = 0; i < d->nops; i++) {
        const pop *o = &d->ops[i];
        const pfile *pf = &d->files[o->file];
        char nm[160];
        snprintf(nm, sizeof nm, "launch %s", o->name);
        fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"launch\",\"name\":");
        hwi_json_str(f, nm);
        fprintf(f, ",\"pid\":%ld,"
                "\"tid\":%ld,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"device\":%d,\"stream\":%u%s}}",
                pf->pid, host_tid(pf, o->thread), rel_us(d, o->t0),
                (double)(o->t1 - o->t0) / 1000.0, o->device, o->stream,
                o->failed ? ",\"failed\":1" : "");
    }
    for (size_t i = 0; i < d->nsyncs; i++) {
        const psync *s = &d->syncs[i];
        const pfile *pf = &d->files[s->file];
        fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"sync\",\"name\":");
        hwi_json_str(f, s->name);
        fprintf(f, ",\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"device\":%d,"
                "\"stream\":%u}}", pf->pid, host_tid(pf, s->thread), rel_us(d, s->t0),
                (double)(s->t1 - s->t0) / 1000.0, s->device, s->stream);
    }
    for (size_t i = 0; i < d->nexts; i++) {
        const pext *x = &d->exts[i];
        const pfile *pf = &d->files[x->file];
        fprintf(f, ",\n{\"ph\":\"X\",\"cat\":");
        hwi_json_str(f, x->cat);
        fprintf(f, ",\"name\":");
        hwi_json_str(f, x->name);
        fprintf(f, ",\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"device\":%d,"
                "\"bytes\":%llu}}", pf->pid, 900000L + (long)x->thread * 100 + x->device + 1,
                rel_us(d, x->t0),
                (double)(x->t1 - x->t0) / 1000.0, x->device, (unsigned long long)x->bytes);
    }
}

/* Flow arrows from each launch slice to the device slice it caused (Perfetto draws them
 * when a slice is selected). Skipped above 500000 launches to bound the file. */
static void flows(FILE *f, const prof_data *d)
{
    if (d->nops > 500000) return;
    for (size_t i = 0; i < d->nops; i++) {
        const pop *o = &d->ops[i];
        if (!o->on_device) continue;
        const pfile *pf = &d->files[o->file];
        fprintf(f, ",\n{\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"launch\",\"id\":%zu,"
                "\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f}", i + 1, pf->pid,
                host_tid(pf, o->thread), rel_us(d, o->t0));
        fprintf(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":\"launch\","
                "\"id\":%zu,\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f}", i + 1,
                dev_pid(o->file, o->device), lane_tid(o->engine, o->stream),
                rel_us(d, o->dstart));
    }
}

static void memory_counters(FILE *f, const prof_data *d)
{
    for (size_t i = 0; i < d->nmems; i++) {
        const pmem *m = &d->mems[i];
        fprintf(f, ",\n{\"ph\":\"C\",\"name\":\"device memory (MB)\",\"pid\":%ld,\"tid\":0,"
                "\"ts\":%.3f,\"args\":{\"allocated\":%.6f,\"reserved\":%.6f}}",
                dev_pid(m->file, m->device), rel_us(d, m->t),
                (double)m->allocated / 1048576.0, (double)m->reserved / 1048576.0);
    }
}

int export_trace_json(const prof_data *d, const char *path, char *err, size_t errlen)
{
    char tmp[1300];
    FILE *f = hwi_out_open(path, tmp, sizeof tmp);    /* never through a planted symlink */
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    int first = 1;
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"hwrt-prof\","
            "\"clock\":\"CLOCK_MONOTONIC\",\"base_ns\":%llu},\n\"traceEvents\":[",
            (unsigned long long)d->base_ns);
    metadata(f, d, &first);
    if (first) {   /* no metadata: keep the array well-formed for the leading commas */
        fprintf(f, "\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,"
                "\"args\":{\"name\":\"hwrt\"}}");
    }
    for (size_t i = 0; i < d->nops; i++)
        if (d->ops[i].on_device) op_event(f, d, &d->ops[i]);
    host_events(f, d);
    flows(f, d);
    memory_counters(f, d);
    fprintf(f, "\n]}\n");
    if (hwi_out_commit(f, tmp, path) != 0) {
        snprintf(err, errlen, "writing %s failed: %s (disk full?)", path, strerror(errno));
        return -1;
    }
    return 0;
}
