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
void smi_print_json(FILE *f, const hwrt_smi_snapshot *s);
void smi_print_explain(FILE *f, const hwrt_smi_snapshot *s, int pid);

#endif
