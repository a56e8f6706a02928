/* msprof-style CSV files:
 *   op_summary.csv     one row per device task (msprof's op_summary columns, plus the
 *                      engine, host launch time, bytes, bandwidth and memory type)
 *   op_statistic.csv   one row per op type and device (Count, Total/Min/Avg/Max, Ratio)
 *   memcpy_summary.csv copies by device, direction and pinned/pageable, with GB/s
 *   memory_record.csv  every allocation and free with the pool's figures after it
 *   api_statistic.csv  host time per API (launches and syncs)
 *   offload_summary.csv offload and collective events by category (when any)
 * Names (op, API, category, memory event) come from the raw files, i.e. from the
 * profiled program: they are written with hwi_csv_field (RFC 4180 quoting, controls
 * replaced), so one row stays one line with the columns of the header. */
#include "prof_data.h"
#include "base/out_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* one CSV at a time: its path and temporary (base/out_file.h) */
static char csv_path[1200], csv_tmp[1300];

static FILE *open_csv(const char *dir, const char *name, char *err, size_t errlen)
{
    snprintf(csv_path, sizeof csv_path, "%s/%s", dir, name);
    FILE *f = hwi_out_open(csv_path, csv_tmp, sizeof csv_tmp);
    if (!f) snprintf(err, errlen, "cannot write %s: %s", csv_path, strerror(errno));
    return f;
}

static int close_csv(FILE *f, const char *name, char *err, size_t errlen)
{
    if (hwi_out_commit(f, csv_tmp, csv_path) != 0) {
        snprintf(err, errlen, "writing %s failed: %s (disk full?)", name, strerror(errno));
        return -1;
    }
    return 0;
}

static void shape(char *buf, size_t len, const pop *o)
{
    buf[0] = 0;
    if (strcmp(o->kind, "kernel")) return;
    if (!strcmp(o->name, "MatMul"))
        snprintf(buf, len, "\"%llu,%llu;%llu,%llu\"", (unsigned long long)o->a,
                 (unsigned long long)o->b, (unsigned long long)o->b, (unsigned long long)o->c);
    else if (!strcmp(o->name, "Sum"))
        snprintf(buf, len, "\"%llu,%llu,%llu\"", (unsigned long long)o->a,
                 (unsigned long long)o->b, (unsigned long long)o->c);
    else
        snprintf(buf, len, "\"%llu\"", (unsigned long long)o->a);
}

static int by_start(const void *a, const void *b)
{
    const pop *x = *(pop *const *)a, *y = *(pop *const *)b;
    return x->dstart < y->dstart ? -1 : x->dstart > y->dstart;
}

static int op_summary(const prof_data *d, const char *dir, char *err, size_t errlen)
{
    FILE *f = open_csv(dir, "op_summary.csv", err, errlen);
    if (!f) return -1;
    fprintf(f, "Device_id,Process ID,Stream ID,Task ID,Op Name,OP Type,Task Type,Engine,"
            "Task Start Time(us),Task Duration(us),Task Wait Time(us),Host Launch Time(us),"
            "Host Launch Duration(us),Input Shapes,Size(B),Bandwidth(GB/s),Memory Type\n");
    pop **v = malloc((d->nops ? d->nops : 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < d->nops; i++)
        if (d->ops[i].on_device) v[n++] = &d->ops[i];
    if (v) qsort(v, n, sizeof *v, by_start);
    for (size_t i = 0; i < n; i++) {
        const pop *o = v[i];
        char sh[96];
        shape(sh, sizeof sh, o);
        int copy = !strcmp(o->kind, "copy");
        uint64_t dur = o->dend - o->dstart;
        fprintf(f, "%d,%ld,%u,%u,", o->device, d->files[o->file].pid, o->stream, o->task_id);
        hwi_csv_field(f, o->name);
        fputc(',', f);
        hwi_csv_field(f, o->name);
        fprintf(f, ",%s,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%s,", task_type_of(o),
                engine_names[o->engine], rel_us(d, o->dstart),
                (double)dur / 1e3, (double)o->wait / 1e3, rel_us(d, o->t0),
                (double)(o->t1 - o->t0) / 1e3, sh);
        if (copy || !strcmp(o->kind, "memset"))
            fprintf(f, "%llu,%.3f,%s\n", (unsigned long long)o->bytes,
                    dur ? (double)o->bytes / (double)dur : 0.0,
                    !copy || o->sub == 3 ? "device" : o->pinned ? "pinned" : "pageable");
        else
            fprintf(f, ",,\n");
    }
    free(v);
    return close_csv(f, "op_summary.csv", err, errlen);
}

static int op_statistic(const prof_figures *pf, const char *dir, char *err, size_t errlen)
{
    FILE *f = open_csv(dir, "op_statistic.csv", err, errlen);
    if (!f) return -1;
    fprintf(f, "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"
            "Max Time(us),Ratio(%%)\n");
    uint64_t all = 0;
    for (int i = 0; i < pf->nops; i++)
        if (strcmp(pf->ops[i].task_type, "EVENT_WAIT")) all += pf->ops[i].total_ns;
    for (int i = 0; i < pf->nops; i++) {
        const op_stat *s = &pf->ops[i];
        int wait = !strcmp(s->task_type, "EVENT_WAIT");
        fprintf(f, "%d,", s->device);
        hwi_csv_field(f, s->name);
        fprintf(f, ",%s,%llu,%.3f,%.3f,%.3f,%.3f,%.2f\n", s->task_type,
                (unsigned long long)s->count, (double)s->total_ns / 1e3, (double)s->min_ns / 1e3,
                (double)s->total_ns / 1e3 / (double)s->count, (double)s->max_ns / 1e3,
                wait || !all ? 0.0 : 100.0 * (double)s->total_ns / (double)all);
    }
    return close_csv(f, "op_statistic.csv", err, errlen);
}

static int memcpy_summary(const prof_figures *pf, const char *dir, char *err, size_t errlen)
{
    FILE *f = open_csv(dir, "memcpy_summary.csv", err, errlen);
    if (!f) return -1;
    fprintf(f, "Device_id,Direction,Memory Type,Count,Total Size(B),Total Time(us),"
            "Avg Time(us),Min Time(us),Max Time(us),Avg Bandwidth(GB/s)\n");
    for (int i = 0; i < pf->ncopies; i++) {
        const copy_stat *c = &pf->copies[i];
        int host = c->direction[0] == 'H' || c->direction[3] == 'H';
        fprintf(f, "%d,%s,%s,%llu,%llu,%.3f,%.3f,%.3f,%.3f,%.3f\n", c->device, c->direction,
                !host ? "device" : c->pinned ? "pinned" : "pageable", (unsigned long long)c->count,
                (unsigned long long)c->bytes, (double)c->total_ns / 1e3,
                (double)c->total_ns / 1e3 / (double)c->count, (double)c->min_ns / 1e3,
                (double)c->max_ns / 1e3,
                c->total_ns ? (double)c->bytes / (double)c->total_ns : 0.0);
    }
    return close_csv(f, "memcpy_summary.csv", err, errlen);
}

static int memory_record(const prof_data *d, const char *dir, char *err, size_t errlen)
{
    FILE *f = open_csv(dir, "memory_record.csv", err, errlen);
    if (!f) return -1;
    fprintf(f, "Device_id,Process ID,Timestamp(us),Event,Address,Size(B),Total Allocated(KB),"
            "Total Reserved(KB)\n");
    for (size_t i = 0; i < d->nmems; i++) {
        const pmem *m = &d->mems[i];
        fprintf(f, "%d,%ld,%.3f,", m->device, d->files[m->file].pid, rel_us(d, m->t));
        hwi_csv_field(f, m->kind);
        fputc(',', f);
        hwi_csv_field(f, m->addr);
        fprintf(f, ",%llu,%.3f,%.3f\n", (unsigned long long)m->bytes,
                (double)m->allocated / 1024.0, (double)m->reserved / 1024.0);
    }
    return close_csv(f, "memory_record.csv", err, errlen);
}

typedef struct agg { const char *name; const char *level; uint64_t n, tot, mn, mx; } agg;

static void agg_add(agg *a, int *na, int cap, const char *name, const char *level, uint64_t dur)
{
    int i = 0;
    while (i < *na && !(a[i].name == name && a[i].level == level)) i++;
    if (i == *na) {
        if (*na == cap) return;
        a[(*na)++] = (agg){name, level, 0, 0, UINT64_MAX, 0};
    }
    a[i].n++;
    a[i].tot += dur;
    if (dur < a[i].mn) a[i].mn = dur;
    if (dur > a[i].mx) a[i].mx = dur;
}

static int api_statistic(const prof_data *d, const char *dir, char *err, size_t errlen)
{
    FILE *f = open_csv(dir, "api_statistic.csv", err, errlen);
    if (!f) return -1;
    agg a[256];
    int na = 0;
    for (size_t i = 0; i < d->nops; i++)
        agg_add(a, &na, 256, d->ops[i].name, "launch", d->ops[i].t1 - d->ops[i].t0);
    for (size_t i = 0; i < d->nsyncs; i++)
        agg_add(a, &na, 256, d->syncs[i].name, "sync", d->syncs[i].t1 - d->syncs[i].t0);
    fprintf(f, "Level,API Name,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us)\n");
    for (int i = 0; i < na; i++) {
        fprintf(f, "%s,", a[i].level);
        hwi_csv_field(f, a[i].name);
        fprintf(f, ",%llu,%.3f,%.3f,%.3f,%.3f\n", (unsigned long long)a[i].n,
                (double)a[i].tot / 1e3, (double)a[i].mn / 1e3,
                (double)a[i].tot / 1e3 / (double)a[i].n, (double)a[i].mx / 1e3);
    }
    return close_csv(f, "api_statistic.csv", err, errlen);
}

static int offload_summary(const prof_data *d, const char *dir, char *err, size_t errlen)
{
    if (!d->nexts) return 0;
    FILE *f = open_csv(dir, "offload_summary.csv", err, errlen);
    if (!f) return -1;
    agg a[128];
    uint64_t bytes[128] = {0};
    int na = 0;
    for (size_t i = 0; i < d->nexts; i++) {
        int before = na;
        agg_add(a, &na, 128, d->exts[i].name, d->exts[i].cat, d->exts[i].t1 - d->exts[i].t0);
        for (int k = 0; k < na; k++)
            if (a[k].name == d->exts[i].name && a[k].level == d->exts[i].cat)
                bytes[k] += d->exts[i].bytes;
        (void)before;
    }
    fprintf(f, "Category,Name,Count,Total Time(us),Avg Time(us),Max Time(us),Total Size(B)\n");
    for (int i = 0; i < na; i++) {
        hwi_csv_field(f, a[i].level);
        fputc(',', f);
        hwi_csv_field(f, a[i].name);
        fprintf(f, ",%llu,%.3f,%.3f,%.3f,%llu\n", (unsigned long long)a[i].n,
                (double)a[i].tot / 1e3, (double)a[i].tot / 1e3 / (double)a[i].n,
                (double)a[i].mx / 1e3, (unsigned long long)bytes[i]);
    }
    return close_csv(f, "offload_summary.csv", err, errlen);
}

int export_csvs(const prof_data *d, const prof_figures *f, const char *dir, char *err,
                size_t errlen)
{
    if (op_summary(d, dir, err, errlen) || op_statistic(f, dir, err, errlen) ||
        memcpy_summary(f, dir, err, errlen) || memory_record(d, dir, err, errlen) ||
        api_statistic(d, dir, err, errlen) || offload_summary(d, dir, err, errlen))
        return -1;
    return 0;
}
