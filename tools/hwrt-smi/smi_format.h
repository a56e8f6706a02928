/* hwrt-smi output formats: table, CSV queries, JSON, the --explain reconciliation. */
#ifndef SMI_FORMAT_H
#define SMI_FORMAT_H

#include <hwrt.h>
#include <stdio.h>

typedef struct { int header, units; } smi_csv;

void smi_print_table(FILE *f, const hwrt_smi_snapshot *s);
/* Returns 0, or 2 with a message on stderr for an unknown field. */
int smi_print_device_csv(FILE *f, const hwrt_smi_snapshot *s, const char *fields, smi_csv o);
int smi_print_process_csv(FILE *f, const hwrt_smi_snapshot *s, const char *fields, smi_csv o);
/* One JSON document on one line (with -l: one per sample, i.e. JSON Lines). */
void smi_print_json(FILE *f, const hwrt_smi_snapshot *s);
/* nvidia-smi -q style detail. */
void smi_print_detail(FILE *f, const hwrt_smi_snapshot *s);
/* Keep only the devices listed in ids (and their processes); nids 0: all. */
void smi_select(hwrt_smi_snapshot *s, const int *ids, int nids);
void smi_print_explain(FILE *f, const hwrt_smi_snapshot *s, int pid);

#endif
