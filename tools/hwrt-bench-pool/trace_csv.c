/* Allocation traces: reading the CSV and replaying it on a simulated device.
 *
 * The header names the columns: action,id,size,stream are required, tag, time_ns and
 * device optional (HWRT_ALLOC_TRACE writes all seven, the generators in scripts/ the
 * first four). Rows: `alloc` (size in bytes), `free` (size empty or ignored), `tag`
 * (hwrt_set_alloc_tag of a live id); stream an index, 0 = the default stream, others
 * are created on first use; lines starting with '#' are comments. */
#include "bench.h"

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

/* Index of name among the trace's interned strings (ids and tags share the table). */
static int intern(trace *t, const char *name)
{
    if ((t->nnames + 1) * 2 > t->nslots) {
        size_t nn = t->nslots ? t->nslots * 2 : 4096;
        int *ns = malloc(nn * sizeof *ns);
        if (!ns) return -1;
        for (size_t i = 0; i < nn; i++) ns[i] = -1;
        for (size_t i = 0; i < t->nslots; i++) {
            if (t->slots[i] < 0) continue;
            size_t j = hash_str(t->names[t->slots[i]]) & (nn - 1);
            while (ns[j] >= 0) j = (j + 1) & (nn - 1);
            ns[j] = t->slots[i];
        }
        free(t->slots);
        t->slots = ns;
        t->nslots = nn;
    }
    size_t j = hash_str(name) & (t->nslots - 1);
    for (; t->slots[j] >= 0; j = (j + 1) & (t->nslots - 1))
        if (!strcmp(t->names[t->slots[j]], name)) return t->slots[j];
    if (t->nnames == t->cap_names) {
        size_t nc = t->cap_names ? t->cap_names * 2 : 4096;
        char **n = realloc(t->names, nc * sizeof *n);
        if (!n) return -1;
        t->names = n;
        t->cap_names = nc;
    }
    if (!(t->names[t->nnames] = strdup(name))) return -1;
    t->slots[j] = (int)t->nnames;
    return (int)t->nnames++;
}

enum { COL_ACTION, COL_ID, COL_SIZE, COL_STREAM, COL_TAG, COL_TIME, COL_DEVICE, NCOLS };
static const char *const col_names[NCOLS] = {"action", "id", "size", "stream", "tag", "time_ns",
                                             "device"};

/* Split line at commas in place, keeping empty fields; returns the field count. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line;;) {
        if (n < max) f[n] = p;
        n++;
        char *c = strchr(p, ',');
        if (!c) return n;
        *c = 0;
        p = c + 1;
    }
}

static int parse_header(const char *path, char *line, int *col)
{
    char *f[32];
    int n = split(line, f, 32);
    for (int k = 0; k < NCOLS; k++) col[k] = -1;
    for (int i = 0; i < n && i < 32; i++) {
        int k = 0;
        while (k < NCOLS && strcmp(f[i], col_names[k])) k++;
        if (k == NCOLS || col[k] >= 0) {
            fprintf(stderr, "%s:1: header column '%s' is %s; the columns are action,id,size,stream "
                    "and optionally tag,time_ns,device\n", path, f[i],
                    k == NCOLS ? "unknown" : "given twice");
            return 0;
        }
        col[k] = i;
    }
    for (int k = 0; k < COL_TAG; k++)
        if (col[k] < 0) {
            fprintf(stderr, "%s:1: header lacks the column '%s' (needed: action,id,size,stream)\n",
                    path, col_names[k]);
            return 0;
        }
    return 1;
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!*s) return 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || *s == '-' || v > max) return 0;
    *out = v;
    return 1;
}

static trace_op *push(trace *t)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 65536;
        trace_op *n = realloc(t->ops, nc * sizeof *n);
        if (!n) return NULL;
        t->ops = n;
        t->cap = nc;
    }
    return &t->ops[t->n++];
}

/* Live bytes as the trace asks for them, to find the peak of requested bytes. */
static int account(trace *t, const trace_op *o, size_t **sizes, size_t *cap, size_t *live)
{
    if ((size_t)o->id >= *cap) {
        size_t nc = *cap ? *cap : 4096;
        while (nc <= (size_t)o->id) nc *= 2;
        size_t *n = realloc(*sizes, nc * sizeof *n);
        if (!n) return 0;
        memset(n + *cap, 0, (nc - *cap) * sizeof *n);
        *sizes = n;
        *cap = nc;
    }
    size_t *s = &(*sizes)[o->id];
    if (o->action == OP_ALLOC) {
        if (*s) return -1;
        *s = o->size;
        *live += o->size;
        if (*live > t->peak_requested) t->peak_requested = *live;
    } else if (o->action == OP_FREE) {
        if (!*s) return -2;
        *live -= *s;
        *s = 0;
    } else if (!*s) {
        return -3;
    }
    return 1;
}

int trace_load(const char *path, int device, trace *t)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); return 0; }
    char *line = NULL;
    size_t lcap = 0, ln = 0, *sizes = NULL, nsizes = 0, live = 0;
    int col[NCOLS], have_header = 0, ok = 1, seen_dev = -1;
    while (ok && getline(&line, &lcap, f) >= 0) {
        ln++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        if (!have_header) {
            if (!(ok = parse_header(path, line, col))) break;
            have_header = 1;
            continue;
        }
        char *fl[32];
        int nf = split(line, fl, 32);
        const char *v[NCOLS];
        for (int k = 0; k < NCOLS; k++) v[k] = col[k] >= 0 && col[k] < nf ? fl[col[k]] : "";
        unsigned long long size = 0, stream = 0, dev = 0;
        int act = !strcmp(v[COL_ACTION], "alloc") ? OP_ALLOC : !strcmp(v[COL_ACTION], "free") ? OP_FREE
                : !strcmp(v[COL_ACTION], "tag") ? OP_TAG : -1;
        const char *why = act < 0 ? "action must be alloc, free or tag"
                        : !v[COL_ID][0] ? "the id is empty"
                        : act == OP_ALLOC && (!parse_uint(v[COL_SIZE], 1ull << 62, &size) || !size)
                              ? "an alloc needs a size in bytes, 1 .. 2^62"
                        : !parse_uint(v[COL_STREAM], TRACE_MAX_STREAMS - 1, &stream)
                              ? "the stream must be an index 0 .. 4095"
                        : v[COL_DEVICE][0] && !parse_uint(v[COL_DEVICE], 1023, &dev)
                              ? "the device must be an index 0 .. 1023" : NULL;
        if (why) {
            fprintf(stderr, "%s:%zu: %s\n", path, ln, why);
            ok = 0;
            break;
        }
        if (device >= 0 && (int)dev != device) continue;
        if (device < 0 && seen_dev >= 0 && (int)dev != seen_dev) {
            fprintf(stderr, "%s:%zu: the trace holds allocations of devices %d and %llu; choose "
                    "one with --device N\n", path, ln, seen_dev, dev);
            ok = 0;
            break;
        }
        seen_dev = (int)dev;
        trace_op *o = push(t);
        int id = intern(t, v[COL_ID]);
        int tag = v[COL_TAG][0] ? intern(t, v[COL_TAG]) : -1;
        if (!o || id < 0 || (v[COL_TAG][0] && tag < 0)) {
            fprintf(stderr, "%s: host out of memory\n", path);
            ok = 0;
            break;
        }
        *o = (trace_op){act, id, (size_t)size, (int)stream, tag};
        if ((int)stream > t->max_stream) t->max_stream = (int)stream;
        int a = account(t, o, &sizes, &nsizes, &live);
        if (a <= 0) {
            fprintf(stderr, "%s:%zu: %s id '%s'\n", path, ln,
                    a == 0 ? "host out of memory at" : a == -1 ? "alloc of the live"
                    : a == -2 ? "free of the unknown or freed" : "tag of the unknown or freed",
                    v[COL_ID]);
            ok = 0;
        }
    }
    if (ok && !have_header) {
        fprintf(stderr, "%s: empty trace (no header action,id,size,stream)\n", path);
        ok = 0;
    }
    if (ok && !t->peak_requested) {
        fprintf(stderr, "%s: the trace allocates nothing%s\n", path,
                device >= 0 ? " on that device" : "");
        ok = 0;
    }
    t->device = seen_dev < 0 ? 0 : seen_dev;
    free(line);
    free(sizes);
    fclose(f);
    return ok;
}

void trace_release(trace *t)
{
    for (size_t i = 0; i < t->nnames; i++) free(t->names[i]);
    free(t->names);
    free(t->slots);
    free(t->ops);
    memset(t, 0, sizeof *t);
}

/* "key:value,key:value" through hwrt_set_config. */
static int apply_conf(const char *conf)
{
    if (!conf || !*conf) return 1;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", conf);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *c = strchr(kv, ':');
        if (!c) {
            fprintf(stderr, "hwrt-bench-pool: --conf item '%s' is not key:value\n", kv);
            return 0;
        }
        *c = 0;
        if (hwrt_set_config(kv, c + 1) != HWRT_SUCCESS) {
            fprintf(stderr, "hwrt-bench-pool: --conf: %s\n", hwrt_last_error());
            return 0;
        }
    }
    return 1;
}

int trace_replay(const trace *t, const replay_opts *ro, replay_result *r)
{
    memset(r, 0, sizeof *r);
    char num[32];
    if (ro->capacity) {
        snprintf(num, sizeof num, "%zu", ro->capacity);
        setenv("HWRT_SIM_MEMORY", num, 1);
        snprintf(num, sizeof num, "%zu", ro->overhead);
        setenv("HWRT_SIM_OVERHEAD", num, 1);
    }
    if (hwrt_set_device("sim", 0) != HWRT_SUCCESS ||
        hwrt_set_config("expandable_segments", ro->expandable ? "true" : "false") != HWRT_SUCCESS) {
        fprintf(stderr, "hwrt-bench-pool: %s\n", hwrt_last_error());
        hwrt_shutdown();
        return -1;
    }
    if (!apply_conf(ro->conf)) { hwrt_shutdown(); return -1; }
    hwrt_stream *streams = calloc((size_t)t->max_stream + 1, sizeof *streams);
    void **live = calloc(t->nnames ? t->nnames : 1, sizeof *live);
    int ok = streams && live;
    for (int s = 1; ok && s <= t->max_stream; s++) ok = hwrt_stream_create(&streams[s], 0) == HWRT_SUCCESS;
    if (!ok) {
        fprintf(stderr, "hwrt-bench-pool: replay setup: %s\n", hwrt_last_error());
        free(streams);
        free(live);
        hwrt_shutdown();
        return -1;
    }
    double t0 = bench_cpu_ns();
    for (size_t i = 0; i < t->n && ok; i++) {
        const trace_op *o = &t->ops[i];
        void **p = &live[o->id];
        if (o->action == OP_ALLOC) {
            if (hwrt_malloc_async(p, o->size, streams[o->stream]) != HWRT_SUCCESS) {
                snprintf(r->error, sizeof r->error, "%s", hwrt_last_error());
                r->failed_op = i;
                ok = 0;
                /* the state that made it fail: which blocks hold which segments */
                if (ro->snapshot && hwrt_memory_snapshot(0, ro->snapshot) != HWRT_SUCCESS)
                    fprintf(stderr, "hwrt-bench-pool: --oom-snapshot: %s\n", hwrt_last_error());
            } else if (o->tag >= 0 || ro->snapshot) {
                hwrt_set_alloc_tag(*p, t->names[o->tag >= 0 ? o->tag : o->id]);
            }
        } else if (o->action == OP_TAG) {
            hwrt_set_alloc_tag(*p, o->tag >= 0 ? t->names[o->tag] : NULL);
        } else {
            hwrt_free_async(*p, streams[o->stream]);
            *p = NULL;
        }
    }
    r->ns_per_op = (bench_cpu_ns() - t0) / (double)(t->n ? t->n : 1);
    hwrt_memory_info mi;
    hwrt_mem_stats st;
    hwrt_get_memory_info(0, &mi);
    hwrt_memory_stats(0, &st);
    r->peak_alloc = mi.peak_allocated;
    r->peak_resv = mi.peak_reserved;
    r->peak_req = (size_t)st.requested_bytes.peak;
    r->dev_allocs = st.num_device_alloc;
    r->dev_frees = st.num_device_free;
    r->syncs = st.num_sync_all_streams;
    r->retries = st.num_alloc_retries;
    for (size_t i = 0; i < t->nnames; i++) if (live[i]) hwrt_free(live[i]);
    free(live);
    for (int s = 1; s <= t->max_stream; s++) if (streams[s]) hwrt_stream_destroy(streams[s]);
    free(streams);
    hwrt_shutdown();
    return ok;
}
