/* Cross-process registry of the simulated NPU (see sim_registry.h).
 *
 * Layout: a header and 256 fixed slots in a 0600 shared-memory object owned by the
 * user. A process claims a slot per device by compare-and-swap on its pid field and is
 * the only writer of it; each write is bracketed by a sequence counter (odd while
 * writing) and sealed with a checksum. Readers trust nothing: the object's owner and
 * mode, its size, the header, every slot's checksum and ranges are checked.
 *
 * Liveness: a slot records its owner's pid namespace (the inode of /proc/self/ns/pid).
 * An owner in the reader's namespace is checked by pid (kill) and start time (pid reuse).
 * Pids mean nothing across namespaces, so each owner also holds an open-file-description
 * lock on byte LOCK_BASE + slot of the object while it lives (the kernel drops it when the
 * process dies, whatever its namespace): an owner in another namespace is reaped only
 * when that lock is free, and never when it cannot be checked. A held lock keeps any slot:
 * the claimer takes it before setting the pid, so a slot mid-claim (pid set, start time
 * and namespace still the last owner's) is never reaped by a racing reader.
 *
 * Truncation: another process of the user may truncate the object while it is mapped;
 * touching the lost pages raises SIGBUS. Every access runs under a guard (a per-thread
 * sigsetjmp and a SIGBUS handler that jumps back only for faults inside the mapping and
 * passes every other SIGBUS to the handler that was there before): the access is
 * abandoned, zero pages replace the mapping, and the registry is off for the rest of the
 * process, with a warning on stderr.
 *
 * A registry that cannot be used (made by another user, wrong mode or size, a foreign
 * header, HWRT_SIM_REGISTRY=off) is never silent: opening a device prints a warning, and
 * with HWRT_SIM_EXCLUSIVE set the open fails, since exclusivity cannot be enforced. */
#define _GNU_SOURCE                    /* F_OFD_GETLK / F_OFD_SETLK */
#include "sim_registry.h"
#include "sim_registry_layout.h"
#include "../../base/config.h"
#include "../../base/log.h"
#include "../../base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static reg_file *reg;             /* NULL: registry off or unusable */
static reg_file *mapped;          /* the mapping, kept for the SIGBUS guard's range */
static int reg_fd = -1;           /* kept open: it holds this process's slot locks */
static int reg_tried, reg_off, reg_warned;
static char reg_name_buf[256];
static char reg_why[384];         /* why the registry is off or unusable */
static _Atomic int reg_lost;      /* truncated while in use: off for good */
static uint64_t my_pidns;

/* ---- the SIGBUS guard ---- */

static __thread sigjmp_buf *guard_jb __attribute__((tls_model("initial-exec")));
static struct sigaction prev_bus;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    const char *a = si->si_addr, *lo = (const char *)mapped;
    if (guard_jb && lo && a >= lo && a < lo + sizeof(reg_file))
        siglongjmp(*guard_jb, 1);
    /* not a registry access: what would have happened without this handler */
    if (prev_bus.sa_flags & SA_SIGINFO) {
        prev_bus.sa_sigaction(sig, si, uc);
    } else if (prev_bus.sa_handler == SIG_IGN && si->si_code <= 0) {
        /* a SIGBUS sent by kill(), ignored before us */
    } else if (prev_bus.sa_handler != SIG_DFL && prev_bus.sa_handler != SIG_IGN) {
        prev_bus.sa_handler(sig);
    } else {
        signal(SIGBUS, SIG_DFL);   /* the faulting access runs again and kills, as before */
        if (si->si_code <= 0) raise(sig);
    }
}

static void install_bus_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sigemptyset(&sa.sa_mask);
    /* NODEFER: SIGBUS stays unblocked, so sigsetjmp need not save the signal mask */
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigaction(SIGBUS, &sa, &prev_bus);
}

/* Called after a guarded access faulted: the object lost its pages. */
static void registry_lost(void)
{
    if (atomic_exchange(&reg_lost, 1)) return;
    /* zero pages over the lost ones: a racing access in another thread reads zeros */
    mmap(mapped, sizeof(reg_file), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
         -1, 0);
    fprintf(stderr, "[hwrt warn] sim registry %s was truncated while this process used it; "
            "its cross-process view and exclusive mode are off until it restarts\n", reg_name_buf);
}

/* Guard the registry accesses that follow, up to UNGUARD(), in this thread: a SIGBUS
 * inside the mapping runs the statement given (after registry_lost) instead of killing
 * the process. */
#define GUARD(...)                                                                    \
    sigjmp_buf jb_;                                                                   \
    sigjmp_buf *volatile outer_ = guard_jb;                                           \
    if (sigsetjmp(jb_, 0)) {                                                          \
        guard_jb = outer_;                                                            \
        registry_lost();                                                              \
        __VA_ARGS__;                                                                  \
    }                                                                                 \
    guard_jb = &jb_
#define UNGUARD() (guard_jb = outer_)

static reg_file *usable(void) { return reg && !atomic_load(&reg_lost) ? reg : NULL; }

static uint64_t start_ticks_of(const char *path)
{
    char buf[1024];
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

static uint64_t start_ticks(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    return start_ticks_of(path);
}

static uint64_t self_pidns(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Does this process own the slot (pid and namespace both)? */
static int mine(int32_t pid, uint64_t ns) { return pid == getpid() && ns == my_pidns; }
static int foreign_ns(uint64_t ns) { return ns && my_pidns && ns != my_pidns; }

/* Slot i's liveness lock: -1 cannot tell, 0 free, 1 held by another open description. */
static int lock_held(int i)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = LOCK_BASE + i,
                       .l_len = 1};
    if (reg_fd < 0 || fcntl(reg_fd, F_OFD_GETLK, &fl) != 0) return -1;
    return fl.l_type != F_UNLCK;
}

static int lock_slot(int i, short type)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = LOCK_BASE + i, .l_len = 1};
    if (reg_fd < 0) return -1;
    if (fcntl(reg_fd, F_OFD_SETLK, &fl) == 0) return 0;
    return errno == EAGAIN || errno == EACCES ? 1 : -1;   /* 1: another process holds it */
}

/* A claimer takes slot i's lock before it sets the pid and writes start_ticks and pidns
 * after: a held lock means a live owner whatever those fields say (they may be another
 * owner's, or zero, mid-claim). A free lock decides only across namespaces; in ours an
 * owner that never took it (a forked child sharing the description) is checked by pid. */
static int alive(int i, int pid, uint64_t ticks, uint64_t ns)
{
    if (pid <= 0) return 0;
    int held = lock_held(i);
    if (held == 1) return 1;
    if (foreign_ns(ns)) return held != 0;               /* pids are not ours: the lock */
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

static reg_file *refuse(int fd, const char *fmt, const char *arg)
{
    snprintf(reg_why, sizeof reg_why, fmt, reg_name_buf, arg, reg_name_buf);
    if (fd >= 0) close(fd);
    return NULL;
}

/* Map the registry; on any doubt about who made it, refuse it (the reason in reg_why). */
static reg_file *open_reg(void)
{
    if (reg_tried) return usable();
    reg_tried = 1;
    my_pidns = self_pidns();
    if (!reg_name(reg_name_buf, sizeof reg_name_buf)) {
        reg_off = 1;
        snprintf(reg_why, sizeof reg_why, "the sim registry is off (HWRT_SIM_REGISTRY=off)");
        return NULL;
    }
    int fd = shm_open(reg_name_buf, O_RDWR | O_CREAT, 0600);
    struct stat st;
    char shm_path[300];
    snprintf(shm_path, sizeof shm_path, "/dev/shm%s", reg_name_buf);
    if (fd < 0 && errno == EACCES && stat(shm_path, &st) == 0 && st.st_uid != getuid()) {
        /* another user's object (0600, or refused by fs.protected_regular): say whose */
        char who[64];
        snprintf(who, sizeof who, "uid %u, mode %03o", (unsigned)st.st_uid,
                 (unsigned)(st.st_mode & 0777));
        return refuse(-1, "sim registry %s is not owned by this user with mode 0600 (%s); "
                      "remove it (rm /dev/shm%s) or set HWRT_SIM_REGISTRY to another name", who);
    }
    if (fd < 0)
        return refuse(-1, "sim registry %s cannot be opened (%s); remove it (rm /dev/shm%s) "
                      "or set HWRT_SIM_REGISTRY to another name", strerror(errno));
    if (fstat(fd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 077)) {
        char who[64];
        snprintf(who, sizeof who, "uid %u, mode %03o", (unsigned)st.st_uid,
                 (unsigned)(st.st_mode & 0777));
        return refuse(fd, "sim registry %s is not owned by this user with mode 0600 (%s); "
                      "remove it (rm /dev/shm%s) or set HWRT_SIM_REGISTRY to another name", who);
    }
    int fresh = st.st_size == 0;
    if (fresh && ftruncate(fd, sizeof(reg_file)) != 0)
        return refuse(fd, "sim registry %s cannot be sized (%s); remove it (rm /dev/shm%s)",
                      strerror(errno));
    if (!fresh && st.st_size != (off_t)sizeof(reg_file)) {
        char sz[64];
        snprintf(sz, sizeof sz, "%lld bytes, expected %zu", (long long)st.st_size,
                 sizeof(reg_file));
        return refuse(fd, "sim registry %s has the wrong size (%s); remove it (rm /dev/shm%s)", sz);
    }
    reg_file *r = mmap(NULL, sizeof(reg_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r == MAP_FAILED)
        return refuse(fd, "sim registry %s cannot be mapped (%s); remove it (rm /dev/shm%s)",
                      strerror(errno));
    pthread_once(&bus_once, install_bus_handler);
    mapped = r;                          /* the guard's range, before the first access */
    reg_fd = fd;
    GUARD(return refuse(-1, "sim registry %s was truncated while opening it%s; remove it "
                        "(rm /dev/shm%s)", ""));
    if (r->magic == 0) {                 /* first user: stamp the header */
        r->version = REG_VERSION;
        r->nslots = REG_SLOTS;
        __atomic_store_n(&r->magic, REG_MAGIC, __ATOMIC_RELEASE);
    }
    int ok = r->magic == REG_MAGIC && r->version == REG_VERSION && r->nslots == REG_SLOTS;
    UNGUARD();
    if (!ok) {
        mapped = NULL;
        munmap(r, sizeof(reg_file));
        reg_fd = -1;
        return refuse(fd, "sim registry %s has a foreign header%s; remove it (rm /dev/shm%s)", "");
    }
    reg = r;
    return reg;
}

static void reap(int i)
{
    reg_slot *s = &reg->slot[i];
    int32_t pid = atomic_load(&s->pid);
    if (pid && !mine(pid, s->pidns) && !alive(i, pid, s->start_ticks, s->pidns))
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
        /* the parts of `used` (overhead, comm, reserved) never add up to more than it */
        int ok = out->check == reg_slot_check(out) && out->device >= 0 &&
                 out->device < SIM_MAX_DEVICES && out->used < (1ull << 50) &&
                 out->overhead <= out->used && out->comm <= out->used - out->overhead &&
                 out->reserved <= out->used - out->overhead - out->comm &&
                 out->allocated <= out->reserved && memchr(out->name, 0, sizeof out->name);
        if (!ok) *corrupt = 1;
        return ok;
    }
    *corrupt = 1;
    return 0;
}

static int exclusive_asked(void)
{
    return hwi_env_flag("HWRT_SIM_EXCLUSIVE", 0);   /* a malformed value warns */
}

/* No registry: exclusivity cannot be enforced (an error when asked for), and the
 * cross-process view is gone (a warning, once, unless the user turned it off). */
static hwrt_status no_registry(const sim_dev *d, int exclusive)
{
    if (exclusive)
        return hwi_err(HWRT_ERROR_UNAVAILABLE, "sim device %d: HWRT_SIM_EXCLUSIVE is set, but "
                       "exclusive mode needs the cross-process registry: %s", d->ordinal,
                       atomic_load(&reg_lost) ? "it was truncated while in use" : reg_why);
    if (!reg_off && !reg_warned) {
        reg_warned = 1;
        fprintf(stderr, "[hwrt warn] %s; this process runs without the cross-process view "
                "(hwrt-smi, other processes' memory on the device)\n",
                atomic_load(&reg_lost) ? "the sim registry was truncated while in use" : reg_why);
    }
    return HWRT_SUCCESS;
}

hwrt_status sim_registry_attach(sim_dev *d)
{
    d->reg_slot = -1;
    volatile int exclusive = exclusive_asked();   /* read after a longjmp */
    pthread_mutex_lock(&mu);
    reg_file *r = open_reg();
    if (!r) {
        hwrt_status st = no_registry(d, exclusive);
        pthread_mutex_unlock(&mu);
        return st;
    }
    GUARD({
        hwrt_status st = no_registry(d, exclusive);
        pthread_mutex_unlock(&mu);
        return st;
    });
    int free_slot = -1;
    for (int i = 0; i < REG_SLOTS; i++) {
        reap(i);
        reg_slot s;
        int corrupt = 0;
        if (read_slot(&r->slot[i], &s, &corrupt) && s.device == d->ordinal &&
            s.capacity == d->capacity && !mine(atomic_load(&s.pid), s.pidns) &&
            (exclusive || s.exclusive)) {
            int holder = atomic_load(&s.pid);
            UNGUARD();
            pthread_mutex_unlock(&mu);
            return hwi_err(HWRT_ERROR_DEVICE_BUSY, "sim device %d is held %sby process %d (%s)%s; "
                           "one process per device in exclusive mode: stop that process, use "
                           "another device, or unset HWRT_SIM_EXCLUSIVE", d->ordinal,
                           s.exclusive ? "exclusively " : "", holder, s.name,
                           foreign_ns(s.pidns) ? " in another pid namespace (its pid there)" : "");
        }
        if (free_slot < 0 && atomic_load(&r->slot[i].pid) == 0) free_slot = i;
    }
    for (int i = free_slot; i >= 0 && i < REG_SLOTS; i++) {
        int32_t zero = 0;
        /* the liveness lock first: from the moment the pid is set, the slot is alive to
         * readers in other namespaces */
        if (atomic_load(&r->slot[i].pid) != 0 || lock_slot(i, F_WRLCK) == 1) continue;
        if (atomic_compare_exchange_strong(&r->slot[i].pid, &zero, (int32_t)getpid())) {
            reg_slot *s = &r->slot[i];
            atomic_fetch_add(&s->seq, 1);
            s->device = d->ordinal;
            s->start_ticks = start_ticks_of("/proc/self/stat");   /* right in any namespace */
            s->pidns = my_pidns;
            memset(s->name, 0, sizeof s->name);
            FILE *f = fopen("/proc/self/comm", "r");
            if (f) { if (fgets(s->name, sizeof s->name, f)) s->name[strcspn(s->name, "\n")] = 0; fclose(f); }
            s->used = s->overhead = d->overhead;
            s->comm = s->reserved = s->allocated = s->busy_ns = 0;
            s->exclusive = exclusive;
            s->capacity = d->capacity;
            s->fault = 0;
            s->check = reg_slot_check(s);
            atomic_fetch_add(&s->seq, 1);
            d->reg_slot = i;
            break;
        }
        lock_slot(i, F_UNLCK);
    }
    UNGUARD();
    pthread_mutex_unlock(&mu);
    if (d->reg_slot < 0)
        hwi_log(HWI_LOG_WARN, "sim registry full: device %d of process %d is not published",
                d->ordinal, (int)getpid());
    return HWRT_SUCCESS;
}

void sim_registry_publish(sim_dev *d)
{
    reg_file *r = usable();
    if (!r || d->reg_slot < 0) return;
    GUARD(return);
    reg_slot *s = &r->slot[d->reg_slot];
    if (!mine(atomic_load(&s->pid), s->pidns)) {
        /* the object was rewritten under us (truncated and re-created): the slot is not
         * ours any more, and writing into it would corrupt another process's entry */
        UNGUARD();
        lock_slot(d->reg_slot, F_UNLCK);
        d->reg_slot = -1;
        fprintf(stderr, "[hwrt warn] sim registry %s: the entry of device %d was removed by "
                "another process (was the object truncated?); the device is no longer "
                "published\n", reg_name_buf, d->ordinal);
        return;
    }
    atomic_fetch_add(&s->seq, 1);
    s->overhead = d->overhead;
    s->reserved = d->pool_reserved;
    s->allocated = d->pool_allocated < d->pool_reserved ? d->pool_allocated : d->pool_reserved;
    s->used = d->committed + d->overhead;
    if (s->reserved > s->used - s->overhead - s->comm)     /* what readers check */
        s->reserved = s->used - s->overhead - s->comm;
    if (s->allocated > s->reserved) s->allocated = s->reserved;
    s->busy_ns = atomic_load(&d->engines[SIM_ENG_COMPUTE].busy_ns);
    s->fault = atomic_load(&d->fault.status);
    s->check = reg_slot_check(s);
    atomic_fetch_add(&s->seq, 1);
    UNGUARD();
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
    reg_file *r = usable();
    int i = d->reg_slot;
    d->reg_slot = -1;
    if (i < 0) return;
    if (r) {
        GUARD(lock_slot(i, F_UNLCK); return);
        int32_t me = getpid();
        if (r->slot[i].pidns == my_pidns) atomic_compare_exchange_strong(&r->slot[i].pid, &me, 0);
        UNGUARD();
    }
    lock_slot(i, F_UNLCK);      /* also after a truncation: the object (inode) lives on */
}

size_t sim_registry_others_used(const sim_dev *d)
{
    reg_file *r = usable();
    if (!r) return 0;
    /* on the allocation path: reap dead processes (a kill + /proc read each) at most
     * every 100 ms, and skip free slots without reading them */
    static _Atomic uint64_t last_reap;
    uint64_t now = sim_now_ns(), last = atomic_load(&last_reap);
    int do_reap = now - last > 100000000ull && atomic_compare_exchange_strong(&last_reap, &last, now);
    volatile size_t sum = 0;
    GUARD(return 0);
    for (int i = 0; i < REG_SLOTS; i++) {
        int32_t pid = atomic_load_explicit(&r->slot[i].pid, memory_order_relaxed);
        if (!pid) continue;
        reg_slot s;
        int corrupt = 0;
        if (do_reap) reap(i);
        if (read_slot(&r->slot[i], &s, &corrupt) && s.device == d->ordinal &&
            s.capacity == d->capacity && !mine(atomic_load(&s.pid), s.pidns))
            sum += s.used;
    }
    UNGUARD();
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
        snprintf(out->warnings, sizeof out->warnings, "no process view: %s",
                 atomic_load(&reg_lost) ? "the sim registry was truncated while in use" : reg_why);
        return HWRT_SUCCESS;
    }
    volatile size_t wl = 0;
    GUARD({
        snprintf(out->warnings, sizeof out->warnings, "no process view: the sim registry %s "
                 "was truncated while it was read", reg_name_buf);
        out->nprocesses = 0;
        for (int i = 0; i < out->ndevices; i++) {
            out->devices[i].used = 0;
            out->devices[i].processes = 0;
        }
        return HWRT_SUCCESS;
    });
    for (int i = 0; i < REG_SLOTS; i++) {
        reap(i);
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
        if (foreign_ns(s.pidns) && wl < sizeof out->warnings - 1)
            wl += (size_t)snprintf(out->warnings + wl, sizeof out->warnings - wl,
                                   "%spid %d is in another pid namespace (the pid is that "
                                   "namespace's)", wl ? "; " : "", p->pid);
    }
    UNGUARD();
    return HWRT_SUCCESS;
}
