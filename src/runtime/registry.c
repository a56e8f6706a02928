/* Backend registry: every backend hwrt knows, in "auto" preference order (real
 * accelerators first, then the simulated NPU; OpenCL only when asked by name, since on
 * a machine without a GPU it runs on the host CPU through PoCL). */
#include "../backends/backend.h"
#include "../base/status.h"

#include <stdio.h>
#include <string.h>

_Thread_local uint64_t hwi_backend_correlation;   /* see backend.h */

extern const hwrt_backend_ops hwrt_backend_sim;
extern const hwrt_backend_ops hwrt_backend_opencl;
extern const hwrt_backend_ops hwrt_backend_cuda;
extern const hwrt_backend_ops hwrt_backend_ascend;

typedef struct {
    const char *name;
    const hwrt_backend_ops *ops;   /* NULL: not compiled into this hwrt */
    int in_auto;
} entry;

static const entry table[] = {
    {"cuda", &hwrt_backend_cuda, 1},
    {"ascend", &hwrt_backend_ascend, 1},
    {"sim", &hwrt_backend_sim, 1},
    {"opencl", &hwrt_backend_opencl, 0},
};

static const char *const names[] = {"cuda", "ascend", "sim", "opencl", NULL};

const hwrt_backend_ops *hwi_backend_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, name))
            return table[i].ops;
    return NULL;
}

int hwi_backend_known(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, name))
            return 1;
    return 0;
}

int hwi_backend_in_auto(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, name))
            return table[i].in_auto;
    return 0;
}

const char *const *hwi_backend_names(void) { return names; }

hwrt_status hwi_backend_check(const char *caller, const char *name, int with_auto)
{
    if (name && hwi_backend_known(name))
        return HWRT_SUCCESS;
    char list[128] = "";
    size_t n = sizeof table / sizeof table[0], len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s\"%s\"",
                                i == 0 ? "" : i + 1 < n || with_auto ? ", " : " or ", table[i].name);
    if (with_auto)
        snprintf(list + len, sizeof list - len, " or \"auto\"");
    return hwi_err(HWRT_ERROR_INVALID_DEVICE, "%s%sunknown backend \"%s\"; use %s",
                   caller ? caller : "", caller ? ": " : "", name ? name : "(null)", list);
}
