/* The sim registry's shared-memory layout (private to src/backends/sim/sim_registry.c,
 * and to the white-box test tests/unit/test_cov_registry_slots.c, which writes slots
 * itself). Any change to these structs or to reg_slot_check changes what other processes
 * of the same version read: bump REG_VERSION, which is also in the object's name, so
 * layouts never mix. */
#ifndef SIM_REGISTRY_LAYOUT_H
#define SIM_REGISTRY_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define REG_MAGIC 0x314d53545257480aull     /* "\nHWRTSM1" */
#define REG_VERSION 3u                 /* also in the object's name: layouts never mix */
#define REG_SLOTS 256
#define LOCK_BASE (1 << 20)            /* slot i's liveness lock: byte LOCK_BASE + i */

typedef struct {
    _Atomic uint64_t seq;          /* odd while the owner writes */
    _Atomic int32_t pid;           /* 0 = free; in the owner's pid namespace */
    int32_t device;
    uint64_t start_ticks;          /* /proc/self/stat field 22: detects pid reuse */
    uint64_t pidns;                /* inode of the owner's /proc/self/ns/pid; 0 unknown */
    char name[32];
    uint64_t used, overhead, comm, reserved, allocated, busy_ns;
    uint64_t capacity;             /* processes with another HWRT_SIM_MEMORY simulate
                                      another machine: they do not share this device */
    int32_t exclusive, fault;
    uint64_t check;                /* reg_slot_check of the rest */
} reg_slot;

_Static_assert(sizeof(reg_slot) == 136, "reg_slot layout (bump REG_VERSION)");

typedef struct {
    uint64_t magic;
    uint32_t version, nslots;
    reg_slot slot[REG_SLOTS];
} reg_file;

/* A slot's check word: FNV-1a over device..check (exclusive), mixed with the pid. */
static inline uint64_t reg_slot_check(const reg_slot *s)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)&s->device;
    size_t n = offsetof(reg_slot, check) - offsetof(reg_slot, device);
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (uint64_t)(uint32_t)atomic_load(&s->pid);
}

#endif
