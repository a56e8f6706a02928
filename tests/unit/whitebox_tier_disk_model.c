/* The disk tier's space against a model (issue 25, a sweep of tier_disk.c: the hole list's
 * merges, left and right, had survivors that moved or lost free space).
 *
 * Seeded random sequences of region writes (1 B to 200 KiB, rounded to 4 KiB in the file)
 * and releases, up to 40 regions live, run through hwi_disk_write / hwi_disk_release; a
 * model written here keeps the free space below the file's end as coalesced intervals and
 * places each new region first-fit (the lowest free interval it fits, else the file's
 * end), giving back the tail and any free interval that then ends at it; with no region
 * left the tier closes and starts over. After every write the region's offset must be the
 * model's, and every 25 operations (and at the end of each sequence) every live region
 * must read back what was written to it. White-box (hwi_disk_*, linked statically). */
#include "harness.h"
#include "offload/tier_disk.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAXLIVE = 40, MAXFREE = 256, MAXLEN = 200 * 1024, ALIGN = 4096, OPS = 400 };

typedef struct { uint64_t off, len; } span;

static span freel[MAXFREE];              /* the model's free intervals, by offset */
static int nfree;
static uint64_t end;                     /* the model's file end */
static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static uint64_t rounded(uint64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

static uint64_t model_take(uint64_t len)
{
    for (int i = 0; i < nfree; i++)
        if (freel[i].len >= len) {
            uint64_t off = freel[i].off;
            freel[i].off += len;
            freel[i].len -= len;
            if (!freel[i].len) {
                memmove(&freel[i], &freel[i + 1], (size_t)(nfree - i - 1) * sizeof *freel);
                nfree--;
            }
            return off;
        }
    uint64_t off = end;
    end += len;
    return off;
}

static void model_give(uint64_t off, uint64_t len)
{
    int i = 0;
    while (i < nfree && freel[i].off < off) i++;
    memmove(&freel[i + 1], &freel[i], (size_t)(nfree - i) * sizeof *freel);
    freel[i] = (span){off, len};
    nfree++;
    /* coalesce everything that touches */
    int k = 0;
    for (int j = 1; j < nfree; j++)
        if (freel[k].off + freel[k].len == freel[j].off) freel[k].len += freel[j].len;
        else freel[++k] = freel[j];
    nfree = k + 1;
    if (nfree && freel[nfree - 1].off + freel[nfree - 1].len == end) end = freel[--nfree].off;
}

typedef struct { hwi_disk_region r; unsigned char *data; size_t n; } live;

static int check_all(live *l, int nl, unsigned seed, int step)
{
    static unsigned char back[MAXLEN];
    int ok = 1;
    for (int i = 0; i < nl; i++) {
        hwrt_status st = hwi_disk_read(&l[i].r, back, "test", "a region");
        if (st != HWRT_SUCCESS || memcmp(back, l[i].data, l[i].n)) {
            fprintf(stderr, "seed %u, op %d: region at %llu (%zu bytes) reads back %s\n", seed,
                    step, (unsigned long long)l[i].r.off, l[i].n,
                    st == HWRT_SUCCESS ? "other data" : hwrt_last_error());
            ok = 0;
        }
    }
    return ok;
}

static int run(unsigned seed)
{
    rng = 0x2545f4914f6cdd1dull ^ ((uint64_t)seed * 0x9e3779b97f4a7c15ull);
    static live l[MAXLIVE];
    int nl = 0, ok = 1;
    nfree = 0;
    end = 0;
    for (int step = 0; step < OPS && ok; step++) {
        if (nl < MAXLIVE && (nl == 0 || rnd(100) < 55)) {
            size_t n = 1 + rnd(MAXLEN);
            live *x = &l[nl];
            x->n = n;
            x->data = malloc(n);
            for (size_t i = 0; i < n; i++) x->data[i] = (unsigned char)rnd(256);
            memset(&x->r, 0, sizeof x->r);
            uint64_t want = model_take(rounded(n));
            hwrt_status st = hwi_disk_write(&x->r, x->data, n, "test", "a region");
            if (st != HWRT_SUCCESS || x->r.off != want) {
                fprintf(stderr, "seed %u, op %d: a region of %zu bytes went to %llu, the model "
                        "says %llu (%s)\n", seed, step, n, (unsigned long long)x->r.off,
                        (unsigned long long)want, st == HWRT_SUCCESS ? "written" :
                        hwrt_last_error());
                ok = 0;
            }
            nl++;
        } else {
            int i = (int)rnd((uint32_t)nl);
            hwi_disk_release(&l[i].r);
            model_give(l[i].r.off, rounded(l[i].n));
            free(l[i].data);
            l[i] = l[--nl];
            if (nl == 0) nfree = 0, end = 0;          /* the tier closed: a new file */
        }
        if (ok && step % 25 == 24) ok = check_all(l, nl, seed, step);
    }
    if (ok) ok = check_all(l, nl, seed, OPS);
    while (nl) {
        hwi_disk_release(&l[nl - 1].r);
        free(l[--nl].data);
    }
    return ok;
}

int main(void)
{
    char base[] = "/tmp/hwrt-tier-model-XXXXXX";
    EXPECT(mkdtemp(base) != NULL);
    OK(hwrt_set_config("offload_path", base));
    TEST_CASE("random writes and releases: every region where the model puts it, intact");
    int agreed = 0, seeds = 40;
    for (int s = 1; s <= seeds; s++) agreed += run((unsigned)s);
    printf("%d of %d sequences agreed with the model\n", agreed, seeds);
    EXPECT(agreed == seeds);
    EXPECT(rmdir(base) == 0);
    return test_report();
}
