/* Figures and the verdict. The rules follow the seed's section 3 and 5: a high Memcpy
 * share of device time means host<->device copies are the bottleneck (fewer copies in
 * the loop, pinned memory, offload tuning); frequent syncs stall the pipeline; offload
 * is a fallback whose stalls show up as fetch time. */
#include "prof_data.h"

#include <stdlib.h>
#include <string.h>

const char *copy_direction(int sub)
{
    return sub == 1 ? "HtoD" : sub == 2 ? "DtoH" : sub == 3 ? "DtoD" : "HtoH";
}

const char *task_type_of(const pop *o)
{
    if (!strcmp(o->kind, "copy")) return "MEMCPY";
    if (!strcmp(o->kind, "memset")) return "MEMSET";
    if (!strcmp(o->kind, "hostfn")) return "HOST_FUNC";
    if (!strcmp(o->kind, "wait")) return "EVENT_WAIT";
    return "AI_CORE";
}

static op_stat *find_op(prof_figures *f, const pop *o)
{
    for (int i = 0; i < f->nops; i++)
        if (f->ops[i].name == o->name && f->ops[i].device == o->device) return &f->ops[i];
    op_stat *n = realloc(f->ops, (size_t)(f->nops + 1) * sizeof *n);
    if (!n) return NULL;
    f->ops = n;
    n[f->nops] = (op_stat){o->name, task_type_of(o), o->device, 0, 0, UINT64_MAX, 0};
    return &f->ops[f->nops++];
}

static copy_stat *find_copy(prof_figures *f, const pop *o)
{
    const char *dir = copy_direction(o->sub);
    for (int i = 0; i < f->ncopies; i++)
        if (f->copies[i].direction == dir && f->copies[i].pinned == o->pinned &&
            f->copies[i].device == o->device)
            return &f->copies[i];
    copy_stat *n = realloc(f->copies, (size_t)(f->ncopies + 1) * sizeof *n);
    if (!n) return NULL;
    f->copies = n;
    n[f->ncopies] = (copy_stat){o->device, dir, o->pinned, 0, 0, 0, UINT64_MAX, 0};
    return &f->copies[f->ncopies++];
}

static void add_op(prof_figures *f, const pop *o)
{
    uint64_t dur = o->dend - o->dstart;
    op_stat *s = find_op(f, o);
    if (s) {
        s->count++;
        s->total_ns += dur;
        if (dur < s->min_ns) s->min_ns = dur;
        if (dur > s->max_ns) s->max_ns = dur;
    }
    if (o->engine == ENG_WAIT) return;            /* a stalled stream, not device work */
    f->device_ns += dur;
    if (!strcmp(o->kind, "kernel")) f->kernel_ns += dur;
    else if (!strcmp(o->kind, "memset")) f->memset_ns += dur;
    else if (!strcmp(o->kind, "hostfn")) f->hostfn_ns += dur;
    else if (!strcmp(o->kind, "copy")) {
        f->memcpy_ns += dur;
        copy_stat *c = find_copy(f, o);
        if (c) {
            c->count++;
            c->bytes += o->bytes;
            c->total_ns += dur;
            if (dur < c->min_ns) c->min_ns = dur;
            if (dur > c->max_ns) c->max_ns = dur;
        }
        if (o->sub == 1 || o->sub == 2) {
            f->hd_copy_ns += dur;
            f->hd_bytes += o->bytes;
            if (o->pinned) { f->pinned_bytes += o->bytes; f->pinned_ns += dur; }
            else { f->pageable_bytes += o->bytes; f->pageable_ns += dur; }
        }
    }
}

typedef struct ival { int file, device; uint64_t s, e; } ival;

static int ival_cmp(const void *a, const void *b)
{
    const ival *x = a, *y = b;
    if (x->file != y->file) return x->file - y->file;
    if (x->device != y->device) return x->device - y->device;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* Busy time = union of one device's activity over all its engines; gaps inside its
 * first-to-last span are idle time. Summed over devices (and processes). */
static void busy_and_gaps(const prof_data *d, prof_figures *f)
{
    ival *v = malloc((d->nops ? d->nops : 1) * sizeof *v);
    if (!v) return;
    size_t n = 0;
    for (size_t i = 0; i < d->nops; i++)
        if (d->ops[i].on_device && d->ops[i].engine != ENG_WAIT)
            v[n++] = (ival){d->ops[i].file, d->ops[i].device, d->ops[i].dstart, d->ops[i].dend};
    qsort(v, n, sizeof *v, ival_cmp);
    uint64_t cs = 0, ce = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        int fresh = i == 0 || v[i].file != v[i - 1].file || v[i].device != v[i - 1].device;
        if (fresh) {
            if (i) { f->busy_ns += ce - cs; f->span_ns += ce - first; }
            cs = first = v[i].s;
            ce = v[i].e;
            continue;
        }
        if (v[i].s > ce) {
            uint64_t gap = v[i].s - ce;
            f->busy_ns += ce - cs;
            f->idle_ns += gap;
            f->gaps++;
            if (gap > 100000) f->long_gaps++;
            if (gap > f->longest_gap_ns) f->longest_gap_ns = gap;
            cs = v[i].s;
            ce = v[i].e;
        } else if (v[i].e > ce) {
            ce = v[i].e;
        }
    }
    if (n) {
        f->busy_ns += ce - cs;
        f->span_ns += ce - first;
    }
    free(v);
}

static int stat_cmp(const void *a, const void *b)
{
    const op_stat *x = a, *y = b;
    return x->total_ns > y->total_ns ? -1 : x->total_ns < y->total_ns;
}

static void host_figures(const prof_data *d, prof_figures *f)
{
    uint64_t lo = UINT64_MAX, hi = 0;
#define SPAN(a, b) do { if ((a) < lo) lo = (a); if ((b) > hi) hi = (b); } while (0)
    for (size_t i = 0; i < d->nops; i++) {
        f->launches++;
        f->launch_ns += d->ops[i].t1 - d->ops[i].t0;
        SPAN(d->ops[i].t0, d->ops[i].t1);
    }
    for (size_t i = 0; i < d->nsyncs; i++) {
        f->syncs++;
        f->sync_ns += d->syncs[i].t1 - d->syncs[i].t0;
        SPAN(d->syncs[i].t0, d->syncs[i].t1);
    }
    for (size_t i = 0; i < d->nmems; i++) {
        SPAN(d->mems[i].t, d->mems[i].t);
        if (d->mems[i].allocated > f->peak_allocated) f->peak_allocated = d->mems[i].allocated;
        if (d->mems[i].reserved > f->peak_reserved) f->peak_reserved = d->mems[i].reserved;
    }
    for (size_t i = 0; i < d->nexts; i++) {
        const pext *x = &d->exts[i];
        uint64_t dur = x->t1 - x->t0;
        SPAN(x->t0, x->t1);
        if (!strncmp(x->cat, "offload", 7)) f->offload_events++;
        if (!strcmp(x->cat, "offload_stall")) f->offload_stall_ns += dur;
        if (!strcmp(x->cat, "offload_fetch")) {
            f->offload_fetch_ns += dur;
            f->offload_fetch_bytes += x->bytes;
        }
        if (!strcmp(x->cat, "offload_evict")) f->offload_evict_bytes += x->bytes;
        if (!strcmp(x->cat, "collective")) { f->collectives++; f->collective_ns += dur; }
    }
#undef SPAN
    f->host_span_ns = hi > lo ? hi - lo : 0;
}

void prof_compute(const prof_data *d, prof_figures *f)
{
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < d->nops; i++)
        if (d->ops[i].on_device) add_op(f, &d->ops[i]);
    if (f->nops) qsort(f->ops, (size_t)f->nops, sizeof *f->ops, stat_cmp);   /* NULL when none */
    busy_and_gaps(d, f);
    host_figures(d, f);
    for (int i = 0; i < d->nfiles; i++) {
        f->dropped += d->files[i].dropped;
        f->missing += d->files[i].missing;
    }
}

void prof_figures_free(prof_figures *f)
{
    free(f->ops);
    free(f->copies);
    memset(f, 0, sizeof *f);
}

/* "12.0 KB", "3.5 MB", "1.20 GB" */
static const char *size_str(char *buf, size_t len, uint64_t b)
{
    if (b < 1048576) snprintf(buf, len, "%.1f KB", (double)b / 1024.0);
    else if (b < 1073741824ull) snprintf(buf, len, "%.1f MB", (double)b / 1048576.0);
    else snprintf(buf, len, "%.2f GB", (double)b / 1073741824.0);
    return buf;
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }
static double gbps(uint64_t bytes, uint64_t ns) { return ns ? (double)bytes / (double)ns : 0.0; }

#define LINE(...) do { if (v->nlines < 8) snprintf(v->lines[v->nlines++], sizeof v->lines[0], __VA_ARGS__); } while (0)

static void copy_advice(const prof_figures *f, prof_verdict *v, double memcpy_share,
                        double pageable_share)
{
    uint64_t ncopies = 0;
    char b1[32];
    for (int i = 0; i < f->ncopies; i++) ncopies += f->copies[i].count;
    if (memcpy_share >= 30)
        LINE("fewer copies in the loop: %llu copies moved %s and took %.1f%% of device "
             "time; keep tensors on the device and read results back once, not every step",
             (unsigned long long)ncopies, size_str(b1, sizeof b1, f->hd_bytes), memcpy_share);
    if (memcpy_share >= 10 && pageable_share >= 30) {
        if (f->pinned_bytes)
            LINE("pin host memory (hwrt_host_alloc with HWRT_HOST_PINNED, or "
                 "enable_pinned_mem=True): pageable copies took %.1f%% of host<->device copy "
                 "time at %.2f GB/s vs %.2f GB/s pinned, and each one blocks the host",
                 pageable_share, gbps(f->pageable_bytes, f->pageable_ns),
                 gbps(f->pinned_bytes, f->pinned_ns));
        else
            LINE("pin host memory (hwrt_host_alloc with HWRT_HOST_PINNED, or "
                 "enable_pinned_mem=True): all %s of host<->device copies came from "
                 "pageable memory (%.2f GB/s), and each such copy blocks the host",
                 size_str(b1, sizeof b1, f->pageable_bytes), gbps(f->pageable_bytes, f->pageable_ns));
    }
}

void prof_verdict_make(const prof_figures *f, prof_verdict *v)
{
    memset(v, 0, sizeof *v);
    double memcpy_share = pct(f->memcpy_ns, f->device_ns);
    double kernel_share = pct(f->kernel_ns, f->device_ns);
    double pageable_share = pct(f->pageable_ns, f->hd_copy_ns);
    double idle_share = pct(f->idle_ns, f->span_ns);
    /* stalls are reported explicitly (fetch spans include asynchronous launches) */
    uint64_t stall_ns = f->offload_stall_ns;
    double stall_share = pct(stall_ns, f->host_span_ns);
    double sync_share = pct(f->sync_ns, f->host_span_ns);
    char b1[32], b2[32];
    const char *kind;
    if (f->device_ns == 0 && f->offload_events == 0) kind = "no device work recorded";
    else if (stall_share >= 10) kind = "offload-bound";
    /* before the shares of device time: a device idle most of the run is waiting on the
     * host, whatever its little work was (copies or kernels) */
    else if (idle_share >= 50) kind = "device mostly idle / host-bound (the device waits on the host)";
    else if (memcpy_share >= 50) kind = "copy-bound";
    else if (kernel_share >= 50) kind = "compute-bound";
    else kind = "balanced";
    snprintf(v->headline, sizeof v->headline,
             "%s: Memcpy %.1f%% of device time, kernels %.1f%%, pageable %.1f%% of copy time, "
             "device idle %.1f%% of its span, offload stalls %.1f%% of host time", kind,
             memcpy_share, kernel_share, pageable_share, idle_share, stall_share);
    copy_advice(f, v, memcpy_share, pageable_share);
    if (stall_share >= 5 || (f->offload_fetch_bytes && stall_share >= 1))   /* seed 4.3 */
        LINE("raise offload_cpu_size and prefetch (prefetch_depth, or hwrt offload prefetch "
             "before use): offload stalls blocked the host %.1f ms (%.1f%% of host time); "
             "%s fetched on demand, %s evicted", (double)stall_ns / 1e6, stall_share, size_str(b1, sizeof b1,
             f->offload_fetch_bytes), size_str(b2, sizeof b2, f->offload_evict_bytes));
    if (idle_share >= 30)
        LINE("keep the device fed: it sat idle %.1f%% of its span in %llu gaps (%llu over "
             "100 us, longest %.2f ms) waiting for the host to submit work; queue more work "
             "per step and launch ahead of syncs", idle_share, (unsigned long long)f->gaps,
             (unsigned long long)f->long_gaps, (double)f->longest_gap_ns / 1e6);
    if (f->syncs >= 10 && sync_share >= 10 && (sync_share >= 20 || f->syncs * 10 >= f->launches))
        LINE("fewer syncs: %llu host syncs for %llu launches blocked the host %.1f ms "
             "(%.1f%% of host time); synchronize only before reading results",
             (unsigned long long)f->syncs, (unsigned long long)f->launches,
             (double)f->sync_ns / 1e6, sync_share);
    if (kernel_share >= 50 && memcpy_share < 30)
        LINE("kernels take %.1f%% of device time: copies are not the bottleneck; speed up "
             "the top kernels (larger batches, fused small ops)", kernel_share);
    if (f->dropped)
        LINE("%llu events were dropped (HWRT_PROFILE_MAX_EVENTS reached): figures cover the "
             "kept ones only; raise the cap", (unsigned long long)f->dropped);
    if (v->nlines == 0)
        LINE("nothing stands out: no rule of the seed's section 3 fired");
}

void prof_verdict_print(FILE *out, const prof_figures *f, const prof_verdict *v)
{
    fputs("verdict: ", out);               /* lines may quote op names: terminal-safe */
    hwi_term_str(out, v->headline, -1);
    fputc('\n', out);
    for (int i = 0; i < v->nlines; i++) {
        fputs("  - ", out);
        hwi_term_str(out, v->lines[i], -1);
        fputc('\n', out);
    }
    if (f->dropped || f->missing)
        fprintf(out, "  note: %llu events dropped, %llu launches without a device timestamp\n",
                (unsigned long long)f->dropped, (unsigned long long)f->missing);
}

void print_op_table(FILE *out, const prof_figures *f)
{
    fprintf(out, "%-8s %18s %8s %16s %16s %16s %6s  %-10s %s\n", "time(%)",
            "total_duration(us)", "count", "avg_duration(us)", "min_duration(us)",
            "max_duration(us)", "device", "task_type", "op_name");
    uint64_t all = 0;
    for (int i = 0; i < f->nops; i++)
        if (strcmp(f->ops[i].task_type, "EVENT_WAIT")) all += f->ops[i].total_ns;
    for (int i = 0; i < f->nops; i++) {
        const op_stat *s = &f->ops[i];
        int wait = !strcmp(s->task_type, "EVENT_WAIT");
        fprintf(out, "%-8.2f %18.3f %8llu %16.3f %16.3f %16.3f %6d  %-10s ",
                wait ? 0.0 : pct(s->total_ns, all), (double)s->total_ns / 1e3,
                (unsigned long long)s->count, (double)s->total_ns / 1e3 / (double)s->count,
                (double)s->min_ns / 1e3, (double)s->max_ns / 1e3, s->device, s->task_type);
        hwi_term_str(out, s->name, -1);      /* the op table goes to a terminal or a grep */
        fputc('\n', out);
    }
    fprintf(out, "Memcpy share of device time: %.2f%% (%.3f of %.3f ms); pageable %.2f%% of "
            "host<->device copy time\n", pct(f->memcpy_ns, f->device_ns),
            (double)f->memcpy_ns / 1e6, (double)f->device_ns / 1e6,
            pct(f->pageable_ns, f->hd_copy_ns));
}
