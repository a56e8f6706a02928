/* First-fit offset allocator over a reserved address range (see range_alloc.h). */
#include "range_alloc.h"

#include <stdlib.h>
#include <string.h>

int hwi_range_init(hwi_range_alloc *r, size_t len)
{
    r->cap = 16;
    r->free = malloc((size_t)r->cap * sizeof *r->free);
    if (!r->free) return 0;
    r->free[0].off = 0;
    r->free[0].len = len;
    r->n = 1;
    r->taken = 0;
    return 1;
}

void hwi_range_destroy(hwi_range_alloc *r)
{
    free(r->free);
    r->free = NULL;
    r->n = r->cap = r->taken = 0;
}

static void remove_at(hwi_range_alloc *r, int i)
{
    memmove(&r->free[i], &r->free[i + 1], (size_t)(r->n - i - 1) * sizeof r->free[0]);
    r->n--;
}

int hwi_range_take(hwi_range_alloc *r, size_t len, size_t *off)
{
    int i = 0;
    while (i < r->n && r->free[i].len < len) i++;
    if (i == r->n)
        return HWI_RANGE_FULL;
    if (r->cap < r->taken + 2) {           /* after this take: taken + 2 free ranges at most */
        int nc = r->cap * 2 > r->taken + 2 ? r->cap * 2 : r->taken + 2;
        struct hwi_range *nr = realloc(r->free, (size_t)nc * sizeof *nr);
        if (!nr)
            return HWI_RANGE_NO_HOST_MEMORY;
        r->free = nr;
        r->cap = nc;
    }
    *off = r->free[i].off;
    r->free[i].off += len;
    r->free[i].len -= len;
    if (r->free[i].len == 0) remove_at(r, i);
    r->taken++;
    return HWI_RANGE_OK;
}

void hwi_range_give(hwi_range_alloc *r, size_t off, size_t len)
{
    int i = 0;
    while (i < r->n && r->free[i].off < off) i++;
    int prev = i > 0 && r->free[i - 1].off + r->free[i - 1].len == off;
    int next = i < r->n && off + len == r->free[i].off;
    if (r->taken > 0) r->taken--;
    if (prev && next) {
        r->free[i - 1].len += len + r->free[i].len;
        remove_at(r, i);
    } else if (prev) {
        r->free[i - 1].len += len;
    } else if (next) {
        r->free[i].off = off;
        r->free[i].len += len;
    } else {                               /* n < cap: take reserved the entry */
        memmove(&r->free[i + 1], &r->free[i], (size_t)(r->n - i) * sizeof r->free[0]);
        r->free[i].off = off;
        r->free[i].len = len;
        r->n++;
    }
}
