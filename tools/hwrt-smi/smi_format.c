/* hwrt-smi output formats. Strings from the registry (process names, written by other
 * processes) go through base/escape.h's helper for the format: terminal, CSV or JSON. */
#include "smi_format.h"
#include "base/escape.h"
#include "base/json.h"

#include <string.h>

static double mib(size_t b) { return (double)b / 1048576.0; }

void smi_select(hwrt_smi_snapshot *s, const int *ids, int nids)
{
    if (nids <= 0) return;
    int nd = 0, np = 0;
    for (int i = 0; i < s->ndevices; i++) {
        int keep = 0;
        for (int k = 0; k < nids; k++) keep |= s->devices[i].id == ids[k];
        if (keep) s->devices[nd++] = s->devices[i];
    }
    for (int i = 0; i < s->nprocesses; i++) {
        int keep = 0;
        for (int k = 0; k < nids; k++) keep |= s->processes[i].device == ids[k];
        if (keep) s->processes[np++] = s->processes[i];
    }
    s->ndevices = nd;
    s->nprocesses = np;
}

void smi_print_table(FILE *f, const hwrt_smi_snapshot *s)
{
    fprintf(f, "hwrt-smi %s", hwrt_version());
    if (s->driver[0]) {
        fputs("    ", f);
        hwi_term_str(f, s->driver, -1);
    }
    fputc('\n', f);
    fprintf(f, "+-----+----------------------------+---------+--------+-----------------------+--------+\n");
    fprintf(f, "| Dev | Name                       | Backend | Health | Memory-Usage          | Busy   |\n");
    fprintf(f, "+=====+============================+=========+========+=======================+========+\n");
    for (int i = 0; i < s->ndevices; i++) {
        const hwrt_smi_device *d = &s->devices[i];
        fprintf(f, "| %3d | ", d->id);
        hwi_term_str(f, d->name, 26);
        fputs(" | ", f);
        hwi_term_str(f, d->backend, 7);
        fputs(" | ", f);
        hwi_term_str(f, d->health, 6);
        fprintf(f, " | %7.0fMiB / %7.0fMiB | %5.1f%% |\n", mib(d->used), mib(d->total),
                d->busy_pct);
    }
    fprintf(f, "+-----+----------------------------+---------+--------+-----------------------+--------+\n");
    for (int i = 0; i < s->ndevices; i++)      /* NVML: where each device sits (nvidia-smi's Bus-Id) */
        if (s->devices[i].bus_id[0]) {
            fprintf(f, "  device %d: Bus-Id ", s->devices[i].id);
            hwi_term_str(f, s->devices[i].bus_id, -1);
            fputc('\n', f);
        }
    if (s->ndevices && s->devices[0].simulated)
        fprintf(f, "  (simulated NPU: figures are modelled by hwrt's sim backend)\n");
    fprintf(f, "Processes:\n");
    fprintf(f, "  Dev      PID  Name              Device memory   Overhead  Pool reserved  Allocated\n");
    if (!s->nprocesses)
        fprintf(f, "  No running processes found\n");
    for (int i = 0; i < s->nprocesses; i++) {
        const hwrt_smi_process *p = &s->processes[i];
        fprintf(f, "  %3d %8d  ", p->device, p->pid);
        hwi_term_str(f, p->name, 16);
        fprintf(f, " %10.0fMiB %7.0fMiB %11.0fMiB %8.0fMiB%s\n", mib(p->used),
                mib(p->overhead), mib(p->reserved), mib(p->allocated),
                p->exclusive ? "  exclusive" : "");
    }
    if (s->warnings[0]) {
        fputs("warning: ", f);
        hwi_term_str(f, s->warnings, -1);
        fputc('\n', f);
    }
}

typedef enum { F_INT, F_STR, F_MEM, F_PCT } ftype;

static void emit(FILE *f, ftype t, long long iv, const char *sv, double dv, smi_csv o)
{
    switch (t) {
    case F_INT: fprintf(f, "%lld", iv); break;
    case F_STR: hwi_csv_field(f, sv); break;
    case F_MEM: fprintf(f, o.units ? "%.0f MiB" : "%.0f", dv); break;
    case F_PCT: fprintf(f, o.units ? "%.1f %%" : "%.1f", dv); break;
    }
}

/* Walk a comma-separated field list; calls get(field) for each. */
static int fields_csv(FILE *f, const char *fields, smi_csv o, int rows,
                      int (*get)(const void *ctx, int row, const char *field, FILE *f, smi_csv o),
                      const char *(*get_unit)(const void *ctx, const char *field),
                      const void *ctx)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", fields);
    char *names[32];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < 32; t = strtok_r(NULL, ",", &save))
        names[n++] = t;
    for (int i = 0; i < n; i++)                  /* validate before printing anything */
        if (get(ctx, -1, names[i], NULL, o)) {
            fprintf(stderr, "hwrt-smi: unknown field \"%s\"; see hwrt-smi --help-query\n"
                    "Try 'hwrt-smi --help'.\n", names[i]);
            return 2;
        }
    if (o.header)
        for (int i = 0; i < n; i++) {
            const char *unit = get_unit(ctx, names[i]);   /* nvidia-smi: always in the header */
            fprintf(f, "%s%s%s%s%s", names[i], unit ? " [" : "", unit ? unit : "", unit ? "]" : "",
                    i + 1 < n ? ", " : "\n");
        }
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < n; i++) {
            get(ctx, r, names[i], f, o);
            fputs(i + 1 < n ? ", " : "\n", f);
        }
    return 0;
}

static int dev_field(const void *ctx, int row, const char *k, FILE *f, smi_csv o)
{
    const hwrt_smi_snapshot *s = ctx;
    const hwrt_smi_device *d = row >= 0 ? &s->devices[row] : NULL;
    struct { const char *name; ftype t; } tab[] = {
        {"index", F_INT}, {"name", F_STR}, {"backend", F_STR}, {"health", F_STR},
        {"memory.used", F_MEM}, {"memory.total", F_MEM}, {"memory.free", F_MEM},
        {"utilization", F_PCT}, {"simulated", F_INT}, {"processes", F_INT},
        {"utilization.gpu", F_PCT}, {"count", F_INT},
        {"pci.bus_id", F_STR}, {"driver_version", F_STR}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        if (strcmp(k, tab[i].name)) continue;
        if (!d) return 0;
        switch (i) {
        case 0: emit(f, F_INT, d->id, 0, 0, o); break;
        case 1: emit(f, F_STR, 0, d->name, 0, o); break;
        case 2: emit(f, F_STR, 0, d->backend, 0, o); break;
        case 3: emit(f, F_STR, 0, d->health, 0, o); break;
        case 4: emit(f, F_MEM, 0, 0, mib(d->used), o); break;
        case 5: emit(f, F_MEM, 0, 0, mib(d->total), o); break;
        case 6: emit(f, F_MEM, 0, 0, mib(d->total > d->used ? d->total - d->used : 0), o); break;
        case 7: emit(f, F_PCT, 0, 0, d->busy_pct, o); break;
        case 8: emit(f, F_INT, d->simulated, 0, 0, o); break;
        case 9: emit(f, F_INT, d->processes, 0, 0, o); break;
        case 10: emit(f, F_PCT, 0, 0, d->busy_pct, o); break;
        case 11: emit(f, F_INT, s->ndevices, 0, 0, o); break;
        case 12: emit(f, F_STR, 0, d->bus_id, 0, o); break;
        default: emit(f, F_STR, 0, s->driver, 0, o); break;
        }
        return 0;
    }
    return 1;
}

static int proc_field(const void *ctx, int row, const char *k, FILE *f, smi_csv o)
{
    const hwrt_smi_snapshot *s = ctx;
    const hwrt_smi_process *p = row >= 0 ? &s->processes[row] : NULL;
    static const char *const names[] = {"pid", "name", "device", "used_memory", "overhead",
                                        "comm", "reserved", "allocated", "exclusive",
                                        "process_name", "gpu_index"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(k, names[i])) continue;
        if (!p) return 0;
        switch (i) {
        case 0: emit(f, F_INT, p->pid, 0, 0, o); break;
        case 1: emit(f, F_STR, 0, p->name, 0, o); break;
        case 2: emit(f, F_INT, p->device, 0, 0, o); break;
        case 3: emit(f, F_MEM, 0, 0, mib(p->used), o); break;
        case 4: emit(f, F_MEM, 0, 0, mib(p->overhead), o); break;
        case 5: emit(f, F_MEM, 0, 0, mib(p->comm), o); break;
        case 6: emit(f, F_MEM, 0, 0, mib(p->reserved), o); break;
        case 7: emit(f, F_MEM, 0, 0, mib(p->allocated), o); break;
        case 8: emit(f, F_INT, p->exclusive, 0, 0, o); break;
        case 9: emit(f, F_STR, 0, p->name, 0, o); break;
        default: emit(f, F_INT, p->device, 0, 0, o); break;
        }
        return 0;
    }
    return 1;
}

static const char *dev_unit(const void *ctx, const char *k)
{
    (void)ctx;
    if (!strncmp(k, "memory.", 7)) return "MiB";
    if (!strncmp(k, "utilization", 11)) return "%";
    return NULL;
}

static const char *proc_unit(const void *ctx, const char *k)
{
    (void)ctx;
    static const char *const mem[] = {"used_memory", "overhead", "comm", "reserved", "allocated"};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
        if (!strcmp(k, mem[i])) return "MiB";
    return NULL;
}

int smi_print_device_csv(FILE *f, const hwrt_smi_snapshot *s, const char *fields, smi_csv o)
{
    return fields_csv(f, fields, o, s->ndevices, dev_field, dev_unit, s);
}

int smi_print_process_csv(FILE *f, const hwrt_smi_snapshot *s, const char *fields, smi_csv o)
{
    return fields_csv(f, fields, o, s->nprocesses, proc_field, proc_unit, s);
}

void smi_print_json(FILE *f, const hwrt_smi_snapshot *s)
{
    hwi_jw j;
    hwi_jw_begin(&j, f, 0);
    hwi_jw_obj(&j);
    hwi_jw_kstr(&j, "version", hwrt_version());
    hwi_jw_key(&j, "devices");
    hwi_jw_arr(&j);
    for (int i = 0; i < s->ndevices; i++) {
        const hwrt_smi_device *d = &s->devices[i];
        hwi_jw_obj(&j);
        hwi_jw_kint(&j, "index", d->id);
        hwi_jw_kstr(&j, "name", d->name);
        hwi_jw_kstr(&j, "backend", d->backend);
        hwi_jw_kstr(&j, "health", d->health);
        hwi_jw_kuint(&j, "memory_used", d->used);
        hwi_jw_kuint(&j, "memory_total", d->total);
        hwi_jw_kuint(&j, "memory_free", d->total > d->used ? d->total - d->used : 0);
        hwi_jw_knum(&j, "utilization", d->busy_pct);
        hwi_jw_kbool(&j, "simulated", d->simulated);
        hwi_jw_kint(&j, "processes", d->processes);
        hwi_jw_kstr(&j, "bus_id", d->bus_id);
        hwi_jw_close(&j);
    }
    hwi_jw_close(&j);
    hwi_jw_key(&j, "processes");
    hwi_jw_arr(&j);
    for (int i = 0; i < s->nprocesses; i++) {
        const hwrt_smi_process *p = &s->processes[i];
        hwi_jw_obj(&j);
        hwi_jw_kint(&j, "pid", p->pid);
        hwi_jw_kstr(&j, "name", p->name);
        hwi_jw_kint(&j, "device", p->device);
        hwi_jw_kuint(&j, "used_memory", p->used);
        hwi_jw_kuint(&j, "overhead", p->overhead);
        hwi_jw_kuint(&j, "comm", p->comm);
        hwi_jw_kuint(&j, "reserved", p->reserved);
        hwi_jw_kuint(&j, "allocated", p->allocated);
        hwi_jw_kbool(&j, "exclusive", p->exclusive);
        hwi_jw_close(&j);
    }
    hwi_jw_close(&j);
    hwi_jw_kstr(&j, "warnings", s->warnings);
    hwi_jw_kstr(&j, "driver", s->driver);
    hwi_jw_close(&j);
    hwi_jw_end(&j);
}

/* nvidia-smi -q's layout: one block per device, "key : value" lines. */
void smi_print_detail(FILE *f, const hwrt_smi_snapshot *s)
{
    fprintf(f, "==============HWRT-SMI LOG==============\n\n");
    fprintf(f, "%-38s: %s\n", "Runtime Version", hwrt_version());
    if (s->driver[0]) {
        fprintf(f, "%-38s: ", "Driver Version");
        hwi_term_str(f, s->driver, -1);
        fputc('\n', f);
    }
    fprintf(f, "%-38s: %d\n", "Attached Devices", s->ndevices);
    for (int i = 0; i < s->ndevices; i++) {
        const hwrt_smi_device *d = &s->devices[i];
        fprintf(f, "Device %d\n", d->id);
        fprintf(f, "    %-34s: ", "Product Name");
        hwi_term_str(f, d->name, -1);
        fprintf(f, "\n    %-34s: ", "Backend");
        hwi_term_str(f, d->backend, -1);
        fprintf(f, "\n    %-34s: ", "Health");
        hwi_term_str(f, d->health, -1);
        if (d->bus_id[0]) {
            fprintf(f, "\n    %-34s: ", "Bus Id");
            hwi_term_str(f, d->bus_id, -1);
        }
        fprintf(f, "\n    %-34s: %s\n", "Simulated", d->simulated ? "Yes" : "No");
        fprintf(f, "    Memory Usage\n");
        fprintf(f, "        %-30s: %.0f MiB\n", "Total", mib(d->total));
        fprintf(f, "        %-30s: %.0f MiB\n", "Used", mib(d->used));
        fprintf(f, "        %-30s: %.0f MiB\n", "Free", mib(d->total > d->used ? d->total - d->used : 0));
        fprintf(f, "    Utilization\n");
        fprintf(f, "        %-30s: %.1f %%\n", "Compute", d->busy_pct);
        fprintf(f, "    Processes\n");
        int any = 0;
        for (int k = 0; k < s->nprocesses; k++) {
            const hwrt_smi_process *p = &s->processes[k];
            if (p->device != d->id) continue;
            any = 1;
            fprintf(f, "        %-30s: %d\n", "Process ID", p->pid);
            fprintf(f, "            %-26s: ", "Name");
            hwi_term_str(f, p->name, -1);
            fprintf(f, "\n            %-26s: %.0f MiB\n", "Used Memory", mib(p->used));
            fprintf(f, "            %-26s: %.0f MiB\n", "Pool Reserved", mib(p->reserved));
            fprintf(f, "            %-26s: %.0f MiB\n", "Pool Allocated", mib(p->allocated));
            fprintf(f, "            %-26s: %.0f MiB\n", "Context Overhead", mib(p->overhead));
            fprintf(f, "            %-26s: %.0f MiB\n", "Communication Buffers", mib(p->comm));
        }
        if (!any) fprintf(f, "        %-30s: None\n", "Process ID");
    }
    if (s->warnings[0]) {
        fputs("Warnings                              : ", f);
        hwi_term_str(f, s->warnings, -1);
        fputc('\n', f);
    }
}

void smi_print_explain(FILE *f, const hwrt_smi_snapshot *s, int pid)
{
    int shown = 0;
    for (int i = 0; i < s->nprocesses; i++) {
        const hwrt_smi_process *p = &s->processes[i];
        if (pid && p->pid != pid) continue;
        shown++;
        /* the parts never exceed their whole, whatever a registry entry says: clamp each
         * to what is left of `used` (no unsigned underflow into absurd figures) */
        size_t left = p->used;
        size_t overhead = p->overhead < left ? p->overhead : left;
        left -= overhead;
        size_t comm = p->comm < left ? p->comm : left;
        left -= comm;
        size_t reserved = p->reserved < left ? p->reserved : left;
        left -= reserved;
        size_t allocated = p->allocated < reserved ? p->allocated : reserved;
        size_t cached = reserved - allocated, other = left;
        fprintf(f, "process %d (", p->pid);
        hwi_term_str(f, p->name, -1);
        fprintf(f, ") on device %d uses %.1f MiB of device memory (what hwrt-smi, npu-smi "
                "and nvidia-smi show):\n", p->device, mib(p->used));
        if (p->used && !p->overhead && !p->comm && !p->reserved && !p->allocated) {
            fprintf(f, "  %10.1f MiB  all of it the driver's figure: this process publishes no "
                    "pool figures (not an hwrt process, or it has allocated nothing yet)\n",
                    mib(p->used));
            continue;
        }
        fprintf(f, "  %10.1f MiB  context / driver overhead (not in the runtime's figures)\n", mib(overhead));
        fprintf(f, "  %10.1f MiB  communication buffers\n", mib(comm));
        fprintf(f, "  %10.1f MiB  pool reserved (memory_reserved) =\n", mib(reserved));
        fprintf(f, "  %10.1f MiB      allocated to live tensors (memory_allocated, get_memory_info 'allocated')\n", mib(allocated));
        fprintf(f, "  %10.1f MiB    + cached in the pool for reuse (freed by empty_cache)\n", mib(cached));
        if (other)
            fprintf(f, "  %10.1f MiB  held by the driver beyond the pool's figures (segment rounding to pages)\n", mib(other));
        if (overhead != p->overhead || comm != p->comm || reserved != p->reserved ||
            allocated != p->allocated)
            fprintf(f, "  (this entry's parts add up to more than its total: shown clamped to it)\n");
    }
    if (!shown) {
        fprintf(f, pid ? "no process %d on any device\n" : "no process on any device\n", pid);
        return;
    }
    fprintf(f, "\nWhich figure answers which question (the seed's problem 6):\n"
            "  - Will the next allocation fit / why OOM?  -> device-wide used vs total (hwrt-smi),\n"
            "    since every process, the driver and communication buffers share the device.\n"
            "  - How much do my tensors hold?            -> allocated (memory_allocated).\n"
            "  - How much could empty_cache give back?   -> reserved - allocated (cached).\n"
            "  - Why is smi higher than get_memory_info? -> context/driver overhead and\n"
            "    communication buffers are outside the pool; other processes add to smi too.\n");
}
