/* Loading the raw files and deriving device spans.
 *
 * A launch's device span comes from the backend's activity record (start and end the
 * device reported) or, on backends without them, from a marker: its end is the time the
 * marker was reached and its start the later of the previous end on the same stream
 * (streams are in order) and the time the host submitted it (one marker per launch,
 * not two). */
#define _GNU_SOURCE
#include "prof_data.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const engine_names[ENG_COUNT] = {"compute", "copy H2D", "copy D2H", "host callback",
                                             "stream wait"};

#define PUSH(arr, n, cap, val)                                              \
    do {                                                                    \
        if ((n) == (cap)) {                                                 \
            size_t nc_ = (cap) ? (cap) * 2 : 256;                           \
            void *p_ = realloc((arr), nc_ * sizeof *(arr));                 \
            if (!p_) return -1;                                             \
            (arr) = p_;                                                     \
            (cap) = nc_;                                                    \
        }                                                                   \
        (arr)[(n)++] = (val);                                               \
    } while (0)

typedef struct caps { size_t ops, syncs, mems, exts; int threads, streams; } caps;

/* Names repeat a lot: keep one copy of each (linear probe over a small table). */
static const char *intern(const char *s)
{
    static char **tab;
    static size_t n, cap;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(tab[i], s)) return tab[i];
    if (n == cap) {
        size_t nc = cap ? cap * 2 : 64;
        char **nt = realloc(tab, nc * sizeof *nt);
        if (!nt) return "?";
        tab = nt;
        cap = nc;
    }
    tab[n] = strdup(s);
    return tab[n] ? tab[n++] : "?";
}

static int split(char *line, char **f, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, "\t\n", &save); t && n < max; t = strtok_r(NULL, "\t\n", &save))
        f[n++] = t;
    return n;
}

static uint64_t u64(const char *s) { return strtoull(s, NULL, 10); }

static int header_line(pfile *pf, char **f, int n, caps *c)
{
    if (n >= 2 && !strcmp(f[0], "#pid")) pf->pid = atol(f[1]);
    else if (n >= 2 && !strcmp(f[0], "#session")) pf->session = atoi(f[1]);
    else if (n >= 2 && !strcmp(f[0], "#backend")) snprintf(pf->backend, sizeof pf->backend, "%s", f[1]);
    else if (n >= 2 && !strcmp(f[0], "#start_ns")) pf->start_ns = u64(f[1]);
    else if (n >= 2 && !strcmp(f[0], "#flush_ns")) pf->flush_ns = u64(f[1]);
    else if (n >= 2 && !strcmp(f[0], "#events")) pf->events = u64(f[1]);
    else if (n >= 2 && !strcmp(f[0], "#dropped")) pf->dropped = u64(f[1]);
    else if (n >= 2 && !strcmp(f[0], "#device_ts_missing")) pf->missing = u64(f[1]);
    else if (n >= 3 && !strcmp(f[0], "#thread")) {
        pthread_info t = {(uint32_t)atoi(f[1]), atol(f[2]), ""};
        if (n >= 4) snprintf(t.name, sizeof t.name, "%s", f[3]);
        size_t nt = (size_t)pf->nthreads, ct = (size_t)c->threads;
        PUSH(pf->threads, nt, ct, t);
        pf->nthreads = (int)nt;
        c->threads = (int)ct;
    } else if (n >= 4 && !strcmp(f[0], "#stream")) {
        pstream_info s = {(uint32_t)atoi(f[1]), atoi(f[2]), atoi(f[3])};
        size_t ns = (size_t)pf->nstreams, cs = (size_t)c->streams;
        PUSH(pf->streams, ns, cs, s);
        pf->nstreams = (int)ns;
        c->streams = (int)cs;
    }
    return 0;
}

static int record_line(prof_data *d, int file, char **f, int n, caps *c)
{
    if (!strcmp(f[0], "W") && n >= 16) {
        pop o = {.file = file, .thread = (uint32_t)atoi(f[1]), .name = intern(f[3]),
                 .device = atoi(f[4]), .stream = (uint32_t)atoi(f[5]), .t0 = u64(f[6]),
                 .t1 = u64(f[7]), .dev_end = u64(f[8]), .bytes = u64(f[9]), .sub = atoi(f[10]),
                 .pinned = atoi(f[11]), .failed = atoi(f[12]), .a = u64(f[13]),
                 .b = u64(f[14]), .c = u64(f[15]), .dev_start = n >= 17 ? u64(f[16]) : 0};
        snprintf(o.kind, sizeof o.kind, "%s", f[2]);
        PUSH(d->ops, d->nops, c->ops, o);
    } else if (!strcmp(f[0], "S") && n >= 8) {
        psync s = {file, (uint32_t)atoi(f[1]), intern(f[2]), atoi(f[3]), (uint32_t)atoi(f[4]),
                   u64(f[5]), u64(f[6]), atoi(f[7])};
        PUSH(d->syncs, d->nsyncs, c->syncs, s);
    } else if (!strcmp(f[0], "M") && n >= 9) {
        pmem m = {file, (uint32_t)atoi(f[1]), intern(f[2]), atoi(f[3]), u64(f[4]), u64(f[5]),
                  u64(f[6]), u64(f[7]), ""};
        snprintf(m.addr, sizeof m.addr, "%s", f[8]);
        PUSH(d->mems, d->nmems, c->mems, m);
    } else if (!strcmp(f[0], "X") && n >= 8) {
        pext x = {file, (uint32_t)atoi(f[1]), intern(f[2]), intern(f[3]), atoi(f[4]), u64(f[5]),
                  u64(f[6]), u64(f[7])};
        PUSH(d->exts, d->nexts, c->exts, x);
    }
    return 0;
}

static int load_file(prof_data *d, const char *path, caps *c, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    pfile pf = {0};
    caps fc = {0};
    size_t nf = (size_t)d->nfiles;
    int file = d->nfiles;
    char *line = NULL, *f[20];
    size_t cap = 0;
    int rc = 0, magic = 0;
    while (rc == 0 && getline(&line, &cap, fp) > 0) {
        if (!magic) {
            magic = !strncmp(line, "#hwrt-prof\t", 11);
            if (!magic) break;
            continue;
        }
        int n = split(line, f, 20);
        if (n == 0) continue;
        for (int i = 0; i < n; i++) hwi_tsv_unescape(f[i]);   /* names: prof_writer.c */
        rc = f[0][0] == '#' ? header_line(&pf, f, n, &fc) : record_line(d, file, f, n, c);
    }
    free(line);
    fclose(fp);
    if (!magic) {
        snprintf(err, errlen, "%s is not an hwrt profiler raw file (no #hwrt-prof header)", path);
        return -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "out of memory reading %s", path);
        return -1;
    }
    pfile *nfs = realloc(d->files, (nf + 1) * sizeof *nfs);
    if (!nfs) return -1;
    d->files = nfs;
    d->files[d->nfiles++] = pf;
    return 0;
}

static int engine_of(const pop *o)
{
    if (!strcmp(o->kind, "copy")) return o->sub == 1 ? ENG_H2D : o->sub == 2 ? ENG_D2H : ENG_COMPUTE;
    if (!strcmp(o->kind, "hostfn")) return ENG_HOST;
    if (!strcmp(o->kind, "wait")) return ENG_WAIT;
    return ENG_COMPUTE;
}

static int by_stream_end(const void *a, const void *b)
{
    const pop *x = *(pop *const *)a, *y = *(pop *const *)b;
    if (x->file != y->file) return x->file - y->file;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    if (x->dev_end != y->dev_end) return x->dev_end < y->dev_end ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int derive(prof_data *d)
{
    pop **v = malloc((d->nops ? d->nops : 1) * sizeof *v);
    if (!v) return -1;
    size_t n = 0;
    for (size_t i = 0; i < d->nops; i++) {
        pop *o = &d->ops[i];
        o->engine = engine_of(o);
        if (o->dev_end && !o->failed && strcmp(o->kind, "record")) v[n++] = o;
    }
    qsort(v, n, sizeof *v, by_stream_end);
    uint64_t prev = 0;
    uint32_t task = 0;
    for (size_t i = 0; i < n; i++) {
        pop *o = v[i];
        if (i == 0 || v[i - 1]->file != o->file || v[i - 1]->stream != o->stream) {
            prev = 0;
            task = 0;
        }
        uint64_t s = o->dev_start ? o->dev_start : o->t0;
        if (s < prev) s = prev;            /* in order: not before the previous end */
        if (s > o->dev_end) s = o->dev_end;
        o->wait = prev && s > prev ? s - prev : 0;
        o->dstart = s;
        o->dend = o->dev_end;
        o->on_device = 1;
        o->task_id = task++;
        prev = o->dev_end;
    }
    free(v);
    return 0;
}

static void bounds(prof_data *d)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < d->nfiles; i++) {
        if (d->files[i].start_ns && d->files[i].start_ns < lo) lo = d->files[i].start_ns;
        if (d->files[i].flush_ns > hi) hi = d->files[i].flush_ns;
    }
    for (size_t i = 0; i < d->nops; i++) {
        if (d->ops[i].t0 < lo) lo = d->ops[i].t0;
        if (d->ops[i].dend > hi) hi = d->ops[i].dend;
    }
    d->base_ns = lo == UINT64_MAX ? 0 : lo;
    d->end_ns = hi;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int prof_load(const char *dir, prof_data *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    snprintf(d->dir, sizeof d->dir, "%s", dir);
    char raw[1100];
    snprintf(raw, sizeof raw, "%s/raw", dir);
    DIR *dp = opendir(raw);
    if (!dp) {
        snprintf(err, errlen, "no collected data in %s (%s); collect first with "
                 "hwrt-prof --application=\"./app args\" --output=%s", raw, strerror(errno), dir);
        return -1;
    }
    char **names = NULL;
    size_t nn = 0, cn = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".tsv") && !strncmp(e->d_name, "prof_", 5)) {
            char *s = strdup(e->d_name);
            if (nn == cn) { cn = cn ? cn * 2 : 16; names = realloc(names, cn * sizeof *names); }
            if (names && s) names[nn++] = s;
        }
    }
    closedir(dp);
    if (nn == 0) {
        snprintf(err, errlen, "no raw files (prof_*.tsv) in %s; collect first with "
                 "hwrt-prof --application=\"./app args\" --output=%s", raw, dir);
        free(names);
        return -1;
    }
    qsort(names, nn, sizeof *names, name_cmp);
    caps c = {0};
    int rc = 0;
    for (size_t i = 0; i < nn; i++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", raw, names[i]);
        if (rc == 0 && load_file(d, path, &c, err, errlen) != 0) rc = -1;
        free(names[i]);
    }
    free(names);
    if (rc == 0 && derive(d) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    bounds(d);
    return rc;
}

void prof_free(prof_data *d)
{
    for (int i = 0; i < d->nfiles; i++) {
        free(d->files[i].threads);
        free(d->files[i].streams);
    }
    free(d->files);
    free(d->ops);
    free(d->syncs);
    free(d->mems);
    free(d->exts);
    memset(d, 0, sizeof *d);
}
