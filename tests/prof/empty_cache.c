/* The memory curve shows what hwrt_empty_cache gives back (issue 20 item 6): 64 MiB
 * allocated, freed (still reserved: cached), then released by empty_cache; no allocation
 * follows, so only a release event of its own can show the drop. */
#include <hwrt.h>

#include <stdio.h>

#include "example_check.h"   /* CHECK(call) */

int main(void)
{
    CHECK(hwrt_set_device("sim", 0));
    void *p;
    CHECK(hwrt_malloc(&p, 64u << 20));
    CHECK(hwrt_free(p));
    CHECK(hwrt_empty_cache(0));
    CHECK(hwrt_shutdown());
    printf("empty_cache: 64 MiB allocated, freed, released\n");
    return 0;
}
