/* hwrt-smi: the device table and process table of a backend, like npu-smi and
 * nvidia-smi, from the device-wide view (hwrt_smi_query). Flags follow nvidia-smi's
 * names (--query-gpu, --query-compute-apps, --format=csv[,noheader][,nounits], -i, -q,
 * -l [SEC]); the command line is tools/common/cli.h's. */
#include "smi_format.h"
#include "base/escape.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_BACKEND = 256, O_QUERY_GPU, O_QUERY_APPS, O_FORMAT, O_JSON, O_EXPLAIN, O_PID,
       O_COUNT, O_SAMPLE, O_LOOP_MS, O_HELP_QUERY };

static const cli_opt opts[] = {
    {"backend", O_BACKEND, CLI_REQUIRED, "NAME", "backend to show (default: auto)"},
    {"id", 'i', CLI_REQUIRED, "LIST", "only these device indices (comma-separated)"},
    {"query-gpu", O_QUERY_GPU, CLI_REQUIRED, "FIELDS", "device fields as CSV (see below)"},
    {"query-compute-apps", O_QUERY_APPS, CLI_REQUIRED, "FIELDS", "process fields as CSV"},
    {"query-processes", O_QUERY_APPS, CLI_REQUIRED, "FIELDS", "the same as --query-compute-apps"},
    {"query", 'q', CLI_OPTIONAL, "FIELDS", "-q: detailed listing; --query=FIELDS: as --query-gpu"},
    {"format", O_FORMAT, CLI_REQUIRED, "csv[,noheader][,nounits]", "CSV options of the queries"},
    {"json", O_JSON, CLI_NONE, NULL, "one JSON document (with -l: one per line, JSON Lines)"},
    {"loop", 'l', CLI_OPTIONAL, "SEC", "repeat every SEC seconds (default 5) until stopped"},
    {"loop-ms", O_LOOP_MS, CLI_REQUIRED, "MS", "repeat every MS milliseconds"},
    {"count", O_COUNT, CLI_REQUIRED, "N", "with -l: stop after N samples"},
    {"sample-ms", O_SAMPLE, CLI_REQUIRED, "MS", "utilization sample window (default 100; 0: none)"},
    {"explain", O_EXPLAIN, CLI_NONE, NULL, "reconcile smi's figures with the runtime's"},
    {"pid", O_PID, CLI_REQUIRED, "PID", "with --explain: this process only"},
    {"help-query", O_HELP_QUERY, CLI_NONE, NULL, "list the query fields"},
    {0},
};

static const char fields_help[] =
    "device fields (--query-gpu): index, name, backend, health, memory.used, memory.total,\n"
    "  memory.free, utilization (also utilization.gpu), simulated, processes, count,\n"
    "  pci.bus_id, driver_version\n"
    "process fields (--query-compute-apps): pid, name (also process_name), device (also\n"
    "  gpu_index), used_memory, overhead, comm, reserved, allocated, exclusive\n"
    "CSV as nvidia-smi writes it: fields separated by \", \", units in the header\n"
    "(\"memory.used [MiB]\") and on the values unless nounits; a text field holding ',' or\n"
    "'\"' is quoted (RFC 4180).\n";

static const cli_tool tool = {
    .name = "hwrt-smi",
    .synopsis = "hwrt-smi [--backend NAME] [-i LIST] [-q | --query-gpu=FIELDS |\n"
                "                --query-compute-apps=FIELDS [--format=csv[,noheader][,nounits]] |\n"
                "                --json | --explain [--pid PID]] [-l [SEC] [--count N]]",
    .about = "The devices of a backend and the processes using them, device-wide (every\n"
             "process, the driver's share included), like nvidia-smi and npu-smi.",
    .opts = opts,
    .epilog = fields_help,
};

typedef struct {
    const char *backend, *query, *pquery;
    smi_csv csv;
    int json, explain, detail, pid, sample_ms, count;
    double loop;
    int ids[64], nids;
} smi_opts;

static int parse_ids(smi_opts *o, const char *arg)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    o->nids = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nids == 64) return cli_usage(&tool, "-i lists at most 64 devices");
        if (cli_int(&tool, "-i", t, 0, 1 << 20, &o->ids[o->nids]) != CLI_OK) return CLI_USAGE;
        o->nids++;
    }
    if (!o->nids) return cli_usage(&tool, "-i '%s' names no device index", arg);
    return CLI_OK;
}

static int on_opt(void *ctx, int key, const char *arg)
{
    smi_opts *o = ctx;
    switch (key) {
    case O_BACKEND: o->backend = arg; return CLI_OK;
    case 'i': return parse_ids(o, arg);
    case O_QUERY_GPU: o->query = arg; return CLI_OK;
    case O_QUERY_APPS: o->pquery = arg; return CLI_OK;
    case 'q':
        if (arg) o->query = arg;
        else o->detail = 1;
        return CLI_OK;
    case O_FORMAT: {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", arg);
        int csv = 0;
        o->csv = (smi_csv){1, 1};
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            while (*t == ' ') t++;
            if (!strcmp(t, "csv")) csv = 1;
            else if (!strcmp(t, "noheader")) o->csv.header = 0;
            else if (!strcmp(t, "nounits")) o->csv.units = 0;
            else return cli_usage(&tool, "--format: unknown option '%s' (csv, noheader, nounits)", t);
        }
        if (!csv) return cli_usage(&tool, "--format '%s': only csv[,noheader][,nounits] is supported", arg);
        return CLI_OK;
    }
    case O_JSON: o->json = 1; return CLI_OK;
    case O_EXPLAIN: o->explain = 1; return CLI_OK;
    case O_PID: return cli_int(&tool, "--pid", arg, 1, 1 << 30, &o->pid);
    case 'l':
        if (!arg) { o->loop = 5; return CLI_OK; }
        return cli_double(&tool, "-l", arg, 0.1, 86400, &o->loop);
    case O_LOOP_MS: {
        int ms;
        if (cli_int(&tool, "--loop-ms", arg, 100, 86400000, &ms) != CLI_OK) return CLI_USAGE;
        o->loop = ms / 1000.0;
        return CLI_OK;
    }
    case O_COUNT: return cli_int(&tool, "--count", arg, 1, 1 << 30, &o->count);
    case O_SAMPLE: return cli_int(&tool, "--sample-ms", arg, 0, 60000, &o->sample_ms);
    case O_HELP_QUERY: fputs(fields_help, stdout); exit(CLI_OK);
    }
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    smi_opts o = {.csv = {1, 1}, .sample_ms = 100, .count = -1};
    int first, done;
    int rc = cli_parse(&tool, argc, argv, on_opt, &o, &first, &done);
    if (rc != CLI_OK || done) return rc;
    int modes = !!o.json + !!o.query + !!o.pquery + !!o.explain + !!o.detail;
    if (modes > 1)
        return cli_usage(&tool, "choose one of -q, --query-gpu, --query-compute-apps, --json, "
                         "--explain");
    if (o.count > 0 && o.loop <= 0)
        return cli_usage(&tool, "--count needs -l SEC or --loop-ms MS");
    if (o.pid && !o.explain) return cli_usage(&tool, "--pid goes with --explain");
    for (int iter = 0; o.count < 0 || iter < o.count; iter++) {
        static hwrt_smi_snapshot s;
        hwrt_status st = hwrt_smi_query(o.backend, o.sample_ms, &s);
        if (st != HWRT_SUCCESS) return cli_hwrt_fail(&tool, "reading the devices", st);
        if (o.nids) {
            for (int k = 0; k < o.nids; k++) {
                int found = 0;
                for (int i = 0; i < s.ndevices; i++) found |= s.devices[i].id == o.ids[k];
                if (!found)
                    return cli_fail(&tool, "-i %d: no such device (%s has %d)", o.ids[k],
                                    s.ndevices ? s.devices[0].backend : "the backend", s.ndevices);
            }
            smi_select(&s, o.ids, o.nids);
        }
        rc = 0;
        if (o.json) smi_print_json(stdout, &s);
        else if (o.query) rc = smi_print_device_csv(stdout, &s, o.query, o.csv);
        else if (o.pquery) rc = smi_print_process_csv(stdout, &s, o.pquery, o.csv);
        else if (o.explain) smi_print_explain(stdout, &s, o.pid);
        else if (o.detail) smi_print_detail(stdout, &s);
        else smi_print_table(stdout, &s);
        if (rc) return rc;
        if (s.warnings[0] && (o.json || o.query || o.pquery)) {
            fputs("hwrt-smi: warning: ", stderr);
            hwi_term_str(stderr, s.warnings, -1);
            fputc('\n', stderr);
        }
        if (fflush(stdout) != 0) return cli_fail(&tool, "writing the output failed");
        if (o.loop <= 0) break;
        usleep((useconds_t)(o.loop * 1e6));
    }
    return CLI_OK;
}
