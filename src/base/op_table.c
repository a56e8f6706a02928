/* Lookups over the kernel op table (op_table.h). */
#include "op_table.h"

#include <stdio.h>
#include <strings.h>

_Static_assert(HWRT_DTYPE_COUNT <= 32, "op_table: dtype sets are 32-bit masks");

static const hwi_op_info table[HWRT_K_COUNT] = {
#define HWI_OP_ROW(id, nm, p, ar, dts, od) \
    [HWRT_K_##id] = {.name = nm, .py = p, .arity = ar, .dtypes = dts, .out_dtype = od},
    HWI_OP_LIST(HWI_OP_ROW)
#undef HWI_OP_ROW
};

const hwi_op_info *hwi_op_info_of(hwrt_kernel_op op)
{
    return (unsigned)op < HWRT_K_COUNT ? &table[op] : NULL;
}

const char *hwi_op_name(hwrt_kernel_op op)
{
    return (unsigned)op < HWRT_K_COUNT ? table[op].name : "?";
}

int hwi_op_from_name(const char *name)
{
    for (int i = 0; name && i < HWRT_K_COUNT; i++)
        if (!strcasecmp(name, table[i].name) || !strcasecmp(name, table[i].py)) return i;
    return -1;
}

int hwi_op_allows(hwrt_kernel_op op, hwrt_dtype dt)
{
    return (unsigned)op < HWRT_K_COUNT && (unsigned)dt < 32u && (table[op].dtypes & (1u << dt));
}

/* "a, b, c or d" from the n strings item(i) */
static void join(char *buf, size_t len, int n, const char *(*item)(int, const void *),
                 const void *ctx)
{
    size_t o = 0;
    if (len) buf[0] = 0;
    for (int i = 0, k = 0; i < n && o < len; i++) {
        const char *s = item(i, ctx);
        if (!s) continue;
        int last = 1;
        for (int j = i + 1; j < n; j++)
            if (item(j, ctx)) last = 0;
        o += (size_t)snprintf(buf + o, len - o, "%s%s", k ? (last ? " or " : ", ") : "", s);
        k++;
    }
}

static const char *dtype_item(int i, const void *ctx)
{
    unsigned mask = *(const unsigned *)ctx;
    return i < 32 && (mask & (1u << i)) ? hwrt_dtype_name((hwrt_dtype)i) : NULL;
}

void hwi_op_dtypes_str(hwrt_kernel_op op, char *buf, size_t len)
{
    unsigned mask = (unsigned)op < HWRT_K_COUNT ? table[op].dtypes : 0;
    join(buf, len, HWRT_DTYPE_COUNT, dtype_item, &mask);
}

static const char *name_item(int i, const void *ctx)
{
    (void)ctx;
    return table[i].name;
}

void hwi_op_names_str(char *buf, size_t len)
{
    join(buf, len, HWRT_K_COUNT, name_item, NULL);
}
