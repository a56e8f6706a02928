/* hwrt-smi: the device table and process table of a backend, like npu-smi and
 * nvidia-smi, from the device-wide view (hwrt_smi_query). */
#include "smi_format.h"
#include "base/escape.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hwrt-smi [--backend NAME] [-l SECONDS [--count N]] [--sample-ms MS]\n"
            "                [--query=FIELDS | --query-processes=FIELDS]\n"
            "                [--format=csv[,noheader][,nounits]] [--json] [--explain [--pid PID]]\n"
            "device fields: index,name,backend,health,memory.used,memory.total,memory.free,\n"
            "               utilization,simulated,processes,pci.bus_id,driver_version\n"
            "process fields: pid,name,device,used_memory,overhead,comm,reserved,allocated,exclusive\n");
}

int main(int argc, char **argv)
{
    const char *backend = NULL, *query = NULL, *pquery = NULL;
    smi_csv csv = {1, 1};
    int json = 0, explain = 0, pid = 0, sample_ms = 100, count = -1;
    double loop = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "--backend=", 10)) backend = a + 10;
        else if (!strcmp(a, "--backend") && i + 1 < argc) backend = argv[++i];
        else if (!strncmp(a, "--query=", 8)) query = a + 8;
        else if (!strncmp(a, "--query-processes=", 18)) pquery = a + 18;
        else if (!strncmp(a, "--format=", 9)) {
            if (strncmp(a + 9, "csv", 3)) { fprintf(stderr, "hwrt-smi: only --format=csv[...] is supported\n"); return 2; }
            csv.header = !strstr(a, "noheader");
            csv.units = !strstr(a, "nounits");
        } else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--explain")) explain = 1;
        else if (!strcmp(a, "--pid") && i + 1 < argc) pid = atoi(argv[++i]);
        else if (!strcmp(a, "-l") && i + 1 < argc) loop = atof(argv[++i]);
        else if (!strcmp(a, "--count") && i + 1 < argc) count = atoi(argv[++i]);
        else if (!strcmp(a, "--sample-ms") && i + 1 < argc) sample_ms = atoi(argv[++i]);
        else if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "--help-query")) { usage(stdout); return 0; }
        else { fprintf(stderr, "hwrt-smi: unknown argument \"%s\"\n", a); usage(stderr); return 2; }
    }
    if (loop < 0 || (loop > 0 && loop < 0.1)) {
        fprintf(stderr, "hwrt-smi: -l takes a number of seconds >= 0.1\n");
        return 2;
    }
    for (int iter = 0; count < 0 || iter < count; iter++) {
        static hwrt_smi_snapshot s;
        hwrt_status st = hwrt_smi_query(backend, sample_ms, &s);
        if (st != HWRT_SUCCESS) {
            fprintf(stderr, "hwrt-smi: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
            return 1;
        }
        int rc = 0;
        if (json) smi_print_json(stdout, &s);
        else if (query) rc = smi_print_device_csv(stdout, &s, query, csv);
        else if (pquery) rc = smi_print_process_csv(stdout, &s, pquery, csv);
        else if (explain) smi_print_explain(stdout, &s, pid);
        else smi_print_table(stdout, &s);
        if (rc) return rc;
        if (s.warnings[0] && (json || query || pquery)) {
            fputs("hwrt-smi: warning: ", stderr);
            hwi_term_str(stderr, s.warnings, -1);
            fputc('\n', stderr);
        }
        fflush(stdout);
        if (loop <= 0) break;
        usleep((useconds_t)(loop * 1e6));
    }
    return 0;
}
