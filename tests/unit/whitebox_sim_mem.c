/* White-box test of the sim's page model (src/backends/sim/sim_mem.c, compiled into this
 * test with the core's status, log and config files): the driver-side checks the pool
 * never trips, exercised directly on a 16 MiB device (a 128 MiB address space).
 * - a reservation costs no capacity, even one larger than the device; maps and unmaps
 *   move the free figure by whole pages;
 * - refused, with state intact: a map of pages already mapped or outside a reservation
 *   or not page aligned, a map past the capacity (out of memory), an unmap of pages not
 *   mapped, a release with mapped pages or of part of a reservation, a segment free of a
 *   reservation, of part of a segment or outside the device;
 * - segments fail only when physical pages run out, however the address space is cut;
 * - first touch (sim_mem_prefault, which the engines call before timing an op): backed
 *   pages not yet touched are populated (resident, per mincore) once; reserved unbacked
 *   pages and pointers outside the device are left alone; freeing or unmapping a page
 *   forgets it was touched, as its host memory went back.
 * The sim's registry and fault hooks are replaced by the answers of a device no other
 * process shares and with no injected faults. */
#include "harness.h"
#include "backends/sim/sim.h"
#include "backends/sim/sim_registry.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)

hwrt_status sim_fault_alloc(sim_dev *d, size_t bytes, const char *what)
{
    (void)d, (void)bytes, (void)what;
    return HWRT_SUCCESS;
}
size_t sim_registry_others_used(const sim_dev *d) { (void)d; return 0; }
void sim_registry_publish(sim_dev *d) { (void)d; }

hwrt_status sim_segment_alloc(hwrt_bdev *d, size_t bytes, void **dptr);
hwrt_status sim_segment_free(hwrt_bdev *d, void *dptr, size_t bytes);
hwrt_status sim_va_reserve(hwrt_bdev *d, size_t bytes, void **base);
hwrt_status sim_va_map(hwrt_bdev *d, void *addr, size_t bytes);
hwrt_status sim_va_unmap(hwrt_bdev *d, void *addr, size_t bytes);
hwrt_status sim_va_release(hwrt_bdev *d, void *base, size_t bytes);
hwrt_status sim_mem_info(hwrt_bdev *d, size_t *free_b, size_t *total, size_t *overhead);

static size_t free_of(sim_dev *d)
{
    size_t f, t, o;
    OK(sim_mem_info(d, &f, &t, &o));
    return f;
}

static void reservations(sim_dev *d)
{
    TEST_CASE("reserve, map, unmap, release");
    char *r;
    OK(sim_va_reserve(d, 40 * MiB, (void **)&r));       /* larger than the device */
    EXPECT(free_of(d) == 16 * MiB);                     /* costs nothing */
    OK(sim_va_map(d, r + 2 * MiB, 4 * MiB));
    EXPECT(free_of(d) == 12 * MiB);
    FAILS(sim_va_map(d, r + 4 * MiB, 2 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "not mapped yet");
    FAILS(sim_va_map(d, r + 40 * MiB, 2 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "reserved");
    FAILS(sim_va_map(d, r + 1, 2 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "not a range");
    FAILS(sim_va_map(d, r + 8 * MiB, 14 * MiB), HWRT_ERROR_OUT_OF_MEMORY, "mapping memory");
    FAILS(sim_va_unmap(d, r, 4 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "must be mapped");
    FAILS(sim_va_release(d, r, 40 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "unmap them first");
    FAILS(sim_va_release(d, r, 20 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "one whole reservation");
    FAILS(sim_segment_free(d, r, 40 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "one whole segment");
    EXPECT(free_of(d) == 12 * MiB);                     /* nothing changed */
    OK(sim_va_map(d, r + 8 * MiB, 12 * MiB));           /* exactly the rest */
    EXPECT(free_of(d) == 0);
    OK(sim_va_unmap(d, r + 8 * MiB, 12 * MiB));
    OK(sim_va_unmap(d, r + 2 * MiB, 4 * MiB));
    EXPECT(free_of(d) == 16 * MiB);
    OK(sim_va_release(d, r, 40 * MiB));
    FAILS(sim_va_release(d, r, 40 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "one whole reservation");
}

static void segments(sim_dev *d)
{
    TEST_CASE("segments: pages, not contiguous free ranges");
    char *s[8];
    for (int i = 0; i < 8; i++) OK(sim_segment_alloc(d, 2 * MiB, (void **)&s[i]));
    EXPECT(free_of(d) == 0);
    char *x = (char *)1;
    FAILS(sim_segment_alloc(d, 1, (void **)&x), HWRT_ERROR_OUT_OF_MEMORY, "segment allocation");
    for (int i = 0; i < 8; i += 2) OK(sim_segment_free(d, s[i], 2 * MiB));   /* scattered */
    OK(sim_segment_alloc(d, 8 * MiB, (void **)&x));      /* 4 free pages, no 8 MiB hole */
    EXPECT(free_of(d) == 0);
    FAILS(sim_segment_free(d, x, 4 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "one whole segment");
    FAILS(sim_segment_free(d, x + 2 * MiB, 6 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "one whole segment");
    FAILS(sim_segment_free(d, d->va + d->va_size, 2 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "not a range");
    FAILS(sim_segment_free(d, (char *)&x, 2 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "not a range");
    FAILS(sim_va_map(d, x, 2 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "reserved");
    FAILS(sim_va_release(d, x, 8 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "one whole reservation");
    memset(x, 0x5a, 8 * MiB);                            /* the memory is usable */
    OK(sim_segment_free(d, x, 8 * MiB));
    for (int i = 1; i < 8; i += 2) OK(sim_segment_free(d, s[i], 2 * MiB));
    EXPECT(free_of(d) == 16 * MiB);
    FAILS(sim_segment_free(d, s[1], 2 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "one whole segment");

    TEST_CASE("the edges: the whole capacity, the end of the address space");
    OK(sim_segment_alloc(d, 16 * MiB, (void **)&x));     /* exactly the capacity fits */
    OK(sim_segment_free(d, x, 16 * MiB));
    char *last = d->va + d->va_size - 2 * MiB;           /* inside: checked as pages */
    FAILS(sim_va_unmap(d, last, 2 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "must be mapped");
    FAILS(sim_va_unmap(d, d->va, d->va_size), HWRT_ERROR_INVALID_ARGUMENT, "must be mapped");
    FAILS(sim_va_unmap(d, last, 4 * MiB), HWRT_ERROR_INVALID_ARGUMENT, "not a range");
}

/* How many host pages of [p, p+len) are resident. */
static size_t resident(const char *p, size_t len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (len + pg - 1) / pg, k = 0;
    unsigned char *v = calloc(n, 1);
    if (!v || mincore((void *)p, len, v) != 0) { free(v); return (size_t)-1; }
    for (size_t i = 0; i < n; i++) k += v[i] & 1;
    free(v);
    return k * pg;
}

static void first_touch(sim_dev *d)
{
    TEST_CASE("first touch: populated once, before the op, only backed pages");
    char *x;
    OK(sim_segment_alloc(d, 4 * MiB, (void **)&x));
    EXPECT(resident(x, 4 * MiB) == 0);                   /* committed only when used */
    EXPECT(sim_mem_prefault(d, x + 100, 10) == 1);       /* touches its 2 MiB page */
    EXPECT(resident(x, 2 * MiB) == 2 * MiB);
    EXPECT(resident(x + 2 * MiB, 2 * MiB) == 0);         /* the other page: not yet */
    EXPECT(sim_mem_prefault(d, x, 2 * MiB) == 0);        /* once */
    EXPECT(sim_mem_prefault(d, x, 4 * MiB) == 1);
    EXPECT(resident(x, 4 * MiB) == 4 * MiB);
    EXPECT(sim_mem_prefault(d, x, 4 * MiB) == 0);
    EXPECT(sim_mem_prefault(d, (char *)&x, 8) == 0);     /* not device memory */
    EXPECT(sim_mem_prefault(d, NULL, 8) == 0);
    OK(sim_segment_free(d, x, 4 * MiB));                 /* pages back: untouched again */
    EXPECT(resident(x, 4 * MiB) == 0);
    OK(sim_segment_alloc(d, 4 * MiB, (void **)&x));
    EXPECT(sim_mem_prefault(d, x, 4 * MiB) == 1);
    OK(sim_segment_free(d, x, 4 * MiB));
    char *r;
    OK(sim_va_reserve(d, 8 * MiB, (void **)&r));
    EXPECT(sim_mem_prefault(d, r, 8 * MiB) == 0);        /* reserved, not backed */
    EXPECT(resident(r, 8 * MiB) == 0);
    OK(sim_va_map(d, r + 2 * MiB, 2 * MiB));
    EXPECT(sim_mem_prefault(d, r, 8 * MiB) == 1);        /* only the mapped page */
    EXPECT(resident(r, 8 * MiB) == 2 * MiB);
    OK(sim_va_unmap(d, r + 2 * MiB, 2 * MiB));
    OK(sim_va_map(d, r + 2 * MiB, 2 * MiB));
    EXPECT(sim_mem_prefault(d, r + 2 * MiB, 1) == 1);    /* remapped: fresh again */
    OK(sim_va_unmap(d, r + 2 * MiB, 2 * MiB));
    OK(sim_va_release(d, r, 8 * MiB));
    EXPECT(free_of(d) == 16 * MiB);
}

int main(void)
{
    sim_dev *d = calloc(1, sizeof *d);
    EXPECT(d != NULL);
    if (!d) return test_report();
    OK(sim_mem_open(d, 16 * MiB + 12345));              /* capacity: whole pages */
    EXPECT(d->capacity == 16 * MiB && d->va_size >= 8 * d->capacity);
    reservations(d);
    segments(d);
    first_touch(d);
    sim_mem_close(d);
    free(d);
    return test_report();
}
