/* trace.json in the Chrome Trace Event Format (JSON object form), which Perfetto and
 * chrome://tracing load. Layout:
 *   process "Host pid N"        one track per host thread: launches and syncs, plus one
 *                               track per device for offload / collective events;
 *   process "NPU d (backend)"   one track per engine and stream ("compute · stream 1"),
 *                               and a "device memory" counter (allocated, reserved).
 * Times are microseconds from the earliest session start. */
#include "base/out_file.h"
#include "prof_data.h"
#include "base/json.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

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

static void meta(hwi_jw *j, const char *what, long pid, long tid, const char *name, int sort)
{
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "ph", "M");
    hwi_jw_kstr(j, "name", what);
    hwi_jw_kint(j, "pid", pid);
    hwi_jw_kint(j, "tid", tid);
    hwi_jw_key(j, "args");
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "name", name);
    hwi_jw_close(j);
    hwi_jw_close(j);
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "ph", "M");
    hwi_jw_kstr(j, "name", !strcmp(what, "process_name") ? "process_sort_index" : "thread_sort_index");
    hwi_jw_kint(j, "pid", pid);
    hwi_jw_kint(j, "tid", tid);
    hwi_jw_key(j, "args");
    hwi_jw_obj(j);
    hwi_jw_kint(j, "sort_index", sort);
    hwi_jw_close(j);
    hwi_jw_close(j);
}

static int stream_is_default(const pfile *pf, uint32_t id)
{
    for (int i = 0; i < pf->nstreams; i++)
        if (pf->streams[i].id == id) return pf->streams[i].is_default;
    return 0;
}

static void ext_tracks(hwi_jw *j, const prof_data *d)
{
    long seen[256];
    int ns = 0;
    char name[160];
    for (size_t i = 0; i < d->nexts; i++) {
        const pext *x = &d->exts[i];
        long pid = d->files[x->file].pid, tid = 900000L + (long)x->thread * 100 + x->device + 1;
        int dup = 0;
        for (int k = 0; k < ns && !dup; k++) dup = seen[k] == pid * 1000003L + tid;
        if (dup || ns == 256) continue;
        seen[ns++] = pid * 1000003L + tid;
        snprintf(name, sizeof name, "offload/collectives: thread %u, device %d", x->thread,
                 x->device);
        meta(j, "thread_name", pid, tid, name, 100000 + ns);
    }
}

/* Name every process and track that has events. */
static void metadata(hwi_jw *j, const prof_data *d)
{
    char name[160];
    ext_tracks(j, d);
    for (int fi = 0; fi < d->nfiles; fi++) {
        const pfile *pf = &d->files[fi];
        snprintf(name, sizeof name, "Host pid %ld", pf->pid);
        meta(j, "process_name", pf->pid, 0, name, fi * 100);
        for (int t = 0; t < pf->nthreads; t++) {
            snprintf(name, sizeof name, "thread %u %s (tid %ld)", pf->threads[t].index,
                     pf->threads[t].name, pf->threads[t].os_tid);
            meta(j, "thread_name", pf->pid, pf->threads[t].os_tid, name, (int)t);
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
            meta(j, "process_name", dev_pid(o->file, o->device), 0, name,
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
        for (int k = 0; k < nl && !dup; k++)
            dup = lanes[k].file == o->file && lanes[k].device == o->device &&
                  lanes[k].engine == o->engine && lanes[k].stream == o->stream;
        if (dup || nl == 512) continue;
        lanes[nl++] = (lane){o->file, o->device, o->engine, o->stream};
        snprintf(name, sizeof name, "%s \xc2\xb7 stream %u%s", engine_names[o->engine],
                 o->stream, stream_is_default(&d->files[o->file], o->stream) ? " (default)" : "");
        meta(j, "thread_name", dev_pid(o->file, o->device), lane_tid(o->engine, o->stream),
             name, o->engine * 1000 + (int)o->stream);
    }
}

/* A complete ("X") event's common fields; the caller adds its args and closes both. */
static void x_event(hwi_jw *j, const char *cat, const char *name, long pid, long tid,
                    double ts_us, double dur_us)
{
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "ph", "X");
    hwi_jw_kstr(j, "cat", cat);
    hwi_jw_kstr(j, "name", name);
    hwi_jw_kint(j, "pid", pid);
    hwi_jw_kint(j, "tid", tid);
    hwi_jw_kfixed(j, "ts", ts_us, 3);
    hwi_jw_kfixed(j, "dur", dur_us, 3);
    hwi_jw_key(j, "args");
    hwi_jw_obj(j);
}

static void op_event(hwi_jw *j, const prof_data *d, const pop *o)
{
    double dur = (double)(o->dend - o->dstart) / 1000.0;
    x_event(j, o->kind, o->name, dev_pid(o->file, o->device), lane_tid(o->engine, o->stream),
            rel_us(d, o->dstart), dur);
    hwi_jw_kuint(j, "stream", o->stream);
    hwi_jw_kuint(j, "task_id", o->task_id);
    hwi_jw_kfixed(j, "host_launch_us", rel_us(d, o->t0), 3);
    hwi_jw_kfixed(j, "wait_us", (double)o->wait / 1000.0, 3);
    if (!strcmp(o->kind, "copy")) {
        hwi_jw_kuint(j, "bytes", (unsigned long long)o->bytes);
        hwi_jw_kfixed(j, "GB/s", o->dend > o->dstart ? (double)o->bytes / (double)(o->dend - o->dstart)
                                                    : 0.0, 3);
        hwi_jw_kstr(j, "memory", o->sub == 3 ? "device" : o->pinned ? "pinned" : "pageable");
        hwi_jw_kstr(j, "direction", copy_direction(o->sub));
    } else if (!strcmp(o->kind, "memset")) {
        hwi_jw_kuint(j, "bytes", (unsigned long long)o->bytes);
    } else if (!strcmp(o->kind, "kernel")) {
        char shape[80];
        snprintf(shape, sizeof shape, "%llu,%llu,%llu", (unsigned long long)o->a,
                 (unsigned long long)o->b, (unsigned long long)o->c);
        hwi_jw_kstr(j, "shape", shape);
    }
    hwi_jw_close(j);
    hwi_jw_close(j);
}

static void host_events(hwi_jw *j, const prof_data *d)
{
    for (size_t i = 0; i < d->nops; i++) {
        const pop *o = &d->ops[i];
        const pfile *pf = &d->files[o->file];
        char nm[160];
        snprintf(nm, sizeof nm, "launch %s", o->name);
        x_event(j, "launch", nm, pf->pid, host_tid(pf, o->thread), rel_us(d, o->t0),
                (double)(o->t1 - o->t0) / 1000.0);
        hwi_jw_kint(j, "device", o->device);
        hwi_jw_kuint(j, "stream", o->stream);
        if (o->failed) hwi_jw_kint(j, "failed", 1);
        hwi_jw_close(j);
        hwi_jw_close(j);
    }
    for (size_t i = 0; i < d->nsyncs; i++) {
        const psync *s = &d->syncs[i];
        const pfile *pf = &d->files[s->file];
        x_event(j, "sync", s->name, pf->pid, host_tid(pf, s->thread), rel_us(d, s->t0),
                (double)(s->t1 - s->t0) / 1000.0);
        hwi_jw_kint(j, "device", s->device);
        hwi_jw_kuint(j, "stream", s->stream);
        hwi_jw_close(j);
        hwi_jw_close(j);
    }
    for (size_t i = 0; i < d->nexts; i++) {
        const pext *x = &d->exts[i];
        const pfile *pf = &d->files[x->file];
        x_event(j, x->cat, x->name, pf->pid, 900000L + (long)x->thread * 100 + x->device + 1,
                rel_us(d, x->t0), (double)(x->t1 - x->t0) / 1000.0);
        hwi_jw_kint(j, "device", x->device);
        hwi_jw_kuint(j, "bytes", (unsigned long long)x->bytes);
        hwi_jw_close(j);
        hwi_jw_close(j);
    }
}

static void flow(hwi_jw *j, const char *ph, size_t id, long pid, long tid, double ts)
{
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "ph", ph);
    if (ph[0] == 'f') hwi_jw_kstr(j, "bp", "e");
    hwi_jw_kstr(j, "cat", "flow");
    hwi_jw_kstr(j, "name", "launch");
    hwi_jw_kuint(j, "id", id);
    hwi_jw_kint(j, "pid", pid);
    hwi_jw_kint(j, "tid", tid);
    hwi_jw_kfixed(j, "ts", ts, 3);
    hwi_jw_close(j);
}

/* Flow arrows from each launch slice to the device slice it caused (Perfetto draws them
 * when a slice is selected). Skipped above 500000 launches to bound the file. */
static void flows(hwi_jw *j, const prof_data *d)
{
    if (d->nops > 500000) return;
    for (size_t i = 0; i < d->nops; i++) {
        const pop *o = &d->ops[i];
        if (!o->on_device) continue;
        const pfile *pf = &d->files[o->file];
        flow(j, "s", i + 1, pf->pid, host_tid(pf, o->thread), rel_us(d, o->t0));
        flow(j, "f", i + 1, dev_pid(o->file, o->device), lane_tid(o->engine, o->stream),
             rel_us(d, o->dstart));
    }
}

static void memory_counters(hwi_jw *j, const prof_data *d)
{
    for (size_t i = 0; i < d->nmems; i++) {
        const pmem *m = &d->mems[i];
        hwi_jw_obj(j);
        hwi_jw_kstr(j, "ph", "C");
        hwi_jw_kstr(j, "name", "device memory (MB)");
        hwi_jw_kint(j, "pid", dev_pid(m->file, m->device));
        hwi_jw_kint(j, "tid", 0);
        hwi_jw_kfixed(j, "ts", rel_us(d, m->t), 3);
        hwi_jw_key(j, "args");
        hwi_jw_obj(j);
        hwi_jw_kfixed(j, "allocated", (double)m->allocated / 1048576.0, 6);
        hwi_jw_kfixed(j, "reserved", (double)m->reserved / 1048576.0, 6);
        hwi_jw_close(j);
        hwi_jw_close(j);
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
    hwi_jw jw, *j = &jw;
    hwi_jw_begin(j, f, 0);
    j->compact = 1;
    j->break_depth = 2;                 /* one event per line */
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "displayTimeUnit", "ns");
    hwi_jw_key(j, "otherData");
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "generator", "hwrt-prof");
    hwi_jw_kstr(j, "clock", "CLOCK_MONOTONIC");
    hwi_jw_kuint(j, "base_ns", (unsigned long long)d->base_ns);
    hwi_jw_close(j);
    hwi_jw_key(j, "traceEvents");
    hwi_jw_arr(j);
    metadata(j, d);
    for (size_t i = 0; i < d->nops; i++)
        if (d->ops[i].on_device) op_event(j, d, &d->ops[i]);
    host_events(j, d);
    flows(j, d);
    memory_counters(j, d);
    hwi_jw_close(j);
    hwi_jw_close(j);
    if (hwi_jw_end(j) != 0) {
        fclose(f);
        unlink(tmp);
        snprintf(err, errlen, "writing %s: the JSON writer was misused (a bug)", path);
        return -1;
    }
    if (hwi_out_commit(f, tmp, path) != 0) {
        snprintf(err, errlen, "writing %s failed: %s (disk full?)", path, strerror(errno));
        return -1;
    }
    return 0;
}
