/* Cross-process registry of the simulated NPU (see sim_registry.h).
 *
 * Layout: a header and 256 fixed slots in a 0600 shared-memory object owned by the
 * user. A process claims a slot per device by compare-and-swap on its pid field and is
 * the only writer of it; each write is bracketed by a sequence counter (odd while
 * writing) and sealed with a checksum. Readers trust nothing: the object's owner and
 * mode, the header, every slot's checksum and ranges are checked; a slot whose process
 * is gone (or whose pid was reused: start time differs) is reaped. */
#include "sim_registry.h"
#include "../../core/config.h"
#include "../../core/log.h"
#include "../../core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define REG_MAGIC 0x314d53545257480aull     /* "\nHWRTSM1" */
#define REG_VERSION 2u                 /* also in the object's name: layouts never mix */
#define REG_SLOTS 256

typedef struct {
    _Atomic uint64_t seq;          /* odd while the owner writes */
    _Atomic int32_t pid;           /* 0 = free */
    int32_t device;
    uint64_t start_ticks;          /* /proc/<pid>/stat field 22: detects pid reuse */
    char name[32];
    uint64_t used, overhead, comm, reserved, allocated, busy_ns;
    uint64_t capacity;             /* processes with another HWRT_SIM_MEMORY simulate
                                      another machine: they do not share this device */
    int32_t exclusive, fault;
    uint64_t check;
} reg_slot;

typedef struct {
    uint64_t magic;
    uint32_t version, nslots;
    reg_slot slot[REG_SLOTS];
} reg_file;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static reg_file *reg;             /* NULL: registry off or unusable */
static int reg_tried;

static uint64_t slot_check(const reg_slot *s)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)&s->device;
    size_t n = offsetof(reg_slot, check) - offsetof(reg_slot, device);
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (uint64_t)(uint32_t)atomic_load(&s->pid);
}

static uint64_t start_ticks(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');        /* the command may contain spaces */
    if (!p) return 0;
    unsigned long long v = 0;
    int field = 2;
    char *save = NULL;                  /* strtok_r: engine threads call this, and strtok's
                                           state is shared with the application's strtok */
    for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        if (++field == 22) { v = strtoull(tok, NULL, 10); break; }
    return v;
}

static int alive(int pid, uint64_t ticks)
{
    if (pid <= 0) return 0;
    if (kill(pid, 0) != 0 && errno == ESRCH) return 0;
    uint64_t now = start_ticks(pid);
    return now == 0 || now == ticks;    /* unreadable /proc: trust kill() */
}

static const char *reg_name(char *buf, size_t len)
{
    const char *env = getenv("HWRT_SIM_REGISTRY");
    if (env && !strcmp(env, "off")) return NULL;
    if (env && *env) {
        const char *rest = env + (env[0] == '/');
        if (!*rest || strchr(rest, '/') || strlen(rest) > 200) {
            fprintf(stderr, "[hwrt warn] HWRT_SIM_REGISTRY=\"%.64s\" is not a shared-memory "
                    "name (one path component without '/', at most 200 characters, or "
                    "\"off\"); using the default registry\n", env);
        } else {
            snprintf(buf, len, "/%s-v%u", rest, REG_VERSION);
            return buf;
        }
    }
    snprintf(buf, len, "/hwrt-sim-%u-v%u", (unsigned)getuid(), REG_VERSION);
    return buf;
}

/* Map the registry; on any doubt about who made it, refuse it (reported once). */
static reg_file *open_reg(void)
{
    if (reg_tried) return reg;
    reg_tried = 1;
    char name[256];
    if (!reg_name(name, sizeof name)) return NULL;
    int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    if (fd < 0) {
        hwi_log(HWI_LOG_WARN, "sim registry %s: %s; cross-process view disabled", name, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 077)) {
        hwi_log(HWI_LOG_WARN, "sim registry %s is not owned by this user with mode 0600; "
                "ignored (remove it: rm /dev/shm%s)", name, name);
        close(fd);
        return NULL;
    }
    int fresh = st.st_size == 0;
    if (fresh && ftruncate(fd, sizeof(reg_file)) != 0) { close(fd); return NULL; }
    if (!fresh && st.st_size != (off_t)sizeof(reg_file)) {
        hwi_log(HWI_LOG_WARN, "sim registry %s has size %lld, expected %zu; ignored", name,
                (long long)st.st_size, sizeof(reg_file));
        close(fd);
        return NULL;
    }
    reg_file *r = mmap(NULL, sizeof(reg_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (r == MAP_FAILED) return NULL;
    if (r->magic == 0) {                 /* first user: stamp the header */
        r->version = REG_VERSION;
        r->nslots = REG_SLOTS;
        __atomic_store_n(&r->magic, REG_MAGIC, __ATOMIC_RELEASE);
    }
    if (r->magic != REG_MAGIC || r->version != REG_VERSION || r->nslots != REG_SLOTS) {
        hwi_log(HWI_LOG_WARN, "sim registry %s has a foreign header; ignored", name);
        munmap(r, sizeof(reg_file));
        return NULL;
    }
    reg = r;
    return reg;
}

static void reap(reg_slot *s)
{
    int32_t pid = atomic_load(&s->pid);
    if (pid && pid != getpid() && !alive(pid, s->start_ticks))
        atomic_compare_exchange_strong(&s->pid, &pid, 0);
}

/* Copy a slot if it is consistent; 0 if mid-write, corrupt or free. */
static int read_slot(const reg_slot *s, reg_slot *out, int *corrupt)
{
    for (int tries = 0; tries < 100; tries++) {
        uint64_t a = atomic_load(&s->seq);
        if (a & 1) continue;
        memcpy((char *)out + offsetof(reg_slot, device), (const char *)s + offsetof(reg_slot, device),
               sizeof *out - offsetof(reg_slot, device));
        atomic_store(&out->pid, atomic_load(&s->pid));
        if (atomic_load(&s->seq) != a) continue;
        if (!atomic_load(&out->pid)) return 0;
        int ok = out->check == slot_check(out) && out->device >= 0 &&
                 out->device < SIM_MAX_DEVICES && out->used < (1ull << 50) &&
                 out->reserved <= out->used && out->allocated <= out->reserved &&
                 memchr(out->name, 0, sizeof out->name);
        if (!ok) *corrupt = 1;
        return ok;
    }
    *corrupt = 1;
    return 0;
}

hwrt_status sim_registry_attach(sim_dev *d)
{
    d->reg_slot = -1;
    pthread_mutex_lock(&mu);
    reg_file *r = open_reg();
    if (!r) { pthread_mutex_unlock(&mu); return HWRT_SUCCESS; }
    int exclusive = hwi_env_flag("HWRT_SIM_EXCLUSIVE", 0);
    int free_slot = -1;
    for (int i = 0; i < REG_SLOTS; i++) {
        reap(&r->slot[i]);
        reg_slot s;
        int corrupt = 0;
        if (read_slot(&r->slot[i], &s, &corrupt) && s.device == d->ordinal &&
            s.capacity == d->capacity && atomic_load(&s.pid) != getpid() &&
            (exclusive || s.exclusive)) {
            int holder = atomic_load(&s.pid);
            pthread_mutex_unlock(&mu);
            return hwi_err(HWRT_ERROR_DEVICE_BUSY, "sim device %d is held %sby process %d (%s); "
                           "one process per device in exclusive mode: stop that process, use "
                           "another device, or unset HWRT_SIM_EXCLUSIVE", d->ordinal,
                           s.exclusive ? "exclusively " : "", holder, s.name);
        }
        if (free_slot < 0 && atomic_load(&r->slot[i].pid) == 0) free_slot = i;
    }
    for (int i = free_slot; i >= 0 && i < REG_SLOTS; i++) {
        int32_t zero = 0;
        if (atomic_compare_exchange_strong(&r->slot[i].pid, &zero, (int32_t)getpid())) {
            reg_slot *s = &r->slot[i];
            atomic_fetch_add(&s->seq, 1);
            s->device = d->ordinal;
            s->start_ticks = start_ticks(getpid());
            memset(s->name, 0, sizeof s->name);
            FILE *f = fopen("/proc/self/comm", "r");
            if (f) { if (fgets(s->name, sizeof s->name, f)) s->name[strcspn(s->name, "\n")] = 0; fclose(f); }
            s->used = s->overhead = d->overhead;
            s->comm = s->reserved = s->allocated = s->busy_ns = 0;
            s->exclusive = exclusive;
            s->capacity = d->capacity;
            s->fault = 0;
            s->check = slot_check(s);
            atomic_fetch_add(&s->seq, 1);
            d->reg_slot = i;
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    if (d->reg_slot < 0)
        hwi_log(HWI_LOG_WARN, "sim registry full: device %d of process %d is not published",
                d->ordinal, (int)getpid());
    return HWRT_SUCCESS;
}

void sim_registry_publish(sim_dev *d)
{
    if (!reg || d->reg_slot < 0) return;
    reg_slot *s = &reg->slot[d->reg_slot];
    atomic_fetch_add(&s->seq, 1);
    s->overhead = d->overhead;
    s->reserved = d->pool_reserved;
    s->allocated = d->pool_allocated < d->pool_reserved ? d->pool_allocated : d->pool_reserved;
    s->used = d->committed + d->overhead;
    if (s->reserved > s->used) s->reserved = s->used;
    if (s->allocated > s->reserved) s->allocated = s->reserved;
    s->busy_ns = atomic_load(&d->engines[SIM_ENG_COMPUTE].busy_ns);
    s->fault = atomic_load(&d->fault);
    s->check = slot_check(s);
    atomic_fetch_add(&s->seq, 1);
}

void sim_registry_report_pool(hwrt_bdev *d, size_t reserved, size_t allocated)
{
    pthread_mutex_lock(&d->mem_mu);
    d->pool_reserved = reserved;
    d->pool_allocated = allocated;
    sim_registry_publish(d);
    pthread_mutex_unlock(&d->mem_mu);
}

void sim_registry_detach(sim_dev *d)
{
    if (!reg || d->reg_slot < 0) return;
    atomic_store(&reg->slot[d->reg_slot].pid, 0);
    d->reg_slot = -1;
}

size_t sim_registry_others_used(const sim_dev *d)
{
    if (!reg) return 0;
    /* on the allocation path: reap dead processes (a kill + /proc read each) at most
     * every 100 ms, and skip free slots without reading them */
    static _Atomic uint64_t last_reap;
    uint64_t now = sim_now_ns(), last = atomic_load(&last_reap);
    int do_reap = now - last > 100000000ull && atomic_compare_exchange_strong(&last_reap, &last, now);
    size_t sum = 0;
    for (int i = 0; i < REG_SLOTS; i++) {
        int32_t pid = atomic_load_explicit(&reg->slot[i].pid, memory_order_relaxed);
        if (!pid || pid == getpid()) continue;
        reg_slot s;
        int corrupt = 0;
        if (do_reap) reap(&reg->slot[i]);
        if (read_slot(&reg->slot[i], &s, &corrupt) && s.device == d->ordinal &&
            s.capacity == d->capacity && atomic_load(&s.pid) != getpid())
            sum += s.used;
    }
    return sum;
}

hwrt_status sim_registry_monitor(hwrt_smi_snapshot *out)
{
    const sim_config *c;
    char reason[256];
    if (sim_config_get(&c, reason, sizeof reason) != HWRT_SUCCESS)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "sim backend: %s", reason);
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&mu);
    reg_file *r = open_reg();
    pthread_mutex_unlock(&mu);
    out->ndevices = c->devices < HWRT_SMI_MAX_DEVICES ? c->devices : HWRT_SMI_MAX_DEVICES;
    for (int i = 0; i < out->ndevices; i++) {
        hwrt_smi_device *d = &out->devices[i];
        d->id = i;
        snprintf(d->name, sizeof d->name, "hwrt simulated NPU %d", i);
        snprintf(d->backend, sizeof d->backend, "sim");
        snprintf(d->health, sizeof d->health, "OK");
        d->total = c->memory[i];
        d->simulated = 1;
    }
    if (!r) {
        snprintf(out->warnings, sizeof out->warnings, "the cross-process registry is off or "
                 "unusable (HWRT_SIM_REGISTRY); no process view");
        return HWRT_SUCCESS;
    }
    size_t wl = 0;
    for (int i = 0; i < REG_SLOTS; i++) {
        reap(&r->slot[i]);
        reg_slot s;
        int corrupt = 0;
        if (!read_slot(&r->slot[i], &s, &corrupt)) {
            if (corrupt && wl < sizeof out->warnings - 1)
                wl += (size_t)snprintf(out->warnings + wl, sizeof out->warnings - wl,
                                       "%sregistry slot %d (pid %d) failed validation and was ignored",
                                       wl ? "; " : "", i, (int)atomic_load(&r->slot[i].pid));
            continue;
        }
        if (s.device >= out->ndevices || out->nprocesses == HWRT_SMI_MAX_PROCESSES) continue;
        hwrt_smi_process *p = &out->processes[out->nprocesses++];
        p->pid = atomic_load(&s.pid);
        memcpy(p->name, s.name, sizeof p->name);
        p->device = s.device;
        p->used = s.used;
        p->overhead = s.overhead;
        p->comm = s.comm;
        p->reserved = s.reserved;
        p->allocated = s.allocated;
        p->busy_ns = s.busy_ns;
        p->exclusive = s.exclusive;
        hwrt_smi_device *d = &out->devices[s.device];
        d->used += s.used;
        d->processes++;
        if (s.fault) snprintf(d->health, sizeof d->health, "FAULT");
    }
    return HWRT_SUCCESS;
}
