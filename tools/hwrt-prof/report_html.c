/* report.html: one self-contained file (inline CSS, inline script, data embedded as
 * JSON; nothing fetched), rendered by the browser into SVG:
 *   - the verdict and headline figures;
 *   - a timeline with one lane per device engine and stream, and one per host thread;
 *   - a memory-over-time curve per device (allocated and reserved);
 *   - an op breakdown table with bars.
 * Every op is embedded as its own span; the page draws the view with level of detail and
 * zooms and pans (report_page.h). Only a trace of more than REPORT_MAX_SPANS spans is
 * reduced per lane before embedding (spans closer than 1/REPORT_MAX_SPANS of the trace
 * merged, the merged span keeping the name of its longest part). When rendering is done
 * the script sets <body data-rendered="1"> and fills #render-stats (hidden), which the
 * tests read back. */
#include "base/out_file.h"
#include "prof_data.h"
#include "base/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_page.h"   /* REPORT_CSS, REPORT_JS */

#define REPORT_MAX_SPANS 300000

typedef struct span { uint64_t s, e; int name, cat; } span;
typedef struct lane {
    char group[96], name[128];
    int kind;                  /* 0 device, 1 host */
    int file, device, engine;
    uint32_t key;              /* stream (device) or thread index (host) */
    span *v; size_t n, cap;
} lane;

enum { CAT_KERNEL, CAT_H2D, CAT_D2H, CAT_D2D, CAT_MEMSET, CAT_HOSTFN, CAT_WAIT, CAT_LAUNCH,
       CAT_SYNC, CAT_OFFLOAD };

static const char *names[256];
static int nnames;

static int name_idx(const char *s)
{
    for (int i = 0; i < nnames; i++)
        if (names[i] == s || !strcmp(names[i], s)) return i;
    if (nnames == 256) return 255;
    names[nnames] = s;
    return nnames++;
}

static lane *lane_get(lane **lanes, int *n, int kind, int file, int device, int engine,
                      uint32_t key)
{
    for (int i = 0; i < *n; i++) {
        lane *l = &(*lanes)[i];
        if (l->kind == kind && l->file == file && l->device == device && l->engine == engine &&
            l->key == key)
            return l;
    }
    lane *nl = realloc(*lanes, (size_t)(*n + 1) * sizeof *nl);
    if (!nl) return NULL;
    *lanes = nl;
    lane *l = &nl[(*n)++];
    memset(l, 0, sizeof *l);
    l->kind = kind; l->file = file; l->device = device; l->engine = engine; l->key = key;
    return l;
}

static void lane_add(lane *l, uint64_t s, uint64_t e, int name, int cat)
{
    if (!l) return;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 256;
        span *nv = realloc(l->v, nc * sizeof *nv);
        if (!nv) return;
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = (span){s, e, name, cat};
}

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* Merge spans closer than res; a merged span keeps its longest part's name and kind. */
static void lane_reduce(lane *l, uint64_t res)
{
    qsort(l->v, l->n, sizeof *l->v, span_cmp);
    size_t w = 0;
    uint64_t best = 0;
    for (size_t i = 0; i < l->n; i++) {
        span x = l->v[i];
        if (w && x.s <= l->v[w - 1].e + res) {
            span *m = &l->v[w - 1];
            if (x.e - x.s > best) { best = x.e - x.s; m->name = x.name; m->cat = x.cat; }
            if (x.e > m->e) m->e = x.e;
        } else {
            l->v[w++] = x;
            best = x.e - x.s;
        }
    }
    l->n = w;
}

static int op_cat(const pop *o)
{
    if (!strcmp(o->kind, "copy")) return o->sub == 1 ? CAT_H2D : o->sub == 2 ? CAT_D2H : CAT_D2D;
    if (!strcmp(o->kind, "memset")) return CAT_MEMSET;
    if (!strcmp(o->kind, "hostfn")) return CAT_HOSTFN;
    if (!strcmp(o->kind, "wait")) return CAT_WAIT;
    return CAT_KERNEL;
}

static int lane_cmp(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    if (x->file != y->file) return x->file - y->file;
    if (x->kind != y->kind) return y->kind - x->kind;          /* host first */
    if (x->device != y->device) return x->device - y->device;
    if (x->engine != y->engine) return x->engine - y->engine;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int build_lanes(const prof_data *d, lane **lanes)
{
    int n = 0;
    for (size_t i = 0; i < d->nops; i++) {
        const pop *o = &d->ops[i];
        lane *h = lane_get(lanes, &n, 1, o->file, -1, 0, o->thread);
        lane_add(h, o->t0, o->t1, name_idx(o->name), CAT_LAUNCH);
        if (o->on_device)
            lane_add(lane_get(lanes, &n, 0, o->file, o->device, o->engine, o->stream), o->dstart,
                     o->dend, name_idx(o->name), op_cat(o));
    }
    for (size_t i = 0; i < d->nsyncs; i++)
        lane_add(lane_get(lanes, &n, 1, d->syncs[i].file, -1, 0, d->syncs[i].thread),
                 d->syncs[i].t0, d->syncs[i].t1, name_idx(d->syncs[i].name), CAT_SYNC);
    for (size_t i = 0; i < d->nexts; i++)
        lane_add(lane_get(lanes, &n, 1, d->exts[i].file, d->exts[i].device, 1, 0),
                 d->exts[i].t0, d->exts[i].t1, name_idx(d->exts[i].name), CAT_OFFLOAD);
    if (n) qsort(*lanes, (size_t)n, sizeof **lanes, lane_cmp);   /* NULL when none */
    for (int i = 0; i < n; i++) {
        lane *l = &(*lanes)[i];
        const pfile *pf = &d->files[l->file];
        if (l->kind == 0) {
            snprintf(l->group, sizeof l->group, "NPU %d (%s, pid %ld)", l->device, pf->backend,
                     pf->pid);
            snprintf(l->name, sizeof l->name, "%s / stream %u", engine_names[l->engine], l->key);
        } else if (l->engine == 1) {
            snprintf(l->group, sizeof l->group, "Host pid %ld", pf->pid);
            snprintf(l->name, sizeof l->name, "offload/collectives dev %d", l->device);
        } else {
            snprintf(l->group, sizeof l->group, "Host pid %ld", pf->pid);
            snprintf(l->name, sizeof l->name, "thread %u", l->key);
        }
    }
    return n;
}

static void emit_lanes(hwi_jw *j, const prof_data *d, lane *lanes, int n)
{
    /* every op is its own span; only a trace of more than REPORT_MAX_SPANS is reduced
     * (spans closer than 1/REPORT_MAX_SPANS of the trace merged), to keep the page light */
    size_t total = 0;
    for (int i = 0; i < n; i++) total += lanes[i].n;
    uint64_t res = (d->end_ns > d->base_ns ? d->end_ns - d->base_ns : 1) / REPORT_MAX_SPANS;
    hwi_jw_key(j, "lanes");
    hwi_jw_arr(j);
    for (int i = 0; i < n; i++) {
        lane *l = &lanes[i];
        if (total > REPORT_MAX_SPANS) lane_reduce(l, res);
        else qsort(l->v, l->n, sizeof *l->v, span_cmp);
        hwi_jw_obj(j);
        hwi_jw_kstr(j, "group", l->group);
        hwi_jw_kstr(j, "name", l->name);
        hwi_jw_kstr(j, "kind", l->kind ? "host" : "device");
        hwi_jw_key(j, "spans");
        hwi_jw_arr(j);
        for (size_t k = 0; k < l->n; k++) {      /* [start us, duration us, name, kind] */
            hwi_jw_arr(j);
            hwi_jw_fixed(j, rel_us(d, l->v[k].s), 3);
            hwi_jw_fixed(j, (double)(l->v[k].e - l->v[k].s) / 1e3, 3);
            hwi_jw_int(j, l->v[k].name);
            hwi_jw_int(j, l->v[k].cat);
            hwi_jw_close(j);
        }
        hwi_jw_close(j);
        hwi_jw_close(j);
        free(l->v);
    }
    hwi_jw_close(j);
    hwi_jw_key(j, "names");
    hwi_jw_arr(j);
    for (int i = 0; i < nnames; i++) hwi_jw_str(j, names[i]);
    hwi_jw_close(j);
}

static void emit_memory(hwi_jw *j, const prof_data *d)
{
    hwi_jw_key(j, "mem");
    hwi_jw_arr(j);
    for (int fi = 0; fi < d->nfiles; fi++)
        for (int dev = -1; dev < 64; dev++) {
            size_t cnt = 0;
            for (size_t i = 0; i < d->nmems; i++)
                cnt += d->mems[i].file == fi && d->mems[i].device == dev;
            if (!cnt) continue;
            size_t stride = cnt > 4000 ? (cnt + 3999) / 4000 : 1, k = 0;
            char name[96];
            snprintf(name, sizeof name, "NPU %d (pid %ld)", dev, d->files[fi].pid);
            hwi_jw_obj(j);
            hwi_jw_kstr(j, "name", name);
            hwi_jw_key(j, "pts");                 /* [time us, allocated MB, reserved MB] */
            hwi_jw_arr(j);
            for (size_t i = 0; i < d->nmems; i++) {
                const pmem *m = &d->mems[i];
                if (m->file != fi || m->device != dev) continue;
                if (k++ % stride && k != cnt) continue;
                hwi_jw_arr(j);
                hwi_jw_fixed(j, rel_us(d, m->t), 3);
                hwi_jw_fixed(j, (double)m->allocated / 1048576.0, 6);
                hwi_jw_fixed(j, (double)m->reserved / 1048576.0, 6);
                hwi_jw_close(j);
            }
            hwi_jw_close(j);
            hwi_jw_close(j);
        }
    hwi_jw_close(j);
}

static void emit_ops(hwi_jw *j, const prof_figures *pf)
{
    uint64_t all = 0;
    for (int i = 0; i < pf->nops; i++)
        if (strcmp(pf->ops[i].task_type, "EVENT_WAIT")) all += pf->ops[i].total_ns;
    hwi_jw_key(j, "ops");
    hwi_jw_arr(j);
    for (int i = 0; i < pf->nops; i++) {
        const op_stat *s = &pf->ops[i];
        int wait = !strcmp(s->task_type, "EVENT_WAIT");
        hwi_jw_obj(j);
        hwi_jw_kstr(j, "name", s->name);
        hwi_jw_kstr(j, "type", s->task_type);
        hwi_jw_kint(j, "device", s->device);
        hwi_jw_kuint(j, "count", (unsigned long long)s->count);
        hwi_jw_kfixed(j, "total", (double)s->total_ns / 1e3, 3);
        hwi_jw_kfixed(j, "avg", (double)s->total_ns / 1e3 / (double)s->count, 3);
        hwi_jw_kfixed(j, "min", (double)s->min_ns / 1e3, 3);
        hwi_jw_kfixed(j, "max", (double)s->max_ns / 1e3, 3);
        hwi_jw_kfixed(j, "pct", wait || !all ? 0.0 : 100.0 * (double)s->total_ns / (double)all, 2);
        hwi_jw_close(j);
    }
    hwi_jw_close(j);
}

static void emit_summary(hwi_jw *j, const prof_data *d, const prof_figures *pf,
                         const prof_verdict *v)
{
    hwi_jw_key(j, "verdict");
    hwi_jw_obj(j);
    hwi_jw_kstr(j, "headline", v->headline);
    hwi_jw_key(j, "lines");
    hwi_jw_arr(j);
    for (int i = 0; i < v->nlines; i++) hwi_jw_str(j, v->lines[i]);
    hwi_jw_close(j);
    hwi_jw_close(j);
    uint64_t events = 0;
    for (int i = 0; i < d->nfiles; i++) events += d->files[i].events;
    hwi_jw_key(j, "stats");
    hwi_jw_obj(j);
    hwi_jw_kint(j, "processes", d->nfiles);
    hwi_jw_kuint(j, "events", (unsigned long long)events);
    hwi_jw_kuint(j, "dropped", (unsigned long long)pf->dropped);
    hwi_jw_kuint(j, "missing", (unsigned long long)pf->missing);
    hwi_jw_kuint(j, "launches", (unsigned long long)pf->launches);
    hwi_jw_kuint(j, "syncs", (unsigned long long)pf->syncs);
    hwi_jw_kfixed(j, "device_ms", pf->device_ns / 1e6, 3);
    hwi_jw_kfixed(j, "memcpy_ms", pf->memcpy_ns / 1e6, 3);
    hwi_jw_kfixed(j, "kernel_ms", pf->kernel_ns / 1e6, 3);
    hwi_jw_kfixed(j, "idle_ms", pf->idle_ns / 1e6, 3);
    hwi_jw_kfixed(j, "span_ms", pf->span_ns / 1e6, 3);
    hwi_jw_kfixed(j, "sync_ms", pf->sync_ns / 1e6, 3);
    hwi_jw_kfixed(j, "peak_allocated_mb", pf->peak_allocated / 1048576.0, 3);
    hwi_jw_kfixed(j, "peak_reserved_mb", pf->peak_reserved / 1048576.0, 3);
    hwi_jw_kfixed(j, "trace_ms", (d->end_ns - d->base_ns) / 1e6, 3);
    hwi_jw_close(j);
}

int export_report_html(const prof_data *d, const prof_figures *pf, const prof_verdict *v,
                       const char *path, char *err, size_t errlen)
{
    char tmp[1300];
    FILE *f = hwi_out_open(path, tmp, sizeof tmp);    /* never through a planted symlink */
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    nnames = 0;
    lane *lanes = NULL;
    int n = build_lanes(d, &lanes);
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<title>hwrt-prof report</title>\n<style>%s</style></head>\n<body>\n"
            "<h1>hwrt-prof report</h1>\n<div id=\"meta\"></div>\n"
            "<section id=\"verdict\"></section>\n"
            "<h2>Timeline</h2><div id=\"timeline\"></div>\n"
            "<h2>Device memory over time</h2><div id=\"memory\"></div>\n"
            "<h2>Op breakdown</h2><div id=\"ops\"></div>\n"
            "<div id=\"render-stats\"></div>\n"
            "<script>\nconst DATA = ", REPORT_CSS);
    /* the data as JSON that is also safe inside <script> (no "<", ">", "&", U+2028/9) */
    hwi_jw jw, *j = &jw;
    hwi_jw_begin(j, f, 1);
    j->compact = 1;
    j->break_depth = 2;                    /* a line per lane, name, op */
    hwi_jw_obj(j);
    emit_lanes(j, d, lanes, n);
    free(lanes);
    emit_memory(j, d);
    emit_ops(j, pf);
    emit_summary(j, d, pf, v);
    hwi_jw_close(j);
    if (j->bad || j->depth) {
        fclose(f);
        unlink(tmp);
        snprintf(err, errlen, "writing %s: the JSON writer was misused (a bug)", path);
        return -1;
    }
    fprintf(f, ";\n%s</script>\n</body></html>\n", REPORT_JS);
    if (hwi_out_commit(f, tmp, path) != 0) {
        snprintf(err, errlen, "writing %s failed: %s (disk full?)", path, strerror(errno));
        return -1;
    }
    return 0;
}
