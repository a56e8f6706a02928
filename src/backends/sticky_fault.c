/* A device's sticky fault record (see sticky_fault.h). */
#include "sticky_fault.h"

#include <stdio.h>

void hwi_fault_init(hwi_sticky_fault *f)
{
    atomic_store(&f->status, 0);
    pthread_mutex_init(&f->mu, NULL);
    f->msg[0] = 0;
}

void hwi_fault_destroy(hwi_sticky_fault *f)
{
    pthread_mutex_destroy(&f->mu);
}

int hwi_fault_record(hwi_sticky_fault *f, const char *desc, const char *what)
{
    int recorded = 0;
    pthread_mutex_lock(&f->mu);
    if (!atomic_load(&f->status)) {
        if (what) snprintf(f->msg, sizeof f->msg, "%s, seen by %s", desc, what);
        else snprintf(f->msg, sizeof f->msg, "%s", desc);
        atomic_store(&f->status, HWRT_ERROR_DEVICE_FAULT);
        recorded = 1;
    }
    pthread_mutex_unlock(&f->mu);
    return recorded;
}

hwrt_status hwi_fault_read(hwi_sticky_fault *f, char *msg, size_t len)
{
    if (!atomic_load(&f->status))
        return HWRT_SUCCESS;
    pthread_mutex_lock(&f->mu);
    hwrt_status st = (hwrt_status)atomic_load(&f->status);
    snprintf(msg, len, "%s", f->msg);
    pthread_mutex_unlock(&f->mu);
    return st;
}

void hwi_fault_clear(hwi_sticky_fault *f)
{
    pthread_mutex_lock(&f->mu);
    atomic_store(&f->status, 0);
    f->msg[0] = 0;
    pthread_mutex_unlock(&f->mu);
}
