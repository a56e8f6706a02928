/* Trace replay: fragmentation of the pool on a recorded allocation sequence.
 * CSV with header action,id,size,stream; `alloc` rows give the size, `free` rows may
 * leave it empty or 0; stream is an integer index (0 = the default stream, others are
 * created on first use). Replayed twice, plain and with expandable segments. */
#include "bench.h"

#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int alloc; int id; size_t size; int stream; } op;

typedef struct {
    op *ops;
    size_t n, cap;
    char **names;               /* interned ids */
    size_t nids, cap_ids;
    int *slots;                 /* open-addressing table of id indices, -1 empty */
    size_t nslots;
    int max_stream;
} trace;

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static int intern(trace *t, const char *name)
{
    if ((t->nids + 1) * 2 > t->nslots) {
        size_t nn = t->nslots ? t->nslots * 2 : 4096;
        int *ns = malloc(nn * sizeof *ns);
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
    if (t->nids == t->cap_ids) {
        t->cap_ids = t->cap_ids ? t->cap_ids * 2 : 4096;
        t->names = realloc(t->names, t->cap_ids * sizeof *t->names);
    }
    t->names[t->nids] = strdup(name);
    t->slots[j] = (int)t->nids;
    return (int)t->nids++;
}

static int parse(const char *path, trace *t)
{
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); return 0; }
    char line[512];
    size_t ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        if (ln == 1 || !strncmp(line, "action,", 7)) {
            if (strcmp(line, "action,id,size,stream")) {
                fprintf(stderr, "%s:1: header must be action,id,size,stream\n", path);
                fclose(f);
                return 0;
            }
            continue;
        }
        char *f1 = strtok(line, ","), *f2 = strtok(NULL, ","), *f3 = strtok(NULL, ","),
             *f4 = strtok(NULL, ",");
        if (!f1 || !f2 || !f3 || (strcmp(f1, "alloc") && strcmp(f1, "free"))) {
            fprintf(stderr, "%s:%zu: expected alloc|free,id,size,stream\n", path, ln);
            fclose(f);
            return 0;
        }
        if (!f4) { f4 = f3; f3 = "0"; }          /* "free,id,,stream" */
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 65536;
            t->ops = realloc(t->ops, t->cap * sizeof *t->ops);
        }
        op *o = &t->ops[t->n++];
        o->alloc = !strcmp(f1, "alloc");
        o->id = intern(t, f2);
        o->size = strtoull(f3, NULL, 10);
        o->stream = atoi(f4);
        if (o->stream < 0 || o->stream > 63 || (o->alloc && !o->size)) {
            fprintf(stderr, "%s:%zu: stream must be 0..63 and alloc sizes positive\n", path, ln);
            fclose(f);
            return 0;
        }
        if (o->stream > t->max_stream) t->max_stream = o->stream;
    }
    fclose(f);
    return 1;
}

typedef struct {
    size_t peak_alloc, peak_resv, peak_req;
    long long dev_allocs, dev_frees, syncs, retries;
    double ns_per_op;
} result;

static int replay(const trace *t, int expandable, result *r)
{
    if (hwrt_set_device("sim", 0) != HWRT_SUCCESS ||
        hwrt_set_config("expandable_segments", expandable ? "true" : "false") != HWRT_SUCCESS) {
        fprintf(stderr, "hwrt-bench-pool: %s\n", hwrt_last_error());
        return 0;
    }
    hwrt_stream streams[64] = {0};
    for (int s = 1; s <= t->max_stream; s++) hwrt_stream_create(&streams[s], 0);
    void **live = calloc(t->nids ? t->nids : 1, sizeof *live);
    int ok = 1;
    double t0 = bench_cpu_ns();
    for (size_t i = 0; i < t->n && ok; i++) {
        const op *o = &t->ops[i];
        if (o->alloc) {
            if (live[o->id]) { fprintf(stderr, "trace op %zu: id %s allocated twice\n", i, t->names[o->id]); ok = 0; }
            else if (hwrt_malloc_async(&live[o->id], o->size, streams[o->stream]) != HWRT_SUCCESS) {
                fprintf(stderr, "trace op %zu: %s\n", i, hwrt_last_error());
                ok = 0;
            }
        } else {
            if (!live[o->id]) { fprintf(stderr, "trace op %zu: free of unknown id %s\n", i, t->names[o->id]); ok = 0; }
            else hwrt_free_async(live[o->id], streams[o->stream]);
            live[o->id] = NULL;
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
    for (size_t i = 0; i < t->nids; i++) if (live[i]) hwrt_free(live[i]);
    free(live);
    for (int s = 1; s <= t->max_stream; s++) if (streams[s]) hwrt_stream_destroy(streams[s]);
    hwrt_shutdown();
    return ok;
}

static void print_result(const bench_opts *o, const char *mode, const result *r, int last)
{
    double ratio = (double)r->peak_resv / (double)r->peak_alloc;
    double rreq = (double)r->peak_resv / (double)r->peak_req;
    if (o->json) {
        printf("    {\"mode\": \"%s\", \"peak_allocated\": %zu, \"peak_reserved\": %zu, "
               "\"ratio\": %.4f, \"peak_requested\": %zu, \"reserved_over_requested\": %.4f, "
               "\"device_allocs\": %lld, \"device_frees\": %lld, \"device_syncs\": %lld, "
               "\"alloc_retries\": %lld, \"cpu_ns_per_op\": %.1f}%s\n", mode, r->peak_alloc,
               r->peak_resv, ratio, r->peak_req, rreq, r->dev_allocs, r->dev_frees, r->syncs,
               r->retries, r->ns_per_op, last ? "" : ",");
        return;
    }
    printf("%-11s %14.1f %14.1f %8.4f %14.1f %8.4f %9lld %9lld %7lld %8.1f\n", mode,
           (double)r->peak_alloc / 1048576.0, (double)r->peak_resv / 1048576.0, ratio,
           (double)r->peak_req / 1048576.0, rreq, r->dev_allocs, r->dev_frees, r->syncs,
           r->ns_per_op);
}

static void trace_free(trace *t)
{
    for (size_t i = 0; i < t->nids; i++) free(t->names[i]);
    free(t->names);
    free(t->slots);
    free(t->ops);
}

int bench_trace(const bench_opts *o)
{
    trace t = {0};
    if (!parse(o->trace, &t)) { trace_free(&t); return 2; }
    result plain, exp;
    if (!replay(&t, 0, &plain) || !replay(&t, 1, &exp)) { trace_free(&t); return 1; }
    if (o->json) {
        printf("{\n  \"benchmark\": \"pool_trace\",\n  \"trace\": \"%s\",\n  \"events\": %zu,\n"
               "  \"results\": [\n", o->trace, t.n);
    } else {
        printf("hwrt-bench pool --trace %s: %zu events, %zu ids, %d extra streams (simulated device)\n",
               o->trace, t.n, t.nids, t.max_stream);
        printf("%-11s %14s %14s %8s %14s %8s %9s %9s %7s %8s\n", "mode", "peak_alloc_MiB",
               "peak_resv_MiB", "ratio", "peak_req_MiB", "resv/req", "dev_alloc", "dev_free",
               "syncs", "cpu_ns/op");
    }
    print_result(o, "plain", &plain, 0);
    print_result(o, "expandable", &exp, 1);
    double rp = (double)plain.peak_resv / (double)plain.peak_alloc;
    double re = (double)exp.peak_resv / (double)exp.peak_alloc;
    int met = rp <= 1.10 && re <= 1.03;
    if (o->json)
        printf("  ],\n  \"targets\": {\"plain\": 1.10, \"expandable\": 1.03},\n  \"met\": %s\n}\n",
               met ? "true" : "false");
    else
        printf("targets: ratio <= 1.10 plain, <= 1.03 expandable: %s\n", met ? "met" : "NOT met");
    trace_free(&t);
    return 0;
}
